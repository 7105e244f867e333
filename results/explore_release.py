"""Chapter 09a: when a kernel lets the next one launch. Every kernel of the step calls griddepcontrol.launch_dependents
(PDL's release) right after its grid wait. For a GEMV that is early: its successor launches once its last block has
started. For a one-block norm, or the GDN kernel, it is late: the kernel after them launches only when the kernel
before them is complete (an empty kernel that releases after its wait costs the step ~2 us a boundary, one that
releases before it ~0.5 us: spacer_h200.json). The builds with REL release before the wait (the successor's own wait
still orders every read: it waits for this kernel's completion, which comes after this kernel's wait). This run: the
27B-shape synthetic step (seed 0), PDL graph, 1K and 32K context, the norms' and / or GDN's REL builds, interleaved,
three times; each plan's first 24 greedy tokens must equal the engine's (the release changes no value).
Usage on the H200: PYTHONPATH=. python3 results/explore_release.py OUT_DIR (release_h200.json). About 60 s.
(The shared loop moved into explore_util.step_plans after this record was made: the same steps, not re-run.)"""
import sys
import explore_util

PLANS = {"engine": set(), "norm": {"norm"}, "gdn": {"gdn"}, "norm + gdn": {"norm", "gdn"}}


def apply(step, plan): step.release = set(plan)


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "release_h200",
                        "The decode step (27B shape, synthetic, PDL graph) with the norms' and / or GDN's builds that release their dependents "
                        "before their grid wait: ms per token at 1K and 32K per plan, interleaved, three times; greedy tokens equal.",
                        "explore_release.py", PLANS, apply, reps=3, describe=sorted)
