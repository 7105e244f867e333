"""Chapter 08's z split, in the step's timeline: where the 'two launches' plan (qkv GEMV, the z rows' GEMV, v7) and the
z split's best build (qkv GEMV, GDN 100, v33 trg0) spend the time the engine's qkv|z GEMV and v7 do not. Runs
explore_timeline.py's timeline build (QE_TIMELINE=1: every block's grid-wait reach and release and its end, 12 tokens)
at 1K context for PLAN = engine | two | 100trg0, record step_timeline_zsplit_PLAN_h200.json; every block of launches
196..221 (layers 28-30: an attention layer's end, then GDN layers) is kept.
Usage on the H200: QE_TIMELINE=1 PYTHONPATH=. python3 results/explore_timeline_zsplit.py OUT_DIR PLAN"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
P = sys.argv[2]
sys.argv = [sys.argv[0], sys.argv[1], "engine", f"zsplit_{P}"]
import explore_timeline as T
import explore_gdn_zsplit as Z
from qwen_engine import step as S
assert T.TIMELINE, "run with QE_TIMELINE=1"
assert P in ("engine", "two", "100trg0"), P


class Step(S.DecodeStep):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        if P == "two": self.zsplit, self._gdn_zsplit = (7, False), Z.two_launches.__get__(self)
        elif P == "100trg0": self.zsplit = (100, True)


S.DecodeStep = Step
T.NAME, T.out, T.CTXS, T.BLOCKS_OF = f"step_timeline_zsplit_{P}_h200", sys.argv[1], (1024,), range(196, 222)
T.main_timeline()
# explore_timeline's recorder names its own script; the record says how it was really made
import json
from pathlib import Path
rp = Path(T.out) / f"{T.NAME}.json"
r = json.loads(rp.read_text())
r["command"] = f"QE_TIMELINE=1 PYTHONPATH=. python3 results/explore_timeline_zsplit.py OUT_DIR {P}"
rp.write_text(json.dumps(r, indent=1) + "\n")
