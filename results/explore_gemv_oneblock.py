"""Chapter 06/09a: the SM's oldest block first. The step's timeline with every block's end (step_timeline_ends_h200.json)
shows, on the single-round GEMVs (down: 640 blocks of 4 warps, 5 an SM; out_proj the same), that the blocks an SM
received later finish later although all pass their grid wait together: down's first block on an SM (by block index)
takes 19.4 us (median), its fifth 20.6; out_proj 6.1 against 6.8. The launch ends with the slowest, so each SM's last microsecond or two
runs with fewer and fewer of its blocks. If the SM's schedulers favour the older block, one block an SM holding all its
warps (20 warps: the same warps, rows and sums, one block) should end its warps closer together. Builds: v26 (down: v26lp)
with 20 warps a block and 1 an SM, and 10 warps with 2 an SM, against the engine's 4 warps with 5 an SM; each first
bit-identical to the engine's kernel on the same inputs (versus_engine), then alone (PDL, graph, rotation), twice,
then the step (down, and down with out_proj) with greedy tokens checked, three interleaved rounds.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_oneblock.py OUT_DIR (gemv_oneblock_h200.json). About 2.5 min."""
import sys
import torch
import explore_util
from qwen_engine import gemv as G

DOWN, OUT = (5120, 17408, 1), (5120, 6144, 1)
SHAPES = {DOWN: "down", OUT: "out_proj"}
BLOCKS = {"20 warps, 1 an SM": (20, 1), "10 warps, 2 an SM": (10, 2)}


def kw(shape, S, minb):
    k = G.engine_kwargs(*shape)
    return dict(k, S=S, minb=minb)


PLANS = {"engine": {}, "down 20 warps": {DOWN: (20, 1)}, "down, out_proj 20 warps": {DOWN: (20, 1), OUT: (20, 1)},
         "down, out_proj 10 warps": {DOWN: (10, 2), OUT: (10, 2)}}


apply = explore_util.route_shapes(lambda shape, c: kw(shape, *c))       # a plan: {shape: (warps a block, blocks an SM)}


def alone(step, rec): explore_util.configs_alone(rec, SHAPES, {shape: BLOCKS for shape in SHAPES}, kw)


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "gemv_oneblock_h200",
                        "down and out_proj with all of an SM's warps in one block (20 warps, 1 an SM; 10 warps, 2 an SM) against the "
                        "engine's 4 warps, 5 an SM: bit-identity with the engine's kernel, each alone (PDL, twice), and the decode step "
                        "(27B shape, synthetic, PDL graph) with greedy tokens, three interleaved rounds at 1K and 32K.",
                        "explore_gemv_oneblock.py", PLANS, apply, reps=3,
                        describe=lambda p: {SHAPES[k]: list(v) for k, v in p.items()}, extra=alone)
