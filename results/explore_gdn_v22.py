# Exploration (chapter 08): gdn_decode_v15's builds v22 and v23 (b and a after the grid wait, as v7 has them; 23 at two
# blocks an SM, 64 registers) against v7, v10 and v15 on the H200.
#   PYTHONPATH=. python3 results/explore_gdn_v22.py OUT_DIR          (from the repo root; ~3 min)
# gdn_v15t_h200.json: in a chain of v15-v21 launches every cluster starts before the launch ahead of it ends, but its work
# before the grid wait (b and a on loads that queue behind the state's, 1.7-2.6 us) outlasts that launch's work after its
# wait (2.0 us), so it sets the pace (4.4-5.3 us a launch against v7's 3.83). v22 moves b and a after the wait (their
# loads stay before it): then only loads are left before the wait, and the work after it is v7's b/a (0.5 us in v7's
# probe) plus v15's 2.0 us. The steps of explore_gdn_v15.py (identity with v3, timings, chained, probe, pairs, the step)
# for v15, v22, v23 -> gdn_v22_h200.json, gdn_v22_step_h200.json; then explore_gdn_v15t.py's cluster timeline of the
# same three -> gdn_v22t_h200.json.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_gdn_v15 as V15
import explore_gdn_v15t as V15T

NEW = (15, 22, 23)
WHAT = ("gdn_decode_v15's builds v22 (b and a after the grid wait) and v23 (v22 at two blocks an SM) with v15 vs v7 and v10: "
        "bit-identity to v3, graph timings, chained PDL graphs (interleaved), the probe, GEMV+GDN pairs.")

if __name__ == "__main__":
    V15.main(NEW, "gdn_v22", "explore_gdn_v22.py", WHAT,
             "The decode step (27B shape, synthetic, PDL graph) with GDN v7 (the engine's), v15, v22 (v15 with b and a after the grid "
             "wait) and v23 (v22 at two blocks an SM): ms per token at 1K and 32K, interleaved, three times; greedy tokens equal to v7's.")
    V15T.main(NEW, "gdn_v22t", "explore_gdn_v22.py")
