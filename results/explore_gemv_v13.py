"""Chapter 06, v13 (whole-row streams: one load instruction reads 512 contiguous bytes of one row; the mma's n axis holds
K segments and the diagonal is kept): the ceiling of a plain stream of each shape's size (chained with PDL), then every
configuration of V13_SWEEP verified (float64 definition at M = 1 and 5, outputs poisoned; M = 8 rows bit-identical to
M = 1; 20 repeats), awkward shapes, timings with PDL beside the engine's plan and v13's DRY stream in the same run, and
all GEMVs of one token for the engine's plan and v13's best.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v13.py OUT_DIR (gemv_v13_h200.json)"""
import sys, time
import torch
from qwen_engine import gemv as G
import explore_util
from qwen_engine.runtime import write_record

out = sys.argv[1] if len(sys.argv) > 1 else None
gen = torch.Generator(device="cuda").manual_seed(0)
t_start = time.time()
rec = dict(checks=[], identity=[], timings=[], probe=[], errors=[])
guard = lambda what, fn: explore_util.guard(rec, what, fn)
WHAT = ("v13 (whole-row streams, K segments on the mma's n axis): a plain stream of each shape's size chained with PDL "
        "(the ceiling); every configuration of V13_SWEEP checked against the float64 definition (M = 1 and 5, outputs poisoned), "
        "M = 8 rows bit-identical to M = 1, 20 repeats identical, awkward shapes; timed with PDL beside the engine's plan and "
        "v13's DRY stream (graph, weights rotated past L2); M = 8 at the largest shape; all GEMVs of one token.")
save = lambda: write_record("gemv_v13_h200", WHAT, "PYTHONPATH=. python3 results/explore_gemv_v13.py OUT_DIR", rec, out_dir=out)   # also after each part
el = lambda: f"({time.time() - t_start:.0f} s)"

bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
print(f"read bandwidth now: {bw:.3f} TB/s {el()}")
guard("compile", lambda: G.get_kernel("gemv", G.V13_KERNELS[0], together=G.V13_KERNELS)); print(f"compiled {len(G.V13_KERNELS)} v13 builds {el()}")

# 1. The ceiling: a plain stream of each shape's weight bytes, distinct buffers, chained in a graph.
for N, K, epi, role in G.MODEL_SHAPES:
    for bps, U, pdl in ((2, 8, True), (4, 8, False), (4, 8, True), (2, 16, True), (4, 16, True), (1, 16, True)):
        us = guard(f"probe {N}x{K}", lambda: G.stream_probe(N * K, blocks_per_sm=bps, pdl=pdl, U=U))
        if us: rec["probe"].append(dict(N=N, K=K, bytes=N * K, bps=bps, U=U, pdl=pdl, us=us, frac=N * K / (us * 1e-6) / (bw * 1e12)))
    best = max((p for p in rec["probe"] if (p["N"], p["K"]) == (N, K)), key=lambda p: p["frac"], default=None)
    print(f"probe {N}x{K}: best {best and round(100 * best['frac'], 1)} % ({best and best['us']:.2f} us, bps {best and best['bps']} pdl {best and best['pdl']}) {el()}")

# 2. Correctness of every configuration.
good = {}
for (N, K, epi), cfgs in G.V13_SWEEP.items():
    RG = 2 if epi == 2 else 1
    for cfg in cfgs:
        SR, SK, RP, D, E, MB, KS = cfg
        kw = dict(variant=13, KS=KS, D=D, minb=MB, v13opt=(SK, RP, bool(E)))
        cs = [guard(f"check {N}x{K} {cfg} M={M}", lambda M=M: G.check_gemv(N, K, epi, M, gen, SR, RG, **kw)) for M in (1, 5)]
        idn = guard(f"identity {N}x{K} {cfg}", lambda: G.check_multirow_identity(N, K, epi, gen, SR, RG, **kw))
        for c in cs:
            if c: c["ok"] = G.check_ok(c); c["cfg"] = cfg; rec["checks"].append(c)
        if idn: idn["cfg"] = cfg; idn.pop("v13opt", None); rec["identity"].append(idn)
        passed = all(c and c["ok"] for c in cs) and idn and idn["multirow_bit_identical"] and idn["repeat_bit_identical"]
        print(f"{N}x{K} epi {epi} v13 {cfg}: {'ok' if passed else 'FAILED'} max_ulp {[c and round(c['max_ulp'], 3) for c in cs]} "
              f"ident {idn and (idn['multirow_bit_identical'], idn['repeat_bit_identical'])}")
        if passed: good.setdefault((N, K, epi), []).append(cfg)
