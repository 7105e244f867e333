"""Chapter 06, v26ns: v26lp with NS slots of a run each instead of two, so NS - 1 runs are in flight while one is computed.
Every deeper ring lost before (v14's D, v20 deep, v25: chapter 06's chart), but in unrolled bodies, where ptxas spreads each
refill among the mmas (v26lp's reading); in a loop the refills leave together. Down (the engine's v26lp build: 88 registers)
with 3 slots of runs of 2 (96 registers, loops of 3 or 6 runs) and 3 or 4 slots of single steps; gate|up with 3 slots of
runs of 2, looped (3 runs a trip) and unrolled. Configurations (SR, RP, U, MINB, KST, E, RU, NS). Bit identity with the
engine's kernel, alone with PDL interleaved with it (two rounds), the token and the step with the winners.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26ns.py OUT_DIR (gemv_v26ns_h200.json). About two minutes."""
import explore_gemv_v26lp as L
D, V = L.D, L.V

CFGS = {(5120, 17408): [(4, 1, 2, 5, 34, 2, 3, 3), (4, 1, 2, 5, 34, 2, 6, 3), (4, 1, 1, 5, 34, 2, 3, 3), (4, 1, 1, 5, 34, 2, 4, 4)],
        (34816, 5120): [(2, 1, 2, 8, 10, 0, 3, 3), (2, 1, 2, 8, 10, 0, 0, 3)]}
D.configure(CFGS, "v26ns",
            ("gemv_v26ns_h200", "v26 with three or four slots of a run each (v26ns), looped or unrolled, on down and gate|up: bit identity "
             "with the engine's kernel, alone with PDL interleaved with it (two rounds), then the token's GEMVs and the decode step "
             "with the winners.", "explore_gemv_v26ns.py"), awk=())
D.builds(D.family("gemv_fp8_v26ns"))

if __name__ == "__main__":
    D.main()
