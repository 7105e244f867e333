"""Chapter 08: v7 with its state stores write-through (build 97, st.global.wt, which ptxas emits as STG.E.128.STRONG.SYS):
v7's values bit for bit; does a store that asks to go through to memory at once cost the step less than v7's, whose dirty
lines are written back later, in the middle of the GEMVs (gdn_ablate_step_h200.json, power_h200.json)? The same steps as
explore_gdn_cs.py: bit identity over 12 calls, alone (plain and chained, three rounds), the decode step (tokens equal,
five interleaved rounds).
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_gdn_wt.py OUT_DIR   (about 2 min)
(The rounds alone moved into explore_util.alone_rounds, and then the whole run into explore_util.gdn_hint_builds,
after its record was made: the same steps, not re-run.)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_util

if __name__ == "__main__":
    explore_util.gdn_hint_builds("gdn_wt_h200", "explore_gdn_wt.py", 97, "stores write-through")
