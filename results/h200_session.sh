#!/bin/bash
# One H200 call that verifies and measures chapters 05-09 and writes their records into $1 (default $OUT).
# Each part has its own time limit and log; a part that fails or runs out of time does not stop the others.
# Usage on the device (from the repository root): [PARTS="name:seconds ..."] bash results/h200_session.sh "$OUT"
out=${1:-$OUT}; mkdir -p "$out"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then        # FLA, carried as wheels, for the peers only
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
qe() { python3 -c "import sys; from qwen_engine.cli import main; sys.exit(main(sys.argv[1:]))" "$@"; }
for part in ${PARTS:-decode:300 gdn:100 attention:60 norms:60 decode-tiny:40}; do
  name=${part%%:*}; secs=${part##*:}
  echo "=== $name (limit ${secs} s) $(date +%T)"
  case $name in
    decode-tiny)  cmd="qe bench decode --tiny --record '$out'" ;;
    decode-normcost) cmd="qe bench decode --no-peer --parts norm_cost --name decode_normcost_h200 --record '$out'" ;;
    decode-speed) cmd="qe bench decode --no-peer --parts launches,speed --name decode_speed_h200 --record '$out'" ;;
    decode-speed-now) cmd="qe bench decode --no-peer --parts launches,speed --name decode_speed_now_h200 --record '$out'" ;;   # the speed at a later commit (decode_speed_h200 is chapter 07's)
    decode-gate)  cmd="qe bench decode --no-peer --parts attn_gate --name decode_gate_h200 --record '$out'" ;;
    decode-quick) cmd="qe bench decode --no-peer --parts launches,layerwise,graph_vs_eager,pdl,speed,pow2 --name decode_quick_h200 --record '$out'" ;;
    gemv-quick)   cmd="python3 results/gemv_quick.py '$out'" ;;
    gemv-standing) cmd="python3 results/gemv_standing.py '$out'" ;;
    ncu-engine)   cmd="ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats -k regex:gemv_fp8 python3 results/ncu_engine_gemv.py > '$out/gemv_ncu_engine_h200.txt' 2>&1" ;;
    ncu-ek)       cmd="ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats -k regex:gemv_fp8 python3 results/ncu_engine_gemv.py > '$out/gemv_ncu_ek_h200.txt' 2>&1" ;;
    ncu-v26)      cmd="ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats -k regex:gemv_fp8 python3 results/ncu_v26.py > '$out/gemv_ncu_v26_h200.txt' 2>&1" ;;
    ncu-down)     cmd="ncu --clock-control none --section SpeedOfLight --section Occupancy --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio' -k regex:gemv_fp8 python3 results/ncu_down.py > '$out/gemv_ncu_down_h200.txt' 2>&1" ;;
    ncu-stalls)   cmd="ncu --clock-control none --section SpeedOfLight --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio' -k 'regex:gemv_fp8|attn|gdn_decode' python3 results/ncu_stalls.py > '$out/ncu_stalls_h200.txt' 2>&1" ;;
    ncu-prefetch) cmd="ncu --clock-control none --metrics dram__bytes_read.sum,lts__t_sectors_op_read.sum,gpu__time_duration.sum -k regex:gemv_fp8 python3 results/ncu_prefetch.py > '$out/gemv_ncu_prefetch_h200.txt' 2>&1" ;;
    ncu-attention) cmd="ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy -k regex:attn python3 results/ncu_attention.py > '$out/attention_ncu_h200.txt' 2>&1" ;;
    explore-*)    cmd="python3 results/explore_${name#explore-}.py '$out'" ;;
    timeline)     cmd="QE_TIMELINE=1 python3 results/explore_timeline.py '$out'; python3 results/explore_timeline.py '$out'" ;;   # the step's timeline, then the plain build beside it
    ncu-gemv)     cmd="ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section InstructionStats -k regex:gemv_fp8 python3 results/ncu_gemv.py > '$out/gemv_ncu_v10_h200.txt' 2>&1" ;;
    *)            cmd="qe bench $name --record '$out'" ;;
  esac
  timeout "$secs" bash -c "$(declare -f qe); $cmd" >> "$out/session.log" 2>&1
  echo "=== $name: exit $? $(date +%T)" | tee -a "$out/session.log"
done
tail -c 9000 "$out/session.log"
