"""Chapter 06, v8 (a persistent stream: one producer warp's bulk copies feed the tensor-core warps): verify every
configuration of the sweep, time it beside the engine's v3 plan and cuBLAS in the same run, then all GEMVs of one token
with the best v8 per shape. Usage on the H200:  PYTHONPATH=. python3 results/explore_gemv_v8.py OUT_DIR
Writes OUT_DIR/gemv_v8_h200.json. A configuration that fails a check is reported and not timed."""
import sys, time
import torch
from qwen_engine import gemv as G
import explore_util
from qwen_engine.runtime import write_record

out = sys.argv[1] if len(sys.argv) > 1 else None
gen = torch.Generator(device="cuda").manual_seed(0)
t_start = time.time()
rec = dict(checks=[], identity=[], timings=[], errors=[])

guard = lambda what, fn: explore_util.guard(rec, what, fn)
ok = G.check_ok

bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
print(f"read bandwidth now: {bw:.3f} TB/s")

def pdl_identical(N, K, epi, RG, cfg):
    "The PDL launch path gives the same bits as the plain one (eager, one call each)."
    nc, C, D, bps = cfg
    q, sc = G.synth_fp8(N, K, gen)
    x = torch.randn(3, K, generator=gen, device="cuda").to(torch.bfloat16)
    res = torch.randn(3, N, generator=gen, device="cuda").to(torch.bfloat16) if epi == 1 else None
    a = G.gemv(q, sc, x, epi, res, S=nc, RG=RG, variant=8, bps=bps, D=D, C=C)
    b = G.gemv(q, sc, x, epi, res, S=nc, RG=RG, variant=8, bps=bps, D=D, C=C, pdl=True)
    return torch.equal(a, b)

good = {}
for N, K, epi, role in G.MODEL_SHAPES:
    RG = 2 if epi == 2 else 1
    for cfg in G.V8_SWEEP[RG]:
        nc, C, D, bps = cfg
        cs = [guard(f"check {N}x{K} {cfg} M={M}", lambda M=M: G.check_gemv(N, K, epi, M, gen, nc, RG, variant=8, bps=bps, D=D, C=C)) for M in (1, 5)]
        idn = guard(f"identity {N}x{K} {cfg}", lambda: G.check_multirow_identity(N, K, epi, gen, nc, RG, variant=8, bps=bps, D=D, C=C))
        pi = guard(f"pdl {N}x{K} {cfg}", lambda: pdl_identical(N, K, epi, RG, cfg))
        for c in cs:
            if c: c["ok"] = ok(c); rec["checks"].append(c)
        if idn: idn["pdl_bit_identical"] = pi; rec["identity"].append(idn)
        passed = all(c and c["ok"] for c in cs) and idn and idn["multirow_bit_identical"] and idn["repeat_bit_identical"] and pi
        print(f"{N}x{K} epi {epi} v8 {cfg}: {'ok' if passed else 'FAILED'} max_ulp {[c and round(c['max_ulp'], 3) for c in cs]} ident {idn and (idn['multirow_bit_identical'], idn['repeat_bit_identical'])} pdl {pi}")
        if passed: good.setdefault((N, K, epi), []).append(cfg)
# the awkward shapes, with the first configuration of each row-group kind
for N, K, epi in G.AWKWARD:
    RG = 2 if epi == 2 else 1
    nc, C, D, bps = G.V8_SWEEP[RG][0]
    for M in (1, 5):
        c = guard(f"awkward {N}x{K} M={M}", lambda: G.check_gemv(N, K, epi, M, gen, nc, RG, variant=8, bps=bps, D=D, C=C))
        if c: c["ok"] = ok(c); c["awkward"] = True; rec["checks"].append(c); print(f"awkward {N}x{K} epi {epi} M={M}: {'ok' if c['ok'] else 'FAILED'} max_ulp {c['max_ulp']:.3f}")
print(f"checks ok: {sum(c['ok'] for c in rec['checks'])}/{len(rec['checks'])} ({time.time() - t_start:.0f} s)")

