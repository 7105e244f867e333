"""Chapter 06: the head as a stream, three more ways (lm_head_bf16_v6, v7, v8). v5 (the stream with CUDA-core math) read
36-68 % of the bandwidth, in proportion to its warps an SM (head_v5_h200.json): a warp streamed as if one load were in
flight. v6 takes every branch out of its stream; v7 issues a row's loads together and then its math (the stream probe's
shape); v8 keeps the ring in shared memory, filled by cp.async. nvcc's machine code of v6 and v7 (read before this run)
shows ptxas moving their loads next to their uses, so v8 is the one expected to stream. explore_head_v3.py's steps
(check at M = 1 and 3, logits against the engine's head, timed with PDL interleaved with it, twice, beside a plain
stream; the decode step with the best if it beats the engine's) over HEAD_V6_SWEEP, HEAD_V7_SWEEP and HEAD_V8_SWEEP.
Usage on the H200: PYTHONPATH=. python3 results/explore_head_v6.py OUT_DIR (head_v6_h200.json). About 150 s."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qwen_engine import gemv as G
import explore_head_v3 as X

if __name__ == "__main__":
    X.explore(G.HEAD_V6_SWEEP + G.HEAD_V7_SWEEP + G.HEAD_V8_SWEEP, G.HEAD_V6_KERNELS + G.HEAD_V7_KERNELS + G.HEAD_V8_KERNELS, "head_v6_h200",
              "The bf16 head as a stream, v6 (no branches in the stream), v7 (a row's loads, then its math) and v8 (a shared-memory ring "
              "filled by cp.async): checked, timed with PDL interleaved with the engine's head beside a plain stream, and in the decode step "
              "with the best.", "PYTHONPATH=. python3 results/explore_head_v6.py OUT_DIR", sys.argv[1] if len(sys.argv) > 1 else None)
