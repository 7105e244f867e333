# Exploration (chapter 08): gdn_decode_v3 (v1's arithmetic on a shorter chain) against v1 on the H200.
#   PYTHONPATH=. python3 results/explore_gdn_v3.py OUT_DIR          (from the repo root; < 100 s)
# 1. bit-identity to v1 of every candidate (v3 = transposed reductions, v4 = v3 with v1's butterflies, each also
#    launched with pdl=True when runtime.launch has it, and the probe builds): out (poisoned with NaN first; rows >= M
#    must stay NaN), conv ring and recurrent state after every call, 40 consecutive calls with M = 1..8, fp32 and
#    bf16 state; a candidate that fails is reported and excluded from the timings.
# 2. time per launch in a CUDA graph over 48 layers (gdn.timing: M = 1, 2, 4, 8, bf16 state, the heads_active fit,
#    the empty launch) for v1 and each candidate; v3/v4 with pdl=True at M = 1.
# 3. the phase probe: clock64 / globaltimer at v3's phase boundaries in block 0, each block's start and end.
# 4. with pdl: a graph of [16384 x 5120 GEMV (qkvz), GDN] x 48 layers, GDN launched plain or with pdl=True.
# Writes OUT_DIR/gdn_v3_h200.json (runtime.write_record); prints a short table last.
import inspect, sys, time, traceback
import numpy as np, torch
from qwen_engine.config import preset
from qwen_engine import gdn as G
from qwen_engine.runtime import time_graph, median, write_record, launch

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else None
CFG = preset("qwen3_5_27b")
DEV, BF = "cuda", torch.bfloat16
C, VD, HV, HID = CFG.gdn_conv_dim, CFG.gdn_value_dim, CFG.linear_num_value_heads, CFG.hidden_size
HAS_PDL = "pdl" in inspect.signature(launch).parameters
PHASES = ["issue pre-wait loads (state, w_b/w_a, conv_w, 16 ring slots, gates, norm_w)",
          "grid wait; ctl load issued", "b/a partials: wait x + weights, FMAs, 2M butterflies",
          "conv + SiLU: wait ctl, ring, qkvz; ring write", "barrier 1", "l2norm (warp 0) [+ gates at M = 8]",
          "barrier 2 (gates warp)", "recurrence: wait state, M steps", "state stores + barrier 3", "gated norm + out (warp 0)"]
failures, data = [], dict(has_pdl=HAS_PDL)

def safe(name, fn):
    try: return fn()
    except Exception as e:
        traceback.print_exc(); failures.append(f"{name}: {e!r}"[:400]); return None

def candidates():
    c = {"v3": dict(variant=3), "v4": dict(variant=4)}
    if HAS_PDL: c.update({"v3+pdl": dict(variant=3, pdl=True), "v4+pdl": dict(variant=4, pdl=True)})
    return c

def identity(T=40, seed=9):
    "Each candidate against v1 over T consecutive calls (M = 1..8 cycling), both state dtypes. Returns {name: {dtype: {...}}}."
    P = G.gdn_params(G.layer_weights(CFG, seed, DEV), "L.")
    gen = torch.Generator(device=DEV).manual_seed(seed)
    res = {n: {} for n in candidates()}
    for sd in (torch.float32, torch.bfloat16):
        key = str(sd).split(".")[-1]
        conv, rec = G.gdn_state(CFG, 3, DEV, sd)
        conv.copy_(G._rand(conv.shape, gen)); rec.copy_(G._rand(rec.shape, gen, 0.05, sd))
        st = {n: (conv.clone(), rec.clone()) for n in candidates()}
        ok = {n: dict(calls=0, identical=0, first_bad=None, error=None) for n in candidates()}
        ctl = torch.zeros(4, dtype=torch.int32, device=DEV)
        o1, oc = torch.empty(8, VD, dtype=BF, device=DEV), torch.empty(8, VD, dtype=BF, device=DEV)
        pos = 13
        for t in range(T):
            M = t % 8 + 1
            qkvz, x = G._rand((M, C + VD), gen), G._rand((M, HID), gen)
            ctl.fill_(pos); o1.fill_(float("nan"))
            G.gdn_decode(qkvz, x, **P, conv_state=conv, rec_state=rec, layer=2, ctl=ctl, cfg=CFG, out=o1, M=M, variant=1)
            for n, kw in candidates().items():
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
        for n in candidates(): res[n][key] = ok[n]
    return res

