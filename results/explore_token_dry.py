"""Chapters 06 and 09a: where the GEMVs' own 0.56 ms a token goes (derived in chapter 09a from gemv_standing_h200.json:
each engine GEMV against a plain stream of its bytes). One run, the token of GEMVs (256 fp8 projections + the head, distinct
weights, one PDL graph, token_graph's method), interleaved, three rounds:
  engine       the engine's plan (v14 / v18 / v23 at their configurations);
  v14          every shape on v14 at the engine's configuration (rows a warp, ring depth, split, staged activation, blocks
               an SM): the engine's structure with v14's loads and math (v18's exchange and v23's branch-free ring aside);
  v14 dry      the same kernels built without their math (DRY: their loads, ring, launches and waits; no widening, no mma,
               no reduction, no epilogue): timing only, wrong sums;
  stream       one plain 16-byte stream launch per segment of the same bytes, chained with PDL (explore_token_stream.py's).
If v14 dry sits near the stream, the gap is the math and the epilogue; if near v14, it is the kernels' shape (partition,
ring, launches). Usage on the H200: PYTHONPATH=. python3 results/explore_token_dry.py OUT_DIR (token_dry_h200.json). ~2 min."""
import sys, time
import numpy as np
import torch
from qwen_engine import gemv as G
from qwen_engine.config import preset
from qwen_engine.runtime import get_kernel, launch, time_graph, median, write_record

out = sys.argv[1] if len(sys.argv) > 1 else None
t0 = time.time()
rec = dict(rounds=[], errors=[])
save = lambda: write_record("token_dry_h200", "The token of GEMVs (PDL graph): the engine's plan, every shape on v14 at the engine's configuration, "
                            "the same v14 kernels without their math (DRY), and one plain stream launch per segment: ms per token against the floor, "
                            "interleaved, three rounds.", "PYTHONPATH=. python3 results/explore_token_dry.py OUT_DIR", rec, out_dir=out)
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
gen = torch.Generator(device="cuda").manual_seed(0)
c = preset("qwen3_5_27b")
eng = {k: G.engine_choice(*k) for k in G.ENGINE_V14}
v14 = {k: (14,) + v[1:] for k, v in eng.items()}                      # the same configuration tuple, variant 14
v14["lm_head"] = G.ENGINE_CHOICE["lm_head"]
rec["plans"] = dict(engine={str(k): v for k, v in eng.items()}, v14={str(k): v for k, v in v14.items()}, minb={str(k): v for k, v in G.ENGINE_MINB.items()})
H, I = c.hidden_size, c.intermediate_size
seg = []
for t in c.layer_types:
    first = (c.q_gate_rows + 2 * c.kv_rows) * H if t == "full_attention" else (c.gdn_conv_dim + c.gdn_value_dim) * H
    oin = c.num_attention_heads * c.head_dim if t == "full_attention" else c.gdn_value_dim
    seg += [first, H * oin, 2 * I * H, H * I]
seg.append(c.vocab_size * H * 2)
buf = torch.empty(int(sum(seg)), dtype=torch.uint8, device="cuda"); buf[::4096] = 1
sink = torch.zeros(4, dtype=torch.int32, device="cuda")
sms = torch.cuda.get_device_properties(0).multi_processor_count
off = np.concatenate([[0], np.cumsum(seg)[:-1]])
views = [buf[int(o):int(o) + int(n)] for o, n in zip(off, seg)]

def stream():
    ks = get_kernel("gemv", "gemv_stream_probe<8>")
    ms = median(time_graph(lambda i: [launch(ks, (sms * 4,), (512,), (v, np.int64(v.numel() // 16), sink), pdl=True) for v in views], calls=1, reps=10))
    return dict(ms=ms, floor_ms=sum(seg) / (bw * 1e12) * 1e3)

PLANS = {"engine": lambda: G.token_graph(None, gen, bw, pdl=True),
         "v14": lambda: G.token_graph(v14, gen, bw, pdl=True, minb=G.ENGINE_MINB),
         "v14 dry": lambda: G.token_graph(v14, gen, bw, pdl=True, minb=G.ENGINE_MINB, dry=True),
         "stream": stream}
for rnd in range(3):
    for label, fn in PLANS.items():
        try:
            r = fn()
            r = dict(plan=label, round=rnd, ms=r["ms"], ratio=r["ms"] / r["floor_ms"], floor_ms=r["floor_ms"])
            rec["rounds"].append(r)
            print(f"round {rnd} {label:8s} {r['ms']:.3f} ms  {r['ratio']:.3f}x floor ({time.time() - t0:.0f} s)", flush=True)
        except Exception as e:
            rec["errors"].append(f"{label}: {e!r}"[:300]); print("ERROR", label, repr(e)[:300], flush=True)
    save()
print("\nplan | ms (3 rounds) | x floor")
for label in PLANS:
    xs = [r for r in rec["rounds"] if r["plan"] == label]
    ms_s, rt_s = " / ".join("%.3f" % r["ms"] for r in xs), " / ".join("%.3f" % r["ratio"] for r in xs)
    print(f"{label} | {ms_s} | {rt_s}")
rec["wall_s"] = time.time() - t0
save()
