"""Chapter 06: is it the mma chain? gemv_probe26c_h200.json: at one row pair a warp, down and out_proj stream at 95-99 % without
the math and at 71-81 % with it, and neither the activation's loads (PROBE 2) nor the widening (PROBE 3) is what costs. A
step's four mmas accumulate into one fragment, one after another: four dependent mma latencies a step and a pair. PROBE 4
computes them as two chains of two added before the scale (v13_math's CH2; other sums, timing here). At each shape's engine
configuration and at the one-pair configurations of gemv_probe26c: the build with its math, PROBE 4 and DRY, alone with PDL
over weights rotated past L2, two interleaved rounds.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_probe26d.py OUT_DIR (gemv_probe26d_h200.json). About a minute."""
import torch
from qwen_engine import gemv as G
from qwen_engine.runtime import median
import explore_util
import explore_gemv_dry26 as X
import explore_gemv_probe26 as P
import explore_gemv_probe26c as C

CFGS = {(N, K, epi): [X.engine_cfg(N, K, epi)] + C.CFGS.get((N, K, epi), []) for N, K, epi, _ in X.SHAPES}
KINDS = {"with math": C.real, "probe 4: two mma chains": lambda e, c: P.probe_name(e, c, 4), "dry": X.dry_name}
NAMES = tuple(dict.fromkeys(f(epi, c) for (N, K, epi), cs in CFGS.items() for c in cs for f in KINDS.values()))


def main():
    rec, guard, el, save = explore_util.recorder(
        "gemv_probe26d_h200", "At each shape's engine configuration and at one-pair configurations of down and out_proj: the v26 build with its "
        "math, PROBE 4 (each step's four mmas in two chains of two) and DRY; alone with PDL over weights rotated past L2, two interleaved "
        "rounds, % of the read bandwidth of the same run.", "explore_gemv_probe26d.py",
        configs={f"{N}x{K}": [list(c) for c in cs] for (N, K, epi), cs in CFGS.items()}, regs={}, rows=[])
    bw = rec["bandwidth_tbps"]
    gen = torch.Generator(device="cuda").manual_seed(31)
    for nm in NAMES:
        rec["regs"][nm] = guard(f"regs {nm}", lambda: X.get_kernel("gemv", nm, together=NAMES).num_regs)
    for rnd in range(2):
        for (N, K, epi), cs in CFGS.items():
            nb = G.bytes_of(N, K, 1, epi)
            for c in cs:
                for kind, f in KINDS.items():
                    us = guard(f"{kind} {N}x{K} {c}", lambda: X.time_build(gen, N, K, epi, f(epi, c), NAMES, c))
                    if us: rec["rows"].append(dict(N=N, K=K, kind=kind, cfg=list(c), round=rnd, us=us, frac=nb / (us * 1e-6) / (bw * 1e12)))
            print(f"round {rnd} {N}x{K} {el()}", flush=True)
        save()
    print(f"\nbandwidth {bw:.3f} TB/s; % of it, median of the two rounds")
    for (N, K, epi), cs in CFGS.items():
        for c in cs:
            cell = lambda k: 100 * median([r["frac"] for r in rec["rows"] if (r["N"], r["kind"], r["cfg"]) == (N, k, list(c))] or [float("nan")])
            print(f"{N}x{K} {c} ({rec['regs'].get(C.real(epi, c))} / {rec['regs'].get(P.probe_name(epi, c, 4))} regs): "
                  + ", ".join(f"{k} {cell(k):.1f} %" for k in KINDS))
    print(f"done {el()}; errors {len(rec['errors'])}")


if __name__ == "__main__":
    main()
