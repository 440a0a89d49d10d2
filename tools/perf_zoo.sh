#!/bin/bash
# camclass — the torchvision zoo (224x224, batch 1) on camclass's cpu and vulkan backends and on
# PyTorch (jit, optimize_for_inference), measured in ONE run: every round runs every engine on
# every model once, in turn, so that machine load hits all of them alike. Prints each round's
# medians, then per model the median of the round medians and the same-run ratio cpu / PyTorch.
#
#   tools/perf_zoo.sh [BUILD_DIR] [ROUNDS] [RUNS_PER_ROUND] [THREADS] [MODEL ...]
#
# The bundles are exported once into BUILD_DIR/perf-zoo/ with seeded random weights (weights do
# not change the speed). Vulkan runs RUNS_PER_ROUND / 4 times (at least 3): on lavapipe a big
# model takes a second a run.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-3}
runs=${3:-12}
threads=${4:-2}
shift $(( $# < 4 ? $# : 4 ))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(resnet18 resnet50 mobilenet_v2 mobilenet_v3_small
  mobilenet_v3_large efficientnet_b0 squeezenet1_1 densenet121 shufflenet_v2_x1_0 googlenet
  regnet_x_400mf regnet_y_400mf mnasnet0_5)
bench="$build/app/camclass-bench"
[ -x "$bench" ] || { echo "perf_zoo: $bench not built; run tools/setup.sh first" >&2; exit 2; }
dir="$build/perf-zoo"
mkdir -p "$dir"
vk_runs=$(( runs / 4 < 3 ? 3 : runs / 4 ))
for m in "${models[@]}"; do
  [ -f "$dir/$m.ccm" ] || /usr/bin/python3 tools/camclass-export --model "$m" --random-seed 1 \
    -o "$dir/$m.ccm" >/dev/null
done

median_of() { # the "median X ms" line of camclass-bench / bench_torch.py output
  awk '/^median/ {print $2}'
}

declare -A res
echo "perf_zoo: $(nproc) CPUs, $threads threads, $rounds rounds, $runs runs (vulkan $vk_runs)"
echo "          $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for r in $(seq 1 "$rounds"); do
  for m in "${models[@]}"; do
    cpu=$("$bench" "$dir/$m.ccm" --backend cpu --threads "$threads" --runs "$runs" 2>/dev/null |
          median_of)
    vk=$("$bench" "$dir/$m.ccm" --backend vulkan --runs "$vk_runs" 2>/dev/null | median_of)
    pt=$(/usr/bin/python3 tools/bench_torch.py --model "$m" --variant jit --threads "$threads" \
         --runs "$runs" 2>/dev/null | median_of)
    cpu=${cpu:-failed} vk=${vk:-failed} pt=${pt:-failed}  # a run that failed prints no median
    res[$m,$r]="$cpu $vk $pt"
    printf "round %d  %-20s cpu %8s ms  vulkan %9s ms  pytorch %8s ms\n" "$r" "$m" "$cpu" "$vk" \
      "$pt"
  done
done

echo
printf "%-20s %10s %12s %12s %14s\n" model "cpu ms" "vulkan ms" "pytorch ms" "cpu/pytorch"
for m in "${models[@]}"; do
  for col in 1 2 3; do
    vals=$(for r in $(seq 1 "$rounds"); do echo "${res[$m,$r]}" | cut -d' ' -f$col; done |
           grep -v failed | sort -g | tr '\n' ' ')
    med[$col]=$(echo "$vals" | awk '{n = NF; if (!n) print "failed"; else if (n % 2)
                                    print $((n + 1) / 2);
                                    else printf "%.3f\n", ($(n / 2) + $(n / 2 + 1)) / 2}')
  done
  ratio=$(awk -v a="${med[1]}" -v b="${med[3]}" 'BEGIN {
    if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-"}')
  printf "%-20s %10s %12s %12s %14s\n" "$m" "${med[1]}" "${med[2]}" "${med[3]}" "$ratio"
done
