"""Chapter 09a: the count hand-off. The engine's residual norm waits for its grid (griddepcontrol.wait): it reads its input
once the GEMV before it (down, out_proj / o_proj) has completed and the GPU has signalled it, ~0.9 us after that GEMV's last
block ends (step_timeline_handoff2304_h200.json); the GEMV after the norm then waits for the norm's own completion signal.
Here the producer is chapter 06's v36 with DN 2 (each lane fences its stores, then its warp counts its end into one int64)
and the norm is chapter 05's v1c, which has no grid wait at all: its thread 0 polls the count with acquire loads until every
one of the producer's 2,560 warps has counted, resets it, and the block reads its input through L2. The GEMV after the norm
still waits for the norm's grid. The count replaces the producer's completion signal on the norm's path.
Checks, all before any timing:
  (a) v36 DN 2 against the engine's builds on the same inputs (down and out_proj, twice each): bit for bit, and its count is
      one per warp (2,560);
  (b) v1c against the engine's EW norm with the count already complete (three seeds, PDL on and off): bit for bit, the count
      reset, no give-up;
  (c) the wait is real: v1c launched on a row that holds other values while a second stream, after ~1 ms (torch's _sleep),
      writes the row and then the count: bit-identical to the norm of the row written, no give-up; the negative control, the
      same with no poll (trg 0): the norm of the values that were there, so it differs;
  (d) the decode step (27B shape, synthetic, seed 0), PDL and plain graphs: tokens, residual stream, recurrent states and conv
      rings after 16 + 24 tokens against the engine's, give-ups; plans "fence" (v36 DN 2 + v1c), "nofence" (the count without
      the fence: a timing control, not a correct design) and "nopoll" (the negative control: the norms read at once).
Then (explore_util.step_plans) greedy tokens and five interleaved rounds of ms per token at 1K and 32K; a plan whose tokens
differ from the engine's is not timed.
Usage on the H200: PYTHONPATH=. python3 results/explore_count_handoff.py OUT_DIR (count_handoff_h200.json). About 5 minutes.
With QE_AWAIT=1 (await_handoff_h200.json): also the GEMV after each such norm without a grid wait (chapter 06's v37: its
blocks await a number the norm writes once its outputs are visible, and read their activation by coherent loads): checked
bit for bit against the engine's builds, its wait against a late writer, and a number never written (the negative control:
every block gives up); plans engine, fence, await (every GEMV after a counted norm), await1 (q|k|v|z and q|gate|k|v only)."""
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_util

PLANS = {"engine": None, "fence": "fence", "nofence": "nofence", "nopoll": "nopoll"}
if os.environ.get("QE_AWAIT"):               # the second run: the GEMV after the norm awaits the norm's flag, not its grid (v37)
    PLANS = {"engine": None, "fence": "fence", "await": "await", "await1": "await1", "nopoll": "nopoll"}
AWAIT = ((16384, 5120, 0), (14336, 5120, 0), (34816, 5120, 2))


def apply(step, plan):
    step.count_handoff = plan
    step.counted.zero_(); step.nflag.zero_()


