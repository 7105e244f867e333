"""Chapter 06, v29: one row pair a warp, its two K halves as two independent chains, the halves met as v23's K split meets
them (each half's segments in order, then (0 + half 0) + half 1). gemv_dry26b_h200.json: on down and out_proj one pair a
warp streams at 95-99 % without the math where the engine's two pairs read 84-90 %; with the math one pair read 71-81 %
(gemv_probe26c_h200.json). On down and out_proj, in one round (4 or 2 warps a block, 20 warps an SM) and in 1.94 rounds
(2 or 1 warps, 10 an SM): each build's DRY twin timed first (the pattern of its requests), then the v26d checks (float64,
run to run), each build also compared bit for bit with v14's K split of 2 at one pair a warp (the same sums if the split
falls at K / 2), alone with PDL interleaved with the engine's (two rounds), the token's GEMVs and the decode step with each
shape's winner (its sums are v23's order, not the engine's: greedy tokens recorded, not required equal).
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v29.py OUT_DIR (gemv_v29_h200.json). About two minutes."""
import torch
import explore_gemv_v26d as D
import explore_gemv_dry26 as X
from qwen_engine import gemv as G
from qwen_engine.runtime import median
V = D.V

CFGS = {(5120, 17408): [(4, 1, 2, 5, 34, 2), (2, 1, 2, 10, 34, 2), (2, 1, 4, 5, 34, 2), (1, 1, 4, 10, 34, 2)],   # (SR, 1, U, MINB, KST, -)
        (5120, 6144): [(4, 1, 3, 5, 12, 2), (4, 1, 2, 5, 12, 2), (2, 1, 3, 5, 12, 2), (1, 1, 3, 10, 12, 2)]}
D.configure(CFGS, "v29",
            ("gemv_v29_h200", "v29 (one row pair a warp, its two K halves as two chains, met in v23's order) on down and out_proj in one round and "
             "in 1.94: each build's DRY twin, the float64 check, run-to-run and v14-split identity, alone with PDL interleaved with the engine's "
             "(two rounds), then the token's GEMVs and the decode step with each shape's winner.", "explore_gemv_v29.py"), awk=())
name29 = lambda epi, c, dry=False: f"gemv_fp8_v29<{c[0]}, {epi}, {c[2]}, {c[4]}, {c[3]}{', true' if dry else ''}>"
D.builds(name29, exact=False)
DRY_NAMES = tuple(name29(1, c, True) for cs in CFGS.values() for c in cs)

_versus = D.B.versus_definition
def versus(gen, N, K, epi, c):
    "The float64 check (and run to run); then v14's K split of 2 at one pair a warp on the same inputs, bit for bit."
    r = _versus(gen, N, K, epi, c)
    q, sc = G.synth_fp8(N, K, gen)
    x = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
    res = torch.randn(1, N, generator=gen, device="cuda").to(torch.bfloat16)
    y = torch.full((1, N), float("nan"), dtype=torch.bfloat16, device="cuda")
    V.run24(q, sc, x, epi, res, y, c, V.sets_of(N, epi, c) // c[0])
    try:
        y14 = G.gemv(q, sc, x, epi, res, S=4, RG=1, variant=14, KS=2, D=2, v13opt=(1, 1, True, False), scratch=G.v13_scratch(N, K, epi, 4, 1, 2))
        r["v14_split_identical"] = torch.equal(y, y14)
    except Exception as e:
        r["v14_split_identical"] = repr(e)[:200]
    return r
D.B.versus_definition = versus


def dry_first():
    rec, guard, el, save = D.explore_util.recorder("gemv_v29dry_h200", "v29's DRY builds (no math: the requests of each configuration) on down "
        "and out_proj beside the engine's build and the stream that asks first; alone with PDL over weights rotated past L2, two interleaved "
        "rounds, % of the read bandwidth of the same run.", "explore_gemv_v29.py", configs={f"{N}x{K}": [list(c) for c in cs] for (N, K), cs in CFGS.items()}, rows=[])
    bw, gen = rec["bandwidth_tbps"], torch.Generator(device="cuda").manual_seed(32)
    for rnd in range(2):
        for (N, K), cs in CFGS.items():
            nb = G.bytes_of(N, K, 1, 1)
            runs = [("engine", None, lambda: G.time_engine(N, K, 1, gen)), ("stream early", None, lambda: X.time_stream_early(nb))]
            runs += [("dry", c, (lambda c=c: X.time_build(gen, N, K, 1, name29(1, c, True), DRY_NAMES, c))) for c in cs]
            for kind, c, fn in runs:
                us = guard(f"{kind} {N}x{K} {c}", fn)
                if us: rec["rows"].append(dict(N=N, K=K, kind=kind, cfg=list(c) if c else None, round=rnd, us=us, frac=nb / (us * 1e-6) / (bw * 1e12)))
        save()
    for (N, K), cs in CFGS.items():
        cell = lambda kind, c: 100 * median([r["frac"] for r in rec["rows"] if (r["N"], r["kind"], r["cfg"]) == (N, kind, list(c) if c else None)] or [float("nan")])
        print(f"{N}x{K}: engine {cell('engine', None):.1f} %, stream early {cell('stream early', None):.1f} %, "
              + ", ".join(f"dry {c[:4]} {cell('dry', c):.1f} %" for c in cs) + f" {el()}", flush=True)


if __name__ == "__main__":
    dry_first()
    D.main()
