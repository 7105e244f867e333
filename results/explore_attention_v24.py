"""Chapter 07, v24 (attn_fused_v18: v18 whose blocks issue pass 1's first key copies of row 0 before their grid wait, where
their partition holds no new key, as the GEMVs' EK builds ask for their first weights before theirs). Until now no
attention kernel asked for its keys before its wait (kernels/attention.cu, "PDL: before qe_grid_wait() ..."), so each
block's first 64-key stages left only after the q|gate|k|v GEMV had completed. The rows copied are older than the step's position:
this layer's launches of earlier steps wrote them; ctl[0] and the page table come from the host and the step's last kernel;
the kernel before (the GEMV) writes none of them. The same copies into the same slots: bit-identical to v18 (checked: the
SASS has the copies above the wait, tests/test_attention.py).
The same two parts as explore_attention_v23.py, against v18 (records attention_v24_h200.json, attention_v24_step_h200.json);
chapter 07's cell also holds v24's scores, statistics and partials to v18's (v24 drops nothing).
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v24.py OUT_DIR   (about 2 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_attention_v5 as X

X.CUR, X.NEW = 18, [24]
if __name__ == "__main__":
    X.main_and_step(sys.argv[1] if len(sys.argv) > 1 else None, "attention_v24_h200",
                    "decode attention v24 (v18 with row 0's first key copies issued before the grid wait where the partition holds no new "
                    "key): bit identity vs v18 (outputs, appended rows, scores, statistics, partials; M = 1 and 8; PDL off and on), the "
                    "criterion, limits; time at 1K..128K beside v18 and SDPA; 8 steps per graph at 32K.",
                    "explore_attention_v24.py",
                    "The decode step (27B shape, synthetic, PDL graph) with attention v18 (the engine's) and v24 (its first key copies "
                    "before the grid wait): ms per token at 1K and 32K, interleaved, eight times; greedy tokens equal to v18's.", reps=8)
