"""Chapter 09a: an L2 side branch in the decode step. The light kernels (a GDN layer's ~4 us, an attention layer's 16+ us,
a norm's ~2 us) move few bytes while they run, and the GEMV after them cannot start its loads: GDN and attention hold
every SM (one block an SM, grid barriers). A side branch of the graph forks after the GEMV before the light kernel and
asks L2 (cp.async.bulk.prefetch.L2, kernel l2_prefetch) for the first fraction of each K slice the next GEMV's warps will
stream; the GEMV then finds those bytes in L2. This run: the 27B-shape synthetic step (seed 0), captured with PDL, timed
at 1K and 32K context for each plan (DecodeStep.l2: {where: fraction}), interleaved, twice. Each plan's first 24 greedy
tokens after a 16-token prompt must equal the engine's (a prefetch changes no value).
Usage on the H200: PYTHONPATH=. python3 results/explore_l2_prefetch.py OUT_DIR (l2_prefetch_h200.json). About 250 s.
(The shared loop moved into explore_util.step_plans after this record was made: the same steps, not re-run.)"""
import sys
import explore_util

PLANS = {"engine": {},
         "gdn_out 1/6": {"gdn_out": 1 / 6}, "gdn_out 1/3": {"gdn_out": 1 / 3}, "gdn_out 1/2": {"gdn_out": 1 / 2},
         "gdn_out 1": {"gdn_out": 1.0}, "attn_out 1": {"attn_out": 1.0},
         "gdn_out 1/3 + attn_out 1": {"gdn_out": 1 / 3, "attn_out": 1.0},
         "gdn_out 1/3 + attn_out 1, evict_last": {"gdn_out": 1 / 3, "attn_out": 1.0, "last": 1},
         "gdn_out 1/3 + attn_out 1 + mlp/inp 512 B": {"gdn_out": 1 / 3, "attn_out": 1.0, "mlp": 0.01, "inp": 0.01},
         "gdn_out 1/3 + attn_out 1, grid 32": {"gdn_out": 1 / 3, "attn_out": 1.0, "grid": 32}}


def apply(step, plan): step.l2 = dict(plan)


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "l2_prefetch_h200",
                        "The decode step (27B shape, synthetic, PDL graph) with an L2 side branch that prefetches the next GEMV's weights while "
                        "a light kernel runs: ms per token at 1K and 32K per plan, interleaved, twice; greedy tokens equal to the engine's.",
                        "explore_l2_prefetch.py", PLANS, apply, reps=2)
