# Exploration (chapter 08): gdn_decode_v7 (v3 with a shorter tail: gates in two warps, SiLU(z) before the recurrence,
# the gated norm before the state stores) and gdn_decode_v9 (v7's schedule on two blocks per head, no cluster: the norm's
# lane partials cross through tagged words in global memory) against v3 (the engine's kernel) and FLA on the H200.
#   PYTHONPATH=. python3 results/explore_gdn_v7.py OUT_DIR          (from the repo root; < 120 s)
# Reuses results/explore_gdn_v3.py's machinery (graph timings, probe analysis, GEMV+GDN pairs):
# 1. bit-identity to v3 of v7 (stores inside the last recurrence step, variant 7) and v8 (stores after the core
#    barrier, variant 8), plain and with pdl=True: out (poisoned with NaN; rows >= M must stay NaN), conv ring and
#    state after each of 40 consecutive calls with M = 1..8 (so M = 1 and M = 8 both), fp32 and bf16 state; and the
#    probe builds against v1 (= v3) over 16 calls. A failing candidate is reported and not timed. v9 (variant 9) runs
#    last, after the v7/v8 record is written: a block that polls for its peer traps (a CUDA error) after ~3 s rather
#    than hang, and an error there would end the process's CUDA work.
# 2. gdn.timing (graph of 48 layers: M = 1, 2, 4, 8, bf16, the heads fit, the empty launch) for v3, v7, v9 (v8: a graph
#    of 48 at M = 1 and 8 only); graphs of 48 launches with pdl=True ("chained", the 4.06 us method) at M = 1 and 8 for
#    each.
# 3. the phase probe of block 0 for v3, v7, v8 (plain and pdl); FLA's fused_recurrent_gated_delta_rule in the same run
#    (gdn.fla_peer; 'absent' when FLA is not installed); then v9's identity, timings and probes.
# 4. if time allows (< 75 s so far), a graph of [16384 x 5120 GEMV, GDN] x 48, GDN plain or pdl.
# Writes OUT_DIR/gdn_v7_h200.json (after the timings, and again at the end); prints a short table last.
import importlib.util, os, sys, time
import torch
from qwen_engine import gdn as G

