"""Chapter 06, v14's second sweep (V14B_SWEEP): the 5,120-row shapes with no split (KS = 1) and a deeper ring instead,
and occupancy bounds on the large shapes. Each configuration checked against the float64 definition (M = 1, outputs
poisoned), M = 8 rows bit-identical to M = 1, 20 repeats; timed with PDL beside the engine's plan (v14 since
gemv_v14_h200) in the same run; all GEMVs of one token for the engine's plan and the best mix.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v14b.py OUT_DIR (gemv_v14b_h200.json). Neither of its two runs
finished (results/gemv_v14b_h200_log.txt): most of their time went to compiling the plain-projection builds one at a time;
they are now in the one-pass compile below (changed after the runs; checked on the CPU only). Every configuration that
ran lost to v14's."""
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
el = lambda: f"({time.time() - t_start:.0f} s)"
save = lambda: write_record("gemv_v14b_h200", "v14's second sweep (V14B_SWEEP: no split and deeper rings on the 5,120-row shapes, occupancy bounds "
                            "on the large ones): checked (float64 definition at M = 1, outputs poisoned; M = 8 rows bit-identical to M = 1; "
                            "20 repeats), timed with PDL beside the engine's plan (v14), all GEMVs of one token.",
                            "PYTHONPATH=. python3 results/explore_gemv_v14b.py OUT_DIR", rec, out_dir=out)
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
# every build the sweep launches, in one NVRTC pass: each epilogue and check_gemv's plain projection (epi 0), M = 1 and the
# M > 1 builds (its two runs compiled the epi-0 builds one at a time, ~40-120 s each: most of their time limits)
names = list(dict.fromkeys([G._v14_name(e, c) for (_, _, epi), cs in G.V14B_SWEEP.items() for c in cs for e in (epi, 0)]
                           + [G._v14_name(e, c[:2] + G.V13_MULTI[:2] + (c[4], G.V13_MULTI[2], c[6], 0), 8)
                              for (_, _, epi), cs in G.V14B_SWEEP.items() for c in cs for e in (epi, 0)]))
guard("compile", lambda: G.get_kernel("gemv", names[0], together=tuple(names))); print(f"bandwidth {bw:.3f} TB/s; compiled {el()}")
table = []
for (N, K, epi), cfgs in G.V14B_SWEEP.items():
    RG = 2 if epi == 2 else 1
    nbytes = G.bytes_of(N, K, 1, epi)
    row = dict(N=N, K=K, epi=epi, bytes=nbytes, engine_pdl_us=guard("time engine", lambda: G.time_engine(N, K, epi, gen)))
    for cfg in cfgs:
        kw = explore_util.v14_kwargs(cfg)
        c = guard(f"check {N}x{K} {cfg}", lambda: G.check_gemv(N, K, epi, 1, gen, cfg[0], RG, **kw))
        idn = guard(f"identity {N}x{K} {cfg}", lambda: G.check_multirow_identity(N, K, epi, gen, cfg[0], RG, **kw))
        if c: c["ok"] = G.check_ok(c); c["cfg"] = cfg; c.pop("v13opt", None); rec["checks"].append(c)
        if idn: idn["cfg"] = cfg; idn.pop("v13opt", None); rec["identity"].append(idn)
        passed = c and c["ok"] and idn and idn["multirow_bit_identical"] and idn["repeat_bit_identical"]
        us = guard(f"time {cfg}", lambda: G.time_gemv(N, K, epi, cfg[0], RG, gen, pdl=True, **kw)) if passed else None
        if us: rec["timings"].append(dict(N=N, K=K, epi=epi, cfg=list(cfg), pdl=True, us=us, frac=nbytes / (us * 1e-6) / (bw * 1e12)))
        print(f"{N}x{K} {cfg}: {'ok' if passed else 'FAILED'} {us and round(us, 2)} us {us and round(100 * nbytes / (us * 1e-6) / (bw * 1e12), 1)} % {el()}")
    mine = [t for t in rec["timings"] if (t["N"], t["K"], t["epi"]) == (N, K, epi)]
    row["best_pdl"] = min(mine, key=lambda t: t["us"]) if mine else None
    e = row["engine_pdl_us"]
    print(f"{N}x{K} engine (v14) {e and round(e, 2)} us {e and round(100 * nbytes / (e * 1e-6) / (bw * 1e12), 1)} % {el()}")
    table.append(row)
rec["table"] = table
save()
ch = None
wins = {(r["N"], r["K"], r["epi"]): r["best_pdl"]["cfg"] for r in table if r["best_pdl"] and r["engine_pdl_us"] and r["best_pdl"]["us"] < (1 - G.ENGINE_MARGIN) * r["engine_pdl_us"]}
if wins:
    ch, mbd = {}, {}
    for N, K, epi, _ in G.MODEL_SHAPES:
        k = (N, K, epi)
        v, S, RG, KS = G.engine_plan(*k)
        SK, RP, D, E, XS = G.ENGINE_V14[k]
        cfg = wins.get(k, (S, SK, RP, D, E, 1, KS, XS))
        ch[k] = (14, cfg[0], 2 if epi == 2 else 1, cfg[6], 4, cfg[3], 8, (cfg[1], cfg[2], bool(cfg[4]), bool(cfg[7]))); mbd[k] = 0 if cfg[5] == 1 else cfg[5]
    ch["lm_head"] = G.ENGINE_CHOICE["lm_head"]
rec["token"] = {}
for name, c, m in (("engine", None, None),) + ((("best_mix", ch, mbd),) if ch else ()):
    t = guard(f"token {name}", lambda: G.token_graph(c, gen, bw, pdl=True, minb=m))
    if t: rec["token"][name] = t; print(f"token {name}: {t['ms']:.3f} ms, ratio {t['ratio']:.3f} {el()}")
rec["wins"] = {f"{k[0]}x{k[1]}:{k[2]}": list(v) for k, v in wins.items()}
print(f"done {el()}; errors {len(rec['errors'])}")
save()
