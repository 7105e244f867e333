"""Chapter 07, v25 (attn_fused_v19: v18 whose first value copies after pass 1 leave without thread 0's
fence.proxy.async.global). v18's probe (attention_probe18_h200.json) put ~0.9 us at 32K between a block's end of pass 1
and its first value copies, which thread 0 issues after that fence; the fence waits for thread 0's own outstanding
stores (its share of the scores and statistics, which no copy reads). The value rows the copies read that this launch
writes are the new keys', and each writer fences them itself before the block barrier that precedes thread 0's copies.
The same copies into the same slots: bit-identical to v18 (the SASS has one global proxy fence fewer,
tests/test_attention.py). The same two parts as explore_attention_v24.py, against v18 (records attention_v25_h200.json,
attention_v25_step_h200.json).
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v25.py OUT_DIR   (about 2 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_attention_v5 as X

X.CUR, X.NEW = 18, [25]
if __name__ == "__main__":
    X.main_and_step(sys.argv[1] if len(sys.argv) > 1 else None, "attention_v25_h200",
                    "decode attention v25 (v18 whose first value copies after pass 1 leave without thread 0's global proxy fence): "
                    "bit identity vs v18 (outputs, appended rows, scores, statistics, partials; M = 1 and 8; PDL off and on), the "
                    "criterion, limits; time at 1K..128K beside v18 and SDPA; 8 steps per graph at 32K.",
                    "explore_attention_v25.py",
                    "The decode step (27B shape, synthetic, PDL graph) with attention v18 (the engine's) and v25 (the first value copies "
                    "without thread 0's proxy fence): ms per token at 1K and 32K, interleaved, eight times; greedy tokens equal to v18's.", reps=8)
