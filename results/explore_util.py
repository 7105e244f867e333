"""Shared by the results/explore_*.py scripts (run as `python3 results/explore_X.py OUT`, so this folder is on the path)."""
import traceback


def guard(rec: dict, what: str, fn):
    "Run one part of an exploration; a part that raises is recorded in rec['errors'] (and printed), and the run goes on."
    try: return fn()
    except Exception as e:
        rec["errors"].append(f"{what}: {type(e).__name__}: {e}"); traceback.print_exc(); return None


def v14_kwargs(cfg, variant: int = 14) -> dict:
    "The gemv/check_gemv keyword arguments of a v13/v14 sweep configuration (SR, SK, RP, D, EARLY, MINB, KS[, XS]), less S and RG."
    SR, SK, RP, D, E, MB, KS, *XS = cfg
    return dict(variant=variant, KS=KS, D=D, minb=MB, v13opt=(SK, RP, bool(E), bool(XS and XS[0])))


def launched_names(fn) -> tuple:
    """The gemv.cu kernels `fn()` would launch, in order, without compiling or launching any (a dry pass: the launcher's
    kernel lookups are recorded and its launches skipped; outputs stay as they were). Compile them in one pass before the
    real run: `G.get_kernel("gemv", names[0], together=names)`; every later request is then free (appendix 90)."""
    from qwen_engine import gemv as G
    names = []
    class Dry:
        max_dynamic_shared_size_bytes = 1 << 30
        preferred_shared_memory_carveout = 100
    saved = G.get_kernel, G._engine_kernel, G.launch
    G.get_kernel = lambda mod, name, together=(): (names.append(name), Dry())[1]
    G._engine_kernel = lambda name: (names.append(name), Dry())[1]
    G.launch = lambda *a, **k: None
    try: fn()
    finally: G.get_kernel, G._engine_kernel, G.launch = saved
    return tuple(dict.fromkeys(names))


def versus_engine(gen, N: int, K: int, epi: int, S: int, kw: dict) -> dict:
    "The same inputs through gemv(**kw) and through the engine's kernel for this shape: outputs bit-identical (M = 1, epilogue included)."
    import torch
    from qwen_engine import gemv as G
    q, sc = G.synth_fp8(N, K, gen)
    x = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
    res = torch.randn(1, N, generator=gen, device="cuda").to(torch.bfloat16) if epi == 1 else None
    ye = G.engine_gemv(q, sc, x, epi, res, out=None, scratch=G.engine_scratch(N, K, epi))
    y = torch.full_like(ye, float("nan"))
    G.gemv(q, sc, x, epi, res, S=S, RG=2 if epi == 2 else 1, out=y, **kw)
    return dict(N=N, K=K, epi=epi, identical=torch.equal(ye, y), mismatches=(ye != y).sum().item())


def count_checks(gen, cnt, key: str) -> list:
    """Chapter 06's v36 on down and out_proj (twice each), v26x {key: cnt} ("dn": the count, "dnf": fenced first): bit identity
    with the engine's builds on the same inputs (versus_engine) and the count, one per warp, in each result (explore_handoff.py,
    explore_count_handoff.py)."""
    import torch
    from qwen_engine import gemv as G
    out = []
    for shape in ((5120, 17408, 1), (5120, 6144, 1)):
        for _ in range(2):
            kw = dict(G.engine_kwargs(*shape), v26x={key: cnt})
            S = kw.pop("S"); kw.pop("RG")
            cnt.zero_()
            v = versus_engine(gen, *shape, S, kw)
            torch.cuda.synchronize()
            v["count"] = int(cnt[0]); out.append(v)
    return out


def norm_identity(eps: float, build) -> list:
    """A residual-norm build against chapter 05's EW norm on the same 5,120-wide row: three seeds x PDL off and on.
    `build(x, w, y, pdl)` launches it into y and returns a function that, after the GPU is done, gives the build's own facts
    (added to each result); `identical`: bit for bit (explore_handoff.py's v1t, explore_count_handoff.py's v1c)."""
    import torch
    from qwen_engine.norms import rmsnorm
    out = []
    for seed in range(3):
        g = torch.Generator(device="cuda").manual_seed(seed)
        x = (torch.randn(1, 5120, generator=g, device="cuda") * (1 + seed)).to(torch.bfloat16)
        w = (torch.randn(5120, generator=g, device="cuda") * 0.1).to(torch.bfloat16)
        for pdl in (False, True):
            y0, y1 = torch.full_like(x, float("nan")), torch.full_like(x, float("nan"))
            rmsnorm(x, w, eps, out=y0, pdl=pdl, early=True)
            facts = build(x, w, y1, pdl)
            torch.cuda.synchronize()
            out.append(dict(seed=seed, pdl=pdl, identical=torch.equal(y0.view(torch.int16), y1.view(torch.int16)), **facts()))
    return out


