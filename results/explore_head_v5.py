"""Chapter 06: the head as a stream (lm_head_bf16_v5), and v4's configurations timed for real. The engine's head (v4,
(8, 1, 3, 8)) reads 92-94 % of the bandwidth where a plain stream of its 2.54 GB reads 99-100 %. v5 is that stream with
the dot products on the CUDA cores (gemv.cu). explore_head_warm.py meant to time nine v4 configurations, but `lm_head`
let the engine's choice (a tuple passed as S) override the configuration asked for, so it timed the engine's head nine
times (head_warm_h200.json is void; fixed in `lm_head`). This run: explore_head_v3.py's steps (check at M = 1 and 3,
logits against the engine's head, timed with PDL interleaved with it, twice, beside a plain stream; the decode step with
the best if it beats the engine's) over HEAD_V5_SWEEP, then head_warm's nine v4 configurations. Its first run
(head_v5_first_h200.json) found v5 at 34-66 %: each row id was read when its row began, a dependent round trip in the
load stream; v5 now stages a warp's row ids once. This (second) run: HEAD_V5_SWEEP only (the v4 configurations are in
the first run's record).
Usage on the H200: PYTHONPATH=. python3 results/explore_head_v5.py OUT_DIR (head_v5_h200.json). About 100 s."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qwen_engine import gemv as G
import explore_head_v3 as X

if __name__ == "__main__":
    X.explore(G.HEAD_V5_SWEEP, G.HEAD_V5_KERNELS, "head_v5_h200",
              "The bf16 head as a stream (lm_head_bf16_v5, the row ids staged once) checked, timed with PDL "
              "interleaved with the engine's head beside a plain stream, and in the decode step with the best.",
              "PYTHONPATH=. python3 results/explore_head_v5.py OUT_DIR", sys.argv[1] if len(sys.argv) > 1 else None)
