"Chapter 08 on the CPU: state layouts, the reference decode step, the kernel's emulation against the reference over long sequences, and negative controls."
import pytest, torch
from qwen_engine import reference as R
from qwen_engine.config import preset, PREFIX
from qwen_engine.gdn import (gdn_state, state_from_reference, state_to_reference, rec_to_image, image_to_rec, gdn_emulated, reference_core,
                             gdn_params, layer_weights, key_permutation, permuted_copy, unpermute_rec, drift, judge, gdn_decode, RING, TOL_FACTOR)

TINY = preset("tiny")

@pytest.fixture(autouse=True, scope="module")
def one_thread():
    "Small tensors: one intra-op thread is faster than several fighting over 2 shared cores (restored after this file)."
    n = torch.get_num_threads(); torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)

def test_image_layout_places_each_element_where_its_lane_loads_it():
    S = torch.arange(2 * 128 * 128, dtype=torch.float32).reshape(2, 128, 128)
    img = rec_to_image(S)
    assert img.shape == (2, 16, 8, 32, 4)
    for h, i, j in ((0, 0, 0), (1, 5, 9), (1, 127, 127), (0, 42, 77)):
        assert img[h, j // 8, j % 8, i // 4, i % 4] == S[h, i, j]
    flat = img[0].flatten()                                  # warp 0, load c = 1: 32 lanes x 4 rows of column j = 1
    assert torch.equal(flat[128:256], S[0, :, 1])
    assert torch.equal(image_to_rec(img), S)

@pytest.mark.parametrize("pos", [0, 3, 17, 1000])
def test_state_converters_round_trip(pos):
    g = torch.Generator().manual_seed(pos)
    conv = torch.randn(1, TINY.gdn_conv_dim, 4, generator=g).to(torch.bfloat16)
    rec = torch.randn(1, 6, 128, 128, generator=g)
    ring, img = state_from_reference(conv, rec, pos)
    assert ring.shape == (RING, TINY.gdn_conv_dim) and torch.equal(ring[(pos - 1) % RING], conv[0, :, 3])
    c2, r2 = state_to_reference(ring, img, pos)
    assert torch.equal(c2, conv) and torch.equal(r2, rec)
    c3, _ = state_to_reference(ring, img, pos + 1)           # negative control: the wrong position reads other slots
    assert not torch.equal(c3, conv)

def test_gdn_state_shapes():
    conv, rec = gdn_state(preset("qwen3_5_27b"), n_layers=2, device="meta")
    assert conv.shape == (2, RING, 10240) and conv.dtype == torch.bfloat16
    assert rec.shape == (2, 48, 16, 8, 32, 4) and rec.dtype == torch.float32 and rec[0].numel() * 4 == 3 * 2**20
    assert gdn_state(preset("qwen3_5_27b"), device="meta")[1].shape[0] == 48

def test_reference_core_is_reference_gdn_before_out_proj():
    "Bit for bit: out_proj(reference_core) == reference.gdn, and the states agree, over decode steps of a synthetic model."
    W = R.synthetic_weights(TINY, seed=1, mtp=False)
    i = TINY.linear_layers[1]
    p = f"{PREFIX}layers.{i}.linear_attn."
    g = torch.Generator().manual_seed(2)
    st = R.GDNState()
    R.gdn(torch.randn(1, 5, TINY.hidden_size, generator=g).to(torch.bfloat16), W, p, TINY, st)     # a prompt sets the state
    st2 = R.GDNState(st.conv.clone(), st.rec.clone())
    for _ in range(4):
        x = torch.randn(1, 1, TINY.hidden_size, generator=g).to(torch.bfloat16)
        want, _ = R.gdn(x, W, p, TINY, st)
        qkvz = torch.cat([R.linear(x, W[p + "in_proj_qkv.weight"]), R.linear(x, W[p + "in_proj_z.weight"])], -1)[0]
        core = reference_core(qkvz, x[0], W, p, TINY, st2)
        got = R.linear(core.reshape(1, 1, -1), W[p + "out_proj.weight"])
        assert torch.equal(got, want) and torch.equal(st.conv, st2.conv) and torch.equal(st.rec, st2.rec)

def test_permuted_twin_is_the_same_function():
    "The noise measure: the key-permuted twin agrees with the reference to fp32 rounding, and is not bit-identical (it does reorder)."
    ser, ok = drift(TINY, 40, device="cpu", seed=3)
    assert ok and max(ser["rec_noise"]) < 1e-5 * max(ser["rec_max"]) and max(ser["rec_noise"]) > 0

@pytest.mark.parametrize("state_dtype,T", [(torch.float32, 1000), (torch.bfloat16, 200)], ids=["fp32-1000tok", "bf16state-200tok"])
def test_emulation_tracks_reference_over_long_sequences(state_dtype, T):
    ser, ok = drift(TINY, T, state_dtype, device="cpu")
    v = judge(ser, ok, who="emul_")
    assert v["conv_state_identical"]
    assert v["emul_rec"]["ok"], v["emul_rec"]
    assert v["emul_out"]["ok"], v["emul_out"]
    half = len(ser["rec_emul_err"]) // 2                     # no growth: the late error is not above the early tolerance
    assert max(ser["rec_emul_err"][half:]) <= v["emul_rec"]["tol"]

def _one_token(seed=5, M=1, sd=torch.float32):
    g = torch.Generator().manual_seed(seed)
    P = gdn_params(layer_weights(TINY, seed), "L.")
    conv, rec = gdn_state(TINY, 2, "cpu", sd)
    conv.copy_(torch.randn(conv.shape, generator=g)); rec.copy_(0.05 * torch.randn(rec.shape, generator=g))
    qkvz = torch.randn(M, TINY.gdn_conv_dim + TINY.gdn_value_dim, generator=g).to(torch.bfloat16)
    x = torch.randn(M, TINY.hidden_size, generator=g).to(torch.bfloat16)
    return P, conv, rec, qkvz, x

def _vs_reference(P, conv, rec, qkvz, x, pos, layer=1, **kw):
    "One emulated token vs reference_core from the same (converted) state: max |out error| and max |state error|."
    W = layer_weights(TINY, 5)
    st = R.GDNState(*state_to_reference(conv[layer], rec[layer], pos))
    ref = reference_core(qkvz, x, W, "L.", TINY, st)
    out = gdn_emulated(qkvz, x, *P.values(), conv, rec, layer, pos, TINY, **kw)
    return (out.float() - ref.float()).abs().max().item(), (image_to_rec(rec[layer])[None] - st.rec).abs().max().item()

def test_single_token_matches_and_negative_controls_fail():
    P, conv, rec, qkvz, x = _one_token()
    e_out, e_rec = _vs_reference(P, conv.clone(), rec.clone(), qkvz, x, pos=12)
    assert e_out <= 2 ** -6 and e_rec < 1e-6
    # wrong head mapping: key heads swapped in the input -> value head h reads the other key head
    qs = qkvz.clone(); D = 128
    qs[:, :D], qs[:, D:2 * D] = qkvz[:, D:2 * D], qkvz[:, :D]
    qs[:, 256:256 + D], qs[:, 256 + D:512] = qkvz[:, 256 + D:512], qkvz[:, 256:256 + D]
    W = layer_weights(TINY, 5); st = R.GDNState(*state_to_reference(conv[1], rec[1], 12))
    ref = reference_core(qkvz, x, W, "L.", TINY, st)
    c2, r2 = conv.clone(), rec.clone()
    P2 = dict(P); cw = P["conv_w"].clone(); cw[:D], cw[D:2 * D] = P["conv_w"][D:2 * D], P["conv_w"][:D]; cw[256:256 + D], cw[256 + D:512] = P["conv_w"][256 + D:512], P["conv_w"][256:256 + D]; P2["conv_w"] = cw
    c2[:, :, :D], c2[:, :, D:2 * D] = conv[:, :, D:2 * D], conv[:, :, :D]
    c2[:, :, 256:256 + D], c2[:, :, 256 + D:512] = conv[:, :, 256 + D:512], conv[:, :, 256:256 + D]
    bad = gdn_emulated(qs, x, *P2.values(), c2, r2, 1, 12, TINY)
    assert (bad.float() - ref.float()).abs().max().item() > 100 * max(e_out, 2 ** -8)
    # wrong ring position: the conv reads other slots
    st = R.GDNState(*state_to_reference(conv[1], rec[1], 12))
    ref = reference_core(qkvz, x, W, "L.", TINY, st)
    off = gdn_emulated(qkvz, x, *P.values(), conv.clone(), rec.clone(), 1, 13, TINY)
    assert (off.float() - ref.float()).abs().max().item() > 0.1
    # state in the reference layout instead of the image: large error
    r3 = rec.clone(); r3[1] = image_to_rec(rec[1]).reshape(r3[1].shape)
    wrong = gdn_emulated(qkvz, x, *P.values(), conv.clone(), r3, 1, 12, TINY)
    assert (wrong.float() - ref.float()).abs().max().item() > 0.1

@pytest.mark.parametrize("M", [2, 5, 8])
@pytest.mark.parametrize("sd", [torch.float32, torch.bfloat16], ids=["fp32", "bf16state"])
def test_multistep_rows_equal_single_steps(M, sd):
    P, conv, rec, qkvz, x = _one_token(6, M, sd)
    c1, r1 = conv.clone(), rec.clone()
    outM = gdn_emulated(qkvz, x, *P.values(), conv, rec, 1, 30, TINY)
    out1 = torch.cat([gdn_emulated(qkvz[m:m + 1], x[m:m + 1], *P.values(), c1, r1, 1, 30 + m, TINY) for m in range(M)])
    assert torch.equal(outM, out1) and torch.equal(rec, r1) and torch.equal(conv, c1)
    assert torch.equal(rec[0], r1[0]) and rec[0].abs().max() > 0            # layer 0 untouched (and not trivially zero)

def test_bf16_state_mode_differs_from_fp32():
    "Negative control: the bf16-state mode really rounds the state (else the mode would be untested)."
    P, conv, rec, qkvz, x = _one_token(7)
    r16 = rec.to(torch.bfloat16)
    gdn_emulated(qkvz, x, *P.values(), conv.clone(), rec, 1, 9, TINY)
    gdn_emulated(qkvz, x, *P.values(), conv.clone(), r16, 1, 9, TINY)
    assert r16.dtype == torch.bfloat16 and not torch.equal(r16.float(), rec) and (r16.float() - rec).abs().max() < 0.02

def test_launcher_refuses_cpu_tensors():
    P, conv, rec, qkvz, x = _one_token()
    with pytest.raises(AssertionError, match="GPU"):
        gdn_decode(qkvz, x, *P.values(), conv, rec, 0, torch.zeros(1, dtype=torch.int32), TINY, torch.empty(1, 768, dtype=torch.bfloat16))

def test_kernel_source_instantiates_every_form():
    from qwen_engine.runtime import kernel_source
    src = kernel_source("gdn")
    for v in (1, 2):
        for M in range(1, 9):
            for b in ("false", "true"):
                assert f"gdn_decode_v{v}<{M}, {b}>(" in src
    assert "qe_warp_rms_inv" in src and "gdn_null" in src

def test_recorded_run_if_present():
    from qwen_engine.runtime import read_record
    try: rec = read_record("gdn_h200")
    except FileNotFoundError: pytest.skip("no H200 record yet")
    d = rec["data"]
    assert not d["failures"], d["failures"]
    for k in ("out", "rec"): assert d["judge"][k]["ok"], d["judge"][k]
    assert d["judge"]["conv_state_identical"]
    assert all(all(v.values()) for v in d["multistep"].values())

# ---- v3's transposed reduction (gdn_warp_sum8) against qe_warp_sum's butterfly
from qwen_engine.gdn import warp_sum8_emulated, _butterfly

@pytest.mark.parametrize("seed", range(8))
def test_transposed_sum8_equals_the_butterfly_bit_for_bit(seed):
    "Each lane's sum (column l >> 2) equals qe_warp_sum of that column exactly; values spread over 6 decades so order matters."
    p = torch.randn(32, 8, generator=torch.Generator().manual_seed(seed)) * torch.logspace(-3, 3, 32)[:, None]
    c, col = warp_sum8_emulated(p)
    assert torch.equal(col, torch.arange(32) >> 2)
    want = torch.stack([_butterfly(p[:, j], 0) for j in range(8)])
    assert torch.equal(c, want[col])

def test_transposed_sum8_in_another_step_order_differs():
    "Negative control: the same additions paired in the other order (steps 1, 2, 4, then 8, 16) do not reproduce v1's sums."
    diffs = 0
    for seed in range(8):
        p = torch.randn(32, 8, generator=torch.Generator().manual_seed(seed)) * torch.logspace(-3, 3, 32)[:, None]
        c, col = warp_sum8_emulated(p, order=(1, 2, 4))
        want = torch.stack([_butterfly(p[:, j], 0) for j in range(8)])
        diffs += not torch.equal(c, want[col])
    assert diffs == 8

def test_v3_launcher_names_and_probe_size():
    from qwen_engine import gdn
    assert {1, 2, 3, 4} <= set(gdn._SHAPES) and gdn._SHAPES[3] == gdn._SHAPES[4] == (1, 512)
    assert len(gdn._NAMES3) == 36 and "gdn_decode_v3<8, true, false, false>" in gdn._NAMES3 and "gdn_decode_v3<1, false, true, true>" in gdn._NAMES3
    src = open(gdn.__file__.replace("qwen_engine/gdn.py", "kernels/gdn.cu")).read()
    for n in gdn._NAMES3:                                     # every name the launcher asks for is instantiated in the .cu
        assert f"template __global__ void {n}(" in src, n
    assert "GDN_NPROBE = 11" in src and gdn.PROBE_WORDS == 2 * 11 + 128

# ---- v5: a cluster of 2 or 4 blocks per head; bit-identity rests on its partition being v1's
from qwen_engine.gdn import v5_partition, v5_matches_v1

@pytest.mark.parametrize("CL", [2, 4])
@pytest.mark.parametrize("hidden", [5120, 256])
def test_v5_partition_is_v1s(CL, hidden):
    "Each v1 thread once, with its lane, warp and b/a chunks (so its fma chain and butterfly); conv, state, output columns once."
    P = v5_partition(CL, hidden)
    assert len(P) == 512 and v5_matches_v1(P, hidden)
    assert all(d["t"] // (512 // CL) == r for (r, _), d in P.items())          # block r holds v1 threads 512/CL r ..

@pytest.mark.parametrize("CL", [2, 4])
def test_v5_interleaved_partition_is_caught(CL):
    "Negative control: rank-minor numbering covers every thread once but regroups the warps: rejected."
    P = v5_partition(CL, interleave=True)
    assert sorted(d["t"] for d in P.values()) == list(range(512)) and not v5_matches_v1(P)

def test_v5_launcher_names_and_shapes():
    from qwen_engine import gdn
    assert gdn._SHAPES[5] == (2, 256) and gdn._SHAPES[6] == (4, 128)
    assert all(b * t == 512 for v, (b, t) in gdn._SHAPES.items() if not 15 <= v <= 25)   # 512 threads per head, but for
    assert all(gdn._SHAPES[v] == (2, 512) for v in range(15, 26))            # v15-v25: v1's 512 threads in each block of a pair
    assert len(gdn._NAMES5) == 36 and "gdn_decode_v5<8, true, 4, false>" in gdn._NAMES5 and "gdn_decode_v5<1, false, 2, true>" in gdn._NAMES5
    src = open(gdn.__file__.replace("qwen_engine/gdn.py", "kernels/gdn.cu")).read()
    for n in gdn._NAMES5: assert f"template __global__ void {n}(" in src, n
    assert "__cluster_dims__(CL, 1, 1)" in src

# ---- v7: v3's values, other roles; bit-identity rests on each role being filled exactly once
from qwen_engine.gdn import v7_roles, v7_roles_ok

@pytest.mark.parametrize("M", range(1, 9))
@pytest.mark.parametrize("early", [True, False])
def test_v7_roles_fill_each_row_once(M, early):
    "Each row: one SiLU(z) warp, one norm warp (warp m), beta and decay once, q and k l2norms once; the norm warps store after the norm."
    R = v7_roles(M, early)
    assert v7_roles_ok(R, M)
    assert all(R[m]["norm"] == m and R[m]["store"] == "after the norm" for m in range(M))
    assert all(R[w]["store"] == ("in the last step" if early else "after the barrier") for w in range(M, 16))

def test_v7_roles_at_small_M_use_idle_warps():
    "At M = 1 the SiLU(z) warp (2), the gate warps (14, 15) and the l2norm warps (0, 1) are five different warps."
    R = v7_roles(1)
    assert [w for w, d in R.items() if d["silu"] is not None] == [2] and R[15]["beta"] == [0] and R[14]["decay"] == [0]
    assert [w for w, d in R.items() if d["l2norm"]] == [0, 1]

def test_v7_roles_negative_control():
    "Mapping the z rows with & 7 instead of & 15 gives row m two SiLU warps at M = 8: rejected."
    assert not v7_roles_ok(v7_roles(8, zmask=7), 8)

def test_v7_launcher_names_and_shapes():
    from qwen_engine import gdn
    assert gdn._SHAPES[7] == gdn._SHAPES[8] == (1, 512)
    assert len(gdn._NAMES7) == 37 and "gdn_decode_v7<1, false, true, false, true>" in gdn._NAMES7 and "gdn_decode_v7<8, true, false, false>" in gdn._NAMES7 and "gdn_decode_v7<1, false, true, true>" in gdn._NAMES7
    src = open(gdn.__file__.replace("qwen_engine/gdn.py", "kernels/gdn.cu")).read()
    for n in gdn._NAMES7: assert f"template __global__ void {n}(" in src, n
    assert src.count("#ifndef QE_GDN_NO_V7") == 1

def _adopted_vs_v3(d, variant):
    "None if `variant` may replace v3 by record data d: bit-identical in every identity check (plain and PDL, both state dtypes, probe builds) and faster chained at M = 1; else why not."
    if variant == 3: return None
    ident = {f"v{variant}{p}": d["identity"].get(f"v{variant}{p}") for p in ("", "+pdl")}
    for n, r in ident.items():
        if not r or any(v["error"] or v["identical"] != v["calls"] or v["calls"] == 0 for v in r.values()) or set(r) != {"float32", "bfloat16"}:
            return f"{n}: not identical to v3 in every call"
    for s in ("float32", "bfloat16"):
        pr = d["probe_identity"].get(f"v{variant}_probe_{s}")
        if not pr or pr["identical"] != pr["calls"]: return f"v{variant} probe {s}: not identical"
    if d["reference_variant"] != 3 or f"v{variant}" not in d["passed"]: return "not checked against v3"
    tp = d["timing_pdl"]
    if not tp[f"v{variant}+pdl"] < tp["v3+pdl"]: return f"chained {tp[f'v{variant}+pdl']:.2f} us, not below v3's {tp['v3+pdl']:.2f}"
    return None

def test_adopted_variant_is_v3_bit_for_bit_and_faster_chained():
    "The engine's VARIANT, by the record that adopted it (results/gdn_v7_h200.json): identical to v3 everywhere and faster chained with PDL."
    from qwen_engine import gdn
    from qwen_engine.runtime import read_record
    try: rec = read_record("gdn_v7_h200")
    except FileNotFoundError: pytest.skip("no results/gdn_v7_h200.json")
    d = rec["data"]
    assert gdn.VARIANT == 7 and not d["failures"]
    assert _adopted_vs_v3(d, gdn.VARIANT) is None, _adopted_vs_v3(d, gdn.VARIANT)
    assert "gdn_decode_v7<1, false, true, false>" in gdn._NAMES7       # what VARIANT = 7 launches at M = 1, fp32 state

def test_adoption_check_rejects_what_the_record_rejects():
    "Negative controls on the same record: v9 (identical, slower chained) and a copy with one v7 call not identical are refused."
    import copy
    from qwen_engine.runtime import read_record
    try: d = read_record("gdn_v7_h200")["data"]
    except FileNotFoundError: pytest.skip("no results/gdn_v7_h200.json")
    assert "not below" in _adopted_vs_v3(d, 9)
    bad = copy.deepcopy(d); bad["identity"]["v7+pdl"]["bfloat16"]["identical"] = 39
    assert "not identical" in _adopted_vs_v3(bad, 7)
    slow = copy.deepcopy(d); slow["timing_pdl"]["v7+pdl"] = d["timing_pdl"]["v3+pdl"]
    assert "not below" in _adopted_vs_v3(slow, 7)

# ---- v9: two blocks per head without a cluster; identity rests on its partition and on the exchange words' indices
from qwen_engine.gdn import v9_partition, v9_matches_v1, gdn_exchange, XCHG_WORDS

@pytest.mark.parametrize("hidden", [5120, 256])
@pytest.mark.parametrize("head", [0, 1, 2])
def test_v9_partition_is_v1s(hidden, head):
    "Each block: v1's 512 b/a threads with their chunks, q/k and its own v conv channels once; the halves: columns once, words matched."
    P = v9_partition(hidden, head)
    assert len(P) == 512 and v9_matches_v1(P, hidden, head)

def test_v9_undoubled_conv_pairs_are_caught():
    "Negative control: pairs numbered tid instead of 2 tid convolve some q/k channels twice and others never: rejected."
    assert not v9_matches_v1(v9_partition(doubled=False))

def test_v9_exchange_buffer_and_launcher_names():
    from qwen_engine import gdn
    assert gdn._SHAPES[9] == (2, 256) and XCHG_WORDS == 8 * 16 + 1
    x = gdn_exchange(TINY, 3, "cpu")
    assert x.dtype == torch.int64 and tuple(x.shape) == (3, TINY.linear_num_value_heads, 2, XCHG_WORDS) and not x.any()
    assert len(gdn._NAMES9) == 18 and "gdn_decode_v9<8, true, false>" in gdn._NAMES9 and "gdn_decode_v9<1, false, true>" in gdn._NAMES9
    src = open(gdn.__file__.replace("qwen_engine/gdn.py", "kernels/gdn.cu")).read()
    for n in gdn._NAMES9: assert f"template __global__ void {n}(" in src, n
    assert "constexpr int GDN_XW = 8 * 16 + 1;" in src and "__launch_bounds__(256, 2) gdn_decode_v9" in src

def _sumsq4(c):   # qe_sumsq over a lane's 4 values: each square rounded to fp32, added in order from 0
    s = torch.zeros(c.shape[:-1])
    for r in range(4): s = s + c[..., r] * c[..., r]
    return s

@pytest.mark.parametrize("seed", range(4))
def test_v9_statistic_from_two_halves_is_v1s(seed):
    "Each half's norm warp: its 16 lane partials computed, the peer's 16 through tagged 64-bit words; v1's butterfly gives v1's sum."
    g = torch.Generator().manual_seed(seed)
    core = (torch.randn(128, generator=g) * torch.logspace(-3, 2, 128)).to(torch.bfloat16).float()
    part = _sumsq4(core.reshape(32, 4))                                        # v1: lane L holds columns 4L..4L+3
    want = _butterfly(part, 0)
    bits = part.view(torch.int32).to(torch.int64) & 0xffffffff
    tag = 5
    words = {half: [(tag << 32) | int(bits[16 * half + i]) for i in range(16)] for half in (0, 1)}   # what each half publishes
    for half in (0, 1):
        got = part.clone()
        for L in range(32):
            if L >> 4 != half:                                              # a peer lane: read word (peer, L & 15)
                wd = words[half ^ 1][L & 15]
                assert wd >> 32 == tag
                got[L] = torch.tensor([wd & 0xffffffff], dtype=torch.int64).to(torch.int32).view(torch.float32)[0]
            else: got[L] = _sumsq4(core[4 * L:4 * L + 4][None])[0]
        assert torch.equal(_butterfly(got, 0), want)
    # negative control: half 0 reading its own words where the peer's belong (mine for peer) gets another sum
    bad = part.clone(); bad[16:] = part[:16]
    assert not torch.equal(_butterfly(bad, 0), want)

def test_v14_launcher_names_and_shapes():
    from qwen_engine import gdn
    assert gdn._SHAPES[14] == (1, 512) and len(gdn._NAMES14) == 18 and "gdn_decode_v7<1, true, true, true, false, true>" in gdn._NAMES14
    src = open(gdn.__file__.replace("qwen_engine/gdn.py", "kernels/gdn.cu")).read()
    for n in gdn._NAMES14: assert f"template __global__ void {n}(" in src, n
    assert not set(gdn._NAMES14) & set(gdn._NAMES7)                      # its own NVRTC module: the engine's v7 module is unchanged

def test_v14_forms_the_l2norm_with_gdn_l2norms_operations():
    """v14 (v7's NOB2) is bit-identical to v7 by construction: the lane sums of squares, the 1 / norm and the scaling of q
    and k are gdn_l2norm's expressions on the same values (shuffled in from the 3 next lanes instead of read as a float4)."""
    src = open(__import__("qwen_engine.gdn", fromlist=["x"]).__file__.replace("qwen_engine/gdn.py", "kernels/gdn.cu")).read()
    l2 = src[src.index("__device__ __forceinline__ void gdn_l2norm("):]
    l2 = l2[:l2.index("\n}\n")]
    v7 = src[src.index("gdn_decode_v7(\n"):]
    v7 = v7[:v7.index("\n}\n")]
    assert "__fadd_rn(__fadd_rn(__fadd_rn(__fmul_rn(t.x, t.x), __fmul_rn(t.y, t.y)), __fmul_rn(t.z, t.z)), __fmul_rn(t.w, t.w))" in l2
    assert "__fadd_rn(__fadd_rn(__fadd_rn(__fmul_rn(cv[m], cv[m]), __fmul_rn(x1, x1)), __fmul_rn(x2, x2)), __fmul_rn(x3, x3))" in v7
    assert "__fdiv_rn(1.f, __fsqrt_rn(__fadd_rn(ss, 1e-6f)))" in l2 and "ss = qe_warp_sum(ss);" in l2
    assert v7.count("__fdiv_rn(1.f, __fsqrt_rn(__fadd_rn(qe_warp_sum(s_ss[") == 2
    assert "const float sc = 11.3137084989847604f;" in l2 and "const float sc = 11.3137084989847604f;" in v7
    nob2 = v7[v7.index("if constexpr (NOB2) {\n    extern __shared__"):v7.index("  } else {", v7.index("if constexpr (NOB2) {\n    extern __shared__"))]
    assert "__syncthreads" not in nob2                                    # the NOB2 phase has no barrier; v7's branch keeps its second

# ---- v15: a cluster of two 512-thread blocks per head; bit-identity rests on its partition and its 4-column sums
from qwen_engine.gdn import v15_partition, v15_matches_v1

@pytest.mark.parametrize("head", (0, 1, 2))
def test_v15_partition_is_v1s(head):
    assert v15_matches_v1(v15_partition(head), head)

def test_v15_partition_negative_control():
    "The norm partial numbered by v1's warp instead of 16 rank + w: columns no longer match their partial."
    assert not v15_matches_v1(v15_partition(partial_of_warp=False))

@pytest.mark.parametrize("seed", range(4))
def test_transposed_sum4_equals_the_butterfly_bit_for_bit(seed):
    "gdn_warp_sum4: exchange steps 16 and 8 over 4 columns; lane l ends with column l >> 3, summed as qe_warp_sum sums it."
    p = torch.randn(32, 4, generator=torch.Generator().manual_seed(seed)) * torch.logspace(-3, 3, 32)[:, None]
    c, col = warp_sum8_emulated(p, order=(16, 8))
    assert torch.equal(col, torch.arange(32) >> 3)
    assert torch.equal(c, torch.stack([_butterfly(p[:, j], 0) for j in range(4)])[col])
    cx, colx = warp_sum8_emulated(p, order=(1, 2))                      # negative control: the other step order
    assert not torch.equal(cx, torch.stack([_butterfly(p[:, j], 0) for j in range(4)])[colx])

def test_v15_launcher_names_are_instantiated():
    from qwen_engine import gdn
    assert all(gdn._SHAPES[v] == (2, 512) for v in range(15, 26)) and len(gdn._NAMES15) == 18
    assert len(gdn._NAMES16) == len(gdn._NAMES18) == len(gdn._NAMES20) == len(gdn._NAMES22) == len(gdn._NAMES24) == 36
    src = open(gdn.__file__.replace("qwen_engine/gdn.py", "kernels/gdn.cu")).read()
    for n in gdn._NAMES15 + gdn._NAMES16 + gdn._NAMES18 + gdn._NAMES20 + gdn._NAMES22 + gdn._NAMES24: assert f"template __global__ void {n}(" in src, n

def test_every_variant_build_is_instantiated_and_compiled_with_its_family():
    "gdn._build for every variant, M, state dtype and probe build: its name is in the names compiled with it and instantiated for nvcc."
    from qwen_engine import gdn
    src = open(gdn.__file__.replace("qwen_engine/gdn.py", "kernels/gdn.cu")).read()
    for v in sorted(gdn._SHAPES):
        if v in gdn._ABLATE or v in gdn._ZX or v in gdn._LOG_NAME:   # v7's ablation builds, the z split's, the log's and 32: M = 1, fp32 state, no probe
            n, _, together = gdn._build(1, False, v)
            assert n in together and f"template __global__ void {n}(" in src, (v, n)
            with pytest.raises(AssertionError, match="ablation" if v in gdn._ABLATE else "z split" if v in gdn._ZX else "log builds"): gdn._build(2, False, v)
            continue
        for M in range(1, gdn.MAX_M + 1):
            for bf in (False, True):
                for pr in ((False, True) if M == 1 and v >= 3 else (False,)):
                    n, defines, together = gdn._build(M, bf, v, pr)
                    assert n in together and f"template __global__ void {n}(" in src, (v, M, bf, pr, n)
    n, _, together = gdn._build(1, False, 7, rel=True)
    assert n == "gdn_decode_v7<1, false, true, false, true>" and n in together
    with pytest.raises(ValueError, match="no GDN variant 34"): gdn._build(1, False, 34)

def test_v15_records_the_chapter_reads_are_committed():
    "Chapter 08's v15-v25 section reads these records (and skips its tables when one is missing): they must be there."
    from qwen_engine.runtime import read_record
    for n in ("gdn_v15_h200", "gdn_v15_step_h200", "gdn_v22_h200", "gdn_v22_step_h200", "gdn_v24_h200", "gdn_v24_step_h200",
              "gdn_v15t_h200", "gdn_v22t_h200", "gdn_v24t_h200", "gdn_v23_step_h200", "gdn_all_h200"):
        assert read_record(n)["data"], n


def test_z_split_builds():
    "Variants 99 and 100 (the z split): v7 with ZX last, released after (99) or before (100, REL) its grid wait; one family."
    from qwen_engine import gdn
    n99, d99, t99 = gdn._build(1, False, 99)
    n100, _, t100 = gdn._build(1, False, 100)
    assert n99 == "gdn_decode_v7<1, false, true, false, false, false, false, false, false, false, false, false, false, false, true>"
    assert n100 == n99.replace("<1, false, true, false, false,", "<1, false, true, false, true,") and t99 == t100 == gdn._NAMES99
    assert "-DQE_GDN_NO_V7" not in d99 and gdn._SHAPES[99] == gdn._SHAPES[100] == gdn._SHAPES[7]
    for bad in (dict(bf16_state=True), dict(probe=True)):
        with pytest.raises(AssertionError, match="z split"): gdn._build(1, bad.get("bf16_state", False), 99, bad.get("probe", False))
    src = open(gdn.__file__.replace("qwen_engine/gdn.py", "kernels/gdn.cu")).read()
    assert 'static_assert(!ZX || (M == 1 && !PROBE && !NOB2)' in src and "if (!ZX && zrow < M)" in src


def _sequential_updates(S, entries):
    "The recurrence's update token after token on the reference layout [HV, 128 (i), 128 (j)]: S = S * decay + k delta^T, each product and sum rounded in fp32."
    for g, k, d in entries:
        S = S * g[:, None, None] + k[:, :, None] * d[:, None, :]
    return S


@pytest.mark.parametrize("N, layer, pos", [(4, 0, 7), (8, 3, 26), (16, 5, 100), (8, 2, 3)])
def test_log_rebuild_is_the_sequential_update_bit_for_bit(N, layer, pos):
    """Variants 26-28: the state rebuilt from the last whole state and the log (gdn_materialise, the kernel's replay in torch)
    equals the updates applied token by token, bit for bit, in the kernel's register image; entries of positions below 0 are
    skipped. Negative controls: rebuilt one token short, or with the entries in another order, it differs."""
    from qwen_engine.gdn import gdn_materialise, LOGW
    g = torch.Generator().manual_seed(N * 100 + pos)
    HV, layers = 6, 6
    S0 = torch.randn(layers, HV, 128, 128, generator=g) * 0.05
    rec = rec_to_image(S0)
    log = torch.randn(layers, HV, N - 1, LOGW, generator=g)
    log[..., 0] = torch.rand(layers, HV, N - 1, generator=g)  # decays in (0, 1)
    phase = (pos + layer) % N
    used = [j for j in range(phase) if pos - phase + j >= 0]
    assert used, "the case must replay at least one entry"
    entries = [(log[layer, :, j, 0], log[layer, :, j, 4:132], log[layer, :, j, 132:260]) for j in used]
    want = rec_to_image(_sequential_updates(S0[layer], entries))
    got = gdn_materialise(rec, log, layer, pos, N)
    assert torch.equal(got.view(torch.int32), want.view(torch.int32))
    short = gdn_materialise(rec, log, layer, pos - 1, N)
    assert not torch.equal(short, want)
    if len(used) > 1:
        swapped = rec_to_image(_sequential_updates(S0[layer], entries[::-1]))
        assert not torch.equal(swapped, want)


def test_log_launcher_contract():
    "Variants 26-33: the build names (v7's with LOGN, then LOGP for 29-31, REL and LDCG for 32-33), the log's shape, and the launcher's refusals, before any GPU work."
    from qwen_engine import gdn
    assert gdn._LOG == {26: 4, 27: 8, 28: 16, 29: 4, 30: 8, 31: 16, 33: 4} and all(gdn._SHAPES[v] == gdn._SHAPES[7] for v in gdn._LOG_NAME)
    assert gdn._build(1, False, 33)[0] == "gdn_decode_v7<1, false, true, false, true" + ", false" * 12 + ", 4, false, true>"
    assert gdn._build(1, False, 32)[0] == "gdn_decode_v7<1, false, true, false, true" + ", false" * 12 + ", 0, false, true>"
    assert gdn._build(1, False, 27)[0] == "gdn_decode_v7<1, false, true, false" + ", false" * 13 + ", 8>"
    assert gdn._build(1, False, 30)[0] == "gdn_decode_v7<1, false, true, false" + ", false" * 13 + ", 8, true>"
    cfg = preset("qwen3_5_27b")
    assert gdn.gdn_log(cfg, 8, device="meta").shape == (48, 48, 7, gdn.LOGW) and gdn.LOGW == 260
    src = open(gdn.__file__.replace("qwen_engine/gdn.py", "kernels/gdn.cu")).read()
    assert "constexpr int GDN_LOGW = 4 + 2 * GDN_D;" in src and "(LOGN == 0 || phase == LOGN - 1)" in src


def test_log_records_bit_identical_and_faster_at_1k():
    """Chapter 08's claims about variants 26-28, from their records: v7's values bit for bit (per token, and in the step), the
    controls caught, and N = 4 and 8 faster than v7 at 1K in every round of the step."""
    import statistics
    from qwen_engine.runtime import read_record
    d, s = read_record("gdn_log_h200")["data"], read_record("gdn_log_step_h200")["data"]
    assert len(d["identity"]) == 6 and all(r["out"] == r["conv"] == r["state"] == r["checks"] == 258 for r in d["identity"])
    assert all(r["wrong_phase_state"] <= 1 and r["swapped_log_out_mismatches"] > 6000 for r in d["identity"])
    assert all(v["tokens_equal"] and v["state_identical"] and v["conv_identical"] for v in s["step_states"].values())
    ms = lambda p, c: [t["ms"] for t in s["timings"] if t["plan"] == p and t["ctx"] == c]
    for p in ("log 4 (26)", "log 8 (27)"):
        assert len(ms(p, 1024)) == 5 and max(ms(p, 1024)) < min(ms("v7", 1024))
    assert statistics.median(ms("log 16 (28)", 32768)) > statistics.median(ms("v7", 32768))


def test_decode_bench_with_the_log_build():
    "The decode bench's speed parts with variant 26 (decode_log_h200) and the engine beside it in the same call: 26 launched, bit-identical graph, no allocations, faster at 1K."
    from qwen_engine.runtime import read_record
    d, v = read_record("decode_log_h200")["data"], read_record("decode_speed_v7log_h200")["data"]
    assert d["gdn_log"] == 26 and any(k.endswith(", 4>") and n == 48 for k, n in d["launches"]["by_kernel"].items() if "gdn_decode_v7" in k)
    assert d["graph_vs_eager"]["bit_identical"] and all(g["allocations"] == 0 for g in d["generation"])
    assert d["speed"]["1024"]["ms"] < v["speed"]["1024"]["ms"] - 0.1


def test_released_builds_records_bit_identical_and_no_faster():
    """Chapter 08's 32 and 33 (v7 and 26 released before their grid wait, LDCG), from their records: v7's values bit for bit
    per token and in the step (the hazard of v7's REL build closed), and neither the chain nor the step faster."""
    import statistics
    from qwen_engine.runtime import read_record
    d, s = read_record("gdn_relc_h200")["data"], read_record("gdn_relc_step_h200")["data"]
    assert len(d["identity"]) == 4 and all(r["out"] == r["conv"] == r["state"] == r["checks"] == 258 for r in d["identity"])
    assert all(v["tokens_equal"] and v["state_identical"] and v["conv_identical"] for v in s["step_states"].values())
    ch = lambda b: statistics.median(t["us"] for t in d["times"] if t["build"] == b and t["pdl"])
    assert abs(ch("v7 released (32)") - ch("v7")) < 0.05 and abs(ch("log 4 released (33)") - ch("log 4 (26)")) < 0.05
    ms = lambda p: statistics.median(t["ms"] for t in s["timings"] if t["plan"] == p and t["ctx"] == 1024)
    assert ms("log 4 released (33)") >= ms("log 4 (26)") and ms("log 4 (26)") < ms("v7")
