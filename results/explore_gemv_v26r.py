"""Chapter 06, v26r: the engine's v26 builds under a register budget. ptxas holds q|gate|k|v's build (2 warps, 7 blocks an
SM by __launch_bounds__) to 128 registers with 24 bytes spilled, though 144 keep 7 blocks, and down's (5 blocks) to 168 with
12 spilled, though 200 keep 5: it aims at one block an SM more than asked. gemv_fp8_v26r takes __maxnreg__ instead, so the
schedule may hold more loads in flight and spill nothing (nvcc -Xptxas -v: 144 and 200 registers, no spill). Bit-identical
(every build is checked against the engine's kernel bit for bit); alone with PDL interleaved with the engine's kernel (two
rounds); the token's GEMVs and the decode step with each shape's winner. Measured: the premise was wrong. At 144 and 200
registers the occupancy calculator gives 6 and 4 blocks an SM, not 7 and 5 (a warp's registers come from one of the SM's
four 16K-register quarters), so ptxas's caps were the ones that keep the blocks; every build lost (chapter 06).
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26r.py OUT_DIR (gemv_v26r_h200.json). About two minutes.
(Its builds' names moved into explore_gemv_v26d.builds after its record was made: the same steps, not re-run.)"""
import explore_gemv_v26d as D
V = D.V

CFGS = {(14336, 5120): [(2, 2, 3, 7, 10, 2, 144), (1, 2, 3, 14, 10, 2, 144), (2, 2, 4, 7, 10, 2, 144)],   # (SR, RP, U, blocks an SM, KST, E, MAXR)
        (5120, 17408): [(2, 2, 4, 5, 34, 2, 200), (2, 2, 5, 5, 34, 2, 200), (2, 2, 6, 5, 34, 2, 200)]}
D.configure(CFGS, "v26r",
            ("gemv_v26r_h200", "v26 under a register budget (__maxnreg__: 144 on q|gate|k|v at 7 blocks an SM, 200 on down at 5) instead of "
             "a blocks-an-SM bound: bit identity with the engine's kernel, alone with PDL interleaved with the engine's (two rounds), then "
             "the token's GEMVs and the decode step with each shape's winner.", "explore_gemv_v26r.py"))
E_ARGS = {0: "", 1: ", true", 2: ", true, true"}
D.builds(lambda epi, c: f"gemv_fp8_v26r<{c[0]}, {c[1]}, {epi}, {c[2]}, {c[4]}, {c[6]}{E_ARGS[c[5]]}>")

if __name__ == "__main__":
    D.main()