def probe_identity(T=16, seed=11, variants=(3, 4)):
    "The probe builds of `variants` (M = 1, fp32 and bf16 state) against v1 over T consecutive calls: must be identical too."
    P = G.gdn_params(G.layer_weights(CFG, seed, DEV), "L.")
    gen = torch.Generator(device=DEV).manual_seed(seed)
    res = {}
    probe = torch.zeros(G.PROBE_WORDS15, dtype=torch.int64, device=DEV)
    for v in variants:
        for sd in (torch.float32, torch.bfloat16):
            conv, rec = G.gdn_state(CFG, 1, DEV, sd)
            conv.copy_(G._rand(conv.shape, gen)); rec.copy_(G._rand(rec.shape, gen, 0.05, sd))
            c2, r2 = conv.clone(), rec.clone()
            ctl = torch.zeros(4, dtype=torch.int32, device=DEV)
            o1, o2 = torch.empty(1, VD, dtype=BF, device=DEV), torch.empty(1, VD, dtype=BF, device=DEV)
            same = 0
            for t in range(T):
                qkvz, x = G._rand((1, C + VD), gen), G._rand((1, HID), gen)
                ctl.fill_(50 + t); o1.fill_(float("nan")); o2.fill_(float("nan"))
                G.gdn_decode(qkvz, x, **P, conv_state=conv, rec_state=rec, layer=0, ctl=ctl, cfg=CFG, out=o1, variant=1)
                G.gdn_decode(qkvz, x, **P, conv_state=c2, rec_state=r2, layer=0, ctl=ctl, cfg=CFG, out=o2, variant=v, probe=probe)
                same += bool(torch.equal(o1, o2) and torch.equal(rec, r2) and torch.equal(conv, c2) and not o2.isnan().any())
            res[f"v{v}_probe_{str(sd).split('.')[-1]}"] = dict(calls=T, identical=same)
    return res

def passed(ident, name):
    r = (ident or {}).get(name)
    return bool(r) and all(d["error"] is None and d["calls"] > 0 and d["identical"] == d["calls"] for d in r.values())

_SHARED = {}
def shared_layers(n=48):
    "48 layers' distinct b/a weights and fp32 states (as gdn.timing builds them), for the extra timings."
    if not _SHARED:
        gen = torch.Generator(device=DEV).manual_seed(5)
        _SHARED["P"] = [G.gdn_params(G.layer_weights(CFG, i, DEV), "L.") for i in range(n)]
        _SHARED["qkvz"], _SHARED["x"] = G._rand((G.MAX_M, C + VD), gen), G._rand((G.MAX_M, HID), gen)
        conv, rec = G.gdn_state(CFG, n, DEV, torch.float32)
        conv.copy_(G._rand(conv.shape, gen)); rec.copy_(G._rand(rec.shape, gen, 0.05, torch.float32))
        _SHARED["conv"], _SHARED["rec"] = conv, rec
        _SHARED["ctl"] = torch.tensor([100, 0, 0, 0], dtype=torch.int32, device=DEV)
        _SHARED["out"] = torch.empty(G.MAX_M, VD, dtype=BF, device=DEV)
    return _SHARED

def time_one(variant, M=1, n=48, **kw):
    "us per launch in a graph of n launches over n layers, fp32 state (gdn.timing's method), extra keywords to gdn_decode."
    S = shared_layers(n)
    f = lambda i: G.gdn_decode(S["qkvz"], S["x"], **S["P"][i % n], conv_state=S["conv"], rec_state=S["rec"], layer=i % n,
                               ctl=S["ctl"], cfg=CFG, out=S["out"], M=M, variant=variant, **kw)
    return 1000 * median(time_graph(f, calls=n, reps=20))

