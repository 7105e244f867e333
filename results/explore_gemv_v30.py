"""Chapter 06/09a: v30, the MLP's two GEMVs in one launch. Chapter 09a's timeline prices the pair gate|up -> down in the
step's chain at 87.5 % and 80.2 % of their floors (92 % and 89 % chained to themselves), and its streaming probe found a
grid-wide wait inside one launch ~1 us, under a launch boundary. v30 runs gate|up (v26's body, pairs strided over a
resident grid of one block an SM), counts the grid, and runs down (v26lp's body), its first run asked for before the count.
Builds: 20 warps a block (96 registers: down's one round, gate|up 6.6 rounds), 16 warps (128 registers: down's pairs in
1.2 rounds); XLD 0, the activation by the read-only path it may not use here, as a price of the coherent loads only.
Each build first bit-identical to the engine's two launches on the same inputs (the SwiGLU rows and the outputs, three
launches in a row on one counter, no give-ups); then alone against the engine's pair (PDL graph of 16 MLPs over 4
distinct weight sets, twice); then the decode step (27B shape, PDL graph) with every MLP through v30, greedy tokens
checked, three interleaved rounds at 1K and 32K.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v30.py OUT_DIR (gemv_v30_h200.json). About 3 min."""
import sys
import torch
import explore_util
from qwen_engine import gemv as G
from qwen_engine.runtime import time_graph, median
from qwen_engine.step import DecodeStep

I, H = 17408, 5120
GU, DN = (2 * I, H, 2), (H, I, 1)
BUILDS = {"v30 20 warps": dict(SR=20), "v30 16 warps": dict(SR=16), "v30 20 warps, XLD 0 (timing only)": dict(SR=20, XLD=0)}
SENTINEL = -1                                              # 0xFFFF as int16: v31's mark of a value not yet written
SYNC = {}


def sync_of(label):
    if label not in SYNC: SYNC[label] = torch.zeros(2, dtype=torch.int64, device="cuda")
    return SYNC[label]


def engine_pair(gu, x, dn, res, act, out, scr, pdl=True):
    G.engine_gemv(gu[0], gu[1], x, 2, None, out=act, scratch=scr[GU], pdl=pdl)
    G.engine_gemv(dn[0], dn[1], act, 1, res, out=out, scratch=scr[DN], pdl=pdl)


def identity(rec, gen):
    scr = {s: G.engine_scratch(*s) for s in (GU, DN)}
    rec["identity"] = []
    for trial in range(2):
        gu, dn = G.synth_fp8(2 * I, H, gen), G.synth_fp8(H, I, gen)
        x = (torch.randn(1, H, generator=gen, device="cuda") * 2).to(torch.bfloat16)
        res = torch.randn(1, H, generator=gen, device="cuda").to(torch.bfloat16)
        act_e, y_e = torch.empty(1, I, dtype=torch.bfloat16, device="cuda"), torch.empty(1, H, dtype=torch.bfloat16, device="cuda")
        engine_pair(gu, x, dn, res, act_e, y_e, scr, pdl=False)
        for label, kw in BUILDS.items():
            s, v31 = sync_of(label), kw.get("variant") == 31
            act = torch.empty_like(act_e)
            if v31: act.view(torch.int16).fill_(SENTINEL)          # once: each launch leaves it so
            for call in range(3):
                if not v31: act.fill_(float("nan"))
                y = torch.full_like(y_e, float("nan"))
                G.mlp_one_launch(gu, x, dn, res, act, y, s, **kw)
                torch.cuda.synchronize()
                r = dict(build=label, trial=trial, call=call, out_identical=torch.equal(y, y_e), out_mismatches=(y != y_e).sum().item(),
                         giveups=int(s[1].item()), count=int(s[0].item()))
                if v31: r["act_sentinel_after"] = bool((act.view(torch.int16) == SENTINEL).all().item())
                else: r.update(act_identical=torch.equal(act, act_e), act_mismatches=(act != act_e).sum().item())
                rec["identity"].append(r)
            print(f"trial {trial} {label}: {r}", flush=True)
            if v31 and trial == 0:                                 # negative control: h not holding the sentinel is read as written
                act.zero_(); y = torch.full_like(y_e, float("nan"))
                G.mlp_one_launch(gu, x, dn, res, act, y, s, **kw); torch.cuda.synchronize()
                rec.setdefault("negative_control", []).append(dict(build=label, what="h zeroed instead of the sentinel before the launch",
                                                                   out_mismatches=(y != y_e).sum().item(), rejected=not torch.equal(y, y_e)))
                print(f"{label} negative control (h zeroed): rejected {not torch.equal(y, y_e)}", flush=True)


