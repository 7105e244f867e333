"""Chapter 06: gate|up's loss is arithmetic latency (gemv_dry_h200.json: its build without math reads 98 %, with it 88 %).
With the math in the loop, a warp's next loads wait behind its widening and mma, so a deeper ring should keep more bytes in
flight. The engine's gate|up is v14 with 2 warps of 4 row pairs and a 2-step ring (146 registers, 6 blocks an SM); this run
tries the same rows with a 3- and 4-step ring, on v14 and on v23 (the branch-free ring), and 4-warp blocks at 3 steps.
Each is checked bit for bit against the engine's kernel (the same sums in the same order: only when loads are issued
changes), then timed alone with PDL beside the engine, interleaved, twice.
Usage on the H200: PYTHONPATH=. python3 results/explore_gateup_ring.py OUT_DIR (gateup_ring_h200.json). About 90 s."""
import torch
from qwen_engine import gemv as G
import explore_util

SHAPE = (34816, 5120, 2)
CFGS = [(14, (2, 1, 4, 3, 1, 1, 1, 0)), (14, (2, 1, 4, 4, 1, 1, 1, 0)), (23, (2, 1, 4, 2, 1, 1, 1, 0)), (23, (2, 1, 4, 3, 1, 1, 1, 0)),
        (14, (4, 1, 4, 3, 1, 1, 1, 0))]        # (variant, (SR, SK, RP, D, EARLY, MINB, KS, XS))
kw = lambda v, c: dict(variant=v, KS=c[6], D=c[3], v13opt=(c[1], c[2], bool(c[4]), bool(c[7])), minb=c[5])
rec, guard, el, save = explore_util.recorder("gateup_ring_h200", "gate|up (34816 x 5120, SwiGLU) at deeper rings (v14 and v23, 3 and 4 steps) "
                                             "beside the engine's 2-step v14: bit identity with the engine, then alone with PDL, interleaved, twice.",
                                             "explore_gateup_ring.py", configs=[[v, list(c)] for v, c in CFGS], identity=[], timings=[])
bw = rec["bandwidth_tbps"]
gen = torch.Generator(device="cuda").manual_seed(3)
ok = []
for v, c in CFGS:
    r = guard(f"identity v{v} {c}", lambda: explore_util.versus_engine(gen, *SHAPE, c[0], kw(v, c)))
    if r: r.update(variant=v, cfg=list(c)); rec["identity"].append(r); print("identity", v, c, r["identical"], el(), flush=True)
    if r and r["identical"]: ok.append((v, c))
save()
N, K, epi = SHAPE
nb = G.bytes_of(N, K, 1, epi)
for rep in range(2):
    e = guard("time engine", lambda: G.time_engine(N, K, epi, gen))
    if e: rec["timings"].append(dict(cfg="engine", rep=rep, us=e, frac=nb / (e * 1e-6) / (bw * 1e12)))
    for v, c in ok:
        us = guard(f"time v{v} {c}", lambda: G.time_gemv(N, K, epi, c[0], 2, gen, pdl=True, **kw(v, c)))
        if us: rec["timings"].append(dict(variant=v, cfg=list(c), rep=rep, us=us, frac=nb / (us * 1e-6) / (bw * 1e12)))
    print(f"rep {rep}: " + ", ".join(f"{t['cfg'] if t['cfg'] == 'engine' else ('v%d' % t['variant'], tuple(t['cfg'][:4]))} {t['us']:.2f} us ({100 * t['frac']:.1f} %)"
                                     for t in rec["timings"] if t["rep"] == rep) + f" {el()}", flush=True)
    save()
print(f"done {el()}; errors {len(rec['errors'])}")
