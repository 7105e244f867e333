"The oracle: transformers' Qwen3_5ForCausalLM on a tiny synthetic checkpoint, its goldens and its self-disagreement."
import json, time
import pytest, torch
from safetensors import safe_open
from safetensors.torch import load_file

from qwen_engine import checkpoint as C, oracle as O

@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return C.write_synthetic("tiny", tmp_path_factory.mktemp("oracle") / "tiny", seed=0, progress=False)

@pytest.fixture(scope="module")
def model(tiny):
    return O.load_oracle(tiny)

def test_roundtrip_identical_weights(tiny, model):
    ours = O.oracle_state_dict(C.open_checkpoint(tiny))
    sd = model.state_dict()
    assert set(sd) == set(ours)
    for n, p in sd.items(): assert p.dtype == torch.bfloat16 and torch.equal(p, ours[n]), n
    # negative control: another seed's weights are not equal
    other = C.synth_tensor(C.preset("tiny"), C.open_checkpoint(tiny).specs[C.PREFIX + "layers.0.mlp.gate_proj.weight"], seed=1)
    assert not torch.equal(C.dequantize(*C.quantize(other)), sd["model.layers.0.mlp.gate_proj.weight"])

def test_definition_settings(model):
    assert model.config._attn_implementation == "eager"
    assert model.model.rotary_emb.inv_freq.dtype == torch.float32
    inv = 1e7 ** (-torch.arange(0, 64, 2, dtype=torch.float32) / 64)
    torch.testing.assert_close(model.model.rotary_emb.inv_freq, inv, rtol=1e-6, atol=0)   # fp32 pow vs fp32 pow: last-ulp freedom

def test_strict_load_refuses_missing_tensor(tiny):
    from transformers import Qwen3_5ForCausalLM, Qwen3_5TextConfig
    sd = O.oracle_state_dict(C.open_checkpoint(tiny))
    sd.pop("model.layers.0.linear_attn.A_log")
    with torch.device("meta"):
        m = Qwen3_5ForCausalLM._from_config(Qwen3_5TextConfig(**C.preset("tiny").raw["text_config"]), dtype=torch.bfloat16)
    with pytest.raises(RuntimeError, match="A_log"):
        m.load_state_dict(sd, strict=True, assign=True)

def test_bf16_ulp():
    x = torch.tensor([1.0, 3.0, -0.3, 1000.0])
    nxt = (x.abs().to(torch.bfloat16).float() + O.bf16_ulp(x)).to(torch.bfloat16).float()
    assert torch.all(nxt > x.abs().to(torch.bfloat16).float())                 # one ulp up is the next bf16 value
    half = (x.abs().to(torch.bfloat16).float() + O.bf16_ulp(x) / 4).to(torch.bfloat16).float()
    assert torch.equal(half, x.abs().to(torch.bfloat16).float())                # a quarter ulp rounds back

def test_disagreement_controls():
    a = torch.randn(50, 1000, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    d = O.disagreement(a, a)
    assert d["top1_agreement"] == 1.0 and d["max_logit_diff"] == 0.0
    d = O.disagreement(a, a[torch.randperm(50, generator=torch.Generator().manual_seed(1))])
    assert d["top1_agreement"] < 0.2                                             # unrelated logits: chance agreement

@pytest.fixture(scope="module")
def golden(tiny, tmp_path_factory):
    g = torch.Generator().manual_seed(0)
    prompts = [[248045, 846, 198], torch.randint(0, 248077, (300,), generator=g).tolist()]
    out = tmp_path_factory.mktemp("g") / "goldens.safetensors"
    t0 = time.perf_counter()
    meta = O.write_goldens(tiny, prompts, out)
    return prompts, out, meta, time.perf_counter() - t0

def test_goldens_content(golden):
    prompts, out, meta, secs = golden
    G = load_file(str(out))
    with safe_open(str(out), "pt") as f: stored = json.loads(f.metadata()["goldens"])
    assert stored["disagreement"] == meta["disagreement"]
    for i, ids in enumerate(prompts):
        T = len(ids)
        assert G[f"p{i}.ids"].tolist() == ids
        for path in ("prompt", "generation"):
            assert G[f"p{i}.{path}.top_ids"].shape == (T, 32) and G[f"p{i}.{path}.top_logits"].dtype == torch.bfloat16
            full = G[f"p{i}.{path}.full_logits"]
            assert full.shape == (len(meta["prompts"][i]["full_logits_at"]), 248320)
            for r, p in enumerate(meta["prompts"][i]["full_logits_at"]):   # top-32 is consistent with the full vector
                assert torch.equal(G[f"p{i}.{path}.top_ids"][p, 0], full[r].float().argmax()) or \
                       full[r].float().max() == full[r].float()[G[f"p{i}.{path}.top_ids"][p, 0]]
            for p in meta["prompts"][i]["state_positions"]:
                assert G[f"p{i}.{path}.pos{p}.layer0.conv"].shape == (1280, 4)
                assert G[f"p{i}.{path}.pos{p}.layer0.conv"].dtype == torch.bfloat16
                assert G[f"p{i}.{path}.pos{p}.layer1.recurrent"].shape == (6, 128, 128)
                assert G[f"p{i}.{path}.pos{p}.layer1.recurrent"].dtype == torch.float32
                assert G[f"p{i}.{path}.pos{p}.layer3.key"].shape == (2, p + 1, 256)

def test_paths_agree_on_states(golden):
    prompts, out, meta, _ = golden
    G = load_file(str(out))
    p = meta["prompts"][1]["state_positions"][-1]
    for l in (0, 1, 2):
        a, b = G[f"p1.prompt.pos{p}.layer{l}.recurrent"], G[f"p1.generation.pos{p}.layer{l}.recurrent"]
        assert ((a - b).norm() / a.norm()) < 0.05      # chunked vs recurrent differ by bf16 rounding of their inputs only
    # the conv state holds the last 4 pre-conv inputs of layer 0: one bf16 projection of the same normed embeddings,
    # computed as a [T, H] GEMM on one path and [1, H] GEMVs on the other; the two may differ by a bf16 ulp (2^-8 relative)
    a, b = G[f"p1.prompt.pos{p}.layer0.conv"].float(), G[f"p1.generation.pos{p}.layer0.conv"].float()
    assert ((a - b).abs() <= a.abs() * 2 ** -7 + 1e-30).all()

def test_self_disagreement_and_time(golden):
    _, _, meta, secs = golden
    print("self-disagreement:", meta["disagreement"], f"{secs:.1f} s")
    for d in meta["disagreement"]:
        assert d["top1_agreement"] >= 0.9            # mismatches must be rare; they sit at near-ties (checked in the chapter)
        assert d["max_logit_diff"] < 0.5             # logits of this model are O(1): a path bug gives O(1) differences
        assert d["mismatch_max_gap"] <= 2 * d["max_logit_diff"]   # an argmax flips only where the top two were this close
    assert secs < 120

def test_cli_oracle(tiny, tmp_path, capsys):
    from qwen_engine.cli import main
    (tmp_path / "p.json").write_text(json.dumps([[1, 2, 3, 4, 5]]))
    assert main(["oracle", "--model", str(tiny), "--prompts", str(tmp_path / "p.json"), "--out", str(tmp_path / "g.safetensors")]) == 0
    assert "top-1 agreement" in capsys.readouterr().out and (tmp_path / "g.safetensors").is_file()
    (tmp_path / "bad.json").write_text(json.dumps([[1, 248320]]))
    assert main(["oracle", "--model", str(tiny), "--prompts", str(tmp_path / "bad.json"), "--out", str(tmp_path / "x")]) == 2
