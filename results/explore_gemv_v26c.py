"""Chapter 06: the engine's gate|up is v26 (the build gemv_v26b_h200 measured: its first loads after the grid wait, which
ptxas schedules first). This run sets it against v14 at the engine's configuration of before (2 warps, 4 row pairs, a 2-step
ring) and against v26 with its first loads before the wait (E = true: an always-true branch keeps them there), on the same
inputs and in the same run: bit identity; alone with PDL, interleaved, two rounds; the token of GEMVs with gate|up on each
(two rounds); the decode step against each (three repeats, greedy tokens compared first). Its first run
(gemv_v26c_first_h200.json) had the engine on E = true, which lost to both.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v26c.py OUT_DIR (gemv_v26c_h200.json). About a minute."""
import torch
from qwen_engine import gemv as G
import explore_util

N, K, EPI = 34816, 5120, 2
OTHERS = {"v14 (before)": (14, (2, 1, 4, 2, 1, 1, 1, 0)), "v26 with early loads": (26, (2, 1, 1, 2, 1, 8, 1, 0))}   # (SR, SK, RP, D, E, MINB, KS, XS)
kw = lambda v, c: dict(variant=v, KS=c[6], D=c[3], minb=c[5], v13opt=(c[1], c[2], bool(c[4]), bool(c[7])))


def main():
    rec, guard, el, save = explore_util.recorder(
        "gemv_v26c_h200", "The engine's gate|up (v26, its first loads after the grid wait) against v14 at the engine's configuration "
        "of before and v26 with early loads (E): bit identity on the same inputs, alone with PDL interleaved (two rounds), the token of "
        "GEMVs (two rounds) and the decode step (three repeats each, greedy tokens compared).", "explore_gemv_v26c.py",
        engine=G.engine_kwargs(N, K, EPI), others={k: [vc[0], list(vc[1])] for k, vc in OTHERS.items()}, identity=[], timings=[], token={},
        step=[], step_tokens={})
    bw = rec["bandwidth_tbps"]
    gen = torch.Generator(device="cuda").manual_seed(26)
    for label, (v, c) in OTHERS.items():
        r = guard(f"identity {label}", lambda: explore_util.versus_engine(gen, N, K, EPI, c[0], kw(v, c)))
        if r: r["versus"] = label; rec["identity"].append(r); print(f"identical to {label}: {r['identical']} {el()}", flush=True)
    nb = G.bytes_of(N, K, 1, EPI)
    for rep in range(2):
        e = guard("time engine", lambda: G.time_engine(N, K, EPI, gen))
        if e: rec["timings"].append(dict(plan="engine", rep=rep, us=e, frac=nb / (e * 1e-6) / (bw * 1e12)))
        for label, (v, c) in OTHERS.items():
            us = guard(f"time {label}", lambda: G.time_gemv(N, K, EPI, c[0], 2, gen, pdl=True, **kw(v, c)))
            if us: rec["timings"].append(dict(plan=label, rep=rep, us=us, frac=nb / (us * 1e-6) / (bw * 1e12)))
        print(f"rep {rep}: " + ", ".join(f"{t['plan']} {t['us']:.2f} us ({100 * t['frac']:.1f} %)" for t in rec["timings"] if t["rep"] == rep) + f" {el()}", flush=True)
    save()
    plan = {(n, k, e): G.engine_choice(n, k, e) for n, k, e, _ in G.MODEL_SHAPES}
    plan["lm_head"] = G.ENGINE_CHOICE["lm_head"]
    minb = {k: v for k, v in G.ENGINE_MINB.items() if k != (N, K, EPI)}
    for rnd in range(2):
        r = guard("token engine", lambda: G.token_graph(None, gen, bw, pdl=True))
        if r: rec["token"][f"engine {rnd}"] = r
        for label, (v, c) in OTHERS.items():
            p = dict(plan); p[(N, K, EPI)] = (v, c[0], 2, c[6], 4, c[3], 8, (c[1], c[2], bool(c[4]), bool(c[7])))
            r = guard(f"token {label}", lambda: G.token_graph(p, gen, bw, pdl=True, minb={**minb, **({(N, K, EPI): c[5]} if c[5] > 1 else {})}))
            if r: rec["token"][f"{label} {rnd}"] = r
        print(f"token round {rnd}: " + ", ".join(f"{k} {t['ms']:.3f} ms ({t['ratio']:.3f}x)" for k, t in rec["token"].items() if k.endswith(str(rnd))) + f" {el()}", flush=True)
    save()
    for label, (v, c) in OTHERS.items():
        guard(f"step {label}", lambda: explore_util.step_ab(rec, guard, el, save, explore_util.route_winners({(N, K): (v, c)}), label))
    save()
    print(f"done {el()}; errors {len(rec['errors'])}")


if __name__ == "__main__":
    main()
