"""camclass exporter, part 1: torch.fx graph -> bundle ops (used by camclass_export.py).

Each fx node is lowered through a table (module type / function / method name -> handler) to a
small graph of bundle ops plus the temporary op `batchnorm`; activations become `clamp` nodes.
fold_batchnorm() then folds every BatchNorm2d into the convolution before it (or turns it into
a depthwise 1x1 convolution when there is none) and fuse_activations() merges each clamp into
the conv2d/linear/add/clamp producing its input. Adding an op is adding a handler and a row.
"""

import operator
import os
import re

import numpy as np
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.node import _get_qualified_name

import ccm_bundle


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
    if shape == L.shapes[x]:
        return x
    if shape == [1, count]:
        return L.emit(n, "flatten", [x])
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
            uses[conv.output] = uses.get(node.output, 0)  # the conv's output now has the BN's users
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
            uses[prev.output] = uses.get(node.output, 0)  # prev's output now has the clamp's users
            continue
        kept.append(node)
    L.nodes = kept


def prune_dead(L):
    """Drops nodes whose result nothing uses (e.g. a value computed and ignored in forward)."""
    live = {L.output}
    kept = []
    for node in reversed(L.nodes):
        if node.output in live:
            live.update(node.inputs)
            kept.append(node)
    L.nodes = kept[::-1]
    for name in [c for c in L.consts if c not in live]:
        del L.consts[name]


def rename_tensor(L, old, new):
    for node in L.nodes:
        if node.output == old:
            node.output = new
    L.shapes[new] = L.shapes.pop(old)
    _replace_uses(L, old, new)
