#!/usr/bin/python3
"""Post-training static quantization (camclass_export --quantize int8 --calibrate DIR) and
camclass's int8 arithmetic on the CPU backend, end to end, on the trained self-test model.

Usage: test_export_ptq.py CAMCLASS SOURCE_ROOT

- The model is input-sensitive (two sample frames -> logits that differ by >= 5% of max), so
  the comparisons below can fail.
- Calibration on the even-numbered frames of the sample clip; the written bundle is format
  version 2 and, parsed here with zipfile + json: every activation but softmax outputs has a
  quant whose grid covers that tensor's range on the calibration images (ranges recorded by
  running the f32 graph), flatten/reshape/clamp outputs share their input's quantization,
  conv2d/linear weights are i8.
- camclass --backend cpu runs it in int8 (device name says so) and agrees with the int8
  rounding simulated in PyTorch (ccm_bundle.run_graph(fake_quant=True)): same top-1 on every
  frame but at most one, probabilities within 0.05; its held-out top-1 (odd frames) is within
  one frame of the f32 bundle's.
- Bad calibration input gives one line and writes nothing.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
from camclass_export import ccm_bundle, ccm_calibrate
from checks import check, host_command, summary

EXPORT = os.path.join(HERE, "..", "..", "tools", "camclass-export")


def export(*args):
    return subprocess.run([sys.executable, EXPORT] + list(args), capture_output=True, text=True,
                          timeout=240)


def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def camclass_probs(camclass, bundle, folder, classes):
    """camclass --headless on folder: per-frame probabilities (top 16 of them) and the device."""
    r = subprocess.run(host_command(camclass) + ["--headless", "--input", folder, "--model", bundle,
                        "--backend", "cpu", "--top-k", "16", "--log", "-"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "camclass on %s: exit %d %s" % (bundle, r.returncode, r.stderr[-300:]))
    rows = []
    for line in r.stdout.splitlines():
        d = json.loads(line)
        if d.get("event") == "frame":
            p = np.zeros(classes)
            for t in d["top"]:
                p[t["index"]] = t["score"]
            rows.append(p)
    return np.array(rows), r.stderr


def check_manifest(path, consts, images):
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json"))
    check(manifest["version"] == 2, "version 2 (got %s)" % manifest["version"])
    tensors = {t["name"]: t for t in manifest["tensors"]}
    producer = {n["outputs"][0]: n for n in manifest["graph"]}
    ranges = {}
    ccm_bundle.run_graph(manifest, consts, images.numpy(), record=ranges)
    bad = []
    for name, t in tensors.items():
        if "data" in t:
            if producer.get(name) is None and any(
                    n["op"] in ("conv2d", "linear") and n["inputs"][1] == name
                    for n in manifest["graph"]):
                if t["dtype"] != "i8":
                    bad.append("%s: weight not i8" % name)
            continue
        node = producer.get(name)
        if node is not None and node["op"] == "softmax":
            if "quant" in t:
                bad.append("%s: softmax output quantized" % name)
            continue
        q = t.get("quant")
        if q is None or set(q) != {"scale", "zero_point"}:
            bad.append("%s: quant %r" % (name, q))
            continue
        s, zp = q["scale"], q["zero_point"]
        lo, hi = ranges[name]
        if not (-128 <= zp <= 127 and s > 0 and s * (-128 - zp) <= lo + s / 2 and
                s * (127 - zp) >= hi - s / 2):
            bad.append("%s: grid %g..%g does not cover %g..%g" % (name, s * (-128 - zp),
                                                                  s * (127 - zp), lo, hi))
        if node is not None and node["op"] in ("flatten", "reshape", "clamp") and \
                tensors[node["inputs"][0]].get("quant") != q:
            bad.append("%s: %s output with its own quantization" % (name, node["op"]))
    check(not bad, "every activation's quantization: %s" % ("; ".join(bad[:4]) or "ok"))
    return manifest


def main():
    camclass, root = sys.argv[1], sys.argv[2]
    sample = os.path.join(root, "assets", "samples", "selftest")
    f32_bundle = os.path.join(root, "assets", "models", "selftest.ccm")
    tmp = tempfile.mkdtemp(prefix="camclass-ptq-")
    try:
        names = sorted(n for n in os.listdir(sample) if n.endswith(".png"))
        truth = open(os.path.join(sample, "labels.txt")).read().rstrip("\n").split("\n")
        calib, held = os.path.join(tmp, "calib"), os.path.join(tmp, "held")
        os.mkdir(calib)
        os.mkdir(held)
        for i, n in enumerate(names):
            shutil.copy(os.path.join(sample, n), calib if i % 2 == 0 else held)
        held_truth = [t for i, t in enumerate(truth) if i % 2 == 1]

        manifest32, consts32, labels = ccm_bundle.read_bundle(f32_bundle)
        x = ccm_calibrate.load_images(sample, manifest32)
        a, b = ccm_bundle.run_graph(manifest32, consts32, x[[0, 5]].numpy())
        spread = float(np.abs(a - b).max()) / float(max(np.abs(a).max(), np.abs(b).max()))
        check(spread >= 0.05, "input sensitivity: two frames' logits differ by %.3f of max "
              "(>= 0.05)" % spread)

        out = os.path.join(tmp, "q8.ccm")
        r = export("--bundle", f32_bundle, "--quantize", "int8", "--calibrate", calib, "-o", out)
        print(r.stdout.strip())
        check(r.returncode == 0 and os.path.exists(out), "export: %s" % r.stderr.strip())
        if r.returncode != 0:
            return summary()
        manifest, consts, _ = ccm_bundle.read_bundle(out)
        check_manifest(out, consts, ccm_calibrate.load_images(calib, manifest32))

        # camclass's int8 CPU run against the int8 rounding simulated in PyTorch.
        got, err = camclass_probs(camclass, out, sample, len(labels))
        # The device line ends ", int8)" (after any fused blocks: "XNNPACK, 17 fused blocks
        # (avx512vnni), int8)").
        check(re.search(r"XNNPACK[^\n]*, int8\)", err), "camclass runs the bundle in int8: %s"
              % err.strip().splitlines()[:2])
        sim = softmax(ccm_bundle.run_graph(manifest, consts, x.numpy(), fake_quant=True))
        if check(got.shape == sim.shape, "camclass classified %d frames" % len(got)):
            # camclass logs the top 16 of 19 classes: compare those.
            diff = max(float(np.abs(got[i][got[i] > 0] - sim[i][got[i] > 0]).max())
                       for i in range(len(got)))
            same = int(np.sum(got.argmax(1) == sim.argmax(1)))
            print("camclass int8 vs simulated int8: same top-1 %d/%d, max |p diff| %.4f"
                  % (same, len(got), diff))
            check(same >= len(got) - 1, "same top-1 as the simulation on all frames but <= 1")
            check(diff <= 0.05, "probabilities within 0.05 of the simulation (%.4f)" % diff)

        # Held-out (odd) frames: int8 against f32, both through camclass.
        acc = {}
        for tag, bundle in (("f32", f32_bundle), ("int8", out)):
            p, _ = camclass_probs(camclass, bundle, held, len(labels))
            acc[tag] = int(sum(labels[k] == t for k, t in zip(p.argmax(1), held_truth)))
        print("held-out top-1: f32 %d/%d, int8 %d/%d" % (acc["f32"], len(held_truth),
                                                          acc["int8"], len(held_truth)))
        check(acc["int8"] >= acc["f32"] - 1, "int8 within one held-out frame of f32")

        # Bad calibration input: one line, nothing written.
        empty = os.path.join(tmp, "empty")
        os.mkdir(empty)
        broken = os.path.join(tmp, "broken")
        os.mkdir(broken)
        with open(os.path.join(broken, "x.png"), "wb") as f:
            f.write(b"not a png")
        for args, want in (
                (["--calibrate", empty], "no PNG or JPEG images in calibration folder"),
                (["--calibrate", broken], "cannot be read"),
                (["--calibrate", os.path.join(tmp, "nope")], "cannot read calibration folder"),
        ):
            dest = os.path.join(tmp, "bad.ccm")
            r = export("--bundle", f32_bundle, "--quantize", "int8", *args, "-o", dest)
            check(r.returncode == 1 and want in r.stderr and r.stderr.count("\n") == 1 and
                  not os.path.exists(dest), "%s: %s" % (want, r.stderr.strip()))
        r = export("--bundle", f32_bundle, "--calibrate", calib, "-o", os.path.join(tmp, "b.ccm"))
        check(r.returncode == 1 and "add --quantize int8" in r.stderr,
              "--calibrate without --quantize: %s" % r.stderr.strip())
    finally:
        shutil.rmtree(tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
