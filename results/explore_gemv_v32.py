"""Chapter 06/09a: v32, gate|up whose last pairs are split over K. The engine's gate|up (8,704 blocks of two warps, a row
pair a warp) takes 8.24 rounds of the 1,056 blocks an H200 holds; in the step its last tenth of blocks ends over the last
~4 us of its ~43 (step_timeline_now_h200.json), and v30's marks (gemv_v30p_h200.json) found units of ~5 us a warp the
cause of a resident grid's loss. v32 runs the engine's gate|up on pairs [0, F) and gives each of the last pairs a block
whose two warps split its K (3 runs and 2 runs of two steps), met in shared memory; the grid's last blocks are then ~0.6
of a pair long. F = 16,896 (8 whole rounds of engine blocks, then 512 split pairs) and F = 16,352 (1,056 split pairs).
1. Correct: rows [0, F) bit-identical to the engine's kernel; the split rows against the float64 definition (SwiGLU of
   the bf16-rounded float64 projection, the reference's epilogue) no further than the engine's own rows are; two runs
   bit-identical; a negative control (the split rows taken from another matrix) rejected.
2. Alone: a PDL graph of gate|up launches over rotated weights, engine and both F, two rounds.
3. The decode step (27B shape, PDL graph): greedy tokens of each plan recorded (the split rows may move a near-tie), then
   ms a token at 1K and 32K, five interleaved rounds.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v32.py OUT_DIR (gemv_v32_h200.json). About 2 min."""
import sys
import torch
import explore_util
from qwen_engine import gemv as G
from qwen_engine.runtime import time_graph, median, bf16_ulp, rotation_count
from qwen_engine.step import DecodeStep

N, K = 34816, 5120
GU = (N, K, 2)
FS = (16896, 16352)


def ulps_to(y, ref):
    return ((y.double() - ref.double()).abs() / bf16_ulp(ref.double())).flatten()


def correctness(rec, gen):
    rec["checks"] = []
    scr = G.engine_scratch(*GU)
    for trial in range(2):
        q, sc = G.synth_fp8(N, K, gen)
        x = (torch.randn(1, K, generator=gen, device="cuda") * 2).to(torch.bfloat16)
        ye = G.engine_gemv(q, sc, x, 2, None, out=None, scratch=scr)
        ref = G.torch_epilogue(G.gemv_reference(q, sc, x).to(torch.bfloat16), 2)    # the reference's epilogue on the definition
        ue = ulps_to(ye, ref)
        q2, sc2 = G.synth_fp8(N, K, gen)
        yo = G.engine_gemv(q2, sc2, x, 2, None, out=None, scratch=scr)              # another matrix's outputs (the control)
        for F in FS:
            ys = [torch.full_like(ye, float("nan")) for _ in range(2)]
            for y in ys: G.gateup_v32(q, sc, x, y, F)
            torch.cuda.synchronize()
            u = ulps_to(ys[0], ref)
            ctrl = ys[0].clone(); ctrl[:, F:] = yo[:, F:]
            uc = ulps_to(ctrl, ref)
            ok = lambda uu: bool(uu[F:].max() <= max(ue.max().item(), 1.0) and (uu[F:] > 0).float().mean() <= 2 * (ue > 0).float().mean() + 0.01)
            r = dict(trial=trial, F=F, head_identical=torch.equal(ys[0][:, :F], ye[:, :F]), repeat_identical=torch.equal(ys[0], ys[1]),
                     unwritten=int(torch.isnan(ys[0]).sum()), split_rows=N // 2 - F, split_rows_differing_from_engine=int((ys[0][:, F:] != ye[:, F:]).sum()),
                     engine_max_ulp=ue.max().item(), engine_frac_differing=(ue > 0).float().mean().item(),
                     split_max_ulp=u[F:].max().item(), split_frac_differing=(u[F:] > 0).float().mean().item(),
                     within=ok(u), control_rejected=not ok(uc))
            rec["checks"].append(r)
            print(r, flush=True)


def alone(rec, gen):
    n = rotation_count(N * K)
    ws = [G.synth_fp8(N, K, gen) for _ in range(n)]
    x = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
    out = torch.empty(1, N // 2, dtype=torch.bfloat16, device="cuda")
    scr = G.engine_scratch(*GU)
    fl = G.bytes_of(N, K, 1, 2) / (rec["bandwidth_tbps"] * 1e12) * 1e6
    plans = {"engine": lambda i: G.engine_gemv(ws[i % n][0], ws[i % n][1], x, 2, None, out=out, scratch=scr, pdl=True)}
    for F in FS: plans[f"v32 F {F}"] = (lambda F: lambda i: G.gateup_v32(ws[i % n][0], ws[i % n][1], x, out, F, pdl=True))(F)
    rec["alone"] = []
    for rep in range(2):
        for label, fn in plans.items():
            us = 1000 * median(time_graph(fn, calls=n * max(1, 40 // n), reps=7))
            rec["alone"].append(dict(plan=label, rep=rep, us=us, frac=fl / us))
        print(f"rep {rep}: " + ", ".join(f"{t['plan']} {t['us']:.2f} us ({100 * t['frac']:.1f} %)" for t in rec["alone"] if t["rep"] == rep), flush=True)
    del ws


def apply(step, plan):
    if plan is None:
        step._gemv = lambda wq, x, epi, o, res=None: DecodeStep._gemv(step, wq, x, epi, o, res)
        return
    def g(wq, x, epi, o, res=None):
        if epi == 2: G.gateup_v32(wq[0], wq[1], x, o, plan, pdl=step.pdl); return
        DecodeStep._gemv(step, wq, x, epi, o, res)
    step._gemv = g


PLANS = {"engine": None, **{f"v32 F {F}": F for F in FS}}


def extra(step, rec):
    from qwen_engine.step import run
    from qwen_engine.decode_bench import _prompt
    gen = torch.Generator(device="cuda").manual_seed(7)
    explore_util.guard(rec, "correctness", lambda: correctness(rec, gen))
    explore_util.guard(rec, "alone", lambda: alone(rec, gen))
    rec["tokens_by_plan"] = {}
    for label, plan in PLANS.items():
        apply(step, plan); step.graph = None
        rec["tokens_by_plan"][label] = explore_util.guard(rec, f"tokens {label}", lambda: list(run(step, _prompt(1024)[:16], 24)))
    print("tokens equal to the engine's:", {k: v == rec["tokens_by_plan"]["engine"] for k, v in rec["tokens_by_plan"].items()}, flush=True)


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "gemv_v32_h200",
                        "v32, gate|up with its last pairs split over K (two warps a pair) after the engine's first F pairs: the first "
                        "rows bit-identical to the engine's, the split rows against the float64 definition beside the engine's own, "
                        "repeats, a negative control; alone (PDL graph, rotated weights, twice); the decode step (27B shape, synthetic, "
                        "PDL graph), greedy tokens recorded, five interleaved rounds at 1K and 32K.",
                        "explore_gemv_v32.py", PLANS, apply, reps=5, tokens=False, describe=lambda p: p, extra=extra)
