#!/bin/sh
# Runs one test program under VK_LAYER_KHRONOS_validation (Debian's vulkan-validationlayers)
# with synchronization validation on, and fails on any validation message:
#   validate.sh PROGRAM [ARGS...]
# The layer is enabled and configured from the environment alone (VK_INSTANCE_LAYERS and a
# vk_layer_settings.txt written here, named by VK_LAYER_SETTINGS_PATH), so the engine is built
# and run exactly as in production. Each message is logged to a file and raises SIGTRAP at once
# (debug_action BREAK), so a message ends the process that made it, even a camclass started by
# a Python test; the log is printed and the test fails. A message that did not end the process
# (the log is not empty at the end) fails the test too. The layer opens its log when an
# instance is created: no log file at the end means the layer never ran, and the test fails.
set -u
layer_json=/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json
if [ ! -f "$layer_json" ]; then
    echo "validate.sh: $layer_json is missing: install vulkan-validationlayers (tools/setup.sh)" >&2
    exit 1
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/camclass-vkval.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
log="$dir/validation.log"
cat > "$dir/vk_layer_settings.txt" <<SETTINGS
khronos_validation.enables = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT
khronos_validation.report_flags = error,warn,perf
khronos_validation.debug_action = VK_DBG_LAYER_ACTION_LOG_MSG,VK_DBG_LAYER_ACTION_BREAK
khronos_validation.log_filename = $log
khronos_validation.duplicate_message_limit = 10
SETTINGS
export VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation
export VK_LAYER_SETTINGS_PATH="$dir/vk_layer_settings.txt"

# In a cross build meson sets MESON_EXE_WRAPPER (tools/cross/arm64-debian.ini: qemu-aarch64): a
# test program built here runs through it; a Python driver (the build machine's python3) runs as
# it is and starts the programs it tests through it itself (tests/checks.py, host_command).
wrapper=""
case "$(basename "$1")" in
python3*) ;;
*) wrapper="${MESON_EXE_WRAPPER:-}" ;;
esac
# $wrapper unquoted: a command and its arguments, as meson writes it
$wrapper "$@"
rc=$?
if [ -s "$log" ]; then
    echo "validate.sh: Vulkan validation messages (exit status $rc):" >&2
    cat "$log" >&2
    exit 1
fi
if [ ! -e "$log" ]; then
    echo "validate.sh: the validation layer did not run (no $log): no Vulkan instance was made," >&2
    echo "or the loader did not find VK_LAYER_KHRONOS_validation" >&2
    exit 1
fi
[ "$rc" -ne 77 ] || rc=1  # meson's "skipped": a Vulkan test that cannot run fails here
exit "$rc"
