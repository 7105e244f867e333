"Chapter 06 on the CPU: the fp8 format, the exact widening, the reference, the launcher contract, and the recorded H200 run."
import pytest, torch
from qwen_engine.gemv import quantize_fp8, dequantize_fp8, gemv_reference, torch_epilogue, bf16_ulp, gemv, lm_head, best_by_variant, bytes_of
from qwen_engine.runtime import read_record

def test_quantize_scale_to_fit():
    g = torch.Generator().manual_seed(0)
    w = torch.randn(256, 384, generator=g) * torch.linspace(0.01, 3, 256)[:, None]
    q, s = quantize_fp8(w)
    assert q.dtype == torch.float8_e4m3fn and s.shape == (2, 3)
    blocks = q.float().abs().reshape(2, 128, 3, 128).amax(dim=(1, 3))
    assert torch.equal(blocks, torch.full((2, 3), 448.0))                  # every block uses the whole e4m3 range
    rel = ((dequantize_fp8(q, s) - w).norm() / w.norm()).item()
    assert rel < 0.04                                                       # e4m3 keeps 3 mantissa bits: ~2-3 % RMS

def test_dequantize_rule_rejects_the_transposed_index():
    "Negative control on a square block grid, where the transposed index runs: the rows' scales matter."
    g = torch.Generator().manual_seed(2)
    w = torch.randn(256, 256, generator=g) * torch.tensor([0.01, 3.0]).repeat_interleave(128)[:, None]
    q, s = quantize_fp8(w)
    good = ((dequantize_fp8(q, s) - w).norm() / w.norm()).item()
    bad = ((dequantize_fp8(q, s.t().contiguous()) - w).norm() / w.norm()).item()
    assert good < 0.04 and bad > 10 * good

def test_widening_is_exact_for_every_e4m3_byte():
    "The kernel's e4m3 -> f16 -> (shift by 3) -> bf16 path gives exactly value * 2^-112 for all 254 finite bytes."
    v = torch.arange(256, dtype=torch.uint8).view(torch.float8_e4m3fn).float()
    ok = ~torch.isnan(v)
    h = v.to(torch.float16).view(torch.int16).int() & 0xFFFF
    bits = ((h & 0x7FFF) >> 3) | (h & 0x8000)
    bf = bits.to(torch.int16).view(torch.bfloat16).double()
    assert int(ok.sum()) == 254 and torch.equal(bf[ok] * 2.0**112, v[ok].double())
    shifted4 = (((h & 0x7FFF) >> 4) | (h & 0x8000)).to(torch.int16).view(torch.bfloat16).double()   # negative control
    assert not torch.equal(shifted4[ok] * 2.0**112, v[ok].double())

def test_reference_epilogues():
    g = torch.Generator().manual_seed(1)
    q, s = quantize_fp8(torch.randn(256, 128, generator=g))
    x = torch.randn(2, 128, generator=g).to(torch.bfloat16)
    y = gemv_reference(q, s, x)
    assert y.dtype == torch.float64 and y.shape == (2, 256)
    g2 = gemv_reference(q, s, x, 2)
    gate, up = y.chunk(2, -1)
    want = (torch.nn.functional.silu(gate.to(torch.bfloat16).float()).to(torch.bfloat16).double() * up.to(torch.bfloat16).double())
    assert torch.equal(g2, want)
    y0 = y.to(torch.bfloat16)
    assert torch.equal(torch_epilogue(y0, 2), torch.nn.functional.silu(y0[:, :128]) * y0[:, 128:])

def test_ulp_measure():
    assert bf16_ulp(torch.tensor([1.0]))[0] == 2.0**-7 and bf16_ulp(torch.tensor([-3.0]))[0] == 2.0**-6
    ref = torch.tensor([1.0], dtype=torch.float64)
    assert ((ref + 2 * 2.0**-7 - ref).abs() / bf16_ulp(ref)).item() == 2.0   # a 2-ulp error is seen as 2

def test_launcher_contract_on_cpu():
    q, s = quantize_fp8(torch.randn(128, 128))
    with pytest.raises(AssertionError, match="GPU"):
        gemv(q, s, torch.randn(1, 128).to(torch.bfloat16))
    with pytest.raises(AssertionError):
        lm_head(torch.randn(256, 128), torch.randn(1, 128).to(torch.bfloat16))

REC = read_record("gemv_h200")

def test_recorded_checks_all_pass():
    d = REC["data"]
    assert REC["gpu"] == "NVIDIA H200" and len(d["checks"]) >= 60
    for c in d["checks"]:
        assert c["bad"] == 0 and c["unwritten"] == 0 and c.get("unwritten_epi", 0) == 0, c
        assert c.get("epilogue_bit_identical", True), c
        # v4's SwiGLU is compared with the float64 definition (its row pairing differs from the plain projection's);
        # its worst case (~13 ulp) is an output whose gate projection cancels, within the fp32 bound counted in "bad".
    assert {c["variant"] for c in d["checks"]} == {1, 2, 3, 4, 5}
    assert all(i["multirow_bit_identical"] and i["repeat_bit_identical"] for i in d["identity"])
    assert all(v for k, v in d["lm_head_check"].items() if k != "max_ulp")

