# Exploration (chapter 08): gdn_decode_v12 (v7's schedule on a cluster of two blocks per head; the norm's lane partials
# by st.async, no barrier after a store; b/a, gates, position and conv window before the grid wait) and variant 13 (the
# same kernel, one block per SM) against v7 (the engine's kernel) on the H200.
#   PYTHONPATH=. python3 results/explore_gdn_v12.py OUT_DIR          (from the repo root; < 150 s)
# Reuses results/explore_gdn_v7.py (identity against v3 over 40 calls, M = 1..8, both state dtypes, out poisoned, plain
# and pdl=True) and explore_gdn_v3.py (graph timings, chained PDL graphs, the probe, GEMV+GDN pairs):
# 1. v12's and v13's identity with v3, plain and PDL; the probe build's identity with v1 over 16 calls.
# 2. gdn.timing (graph of 48 layers, M = 1..8, the heads fit) for v7 and v12; chained PDL graphs of 48 launches at M = 1
#    and 8, v7, v12 and v13 interleaved, three rounds.
# 3. the phase probe of block 0 under PDL (v7, v12, v13); then [qkv|z GEMV, GDN] x 48 pairs with v7, v12, v13.
# Writes OUT_DIR/gdn_v12_h200.json; prints a short table last. (Its imports were shortened after the record was made: the same
# modules; its summary lines moved into explore_gdn_v10.print_summary, shared with explore_gdn_v14.py: the same lines.)
import os, sys, time
import torch
from qwen_engine import gdn as G

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_gdn_v10 as X                               # its loaders: explore_gdn_v7 (identity) and explore_gdn_v3 (timings)
V7, E = X.V7, X.E
T0, OUT, CFG = time.time(), (sys.argv[1] if len(sys.argv) > 1 else None), E.CFG
PHASES12 = ["issue pre-wait loads (state, w_b/w_a, ctl, ring window, conv_w, gates, norm_w, x)",
            "before the wait: b/a partials, barrier, beta (w7) ‖ decay (w6), barrier", "grid wait",
            "qkvz loads, conv + SiLU, ring writes, l2norms (every warp)", "recurrence: M steps",
            "cluster wait (peer started); partials sent (st.async) and stored; arrive", "state stores issued; SiLU(z)",
            "wait for the 32 partials (mbarrier)", "statistic + my 8 outputs", "(end)"]
NEW = (12, 13)
data = dict(has_pdl=E.HAS_PDL, reference_variant=3, engine_variant=G.VARIANT, pad_bytes_v13=G.V13_PAD)
WHAT = ("gdn_decode_v12 (v7 on a cluster of two blocks per head, the norm's partials by st.async, no barrier after a store) and "
        "variant 13 (v12 one block per SM) vs v7: bit-identity to v3, graph timings, chained PDL graphs (interleaved), the probe, GEMV+GDN pairs.")


def probe(v, pdl=False):
    E.PHASES = PHASES12 if v in NEW else V7.PHASES7
    return E.probe_run(v, pdl)


def record():
    data["failures"] = E.failures
    data["wall_s"] = time.time() - T0
    if OUT: E.safe("record", lambda: E.write_record("gdn_v12_h200", WHAT, "PYTHONPATH=. python3 results/explore_gdn_v12.py " + OUT, data, out_dir=OUT))


def main():
    if not torch.cuda.is_available(): sys.exit("explore_gdn_v12.py: needs a GPU; the CPU checks are tests/test_gdn.py")
    torch.cuda.init()
    data["bandwidth_tbps"] = E.safe("bandwidth", lambda: __import__("qwen_engine.gemv", fromlist=["bandwidth_now"]).bandwidth_now()) or 4.55
    cands = {}
    for v in NEW: cands.update({f"v{v}": dict(variant=v), **({f"v{v}+pdl": dict(variant=v, pdl=True)} if E.HAS_PDL else {})})
    data["identity"] = E.safe("identity", lambda: V7.identity(CANDS=cands))
    data["probe_identity"] = E.safe("probe identity", lambda: E.probe_identity(variants=(12,)))
    ok = [n for n in cands if E.passed(data["identity"], n)]
    data["passed"] = ok
    print("passed:", ok, f"({time.time() - T0:.0f} s)", flush=True)
    data["timing"] = {"v7": E.safe("timing v7", lambda: G.timing(CFG, data["bandwidth_tbps"], variant=7))}
    if "v12" in ok: data["timing"]["v12"] = E.safe("timing v12", lambda: G.timing(CFG, data["bandwidth_tbps"], variant=12))
    data["timing_pdl"] = []
    runs = [7] + [v for v in NEW if f"v{v}+pdl" in ok]
    if E.HAS_PDL:
        data["timing_pdl"] = X.chained_rounds(runs)
    print(f"timing done ({time.time() - T0:.0f} s)", flush=True)
    record()
    pi = (data["probe_identity"] or {}).get("v12_probe_float32", {})
    pr = [(7, True)] + ([(v, True) for v in runs[1:]] if pi.get("identical") == 16 else [])
    data["probe"] = [E.safe(f"probe v{v} pdl", lambda: probe(v, p)) for v, p in pr]
    record()
    if E.HAS_PDL and len(runs) > 1: data["pairs"] = E.safe("gemv+gdn pairs", lambda: E.pairs(runs))
    record()
    X.print_summary(data, runs, T0)


if __name__ == "__main__":
    main()
