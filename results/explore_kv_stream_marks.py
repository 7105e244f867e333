"""Chapter 07: where v18's time goes against the same structure without arithmetic, phase by phase. kv_stream_probe's
skeleton build (the ring, the group barrier between keys and values, a partial, the second barrier and a merge's reads:
BAR 2) writes the timer at v18's probe points (0/1 start, 2 keys done, 3 first value copies issued, 4 barrier 1 passed,
5 values done, 6 barrier 2 passed, 7 end); attn_fused_v12p is v18 with the same marks (explore_attention_probe18.py). Both in
one run, contexts 1K, 4K, 32K, 128K, one decode row, a CUDA graph over page tables rotated past the L2; per context and
build: each mark's earliest, median and latest block relative to the call's first block (medians over the graph's calls).
Usage on the H200: PYTHONPATH=. python3 results/explore_kv_stream_marks.py OUT_DIR (kv_stream_marks_h200.json, ~30 s)"""
import sys, time
import numpy as np
import torch
from qwen_engine import attention as A
from qwen_engine.runtime import get_kernel, launch, time_graph, median, write_record
from qwen_engine.gemv import bandwidth_now

out_dir = sys.argv[1] if len(sys.argv) > 1 else None
t0 = time.time()
MARKS = ["start", "grid wait returned (v18) / start", "keys done (pass 1)", "first value copies issued", "barrier 1 passed",
         "values done (pass 2)", "barrier 2 passed", "end (merge done)"]
NP = 8
rec = dict(marks=MARKS, contexts=[], errors=[])
save = lambda: write_record("kv_stream_marks_h200", "Phase marks of kv_stream_probe's two-pass skeleton (no arithmetic: BAR 2) beside v18's "
                            "probe build (attn_fused_v12p) in the same run: per context, each mark's earliest / median / latest block "
                            "relative to the call's first block.", "PYTHONPATH=. python3 results/explore_kv_stream_marks.py OUT_DIR", rec, out_dir=out_dir)
cfg, dev, gen, max_ctx, rope, pool = A.bench_pool()
scr = A.attention_scratch(cfg, 1, dev, P=A.P_DEFAULT, max_ctx=max_ctx)
rec["bandwidth_tbps"] = bw = bandwidth_now(gib=2)
P, H = scr.P, cfg.num_key_value_heads
kc, vc = pool.kv[0, 0], pool.kv[1, 0]
sink = torch.zeros(256, dtype=torch.int32, device=dev)
sync = torch.zeros(256, dtype=torch.int64, device=dev)
part = torch.zeros(cfg.num_attention_heads * P * cfg.head_dim, dtype=torch.float32, device=dev)
skel = get_kernel("attention", "kv_stream_probe<2, 1, true, 2>")
if skel.max_dynamic_shared_size_bytes < A.RING_BYTES: skel.max_dynamic_shared_size_bytes = A.RING_BYTES

def summarise(pr):
    p = pr.cpu()
    rel = (p - p[:, :, 0].min(dim=1).values[:, None, None]).double() / 1e3
    med0 = lambda t: [round(float(x), 3) for x in t.median(dim=0).values]
    return dict(earliest=med0(rel.min(dim=1).values), median=med0(rel.median(dim=1).values), latest=med0(rel.max(dim=1).values))

for n in (1024, 4096, 32768, 131072):
    for build in ("skeleton", "v18"):
        try:
            with A._rotation(cfg, pool, n, gen, n * 4096) as (tabs, qkv, qw, kw, ctl, out):
                pr = torch.zeros(len(tabs), P * H, NP, dtype=torch.int64, device=dev)
                if build == "skeleton":
                    f = lambda i: launch(skel, (P, H), (256,), (kc, vc, tabs[i].table, np.int32(tabs[i].table.numel()), np.int32(n), np.int32(P),
                                                                sink, sync, part, pr[i]), smem=A.RING_BYTES)
                else:
                    L = [A._launches(qkv, ctl, kc, vc, t.table, qw, kw, cfg, out, scr, rope, 1, 18)[0] for t in tabs]
                    k = A._ring_kernel("attn_fused_v12p<6>")
                    f = lambda i: launch(k, L[i][1], L[i][2], L[i][3] + (pr[i],), smem=L[i][4])
                us = 1e3 * median(time_graph(f, calls=len(tabs), reps=10))
                torch.cuda.synchronize()
                s = summarise(pr)
            rec["contexts"].append(dict(n=n, build=build, us=us, frac=n * 4096 / (us * 1e-6) / 1e12 / bw, calls=len(tabs), **s))
            print(f"n={n:6d} {build:8s} {us:7.2f} us  median " + " ".join(f"{x:6.2f}" for x in s["median"]) + "  latest " + " ".join(f"{x:6.2f}" for x in s["latest"]), flush=True)
        except Exception as e:
            rec["errors"].append(f"n={n} {build}: {e!r}"[:300]); print("ERROR", n, build, repr(e)[:300], flush=True)
    save()
rec["barrier_giveups"] = int(sync[255].item())
rec["wall_s"] = time.time() - t0
save()
