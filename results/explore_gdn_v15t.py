# Exploration (chapter 08): where a chain of v15-family launches spends its time, cluster by cluster.
#   PYTHONPATH=. python3 results/explore_gdn_v15t.py OUT_DIR          (from the repo root; ~1 min)
# explore_gdn_v15.py found v15's work after the grid wait at 2.0 us (v7: 3.2) and yet its chained time per launch at
# 4.45 us (v7: 3.83); v18 and v19 (the state asked for after b/a; v19 two blocks an SM) shorter before the wait and still
# slower chained, and their probe builds 0.5-1 us a launch faster than their plain builds. The probe of block 0 cannot say
# why: the chain's time is its slowest cluster's. The probe builds of v15-v19 record, for every cluster (its rank-0
# block), when it started, when its grid wait returned and when it ended. In a graph of 48 PDL launches (the chained
# method; layers rotated), for each launch after the first, against the end of the launch before (the last cluster's
# end): how many clusters started before it, when the last one started, when the last wait returned, when the launch
# ended (the period), and the span before and after the wait of the cluster that ended last. Plain and probe builds are
# timed side by side (three rounds, interleaved). (First run, ff62ccb: v15, v16, v18, v19; the record is the second's,
# with v20 and v21, b and a split over the pair.) Writes OUT_DIR/gdn_v15t_h200.json; prints a short table last.
import os, sys, time
import torch
from qwen_engine import gdn as G

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore_gdn_v10 as X
E = X.E
from qwen_engine.runtime import time_graph, median
T0, OUT, CFG = time.time(), (sys.argv[1] if len(sys.argv) > 1 else None), E.CFG
NP, VARIANTS = 11, (15, 18, 19, 20, 21)
data = dict(variants=VARIANTS)
WHAT = ("The chained GDN launches of v15-v19 cluster by cluster (probe builds: each cluster's start, grid-wait return and end "
        "against the end of the launch before), and the plain vs probe builds' us per launch, interleaved.")


def timeline(variant, n=48):
    S = E.shared_layers(n)
    pr = torch.zeros(n, G.PROBE_WORDS15, dtype=torch.int64, device="cuda")
    f = lambda i: G.gdn_decode(S["qkvz"], S["x"], **S["P"][i % n], conv_state=S["conv"], rec_state=S["rec"], layer=i % n,
                               ctl=S["ctl"], cfg=CFG, out=S["out"], variant=variant, probe=pr[i], pdl=True)
    us = 1000 * median(time_graph(f, calls=n, reps=10))
    torch.cuda.synchronize()
    p = pr.cpu()
    t0 = p[:, 2 * NP:2 * NP + 48].min()
    st, en, wt = [(p[:, 2 * NP + o:2 * NP + o + 48] - t0).double() / 1000 for o in (0, 64, 128)]   # us
    rows = []
    for i in range(1, n):
        pe = float(en[i - 1].max())
        last = int(en[i].argmax())
        rows.append(dict(early=int((st[i] < pe).sum()), first_start=float(st[i].min()) - pe, last_start=float(st[i].max()) - pe,
                         last_wait=float(wt[i].max()) - pe, period=float(en[i].max()) - pe,
                         last_cluster_pre=float(wt[i][last] - st[i][last]), last_cluster_post=float(en[i][last] - wt[i][last]),
                         median_post=float((en[i] - wt[i]).median()), median_pre=float((wt[i] - st[i]).median())))
    keys = rows[0].keys()
    med = {k: float(torch.tensor([r[k] for r in rows]).median()) for k in keys}
    mid = n // 2
    raw = dict(start=(st[mid] - float(en[mid - 1].max())).tolist(), wait=(wt[mid] - float(en[mid - 1].max())).tolist(),
               end=(en[mid] - float(en[mid - 1].max())).tolist())
    return dict(variant=variant, us_per_launch=us, median=med, launch_mid=raw)


def main(VARIANTS=VARIANTS, name="gdn_v15t", script="explore_gdn_v15t.py"):
    "The timelines and timings above for VARIANTS (explore_gdn_v22.py runs them for later ones); record `name`_h200."
    data["variants"] = VARIANTS
    if not torch.cuda.is_available(): sys.exit("explore_gdn_v15t.py: needs a GPU")
    torch.cuda.init()
    data["timeline"] = [E.safe(f"timeline v{v}", lambda: timeline(v)) for v in VARIANTS]
    data["timing"] = []
    for rnd in range(3):
        for v in (7,) + VARIANTS:
            us = E.safe(f"time v{v}", lambda: E.time_one(v, M=1, pdl=True))
            data["timing"].append(dict(variant=v, build="plain", round=rnd, us=us))
            if v != 7:
                S = E.shared_layers(48)
                pr = torch.zeros(48, G.PROBE_WORDS15, dtype=torch.int64, device="cuda")
                us = E.safe(f"time v{v} probe", lambda: 1000 * median(time_graph(lambda i: G.gdn_decode(
                    S["qkvz"], S["x"], **S["P"][i % 48], conv_state=S["conv"], rec_state=S["rec"], layer=i % 48, ctl=S["ctl"], cfg=CFG,
                    out=S["out"], variant=v, probe=pr[i], pdl=True), calls=48, reps=20)))
                data["timing"].append(dict(variant=v, build="probe", round=rnd, us=us))
    data["failures"] = E.failures
    data["wall_s"] = time.time() - T0
    if OUT: E.safe("record", lambda: E.write_record(f"{name}_h200", WHAT, f"PYTHONPATH=. python3 results/{script} " + OUT, data, out_dir=OUT))
    print("SUMMARY (us; times against the end of the launch before, medians over 47 launches):")
    for t in data["timeline"]:
        if t: print(f"  v{t['variant']}: {t['us_per_launch']:.2f} us/launch; " + ", ".join(f"{k} {v:.2f}" for k, v in t["median"].items()))
    for v in (7,) + VARIANTS:
        for b in ("plain", "probe"):
            xs = [r["us"] for r in data["timing"] if r["variant"] == v and r["build"] == b and r["us"]]
            if xs: print(f"  v{v} {b}: " + ", ".join(f"{x:.2f}" for x in xs))
    print(f"  failures: {E.failures}  ({time.time() - T0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
