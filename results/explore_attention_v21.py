"""Chapter 07, v21 (attn_fused_v15: v18 whose two barriers add with release semantics and poll with acquire reads, in place of
two sequentially consistent fences around a relaxed add and volatile reads, and no sleep). The phase marks of v13 and v18
(attention_probe18_h200.json) put each barrier 1.4-2.1 us after its group's last arrival at every context, a group barrier no
faster than the grid's: about two round trips to L2 plus what the fences cost. The same values in the same order:
bit-identical to v18 (and v13).
1. explore_attention_v5.py's steps against v18: bit identity at contexts 1..32K, M = 1 and 8, PDL off and on (outputs,
   appended rows, scores, statistics, partials), the criterion (recorded), limits; time at 1K..128K beside v18 and SDPA;
   8 steps a graph at 32K. -> attention_v21_h200.json
2. the decode step (27B shape, synthetic, seed 0, PDL graph) with VARIANT = 18 and 21: greedy tokens equal, then ms a token
   at 1K and 32K, interleaved, eight times. -> attention_v21_step_h200.json
(Its record was made with step_plans patched to eight rounds; main_and_step takes reps since: the same run.)
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v21.py OUT_DIR   (about 2 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_attention_v5 as X

X.CUR, X.NEW = 18, [21]
if __name__ == "__main__":
    X.main_and_step(sys.argv[1] if len(sys.argv) > 1 else None, "attention_v21_h200",
                    "decode attention v21 (v18 with release/acquire barriers, no sleep): bit identity vs v18 (outputs, appended rows, scores, statistics, partials; M = 1 and 8; PDL "
                    "off and on), the criterion, limits; time at 1K..128K beside v18 and SDPA; 8 steps per graph at 32K.",
                    "explore_attention_v21.py",
                    "The decode step (27B shape, synthetic, PDL graph) with attention v18 (the engine's) and v21 (its barriers by "
                    "release and acquire): ms per token at 1K and 32K, interleaved, eight times; greedy tokens equal to v18's.", reps=8)
