"""Chapter 06: the engine's kernels at more blocks an SM. nvcc -Xptxas -v on the engine's builds: gate|up's v14 (2 warps,
4 row pairs, 2 steps) uses 146 registers, so 6 blocks an SM (2,176 blocks in 2.75 waves); under a bound of 8 blocks
(MINB 8) it fits 128 registers without spilling (2.06 waves). q|gate|k|v's v14 uses 72 (7 blocks an SM, 896 blocks in
0.97 waves); at MINB 8, 64 without spilling. And v23 (the branch-free ring) on gate|up was measured only unheld (its
sweep held it to the count of gate|up's configuration of the time): here at 6 and 5 blocks an SM (no spill either).
Through explore_util.flag_sweep (float64 check, M = 8 rows = M = 1, bit-identity with the engine's kernel, timed alone
with PDL interleaved with the engine's, twice, the token's GEMVs with the winners), v14 first, then v23; if any
configuration won, the decode step with the winners, interleaved, three times.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_occupancy.py OUT_DIR (gemv_occupancy_h200.json). About 90 s."""
import torch
from qwen_engine import gemv as G
import explore_util

V14G = {(34816, 5120, 2): ((2, 1, 4, 2, 1, 8, 1, 0),), (14336, 5120, 0): ((4, 1, 2, 2, 1, 8, 1, 1),)}
V23C = {(34816, 5120, 2): ((2, 1, 4, 2, 1, 6, 1, 0), (2, 1, 4, 2, 1, 5, 1, 0))}

gen = torch.Generator(device="cuda").manual_seed(0)
rec, guard, el, save = explore_util.recorder(
    "gemv_occupancy_h200", "The engine's kernels at more blocks an SM (v14 under MINB 8 on gate|up and q|gate|k|v) and v23 on gate|up held to "
    "6 and 5 blocks an SM: checked, bit-identity with the engine's kernel, timed alone with PDL interleaved with the engine's, the token's "
    "GEMVs with the winners (token: v14's; token_v23: v23's), and the decode step with all winners.", "explore_gemv_occupancy.py",
    checks=[], identity=[], versus_engine=[], timings=[], regs={}, step=[], step_tokens={})
rec["sweep"] = {"v14": {f"{k[0]}x{k[1]}": [list(c) for c in v] for k, v in V14G.items()}, "v23": {f"{k[0]}x{k[1]}": [list(c) for c in v] for k, v in V23C.items()}}
explore_util.flag_sweep(rec, gen, rec["bandwidth_tbps"], el, save, 14, V14G, (0,), lambda e, c, _: G._v14_name(e, c), "-", ())
wins = {tuple(int(v) for v in k.split("x")): (14, tuple(w["cfg"])) for k, w in rec["wins"].items()}
w14, t14 = rec["wins"], rec["token"]
explore_util.flag_sweep(rec, gen, rec["bandwidth_tbps"], el, save, 23, V23C, (0,), lambda e, c, _: G._v23_name(e, c), "-", ())
for k, w in rec["wins"].items():
    key = tuple(int(v) for v in k.split("x"))
    if key not in wins: wins[key] = (23, tuple(w["cfg"]))     # (a shape both won: v14's, measured first; the record keeps both)
rec["wins_v23"], rec["token_v23"], rec["wins"], rec["token"] = rec["wins"], rec["token"], w14, t14
save()
if wins: explore_util.step_ab(rec, guard, el, save, explore_util.route_winners(wins), "occupancy winners", token_key="occupancy")
print(f"done {el()}; errors {len(rec['errors'])}")
save()
