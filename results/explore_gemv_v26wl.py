"""Chapter 06, v26wl: the weights by another load than the engine's ld.global.nc.L1::no_allocate. gemv_probe26b_h200.json: the
math without the activation's L1 loads costs the K = 5,120 shapes half of what the engine's math costs, and those loads
alone nothing; if a step's activation hit in L1 waits behind the weight misses the L1 tracks, weights loaded by
ld.global.cg (WL 1: cached in L2 only; SASS LDG.E.128.STRONG.GPU) or ld.global.cs (WL 2: streaming, evict first; LDG.E.EF.128)
might let it through. Each shape's engine configuration with both; every build checked bit for bit against the engine's
kernel; alone with PDL interleaved with the engine's (two rounds); the token's GEMVs and the decode step with each winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26wl.py OUT_DIR (gemv_v26wl_h200.json). About two minutes.
(Its engine configurations moved into explore_gemv_v26d.ENGINE after its record was made: the same builds, the shapes in
another order; not re-run.)"""
import explore_gemv_v26d as D
V = D.V

CFGS = {k: [c + (1,), c + (2,)] for k, c in D.ENGINE.items()}                     # ... + (WL,)
D.configure(CFGS, "v26wl",
            ("gemv_v26wl_h200", "v26 with the weights loaded by ld.global.cg (WL 1) or ld.global.cs (WL 2) at each "
             "shape's engine configuration: bit identity with the engine's kernel, alone with PDL interleaved with the engine's (two rounds), "
             "then the token's GEMVs and the decode step with each shape's winner.", "explore_gemv_v26wl.py"))
E_ARGS = {0: "false, false", 1: "true, false", 2: "true, true"}
D.builds(lambda epi, c: f"gemv_fp8_v26wl<{c[0]}, {c[1]}, {epi}, {c[2]}, {c[4]}, {c[3]}, {E_ARGS[c[5]]}, {c[6]}>")

if __name__ == "__main__":
    D.main()
