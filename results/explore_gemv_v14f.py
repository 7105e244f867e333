"""Chapter 06, v14's block sizes. gate|up's new configuration (gateup_step_h200.json) has 2-warp blocks, a shape the
sweeps had hardly tried (v14's sweep: 4- and 8-warp blocks, and 2-warp ones only with a K split inside the block). Here
every shape gets 1-, 2- and 8-warp blocks around its engine configuration, with and without the staged activation (XS);
the two split shapes through v18 (the engine's split end). Through explore_util.flag_sweep, as v14d and v14e.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v14f.py OUT_DIR (gemv_v14f_h200.json). About 60 s."""
import torch
from qwen_engine import gemv as G
import explore_util

gen = torch.Generator(device="cuda").manual_seed(0)
rec, guard, el, save = explore_util.recorder(
    "gemv_v14f_h200", "v14's block sizes: 1-, 2- and 8-warp blocks around each shape's engine configuration, with and without the staged "
    "activation (v18 on the split shapes): checked, bit-identity with the engine's kernel, timed alone with PDL interleaved with the engine's, "
    "the token's GEMVs with the winners (token: v14's sweep; token_v18: v18's).", "explore_gemv_v14f.py",
    checks=[], identity=[], versus_engine=[], timings=[], regs={})
V14F_SWEEP = {(14336, 5120, 0): ((2, 1, 2, 2, 1, 1, 1, 1), (2, 1, 2, 2, 1, 1, 1, 0), (4, 1, 2, 2, 1, 1, 1, 0), (1, 1, 2, 2, 1, 1, 1, 1),
                                  (8, 1, 2, 2, 1, 1, 1, 1)),
              (16384, 5120, 0): ((2, 1, 2, 3, 1, 1, 1, 0), (2, 1, 2, 3, 1, 1, 1, 1), (4, 1, 2, 2, 1, 1, 1, 0), (1, 1, 2, 3, 1, 1, 1, 0),
                                  (8, 1, 2, 3, 1, 1, 1, 0)),
              (34816, 5120, 2): ((1, 1, 4, 2, 1, 1, 1, 0), (2, 1, 2, 2, 1, 1, 1, 0), (2, 1, 2, 2, 1, 1, 1, 1), (2, 1, 4, 2, 1, 1, 1, 1))}
V18F_SWEEP = {(5120, 6144, 1): ((2, 1, 2, 3, 1, 1, 2, 1), (8, 1, 2, 3, 1, 1, 2, 1), (2, 1, 2, 2, 1, 1, 2, 1), (1, 1, 2, 3, 1, 1, 2, 1)),
              (5120, 17408, 1): ((2, 1, 2, 3, 1, 1, 2, 1), (8, 1, 2, 3, 1, 1, 2, 1), (2, 1, 2, 2, 1, 1, 2, 1), (1, 1, 2, 3, 1, 1, 2, 1))}
rec["sweep"] = {f"{k[0]}x{k[1]}": [list(c) for c in v] for k, v in {**V14F_SWEEP, **V18F_SWEEP}.items()}
explore_util.flag_sweep(rec, gen, rec["bandwidth_tbps"], el, save, 14, V14F_SWEEP, (0,), lambda e, c, _: G._v14_name(e, c), "-", ())
rec14 = {k: rec[k] for k in ("wins", "token")}
explore_util.flag_sweep(rec, gen, rec["bandwidth_tbps"], el, save, 18, V18F_SWEEP, (0,), lambda e, c, _: G._v18_name(e, c), "-", ())
rec["wins"], rec["token_v18"], rec["token"] = {**rec14["wins"], **rec["wins"]}, rec["token"], rec14["token"]
print(f"done {el()}; errors {len(rec['errors'])}")
save()