def configs_alone(rec: dict, shapes: dict, cfgs: dict, kw, reps: int = 2):
    """Each configuration of cfgs[shape] ({label: cfg}; cfg[0] the warps a block, kw(shape, *cfg) gemv's keyword arguments)
    first bit-identical to the engine's kernel on the same inputs, twice (rec["versus_engine"]["NAME LABEL"]; a failure is
    an error), then timed alone (PDL, graph, weights rotated past L2) beside the engine's kernel, `reps` interleaved rounds
    (rec["alone"]: dict(shape=NAME, cfg, rep, us, frac of the record's bandwidth)). `shapes`: {shape: NAME}.
    (explore_gemv_oneblock.py, explore_gemv_oneround.py.)"""
    import torch
    from qwen_engine import gemv as G
    gen = torch.Generator(device="cuda").manual_seed(7)
    rec["versus_engine"], rec["alone"] = {}, []
    for shape, name in shapes.items():
        for label, c in cfgs[shape].items():
            k = {a: b for a, b in kw(shape, *c).items() if a not in ("S", "RG")}
            v = [versus_engine(gen, *shape, c[0], k) for _ in range(2)]
            rec["versus_engine"][f"{name} {label}"] = v
            print(f"{name} {label}: bit-identical to the engine's {all(x['identical'] for x in v)}", flush=True)
            if not all(x["identical"] for x in v): rec["errors"].append(f"identity {name} {label}: {v}")
    bw = rec["bandwidth_tbps"]
    for rep in range(reps):
        for shape, name in shapes.items():
            nb = G.bytes_of(shape[0], shape[1], 1, shape[2])
            e = G.time_engine(*shape, gen)
            rec["alone"].append(dict(shape=name, cfg="engine", rep=rep, us=e, frac=nb / (e * 1e-6) / (bw * 1e12)))
            for label, c in cfgs[shape].items():
                us = G.time_gemv(*shape, c[0], 1, gen, pdl=True, **{a: b for a, b in kw(shape, *c).items() if a not in ("S", "RG")})
                rec["alone"].append(dict(shape=name, cfg=label, rep=rep, us=us, frac=nb / (us * 1e-6) / (bw * 1e12)))
            print(f"rep {rep} {name}: " + ", ".join(f"{t['cfg']} {t['us']:.2f} us ({100 * t['frac']:.1f} %)" for t in rec["alone"] if t["shape"] == name and t["rep"] == rep), flush=True)


def identity_and_alone(rec: dict, builds: dict, names: dict, reps: int = 2):
    """Each build of `builds` {label: (shape, kw)} (kw: gemv's keyword arguments, S included) first bit-identical to the engine's
    kernel on the same inputs, twice (rec["versus_engine"][label]), then timed alone (PDL, graph, weights rotated past L2)
    beside the engine's kernel for its shape, `reps` interleaved rounds (rec["alone"]: dict(shape, cfg, rep, us, frac of the
    record's bandwidth); `names` {shape: name}). (explore_gemv_tail.py, explore_gemv_near.py.)"""
    import torch
    from qwen_engine import gemv as G
    gen = torch.Generator(device="cuda").manual_seed(7)
    rec["versus_engine"], rec["alone"] = {}, []
    strip = lambda kw: {a: b for a, b in kw.items() if a not in ("S", "RG")}
    for label, (shape, kw) in builds.items():
        v = [versus_engine(gen, *shape, kw["S"], strip(kw)) for _ in range(2)]
        rec["versus_engine"][label] = v
        print(f"{label}: bit-identical to the engine's {all(x['identical'] for x in v)}", flush=True)
    bw = rec["bandwidth_tbps"]
    for rep in range(reps):
        for shape in dict.fromkeys(s for s, _ in builds.values()):
            nb = G.bytes_of(shape[0], shape[1], 1, shape[2])
            e = G.time_engine(*shape, gen)
            rec["alone"].append(dict(shape=names[shape], cfg="engine", rep=rep, us=e, frac=nb / (e * 1e-6) / (bw * 1e12)))
            for label, (s, kw) in builds.items():
                if s != shape: continue
                us = G.time_gemv(*shape, kw["S"], kw["RG"], gen, pdl=True, **strip(kw))
                rec["alone"].append(dict(shape=names[shape], cfg=label, rep=rep, us=us, frac=nb / (us * 1e-6) / (bw * 1e12)))
            print(f"rep {rep} {names[shape]}: " + ", ".join(f"{t['cfg']} {t['us']:.2f} us ({100 * t['frac']:.1f} %)" for t in rec["alone"]
                                                          if t["shape"] == names[shape] and t["rep"] == rep), flush=True)


