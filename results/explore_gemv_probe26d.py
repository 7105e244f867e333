"""Chapter 06: is it the mma chain? gemv_probe26c_h200.json: at one row pair a warp, down and out_proj stream at 95-99 % without
the math and at 71-81 % with it, and neither the activation's loads (PROBE 2) nor the widening (PROBE 3) is what costs. A
step's four mmas accumulate into one fragment, one after another: four dependent mma latencies a step and a pair. PROBE 4
computes them as two chains of two added before the scale (v13_math's CH2; other sums, timing here). At each shape's engine
configuration and at the one-pair configurations of gemv_probe26c: the build with its math, PROBE 4 and DRY, alone with PDL
over weights rotated past L2, two interleaved rounds.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_probe26d.py OUT_DIR (gemv_probe26d_h200.json). About a minute.
(Its loop moved into explore_gemv_probe26c.measure_cfgs after its record was made: the same steps, not re-run; the table's
registers are now the first kind's build's, with math, where it printed those and PROBE 4's.)"""
import explore_gemv_dry26 as X
import explore_gemv_probe26 as P
import explore_gemv_probe26c as C

CFGS = {(N, K, epi): [X.engine_cfg(N, K, epi)] + C.CFGS.get((N, K, epi), []) for N, K, epi, _ in X.SHAPES}
KINDS = {"with math": C.real, "probe 4: two mma chains": lambda e, c: P.probe_name(e, c, 4), "dry": X.dry_name}
NAMES = tuple(dict.fromkeys(f(epi, c) for (N, K, epi), cs in CFGS.items() for c in cs for f in KINDS.values()))


def main():
    C.measure_cfgs(("gemv_probe26d_h200", "At each shape's engine configuration and at one-pair configurations of down and out_proj: the v26 build "
                    "with its math, PROBE 4 (each step's four mmas in two chains of two) and DRY; alone with PDL over weights rotated past L2, "
                    "two interleaved rounds, % of the read bandwidth of the same run.", "explore_gemv_probe26d.py"), CFGS, KINDS, NAMES, 31)


if __name__ == "__main__":
    main()
