#!/bin/bash
# camclass — the arm64 build (Raspberry Pi OS 64-bit / Debian 12 arm64), cross-built on a
# Debian 12 amd64 machine and tested under user-mode emulation (qemu-aarch64 -cpu cortex-a72,
# meson's exe_wrapper; tools/cross/arm64-debian.ini). Ends with "N passed, N failed".
#
#   tools/test-arm64.sh                  every suite that runs under emulation (see below)
#   tools/test-arm64.sh MESON TEST ARGS  those tests only, e.g. --suite unit, or test names
#   tools/test-arm64.sh --ci             the subset CI runs: builds only what it needs
#
# What it does, each step skipped when already done:
#  1. apt: the arm64 architecture (dpkg --add-architecture), the cross compiler
#     (crossbuild-essential-arm64), qemu-user, and the :arm64 dev packages camclass links, with
#     mesa-vulkan-drivers:arm64 (lavapipe) and vulkan-validationlayers:arm64 for the Vulkan
#     tests. Only here, not in tools/setup.sh: a Pi or an amd64 machine that does not
#     cross-build needs none of it.
#  2. XNNPACK and pthreadpool for arm64: Debian's packages of these are not Multi-Arch: same,
#     so their :arm64 packages cannot be installed beside the amd64 ones (apt would remove
#     those, and python3-torch with them, which the tests need). Their arm64 .debs are fetched
#     with apt-get download and unpacked into ./build-arm64-deps instead; the build finds them
#     there (-I, -L) and the programs load them from there (rpath).
#  3. meson setup ./build-arm64 with the cross file (release, warnings are errors), ninja.
#  4. meson test: the unit, engine, zoo, app and models suites, Vulkan on arm64 lavapipe under
#     the validation layer as in the native build. Not here: the capture suite and the two app
#     tests that boot an x86-64 kernel in qemu-system (the VM guest is x86-64), and the fuzz
#     suite (libFuzzer on the build machine: the parsers are the same C). docs/PLATFORMS.md.
# Needs root (or sudo) for apt-get; apt waits up to 10 min for a lock another apt holds.
set -u
cd "$(dirname "$0")/.."
root=$(pwd)

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
apt_get() {
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 "$@"
}

# Build-machine tools: the cross compiler, qemu-aarch64 (qemu-user; not qemu-user-binfmt: the
# wrapper is named in the cross file, binfmt_misc is not needed).
NATIVE="crossbuild-essential-arm64 qemu-user"
# camclass's :arm64 libraries (the same list as tools/setup.sh's dev packages), lavapipe and the
# validation layer; libcpuinfo0 is what the unpacked XNNPACK needs at run time.
ARM64="libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers libv4l-dev libzip-dev
  libcjson-dev libsdl2-dev libsdl2-ttf-dev libjpeg62-turbo-dev libpng-dev libsystemd-dev
  libblis-dev libcpuinfo0 libavformat-dev libavcodec-dev libswscale-dev libavutil-dev
  libmosquitto-dev libmicrohttpd-dev liblbfgs-dev libcurl4-openssl-dev libwebp-dev libgpiod-dev"
# Unpacked into ./build-arm64-deps (step 2).
UNPACKED="libxnnpack0 libxnnpack-dev libpthreadpool0 libpthreadpool-dev"

# The native packages: python3-torch etc. drive the tests, glslc compiles the shaders.
tools/setup.sh --packages-only || exit 1

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "test-arm64: adding the arm64 architecture (dpkg --add-architecture arm64)"
  $SUDO dpkg --add-architecture arm64 || exit 1
  apt_get update || exit 1
fi
missing=""
for p in $NATIVE $(printf '%s:arm64 ' $ARM64); do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "test-arm64: installing:$missing"
  if ! apt_get install -y --no-install-recommends $missing; then
    apt_get update && apt_get install -y --no-install-recommends $missing || {
      echo "test-arm64: apt-get could not install:$missing; see its message above" >&2
      exit 1
    }
  fi
fi

deps="$root/build-arm64-deps"
libdir="$deps/usr/lib/aarch64-linux-gnu"
if [ ! -e "$libdir/libXNNPACK.so" ] || [ ! -e "$libdir/libpthreadpool.so" ]; then
  echo "test-arm64: unpacking the arm64 XNNPACK and pthreadpool into $deps"
  rm -rf "$deps.debs" && mkdir -p "$deps.debs" "$deps" || exit 1
  # apt-get download writes into the working directory, as the _apt user where it can.
  (cd "$deps.debs" && apt_get download $(printf '%s:arm64 ' $UNPACKED)) || {
    echo "test-arm64: apt-get download of the arm64$(printf ' %s' $UNPACKED) failed; check" \
      "access to the Debian mirror (apt-get update)" >&2
    exit 1
  }
  for d in "$deps.debs"/*.deb; do
    dpkg-deb -x "$d" "$deps" || exit 1
  done
  rm -rf "$deps.debs"
fi

if [ ! -f build-arm64/build.ninja ]; then
  meson setup build-arm64 --cross-file tools/cross/arm64-debian.ini --buildtype=release \
    -Dwerror=true -Dc_args="-I$deps/usr/include" \
    -Dc_link_args="-L$libdir -Wl,-rpath,$libdir" || exit 1
fi

if [ "${1:-}" = "--ci" ]; then
  # The subset CI runs (docs/PLATFORMS.md, "arm64"): only what it needs is built (no zoo
  # exports), then the CPU backend (XNNPACK's arm64 kernels) and Vulkan on arm64 lavapipe on
  # small_net, held to the Pi 4's limits and under the validation layer, the unit tests that
  # need no PyTorch reference (the int8 fused block's and int8 1x1 GEMM's NEON kernels under
  # -cpu cortex-a72 and, for sdot, -cpu max; the f32 1x1 GEMM and the k x k convolutions), the
  # int8 mobilenet_v2 fused against layer by layer, and camclass itself through a
  # pseudo-terminal.
  shift
  e=tests/engine
  ninja -C build-arm64 $e/test_network $e/test_plan $e/test_model $e/test_cpu_ops \
    $e/test_fused_block $e/test_fused_q8 $e/test_q8_gemm $e/test_f32_gemm \
    $e/test_network_q8_fused $e/small_net.ccm \
    $e/network-small-input.bin tests/input/test_frame_slot tests/input/test_capture_choice \
    tests/input/test_sources tests/app/test_cli app/camclass tools/mobilenet_v2_random.ccm \
    tools/mobilenet_v2_random_int8.ccm || exit 1
  set -- --no-rebuild plan model cpu_ops fused-block fused-q8 fused-q8-dotprod q8-gemm \
    q8-gemm-dotprod f32-gemm frame_slot \
    capture_choice sources cli network-small-cpu network-small-cpu-3-threads \
    network-small-vulkan network-small-vulkan-pi4 network-q8-fused headless_status "$@"
else
  ninja -C build-arm64 || exit 1
  if [ "$#" -eq 0 ]; then
    set -- --suite unit --suite engine --suite zoo --suite app --suite models --no-suite capture
  fi
fi
log=$(mktemp)
# Timeouts x10: everything runs emulated, Vulkan the slowest of all (lavapipe's LLVM and the
# validation layer are emulated too): docs/PLATFORMS.md has the times.
meson test -C build-arm64 --print-errorlogs --num-processes 2 --timeout-multiplier 10 "$@" \
  2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
. tools/test_summary.sh
test_summary "$log" count_skipped # a test that could not run here (meson: SKIP) fails
rm -f "$log"
echo "$ok passed, $failed failed"
[ "$skipped" -eq 0 ] || rc=1
exit "$rc"
