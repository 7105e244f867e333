"""Chapter 06/09a: out_proj's second run asked for before its wait, in the step. After a GDN layer (48 blocks on 48 SMs)
out_proj's blocks land on the other 84 SMs and wait there 3-4 us (step_timeline_now_h200.json) with their first run of
loads in flight (EK). EK2 asks for both ring slots before the wait: twice the bytes under way when the wait returns, no
register more. Alone, chained to itself, EK2 lost on out_proj (gemv_v26h_h200.json: 8.9 us against 8.05-8.76), but there a
block waits far less. Here: out_proj / o_proj (5,120 x 6,144, one block of 20 warps an SM, runs of 3) with EK2, bit-identical
to the engine's build on the same inputs (the same loads and sums), alone twice, then the decode step (27B shape, synthetic,
PDL graph) with greedy tokens checked, three interleaved rounds at 1K and 32K.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_ek2_step.py OUT_DIR (gemv_ek2_step_h200.json). About 1.5 min.
(The plans, the identity checks and the timings alone moved into explore_util.one_shape_plans after the record was
made: the same steps, not re-run.)"""
import explore_util
from qwen_engine import gemv as G

OUT = (5120, 6144, 1)


def kw(shape, cfg):
    k = G.engine_kwargs(*shape)
    o = k["v13opt"]
    return dict(k, v13opt=(o[0], o[1], cfg, False))                      # early: 2 EK (the engine's), 3 EK2


explore_util.one_shape_plans("gemv_ek2_step_h200",
                             "out_proj / o_proj (one block of 20 warps an SM, runs of 3) with both ring slots asked for before the grid "
                             "wait (EK2) against the engine's EK: bit-identity on the same inputs, alone (PDL, twice), and the decode step "
                             "(27B shape, synthetic, PDL graph) with greedy tokens, three interleaved rounds at 1K and 32K.",
                             "explore_gemv_ek2_step.py", OUT, "out_proj", (3,), kw, lambda c: "out_proj EK2")