def clock_khz():
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceProperties(torch.cuda.current_device())["clockRate"]
    except Exception: return None

def probe_run(variant, pdl=False, n=48):
    "The probe build in a graph of n launches (layers rotated), one probe row per launch; per-phase medians of block 0."
    S = shared_layers(n)
    pr = torch.zeros(n, G.PROBE_WORDS15, dtype=torch.int64, device=DEV)
    kw = dict(pdl=True) if pdl else {}
    f = lambda i: G.gdn_decode(S["qkvz"], S["x"], **S["P"][i % n], conv_state=S["conv"], rec_state=S["rec"], layer=i % n,
                               ctl=S["ctl"], cfg=CFG, out=S["out"], variant=variant, probe=pr[i], **kw)
    us = 1000 * median(time_graph(f, calls=n, reps=10))
    torch.cuda.synchronize()
    return dict(variant=variant, pdl=pdl, us_per_launch=us, **analyse_probe(pr.cpu(), clock_khz()))

def analyse_probe(pr, khz):
    "Probe rows [n launches, PROBE_WORDS] int64 -> per-phase medians of block 0 (cycles, ns), block start skew, span, gaps."
    NP = 11                                                                    # differences in int64 first: globaltimer ~1e18 ns
    tc, tg = pr[:, 0:2 * NP:2], pr[:, 1:2 * NP:2]
    dc = (tc[:, 1:] - tc[:, :-1]).double()                                     # [n, 10] cycles per phase
    span_c, span_g = (tc[:, -1] - tc[:, 0]).double(), (tg[:, -1] - tg[:, 0]).double()
    t0 = pr[:, 2 * NP:2 * NP + HV].min()
    p = (pr - t0).double()
    ghz_meas = float((span_c / span_g.clamp_min(1)).median())
    ghz_nom = khz / 1e6 if khz else 1.98
    ghz = ghz_meas if abs(ghz_meas / ghz_nom - 1) < 0.1 else ghz_nom      # globaltimer may tick coarsely: then the nominal clock
    starts, ends = p[:, 2 * NP:2 * NP + HV], p[:, 2 * NP + 64:2 * NP + 64 + HV]
    skew = (starts.max(1).values - starts.min(1).values)
    span = (ends.max(1).values - starts.min(1).values)
    gap = starts[1:].min(1).values - ends[:-1].max(1).values                    # next launch's first block - this launch's last block end
    return dict(ghz_measured=ghz_meas, ghz_clockrate=(khz / 1e6 if khz else None), ghz_used=ghz,
                phases=[dict(phase=PHASES[k], cycles=float(dc[:, k].median()), ns=float(dc[:, k].median()) / ghz) for k in range(10)],
                block0_ns_clock=float(span_c.median()) / ghz, block0_ns_globaltimer=float(span_g.median()),
                block_start_skew_ns=float(skew.median()), launch_span_ns=float(span.median()),
                gap_between_launches_ns=float(gap.median()))

