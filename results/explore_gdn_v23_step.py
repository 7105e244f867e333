# Exploration (chapters 08, 09a): the decode step with GDN v7 (the engine's), v22 and v23, five interleaved repeats.
#   PYTHONPATH=. python3 results/explore_gdn_v23_step.py OUT_DIR          (from the repo root; ~1 min)
# gdn_v22_step_h200.json timed v22 and v23 0.01-0.02 ms a token faster than v7 at 1K and 32K in three repeats, with
# overlapping ranges; chained, v23 ties v7 (3.83 us) and v22 loses (4.31). This run decides with five repeats: a variant
# is adopted only if every one of its repeats beats every one of v7's at both contexts. Bit-identical to v3, so the
# greedy tokens must equal v7's. Writes OUT_DIR/gdn_v23_step_h200.json.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_util
from qwen_engine import gdn as G


def apply(step, v): step.set_gdn_log(None); G.VARIANT = v      # v7-family builds: the step without its log (GDN_LOG)


if __name__ == "__main__":
    explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "gdn_v23_step_h200",
                            "The decode step (27B shape, synthetic, PDL graph) with GDN v7 (the engine's), v22 (v15 with b and a after the grid "
                            "wait) and v23 (v22 at two blocks an SM): ms per token at 1K and 32K, interleaved, five times; greedy tokens equal.",
                            "explore_gdn_v23_step.py", {"v7": 7, "v22": 22, "v23": 23}, apply, reps=5)
    G.VARIANT = 7
