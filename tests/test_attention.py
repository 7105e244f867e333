"Chapter 07 on the CPU: rope table, the emulated split-KV algorithm vs reference.attention, the pool and page tables, the launcher contract, the CUDA compile, and the recorded H200 run."
import shutil, subprocess, sys
from pathlib import Path
import pytest, torch
from qwen_engine.config import preset
from qwen_engine import reference as R
from qwen_engine.attention import (PAGE, P_DEFAULT, rope_table, split_qkv, prologue, partitions, attention_emulated,
                                   attention_reference, attention_definition, ulp_err, KVPool, PageTable, PoolExhausted,
                                   attention_scratch, attention_decode)

ROOT = Path(__file__).resolve().parent.parent
CFG = preset("tiny")                      # 12 query heads, 2 KV heads of 256: the 27B model's group of 6
D, HQ, HKV = CFG.head_dim, CFG.num_attention_heads, CFG.num_key_value_heads
WIDTH = HQ * 2 * D + 2 * HKV * D

def _case(n, M, seed):
    g = torch.Generator().manual_seed(seed)
    pos0 = n - 1
    kc, vc = [torch.randn(HKV, pos0, D, generator=g).to(torch.bfloat16) for _ in range(2)]
    qkv = torch.randn(M, WIDTH, generator=g).to(torch.bfloat16)
    qw, kw = [(0.2 * torch.randn(D, generator=g)).to(torch.bfloat16) for _ in range(2)]
    return qkv, pos0, kc, vc, qw, kw

ROPE = rope_table(CFG, 2100)

def test_rope_table_is_the_references():
    pos = torch.tensor([0, 1, 255, 256, 2047, 2098])
    c, s = R.rope_cos_sin(pos, CFG)
    assert ROPE.shape == (2100, 2, CFG.rotary_dim) and ROPE.dtype == torch.bfloat16
    assert torch.equal(ROPE[pos, 0], c[0]) and torch.equal(ROPE[pos, 1], s[0])
    assert not torch.equal(ROPE[pos + 1, 0], c[0])                           # negative control: off by one position

def test_split_qkv_layout_is_per_head_q_then_gate():
    qkv = torch.arange(WIDTH, dtype=torch.float32)[None]
    q, gate, k, v = split_qkv(qkv, CFG)
    assert q[0, 1, 0] == 2 * D and gate[0, 1, 0] == 3 * D                    # head 1: [q | gate] at 512..1023
    assert k[0, 0, 0] == HQ * 2 * D and v[0, 1, -1] == WIDTH - 1

def test_partitions_cover_once_in_order():
    for n in (1, 31, 32, 33, 255, 256, 257, 4096, 32768, 131072):
        for P in (1, 3, 33, 66, 132):
            parts = partitions(n, P)
            assert len(parts) == P and parts[0][0] == 0 and parts[-1][1] == n
            assert all(a1 == b0 for (_, b0), (a1, _) in zip(parts, parts[1:]))
            assert all((b - a) % 32 == 0 for a, b in parts[:-1] if b < n)        # whole chunks of 32 keys but the last

CASES = [(1, 1, 4), (2, 1, 4), (255, 1, 4), (256, 1, 4), (257, 1, 3), (513, 1, 66), (1100, 1, 8), (255, 3, 5), (600, 4, 7)]

@pytest.fixture(scope="module")
def spreads():
    "(worst error in ulps of the sum's scale, fraction of outputs differing) vs the float64 definition, per implementation."
    rows = []
    for i, (n, M, P) in enumerate(CASES):
        qkv, pos0, kc, vc, qw, kw = _case(n, M, i)
        r64, sc = attention_definition(qkv, pos0, kc, vc, qw, kw, CFG, ROPE)
        r32, kr, vr = attention_reference(qkv, pos0, kc, vc, qw, kw, CFG)
        emu, ke, ve = attention_emulated(qkv, pos0, kc, vc, qw, kw, CFG, ROPE, P)
        alt = attention_emulated(qkv, pos0, kc, vc, qw, kw, CFG, ROPE, 1)[0]
        bad = attention_emulated(qkv, pos0, kc, vc, qw, kw, CFG, ROPE, P, round_p=False)[0]
        e = lambda x: (ulp_err(x, r64, sc).max().item(), (x != r64).float().mean().item())
        rows.append(dict(n=n, M=M, P=P, ref=e(r32), emu=e(emu), alt=e(alt), bad=e(bad),
                         kv=torch.equal(kr, ke) and torch.equal(vr, ve), exact=torch.equal(emu, r32)))
    return rows

def _noise(spreads):
    return (max(max(r["ref"][0], r["alt"][0]) for r in spreads), max(max(r["ref"][1], r["alt"][1]) for r in spreads))

def test_emulation_within_measured_noise(spreads):
    "The chapter's criterion: worst error and differing fraction <= 2 x the worst of the valid fp32 orders."
    noise, noise_m = _noise(spreads)
    assert noise <= 1 and noise_m <= 0.02, spreads                           # the valid orders: under one unit, ~1 % of outputs
    for r in spreads: assert r["emu"][0] <= 2 * noise and r["emu"][1] <= 2 * noise_m, r

