#!/usr/bin/python3
"""camclass_export — PyTorch model -> camclass model bundle (docs/MODEL_FORMAT.md).

    camclass_export.py --model mobilenet_v2 | --module file.py:Class
                       [--weights state_dict.pth | --random-seed N]
                       [--labels labels.txt | --num-classes N] [--name NAME]
                       [--input-size 224] [--resize center_crop:256|squash]
                       [--mean R G B --std R G B --color RGB|BGR] -o out.ccm

or, from Python, `export_module(module, "out.ccm", (1, 3, 224, 224), labels)` for your own
nn.Module.

How: the module is traced with torch.fx in eval mode and every tensor's shape is found with
ShapeProp. Each fx node is lowered through a table (module type / function / method name ->
handler) to a small graph of bundle ops plus two temporary ops, `batchnorm` and the activation
`clamp`. Two passes then fold every BatchNorm2d into the convolution before it (or, with no
convolution to fold into, turn it into a depthwise 1x1 convolution) and fuse each activation
into the conv2d/linear/add/clamp that produces its input. The result is run in float64 from the
exact f32 tensors about to be written and compared with the original module; only then is the
zip written, to a temporary file renamed into place at the end, so that a failed export never
leaves a bundle behind.

Anything unsupported stops the export with one line naming the op and where it is in the source.
"""

import argparse
import json
import operator
import os
import re
import struct
import sys
import tempfile
import zipfile

import numpy as np
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.node import _get_qualified_name
from torch.fx.passes.shape_prop import ShapeProp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ccm_bundle  # noqa: E402  (tools/ccm_bundle.py, next to this file)

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
DATA_ENTRY = "weights.bin"
VERIFY_TOLERANCE = 1e-4  # max |fused - pytorch| <= this x max |pytorch|


class ExportError(Exception):
    """An export that cannot be done; the message is one line for the user."""


# ---------------------------------------------------------------------------------------------
# Intermediate graph
# ---------------------------------------------------------------------------------------------

class Node:
    """One op of the graph being built. op is a bundle op name or, before the passes run,
    "batchnorm"; act is the fused activation as a (min, max) clamp range, None = open side."""

    def __init__(self, op, name, inputs, output, attrs=None, src=None):
        self.op = op
        self.name = name
        self.inputs = inputs  # tensor names
        self.output = output  # tensor name
        self.attrs = attrs or {}
        self.act = (None, None)
        self.bn = None  # batchnorm only: (mean, var, gamma, beta, eps) float64 arrays
        self.src = src  # the fx node it came from, for messages


def compose_act(first, then):
    """The single clamp range equal to clamping by `first`, then by `then`."""
    lo2, hi2 = then

    def clamp2(v):
        if v is None:
            return None
        if lo2 is not None:
            v = max(v, lo2)
        if hi2 is not None:
            v = min(v, hi2)
        return v

    lo, hi = first
    return (lo2 if lo is None else clamp2(lo)), (hi2 if hi is None else clamp2(hi))


def act_attrs(act):
    lo, hi = act
    if lo is None and hi is None:
        return {}
    if lo == 0.0 and hi is None:
        return {"activation": "relu"}
    if lo == 0.0 and hi == 6.0:
        return {"activation": "relu6"}
    big = ccm_bundle.F32_MAX
    return {"activation": "clamp",
            "clamp_min": -big if lo is None else float(lo),
            "clamp_max": big if hi is None else float(hi)}


# ---------------------------------------------------------------------------------------------
# Source locations for messages
# ---------------------------------------------------------------------------------------------

_FRAME_RE = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)\s*$')
_TORCH_INTERNAL = (os.sep + os.path.join("torch", "fx") + os.sep,
                   os.sep + os.path.join("torch", "nn", "modules") + os.sep)


def where(n):
    """'file.py:12 in forward `y = torch.sigmoid(x)` (fx node sigmoid, module act)'."""
    extra = "fx node %s" % n.name
    if n.op == "call_module":
        extra += ", module %s" % n.target
    lines = (n.stack_trace or "").splitlines()
    # torch 1.13 records the innermost frame first; the first frame outside torch's own fx and
    # nn.Module machinery is the user's line.
    for i, line in enumerate(lines):
        m = _FRAME_RE.match(line)
        if m and not any(p in m.group(1) for p in _TORCH_INTERNAL):
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            return "%s:%s in %s `%s` (%s)" % (m.group(1), m.group(2), m.group(3), code, extra)
    return "(%s)" % extra


