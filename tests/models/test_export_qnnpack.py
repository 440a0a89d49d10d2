#!/usr/bin/python3
"""PyTorch's own eager-mode quantization (qnnpack), exported as is, against camclass's int8
arithmetic on the CPU backend, on the trained self-test model.

Usage: test_export_qnnpack.py SELFTEST_EVAL SOURCE_ROOT

- The self-test model (assets/models/selftest.ccm: torchvision mobilenet_v2(width 0.35), 19
  classes, BatchNorm folded) is rebuilt in PyTorch from the folded weights with identity
  BatchNorms: as torchvision's mobilenet_v2, whose f32 logits must match the bundle's (1e-4),
  and as torchvision's *quantizable* mobilenet_v2 (the same weights; ReLU where ReLU6 was, as
  torchvision does for quantization). The model must be input-sensitive (two frames' logits
  differ by >= 5% of max).
- It is quantized by PyTorch's workflow (fuse_model, qnnpack qconfig, calibration on the even
  frames of the sample clip, convert) inside camclass_export.export_torch_quantized, which
  writes its int8 weights, scales and zero points as they are.
- camclass's own file source, preprocessing and CPU backend (selftest_eval) run the bundle on
  all 57 frames; PyTorch's quantized model (engine qnnpack) runs on the same frames. Per
  frame: logit cosine >= 0.999, and the same top-1 on >= 99% of the frames.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
from camclass_export import ccm_bundle, ccm_calibrate
from camclass_export import export as ce
from checks import check, host_command, summary

torch.set_num_threads(1)


def rebuild(manifest, consts, quantizable):
    """torchvision's mobilenet_v2(0.35, 19 classes), or its quantizable variant, carrying the
    bundle's folded weights: each conv gets its folded weight, the BatchNorm after it becomes
    the identity plus the folded bias (running_var = 1 - eps: division by exactly 1)."""
    if quantizable:
        m = torchvision.models.quantization.mobilenet_v2(quantize=False, width_mult=0.35,
                                                         num_classes=19).eval()
    else:
        m = torchvision.models.mobilenet_v2(width_mult=0.35, num_classes=19).eval()
    modules = dict(m.named_modules())
    used = 0
    with torch.no_grad():
        for node in manifest["graph"]:
            if node["op"] not in ("conv2d", "linear"):
                continue
            path = node["name"]
            mod = modules[path]
            mod.weight.copy_(torch.from_numpy(consts[node["inputs"][1]].copy()))
            bias = torch.from_numpy(consts[node["inputs"][2]].copy())
            if node["op"] == "linear":
                mod.bias.copy_(bias)
            else:
                parent, idx = path.rsplit(".", 1)
                bn = modules["%s.%d" % (parent, int(idx) + 1)]
                bn.weight.fill_(1.0)
                bn.bias.copy_(bias)
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)
            used += 1
    return m, used


def main():
    evaluate, root = sys.argv[1], sys.argv[2]
    sample = os.path.join(root, "assets", "samples", "selftest")
    manifest, consts, labels = ccm_bundle.read_bundle(
        os.path.join(root, "assets", "models", "selftest.ccm"))
    inp = manifest["input"]
    x = ccm_calibrate.load_images(sample, manifest)
    ref32 = ccm_bundle.run_graph(manifest, consts, x.numpy())
    spread = float(np.abs(ref32[0] - ref32[5]).max() / np.abs(ref32[[0, 5]]).max())
    check(spread >= 0.05, "input sensitivity: two frames' logits differ by %.3f of max" % spread)

    plain, used = rebuild(manifest, consts, quantizable=False)
    with torch.no_grad():
        got32 = plain(x).double().numpy()
    rel = float(np.abs(got32 - ref32).max() / np.abs(ref32).max())
    check(used == 53 and rel <= 1e-4, "rebuilt model: %d convs/linear, f32 logits within %.2g "
          "of the bundle's (1e-4)" % (used, rel))
    model, _ = rebuild(manifest, consts, quantizable=True)

    with tempfile.TemporaryDirectory(prefix="camclass-qnnpack-") as tmp:
        calib = os.path.join(tmp, "calib")
        os.mkdir(calib)
        for i, n in enumerate(sorted(f for f in os.listdir(sample) if f.endswith(".png"))):
            if i % 2 == 0:
                shutil.copy(os.path.join(sample, n), calib)
        out = os.path.join(tmp, "qnnpack.ccm")
        info = ce.export_torch_quantized(model, out, calib, inp["shape"], labels,
                                         "selftest_qnnpack", inp["color_order"], inp["mean"],
                                         inp["std"], ("squash", None), "qnnpack")
        print("export: %s" % (info["torch_int8"],))
        converted = model  # quantize_torch converted it in place
        torch.backends.quantized.engine = "qnnpack"
        with torch.no_grad():
            ref = converted(x).double().numpy()

        logits = os.path.join(tmp, "camclass.f32")
        r = subprocess.run(host_command(evaluate) + [out, sample, "cpu", "0", logits],
                           capture_output=True, text=True, timeout=300)
        print(r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr)
        check(r.returncode == 0 and "int8" in r.stdout, "camclass ran the bundle in int8 on "
              "the CPU backend")
        got = np.fromfile(logits, dtype="<f4").reshape(-1, len(labels)).astype(np.float64) \
            if os.path.exists(logits) else np.zeros((0, len(labels)))
        if check(got.shape == ref.shape, "camclass output %s, PyTorch %s" % (got.shape,
                                                                             ref.shape)):
            cos = np.sum(got * ref, 1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(ref,
                                                                                      axis=1))
            same = float(np.mean(got.argmax(1) == ref.argmax(1)))
            step = float(np.abs(got - ref).max())
            print("camclass int8 vs PyTorch qnnpack: cosine min %.5f mean %.5f, same top-1 "
                  "%.1f%% (%d/%d), max |logit diff| %.4f"
                  % (cos.min(), cos.mean(), 100 * same, int(round(same * len(got))), len(got),
                     step))
            check(cos.min() >= 0.999, "logit cosine >= 0.999 on every frame (min %.5f)"
                  % cos.min())
            check(same >= 0.99, "same top-1 on >= 99%% of frames (%.1f%%)" % (100 * same))
            with open(os.path.join(sample, "labels.txt")) as f:
                truth = f.read().split("\n")
            acc = {k: int(sum(labels[i] == t for i, t in zip(v.argmax(1), truth))) for k, v in
                   (("f32 bundle", ref32), ("PyTorch qnnpack int8", ref),
                    ("camclass int8", got))}
            print("top-1 on the %d frames of the clip: %s" % (len(got), acc))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
