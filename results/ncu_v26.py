"""gate|up (34816 x 5120, SwiGLU) once on each of three builds, for Nsight Compute: the engine's v26 (one gate/up pair a
warp, runs of 2 steps, 8 blocks an SM: 92 %), v14 at the engine's configuration of before (4 pairs a warp, a 2-step ring,
6 blocks an SM: 88.6 %) and v26 with two pairs a warp (the same 128 registers and 8 blocks an SM, 4 KB a slot: 88.7 %),
to say what separates the winner from its neighbours (chapter 06). Usage on the H200 (the part `ncu-v26` of
results/h200_session.sh writes results/gemv_ncu_v26_h200.txt):
ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats --section Occupancy --section LaunchStats -k regex:gemv_fp8 python3 results/ncu_v26.py"""
import torch
from qwen_engine import gemv as G
gen = torch.Generator(device="cuda").manual_seed(0)
N, K = 34816, 5120
q, sc = G.synth_fp8(N, K, gen)
x = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
out = torch.empty(1, N // 2, dtype=torch.bfloat16, device="cuda")
for label, kw in (("engine v26 (2, 1 pair, runs of 2, MINB 8)", G.engine_kwargs(N, K, 2)),
                  ("v14 before (2, 4 pairs, 2 steps)", dict(S=2, RG=2, variant=14, KS=1, D=2, v13opt=(1, 4, True, False), minb=0)),
                  ("v26 (2, 2 pairs, runs of 2, MINB 8)", dict(S=2, RG=2, variant=26, KS=1, D=2, v13opt=(1, 2, False, False), minb=8))):
    print(label, flush=True)
    G.gemv(q, sc, x, 2, None, out=out, **kw)
    torch.cuda.synchronize()
