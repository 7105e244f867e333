"""Chapter 07, partitions at short contexts. The engine's attention (v18) splits every KV group's context into P = 66
partitions (the P sweep at 32K chose it), so at 1K a partition is 32 keys (16 rounded up), 32 of a group's 66 blocks
have any work, and the step pays two group barriers and a merge of 66 partials for 4 MiB of keys and values: 16.8 us
against SDPA's 10.0 (attention_h200.json). Does a coarser split pay at short contexts? v18 itself takes P as a launch
parameter (the grid is P x 4 blocks), so this run needs no new kernel:
1. v18 at P in {4, 6, 8, 11, 16, 22, 33, 66}: within the reference's criterion at 1K and 4K (check_context: kernel,
   GPU reference and emulation against the float64 definition), then timed alone with PDL (time_ours) at 1K..16K,
   beside SDPA.
2. the 27B-shape decode step (PDL graph) with the step's attention scratch at P = 66, 16 and 8: ms a token at 1K and
   32K, interleaved three times; tokens recorded, not required equal (another P is another fp32 order).
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_attention_pshort.py OUT_DIR   (about 3 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import explore_util
from qwen_engine import attention as A

PS = (4, 6, 8, 11, 16, 22, 33, 66)
NS = (1024, 2048, 4096, 8192, 16384)
CHECK_NS = (1024, 4096)
NAME, SCRIPT = "attention_pshort_h200", "explore_attention_pshort.py"
WHAT = ("decode attention v18 at P = 4..66 partitions a KV group: the reference's criterion at 1K and 4K, time alone with "
        "PDL at 1K..16K beside SDPA (v18 takes P as its grid; no new kernel)")


def main(out):
    rec, guard, el, save = explore_util.recorder(NAME, WHAT, SCRIPT, out=out, variant=A.VARIANT, checks=[], times=[], sdpa=[])
    cfg, dev, gen, _, rope, pool = A.bench_pool("cuda")
    scr = {P: A.attention_scratch(cfg, 1, dev, P=P, max_ctx=max(NS) + 512) for P in PS}
    for n in CHECK_NS:
        for P in PS:
            t = A.PageTable(pool, 520, dev)
            try:
                r = guard(f"check n={n} P={P}", lambda: A.check_context(cfg, pool, t, n, 1, gen, rope, scr[P]))
            finally:
                t.release()
            if r:
                rec["checks"].append(r)
                print(f"check n={n} P={P}: kernel {r['ulp_kernel']:.3f} ulp, reference {r['ulp_reference']:.3f}, "
                      f"emulation vs kernel mismatches {r['kernel_vs_emulation_mismatches']} {el()}", flush=True)
    save()
    for rep in range(2):
        for n in NS:
            for P in PS:
                r = guard(f"time n={n} P={P}", lambda: A.time_ours(cfg, pool, n, scr[P], rope, gen, pdl=True))
                if r: r["rep"] = rep; rec["times"].append(r)
            if rep == 0:
                s = guard(f"sdpa n={n}", lambda: A.time_sdpa(cfg, n, gen))
                if s: rec["sdpa"].append(s)
            print(f"rep {rep} n={n}: " + ", ".join(f"P{x['P']} {x['us']:.1f}" for x in rec["times"] if x["n"] == n and x["rep"] == rep)
                  + f" us; SDPA {next((s['us'] for s in rec['sdpa'] if s['n'] == n), float('nan')):.1f} {el()}", flush=True)
        save()
    del pool, scr
    torch.cuda.empty_cache()
    print("\nn | " + " | ".join(f"P {P}" for P in PS) + " | SDPA")
    for n in NS:
        best = lambda P: min((x["us"] for x in rec["times"] if x["n"] == n and x["P"] == P), default=float("nan"))
        print(f"{n} | " + " | ".join(f"{best(P):.1f}" for P in PS) + f" | {next((s['us'] for s in rec['sdpa'] if s['n'] == n), float('nan')):.1f}")
    return rec


def step(out):
    def apply(st, P):
        st.attn_scratch = A.attention_scratch(st.cfg, 1, device="cuda", P=P)
    explore_util.step_plans(out, "attention_pshort_step_h200",
                            "The decode step (27B shape, synthetic, PDL graph) with attention v18 at P = 66 (the engine's), 16 and 8 "
                            "partitions a KV group: ms per token at 1K and 32K, interleaved three times; greedy tokens recorded (another "
                            "P is another fp32 order, so they may differ).", SCRIPT, {"P66": 66, "P16": 16, "P8": 8}, apply, reps=3,
                            tokens=False)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else None
    main(out)
    step(out)
