"""Chapter 09a: what a kernel boundary costs inside the PDL step. Omitting the 129 residual norms made the PDL step
slower (decode_h200.json norm_cost: 8.33 vs 8.04 ms), as if a GEMV that follows a GEMV started worse than one that
follows a one-block kernel. A norm releases the GEMV after it only once the GEMV before is complete; a GEMV releases
its successor as soon as its last block starts. This run puts an empty kernel (pdl_spacer: wait, then release) between
gate|up and down ("mlp"), between the input GEMV and GDN ("gdn") or attention ("attn"), and the control pdl_spacer_early
(release, then wait: the next kernel launches as early as without it). The 27B-shape synthetic step (seed 0), PDL graph,
1K and 32K context per plan, interleaved, twice; each plan's first 24 greedy tokens must equal the engine's.
Usage on the H200: PYTHONPATH=. python3 results/explore_spacer.py OUT_DIR (spacer_h200.json). About 60 s."""
import sys, time
from qwen_engine import gemv as G
from qwen_engine.config import preset
from qwen_engine.step import DecodeStep, synthetic_engine_weights, run
from qwen_engine.decode_bench import _prompt
from qwen_engine.roofline import step_bytes, decode_budget
from qwen_engine.runtime import write_record, get_kernel
import explore_util

out = sys.argv[1] if len(sys.argv) > 1 else None
t_start = time.time()
rec = dict(plans={}, timings=[], tokens={}, errors=[])
guard = lambda what, fn: explore_util.guard(rec, what, fn)
el = lambda: f"({time.time() - t_start:.0f} s)"
save = lambda: write_record("spacer_h200", "The decode step (27B shape, synthetic, PDL graph) with empty kernels between chosen kernels "
                            "(released after or before their wait): ms per token at 1K and 32K per plan, interleaved, twice; greedy tokens equal.", "PYTHONPATH=. python3 results/explore_spacer.py OUT_DIR", rec, out_dir=out)
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
cfg = preset("qwen3_5_27b")
S, E = "pdl_spacer", "pdl_spacer_early"
PLANS = {"engine": {}, "mlp": {"mlp": S}, "mlp early (control)": {"mlp": E}, "gdn": {"gdn": S}, "attn": {"attn": S},
         "mlp + gdn + attn": {"mlp": S, "gdn": S, "attn": S}, "mlp + gdn + attn early (control)": {"mlp": E, "gdn": E, "attn": E}}
rec["plans"] = PLANS

t = time.perf_counter()
EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
step = DecodeStep(cfg, EW, max_context=33 * 1024)
rec["synth_s"] = round(time.perf_counter() - t, 1); print(f"synthesised {el()}", flush=True)
prompt = _prompt(1024)
guard("compile", lambda: get_kernel("step", S))
for label, plan in PLANS.items():
    step.spacers = dict(plan); step.graph = None
    ids = guard(f"tokens {label}", lambda: list(run(step, prompt[:16], 24)))
    rec["tokens"][label] = ids
    print(f"{label}: tokens {'= engine' if ids == rec['tokens'].get('engine') else ids} {el()}", flush=True)
save()
fb = {ctx: step_bytes(decode_budget(cfg), ctx) / (bw * 1e12) * 1e3 for ctx in (1024, 32768)}
for rep in range(2):
    for label, plan in PLANS.items():
        if rec["tokens"].get(label) != rec["tokens"].get("engine"): continue
        step.spacers = dict(plan); step.graph = None
        r = guard(f"time {label}", lambda: explore_util.step_times(step, prompt))
        if r:
            for ctx, ms in r.items(): rec["timings"].append(dict(plan=label, rep=rep, ctx=ctx, ms=ms, frac_of_floor=fb[ctx] / ms))
            print(f"rep {rep} {label}: 1K {r[1024]:.3f} ms, 32K {r[32768]:.3f} ms {el()}", flush=True)
    save()
print("\nplan | 1K ms (two repeats) | 32K ms")
for label in PLANS:
    ts = lambda ctx: " / ".join(f"{x['ms']:.3f}" for x in rec["timings"] if x["plan"] == label and x["ctx"] == ctx)
    print(f"{label} | {ts(1024)} | {ts(32768)}")
print(f"done {el()}; errors {len(rec['errors'])}")