def pairs(variants, n=48):
    "A graph of [GEMV 16384 x 5120 -> qkvz, GDN(layer i)] x n: us per pair; GDN plain or pdl=True; GEMV alone as the base."
    from qwen_engine.gemv import gemv, synth_fp8, engine_kwargs
    from qwen_engine.runtime import rotation_count
    N, K = C + VD, HID
    ekw = engine_kwargs(N, K, 0)                        # the engine's GEMV configuration for this shape, whatever its variant
    v, Sg, RG, KS = ekw["variant"], ekw["S"], ekw["RG"], ekw["KS"]
    gen = torch.Generator(device=DEV).manual_seed(21)
    nw = rotation_count(N * K)
    ws = [synth_fp8(N, K, gen) for _ in range(nw)]
    S = shared_layers(n)
    x = S["x"][:1].contiguous()
    qkvz = torch.empty(1, N, dtype=BF, device=DEV)
    gkw = lambda pdl: dict(ekw, out=qkvz, **(dict(pdl=True) if pdl else {}))
    def pair(gv, gpdl, gemv_pdl):
        def f(i):
            w = ws[i % nw]
            gemv(w[0], w[1], x, 0, None, **gkw(gemv_pdl))
            if gv: G.gdn_decode(qkvz, x, **S["P"][i % n], conv_state=S["conv"], rec_state=S["rec"], layer=i % n, ctl=S["ctl"], cfg=CFG,
                                out=S["out"], variant=gv, **(dict(pdl=True) if gpdl else {}))
        return f
    res = dict(gemv_variant=v, S=Sg, RG=RG, KS=KS, weight_sets=nw)
    res["gemv_alone_us"] = 1000 * median(time_graph(pair(None, False, False), calls=n, reps=10))
    res["gemv+v1_us"] = 1000 * median(time_graph(pair(1, False, False), calls=n, reps=10))
    for gv in variants:
        res[f"gemv+v{gv}_us"] = 1000 * median(time_graph(pair(gv, False, False), calls=n, reps=10))
        res[f"gemv+v{gv}(pdl)_us"] = 1000 * median(time_graph(pair(gv, True, False), calls=n, reps=10))
        try: res[f"gemv(pdl)+v{gv}(pdl)_us"] = 1000 * median(time_graph(pair(gv, True, True), calls=n, reps=10))
        except Exception as e: res[f"gemv(pdl)+v{gv}(pdl)_error"] = repr(e)[:200]
        # the same pair eagerly, plain vs pdl, from one state: identical (a PDL race would show here)
        c0, r0 = S["conv"][:1].clone(), S["rec"][:1].clone()
        outs = []
        for gpdl in (False, True):
            c, r = c0.clone(), r0.clone(); o = torch.full((1, VD), float("nan"), dtype=BF, device=DEV)
            for t in range(4):
                gemv(ws[t % nw][0], ws[t % nw][1], x, 0, None, **gkw(gpdl))
                G.gdn_decode(qkvz, x, **S["P"][0], conv_state=c, rec_state=r, layer=0, ctl=S["ctl"], cfg=CFG, out=o, variant=gv,
                             **(dict(pdl=True) if gpdl else {}))
            torch.cuda.synchronize(); outs.append((o, c, r))
        res[f"v{gv}_pdl_pair_identical"] = all(torch.equal(a, b) for a, b in zip(*outs)) and not outs[1][0].isnan().any()
    del ws
    return res

