#!/usr/bin/python3
"""mobilenet_v2 fp32 and int8 on the CPU backend, per inverted-residual block and whole run.

Usage: tools/perf_blocks.py BUILD ROUNDS RUNS THREADS

Runs camclass-bench --trace on BUILD's random mobilenet_v2 bundles (tools/meson.build), rounds
alternating: fp32 (the default choices), int8 layer by layer on XNNPACK (CAMCLASS_CPU_FUSED=off,
CAMCLASS_CPU_Q8GEMM=off), int8 layer by layer with every 1x1 on our int8 GEMM (Q8GEMM=on), int8
with every block fused (FUSED=on), and int8 as the load-time measurement chooses (measure),
also without the int8 GEMM (Q8GEMM=off). Prints
the whole run's median and 10th percentile, each block's time (its nodes' layer timings summed
per run: features.N and the add after it; a fused block's time is on its last node), median
and 10th percentile, and the sum of the per-node medians (what a run costs without the
preemptions a loaded machine adds to whole runs). The layer-choice cache goes to a temporary
XDG_CACHE_HOME, measured afresh. Figures only (docs/PERFORMANCE.md, "int8 fused blocks").
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

# label, bundle, CAMCLASS_CPU_FUSED, CAMCLASS_CPU_Q8GEMM
CONFIGS = [
    ("fp32", "mobilenet_v2_random", "measure", "measure"),
    ("int8 layers", "mobilenet_v2_random_int8", "off", "off"),
    ("int8 q8 GEMM", "mobilenet_v2_random_int8", "off", "on"),
    ("int8 fused", "mobilenet_v2_random_int8", "on", "measure"),
    ("int8 meas. noq8", "mobilenet_v2_random_int8", "measure", "off"),
    ("int8 measure", "mobilenet_v2_random_int8", "measure", "measure"),
]


def pct(values, p):
    v = sorted(values)
    return v[int(p * (len(v) - 1))]


def one(build, model, fused, q8, runs, threads, env, trace):
    """{(run, key): ms} of one camclass-bench and its whole-run times."""
    subprocess.run(
        [f"{build}/app/camclass-bench", f"{build}/tools/{model}.ccm", "--backend", "cpu",
         "--threads", threads, "--runs", runs, "--trace", trace],
        env=dict(env, CAMCLASS_CPU_FUSED=fused, CAMCLASS_CPU_Q8GEMM=q8), check=True, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    per, whole, key = {}, [], None
    for x in json.load(open(trace))["traceEvents"]:
        if x.get("ph") != "X":
            continue
        if x["cat"] == "run":
            whole.append(x["dur"] / 1000)
            continue
        m = re.match(r"features\.(\d+)", x["name"])
        key = f"b{m.group(1)}" if m else key if x["name"].startswith("add") else x["name"]
        k = (x["args"]["run"], key)
        per[k] = per.get(k, 0.0) + x["dur"] / 1000
    return per, whole


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.strip().splitlines()[2])
    build, rounds, runs, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    tmp = tempfile.mkdtemp(prefix="perf-blocks-")
    env = dict(os.environ, XDG_CACHE_HOME=tmp)
    whole = {c[0]: [] for c in CONFIGS}
    blocks = {c[0]: {} for c in CONFIGS}
    loads = []
    for _ in range(rounds):
        for label, model, fused, q8 in CONFIGS:
            per, w = one(build, model, fused, q8, runs, threads, env, f"{tmp}/trace.json")
            whole[label] += w
            for (_, k), v in per.items():
                blocks[label].setdefault(k, []).append(v)
            loads.append(os.getloadavg()[0])
    print(f"{threads} thread(s), {rounds} rounds x {runs} runs, load average "
          f"{min(loads):.1f}-{max(loads):.1f}; ms, median (10th percentile)")
    for label, w in whole.items():
        nodes = sum(statistics.median(v) for v in blocks[label].values())
        print(f"  {label:15s} whole run {statistics.median(w):6.2f} ({pct(w, 0.1):6.2f})"
              f"  sum of node medians {nodes:5.2f}")
    print("  block   " + " | ".join(f"{c[0]:>15s}" for c in CONFIGS))
    keys = sorted((k for k in blocks["int8 layers"] if k[0] == "b"), key=lambda k: int(k[1:]))
    for k in keys + ["classifier.1"]:
        cells = [blocks[c[0]].get(k, [0.0]) for c in CONFIGS]
        print(f"  {k:7s} " + " | ".join(
            f"{statistics.median(v):6.3f} ({pct(v, 0.1):6.3f})" for v in cells))


if __name__ == "__main__":
    main()
