"""Chapter 06: v25, v24 with the weights PF steps past the register ring asked of L1 (prefetch.global.L1: no register; the
ring's loads then find L1). v24 (gemv_v24_h200.json) and v20 at deep rings (gemv_v20deep_h200.json) leave one reading:
a warp keeps one or two steps of weights in flight, a deeper register ring costs blocks an SM, and a shared-memory ring
filled by cp.async is slower the deeper it goes. L1 is the one buffer left that costs neither registers nor copies.
On the three K = 5,120 shapes, v24's builds with PF = 0 (v24 itself) beside PF = 2..8 and the ring's loads allocating
in L1 or not (LDK): bit identity with the engine's kernel, then alone with PDL interleaved with the engine's (two rounds),
then the token's GEMVs and the decode step with each shape's winner, as explore_gemv_v24.py does.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v25.py OUT_DIR (gemv_v25_h200.json). About 20 seconds."""
import explore_gemv_v24 as V

V.CFGS = {2: [(2, 4, 2, False), (2, 4, 2, False, 2, 0), (2, 4, 2, False, 4, 0), (2, 4, 2, False, 6, 0), (2, 4, 2, False, 8, 0),
              (2, 4, 2, False, 4, 1), (2, 4, 2, False, 8, 1), (2, 4, 2, True, 4, 0), (4, 2, 2, False, 4, 0), (4, 2, 2, False, 8, 0)],
          0: [(4, 2, 2, False), (4, 2, 2, False, 4, 0), (4, 2, 2, False, 8, 0), (4, 2, 2, False, 8, 1), (4, 2, 2, True, 4, 0),
              (2, 4, 2, False, 4, 0)]}
V.AWK = [(1152, 5120, 0, 5), (2304, 5120, 2, 7)]
V.ALL = tuple(V.name(epi, c) for epi in V.CFGS for c in V.CFGS[epi])
_grids = V.grids
V.grids = lambda N, epi, c, sms=132: _grids(N, epi, c, sms)[:1]          # the most blocks resident only
V.RECORD = ("gemv_v25_h200", "v25 (v24 with the weights PF steps past the register ring prefetched into L1; LDK 1: the ring's "
            "loads allocate in L1) beside v24 on the three K = 5,120 shapes: bit identity with the engine's kernel and with v14 at "
            "small uneven shapes, registers and blocks an SM, alone with PDL interleaved with the engine's kernel (two rounds), "
            "then the token's GEMVs and the decode step with each shape's winner.", "explore_gemv_v25.py")

if __name__ == "__main__":
    V.main()