_spec = importlib.util.spec_from_file_location("explore_gdn_v3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "explore_gdn_v3.py"))
E = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(E)
T0, OUT, CFG, DEV, BF = time.time(), (sys.argv[1] if len(sys.argv) > 1 else None), E.CFG, E.DEV, E.BF
C, VD, HID = E.C, E.VD, E.HID
PHASES3 = list(E.PHASES)
PHASES7 = ["issue pre-wait loads (state, w_b/w_a, conv_w, 16 ring slots, gates, norm_w)",
           "grid wait; ctl load issued", "b/a partials: wait x + weights, FMAs, 2M butterflies",
           "conv + SiLU: wait ctl, ring, qkvz; ring write", "barrier 1",
           "l2norm (warp 0) ‖ beta (w15) ‖ decay (w14) ‖ SiLU(z) (w 2M)", "barrier 2",
           "recurrence: wait state, M steps (v7: other warps' stores in the last step)", "core barrier",
           "gated norm + out, then warp 0's state stores"]
PHASES9 = list(PHASES7[:8]) + ["core barrier", "norm: my 16 partials out, the peer's 16 polled in, out, then my state stores"]
CANDS = {"v7": dict(variant=7), "v8": dict(variant=8)}
if E.HAS_PDL: CANDS.update({"v7+pdl": dict(variant=7, pdl=True), "v8+pdl": dict(variant=8, pdl=True)})
CANDS9 = {"v9": dict(variant=9), **({"v9+pdl": dict(variant=9, pdl=True)} if E.HAS_PDL else {})}
data = dict(has_pdl=E.HAS_PDL, reference_variant=3)
failures = E.failures                                    # E.safe appends here

def identity(T=40, seed=9, CANDS=CANDS):
    "Each candidate against v3 over T consecutive calls (M = 1..8 cycling), both state dtypes (explore_gdn_v3's check, v3 as the reference)."
    P = G.gdn_params(G.layer_weights(CFG, seed, DEV), "L.")
    gen = torch.Generator(device=DEV).manual_seed(seed)
    res = {n: {} for n in CANDS}
    for sd in (torch.float32, torch.bfloat16):
        key = str(sd).split(".")[-1]
        conv, rec = G.gdn_state(CFG, 3, DEV, sd)
        conv.copy_(G._rand(conv.shape, gen)); rec.copy_(G._rand(rec.shape, gen, 0.05, sd))
        st = {n: (conv.clone(), rec.clone()) for n in CANDS}
        ok = {n: dict(calls=0, identical=0, first_bad=None, error=None) for n in CANDS}
        ctl = torch.zeros(4, dtype=torch.int32, device=DEV)
        o1, oc = torch.empty(8, VD, dtype=BF, device=DEV), torch.empty(8, VD, dtype=BF, device=DEV)
        pos = 13
        for t in range(T):
            M = t % 8 + 1
            qkvz, x = G._rand((M, C + VD), gen), G._rand((M, HID), gen)
            ctl.fill_(pos); o1.fill_(float("nan"))
            G.gdn_decode(qkvz, x, **P, conv_state=conv, rec_state=rec, layer=2, ctl=ctl, cfg=CFG, out=o1, M=M, variant=3)
            for n, kw in CANDS.items():
                if ok[n]["error"]: continue
                c2, r2 = st[n]
                oc.fill_(float("nan"))
                try:
                    G.gdn_decode(qkvz, x, **P, conv_state=c2, rec_state=r2, layer=2, ctl=ctl, cfg=CFG, out=oc, M=M, **kw)
                    torch.cuda.synchronize()
                except Exception as e:
                    ok[n]["error"] = repr(e)[:300]; continue
                same = torch.equal(o1[:M], oc[:M]) and not oc[:M].isnan().any() and bool(oc[M:].isnan().all()) \
                    and torch.equal(rec, r2) and torch.equal(conv, c2)
                ok[n]["calls"] += 1; ok[n]["identical"] += bool(same)
                if not same and ok[n]["first_bad"] is None:
                    d = (o1[:M].float() - oc[:M].float()).abs()
                    ok[n]["first_bad"] = dict(call=t, M=M, out_diff=int((o1[:M] != oc[:M]).sum()), out_max=float(d[d == d].max()) if (d == d).any() else None,
                                              out_nan=int(oc[:M].isnan().sum()), beyond_M_written=not bool(oc[M:].isnan().all()),
                                              rec_diff=int((rec != r2).sum()), conv_diff=int((conv != c2).sum()))
            pos += M
        for n in CANDS: res[n][key] = ok[n]
    return res

def probe(v, pdl=False):
    E.PHASES = PHASES9 if v == 9 else PHASES7 if v >= 7 else PHASES3
    return E.probe_run(v, pdl)

def fla():
    r = G.fla_peer(CFG)
    if "error" in r: r["absent"] = True
    return r

def m1(t):
    return next((r["us"] for r in t["rows"] if r["M"] == 1 and r["state"] == "float32"), float("nan")) if t else float("nan")

def summary(d):
    "The last lines: us per layer per token at M = 1 (fp32 state), standalone graph and chained with PDL, against the 2.5 us goal."
    L = []
    for n, r in (d.get("identity") or {}).items():
        L.append(f"identity {n:>7} vs v3: " + ", ".join(f"{k} {v['identical']}/{v['calls']}" + (f" ERROR {v['error']}" if v["error"] else "")
                                                       + (f" first bad {v['first_bad']}" if v["first_bad"] else "") for k, v in r.items()))
    L.append("SUMMARY (us per layer per token, M = 1, fp32 state; goal <= 2.5, stretch 2.0):")
    for n in ("v3", "v7", "v8", "v9"):
        t = (d.get("timing") or {}).get(n)
        tp = (d.get("timing_plain") or {}).get(n)
        pd = (d.get("timing_pdl") or {}).get(n + "+pdl")
        pd8 = (d.get("timing_pdl") or {}).get(n + "+pdl M=8")
        ident = "reference" if n == "v3" else ("bit-identical to v3" if n in (d.get("passed") or []) else "NOT identical / failed: not timed")
        if not t and pd is None and tp is None: L.append(f"  {n}: {ident}"); continue
        f2 = lambda v: "n/a" if v is None else f"{v:.2f}"
        L.append(f"  {n}: standalone graph {f2(m1(t) if t else tp)}; chained with pdl {f2(pd)}"
                 + (f"; M=8 pdl {pd8 / 8:.2f}/token" if pd8 else "") + (f"; fit {t['fit_fixed_us']:.2f} + {t['fit_per_head_us']:.4f}/head" if t else "")
                 + f"  [{ident}]")
    f = d.get("fla") or {}
    L.append(f"  FLA fused_recurrent: {f['us']:.2f} us (recurrence only)" if "us" in f else "  FLA: absent" if f.get("absent") else f"  FLA: {f}")
    p = d.get("pairs") or {}
    if p.get("gemv_alone_us"):
        for k, v in p.items():
            if k.endswith("_us") and k != "gemv_alone_us": L.append(f"  pair {k[:-3]}: {v:.2f} (GDN share {v - p['gemv_alone_us']:.2f})")
    if d.get("failures"): L.append("  FAILURES: " + "; ".join(d["failures"]))
    return "\n".join(L)

def record():
    "Write (or overwrite) the record: once after the timings, so a later hang or kill still leaves the numbers, and at the end."
    data["failures"] = failures
    data["wall_s"] = time.time() - T0
    if OUT:
        E.safe("record", lambda: E.write_record("gdn_v7_h200", "gdn_decode_v7 (v3 with beta and the decay in two warps, SiLU(z) before the "
                                                "recurrence, the gated norm before the state stores; variant 7 stores inside the last step, 8 after the "
                                                "core barrier) vs v3 and FLA: bit-identity to v3, graph timings with the heads fit, chained pdl graphs, "
                                                "the phase probe, GEMV+GDN pairs.",
                                                "PYTHONPATH=. python3 results/explore_gdn_v7.py " + OUT, data, out_dir=OUT))

def main():
    if not torch.cuda.is_available(): sys.exit("explore_gdn_v7: needs a GPU (CuPy and CUDA torch); the CPU checks are tests/test_gdn.py")
    torch.cuda.init()
    data["bandwidth_tbps"] = E.safe("bandwidth", lambda: __import__("qwen_engine.gemv", fromlist=["bandwidth_now"]).bandwidth_now()) or 4.55
    data["identity"] = E.safe("identity", identity)
    data["probe_identity"] = E.safe("probe identity", lambda: E.probe_identity(variants=(7, 8)))
    ok = [n for n in CANDS if E.passed(data["identity"], n)]
    data["passed"] = ok
    print("passed:", ok, f"({time.time() - T0:.0f} s)", flush=True)
    data["timing"] = {"v3": E.safe("timing v3", lambda: G.timing(CFG, data["bandwidth_tbps"], variant=3))}
    if "v7" in ok: data["timing"]["v7"] = E.safe("timing v7", lambda: G.timing(CFG, data["bandwidth_tbps"], variant=7))
    data["timing_plain"] = {}                              # v8: only M = 1 and 8 standalone (the full sweep is v7's; time budget)
    if "v8" in ok:
        data["timing_plain"]["v8"] = E.safe("timing v8", lambda: E.time_one(8))
        data["timing_plain"]["v8 M=8"] = E.safe("timing v8 M=8", lambda: E.time_one(8, M=8))
    print(f"timing done ({time.time() - T0:.0f} s)", flush=True)
    data["timing_pdl"] = {}
    if E.HAS_PDL:
        for n in ["v3+pdl"] + [c for c in ("v7+pdl", "v8+pdl") if c in ok]:
            data["timing_pdl"][n] = E.safe(f"timing {n}", lambda: E.time_one(int(n[1]), pdl=True))
            data["timing_pdl"][n + " M=8"] = E.safe(f"timing {n} M=8", lambda: E.time_one(int(n[1]), M=8, pdl=True))
    record()
    pi = data["probe_identity"] or {}
    runs = [(3, False)] + ([(3, True)] if E.HAS_PDL else [])
    runs += [(v, p) for v in (7, 8) for p in ((False, True) if E.HAS_PDL else (False,))
             if f"v{v}" + ("+pdl" if p else "") in ok and pi.get(f"v{v}_probe_float32", {}).get("identical") == 16]
    data["probe"] = [E.safe(f"probe v{v}{' pdl' if p else ''}", lambda: probe(v, p)) for v, p in runs]
    print(f"probes done ({time.time() - T0:.0f} s)", flush=True)
    data["fla"] = E.safe("fla", fla)                      # before v9: a fault there would end this process's CUDA work
    print(f"fla done ({time.time() - T0:.0f} s)", flush=True)
    record()
    # v9 last: its identity, then (if identical) its timings and probes
    ident9 = E.safe("identity v9", lambda: identity(CANDS=CANDS9)) or {}
    data["identity"] = {**(data["identity"] or {}), **ident9}
    ok9 = [n for n in CANDS9 if E.passed(ident9, n)]
    data["passed"] = ok = ok + ok9
    print("passed:", ok, f"({time.time() - T0:.0f} s)", flush=True)
    if "v9" in ok:
        data["timing"]["v9"] = E.safe("timing v9", lambda: G.timing(CFG, data["bandwidth_tbps"], variant=9))
        data["probe_identity"] = {**(data["probe_identity"] or {}), **(E.safe("probe identity v9", lambda: E.probe_identity(variants=(9,))) or {})}
    if "v9+pdl" in ok:
        data["timing_pdl"]["v9+pdl"] = E.safe("timing v9+pdl", lambda: E.time_one(9, pdl=True))
        data["timing_pdl"]["v9+pdl M=8"] = E.safe("timing v9+pdl M=8", lambda: E.time_one(9, M=8, pdl=True))
    pi = data["probe_identity"] or {}
    if pi.get("v9_probe_float32", {}).get("identical") == 16:
        data["probe"] += [E.safe(f"probe v9{' pdl' if p else ''}", lambda: probe(9, p)) for p in ((False, True) if "v9+pdl" in ok else (False,))]
    print(f"v9 done ({time.time() - T0:.0f} s)", flush=True)
    record()
    if E.HAS_PDL and time.time() - T0 < 75:
        data["pairs"] = E.safe("gemv+gdn pairs", lambda: E.pairs([3] + [v for v in (7, 8, 9) if f"v{v}+pdl" in ok]))
    elif E.HAS_PDL: failures.append(f"gemv+gdn pairs skipped: {time.time() - T0:.0f} s elapsed")
    record()
    print(E.table({**data, "identity": None}), flush=True)   # its identity lines say 'vs v1'; ours (vs v3) are in the summary
    print(summary(data), flush=True)

if __name__ == "__main__":
    main()
