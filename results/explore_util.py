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


def step_plans(out, name: str, what: str, script: str, plans: dict, apply, reps: int = 3, tokens: bool = True, describe=None, extra=None):
    """The decode step's plans, timed in one run (chapter 09a's explorations): the 27B-shape synthetic step (seed 0), PDL
    graph; `apply(step, plan)` sets a plan up. With `tokens`, each plan's first 24 greedy tokens after a 16-token prompt
    are recorded, and a plan whose tokens differ from the first plan's is not timed. Then `reps` interleaved rounds of
    ms per replay at 1K and 32K. Writes record `name` (`what`, made by `python3 results/SCRIPT OUT_DIR`) into `out` after
    each round and prints a table; `describe(plan)` is how a plan is recorded; `extra(step, rec)` adds to the record
    before the rounds. Returns (record, step)."""
    import time
    from qwen_engine import gemv as G
    from qwen_engine.config import preset
    from qwen_engine.step import DecodeStep, synthetic_engine_weights, run
    from qwen_engine.decode_bench import _prompt
    from qwen_engine.roofline import step_bytes, decode_budget
    from qwen_engine.runtime import write_record
    t_start = time.time()
    rec = dict(plans={k: (describe(v) if describe else v) for k, v in plans.items()}, timings=[], tokens={}, errors=[])
    el = lambda: f"({time.time() - t_start:.0f} s)"
    save = lambda: write_record(name, what, f"PYTHONPATH=. python3 results/{script} OUT_DIR", rec, out_dir=out)
    bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
    cfg = preset("qwen3_5_27b")
    t = time.perf_counter()
    EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
    step = DecodeStep(cfg, EW, max_context=33 * 1024)
    rec["synth_s"] = round(time.perf_counter() - t, 1); print(f"synthesised {el()}", flush=True)
    if extra: extra(step, rec)
    prompt, first = _prompt(1024), next(iter(plans))
    if tokens:
        for label, plan in plans.items():
            apply(step, plan); step.graph = None
            ids = guard(rec, f"tokens {label}", lambda: list(run(step, prompt[:16], 24)))
            rec["tokens"][label] = ids
            print(f"{label}: tokens {'= ' + first if ids == rec['tokens'].get(first) else ids} {el()}", flush=True)
        save()
    fb = {ctx: step_bytes(decode_budget(cfg), ctx) / (bw * 1e12) * 1e3 for ctx in (1024, 32768)}
    for rep in range(reps):
        for label, plan in plans.items():
            if tokens and (rec["tokens"].get(label) is None or rec["tokens"][label] != rec["tokens"].get(first)): continue
            apply(step, plan); step.graph = None
            r = guard(rec, f"time {label}", lambda: step_times(step, prompt))
            if r:
                for ctx, ms in r.items(): rec["timings"].append(dict(plan=label, rep=rep, ctx=ctx, ms=ms, frac_of_floor=fb[ctx] / ms))
                print(f"rep {rep} {label}: 1K {r[1024]:.3f} ms, 32K {r[32768]:.3f} ms {el()}", flush=True)
        save()
    print(f"\nplan | 1K ms ({reps} repeats) | 32K ms")
    for label in plans:
        ts = lambda ctx: " / ".join(f"{x['ms']:.3f}" for x in rec["timings"] if x["plan"] == label and x["ctx"] == ctx)
        print(f"{label} | {ts(1024)} | {ts(32768)}")
    print(f"done {el()}; errors {len(rec['errors'])}")
    return rec, step
