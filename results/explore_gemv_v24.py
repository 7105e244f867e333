"""Chapter 06: v24, v14's whole-row streams in a grid resident at once, each warp's register ring running through its row
sets (w, w + NW, ...) without draining between them (v14: one row set a warp, 10 steps at K = 5,120, 2-3 waves of blocks).
On the three K = 5,120 shapes (gate|up, qkv|z, q|gate|k|v): every configuration checked bit for bit against the engine's
kernel (model shapes) and against v14 at its own row pairs (small shapes whose grids leave warps with uneven numbers of
sets), then timed alone with PDL interleaved with the engine's kernel (two rounds; each configuration at the most blocks
an SM holds and at the fewest blocks that keep the same number of rounds), then the token's GEMVs and the decode step
with each shape's winner (tokens compared first).
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v24.py OUT_DIR (gemv_v24_h200.json). About 20 seconds.
(RECORD and v25's names were factored in after gemv_v24_h200.json was made, for explore_gemv_v25.py: the same steps, not re-run.)"""
import math
import numpy as np
import torch
from qwen_engine import gemv as G
from qwen_engine.runtime import get_kernel, launch, time_graph, median, rotation_count
import explore_util

SHAPES = [(34816, 5120, 2), (16384, 5120, 0), (14336, 5120, 0)]
CFGS = {2: [(2, 4, 2, False), (2, 4, 2, True), (4, 2, 2, True), (4, 2, 2, False), (2, 2, 2, True), (4, 1, 5, True), (8, 1, 5, True),
            (4, 2, 5, True)],                                                    # (SR, RP, D, XS)
        0: [(4, 2, 2, True), (4, 2, 2, False), (2, 4, 2, False), (4, 1, 5, True), (8, 1, 2, True), (4, 2, 5, True)]}
AWK = [(1152, 5120, 0, 5), (2304, 5120, 2, 7), (3840, 5120, 0, 3)]              # (N, K, epi, blocks): uneven sets per warp
cfgs_for = lambda N, K, epi: CFGS[epi]                                           # a shape's configurations
LABEL = "v24"                                                                    # the plan's name in the token and step records
FORCE_AB = False                                                                 # the best build to the token and step A/B even if it lost alone
b = lambda v: "true" if v else "false"
name = lambda epi, c: (f"gemv_fp8_v24<{c[0]}, {c[1]}, {epi}, {c[2]}, {b(c[3])}, 10, 1>" if len(c) == 4 else    # (SR, RP, D, XS[, PF, LDK])
                      f"gemv_fp8_v25<{c[0]}, {c[1]}, {epi}, {c[2]}, {b(c[3])}, 10, 1, {c[4]}, {c[5]}>")
ALL = tuple(name(epi, c) for epi in CFGS for c in CFGS[epi])


RECORD = ("gemv_v24_h200", "v24 (v14's whole-row streams in a resident grid, each warp's ring running through its row sets without "
          "draining) on the three K = 5,120 shapes: bit identity with the engine's kernel and with v14 at small uneven shapes, "
          "registers and blocks an SM, alone with PDL interleaved with the engine's kernel (two rounds), then the token's GEMVs "
          "and the decode step with each shape's winner.", "explore_gemv_v24.py")


def kern(epi, c): return get_kernel("gemv", name(epi, c), together=ALL if len(c) == 4 else ())


def sets_of(N, epi, c): return (N // 2 if epi == 2 else N) // (c[1] if epi == 2 else 2 * c[1])


def blocks_per_sm(epi, c, K=5120):
    import cupy
    return cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kern(epi, c).ptr, 32 * c[0], 2 * K if c[3] else 0)   # registers, smem


