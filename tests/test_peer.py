"""The library peer step on CPU at the tiny config: its GEMM contract, its plumbing (bit-identical first step with the
reference's arithmetic), its fp8 envelope, and negative controls that must break each check."""
import pytest, torch
import torch.nn.functional as F
from qwen_engine.checkpoint import write_synthetic, open_checkpoint, load_engine_weights, weight, quantize
from qwen_engine.peer import (PeerStep, quantize_act, scaled_mm_emulated, teacher_forced, reference_logits, rel_rms,
                              PLUMB_TOL, FP8_TOL0, BLOCK, M_PAD)

IDS = [151, 9707, 11, 1879, 13, 576, 3974, 17]

@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = write_synthetic("tiny", tmp_path_factory.mktemp("tiny"), seed=0, progress=False)
    ck = open_checkpoint(d)
    W = {n: weight(ck, n) for n in ck.specs}
    return ck.cfg, load_engine_weights(ck, progress=False), W, reference_logits(W, ck.cfg, IDS)

def test_scale_layouts_are_what_scaled_mm_accepts():
    "torch's checks for 1x128 (a) and 128x128 (b) block scales: strides (1, M) and scale_b.t() row-major."
    K, N = 512, 256
    saT = torch.ones(K // BLOCK, M_PAD)
    sa = saT.t()
    assert sa.shape == (M_PAD, K // BLOCK) and sa.stride() == (1, M_PAD)
    ws = torch.ones(N // BLOCK, K // BLOCK)
    assert ws.t().shape == (K // BLOCK, N // BLOCK) and ws.t().t().is_contiguous()

@pytest.mark.parametrize("seed", [0, 1])
def test_quantised_gemm_within_fp8_bound(seed):
    "e4m3 rounding: |x - q s| <= 2^-4 |x| + 2^-10 s per element; the product obeys the summed bound plus one bf16 rounding."
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(512, generator=g) * torch.logspace(-3, 1, 512)).to(torch.bfloat16)
    xq, saT = torch.zeros(M_PAD, 512, dtype=torch.float8_e4m3fn), torch.ones(512 // BLOCK, M_PAD)
    quantize_act(x, xq, saT.t())
    assert torch.equal(xq[1:].float(), torch.zeros(M_PAD - 1, 512))                       # padding rows untouched
    s = saT.t()[0].repeat_interleave(BLOCK)
    wq, ws = quantize(torch.randn(384, 512, generator=g) / 512**0.5, scale_dtype=torch.float32)
    wd = wq.float() * ws.repeat_interleave(BLOCK, 0).repeat_interleave(BLOCK, 1)
    y = scaled_mm_emulated(xq, wq.t(), saT.t(), ws.t())[0].float()
    y_ref = wd @ x.float()
    bound = wd.abs() @ (2**-4 * x.float().abs() + 2**-10 * s) + y_ref.abs() * 2**-8
    assert ((y - y_ref).abs() <= bound).all()
    # negative control: scales of the wrong block (a layout slip) break the bound
    bad = scaled_mm_emulated(xq, wq.t(), saT.t().roll(1, 1), ws.t())[0].float()
    assert not ((bad - y_ref).abs() <= bound).all()

def _plumbing(cfg, EW, **kw):
    return teacher_forced(PeerStep(cfg, EW, 64, "cpu", act_dtype=torch.float32, emulate="reference", **kw), IDS)

def test_plumbing_matches_reference(tiny):
    """Without activation rounding and with the reference's GEMM arithmetic: step 0 bit-identical; later steps differ only
    by SDPA's fp32 scores (reference rounds them to bf16): rel. RMS <= 1 % (measured <= 0.50 %), same greedy tokens."""
    cfg, EW, W, ref = tiny
    V = cfg.text_vocab_size
    out = _plumbing(cfg, EW)
    assert torch.equal(out[0], ref[0])
    errs = [rel_rms(a[:V], b[:V]) for a, b in zip(out, ref)]
    assert max(errs) <= PLUMB_TOL, errs
    assert [int(a[:V].argmax()) for a in out] == [int(b[:V].argmax()) for b in ref]

def test_plumbing_negative_control_rope_base(tiny):
    "A wrong RoPE base (1e4 instead of 1e7) must leave the plumbing envelope (measured 1.4-14 % from step 1)."
    cfg, EW, W, ref = tiny
    V = cfg.text_vocab_size
    out = _plumbing(cfg, EW, rope_base=1e4)
    assert max(rel_rms(a[:V], b[:V]) for a, b in zip(out, ref)) > PLUMB_TOL

def test_fp8_envelope(tiny):
    "fp8 activations (what cuBLAS multiplies): step-0 logits within 15 % rel. RMS of the reference (measured 8.5 %; 6.7-9.5 % under GEMM noise of 2^-12)."
    cfg, EW, W, ref = tiny
    V = cfg.text_vocab_size
    out = teacher_forced(PeerStep(cfg, EW, 64, "cpu"), IDS)
    assert rel_rms(out[0][:V], ref[0][:V]) <= FP8_TOL0
    assert int(out[0][:V].argmax()) == int(ref[0][:V].argmax())

def test_fp8_negative_control_scale_slip(tiny):
    "Activation scales written one block off (a layout slip) must leave the fp8 envelope."
    cfg, EW, W, ref = tiny
    V = cfg.text_vocab_size
    peer = PeerStep(cfg, EW, 64, "cpu")
    def slipped(x, xq, sa):
        quantize_act(x, xq, sa)
        sa[0].copy_(sa[0].roll(1))
    peer._quantize = slipped
    out = teacher_forced(peer, IDS[:1])
    assert rel_rms(out[0][:V], ref[0][:V]) > FP8_TOL0

def test_control_tensor_advances_and_greedy(tiny):
    "body() leaves ctl = (position + 1, argmax over real ids of its logits); reset replays the prompt."
    cfg, EW, W, ref = tiny
    peer = PeerStep(cfg, EW, 64, "cpu")
    peer.reset(IDS[:3])
    assert peer.ctl.tolist() == [2, IDS[2]]
    peer.body()
    assert int(peer.ctl[0]) == 3
    assert int(peer.ctl[1]) == int(peer.logits[:cfg.text_vocab_size].float().argmax())
    assert int(peer.ctl[1]) < cfg.text_vocab_size

def _dispatched(fn):
    "Names of the aten ops fn() dispatches, in order."
    from torch.utils._python_dispatch import TorchDispatchMode
    names = []
    class Rec(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            names.append(func.overloadpacket.__name__)
            return func(*args, **(kwargs or {}))
    with Rec(): fn()
    return names

HOST_READS = {"_local_scalar_dense", "nonzero", "masked_select", "item"}

def test_body_is_graph_safe(tiny):
    """What one captured graph needs: no device-to-host read (an .item() or data-dependent shape) in body(), and the
    same op sequence at every position (nothing on the host changes per token). Negative control: reading the
    position to the host is caught."""
    cfg, EW, W, ref = tiny
    peer = PeerStep(cfg, EW, 64, "cpu")
    peer.reset(IDS[:2])
    a = _dispatched(peer.body)
    for _ in range(5): peer.body()
    b = _dispatched(peer.body)
    assert not HOST_READS & set(a), HOST_READS & set(a)
    assert a == b
    assert "_local_scalar_dense" in _dispatched(lambda: int(peer.ctl[0]))

def test_fla_call_is_by_keyword():
    "The emulation takes exactly the keywords the peer passes to FLA (FLA_KWARGS, checked against FLA on the GPU), none positionally."
    import inspect
    from qwen_engine.peer import recurrent_emulated, FLA_KWARGS
    ps = inspect.signature(recurrent_emulated).parameters
    assert {n for n, p in ps.items() if p.kind is p.KEYWORD_ONLY} == set(FLA_KWARGS)
    with pytest.raises(TypeError): recurrent_emulated(*[None] * 5)                      # a positional beta would be FLA's gk

def _mm64(a, b, scale_a, scale_b, out_dtype=torch.bfloat16):
    "A block-scaled GEMM with another accumulation (fp64): what cuBLAS may legitimately differ by."
    K, N = b.shape
    A = a.double() * scale_a.double().repeat_interleave(BLOCK, 1)[:, :K]
    B = b.double() * scale_b.double().repeat_interleave(BLOCK, 0)[:K].repeat_interleave(BLOCK, 1)[:, :N]
    return (A @ B).to(out_dtype)

def test_gpu_gemm_check_accepts_other_accumulation_rejects_scale_slip():
    "check_gemm (run on the GPU with torch._scaled_mm) passes a correct GEMM and fails a permuted weight-scale layout."
    from qwen_engine.peer import check_gemm, GEMM_TOL
    wq, ws = quantize(torch.randn(640, 768, generator=torch.Generator().manual_seed(0)) / 768**0.5, scale_dtype=torch.float32)
    assert check_gemm(wq, ws, mm=_mm64) <= GEMM_TOL
    slip = lambda a, b, scale_a, scale_b, out_dtype: scaled_mm_emulated(a, b, scale_a, scale_b.flip(0), out_dtype)
    assert check_gemm(wq, ws, mm=slip) > GEMM_TOL

def _fla_like(q, k, v, *, g, beta, scale, initial_state, A_log, dt_bias, **kw):
    "FLA's arithmetic as the kernel does it: fp32 inputs, sigmoid(beta) in fp32."
    from qwen_engine.reference import gdn_recurrent
    gg = -A_log.float().exp() * F.softplus(g.float() + dt_bias)
    o, S = gdn_recurrent(q.float(), k.float(), v.float(), gg, beta.float().sigmoid(), initial_state)
    return o.to(q.dtype), S

@pytest.mark.parametrize("H,HV", [(2, 6), (16, 48)], ids=["tiny", "qwen3_5_27b"])
def test_gpu_fla_check_accepts_kernel_arithmetic_rejects_head_map(H, HV):
    "check_fla passes FLA-like arithmetic (measured <= 0.3 %) and fails value heads mapped to key heads modulo H."
    from qwen_engine.peer import check_fla, FLA_TOL
    r = check_fla(H, HV, 128, 128, "cpu", recurrent=_fla_like)
    assert max(r.values()) <= FLA_TOL, r
    wrong = lambda q, k, v, **kw: _fla_like(q.repeat(1, 1, HV // H, 1), k.repeat(1, 1, HV // H, 1), v, **kw)
    assert max(check_fla(H, HV, 128, 128, "cpu", recurrent=wrong).values()) > FLA_TOL

def test_gpu_sdpa_check_on_cpu():
    "The masked SDPA over a longer cache matches `attend` over the valid keys (reference rounds scores: measured 0.5 %)."
    from qwen_engine.peer import check_sdpa, SDPA_TOL
    from qwen_engine.config import preset
    assert check_sdpa(preset("qwen3_5_27b"), L=1000, max_context=1024, device="cpu") <= SDPA_TOL
