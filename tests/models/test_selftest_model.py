#!/usr/bin/python3
"""The committed self-test model on the committed sample clip (docs/MODELS.md).

    test_selftest_model.py SELFTEST_EVAL SOURCE_ROOT

- assets/samples/selftest/selftest.json holds the minimum top-1 accuracy per bundle (what
  `camclass --selftest` enforces); docs/MODELS.md must state the same figures.
- fp32 (assets/models/selftest.ccm): camclass's own file source, preprocessing and engine
  (tests/models/selftest_eval.c) on the cpu and the vulkan backend, each >= its minimum.
- int8 (assets/models/selftest-int8.ccm): the same on both backends (i8 weights), and in
  PyTorch (i8 dequantized by camclass_export.ccm_bundle, preprocessing of docs/PREPROCESSING.md)
  >= its minimum, with the same top-1 answers as the fp32 bundle.
- fp32 in PyTorch too, so that a failure says whether the model or the engine is at fault.
- Both bundles carry the labels of tools/train_selftest.py's CLASSES, squash resizing and
  ImageNet mean/std, and every label of the sample is a class of the model.
"""

import functools
import json
import os
import re
import subprocess
import sys

import numpy as np
import torch

EVAL, ROOT = sys.argv[1], os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(ROOT, "tools"))  # train_selftest.py, a tool, not the package
import checks  # noqa: E402
import train_selftest as ts  # noqa: E402
from camclass_export import ccm_bundle  # noqa: E402
from checks import summary  # noqa: E402

MODELS = os.path.join(ROOT, "assets", "models")
SAMPLE = os.path.join(ROOT, "assets", "samples", "selftest")
BUNDLES = {"selftest.ccm": "fp32", "selftest-int8.ccm": "int8"}
check = functools.partial(checks.check, verbose=True)  # every check printed, ok or not


def thresholds():
    with open(os.path.join(SAMPLE, "selftest.json")) as f:
        mins = json.load(f)["min_top1"]
    with open(os.path.join(ROOT, "docs", "MODELS.md"), encoding="utf-8") as f:
        doc = f.read()
    for bundle, tag in BUNDLES.items():
        m = re.search(r"%s[^\n|]*\|[^\n]*?min_top1 ([0-9.]+)" % re.escape(bundle), doc)
        check(m is not None and abs(float(m.group(1)) - mins[bundle]) < 1e-9,
              "docs/MODELS.md records min_top1 %s for %s (selftest.json: %s)"
              % (m.group(1) if m else "nothing", bundle, mins[bundle]))
    return mins


def sample_inputs(labels):
    from PIL import Image
    names = sorted(n for n in os.listdir(SAMPLE) if n.lower().endswith(".png"))
    with open(os.path.join(SAMPLE, "labels.txt"), encoding="utf-8") as f:
        truth = f.read().rstrip("\n").split("\n")
    check(len(names) == len(truth), "%d frames, %d labels" % (len(names), len(truth)))
    check(all(t in labels for t in truth), "every sample label is a class of the model")
    x = torch.stack([ts.normalize(ts.squash(torch.from_numpy(
        np.asarray(Image.open(os.path.join(SAMPLE, n)).convert("RGB")).copy())
        .permute(2, 0, 1))) for n in names])
    return x, truth


def run_engine(bundle, backend, minimum):
    r = subprocess.run(checks.host_command(EVAL) + [os.path.join(MODELS, bundle), SAMPLE, backend,
                        "%.6f" % (100 * minimum)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=400)
    print(r.stdout.rstrip())
    return r


def main():
    mins = thresholds()
    preds = {}
    for bundle, tag in BUNDLES.items():
        manifest, consts, labels = ccm_bundle.read_bundle(os.path.join(MODELS, bundle))
        check(labels == ts.CLASSES, "%s: labels are train_selftest's %d classes"
              % (bundle, len(ts.CLASSES)))
        inp = manifest["input"]
        check(inp["resize"] == {"policy": "squash"} and inp["color_order"] == "RGB" and
              np.allclose(inp["mean"], ts.MEAN) and np.allclose(inp["std"], ts.STD),
              "%s: squash, RGB, ImageNet mean/std" % bundle)
        dtypes = {t["dtype"] for t in manifest["tensors"]}
        check(dtypes == ({"f32"} if tag == "fp32" else {"f32", "i8"}),
              "%s: tensor dtypes %s" % (bundle, sorted(dtypes)))
        x, truth = sample_inputs(labels)
        logits = ts.run_bundle_batched(manifest, consts, x)
        preds[tag] = [labels[i] for i in logits.argmax(1).tolist()]
        acc = float(np.mean([p == t for p, t in zip(preds[tag], truth)]))
        check(acc >= mins[bundle], "%s in PyTorch: top-1 %.4f on %d sample frames (min %.4f)"
              % (bundle, acc, len(truth), mins[bundle]))
    check(preds["fp32"] == preds["int8"], "int8 and fp32 bundles give the same top-1 answers")

    for backend in ("cpu", "vulkan"):
        for bundle in BUNDLES:
            r = run_engine(bundle, backend, mins[bundle])
            check(r.returncode == 0, "%s on camclass's %s backend" % (bundle, backend))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