AWK = [(128, 512, 0, (4, 1, 1, 3, 1, 1, 1)), (256, 512, 1, (4, 1, 1, 3, 1, 1, 2)), (384, 2560, 2, (4, 1, 1, 3, 1, 1, 3)),
       (640, 17408, 1, (4, 1, 1, 3, 1, 1, 3)), (1280, 1536, 0, (2, 2, 2, 3, 1, 1, 1)), (256, 6144, 2, (2, 4, 2, 3, 1, 1, 2))]
for N, K, epi, cfg in AWK:
    SR, SK, RP, D, E, MB, KS = cfg
    kw = dict(variant=13, KS=KS, D=D, minb=MB, v13opt=(SK, RP, bool(E)))
    for M in (1, 5):
        c = guard(f"awkward {N}x{K} M={M}", lambda: G.check_gemv(N, K, epi, M, gen, SR, 2 if epi == 2 else 1, **kw))
        if c: c["ok"] = G.check_ok(c); c["awkward"] = True; c["cfg"] = cfg; rec["checks"].append(c); print(f"awkward {N}x{K} epi {epi} M={M} {cfg}: {'ok' if c['ok'] else 'FAILED'} max_ulp {c['max_ulp']:.3f}")
    idn = guard(f"identity awkward {N}x{K}", lambda: G.check_multirow_identity(N, K, epi, gen, SR, 2 if epi == 2 else 1, **kw))
    if idn: idn["cfg"] = cfg; idn["awkward"] = True; idn.pop("v13opt", None); rec["identity"].append(idn); print(f"   identity {idn['multirow_bit_identical']} {idn['repeat_bit_identical']}")
save()
print(f"checks ok: {sum(c['ok'] for c in rec['checks'])}/{len(rec['checks'])}; identity ok: "
      f"{sum(i['multirow_bit_identical'] and i['repeat_bit_identical'] for i in rec['identity'])}/{len(rec['identity'])} {el()}")

# 3. Speed, with PDL, beside the engine's plan; the DRY stream in v13's order.
table = []
for N, K, epi, role in G.MODEL_SHAPES:
    RG = 2 if epi == 2 else 1
    nbytes = G.bytes_of(N, K, 1, epi)
    v, S3, RG3, KS3 = G.V12_PLAN[(N, K, epi)]               # the engine's plan when this ran (v11/v12)
    mb3 = G.V12_MINB.get((N, K, epi), 0)
    row = dict(N=N, K=K, epi=epi, role=role, bytes=nbytes, engine=(v, S3, KS3, mb3))
    row["engine_pdl_us"] = guard("time engine", lambda: G.time_gemv(N, K, epi, S3, RG3, gen, variant=v, KS=KS3, minb=mb3, pdl=True))
    for cfg in good.get((N, K, epi), []) + [("dry",) + c for c in G.V13_DRY[(N, K, epi)]]:
        dry = cfg[0] == "dry"; c = cfg[1:] if dry else cfg
        SR, SK, RP, D, E, MB, KS = c
        us = guard(f"time v13 {cfg}", lambda: G.time_gemv(N, K, epi, SR, RG, gen, variant=13, KS=KS, D=D, minb=MB, v13opt=(SK, RP, bool(E)), pdl=True, dry=dry))
        if us: rec["timings"].append(dict(N=N, K=K, epi=epi, cfg=list(c), dry=dry, pdl=True, us=us, frac=nbytes / (us * 1e-6) / (bw * 1e12)))
    mine = [t for t in rec["timings"] if (t["N"], t["K"], t["epi"]) == (N, K, epi)]
    for t in sorted(mine, key=lambda t: t["us"]): print(f"   {'DRY ' if t['dry'] else ''}{t['cfg']}: {t['us']:.2f} us {t['frac']:.1%}")
    wet = [t for t in mine if not t["dry"]]
    row["v13_best_pdl"] = min(wet, key=lambda t: t["us"]) if wet else None
    table.append(row)
    f = lambda us: f"{us:7.2f} us {nbytes / (us * 1e-6) / (bw * 1e12):5.1%}" if us else "   -   "
    b = row["v13_best_pdl"]
    print(f"{N:6d}x{K:<6d} epi {epi}: engine {f(row['engine_pdl_us'])} | v13 best {b and b['cfg']} {f(b and b['us'])} {el()}")
