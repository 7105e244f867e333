"""Chapter 06, v26lp on gate|up (47 % of a token's fp8 bytes) at the engine's blocks an SM. gemv_v26lp_h200 ran gate|up's
loop (RU 2) at 10 blocks an SM (its 93 registers let two more in than the engine's 110) and it lost (85-88 % against 92);
here the loop held to the engine's 8 blocks an SM by 27 KB of dynamic shared memory it does not use (8 x 28 KB fit the SM's
228 KB, 9 do not), and to 9, beside its natural 10; the same for the engine's own build (v26, RU 0) at 8 by the same means
(a control: it should tie itself). Configurations (SR, RP, U, MINB, KST, E, RU, pad KB). Bit identity with the engine's
kernel, alone with PDL interleaved with it (two rounds), the token and the step with a winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26lp5.py OUT_DIR (gemv_v26lp5_h200.json). About two minutes."""
import numpy as np
import explore_gemv_v26lp as L
D, V = L.D, L.V
from qwen_engine.runtime import launch

CFGS = {(34816, 5120): [(2, 1, 2, 8, 10, 0, 2, 27), (2, 1, 2, 8, 10, 0, 2, 24), (2, 1, 2, 8, 10, 0, 2, 0), (2, 1, 2, 8, 10, 0, 4, 27),
                        (2, 1, 2, 8, 10, 0, 0, 27)]}
D.configure(CFGS, "v26lp5",
            ("gemv_v26lp5_h200", "gate|up with its runs looped (v26lp RU 2 and 4) held to 8 or 9 blocks an SM by unused dynamic shared "
             "memory, beside its natural 10 and the engine's build held the same way: bit identity with the engine's kernel, alone "
             "with PDL interleaved with it (two rounds), then the token's GEMVs and the decode step with a winner.",
             "explore_gemv_v26lp5.py"), awk=())
D.builds(D.family("gemv_fp8_v26lp", extra=1))   # c[7]: the shared-memory pad, not an argument


def blocks_per_sm(epi, c, K=5120):
    import cupy
    return cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(V.kern(epi, c).ptr, 32 * c[0], 1024 * c[7])


def run(q, sc, x, epi, res, out, c, blocks, pdl=True):
    N, K = q.shape
    assert K == 512 * c[4] and x.shape[0] == 1 and blocks == V.sets_of(N, epi, c) // c[0]
    k = V.kern(epi, c)
    if c[7] and k.max_dynamic_shared_size_bytes < 1024 * c[7]: k.max_dynamic_shared_size_bytes = 1024 * c[7]
    args = (q, sc, x, res if res is not None else x, out, np.int32(N), np.int32(K), np.int32(1), np.int32(out.shape[1]), out, out)
    launch(k, (blocks,), (32 * c[0],), args, smem=1024 * c[7], pdl=pdl)
    return out


V.blocks_per_sm, V.run24 = blocks_per_sm, run

if __name__ == "__main__":
    D.main()
