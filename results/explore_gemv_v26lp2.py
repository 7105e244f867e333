"""Chapter 06, v26lp around its first win: down with one row pair a warp, runs of 2, its runs in a loop (88 % against the
engine's 83-85 %, gemv_v26lp_h200.json). Down: loops of 2, 8 and 16 runs a trip, 2- and 8-warp blocks, 6 blocks an SM, no
early loads; q|gate|k|v with one row pair a warp, looped (RU 2) and unrolled (RU 0, which is v26 itself). Bit identity with
the engine's kernel, alone with PDL interleaved with the engine's (two rounds), the token's GEMVs and the decode step with
each shape's winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26lp2.py OUT_DIR (gemv_v26lp2_h200.json). About three minutes."""
import explore_gemv_v26lp as L
D, V = L.D, L.V

CFGS = {(5120, 17408): [(4, 1, 2, 5, 34, 2, 2), (4, 1, 2, 5, 34, 2, 8), (4, 1, 2, 5, 34, 2, 16), (2, 1, 2, 10, 34, 2, 2),
                        (8, 1, 2, 3, 34, 2, 2), (4, 1, 2, 6, 34, 2, 2), (4, 1, 2, 5, 34, 0, 2), (4, 1, 1, 5, 34, 2, 2)],
        (14336, 5120): [(4, 1, 2, 7, 10, 2, 2), (4, 1, 2, 7, 10, 2, 0), (2, 1, 2, 14, 10, 2, 2), (2, 1, 2, 14, 10, 2, 0)]}
D.configure(CFGS, "v26lp2",
            ("gemv_v26lp2_h200", "v26lp around its first win (down, one row pair a warp, runs of 2, looped): other loop lengths, "
             "block sizes and blocks an SM on down; q|gate|k|v with one row pair a warp looped and unrolled: bit identity with the "
             "engine's kernel, alone with PDL interleaved with the engine's (two rounds), then the token's GEMVs and the decode "
             "step with each shape's winner.", "explore_gemv_v26lp2.py"))
D.builds(D.family("gemv_fp8_v26lp"))

if __name__ == "__main__":
    D.main()
