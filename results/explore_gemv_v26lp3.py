"""Chapter 06, v26lp on the other shapes at their own row pairs. Down's win (gemv_v26lp2_h200.json) followed the kernel's size:
one row pair a warp in runs of 2 reads 87-88 % in loops of 2 or 4 runs (7.9 / 14.2 KB of machine code, nvcc 13 sm_90a),
84 % in loops of 8 (25 KB), 79 % in loops of 16 (48 KB). The engine's q|gate|k|v and qkv|z builds are 25-26 KB (with 16-24
bytes of spills), out_proj's 17 KB; in runs of 2 looped 2 runs a trip they are 12.8 KB (no spill) and 7.8 KB. Here those,
with the same row pairs and blocks as the engine's, and their unrolled controls (RU 0). Bit identity with the engine's
kernel, alone with PDL interleaved with the engine's (two rounds), the token's GEMVs and the decode step with the winners.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26lp3.py OUT_DIR (gemv_v26lp3_h200.json). About three minutes."""
import explore_gemv_v26lp as L
D, V = L.D, L.V

CFGS = {(14336, 5120): [(2, 2, 2, 7, 10, 2, 2), (2, 2, 2, 7, 10, 2, 0)], (16384, 5120): [(2, 2, 2, 8, 10, 2, 2), (2, 2, 2, 8, 10, 2, 0)],
        (5120, 6144): [(4, 1, 2, 5, 12, 2, 2), (4, 1, 2, 5, 12, 2, 0)]}            # (SR, RP, U, MINB, KST, E, RU)
D.configure(CFGS, "v26lp3",
            ("gemv_v26lp3_h200", "v26lp on q|gate|k|v, qkv|z and out_proj at their engine row pairs and blocks, runs of 2 looped 2 "
             "runs a trip (12.8 / 7.8 KB of machine code against 17-26 KB) and unrolled: bit identity with the engine's kernel, alone "
             "with PDL interleaved with the engine's (two rounds), then the token's GEMVs and the decode step with the winners.",
             "explore_gemv_v26lp3.py"))
D.builds(D.family("gemv_fp8_v26lp"))

if __name__ == "__main__":
    D.main()
