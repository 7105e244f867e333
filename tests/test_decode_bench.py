"""Chapter 09d's bench machinery that runs without a GPU: the envelope's re-rounding of named tensors, the parts' order."""
import torch
from qwen_engine.config import preset, tensor_specs, PREFIX
from qwen_engine.step import synthetic_engine_weights
from qwen_engine.decode_bench import redequantize, PARTS


def test_redequantize_names_touches_only_those():
    "The attention gate re-rounds one layer's attention weights: exactly those change (and do change), no other tensor is replaced."
    cfg = preset("tiny")
    EW, W = synthetic_engine_weights(cfg, seed=0, device="cpu", reference=True)
    names = [f"{PREFIX}layers.3.self_attn.{n}_proj.weight" for n in "qkvo"]
    W2 = dict(W)
    redequantize(W2, EW, cfg, "stochastic", names=names)
    assert all(W2[n] is W[n] for n in W if n not in names)
    assert all(not torch.equal(W2[n], W[n]) for n in names)
    W3 = dict(W); redequantize(W3, EW, cfg, "stochastic")                    # without names: every fp8 tensor
    assert sum(W3[t.name] is not W[t.name] for t in tensor_specs(cfg, mtp=False) if t.fp8) == sum(t.fp8 for t in tensor_specs(cfg, mtp=False))


def test_attention_gate_runs_before_gate_two():
    "Gate 2 leaves the reference's weights rounded toward zero; the attention gate must see the nearest image, so it runs first."
    assert PARTS.index("layerwise") < PARTS.index("attn_gate") < PARTS.index("teacher_forced")


def test_cli_runs_the_gate_alone():
    from qwen_engine import cli
    a = cli.parser().parse_args(["bench", "decode", "--no-peer", "--parts", "attn_gate", "--name", "decode_gate_h200", "--record", "x"])
    assert a.parts == "attn_gate" and a.name == "decode_gate_h200" and a.no_peer


def test_gates_table_shows_the_attention_gate():
    "09d's summary table carries the attention gate's verdicts when the decode record holds them (and nothing when it errored)."
    from qwen_engine.decode_bench import gates_table
    g = dict(engine_pass=True, negative_control_fails=True, engine_control_fails=False, positions=1024, engine=[0.01],
             worst={"engine": [7, 0.52]}, least={"negative_rope_1e4": [3, 21.04], "negative_engine_rope_1e4": [63, 0.9]})
    t = gates_table({"data": {"attn_gate": g}})
    assert "attention alone (1024 positions" in t and "0.52 (layer 7; pass: True)" in t and "21.0 / 0.9" in t and "True / False" in t
    assert "attention alone" not in gates_table({"data": {"attn_gate": {"error": "RuntimeError: x"}}})


def test_time_generation_counts_the_loop_not_the_capture(monkeypatch):
    "The allocation count starts after the graph exists: a capture (start-up work) inside the count is what made it 6."
    import qwen_engine.decode_bench as DB
    count = {"n": 0}
    class FakeStep:
        graph, handoff = None, "copy"
        def capture(self): count["n"] += 6; self.graph = object()         # a capture allocates
    def fake_run(step, prompt, n, graph=True, ahead=1, stats=None):
        if graph and step.graph is None: step.capture()                     # run() captures when no graph exists
        stats.update(decode_s=0.01)
        yield from range(n)
    monkeypatch.setattr(DB, "run", fake_run)
    monkeypatch.setattr(torch.cuda, "memory_stats", lambda: {"allocation.all.allocated": count["n"]})
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    r = DB.time_generation(FakeStep(), [1, 2, 3], 5)
    assert r["allocations"] == 0 and r["tokens"] == 5
    # negative control: the same loop with the capture left inside the count shows it
    count["n"] = 0
    s = FakeStep(); before = torch.cuda.memory_stats()["allocation.all.allocated"]
    list(fake_run(s, [1], 2, stats={}))
    assert torch.cuda.memory_stats()["allocation.all.allocated"] - before == 6
