"""Chapter 06/09a: gate|up's configuration chosen in the chain, not alone. The timelines (step_timeline_h200.json,
timeline_gemv_h200.json) put gate|up at 86.6-87.5 % of its floor in the step and in the token of GEMVs, where alone,
chained to itself, the engine's build reads 92 %; its neighbours alone (gemv_v26b_h200.json: 4 warps a block at 4 an SM,
91.1 %; one warp a block at 16 an SM, 91.2 %) were never timed in the step. Each is the engine's v26 build with another
block shape and bound (every warp still one gate/up row pair, the same steps and sums): first bit-identical to the
engine's kernel on the same inputs (versus_engine), then the step with gate|up on each, greedy tokens equal, three
interleaved rounds at 1K and 32K.
Usage on the H200: PYTHONPATH=. python3 results/explore_gateup_chain.py OUT_DIR (gateup_chain_h200.json). About 2 min."""
import sys
import torch
import explore_util
from qwen_engine import gemv as G
from qwen_engine.step import DecodeStep

GU = (34816, 5120, 2)
CFGS = {"engine (2 warps, 8 an SM)": None, "4 warps, 4 an SM": (4, 1, 2, 4), "1 warp, 16 an SM": (1, 1, 2, 16), "4 warps, 5 an SM": (4, 1, 2, 5)}
kw = lambda c: dict(S=c[0], RG=2, variant=26, KS=1, D=c[2], v13opt=(1, c[1], 0, False), minb=c[3])
engine_gemv_method = DecodeStep._gemv


def apply(step, cfg):
    def g(wq, x, epi, o, res=None):
        N, K = wq[0].shape
        if cfg is None or (N, K, epi) != GU: return engine_gemv_method(step, wq, x, epi, o, res)
        G.gemv(wq[0], wq[1], x, epi, res, out=o, scratch=None, pdl=step.pdl, **kw(cfg))
    step._gemv = g


def identity(step, rec):
    gen = torch.Generator(device="cuda").manual_seed(5)
    rec["versus_engine"] = {}
    for label, c in CFGS.items():
        if c is None: continue
        kv = {k: v for k, v in kw(c).items() if k not in ("S", "RG")}      # versus_engine passes S and RG itself
        rec["versus_engine"][label] = [explore_util.versus_engine(gen, *GU, c[0], kv) for _ in range(2)]
        print(label, "bit-identical to the engine's:", all(v["identical"] for v in rec["versus_engine"][label]), flush=True)


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "gateup_chain_h200",
                        "The decode step (27B shape, synthetic, PDL graph) with gate|up on the engine's v26 build and on three neighbours "
                        "(other block shapes and bounds, the same sums): bit-identity with the engine's kernel, greedy tokens, ms per token at "
                        "1K and 32K, interleaved, three times.", "explore_gateup_chain.py", CFGS, apply, reps=3,
                        describe=lambda c: list(c) if c else "engine", extra=identity)
