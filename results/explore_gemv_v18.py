"""Chapter 06, v18: the split of 2 met by one 64-bit atomic exchange per output (no fence, no counter, no cluster). v15's
cluster showed how much the split's end cost alone (gemv_v15_h200.json) but lost the PDL token; v16's lean handshake won
a little (gemv_v16_h200.json, the engine's then). This run: v18 checked like every variant (float64 definition, M = 8 rows
= M = 1, 20 repeats, bit-identical to v14 on the same inputs); v14, v16 and v18 timed alone with PDL, interleaved, twice;
the token's GEMVs with v18 on out_proj, on down, on both, with and without PDL, the plan of the time (v16) first and last.
The body is results/explore_split.py (factored out after this record was made; checked on the CPU since, not re-run).
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v18.py OUT_DIR (gemv_v18_h200.json). About 200 s."""
import sys
from qwen_engine import gemv as G
import explore_split as X


def runs(ok, O, Dn):
    r = [("engine", {}, True)]
    if ok: r += [("v18 both", {O: 18, Dn: 18}, True), ("v18 out_proj", {O: 18}, True), ("v18 down", {Dn: 18}, True),
                 ("engine no PDL", {}, False), ("v18 both no PDL", {O: 18, Dn: 18}, False), ("v18 both again", {O: 18, Dn: 18}, True)]
    return r + [("engine again", {}, True)]


X.run(18, G.V18_KERNELS, (14, 16, 18), 16, runs, "gemv_v18_h200",
      "v18 (v14 with the split of 2 met by one atomic exchange per output) checked; v14, v16 and v18 timed alone (PDL) on the "
      "two split shapes; the token's GEMVs with v18 on each split shape and both, with and without PDL.",
      "PYTHONPATH=. python3 results/explore_gemv_v18.py OUT_DIR", out=sys.argv[1] if len(sys.argv) > 1 else None)
