"""Chapter 08: some GDN layers' states kept in L2 across tokens. The state's stores cost the step 0.2-0.25 ms a token at
1K, paid in the GEMVs after them (gdn_ablate_step_h200.json, power_h200.json, the two step_timeline_gdn records). Hopper
can set part of its L2 aside for lines marked persisting (the context's CU_LIMIT_PERSISTING_L2_CACHE_SIZE; a launch's
access-policy window marks the lines it touches in one address range). With the states of the first K GDN layers (3 MiB
each) persisting, their loads hit L2 and their stores are never written back in the middle of a GEMV; the rest of L2
stays for everything else. The same kernels and values: only the cache policy differs, so the tokens must equal the
engine's. (An application's limit, reset with the context: no setting of the card changes.)
1. A control that the mechanism works here: a graph of [a 256 MiB read stream, a 3 MiB read] x 16, the 3 MiB launch with
   and without a persisting window over its buffer: us of the small read (from the difference of two graphs).
2. The 27B-shape decode step (PDL graph): the engine, and the first K GDN layers' state persisting for K in KS
   (set-aside K x 3 MiB): greedy tokens equal to the engine's, then ms a token at 1K and 32K, interleaved four times.
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_gdn_l2.py OUT_DIR   (about 2 min)"""
import os, sys, ctypes
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import torch
import explore_util
from qwen_engine import runtime as R

STATE = 48 * 128 * 128 * 4          # one GDN layer's fp32 state
KS = (4, 8, 14)
WINDOW = {}                         # GDN layer -> persisting, filled per plan
_orig = R._launch_pdl


def _lib():
    lib = ctypes.CDLL("libcuda.so.1")
    return lib


def persisting_max() -> int:
    v, dev = ctypes.c_int(0), ctypes.c_int(0)
    lib = _lib(); lib.cuCtxGetDevice(ctypes.byref(dev))
    err = lib.cuDeviceGetAttribute(ctypes.byref(v), 108, dev)          # CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE
    assert err == 0, err
    return v.value


def set_aside(nbytes: int):
    err = _lib().cuCtxSetLimit(6, ctypes.c_size_t(nbytes))                # CU_LIMIT_PERSISTING_L2_CACHE_SIZE
    assert err == 0, f"cuCtxSetLimit: {err}"


def reset_persisting():
    torch.cuda.synchronize()
    err = _lib().cuCtxResetPersistingL2Cache()
    assert err == 0, err


def launch_window(kernel, grid, block, args, smem, stream, pdl, base, nbytes):
    "cuLaunchKernelEx with PDL (when asked) and CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW (1): [base, base + nbytes) persisting."
    lib, Attr, Config = R._libcuda()
    bufs = [ctypes.create_string_buffer(x.tobytes(), x.nbytes) for x in args]
    params = (ctypes.c_void_p * max(1, len(bufs)))(*[ctypes.addressof(b) for b in bufs])
    attrs = (Attr * 2)()
    n = 0
    if pdl: attrs[n].id = 6; attrs[n].value[0] = 1; n += 1
    win = (ctypes.c_ubyte * 64).from_buffer(attrs[n].value)               # CUaccessPolicyWindow: ptr, size_t, float, int, int
    ctypes.memmove(ctypes.addressof(win), np.array([base, nbytes], dtype=np.uint64).tobytes(), 16)
    ctypes.memmove(ctypes.addressof(win) + 16, np.array([1.0], dtype=np.float32).tobytes(), 4)
    ctypes.memmove(ctypes.addressof(win) + 20, np.array([2, 1], dtype=np.int32).tobytes(), 8)   # hit: persisting, miss: streaming
    attrs[n].id = 1; n += 1
    g, b = tuple(grid) + (1,) * (3 - len(grid)), tuple(block) + (1,) * (3 - len(block))
    cfg = Config((ctypes.c_uint * 3)(*g), (ctypes.c_uint * 3)(*b), smem, stream, ctypes.cast(attrs, ctypes.POINTER(Attr)), n)
    err = lib.cuLaunchKernelEx(ctypes.byref(cfg), kernel.ptr, params, None)
    if err: raise RuntimeError(f"cuLaunchKernelEx({kernel.label}, window) failed with CUresult {err}")


