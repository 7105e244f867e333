"""Chapters 06 and 09a: out_proj's weights read during GDN. Inside the PDL step a GDN layer's kernel costs 8.1 us by
removal (omit_h200.json), twice its time alone, and no GDN variant does better there (gdn_step_h200.json). While GDN
runs, its 48 blocks hold 48 SMs; out_proj's blocks, launched when GDN passes its grid wait, sit on the other 84 with
only their first ring steps (v18: 2 of a warp's 6) requested before their own wait. v20 keeps its ring in shared memory,
so a ring as deep as a warp's whole slice (D = 7: 6 steps requested before the wait, 56 KB a block) costs no
registers: out_proj's resident blocks could then fetch all their weights while GDN computes. v20 is bit-identical to
v18 (the same sums in the same order); the tokens must equal the engine's. Plans: out_proj (5120 x 6144, split 2) by v20
at D = 4, 6, 7 (EARLY) on the GDN layers only, and D = 7 on every 5120 x 6144 projection (o_proj too). The 27B-shape
synthetic step (seed 0), PDL graph, 1K and 32K context, interleaved, three times.
Usage on the H200: PYTHONPATH=. python3 results/explore_out_v20.py OUT_DIR (out_v20_h200.json). About 90 s.
(The shared loop moved into explore_util.step_plans after this record was made: the same steps, not re-run.)"""
import sys
from qwen_engine import gemv as G
from qwen_engine.step import DecodeStep
import explore_util

PLANS = {"engine (v18)": None, "v20 D4 GDN out_proj": (4, "gdn"), "v20 D6 GDN out_proj": (6, "gdn"), "v20 D7 GDN out_proj": (7, "gdn"),
         "v20 D7 every 5120x6144": (7, "all")}
engine_gemv_method = DecodeStep._gemv


def apply(step, plan):
    "Route the 5120 x 6144 projections of `plan` through v20 (others as the engine's)."
    if plan is None:
        step._gemv = engine_gemv_method.__get__(step); return
    D, where = plan
    gdn_out = {L["out"][0].data_ptr() for L in step.layers if L["kind"] == "linear_attention"}
    def g(wq, x, epi, o, res=None):
        N, K = wq[0].shape
        if (N, K, epi) == (5120, 6144, 1) and (where == "all" or wq[0].data_ptr() in gdn_out):
            G.gemv(wq[0], wq[1], x, epi, res, out=o, scratch=step.scratch[(N, K, epi)], pdl=step.pdl, S=4, RG=1,
                   variant=20, KS=2, D=D, minb=1, v13opt=(1, 2, True, False))
        else: engine_gemv_method(step, wq, x, epi, o, res)
    step._gemv = g


rec, step = explore_util.step_plans(
    sys.argv[1] if len(sys.argv) > 1 else None, "out_v20_h200",
    "The decode step (27B shape, synthetic, PDL graph) with out_proj by v20 (the ring in shared memory, as deep as a warp's slice, "
    "requested before the grid wait) on the GDN layers or everywhere: ms per token at 1K and 32K, interleaved, three times; greedy "
    "tokens equal to the engine's.", "explore_out_v20.py", PLANS, apply, reps=3, describe=lambda v: list(v) if v else None,
    extra=lambda step, rec: rec.update(smem={D: G.v20_smem(4, 1, 2, D) for D in (4, 6, 7)}))
apply(step, None)
