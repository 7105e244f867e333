"Chapter 05 on the CPU: each kernel's arithmetic (its torch emulation) against the reference, the statistic check and its negative controls, the launchers' contract, and the CUDA compile."
import shutil, subprocess
from pathlib import Path
import numpy as np, pytest, torch
from qwen_engine.reference import rms_norm, gated_rms_norm
from qwen_engine.norms import (HIDDEN, HEAD_DIM, GDN_DIM, inv_n, kernel_sumsq, kernel_stat, emulate_rmsnorm, emulate_head_rmsnorm,
                               emulate_gated_rmsnorm, reference_stat, exact_rows_definition, exact_sum_rows, outputs_from_stat, compare,
                               statistic_check, tolerance_check, awkward_rows, model_weights, negative_controls, order_bound,
                               rel_error_vs_exact, rmsnorm, head_rmsnorm, gated_rmsnorm)

EPS = 1e-6
FORMS = [("residual", HIDDEN), ("head", HEAD_DIM), ("gated", GDN_DIM)]

def run_form(form, x, w, z=None, threads=320, fault=0):
    if form == "residual": return emulate_rmsnorm(x, w, EPS, threads, fault)
    if form == "head":
        o, s = emulate_head_rmsnorm(x[:, None], w, EPS, fault); return o[:, 0], s[:, 0]
    o, s = emulate_gated_rmsnorm(x[:, None], z[:, None], w, EPS, fault); return o[:, 0], s[:, 0]

def reference(form, x, w, z=None):
    return gated_rms_norm(x, z, w, EPS) if form == "gated" else rms_norm(x, w, EPS)

def test_inverse_n_is_fp32_division():
    assert inv_n(HIDDEN) == np.float32(1) / np.float32(5120) and inv_n(256) * 256 == 1.0

def test_torch_cpu_mean_divides_and_rsqrt_rounds_twice():
    "The facts the chapter's decision rests on: on the CPU the reference's mean is fl(S / n), its rsqrt fl(1 / fl(sqrt))."
    x = exact_sum_rows(500, HIDDEN, seed=1)
    S = x.double().pow(2).sum(-1).float()
    assert torch.equal(x.float().pow(2).mean(-1), S / torch.full_like(S, HIDDEN))
    assert not torch.equal(x.float().pow(2).mean(-1), S * torch.tensor(inv_n(HIDDEN)))
    v = torch.rand(10000, generator=torch.Generator().manual_seed(2)) + 1e-3
    assert torch.equal(torch.rsqrt(v), torch.from_numpy(np.float32(1) / np.sqrt(v.numpy())))

def test_sumsq_order_is_the_kernels():
    "The emulated order: thread t of a block holds chunks c*threads+t; a permutation of the layout changes the sum somewhere."
    g = torch.Generator().manual_seed(3)
    x = (torch.randn(64, HIDDEN, generator=g) * torch.exp(2 * torch.randn(64, 1, generator=g))).to(torch.bfloat16)
    s = kernel_sumsq(x, 320, 8)
    exact = x.double().pow(2).sum(-1)
    assert ((s.double() - exact).abs() / exact).max() <= order_bound(HIDDEN, 320) * 2.0**-24
    other = kernel_sumsq(x, 640, 8)                       # another partition: a different order, a different sum somewhere
    assert not torch.equal(s, other)
    # the exact-sum rows cannot tell orders apart
    xe = exact_sum_rows(16, HIDDEN, seed=4)
    assert torch.equal(kernel_sumsq(xe, 128, 8), kernel_sumsq(xe, 640, 8))

@pytest.mark.parametrize("threads", [128, 160, 320, 640])
def test_order_bound(threads):
    g = torch.Generator().manual_seed(threads)
    x = torch.randn(128, HIDDEN, generator=g).to(torch.bfloat16)
    assert rel_error_vs_exact(kernel_stat(x, threads, 8, EPS)[0], x) <= order_bound(HIDDEN, threads)

