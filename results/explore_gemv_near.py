"""Chapter 06: gate|up's rows as neighbours (v26n). v26's SwiGLU gives a warp a gate row and its up row, 89 MB apart; on
the plain shapes, where a warp's rows are neighbours, pairing rows N / 2 apart instead cost 2-10 points (v28,
gemv_v28_h200.json). v26n reads gate|up as a plain projection does: the even warps of a block take neighbouring gate
rows, the odd ones the same outputs' up rows, and the up warp hands its rounded sums to the gate warp through shared
memory for the SwiGLU. Every row's sum and every rounding are v26's: bit-identical (checked on the same inputs). Builds
(warps a block, row pairs a warp, steps a run, blocks an SM, early loads: 0 none, 2 EK) around the engine's (2, 1, 2, 8,
0); each alone (PDL, graph, rotation), twice; then the decode step (27B shape, synthetic, PDL graph) with greedy tokens
checked, three interleaved rounds at 1K and 32K.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_near.py OUT_DIR (gemv_near_h200.json). About 2.5 min.
(The identity checks and the timings alone moved into explore_util.identity_and_alone (and the plans into
one_shape_plans) after the record was made: the same steps, its alone entries then carry the shape and the label instead of the configuration list; not re-run.)
(Since the record, gemv names these builds by its keyword v26x instead of extra v13opt entries: the same builds.)"""
import explore_util

GU = (34816, 5120, 2)
CFGS = ((2, 1, 2, 8, 0), (2, 1, 2, 8, 2), (2, 2, 2, 8, 0), (2, 2, 3, 8, 0), (2, 2, 3, 8, 2), (4, 1, 2, 4, 0))


def kw(shape, cfg):
    S, RP, U, mb, early = cfg
    return dict(S=S, RG=2, variant=26, KS=1, D=U, v13opt=(1, RP, early, False), minb=mb, v26x=dict(near=True))


def label(cfg): return "near {} warps, {} pair{}, runs of {}, {} an SM{}".format(cfg[0], cfg[1], "s" if cfg[1] > 1 else "", cfg[2], cfg[3], ", EK" if cfg[4] == 2 else "")


explore_util.one_shape_plans("gemv_near_h200",
                             "v26n (gate|up read as a plain projection: a warp's rows neighbouring gate rows or neighbouring up rows, the "
                             "SwiGLU met through shared memory) against the engine's v26: bit-identity on the same inputs, each alone (PDL, "
                             "twice), and the decode step (27B shape, synthetic, PDL graph) with greedy tokens, three interleaved rounds at "
                             "1K and 32K.",
                             "explore_gemv_near.py", GU, "gate|up", CFGS, kw, label)
