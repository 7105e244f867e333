"""Chapter 06, v19: the weights asked of L2 ahead of the register ring. ncu on the engine's v14/v18
(results/gemv_ncu_engine_h200.txt, one launch per shape) finds the warps stalled on their weight loads (L1TEX scoreboard
~67 % of the cycles between issues, ~0.4 instructions issued per scheduler per cycle, 25-44 % occupancy): the ring's
registers bound the bytes in flight. v19 adds one bulk L2 prefetch per row and step, PF steps past the ring (before the
PDL wait: the PF steps after the early ring). Each shape's engine configuration at PF = 2, 4, 8, 64 (64 = all of the
warp's steps asked for before the wait); on q|gate|k|v and gate|up also with MINB holding v14's blocks per SM.
Each: float64 check at M = 1 (outputs poisoned), M = 8 rows = M = 1 and 20 repeats, bit-identical to the engine's kernel
on the same inputs; timed alone with PDL interleaved with the engine's, twice; then the token's GEMVs: the engine's plan,
v19 on every shape where it won both repeats, the engine's plan again.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v19.py OUT_DIR (gemv_v19_h200.json). About 150 s.
(explore_util.versus_engine, then the whole sweep (explore_util.flag_sweep, shared with v21), were factored out of this
script after its record was made: the same code, not re-run.)"""
import torch
from qwen_engine import gemv as G
import explore_util

gen = torch.Generator(device="cuda").manual_seed(0)
rec, guard, el, save = explore_util.recorder(
    "gemv_v19_h200", "v19 (v14 / v18 with bulk L2 prefetches PF steps past the register ring) checked, bit-identity with the engine's "
    "kernel, timed alone with PDL interleaved with the engine's, and the token's GEMVs.", "explore_gemv_v19.py",
    checks=[], identity=[], versus_engine=[], timings=[], regs={}, pf=list(G.V19_PF))
bw = rec["bandwidth_tbps"]
passed = explore_util.flag_sweep(rec, gen, bw, el, save, 19, G.V19_SWEEP, G.V19_PF, G._v19_name, "PF", (4,))
print(f"done {el()}; errors {len(rec['errors'])}")
save()
