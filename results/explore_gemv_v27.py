"""Chapter 06: v27, v26 with K split over 2 blocks (met as v18 meets its halves), on the two 5,120-row shapes (down,
out_proj), where v26 without a split read 59-64 % (gemv_v26b_h200.json). Each build is checked against the float64
definition as chapter 06's check does (its halves are not the engine's, so its sums are not either), twice run to run,
then timed alone with PDL interleaved with the engine's kernel (two rounds), then the token's GEMVs and the decode step
with each shape's winner (explore_gemv_v26b.py's machinery).
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v27.py OUT_DIR (gemv_v27_h200.json). About a minute."""
import numpy as np
import torch
import explore_gemv_v26b as B
V = B.V
from qwen_engine import gemv as G
from qwen_engine.runtime import launch

V.SHAPES = [(5120, 17408, 1), (5120, 6144, 1)]
B.SPLIT.update({(5120, 17408): 34, (5120, 6144): 12})
V.cfgs_for = lambda N, K, epi: [c + (B.SPLIT[(N, K)],) for c in [(2, 1, 2, 8), (4, 1, 2, 4), (1, 1, 2, 16), (2, 2, 2, 8), (2, 1, 2, 6)]]
V.AWK = []
V.name = lambda epi, c: f"gemv_fp8_v27<{c[0]}, {c[1]}, {epi}, {c[2]}, {c[4]}, {c[3]}>"
V.ALL = tuple(dict.fromkeys(V.name(e, c) for N, K, _ in V.SHAPES for c in V.cfgs_for(N, K, 1) for e in (0, 1)))
V.LABEL = "v27"
_scratch = {}


def run27(q, sc, x, epi, res, out, c, blocks, pdl=True):
    N, K = q.shape
    assert K == 512 * c[4] and x.shape[0] == 1 and blocks == V.sets_of(N, epi, c) // c[0], "v27: its K, one token, v14's grid"
    part = _scratch.setdefault(N, torch.zeros(2 * N, dtype=torch.float32, device="cuda"))   # one zeroed 64-bit word an output
    args = (q, sc, x, res if res is not None else x, out, np.int32(N), np.int32(K), np.int32(1), np.int32(out.shape[1]), part, part)
    launch(V.kern(epi, c), (blocks, 2), (32 * c[0],), args, pdl=pdl)
    return out


V.run24 = run27
V.RECORD = ("gemv_v27_h200", "v27 (v26 with K split over 2 blocks, the halves met by one 64-bit exchange an output) on the two 5,120-row "
            "shapes: the float64 check and run-to-run identity, alone with PDL interleaved with the engine's kernel (two rounds), then "
            "the token's GEMVs and the decode step with each shape's winner.", "explore_gemv_v27.py")

if __name__ == "__main__":
    V.main()