def one_shape_plans(name: str, what: str, script: str, shape: tuple, shape_name: str, cfgs, kw, label):
    """The whole run of a one-shape GEMV exploration (explore_gemv_near.py, _fb.py, _ek2_step.py): every configuration of
    `cfgs` (gemv's keyword arguments kw(shape, cfg), named label(cfg)) checked bit-identical to the engine's kernel and timed
    alone (identity_and_alone), then the decode step with the engine's plan and each configuration routed in for `shape`
    (route_shapes; step_plans: greedy tokens, three interleaved rounds at 1K and 32K). Writes record `name`."""
    import sys
    plans = {"engine": {}, **{label(c): {shape: c} for c in cfgs}}
    alone = lambda step, rec: identity_and_alone(rec, {label(c): (shape, kw(shape, c)) for c in cfgs}, {shape: shape_name})
    return step_plans(sys.argv[1] if len(sys.argv) > 1 else None, name, what, script, plans, route_shapes(kw), reps=3,
                      describe=lambda p: {shape_name: (list(v) if isinstance(v, tuple) else v) for v in p.values()}, extra=alone)


def step_times(step, prompt, ctxs=(1024, 32768)) -> dict:
    "The decode step captured afresh (PDL as the step is set), then ms per replay at each context (chapter 09's method)."
    from qwen_engine.decode_bench import time_replays, at_context
    step.reset(prompt, 64); step.capture()
    r = {}
    for ctx in ctxs:
        at_context(step, ctx); r[ctx] = time_replays(step)
    return r


def time_vs_engine(rec: dict, guard, el, gen, bw: float, sweep: dict, ok, kw, reps: int = 2):
    """Each shape of `sweep` {(N, K, epi): configurations} timed alone with PDL, interleaved: the engine's kernel, then
    every configuration with ok(N, K, epi, cfg) through gemv(**kw(cfg)); `reps` rounds, appended to rec["timings"] as
    dict(N, K, epi, cfg ("engine" or a list), rep, us, frac of `bw`). (explore_gemv_v20.py, explore_gemv_v22.py.)"""
    from qwen_engine import gemv as G
    for rep in range(reps):
        for (N, K, epi), cfgs in sweep.items():
            nb = G.bytes_of(N, K, 1, epi)
            e = guard("time engine", lambda: G.time_engine(N, K, epi, gen))
            if e: rec["timings"].append(dict(N=N, K=K, epi=epi, cfg="engine", rep=rep, us=e, frac=nb / (e * 1e-6) / (bw * 1e12)))
            for cfg in cfgs:
                if not ok(N, K, epi, cfg): continue
                us = guard(f"time {cfg}", lambda: G.time_gemv(N, K, epi, cfg[0], 2 if epi == 2 else 1, gen, pdl=True, **kw(cfg)))
                if us: rec["timings"].append(dict(N=N, K=K, epi=epi, cfg=list(cfg), rep=rep, us=us, frac=nb / (us * 1e-6) / (bw * 1e12)))
            print(f"rep {rep} {N}x{K}: " + ", ".join(f"{'engine' if t['cfg'] == 'engine' else tuple(t['cfg'][:6])} {t['us']:.2f} ({100 * t['frac']:.1f} %)"
                                                      for t in rec["timings"] if (t["N"], t["K"], t["rep"]) == (N, K, rep)) + f" {el()}", flush=True)


def wins_in_both_repeats(rec: dict, sweep: dict, margin: float) -> dict:
    """{(N, K, epi): configuration} from time_vs_engine's rec["timings"]: per shape of `sweep`, the configurations faster than
    the engine's kernel by more than `margin` in both of two interleaved repeats, and of those the one with the least total
    time (explore_gemv_v20.py, explore_gemv_v20deep.py)."""
    wins = {}
    for (N, K, epi), cfgs in sweep.items():
        eng = [t["us"] for t in rec["timings"] if (t["N"], t["K"], t["cfg"]) == (N, K, "engine")]
        best = None
        for cfg in cfgs:
            ts = [t["us"] for t in rec["timings"] if (t["N"], t["K"]) == (N, K) and t["cfg"] == list(cfg)]
            if len(ts) == 2 and len(eng) == 2 and all(a < (1 - margin) * b for a, b in zip(ts, eng)):
                if best is None or sum(ts) < best[1]: best = (cfg, sum(ts))
        if best: wins[(N, K, epi)] = best[0]
    return wins


