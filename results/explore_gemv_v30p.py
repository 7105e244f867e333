"""Chapter 06: where v30's time goes. v30 and v31 (the MLP in one launch) were bit-identical to the engine's two launches
and slower (gemv_v30_h200.json, gemv_v31_h200.json). Two diagnostics of v30 (20 warps a block, one block an SM):
GUO, its gate|up phase alone (the same resident grid and strided pairs, no count, no down), timed beside the engine's
gate|up kernel alone; and PRB, lane 0 of every warp writing %globaltimer at its start, when its gate|up pairs are done
and at its end, read after a graph of 16 launches (the marks of the last), three graphs. PRB's outputs are checked equal
to v30's, GUO's SwiGLU rows to the engine's gate|up.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v30p.py OUT_DIR (gemv_v30p_h200.json). About 1 min."""
import sys
import statistics
import torch
import explore_util
from qwen_engine import gemv as G
from qwen_engine.runtime import time_graph, median

I, H = 17408, 5120
GU, DN = (2 * I, H, 2), (H, I, 1)
rec, guard, el, save = explore_util.recorder(
    "gemv_v30p_h200", "v30's phases: its gate|up phase alone (GUO) beside the engine's gate|up and down kernels alone (PDL graphs, "
    "weights rotated past L2, twice), and every warp's start, gate|up end and end (PRB, %globaltimer) in the last of 16 chained "
    "launches, three graphs; PRB's outputs equal to v30's, GUO's SwiGLU rows to the engine's.", "explore_gemv_v30p.py")
bw = rec["bandwidth_tbps"]
gen = torch.Generator(device="cuda").manual_seed(7)
sms = torch.cuda.get_device_properties(0).multi_processor_count
SR = 20
NW = sms * SR


def new_sync(): return torch.zeros(4 + 3 * NW, dtype=torch.int64, device="cuda")


def checks():
    gu, dn = G.synth_fp8(2 * I, H, gen), G.synth_fp8(H, I, gen)
    x = (torch.randn(1, H, generator=gen, device="cuda") * 2).to(torch.bfloat16)
    res = torch.randn(1, H, generator=gen, device="cuda").to(torch.bfloat16)
    act_e = G.engine_gemv(gu[0], gu[1], x, 2, None, out=None, scratch=G.engine_scratch(*GU))
    y_e = G.engine_gemv(dn[0], dn[1], act_e, 1, res, out=None, scratch=G.engine_scratch(*DN))
    out = {}
    for label, kw in (("v30 PRB", dict(PRB=True)), ("v30 GUO", dict(GUO=True))):
        act, y = torch.full_like(act_e, float("nan")), torch.full_like(y_e, float("nan"))
        G.mlp_one_launch(gu, x, dn, res, act, y, new_sync(), variant=30, SR=SR, **kw)
        torch.cuda.synchronize()
        out[label] = dict(act_identical=torch.equal(act, act_e), out_identical=torch.equal(y, y_e) if label == "v30 PRB" else None)
        print(label, out[label], flush=True)
    rec["checks"] = out


def alone():
    n, calls = 4, 16
    sets = [(G.synth_fp8(2 * I, H, gen), G.synth_fp8(H, I, gen)) for _ in range(n)]
    x = torch.randn(1, H, generator=gen, device="cuda").to(torch.bfloat16)
    res = torch.randn(1, H, generator=gen, device="cuda").to(torch.bfloat16)
    act, y = torch.empty(1, I, dtype=torch.bfloat16, device="cuda"), torch.empty(1, H, dtype=torch.bfloat16, device="cuda")
    sc = {s: G.engine_scratch(*s) for s in (GU, DN)}
    s30, sg = new_sync(), new_sync()
    fl = lambda *shapes: sum(G.bytes_of(N, K, 1, e) for N, K, e in shapes) / (bw * 1e12) * 1e6
    plans = {
        "engine gate|up": (lambda i: G.engine_gemv(sets[i % n][0][0], sets[i % n][0][1], x, 2, None, out=act, scratch=sc[GU], pdl=True), fl(GU)),
        "v30 gate|up phase (GUO)": (lambda i: G.mlp_one_launch(sets[i % n][0], x, sets[i % n][1], res, act, y, sg, SR=SR, GUO=True, pdl=True), fl(GU)),
        "engine down": (lambda i: G.engine_gemv(sets[i % n][1][0], sets[i % n][1][1], act, 1, res, out=y, scratch=sc[DN], pdl=True), fl(DN)),
        "v30": (lambda i: G.mlp_one_launch(sets[i % n][0], x, sets[i % n][1], res, act, y, s30, SR=SR, pdl=True), fl(GU, DN)),
    }
    rec["alone"] = []
    for rep in range(2):
        for label, (fn, floor) in plans.items():
            us = 1000 * median(time_graph(fn, calls=calls, reps=7))
            rec["alone"].append(dict(plan=label, rep=rep, us=us, floor_us=floor, frac=floor / us))
        print(f"rep {rep}: " + ", ".join(f"{t['plan']} {t['us']:.2f} us ({100 * t['frac']:.1f} %)" for t in rec["alone"] if t["rep"] == rep), flush=True)
    # the marks: a graph of 16 chained PRB launches, the last launch's marks
    rec["marks"] = []
    for g in range(3):
        sp = new_sync()
        time_graph(lambda i: G.mlp_one_launch(sets[i % n][0], x, sets[i % n][1], res, act, y, sp, SR=SR, PRB=True, pdl=True), calls=calls, reps=2)
        torch.cuda.synchronize()
        m = sp[4:].view(NW, 3).double()
        t0 = m[:, 0].min()
        m = (m - t0) / 1e3                                      # us from the first warp's start
        pairs = torch.tensor([len(range(w, I, NW)) for w in range(NW)])
        d = dict(graph=g, start_max=m[:, 0].max().item())
        for k, nm in ((1, "gateup_end"), (2, "end")):
            v = m[:, k]
            d[nm] = dict(min=v.min().item(), median=v.median().item(), p90=v.quantile(0.9).item(), max=v.max().item())
        for p in (6, 7):
            sel = m[pairs == p]
            d[f"gateup_end_{p}_pairs"] = dict(warps=int(sel.shape[0]), median=sel[:, 1].median().item(), max=sel[:, 1].max().item())
        down = m[: (H // 2)]                                      # warps with a down pair (w < H / 2)
        d["down_after_last_gateup"] = dict(median=(down[:, 2] - m[:, 1].max()).median().item(), max=(down[:, 2] - m[:, 1].max()).max().item())
        rec["marks"].append(d)
        print(f"graph {g}: {d}", flush=True)
    rec["floors_us"] = dict(gateup=fl(GU), down=fl(DN))
    del sets


guard("checks", checks)
guard("alone", alone)
save()
print(f"done {el()}; errors {rec['errors']}")