def test_unrounded_probabilities_fail_the_criterion(spreads):
    "Negative control: the same algorithm without the bf16 rounding of p changes far more outputs."
    _, noise_m = _noise(spreads)
    for r in spreads:
        if r["n"] > 1: assert r["bad"][1] > 2 * noise_m, r

def test_context_one_is_exact_and_appends_match(spreads):
    for r in spreads:
        assert r["kv"], r                                                    # k after norm + RoPE, v: bit-identical
        if r["n"] == 1: assert r["exact"] and r["emu"] == (0.0, 0.0), r

def test_multirow_emulation_rows_equal_single_rows():
    "Row r of an M-row call = a single-row call at position pos0 + r (the split depends on the row's own context)."
    qkv, pos0, kc, vc, qw, kw = _case(300, 4, 11)
    multi, k, v = attention_emulated(qkv, pos0, kc, vc, qw, kw, CFG, ROPE, 5)
    for r in range(4):
        K = torch.cat([kc, k[:r].transpose(0, 1)], 1); V = torch.cat([vc, v[:r].transpose(0, 1)], 1)
        one = attention_emulated(qkv[r:r + 1], pos0 + r, K, V, qw, kw, CFG, ROPE, 5)[0]
        assert torch.equal(one[0], multi[r])

def test_pool_alloc_free_and_exhaustion():
    pool = KVPool(CFG, 4, n_layers=2, device="cpu")
    assert pool.kv.shape == (2, 2, 4, HKV, PAGE, D) and KVPool(CFG, 1, device="cpu").n_layers == len(CFG.full_layers)
    a = pool.alloc(3)
    with pytest.raises(PoolExhausted, match="2 pages asked, 1 free of 4"): pool.alloc(2)
    assert pool.n_free == 1                                                  # nothing taken by the failed call
    pool.free(a)
    with pytest.raises(ValueError): pool.free([a[0]])                        # double free
    with pytest.raises(ValueError): pool.free([9])
    assert pool.n_free == 4 and issubclass(PoolExhausted, ValueError)

def test_page_table_ensure_release_and_no_change_on_failure():
    pool = KVPool(CFG, 5, n_layers=1, device="cpu")
    a, b = PageTable(pool, 3, "cpu"), PageTable(pool, 8, "cpu")
    a.ensure(1); assert a.pages == [0] and a.table.tolist() == [0, -1, -1]
    a.ensure(PAGE); assert a.pages == [0]                                    # a page boundary: 256 tokens fit one page
    a.ensure(PAGE + 1); assert a.pages == [0, 1] and a.capacity == 2 * PAGE
    with pytest.raises(PoolExhausted, match="table holds 3"): a.ensure(3 * PAGE + 1)
    assert a.pages == [0, 1] and pool.n_free == 3
    b.ensure(3 * PAGE)
    with pytest.raises(PoolExhausted, match="1 pages asked, 0 free"): a.ensure(3 * PAGE)
    assert a.pages == [0, 1] and a.table.tolist() == [0, 1, -1] and b.pages == [2, 3, 4]
    a.release(); assert a.table.tolist() == [-1, -1, -1] and pool.n_free == 2
    a.ensure(2 * PAGE); assert sorted(a.pages) == [0, 1]

def test_gather_follows_the_table():
    pool = KVPool(CFG, 4, n_layers=1, device="cpu")
    pool.free_list = [0, 3, 1, 2]                                           # scattered: pops 2, 1, 3
    t = PageTable(pool, 3, "cpu"); t.ensure(600)
    for i, p in enumerate(t.pages): pool.kv[:, 0, p] = float(i + 1)
    k, v = pool.gather(0, t.pages, 600)
    assert k.shape == (HKV, 600, D) and k[0, 0, 0] == 1 and k[0, 256, 0] == 2 and v[1, 599, 5] == 3

def test_launcher_contract_on_cpu():
    pool = KVPool(preset("qwen3_5_27b"), 1, n_layers=1, device="cpu")
    with pytest.raises(AssertionError, match="GPU"):
        attention_decode(torch.zeros(1, 14336, dtype=torch.bfloat16), torch.zeros(1, dtype=torch.int32), pool, 0,
                         torch.zeros(1, dtype=torch.int32), None, None, preset("qwen3_5_27b"), None, None, None)

def test_scratch_shapes():
    s = attention_scratch(preset("qwen3_5_27b"), M=2, device="cpu", max_ctx=1024)
    assert s.scores.shape == (2, 24, 1024) and s.stats.shape == (2, 24, P_DEFAULT, 2) and s.opart.shape == (2, 24, P_DEFAULT, 256)

@pytest.mark.skipif(not (shutil.which("nvcc") or Path("/usr/local/cuda/bin/nvcc").exists()), reason="nvcc not installed")
def test_kernel_compiles():
    r = subprocess.run([sys.executable, str(ROOT / ".ci" / "book.py"), "compile"], cwd=ROOT, capture_output=True, text=True)
    assert "attention.cu: ok" in r.stdout, r.stdout + r.stderr

