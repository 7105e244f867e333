"""Chapter 07: where v18's time goes against v13's, phase by phase and KV group by KV group. attn_fused_v7p and
attn_fused_v12p are v13 and v18 with at_fused_body's phase marks (as attn_fused_v1p for v6: thread 0 of every block writes
the global timer when its ring is made (0), when its grid wait returns (1), after pass 1 (2), after the first value copies
(3), after the first barrier (4), after pass 2 (5), after the second barrier (6), after the merge (7)). Contexts 1K, 4K, 32K
and 128K, one decode row, in a CUDA graph over page tables rotated past the L2 (time_ours's method; no PDL), beside each
variant's own time in the same run. Per context, variant and KV group: each mark's earliest, median and latest block,
relative to the call's first block (medians over the graph's calls); and the probe builds' outputs against their kernels'.
Usage on the H200: PYTHONPATH=. python3 results/explore_attention_probe18.py OUT_DIR (attention_probe18_h200.json). About 30 s."""
import sys, time
import torch
from qwen_engine import attention as A
from qwen_engine.runtime import launch, time_graph, median, write_record
from qwen_engine.gemv import bandwidth_now

out_dir = sys.argv[1] if len(sys.argv) > 1 else None
t0 = time.time()
MARKS = ["ring made", "grid wait returned", "pass 1 done (scores, statistics)", "first value copies issued", "barrier 1 passed",
         "pass 2 done (p.v partials)", "barrier 2 passed", "merge done"]
NP, PROBES = 8, {13: "attn_fused_v7p<6>", 18: "attn_fused_v12p<6>"}
rec = dict(marks=MARKS, probes=PROBES, contexts=[], errors=[])
save = lambda: write_record("attention_probe18_h200", "Decode attention v13 and v18 with phase marks (attn_fused_v7p, attn_fused_v12p): per "
                            "context, variant and KV group, each mark's earliest / median / latest block relative to the call's first "
                            "block; each variant's own time and the probe builds' outputs against their kernels' in the same run.",
                            "PYTHONPATH=. python3 results/explore_attention_probe18.py OUT_DIR", rec, out_dir=out_dir)
cfg, dev, gen, max_ctx, rope, pool = A.bench_pool()
scr = A.attention_scratch(cfg, 1, dev, P=A.P_DEFAULT, max_ctx=max_ctx)
rec["bandwidth_tbps"] = bw = bandwidth_now(gib=2)
P, H = scr.P, cfg.num_key_value_heads
for n in (1024, 4096, 32768, 131072):
    for v, probe in PROBES.items():
        try:
            plain = A.time_ours(cfg, pool, n, scr, rope, gen, variant=v)
            with A._rotation(cfg, pool, n, gen, n * 4096) as (tabs, qkv, qw, kw, ctl, out):
                L = [A._launches(qkv, ctl, pool.kv[0, 0], pool.kv[1, 0], t.table, qw, kw, cfg, out, scr, rope, 1, v)[0] for t in tabs]
                k = A._ring_kernel(probe)
                pr = torch.zeros(len(tabs), P * H, NP, dtype=torch.int64, device=dev)
                ref = out.clone(); launch(*L[0]); torch.cuda.synchronize(); ref.copy_(out)
                out.fill_(float("nan")); launch(k, L[0][1], L[0][2], L[0][3] + (pr[0],), smem=L[0][4]); torch.cuda.synchronize()
                same = bool(torch.equal(out, ref))
                us = 1e3 * median(time_graph(lambda i: launch(k, L[i][1], L[i][2], L[i][3] + (pr[i],), smem=L[i][4]), calls=len(tabs), reps=10))
                torch.cuda.synchronize()
                p = pr.cpu()
            rel = (p - p[:, :, 0].min(dim=1).values[:, None, None]).double() / 1e3       # us after the call's first block started
            med0 = lambda t: [round(float(x), 3) for x in t.median(dim=0).values]      # the median over the graph's calls
            groups = []
            for g in range(H):
                r = rel[:, g * P:(g + 1) * P]                                            # blocks (p, g): bid = g * P + p
                groups.append(dict(earliest=med0(r.min(dim=1).values), median=med0(r.median(dim=1).values), latest=med0(r.max(dim=1).values)))
            row = dict(n=n, variant=v, us=plain["us"], probe_us=us, probe_same_output=same, calls=len(tabs), kv_bytes=n * 4096,
                       frac=n * 4096 / (plain["us"] * 1e-6) / 1e12 / bw, groups=groups,
                       latest=med0(rel.max(dim=1).values), median=med0(rel.median(dim=1).values))
            rec["contexts"].append(row)
            print(f"n={n} v{v}: {plain['us']:.1f} us, probe build {us:.1f} us, outputs equal {same} ({time.time() - t0:.0f} s)", flush=True)
            for i in (2, 4, 5, 6, 7):
                print(f"   {MARKS[i]:34s} per group: latest " + " ".join(f"{gr['latest'][i]:7.2f}" for gr in groups)
                      + "   median " + " ".join(f"{gr['median'][i]:7.2f}" for gr in groups), flush=True)
        except Exception as e:
            rec["errors"].append(f"n={n} v{v}: {e!r}"[:300]); print("ERROR", n, v, repr(e)[:300], flush=True)
        save()
rec["wall_s"] = time.time() - t0
save()
print("errors:", rec["errors"])
