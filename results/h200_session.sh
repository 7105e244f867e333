#!/bin/bash
# One H200 call that verifies and measures chapters 05-09 and writes their records into $1 (default $OUT).
# Each part has its own time limit and log; a part that fails or runs out of time does not stop the others.
# Usage on the device (from the repository root): bash results/h200_session.sh "$OUT"
out=${1:-$OUT}; mkdir -p "$out"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then        # FLA, carried as wheels, for the peers only
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
qe() { python3 -c "import sys; from qwen_engine.cli import main; sys.exit(main(sys.argv[1:]))" "$@"; }
for part in ${PARTS:-decode:300 gdn:100 attention:60 norms:60 decode-tiny:40}; do
  name=${part%%:*}; secs=${part##*:}
  echo "=== bench $name (limit ${secs} s) $(date +%T)"
  args="bench $name"; [ "$name" = decode-tiny ] && args="bench decode --tiny"
  timeout "$secs" bash -c "$(declare -f qe); qe $args --record '$out'" >> "$out/session.log" 2>&1
  echo "=== bench $name: exit $? $(date +%T)" | tee -a "$out/session.log"
done
tail -c 9000 "$out/session.log"