REC = ROOT / "results" / "attention_h200.json"

@pytest.mark.skipif(not REC.exists(), reason="not yet measured on the H200")
def test_recorded_run():
    from qwen_engine.runtime import read_record
    d = read_record("attention_h200")["data"]
    assert not d["errors"], d["errors"]
    assert {c["n"] for c in d["checks"]} >= {1, 255, 256, 257, 4096, 32768, 131072}
    for c in d["checks"]:
        assert c["ok"] and c["unwritten"] == 0 and c["ulp_kernel"] <= d["tol_ulp"] and c["mism_kernel"] <= d["tol_mismatch"], c
        assert c["context_unchanged"], c
    assert all(all(m["identical"].values()) for m in d["multirow"])
    lim = d["limits"]
    assert lim["errors"][0] and lim["errors"][1] and lim["beyond_wrote_nothing"] and lim["other_session_intact"]

# ---- v3 (the shared-memory ring): the copy schedule and the pass-2 accumulation order --------------------------------
from qwen_engine.attention import ring_plan, attention_emulated_chains, VARIANTS, VARIANT, RING_STAGES, STAGE_ROWS, RING_BYTES

def _plan_ok(plan, a, b):
    keys = [k for _, _, hs in plan for k0, c in hs for k in range(k0, k0 + c)]
    inside = all(k0 // PAGE == (k0 + c - 1) // PAGE and 0 < c <= 32 for _, _, hs in plan for k0, c in hs)
    return keys == list(range(a, b)) and inside

def test_ring_plan_covers_each_partition_once_inside_pages():
    for n in (1, 31, 255, 256, 257, 4096, 32768, 131072):
        for P in (33, 66, 132):
            for a, b in partitions(n, P):
                pl = ring_plan(a, b)
                assert _plan_ok(pl, a, b), (n, P, a, b)
                assert [(s, q) for s, q, _ in pl] == [(j % RING_STAGES, (j // RING_STAGES) & 1) for j in range(len(pl))]
                assert all(hs[0][0] == a + STAGE_ROWS * j for j, (_, _, hs) in enumerate(pl))   # stage j in tile j // 4
    assert RING_BYTES == RING_STAGES * 32 * 1024 and 2 * (RING_BYTES + 12 * 1024) <= 227 * 1024   # 2 blocks per SM fit

def test_ring_plan_checker_catches_a_page_crossing_copy():
    "Negative control: one 64-row copy from key 224 crosses the page at 256; the checker must say so."
    assert not _plan_ok([(0, 0, [(224, 64)])], 224, 288)
    assert _plan_ok(ring_plan(224, 288), 224, 288)

@pytest.mark.parametrize("n,M,P", [(1, 1, 4), (257, 1, 3), (600, 2, 7), (1100, 1, 8)], ids=lambda x: str(x))
def test_chain_order_within_the_criterion(spreads, n, M, P):
    "Pass 2's order (8 chains per partition, warps then partitions in order) is one more valid fp32 order."
    noise, noise_m = _noise(spreads)
    qkv, pos0, kc, vc, qw, kw = _case(n, M, 100 + n)
    r64, sc = attention_definition(qkv, pos0, kc, vc, qw, kw, CFG, ROPE)
    ch = attention_emulated_chains(qkv, pos0, kc, vc, qw, kw, CFG, ROPE, P)
    assert ulp_err(ch, r64, sc).max().item() <= 2 * noise and (ch != r64).float().mean().item() <= 2 * noise_m
    if n == 1: assert torch.equal(ch, attention_reference(qkv, pos0, kc, vc, qw, kw, CFG)[0])

def test_variants_name_instantiated_kernels():
    src = (ROOT / "kernels" / "attention.cu").read_text()
    assert VARIANT in VARIANTS
    import json                                                              # the engine's variant: measured correct on the H200
    rec = json.loads((ROOT / "results" / "attention_v3_h200.json").read_text())["data"]
    assert not rec["failed"] and VARIANT in rec["new"]
    ids = [c for c in rec["identity"] if c["variant"] == VARIANT]
    assert ids and all(c[k]["out"] and c[k]["unwritten"] == 0 for c in ids for k in ("plain", "pdl"))   # out bit-identical to v2
    for pro, s1, s2, mg, pdl in VARIANTS.values():
        assert f"template __global__ void {s1}<6>" in src and f"template __global__ void {s2}<6>" in src
        for f in (pro, mg):
            if f: assert f'extern "C" __global__ void __launch_bounds__(256) {f}(' in src or f'extern "C" __global__ void {f}(' in src
        if pdl:                                                               # PDL-ready kernels wait before their first read
            for f in filter(None, (pro, s1, s2, mg)):
                i = src.index(f"void __launch_bounds__(256) {f}(") if f"void __launch_bounds__(256) {f}(" in src else src.index(f"void {f}(")
                body = src[i:]
                body = body[body.index(") {"):]                                 # after the parameter list
                first_read = "src[" if f == mg else "ctl[0]"
                assert body.index("qe_grid_wait()") < body.index(first_read), f
