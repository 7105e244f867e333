"""Chapters 08 and 09a: the GDN variants inside the PDL step. By removal, the GDN kernels cost the step 0.39 ms a token
at 1K (8.1 us a layer; omit_h200.json), twice v7's chained time alone (3.87 us): a kernel's price in the step is not its
time alone. v7 runs one block of 512 threads (106 registers) per head: each block needs an SM to itself, so its
blocks wait for whole SMs to drain of the GEMV before it. The variants with smaller blocks (v5: clusters of 2 x 256
threads, v6: 4 x 128, v9: 2 x 256 without a cluster) lost alone; this run measures them where it matters. All are
bit-identical to v3 by construction, so the tokens must equal the engine's. The 27B-shape synthetic step (seed 0),
PDL graph, 1K and 32K context, gdn.VARIANT per plan, interleaved, three times.
Usage on the H200: PYTHONPATH=. python3 results/explore_gdn_step.py OUT_DIR (gdn_step_h200.json). About 90 s.
(The shared loop moved into explore_util.step_plans after this record was made: the same steps, not re-run.)"""
import sys
from qwen_engine import gdn
import explore_util

PLANS = {"v7 (engine)": 7, "v8": 8, "v3": 3, "v5 (cluster 2 x 256)": 5, "v6 (cluster 4 x 128)": 6, "v9 (2 x 256)": 9, "v10": 10}


def apply(step, v): step.set_gdn_log(None); gdn.VARIANT = v      # v7-family builds: the step without its log (GDN_LOG)


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "gdn_step_h200",
                        "The decode step (27B shape, synthetic, PDL graph) with each GDN variant: ms per token at 1K and 32K, interleaved, three "
                        "times; greedy tokens equal to the engine's (v7).", "explore_gdn_step.py", PLANS, apply, reps=3)
gdn.VARIANT = 7
