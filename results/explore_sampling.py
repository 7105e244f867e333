"""Chapter 09b: sampling on the GPU path. The 27B-shape synthetic step (seed 0, PDL graph); a 64-token prompt; 96 new
tokens a run, each mode in turn, twice: greedy (`run`, one replay in flight ahead); sampled at temperature 0.7, top-p
0.9 with top-k 20 inside the step (set_sampling: the head's top-36 candidates, then the step's own sampler, so `run`
streams the tokens as it streams greedy ones), with top-k 20 from the candidates drawn on the host, and from all
logits with the warp on the GPU (sample_logits) or on the CPU (the path before), with top-k 20 and with top-k 0. Then
two checks of 48 steps: the candidates equal the top 36 of the step's own logits (logit descending, id ascending) and
candidate_probs equals chapter 04's warp and softmax over all logits (as multisets where top-p cuts a tie); and the
step's sampler draws what its host oracle (sample_candidates_reference) draws from the same candidates and uniform
number. (Earlier runs: sampling_first_h200.json with one candidate past the k, sampling_hostdraw_h200.json.)
Usage on the H200: PYTHONPATH=. python3 results/explore_sampling.py OUT_DIR (sampling_h200.json). About 90 s."""
import torch
import explore_util
from qwen_engine.config import preset
from qwen_engine.step import DecodeStep, synthetic_engine_weights, run, sample_candidates_reference, sample_uniform
from qwen_engine.engine import _sampled_run, candidate_probs, CANDIDATE_EXTRA
from qwen_engine.reference import warp
from qwen_engine.gemv import head_keys, decode_head_keys
from qwen_engine.decode_bench import _prompt

rec, guard, el, save = explore_util.recorder(
    "sampling_h200", "Sampling on the GPU path: ms per token (wall) greedy, sampled from the head's top-k candidates, sampled from all logits (warp on the GPU and on the CPU) "
    "(top-k 20 both ways, and top-k 0), 96 tokens after a 64-token prompt, interleaved, twice; and the candidates checked against the step's own "
    "logits over 48 steps; the step's own sampler against its host oracle over 48 steps.", "explore_sampling.py", timings=[], check={}, check_step={})
cfg = preset("qwen3_5_27b")
EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
step = DecodeStep(cfg, EW, max_context=4096, keep_logits=True)
prompt, n = _prompt(64), 96
modes = {"greedy": None, "top-k 20, in the step": (20, "step"), "top-k 20, candidates": (20, "candidates"), "top-k 20, all logits": (20, "logits"),
         "top-k 0, all logits": (0, "logits"), "top-k 20, all logits, CPU warp": (20, "logits-cpu"), "top-k 0, all logits, CPU warp": (0, "logits-cpu")}
for rep in range(2):
    for mode, how in modes.items():
        stats = {}
        def go():
            if how is None:
                step.set_sampling(0, 0); step.set_candidates(0)
                return list(run(step, prompt, n, stats=stats))
            return list(_sampled_run(step, prompt, n, 0.7, how[0], 0.9, rep, stats, how=how[1]))
        toks = guard(f"{mode} rep {rep}", go)
        if toks:
            ms = stats["decode_s"] / max(1, stats["new_tokens"] - 1) * 1e3
            rec["timings"].append(dict(mode=mode, rep=rep, ms_per_token=ms, new_tokens=stats["new_tokens"], fallbacks=stats.get("fallbacks"),
                                       overflows=stats.get("overflows")))
            print(f"rep {rep} {mode}: {ms:.3f} ms a token ({stats['new_tokens']} tokens, fallbacks {stats.get('fallbacks')}, "
                  f"overflows {stats.get('overflows')}) {el()}", flush=True)
save()

def check():
    "48 sampled steps with candidates: each step's candidates against its own logits."
    k, kc = 20, 20 + CANDIDATE_EXTRA
    step.set_sampling(0, 0); step.set_candidates(kc); step.reset(prompt, 48); step.capture()
    for _ in range(len(prompt) - 1): step.graph.replay()
    g, same, worst, fallbacks = torch.Generator().manual_seed(5), 0, 0.0, 0
    for i in range(48):
        step.graph.replay()
        cv, ci, lg = step.cand[0][0].cpu(), step.cand[1][0].cpu(), step.logits[0].float().cpu()
        keys = head_keys(lg, torch.arange(lg.numel()))
        wv, wi = decode_head_keys(torch.sort(keys, descending=True).values[:kc])
        same += int(torch.equal(cv, wv) and torch.equal(ci, wi))
        p = candidate_probs(cv, k, 0.7, 0.9)
        if p is None: fallbacks += 1; step.ctl[1] = int(ci[0]); continue
        full = warp(lg[None], 0.7, k, 0.9).softmax(-1)[0]
        a_, b_ = torch.sort(full[full > 0]).values, torch.sort(p[p > 0]).values      # as multisets (ties at a top-p cut: test_engine)
        worst = max(worst, float((a_ - b_).abs().max()) if a_.numel() == b_.numel() else float("inf"), float((1 - full[ci[:p.numel()].long()].sum()).abs()))
        step.ctl[1] = int(ci[int(torch.multinomial(p, 1, generator=g))])
    return dict(steps=48, candidates_equal_own_logits=same, max_prob_difference=worst, fallbacks=fallbacks)
c = guard("check", check)
if c: rec["check"] = c; print(f"check: {c} {el()}")

def check_step_sampler():
    "48 steps sampling inside the step: each token against sample_candidates_reference on the step's own candidates."
    step.set_sampling(0.7, 20, 0.9, 11); step.reset(prompt, 48)
    if step.graph is None: step.capture()
    for _ in range(len(prompt) - 1): step.graph.replay()
    same, toks = 0, []
    for i in range(48):
        step.graph.replay()
        pos = int(step.ctl[0]) - 1                                   # the position the sampler drew for
        got = int(step.samp["out"][0])
        want = sample_candidates_reference(step.cand[0][0].cpu(), step.cand[1][0].cpu(), 0.7, 20, 0.9, sample_uniform(11, pos))
        same += got == want; toks.append(got)
        if int(step.ctl[1]) != got: raise RuntimeError(f"the step fed itself {int(step.ctl[1])}, not its sample {got}")
    return dict(steps=48, tokens_equal_reference=same, distinct_tokens=len(set(toks)), overflows=int(step.samp["overflow"][0]))
c2 = guard("check step sampler", check_step_sampler)
if c2: rec["check_step"] = c2; print(f"check step sampler: {c2} {el()}")
save()
print("\nmode | ms a token (2 repeats)")
for mode in modes:
    print(f"{mode} | " + " / ".join(f"{t['ms_per_token']:.3f}" for t in rec["timings"] if t["mode"] == mode))
print(f"done {el()}; errors {len(rec['errors'])}")
