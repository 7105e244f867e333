"""Chapter 06: the bf16 head with whole-row streams (lm_head_bf16_v3). The engine's head (v2, 8 warps) read 84-87 % of the
bandwidth in gemv_standing_h200.json against 98 % for a plain stream of its 2.54 GB; v2 reads each 64-wide step as
128-byte pieces of 16 rows, the order v13 found slower than whole rows for the fp8 GEMVs. v3 = v13's layout for bf16
(no widening: the pairs are permuted as the activation's). Each configuration of HEAD_V3_SWEEP: check_lm_head at M = 1
and M = 3 (logits within the criterion of the float64 product, argmax = the lowest id among the maxima of its own bf16
logits, row set = the same logits, forced tie -> the lower id); its logits against v2's on the same inputs (not the same
order of sums: counted, not required equal); timed with PDL interleaved with v2 (twice) beside a plain stream of the
same bytes; then the decode step (27B shape, synthetic, PDL graph) at 1K and 32K with the head v2 and with the best v3,
interleaved, twice, and their greedy tokens compared.
Usage on the H200: PYTHONPATH=. python3 results/explore_head_v3.py OUT_DIR (head_v3_h200.json). About 120 s.
(`explore` was made a function after this record, for explore_head_v4.py: the same steps.)"""
import sys, time
import torch
from qwen_engine import gemv as G
from qwen_engine.config import preset
from qwen_engine.step import DecodeStep, synthetic_engine_weights, run
from qwen_engine.decode_bench import _prompt
from qwen_engine.runtime import write_record
import explore_util

def explore(configs, kernels, name, what, command, out):
    "Check the head configurations `configs` (v3 or v4 tuples), time them with v2, then the step with the best; the record `name`."
    gen = torch.Generator(device="cuda").manual_seed(0)
    t_start = time.time()
    rec = dict(checks=[], versus_v2=[], timings=[], step=[], tokens={}, errors=[])
    guard = lambda what, fn: explore_util.guard(rec, what, fn)
    el = lambda: f"({time.time() - t_start:.0f} s)"
    save = lambda: write_record(name, what, command, rec, out_dir=out)
    bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
    guard("compile", lambda: G.get_kernel("gemv", kernels[0], together=kernels + G.ENGINE_KERNELS)); print(f"bandwidth {bw:.3f} TB/s; compiled {el()}", flush=True)
    V2 = G.ENGINE_CHOICE["lm_head"]
    ok = {}
    for cfg in configs:
        cs = [guard(f"check {cfg} M={M}", lambda: G.check_lm_head(gen, M=M, v3=cfg)) for M in (1, 3)]
        for M, c in zip((1, 3), cs):
            if c: rec["checks"].append(dict(c, cfg=list(cfg), M=M))
        W = (torch.randn(248320, 5120, generator=gen, device="cuda") * 0.02).to(torch.bfloat16)
        x = torch.randn(1, 5120, generator=gen, device="cuda").to(torch.bfloat16)
        a, la = G.lm_head(W, x, S=V2, logits=True)
        b, lb = G.lm_head(W, x, v3=cfg, logits=True)
        rec["versus_v2"].append(dict(cfg=list(cfg), same_argmax=torch.equal(a, b), logits_differing=int((la != lb).sum()), logits=la.numel()))
        del W
        ok[cfg] = all(c and c["argmax_ok"] and c["no_logits_same"] and c["rowset_logits_identical"] and c["rowset_argmax_ok"] and c["tie_lowest_id"] for c in cs)
        print(f"v3 {cfg}: {'ok' if ok[cfg] else 'FAILED'} {[c and round(c['max_ulp'], 1) for c in cs]} max ulp; vs v2 {rec['versus_v2'][-1]} {el()}", flush=True)
    save()
    nbytes = 248320 * 5120 * 2
    for rep in range(2):
        t = guard("v2", lambda: G.time_lm_head(V2, pdl=True))
        if t: rec["timings"].append(dict(head="v2", cfg=V2, rep=rep, us=t["us"], frac=t["tbps"] / bw))
        for cfg in configs:
            if not ok[cfg]: continue
            t = guard(f"v3 {cfg}", lambda: G.time_lm_head(V2, v3=cfg, pdl=True))
            if t: rec["timings"].append(dict(head="v3", cfg=list(cfg), rep=rep, us=t["us"], frac=t["tbps"] / bw))
        s = guard("stream", lambda: min(G.stream_probe(nbytes, blocks_per_sm=b, pdl=True, U=u) for b, u in ((2, 16), (4, 8), (4, 16))))
        if s: rec["timings"].append(dict(head="stream", rep=rep, us=s, frac=nbytes / (s * 1e-6) / (bw * 1e12)))
        print(f"rep {rep}: " + ", ".join(f"{r['head']} {r.get('cfg', '')} {r['us']:.1f} us ({100 * r['frac']:.1f} %)" for r in rec["timings"] if r["rep"] == rep) + f" {el()}", flush=True)
    save()
    v3s = [(sum(r["us"] for r in rec["timings"] if r.get("cfg") == list(c)), c) for c in configs if ok[c]]
    v2t = sum(r["us"] for r in rec["timings"] if r["head"] == "v2")
    best = min(v3s)[1] if v3s else None
    rec["best"] = list(best) if best else None
    if best and min(v3s)[0] < v2t:
        cfg = preset("qwen3_5_27b")
        EW, _ = synthetic_engine_weights(cfg, 0, "cuda")
        step = DecodeStep(cfg, EW, max_context=33 * 1024)
        prompt = _prompt(1024)
        for label, head in (("v2", V2), ("v3", best)):
            G.ENGINE_CHOICE["lm_head"] = head; step.graph = None
            rec["tokens"][label] = guard(f"tokens {label}", lambda: list(run(step, prompt[:16], 24)))
        for rep in range(2):
            for label, head in (("v2", V2), ("v3", best)):
                G.ENGINE_CHOICE["lm_head"] = head; step.graph = None
                r = guard(f"step {label}", lambda: explore_util.step_times(step, prompt))
                if r:
                    for ctx, ms in r.items(): rec["step"].append(dict(head=label, rep=rep, ctx=ctx, ms=ms))
                    print(f"rep {rep} step head {label}: 1K {r[1024]:.3f} ms, 32K {r[32768]:.3f} ms {el()}", flush=True)
        G.ENGINE_CHOICE["lm_head"] = V2
        print("tokens equal:", rec["tokens"].get("v2") == rec["tokens"].get("v3"))
    save()
    print(f"done {el()}; errors {len(rec['errors'])}")


if __name__ == "__main__":
    explore(G.HEAD_V3_SWEEP, G.HEAD_V3_KERNELS, "head_v3_h200",
        "The bf16 head with whole-row streams (lm_head_bf16_v3) checked, against v2's logits, timed with PDL interleaved with v2 beside a "
        "plain stream, and in the decode step.", "PYTHONPATH=. python3 results/explore_head_v3.py OUT_DIR", sys.argv[1] if len(sys.argv) > 1 else None)
