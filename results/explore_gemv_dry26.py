"""Chapter 06: where the engine's GEMVs lose against a stream that asks first. A plain 16-byte stream chained with PDL whose
first trip is asked for before the grid wait reads 95-99 % of the bandwidth at the token's sizes (boundary_h200.json);
the engine's v26 kernels read 83-93 %. Two things differ: the order of the requests (each warp's own 2-8 rows, in runs of
U x 512 bytes, against the stream's neighbouring 512-byte pieces) and the work between them (the widening and the mma,
which delays each warp's next request). gemv_fp8_v26dry is the engine's build for each shape with the same grid, the same
register cap, the same requests before and after the wait, and no math (the words folded into one value never stored):
if it reads like the stream, the math is what costs; if it reads like the engine, the order of the requests does.
Per model shape, alone with PDL over weights rotated past L2, interleaved, two rounds: the engine's kernel, its DRY build,
the plain stream that waits first (chapter 06's standing record's) and the stream that asks first (2 blocks of 512
threads an SM, 8 loads a thread); % of the read bandwidth measured at the start of the run.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_dry26.py OUT_DIR (gemv_dry26_h200.json). About a minute.
(Its loop became `measure`, shared with explore_gemv_probe26(b), after its record was made: the same steps, not re-run;
the DRY build now gets a residual tensor it does not read, where it got the activation.)"""
import numpy as np
import torch
from qwen_engine import gemv as G
from qwen_engine.runtime import get_kernel, launch, time_graph, median, rotation_count
import explore_util

SHAPES = [(14336, 5120, 0, "attention q|gate|k|v"), (16384, 5120, 0, "GDN qkv|z"), (5120, 6144, 1, "attn/GDN out_proj + residual"),
          (34816, 5120, 2, "MLP gate|up + SwiGLU"), (5120, 17408, 1, "MLP down + residual")]


def engine_cfg(N, K, epi):
    "(SR, RP, U, MINB, KST, E) of the engine's v26 build for this shape (ENGINE_CHOICE, ENGINE_V26, ENGINE_MINB)."
    v, SR, RG, KS = G.ENGINE_CHOICE[(N, K, epi)]
    assert v == 26 and KS == 1, "the engine runs v26 without a split on every shape"
    RP, U, E = G.ENGINE_V26[(N, K, epi)]
    return (SR, RP, U, G.ENGINE_MINB[(N, K, epi)], K // 512, E)


def dry_name(epi, c):
    return f"gemv_fp8_v26dry<{c[0]}, {c[1]}, {epi}, {c[2]}, {c[4]}, {c[3]}" + {0: ">", 1: ", true>", 2: ", true, true>"}[c[5]]


NAMES = tuple(dry_name(epi, engine_cfg(N, K, epi)) for N, K, epi, _ in SHAPES)
STREAM_EARLY = "gemv_stream_probe_v2<8, true>"


def time_build(gen, N, K, epi, name, names, c=None):
    "us per call of a v26-family build at the grid of configuration c (default the engine's): a PDL graph over weights rotated past L2, median of 7."
    c = c or engine_cfg(N, K, epi)
    k = get_kernel("gemv", name, together=names)
    n = rotation_count(N * K)
    ws = [G.synth_fp8(N, K, gen) for _ in range(n)]
    x = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
    res = torch.randn(1, N, generator=gen, device="cuda").to(torch.bfloat16)
    out = torch.empty(1, N // 2 if epi == 2 else N, dtype=torch.bfloat16, device="cuda")
    sets = (N // 2 if epi == 2 else N) // (c[1] if epi == 2 else 2 * c[1])
    args = lambda i: (ws[i % n][0], ws[i % n][1], x, res, out, np.int32(N), np.int32(K), np.int32(1), np.int32(out.shape[1]), out, out)
    us = 1000 * median(time_graph(lambda i: launch(k, (sets // c[0],), (32 * c[0],), args(i), pdl=True), calls=n * max(1, 40 // n), reps=7))
    del ws
    return us


def time_stream_early(nbytes, bps=2):
    n = rotation_count(nbytes)
    bufs = [torch.empty(nbytes // 16 * 16, dtype=torch.uint8, device="cuda").random_(0, 255) for _ in range(n)]
    sink = torch.zeros(1, dtype=torch.int32, device="cuda")
    k = get_kernel("gemv", STREAM_EARLY)
    us = 1000 * median(time_graph(lambda i: launch(k, (132 * bps,), (512,), (bufs[i % n], np.int64(nbytes // 16), sink), pdl=True),
                                  calls=n * max(1, 40 // n), reps=7))
    del bufs
    return us


def measure(record: tuple, kinds: tuple, fns_of, names: tuple, seed: int):
    """The frame of this script and of explore_gemv_probe26(b): record = (name, what, script); per model shape and round (two,
    interleaved), each kind's us from fns_of(gen, N, K, epi, nbytes) (one function a kind), % of the run's bandwidth; a table last."""
    rec, guard, el, save = explore_util.recorder(*record, configs={f"{N}x{K}": list(engine_cfg(N, K, epi)) for N, K, epi, _ in SHAPES},
                                                 regs={}, rows=[])
    bw = rec["bandwidth_tbps"]
    gen = torch.Generator(device="cuda").manual_seed(seed)
    for nm in names:
        rec["regs"][nm] = guard(f"regs {nm}", lambda: get_kernel("gemv", nm, together=names).num_regs)
    for rnd in range(2):
        for N, K, epi, what in SHAPES:
            nb = G.bytes_of(N, K, 1, epi)
            for kind, fn in zip(kinds, fns_of(gen, N, K, epi, nb)):
                us = guard(f"{kind} {N}x{K}", fn)
                if us: rec["rows"].append(dict(N=N, K=K, epi=epi, what=what, kind=kind, round=rnd, bytes=nb, us=us,
                                               frac=nb / (us * 1e-6) / (bw * 1e12)))
            print(f"round {rnd} {N}x{K}: " + ", ".join(f"{r['kind']} {r['us']:.2f} ({100 * r['frac']:.1f} %)" for r in rec["rows"]
                                                       if (r["N"], r["K"], r["round"]) == (N, K, rnd)) + f" {el()}", flush=True)
        save()
    print(f"\nbandwidth {bw:.3f} TB/s; % of it, median of the two rounds")
    print(f"{'shape':<30}" + "".join(f"{k[:12]:>14}" for k in kinds))
    for N, K, epi, what in SHAPES:
        cell = lambda k: median([r["frac"] for r in rec["rows"] if (r["N"], r["K"], r["kind"]) == (N, K, k)] or [float("nan")])
        print(f"{what[:29]:<30}" + "".join(f"{100 * cell(k):>13.1f}%" for k in kinds))
    print(f"done {el()}; errors {len(rec['errors'])}")


def main():
    measure(("gemv_dry26_h200", "Per model shape, alone with PDL, weights rotated past L2: the engine's v26 kernel, the same build without its "
             "math (gemv_fp8_v26dry: the same grid, register cap and requests before and after the wait), a plain stream of the same "
             "bytes that waits first and one that asks for its first trip before the wait; two interleaved rounds, % of the read "
             "bandwidth of the same run.", "explore_gemv_dry26.py"),
            ("engine", "dry", "stream", "stream early"),
            lambda gen, N, K, epi, nb: (lambda: G.time_engine(N, K, epi, gen),
                                        lambda: time_build(gen, N, K, epi, dry_name(epi, engine_cfg(N, K, epi)), NAMES),
                                        lambda: G.stream_probe(nb, gen), lambda: time_stream_early(nb)), NAMES, 26)


if __name__ == "__main__":
    main()
