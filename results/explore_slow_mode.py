"""Chapter 06: the slow mode. Single timings of the engine's head and of its q|gate|k|v GEMV fall now and then ~10 %
slow (head_warm_h200.json: 613-648 us against 592-599; placement_warm_h200.json: q|gate|k|v 19.2-21.0 us), whatever the
configuration or the weights' addresses. This run times calls one at a time (a CUDA-event pair around each, back to
back, after the 50 ms warm-up) to see the distribution and whether slow calls come in runs: the head (2.54 GB, one
weight copy) 400 calls; q|gate|k|v (one graph of 4 calls cycling 4 weight copies past L2) 400 replays; and nvidia-smi's
SM and memory clocks sampled every 20 ms meanwhile, when it is there.
Usage on the H200: PYTHONPATH=. python3 results/explore_slow_mode.py OUT_DIR (slow_mode_h200.json). About 20 s."""
import time, subprocess, shutil
import torch
from qwen_engine import gemv as G
from qwen_engine.runtime import WARM_MS
import explore_util

rec, guard, el, save = explore_util.recorder(
    "slow_mode_h200", "Per-call times (CUDA events, back to back, after the warm-up) of the engine's head (400) and q|gate|k|v GEMV "
    "(400 replays of a 4-call graph), with nvidia-smi's clocks sampled meanwhile.", "explore_slow_mode.py", head_us=[], qg_us=[], clocks=[])
gen = torch.Generator(device="cuda").manual_seed(0)
smi = None
if shutil.which("nvidia-smi"):
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu", "--format=csv,noheader", "-lms", "20"],
                           stdout=subprocess.PIPE, text=True)


def per_call(fn, n):
    t0 = time.perf_counter()
    while (time.perf_counter() - t0) * 1e3 < WARM_MS: fn(); torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for a, b in ev: a.record(); fn(); b.record()
    torch.cuda.synchronize()
    return [a.elapsed_time(b) * 1e3 for a, b in ev]


W = (torch.randn(248320, 5120, generator=gen, device="cuda") * 0.02).to(torch.bfloat16)
x = torch.randn(1, 5120, generator=gen, device="cuda").to(torch.bfloat16)
rs = torch.arange(248320, dtype=torch.int32, device="cuda")
rec["head_us"] = per_call(lambda: G.lm_head(W, x, rowset=rs, S=G.ENGINE_CHOICE["lm_head"], pdl=True), 400)
W = None; torch.cuda.empty_cache()
N, K, epi = 14336, 5120, 0
ws = [G.synth_fp8(N, K, gen) for _ in range(4)]
xq = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
o = torch.empty(1, N, dtype=torch.bfloat16, device="cuda")
g = torch.cuda.CUDAGraph()
G.engine_gemv(ws[0][0], ws[0][1], xq, epi, None, out=o, scratch=None, pdl=True)
torch.cuda.synchronize()
with torch.cuda.graph(g):
    for q, sc in ws: G.engine_gemv(q, sc, xq, epi, None, out=o, scratch=None, pdl=True)
rec["qg_us"] = [u / 4 for u in per_call(g.replay, 400)]
if smi:
    time.sleep(0.1); smi.terminate()
    rec["clocks"] = [l.strip() for l in smi.stdout.read().splitlines() if l.strip()]
for name in ("head_us", "qg_us"):
    v = sorted(rec[name]); n = len(v)
    print(f"{name}: min {v[0]:.1f} p10 {v[n // 10]:.1f} median {v[n // 2]:.1f} p90 {v[9 * n // 10]:.1f} max {v[-1]:.1f}")
    thr = v[0] * 1.05
    slow = [i for i, u in enumerate(rec[name]) if u > thr]
    print(f"  calls > 1.05 x min: {len(slow)} of {n}; first indices {slow[:20]}")
print(f"clock samples: {len(rec['clocks'])}; first {rec['clocks'][:3]}; last {rec['clocks'][-3:]}")
save()
