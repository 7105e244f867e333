"""One launch each of the engine's v3 and of v10 on 16,384 x 5,120, for Nsight Compute. Usage on the H200:
ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats -k regex:gemv_fp8 \
    python3 results/ncu_gemv.py"""
import torch
from qwen_engine import gemv as G
gen = torch.Generator(device="cuda").manual_seed(0)
N, K = 16384, 5120
q, sc = G.synth_fp8(N, K, gen)
x = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
# NOTE: the engine's plan when this ran (v3 or v11 then); since gemv_v14_h200 the plan is v14, and a re-run forces the old variant onto v14's S and KS: not the recorded baseline.
v, S, RG, KS = G.engine_plan(N, K, 0)
G.gemv(q, sc, x, 0, S=S, RG=RG, variant=3, KS=KS)
for conv in (1, 0):
    G.gemv(q, sc, x, 0, S=10, RG=1, variant=10, bps=1, D=4, C=20, conv=conv)
torch.cuda.synchronize()
