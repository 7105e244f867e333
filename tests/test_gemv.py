"Chapter 06 on the CPU: the fp8 format, the exact widening, the reference, the launcher contract, and the recorded H200 run."
import shutil
from pathlib import Path
import pytest, torch
from qwen_engine.gemv import quantize_fp8, dequantize_fp8, gemv_reference, torch_epilogue, bf16_ulp, gemv, lm_head, best_by_variant, bytes_of
from qwen_engine.runtime import read_record

def test_quantize_scale_to_fit():
    g = torch.Generator().manual_seed(0)
    w = torch.randn(256, 384, generator=g) * torch.linspace(0.01, 3, 256)[:, None]
    q, s = quantize_fp8(w)
    assert q.dtype == torch.float8_e4m3fn and s.shape == (2, 3)
    blocks = q.float().abs().reshape(2, 128, 3, 128).amax(dim=(1, 3))
    assert torch.equal(blocks, torch.full((2, 3), 448.0))                  # every block uses the whole e4m3 range
    rel = ((dequantize_fp8(q, s) - w).norm() / w.norm()).item()
    assert rel < 0.04                                                       # e4m3 keeps 3 mantissa bits: ~2-3 % RMS

def test_dequantize_rule_rejects_the_transposed_index():
    "Negative control on a square block grid, where the transposed index runs: the rows' scales matter."
    g = torch.Generator().manual_seed(2)
    w = torch.randn(256, 256, generator=g) * torch.tensor([0.01, 3.0]).repeat_interleave(128)[:, None]
    q, s = quantize_fp8(w)
    good = ((dequantize_fp8(q, s) - w).norm() / w.norm()).item()
    bad = ((dequantize_fp8(q, s.t().contiguous()) - w).norm() / w.norm()).item()
    assert good < 0.04 and bad > 10 * good

def test_widening_is_exact_for_every_e4m3_byte():
    "The kernel's e4m3 -> f16 -> (shift by 3) -> bf16 path gives exactly value * 2^-112 for all 254 finite bytes."
    v = torch.arange(256, dtype=torch.uint8).view(torch.float8_e4m3fn).float()
    ok = ~torch.isnan(v)
    h = v.to(torch.float16).view(torch.int16).int() & 0xFFFF
    bits = ((h & 0x7FFF) >> 3) | (h & 0x8000)
    bf = bits.to(torch.int16).view(torch.bfloat16).double()
    assert int(ok.sum()) == 254 and torch.equal(bf[ok] * 2.0**112, v[ok].double())
    shifted4 = (((h & 0x7FFF) >> 4) | (h & 0x8000)).to(torch.int16).view(torch.bfloat16).double()   # negative control
    assert not torch.equal(shifted4[ok] * 2.0**112, v[ok].double())

def _widen_bits(w: torch.Tensor):
    "v10/v11's widening of 32-bit words (int64 tensor): bf16x2 pairs (bytes 0, 2) and (1, 3), as widen_pairs<1> computes them."
    lo = ((w << 8) & 0x80008000) | ((w << 4) & 0x07F007F0)
    hi = (w & 0x80008000) | ((w >> 4) & 0x07F007F0)
    return lo, hi

def _bf16_halves(p: torch.Tensor):
    "The two bf16 of each 32-bit pair (low half first), as float64."
    return [((p >> s) & 0xFFFF).to(torch.int32).to(torch.int16).view(torch.bfloat16).double() for s in (0, 16)]

