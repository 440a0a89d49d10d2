#!/bin/bash
# camclass — set everything up (tools/setup.sh test: the run and test packages, the build with
# the tests), then run the whole test suite. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
tools/setup.sh test || exit 1
log=$(mktemp)
meson test -C build --print-errorlogs --num-processes 2 "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
ok=$(awk '/^Ok:/{print $2}' "$log"); fail=$(awk '/^Fail:/{print $2}' "$log")
to=$(awk '/^Timeout:/{print $2}' "$log"); up=$(awk '/^Unexpected Pass:/{print $3}' "$log")
rm -f "$log"
echo "${ok:-0} passed, $(( ${fail:-0} + ${to:-0} + ${up:-0} )) failed"
exit "$rc"
