"""Chapter 09a: why are the step's GEMVs faster at 32K than at 1K? The timeline prices every gate|up GEMV from the first
attention layer on ~2 us lower at 32K (41.3 against 43.3 us a layer; the three layers before it, 44-45 us, at both
contexts: step_timeline_log_h200.json), and down ~0.6 us lower: ~0.15 ms a token that the 1K step does not get.
energy_h200.json ruled out the power: pauses that lift the card off its power cap give back almost nothing, and a
30 us pause before each attention launch does not move gate|up (step_timeline_idleattn30000_h200.json). What else does
a 32K attention launch do that a 1K one does not? It streams 128 MiB of cache through the copy engine (bulk copies), with
its two group barriers and the partials' writes. This run puts, before each of the 1K step's 16 attention launches, one
of these (step.cu's spacer place "attn"; timing only, nothing the step reads is written):
  empty spacer          pdl_spacer (the control: one launch, no bytes)
  ld stream 128 MiB     a plain read stream of a 128 MiB buffer (loads through the SM's load path)
  KV ring 32K           chapter 07's kv_stream_probe<2, 1, true, 0>: layer 0's keys and values at 32K through the fused
                        kernels' ring of bulk copies, attention's grid, no arithmetic, no barrier
  KV skeleton 32K       kv_stream_probe<2, 1, true, 2>: the same with both group barriers, the partials' writes and the
                        merge's reads (the 32K attention launch without its arithmetic)
and times each spacer alone (16 launches a graph). What a spacer gives back = the step with it - the control - 16 x its
time alone: ~0.15 ms if it does what a 32K attention launch does to the GEMVs after it. 3 s windows of back-to-back replays
(27B shape, synthetic, PDL graph), twice, interleaved; every plan's first 24 greedy tokens checked against the engine's.
Usage on the H200: PYTHONPATH=. python3 results/explore_gap32k.py OUT_DIR (gap32k_h200.json). About 2 min.
PYTHONPATH=. python3 results/explore_gap32k.py OUT_DIR size (gap32k_size_h200.json): does less buy the same? The KV ring at
4K, 8K and 16K keys before each attention launch (16, 32, 64 MiB), and the 32K ring or the 128 MiB stream once a token
(before the first attention launch only), beside the engine, the control and the 32K ring before each launch.
(The plans became (label, kind, keys, once) after gap32k_h200.json was made: the same steps. gap32k_size_h200.json's command
was written "OUT_DIR size OUT_DIR" by the run and corrected by hand; the script now writes it as run.)"""
import os, sys, types
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import torch
import explore_util
from explore_power import window
from explore_energy import stream_launcher, plan_graph

KV_N = 32768
# (label, kind, keys, once): kind "engine", "empty" (pdl_spacer), "ld" (the 128 MiB stream), or kv_stream_probe's BAR (0: the
# ring alone, 2: the skeleton) over `keys` keys; once: before the token's first attention launch only, else before each.
SETS = {"": ("gap32k_h200", [("engine", "engine", 0, False), ("empty spacer", "empty", 0, False), ("ld stream 128 MiB", "ld", 0, False),
                            ("KV ring 32K", 0, KV_N, False), ("KV skeleton 32K", 2, KV_N, False)]),
        "size": ("gap32k_size_h200", [("engine", "engine", 0, False), ("empty spacer", "empty", 0, False), ("KV ring 32K", 0, KV_N, False),
                                      ("KV ring 16K", 0, 16384, False), ("KV ring 8K", 0, 8192, False), ("KV ring 4K", 0, 4096, False),
                                      ("KV ring 32K once a token", 0, KV_N, True), ("ld stream 128 MiB once a token", "ld", 0, True)])}


def kv_launcher(step, tab, bar: int, n: int = KV_N, pdl: bool = False):
    """launch(): chapter 07's kv_stream_probe<2, 1, true, bar> over layer 0's cache at n keys of the page table `tab`
    (its own pages, not the session's), attention's grid; no PDL, or (pdl) its PDL build launched with PDL: it waits for
    the launch before it and releases the next one as v18 does (explore_attn_skeleton_step.py)."""
    from qwen_engine import attention as A
    from qwen_engine.runtime import get_kernel, launch
    cfg, dev = step.cfg, step.ctl.device
    names = tuple(f"kv_stream_probe<2, 1, true, {b}>" for b in (0, 2))
    k = get_kernel("attention", f"kv_stream_probe<2, 1, true, {bar}{', true' if pdl else ''}>", together=names)
    if k.max_dynamic_shared_size_bytes < A.RING_BYTES: k.max_dynamic_shared_size_bytes = A.RING_BYTES
    sink = torch.zeros(256, dtype=torch.int32, device=dev)
    sync = torch.zeros(256, dtype=torch.int64, device=dev)         # barrier counts: only grow, never reset
    part = torch.zeros(cfg.num_attention_heads * A.P_DEFAULT * cfg.head_dim, dtype=torch.float32, device=dev)
    kc, vc, tab = step.pool.kv[0, 0], step.pool.kv[1, 0], tab.table
    args = (kc, vc, tab, np.int32(tab.numel()), np.int32(n), np.int32(A.P_DEFAULT), sink, sync, part, np.uint64(0))
    return lambda: launch(k, (A.P_DEFAULT, cfg.num_key_value_heads), (256,), args, smem=A.RING_BYTES, pdl=pdl)


