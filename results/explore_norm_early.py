"""Chapter 09a: the residual norm's weight asked for before its grid wait (EW). The step's timeline
(step_timeline_now_h200.json) prices the norm before an EK GEMV (q|k|v|z, q|gate|k|v) at ~4 us in the chain and the one
before gate|up at ~2 us. After its wait the norm's chain holds two memory round trips: the residual row (just written,
in L2), then, after the block-wide sum, the weight row (10 KB read once a token, so from DRAM, behind the next GEMV's
first requests). EW asks for the weight before the wait (kernels/norms_kernels.cu; its SASS audited in tests/test_norms.py),
so one round trip is left. The same values in the same operations: the outputs must be the plain build's bit for bit.
Checks first: rmsnorm with and without EW on random rows (seeds 0-3, 1 and 3 rows, PDL off and on, the statistic too, and
the tiny model's 256-wide row). Plans: the engine; every residual norm EW (norm_early); the input and final norms only
(ln1_early: the ones before an EK GEMV or the head); the post-mixer norms only (ln2_early: before gate|up). Greedy tokens
must be the first plan's; then four interleaved rounds at 1K and 32K.
The first run (norm_early_h200.json, at a43b26d, before the engine took EW) labels the plain build "engine"; the engine
has asked for every residual norm as the EW build since (DecodeStep.norm_ew), and the plans now set norm_ew directly.
QE_NORM_EARLY=confirm: the plain build against the engine's (EW everywhere) only, eight rounds (norm_early_confirm_h200.json).
Usage on the H200: PYTHONPATH=. python3 results/explore_norm_early.py OUT_DIR (norm_early_h200.json). About 3 minutes."""
import os, sys
import explore_util

ALL = frozenset({"ln1", "ln2", "final"})
CONFIRM = os.environ.get("QE_NORM_EARLY") == "confirm"
PLANS = ({"plain": frozenset(), "engine (EW)": ALL} if CONFIRM else
         {"plain": frozenset(), "norm_early": ALL, "ln1_early": frozenset({"ln1", "final"}), "ln2_early": frozenset({"ln2"})})


def apply(step, plan): step.norm_ew = set(plan)


def checks(step, rec):
    import torch
    from qwen_engine.norms import rmsnorm
    out = rec.setdefault("checks", [])
    eps = step.cfg.rms_norm_eps
    for N in (5120, 256):
        for seed in range(4):
            g = torch.Generator(device="cuda").manual_seed(seed)
            for M in (1, 3):
                x = (torch.randn(M, N, generator=g, device="cuda") * (1 + seed)).to(torch.bfloat16)
                w = (torch.randn(N, generator=g, device="cuda") * 0.1).to(torch.bfloat16)
                for pdl in (False, True):
                    y0, y1 = torch.full_like(x, float("nan")), torch.full_like(x, float("nan"))
                    s0, s1 = torch.full((M, 2), float("nan"), device="cuda"), torch.full((M, 2), float("nan"), device="cuda")
                    rmsnorm(x, w, eps, out=y0, stat=s0, pdl=pdl)
                    rmsnorm(x, w, eps, out=y1, stat=s1, pdl=pdl, early=True)
                    torch.cuda.synchronize()
                    same = torch.equal(y0.view(torch.int16), y1.view(torch.int16)) and torch.equal(s0.view(torch.int32), s1.view(torch.int32))
                    out.append(dict(N=N, seed=seed, M=M, pdl=pdl, identical=bool(same)))
    bad = [c for c in out if not c["identical"]]
    print(f"EW against the plain build: {len(out) - len(bad)} of {len(out)} bit-identical", flush=True)
    if bad: rec["errors"].append(f"EW differs from the plain build: {bad}")


explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "norm_early_confirm_h200" if CONFIRM else "norm_early_h200",
                        "The decode step (27B shape, synthetic, PDL graph) with its residual norms' weights asked for before their grid wait "
                        "(EW: all, the input and final norms only, or the post-mixer norms only) against the engine's: EW's outputs against "
                        "the plain build's (bit for bit, random rows), greedy tokens, then ms per token at 1K and 32K, interleaved, "
                        + ("eight times (the plain build against the engine's)." if CONFIRM else "four times."),
                        "explore_norm_early.py", PLANS, apply, reps=8 if CONFIRM else 4, describe=sorted, extra=checks)
