"""Chapter 09a: how close to the floor can this step's structure get if every GEMV streamed its weights like a plain
stream? The decode step (27B shape, synthetic, PDL graph) with every fp8 projection launch replaced by a plain stream of
that projection's weight bytes (gemv_stream_probe_v2<8, true>: two blocks of 512 threads an SM, its first loads asked for
before the grid wait as the engine's EK builds ask; chapter 06's boundary probe put such a stream at 95-99 % of the
bandwidth in a chain of its own kind), the norms, GDN, attention and the head as the engine runs them: timing only (the
streams write nothing, so what follows them reads stale inputs). Plans, interleaved, five rounds, 1K and 32K:
  engine                      the engine's step
  streams                     every projection a plain stream of its bytes
  streams, no GDN/attention   and the GDN and attention launches left out (DecodeStep.omit)
  streams only                and the residual norms too (omit_norms): one stream a projection, the head, the step's ends
  engine, no GDN/attention/norms   the engine's projections with the same three families left out
Usage on the H200: PYTHONPATH=. python3 results/explore_step_skeleton.py OUT_DIR (step_skeleton_h200.json). About 90 s."""
import sys
import explore_util

PLANS = {"engine": (False, (), False), "streams": (True, (), False), "streams, no GDN/attention": (True, ("gdn", "attention"), False),
         "streams only": (True, ("gdn", "attention"), True), "engine, no GDN/attention/norms": (False, ("gdn", "attention"), True)}

explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "step_skeleton_h200",
                        "The decode step (27B shape, synthetic, PDL graph) with every fp8 projection replaced by a plain stream of its "
                        "weight bytes (its first loads before the grid wait), with and without the GDN, attention and norm launches, "
                        "beside the engine: ms per token and fraction of the floor at 1K and 32K, interleaved, five rounds (timing only).",
                        "explore_step_skeleton.py", PLANS, explore_util.skeleton_apply, reps=5, tokens=False,
                        describe=lambda p: dict(streams=p[0], omit=list(p[1]), omit_norms=p[2]))