def main(out, which: str = ""):
    import time
    from qwen_engine.config import preset
    from qwen_engine.step import DecodeStep, synthetic_engine_weights
    from qwen_engine.decode_bench import _prompt, at_context
    from qwen_engine.attention import PageTable
    name, plans = SETS[which]
    rec, guard, el, save = explore_util.recorder(
        name, "Does what a 32K attention launch does make the GEMVs after it faster? The 1K decode step (27B shape, synthetic, "
        "PDL graph) with, before each attention launch, an empty spacer (the control), a 128 MiB plain read stream, or chapter 07's "
        "kv_stream_probe at 32K keys (the ring of bulk copies alone, or with the two group barriers, partials and merge reads): "
        "ms a replay over 3 s windows, twice, interleaved, and each spacer alone (16 a graph)."
        + (" This set: the ring at fewer keys, and the ring or the stream once a token (before the first attention launch only)." if which else ""),
        "explore_gap32k.py", out=out, args=f" {which}" if which else "",
        plans=[dict(plan=l, kind=k, keys=n, once=o) for l, k, n, o in plans], windows=[], tokens={}, alone_us={})
    t_ref = time.time()
    cfg = preset("qwen3_5_27b")
    EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
    step = DecodeStep(cfg, EW, max_context=34 * 1024)              # a pool of 136 pages: 128 for the KV spacers, 5 for the session
    kvtab = PageTable(step.pool, KV_N // 256, device="cuda")
    kvtab.ensure(KV_N)                                              # pages of their own (the session's are released at each reset)
    sbuf = torch.randint(0, 256, (128 * 2**20,), dtype=torch.uint8, device="cuda")
    stream = stream_launcher(sbuf, torch.zeros(4, dtype=torch.int32, device="cuda"))
    engine_spacer, engine_body = step._spacer, step.body
    seen = [0]                                                      # attention places passed in this body() call
    def body(*a, **k):
        seen[0] = 0
        return engine_body(*a, **k)
    step.body = body
    prompt, graphs, alone, count = _prompt(1024), {}, {}, {}
    for label, kind, n, once in plans:
        if kind not in ("engine", "empty"):
            f = (lambda pdl: stream(pdl)) if kind == "ld" else (lambda pdl, kv=kv_launcher(step, kvtab, kind, n): kv())
            def spacer(self, where, f=f, once=once):
                if where != "attn": return
                seen[0] += 1
                if not once or seen[0] == 1: f(self.pdl)
            step._spacer = types.MethodType(spacer, step)
            step.spacers = {}
            count[label] = 1 if once else 16
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(16): f(True)
            alone[label] = g
        else:
            step._spacer = engine_spacer
            step.spacers = {"attn": "pdl_spacer"} if kind == "empty" else {}
        graphs[label] = plan_graph(step, rec, guard, el, label, prompt)
    rec["tokens_equal"] = all(t == rec["tokens"]["engine"] for t in rec["tokens"].values())
    for rep in range(2):
        for label, *_ in plans:
            step.graph = graphs[label]
            at_context(step, 1024)
            t0, t1, calls, ms = window(lambda: step.graph.replay())
            rec["windows"].append(dict(what=label, ctx=1024, rep=rep, t0=t0 - t_ref, t1=t1 - t_ref, calls=calls, ms=ms))
            print(f"rep {rep} {label}: {ms:.3f} ms {el()}", flush=True)
        for label, g in alone.items():
            t0, t1, calls, ms = window(lambda: g.replay())
            rec["alone_us"].setdefault(label, []).append(ms * 1e3 / 16)
        save()
    med = lambda label: float(np.median([w["ms"] for w in rec["windows"] if w["what"] == label]))
    rec["given_back_ms"] = {label: med("empty spacer") + count[label] * float(np.median(us)) / 1e3 - med(label) for label, us in rec["alone_us"].items()}
    save()
    print(f"\ntokens equal: {rec['tokens_equal']}")
    print("plan | ms a replay (2 windows) | alone us | given back ms")
    for label, *_ in plans:
        print(f"{label} | {' / '.join('%.4f' % w['ms'] for w in rec['windows'] if w['what'] == label)} | "
              f"{rec['alone_us'].get(label, '')} | {rec['given_back_ms'].get(label, '')}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None, sys.argv[2] if len(sys.argv) > 2 else "")