rec["table"] = table
save()

# 4. M = 8 (speculative verify) at the largest shape, engine vs v13 best.
for r in table[:1]:
    N, K, epi = r["N"], r["K"], r["epi"]
    v, S3, RG3, KS3 = G.V12_PLAN[(N, K, epi)]
    r["engine_m8_us"] = guard("m8 engine", lambda: G.time_gemv(N, K, epi, S3, RG3, gen, M=8, variant=v, KS=KS3, minb=G.V12_MINB.get((N, K, epi), 0), pdl=True))
    if r["v13_best_pdl"]:
        SR, SK, RP, D, E, MB, KS = r["v13_best_pdl"]["cfg"]
        r["v13_m8_us"] = guard("m8 v13", lambda: G.time_gemv(N, K, epi, SR, 1, gen, M=8, variant=13, KS=KS, D=D, minb=MB, v13opt=(SK, RP, bool(E)), pdl=True))
    print(f"M = 8 at {N}x{K}: engine {r.get('engine_m8_us')} us, v13 {r.get('v13_m8_us')} us")

# 5. One token's GEMVs: the engine's plan, and v13's best where it beat the engine in this run.
ch, mbd = {}, {}
for r in table:
    k = (r["N"], r["K"], r["epi"])
    b = r["v13_best_pdl"]
    if b and r["engine_pdl_us"] and b["us"] < r["engine_pdl_us"]:
        SR, SK, RP, D, E, MB, KS = b["cfg"]
        ch[k] = (13, SR, 2 if k[2] == 2 else 1, KS, 4, D, 8, (SK, RP, bool(E))); mbd[k] = MB
    else:
        ch[k] = G.V12_PLAN[k] + (4, 4); mbd[k] = G.V12_MINB.get(k, 0)
ch["lm_head"] = G.ENGINE_CHOICE["lm_head"]
V12_CHOICE = {k: v + (4, 4) for k, v in G.V12_PLAN.items()} | {"lm_head": G.ENGINE_CHOICE["lm_head"]}
rec["token"] = {}
for name, c, m in (("engine", V12_CHOICE, G.V12_MINB), ("v13_mix", ch, mbd)):
    t = guard(f"token {name}", lambda: G.token_graph(c, gen, bw, pdl=True, minb=m))
    if t: rec["token"][name] = t; print(f"token {name:10s} pdl: {t['ms']:.3f} ms, floor {t['floor_ms']:.3f}, ratio {t['ratio']:.3f} {el()}")
rec["v13_choice"] = {f"{k[0]}x{k[1]}:{k[2]}": list(v[:7]) + (list(v[7]) if len(v) > 7 else []) for k, v in ch.items() if isinstance(k, tuple)}
print(f"done {el()}; errors: {len(rec['errors'])}")
save()
