"""Chapter 06: why the one-pair patterns lose their stream to the math on down and out_proj. gemv_dry26b_h200.json: without
the math, one row pair a warp reads down at 96-99 % and out_proj at 95 % (runs of 4-8 and 6), where the engine's two pairs a
warp read 86 and 90 %; with the math those one-pair builds read 75-81 % (gemv_v26d/g/er_h200.json). At five of them, the
build with its math, DRY, PROBE 2 (the math without the activation's loads) and PROBE 3 (the math without the widening),
alone with PDL over weights rotated past L2, two interleaved rounds.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_probe26c.py OUT_DIR (gemv_probe26c_h200.json). About a minute.
(Its loop became measure_cfgs, shared with explore_gemv_probe26d, after its record was made: the same steps, not re-run.)"""
import torch
from qwen_engine import gemv as G
from qwen_engine.runtime import median
import explore_util
import explore_gemv_dry26 as X
import explore_gemv_probe26 as P

CFGS = {(5120, 17408, 1): [(4, 1, 4, 5, 34, 2), (2, 1, 4, 10, 34, 2), (1, 1, 8, 10, 34, 2)], (5120, 6144, 1): [(4, 1, 6, 5, 12, 2), (1, 1, 6, 10, 12, 2)]}
E_ARGS = {0: "false, false", 1: "true, false", 2: "true, true"}
real = lambda epi, c: f"gemv_fp8_v26<{c[0]}, {c[1]}, {epi}, {c[2]}, {c[4]}, {c[3]}, {E_ARGS[c[5]]}, false>"
KINDS = {"with math": real, "dry": X.dry_name, "probe 2: math, no x loads": lambda e, c: P.probe_name(e, c, 2),
         "probe 3: math, no widening": lambda e, c: P.probe_name(e, c, 3)}
NAMES = tuple(dict.fromkeys(f(epi, c) for (N, K, epi), cs in CFGS.items() for c in cs for f in KINDS.values()))


def measure_cfgs(record: tuple, cfgs: dict, kinds: dict, names: tuple, seed: int):
    """record = (name, what, script); for each shape's configurations (cfgs {(N, K, epi): [c, ...]}) and each kind (kinds {label:
    name(epi, c)}), us per call at c's grid in two interleaved rounds, % of the run's bandwidth; a table last (this script's
    frame, and explore_gemv_probe26d's)."""
    rec, guard, el, save = explore_util.recorder(*record, configs={f"{N}x{K}": [list(c) for c in cs] for (N, K, epi), cs in cfgs.items()},
                                                 regs={}, rows=[])
    bw = rec["bandwidth_tbps"]
    gen = torch.Generator(device="cuda").manual_seed(seed)
    for nm in names:
        rec["regs"][nm] = guard(f"regs {nm}", lambda: X.get_kernel("gemv", nm, together=names).num_regs)
    for rnd in range(2):
        for (N, K, epi), cs in cfgs.items():
            nb = G.bytes_of(N, K, 1, epi)
            for c in cs:
                for kind, f in kinds.items():
                    us = guard(f"{kind} {N}x{K} {c}", lambda: X.time_build(gen, N, K, epi, f(epi, c), names, c))
                    if us: rec["rows"].append(dict(N=N, K=K, kind=kind, cfg=list(c), round=rnd, us=us, frac=nb / (us * 1e-6) / (bw * 1e12)))
            print(f"round {rnd} {N}x{K} {el()}", flush=True)
        save()
    print(f"\nbandwidth {bw:.3f} TB/s; % of it, median of the two rounds")
    first = next(iter(kinds.values()))
    for (N, K, epi), cs in cfgs.items():
        for c in cs:
            cell = lambda k: 100 * median([r["frac"] for r in rec["rows"] if (r["N"], r["kind"], r["cfg"]) == (N, k, list(c))] or [float("nan")])
            print(f"{N}x{K} {c} ({rec['regs'].get(first(epi, c))} regs): " + ", ".join(f"{k} {cell(k):.1f} %" for k in kinds))
    print(f"done {el()}; errors {len(rec['errors'])}")


def main():
    measure_cfgs(("gemv_probe26c_h200", "down and out_proj at one row pair a warp: each configuration's v26 build with its math, its DRY build, "
                  "PROBE 2 (the math without the activation's loads) and PROBE 3 (the math without the widening); alone with PDL over weights "
                  "rotated past L2, two interleaved rounds, % of the read bandwidth of the same run.", "explore_gemv_probe26c.py"),
                 CFGS, KINDS, NAMES, 30)


if __name__ == "__main__":
    main()
