# Check (chapter 08): every GDN variant through gdn.gdn_decode, against v3, on the H200: a regression check of the whole
# family after a change to the launcher (gdn._build), not a measurement.
#   PYTHONPATH=. python3 results/explore_gdn_all.py OUT_DIR          (from the repo root; ~3 min, mostly NVRTC compiles)
# explore_gdn_v7.identity (out poisoned, conv ring and state compared after each call, M = 1..8 cycling, fp32 and bf16
# state) over 16 calls for each variant but v1/v2 (their own bench) and v3 (the reference), plain and, for v3 and later,
# as a programmatic dependent launch; the probe builds of v3 and later (M = 1) against v1 over 8 calls.
# Writes OUT_DIR/gdn_all_h200.json; prints a short table last.
import os, sys, time
import torch
from qwen_engine import gdn as G
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_gdn_v10 as X
V7, E = X.V7, X.E
T0, OUT = time.time(), (sys.argv[1] if len(sys.argv) > 1 else None)
VARIANTS = [v for v in sorted(G._SHAPES) if v not in (1, 2, 3)]

if __name__ == "__main__":
    if not torch.cuda.is_available(): sys.exit("explore_gdn_all.py: needs a GPU")
    torch.cuda.init()
    cands = {}
    for v in VARIANTS: cands.update({f"v{v}": dict(variant=v), **({f"v{v}+pdl": dict(variant=v, pdl=True)} if E.HAS_PDL else {})})
    data = dict(variants=VARIANTS)
    data["identity"] = E.safe("identity", lambda: V7.identity(T=16, CANDS=cands))
    data["probe_identity"] = E.safe("probe identity", lambda: E.probe_identity(T=8, variants=tuple(v for v in VARIANTS if v != 9)))
    data["passed"] = [n for n in cands if E.passed(data["identity"], n)]
    data["failures"], data["wall_s"] = E.failures, time.time() - T0
    if OUT: E.safe("record", lambda: E.write_record("gdn_all_h200", "Every GDN variant against v3 through gdn.gdn_decode (16 calls, plain and PDL; "
                                                    "probe builds against v1, 8 calls): a regression check of the launcher.",
                                                    "PYTHONPATH=. python3 results/explore_gdn_all.py " + OUT, data, out_dir=OUT))
    bad = [n for n in cands if n not in data["passed"]]
    pbad = [k for k, r in (data["probe_identity"] or {}).items() if r["identical"] != r["calls"]]
    print(f"SUMMARY: {len(data['passed'])} of {len(cands)} builds identical to v3; not: {bad}; probe builds not identical: {pbad}; "
          f"failures: {E.failures} ({time.time() - T0:.0f} s)")
