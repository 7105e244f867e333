"""Chapters 08 and 09a: the GDN variants inside the PDL step. By removal, the GDN kernels cost the step 0.39 ms a token
at 1K (8.1 us a layer; omit_h200.json), twice v7's chained time alone (3.87 us): a kernel's price in the step is not its
time alone. v7 runs one block of 512 threads (106 registers) per head: each block needs an SM to itself, so its
blocks wait for whole SMs to drain of the GEMV before it. The variants with smaller blocks (v5: clusters of 2 x 256
threads, v6: 4 x 128, v9: 2 x 256 without a cluster) lost alone; this run measures them where it matters. All are
bit-identical to v3 by construction, so the tokens must equal the engine's. The 27B-shape synthetic step (seed 0),
PDL graph, 1K and 32K context, gdn.VARIANT per plan, interleaved, three times.
Usage on the H200: PYTHONPATH=. python3 results/explore_gdn_step.py OUT_DIR (gdn_step_h200.json). About 90 s."""
import sys, time
from qwen_engine import gemv as G, gdn
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
save = lambda: write_record("gdn_step_h200", "The decode step (27B shape, synthetic, PDL graph) with each GDN variant: ms per token at 1K "
                            "and 32K, interleaved, three times; greedy tokens equal to the engine's (v7).",
                            "PYTHONPATH=. python3 results/explore_gdn_step.py OUT_DIR", rec, out_dir=out)
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
cfg = preset("qwen3_5_27b")
PLANS = {"v7 (engine)": 7, "v8": 8, "v3": 3, "v5 (cluster 2 x 256)": 5, "v6 (cluster 4 x 128)": 6, "v9 (2 x 256)": 9, "v10": 10}
rec["plans"] = PLANS
t = time.perf_counter()
EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
step = DecodeStep(cfg, EW, max_context=33 * 1024)
rec["synth_s"] = round(time.perf_counter() - t, 1); print(f"synthesised {el()}", flush=True)
prompt = _prompt(1024)
for label, v in PLANS.items():
    gdn.VARIANT = v; step.graph = None
    ids = guard(f"tokens {label}", lambda: list(run(step, prompt[:16], 24)))
    rec["tokens"][label] = ids
    print(f"{label}: tokens {'= engine' if ids == rec['tokens'].get('v7 (engine)') else ids} {el()}", flush=True)
save()
fb = {ctx: step_bytes(decode_budget(cfg), ctx) / (bw * 1e12) * 1e3 for ctx in (1024, 32768)}
for rep in range(3):
    for label, v in PLANS.items():
        if rec["tokens"].get(label) is None or rec["tokens"].get(label) != rec["tokens"].get("v7 (engine)"): continue
        gdn.VARIANT = v; step.graph = None
        r = guard(f"time {label}", lambda: explore_util.step_times(step, prompt))
        if r:
            for ctx, ms in r.items(): rec["timings"].append(dict(plan=label, rep=rep, ctx=ctx, ms=ms, frac_of_floor=fb[ctx] / ms))
            print(f"rep {rep} {label}: 1K {r[1024]:.3f} ms, 32K {r[32768]:.3f} ms {el()}", flush=True)
    save()
gdn.VARIANT = 7
print("\nplan | 1K ms (three repeats) | 32K ms")
for label in PLANS:
    ts = lambda ctx: " / ".join(f"{x['ms']:.3f}" for x in rec["timings"] if x["plan"] == label and x["ctx"] == ctx)
    print(f"{label} | {ts(1024)} | {ts(32768)}")
print(f"done {el()}; errors {len(rec['errors'])}")
