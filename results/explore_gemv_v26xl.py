"""Chapter 06, v26xl: the activation's loads by another instruction than the weights'. gemv_probe26b_h200.json: the math
without the activation's loads costs the K = 5,120 shapes half of what the engine's math costs, the loads alone nothing,
the widening nothing (a build without it is as slow); staging the activation in shared memory lost (v26xs, XS 1 and 2). The
weights and the activation are both read with ld.global.nc (SASS LDG...CONSTANT); if a step's activation load completes
only after the weight loads issued before it on that path, a load of another kind might not wait: XL 1 a plain ld.global
(LDG.E.128), XL 2 ld.global.nc.L1::evict_last. Each shape's engine configuration with both; every build checked bit for bit
against the engine's kernel; alone with PDL interleaved with the engine's (two rounds); the token's GEMVs and the decode
step with each shape's winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26xl.py OUT_DIR (gemv_v26xl_h200.json). About two minutes.
(Its builds' names moved into explore_gemv_v26d.builds after its record was made: the same steps, not re-run.)
(Its engine configurations moved into explore_gemv_v26d.ENGINE after its record was made: the same builds, the shapes in
another order; not re-run.)"""
import explore_gemv_v26d as D
V = D.V

CFGS = {k: [c + (1,), c + (2,)] for k, c in D.ENGINE.items()}                     # ... + (XL,)
D.configure(CFGS, "v26xl",
            ("gemv_v26xl_h200", "v26 with the activation loaded by a plain ld.global (XL 1) or ld.global.nc.L1::evict_last (XL 2) at each "
             "shape's engine configuration: bit identity with the engine's kernel, alone with PDL interleaved with the engine's (two rounds), "
             "then the token's GEMVs and the decode step with each shape's winner.", "explore_gemv_v26xl.py"))
E_ARGS = {0: "false, false", 1: "true, false", 2: "true, true"}
D.builds(lambda epi, c: f"gemv_fp8_v26xl<{c[0]}, {c[1]}, {epi}, {c[2]}, {c[4]}, {c[3]}, {E_ARGS[c[5]]}, {c[6]}>")

if __name__ == "__main__":
    D.main()
