#!/bin/bash
# camclass — run one libFuzzer target of tests/fuzz/ (docs/RELIABILITY.md, "Fuzzing").
#
#   tools/fuzz.sh TARGET SECONDS      fuzz TARGET (bundle, manifest, image, y4m, config,
#                                     preprocess, mqtt, video, http) for SECONDS: the committed
#                                     corpus tests/fuzz/corpus/TARGET is read, new inputs go to the
#                                     scratch corpus build-fuzz/corpus/TARGET (kept between
#                                     runs), crashes to build-fuzz/crashes/TARGET/
#   tools/fuzz.sh --check TARGET SECONDS
#                                     what the `fuzz` meson suite runs: the same with a
#                                     throw-away scratch corpus; fails on any crash, leak,
#                                     sanitizer report or timeout
#   tools/fuzz.sh --build             only configure and build ./build-fuzz
#
# The fuzz build is its own build dir (./build-fuzz, or $CAMCLASS_FUZZ_BUILD), configured with
# CC=clang and -Dfuzz=true (tests/fuzz/meson.build): gcc cannot link libFuzzer, and the normal
# ./build stays a gcc build. Needs Debian's clang and libclang-rt-14-dev (tools/setup.sh).
# Extra libFuzzer flags can be given in FUZZ_FLAGS (e.g. FUZZ_FLAGS=-max_len=65536).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CAMCLASS_FUZZ_BUILD:-$root/build-fuzz}
targets="bundle manifest image y4m config preprocess mqtt video http"

usage() {
  echo "usage: tools/fuzz.sh [--check] TARGET SECONDS | --build   (TARGET: $targets)" >&2
  exit 2
}

build_fuzz() {
  # One build at a time: the suite's tests (and a long run beside them) share ./build-fuzz.
  exec 9<"$0"
  flock 9
  if ! command -v clang >/dev/null; then
    echo "fuzz: clang is not installed; install Debian's clang and libclang-rt-14-dev" \
         "(tools/setup.sh does)" >&2
    exit 1
  fi
  if [ ! -f "$build/build.ninja" ]; then
    CC=clang meson setup "$build" "$root" -Dfuzz=true --buildtype=debugoptimized \
      -Dwerror=true >"$build.setup.log" 2>&1 || {
      cat "$build.setup.log" >&2
      echo "fuzz: meson setup of $build failed (see above)" >&2
      exit 1
    }
    rm -f "$build.setup.log"
  fi
  ninja -C "$build" >&2
  flock -u 9
}

check=false
case "${1:-}" in
  --build) build_fuzz; exit 0 ;;
  --check) check=true; shift ;;
esac
[ $# -eq 2 ] || usage
target=$1 seconds=$2
case " $targets " in *" $target "*) ;; *) usage ;; esac
case "$seconds" in ''|*[!0-9]*) usage ;; esac

build_fuzz
bin=$build/tests/fuzz/fuzz_$target
corpus=$root/tests/fuzz/corpus/$target
crashes=$build/crashes/$target
mkdir -p "$crashes"
flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
       -artifact_prefix="$crashes/")
[ -f "$root/tests/fuzz/$target.dict" ] && flags+=(-dict="$root/tests/fuzz/$target.dict")
# Leaks are reported at exit of each input's run only with detect_leaks (ASan's default).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

if $check; then
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
else
  scratch=$build/corpus/$target
  mkdir -p "$scratch"
fi
echo "fuzz: $bin for $seconds s; corpus $corpus (+ $scratch); crashes in $crashes/" >&2
# The first directory receives the new inputs: the scratch one, never the committed corpus.
# shellcheck disable=SC2086
"$bin" "${flags[@]}" ${FUZZ_FLAGS:-} "$scratch" "$corpus" && rc=0 || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "fuzz: $target failed (exit $rc); the input is in $crashes/; reproduce with" \
       "$bin $crashes/<file>" >&2
fi
exit "$rc"
