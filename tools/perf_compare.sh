#!/bin/bash
# camclass — mobilenet_v2 (224x224, batch 1) on camclass's backends and on the engines a user
# would pick instead, measured in ONE run at 1 and 2 threads: every round runs every engine
# once, in turn, so that machine load hits all of them alike. Prints each round's medians,
# then a table of the median of the round medians and the same-run ratios at 2 threads.
#
#   tools/perf_compare.sh [BUILD_DIR] [ROUNDS] [RUNS_PER_ROUND]
#
# Engines: camclass cpu (XNNPACK) fp32 and int8 (build/tools/mobilenet_v2_random{,_int8}.ccm:
# seeded random weights; the int8 bundle has int8 activations too), camclass vulkan fp32 and
# int8 (threads do not apply: once per round), PyTorch jit (optimize_for_inference),
# optimize_for_mobile, quantized with the qnnpack and onednn engines (tools/bench_torch.py),
# and ONNX Runtime's CPU provider (npm onnxruntime-node, tools/bench_ort.js) on the same
# torchvision model exported to ONNX. Weights do not change the speed.
#
# Thread pools: every engine keeps its default wait policy, which spins between operators
# (OpenMP's OMP_WAIT_POLICY default for PyTorch, ONNX Runtime's allow_spinning, pthreadpool's
# spin-then-sleep for XNNPACK): the fastest on a quiet machine, which is what this table
# compares. OMP_WAIT_POLICY=PASSIVE in the environment makes PyTorch's threads sleep instead
# (slower here, kinder to other load); the header says which applied. camclass's behaviour
# under load is measured inside the app (docs/PERFORMANCE.md, "Threads under load").
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-5}
runs=${3:-30}
bench="$build/app/camclass-bench"
fp32="$build/tools/mobilenet_v2_random.ccm"
int8="$build/tools/mobilenet_v2_random_int8.ccm"
[ -x "$bench" ] || { echo "perf_compare: $bench not built; run tools/setup.sh first" >&2; exit 2; }
py=/usr/bin/python3

onnx="${XDG_CACHE_HOME:-$HOME/.cache}/camclass/perf/mobilenet_v2.onnx"
have_ort=yes
if [ ! -d tools/ort/node_modules/onnxruntime-node ]; then
  echo "perf_compare: installing onnxruntime-node into tools/ort (npm)" >&2
  (cd tools/ort && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund >/dev/null 2>&1) ||
    { echo "perf_compare: npm install of onnxruntime-node failed; ONNX Runtime rows skipped" >&2; have_ort=no; }
fi
if [ ! -s "$onnx" ]; then
  mkdir -p "$(dirname "$onnx")"
  $py tools/bench_torch.py --export-onnx "$onnx" >/dev/null 2>&1 ||
    { echo "perf_compare: exporting mobilenet_v2 to ONNX failed; ONNX Runtime rows skipped" >&2; have_ort=no; }
fi

# name|command (THREADS is replaced); "-" in the name's threads field: run once per round.
engines=(
  "camclass cpu fp32|$bench $fp32 --backend cpu --threads THREADS --runs $runs"
  "camclass cpu int8|$bench $int8 --backend cpu --threads THREADS --runs $runs"
  "camclass vulkan fp32 (lavapipe)|$bench $fp32 --backend vulkan --runs $runs"
  "camclass vulkan int8 (lavapipe)|$bench $int8 --backend vulkan --runs $runs"
  "PyTorch jit (optimize_for_inference)|$py tools/bench_torch.py --variant jit --threads THREADS --runs $runs"
  "PyTorch optimize_for_mobile|$py tools/bench_torch.py --variant mobile --threads THREADS --runs $runs"
  "PyTorch quantized, qnnpack|$py tools/bench_torch.py --variant quant-qnnpack --threads THREADS --runs $runs"
  "PyTorch quantized, onednn|$py tools/bench_torch.py --variant quant-onednn --threads THREADS --runs $runs"
)
[ "$have_ort" = yes ] &&
  engines+=("ONNX Runtime 1.30 (CPU)|node tools/bench_ort.js $onnx --threads THREADS --runs $runs")

echo "perf_compare: $rounds rounds x $runs runs, threads 1 and 2; OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-default (spinning)}; $(nproc) CPUs"
declare -A got # "engine index,threads" -> space-separated round medians
for ((r = 1; r <= rounds; r++)); do
  line="round $r:"
  for i in "${!engines[@]}"; do
    name=${engines[$i]%%|*}
    cmd=${engines[$i]#*|}
    for t in 1 2; do
      [[ $cmd == *THREADS* ]] || [ $t = 2 ] || continue # no threads: once, in the 2 column
      out=$(${cmd//THREADS/$t} 2>&1) || true
      ms=$(awk '$1 == "median" {print $2; exit}' <<<"$out")
      if [ -z "$ms" ]; then
        echo "perf_compare: $name ($t threads) failed: $(head -n1 <<<"$out")" >&2
        ms=nan
      fi
      got[$i,$t]="${got[$i,$t]:-} $ms"
      line+=" $name/$t $ms;"
    done
  done
  echo "$line"
done

med() { # median of the numbers given, "failed" when none
  printf '%s\n' "$@" | grep -v nan | sort -g |
    awk '{a[NR]=$1} END {if (!NR) print "failed"; else print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'
}
declare -A m
for i in "${!engines[@]}"; do
  for t in 1 2; do
    [ -n "${got[$i,$t]:-}" ] && m[$i,$t]=$(med ${got[$i,$t]}) || m[$i,$t]="–"
  done
done
ref_of() { # the 2-thread median of the engine whose name starts with $1, else "–"
  for i in "${!engines[@]}"; do
    [[ ${engines[$i]} == "$1"* ]] && { echo "${m[$i,2]}"; return; }
  done
  echo "–"
}
jit=$(ref_of "PyTorch jit")
ort=$(ref_of "ONNX Runtime")
echo
echo "| engine | 1 thread | 2 threads | ÷ PyTorch jit (2 thr) | ÷ ONNX Runtime (2 thr) |"
echo "|---|---|---|---|---|"
for i in "${!engines[@]}"; do
  awk -v n="${engines[$i]%%|*}" -v a="${m[$i,1]}" -v b="${m[$i,2]}" -v j="$jit" -v o="$ort" '
    function ms(x) { return (x ~ /^[0-9.]+$/) ? sprintf("%.2f ms", x) : x }
    function ratio(x, y) { return (x ~ /^[0-9.]+$/ && y ~ /^[0-9.]+$/) ? sprintf("%.2f", x / y) : "–" }
    BEGIN { printf "| %s | %s | %s | %s | %s |\n", n, ms(a), ms(b), ratio(b, j), ratio(b, o) }'
done
echo
echo "(median of $rounds round medians, $runs runs each; vulkan rows ignore threads and sit in the 2-thread column)"
