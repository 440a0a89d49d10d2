"""Writing a camclass bundle (docs/MODEL_FORMAT.md) without PyTorch: the manifest of a built graph
(ccm_graph.Graph, its passes done), the format's limits and input spec checks, int8 weights, and
the zip written to a temporary file renamed into place. numpy only: shared by the exporter
(export.py, with PyTorch) and camclass-fetch-imagenet (mobilenet_v2_builder.py, without).
"""

import json
import os
import struct
import tempfile
import zipfile

import numpy as np

from . import ccm_format
from .ccm_graph import FUSES_ACTIVATION, ExportError, act_attrs

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
DATA_ENTRY = "weights.bin"
IMAGENET_CLASSES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "imagenet_classes.txt")


def quantize_int8(w):
    """Per-output-channel symmetric int8 (docs/MODEL_FORMAT.md, dtype i8): for each index o of
    axis 0, scale[o] = max|w[o]| / 127 as f32 (1 for an all-zero channel) and
    q = round-half-even(w / scale[o]) in [-127, 127]. Returns (int8 array, f32 scales)."""
    w = np.asarray(w, dtype=np.float32)
    flat = w.reshape(w.shape[0], -1).astype(np.float64)
    amax = np.abs(flat).max(axis=1)
    scales = np.where(amax > 0, amax / 127.0, 1.0).astype("<f4")
    q = np.clip(np.rint(flat / scales.astype(np.float64)[:, None]), -127, 127)
    return q.astype(np.int8).reshape(w.shape), scales


def _quantized_names(nodes, consts):
    """The constants written as i8 with --quantize int8: the weights (input 1) of conv2d and
    linear nodes that nothing else uses; biases and everything else stay f32. nodes: objects
    with .op and .inputs."""
    weights, other = set(), set()
    for node in nodes:
        for i, t in enumerate(node.inputs):
            if t in consts:
                (weights if i == 1 and node.op in ("conv2d", "linear") else other).add(t)
    return weights - other


class _Blob:
    """The bytes of weights.bin, each tensor at a multiple of ccm_format.ALIGN."""

    def __init__(self):
        self.data = bytearray()

    def put(self, a):
        """Appends array a; returns its data reference."""
        self.data.extend(b"\0" * (-len(self.data) % ccm_format.ALIGN))
        ref = {"entry": DATA_ENTRY, "offset": len(self.data), "size": a.nbytes}
        self.data.extend(a.tobytes())
        return ref

    def put_i8(self, q, scales):
        """Appends int8 values and their per-output-channel scales. Returns (tensor fields,
        the dequantized f32 values a loader computes)."""
        fields = {"dtype": "i8", "shape": list(q.shape), "data": self.put(q),
                  "quant": {"axis": 0, "scales": self.put(scales)}}
        deq = (q.astype(np.float32) * scales.reshape((-1,) + (1,) * (q.ndim - 1)))
        return fields, deq.astype(np.float32)


def build_manifest(L, name, labels, color, mean, std, resize, quantize=None, i8_weights=None,
                   antialias=False):
    """Returns (manifest dict, {const name: f32 ndarray} in layout order, weights.bin bytes).
    antialias: the bundle's resize is PIL's (version 3), else PyTorch's without antialias.
    quantize="int8": conv2d/linear weights are written as i8 with per-output-channel scales
    (quantize_int8, or as given in i8_weights {name: (int8 values, scales)}); their entry in
    the returned dict is the dequantized f32 tensor (q * scale), the values a loader
    computes."""
    tensors = [{"name": L.input, "dtype": "f32", "shape": L.shapes[L.input]}]
    graph = []
    consts = {}
    blob = _Blob()
    quantized = _quantized_names(L.nodes, L.consts) if quantize == "int8" else set()

    for node in L.nodes:
        for t in node.inputs:
            if t in L.consts and t not in consts and t in quantized:
                given = (i8_weights or {}).get(t)
                fields, consts[t] = blob.put_i8(*(given or quantize_int8(L.consts[t])))
                tensors.append(dict(name=t, **fields))
            elif t in L.consts and t not in consts:
                a = np.ascontiguousarray(L.consts[t], dtype="<f4")
                consts[t] = a
                tensors.append({"name": t, "dtype": "f32", "shape": list(a.shape),
                                "data": blob.put(a)})
        tensors.append({"name": node.output, "dtype": "f32", "shape": L.shapes[node.output]})
        attrs = dict(node.attrs)
        if node.op in FUSES_ACTIVATION:
            attrs.update(act_attrs(node.act))
        entry = {"op": node.op, "name": node.name, "inputs": node.inputs,
                 "outputs": [node.output]}
        if attrs:
            entry["attrs"] = attrs
        graph.append(entry)

    classes = L.shapes[L.output][1]
    manifest = {
        "format": ccm_format.FORMAT,
        "version": ccm_format.VERSION_ANTIALIAS if antialias else ccm_format.VERSION,
        "name": name,
        "input": {
            "tensor": L.input,
            "shape": L.shapes[L.input],
            "color_order": color,
            "mean": [float(v) for v in mean],
            "std": [float(v) for v in std],
            "resize": resize_spec(resize, antialias),
        },
        "output": {"tensor": L.output,
                   "kind": "probabilities" if L.nodes[-1].op == "softmax" else "logits",
                   "classes": classes},
        "labels": {"entry": "labels.txt"},
        "tensors": tensors,
        "graph": graph,
    }
    return manifest, consts, bytes(blob.data)


