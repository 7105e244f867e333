"""Chapters 06, 07 and 09: does the shared-memory carveout cost PDL's overlap? Three kernels have won alone and lost among
their neighbours: v15's cluster GEMV, chapter 07's fused attention v6 (~104 KB of shared memory a block), v20's
shared-memory ring (32 KB a block, carveout set to 100 %). Hypothesis: an SM must drain to change its L1 / shared-memory
split, so a kernel whose split differs from its neighbour's cannot start early on the SMs that neighbour holds. Test:
set one carveout on every kernel of a run (each kernel's CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT before its
first launch, so no two kernels ask for different splits) and compare with the default (-1, each kernel the driver's).
1. The token's GEMVs (PDL graph): the engine's plan and v20 on the two split shapes (gemv_v20_h200.json's winners alone),
   each with every kernel at -1, at 100 (all shared) and, for the engine, at 0 (least shared); interleaved, twice.
2. The decode step (27B shape, synthetic, PDL graph) at 1K and 32K: attention v4 (the engine's) and v6 (fused), every
   kernel at -1 and at 100; interleaved, twice; the greedy tokens of each plan equal the engine's.
Usage on the H200: PYTHONPATH=. python3 results/explore_carveout.py OUT_DIR (carveout_h200.json). About 120 s.
(explore_util.step_times was factored out of this script after its record was made: the same code, not re-run.)"""
import sys, time
from qwen_engine import gemv as G, attention as A, norms as Nm, step as St, runtime as R
from qwen_engine.config import preset
from qwen_engine.step import DecodeStep, synthetic_engine_weights, run
from qwen_engine.decode_bench import _prompt
from qwen_engine.runtime import write_record
import explore_util

out = sys.argv[1] if len(sys.argv) > 1 else None
t_start = time.time()
rec = dict(token=[], step=[], tokens={}, errors=[])
guard = lambda what, fn: explore_util.guard(rec, what, fn)
el = lambda: f"({time.time() - t_start:.0f} s)"
save = lambda: write_record("carveout_h200", "One shared-memory carveout on every kernel of a run (-1 default, 0, 100) against the default: the token's GEMVs "
                            "(engine's plan, v20 on the split shapes) and the decode step (attention v4 and v6), PDL graphs, interleaved, twice.",
                            "PYTHONPATH=. python3 results/explore_carveout.py OUT_DIR", rec, out_dir=out)
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
_launch = R.launch
CARVE = {"value": None}


def launch(kernel, *a, **k):
    "runtime.launch with the run's carveout on the kernel (set after the launcher's own setting, so it wins)."
    c = CARVE["value"]
    if c is not None and kernel.preferred_shared_memory_carveout != c: kernel.preferred_shared_memory_carveout = c
    return _launch(kernel, *a, **k)


for mod in (R, G, A, Nm, St): mod.launch = launch
gen = __import__("torch").Generator(device="cuda").manual_seed(0)
SPLIT = [(5120, 6144, 1), (5120, 17408, 1)]
V20 = (4, 1, 2, 4, 1, 1, 2, 0)                         # gemv_v20_h200.json: won alone on both split shapes


def plan(v20: bool):
    ch = {k: G.engine_choice(*k) for N, K, epi, _ in G.MODEL_SHAPES for k in [(N, K, epi)]}
    if v20:
        for k in SPLIT: ch[k] = (20, 4, 1, 2, 4, 4, 8, (1, 2, True, False))
    ch["lm_head"] = G.ENGINE_CHOICE["lm_head"]
    return ch


names = tuple(dict.fromkeys(G.V20_KERNELS))
guard("compile", lambda: G.get_kernel("gemv", names[0], together=names + G.ENGINE_KERNELS)); print(f"bandwidth {bw:.3f} TB/s; compiled {el()}", flush=True)
TOKEN_RUNS = [("engine", False, None), ("engine", False, 100), ("engine", False, 0), ("v20 split", True, None), ("v20 split", True, 100)]
for rep in range(2):
    for label, v20, c in TOKEN_RUNS:
        CARVE["value"] = -1 if c is None else c
        t = guard(f"token {label} {c}", lambda: G.token_graph(plan(v20), gen, bw, pdl=True, minb={}))
        if t: rec["token"].append(dict(plan=label, carveout=-1 if c is None else c, rep=rep, ms=t["ms"], ratio=t["ratio"]))
        print(f"rep {rep} token {label}, carveout {-1 if c is None else c}: {t and round(t['ms'], 3)} ms {el()}", flush=True)
save()

cfg = preset("qwen3_5_27b")
EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
step = DecodeStep(cfg, EW, max_context=33 * 1024)
prompt = _prompt(1024)
V0 = A.VARIANT                                        # the engine's, restored after
STEP_RUNS = [("attention v4", 4, -1), ("attention v4", 4, 100), ("attention v6", 6, -1), ("attention v6", 6, 100)]
for label, av, c in STEP_RUNS:
    A.VARIANT, CARVE["value"] = av, c; step.graph = None
    ids = guard(f"tokens {label} {c}", lambda: list(run(step, prompt[:16], 24)))
    rec["tokens"][f"{label} {c}"] = ids
print("tokens equal:", {k: v == rec["tokens"].get("attention v4 -1") for k, v in rec["tokens"].items()}, el(), flush=True)
for rep in range(2):
    for label, av, c in STEP_RUNS:
        A.VARIANT, CARVE["value"] = av, c; step.graph = None

        r = guard(f"step {label} {c}", lambda: explore_util.step_times(step, prompt))
        if r:
            for ctx, ms in r.items(): rec["step"].append(dict(plan=label, carveout=c, rep=rep, ctx=ctx, ms=ms))
            print(f"rep {rep} step {label}, carveout {c}: 1K {r[1024]:.3f} ms, 32K {r[32768]:.3f} ms {el()}", flush=True)
A.VARIANT, CARVE["value"] = V0, None
save()
print("\ntoken (ms, two repeats):")
for label, v20, c in TOKEN_RUNS:
    cc = -1 if c is None else c
    print(f"  {label}, carveout {cc}: " + " / ".join(f"{x['ms']:.3f}" for x in rec["token"] if x["plan"] == label and x["carveout"] == cc))
print("step (1K ms | 32K ms, two repeats):")
for label, av, c in STEP_RUNS:
    f = lambda ctx: " / ".join(f"{x['ms']:.3f}" for x in rec["step"] if x["plan"] == label and x["carveout"] == c and x["ctx"] == ctx)
    print(f"  {label}, carveout {c}: {f(1024)} | {f(32768)}")
print(f"done {el()}; errors {len(rec['errors'])}")
