"""Chapter 06/09a: the timeline of chapter 06's token of GEMVs (256 fp8 projections with distinct weights and the bf16
head with its argmax, the engine's plan, PDL, one CUDA graph: `gemv.token_graph`), in the timeline build
(QE_TIMELINE=1, kernels/common.cu). Chapter 06 times each shape alone, chained to itself, and the token as a whole; this
says what each shape costs in the token's chain (its price: from its first block's release to the next launch's), and so
where the token's time over its floor goes. The graph's nodes keep their %gridid across replays, so the records left
after `token_graph`'s timing are its last replay's (its eager warm-up launches are earlier in time and are dropped).
Usage on the H200: QE_TIMELINE=1 PYTHONPATH=. python3 results/explore_timeline_gemv.py OUT_DIR (timeline_gemv_h200.json)."""
import sys, statistics
import numpy as np
import torch
import explore_util
from qwen_engine import runtime as R
from qwen_engine import gemv as G
from qwen_engine.config import preset

assert R.TIMELINE, "run with QE_TIMELINE=1 in the environment"
rec, guard, el, save = explore_util.recorder("timeline_gemv_h200", "The token of GEMVs (chapter 06's token_graph: the engine's plan, PDL, one graph) in the "
                                             "timeline build: each launch's price in the chain against its floor, per shape, over 5 graphs; "
                                             "beside it the token's ms of each graph.", "explore_timeline_gemv.py", graphs=[])
bw = rec["bandwidth_tbps"]
c = preset("qwen3_5_27b")
H, I = c.hidden_size, c.intermediate_size
shapes = []
for t in c.layer_types:
    first = (c.q_gate_rows + 2 * c.kv_rows, H, 0) if t == "full_attention" else (c.gdn_conv_dim + c.gdn_value_dim, H, 0)
    oin = c.num_attention_heads * c.head_dim if t == "full_attention" else c.gdn_value_dim
    shapes += [first, (H, oin, 1), (2 * I, H, 2), (H, I, 1)]
L = len(shapes) + 2                                     # + the head and its argmax
gen = torch.Generator(device="cuda").manual_seed(0)
for g in range(5):
    R.timeline_buffer().zero_(); torch.cuda.synchronize()
    t = guard("token", lambda: G.token_graph(None, gen, bw, pdl=True))
    recs = R.timeline_records()
    gids, starts = np.unique(recs[:, 0], return_index=True)
    bounds = list(starts) + [len(recs)]
    launches = [recs[bounds[j]:bounds[j + 1]] for j in range(len(gids))]
    launches.sort(key=lambda r: r[:, 4].max())
    last = sorted(launches[-L:], key=lambda r: r[0, 0])             # the last replay, in launch order
    T = last[0][:, 4].min()
    rows = []
    for i, r in enumerate(last):
        end = last[i + 1][:, 4].min() if i + 1 < L else None
        sh = shapes[i] if i < len(shapes) else None
        nb = G.bytes_of(*sh[:2], 1, sh[2]) if sh else (c.vocab_size * H * 2 if i == len(shapes) else 0)
        rows.append(dict(i=i, shape=list(sh) if sh else None, blocks=int(len(r)), reach_first=(r[:, 3].min() - T) / 1e3,
                         release_first=(r[:, 4].min() - T) / 1e3, release_last=(r[:, 4].max() - T) / 1e3,
                         price=None if end is None else (end - r[:, 4].min()) / 1e3, floor_us=nb / (bw * 1e12) * 1e6))
    rec["graphs"].append(dict(token=t, rows=rows, launches_seen=int(len(gids))))
    print(f"graph {g}: {t['ms']:.3f} ms, ratio {t['ratio']:.3f}; {len(gids)} launches recorded {el()}", flush=True)
    save()
names = {(14336, 5120, 0): "q|gate|k|v", (16384, 5120, 0): "qkv|z", (5120, 6144, 1): "out_proj", (34816, 5120, 2): "gate|up", (5120, 17408, 1): "down"}
print("\nshape | launches | price us (median over graphs of the mean) | floor us | % of floor | ms over the floor a token")
for sh, n in names.items():
    ps = [statistics.mean(r["price"] for r in g["rows"] if r["shape"] == list(sh) and r["price"] is not None) for g in rec["graphs"]]
    cnt = sum(1 for s in shapes if s == sh)
    fl = next(r["floor_us"] for r in rec["graphs"][0]["rows"] if r["shape"] == list(sh))
    p = statistics.median(ps)
    print(f"{n} | {cnt} | {p:.2f} | {fl:.2f} | {100 * fl / p:.1f} | {(p - fl) * cnt / 1e3:.3f}")
print(f"done {el()}; errors {len(rec['errors'])}")
save()
