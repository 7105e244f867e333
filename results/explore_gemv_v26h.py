"""Chapter 06, v26h: both of v26's slots asked for before the grid wait (EK2). With EK only the first run leaves before
the wait; the second is asked for right after it, and a warp that has computed the first meets the second's whole latency.
EK2 asks for both (the loop then skips its first refill; the ring and every sum unchanged), and the SASS audit (nvcc) finds
both runs' loads above the wait on each build here, gate|up's included (whose E and EK builds kept none or lost). At the
engine's configurations (gemv_v26g_h200.json): out_proj, q|gate|k|v, qkv|z, down, gate|up, each EK2 against the engine's
build: the v26d checks, alone with PDL interleaved with the engine's kernel (two rounds), the token's GEMVs and the decode
step with each shape's winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26h.py OUT_DIR (gemv_v26h_h200.json). About a minute.
(Its configuration moved into explore_gemv_v26d.configure after its record was made: the same steps, not re-run.)
"""
import explore_gemv_v26d as D

D.configure({(5120, 6144): [(4, 1, 3, 5, 12, 3)], (5120, 17408): [(2, 2, 4, 5, 34, 3)],      # (SR, RP, U, MINB, KST, E = 3: EK2)
             (14336, 5120): [(2, 2, 3, 7, 10, 3)], (16384, 5120): [(2, 2, 3, 8, 10, 3)], (34816, 5120): [(2, 1, 2, 8, 10, 3)]}, "v26h",
            ("gemv_v26h_h200", "v26 with both ring slots asked for before the grid wait (EK2) against the engine's builds (v26g's configurations): "
             "the v26d checks, alone with PDL interleaved with the engine's (two rounds), then the token's GEMVs and the decode step with "
             "each shape's winner.", "explore_gemv_v26h.py"))

if __name__ == "__main__":
    D.main()
