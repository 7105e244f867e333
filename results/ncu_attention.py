"""One decode step of the engine's attention (VARIANT, three launches) at 1K and at 32K context, and v6 (one launch) at
32K, for Nsight Compute: what the passes wait on (stall reasons, DRAM throughput, occupancy) while they read 48-57 % of the
bandwidth at 32K (chapter 07; goal 85 %). Usage on the H200 (the part `ncu-attention` of results/h200_session.sh writes
results/attention_ncu_h200.txt):
ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats --section Occupancy -k regex:attn python3 results/ncu_attention.py"""
from qwen_engine import attention as A
cfg, dev, gen, max_ctx, rope, pool = A.bench_pool()
scr = A.attention_scratch(cfg, 1, device=dev, max_ctx=max_ctx)
for n, variant in ((1024, A.VARIANT), (32768, A.VARIANT), (32768, 6)):
    with A._rotation(cfg, pool, n, gen, n * 4096) as (tabs, qkv, qw, kw, ctl, out):
        print(f"context {n}, variant {variant}", flush=True)
        A.attention_decode(qkv, ctl, pool, 0, tabs[0], qw, kw, cfg, out, scr, rope, variant=variant)