def patched(kernel, grid, block, args, smem, stream):
    if kernel.label.startswith("gdn:gdn_decode") and int(args[10]) in WINDOW:
        layer = int(args[10])
        return launch_window(kernel, grid, block, args, smem, stream, True, int(args[9]) + layer * STATE, STATE)
    return _orig(kernel, grid, block, args, smem, stream)


def control(rec, el):
    "The small read's time after a 256 MiB stream, with and without a persisting window over it."
    from qwen_engine.roofline import stream_read
    from qwen_engine.runtime import get_kernel, time_graph, median
    big = torch.randint(0, 256, (256 << 20,), dtype=torch.uint8, device="cuda")
    small = torch.randint(0, 256, (3 << 20,), dtype=torch.uint8, device="cuda")
    sink = torch.zeros(1, dtype=torch.int32, device="cuda")
    stream_read(small, 2, 8, 1024, 2, sink)                                  # compiled; find its launch
    seen = []
    saved = R.launch
    def grab(kernel, grid, block, args, smem=0, pdl=False): seen.append((kernel, grid, block, args, smem))
    R.launch = grab
    import qwen_engine.roofline as RF
    RF.launch, keep = grab, RF.launch
    try: stream_read(small, 2, 8, 1024, 2, sink)
    finally: R.launch, RF.launch = saved, keep
    k, grid, block, args, smem = seen[0]
    a = tuple(np.uint64(x.data_ptr()) if isinstance(x, torch.Tensor) else x for x in args)
    st = lambda: torch.cuda.current_stream().cuda_stream
    def with_win(i):
        stream_read(big, 2, 8, 1024, 2, sink)
        launch_window(k, grid, block, a, smem, st(), False, small.data_ptr(), small.numel())
    def without(i):
        stream_read(big, 2, 8, 1024, 2, sink)
        R.launch(k, grid, block, args, smem)
    def only_big(i): stream_read(big, 2, 8, 1024, 2, sink)
    res = {}
    for rep in range(2):
        reset_persisting()
        res[f"big+small, window {rep}"] = 1e3 * median(time_graph(with_win, calls=16, reps=10)) / 16
        reset_persisting()
        res[f"big+small, no window {rep}"] = 1e3 * median(time_graph(without, calls=16, reps=10)) / 16
        res[f"big only {rep}"] = 1e3 * median(time_graph(only_big, calls=16, reps=10)) / 16
    reset_persisting()
    rec["control"] = res
    print("control (us a pair):", {k_: round(v, 2) for k_, v in res.items()}, el(), flush=True)


def main(out):
    rec, guard, el, save = explore_util.recorder(
        "gdn_l2_h200", "Some GDN layers' states persisting in L2 (an access-policy window on their GDN launches, the context's "
        "persisting set-aside K x 3 MiB): a control (a 3 MiB read after a 256 MiB stream, with and without its window), then the "
        "decode step with K = 0 (the engine) and K in (4, 8, 14): greedy tokens, ms a token at 1K and 32K, interleaved four times.",
        "explore_gdn_l2.py", out=out, persisting_max=None)
    rec["persisting_max"] = guard("max", persisting_max)
    print(f"max persisting L2: {rec['persisting_max']} bytes {el()}", flush=True)
    set_aside(min(rec["persisting_max"], max(KS) * STATE))
    guard("control", lambda: control(rec, el))
    save()
    R._launch_pdl = patched
    plans = {"engine": 0, **{f"first {k} GDN layers persisting": k for k in KS}}

    def apply(step, k):
        WINDOW.clear(); WINDOW.update({l: True for l in range(k)})
        reset_persisting()
    explore_util.step_plans(out, "gdn_l2_step_h200",
                            "The decode step (27B shape, synthetic, PDL graph) with the first K GDN layers' states persisting in L2 "
                            "(K = 0, 4, 8, 14; set-aside 42 MiB for the run): greedy tokens equal to the engine's, then ms per token at "
                            "1K and 32K, interleaved four times.", "explore_gdn_l2.py", plans, apply, reps=4)
    R._launch_pdl = _orig


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
