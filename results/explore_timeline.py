"""Chapter 09a: the step's timeline. Where a PDL step loses time is a question about *when* each kernel runs, which
neither a profile (kernels alone, no overlap) nor a removal (what the step loses without a family) answers. The
timeline build (QE_TIMELINE=1: kernels/common.cu's qe_grid_wait records, for every block, when it reached its grid wait
and when the wait returned) gives it for all 453 launches of a token at once.

Per launch i of a token, relative to the moment the token's first kernel was released (T):
  reach_first / reach_last: when its first / last block reached the wait (the blocks are resident, their loads before the
      wait issued); release_first / release_last: when the wait returned to its first / last block. The wait returns
      once the launch before has completed and its writes are visible, so release_first[i + 1] is launch i's end as seen
      by the GPU, and price[i] = release_first[i + 1] - release_first[i] is the time the chain spends on launch i.
  The prices of a token add up to its period less the last launch's (finish_step: the next replay's first release is
  not in the same record, as graph nodes keep their %gridid across replays; see BATCHES).

Run twice on the H200 (the part `timeline` of results/h200_session.sh): first with QE_TIMELINE=1 (the timeline, its
tokens and its ms per replay), then without (the plain build: tokens and ms per replay in the same record, so the
instrument's cost is measured: two timer reads and two 16-byte stores per block).
Usage: QE_TIMELINE=1 PYTHONPATH=. python3 results/explore_timeline.py OUT_DIR [PLAN]; PYTHONPATH=. python3 results/explore_timeline.py OUT_DIR [PLAN]
(step_timeline_h200.json; PLAN no_norms: the step without its residual norms, DecodeStep.omit_norms, timing only ->
step_timeline_no_norms_h200.json)."""
import os, sys, json, time, statistics
from pathlib import Path
import numpy as np
import torch
import explore_util
from qwen_engine import runtime as R

TIMELINE = R.TIMELINE
# A graph's kernel nodes keep their %gridid from one replay to the next (the first record: 4 replays a batch left 453
# distinct launches, consecutive ids), so a batch records one replay (the last one replayed): 12 batches of 1.
CTXS, BATCHES, TOKENS = (1024, 32768), 12, 1
PLAN = sys.argv[2] if __name__ == "__main__" and len(sys.argv) > 2 else "engine"     # "engine", "no_norms" (DecodeStep.omit_norms: timing only, x is stale),
assert PLAN in ("engine", "no_norms", "norm_late", "ln1_late", "norm_early", "norm_plain") or PLAN.startswith(("handoff", "idleattn")), PLAN   # or a DecodeStep.release plan (explore_norm_late.py);
# norm_early: the norms' EW build (explore_norm_early.py; a release plan at a43b26d, where step_timeline_norm_early_h200.json
# was taken, the engine's own norms since); norm_plain: every residual norm the plain build (DecodeStep.norm_ew = set());
# handoffTRG: the norms released at TRG of their producer's warps (DecodeStep.handoff_trg, results/explore_handoff.py);
# idleattnNS: NS ns of idle before every attention launch (step.cu's idle_spacer<NS>, NS 10000 or 30000; explore_energy.py)
TAG = sys.argv[3] if __name__ == "__main__" and len(sys.argv) > 3 else ""   # a suffix for the record's name (a re-run)
NAME = "step_timeline" + ("" if PLAN == "engine" else f"_{PLAN}") + (f"_{TAG}" if TAG else "") + "_h200"
BLOCKS_OF = range(202, 209)        # launches whose every block is kept (one token at 1K): gate|up, down, norm, qkv|z, GDN, out_proj, norm
WHAT = ("The decode step's timeline (27B shape, synthetic, seed 0, PDL graph) at 1K and 32K: for every launch of a token, when its "
        "blocks reached and left their grid wait (the timeline build, kernels/common.cu), medians over 12 tokens; the price of each "
        "launch in the chain; ms per replay of the timeline build and of the plain build, and both builds' first 24 greedy tokens.")
