"""Chapter 08: what each part of the engine's GDN kernel (v7) costs, by ablation. By removal the GDN kernels cost the step
8.1 us a layer at 1K (omit_h200.json), twice v7's chained time alone (3.87 us), and the timeline prices a GDN launch at
4.3-4.5 us (step_timeline_now_h200.json). Which part of the kernel is that price? Three timing-only builds of v7 (WRONG
outputs; every other operation v7's, kernels/gdn.cu's NOBA and NOST), gdn.VARIANT 90-92:
  90: no b and a (no w_b, w_a or x loads, no dot products: 0.52 us of v7's probed chain after the wait);
  91: no state traffic (no 64 KiB loads and stores a block: a made-up state in registers);
  92: neither.
1. Each alone, in a graph of 48 launches over 48 layers: plain, and chained (each launch a programmatic dependent of
   the one before, the chapter's measure), v7 beside them, interleaved three times.
2. The 27B-shape decode step (PDL graph, synthetic, seed 0) with v7, 90, 91, 92 and without the GDN launches
   (DecodeStep.omit): ms a token at 1K and 32K, interleaved five times (timing only: the tokens are not the engine's).
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_gdn_ablate.py OUT_DIR   (about 3 min)
(The rounds alone moved into explore_util.alone_rounds after its record was made: the same steps, not re-run.)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_util
import explore_gdn_v3 as E
from qwen_engine import gdn

BUILDS = {"v7": 7, "no b/a (90)": 90, "no state traffic (91)": 91, "neither (92)": 92}
SCRIPT = "explore_gdn_ablate.py"


def alone(out):
    rec, guard, el, save = explore_util.recorder(
        "gdn_ablate_h200", "v7 and its timing-only ablation builds (90: no b/a; 91: no state loads or stores; 92: neither) alone: us a "
        "launch in a graph of 48 launches over 48 layers, plain and chained with PDL, interleaved three times", SCRIPT, out=out,
        builds=BUILDS, times=[])
    explore_util.alone_rounds(rec, guard, el, BUILDS, E.time_one)
    save()
    print("\nbuild | plain us | chained (PDL) us")
    for label in BUILDS:
        ts = lambda pdl: " / ".join(f"{t['us']:.2f}" for t in rec["times"] if t["build"] == label and t["pdl"] == pdl)
        print(f"{label} | {ts(False)} | {ts(True)}")


def step(out):
    plans = {**{k: (v, ()) for k, v in BUILDS.items()}, "no GDN launch": (7, ("gdn",))}

    def apply(st, plan):
        st.set_gdn_log(None); gdn.VARIANT, st.omit = plan[0], set(plan[1])   # v7-family builds: the step without its log
    explore_util.step_plans(out, "gdn_ablate_step_h200",
                            "The decode step (27B shape, synthetic, PDL graph) with GDN v7, its ablation builds 90 (no b/a), 91 (no state "
                            "traffic), 92 (neither), and without the GDN launches: ms per token at 1K and 32K, interleaved five times "
                            "(timing only).", SCRIPT, plans, apply, reps=5, tokens=False,
                            describe=lambda p: dict(variant=p[0], omit=list(p[1])))
    gdn.VARIANT = 7


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else None
    alone(out)
    step(out)
