# Exploration (chapter 08): gdn_decode_v5 (v3's load schedule on a thread-block cluster of 2 or 4 blocks per head)
# against v1 and v3 on the H200.
#   PYTHONPATH=. python3 results/explore_gdn_v5.py OUT_DIR          (from the repo root; < 100 s)
# Reuses results/explore_gdn_v3.py's machinery (identity, graph timings, probe analysis, GEMV+GDN pairs):
# 1. bit-identity to v1 of v5 (cluster of 2, variant 5) and v6 (cluster of 4, variant 6), plain and with pdl=True,
#    and of their probe builds: out (poisoned with NaN; rows >= M must stay NaN), conv ring and state after each of 40
#    consecutive calls with M = 1..8, fp32 and bf16 state. A failing candidate is reported and not timed.
# 2. gdn.timing (graph of 48 layers: M = 1, 2, 4, 8, bf16, the heads fit, the empty launch) for v1, v3, v5, v6;
#    a graph of 48 launches with pdl=True at M = 1 and 8 for v3, v5, v6.
# 3. the phase probe of block 0 for v3, v5, v6 (v5/v6 also with pdl).
# 4. a graph of [16384 x 5120 GEMV, GDN] x 48, GDN plain or pdl, GEMV plain or pdl; eager pair identity plain vs pdl.
# Writes OUT_DIR/gdn_v5_h200.json; prints a short table last.
import importlib.util, os, sys, time
import torch
from qwen_engine import gdn as G

