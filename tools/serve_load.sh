#!/bin/sh
# camclass --serve under load: ApacheBench (apache2-utils' ab) posts IMAGE to /predict from
# CLIENTS connections for SECONDS, twice; prints ab's requests/s, failures and latency
# percentiles, camclass's RSS after a warm-up and after each round, and how many frames the
# camera/file pipeline classified during the first round (from /metrics).
#
#   tools/serve_load.sh [CLIENTS [SECONDS]] [-- CAMCLASS ARGS...]
#   tools/serve_load.sh 8 10 -- --input assets/samples/selftest --loop --fps 30
#
# Environment: CAMCLASS (default build/app/camclass), MODEL (assets/models/selftest.ccm),
# IMAGE (assets/samples/bars_320x240.png), PORT (18080). ab counts answers whose length
# differs from the first as "Length" failures: JSON answers vary in length (their latency
# digits), so only Connect/Receive/Exceptions and Non-2xx are errors.
set -eu
clients=8 seconds=10
[ $# -gt 0 ] && [ "$1" != -- ] && { clients=$1; shift; }
[ $# -gt 0 ] && [ "$1" != -- ] && { seconds=$1; shift; }
[ $# -gt 0 ] && [ "$1" = -- ] && shift
CAMCLASS=${CAMCLASS:-build/app/camclass} MODEL=${MODEL:-assets/models/selftest.ccm}
IMAGE=${IMAGE:-assets/samples/bars_320x240.png} PORT=${PORT:-18080}
url=http://127.0.0.1:$PORT
err=$(mktemp)
"$CAMCLASS" --headless --model "$MODEL" --backend cpu --serve "$PORT" --log /dev/null "$@" \
  2>"$err" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; rm -f "$err"' EXIT
for _ in $(seq 50); do curl -sf "$url/healthz" >/dev/null && break; sleep 0.1; done
rss() { awk '/VmRSS/{print $2}' /proc/$pid/status; }
results() { curl -s "$url/metrics" | awk '/^camclass_results_total/{print $2}'; }
ab -q -n 50 -c 4 -p "$IMAGE" -T image/png "$url/predict" >/dev/null 2>&1 # warm-up
rss0=$(rss) f0=$(results)
for round in 1 2; do
  echo "round $round: $clients clients, $seconds s"
  ab -q -t "$seconds" -n 100000000 -c "$clients" -p "$IMAGE" -T image/png "$url/predict" 2>&1 |
    grep -E "Complete requests|Failed requests|Connect: |Non-2xx|Requests per second|^  50%|^  99%"
  [ $round = 1 ] && f1=$(results) rss1=$(rss)
done
echo "RSS kB: after the warm-up $rss0, after round 1 $rss1, after round 2 $(rss)"
echo "frames classified during round 1: $((${f1%.*} - ${f0%.*}))"
