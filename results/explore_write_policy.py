"""Chapters 01 and 08: can an L2 eviction policy move the write-back's price? write_cost_h200.json found that a 3 MiB
read-modify-write after each of 48 long read streams costs 0.21 ms a token over the same burst only reading, while on one
buffer that stays in L2 it costs nothing: the dirty lines' write-back during the next reads is the price. Hopper's loads
and stores can carry an L2 eviction priority (`createpolicy` + `.L2::cache_hint`). If the reads are marked evict_first,
the state's dirty lines might stay in L2 longer and leave at other times; if the stores are marked evict_first or
evict_last, they might leave sooner or later. This run times explore_write_cost.py's token graph (48 rounds of [read 1/48
of 26 GiB, then a burst on that round's 3 MiB buffer]) with the reads plain (stream_read v2) or evict_first (v3), and the
burst a read (the control) or a read-modify-write with plain, evict_first or evict_last stores; three interleaved rounds.
Also the read stream v3 alone (8 GiB) beside v2. stream_rmw's policy builds are checked first (once changes exactly two
words of each 16 bytes, twice restores every byte).
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_write_policy.py OUT_DIR   (about 1 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import explore_util
import explore_write_cost as W

BURSTS = [(f"reads {rn}, {bn}", kind, 3, False, rv) for rv, rn in ((2, "plain"), (3, "evict_first"))
          for kind, bn in (("read", "burst read"), ("rmw", "rmw plain"), ("rmw1", "rmw evict_first"), ("rmw2", "rmw evict_last"))]


def check_policies(rec):
    from qwen_engine.roofline import stream_rmw
    n = 3 * 2**20 + 48 * 16 + 16
    a = torch.randint(0, 256, (n,), dtype=torch.uint8, device="cuda")
    k = W.as_i32(torch.tensor(W.KEY)).cuda()
    for pol in (1, 2):
        c = a.clone()
        stream_rmw(c, W.KEY, policy=pol)
        w0, w1 = a.view(torch.int32).view(-1, 4), c.view(torch.int32).view(-1, 4)
        rec["checks"][f"rmw policy {pol} once"] = bool(torch.equal(w1[:, 1:3], w0[:, 1:3]) and torch.equal(w1[:, 0], w0[:, 0] ^ k)
                                                        and torch.equal(w1[:, 3], w0[:, 3] ^ k))
        stream_rmw(c, W.KEY, policy=pol)
        rec["checks"][f"rmw policy {pol} twice"] = bool(torch.equal(c, a))
    print("checks:", rec["checks"], flush=True)
    assert all(rec["checks"].values()), rec["checks"]


def main(out):
    import statistics as st
    from qwen_engine.roofline import stream_read
    from qwen_engine.runtime import time_events, median
    rec, guard, el, save = explore_util.recorder(
        "write_policy_h200", "explore_write_cost.py's token graph (48 rounds of [read 1/48 of 26 GiB, then a 3 MiB burst on that "
        "round's buffer]) with the reads plain or L2 evict_first, the burst a read or a read-modify-write with plain, L2 "
        "evict_first or evict_last stores; three interleaved rounds; and the read stream with and without evict_first.",
        "explore_write_policy.py", out=out, checks={}, streams=[], tokens=[])
    guard("checks", lambda: check_policies(rec))
    n = 8 * 2**30
    buf = torch.randint(0, 256, (n,), dtype=torch.uint8, device="cuda")
    sink = torch.zeros(1, dtype=torch.int32, device="cuda")
    for rep in range(3):
        for v in (2, 3):
            ms = median(time_events(lambda: stream_read(buf, variant=v, sink=sink), warmup=2, reps=10))
            rec["streams"].append(dict(variant=v, rep=rep, ms=ms, tbps=n / ms / 1e9))
    del buf
    print("read streams: " + ", ".join(f"v{s['variant']} {s['tbps']:.3f}" for s in rec["streams"]) + f" TB/s {el()}", flush=True)
    sl, graphs, keep = W.token_graphs(BURSTS)
    rec["read_slice_bytes"] = sl
    for rep in range(3):
        for b, g in zip(BURSTS, graphs):
            ms = median(time_events(g.replay, warmup=2, reps=10))
            rec["tokens"].append(dict(burst=b[0], kind=b[1], reads=b[4], rep=rep, ms=ms))
        print(f"rep {rep}: " + ", ".join(f"{t['burst']} {t['ms']:.4f}" for t in rec["tokens"] if t["rep"] == rep) + f" {el()}", flush=True)
    save()
    ms = {b[0]: st.median(t["ms"] for t in rec["tokens"] if t["burst"] == b[0]) for b in BURSTS}
    print("\nburst | ms a token (median of 3) | over the same reads with a read burst")
    for b in BURSTS:
        ctl = ms[f"reads {'plain' if b[4] == 2 else 'evict_first'}, burst read"]
        print(f"{b[0]} | {ms[b[0]]:.4f} | {ms[b[0]] - ctl:+.4f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
