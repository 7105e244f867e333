"""Chapter 07, v18 in the decode step again, with more repeats. explore_attention_v18.py found v18 (each KV group's own
barriers and merge) bit-identical to v13 and faster alone from 4K on (128K: 152.5 us against 156.6 with PDL), but its three
interleaved step repeats differed from v13's by less than their own spread (1K: 7.437-7.462 ms against 7.436-7.470; 32K
7.729-7.834 against 7.737-7.851). This run times the step with VARIANT = 13 and 18 in eight interleaved rounds at 1K and 32K
(greedy tokens first, equal to v13's), so the decision rests on more than three pairs.
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v18_step.py OUT_DIR   (about 1 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_util
from qwen_engine import attention as A

if __name__ == "__main__":
    def apply(step, v): A.VARIANT = v
    explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "attention_v18_step8_h200",
                            "The decode step (27B shape, synthetic, PDL graph) with attention v13 (the engine's) and v18 (each KV group's "
                            "own barriers and merge): ms per token at 1K and 32K, eight interleaved rounds; greedy tokens equal to v13's.",
                            "explore_attention_v18_step.py", {"v13": 13, "v18": 18}, apply, reps=8)
