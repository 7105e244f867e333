"""Chapter 08: v7 with its state stores marked L2 evict_last (build 98: createpolicy.fractional.L2::evict_last and
st.global.L2::cache_hint), v7's values bit for bit. Chapter 01 found that a 3 MiB read-modify-write after each of 48
long read streams costs 0.20 ms a token with plain stores and 0.06 ms with evict_last stores (write_policy_h200.json),
no L2 set-aside needed. Does the decode step gain the same? Bit identity with v7 over 12 calls (out, conv ring, state);
the decode step (greedy tokens equal to v7's, three interleaved rounds at 1K and 32K); then each alone (plain and
chained, two rounds). Ordered so the step comes before the rounds alone (this run had little device time).
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_gdn_el.py OUT_DIR   (about 2 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_util
import explore_gdn_cs as C
import explore_gdn_v3 as E
from qwen_engine import gdn as G

BUILDS = {"v7": 7, "stores evict_last (98)": 98}
SCRIPT = "explore_gdn_el.py"


def main(out):
    rec, guard, el, save = explore_util.recorder(
        "gdn_el_h200", "v7 and its build 98 (state stores with an L2 evict_last policy): bit identity with v7 over 12 calls; us a "
        "launch in a graph of 48 launches over 48 layers, plain and chained with PDL, interleaved twice", SCRIPT, out=out, builds=BUILDS,
        identity=[], times=[])
    r = guard("identity 98", lambda: C.identity(98))
    if r: rec["identity"].append(r); print(f"identity v98: {r['identical']} of {r['calls']} {el()}", flush=True)
    save()

    def apply(st, v): G.VARIANT = v
    explore_util.step_plans(out, "gdn_el_step_h200",
                            "The decode step (27B shape, synthetic, PDL graph) with GDN v7 and its build 98 (state stores L2 evict_last): "
                            "greedy tokens equal to v7's, then ms per token at 1K and 32K, interleaved three times.", SCRIPT, BUILDS, apply, reps=3)
    G.VARIANT = 7
    explore_util.alone_rounds(rec, guard, el, BUILDS, E.time_one, rounds=2)
    save()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
