# Exploration (chapter 08): gdn_decode_v15's builds v24 and v25 (v22 with b and a split over the pair and the conv
# window's 3 ring slots after ctl: the fewest bytes asked for at a block's start; 25 at two blocks an SM) against v7,
# v10 and v22 on the H200.
#   PYTHONPATH=. python3 results/explore_gdn_v24.py OUT_DIR          (from the repo root; ~3 min)
# gdn_v22t_h200.json: in a chain of v22 launches ~28 of the 48 clusters start only as the launch ahead leaves its SMs
# and wait 2.0-2.3 us for their loads (in a memory system draining the launch ahead's 3 MiB of state stores), which sets
# the pace (4.31 us a launch). v24 asks each block for ~51 KB at its start instead of ~75 (half the b/a weights and x,
# 3 ring slots instead of 16). The steps of explore_gdn_v15.py for v22, v24, v25 -> gdn_v24_h200.json,
# gdn_v24_step_h200.json; explore_gdn_v15t.py's cluster timeline of the same -> gdn_v24t_h200.json.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_gdn_v15 as V15
import explore_gdn_v15t as V15T

NEW = (22, 24, 25)
WHAT = ("gdn_decode_v15's builds v24 (v22 with b/a split over the pair and 3 ring slots after ctl) and v25 (v24 at two blocks an "
        "SM) with v22 vs v7 and v10: bit-identity to v3, graph timings, chained PDL graphs (interleaved), the probe, GEMV+GDN pairs.")

if __name__ == "__main__":
    V15.main(NEW, "gdn_v24", "explore_gdn_v24.py", WHAT,
             "The decode step (27B shape, synthetic, PDL graph) with GDN v7 (the engine's), v22, v24 (v22 with b/a split over the pair and "
             "3 ring slots after ctl) and v25 (v24 at two blocks an SM): ms per token at 1K and 32K, interleaved, three times; greedy tokens equal.")
    V15T.main(NEW, "gdn_v24t", "explore_gdn_v24.py")
