"""Chapter 06, v22 without its conversion: where v22's time goes. v22 (fp16 step) lost to v14 on the large shapes
(gemv_v22_h200.json) while its step has ~40 % fewer instructions. Its RAW build (timing only: the bf16 activation copied
as v14's XS copies it, tile scales 1, so the sums are wrong) times the fp16 step without the per-block conversion, as if
the kernel before had written the fp16 tiles. Per shape, interleaved, twice, PDL: the engine's kernel, v22 and v22 RAW
at each configuration of V22_RAW.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v22raw.py OUT_DIR (gemv_v22_raw_h200.json). About 40 s."""
import torch
from qwen_engine import gemv as G
import explore_util

gen = torch.Generator(device="cuda").manual_seed(0)
rec, guard, el, save = explore_util.recorder(
    "gemv_v22_raw_h200", "v22 and its RAW build (no activation conversion; timing only) against the engine's kernel, per shape, PDL, "
    "interleaved, twice.", "explore_gemv_v22raw.py", timings=[])
bw = rec["bandwidth_tbps"]
V22_RAW = {(14336, 5120, 0): ((4, 1, 2, 2, 1, 7, 1, 0), (4, 1, 4, 2, 1, 1, 1, 0)), (16384, 5120, 0): ((4, 1, 2, 2, 1, 7, 1, 0), (4, 1, 4, 2, 1, 1, 1, 0)),
           (34816, 5120, 2): ((4, 1, 2, 2, 1, 7, 1, 0), (4, 1, 4, 2, 1, 1, 1, 0)), (5120, 6144, 1): ((4, 1, 2, 3, 1, 1, 2, 0),),
           (5120, 17408, 1): ((4, 1, 2, 3, 1, 1, 2, 0),)}
rec["sweep"] = {f"{k[0]}x{k[1]}": [list(c) for c in v] for k, v in V22_RAW.items()}
kw = lambda cfg: dict(variant=22, KS=cfg[6], D=cfg[3], minb=cfg[5], v13opt=(cfg[1], cfg[2], bool(cfg[4]), False))
names = explore_util.launched_names(lambda: [G.gemv(*G.synth_fp8(N, K, gen), torch.zeros(1, K, dtype=torch.bfloat16, device="cuda"), epi,
                                                    torch.zeros(1, N, dtype=torch.bfloat16, device="cuda") if epi == 1 else None,
                                                    S=c[0], RG=2 if epi == 2 else 1, dry=dry, **kw(c))
                                             for (N, K, epi), cs in V22_RAW.items() for c in cs for dry in (False, True)])
guard("compile", lambda: G.get_kernel("gemv", names[0], together=names + G.ENGINE_KERNELS)); print(f"bandwidth {bw:.3f} TB/s; compiled {len(names)} {el()}", flush=True)
for rep in range(2):
    for (N, K, epi), cfgs in V22_RAW.items():
        nb = G.bytes_of(N, K, 1, epi)
        e = guard("engine", lambda: G.time_engine(N, K, epi, gen))
        if e: rec["timings"].append(dict(N=N, K=K, epi=epi, cfg="engine", raw=False, rep=rep, us=e, frac=nb / (e * 1e-6) / (bw * 1e12)))
        for cfg in cfgs:
            for raw in (False, True):
                us = guard(f"{cfg} {raw}", lambda: G.time_gemv(N, K, epi, cfg[0], 2 if epi == 2 else 1, gen, pdl=True, dry=raw, **kw(cfg)))
                if us: rec["timings"].append(dict(N=N, K=K, epi=epi, cfg=list(cfg), raw=raw, rep=rep, us=us, frac=nb / (us * 1e-6) / (bw * 1e12)))
        print(f"rep {rep} {N}x{K}: " + ", ".join(f"{'E' if t['cfg'] == 'engine' else t['cfg'][:6]}{' RAW' if t['raw'] else ''} {t['us']:.2f} ({100 * t['frac']:.1f} %)"
                                                  for t in rec["timings"] if (t["N"], t["K"], t["rep"]) == (N, K, rep)) + f" {el()}", flush=True)
    save()
print(f"done {el()}; errors {len(rec['errors'])}")
