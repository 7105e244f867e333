"""Chapter 09a: can one persistent kernel stream a whole token's weights with a grid-wide wait between dependent GEMVs?
`token_stream_probe` (kernels/step.cu) streams the token's 257 weight segments (the 27B step's 256 fp8 projections
and its bf16 head, in the step's order, as distinct bytes of one 27 GB buffer) through a ring of shared memory on one
block per SM; the consumers only fold the bytes (no arithmetic). Plans, each timed as a graph (done[] zeroed, one launch),
ms per token against the floor (the token's bytes over the bandwidth measured in the same run):
  pure       no waits: the ceiling of the structure
  wait+ahead every block waits for all blocks to finish segment s before reading segment s + 1; its copies keep landing
  wait       the same wait, the producer waiting too (nothing in flight across a wait)
  (the same with 8 consumer warps, 6 stages, chunks of 4 KiB x 48 and 64 KiB x 3)
  ldg        token_stream_probe_ldg: no copy engine, each warp's loads straight into registers (16 bytes a lane, U in
             flight), NW warps a block, with or without the wait (the first U loads of the next segment issued before it)
  rows       token_stream_probe_rows: the same loads in a GEMV's order (a warp streams RR consecutive rows of the [N, K]
             segment side by side along K, groups strided over all warps), 16 warps a block
(the rows plans were added after the first records: the script's later runs have them)
beside the one-launch-per-segment form: chapter 06's plain stream kernel (gemv_stream_probe<8>, 4 blocks an SM) once
per segment, chained with PDL in one graph (the design the engine has, without its arithmetic).
Usage on the H200: PYTHONPATH=. python3 results/explore_token_stream.py OUT_DIR (token_stream_h200.json). About 60 s."""
import sys, time
import numpy as np
import torch
from qwen_engine.config import preset
from qwen_engine.runtime import get_kernel, launch, time_graph, median, write_record
from qwen_engine import gemv as G

out = sys.argv[1] if len(sys.argv) > 1 else None
t0 = time.time()
rec = dict(plans=[], errors=[])
save = lambda: write_record("token_stream_h200", "A persistent kernel streaming the 27B token's 257 weight segments (no arithmetic) with and without a "
                            "grid-wide wait between segments, beside one plain stream launch per segment chained with PDL: ms per token vs the floor.",
                            "PYTHONPATH=. python3 results/explore_token_stream.py OUT_DIR", rec, out_dir=out)
c = preset("qwen3_5_27b")
H, I = c.hidden_size, c.intermediate_size
seg, kb = [], []                                                 # each segment's bytes and its row's bytes (K)
for t in c.layer_types:
    first = (c.q_gate_rows + 2 * c.kv_rows) * H if t == "full_attention" else (c.gdn_conv_dim + c.gdn_value_dim) * H
    oin = c.num_attention_heads * c.head_dim if t == "full_attention" else c.gdn_value_dim
    seg += [first, H * oin, 2 * I * H, H * I]; kb += [H, oin, H, I]
seg.append(c.vocab_size * H * 2); kb.append(2 * H)
off = np.concatenate([[0], np.cumsum(seg)[:-1]])
total = int(sum(seg))
rec.update(segments=len(seg), token_bytes=total)
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
floor_ms = total / (bw * 1e12) * 1e3; rec["floor_ms"] = floor_ms
print(f"{len(seg)} segments, {total / 1e9:.2f} GB, bandwidth {bw:.3f} TB/s, floor {floor_ms:.3f} ms", flush=True)
buf = torch.empty(total, dtype=torch.uint8, device="cuda")
buf[::4096] = 1                                                  # touch every page once
offs, nbs = torch.tensor(off, dtype=torch.int64, device="cuda"), torch.tensor(seg, dtype=torch.int64, device="cuda")
kds = torch.tensor(kb, dtype=torch.int64, device="cuda")
done, sink = torch.zeros(len(seg), dtype=torch.int32, device="cuda"), torch.zeros(4, dtype=torch.int32, device="cuda")
sms = torch.cuda.get_device_properties(0).multi_processor_count
B = lambda x: "true" if x else "false"
PLANS = [("pure", 4, 12, 16, False, False), ("wait+ahead", 4, 12, 16, True, True), ("wait", 4, 12, 16, True, False),
         ("pure, 8 consumer warps", 8, 12, 16, False, False), ("wait+ahead, 8 consumer warps", 8, 12, 16, True, True),
         ("wait+ahead, 6 stages", 4, 6, 16, True, True), ("pure, 48 x 4 KiB", 4, 48, 4, False, False),
         ("pure, 3 x 64 KiB", 4, 3, 64, False, False), ("wait+ahead, 48 x 4 KiB", 4, 48, 4, True, True),
         ("ldg pure, 16 warps x 8", "ldg", 16, 8, False, None), ("ldg wait, 16 warps x 8", "ldg", 16, 8, True, None),
         ("ldg pure, 32 warps x 4", "ldg", 32, 4, False, None), ("ldg wait, 32 warps x 4", "ldg", 32, 4, True, None),
         ("ldg pure, 8 warps x 16", "ldg", 8, 16, False, None),
         ("rows 1 x 8 steps, pure", "rows", 1, 8, False, None), ("rows 2 x 4, pure", "rows", 2, 4, False, None),
         ("rows 4 x 2, pure", "rows", 4, 2, False, None), ("rows 4 x 4, pure", "rows", 4, 4, False, None),
         ("rows 8 x 2, pure", "rows", 8, 2, False, None), ("rows 4 x 4, wait", "rows", 4, 4, True, None)]
