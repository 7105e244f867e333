"""Chapter 08: the state stored whole once every N tokens, a log of the updates between (variants 26, 27, 28: N = 4, 8, 16).
v7's state stores cost the decode step 0.2-0.25 ms a token at 1K (ablation 96, gdn_ablate_step_h200.json; chapter 01's
write-cost run reproduces it with no model): 144 MiB a token written back under the next GEMVs' reads. The update of a
token is S = S * decay + k delta^T, so a token can store its three factors (1 KiB a head) instead of the 64 KiB the state
is, and the next tokens replay them onto the last whole state before their grid wait, with the recurrence's own
operations: their values are v7's bit for bit. Stores a token fall from 144 MiB to about 144 / N MiB plus 2.3 MiB of log.
1. bit identity with v7 over 43 tokens of six layers (six phases), from position 0 (the zero state) and from position
   1000 (a random state, the log's slots holding identity entries); per token: out, conv ring, and the state rebuilt
   from rec and the log (gdn_materialise) against v7's rec. Negative controls: the state rebuilt one token short (its
   phase one less: the latest entry left out); the kernel given another layer's log.
2. the decode step (27B shape, synthetic, PDL graph): greedy tokens of each plan equal to v7's, and every GDN layer's
   rebuilt state and conv ring equal to v7's after 16 + 24 tokens; then ms a token at 1K and 32K, five interleaved rounds.
3. each alone in a graph of 48 launches over 48 layers (ctl fixed, so each layer keeps its phase), plain and PDL, two rounds.
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_gdn_log.py OUT_DIR   (about 3 min)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import explore_util
import explore_gdn_v3 as E
from qwen_engine import gdn as G

SCRIPT = "explore_gdn_log.py"
BUILDS = {"v7": 7, "log 4 (26)": 26, "log 8 (27)": 27, "log 16 (28)": 28}
DEV, CFG, BF = "cuda", E.CFG, torch.bfloat16
LAYERS, T = 6, 43


def bits(t):
    return t.view(torch.int16) if t.dtype == BF else t.view(torch.int32)


def same(a, b):
    return bool(torch.equal(bits(a), bits(b)))


def identity(v, pos0, seed=11):
    """v7 against variant v, LAYERS layers x T tokens from pos0; a dict of counts (see the module's docstring). A variant
    without a log (explore_gdn_relc.py's 32) is compared state to state, without the log's two controls."""
    N = G._LOG.get(v)
    P = G.gdn_params(G.layer_weights(CFG, seed, DEV), "L.")
    gen = torch.Generator(device=DEV).manual_seed(seed)
    conv7, rec7 = G.gdn_state(CFG, LAYERS, DEV)
    if pos0:
        conv7.copy_(G._rand(conv7.shape, gen)); rec7.copy_(G._rand(rec7.shape, gen, 0.05, torch.float32))
    convL, recL, log = conv7.clone(), rec7.clone(), (G.gdn_log(CFG, N, LAYERS, DEV) if N else None)
    if N: log[..., 0] = 1.0                                 # identity entries (decay 1, k 0, delta 0) before pos0
    ctl = torch.zeros(4, dtype=torch.int32, device=DEV)
    o7, oL = (torch.empty(1, E.VD, dtype=BF, device=DEV) for _ in range(2))
    r = dict(variant=v, **({"N": N} if N else {}), pos0=pos0, tokens=T, layers=LAYERS, checks=0, out=0, conv=0, state=0,
             **({"wrong_phase_state": 0} if N else {}))
    kw = dict(log=log) if N else {}
    for t in range(T):
        pos = pos0 + t
        ctl.fill_(pos)
        for l in range(LAYERS):
            qkvz, x = G._rand((1, E.C + E.VD), gen), G._rand((1, E.HID), gen)
            o7.fill_(float("nan")); oL.fill_(float("nan"))
            G.gdn_decode(qkvz, x, **P, conv_state=conv7, rec_state=rec7, layer=l, ctl=ctl, cfg=CFG, out=o7, variant=7)
            G.gdn_decode(qkvz, x, **P, conv_state=convL, rec_state=recL, layer=l, ctl=ctl, cfg=CFG, out=oL, variant=v, pdl=bool(t & 1), **kw)
            r["checks"] += 1
            r["out"] += same(o7, oL)
            r["conv"] += same(conv7[l], convL[l])
            if not N: r["state"] += same(rec7[l], recL[l]); continue
            r["state"] += same(rec7[l], G.gdn_materialise(recL, log, l, pos + 1, N))
            r["wrong_phase_state"] += same(rec7[l], G.gdn_materialise(recL, log, l, pos, N))   # rebuilt one token short
    if not N: return r
    # negative control: one more token of layer 0 with layer 1's log in layer 0's place (phase of layer 0 at pos0 + T > 0)
    pos = pos0 + T
    assert (pos + 0) % N > 0
    ctl.fill_(pos)
    swapped = log.clone(); swapped[0] = log[1]
    qkvz, x = G._rand((1, E.C + E.VD), gen), G._rand((1, E.HID), gen)
    G.gdn_decode(qkvz, x, **P, conv_state=conv7, rec_state=rec7, layer=0, ctl=ctl, cfg=CFG, out=o7, variant=7)
    G.gdn_decode(qkvz, x, **P, conv_state=convL, rec_state=recL, layer=0, ctl=ctl, cfg=CFG, out=oL, variant=v, log=swapped)
    r["swapped_log_out_identical"] = same(o7, oL)
    r["swapped_log_out_mismatches"] = int((bits(o7) != bits(oL)).sum())
    return r


def step_states(step, rec, builds=None, apply=None):
    """Every plan of `builds` (BUILDS) set up by `apply(step, v)` (set_gdn_log) from a fresh reset: 16 prompt tokens and
    24 greedy ones; rebuilt states and conv rings against the first plan's (v7's)."""
    builds = BUILDS if builds is None else builds
    apply = apply or (lambda st, v: st.set_gdn_log(None if v == 7 else v))
    from qwen_engine.step import run
    from qwen_engine.decode_bench import _prompt
    prompt = _prompt(1024)[:16]
    ref, rec["step_states"] = None, {}
    for label, v in builds.items():
        apply(step, v)
        ids = list(run(step, prompt, 24))
        torch.cuda.synchronize()
        st, cv = step.recurrent_state(), step.conv.clone()
        if ref is None: ref = (ids, st, cv)
        rec["step_states"][label] = dict(tokens_equal=ids == ref[0], state_identical=same(st, ref[1]), conv_identical=same(cv, ref[2]),
                                         state_layers_identical=sum(same(a, b) for a, b in zip(st, ref[1])), pos=int(step.ctl[0]))
        print(f"step states {label}: {rec['step_states'][label]}", flush=True)
    step.set_gdn_log(None)


def main(out, name, what, step_name, step_what, script, variants, builds, alone, reps):
    """Identity of `variants` from positions 0 and 1000 (record `name`); if all hold, the step with `builds`, `reps`
    interleaved rounds (record `step_name`, with step_states); then `alone`'s builds in graphs of 48 launches, two rounds."""
    global BUILDS
    BUILDS = builds                                        # what step_states runs
    rec, guard, el, save = explore_util.recorder(name, what, script, out=out, builds=alone, identity=[], times=[])
    for v in variants:
        for pos0 in (0, 1000):
            r = guard(f"identity {v} {pos0}", lambda: identity(v, pos0))
            if r: rec["identity"].append(r); print(f"identity {r} {el()}", flush=True)
    save()
    ok = len(rec["identity"]) == 2 * len(variants) and all(r["out"] == r["conv"] == r["state"] == r["checks"] for r in rec["identity"])
    print(f"identity ok: {ok}", flush=True)

    def apply(st, v): st.set_gdn_log(None if v == 7 else v)
    if ok:
        explore_util.step_plans(out, step_name, step_what, script, builds, apply, reps=reps,
                                extra=lambda st, r: guard("step states", lambda: step_states(st, r)))
    logs = {v: G.gdn_log(CFG, G._LOG[v], 48, DEV) for v in alone.values() if v != 7}
    tone = lambda v, M=1, pdl=False: E.time_one(v, M=M, pdl=pdl, **({} if v == 7 else dict(log=logs[v])))
    explore_util.alone_rounds(rec, guard, el, alone, tone, rounds=2)
    save()
    print(f"done {el()}; errors {len(rec['errors'])}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None, "gdn_log_h200",
         "v7 and variants 26-28 (the state stored whole every 4, 8, 16 tokens, a log of the updates between): "
         "bit identity with v7 (out, conv ring, the rebuilt state) over 43 tokens x 6 layers from positions 0 and 1000, with "
         "two negative controls; us a launch in a graph of 48 launches over 48 layers, plain and chained with PDL, two rounds",
         "gdn_log_step_h200",
         "The decode step (27B shape, synthetic, PDL graph) with GDN v7 and variants 26-28 (the state whole every "
         "4, 8, 16 tokens, a log between): greedy tokens, rebuilt states and conv rings equal to v7's after 16 + 24 "
         "tokens (step_states), then ms per token at 1K and 32K, interleaved five times.",
         SCRIPT, (26, 27, 28), BUILDS, BUILDS, 5)
