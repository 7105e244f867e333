"""Chapter 06's v38: the engine's GEMV builds (v26 / v26lp, their grid wait kept) reading the activation by coherent loads
(ld.global.ca), as v37 reads it, instead of the read-only path (ld.global.nc). v37 (chapter 09a's await hand-off) ran alone,
with no wait at all, 1.1-1.7 us a launch faster than the engine on q|k|v|z and q|gate|k|v and no faster on gate|up
(await_handoff_h200.json); v38 separates the load path from the missing wait. Checked and measured at the 27B shapes:
(a) bit-identical to the engine's builds on the same inputs, each shape twice; (b) alone, each shape chained to itself in a
PDL graph (weights rotated past L2), v38 against the engine's build, three interleaved rounds; (c) the decode step
(explore_util.step_plans): greedy tokens equal, then ms per token at 1K and 32K, five interleaved rounds, plans: the engine,
v38 on every shape, v38 on q|k|v|z and q|gate|k|v only.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v38.py OUT_DIR (gemv_v38_h200.json). About 3 minutes."""
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_util

SHAPES = ((14336, 5120, 0), (16384, 5120, 0), (5120, 6144, 1), (34816, 5120, 2), (5120, 17408, 1))
PLANS = {"engine": (), "v38 all": SHAPES, "v38 q|k|v|z, q|gate|k|v": SHAPES[:2]}


def apply(step, plan): step.gemv_ca = set(plan)


def alone(rec, el):
    import torch
    from qwen_engine import gemv as G
    names = explore_util.launched_names(lambda: [G.gemv(*G.synth_fp8(N, K, torch.Generator(device="cuda").manual_seed(0)),
                                                        torch.zeros(1, K, dtype=torch.bfloat16, device="cuda"), epi,
                                                        torch.zeros(1, N, dtype=torch.bfloat16, device="cuda") if epi == 1 else None,
                                                        **dict(G.engine_kwargs(N, K, epi), v26x={"ca": True})) for N, K, epi in SHAPES])
    G.get_kernel("gemv", names[0], together=names)
    gen = torch.Generator(device="cuda").manual_seed(17)
    rec["versus_engine"], rec["alone"] = [], []
    for N, K, epi in SHAPES:
        kw = G.engine_kwargs(N, K, epi); S = kw.pop("S"); kw.pop("RG")
        for _ in range(2): rec["versus_engine"].append(explore_util.versus_engine(gen, N, K, epi, S, dict(kw, v26x={"ca": True})))
    ok = all(v["identical"] for v in rec["versus_engine"])
    print(f"(a) v38 bit-identical to the engine's builds: {ok} {el()}", flush=True)
    if not ok: rec["errors"].append(f"identity: {rec['versus_engine']}")
    for rep in range(3):
        for N, K, epi in SHAPES:
            kw = G.engine_kwargs(N, K, epi)
            for label, x26 in (("engine", None), ("v38", {"ca": True})):
                us = G.time_gemv(N, K, epi, kw["S"], kw["RG"], gen, variant=26, D=kw["D"], minb=kw["minb"], v13opt=kw["v13opt"], pdl=True, v26x=x26)
                rec["alone"].append(dict(shape=[N, K, epi], build=label, rep=rep, us=us, frac=(N * K + N // 128 * K // 128 * 4) / (us * 1e-6) / (rec["bandwidth_tbps"] * 1e12)))
                print(f"(b) rep {rep} {(N, K, epi)} {label}: {us:.2f} us {el()}", flush=True)


if __name__ == "__main__":
    def extra(step, rec):
        t0 = time.time()
        explore_util.guard(rec, "alone", lambda: alone(rec, lambda: f"({time.time() - t0:.0f} s)"))
    explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "gemv_v38_h200",
                            "Chapter 06's v38 (the engine's GEMV builds with the activation read by coherent loads, ld.global.ca, instead of "
                            "the read-only path): bit identity with the engine's builds, each shape twice; each shape alone chained to itself "
                            "(PDL graph, weights rotated past L2) against the engine's, three interleaved rounds; the decode step (27B shape, "
                            "synthetic, PDL graph) with v38 on every shape and on q|k|v|z and q|gate|k|v only: greedy tokens, then ms per token "
                            "at 1K and 32K, five interleaved rounds.", "explore_gemv_v38.py", PLANS, apply, reps=5,
                            describe=lambda p: [list(s) for s in p], extra=extra)