def grids(N, epi, c, sms=132):
    "The most blocks resident at once (capped at one set a warp), and the fewest blocks that keep that many rounds of sets."
    nsets = sets_of(N, epi, c)
    gmax = min(blocks_per_sm(epi, c) * sms, -(-nsets // c[0]))
    rounds = -(-nsets // (gmax * c[0]))
    return sorted({gmax, -(-nsets // (rounds * c[0]))}, reverse=True)


def run24(q, sc, x, epi, res, out, c, blocks, pdl=True):
    N, K = q.shape
    assert K == 5120 and x.shape[0] == 1, "the v24 builds here: K = 5,120, one token"
    args = (q, sc, x, res if res is not None else x, out, np.int32(N), np.int32(K), np.int32(1), np.int32(out.shape[1]), out, out)
    launch(kern(epi, c), (blocks,), (32 * c[0],), args, smem=2 * K if c[3] else 0, pdl=pdl)
    return out


def inputs(gen, N, K, epi):
    q, sc = G.synth_fp8(N, K, gen)
    x = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
    res = torch.randn(1, N, generator=gen, device="cuda").to(torch.bfloat16) if epi == 1 else None
    return q, sc, x, res


def identity(gen, N, K, epi, c, blocks, versus):
    "v24's outputs (poisoned first) against the engine's kernel (versus 'engine') or v14 at the same row pairs ('v14')."
    q, sc, x, res = inputs(gen, N, K, epi)
    if versus == "engine": ye = G.engine_gemv(q, sc, x, epi, res, out=None, scratch=G.engine_scratch(N, K, epi))
    else: ye = G.gemv(q, sc, x, epi, res, S=c[0], RG=2 if epi == 2 else 1, variant=14, D=2, v13opt=(1, c[1], True, False))
    y = torch.full_like(ye, float("nan"))
    run24(q, sc, x, epi, res, y, c, blocks)
    again = torch.full_like(ye, float("nan"))
    run24(q, sc, x, epi, res, again, c, blocks)
    return dict(N=N, K=K, epi=epi, cfg=list(c), blocks=blocks, versus=versus, identical=torch.equal(ye, y),
                mismatches=(ye != y).sum().item(), repeat_identical=torch.equal(y, again))


def time24(gen, N, K, epi, c, blocks):
    "time_gemv's method: a CUDA graph cycling through enough weight copies to miss L2, PDL launches, median of 7."
    n = rotation_count(N * K)
    ws = [G.synth_fp8(N, K, gen) for _ in range(n)]
    x = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
    res = torch.randn(1, N, device="cuda").to(torch.bfloat16) if epi == 1 else None
    out = torch.empty(1, N // 2 if epi == 2 else N, dtype=torch.bfloat16, device="cuda")
    us = 1000 * median(time_graph(lambda i: run24(ws[i % n][0], ws[i % n][1], x, epi, res, out, c, blocks), calls=n * max(1, 40 // n), reps=7))
    del ws
    return us


def main():
    rec, guard, el, save = explore_util.recorder(*RECORD,
        configs={str(e): [list(c) for c in v] for e, v in CFGS.items()}, regs={}, occupancy={}, identity=[], timings=[], wins={},
        token={}, step=[], step_tokens={})
    bw = rec["bandwidth_tbps"]
    gen = torch.Generator(device="cuda").manual_seed(24)
    ok = {}
    for N, K, epi in SHAPES:
        for c in cfgs_for(N, K, epi):
            nm = name(epi, c)
            rec["regs"][nm] = guard(f"regs {nm}", lambda: kern(epi, c).num_regs)
            rec["occupancy"][nm] = guard(f"occupancy {nm}", lambda: blocks_per_sm(epi, c))
            gs = guard(f"grids {N} {nm}", lambda: grids(N, epi, c)) or []
            for g in gs:
                r = guard(f"identity {N} {nm} {g}", lambda: identity(gen, N, K, epi, c, g, "engine"))
                if r: rec["identity"].append(r)
                if r and r["identical"] and r["repeat_identical"]: ok.setdefault((N, K, epi), []).append((c, g))
            print(f"{N}x{K} {nm}: {rec['regs'][nm]} regs, {rec['occupancy'][nm]} blocks/SM, grids {gs}, identical "
                  f"{[r['identical'] for r in rec['identity'] if r['N'] == N and r['cfg'] == list(c)]} {el()}", flush=True)
    for N, K, epi, blocks in AWK:
        for c in cfgs_for(N, K, epi)[:3]:
            r = guard(f"identity awkward {N} {c}", lambda: identity(gen, N, K, epi, c, blocks, "v14"))
            if r: rec["identity"].append(r); print(f"awkward {N}x{K} epi {epi} {c} x{blocks}: {r['identical']} {el()}", flush=True)
    save()
    for rep in range(2):
        for N, K, epi in SHAPES:
            nb = G.bytes_of(N, K, 1, epi)
            e = guard("time engine", lambda: G.time_engine(N, K, epi, gen))
            if e: rec["timings"].append(dict(N=N, K=K, epi=epi, cfg="engine", blocks=0, rep=rep, us=e, frac=nb / (e * 1e-6) / (bw * 1e12)))
            s = guard("time stream", lambda: G.stream_probe(nb, gen))
            if s: rec["timings"].append(dict(N=N, K=K, epi=epi, cfg="stream", blocks=0, rep=rep, us=s, frac=nb / (s * 1e-6) / (bw * 1e12)))
            for c, g in ok.get((N, K, epi), []):
                us = guard(f"time {N} {c} {g}", lambda: time24(gen, N, K, epi, c, g))
                if us: rec["timings"].append(dict(N=N, K=K, epi=epi, cfg=list(c), blocks=g, rep=rep, us=us, frac=nb / (us * 1e-6) / (bw * 1e12)))
            print(f"rep {rep} {N}x{K}: " + ", ".join(f"{t['cfg'] if isinstance(t['cfg'], str) else (tuple(t['cfg']), t['blocks'])} {t['us']:.2f} "
                                                      f"({100 * t['frac']:.1f} %)" for t in rec["timings"] if (t["N"], t["K"], t["rep"]) == (N, K, rep)) + f" {el()}", flush=True)
        save()
    for N, K, epi in SHAPES:                      # a winner: faster than the engine's kernel in both rounds' medians
        ts = [t for t in rec["timings"] if (t["N"], t["K"]) == (N, K)]
        eng = median([t["us"] for t in ts if t["cfg"] == "engine"])
        by = {}
        for t in ts:
            if not isinstance(t["cfg"], str): by.setdefault((tuple(t["cfg"]), t["blocks"]), []).append(t["us"])
        if by:
            (c, g), us = min(((k, median(v)) for k, v in by.items()), key=lambda kv: kv[1])
            if us < 0.995 * eng or FORCE_AB:             # FORCE_AB: the best build goes to the token and the step either way
                rec["wins"][f"{N}x{K}"] = dict(N=N, K=K, epi=epi, cfg=list(c), blocks=g, us=us, engine_us=eng, forced=not us < 0.995 * eng)
    print("wins", rec["wins"], el(), flush=True)
    save()
    wins = {(w["N"], w["K"]): (tuple(w["cfg"]), w["blocks"]) for w in rec["wins"].values()}
    orig = G.gemv
    def routed(q, scale, x, epi=0, res=None, **kw):            # token_graph's launches: variant 24 carries (cfg, blocks) in v13opt
        if kw.get("variant") == 24: c, g = kw["v13opt"]; return run24(q, scale, x, epi, res, kw["out"], c, g)
        return orig(q, scale, x, epi, res, **kw)
    G.gemv = routed
    try:
        keys = [(N, K, epi) for N, K, epi in [(14336, 5120, 0), (16384, 5120, 0), (5120, 6144, 1), (34816, 5120, 2), (5120, 17408, 1)]]
        plan = {k: G.engine_choice(*k) for k in keys}
        plan["lm_head"] = G.ENGINE_CHOICE["lm_head"]
        v24plan = dict(plan)
        for (N, K), (c, g) in wins.items():
            epi = next(e for n, k, e in SHAPES if (n, k) == (N, K))
            v24plan[(N, K, epi)] = (24, c[0], 2 if epi == 2 else 1, 1, 0, c[2], 8, (c, g))
        for rnd in range(2 if wins else 0):
            for label, p in (("engine", None), (LABEL, v24plan)):
                r = guard(f"token {label}", lambda: G.token_graph(p, gen, bw, pdl=True, minb=G.ENGINE_MINB))
                if r: rec["token"][f"{label} {rnd}"] = r; print(f"token {label} round {rnd}: {r['ms']:.3f} ms ({r['ratio']:.3f}x) {el()}", flush=True)
        save()
    finally:
        G.gemv = orig
    if wins:
        from qwen_engine.step import DecodeStep
        engine_method = DecodeStep._gemv
        def apply(step, on):
            def gm(wq, x, epi, o, res=None):
                N, K = wq[0].shape
                if on and x.shape[0] == 1 and (N, K) in wins: return run24(wq[0], wq[1], x, epi, res, o, *wins[(N, K)], pdl=step.pdl)
                return engine_method(step, wq, x, epi, o, res)
            step._gemv = gm
        guard("step", lambda: explore_util.step_ab(rec, guard, el, save, apply, LABEL))
    save()
    print(f"done {el()}; errors {len(rec['errors'])}")


if __name__ == "__main__":
    main()
