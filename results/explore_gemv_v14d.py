"""Chapter 06, v14 with four row pairs a warp. v22's RAW build (gemv_v22_raw_h200.json) read qkv|z at 88 % with 4 row
pairs a warp and a 2-step ring, against the engine's 84 % (2 pairs, 3 steps); v14 itself was never timed at 4 pairs on
the large shapes (V14B_SWEEP's run ended before them: gemv_v14b_h200_log.txt). The same sums in the same order as the
engine's kernel (a row's arithmetic does not depend on how many rows its warp holds), so bit-identical. Through
explore_util.flag_sweep: float64 check at M = 1, M = 8 rows = M = 1 and 20 repeats, bit-identity with the engine's kernel;
each shape timed alone with PDL interleaved with the engine's, twice; the token's GEMVs with the winners.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v14d.py OUT_DIR (gemv_v14d_h200.json). About 60 s."""
import torch
from qwen_engine import gemv as G
import explore_util

gen = torch.Generator(device="cuda").manual_seed(0)
rec, guard, el, save = explore_util.recorder(
    "gemv_v14d_h200", "v14 with 4 row pairs a warp (and 2-warp blocks) on the three large shapes: checked, bit-identity with the engine's "
    "kernel, timed alone with PDL interleaved with the engine's, the token's GEMVs with the winners.", "explore_gemv_v14d.py",
    checks=[], identity=[], versus_engine=[], timings=[], regs={})
V14D_SWEEP = {(14336, 5120, 0): ((4, 1, 4, 2, 1, 1, 1, 1), (4, 1, 4, 2, 1, 1, 1, 0), (2, 1, 4, 2, 1, 1, 1, 1)),
              (16384, 5120, 0): ((4, 1, 4, 2, 1, 1, 1, 1), (4, 1, 4, 2, 1, 1, 1, 0), (2, 1, 4, 2, 1, 1, 1, 1)),
              (34816, 5120, 2): ((4, 1, 4, 2, 1, 1, 1, 1), (4, 1, 4, 2, 1, 1, 1, 0), (2, 1, 4, 2, 1, 1, 1, 1))}
rec["sweep"] = {f"{k[0]}x{k[1]}": [list(c) for c in v] for k, v in V14D_SWEEP.items()}
explore_util.flag_sweep(rec, gen, rec["bandwidth_tbps"], el, save, 14, V14D_SWEEP, (0,), lambda e, c, _: G._v14_name(e, c), "-", ())
print(f"done {el()}; errors {len(rec['errors'])}")
save()
