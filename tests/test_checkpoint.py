"Loader, synthetic writer, fused layouts and the scale rule of `qwen_engine.checkpoint`, on a tiny synthetic checkpoint."
import json, os, shutil
from pathlib import Path
import pytest, torch
from safetensors.torch import load_file, save_file

from qwen_engine import checkpoint as C
from qwen_engine.config import PREFIX, preset, tensor_specs

L0, L3 = PREFIX + "layers.0.", PREFIX + "layers.3."

@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    "The tiny preset, sharded small (16 MB) so a bad-input case rewrites one small shard and hard-links the rest."
    return C.write_synthetic("tiny", tmp_path_factory.mktemp("ck") / "tiny", seed=0, shard_bytes=16e6, progress=False)

def mutate(src: Path, dst: Path, tensors=None, index=None, config=None) -> Path:
    """A copy of `src` (hard links) with changes: `tensors(name -> dict)` rewrites the shard holding `name`,
    `index(dict)` and `config(dict)` edit those JSON files in place."""
    dst.mkdir()
    for p in src.iterdir(): os.link(p, dst / p.name)
    idx = json.loads((src / "model.safetensors.index.json").read_text())
    if tensors:
        name, fn = tensors
        shard = idx["weight_map"][name]
        d = load_file(str(src / shard)); fn(d)
        (dst / shard).unlink(); save_file(d, str(dst / shard))
        idx["weight_map"] = {k: v for k, v in idx["weight_map"].items() if v != shard or k in d}
    if index: index(idx)
    (dst / "model.safetensors.index.json").unlink(); (dst / "model.safetensors.index.json").write_text(json.dumps(idx))
    if config:
        cfg = json.loads((src / "config.json").read_text()); config(cfg)
        (dst / "config.json").unlink(); (dst / "config.json").write_text(json.dumps(cfg))
    return dst

# ---- good input ---------------------------------------------------------------------------------------------------

def test_tiny_is_complete_hf_directory(tiny):
    names = {p.name for p in tiny.iterdir()}
    assert {"config.json", "model.safetensors.index.json", "tokenizer.json", "chat_template.jinja", "vocab.json", "merges.txt"} <= names
    ck = C.open_checkpoint(tiny)
    assert set(ck.specs) == {s.name for s in tensor_specs(ck.cfg)}
    assert any(n.startswith("mtp.") for n in ck.entries)          # MTP tensors are written
    idx = json.loads((tiny / "model.safetensors.index.json").read_text())
    assert idx["metadata"]["total_size"] == sum(e[4] for e in ck.entries.values())

def test_visual_tensors_are_ignored(tiny, tmp_path):
    d = mutate(tiny, tmp_path / "v", tensors=(L0 + "input_layernorm.weight",
                                              lambda t: t.update({"model.visual.blocks.0.attn.qkv.weight": torch.zeros(3, 3)})),
               index=lambda i: i["weight_map"].update({"model.visual.blocks.0.attn.qkv.weight": i["weight_map"][L0 + "input_layernorm.weight"]}))
    C.open_checkpoint(d)

