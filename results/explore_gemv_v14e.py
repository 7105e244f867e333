"""Chapter 06, around v14d's winner. gemv_v14d_h200.json: gate|up with 4 row pairs a warp and no staged activation
(4, 1, 4, 2, XS 0) beat the engine's (4, 1, 2, 2, XS 1) in both repeats (44.29 / 44.30 us against 44.84 / 45.18) and the
token of GEMVs (7.104 ms against 7.214 / 7.199), bit-identical. Here: its neighbours on gate|up (2 and 8 warps, a 3-step
ring, at most 128 registers), and on the two split shapes v18 without the staged activation and with 4 pairs (v14b's
4-pair runs there were v14's global split, not v18's exchange). Through explore_util.flag_sweep, as v14d.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v14e.py OUT_DIR (gemv_v14e_h200.json). About 60 s."""
import torch
from qwen_engine import gemv as G
import explore_util

gen = torch.Generator(device="cuda").manual_seed(0)
rec, guard, el, save = explore_util.recorder(
    "gemv_v14e_h200", "Around v14d's gate|up winner (v14, 4 row pairs, no staged activation): its neighbours on gate|up, and v18 without the "
    "staged activation or with 4 pairs on the split shapes: checked, bit-identity with the engine's kernel, timed alone with PDL interleaved with "
    "the engine's, the token's GEMVs with the winners (token: v14's sweep; token_v18: v18's).", "explore_gemv_v14e.py",
    checks=[], identity=[], versus_engine=[], timings=[], regs={})
V14E_SWEEP = {(34816, 5120, 2): ((4, 1, 4, 2, 1, 1, 1, 0), (2, 1, 4, 2, 1, 1, 1, 0), (8, 1, 4, 2, 1, 1, 1, 0), (4, 1, 4, 3, 1, 1, 1, 0),
                                  (4, 1, 4, 2, 1, 4, 1, 0))}
V18E_SWEEP = {(5120, 6144, 1): ((4, 1, 2, 3, 1, 1, 2, 0), (4, 1, 4, 2, 1, 1, 2, 0), (4, 1, 4, 2, 1, 1, 2, 1)),
              (5120, 17408, 1): ((4, 1, 2, 3, 1, 1, 2, 0), (4, 1, 4, 2, 1, 1, 2, 0), (4, 1, 4, 2, 1, 1, 2, 1))}
rec["sweep"] = {f"{k[0]}x{k[1]}": [list(c) for c in v] for k, v in {**V14E_SWEEP, **V18E_SWEEP}.items()}
explore_util.flag_sweep(rec, gen, rec["bandwidth_tbps"], el, save, 14, V14E_SWEEP, (0,), lambda e, c, _: G._v14_name(e, c), "-", ())
rec14 = {k: rec[k] for k in ("wins", "token")}
explore_util.flag_sweep(rec, gen, rec["bandwidth_tbps"], el, save, 18, V18E_SWEEP, (0,), lambda e, c, _: G._v18_name(e, c), "-", ())
rec["wins"], rec["token_v18"], rec["token"] = {**rec14["wins"], **rec["wins"]}, rec["token"], rec14["token"]
print(f"done {el()}; errors {len(rec['errors'])}")
save()