def alone_checks(rec, el):
    "(a), (b), (c)."
    import torch
    from qwen_engine import gemv as G
    from qwen_engine.config import preset
    from qwen_engine.norms import rmsnorm, rmsnorm_counted
    names = ("gemv_fp8_v36<20, 1, 1, 2, 34, 1, true, true, 2, 2>", "gemv_fp8_v36<20, 1, 1, 3, 12, 1, true, true, 0, 2>")
    G.get_kernel("gemv", names[0], together=names)
    gen = torch.Generator(device="cuda").manual_seed(11)
    cnt = torch.zeros(2, dtype=torch.int64, device="cuda")
    rec["v1c_wait"] = []
    rec["v36dn2"] = explore_util.count_checks(gen, cnt, "dnf")
    eps = preset("qwen3_5_27b").rms_norm_eps
    def v1c(x, w, y, pdl):
        cnt[0], cnt[1] = 2560, 0
        rmsnorm_counted(x, w, eps, y, cnt, 2560, pdl=pdl)
        return lambda: dict(reset=int(cnt[0]) == 0, giveups=int(cnt[1]))
    rec["v1c"] = explore_util.norm_identity(eps, v1c)
    torch.cuda._sleep(1000)                                  # the sleep kernel loaded before it is needed beside a running one
    side = torch.cuda.Stream()
    for seed, trg in ((5, 2560), (6, 2560), (7, 0)):
        g = torch.Generator(device="cuda").manual_seed(seed)
        true = torch.randn(1, 5120, generator=g, device="cuda").to(torch.bfloat16)
        stale = torch.randn(1, 5120, generator=g, device="cuda").to(torch.bfloat16)
        w = (torch.randn(5120, generator=g, device="cuda") * 0.1).to(torch.bfloat16)
        ytrue, ystale = torch.empty_like(true), torch.empty_like(true)
        rmsnorm(true, w, eps, out=ytrue, early=True); rmsnorm(stale, w, eps, out=ystale, early=True)
        x, y = stale.clone(), torch.full_like(true, float("nan"))
        cnt.zero_()
        torch.cuda.synchronize()
        with torch.cuda.stream(side):                        # the writer: ~1 ms later, the row, then the count
            torch.cuda._sleep(2_000_000)
            x.copy_(true)
            cnt[0].fill_(2560)
        rmsnorm_counted(x, w, eps, y, cnt, trg)
        torch.cuda.synchronize()
        same = lambda a, b: torch.equal(a.view(torch.int16), b.view(torch.int16))
        rec["v1c_wait"].append(dict(seed=seed, trg=trg, equals_written=same(y, ytrue), equals_stale=same(y, ystale), giveups=int(cnt[1])))
    if os.environ.get("QE_AWAIT"): await_checks(rec, cnt, side, el)
    ok36 = all(v["identical"] and v["count"] == 2560 for v in rec["v36dn2"])
    ok1c = all(v["identical"] and v["reset"] and v["giveups"] == 0 for v in rec["v1c"])
    okw = all((v["equals_written"] and v["giveups"] == 0) if v["trg"] else (v["equals_stale"] and not v["equals_written"]) for v in rec["v1c_wait"])
    print(f"(a) v36 DN 2 bit-identical, counting 2,560: {ok36}; (b) v1c bit-identical, reset, no give-up: {ok1c}; "
          f"(c) the wait is real and the control reads stale: {okw} {rec['v1c_wait']} {el()}", flush=True)
    if not (ok36 and ok1c and okw): rec["errors"].append(f"alone checks: v36dn2 {rec['v36dn2']}, v1c {rec['v1c']}, wait {rec['v1c_wait']}")


