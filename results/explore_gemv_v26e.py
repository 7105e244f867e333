"""Chapter 06, v26e: v26's first run of loads before the grid wait (E), in the grids of gemv_v26d_h200.json. A plain stream
chained with PDL loses 1.2-2.1 us a call at its boundary when it waits before its first loads and 0.1-0.6 us when it
asks for them first (boundary_h200.json), while v26 on gate|up with E lost 3 us alone (gemv_v26c_h200.json: 8.2 rounds of
blocks). Here E against no E at each shape's best grids of v26d (out_proj and down in one round, q|gate|k|v and qkv|z in
1.94, gate|up in 8.2): the same checks as v26d (bit identity with the engine's kernel on the K = 5,120 shapes; the float64
check, run-to-run and M = 8-vs-M = 1 identity on the 5,120-row shapes), alone with PDL interleaved with the engine's
kernel (two rounds), the token's GEMVs and the decode step with each shape's winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26e.py OUT_DIR (gemv_v26e_h200.json). About two minutes.
(Its configuration moved into explore_gemv_v26d.configure after its record was made: the same steps, not re-run.)
"""
import explore_gemv_v26d as D

D.configure({(5120, 17408): [(2, 2, 2, 5, 34, 0), (2, 2, 2, 5, 34, 1), (4, 1, 2, 5, 34, 1), (1, 2, 2, 10, 34, 1)],   # (SR, RP, U, MINB, KST, E)
             (5120, 6144): [(4, 1, 3, 5, 12, 0), (4, 1, 3, 5, 12, 1), (4, 1, 2, 5, 12, 1), (2, 1, 2, 10, 12, 1), (2, 2, 2, 5, 12, 1)],
             (14336, 5120): [(2, 2, 2, 7, 10, 0), (2, 2, 2, 7, 10, 1), (1, 2, 2, 14, 10, 1)],
             (16384, 5120): [(2, 2, 2, 8, 10, 0), (2, 2, 2, 8, 10, 1), (1, 2, 2, 16, 10, 1)],
             (34816, 5120): [(2, 1, 2, 8, 10, 0), (2, 1, 2, 8, 10, 1)]}, "v26e",
            ("gemv_v26e_h200", "v26 with its first run of loads before the grid wait (E) against without, at gemv_v26d's grids (out_proj "
             "and down in one round, q|gate|k|v and qkv|z in 1.94, gate|up in 8.2): the v26d checks, alone with PDL interleaved with "
             "the engine's (two rounds), then the token's GEMVs and the decode step with each shape's winner.", "explore_gemv_v26e.py"))

if __name__ == "__main__":
    D.main()
