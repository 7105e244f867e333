"""Chapter 06, v14's waves (prepared; not yet run). One configuration, (SR, SK, RP, D, EARLY, MINB, KS, XS) =
(4, 1, 2, 2, 1, 1, 1, 1), measured 84.6 % on q|gate|k|v but 69.7 % on GDN's qkv|z in the same run (gemv_v14_h200.json).
Its 72 registers (nvcc -Xptxas -v) leave room for 7 blocks of 128 threads per SM, 924 on the GPU: q|gate|k|v's 896 blocks
are one wave, qkv|z's 1,024 are 1.11 (a second wave of 100 blocks streams with most SMs idle). This run asks the compiler
for 8 or 9 resident blocks (MINB: 64 or 56 registers; nvcc reports no spill at 8 on the plain and 8 bytes on the SwiGLU
build, 96 bytes at 9) so that qkv|z (and, at other fractions, gate|up's 2,176 blocks) fit their waves differently.
Each configuration: float64 check at M = 1 (outputs poisoned), M = 8 rows = M = 1 and 20 repeats; its registers as the
GPU reports them and the waves they imply; timed with PDL interleaved with the engine's configuration, twice; then the
token's GEMVs with each shape's winner (if any).
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v14c.py OUT_DIR (gemv_v14c_h200.json). About 120 s."""
import sys, time
import torch
from qwen_engine import gemv as G
from qwen_engine.runtime import write_record
import explore_util

SWEEP = {(16384, 5120, 0): ((4, 1, 2, 2, 1, 8, 1, 1), (4, 1, 1, 3, 1, 8, 1, 1)),
         (34816, 5120, 2): ((4, 1, 2, 2, 1, 7, 1, 1), (4, 1, 2, 2, 1, 8, 1, 1), (4, 1, 2, 2, 1, 9, 1, 1)),
         (14336, 5120, 0): ((4, 1, 2, 2, 1, 8, 1, 1),)}          # the control: 896 blocks fit one wave already at 7 a SM
out = sys.argv[1] if len(sys.argv) > 1 else None
gen = torch.Generator(device="cuda").manual_seed(0)
t_start = time.time()
rec = dict(checks=[], identity=[], timings=[], regs={}, errors=[])
guard = lambda what, fn: explore_util.guard(rec, what, fn)
el = lambda: f"({time.time() - t_start:.0f} s)"
save = lambda: write_record("gemv_v14c_h200", "v14 with occupancy bounds (MINB) that change how many waves the large shapes' grids take: checked, "
                            "registers and waves, timed with PDL interleaved with the engine's configuration, and the token's GEMVs.",
                            "PYTHONPATH=. python3 results/explore_gemv_v14c.py OUT_DIR", rec, out_dir=out)
bw = G.bandwidth_now(); rec["bandwidth_tbps"] = bw


def every_check():
    for (N, K, epi), cfgs in SWEEP.items():
        for cfg in cfgs:
            kw = explore_util.v14_kwargs(cfg)
            yield N, K, epi, cfg, (lambda: G.check_gemv(N, K, epi, 1, gen, cfg[0], 2 if epi == 2 else 1, **kw)), \
                (lambda: G.check_multirow_identity(N, K, epi, gen, cfg[0], 2 if epi == 2 else 1, **kw))


names = explore_util.launched_names(lambda: [(c(), i()) for *_, c, i in every_check()])
guard("compile", lambda: G.get_kernel("gemv", names[0], together=names + G.ENGINE_KERNELS)); print(f"bandwidth {bw:.3f} TB/s; compiled {el()}")
sms = torch.cuda.get_device_properties(0).multi_processor_count


