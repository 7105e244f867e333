"Chapter 00: reading config.json in both forms, the presets, the tensor inventory, and the errors for bad input."
import copy, json
import pytest
from qwen_engine.config import load_config, preset, tiny_config_dict, tensor_specs, ConfigError, asset_path, PREFIX

REAL = json.loads(asset_path("qwen3_5_27b_fp8.config.json").read_text())

def bare_text(d):
    "The same model as a bare `qwen3_5_text` config.json (what some text-only releases ship)."
    t = copy.deepcopy(d["text_config"])
    t["quantization_config"] = d["quantization_config"]
    return t

def test_real_config_values():
    c = preset("qwen3_5_27b")
    assert (c.hidden_size, c.intermediate_size, c.num_hidden_layers, c.vocab_size) == (5120, 17408, 64, 248320)
    assert c.full_layers == list(range(3, 64, 4)) and len(c.linear_layers) == 48
    assert (c.rope_theta, c.rotary_dim, c.q_gate_rows, c.kv_rows) == (1e7, 64, 12288, 1024)
    assert (c.gdn_key_dim, c.gdn_value_dim, c.gdn_conv_dim) == (2048, 6144, 10240)
    assert c.fp8_block == (128, 128) and c.mtp_num_hidden_layers == 1 and c.eos_token_ids == (248044, 248046)

def test_bare_text_form_equals_multimodal_form():
    a, b = load_config(REAL), load_config(bare_text(REAL))
    assert a == b   # raw is excluded from equality

def test_interval_form_equals_layer_types_form():
    d = copy.deepcopy(REAL); del d["text_config"]["layer_types"]
    assert load_config(d).layer_types == load_config(REAL).layer_types
    d["text_config"]["full_attention_interval"] = 2
    assert load_config(d).full_layers == list(range(1, 64, 2))   # the interval is really read

def test_directory_and_file(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(REAL))
    assert load_config(tmp_path) == load_config(tmp_path / "config.json") == preset("qwen3_5_27b")

def test_tiny_keeps_what_tests_must_not_change():
    t, r = preset("tiny"), preset("qwen3_5_27b")
    same = ("vocab_size", "head_dim", "linear_key_head_dim", "linear_value_head_dim", "rope_theta", "partial_rotary_factor",
            "fp8_block", "mtp_num_hidden_layers", "linear_conv_kernel_dim", "rms_norm_eps")
    assert all(getattr(t, k) == getattr(r, k) for k in same)
    assert t.linear_num_value_heads // t.linear_num_key_heads == r.linear_num_value_heads // r.linear_num_key_heads == 3
    for s in tensor_specs(t):
        if s.fp8: assert s.shape[0] % 128 == 0 and s.shape[1] % 128 == 0, s.name

def test_inventory_names_and_counts():
    c = preset("qwen3_5_27b")
    names = {s.name for s in tensor_specs(c)}
    for n in ("lm_head.weight", PREFIX + "embed_tokens.weight", PREFIX + "layers.0.linear_attn.A_log",
              PREFIX + "layers.3.self_attn.q_proj.weight", "mtp.fc.weight", "mtp.layers.0.self_attn.q_proj.weight"):
        assert n in names, n
    fp8 = [s for s in tensor_specs(c) if s.fp8]
    assert len(fp8) == 48 * 6 + 16 * 7 + 7   # GDN: qkv z out gate up down; attn: q k v o gate up down; MTP layer: 7
    assert not any("in_proj_a" in s.name or "in_proj_b" in s.name or "conv1d" in s.name or s.name == "mtp.fc.weight" for s in fp8)

@pytest.mark.parametrize("edit, field", [
    (lambda d: d.pop("model_type"), "model_type"),
    (lambda d: d.update(model_type="llama"), "model_type"),
    (lambda d: d["text_config"].pop("hidden_size"), "text_config.hidden_size"),
    (lambda d: d["text_config"].pop("linear_num_value_heads"), "text_config.linear_num_value_heads"),
    (lambda d: d["text_config"].pop("rope_parameters"), "rope_theta"),
    (lambda d: (d["text_config"].pop("layer_types"), d["text_config"].pop("full_attention_interval")), "layer_types"),
    (lambda d: d["text_config"].update(layer_types=["full_attention"] * 3), "layer_types"),
    (lambda d: d["text_config"].update(hidden_act="gelu"), "hidden_act"),
    (lambda d: d["text_config"].update(intermediate_size=17400), "intermediate_size"),
    (lambda d: d["quantization_config"].update(quant_method="awq"), "quantization_config"),
    (lambda d: d.pop("text_config"), "text_config"),
], ids=["no-model_type", "other-family", "no-hidden", "no-gdn-heads", "no-rope", "no-layer-kinds", "layer-count",
        "activation", "not-block-multiple", "other-quant", "no-text_config"])
def test_bad_config_names_the_field(edit, field):
    d = copy.deepcopy(REAL); edit(d)
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        load_config(d)

def test_bad_files(tmp_path):
    with pytest.raises(ConfigError, match="no config.json"): load_config(tmp_path)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"): load_config(tmp_path)
    with pytest.raises(ConfigError, match="unknown preset"): preset("qwen3_5_9b")

def test_shipped_files_checked(tmp_path, monkeypatch):
    "A shipped file that does not match SHA256SUMS is refused (negative control of the integrity check)."
    import qwen_engine.config as qc, shutil
    fake = tmp_path / "assets"; shutil.copytree(str(qc.ASSETS), fake)
    p = fake / "tokenizer" / "chat_template.jinja"; p.write_text(p.read_text() + " ")
    monkeypatch.setattr(qc, "ASSETS", fake)
    with pytest.raises(ConfigError, match="sha256"): qc.asset_path("tokenizer/chat_template.jinja")
