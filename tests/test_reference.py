"""qwen_engine.reference against transformers' Qwen3_5ForCausalLM (the oracle), tiny config, CPU.

Bit-identity claims are checked with torch.equal. The oracle is built once per module (eager attention, bf16,
fp32 rotary inv_freq) from the same seeded synthetic weights the reference uses."""
import pytest
import torch

from qwen_engine.config import preset, tiny_config_dict
from qwen_engine.reference import (GDNState, KVCache, Session, check_weights, forward, gdn_chunked, gdn_recurrent,
                                   greedy, mask_padding, mtp_forward, new_state, sample, synthetic_weights, to_hf_names,
                                   warp)

torch.set_num_threads(2)
CFG = preset("tiny")


def build_oracle(W):
    from transformers import Qwen3_5ForCausalLM, Qwen3_5TextConfig
    hc = Qwen3_5TextConfig(**tiny_config_dict()["text_config"])
    hc._attn_implementation = "eager"
    with torch.device("meta"):
        m = Qwen3_5ForCausalLM(hc)
    m.load_state_dict(to_hf_names(W), strict=True, assign=True)
    rot = m.model.rotary_emb
    inv, _ = rot.compute_default_rope_parameters(hc)
    rot.inv_freq, rot.original_inv_freq = inv.float(), inv.float().clone()   # model-spec.md caveat: keep fp32
    assert m.config._attn_implementation == "eager"
    return m.eval()


@pytest.fixture(scope="module")
def W():
    return check_weights(synthetic_weights(CFG, seed=0), CFG, mtp=True)


@pytest.fixture(scope="module")
def oracle(W):
    return build_oracle(W)


def ids_of(n, seed):
    return torch.randint(0, CFG.text_vocab_size, (n,), generator=torch.Generator().manual_seed(seed))


def assert_cache_equal(cache, st):
    for i, kind in enumerate(CFG.layer_types):
        if kind == "linear_attention":
            c, r = cache.get_conv_state(i), cache.get_recurrent_state(i)
            assert c.dtype == st.layers[i].conv.dtype and r.dtype == st.layers[i].rec.dtype == torch.float32
            assert torch.equal(c, st.layers[i].conv), f"conv state, layer {i}"
            assert torch.equal(r, st.layers[i].rec), f"recurrent state, layer {i}"
        else:
            assert torch.equal(cache.layers[i].keys, st.layers[i].k), f"keys, layer {i}"
            assert torch.equal(cache.layers[i].values, st.layers[i].v), f"values, layer {i}"


def test_synthetic_weights_look_trained(W):
    "Decay exp(g) must spread over (0, 1) and (1+w) norms must be off zero, or the oracle test is weak."
    A = W["model.language_model.layers.0.linear_attn.A_log"].float().exp()
    dt = W["model.language_model.layers.0.linear_attn.dt_bias"].float()
    decay = torch.exp(-A * torch.nn.functional.softplus(dt))
    assert decay.min() < 0.5 < decay.max()
    assert W["model.language_model.norm.weight"].float().abs().mean() > 0.05


def test_check_weights_names_the_missing_tensor(W):
    bad = dict(W); del bad["lm_head.weight"]
    with pytest.raises(KeyError, match="lm_head.weight"):
        check_weights(bad, CFG)


@pytest.mark.parametrize("T", [1, 63, 64, 65, 300], ids=lambda t: f"T{t}")
def test_prompt_path_bit_identical(W, oracle, T):
    ids = ids_of(T, seed=T)
    with torch.no_grad():
        o = oracle(input_ids=ids[None], use_cache=True)
        st = new_state(CFG)
        lg, _, _ = forward(W, CFG, ids, st)
    assert lg.dtype == torch.bfloat16 and lg.shape == (T, CFG.vocab_size)
    assert torch.equal(o.logits[0], lg), f"max |diff| {(o.logits[0].float() - lg.float()).abs().max()}"
    assert_cache_equal(o.cache, st)


