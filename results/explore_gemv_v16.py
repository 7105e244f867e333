"""Chapter 06, v15 and v16 in the whole token. v15 (the K split reduced in a thread-block cluster) beat the engine's v14 on
both split shapes alone (gemv_v15_h200.json: out_proj 10.11 vs 11.56 us, down 23.84 vs 24.65) but the token's GEMVs
were slower with it (7.465 vs 7.182 ms). This run: v16 (v14 with a lean handshake for the same split through global
memory, no cluster) checked like every variant; v14, v15 and v16 timed alone with PDL in the same run; and the token's
GEMVs with each split shape's kernel swapped separately (out_proj only, down only, both), with and without PDL, the
plan of the time (v14) first and last (the spread). The body is results/explore_split.py (factored out after this
record was made, with v18's; checked on the CPU since, not re-run).
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v16.py OUT_DIR (gemv_v16_h200.json). About 200 s."""
import sys
from qwen_engine import gemv as G
import explore_split as X


def runs(ok, O, Dn):
    r = [("engine", {}, True), ("v15 both", {O: 15, Dn: 15}, True), ("v15 out_proj", {O: 15}, True), ("v15 down", {Dn: 15}, True)]
    if ok: r += [("v16 both", {O: 16, Dn: 16}, True), ("v16 out_proj", {O: 16}, True)]
    return r + [("engine no PDL", {}, False), ("v15 both no PDL", {O: 15, Dn: 15}, False), ("engine again", {}, True)]


X.run(16, G.V16_KERNELS + tuple(G._v15_name(e, X.CFG) for e in (1, 0)), (14, 15, 16), 14, runs, "gemv_v16_h200",
      "v16 (v14 with a lean split handshake) checked; v14, v15 and v16 timed alone (PDL) on the two split shapes; "
      "the token's GEMVs with each split shape's kernel swapped separately, with and without PDL.",
      "PYTHONPATH=. python3 results/explore_gemv_v16.py OUT_DIR", out=sys.argv[1] if len(sys.argv) > 1 else None)
