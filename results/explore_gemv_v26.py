"""Chapter 06: v26, v14's step, math and sums with the ring's unit changed: a slot holds U consecutive steps of the warp's
rows, each row's U pieces requested one after another (runs of 512 U bytes), two slots, the activation read at use.
The question: v20 at deep rings and v25's L1 prefetch lost more the further ahead they asked, while a plain stream asks
for the most and reads 95 %; if the DRAM pages opened per byte read are what it costs, longer runs of a row should win at
the same bytes in flight. On the three K = 5,120 shapes: bit identity with the engine's kernel (and with v14 at small
shapes), registers and blocks an SM, alone with PDL interleaved with the engine's kernel (two rounds), then the token's
GEMVs and the decode step with each shape's winner (explore_gemv_v24.py's machinery; one row set a warp, v14's grid).
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26.py OUT_DIR (gemv_v26_h200.json). About 60 seconds.
(The record's token and step plans are named "v24": the label came from explore_gemv_v24.py's machinery, which now takes
it from LABEL; the plan measured is v26's winner. KST in the configurations came later, for explore_gemv_v26b.py.)"""
import numpy as np
import explore_gemv_v24 as V
from qwen_engine.runtime import launch

V.CFGS = {2: [(2, 2, 2, 1), (2, 1, 5, 6), (2, 1, 2, 8), (2, 1, 2, 1), (2, 1, 5, 1), (2, 4, 2, 1)],     # (SR, RP, U, MINB)
          0: [(4, 2, 2, 1), (4, 1, 5, 3), (4, 1, 5, 1)]}
V.AWK = [(1152, 5120, 0, 0), (2304, 5120, 2, 0)]
V.name = lambda epi, c: f"gemv_fp8_v26<{c[0]}, {c[1]}, {epi}, {c[2]}, {c[4] if len(c) > 4 else 10}, {c[3]}>"   # (SR, RP, U, MINB[, KST])
V.LABEL = "v26"
V.ALL = tuple(V.name(epi, c) for epi in V.CFGS for c in V.CFGS[epi])
V.kern = lambda epi, c: V.get_kernel("gemv", V.name(epi, c), together=V.ALL)


def blocks_per_sm(epi, c, K=5120):
    import cupy
    return cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(V.kern(epi, c).ptr, 32 * c[0], 0)


def grids(N, epi, c, sms=132):
    "v14's grid: one row set a warp, every set."
    n = V.sets_of(N, epi, c)
    assert n % c[0] == 0, "whole blocks of row sets"
    return [n // c[0]]


def run26(q, sc, x, epi, res, out, c, blocks, pdl=True):
    N, K = q.shape
    assert K == 512 * (c[4] if len(c) > 4 else 10) and x.shape[0] == 1 and blocks == V.sets_of(N, epi, c) // c[0], "v26: its K, one token, v14's grid"
    args = (q, sc, x, res if res is not None else x, out, np.int32(N), np.int32(K), np.int32(1), np.int32(out.shape[1]), out, out)
    launch(V.kern(epi, c), (blocks,), (32 * c[0],), args, pdl=pdl)
    return out


_identity = V.identity
V.identity = lambda gen, N, K, epi, c, blocks, versus: _identity(gen, N, K, epi, c, blocks or grids(N, epi, c)[0], versus)
V.blocks_per_sm, V.grids, V.run24 = blocks_per_sm, grids, run26
V.RECORD = ("gemv_v26_h200", "v26 (v14's step, math and sums; a ring slot holds U consecutive steps of the warp's rows, each row's "
            "pieces requested one after another) on the three K = 5,120 shapes: bit identity with the engine's kernel and with "
            "v14 at small shapes, registers and blocks an SM, alone with PDL interleaved with the engine's kernel (two rounds), "
            "then the token's GEMVs and the decode step with each shape's winner.", "explore_gemv_v26.py")

if __name__ == "__main__":
    V.main()