out = sys.argv[1] if __name__ == "__main__" and len(sys.argv) > 1 else None


def family(label: str) -> str:
    from qwen_engine.decode_bench import family_of
    return family_of(label.split(":", 1)[-1])


def plan_setup(step):
    "PLAN's changes to the engine's step (both builds make the same ones)."
    step.omit_norms = PLAN == "no_norms"
    step.release = {PLAN} if PLAN.endswith("_late") else set()
    if PLAN == "norm_plain": step.norm_ew = set()
    if PLAN.startswith("handoff"): step.handoff_trg = int(PLAN[len("handoff"):])
    if PLAN.startswith("idleattn"): step.spacers = {"attn": f"idle_spacer<{int(PLAN[len('idleattn'):])}>"}


def main_plain():
    "The plain build: tokens and ms per replay, added to the timeline's record."
    from qwen_engine.config import preset
    from qwen_engine.step import DecodeStep, synthetic_engine_weights, run
    from qwen_engine.decode_bench import _prompt, time_replays, at_context
    path = Path(out) / f"{NAME}.json"
    rec = json.loads(path.read_text())["data"] if path.is_file() else dict(errors=["plain run without a timeline record"])
    cfg = preset("qwen3_5_27b")
    EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
    step = DecodeStep(cfg, EW, max_context=33 * 1024)
    plan_setup(step)
    prompt = _prompt(1024)
    rec["plain_tokens"] = list(run(step, prompt[:16], 24))
    rec["tokens_equal"] = rec["plain_tokens"] == rec.get("timeline_tokens")
    step.reset(prompt, 64); step.capture()
    rec["plain_ms"] = {}
    for ctx in CTXS:
        at_context(step, ctx); rec["plain_ms"][str(ctx)] = [time_replays(step) for _ in range(3)]
    print("plain ms:", rec["plain_ms"], "timeline ms:", rec.get("timeline_ms"), "tokens equal:", rec["tokens_equal"])
    arg = ("" if PLAN == "engine" and not TAG else f" {PLAN}") + (f" {TAG}" if TAG else "")
    R.write_record(NAME, WHAT, f"QE_TIMELINE=1 PYTHONPATH=. python3 results/explore_timeline.py OUT_DIR{arg}; PYTHONPATH=. python3 results/explore_timeline.py OUT_DIR{arg}",
                   rec, out_dir=out)


def recorded_launches(step):
    """Capture the step's graph while recording every launch (label, blocks, the GEMV shape it serves) in order; the
    capture runs the body twice (an eager warm-up, then the capture), and the second half is the graph's."""
    order, tag = [], [None]
    real = R.launch
    def rec_launch(kernel, grid, block, args, smem=0, pdl=False):
        order.append((R._NAMES.get(id(kernel), "?"), int(np.prod(grid)), tag[0]))
        return real(kernel, grid, block, args, smem=smem, pdl=pdl)
    mods = [m for n, m in list(sys.modules.items()) if n.startswith("qwen_engine") and getattr(m, "launch", None) is real]
    engine_gemv = step._gemv
    def gemv(wq, x, epi, o, res=None):
        tag[0] = (int(wq[0].shape[0]), int(wq[0].shape[1]), int(epi))
        try: return engine_gemv(wq, x, epi, o, res)
        finally: tag[0] = None
    for m in mods: m.launch = rec_launch
    step._gemv = gemv
    try: step.capture()
    finally:
        for m in mods: m.launch = real
        del step._gemv
    n = len(order) // 2
    assert len(order) == 2 * n and order[:n] == order[n:], "warm-up and capture launched different kernels"
    return order[n:]