def step_ab(rec: dict, guard, el, save, apply, label: str, reps: int = 3, require_equal: bool = True, token_key: str = None):
    """The decode step's A/B (chapter 06's explorations): the 27B-shape synthetic step (seed 0), PDL graph, built once;
    `apply(step, on)` routes the step's GEMVs through the engine's plan (on = 0) or the variant's (on = 1). Each plan's
    first 24 greedy tokens after a 16-token prompt go to rec["step_tokens"] ("engine", `token_key` or `label`); then (only if they are
    equal, with `require_equal`) `reps` interleaved rounds of ms per replay at 1K and 32K into rec["step"] as
    dict(plan, rep, ms_1k, ms_32k); `save()` after them. The engine's plan is applied again at the end."""
    import torch
    from qwen_engine.config import preset
    from qwen_engine.step import DecodeStep, synthetic_engine_weights, run
    from qwen_engine.decode_bench import _prompt
    torch.cuda.empty_cache()
    cfg = preset("qwen3_5_27b")
    EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
    step = DecodeStep(cfg, EW, max_context=33 * 1024)
    prompt = _prompt(1024)
    names, keys = ("engine", label), ("engine", token_key or label)
    for on in (0, 1):
        apply(step, on); step.graph = None
        rec["step_tokens"][keys[on]] = guard(f"step tokens {names[on]}", lambda: list(run(step, prompt[:16], 24)))
    same = rec["step_tokens"][keys[1]] == rec["step_tokens"]["engine"]
    print(f"step tokens equal: {same} {el()}", flush=True)
    for rep in range(reps if same or not require_equal else 0):
        for on in (0, 1):
            apply(step, on); step.graph = None
            r = guard(f"step {names[on]}", lambda: step_times(step, prompt))
            if r:
                rec["step"].append(dict(plan=names[on], rep=rep, ms_1k=r[1024], ms_32k=r[32768]))
                print(f"step rep {rep} {names[on]}: 1K {r[1024]:.3f} ms, 32K {r[32768]:.3f} ms {el()}", flush=True)
        save()
    apply(step, 0)
    return step


def route_winners(wins: dict):
    """step_ab's `apply` for winners {(N, K): (variant, (SR, SK, RP, D, EARLY, MINB, KS, XS))}: on = 1 routes those shapes'
    GEMVs through their variant at their configuration, on = 0 the engine's launcher throughout (explore_gemv_v23*.py,
    explore_gemv_occupancy.py)."""
    from qwen_engine import gemv as G
    from qwen_engine.step import DecodeStep
    engine_gemv_method = DecodeStep._gemv
    def apply(step, on):
        def g(wq, x, epi, o, res=None):
            N, K = wq[0].shape
            if not (on and (N, K) in wins): return engine_gemv_method(step, wq, x, epi, o, res)
            v, (SR, SK, RP, D, E, MB, KS, XS) = wins[(N, K)]
            G.gemv(wq[0], wq[1], x, epi, res, out=o, scratch=step.scratch[(N, K, epi)], pdl=step.pdl, S=SR, RG=2 if epi == 2 else 1,
                   variant=v, KS=KS, D=D, minb=MB, v13opt=(SK, RP, bool(E), bool(XS)))
        step._gemv = g
    return apply


def route_shapes(kw):
    """step_plans' `apply` for plans {(N, K, epi): cfg}: a plan's shapes through gemv(**kw((N, K, epi), cfg)) with the step's
    PDL and no split scratch, every other GEMV through the engine's launcher (explore_gemv_oneblock*.py)."""
    from qwen_engine import gemv as G
    from qwen_engine.step import DecodeStep
    engine_gemv_method = DecodeStep._gemv
    def apply(step, plan):
        def g(wq, x, epi, o, res=None):
            N, K = wq[0].shape
            if (N, K, epi) not in plan: return engine_gemv_method(step, wq, x, epi, o, res)
            G.gemv(wq[0], wq[1], x, epi, res, out=o, scratch=None, pdl=step.pdl, **kw((N, K, epi), plan[(N, K, epi)]))
        step._gemv = g
    return apply


def recorder(name: str, what: str, script: str, out=None, args: str = "", **fields):
    """The frame every exploration script shares: (rec, guard, el, save). rec holds `fields`, `errors` and the read
    bandwidth measured now; guard(what, fn) runs a part and records its failure; el() is the elapsed time for printing;
    save() writes record `name` (`what`, made by `PYTHONPATH=. python3 results/SCRIPT OUT_DIR` and ` args`, if any, after it) into
    `out` (default: sys.argv[1])."""
    import sys, time
    from qwen_engine.gemv import bandwidth_now
    from qwen_engine.runtime import write_record
    out = out if out is not None else (sys.argv[1] if len(sys.argv) > 1 else None)
    t_start = time.time()
    rec = dict(fields, errors=[])
    rec["bandwidth_tbps"] = bandwidth_now()
    return (rec, lambda what_, fn: guard(rec, what_, fn), lambda: f"({time.time() - t_start:.0f} s)",
            lambda: write_record(name, what, f"PYTHONPATH=. python3 results/{script} OUT_DIR{args}", rec, out_dir=out))


