"""Chapter 06, v26h: both of v26's slots asked for before the grid wait (EK2). With EK only the first run leaves before
the wait; the second is asked for right after it, and a warp that has computed the first meets the second's whole latency.
EK2 asks for both (the loop then skips its first refill; the ring and every sum unchanged), and the SASS audit (nvcc) finds
both runs' loads above the wait on each build here, gate|up's included (whose E and EK builds kept none or lost). At the
engine's configurations (gemv_v26g_h200.json): out_proj, q|gate|k|v, qkv|z, down, gate|up, each EK2 against the engine's
build: the v26d checks, alone with PDL interleaved with the engine's kernel (two rounds), the token's GEMVs and the decode
step with each shape's winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26h.py OUT_DIR (gemv_v26h_h200.json). About a minute."""
import explore_gemv_v26f as F
D, V = F.D, F.V

D.CFGS.clear()
D.CFGS.update({(5120, 6144): [(4, 1, 3, 5, 12, 3)], (5120, 17408): [(2, 2, 4, 5, 34, 3)],      # (SR, RP, U, MINB, KST, E = 3: EK2)
               (14336, 5120): [(2, 2, 3, 7, 10, 3)], (16384, 5120): [(2, 2, 3, 8, 10, 3)], (34816, 5120): [(2, 1, 2, 8, 10, 3)]})
F._EPI[(34816, 5120)] = 2
V.SHAPES = [(5120, 6144, 1), (5120, 17408, 1), (14336, 5120, 0), (16384, 5120, 0), (34816, 5120, 2)]
V.CFGS = {1: [], 0: D.CFGS[(14336, 5120)] + D.CFGS[(16384, 5120)], 2: D.CFGS[(34816, 5120)]}
V.name = lambda epi, c: f"gemv_fp8_v26<{c[0]}, {c[1]}, {epi}, {c[2]}, {c[4]}, {c[3]}" + {0: ">", 1: ", true>", 2: ", true, true>", 3: ", true, true, true>"}[c[5]]
V.ALL = tuple(dict.fromkeys([V.name(e, c) for (N, K), cs in D.CFGS.items() for c in cs for e in ((0, 1) if (N, K) in D.B.SPLIT else (F._EPI[(N, K)],))]))
V.kern = lambda epi, c: V.get_kernel("gemv", V.name(epi, c), together=V.ALL)
V.LABEL = "v26h"
V.RECORD = ("gemv_v26h_h200", "v26 with both ring slots asked for before the grid wait (EK2) against the engine's builds (v26g's configurations): "
            "the v26d checks, alone with PDL interleaved with the engine's (two rounds), then the token's GEMVs and the decode step with "
            "each shape's winner.", "explore_gemv_v26h.py")

if __name__ == "__main__":
    V.main()