def await_checks(rec, flag, side, el):
    """v37 (the GEMVs after a norm, awaiting its flag): bit-identical to the engine's builds with the flag already set (each
    shape twice, PDL on and off); the wait is real: v1c (its input written by a second stream after ~1 ms, then its count),
    and v37 as its programmatic dependent: the engine's product of the norm of the row written, no give-up (a writer on a
    second stream alone would find no SM: v37's spinning blocks hold them all); the negative control: the norm writes another
    number than v37 awaits: every block of v37 gives up at 20 ms (counted). Then each shape alone (PDL graph, weights rotated
    past L2), v37 with its flag already set against the engine's build, three interleaved rounds."""
    import torch
    from qwen_engine import gemv as G
    names = tuple(f"gemv_fp8_v37<2, {rp}, {e}, {u}, 10, {mb}, {ek}, 0>" for rp, e, u, mb, ek in
                  ((2, 0, 3, 8, "true, true"), (2, 0, 3, 7, "true, true"), (1, 2, 2, 8, "false, false")))
    G.get_kernel("gemv", names[0], together=names)
    gen = torch.Generator(device="cuda").manual_seed(13)
    rec["v37"], rec["v37_wait"], rec["v37_alone"] = [], [], []
    for shape in AWAIT:
        N, K, epi = shape
        q, sc = G.synth_fp8(N, K, gen)
        kw = G.engine_kwargs(*shape)
        for rep in range(2):
            for pdl in (False, True):
                x = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
                ye = G.engine_gemv(q, sc, x, epi, None, out=None, scratch=G.engine_scratch(N, K, epi))
                y = torch.full_like(ye, float("nan"))
                flag[0], flag[1] = 3, 0
                G.gemv(q, sc, x, epi, None, out=y, pdl=pdl, **dict(kw, v26x={"await": (flag, 3)}))
                torch.cuda.synchronize()
                rec["v37"].append(dict(shape=list(shape), rep=rep, pdl=pdl, identical=torch.equal(ye, y), giveups=int(flag[1])))
        # the norm as the writer (v1c on a count a second stream sets after ~1 ms, its flag k_written), v37 launched after it as
        # its programmatic dependent (as in the step: scheduled once the norm has passed its poll), awaiting k_wait
        from qwen_engine.norms import rmsnorm, rmsnorm_counted
        from qwen_engine.config import preset
        eps = preset("qwen3_5_27b").rms_norm_eps
        w = (torch.randn(K, generator=gen, device="cuda") * 0.1).to(torch.bfloat16)
        for k_wait, k_written in ((7, 7), (9, 8)):
            true = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
            stale = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
            xn = torch.empty_like(true); rmsnorm(true, w, eps, out=xn, early=True)
            yt = G.engine_gemv(q, sc, xn, epi, None, out=None, scratch=G.engine_scratch(N, K, epi))
            x, xs, y = stale.clone(), stale.clone(), torch.full_like(yt, float("nan"))
            cnt = torch.zeros(2, dtype=torch.int64, device="cuda")
            flag[0], flag[1] = 1, 0
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            with torch.cuda.stream(side):
                torch.cuda._sleep(2_000_000)
                x.copy_(true)
                cnt[0].fill_(2560)
            rmsnorm_counted(x, w, eps, xs, cnt, 2560, pdl=True, flag=flag, k=k_written)
            G.gemv(q, sc, xs, epi, None, out=y, pdl=True, **dict(kw, v26x={"await": (flag, k_wait)}))
            torch.cuda.synchronize()
            rec["v37_wait"].append(dict(shape=list(shape), awaited=k_wait, written=k_written, equals_written=torch.equal(y, yt),
                                        giveups=int(flag[1]), norm_giveups=int(cnt[1]), ms=round((time.perf_counter() - t0) * 1e3, 2),
                                        blocks=G.v13_grid(N, K, epi, kw["S"], kw["v13opt"][1])[0]))
        for rep in range(3):                                 # alone: the flag already holds k, so v37 never waits
            for label, x26 in (("engine", None), ("v37", {"await": (flag, 5)})):
                flag[0], flag[1] = 5, 0
                us = G.time_gemv(N, K, epi, kw["S"], kw["RG"], gen, variant=26, D=kw["D"], minb=kw["minb"], v13opt=kw["v13opt"], pdl=True, v26x=x26)
                rec["v37_alone"].append(dict(shape=list(shape), build=label, rep=rep, us=us))
                print(f"alone {shape} {label} rep {rep}: {us:.2f} us {el()}", flush=True)
    ok = all(v["identical"] and v["giveups"] == 0 for v in rec["v37"])
    okw = all((v["equals_written"] and v["giveups"] == 0 and v["norm_giveups"] == 0) if v["awaited"] == v["written"]
              else (v["giveups"] == v["blocks"] and v["ms"] > 20) for v in rec["v37_wait"])
    print(f"v37 bit-identical, no give-up: {ok}; its wait real (behind a late norm), the control (a number never written) gives up in "
          f"every block: {okw} {rec['v37_wait']} {el()}", flush=True)
    if not (ok and okw): rec["errors"].append(f"await checks: v37 {rec['v37']}, wait {rec['v37_wait']}")
    flag.zero_()


