"""One launch of the engine's GEMV on each of the five model shapes (engine_gemv: the plan of the commit it runs at; v14 and
v18 when gemv_ncu_engine_h200.txt was taken, v26 / v26 EK for gemv_ncu_ek_h200.txt, part `ncu-ek`), for
Nsight Compute: where each kernel's warps stall, its occupancy, and its DRAM throughput, to explain the gap between the
DRY stream (93-95 %) and the kernel with its math (78-88 %) that chapter 06's records show. Usage on the H200 (the part
`ncu-engine` of results/h200_session.sh writes results/gemv_ncu_engine_h200.txt):
ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats --section Occupancy --section LaunchStats -k regex:gemv_fp8 python3 results/ncu_engine_gemv.py"""
import torch
from qwen_engine import gemv as G


def engine_gemvs(gen):
    "One launch of the engine's GEMV on each model shape (synthetic weights from `gen`), synchronised after each."
    for N, K, epi, what in G.MODEL_SHAPES:
        q, sc = G.synth_fp8(N, K, gen)
        x = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
        res = torch.randn(1, N, generator=gen, device="cuda").to(torch.bfloat16) if epi == 1 else None
        out = torch.empty(1, N // 2 if epi == 2 else N, dtype=torch.bfloat16, device="cuda")
        print(what, G.engine_plan(N, K, epi), flush=True)
        G.engine_gemv(q, sc, x, epi, res, out=out, scratch=G.engine_scratch(N, K, epi))
        torch.cuda.synchronize()
        del q, sc


if __name__ == "__main__":
    engine_gemvs(torch.Generator(device="cuda").manual_seed(0))
