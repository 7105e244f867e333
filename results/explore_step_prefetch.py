"""Chapters 06 and 09: v19's L2 prefetch inside the decode step. v19 (v14 / v18 with bulk L2 prefetches past the register
ring) lost on every shape when each GEMV follows another GEMV (gemv_v19_h200.json): there the DRAM is already busy. In
the step, the GEMV after a GDN layer (out_proj), after attention (o_proj) or after a norm (q|gate|k|v, qkv|z, gate|up)
follows a kernel that moves few bytes for microseconds; v19's blocks that are resident by then ask L2 for their whole
slice (PF = 64) before their PDL wait. This run: the 27B-shape synthetic step (seed 0), captured with PDL, timed at 1K
and 32K context for each plan, interleaved, twice: the engine's; v19 PF 64 on out_proj (5120 x 6144); on out_proj and
the three GEMVs after a norm (with MINB holding v14's blocks per SM); on every shape; v19 PF 8 on out_proj. Each plan's
first 24 greedy tokens after a 16-token prompt must equal the engine's (v19 is bit-identical to v14 / v18).
Usage on the H200: PYTHONPATH=. python3 results/explore_step_prefetch.py OUT_DIR (step_prefetch_h200.json). About 150 s.
(explore_util.step_times was factored out of this script after its record was made: the same code, not re-run.)"""
import sys, time
from qwen_engine import gemv as G
from qwen_engine.config import preset
from qwen_engine.step import DecodeStep, synthetic_engine_weights, run
from qwen_engine.decode_bench import _prompt
from qwen_engine.roofline import step_bytes, decode_budget
from qwen_engine.runtime import write_record
import explore_util

out = sys.argv[1] if len(sys.argv) > 1 else None
t_start = time.time()
rec = dict(plans={}, timings=[], tokens={}, errors=[])
guard = lambda what, fn: explore_util.guard(rec, what, fn)
el = lambda: f"({time.time() - t_start:.0f} s)"
save = lambda: write_record("step_prefetch_h200", "The decode step (27B shape, synthetic, PDL graph) with v19's whole-slice L2 prefetch on the GEMVs "
                            "that follow a light kernel: ms per token at 1K and 32K per plan, interleaved, twice; greedy tokens equal to the engine's.",
                            "PYTHONPATH=. python3 results/explore_step_prefetch.py OUT_DIR", rec, out_dir=out)
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
cfg = preset("qwen3_5_27b")
O, QG, QZ, GU, DN = (5120, 6144, 1), (14336, 5120, 0), (16384, 5120, 0), (34816, 5120, 2), (5120, 17408, 1)
MB = {QG: 7, GU: 6}                                    # v14's blocks per SM on the two shapes v19's registers would cost one
engine_kwargs = G.engine_kwargs


def v19_kwargs(k, pf):
    kw = engine_kwargs(*k)
    SK, RP, E, XS = kw["v13opt"][:4]
    return dict(kw, variant=19, v13opt=(SK, RP, E, XS, pf), minb=MB.get(k, 0))


PLANS = {"engine": {}, "v19 PF 64 out_proj": {O: 64}, "v19 PF 64 out_proj + after norms": {O: 64, QG: 64, QZ: 64, GU: 64},
         "v19 PF 64 everywhere": {O: 64, QG: 64, QZ: 64, GU: 64, DN: 64}, "v19 PF 8 out_proj": {O: 8}}
rec["plans"] = {k: {f"{s[0]}x{s[1]}": pf for s, pf in v.items()} for k, v in PLANS.items()}


def use(plan):
    "Point the engine's launcher at `plan` ({shape: PF}; others as the engine's)."
    G.engine_kwargs = lambda N, K, epi: v19_kwargs((N, K, epi), plan[(N, K, epi)]) if (N, K, epi) in plan else engine_kwargs(N, K, epi)


t = time.perf_counter()
EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
step = DecodeStep(cfg, EW, max_context=33 * 1024)
rec["synth_s"] = round(time.perf_counter() - t, 1); print(f"synthesised {el()}", flush=True)
prompt = _prompt(1024)
names = tuple(dict.fromkeys(G.V19_KERNELS))
guard("compile", lambda: G.get_kernel("gemv", names[0], together=names)); print(f"compiled {el()}", flush=True)
for label, plan in PLANS.items():
    use(plan); step.graph = None
    ids = guard(f"tokens {label}", lambda: list(run(step, prompt[:16], 24)))
    rec["tokens"][label] = ids
    print(f"{label}: tokens {'= engine' if ids == rec['tokens'].get('engine') else ids} {el()}", flush=True)
use({}); save()
fb = {ctx: step_bytes(decode_budget(cfg), ctx) / (bw * 1e12) * 1e3 for ctx in (1024, 32768)}
for rep in range(2):
    for label, plan in PLANS.items():
        if rec["tokens"].get(label) != rec["tokens"].get("engine"): continue
        use(plan); step.graph = None

        r = guard(f"time {label}", lambda: explore_util.step_times(step, prompt))
        if r:
            for ctx, ms in r.items(): rec["timings"].append(dict(plan=label, rep=rep, ctx=ctx, ms=ms, frac_of_floor=fb[ctx] / ms))
            print(f"rep {rep} {label}: 1K {r[1024]:.3f} ms, 32K {r[32768]:.3f} ms {el()}", flush=True)
use({}); save()
print("\nplan | 1K ms (two repeats) | 32K ms")
for label in PLANS:
    ts = lambda ctx: " / ".join(f"{x['ms']:.3f}" for x in rec["timings"] if x["plan"] == label and x["ctx"] == ctx)
    print(f"{label} | {ts(1024)} | {ts(32768)}")
print(f"done {el()}; errors {len(rec['errors'])}")
