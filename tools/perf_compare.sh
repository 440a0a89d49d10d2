#!/bin/bash
# camclass — mobilenet_v2 on camclass's Vulkan and CPU backends and on PyTorch, measured in one
# run: rounds alternate the three so that machine load hits all of them alike. Prints each
# round's medians, then the median of the round medians and the ratios to PyTorch.
#
#   tools/perf_compare.sh [BUILD_DIR] [ROUNDS] [RUNS_PER_ROUND]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-5}
runs=${3:-30}
bench="$build/app/camclass-bench"
model="$build/tools/mobilenet_v2_random.ccm"
[ -x "$bench" ] || { echo "perf_compare: $bench not built; run tools/setup.sh first" >&2; exit 2; }

median_of() { # camclass-bench / bench_torch.py print "median   X ms"
  awk '$1 == "median" {print $2; exit}'
}
declare -a vk cpu pt
for ((r = 1; r <= rounds; r++)); do
  vk+=("$("$bench" "$model" --backend vulkan --runs "$runs" 2>/dev/null | median_of)")
  cpu+=("$("$bench" "$model" --backend cpu --runs "$runs" 2>/dev/null | median_of)")
  pt+=("$(/usr/bin/python3 tools/bench_torch.py --threads "$(nproc)" --runs "$runs" 2>/dev/null | median_of)")
  echo "round $r: vulkan ${vk[-1]} ms, cpu ${cpu[-1]} ms, pytorch ${pt[-1]} ms"
done
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
v=$(med "${vk[@]}"); c=$(med "${cpu[@]}"); p=$(med "${pt[@]}")
echo
echo "| engine | median of $rounds round medians ($runs runs each) | ÷ PyTorch |"
echo "|---|---|---|"
awk -v v="$v" -v c="$c" -v p="$p" 'BEGIN {
  printf "| camclass vulkan | %.2f ms | %.2f |\n", v, v / p
  printf "| camclass cpu | %.2f ms | %.2f |\n", c, c / p
  printf "| PyTorch (optimize_for_inference) | %.2f ms | 1.00 |\n", p }'