_spec = importlib.util.spec_from_file_location("explore_gdn_v3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "explore_gdn_v3.py"))
E = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(E)
T0, OUT, CFG, DEV, BF = time.time(), (sys.argv[1] if len(sys.argv) > 1 else None), E.CFG, E.DEV, E.BF
C, VD, HID = E.C, E.VD, E.HID
PHASES3 = list(E.PHASES)
PHASES5 = ["issue pre-wait loads (w_b/w_a, conv_w, 16 ring slots, gates, norm_w, then state)",
           "grid wait; ctl load issued", "b/a partials: wait x + weights, FMAs, M butterflies",
           "conv + SiLU: wait ctl, ring, qkvz; ring write", "cluster wait (peers started), push sums + q/k/v, cluster barrier",
           "gates (last warp) + l2norm (rows over warps)", "barrier", "recurrence: wait state, M steps, push core",
           "state stores issued + cluster barrier", "gated norm + out (rows over warps)"]
CANDS = {"v5": dict(variant=5), "v6": dict(variant=6)}
if E.HAS_PDL: CANDS.update({"v5+pdl": dict(variant=5, pdl=True), "v6+pdl": dict(variant=6, pdl=True)})
E.candidates = lambda: dict(CANDS)                       # E.identity compares these against v1
data = dict(has_pdl=E.HAS_PDL)
failures = E.failures                                    # E.safe appends here

def probe_identity():
    "The v5/v6 probe builds (M = 1, fp32 and bf16 state) against v1 over 16 consecutive calls (explore_gdn_v3's check)."
    return E.probe_identity(variants=(5, 6))

def probe(v, pdl=False):
    E.PHASES = PHASES5 if v >= 5 else PHASES3
    return E.probe_run(v, pdl)

def summary(d):
    "The last lines: M = 1 us per layer per token, standalone graph and graph of 48 with pdl, against the 2.5 us goal."
    L = ["SUMMARY (us per layer per token, M = 1, fp32 state; goal <= 2.5, stretch 2.0):"]
    for n, t in (d.get("timing") or {}).items():
        if not t: continue
        r1 = next((r["us"] for r in t["rows"] if r["M"] == 1 and r["state"] == "float32"), float("nan"))
        r8 = next((r["us"] for r in t["rows"] if r["M"] == 8 and r["state"] == "float32"), float("nan"))
        pd = (d.get("timing_pdl") or {}).get(n + "+pdl")
        L.append(f"  {n}: graph {r1:.2f}; graph of 48 with pdl {pd if pd is None else round(pd, 2)}; M=8 {r8 / 8:.2f}/token; "
                 f"fit {t['fit_fixed_us']:.2f} + {t['fit_per_head_us']:.4f}/head")
    p = d.get("pairs") or {}
    if p.get("gemv_alone_us"):
        for k, v in p.items():
            if k.endswith("_us") and k != "gemv_alone_us": L.append(f"  pair {k[:-3]}: {v:.2f} (GDN share {v - p['gemv_alone_us']:.2f})")
    return "\n".join(L)

def main():
    if not torch.cuda.is_available(): sys.exit("explore_gdn_v5: needs a GPU (CuPy and CUDA torch); the CPU checks are tests/test_gdn.py")
    torch.cuda.init()
    data["bandwidth_tbps"] = E.safe("bandwidth", lambda: __import__("qwen_engine.gemv", fromlist=["bandwidth_now"]).bandwidth_now()) or 4.55
    data["identity"] = E.safe("identity", E.identity)
    data["probe_identity"] = E.safe("probe identity", probe_identity)
    ok = [n for n in CANDS if E.passed(data["identity"], n)]
    data["passed"] = ok
    print("passed:", ok, f"({time.time() - T0:.0f} s)", flush=True)
    data["timing"] = {"v1": E.safe("timing v1", lambda: G.timing(CFG, data["bandwidth_tbps"], variant=1)),
                      "v3": E.safe("timing v3", lambda: G.timing(CFG, data["bandwidth_tbps"], variant=3))}
    for n in ("v5", "v6"):
        if n in ok: data["timing"][n] = E.safe(f"timing {n}", lambda: G.timing(CFG, data["bandwidth_tbps"], variant=int(n[1])))
    print(f"timing done ({time.time() - T0:.0f} s)", flush=True)
    data["timing_pdl"] = {}
    if E.HAS_PDL:
        for n in ["v3+pdl"] + [c for c in ("v5+pdl", "v6+pdl") if c in ok]:
            data["timing_pdl"][n] = E.safe(f"timing {n}", lambda: E.time_one(int(n[1]), pdl=True))
            data["timing_pdl"][n + " M=8"] = E.safe(f"timing {n} M=8", lambda: E.time_one(int(n[1]), M=8, pdl=True))
    pi = data["probe_identity"] or {}
    runs = [(3, False)] + [(v, p) for v in (5, 6) for p in ((False, True) if E.HAS_PDL else (False,))
                           if f"v{v}" + ("+pdl" if p else "") in ok and pi.get(f"v{v}_probe_float32", {}).get("identical") == 16]
    data["probe"] = [E.safe(f"probe v{v}{' pdl' if p else ''}", lambda: probe(v, p)) for v, p in runs]
    print(f"probes done ({time.time() - T0:.0f} s)", flush=True)
    record()
    if E.HAS_PDL and time.time() - T0 < 75:
        data["pairs"] = E.safe("gemv+gdn pairs", lambda: E.pairs([3] + [v for v in (5, 6) if f"v{v}+pdl" in ok]))
    elif E.HAS_PDL: failures.append(f"gemv+gdn pairs skipped: {time.time() - T0:.0f} s elapsed")
    record()
    print(E.table(data), flush=True)
    print(summary(data), flush=True)

def record():
    "Write (or overwrite) the record: once after the probes, so a later hang or kill still leaves the numbers, and at the end."
    data["failures"] = failures
    data["wall_s"] = time.time() - T0
    if OUT:
        E.safe("record", lambda: E.write_record("gdn_v5_h200", "gdn_decode_v5 (v3's load schedule on a thread-block cluster of 2 (variant 5) "
                                                "or 4 (variant 6) blocks per head, values pushed through distributed shared memory) vs v1 and "
                                                "v3: bit-identity, graph timings with the heads fit, pdl graphs, the phase probe, GEMV+GDN pairs.",
                                                "PYTHONPATH=. python3 results/explore_gdn_v5.py " + OUT, data, out_dir=OUT))

if __name__ == "__main__":
    main()
