#!/usr/bin/python3
"""mobilenet_v2 int8 on the CPU backend: the depthwise layers on XNNPACK against our own int8
depthwise (engine/cpu/q8_dw.h), per layer and whole run.

Usage: tools/perf_q8dw.py BUILD ROUNDS RUNS THREADS

Runs camclass-bench --trace on BUILD's random int8 mobilenet_v2, rounds alternating over
CAMCLASS_CPU_Q8DW = off (XNNPACK's QC8 depthwise), measure (the load-time choice), on (every
depthwise ours, the host's best kernels) and avx2 (every depthwise ours, the AVX2 kernels
forced). The layer-choice cache goes to a temporary XDG_CACHE_HOME, written once (measured)
before the rounds, so every configuration runs the other layers (1x1 GEMMs, fused blocks) the
same way (with another CAMCLASS_CPU_* mode forced, e.g. FUSED=off, the cache is not written
and each configuration times its own choices: compare the depthwise layers only). Prints each depthwise layer's median (of the rounds' medians), their sum, the whole
run's median, the sum of every layer's median (steadier than whole runs on a loaded machine),
and the whole run's ratio to off per round. With THREADS above 1, set CAMCLASS_CPU_POOL=always
on a crowded machine (else runs go on one thread). Figures only (docs/PERFORMANCE.md).
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

CONFIGS = ["off", "measure", "on", "avx2"]
DEPTHWISE = re.compile(r"features\.1\.conv\.0\.0|features\.\d+\.conv\.1\.0")


def bench(build, cache, mode, threads, runs):
    """(device line, whole-run median, {layer: median ms}) of one camclass-bench run."""
    trace = os.path.join(cache, "trace.json")
    env = dict(os.environ, XDG_CACHE_HOME=cache, CAMCLASS_CPU_Q8DW=mode)
    out = subprocess.run(
        [f"{build}/app/camclass-bench", f"{build}/tools/mobilenet_v2_random_int8.ccm",
         "--backend", "cpu", "--threads", str(threads), "--runs", str(runs), "--trace", trace],
        env=env, capture_output=True, text=True, check=True).stdout
    device = re.search(r"device\s+(.*)", out).group(1)
    events = json.load(open(trace))["traceEvents"]
    whole = [x["dur"] / 1000 for x in events if x.get("cat") == "run"]
    per = {}
    for x in events:
        if x.get("ph") == "X" and x.get("cat") != "run":
            per.setdefault(x["name"], []).append(x["dur"] / 1000)
    return device, statistics.median(whole), {k: statistics.median(v) for k, v in per.items()}


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: tools/perf_q8dw.py BUILD ROUNDS RUNS THREADS")
    build, rounds, runs, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    cache = tempfile.mkdtemp()
    print("measured once:", bench(build, cache, "measure", threads, runs)[0])
    res = {c: [] for c in CONFIGS}
    devices, load = {}, []
    for _ in range(rounds):
        load.append(os.getloadavg()[0])
        for c in CONFIGS:
            devices[c], whole, per = bench(build, cache, c, threads, runs)
            res[c].append((whole, per))
    print("load (1 min) at each round:", " ".join(f"{x:.1f}" for x in load))
    for c in CONFIGS:
        print(f"{c}: {devices[c]}")

    def med(c, k):
        return statistics.median(per.get(k, 0.0) for _, per in res[c])

    layers = [k for k in res["off"][0][1] if DEPTHWISE.fullmatch(k)]
    print(f"{'ms (median of rounds)':22}" + "".join(f"{c:>10}" for c in CONFIGS) + "    on/off  avx2/off")
    total = dict.fromkeys(CONFIGS, 0.0)
    for k in layers + ["sum of depthwise"]:
        v = [total[c] if k not in layers else med(c, k) for c in CONFIGS]
        if k in layers:
            for c, x in zip(CONFIGS, v):
                total[c] += x
        ratio = (f"{v[2] / v[0]:9.2f} {v[3] / v[0]:9.2f}" if v[0] else
                 "        -         - (in a fused block)")
        print(f"{k:22}" + "".join(f"{x:10.3f}" for x in v) + ratio)
    print(f"{'whole run':22}" + "".join(
        f"{statistics.median(w for w, _ in res[c]):10.3f}" for c in CONFIGS))
    print(f"{'sum of layer medians':22}" + "".join(
        f"{sum(med(c, k) for k in res[c][0][1]):10.3f}" for c in CONFIGS))
    for c in CONFIGS[1:]:
        r = [res[c][i][0] / res["off"][i][0] for i in range(rounds)]
        print(f"whole run {c}/off per round:", " ".join(f"{x:.2f}" for x in r),
              f" median {statistics.median(r):.2f}")


if __name__ == "__main__":
    main()
