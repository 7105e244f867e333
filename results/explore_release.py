"""Chapter 09a: when a kernel lets the next one launch. Every kernel of the step calls griddepcontrol.launch_dependents
(PDL's release) right after its grid wait. For a GEMV that is early: its successor launches once its last block has
started. For a one-block norm, or the GDN kernel, it is late: the kernel after them launches only when the kernel
before them is complete (an empty kernel that releases after its wait costs the step ~2 us a boundary, one that
releases before it ~0.5 us: spacer_h200.json). The builds with REL release before the wait (the successor's own wait
still orders every read: it waits for this kernel's completion, which comes after this kernel's wait). This run: the
27B-shape synthetic step (seed 0), PDL graph, 1K and 32K context, the norms' and / or GDN's REL builds, interleaved,
three times; each plan's first 24 greedy tokens must equal the engine's (the release changes no value).
Usage on the H200: PYTHONPATH=. python3 results/explore_release.py OUT_DIR (release_h200.json). About 60 s."""
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
save = lambda: write_record("release_h200", "The decode step (27B shape, synthetic, PDL graph) with the norms' and / or GDN's builds that release "
                            "their dependents before their grid wait: ms per token at 1K and 32K per plan, interleaved, three times; greedy tokens equal.", "PYTHONPATH=. python3 results/explore_release.py OUT_DIR", rec, out_dir=out)
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
cfg = preset("qwen3_5_27b")
PLANS = {"engine": set(), "norm": {"norm"}, "gdn": {"gdn"}, "norm + gdn": {"norm", "gdn"}}
rec["plans"] = {k: sorted(v) for k, v in PLANS.items()}

t = time.perf_counter()
EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
step = DecodeStep(cfg, EW, max_context=33 * 1024)
rec["synth_s"] = round(time.perf_counter() - t, 1); print(f"synthesised {el()}", flush=True)
prompt = _prompt(1024)
for label, plan in PLANS.items():
    step.release = set(plan); step.graph = None
    ids = guard(f"tokens {label}", lambda: list(run(step, prompt[:16], 24)))
    rec["tokens"][label] = ids
    print(f"{label}: tokens {'= engine' if ids == rec['tokens'].get('engine') else ids} {el()}", flush=True)
save()
fb = {ctx: step_bytes(decode_budget(cfg), ctx) / (bw * 1e12) * 1e3 for ctx in (1024, 32768)}
for rep in range(3):
    for label, plan in PLANS.items():
        if rec["tokens"].get(label) != rec["tokens"].get("engine"): continue
        step.release = set(plan); step.graph = None
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
