"""Chapter 07, v15 (attn_fused_v9: v13 with pass 1 v6, the keys loaded straight into registers, two 64-key stages in
flight a warp, instead of through the ring of bulk copies; the ring serves pass 2 only). Chapter 09a's streaming probe
read bytes into registers at 100 % of the bandwidth and through rings of cp.async.bulk at 72-79 %; v6's probe has pass 1
reading its keys at ~70-75 % at 32K. v15 changes where the key fragments come from, not what is computed: the same
fragments, mmas, roundings and stores as v13, so it must be bit-identical to v13; a new key of this launch comes from the
copy its block formed in shared memory (no round trip through memory, which v14 found the blocks holding new keys wait on).
1. explore_attention_v5.py's steps against v13 (the engine's variant): bit identity at contexts 1..32K, M = 1 and 8, PDL
   off and on (outputs, appended rows, scores, statistics, partials), the criterion (recorded), limits; time at 1K..128K
   beside v13 and SDPA; 8 steps a graph at 32K. -> attention_v15_h200.json
2. the decode step (27B shape, synthetic, seed 0, PDL graph) with VARIANT = 13 and 15: greedy tokens equal, then ms a
   token at 1K and 32K, interleaved, three times. -> attention_v15_step_h200.json
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v15.py OUT_DIR   (about 2 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_attention_v5 as X

X.CUR, X.NEW = 13, [15]
if __name__ == "__main__":
    X.main_and_step(sys.argv[1] if len(sys.argv) > 1 else None, "attention_v15_h200",
                    "decode attention v15 (v13 with pass 1's keys loaded straight into registers, two stages in flight a warp, "
                    "instead of through the ring of bulk copies): bit identity vs v13 (outputs, appended rows, scores, statistics, "
                    "partials; M = 1 and 8; PDL off and on), the criterion, limits; time at 1K..128K beside v13 and SDPA; 8 steps per graph at 32K.",
                    "explore_attention_v15.py",
                    "The decode step (27B shape, synthetic, PDL graph) with attention v13 (the engine's) and v15 (v13 with pass 1's keys "
                    "straight into registers): ms per token at 1K and 32K, interleaved, three times; greedy tokens equal to v13's.")
