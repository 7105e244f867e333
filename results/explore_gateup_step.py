"""Chapters 06 and 09a: gate|up with 4 row pairs a warp, in the step. gemv_v14d_h200.json: v14 at (4 warps, 4 pairs,
2 steps, no staged activation) beat the engine's gate|up (2 pairs, staged activation) in both repeats and the token of
GEMVs (7.104 ms against 7.214 / 7.199); gemv_v14e_h200.json, the same build and a 2-warp one, in both repeats again but by
less than the engine's margin (44.43 / 44.45 and 44.17 / 44.11 us against 44.52 / 44.98). Bit-identical to the engine's
(the same sums in the same order), so the tokens must equal the engine's. Decided here in the step and the token: the
27B-shape synthetic step (seed 0), PDL graph, 1K and 32K, plans interleaved, three times; then one token's GEMVs per
plan (PDL graph), interleaved, twice.
Usage on the H200: PYTHONPATH=. python3 results/explore_gateup_step.py OUT_DIR (gateup_step_h200.json). About 120 s."""
import sys
from qwen_engine import gemv as G
from qwen_engine.step import DecodeStep
import explore_util

GU = (34816, 5120, 2)
PLANS = {"engine": None, "gate|up (4, 1, 4, 2, XS 0)": (4, 1, 4, 2, 1, 1, 1, 0), "gate|up (2, 1, 4, 2, XS 0)": (2, 1, 4, 2, 1, 1, 1, 0)}
engine_gemv_method = DecodeStep._gemv


def kwargs(cfg):
    SR, SK, RP, D, E, MB, KS, XS = cfg
    return dict(S=SR, RG=2, variant=14, KS=KS, D=D, minb=MB, v13opt=(SK, RP, bool(E), bool(XS)))


def apply(step, plan):
    "Route gate|up through v14 at `plan` (others as the engine's)."
    if plan is None:
        step._gemv = engine_gemv_method.__get__(step); return
    def g(wq, x, epi, o, res=None):
        N, K = wq[0].shape
        if (N, K, epi) == GU: G.gemv(wq[0], wq[1], x, epi, res, out=o, scratch=None, pdl=step.pdl, **kwargs(plan))
        else: engine_gemv_method(step, wq, x, epi, o, res)
    step._gemv = g


out = sys.argv[1] if len(sys.argv) > 1 else None
rec, step = explore_util.step_plans(
    out, "gateup_step_h200",
    "The decode step (27B shape, synthetic, PDL graph) with gate|up by v14 at 4 row pairs a warp (4 or 2 warps, no staged activation): ms "
    "per token at 1K and 32K, interleaved, three times, greedy tokens equal to the engine's; then one token's GEMVs per plan, twice.",
    "explore_gateup_step.py", PLANS, apply, reps=3, describe=lambda v: list(v) if v else None)
apply(step, None)
del step
import torch
torch.cuda.empty_cache()
gen = torch.Generator(device="cuda").manual_seed(0)
rec["token"] = []
for rep in range(2):
    for label, cfg in PLANS.items():
        ch = {k: G.engine_choice(*k) for N, K, epi, _ in G.MODEL_SHAPES for k in [(N, K, epi)]}
        ch["lm_head"] = G.ENGINE_CHOICE["lm_head"]
        if cfg: ch[GU] = (14, cfg[0], 2, cfg[6], 4, cfg[3], 8, kwargs(cfg)["v13opt"])
        t = explore_util.guard(rec, f"token {label}", lambda: G.token_graph(ch, gen, rec["bandwidth_tbps"], pdl=True))
        if t: rec["token"].append(dict(plan=label, rep=rep, ms=t["ms"], ratio=t["ratio"])); print(f"token rep {rep} {label}: {t['ms']:.3f} ms", flush=True)
from qwen_engine.runtime import write_record
write_record("gateup_step_h200", "The decode step (27B shape, synthetic, PDL graph) with gate|up by v14 at 4 row pairs a warp (4 or 2 warps, no "
             "staged activation): ms per token at 1K and 32K, interleaved, three times, greedy tokens equal to the engine's; then one token's "
             "GEMVs per plan, twice.", "PYTHONPATH=. python3 results/explore_gateup_step.py OUT_DIR", rec, out_dir=out)
print(f"done; errors {len(rec['errors'])}")
