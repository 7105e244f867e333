"""Chapter 08: the middle between v7 and build 98 (its state stores L2 evict_last: the step 0.03 ms faster at 1K, 0.04 ms
slower at 32K, gdn_el_step_h200.json): the policy on a fraction of the lines only (createpolicy.fractional's operand;
the rest evict_normal): 101 on half, 102 on a quarter. All keep v7's values: bit identity with v7 over 12 calls (out,
conv ring, state; explore_gdn_cs.identity); then the decode step (27B shape, synthetic, PDL graph): greedy tokens equal
to v7's, ms per token at 1K and 32K, v7, 98, 101, 102 interleaved five times (explore_util.step_plans).
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_gdn_elf.py OUT_DIR   (about 2 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_util

BUILDS = {"v7": 7, "evict_last, all lines (98)": 98, "evict_last, half the lines (101)": 101, "evict_last, a quarter (102)": 102}

if __name__ == "__main__":
    import explore_gdn_cs as C
    from qwen_engine import gdn as G

    def extra(step, rec):
        rec["identity"] = []
        for v in (98, 101, 102):
            r = explore_util.guard(rec, f"identity {v}", lambda: C.identity(v))
            if r: rec["identity"].append(r); print(f"identity v{v}: {r['identical']} of {r['calls']}", flush=True)

    def apply(st, v): st.set_gdn_log(None); G.VARIANT = v      # v7-family builds: the step without its log (GDN_LOG)

    what = ("v7 and its builds with the state stores L2 evict_last on all (98), half (101) or a quarter (102) of the lines: bit "
            "identity with v7 over 12 calls; the decode step (27B shape, synthetic, PDL graph): greedy tokens equal to v7's, ms per "
            "token at 1K and 32K, interleaved five times.")
    explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "gdn_elf_step_h200", what, "explore_gdn_elf.py", BUILDS, apply,
                            reps=5, extra=extra)
    G.VARIANT = 7
