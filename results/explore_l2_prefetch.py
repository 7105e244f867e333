"""Chapter 09a: an L2 side branch in the decode step. The light kernels (a GDN layer's ~4 us, an attention layer's 16+ us,
a norm's ~2 us) move few bytes while they run, and the GEMV after them cannot start its loads: GDN and attention hold
every SM (one block an SM, grid barriers). A side branch of the graph forks after the GEMV before the light kernel and
asks L2 (cp.async.bulk.prefetch.L2, kernel l2_prefetch) for the first fraction of each K slice the next GEMV's warps will
stream; the GEMV then finds those bytes in L2. This run: the 27B-shape synthetic step (seed 0), captured with PDL, timed
at 1K and 32K context for each plan (DecodeStep.l2: {where: fraction}), interleaved, twice. Each plan's first 24 greedy
tokens after a 16-token prompt must equal the engine's (a prefetch changes no value).
Usage on the H200: PYTHONPATH=. python3 results/explore_l2_prefetch.py OUT_DIR (l2_prefetch_h200.json). About 250 s."""
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
save = lambda: write_record("l2_prefetch_h200", "The decode step (27B shape, synthetic, PDL graph) with an L2 side branch that prefetches the "
                            "next GEMV's weights while a light kernel runs: ms per token at 1K and 32K per plan, interleaved, twice; "
                            "greedy tokens equal to the engine's.", "PYTHONPATH=. python3 results/explore_l2_prefetch.py OUT_DIR", rec, out_dir=out)
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
cfg = preset("qwen3_5_27b")
PLANS = {"engine": {},
         "gdn_out 1/6": {"gdn_out": 1 / 6}, "gdn_out 1/3": {"gdn_out": 1 / 3}, "gdn_out 1/2": {"gdn_out": 1 / 2},
         "gdn_out 1": {"gdn_out": 1.0}, "attn_out 1": {"attn_out": 1.0},
         "gdn_out 1/3 + attn_out 1": {"gdn_out": 1 / 3, "attn_out": 1.0},
         "gdn_out 1/3 + attn_out 1, evict_last": {"gdn_out": 1 / 3, "attn_out": 1.0, "last": 1},
         "gdn_out 1/3 + attn_out 1 + mlp/inp 512 B": {"gdn_out": 1 / 3, "attn_out": 1.0, "mlp": 0.01, "inp": 0.01},
         "gdn_out 1/3 + attn_out 1, grid 32": {"gdn_out": 1 / 3, "attn_out": 1.0, "grid": 32}}
rec["plans"] = PLANS

t = time.perf_counter()
EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
step = DecodeStep(cfg, EW, max_context=33 * 1024)
rec["synth_s"] = round(time.perf_counter() - t, 1); print(f"synthesised {el()}", flush=True)
prompt = _prompt(1024)
guard("compile", lambda: get_kernel("step", "l2_prefetch"))
for label, plan in PLANS.items():
    step.l2 = dict(plan); step.graph = None
    ids = guard(f"tokens {label}", lambda: list(run(step, prompt[:16], 24)))
    rec["tokens"][label] = ids
    print(f"{label}: tokens {'= engine' if ids == rec['tokens'].get('engine') else ids} {el()}", flush=True)
save()
fb = {ctx: step_bytes(decode_budget(cfg), ctx) / (bw * 1e12) * 1e3 for ctx in (1024, 32768)}
for rep in range(2):
    for label, plan in PLANS.items():
        if rec["tokens"].get(label) != rec["tokens"].get("engine"): continue
        step.l2 = dict(plan); step.graph = None
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
