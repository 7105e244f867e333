"""Chapter 06: the token of GEMVs without its math (token_dry_h200.json) kept two thirds of the engine's loss against a
plain stream, so the loss is mostly the kernels' shape, not their arithmetic. This run says which shapes: per model shape,
interleaved, twice, each alone in a PDL graph with the weights rotated past L2 (time_engine's method): the engine's
kernel; v14 at the engine's configuration; the same v14 without its math (DRY: loads, ring, split, launches only); and a
plain 16-byte stream of the same bytes (gemv_standing.py's best of three stream shapes). Each % is of the read bandwidth
measured at the start of the same run.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_dry.py OUT_DIR (gemv_dry_h200.json). About 60 s."""
import sys, time
import torch
from qwen_engine import gemv as G
from qwen_engine.runtime import write_record
import explore_util

out = sys.argv[1] if len(sys.argv) > 1 else None
gen = torch.Generator(device="cuda").manual_seed(0)
t_start = time.time()
rec = dict(shapes=[], errors=[])
guard = lambda what, fn: explore_util.guard(rec, what, fn)
el = lambda: f"({time.time() - t_start:.0f} s)"
save = lambda: write_record("gemv_dry_h200", "Per model shape, alone with PDL, weights rotated past L2: the engine's GEMV, v14 at the engine's configuration, "
                            "the same v14 without its math (DRY) and a plain stream of the same bytes; two interleaved repeats, % of the read bandwidth of the same run.",
                            "PYTHONPATH=. python3 results/explore_gemv_dry.py OUT_DIR", rec, out_dir=out)
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
STREAMS = ((2, 16), (4, 8), (4, 16))
frac = lambda nbytes, us: nbytes / (us * 1e-6) / (bw * 1e12)
for rep in range(2):
    for N, K, epi, what in G.MODEL_SHAPES:
        nb = G.bytes_of(N, K, 1, epi)
        kw = G.engine_kwargs(N, K, epi); S, RG = kw.pop("S"), kw.pop("RG"); kw["variant"] = 14
        e = guard(f"engine {N}x{K}", lambda: G.time_engine(N, K, epi, gen))
        v = guard(f"v14 {N}x{K}", lambda: G.time_gemv(N, K, epi, S, RG, gen, pdl=True, **kw))
        d = guard(f"v14 dry {N}x{K}", lambda: G.time_gemv(N, K, epi, S, RG, gen, pdl=True, dry=True, **kw))
        s = min((x for x in (guard(f"stream {N}x{K} {b} {u}", lambda: G.stream_probe(N * K, blocks_per_sm=b, pdl=True, U=u)) for b, u in STREAMS) if x), default=None)
        r = dict(N=N, K=K, epi=epi, what=what, rep=rep, bytes=nb, engine_us=e, v14_us=v, dry_us=d, stream_us=s,
                 engine=e and frac(nb, e), v14=v and frac(nb, v), dry=d and frac(nb, d), stream=s and frac(N * K, s))
        rec["shapes"].append(r)
        print(f"rep {rep} {what}: engine {e and round(e, 2)} us, v14 {v and round(v, 2)}, v14 dry {d and round(d, 2)}, stream {s and round(s, 2)} {el()}", flush=True)
    save()
print(f"\n{'shape':<32} {'engine %':>9} {'v14 %':>7} {'dry %':>7} {'stream %':>9}")
for N, K, epi, what in G.MODEL_SHAPES:
    rs = [r for r in rec["shapes"] if (r["N"], r["K"]) == (N, K) and all(r[k] for k in ("engine", "v14", "dry", "stream"))]
    if rs:
        m = lambda k: 100 * sum(r[k] for r in rs) / len(rs)
        print(f"{what:<32} {m('engine'):9.1f} {m('v14'):7.1f} {m('dry'):7.1f} {m('stream'):9.1f}")
print(f"done {el()}; errors {len(rec['errors'])}")
