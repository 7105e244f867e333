"""Chapter 06's v34: the MLP's down projection launched to stream while gate|up still runs. The engine's down build (same
body, rows, runs and steps: its sums bit for bit) without a grid wait before its loop; each step awaits the SwiGLU values
it reads (v31's sentinel 0xFFFF in a buffer of its own), the grid wait comes before the epilogue, the launch's last block
writes the sentinel back. gate|up is the engine's build, unchanged: it releases its dependents once each of its blocks has
passed its own wait, so v34's blocks take SMs as gate|up's last ones leave. Checked and measured, at the 27B shapes:
  (a) eager, three seeds x the three block shapes (V34_BLOCKS) x PDL on / off: gate|up -> v34 against gate|up -> the engine's
      down on the same inputs: outputs bit-identical, no lane gave up, the buffer back at the sentinel;
  (b) the wait is real: v34 launched on a buffer that holds only the sentinel while another stream writes the values after
      a delay (torch.cuda._sleep): bit-identical, no give-up; negative control: the last 512 values never written: the
      lanes that read them give up (counted) and the outputs differ;
  (c) alone: gate|up -> down pairs in one graph with PDL, four weight sets rotated past L2, the engine's pair against each
      v34 build, three interleaved rounds (us a pair, % of the run's bandwidth for the pair's bytes);
  (d) the decode step (27B shape, synthetic, seed 0; explore_util.step_plans): greedy tokens equal, then the residual stream,
      states and give-ups after 16 + 24 tokens, PDL and plain graphs; ms per token at 1K and 32K, three interleaved rounds.
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_mlp_flow.py OUT_DIR   (mlp_flow_h200.json)
With QE_V34_CONTROLS=1 in the environment (mlp_flow_controls_h200.json): the engine, v34 20x1 and two timing controls, the
grid wait first (the checks' cost alone) and no check (the early start, plain loads); with QE_V34_CONTROLS=2
(mlp_flow_controls2_h200.json): no check with the engine's read-only loads (the early start alone), and the grid wait first
with plain loads and no check (the load path alone)."""
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import explore_util

H, I = 5120, 17408
PLANS = {"engine": None, "v34 20x1": (20, 1, False), **{f"v34 {sr}x{mb} defer": (sr, mb, True) for sr, mb in ((20, 1), (10, 2), (4, 5))}}
if os.environ.get("QE_V34_CONTROLS"):       # the second run: the engine, v34 20x1 and its two timing controls
    PLANS = {"engine": None, "v34 20x1": (20, 1, False), "v34 20x1 waitfirst": (20, 1, False, "waitfirst"), "v34 20x1 nocheck": (20, 1, False, "nocheck")}
    if os.environ["QE_V34_CONTROLS"] == "2":  # the third run: the early start alone, with the engine's loads; the load path alone
        PLANS = {"engine": None, "v34 20x1 nocheck": (20, 1, False, "nocheck"), "v34 20x1 nocheck ro": (20, 1, False, "nocheck", "ro"),
                 "v34 20x1 waitfirst nocheck": (20, 1, False, "waitfirst", "nocheck")}
BUILDS = [p for p in PLANS.values() if p]
ctl = lambda plan: {c: True for c in plan[3:]}


def sentinel_ok(h) -> bool:
    return bool((h.view(torch.int16) == -1).all())


