"""Chapter 07, v18 against v13 in the decode step a third time: twelve interleaved rounds with v18 timed first in each
(the two runs before timed v13 first), so that the order inside a round cannot make the 1K tie or the 32K win.
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v18_step_rev.py OUT_DIR   (about 1 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_util
from qwen_engine import attention as A

if __name__ == "__main__":
    def apply(step, v): A.VARIANT = v
    explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "attention_v18_step12r_h200",
                            "The decode step (27B shape, synthetic, PDL graph) with attention v18 (each KV group's own barriers and merge, "
                            "timed first in each round) and v13: ms per token at 1K and 32K, twelve interleaved rounds; greedy tokens equal.",
                            "explore_attention_v18_step_rev.py", {"v18": 18, "v13": 13}, apply, reps=12)