def table(d):
    L = [f"has pdl: {d['has_pdl']}; bandwidth {d.get('bandwidth_tbps', float('nan')):.3f} TB/s; wall {d.get('wall_s', 0):.0f} s"]
    for n, r in (d.get("identity") or {}).items():
        L.append(f"identity {n:>7} vs v1: " + ", ".join(f"{k} {v['identical']}/{v['calls']}" + (f" ERROR {v['error']}" if v["error"] else "")
                                                       + (f" first bad {v['first_bad']}" if v["first_bad"] else "") for k, v in r.items()))
    for n, r in (d.get("probe_identity") or {}).items(): L.append(f"identity {n}: {r['identical']}/{r['calls']}")
    for v, t in (d.get("timing") or {}).items():
        if not t: continue
        row = lambda M, s: next((r["us"] for r in t["rows"] if r["M"] == M and r["state"] == s), float("nan"))
        L.append(f"{v}: M=1 {row(1, 'float32'):.2f} us, M=2 {row(2, 'float32'):.2f}, M=4 {row(4, 'float32'):.2f}, M=8 {row(8, 'float32'):.2f} "
                 f"({row(8, 'float32') / 8:.2f}/token), bf16 M=1 {row(1, 'bfloat16'):.2f}; fit {t['fit_fixed_us']:.2f} us + {t['fit_per_head_us']:.4f} us/head; "
                 f"1 head {t['heads'][0]['us']:.2f}; empty {t['null_us']:.2f}")
    for k, us in (d.get("timing_pdl") or {}).items(): L.append(f"{k} (graph of 48, pdl=True): {us:.2f} us/launch")
    for pr in d.get("probe") or []:
        if not pr: continue
        L.append(f"probe v{pr['variant']}{' pdl' if pr['pdl'] else ''}: {pr['us_per_launch']:.2f} us/launch; block 0 {pr['block0_ns_clock']:.0f} ns "
                 f"(globaltimer {pr['block0_ns_globaltimer']:.0f}); start skew {pr['block_start_skew_ns']:.0f} ns; launch span {pr['launch_span_ns']:.0f} ns; "
                 f"gap to next launch {pr['gap_between_launches_ns']:.0f} ns; clock {pr['ghz_used']:.2f} GHz")
        for ph in pr["phases"]: L.append(f"    {ph['ns']:7.0f} ns {ph['cycles']:7.0f} cyc  {ph['phase']}")
    p = d.get("pairs")
    if p: L.append("GEMV 16384x5120 + GDN pairs (us per pair, 48 in a graph): " + ", ".join(f"{k[:-3] if k.endswith('_us') else k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                                                                                         for k, v in p.items() if k.endswith("_us") or k.endswith("identical")))
    if d.get("failures"): L.append("FAILURES: " + "; ".join(d["failures"]))
    return "\n".join(L)

def main():
    if not torch.cuda.is_available(): sys.exit("explore_gdn_v3: needs a GPU (CuPy and CUDA torch); the CPU checks are tests/test_gdn.py")
    torch.cuda.init()
    data["bandwidth_tbps"] = safe("bandwidth", lambda: __import__("qwen_engine.gemv", fromlist=["bandwidth_now"]).bandwidth_now()) or 4.55
    data["identity"] = safe("identity", identity)
    data["probe_identity"] = safe("probe identity", probe_identity)
    ok = [n for n in candidates() if passed(data["identity"], n)]
    data["passed"] = ok
    print("passed:", ok, f"({time.time() - T0:.0f} s)", flush=True)
    data["timing"] = {"v1": safe("timing v1", lambda: G.timing(CFG, data["bandwidth_tbps"], variant=1))}
    for n in ("v3", "v4"):
        if n in ok: data["timing"][n] = safe(f"timing {n}", lambda: G.timing(CFG, data["bandwidth_tbps"], variant=int(n[1])))
    print(f"timing done ({time.time() - T0:.0f} s)", flush=True)
    data["timing_pdl"] = {}
    for n in ("v3+pdl", "v4+pdl"):
        if n in ok:
            data["timing_pdl"][n] = safe(f"timing {n}", lambda: time_one(int(n[1]), pdl=True))
            data["timing_pdl"][n + " M=8"] = safe(f"timing {n} M=8", lambda: time_one(int(n[1]), M=8, pdl=True))
    pi = data["probe_identity"] or {}
    probes = [(v, False) for v in (3, 4) if f"v{v}" in ok and pi.get(f"v{v}_probe_float32", {}).get("identical") == 16]
    probes += [(3, True)] if "v3+pdl" in ok and (3, False) in probes else []
    data["probe"] = [safe(f"probe v{v}{' pdl' if p else ''}", lambda: probe_run(v, p)) for v, p in probes]
    if HAS_PDL and time.time() - T0 < 80:                                      # the run must stay under ~100 s
        data["pairs"] = safe("gemv+gdn pairs", lambda: pairs([v for v in (3, 4) if f"v{v}+pdl" in ok]))
    elif HAS_PDL: failures.append(f"gemv+gdn pairs skipped: {time.time() - T0:.0f} s elapsed")
    data["failures"] = failures
    data["wall_s"] = time.time() - T0
    if OUT:
        safe("record", lambda: write_record("gdn_v3_h200", "gdn_decode_v3 (v1's arithmetic, loads hoisted before the grid wait, the ring's 16 slots "
                                            "preloaded; variant 3 transposed recurrence reductions, 4 v1's butterflies) vs v1: bit-identity, graph "
                                            "timings with the heads fit, the phase probe, GEMV+GDN pairs with and without PDL.",
                                            "PYTHONPATH=. python3 results/explore_gdn_v3.py " + OUT, data, out_dir=OUT))
    print(table(data), flush=True)

if __name__ == "__main__":
    main()
