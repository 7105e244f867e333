"""The library peer step on CPU at the tiny config: its GEMM contract (cuBLAS's scale layout included), its plumbing
(bit-identical first step with the reference's arithmetic), the end-to-end check the GPU runs, and negative controls
that must break each check."""
import pytest, torch
import torch.nn.functional as F
from qwen_engine.checkpoint import write_synthetic, open_checkpoint, load_engine_weights, weight, quantize
from qwen_engine.peer import (PeerStep, quantize_act, scaled_mm_emulated, scaled_mm_cublas, cublas_operands, teacher_forced,
                              reference_logits, rel_rms, check_end_to_end, end_to_end, PLUMB_TOL, GEMM_TOL, BLOCK, M_PAD, K_ALIGN)

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

def _one_gemm(wq, ws, x, mm):
    xq, saT = torch.zeros(M_PAD, wq.shape[1], dtype=torch.float8_e4m3fn), torch.ones(wq.shape[1] // BLOCK, M_PAD)
    quantize_act(x, xq, saT.t())
    return mm(xq, wq.t(), saT.t(), ws.t())[0]

@pytest.mark.parametrize("K", [256, 512, 768, 3072, 5120])
def test_cublas_scale_layout(K):
    """cuBLAS reads 128x128 weight scales with rows of round_up(K/128, 4) blocks. The peer's operands (`cublas_operands`)
    give the intended product bit for bit under that addressing at every K; the checkpoint's layout as the first H200
    run passed it is misread exactly when K/128 is not a multiple of 4 (K = 256, 768: the tiny model's failing GEMMs)."""
    g = torch.Generator().manual_seed(K)
    wq, ws = quantize(torch.randn(384, K, generator=g) / K**0.5, scale_dtype=torch.float32)
    x = torch.randn(K, generator=g).to(torch.bfloat16)
    intended = _one_gemm(wq, ws, x, scaled_mm_emulated)
    wp, sp = cublas_operands(wq, ws)
    assert wp.shape[1] % K_ALIGN == 0 and sp.shape == (3, wp.shape[1] // BLOCK) and sp.is_contiguous()
    assert torch.equal(_one_gemm(wp, sp, x, scaled_mm_cublas), intended)
    if (K // BLOCK) % 4 == 0:
        assert wp is wq or torch.equal(wp.float(), wq.float())                       # nothing padded where nothing is needed
        assert torch.equal(_one_gemm(wq, ws, x, scaled_mm_cublas), intended)
    else:                                                                            # negative control: the old layout
        with pytest.raises(RuntimeError): _one_gemm(wq, ws, x, scaled_mm_cublas)      # reads past the end of the scales

def test_old_layout_misreads_inside_a_larger_buffer():
    "Where the scales sit inside a larger buffer cuBLAS reads the neighbours' instead of failing: so does the emulation."
    g = torch.Generator().manual_seed(5)
    wq, ws = quantize(torch.randn(512, 256, generator=g) / 16, scale_dtype=torch.float32)
    x = torch.randn(256, generator=g).to(torch.bfloat16)
    buf = torch.full((64,), 7.0); buf[:ws.numel()] = ws.flatten()
    wrong = _one_gemm(wq, buf[:ws.numel()].view_as(ws), x, scaled_mm_cublas)
    assert rel_rms(wrong, _one_gemm(wq, ws, x, scaled_mm_emulated)) > 0.5

def test_peer_keeps_every_weight_in_cublas_layout(tiny):
    "Every fp8 operand of the step has K a multiple of 512 and contiguous [N/128, K/128] scales; the MLP width is the unpadded one."
    cfg, EW, W, ref = tiny
    peer = PeerStep(cfg, EW, 64, "cpu")
    ops = [v for L in peer.layers for v in L.values() if isinstance(v, tuple)]
    assert len(ops) == 4 * len(peer.layers)
    for wq, ws in ops:
        assert wq.shape[1] % K_ALIGN == 0 and ws.is_contiguous() and ws.shape == (wq.shape[0] // BLOCK, wq.shape[1] // BLOCK)
    assert {wq.shape[1] for wq, _ in ops} >= {512, 1024}                             # K = 256 and 768 were padded

IDS5 = IDS[:5]

@pytest.fixture(scope="module")
def e2e(tiny):
    cfg, EW, W, ref = tiny
    return check_end_to_end(cfg, EW, W, IDS5, "cpu")

def test_end_to_end_check_passes_the_peer(e2e):
    """The check the GPU runs, with the library calls emulated: plumbing within PLUMB_TOL, every call in situ exact up to
    order (CPU: M = 1 against M = 16 rows), fp8 mean within the measured envelope."""
    assert e2e["plumbing_ok"] and e2e["in_situ_ok"] and e2e["fp8_ok"] and e2e["ok"], {k: e2e[k] for k in ("plumbing", "in_situ", "fp8_mean", "fp8_bound")}
    assert e2e["in_situ"]["gemm_calls"] == 16 * len(IDS5) and e2e["in_situ"]["fla_calls"] == 3 * len(IDS5)
    assert 0.05 < e2e["fp8_bound"] < 1.0                                              # measured, not chosen: 1.5 x ~0.2

def test_end_to_end_check_fails_planted_faults(e2e):
    "Negative controls: wrong RoPE base fails the plumbing (measured 5 % by step 4), swapped gate/up fails plumbing and fp8."
    n = e2e["negative_controls"]
    assert e2e["negative_controls_fail"] and not n["rope_1e4"]["plumbing_ok"]
    assert not n["gate_up_swapped"]["plumbing_ok"] and not n["gate_up_swapped"]["fp8_ok"]

def test_end_to_end_in_situ_catches_a_scale_misread(tiny, e2e):
    "A library GEMM that reads the weight scales one N-block off (a layout slip like the first run's) fails in situ."
    cfg, EW, W, ref = tiny
    slip = lambda a, b, scale_a, scale_b, out_dtype: scaled_mm_emulated(a, b, scale_a, scale_b.roll(1, 1), out_dtype)
    r = end_to_end(cfg, EW, W, IDS5[:2], "cpu", e2e["envelope"], reference_logits(W, cfg, IDS5[:2]), lib_calls=(slip, None))
    assert not r["in_situ_ok"] and r["in_situ"]["gemm"] > GEMM_TOL and not r["ok"], r["in_situ"]

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

@pytest.mark.parametrize("K", [256, 768], ids=["tiny_hidden", "tiny_out_proj"])
def test_gpu_gemm_check_sees_cublas_layout(K):
    "check_gemm with cuBLAS's scale addressing: the peer's layout passes; the checkpoint layout (the first run's) fails."
    from qwen_engine.peer import check_gemm, GEMM_TOL
    wq, ws = quantize(torch.randn(1024, K, generator=torch.Generator().manual_seed(K)) / K**0.5, scale_dtype=torch.float32)
    assert check_gemm(wq, ws, mm=scaled_mm_cublas) <= GEMM_TOL
    as_first_run = lambda w, s: (w.contiguous(), s.float().contiguous())
    with pytest.raises(RuntimeError): check_gemm(wq, ws, mm=scaled_mm_cublas, layout=as_first_run)

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

def test_end_to_end_passes_a_library_that_differs_as_cublas_and_fla_do(tiny, e2e):
    "Library calls with another accumulation (fp64) and FLA's fp32 sigmoid: in situ within tolerance, fp8 within the envelope."
    cfg, EW, W, ref = tiny
    r = end_to_end(cfg, EW, W, IDS5, "cpu", e2e["envelope"], reference_logits(W, cfg, IDS5), lib_calls=(_mm64, _fla_like))
    assert r["ok"], {k: r[k] for k in ("in_situ", "fp8_mean", "fp8_bound")}
    assert r["in_situ"]["gemm"] > 0 and r["in_situ"]["fla_o"] > 0                       # the calls did differ
