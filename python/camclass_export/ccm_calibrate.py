"""camclass post-training static quantization: activation ranges from the user's own images.

`load_images(folder, manifest)` reads every PNG/JPEG in a folder and preprocesses it the way
camclass does for that bundle (preprocess.py, docs/PREPROCESSING.md).
`quantize_activations(manifest, consts, images)` runs the bundle graph on them, records each
activation's range and writes per-tensor int8 quantizations into the manifest
(docs/MODEL_FORMAT.md, "Quantized activations"), which makes it a version 2 bundle.
`compare(...)` reports what the rounding costs against the f32 graph on the same images.
"""

import os

import numpy as np
import torch

from . import ccm_bundle
from .preprocess import preprocess

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
# Ops whose output takes its input's quantization: they only move or clip values, and the
# CPU backend runs them in int8 only then (no requantization).
SAME_QUANT_OPS = ("flatten", "reshape", "clamp")
# Ops whose output stays f32.
F32_OPS = ("softmax",)


class CalibrationError(Exception):
    pass


def load_images(folder, manifest, limit=None):
    """The preprocessed images of folder (sorted by name) as a float32 batch [N, 3, H, W]."""
    from PIL import Image
    try:
        names = sorted(n for n in os.listdir(folder) if n.lower().endswith(IMAGE_SUFFIXES))
    except OSError as e:
        raise CalibrationError("cannot read calibration folder %s: %s" % (folder, e.strerror))
    if not names:
        raise CalibrationError("no PNG or JPEG images in calibration folder %s; give a folder "
                               "of pictures like the ones the model will see" % folder)
    xs = []
    for n in names[:limit]:
        path = os.path.join(folder, n)
        try:
            with Image.open(path) as im:
                rgb = np.asarray(im.convert("RGB"))
        except (OSError, ValueError) as e:
            raise CalibrationError("calibration image %s cannot be read: %s" % (path, e))
        xs.append(preprocess(rgb, manifest["input"]))
    return torch.stack(xs)


def act_quant(lo, hi):
    """Asymmetric int8 quantization covering [lo, hi] (widened to hold 0, so that zero, the
    padding value, is exact): {"scale": f32, "zero_point": -128..127}."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if hi - lo < 1e-12:
        hi = lo + 1e-6
    scale = float(np.float32((hi - lo) / 255.0))
    zp = int(np.clip(np.rint(-128.0 - lo / scale), -128, 127))
    return {"scale": scale, "zero_point": zp}


def quantize_activations(manifest, consts, images, batch=16):
    """Calibrates on images and adds "quant" to the input and every activation except those
    of f32-only ops (softmax); flatten/reshape/clamp outputs take their input's. Sets
    version 2 (or keeps a later one). Returns the number of quantized tensors."""
    ranges = {}
    for i in range(0, len(images), batch):
        ccm_bundle.run_graph(manifest, consts, images[i:i + batch].numpy(), record=ranges)
    quant = {}
    producer = {n["outputs"][0]: n for n in manifest["graph"]}
    for t in manifest["tensors"]:
        name = t["name"]
        if "data" in t:
            continue
        node = producer.get(name)
        if node is not None and node["op"] in F32_OPS:
            continue
        if node is not None and node["op"] in SAME_QUANT_OPS and node["inputs"][0] in quant:
            quant[name] = quant[node["inputs"][0]]
        else:
            quant[name] = act_quant(*ranges[name])
        t["quant"] = dict(quant[name])
    manifest["version"] = max(manifest["version"], ccm_bundle.VERSION_ACT_QUANT)
    return len(quant)


def compare(manifest, consts, images, batch=16):
    """The int8-rounded graph (fake quantization) against the f32 one on images:
    (min cosine, mean cosine, top-1 agreement)."""
    cos, same = [], []
    for i in range(0, len(images), batch):
        x = images[i:i + batch].numpy()
        ref = ccm_bundle.run_graph(manifest, consts, x)
        got = ccm_bundle.run_graph(manifest, consts, x, fake_quant=True)
        for r, g in zip(ref.reshape(len(x), -1), got.reshape(len(x), -1)):
            cos.append(float(np.dot(r, g) / max(np.linalg.norm(r) * np.linalg.norm(g), 1e-300)))
            same.append(int(r.argmax()) == int(g.argmax()))
    return min(cos), float(np.mean(cos)), float(np.mean(same))
