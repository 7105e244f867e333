# Exploration (not part of the book yet): does capping v3's registers (more resident warps) raise its bandwidth?
import json, os, sys, numpy as np, torch, cupy
from qwen_engine.runtime import kernel_source, launch, time_graph, median, rotation_count, NVRTC_OPTIONS
from qwen_engine.gemv import synth_fp8, bytes_of, gemv, gemv_scratch
from qwen_engine.roofline import measure_bandwidth
src = kernel_source("gemv").replace("__global__ void __launch_bounds__(32 * S) gemv_fp8_v3", "__global__ void __launch_bounds__(32 * S, MINB) gemv_fp8_v3")
g = torch.Generator(device="cuda").manual_seed(0)
bw = measure_bandwidth(gib=4, sweep=False)["best"]["tbps"]
rows = []
for N, K, epi, S, KS in [(16384, 5120, 0, 4, 1), (14336, 5120, 0, 4, 1), (14336, 5120, 0, 8, 1), (5120, 17408, 1, 2, 4), (5120, 17408, 1, 4, 4), (34816, 5120, 2, 4, 1), (5120, 6144, 1, 2, 4)]:
    RG = 2 if epi == 2 else 1
    n = rotation_count(N * K); ws = [synth_fp8(N, K, g) for _ in range(n)]
    x = torch.randn(1, K, device="cuda").to(torch.bfloat16); res = torch.randn(1, N, device="cuda").to(torch.bfloat16)
    Nout = N // 2 if epi == 2 else N; out = torch.empty(1, Nout, dtype=torch.bfloat16, device="cuda")
    part, cnt = gemv_scratch(N, RG, KS, epi) if KS > 1 else (out, out)
    grid = Nout // 16 if epi == 2 else N // (16 * RG)
    ref = gemv(ws[0][0], ws[0][1], x, epi, res if epi == 1 else None, S=S, RG=RG, KS=KS, variant=3).clone()
    for minb in (0, 5, 6, 8, 10, 12):
        if minb * S * 32 > 2048: continue
        if minb == 0:
            fn = lambda i: gemv(ws[i % n][0], ws[i % n][1], x, epi, res if epi == 1 else None, S=S, RG=RG, KS=KS, variant=3, out=out, scratch=(part, cnt) if KS > 1 else None)
        else:
            mod = cupy.RawModule(code=src, options=NVRTC_OPTIONS + (f"-DMINB={minb}",), name_expressions=[f"gemv_fp8_v3<{S}, {RG}, {epi}>"])
            k = mod.get_function(f"gemv_fp8_v3<{S}, {RG}, {epi}>")
            def fn(i, k=k):
                q, sc = ws[i % n]
                launch(k, (grid, KS), (32 * S,), (q, sc, x, res, out, np.int32(N), np.int32(K), np.int32(1), np.int32(Nout), part, cnt))
        fn(0); torch.cuda.synchronize(); same = torch.equal(out, ref)
        us = 1000 * median(time_graph(fn, calls=n * max(1, 40 // n), reps=7))
        regs = k.num_regs if minb else None
        rows.append(dict(N=N, K=K, epi=epi, S=S, KS=KS, minb=minb, regs=regs, spill=(k.local_size_bytes if minb else None), us=us, frac=bytes_of(N, K, 1, epi) / us / 1e6 / bw, same_as_v3=same))
        print(rows[-1], flush=True)
    del ws
json.dump(dict(bandwidth_tbps=bw, rows=rows), open(os.path.join(os.environ["OUT"], "explore_v3_minblocks.json"), "w"), indent=1)