def test_recorded_sweep_is_consistent():
    d = REC["data"]; bw = d["bandwidth_tbps"]
    for r in d["sweep"]:
        if "us" in r:
            assert abs(r["frac"] - r["tbps"] / bw) < 1e-9
            if r["variant"].startswith("v"): assert abs(r["tbps"] - bytes_of(r["N"], r["K"], 1, r["epi"]) / r["us"] / 1e6) < 1e-9
    best = best_by_variant(REC)
    for (N, K, e), row in best.items():
        fastest = min((r for v, r in row.items() if v.startswith("v")), key=lambda r: r["us"])
        assert d["choice"][f"{N}x{K}/epi{e}"][:4] == [int(fastest["variant"][1]), fastest["S"], fastest["RG"], fastest["KS"]]
    t = d["token"]
    assert t["launches"] == 258 and abs(t["ratio"] - t["ms"] / t["floor_ms"]) < 1e-9 and 26.8e9 < t["bytes"] < 27e9


def test_engine_plan_is_the_recorded_choice():
    "The engine launches, per model shape, exactly the configuration the committed sweep found fastest."
    from qwen_engine.gemv import ENGINE_CHOICE, engine_plan
    d = read_record("gemv_h200")["data"]
    for (N, K, e), plan in ((k, v) for k, v in ENGINE_CHOICE.items() if k != "lm_head"):
        assert list(plan) == d["choice"][f"{N}x{K}/epi{e}"][:4]
        assert engine_plan(N, K, e) == plan
    assert ENGINE_CHOICE["lm_head"] == d["choice"]["lm_head"]
    assert engine_plan(2048, 256, 0) == (3, 2, 1, 1) and engine_plan(1024, 256, 2) == (3, 2, 2, 1) and engine_plan(256, 768, 1)[1] == 4


def test_engine_kernels_are_declared_and_cover_the_plans():
    "The one-pass compile list names only instantiations the file declares, and every plan the engine can pick is in it."
    import re
    from qwen_engine.gemv import ENGINE_KERNELS, engine_plan, ENGINE_CHOICE
    from qwen_engine.runtime import kernel_source
    from qwen_engine.config import preset
    src = kernel_source("gemv")
    declared = {f"gemv_fp8_v3<{a}, {b}, {c}>" for a, b, c in re.findall(r"GEMV3_INST\((\d), (\d), (\d)\)", src)} \
             | {f"gemv_fp8_v3b<{a}, {b}, {c}, {d}>" for a, b, c, d in re.findall(r"GEMV3B_INST\((\d), (\d), (\d), (\d)\)", src)} \
             | {f"lm_head_bf16_v2<{a}>" for a in re.findall(r"LMH_INST\((\d)\)", src)}
    assert set(ENGINE_KERNELS) <= declared
    for c in (preset("qwen3_5_27b"), preset("tiny")):
        H = c.hidden_size
        for N, K, e in ((c.q_gate_rows + 2 * c.kv_rows, H, 0), (c.gdn_conv_dim + c.gdn_value_dim, H, 0), (H, c.num_attention_heads * c.head_dim, 1),
                        (H, c.gdn_value_dim, 1), (2 * c.intermediate_size, H, 2), (H, c.intermediate_size, 1)):
            v, S, RG, KS = engine_plan(N, K, e)
            assert v == 3 and f"gemv_fp8_v3<{S}, {RG}, {e}>" in ENGINE_KERNELS, (N, K, e)
    assert f"lm_head_bf16_v2<{ENGINE_CHOICE['lm_head']}>" in ENGINE_KERNELS


def test_engine_minb_is_backed_by_the_recorded_exploration():
    "Each v3b configuration the engine uses was measured bit-identical to v3, without spills, and faster than v3, on the H200."
    from qwen_engine.gemv import ENGINE_MINB, ENGINE_CHOICE, ENGINE_KERNELS
    rows = read_record("gemv_v3_minblocks_h200")["data"]["rows"]
    for (N, K, e), minb in ENGINE_MINB.items():
        v, S, RG, KS = ENGINE_CHOICE[(N, K, e)]
        mine = [r for r in rows if (r["N"], r["K"], r["epi"], r["S"], r["KS"], r["minb"]) == (N, K, e, S, KS, minb)]
        base = [r for r in rows if (r["N"], r["K"], r["epi"], r["S"], r["KS"], r["minb"]) == (N, K, e, S, KS, 0)]
        assert len(mine) == len(base) == 1
        assert mine[0]["same_as_v3"] and mine[0]["spill"] == 0 and mine[0]["us"] < 0.95 * base[0]["us"]
        assert f"gemv_fp8_v3b<{S}, {RG}, {e}, {minb}>" in ENGINE_KERNELS