def test_generation_path_bit_identical(W, oracle):
    "65-token prompt, then 33 greedy steps token by token with the cache, both sides."
    ids = ids_of(65, seed=7)
    with torch.no_grad():
        o = oracle(input_ids=ids[None], use_cache=True)
        cache = o.cache
        st = new_state(CFG)
        lg, _, _ = forward(W, CFG, ids, st)
        tok_o, tok_r = greedy(o.logits[0, -1], CFG), greedy(lg[-1], CFG)
        toks = []
        for step in range(33):
            assert tok_o == tok_r, f"step {step}"
            toks.append(tok_r)
            o = oracle(input_ids=torch.tensor([[tok_o]]), cache=cache, use_cache=True)
            lg, _, _ = forward(W, CFG, [tok_r], st)
            assert torch.equal(o.logits[0, -1], lg[-1]), f"logits at step {step}"
            tok_o, tok_r = greedy(o.logits[0, -1], CFG), greedy(lg[-1], CFG)
    assert_cache_equal(cache, st)
    assert st.pos == 65 + 33 and st.layers[3].length == 98
    assert len(set(toks)) > 1                     # not a degenerate constant stream


def test_rope_base_negative_control(W, oracle):
    "The reference with transformers' default base 1e4 (instead of the config's 1e7) must not match."
    ids = ids_of(65, seed=3)
    with torch.no_grad():
        o = oracle(input_ids=ids[None], use_cache=True)
        good, _, _ = forward(W, CFG, ids, new_state(CFG))
        bad, _, _ = forward(W, CFG, ids, new_state(CFG), rope_base=1e4)
    assert torch.equal(o.logits[0], good)
    assert not torch.equal(o.logits[0], bad)
    assert (o.logits[0].float() - bad.float()).abs().max() > 0.05


def test_bf16_state_switch(W):
    "state_dtype=bf16 stores the recurrent state rounded; the results move (a peer-comparison mode)."
    ids = ids_of(70, seed=4)
    with torch.no_grad():
        s32, s16 = new_state(CFG), new_state(CFG)
        forward(W, CFG, ids, s32); forward(W, CFG, ids, s16, state_dtype=torch.bfloat16)
        assert s16.layers[0].rec.dtype == torch.bfloat16 and s32.layers[0].rec.dtype == torch.float32
        assert torch.equal(s16.layers[0].rec, s32.layers[0].rec.bfloat16())   # same prefill, stored rounded
        a, _, _ = forward(W, CFG, [5], s32); b, _, _ = forward(W, CFG, [5], s16, state_dtype=torch.bfloat16)
    assert not torch.equal(a, b)


@pytest.mark.parametrize("T", [1, 63, 64, 65, 130], ids=lambda t: f"T{t}")
def test_chunked_matches_recurrent_fp32(T):
    "Same algebra, different association: fp32 values of order 1, tolerance 1e-5 (measured <= ~1e-6)."
    g_ = torch.Generator().manual_seed(T)
    q, k = torch.randn(1, T, 2, 128, generator=g_), torch.randn(1, T, 2, 128, generator=g_)
    v = torch.randn(1, T, 6, 128, generator=g_)
    g, beta = -2 * torch.rand(1, T, 6, generator=g_), torch.rand(1, T, 6, generator=g_)
    S0 = 0.1 * torch.randn(1, 6, 128, 128, generator=g_)
    o1, s1 = gdn_recurrent(q, k, v, g, beta, S0)
    o2, s2, _ = gdn_chunked(q, k, v, g, beta, S0)
    assert (o1 - o2).abs().max() < 1e-5 and (s1 - s2).abs().max() < 1e-5
    # negative control: a different head mapping (v head j on k head j % 2 instead of j // 3) is far off
    o3, _ = gdn_recurrent(q[:, :, [0, 1, 0, 1, 0, 1]], k[:, :, [0, 1, 0, 1, 0, 1]], v, g, beta, S0)
    assert (o1 - o3).abs().max() > 1e-2


