"""Chapter 06/09a: q|k|v|z and q|gate|k|v in one round of big blocks. What a grid wait waits for (pdl_chain_grids_h200.json):
the completion signal grows with the blocks that end together, 0.38 us after one block, 0.86 after 1,056 of them, 2.46 after
4,224. The engine's q|k|v|z and q|gate|k|v run 2-warp blocks in 1.94 rounds (8 and 7 an SM), so their last round ends
~1,000 blocks at once; down and out_proj, which gained from one 20-warp block an SM (gemv_oneblock_h200.json), end 128.
Builds (v26 EK, the same sums a row: bit-identical): 16 warps a block, 4 row pairs a warp in runs of 1 step, one block an
SM (q|k|v|z: 128 blocks; q|gate|k|v with 14 warps: 128); 8 warps, 4 row pairs, 2 an SM (256 / 224 blocks, one round); and
16 warps, the engine's 2 row pairs and runs of 3 (256 blocks in two rounds: the block size alone). Each first bit-identical to
the engine's kernel, then alone (PDL, graph, weights rotated past L2) twice, then the step with greedy tokens, three rounds.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_oneround.py OUT_DIR (gemv_oneround_h200.json). About 4 min."""
import sys
import torch
import explore_util
from qwen_engine import gemv as G

QKVZ, QGKV = (16384, 5120, 0), (14336, 5120, 0)
SHAPES = {QKVZ: "q|k|v|z", QGKV: "q|gate|k|v"}
CFGS = {QKVZ: {"16 warps x 4 pairs, 1 an SM": (16, 4, 1, 1), "8 warps x 4 pairs, 2 an SM": (8, 4, 1, 2), "16 warps x 2 pairs, 2 rounds": (16, 2, 3, 1)},
        QGKV: {"14 warps x 4 pairs, 1 an SM": (14, 4, 1, 1), "8 warps x 4 pairs, 2 an SM": (8, 4, 1, 2), "16 warps x 2 pairs, 2 rounds": (16, 2, 3, 1)}}


def kw(shape, S, RP, U, minb):
    k = G.engine_kwargs(*shape)
    return dict(k, S=S, D=U, v13opt=(1, RP) + tuple(k["v13opt"][2:]), minb=minb)


PLANS = {"engine": {}, "one block an SM": {QKVZ: (16, 4, 1, 1), QGKV: (14, 4, 1, 1)}, "8 warps, 2 an SM": {QKVZ: (8, 4, 1, 2), QGKV: (8, 4, 1, 2)}}
apply = explore_util.route_shapes(lambda shape, c: kw(shape, *c))


def alone(step, rec):
    names = explore_util.launched_names(lambda: [G.gemv(torch.zeros(s[0], s[1], dtype=torch.float8_e4m3fn, device="cuda"), torch.zeros(s[0] // 128, s[1] // 128, device="cuda"),
                                                        torch.zeros(1, s[1], dtype=torch.bfloat16, device="cuda"), 0, None, **kw(s, *c))
                                                 for s in SHAPES for c in CFGS[s].values()])
    G.get_kernel("gemv", names[0], together=names)
    explore_util.configs_alone(rec, SHAPES, CFGS, kw)


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "gemv_oneround_h200",
                        "q|k|v|z and q|gate|k|v in one round of big blocks (16 or 14 warps x 4 row pairs, one block an SM; 8 warps x 4 "
                        "row pairs, 2 an SM) and 16-warp blocks in two rounds, against the engine's 2-warp blocks in 1.94 rounds: "
                        "bit-identity with the engine's kernel, each alone (PDL, twice), and the decode step (27B shape, synthetic, PDL "
                        "graph) with greedy tokens, three interleaved rounds at 1K and 32K.",
                        "explore_gemv_oneround.py", PLANS, apply, reps=3,
                        describe=lambda p: {SHAPES[k]: list(v) for k, v in p.items()}, extra=alone)
