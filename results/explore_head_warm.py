"""Chapter 06: the bf16 head's configurations again, with the timing method's 50 ms warm-up (appendix 90). Timed that way
the engine's head (lm_head_bf16_v4 (8, 1, 3, 8)) reads 594 us, 94 % of the run's bandwidth (gemv_standing_h200.json),
where head_v4_h200.json had 655 us, and the goal is 95 %. This run: explore_head_v3.py's steps (check at M = 1 and 3,
logits against the engine's head, timed with PDL interleaved with it, twice, beside a plain stream; the decode step with
the best if it beats the engine's) over head_v4_h200.json's five v4 configurations and four more (NR 16; a 2-step ring;
4 steps with NR 16; 2 pairs a warp with NR 8).
Usage on the H200: PYTHONPATH=. python3 results/explore_head_warm.py OUT_DIR (head_warm_h200.json). About 150 s."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qwen_engine import gemv as G
import explore_head_v3 as X

EXTRA = ((8, 1, 3, 16), (8, 1, 2, 8), (8, 1, 4, 16), (4, 2, 2, 8))
KERNELS = tuple(f"lm_head_bf16_v4<{sr}, {rp}, {mt}, {d if mt == 1 else 2}, {nr}>" for sr, rp, d, nr in EXTRA for mt in (1, 8))

if __name__ == "__main__":
    X.explore(G.HEAD_V4_SWEEP + EXTRA, G.HEAD_V4_KERNELS + KERNELS, "head_warm_h200",
              "The bf16 head v4's configurations checked, timed with PDL (with the 50 ms warm-up) interleaved with the engine's "
              "head beside a plain stream, and in the decode step with the best.", "PYTHONPATH=. python3 results/explore_head_warm.py OUT_DIR",
              sys.argv[1] if len(sys.argv) > 1 else None)
