"""Chapter 06, v26d: v26 in grids that fit the resident slots. v26 lost the 5,120-row shapes at 59-64 % (gemv_v26b_h200.json)
in grids of 1.2 rounds: 2,560 row pairs on 2,112 resident warps, the second round a fifth full and alone on the DRAM. The
engine's down / out_proj (v23 / v18) split K over two blocks into 0.97 rounds instead (640 blocks on 5 x 132 slots), and
v23 at 4 blocks an SM (1.2 rounds) read down at 65 % (gemv_v23b_h200.json). Here v26 (no split, v14's sums a row) at the
configurations whose grid is just under a whole number of rounds (rounds = blocks / (blocks an SM x 132)):
down and out_proj in one round (20 warps an SM of one row pair, or 10 of two), q|gate|k|v and qkv|z in 1.94 or 3.88; with
controls at 1.2 (the 5,120-row shapes), 3.39 (q|gate|k|v) and 4.43 rounds (qkv|z). On the K = 5,120 shapes every build is checked bit for bit against the
engine's kernel; on the 5,120-row shapes (whose engine kernels split K, so other sums) against the float64 definition and
run to run (explore_gemv_v26b's check), and M = 8 rows against M = 1 calls (v26's M > 1 path: v14's 8-token build, no split).
Then alone with PDL interleaved with the engine's kernel (two rounds), the token's GEMVs and the decode step with each
shape's winner (explore_gemv_v24's machinery). The split shapes' sums change, so the step's greedy tokens may differ from
the engine's; they are recorded and the step is timed either way.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26d.py OUT_DIR (gemv_v26d_h200.json). About two minutes."""
import functools
import torch
import explore_gemv_v26b as B
import explore_util
V = B.V
from qwen_engine import gemv as G

ROUNDS = lambda N, epi, c, sms=132: V.sets_of(N, epi, c) / (c[0] * c[3] * sms)   # blocks / resident slots at MINB blocks an SM
EPI = {(5120, 17408): 1, (5120, 6144): 1, (14336, 5120): 0, (16384, 5120): 0, (34816, 5120): 2}
CFGS = {}
# a build's name from its configuration (SR, RP, U, MINB[, KST[, E]]): KST 10 unless given; E 0 none, 1 E, 2 EK, 3 EK2 (v26e-v26h)
name26 = lambda epi, c: (f"gemv_fp8_v26<{c[0]}, {c[1]}, {epi}, {c[2]}, {c[4] if len(c) > 4 else 10}, {c[3]}"
                         + {0: ">", 1: ", true>", 2: ", true, true>", 3: ", true, true, true>"}[c[5] if len(c) > 5 else 0])


def configure(cfgs: dict, label: str, record: tuple, awk=((1152, 5120, 0, 0),)):
    """Point explore_gemv_v24's machinery at `cfgs` {(N, K): [configuration, ...]} (v26d and the scripts after it): the
    shapes, each shape's builds (an awkward shape of `awk` takes the first model shape's with its epilogue), the builds'
    names and one compile pass over them (the 5,120-row shapes also with EPI 0, for the float64 check), the plan's label
    and the record."""
    CFGS.clear(); CFGS.update(cfgs)
    V.SHAPES = [(N, K, EPI[(N, K)]) for N, K in cfgs]
    V.cfgs_for = lambda N, K, epi: CFGS.get((N, K)) or next(cs for (n, k), cs in CFGS.items() if EPI[(n, k)] == epi)
    V.CFGS = {1: [], **{e: [c for (N, K), cs in cfgs.items() if EPI[(N, K)] == e for c in cs] for e in (0, 2) if e in (EPI[k] for k in cfgs)}}
    V.AWK = list(awk)
    V.name = name26
    V.ALL = tuple(dict.fromkeys([V.name(e, c) for (N, K), cs in cfgs.items() for c in cs for e in ((0, 1) if (N, K) in B.SPLIT else (EPI[(N, K)],))]))
    V.kern = lambda epi, c: V.get_kernel("gemv", V.name(epi, c), together=V.ALL)
    V.LABEL, V.RECORD = label, record


# Each shape's engine build as a configuration (SR, RP, U, MINB, KST, E) of these scripts (ENGINE_CHOICE, ENGINE_V26, ENGINE_MINB).
ENGINE = {(N, K): (G.ENGINE_CHOICE[(N, K, e)][1], G.ENGINE_V26[(N, K, e)][0], G.ENGINE_V26[(N, K, e)][1], G.ENGINE_MINB[(N, K, e)], K // 512,
                   G.ENGINE_V26[(N, K, e)][2]) for (N, K), e in EPI.items()}


