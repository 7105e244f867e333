"""Chapter 06, v22: the fp16 step. v14's DRY build (no math) streamed at 93-95 % where v14 reads 84-87 %
(gemv_v13_h200.json's dry timings); nvcc's machine code of v14's q|gate|k|v build spends 378 instructions on two steps,
172 of them widening fp8 to bf16 bit by bit. v22 converts the weights with the hardware's e4m3 -> fp16 instruction and
runs the mma in fp16, with the activation staged per block as fp16 tiles scaled by powers of two (gemv.cu, H16): 217
instructions for the same two steps. Not bit-identical to v14 (other roundings inside the mma), so: per shape and
configuration, the float64 check at M = 1 and M = 8 (outputs poisoned), rows of M = 8 = M = 1 and 20 repeats; the engine's
kernel checked the same way beside it; activations of extreme range (tiles 2^-40 .. 2^40, zero tiles, outliers) against
float64, v22 and the engine; then each shape timed alone with PDL interleaved with the engine's, twice; the token's GEMVs
(the engine's plan, v22's best per shape, the engine's again); with V22_STEP=1 (or time left) the decode step (27B shape,
synthetic, PDL graph) with v22 on every shape, interleaved with the engine's, three times (greedy tokens recorded: they
may differ, the roundings differ).
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v22.py OUT_DIR (gemv_v22_h200.json). About 300 s.
(The step's A/B moved into explore_util.step_ab after this record was made, shared with explore_gemv_v23.py: the same
steps, not re-run.)
(The interleaved timing loop moved into explore_util.time_vs_engine after this record was made: the same steps, not re-run.)
"""
import os, time
import torch
from qwen_engine import gemv as G
import explore_util

T0 = time.time()
gen = torch.Generator(device="cuda").manual_seed(0)
rec, guard, el, save = explore_util.recorder(
    "gemv_v22_h200", "v22 (v14 / v18 with fp16 weights by the hardware conversion and the activation as power-of-two-scaled fp16 "
    "tiles) checked against float64 beside the engine's kernel, extreme activations, timed alone with PDL interleaved with the "
    "engine's, the token's GEMVs, and the decode step.", "explore_gemv_v22.py",
    checks=[], identity=[], extreme=[], timings=[], regs={}, token={}, step=[], step_tokens={})
bw = rec["bandwidth_tbps"]


def kw(cfg):
    SR, SK, RP, D, E, MB, KS, XS = cfg
    return dict(variant=22, KS=KS, D=D, minb=MB, v13opt=(SK, RP, bool(E), False))


def extreme(N, K, epi, epi_cfg_kw, S):
    """x of extreme range: each 128-tile at 2^u, u uniform in [-40, 40]; every 7th tile zero; every 5th tile 1e-3 with one
    element 1e4. The float64 check of check_gemv (error in ulps; bad = over 1 ulp and over the accumulation bound)."""
    q, sc = G.synth_fp8(N, K, gen)
    x = torch.randn(1, K, generator=gen, device="cuda")
    tiles = K // 128
    mag = torch.exp2(torch.empty(tiles, device="cuda").uniform_(-40, 40, generator=gen))
    x = (x.view(tiles, 128) * mag[:, None])
    x[::7] = 0
    x[1::5] = 1e-3 * torch.randn(x[1::5].shape, generator=gen, device="cuda"); x[1::5, 3] = 1e4
    x = x.view(1, K).to(torch.bfloat16)
    ref = G.gemv_reference(q, sc, x)
    bound = (x.double().abs() @ G.dequantize_fp8(q, sc).double().abs().t()) * 2.0**-22
    out = {}
    for who, k in (("v22", epi_cfg_kw), ("engine", G.engine_kwargs(N, K, epi))):
        k = dict(k); s = k.pop("S", S); k.pop("RG", None)
        y = torch.full((1, N), float("nan"), dtype=torch.bfloat16, device="cuda")
        G.gemv(q, sc, x, 0, None, S=s, RG=1, out=y, **k)
        err = (y.double() - ref).abs(); ulps = err / G.bf16_ulp(ref)
        out[who] = dict(max_ulp=ulps.max().item(), over_1ulp=(ulps > 1).sum().item(), bad=((ulps > 1) & (err > bound)).sum().item(),
                        unwritten=torch.isnan(y).sum().item())
    return dict(N=N, K=K, **out)


def all_parts():
    for (N, K, epi), cfgs in G.V22_SWEEP.items():
        for cfg in cfgs:
            RG = 2 if epi == 2 else 1
            yield (N, K, epi, cfg, lambda: G.check_gemv(N, K, epi, 1, gen, cfg[0], RG, **kw(cfg)),
                   lambda: G.check_gemv(N, K, epi, 8, gen, cfg[0], RG, **kw(cfg)),
                   lambda: G.check_multirow_identity(N, K, epi, gen, cfg[0], RG, **kw(cfg)))