def alone_checks(rec, el):
    "(a) and (b)."
    from qwen_engine import gemv as G
    gen = torch.Generator(device="cuda").manual_seed(11)
    gu = G.synth_fp8(2 * I, H, gen)
    dn = G.synth_fp8(H, I, gen)
    act = torch.empty(1, I, dtype=torch.bfloat16, device="cuda")
    hbuf = G.awaiting_buffer(I)
    sync = torch.zeros(2, dtype=torch.int64, device="cuda")
    out, res = [], []
    for seed in (1, 2, 3):
        g = torch.Generator(device="cuda").manual_seed(seed)
        x = (torch.randn(1, H, generator=g, device="cuda") * 0.5).bfloat16()
        r = torch.randn(1, H, generator=g, device="cuda").bfloat16()
        for pdl in (True, False):
            ye = torch.full((1, H), float("nan"), dtype=torch.bfloat16, device="cuda")
            G.engine_gemv(*gu, x, 2, None, out=act, scratch=None, pdl=pdl)
            G.engine_gemv(*dn, act, 1, r, out=ye, scratch=None, pdl=pdl)
            for b in BUILDS:
                sr, mb, df = b[:3]
                y = torch.full_like(ye, float("nan"))
                g0 = int(sync[1])
                G.engine_gemv(*gu, x, 2, None, out=hbuf, scratch=None, pdl=pdl)
                G.down_awaiting(*dn, hbuf, r, y, sync, SR=sr, minb=mb, pdl=pdl, defer=df, **ctl(b))
                torch.cuda.synchronize()
                out.append(dict(seed=seed, pdl=pdl, blocks=[sr, mb], defer=df, control=(" ".join(b[3:]) or None), identical=torch.equal(y, ye), giveups=int(sync[1]) - g0,
                                sentinel_after=sentinel_ok(hbuf), count_reset=int(sync[0]) == 0))
    rec["identity"] = out
    rec["bad_builds"] = [list(b) for b in BUILDS if len(b) == 3 and not all(o["identical"] and not o["giveups"] for o in out
                                                                          if (o["blocks"], o["defer"], o["control"]) == (list(b[:2]), b[2], None))]
    print(f"(a) {len(out)} checks: identical {all(o['identical'] for o in out)}, give-ups {sum(o['giveups'] for o in out)}, "
          f"sentinel after {all(o['sentinel_after'] for o in out)}, counts reset {all(o['count_reset'] for o in out)} {el()}", flush=True)
    # (b): the values arrive on another stream after a delay; v34 is already running
    x = (torch.randn(1, H, generator=gen, device="cuda") * 0.5).bfloat16()
    r = torch.randn(1, H, generator=gen, device="cuda").bfloat16()
    G.engine_gemv(*gu, x, 2, None, out=act, scratch=None)
    ye = G.engine_gemv(*dn, act, 1, r, out=torch.empty(1, H, dtype=torch.bfloat16, device="cuda"), scratch=None)
    side = torch.cuda.Stream()
    for label, n_written in (("delayed writer", I), ("control: last 512 never written", I - 512)):
        for b in BUILDS:
            sr, mb, df = b[:3]
            if len(b) > 3: continue                                  # the timing controls do not wait (nocheck) or start late
            if label.startswith("control") and (sr, mb) != (20, 1): continue      # the negative control on the 20-warp builds only
            torch.cuda.synchronize()
            assert sentinel_ok(hbuf)
            y = torch.full_like(ye, float("nan"))
            g0 = int(sync[1])
            t0 = time.perf_counter()
            G.down_awaiting(*dn, hbuf, r, y, sync, SR=sr, minb=mb, pdl=False, defer=df)
            with torch.cuda.stream(side):
                torch.cuda._sleep(2_000_000)                        # ~1 ms at ~2 GHz: v34's blocks are polling by then
                hbuf[:, :n_written].copy_(act[:, :n_written])
            torch.cuda.synchronize()
            ms = (time.perf_counter() - t0) * 1e3
            res.append(dict(case=label, blocks=[sr, mb], defer=df, identical=torch.equal(y, ye), giveups=int(sync[1]) - g0,
                            sentinel_after=sentinel_ok(hbuf), wall_ms=round(ms, 2)))
            if not sentinel_ok(hbuf): hbuf.view(torch.int16).fill_(-1)
    rec["waiting"] = res
    for o in res: print(f"(b) {o}", flush=True)


def alone_timing(rec, el):
    "(c)"
    from qwen_engine import gemv as G
    from qwen_engine.runtime import time_graph, median
    gen = torch.Generator(device="cuda").manual_seed(5)
    S = 4
    sets = [(G.synth_fp8(2 * I, H, gen), G.synth_fp8(H, I, gen)) for _ in range(S)]
    x = (torch.randn(1, H, generator=gen, device="cuda") * 0.5).bfloat16()
    r = torch.randn(1, H, generator=gen, device="cuda").bfloat16()
    y = torch.empty(1, H, dtype=torch.bfloat16, device="cuda")
    act = torch.empty(1, I, dtype=torch.bfloat16, device="cuda")
    hbuf = G.awaiting_buffer(I)
    sync = torch.zeros(2, dtype=torch.int64, device="cuda")
    nbytes = G.bytes_of(2 * I, H, 1, 2) + G.bytes_of(H, I, 1, 1)
    bw = rec["bandwidth_tbps"]

    def pair(plan):
        def fn(i):
            gu, dn = sets[i % S]
            if plan is None:
                G.engine_gemv(*gu, x, 2, None, out=act, scratch=None, pdl=True)
                G.engine_gemv(*dn, act, 1, r, out=y, scratch=None, pdl=True)
            else:
                G.engine_gemv(*gu, x, 2, None, out=hbuf, scratch=None, pdl=True)
                G.down_awaiting(*dn, hbuf, r, y, sync, SR=plan[0], minb=plan[1], pdl=True, defer=plan[2], **ctl(plan))
        return fn
    rec["alone"] = []
    for rep in range(3):
        for label, plan in PLANS.items():
            if plan and rec.get("bad_builds") and list(plan) in rec["bad_builds"]: continue
            g0 = int(sync[1])
            us = 1e3 * median(time_graph(pair(plan), calls=4 * S, warmup=3, reps=20))
            rec["alone"].append(dict(plan=label, rep=rep, us=us, frac=nbytes / (us * 1e-6) / (bw * 1e12), giveups=int(sync[1]) - g0))
        print(f"(c) rep {rep}: " + ", ".join(f"{t['plan']} {t['us']:.2f} us ({100 * t['frac']:.1f} %)" for t in rec["alone"] if t["rep"] == rep)
              + f" {el()}", flush=True)
    rec["alone_giveups"] = sum(t["giveups"] for t in rec["alone"])


