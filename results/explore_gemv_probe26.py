"""Chapter 06: what in the math costs the engine's GEMVs. gemv_dry26_h200.json: each engine build without its math (DRY:
the same grid, registers and requests) reads 97-98 % on q|gate|k|v, qkv|z and gate|up where the build reads 88-93 %, and
85-90 % on down and out_proj. ER (gemv_v26er_h200.json) asked for each step's refill right after its math instead of at
the top of the next run and changed nothing: ptxas emits the same machine code for both (it hoists the loads as far as the
registers allow either way). Two timing builds split the rest (gemv_fp8_v26probe, outputs wrong or unwritten): PROBE 1 is
DRY with the activation also loaded at use (two 16-byte L1 loads a lane a step, folded), PROBE 2 the whole math with step
0's activation reused (no activation loads in the loop). Per model shape, alone with PDL over weights rotated past L2,
interleaved, two rounds: the engine's build, DRY, PROBE 1, PROBE 2 and the stream that asks first.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_probe26.py OUT_DIR (gemv_probe26_h200.json). About a minute.
(Its loop moved into explore_gemv_dry26.measure, then its builds into explore_gemv_probe26.probe_run, after its record
was made: the same steps, not re-run.)"""
from qwen_engine import gemv as G
import explore_gemv_dry26 as X

E_ARGS = {0: "false, false", 1: "true, false", 2: "true, true"}
probe_name = lambda epi, c, p: f"gemv_fp8_v26probe<{c[0]}, {c[1]}, {epi}, {c[2]}, {c[4]}, {c[3]}, {E_ARGS[c[5]]}, {p}>"
def probe_run(record: tuple, probes: dict, stream: bool, seed: int):
    """This script's frame and explore_gemv_probe26b/e's: per model shape at the engine's configuration, the engine's build,
    its DRY build, the PROBE builds of `probes` {PROBE: label} and (with `stream`) the stream that asks first
    (explore_gemv_dry26.measure's rounds and table)."""
    names = tuple(probe_name(epi, X.engine_cfg(N, K, epi), p) for N, K, epi, _ in X.SHAPES for p in probes) + X.NAMES
    build = lambda gen, N, K, epi, name: X.time_build(gen, N, K, epi, name, names)
    kinds = ("engine", "dry", *probes.values()) + (("stream early",) if stream else ())
    fns = lambda gen, N, K, epi, nb: ((lambda: G.time_engine(N, K, epi, gen),
                                       lambda: build(gen, N, K, epi, X.dry_name(epi, X.engine_cfg(N, K, epi))))
                                      + tuple((lambda p=p: build(gen, N, K, epi, probe_name(epi, X.engine_cfg(N, K, epi), p))) for p in probes)
                                      + ((lambda: X.time_stream_early(nb)),) * stream)
    X.measure(record, kinds, fns, names, seed)


def main():
    probe_run(("gemv_probe26_h200", "Per model shape, alone with PDL, weights rotated past L2: the engine's v26 build, its DRY build, PROBE 1 (DRY "
               "with the activation loaded at use) and PROBE 2 (the math with step 0's activation for every step), and the stream that asks for "
               "its first trip before the wait; two interleaved rounds, % of the read bandwidth of the same run.", "explore_gemv_probe26.py"),
              {1: "probe 1: dry + x loads", 2: "probe 2: math, no x loads"}, True, 27)


if __name__ == "__main__":
    main()
