#!/bin/bash
# camclass — the torchvision zoo (224x224, batch 1) on camclass's cpu and vulkan backends, on
# PyTorch (jit, optimize_for_inference) and, once `tools/setup.sh ort` has installed it, on ONNX
# Runtime's CPU provider (tools/bench_ort.js), measured in ONE run: every round runs every engine
# on every model once, in turn, so that machine load hits all of them alike. Prints each round's
# medians, then per model the median of the round medians and the same-run ratios cpu / PyTorch
# and cpu / ONNX Runtime. PERF_VULKAN=0 leaves vulkan out (a big model takes a second a run on
# lavapipe).
#
#   tools/perf_zoo.sh [BUILD_DIR] [ROUNDS] [RUNS_PER_ROUND] [THREADS] [MODEL ...]
#
# The bundles are exported once into BUILD_DIR/perf-zoo/ with seeded random weights (weights do
# not change the speed), and for ONNX Runtime the same torchvision model, as ONNX, beside them. Vulkan runs RUNS_PER_ROUND / 4 times (at least 3): on lavapipe a big
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
ort=yes
[ -d "${CAMCLASS_ORT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/camclass/ort}/node_modules/onnxruntime-node" ] ||
  { ort=no; echo "perf_zoo: no ONNX Runtime column: onnxruntime-node is not installed (tools/setup.sh ort)" >&2; }
for m in "${models[@]}"; do
  [ -f "$dir/$m.ccm" ] || /usr/bin/python3 tools/camclass-export --model "$m" --random-seed 1 \
    -o "$dir/$m.ccm" >/dev/null
  [ $ort = no ] || [ -s "$dir/$m.onnx" ] || { /usr/bin/python3 tools/bench_torch.py --model "$m" \
    --export-onnx "$dir/$m.onnx.tmp" >/dev/null 2>&1 && mv "$dir/$m.onnx.tmp" "$dir/$m.onnx"; } ||
    echo "perf_zoo: exporting $m to ONNX failed; its ONNX Runtime column says failed" >&2
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
    vk=-
    [ "${PERF_VULKAN:-1}" = 0 ] ||
      vk=$("$bench" "$dir/$m.ccm" --backend vulkan --runs "$vk_runs" 2>/dev/null | median_of)
    pt=$(/usr/bin/python3 tools/bench_torch.py --model "$m" --variant jit --threads "$threads" \
         --runs "$runs" 2>/dev/null | median_of)
    on=-
    [ $ort = no ] || on=$(node tools/bench_ort.js "$dir/$m.onnx" --threads "$threads" \
                            --runs "$runs" 2>/dev/null | median_of)
    cpu=${cpu:-failed} vk=${vk:-failed} pt=${pt:-failed} on=${on:-failed} # no median: failed
    res[$m,$r]="$cpu $vk $pt $on"
    printf "round %d  %-20s cpu %8s ms  vulkan %9s ms  pytorch %8s ms  onnxruntime %8s ms\n" \
      "$r" "$m" "$cpu" "$vk" "$pt" "$on"
  done
done

echo
printf "%-20s %10s %12s %12s %14s %12s %10s\n" model "cpu ms" "vulkan ms" "pytorch ms" \
  "cpu/pytorch" "ort ms" "cpu/ort"
for m in "${models[@]}"; do
  for col in 1 2 3 4; do
    vals=$(for r in $(seq 1 "$rounds"); do echo "${res[$m,$r]}" | cut -d' ' -f$col; done |
           grep -v failed | sort -g | tr '\n' ' ')
    med[$col]=$(echo "$vals" | awk '{n = NF; if (!n) print "failed"; else if (n % 2)
                                    print $((n + 1) / 2);
                                    else printf "%.3f\n", ($(n / 2) + $(n / 2 + 1)) / 2}')
  done
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN {
    if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-"}'; }
  printf "%-20s %10s %12s %12s %14s %12s %10s\n" "$m" "${med[1]}" "${med[2]}" "${med[3]}" \
    "$(ratio "${med[1]}" "${med[3]}")" "${med[4]}" "$(ratio "${med[1]}" "${med[4]}")"
done
