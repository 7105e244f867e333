"""Chapter 07, v10 to v12 (attn_fused_v4, v5, v6: v6 with row 0's values asked of L2 by cp.async.bulk.prefetch.L2 ahead of
pass 2; v10 after pass 1 up to 256 KiB of a partition, v11 the same up to 192 KiB, v12 right after the grid wait):
1. explore_attention_v5.py's steps against v6 (the engine's variant): bit identity at contexts 1..32K, M = 1 and 8,
   PDL off and on (outputs, appended rows, scores, statistics, partials), the criterion (recorded, not required: the
   outputs are v6's), limits; time at 1K..128K beside v6 and SDPA; 8 steps a graph at 32K. -> attention_v10_h200.json
2. the decode step (27B shape, synthetic, seed 0, PDL graph) with VARIANT = 6, 10, 11, 12: the first 24 greedy tokens of
   each equal to v6's, then ms a token at 1K and 32K, interleaved, three times. -> attention_v10_step_h200.json
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v10.py OUT_DIR   (about 6 min)
(The steps moved into explore_attention_v5.main_and_step after the records were made: the same steps, not re-run.)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_attention_v5 as X

X.CUR, X.NEW = 6, [10, 11, 12]
if __name__ == "__main__":
    X.main_and_step(sys.argv[1] if len(sys.argv) > 1 else None, "attention_v10_h200",
                    "decode attention v10-v12 (v6 with row 0's values asked of L2 ahead of pass 2: after pass 1 up to 256 or 192 KiB "
                    "of a partition, or after the grid wait up to 256 KiB): bit identity vs v6 (outputs, appended rows, scores, statistics, "
                    "partials; M = 1 and 8; PDL off and on), the criterion, limits; time at 1K..128K beside v6 and SDPA; 8 steps per graph at 32K.",
                    "explore_attention_v10.py",
                    "The decode step (27B shape, synthetic, PDL graph) with attention v6 (the engine's) and v10-v12 (v6 with the values "
                    "asked of L2 ahead of pass 2): ms per token at 1K and 32K, interleaved, three times; greedy tokens equal to v6's.")
