#!/usr/bin/python3
"""camclass-train --int8 end to end, on the drawn scene classes (make_dataset.py).

- With the self-test model and the random-weight mobilenet_v2 as bases: the bundle is a real
  int8 bundle (every conv2d/linear weight i8, every activation but a softmax's quantized,
  format version 2 or later), camclass-bench runs it on the CPU backend in int8 (its device
  line says "int8") and camclass classifies with it; its held-out accuracy, measured by
  camclass-train on the CPU backend, is within MARGIN of the f32 head's (measured in the
  same run), above the floor, and its top-1 agrees with the f32 head's on at least
  AGREE of the held-out images; the report, the manifest's training record and the printed
  line say so.
- The calibration against an independent one: the same training with --val 0 (every image
  calibrates) in f32 and in int8; python/camclass_export (the exporter's own calibration,
  ccm_calibrate.quantize_activations, and its per-channel weight rule) on the f32 bundle and
  the same images gives the same scale and zero point for every activation, and the same
  int8 weights. A calibration that computes the ranges, the scale or the zero point wrongly
  fails here even where the accuracy would survive it.

    test_train_int8.py CAMCLASS_TRAIN CAMCLASS CAMCLASS_BENCH SELFTEST_CCM MOBILENET_CCM PYDIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from checks import check, run_process, summary  # noqa: E402

TRAIN, CAMCLASS, BENCH, SELFTEST, MOBILENET, PYDIR = sys.argv[1:7]
sys.path.insert(0, PYDIR)
from camclass_export import ccm_bundle, ccm_calibrate  # noqa: E402

FLOOR = 0.6    # held-out accuracy of the drawn classes (4 classes: chance is 0.25)
MARGIN = 0.10  # int8 accuracy at least the f32 head's less this (2 of 20 held-out images)
AGREE = 0.85   # same top-1 as the f32 head on at least this share of the held-out images
CACHE = tempfile.mkdtemp(prefix="camclass-train-int8-cache-")


def run(exe, *args):
    return run_process(exe, args, 600, {"XDG_CACHE_HOME": CACHE})


def manifest(path):
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("manifest.json"))


def train(data, base, out, *extra):
    report = out + ".json"
    r = run(TRAIN, data, "--base", base, "-o", out, "--backend", "cpu", "--augment", "2",
            "--report", report, *extra)
    check(r.returncode == 0, f"{out}: exit 0 ({r.stderr[-400:]!r})")
    if r.returncode:
        return None, r
    with open(report) as f:
        return json.load(f), r


def check_int8_bundle(path, name):
    """Every conv2d/linear weight i8, every activation but a softmax output quantized."""
    m = manifest(path)
    tensors = {t["name"]: t for t in m["tensors"]}
    weights = [tensors[n["inputs"][1]] for n in m["graph"] if n["op"] in ("conv2d", "linear")]
    acts = [tensors[n["outputs"][0]] for n in m["graph"] if n["op"] != "softmax"]
    acts.append(tensors[m["input"]["tensor"]])
    check(m["version"] >= 2 and weights and all(w["dtype"] == "i8" for w in weights) and
          all("quant" in a for a in acts),
          f"{name}: version {m['version']}, {sum(w['dtype'] == 'i8' for w in weights)} of "
          f"{len(weights)} weights i8, {sum('quant' in a for a in acts)} of {len(acts)} "
          f"activations quantized")
    return m


def runs_int8(path, data, name):
    classes = sorted(os.listdir(data))
    first = os.path.join(data, classes[0], sorted(os.listdir(os.path.join(data, classes[0])))[0])
    r = run(BENCH, path, "--backend", "cpu", "--runs", "2", "--input", first)
    device = [x for x in r.stdout.splitlines() if x.startswith("device")]
    check(r.returncode == 0 and device and "int8" in device[0],
          f"{name}: camclass-bench runs it on the CPU backend in int8: exit {r.returncode}, "
          f"{device!r} {r.stderr[-200:]!r}")
    r = run(CAMCLASS, "--model", path, "--input", first, "--headless", "--log", "-",
            "--backend", "cpu")
    frames = [json.loads(x) for x in r.stdout.splitlines() if '"event":"frame"' in x]
    check(r.returncode == 0 and len(frames) == 1 and frames[0]["top"][0]["label"] in classes,
          f"{name}: camclass classifies with it: exit {r.returncode}, {len(frames)} frames")


def accuracy(tmp, data, base, name):
    """The int8 bundle against the f32 head of the same run (its held-out accuracy and
    answers, from the features: the f32 bundle without --int8)."""
    i8, r = train(data, base, os.path.join(tmp, name + "-int8.ccm"), "--int8")
    if not i8:
        return
    q = i8.get("int8", {})
    acc, agree = q.get("held_out_accuracy", -1), q.get("agreement", -1)
    ref = i8["held_out_accuracy"]
    print(f"{name}: held out {ref:.3f} f32, {acc:.3f} int8, agreement {agree:.3f} "
          f"({q.get('held_out_images')} images, {q.get('calibration_images')} calibrate)")
    check(q.get("held_out_images") == i8["held_out_images"] and ref >= FLOOR,
          f"{name}: int8 measured on the {i8['held_out_images']} held-out images, f32 {ref}")
    check(acc >= ref - MARGIN - 1e-9 and acc >= FLOOR,
          f"{name}: int8 held-out accuracy {acc:.3f} >= f32 {ref:.3f} - {MARGIN}, >= {FLOOR}")
    check(agree >= AGREE, f"{name}: int8 agrees with f32 on {agree:.3f} >= {AGREE}")
    path = os.path.join(tmp, name + "-int8.ccm")
    # The report file adds the wrong pictures' maps ("wrong", "wrong_maps"); the bundle keeps
    # the rest.
    in_bundle = {k: v for k, v in i8.items() if k not in ("wrong", "wrong_maps")}
    check(manifest(path).get("training") == in_bundle,
          f"{name}: the manifest's training record is the report, \"int8\" included")
    line = [x for x in r.stdout.splitlines() if x.startswith("int8: calibrated on")]
    check(line and f"on {q.get('calibration_images')} training images" in line[0] and
          line[0].endswith("int8)"), f"{name}: the printed int8 line, measured in int8: {line!r}")
    check_int8_bundle(path, name)
    runs_int8(path, data, name)


def images(data, m):
    return torch.cat([ccm_calibrate.load_images(os.path.join(data, c), m)
                      for c in sorted(os.listdir(data))])


def same_calibration(tmp, data):
    """--val 0 (every image calibrates): the C calibration against the exporter's."""
    f32p, i8p = os.path.join(tmp, "all-f32.ccm"), os.path.join(tmp, "all-int8.ccm")
    _, _ = train(data, SELFTEST, f32p, "--val", "0")
    rep, r = train(data, SELFTEST, i8p, "--val", "0", "--int8")
    if not rep:
        return
    check(rep["int8"]["held_out_accuracy"] is None and "no held-out images" in r.stdout,
          f"--val 0 --int8: nothing to measure, said so ({rep['int8']!r})")
    m, consts, _ = ccm_bundle.read_bundle(f32p)
    m8, consts8, _ = ccm_bundle.read_bundle(i8p)
    x = images(data, m)
    check(rep["int8"]["calibration_images"] == len(x),
          f"calibrated on every image: {rep['int8']['calibration_images']} of {len(x)}")
    ccm_calibrate.quantize_activations(m, consts, x)
    want = {t["name"]: t["quant"] for t in m["tensors"] if "quant" in t}
    got = {t["name"]: t.get("quant") for t in m8["tensors"] if "data" not in t}
    bad = [(n, q, got.get(n)) for n, q in want.items()
           if not got.get(n) or abs(got[n]["scale"] / q["scale"] - 1) > 2e-3 or
           abs(got[n]["zero_point"] - q["zero_point"]) > 1]
    check(len(want) == len(got) and not bad,
          f"every activation's scale and zero point as the exporter's calibration "
          f"({len(want)} and {len(got)} quantized; differing: {bad[:3]!r})")
    wbad = []
    for n in (t["name"] for t in m8["tensors"] if t["dtype"] == "i8"):
        w = consts[n].reshape(consts[n].shape[0], -1).astype(np.float64)
        scale = np.where(np.abs(w).max(1) > 0, np.abs(w).max(1) / 127, 1).astype(np.float32)
        q = np.clip(np.rint(w / scale.astype(np.float64)[:, None]), -127, 127)
        ref = q.astype(np.float32) * scale[:, None]  # as read_bundle dequantizes, in f32
        if not np.array_equal(consts8[n].reshape(ref.shape), ref):
            wbad.append(n)
    check(not wbad and sum(t["dtype"] == "i8" for t in m8["tensors"]) > 0,
          f"every i8 weight is the f32 one at max|w|/127 per channel (differing: {wbad[:3]})")


def main():
    with tempfile.TemporaryDirectory(prefix="camclass-train-int8-") as tmp:
        data = os.path.join(tmp, "scenes")
        subprocess.run([sys.executable, os.path.join(HERE, "make_dataset.py"), data,
                        "--per-class", "24", "--seed", "3"], check=True)
        for base, name in ((SELFTEST, "selftest"), (MOBILENET, "mobilenet_v2_random")):
            accuracy(tmp, data, base, name)
        same_calibration(tmp, data)
    shutil.rmtree(CACHE, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
