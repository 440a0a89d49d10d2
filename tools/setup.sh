#!/bin/sh
# camclass — installs the Debian packages camclass needs, then configures and builds it in
# ./build. Safe to run again: apt-get and meson skip what is already done.
#
#   tools/setup.sh run    what running camclass needs (tools/run.sh): no PyTorch, no test tools,
#                         a build without the tests (-Dtests=false) — fits a Raspberry Pi
#   tools/setup.sh test   that, plus what the test suites need (tools/test.sh; the default):
#                         the build with the tests (-Dtests=true)
#   tools/setup.sh --packages-only
#                         only the packages of `test` (tools/test-arm64.sh: its tests are driven
#                         by the native python3-torch etc., its build is ./build-arm64)
#   tools/setup.sh ort    only ONNX Runtime for tools/perf_compare.sh's comparison: npm's
#                         onnxruntime-node (the version pinned in tools/ort/package.json; its
#                         package carries the CPU libonnxruntime for linux x64/arm64) into
#                         ${XDG_CACHE_HOME:-~/.cache}/camclass/ort, outside the source tree.
#                         Needs Node.js 16+ and npm; nothing else (CI, the build) needs them.
#
# Everything it prints (apt-get, meson, ninja) goes to stderr, so that stdout stays camclass's
# own (`tools/run.sh --headless --log - | jq .`). Needs root (or sudo) for apt-get.
set -eu
cd "$(dirname "$0")/.."
exec 1>&2 # stdout is for the program run after us (tools/run.sh)

mode=${1:-test}
packages_only=false
case $mode in
run | test) ;;
--packages-only) mode=test packages_only=true ;;
ort)
  # --ignore-scripts: the package's postinstall only fetches GPU (CUDA/TensorRT) libraries.
  command -v npm >/dev/null || { echo "tools/setup.sh ort: npm is not installed; install Node.js 16+ with npm (Debian: apt-get install npm)"; exit 2; }
  dir="${XDG_CACHE_HOME:-$HOME/.cache}/camclass/ort"
  mkdir -p "$dir" && cp tools/ort/package.json "$dir/package.json"
  echo "camclass setup: installing onnxruntime-node into $dir (npm)"
  (cd "$dir" && npm install --ignore-scripts --no-audit --no-fund)
  exit ;;
*) echo "usage: tools/setup.sh [run|test|--packages-only|ort]" ; exit 2 ;;
esac

# --- Run: building and running camclass and its tools --------------------------------------
# The compiler, meson and the libraries camclass links; glslc compiles the shaders at build
# time; mesa-vulkan-drivers has lavapipe (Vulkan on the CPU where there is no GPU driver) and
# the Pi's V3D driver; fonts-dejavu-core is the window's font; systemd has systemd.pc (where
# meson installs the units) and is on every Debian system anyway; libmosquitto-dev: --mqtt
# (Eclipse Mosquitto's client library); libavformat-dev libavcodec-dev libswscale-dev
# libavutil-dev: video files and network streams as --input (app/input/av_source.c) and
# --output recordings (app/output/recorder.c); libmicrohttpd-dev: the HTTP service --serve
# (GNU libmicrohttpd, app/output/http.c); liblbfgs-dev: camclass-train minimises its new
# classifier's loss with libLBFGS (app/train/softmax_head.c); libcurl4-openssl-dev: --webhook
# (app/output/webhook.c); libwebp-dev: WebP images as --input, in directories and in POST
# /predict (app/image/decode.c); libgpiod-dev: --gpio drives GPIO lines through the kernel's
# GPIO character device (libgpiod's v1 API, app/output/gpio_out.c; its libgpiod.a also links
# the capture suite's static in-guest GPIO test).
RUN_PACKAGES="build-essential pkg-config meson ninja-build glslc libvulkan-dev mesa-vulkan-drivers
  libv4l-dev libzip-dev libcjson-dev libsdl2-dev libsdl2-ttf-dev fonts-dejavu-core
  libjpeg62-turbo-dev libpng-dev libsystemd-dev libmosquitto-dev libblis-dev libxnnpack-dev
  libpthreadpool-dev libavformat-dev libavcodec-dev libswscale-dev libavutil-dev systemd
  libmicrohttpd-dev liblbfgs-dev libcurl4-openssl-dev libwebp-dev libgpiod-dev python3"

