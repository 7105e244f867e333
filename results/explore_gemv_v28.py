"""Chapter 06: v28, v26 with a warp's pair of rows N / 2 apart on the plain projections (q|gate|k|v, qkv|z), as gate|up's
gate and up rows are (v26 won on gate|up only, gemv_v26b_h200.json). Every row's sum is v14's: each build is checked bit
for bit against the engine's kernel (and against v14 at small shapes whose halves are whole 128-row blocks), then timed
alone with PDL interleaved with the engine's kernel (two rounds), then the token's GEMVs and the decode step with each
shape's winner (explore_gemv_v26.py's machinery).
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v28.py OUT_DIR (gemv_v28_h200.json). About 40 seconds."""
import explore_gemv_v26 as V26
V = V26.V

V.SHAPES = [(16384, 5120, 0), (14336, 5120, 0)]
V.CFGS = {0: [(2, 1, 2, 8), (2, 2, 2, 8), (1, 1, 2, 16), (4, 1, 2, 4)]}
V.AWK = [(2304, 5120, 0, 0), (3840, 5120, 0, 0)]                     # N / 2 a whole number of 128-row scale blocks
V.name = lambda epi, c: f"gemv_fp8_v28<{c[0]}, {c[1]}, {epi}, {c[2]}, 10, {c[3]}>"
V.ALL = tuple(V.name(0, c) for c in V.CFGS[0])
V.LABEL = "v28"
V.RECORD = ("gemv_v28_h200", "v28 (v26 with a warp's pair of rows N / 2 apart, as gate|up's are) on q|gate|k|v and qkv|z: bit identity "
            "with the engine's kernel and with v14 at small shapes, registers and blocks an SM, alone with PDL interleaved with the "
            "engine's kernel (two rounds), then the token's GEMVs and the decode step with each shape's winner.", "explore_gemv_v28.py")

if __name__ == "__main__":
    V.main()
