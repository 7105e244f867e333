"""Chapter 06: what a kernel boundary costs a stream, and how much of it early loads win back. Every GEMV of the token loses
1-3 us to its boundary with the kernel before it (engine vs bytes / bandwidth; gemv_standing_h200.json: a plain 16-byte
stream chained with PDL loses 1.3-1.6 us a call too). gemv_stream_probe_v2<U, EARLY> is that stream with its first trip
of loads asked for before the grid wait (EARLY; the weights are never written by a kernel): the next kernel's blocks ask
for their first bytes as soon as they are resident, which is at once where the kernel before leaves room on the SM (1 or
2 blocks of 512 threads an SM) and only as its blocks retire where it does not (4). Per size (out_proj, qkv|z, down,
gate|up bytes) and (blocks an SM, loads a thread): us per call in a PDL graph over rotated buffers, wait-first against
early, two interleaved rounds; the overhead is us minus bytes / the read bandwidth measured at the start of the run.
Usage on the H200: PYTHONPATH=. python3 results/explore_boundary.py OUT_DIR (boundary_h200.json). About a minute."""
import numpy as np
import torch
from qwen_engine import gemv as G
from qwen_engine.runtime import get_kernel, launch, time_graph, median, rotation_count
import explore_util

SIZES = {"out_proj": 5120 * 6144, "qkv|z": 16384 * 5120, "down": 5120 * 17408, "gate|up": 34816 * 5120}
CFGS = [(1, 16), (2, 8), (2, 16), (4, 8), (4, 16)]                  # (blocks an SM, loads in flight a thread)
NAMES = tuple(f"gemv_stream_probe_v2<{u}, {'true' if e else 'false'}>" for u in (8, 16) for e in (False, True))


def chain_us(nbytes, bps, U, early, pdl=True):
    "us per call: a graph of PDL launches of the probe, each over the next of enough buffers to miss L2, median of 7."
    n = rotation_count(nbytes)
    bufs = [torch.empty(nbytes // 16 * 16, dtype=torch.uint8, device="cuda").random_(0, 255) for _ in range(n)]
    sink = torch.zeros(1, dtype=torch.int32, device="cuda")
    k = get_kernel("gemv", f"gemv_stream_probe_v2<{U}, {'true' if early else 'false'}>", together=NAMES)
    grid = (132 * bps,)
    us = 1000 * median(time_graph(lambda i: launch(k, grid, (512,), (bufs[i % n], np.int64(nbytes // 16), sink), pdl=pdl), calls=n * max(1, 40 // n), reps=7))
    del bufs
    return us


def main():
    rec, guard, el, save = explore_util.recorder(
        "boundary_h200", "A plain 16-byte stream chained with PDL, its first loads after the grid wait or before it (early), per size "
        "(out_proj, qkv|z, down, gate|up bytes) and (blocks an SM, loads a thread), two interleaved rounds: us per call and the "
        "overhead over bytes / the run's read bandwidth.", "explore_boundary.py", sizes=SIZES, configs=[list(c) for c in CFGS], rows=[])
    bw = rec["bandwidth_tbps"]
    for rnd in range(2):
        for what, nb in SIZES.items():
            for bps, U in CFGS:
                for early in (False, True):
                    us = guard(f"{what} {bps} {U} {early}", lambda: chain_us(nb, bps, U, early))
                    if us: rec["rows"].append(dict(size=what, bytes=nb, bps=bps, U=U, early=early, round=rnd, us=us,
                                                   frac=nb / (us * 1e-6) / (bw * 1e12), overhead_us=us - nb / (bw * 1e6)))
            if rnd == 0:
                us = guard(f"{what} no pdl", lambda: chain_us(nb, 2, 16, False, pdl=False))
                if us: rec["rows"].append(dict(size=what, bytes=nb, bps=2, U=16, early=False, pdl=False, round=rnd, us=us,
                                               frac=nb / (us * 1e-6) / (bw * 1e12), overhead_us=us - nb / (bw * 1e6)))
            print(f"round {rnd} {what} {el()}", flush=True)
        save()
    print(f"\nbandwidth {bw:.3f} TB/s; us per call (overhead us), median of the two rounds")
    print(f"{'size':<10} {'bps':>3} {'U':>3} {'wait first':>18} {'early':>18}")
    for what in SIZES:
        for bps, U in CFGS:
            cell = lambda e: median([r["us"] for r in rec["rows"] if (r["size"], r["bps"], r["U"], r["early"]) == (what, bps, U, e) and r.get("pdl", True)] or [float("nan")])
            w, e = cell(False), cell(True)
            ideal = SIZES[what] / (bw * 1e6)
            print(f"{what:<10} {bps:>3} {U:>3} {w:>10.2f} ({w - ideal:5.2f}) {e:>10.2f} ({e - ideal:5.2f})")
    print(f"done {el()}; errors {len(rec['errors'])}")


if __name__ == "__main__":
    main()
