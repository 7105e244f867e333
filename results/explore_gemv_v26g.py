"""Chapter 06, v26g: longer runs for v26 EK, the last run short where U does not divide K's steps. out_proj reached its plain
stream with EK in runs of 3 (84 %, gemv_v26f_h200.json) while down, in runs of 2 (its 34 steps allow only 1, 2, 17 or 34),
stayed at 80 % against v23's 82-83 % and a stream's 93 %. v26 now takes any U <= K / 512: the last run holds the steps that
are left (its loads and math skipped past K, compile-time), every row's sum still v14's, step after step. At each shape's
grid of whole rounds: down in runs of 3 and 4 (one round: 4 warps of one pair or 2 warps of two pairs, 5 blocks an SM; 1
warp of two pairs, 10), with v26f's runs of 2 again (one pair, and two pairs: v26f's 29.8 us outlier); out_proj in runs of
2, 4 and 6 beside the engine's 3; q|gate|k|v and qkv|z in runs of 3 (two pairs) and of 5 (one pair, 3.88 rounds). Every
build here is EK; the SASS audit (nvcc) finds its first run's loads above the wait on each. The v26d checks, alone with
PDL interleaved with the engine's kernel (two rounds), the token's GEMVs and the decode step with each shape's winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26g.py OUT_DIR (gemv_v26g_h200.json). About two minutes.
(Its configuration moved into explore_gemv_v26d.configure after its record was made: the same steps, not re-run.)
"""
import explore_gemv_v26d as D

D.configure({(5120, 17408): [(4, 1, 2, 5, 34, 2), (4, 1, 3, 5, 34, 2), (4, 1, 4, 5, 34, 2), (2, 2, 2, 5, 34, 2), (2, 2, 3, 5, 34, 2),
                             (2, 2, 4, 5, 34, 2), (1, 2, 4, 10, 34, 2)],                     # (SR, RP, U, MINB, KST, E = 2: EK)
             (5120, 6144): [(4, 1, 2, 5, 12, 2), (4, 1, 4, 5, 12, 2), (4, 1, 6, 5, 12, 2)],
             (14336, 5120): [(2, 2, 3, 7, 10, 2), (2, 1, 5, 7, 10, 2)],
             (16384, 5120): [(2, 2, 3, 8, 10, 2), (2, 1, 5, 8, 10, 2)]}, "v26g",
            ("gemv_v26g_h200", "v26 EK in longer runs (the last run short where U does not divide K's steps) at whole-round grids: down in runs "
             "of 2-4, out_proj 2-6, q|gate|k|v and qkv|z 3 and 5: the v26d checks, alone with PDL interleaved with the engine's (two rounds), "
             "then the token's GEMVs and the decode step with each shape's winner.", "explore_gemv_v26g.py"))

if __name__ == "__main__":
    D.main()
