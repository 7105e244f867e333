# Exploration (chapter 08): gdn_decode_v10 (v7 with b, a, beta, the decay and the conv window before the grid wait: x,
# the normed layer input, is written two launches back) against v7 (the engine's kernel) on the H200.
#   PYTHONPATH=. python3 results/explore_gdn_v10.py OUT_DIR          (from the repo root; < 120 s)
# Reuses results/explore_gdn_v7.py (its identity check against v3 over 40 calls, M = 1..8, both state dtypes, out
# poisoned, plain and pdl=True) and explore_gdn_v3.py (graph timings, chained PDL graphs, the probe, GEMV+GDN pairs):
# 1. v10's identity with v3 (= v7), plain and PDL; its probe build's identity with v1 over 16 calls.
# 2. gdn.timing (graph of 48 layers, M = 1..8, the heads fit) for v7 and v10; chained PDL graphs of 48 launches at M = 1
#    and 8, v7 and v10 interleaved, three rounds.
# 3. the phase probe of block 0, v7 and v10, plain and PDL; then [qkv|z GEMV, GDN] x 48 pairs with v7 and v10.
# Writes OUT_DIR/gdn_v10_h200.json; prints a short table last. `main(new, before, ...)` is shared with explore_gdn_v11.py
# (a later variant, with v10 among the ones it is timed against; parametrised after this record was made: same steps).
import importlib.util, os, sys, time
import torch
from qwen_engine import gdn as G

_here = os.path.dirname(os.path.abspath(__file__))
_load = lambda n: (lambda s: (s.loader.exec_module(m := importlib.util.module_from_spec(s)), m)[1])(importlib.util.spec_from_file_location(n, os.path.join(_here, n + ".py")))
sys.argv = sys.argv[:2]
V7 = _load("explore_gdn_v7")
E = V7.E
T0, OUT, CFG = time.time(), (sys.argv[1] if len(sys.argv) > 1 else None), E.CFG
PHASES10 = ["issue pre-wait loads (state, w_b/w_a, conv_w, 16 ring slots, gates, norm_w, ctl, x)",
            "before the wait: b/a partials, barrier, beta (w15) ‖ decay (w14), conv window", "grid wait",
            "conv + SiLU: wait qkvz; ring write", "barrier 1", "l2norm (warps 0..2M-1) ‖ SiLU(z) (w 2M)", "barrier 2",
            "recurrence: M steps (other warps' stores in the last step)", "core barrier", "gated norm + out, then warp 0's state stores"]
data = dict(has_pdl=E.HAS_PDL, reference_variant=3, engine_variant=G.VARIANT)
WHAT10 = ("gdn_decode_v10 (v7 with b, a, beta, the decay and the conv window before the grid wait) vs v7: bit-identity to v3, graph "
          "timings, chained PDL graphs (interleaved), the phase probe, GEMV+GDN pairs.")


def chained_rounds(runs, rounds=3) -> list:
    "Chained PDL graphs of 48 launches at M = 1 and 8 for each variant of `runs`, interleaved, `rounds` times: the timing_pdl rows."
    rows = []
    for rnd in range(rounds):
        for v in runs:
            for M in (1, 8):
                us = E.safe(f"timing v{v}+pdl M={M}", lambda: E.time_one(v, M=M, pdl=True))
                rows.append(dict(variant=v, M=M, round=rnd, us=us, us_per_token=us and us / M))
    return rows


def probe(v, pdl=False):
    E.PHASES = PHASES10 if v in (10, 11) else V7.PHASES7
    return E.probe_run(v, pdl)