def step_plans(out, name: str, what: str, script: str, plans: dict, apply, reps: int = 3, tokens: bool = True, describe=None, extra=None):
    """The decode step's plans, timed in one run (chapter 09a's explorations): the 27B-shape synthetic step (seed 0), PDL
    graph; `apply(step, plan)` sets a plan up. With `tokens`, each plan's first 24 greedy tokens after a 16-token prompt
    are recorded, and a plan whose tokens differ from the first plan's is not timed. Then `reps` interleaved rounds of
    ms per replay at 1K and 32K. Writes record `name` (`what`, made by `python3 results/SCRIPT OUT_DIR`) into `out` after
    each round and prints a table; `describe(plan)` is how a plan is recorded; `extra(step, rec)` adds to the record
    before the rounds. Returns (record, step)."""
    import time
    from qwen_engine.config import preset
    from qwen_engine.step import DecodeStep, synthetic_engine_weights, run
    from qwen_engine.decode_bench import _prompt
    from qwen_engine.roofline import step_bytes, decode_budget
    rec, _, el, save = recorder(name, what, script, out=out, plans={k: (describe(v) if describe else v) for k, v in plans.items()}, timings=[], tokens={})
    bw = rec["bandwidth_tbps"]
    cfg = preset("qwen3_5_27b")
    t = time.perf_counter()
    EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
    step = DecodeStep(cfg, EW, max_context=33 * 1024)
    rec["synth_s"] = round(time.perf_counter() - t, 1); print(f"synthesised {el()}", flush=True)
    if extra: extra(step, rec)
    prompt, first = _prompt(1024), next(iter(plans))
    if tokens:
        for label, plan in plans.items():
            apply(step, plan); step.graph = None
            ids = guard(rec, f"tokens {label}", lambda: list(run(step, prompt[:16], 24)))
            rec["tokens"][label] = ids
            print(f"{label}: tokens {'= ' + first if ids == rec['tokens'].get(first) else ids} {el()}", flush=True)
        save()
    fb = {ctx: step_bytes(decode_budget(cfg), ctx) / (bw * 1e12) * 1e3 for ctx in (1024, 32768)}
    for rep in range(reps):
        for label, plan in plans.items():
            if tokens and (rec["tokens"].get(label) is None or rec["tokens"][label] != rec["tokens"].get(first)): continue
            apply(step, plan); step.graph = None
            r = guard(rec, f"time {label}", lambda: step_times(step, prompt))
            if r:
                for ctx, ms in r.items(): rec["timings"].append(dict(plan=label, rep=rep, ctx=ctx, ms=ms, frac_of_floor=fb[ctx] / ms))
                print(f"rep {rep} {label}: 1K {r[1024]:.3f} ms, 32K {r[32768]:.3f} ms {el()}", flush=True)
        save()
    print(f"\nplan | 1K ms ({reps} repeats) | 32K ms")
    for label in plans:
        ts = lambda ctx: " / ".join(f"{x['ms']:.3f}" for x in rec["timings"] if x["plan"] == label and x["ctx"] == ctx)
        print(f"{label} | {ts(1024)} | {ts(32768)}")
    print(f"done {el()}; errors {len(rec['errors'])}")
    return rec, step


