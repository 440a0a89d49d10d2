#!/bin/bash
# camclass — the CPU backend at 2 threads on a crowded machine (docs/PERFORMANCE.md "A crowded
# machine"): camclass-bench on the random mobilenet_v2, rounds alternating CAMCLASS_CPU_POOL=always
# (the pool at every run) and auto (the calling thread alone while crowded), with HOGS `yes`
# processes beside it; prints each round's median. Figures only.
#
#   tools/perf_crowded.sh [HOGS [ROUNDS [RUNS]]]     # defaults 4, 3, 30
#
# On a machine others share, AUTOGROUP_NICE=-20 (root) puts the benchmark and its hogs in an
# autogroup of their own at that nice: they then have the cores nearly alone, a quiet machine's
# proxy (HOGS=0) in which they compete only with each other.
set -u
build=${BUILD:-build}
hogs=${1:-4} rounds=${2:-3} runs=${3:-30}
bench="$build/app/camclass-bench" model="$build/tools/mobilenet_v2_random.ccm"
[ -x "$bench" ] && [ -f "$model" ] || { echo "perf_crowded: build first (ninja -C $build)" >&2; exit 2; }
if [ -n "${AUTOGROUP_NICE:-}" ] && [ -z "${PERF_CROWDED_GROUPED:-}" ]; then
    PERF_CROWDED_GROUPED=1 exec setsid "$0" "$@"
fi
[ -n "${AUTOGROUP_NICE:-}" ] && { echo "$AUTOGROUP_NICE" > /proc/self/autogroup || exit 2; }
pids=()
trap 'for p in "${pids[@]}"; do kill "$p"; done' EXIT
for _ in $(seq "$hogs"); do yes > /dev/null & pids+=($!); done
echo "threads 2, $hogs hogs, $runs runs a round, load $(cut -d' ' -f1 /proc/loadavg)"
for round in $(seq "$rounds"); do
    for pool in always auto; do
        med=$(CAMCLASS_CPU_POOL=$pool "$bench" "$model" --backend cpu --threads 2 --runs "$runs" \
              --warmup 3 2>&1 | awk '/^median/{print $2}')
        echo "round $round  CAMCLASS_CPU_POOL=$pool  median $med ms"
    done
done