def main(new=10, before=(7,), what=WHAT10):
    """Variant `new` checked, then timed against the variants `before` (the engine's first; the others chained, probed
    under PDL and paired too); the record gdn_v{new}_h200."""
    name, script = f"gdn_v{new}_h200", f"explore_gdn_v{new}.py"
    CANDS = {f"v{new}": dict(variant=new), **({f"v{new}+pdl": dict(variant=new, pdl=True)} if E.HAS_PDL else {})}

    def record():
        data["failures"] = E.failures
        data["wall_s"] = time.time() - T0
        if OUT: E.safe("record", lambda: E.write_record(name, what, f"PYTHONPATH=. python3 results/{script} " + OUT, data, out_dir=OUT))
    if not torch.cuda.is_available(): sys.exit(f"{script}: needs a GPU; the CPU checks are tests/test_gdn.py")
    torch.cuda.init()
    data["bandwidth_tbps"] = E.safe("bandwidth", lambda: __import__("qwen_engine.gemv", fromlist=["bandwidth_now"]).bandwidth_now()) or 4.55
    data["identity"] = E.safe("identity", lambda: V7.identity(CANDS=CANDS))
    data["probe_identity"] = E.safe("probe identity", lambda: E.probe_identity(variants=(new,)))
    ok = [n for n in CANDS if E.passed(data["identity"], n)]
    data["passed"] = ok
    print("passed:", ok, f"({time.time() - T0:.0f} s)", flush=True)
    data["timing"] = {"v7": E.safe("timing v7", lambda: G.timing(CFG, data["bandwidth_tbps"], variant=7))}
    if f"v{new}" in ok: data["timing"][f"v{new}"] = E.safe(f"timing v{new}", lambda: G.timing(CFG, data["bandwidth_tbps"], variant=new))
    data["timing_pdl"] = []
    if E.HAS_PDL:
        data["timing_pdl"] = chained_rounds(list(before) + ([new] if f"v{new}+pdl" in ok else []))
    print(f"timing done ({time.time() - T0:.0f} s)", flush=True)
    record()
    pi = data["probe_identity"] or {}
    runs = [(7, False)] + ([(7, True)] if E.HAS_PDL else []) + [(v, True) for v in before[1:] if E.HAS_PDL]
    if pi.get(f"v{new}_probe_float32", {}).get("identical") == 16:
        runs += [(new, p) for p in ((False, True) if f"v{new}+pdl" in ok else (False,))]
    data["probe"] = [E.safe(f"probe v{v}{' pdl' if p else ''}", lambda: probe(v, p)) for v, p in runs]
    record()
    if E.HAS_PDL and f"v{new}+pdl" in ok:
        data["pairs"] = E.safe("gemv+gdn pairs", lambda: E.pairs(list(before) + [new]))
    record()
    print("SUMMARY (us per layer per token, fp32 state; goal <= 2.5):")
    for n, r in (data["identity"] or {}).items():
        print(f"  identity {n} vs v3: " + ", ".join(f"{k} {v['identical']}/{v['calls']}" + (f" ERROR {v['error']}" if v["error"] else "") for k, v in r.items()))
    for v in tuple(before) + (new,):
        t = (data["timing"] or {}).get(f"v{v}")
        pd = [r["us"] for r in data["timing_pdl"] if r["variant"] == v and r["M"] == 1 and r["us"]]
        pd8 = [r["us_per_token"] for r in data["timing_pdl"] if r["variant"] == v and r["M"] == 8 and r["us"]]
        print(f"  v{v}: graph M=1 {V7.m1(t):.2f}; chained PDL M=1 {', '.join(f'{u:.2f}' for u in pd)}; M=8 per token {', '.join(f'{u:.2f}' for u in pd8)}")
    for p in data["probe"] or []:
        if p: print(f"  probe v{p['variant']} pdl={p['pdl']}: " + ", ".join(f"{ph['ns']:.0f}" for ph in p["phases"]) + " ns")
    print(f"  pairs: {data.get('pairs')}")
    print(f"  failures: {E.failures}  ({time.time() - T0:.0f} s)", flush=True)



def print_summary(data, runs, t0):
    "The last lines of explore_gdn_v12.py and v14.py: identity, chained PDL timings, probes, pairs (factored out of them after their records)."
    print("SUMMARY (us per layer per token, fp32 state; goal <= 2.5):")
    for n, r in (data["identity"] or {}).items():
        print(f"  identity {n} vs v3: " + ", ".join(f"{k} {v['identical']}/{v['calls']}" + (f" ERROR {v['error']}" if v["error"] else "") for k, v in r.items()))
    print(f"  probe identity: {data['probe_identity']}")
    for v in runs:
        t = (data["timing"] or {}).get(f"v{v}")
        pd = [r["us"] for r in data["timing_pdl"] if r["variant"] == v and r["M"] == 1 and r["us"]]
        pd8 = [r["us_per_token"] for r in data["timing_pdl"] if r["variant"] == v and r["M"] == 8 and r["us"]]
        print(f"  v{v}: graph M=1 {V7.m1(t) if t else float('nan'):.2f}; chained PDL M=1 {', '.join(f'{u:.2f}' for u in pd)}; M=8 per token {', '.join(f'{u:.2f}' for u in pd8)}")
    for p in data["probe"] or []:
        if p: print(f"  probe v{p['variant']} pdl={p['pdl']}: " + ", ".join(f"{ph['ns']:.0f}" for ph in p["phases"]) + f" ns; span {p['launch_span_ns']:.0f}, gap {p['gap_between_launches_ns']:.0f}")
    print(f"  pairs: {data.get('pairs')}")
    print(f"  failures: {E.failures}  ({time.time() - t0:.0f} s)", flush=True)

if __name__ == "__main__":
    main()
