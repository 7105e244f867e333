"""Chapter 08: the log builds staging only the entries a token replays (variants 29, 30, 31: LOGP; N = 4, 8, 16).
Variants 26-28 stage all N - 1 slots of a head's log in shared memory before the grid wait, and replay the `phase` of
them written since the last whole state; 29-31 load only those (on average (N - 1) / 2 slots: the same values, fewer
bytes before the wait). explore_gdn_log.py's checks and timings, for the new builds beside 26 and 27:
1. bit identity with v7 over 43 tokens of six layers (six phases), from positions 0 and 1000 (out, conv ring, the
   rebuilt state), with its two negative controls (the state rebuilt one token short; another layer's log).
2. the decode step (27B shape, synthetic, PDL graph): greedy tokens, rebuilt states and conv rings equal to v7's after
   16 + 24 tokens; ms a token at 1K and 32K, six interleaved rounds of v7, 26, 27, 29, 30.
3. each alone in a graph of 48 launches over 48 layers, plain and chained with PDL, two rounds.
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_gdn_logp.py OUT_DIR   (about 4 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_gdn_log as L

SCRIPT = "explore_gdn_logp.py"
BUILDS = {"v7": 7, "log 4 (26)": 26, "log 8 (27)": 27, "log 4 staged (29)": 29, "log 8 staged (30)": 30}
ALONE = dict(BUILDS, **{"log 16 staged (31)": 31})

if __name__ == "__main__":
    L.main(sys.argv[1] if len(sys.argv) > 1 else None, "gdn_logp_h200",
           "v7 and the log builds 26-27 and 29-31 (29-31: staging only the entries a token replays): bit identity "
           "of 29-31 with v7 (out, conv ring, the rebuilt state) over 43 tokens x 6 layers from positions 0 and 1000, with two "
           "negative controls; us a launch in a graph of 48 launches over 48 layers, plain and chained with PDL, two rounds",
           "gdn_logp_step_h200",
           "The decode step (27B shape, synthetic, PDL graph) with GDN v7, the log builds 26 and 27 (every slot "
           "staged) and 29 and 30 (only the entries replayed): greedy tokens, rebuilt states and conv rings equal "
           "to v7's after 16 + 24 tokens (step_states), then ms per token at 1K and 32K, interleaved six times.",
           SCRIPT, (29, 30, 31), BUILDS, ALONE, 6)
