"""Chapter 09 (the assembled step): what can be checked without a GPU. The step itself runs in `qwen-engine bench decode`
on the H200 (record results/decode_h200.json, checked below when present)."""
import pytest, torch
from qwen_engine.config import preset, tensor_specs, PREFIX
from qwen_engine.checkpoint import write_synthetic, open_checkpoint, weight, fused_layout
from qwen_engine.step import synthetic_engine_weights, engine_weights, token_bytes
from qwen_engine.roofline import decode_budget, step_bytes


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return write_synthetic("tiny", tmp_path_factory.mktemp("tiny"), seed=3, progress=False)


def test_synthetic_weights_equal_the_checkpoint_path(tiny_dir):
    "The in-memory synthesis (used for speed runs) holds exactly what the loader reads from a checkpoint of the same seed."
    cfg = preset("tiny")
    EW, W = synthetic_engine_weights(cfg, seed=3, device="cpu", reference=True)
    ck = open_checkpoint(tiny_dir, mtp=False)
    L = engine_weights(ck, "cpu", progress=False)
    assert set(EW) == set(L)
    for n, v in L.items():
        if isinstance(v, tuple):
            assert v[1].dtype == torch.float32 and EW[n][1].dtype == torch.float32
            assert torch.equal(v[0].view(torch.uint8), EW[n][0].view(torch.uint8)) and torch.equal(v[1], EW[n][1]), n
        else: assert torch.equal(v, EW[n]), n
    for n in ck.specs:                                          # the reference's weights are the checkpoint's, dequantised
        assert torch.equal(weight(ck, n), W[n]), n
    fused = fused_layout(cfg)
    assert all(f in EW and not any(p in EW for p in ps) for f, ps in fused.items() if not f.startswith("mtp."))


def test_synthetic_weights_negative_control():
    "A different seed gives different weights: the equality above is not vacuous."
    a, _ = synthetic_engine_weights(preset("tiny"), seed=3, device="cpu")
    b, _ = synthetic_engine_weights(preset("tiny"), seed=4, device="cpu")
    n = PREFIX + "layers.0.mlp.down_proj.weight"
    assert not torch.equal(a[n][0].view(torch.uint8), b[n][0].view(torch.uint8))


@pytest.mark.parametrize("ctx", [0, 1024, 32768])
def test_token_bytes_agree_with_the_floor(ctx):
    "The family split of a token's bytes sums to chapter 01's floor within 0.5 % (head padding rows, norm writes, conv taps)."
    cfg = preset("qwen3_5_27b")
    fam = token_bytes(cfg, ctx)
    ref = step_bytes(decode_budget(cfg), ctx)
    assert abs(fam["total"] - ref) / ref < 0.005
    assert fam["total"] == sum(v for k, v in fam.items() if k != "total")
    assert 24.2e9 < fam["gemv"] < 24.4e9 and fam["lm_head"] == 248077 * 5120 * 2


def _decode_record():
    from qwen_engine.runtime import read_record
    try: return read_record("decode_h200")["data"]
    except FileNotFoundError: pytest.skip("no decode record committed yet")


def test_decode_record_gates():
    "The committed H200 record of the assembled step: graph = eager bit for bit, its launches (the engine's attention variant's), the speed rows' arithmetic."
    d = _decode_record()
    assert d["graph_vs_eager"]["bit_identical"] and d["graph_vs_eager"]["steps"] >= 256
    gen = d["generation"][0]
    assert gen["tokens"] >= 1000 and gen["handoff"] == "copy"
    # runs that replay the graph the run before them captured (same hand-off, ahead = 2) allocate nothing
    assert [g["allocations"] for g in d["generation"] if g["ahead"] == 2] == [0, 0]
    L = d["launches"]
    from qwen_engine.attention import VARIANTS, VARIANT                  # the record is the engine's: its attention kernels are VARIANT's
    attn = {k.split(":")[1].split("<")[0]: n for k, n in L["by_kernel"].items() if k.startswith("attention:")}
    assert attn == {f: 16 for f in VARIANTS[VARIANT][:4] if f}
    from qwen_engine.gemv import ENGINE_CHOICE                          # ... and its head is the engine's (v6 by its tuple)
    h = ENGINE_CHOICE["lm_head"]
    assert len(h) == 5 and h[0] == 6
    head = f"gemv:lm_head_bf16_v6<{h[1]}, {h[2]}, 1, {h[3]}, 20>"
    assert L["by_kernel"].get(head) == 1, (head, [k for k in L["by_kernel"] if "lm_head" in k])
    assert L["total"] == sum(L["by_kernel"].values()) == 1 + 129 + 4 * 64 + 16 * len(attn) + 48 + 2 + 1   # embed, norms, GEMVs, attention, GDN, head, finish
    from qwen_engine.step import GDN_LOG                                  # ... and its GDN layers the engine's log build
    from qwen_engine.gdn import _LOG_NAME
    gdn = {k.split(":", 1)[1]: n for k, n in L["by_kernel"].items() if k.startswith("gdn:")}
    assert d["gdn_log"] == GDN_LOG and gdn == {_LOG_NAME[GDN_LOG]: 48}, gdn
    for ctx in ("1024", "32768"):
        s = d["speed"][ctx]
        assert abs(s["frac_of_floor"] - s["floor_ms"] / s["ms"]) < 1e-9 and s["bytes"] == step_bytes(decode_budget(preset("qwen3_5_27b")), int(ctx))
    fg = d["speed"]["families_graph"]                                    # profiled on the graph without PDL (spans would overlap)
    assert fg["pdl"] is False and abs(sum(d["speed"]["families_1k"].values()) - fg["ms"]) / fg["ms"] < 0.05   # kernels fill the replay


def test_decode_record_no_allocation_over_1000_tokens():
    "Nothing allocates during generation: the record's first 1,000-token run (graph captured before counting) counts 0."
    gen = _decode_record()["generation"][0]
    assert gen["tokens"] >= 1000 and gen["allocations"] == 0