def test_bit_widening_is_exact_for_every_e4m3_byte():
    "v10/v11: an e4m3 byte moved into bf16 by shifts is exactly value * 2^-120 for all 254 finite bytes, subnormals included."
    b = torch.arange(256, dtype=torch.int64)
    v = b.to(torch.uint8).view(torch.float8_e4m3fn).double()
    ok = ~torch.isnan(v)
    for pos in range(4):                                        # the byte in each position of the word
        lo, hi = _widen_bits(b << (8 * pos))
        got = _bf16_halves(lo if pos in (0, 2) else hi)[pos // 2]
        assert torch.equal(got[ok] * 2.0**120, v[ok]), pos
    assert int((((b & 0x78) == 0) & ((b & 7) != 0)).sum()) == 14                # the 14 subnormal bytes are among them
    lo, _ = _widen_bits(b)                                     # negative control: the f16 path's scale is off by 2^8
    assert not torch.equal(_bf16_halves(lo)[0][ok] * 2.0**112, v[ok])

def test_bit_widening_pairs_match_the_permuted_activation():
    "The pairing (bytes 0, 2 / 1, 3) with the activation permuted by pair_x gives the same products as the plain order."
    g = torch.Generator().manual_seed(3)
    wb = torch.randint(0, 256, (4,), generator=g, dtype=torch.int64)
    wb[(wb & 0x7F) == 0x7F] = 0
    x = torch.randn(4, generator=g).to(torch.bfloat16)
    w = int((wb << torch.tensor([0, 8, 16, 24])).sum())
    lo, hi = _widen_bits(torch.tensor([w]))
    xb = x.view(torch.int16).to(torch.int64) & 0xFFFF
    a, c = int(xb[0] | (xb[1] << 16)), int(xb[2] | (xb[3] << 16))          # x words as loaded: (x0, x1), (x2, x3)
    perm = lambda u, v, sel: sum((((u | (v << 32)) >> (8 * ((sel >> (4 * i)) & 0xF))) & 0xFF) << (8 * i) for i in range(4))
    b0, b1 = torch.tensor([perm(a, c, 0x5410)]), torch.tensor([perm(a, c, 0x7632)])   # __byte_perm(a, c, ...)
    dot = sum((p * q).sum() for p, q in zip(_bf16_halves(lo) + _bf16_halves(hi), _bf16_halves(b0) + _bf16_halves(b1)))
    want = (wb.to(torch.uint8).view(torch.float8_e4m3fn).double() * x.double()).sum() * 2.0**-120
    assert abs(float(dot) - float(want)) <= 1e-12 * abs(float(want))          # float64 sums of the same products
    wrong = sum((p * q).sum() for p, q in zip(_bf16_halves(lo) + _bf16_halves(hi), _bf16_halves(torch.tensor([a])) + _bf16_halves(torch.tensor([c]))))
    assert abs(float(wrong) - float(want)) > 1e-6 * abs(float(want))       # negative control: x not permuted

def test_reference_epilogues():
    g = torch.Generator().manual_seed(1)
    q, s = quantize_fp8(torch.randn(256, 128, generator=g))
    x = torch.randn(2, 128, generator=g).to(torch.bfloat16)
    y = gemv_reference(q, s, x)
    assert y.dtype == torch.float64 and y.shape == (2, 256)
    g2 = gemv_reference(q, s, x, 2)
    gate, up = y.chunk(2, -1)
    want = (torch.nn.functional.silu(gate.to(torch.bfloat16).float()).to(torch.bfloat16).double() * up.to(torch.bfloat16).double())
    assert torch.equal(g2, want)
    y0 = y.to(torch.bfloat16)
    assert torch.equal(torch_epilogue(y0, 2), torch.nn.functional.silu(y0[:, :128]) * y0[:, 128:])

def test_ulp_measure():
    assert bf16_ulp(torch.tensor([1.0]))[0] == 2.0**-7 and bf16_ulp(torch.tensor([-3.0]))[0] == 2.0**-6
    ref = torch.tensor([1.0], dtype=torch.float64)
    assert ((ref + 2 * 2.0**-7 - ref).abs() / bf16_ulp(ref)).item() == 2.0   # a 2-ulp error is seen as 2

def test_launcher_contract_on_cpu():
    q, s = quantize_fp8(torch.randn(128, 128))
    with pytest.raises(AssertionError, match="GPU"):
        gemv(q, s, torch.randn(1, 128).to(torch.bfloat16))
    with pytest.raises(AssertionError):
        lm_head(torch.randn(256, 128), torch.randn(1, 128).to(torch.bfloat16))

REC = read_record("gemv_h200")

def test_recorded_checks_all_pass():
    d = REC["data"]
    assert REC["gpu"] == "NVIDIA H200" and len(d["checks"]) >= 60
    for c in d["checks"]:
        assert c["bad"] == 0 and c["unwritten"] == 0 and c.get("unwritten_epi", 0) == 0, c
        assert c.get("epilogue_bit_identical", True), c
        # v4's SwiGLU is compared with the float64 definition (its row pairing differs from the plain projection's);
        # its worst case (~13 ulp) is an output whose gate projection cancels, within the fp32 bound counted in "bad".
    assert {c["variant"] for c in d["checks"]} == {1, 2, 3, 4, 5}
    assert all(i["multirow_bit_identical"] and i["repeat_bit_identical"] for i in d["identity"])
    assert all(v for k, v in d["lm_head_check"].items() if k != "max_ulp")

def test_recorded_sweep_is_consistent():
    d = REC["data"]; bw = d["bandwidth_tbps"]
    for r in d["sweep"]:
        if "us" in r:
            assert abs(r["frac"] - r["tbps"] / bw) < 1e-9
            if r["variant"].startswith("v"): assert abs(r["tbps"] - bytes_of(r["N"], r["K"], 1, r["epi"]) / r["us"] / 1e6) < 1e-9
    best = best_by_variant(REC)
    for (N, K, e), row in best.items():
        fastest = min((r for v, r in row.items() if v.startswith("v")), key=lambda r: r["us"])
        assert d["choice"][f"{N}x{K}/epi{e}"][:4] == [int(fastest["variant"][1]), fastest["S"], fastest["RG"], fastest["KS"]]
    t = d["token"]
    assert t["launches"] == 258 and abs(t["ratio"] - t["ms"] / t["floor_ms"]) < 1e-9 and 26.8e9 < t["bytes"] < 27e9


def test_engine_plan_is_the_recorded_choice():
    """The engine launches, per model shape, v14's fastest configuration with PDL where it beat the plan of the time (V12_PLAN)
    by more than ENGINE_MARGIN in the same run (gemv_v14_h200), else V12_PLAN."""
    from qwen_engine.gemv import ENGINE_CHOICE, ENGINE_MINB, ENGINE_V14, ENGINE_V26, ENGINE_MARGIN, V12_PLAN, engine_plan
    d14 = read_record("gemv_v14_h200")["data"]
    for r in d14["table"]:
        k = (r["N"], r["K"], r["epi"])
        assert tuple(r["engine"][:3]) == (V12_PLAN[k][0], V12_PLAN[k][1], V12_PLAN[k][3])     # the run timed V12_PLAN as "engine"
        b = r["v14_best_pdl"]
        if k in V26_TAKEN:                                     # v26 (runs of steps a row) at its winner, held to its blocks an SM
            SR, RP, U, MB, E = V26_TAKEN[k]
            assert ENGINE_CHOICE[k] == (26, SR, 2 if k[2] == 2 else 1, 1) and ENGINE_V26[k] == (RP, U, E) and ENGINE_MINB[k] == MB >= 1, k
        # what ENGINE_V14 (and v23's ENGINE_MINB) hold: each shape's v14-family configuration, the engine's until v26 took it
        launched = lambda v: k not in V26_TAKEN and ENGINE_CHOICE[k][0] == v
        if k in LATER_TAKEN:                                     # gate|up (replaced since by a later record's decision, below)
            SR, SK, RP, D, E, MB, KS, XS = LATER_TAKEN[k]
            assert ENGINE_V14[k] == (SK, RP, D, bool(E), bool(XS)), k
            assert k in V26_TAKEN or ENGINE_CHOICE[k] == (14, SR, 2 if k[2] == 2 else 1, KS)
            assert MB == 1 and (k in V26_TAKEN or k not in ENGINE_MINB)
        elif k in V23_TAKEN:                                     # v23 at the configuration of its time, held to its blocks an SM
            SR, SK, RP, D, E, MB, KS, XS = V23_TAKEN[k]
            assert ENGINE_V14[k] == (SK, RP, D, bool(E), bool(XS)) and MB > 1, k
            if k not in V26_TAKEN: assert ENGINE_CHOICE[k] == (23, SR, 2 if k[2] == 2 else 1, KS) and ENGINE_MINB[k] == MB
        elif b["us"] < (1 - ENGINE_MARGIN) * r["engine_pdl_us"]:
            SR, SK, RP, D, E, MB, KS, XS = b["cfg"]
            v = SPLIT_TAKEN.get(k, 14)
            assert ENGINE_V14[k] == (SK, RP, D, bool(E), bool(XS)) and MB == 1, k
            if k not in V26_TAKEN: assert ENGINE_CHOICE[k] == (v, SR, 2 if k[2] == 2 else 1, KS) and k not in ENGINE_MINB
        else:
            assert ENGINE_CHOICE[k] == V12_PLAN[k], k
    assert set(ENGINE_V14) == {k for k, v in ENGINE_CHOICE.items() if k != "lm_head" and v[0] in (14, 16, 18, 23, 26)}
    assert set(ENGINE_V26) == set(V26_TAKEN) == {k for k, v in ENGINE_CHOICE.items() if k != "lm_head" and v[0] == 26}
    assert {k: v for k, v in SPLIT_TAKEN.items() if k not in V23_TAKEN and k not in V26_TAKEN} == {k: v[0] for k, v in ENGINE_CHOICE.items() if k != "lm_head" and v[0] in (16, 18)}
    assert set(ENGINE_MINB) == {k for k in V23_TAKEN if k not in V26_TAKEN} | set(V26_TAKEN)


def _split_taken():
    """The split shapes' variant, record by record: v16 where it was bit-identical to v14, faster alone in every repeat and the
    token faster with it (gemv_v16_h200); then v18 where it beat the plan of the time (v16) the same way (gemv_v18_h200)."""
    taken = {}
    for rec, new, old, tok in (("gemv_v16_h200", 16, 14, "v16 both"), ("gemv_v18_h200", 18, 16, "v18 both")):
        d = read_record(rec)["data"]
        tk = d["token"]
        engine_tokens = [tk["engine"]["ms"], tk["engine again"]["ms"]]
        new_tokens = [t["ms"] for n, t in tk.items() if n.startswith(tok) and "no PDL" not in n]
        both = max(new_tokens) < min(engine_tokens)
        for v in d["versus_v14"]:
            k = (v["N"], v["K"], v["epi"])
            t = {(x["variant"], x["rep"]): x["us"] for x in d["timings"] if (x["N"], x["K"], x["epi"]) == k}
            if v["identical"] and both and taken.get(k, 14) == old and all(t[(new, r)] < t[(old, r)] for r in (0, 1)): taken[k] = new
    return taken
SPLIT_TAKEN = _split_taken()


def _later_taken():
    """gate|up's configuration from gateup_step_h200: the plan with the fastest decode step at 1K, taken where it beat the
    engine's in every repeat at 1K and at 32K and in every repeat of the token of GEMVs, with greedy tokens equal, and
    is bit-identical to the engine's kernel (versus_engine in gemv_v14d_h200 or gemv_v14e_h200)."""
    d = read_record("gateup_step_h200")["data"]
    ident = {tuple(v["cfg"]) for n in ("gemv_v14d_h200", "gemv_v14e_h200") for v in read_record(n)["data"]["versus_engine"]
             if (v["N"], v["K"], v["epi"]) == (34816, 5120, 2) and v["identical"]}
    ms = lambda p, key, ctx=None: [t["ms"] for t in d[key] if t["plan"] == p and (ctx is None or t["ctx"] == ctx)]
    wins = [p for p, cfg in d["plans"].items() if cfg and tuple(cfg) in ident and d["tokens"][p] == d["tokens"]["engine"]
            and all(max(ms(p, "timings", c)) < min(ms("engine", "timings", c)) for c in (1024, 32768))
            and max(ms(p, "token")) < min(ms("engine", "token"))]
    return {(34816, 5120, 2): tuple(d["plans"][min(wins, key=lambda p: sum(ms(p, "timings", 1024)))])} if wins else {}
LATER_TAKEN = _later_taken()


def _v23_taken():
    """v23's shapes from gemv_v23_h200: the configurations flag_sweep called winners (faster alone than the engine's kernel in
    both interleaved repeats by more than ENGINE_MARGIN), bit-identical to the engine's kernel, the token of GEMVs faster
    with them than both engine runs, and the decode step faster in every repeat at 1K and at 32K, greedy tokens equal."""
    from qwen_engine.gemv import ENGINE_MARGIN
    d = read_record("gemv_v23_h200")["data"]
    tk, st = d["token"], d["step"]
    ms = lambda p, key: [t[key] for t in st if t["plan"] == p]
    if not (tk["v23 winners"]["ms"] < min(tk["engine"]["ms"], tk["engine again"]["ms"]) and d["step_tokens"]["v23"] == d["step_tokens"]["engine"]
            and all(max(ms("v23 winners", c)) < min(ms("engine", c)) for c in ("ms_1k", "ms_32k"))): return {}
    out = {}
    for key, w in d["wins"].items():
        N, K = (int(v) for v in key.split("x"))
        cfg = tuple(w["cfg"])
        same = [v for v in d["versus_engine"] if (v["N"], v["K"]) == (N, K) and tuple(v["cfg"]) == cfg]
        eng = [t["us"] for t in d["timings"] if (t["N"], t["K"]) == (N, K) and t["cfg"] == "engine"]
        mine = [t["us"] for t in d["timings"] if (t["N"], t["K"]) == (N, K) and t["cfg"] == list(cfg)]
        assert same and all(v["identical"] for v in same) and len(mine) == len(eng) == 2
        assert all(a < (1 - ENGINE_MARGIN) * b for a, b in zip(mine, eng))
        out[(N, K, same[0]["epi"])] = cfg
    return out
V23_TAKEN = _v23_taken()


def _v26_taken(name="gemv_v26b_h200", label="v26b", tokens_equal=True):
    """v26's shapes from one of its records (explore_gemv_v26b.py, v26e, v26f): the winners its script chose (the best
    configuration, faster alone than the engine's kernel by more than 0.5 % in the median of two rounds), here also required
    faster by more than ENGINE_MARGIN in *each* round, bit-identical to the engine's kernel on the same inputs (the K = 5,120
    shapes) or passing the float64 check with M = 8 rows = M = 1 calls (the 5,120-row shapes, whose engine kernels split K),
    run to run identical, the token of GEMVs faster than both engine rounds in both of its rounds, the decode step faster
    in every repeat at 1K and at 32K, and (`tokens_equal`) the greedy tokens equal. {(N, K, epi): (SR, RP, U, MINB, E)}."""
    from qwen_engine.gemv import ENGINE_MARGIN
    d = read_record(name)["data"]
    tk, st = d["token"], d["step"]
    ms = lambda p, key: [t[key] for t in st if t["plan"] == p]
    if not (max(tk[f"{label} 0"]["ms"], tk[f"{label} 1"]["ms"]) < min(tk["engine 0"]["ms"], tk["engine 1"]["ms"])
            and (d["step_tokens"][label] == d["step_tokens"]["engine"] or not tokens_equal)
            and all(max(ms(label, c)) < min(ms("engine", c)) for c in ("ms_1k", "ms_32k"))): return {}
    out = {}
    for w in d["wins"].values():
        k, cfg = (w["N"], w["K"], w["epi"]), tuple(w["cfg"])
        same = [v for v in d["identity"] if (v["N"], v["K"]) == k[:2] and tuple(v["cfg"]) == cfg and v["versus"] in ("engine", "definition")]
        assert same and all(v["identical"] and v["repeat_identical"] for v in same), k
        assert all(v["bad"] == 0 and v["multirow_bit_identical"] for v in same if v["versus"] == "definition"), k
        eng = {t["rep"]: t["us"] for t in d["timings"] if (t["N"], t["K"]) == k[:2] and t["cfg"] == "engine"}
        mine = {t["rep"]: t["us"] for t in d["timings"] if (t["N"], t["K"]) == k[:2] and t["cfg"] == list(cfg)}
        assert set(mine) == set(eng) == {0, 1}
        if all(mine[r] < (1 - ENGINE_MARGIN) * eng[r] for r in eng): out[k] = (*cfg[:4], cfg[5] if len(cfg) > 5 else 0)
    return out
# gate|up from v26b; out_proj from v26e (E: other sums than v18's, so other greedy tokens; the float64 check instead), then
# out_proj, q|gate|k|v and qkv|z from v26f (EK; measured against the engine with v26e's out_proj), then v26g
V26_TAKEN = {**_v26_taken(), **_v26_taken("gemv_v26e_h200", "v26e", tokens_equal=False), **_v26_taken("gemv_v26f_h200", "v26f"),
             **_v26_taken("gemv_v26g_h200", "v26g", tokens_equal=False)}      # down, q|gate|k|v, qkv|z in longer runs (down's sums: one chain)


def _v26lp_taken(name="gemv_v26lp_step_h200", label="v26lp"):
    """v26lp's shapes from its step record (explore_gemv_v26lp_step.py): the winner, bit-identical to the engine's kernel and
    run to run, faster alone than the engine's by more than ENGINE_MARGIN in each round, the token of GEMVs faster than both
    engine rounds in both of its rounds, greedy tokens equal, and the decode step not slower by the median of its repeats at
    1K and at 32K (a looser rule than _v26_taken's every-repeat one: the kernel's and the token's gains are what issue #7
    measures, and the step's five repeats overlapped). ({(N, K, epi): (SR, RP, U, MINB, E)}, {(N, K, epi): RU})."""
    from statistics import median
    from qwen_engine.gemv import ENGINE_MARGIN
    d = read_record(name)["data"]
    tk, st = d["token"], d["step"]
    ms = lambda p, key: [t[key] for t in st if t["plan"] == p]
    if not (max(tk[f"{label} 0"]["ms"], tk[f"{label} 1"]["ms"]) < min(tk["engine 0"]["ms"], tk["engine 1"]["ms"])
            and d["step_tokens"][label] == d["step_tokens"]["engine"] and len(ms(label, "ms_1k")) == len(ms("engine", "ms_1k")) == 5
            and all(median(ms(label, c)) <= median(ms("engine", c)) for c in ("ms_1k", "ms_32k"))): return {}, {}
    out, loop = {}, {}
    for w in d["wins"].values():
        k, cfg = (w["N"], w["K"], w["epi"]), tuple(w["cfg"])
        same = [v for v in d["identity"] if (v["N"], v["K"]) == k[:2] and tuple(v["cfg"]) == cfg and v["versus"] == "engine"]
        assert same and all(v["identical"] and v["repeat_identical"] for v in same), k
        eng = {t["rep"]: t["us"] for t in d["timings"] if (t["N"], t["K"]) == k[:2] and t["cfg"] == "engine"}
        mine = {t["rep"]: t["us"] for t in d["timings"] if (t["N"], t["K"]) == k[:2] and t["cfg"] == list(cfg)}
        assert set(mine) == set(eng) == {0, 1}
        if all(mine[r] < (1 - ENGINE_MARGIN) * eng[r] for r in eng): out[k], loop[k] = (*cfg[:4], cfg[5]), cfg[6]
    return out, loop
V26LP_TAKEN, V26LP_LOOP = _v26lp_taken()
V26_TAKEN.update(V26LP_TAKEN)                                  # down since gemv_v26lp_step_h200: one row pair a warp, looped


def _oneblock_taken(name="gemv_oneblock_h200", plan="down, out_proj 20 warps"):
    """down and out_proj with all of an SM's warps in one block, from gemv_oneblock_h200 (explore_gemv_oneblock.py): every
    build bit-identical to the engine's kernel on the same inputs (twice a shape), the plan's greedy tokens the engine's, and
    the decode step faster in every repeat than every engine repeat at 1K and at 32K (the rule of _v26_taken's step; alone,
    down gained and out_proj lost 1 %: the step is the judge here, as the timeline showed the chain and the kernel alone
    differ). {(N, K, epi): (SR, RP, U, MINB, E)}: the taken builds, the rest of each configuration as before."""
    d = read_record(name)["data"]
    assert all(v["identical"] for vs in d["versus_engine"].values() for v in vs)
    ms = lambda p, c: [t["ms"] for t in d["timings"] if t["plan"] == p and t["ctx"] == c]
    if not (d["tokens"][plan] == d["tokens"]["engine"] and len(ms(plan, 1024)) == 3
            and all(max(ms(plan, c)) < min(ms("engine", c)) for c in (1024, 32768))): return {}
    return {k: (S, V26_TAKEN[k][1], V26_TAKEN[k][2], mb, V26_TAKEN[k][4])
            for k, (S, mb) in {(5120, 17408, 1): tuple(d["plans"][plan]["down"]), (5120, 6144, 1): tuple(d["plans"][plan]["out_proj"])}.items()}
V26_TAKEN.update(_oneblock_taken())                            # down and out_proj since gemv_oneblock_h200: one block an SM


def test_v26lp_loop_is_the_recorded_choice():
    "ENGINE_V26_LOOP holds exactly the looped builds v26lp's step record took (down: 2 runs a trip)."
    from qwen_engine.gemv import ENGINE_V26_LOOP
    assert ENGINE_V26_LOOP == V26LP_LOOP == {(5120, 17408, 1): 2}


def test_v16_v18_records_checks_pass_and_v15_lost_the_token():
    for name in ("gemv_v16_h200", "gemv_v18_h200"):
        d = read_record(name)["data"]
        assert d["errors"] == [] and len(d["checks"]) == 2 and all(c["ok"] for c in d["checks"])
        assert len(d["identity"]) == len(d["versus_v14"]) == 2
        assert all(i["multirow_bit_identical"] and i["repeat_bit_identical"] for i in d["identity"]) and all(v["identical"] for v in d["versus_v14"])
    tk = read_record("gemv_v16_h200")["data"]["token"]
    assert tk["v15 both"]["ms"] > tk["engine"]["ms"] and tk["v15 both no PDL"]["ms"] < tk["engine no PDL"]["ms"]   # the chapter's claim


def test_v12_plan_is_the_recorded_choice():
    """The plan before v14 (V12_PLAN, V12_MINB), per model shape, as its sweeps found fastest with PDL: v12 where it beat
    v11's plan by more than V12_MARGIN in the same run (gemv_v12_h200), else v11's best (gemv_v11_h200), which beat v3."""
    from qwen_engine.gemv import V12_PLAN as ENGINE_CHOICE, V12_MINB as ENGINE_MINB, V12_MARGIN, ENGINE_CHOICE as NOW
    d11, d12 = read_record("gemv_v11_h200")["data"], read_record("gemv_v12_h200")["data"]
    engine_plan = lambda N, K, e: ENGINE_CHOICE[(N, K, e)]
    def best(d, N, K, e):
        mine = [t for t in d["timings"] if (t["N"], t["K"], t["epi"]) == (N, K, e) and t["pdl"] and isinstance(t["cfg"], list) and len(t["cfg"]) == 3]
        return min(mine, key=lambda t: t["us"]), [r for r in d["table"] if (r["N"], r["K"], r["epi"]) == (N, K, e)][0]
    for (N, K, e), plan in ((k, v) for k, v in ENGINE_CHOICE.items() if k != "lm_head"):
        assert engine_plan(N, K, e) == plan
        b12, r12 = best(d12, N, K, e)
        v12_wins = b12["us"] < (1 - V12_MARGIN) * r12["v11_engine_pdl_us"]
        assert plan[0] == (12 if v12_wins else 11), (N, K, e)
        b, r = (b12, r12) if v12_wins else best(d11, N, K, e)
        S, KS, mb = b["cfg"]
        assert (plan[1], plan[3]) == (S, KS) and ENGINE_MINB.get((N, K, e), 0) == (0 if mb == 1 and plan[0] == 12 else mb)
        if plan[0] == 11: assert b["us"] < r["v3_engine_pdl_us"]          # v11 beat v3 in its own run
    assert set(ENGINE_MINB) <= set(ENGINE_CHOICE)
    assert read_record("gemv_h200")["data"]["choice"]["lm_head"] == 8                  # v2's S then; then v4's best; now v6's
    assert tuple(read_record("head_v4_h200")["data"]["best"]) == (8, 1, 3, 8)
    d6 = read_record("head_v6_h200")["data"]
    assert NOW["lm_head"] == tuple(d6["best"]) and d6["tokens"]["v2"] == d6["tokens"]["v3"]        # (the record calls the engine's head "v2")
    step = lambda head, ctx: [r["ms"] for r in d6["step"] if r["head"] == head and r["ctx"] == ctx]
    assert all(max(step("v3", c)) < min(step("v2", c)) for c in (1024, 32768))     # it won the step, every repeat, both contexts
    from qwen_engine.gemv import engine_plan
    assert engine_plan(2048, 256, 0) == (11, 2, 1, 1) and engine_plan(1024, 256, 2) == (11, 2, 2, 1) and engine_plan(256, 768, 1)[1] == 4


def test_engine_kernels_are_declared_and_cover_the_plans():
    "The one-pass compile lists name only instantiations the file declares, and every plan the engine can pick is in it."
    import re
    from qwen_engine.gemv import ENGINE_KERNELS, V3_KERNELS, V8_KERNELS, V9_KERNELS, V10_KERNELS, V11_KERNELS, V12_KERNELS, ENGINE_MINB, engine_plan, ENGINE_CHOICE
    from qwen_engine.gemv import ENGINE_V14, ENGINE_V26, ENGINE_V26_LOOP, _v14_name, _split_name, _v23_name
    from qwen_engine.runtime import kernel_source
    from qwen_engine.config import preset
    src = kernel_source("gemv")
    declared = {f"gemv_fp8_v3<{a}, {b}, {c}>" for a, b, c in re.findall(r"GEMV3_INST\((\d), (\d), (\d)\)", src)} \
             | {f"gemv_fp8_v3b<{a}, {b}, {c}, {d}>" for a, b, c, d in re.findall(r"GEMV3B_INST\((\d), (\d), (\d), (\d)\)", src)} \
             | {f"gemv_fp8_v11<{a}>" for a in re.findall(r"GEMV11_INST\(([\d, ]+)\)", src)} \
             | {f"gemv_fp8_v11b<{a}>" for a in re.findall(r"GEMV11B_INST\(([\d, ]+)\)", src)} \
             | {f"gemv_fp8_v8<{a}>" for a in re.findall(r"GEMV8_INST\(([\d, ]+)\)", src)} \
             | {f"gemv_fp8_v9<{a}>" for a in re.findall(r"GEMV9_INST\(([\w, ]+)\)", src) if a[0].isdigit()} \
             | {f"gemv_fp8_v10<{a}>" for a in re.findall(r"GEMV10_INST\(([\d, ]+)\)", src)} \
             | {f"gemv_fp8_v12<{a}>" for a in re.findall(r"GEMV12_INST\(([\d, ]+)\)", src)} \
             | {f"gemv_fp8_v14<{a}>" for a in re.findall(r"GEMV14_INST\(([\w, ]+)\)", src) if a[0].isdigit()} \
             | {f"gemv_fp8_v16<{a}>" for a in re.findall(r"GEMV16_INST\(([\w, ]+)\)", src) if a[0].isdigit()} \
             | {f"gemv_fp8_v18<{a}>" for a in re.findall(r"GEMV18_INST\(([\w, ]+)\)", src) if a[0].isdigit()} \
             | {f"gemv_fp8_v23<{a}>" for a in re.findall(r"GEMV23_INST\(([\w, ]+)\)", src) if a[0].isdigit()} \
             | {f"gemv_fp8_v26<{a.removesuffix(', false')}>" for a in re.findall(r"GEMV26_INST\(([\w, ]+)\)", src) if a[0].isdigit()} \
             | {f"gemv_fp8_v26<{a}, true, true>" for a in re.findall(r"GEMV26K_INST\(([\d, ]+)\)", src)} \
             | {f"gemv_fp8_v26lp<{a}>" for a in re.findall(r"template __global__ void gemv_fp8_v26lp<([\w, ]+)>\(", src)} \
             | {f"lm_head_bf16_v2<{a}>" for a in re.findall(r"LMH_INST\((\d)\)", src)} \
             | {f"lm_head_bf16_v{v}<{a}>" for v, a in re.findall(r"template __global__ void lm_head_bf16_v([3-8])<([\d, ]+)>\(", src)}
    for group in (ENGINE_KERNELS, V3_KERNELS, V8_KERNELS, V9_KERNELS, V10_KERNELS, V11_KERNELS, V12_KERNELS):
        assert set(group) <= declared, set(group) - declared
    for group, name in ((V8_KERNELS, "v8<"), (V9_KERNELS, "v9<"), (V10_KERNELS, "v10<"), (V12_KERNELS, "v12<")):    # the sweeps' lists are the file's
        assert set(group) == {d for d in declared if d.startswith("gemv_fp8_" + name)}
    for c in (preset("qwen3_5_27b"), preset("tiny")):
        H = c.hidden_size
        for N, K, e in ((c.q_gate_rows + 2 * c.kv_rows, H, 0), (c.gdn_conv_dim + c.gdn_value_dim, H, 0), (H, c.num_attention_heads * c.head_dim, 1),
                        (H, c.gdn_value_dim, 1), (2 * c.intermediate_size, H, 2), (H, c.intermediate_size, 1)):
            v, S, RG, KS = engine_plan(N, K, e)
            mb = ENGINE_MINB.get((N, K, e), 0)
            if v == 26:
                RP, U, E = ENGINE_V26[(N, K, e)]
                RU = ENGINE_V26_LOOP.get((N, K, e), 0)
                name = (f"gemv_fp8_v26lp<{S}, {RP}, {e}, {U}, {K // 512}, {mb or 1}, " + {0: "false, false", 1: "true, false", 2: "true, true"}[E] + f", {RU}>"
                        if RU else f"gemv_fp8_v26<{S}, {RP}, {e}, {U}, {K // 512}, {mb or 1}" + {0: ">", 1: ", true>", 2: ", true, true>"}[E])
            elif v in (14, 16, 18, 23):
                SK, RP, D, E, XS = ENGINE_V14[(N, K, e)]
                cfg = (S, SK, RP, D, E, mb or 1, KS, XS)
                name = _v14_name(e, cfg) if v == 14 else _v23_name(e, cfg) if v == 23 else _split_name(v, e, cfg)
            else:
                name = f"gemv_fp8_v12<{S}, {RG}, {e}, {mb or 1}>" if v == 12 else f"gemv_fp8_v11b<{S}, {RG}, {e}, {mb}>" if mb else f"gemv_fp8_v11<{S}, {RG}, {e}>"
            assert v in (11, 12, 14, 16, 18, 23, 26) and name in ENGINE_KERNELS, (N, K, e)
    hv, SR, U, RG, BPS = ENGINE_CHOICE["lm_head"]                     # the engine's head (v6) and its 8-token build: one compile pass
    assert hv == 6 and {f"lm_head_bf16_v6<{SR}, {U}, 1, {RG}, 20>", f"lm_head_bf16_v6<{SR}, {U}, 8, {RG}, 20>"} <= set(ENGINE_KERNELS)


def test_check_ok_and_the_explorations_guard():
    "The pass rule every exploration applies, with its failing cases; and a part that raises is recorded, not fatal."
    import importlib.util
    from qwen_engine.gemv import check_ok
    good = dict(bad=0, unwritten=0)
    assert check_ok(good) and check_ok(dict(good, unwritten_epi=0, epilogue_bit_identical=True))
    for bad in (dict(good, bad=1), dict(good, unwritten=3), dict(good, unwritten_epi=1), dict(good, epilogue_bit_identical=False)):
        assert not check_ok(bad)
    from qwen_engine.runtime import repo_root
    spec = importlib.util.spec_from_file_location("explore_util", repo_root() / "results" / "explore_util.py")
    eu = importlib.util.module_from_spec(spec); spec.loader.exec_module(eu)
    rec = dict(errors=[])
    assert eu.guard(rec, "fine", lambda: 7) == 7 and rec["errors"] == []
    assert eu.guard(rec, "part x", lambda: 1 / 0) is None and rec["errors"] == ["part x: ZeroDivisionError: division by zero"]


def test_engine_configuration_helpers_agree():
    """engine_kwargs (the step's launches), engine_choice (token_graph's entries) and time_engine's baseline describe one
    configuration per shape; and the v13/v14 explorations timed V12_PLAN as their "engine" (their scripts now pin it)."""
    from qwen_engine.gemv import MODEL_SHAPES, ENGINE_V14, V12_PLAN, engine_plan, engine_kwargs, engine_choice
    for N, K, e, _ in MODEL_SHAPES:
        kw, ch = engine_kwargs(N, K, e), engine_choice(N, K, e)
        assert (kw["variant"], kw["S"], kw["RG"], kw["KS"]) == engine_plan(N, K, e) == ch[:4]
        if ch[0] in (14, 16, 18, 23):
            SK, RP, D, E, XS = ENGINE_V14[(N, K, e)]
            assert kw["D"] == ch[5] == D and kw["v13opt"] == ch[7] == (SK, RP, E, XS)
    for name in ("gemv_v13_h200", "gemv_v14_h200"):
        for r in read_record(name)["data"]["table"]:
            p = V12_PLAN[(r["N"], r["K"], r["epi"])]
            assert list(r["engine"][:3]) == [p[0], p[1], p[3]], (name, r["N"], r["K"])

def _mocked_launcher(monkeypatch):
    """gemv()'s kernel lookups and launches recorded, nothing compiled or launched, CPU tensors taken for GPU ones:
    (names asked for, launches as (grid, args, smem, kernel)). The kernel stand-ins keep the attributes gemv() sets."""
    from unittest import mock
    from qwen_engine import gemv as G
    named, grids, kerns = [], [], {}
    class Kern:
        max_dynamic_shared_size_bytes = 0
        preferred_shared_memory_carveout = -1
    def get(mod, name, together=()): named.append(name); return kerns.setdefault(name, Kern())
    monkeypatch.setattr(G, "get_kernel", get)
    monkeypatch.setattr(G, "_engine_kernel", lambda name: get("gemv", name))
    monkeypatch.setattr(G, "launch", lambda k, grid, block, args, smem=0, pdl=False: grids.append((grid, args, smem, k)))
    monkeypatch.setattr(torch.Tensor, "is_cuda", mock.PropertyMock(return_value=True))
    return named, grids

@pytest.mark.parametrize("variant", [15, 16, 18])
def test_v15_v16_sweeps_launch_through_the_launcher(monkeypatch, variant):
    """Every build the v15/v16 sweep launches (its epilogue and check_gemv's plain projection, M = 1 and 8) gets through
    gemv()'s argument checks to a kernel named in V15_KERNELS / V16_KERNELS, with KS blocks on the grid's y axis (v15:
    no scratch). (A launcher check not updated for a new variant cost a device call twice: this runs it on the CPU first.)"""
    from qwen_engine import gemv as G
    from results import explore_util
    named, grids = _mocked_launcher(monkeypatch)
    sweep, kernels = {15: (G.V15_SWEEP, G.V15_KERNELS), 16: (G.V16_SWEEP, G.V16_KERNELS), 18: (G.V18_SWEEP, G.V18_KERNELS)}[variant]
    for (N, K, epi), cfgs in sweep.items():
        q, sc = torch.zeros(N, K, dtype=torch.uint8), torch.zeros(N // 128, K // 128)
        for cfg in cfgs:
            for M in (1, 8):
                x, res = torch.zeros(M, K, dtype=torch.bfloat16), torch.zeros(M, N, dtype=torch.bfloat16)
                for e in (epi, 0):
                    G.gemv(q, sc, x, e, res if e == 1 else None, S=cfg[0], RG=1, pdl=True, **explore_util.v14_kwargs(cfg, variant=variant))
                    assert named[-1] in kernels and grids[-1][0][1] == cfg[6]
                    if variant == 15: assert grids[-1][1][-1] is grids[-1][1][-2] is grids[-1][1][4]   # partial, counters: the output (unused)
                    else: assert grids[-1][1][-1].dtype == torch.int32 and grids[-1][1][-2].dtype == torch.float32   # the split's scratch
    if variant != 15: return
    with pytest.raises(ValueError, match="KS = 1"):
        G.gemv(q, sc, x[:1], 1, res[:1], S=4, RG=1, **explore_util.v14_kwargs((4, 1, 2, 3, 1, 1, 1, 1), variant=15))

def test_v19_sweep_launches_through_the_launcher(monkeypatch):
    """Every build the v19 sweep launches (each shape's configurations at every PF; its epilogue and check_gemv's plain
    projection; M = 1 and 8) reaches a kernel named in V19_KERNELS, with PF and the split's end in its name, KS blocks on
    the grid's y axis, and the split scratch where KS = 2; PF = 0 is refused (v19 without a prefetch is v14)."""
    from qwen_engine import gemv as G
    named, grids = _mocked_launcher(monkeypatch)
    assert len(G.V19_SWEEP) == 5 and G.V19_PF == (2, 4, 8, 64)
    for (N, K, epi), cfgs in G.V19_SWEEP.items():
        q, sc = torch.zeros(N, K, dtype=torch.uint8), torch.zeros(N // 128, K // 128)
        for cfg in cfgs:
            SR, SK, RP, D, E, MB, KS, XS = cfg
            for pf in G.V19_PF:
                for M in (1, 8):
                    x, res = torch.zeros(M, K, dtype=torch.bfloat16), torch.zeros(M, N, dtype=torch.bfloat16)
                    for e in (epi, 0):
                        G.gemv(q, sc, x, e, res if e == 1 else None, S=SR, RG=2 if e == 2 else 1, pdl=True, variant=19, KS=KS, D=D, minb=MB,
                               v13opt=(SK, RP, bool(E), bool(XS), pf))
                        assert named[-1] in G.V19_KERNELS and named[-1].endswith(f", {'true' if KS == 2 and e != 2 else 'false'}, {pf}>")
                        assert grids[-1][0][1] == KS
                        if KS > 1: assert grids[-1][1][-1].dtype == torch.int32 and grids[-1][1][-2].dtype == torch.float32
    with pytest.raises(ValueError, match="PF >= 1"):
        G.gemv(q, sc, x[:1], 1, res[:1], S=4, RG=1, variant=19, KS=2, D=3, v13opt=(1, 2, True, True))

def test_v20_sweep_launches_through_the_launcher(monkeypatch):
    """Every build the v20 sweep launches (its epilogue and check_gemv's plain projection, M = 1 and 8) reaches a kernel
    named in V20_KERNELS with the split's end in its name, KS blocks on the grid's y axis, the split scratch where KS = 2,
    dynamic shared memory of exactly its ring (v20_smem of the build's RP and D), and the carveout left at the driver's
    default (asking for all shared cost 0.3 ms a token: results/carveout_h200.json)."""
    from qwen_engine import gemv as G
    named, grids = _mocked_launcher(monkeypatch)
    for (N, K, epi), cfgs in G.V20_SWEEP.items():
        q, sc = torch.zeros(N, K, dtype=torch.uint8), torch.zeros(N // 128, K // 128)
        for cfg in cfgs:
            SR, SK, RP, D, E, MB, KS, XS = cfg
            for M in (1, 8):
                x, res = torch.zeros(M, K, dtype=torch.bfloat16), torch.zeros(M, N, dtype=torch.bfloat16)
                for e in (epi, 0):
                    G.gemv(q, sc, x, e, res if e == 1 else None, S=SR, RG=2 if e == 2 else 1, pdl=True, variant=20, KS=KS, D=D, minb=MB,
                           v13opt=(SK, RP, bool(E), False))
                    rp, d = (RP, D) if M == 1 else G.V13_MULTI[:2]
                    grid, args, smem, k = grids[-1]
                    assert named[-1] in G.V20_KERNELS and named[-1].endswith(f", {'true' if KS == 2 and e != 2 else 'false'}>")
                    assert grid[1] == KS and smem == G.v20_smem(SR, SK, rp, d) and k.preferred_shared_memory_carveout == -1
                    if smem > 40 * 1024: assert k.max_dynamic_shared_size_bytes >= smem   # the opt-in (static shared memory counts too)
                    if KS > 1: assert args[-1].dtype == torch.int32 and args[-2].dtype == torch.float32

def test_v26_launches_through_the_launcher(monkeypatch):
    """The engine's gate|up (v26): M = 1 launches gemv_fp8_v26 without early loads (E = false, named without E: the build
    gemv_v26b_h200.json measured), one block of SR warps per SR row sets, K's steps in its name; the plain projection
    check_gemv runs is the same build with EPI 0; M > 1 launches v14's 8-token build (V13_MULTI), whose rows carry the same
    sums; EARLY asks for the E = true build (which lost); runs that do not divide K's steps end in a short run (v26g); a
    run longer than K, or a K split, is refused.
    out_proj, q|gate|k|v, qkv|z and down launch their EK builds (early 2), one block per SR row sets, no split and no scratch."""
    from qwen_engine import gemv as G
    named, grids = _mocked_launcher(monkeypatch)
    N, K = 34816, 5120
    q, sc = torch.zeros(N, K, dtype=torch.uint8), torch.zeros(N // 128, K // 128)
    kw = G.engine_kwargs(N, K, 2)
    assert (kw["variant"], kw["S"], kw["D"], kw["v13opt"][1:3], kw["minb"]) == (26, 2, 2, (1, False), 8)
    for e in (2, 0):
        G.gemv(q, sc, torch.zeros(1, K, dtype=torch.bfloat16), e, None, pdl=True, **kw)
        assert named[-1] == f"gemv_fp8_v26<2, 1, {e}, 2, 10, 8>" and grids[-1][0] == (8704,)   # 17,408 row sets (a pair each), 2 a block
    assert named[-2] in G.ENGINE_KERNELS
    G.gemv(q, sc, torch.zeros(5, K, dtype=torch.bfloat16), 2, None, pdl=True, **kw)
    assert named[-1] == f"gemv_fp8_v14<2, 1, {G.V13_MULTI[0]}, 2, 8, {G.V13_MULTI[1]}, true, false, {G.V13_MULTI[2]}, false>"
    G.gemv(q, sc, torch.zeros(1, K, dtype=torch.bfloat16), 2, None, **dict(kw, v13opt=(1, 1, True, False)))
    assert named[-1] == "gemv_fp8_v26<2, 1, 2, 2, 10, 8, true>"
    G.gemv(q, sc, torch.zeros(1, K, dtype=torch.bfloat16), 2, None, **dict(kw, D=3))          # 10 steps in runs of 3: a short last run (v26g)
    assert named[-1] == "gemv_fp8_v26<2, 1, 2, 3, 10, 8>"
    with pytest.raises(ValueError, match="runs of 11 steps"):
        G.gemv(q, sc, torch.zeros(1, K, dtype=torch.bfloat16), 2, None, **dict(kw, D=11))
    with pytest.raises(ValueError, match="KS = 1"):
        G.gemv(q, sc, torch.zeros(1, K, dtype=torch.bfloat16), 2, None, **dict(kw, KS=2))
    for bad in (3, 1):                                                # v26lp: an even number of runs a loop trip
        with pytest.raises(ValueError, match="even number"):
            G.gemv(q, sc, torch.zeros(1, K, dtype=torch.bfloat16), 2, None, **dict(kw, v13opt=(1, 1, 0, False, bad)))
    G.gemv(q, sc, torch.zeros(1, K, dtype=torch.bfloat16), 2, None, **dict(kw, v13opt=(1, 1, 0, False, 2)))
    assert named[-1] == "gemv_fp8_v26lp<2, 1, 2, 2, 10, 8, false, false, 2>"
    for (N, K, e), (name, grid) in {(5120, 6144, 1): ("gemv_fp8_v26<20, 1, 1, 3, 12, 1, true, true>", 128),    # EK: early 2; one block an SM
                                    (14336, 5120, 0): ("gemv_fp8_v26<2, 2, 0, 3, 10, 7, true, true>", 1792),
                                    (16384, 5120, 0): ("gemv_fp8_v26<2, 2, 0, 3, 10, 8, true, true>", 2048),
                                    (5120, 17408, 1): ("gemv_fp8_v26lp<20, 1, 1, 2, 34, 1, true, true, 2>", 128)}.items():
        kw = G.engine_kwargs(N, K, e)
        assert kw["variant"] == 26 and kw["KS"] == 1 and kw["v13opt"][2] == 2 and G.engine_scratch(N, K, e) is None
        q, sc = torch.zeros(N, K, dtype=torch.uint8), torch.zeros(N // 128, K // 128)
        G.gemv(q, sc, torch.zeros(1, K, dtype=torch.bfloat16), e, torch.zeros(1, N, dtype=torch.bfloat16) if e == 1 else None, pdl=True, **kw)
        assert named[-1] == name and grids[-1][0] == (grid,) and name in G.ENGINE_KERNELS

def test_engine_record_multirow_identity():
    """The engine's verification record (results/gemv_quick.py) holds, for every model shape, its plan's M = 8 rows
    bit-identical to M = 1 calls and 20 identical repeats: gate|up's M = 1 call is v26 and its M = 8 call v14's 8-token build."""
    from qwen_engine.gemv import MODEL_SHAPES
    d = read_record("gemv_engine_h200")["data"]
    assert {(r["N"], r["K"], r["epi"]) for r in d["multirow"]} == {(N, K, e) for N, K, e, _ in MODEL_SHAPES}
    assert all(r["multirow_bit_identical"] and r["repeat_bit_identical"] for r in d["multirow"])
    assert all(c["ok"] for c in d["checks"]) and len(d["checks"]) == 22
    assert [r["variant"] for r in d["multirow"] if r["N"] == 34816] == [26]

def test_wins_in_both_repeats():
    "The explorations' win rule: faster than the engine by more than the margin in both repeats; the least total of those; a tie or one slow repeat is no win."
    from results import explore_util
    t = lambda cfg, us: dict(N=1, K=2, cfg=cfg, us=us)
    rec = dict(timings=[t("engine", 10.0), t("engine", 10.0), t([1], 9.0), t([1], 9.5), t([2], 8.0), t([2], 10.5), t([3], 9.95), t([3], 9.0),
                        t([4], 9.6), t([4], 9.6)])
    assert explore_util.wins_in_both_repeats(rec, {(1, 2, 0): [(1,), (2,), (3,), (4,)]}, 0.01) == {(1, 2, 0): (1,)}
    assert explore_util.wins_in_both_repeats(rec, {(1, 2, 0): [(2,), (3,)]}, 0.01) == {}          # one repeat slower; within the margin once
    assert explore_util.wins_in_both_repeats(rec, {(1, 2, 0): [(1,), (4,)]}, 0.08) == {}          # a wider margin: neither

def test_launched_names_is_a_dry_pass(monkeypatch):
    "explore_util.launched_names: the kernels a call would launch, in order, nothing launched, the launcher restored after."
    from unittest import mock
    from qwen_engine import gemv as G
    from results import explore_util
    monkeypatch.setattr(torch.Tensor, "is_cuda", mock.PropertyMock(return_value=True))
    before = (G.get_kernel, G._engine_kernel, G.launch)
    q, sc = torch.zeros(5120, 6144, dtype=torch.uint8), torch.zeros(40, 48)
    x, res = torch.zeros(1, 6144, dtype=torch.bfloat16), torch.zeros(1, 5120, dtype=torch.bfloat16)
    y = torch.full((1, 5120), 7.0, dtype=torch.bfloat16)
    q2, sc2, x2 = torch.zeros(5120, 17408, dtype=torch.uint8), torch.zeros(40, 136), torch.zeros(1, 17408, dtype=torch.bfloat16)
    q3, sc3, x3 = torch.zeros(16384, 5120, dtype=torch.uint8), torch.zeros(128, 40), torch.zeros(1, 5120, dtype=torch.bfloat16)
    names = explore_util.launched_names(lambda: (G.engine_gemv(q, sc, x, 1, res, out=y, scratch=G.engine_scratch(5120, 6144, 1, device="cpu")),
                                                 G.gemv(q, sc, x, 0, None, S=4, RG=1, variant=11),
                                                 G.engine_gemv(q2, sc2, x2, 1, res, out=y, scratch=G.engine_scratch(5120, 17408, 1, device="cpu")),
                                                 G.engine_gemv(q3, sc3, x3, 0, None, out=torch.zeros(1, 16384, dtype=torch.bfloat16), scratch=None)))
    assert names == ("gemv_fp8_v26<20, 1, 1, 3, 12, 1, true, true>", "gemv_fp8_v11<4, 1, 0>",     # the engine's builds keep MINB
                     "gemv_fp8_v26lp<20, 1, 1, 2, 34, 1, true, true, 2>", "gemv_fp8_v26<2, 2, 0, 3, 10, 8, true, true>")
    assert (G.get_kernel, G._engine_kernel, G.launch) == before and bool((y == 7).all())

def test_split_scratch_starts_at_zero():
    "v18 reads the split scratch as one zeroed 64-bit exchange word per output and token (16 N floats for KS = 2): v13_scratch zeroes it, and is big enough."
    from qwen_engine.gemv import v13_scratch, engine_scratch, MODEL_SHAPES, ENGINE_V14
    for N, K, epi in ((5120, 6144, 1), (5120, 17408, 1)):            # v18's and v23's split of 2, at their configurations (ENGINE_V14)
        part, cnt = v13_scratch(N, K, epi, 4, ENGINE_V14[(N, K, epi)][1], 2, device="cpu")
        assert part.numel() >= 16 * N and not part.any() and not cnt.any()
    assert all(engine_scratch(N, K, epi, device="cpu") is None for N, K, epi, _ in MODEL_SHAPES)   # the engine's v26 has no split
    part, _ = v13_scratch(5120, 6144, 1, 4, 1, 2, device="cpu")               # the M = 8 build's RP = 1
    assert part.numel() >= 16 * 5120 and not part.any()

def test_standing_record():
    "The one-run standing of the engine's GEMV: every shape twice, each % recomputes from bytes / time / the run's bandwidth; faster than cuBLAS."
    from qwen_engine.gemv import MODEL_SHAPES, bytes_of, ENGINE_V26
    d = read_record("gemv_standing_h200")["data"]
    bw = d["bandwidth_tbps"]
    assert not d["errors"] and len(d["shapes"]) == 2 * len(MODEL_SHAPES) and len(d["head"]) == 2
    for r in d["shapes"]:
        assert r["bytes"] == bytes_of(r["N"], r["K"], 1, r["epi"])
        assert abs(r["engine"] - r["bytes"] / (r["engine_us"] * 1e-6) / (bw * 1e12)) < 1e-9
        assert abs(r["stream"] - r["N"] * r["K"] / (r["stream_us"] * 1e-6) / (bw * 1e12)) < 1e-9
        assert r["engine_us"] < r["cublas_us"]                                       # faster than the library path
        ek = ENGINE_V26.get((r["N"], r["K"], r["epi"]), (0, 0, 0))[2] == 2
        assert r["stream_us"] < r["engine_us"] or ek      # below a stream that waits first, unless it asks first (EK: out_proj passes it)
    assert d["token"]["pdl"]["ms"] < d["token"]["plain"]["ms"]

def test_head_v3_launcher(monkeypatch):
    "lm_head with v3 (or S given as its tuple): the M = 1 build at the configuration's ring, the 8-token build for M > 1, v2's 16-row grid; a block that is not 16 rows is refused."
    from qwen_engine import gemv as G
    named, grids = _mocked_launcher(monkeypatch)
    W, x1, x3 = torch.zeros(1000, 512, dtype=torch.bfloat16), torch.zeros(1, 512, dtype=torch.bfloat16), torch.zeros(3, 512, dtype=torch.bfloat16)
    for SR, RP, D in G.HEAD_V3_SWEEP:
        G.lm_head(W, x1, S=(SR, RP, D))
        assert named[-2] == f"lm_head_bf16_v3<{SR}, {RP}, 1, {D}>" and grids[-2][0] == (63,) and named[-1] == "argmax_partials"
        G.lm_head(W, x3, v3=(SR, RP, D))
        assert named[-2] == f"lm_head_bf16_v3<{SR}, {RP}, 8, 2>" and named[-2] in G.HEAD_V3_KERNELS
    G.lm_head(W, x1, S=8)
    assert named[-2] == "lm_head_bf16_v2<8>"
    with pytest.raises(ValueError, match="16 rows a block"):
        G.lm_head(W, x1, v3=(4, 1, 3))

def test_head_v4_launcher(monkeypatch):
    "lm_head with a v4 tuple (SR, RP, D, NR): lm_head_bf16_v4 on a grid of 16 NR rows a block, partials fewer than v2's scratch holds."
    from qwen_engine import gemv as G
    named, grids = _mocked_launcher(monkeypatch)
    W, x1, x3 = torch.zeros(1000, 512, dtype=torch.bfloat16), torch.zeros(1, 512, dtype=torch.bfloat16), torch.zeros(3, 512, dtype=torch.bfloat16)
    for SR, RP, D, NR in G.HEAD_V4_SWEEP:
        G.lm_head(W, x1, S=(SR, RP, D, NR))
        assert named[-2] == f"lm_head_bf16_v4<{SR}, {RP}, 1, {D}, {NR}>" and named[-2] in G.HEAD_V4_KERNELS
        assert grids[-2][0] == (-(-1000 // (16 * NR)),) and grids[-1][1][2] == -(-1000 // (16 * NR))   # argmax over that many partials
        G.lm_head(W, x3, v3=(SR, RP, D, NR))
        assert named[-2] == f"lm_head_bf16_v4<{SR}, {RP}, 8, 2, {NR}>" and named[-2] in G.HEAD_V4_KERNELS
    # the engine's choice on a K with no whole 512-wide step (the tiny model's 256): v2<8>, not an error
    G.lm_head(torch.zeros(1000, 256, dtype=torch.bfloat16), torch.zeros(1, 256, dtype=torch.bfloat16), S=G.ENGINE_CHOICE["lm_head"])
    assert named[-2] == "lm_head_bf16_v2<8>" and grids[-2][0] == (63,)
    monkeypatch.setattr(G, "_sms", lambda: 132)
    with pytest.raises(ValueError, match="must divide a row's 1 chunks"):   # asked for by name, it is refused
        G.lm_head(torch.zeros(1000, 256, dtype=torch.bfloat16), torch.zeros(1, 256, dtype=torch.bfloat16), v3=G.ENGINE_CHOICE["lm_head"])
    with pytest.raises(ValueError, match="multiple of 512"):                 # and so is v4
        G.lm_head(torch.zeros(1000, 256, dtype=torch.bfloat16), torch.zeros(1, 256, dtype=torch.bfloat16), v3=G.HEAD_V4_SWEEP[0])
    # v5-v8: one resident wave (BPS blocks an SM, fewer if the row set is small), argmax over that many partials; an
    # explicit configuration wins over a tuple S (it did not, and explore_head_warm.py timed the engine's head throughout)
    W5, x5 = torch.zeros(64, 5120, dtype=torch.bfloat16), torch.zeros(1, 5120, dtype=torch.bfloat16)
    vocab = torch.zeros(248320, dtype=torch.int32)                           # a row set the vocabulary's size (of one row)
    for cfg in G.HEAD_V5_SWEEP + G.HEAD_V6_SWEEP + G.HEAD_V7_SWEEP + G.HEAD_V8_SWEEP:
        hv, SR, U, RG, BPS = cfg
        G.lm_head(W5, x5, rowset=vocab, S=G.ENGINE_CHOICE["lm_head"], v3=cfg)
        want = {5: f"lm_head_bf16_v5<{SR}, {U}, 1, {RG}>", 6: f"lm_head_bf16_v6<{SR}, {U}, 1, {RG}, 20>", 7: f"lm_head_bf16_v7<{SR}, 1, {RG}, 20>",
                8: f"lm_head_bf16_v8<{SR}, {U}, 1, {RG}, 20>"}[hv]
        assert named[-2] == want and grids[-2][0] == (min(132 * BPS, -(-(-(-248320 // RG)) // SR)),) and grids[-1][1][2] == grids[-2][0][0], cfg
        nb = grids[-2][0][0]; MR = -(-(-(-248320 // RG)) // (nb * SR)) * RG          # the most rows a warp takes
        want_smem = 5120 * 2 + SR * MR * 4 + (SR * U * 10 * 512 if hv == 8 else 0)   # the activation, the row ids (v8: its rings)
        assert grids[-2][2] == want_smem, (cfg, grids[-2][2], want_smem)
    G.lm_head(W5, x5[:1], rowset=torch.arange(100, dtype=torch.int32), v3=(6, 8, 20, 2, 2))
    assert grids[-2][0] == (7,)                                               # 50 groups of 2 rows over 8 warps a block


def test_head_keys_order_and_round_trip():
    """head_keys (the kernel's head_key in torch) orders as (logit descending, id ascending) under signed integer order,
    for negative, zero and positive logits and -inf; decode_head_keys inverts it, and the no-row key decodes to (-inf, -1).
    Negative control: plain float bits as a key misorder negative logits."""
    from qwen_engine.gemv import head_keys, decode_head_keys
    vals = torch.tensor([-3.5, -0.0, 0.0, 1.25, float("-inf"), 1.25, -3.5, 7.0]).to(torch.bfloat16).float()
    ids = torch.tensor([5, 2, 9, 40, 1, 7, 3, 100000])
    keys = head_keys(vals, ids)
    order = torch.argsort(keys, descending=True).tolist()
    assert order == sorted(range(8), key=lambda i: (-vals[i].item(), ids[i].item()))     # Python's float order: -0 == +0
    assert [ids[i].item() for i in order] == [100000, 7, 40, 2, 9, 3, 5, 1]     # 7.0; 1.25 (ids 7, 40); 0 (2 is -0, 9 is +0); -3.5; -inf
    v, i = decode_head_keys(keys)
    assert torch.equal(v.view(torch.int32), (vals + 0.0).view(torch.int32)) and torch.equal(i, ids.int())   # -0 comes back as +0
    nv, ni = decode_head_keys(torch.tensor([torch.iinfo(torch.int64).min]))
    assert nv.item() == float("-inf") and ni.item() == -1
    raw = vals.view(torch.int32).long() * (1 << 32)                             # negative control: unflipped bits
    assert torch.argsort(raw, descending=True).tolist() != order


def test_head_topk_merge_is_exact():
    """head_topk over per-block top-k partials (as lm_head_bf16_v9 writes them, padded with the no-row key) equals the
    top k of all logits by (logit descending, id ascending), with many ties (logits on a coarse grid)."""
    from qwen_engine.gemv import head_keys, head_topk_reference as head_topk
    g = torch.Generator().manual_seed(0)
    M, n, nb, k = 2, 5000, 7, 20
    lg = (torch.randint(-40, 40, (M, n), generator=g).float() / 8).to(torch.bfloat16)     # ties everywhere
    keys = head_keys(lg.float(), torch.arange(n).expand(M, -1))
    per = -(-n // nb)
    part = torch.full((M, nb * k), torch.iinfo(torch.int64).min)
    for b in range(nb):
        blk = keys[:, b * per:(b + 1) * per]
        top = torch.sort(blk, dim=1, descending=True).values[:, :k]
        part[:, b * k:b * k + top.shape[1]] = top
    vals, ids = head_topk(part, k)
    for m in range(M):
        want = sorted(range(n), key=lambda i: (-lg[m, i].item(), i))[:k]
        assert ids[m].tolist() == want and torch.equal(vals[m], lg[m, want].float())
    assert ids[0, 0] == torch.argmax(lg[0].float())                            # argmax: the first maximum, the lowest id


def test_head_v9_launcher(monkeypatch):
    "lm_head(topk=k): lm_head_bf16_v9 with v6's grid, the logits' shared memory, a partials buffer [M, blocks k]; refused off v6 and past 128 rows a warp."
    from qwen_engine import gemv as G
    named, grids = _mocked_launcher(monkeypatch)
    monkeypatch.setattr(G, "_sms", lambda: 132)
    W5, vocab = torch.zeros(64, 5120, dtype=torch.bfloat16), torch.zeros(248320, dtype=torch.int32)
    for M in (1, 3):
        ids, lg, part = G.lm_head(W5, torch.zeros(M, 5120, dtype=torch.bfloat16), rowset=vocab, S=G.ENGINE_CHOICE["lm_head"], topk=20)
        assert named[-2] == f"lm_head_bf16_v9<8, 20, {1 if M == 1 else 8}, 2, 20, 20>" and grids[-2][0] == (264,)
        MR = -(-124160 // (264 * 8)) * 2                                       # 118 rows a warp at most: 944 keys a token, 1,024 sorted
        assert MR == 118 and grids[-2][2] == (1 if M == 1 else 8) * (5120 * 2 + 8 * MR * 2) + 8 * MR * 4   # activation, logits; ids
        assert part.shape == (M, 264 * 20) and part.dtype == torch.int64 and grids[-2][1][-1].numel() == M * 264 * 20
    with pytest.raises(ValueError, match="v6 head only"):
        G.lm_head(W5, torch.zeros(1, 5120, dtype=torch.bfloat16), S=8, topk=20)
    with pytest.raises(ValueError, match="hold 128 rows a warp"):              # a row set past 128 rows a warp of the grid
        G.lm_head(W5, torch.zeros(1, 5120, dtype=torch.bfloat16), rowset=torch.zeros(132 * 2 * 8 * 130, dtype=torch.int32), S=G.ENGINE_CHOICE["lm_head"], topk=20)
    with pytest.raises(ValueError, match="top-k of 1 to 256"):
        G.lm_head(W5, torch.zeros(1, 5120, dtype=torch.bfloat16), S=G.ENGINE_CHOICE["lm_head"], topk=300)


def test_head_topk_record():
    """head_topk_h200: every check true at k = 1, 20, 64 and M = 1, 3 (the merged top k = the top k of the call's own
    logits, v6's logits and argmax, the merge kernel = torch's, a row set, a three-way tie); the percentages recompute;
    top-20 partials keep the head above the 95 % bar, and the merge kernel beats torch.topk at k = 20."""
    d = read_record("head_topk_h200")["data"]
    assert not d["errors"] and {(c["k"], c["M"]) for c in d["checks"]} == {(k, M) for k in (1, 20, 64) for M in (1, 3)}
    assert all(v for c in d["checks"] for n, v in c.items() if n not in ("k", "M")) and all(len(c) == 8 for c in d["checks"])
    for t in d["timings"]: assert abs(t["frac"] - 248320 * 5120 * 2 / t["us"] / 1e6 / d["bandwidth_tbps"]) < 1e-9
    frac = lambda k: min(t["frac"] for t in d["timings"] if t["M"] == 1 and t["k"] == k)
    assert frac(20) >= 0.95 and frac(0) > frac(20) > frac(64)
    merge = {(m["how"], m["k"]): m["us"] for m in d["merge"] if m["M"] == 1}
    assert merge[("kernel", 20)] < merge[("torch", 20)]


def test_v26er_same_machine_code():
    """Chapter 06's reading of gemv_v26er_h200.json: asking for each step's refill right after its math (ER) instead of at the top of
    the next run, or each step's activation a step ahead (XP), is the same machine code as v26 on four of the engine's five
    builds (ptxas schedules the unrolled body as a whole and hoists the loads as far as the registers allow either way), so
    the tie measured for ER is no surprise and XP was not run. down's builds are scheduled differently: the negative
    control, a comparison that can fail."""
    from qwen_engine.runtime import sass_bodies, sass_tool, mangled_prefix
    from qwen_engine.gemv import ENGINE_CHOICE, ENGINE_V26, ENGINE_MINB
    if not all(sass_tool(t) for t in ("nvcc", "cuobjdump", "nvdisasm")): pytest.skip("needs nvcc, cuobjdump and nvdisasm (bash .ci/setup dev)")
    sig = "(const unsigned char*, const float*, const unsigned short*, const unsigned short*, unsigned short*, int, int, int, int, float*, unsigned*);\n"
    pairs = {}
    builds = {**{k: (c[1], *ENGINE_V26[k], ENGINE_MINB[k]) for k, c in ENGINE_CHOICE.items() if k != "lm_head"},
              (5120, 17408, 1): (2, 2, 4, 2, 5)}              # down as gemv_v26er_h200 measured it (the engine's unrolled build then)
    for (N, K, epi), (SR, RP, U, E, MB) in builds.items():
        args = f"{SR}, {RP}, {epi}, {U}, {K // 512}, {MB}, " + {0: "false, false", 1: "true, false", 2: "true, true"}[E]
        pairs[(N, K)] = (f"gemv_fp8_v26<{args}, false>", f"gemv_fp8_v26er<{args}>", f"gemv_fp8_v26xp<{args}>")   # every argument spelled: the symbols' prefixes
    src = '#define __CUDACC_RTC__ 1\n#include "gemv.cu"\n' + "".join(f"template __global__ void {b}{sig}" for p in pairs.values() for b in p)
    bodies = sass_bodies(src)
    body = lambda b: next(v for s, v in bodies.items() if s.startswith(mangled_prefix(b)))
    same = {k: (body(a) == body(b), body(a) == body(c)) for k, (a, b, c) in pairs.items()}
    assert same == {(14336, 5120): (True, True), (16384, 5120): (True, True), (5120, 6144): (True, True), (34816, 5120): (True, True),
                    (5120, 17408): (False, False)}, same


def test_v26lp_refills_leave_together():
    """Chapter 06's reading of v26lp (down, one row pair a warp, runs of 2): in the loop (RU 2) each run's four refill loads
    leave together ahead of the run's eight mmas, as the source asks; in the same build unrolled (RU 0) ptxas spreads them
    among the mmas. The count of mmas ahead of each weight load in the machine code (sm_90a): the loop's are all multiples
    of 8 (a run's mmas), the unrolled build's are not (the negative control: a comparison that can fail)."""
    import bisect, re
    from qwen_engine.runtime import sass_tool, sass_of, mangled_prefix
    if not all(sass_tool(t) for t in ("nvcc", "cuobjdump", "nvdisasm")): pytest.skip("needs nvcc, cuobjdump and nvdisasm (bash .ci/setup dev)")
    sig = "(const unsigned char*, const float*, const unsigned short*, const unsigned short*, unsigned short*, int, int, int, int, float*, unsigned*);\n"
    builds = {ru: f"gemv_fp8_v26lp<4, 1, 1, 2, 34, 5, true, true, {ru}>" for ru in (0, 2)}
    sass = sass_of('#define __CUDACC_RTC__ 1\n#include "gemv.cu"\n' + "".join(f"template __global__ void {b}{sig}" for b in builds.values()))
    ahead = {}
    for blk in sass.split("Function : ")[1:]:
        ru = next((r for r, b in builds.items() if blk.split()[0].startswith(mangled_prefix(b))), None)
        if ru is None: continue
        ins = [m.group(1) for l in blk.splitlines() if (m := re.search(r"/\*[0-9a-f]{4,}\*/\s+(.*?);", l))]
        hm = [i for i, s in enumerate(ins) if "HMMA" in s]
        ahead[ru] = [bisect.bisect_left(hm, i) for i, s in enumerate(ins) if "LDG.E.NA.128" in s]
    assert set(ahead) == {0, 2}
    assert all(n % 8 == 0 for n in ahead[2]) and len(ahead[2]) == 16
    assert sum(n % 8 != 0 for n in ahead[0]) >= 8 and len(ahead[0]) == 72


def test_v26lp_section_records():
    """The records chapter 06's v26lp section reads are committed (its cell skips quietly without them): the runs, the
    sizes, and the two Nsight Compute texts; each run's builds bit-identical to the engine's kernel."""
    from qwen_engine.runtime import repo_root
    for n in ("gemv_v26lp_h200", "gemv_v26lp2_h200", "gemv_v26lp3_h200", "gemv_v26lp4_h200", "gemv_v26lp5_h200", "gemv_v26lp_step_h200",
              "gemv_v26ns_h200", "gemv_v26xs3_h200", "gemv_v26xs45_h200"):
        d = read_record(n)["data"]
        assert d["identity"] and all(i["identical"] and i["repeat_identical"] for i in d["identity"]) and not d["errors"], n
    assert set(read_record("gemv_sizes_sm90a")["data"]["bytes"]) >= {"gemv_fp8_v26lp<4, 1, 1, 2, 34, 5, true, true, 2>",
                                                                     "gemv_fp8_v26<2, 2, 1, 4, 34, 5, true, true, false>"}
    for f in ("gemv_ncu_down_h200.txt", "ncu_stalls_h200.txt"):
        t = (repo_root() / "results" / f).read_text()
        assert t.count("smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio") >= 4, f


def test_v26_family_names(monkeypatch):
    "explore_gemv_v26d.family: a v26-family build's name from a configuration, extra template arguments after E, EK."
    from qwen_engine.runtime import repo_root
    monkeypatch.syspath_prepend(str(repo_root() / "results"))          # the scripts import each other by bare name
    import explore_gemv_v26d as D
    c = (4, 1, 2, 5, 34, 2, 2, 27)
    assert D.family("gemv_fp8_v26lp", extra=1)(1, c) == "gemv_fp8_v26lp<4, 1, 1, 2, 34, 5, true, true, 2>"
    assert D.family("gemv_fp8_v26ns")(0, c[:5] + (0, 3, 3)) == "gemv_fp8_v26ns<4, 1, 0, 2, 34, 5, false, false, 3, 3>"
    assert D.family("gemv_fp8_v26xs", fixed=(3,))(2, c[:6]) == "gemv_fp8_v26xs<4, 1, 2, 2, 34, 5, true, true, 3>"


def test_gemv_sizes_record_is_the_code():
    "gemv_sizes_sm90a.json still holds what nvcc makes of today's gemv.cu (the chapter's chart reads it): recomputed, byte for byte."
    from qwen_engine.runtime import sass_tool
    if not all(sass_tool(t) for t in ("nvcc", "cuobjdump", "nvdisasm")): pytest.skip("needs nvcc, cuobjdump and nvdisasm (bash .ci/setup dev)")
    from results import gemv_sizes
    rec = read_record("gemv_sizes_sm90a")["data"]["bytes"]
    assert set(rec) == set(gemv_sizes.BUILDS) and gemv_sizes.sizes() == rec


def test_route_shapes_sends_only_the_plans_shapes(monkeypatch):
    "explore_util.route_shapes: a plan's shapes go to gemv with kw(shape, cfg) and the step's PDL; every other shape to the engine's launcher."
    from types import SimpleNamespace
    from qwen_engine import gemv as G
    from qwen_engine.step import DecodeStep
    from results import explore_util
    engine, routed = [], []
    monkeypatch.setattr(DecodeStep, "_gemv", lambda self, wq, x, epi, o, res=None: engine.append((tuple(wq[0].shape), epi)))
    monkeypatch.setattr(G, "gemv", lambda q, sc, x, epi, res, **k: routed.append((tuple(q.shape), epi, k)))
    apply = explore_util.route_shapes(lambda shape, c: dict(S=c[0], minb=c[1]))
    step = SimpleNamespace(pdl=True)
    apply(step, {(5120, 6144, 1): (20, 1)})
    w = lambda N, K: (torch.zeros(N, K, dtype=torch.uint8), torch.zeros(N // 128, K // 128))
    step._gemv(w(5120, 6144), None, 1, None, None)
    step._gemv(w(5120, 17408), None, 1, None, None)
    assert engine == [((5120, 17408), 1)]
    assert [(s, e) for s, e, _ in routed] == [((5120, 6144), 1)] and routed[0][2] == dict(out=None, scratch=None, pdl=True, S=20, minb=1)


def test_one_block_an_sm_m8_keeps_four_warp_blocks(monkeypatch):
    """down and out_proj run one block of 20 warps an SM at M = 1 (ENGINE_CHOICE); their M = 8 call (speculative verify) runs
    v14's 8-token build in 4-warp blocks, as before that change: 128 threads a block, the grid of 4-warp row sets, the
    same name the M = 8 build had. The M = 1 call is the 20-warp build (the control: the mapping applies to M > 1 only)."""
    from qwen_engine import gemv as G
    named, grids = _mocked_launcher(monkeypatch)
    for N, K in ((5120, 17408), (5120, 6144)):
        kw = G.engine_kwargs(N, K, 1)
        assert kw["S"] == 20 and kw["minb"] == 1
        q, sc = torch.zeros(N, K, dtype=torch.uint8), torch.zeros(N // 128, K // 128)
        for M in (1, 8):
            x, res = torch.zeros(M, K, dtype=torch.bfloat16), torch.zeros(M, N, dtype=torch.bfloat16)
            G.gemv(q, sc, x, 1, res, pdl=True, **kw)
            if M == 1: assert named[-1].startswith("gemv_fp8_v26") and named[-1].split("<")[1].startswith("20, ") and grids[-1][0] == (128,)
            else: assert named[-1].startswith("gemv_fp8_v14<4, ") and grids[-1][0][0] == N // (4 * 2 * G.V13_MULTI[0])


def test_timeline_constants_agree():
    "The runtime's timeline buffer has the slots common.cu's timeline build writes (launches x blocks, 8 words a slot)."
    import re
    from qwen_engine import runtime as R
    src = (R.kernel_dir() / "common.cu").read_text()
    macro = lambda n: int(re.search(rf"#define {n} (\d+)", src).group(1))
    assert (macro("QE_TL_LAUNCHES"), macro("QE_TL_BLOCKS")) == (R.TL_LAUNCHES, R.TL_BLOCKS)
    assert "qe_timeline + 8 * ((g % QE_TL_LAUNCHES) * QE_TL_BLOCKS + b)" in src
    import inspect
    assert "view(-1, 8)" in inspect.getsource(R.timeline_records) and R.timeline_buffer.__wrapped__.__doc__.startswith("The timeline build's records (int64, 8 a slot")


def test_v26tp_v26n_launch_through_the_launcher(monkeypatch):
    """v26tp, v26n and v26fb through gemv(): v26x=dict(tb=TB) names gemv_fp8_v26tp with v26's grid, near=True
    gemv_fp8_v26n<SR, RP, U, KST, MINB, E, EK> with the same grid as v26's SwiGLU (a pair of warps covers what two v26
    warps cover), fb=(FB, FR) gemv_fp8_v26fb; without it the engine's name as before; the combinations that have no build,
    two at once and unknown keys raise."""
    from qwen_engine import gemv as G
    named, grids = _mocked_launcher(monkeypatch)
    q, sc, x = torch.zeros(34816, 5120, dtype=torch.uint8), torch.zeros(272, 40), torch.zeros(1, 5120, dtype=torch.bfloat16)
    base = dict(S=2, RG=2, variant=26, KS=1, D=2, minb=8)
    G.gemv(q, sc, x, 2, None, v13opt=(1, 1, 0, False), v26x=dict(tb=528), **base)
    assert named[-1] == "gemv_fp8_v26tp<2, 1, 2, 2, 10, 8, false, false, 528>" and grids[-1][0] == (8704,)
    G.gemv(q, sc, x, 2, None, v13opt=(1, 1, 0, False), v26x=dict(near=True), **base)
    assert named[-1] == "gemv_fp8_v26n<2, 1, 2, 10, 8, false, false>" and grids[-1][0] == (8704,)
    G.gemv(q, sc, x, 2, None, v13opt=(1, 1, 0, False), v26x=dict(fb=(1056, 2)), **base)
    assert named[-1] == "gemv_fp8_v26fb<2, 1, 2, 2, 10, 8, false, false, 1056, 2>" and grids[-1][0] == (8704,)
    G.gemv(q, sc, x, 2, None, v13opt=(1, 1, 0, False), **base)
    assert named[-1] == "gemv_fp8_v26<2, 1, 2, 2, 10, 8>" and grids[-1][0] == (8704,)
    with pytest.raises(ValueError): G.gemv(q, sc, x, 2, None, v13opt=(1, 1, 0, False), v26x=dict(fb=(9000, 1)), **base)   # FB past the grid
    with pytest.raises(ValueError): G.gemv(q, sc, x, 2, None, v13opt=(1, 1, 0, False), v26x=dict(tb=9000), **base)     # TB past the grid
    with pytest.raises(ValueError): G.gemv(q, sc, x, 2, None, v13opt=(1, 1, 0, False), v26x=dict(tb=528, near=True), **base)   # one at a time
    with pytest.raises(ValueError): G.gemv(q, sc, x, 2, None, v13opt=(1, 1, 0, False), v26x=dict(tp=528), **base)   # a misspelt key
    with pytest.raises(ValueError): G.gemv(q, sc, x, 2, None, v13opt=(1, 1, 0, False), v26x=dict(near=True), **dict(base, S=1))   # an odd warp count (one warp a block)
    qp, scp = torch.zeros(16384, 5120, dtype=torch.uint8), torch.zeros(128, 40)
    with pytest.raises(ValueError): G.gemv(qp, scp, x, 0, None, v13opt=(1, 2, 2, False), v26x=dict(near=True), **dict(base, RG=1, D=3))   # NEAR needs SwiGLU


def test_tail_prefetch_and_near_rows_lost():
    """gemv_tail_h200 (v26tp) and gemv_near_h200 (v26n), chapter 06 (v26fb's gemv_fb_h200 is judged by its medians in the chapter): every build bit-identical to the engine's kernel on the
    same inputs, every plan's greedy tokens the engine's, and every plan slower than every engine repeat of the step at 1K
    and at 32K: lost, so the engine runs neither."""
    from qwen_engine.gemv import ENGINE_KERNELS
    for name in ("gemv_tail_h200", "gemv_near_h200"):
        d = read_record(name)["data"]
        assert d["errors"] == [] and all(v["identical"] for vs in d["versus_engine"].values() for v in vs)
        ms = lambda p, c: [t["ms"] for t in d["timings"] if t["plan"] == p and t["ctx"] == c]
        for p in d["plans"]:
            if p == "engine": continue
            assert d["tokens"][p] == d["tokens"]["engine"] and len(ms(p, 1024)) == 3
            assert all(min(ms(p, c)) > max(ms("engine", c)) for c in (1024, 32768)), (name, p)
    assert not any("v26tp" in k or "v26n<" in k or "v26fb" in k for k in ENGINE_KERNELS)


def test_one_shape_plans_builds_the_plans(monkeypatch):
    """explore_util.one_shape_plans: the engine's plan and one plan per configuration, routed for the one shape; the extra
    step checks and times every configuration (identity_and_alone) under its label; describe() names the shape."""
    from results import explore_util
    got = {}
    monkeypatch.setattr(explore_util, "step_plans", lambda out, name, what, script, plans, apply, reps=3, tokens=True, describe=None, extra=None:
                        got.update(name=name, plans=plans, described={k: describe(v) for k, v in plans.items()}, extra=extra, reps=reps))
    monkeypatch.setattr(explore_util, "identity_and_alone", lambda rec, builds, names: got.update(builds=builds, names=names))
    shape = (34816, 5120, 2)
    explore_util.one_shape_plans("x_h200", "what", "x.py", shape, "gate|up", ((1, 2), (3, 4)), lambda s, c: dict(S=2, c=c), lambda c: f"cfg {c[0]}")
    assert got["name"] == "x_h200" and got["reps"] == 3
    assert got["plans"] == {"engine": {}, "cfg 1": {shape: (1, 2)}, "cfg 3": {shape: (3, 4)}}
    assert got["described"] == {"engine": {}, "cfg 1": {"gate|up": [1, 2]}, "cfg 3": {"gate|up": [3, 4]}}
    got["extra"](None, {})
    assert got["builds"] == {"cfg 1": (shape, dict(S=2, c=(1, 2))), "cfg 3": (shape, dict(S=2, c=(3, 4)))} and got["names"] == {shape: "gate|up"}


def test_mlp_one_launch_names_and_errors(monkeypatch):
    """v30 and v31 through mlp_one_launch: the kernel named with the model's K steps, one block of SR warps an SM, and clear
    errors for shapes that do not form one MLP at batch 1, an unknown variant, a warp count that does not divide the down
    pairs, and a sync buffer too small for PRB's marks (each raised before anything is launched)."""
    from qwen_engine import gemv as G
    named, grids = _mocked_launcher(monkeypatch)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda dev: type("P", (), dict(multi_processor_count=132))())
    I, H = 17408, 5120
    gu, dn = (torch.zeros(2 * I, H, dtype=torch.uint8), torch.zeros(2 * I // 128, H // 128)), (torch.zeros(H, I, dtype=torch.uint8), torch.zeros(H // 128, I // 128))
    x, res, y = (torch.zeros(1, H, dtype=torch.bfloat16) for _ in range(3))
    act = torch.zeros(1, I, dtype=torch.bfloat16)
    sync = torch.zeros(2, dtype=torch.int64)
    G.mlp_one_launch(gu, x, dn, res, act, y, sync)
    assert named[-1] == "gemv_mlp_v30<20, 2, 10, 2, 34, 2, 1, false, false>" and grids[-1][0] == (132,)
    G.mlp_one_launch(gu, x, dn, res, act, y, sync, variant=31)
    assert named[-1] == "gemv_mlp_v31<20, 2, 10, 2, 34, 2>" and grids[-1][0] == (132,)
    n = len(grids)
    with pytest.raises(ValueError, match="do not form one MLP"): G.mlp_one_launch(gu, x, dn, res, torch.zeros(1, H, dtype=torch.bfloat16), y, sync)
    with pytest.raises(ValueError, match="do not form one MLP"): G.mlp_one_launch(gu, x, (dn[0][:, :H], dn[1]), res, act, y, sync)
    with pytest.raises(ValueError, match="v30 or v31"): G.mlp_one_launch(gu, x, dn, res, act, y, sync, variant=29)
    with pytest.raises(ValueError, match="multiple of SR"): G.mlp_one_launch(gu, x, dn, res, act, y, sync, SR=24)
    with pytest.raises(ValueError, match="two int64"): G.mlp_one_launch(gu, x, dn, res, act, y, sync, PRB=True)
    assert len(grids) == n                                   # nothing launched by a call that raised


def test_mlp_in_one_launch_lost():
    """gemv_v30_h200, gemv_v31_h200, gemv_v30p_h200 (chapter 06): every build's outputs bit-identical to the engine's two
    launches on the same inputs, no give-ups, greedy tokens the engine's; and every build slower than the engine's pair alone
    and in every repeat of the step at 1K and 32K: lost, so the engine runs neither."""
    from qwen_engine.gemv import ENGINE_KERNELS
    for name in ("gemv_v30_h200", "gemv_v31_h200"):
        d = read_record(name)["data"]
        assert d["errors"] == [] and all(r["out_identical"] and r["giveups"] == 0 for r in d["identity"])
        assert all(r.get("act_identical", r.get("act_sentinel_after")) for r in d["identity"])
        assert all(v == 0 for v in d["giveups_at_end"].values())
        us = lambda p: [t["us"] for t in d["alone"] if t["plan"] == p]
        ms = lambda p, c: [t["ms"] for t in d["timings"] if t["plan"] == p and t["ctx"] == c]
        for p in d["plans"]:
            if p == "engine": continue
            assert d["tokens"][p] == d["tokens"]["engine"] and len(ms(p, 1024)) == 3
            assert min(us(p)) > max(us("engine pair")), (name, p)
            assert all(min(ms(p, c)) > max(ms("engine", c)) for c in (1024, 32768)), (name, p)
    p = read_record("gemv_v30p_h200")["data"]
    assert p["errors"] == [] and p["checks"]["v30 PRB"]["out_identical"] and p["checks"]["v30 GUO"]["act_identical"]
    assert not any("mlp_v3" in k for k in ENGINE_KERNELS)


def test_gateup_v32_names_grid_and_errors(monkeypatch):
    """v32 through gateup_v32: the build named with its K steps and first part, F / 2 engine blocks then one block a split
    pair; clear errors for an odd F, an F past the pairs, a first part that is not a proper part, and mismatched shapes."""
    from qwen_engine import gemv as G
    named, grids = _mocked_launcher(monkeypatch)
    q, sc = torch.zeros(34816, 5120, dtype=torch.uint8), torch.zeros(272, 40)
    x, out = torch.zeros(1, 5120, dtype=torch.bfloat16), torch.zeros(1, 17408, dtype=torch.bfloat16)
    G.gateup_v32(q, sc, x, out, 16896)
    assert named[-1] == "gemv_fp8_v32<2, 10, 8, 3>" and grids[-1][0] == (16896 // 2 + 512,) and grids[-1][1][-1] == 16896
    n = len(grids)
    for bad in (dict(F=16895), dict(F=17410), dict(F=16896, RH=5), dict(F=16896, RH=0)):
        with pytest.raises(ValueError, match="v32"): G.gateup_v32(q, sc, x, out, **bad)
    with pytest.raises(ValueError, match="do not form"): G.gateup_v32(q, sc, x, torch.zeros(1, 34816, dtype=torch.bfloat16), 16896)
    assert len(grids) == n


def test_gdn_z_gated_names_grid_and_errors(monkeypatch):
    """v33 through gdn_z_gated (chapter 08's z split): the engine's qkv|z build parameters (2 warps, 2 row pairs, runs of 3,
    8 blocks an SM), trg0 in the name, one block a 8 rows of z; the launch's y is mix, res the norm weight, partial rinv.
    Clear errors for z that is not whole heads, scales of another shape, and a mis-shaped or mis-typed operand."""
    from qwen_engine import gemv as G
    named, grids = _mocked_launcher(monkeypatch)
    q, sc = torch.zeros(6144, 5120, dtype=torch.uint8), torch.zeros(48, 40)
    x, mix, nw, rinv = torch.zeros(1, 5120, dtype=torch.bfloat16), torch.zeros(1, 6144, dtype=torch.bfloat16), torch.zeros(128, dtype=torch.bfloat16), torch.zeros(48)
    G.gdn_z_gated(q, sc, x, nw, mix, rinv)
    assert named[-1] == "gemv_fp8_v33<2, 2, 3, 10, 8, false>" and grids[-1][0] == (768,)
    args = grids[-1][1]
    assert args[3] is nw and args[4] is mix and args[9] is rinv and int(args[5]) == 6144
    G.gdn_z_gated(q, sc, x, nw, mix, rinv, trg0=True)
    assert named[-1] == "gemv_fp8_v33<2, 2, 3, 10, 8, true>"
    n = len(grids)
    with pytest.raises(ValueError, match="whole heads"): G.gdn_z_gated(q[:6100], sc, x, nw, mix, rinv)
    with pytest.raises(ValueError, match="scales"): G.gdn_z_gated(q, sc[:40], x, nw, mix, rinv)
    for bad, what in ((dict(rinv=rinv.double()), "rinv"), (dict(rinv=rinv[:47]), "rinv"), (dict(mix=mix[:, :6000]), "mix"),
                      (dict(norm_w=nw.float()), "norm_w"), (dict(x=x[:, :4096]), "x")):
        kw = dict(norm_w=nw, mix=mix, rinv=rinv, x=x) | bad
        with pytest.raises(ValueError, match=what): G.gdn_z_gated(q, sc, kw["x"], kw["norm_w"], kw["mix"], kw["rinv"])
    assert len(grids) == n


def test_down_awaiting_names_grid_and_errors(monkeypatch):
    """v34 through down_awaiting (chapter 06, the MLP's down launched while gate|up streams): the engine's down build's
    parameters (one row pair a warp, runs of 2 in loops of 2 runs, 34 steps) at each of V34_BLOCKS, one block per 2 x SR rows;
    the sentinel buffer is all 0xFFFF; clear errors for another shape, an unbuilt block shape, wrong scales or operands."""
    from qwen_engine import gemv as G
    named, grids = _mocked_launcher(monkeypatch)
    q, sc = torch.zeros(5120, 17408, dtype=torch.uint8), torch.zeros(40, 136)
    h = G.awaiting_buffer(17408, device="cpu")
    assert h.dtype == torch.bfloat16 and h.shape == (1, 17408) and bool((h.view(torch.int16) == -1).all()) and bool(torch.isnan(h).all())
    res, out, sync = torch.zeros(1, 5120, dtype=torch.bfloat16), torch.zeros(1, 5120, dtype=torch.bfloat16), torch.zeros(2, dtype=torch.int64)
    for sr, mb in G.V34_BLOCKS:
        G.down_awaiting(q, sc, h, res, out, sync, SR=sr, minb=mb)
        assert named[-1] == f"gemv_fp8_v34<{sr}, 1, 2, 34, {mb}, 2>" and grids[-1][0] == (5120 // (2 * sr),)
        G.down_awaiting(q, sc, h, res, out, sync, SR=sr, minb=mb, defer=True)
        assert named[-1] == f"gemv_fp8_v34<{sr}, 1, 2, 34, {mb}, 2, true>" and grids[-1][0] == (5120 // (2 * sr),)
    G.down_awaiting(q, sc, h, res, out, sync, waitfirst=True)
    assert named[-1] == "gemv_fp8_v34<20, 1, 2, 34, 1, 2, false, true>"
    G.down_awaiting(q, sc, h, res, out, sync, nocheck=True)
    assert named[-1] == "gemv_fp8_v34<20, 1, 2, 34, 1, 2, false, false, true>"
    G.down_awaiting(q, sc, h, res, out, sync, nocheck=True, ro=True)
    assert named[-1] == "gemv_fp8_v34<20, 1, 2, 34, 1, 2, false, false, true, true>"
    G.down_awaiting(q, sc, h, res, out, sync, waitfirst=True, nocheck=True)
    assert named[-1] == "gemv_fp8_v34<20, 1, 2, 34, 1, 2, false, true, true>"
    assert (20, 1) in G.V34_BLOCKS and G.ENGINE_CHOICE[(5120, 17408, 1)][1] == 20 and G.ENGINE_MINB[(5120, 17408, 1)] == 1   # its (20, 1) is the engine's down
    args = grids[-1][1]
    assert args[2] is h and args[3] is res and args[4] is out and args[7] is sync and int(args[6]) == 17408
    n = len(grids)
    with pytest.raises(ValueError, match="down projection"): G.down_awaiting(q[:, :5120], sc[:, :40], h, res, out, sync)
    with pytest.raises(ValueError, match="built for"): G.down_awaiting(q, sc, h, res, out, sync, SR=8, minb=2)
    with pytest.raises(ValueError, match="scales"): G.down_awaiting(q, sc.double(), h, res, out, sync)
    for bad in (dict(ro=True), dict(waitfirst=True, nocheck=True, ro=True), dict(waitfirst=True, defer=True), dict(nocheck=True, SR=4, minb=5)):
        with pytest.raises(ValueError, match="controls"): G.down_awaiting(q, sc, h, res, out, sync, **bad)
    for bad, what in ((dict(h=h[:, :17000]), "h"), (dict(res=res.float()), "res"), (dict(out=out[:, :4096]), "out"), (dict(sync=sync[:1]), "sync")):
        kw = dict(h=h, res=res, out=out, sync=sync) | bad
        with pytest.raises(ValueError, match=what): G.down_awaiting(q, sc, kw["h"], kw["res"], kw["out"], kw["sync"])
    assert len(grids) == n
    src = open(G.__file__.replace("qwen_engine/gemv.py", "kernels/gemv.cu")).read()
    assert "if (WT == 6) qe_grid_wait();" in src and "last34 = atomicAdd(sync, 1ull) + 1 == gridDim.x;" in src and "if (WT == 0 || WT == 2 || WT == 6 || WT == 7) qe_grid_launch_dependents();" in src


def test_v35_names_and_its_residual_above_the_wait(monkeypatch):
    """v35 (chapter 06: the residual read after the wait, not in the epilogue) through gemv() and the engine's switch: v26x
    re=True names gemv_fp8_v35 with the engine's down and out_proj configurations (RU 2 / 0) and v26's grid; ENGINE_RE is
    empty (measured a tie: gemv_v35_h200.json), so the engine's own names are unchanged; re with another epilogue or EK2
    raises. By SASS (nvcc): each v35 build issues its EK loads and exactly one load more (the residual, LDG.E.U16.CONSTANT)
    above the grid wait than the engine's build it is made from; the engine's builds issue none of that kind."""
    from qwen_engine import gemv as G
    from qwen_engine.step import prewait_audit
    named, grids = _mocked_launcher(monkeypatch)
    assert G.ENGINE_RE == frozenset()
    x6, x17 = torch.zeros(1, 6144, dtype=torch.bfloat16), torch.zeros(1, 17408, dtype=torch.bfloat16)
    res = torch.zeros(1, 5120, dtype=torch.bfloat16)
    for (K, x, want) in ((6144, x6, "gemv_fp8_v35<20, 1, 1, 3, 12, 1, true, true, 0>"), (17408, x17, "gemv_fp8_v35<20, 1, 1, 2, 34, 1, true, true, 2>")):
        q, sc = torch.zeros(5120, K, dtype=torch.uint8), torch.zeros(40, K // 128)
        kw = G.engine_kwargs(5120, K, 1)
        G.gemv(q, sc, x, 1, res, **kw); engine_name, engine_grid = named[-1], grids[-1][0]
        G.gemv(q, sc, x, 1, res, **dict(kw, v26x={"re": True}))
        assert named[-1] == want and grids[-1][0] == engine_grid and engine_name != want
        with pytest.raises(ValueError, match="epi 1"): G.gemv(q, sc, x, 0, None, **dict(kw, v26x={"re": True}))
        with pytest.raises(ValueError, match="EK2"): G.gemv(q, sc, x, 1, res, **dict(kw, v13opt=kw["v13opt"][:2] + (3,) + kw["v13opt"][3:], v26x={"re": True}))
    if not shutil.which("nvcc") and not Path("/usr/local/cuda/bin/nvcc").exists(): pytest.skip("no nvcc")
    pairs = {"gemv_fp8_v35<20, 1, 1, 3, 12, 1, true, true, 0>": "gemv_fp8_v26<20, 1, 1, 3, 12, 1, true, true, false>",
             "gemv_fp8_v35<20, 1, 1, 2, 34, 1, true, true, 2>": "gemv_fp8_v26lp<20, 1, 1, 2, 34, 1, true, true, 2>"}
    a = prewait_audit({k: ("gemv", "gemv", None, "") for p in pairs.items() for k in p})
    for v35, eng in pairs.items():
        assert a[eng].get("LDG.E.U16.CONSTANT", 0) == 0 and a[v35] == dict(a[eng], **{"LDG.E.U16.CONSTANT": 1}), (v35, a[v35], a[eng])


@pytest.mark.parametrize("key, dn", [("dn", ""), ("dnf", ", 2")])
def test_v36_names_and_its_count(monkeypatch, key, dn):
    """v36 (chapter 09a's hand-offs: down and out_proj counting their warps' ends) through gemv(): v26x dn=COUNTER (or dnf,
    the DN 2 build whose lanes fence their stores first) names gemv_fp8_v36 with the engine's configuration and grid and
    passes the counter as the kernel's last argument; a counter that is not int64, EK2, the SwiGLU projection, or dn and
    dnf together raise."""
    from qwen_engine import gemv as G
    named, grids = _mocked_launcher(monkeypatch)
    cnt = torch.zeros(2, dtype=torch.int64)
    res = torch.zeros(1, 5120, dtype=torch.bfloat16)
    for K, want in ((6144, f"gemv_fp8_v36<20, 1, 1, 3, 12, 1, true, true, 0{dn}>"), (17408, f"gemv_fp8_v36<20, 1, 1, 2, 34, 1, true, true, 2{dn}>")):
        q, sc, x = torch.zeros(5120, K, dtype=torch.uint8), torch.zeros(40, K // 128), torch.zeros(1, K, dtype=torch.bfloat16)
        kw = G.engine_kwargs(5120, K, 1)
        G.gemv(q, sc, x, 1, res, **kw); engine_grid = grids[-1][0]
        G.gemv(q, sc, x, 1, res, **dict(kw, v26x={key: cnt}))
        assert named[-1] == want and grids[-1][0] == engine_grid and grids[-1][1][-1] is cnt and grids[-1][0] == (128,)   # 128 blocks x 20 warps
        with pytest.raises(ValueError, match="int64"): G.gemv(q, sc, x, 1, res, **dict(kw, v26x={key: cnt.int()}))
        with pytest.raises(ValueError, match="EK2"): G.gemv(q, sc, x, 1, res, **dict(kw, v13opt=kw["v13opt"][:2] + (3,) + kw["v13opt"][3:], v26x={key: cnt}))
        with pytest.raises(ValueError, match="at most one"): G.gemv(q, sc, x, 1, res, **dict(kw, v26x={"dn": cnt, "dnf": cnt}))
    qg, sg, xg = torch.zeros(34816, 5120, dtype=torch.uint8), torch.zeros(272, 40), torch.zeros(1, 5120, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="SwiGLU"): G.gemv(qg, sg, xg, 2, None, **dict(G.engine_kwargs(34816, 5120, 2), v26x={key: cnt}))


def test_v36_fence_is_the_only_change():
    """By nvcc's SASS (sm_90a), v36's DN 2 build of out_proj (chapter 09a's count hand-off: the norm after it reads its output
    on the count alone) is DN 1's with a fence (MEMBAR) before the count's atomic add, and the same work up to its first store."""
    from qwen_engine.runtime import sass_tool, sass_bodies
    if not all(sass_tool(t) for t in ("nvcc", "cuobjdump", "nvdisasm")): pytest.skip("needs nvcc, cuobjdump and nvdisasm")
    sig = "(const unsigned char*, const float*, const unsigned short*, const unsigned short*, unsigned short*, int, int, int, int, float*, unsigned*);\n"
    b = sass_bodies('#define __CUDACC_RTC__ 1\n#include "gemv.cu"\n' + "".join(
        f"template __global__ void gemv_fp8_v36<20, 1, 1, 3, 12, 1, true, true, 0, {dn}>" + sig for dn in (1, 2)))
    one, two = (next(v for k, v in b.items() if k.startswith("_Z12gemv_fp8_v36") and k.split("EEv")[0].endswith(f"Li0ELi{dn}")) for dn in (1, 2))
    op = lambda s: s.split()[1] if s.startswith("@") else s.split()[0]
    count = lambda body: [i for i, s in enumerate(body) if op(s).startswith(("RED", "ATOM"))]
    c1, c2 = count(one), count(two)
    assert len(c1) == len(c2) == 1
    assert not any(op(s).startswith("MEMBAR") for s in one) and any(op(s).startswith("MEMBAR") for s in two[:c2[0]])
    strip = lambda body: [s for s in body if not op(s).startswith(("MEMBAR", "ERRBAR", "CCTL", "WARPSYNC", "NOP", "BSYNC", "BSSY"))]
    assert strip(one)[:strip(one).index(next(s for s in strip(one) if op(s).startswith("STG")))] == \
           strip(two)[:strip(two).index(next(s for s in strip(two) if op(s).startswith("STG")))]   # the same work up to the first store


def test_v37_names_and_awaits_its_flag_not_the_grid(monkeypatch):
    """v37 (chapter 09a's await hand-off: the GEMV after a counted norm awaits the norm's flag instead of its grid) through
    gemv(): v26x await=(FLAG, k) names gemv_fp8_v37 at the engine's configuration and grid and passes the flag and k last;
    a flag that is not two int64, or k < 1, raise. By nvcc's SASS (sm_90a), for q|k|v|z and gate|up: no grid wait (no
    ACQBULK); the flag polled with an acquire load (STRONG.GPU, then the L1 invalidated) before a block barrier; the
    activation read only after that barrier and by coherent loads (not the read-only path, which ptxas may move); the
    weights' read-only loads may come first (no kernel writes them)."""
    import re
    from qwen_engine import gemv as G
    from qwen_engine.runtime import sass_tool, sass_of
    named, grids = _mocked_launcher(monkeypatch)
    flag = torch.zeros(2, dtype=torch.int64)
    want = {(16384, 5120, 0): "gemv_fp8_v37<2, 2, 0, 3, 10, 8, true, true, 0>", (14336, 5120, 0): "gemv_fp8_v37<2, 2, 0, 3, 10, 7, true, true, 0>",
            (34816, 5120, 2): "gemv_fp8_v37<2, 1, 2, 2, 10, 8, false, false, 0>"}
    for (N, K, epi), name in want.items():
        q, sc, x = torch.zeros(N, K, dtype=torch.uint8), torch.zeros(N // 128, K // 128), torch.zeros(1, K, dtype=torch.bfloat16)
        kw = G.engine_kwargs(N, K, epi)
        G.gemv(q, sc, x, epi, None, **kw); engine_grid = grids[-1][0]
        G.gemv(q, sc, x, epi, None, **dict(kw, v26x={"await": (flag, 5)}))
        assert named[-1] == name and grids[-1][0] == engine_grid and grids[-1][1][-2] is flag and int(grids[-1][1][-1]) == 5
        with pytest.raises(ValueError, match="await"): G.gemv(q, sc, x, epi, None, **dict(kw, v26x={"await": (flag[:1], 5)}))
        with pytest.raises(ValueError, match="await"): G.gemv(q, sc, x, epi, None, **dict(kw, v26x={"await": (flag, 0)}))
    if not all(sass_tool(t) for t in ("nvcc", "cuobjdump", "nvdisasm")): pytest.skip("needs nvcc, cuobjdump and nvdisasm")
    sig = "(const unsigned char*, const float*, const unsigned short*, const unsigned short*, unsigned short*, int, int, int, int, float*, unsigned*, int);\n"
    sass = sass_of('#define __CUDACC_RTC__ 1\n#include "gemv.cu"\n' + "".join(
        f"template __global__ void {want[s][:-1]}>" + sig for s in ((16384, 5120, 0), (34816, 5120, 2))))
    bodies = [b for b in sass.split("Function : ")[1:] if b.startswith("_Z12gemv_fp8_v37")]
    assert len(bodies) == 2
    for b in bodies:
        op = [m.group(1).split()[0] for l in b.splitlines() if (m := re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?(.*?);", l))]
        assert "ACQBULK" not in op
        poll, bar = op.index("LDG.E.64.STRONG.GPU"), op.index("BAR.SYNC.DEFER_BLOCKING")
        assert poll < op.index("CCTL.IVALL") < bar < op.index("PREEXIT")
        x_loads = [i for i, o in enumerate(op) if o.startswith("LDG.E.128") and "CONSTANT" not in o]
        assert len(x_loads) == 20 and min(x_loads) > bar and all(op[i] == "LDG.E.128.STRONG.SM" for i in x_loads)   # 10 steps x 2
        assert all("CONSTANT" in o for i, o in enumerate(op) if o.startswith("LDG") and i not in x_loads and i != poll)


def test_v38_names_and_reads_x_coherently_after_its_wait(monkeypatch):
    """v38 (the engine's builds with v37's activation loads, the grid wait kept) through gemv(): v26x ca=True names
    gemv_fp8_v38 at the engine's configuration and grid for every model shape. By nvcc's SASS (sm_90a), for q|k|v|z: one grid
    wait (ACQBULK); the activation's 20 loads (10 steps x 2) coherent (LDG.E.128.STRONG.SM) and all after it; every other
    load read-only, as in the engine's build."""
    import re
    from qwen_engine import gemv as G
    from qwen_engine.runtime import sass_tool, sass_of
    named, grids = _mocked_launcher(monkeypatch)
    for N, K, epi, _ in G.MODEL_SHAPES:
        q, sc, x = torch.zeros(N, K, dtype=torch.uint8), torch.zeros(N // 128, K // 128), torch.zeros(1, K, dtype=torch.bfloat16)
        res = torch.zeros(1, N, dtype=torch.bfloat16) if epi == 1 else None
        kw = G.engine_kwargs(N, K, epi)
        G.gemv(q, sc, x, epi, res, **kw); engine_name, engine_grid = named[-1], grids[-1][0]
        G.gemv(q, sc, x, epi, res, **dict(kw, v26x={"ca": True}))
        assert named[-1].startswith("gemv_fp8_v38<") and grids[-1][0] == engine_grid
        args = lambda nm: [a.strip(" >") for a in nm.split("<")[1].split(",")][:6]
        assert args(named[-1]) == args(engine_name)                        # SR, RP, EPI, U, KST, MINB
    if not all(sass_tool(t) for t in ("nvcc", "cuobjdump", "nvdisasm")): pytest.skip("needs nvcc, cuobjdump and nvdisasm")
    sig = "(const unsigned char*, const float*, const unsigned short*, const unsigned short*, unsigned short*, int, int, int, int, float*, unsigned*);\n"
    sass = sass_of('#define __CUDACC_RTC__ 1\n#include "gemv.cu"\ntemplate __global__ void gemv_fp8_v38<2, 2, 0, 3, 10, 8, true, true, 0>' + sig)
    body = next(b for b in sass.split("Function : ")[1:] if b.startswith("_Z12gemv_fp8_v38"))
    op = [m.group(1).split()[0] for l in body.splitlines() if (m := re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?(.*?);", l))]
    acq = op.index("ACQBULK")
    x_loads = [i for i, o in enumerate(op) if o.startswith("LDG") and "CONSTANT" not in o]
    assert op.count("ACQBULK") == 1 and len(x_loads) == 20 and min(x_loads) > acq and all(op[i] == "LDG.E.128.STRONG.SM" for i in x_loads)