def test_anchored_chunking(W):
    "300 + 200 tokens in two appends == 500 in one; chunks restarting at 300 differ."
    ids = ids_of(500, seed=11)
    with torch.no_grad():
        one = Session(W, CFG); l1 = one.append(ids)
        two = Session(W, CFG); two.append(ids[:300]); l2 = two.append(ids[300:])
        un = new_state(CFG)
        forward(W, CFG, ids[:300], un, tile=64)
        lu, _, _ = forward(W, CFG, ids[300:], un, tile=64)
    assert two.reruns == 300 - 256
    assert torch.equal(l1[300:], l2)
    for a, b in zip(one.state.layers, two.state.layers):
        if isinstance(a, GDNState):
            assert torch.equal(a.conv, b.conv) and torch.equal(a.rec, b.rec)
        else:
            assert torch.equal(a.k, b.k) and torch.equal(a.v, b.v)
    assert not torch.equal(l1[300:], lu)
    for a, b in zip(one.state.layers, un.layers):
        if isinstance(a, GDNState):
            assert (a.rec != b.rec).float().mean() > 0.5    # most elements differ (measured > 90 %)


def test_anchored_short_call_matches_oracle(W, oracle):
    "A call of <= 64 tokens is one tile: the anchored session's logits equal the oracle's."
    ids = ids_of(64, seed=12)
    with torch.no_grad():
        o = oracle(input_ids=ids[None], use_cache=True)
        l = Session(W, CFG).append(ids)
    assert torch.equal(o.logits[0], l)


def test_session_decode_after_append(W, oracle):
    "Session.decode is the oracle's generation path."
    ids = ids_of(40, seed=13)
    with torch.no_grad():
        o = oracle(input_ids=ids[None], use_cache=True)
        s = Session(W, CFG); s.append(ids)
        tok = greedy(o.logits[0, -1], CFG)
        o2 = oracle(input_ids=torch.tensor([[tok]]), cache=o.cache, use_cache=True)
        assert torch.equal(o2.logits[0, -1], s.decode(tok))


# ---------------------------------------------------------------- sampling
def hf_warp(scores, temperature=1.0, top_k=0, top_p=1.0):
    from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper
    x = scores
    if temperature != 1.0: x = TemperatureLogitsWarper(temperature)(None, x)
    if top_k: x = TopKLogitsWarper(top_k)(None, x)
    if top_p < 1.0: x = TopPLogitsWarper(top_p)(None, x)
    return x


def crafted(case):
    s = torch.full((1, CFG.vocab_size), -30.0)
    if case == "tie-at-k":             # three-way tie at the k-th value
        s[0, [10, 20]] = 5.0; s[0, [30, 40, 50]] = 3.0; s[0, 60] = 1.0
    elif case == "tie-at-p-boundary":  # equal probabilities straddling the top-p cut
        s[0, [100, 7, 300, 4]] = 2.0; s[0, 9] = 2.5
    elif case == "all-tied-top":       # many equal maxima
        s[0, [5, 6, 7, 8, 9, 10]] = 1.0
    elif case == "padding-max":        # the largest logit is a padding row
        s[0, 248200] = 100.0; s[0, [11, 12]] = 4.0
    return s


@pytest.mark.parametrize("case", ["tie-at-k", "tie-at-p-boundary", "all-tied-top", "padding-max"])
@pytest.mark.parametrize("temperature,top_k,top_p", [(1.0, 2, 1.0), (0.7, 0, 0.5), (1.3, 4, 0.9), (1.0, 0, 0.34)],
                         ids=["k2", "t0.7-p0.5", "t1.3-k4-p0.9", "p0.34"])
def test_warp_matches_transformers(case, temperature, top_k, top_p):
    s = mask_padding(crafted(case), CFG)
    mine, ref = warp(s, temperature, top_k, top_p), hf_warp(s, temperature, top_k, top_p)
    assert torch.equal(torch.isfinite(mine), torch.isfinite(ref))
    assert torch.equal(mine[torch.isfinite(mine)], ref[torch.isfinite(ref)])
    assert not torch.isfinite(mine[0, CFG.text_vocab_size:]).any()


