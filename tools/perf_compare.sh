#!/bin/bash
# camclass — mobilenet_v2 (224x224, batch 1) on camclass's backends and on the engines a user
# would pick instead, measured in ONE run at 1 and 2 threads: every round runs every engine
# once, in turn, so that machine load hits all of them alike. Prints each round's medians,
# then a table of the median of the round medians and of each round's own ratios (same-run).
#
#   tools/perf_compare.sh [BUILD_DIR] [ROUNDS] [RUNS_PER_ROUND]
#
# Engines: camclass cpu (XNNPACK) fp32 and int8 (build/tools/mobilenet_v2_random{,_int8}.ccm:
# seeded random weights; the int8 bundle has int8 activations too), each also with
# CAMCLASS_CPU_FUSED=off (no fused inverted-residual blocks), fp32 with CAMCLASS_CPU_PW=off (no
# own 1x1 GEMM, engine/cpu/f32_gemm.h), int8 with CAMCLASS_CPU_Q8GEMM=off (no int8 1x1 convs on
# our own GEMM), with CAMCLASS_CPU_Q8STEM=off (no own int8 stem, engine/cpu/q8_stem.h) and with
# CAMCLASS_CPU_Q8DW=off (no own int8 depthwise, engine/cpu/q8_dw.h), both
# again with an AVX2-only host's kernels (where the test build has the shim, below; ONNX
# Runtime too, on an AVX-512 host: tools/ort_avx2.py), camclass
# vulkan fp32 and int8 (threads do not apply: once per round), PyTorch jit (optimize_for_inference),
# optimize_for_mobile, quantized with the qnnpack and onednn engines (tools/bench_torch.py),
# and ONNX Runtime's CPU provider (npm onnxruntime-node, tools/bench_ort.js) on the same
# mobilenet_v2 exported to ONNX: fp32 with the weights of mobilenet_v2_random.ccm, and int8
# (PyTorch's qnnpack quantization of it written as QDQ, which ONNX Runtime runs as QLinearConv).
# Weights do not change the speed. ONNX Runtime rows appear once `tools/setup.sh ort` has
# installed it (npm, into ~/.cache/camclass/ort); before the rounds, the ONNX Runtime models
# are run once on camclass-bench's input and their top-1 and max |difference| from camclass
# cpu fp32's output printed: the fp32 one must be the same model.
#
# PERF_ENGINES=REGEX (grep -E, on the names below) runs only the engines it matches, e.g.
# PERF_ENGINES='camclass cpu|ONNX' tools/perf_compare.sh build 5 30.
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

cache="${XDG_CACHE_HOME:-$HOME/.cache}/camclass"
onnx="$cache/perf/mobilenet_v2_seed1.onnx"
onnx_int8="$cache/perf/mobilenet_v2_seed1_int8_qnnpack.onnx"
have_ort=yes have_ort_int8=yes
if [ ! -d "${CAMCLASS_ORT_DIR:-$cache/ort}/node_modules/onnxruntime-node" ]; then
  echo "perf_compare: ONNX Runtime rows skipped: onnxruntime-node is not installed (tools/setup.sh ort)" >&2
  have_ort=no have_ort_int8=no
fi
export_onnx() { # OUT [bench_torch.py options]: once, into the cache
  [ -s "$1" ] && return
  mkdir -p "$(dirname "$1")"
  $py tools/bench_torch.py --export-onnx "$1.tmp" "${@:2}" >/dev/null 2>&1 && mv "$1.tmp" "$1"
}
if [ "$have_ort" = yes ]; then
  export_onnx "$onnx" ||
    { echo "perf_compare: exporting mobilenet_v2 to ONNX failed; ONNX Runtime rows skipped" >&2; have_ort=no have_ort_int8=no; }
  export_onnx "$onnx_int8" --variant quant-qnnpack ||
    { echo "perf_compare: exporting the quantized mobilenet_v2 to ONNX failed; ONNX Runtime int8 row skipped" >&2; have_ort_int8=no; }
fi

