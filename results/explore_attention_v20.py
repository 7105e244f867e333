"""Chapter 07, v20 (attn_fused_v14: v18 with the step's new keys reaching pass 1's ring from the registers of the warps that
formed them). At 1K the blocks that hold the step's new key end pass 1 1.3-1.5 us after the median block
(attention_laggards_h200.json), and v14 found why: their last stage needs the new key's row, which goes out to memory and back
through the copy engine after it is formed. v20's pass-1 copies stop before the first new key; those rows are written into
their stage's slot from registers once it has landed, and every block starts its copies before forming its query rows. The
same rows reach the same places: bit-identical to v13 (and to v18, the engine's since attention_v18_h200.json).
1. explore_attention_v5.py's steps against v18: bit identity at contexts 1..32K, M = 1 and 8, PDL off and on (outputs,
   appended rows, scores, statistics, partials), the criterion (recorded), limits; time at 1K..128K beside v18 and SDPA;
   8 steps a graph at 32K. -> attention_v20_h200.json
2. the decode step (27B shape, synthetic, seed 0, PDL graph) with VARIANT = 18 and 20: greedy tokens equal, then ms a token
   at 1K and 32K, interleaved, eight times. -> attention_v20_step_h200.json
(Its record was made with step_plans patched to eight rounds; main_and_step takes reps since: the same run.)
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v20.py OUT_DIR   (about 2 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_attention_v5 as X

X.CUR, X.NEW = 18, [20]
if __name__ == "__main__":
    X.main_and_step(sys.argv[1] if len(sys.argv) > 1 else None, "attention_v20_h200",
                    "decode attention v20 (v18 with the step's new keys into pass 1's ring from registers, not through memory and "
                    "the copy engine): bit identity vs v18 (outputs, appended rows, scores, statistics, partials; M = 1 and 8; PDL "
                    "off and on), the criterion, limits; time at 1K..128K beside v18 and SDPA; 8 steps per graph at 32K.",
                    "explore_attention_v20.py",
                    "The decode step (27B shape, synthetic, PDL graph) with attention v18 (the engine's) and v20 (its new keys into "
                    "pass 1's ring from registers): ms per token at 1K and 32K, interleaved, eight times; greedy tokens equal to v18's.", reps=8)
