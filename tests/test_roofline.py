"Chapter 01: the byte budget against independent arithmetic and the article's figures; the recorded H200 measurement."
import json, subprocess, sys
from pathlib import Path
import pytest
import torch
from qwen_engine.config import preset
from qwen_engine.roofline import decode_budget, step_bytes, prefill_intensity, budget_table
from qwen_engine.runtime import read_record

C = preset("qwen3_5_27b")
B = decode_budget(C)
QE = str(Path(sys.executable).parent / "qwen-engine")   # the console script, as a user runs it

def hand_budget():
    "The same budget, re-derived by hand from the published shapes (model-spec.md section 1), not from the inventory."
    H, I, V = 5120, 17408, 248320
    mlp = 3 * H * I                                       # gate, up, down
    gdn = (10240 + 6144) * H + H * 6144                   # in_proj_qkv, in_proj_z, out_proj
    attn = (12288 + 1024 + 1024) * H + H * 6144           # q (with gate), k, v, o
    fp8 = 64 * mlp + 48 * gdn + 16 * attn
    blocks = lambda n, k: -(-n // 128) * -(-k // 128)
    scales = 64 * (2 * blocks(I, H) + blocks(H, I)) + 48 * (blocks(10240, H) + blocks(6144, H) + blocks(H, 6144)) \
             + 16 * (blocks(12288, H) + 2 * blocks(1024, H) + blocks(H, 6144))
    bf16 = 2 * (V * H                                      # lm_head
                + 48 * (2 * 48 * H + 10240 * 4 + 48 + 48 + 128)   # in_proj_b, in_proj_a, conv taps, A_log, dt_bias, gated-norm w
                + 64 * 2 * H + 16 * 2 * 256 + H               # layer norms, q/k norms, final norm
                + H)                                        # one embedding row
    return fp8, scales * 4, bf16

def test_budget_matches_hand_arithmetic():
    fp8, scales, bf16 = hand_budget()
    assert B["fp8_payload"] == fp8
    assert B["scales"] == scales
    assert B["total"] == fp8 + scales + bf16

@pytest.mark.parametrize("key, value, tol", [
    ("total", 26.9e9, 0.05e9), ("fp8_payload", 24.3e9, 0.05e9), ("lm_head", 2.54e9, 0.01e9),
    ("ffn_share", 0.636, 0.002), ("attn_layer_weights", 105e6, 0.5e6), ("flop_per_byte", 1.9, 0.02)])
def test_article_figures(key, value, tol):
    "The article's Part 1 figures, to the precision it states them."
    assert abs(B[key] - value) <= tol, (key, B[key])

def test_state_sizes():
    assert B["kv_per_token"] == 2 * 16 * 4 * 256 * 2 == 64 * 1024
    assert B["recurrent_state"] == 48 * 48 * 128 * 128 * 4 == 144 * 2**20
    assert B["conv_state"] == 48 * 10240 * 3 * 2
    # one attention layer's cache read overtakes its own weights at ~25K tokens (article 1.3)
    assert 24_000 < B["attn_layer_weights"] / (B["kv_per_token"] / 16) < 26_000
    assert step_bytes(B, 262144) - step_bytes(B, 0) == 262144 * 64 * 1024

def test_budget_moves_with_the_config():
    "Negative control: the budget is arithmetic on the config, not constants."
    t = decode_budget(preset("tiny"))
    assert t["total"] < B["total"] / 10 and t["kv_per_token"] == 2 * 1 * 2 * 256 * 2

def test_prefill_intensity_grows_past_the_ridge():
    ai = [prefill_intensity(C, T) for T in (1, 64, 256, 4096)]
    assert ai == sorted(ai) and ai[0] < 2.1 and ai[-1] > 1000

def test_recorded_h200_measurement_is_consistent():
    rec = read_record("roofline_h200")
    assert rec["gpu"] == "NVIDIA H200" and rec["sms"] == 132 and rec["commit"] and rec["command"]
    d = rec["data"]; best = d["bandwidth"]["best"]
    assert best == max(d["bandwidth"]["sweep"], key=lambda r: r["tbps"])
    assert abs(best["tbps"] - d["bandwidth"]["bytes"] / best["ms"] / 1e9) < 1e-9   # bytes / median time
    assert 4.0 < best["tbps"] < 4.8                                               # H200: 4.8 TB/s datasheet
    assert abs(d["floor_ms"] - B["total"] / (best["tbps"] * 1e12) * 1e3) < 1e-9   # floor = budget / bandwidth
    assert 5.5 < d["floor_ms"] < 6.5

def test_cli_budget():
    out = subprocess.run([QE, "roofline", "--json"], capture_output=True, text=True, check=True).stdout
    assert json.loads(out)["budget"]["total"] == B["total"]
    txt = subprocess.run([QE, "roofline"], capture_output=True, text=True, check=True).stdout
    assert "26.93 GB" in txt and "64 KiB" in txt

def test_cli_errors(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen3_5_text"}))
    r = subprocess.run([QE, "roofline", "--config", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and "vocab_size" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([QE, "roofline", "--measure"], capture_output=True, text=True)
    assert r.returncode != 0 and "GPU" in r.stderr


@pytest.mark.parametrize("name", ["stream_read", "stream_write", "stream_rmw"])
def test_stream_launchers_refuse_what_they_cannot_stream(name):
    "A buffer the stream kernels cannot take (on the CPU, not bytes, not a 16-byte multiple) is refused by name before any build."
    import qwen_engine.roofline as R
    fn = getattr(R, name)
    for bad in (torch.zeros(32, dtype=torch.uint8), torch.zeros(8, dtype=torch.float32), torch.zeros(24, dtype=torch.uint8)):
        with pytest.raises(AssertionError, match=f"{name}: need a contiguous uint8 CUDA buffer"):
            fn(bad)


def test_stream_rmw_refuses_an_unknown_policy():
    from qwen_engine.roofline import stream_rmw
    with pytest.raises(AssertionError, match="stream_rmw: policy 3 is not"):
        stream_rmw(torch.zeros(32, dtype=torch.uint8), policy=3)
