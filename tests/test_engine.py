"Chapter 09 (reference path): the embedded default model, greedy generation equal to the oracle's, stops, errors, the CLI."
import dataclasses, subprocess, sys
from pathlib import Path
import pytest, torch
from qwen_engine import engine
from qwen_engine.engine import Model, generate, ContextError

QE = str(Path(sys.executable).parent / "qwen-engine")

@pytest.fixture(scope="module")
def model(tmp_path_factory):
    cache = tmp_path_factory.mktemp("qe_cache")
    mp = pytest.MonkeyPatch(); mp.setenv("QE_CACHE", str(cache))
    m = Model(device="cpu")
    yield m
    mp.undo()

def test_default_model_is_written_once(model, monkeypatch):
    assert model.path.parent == engine.cache_dir() and (model.path / "model.safetensors").exists()
    monkeypatch.setattr(engine, "write_synthetic", lambda *a, **k: pytest.fail("rewrote the cached default model"))
    assert engine.default_model_dir() == model.path

def test_greedy_equals_the_oracle(model):
    from qwen_engine.oracle import load_oracle
    ids = model.prompt_ids("Once upon a time, in a land far away,")
    ours = list(generate(model, ids, max_new_tokens=12))
    with torch.no_grad():
        theirs = load_oracle(model.path).generate(torch.tensor([ids]), max_new_tokens=12, do_sample=False)[0, len(ids):].tolist()
    assert len(ours) >= 1 and ours == theirs[:len(ours)]

def test_stops_on_end_of_turn(model):
    ids = model.prompt_ids("Hello")
    first = next(generate(model, ids, max_new_tokens=1))
    stopping = dataclasses.replace(model.cfg, eos_token_ids=(first,))
    m2 = Model.__new__(Model); m2.__dict__.update(model.__dict__); m2.cfg = stopping
    assert list(generate(m2, ids, max_new_tokens=8)) == [first]        # the stop token is emitted, then nothing
    assert len(list(generate(model, ids, max_new_tokens=8))) == 8 or first in model.cfg.eos_token_ids

def test_sampling_is_seeded_and_never_padding(model):
    ids = model.prompt_ids("Numbers:")
    a = list(generate(model, ids, 6, temperature=1.5, top_k=50, seed=7))
    assert a == list(generate(model, ids, 6, temperature=1.5, top_k=50, seed=7))
    assert all(t < model.cfg.text_vocab_size for t in a)

def test_errors(model):
    with pytest.raises(ContextError, match="exceeds the context"): list(generate(model, [1, 2], max_new_tokens=10**6))
    with pytest.raises(ValueError, match="empty"): list(generate(model, [], max_new_tokens=1))

