"""Chapter 09a: what each family of light kernels costs inside the PDL step, by removal. A profile without PDL gives
each kernel's own time (decode_h200.json families_1k); with PDL, kernels overlap, and a kernel's price is what the step
loses by having it. This run: the 27B-shape synthetic step (seed 0), PDL graph, 1K and 32K context, with all its
kernels and without the residual norms (omit_norms), the GDN kernels, the attention kernels (DecodeStep.omit), or all
three (what is left: the GEMVs, the head and the step's two ends); interleaved, three times. Timing only: without a
kernel, the next one reads a stale input, so the tokens are not the engine's.
Usage on the H200: PYTHONPATH=. python3 results/explore_omit.py OUT_DIR (omit_h200.json). About 60 s."""
import sys, time
from qwen_engine import gemv as G
from qwen_engine.config import preset
from qwen_engine.step import DecodeStep, synthetic_engine_weights
from qwen_engine.decode_bench import _prompt
from qwen_engine.roofline import step_bytes, decode_budget
from qwen_engine.runtime import write_record
import explore_util

out = sys.argv[1] if len(sys.argv) > 1 else None
t_start = time.time()
rec = dict(plans={}, timings=[], errors=[])
guard = lambda what, fn: explore_util.guard(rec, what, fn)
el = lambda: f"({time.time() - t_start:.0f} s)"
save = lambda: write_record("omit_h200", "The decode step (27B shape, synthetic, PDL graph) with and without its norms, GDN kernels, "
                            "attention kernels or all three: ms per token at 1K and 32K, interleaved, three times (timing only).",
                            "PYTHONPATH=. python3 results/explore_omit.py OUT_DIR", rec, out_dir=out)
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
cfg = preset("qwen3_5_27b")
PLANS = {"engine": (False, set()), "no norms": (True, set()), "no gdn": (False, {"gdn"}), "no attention": (False, {"attention"}),
         "no norms, gdn, attention": (True, {"gdn", "attention"})}
rec["plans"] = {k: dict(omit_norms=a, omit=sorted(b)) for k, (a, b) in PLANS.items()}
t = time.perf_counter()
EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
step = DecodeStep(cfg, EW, max_context=33 * 1024)
rec["synth_s"] = round(time.perf_counter() - t, 1); print(f"synthesised {el()}", flush=True)
prompt = _prompt(1024)
fb = {ctx: step_bytes(decode_budget(cfg), ctx) / (bw * 1e12) * 1e3 for ctx in (1024, 32768)}
for rep in range(3):
    for label, (on, om) in PLANS.items():
        step.omit_norms, step.omit, step.graph = on, set(om), None
        r = guard(f"time {label}", lambda: explore_util.step_times(step, prompt))
        if r:
            for ctx, ms in r.items(): rec["timings"].append(dict(plan=label, rep=rep, ctx=ctx, ms=ms, frac_of_floor=fb[ctx] / ms))
            print(f"rep {rep} {label}: 1K {r[1024]:.3f} ms, 32K {r[32768]:.3f} ms {el()}", flush=True)
    save()
print("\nplan | 1K ms (three repeats) | 32K ms")
for label in PLANS:
    ts = lambda ctx: " / ".join(f"{x['ms']:.3f}" for x in rec["timings"] if x["plan"] == label and x["ctx"] == ctx)
    print(f"{label} | {ts(1024)} | {ts(32768)}")
print(f"done {el()}; errors {len(rec['errors'])}")
