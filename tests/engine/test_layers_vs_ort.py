#!/usr/bin/python3
"""tools/layers_vs_ort.py on traces written here in both engines' formats: per block, the
median over runs (one stalled run moves nothing), a residual add counted in its last input's
block, ONNX Runtime's first run left out; a wrong command line exits 2.

    test_layers_vs_ort.py LAYERS_VS_ORT.py
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

from checks import check, summary

TOOL = sys.argv[1]

GRAPH = [{"op": "conv2d", "name": "features.0.0", "inputs": ["input"], "outputs": ["a"]},
         {"op": "conv2d", "name": "features.1.conv.0", "inputs": ["a"], "outputs": ["b"]},
         {"op": "conv2d", "name": "features.2.conv.2", "inputs": ["b"], "outputs": ["c"]},
         {"op": "add", "name": "add", "inputs": ["features.1.conv.0.out", "features.2.conv.2.out"],
          "outputs": ["d"]},
         {"op": "linear", "name": "classifier.1", "inputs": ["d"], "outputs": ["logits"]}]
# camclass ms per run: 3 runs, the third stalled in features.1
CC = {"features.0.0": [1.0, 1.0, 1.0], "features.1.conv.0": [2.0, 2.0, 50.0],
      "features.2.conv.2": [0.5, 0.5, 0.5], "add": [1.0, 1.0, 1.0], "classifier.1": [0.2, 0.2, 0.2]}
# ONNX Runtime ms per run: 4 runs, the first (cold) left out
ORT = {"/features/features.0/Conv": [9.0, 2.0, 2.0, 2.0],
       "/features/features.1/conv/conv.0/Conv": [9.0, 1.0, 1.0, 1.0],
       "/features/2/conv/2/Conv_token_7": [9.0, 3.0, 3.0, 3.0],  # a QDQ export's name
       "/classifier/classifier.1/Gemm": [9.0, 0.4, 0.4, 0.4]}


def write(tmp):
    with zipfile.ZipFile(os.path.join(tmp, "m.ccm"), "w") as z:
        z.writestr("manifest.json", json.dumps({"graph": GRAPH}))
    events = []
    for name, ms in CC.items():
        for run, v in enumerate(ms):
            events.append({"name": name, "ph": "X", "tid": 2, "ts": run * 1e5, "dur": v * 1e3,
                           "cat": "conv2d", "args": {"run": run}})
    events.append({"name": "run 0", "ph": "X", "tid": 1, "ts": 0, "dur": 99e3, "args": {"run": 0}})
    with open(os.path.join(tmp, "cc.json"), "w") as f:
        json.dump({"traceEvents": events}, f)
    events = []
    for run in range(4):
        t0 = run * 1e6
        events.append({"cat": "Session", "name": "model_run", "ts": t0, "dur": 9e4})
        for k, (name, ms) in enumerate(ORT.items()):
            events.append({"cat": "Node", "name": name + "_kernel_time", "ts": t0 + 10 + k,
                           "dur": ms[run] * 1e3, "args": {"op_name": "Conv"}})
            events.append({"cat": "Node", "name": name + "_fence_before", "ts": t0 + 10 + k,
                           "dur": 1e6})
    with open(os.path.join(tmp, "ort.json"), "w") as f:
        json.dump(events, f)


with tempfile.TemporaryDirectory() as tmp:
    write(tmp)
    r = subprocess.run([sys.executable, TOOL, *(os.path.join(tmp, f) for f in
                        ("m.ccm", "cc.json", "ort.json"))], capture_output=True, text=True)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr!r}")
    rows = {m[1]: (float(m[2]), float(m[3])) for m in
            re.finditer(r"^\| ([^|]+?) \| ([\d.]+) \| ([\d.]+) \|", r.stdout, re.M)}
    want = {"features.0": (1.0, 2.0), "features.1": (2.0, 1.0), "features.2": (1.5, 3.0),
            "other (pool, classifier)": (0.2, 0.4), "sum of the rows": (4.7, 6.4)}
    check(rows == want, f"rows {rows}, want {want}:\n{r.stdout}")
    check("medians of 3 / 3 runs" in r.stdout, f"run counts:\n{r.stdout}")
    r = subprocess.run([sys.executable, TOOL, "only-one"], capture_output=True, text=True)
    check(r.returncode == 2 and "usage:" in r.stderr, f"bad usage: exit {r.returncode}")

sys.exit(summary())
