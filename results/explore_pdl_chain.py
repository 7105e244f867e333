"""Chapter 09a: what a grid wait waits for. The count hand-off (explore_count_handoff.py) gave the norm a path to its input
that does not wait for the GEMV before it to complete, and the step got slower. If griddepcontrol.wait waits for every
prerequisite grid still in flight, the GEMV after the norm still waits for the GEMV before it, whatever the norm does.
step.cu's probes answer it without the model, in CUDA graphs with programmatic dependent launches, 200 replays each:
  A = pdl_probe_sleep<20000>: releases its dependents at once, then each block sleeps 20 us (t0: its last block's end);
  B = pdl_probe_nowait: releases its dependents, writes its time (t1), no wait;   C = pdl_probe_wait: the time its wait returned (t2);
  S = pdl_spacer: waits, then releases (an engine-like middle kernel).
Chains: A -> C (the completion signal's own delay), A -> B -> C (does C wait for A?), A -> S -> C (two signals), and
A -> B -> B -> C. Each with A on 1 block and on 132 x 2 blocks. Reported: medians of t2 - t0 and t1 - t0 (us).
Usage on the H200: PYTHONPATH=. python3 results/explore_pdl_chain.py OUT_DIR (pdl_chain_h200.json). Under a minute.
With the argument `grids` (pdl_chain_grids_h200.json): the chains A -> C and A -> S -> C with the sleeper on 1 to 8,704 blocks
(gate|up's grid) of 32 threads: does the completion signal grow with the grid?"""
import os, sys, statistics
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import torch
import explore_util

CHAINS = {"A C": "C", "A B C": "BC", "A S C": "SC", "A B B C": "BBC"}
GRIDS = (1, 264)
SET = sys.argv[2] if __name__ == "__main__" and len(sys.argv) > 2 else ""
if SET == "grids":                 # the second run: does the completion signal grow with the sleeper's grid? (pdl_chain_grids_h200.json)
    CHAINS, GRIDS = {"A C": "C", "A S C": "SC"}, (1, 132, 264, 1056, 2112, 4224, 8704)


def run(rec, el):
    from qwen_engine.runtime import launch, get_kernel
    kA = get_kernel("step", "pdl_probe_sleep<20000>")
    kB, kC, kS = (get_kernel("step", n) for n in ("pdl_probe_nowait", "pdl_probe_wait", "pdl_spacer"))
    t = torch.zeros(4, dtype=torch.int64, device="cuda")
    rec["runs"] = []
    for grid in GRIDS:
        for name, rest in CHAINS.items():
            def body():
                launch(kA, (grid,), (32,), (t,), pdl=True)
                for c in rest:
                    if c == "B": launch(kB, (1,), (32,), (t,), pdl=True)
                    elif c == "C": launch(kC, (1,), (32,), (t,), pdl=True)
                    else: launch(kS, (1,), (32,), (), pdl=True)
            body(); torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                with torch.cuda.graph(g, stream=s): body()
            wait_us, nowait_us = [], []
            for _ in range(200):
                t.zero_(); g.replay(); torch.cuda.synchronize()
                t0, t1, t2 = (int(v) for v in t[:3].tolist())
                wait_us.append((t2 - t0) / 1e3)
                if "B" in rest: nowait_us.append((t1 - t0) / 1e3)
            r = dict(chain=name, a_blocks=grid, wait_after_a_end_us=statistics.median(wait_us),
                     wait_p10_p90=[float(np.percentile(wait_us, 10)), float(np.percentile(wait_us, 90))],
                     nowait_after_a_end_us=statistics.median(nowait_us) if nowait_us else None)
            rec["runs"].append(r)
            print(f"{name} (A: {grid} blocks): C's wait returns {r['wait_after_a_end_us']:+.2f} us after A's last block "
                  f"(p10-p90 {r['wait_p10_p90'][0]:+.2f}..{r['wait_p10_p90'][1]:+.2f})"
                  + (f"; B ran {r['nowait_after_a_end_us']:+.2f} us after it" if nowait_us else "") + f" {el()}", flush=True)


if __name__ == "__main__":
    rec, guard, el, save = explore_util.recorder(
        "pdl_chain_grids_h200" if SET else "pdl_chain_h200", "What griddepcontrol.wait waits for: chains of step.cu's probe kernels in CUDA graphs with programmatic "
        "dependent launches (a 20 us sleeper that releases at once, a middle kernel with no wait, an engine-like middle kernel, a "
        "waiter), 200 replays each, the waiter's wait return and the middle kernel's time against the sleeper's last block end.",
        "explore_pdl_chain.py", args=" grids" if SET else "")
    guard("chains", lambda: run(rec, el))
    save()
    print(f"done {el()}; errors {len(rec['errors'])}")
