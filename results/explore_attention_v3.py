"""Chapter 07, v3 (the shared-memory ring of bulk copies): verify each new attention variant, then time it beside the
current one. Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_v3.py OUT_DIR
Writes OUT_DIR/attention_v3_h200.json (write_record). A variant that fails a check is reported and not timed."""
import json, sys, time, traceback
import torch
from qwen_engine import attention as A

CUR = 2                         # the reference the new variants are checked against: v2, the engine's variant when this record was made
NEW = [3, 4]                    # the variants under test (4: 3 with the prologue inside pass 1)
CONTEXTS = (1, 255, 256, 257, 4096, 32768)
TIMED = (1024, 4096, 32768, 131072)


def same_as_current(cfg, pool, n, M, v, gen, rope, scr, dev):
    "Outputs (poisoned first), statistics and partials of variant v vs the current variant on the same inputs; v with PDL too."
    t = A.PageTable(pool, 520, dev)
    try:
        t.ensure(n - 1 + M)
        qkv, qw, kw = A._inputs(cfg, M, gen, dev)
        ctl = torch.tensor([n - 1], dtype=torch.int32, device=dev)
        HD = cfg.num_attention_heads * cfg.head_dim
        res, ref = {}, None
        runs = [(CUR, False), (v, False)] + ([(v, True)] if A.VARIANTS[v][4] else [])
        for var, pdl in runs:
            out = torch.full((M, HD), float("nan"), dtype=torch.bfloat16, device=dev)
            scr.stats.fill_(float("nan")); scr.opart.fill_(float("nan")); scr.scores[:M, :, :n - 1 + M].fill_(float("nan"))
            A.attention_decode(qkv, ctl, pool, 0, t, qw, kw, cfg, out, scr, rope, M=M, variant=var, pdl=pdl)
            torch.cuda.synchronize()
            got = (out.clone(), scr.stats[:M].clone(), scr.opart[:M].clone(), scr.scores[:M, :, :n - 1 + M].clone())
            if ref is None: ref = got; continue
            key = "pdl" if pdl else "plain"
            res[key] = dict(out=bool(torch.equal(got[0], ref[0])), stats=bool(torch.equal(got[1], ref[1])),
                            opart=bool(torch.equal(got[2], ref[2])), scores=bool(torch.equal(got[3], ref[3])),
                            unwritten=int(torch.isnan(got[0].float()).sum()), out_differing=int((got[0] != ref[0]).sum()))
        return dict(n=n, M=M, variant=v, vs=CUR, **res)
    finally:
        t.release()


