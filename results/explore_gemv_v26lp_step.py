"""Chapter 06, v26lp: the decode step with down at v26lp (one row pair a warp, runs of 2, looped 2 runs a trip; 86-88 %
alone against the engine's 83-85 %, the token's GEMVs 0.09 ms faster: gemv_v26lp2_h200.json) against the engine's, five
interleaved repeats (the three of gemv_v26lp/lp2 overlapped). Bit identity, alone (two rounds) and the token as the other
v26 scripts do.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26lp_step.py OUT_DIR (gemv_v26lp_step_h200.json). About two minutes."""
import functools
import explore_gemv_v26lp as L
import explore_util
D, V = L.D, L.V

D.configure({(5120, 17408): [(4, 1, 2, 5, 34, 2, 2)]}, "v26lp",
            ("gemv_v26lp_step_h200", "The decode step with down at v26lp (one row pair a warp, runs of 2, 2 runs a loop trip) against "
             "the engine's, five interleaved repeats; bit identity with the engine's kernel, alone with PDL interleaved (two rounds) "
             "and the token's GEMVs as in the other v26 scripts.", "explore_gemv_v26lp_step.py"), awk=())
D.builds(D.family("gemv_fp8_v26lp"))
V.FORCE_AB = True
explore_util.step_ab = functools.partial(explore_util.step_ab, reps=5)

if __name__ == "__main__":
    D.main()