def test_cli(model):
    env = {"QE_CACHE": str(engine.cache_dir()), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([QE, "generate", "--prompt", "Hi", "--max-new-tokens", "3", "--chat"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "reference path" in r.stderr and "ms/token" in r.stderr, r.stderr
    r = subprocess.run([QE, "generate", "--prompt", "Hi", "--model", "/no/such/dir"], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "no such directory" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([QE, "generate", "--prompt", "Hi", "--max-new-tokens", "0"], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "at least 1" in r.stderr


def test_gpu_without_cupy_is_one_clear_error(monkeypatch, capsys):
    "A visible GPU without CuPy: the CLI says what to install (one line, status 2), instead of failing inside a kernel launch."
    import sys, torch
    from qwen_engine import cli
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setitem(sys.modules, "cupy", None)                  # `import cupy` raises ImportError
    assert cli.main(["generate", "--prompt", "hi", "--max-new-tokens", "1"]) == 2
    err = capsys.readouterr().err
    assert "CuPy is not installed" in err and err.count("\n") == 1


@pytest.mark.parametrize("temperature,top_k,top_p", [(1.0, 20, 1.0), (0.7, 5, 0.9), (1.3, 50, 0.5), (0.2, 1, 1.0)])
def test_candidate_probs_are_the_references(temperature, top_k, top_p):
    """The sampled GPU path with a top-k reads only the head's k + CANDIDATE_EXTRA best (logit, id) candidates:
    candidate_probs gives each kept one the probability chapter 04's warp and softmax give it over the whole vocabulary
    (rounding apart), every other token has none there, and logits tied with the k-th are kept (bf16 logits on a coarse
    grid, so ties across the k-th occur). Negative control: a different temperature gives other probabilities.""" 
    from qwen_engine.engine import candidate_probs, CANDIDATE_EXTRA
    from qwen_engine.reference import warp
    ties = 0
    for seed in range(6):
        logits = (torch.randn(5000, generator=torch.Generator().manual_seed(seed)) * 3).to(torch.bfloat16).float()
        order = sorted(range(5000), key=lambda i: (-logits[i].item(), i))[:top_k + CANDIDATE_EXTRA]     # the head's order
        vals, ids = logits[order], torch.tensor(order)
        p = candidate_probs(vals, top_k, temperature, top_p)
        full = warp(logits[None], temperature, top_k, top_p).softmax(-1)[0]
        keep = p.numel()
        ties += keep > top_k
        # the same probabilities (as a multiset: at a top-p cut inside a group of equal logits, which members go is torch.sort's
        # unstable order, over the vocabulary there and over the candidates here), the same mass, and token for token
        # wherever the logit is not shared
        assert keep >= top_k and abs(1 - full[ids[:keep]].sum()) < 1e-6 and int((full > 0).sum()) == int((p > 0).sum())
        assert torch.allclose(torch.sort(full[full > 0]).values, torch.sort(p[p > 0]).values, rtol=1e-6, atol=1e-7)
        alone = torch.tensor([int((vals[:keep] == v).sum()) == 1 for v in vals[:keep]])
        assert torch.allclose(full[ids[:keep]][alone], p[alone], rtol=1e-6, atol=1e-7)
        if top_k > 1: assert not torch.allclose(candidate_probs(vals, top_k, temperature * 1.5, top_p), p, rtol=1e-3)
    if top_k >= 20: assert ties > 0                      # the tied case was exercised


def test_candidate_probs_keep_ties_and_fall_back_past_the_candidates():
    "Logits tied with the k-th are kept while the candidates show where the tie ends; a tie running to the last one: None."
    from qwen_engine.engine import candidate_probs
    p = candidate_probs(torch.tensor([3.0, 2.0, 1.5, 1.5, 1.0]), 3, 1.0)
    assert p.numel() == 4 and torch.allclose(p, torch.tensor([3.0, 2.0, 1.5, 1.5]).softmax(-1))
    assert candidate_probs(torch.tensor([3.0, 2.0, 1.5, 1.5]), 3, 1.0) is None
    assert candidate_probs(torch.tensor([3.0, 2.0, 1.5, 1.5]), 2, 1.0).numel() == 2


def test_step_candidates_plumbing(monkeypatch):
    "DecodeStep.set_candidates: refused where the head is not v6 (the tiny model), buffers of k otherwise, the graph dropped."
    from qwen_engine import step as S
    from qwen_engine.config import preset
    st = S.DecodeStep.__new__(S.DecodeStep)
    st.cfg, st.device, st.graph, st.cand_k, st.sampling = preset("tiny"), "cpu", object(), 0, False
    with pytest.raises(ValueError, match="v6 head"): st.set_candidates(21)
    st.cfg = preset("qwen3_5_27b")
    st.set_candidates(21)
    assert st.cand_k == 21 and st.cand[0].shape == (1, 21) and st.cand[1].dtype == torch.int32 and st.graph is None
    st.set_candidates(0)
    assert st.cand is None and st.cand_k == 0
    from qwen_engine import gemv as G
    monkeypatch.setattr(G, "_sms", lambda: 132)                    # the H200's: 264 head blocks, 96 keys each for the merge
    assert G.head_topk_capacity(248320) == 96 and G.head_topk_capacity(1000) == 256
    with pytest.raises(ValueError, match="top-k of 1 to 80"): st.set_sampling(0.7, 81)
    with pytest.raises(ValueError, match="top-k of 1 to 80"): st.set_sampling(0.7, 0)


def test_sample_logits_draws_by_inverse_cdf():
    """sample_logits (the all-logits path, warp and draw where the logits live): the id is the first whose cumulative
    probability (chapter 04's warp and softmax) passes u times the total, u the generator's next uniform; never an id
    without probability (padding, top-k, top-p); seed for seed reproducible; over 4,000 seeds the frequencies are the
    probabilities (within 5 standard deviations). Negative control: a draw from another seed's u breaks the first."""
    from qwen_engine.engine import sample_logits
    from qwen_engine.reference import warp, mask_padding
    from qwen_engine.config import preset
    cfg = preset("tiny")
    logits = torch.randn(cfg.vocab_size, generator=torch.Generator().manual_seed(3)) * 2
    for T, k, p_ in ((0.7, 0, 0.9), (1.0, 20, 1.0), (1.3, 5, 0.5)):
        p = warp(mask_padding(logits, cfg)[None], T, k, p_).softmax(-1)[0]
        c = torch.cumsum(p, 0)
        first = lambda u: int(torch.nonzero(c > u * c[-1])[0, 0])
        for s in range(20):
            t = sample_logits(logits, cfg, T, k, p_, torch.Generator().manual_seed(s))
            assert t == first(float(torch.rand((), generator=torch.Generator().manual_seed(s)))) and p[t] > 0 and t < cfg.text_vocab_size
            assert t == sample_logits(logits, cfg, T, k, p_, torch.Generator().manual_seed(s))
        assert any(first(float(torch.rand((), generator=torch.Generator().manual_seed(s + 1)))) != sample_logits(logits, cfg, T, k, p_, torch.Generator().manual_seed(s))
                   for s in range(20))
    p = warp(mask_padding(logits, cfg)[None], 1.0, 5, 1.0).softmax(-1)[0]
    draws = torch.tensor([sample_logits(logits, cfg, 1.0, 5, 1.0, torch.Generator().manual_seed(s)) for s in range(4000)])
    for t in torch.nonzero(p > 0)[:, 0].tolist():
        f, q = float((draws == t).float().mean()), float(p[t])
        assert abs(f - q) < 5 * (q * (1 - q) / 4000) ** 0.5 + 1e-3, (t, f, q)


def test_sampling_record():
    """sampling_h200: the candidates equal the step's own top k + 16 at every checked step, the probabilities chapter 04's
    (1e-6), no fallback; the step's own sampler draws its host oracle's tokens; a token sampled inside the step within 3 %
    of a greedy one's time, from the host within 15 % (candidates, warp on the GPU), and the path before (warp on the
    CPU) more than twice as slow: the chapter's claims."""
    from qwen_engine.runtime import read_record
    d = read_record("sampling_h200")["data"]
    c = d["check"]
    assert not d["errors"] and c["candidates_equal_own_logits"] == c["steps"] == 48 and c["max_prob_difference"] < 1e-6 and c["fallbacks"] == 0
    ms = lambda m: [t["ms_per_token"] for t in d["timings"] if t["mode"] == m]
    g = max(ms("greedy"))
    for m in ("top-k 20, candidates", "top-k 20, all logits", "top-k 0, all logits"): assert len(ms(m)) == 2 and max(ms(m)) < 1.15 * g, m
    assert len(ms("top-k 20, in the step")) == 2 and max(ms("top-k 20, in the step")) < 1.03 * g          # within 3 % of greedy
    cs = d["check_step"]
    assert cs["tokens_equal_reference"] == cs["steps"] == 48 and cs["overflows"] == 0 and cs["distinct_tokens"] > 24   # it samples
    for m in ("top-k 20, all logits, CPU warp", "top-k 0, all logits, CPU warp"): assert min(ms(m)) > 2 * g, m
    assert all(t["fallbacks"] in (0, None) and t["overflows"] in (0, None) for t in d["timings"])


def test_sample_uniform_is_splitmix64():
    "The step's uniform numbers: splitmix64's known first output for state 0 (0xE220A8397B1DCDAF), 24 bits of it; spread over [0, 1)."
    from qwen_engine.step import sample_uniform
    assert sample_uniform(0, 0) == 0xE220A8 / 2 ** 24
    us = [sample_uniform(7, p) for p in range(2000)]
    assert all(0 <= u < 1 for u in us) and abs(sum(us) / len(us) - 0.5) < 0.02 and len(set(us)) > 1990
    assert [sample_uniform(8, p) for p in range(20)] != us[:20]


def test_sample_candidates_reference_draws_candidate_probs():
    """The step's sampler (its host oracle): over a fine grid of u the tokens come in the proportions candidate_probs
    gives (chapter 04's rule), per group of equal logits (ties across the k-th included); never a token outside the kept
    candidates."""
    from qwen_engine.step import sample_candidates_reference
    from qwen_engine.engine import candidate_probs
    logits = torch.tensor([5.0, 4.5, 4.5, 3.0, 2.0, 2.0, 2.0, 1.0, 0.5, 0.25]).to(torch.bfloat16).float()
    ids = torch.arange(100, 110)
    for T, k, p_ in ((1.0, 3, 1.0), (0.7, 5, 0.9), (1.5, 2, 0.6), (1.0, 1, 1.0)):
        p = candidate_probs(logits, k, T, p_)
        N = 20000
        draws = [sample_candidates_reference(logits, ids, T, k, p_, (j + 0.5) / N) for j in range(N)]
        pp = torch.zeros(len(logits)); pp[:p.numel()] = p
        for v in logits.unique():                                # per group of equal logits (a top-p cut inside a group: either member)
            grp = [i for i in range(len(logits)) if logits[i] == v]
            got = sum(draws.count(100 + i) for i in grp) / N
            assert abs(got - float(pp[grp].sum())) < 2e-3, (T, k, p_, float(v))
        assert set(draws) <= set(range(100, 100 + p.numel()))
