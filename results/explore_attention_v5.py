"""Chapter 07, v5 to v8 (fewer fixed costs: early key copies and loads, the merge folded into pass 2 (v5), one launch
with grid barriers (v6), v5's passes with v4's merge kernel (v7), v6 with a finer pass-2 ring (v8)): check each new variant bit for bit against the engine's
variant (4), then time it beside v4 and SDPA.
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v5.py OUT_DIR
Writes OUT_DIR/attention_v5_h200.json (write_record). A variant that fails a check is reported and not timed; every part
catches its own exceptions, so one run reports everything.
(`main` took the record's name, description and script as parameters after this record was made, for
results/explore_attention_v9.py: the same steps.)"""
import json, sys, time, traceback
import torch
import torch.nn.functional as F
from qwen_engine import attention as A
from qwen_engine.runtime import time_graph, median, L2_BYTES

CUR = 4                         # the reference the new variants are checked against: v4, the engine's variant when this record was made
NEW = [5, 6, 7, 8]              # 5: pass 1 v5 + pass 2 v3 (merge inside); 6: one launch; 7: v5's passes + v4's merge kernel;
                                # 8: v6 with pass 2 on a ring of 6 stages of 32 rows
CONTEXTS = (1, 255, 256, 257, 4096, 32768)
TIMED = (1024, 4096, 32768, 131072)


def _bits(x):
    "The raw bits of a tensor (so poisoned NaNs compare equal to themselves)."
    return x.contiguous().view(torch.int16 if x.element_size() == 2 else torch.int32)


