"""Chapter 07, v17 (attn_fused_v11: v13 with AtRingV: no value copy before the first grid barrier; pass 2 starts its ring
after it). v13 issues each block's first three value stages (96 KB) as soon as its pass 1 is done, while the last blocks
are still streaming their keys (at 32K the first barrier waits 4 us for them: attention_probe_h200.json). Chapter 06 found
that asking for more bytes earlier costs the GEMVs more than it brings (gemv_tail, gemv_fb, gemv_ek2_step); v17 asks whether
the value copies cost the laggards their keys. Only when copies are issued changes: bit-identical to v13.
1. explore_attention_v5.py's steps against v13 (the engine's variant): bit identity at contexts 1..32K, M = 1 and 8, PDL
   off and on (outputs, appended rows, scores, statistics, partials), the criterion (recorded), limits; time at 1K..128K
   beside v13 and SDPA; 8 steps a graph at 32K. -> attention_v17_h200.json
2. the decode step (27B shape, synthetic, seed 0, PDL graph) with VARIANT = 13 and 17: greedy tokens equal, then ms a
   token at 1K and 32K, interleaved, three times. -> attention_v17_step_h200.json
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v17.py OUT_DIR   (about 2 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_attention_v5 as X

X.CUR, X.NEW = 13, [17]
if __name__ == "__main__":
    X.main_and_step(sys.argv[1] if len(sys.argv) > 1 else None, "attention_v17_h200",
                    "decode attention v17 (v13 with no value copy issued before the first grid barrier): bit identity vs v13 "
                    "(outputs, appended rows, scores, statistics, partials; M = 1 and 8; PDL off and on), the criterion, limits; "
                    "time at 1K..128K beside v13 and SDPA; 8 steps per graph at 32K.",
                    "explore_attention_v17.py",
                    "The decode step (27B shape, synthetic, PDL graph) with attention v13 (the engine's) and v17 (v13 with its value "
                    "copies after the first barrier): ms per token at 1K and 32K, interleaved, three times; greedy tokens equal to v13's.")
