#!/bin/bash
# camclass — the CPU backend's load-time layer timings on a busy machine (docs/PERFORMANCE.md
# "Layer choices timed on a crowded machine"): camclass-bench's load of the random mobilenet_v2
# with an empty layer-choice cache (each start times every layer), rounds alternating
# CAMCLASS_CPU_CROWDED=no (as before: the pool, always saved) and auto (engine/cpu/
# choice_watch.h), with HOGS `yes` processes beside it; prints each start's load time, whether
# its choices were saved, and the reason given when not. Figures only.
#
#   tools/perf_choices_crowded.sh [HOGS [ROUNDS [THREADS [grouped]]]]   # defaults 0, 3, 2
#
# grouped (root): the benchmark and its hogs in an autogroup of their own at nice -20, a quiet
# machine's proxy on a machine others share (as tools/perf_crowded.sh's AUTOGROUP_NICE).
set -u
build=${BUILD:-build}
hogs=${1:-0} rounds=${2:-3} threads=${3:-2}
bench="$build/app/camclass-bench" model="$build/tools/mobilenet_v2_random.ccm"
[ -x "$bench" ] && [ -f "$model" ] || { echo "perf_choices_crowded: build first (ninja -C $build)" >&2; exit 2; }
if [ "${4:-}" = grouped ] && [ -z "${GROUPED:-}" ]; then GROUPED=1 exec setsid "$0" "$@"; fi
[ -n "${GROUPED:-}" ] && { echo -20 > /proc/self/autogroup || exit 2; }
pids=()
trap 'for p in "${pids[@]}"; do kill "$p"; done' EXIT
for _ in $(seq "$hogs"); do yes > /dev/null & pids+=($!); done
echo "hogs $hogs threads $threads grouped ${GROUPED:-0} load $(cut -d' ' -f1 /proc/loadavg)"
for r in $(seq "$rounds"); do
  for mode in no auto; do
    T=$(mktemp -d)
    out=$(XDG_CACHE_HOME=$T CAMCLASS_CPU_CROWDED=$mode "$bench" "$model" --backend cpu \
          --threads "$threads" --runs 1 --warmup 0 2>&1)
    load=$(echo "$out" | awk '/^load/{print $2}')
    saved=$(ls "$T"/camclass/cpu-layer-choices-*.txt >/dev/null 2>&1 && echo saved || echo "not-saved")
    why=$(echo "$out" | grep -o "(its threads[^)]*)" | head -1)
    echo "round $r $mode load $load ms $saved $why"
    rm -rf "$T"
  done
done
