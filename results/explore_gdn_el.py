"""Chapter 08: v7 with its state stores marked L2 evict_last (build 98: createpolicy.fractional.L2::evict_last and
st.global.L2::cache_hint), v7's values bit for bit. Chapter 01 found that a 3 MiB read-modify-write after each of 48
long read streams costs 0.20 ms a token with plain stores and 0.06 ms with evict_last stores (write_policy_h200.json),
no L2 set-aside needed. Does the decode step gain the same? Bit identity with v7 over 12 calls (out, conv ring, state);
the decode step (greedy tokens equal to v7's, three interleaved rounds at 1K and 32K); then each alone (plain and
chained, two rounds). Ordered so the step comes before the rounds alone (this run had little device time).
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_gdn_el.py OUT_DIR   (about 2 min)
(Its steps moved into explore_util.gdn_hint_builds after its record was made: the same steps.)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_util

if __name__ == "__main__":
    explore_util.gdn_hint_builds("gdn_el_h200", "explore_gdn_el.py", 98, "stores evict_last", step_first=True, rounds=2, reps=3)
