"""Chapter 06, v26xs with XS 3: the activation staged in shared memory with every thread's copies issued at once (cp.async,
16 bytes each, unrolled: K is a compile-time constant) and one wait, placed so that a quarter-warp reads 128 contiguous bytes.
XS 1 (gemv_v26xs_h200.json: 65-87 %) staged it in a loop whose SASS is LDG, STS, branch: one L2 round trip per piece, each
behind the block's first weights; XS 2 (gemv_v26xs2_h200.json: 39-62 %) used one bulk copy behind a proxy fence. So the
hypothesis of gemv_probe26b (a step's L1 load of the activation returns only after the weight loads issued before it) was
never tested with a staging that costs one round trip. Each shape's engine configuration with XS 3, plus q|gate|k|v's
1-warp neighbour and down with one row pair a warp (the request pattern that streams at 96-99 % without the math,
gemv_dry26b_h200.json). Every build checked bit for bit against the engine's kernel; alone with PDL interleaved with the
engine's (two rounds); the token's GEMVs and the decode step with each shape's winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26xs3.py OUT_DIR (gemv_v26xs3_h200.json). About three minutes."""
import explore_gemv_v26xs as S
D, V = S.D, S.V

CFGS = {(14336, 5120): [(2, 2, 3, 7, 10, 2), (1, 2, 3, 14, 10, 2)], (16384, 5120): [(2, 2, 3, 8, 10, 2)],
        (5120, 6144): [(4, 1, 3, 5, 12, 2), (2, 2, 3, 5, 12, 2)], (34816, 5120): [(2, 1, 2, 8, 10, 0)],
        (5120, 17408): [(2, 2, 4, 5, 34, 2), (4, 1, 2, 5, 34, 2), (4, 1, 3, 5, 34, 2)]}     # (SR, RP, U, MINB, KST, E), all XS 3
D.configure(CFGS, "v26xs3",
            ("gemv_v26xs3_h200", "v26 with the activation staged in shared memory by every thread's copies at once and one wait "
             "(XS 3) at each shape's engine configuration and neighbours: bit identity with the engine's kernel, alone with PDL "
             "interleaved with the engine's (two rounds), then the token's GEMVs and the decode step with each shape's winner.",
             "explore_gemv_v26xs3.py"))
D.builds(D.family("gemv_fp8_v26xs", fixed=(3,)))
V.blocks_per_sm, V.run24 = S.blocks_per_sm, S.run

if __name__ == "__main__":
    D.main()