def op_name(gm, n):
    if n.op == "call_module":
        t = type(gm.get_submodule(n.target))
        if getattr(nn, t.__name__, None) is t:
            return "torch.nn.%s" % t.__name__
        return "%s.%s" % (t.__module__, t.__qualname__)
    if n.op == "call_function":
        return _get_qualified_name(n.target)
    if n.op == "call_method":
        return "Tensor.%s" % n.target
    return "%s %s" % (n.op, n.target)


# ---------------------------------------------------------------------------------------------
# Lowering: fx nodes -> Nodes, through the tables at the end of this section
# ---------------------------------------------------------------------------------------------

_REQUIRED = object()


def bind(n, spec):
    """fx node args/kwargs -> dict by the parameter list spec [(name, default), ...]."""
    out = {}
    for i, (name, default) in enumerate(spec):
        if i < len(n.args):
            out[name] = n.args[i]
        elif name in n.kwargs:
            out[name] = n.kwargs[name]
        elif default is _REQUIRED:
            raise ExportError("%s: missing argument %s at %s" % (n.target, name, where(n)))
        else:
            out[name] = default
    return out


class Lowering:
    def __init__(self, gm):
        self.gm = gm
        self.nodes = []
        self.consts = {}  # name -> float64 ndarray (cast to f32 when written)
        self.shapes = {}  # tensor name -> list of ints
        self.value = {}  # fx node -> tensor name, or None for a non-tensor value (x.size())
        self.input = None
        self.output = None
        self._names = set()

    # -- helpers used by the handlers --

    def fail(self, n, why):
        raise ExportError("%s: %s at %s" % (op_name(self.gm, n), why, where(n)))

    def shape(self, n):
        meta = n.meta.get("tensor_meta")
        if meta is None or not hasattr(meta, "shape"):
            self.fail(n, "does not produce one tensor")
        if meta.dtype != torch.float32:
            self.fail(n, "produces %s; camclass bundles hold float32" % meta.dtype)
        shape = [int(d) for d in meta.shape]
        if not 1 <= len(shape) <= 4:
            self.fail(n, "produces a %d-d tensor; bundles hold 1-d to 4-d tensors" % len(shape))
        return shape

    def tensor(self, n, arg):
        """The tensor name of an fx argument that must be a tensor computed by the graph."""
        if isinstance(arg, torch.fx.Node) and isinstance(self.value.get(arg), str):
            return self.value[arg]
        self.fail(n, "takes %r where camclass needs a tensor computed by the graph" % (arg,))

    def unique(self, name):
        base, k = name, 1
        while name in self._names:
            name = "%s_%d" % (base, k)
            k += 1
        self._names.add(name)
        return name

    def const(self, name, array):
        self.consts[name] = np.asarray(array, dtype=np.float64)
        self.shapes[name] = list(self.consts[name].shape)
        return name

    def emit(self, n, op, inputs, attrs=None, name=None, shape=None, claimed=False):
        """Adds a Node computing n's value; returns its output tensor name. The node is named
        after the module path or fx node name, made unique, unless the caller already
        claimed a name with unique()."""
        if not claimed:
            name = self.unique(name or (n.target if n.op == "call_module" else n.name))
        out = name + ".out"
        self.shapes[out] = shape or self.shape(n)
        self.nodes.append(Node(op, name, inputs, out, attrs, src=n))
        return out

    def handler(self, n):
        if n.op == "call_module":
            for t in type(self.gm.get_submodule(n.target)).__mro__:
                if t in MODULE_HANDLERS:
                    return MODULE_HANDLERS[t]
            return None
        if n.op == "call_function":
            return FUNCTION_HANDLERS.get(n.target)
        if n.op == "call_method":
            return METHOD_HANDLERS.get(n.target)
        return None

    def run(self):
        for n in self.gm.graph.nodes:
            if n.op == "placeholder":
                if self.input is not None:
                    self.fail(n, "is a second graph input; camclass models take one image")
                self.input = "input"
                self.shapes["input"] = self.shape(n)
                self.value[n] = "input"
            elif n.op == "output":
                self.output = self.tensor(n, n.args[0])
            else:
                h = self.handler(n)
                if h is None:
                    raise ExportError("unsupported op %s at %s" % (op_name(self.gm, n), where(n)))
                self.value[n] = h(self, n)


