"""Chapter 07, v26 (attn_fused_v20: v18 whose ring stages are released by the last warp done with them, with no block
barrier). The phase marks beside the two-pass skeleton (kv_stream_marks_h200.json) put v18's largest excess in pass 2,
whose stages each end in a block barrier before thread 0 may refill the slot; in the skeleton that costs nothing, in a
pass that computes it costs the slowest warp every stage. AtRingGL counts the eight warps in on a per-slot counter and the
last one refills; pass 2 keeps a barrier per tile of probabilities and one before its slab. The same copies into the same
slots and the same arithmetic in the same order: bit-identical to v18. The same two parts as explore_attention_v24.py,
against v18 (records attention_v26_h200.json, attention_v26_step_h200.json).
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v26.py OUT_DIR   (about 2 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_attention_v5 as X

X.CUR, X.NEW = 18, [26]
if __name__ == "__main__":
    X.main_and_step(sys.argv[1] if len(sys.argv) > 1 else None, "attention_v26_h200",
                    "decode attention v26 (v18 whose ring stages are released by the last warp done with them, no block barrier): "
                    "bit identity vs v18 (outputs, appended rows, scores, statistics, partials; M = 1 and 8; PDL off and on), the "
                    "criterion, limits; time at 1K..128K beside v18 and SDPA; 8 steps per graph at 32K.",
                    "explore_attention_v26.py",
                    "The decode step (27B shape, synthetic, PDL graph) with attention v18 (the engine's) and v26 (ring stages released "
                    "by the last warp): ms per token at 1K and 32K, interleaved, eight times; greedy tokens equal to v18's.", reps=8)
