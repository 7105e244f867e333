"""Chapters 01 and 08: what a written byte costs. explore_power.py found the decode step 0.21 ms a token faster at 1K when
GDN stores no state (build 96), while its 48 x 3 MiB of stores are 151 MB, 0.03 ms at the read stream's rate: seven times
their bytes. Is that a property of the memory (a burst of writes between long reads costs more than its bytes), or of the
step? This run answers with chapter 01's stream kernels alone, no model:
1. the streams: read 8 GiB (stream_read), write 8 GiB (stream_write), read-modify-write 4 GiB in place (stream_rmw),
   torch's copy 4 GiB -> 4 GiB: bytes moved / median time;
2. a token's shape: one CUDA graph of 48 rounds of [read a 1/48 slice of 26 GiB (what the step reads between two GDN
   layers), then one burst on a per-layer buffer of S MiB]: the burst nothing, a read, a write, a read-modify-write (the
   state's access), the same on one buffer shared by all rounds (it stays in L2), S = 3 and 12; three interleaved rounds,
   median of the replays; the cost of a burst = its graph's time - the time with the same launches reading instead (or
   with none), against its bytes at the stream rates of part 1;
3. each graph of part 2 replayed back to back for WINDOW s with nvidia-smi sampling power, clocks and throttle reasons.
Before timing, the new kernels' outputs are checked (stream_write's values; stream_rmw once changes exactly its two words,
twice restores every byte) at an awkward length.
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_write_cost.py OUT_DIR   (about 1 min)
(token_graphs took its bursts as an argument, and L2 policies, after this record was made: the same graphs.)"""
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import explore_util
import explore_power

LAYERS, READ_TOTAL = 48, 26 * 2**30
BURSTS = [("none", None, 3, False), ("read", "read", 3, False), ("write", "write", 3, False), ("rmw", "rmw", 3, False),
          ("rmw, one buffer", "rmw", 3, True), ("read", "read", 12, False), ("rmw", "rmw", 12, False)]
KEY = 0x5A5A5A5A
SMI_FILE = "/tmp/qe_write_cost_smi.csv"


def as_i32(x: torch.Tensor) -> torch.Tensor:
    "int64 values mod 2^32 as the int32 a kernel's unsigned word reads as."
    return ((x & 0xFFFFFFFF) - ((x & 0x80000000) << 1)).to(torch.int32)


