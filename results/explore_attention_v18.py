"""Chapter 07, v18 and v19 (attn_fused_v12, attn_fused_v13: v13 with each KV group's own barriers and merge). v13's two grid
barriers make all 264 blocks count on one counter and wait for the slowest block of any group, though a group's pass 2
needs only its own group's statistics and its merge only its own partials; at 1K the barriers cost 1.4 + 1.0 us and the
merge 3.1 (attention_probe_h200.json), the merge's last round trip being the gate it reads after the barrier. v18 gives
each group its own counter (66 arrivals on each of four, 128 bytes apart), merges a group's outputs over its own 66 blocks
(the same sums in the same order) and reads the gates before the second barrier; v19 is v18 whose barrier polls without
sleeping. The same values in the same order: bit-identical to v13.
1. explore_attention_v5.py's steps against v13 (the engine's variant): bit identity at contexts 1..32K, M = 1 and 8, PDL
   off and on (outputs, appended rows, scores, statistics, partials), the criterion (recorded), limits; time at 1K..128K
   beside v13 and SDPA; 8 steps a graph at 32K. -> attention_v18_h200.json
2. the decode step (27B shape, synthetic, seed 0, PDL graph) with VARIANT = 13, 18 and 19: greedy tokens equal, then ms a
   token at 1K and 32K, interleaved, three times. -> attention_v18_step_h200.json
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v18.py OUT_DIR   (about 3 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_attention_v5 as X

X.CUR, X.NEW = 13, [18, 19]
if __name__ == "__main__":
    X.main_and_step(sys.argv[1] if len(sys.argv) > 1 else None, "attention_v18_h200",
                    "decode attention v18 and v19 (v13 with each KV group's own barriers and merge, the gates read before the "
                    "second barrier; v19 polling without sleep): bit identity vs v13 (outputs, appended rows, scores, statistics, "
                    "partials; M = 1 and 8; PDL off and on), the criterion, limits; time at 1K..128K beside v13 and SDPA; 8 steps per graph at 32K.",
                    "explore_attention_v18.py",
                    "The decode step (27B shape, synthetic, PDL graph) with attention v13 (the engine's), v18 and v19 (each KV group's "
                    "own barriers and merge): ms per token at 1K and 32K, interleaved, three times; greedy tokens equal to v13's.")
