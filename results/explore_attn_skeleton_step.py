"""Chapters 07 and 09a: what would a faster attention kernel be worth to the step? Alone, v18's arithmetic is half its time at
1K (14.8 us against its skeleton's 7.3: kv_stream_marks_h200.json), but a kernel that was faster alone has not always been
faster in the step (chapter 07's coarser partitions at 1K: faster alone, slower in the step). So this run asks the step
itself. The 27B-shape decode step (synthetic, PDL graph), timing only, with the attention launch
  engine               v18, as the engine runs it
  skeleton             replaced by its skeleton: chapter 07's kv_stream_probe<2, 1, true, 2, true> (PDL build) over the
                       context's keys (layer 0's cache, the session's pages), attention's grid, both group barriers, the
                       partials' writes and the merge's reads, no arithmetic; it waits for the launch before it and releases
                       the next one as v18 does
  ring alone           kv_stream_probe<2, 1, true, 0, true>: the keys and values through the ring, no barrier, no arithmetic
  omitted              no attention launch at all (DecodeStep.omit: the bound)
at 1K and 32K (the probes' graphs captured per context: their key count is an argument), 3 s windows of back-to-back
replays, twice, interleaved; and each probe alone (16 launches a graph, PDL) at both contexts. The probe plans write no
attention output, so their out_proj reads stale values and their tokens are not the engine's (timing only).
Usage on the H200: PYTHONPATH=. python3 results/explore_attn_skeleton_step.py OUT_DIR (attn_skeleton_step_h200.json). ~2 min."""
import os, sys, types
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import torch
import explore_util
from explore_power import window
from explore_energy import plan_graph
from explore_gap32k import kv_launcher

CTXS = (1024, 32768)
PLANS = [("engine", None), ("skeleton", 2), ("ring alone", 0), ("omitted", "omit")]


def main(out):
    import time
    from qwen_engine.config import preset
    from qwen_engine.step import DecodeStep, synthetic_engine_weights
    from qwen_engine.decode_bench import _prompt, at_context
    rec, guard, el, save = explore_util.recorder(
        "attn_skeleton_step_h200", "What would a faster attention kernel be worth to the step? The decode step (27B shape, synthetic, PDL "
        "graph, timing only) with its attention launches as the engine runs them, replaced by their skeleton (kv_stream_probe's PDL "
        "build: the ring, both group barriers, partials and merge reads, no arithmetic) or by the ring alone, or omitted, at 1K and "
        "32K: ms a replay over 3 s windows, twice, interleaved; each probe alone (16 a graph, PDL).", "explore_attn_skeleton_step.py",
        out=out, plans=[dict(plan=p, bar=b if isinstance(b, int) else None) for p, b in PLANS], windows=[], tokens={}, alone_us={})
    t_ref = time.time()
    cfg = preset("qwen3_5_27b")
    EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
    step = DecodeStep(cfg, EW, max_context=33 * 1024)
    engine_spacer = step._spacer
    prompt, graphs, alone = _prompt(1024), {}, {}
    step.table.ensure(max(CTXS) + 64)          # the probes' keys: the session's pages (reset releases them; at_context backs them again)
    for label, bar in PLANS:
        for ctx in (CTXS if isinstance(bar, int) else (None,)):
            key = f"{label} {ctx // 1024}K" if ctx else label
            if isinstance(bar, int):
                f = kv_launcher(step, step.table, bar, n=ctx, pdl=True)
                step._spacer = types.MethodType(lambda self, where, f=f: f() if where == "attn" else None, step)
                g = torch.cuda.CUDAGraph()
                at_context(step, ctx)
                with torch.cuda.graph(g):
                    for _ in range(16): f()
                alone[key] = g
            else:
                step._spacer = engine_spacer
            step.omit = {"attention"} if bar is not None else set()
            graphs[key] = plan_graph(step, rec, guard, el, key, prompt)
    step.omit, step._spacer = set(), engine_spacer
    for rep in range(2):
        for key, g in graphs.items():
            for ctx in CTXS:
                if key[-1] == "K" and not key.endswith(f" {ctx // 1024}K"): continue
                step.graph = g
                at_context(step, ctx)
                t0, t1, calls, ms = window(lambda: step.graph.replay())
                rec["windows"].append(dict(what=key.rsplit(" ", 1)[0] if key[-1] == "K" else key, ctx=ctx, rep=rep, t0=t0 - t_ref, t1=t1 - t_ref,
                                           calls=calls, ms=ms))
                print(f"rep {rep} {key} {ctx}: {ms:.3f} ms {el()}", flush=True)
        for key, g in alone.items():
            at_context(step, int(key.split()[-1][:-1]) * 1024)
            t0, t1, calls, ms = window(lambda: g.replay())
            rec["alone_us"].setdefault(key, []).append(ms * 1e3 / 16)
        save()
    print("\nplan | ctx | ms a replay (2 windows)")
    for what in dict.fromkeys(w["what"] for w in rec["windows"]):
        for ctx in CTXS:
            print(f"{what} | {ctx} | {' / '.join('%.4f' % w['ms'] for w in rec['windows'] if w['what'] == what and w['ctx'] == ctx)}")
    print("alone us:", {k: [round(x, 2) for x in v] for k, v in rec["alone_us"].items()})
    save()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
