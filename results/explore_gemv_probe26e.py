"""Chapter 06: the mmas and their accumulation alone. gemv_probe26b_h200.json: on the K = 5,120 shapes the engine's math costs
5-9 points against its DRY build; without the activation's loads in the loop (PROBE 2) about half of that, without the
widening (PROBE 3) nearly all of it. PROBE 5 drops both: what is left is the mmas, their accumulation into the scaled sums and
the epilogue. Per model shape at the engine's configuration: the engine's build, DRY, PROBE 2, 3 and 5 (timing only, wrong
sums), alone with PDL over weights rotated past L2, two interleaved rounds.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_probe26e.py OUT_DIR (gemv_probe26e_h200.json). About a minute.
(Its builds moved into explore_gemv_probe26.probe_run, after its record
was made: the same steps, not re-run.)"""
import explore_gemv_probe26 as P

def main():
    P.probe_run(("gemv_probe26e_h200", "Per model shape, alone with PDL, weights rotated past L2: the engine's v26 build, its DRY build, PROBE 2 (no "
                "activation loads in the loop), PROBE 3 (no widening) and PROBE 5 (neither: the mmas and their accumulation alone); two "
                "interleaved rounds, % of the read bandwidth of the same run.", "explore_gemv_probe26e.py"),
                {2: "probe 2: math, no x loads", 3: "probe 3: math, no widening", 5: "probe 5: mma only"}, False, 33)


if __name__ == "__main__":
    main()