# -- handlers: each takes (lowering, fx node) and returns the node's tensor name (or None) --

def _conv2d_module(L, n):
    m = L.gm.get_submodule(n.target)
    x = L.tensor(n, n.args[0])
    if m.padding_mode != "zeros":
        L.fail(n, "padding_mode %r is not supported (only zeros)" % m.padding_mode)
    kh, kw = m.kernel_size
    dh, dw = m.dilation
    if m.padding == "valid":
        pad = [0, 0, 0, 0]
    elif m.padding == "same":  # PyTorch puts the odd pixel at the bottom/right
        th, tw = dh * (kh - 1), dw * (kw - 1)
        pad = [th // 2, tw // 2, th - th // 2, tw - tw // 2]
    else:
        pad = [m.padding[0], m.padding[1], m.padding[0], m.padding[1]]
    name = L.unique(n.target)  # a module called twice gets two nodes and two weight copies
    inputs = [x, L.const(name + ".weight", m.weight.detach().double().numpy())]
    if m.bias is not None:
        inputs.append(L.const(name + ".bias", m.bias.detach().double().numpy()))
    attrs = {"stride": list(m.stride), "padding": pad, "dilation": list(m.dilation),
             "groups": m.groups}
    return L.emit(n, "conv2d", inputs, attrs, name=name, claimed=True)


def _batchnorm2d_module(L, n):
    m = L.gm.get_submodule(n.target)
    x = L.tensor(n, n.args[0])
    if m.running_mean is None:
        L.fail(n, "has no running statistics (track_running_stats=False)")
    c = m.num_features
    gamma = m.weight.detach().double().numpy() if m.affine else np.ones(c)
    beta = m.bias.detach().double().numpy() if m.affine else np.zeros(c)
    out = L.emit(n, "batchnorm", [x])
    L.nodes[-1].bn = (m.running_mean.double().numpy(), m.running_var.double().numpy(),
                      gamma, beta, float(m.eps))
    return out


def _linear_module(L, n):
    m = L.gm.get_submodule(n.target)
    x = L.tensor(n, n.args[0])
    if len(L.shapes[x]) != 2:
        L.fail(n, "is applied to a %s tensor; camclass linear takes [1, K] (flatten first)"
               % L.shapes[x])
    name = L.unique(n.target)
    inputs = [x, L.const(name + ".weight", m.weight.detach().double().numpy())]
    if m.bias is not None:
        inputs.append(L.const(name + ".bias", m.bias.detach().double().numpy()))
    return L.emit(n, "linear", inputs, name=name, claimed=True)


def _activation(lo, hi):
    def handle(L, n):
        node = L.emit(n, "clamp", [L.tensor(n, n.args[0])])
        L.nodes[-1].act = (lo, hi)
        return node
    return handle


def _hardtanh_module(L, n):
    m = L.gm.get_submodule(n.target)
    return _activation(float(m.min_val), float(m.max_val))(L, n)


def _hardtanh_function(L, n):
    a = bind(n, [("input", _REQUIRED), ("min_val", -1.0), ("max_val", 1.0)])
    return _activation(float(a["min_val"]), float(a["max_val"]))(L, n)


def _clamp_function(L, n):
    a = bind(n, [("input", _REQUIRED), ("min", None), ("max", None)])
    for k in ("min", "max"):
        if a[k] is not None and not isinstance(a[k], (int, float)):
            L.fail(n, "with a tensor %s is not supported (numbers only)" % k)
    lo = None if a["min"] is None else float(a["min"])
    hi = None if a["max"] is None else float(a["max"])
    return _activation(lo, hi)(L, n)


def _passthrough(L, n):
    return L.tensor(n, n.args[0])


def _dropout_function(L, n):
    a = bind(n, [("input", _REQUIRED), ("p", 0.5), ("training", True)])
    if a["training"] is not False:
        L.fail(n, "runs in training mode (pass training=self.training)")
    return L.tensor(n, a["input"])


def _global_avg_pool(L, n, x, keepdim):
    """x [1,C,H,W] -> [1,C,1,1] (keepdim) or [1,C]."""
    if len(L.shapes[x]) != 4:
        L.fail(n, "averages a %s tensor; camclass pools [1,C,H,W]" % L.shapes[x])
    c = L.shapes[x][1]
    if keepdim:
        return L.emit(n, "global_avg_pool", [x], shape=[1, c, 1, 1])
    pooled = L.emit(n, "global_avg_pool", [x], name=n.name + ".pool", shape=[1, c, 1, 1])
    return L.emit(n, "flatten", [pooled], shape=[1, c])


def _adaptive_avg_pool(L, n, size):
    if size not in (1, (1, 1), [1, 1]):
        L.fail(n, "with output size %r is not supported (only 1 = global average pool)"
               % (size,))
    return _global_avg_pool(L, n, L.tensor(n, n.args[0]), keepdim=True)


def _adaptive_avg_pool_module(L, n):
    return _adaptive_avg_pool(L, n, L.gm.get_submodule(n.target).output_size)


def _adaptive_avg_pool_function(L, n):
    return _adaptive_avg_pool(L, n, bind(n, [("input", _REQUIRED), ("output_size", 1)])
                              ["output_size"])


def _mean(L, n):
    a = bind(n, [("input", _REQUIRED), ("dim", None), ("keepdim", False), ("dtype", None)])
    x = L.tensor(n, a["input"])
    dims = a["dim"] if isinstance(a["dim"], (list, tuple)) else [a["dim"]]
    if len(L.shapes[x]) != 4 or sorted(d % 4 for d in dims if d is not None) != [2, 3]:
        L.fail(n, "over dims %r is not supported (only the spatial dims (2, 3) of [1,C,H,W])"
               % (a["dim"],))
    return _global_avg_pool(L, n, x, keepdim=bool(a["keepdim"]))


def _reshape(L, n):
    """flatten / view / reshape / squeeze / unsqueeze: only the resulting shape matters."""
    x = L.tensor(n, n.args[0])
    shape = L.shape(n)
    count = int(np.prod(L.shapes[x]))
    if shape == [1, count]:
        return L.emit(n, "flatten", [x])
    if shape == L.shapes[x]:
        return x
    return L.emit(n, "reshape", [x])


def _add(L, n):
    a = bind(n, [("input", _REQUIRED), ("other", _REQUIRED), ("alpha", 1)])
    if a["alpha"] != 1:
        L.fail(n, "with alpha=%r is not supported" % (a["alpha"],))
    x, y = L.tensor(n, a["input"]), L.tensor(n, a["other"])
    if L.shapes[x] != L.shapes[y]:
        L.fail(n, "of shapes %s and %s is not supported (no broadcasting)"
               % (L.shapes[x], L.shapes[y]))
    return L.emit(n, "add", [x, y])


def _softmax(L, n, dim):
    x = L.tensor(n, n.args[0])
    if len(L.shapes[x]) != 2 or dim not in (1, -1):
        L.fail(n, "over dim %r of a %s tensor is not supported (only the last dim of [1, N])"
               % (dim, L.shapes[x]))
    return L.emit(n, "softmax", [x])


def _softmax_function(L, n):
    return _softmax(L, n, bind(n, [("input", _REQUIRED), ("dim", None)])["dim"])


def _softmax_module(L, n):
    return _softmax(L, n, L.gm.get_submodule(n.target).dim)


def _shape_query(L, n):
    """x.size(), x.shape, x.dim(), and indexing into their results: a Python value used as a
    shape argument, not a tensor."""
    on_tensor = isinstance(n.args[0], torch.fx.Node) and isinstance(L.value.get(n.args[0]), str)
    if n.target is getattr and on_tensor and n.args[1] not in ("shape", "ndim"):
        L.fail(n, "of attribute %r of a tensor is not supported" % (n.args[1],))
    if n.target is operator.getitem and on_tensor:
        L.fail(n, "(indexing a tensor) is not supported")
    return None


MODULE_HANDLERS = {
    nn.Conv2d: _conv2d_module,
    nn.BatchNorm2d: _batchnorm2d_module,
    nn.Linear: _linear_module,
    nn.ReLU: _activation(0.0, None),
    nn.Hardtanh: _hardtanh_module,  # also nn.ReLU6 (a Hardtanh subclass)
    nn.modules.dropout._DropoutNd: _passthrough,  # eval mode: identity
    nn.Identity: _passthrough,
    nn.AdaptiveAvgPool2d: _adaptive_avg_pool_module,
    nn.Flatten: _reshape,
    nn.Softmax: _softmax_module,
}

FUNCTION_HANDLERS = {
    F.relu: _activation(0.0, None),
    torch.relu: _activation(0.0, None),
    F.relu6: _activation(0.0, 6.0),
    F.hardtanh: _hardtanh_function,
    torch.clamp: _clamp_function,
    torch.clip: _clamp_function,
    F.dropout: _dropout_function,
    F.adaptive_avg_pool2d: _adaptive_avg_pool_function,
    torch.mean: _mean,
    torch.flatten: _reshape,
    torch.reshape: _reshape,
    torch.squeeze: _reshape,
    torch.unsqueeze: _reshape,
    operator.add: _add,
    operator.iadd: _add,
    torch.add: _add,
    F.softmax: _softmax_function,
    torch.softmax: _softmax_function,
    getattr: _shape_query,
    operator.getitem: _shape_query,
}

METHOD_HANDLERS = {
    "relu": _activation(0.0, None),
    "relu_": _activation(0.0, None),
    "clamp": _clamp_function,
    "clip": _clamp_function,
    "mean": _mean,
    "flatten": _reshape,
    "view": _reshape,
    "reshape": _reshape,
    "squeeze": _reshape,
    "unsqueeze": _reshape,
    "contiguous": _passthrough,
    "add": _add,
    "add_": _add,
    "softmax": _softmax_function,
    "size": _shape_query,
    "dim": _shape_query,
}


# ---------------------------------------------------------------------------------------------
# Passes
# ---------------------------------------------------------------------------------------------

def _uses(L):
    count = {}
    for node in L.nodes:
        for t in node.inputs:
            count[t] = count.get(t, 0) + 1
    count[L.output] = count.get(L.output, 0) + 1
    return count


def _replace_uses(L, old, new):
    for node in L.nodes:
        node.inputs = [new if t == old else t for t in node.inputs]
    if L.output == old:
        L.output = new


def fold_batchnorm(L):
    """conv2d -> batchnorm becomes one conv2d with w' = w*s, b' = (b - mean)*s + beta,
    s = gamma/sqrt(var + eps); a batchnorm after anything else becomes a depthwise 1x1
    conv2d with weight s and bias beta - mean*s."""
    uses = _uses(L)
    producer = {node.output: node for node in L.nodes}
    kept = []
    for node in L.nodes:
        if node.op != "batchnorm":
            kept.append(node)
            continue
        mean, var, gamma, beta, eps = node.bn
        s = gamma / np.sqrt(var + eps)
        x = node.inputs[0]
        conv = producer.get(x)
        if conv is not None and conv.op == "conv2d" and conv.act == (None, None) \
                and uses[x] == 1 and len(L.shapes[x]) == 4 and L.shapes[x][1] == len(s):
            w = L.consts[conv.inputs[1]]
            L.consts[conv.inputs[1]] = w * s.reshape(-1, 1, 1, 1)
            if len(conv.inputs) == 3:
                b = L.consts[conv.inputs[2]]
            else:
                b = np.zeros(len(s))
                conv.inputs.append(L.const(conv.name + ".bias", b))
            L.consts[conv.inputs[2]] = (b - mean) * s + beta
            _replace_uses(L, node.output, conv.output)
            continue
        c = len(s)
        node.op = "conv2d"
        node.inputs = [x, L.const(node.name + ".weight", s.reshape(c, 1, 1, 1)),
                       L.const(node.name + ".bias", beta - mean * s)]
        node.attrs = {"stride": [1, 1], "padding": [0, 0, 0, 0], "dilation": [1, 1],
                      "groups": c}
        node.bn = None
        kept.append(node)
    L.nodes = kept


FUSES_ACTIVATION = ("conv2d", "linear", "add", "clamp")


def fuse_activations(L):
    """A clamp whose input comes from a conv2d/linear/add/clamp used by nothing else is
    merged into that node's activation."""
    uses = _uses(L)
    producer = {node.output: node for node in L.nodes}
    kept = []
    for node in L.nodes:
        prev = producer.get(node.inputs[0])
        if node.op == "clamp" and prev is not None and prev.op in FUSES_ACTIVATION \
                and uses[node.inputs[0]] == 1:
            prev.act = compose_act(prev.act, node.act)
            _replace_uses(L, node.output, prev.output)
            continue
        kept.append(node)
    L.nodes = kept


def rename_tensor(L, old, new):
    for node in L.nodes:
        if node.output == old:
            node.output = new
    L.shapes[new] = L.shapes.pop(old)
    _replace_uses(L, old, new)


# ---------------------------------------------------------------------------------------------
# Manifest, verification, writing
# ---------------------------------------------------------------------------------------------

def build_manifest(L, name, labels, color, mean, std, resize):
    """Returns (manifest dict, {const name: f32 ndarray} in layout order, weights.bin bytes)."""
    tensors = [{"name": L.input, "dtype": "f32", "shape": L.shapes[L.input]}]
    graph = []
    consts = {}
    blob = bytearray()
    for node in L.nodes:
        for t in node.inputs:
            if t in L.consts and t not in consts:
                a = np.ascontiguousarray(L.consts[t], dtype="<f4")
                blob += b"\0" * (-len(blob) % ccm_bundle.ALIGN)
                ref = {"entry": DATA_ENTRY, "offset": len(blob), "size": a.nbytes}
                blob += a.tobytes()
                consts[t] = a
                tensors.append({"name": t, "dtype": "f32", "shape": list(a.shape), "data": ref})
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
    policy, size = resize
    manifest = {
        "format": ccm_bundle.FORMAT,
        "version": ccm_bundle.VERSION,
        "name": name,
        "input": {
            "tensor": L.input,
            "shape": L.shapes[L.input],
            "color_order": color,
            "mean": [float(v) for v in mean],
            "std": [float(v) for v in std],
            "resize": {"policy": policy, "size": size} if policy == "center_crop"
            else {"policy": policy},
        },
        "output": {"tensor": L.output,
                   "kind": "probabilities" if L.nodes[-1].op == "softmax" else "logits",
                   "classes": classes},
        "labels": {"entry": "labels.txt"},
        "tensors": tensors,
        "graph": graph,
    }
    return manifest, consts, bytes(blob)


def verify(module, manifest, consts, seed=0):
    """Runs the fused graph (float64, from the f32 tensors to be written) and the original
    module (float32) on one random input; returns max |diff| / max |ref|."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(manifest["input"]["shape"], generator=g)
    with torch.no_grad():
        ref = module(x).double().numpy()
    got = ccm_bundle.run_graph(manifest, consts, x.numpy())
    scale = max(float(np.abs(ref).max()), 1e-30)
    err = float(np.abs(got - ref).max())
    if not err <= VERIFY_TOLERANCE * scale:  # also catches NaN
        raise ExportError("the fused graph differs from the module: max |diff| = %.3g "
                          "(%.3g x max |output|, tolerance %g); this is an exporter bug"
                          % (err, err / scale, VERIFY_TOLERANCE))
    return err / scale


def _aligned_info(z, name):
    """A stored ZipInfo whose data starts at a multiple of ALIGN in the file (padding in an
    extra field), so that a future loader can map tensors in place."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    header_end = z.fp.tell() + 30 + len(name.encode("utf-8")) + 4
    pad = -header_end % ccm_bundle.ALIGN
    info.extra = struct.pack("<HH", 0xD935, pad) + b"\0" * pad
    return info


def write_bundle(out_path, manifest, blob, labels):
    """Writes the zip to a temporary file next to out_path and renames it into place."""
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
        os.chmod(tmp, 0o644)
        os.replace(tmp, out_path)
    except BaseException:
        os.unlink(tmp)
        raise


# ---------------------------------------------------------------------------------------------
# Public entry points
# ---------------------------------------------------------------------------------------------

def imagenet_labels():
    """torchvision's ImageNet-1k category names (package metadata, nothing downloaded)."""
    try:
        from torchvision.models import MobileNet_V2_Weights
        return list(MobileNet_V2_Weights.IMAGENET1K_V1.meta["categories"])
    except (ImportError, AttributeError, KeyError):
        return None


def check_labels(labels, classes):
    if len(labels) != classes:
        raise ExportError("%d labels for a model with %d classes" % (len(labels), classes))
    for i, label in enumerate(labels):
        if not 1 <= len(label.encode("utf-8")) <= 256 or "\n" in label or "\r" in label:
            raise ExportError("label %d (%r) must be 1-256 bytes on one line" % (i + 1, label))


def trace(module):
    tracer = torch.fx.Tracer()
    tracer.record_stack_traces = True
    try:
        graph = tracer.trace(module)
    except Exception as e:  # fx raises TraceError, TypeError, ... for untraceable code
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ExportError("cannot trace %s with torch.fx: %s" % (type(module).__name__, msg))
    return torch.fx.GraphModule(tracer.root, graph)


def export_module(module, out_path, input_shape=(1, 3, 224, 224), labels=None, name=None,
                  color="RGB", mean=IMAGENET_MEAN, std=IMAGENET_STD,
                  resize=("center_crop", 256)):
    """Exports module (an nn.Module taking one [1,3,H,W] image, returning [1, classes]) to
    out_path. labels: list of class names; None = ImageNet names for 1000 classes, else
    "class_N". resize: ("squash", None) or ("center_crop", S). Returns a summary dict.
    Raises ExportError (nothing is written then)."""
    input_shape = [int(d) for d in input_shape]
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
    name = name or type(module).__name__
    if not 1 <= len(name.encode("utf-8")) <= 128:
        raise ExportError("model name must be 1-128 bytes")

    was_training = module.training
    module.eval()
    try:
        gm = trace(module)
        try:
            ShapeProp(gm).propagate(torch.zeros(input_shape))
        except Exception as e:
            raise ExportError("cannot run %s on a %s input: %s"
                              % (name, input_shape, str(e).strip().splitlines()[0]))
        L = Lowering(gm)
        L.run()
        out_shape = L.shapes[L.output]
        if L.output == L.input or L.output in L.consts or len(out_shape) != 2 \
                or out_shape[0] != 1:
            raise ExportError("the model's output has shape %s; camclass needs [1, classes] "
                              "computed from the input" % out_shape)
        fold_batchnorm(L)
        fuse_activations(L)
        kind = "probabilities" if L.nodes[-1].op == "softmax" else "logits"
        rename_tensor(L, L.output, kind)
        if labels is None:
            labels = imagenet_labels() if out_shape[1] == 1000 else None
            labels = labels or ["class_%d" % i for i in range(out_shape[1])]
        check_labels(labels, out_shape[1])
        manifest, consts, blob = build_manifest(L, name, labels, color, mean, std, resize)
        rel_err = verify(module, manifest, consts)
    finally:
        module.train(was_training)
    write_bundle(out_path, manifest, blob, labels)
    return {"nodes": len(manifest["graph"]), "tensors": len(manifest["tensors"]),
            "weight_bytes": len(blob), "classes": out_shape[1], "verify_rel_err": rel_err}


def randomize(model, seed):
    """Seeded random BatchNorm statistics and affine parameters (so that folding is really
    exercised: identity statistics would hide most folding bugs)."""
    g = torch.Generator().manual_seed(seed)

    def u(shape, lo, hi):
        return torch.rand(shape, generator=g) * (hi - lo) + lo

    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                c = m.num_features
                if m.running_mean is not None:
                    m.running_mean.copy_(u(c, -0.5, 0.5))
                    m.running_var.copy_(u(c, 0.5, 2.0))
                if m.affine:
                    # chosen so that ~1-5% of mobilenet_v2's ReLU6 outputs reach 6 (upper
                    # clamp exercised) and activations neither vanish nor explode
                    m.weight.copy_(u(c, 0.75, 2.0))
                    m.bias.copy_(u(c, -0.25, 0.5))
            elif isinstance(m, (nn.Conv2d, nn.Linear)) and m.bias is not None:
                m.bias.copy_(u(m.bias.shape, -0.1, 0.1))


def build_torchvision_model(model_name, num_classes=1000, weights=None, random_seed=None):
    """A torchvision classifier by name, in eval mode: with the state_dict file `weights`,
    or seeded random weights (torchvision's own init under torch.manual_seed(random_seed),
    then randomize()). Same arguments, same module, in any process."""
    import torchvision
    ctor = getattr(torchvision.models, model_name, None)
    if ctor is None or not callable(ctor) or model_name.startswith("_"):
        raise ExportError("unknown torchvision model %r" % model_name)
    if random_seed is not None:
        torch.manual_seed(random_seed)
    try:
        model = ctor(weights=None, num_classes=num_classes)
    except TypeError as e:
        raise ExportError("cannot build %s: %s" % (model_name, e))
    if weights is not None:
        _load_state_dict(model, weights)
    elif random_seed is not None:
        randomize(model, random_seed)
    return model.eval()


def _load_state_dict(model, weights):
    try:
        state = torch.load(weights, map_location="cpu")
        model.load_state_dict(state.get("state_dict", state))
    except Exception as e:
        msg = str(e).strip().splitlines()
        raise ExportError("cannot load %s into %s: %s"
                          % (weights, type(model).__name__, msg[0] if msg else type(e).__name__))


def build_user_module(spec, weights=None, random_seed=None):
    """FILE.py:CLASS -> an instance (constructed without arguments), eval mode."""
    import importlib.util
    path, _, cls = spec.rpartition(":")
    if not path or not cls:
        raise ExportError("--module %s: use FILE.py:CLASS" % spec)
    try:
        mod_spec = importlib.util.spec_from_file_location("camclass_user_module", path)
        mod = importlib.util.module_from_spec(mod_spec)
        mod_spec.loader.exec_module(mod)
    except (OSError, SyntaxError, ImportError) as e:
        raise ExportError("cannot load %s: %s" % (path, e))
    ctor = getattr(mod, cls, None)
    if ctor is None:
        raise ExportError("%s has no %s" % (path, cls))
    if random_seed is not None:
        torch.manual_seed(random_seed)
    model = ctor()
    if not isinstance(model, nn.Module):
        raise ExportError("%s:%s is not an nn.Module" % (path, cls))
    if weights is not None:
        _load_state_dict(model, weights)
    elif random_seed is not None:
        randomize(model, random_seed)
    return model.eval()


def _parse_resize(s):
    if s == "squash":
        return ("squash", None)
    m = re.fullmatch(r"center_crop:(\d+)", s)
    if not m:
        raise argparse.ArgumentTypeError("use squash or center_crop:SIZE")
    return ("center_crop", int(m.group(1)))


def main(argv=None):
    p = argparse.ArgumentParser(description="Export a PyTorch classifier to a camclass bundle.")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--model", help="torchvision model name, e.g. mobilenet_v2")
    what.add_argument("--module", metavar="FILE.py:CLASS",
                      help="your own nn.Module class, constructed without arguments")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--weights", help="state_dict .pth file (torchvision's format)")
    src.add_argument("--random-seed", type=int, help="seeded random weights and BN statistics")
    cls = p.add_mutually_exclusive_group()
    cls.add_argument("--labels", help="labels.txt, one class name per line")
    cls.add_argument("--num-classes", type=int, help="number of classes (default 1000)")
    p.add_argument("--name", help="model name in the bundle (default: --model)")
    p.add_argument("--input-size", type=int, default=224, help="square input side (224)")
    p.add_argument("--resize", type=_parse_resize, default=None,
                   help="squash or center_crop:SIZE (default center_crop:256 for 224)")
    p.add_argument("--mean", type=float, nargs=3, default=IMAGENET_MEAN)
    p.add_argument("--std", type=float, nargs=3, default=IMAGENET_STD)
    p.add_argument("--color", choices=("RGB", "BGR"), default="RGB")
    p.add_argument("--threads", type=int, default=1, help="torch threads (1)")
    p.add_argument("-o", "--output", required=True, help="bundle to write (.ccm)")
    args = p.parse_args(argv)
    torch.set_num_threads(max(1, args.threads))
    prog = "camclass_export"
    try:
        labels = None
        num_classes = args.num_classes or 1000
        if args.labels:
            with open(args.labels, encoding="utf-8") as f:
                labels = f.read().replace("\r\n", "\n").rstrip("\n").split("\n")
            num_classes = len(labels)
        resize = args.resize or ("center_crop", args.input_size * 256 // 224)
        if args.model:
            model = build_torchvision_model(args.model, num_classes, args.weights,
                                            args.random_seed)
        else:
            model = build_user_module(args.module, args.weights, args.random_seed)
        info = export_module(model, args.output, (1, 3, args.input_size, args.input_size),
                             labels, args.name or args.model or type(model).__name__,
                             args.color, args.mean, args.std, resize)
    except (ExportError, OSError) as e:
        print("%s: error: %s" % (prog, e), file=sys.stderr)
        return 1
    print("%s: wrote %s: %d nodes, %d tensors, %.1f MB of weights, %d classes; fused graph "
          "matches PyTorch within %.2g x max|output|"
          % (prog, args.output, info["nodes"], info["tensors"], info["weight_bytes"] / 1e6,
             info["classes"], info["verify_rel_err"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
