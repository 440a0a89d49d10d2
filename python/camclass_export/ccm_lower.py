"""camclass exporter, part 1: torch.fx graph -> bundle ops (used by export.py).

Each fx node is lowered through a table (module type / function / method name -> handler) to a
small graph of bundle ops plus the temporary op `batchnorm`; activations become `clamp` nodes.
fold_batchnorm() then folds every BatchNorm2d into the convolution before it (or turns it into
a depthwise 1x1 convolution when there is none) and fuse_activations() merges each clamp into
the conv2d/linear/add/mul/clamp producing its input (those passes, and the graph itself, are
ccm_graph's: torch-free). Adding an op is adding a handler and a row.

Every unsupported op is collected (with its source line) and reported together at the end, so
that a user sees the whole list at once; what depends only on an unsupported op's result is not
reported again.
"""

import operator
import os
import re

import numpy as np
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F
import torchvision.ops
from torch.fx.node import _get_qualified_name

from .ccm_graph import ExportError, Graph, Node


# ---------------------------------------------------------------------------------------------
# Source locations for messages
# ---------------------------------------------------------------------------------------------

_FRAME_RE = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)\s*$')
_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep  # torch's own frames are never the user's


def where(n):
    """'file.py:12 in forward `y = torch.sigmoid(x)` (fx node sigmoid, module act)'."""
    extra = "fx node %s" % n.name
    if n.op == "call_module":
        extra += ", module %s" % n.target
    lines = (n.stack_trace or "").splitlines()
    # torch 1.13 records the innermost frame first; the first frame outside torch itself is
    # the user's line.
    for i, line in enumerate(lines):
        m = _FRAME_RE.match(line)
        if m and not m.group(1).startswith(_TORCH_DIR):
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


class _Unsupported:
    """The value of an fx node that could not be lowered (already reported)."""


class _DependsOnUnsupported(Exception):
    """Raised when a handler reads the value of an unsupported node: skip, do not report."""


class _Param:
    """The value of a get_attr node: a parameter or buffer read directly in forward()."""

    def __init__(self, target):
        self.target = target


class ShuffleView:
    """x [1,C,H,W] viewed as [1,g,C/g,H,W] (transposed: dims 1 and 2 swapped): the middle of
    ShuffleNet's view-transpose-view channel shuffle, which bundles (at most 4-D) hold as one
    channel_shuffle op."""

    def __init__(self, x, groups, transposed=False):
        self.x, self.groups, self.transposed = x, groups, transposed


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


class Lowering(Graph):
    def __init__(self, gm):
        super().__init__()
        self.gm = gm
        self.value = {}  # fx node -> tensor name, or None for a non-tensor value (x.size())
        self.errors = []  # one line per unsupported op

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
        v = self.value.get(arg) if isinstance(arg, torch.fx.Node) else None
        if isinstance(v, str):
            return v
        if isinstance(v, _Unsupported):
            raise _DependsOnUnsupported()
        if isinstance(v, _Param):
            self.fail(n, "reads a parameter directly; camclass takes weights only inside "
                      "Conv2d, Linear and BatchNorm2d modules")
        if isinstance(v, ShuffleView):
            self.fail(n, "reads a 5-d view; camclass takes one only as ShuffleNet's channel "
                      "shuffle, x.view(1, g, C/g, H, W).transpose(1, 2).reshape(1, C, H, W)")
        self.fail(n, "takes %r where camclass needs a tensor computed by the graph" % (arg,))

    def is_tensor(self, arg):
        return isinstance(arg, torch.fx.Node) and isinstance(self.value.get(arg), str)

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
                if not self.errors:  # else the output may depend on an unsupported op
                    self.output = self.tensor(n, n.args[0])
            elif n.op == "get_attr":
                self.value[n] = _Param(n.target)
            else:
                self.value[n] = self._lower_one(n)
        if self.errors:
            raise ExportError(self.report())

    def report(self):
        """Every problem once, with where it first occurs and how many more places have it."""
        kinds = {}  # "unsupported op X" -> [first location, count]
        for e in self.errors:
            what, _, loc = e.partition(" at ")
            kinds.setdefault(what, [loc, 0])[1] += 1
        lines = ["%s at %s%s" % (what, loc, " (and %d more)" % (count - 1) if count > 1 else "")
                 for what, (loc, count) in kinds.items()]
        return "%d kind%s of op that camclass cannot export (nothing written):\n  %s" % (
            len(lines), "" if len(lines) == 1 else "s", "\n  ".join(lines))

    def _lower_one(self, n):
        """n's value; an unsupported op is recorded in self.errors (and its value marked)."""
        h = self.handler(n)
        try:
            if h is None:
                raise ExportError("unsupported op %s at %s" % (op_name(self.gm, n), where(n)))
            return h(self, n)
        except _DependsOnUnsupported:
            return _Unsupported()
        except ExportError as e:
            self.errors.append(str(e))
            return _Unsupported()


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


