"""Chapter 08's z split: a GDN layer as qkv GEMV (in_proj_qkvz's first 10,240 rows, the engine's qkv|z build) -> GDN v7's
ZX build (99: released after its grid wait; 100: before it) -> v33, the z rows' GEMV (chapter 06) with the gated norm in
its epilogue (trg0: it releases the out projection at its start) -> out_proj. The z rows' 31 MB then stream while the GDN
kernel's post-wait chain runs, instead of before it. Every value is the engine's, bit for bit, by construction; checked:
  (a) one layer at the 27B shape (layer 0 of the synthetic checkpoint), random x, state, conv ring and position, eager,
      with and without PDL: mix, recurrent state and conv ring equal to the engine's path; a negative control (v33 given
      each head's 1 / rms rolled by one head) must differ;
  (b) the decode step (27B shape, synthetic, seed 0): after a 16-token prompt and 24 greedy tokens, the tokens, residual
      stream, recurrent states and conv rings equal to the engine's, PDL graph and plain graph; a negative control (v33
      reading a 1 / rms buffer the GDN kernel never writes) must differ;
  (c) ms per token at 1K and 32K, the engine against the four builds and "two launches" (qkv GEMV, the z rows' GEMV with
      a plain epilogue, v7: what splitting the launch costs without the overlap), interleaved rounds (explore_util.step_plans).
Usage, from the repo root on the H200:  PYTHONPATH=. python3 results/explore_gdn_zsplit.py OUT_DIR   (about 90 s)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import explore_util

PLANS = {"engine": None, "99": (99, False), "99 trg0": (99, True), "100": (100, False), "100 trg0": (100, True)}
TWO = "two launches"    # timing only: qkv GEMV, then z GEMV (the engine's build, plain epilogue), then v7: the split's cost without its overlap


def two_launches(self, L, x, qkvz, mix):
    from qwen_engine.gemv import gemv, engine_kwargs
    from qwen_engine.gdn import gdn_decode
    c, (wq, ws) = self.cfg, L["inp"]
    C = c.gdn_conv_dim
    gemv(wq[C:], ws[C // 128:], x, 0, out=qkvz[:, C:], pdl=self.pdl, **engine_kwargs(*wq.shape, 0))
    gdn_decode(qkvz, x, L["w_b"], L["w_a"], L["conv_w"], L["A_log"], L["dt_bias"], L["norm"], self.conv, self.rec,
               L["idx"], self.ctl, c, mix, pdl=self.pdl)


def layer_checks(step, rec, guard, el):
    "(a): one GDN layer, the engine's launches against the z split's, eager, on random inputs."
    from qwen_engine.gemv import gemv, engine_kwargs, gdn_z_gated
    from qwen_engine.gdn import gdn_decode
    c, L = step.cfg, step.layers[0]
    assert L["kind"] == "linear_attention"
    C, i = c.gdn_conv_dim, L["idx"]
    wq, ws = L["inp"]
    qkvz, mix = step.proj[:, :wq.shape[0]], step.mix[:, :c.gdn_value_dim]
    out = []
    for seed in (1, 2, 3):
        g = torch.Generator(device="cuda").manual_seed(seed)
        x = (torch.randn(1, c.hidden_size, generator=g, device="cuda") * 0.7).bfloat16()
        rec0 = torch.randn(step.rec[i].shape, generator=g, device="cuda") * 0.05
        conv0 = (torch.randn(step.conv[i].shape, generator=g, device="cuda")).bfloat16()
        pos = int(torch.randint(3, 5000, (1,), generator=g, device="cuda"))

        def engine(pdl):
            step.rec[i].copy_(rec0); step.conv[i].copy_(conv0); step.ctl[0] = pos
            qkvz.fill_(float("nan")); mix.fill_(float("nan"))
            gemv(wq, ws, x, 0, out=qkvz, pdl=pdl, **engine_kwargs(*wq.shape, 0))
            gdn_decode(qkvz, x, L["w_b"], L["w_a"], L["conv_w"], L["A_log"], L["dt_bias"], L["norm"], step.conv, step.rec, i, step.ctl, c, mix, pdl=pdl)
            torch.cuda.synchronize()
            return mix.clone(), step.rec[i].clone(), step.conv[i].clone()

        def split(variant, trg0, pdl, control=False):
            step.rec[i].copy_(rec0); step.conv[i].copy_(conv0); step.ctl[0] = pos
            qkvz.fill_(float("nan")); mix.fill_(float("nan")); step.rinv.fill_(float("nan"))
            gemv(wq[:C], ws[:C // 128], x, 0, out=qkvz[:, :C], pdl=pdl, **engine_kwargs(*wq.shape, 0))
            gdn_decode(qkvz, x, L["w_b"], L["w_a"], L["conv_w"], L["A_log"], L["dt_bias"], L["norm"], step.conv, step.rec, i, step.ctl, c, mix,
                       pdl=pdl, variant=variant, rinv=step.rinv)
            if control:                                    # each head given its neighbour's 1 / rms
                torch.cuda.synchronize(); step.rinv.copy_(step.rinv.roll(1))
            gdn_z_gated(wq[C:], ws[C // 128:], x, L["norm"], mix, step.rinv, trg0=trg0, pdl=pdl)
            torch.cuda.synchronize()
            return mix.clone(), step.rec[i].clone(), step.conv[i].clone()

        for pdl in (True, False):
            ref = engine(pdl)
            for label, plan in PLANS.items():
                if plan is None: continue
                got = split(*plan, pdl)
                out.append(dict(seed=seed, pos=pos, pdl=pdl, plan=label, mix_equal=torch.equal(got[0], ref[0]), rec_equal=torch.equal(got[1], ref[1]),
                                conv_equal=torch.equal(got[2], ref[2]), mix_finite=bool(torch.isfinite(got[0].float()).all())))
            bad = split(99, False, pdl, control=True)
            out.append(dict(seed=seed, pos=pos, pdl=pdl, plan="control (1 / rms rolled)", mix_equal=torch.equal(bad[0], ref[0]),
                            rec_equal=torch.equal(bad[1], ref[1]), conv_equal=torch.equal(bad[2], ref[2]),
                            mix_rows_differing=int((bad[0] != ref[0]).sum())))
    rec["layer_checks"] = out
    ok = all(r["mix_equal"] and r["rec_equal"] and r["conv_equal"] for r in out if not r["plan"].startswith("control"))
    rej = all(not r["mix_equal"] for r in out if r["plan"].startswith("control"))
    print(f"(a) layer checks: {sum(1 for r in out if not r['plan'].startswith('control'))} equal: {ok}; controls rejected: {rej} {el()}", flush=True)


def step_checks(step, rec, guard, el):
    "(b): the decode step, each plan against the engine's: tokens and the session state after them, PDL and plain graphs."
    from qwen_engine.step import run
    from qwen_engine.decode_bench import _prompt
    from qwen_engine.gemv import gdn_z_gated
    from qwen_engine.gdn import gdn_decode
    prompt = _prompt(1024)[:16]
    res, ref = [], None
    bogus = torch.full_like(step.rinv, 0.5)
    orig = type(step)._gdn_zsplit

    def control(self, L, x, qkvz, mix):                  # v33 reads 1 / rms from a buffer the GDN kernel never writes
        c, (wq, ws) = self.cfg, L["inp"]
        C = c.gdn_conv_dim
        gdn_decode(qkvz, x, L["w_b"], L["w_a"], L["conv_w"], L["A_log"], L["dt_bias"], L["norm"], self.conv, self.rec,
                   L["idx"], self.ctl, c, mix, pdl=self.pdl, variant=99, rinv=self.rinv)
        gdn_z_gated(wq[C:], ws[C // 128:], x, L["norm"], mix, bogus, pdl=self.pdl)

    for pdl in (True, False):
        for label, plan in list(PLANS.items()) + [("control (1 / rms never written)", (99, False))]:
            step.pdl, step.zsplit, step.graph = pdl, plan, None
            if label.startswith("control"): step._gdn_zsplit = control.__get__(step)
            try: ids = list(run(step, prompt, 24))
            finally:
                if label.startswith("control"): del step._gdn_zsplit
            torch.cuda.synchronize()
            snap = (ids, step.h[0].clone(), step.rec.clone(), step.conv.clone())
            if ref is None: ref = snap
            res.append(dict(plan=label, pdl=pdl, tokens=ids, tokens_equal=ids == ref[0], h_equal=torch.equal(snap[1], ref[1]),
                            rec_equal=torch.equal(snap[2], ref[2]), conv_equal=torch.equal(snap[3], ref[3])))
            print(f"(b) {label} pdl={pdl}: tokens {ids == ref[0]}, h {res[-1]['h_equal']}, rec {res[-1]['rec_equal']}, conv {res[-1]['conv_equal']} {el()}", flush=True)
            del snap
    step.pdl, step.zsplit, step.graph = True, None, None
    assert orig is type(step)._gdn_zsplit
    rec["step_checks"] = res


if __name__ == "__main__":
    def extra(step, rec):
        step.set_gdn_log(None)                              # the records' step: GDN v7 storing its state every token (before GDN_LOG)
        import time
        t0 = time.time()
        el = lambda: f"({time.time() - t0:.0f} s)"
        explore_util.guard(rec, "layer checks", lambda: layer_checks(step, rec, None, el))
        explore_util.guard(rec, "step checks", lambda: step_checks(step, rec, None, el))

    def apply(st, plan):
        st.set_gdn_log(None)
        st.__dict__.pop("_gdn_zsplit", None)
        if plan == TWO: st.zsplit, st._gdn_zsplit = (7, False), two_launches.__get__(st)
        else: st.zsplit = plan

    what = ("The z split (chapter 08): qkv GEMV -> GDN v7's ZX build (99 / 100) -> v33 (z rows, the gated norm in the epilogue, "
            "trg0: the out projection released at its start) -> out_proj, against the engine's qkv|z GEMV -> v7 -> out_proj: (a) one "
            "layer, random inputs, three seeds, PDL and plain, bit identity of mix, state and conv ring, a negative control; (b) the "
            "decode step's tokens, residual stream, states and rings after 16 + 24 tokens, PDL and plain graphs, a negative control; "
            "(c) ms per token at 1K and 32K, interleaved rounds, with 'two launches' (qkv GEMV, z GEMV, v7: the split without its overlap).")
    explore_util.step_plans(sys.argv[1] if len(sys.argv) > 1 else None, "gdn_zsplit_h200", what, "explore_gdn_zsplit.py", PLANS | {TWO: TWO}, apply,
                            reps=3, describe=lambda p: list(p) if isinstance(p, tuple) else (p or "engine"), extra=extra)
