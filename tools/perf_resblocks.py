#!/usr/bin/python3
"""resnet18 fp32 on the CPU backend per basic block, under several settings.

Usage: tools/perf_resblocks.py BUILD ROUNDS RUNS THREADS [SETTING ...]

Runs camclass-bench --trace on BUILD/perf-zoo/resnet18.ccm (made by tools/perf_zoo.sh), rounds
alternating the settings: each a comma-separated list of VAR=VALUE for the environment ("-":
none), by default CAMCLASS_CPU_CONV3X3_RESIDUAL=off and on (engine/cpu/xnn_resfuse.h). Prints
the whole run's median and 10th percentile, the sum of the per-block medians, and each block's
time (its nodes' layer timings summed per run: layerN.M's convs, downsample and the add after
them; fused, the second conv's time is on the add's node), median and 10th percentile. The
layer-choice cache goes to a temporary XDG_CACHE_HOME, measured afresh once and shared by all
settings. Figures only (docs/PERFORMANCE.md, "The residual add in the convolution's store").
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

DEFAULT = ["CAMCLASS_CPU_CONV3X3_RESIDUAL=off", "CAMCLASS_CPU_CONV3X3_RESIDUAL=on"]


def pct(values, p):
    v = sorted(values)
    return v[int(p * (len(v) - 1))]


def environ(env, setting):
    """env with setting's VAR=VALUE pairs."""
    pairs = [p.split("=", 1) for p in setting.split(",") if "=" in p]
    return dict(env, **{k: v for k, v in pairs})


def one(build, setting, runs, threads, env, trace):
    """{(run, block): ms} of one camclass-bench and its whole-run times."""
    subprocess.run(
        [f"{build}/app/camclass-bench", f"{build}/perf-zoo/resnet18.ccm", "--backend", "cpu",
         "--threads", threads, "--runs", runs, "--trace", trace],
        env=environ(env, setting), check=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    per, whole, key = {}, [], None
    for x in json.load(open(trace))["traceEvents"]:
        if x.get("ph") != "X":
            continue
        if x["cat"] == "run":
            whole.append(x["dur"] / 1000)
            continue
        m = re.match(r"(layer\d\.\d)", x["name"])
        key = m.group(1) if m else key if x["name"].startswith("add") else x["name"]
        k = (x["args"]["run"], key)
        per[k] = per.get(k, 0.0) + x["dur"] / 1000
    return per, whole


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__.strip().splitlines()[2])
    build, rounds, runs, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    SETTINGS = sys.argv[5:] or DEFAULT
    tmp = tempfile.mkdtemp(prefix="perf-resblocks-")
    env = dict(os.environ, XDG_CACHE_HOME=tmp)
    whole = {s: [] for s in SETTINGS}
    blocks = {s: {} for s in SETTINGS}
    loads = []
    for _ in range(rounds):
        for s in SETTINGS:
            per, w = one(build, s, runs, threads, env, f"{tmp}/trace.json")
            whole[s] += w
            for (_, k), v in per.items():
                blocks[s].setdefault(k, []).append(v)
            loads.append(os.getloadavg()[0])
    print(f"{threads} thread(s), {rounds} rounds x {runs} runs, load average "
          f"{min(loads):.1f}-{max(loads):.1f}; ms, median (10th percentile)")
    for i, s in enumerate(SETTINGS):
        nodes = sum(statistics.median(v) for v in blocks[s].values())
        print(f"  [{i}] {s}: whole run {statistics.median(whole[s]):6.2f} "
              f"({pct(whole[s], 0.1):6.2f}), sum of block medians {nodes:6.2f}")
    print("  block      " + " | ".join(f"{'[' + str(i) + ']':>15s}" for i in range(len(SETTINGS))))
    for k in sorted(k for k in blocks[SETTINGS[0]] if k.startswith("layer")):
        cells = [blocks[s].get(k, [0.0]) for s in SETTINGS]
        print(f"  {k:10s} " + " | ".join(
            f"{statistics.median(v):6.3f} ({pct(v, 0.1):6.3f})" for v in cells))


if __name__ == "__main__":
    main()
