"""Chapter 06: the head v4 (lm_head_bf16_v4: v3 with NR row groups a warp, the row ids read once, one ring through the
groups), beside v3's configurations, all in one run: explore_head_v3.py's steps (its `explore`). v3 was faster than v2 alone
(667 vs 687 us) and not in the step (head_v3_h200.json); both stay near 83 % against a plain stream's 100 %; v4 asks
whether the per-block wait for the row ids and the short rings of 39 waves of blocks are what holds them there.
Usage on the H200: PYTHONPATH=. python3 results/explore_head_v4.py OUT_DIR (head_v4_h200.json). About 120 s."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qwen_engine import gemv as G
import explore_head_v3 as X

if __name__ == "__main__":
    X.explore(G.HEAD_V4_SWEEP + G.HEAD_V3_SWEEP[:1], G.HEAD_V4_KERNELS + G.HEAD_V3_KERNELS, "head_v4_h200",
          "The bf16 head v4 (NR row groups a warp) and v3 checked, against v2's logits, timed with PDL interleaved with v2 beside a "
          "plain stream, and in the decode step with the best.", "PYTHONPATH=. python3 results/explore_head_v4.py OUT_DIR",
          sys.argv[1] if len(sys.argv) > 1 else None)
