"""Chapter 06, v21: an L2 fetch-size hint on the weight loads. The engine's v14 / v18 ask for each row's 512 bytes of a
step with a plain read-only load; L2 then fetches what misses in 32-byte sectors. With `.L2::128B` or `.L2::256B` the
load tells L2 to fetch the aligned 128 or 256 bytes around a miss at once (v7 on v3's partition gained 1-2 points on
q|gate|k|v with L2::256B: gemv_v7_h200.json). v21 = v14 / v18 with LP = 1 (128B) or 2 (256B) on every weight load:
the same loads and sums, so bit-identical. Each shape's engine configuration at LP = 1, 2: float64 check at M = 1
(outputs poisoned), M = 8 rows = M = 1 and 20 repeats, bit-identical to the engine's kernel on the same inputs; timed
alone with PDL interleaved with the engine's, twice; the token's GEMVs (the engine's plan, v21 LP on every shape, the
engine's again); then the decode step (27B shape, synthetic, PDL graph) with v21 everywhere, interleaved with the
engine's, three times, greedy tokens equal.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v21.py OUT_DIR (gemv_v21_h200.json). About 150 s."""
import torch
from qwen_engine import gemv as G
import explore_util

gen = torch.Generator(device="cuda").manual_seed(0)
rec, guard, el, save = explore_util.recorder(
    "gemv_v21_h200", "v21 (v14 / v18 with an L2::128B or L2::256B fetch hint on the weight loads) checked, bit-identity with the engine's "
    "kernel, timed alone with PDL interleaved with the engine's, the token's GEMVs, and the decode step.", "explore_gemv_v21.py",
    checks=[], identity=[], versus_engine=[], timings=[], regs={}, lp=list(G.V21_LP), step=[], step_tokens={})
bw = rec["bandwidth_tbps"]
passed = explore_util.flag_sweep(rec, gen, bw, el, save, 21, G.V21_SWEEP, G.V21_LP, G._v21_name, "LP", G.V21_LP)
save()



# the decode step with v21 at each LP on every shape (the engine's configurations otherwise), interleaved with the engine's
from qwen_engine.config import preset
from qwen_engine.step import DecodeStep, synthetic_engine_weights, run
from qwen_engine.decode_bench import _prompt
torch.cuda.empty_cache()
cfg = preset("qwen3_5_27b")
EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
step = DecodeStep(cfg, EW, max_context=33 * 1024)
prompt = _prompt(1024)
engine_kwargs = G.engine_kwargs
def use(lp):
    "The engine's launcher with v21 at LP on every shape it has a v21 configuration for (lp 0: the engine's)."
    def kw(N, K, epi):
        e = engine_kwargs(N, K, epi)
        if lp == 0 or (N, K, epi) not in G.V21_SWEEP or not passed.get((N, K, epi, G.V21_SWEEP[(N, K, epi)][0], lp)): return e
        return dict(e, variant=21, v13opt=tuple(e["v13opt"][:4]) + (lp,))
    G.engine_kwargs = kw
for lp in (0,) + tuple(G.V21_LP):
    use(lp); step.graph = None
    ids = guard(f"step tokens LP {lp}", lambda: list(run(step, prompt[:16], 24)))
    rec["step_tokens"][lp] = ids
    print(f"step LP {lp}: tokens {'= engine' if ids == rec['step_tokens'].get(0) else ids} {el()}", flush=True)
for rep in range(3):
    for lp in (0,) + tuple(G.V21_LP):
        if rec["step_tokens"].get(lp) is None or rec["step_tokens"][lp] != rec["step_tokens"].get(0): continue
        use(lp); step.graph = None
        r = guard(f"step time LP {lp}", lambda: explore_util.step_times(step, prompt))
        if r:
            rec["step"].append(dict(lp=lp, rep=rep, ms_1k=r[1024], ms_32k=r[32768]))
            print(f"step rep {rep} LP {lp}: 1K {r[1024]:.3f} ms, 32K {r[32768]:.3f} ms {el()}", flush=True)
use(0); G.engine_kwargs = engine_kwargs
print(f"done {el()}; errors {len(rec['errors'])}")
save()
