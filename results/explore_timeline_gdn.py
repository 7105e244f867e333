"""Chapter 08: where the step gains without the GDN state's traffic. v7's ablation build 91 (no state loads or stores;
WRONG outputs) makes the step 0.28 ms faster at 1K and 0.05 ms at 32K (gdn_ablate_step_h200.json), and the GDN launches'
own price in the timeline is about the same at both contexts: so the gain is in other launches. This runs
explore_timeline.py's timeline (QE_TIMELINE=1: every block's grid-wait reach and release, 12 tokens, 1K and 32K) with
gdn.VARIANT = V (7 or 91), record step_timeline_gdnV_h200.json; the chapter compares the two, family by family.
Usage on the H200: QE_TIMELINE=1 PYTHONPATH=. python3 results/explore_timeline_gdn.py OUT_DIR V"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
V = int(sys.argv[2])
sys.argv = [sys.argv[0], sys.argv[1], "engine", f"gdn{V}"]
from qwen_engine import gdn
gdn.VARIANT = V
import explore_timeline as T
assert T.TIMELINE, "run with QE_TIMELINE=1"
T.NAME, T.out = f"step_timeline_gdn{V}_h200", sys.argv[1]   # the module read its argv as an import, not as __main__
T.main_timeline()