# --- Test: only tools/test.sh installs these -------------------------------------------------
# python3-torch, python3-torchvision, python3-numpy: the exporter (tools/camclass-export,
# installed as camclass-export; it needs them for every export, ONNX included) makes the test
# bundles and the references at build time; python3-onnx: the ONNX importer's tests.
# (The exporter and camclass-fetch-imagenet are run-time tools too, but optional: they say
# which of these to install when one is missing; camclass-fetch-imagenet needs python3-numpy
# only.)
# python3-pil and python3-skimage: the preprocessing test's PIL references and photographs.
# qemu-system-x86, busybox-static, cpio: the capture suite's vivid guest (tests/vm).
# clang and libclang-rt-14-dev (libFuzzer, ASan, UBSan runtimes): the fuzz suite's second build
# dir, ./build-fuzz (tools/fuzz.sh).
# mosquitto and mosquitto-clients: the broker and subscriber of the mqtt test.
# ffmpeg (the CLI): makes the clips and serves the live streams of test_video_input.py, and
# decodes the recordings of the record tests (tests/app/test_record.py).
# vulkan-validationlayers: every Vulkan test runs under VK_LAYER_KHRONOS_validation
# (tests/vulkan/validate.sh); vulkan-tools: vulkaninfo, to look at a device by hand.
# man-db (with groff-base): the install test renders every man page with `man --warnings`.
# zip, unzip: to look inside bundles by hand.
# python3-jinja2: the mqtt test renders the Home Assistant discovery templates as Home
# Assistant does (Jinja2).
# curl: the serve test's multipart client (curl -F file=@IMAGE, as users call /predict);
# python3-prometheus-client: its parser reads /metrics in the serve test as Prometheus would;
# gir1.2-gst-rtsp-server-1.0, gstreamer1.0-plugins-base/-good, python3-gi: the video_live
# test's RTSP server (tests/app/rtsp_server.py: GStreamer's rtsp-server, RTP/JPEG), an IP
# camera on loopback; ffmpeg can push RTSP but not serve it.
# python3-seccomp: the serve test denies IPv4/IPv6 sockets as a systemd unit's
# RestrictAddressFamilies= does (a seccomp filter), to check --serve's refusal there.
# apache2-utils: ab, the load generator of tools/serve_load.sh (docs/PERFORMANCE.md).
# libcpuinfo-dev: cpuinfo.h for tests/engine/cpu_isa_shim.c, which makes XNNPACK choose the
# kernels of other x86-64 hosts (AVX2, AMD Zen, SSE) in the kernels-cpu-* tests.
# chromium: the serve_browser test opens the --serve page in headless Chromium (DevTools
# protocol on a pipe) and checks its screenshot and DOM. Its text is drawn with the fonts
# fontconfig finds: fonts-dejavu-core (in RUN_PACKAGES) is enough, no fonts-* of its own (the
# test reads the labels from the DOM, not from the pixels); chromium-sandbox (recommended) is
# not needed: the tests run as root, where Chromium needs --no-sandbox anyway.
TEST_PACKAGES="python3-numpy python3-torch python3-torchvision python3-onnx python3-pil
  python3-skimage qemu-system-x86 busybox-static cpio clang libclang-rt-14-dev
  mosquitto mosquitto-clients ffmpeg vulkan-validationlayers vulkan-tools man-db zip unzip curl
  python3-prometheus-client python3-seccomp apache2-utils chromium gir1.2-gst-rtsp-server-1.0
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good python3-gi libcpuinfo-dev python3-jinja2"

PACKAGES=$RUN_PACKAGES
[ "$mode" = run ] || PACKAGES="$RUN_PACKAGES $TEST_PACKAGES"

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
! $packages_only || exit 0

# tools/run.sh leaves a build dir made by tools/test.sh as it is (turning the tests off would
# only reconfigure it); tools/test.sh turns the tests on in a build dir that tools/run.sh made
# without them. (A build dir older than the option has none listed yet: its default is on.)
if [ ! -f build/build.ninja ]; then
  tests=true
  [ "$mode" = run ] && tests=false
  meson setup build --buildtype=release -Dwerror=true -Dtests=$tests
elif [ "$mode" = test ]; then
  tests=$(meson introspect --buildoptions build |
    python3 -c 'import json, sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "tests"])')
  if [ "$tests" = "[False]" ]; then meson configure build -Dtests=true; fi
fi
ninja -C build
