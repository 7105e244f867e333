"""Chapters 06 and 09a: out_proj's weights read during GDN. Inside the PDL step a GDN layer's kernel costs 8.1 us by
removal (omit_h200.json), twice its time alone, and no GDN variant does better there (gdn_step_h200.json). While GDN
runs, its 48 blocks hold 48 SMs; out_proj's blocks, launched when GDN passes its grid wait, sit on the other 84 with
only their first ring steps (v18: 2 of a warp's 6) requested before their own wait. v20 keeps its ring in shared memory,
so a ring as deep as a warp's whole slice (D = 7: 6 steps requested before the wait, 56 KB a block) costs no
registers: out_proj's resident blocks could then fetch all their weights while GDN computes. v20 is bit-identical to
v18 (the same sums in the same order); the tokens must equal the engine's. Plans: out_proj (5120 x 6144, split 2) by v20
at D = 4, 6, 7 (EARLY) on the GDN layers only, and D = 7 on every 5120 x 6144 projection (o_proj too). The 27B-shape
synthetic step (seed 0), PDL graph, 1K and 32K context, interleaved, three times.
Usage on the H200: PYTHONPATH=. python3 results/explore_out_v20.py OUT_DIR (out_v20_h200.json). About 90 s."""
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
save = lambda: write_record("out_v20_h200", "The decode step (27B shape, synthetic, PDL graph) with out_proj by v20 (the ring in shared "
                            "memory, as deep as a warp's slice, requested before the grid wait) on the GDN layers or everywhere: ms per "
                            "token at 1K and 32K, interleaved, three times; greedy tokens equal to the engine's.",
                            "PYTHONPATH=. python3 results/explore_out_v20.py OUT_DIR", rec, out_dir=out)
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
cfg = preset("qwen3_5_27b")
PLANS = {"engine (v18)": None, "v20 D4 GDN out_proj": (4, "gdn"), "v20 D6 GDN out_proj": (6, "gdn"), "v20 D7 GDN out_proj": (7, "gdn"),
         "v20 D7 every 5120x6144": (7, "all")}
rec["plans"] = {k: (list(v) if v else None) for k, v in PLANS.items()}
t = time.perf_counter()
EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
step = DecodeStep(cfg, EW, max_context=33 * 1024)
rec["synth_s"] = round(time.perf_counter() - t, 1); print(f"synthesised {el()}", flush=True)
gdn_out = {L["out"][0].data_ptr() for L in step.layers if L["kind"] == "linear_attention"}
engine_gemv_method = DecodeStep._gemv
rec["smem"] = {D: G.v20_smem(4, 1, 2, D) for D in (4, 6, 7)}


def use(plan):
    "Route the 5120 x 6144 projections of `plan` through v20 (others as the engine's)."
    if plan is None:
        step._gemv = engine_gemv_method.__get__(step); return
    D, where = plan
    def g(wq, x, epi, o, res=None):
        N, K = wq[0].shape
        if (N, K, epi) == (5120, 6144, 1) and (where == "all" or wq[0].data_ptr() in gdn_out):
            G.gemv(wq[0], wq[1], x, epi, res, out=o, scratch=step.scratch[(N, K, epi)], pdl=step.pdl, S=4, RG=1,
                   variant=20, KS=2, D=D, minb=1, v13opt=(1, 2, True, False))
        else: engine_gemv_method(step, wq, x, epi, o, res)
    step._gemv = g


prompt = _prompt(1024)
for label, plan in PLANS.items():
    use(plan); step.graph = None
    ids = guard(f"tokens {label}", lambda: list(run(step, prompt[:16], 24)))
    rec["tokens"][label] = ids
    print(f"{label}: tokens {'= engine' if ids == rec['tokens'].get('engine (v18)') else ids} {el()}", flush=True)
save()
fb = {ctx: step_bytes(decode_budget(cfg), ctx) / (bw * 1e12) * 1e3 for ctx in (1024, 32768)}
for rep in range(3):
    for label, plan in PLANS.items():
        if rec["tokens"].get(label) is None or rec["tokens"].get(label) != rec["tokens"].get("engine (v18)"): continue
        use(plan); step.graph = None
        r = guard(f"time {label}", lambda: explore_util.step_times(step, prompt))
        if r:
            for ctx, ms in r.items(): rec["timings"].append(dict(plan=label, rep=rep, ctx=ctx, ms=ms, frac_of_floor=fb[ctx] / ms))
            print(f"rep {rep} {label}: 1K {r[1024]:.3f} ms, 32K {r[32768]:.3f} ms {el()}", flush=True)
    save()
use(None)
print("\nplan | 1K ms (three repeats) | 32K ms")
for label in PLANS:
    ts = lambda ctx: " / ".join(f"{x['ms']:.3f}" for x in rec["timings"] if x["plan"] == label and x["ctx"] == ctx)
    print(f"{label} | {ts(1024)} | {ts(32768)}")
print(f"done {el()}; errors {len(rec['errors'])}")