def flag_sweep(rec: dict, gen, bw: float, el, save, variant: int, sweep: dict, values: tuple, name_of, tag: str, everywhere: tuple):
    """Chapter 06's sweep of a v14 build with one more template value (v19's PF, v21's LP) against the engine's kernel:
    for each shape's configurations in `sweep` and each of `values`, the float64 check at M = 1, M = 8 rows = M = 1 and
    repeats, bit-identity with the engine's kernel on the same inputs (all recorded in `rec`); then each shape timed alone
    with PDL interleaved with the engine's, twice; the winners (faster than the engine's by its margin in both repeats);
    and the token's GEMVs: the engine's plan, the winners, the variant at each of `everywhere` on every shape, the
    engine's again. `name_of(epi, cfg, value)` names a build; `tag` labels the value; `save()` writes the record (after the
    checks and after the timings). Returns {(N, K, epi, cfg, value): passed}."""
    from qwen_engine import gemv as G
    guard_ = lambda what, fn: guard(rec, what, fn)
    def kw(cfg, pf):
        SR, SK, RP, D, E, MB, KS, XS = cfg
        return dict(variant=variant, KS=KS, D=D, minb=MB, v13opt=(SK, RP, bool(E), bool(XS), pf))

    def vs_engine(N, K, epi, cfg, pf):
        "versus_engine at this configuration."
        return dict(versus_engine(gen, N, K, epi, cfg[0], kw(cfg, pf)), cfg=list(cfg), pf=pf)

    def every():
        for (N, K, epi), cfgs in sweep.items():
            for cfg in cfgs:
                for pf in values:
                    yield N, K, epi, cfg, pf

    def all_checks():
        for N, K, epi, cfg, pf in every():
            RG = 2 if epi == 2 else 1
            yield (N, K, epi, cfg, pf, (lambda: G.check_gemv(N, K, epi, 1, gen, cfg[0], RG, **kw(cfg, pf))),
                   (lambda: G.check_multirow_identity(N, K, epi, gen, cfg[0], RG, **kw(cfg, pf))), (lambda: vs_engine(N, K, epi, cfg, pf)))

    names = launched_names(lambda: [(c(), i(), v()) for *_, c, i, v in all_checks()])
    guard_("compile", lambda: G.get_kernel("gemv", names[0], together=names + G.ENGINE_KERNELS)); print(f"bandwidth {bw:.3f} TB/s; compiled {len(names)} {el()}")
    passed = {}
    for N, K, epi, cfg, pf, check, ident, vs in all_checks():
        c, idn, v = guard_(f"check {N}x{K} {cfg} {pf}", check), guard_(f"identity {N}x{K} {cfg} {pf}", ident), guard_(f"versus {N}x{K} {cfg} {pf}", vs)
        if c: c["ok"] = G.check_ok(c); c["cfg"] = cfg; c["pf"] = pf; c.pop("v13opt", None); rec["checks"].append(c)
        if idn: idn["cfg"] = cfg; idn["pf"] = pf; idn.pop("v13opt", None); rec["identity"].append(idn)
        if v: rec["versus_engine"].append(v)
        passed[(N, K, epi, cfg, pf)] = bool(c and c["ok"] and idn and idn["multirow_bit_identical"] and idn["repeat_bit_identical"] and v and v["identical"])
        name = name_of(epi, cfg, pf)
        r = guard_(f"regs {name}", lambda: G.get_kernel("gemv", name).num_regs)
        if r: rec["regs"][name] = r
        print(f"{N}x{K} {cfg} {tag} {pf}: {'ok (= engine)' if passed[(N, K, epi, cfg, pf)] else 'FAILED'}; regs {r} {el()}")
    save()
    nbytes = {k: G.bytes_of(*k[:2], 1, k[2]) for k in sweep}
    for rep in range(2):
        for (N, K, epi), cfgs in sweep.items():
            e = guard_("time engine", lambda: G.time_engine(N, K, epi, gen))
            if e: rec["timings"].append(dict(N=N, K=K, epi=epi, cfg="engine", pf=0, rep=rep, us=e, frac=nbytes[(N, K, epi)] / (e * 1e-6) / (bw * 1e12)))
            for cfg in cfgs:
                for pf in values:
                    if not passed[(N, K, epi, cfg, pf)]: continue
                    us = guard_(f"time {cfg} {pf}", lambda: G.time_gemv(N, K, epi, cfg[0], 2 if epi == 2 else 1, gen, pdl=True, **kw(cfg, pf)))
                    if us: rec["timings"].append(dict(N=N, K=K, epi=epi, cfg=list(cfg), pf=pf, rep=rep, us=us, frac=nbytes[(N, K, epi)] / (us * 1e-6) / (bw * 1e12)))
            print(f"rep {rep} {N}x{K}: " + ", ".join(f"{t['cfg'] if t['cfg'] == 'engine' else 'MB%d' % t['cfg'][5]} {tag}{t['pf']} {t['us']:.2f}"
                                                      for t in rec["timings"] if (t["N"], t["K"], t["rep"]) == (N, K, rep)) + f" {el()}")
    save()
    # a (configuration, PF) wins a shape if it beat the engine's in both repeats by more than the engine's margin; the best of those
    wins = {}
    for (N, K, epi), cfgs in sweep.items():
        eng = [t["us"] for t in rec["timings"] if (t["N"], t["K"], t["cfg"]) == (N, K, "engine")]
        best = None
        for cfg in cfgs:
            for pf in values:
                ts = [t["us"] for t in rec["timings"] if (t["N"], t["K"], t["pf"]) == (N, K, pf) and t["cfg"] == list(cfg)]
                if len(ts) == 2 and len(eng) == 2 and all(a < (1 - G.ENGINE_MARGIN) * b for a, b in zip(ts, eng)):
                    if best is None or sum(ts) < best[2]: best = (cfg, pf, sum(ts))
        if best: wins[(N, K, epi)] = best[:2]
    rec["wins"] = {f"{k[0]}x{k[1]}": dict(cfg=list(c), pf=p) for k, (c, p) in wins.items()}
    print("wins:", rec["wins"])

    def plan(swap):
        ch = {k: G.engine_choice(*k) for N, K, epi, _ in G.MODEL_SHAPES for k in [(N, K, epi)]}
        for k, (cfg, pf) in swap.items():
            SR, SK, RP, D, E, MB, KS, XS = cfg
            ch[k] = (variant, SR, 2 if k[2] == 2 else 1, KS, 4, D, 8, (SK, RP, bool(E), bool(XS), pf))
        ch["lm_head"] = G.ENGINE_CHOICE["lm_head"]
        mb = {k: v for k, v in G.ENGINE_MINB.items() if k not in swap}      # the engine's held builds (v23) stay held
        return ch, {**mb, **{k: cfg[5] for k, (cfg, pf) in swap.items() if cfg[5] > 1}}

    rec["token"] = {}
    runs = [("engine", {})] + ([(f"v{variant} winners", wins)] if wins else []) \
         + [(f"v{variant} {tag} {pf} everywhere", {k: (cs[0], pf) for k, cs in sweep.items()}) for pf in everywhere if all(passed[(*k, cs[0], pf)] for k, cs in sweep.items())] \
         + [("engine again", {})]
    for label, swap in runs:
        ch, mb = plan(swap)
        t = guard_(f"token {label}", lambda: G.token_graph(ch, gen, bw, pdl=True, minb=mb))
        if t: rec["token"][label] = dict(t, swap={f"{k[0]}x{k[1]}": dict(cfg=list(c), pf=p) for k, (c, p) in swap.items()}); print(f"token {label}: {t['ms']:.3f} ms, ratio {t['ratio']:.3f} {el()}")

    return passed


