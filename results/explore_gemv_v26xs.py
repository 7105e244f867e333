"""Chapter 06, v26xs: the engine's v26 builds with the activation staged in shared memory (XS: 2 K bytes a block, copied
once after the wait). gemv_probe26b_h200.json: the engine's math costs the K = 5,120 shapes 5-9 points against their DRY
builds; without the widening it costs as much, without the activation's L1 loads half, and those loads alone nothing. If a
step's L1 load of the activation returns only after the weight loads issued before it, the step waits out a refill's DRAM
latency; loads from shared memory would not. Each shape's engine build with XS, and q|gate|k|v's v26k neighbour (1-warp
blocks of two pairs) with it. Every build is checked bit for bit against the engine's kernel; alone with PDL interleaved with
the engine's (two rounds); the token's GEMVs and the decode step with each shape's winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26xs.py OUT_DIR (gemv_v26xs_h200.json). About two minutes.
(Its builds' names moved into explore_gemv_v26d.builds after its record was made: the same steps, not re-run.)"""
import numpy as np
import explore_gemv_v26d as D
V = D.V
from qwen_engine.runtime import launch

CFGS = {(14336, 5120): [(2, 2, 3, 7, 10, 2), (1, 2, 3, 14, 10, 2)], (16384, 5120): [(2, 2, 3, 8, 10, 2)], (5120, 6144): [(4, 1, 3, 5, 12, 2)],
        (34816, 5120): [(2, 1, 2, 8, 10, 0)], (5120, 17408): [(2, 2, 4, 5, 34, 2)]}          # (SR, RP, U, MINB, KST, E), all XS
D.configure(CFGS, "v26xs",
            ("gemv_v26xs_h200", "v26 with the activation staged in shared memory once a block (XS) at each shape's engine configuration and "
             "q|gate|k|v's 1-warp neighbour: bit identity with the engine's kernel, alone with PDL interleaved with the engine's (two rounds), "
             "then the token's GEMVs and the decode step with each shape's winner.", "explore_gemv_v26xs.py"))
E_ARGS = {0: "", 1: ", true", 2: ", true, true"}
D.builds(lambda epi, c: f"gemv_fp8_v26xs<{c[0]}, {c[1]}, {epi}, {c[2]}, {c[4]}, {c[3]}{E_ARGS[c[5]]}>")


def blocks_per_sm(epi, c, K=5120):
    import cupy
    return cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(V.kern(epi, c).ptr, 32 * c[0], 2 * 512 * c[4])


def run(q, sc, x, epi, res, out, c, blocks, pdl=True):
    N, K = q.shape
    assert K == 512 * c[4] and x.shape[0] == 1 and blocks == V.sets_of(N, epi, c) // c[0], "v26xs: its K, one token, v14's grid"
    args = (q, sc, x, res if res is not None else x, out, np.int32(N), np.int32(K), np.int32(1), np.int32(out.shape[1]), out, out)
    launch(V.kern(epi, c), (blocks,), (32 * c[0],), args, smem=2 * K, pdl=pdl)
    return out


V.blocks_per_sm, V.run24 = blocks_per_sm, run

if __name__ == "__main__":
    D.main()