def alone(rec, gen, bw):
    n, calls = 4, 16
    sets = [(G.synth_fp8(2 * I, H, gen), G.synth_fp8(H, I, gen)) for _ in range(n)]
    x = (torch.randn(1, H, generator=gen, device="cuda")).to(torch.bfloat16)
    res = torch.randn(1, H, generator=gen, device="cuda").to(torch.bfloat16)
    act, y = torch.empty(1, I, dtype=torch.bfloat16, device="cuda"), torch.empty(1, H, dtype=torch.bfloat16, device="cuda")
    scr = {s: G.engine_scratch(*s) for s in (GU, DN)}
    nb = G.bytes_of(*GU[:2], 1, 2) + G.bytes_of(*DN[:2], 1, 1)
    floor_us = nb / (bw * 1e12) * 1e6
    rec["alone"], rec["mlp_bytes"], rec["mlp_floor_us"] = [], nb, floor_us
    plans = {"engine pair": lambda i: engine_pair(sets[i % n][0], x, sets[i % n][1], res, act, y, scr)}
    for label, kw in BUILDS.items():
        plans[label] = (lambda kw, s: lambda i: G.mlp_one_launch(sets[i % n][0], x, sets[i % n][1], res, act, y, s, pdl=True, **kw))(kw, sync_of(label))
    for rep in range(2):
        for label, fn in plans.items():
            act.view(torch.int16).fill_(SENTINEL)                  # v31's start state (the others overwrite it)
            us = 1000 * median(time_graph(fn, calls=calls, reps=7))
            rec["alone"].append(dict(plan=label, rep=rep, us=us, frac=floor_us / us))
        print(f"rep {rep}: " + ", ".join(f"{t['plan']} {t['us']:.2f} us ({100 * t['frac']:.1f} %)" for t in rec["alone"] if t["rep"] == rep), flush=True)
    rec["giveups_after_alone"] = {k: int(v[1].item()) for k, v in SYNC.items()}
    del sets


def extra(step, rec):
    gen = torch.Generator(device="cuda").manual_seed(7)
    explore_util.guard(rec, "identity", lambda: identity(rec, gen))
    explore_util.guard(rec, "alone", lambda: alone(rec, gen, rec["bandwidth_tbps"]))


def apply(step, plan):
    if plan is None:
        step._gemv = lambda wq, x, epi, o, res=None: DecodeStep._gemv(step, wq, x, epi, o, res)
        return
    pend, s = {}, sync_of(plan["label"])
    kw = {k: v for k, v in plan.items() if k != "label"}
    step.act.view(torch.int16).fill_(SENTINEL)                     # v31's start state (v30 and the engine overwrite it)
    def g(wq, x, epi, o, res=None):
        if epi == 2 and o is step.act:
            pend["gu"] = (wq, x); return
        if epi == 1 and x is step.act and "gu" in pend:
            gu, xx = pend.pop("gu")
            G.mlp_one_launch(gu, xx, wq, res, step.act, o, s, pdl=step.pdl, **kw); return
        DecodeStep._gemv(step, wq, x, epi, o, res)
    step._gemv = g



def main(name, script, what, builds, plans):
    BUILDS.clear(); BUILDS.update(builds)
    rec, step = explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, name, what, script, plans, apply, reps=3,
                                        describe=lambda p: p, extra=extra)
    rec["giveups_at_end"] = {k: int(v[1].item()) for k, v in SYNC.items()}
    print("give-ups:", rec["giveups_at_end"])
    from qwen_engine.runtime import write_record
    write_record(name, what, f"PYTHONPATH=. python3 results/{script} OUT_DIR", rec, out_dir=sys.argv[1] if len(sys.argv) > 1 else None)


if __name__ == "__main__":
    main("gemv_v30_h200", "explore_gemv_v30.py",
         "v30, gate|up and down in one launch (a resident grid of one block an SM, a count of the grid between them) against the "
         "engine's two launches: bit-identity on the same inputs (three launches on one counter, give-ups counted), alone (PDL graph "
         "of 16 MLPs over 4 weight sets, twice), and the decode step (27B shape, synthetic, PDL graph) with every MLP through v30, "
         "greedy tokens, three interleaved rounds at 1K and 32K.", dict(BUILDS),
         {"engine": None, "v30 20 warps": dict(label="v30 20 warps", SR=20), "v30 16 warps": dict(label="v30 16 warps", SR=16)})
