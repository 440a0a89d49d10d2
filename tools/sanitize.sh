#!/bin/bash
# camclass — tests under the sanitizers (docs/RELIABILITY.md, "Sanitizers and validation").
#   tools/sanitize.sh [MESON TEST ARGS]   the unit, engine and app suites under
#                                         AddressSanitizer + UndefinedBehaviorSanitizer in
#                                         ./build-asan (or the tests named); by hand, ~21 min
#   tools/sanitize.sh --tsan              the threaded tests under ThreadSanitizer in ./build-tsan
#   tools/sanitize.sh --ci asan|tsan      the CI subset (the tests of suite `sanitize`, run by
#                                         tools/test.sh): only the targets the subset needs are
#                                         built, then the chosen tests run (lists below)
# Both are debugoptimized builds, warnings are errors. The capture suite (qemu guests) is left
# out: the two statically linked guest programs are not built under a sanitizer
# (tests/input/meson.build). A build dir is configured on first use (from a fresh clone too)
# and used by one run at a time (flock on ./build-asan.lock, ./build-tsan.lock): the suite's
# test and a run by hand beside it share it.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"

# setup DIR SANITIZERS: configure DIR on first use and hold its lock until this script ends.
# A dir left without build.ninja (a setup that was killed) is configured again from scratch.
setup() {
  exec 9>"$1.lock"
  flock 9
  if [ ! -f "$1/build.ninja" ]; then
    rm -rf "$1"
    meson setup "$1" --buildtype=debugoptimized -Dwerror=true -Db_sanitize="$2" \
      -Db_lundef=false >"$1.setup.log" 2>&1 || {
      cat "$1.setup.log" >&2
      echo "sanitize: meson setup of $1 failed (see above)" >&2
      exit 1
    }
    rm -f "$1.setup.log"
  fi
}

# The environment of a TSan run: any data race or lock-order inversion stops the program.
tsan_env() {
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
}

# The environment of an ASan + UBSan run.
# SDL's OpenGL renderer (the overlay test, camclass's window) dlopen()s Mesa's EGL and swrast
# driver and dlclose()s them at SDL_Quit: what the driver still holds then is reported as leaked
# from "<unknown module>", which no suppression can name. Preloaded, they stay mapped, their
# allocations stay reachable, and nothing is reported (ASan must then not insist on coming
# first: verify_asan_link_order=0). Leaks inside still-loaded driver libraries are suppressed
# (tests/sanitizers/lsan.supp); ours are not. Any undefined behaviour stops the program.
asan_env() {
  # The driver's directory by this machine's multiarch triplet (x86_64-linux-gnu,
  # aarch64-linux-gnu on a Raspberry Pi).
  local triplet
  triplet=$(gcc -print-multiarch 2>/dev/null || dpkg-architecture -qDEB_HOST_MULTIARCH)
  local mesa_gl="libEGL_mesa.so.0 /usr/lib/$triplet/dri/swrast_dri.so"
  export LD_PRELOAD="$mesa_gl${LD_PRELOAD:+ $LD_PRELOAD}"
  export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:verify_asan_link_order=0"
  export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"
}

# The reference backend's thread pool on the small network, 3 threads (build dir $1).
ref_pool() {
  local e=$1/tests/engine
  echo "ref backend, 3 threads:"
  "$e/test_network" ref "$e/small_net.ccm" "$e/network-small-input.bin" \
    "$e/network-small-logits.bin" 3
}

