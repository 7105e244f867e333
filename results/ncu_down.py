"""Down (5,120 x 17,408) at four builds that do the same operations in machine code of different sizes (chapter 06's v26lp:
results/gemv_sizes_sm90a.json): the engine's build before v26lp (two row pairs a warp, unrolled, 81 KB), one row pair a warp
unrolled (45 KB) and in loops of 16 (48 KB) and 2 runs (7.9 KB, the engine's since). For Nsight Compute: each build's warp
stall reasons (no_instruction: the warp's next instruction not fetched), to test the reading that their speed follows their
size. Usage on the H200 (part `ncu-down` of results/h200_session.sh writes gemv_ncu_down_h200.txt):
ncu --clock-control none --section SpeedOfLight --section Occupancy --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio \
    -k regex:gemv_fp8 python3 results/ncu_down.py"""
import torch
from qwen_engine import gemv as G
gen = torch.Generator(device="cuda").manual_seed(0)
N, K = 5120, 17408
q, sc = G.synth_fp8(N, K, gen)
x = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
res = torch.randn(1, N, generator=gen, device="cuda").to(torch.bfloat16)
out = torch.empty(1, N, dtype=torch.bfloat16, device="cuda")
for S, RP, U, RU in ((2, 2, 4, 0), (4, 1, 2, 0), (4, 1, 2, 16), (4, 1, 2, 2)):
    print(S, RP, U, RU, flush=True)
    G.gemv(q, sc, x, 1, res, S=S, RG=1, out=out, variant=26, KS=1, D=U, v13opt=(1, RP, 2, False) + ((RU,) if RU else ()), minb=5)
    torch.cuda.synchronize()
