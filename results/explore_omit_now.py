"""Chapter 05 / 09a: does the step still pay for its 129 residual norms? The current engine (down and out_proj in one
block an SM, the EK builds) with and without them (DecodeStep.omit_norms, timing only: without a norm the projection
after it reads a stale input), interleaved, five rounds, 1K and 32K context, one machine. The earlier answers were
on older engines (omit_h200.json: without the norms 0.27 ms slower) or across two machines (step_timeline_no_norms_h200.json).
Usage on the H200: PYTHONPATH=. python3 results/explore_omit_now.py OUT_DIR (omit_now_h200.json). About 60 s."""
import sys
import explore_util

PLANS = {"engine": False, "no norms": True}


def apply(step, plan): step.omit_norms, step.omit = plan, set()


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "omit_now_h200",
                        "The decode step (27B shape, synthetic, PDL graph) with and without its 129 residual norms: ms per token at 1K "
                        "and 32K, interleaved, five times (timing only).",
                        "explore_omit_now.py", PLANS, apply, reps=5, tokens=False, describe=lambda p: dict(omit_norms=p))
