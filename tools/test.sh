#!/bin/bash
# camclass — set everything up (tools/setup.sh test: the run and test packages, the build with
# the tests), then run the whole test suite. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
tools/setup.sh test || exit 1
log=$(mktemp)
meson test -C build --print-errorlogs --num-processes 2 "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
. tools/test_summary.sh
test_summary "$log"
rm -f "$log"
echo "$ok passed, $failed failed"
exit "$rc"
