"""Chapter 06, v26xs with XS 4 and 5. XS 3 (gemv_v26xs3_h200.json) staged the activation with every thread's copies issued at
once past L1 (cp.async.cg) and ran three times slower than the engine (15-45 %): every block of the grid asked L2 for the
same K bytes at the same moment. Here the same staging through L1, which the blocks of an SM share: XS 4 by cp.async.ca,
XS 5 by ld.global.nc into registers (10 pieces a thread at once, then the stores: XS 1 without its round trip per piece).
Each shape's engine configuration with both, and down with one row pair a warp with XS 5. Every build checked bit for bit
against the engine's kernel; alone with PDL interleaved with the engine's (two rounds); the token's GEMVs and the decode
step with each shape's winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26xs45.py OUT_DIR (gemv_v26xs45_h200.json). About three minutes."""
import explore_gemv_v26xs as S
D, V = S.D, S.V

ENG = {(14336, 5120): (2, 2, 3, 7, 10, 2), (16384, 5120): (2, 2, 3, 8, 10, 2), (5120, 6144): (4, 1, 3, 5, 12, 2),
       (34816, 5120): (2, 1, 2, 8, 10, 0), (5120, 17408): (2, 2, 4, 5, 34, 2)}      # (SR, RP, U, MINB, KST, E) + (XS,)
CFGS = {k: [c + (4,), c + (5,)] for k, c in ENG.items()}
CFGS[(5120, 17408)].append((4, 1, 3, 5, 34, 2, 5))
D.configure(CFGS, "v26xs45",
            ("gemv_v26xs45_h200", "v26 with the activation staged in shared memory through L1 (XS 4: cp.async.ca; XS 5: ld.global.nc "
             "into registers, 10 pieces a thread at once) at each shape's engine configuration: bit identity with the engine's kernel, "
             "alone with PDL interleaved with the engine's (two rounds), then the token's GEMVs and the decode step with each shape's "
             "winner.", "explore_gemv_v26xs45.py"))
D.builds(D.family("gemv_fp8_v26xs"))
V.blocks_per_sm, V.run24 = S.blocks_per_sm, S.run

if __name__ == "__main__":
    D.main()
