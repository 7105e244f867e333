"""Chapter 07: would fewer, fuller blocks stream the cache as fast? (The question a design with one cluster of blocks per
KV group, exchanging statistics and partials in distributed shared memory instead of through L2 and counters, has to
answer first: a cluster holds at most 16 blocks, so such a grid has 16 blocks per KV group, 64 in all.) kv_stream_probe's
ring builds (no arithmetic) at P = 66 (the engine's grid: AtRing, 3 stages, two blocks an SM), 32 and 16 blocks per KV
group, the last two with AtRing and with KvsRing<6> (six 32 KB stages, one block an SM); each as a pure stream of K then V
(BAR 0) and as the two-pass skeleton (BAR 2: the group barrier between keys and values, a partial, the second barrier, a
merge's reads). Contexts 4K, 32K, 128K, one decode row, a CUDA graph over page tables rotated past the L2, two rounds;
% of the read bandwidth measured in the same run.
Usage on the H200: PYTHONPATH=. python3 results/explore_kv_stream_grid.py OUT_DIR (kv_stream_grid_h200.json, ~40 s)"""
import sys, time
import numpy as np
import torch
from qwen_engine import attention as A
from qwen_engine import gemv as G
from qwen_engine.runtime import get_kernel, launch, time_graph, median, write_record

out = sys.argv[1] if len(sys.argv) > 1 else None
t0 = time.time()
rec = dict(rows=[], errors=[])
save = lambda: write_record("kv_stream_grid_h200", "kv_stream_probe's ring builds (no arithmetic) on grids of 66, 32 and 16 blocks per KV group "
                            "(AtRing, or KvsRing<6> at one block an SM), as a pure K-then-V stream and as the two-pass skeleton: us and % "
                            "of the read bandwidth measured in the same run.", "PYTHONPATH=. python3 results/explore_kv_stream_grid.py OUT_DIR", rec, out_dir=out)
cfg, dev, gen, max_ctx, rope, pool = A.bench_pool()
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
print(f"bandwidth {bw:.3f} TB/s", flush=True)
GRIDS = [(66, 2, 1), (32, 2, 1), (32, 3, 6), (16, 2, 1), (16, 3, 6)]            # (P, PAT, S)
kname = lambda pat, s, bar: f"kv_stream_probe<{pat}, {s}, true, {bar}>"
names = tuple(kname(pat, s, bar) for _, pat, s in GRIDS for bar in (0, 2))
Hkv = cfg.num_key_value_heads
kc, vc = pool.kv[0, 0], pool.kv[1, 0]
sink = torch.zeros(256, dtype=torch.int32, device=dev)
part = torch.zeros(cfg.num_attention_heads * 66 * cfg.head_dim, dtype=torch.float32, device=dev)
syncs = {}
for n in (4096, 32768, 131072):
    kv_bytes = n * Hkv * cfg.head_dim * 2 * 2
    for rnd in range(2):
        with A._rotation(cfg, pool, n, gen, kv_bytes) as (tabs, qkv, qw, kw, ctl, out_):
            for P, pat, s in GRIDS:
                for bar in (0, 2):
                    label = f"P {P}, {'AtRing' if pat == 2 else f'KvsRing<{s}>'}, " + ("pure stream" if bar == 0 else "skeleton")
                    try:
                        k = get_kernel("attention", kname(pat, s, bar), together=names)
                        smem = A.RING_BYTES if pat == 2 else s * 32768
                        if k.max_dynamic_shared_size_bytes < smem: k.max_dynamic_shared_size_bytes = smem
                        sync = syncs.setdefault((P, pat, s, bar), torch.zeros(256, dtype=torch.int64, device=dev))   # one per grid: counts of P
                        f = lambda i: launch(k, (P, Hkv), (256,), (kc, vc, tabs[i].table, np.int32(tabs[i].table.numel()), np.int32(n), np.int32(P),
                                                                   sink, sync, part, np.uint64(0)), smem=smem)
                        us = 1e3 * median(time_graph(f, calls=len(tabs), reps=10))
                        fr = kv_bytes / us / 1e6 / bw
                        rec["rows"].append(dict(n=n, round=rnd, plan=label, P=P, PAT=pat, S=s, BAR=bar, us=us, frac=fr, rotation=len(tabs)))
                        print(f"  {n:6d} r{rnd} {label:40s} {us:7.2f} us  {fr:.3f}", flush=True)
                    except Exception as e:
                        rec["errors"].append(dict(n=n, plan=label, error=repr(e)[:400])); print("  ERROR", label, repr(e)[:300], flush=True)
    save()
torch.cuda.synchronize()
rec["barrier_giveups"] = int(sum(int(s[255].item()) for s in syncs.values()))
rec["seconds"] = time.time() - t0
save()
print("\n| n | plan | us (2 rounds) | % of bandwidth (mean) |\n|---|---|---|---|")
for n in (4096, 32768, 131072):
    for lab in dict.fromkeys(r["plan"] for r in rec["rows"]):
        rs = [r for r in rec["rows"] if r["n"] == n and r["plan"] == lab]
        if rs: print(f"| {n} | {lab} | {' / '.join('%.1f' % r['us'] for r in rs)} | {100 * sum(r['frac'] for r in rs) / len(rs):.1f} |")
