"""Chapter 09e, the attention-only gate, on the CPU: on the tiny model with the kernels emulated the step's attention passes,
a wrong rotation (in the reference or in the engine's table) and a wiring fault fail; the recorded verdicts follow the rule."""
import math
import pytest, torch
from qwen_engine.config import preset, PREFIX
from qwen_engine.step import DecodeStep, synthetic_engine_weights
from qwen_engine import reference as R
from qwen_engine.decode_bench import reference_residuals
from qwen_engine.gates import (attention_gate, attention_inputs, reference_attention, engine_attention, rel_rms, gate_table,
                               gate_plot, gate_record, KEYS)


@pytest.fixture(scope="module")
def tiny():
    cfg = preset("tiny")
    EW, W = synthetic_engine_weights(cfg, 0, "cpu", reference=True)
    ids = torch.randint(1000, 151000, (64,), generator=torch.Generator().manual_seed(1)).tolist()   # as the bench: random tokens
    return cfg, EW, W, ids


@pytest.fixture(scope="module")
def gate(tiny):
    cfg, EW, W, ids = tiny
    names = [n for n in W if ".self_attn." in n]
    before = {n: (W[n], W[n].clone()) for n in names}
    r = attention_gate(DecodeStep(cfg, EW, max_context=128, device="cpu"), W, EW, cfg, ids)
    assert all(W[n] is t and torch.equal(t, c) for n, (t, c) in before.items())       # the reference's weights are untouched
    return r


def test_the_step_passes_and_a_wrong_rotation_fails(gate):
    """The emulated step within its limit (measured 0.50 of it: its exact fp8 products sit nearer the nearest bf16 image than a
    stochastic image does); RoPE base 1e4, in the reference or in the step's own table, far over it (measured 19.7x)."""
    assert gate["engine_pass"] and gate["negative_control_fails"] and gate["engine_control_fails"], gate
    assert gate["layers"] == [3] and gate["positions"] == 64
    assert gate["worst"]["engine"][1] < 0.8                                 # a margin, not a tolerance: 0.50 measured
    assert min(gate["least"][k][1] for k in KEYS[1:]) > 5                    # rejected by a wide factor, not by noise
    assert 0.002 < gate["envelope"][0] < 0.02                                # the re-rounding moved something, not everything


def test_the_inputs_and_outputs_are_the_references_own(tiny):
    "Layer 3's input and sublayer output, put back with the MLP, give the reference's residual stream after layer 3 bit for bit."
    cfg, EW, W, ids = tiny
    res = reference_residuals(W, cfg, ids)
    X = attention_inputs(W, cfg, ids)[3]
    p = f"{PREFIX}layers.3."
    h = res[2].to(torch.bfloat16) + reference_attention(W, cfg, 3, X)
    h = h + R.mlp(R.rms_norm(h, W[p + "post_attention_layernorm.weight"], cfg.rms_norm_eps), W, p + "mlp.")
    assert torch.equal(h.float(), res[3])
    h2 = res[1].to(torch.bfloat16) + reference_attention(W, cfg, 3, X)     # negative: the stream one layer early is not it
    assert not torch.equal(h2.float(), res[2])


def test_a_wiring_fault_in_the_engine_fails(tiny, gate):
    "The step with q_norm and k_norm swapped (a plausible wiring slip, smaller than a wrong rotation) is over the limit."
    cfg, EW, W, ids = tiny
    st = DecodeStep(cfg, EW, max_context=128, device="cpu")
    L = st.layers[3]
    L["q_norm"], L["k_norm"] = L["k_norm"], L["q_norm"]
    X = attention_inputs(W, cfg, ids)[3]
    d = rel_rms(engine_attention(st, 3, X), reference_attention(W, cfg, 3, X))
    assert d > gate["limit"][0], (d, gate["limit"])