@pytest.mark.parametrize("form,n", FORMS, ids=[f for f, _ in FORMS])
def test_forms_against_reference_on_awkward_inputs(form, n):
    "Statistic within 4 fp32 ulps (reduction order), outputs within 1 bf16 ulp, whole tensor within tolerance, for every awkward kind."
    g = torch.Generator().manual_seed(5)
    w = model_weights(n, g, plain=form == "gated")
    for kind, x in awkward_rows(n, g).items():
        z = (torch.randn(x.shape, generator=g) * 2).to(torch.bfloat16) if form == "gated" else None
        out, st = run_form(form, x, w, z)
        c = compare(out, st, reference(form, x, w, z), reference_stat(x, EPS))
        assert c["mean_max_ulp"] <= 4 and c["r_max_ulp"] <= 4 and c["out_max_ulp"] <= 1 and c["allclose"], (kind, c)
        if kind in ("near_overflow", "sum_overflows"):
            assert torch.isinf(st[:, 0]).all() and (st[:, 1] == 0).all() and (out == 0).all()
        if kind in ("zeros", "near_underflow"):
            assert (st[:, 0] == 0).all() and torch.equal(st[:, 1], torch.rsqrt(torch.full_like(st[:, 1], EPS)))

@pytest.mark.parametrize("form,n", FORMS, ids=[f for f, _ in FORMS])
def test_exact_rows_match_the_definition_bit_for_bit(form, n):
    g = torch.Generator().manual_seed(6)
    x, w = exact_sum_rows(256, n, seed=7), model_weights(n, g, plain=form == "gated")
    z = (torch.randn(x.shape, generator=g) * 2).to(torch.bfloat16) if form == "gated" else None
    d = exact_rows_definition(x, EPS)
    out, st = run_form(form, x, w, z)
    assert statistic_check(out, st, outputs_from_stat(form, x, w, d, z), d)
    # the CPU reference equals the definition where n is a power of two, and is the division variant where it is not
    ref_st = reference_stat(x, EPS)
    assert torch.equal(ref_st, d) == (n != HIDDEN)
    assert torch.equal(ref_st, exact_rows_definition(x, EPS, divide=True))

def test_negative_controls():
    "Division: caught by the statistic check, passed by the whole-tensor tolerance. w for 1+w: caught by both."
    g = torch.Generator().manual_seed(8)
    x, w = exact_sum_rows(512, HIDDEN, seed=9), model_weights(HIDDEN, g)
    nc = negative_controls(x, w, EPS)
    assert nc["as specified"][:2] == (True, True)
    assert nc["division"][:2] == (False, True) and nc["division"][2] > 50     # ~1 row in 5 carries a mean 1 ulp away
    assert nc["w for 1+w"][:2] == (False, False)

@pytest.mark.parametrize("form,n", [("head", HEAD_DIM), ("gated", GDN_DIM)], ids=["head", "gated"])
def test_weight_convention_control_on_head_forms(form, n):
    g = torch.Generator().manual_seed(10)
    x, w = exact_sum_rows(64, n, seed=11), model_weights(n, g, plain=form == "gated")
    z = (torch.randn(x.shape, generator=g) * 2).to(torch.bfloat16) if form == "gated" else None
    d = exact_rows_definition(x, EPS); want = outputs_from_stat(form, x, w, d, z)
    out, st = run_form(form, x, w, z, fault=2)
    assert not statistic_check(out, st, want, d) and not tolerance_check(out, want)
    out1, st1 = run_form(form, x, w, z, fault=1)            # division by a power of two is exact: invisible here
    assert statistic_check(out1, st1, want, d)

def test_statistic_sees_one_ulp():
    "The instrument reports the fp32 mean itself: a one-ulp change is a failed check."
    x, w = exact_sum_rows(8, HIDDEN, seed=12), model_weights(HIDDEN, torch.Generator().manual_seed(13))
    out, st = emulate_rmsnorm(x, w, EPS)
    d = exact_rows_definition(x, EPS)
    bumped = st.clone(); bumped[3, 0] = torch.nextafter(bumped[3, 0], torch.tensor(float("inf")))
    assert statistic_check(out, st, out, d) and not statistic_check(out, bumped, out, d)

def test_launcher_contract_on_cpu():
    x = torch.randn(1, HIDDEN).to(torch.bfloat16); w = torch.zeros(HIDDEN, dtype=torch.bfloat16)
    with pytest.raises(AssertionError): rmsnorm(x, w, EPS)                                   # not on the GPU
    with pytest.raises(AssertionError): rmsnorm(torch.randn(1, 1000).to(torch.bfloat16), w, EPS)
    with pytest.raises(AssertionError): head_rmsnorm(torch.randn(1, 2, 128).to(torch.bfloat16), w[:256], EPS)
    with pytest.raises(AssertionError): gated_rmsnorm(torch.randn(1, 2, 128).to(torch.bfloat16), torch.randn(1, 2, 64).to(torch.bfloat16), w[:128], EPS)