def check_kernels(rec):
    from qwen_engine.roofline import stream_write, stream_rmw
    n = 3 * 2**20 + 48 * 16 + 16                               # not a multiple of the grid's width
    b = torch.zeros(n, dtype=torch.uint8, device="cuda")
    stream_write(b, KEY)
    j = torch.arange(n // 16, device="cuda", dtype=torch.int64)
    want = torch.stack([as_i32(j ^ KEY), as_i32(j), as_i32(torch.full_like(j, KEY)), as_i32(~j)], 1)
    rec["checks"]["write values"] = bool(torch.equal(b.view(torch.int32).view(-1, 4), want))
    a = torch.randint(0, 256, (n,), dtype=torch.uint8, device="cuda")
    c = a.clone()
    stream_rmw(c, KEY)
    w0, w1 = a.view(torch.int32).view(-1, 4), c.view(torch.int32).view(-1, 4)
    k = as_i32(torch.tensor(KEY))
    rec["checks"]["rmw once"] = bool(torch.equal(w1[:, 1:3], w0[:, 1:3]) and torch.equal(w1[:, 0], w0[:, 0] ^ k.cuda())
                                     and torch.equal(w1[:, 3], w0[:, 3] ^ k.cuda()))
    stream_rmw(c, KEY)
    rec["checks"]["rmw twice"] = bool(torch.equal(c, a))
    print("checks:", rec["checks"], flush=True)
    assert all(rec["checks"].values()), rec["checks"]


def streams(rec, el):
    from qwen_engine.roofline import stream_read, stream_write, stream_rmw
    from qwen_engine.runtime import time_events, median
    n = 8 * 2**30
    buf = torch.randint(0, 256, (n,), dtype=torch.uint8, device="cuda")
    sink = torch.zeros(1, dtype=torch.int32, device="cuda")
    half = buf[: n // 2]
    dst = torch.empty(n // 2, dtype=torch.uint8, device="cuda")
    runs = [("read", n, lambda: stream_read(buf, sink=sink)), ("write", n, lambda: stream_write(buf, KEY)),
            ("rmw", n, lambda: stream_rmw(half, KEY)), ("torch copy", n, lambda: dst.copy_(half))]
    for rep in range(3):
        for label, moved, fn in runs:
            ms = median(time_events(fn, warmup=2, reps=10))
            rec["streams"].append(dict(kind=label, rep=rep, bytes=moved, ms=ms, tbps=moved / ms / 1e9))
        print(f"rep {rep}: " + ", ".join(f"{s['kind']} {s['tbps']:.3f}" for s in rec["streams"] if s["rep"] == rep) + f" TB/s {el()}", flush=True)
    del buf, dst


def token_graphs(bursts=BURSTS):
    """One captured graph per entry of `bursts` (label, kind, S, one buffer[, the reads' stream_read variant, 2 unless
    given]): 48 rounds of [read a slice, the burst]. kind: None, "read", "write", "rmw", or "rmw1"/"rmw2" (stream_rmw's
    stores with an L2 policy: explore_write_policy.py)."""
    from qwen_engine.roofline import stream_read, stream_write, stream_rmw
    sl = READ_TOTAL // LAYERS // 16 * 16
    big = torch.randint(0, 256, (sl * LAYERS,), dtype=torch.uint8, device="cuda")
    slices = [big[l * sl:(l + 1) * sl] for l in range(LAYERS)]
    states = {S: torch.randint(0, 256, (LAYERS * S * 2**20,), dtype=torch.uint8, device="cuda") for S in {b[2] for b in bursts}}
    sink = torch.zeros(1, dtype=torch.int32, device="cuda")
    op = {"read": lambda t: stream_read(t, sink=sink), "write": lambda t: stream_write(t, KEY), "rmw": lambda t: stream_rmw(t, KEY),
          "rmw1": lambda t: stream_rmw(t, KEY, policy=1), "rmw2": lambda t: stream_rmw(t, KEY, policy=2)}

    def token(kind, S, one, rv=2):
        for l in range(LAYERS):
            stream_read(slices[l], variant=rv, sink=sink)
            if kind is not None:
                s = 0 if one else l
                op[kind](states[S][s * S * 2**20:(s + 1) * S * 2**20])

    graphs = []
    for b in bursts:
        token(*b[1:])                                             # compiles outside the capture
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            token(*b[1:])
        graphs.append(g)
    return sl, graphs, (big, states, sink)


def main(out):
    from qwen_engine.runtime import time_events, median
    rec, guard, el, save = explore_util.recorder(
        "write_cost_h200", "What a written byte costs: chapter 01's streams (read, write, read-modify-write, torch copy; bytes moved / "
        "median time), and one graph of 48 rounds of [read 1/48 of 26 GiB, then a burst of S MiB: nothing, a read, a write, a "
        "read-modify-write; per-round buffers or one shared buffer], three interleaved rounds, plus power windows.",
        "explore_write_cost.py", out=out, checks={}, streams=[], tokens=[], windows=[], samples=[])
    guard("checks", lambda: check_kernels(rec))
    guard("streams", lambda: streams(rec, el))
    smi = explore_util.smi_start(SMI_FILE)
    t_ref = time.time()
    sl, graphs, keep = token_graphs()
    rec["read_slice_bytes"] = sl
    print(f"graphs ready {el()}", flush=True)
    for rep in range(3):
        for (label, kind, S, one), g in zip(BURSTS, graphs):
            ms = median(time_events(g.replay, warmup=2, reps=10))
            rec["tokens"].append(dict(burst=label, kind=kind, S_mib=S, one_buffer=one, rep=rep, ms=ms))
        print(f"rep {rep}: " + ", ".join(f"{t['burst']} {t['S_mib']} {t['ms']:.4f}" for t in rec["tokens"] if t["rep"] == rep) + f" {el()}", flush=True)
    explore_power.WINDOW = 1.5
    for (label, kind, S, one), g in zip(BURSTS, graphs):
        t0, t1, calls, ms = explore_power.window(g.replay)
        rec["windows"].append(dict(burst=label, S_mib=S, one_buffer=one, t0=t0 - t_ref, t1=t1 - t_ref, calls=calls, ms=ms))
    rec["samples"] = explore_util.smi_samples(smi, SMI_FILE, t_ref)
    for w in rec["windows"]: explore_util.window_stats(w, rec["samples"])
    save()
    import statistics as st
    rate = {k: st.median(s["tbps"] for s in rec["streams"] if s["kind"] == k) for k in ("read", "write", "rmw", "torch copy")}
    print("\nstreams, TB/s (median of 3): " + ", ".join(f"{k} {v:.3f}" for k, v in rate.items()))
    ms = {(t["burst"], t["S_mib"]): st.median(x["ms"] for x in rec["tokens"] if (x["burst"], x["S_mib"]) == (t["burst"], t["S_mib"])) for t in rec["tokens"]}
    base = ms[("none", 3)]
    print("burst | S MiB | ms a token (median of 3) | over none | over the same launches reading | bytes at the stream rate, ms")
    for (label, kind, S, one) in BURSTS:
        moved = LAYERS * S * 2**20 * (2 if kind == "rmw" else 1) if kind else 0
        at_rate = moved / (rate.get(kind, rate["read"]) * 1e12) * 1e3 if kind else 0
        over_read = ms[(label, S)] - ms[("read", S)] if kind else float("nan")
        print(f"{label} | {S} | {ms[(label, S)]:.4f} | {ms[(label, S)] - base:+.4f} | {over_read:+.4f} | {at_rate:.4f}")
    print("\nwindow | S | ms | SM MHz median (min) | W median (max) | capped")
    for w in rec["windows"]:
        print(f"{w['burst']} | {w['S_mib']} | {w['ms']:.4f} | {w.get('sm_median')} ({w.get('sm_min')}) | {w.get('watts_median')} ({w.get('watts_max')}) | {w.get('capped')} of {w.get('samples')}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