def _poison_new_rows(pool, t, pos0, M):
    "NaN into the k and v rows of the positions a step appends: a variant that does not write them shows."
    for pos in range(pos0, pos0 + M):
        pool.kv[:, 0, t.pages[pos // A.PAGE], :, pos % A.PAGE] = float("nan")


def same_as_current(cfg, pool, n, M, v, gen, rope, scr, dev):
    """Outputs (poisoned first), appended k and v rows, scores, statistics and partials of variant v, with and without
    PDL, vs the current variant without PDL on the same inputs. v6: also its barrier give-ups (sync[1])."""
    t = A.PageTable(pool, 520, dev)
    try:
        pos0 = n - 1
        t.ensure(pos0 + M)
        qkv, qw, kw = A._inputs(cfg, M, gen, dev)
        ctl = torch.tensor([pos0], dtype=torch.int32, device=dev)
        HD = cfg.num_attention_heads * cfg.head_dim
        res, ref = {}, None
        give0 = int(scr.sync[1])
        for var, pdl in [(CUR, False), (v, False), (v, True)]:
            out = torch.full((M, HD), float("nan"), dtype=torch.bfloat16, device=dev)
            scr.stats.fill_(float("nan")); scr.opart.fill_(float("nan")); scr.scores[:M, :, :pos0 + M].fill_(float("nan"))
            _poison_new_rows(pool, t, pos0, M)
            A.attention_decode(qkv, ctl, pool, 0, t, qw, kw, cfg, out, scr, rope, M=M, variant=var, pdl=pdl)
            torch.cuda.synchronize()
            k_all, v_all = pool.gather(0, t.pages, pos0 + M)
            got = (out.clone(), k_all[:, pos0:].clone(), v_all[:, pos0:].clone(), scr.scores[:M, :, :pos0 + M].clone(),
                   scr.stats[:M].clone(), scr.opart[:M].clone())
            if ref is None: ref = got; continue
            same = [bool(torch.equal(_bits(a), _bits(b))) for a, b in zip(got, ref)]
            res["pdl" if pdl else "plain"] = dict(out=same[0], k_rows=same[1], v_rows=same[2], scores=same[3], stats=same[4], opart=same[5],
                                                  unwritten=int(torch.isnan(got[0].float()).sum()),
                                                  out_differing=int((_bits(got[0]) != _bits(ref[0])).sum()))
        res["counters_zero"] = bool((scr.count == 0).all())
        res["barrier_give_ups"] = int(scr.sync[1]) - give0
        return dict(n=n, M=M, variant=v, vs=CUR, **res)
    finally:
        t.release()


def time_calls(cfg, pool, n, rope, gen, variant, pdl, calls):
    "time_ours with `calls` distinct caches per graph instead of the L2 minimum (2 at 32K): the graph launch amortised."
    s1 = A.attention_scratch(cfg, 1, pool.kv.device, P=A.P_DEFAULT, max_ctx=n + 256)
    with A._rotation(cfg, pool, n, gen, 3 * L2_BYTES // calls) as (tabs, qkv, qw, kw, ctl, out):
        ms = median(time_graph(lambda i: A.attention_decode(qkv, ctl, pool, 0, tabs[i], qw, kw, cfg, out, s1, rope, variant=variant, pdl=pdl),
                               calls=len(tabs), reps=10))
    kv = n * cfg.num_key_value_heads * cfg.head_dim * 4
    return dict(n=n, variant=variant, pdl=pdl, calls=len(tabs), us=ms * 1e3, tbps=kv / (ms * 1e-3) / 1e12)


def time_sdpa_calls(cfg, n, gen, calls):
    "torch SDPA as A.time_sdpa, with `calls` distinct k, v per graph."
    Hq, Hkv, D = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
    ks = [torch.randn(1, Hkv, n, D, generator=gen, device="cuda").to(torch.bfloat16) for _ in range(calls)]
    vs = [torch.randn(1, Hkv, n, D, generator=gen, device="cuda").to(torch.bfloat16) for _ in range(calls)]
    q = torch.randn(1, Hq, 1, D, generator=gen, device="cuda").to(torch.bfloat16)
    ms = median(time_graph(lambda i: F.scaled_dot_product_attention(q, ks[i], vs[i], enable_gqa=True), calls=calls, reps=10))
    return dict(n=n, variant="sdpa", pdl=False, calls=calls, us=ms * 1e3, tbps=n * Hkv * D * 4 / (ms * 1e-3) / 1e12)


WHAT5 = ("decode attention v5 (pass 1 v5: early key copies; pass 2 v3: earlier loads, the merge folded in, two "
         "launches), v6 (one launch, two grid barriers, merge spread over all blocks) v7 (v5's passes, v4's merge kernel) and v8 (v6, pass 2 on a 6 x 32-row ring): bit identity vs v4 (outputs, appended rows, scores, statistics, "
         "partials; M = 1 and 8; PDL off and on), the criterion, limits; time at 1K..128K beside v4 and SDPA; parts; "
         "8 steps per graph at 32K; P at 33 and 132 (timing only).")


def main(out_dir, name="attention_v5_h200", what=WHAT5, script="explore_attention_v5.py", criterion_blocks=True):
    """criterion_blocks=False (explore_attention_v9.py): a failed criterion is recorded (criterion_failed) but does not stop
    the timing of a variant bit-identical to CUR at every identity check: its outputs are CUR's, whose criterion stands
    in CUR's own record; the criterion's noise here comes from the few checks of this run."""
    from qwen_engine.gemv import bandwidth_now
    t0 = time.time()
    cfg, dev, gen, max_ctx, rope, pool = A.bench_pool()                      # scattered pages
    scr = A.attention_scratch(cfg, 8, dev, P=A.P_DEFAULT, max_ctx=max_ctx)
    data = dict(P=A.P_DEFAULT, current=CUR, new=NEW, variants={k: list(v) for k, v in A.VARIANTS.items()},
                identity=[], checks=[], multirow=[], limits=[], errors=[], failed={}, timing=[], parts=[], p_sweep=[],
                sdpa=[], amortized=[])
    el = lambda: f"[{time.time() - t0:.0f} s]"
    fail = lambda v, what: data["failed"].setdefault(v, []).append(what)

    def guard(what, fn):
        try: return fn()
        except Exception as e:
            data["errors"].append(f"{what}: {e!r}"[:400]); print("FAILED", what, repr(e)[:400], flush=True); traceback.print_exc()
            return None

    # ---- verification: bit for bit against v4 (the requirement), then the usual criterion and limits ---------------
    for v in NEW:
        for n in CONTEXTS:
            for M in (1, 8):
                s = guard(f"identity v{v} n={n} M={M}", lambda: same_as_current(cfg, pool, n, M, v, gen, rope, scr, dev))
                if not s: fail(v, f"identity n={n} M={M} raised"); continue
                data["identity"].append(s); print("identity", json.dumps(s), el(), flush=True)
                for key in ("plain", "pdl"):
                    bad = [k for k in ("out", "k_rows", "v_rows") if not s[key][k]]
                    if bad or s[key]["unwritten"]: fail(v, f"n={n} M={M} {key}: differs from v{CUR} in {bad}, {s[key]['out_differing']} outputs; unwritten {s[key]['unwritten']}")
                if not s["counters_zero"] or s["barrier_give_ups"]: fail(v, f"n={n} M={M}: counters {s['counters_zero']}, barrier give-ups {s['barrier_give_ups']}")
        for n, M in ((1, 1), (257, 8), (4096, 1), (32768, 8)):
            t = A.PageTable(pool, 520, dev)
            c = guard(f"check v{v} n={n} M={M}", lambda: A.check_context(cfg, pool, t, n, M, gen, rope, scr, variant=v))
            t.release()
            if c: data["checks"].append(c); print("check", json.dumps(c), el(), flush=True)
            else: fail(v, f"check n={n} M={M} raised")
        t = A.PageTable(pool, 520, dev)
        m = guard(f"multirow v{v}", lambda: A.check_multirow(cfg, pool, t, 250, gen, rope, scr, variant=v))
        t.release()
        if m:
            m["identical"] = {str(k): x for k, x in m["identical"].items()}; data["multirow"].append(m); print("multirow", m, flush=True)
            if not all(m["identical"].values()): fail(v, f"multirow n=250: {m['identical']}")
        else: fail(v, "multirow raised")
        lim = guard(f"limits v{v}", lambda: A.check_limits(cfg, dev, variant=v))
        if lim:
            lim["variant"] = v; data["limits"].append(lim); print("limits", lim, flush=True)
            if not (lim["last_position_written"] and lim["beyond_wrote_nothing"] and lim["other_session_intact"]): fail(v, f"limits: {lim}")
        else: fail(v, "limits raised")
    cs = data["checks"]
    noise, noise_m = A.run_noise(cs, data)
    for c in cs:
        c["ok"] = (c["unwritten"] == 0 and c["ulp_kernel"] <= 2 * noise and c["mism_kernel"] <= 2 * noise_m and c["context_unchanged"]
                   and c["k_append_identical"] and c["v_append_identical"])
        if not c["ok"]:
            what_failed = f"criterion n={c['n']} M={c['M']}: {c['ulp_kernel']:.3f} ulp, {c['mism_kernel']:.4f} differing"
            if criterion_blocks: fail(c["variant"], what_failed)
            else: data.setdefault("criterion_failed", []).append(dict(variant=c["variant"], what=what_failed))
    passed = [v for v in NEW if v not in data["failed"]]
    print(f"bit-identical to v{CUR}: {passed}; failed: {data['failed'] or 'none'} {el()}", flush=True)

    # ---- timing -----------------------------------------------------------------------------------------------------
    bw = guard("bandwidth", lambda: bandwidth_now(gib=2)); data["bandwidth_tbps"] = bw
    print("read bandwidth", bw, el(), flush=True)
    frac = lambda r: r["tbps"] / bw if bw else None
    configs = [(CUR, False), (CUR, True)] + [(v, p) for v in passed for p in (False, True)]
    for n in TIMED:
        for v, pdl in configs:
            s1 = A.attention_scratch(cfg, 1, dev, P=A.P_DEFAULT, max_ctx=max_ctx)
            r = guard(f"time v{v} pdl={pdl} n={n}", lambda: A.time_ours(cfg, pool, n, s1, rope, gen, variant=v, pdl=pdl))
            if r:
                r["frac"] = frac(r); r["barrier_give_ups"] = int(s1.sync[1]); data["timing"].append(r); print("time", r, flush=True)
        s = guard(f"sdpa n={n}", lambda: A.time_sdpa(cfg, n, gen))
        if s: s["frac"] = frac(s); data["sdpa"].append(s); print("sdpa", s, el(), flush=True)
        if n in (1024, 32768):
            for v in [CUR] + [x for x in passed if A.VARIANTS[x][2]]:        # each launch alone (v6 is one launch: its time above)
                s1 = A.attention_scratch(cfg, 1, dev, P=A.P_DEFAULT, max_ctx=max_ctx)
                r = guard(f"parts v{v} n={n}", lambda: A.time_parts(cfg, pool, n, s1, rope, gen, variant=v))
                if r: data["parts"].append(r); print("parts", r, flush=True)
    for v in [CUR] + passed:                                              # at 32K the graph holds only 2 steps: amortise it
        r = guard(f"amortized v{v}", lambda: time_calls(cfg, pool, 32768, rope, gen, v, True, 8))
        if r: r["frac"] = frac(r); data["amortized"].append(r); print("amortized", r, flush=True)
    r = guard("amortized sdpa", lambda: time_sdpa_calls(cfg, 32768, gen, 8))
    if r: r["frac"] = frac(r); data["amortized"].append(r); print("amortized", r, el(), flush=True)
    for v, P in [(x, P) for x in passed if x in (5, 6) for P in ((33, 132) if A.VARIANTS[x][2] else (33,))]:   # v6 holds 264 blocks at most
        s1 = A.attention_scratch(cfg, 1, dev, P=P, max_ctx=max_ctx)
        r = guard(f"time v{v} P={P}", lambda: A.time_ours(cfg, pool, 32768, s1, rope, gen, variant=v, pdl=True))
        if r: r["frac"] = frac(r); data["p_sweep"].append(r); print("P sweep", r, flush=True)

    # ---- the table --------------------------------------------------------------------------------------------------
    print(f"\nread bandwidth (same run): {bw} TB/s; bit-identical to v{CUR}: {passed}; failed: {sorted(data['failed']) or 'none'}; "
          f"criterion checks {sum(c['ok'] for c in cs)}/{len(cs)}; errors {len(data['errors'])} {el()}")
    print(f"{'context':>8} " + " ".join(f"{('v%d%s' % (v, '+pdl' if p else '')):>15}" for v, p in configs) + f" {'SDPA':>15}   (us, % of bandwidth)")
    for n in TIMED:
        row = []
        for v, p in configs:
            r = next((x for x in data["timing"] if x["n"] == n and x["variant"] == v and x["pdl"] == p), None)
            row.append(f"{r['us']:7.1f} {100 * (r['frac'] or 0):5.1f}%" if r else "-")
        s = next((x for x in data["sdpa"] if x["n"] == n), None)
        row.append(f"{s['us']:7.1f} {100 * (s['frac'] or 0):5.1f}%" if s else "-")
        print(f"{n:>8} " + " ".join(f"{x:>15}" for x in row))
    for r in data["parts"]:
        print(f"parts n={r['n']:>6} v{r['variant']}: " + ", ".join(f"{k} {x:.1f}" for k, x in r.items() if k not in ("n", "P", "variant")))
    for r in data["amortized"]: print(f"32K, 8 steps per graph, {r['variant']}{'+pdl' if r['pdl'] else ''}: {r['us']:.1f} us, {100 * (r['frac'] or 0):.1f} %")
    for r in data["p_sweep"]: print(f"P sweep v{r['variant']} P={r['P']} (+pdl; not bit-identical to P=66, timing only): {r['us']:.1f} us, {100 * (r['frac'] or 0):.1f} %")
    gu = [(r["n"], r["variant"], r["pdl"], r["barrier_give_ups"]) for r in data["timing"] if r.get("barrier_give_ups")]
    data["timing_barrier_give_ups"] = gu
    print(f"v6/v8 barrier (or v8 ring) give-ups while timing (each one = a wrong output and 20 ms): {gu or 'none'}")
    if out_dir:
        from qwen_engine.runtime import write_record
        write_record(name, what, f"PYTHONPATH=. python3 results/{script} OUT_DIR", data, out_dir=out_dir)
    return data


def main_and_step(out, name, what, script, step_what, reps=3):
    """main() with the criterion recorded, not required (criterion_blocks=False: the new variants are bit-identical to CUR),
    then the 27B-shape decode step (explore_util.step_plans: PDL graph, greedy tokens equal, 1K and 32K interleaved `reps`
    times) with VARIANT = CUR and each new variant that passed; its record is `name` with _h200 -> _step_h200.
    (explore_attention_v10.py and v14.py: their scripts did this inline when their records were made; the same steps.)"""
    import explore_util
    data = main(out, name, what, script, criterion_blocks=False)
    passed = [v for v in NEW if v not in data["failed"]]

    def apply(step, v): A.VARIANT = v
    explore_util.step_plans(out, name.replace("_h200", "_step_h200"), step_what, script, {f"v{v}": v for v in [CUR] + passed}, apply, reps=reps)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