def main(out_dir):
    from qwen_engine.gemv import bandwidth_now
    t0 = time.time()
    cfg, dev, gen, max_ctx, rope, pool = A.bench_pool()                      # scattered pages
    scr = A.attention_scratch(cfg, 8, dev, P=A.P_DEFAULT, max_ctx=max_ctx)
    data = dict(P=A.P_DEFAULT, current=CUR, new=NEW, variants={k: list(v) for k, v in A.VARIANTS.items()},
                checks=[], identity=[], multirow=[], errors=[], failed={}, timing=[], parts=[], p_sweep=[], sdpa=[])
    el = lambda: f"[{time.time() - t0:.0f} s]"

    def guard(what, fn):
        try: return fn()
        except Exception as e:
            data["errors"].append(f"{what}: {e!r}"[:400]); print("FAILED", what, repr(e)[:400], flush=True); traceback.print_exc()
            return None

    # ---- verification ---------------------------------------------------------------------------------------------
    for v in NEW:
        for n in CONTEXTS:
            for M in (1, 8):
                t = A.PageTable(pool, 520, dev)
                c = guard(f"check v{v} n={n} M={M}", lambda: A.check_context(cfg, pool, t, n, M, gen, rope, scr, variant=v))
                t.release()
                if c: data["checks"].append(c); print("check", json.dumps(c), el(), flush=True)
                else: data["failed"].setdefault(v, []).append(f"check n={n} M={M} raised")
                s = guard(f"identity v{v} n={n} M={M}", lambda: same_as_current(cfg, pool, n, M, v, gen, rope, scr, dev))
                if s: data["identity"].append(s); print("identity", json.dumps(s), flush=True)
        for n in (1, 250, 4096, 32768):
            t = A.PageTable(pool, 520, dev)
            m = guard(f"multirow v{v} n={n}", lambda: A.check_multirow(cfg, pool, t, n, gen, rope, scr, variant=v))
            t.release()
            if m:
                m["identical"] = {str(k): x for k, x in m["identical"].items()}
                data["multirow"].append(m); print("multirow", m, el(), flush=True)
                if not all(m["identical"].values()): data["failed"].setdefault(v, []).append(f"multirow n={n}: {m['identical']}")
            else: data["failed"].setdefault(v, []).append(f"multirow n={n} raised")
        lim = guard(f"limits v{v}", lambda: A.check_limits(cfg, dev, variant=v))
        if lim:
            lim["variant"] = v; data.setdefault("limits", []).append(lim); print("limits", lim, flush=True)
            if not (lim["last_position_written"] and lim["beyond_wrote_nothing"] and lim["other_session_intact"]):
                data["failed"].setdefault(v, []).append(f"limits: {lim}")
        else: data["failed"].setdefault(v, []).append("limits raised")
    cs = data["checks"]
    noise, noise_m = A.run_noise(cs, data)
    for c in cs:
        c["ok"] = (c["unwritten"] == 0 and c["ulp_kernel"] <= 2 * noise and c["mism_kernel"] <= 2 * noise_m and c["context_unchanged"]
                   and c["k_append_identical"] and c["v_append_identical"])
        if not c["ok"]:
            data["failed"].setdefault(c["variant"], []).append(
                f"n={c['n']} M={c['M']}: {c['ulp_kernel']:.3f} ulp (tol {2 * noise:.3f}), {c['mism_kernel']:.4f} differing "
                f"(tol {2 * noise_m:.4f}), unwritten {c['unwritten']}, appends {c['k_append_identical']}/{c['v_append_identical']}")
    for s in data["identity"]:
        for key in ("plain", "pdl"):
            if key in s and s[key]["unwritten"]: data["failed"].setdefault(s["variant"], []).append(f"n={s['n']} M={s['M']} {key}: unwritten outputs")
    passed = [v for v in NEW if v not in data["failed"]]
    print(f"checks: {sum(c['ok'] for c in cs)}/{len(cs)} within {2 * noise:.3f} ulp and {2 * noise_m:.4f} differing; "
          f"passed: {passed}; failed: {data['failed']} {el()}", flush=True)

    # ---- timing ---------------------------------------------------------------------------------------------------
    bw = guard("bandwidth", lambda: bandwidth_now(gib=2)); data["bandwidth_tbps"] = bw
    print("read bandwidth", bw, el(), flush=True)
    configs = [(CUR, False)] + [(v, p) for v in passed for p in ((False, True) if A.VARIANTS[v][4] else (False,))]
    for n in TIMED:
        for v, pdl in configs:
            s1 = A.attention_scratch(cfg, 1, dev, P=A.P_DEFAULT, max_ctx=max_ctx)
            r = guard(f"time v{v} pdl={pdl} n={n}", lambda: A.time_ours(cfg, pool, n, s1, rope, gen, variant=v, pdl=pdl))
            if r: r["frac"] = r["tbps"] / bw if bw else None; data["timing"].append(r); print("time", r, flush=True)
        for v in [CUR] + passed:
            s1 = A.attention_scratch(cfg, 1, dev, P=A.P_DEFAULT, max_ctx=max_ctx)
            r = guard(f"parts v{v} n={n}", lambda: A.time_parts(cfg, pool, n, s1, rope, gen, variant=v))
            if r: data["parts"].append(r); print("parts", r, el(), flush=True)
    for v in passed:
        for P in (33, 132):
            s1 = A.attention_scratch(cfg, 1, dev, P=P, max_ctx=max_ctx)
            r = guard(f"time v{v} P={P}", lambda: A.time_ours(cfg, pool, 32768, s1, rope, gen, variant=v))
            if r: r["frac"] = r["tbps"] / bw if bw else None; data["p_sweep"].append(r); print("P sweep", r, flush=True)
    for n in (1024, 32768):
        r = guard(f"sdpa n={n}", lambda: A.time_sdpa(cfg, n, gen))
        if r: r["frac"] = r["tbps"] / bw if bw else None; data["sdpa"].append(r)

    # ---- the table --------------------------------------------------------------------------------------------------
    print(f"\nread bandwidth (same run): {bw} TB/s; checks {sum(c['ok'] for c in cs)}/{len(cs)}; failed variants: "
          f"{sorted(data['failed']) or 'none'}; identical to v{CUR}: "
          f"{all(s.get('plain', {}).get('out', False) for s in data['identity'])} {el()}")
    print(f"{'context':>8} " + " ".join(f"{('v%d%s' % (v, '+pdl' if p else '')):>16}" for v, p in configs) + "   (us, % of bandwidth)")
    for n in TIMED:
        row = []
        for v, p in configs:
            r = next((x for x in data["timing"] if x["n"] == n and x["variant"] == v and x["pdl"] == p), None)
            row.append(f"{r['us']:8.1f} {100 * (r['frac'] or 0):5.1f} %" if r else f"{'-':>16}")
        print(f"{n:>8} " + " ".join(f"{x:>16}" for x in row))
    for r in data["parts"]:
        print(f"parts n={r['n']:>6} v{r['variant']}: " + ", ".join(f"{k} {x:.1f}" for k, x in r.items() if k not in ("n", "P", "variant")))
    for r in data["p_sweep"]: print(f"P sweep v{r['variant']} P={r['P']}: {r['us']:.1f} us, {100 * (r['frac'] or 0):.1f} %")
    for r in data["sdpa"]: print(f"SDPA n={r['n']}: {r['us']:.1f} us, {100 * (r['frac'] or 0):.1f} %")
    if out_dir:
        from qwen_engine.runtime import write_record
        write_record("attention_v3_h200", "decode attention v3 (pass 1 v3, pass 2 v2, merge v2: bulk copies into a shared-memory "
                     "ring) and v4 (v3 with the prologue inside pass 1): verification vs the reference, the float64 definition, the emulation and the current variant "
                     "(bit identity); M = 2..8 identity; time and parts at 1K..128K beside the current variant; P sweep.",
                     "PYTHONPATH=. python3 results/explore_attention_v3.py " + str(out_dir), data, out_dir=out_dir)
    return data


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
