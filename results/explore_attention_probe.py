"""Chapter 07: where the engine's attention (v6, attn_fused_v1: one launch, two grid barriers) spends its time.
attn_fused_v1p is v6 with phase marks: thread 0 of each of its P x Hkv blocks writes the global timer when its ring is made
(0), when the grid wait returns (1), after pass 1 (2), after the first value copies are issued (3), after grid barrier 1
(4), after pass 2 (5), after grid barrier 2 (6), after the merge (7). Contexts 1K, 4K, 32K and 128K, one decode row, in a
CUDA graph over page tables rotated past the L2 (time_ours's method; no PDL), beside v6's own time in the same run (the
marks' cost). Per context: each mark's earliest, median and latest block, relative to the earliest block's mark 0
(medians over the graph's calls), and the outputs of the probe build against v6's (bit for bit).
Usage on the H200: PYTHONPATH=. python3 results/explore_attention_probe.py OUT_DIR (attention_probe_h200.json). About 30 s."""
import sys, time
import torch
from qwen_engine import attention as A
from qwen_engine.runtime import launch, time_graph, median, write_record
from qwen_engine.gemv import bandwidth_now

out_dir = sys.argv[1] if len(sys.argv) > 1 else None
t0 = time.time()
MARKS = ["ring made", "grid wait returned", "pass 1 done (scores, statistics)", "first value copies issued", "grid barrier 1 passed",
         "pass 2 done (p.v partials)", "grid barrier 2 passed", "merge done"]
NP = 8
rec = dict(marks=MARKS, contexts=[], errors=[])
save = lambda: write_record("attention_probe_h200", "The engine's decode attention (v6) with phase marks (attn_fused_v1p): per context, each mark's "
                            "earliest / median / latest block relative to the launch's first block; v6's own time and the probe build's "
                            "outputs against v6's in the same run.", "PYTHONPATH=. python3 results/explore_attention_probe.py OUT_DIR",
                            rec, out_dir=out_dir)
cfg, dev, gen, max_ctx, rope, pool = A.bench_pool()
scr = A.attention_scratch(cfg, 1, dev, P=A.P_DEFAULT, max_ctx=max_ctx)
rec["bandwidth_tbps"] = bw = bandwidth_now(gib=2)
nb = scr.P * cfg.num_key_value_heads
for n in (1024, 4096, 32768, 131072):
    try:
        v6 = A.time_ours(cfg, pool, n, scr, rope, gen, variant=6)
        with A._rotation(cfg, pool, n, gen, n * 4096) as (tabs, qkv, qw, kw, ctl, out):
            L = [A._launches(qkv, ctl, pool.kv[0, 0], pool.kv[1, 0], t.table, qw, kw, cfg, out, scr, rope, 1, 6)[0] for t in tabs]
            k = A._ring_kernel("attn_fused_v1p<6>")
            pr = torch.zeros(len(tabs), nb, NP, dtype=torch.int64, device=dev)
            out6 = out.clone(); launch(*L[0]); torch.cuda.synchronize(); out6.copy_(out)
            out.fill_(float("nan")); launch(k, L[0][1], L[0][2], L[0][3] + (pr[0],), smem=L[0][4]); torch.cuda.synchronize()
            same = bool(torch.equal(out, out6))
            us = 1e3 * median(time_graph(lambda i: launch(k, L[i][1], L[i][2], L[i][3] + (pr[i],), smem=L[i][4]), calls=len(tabs), reps=10))
            torch.cuda.synchronize()
            p = pr.cpu()
        rel = (p - p[:, :, 0].min(dim=1).values[:, None, None]).double() / 1e3       # us after the call's first block started
        med0 = lambda t: [float(x) for x in t.median(dim=0).values]             # the median over the graph's calls
        row = dict(n=n, v6_us=v6["us"], probe_us=us, probe_same_output=same, calls=len(tabs), kv_bytes=n * 4096,
                   frac_v6=n * 4096 / (v6["us"] * 1e-6) / 1e12 / bw, earliest=med0(rel.min(dim=1).values),
                   median=med0(rel.median(dim=1).values), latest=med0(rel.max(dim=1).values))
        rec["contexts"].append(row)
        print(f"n={n}: v6 {v6['us']:.1f} us, probe build {us:.1f} us, outputs equal {same} ({time.time() - t0:.0f} s)", flush=True)
        for i, m in enumerate(MARKS):
            print(f"   {m:36s} earliest {row['earliest'][i]:7.2f}  median {row['median'][i]:7.2f}  latest {row['latest'][i]:7.2f} us", flush=True)
    except Exception as e:
        rec["errors"].append(f"n={n}: {e!r}"[:300]); print("ERROR", n, repr(e)[:300], flush=True)
    save()
rec["wall_s"] = time.time() - t0
save()
print("errors:", rec["errors"])
