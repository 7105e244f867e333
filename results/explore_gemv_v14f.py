"""Chapter 06, v14's block sizes. gate|up's new configuration (gateup_step_h200.json) has 2-warp blocks, a shape the
sweeps had hardly tried (v14's sweep: 4- and 8-warp blocks, and 2-warp ones only with a K split inside the block). Here
every shape gets 1-, 2- and 8-warp blocks around its engine configuration, with and without the staged activation (XS);
the two split shapes through v18 (the engine's split end). Through explore_util.flag_sweep, as v14d and v14e.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v14f.py OUT_DIR (gemv_v14f_h200.json). About 60 s.
(The two sweeps' frame moved into explore_util.v14_v18_sweeps after this record: the same steps, not re-run.)
"""
import explore_util

V14F_SWEEP = {(14336, 5120, 0): ((2, 1, 2, 2, 1, 1, 1, 1), (2, 1, 2, 2, 1, 1, 1, 0), (4, 1, 2, 2, 1, 1, 1, 0), (1, 1, 2, 2, 1, 1, 1, 1),
                                  (8, 1, 2, 2, 1, 1, 1, 1)),
              (16384, 5120, 0): ((2, 1, 2, 3, 1, 1, 1, 0), (2, 1, 2, 3, 1, 1, 1, 1), (4, 1, 2, 2, 1, 1, 1, 0), (1, 1, 2, 3, 1, 1, 1, 0),
                                  (8, 1, 2, 3, 1, 1, 1, 0)),
              (34816, 5120, 2): ((1, 1, 4, 2, 1, 1, 1, 0), (2, 1, 2, 2, 1, 1, 1, 0), (2, 1, 2, 2, 1, 1, 1, 1), (2, 1, 4, 2, 1, 1, 1, 1))}
V18F_SWEEP = {(5120, 6144, 1): ((2, 1, 2, 3, 1, 1, 2, 1), (8, 1, 2, 3, 1, 1, 2, 1), (2, 1, 2, 2, 1, 1, 2, 1), (1, 1, 2, 3, 1, 1, 2, 1)),
              (5120, 17408, 1): ((2, 1, 2, 3, 1, 1, 2, 1), (8, 1, 2, 3, 1, 1, 2, 1), (2, 1, 2, 2, 1, 1, 2, 1), (1, 1, 2, 3, 1, 1, 2, 1))}
explore_util.v14_v18_sweeps(
    "gemv_v14f_h200", "v14's block sizes: 1-, 2- and 8-warp blocks around each shape's engine configuration, with and without the staged "
    "activation (v18 on the split shapes): checked, bit-identity with the engine's kernel, timed alone with PDL interleaved with the engine's, "
    "the token's GEMVs with the winners (token: v14's sweep; token_v18: v18's).",
    "explore_gemv_v14f.py", V14F_SWEEP, V18F_SWEEP)
