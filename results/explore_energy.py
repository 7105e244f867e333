"""Chapter 09a: is the step at 1K paced by its bytes, or by the power it draws? The step runs at the card's 700 W limit
(power_h200.json, step_clocks_h200.json), and the timeline (step_timeline_log_h200.json) prices every gate|up GEMV ~2 us
lower at 32K than at 1K, from the first attention layer on (layers 0-2, before it, cost the same at both contexts): as if
what a long attention kernel leaves behind were headroom. If the step is held by its power, a pause in which the card
draws little should cost the step less than its own length, because the kernels after it run faster; if by its bytes
and latencies, a pause costs what it lasts. Windows of WINDOW seconds of back-to-back replays of the 27B-shape decode step
(synthetic, seed 0, PDL graph, the engine's builds), nvidia-smi sampling power, clocks and throttle reasons every 20 ms:
  engine                                   the step as it is (1K and 32K)
  empty spacer before each attention       step.cu's pdl_spacer at the "attn" place (the control: a launch, no pause)
  idle 30 us before each attention         idle_spacer<30000>: 16 pauses of 30 us a token, 0.48 ms (1K and 32K)
  idle 10 us before each GDN               idle_spacer<10000> at the "gdn" place: 48 pauses of 10 us, 0.48 ms
  stream 128 MiB before each attention     a plain read stream of a 128 MiB buffer there (what a long attention reads)
and chapter 01's read stream; then the 128 MiB stream alone (16 launches a graph, PDL), to price what it adds. Twice,
interleaved. Every plan's first 24 greedy tokens are checked against the engine's (the spacers and streams write nothing
the step reads). Usage on the H200: PYTHONPATH=. python3 results/explore_energy.py OUT_DIR (energy_h200.json). About 2 min.
(plan_graph became a function, which explore_gap32k.py shares, after its record was made: the same steps.)"""
import os, sys, types
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import torch
import explore_util
from explore_power import window

SMI_FILE = "/tmp/qe_energy_smi.csv"
STREAM_MIB = 128
STREAM_KERNEL = ("gemv", "gemv_stream_probe_v2<8, true>")
PLANS = [("engine", {}, (1024, 32768)),
         ("empty spacer before each attention", {"attn": "pdl_spacer"}, (1024,)),
         ("idle 30 us before each attention", {"attn": "idle_spacer<30000>"}, (1024, 32768)),
         ("idle 10 us before each GDN", {"gdn": "idle_spacer<10000>"}, (1024,)),
         (f"stream {STREAM_MIB} MiB before each attention", "stream", (1024,))]