def test_the_kernel_calls_are_wired_as_the_emulation(tiny, monkeypatch):
    """The GPU branch (the step's GEMV plans and `attention_decode`, position from ctl[0], the step's pool and table) run on
    the CPU with the kernels replaced by stand-ins that take their real arguments: bit for bit the emulated branch."""
    import qwen_engine.step as S, qwen_engine.gates as G
    from qwen_engine.gemv import gemv_reference
    from qwen_engine.attention import attention_emulated, PAGE
    cfg, EW, W, ids = tiny
    seen = []
    def gemv(q, sc, x, epi=0, res=None, out=None, pdl=False, **kw):
        assert pdl is False
        out.copy_(gemv_reference(q.view(torch.float8_e4m3fn), sc, x, epi, res).to(torch.bfloat16)); return out
    def attention_decode(qkv, ctl, pool, layer, table, qn, kn, cfg_, out, scratch, rope, M=1, variant=None, pdl=False):
        pos, tab = int(ctl[0]), table.table
        seen.append(pos)
        if pos: kc, vc = pool.gather(layer, [int(p) for p in tab[:-(-pos // PAGE)]], pos)
        else: kc = vc = torch.zeros(cfg_.num_key_value_heads, 0, cfg_.head_dim, dtype=torch.bfloat16)
        o, k, v = attention_emulated(qkv, pos, kc, vc, qn, kn, cfg_, rope)
        pg = int(tab[pos // PAGE])
        pool.kv[0, layer, pg, :, pos % PAGE], pool.kv[1, layer, pg, :, pos % PAGE] = k[0], v[0]
        out.copy_(o)
    monkeypatch.setattr(S, "engine_gemv", gemv)
    monkeypatch.setattr(S, "attention_decode", attention_decode)
    st = DecodeStep(cfg, EW, max_context=128, device="cpu")
    X = attention_inputs(W, cfg, ids)[3][:40]
    a, b = engine_attention(st, 3, X, kernels=True), engine_attention(st, 3, X, kernels=False)
    assert seen == list(range(40)) and st.pdl is S.PDL
    assert torch.equal(a, b) and not a.isnan().any()


def test_unwritten_rows_fail():
    "A NaN (the poison of a row the engine never wrote) is a failure, never a pass."
    a = torch.zeros(4, 8); a[1, 2] = float("nan")
    assert math.isnan(rel_rms(a, torch.ones(4, 8))) and not (rel_rms(a, torch.ones(4, 8)) <= 1)


def test_an_engine_that_raises_fails_and_the_reference_side_still_runs(tiny, monkeypatch):
    "The engine's side raising: its error recorded once, the step fails, its control is not claimed, the reference's control still is."
    import qwen_engine.gates as G
    cfg, EW, W, ids = tiny
    calls = []
    def broken(*a, **k): calls.append(1); raise RuntimeError("no kernel")
    monkeypatch.setattr(G, "engine_attention", broken)
    r = attention_gate(DecodeStep(cfg, EW, max_context=128, device="cpu"), W, EW, cfg, ids[:16])
    assert r["errors"] == {"engine": "RuntimeError: no kernel", "negative_engine_rope_1e4": "RuntimeError: no kernel"} and len(calls) == 2
    assert not r["engine_pass"] and not r["engine_control_fails"] and r["negative_control_fails"]


def test_table_and_plot(gate):
    t = gate_table(gate)
    assert "| 3 |" in t and "pass: True" in t and "rejected: True" in t
    fig = gate_plot(gate)
    assert len(fig.axes[0].lines) == 4


def test_recorded_verdicts_follow_the_rule():
    "The committed H200 record (when there is one): 16 layers, verdicts recomputed from the recorded numbers."
    rec = gate_record()
    if rec is None: pytest.skip("no record with the attention gate committed yet")
    g = rec["data"]["attn_gate"]
    assert g["layers"] == list(preset("qwen3_5_27b").full_layers) and g["positions"] >= 256
    lim = [1.5 * e + 1e-3 for e in g["envelope"]]
    passes = lambda k: all(v <= l for v, l in zip(g[k], lim))
    rejected = lambda k: any(v > l for v, l in zip(g[k], lim))
    assert (g["engine_pass"], g["negative_control_fails"], g["engine_control_fails"]) == \
        (passes("engine"), rejected("negative_rope_1e4"), rejected("negative_engine_rope_1e4"))
