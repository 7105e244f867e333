"""Chapter 06: the head's top-k partials (lm_head_bf16_v9: v6 with each block's k best (logit, id) keys per token, sorted
in shared memory after the stream; head_topk merges them). check_lm_head_topk at k = 1, 20 and 64, M = 1 and 3 (the top k
of the call's own logits by (logit descending, id ascending), a row set, a forced three-way tie, the same logits and
argmax as v6); then timed alone (graph, PDL, the 2.54 GB head with no rotation needed) against the engine's head,
interleaved, twice, with the merge (head_topk's kernel, and torch.topk over the partials) timed on its own.
Usage on the H200: PYTHONPATH=. python3 results/explore_head_topk.py OUT_DIR (head_topk_h200.json). About 60 s."""
import torch
from qwen_engine import gemv as G
from qwen_engine.runtime import time_graph, median
import explore_util

gen = torch.Generator(device="cuda").manual_seed(0)
rec, guard, el, save = explore_util.recorder(
    "head_topk_h200", "The head's top-k partials (lm_head_bf16_v9) checked at k = 1, 20, 64 and M = 1, 3, and timed against the engine's head "
    "(v6) with PDL, interleaved, twice; the merge of the partials timed on its own.", "explore_head_topk.py", checks=[], timings=[], merge=[])
for k in (1, 20, 64):
    for M in (1, 3):
        c = guard(f"check k={k} M={M}", lambda: G.check_lm_head_topk(gen, k=k, M=M))
        if c: rec["checks"].append(dict(c, k=k, M=M)); print(f"check k={k} M={M}: {c} {el()}", flush=True)
save()
S = G.ENGINE_CHOICE["lm_head"]
W = (torch.randn(248320, 5120, device="cuda") * 0.02).to(torch.bfloat16)
rs = torch.arange(248320, dtype=torch.int32, device="cuda")
for M in (1, 8):
    x = torch.randn(M, 5120, device="cuda").to(torch.bfloat16)
    sc = G.lm_head_scratch(248320, M)
    parts = {k: G.lm_head(W, x, rowset=rs, S=S, scratch=sc, topk=k)[2] for k in (20, 64)}
    for rep in range(2):
        for k in (0, 20, 64):
            fn = (lambda i: G.lm_head(W, x, rowset=rs, S=S, scratch=sc, pdl=True)) if k == 0 else \
                 (lambda i, k=k: G.lm_head(W, x, rowset=rs, S=S, scratch=sc, pdl=True, topk=k, topk_part=parts[k]))
            us = guard(f"time k={k} M={M}", lambda: 1000 * median(time_graph(fn, calls=5, reps=7)))
            if us:
                rec["timings"].append(dict(M=M, k=k, rep=rep, us=us, frac=W.numel() * 2 / us / 1e6 / rec["bandwidth_tbps"]))
                print(f"M={M} rep {rep} k={k}: {us:.1f} us {el()}", flush=True)
    for k in (20, 64):
        outs = (torch.empty(M, k, device="cuda"), torch.empty(M, k, dtype=torch.int32, device="cuda"))
        for how, fn in (("kernel", lambda i: G.head_topk(parts[k], k, out=outs)), ("torch", lambda i: G.head_topk_reference(parts[k], k))):
            us = guard(f"merge {how} k={k} M={M}", lambda: 1000 * median(time_graph(fn, calls=20, reps=7)))
            if us: rec["merge"].append(dict(M=M, k=k, how=how, us=us)); print(f"merge {how} M={M} k={k}: {us:.1f} us", flush=True)
save()
print("\nM | k | us (2 repeats) | % of bandwidth")
for M in (1, 8):
    for k in (0, 20, 64):
        ts = [t for t in rec["timings"] if t["M"] == M and t["k"] == k]
        us, fr = " / ".join(f"{t['us']:.1f}" for t in ts), " / ".join(f"{100 * t['frac']:.1f}" for t in ts)
        print(f"{M} | {k or 'v6'} | {us} | {fr}")
print(f"done {el()}; errors {len(rec['errors'])}")
