"""Chapter 09a: the residual norm released after its stores (LATE). The step's timeline (results/explore_timeline.py,
step_timeline_h200.json) prices the norm after the down projection at ~4 us in the chain and the one after out_proj at
~2 us: the first is followed by a GEMV that asks for its first weights before its grid wait (EK: q|k|v|z, q|gate|k|v), and
that GEMV's blocks become resident, and send their requests, while the norm's own loads and stores are still on their way.
LATE releases the next kernel only after the norm's stores: its blocks then arrive after the norm's traffic. Plans: the
engine; every residual norm LATE (norm_late); the input norms only (ln1_late: the ones before an EK GEMV). Greedy tokens
must be the engine's (the arithmetic is the same); then three interleaved rounds at 1K and 32K.
Usage on the H200: PYTHONPATH=. python3 results/explore_norm_late.py OUT_DIR (norm_late_h200.json). About 90 s."""
import sys
import explore_util

PLANS = {"engine": set(), "norm_late": {"norm_late"}, "ln1_late": {"ln1_late"}}


def apply(step, plan): step.release = set(plan)


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "norm_late_h200",
                        "The decode step (27B shape, synthetic, PDL graph) with its residual norms released after their stores (all, or the "
                        "input norms only) against the engine's (released after their wait): greedy tokens, then ms per token at 1K and 32K, "
                        "interleaved, three times.", "explore_norm_late.py", PLANS, apply, reps=3, describe=sorted)