def v14_v18_sweeps(name: str, what: str, script: str, sweep14: dict, sweep18: dict):
    """Configurations of v14 (`sweep14`) and of v18 (`sweep18`, the split shapes) through `flag_sweep` (no extra template
    value), one record `name`: rec["wins"] both sweeps' winners, rec["token"] the v14 sweep's token runs, rec["token_v18"]
    the v18 sweep's. (explore_gemv_v14e.py, explore_gemv_v14f.py.)"""
    import torch
    from qwen_engine import gemv as G
    gen = torch.Generator(device="cuda").manual_seed(0)
    rec, guard_, el, save = recorder(name, what, script, checks=[], identity=[], versus_engine=[], timings=[], regs={})
    rec["sweep"] = {f"{k[0]}x{k[1]}": [list(c) for c in v] for k, v in {**sweep14, **sweep18}.items()}
    flag_sweep(rec, gen, rec["bandwidth_tbps"], el, save, 14, sweep14, (0,), lambda e, c, _: G._v14_name(e, c), "-", ())
    rec14 = {k: rec[k] for k in ("wins", "token")}
    flag_sweep(rec, gen, rec["bandwidth_tbps"], el, save, 18, sweep18, (0,), lambda e, c, _: G._v18_name(e, c), "-", ())
    rec["wins"], rec["token_v18"], rec["token"] = {**rec14["wins"], **rec["wins"]}, rec["token"], rec14["token"]
    print(f"done {el()}; errors {len(rec['errors'])}")
    save()


def alone_rounds(rec: dict, guard, el, builds: dict, time_one, rounds: int = 3):
    """Chapter 08's kernels alone: each build of `builds` {label: gdn variant}, plain and chained with PDL (time_one(variant,
    M=1, pdl=...): us a launch), `rounds` interleaved rounds appended to rec["times"]; a line per round.
    (explore_gdn_ablate.py, explore_gdn_cs.py, explore_gdn_wt.py.)"""
    for rep in range(rounds):
        for label, v in builds.items():
            for pdl in (False, True):
                us = guard(f"{label} pdl={pdl}", lambda: time_one(v, M=1, pdl=pdl))
                if us is not None: rec["times"].append(dict(build=label, variant=v, pdl=pdl, rep=rep, us=us))
        print(f"rep {rep}: " + ", ".join(f"{t['build']} {t['us']:.2f}{' (PDL)' if t['pdl'] else ''}" for t in rec["times"] if t["rep"] == rep)
              + f" {el()}", flush=True)


SMI_QUERY = "timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active"


def smi_start(path: str):
    """nvidia-smi sampling SMI_QUERY every 20 ms into the file `path` (a file: a pipe nobody reads fills and stops it);
    None where there is no nvidia-smi. (explore_step_clocks.py, explore_power.py.)"""
    import shutil, subprocess
    if not shutil.which("nvidia-smi"): return None
    return subprocess.Popen(["nvidia-smi", f"--query-gpu={SMI_QUERY}", "--format=csv,noheader,nounits", "-lms", "20"],
                            stdout=open(path, "w"), text=True)


def smi_samples(smi, path: str, t_ref: float) -> list:
    "Stop smi_start's sampler; its samples as dicts (t: seconds since t_ref, sm, mem, watts, temp, reasons)."
    import time
    from datetime import datetime
    if smi is None: return []
    time.sleep(0.1); smi.terminate()
    out = []
    for l in open(path).read().splitlines():
        f = [x.strip() for x in l.split(",")]
        try: out.append(dict(t=datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp() - t_ref, sm=float(f[1]), mem=float(f[2]),
                             watts=float(f[3]), temp=float(f[4]), reasons=f[5]))
        except (ValueError, IndexError): pass
    return out


def window_stats(w: dict, samples: list) -> dict:
    """Adds to the window `w` (t0, t1: seconds since smi_samples' t_ref) the statistics of the samples inside it, its first
    0.2 s left out: SM clock median and minimum, watts median and maximum, samples, and how many had the software power cap
    (throttle reason 0x4) active. (explore_power.py, explore_write_cost.py.)"""
    import statistics as st
    s = [x for x in samples if w["t0"] + 0.2 < x["t"] < w["t1"]]
    if s:
        w.update(sm_median=st.median(x["sm"] for x in s), sm_min=min(x["sm"] for x in s), watts_median=st.median(x["watts"] for x in s),
                 watts_max=max(x["watts"] for x in s), samples=len(s), capped=sum(int(x["reasons"], 16) & 4 != 0 for x in s))
    return w