if [ "${1:-}" = "--ci" ]; then
  # The CI subset (docs/RELIABILITY.md, "Sanitizers in CI"): what each test covers per second
  # of its build and run, measured there. Not in it: the Vulkan tests (the driver's leaks, and
  # llvmpipe races under TSan that are not ours; validation checks them in CI), the zoo and
  # network tests (PyTorch exports and references; XNNPACK is not instrumented), and the long
  # app tests (cli_exit, video_files, mqtt, the other record_* parts): tools/sanitize.sh by hand.
  case "${2:-}" in
    asan)
      setup build-asan address,undefined
      # The parsers and units (model, planner, CPU ops, the CPU backends' kernel cases with
      # poisoned memory, bundle loader, frame slot, file sources, capture choice, detection
      # log, command line and config, MQTT settings, sd_notify), then camclass itself on the CPU backend: the headless pipeline (stdout,
      # a directory input, the summary), the log's disk full, SIGHUP storms, the model replaced
      # while loaded, the recorder and --output stopped by SIGTERM, the HTTP service's
      # decisions and --serve with real clients (every error path, 32 connections, /stream,
      # /metrics). Not `headless`: its window
      # run expects a present within its time, which a loaded machine under ASan can miss.
      ninja -C build-asan tests/engine/test_model tests/engine/test_plan \
        tests/engine/test_cpu_ops tests/engine/test_kernels tests/engine/test_bundle \
        tests/input/test_frame_slot tests/input/test_capture_choice \
        tests/input/test_sources tests/output/test_detlog \
        tests/app/test_cli tests/output/test_mqtt_parse tests/output/test_notify \
        tests/output/test_recorder tests/output/test_http_request tests/output/test_http_deadline \
        app/camclass tools/mobilenet_v2_random.ccm tests/engine/small_net.ccm
      asan_env
      exec meson test -C build-asan --no-rebuild --print-errorlogs --num-processes 2 \
        --timeout-multiplier 2 model plan cpu_ops kernels-cpu bundle frame_slot capture_choice \
        sources detlog cli mqtt_parse notify recorder headless_pipe headless_file headless_summary \
        faults_logfull faults_sighup faults_model record_stop http_request http_deadline serve ;;
    tsan)
      setup build-tsan thread
      # The threads: the latest-frame slot, the file source's producer, the detection log,
      # camclass's pipeline threads (CPU backend) with a full disk, the network stream's
      # thread (reconnects, stop while connecting: camclass's video_live and the unit test
      # source_stream), the recorder's thread and queue (--output stopped by SIGTERM), SIGHUP
      # storms (the signal flag read by the inference thread), --serve's headers' deadline
      # thread, and the reference backend's thread pool.
      ninja -C build-tsan tests/input/test_frame_slot tests/input/test_sources \
        tests/input/test_source_stream tests/output/test_detlog tests/output/test_recorder \
        tests/output/test_http_deadline app/camclass tests/engine/test_network \
        tests/engine/small_net.ccm tests/engine/network-small-input.bin \
        tests/engine/network-small-logits.bin
      tsan_env
      rc=0
      meson test -C build-tsan --no-rebuild --print-errorlogs --num-processes 2 \
        --timeout-multiplier 2 frame_slot sources source_stream detlog recorder faults_logfull \
        faults_sighup video_live record_stop http_deadline || rc=1
      ref_pool build-tsan || rc=1
      exit "$rc" ;;
    *)
      echo "usage: tools/sanitize.sh --ci asan|tsan" >&2
      exit 2 ;;
  esac
fi

if [ "${1:-}" = "--tsan" ]; then
  shift
  setup build-tsan thread
  # Only what the threaded tests need (the zoo's exports are not), then those tests: the
  # latest-frame slot, the file source's producer thread, the detection log, camclass's
  # pipeline threads (headless, CPU backend), the network stream's thread with its reconnects
  # (source_stream, video_live), the recorder's thread (--output; SDL, FreeType and FFmpeg
  # themselves are not instrumented), --serve's connection threads, request queue and /stream
  # drawing thread (libmicrohttpd itself is not instrumented), and the reference backend's
  # thread pool.
  ninja -C build-tsan tests/input/test_frame_slot tests/input/test_sources \
    tests/input/test_source_stream tests/output/test_detlog app/camclass \
    tools/mobilenet_v2_random.ccm tests/engine/test_network \
    tests/engine/small_net.ccm tests/engine/network-small-input.bin \
    tests/engine/network-small-logits.bin tests/output/test_recorder tests/output/test_http_deadline
  tsan_env
  rc=0
  meson test -C build-tsan --no-rebuild --print-errorlogs --num-processes 2 \
    --timeout-multiplier 4 frame_slot sources source_stream detlog headless video_live recorder \
    record_stop serve http_deadline "$@" || rc=1
  ref_pool build-tsan || rc=1
  exit "$rc"
fi

setup build-asan address,undefined
ninja -C build-asan
asan_env
if [ "$#" -eq 0 ]; then
  set -- --suite unit --suite engine --suite app --no-suite capture
fi
meson test -C build-asan --no-rebuild --print-errorlogs --num-processes 2 \
  --timeout-multiplier 4 "$@"
