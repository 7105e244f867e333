"""Chapter 06: PROBE 3 beside gemv_probe26's builds. 71 % of the instructions of the engine's q|gate|k|v build are the
widening's integer operations (LOP3, IMAD, SHF: 1,178 of 1,656 in its SASS); PROBE 3 is the whole math with the weight words
going to the mma unwidened (wrong sums, timing only; 904 instructions). Per model shape, alone with PDL over weights rotated
past L2, interleaved, two rounds: the engine's build, DRY, PROBE 2 (the math without the activation's loads), PROBE 3 and
the stream that asks first. If PROBE 3 reads like DRY, the widening is what the math costs; if like the engine, the mma chain.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_probe26b.py OUT_DIR (gemv_probe26b_h200.json). About a minute."""
import torch
from qwen_engine import gemv as G
from qwen_engine.runtime import get_kernel, median
import explore_util
import explore_gemv_dry26 as X
import explore_gemv_probe26 as P

P.NAMES = tuple(P.probe_name(epi, X.engine_cfg(N, K, epi), p) for N, K, epi, _ in X.SHAPES for p in (2, 3)) + X.NAMES


def main():
    rec, guard, el, save = explore_util.recorder(
        "gemv_probe26b_h200", "Per model shape, alone with PDL, weights rotated past L2: the engine's v26 build, its DRY build, PROBE 2 (the "
        "math with step 0's activation for every step), PROBE 3 (the math without the widening: weight words into the mma as they are) and "
        "the stream that asks for its first trip before the wait; two interleaved rounds, % of the read bandwidth of the same run.",
        "explore_gemv_probe26b.py", configs={f"{N}x{K}": list(X.engine_cfg(N, K, epi)) for N, K, epi, _ in X.SHAPES}, regs={}, rows=[])
    bw = rec["bandwidth_tbps"]
    gen = torch.Generator(device="cuda").manual_seed(28)
    for nm in P.NAMES:
        rec["regs"][nm] = guard(f"regs {nm}", lambda: get_kernel("gemv", nm, together=P.NAMES).num_regs)
    kinds = ("engine", "dry", "probe 2: math, no x loads", "probe 3: math, no widening", "stream early")
    for rnd in range(2):
        for N, K, epi, what in X.SHAPES:
            nb, c = G.bytes_of(N, K, 1, epi), X.engine_cfg(N, K, epi)
            fns = (lambda: G.time_engine(N, K, epi, gen), lambda: P.time_build(gen, N, K, epi, X.dry_name(epi, c)),
                   lambda: P.time_build(gen, N, K, epi, P.probe_name(epi, c, 2)), lambda: P.time_build(gen, N, K, epi, P.probe_name(epi, c, 3)),
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