def test_decode_record_teacher_forced_rule():
    "The teacher-forced verdict follows the stated rule from the recorded numbers, over 1,000+ positions."
    tf = _decode_record()["teacher_forced"]
    env = tf["envelope"]
    ok = lambda a: a["top1"] >= env["top1"] - 0.01 and a["p999"] <= 2 * max(env["p999"], 1e-6)
    assert tf["positions"] >= 1000 and tf["engine_pass"] == ok(tf["engine"]) and tf["negative_control_fails"] == (not ok(tf["negative_rope_1e4"]))


@pytest.mark.xfail(strict=True, reason="on the random-weight 27B model a wrong RoPE base moves the logits less than the envelope: "
                                       "the end-to-end gate is blind to it; the attention-only gate (chapter 09e) is the one that rejects it")
def test_decode_record_negative_control_rejected():
    assert _decode_record()["teacher_forced"]["negative_control_fails"]


def test_27b_negative_control_rejected_by_the_attention_gate():
    "At 27B, on the H200: the engine passes the attention-only gate at every attention layer and both RoPE-1e4 controls fail it."
    from qwen_engine.gates import gate_record
    g = gate_record()["data"]["attn_gate"]
    assert g["engine_pass"] and g["negative_control_fails"] and g["engine_control_fails"]
    lim = [1.5 * e + 1e-3 for e in g["envelope"]]
    assert max(v / l for v, l in zip(g["engine"], lim)) < 1 < min(v / l for v, l in zip(g["negative_rope_1e4"], lim))


