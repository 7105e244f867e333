"""Chapter 09a: what a kernel boundary costs inside the PDL step. Omitting the 129 residual norms made the PDL step
slower (decode_h200.json norm_cost: 8.33 vs 8.04 ms), as if a GEMV that follows a GEMV started worse than one that
follows a one-block kernel. A norm releases the GEMV after it only once the GEMV before is complete; a GEMV releases
its successor as soon as its last block starts. This run puts an empty kernel (pdl_spacer: wait, then release) between
gate|up and down ("mlp"), between the input GEMV and GDN ("gdn") or attention ("attn"), and the control pdl_spacer_early
(release, then wait: the next kernel launches as early as without it). The 27B-shape synthetic step (seed 0), PDL graph,
1K and 32K context per plan, interleaved, twice; each plan's first 24 greedy tokens must equal the engine's.
Usage on the H200: PYTHONPATH=. python3 results/explore_spacer.py OUT_DIR (spacer_h200.json). About 60 s.
(The shared loop moved into explore_util.step_plans after this record was made: the same steps, not re-run.)"""
import sys
import explore_util

S, E = "pdl_spacer", "pdl_spacer_early"
PLANS = {"engine": {}, "mlp": {"mlp": S}, "mlp early (control)": {"mlp": E}, "gdn": {"gdn": S}, "attn": {"attn": S},
         "mlp + gdn + attn": {"mlp": S, "gdn": S, "attn": S}, "mlp + gdn + attn early (control)": {"mlp": E, "gdn": E, "attn": E}}


def apply(step, plan): step.spacers = dict(plan)


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "spacer_h200",
                        "The decode step (27B shape, synthetic, PDL graph) with empty kernels between chosen kernels (released after or before "
                        "their wait): ms per token at 1K and 32K per plan, interleaved, twice; greedy tokens equal.",
                        "explore_spacer.py", PLANS, apply, reps=2)
