"""Chapter 06, v26j: gate|up in runs of 3, in the token and the step. gemv_v26i_h200.json timed runs of 3 alone at 43.7 / 44.2
us against the engine's 42.1 / 42.9, but each round timed the engine's kernel first and the candidates after it (the
explorations' order), and gemv_v26e_h200.json timed the engine's own gate|up build through the exploration's launcher at
44.6 / 45.5 us against 42.8 / 43.1 through the engine's, in one run: alone, later in a round reads slower on gate|up. Here
the engine's own build goes through the exploration's launcher too (the control), beside runs of 3, and the best of them
goes to the token of GEMVs and the decode step (interleaved, whole graphs) whatever its time alone (FORCE_AB).
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26j.py OUT_DIR (gemv_v26j_h200.json). About a minute."""
import explore_gemv_v26d as D

D.configure({(34816, 5120): [(2, 1, 3, 8, 10, 0), (2, 1, 2, 8, 10, 0)]},
            "v26j", ("gemv_v26j_h200", "gate|up on v26 in runs of 3 against the engine's runs of 2, the engine's build also through the "
                     "exploration's launcher: bit identity, alone with PDL (two rounds), then the best of them in the token's GEMVs and the "
                     "decode step whatever its time alone.", "explore_gemv_v26j.py"),
            awk=((2304, 5120, 2, 0),))
D.V.FORCE_AB = True

if __name__ == "__main__":
    D.main()
