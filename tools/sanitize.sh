#!/bin/sh
# camclass — tests under the sanitizers (docs/RELIABILITY.md, "Sanitizers and validation").
# Not part of tools/test.sh.
#   tools/sanitize.sh [MESON TEST ARGS]   the unit, engine and app suites under
#                                         AddressSanitizer + UndefinedBehaviorSanitizer in
#                                         ./build-asan (or the tests named)
#   tools/sanitize.sh --tsan              the threaded tests under ThreadSanitizer in ./build-tsan
# Both are debugoptimized builds, warnings are errors. The capture suite (qemu guests) is left
# out: the two statically linked guest programs are not built under a sanitizer
# (tests/capture/meson.build).
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"

if [ "${1:-}" = "--tsan" ]; then
  shift
  if [ ! -f build-tsan/build.ninja ]; then
    meson setup build-tsan --buildtype=debugoptimized -Dwerror=true -Db_sanitize=thread \
      -Db_lundef=false
  fi
  # Only what the threaded tests need (the zoo's exports are not), then those tests: the
  # latest-frame slot, the file source's producer thread, the detection log, camclass's
  # pipeline threads (headless, CPU backend), the network stream's thread with its reconnects
  # (video_live), the recorder's thread (--output; SDL, FreeType and FFmpeg themselves are not
  # instrumented), --serve's connection threads, request queue and /stream drawing thread
  # (libmicrohttpd itself is not instrumented), and the reference backend's thread pool.
  ninja -C build-tsan tests/capture/test_frame_slot tests/capture/test_sources \
    tests/app/test_detlog app/camclass tools/mobilenet_v2_random.ccm tests/engine/test_network \
    tests/engine/small_net.ccm tests/engine/network-small-input.bin tests/app/test_recorder
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
  rc=0
  meson test -C build-tsan --no-rebuild --print-errorlogs --num-processes 2 \
    --timeout-multiplier 4 frame_slot sources detlog headless video_live recorder record_stop serve "$@" || rc=1
  e=build-tsan/tests/engine
  echo "ref backend, 3 threads:"
  "$e/test_network" ref "$e/small_net.ccm" "$e/network-small-input.bin" \
    "$e/network-small-logits.bin" 3 || rc=1
  exit "$rc"
fi

if [ ! -f build-asan/build.ninja ]; then
  meson setup build-asan --buildtype=debugoptimized -Dwerror=true \
    -Db_sanitize=address,undefined -Db_lundef=false
fi
ninja -C build-asan
# SDL's OpenGL renderer (the overlay test, camclass's window) dlopen()s Mesa's EGL and swrast
# driver and dlclose()s them at SDL_Quit: what the driver still holds then is reported as leaked
# from "<unknown module>", which no suppression can name. Preloaded, they stay mapped, their
# allocations stay reachable, and nothing is reported (ASan must then not insist on coming
# first: verify_asan_link_order=0). Leaks inside still-loaded driver libraries are suppressed
# (tests/sanitizers/lsan.supp); ours are not. Any undefined behaviour stops the program.
mesa_gl="libEGL_mesa.so.0 /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so"
export LD_PRELOAD="$mesa_gl${LD_PRELOAD:+ $LD_PRELOAD}"
export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:verify_asan_link_order=0"
export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"
if [ "$#" -eq 0 ]; then
  set -- --suite unit --suite engine --suite app --no-suite capture
fi
meson test -C build-asan --no-rebuild --print-errorlogs --num-processes 2 \
  --timeout-multiplier 4 "$@"
