"""Chapter 06, v26lp: down's speed against the size of its machine code, in one run. The engine's down (since
gemv_v26lp_step_h200) is one row pair a warp in runs of 2, looped 2 runs a trip; here the same build at every loop length
(RU 0: all 17 runs unrolled, which is v26; 2, 4, 8, 16) and in runs of 4 (RU 0 and 2). Only the code's size differs
within each row of builds (results/gemv_sizes.py -> gemv_sizes_sm90a.json). Bit identity with the engine's kernel and
alone with PDL interleaved with it (two rounds).
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26lp4.py OUT_DIR (gemv_v26lp4_h200.json). About a minute."""
import explore_gemv_v26lp as L
D, V = L.D, L.V

CFGS = {(5120, 17408): [(4, 1, 2, 5, 34, 2, ru) for ru in (0, 2, 4, 8, 16)] + [(4, 1, 4, 5, 34, 2, 0), (4, 1, 4, 5, 34, 2, 2)]}
D.configure(CFGS, "v26lp4",
            ("gemv_v26lp4_h200", "down with one row pair a warp at every loop length (runs of 2: RU 0 = unrolled, 2, 4, 8, 16; runs of "
             "4: RU 0, 2): bit identity with the engine's kernel and alone with PDL interleaved with it (two rounds).",
             "explore_gemv_v26lp4.py"), awk=())
D.builds(D.family("gemv_fp8_v26lp"))

if __name__ == "__main__":
    D.main()
