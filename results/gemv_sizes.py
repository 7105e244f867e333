"""Chapter 06: the size of a GEMV build's machine code (sm_90a, nvcc, cuobjdump: instructions x 16 bytes) for the builds
whose speed the v26lp records compare: down's engine builds before and after v26lp, down with one row pair a warp at every
loop length measured (RU 0 = all runs unrolled, i.e. v26), the other shapes' engine builds and their looped neighbours,
and down's DRY build. CPU only (nvcc, cuobjdump, nvdisasm: `bash .ci/setup dev`).
Usage: PYTHONPATH=. python3 results/gemv_sizes.py [OUT_DIR] (gemv_sizes_sm90a.json)."""
import datetime, json, platform, subprocess, sys
from pathlib import Path
from qwen_engine.runtime import sass_bodies, mangled_prefix, git_commit, repo_root

SIG = "(const unsigned char*, const float*, const unsigned short*, const unsigned short*, unsigned short*, int, int, int, int, float*, unsigned*);\n"
BUILDS = ["gemv_fp8_v26<2, 2, 1, 4, 34, 5, true, true, false>",                   # down, the engine's until v26lp
          *(f"gemv_fp8_v26lp<4, 1, 1, 2, 34, 5, true, true, {ru}>" for ru in (0, 2, 4, 8, 16)),   # down, one pair, runs of 2
          *(f"gemv_fp8_v26lp<4, 1, 1, 4, 34, 5, true, true, {ru}>" for ru in (0, 2)),     # down, one pair, runs of 4
          "gemv_fp8_v26lp<2, 2, 1, 4, 34, 5, true, true, 2>",                     # down, two pairs, looped (gemv_v26lp_h200: lost)
          "gemv_fp8_v26dry<2, 2, 1, 4, 34, 5, true, true>",                       # down's DRY build (no math)
          "gemv_fp8_v26<2, 2, 0, 3, 10, 7, true, true, false>", "gemv_fp8_v26<2, 2, 0, 3, 10, 8, true, true, false>",
          "gemv_fp8_v26<4, 1, 1, 3, 12, 5, true, true, false>", "gemv_fp8_v26<2, 1, 2, 2, 10, 8, false, false, false>",
          "gemv_fp8_v26lp<2, 2, 0, 2, 10, 7, true, true, 2>", "gemv_fp8_v26lp<4, 1, 1, 2, 12, 5, true, true, 2>"]


def sizes() -> dict:
    "{build: bytes of machine code} (instructions x 16)."
    src = '#define __CUDACC_RTC__ 1\n#include "gemv.cu"\n' + "".join(f"template __global__ void {b}{SIG}" for b in BUILDS)
    bodies = sass_bodies(src)
    return {b: 16 * len(next(v for s, v in bodies.items() if s.startswith(mangled_prefix(b)))) for b in BUILDS}


if __name__ == "__main__":
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    import torch
    rec = dict(name="gemv_sizes_sm90a", what="Bytes of sm_90a machine code (instructions x 16, cuobjdump -sass of an nvcc -cubin) of the "
               "GEMV builds the v26lp records compare.", command="PYTHONPATH=. python3 results/gemv_sizes.py",
               date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), commit=git_commit(), host=platform.node(),
               gpu=f"none: read from machine code ({nvcc}, sm_90a) on a CPU host", sms="-", torch=torch.__version__, data=dict(bytes=sizes()))
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else repo_root() / "results"
    (out / "gemv_sizes_sm90a.json").write_text(json.dumps(rec, indent=1) + "\n")
    for b, n in rec["data"]["bytes"].items(): print(f"{n / 1024:6.1f} KB  {b}")
