"""Chapter 09a: the price of each family of light kernels inside today's PDL step, by removal, in every combination.
omit_h200.json priced them at an older engine (8.0 ms a token) one at a time and all together; step_skeleton_h200.json
put the projections alone at 6.41 ms against the engine's 7.33. This run fills in the matrix between: the 27B-shape
synthetic step (seed 0), PDL graph, 1K and 32K context, with and without the residual norms (omit_norms), the GDN
kernels and the attention kernels (DecodeStep.omit), all eight combinations, interleaved, five rounds. Timing only: without a kernel, the next one reads a stale input, so
the tokens are not the engine's. (Run at 16cc882 as explore_omit_now.py writing omit_now_h200, a name chapter 05's record
already had; script and record renamed after the run.)
Usage on the H200: PYTHONPATH=. python3 results/explore_omit_all.py OUT_DIR (omit_all_h200.json). About 150 s."""
import itertools, sys
import explore_util

PLANS = {}
for norms, gdn, attn in itertools.product((False, True), repeat=3):
    gone = [n for n, x in (("norms", norms), ("gdn", gdn), ("attention", attn)) if x]
    PLANS["no " + ", ".join(gone) if gone else "engine"] = (norms, {n for n in gone if n != "norms"})


def apply(step, plan): step.omit_norms, step.omit = plan[0], set(plan[1])


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "omit_all_h200",
                        "The decode step (27B shape, synthetic, PDL graph) with and without its residual norms, GDN kernels and attention "
                        "kernels, all eight combinations: ms per token at 1K and 32K, interleaved, five rounds (timing only).",
                        "explore_omit_all.py", PLANS, apply, reps=5, tokens=False, describe=lambda p: dict(omit_norms=p[0], omit=sorted(p[1])))