kname = lambda nc, s, ch, w, a: (f"token_stream_probe_ldg<{s}, {ch}, {B(w)}>" if nc == "ldg" else f"token_stream_probe_rows<16, {s}, {ch}, {B(w)}>"
                                 if nc == "rows" else f"token_stream_probe<{nc}, {s}, {ch}, {B(w)}, {B(a)}>")
names = tuple(kname(*p[1:]) for p in PLANS)
for rnd in range(2):
    for label, nc, s, ch, w, a in PLANS:
        try:
            k = get_kernel("step", kname(nc, s, ch, w, a), together=names)
            smem = 0 if nc in ("ldg", "rows") else s * ch * 1024
            if smem and k.max_dynamic_shared_size_bytes < smem: k.max_dynamic_shared_size_bytes = smem
            threads = 32 * s if nc == "ldg" else 512 if nc == "rows" else 32 * (nc + 1)
            args = (buf, offs, nbs, kds, np.int32(len(seg)), done, sink) if nc == "rows" else (buf, offs, nbs, np.int32(len(seg)), done, sink)
            def f(i):
                done.zero_()
                launch(k, (sms,), (threads,), args, smem=smem)
            ms = median(time_graph(f, calls=1, reps=10))
            torch.cuda.synchronize()
            ok = bool((done == sms).all())                       # every block counted every segment
            rec["plans"].append(dict(plan=label, NC=nc, S=s, CH_KiB=ch, WAIT=w, AHEAD=a, round=rnd, ms=ms, ratio=ms / floor_ms, all_counted=ok))
            print(f"  {label:32s} {ms:.3f} ms  {ms / floor_ms:.3f}x floor  counted {ok}  ({time.time() - t0:.0f} s)", flush=True)
        except Exception as e:
            rec["errors"].append(f"{label}: {e!r}"[:300]); print("ERROR", label, repr(e)[:300], flush=True)
    try:
        ks = get_kernel("gemv", "gemv_stream_probe<8>")
        views = [buf[int(o):int(o) + int(n)] for o, n in zip(off, seg)]
        ms = median(time_graph(lambda i: [launch(ks, (sms * 4,), (512,), (v, np.int64(v.numel() // 16), sink), pdl=True) for v in views], calls=1, reps=10))
        rec["plans"].append(dict(plan="one stream launch per segment, PDL", round=rnd, ms=ms, ratio=ms / floor_ms))
        print(f"  {'one stream launch per segment, PDL':32s} {ms:.3f} ms  {ms / floor_ms:.3f}x floor  ({time.time() - t0:.0f} s)", flush=True)
    except Exception as e:
        rec["errors"].append(f"chained: {e!r}"[:300]); print("ERROR chained", repr(e)[:300], flush=True)
    save()
rec["wall_s"] = time.time() - t0
save()
print("\nSUMMARY (ms per token, both rounds; floor %.3f ms at %.3f TB/s):" % (floor_ms, bw))
for label in [p[0] for p in PLANS] + ["one stream launch per segment, PDL"]:
    xs = [r["ms"] for r in rec["plans"] if r["plan"] == label]
    print(f"  {label:36s} " + " / ".join(f"{x:.3f}" for x in xs) + (f"  = {min(xs) / floor_ms:.3f}x" if xs else ""))
print("errors:", rec["errors"])
