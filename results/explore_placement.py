"""Chapter 06: does where the weights sit in memory change a GEMV's time? The engine's q|gate|k|v GEMV (14336 x 5120)
times at 18.6-18.9 us in some runs and 20.6-20.8 in others (gemv_standing_h200.json, gemv_v19/v20/v21_h200.json), the
other shapes do not. Each timing allocates fresh weight copies, so their addresses differ from run to run. This run
places the copies (rotated past L2, as time_gemv does) at chosen offsets inside one buffer and times the engine's kernel
for each offset, interleaved, three times; the 16384 x 5120 shape as the control; then five fresh-allocation timings
(time_engine) of each shape. Weights: random e4m3 bytes (no NaN encodings), scales random.
Usage on the H200: PYTHONPATH=. python3 results/explore_placement.py OUT_DIR (placement_h200.json). About 40 s."""
import torch
from qwen_engine import gemv as G
from qwen_engine.runtime import time_graph, median, rotation_count
import explore_util

rec, guard, el, save = explore_util.recorder(
    "placement_h200", "The engine's GEMV for 14336 x 5120 and 16384 x 5120 with its weight copies at chosen offsets in one buffer (us per "
    "call, interleaved, three times), and five fresh-allocation timings of each.", "explore_placement.py", offsets=[], timings=[], fresh=[])
gen = torch.Generator(device="cuda").manual_seed(0)
MB = 1 << 20
OFFSETS = [0, 64 << 10, 512 << 10, 1 * MB, 2 * MB, 3 * MB, 5 * MB + 4096]
rec["offsets"] = OFFSETS
SHAPES = [(14336, 5120, 0), (16384, 5120, 0)]


def timed(N, K, epi, off, buf):
    n = rotation_count(N * K)
    stride = -(-(N * K + 8 * MB) // (2 * MB)) * 2 * MB
    ws = []
    for i in range(n):
        q = buf[i * stride + off: i * stride + off + N * K].view(N, K)
        sc = torch.rand(N // 128, K // 128, generator=gen, device="cuda") * 1e-3 + 1e-4
        ws.append((q, sc))
    kw = G.engine_kwargs(N, K, epi)
    S, RG = kw.pop("S"), kw.pop("RG")
    x = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
    o = torch.empty(1, N, dtype=torch.bfloat16, device="cuda")
    reps = max(1, 40 // n)
    return 1000 * median(time_graph(lambda i: G.gemv(ws[i % n][0], ws[i % n][1], x, epi, None, S=S, RG=RG, out=o, pdl=True, **kw), calls=n * reps, reps=7))


bufs = {}
for N, K, epi in SHAPES:
    n = rotation_count(N * K); stride = -(-(N * K + 8 * MB) // (2 * MB)) * 2 * MB
    b = torch.randint(0, 256, (n * stride,), dtype=torch.uint8, device="cuda")
    b[(b & 0x7F) == 0x7F] = 0
    bufs[(N, K)] = b
print(f"buffers ready {el()}", flush=True)
for rep in range(3):
    for N, K, epi in SHAPES:
        for off in OFFSETS:
            us = guard(f"time {N}x{K} +{off}", lambda: timed(N, K, epi, off, bufs[(N, K)]))
            if us: rec["timings"].append(dict(N=N, K=K, offset=off, rep=rep, us=us))
        print(f"rep {rep} {N}x{K}: " + ", ".join(f"+{t['offset'] >> 10}K {t['us']:.2f}" for t in rec["timings"] if (t["N"], t["rep"]) == (N, rep)) + f" {el()}", flush=True)
    save()
bufs.clear(); torch.cuda.empty_cache()
for k in range(5):
    for N, K, epi in SHAPES:
        us = guard(f"fresh {N}x{K}", lambda: G.time_engine(N, K, epi, gen))
        if us: rec["fresh"].append(dict(N=N, K=K, k=k, us=us))
print("fresh: " + ", ".join(f"{t['N']} {t['us']:.2f}" for t in rec["fresh"]))
print(f"done {el()}; errors {len(rec['errors'])}")
save()
