"""Chapter 07: which blocks finish pass 1 last? The phase probe (attention_probe_h200.json) found pass 1 ending over a
spread of ~2 us among the blocks at 1K and 4K (and ~4 us at 32K), and the first barrier waits for the last. This run
keeps every block's marks of the probe build (attn_fused_v1p, v6's passes; v13's pass 1 is the same code): per context
(1K, 4K, 32K), per call of a graph over rotated page tables, each block's time from its grid wait to the end of pass 1
(mark 2 - mark 1) and to its first value copies (mark 3 - mark 1), medians over the calls, with its partition p, its KV group g, its key count
and whether its partition holds the new key. Printed: the 12 slowest blocks of the median call, and the mean pass-1 time
of the new-key blocks against the other active blocks.
Usage on the H200: PYTHONPATH=. python3 results/explore_attention_laggards.py OUT_DIR (attention_laggards_h200.json). ~30 s."""
import sys, time
import torch
from qwen_engine import attention as A
from qwen_engine.runtime import launch, write_record

out_dir = sys.argv[1] if len(sys.argv) > 1 else None
t0 = time.time()
rec = dict(contexts=[], errors=[])
cfg, dev, gen, max_ctx, rope, pool = A.bench_pool()
scr = A.attention_scratch(cfg, 1, dev, P=A.P_DEFAULT, max_ctx=max_ctx)
Hkv, P = cfg.num_key_value_heads, scr.P
for n in (1024, 4096, 32768):
    try:
        with A._rotation(cfg, pool, n, gen, n * 4096) as (tabs, qkv, qw, kw, ctl, out):
            L = [A._launches(qkv, ctl, pool.kv[0, 0], pool.kv[1, 0], t.table, qw, kw, cfg, out, scr, rope, 1, 6)[0] for t in tabs]
            k = A._ring_kernel("attn_fused_v1p<6>")
            pr = torch.zeros(len(tabs), P * Hkv, 8, dtype=torch.int64, device=dev)
            for rep in range(3):                                   # warm, then the last round is kept
                for i in range(len(tabs)): launch(k, L[i][1], L[i][2], L[i][3] + (pr[i],), smem=L[i][4])
            torch.cuda.synchronize()
            p = pr.cpu().double()
        parts = A.partitions(n, P)
        rows = []
        for b in range(P * Hkv):
            pp, g = b % P, b // P                                  # block index = g * P + p (blockIdx.y * gridDim.x + blockIdx.x)
            a_, b_ = parts[pp]
            med = lambda xs: sorted(xs)[len(xs) // 2]                # the median over the graph's calls
            rows.append(dict(p=pp, g=g, keys=b_ - a_, new_key=a_ <= n - 1 < b_,
                             pass1_us=med([float((p[c, b, 2] - p[c, b, 1]) / 1e3) for c in range(p.shape[0])]),
                             copies_us=med([float((p[c, b, 3] - p[c, b, 1]) / 1e3) for c in range(p.shape[0])]),
                             wait_us=med([float((p[c, b, 1] - p[c, :, 0].min()) / 1e3) for c in range(p.shape[0])])))
        act = [r for r in rows if r["keys"] > 0]
        newk = [r["pass1_us"] for r in act if r["new_key"]]
        other = [r["pass1_us"] for r in act if not r["new_key"]]
        rec["contexts"].append(dict(n=n, calls=int(p.shape[0]), blocks=rows, new_key_pass1_us=newk,
                                    other_pass1_us=dict(min=min(other), median=med(other), max=max(other), n=len(other))))
        print(f"n={n}: new-key blocks pass 1 {['%.2f' % x for x in newk]} us; other active blocks min {min(other):.2f} "
              f"median {med(other):.2f} max {max(other):.2f} us ({len(other)} blocks) ({time.time() - t0:.0f} s)", flush=True)
        for r in sorted(act, key=lambda r: -r["pass1_us"])[:12]:
            print(f"   p={r['p']:3d} g={r['g']} keys={r['keys']:4d} new={r['new_key']!s:5s} pass1 {r['pass1_us']:6.2f} us  "
                  f"copies issued {r['copies_us']:6.2f} us  wait returned {r['wait_us']:6.2f} us", flush=True)
    except Exception as e:
        rec["errors"].append(f"n={n}: {e!r}"[:300]); print("ERROR", n, repr(e)[:300], flush=True)
write_record("attention_laggards_h200", "Per block of the engine's attention pass 1 (probe build attn_fused_v1p): time from the grid wait to the end of "
             "pass 1 and to the first value copies, per partition and KV group, 1K/4K/32K, each call of a graph over rotated tables.",
             "PYTHONPATH=. python3 results/explore_attention_laggards.py OUT_DIR", rec, out_dir=out_dir)
