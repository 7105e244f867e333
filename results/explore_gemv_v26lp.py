"""Chapter 06, v26lp: the engine's v26 builds with their runs in a loop of RU runs a trip instead of all unrolled. Every
engine build unrolls its K steps completely: down's (K = 17,408, 34 steps) is 81 KB of machine code, its DRY build 8 KB,
the K = 5,120 shapes' 15-25 KB. An SM's warps at different places of an 81 KB kernel may wait on instruction fetch, which
the DRY builds would not; and down is the shape whose math costs most against its DRY build, one row pair a warp most of all
(gemv_dry26b_h200.json, gemv_probe26c_h200.json). Same operations, same order: bit-identical (checked). RU must be even (the
ring's two slots are indexed by the run's parity). Down at its engine configuration and with one row pair a warp, RU 2 and 4;
the other shapes at RU 2. Alone with PDL interleaved with the engine's (two rounds); the token's GEMVs and the decode step
with each shape's winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26lp.py OUT_DIR (gemv_v26lp_h200.json). About three minutes."""
import explore_gemv_v26d as D
V = D.V

CFGS = {(5120, 17408): [(2, 2, 4, 5, 34, 2, 2), (2, 2, 4, 5, 34, 2, 4), (4, 1, 2, 5, 34, 2, 2), (4, 1, 2, 5, 34, 2, 4),
                        (4, 1, 3, 5, 34, 2, 2), (4, 1, 3, 5, 34, 2, 4)],
        (14336, 5120): [(2, 2, 3, 7, 10, 2, 2)], (5120, 6144): [(4, 1, 3, 5, 12, 2, 2)],
        (34816, 5120): [(2, 1, 2, 8, 10, 0, 2)]}                          # (SR, RP, U, MINB, KST, E, RU)
D.configure(CFGS, "v26lp",
            ("gemv_v26lp_h200", "v26 with its runs in a loop of RU runs a trip (a kernel a fraction of the size) at each shape's "
             "engine configuration and, on down, with one row pair a warp: bit identity with the engine's kernel, alone with PDL "
             "interleaved with the engine's (two rounds), then the token's GEMVs and the decode step with each shape's winner.",
             "explore_gemv_v26lp.py"))
D.builds(D.family("gemv_fp8_v26lp"))

if __name__ == "__main__":
    D.main()
