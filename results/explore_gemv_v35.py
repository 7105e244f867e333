"""Chapter 06: v35, the residual read after the grid wait instead of in the epilogue (RE). down and out_proj add their
residual row after their last sums: one more memory round trip per warp at the very end, where the grid's tail is (the
residual was written two or more launches earlier: by the time the GEMV starts, ~0.1 GB of weights have streamed through
the 60 MB L2 since, so the read goes to DRAM). v35 asks for it right after the wait, before the loop; the epilogue adds the
same value as before. ptxas schedules the load above the wait (the SASS audit, tests/test_gemv.py), which the step allows:
every kernel between releases its dependents only after its own wait, so the residual's writer has completed.
Checks: v35 against the engine's build on the same inputs (down and out_proj, twice each, bit for bit), then each alone
(PDL, graph, weights rotated past L2; the residual stays in L2 there, so alone it is not expected to gain), three rounds.
Plans in the step: the engine; RE on down and out_proj / o_proj; down only; out_proj / o_proj only. Greedy tokens must be
the engine's; then six interleaved rounds at 1K and 32K.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v35.py OUT_DIR (gemv_v35_h200.json). About 4 minutes."""
import sys
import explore_util

DOWN, OUT = (5120, 17408, 1), (5120, 6144, 1)
PLANS = {"engine": frozenset(), "re both": frozenset({DOWN, OUT}), "re down": frozenset({DOWN}), "re out_proj": frozenset({OUT})}


def apply(step, plan):
    from qwen_engine import gemv as G
    G.ENGINE_RE = frozenset(plan)


def alone(step, rec):
    from qwen_engine import gemv as G
    names = ("gemv_fp8_v35<20, 1, 1, 2, 34, 1, true, true, 2>", "gemv_fp8_v35<20, 1, 1, 3, 12, 1, true, true, 0>")
    G.get_kernel("gemv", names[0], together=names)                      # one compile for both builds
    builds = {}
    for label, shape in (("v35 down", DOWN), ("v35 out_proj", OUT)):
        kw = dict(G.engine_kwargs(*shape), v26x={"re": True})
        builds[label] = (shape, kw)
    explore_util.identity_and_alone(rec, builds, {DOWN: "down", OUT: "out_proj"}, reps=3)
    bad = [k for k, v in rec["versus_engine"].items() if not all(x["identical"] for x in v)]
    if bad: rec["errors"].append(f"v35 differs from the engine's build: {bad}")


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "gemv_v35_h200",
                        "v35 (down's and out_proj's residual read after the grid wait, before the loop, instead of in the epilogue): "
                        "bit-identity to the engine's builds, each alone beside the engine's (PDL, three rounds), then the decode step "
                        "(27B shape, synthetic, PDL graph) with RE on both, down only, out_proj only, against the engine: greedy tokens, "
                        "then ms per token at 1K and 32K, interleaved, six times.",
                        "explore_gemv_v35.py", PLANS, apply, reps=6, describe=lambda p: sorted(map(list, p)), extra=alone)
