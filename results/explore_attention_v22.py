"""Chapter 07, v22 (attn_fused_v16: v18 with pass 1's stages asked for and consumed in a rotated order, stage j of a row being
the partition's stage (j + blockIdx.x + 3 blockIdx.y) % nst). Every block of v18 streams its partition from its first stage
to its last, so all 264 ask for the same offset of their partitions at once; the phase marks (attention_probe18_h200.json)
found v18's pass 2 faster at 128K than v13's when its groups start apart, and pass 1 streams at ~73 % of the bandwidth at 32K
where pass 2 reaches ~90 %. Pass 1's values do not depend on the order: bit-identical to v18 (and v13).
1. explore_attention_v5.py's steps against v18: bit identity at contexts 1..32K, M = 1 and 8, PDL off and on, the criterion
   (recorded), limits; time at 1K..128K beside v18 and SDPA; 8 steps a graph at 32K. -> attention_v22_h200.json
2. the decode step (27B shape, synthetic, seed 0, PDL graph) with VARIANT = 18 and 22: greedy tokens equal, then ms a token
   at 1K and 32K, interleaved, eight times. -> attention_v22_step_h200.json
(Its record was made with step_plans patched to eight rounds; main_and_step takes reps since: the same run.)
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v22.py OUT_DIR   (about 2 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_attention_v5 as X

X.CUR, X.NEW = 18, [22]
if __name__ == "__main__":
    X.main_and_step(sys.argv[1] if len(sys.argv) > 1 else None, "attention_v22_h200",
                    "decode attention v22 (v18 with pass 1's stages in a rotated order): bit identity vs v18 (outputs, appended rows, scores, statistics, partials; M = 1 and 8; PDL "
                    "off and on), the criterion, limits; time at 1K..128K beside v18 and SDPA; 8 steps per graph at 32K.",
                    "explore_attention_v22.py",
                    "The decode step (27B shape, synthetic, PDL graph) with attention v18 (the engine's) and v22 (pass 1's stages in a "
                    "rotated order): ms per token at 1K and 32K, interleaved, eight times; greedy tokens equal to v18's.", reps=8)
