"""Appendix 90's compile-time numbers: one NVRTC pass over kernels/gemv.cu naming 2 and then 24 kernels (ENGINE_KERNELS),
with the explicit instantiation lists skipped (as NVRTC sees the file: `#ifndef __CUDACC_RTC__`) and with them compiled
(the same source with the guards' condition removed). Needs libnvrtc, no GPU. Usage: PYTHONPATH=. python3 results/nvrtc_compile_time.py
(on the CPU machine: LD_LIBRARY_PATH pointing at a libnvrtc.so.13, e.g. from the nvidia-cuda-nvrtc wheel)."""
import time
from qwen_engine import runtime as R
from qwen_engine.gemv import ENGINE_KERNELS

src = R.kernel_source("gemv")
unguarded = src.replace("#ifndef __CUDACC_RTC__", "#if 1")
for label, s in (("lists skipped (as now)", src), ("lists compiled (as before)", unguarded)):
    for names in (ENGINE_KERNELS[-2:], ENGINE_KERNELS):
        t = time.time()
        cubin, _ = R.compile_cubin(s, "gemv", names, R.NVRTC_OPTIONS)
        print(f"{label}: {len(names)} names, {time.time() - t:.1f} s, cubin {len(cubin)} bytes", flush=True)
