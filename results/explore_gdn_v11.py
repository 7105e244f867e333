# Exploration (chapter 08): variant 11 = gdn_decode_v10 with LATE (the state loaded after the b/a barrier, so b and a
# do not wait behind 64 KB of state: v10's work before the wait took 2.6 us, gdn_v10_h200.json) against v7 (the engine's)
# and v10, on the H200: explore_gdn_v10.py's steps (its `main`, parametrised after this record was made) with v10 among
# the variants timed against (chained, probed under PDL, paired).
#   PYTHONPATH=. python3 results/explore_gdn_v11.py OUT_DIR          (from the repo root; < 120 s)
# Writes OUT_DIR/gdn_v11_h200.json; prints a short table last.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_gdn_v10 as X

if __name__ == "__main__":
    X.main(11, (7, 10), "variant 11 (gdn_decode_v10 with the state loaded after the b/a barrier) vs v7 and v10: bit-identity to v3, graph "
                        "timings, chained PDL graphs (interleaved), the phase probe, GEMV+GDN pairs.")
