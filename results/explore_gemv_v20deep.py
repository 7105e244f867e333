"""Chapter 06: v20 (the weight ring in shared memory, filled by cp.async) at deep rings. v24 (gemv_v24_h200.json) found that
a ring which never drains between row sets gains nothing at equal blocks an SM: the loss is in the steady state, where a
warp has one or two steps (2-8 KB) in flight and a register ring deeper than that costs blocks an SM. v20's ring costs no
registers, but its sweep (gemv_v20_h200.json) went to 3-4 steps only, the depth v14 reaches in registers. Here 6-10 steps
(7-9 in flight a warp: 100-180 KB an SM at the blocks shared memory allows), the carveout set to the most shared memory.
Each configuration: bit identity with the engine's kernel, blocks an SM, then alone with PDL interleaved with the engine's
(two rounds), then the token's GEMVs and the decode step with each shape's winner.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v20deep.py OUT_DIR (gemv_v20deep_h200.json). About 30 seconds.
(The win selection moved into explore_util.wins_in_both_repeats after gemv_v20deep_h200.json was made: the same steps, not re-run.)"""
import torch
from qwen_engine import gemv as G
import explore_util

C = lambda SR, RP, D, KS=1: (SR, 1, RP, D, 1, 1, KS, 0)               # (SR, SK, RP, D, EARLY, MINB, KS, XS)
SWEEP = {(34816, 5120, 2): [C(2, 2, 8), C(4, 2, 8), C(2, 4, 6), C(2, 2, 10), C(4, 1, 10), C(2, 4, 4)],
         (16384, 5120, 0): [C(4, 2, 8), C(2, 2, 8), C(4, 1, 10), C(2, 2, 10)],
         (14336, 5120, 0): [C(4, 2, 8), C(2, 2, 8), C(4, 1, 10), C(2, 2, 10)],
         (5120, 17408, 1): [C(4, 2, 8, 2), C(4, 1, 8, 2), C(4, 2, 6, 2), C(2, 2, 10, 2)],
         (5120, 6144, 1): [C(4, 2, 6, 2), C(4, 1, 6, 2), C(2, 2, 6, 2)]}
kw = lambda cfg: explore_util.v14_kwargs(cfg, 20)


def occupancy(N, K, epi, cfg):
    "Registers, ring bytes a block and blocks an SM of this build (carveout set to the most shared memory first)."
    import cupy
    k = G.get_kernel("gemv", G._v20_name(epi, cfg))
    k.preferred_shared_memory_carveout = 100
    smem = G.v20_smem(cfg[0], cfg[1], cfg[2], cfg[3])
    if smem > 40 * 1024 and k.max_dynamic_shared_size_bytes < smem: k.max_dynamic_shared_size_bytes = smem
    return dict(regs=k.num_regs, smem=smem, blocks_per_sm=cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(k.ptr, 32 * cfg[0], smem))


def main():
    rec, guard, el, save = explore_util.recorder(
        "gemv_v20deep_h200", "v20 (the weight ring in shared memory, cp.async) at 6-10 steps on every shape, the carveout at the most "
        "shared memory: bit identity with the engine's kernel, registers, ring and blocks an SM, alone with PDL interleaved with "
        "the engine's (two rounds), then the token's GEMVs and the decode step with each shape's winner.", "explore_gemv_v20deep.py",
        sweep={f"{k[0]}x{k[1]}": [list(c) for c in v] for k, v in SWEEP.items()}, occupancy={}, identity=[], timings=[], wins={},
        token={}, step=[], step_tokens={})
    bw = rec["bandwidth_tbps"]
    gen = torch.Generator(device="cuda").manual_seed(20)
    ok = set()
    for (N, K, epi), cfgs in SWEEP.items():
        for cfg in cfgs:
            o = guard(f"occupancy {N} {cfg}", lambda: occupancy(N, K, epi, cfg))
            if o: rec["occupancy"][f"{N}x{K} {cfg}"] = o
            r = guard(f"identity {N} {cfg}", lambda: explore_util.versus_engine(gen, N, K, epi, cfg[0], kw(cfg)))
            if r: r["cfg"] = list(cfg); rec["identity"].append(r)
            if r and r["identical"]: ok.add((N, K, epi, cfg))
            print(f"{N}x{K} {cfg}: {o} identical {r and r['identical']} {el()}", flush=True)
    save()
    explore_util.time_vs_engine(rec, guard, el, gen, bw, SWEEP, lambda N, K, epi, cfg: (N, K, epi, cfg) in ok, kw)
    save()
    wins = {(N, K): (20, cfg) for (N, K, _), cfg in explore_util.wins_in_both_repeats(rec, SWEEP, G.ENGINE_MARGIN).items()}
    rec["wins"] = {f"{k[0]}x{k[1]}": list(v[1]) for k, v in wins.items()}
    print("wins", rec["wins"], el(), flush=True)
    save()
    if wins:
        plan = {(N, K, epi): G.engine_choice(N, K, epi) for N, K, epi, _ in G.MODEL_SHAPES}
        plan["lm_head"] = G.ENGINE_CHOICE["lm_head"]
        mine = dict(plan)
        for (N, K), (v, cfg) in wins.items():
            epi = next(e for n, k, e, _ in G.MODEL_SHAPES if (n, k) == (N, K))
            SR, SK, RP, D, E, MB, KS, XS = cfg
            mine[(N, K, epi)] = (20, SR, 2 if epi == 2 else 1, KS, 4, D, 8, (SK, RP, bool(E), bool(XS)))
        for rnd in range(2):
            minb = {k: v for k, v in G.ENGINE_MINB.items() if (k[0], k[1]) not in wins}   # the swapped shapes: v20 as timed
            for label, p, mb in (("engine", None, None), ("v20 deep", mine, minb)):
                r = guard(f"token {label}", lambda: G.token_graph(p, gen, bw, pdl=True, minb=mb))
                if r: rec["token"][f"{label} {rnd}"] = r; print(f"token {label} round {rnd}: {r['ms']:.3f} ms ({r['ratio']:.3f}x) {el()}", flush=True)
        save()
        guard("step", lambda: explore_util.step_ab(rec, guard, el, save, explore_util.route_winners(wins), "v20 deep"))
    save()
    print(f"done {el()}; errors {len(rec['errors'])}")


if __name__ == "__main__":
    main()
