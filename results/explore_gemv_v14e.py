"""Chapter 06, around v14d's winner. gemv_v14d_h200.json: gate|up with 4 row pairs a warp and no staged activation
(4, 1, 4, 2, XS 0) beat the engine's (4, 1, 2, 2, XS 1) in both repeats (44.29 / 44.30 us against 44.84 / 45.18) and the
token of GEMVs (7.104 ms against 7.214 / 7.199), bit-identical. Here: its neighbours on gate|up (2 and 8 warps, a 3-step
ring, at most 128 registers), and on the two split shapes v18 without the staged activation and with 4 pairs (v14b's
4-pair runs there were v14's global split, not v18's exchange). Through explore_util.flag_sweep, as v14d.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v14e.py OUT_DIR (gemv_v14e_h200.json). About 60 s.
(The two sweeps' frame moved into explore_util.v14_v18_sweeps after this record: the same steps, not re-run.)
"""
import explore_util

V14E_SWEEP = {(34816, 5120, 2): ((4, 1, 4, 2, 1, 1, 1, 0), (2, 1, 4, 2, 1, 1, 1, 0), (8, 1, 4, 2, 1, 1, 1, 0), (4, 1, 4, 3, 1, 1, 1, 0),
                                  (4, 1, 4, 2, 1, 4, 1, 0))}
V18E_SWEEP = {(5120, 6144, 1): ((4, 1, 2, 3, 1, 1, 2, 0), (4, 1, 4, 2, 1, 1, 2, 0), (4, 1, 4, 2, 1, 1, 2, 1)),
              (5120, 17408, 1): ((4, 1, 2, 3, 1, 1, 2, 0), (4, 1, 4, 2, 1, 1, 2, 0), (4, 1, 4, 2, 1, 1, 2, 1))}
explore_util.v14_v18_sweeps(
    "gemv_v14e_h200", "Around v14d's gate|up winner (v14, 4 row pairs, no staged activation): its neighbours on gate|up, and v18 without the "
    "staged activation or with 4 pairs on the split shapes: checked, bit-identity with the engine's kernel, timed alone with PDL interleaved with "
    "the engine's, the token's GEMVs with the winners (token: v14's sweep; token_v18: v18's).",
    "explore_gemv_v14e.py", V14E_SWEEP, V18E_SWEEP)
