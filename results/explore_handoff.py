"""Chapter 09a: the hand-off timed by the producer's progress. With PDL a kernel's dependents are scheduled once every one
of its blocks has released them, and every kernel of the step releases them right after its own grid wait. So the GEMV
after a residual norm (q|k|v|z, q|gate|k|v, gate|up, the head) has its blocks scheduled only once the norm has passed its
wait, that is once the GEMV before the norm (down, out_proj / o_proj) has completed; the step's timeline finds those blocks
resident 1.3 us after that, asking for their first weights (EK) while the norm works. Here the producer (chapter 06's v36:
down and out_proj counting each warp's end into one int64) and the norm (chapter 05's v1t: the EW norm whose block, before
its wait, polls that count and releases its dependents when it reaches TRG) let the next GEMV's blocks be scheduled while
the producer's last warps still run, so they land on the SMs its blocks leave and ask for their first weights by the time
it completes. What the norm reads it still reads after its grid wait: the count is a hint, never a value.
Checks: v36 against the engine's builds on the same inputs (down and out_proj, bit for bit) and its count (one per warp);
v1t against the EW norm (bit for bit, with and without PDL). Plans: the engine; TRG 1 (at the producer's first warp's end),
1280 (half of its 2,560 warps), 2304 (90 %), 2560 (all). Greedy tokens must be the engine's; then five interleaved rounds at
1K and 32K. Usage on the H200: PYTHONPATH=. python3 results/explore_handoff.py OUT_DIR (handoff_h200.json). About 4 minutes."""
import sys
import explore_util

PLANS = {"engine": 0, "trg 1": 1, "trg 1280": 1280, "trg 2304": 2304, "trg 2560": 2560}


def apply(step, plan): step.handoff_trg = plan


def checks(step, rec):
    import torch
    from qwen_engine import gemv as G
    from qwen_engine.norms import rmsnorm_trigger
    names = ("gemv_fp8_v36<20, 1, 1, 2, 34, 1, true, true, 2>", "gemv_fp8_v36<20, 1, 1, 3, 12, 1, true, true, 0>")
    G.get_kernel("gemv", names[0], together=names)
    gen = torch.Generator(device="cuda").manual_seed(11)
    cnt = torch.zeros(1, dtype=torch.int64, device="cuda")
    rec["v36"] = explore_util.count_checks(gen, cnt, "dn")
    def v1t(x, w, y, pdl):
        cnt.fill_(5)
        rmsnorm_trigger(x, w, step.cfg.rms_norm_eps, y, cnt, 3, pdl=pdl)       # the count already past its threshold: no wait
        return lambda: dict(reset=int(cnt[0]) == 0)
    rec["v1t"] = explore_util.norm_identity(step.cfg.rms_norm_eps, v1t)
    ok36 = all(v["identical"] and v["count"] == 2560 for v in rec["v36"])
    ok1t = all(v["identical"] and v["reset"] for v in rec["v1t"])
    print(f"v36 bit-identical and counting 2,560 warps: {ok36}; v1t bit-identical to the EW norm and reset: {ok1t}", flush=True)
    if not (ok36 and ok1t): rec["errors"].append(f"checks: v36 {rec['v36']}, v1t {rec['v1t']}")


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "handoff_h200",
                        "The decode step (27B shape, synthetic, PDL graph) with the residual norms releasing their dependents when the GEMV "
                        "before them (down, out_proj: v36) has counted TRG of its 2,560 warps' ends (v1t), against the engine's (released "
                        "after the norm's grid wait): v36 and v1t checked bit for bit first; greedy tokens, then ms per token at 1K and 32K, "
                        "interleaved, five times.", "explore_handoff.py", PLANS, apply, reps=5, extra=checks)
