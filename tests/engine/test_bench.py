#!/usr/bin/python3
"""camclass-bench's command line: bad flags exit 2 with one line, a CPU run prints every
figure, --profile prints the per-op and slowest-layer tables, --trace writes a Chrome trace
with one "X" event per layer per run.

    test_bench.py CAMCLASS_BENCH MODEL.ccm TRACE_OUT.json
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, summary  # noqa: E402


def run(*args):
    return subprocess.run([BENCH, *args], capture_output=True, text=True, timeout=300)


BENCH, MODEL, TRACE = sys.argv[1:4]

for bad in (["--runs", "0", MODEL], ["--backend", "gpu", MODEL], ["--bogus", MODEL],
            [MODEL, "--threads"], [MODEL, MODEL], [], ["--device", "x", MODEL]):
    r = run(*bad)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("camclass-bench: "),
          f"{bad}: exit {r.returncode}, stderr {r.stderr!r}")

r = run("--help")
check(r.returncode == 0 and "--trace FILE" in r.stdout, f"--help: exit {r.returncode}")

r = run("/nonexistent.ccm", "--backend", "cpu")
check(r.returncode == 1 and r.stderr.count("\n") == 1, f"missing model: {r.stderr!r}")

runs = 3
r = run(MODEL, "--backend", "cpu", "--runs", str(runs), "--warmup", "0", "--profile",
        "--trace", TRACE)
out = r.stdout
check(r.returncode == 0, f"cpu run: exit {r.returncode}, {r.stderr!r}")
for key in ("model", "backend", "device", "load", "first run", "median", "p90", "p99", "min",
            "per op", "slowest 10 layers", "trace"):
    check(any(line.startswith(key) for line in out.splitlines()), f"no '{key}' line in:\n{out}")
check("fps)" in out and "conv2d" in out, "fps or the conv2d row missing")

nodes = int(out.split(" nodes)")[0].rsplit(", ", 1)[1])
with open(TRACE) as f:
    trace = json.load(f)
events = trace["traceEvents"]
layers = [e for e in events if e.get("ph") == "X" and e.get("tid") == 2]
run_events = [e for e in events if e.get("ph") == "X" and e.get("tid") == 1]
check(len(layers) == runs * nodes, f"{len(layers)} layer events for {runs} runs x {nodes} nodes")
check(len(run_events) == runs, f"{len(run_events)} run events")
check(all(e["dur"] >= 0 and e["ts"] >= 0 and e["cat"] and e["name"] for e in layers),
      "a layer event without name, category, ts or dur")

sys.exit(summary())
