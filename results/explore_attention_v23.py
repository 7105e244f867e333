"""Chapter 07, v23 (attn_fused_v17: v18 whose blocks drop from L2, without a write-back, the scratch lines nothing reads again
before the next launch writes them: discard.global.L2 on the partials once the merge has read them, and on the interior
lines of a partition's scores once pass 2 has). Chapter 01 priced a burst of writes between long reads at five to six
times its bytes (write_cost_h200.json); the partials are 1.6 MB a layer at every context (P x Hq x D floats, written by
pass 2, read once by the merge) and the scores 1.5 MB a layer at 32K, and each attention layer's are evicted, dirty, by
the ~1 GB of weights streamed before the next one. The merge reads whole lines (chunks of 32 dims, one reader a line);
its sums are v18's: bit-identical outputs (scores and partials are undefined after the launch, so their identity is
recorded, not required).
1. explore_attention_v5.py's steps against v18: bit identity at contexts 1..32K, M = 1 and 8, PDL off and on, the criterion
   (recorded), limits; time at 1K..128K beside v18 and SDPA; 8 steps a graph at 32K. -> attention_v23_h200.json
2. the decode step (27B shape, synthetic, seed 0, PDL graph) with VARIANT = 18 and 23: greedy tokens equal, then ms a token
   at 1K and 32K, interleaved, eight times. -> attention_v23_step_h200.json
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v23.py OUT_DIR   (about 2 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_attention_v5 as X

X.CUR, X.NEW = 18, [23]
if __name__ == "__main__":
    X.main_and_step(sys.argv[1] if len(sys.argv) > 1 else None, "attention_v23_h200",
                    "decode attention v23 (v18 with its dead scratch, the merged partials and the read scores, dropped from L2 without a "
                    "write-back): bit identity vs v18 (outputs, appended rows; scores, statistics, partials recorded; M = 1 and 8; PDL off "
                    "and on), the criterion, limits; time at 1K..128K beside v18 and SDPA; 8 steps per graph at 32K.",
                    "explore_attention_v23.py",
                    "The decode step (27B shape, synthetic, PDL graph) with attention v18 (the engine's) and v23 (its dead scratch "
                    "dropped from L2): ms per token at 1K and 32K, interleaved, eight times; greedy tokens equal to v18's.", reps=8)