# The CAMCLASS_CPU_PW=off row (no own f32 1x1 GEMM: the engine before it) keeps a cache folder
# of its own, empty, so that its fused-block and BLIS choices are measured without the GEMM
# too (with CAMCLASS_CPU_PW set the layer-choice cache is read, never written).
mkdir -p "$cache/no-pw"
# name|command (THREADS is replaced); "-" in the name's threads field: run once per round.
engines=(
  "camclass cpu fp32|$bench $fp32 --backend cpu --threads THREADS --runs $runs"
  "camclass cpu fp32, CAMCLASS_CPU_FUSED=off|env CAMCLASS_CPU_FUSED=off $bench $fp32 --backend cpu --threads THREADS --runs $runs"
  "camclass cpu fp32, CAMCLASS_CPU_PW=off|env CAMCLASS_CPU_PW=off XDG_CACHE_HOME=$cache/no-pw $bench $fp32 --backend cpu --threads THREADS --runs $runs"
  "camclass cpu int8|$bench $int8 --backend cpu --threads THREADS --runs $runs"
  "camclass cpu int8, CAMCLASS_CPU_FUSED=off|env CAMCLASS_CPU_FUSED=off $bench $int8 --backend cpu --threads THREADS --runs $runs"
  "camclass cpu int8, CAMCLASS_CPU_Q8GEMM=off|env CAMCLASS_CPU_Q8GEMM=off $bench $int8 --backend cpu --threads THREADS --runs $runs"
  "camclass cpu int8, CAMCLASS_CPU_Q8STEM=off|env CAMCLASS_CPU_Q8STEM=off $bench $int8 --backend cpu --threads THREADS --runs $runs"
  "camclass cpu int8, CAMCLASS_CPU_Q8DW=off|env CAMCLASS_CPU_Q8DW=off $bench $int8 --backend cpu --threads THREADS --runs $runs"
  "camclass vulkan fp32 (lavapipe)|$bench $fp32 --backend vulkan --runs $runs"
  "camclass vulkan int8 (lavapipe)|$bench $int8 --backend vulkan --runs $runs"
  "PyTorch jit (optimize_for_inference)|$py tools/bench_torch.py --variant jit --threads THREADS --runs $runs"
  "PyTorch optimize_for_mobile|$py tools/bench_torch.py --variant mobile --threads THREADS --runs $runs"
  "PyTorch quantized, qnnpack|$py tools/bench_torch.py --variant quant-qnnpack --threads THREADS --runs $runs"
  "PyTorch quantized, onednn|$py tools/bench_torch.py --variant quant-onednn --threads THREADS --runs $runs"
)
# An AVX2-only host's kernels on this one (docs/PERFORMANCE.md, "Other hosts' kernels"): XNNPACK
# held to AVX2 by tests/engine/cpu_isa_shim.c (Zen's choice on AMD), camclass's own kernels by
# CAMCLASS_CPU_ISA=avx2; their own cache folder, as the shim is not in the cache's key. Built with
# the tests (tools/setup.sh test), x86-64 hosts with AVX2 only.
shim="$build/tests/engine/libcpu_isa_shim.so"
if [ -f "$shim" ] && grep -qw avx2 /proc/cpuinfo; then
  shim_mode=avx2
  grep -q AuthenticAMD /proc/cpuinfo && shim_mode=zen
  mkdir -p "$cache/isa-avx2"
  # glibc's own string functions too (they use AVX-512 registers where there are some).
  tunables=glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD
  held="env CAMCLASS_CPU_ISA=avx2 LD_PRELOAD=$PWD/$shim CC_ISA_SHIM=$shim_mode XDG_CACHE_HOME=$cache/isa-avx2 GLIBC_TUNABLES=$tunables"
  engines+=(
    "camclass cpu fp32, AVX2 kernels only|$held $bench $fp32 --backend cpu --threads THREADS --runs $runs"
    "camclass cpu int8, AVX2 kernels only|$held $bench $int8 --backend cpu --threads THREADS --runs $runs"
  )
  # ONNX Runtime the same, on an AVX-512 host: a copy of it that reads the AVX-512 registers as
  # not enabled (tools/ort_avx2.py, which checks that its threads then never use them).
  if [ "$have_ort" = yes ] && grep -qw avx512f /proc/cpuinfo; then
    if ort_held=$($py tools/ort_avx2.py "$onnx"); then
      ort_held="env CAMCLASS_ORT_DIR=$ort_held GLIBC_TUNABLES=$tunables node tools/bench_ort.js"
      engines+=("ONNX Runtime 1.30 (CPU) fp32, AVX2 kernels only|$ort_held $onnx --threads THREADS --runs $runs")
      [ "$have_ort_int8" = no ] ||
        engines+=("ONNX Runtime 1.30 (CPU) int8 QDQ, AVX2 kernels only|$ort_held $onnx_int8 --threads THREADS --runs $runs")
    else
      echo "perf_compare: ONNX Runtime's AVX2-only rows skipped (tools/ort_avx2.py failed)" >&2
    fi
  fi
fi
[ "$have_ort" = yes ] &&
  engines+=("ONNX Runtime 1.30 (CPU) fp32|node tools/bench_ort.js $onnx --threads THREADS --runs $runs")