def test_early_build_errors_name_the_problem():
    "The residual norm's measurement builds are separate: asking for two at once, or for a build that does not exist, says so."
    x = torch.randn(1, HIDDEN).to(torch.bfloat16); w = torch.zeros(HIDDEN, dtype=torch.bfloat16)
    for kw in (dict(early=True, late=True), dict(early=True, rel=True), dict(rel=True, late=True)):
        with pytest.raises(ValueError, match="separate builds"): rmsnorm(x, w, EPS, **kw)
    with pytest.raises(ValueError, match="fault 0"): rmsnorm(x, w, EPS, early=True, fault=1)
    with pytest.raises(ValueError, match="320 threads"): rmsnorm(x, w, EPS, early=True, threads=128)

def test_early_weight_asked_for_before_the_wait():
    """EW's claim, by SASS (nvcc, no GPU): the step's norm build with EW issues its two 16-byte weight loads above the grid
    wait; the engine's build issues none (the negative control: an audit that reported loads there would fail)."""
    from qwen_engine.step import prewait_audit
    if not shutil.which("nvcc") and not Path("/usr/local/cuda/bin/nvcc").exists(): pytest.skip("no nvcc")
    b = lambda tail: f"rmsnorm_bf16_v1<5120, 320, 0, {tail}>"
    want = {b("false, false, true"): {"LDG.E.128.CONSTANT": 2}, b("false, false, false"): {}}
    a = prewait_audit({k: ("norms_kernels", "norm", None, "") for k in want})
    assert a == want, a