def test_topk_keeps_ties_and_greedy_picks_lowest():
    s = crafted("tie-at-k")
    assert int(torch.isfinite(warp(mask_padding(s, CFG), top_k=3)).sum()) == 5   # 2 + three tied at the 3rd value
    assert greedy(s[0], CFG) == 10
    assert greedy(crafted("all-tied-top")[0], CFG) == 5
    assert greedy(crafted("padding-max")[0], CFG) == 11                       # padding id 248200 never emitted


def test_sample_never_emits_padding():
    s = crafted("padding-max")[0]
    s[248077:] = 100.0                                                       # every padding row is the maximum
    g = torch.Generator().manual_seed(0)
    draws = {sample(s, CFG, temperature=1.5, top_p=0.99, generator=g) for _ in range(50)}
    assert draws <= {11, 12} and len(draws) == 2
    assert sample(s, CFG, temperature=0) == 11                               # greedy: tie 11/12 -> lowest id


# ---------------------------------------------------------------- MTP
def test_mtp_incremental_equals_full_and_swap_control(W):
    """Full (row tiles of 1) == prefix + one position at a time with the MTP KV cache. The comparison uses the first
    4096 rows of the shared lm_head (a one-row product with all 248,320 rows costs ~0.3 s on CPU); the swap
    control (hidden half first) uses the full head."""
    Wm = dict(W); Wm["lm_head.weight"] = W["lm_head.weight"][:4096]
    ids = ids_of(40, seed=21)
    with torch.no_grad():
        st = new_state(CFG)
        lg, h, _ = forward(W, CFG, ids, st)
        nxt = torch.cat([ids[1:], lg[-1:].argmax(-1)])
        full, _ = mtp_forward(Wm, CFG, nxt, h, KVCache(), 0, tile=1)
        kv = KVCache()
        parts = [mtp_forward(Wm, CFG, nxt[:24], h[:24], kv, 0, tile=1)[0]]
        parts += [mtp_forward(Wm, CFG, nxt[t:t + 1], h[t:t + 1], kv, t)[0] for t in range(24, 40)]
        assert kv.length == 40
        assert torch.equal(full, torch.cat(parts))
        Wsw = dict(W); fc = W["mtp.fc.weight"]; H = CFG.hidden_size
        Wsw["mtp.fc.weight"] = torch.cat([fc[:, H:], fc[:, :H]], dim=1)       # hidden half first: wrong wiring
        ok, _ = mtp_forward(W, CFG, nxt, h, KVCache(), 0)
        sw, _ = mtp_forward(Wsw, CFG, nxt, h, KVCache(), 0)
    assert (sw.argmax(-1) == ok.argmax(-1)).float().mean() < 0.5


def test_reference_matches_oracle_through_the_checkpoint(tmp_path_factory):
    """Chapters 03 and 04 joined: a tiny synthetic checkpoint written in the HF format, read by our loader into the
    reference and by transformers (the oracle) from the same directory, gives bit-identical logits."""
    from qwen_engine.checkpoint import write_synthetic, open_checkpoint, weight
    from qwen_engine.oracle import load_oracle
    from qwen_engine.reference import forward, new_state
    from qwen_engine.config import PREFIX
    d = tmp_path_factory.mktemp("tiny_ckpt")
    write_synthetic("tiny", d, seed=3)
    ck = open_checkpoint(d)
    W = {n: weight(ck, n) for n in ck.specs if not n.startswith("mtp.")}
    ids = torch.randint(0, 248000, (70,), generator=torch.Generator().manual_seed(5))
    ours, _, _ = forward(W, ck.cfg, ids, new_state(ck.cfg))
    with torch.no_grad():
        theirs = load_oracle(d)(ids[None]).logits[0]
    assert torch.equal(ours, theirs)
    W[PREFIX + "layers.0.linear_attn.A_log"] = W[PREFIX + "layers.0.linear_attn.A_log"] + 0.5   # negative control
    assert not torch.equal(forward(W, ck.cfg, ids, new_state(ck.cfg))[0], theirs)
