"""Chapter 09a: the step's skeleton and the light kernels' prices in one run, on one machine. step_skeleton_h200.json
(the projections as plain streams, and the step with nothing but its projections) and omit_all_h200.json (the residual
norms, GDN and attention kernels left out in all eight combinations) came from two different H200s, and the same plan
(nothing but the projections) took 6.41 ms on one and 6.77 on the other. This run times all eleven plans interleaved on
one machine, and three more that ask why the step without its norms is slower: an empty kernel in each omitted norm's
place (pdl_spacer, which releases the kernel after it only once the kernel before it is complete), the same with
pdl_spacer_early (which releases it at once: the control), and the spacers in the chain of projections alone. The
27B-shape synthetic step (seed 0), PDL graph, 1K and 32K context, five rounds. Timing only.
Usage on the H200: PYTHONPATH=. python3 results/explore_step_matrix.py OUT_DIR (step_matrix_h200.json). About 180 s."""
import itertools, sys
import explore_util

PLANS = {}
for norms, gdn, attn in itertools.product((False, True), repeat=3):
    gone = [n for n, x in (("norms", norms), ("gdn", gdn), ("attention", attn)) if x]
    PLANS["no " + ", ".join(gone) if gone else "engine"] = (False, tuple(n for n in gone if n != "norms"), norms, None)
PLANS.update({"streams": (True, (), False, None), "streams, no gdn, attention": (True, ("gdn", "attention"), False, None),
              "streams, no norms, gdn, attention": (True, ("gdn", "attention"), True, None),
              "no norms, spacers": (False, (), True, "pdl_spacer"), "no norms, early spacers": (False, (), True, "pdl_spacer_early"),
              "no norms, gdn, attention, spacers": (False, ("gdn", "attention"), True, "pdl_spacer")})


def apply(step, plan):
    explore_util.skeleton_apply(step, plan[:3])
    step.spacers = {"norm": plan[3]} if plan[3] else {}

explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "step_matrix_h200",
                        "The decode step (27B shape, synthetic, PDL graph) with and without its residual norms, GDN kernels and attention "
                        "kernels (all eight combinations), with empty kernels in the norms' places, and with every fp8 projection a plain stream of its weight bytes (with all, "
                        "without GDN and attention, without those and the norms): ms per token at 1K and 32K, interleaved, five rounds, "
                        "one machine (timing only).",
                        "explore_step_matrix.py", PLANS, apply, reps=5, tokens=False,
                        describe=lambda p: dict(streams=p[0], omit=list(p[1]), omit_norms=p[2], norm_spacer=p[3]))
