"""Chapter 06, v26k: the neighbours of the engine's v26 EK builds that no run has measured, on the three shapes still under
90 % (q|gate|k|v 88 %, out_proj 84 %, down 83 %: gemv_standing_h200.json). Each grid just under a whole number of rounds.
q|gate|k|v (1.94 rounds): 1-warp blocks of two pairs at 14 an SM, runs of 4 at two pairs, 4-warp blocks of one pair in runs
of 3 and 4, 2-warp blocks of one pair at 14 an SM in runs of 3 and 4, and a control at 6 blocks an SM (2.26 rounds, no cap
below 170 registers; the engine's build holds 128 and spills 24 bytes). down (one round): two pairs in runs of 5 and 6, one
warp of two pairs at 10 an SM in runs of 3 (its runs of 5 and one warp of four pairs spill 40-68 bytes at the cap: not run). out_proj
(one round): two pairs in runs of 3, one warp of two pairs at 10 an SM, one warp of four pairs at 5. Every build is EK.
The v26d checks (bit identity with the engine's kernel on q|gate|k|v; the float64 check, run to run and M = 8 rows against
M = 1 calls on the 5,120-row shapes), alone with PDL interleaved with the engine's kernel (two rounds), then the token's
GEMVs and the decode step with each shape's winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26k.py OUT_DIR (gemv_v26k_h200.json). About three minutes."""
import explore_gemv_v26d as D

D.configure({(14336, 5120): [(1, 2, 3, 14, 10, 2), (2, 2, 4, 7, 10, 2), (4, 1, 3, 7, 10, 2), (4, 1, 4, 7, 10, 2), (2, 1, 3, 14, 10, 2),
                             (2, 1, 4, 14, 10, 2), (2, 2, 3, 6, 10, 2)],                     # (SR, RP, U, MINB, KST, E = 2: EK)
             (5120, 17408): [(2, 2, 5, 5, 34, 2), (2, 2, 6, 5, 34, 2), (1, 2, 3, 10, 34, 2)],
             (5120, 6144): [(2, 2, 3, 5, 12, 2), (1, 2, 3, 10, 12, 2), (1, 4, 3, 5, 12, 2)]}, "v26k",
            ("gemv_v26k_h200", "v26 EK at configurations no run had measured, on q|gate|k|v, down and out_proj (grids just under a whole "
             "number of rounds, one control at 2.26): the v26d checks, alone with PDL interleaved with the engine's (two rounds), then the "
             "token's GEMVs and the decode step with each shape's winner.", "explore_gemv_v26k.py"))

if __name__ == "__main__":
    D.main()
