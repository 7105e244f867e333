"""Chapter 06/09a: the tail of a multi-round GEMV. The step's timeline (step_timeline_now_h200.json) has gate|up's blocks
(8,704 of 2 warps, 8 an SM: 8.2 rounds) pass 90 % of their ends at about the floor's time and the last one 4-5 us later:
the blocks that start last run their rows while fewer and fewer blocks stream beside them, each warp with only its
register ring in flight (a row pair a warp, 20 KB a block). v26tp asks L2 for the whole rows of the grid's last TB blocks
when they start (one bulk prefetch a row, no register), so those rows stream at the pace of many requests, not of one
ring. The same loads, math and sums as the engine's kernel: bit-identical (checked on the same inputs). Sweeps TB on
gate|up (a quarter, half, one and two rounds of 1,056 resident blocks) and on q|k|v|z and q|gate|k|v (half and all of
their second round); each alone (PDL, graph, rotation), twice; then the decode step (27B shape, synthetic, PDL graph)
with greedy tokens checked, three interleaved rounds at 1K and 32K.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_tail.py OUT_DIR (gemv_tail_h200.json). About 3 min.
(The identity checks and the timings alone moved into explore_util.identity_and_alone after the record was made: the same
steps, its alone entries' cfg labelled "gate|up TB 528" where the record has "TB 528"; not re-run.)
(Since the record, gemv names these builds by its keyword v26x instead of extra v13opt entries: the same builds.)"""
import sys
import explore_util
from qwen_engine import gemv as G

GU, QKVZ, QGKV = (34816, 5120, 2), (16384, 5120, 0), (14336, 5120, 0)
SHAPES = {GU: "gate|up", QKVZ: "qkv|z", QGKV: "q|gate|k|v"}
SWEEP = {GU: (264, 528, 1056, 2112), QKVZ: (496, 992), QGKV: (434, 868)}


def kw(shape, tb):
    k = G.engine_kwargs(*shape)
    return dict(k, v26x=dict(tb=tb))


PLANS = {"engine": {}, "gate|up 528": {GU: 528}, "gate|up 1056": {GU: 1056}, "gate|up 2112": {GU: 2112},
         "qkv|z 992, q|gate|k|v 868": {QKVZ: 992, QGKV: 868}, "all three (1056, 992, 868)": {GU: 1056, QKVZ: 992, QGKV: 868}}

apply = explore_util.route_shapes(kw)                                  # a plan: {shape: TB}


def alone(step, rec):
    explore_util.identity_and_alone(rec, {f"{SHAPES[shape]} TB {tb}": (shape, kw(shape, tb)) for shape, tbs in SWEEP.items() for tb in tbs}, SHAPES)


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "gemv_tail_h200",
                        "v26tp (the grid's last TB blocks ask L2 for their warps' whole rows when they start) on gate|up, qkv|z and "
                        "q|gate|k|v against the engine's v26: bit-identity on the same inputs, each alone (PDL, twice), and the decode "
                        "step (27B shape, synthetic, PDL graph) with greedy tokens, three interleaved rounds at 1K and 32K.",
                        "explore_gemv_tail.py", PLANS, apply, reps=3,
                        describe=lambda p: {SHAPES[k]: v for k, v in p.items()}, extra=alone)
