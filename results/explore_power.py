"""Chapters 01, 08 and 09a: the power the step draws, and which half of the GDN state's traffic costs the step at 1K.
step_clocks_h200.json found the decode step at the card's power limit (nvidia-smi: 693-696 W, the software power cap among
the throttle reasons, the SM clock 1905-1980 MHz), at 1K and 32K alike. Is the floor's own measurement (chapter 01's read
stream, whose bandwidth every fraction in this book divides by) also at the limit? And v7 without its state traffic (build
91) makes the step 0.28 ms faster at 1K: is it the 3 MiB a layer of loads or of stores?
Windows of WINDOW seconds each, nvidia-smi sampling the SM and memory clocks, the power and the throttle reasons every
20 ms into a file meanwhile:
1. chapter 01's read stream (measure_bandwidth's best configuration) over 4 GiB, back to back: TB/s over the window;
2. the 27B-shape decode step (PDL graph, synthetic, seed 0) with GDN v7, 91 (no state traffic), 95 (no state loads), 96 (no
   state stores) at 1K, and v7 at 32K, replayed back to back, twice, interleaved: ms a replay over the window.
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_power.py OUT_DIR   (about 2 min)
(Its nvidia-smi sampler, its graphs and its window statistics moved into explore_util (smi_start, smi_samples, gdn_step_graphs,
window_stats) after its record was made: the same steps.)"""
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import explore_util

WINDOW = 3.0
SMI_FILE = "/tmp/qe_power_smi.csv"
STEP_PLANS = [("v7", 7, 1024), ("no state traffic (91)", 91, 1024), ("no state loads (95)", 95, 1024), ("no state stores (96)", 96, 1024),
              ("v7", 7, 32768)]


def window(fn, per_call_bytes=None):
    "fn() back to back for WINDOW s: (t0, t1, calls, ms a call by CUDA events)."
    for _ in range(5): fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.time(); a.record(); n = 0
    while time.time() - t0 < WINDOW:
        for _ in range(20): fn()
        n += 20
        torch.cuda.synchronize()
    b.record(); b.synchronize()
    return t0, time.time(), n, a.elapsed_time(b) / n


def main(out):
    from qwen_engine.roofline import stream_read
    from qwen_engine.decode_bench import at_context
    rec, guard, el, save = explore_util.recorder(
        "power_h200", "nvidia-smi's power, clocks and throttle reasons (every 20 ms) over 3 s windows of: chapter 01's read stream "
        "(4 GiB, its best configuration), and the decode step (27B shape, synthetic, PDL graph) with GDN v7, 91 (no state traffic), "
        "95 (no state loads), 96 (no state stores) at 1K and v7 at 32K, twice, interleaved.", "explore_power.py", out=out, windows=[], samples=[])
    smi = explore_util.smi_start(SMI_FILE)
    t_ref = time.time()
    n = 4 * 2**30
    buf = torch.randint(0, 256, (n,), dtype=torch.uint8, device="cuda")
    sink = torch.zeros(1, dtype=torch.int32, device="cuda")
    step, graphs = explore_util.gdn_step_graphs(v for _, v, _ in STEP_PLANS)
    print(f"ready {el()}", flush=True)
    for rep in range(2):
        t0, t1, calls, ms = window(lambda: stream_read(buf, 2, 8, 1024, 2, sink))
        rec["windows"].append(dict(what="read stream", rep=rep, t0=t0 - t_ref, t1=t1 - t_ref, calls=calls, ms=ms, tbps=n / ms / 1e9))
        print(f"rep {rep} read stream: {n / ms / 1e9:.3f} TB/s {el()}", flush=True)
        for label, v, ctx in STEP_PLANS:
            step.graph = graphs[v]
            at_context(step, ctx)
            t0, t1, calls, ms = window(lambda: step.graph.replay())
            rec["windows"].append(dict(what=f"step {label}", variant=v, ctx=ctx, rep=rep, t0=t0 - t_ref, t1=t1 - t_ref, calls=calls, ms=ms))
            print(f"rep {rep} step {label} {ctx}: {ms:.3f} ms {el()}", flush=True)
    rec["samples"] = explore_util.smi_samples(smi, SMI_FILE, t_ref)
    print("\nwindow | ctx | ms a call | TB/s | SM MHz median (min) | W median (max) | samples capped")
    for w in rec["windows"]:
        explore_util.window_stats(w, rec["samples"])
        print(f"{w['what']} | {w.get('ctx', '')} | {w['ms']:.4f} | {w.get('tbps', '')} | {w.get('sm_median')} ({w.get('sm_min')}) | "
              f"{w.get('watts_median')} ({w.get('watts_max')}) | {w.get('capped')} of {w.get('samples')}")
    save()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
