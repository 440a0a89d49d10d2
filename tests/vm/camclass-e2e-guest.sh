#!/bin/sh
# camclass end to end in the vivid guest (run by tests/vm/test_camclass_vm.py through run-vm.sh).
#
#   camclass-e2e-guest.sh LINES TIMEOUT_S -- CAMCLASS_ARGS...
#
# Starts camclass (dynamically linked: the loader and the libraries were copied into /bin next
# to it) with its log on stdout into /out/log.jsonl, waits until the log has LINES lines (or
# TIMEOUT_S seconds passed), sends SIGTERM, and writes camclass's exit status to /out/rc and its
# stderr to /out/stderr.txt. The host checks the lines; this script only reports.
lines=$1 timeout_s=$2
shift 3
loader=$(ls /bin/ld-linux-*.so.* 2>/dev/null | head -n1)
"$loader" --library-path /bin /bin/camclass "$@" >/out/log.jsonl 2>/out/stderr.txt &
pid=$!
start=$(cut -d. -f1 /proc/uptime)
while :; do
  n=$(wc -l </out/log.jsonl)
  now=$(cut -d. -f1 /proc/uptime)
  [ "$n" -ge "$lines" ] && break
  [ $((now - start)) -ge "$timeout_s" ] && { echo "e2e: only $n lines after ${timeout_s}s"; break; }
  kill -0 $pid 2>/dev/null || { echo "e2e: camclass ended early"; break; }
  sleep 0.2
done
echo "e2e: $n lines after $((now - start))s; SIGTERM"
kill -TERM $pid 2>/dev/null
wait $pid
echo $? >/out/rc
echo "e2e: camclass exit status $(cat /out/rc)"
sed 's/^/e2e stderr: /' /out/stderr.txt
exit 0
