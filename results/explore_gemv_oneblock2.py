"""Chapter 06/09a: one block an SM (gemv_oneblock_h200 took it for down and out_proj) on the shapes that take more than one
round. q|k|v|z runs 2,048 blocks of 2 warps, 8 an SM (1.94 rounds), q|gate|k|v 1,792 of 2 warps, 7 an SM (1.94), gate|up
8,704 of 2 warps, 8 an SM (8.2). The same warps in blocks of an SM's count (16 warps: 256 blocks of q|k|v|z, 1,088 of
gate|up; 14 warps: 256 blocks of q|gate|k|v), one an SM: each warp still one row set, the same sums. Bit-identical to the
engine's kernel first (versus_engine), then the step (greedy tokens, three interleaved rounds at 1K and 32K).
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_oneblock2.py OUT_DIR (gemv_oneblock2_h200.json). About 2 min."""
import sys
import torch
import explore_util
from qwen_engine import gemv as G

QKVZ, QGKV, GU = (16384, 5120, 0), (14336, 5120, 0), (34816, 5120, 2)
SHAPES = {QKVZ: "qkv|z", QGKV: "q|gate|k|v", GU: "gate|up"}
ONE = {QKVZ: (16, 1), QGKV: (14, 1), GU: (16, 1)}


def kw(shape, S, minb): return dict(G.engine_kwargs(*shape), S=S, minb=minb)


PLANS = {"engine": {}, "qkv|z, q|gate|k|v one block an SM": {QKVZ: ONE[QKVZ], QGKV: ONE[QGKV]}, "gate|up one block an SM": {GU: ONE[GU]},
         "all three": dict(ONE)}


apply = explore_util.route_shapes(lambda shape, c: kw(shape, *c))       # a plan: {shape: (warps a block, blocks an SM)}


def identity(step, rec):
    gen = torch.Generator(device="cuda").manual_seed(9)
    rec["versus_engine"] = {}
    for shape, (S, mb) in ONE.items():
        k = {a: b for a, b in kw(shape, S, mb).items() if a not in ("S", "RG")}
        v = [explore_util.versus_engine(gen, *shape, S, k) for _ in range(2)]
        rec["versus_engine"][SHAPES[shape]] = v
        print(f"{SHAPES[shape]} ({S} warps, 1 an SM): bit-identical to the engine's {all(x['identical'] for x in v)}", flush=True)


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "gemv_oneblock2_h200",
                        "q|k|v|z, q|gate|k|v and gate|up with an SM's warps in one block (16, 14, 16 warps, 1 an SM) against the engine's "
                        "2-warp blocks: bit-identity with the engine's kernel, then the decode step (27B shape, synthetic, PDL graph), greedy "
                        "tokens, three interleaved rounds at 1K and 32K.", "explore_gemv_oneblock2.py", PLANS, apply, reps=3,
                        describe=lambda p: {SHAPES[k]: list(v) for k, v in p.items()}, extra=identity)