def step_checks(step, rec, el):
    "(d), the state after 16 + 24 tokens, each plan against the engine's, PDL and plain graphs."
    from qwen_engine.step import run
    from qwen_engine.decode_bench import _prompt
    prompt = _prompt(1024)[:16]
    res, ref = [], None
    for pdl in (True, False):
        for label, plan in PLANS.items():
            if plan and list(plan) in rec.get("bad_builds", []): continue
            step.pdl, step.mlpflow, step.graph = pdl, plan, None
            g0 = int(step._flow[1][1]) if step._flow is not None else 0
            ids = list(run(step, prompt, 24))
            torch.cuda.synchronize()
            snap = (ids, step.h[0].clone(), step.rec.clone(), step.conv.clone())
            if ref is None: ref = snap
            res.append(dict(plan=label, pdl=pdl, tokens_equal=ids == ref[0], h_equal=torch.equal(snap[1], ref[1]),
                            rec_equal=torch.equal(snap[2], ref[2]), conv_equal=torch.equal(snap[3], ref[3]),
                            giveups=(int(step._flow[1][1]) - g0) if step._flow is not None else 0,
                            sentinel_after=sentinel_ok(step._flow[0]) if step._flow is not None else None))
            print(f"(d) {res[-1]} {el()}", flush=True)
    step.pdl, step.mlpflow, step.graph = True, None, None
    rec["step_checks"] = res


if __name__ == "__main__":
    def extra(step, rec):
        step.set_gdn_log(None)                              # the records' step: GDN v7 storing its state every token (before GDN_LOG)
        t0 = time.time()
        el = lambda: f"({time.time() - t0:.0f} s)"
        explore_util.guard(rec, "alone checks", lambda: alone_checks(rec, el))
        explore_util.guard(rec, "alone timing", lambda: alone_timing(rec, el))
        torch.cuda.empty_cache()
        explore_util.guard(rec, "step checks", lambda: step_checks(step, rec, el))
        for label, plan in list(PLANS.items()):               # a build that failed the eager checks is not timed in the step
            if plan and list(plan) in rec.get("bad_builds", []): del PLANS[label]

    def apply(st, plan):
        st.set_gdn_log(None)
        st.mlpflow = plan

    what = ("Chapter 06's v34: the MLP's down projection (the engine's down build's sums) launched to stream while gate|up still "
            "runs, each step awaiting its SwiGLU values (a sentinel until written), the grid wait before its epilogue: (a) eager, "
            "bit identity with gate|up -> the engine's down, three seeds x three block shapes x PDL on/off, give-ups, the sentinel "
            "restored; (b) the wait is real (values written by another stream after a delay) and a negative control (512 values "
            "never written); (c) gate|up -> down pairs alone in a PDL graph, four weight sets, three rounds; (d) the decode step: "
            "tokens, residual stream and states after 16 + 24 tokens (PDL and plain), ms per token at 1K and 32K, three rounds.")
    name = {None: "mlp_flow_h200", "1": "mlp_flow_controls_h200", "2": "mlp_flow_controls2_h200"}[os.environ.get("QE_V34_CONTROLS")]
    explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, name, what, "explore_mlp_flow.py", PLANS, apply,
                            reps=3, describe=lambda p: list(p) if p else "engine", extra=extra)
