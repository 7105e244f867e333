"""Chapter 06/09a: gate|up's first bytes asked before its wait. The engine's gate|up build (v26, E = false) issues no load
before its grid wait (ptxas schedules the wait first; the build that keeps its loads first lost: gemv_v26c_first_h200.json),
and a stream that waits before its first trip pays 1.2-2.1 us a boundary against 0.1-0.6 asking first (boundary_h200.json).
v26fb lets the grid's first FB blocks (the first round, 1,056 blocks, lands while the kernel before runs) ask L2 for the
first FR runs of their rows (what their rings ask for first) before the wait, with a bulk prefetch: no register held. The
same loads, math and sums: bit-identical (checked on the same inputs). Each alone (PDL, graph, rotation), twice; then the
decode step (27B shape, synthetic, PDL graph) with greedy tokens checked, three interleaved rounds at 1K and 32K.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_fb.py OUT_DIR (gemv_fb_h200.json). About 2 min.
(The plans, the identity checks and the timings alone moved into explore_util.one_shape_plans after the record was
made: the same steps, not re-run.)
(Since the record, gemv names these builds by its keyword v26x instead of extra v13opt entries: the same builds.)"""
import explore_util
from qwen_engine import gemv as G

GU = (34816, 5120, 2)
CFGS = ((1056, 1), (1056, 2), (528, 1), (8704, 1))               # (FB blocks, FR runs)


def kw(shape, cfg):
    k = G.engine_kwargs(*shape)
    return dict(k, v26x=dict(fb=cfg))


def label(cfg): return f"first {cfg[0]} blocks, {cfg[1]} run{'s' if cfg[1] > 1 else ''}"


explore_util.one_shape_plans("gemv_fb_h200",
                             "v26fb on gate|up (the grid's first FB blocks ask L2 for the first FR runs of their rows before their grid wait) "
                             "against the engine's v26: bit-identity on the same inputs, each alone (PDL, twice), and the decode step (27B "
                             "shape, synthetic, PDL graph) with greedy tokens, three interleaved rounds at 1K and 32K.",
                             "explore_gemv_fb.py", GU, "gate|up", CFGS, kw, label)
