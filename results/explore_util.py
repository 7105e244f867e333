"""Shared by the results/explore_*.py scripts (run as `python3 results/explore_X.py OUT`, so this folder is on the path)."""
import traceback


def guard(rec: dict, what: str, fn):
    "Run one part of an exploration; a part that raises is recorded in rec['errors'] (and printed), and the run goes on."
    try: return fn()
    except Exception as e:
        rec["errors"].append(f"{what}: {type(e).__name__}: {e}"); traceback.print_exc(); return None


def v14_kwargs(cfg, variant: int = 14) -> dict:
    "The gemv/check_gemv keyword arguments of a v13/v14 sweep configuration (SR, SK, RP, D, EARLY, MINB, KS[, XS]), less S and RG."
    SR, SK, RP, D, E, MB, KS, *XS = cfg
    return dict(variant=variant, KS=KS, D=D, minb=MB, v13opt=(SK, RP, bool(E), bool(XS and XS[0])))