def test_cuda_compiles():
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).exists(): pytest.skip("no nvcc")
    k = Path(__file__).resolve().parent.parent / "kernels"
    for name in ("norms.cu", "norms_kernels.cu"):
        r = subprocess.run([nvcc, "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", "-c", str(k / name), "-o", "/dev/null"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


def test_norms_record_join_and_price_in_the_step():
    "The recorded grid-join probe and the norms' price inside the step are complete and self-consistent."
    import json
    from qwen_engine.runtime import repo_root
    j = json.loads((repo_root() / "results" / "norms_h200.json").read_text())["data"]["grid_join"]
    assert j["blocks"] == 132 and j["rounds"] == 129 and j["totals_agree"] and 0 < j["per_join_us"] < j["per_round_us"]
    assert abs(j["per_join_us"] - (j["kernel_us_join1"] - j["kernel_us_join0"]) / j["rounds"]) < 1e-9
    nc = json.loads((repo_root() / "results" / "decode_normcost_h200.json").read_text())["data"]["norm_cost"]
    for k in ("plain", "pdl"):
        assert abs(nc[f"{k}_per_norm_us"] - (nc[f"{k}_with_norms_ms"] - nc[f"{k}_without_norms_ms"]) * 1e3 / 129) < 1e-9
    assert nc["plain_per_norm_us"] > 0                   # without PDL a standalone norm has a price, as measured in isolation


def test_trigger_norm_contract_and_its_order():
    """v1t (chapter 09a's hand-off): a 5,120-wide row and an int64 counter, or a ValueError naming the problem; by SASS, its
    weight loads, then the poll of the counter, then the release of its dependents (PREEXIT), all before its grid wait."""
    from qwen_engine.norms import rmsnorm_trigger
    from qwen_engine.runtime import sass_tool, sass_of
    x, w, y = torch.zeros(1, HIDDEN, dtype=torch.bfloat16), torch.zeros(HIDDEN, dtype=torch.bfloat16), torch.zeros(1, HIDDEN, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="5,120"): rmsnorm_trigger(x[:, :256], w[:256], EPS, y[:, :256], torch.zeros(1, dtype=torch.int64), 1)
    with pytest.raises(ValueError, match="int64"): rmsnorm_trigger(x, w, EPS, y, torch.zeros(1, dtype=torch.int32), 1)
    if not all(sass_tool(t) for t in ("nvcc", "cuobjdump", "nvdisasm")): pytest.skip("needs nvcc, cuobjdump and nvdisasm")
    import re
    ins = [m.group(1).split()[0] for l in sass_of('#define __CUDACC_RTC__ 1\n#include "norms_kernels.cu"\ntemplate __global__ void rmsnorm_bf16_v1t<5120, 320>('
                                                 'const unsigned short*, const unsigned short*, unsigned short*, float, float, int, int, unsigned long long*, int);\n').splitlines()
           if (m := re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?(.*?);", l))]
    acq = ins.index("ACQBULK")
    assert ins[:acq].count("LDG.E.128.CONSTANT") == 2 and "LDG.E.64.STRONG.SYS" in ins[:acq] and "NANOSLEEP" in ins[:acq]
    assert max(i for i, s in enumerate(ins[:acq]) if s.startswith("LDG")) < ins.index("PREEXIT") < acq


def test_counted_norm_contract_and_its_order():
    """v1c (chapter 09a's count hand-off): a 5,120-wide row and two int64 (the count, the give-ups), or a ValueError naming
    the problem. By nvcc's SASS: no grid wait at all (no ACQBULK); its weight loads first, then the poll of the count with
    acquire loads (STRONG.GPU, then the L1 invalidated), then a block barrier, the release of its dependents (PREEXIT), and
    only then the loads of its input, through L2 (STRONG.GPU: never the read-only path, which ptxas may move)."""
    from qwen_engine.norms import rmsnorm_counted
    from qwen_engine.runtime import sass_tool, sass_of
    x, w, y = torch.zeros(1, HIDDEN, dtype=torch.bfloat16), torch.zeros(HIDDEN, dtype=torch.bfloat16), torch.zeros(1, HIDDEN, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="5,120"): rmsnorm_counted(x[:, :256], w[:256], EPS, y[:, :256], torch.zeros(2, dtype=torch.int64), 1)
    with pytest.raises(ValueError, match="two int64"): rmsnorm_counted(x, w, EPS, y, torch.zeros(1, dtype=torch.int64), 1)
    with pytest.raises(ValueError, match="two int64"): rmsnorm_counted(x, w, EPS, y, torch.zeros(2, dtype=torch.int32), 1)
    with pytest.raises(ValueError, match="flag"): rmsnorm_counted(x, w, EPS, y, torch.zeros(2, dtype=torch.int64), 1, k=3)
    if not all(sass_tool(t) for t in ("nvcc", "cuobjdump", "nvdisasm")): pytest.skip("needs nvcc, cuobjdump and nvdisasm")
    import re
    sass = sass_of('#define __CUDACC_RTC__ 1\n#include "norms_kernels.cu"\ntemplate __global__ void rmsnorm_bf16_v1c<5120, 320>('
                   'const unsigned short*, const unsigned short*, unsigned short*, float, float, int, int, unsigned long long*, int, '
                   'unsigned long long*, int);\n')
    body = next(b for b in sass.split("Function : ")[1:] if b.startswith("_Z16rmsnorm_bf16_v1c"))   # (the file's extern "C" probe is there too)
    ins = [m.group(1) for l in body.splitlines() if (m := re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?(.*?);", l))]
    op = [s.split()[0] for s in ins]
    assert "ACQBULK" not in op
    loads = [(i, o) for i, o in enumerate(op) if o.startswith("LDG")]
    assert [o for _, o in loads] == ["LDG.E.128.CONSTANT"] * 2 + ["LDG.E.64.STRONG.GPU"] + ["LDG.E.128.STRONG.GPU"] * 2
    poll, first_x = loads[2][0], loads[3][0]
    assert poll < op.index("CCTL.IVALL") < op.index("BAR.SYNC.DEFER_BLOCKING") < op.index("PREEXIT") < first_x
    # the await hand-off's flag: after the outputs' stores, a fence, a block barrier, then one 64-bit store
    stores = [i for i, o in enumerate(op) if o.startswith("STG")]
    flag = stores[-1]
    assert op[flag] == "STG.E.64.STRONG.GPU" and all(op[i] == "STG.E.128" for i in stores if i > first_x and i != flag and i != stores[0])
    assert max(i for i in stores if op[i] == "STG.E.128") < max(i for i, o in enumerate(op[:flag]) if o.startswith("MEMBAR")) \
           < max(i for i, o in enumerate(op[:flag]) if o == "BAR.SYNC.DEFER_BLOCKING") < flag
