"""Chapter 06: the same v26 EK builds through two launch paths. gemv_v26f_h200.json measured the EK builds through its
exploration's launcher (compiled in its own NVRTC pass, launched by explore_gemv_v24.run24): the token of GEMVs 6.55 ms, the
step 7.55 ms; with them in the engine (ENGINE_KERNELS' pass, gemv()), gemv_standing_h200 and decode_h200 measured 6.72 ms and
7.635 ms. This run times, in one process, interleaved three times: each EK shape alone through both paths; the token of
GEMVs with the engine's plan, with the explore path's launches of the same builds, and with the plan of before (out_proj v26
E, q|gate|k|v v14, qkv|z v23); the decode step with the engine's plan and with the explore path.
Usage on the H200: PYTHONPATH=. python3 results/explore_ek_paths.py OUT_DIR (ek_paths_h200.json). About a minute."""
import torch
import explore_gemv_v26f as F
import explore_util
V = F.D.V
from qwen_engine import gemv as G

CFG = {(5120, 6144, 1): (4, 1, 3, 5, 12, 2), (14336, 5120, 0): (2, 2, 2, 7, 10, 2), (16384, 5120, 0): (2, 2, 2, 8, 10, 2)}
BEFORE = {(5120, 6144, 1): (26, 4, 1, 1, 4, 3, 8, (1, 1, 1, False)), (14336, 5120, 0): (14, 4, 1, 1, 4, 2, 8, (1, 2, True, True)),
          (16384, 5120, 0): (23, 4, 1, 1, 4, 3, 8, (1, 2, True, False))}
BEFORE_MINB = {(5120, 6144, 1): 5, (14336, 5120, 0): 1, (16384, 5120, 0): 4}


def main():
    rec, guard, el, save = explore_util.recorder("ek_paths_h200", "v26 EK builds through the engine's launcher and through the exploration's: "
        "alone, the token of GEMVs (and the plan of before), the decode step; interleaved, three rounds.", "explore_ek_paths.py",
        alone=[], token=[], step=[], step_tokens={})
    gen = torch.Generator(device="cuda").manual_seed(7)
    V.kern(0, CFG[(14336, 5120, 0)])                                       # the exploration's pass first, as in v26f
    for rnd in range(3):
        for (N, K, epi), c in CFG.items():
            e = guard("engine", lambda: G.time_engine(N, K, epi, gen))
            x = guard("explore", lambda: V.time24(gen, N, K, epi, c, V.sets_of(N, epi, c) // c[0]))
            rec["alone"].append(dict(N=N, K=K, round=rnd, engine_us=e, explore_us=x))
            print(f"round {rnd} {N}x{K}: engine path {e:.2f} us, explore path {x:.2f} us {el()}", flush=True)
    save()
    orig = G.gemv
    def routed(q, scale, x, epi=0, res=None, **kw):
        if kw.get("variant") == 24: c = kw["v13opt"]; return V.run24(q, scale, x, epi, res, kw["out"], c, V.sets_of(q.shape[0], epi, c) // c[0])
        return orig(q, scale, x, epi, res, **kw)
    G.gemv = routed
    try:
        plan = {(n, k, e): G.engine_choice(n, k, e) for n, k, e, _ in G.MODEL_SHAPES}
        plan["lm_head"] = G.ENGINE_CHOICE["lm_head"]
        explore = {**plan, **{k: (24, c[0], 1, 1, 0, c[2], 8, c) for k, c in CFG.items()}}
        before = {**plan, **BEFORE}
        minb_before = {**G.ENGINE_MINB, **BEFORE_MINB}
        for rnd in range(3):
            for label, p, mb in (("engine", None, G.ENGINE_MINB), ("explore path", explore, G.ENGINE_MINB), ("before", before, minb_before)):
                r = guard(f"token {label}", lambda: G.token_graph(p, gen, rec["bandwidth_tbps"], pdl=True, minb=mb))
                if r: rec["token"].append(dict(plan=label, round=rnd, ms=r["ms"])); print(f"token {label} round {rnd}: {r['ms']:.3f} ms {el()}", flush=True)
        save()
    finally:
        G.gemv = orig
    from qwen_engine.step import DecodeStep
    engine_method = DecodeStep._gemv
    def apply(step, on):
        def gm(wq, x, epi, o, res=None):
            N, K = wq[0].shape
            if on and x.shape[0] == 1 and (N, K, epi) in CFG:
                c = CFG[(N, K, epi)]
                return V.run24(wq[0], wq[1], x, epi, res, o, c, V.sets_of(N, epi, c) // c[0], pdl=step.pdl)
            return engine_method(step, wq, x, epi, o, res)
        step._gemv = gm
    guard("step", lambda: explore_util.step_ab(rec, guard, el, save, apply, "explore path"))
    save()
    print(f"done {el()}; errors {len(rec['errors'])}")


if __name__ == "__main__":
    main()
