"""Chapter 06, v18: the split of 2 met by one 64-bit atomic exchange per output (no fence, no counter, no cluster). v15's
cluster showed how much the split's end cost alone (gemv_v15_h200.json) but lost the PDL token; v16's lean handshake won
a little (gemv_v16_h200.json, the engine's since). This run: v18 checked like every variant (float64 definition, M = 8 rows
= M = 1, 20 repeats, bit-identical to v14 on the same inputs); v14, v16 and v18 timed alone with PDL, interleaved, twice;
the token's GEMVs with v18 on out_proj, on down, on both, with and without PDL, the engine's plan (v16) first and last.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v18.py OUT_DIR (gemv_v18_h200.json). About 200 s."""
import sys, time
import torch
from qwen_engine import gemv as G
import explore_util
from qwen_engine.runtime import write_record

out = sys.argv[1] if len(sys.argv) > 1 else None
gen = torch.Generator(device="cuda").manual_seed(0)
t_start = time.time()
rec = dict(checks=[], identity=[], versus_v14=[], timings=[], errors=[])
guard = lambda what, fn: explore_util.guard(rec, what, fn)
el = lambda: f"({time.time() - t_start:.0f} s)"
save = lambda: write_record("gemv_v18_h200", "v18 (v14 with the split of 2 met by one atomic exchange per output) checked; v14, v16 and v18 timed "
                            "alone (PDL) on the two split shapes; the token's GEMVs with v18 on each split shape and both, with and without PDL.",
                            "PYTHONPATH=. python3 results/explore_gemv_v18.py OUT_DIR", rec, out_dir=out)
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw
CFG = (4, 1, 2, 3, 1, 1, 2, 1)              # the engine's configuration of both split shapes (ENGINE_CHOICE / ENGINE_V14)
SPLIT = [(5120, 6144, 1), (5120, 17408, 1)]
names = G.V18_KERNELS
guard("compile", lambda: G.get_kernel("gemv", names[0], together=names)); print(f"bandwidth {bw:.3f} TB/s; compiled {el()}")


def versus_v14(N, K, epi, variant):
    "The same inputs through the variant and through the engine's v14 launch: outputs bit-identical (M = 1, epilogue included)."
    q, sc = G.synth_fp8(N, K, gen)
    x = torch.randn(1, K, generator=gen, device="cuda").to(torch.bfloat16)
    res = torch.randn(1, N, generator=gen, device="cuda").to(torch.bfloat16) if epi == 1 else None
    y14 = G.gemv(q, sc, x, epi, res, **dict(G.engine_kwargs(N, K, epi), variant=14))     # v14: the engine's before v16
    y = torch.full_like(y14, float("nan"))
    G.gemv(q, sc, x, epi, res, S=CFG[0], RG=1, out=y, **explore_util.v14_kwargs(CFG, variant=variant))
    return dict(N=N, K=K, epi=epi, variant=variant, cfg=list(CFG), identical=torch.equal(y14, y), mismatches=(y14 != y).sum().item())


ok = {}
for N, K, epi in SPLIT:
    kw = explore_util.v14_kwargs(CFG, variant=18)
    c = guard(f"check v18 {N}x{K}", lambda: G.check_gemv(N, K, epi, 1, gen, CFG[0], 1, **kw))
    idn = guard(f"identity v18 {N}x{K}", lambda: G.check_multirow_identity(N, K, epi, gen, CFG[0], 1, **kw))
    v14 = guard(f"versus v14 {N}x{K}", lambda: versus_v14(N, K, epi, 18))
    if c: c["ok"] = G.check_ok(c); c["cfg"] = CFG; c.pop("v13opt", None); rec["checks"].append(c)
    if idn: idn["cfg"] = CFG; idn.pop("v13opt", None); rec["identity"].append(idn)
    if v14: rec["versus_v14"].append(v14)
    ok[(N, K, epi)] = bool(c and c["ok"] and idn and idn["multirow_bit_identical"] and idn["repeat_bit_identical"] and v14 and v14["identical"])
    print(f"{N}x{K} v18: {'ok (= v14)' if ok[(N, K, epi)] else 'FAILED'} {el()}")
    nbytes = G.bytes_of(N, K, 1, epi)
    for rep in range(2):                     # interleaved, twice: v14, v16 (the engine's), v18
        for v in (14, 16, 18):
            if v == 18 and not ok[(N, K, epi)]: continue
            us = guard(f"time v{v} {N}x{K}", lambda: G.time_gemv(N, K, epi, CFG[0], 1, gen, pdl=True, **explore_util.v14_kwargs(CFG, variant=v)))
            if us: rec["timings"].append(dict(N=N, K=K, epi=epi, variant=v, rep=rep, cfg=list(CFG), pdl=True, us=us, frac=nbytes / (us * 1e-6) / (bw * 1e12)))
            print(f"{N}x{K} v{v} rep {rep}: {us and round(us, 2)} us {us and round(100 * nbytes / (us * 1e-6) / (bw * 1e12), 1)} % {el()}")
save()


def plan(swap: dict):
    "The engine's token plan with the split shapes in `swap` launched as the given variant."
    ch = {k: G.engine_choice(*k) for N, K, epi, _ in G.MODEL_SHAPES for k in [(N, K, epi)]}
    for k in SPLIT: ch[k] = (16,) + ch[k][1:]            # "engine": the plan when this record was made (v16 on the split shapes)
    for k, v in swap.items(): ch[k] = (v,) + ch[k][1:]
    ch["lm_head"] = G.ENGINE_CHOICE["lm_head"]
    return ch


O, Dn = SPLIT
runs = [("engine", {}, True)]
if all(ok.values()): runs += [("v18 both", {O: 18, Dn: 18}, True), ("v18 out_proj", {O: 18}, True), ("v18 down", {Dn: 18}, True),
                              ("engine no PDL", {}, False), ("v18 both no PDL", {O: 18, Dn: 18}, False), ("v18 both again", {O: 18, Dn: 18}, True)]
runs += [("engine again", {}, True)]
rec["token"] = {}
for name, swap, pdl in runs:
    t = guard(f"token {name}", lambda: G.token_graph(plan(swap), gen, bw, pdl=pdl, minb={}))
    if t: rec["token"][name] = dict(t, swap={f"{k[0]}x{k[1]}": v for k, v in swap.items()}); print(f"token {name}: {t['ms']:.3f} ms, ratio {t['ratio']:.3f} {el()}")
print(f"done {el()}; errors {len(rec['errors'])}")
save()
