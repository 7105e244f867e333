"""Chapter 06, v26f: v26 with its first run of loads truly before the grid wait (EK). gemv_v26e_h200.json compared v26 with
E (an always-true branch around its first loads) against without, but ptxas turned that branch into predicated loads and
still hoisted the wait above them on every build there except gate|up's (the SASS audit of chapter 09a, run on those
builds after the record was made): its out_proj win (9.2 against 9.7 us) came from something else. EK adds the branch's
other side after the wait (never taken), which ptxas keeps as a branch: its audit finds the first run's loads above the
wait on each EK build here (out_proj: 6 weight loads and 3 scales a lane; down: 8 + 2 or 4 + 2; q|gate|k|v, qkv|z: 8 + 2).
At gemv_v26d's grids (one round on out_proj and down, 1.94 on q|gate|k|v and qkv|z), without E, with E and with EK; gate|up's
EK build has no pre-wait load (ptxas), so gate|up is not here. The v26d checks, alone with PDL interleaved with the engine's
kernel (two rounds), the token's GEMVs and the decode step with each shape's winner (greedy tokens recorded).
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26f.py OUT_DIR (gemv_v26f_h200.json). About two minutes.
(Its configuration moved into explore_gemv_v26d.configure after its record was made: the same steps, not re-run.)
"""
import explore_gemv_v26d as D

D.configure({(5120, 6144): [(4, 1, 3, 5, 12, 0), (4, 1, 3, 5, 12, 1), (4, 1, 3, 5, 12, 2)],      # (SR, RP, U, MINB, KST, E: 0, 1, 2 = EK)
             (5120, 17408): [(2, 2, 2, 5, 34, 0), (2, 2, 2, 5, 34, 2), (4, 1, 2, 5, 34, 2)],
             (14336, 5120): [(2, 2, 2, 7, 10, 0), (2, 2, 2, 7, 10, 2)],
             (16384, 5120): [(2, 2, 2, 8, 10, 0), (2, 2, 2, 8, 10, 2)]}, "v26f",
            ("gemv_v26f_h200", "v26 without E, with E and with EK (its first run of loads kept before the grid wait, by SASS) at gemv_v26d's "
             "grids (out_proj and down in one round, q|gate|k|v and qkv|z in 1.94): the v26d checks, alone with PDL interleaved with the "
             "engine's (two rounds), then the token's GEMVs and the decode step with each shape's winner.", "explore_gemv_v26f.py"))

if __name__ == "__main__":
    D.main()
