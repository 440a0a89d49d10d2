#!/bin/sh
# camclass end to end on every vivid test pattern, in one guest (run by
# tests/vm/test_camclass_vm_patterns.py through run-vm.sh).
#
#   camclass-e2e-patterns.sh LINES TIMEOUT_S FIRST_TIMEOUT_S "P1 P2 ..." -- CAMCLASS_ARGS...
#
# For each vivid "Test Pattern" menu index P: sets it with `camclass-capture-static -n 0
# --set-ctrl test_pattern=P` (vivid keeps control values across opens; every other control stays
# at its default), starts camclass (dynamically linked, through the loader copied into /bin) with
# its log in /out/log-P.jsonl, waits until the log has LINES lines (or TIMEOUT_S seconds passed;
# FIRST_TIMEOUT_S for the first pattern: camclass's first start in the fresh guest times the CPU
# backend's layers, BLIS against XNNPACK, before its first frame, and the later starts read the
# choices it cached),
# sends SIGTERM, and writes camclass's exit status to /out/rc-P and its stderr to
# /out/stderr-P.txt. The host checks the lines; this script only reports.
lines=$1 timeout_s=$2 first_timeout_s=$3 patterns=$4
shift 5
loader=$(ls /bin/ld-linux-*.so.* 2>/dev/null | head -n1)
for p in $patterns; do
  if ! camclass-capture-static -n 0 -q --set-ctrl test_pattern="$p" >/out/ctrl-$p.txt 2>&1; then
    echo "e2e: pattern $p: setting test_pattern failed: $(cat /out/ctrl-$p.txt)"
    continue
  fi
  "$loader" --library-path /bin /bin/camclass "$@" >/out/log-$p.jsonl 2>/out/stderr-$p.txt &
  pid=$!
  limit=$timeout_s
  [ -n "$first_timeout_s" ] && { limit=$first_timeout_s; first_timeout_s=""; }
  start=$(cut -d' ' -f1 /proc/uptime)
  while :; do
    n=$(wc -l </out/log-$p.jsonl)  # frame lines only: the summary comes after SIGTERM
    now=$(cut -d. -f1 /proc/uptime)
    [ "$n" -ge "$lines" ] && break
    [ $((now - ${start%.*})) -ge "$limit" ] && { echo "e2e: pattern $p: only $n lines after ${limit}s"; break; }
    kill -0 $pid 2>/dev/null || { echo "e2e: pattern $p: camclass ended early"; break; }
    sleep 0.1
  done
  kill -TERM $pid 2>/dev/null
  wait $pid
  echo $? >/out/rc-$p
  end=$(cut -d' ' -f1 /proc/uptime)
  echo "e2e: pattern $p: $n frame lines in $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')s, camclass exit status $(cat /out/rc-$p)"
  sed 's/^/e2e stderr: /' /out/stderr-$p.txt
done
exit 0
