"""Chapter 06, v26i: gate|up in longer runs. The engine's gate|up (v26, one gate/up pair a warp, runs of 2 steps, 8 blocks an
SM, no early loads: 91.7 %, its plain stream 95.5 %) was swept at runs of 2 and 5 only (5 read 89 %: gemv_v26b_h200.json);
v26 now takes runs that do not divide K's 10 steps (3: 3 + 3 + 3 + 1; 4: 4 + 4 + 2), which the other shapes gained from
(gemv_v26g_h200.json). Runs of 3 and 4 at the engine's 2-warp blocks (128 registers, no spill: nvcc -Xptxas -v), runs of 3
in 4-warp and 1-warp blocks, and runs of 3 at 7 blocks an SM; without early loads (E and EK2 lost on gate|up). Bit identity
with the engine's kernel and with v14 on an awkward SwiGLU shape, alone with PDL interleaved with the engine's (two rounds),
the token's GEMVs and the decode step with the winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26i.py OUT_DIR (gemv_v26i_h200.json). About a minute."""
import explore_gemv_v26d as D

D.configure({(34816, 5120): [(2, 1, 3, 8, 10, 0), (2, 1, 4, 8, 10, 0), (4, 1, 3, 4, 10, 0), (1, 1, 3, 16, 10, 0), (2, 1, 3, 7, 10, 0)]},
            "v26i", ("gemv_v26i_h200", "gate|up on v26 in runs of 3 and 4 steps (the last run short) against the engine's runs of 2: bit "
                     "identity with the engine's kernel and with v14 on an awkward SwiGLU shape, alone with PDL interleaved with the engine's "
                     "(two rounds), then the token's GEMVs and the decode step with the winner.", "explore_gemv_v26i.py"),
            awk=((2304, 5120, 2, 0),))

if __name__ == "__main__":
    D.main()
