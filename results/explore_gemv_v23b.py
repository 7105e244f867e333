"""Chapter 06, v23b: v23 (the branch-free ring) around each shape's configuration. v23 won qkv|z and down held to v14's
blocks an SM at v14's configurations (gemv_v23_h200.json); without branches the best ring depth, rows a warp and
occupancy may be elsewhere. G.V23B_SWEEP per shape, through explore_util.flag_sweep against the engine's kernel (v23
on qkv|z and down since then): the float64 check, M = 8 rows = M = 1, bit-identity with the engine's kernel, timed alone
with PDL interleaved with the engine's, twice, the token's GEMVs with the winners; then, if any configuration won, the
decode step with the winners, interleaved, three times.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v23b.py OUT_DIR (gemv_v23b_h200.json). About 150 s."""
import torch
from qwen_engine import gemv as G
import explore_util

gen = torch.Generator(device="cuda").manual_seed(0)
rec, guard, el, save = explore_util.recorder(
    "gemv_v23b_h200", "v23 configurations around each shape's (V23B_SWEEP) checked, bit-identity with the engine's kernel, timed alone "
    "with PDL interleaved with the engine's, the token's GEMVs with the winners, and the decode step with them.", "explore_gemv_v23b.py",
    checks=[], identity=[], versus_engine=[], timings=[], regs={}, step=[], step_tokens={})
explore_util.flag_sweep(rec, gen, rec["bandwidth_tbps"], el, save, 23, G.V23B_SWEEP, (0,), lambda e, c, _: G._v23_name(e, c), "-", ())
wins = {tuple(int(v) for v in k.split("x")): (23, tuple(w["cfg"])) for k, w in rec["wins"].items()}
if wins: explore_util.step_ab(rec, guard, el, save, explore_util.route_winners(wins), "v23b winners", token_key="v23b")
print(f"done {el()}; errors {len(rec['errors'])}")
save()