def step_checks(step, rec, el):
    "(d): the state after 16 + 24 tokens, each plan against the engine's, PDL and plain graphs."
    import torch
    from qwen_engine.step import run
    from qwen_engine.decode_bench import _prompt
    prompt = _prompt(1024)[:16]
    res, ref = [], {}
    for pdl in (True, False):
        for label, plan in PLANS.items():
            step.pdl, step.graph = pdl, None
            apply(step, plan)
            ids = list(run(step, prompt, 24))
            torch.cuda.synchronize()
            snap = (ids, step.h[0].clone(), step.recurrent_state(), step.conv.clone())
            r = ref.setdefault(pdl, snap)
            res.append(dict(plan=label, pdl=pdl, tokens_equal=ids == r[0], h_equal=torch.equal(snap[1], r[1]),
                            rec_equal=torch.equal(snap[2], r[2]), conv_equal=torch.equal(snap[3], r[3]),
                            giveups=int(step.counted[1]) + int(step.nflag[1]), tokens=ids))
            print(f"(d) { {k: v for k, v in res[-1].items() if k != 'tokens'} } {el()}", flush=True)
    step.pdl, step.graph = True, None
    apply(step, None)
    rec["step_checks"] = res
    good = all(r["tokens_equal"] and r["h_equal"] and r["rec_equal"] and r["conv_equal"] and r["giveups"] == 0 for r in res
               if r["plan"] in ("fence", "await", "await1"))
    control = all(not r["h_equal"] for r in res if r["plan"] == "nopoll" and r["pdl"])
    print(f"(d) fence equal to the engine everywhere: {good}; nopoll differs under PDL: {control}", flush=True)
    if not good: rec["errors"].append("step checks: a plan differs from the engine")


if __name__ == "__main__":
    def extra(step, rec):
        t0 = time.time()
        el = lambda: f"({time.time() - t0:.0f} s)"
        explore_util.guard(rec, "alone checks", lambda: alone_checks(rec, el))
        explore_util.guard(rec, "step checks", lambda: step_checks(step, rec, el))

    what = ("The decode step (27B shape, synthetic, PDL graph) with the count hand-off: down and out_proj fence their stores and count "
            "their warps' ends (GEMV v36 DN 2), and the residual norm after each reads its input on that count with no grid wait "
            "(v1c), against the engine's (the norm waits for its grid): v36 DN 2 and v1c checked bit for bit, v1c's wait against a "
            "late writer and without its poll; the step's tokens, residual stream and states after 16 + 24 tokens (PDL and plain) "
            "for the plans and two controls (the count unfenced; no poll); then greedy tokens and ms per token at 1K and 32K, "
            "interleaved, five times.")
    if os.environ.get("QE_AWAIT"):
        what = ("The decode step (27B shape, synthetic, PDL graph) with the await hand-off: the count hand-off (down and out_proj fence "
                "and count their warps' ends, GEMV v36 DN 2; the norm after each reads on that count, v1c) and the GEMV after the norm "
                "with no grid wait either, awaiting the norm's flag (v37): v36 DN 2, v1c and v37 checked bit for bit, the waits against "
                "late writers and their negative controls; the step's tokens, residual stream and states after 16 + 24 tokens (PDL "
                "and plain) for the plans (await: every such GEMV; await1: those after the layers' first norm only) and the controls; "
                "then greedy tokens and ms per token at 1K and 32K, interleaved, five times.")
    explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "await_handoff_h200" if os.environ.get("QE_AWAIT") else "count_handoff_h200",
                            what, "explore_count_handoff.py", PLANS, apply, reps=5, extra=extra)