def gdn_hint_builds(name: str, script: str, build: int, label: str, step_first: bool = False, rounds: int = 3, reps: int = 5):
    """Chapter 08's build `build` of v7 that changes only how the state is cached (v7's values; `label`: what it changes):
    record `name` with it bit-identical to v7 over 12 calls (explore_gdn_cs.identity) and both timed alone, `rounds`
    rounds (alone_rounds); record `name`_step (with "_h200" kept last) with the decode step, `reps` interleaved rounds
    (step_plans). `step_first`: the step before the rounds alone. Out dir: sys.argv[1]. (explore_gdn_wt.py, explore_gdn_el.py.)"""
    import sys
    import explore_gdn_cs as C
    import explore_gdn_v3 as E
    from qwen_engine import gdn as G
    out = sys.argv[1] if len(sys.argv) > 1 else None
    builds = {"v7": 7, f"{label} ({build})": build}
    times = {2: "twice", 3: "three times", 5: "five times"}
    what = (f"v7 and its build {build} ({label}): bit identity with v7 over 12 calls; us a launch in a graph of 48 launches over "
            f"48 layers, plain and chained with PDL, interleaved {times[rounds]}")
    step_what = (f"The decode step (27B shape, synthetic, PDL graph) with GDN v7 and its build {build} ({label}): greedy tokens "
                 f"equal to v7's, then ms per token at 1K and 32K, interleaved {times[reps]}.")
    rec, guard, el, save = recorder(name, what, script, out=out, builds=builds, identity=[], times=[])
    for v in (v for v in builds.values() if v != 7):
        r = guard(f"identity {v}", lambda: C.identity(v))
        if r: rec["identity"].append(r); print(f"identity v{v}: {r['identical']} of {r['calls']} {el()}", flush=True)
    if not step_first: alone_rounds(rec, guard, el, builds, E.time_one, rounds=rounds)
    save()

    def apply(st, v): st.set_gdn_log(None); G.VARIANT = v      # v7-family builds: the step without its log (GDN_LOG)
    step_plans(out, name.replace("_h200", "_step_h200"), step_what, script, builds, apply, reps=reps)
    G.VARIANT = 7
    if step_first:
        alone_rounds(rec, guard, el, builds, E.time_one, rounds=rounds)
        save()


def gdn_step_graphs(variants) -> tuple:
    """The 27B-shape synthetic decode step (seed 0, a 1K prompt) and one captured PDL graph per GDN variant of `variants`
    (gdn.VARIANT set for the capture, 7 after): (step, {variant: graph}); put step.graph = graphs[v] to replay one.
    (explore_step_clocks.py, explore_power.py.)"""
    from qwen_engine import gdn
    from qwen_engine.config import preset
    from qwen_engine.step import DecodeStep, synthetic_engine_weights
    from qwen_engine.decode_bench import _prompt
    cfg = preset("qwen3_5_27b")
    EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
    step = DecodeStep(cfg, EW, max_context=33 * 1024)
    prompt, graphs = _prompt(1024), {}
    for v in dict.fromkeys(variants):
        step.set_gdn_log(None); gdn.VARIANT = v; step.graph = None   # v7-family builds: the step without its log
        step.reset(prompt, 64); step.capture()
        graphs[v] = step.graph
    gdn.VARIANT = 7
    return step, graphs


_STREAM_SINK = {}

def stream_gemv(self, wq, x, epi, out, res=None):
    "A plain stream of the projection's weight bytes in the GEMV's place (timing only: writes nothing)."
    import numpy as np, torch
    from qwen_engine.runtime import get_kernel, launch
    k = get_kernel("gemv", "gemv_stream_probe_v2<8, true>", together=("gemv_stream_probe_v2<8, false>", "gemv_stream_probe_v2<8, true>"))
    w = wq[0]
    sink = _STREAM_SINK.setdefault(w.device, torch.zeros(4, dtype=torch.int32, device=w.device))
    launch(k, (2 * torch.cuda.get_device_properties(w.device).multi_processor_count,), (512,),
           (w, np.int64(w.numel() * w.element_size() // 16), sink), pdl=self.pdl)


def skeleton_apply(step, plan):
    """Chapter 09a's skeleton plans: plan = (streams, omit, omit_norms): every projection a plain stream of its bytes (or the
    engine's GEMV), the families in `omit` left out (DecodeStep.omit), and the residual norms too with omit_norms."""
    import types
    streams, omit, no_norms = plan
    if not hasattr(step, "_engine_gemv"): step._engine_gemv = step._gemv
    step._gemv = types.MethodType(stream_gemv, step) if streams else step._engine_gemv
    step.omit, step.omit_norms = set(omit), no_norms
