"""Chapter 08: GDN released before its grid wait (variants 32, 33: v7 and the engine's 26 with REL and LDCG). A chain of
GDN launches runs at v7's 3.8 us a launch against the chapter's goal of 2.5; its timelines put v7's state arriving 1.4 us
after the grid wait returns: a launch's blocks start only once the launch ahead has passed its own wait and released
its dependents, too late for the state to land before they need it. Released before the wait, a launch lets the next
one start (and ask for its state) at once. v7's REL build did that and generated other tokens in the step: ptxas had put
its q|k|v|z load above the wait (chapter 09a). LDCG reads the q|k|v|z row and z by coherent loads (__ldcg, as the z
split's build 100 does), which stay below the wait (the SASS audit, tests/test_step.py RELC_PREWAIT). The same values.
1. bit identity: 32 against v7 and 33 against v7 (with its log) over 43 tokens of six layers from positions 0 and 1000:
   out, conv ring, state (33: rebuilt), PDL on every other token.
2. alone: v7, 26, 32, 33 in a graph of 48 launches over 48 layers, plain and chained with PDL, three rounds.
3. the decode step (27B shape, synthetic, PDL graph): greedy tokens and the 48 states and conv rings after 16 + 24 tokens
   against v7's, then ms a token at 1K and 32K, five interleaved rounds (a released GDN lets out_proj start early too).
(Its record was made with the script's own copies of explore_gdn_log's identity, seed 12, and step_states; since then it
calls those, which take a variant without a log and a plan's set-up: the same steps.)
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_gdn_relc.py OUT_DIR   (about 3 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_util
import explore_gdn_v3 as E
import explore_gdn_log as L
from qwen_engine import gdn as G

SCRIPT = "explore_gdn_relc.py"
BUILDS = {"v7": 7, "log 4 (26)": 26, "v7 released (32)": 32, "log 4 released (33)": 33}


def apply(st, v):
    "A plan of the step: v7 or 32 (no log, gdn.VARIANT), or a log build (set_gdn_log)."
    G.VARIANT = v if v in (7, 32) else 7
    st.set_gdn_log(None if v in (7, 32) else v)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else None
    rec, guard, el, save = explore_util.recorder(
        "gdn_relc_h200", "GDN v7 and 26 released before their grid wait, their q|k|v|z and z loads coherent (32, 33): bit identity "
        "with v7 (out, conv ring, the state; 33's rebuilt) over 43 tokens x 6 layers from positions 0 and 1000; us a launch in a "
        "graph of 48 launches over 48 layers, plain and chained with PDL, three rounds, beside v7 and 26",
        SCRIPT, out=out, builds=BUILDS, identity=[], times=[])
    for pos0 in (0, 1000):
        for name, fn in (("32", lambda: L.identity(32, pos0, seed=12)), ("33", lambda: L.identity(33, pos0))):
            r = guard(f"identity {name} {pos0}", fn)
            if r: rec["identity"].append(r); print(f"identity {r} {el()}", flush=True)
    save()
    ok = len(rec["identity"]) == 4 and all(r["out"] == r["conv"] == r["state"] == r["checks"] for r in rec["identity"])
    print(f"identity ok: {ok}", flush=True)
    logs = {v: G.gdn_log(E.CFG, G._LOG[v], 48, L.DEV) for v in (26, 33)}
    tone = lambda v, M=1, pdl=False: E.time_one(v, M=M, pdl=pdl, **(dict(log=logs[v]) if v in logs else {}))
    explore_util.alone_rounds(rec, guard, el, BUILDS, tone, rounds=3)
    save()
    if ok:
        explore_util.step_plans(out, "gdn_relc_step_h200",
                                "The decode step (27B shape, synthetic, PDL graph) with GDN v7, 26 (the engine's), 32 and 33 (v7 and 26 "
                                "released before their grid wait, q|k|v|z and z loaded coherently): greedy tokens, rebuilt states and "
                                "conv rings equal to v7's after 16 + 24 tokens (step_states), then ms per token at 1K and 32K, "
                                "interleaved five times.", SCRIPT, BUILDS, apply, reps=5, extra=lambda st, r: guard("step states", lambda: L.step_states(st, r, BUILDS, apply)))
    G.VARIANT = 7
    print(f"done {el()}; errors {len(rec['errors'])}")
