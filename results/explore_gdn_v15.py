# Exploration (chapter 08): gdn_decode_v15 (a cluster of two 512-thread blocks per head: v10's prologue in each block,
# b/a weights and x requested before the state, 4 state columns a warp, v12's exchange of the norm's partials) against
# v7 (the engine's kernel) and v10 on the H200.
#   PYTHONPATH=. python3 results/explore_gdn_v15.py OUT_DIR          (from the repo root; ~4 min)
# Reuses results/explore_gdn_v7.py (identity against v3 over 40 calls, M = 1..8, both state dtypes, out poisoned, plain
# and pdl=True) and explore_gdn_v3.py (graph timings, chained PDL graphs, the probe, GEMV+GDN pairs):
# 1. v15's identity with v3, plain and PDL; its probe build's identity with v1 over 16 calls.
# 2. gdn.timing for v7 and v15; chained PDL graphs of 48 launches at M = 1 and 8, v7, v10 and v15 interleaved, three rounds.
# 3. the phase probe of block 0 under PDL (v7, v15); [qkv|z GEMV, GDN] x 48 pairs with v7 and v15.
# 4. if v15 is identical: the decode step (27B shape, synthetic, PDL graph) with gdn.VARIANT = 7 and 15, greedy tokens
#    equal, ms a token at 1K and 32K interleaved three times (explore_util.step_plans -> gdn_v15_step_h200.json).
# Writes OUT_DIR/gdn_v15_h200.json; prints a short table last.
import os, sys, time
import torch
from qwen_engine import gdn as G

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_gdn_v10 as X                               # its loaders: explore_gdn_v7 (identity) and explore_gdn_v3 (timings)
import explore_util
V7, E = X.V7, X.E
T0, OUT, CFG = time.time(), (sys.argv[1] if len(sys.argv) > 1 else None), E.CFG
PHASES15 = ["issue pre-wait loads (b/a weights, x, 32 KiB of state, conv_w, 16 ring slots, gates, norm_w, ctl)",
            "before the wait: b/a partials, barrier, beta (w15) ‖ decay (w14), conv window", "grid wait",
            "conv + SiLU: wait qkvz; ring write; SiLU(z)", "barrier 1", "l2norm (warps 0..2M-1)", "barrier 2",
            "recurrence on 4 columns a warp, M steps", "cluster wait; the norm's partial to both blocks (st.async)",
            "state stores; wait for the 32 partials; gated norm + out"]
data = dict(has_pdl=E.HAS_PDL, reference_variant=3, engine_variant=G.VARIANT)
WHAT = ("gdn_decode_v15 (a cluster of two 512-thread blocks per head, v10's prologue in each, 4 state columns a warp, the norm's "
        "partials by st.async) vs v7 and v10: bit-identity to v3, graph timings, chained PDL graphs (interleaved), the probe, "
        "GEMV+GDN pairs.")


def probe(v, pdl=False):
    E.PHASES = PHASES15 if v == 15 else X.PHASES10 if v in (10, 11) else V7.PHASES7
    return E.probe_run(v, pdl)


def record():
    data["failures"] = E.failures
    data["wall_s"] = time.time() - T0
    if OUT: E.safe("record", lambda: E.write_record("gdn_v15_h200", WHAT, "PYTHONPATH=. python3 results/explore_gdn_v15.py " + OUT, data, out_dir=OUT))


def main():
    if not torch.cuda.is_available(): sys.exit("explore_gdn_v15.py: needs a GPU; the CPU checks are tests/test_gdn.py")
    torch.cuda.init()
    data["bandwidth_tbps"] = E.safe("bandwidth", lambda: __import__("qwen_engine.gemv", fromlist=["bandwidth_now"]).bandwidth_now()) or 4.55
    cands = {"v15": dict(variant=15), **({"v15+pdl": dict(variant=15, pdl=True)} if E.HAS_PDL else {})}
    data["identity"] = E.safe("identity", lambda: V7.identity(CANDS=cands))
    data["probe_identity"] = E.safe("probe identity", lambda: E.probe_identity(variants=(15,)))
    ok = [n for n in cands if E.passed(data["identity"], n)]
    data["passed"] = ok
    print("passed:", ok, f"({time.time() - T0:.0f} s)", flush=True)
    data["timing"] = {f"v{v}": E.safe(f"timing v{v}", lambda: G.timing(CFG, data["bandwidth_tbps"], variant=v)) for v in (7, 15) if v == 7 or "v15" in ok}
    data["timing_pdl"] = []
    runs = [7, 10] + ([15] if "v15+pdl" in ok else [])
    if E.HAS_PDL:
        for rnd in range(3):
            for v in runs:
                for M in (1, 8):
                    us = E.safe(f"timing v{v}+pdl M={M}", lambda: E.time_one(v, M=M, pdl=True))
                    data["timing_pdl"].append(dict(variant=v, M=M, round=rnd, us=us, us_per_token=us and us / M))
    print(f"timing done ({time.time() - T0:.0f} s)", flush=True)
    record()
    pi = (data["probe_identity"] or {}).get("v15_probe_float32", {})
    data["probe"] = [E.safe(f"probe v{v} pdl", lambda: probe(v, True)) for v in runs if v != 15 or pi.get("identical") == 16]
    record()
    if E.HAS_PDL and 15 in runs: data["pairs"] = E.safe("gemv+gdn pairs", lambda: E.pairs([7, 15]))
    record()
    X.print_summary(data, runs, T0)
    if 15 in runs:
        def apply(step, v): G.VARIANT = v
        explore_util.step_plans(OUT, "gdn_v15_step_h200",
                                "The decode step (27B shape, synthetic, PDL graph) with GDN v7 (the engine's) and v15 (a cluster of two 512-thread "
                                "blocks per head): ms per token at 1K and 32K, interleaved, three times; greedy tokens equal to v7's.",
                                "explore_gdn_v15.py", {"v7": 7, "v15": 15}, apply)
        G.VARIANT = 7


if __name__ == "__main__":
    main()
