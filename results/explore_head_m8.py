"""Chapter 06: the head's 8-token build (the verify form of speculative decoding). head_topk_h200.json showed the engine's
head (v6, a 20-chunk ring) at 52 % of the bandwidth for 8 tokens: its 8-token build takes 176 registers, so one block
an SM. Every configuration of HEAD_V6_SWEEP at M = 8 (and M = 3, the same build): checked (check_lm_head: logits within
1 bf16 ulp of float64, argmax, row set, tie), timed with PDL interleaved with the engine's configuration, twice.
Usage on the H200: PYTHONPATH=. python3 results/explore_head_m8.py OUT_DIR (head_m8_h200.json). About 60 s."""
import torch
from qwen_engine import gemv as G
import explore_util

gen = torch.Generator(device="cuda").manual_seed(0)
rec, guard, el, save = explore_util.recorder(
    "head_m8_h200", "The head's 8-token build over HEAD_V6_SWEEP: checked at M = 3, timed at M = 8 with PDL interleaved with the engine's "
    "configuration, twice.", "explore_head_m8.py", checks=[], timings=[])
for cfg in G.HEAD_V6_SWEEP:
    c = guard(f"check {cfg}", lambda: G.check_lm_head(gen, M=3, v3=cfg))
    if c: rec["checks"].append(dict(c, cfg=list(cfg))); print(f"check {cfg}: {c} {el()}", flush=True)
save()
for rep in range(2):
    for cfg in (G.ENGINE_CHOICE["lm_head"],) + G.HEAD_V6_SWEEP:
        t = guard(f"time {cfg}", lambda: G.time_lm_head(None, M=8, v3=cfg, pdl=True))
        if t:
            rec["timings"].append(dict(cfg=list(cfg), rep=rep, us=t["us"], frac=t["tbps"] / rec["bandwidth_tbps"], engine=tuple(cfg) == G.ENGINE_CHOICE["lm_head"]))
            print(f"rep {rep} {cfg}: {t['us']:.1f} us for 8 tokens ({100 * t['tbps'] / rec['bandwidth_tbps']:.1f} %) {el()}", flush=True)
save()
print(f"done {el()}; errors {len(rec['errors'])}")
