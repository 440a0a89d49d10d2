#!/usr/bin/python3
"""resnet18 (or MODEL) on the CPU backend per node, camclass builds and settings side by side.

Usage: tools/perf_nodes.py ROUNDS RUNS THREADS SETTING... [--ort]

Each SETTING is BENCH or BENCH:VAR=VALUE,VAR=VALUE: a camclass-bench binary (a copy of an
earlier build's, to compare builds) and the environment it runs in. Rounds alternate the
settings (camclass-bench --trace, RUNS runs each); each setting has its own temporary
layer-choice cache (XDG_CACHE_HOME), measured at its first run. Prints per setting the whole
run's 10th percentile and median and the sum of its nodes' 10th percentiles, then per node the
10th percentile (the least disturbed: the machine may be shared) and the median, in ms; a conv
fused into the add after it (engine/cpu/xnn_resfuse.h) has its time on the add's node. --ort:
ONNX Runtime's nodes too (tools/bench_ort.js --trace on the .onnx beside the model, once a
round). MODEL (environment) defaults to build/perf-zoo/resnet18.ccm (tools/perf_zoo.sh makes
it). Figures only (docs/PERFORMANCE.md, "resnet18 at 2 threads").
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile


def pct(values, p):
    v = sorted(values)
    return v[int(p * (len(v) - 1))]


def cell(values):
    return f"{pct(values, 0.1):6.3f} ({statistics.median(values):6.3f})"


def camclass(setting, index, model, runs, threads, tmp, per, whole):
    bench, _, env_spec = setting.partition(":")
    env = dict(os.environ, XDG_CACHE_HOME=f"{tmp}/cache{index}")
    env.update(dict(p.split("=", 1) for p in env_spec.split(",") if "=" in p))
    trace = f"{tmp}/trace.json"
    subprocess.run([bench, model, "--backend", "cpu", "--threads", threads, "--runs", runs,
                    "--trace", trace], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for x in json.load(open(trace))["traceEvents"]:
        if x.get("ph") != "X":
            continue
        if x["cat"] == "run":
            whole.append(x["dur"] / 1000)
        else:
            per.setdefault(x["name"], []).append(x["dur"] / 1000)


def ort(model, runs, threads, tmp, per):
    trace = f"{tmp}/ort.json"
    subprocess.run(["node", "tools/bench_ort.js", model[:-4] + ".onnx", "--threads", threads,
                    "--runs", runs, "--trace", trace], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    events = [x for x in json.load(open(trace)) if x.get("cat") == "Node" and
              x["name"].endswith("_kernel_time")]
    for x in events[len(events) // (int(runs) + 4) * 4:]:  # not the first and warm-up runs
        per.setdefault(x["name"][:-len("_kernel_time")], []).append(x["dur"] / 1000)


def main():
    args = [a for a in sys.argv[1:] if a != "--ort"]
    if len(args) < 4:
        sys.exit(__doc__.strip().splitlines()[2])
    rounds, runs, threads, settings = int(args[0]), args[1], args[2], args[3:]
    model = os.environ.get("MODEL", "build/perf-zoo/resnet18.ccm")
    tmp = tempfile.mkdtemp(prefix="perf-nodes-")
    per = [{} for _ in settings]
    whole = [[] for _ in settings]
    ort_per, loads = {}, []
    for _ in range(rounds):
        for i, s in enumerate(settings):
            camclass(s, i, model, runs, threads, tmp, per[i], whole[i])
            loads.append(os.getloadavg()[0])
        if "--ort" in sys.argv:
            ort(model, runs, threads, tmp, ort_per)
    print(f"{threads} thread(s), {rounds} rounds x {runs} runs, load average "
          f"{min(loads):.1f}-{max(loads):.1f}; ms, 10th percentile (median)")
    for i, s in enumerate(settings):
        nodes = sum(pct(v, 0.1) for v in per[i].values())
        print(f"  [{i}] {s}: whole run {pct(whole[i], 0.1):6.2f} "
              f"({statistics.median(whole[i]):6.2f}), sum of node 10th percentiles {nodes:6.2f}")
    for name in per[0]:
        print(f"  {name:24s} " + " | ".join(cell(p.get(name, [0.0])) for p in per))
    if ort_per:
        print(f"  ONNX Runtime: sum of node 10th percentiles "
              f"{sum(pct(v, 0.1) for v in ort_per.values()):6.2f}")
        for name, v in ort_per.items():
            print(f"  {name:60s} {cell(v)}")


if __name__ == "__main__":
    main()
