# Exploration (chapter 08): gdn_decode_v14 (v7 without its second barrier: the l2norm's lane sums of squares made by the
# conv threads before barrier 1, every warp its own gates and l2norm factors after it) against v7 (the engine's kernel).
#   PYTHONPATH=. python3 results/explore_gdn_v14.py OUT_DIR          (from the repo root; ~3 min)
# Reuses results/explore_gdn_v7.py (identity against v3 over 40 calls, M = 1..8, both state dtypes, out poisoned, plain
# and pdl=True) and explore_gdn_v3.py (graph timings, chained PDL graphs, the probe, GEMV+GDN pairs):
# 1. v14's identity with v3, plain and PDL; its probe build's identity with v1 over 16 calls.
# 2. gdn.timing for v7 and v14; chained PDL graphs of 48 launches at M = 1 and 8, v7 and v14 interleaved, three rounds.
# 3. the phase probe of block 0 under PDL (v7, v14); [qkv|z GEMV, GDN] x 48 pairs with v7 and v14.
# 4. if v14 is identical: the decode step (27B shape, synthetic, PDL graph) with gdn.VARIANT = 7 and 14, greedy tokens
#    equal, ms a token at 1K and 32K interleaved three times (explore_util.step_plans -> gdn_v14_step_h200.json).
# Writes OUT_DIR/gdn_v14_h200.json; prints a short table last. (A first run measured v14 as a kernel of its own,
# gdn_decode_v14 (a0ee097); the record is of v7's NOB2 build it was folded into, variant 14 still: the same times.)
# (Its summary lines moved into explore_gdn_v10.print_summary after the record: the same lines.)
import os, sys, time
import torch
from qwen_engine import gdn as G

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_gdn_v10 as X                               # its loaders: explore_gdn_v7 (identity) and explore_gdn_v3 (timings)
import explore_util
V7, E = X.V7, X.E
T0, OUT, CFG = time.time(), (sys.argv[1] if len(sys.argv) > 1 else None), E.CFG
PHASES14 = ["issue pre-wait loads (state, w_b/w_a, conv_w, 16 ring slots, gates, norm_w)", "grid wait; ctl load issued",
            "b/a partials: wait x + weights, FMAs, 2M butterflies", "conv + SiLU + the l2norm's lane sums; ring write", "barrier 1",
            "every warp: beta, decay, l2norm factors; SiLU(z) (w 2M)", "(no barrier 2)",
            "recurrence: wait state, M steps, q and k normalised as read; stores in the last step", "core barrier",
            "gated norm + out, then warp 0's state stores"]
data = dict(has_pdl=E.HAS_PDL, reference_variant=3, engine_variant=G.VARIANT)
WHAT = ("gdn_decode_v14 (v7 without its second barrier: the l2norm's lane sums by the conv threads, every warp its own gates and "
        "l2norm factors) vs v7: bit-identity to v3, graph timings, chained PDL graphs (interleaved), the probe, GEMV+GDN pairs.")


def probe(v, pdl=False):
    E.PHASES = PHASES14 if v == 14 else V7.PHASES7
    return E.probe_run(v, pdl)


def record():
    data["failures"] = E.failures
    data["wall_s"] = time.time() - T0
    if OUT: E.safe("record", lambda: E.write_record("gdn_v14_h200", WHAT, "PYTHONPATH=. python3 results/explore_gdn_v14.py " + OUT, data, out_dir=OUT))


def main():
    if not torch.cuda.is_available(): sys.exit("explore_gdn_v14.py: needs a GPU; the CPU checks are tests/test_gdn.py")
    torch.cuda.init()
    data["bandwidth_tbps"] = E.safe("bandwidth", lambda: __import__("qwen_engine.gemv", fromlist=["bandwidth_now"]).bandwidth_now()) or 4.55
    cands = {"v14": dict(variant=14), **({"v14+pdl": dict(variant=14, pdl=True)} if E.HAS_PDL else {})}
    data["identity"] = E.safe("identity", lambda: V7.identity(CANDS=cands))
    data["probe_identity"] = E.safe("probe identity", lambda: E.probe_identity(variants=(14,)))
    ok = [n for n in cands if E.passed(data["identity"], n)]
    data["passed"] = ok
    print("passed:", ok, f"({time.time() - T0:.0f} s)", flush=True)
    data["timing"] = {f"v{v}": E.safe(f"timing v{v}", lambda: G.timing(CFG, data["bandwidth_tbps"], variant=v)) for v in (7, 14) if v == 7 or "v14" in ok}
    data["timing_pdl"] = []
    runs = [7] + ([14] if "v14+pdl" in ok else [])
    if E.HAS_PDL:
        data["timing_pdl"] = X.chained_rounds(runs)
    print(f"timing done ({time.time() - T0:.0f} s)", flush=True)
    record()
    pi = (data["probe_identity"] or {}).get("v14_probe_float32", {})
    data["probe"] = [E.safe(f"probe v{v} pdl", lambda: probe(v, True)) for v in runs if v == 7 or pi.get("identical") == 16]
    record()
    if E.HAS_PDL and len(runs) > 1: data["pairs"] = E.safe("gemv+gdn pairs", lambda: E.pairs(runs))
    record()
    X.print_summary(data, runs, T0)
    if len(runs) > 1:
        def apply(step, v): step.set_gdn_log(None); G.VARIANT = v      # v7-family builds: the step without its log (GDN_LOG)
        explore_util.step_plans(OUT, "gdn_v14_step_h200",
                                "The decode step (27B shape, synthetic, PDL graph) with GDN v7 (the engine's) and v14 (v7 without its second barrier): "
                                "ms per token at 1K and 32K, interleaved, three times; greedy tokens equal to v7's.",
                                "explore_gdn_v14.py", {"v7": 7, "v14": 14}, apply)


if __name__ == "__main__":
    main()
