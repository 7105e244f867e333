"""Chapter 07, v16 (attn_fused_v10: v13 with AtRingW, whose 64-row stage is one bulk copy of 32 KB wherever it lies in one
page, instead of two copies of 16 KB). Chapter 09a's streaming probe read a token through rings of cp.async.bulk at
1.30-1.35x the floor with 16 KiB copies and 1.23x with 64 KiB ones; both of v13's passes fill their rings with 16 KiB
copies. The same rows land in the same places of the same slots, so v16 must be bit-identical to v13.
1. explore_attention_v5.py's steps against v13 (the engine's variant): bit identity at contexts 1..32K, M = 1 and 8, PDL
   off and on (outputs, appended rows, scores, statistics, partials), the criterion (recorded), limits; time at 1K..128K
   beside v13 and SDPA; 8 steps a graph at 32K. -> attention_v16_h200.json
2. the decode step (27B shape, synthetic, seed 0, PDL graph) with VARIANT = 13 and 16: greedy tokens equal, then ms a
   token at 1K and 32K, interleaved, three times. -> attention_v16_step_h200.json
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v16.py OUT_DIR   (about 2 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_attention_v5 as X

X.CUR, X.NEW = 13, [16]
if __name__ == "__main__":
    X.main_and_step(sys.argv[1] if len(sys.argv) > 1 else None, "attention_v16_h200",
                    "decode attention v16 (v13 with each 64-row stage that lies in one page copied by one 32 KB bulk copy instead of "
                    "two of 16 KB): bit identity vs v13 (outputs, appended rows, scores, statistics, partials; M = 1 and 8; PDL off "
                    "and on), the criterion, limits; time at 1K..128K beside v13 and SDPA; 8 steps per graph at 32K.",
                    "explore_attention_v16.py",
                    "The decode step (27B shape, synthetic, PDL graph) with attention v13 (the engine's) and v16 (v13 with a stage in "
                    "one page copied at once): ms per token at 1K and 32K, interleaved, three times; greedy tokens equal to v13's.")
