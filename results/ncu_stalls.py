"""One launch each of the engine's kernels that decide a decode step: the five GEMVs, the attention step at 1K and 32K
context, and one GDN layer, for Nsight Compute's warp stall reasons (warps stalled per issued instruction). Chapter 06
found its 81 KB down build waiting on instruction fetch (no_instruction, gemv_ncu_down_h200.txt); the attention kernel is
90 KB of machine code and GDN's 23 KB (nvcc 13, sm_90a): do they? Usage on the H200 (part `ncu-stalls` of
results/h200_session.sh writes results/ncu_stalls_h200.txt):
ncu --clock-control none --section SpeedOfLight --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio' \
    -k 'regex:gemv_fp8|attn|gdn_decode' python3 results/ncu_stalls.py
(Its GEMV part moved into ncu_engine_gemv.engine_gemvs after the record was made: the same launches, not re-run.)"""
import torch
from qwen_engine import attention as A, gdn as D
from qwen_engine.config import preset
import ncu_engine_gemv
gen = torch.Generator(device="cuda").manual_seed(0)
ncu_engine_gemv.engine_gemvs(gen)
cfg, dev, gen2, max_ctx, rope, pool = A.bench_pool()
scr = A.attention_scratch(cfg, 1, device=dev, max_ctx=max_ctx)
for n in (1024, 32768):
    with A._rotation(cfg, pool, n, gen2, n * 4096) as (tabs, qkv, qw, kw, ctl, out):
        print(f"attention, context {n}, variant {A.VARIANT}", flush=True)
        A.attention_decode(qkv, ctl, pool, 0, tabs[0], qw, kw, cfg, out, scr, rope, variant=A.VARIANT)
        torch.cuda.synchronize()
del pool
c = preset("qwen3_5_27b")
P = D.gdn_params(D.layer_weights(c, 0, "cuda"), "L.")
qkvz = (torch.randn(8, c.gdn_conv_dim + c.gdn_value_dim, generator=gen, device="cuda")).to(torch.bfloat16)
xg = torch.randn(8, c.hidden_size, generator=gen, device="cuda").to(torch.bfloat16)
conv, rec = D.gdn_state(c, 1, "cuda")
ctl = torch.tensor([100, 0, 0, 0], dtype=torch.int32, device="cuda")
og = torch.empty(8, c.gdn_value_dim, dtype=torch.bfloat16, device="cuda")
print(f"gdn, variant {D.VARIANT}", flush=True)
D.gdn_decode(qkvz, xg, **P, conv_state=conv, rec_state=rec, layer=0, ctl=ctl, cfg=c, out=og, M=1, variant=D.VARIANT)
torch.cuda.synchronize()