def stream_launcher(buf, sink):
    "launch(pdl): one plain read stream of `buf` (two blocks of 512 threads an SM, its first loads before the grid wait)."
    from qwen_engine.runtime import get_kernel, launch
    k = get_kernel(*STREAM_KERNEL)
    grid = (2 * torch.cuda.get_device_properties(buf.device).multi_processor_count,)
    return lambda pdl: launch(k, grid, (512,), (buf, np.int64(buf.numel() // 16), sink), pdl=pdl)


def plan_graph(step, rec, guard, el, label: str, prompt: list):
    """The step as it is now set up (spacers): its first 24 greedy tokens after 16 of `prompt` into rec["tokens"][label]
    (compared with the engine's, the first plan), then a graph captured at `prompt` (64 new tokens' pages)."""
    from qwen_engine.step import run
    step.graph = None
    rec["tokens"][label] = guard(f"tokens {label}", lambda: list(run(step, prompt[:16], 24)))
    step.graph = None
    step.reset(prompt, 64); step.capture()
    print(f"{label}: tokens {'equal' if rec['tokens'][label] == rec['tokens']['engine'] else 'DIFFER'} {el()}", flush=True)
    return step.graph


def main(out):
    from qwen_engine.config import preset
    from qwen_engine.step import DecodeStep, synthetic_engine_weights
    from qwen_engine.decode_bench import _prompt, at_context
    from qwen_engine.roofline import stream_read
    rec, guard, el, save = explore_util.recorder(
        "energy_h200", "Is the decode step at 1K held by its power? 3 s windows of back-to-back replays (27B shape, synthetic, PDL graph) "
        "of the engine's step and of the step with pauses (idle_spacer: 16 x 30 us before the attention launches, 48 x 10 us before "
        "the GDN launches), an empty spacer (the control) or a 128 MiB read stream before each attention launch, nvidia-smi's power, "
        "clocks and throttle reasons every 20 ms; chapter 01's read stream; the 128 MiB stream alone. Twice, interleaved.",
        "explore_energy.py", out=out, plans=[dict(plan=p, spacers=s, ctxs=list(c)) for p, s, c in PLANS], windows=[], samples=[],
        tokens={}, stream_alone_us=[])
    smi = explore_util.smi_start(SMI_FILE)
    import time
    t_ref = time.time()
    cfg = preset("qwen3_5_27b")
    EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
    step = DecodeStep(cfg, EW, max_context=33 * 1024)
    sbuf = torch.randint(0, 256, (STREAM_MIB * 2**20,), dtype=torch.uint8, device="cuda")
    sink = torch.zeros(4, dtype=torch.int32, device="cuda")
    stream = stream_launcher(sbuf, sink)
    engine_spacer = step._spacer
    def stream_spacer(self, where):
        if where == "attn": stream(self.pdl)
    prompt, graphs = _prompt(1024), {}
    for label, sp, _ in PLANS:
        step._spacer = types.MethodType(stream_spacer, step) if sp == "stream" else engine_spacer
        step.spacers = {} if sp == "stream" else dict(sp)
        graphs[label] = plan_graph(step, rec, guard, el, label, prompt)
    rec["tokens_equal"] = all(t == rec["tokens"]["engine"] for t in rec["tokens"].values())
    n = 4 * 2**30
    big = torch.randint(0, 256, (n,), dtype=torch.uint8, device="cuda")
    g = torch.cuda.CUDAGraph()                      # the 128 MiB stream alone: 16 launches a graph, as many as a token has
    with torch.cuda.graph(g):
        for _ in range(16): stream(True)
    for rep in range(2):
        t0, t1, calls, ms = window(lambda: stream_read(big, 2, 8, 1024, 2, sink))
        rec["windows"].append(dict(what="read stream", rep=rep, t0=t0 - t_ref, t1=t1 - t_ref, calls=calls, ms=ms, tbps=n / ms / 1e9))
        for label, _, ctxs in PLANS:
            step.graph = graphs[label]
            for ctx in ctxs:
                at_context(step, ctx)
                t0, t1, calls, ms = window(lambda: step.graph.replay())
                rec["windows"].append(dict(what=label, ctx=ctx, rep=rep, t0=t0 - t_ref, t1=t1 - t_ref, calls=calls, ms=ms))
                print(f"rep {rep} {label} {ctx}: {ms:.3f} ms {el()}", flush=True)
        t0, t1, calls, ms = window(lambda: g.replay())
        rec["stream_alone_us"].append(ms * 1e3 / 16)
        rec["windows"].append(dict(what=f"stream {STREAM_MIB} MiB alone (16 a graph)", rep=rep, t0=t0 - t_ref, t1=t1 - t_ref, calls=calls, ms=ms))
        save()
    rec["samples"] = explore_util.smi_samples(smi, SMI_FILE, t_ref)
    for w in rec["windows"]:
        explore_util.window_stats(w, rec["samples"])
        if "watts_median" in w: w["joules"] = w["watts_median"] * w["ms"] / 1e3
    save()
    print(f"\ntokens equal: {rec['tokens_equal']}; the {STREAM_MIB} MiB stream alone: {rec['stream_alone_us']} us")
    print("window | ctx | ms a call | W median | SM MHz median | capped | J a call")
    for w in rec["windows"]:
        print(f"{w['what']} | {w.get('ctx', '')} | {w['ms']:.4f} | {w.get('watts_median')} | {w.get('sm_median')} | "
              f"{w.get('capped')} of {w.get('samples')} | {w.get('joules', 0):.3f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
