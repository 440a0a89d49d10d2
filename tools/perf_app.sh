#!/bin/bash
# camclass — whole-app throughput: the self-test model through `camclass --headless` on the
# sample clip (looped, every frame classified: no --fps), for several builds and flag sets in
# ONE run, rounds alternating. Prints results/s (camclass's own summary line) and the
# inference p50/p90/max of --profile, then the median results/s of each configuration.
# The summary's results/s runs from the first result to the last (as the log's summary fps);
# builds older than that change printed results over start -> stop, a little lower.
#
#   tools/perf_app.sh [ROUNDS] [SECONDS] BUILD[:FLAGS]...
#   e.g. tools/perf_app.sh 3 4 old-build build build:"--backend cpu --threads 2"
#
# LOAD=1 in the environment keeps one core busy (a shell busy loop) while measuring, to see
# how each configuration degrades when the machine has other work.
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-4}
shift 2 || true
[ $# -ge 1 ] || { echo "usage: tools/perf_app.sh ROUNDS SECONDS BUILD[:FLAGS]..." >&2; exit 2; }
clip=assets/samples/selftest
busy=
if [ "${LOAD:-0}" = 1 ]; then
  (while :; do :; done) &
  busy=$!
  trap 'kill $busy 2>/dev/null' EXIT
fi

one() { # BUILD FLAGS -> "R r/s, inference p50 P90 MAX"
  local bin="$1/app/camclass" err
  err=$(mktemp)
  # shellcheck disable=SC2086
  "$bin" --headless --input "$clip" --loop --log /dev/null --profile $2 2>"$err" &
  local pid=$!
  sleep "$secs"
  kill -INT $pid 2>/dev/null || true
  wait $pid || true
  local rs inf
  rs=$(grep -o '[0-9.]* results/s' "$err" | awk '{print $1}')
  inf=$(awk '$1 == "inference" {print $4 " " $5 " " $6}' "$err")
  rm -f "$err"
  echo "${rs:-nan} $inf"
}

declare -A res
echo "perf_app: $rounds rounds x ${secs} s, load: ${LOAD:-0}, $(nproc) CPUs"
for ((r = 1; r <= rounds; r++)); do
  for i in $(seq 1 $#); do
    spec=${!i}
    build=${spec%%:*}
    flags=$([[ $spec == *:* ]] && echo "${spec#*:}" || echo "")
    read -r rs p50 p90 max <<<"$(one "$build" "$flags")"
    res[$i]="${res[$i]:-} $rs"
    echo "round $r: $build ${flags:-(defaults)}: $rs results/s, inference p50 $p50 p90 $p90 max $max ms"
  done
done
echo
echo "| build | flags | results/s (median of $rounds) |"
echo "|---|---|---|"
for i in $(seq 1 $#); do
  spec=${!i}
  # shellcheck disable=SC2086
  m=$(printf '%s\n' ${res[$i]} | grep -v nan | sort -g |
      awk '{a[NR]=$1} END {print NR ? ((NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2) : "failed"}')
  echo "| ${spec%%:*} | $([[ $spec == *:* ]] && echo "${spec#*:}" || echo "(defaults)") | $m |"
done
