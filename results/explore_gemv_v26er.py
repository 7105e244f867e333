"""Chapter 06, v26er: the engine's v26 builds with their refills issued step by step. gemv_dry26_h200.json timed each
engine build without its math (the same grid, registers and requests): 97-98 % of the bandwidth on q|gate|k|v, qkv|z and
gate|up where the builds with the math read 88-93 %, so on those shapes the work between the requests is what costs. In
v26 a warp asks for the run after next only at the top of the next run, after the whole run's math: while it computes, one
run is in flight. ER asks for each step of the run after next as soon as that step's math is done (the same loads, math and
sums: bit-identical). Each shape's engine build with ER and a neighbour (runs one shorter or longer); q|gate|k|v's
v26k winner (one warp of two pairs, 14 blocks an SM) plain and with ER; and, for the 5,120-row shapes, whose DRY builds
read only 85-90 % in grids of one round (no later blocks to fill the SMs that finish first), grids of 1.94 rounds (one pair
a warp, 10 warps an SM) plain and with ER. Every build is checked bit for bit against the engine's kernel (and the first
three of q|gate|k|v against v14 at an awkward shape), then timed alone with PDL interleaved with the engine's kernel (two
rounds), then the token's GEMVs and the decode step with each shape's winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26er.py OUT_DIR (gemv_v26er_h200.json). About three minutes.
(Its builds' names moved into explore_gemv_v26d.builds after its record was made: the same steps, not re-run.)"""
import explore_gemv_v26d as D
V = D.V

CFGS = {(14336, 5120): [(2, 2, 3, 7, 10, 2, 1), (2, 2, 2, 7, 10, 2, 1), (1, 2, 3, 14, 10, 2, 1), (1, 2, 3, 14, 10, 2, 0)],   # (SR, RP, U, MINB, KST, E, ER)
        (16384, 5120): [(2, 2, 3, 8, 10, 2, 1), (2, 2, 2, 8, 10, 2, 1)],
        (5120, 6144): [(4, 1, 3, 5, 12, 2, 1), (4, 1, 4, 5, 12, 2, 1), (2, 1, 3, 5, 12, 2, 0), (2, 1, 3, 5, 12, 2, 1), (1, 1, 3, 10, 12, 2, 0)],
        (34816, 5120): [(2, 1, 2, 8, 10, 0, 1), (2, 1, 3, 8, 10, 0, 1)],
        (5120, 17408): [(2, 2, 4, 5, 34, 2, 1), (2, 2, 3, 5, 34, 2, 1), (2, 1, 4, 5, 34, 2, 0), (2, 1, 4, 5, 34, 2, 1), (1, 1, 4, 10, 34, 2, 0)]}
D.configure(CFGS, "v26er",
            ("gemv_v26er_h200", "v26 with its refills issued step by step (ER: each step's registers asked for the run after next once its "
             "math is done) on every shape, beside each engine build a neighbour, q|gate|k|v's v26k winner, and grids of 1.94 rounds on the "
             "5,120-row shapes: bit identity with the engine's kernel, alone with PDL interleaved with the engine's (two rounds), then the "
             "token's GEMVs and the decode step with each shape's winner.", "explore_gemv_v26er.py"))

E_ARGS = {0: "", 1: ", true", 2: ", true, true"}
D.builds(lambda epi, c: f"gemv_fp8_v26{'er' if len(c) > 6 and c[6] else ''}<{c[0]}, {c[1]}, {epi}, {c[2]}, {c[4]}, {c[3]}{E_ARGS[c[5]]}>")

if __name__ == "__main__":
    D.main()
