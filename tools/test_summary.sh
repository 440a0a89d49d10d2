# camclass — sourced by tools/test.sh and tools/test-arm64.sh: the counts of a `meson test` log.
#
#   test_summary LOG [count_skipped]   sets ok, failed (and skipped) from LOG's summary
#
# The summary is the log's last one: with --print-errorlogs a failed test's own log may hold
# the summary of a meson run inside it (the sanitizer suites run one), which must not count.
test_summary() {
  local log=$1 fail to up
  ok=$(awk '/^Ok:/{v=$2} END{print v+0}' "$log")
  fail=$(awk '/^Fail:/{v=$2} END{print v+0}' "$log")
  to=$(awk '/^Timeout:/{v=$2} END{print v+0}' "$log")
  up=$(awk '/^Unexpected Pass:/{v=$3} END{print v+0}' "$log")
  skipped=$(awk '/^Skipped:/{v=$2} END{print v+0}' "$log")
  failed=$((fail + to + up))
  if [ "${2:-}" = count_skipped ]; then failed=$((failed + skipped)); fi
}