def waves(N, K, epi, cfg, regs):
    "Blocks of the grid over what the registers let reside (128 threads a warp set, 65,536 registers an SM, in 8-register steps)."
    SR, SK, RP = cfg[:3]
    blocks = G.v13_grid(N, K, epi, SR, RP)[0] * cfg[6]
    per_sm = min(32, 65536 // (32 * SR * SK * (-(-regs // 8) * 8)))
    return dict(blocks=blocks, per_sm=per_sm, waves=blocks / (per_sm * sms))


passed = {}
for N, K, epi, cfg, check, ident in every_check():
    c, idn = guard(f"check {N}x{K} {cfg}", check), guard(f"identity {N}x{K} {cfg}", ident)
    if c: c["ok"] = G.check_ok(c); c["cfg"] = cfg; c.pop("v13opt", None); rec["checks"].append(c)
    if idn: idn["cfg"] = cfg; idn.pop("v13opt", None); rec["identity"].append(idn)
    passed[(N, K, epi, cfg)] = bool(c and c["ok"] and idn and idn["multirow_bit_identical"] and idn["repeat_bit_identical"])
    name = G._v14_name(epi, cfg)
    r = guard(f"regs {name}", lambda: G.get_kernel("gemv", name).num_regs)
    if r: rec["regs"][name] = dict(regs=r, **waves(N, K, epi, cfg, r))
    print(f"{N}x{K} {cfg}: {'ok' if passed[(N, K, epi, cfg)] else 'FAILED'}; {rec['regs'].get(name)} {el()}")
for (N, K, epi) in SWEEP:
    ek = G.engine_kwargs(N, K, epi)
    ename = G._v14_name(epi, (ek["S"], *ek["v13opt"][:2], ek["D"], ek["v13opt"][2], 1, ek["KS"], ek["v13opt"][3]))
    r = guard(f"regs {ename}", lambda: G.get_kernel("gemv", ename).num_regs)
    if r: rec["regs"][ename] = dict(regs=r, engine=True, **waves(N, K, epi, (ek["S"], *ek["v13opt"][:2]) + (0, 0, 0, ek["KS"]), r))
save()
nbytes = {k: G.bytes_of(*k[:2], 1, k[2]) for k in SWEEP}
for rep in range(2):
    for (N, K, epi), cfgs in SWEEP.items():
        e = guard("time engine", lambda: G.time_engine(N, K, epi, gen))
        if e: rec["timings"].append(dict(N=N, K=K, epi=epi, cfg="engine", rep=rep, us=e, frac=nbytes[(N, K, epi)] / (e * 1e-6) / (bw * 1e12)))
        for cfg in cfgs:
            if not passed[(N, K, epi, cfg)]: continue
            us = guard(f"time {cfg}", lambda: G.time_gemv(N, K, epi, cfg[0], 2 if epi == 2 else 1, gen, pdl=True, **explore_util.v14_kwargs(cfg)))
            if us: rec["timings"].append(dict(N=N, K=K, epi=epi, cfg=list(cfg), rep=rep, us=us, frac=nbytes[(N, K, epi)] / (us * 1e-6) / (bw * 1e12)))
        print(f"rep {rep} {N}x{K}: " + ", ".join(f"{t['cfg']} {t['us']:.2f} us" for t in rec["timings"] if (t["N"], t["K"], t["rep"]) == (N, K, rep)) + f" {el()}")
save()
# a configuration wins a shape if it beat the engine's in both repeats
wins = {}
for (N, K, epi), cfgs in SWEEP.items():
    eng = {t["rep"]: t["us"] for t in rec["timings"] if (t["N"], t["K"]) == (N, K) and t["cfg"] == "engine"}
    for cfg in cfgs:
        mine = {t["rep"]: t["us"] for t in rec["timings"] if (t["N"], t["K"]) == (N, K) and t["cfg"] == list(cfg)}
        if len(mine) == len(eng) == 2 and all(mine[r] < eng[r] for r in (0, 1)):
            if (N, K, epi) not in wins or sum(mine.values()) < wins[(N, K, epi)][1]: wins[(N, K, epi)] = (cfg, sum(mine.values()))
rec["wins"] = {f"{k[0]}x{k[1]}:{k[2]}": list(v[0]) for k, v in wins.items()}
rec["token"] = {}
if wins:
    ch = {k: G.engine_choice(*k) for N, K, epi, _ in G.MODEL_SHAPES for k in [(N, K, epi)]}
    mb = {}
    for k, (cfg, _) in wins.items():
        SR, SK, RP, D, E, MB, KS, XS = cfg
        ch[k] = (14, SR, 2 if k[2] == 2 else 1, KS, 4, D, 8, (SK, RP, bool(E), bool(XS))); mb[k] = MB
    ch["lm_head"] = G.ENGINE_CHOICE["lm_head"]
    for label, c, m in (("engine", None, None), ("with wins", ch, mb), ("engine again", None, None), ("with wins again", ch, mb)):
        t = guard(f"token {label}", lambda: G.token_graph(c, gen, bw, pdl=True, minb=m))
        if t: rec["token"][label] = t; print(f"token {label}: {t['ms']:.3f} ms, ratio {t['ratio']:.3f} {el()}")
print(f"done {el()}; errors {len(rec['errors'])}; wins {rec['wins']}")
save()
