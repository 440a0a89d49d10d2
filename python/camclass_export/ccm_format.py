"""The camclass bundle format (docs/MODEL_FORMAT.md) in Python without PyTorch: its constants,
the fused activations' clamp ranges, and read_bundle(path), which returns a bundle's manifest,
constant tensors and labels. numpy only, so that camclass-fetch-imagenet (which writes a bundle
and reads it back) runs where PyTorch is not installed; ccm_bundle adds the float64 reference
run of a graph, with PyTorch.
"""

import json
import zipfile

import numpy as np

FORMAT = "camclass-bundle"
# The exporter writes the lowest version a bundle needs (each includes the earlier ones).
VERSION = 1  # what the exporter writes unless the bundle uses one of the following
VERSION_ACT_QUANT = 2  # "quant": {"scale", "zero_point"} on activations
VERSION_ANTIALIAS = 3  # "antialias": true in input.resize (PIL's resize)
ALIGN = 64  # every tensor starts at a multiple of this inside its data entry

# A fused activation is a clamp range; JSON has no infinity, so an open side of a "clamp"
# activation is written as the largest f32 (clamping to it changes no finite f32 value).
F32_MAX = float(np.finfo(np.float32).max)


# Activations that are functions, not clamps (ccm_bundle.ACT_FUNCTIONS computes them).
ACT_FUNCTION_NAMES = ("sigmoid", "hardsigmoid", "hardswish", "silu")


def act_range(attrs):
    """(min, max) of a node's fused clamp activation (None for an open side); (None, None)
    for none and for the function activations (ACT_FUNCTION_NAMES)."""
    act = (attrs or {}).get("activation", "none")
    if act in ACT_FUNCTION_NAMES:
        return None, None
    if act == "none":
        return None, None
    if act == "relu":
        return 0.0, None
    if act == "relu6":
        return 0.0, 6.0
    if act == "clamp":
        lo, hi = attrs["clamp_min"], attrs["clamp_max"]
        return (None if lo <= -F32_MAX else lo), (None if hi >= F32_MAX else hi)
    raise ValueError("unknown activation %r" % act)


def read_bundle(path):
    """Returns (manifest dict, {tensor name: float32 ndarray} for every constant, labels).
    i8 tensors (docs/MODEL_FORMAT.md) are returned dequantized."""
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json").decode("utf-8"))
        entries = {}
        consts = {}
        for t in manifest["tensors"]:
            ref = t.get("data")
            if ref is None:
                continue
            info = z.getinfo(ref["entry"])
            if info.compress_type != zipfile.ZIP_STORED:
                raise ValueError("entry %s is compressed" % ref["entry"])
            if ref["entry"] not in entries:
                entries[ref["entry"]] = z.read(ref["entry"])
            raw = entries[ref["entry"]][ref["offset"]:ref["offset"] + ref["size"]]
            if t["dtype"] == "i8":  # dequantized: q * scale[index along quant.axis], in f32
                q = np.frombuffer(raw, dtype=np.int8).reshape(t["shape"])
                quant = t["quant"]
                sref = quant["scales"]
                if sref["entry"] not in entries:
                    entries[sref["entry"]] = z.read(sref["entry"])
                scales = np.frombuffer(entries[sref["entry"]][sref["offset"]:sref["offset"] +
                                                              sref["size"]], dtype="<f4")
                shape = [1] * q.ndim
                shape[quant["axis"]] = -1
                consts[t["name"]] = (q.astype(np.float32) *
                                     scales.reshape(shape)).astype(np.float32)
                continue
            consts[t["name"]] = np.frombuffer(raw, dtype="<f4").reshape(t["shape"])
        labels = manifest["labels"]
        if isinstance(labels, dict):
            text = z.read(labels["entry"]).decode("utf-8")
            labels = text.replace("\r\n", "\n").rstrip("\n").split("\n")
    return manifest, consts, labels
