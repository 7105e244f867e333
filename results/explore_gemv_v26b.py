"""Chapter 06: around v26's winner (gemv_v26_h200.json: gate|up at 2 warps, one gate/up pair a warp, runs of 2 steps, held to 8
blocks an SM: 91.5 % against the engine's 88.8 %, the step 0.14 ms faster at 1K and 32K). Its neighbours on every shape, with
controls: U = 1 at two row pairs (the same 2 KB a slot as the winner's, without runs: is it the runs or the occupancy?) and at
one (1 KB a slot), two row pairs in runs of 2 (4 KB a slot), 1- and 4-warp blocks, runs of 5, a tighter register cap.
On the K = 5,120 shapes each build is checked bit for bit against the engine's kernel; on the two 5,120-row shapes (whose
engine kernels split K over two blocks, so other sums) against the float64 definition as chapter 06's check does (errors
in bf16 ulps, cancellations excepted by the fp32 bound; the fused residual bit-identical to the reference's epilogue on the
projection) and twice run to run. Then alone with PDL, interleaved with the engine's kernel (two rounds), the token's
GEMVs and the decode step with each shape's winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26b.py OUT_DIR (gemv_v26b_h200.json). About 90 seconds."""
import torch
import explore_gemv_v26 as V26
V = V26.V
from qwen_engine import gemv as G
from qwen_engine.runtime import bf16_ulp

SPLIT = {(5120, 17408): 34, (5120, 6144): 12}
V.SHAPES = [(34816, 5120, 2), (16384, 5120, 0), (14336, 5120, 0), (5120, 17408, 1), (5120, 6144, 1)]
BIG = [(2, 1, 2, 8), (2, 2, 1, 8), (2, 2, 2, 8), (2, 1, 1, 8), (4, 1, 2, 4), (1, 1, 2, 16), (2, 1, 5, 8), (2, 1, 2, 10)]
V.CFGS = {2: BIG, 0: [BIG[i] for i in (0, 1, 2, 6)], 1: []}
V.cfgs_for = lambda N, K, epi: ([c + (SPLIT[(N, K)],) for c in [(2, 1, 2, 8), (2, 1, 1, 8), (4, 1, 2, 4), (1, 1, 2, 16)]]
                                if (N, K) in SPLIT else V.CFGS[epi])
V.AWK = [(1152, 5120, 0, 0), (2304, 5120, 2, 0)]
V.ALL = tuple(dict.fromkeys([V.name(epi, c) for epi in (0, 2) for c in V.CFGS[epi]]                  # the split shapes' builds
                            + [V.name(e, c) for N, K in SPLIT for c in V.cfgs_for(N, K, 1) for e in (0, 1)]))   # with EPI 0 for the check
V.LABEL = "v26b"


def versus_definition(gen, N, K, epi, c):
    "chapter 06's check_gemv for a v26 build: the projection (its EPI 0 build) against float64, the fused epilogue against the reference's."
    q, sc = G.synth_fp8(N, K, gen)
    x = (torch.randn(1, K, generator=gen, device="cuda") * 2).to(torch.bfloat16)
    res = torch.randn(1, N, generator=gen, device="cuda").to(torch.bfloat16) if epi == 1 else None
    blocks = V.sets_of(N, epi, c) // c[0]
    y0 = torch.full((1, N), float("nan"), dtype=torch.bfloat16, device="cuda")
    V.run24(q, sc, x, 0, None, y0, c, V.sets_of(N, 0, c) // c[0])
    ref = G.gemv_reference(q, sc, x)
    err = (y0.double() - ref).abs(); ulps = err / bf16_ulp(ref)
    bound = (x.double().abs() @ G.dequantize_fp8(q, sc).double().abs().t()) * 2.0**-22
    ye, again = (torch.full((1, N), float("nan"), dtype=torch.bfloat16, device="cuda") for _ in range(2))
    V.run24(q, sc, x, epi, res, ye, c, blocks); V.run24(q, sc, x, epi, res, again, c, blocks)
    bad = ((ulps > 1) & (err > bound)).sum().item()
    same_epi = torch.equal(ye, G.torch_epilogue(y0, epi, res))
    return dict(N=N, K=K, epi=epi, cfg=list(c), blocks=blocks, versus="definition", max_ulp=ulps.max().item(), over_1ulp=(ulps > 1).sum().item(),
                bad=bad, unwritten=torch.isnan(ye).sum().item(), epilogue_bit_identical=same_epi,
                identical=bad == 0 and same_epi and not torch.isnan(ye).any().item(), repeat_identical=torch.equal(ye, again))


_identity = V.identity
V.identity = lambda gen, N, K, epi, c, blocks, versus: (versus_definition(gen, N, K, epi, c) if (N, K) in SPLIT and versus == "engine"
                                                         else _identity(gen, N, K, epi, c, blocks, versus))
V.RECORD = ("gemv_v26b_h200", "v26 around gate|up's winner on all five shapes, with controls (U = 1 at one and two row pairs; two pairs in runs "
            "of 2; 1- and 4-warp blocks; runs of 5; 10 blocks an SM): bit identity with the engine's kernel on the K = 5,120 shapes, the float64 check and run-to-run identity on "
            "the split shapes, alone with PDL interleaved with the engine's (two rounds), then the token's GEMVs and the decode step "
            "with each shape's winner.", "explore_gemv_v26b.py")

if __name__ == "__main__":
    V.main()