@pytest.mark.parametrize("spec", [s for s in tensor_specs(preset("tiny")) if s.fp8], ids=lambda s: s.name.replace(PREFIX, ""))
def test_scale_to_fit_every_block_max_is_448(tiny, spec):
    ck = C.open_checkpoint(tiny)
    q = C.read(ck, spec.name).float().abs()
    N, K = q.shape
    bmax = q.view(N // 128, 128, K // 128, 128).amax(dim=(1, 3))
    assert torch.equal(bmax, torch.full_like(bmax, 448.0))

def test_deterministic_for_a_seed(tiny):
    ck, cfg = C.open_checkpoint(tiny), preset("tiny")
    specs = {s.name: s for s in tensor_specs(cfg)}
    for name in (L0 + "linear_attn.in_proj_qkv.weight", L0 + "linear_attn.A_log", "mtp.fc.weight"):
        again = C.synth_tensor(cfg, specs[name], seed=0)
        if specs[name].fp8: again = C.quantize(again)[0]
        assert torch.equal(again.view(torch.uint8), C.read(ck, name).view(torch.uint8)), name
        other = C.synth_tensor(cfg, specs[name], seed=1)        # negative control: another seed differs
        if specs[name].fp8: other = C.quantize(other)[0]
        assert not torch.equal(other.view(torch.uint8), again.view(torch.uint8))

def test_values_look_trained(tiny):
    ck = C.open_checkpoint(tiny)
    w = C.read(ck, L0 + "input_layernorm.weight").float()
    assert w.abs().mean() < 0.2 and w.std() > 0.01                     # (1+w) norm: small around 0, not zero
    g = C.read(ck, L0 + "linear_attn.norm.weight").float()
    assert (g.mean() - 1).abs() < 0.1                                    # gated norm: w used directly, around 1
    A = C.read(ck, L0 + "linear_attn.A_log").float().exp()
    dt = torch.nn.functional.softplus(C.read(ck, L0 + "linear_attn.dt_bias").float())
    decay = torch.exp(-A * dt)
    assert decay.min() > 0 and decay.max() < 1 and decay.max() - decay.min() > 0.2
    emb = C.read(ck, PREFIX + "embed_tokens.weight").float()
    assert emb.shape[0] == 248320
    pad, text = emb[ck.cfg.text_vocab_size:], emb[:ck.cfg.text_vocab_size]
    assert pad.abs().sum() > 0 and pad.std() < 0.5 * text.std()         # padding rows present, untrained-small
    s = C.read(ck, L0 + "mlp.gate_proj.weight_scale_inv")
    assert s.dtype == torch.float32 and s.unique().numel() == s.numel()  # per-channel structure: every block has its own scale

def test_falsification_orders_the_rules():
    t = C.falsification_table(seed=0, n=512)
    chosen = t.pop("multiply: fp8 * scale[n//128, k//128]")
    assert chosen < 0.05                        # e4m3 has a 3-bit mantissa: relative RMS a few percent
    assert len(t) == 3 and all(e > 5 * chosen for e in t.values()), t

def test_dequantize_matches_index_rule(tiny):
    ck = C.open_checkpoint(tiny)
    n = L3 + "self_attn.q_proj.weight"
    q, s = C.read(ck, n), C.read(ck, n.replace(".weight", C.SCALE))
    ref = torch.empty(q.shape, dtype=torch.float32)
    for i in range(0, q.shape[0], 128):
        for j in range(0, q.shape[1], 128): ref[i:i + 128, j:j + 128] = q[i:i + 128, j:j + 128].float() * s[i // 128, j // 128]
    assert torch.equal(C.weight(ck, n), ref.to(torch.bfloat16))

def test_fp8_decided_per_tensor_from_the_files(tiny, tmp_path):
    "mtp.fc is bf16 in the inventory; stored quantised with its scale it is accepted and dequantised by the same rule."
    n = "mtp.fc.weight"
    def quant(t): q, s = C.quantize(t[n]); t[n] = q; t["mtp.fc.weight_scale_inv"] = s
    d = mutate(tiny, tmp_path / "q", tensors=(n, quant),
               index=lambda i: i["weight_map"].update({"mtp.fc.weight_scale_inv": i["weight_map"][n]}))
    a, b = C.open_checkpoint(tiny), C.open_checkpoint(d)
    assert n not in a.fp8 and n in b.fp8
    assert torch.equal(C.weight(b, n), C.dequantize(*C.quantize(C.read(a, n))))
    d2 = mutate(tiny, tmp_path / "q2", tensors=(n, lambda t: t.update({n: C.quantize(t[n])[0]})))   # fp8 without its scale
    with pytest.raises(C.CheckpointError, match="mtp.fc.weight_scale_inv: missing"):
        C.open_checkpoint(d2)

def test_symlinked_shards_are_followed(tiny, tmp_path):
    "The Hugging Face cache keeps shards as symlinks into a blobs/ directory outside the snapshot: that must load."
    d = tmp_path / "snapshot"; d.mkdir()
    for p in tiny.iterdir(): (d / p.name).symlink_to(p)
    ck = C.open_checkpoint(d)
    assert torch.equal(C.read(ck, L0 + "linear_attn.A_log"), C.read(C.open_checkpoint(tiny), L0 + "linear_attn.A_log"))

def test_fp32_scales_are_accepted(tiny, tmp_path):
    n = L0 + "mlp.down_proj.weight_scale_inv"
    d = mutate(tiny, tmp_path / "f32", tensors=(n, lambda t: t.update({n: t[n].float()})))
    a, b = C.open_checkpoint(tiny), C.open_checkpoint(d)
    assert b.entries[n][1] == "F32"
    assert torch.equal(C.weight(a, L0 + "mlp.down_proj.weight"), C.weight(b, L0 + "mlp.down_proj.weight"))

@pytest.mark.parametrize("fused,rows", [("3.self_attn.qkv_proj.weight", 14336), ("0.linear_attn.in_proj_qkvz.weight", 16384),
                                        ("0.mlp.gate_up_proj.weight", 34816)], ids=["attn", "gdn", "mlp"])
def test_fused_rows_27b(fused, rows):
    cfg = preset("qwen3_5_27b")
    specs = {s.name: s for s in tensor_specs(cfg)}
    lay = C.fused_layout(cfg)
    assert sum(specs[p].shape[0] for p in lay[PREFIX + "layers." + fused]) == rows
    assert sum(k.startswith("mtp.") for k in lay) == 2                 # the MTP layer's attention and MLP are fused too

def test_fused_tensors_are_stored_bytes(tiny):
    ck = C.open_checkpoint(tiny)
    w = C.load_engine_weights(ck, progress=False)
    for fused, parts in C.fused_layout(ck.cfg).items():
        fw, fs = w[fused]
        assert torch.equal(fw.view(torch.uint8), torch.cat([C.read(ck, p).view(torch.uint8) for p in parts]))
        assert torch.equal(fs, torch.cat([C.read(ck, p.replace(".weight", C.SCALE)) for p in parts]))
        assert fs.shape[0] * 128 == fw.shape[0]
    assert L0 + "linear_attn.in_proj_b.weight" in w and w[L0 + "linear_attn.in_proj_b.weight"].dtype == torch.bfloat16
    assert L0 + "mlp.gate_proj.weight" not in w                      # consumed by the fusion

# ---- bad input: every case is one CheckpointError naming what was expected and found ------------------------------

def _drop(name): return lambda t: t.pop(name)
def _set(name, v): return lambda t: t.update({name: v(t[name])})

BAD = {
    "missing-tensor": (dict(tensors=(L0 + "linear_attn.A_log", _drop(L0 + "linear_attn.A_log"))), "A_log: missing"),
    "wrong-shape": (dict(tensors=(L3 + "self_attn.q_norm.weight", _set(L3 + "self_attn.q_norm.weight", lambda x: x[:128]))),
                    "q_norm.weight: config.json implies shape [256], checkpoint has [128]"),
    "wrong-dtype-bf16": (dict(tensors=(L0 + "linear_attn.in_proj_b.weight", _set(L0 + "linear_attn.in_proj_b.weight", lambda x: x.half()))),
                         "in_proj_b.weight: expected dtype BF16, found F16"),
    "fp8-stored-as-bf16": (dict(tensors=(L0 + "mlp.up_proj.weight", _set(L0 + "mlp.up_proj.weight", lambda x: x.to(torch.bfloat16)))),
                           "up_proj.weight: expected dtype F8_E4M3 (quantised), found BF16"),
    "missing-scale": (dict(tensors=(L0 + "mlp.up_proj.weight_scale_inv", _drop(L0 + "mlp.up_proj.weight_scale_inv"))),
                      "up_proj.weight_scale_inv: missing"),
    "scale-shape": (dict(tensors=(L0 + "mlp.up_proj.weight_scale_inv", _set(L0 + "mlp.up_proj.weight_scale_inv", lambda x: x.t().contiguous()))),
                    "expected scale shape [4, 2], found [2, 4]"),
    "scale-dtype": (dict(tensors=(L0 + "mlp.up_proj.weight_scale_inv", _set(L0 + "mlp.up_proj.weight_scale_inv", lambda x: x.half()))),
                    "expected scale dtype BF16 or F32, found F16"),
    "index-missing-file": (dict(index=lambda i: i["weight_map"].update({L0 + "linear_attn.A_log": "model-00099-of-00099.safetensors"})),
                           "does not exist"),
    "index-escapes-dir": (dict(index=lambda i: i["weight_map"].update({L0 + "linear_attn.A_log": "../outside.safetensors"})),
                          "leaves the checkpoint directory"),
    "index-absolute-path": (dict(index=lambda i: i["weight_map"].update({L0 + "linear_attn.A_log": "/etc/passwd"})),
                            "not a relative file name"),
    "index-escapes-via-subdir": (dict(index=lambda i: i["weight_map"].update({L0 + "linear_attn.A_log": "a/../../outside.safetensors"})),
                                 "leaves the checkpoint directory"),
    "config-disagrees": (dict(config=lambda c: c["text_config"].update(intermediate_size=640)),
                         "mlp.gate_proj.weight: config.json implies shape [640, 256], checkpoint has [512, 256]"),
    "config-nan": (dict(config=lambda c: c["text_config"].update(rms_norm_eps=float("nan"))), "not strict JSON"),
}

@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_bad_input_at_open(tiny, tmp_path, case):
    kw, msg = BAD[case]
    shard = json.loads((tiny / "model.safetensors.index.json").read_text())["weight_map"][L0 + "linear_attn.A_log"]
    shutil.copyfile(tiny / shard, tmp_path / "outside.safetensors")    # the escaping path exists: refused for leaving, not for missing
    d = mutate(tiny, tmp_path / "ck", **kw)
    with pytest.raises(C.CheckpointError, match=msg.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(").replace(")", r"\)")):
        C.open_checkpoint(d)

@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 0.0, -1.0], ids=["nan", "inf", "zero", "negative"])
def test_bad_scale_values_at_read(tiny, tmp_path, bad):
    n = L0 + "mlp.up_proj.weight_scale_inv"
    def poison(x): x = x.clone(); x[1, 0] = bad; return x
    d = mutate(tiny, tmp_path / "ck", tensors=(n, _set(n, poison)))
    ck = C.open_checkpoint(d)                                     # shapes and dtypes are fine
    with pytest.raises(C.CheckpointError, match=r"up_proj.weight_scale_inv: scale at block \(1, 0\)"):
        C.weight(ck, L0 + "mlp.up_proj.weight")
    with pytest.raises(C.CheckpointError):
        C.load_engine_weights(ck, progress=False)

