"""Chapter 06: the request patterns of the 5,120-row shapes, without the math. gemv_dry26_h200.json: the engine's down and
out_proj builds without their math read only 85 and 90 % where the stream that asks first reads 97 and 94 %, so on these
two shapes the requests themselves cost 7-12 points. Here the DRY build (gemv_fp8_v26dry: grid, register cap and requests
of a v26 configuration, no math) at many configurations of each: warps a block, row pairs a warp, runs, blocks an SM
(one round, 1.94 rounds where one pair a warp allows it, and an 8-warp control at 1.21), beside the engine's build and the early stream; two
interleaved rounds. A pattern that reads like the stream without the math is where a build with the math could aim.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_dry26b.py OUT_DIR (gemv_dry26b_h200.json). About a minute."""
import torch
from qwen_engine import gemv as G
from qwen_engine.runtime import median
import explore_util
import explore_gemv_dry26 as X

CFGS = {(5120, 17408, 1): [(2, 2, 4, 5, 34, 2), (2, 2, 2, 5, 34, 2), (2, 2, 6, 5, 34, 2), (4, 1, 2, 5, 34, 2), (4, 1, 4, 5, 34, 2),
                           (1, 2, 4, 10, 34, 2), (2, 1, 4, 10, 34, 2), (2, 1, 4, 5, 34, 2), (1, 1, 4, 10, 34, 2), (1, 1, 8, 10, 34, 2),
                           (1, 4, 2, 5, 34, 2), (8, 1, 2, 2, 34, 2)],
        (5120, 6144, 1): [(4, 1, 3, 5, 12, 2), (4, 1, 2, 5, 12, 2), (4, 1, 6, 5, 12, 2), (2, 2, 3, 5, 12, 2), (1, 2, 3, 10, 12, 2),
                          (2, 1, 3, 10, 12, 2), (2, 1, 3, 5, 12, 2), (1, 1, 6, 10, 12, 2), (1, 4, 3, 5, 12, 2)]}
NAMES = tuple(dict.fromkeys(X.dry_name(epi, c) for (N, K, epi), cs in CFGS.items() for c in cs))
rounds = lambda N, c: N / (2 * c[1]) / c[0] / (c[3] * 132)


def main():
    rec, guard, el, save = explore_util.recorder(
        "gemv_dry26b_h200", "down and out_proj: the DRY build (no math) at many v26 configurations (warps a block, row pairs a warp, runs, "
        "blocks an SM), beside the engine's build and the stream that asks first; alone with PDL over weights rotated past L2, two "
        "interleaved rounds, % of the read bandwidth of the same run.", "explore_gemv_dry26b.py",
        configs={f"{N}x{K}": [list(c) for c in cs] for (N, K, epi), cs in CFGS.items()}, regs={}, rows=[])
    bw = rec["bandwidth_tbps"]
    gen = torch.Generator(device="cuda").manual_seed(29)
    for nm in NAMES:
        rec["regs"][nm] = guard(f"regs {nm}", lambda: X.get_kernel("gemv", nm, together=NAMES).num_regs)
    for rnd in range(2):
        for (N, K, epi), cs in CFGS.items():
            nb = G.bytes_of(N, K, 1, epi)
            runs = [("engine", None, lambda: G.time_engine(N, K, epi, gen)), ("stream early", None, lambda: X.time_stream_early(nb))]
            runs += [("dry", c, (lambda c=c: X.time_build(gen, N, K, epi, X.dry_name(epi, c), NAMES, c))) for c in cs]
            for kind, c, fn in runs:
                us = guard(f"{kind} {N}x{K} {c}", fn)
                if us: rec["rows"].append(dict(N=N, K=K, kind=kind, cfg=list(c) if c else None, round=rnd, us=us, frac=nb / (us * 1e-6) / (bw * 1e12),
                                               rounds=rounds(N, c) if c else None))
            print(f"round {rnd} {N}x{K} {el()}", flush=True)
        save()
    print(f"\nbandwidth {bw:.3f} TB/s; % of it, median of the two rounds")
    for (N, K, epi), cs in CFGS.items():
        cell = lambda kind, c: 100 * median([r["frac"] for r in rec["rows"] if (r["N"], r["kind"], r["cfg"]) == (N, kind, list(c) if c else None)] or [float("nan")])
        print(f"{N}x{K}: engine {cell('engine', None):.1f} %, stream early {cell('stream early', None):.1f} %")
        for c in cs: print(f"   dry {c} ({rounds(N, c):.2f} rounds, {rec['regs'].get(X.dry_name(epi, c))} regs): {cell('dry', c):.1f} %")
    print(f"done {el()}; errors {len(rec['errors'])}")


if __name__ == "__main__":
    main()