names = explore_util.launched_names(lambda: [(a(), b(), c()) for *_, a, b, c in all_parts()])
guard("compile", lambda: G.get_kernel("gemv", names[0], together=names + G.ENGINE_KERNELS)); print(f"bandwidth {bw:.3f} TB/s; compiled {len(names)} {el()}", flush=True)
passed = {}
for N, K, epi, cfg, c1, c8, ident in all_parts():
    a, b, idn = guard(f"check {N}x{K} {cfg}", c1), guard(f"check M8 {N}x{K} {cfg}", c8), guard(f"identity {N}x{K} {cfg}", ident)
    for c in (a, b):
        if c: c["ok"] = G.check_ok(c); c["cfg"] = list(cfg); c.pop("v13opt", None); rec["checks"].append(c)
    if idn: idn["cfg"] = list(cfg); idn.pop("v13opt", None); rec["identity"].append(idn)
    passed[(N, K, epi, cfg)] = bool(a and a["ok"] and b and b["ok"] and idn and idn["multirow_bit_identical"] and idn["repeat_bit_identical"])
    name = G._v22_name(epi, cfg)
    r = guard(f"regs {name}", lambda: G.get_kernel("gemv", name).num_regs)
    if r: rec["regs"][name] = r
    print(f"{N}x{K} {cfg}: {'ok' if passed[(N, K, epi, cfg)] else 'FAILED'} max ulp {a and round(a['max_ulp'], 2)} / M8 {b and round(b['max_ulp'], 2)}; regs {r} {el()}", flush=True)
for N, K, epi, _ in G.MODEL_SHAPES:      # the engine's kernel through the same check, for comparison
    for M in (1, 8):
        k = G.engine_kwargs(N, K, epi); S, RG = k.pop("S"), k.pop("RG")
        c = guard(f"engine check {N}x{K} M{M}", lambda: G.check_gemv(N, K, epi, M, gen, S, RG, **k))
        if c: c["ok"] = G.check_ok(c); c["cfg"] = "engine"; c.pop("v13opt", None); rec["checks"].append(c)
        print(f"engine {N}x{K} M{M}: max ulp {c and round(c['max_ulp'], 2)} over 1 ulp {c and c['over_1ulp']} bad {c and c['bad']}", flush=True)
for N, K, epi, _ in G.MODEL_SHAPES:
    cfg = G.V22_SWEEP[(N, K, epi)][0]
    k = dict(kw(cfg), S=cfg[0])
    e = guard(f"extreme {N}x{K}", lambda: extreme(N, K, epi, k, cfg[0]))
    if e: rec["extreme"].append(e); print(f"extreme {N}x{K}: {e}", flush=True)
save()

explore_util.time_vs_engine(rec, guard, el, gen, bw, G.V22_SWEEP, lambda N, K, epi, cfg: passed[(N, K, epi, cfg)], kw)
save()

best = {}
for (N, K, epi), cfgs in G.V22_SWEEP.items():
    tot = {}
    for cfg in cfgs:
        ts = [t["us"] for t in rec["timings"] if (t["N"], t["K"]) == (N, K) and t["cfg"] == list(cfg)]
        if len(ts) == 2: tot[cfg] = sum(ts)
    if tot: best[(N, K, epi)] = min(tot, key=tot.get)
rec["best"] = {f"{k[0]}x{k[1]}": list(v) for k, v in best.items()}
print("best:", rec["best"], flush=True)


def plan():
    ch = {k: G.engine_choice(*k) for N, K, epi, _ in G.MODEL_SHAPES for k in [(N, K, epi)]}
    for k, cfg in best.items():
        SR, SK, RP, D, E, MB, KS, XS = cfg
        ch[k] = (22, SR, 2 if k[2] == 2 else 1, KS, 4, D, 8, (SK, RP, bool(E), False))
    ch["lm_head"] = G.ENGINE_CHOICE["lm_head"]
    return ch


if len(best) == len(G.V22_SWEEP):
    for label, ch in (("engine", None), ("v22", plan()), ("engine again", None), ("v22 again", plan())):
        t = guard(f"token {label}", lambda: G.token_graph(ch, gen, bw, pdl=True))
        if t: rec["token"][label] = t; print(f"token {label}: {t['ms']:.3f} ms, {t['ratio']:.3f}x the floor {el()}", flush=True)
    save()

if len(best) == len(G.V22_SWEEP) and (os.environ.get("V22_STEP") or time.time() - T0 < 330):
    engine_kwargs = G.engine_kwargs
    def use(step, v22):
        "The engine's launcher with v22's best configuration on every shape (v22 = 0: the engine's)."
        def k(N, K, epi):
            e = engine_kwargs(N, K, epi)
            if not v22 or (N, K, epi) not in best: return e
            SR, SK, RP, D, E, MB, KS, XS = best[(N, K, epi)]
            return dict(S=SR, RG=2 if epi == 2 else 1, variant=22, KS=KS, D=D, minb=MB, v13opt=(SK, RP, bool(E), False))
        G.engine_kwargs = k
    explore_util.step_ab(rec, guard, el, save, use, "v22", require_equal=False)   # (v22's roundings differ: its tokens may)
    G.engine_kwargs = engine_kwargs

print(f"\n{'shape':<14} {'engine %':>9} {'v22 best %':>11}  cfg")
for (N, K, epi), cfgs in G.V22_SWEEP.items():
    e = [t["frac"] for t in rec["timings"] if (t["N"], t["K"]) == (N, K) and t["cfg"] == "engine"]
    b = [t["frac"] for t in rec["timings"] if (t["N"], t["K"]) == (N, K) and best.get((N, K, epi)) and t["cfg"] == list(best[(N, K, epi)])]
    if e and b: print(f"{N}x{K:<8} {100 * sum(e) / len(e):9.1f} {100 * sum(b) / len(b):11.1f}  {best[(N, K, epi)][:4]}")
print(f"done {el()}; errors {len(rec['errors'])}")
save()
