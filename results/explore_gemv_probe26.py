"""Chapter 06: what in the math costs the engine's GEMVs. gemv_dry26_h200.json: each engine build without its math (DRY:
the same grid, registers and requests) reads 97-98 % on q|gate|k|v, qkv|z and gate|up where the build reads 88-93 %, and
85-90 % on down and out_proj. ER (gemv_v26er_h200.json) asked for each step's refill right after its math instead of at
the top of the next run and changed nothing: ptxas emits the same machine code for both (it hoists the loads as far as the
registers allow either way). Two timing builds split the rest (gemv_fp8_v26probe, outputs wrong or unwritten): PROBE 1 is
DRY with the activation also loaded at use (two 16-byte L1 loads a lane a step, folded), PROBE 2 the whole math with step
0's activation reused (no activation loads in the loop). Per model shape, alone with PDL over weights rotated past L2,
interleaved, two rounds: the engine's build, DRY, PROBE 1, PROBE 2 and the stream that asks first.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_probe26.py OUT_DIR (gemv_probe26_h200.json). About a minute."""
import numpy as np
import torch
from qwen_engine import gemv as G
from qwen_engine.runtime import get_kernel, launch, time_graph, median, rotation_count
import explore_util
import explore_gemv_dry26 as X

E_ARGS = {0: "false, false", 1: "true, false", 2: "true, true"}
probe_name = lambda epi, c, p: f"gemv_fp8_v26probe<{c[0]}, {c[1]}, {epi}, {c[2]}, {c[4]}, {c[3]}, {E_ARGS[c[5]]}, {p}>"
NAMES = tuple(probe_name(epi, X.engine_cfg(N, K, epi), p) for N, K, epi, _ in X.SHAPES for p in (1, 2)) + X.NAMES


def time_build(gen, N, K, epi, name):
    c = X.engine_cfg(N, K, epi)
    k = get_kernel("gemv", name, together=NAMES)
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


def main():
    rec, guard, el, save = explore_util.recorder(
        "gemv_probe26_h200", "Per model shape, alone with PDL, weights rotated past L2: the engine's v26 build, its DRY build, PROBE 1 (DRY "
        "with the activation loaded at use) and PROBE 2 (the math with step 0's activation for every step), and the stream that asks for "
        "its first trip before the wait; two interleaved rounds, % of the read bandwidth of the same run.", "explore_gemv_probe26.py",
        configs={f"{N}x{K}": list(X.engine_cfg(N, K, epi)) for N, K, epi, _ in X.SHAPES}, regs={}, rows=[])
    bw = rec["bandwidth_tbps"]
    gen = torch.Generator(device="cuda").manual_seed(27)
    for nm in NAMES:
        rec["regs"][nm] = guard(f"regs {nm}", lambda: get_kernel("gemv", nm, together=NAMES).num_regs)
    kinds = ("engine", "dry", "probe 1: dry + x loads", "probe 2: math, no x loads", "stream early")
    for rnd in range(2):
        for N, K, epi, what in X.SHAPES:
            nb, c = G.bytes_of(N, K, 1, epi), X.engine_cfg(N, K, epi)
            fns = (lambda: G.time_engine(N, K, epi, gen), lambda: time_build(gen, N, K, epi, X.dry_name(epi, c)),
                   lambda: time_build(gen, N, K, epi, probe_name(epi, c, 1)), lambda: time_build(gen, N, K, epi, probe_name(epi, c, 2)),
                   lambda: X.time_stream_early(nb))
            for kind, fn in zip(kinds, fns):
                us = guard(f"{kind} {N}x{K}", fn)
                if us: rec["rows"].append(dict(N=N, K=K, epi=epi, what=what, kind=kind, round=rnd, bytes=nb, us=us, frac=nb / (us * 1e-6) / (bw * 1e12)))
            print(f"round {rnd} {N}x{K}: " + ", ".join(f"{r['kind']} {r['us']:.2f} ({100 * r['frac']:.1f} %)" for r in rec["rows"]
                                                       if (r["N"], r["K"], r["round"]) == (N, K, rnd)) + f" {el()}", flush=True)
        save()
    print(f"\nbandwidth {bw:.3f} TB/s; % of it, median of the two rounds")
    print(f"{'shape':<30}" + "".join(f"{k[:12]:>14}" for k in kinds))
    for N, K, epi, what in X.SHAPES:
        cell = lambda k: median([r["frac"] for r in rec["rows"] if (r["N"], r["K"], r["kind"]) == (N, K, k)] or [float("nan")])
        print(f"{what[:29]:<30}" + "".join(f"{100 * cell(k):>13.1f}%" for k in kinds))
    print(f"done {el()}; errors {len(rec['errors'])}")


if __name__ == "__main__":
    main()