# ---- the step's wiring, on the CPU: every kernel replaced by its chapter's torch emulation ----------------------------
def _emulate_kernels(monkeypatch, holder):
    "Swap the step's kernel calls for torch stand-ins with the same signatures (the kernels themselves are the chapters' business)."
    import numpy as np
    import qwen_engine.step as S
    from qwen_engine import reference as R
    from qwen_engine.gemv import torch_epilogue
    from qwen_engine.checkpoint import dequantize
    from qwen_engine.attention import attention_emulated, PAGE
    from qwen_engine.gdn import gdn_emulated, _LOG

    def rmsnorm(x, w, eps, out, **kw): out.copy_(R.rms_norm(x, w, eps)); return out

    def gemv(q, sc, x, epi=0, res=None, out=None, **kw):                  # the reference's arithmetic: bf16-dequantised weights
        y = torch.nn.functional.linear(x, dequantize(q.view(torch.float8_e4m3fn), sc.to(torch.bfloat16)))
        out.copy_(torch_epilogue(y, epi, res)); return out

    def attention_decode(qkv, ctl, pool, layer, table, qn, kn, cfg, out, scratch, rope, M=1, **kw):
        pos, tab = int(ctl[0]), table.table
        if pos: k_ctx, v_ctx = pool.gather(layer, [int(p) for p in tab[:-(-pos // PAGE)]], pos)
        else: k_ctx = v_ctx = torch.zeros(cfg.num_key_value_heads, 0, cfg.head_dim, dtype=torch.bfloat16)
        o, k, v = attention_emulated(qkv, pos, k_ctx, v_ctx, qn, kn, cfg, rope)
        pg = int(tab[pos // PAGE])
        pool.kv[0, layer, pg, :, pos % PAGE], pool.kv[1, layer, pg, :, pos % PAGE] = k[0], v[0]
        out.copy_(o)

    def gdn_decode(qkvz, x, w_b, w_a, conv_w, A_log, dt_bias, norm_w, conv_state, rec_state, layer, ctl, cfg, out, M=1, log=None, variant=None, **kw):
        N = None if log is None else _LOG[variant]                        # the log builds (the engine's GDN_LOG): the state every N tokens
        out.copy_(gdn_emulated(qkvz, x, w_b, w_a, conv_w, A_log, dt_bias, norm_w, conv_state, rec_state, layer, int(ctl[0]), cfg, log=log, N=N))

    def lm_head(W, x, rowset=None, S=4, logits=False, scratch=None, pdl=False):
        lg = (x.float() @ W[rowset.long()].float().t()).to(torch.bfloat16)            # fp32 sums rounded to bf16, as the kernel
        ids = scratch[2]
        ids[0] = int(lg[0].float().argmax())                                            # first maximum: lowest id on ties
        if logits is not False and logits is not None: logits.copy_(lg)
        return ids, None

    def launch(kernel, grid, block, args, smem=0, pdl=False):
        st = holder["step"]
        if kernel == "embed_gather":
            table, ctl, h, H = args
            h[0].copy_(table[int(ctl[1])])
        elif kernel == "finish_step":
            ids, ctl, forced, eos, n_eos, ring, ring_len = args
            pos, step, nf, pred = int(ctl[0]), int(ctl[2]), int(ctl[4]), int(ids[0])
            stop = pred in eos.tolist()
            ctl[1] = int(forced[pos + 1]) if pos + 1 < nf else pred
            ctl[0], ctl[2], ctl[3] = pos + 1, step + 1, int(stop and pos + 1 >= nf)
            st.ring_dev[2 * (step % int(ring_len))], st.ring_dev[2 * (step % int(ring_len)) + 1] = pred, step
        else: raise AssertionError(f"unexpected kernel {kernel}")

    for name, fn in dict(rmsnorm=rmsnorm, engine_gemv=gemv, attention_decode=attention_decode, gdn_decode=gdn_decode, lm_head=lm_head,
                         launch=launch, get_kernel=lambda f, k: k).items():
        monkeypatch.setattr(S, name, fn)


def test_step_wiring_matches_the_reference(monkeypatch):
    """The step's launch sequence (buffers, layer indices, residual ping-pong, control block) computes the model: with every kernel
    replaced by its emulation, teacher-forced logits match reference.forward to within bf16 rounding, and greedy agrees.
    Both criteria are calibrated in the same run by the reference against itself (one token a call against the whole prompt in
    one call): the logits within twice its own largest difference; top-1 disagreements at most twice as many as its own, and
    each at a position where the reference's top two are within its own noise (2 x that difference) of each other. (The
    first version asked for 97 % agreement: 7 of 276 positions differed here, the reference disagreeing with itself at 7,
    and 9 differed on the CI machine; the random tiny model has near-ties at a third of its positions.) The reference's own
    disagreement is measured over five valid orders, not one: the prompt fed one token a call and in chunks of 2, 3, 5 and 7
    tokens, each against the whole prompt in one call. One order alone undersampled it: on a later machine (same torch) one
    token a call disagreed at 2 positions and within 0.125, the chunkings at 3-6 and within 0.094-0.188, and the step at 9,
    all of them near-ties, within 0.156."""
    from qwen_engine.step import DecodeStep
    from qwen_engine.reference import forward, new_state
    cfg = preset("tiny")
    EW, W = synthetic_engine_weights(cfg, seed=0, device="cpu", reference=True)
    holder = {}
    _emulate_kernels(monkeypatch, holder)
    st = holder["step"] = DecodeStep(cfg, EW, max_context=600, keep_logits=True, device="cpu")
    prompt = [791, 6722, 315, 9625, 374, 12366, 13, 578, 6722, 315, 9635, 374] * 23      # 276 tokens: crosses a KV page
    st.reset(prompt, 4)
    got = []
    for p in range(len(prompt)):
        assert int(st.ctl[0]) == p and int(st.ctl[1]) == prompt[p]
        st.body()
        got.append(st.logits[0].clone())
    got = torch.stack(got).float()
    ref = forward(W, cfg, prompt, new_state(cfg))[0][:, :cfg.text_vocab_size].float()
    orders = []                                                          # the reference against itself: chunks of c tokens a call
    for c in (1, 2, 3, 5, 7):
        s, outs = new_state(cfg), []
        for i in range(0, len(prompt), c): outs.append(forward(W, cfg, prompt[i:i + c], s)[0][:, :cfg.text_vocab_size].float())
        orders.append(torch.cat(outs))
    env = max((o - ref).abs().max() for o in orders)
    d = (got - ref).abs().max()
    assert d <= 2 * env, (d, env)                                        # within twice the reference's own disagreement
    top2 = ref.topk(2, -1).values
    near_tie = top2[:, 0] - top2[:, 1] <= 2 * env                        # positions whose top-1 the reference's own noise can flip
    self_differ = max(int((o.argmax(-1) != ref.argmax(-1)).sum()) for o in orders)

    def top1_within_noise(logits):
        differ = logits.argmax(-1) != ref.argmax(-1)
        return int(differ.sum()) <= 2 * max(self_differ, 1) and bool(near_tie[differ].all())
    assert top1_within_noise(got), (int((got.argmax(-1) != ref.argmax(-1)).sum()), self_differ)
    assert not top1_within_noise(got.roll(1, 0))                          # negative control: the logits one position late
    assert [st.prediction(s) for s in (0, 100, 275)] == [int(got[s].float().argmax()) for s in (0, 100, 275)]
    assert int(st.ctl[0]) == len(prompt) and int(st.ctl[1]) == int(got[-1].float().argmax())   # the graph continues on its own


def test_step_log_build_is_v7_bit_for_bit_emulated(monkeypatch):
    """The step's GDN layers as the engine runs them (GDN_LOG: the state whole every 4 tokens, a log between) against v7
    (set_gdn_log(None)), every kernel emulated on the CPU (the log's too: gdn_emulated with log): the same logits bit for
    bit at every position of a 7-token session and the 11-token one after it on the same step (every phase of every layer,
    the rebuild across whole stores, a log left by the session before), and
    recurrent_state() equal to v7's states. Not vacuous: rec itself differs from v7's (it holds older whole states), and
    rebuilt with the wrong N the states differ."""
    from qwen_engine.step import DecodeStep, GDN_LOG
    from qwen_engine.gdn import gdn_materialise
    cfg = preset("tiny")
    EW, _ = synthetic_engine_weights(cfg, seed=0, device="cpu")
    holder = {}
    _emulate_kernels(monkeypatch, holder)
    first = [9635, 374, 12366, 13, 578, 6722, 315]                        # a session before, on the same step: its log is stale
    prompt = [791, 6722, 315, 9625, 374, 12366, 13, 578, 6722, 315, 9635]   # 11 tokens: each layer's phases, whole stores between
    got = {}
    for plan in (GDN_LOG, None):
        st = holder["step"] = DecodeStep(cfg, EW, max_context=64, keep_logits=True, device="cpu")
        st.set_gdn_log(plan)
        logits = []
        for ids in (first, prompt):
            st.reset(ids, 1)
            for _ in ids:
                st.body(); logits.append(st.logits[0].clone())
        got[plan] = (torch.stack(logits), st.recurrent_state(), st.rec.clone(), st)
    (l26, s26, r26, st26), (l7, s7, r7, _) = got[GDN_LOG], got[None]
    assert torch.equal(l26.view(torch.int16), l7.view(torch.int16))
    assert torch.equal(s26.view(torch.int32), s7.view(torch.int32))
    assert not torch.equal(r26, r7)                                      # the log was in use: rec holds the last whole states
    wrong = torch.stack([gdn_materialise(st26.rec, st26.gdn_logbuf, i, len(prompt), 3) for i in range(st26.rec.shape[0])])
    assert not torch.equal(wrong, s7)


def test_step_wiring_negative_control(monkeypatch):
    "The same check fails when the layers' order is scrambled (a wiring bug the comparison must catch)."
    from qwen_engine.step import DecodeStep
    from qwen_engine.reference import forward, new_state
    cfg = preset("tiny")
    EW, W = synthetic_engine_weights(cfg, seed=0, device="cpu", reference=True)
    holder = {}
    _emulate_kernels(monkeypatch, holder)
    st = holder["step"] = DecodeStep(cfg, EW, max_context=64, keep_logits=True, device="cpu")
    st.layers[0], st.layers[1] = st.layers[1], st.layers[0]
    prompt = [791, 6722, 315, 9625, 374, 12366]
    st.reset(prompt, 1)
    got = []
    for _ in prompt:
        st.body(); got.append(st.logits[0].clone())
    ref = forward(W, cfg, prompt, new_state(cfg))[0][:, :cfg.text_vocab_size]
    assert (torch.stack(got).float() - ref.float()).abs().max() > 0.5                 # the passing case stays under ~0.2


def test_redequantize_toward_zero_is_the_other_rounding():
    "The envelope's second reference: every fp8 weight's bf16 image rounded toward zero, within one bf16 ulp of the nearest one."
    from qwen_engine.decode_bench import redequantize_toward_zero, redequantize
    from qwen_engine.runtime import bf16_ulp
    cfg = preset("tiny")
    EW, W = synthetic_engine_weights(cfg, seed=0, device="cpu", reference=True)
    W2 = dict(W)
    redequantize_toward_zero(W2, EW, cfg)
    changed = 0
    for t in tensor_specs(cfg, mtp=False):
        if not t.fp8: assert W2[t.name] is W[t.name]; continue
        a, b = W[t.name].float(), W2[t.name].float()
        assert (b.abs() <= a.abs()).all() and ((a - b).abs() <= bf16_ulp(a)).all(), t.name
        changed += int((a != b).sum())
    assert changed > 0.2 * sum(t.numel for t in tensor_specs(cfg, mtp=False) if t.fp8)    # about half the products need rounding
    W3 = dict(W); redequantize(W3, EW, cfg, "stochastic")
    W4 = dict(W2); redequantize(W4, EW, cfg, "nearest")
    for t in tensor_specs(cfg, mtp=False):
        if not t.fp8: continue
        a, b = W[t.name].float(), W3[t.name].float()
        assert ((a - b).abs() <= bf16_ulp(a)).all() and torch.equal(W4[t.name], W[t.name]), t.name   # nearest puts the image back
    fp8 = [t.name for t in tensor_specs(cfg, mtp=False) if t.fp8]
    assert any(not torch.equal(W3[n], W[n]) for n in fp8) and any(not torch.equal(W3[n], W2[n]) for n in fp8)   # neither image


def test_layerwise_gate_on_the_emulated_step(monkeypatch):
    """The layer-by-layer gate on the tiny model with the step's kernels emulated: the step passes, the wrong RoPE base fails,
    and the reference's weights come back to their usual bf16 image."""
    from qwen_engine.step import DecodeStep
    from qwen_engine.decode_bench import layerwise
    cfg = preset("tiny")
    EW, W = synthetic_engine_weights(cfg, seed=0, device="cpu", reference=True)
    before = {n: W[n].clone() for n in W if n.endswith("down_proj.weight")}
    holder = {}
    _emulate_kernels(monkeypatch, holder)
    import qwen_engine.step as S
    from qwen_engine.gemv import gemv_reference
    def exact_gemv(q, sc, x, epi=0, res=None, out=None, **kw):            # the kernel's arithmetic: exact fp8 products, one rounding
        out.copy_(gemv_reference(q.view(torch.float8_e4m3fn), sc, x, epi, res).to(torch.bfloat16)); return out
    monkeypatch.setattr(S, "engine_gemv", exact_gemv)
    st = holder["step"] = DecodeStep(cfg, EW, max_context=128, keep_logits=True, device="cpu")
    r = layerwise(st, W, EW, cfg, [791, 6722, 315, 9625, 374, 12366, 13, 578, 6722, 315, 9635, 374] * 4)
    assert r["engine_pass"] and r["negative_control_fails"], r
    assert r["worst"]["negative_rope_1e4"][1] in cfg.full_layers           # caught where it is wrong: at an attention layer
    assert all(torch.equal(W[n], v) for n, v in before.items())


def test_decode_record_pdl_layerwise_and_tiny():
    "The recorded verdicts follow their rules from the recorded numbers; PDL changes no bit; the exact-scale tiny model matches."
    d = _decode_record()
    p = d["pdl"]
    assert p["graph_bit_identical"] and p["eager_bit_identical"] and p["steps"] >= 128
    assert d["speed"]["1024"]["pdl"] is True and d["speed"]["1024"]["ms"] < d["speed"]["pdl_off"]["1024"]
    lw = d["layerwise"]
    ok = lambda key: all(e <= 1.5 * v + 1e-3 for view in ("stream", "increment") for e, v in zip(lw[view][key], lw[view]["envelope"]))
    assert lw["engine_pass"] == ok("engine") and lw["negative_control_fails"] == (not ok("negative_rope_1e4"))
    p2 = d["pow2"]
    env = p2["envelope_tiles"]
    ok2 = lambda a: a["top1"] >= env["top1"] - 0.01 and a["p999"] <= 2 * max(env["p999"], 1e-6)
    assert p2["engine_pass"] == ok2(p2["engine"]) and p2["negative_control_fails"] == (not ok2(p2["negative_rope_1e4"]))
    import json
    from qwen_engine.runtime import repo_root
    t = json.loads((repo_root() / "results" / "decode_tiny_h200.json").read_text())["data"]
    assert t["tiny_pow2"]["identical"] and t["tiny_pow2"]["tokens"] >= 32 and t["tiny_pow2"]["scales"] == "pow2"


# Chapter 08's z split (a measurement, not the engine's): its GDN builds load the q|k|v row coherently (__ldcg), so even
# 100, released before its wait, keeps it below the wait (its first build did not: gdn_zsplit_first_h200.json); v33
# streams z before its epilogue's wait (weights, x, scales: complete before it starts) and reads mix and 1 / rms after it.
_V7_WAIT = {"LDG.E.128": 8, "LDG.E.U16": 16, "LDG.E.NA.128.CONSTANT": 4, "LDG.E.64.CONSTANT": 1}
ZSPLIT_PREWAIT = {
    "gdn_decode_v7<1, false, true, false, false, false, false, false, false, false, false, false, false, false, true, false, false, 0, false>": ("gdn", "gdn", dict(_V7_WAIT, **{"LDG.E.CONSTANT": 3}), "99"),
    "gdn_decode_v7<1, false, true, false, true, false, false, false, false, false, false, false, false, false, true, false, false, 0, false>": ("gdn", "gdn", dict(_V7_WAIT, **{"LDG.E.CONSTANT": 2}), "100"),
    "gemv_fp8_v33<2, 2, 3, 10, 8, true>": ("gemv", "gemv", {"LDG.E.NA.128.CONSTANT": 40, "LDG.E.128.CONSTANT": 20, "LDG.E.CONSTANT": 10}, "v33"),
}

# Chapter 08's log builds (variants 26-31; 26 is the engine's, GDN_LOG, in ENGINE_PREWAIT): v7's loads before the wait,
# and the log's slots (5 more 16-byte loads a thread, the staging loop); still no q|k|v|z load above the wait. v7 itself,
# the engine's GDN build before the log (set_gdn_log(None), a measurement now), keeps its audit. LOGP's staging loop runs a
# run-time count (29-31): ptxas unrolls it, 37 16-byte loads in its machine code, fewer issued.
LOG_PREWAIT = {f"gdn_decode_v7<1, false, true, false{', false' * 13}, {n}, {'true' if p else 'false'}>": ("gdn", "gdn", dict(_V7_WAIT, **{"LDG.E.128": 37 if p else 13, "LDG.E.64.CONSTANT": 2, "LDG.E.CONSTANT": 3}), f"log {n}{p}")
               for n in (4, 8, 16) for p in ("", ", true") if (n, p) != (4, "")}
V7_PREWAIT = {f"gdn_decode_v7<1, false, true, false{', false' * 13}, 0, false>": ("gdn", "gdn", dict(_V7_WAIT, **{"LDG.E.64.CONSTANT": 2, "LDG.E.CONSTANT": 3}), "v7")}
# Chapter 08's 32 and 33 (v7 and 26 released before their wait, a measurement): their q|k|v|z and z loads coherent
# (LDCG), so neither is above the wait, where v7's REL build had its q|k|v|z load (the negative control below).
RELC_PREWAIT = {f"gdn_decode_v7<1, false, true, false, true{', false' * 12}, {n}, false, true>": ("gdn", "gdn", dict(_V7_WAIT, **{"LDG.E.128": 8 + 5 * (n > 0), "LDG.E.64.CONSTANT": 2, "LDG.E.CONSTANT": 2 + (n > 0)}), f"relc {n}")
                for n in (0, 4)}


def test_the_engines_gdn_build_is_the_log_build():
    "The step's GDN layers run GDN_LOG (26: N = 4) by default, its log sized for the model; set_gdn_log(None) is v7, an unknown variant is refused."
    from qwen_engine.step import DecodeStep, GDN_LOG, ENGINE_PREWAIT
    from qwen_engine.gdn import _LOG, LOGW
    cfg = preset("tiny")
    EW, _ = synthetic_engine_weights(cfg, seed=0, device="cpu")
    st = DecodeStep(cfg, EW, max_context=64, device="cpu")
    assert GDN_LOG == 26 and st.gdn_logv == 26 and _LOG[26] == 4
    assert tuple(st.gdn_logbuf.shape) == (len(cfg.linear_layers), cfg.linear_num_value_heads, 3, LOGW)
    assert any(k.startswith("gdn_decode_v7<") and k.endswith(", 4, false>") for k in ENGINE_PREWAIT)
    assert not any(k.startswith("gdn_decode_v7<") and k.endswith(", 0, false>") for k in ENGINE_PREWAIT)
    st.set_gdn_log(None)
    assert st.gdn_logv is None and st.gdn_logbuf is None and st.graph is None
    with pytest.raises(ValueError, match="not a log variant"): st.set_gdn_log(7)


def test_prewait_audit_engine_builds():
    """The global loads each engine build issues before its grid wait (sm_90a SASS, nvcc) are exactly those ENGINE_PREWAIT
    (and SAMPLING_PREWAIT, a sampling step's; ZSPLIT_PREWAIT, chapter 08's z split; LOG_PREWAIT, its log builds) allows. Negative control: the GDN v7 build that releases its dependents before its wait (REL) is caught, its q|k|v|z
    load (LDG.E.U16.CONSTANT) scheduled above the wait, which made the step generate other tokens on the H200."""
    from qwen_engine.step import prewait_audit, ENGINE_PREWAIT, SAMPLING_PREWAIT
    rel = "gdn_decode_v7<1, false, true, false, true, false, false, false, false, false, false, false, false, false, false, false, false, 0, false>"
    a = prewait_audit(dict(ENGINE_PREWAIT, **SAMPLING_PREWAIT, **ZSPLIT_PREWAIT, **LOG_PREWAIT, **V7_PREWAIT, **RELC_PREWAIT, **{rel: ("gdn", "gdn", None, "REL")}))
    for b, v in {**ENGINE_PREWAIT, **SAMPLING_PREWAIT, **ZSPLIT_PREWAIT, **LOG_PREWAIT, **V7_PREWAIT, **RELC_PREWAIT}.items(): assert a[b] == v[2], (b, a[b], v[2])
    assert a[rel] is not None and a[rel].get("LDG.E.U16.CONSTANT") == 1
    assert a[rel] != V7_PREWAIT["gdn_decode_v7<1, false, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, 0, false>"][2]


def test_a_build_name_matches_its_symbol_with_defaulted_arguments_after_it():
    "prewait_audit's match: the build's arguments, then only defaulted ones (false, 0); a set one after them is another build."
    from qwen_engine.step import _names_build
    from qwen_engine.runtime import mangled_prefix
    sym = lambda n: mangled_prefix(n) + "vPKtS0_"                       # a symbol: the template, then the return and parameter types
    assert _names_build(sym("f<1, false, 0, false>"), "f<1, false>") and _names_build(sym("f<1, false>"), "f<1, false>")
    assert _names_build(sym("f<1, false, 4, false>"), "f<1, false, 4>")
    assert not _names_build(sym("f<1, false, 0, true>"), "f<1, false>")     # LDCG set: another build
    assert not _names_build(sym("f<1, false, 2>"), "f<1, false>") and not _names_build(sym("f<1, true>"), "f<1, false>")
    assert not _names_build(sym("f<1, false, 4, true>"), "f<1, false, 4>") and not _names_build(sym("fg<1, false>"), "f<1, false>")
    assert _names_build("finish_step", "finish_step") and not _names_build("finish_step2", "finish_step")


def test_prewait_audit_e_against_ek():
    """Chapter 06's claim about v26's early loads, by SASS: out_proj's E build (an always-true branch around its first run)
    has no load above the grid wait (ptxas predicates the branch and hoists the wait), its EK build (the branch's other side
    after the wait) keeps the first run there (2 rows x 3 steps, 3 scales), EK2 both runs; gate|up's E build keeps its
    first run, its EK build none. The E builds are the negative control: a claim of early loads there would fail."""
    from qwen_engine.step import prewait_audit, _W, _S
    b = lambda args: f"gemv_fp8_v26<{args}>"
    want = {b("4, 1, 1, 3, 12, 5, true, false, false"): {}, b("4, 1, 1, 3, 12, 5, true, true, false"): {_W: 6, _S: 3},
            b("4, 1, 1, 3, 12, 5, true, true, true"): {_W: 12, _S: 6},
            b("2, 1, 2, 2, 10, 8, true, false, false"): {_W: 4, _S: 4}, b("2, 1, 2, 2, 10, 8, true, true, false"): {}}
    a = prewait_audit({k: ("gemv", "gemv", None, "") for k in want})
    for k, v in want.items(): assert a[k] == v, (k, a[k], v)


def test_prewait_audit_covers_the_recorded_step():
    "Every build in the decode record's launch inventory (the engine's, by the tests that tie the record to it) is audited."
    from qwen_engine.step import ENGINE_PREWAIT
    from qwen_engine.runtime import read_record, mangled_prefix
    inv = read_record("decode_h200")["data"]["launches"]["by_kernel"]
    for k in inv:
        name = k.split(":", 1)[1]
        assert any(b == name or b.startswith(name[:-1] + ",") for b in ENGINE_PREWAIT), name
    assert mangled_prefix("gemv_fp8_v18<4, 1, 2, 1, 1, 3, true, 1, true>") == "_Z12gemv_fp8_v18ILi4ELi1ELi2ELi1ELi1ELi3ELb1ELi1ELb1EE"
    assert mangled_prefix("finish_step") == "finish_step"


# ---- the step's timeline (chapter 09a): the timeline build, its parser, its committed records ----------------------------

def _sass_functions(sass: str) -> dict:
    "{symbol: [instruction, ...]} of cuobjdump -sass text."
    import re
    out = {}
    for blk in sass.split("Function : ")[1:]:
        out[blk.split()[0]] = [m.group(1).strip() for l in blk.splitlines() if (m := re.search(r"/\*[0-9a-f]{4,}\*/\s+(.*?);", l))]
    return out


def test_timeline_build_is_off_by_default_and_changes_only_the_wait():
    """Without QE_TIMELINE=1 the runtime compiles as always; with -DQE_TIMELINE the wait of a kernel (embed_gather, sm_90a)
    gains two timer reads and two 16-byte stores and nothing else changes before it (the plain build has neither: the
    comparison can fail)."""
    import os
    from qwen_engine import runtime as R
    from qwen_engine.runtime import sass_tool, sass_of
    assert os.environ.get("QE_TIMELINE") != "1" and not R.TIMELINE and not any("QE_TIMELINE" in o for o in R.NVRTC_OPTIONS)
    if not all(sass_tool(t) for t in ("nvcc", "cuobjdump", "nvdisasm")): pytest.skip("needs nvcc, cuobjdump and nvdisasm (bash .ci/setup dev)")
    plain = _sass_functions(sass_of('#include "step.cu"\n'))["embed_gather"]
    tl = _sass_functions(sass_of('#define QE_TIMELINE 1\n#include "step.cu"\n'))["embed_gather"]
    timer = lambda ins: sum("SR_GLOBALTIMER" in s for s in ins)
    assert timer(plain) == 0 and timer(tl) == 2
    assert sum(s.startswith("STG.E.128") for s in tl) - sum(s.startswith("STG.E.128") for s in plain) == 2
    assert tl.index(next(s for s in tl if "SR_GLOBALTIMER" in s)) < tl.index("ACQBULK") < max(i for i, s in enumerate(tl) if "SR_GLOBALTIMER" in s)


def test_norm_late_build_releases_after_its_stores():
    """The residual norm's builds (sm_90a): the engine's releases its dependents (PREEXIT) after its grid wait (ACQBULK)
    and before its first load; the LATE build (results/explore_norm_late.py) only after its last store."""
    from qwen_engine.runtime import sass_tool, sass_of, mangled_prefix
    if not all(sass_tool(t) for t in ("nvcc", "cuobjdump", "nvdisasm")): pytest.skip("needs nvcc, cuobjdump and nvdisasm (bash .ci/setup dev)")
    f = _sass_functions(sass_of('#include "norms_kernels.cu"\n'))
    body = lambda name: next(v for k, v in f.items() if k.startswith(mangled_prefix(name)))
    last_store = lambda ins: max(i for i, s in enumerate(ins) if s.startswith("STG"))
    plain, late = body("rmsnorm_bf16_v1<5120, 320, 0, false, false, false>"), body("rmsnorm_bf16_v1<5120, 320, 0, false, true, false>")
    eng = body("rmsnorm_bf16_v1<5120, 320, 0, false, false, true>")                   # EW: its weight asked for before the wait
    first_access = lambda ins: min(i for i, s in enumerate(ins) if s.startswith(("LDG", "STG")))
    assert plain.index("ACQBULK") < plain.index("PREEXIT") < first_access(plain)
    assert late.index("PREEXIT") > last_store(late) > late.index("ACQBULK")
    assert first_access(eng) < eng.index("ACQBULK") < eng.index("PREEXIT") < last_store(eng)


def test_step_norms_are_the_ew_build(monkeypatch):
    """The step asks for every residual norm (2 a layer and the final one) as the EW build, the weight before the wait
    (chapter 09a, norm_early_h200.json); `norm_ew = set()` is the plain build everywhere, and a released or LATE norm is never EW."""
    from qwen_engine.step import DecodeStep
    cfg = preset("tiny")
    EW, _ = synthetic_engine_weights(cfg, seed=0, device="cpu")
    holder = {}
    _emulate_kernels(monkeypatch, holder)
    import qwen_engine.step as S
    calls, emulated = [], S.rmsnorm
    monkeypatch.setattr(S, "rmsnorm", lambda *a, **kw: (calls.append((kw.get("early", False), kw.get("late", False), kw.get("rel", False))), emulated(*a, **kw))[1])
    st = holder["step"] = DecodeStep(cfg, EW, max_context=64, device="cpu")
    st.reset([791, 6722], 1)
    n = 2 * cfg.num_hidden_layers + 1
    for ew, release, want in (({"ln1", "ln2", "final"}, set(), (True, False, False)), (set(), set(), (False, False, False)),
                              ({"ln1", "ln2", "final"}, {"norm_late"}, (False, True, False)), ({"ln1", "ln2", "final"}, {"norm"}, (False, False, True))):
        calls.clear(); st.norm_ew, st.release = ew, release
        st.body()
        assert calls == [want] * n, (ew, release, calls[:3])
    assert DecodeStep(cfg, EW, max_context=64, device="cpu").norm_ew == {"ln1", "ln2", "final"}


def _explore(name):
    import importlib.util, sys
    from qwen_engine.runtime import repo_root
    sys.path.insert(0, str(repo_root() / "results"))
    try:
        spec = importlib.util.spec_from_file_location(name, repo_root() / "results" / f"{name}.py")
        m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m
    finally: sys.path.pop(0)


def test_timeline_records_split_into_tokens():
    """explore_timeline.tokens_of: records (gridid, sm, block, t_wait, t_after) sorted by launch split into whole tokens of
    L launches, each launch's blocks together; a count of launches that is not a whole number of tokens is refused."""
    import numpy as np
    E = _explore("explore_timeline")
    rows = [(g, b % 2, b, 1000 * g + b, 1000 * g + 10 + b) for g in range(10, 18) for b in range(3)]
    tk = E.tokens_of(np.array(rows), 4)
    assert [len(t) for t in tk] == [4, 4] and tk[1][0][:, 0].tolist() == [14] * 3 and tk[0][3][:, 2].tolist() == [0, 1, 2]
    assert E.tokens_of(np.array(rows), 3) is None


def timeline_problems(d: dict, launches: int) -> list:
    "What is wrong with a timeline record's data (empty: nothing)."
    bad = []
    for ctx in ("1024", "32768"):
        c = d["contexts"][ctx]
        rows = c["rows"]
        if len(rows) != launches: bad.append(f"{ctx}: {len(rows)} launches")
        if c["tokens"] < 12 or c["bad_batches"]: bad.append(f"{ctx}: {c['tokens']} tokens, bad batches {c['bad_batches']}")
        for r in rows:
            if not r["reach_first"] <= r["release_first"] <= r["release_last"] + 1e-9: bad.append(f"{ctx} {r['i']}: order")
            if r["blocks_seen"] != min(r["blocks"], d.get("tl_blocks", 8192)): bad.append(f"{ctx} {r['i']}: {r['blocks_seen']} of {r['blocks']} blocks")
            if r["i"] < len(rows) - 1 and not r["price_mean"] > 0: bad.append(f"{ctx} {r['i']}: price {r['price_mean']}")
        total = sum(r["price_mean"] or 0 for r in rows) / 1e3
        replay = sorted(d["timeline_ms"][ctx])[1]
        if not 0.97 * replay <= total <= 1.01 * replay: bad.append(f"{ctx}: prices add to {total:.3f} ms, a replay {replay:.3f}")
    return bad


def test_timeline_records_are_whole_and_add_up():
    """The committed timelines (engine, without the residual norms, the input norms LATE): every launch of the token with
    all its blocks, in order, twelve tokens at each context; the prices add up to a replay of the timeline build (less
    its last launch and the graph's own start); the plain build's greedy tokens are the timeline build's. Negative
    control: a record with one launch's release moved past its successor's, or one launch dropped, is flagged."""
    import copy, json
    from qwen_engine.runtime import repo_root
    rec = lambda n: json.loads((repo_root() / "results" / f"{n}.json").read_text())["data"]
    for name, launches in (("step_timeline_h200", 453), ("step_timeline_no_norms_h200", 324), ("step_timeline_ln1_late_h200", 453),
                           ("step_timeline_ends_h200", 453), ("step_timeline_now_h200", 453),
                           ("step_timeline_log_h200", 453)):
        d = rec(name)
        assert timeline_problems(d, launches) == [], name
        if "plain_tokens" in d: assert d["tokens_equal"] and d["plain_tokens"] == d["timeline_tokens"], name
    d = rec("step_timeline_h200")
    moved = copy.deepcopy(d); r = moved["contexts"]["1024"]["rows"][205]; r["release_first"] = r["release_last"] + 1
    assert timeline_problems(moved, 453)
    dropped = copy.deepcopy(d); del dropped["contexts"]["32768"]["rows"][100]
    assert timeline_problems(dropped, 453)
    assert rec("norm_late_h200")["tokens"]["norm_late"] == rec("norm_late_h200")["tokens"]["engine"]


def test_timeline_gemv_and_gateup_chain_records():
    """Chapter 06's reading of the token of GEMVs in the timeline build: each of its five graphs recorded the token's 258
    launches in order (256 GEMVs of the model's shapes, the head, its argmax), each with its blocks, every price positive,
    the prices adding up to the graph's median ms within 3 % below (the last launch, the graph's start) and 1 % above (the recorded replay is the last of ten, not the median). The gate|up neighbours timed in
    the step were bit-identical to the engine's kernel and generated its tokens."""
    import json
    from qwen_engine.runtime import repo_root
    from qwen_engine.config import preset
    rec = lambda n: json.loads((repo_root() / "results" / f"{n}.json").read_text())["data"]
    c = preset("qwen3_5_27b")
    d = rec("timeline_gemv_h200")
    assert len(d["graphs"]) == 5
    for g in d["graphs"]:
        rows = g["rows"]
        assert len(rows) == 4 * c.num_hidden_layers + 2
        assert sum(1 for r in rows if r["shape"] == [34816, 5120, 2]) == 64 and sum(1 for r in rows if r["shape"] == [5120, 17408, 1]) == 64
        assert all(r["reach_first"] <= r["release_first"] <= r["release_last"] + 1e-9 for r in rows)
        assert all(r["price"] > 0 for r in rows[:-1]) and rows[-1]["price"] is None
        total = sum(r["price"] for r in rows[:-1]) / 1e3
        assert 0.97 * g["token"]["ms"] <= total <= 1.01 * g["token"]["ms"], (total, g["token"]["ms"])   # ms: the median of 10 replays; the record: the last
    gc = rec("gateup_chain_h200")
    first = next(iter(gc["plans"]))
    assert len(gc["versus_engine"]) == 3 and all(v["identical"] for vs in gc["versus_engine"].values() for v in vs)
    assert all(gc["tokens"][p] == gc["tokens"][first] for p in gc["plans"])


def test_block_ends_and_one_block_an_sm_records():
    """Chapter 06's reading of the blocks' ends (step_timeline_ends_h200: every block of one layer, each GEMV block with its
    end, gate|up's 8,704 all there) and of one block an SM: gemv_oneblock_h200's taken plan and gemv_oneblock2_h200's losers,
    every build bit-identical to the engine's kernel with the engine's greedy tokens; on the shapes of more than one round
    every plan slower than the engine in every repeat (what the chapter says lost)."""
    import json
    from qwen_engine.runtime import repo_root
    rec = lambda n: json.loads((repo_root() / "results" / f"{n}.json").read_text())["data"]
    e = rec("step_timeline_ends_h200")
    assert e["tl_blocks"] == 16384 and set(e["blocks_1k"]) == {str(i) for i in range(202, 209)}
    sizes = {b["label"].split(":")[-1]: len(b["release"]) for b in e["blocks_1k"].values()}
    assert sizes["gemv_fp8_v26<2, 1, 2, 2, 10, 8>"] == 8704 and sizes["gemv_fp8_v26lp<4, 1, 1, 2, 34, 5, true, true, 2>"] == 640
    for b in e["blocks_1k"].values():
        if "gemv_fp8" in b["label"]: assert all(x is not None and x > r for x, r in zip(b["end"], b["release"]))
    for name in ("gemv_oneblock_h200", "gemv_oneblock2_h200"):
        d = rec(name)
        assert all(v["identical"] for vs in d["versus_engine"].values() for v in vs)
        assert all(d["tokens"][p] == d["tokens"]["engine"] for p in d["plans"])
    d = rec("gemv_oneblock2_h200")
    ms = lambda p, c: [t["ms"] for t in d["timings"] if t["plan"] == p and t["ctx"] == c]
    for p in d["plans"]:
        if p != "engine": assert all(min(ms(p, c)) > max(ms("engine", c)) for c in (1024, 32768)), p


def test_gemv_exploration_switches_pick_one_build_and_the_await_number_is_used_once():
    """DecodeStep._gemv_exploration (chapter 09a's measurement switches): off, every GEMV is the engine's (None); the await
    hand-off's number goes to the next GEMV only and is then spent; the count hand-off's producers (epi 1) count, fenced or
    not; v38's shapes read coherently; nothing else changes."""
    from types import SimpleNamespace
    from qwen_engine.step import DecodeStep
    st = SimpleNamespace(_await=0, count_handoff=None, gemv_ca=set(), handoff_trg=0, nflag="flag", counted="count", done="done")
    pick = lambda N, K, epi: DecodeStep._gemv_exploration(st, N, K, epi)
    assert [pick(16384, 5120, 0), pick(5120, 17408, 1)] == [None, None]
    st.count_handoff, st._await = "await", 3
    assert pick(16384, 5120, 0) == {"await": ("flag", 3)} and st._await == 0 and pick(34816, 5120, 2) is None
    assert pick(5120, 17408, 1) == {"dnf": "count"}
    st.count_handoff = "nofence"
    assert pick(5120, 6144, 1) == {"dn": "count"}
    st.count_handoff, st.gemv_ca = None, {(34816, 5120, 2)}
    assert pick(34816, 5120, 2) == {"ca": True} and pick(16384, 5120, 0) is None
