"""The body of chapter 06's split-shape explorations (results/explore_gemv_v16.py, explore_gemv_v18.py): a new variant of
the two split shapes' kernel (out_proj 5120 x 6144, down 5120 x 17408, the engine's configuration CFG) checked like every
variant (float64 definition at M = 1 with poisoned outputs, M = 8 rows bit-identical to M = 1, 20 repeats, bit-identical to
v14 on the same inputs); timed alone with PDL, interleaved with the variants it is compared with, twice; and the token's
GEMVs with the new variant swapped into out_proj, down and both, with and without PDL, the plan of the time first and last."""
import time
import torch
from qwen_engine import gemv as G
from qwen_engine.runtime import write_record
import explore_util

CFG = (4, 1, 2, 3, 1, 1, 2, 1)              # the engine's configuration of both split shapes (ENGINE_CHOICE / ENGINE_V14)
SPLIT = [(5120, 6144, 1), (5120, 17408, 1)]


def versus_v14(N, K, epi, variant, gen):
    "The same inputs through the variant and through v14 at the engine's configuration: outputs bit-identical (M = 1, epilogue included)."
    q, sc = G.synth_fp8(N, K, gen)
    x = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
    res = torch.randn(1, N, generator=gen, device="cuda").to(torch.bfloat16) if epi == 1 else None
    y14 = G.gemv(q, sc, x, epi, res, S=CFG[0], RG=1, **explore_util.v14_kwargs(CFG, variant=14))
    y = torch.full_like(y14, float("nan"))
    G.gemv(q, sc, x, epi, res, S=CFG[0], RG=1, out=y, **explore_util.v14_kwargs(CFG, variant=variant))
    return dict(N=N, K=K, epi=epi, variant=variant, cfg=list(CFG), identical=torch.equal(y14, y), mismatches=(y14 != y).sum().item())


def run(new: int, compiled: tuple, alone: tuple, plan_variant: int, runs, name: str, what: str, command: str, out=None):
    """Check variant `new` (its kernels: `compiled`, one NVRTC pass), time the variants `alone` (interleaved, twice) and the
    token's GEMVs for each (label, {shape: variant}, pdl) of `runs(ok, O, Dn)`, the split shapes otherwise at `plan_variant`."""
    gen = torch.Generator(device="cuda").manual_seed(0)
    t_start = time.time()
    rec = dict(checks=[], identity=[], versus_v14=[], timings=[], errors=[])
    guard = lambda what, fn: explore_util.guard(rec, what, fn)
    el = lambda: f"({time.time() - t_start:.0f} s)"
    save = lambda: write_record(name, what, command, rec, out_dir=out)
    bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
    guard("compile", lambda: G.get_kernel("gemv", compiled[0], together=compiled)); print(f"bandwidth {bw:.3f} TB/s; compiled {el()}")
    ok = {}
    for N, K, epi in SPLIT:
        kw = explore_util.v14_kwargs(CFG, variant=new)
        c = guard(f"check v{new} {N}x{K}", lambda: G.check_gemv(N, K, epi, 1, gen, CFG[0], 1, **kw))
        idn = guard(f"identity v{new} {N}x{K}", lambda: G.check_multirow_identity(N, K, epi, gen, CFG[0], 1, **kw))
        v14 = guard(f"versus v14 {N}x{K}", lambda: versus_v14(N, K, epi, new, gen))
        if c: c["ok"] = G.check_ok(c); c["cfg"] = CFG; c.pop("v13opt", None); rec["checks"].append(c)
        if idn: idn["cfg"] = CFG; idn.pop("v13opt", None); rec["identity"].append(idn)
        if v14: rec["versus_v14"].append(v14)
        ok[(N, K, epi)] = bool(c and c["ok"] and idn and idn["multirow_bit_identical"] and idn["repeat_bit_identical"] and v14 and v14["identical"])
        print(f"{N}x{K} v{new}: {'ok (= v14)' if ok[(N, K, epi)] else 'FAILED'} {el()}")
        nbytes = G.bytes_of(N, K, 1, epi)
        for rep in range(2):
            for v in alone:
                if v == new and not ok[(N, K, epi)]: continue
                us = guard(f"time v{v} {N}x{K}", lambda: G.time_gemv(N, K, epi, CFG[0], 1, gen, pdl=True, **explore_util.v14_kwargs(CFG, variant=v)))
                if us: rec["timings"].append(dict(N=N, K=K, epi=epi, variant=v, rep=rep, cfg=list(CFG), pdl=True, us=us, frac=nbytes / (us * 1e-6) / (bw * 1e12)))
                print(f"{N}x{K} v{v} rep {rep}: {us and round(us, 2)} us {us and round(100 * nbytes / (us * 1e-6) / (bw * 1e12), 1)} % {el()}")
    save()

    def plan(swap: dict):
        ch = {k: G.engine_choice(*k) for N, K, epi, _ in G.MODEL_SHAPES for k in [(N, K, epi)]}
        for k in SPLIT: ch[k] = (plan_variant,) + ch[k][1:]      # "engine": the plan when the record was made
        for k, v in swap.items(): ch[k] = (v,) + ch[k][1:]
        ch["lm_head"] = G.ENGINE_CHOICE["lm_head"]
        return ch

    rec["token"] = {}
    for label, swap, pdl in runs(all(ok.values()), *SPLIT):
        t = guard(f"token {label}", lambda: G.token_graph(plan(swap), gen, bw, pdl=pdl, minb={}))
        if t: rec["token"][label] = dict(t, swap={f"{k[0]}x{k[1]}": v for k, v in swap.items()}); print(f"token {label}: {t['ms']:.3f} ms, ratio {t['ratio']:.3f} {el()}")
    print(f"done {el()}; errors {len(rec['errors'])}")
    save()