def tokens_of(recs, L: int):
    """Split one batch's records into tokens of L launches: [token][launch] -> rows. None if the launches seen are not
    a whole number of tokens (a launch without records, or slots shared)."""
    gids, starts = np.unique(recs[:, 0], return_index=True)
    if len(gids) % L: return None
    bounds = list(starts) + [len(recs)]
    per = [recs[bounds[j]:bounds[j + 1]] for j in range(len(gids))]
    return [per[t * L:(t + 1) * L] for t in range(len(gids) // L)]


def main_timeline():
    from qwen_engine.config import preset
    from qwen_engine.step import DecodeStep, synthetic_engine_weights, run, token_bytes
    from qwen_engine.decode_bench import _prompt, time_replays, at_context
    from qwen_engine import gemv as G
    rec, guard, el, save = explore_util.recorder(NAME, WHAT, "explore_timeline.py", out=out, timeline_ms={}, contexts={})
    bw = rec["bandwidth_tbps"]
    cfg = preset("qwen3_5_27b")
    EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
    step = DecodeStep(cfg, EW, max_context=33 * 1024)
    plan_setup(step)
    rec["plan"] = PLAN
    rec["tl_blocks"] = R.TL_BLOCKS              # blocks past this many in a launch are not recorded
    prompt = _prompt(1024)
    rec["timeline_tokens"] = guard("tokens", lambda: list(run(step, prompt[:16], 24)))
    print(f"tokens {el()}", flush=True)
    step.reset(prompt, 64)
    order = recorded_launches(step)
    L = len(order)
    rec["launches"] = [dict(label=lab, blocks=nb, shape=list(sh) if sh else None) for lab, nb, sh in order]
    print(f"{L} launches a token; largest grid {max(nb for _, nb, _ in order)} blocks {el()}", flush=True)
    for ctx in CTXS:
        at_context(step, ctx)
        rec["timeline_ms"][str(ctx)] = [time_replays(step) for _ in range(3)]
        fam_bytes = token_bytes(cfg, ctx)
        def nbytes(lab, sh):
            f = family(lab)
            if sh: return G.bytes_of(sh[0], sh[1], 1, sh[2])
            if f == "gdn": return fam_bytes["gdn"] / len(cfg.linear_layers)
            if f == "attention": return fam_bytes["attention"] / len(cfg.full_layers)
            if f == "lm_head" and "lm_head" in lab: return fam_bytes["lm_head"]
            if f == "norms": return fam_bytes["norms"] / (2 * cfg.num_hidden_layers + 1)
            return 0
        toks, bad, n_tok = [], [], TOKENS
        for b in range(BATCHES * TOKENS):
            if sum(len(t) for t in toks) >= BATCHES * TOKENS: break
            R.timeline_buffer().zero_(); torch.cuda.synchronize()
            for _ in range(n_tok): step.graph.replay()
            recs = R.timeline_records()
            tk = tokens_of(recs, L)
            if tk is None:                       # launches share slots: one token a batch
                bad.append(dict(batch=b, tokens=n_tok, launches_seen=int(len(np.unique(recs[:, 0]))), expected=n_tok * L,
                                gridid_first=int(recs[0, 0]), gridid_last=int(recs[-1, 0])))
                n_tok = 1; continue
            toks.append(tk)
        print(f"ctx {ctx}: {sum(len(t) for t in toks)} tokens recorded, bad batches {bad} {el()}", flush=True)
        per = {k: [[] for _ in range(L)] for k in ("reach_first", "reach_last", "release_first", "release_last", "blocks_seen", "price", "sms",
                                                    "end_p10", "end_p50", "end_p90", "end_last")}
        periods, gid_steps = [], []
        if ctx == 1024 and toks and toks[0][0][0].shape[1] > 5:       # every block of a few launches of the first token
            t0 = toks[0][0][0][:, 4].min()
            rec["blocks_1k"] = {str(i): dict(label=order[i][0], reach=[round((x - t0) / 1e3, 3) for x in toks[0][0][i][:, 3].tolist()],
                                             release=[round((x - t0) / 1e3, 3) for x in toks[0][0][i][:, 4].tolist()],
                                             end=[round((x - t0) / 1e3, 3) if x else None for x in toks[0][0][i][:, 5].tolist()],
                                             sm=toks[0][0][i][:, 1].tolist()) for i in BLOCKS_OF}
        for tk in toks:
            for t, launches in enumerate(tk):
                T = launches[0][:, 4].min()
                nxt = tk[t + 1][0][:, 4].min() if t + 1 < len(tk) else None
                if nxt is not None: periods.append((nxt - T) / 1e3)
                for i, r in enumerate(launches):
                    per["reach_first"][i].append((r[:, 3].min() - T) / 1e3); per["reach_last"][i].append((r[:, 3].max() - T) / 1e3)
                    per["release_first"][i].append((r[:, 4].min() - T) / 1e3); per["release_last"][i].append((r[:, 4].max() - T) / 1e3)
                    per["blocks_seen"][i].append(len(r)); per["sms"][i].append(len(np.unique(r[:, 1])))
                    if r.shape[1] > 5 and (r[:, 5] > 0).all():      # the kernel records its blocks' ends (the GEMVs' v26 body)
                        e = (np.sort(r[:, 5]) - T) / 1e3
                        for q, k in ((0.1, "end_p10"), (0.5, "end_p50"), (0.9, "end_p90"), (1.0, "end_last")): per[k][i].append(float(e[min(len(e) - 1, int(q * len(e)))]))
                    end = launches[i + 1][:, 4].min() if i + 1 < L else nxt
                    if end is not None: per["price"][i].append((end - r[:, 4].min()) / 1e3)
                gid_steps.append(int(launches[-1][0, 0] - launches[0][0, 0]))
        med = lambda xs: statistics.median(xs) if xs else None
        mean = lambda xs: sum(xs) / len(xs) if xs else None
        rows = []
        for i, (lab, nb, sh) in enumerate(order):
            by = nbytes(lab, sh)
            rows.append(dict(i=i, label=lab, family=family(lab), shape=list(sh) if sh else None, blocks=nb,
                             **{k: med(v[i]) for k, v in per.items()}, price_mean=mean(per["price"][i]), bytes=by, floor_us=by / (bw * 1e12) * 1e6))
        fam = {}
        for r in rows:
            f = fam.setdefault(r["family"], dict(price_ms=0.0, floor_ms=0.0, launches=0))
            f["price_ms"] += (r["price_mean"] or 0) / 1e3; f["floor_ms"] += r["floor_us"] / 1e3; f["launches"] += 1
        rec["contexts"][str(ctx)] = dict(rows=rows, families=fam, period_ms=med(periods), periods_ms=periods, bad_batches=bad,
                                         tokens=sum(len(t) for t in toks), gridid_span=sorted(set(gid_steps)),
                                         blocks_short=[r["i"] for r in rows if r["blocks_seen"] is not None and r["blocks_seen"] < min(r["blocks"], R.TL_BLOCKS)])
        save()
        print(f"ctx {ctx}: period {med(periods)} ms; replay {rec['timeline_ms'][str(ctx)]}")
        print("family | price ms | floor ms | launches")
        for k, f in sorted(fam.items(), key=lambda kv: -kv[1]["price_ms"]): print(f"{k} | {f['price_ms']:.3f} | {f['floor_ms']:.3f} | {f['launches']}")
    # one layer of each kind, the middle of the model: its launches in order
    for ctx in CTXS:
        rows = rec["contexts"][str(ctx)]["rows"]
        print(f"\nctx {ctx}: launches 200..230: i | label | reach_first | release_first | release_last | price | floor us")
        for r in rows[200:231]:
            print(f"{r['i']} | {r['label'][-40:]} | {r['reach_first']:.2f} | {r['release_first']:.2f} | {r['release_last']:.2f} | "
                  f"{(r['price_mean'] or 0):.2f} | {r['floor_us']:.2f}")
    print(f"done {el()}; errors {len(rec['errors'])}")
    save()


if __name__ == "__main__":
    main_timeline() if TIMELINE else main_plain()
