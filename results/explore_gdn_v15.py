# Exploration (chapter 08): gdn_decode_v15 (a cluster of two 512-thread blocks per head: v10's prologue in each block,
# b/a weights and x requested before the state, 4 state columns a warp, v12's exchange of the norm's partials) against
# v7 (the engine's kernel) and v10 on the H200.
#   PYTHONPATH=. python3 results/explore_gdn_v15.py OUT_DIR          (from the repo root; ~4 min)
# Reuses results/explore_gdn_v7.py (identity against v3 over 40 calls, M = 1..8, both state dtypes, out poisoned, plain
# and pdl=True) and explore_gdn_v3.py (graph timings, chained PDL graphs, the probe, GEMV+GDN pairs):
# 1. v15's identity with v3, plain and PDL; its probe build's identity with v1 over 16 calls.
# 2. gdn.timing for v7 and v15; chained PDL graphs of 48 launches at M = 1 and 8, v7, v10 and v15 interleaved, three rounds.
# 3. the phase probe of block 0 under PDL (v7, v15); [qkv|z GEMV, GDN] x 48 pairs with v7 and v15.
# 4. the decode step (27B shape, synthetic, PDL graph) with gdn.VARIANT = 7 and each identical variant, greedy tokens
#    equal, ms a token at 1K and 32K interleaved three times (explore_util.step_plans -> gdn_v15_step_h200.json).
# Variants 16 and 17 (v15 with the conv window's 3 ring slots loaded after ctl; 16 under __launch_bounds__(512, 2), 64
# registers, so two blocks an SM and the next launch's pairs start beside this one's) were added after the first run
# (6509860: v15 alone), variants 18 and 19 (v15 with the state and the ring slots asked for after the b/a barrier, so the
# b/a inputs queue behind nothing; 19 at two blocks an SM) after the second (d69aa9d), variants 20 and 21 (b and a split
# over the pair: each block half the b/a weights and FMAs, the warp sums to the peer by st.async; 21 at two blocks an SM)
# after the third (7f9b8f4) and results/explore_gdn_v15t.py; the record is the fourth run's.
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
        "partials by st.async) and its builds v16 (two blocks an SM, 3 ring slots after ctl), v17 (3 ring slots), v18 (state and "
        "ring asked for after b/a), v19 (v18 at two blocks an SM), v20 (b/a split over the pair) and v21 (v20 at two blocks an SM) vs v7 and v10: bit-identity to v3, graph timings, chained PDL graphs (interleaved), the probe, "
        "GEMV+GDN pairs.")


NEW = (15, 16, 17, 18, 19, 20, 21)


PHASES22 = ["issue loads (b/a weights, x, 32 KiB of state, conv_w, ring slots, gates, norm_w, ctl)", "before the wait: the conv window",
            "grid wait", "b/a partials, barrier, beta ‖ decay; conv + SiLU: wait qkvz; ring write; SiLU(z)", "barrier 1",
            "l2norm (warps 0..2M-1)", "barrier 2", "recurrence on 4 columns a warp, M steps",
            "cluster wait; the norm's partial to both blocks (st.async)", "state stores; wait for the 32 partials; gated norm + out"]


def probe(v, pdl=False):
    "The probe of block 0 (phase names: v22-v25 do b and a after the wait; the records of gdn_v22/v24 were made with PHASES15's names)."
    E.PHASES = PHASES22 if v >= 22 else PHASES15 if v >= 15 else X.PHASES10 if v in (10, 11) else V7.PHASES7
    return E.probe_run(v, pdl)


def main(NEW=NEW, name="gdn_v15", script="explore_gdn_v15.py", WHAT=WHAT, step_what=None):
    """The steps above for the variants NEW (explore_gdn_v22.py runs them for later ones); records `name`_h200 and
    `name`_step_h200."""
    def record():
        data["failures"] = E.failures
        data["wall_s"] = time.time() - T0
        if OUT: E.safe("record", lambda: E.write_record(f"{name}_h200", WHAT, f"PYTHONPATH=. python3 results/{script} " + OUT, data, out_dir=OUT))
    if not torch.cuda.is_available(): sys.exit("explore_gdn_v15.py: needs a GPU; the CPU checks are tests/test_gdn.py")
    torch.cuda.init()
    data["bandwidth_tbps"] = E.safe("bandwidth", lambda: __import__("qwen_engine.gemv", fromlist=["bandwidth_now"]).bandwidth_now()) or 4.55
    cands = {}
    for v in NEW: cands.update({f"v{v}": dict(variant=v), **({f"v{v}+pdl": dict(variant=v, pdl=True)} if E.HAS_PDL else {})})
    data["identity"] = E.safe("identity", lambda: V7.identity(CANDS=cands))
    data["probe_identity"] = E.safe("probe identity", lambda: E.probe_identity(variants=NEW))
    ok = [n for n in cands if E.passed(data["identity"], n)]
    data["passed"] = ok
    print("passed:", ok, f"({time.time() - T0:.0f} s)", flush=True)
    data["timing"] = {f"v{v}": E.safe(f"timing v{v}", lambda: G.timing(CFG, data["bandwidth_tbps"], variant=v)) for v in (7,) + NEW if v == 7 or f"v{v}" in ok}
    data["timing_pdl"] = []
    runs = [7, 10] + [v for v in NEW if f"v{v}+pdl" in ok]
    if E.HAS_PDL:
        data["timing_pdl"] = X.chained_rounds(runs)
    print(f"timing done ({time.time() - T0:.0f} s)", flush=True)
    record()
    pi = data["probe_identity"] or {}
    data["probe"] = [E.safe(f"probe v{v} pdl", lambda: probe(v, True)) for v in runs if v not in NEW or pi.get(f"v{v}_probe_float32", {}).get("identical") == 16]
    record()
    news = [v for v in runs if v in NEW]
    if E.HAS_PDL and news: data["pairs"] = E.safe("gemv+gdn pairs", lambda: E.pairs([7] + news))
    record()
    X.print_summary(data, runs, T0)
    if news:
        def apply(step, v): step.set_gdn_log(None); G.VARIANT = v      # v7-family builds: the step without its log (GDN_LOG)
        explore_util.step_plans(OUT, f"{name}_step_h200", step_what or
                                "The decode step (27B shape, synthetic, PDL graph) with GDN v7 (the engine's), v15 (a cluster of two 512-thread "
                                "blocks per head), v16 (v15 at two blocks an SM, the ring's 3 slots after ctl), v17 (v15 with those 3 slots), v18 (the state "
                                "and ring after b/a), v19 (v18 at two blocks an SM), v20 (b/a split over the pair) and v21 (v20 at two blocks an SM): "
                                "ms per token at 1K and 32K, interleaved, three times; greedy tokens equal to v7's.",
                                script, {"v7": 7, **{f"v{v}": v for v in news}}, apply)
        G.VARIANT = 7


if __name__ == "__main__":
    main()
