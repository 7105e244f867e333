"""Chapter 06, v26xs with XS 2: the activation staged in shared memory by one bulk copy (cp.async.bulk, thread 0 right after
the wait, an mbarrier the warps wait on before their first read) instead of every thread's loop of dependent L2 round trips
(XS 1, gemv_v26xs_h200.json: 65-86 %, lost). The same configurations; every build checked bit for bit against the engine's
kernel; alone with PDL interleaved with the engine's (two rounds); the token's GEMVs and the decode step with each winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26xs2.py OUT_DIR (gemv_v26xs2_h200.json). About two minutes.
(Its builds' names moved into explore_gemv_v26d.builds after its record was made: the same steps, not re-run.)"""
import explore_gemv_v26xs as S
D, V = S.D, S.V

D.configure(S.CFGS, "v26xs2",
            ("gemv_v26xs2_h200", "v26 with the activation staged in shared memory by one bulk copy a block (XS 2) at each shape's engine "
             "configuration and q|gate|k|v's 1-warp neighbour: bit identity with the engine's kernel, alone with PDL interleaved with the "
             "engine's (two rounds), then the token's GEMVs and the decode step with each shape's winner.", "explore_gemv_v26xs2.py"))
E_ARGS = {0: "false, false", 1: "true, false", 2: "true, true"}
D.builds(lambda epi, c: f"gemv_fp8_v26xs<{c[0]}, {c[1]}, {epi}, {c[2]}, {c[4]}, {c[3]}, {E_ARGS[c[5]]}, 2>")
V.blocks_per_sm, V.run24 = S.blocks_per_sm, S.run

if __name__ == "__main__":
    D.main()
