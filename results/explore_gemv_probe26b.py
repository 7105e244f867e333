"""Chapter 06: PROBE 3 beside gemv_probe26's builds. 71 % of the instructions of the engine's q|gate|k|v build are the
widening's integer operations (LOP3, IMAD, SHF: 1,178 of 1,656 in its SASS); PROBE 3 is the whole math with the weight words
going to the mma unwidened (wrong sums, timing only; 904 instructions). Per model shape, alone with PDL over weights rotated
past L2, interleaved, two rounds: the engine's build, DRY, PROBE 2 (the math without the activation's loads), PROBE 3 and
the stream that asks first. If PROBE 3 reads like DRY, the widening is what the math costs; if like the engine, the mma chain.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_probe26b.py OUT_DIR (gemv_probe26b_h200.json). About a minute.
(Its loop moved into explore_gemv_dry26.measure, then its builds into explore_gemv_probe26.probe_run, after its record
was made: the same steps, not re-run.)"""
import explore_gemv_probe26 as P

def main():
    P.probe_run(("gemv_probe26b_h200", "Per model shape, alone with PDL, weights rotated past L2: the engine's v26 build, its DRY build, PROBE 2 (the "
                "math with step 0's activation for every step), PROBE 3 (the math without the widening: weight words into the mma as they are) and "
                "the stream that asks for its first trip before the wait; two interleaved rounds, % of the read bandwidth of the same run.",
                "explore_gemv_probe26b.py"),
                {2: "probe 2: math, no x loads", 3: "probe 3: math, no widening"}, True, 28)


if __name__ == "__main__":
    main()