[ "$have_ort_int8" = yes ] &&
  engines+=("ONNX Runtime 1.30 (CPU) int8 QDQ|node tools/bench_ort.js $onnx_int8 --threads THREADS --runs $runs")
if [ -n "${PERF_ENGINES:-}" ]; then
  kept=()
  for e in "${engines[@]}"; do grep -qE -- "$PERF_ENGINES" <<<"${e%%|*}" && kept+=("$e"); done
  [ ${#kept[@]} -gt 0 ] || { echo "perf_compare: PERF_ENGINES='$PERF_ENGINES' matches no engine" >&2; exit 2; }
  engines=("${kept[@]}")
fi

if [ "$have_ort" = yes ]; then # the same model? ONNX Runtime's outputs against camclass's
  ref=$(mktemp)
  trap 'rm -f "$ref"' EXIT
  if $bench "$fp32" --backend cpu --threads 1 --runs 1 --warmup 0 --save-output "$ref" >/dev/null; then
    models=("$onnx")
    [ "$have_ort_int8" = no ] || models+=("$onnx_int8")
    for m in "${models[@]}"; do
      echo "perf_compare: $(basename "$m") vs camclass cpu fp32: $(node tools/bench_ort.js "$m" --threads 1 \
        --runs 1 --warmup 0 --reference "$ref" | sed -n 's/^reference *[^:]*: //p')"
    done
  fi
fi
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
index_of() { # the engine named $1 exactly, else nothing
  for i in "${!engines[@]}"; do
    [ "${engines[$i]%%|*}" = "$1" ] && { echo "$i"; return; }
  done
  return 0
}
ratio_of() { # engine $1's round medians at threads $2 over engine $3's at $4, round by round:
  # the median of those same-round ratios (each round's two figures met the same machine), or "–"
  [ -n "$3" ] && [ -n "${got[$1,$2]:-}" ] && [ -n "${got[$3,$4]:-}" ] || { echo "–"; return; }
  local r
  r=$(paste <(printf '%s\n' ${got[$1,$2]}) <(printf '%s\n' ${got[$3,$4]}) |
    awk '$1 != "nan" && $2 != "nan" && $2 > 0 {print $1 / $2}')
  # shellcheck disable=SC2086
  [ -n "$r" ] && printf '%.2f' "$(med $r)" || echo "–"
}
jit=$(index_of "PyTorch jit (optimize_for_inference)")
ort=$(index_of "ONNX Runtime 1.30 (CPU) fp32")
echo
echo "| engine | 1 thread | 2 threads | ÷ PyTorch jit (2 thr) | ÷ ONNX Runtime fp32 (1 thr) | ÷ ONNX Runtime fp32 (2 thr) |"
echo "|---|---|---|---|---|---|"
for i in "${!engines[@]}"; do
  ms() { [[ $1 =~ ^[0-9.]+$ ]] && printf '%.2f ms' "$1" || echo "$1"; }
  echo "| ${engines[$i]%%|*} | $(ms "${m[$i,1]}") | $(ms "${m[$i,2]}") | $(ratio_of "$i" 2 "$jit" 2) |" \
    "$(ratio_of "$i" 1 "$ort" 1) | $(ratio_of "$i" 2 "$ort" 2) |"
done
echo
for i in "${!engines[@]}"; do # each int8 row over its fp32 twin (the same name with fp32), if any
  n=${engines[$i]%%|*}
  [[ $n == *" int8"* ]] || continue
  f=$(index_of "${n/ int8/ fp32}")
  [ -n "$f" ] && echo "$n ÷ its fp32 row: $(ratio_of "$i" 1 "$f" 1) (1 thr), $(ratio_of "$i" 2 "$f" 2) (2 thr)"
done
# The issue's goals on an AVX2-only host: both sides held to AVX2 (on such a host, the plain rows).
ort_avx2=$(index_of "ONNX Runtime 1.30 (CPU) fp32, AVX2 kernels only")
grep -qw avx512f /proc/cpuinfo || ort_avx2=$ort
for n in fp32 int8; do
  i=$(index_of "camclass cpu $n, AVX2 kernels only")
  [ -n "$i" ] && [ -n "$ort_avx2" ] &&
    echo "camclass cpu $n, AVX2 kernels only ÷ ONNX Runtime fp32 on its AVX2 kernels: $(ratio_of "$i" 1 "$ort_avx2" 1) (1 thr), $(ratio_of "$i" 2 "$ort_avx2" 2) (2 thr)"
done
echo "(times: median of $rounds round medians, $runs runs each; ratios: median of the $rounds rounds' own"
echo "ratios; vulkan rows ignore threads and sit in the 2-thread column)"