def _act_function(kind):
    """sigmoid, hardsigmoid, hardswish, silu: a clamp node carrying a function activation."""
    def handle(L, n):
        node = L.emit(n, "clamp", [L.tensor(n, n.args[0])])
        L.nodes[-1].act = kind
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
    if isinstance(L.value.get(n.args[0]), ShuffleView):  # .contiguous() inside a shuffle
        return L.value[n.args[0]]
    return L.tensor(n, n.args[0])


def _stochastic_depth_function(L, n):
    a = bind(n, [("input", _REQUIRED), ("p", _REQUIRED), ("mode", _REQUIRED),
                 ("training", True)])
    if a["training"] is not False:
        L.fail(n, "runs in training mode (pass training=self.training)")
    return L.tensor(n, a["input"])


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


def _pair(v):
    return [int(v[0]), int(v[1])] if isinstance(v, (list, tuple)) else [int(v), int(v)]


def _adaptive_avg_pool(L, n, size):
    """To 1x1: global_avg_pool; to the input's own size: nothing; to a size that divides the
    input's: avg_pool2d with kernel = stride = input / output (the windows are then equal)."""
    x = L.tensor(n, n.args[0])
    if len(L.shapes[x]) != 4:
        L.fail(n, "pools a %s tensor; camclass pools [1,C,H,W]" % L.shapes[x])
    h, w = L.shapes[x][2:]
    oh, ow = _pair(size)
    oh, ow = oh or h, ow or w  # None keeps that dimension
    if (oh, ow) == (1, 1):
        return _global_avg_pool(L, n, x, keepdim=True)
    if (oh, ow) == (h, w):
        return x
    if h % oh or w % ow:
        L.fail(n, "to %dx%d from %dx%d is not supported (the output size must divide the "
               "input size)" % (oh, ow, h, w))
    k = [h // oh, w // ow]
    return L.emit(n, "avg_pool2d", [x], {"kernel": k, "stride": k, "padding": [0, 0, 0, 0]})


def _pool(L, n, is_max, a):
    """max_pool2d / avg_pool2d from bound arguments (PyTorch's names)."""
    x = L.tensor(n, a["input"])
    if len(L.shapes[x]) != 4:
        L.fail(n, "pools a %s tensor; camclass pools [1,C,H,W]" % L.shapes[x])
    k = _pair(a["kernel_size"])
    stride = _pair(a["stride"]) if a["stride"] not in (None, [], ()) else k
    pad = _pair(a["padding"])
    if is_max and _pair(a.get("dilation", 1)) != [1, 1]:
        L.fail(n, "with dilation %r is not supported" % (a["dilation"],))
    if is_max and a.get("return_indices"):
        L.fail(n, "with return_indices=True is not supported")
    if not is_max and a.get("divisor_override") is not None:
        L.fail(n, "with divisor_override is not supported")
    attrs = {"kernel": k, "stride": stride, "padding": [pad[0], pad[1], pad[0], pad[1]],
             "ceil_mode": bool(a["ceil_mode"])}
    if not is_max:
        attrs["count_include_pad"] = bool(a["count_include_pad"])
    return L.emit(n, "max_pool2d" if is_max else "avg_pool2d", [x], attrs)


_MAX_POOL_ARGS = [("input", _REQUIRED), ("kernel_size", _REQUIRED), ("stride", None),
                  ("padding", 0), ("dilation", 1), ("ceil_mode", False),
                  ("return_indices", False)]
_AVG_POOL_ARGS = [("input", _REQUIRED), ("kernel_size", _REQUIRED), ("stride", None),
                  ("padding", 0), ("ceil_mode", False), ("count_include_pad", True),
                  ("divisor_override", None)]


def _max_pool_module(L, n):
    m = L.gm.get_submodule(n.target)
    return _pool(L, n, True, {"input": n.args[0], "kernel_size": m.kernel_size,
                              "stride": m.stride, "padding": m.padding,
                              "dilation": m.dilation, "ceil_mode": m.ceil_mode,
                              "return_indices": m.return_indices})


def _avg_pool_module(L, n):
    m = L.gm.get_submodule(n.target)
    return _pool(L, n, False, {"input": n.args[0], "kernel_size": m.kernel_size,
                               "stride": m.stride, "padding": m.padding,
                               "ceil_mode": m.ceil_mode,
                               "count_include_pad": m.count_include_pad,
                               "divisor_override": m.divisor_override})


def _max_pool_function(L, n):
    return _pool(L, n, True, bind(n, _MAX_POOL_ARGS))


def _avg_pool_function(L, n):
    return _pool(L, n, False, bind(n, _AVG_POOL_ARGS))


def _channel_dim(L, n, x, dim):
    """dim as the channel axis (1) of x, which must be [1,C,H,W] or [1,C]; fails otherwise."""
    rank = len(L.shapes[x])
    if rank not in (2, 4) or L.shapes[x][0] != 1 or dim is None or dim % rank != 1:
        L.fail(n, "along dim %r of a %s tensor is not supported (only the channels, dim 1, of "
               "[1,C,H,W] or [1,C])" % (dim, L.shapes[x]))


def _cat(L, n):
    a = bind(n, [("tensors", _REQUIRED), ("dim", 0)])
    xs = [L.tensor(n, t) for t in a["tensors"]]
    for x in xs:
        _channel_dim(L, n, x, a["dim"])
    if len(xs) == 1:
        return xs[0]
    if len(xs) > 64:
        L.fail(n, "of %d tensors is not supported (at most 64)" % len(xs))
    return L.emit(n, "concat", xs)


def _split_sizes(L, n, c, how, chunks):
    if chunks:  # torch.chunk: ceil(C / chunks) each, the last one what is left
        size = -(-c // int(how))
        return [min(size, c - i) for i in range(0, c, size)]
    if isinstance(how, int):
        return [min(how, c - i) for i in range(0, c, how)]
    if sum(how) != c:
        L.fail(n, "into %r does not add up to the %d channels" % (how, c))
    return list(how)


def _split(chunks):
    """chunk / split along the channels: one slice node per piece (unused ones are pruned);
    the value is the list of pieces, taken apart by getitem."""
    def handle(L, n):
        a = bind(n, [("input", _REQUIRED), ("how", _REQUIRED), ("dim", 0)])
        x = L.tensor(n, a["input"])
        _channel_dim(L, n, x, a["dim"])
        shape = L.shapes[x]
        pieces, start = [], 0
        for i, size in enumerate(_split_sizes(L, n, shape[1], a["how"], chunks)):
            piece = shape[:1] + [size] + shape[2:]
            pieces.append(L.emit(n, "slice", [x], {"start": start, "end": start + size},
                                 name="%s.%d" % (n.name, i), shape=piece))
            start += size
        return pieces
    return handle


def _mul(L, n):
    a = bind(n, [("input", _REQUIRED), ("other", _REQUIRED)])
    if not L.is_tensor(a["input"]) and not L.is_tensor(a["other"]):
        return _shape_arith(L, n)  # arithmetic on sizes
    x, y = L.tensor(n, a["input"]), L.tensor(n, a["other"])
    sx, sy = L.shapes[x], L.shapes[y]
    if sx != sy and len(sy) == 4 and sy[2:] == [1, 1] and sx[2:] != [1, 1]:
        pass
    elif sx != sy and len(sx) == 4 and sx[2:] == [1, 1] and sy[2:] != [1, 1]:
        x, y = y, x  # the per-channel scale second, as the format wants
    elif sx != sy:
        L.fail(n, "of shapes %s and %s is not supported (same shape, or [1,C,H,W] by "
               "[1,C,1,1])" % (sx, sy))
    return L.emit(n, "mul", [x, y])


def _shape_arith(L, n):
    """+, //, * on Python values (sizes): no tensor involved."""
    for arg in n.args:
        v = L.value.get(arg) if isinstance(arg, torch.fx.Node) else None
        if isinstance(v, (_Unsupported, _Param)):
            L.tensor(n, arg)  # raises: skipped, or the parameter named
        if v is not None:
            L.fail(n, "on a tensor is not supported")
    return None


def _transpose(L, n):
    a = bind(n, [("input", _REQUIRED), ("dim0", _REQUIRED), ("dim1", _REQUIRED)])
    v = L.value.get(a["input"])
    if isinstance(v, ShuffleView) and not v.transposed and \
            sorted([a["dim0"] % 5, a["dim1"] % 5]) == [1, 2]:
        return ShuffleView(v.x, v.groups, transposed=True)
    if isinstance(v, _Unsupported):
        raise _DependsOnUnsupported()
    L.fail(n, "is supported only inside ShuffleNet's channel shuffle (x.view(1, g, C/g, H, W)"
           ".transpose(1, 2))")


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
    """flatten / view / reshape / squeeze / unsqueeze: only the resulting shape matters.
    [1,C,H,W] -> [1,g,C/g,H,W] and, after transpose(1, 2), back to [1,C,H,W] is ShuffleNet's
    channel shuffle (ShuffleView)."""
    v = L.value.get(n.args[0])
    meta = n.meta.get("tensor_meta")
    out = [int(d) for d in meta.shape] if meta is not None and hasattr(meta, "shape") else None
    if isinstance(v, ShuffleView):
        c = L.shapes[v.x][1]
        if v.transposed and out == L.shapes[v.x]:
            return L.emit(n, "channel_shuffle", [v.x], {"groups": v.groups}, shape=out)
        L.fail(n, "of a 5-d view is supported only as the end of ShuffleNet's channel shuffle "
               "(back to [1,%d,H,W] after transpose(1, 2))" % c)
    if isinstance(v, str) and out is not None and len(out) == 5:
        s4 = L.shapes[v]
        if len(s4) == 4 and out[0] == 1 and out[1] * out[2] == s4[1] and out[3:] == s4[2:]:
            return ShuffleView(v, out[1])
        L.fail(n, "to the 5-d shape %s is supported only as ShuffleNet's channel shuffle view "
               "[1,g,C/g,H,W]" % out)
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
    if not L.is_tensor(a["input"]) and not L.is_tensor(a["other"]):
        return _shape_arith(L, n)  # arithmetic on sizes
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


def _getitem(L, n):
    """pieces[i] of a chunk/split; else a shape query."""
    v = L.value.get(n.args[0])
    if isinstance(v, list) and isinstance(n.args[1], int):
        return v[n.args[1]]
    if isinstance(v, _Unsupported):
        raise _DependsOnUnsupported()
    return _shape_query(L, n)


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
    nn.MaxPool2d: _max_pool_module,
    nn.AvgPool2d: _avg_pool_module,
    nn.Sigmoid: _act_function("sigmoid"),
    nn.Hardsigmoid: _act_function("hardsigmoid"),
    nn.Hardswish: _act_function("hardswish"),
    nn.SiLU: _act_function("silu"),
    nn.BatchNorm2d: _batchnorm2d_module,
    nn.Linear: _linear_module,
    nn.ReLU: _activation(0.0, None),
    nn.Hardtanh: _hardtanh_module,  # also nn.ReLU6 (a Hardtanh subclass)
    nn.modules.dropout._DropoutNd: _passthrough,  # eval mode: identity
    torchvision.ops.StochasticDepth: _passthrough,  # eval mode: identity
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
    torchvision.ops.stochastic_depth: _stochastic_depth_function,
    F.adaptive_avg_pool2d: _adaptive_avg_pool_function,
    F.max_pool2d: _max_pool_function,
    torch.max_pool2d: _max_pool_function,
    F.avg_pool2d: _avg_pool_function,
    torch.sigmoid: _act_function("sigmoid"),
    F.sigmoid: _act_function("sigmoid"),
    F.hardsigmoid: _act_function("hardsigmoid"),
    F.hardswish: _act_function("hardswish"),
    F.silu: _act_function("silu"),
    torch.cat: _cat,
    torch.concat: _cat,
    torch.chunk: _split(chunks=True),
    torch.split: _split(chunks=False),
    torch.transpose: _transpose,
    operator.mul: _mul,
    operator.imul: _mul,
    torch.mul: _mul,
    operator.floordiv: _shape_arith,
    operator.sub: _shape_arith,
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
    operator.getitem: _getitem,
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
    "mul": _mul,
    "mul_": _mul,
    "sigmoid": _act_function("sigmoid"),
    "chunk": _split(chunks=True),
    "split": _split(chunks=False),
    "transpose": _transpose,
    "softmax": _softmax_function,
    "size": _shape_query,
    "dim": _shape_query,
}
