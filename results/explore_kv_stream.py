"""Chapter 07: which way into the SM streams the paged KV cache fastest at attention's grid? `kv_stream_probe`
(kernels/attention.cu) reads each block's keys, then its values, of one decode row at context n, in three orders, and
only folds the bytes (no scores, no barriers, no writes): PAT 0 straight into registers in pass 1 v6's order (eight keys,
64 bytes each, per warp-wide load), PAT 1 straight into registers a whole 512-byte row per warp-wide load, PAT 2 the fused
kernels' ring of bulk copies (AtRing); then the ring with the two-pass structure and no arithmetic: the KV group's
barrier between keys and values (the values' first copies issued before it), and also a partial written, a second barrier
and a merge's reads. Every plan runs on the engine's grid (P = 66 x 4 KV heads, 256 threads, the ring's
96 KB of shared memory a block, so two blocks an SM), timed in a CUDA graph over page tables that rotate past the L2, beside
the engine's attention (v18, alone, with and without PDL) and the read bandwidth measured in the same run.
Usage on the H200: PYTHONPATH=. python3 results/explore_kv_stream.py OUT_DIR  (kv_stream_h200.json, about 1 min)"""
import sys, time
import numpy as np
import torch
from qwen_engine import attention as A
from qwen_engine import gemv as G
from qwen_engine.runtime import get_kernel, launch, time_graph, median, write_record

out = sys.argv[1] if len(sys.argv) > 1 else None
t0 = time.time()
rec = dict(rows=[], errors=[])
save = lambda: write_record("kv_stream_h200", "The paged KV cache streamed at attention's grid without arithmetic (kv_stream_probe: registers in v6's "
                            "order, registers by whole rows, the bulk-copy ring), K then V of one decode row, us and % of the read bandwidth "
                            "measured in the same run, beside the engine's attention v18 alone.",
                            "PYTHONPATH=. python3 results/explore_kv_stream.py OUT_DIR", rec, out_dir=out)
cfg, dev, gen, max_ctx, rope, pool = A.bench_pool()
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
print(f"bandwidth {bw:.3f} TB/s", flush=True)
PLANS = [("registers, v6 order, 2 stages", 0, 2, 0), ("registers, v6 order, 3 stages", 0, 3, 0),
         ("registers, whole rows, 2 stages", 1, 2, 0), ("registers, whole rows, 3 stages", 1, 3, 0), ("bulk ring (AtRing)", 2, 1, 0),
         ("bulk ring + group barrier K|V", 2, 1, 1), ("bulk ring + both barriers + merge reads", 2, 1, 2)]
kname = lambda pat, s, bar: f"kv_stream_probe<{pat}, {s}, true, {bar}>"
names = tuple(kname(*p[1:]) for p in PLANS)
sink = torch.zeros(256, dtype=torch.int32, device=dev)
sync = torch.zeros(256, dtype=torch.int64, device=dev)                     # barrier counts: only grow, never reset
part = torch.zeros(cfg.num_attention_heads * A.P_DEFAULT * cfg.head_dim, dtype=torch.float32, device=dev)
P, Hkv = A.P_DEFAULT, cfg.num_key_value_heads
kc, vc = pool.kv[0, 0], pool.kv[1, 0]
for n in (4096, 32768, 131072):
    kv_bytes = n * Hkv * cfg.head_dim * 2 * 2
    for rnd in range(2):
        with A._rotation(cfg, pool, n, gen, kv_bytes) as (tabs, qkv, qw, kw, ctl, out_):
            R_ = len(tabs)
            for label, pat, s, bar in PLANS:
                try:
                    k = get_kernel("attention", kname(pat, s, bar), together=names)
                    if k.max_dynamic_shared_size_bytes < A.RING_BYTES: k.max_dynamic_shared_size_bytes = A.RING_BYTES
                    f = lambda i: launch(k, (P, Hkv), (256,), (kc, vc, tabs[i].table, np.int32(tabs[i].table.numel()), np.int32(n), np.int32(P), sink, sync, part, np.uint64(0)), smem=A.RING_BYTES)
                    us = 1e3 * median(time_graph(f, calls=R_, reps=10))
                    rec["rows"].append(dict(n=n, round=rnd, plan=label, PAT=pat, S=s, BAR=bar, us=us, tbps=kv_bytes / us / 1e6, frac=kv_bytes / us / 1e6 / bw, rotation=R_))
                    print(f"  {n:6d} r{rnd} {label:34s} {us:7.2f} us  {kv_bytes / us / 1e6 / bw:.3f}", flush=True)
                except Exception as e:
                    rec["errors"].append(dict(n=n, plan=label, error=repr(e)[:400])); print("  ERROR", label, repr(e)[:300], flush=True)
        scr = A.attention_scratch(cfg, 1, dev, max_ctx=max_ctx)
        for pdl in (False, True):
            try:
                r = A.time_ours(cfg, pool, n, scr, rope, gen, variant=A.VARIANT, pdl=pdl)
                rec["rows"].append(dict(n=n, round=rnd, plan=f"attention v{A.VARIANT}" + (" (PDL)" if pdl else ""), us=r["us"], tbps=r["tbps"], frac=r["tbps"] / bw, rotation=r["rotation"]))
                print(f"  {n:6d} r{rnd} {'attention v%d%s' % (A.VARIANT, ' PDL' if pdl else ''):34s} {r['us']:7.2f} us  {r['tbps'] / bw:.3f}", flush=True)
            except Exception as e:
                rec["errors"].append(dict(n=n, plan=f"v{A.VARIANT}", error=repr(e)[:400])); print("  ERROR v18", repr(e)[:300], flush=True)
        del scr
    save()
torch.cuda.synchronize()
rec["barrier_giveups"] = int(sync[255].item())
rec["seconds"] = time.time() - t0
save()
print("\n| n | plan | us (2 rounds) | % of bandwidth |\n|---|---|---|---|")
for n in (4096, 32768, 131072):
    for label in [q[0] for q in PLANS] + [f"attention v{A.VARIANT}", f"attention v{A.VARIANT} (PDL)"]:
        rs = [r for r in rec["rows"] if r["n"] == n and r["plan"] == label]
        if rs: print(f"| {n} | {label} | {' / '.join('%.1f' % r['us'] for r in rs)} | {100 * max(r['frac'] for r in rs):.1f} |")
