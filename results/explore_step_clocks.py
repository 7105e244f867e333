"""Chapters 08 and 09a: is the GDN state's price in the step a matter of clocks? Two observations to explain. The timeline
(step_timeline_now_h200.json) prices every GEMV of the step 5-7 % higher at 1K than at 32K, in every layer (6.18 against
5.88 ms a token), though a GEMV does the same work at both contexts; and v7 without its state traffic (ablation build 91,
gdn_ablate_step_h200.json) makes the step 0.28 ms faster at 1K but only 0.05 ms at 32K, for 0.29 GB of 27 a token.
This run replays the 27B-shape decode step (PDL graph, synthetic, seed 0) back to back for WINDOW seconds per plan
(v7 and build 91, 1K and 32K, twice each, interleaved) while nvidia-smi samples the SM and memory clocks, the power and
the temperature every 20 ms; per plan: ms a replay (CUDA events over the window) and the samples inside it.
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_step_clocks.py OUT_DIR   (about 2 min)
(Its nvidia-smi sampler and its graphs moved into explore_util (smi_start, smi_samples, gdn_step_graphs) after its record was made: the same steps.)"""
import os, sys, time, statistics as st
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import explore_util

WINDOW = 3.0
PLANS = [("v7", 7, 1024), ("v7", 7, 32768), ("91", 91, 1024), ("91", 91, 32768)]


def main(out):
    from qwen_engine.decode_bench import at_context
    rec, guard, el, save = explore_util.recorder(
        "step_clocks_h200", "The decode step (27B shape, synthetic, PDL graph) replayed back to back for 3 s per plan (GDN v7 and its "
        "build 91 without state traffic, 1K and 32K, twice), nvidia-smi's SM and memory clocks, power and temperature sampled every "
        "20 ms meanwhile: ms a replay and the samples of each window.", "explore_step_clocks.py", out=out, windows=[], samples=[])
    smi = explore_util.smi_start("/tmp/qe_smi.csv")
    t_smi = time.time()
    step, graphs = explore_util.gdn_step_graphs(v for _, v, _ in PLANS)
    for rep in range(2):
        for label, v, ctx in PLANS:
            step.graph = graphs[v]
            at_context(step, ctx)
            for _ in range(20): step.graph.replay()
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0 = time.time(); a.record(); n = 0
            while time.time() - t0 < WINDOW:
                for _ in range(50): step.graph.replay()
                n += 50
                torch.cuda.synchronize()
            b.record(); b.synchronize(); t1 = time.time()
            ms = a.elapsed_time(b) / n
            rec["windows"].append(dict(plan=label, variant=v, ctx=ctx, rep=rep, t0=t0 - t_smi, t1=t1 - t_smi, replays=n, ms=ms))
            print(f"rep {rep} {label} {ctx}: {ms:.3f} ms a replay over {n} {el()}", flush=True)
    rec["samples"] = explore_util.smi_samples(smi, "/tmp/qe_smi.csv", t_smi)
    print("\nplan | ctx | ms a replay | SM MHz (median, min) | mem MHz | W (median, max) | throttle reasons")
    for w in rec["windows"]:
        s = [x for x in rec["samples"] if w["t0"] + 0.2 < x["t"] < w["t1"]]
        if s:
            w.update(sm_median=st.median(x["sm"] for x in s), sm_min=min(x["sm"] for x in s), mem_median=st.median(x["mem"] for x in s),
                     watts_median=st.median(x["watts"] for x in s), watts_max=max(x["watts"] for x in s), samples=len(s),
                     reasons=sorted({x["reasons"] for x in s}))
        print(f"{w['plan']} | {w['ctx']} | {w['ms']:.3f} | {w.get('sm_median')}, {w.get('sm_min')} | {w.get('mem_median')} | "
              f"{w.get('watts_median')}, {w.get('watts_max')} | {w.get('reasons')}")
    save()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
