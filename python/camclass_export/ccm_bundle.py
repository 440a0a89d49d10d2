"""camclass model bundles (docs/MODEL_FORMAT.md) from Python: read one, and run one.

`read_bundle(path)` (ccm_format's, torch-free, also importable from here) returns the manifest
and its constant tensors; `run_graph(...)` executes a
bundle graph with PyTorch ops in float64, written straight from the op table of the format
spec. The exporter runs it on the graph it is about to write (to catch folding bugs before a
file exists), and the tests run it on the written file.
"""

import numpy as np
import torch
import torch.nn.functional as F

from .ccm_format import (ALIGN, F32_MAX, FORMAT, VERSION, VERSION_ACT_QUANT,  # noqa: F401
                         VERSION_ANTIALIAS, act_range, read_bundle)


# Activations that are functions, not clamps: name -> f(float64 tensor), as PyTorch defines them.
ACT_FUNCTIONS = {
    "sigmoid": torch.sigmoid,
    "hardsigmoid": F.hardsigmoid,
    "hardswish": F.hardswish,
    "silu": F.silu,
}


def _clamp(y, attrs):
    """y with the node's fused activation applied (any kind)."""
    fn = ACT_FUNCTIONS.get((attrs or {}).get("activation"))
    if fn is not None:
        return fn(y)
    lo, hi = act_range(attrs)
    return y if lo is None and hi is None else torch.clamp(y, min=lo, max=hi)


def _pool2d(x, attrs, is_max):
    """max_pool2d / avg_pool2d with PyTorch's semantics (the format's)."""
    a = attrs
    kernel, stride = a["kernel"], a.get("stride", a["kernel"])
    top, left, bottom, right = a.get("padding", [0, 0, 0, 0])
    ceil = bool(a.get("ceil_mode", False))
    if top == bottom and left == right:
        if is_max:
            return F.max_pool2d(x, kernel, stride, (top, left), ceil_mode=ceil)
        return F.avg_pool2d(x, kernel, stride, (top, left), ceil_mode=ceil,
                            count_include_pad=bool(a.get("count_include_pad", True)))
    raise ValueError("asymmetric pool padding %s is not supported by the Python reference"
                     % a.get("padding"))


def _mul(ins, attrs):
    a, b = ins[0], ins[1]
    return _clamp(a * b, attrs)  # [.., C, 1, 1] broadcasts over H, W as the format says


def _channel_shuffle(x, attrs):
    n, c, h, w = x.shape
    g = attrs["groups"]
    return x.reshape(n, g, c // g, h, w).transpose(1, 2).reshape(n, c, h, w)


def _conv2d(x, ins, attrs, shape):
    a = attrs or {}
    top, left, bottom, right = a.get("padding", [0, 0, 0, 0])
    x = F.pad(x, (left, right, top, bottom))
    y = F.conv2d(x, ins[1], ins[2] if len(ins) > 2 else None, stride=a.get("stride", [1, 1]),
                 dilation=a.get("dilation", [1, 1]), groups=a.get("groups", 1))
    return _clamp(y, a)


def _linear(x, ins, attrs, shape):
    return _clamp(F.linear(x, ins[1], ins[2] if len(ins) > 2 else None), attrs)


# op name -> f(first input, all inputs, attrs, declared output shape), per the spec's op table.
OPS = {
    "conv2d": _conv2d,
    "linear": _linear,
    "add": lambda x, ins, a, s: _clamp(ins[0] + ins[1], a),
    "global_avg_pool": lambda x, ins, a, s: x.mean(dim=(2, 3), keepdim=True),
    "flatten": lambda x, ins, a, s: x.reshape(s[0], -1),
    "reshape": lambda x, ins, a, s: x.reshape(s),
    "softmax": lambda x, ins, a, s: torch.softmax(x, dim=-1),
    "clamp": lambda x, ins, a, s: _clamp(x, a),
    "max_pool2d": lambda x, ins, a, s: _pool2d(x, a, True),
    "avg_pool2d": lambda x, ins, a, s: _pool2d(x, a, False),
    "concat": lambda x, ins, a, s: torch.cat(ins, dim=1),
    "slice": lambda x, ins, a, s: x[:, a["start"]:a["end"]],
    "channel_shuffle": lambda x, ins, a, s: _channel_shuffle(x, a),
    "mul": lambda x, ins, a, s: _mul(ins, a),
}


def fake_quantize(y, quant):
    """y rounded to the int8 grid of an activation quantization {"scale", "zero_point"}
    (saturating, ties to even as the int8 backends round), as real values again."""
    s, z = float(np.float32(quant["scale"])), quant["zero_point"]
    return (torch.clamp(torch.round(y / s) + z, -128, 127) - z) * s


def run_graph(manifest, consts, x, fake_quant=False, record=None):
    """Runs the manifest's graph on input x (array-like, the input shape, or a batch of them
    along dim 0) in float64. Returns the output tensor as a float64 ndarray.
    fake_quant: round every tensor that has an activation quantization (the input included)
    to its int8 grid, which is what int8 arithmetic computes up to its own rounding.
    record: a dict that receives {activation name: (min, max)}, widened over calls."""
    shapes = {t["name"]: t["shape"] for t in manifest["tensors"]}
    quants = {t["name"]: t["quant"] for t in manifest["tensors"]
              if "quant" in t and "data" not in t} if fake_quant else {}
    x = torch.as_tensor(np.asarray(x, dtype=np.float64))
    batch = x.shape[0] if x.dim() == len(shapes[manifest["input"]["tensor"]]) else None
    vals = {name: torch.from_numpy(np.asarray(a, dtype=np.float64)) for name, a in consts.items()}

    def keep(name, y):
        if name in quants:
            y = fake_quantize(y, quants[name])
        if record is not None:
            lo, hi = float(y.min()), float(y.max())
            old = record.get(name)
            record[name] = (min(lo, old[0]), max(hi, old[1])) if old else (lo, hi)
        vals[name] = y

    keep(manifest["input"]["tensor"], x)
    with torch.no_grad():
        for node in manifest["graph"]:
            ins = [vals[name] for name in node["inputs"]]
            out = node["outputs"][0]
            shape = shapes[out] if batch is None else [batch] + shapes[out][1:]
            y = OPS[node["op"]](ins[0], ins, node.get("attrs"), shape)
            if list(y.shape) != shape:
                raise ValueError("node %s computes shape %s, the manifest declares %s"
                                 % (node["name"], list(y.shape), shapes[out]))
            keep(out, y)
    return vals[manifest["output"]["tensor"]].numpy()
