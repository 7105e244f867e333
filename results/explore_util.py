"""Shared by the results/explore_*.py scripts (run as `python3 results/explore_X.py OUT`, so this folder is on the path)."""
import traceback


def guard(rec: dict, what: str, fn):
    "Run one part of an exploration; a part that raises is recorded in rec['errors'] (and printed), and the run goes on."
    try: return fn()
    except Exception as e:
        rec["errors"].append(f"{what}: {type(e).__name__}: {e}"); traceback.print_exc(); return None