table = []
for N, K, epi, role in G.MODEL_SHAPES:
    RG = 2 if epi == 2 else 1
    nbytes = G.bytes_of(N, K, 1, epi)
    # NOTE: the engine's plan when this ran (v3 or v11 then); since gemv_v14_h200 the plan is v14, and a re-run forces the old variant onto v14's S and KS: not the recorded baseline.
    v, S, RGe, KS = G.engine_plan(N, K, epi)
    row = dict(N=N, K=K, epi=epi, role=role, bytes=nbytes)
    us3 = guard("time v3", lambda: G.time_gemv(N, K, epi, S, RGe, gen, variant=3, KS=KS))
    row["v3_engine_us"] = us3
    row["cublas_us"] = guard("time cublas", lambda: G.time_scaled_mm(N, K, gen))
    for cfg in good.get((N, K, epi), []):
        nc, C, D, bps = cfg
        for pdl in (False, True):
            us = guard(f"time v8 {cfg}", lambda: G.time_gemv(N, K, epi, nc, RG, gen, variant=8, bps=bps, D=D, C=C, pdl=pdl))
            if us: rec["timings"].append(dict(N=N, K=K, epi=epi, cfg=cfg, pdl=pdl, us=us, frac=nbytes / (us * 1e-6) / (bw * 1e12)))
    mine = [t for t in rec["timings"] if (t["N"], t["K"], t["epi"]) == (N, K, epi) and not t["pdl"]]
    best = min(mine, key=lambda t: t["us"]) if mine else None
    row["v8_best"] = best
    table.append(row)
    f = lambda us: f"{us:7.2f} us {nbytes / (us * 1e-6) / (bw * 1e12):5.1%}" if us else "   -   "
    print(f"{N:6d}x{K:<6d} epi {epi}: v3 {f(us3)} | v8 best {best and best['cfg']} {f(best and best['us'])} | cuBLAS {f(row['cublas_us'])}  ({time.time() - t_start:.0f} s)")
rec["table"] = table

# all GEMVs of one token: the engine's plan vs the best v8 per shape (plain and PDL)
choice = {}
for r in table:
    if r["v8_best"]:
        nc, C, D, bps = r["v8_best"]["cfg"]
        choice[(r["N"], r["K"], r["epi"])] = (8, nc, 2 if r["epi"] == 2 else 1, 1, bps, D, C)
if len(choice) == len(G.MODEL_SHAPES):
    choice["lm_head"] = G.ENGINE_CHOICE["lm_head"]
    rec["token"] = {}
    for name, ch in (("v3_engine", None), ("v8_best", choice)):
        for pdl in (False, True):
            t = guard(f"token {name} pdl={pdl}", lambda: G.token_graph(ch, gen, bw, pdl=pdl))
            if t: rec["token"][f"{name}{'_pdl' if pdl else ''}"] = t; print(f"token {name:9s} pdl={pdl!s:5}: {t['ms']:.3f} ms, floor {t['floor_ms']:.3f}, ratio {t['ratio']:.3f}")
    rec["v8_choice"] = {f"{k[0]}x{k[1]}:{k[2]}": v for k, v in choice.items() if isinstance(k, tuple)}
print(f"done in {time.time() - t_start:.0f} s; errors: {len(rec['errors'])}")
write_record("gemv_v8_h200", "v8 (persistent, warp-specialised: a producer warp's cp.async.bulk row copies into a D-slot ring feed NC "
             "tensor-core warps; units of one row group x C K tiles split evenly over one or two blocks per SM; straddling groups "
             "reduced by the last block in block order): every configuration of V8_SWEEP checked against the float64 definition "
             "(M = 1 and 5, outputs poisoned), M = 8 rows bit-identical to M = 1, 20 repeats bit-identical, PDL launch bit-identical; "
             "timed (graph, weights rotated past L2) beside the engine's v3 plan and cuBLAS; all GEMVs of one token with the best "
             "v8 per shape vs the engine's plan, plain and with PDL.",
             "PYTHONPATH=. python3 results/explore_gemv_v8.py OUT_DIR", rec, out_dir=out)
