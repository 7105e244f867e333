"""Chapter 07, v14 (attn_fused_v8: v13 with pass 1's EARLY_NEW: the blocks that write the step's new keys copy the older
keys of their partition first, and partition 0's appends come after its first copies). results/explore_attention_laggards.py
found those two kinds of block finishing pass 1 last at 1K and 4K (5.1-5.4 us against a median of 3.8 at 1K), and the
first barrier waits for the last. v14 changes when copies are issued, not what is computed:
1. explore_attention_v5.py's steps against v13 (the engine's variant): bit identity at contexts 1..32K, M = 1 and 8, PDL
   off and on (outputs, appended rows, scores, statistics, partials), the criterion (recorded), limits; time at 1K..128K
   beside v13 and SDPA; 8 steps a graph at 32K. -> attention_v14_h200.json
2. the decode step (27B shape, synthetic, seed 0, PDL graph) with VARIANT = 13 and 14: greedy tokens equal, then ms a
   token at 1K and 32K, interleaved, three times. -> attention_v14_step_h200.json
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v14.py OUT_DIR   (about 2 min)
(The steps moved into explore_attention_v5.main_and_step after the records were made: the same steps, not re-run.)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_attention_v5 as X

X.CUR, X.NEW = 13, [14]
if __name__ == "__main__":
    X.main_and_step(sys.argv[1] if len(sys.argv) > 1 else None, "attention_v14_h200",
                    "decode attention v14 (v13 with pass 1's early copies of the older keys in the blocks that write new keys, and "
                    "partition 0's appends after its first copies): bit identity vs v13 (outputs, appended rows, scores, statistics, "
                    "partials; M = 1 and 8; PDL off and on), the criterion, limits; time at 1K..128K beside v13 and SDPA; 8 steps per graph at 32K.",
                    "explore_attention_v14.py",
                    "The decode step (27B shape, synthetic, PDL graph) with attention v13 (the engine's) and v14 (v13 with the older "
                    "keys' copies first): ms per token at 1K and 32K, interleaved, three times; greedy tokens equal to v13's.")
