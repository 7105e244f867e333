"""Chapter 06: where the engine's GEMV stands, every number from one run. Per model shape, twice, interleaved: the
engine's kernel (its plan: v14 / v18, PDL, graph, weights rotated past L2), cuBLAS block-scaled `torch._scaled_mm` (the
library path, the same rotation), and a plain 16-byte stream of the same weight bytes chained with PDL (the ceiling of a
kernel that size: the best of chapter 06's stream shapes); the bf16 head (the engine's lm_head, no PDL, and a plain stream
of its 2.54 GB); all GEMVs of one token (the engine's plan, with and without PDL). Each % is of the read bandwidth
measured at the start of the same run.
Usage on the H200: PYTHONPATH=. python3 results/gemv_standing.py OUT_DIR (gemv_standing_h200.json). About 90 s."""
import sys, time
import torch
from qwen_engine import gemv as G
from qwen_engine.runtime import write_record
import explore_util

out = sys.argv[1] if len(sys.argv) > 1 else None
gen = torch.Generator(device="cuda").manual_seed(0)
t_start = time.time()
rec = dict(shapes=[], head=[], token={}, errors=[])
guard = lambda what, fn: explore_util.guard(rec, what, fn)
el = lambda: f"({time.time() - t_start:.0f} s)"
save = lambda: write_record("gemv_standing_h200", "The engine's GEMV per model shape beside cuBLAS _scaled_mm and a plain stream of the same bytes, "
                            "the head, and one token's GEMVs: one run, two interleaved repeats, each % of the read bandwidth of the same run.",
                            "PYTHONPATH=. python3 results/gemv_standing.py OUT_DIR", rec, out_dir=out)
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
guard("compile", lambda: G.get_kernel("gemv", G.ENGINE_KERNELS[0], together=G.ENGINE_KERNELS)); print(f"bandwidth {bw:.3f} TB/s; compiled {el()}", flush=True)
STREAMS = ((2, 16), (4, 8), (4, 16))                  # (blocks per SM, loads in flight a thread): gemv_v13_h200.json's best per shape
frac = lambda nbytes, us: nbytes / (us * 1e-6) / (bw * 1e12)
for rep in range(2):
    for N, K, epi, what in G.MODEL_SHAPES:
        nb = G.bytes_of(N, K, 1, epi)
        e = guard(f"engine {N}x{K}", lambda: G.time_engine(N, K, epi, gen))
        c = guard(f"cublas {N}x{K}", lambda: G.time_scaled_mm(N, K, gen))
        s = [guard(f"stream {N}x{K} {b} {u}", lambda: G.stream_probe(N * K, blocks_per_sm=b, pdl=True, U=u)) for b, u in STREAMS]
        s = min((x for x in s if x), default=None)
        cu = c if isinstance(c, float) else (c or {}).get("us")
        r = dict(N=N, K=K, epi=epi, what=what, rep=rep, bytes=nb, engine_us=e, cublas_us=cu, stream_us=s,
                 engine=e and frac(nb, e), cublas=cu and frac(nb, cu), stream=s and frac(N * K, s))
        rec["shapes"].append(r)
        print(f"rep {rep} {what}: engine {e and round(e, 2)} us ({r['engine'] and round(100 * r['engine'], 1)} %), cuBLAS {cu and round(cu, 2)} "
              f"({r['cublas'] and round(100 * r['cublas'], 1)} %), stream {s and round(s, 2)} ({r['stream'] and round(100 * r['stream'], 1)} %) {el()}", flush=True)
    save()
    h = guard("head", lambda: G.time_lm_head(G.ENGINE_CHOICE["lm_head"]))
    hs = guard("head stream", lambda: min(G.stream_probe(248320 * 5120 * 2, blocks_per_sm=b, pdl=True, U=u) for b, u in STREAMS))
    if h: rec["head"].append(dict(rep=rep, us=h["us"], frac=h["tbps"] / bw, stream_us=hs, stream=hs and frac(248320 * 5120 * 2, hs)))
    print(f"rep {rep} head: {h and round(h['us'], 1)} us ({h and round(100 * h['tbps'] / bw, 1)} %), stream {hs and round(hs, 1)} {el()}", flush=True)
for label, pdl in (("pdl", True), ("plain", False), ("pdl again", True)):
    t = guard(f"token {label}", lambda: G.token_graph(None, gen, bw, pdl=pdl))
    if t: rec["token"][label] = t; print(f"token {label}: {t['ms']:.3f} ms, {t['ratio']:.3f}x the floor {el()}", flush=True)
save()
print(f"\n{'shape':<32} {'engine %':>9} {'cuBLAS %':>9} {'stream %':>9} {'speedup':>8}")
for N, K, epi, what in G.MODEL_SHAPES:
    rs = [r for r in rec["shapes"] if (r["N"], r["K"]) == (N, K) and r["engine_us"] and r["cublas_us"]]
    if rs:
        m = lambda k: sum(r[k] for r in rs) / len(rs)
        print(f"{what:<32} {100 * m('engine'):9.1f} {100 * m('cublas'):9.1f} {100 * m('stream'):9.1f} {m('cublas_us') / m('engine_us'):7.2f}x")
print(f"done {el()}; errors {len(rec['errors'])}")
