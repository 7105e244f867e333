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


def launched_names(fn) -> tuple:
    """The gemv.cu kernels `fn()` would launch, in order, without compiling or launching any (a dry pass: the launcher's
    kernel lookups are recorded and its launches skipped; outputs stay as they were). Compile them in one pass before the
    real run: `G.get_kernel("gemv", names[0], together=names)`; every later request is then free (appendix 90)."""
    from qwen_engine import gemv as G
    names = []
    class Dry:
        max_dynamic_shared_size_bytes = 1 << 30
        preferred_shared_memory_carveout = 100
    saved = G.get_kernel, G._engine_kernel, G.launch
    G.get_kernel = lambda mod, name, together=(): (names.append(name), Dry())[1]
    G._engine_kernel = lambda name: (names.append(name), Dry())[1]
    G.launch = lambda *a, **k: None
    try: fn()
    finally: G.get_kernel, G._engine_kernel, G.launch = saved
    return tuple(dict.fromkeys(names))


def versus_engine(gen, N: int, K: int, epi: int, S: int, kw: dict) -> dict:
    "The same inputs through gemv(**kw) and through the engine's kernel for this shape: outputs bit-identical (M = 1, epilogue included)."
    import torch
    from qwen_engine import gemv as G
    q, sc = G.synth_fp8(N, K, gen)
    x = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
    res = torch.randn(1, N, generator=gen, device="cuda").to(torch.bfloat16) if epi == 1 else None
    ye = G.engine_gemv(q, sc, x, epi, res, out=None, scratch=G.engine_scratch(N, K, epi))
    y = torch.full_like(ye, float("nan"))
    G.gemv(q, sc, x, epi, res, S=S, RG=2 if epi == 2 else 1, out=y, **kw)
    return dict(N=N, K=K, epi=epi, identical=torch.equal(ye, y), mismatches=(ye != y).sum().item())


def step_times(step, prompt, ctxs=(1024, 32768)) -> dict:
    "The decode step captured afresh (PDL as the step is set), then ms per replay at each context (chapter 09's method)."
    from qwen_engine.decode_bench import time_replays, at_context
    step.reset(prompt, 64); step.capture()
    r = {}
    for ctx in ctxs:
        at_context(step, ctx); r[ctx] = time_replays(step)
    return r
