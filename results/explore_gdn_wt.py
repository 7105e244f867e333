"""Chapter 08: v7 with its state stores write-through (build 97, st.global.wt, which ptxas emits as STG.E.128.STRONG.SYS):
v7's values bit for bit; does a store that asks to go through to memory at once cost the step less than v7's, whose dirty
lines are written back later, in the middle of the GEMVs (gdn_ablate_step_h200.json, power_h200.json)? The same steps as
explore_gdn_cs.py: bit identity over 12 calls, alone (plain and chained, three rounds), the decode step (tokens equal,
five interleaved rounds).
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_gdn_wt.py OUT_DIR   (about 2 min)
(The rounds alone moved into explore_util.alone_rounds after its record was made: the same steps, not re-run.)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_util
import explore_gdn_cs as C
import explore_gdn_v3 as E
from qwen_engine import gdn as G

BUILDS = {"v7": 7, "stores write-through (97)": 97}
SCRIPT = "explore_gdn_wt.py"


def main(out):
    rec, guard, el, save = explore_util.recorder(
        "gdn_wt_h200", "v7 and its build 97 (state stores st.global.wt): bit identity with v7 over 12 calls; us a launch in a graph of "
        "48 launches over 48 layers, plain and chained with PDL, interleaved three times", SCRIPT, out=out, builds=BUILDS, identity=[], times=[])
    r = guard("identity 97", lambda: C.identity(97))
    if r: rec["identity"].append(r); print(f"identity v97: {r['identical']} of {r['calls']} {el()}", flush=True)
    explore_util.alone_rounds(rec, guard, el, BUILDS, E.time_one)
    save()

    def apply(st, v): G.VARIANT = v
    explore_util.step_plans(out, "gdn_wt_step_h200",
                            "The decode step (27B shape, synthetic, PDL graph) with GDN v7 and its build 97 (state stores write-through): "
                            "greedy tokens equal to v7's, then ms per token at 1K and 32K, interleaved five times.", SCRIPT, BUILDS, apply, reps=5)
    G.VARIANT = 7


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
