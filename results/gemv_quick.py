"""The engine's GEMV launches only, re-verified after a change of machine code (PDL waits, IEEE subnormals) and timed as
one token with programmatic dependent launches off and on; since gate|up's v26 (whose M > 1 calls run v14's 8-token build),
also each model shape's rows of an M = 8 call against M = 1 calls on the same rows, bit for bit, and 20 repeats. (The head checked is the engine's since the head v4; the
record gemv_engine_h200.json predates that and checked v2<8>.) Usage on the H200: PYTHONPATH=. python3 results/gemv_quick.py OUT_DIR"""
import sys, time, torch
import explore_util
from qwen_engine import gemv as G
from qwen_engine.gemv import (MODEL_SHAPES, AWKWARD, engine_kwargs, check_gemv, check_ok, check_lm_head, token_graph, bandwidth_now)
from qwen_engine.runtime import write_record

out = sys.argv[1] if len(sys.argv) > 1 else None
gen = torch.Generator(device="cuda").manual_seed(0)


def run_checks(record: bool):
    res = []
    for N, K, epi, *_ in MODEL_SHAPES + [(*a, "awkward") for a in AWKWARD]:
        kw = engine_kwargs(N, K, epi)
        S, RG = kw.pop("S"), kw.pop("RG")
        for M in (1, 5):
            c = check_gemv(N, K, epi, M, gen, S, RG, **kw)
            c["ok"] = check_ok(c)
            res.append(c)
            if record: print(c)
    return res


# Every kernel the checks launch (plain projections and M = 5 builds included) and the engine's, in one NVRTC pass: its
# run of 2026-11-29 compiled the builds outside ENGINE_KERNELS one at a time and ran out of its 110 s after 4 checks.
names = explore_util.launched_names(lambda: run_checks(False)) + G.ENGINE_KERNELS
t0 = time.time(); G.get_kernel("gemv", names[0], together=names); print(f"compiled {len(names)} kernels in one pass: {time.time() - t0:.0f} s", flush=True)
checks = run_checks(True)
multirow = []
for N, K, epi, _ in MODEL_SHAPES:                        # the plan's M = 8 call, row by row, against its M = 1 calls
    kw = engine_kwargs(N, K, epi)
    r = G.check_multirow_identity(N, K, epi, gen, kw.pop("S"), kw.pop("RG"), **kw)
    r.pop("v13opt", None); multirow.append(r); print("multirow", r, flush=True)
lmh = check_lm_head(gen, S=G.ENGINE_CHOICE["lm_head"]); print("lm_head (the engine's):", lmh)   # v2<8> or v3 / v4 by its tuple
bw = bandwidth_now()
tok = {("pdl" if p else "plain"): token_graph(None, gen, bw, pdl=p) for p in (False, True)}
for k, t in tok.items(): print(f"engine plan, all GEMVs of one token, {k}: {t['ms']:.3f} ms, floor {t['floor_ms']:.3f} ms, ratio {t['ratio']:.3f}")
print(f"checks ok: {sum(c['ok'] for c in checks)}/{len(checks)}; multirow identical {sum(r['multirow_bit_identical'] and r['repeat_bit_identical'] for r in multirow)}/{len(multirow)}; bandwidth {bw:.3f} TB/s")
write_record("gemv_engine_h200", "The engine's GEMV launches (engine_kwargs: ENGINE_CHOICE, ENGINE_V14, ENGINE_MINB) re-verified against the float64 definition at the "
             "model and awkward shapes (M = 1 and 5, outputs poisoned), each model shape's M = 8 rows against M = 1 calls (bit for bit) "
             "and 20 repeats, the lm_head check, and all GEMVs of one token in one graph with programmatic dependent launches off and on.",
             "PYTHONPATH=. python3 results/gemv_quick.py OUT_DIR",
             dict(bandwidth_tbps=bw, checks=checks, multirow=multirow, lm_head_check=lmh, token=tok), out_dir=out)
