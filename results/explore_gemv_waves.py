"""Exploration (chapter 06), for the next H200 call: is v3 limited by wave quantisation? 16,384 rows are 1,024 row groups
on 660 resident slots (5 blocks of 4 warps per SM at 92 registers): 1.55 waves, the last one 55 % full. Splitting K
into KS blocks changes the count of work units (1,024 KS) and so the fullness of the last wave; a pure wave effect
predicts the best KS where 1,024 KS / 660 is just under an integer (KS = 5: 7.76 waves). Each configuration is verified
against v3 at KS = 1 within the fp32 reordering bound of chapter 06, then timed; the table is printed last.
Run on the H200: PYTHONPATH=. python3 results/explore_gemv_waves.py OUT_DIR"""
import sys, torch
from qwen_engine.gemv import MODEL_SHAPES, check_gemv, time_gemv, bytes_of, bandwidth_now, ENGINE_CHOICE
from qwen_engine.runtime import write_record

def main(out_dir):
    gen = torch.Generator(device="cuda").manual_seed(11)
    bw = bandwidth_now()
    rows, checks = [], []
    for N, K, epi, role in MODEL_SHAPES:
        RG = 2 if epi == 2 else 1
        groups = (N // 2 if epi == 2 else N) // 16 // (1 if epi == 2 else RG)
        for S in (2, 4, 8):
            for KS in (1, 2, 3, 4, 5, 6, 8):
                if K // 128 < KS * S: continue
                try:
                    if S == 4 and KS in (3, 5): checks.append(check_gemv(N, K, epi, 1, gen, S, RG, KS=KS))
                    us = time_gemv(N, K, epi, S, RG, gen, KS=KS)
                    rows.append(dict(N=N, K=K, epi=epi, S=S, KS=KS, units=groups * KS, us=us, frac=bytes_of(N, K, 1, epi) / us / 1e6 / bw,
                                     engine=(3, S, RG, KS) == ENGINE_CHOICE[(N, K, epi)]))
                except Exception as e: rows.append(dict(N=N, K=K, epi=epi, S=S, KS=KS, error=repr(e)[:200]))
    bad = [c for c in checks if c.get("bad") or c.get("unwritten")]
    print(f"{len(checks)} checks, {len(bad)} failing")
    for r in rows: print(r)
    write_record("gemv_waves_h200", "v3 over split factors KS = 1..8 and S = 2, 4, 8 at the model shapes: is the GEMV limited by the "
                 "fullness of its last wave?", "PYTHONPATH=. python3 results/explore_gemv_waves.py OUT", dict(bandwidth_tbps=bw, checks=checks, rows=rows), out_dir=out_dir)

if __name__ == "__main__": main(sys.argv[1] if len(sys.argv) > 1 else None)