@pytest.mark.parametrize("cut", [4, 100, -1000], ids=["no-header", "inside-header", "inside-data"])
def test_truncated_shard(tiny, tmp_path, cut):
    d = mutate(tiny, tmp_path / "ck")
    idx = json.loads((d / "model.safetensors.index.json").read_text())
    shard = idx["weight_map"][L0 + "linear_attn.A_log"]
    data = (tiny / shard).read_bytes()
    (d / shard).unlink(); (d / shard).write_bytes(data[:cut])
    with pytest.raises(C.CheckpointError, match="truncated"):
        C.open_checkpoint(d)

def test_header_lying_about_size(tiny, tmp_path):
    d = mutate(tiny, tmp_path / "ck")
    shard = json.loads((d / "model.safetensors.index.json").read_text())["weight_map"][L0 + "linear_attn.A_log"]
    raw = bytearray((tiny / shard).read_bytes())
    n = int.from_bytes(raw[:8], "little")
    hdr = json.loads(raw[8:8 + n]); hdr[L0 + "linear_attn.A_log"]["shape"] = [7]
    new = json.dumps(hdr, separators=(",", ":")).encode().ljust(n)
    assert len(new) == n
    (d / shard).unlink(); (d / shard).write_bytes(bytes(raw[:8]) + new + bytes(raw[8 + n:]))
    with pytest.raises(C.CheckpointError, match=r"A_log: header gives 12 bytes, dtype BF16 x shape \[7\] needs 14"):
        C.open_checkpoint(d)

def test_no_pickle_only_safetensors(tmp_path):
    d = tmp_path / "pt"; d.mkdir()
    shutil.copyfile(Path(C.asset_path("qwen3_5_27b_fp8.config.json")), d / "config.json")
    torch.save({"x": torch.zeros(1)}, d / "pytorch_model.bin")
    with pytest.raises(C.CheckpointError, match="neither model.safetensors"):
        C.open_checkpoint(d)

def test_duplicate_json_keys_refused():
    with pytest.raises(C.CheckpointError, match="duplicate key"):
        C.strict_json('{"a": 1, "a": 2}', "x.json")

def test_cli_synth(tmp_path, capsys):
    from qwen_engine.cli import main
    assert main(["synth", "--preset", "tiny", "--out", str(tmp_path / "t"), "--seed", "3"]) == 0
    assert "validated" in capsys.readouterr().out
    with pytest.raises(SystemExit): main(["synth", "--preset", "nope", "--out", str(tmp_path / "x")])
