"""Chapter 08: the GDN state's stores (and loads) with the streaming cache hint. v7 without its state traffic (ablation build
91) made the step 0.28 ms faster at 1K and 0.05 at 32K (gdn_ablate_step_h200.json), though the state is 0.29 GB of a
token's 27, and every GEMV of the step is priced 5-7 % higher at 1K than at 32K (step_timeline_now_h200.json). One reading
(not measured): the 144 MiB of state a token writes sit in L2 as dirty lines and are written back in the middle of the
GEMVs' read streams; at 32K the attention kernels' KV reads would flush them first. Builds 93 (the stores st.global.cs)
and 94 (stores and loads .cs, evict first) compute v7's values bit for bit and only hint the cache.
1. bit identity with v7: out, conv ring and state after each of 12 consecutive calls from the same start.
2. each alone in a graph of 48 launches over 48 layers, plain and chained with PDL, interleaved three times.
3. the 27B-shape decode step (PDL graph) with v7, 93 and 94: greedy tokens equal to v7's, then ms a token at 1K and 32K,
   interleaved five times.
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_gdn_cs.py OUT_DIR   (about 2 min)
(The rounds alone moved into explore_util.alone_rounds after its record was made: the same steps, not re-run.)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import explore_util
import explore_gdn_v3 as E
from qwen_engine import gdn as G

BUILDS = {"v7": 7, "stores .cs (93)": 93, "stores and loads .cs (94)": 94}
SCRIPT = "explore_gdn_cs.py"


def identity(v, calls=12):
    S = E.shared_layers(48)
    gen = torch.Generator(device="cuda").manual_seed(3)
    res = []
    conv0, rec0 = S["conv"].clone(), S["rec"].clone()
    runs = {}
    for var in (7, v):
        conv, rec = conv0.clone(), rec0.clone()
        outs = []
        for i in range(calls):
            qkvz = G._rand((1, E.C + E.VD), torch.Generator(device="cuda").manual_seed(100 + i))
            out = torch.full((1, E.VD), float("nan"), dtype=E.BF, device="cuda")
            ctl = torch.tensor([200 + i, 0, 0, 0], dtype=torch.int32, device="cuda")
            G.gdn_decode(qkvz, S["x"][:1].contiguous(), **S["P"][i % 48], conv_state=conv, rec_state=rec, layer=i % 48, ctl=ctl, cfg=E.CFG,
                         out=out, variant=var)
            outs.append((out.clone(), conv.clone(), rec.clone()))
        runs[var] = outs
    for a, b in zip(runs[7], runs[v]):
        res.append(all(torch.equal(x.view(torch.int16) if x.dtype == E.BF else x.view(torch.int32), y.view(torch.int16) if y.dtype == E.BF else y.view(torch.int32))
                       for x, y in zip(a, b)))
    return dict(variant=v, calls=calls, identical=sum(res))


def alone(out):
    rec, guard, el, save = explore_util.recorder(
        "gdn_cs_h200", "v7 and its builds with the streaming cache hint on the state (93: stores .cs; 94: stores and loads .cs): bit "
        "identity with v7 over 12 calls; us a launch in a graph of 48 launches over 48 layers, plain and chained with PDL, interleaved "
        "three times", SCRIPT, out=out, builds=BUILDS, identity=[], times=[])
    for v in (93, 94):
        r = guard(f"identity {v}", lambda: identity(v))
        if r: rec["identity"].append(r); print(f"identity v{v}: {r['identical']} of {r['calls']} {el()}", flush=True)
    explore_util.alone_rounds(rec, guard, el, BUILDS, E.time_one)
    save()
    return all(r["identical"] == r["calls"] for r in rec["identity"]) and len(rec["identity"]) == 2


def step(out):
    def apply(st, v): st.set_gdn_log(None); G.VARIANT = v      # v7-family builds: the step without its log (GDN_LOG)
    explore_util.step_plans(out, "gdn_cs_step_h200",
                            "The decode step (27B shape, synthetic, PDL graph) with GDN v7 and its builds 93 (state stores .cs) and 94 "
                            "(stores and loads .cs): greedy tokens equal to v7's, then ms per token at 1K and 32K, interleaved five times.",
                            SCRIPT, BUILDS, apply, reps=5)
    G.VARIANT = 7


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else None
    alone(out)
    step(out)