def check_limits(manifest):
    """The limits of docs/MODEL_FORMAT.md, checked here so that the exporter never writes a
    bundle the loader rejects."""
    def fail(what, why):
        raise ExportError("%s: %s, beyond the bundle format's limits" % (what, why))

    if len(manifest["tensors"]) > 65536 or len(manifest["graph"]) > 65536:
        fail("model", "%d tensors and %d nodes (at most 65536 each)"
             % (len(manifest["tensors"]), len(manifest["graph"])))
    if manifest["output"]["classes"] > 100000:
        fail("output", "%d classes (at most 100000)" % manifest["output"]["classes"])
    shapes = {}
    for t in manifest["tensors"]:
        shapes[t["name"]] = t["shape"]
        if not 1 <= len(t["name"].encode("utf-8")) <= 256:
            fail("tensor %s" % t["name"], "name longer than 256 bytes")
        if max(t["shape"]) > 1 << 20 or int(np.prod(t["shape"])) > 1 << 28:
            fail("tensor %s" % t["name"], "shape %s (dims <= 2^20, <= 2^28 elements)"
                 % t["shape"])
    for n in manifest["graph"]:
        if not 1 <= len(n["name"].encode("utf-8")) <= 256:
            fail("node %s" % n["name"], "name longer than 256 bytes")
        if n["op"] != "conv2d":
            continue
        a = n["attrs"]
        sizes = shapes[n["inputs"][1]][2:] + a["stride"] + a["dilation"]
        if not all(1 <= v <= 64 for v in sizes) or not all(0 <= v <= 64 for v in a["padding"]):
            fail("node %s" % n["name"], "kernel %s, stride %s, dilation %s, padding %s "
                 "(1..64 each, padding 0..64)" % (shapes[n["inputs"][1]][2:], a["stride"],
                                                   a["dilation"], a["padding"]))


def _aligned_info(z, name):
    """A stored ZipInfo whose data starts at a multiple of ALIGN in the file (padding in an
    extra field), so that a future loader can map tensors in place."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    header_end = z.fp.tell() + 30 + len(name.encode("utf-8")) + 4
    pad = -header_end % ccm_format.ALIGN
    info.extra = struct.pack("<HH", 0xD935, pad) + b"\0" * pad
    return info


def write_bundle(out_path, manifest, blob, labels, check=None):
    """Writes the zip to a temporary file next to out_path and renames it into place.
    check(temporary path), when given, runs on the complete file before the rename; what it
    raises leaves out_path as it was (the temporary file is deleted)."""
    out_path = os.path.abspath(out_path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(out_path),
                               prefix="." + os.path.basename(out_path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as z:
                stamp = (1980, 1, 1, 0, 0, 0)
                z.writestr(zipfile.ZipInfo("manifest.json", stamp),
                           json.dumps(manifest, indent=1).encode("utf-8"))
                z.writestr(zipfile.ZipInfo("labels.txt", stamp),
                           "".join(label + "\n" for label in labels).encode("utf-8"))
                z.writestr(_aligned_info(z, DATA_ENTRY), blob)
            f.flush()
            os.fsync(f.fileno())
        if check is not None:
            check(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out_path)
    except BaseException:
        os.unlink(tmp)
        raise


def resize_spec(resize, antialias):
    """The manifest's input.resize for ("squash", None) or ("center_crop", S). "antialias" is
    written only when true, so that a bundle without it is what exporters before it wrote."""
    policy, size = resize
    spec = {"policy": policy, "size": size} if policy == "center_crop" else {"policy": policy}
    if antialias:
        spec["antialias"] = True
    return spec


def check_spec(input_shape, color, mean, std, resize, name, antialias=False):
    """The bundle's input spec and name, as docs/MODEL_FORMAT.md allows them."""
    if len(input_shape) != 4 or input_shape[:2] != [1, 3]:
        raise ExportError("input shape %s: camclass models take [1, 3, H, W]" % input_shape)
    if color not in ("RGB", "BGR"):
        raise ExportError("color order %r: use RGB or BGR" % color)
    if len(mean) != 3 or len(std) != 3 or min(std) <= 0:
        raise ExportError("mean and std need three numbers each, std > 0")
    policy, size = resize
    if policy not in ("squash", "center_crop") or \
            (policy == "center_crop" and (size is None or size < max(input_shape[2:]))):
        raise ExportError("resize %s:%s: use squash or center_crop:S with S >= %d"
                          % (policy, size, max(input_shape[2:])))
    if not isinstance(antialias, bool):
        raise ExportError("antialias %r: use True or False" % (antialias,))
    if not 1 <= len(name.encode("utf-8")) <= 128:
        raise ExportError("model name must be 1-128 bytes")


def imagenet_labels():
    """The 1000 ImageNet-1k category names of torchvision's classifiers (the meta of
    MobileNet_V2_Weights.IMAGENET1K_V1, kept in imagenet_classes.txt beside this module so
    that no PyTorch is needed; tests/models/test_mobilenet_v2_builder.py checks it against
    torchvision's)."""
    with open(IMAGENET_CLASSES, encoding="utf-8") as f:
        return f.read().rstrip("\n").split("\n")


def check_labels(labels, classes):
    if len(labels) != classes:
        raise ExportError("%d labels for a model with %d classes" % (len(labels), classes))
    for i, label in enumerate(labels):
        if not 1 <= len(label.encode("utf-8")) <= 256 or "\n" in label or "\r" in label:
            raise ExportError("label %d (%r) must be 1-256 bytes on one line" % (i + 1, label))
