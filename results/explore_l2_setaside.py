"""Chapters 08 and 09a: how much of L2 the decode step uses. explore_gdn_l2.py set 39 MB of the H200's 60 MB L2 aside
for persisting lines (the most the card allows) and found the engine's step 0.7 ms slower at 1K with no line marked
persisting at all (gdn_l2_step_h200.json: 8.07 ms against ~7.35 in other runs). This run sweeps the set-aside with no
access-policy window anywhere: the step (27B shape, synthetic, PDL graph) at 1K and 32K with the context's
CU_LIMIT_PERSISTING_L2_CACHE_SIZE at 0, 5, 10, 20, 30 and 39 MB, interleaved three times; tokens must equal (the cache
policy changes no value). An application's limit, reset with the context: no setting of the card changes.
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_l2_setaside.py OUT_DIR   (about 2 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_util
import explore_gdn_l2 as L

SIZES_MB = (0, 5, 10, 20, 30, 39)


def apply(step, mb):
    L.set_aside(min(int(mb * 1e6), L.persisting_max()))
    L.reset_persisting()


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else None
    explore_util.step_plans(out, "l2_setaside_h200",
                            "The decode step (27B shape, synthetic, PDL graph) with the persisting L2 set-aside at 0, 5, 10, 20, 30 and "
                            "39 MB (no access-policy window: no line is marked persisting): greedy tokens equal, ms per token at 1K and "
                            "32K, interleaved three times.", "explore_l2_setaside.py", {f"{mb} MB": mb for mb in SIZES_MB}, apply, reps=3)
    L.set_aside(0)
