#!/bin/sh
# camclass — installs the Debian packages camclass needs, then configures and builds it in
# ./build. Safe to run again: apt-get and meson skip what is already done.
# Used by tools/run.sh and tools/test.sh; needs root (or sudo) for apt-get.
#   tools/setup.sh --packages-only   only the packages (tools/test-arm64.sh: its tests are driven
#                                    by the native python3-torch etc., its build is ./build-arm64)
set -eu
cd "$(dirname "$0")/.."

# python3-pil and python3-skimage: the preprocessing test's PIL references and photographs.
# clang and libclang-rt-14-dev (libFuzzer, ASan, UBSan runtimes): the fuzz suite's second build
# dir, ./build-fuzz (tools/fuzz.sh).
# vulkan-validationlayers: every Vulkan test runs under VK_LAYER_KHRONOS_validation
# (tests/vulkan/validate.sh).
PACKAGES="build-essential pkg-config meson ninja-build glslc libvulkan-dev mesa-vulkan-drivers
  vulkan-tools vulkan-validationlayers libv4l-dev libzip-dev libcjson-dev libsdl2-dev libsdl2-ttf-dev fonts-dejavu-core
  libjpeg62-turbo-dev libpng-dev libsystemd-dev libblis-dev libxnnpack-dev libpthreadpool-dev systemd zip unzip
  python3 python3-numpy python3-torch python3-torchvision python3-onnx python3-pil
  python3-skimage qemu-system-x86 busybox-static cpio clang libclang-rt-14-dev"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "camclass setup: installing:$missing"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $missing
fi

[ "${1:-}" != "--packages-only" ] || exit 0

if [ ! -f build/build.ninja ]; then
  meson setup build --buildtype=release -Dwerror=true
fi
ninja -C build
