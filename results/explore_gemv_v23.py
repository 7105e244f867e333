"""Chapter 06, v23: v14 / v18 with the branch-free ring. The head's v5 (loads inside branches) streamed as if one load
were in flight and its v6 (the same stream without branches) at 99 % (head_v5_h200.json, head_v6_h200.json); v14's ring
refills sit inside `if (nxt < s1)`. v23 (NB in gemv_v13_body) runs whole groups of D steps with every refill issued
(clamped to the slice's last step), the last steps after: the same loads and sums, bit-identical. Per shape, the engine's
configuration and the same held to v14's blocks an SM (MINB), through explore_util.flag_sweep (float64 check, M = 8 rows
= M = 1, bit-identity with the engine's kernel, timed alone with PDL interleaved with the engine's, twice, the token's
GEMVs with the winners); then, if any configuration won, the decode step with the winners, interleaved, three times.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v23.py OUT_DIR (gemv_v23_h200.json). About 90 s.
(The step's A/B moved into explore_util.step_ab after this record was made, shared with explore_gemv_v22.py, and its routing into explore_util.route_winners: the same
steps, not re-run.)"""
import torch
from qwen_engine import gemv as G
import explore_util

gen = torch.Generator(device="cuda").manual_seed(0)
rec, guard, el, save = explore_util.recorder(
    "gemv_v23_h200", "v23 (v14 / v18 with the branch-free ring) checked, bit-identity with the engine's kernel, timed alone with PDL interleaved "
    "with the engine's, the token's GEMVs with the winners, and the decode step with them.", "explore_gemv_v23.py",
    checks=[], identity=[], versus_engine=[], timings=[], regs={}, step=[], step_tokens={})
explore_util.flag_sweep(rec, gen, rec["bandwidth_tbps"], el, save, 23, G.V23_SWEEP, (0,), lambda e, c, _: G._v23_name(e, c), "-", ())
wins = {tuple(int(v) for v in k.split("x")): (23, tuple(w["cfg"])) for k, w in rec["wins"].items()}
if wins: explore_util.step_ab(rec, guard, el, save, explore_util.route_winners(wins), "v23 winners", token_key="v23")
print(f"done {el()}; errors {len(rec['errors'])}")
save()
