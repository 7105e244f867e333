"""Chapter 06, v23: v14 / v18 with the branch-free ring. The head's v5 (loads inside branches) streamed as if one load
were in flight and its v6 (the same stream without branches) at 99 % (head_v5_h200.json, head_v6_h200.json); v14's ring
refills sit inside `if (nxt < s1)`. v23 (NB in gemv_v13_body) runs whole groups of D steps with every refill issued
(clamped to the slice's last step), the last steps after: the same loads and sums, bit-identical. Per shape, the engine's
configuration and the same held to v14's blocks an SM (MINB), through explore_util.flag_sweep (float64 check, M = 8 rows
= M = 1, bit-identity with the engine's kernel, timed alone with PDL interleaved with the engine's, twice, the token's
GEMVs with the winners); then, if any configuration won, the decode step with the winners, interleaved, three times.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v23.py OUT_DIR (gemv_v23_h200.json). About 90 s."""
import torch
from qwen_engine import gemv as G
from qwen_engine.step import DecodeStep
import explore_util

gen = torch.Generator(device="cuda").manual_seed(0)
rec, guard, el, save = explore_util.recorder(
    "gemv_v23_h200", "v23 (v14 / v18 with the branch-free ring) checked, bit-identity with the engine's kernel, timed alone with PDL interleaved "
    "with the engine's, the token's GEMVs with the winners, and the decode step with them.", "explore_gemv_v23.py",
    checks=[], identity=[], versus_engine=[], timings=[], regs={}, step=[], step_tokens={})
explore_util.flag_sweep(rec, gen, rec["bandwidth_tbps"], el, save, 23, G.V23_SWEEP, (0,), lambda e, c, _: G._v23_name(e, c), "-", ())
wins = {tuple(int(v) for v in k.split("x")): tuple(w["cfg"]) for k, w in rec["wins"].items()}
if wins:
    from qwen_engine.config import preset
    from qwen_engine.step import synthetic_engine_weights, run
    from qwen_engine.decode_bench import _prompt
    torch.cuda.empty_cache()
    cfg = preset("qwen3_5_27b")
    EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
    step = DecodeStep(cfg, EW, max_context=33 * 1024)
    prompt = _prompt(1024)
    engine_gemv_method = DecodeStep._gemv
    def apply(on):
        def g(wq, x, epi, o, res=None):
            N, K = wq[0].shape
            key = (N, K) if on and (N, K) in wins else None
            if key is None: return engine_gemv_method(step, wq, x, epi, o, res)
            SR, SK, RP, D, E, MB, KS, XS = wins[key]
            G.gemv(wq[0], wq[1], x, epi, res, out=o, scratch=step.scratch[(N, K, epi)], pdl=step.pdl, S=SR, RG=2 if epi == 2 else 1,
                   variant=23, KS=KS, D=D, minb=MB, v13opt=(SK, RP, bool(E), bool(XS)))
        step._gemv = g; step.graph = None
    for on in (0, 1):
        apply(on)
        rec["step_tokens"]["v23" if on else "engine"] = guard(f"tokens {on}", lambda: list(run(step, prompt[:16], 24)))
    same = rec["step_tokens"]["v23"] == rec["step_tokens"]["engine"]
    print(f"step tokens equal: {same} {el()}", flush=True)
    for rep in range(3 if same else 0):
        for on in (0, 1):
            apply(on)
            r = guard(f"step {on}", lambda: explore_util.step_times(step, prompt))
            if r:
                rec["step"].append(dict(plan="v23 winners" if on else "engine", rep=rep, ms_1k=r[1024], ms_32k=r[32768]))
                print(f"step rep {rep} {'v23' if on else 'engine'}: 1K {r[1024]:.3f} ms, 32K {r[32768]:.3f} ms {el()}", flush=True)
    save()
print(f"done {el()}; errors {len(rec['errors'])}")
save()
