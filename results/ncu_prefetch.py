"""Chapter 06: does a bulk prefetch into L2 make the DRAM read the same bytes twice? Every prefetch into L2 measured so far
lost (v19, chapter 07's v10-v12, step_prefetch_h200, v26tp in gemv_tail_h200, v26fb in gemv_fb_h200), even a block's first
1 KB a row. One reading: a demand load that reaches L2 while the prefetch of its line is still in flight is not merged
with it, and DRAM delivers the line twice. Run under Nsight Compute (part `ncu-prefetch` of results/h200_session.sh, or
`ncu --clock-control none --metrics dram__bytes_read.sum,lts__t_sectors_op_read.sum,gpu__time_duration.sum -k regex:gemv_fp8
python3 results/ncu_prefetch.py`), one launch each (ncu flushes the caches before each), twice: gate|up (178 MB of weights)
with the engine's v26, v26tp with every block prefetching its whole rows (TB 8704), v26fb with every block prefetching its
first run (FB 8704, FR 1) or its whole rows (FR 5). If the DRAM reads twice what it must, the prefetching builds read up to
2x 178 MB. (-> gemv_ncu_prefetch_h200.txt)
(Since the record, gemv names these builds by its keyword v26x instead of extra v13opt entries: the same builds.)"""
import torch
from qwen_engine import gemv as G

N, K, EPI = 34816, 5120, 2
gen = torch.Generator(device="cuda").manual_seed(7)
q, sc = G.synth_fp8(N, K, gen)
x = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
out = torch.empty(1, N // 2, dtype=torch.bfloat16, device="cuda")
base = G.engine_kwargs(N, K, EPI)
builds = {"engine (v26)": base,
          "v26tp, every block its whole rows": dict(base, v26x=dict(tb=8704)),
          "v26fb, every block its first run": dict(base, v26x=dict(fb=(8704, 1))),
          "v26fb, every block its whole rows": dict(base, v26x=dict(fb=(8704, 5)))}
ref = None
for rep in range(2):
    for label, kw in builds.items():
        print(f"launch: {label}, round {rep}", flush=True)
        G.gemv(q, sc, x, EPI, None, out=out, **kw)
        torch.cuda.synchronize()
        ref = out.clone() if ref is None else ref
        assert torch.equal(out, ref), label                       # the same bits from every build
print("done: every build's output equal")
