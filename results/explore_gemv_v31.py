"""Chapter 06/09a: v31, v30 without its count. v30 (gemv_v30_h200.json) ran gate|up and down in one launch, bit-identical to
the engine's two, and lost: alone 70.0 us against the pair's 64.6, the step 7.705 ms against 7.416 at 1K; its count made
every warp wait for the grid's last gate|up pairs (17,408 pairs on 2,640 warps: 57 % of them run a seventh). v31 has each
down step wait only for the 512 SwiGLU values it reads (h holds a sentinel until each value is written), so warps done with
gate|up run down's steps whose values are ready while the last pairs stream. Builds: v31 and v30 at 20 warps a block. Each
first bit-identical to the engine's two launches on the same inputs (three launches in a row; h holding the sentinel
after each; a negative control: h zeroed before a launch must give other outputs), then alone against the engine's pair
(PDL graph of 16 MLPs over 4 weight sets, twice), then the decode step (27B shape, PDL graph), greedy tokens checked,
three interleaved rounds at 1K and 32K.
Usage on the H200: PYTHONPATH=. python3 results/explore_gemv_v31.py OUT_DIR (gemv_v31_h200.json). About 2 min."""
from explore_gemv_v30 import main

main("gemv_v31_h200", "explore_gemv_v31.py",
     "v31, gate|up and down in one launch, each down step waiting only for the SwiGLU values it reads (a sentinel until "
     "written), beside v30 (a count of the grid between them) and the engine's two launches: bit-identity on the same inputs "
     "(three launches in a row, h back at the sentinel after each, a negative control with h zeroed), alone (PDL graph of 16 "
     "MLPs over 4 weight sets, twice), and the decode step (27B shape, synthetic, PDL graph) with every MLP through the build, "
     "greedy tokens, three interleaved rounds at 1K and 32K.",
     {"v31 20 warps": dict(variant=31, SR=20), "v30 20 warps": dict(variant=30, SR=20)},
     {"engine": None, "v31 20 warps": dict(label="v31 20 warps", variant=31, SR=20), "v30 20 warps": dict(label="v30 20 warps", variant=30, SR=20)})
