"""Chapter 09a: what each family of light kernels costs inside the PDL step, by removal. A profile without PDL gives
each kernel's own time (decode_h200.json families_1k); with PDL, kernels overlap, and a kernel's price is what the step
loses by having it. This run: the 27B-shape synthetic step (seed 0), PDL graph, 1K and 32K context, with all its
kernels and without the residual norms (omit_norms), the GDN kernels, the attention kernels (DecodeStep.omit), or all
three (what is left: the GEMVs, the head and the step's two ends); interleaved, three times. Timing only: without a
kernel, the next one reads a stale input, so the tokens are not the engine's.
Usage on the H200: PYTHONPATH=. python3 results/explore_omit.py OUT_DIR (omit_h200.json). About 60 s.
(The shared loop moved into explore_util.step_plans after this record was made: the same steps, not re-run.)"""
import sys
import explore_util

PLANS = {"engine": (False, set()), "no norms": (True, set()), "no gdn": (False, {"gdn"}), "no attention": (False, {"attention"}),
         "no norms, gdn, attention": (True, {"gdn", "attention"})}


def apply(step, plan): step.omit_norms, step.omit = plan[0], set(plan[1])


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "omit_h200",
                        "The decode step (27B shape, synthetic, PDL graph) with and without its norms, GDN kernels, attention kernels or all "
                        "three: ms per token at 1K and 32K, interleaved, three times (timing only).",
                        "explore_omit.py", PLANS, apply, reps=3, tokens=False, describe=lambda p: dict(omit_norms=p[0], omit=sorted(p[1])))