E_ARGS = {0: "false, false", 1: "true, false", 2: "true, true"}   # a configuration's E: none, E, EK (as template arguments)


def family(kernel: str, extra: int = None, fixed: tuple = ()):
    """A build's name for `builds` from a configuration (SR, RP, U, MINB, KST, E, *rest) of a v26-family kernel whose template
    is <SR, RP, EPI, U, KST, MINB, E, EK, ...>: the `extra` first entries of rest (all of them when None), then `fixed`."""
    return lambda epi, c: (f"{kernel}<{c[0]}, {c[1]}, {epi}, {c[2]}, {c[4]}, {c[3]}, {E_ARGS[c[5]]}"
                           + "".join(f", {a}" for a in (c[6:] if extra is None else c[6:6 + extra]) + tuple(fixed)) + ">")


def builds(name, exact=True):
    """After configure: the builds are `name(epi, configuration)` (another kernel of the v26 family than v26 itself), and with
    `exact` every one is checked bit for bit against the engine's kernel (the same sums as v26 on every shape)."""
    V.name = name
    V.ALL = tuple(dict.fromkeys(name(e, c) for k, cs in CFGS.items() for c in cs for e in ((0, 1) if k in B.SPLIT else (EPI[k],))))
    V.kern = lambda epi, c: V.get_kernel("gemv", V.name(epi, c), together=V.ALL)
    if exact: V.identity = B._identity


def main():
    for (N, K), cs in CFGS.items():
        print(f"{N}x{K}: " + ", ".join(f"{c} {ROUNDS(N, EPI[(N, K)], c):.2f} rounds" for c in cs))
    V.main()


configure({(5120, 17408): [(4, 1, 2, 5, 34), (2, 2, 2, 5, 34), (2, 1, 2, 10, 34), (1, 2, 2, 10, 34), (2, 1, 2, 8, 34)],     # (SR, RP, U, MINB, KST)
           (5120, 6144): [(4, 1, 2, 5, 12), (4, 1, 3, 5, 12), (2, 2, 2, 5, 12), (2, 2, 3, 5, 12), (2, 1, 2, 10, 12), (1, 2, 2, 10, 12),
                          (2, 1, 2, 8, 12)],
           (14336, 5120): [(4, 1, 2, 7), (2, 2, 2, 7), (1, 2, 2, 14), (2, 1, 2, 7), (2, 1, 2, 8)],
           (16384, 5120): [(2, 2, 2, 8), (1, 2, 2, 16), (4, 1, 2, 8), (8, 1, 2, 4), (2, 1, 2, 8), (2, 1, 2, 7)]}, "v26d",
          ("gemv_v26d_h200", "v26 in grids just under a whole number of rounds of resident slots (down and out_proj in one round "
           "without a K split, q|gate|k|v and qkv|z in 1.94 / 3.88; controls at 1.2, 3.39 and 4.43 rounds): bit identity with the "
           "engine's kernel on the K = 5,120 shapes, the float64 check, run-to-run and M = 8-vs-M = 1 identity on the 5,120-row "
           "shapes, alone with PDL interleaved with the engine's (two rounds), then the token's GEMVs and the decode step with each "
           "shape's winner (greedy tokens recorded; the split shapes' sums differ from the engine's).", "explore_gemv_v26d.py"))
explore_util.step_ab = functools.partial(explore_util.step_ab, require_equal=False)

_versus = B.versus_definition
def versus_definition(gen, N, K, epi, c):
    "explore_gemv_v26b's float64 check, then row m of an M = 8 call (v26's M > 1 path) against an M = 1 call, bit for bit."
    r = _versus(gen, N, K, epi, c)
    m = G.check_multirow_identity(N, K, epi, gen, c[0], 1, variant=26, D=c[2], minb=c[3],
                                 v13opt=(1, c[1], c[5] if len(c) > 5 else False, False))   # c[5]: E (v26e), 2 EK (v26f)
    r.update(rounds=ROUNDS(N, epi, c), multirow_bit_identical=m["multirow_bit_identical"], multirow_repeat_identical=m["repeat_bit_identical"])
    r["identical"] = r["identical"] and m["multirow_bit_identical"] and m["repeat_bit_identical"]
    return r
B.versus_definition = versus_definition

if __name__ == "__main__":
    main()
