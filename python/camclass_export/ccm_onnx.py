"""camclass exporter, ONNX front end: an ONNX graph -> bundle ops (export.py --onnx).

The ONNX counterpart of ccm_lower.Lowering: each ONNX node is lowered through a table (op_type
-> handler) to the same intermediate Nodes, so that the same passes run afterwards (BatchNorm
folded into the convolution before it, activations fused, dead nodes pruned) and the same
manifest writer, limits and checks apply. Shapes come from ONNX's shape inference, with a
symbolic batch taken as 1 and a symbolic image size given by the caller.

Values that only compute shapes (Shape, Gather, Unsqueeze, Concat, arithmetic on constants, as
torch.onnx.export writes for x.size() and chunk) are folded with numpy while lowering; only
tensors computed from the image become bundle tensors. x * sigmoid(x) and x * hardsigmoid(x)
become SiLU and hardswish (opsets before 14 have no HardSwish; none has SiLU).

Every unsupported node is collected and reported at once, with its node name, grouped by kind.
"""

import numpy as np
import onnx
from onnx import numpy_helper

from .ccm_lower import ExportError, Node, ShuffleView

OPSETS = range(11, 18)  # the ONNX opsets this importer is written and tested for


class _Unsupported:
    """The value of a node that could not be lowered (already reported)."""


class _Skip(Exception):
    """A handler read an unsupported node's value: skip, do not report again."""


class _Fail(Exception):
    """One problem with one node (collected; the lowering goes on)."""


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _ints(v):
    return [int(x) for x in v]


class OnnxLowering:
    """Lowers a (shape-inferred) ONNX model. After run(): nodes, consts, shapes, input,
    output, as ccm_lower.Lowering has them."""

    def __init__(self, model, input_size=None):
        self.model = model
        self.input_size = input_size
        self.nodes = []
        self.consts = {}  # bundle constant name -> float64 ndarray
        self.shapes = {}  # bundle tensor name -> list of ints
        self.value = {}  # ONNX value name -> tensor name | np.ndarray (a constant) | other
        self.input = None
        self.output = None
        self.errors = []  # (kind, "node NAME (OpType): why")
        self._names = set()
        self._onnx_shapes = {}

    # -- helpers --

    def fail(self, why):
        raise _Fail(why)

    def unique(self, name):
        base, k = name.replace("/", ".").strip(".") or "node", 1
        name = base
        while name in self._names:
            name = "%s_%d" % (base, k)
            k += 1
        self._names.add(name)
        return name

    def tensor(self, name):
        """The bundle tensor of an ONNX value computed from the image."""
        v = self.value.get(name)
        if isinstance(v, str):
            return v
        if isinstance(v, _Unsupported):
            raise _Skip()
        if isinstance(v, np.ndarray):
            self.fail("takes the constant %r where camclass needs a tensor computed from the "
                      "image" % name)
        if isinstance(v, ShuffleView):
            self.fail("reads a 5-d view; camclass takes one only inside ShuffleNet's channel "
                      "shuffle (Reshape to [1,g,C/g,H,W], Transpose [0,2,1,3,4], Reshape back)")
        self.fail("reads %r, which no node computed" % name)

    def constant(self, name, what):
        """The value of ONNX input `name`, which must be a constant (what: for messages)."""
        v = self.value.get(name)
        if isinstance(v, np.ndarray):
            return v
        if isinstance(v, _Unsupported):
            raise _Skip()
        self.fail("needs %s (input %r) to be a constant (an initializer or Constant)"
                  % (what, name))

    def is_const(self, name):
        return isinstance(self.value.get(name), np.ndarray)

    def shape_of(self, value):
        shape = self._onnx_shapes.get(value)
        if shape is None or any(d is None for d in shape):
            self.fail("its output %r has no static shape (ONNX shape inference could not find "
                      "one)" % value)
        if not 1 <= len(shape) <= 4:
            self.fail("produces a %d-d tensor; bundles hold 1-d to 4-d tensors" % len(shape))
        return list(shape)

    def const(self, name, array):
        """Adds bundle constant `name` (as ccm_lower.Lowering.const: the passes call it)."""
        self.consts[name] = np.asarray(array, dtype=np.float64)
        self.shapes[name] = list(self.consts[name].shape)
        return name

    def emit(self, onnx_node, op, inputs, attrs=None, shape=None, suffix="", name=None):
        """Adds a Node computing onnx_node's output 0 (shape: inferred unless given); named
        after the ONNX node unless the caller claimed a name with unique()."""
        name = name or self.unique((onnx_node.name or onnx_node.op_type) + suffix)
        out = name + ".out"
        self.shapes[out] = shape or self.shape_of(onnx_node.output[0])
        self.nodes.append(Node(op, name, inputs, out, attrs, src=onnx_node))
        return out

    # -- the walk --

    def _prepare(self):
        graph = self.model.graph
        inits = {t.name for t in graph.initializer}
        inputs = [i for i in graph.input if i.name not in inits]
        if len(inputs) != 1:
            raise ExportError("the model has %d inputs (%s); camclass models take one image"
                              % (len(inputs), ", ".join(i.name for i in inputs)))
        if len(graph.output) != 1:
            raise ExportError("the model has %d outputs; camclass models give one [1, classes]"
                              % len(graph.output))
        x = inputs[0]
        if x.type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
            raise ExportError("input %s is %s; camclass takes a float32 NCHW image"
                              % (x.name, onnx.TensorProto.DataType.Name(
                                  x.type.tensor_type.elem_type)))
        dims = x.type.tensor_type.shape.dim
        if len(dims) != 4:
            raise ExportError("input %s has %d dimensions; camclass takes [1, 3, H, W]"
                              % (x.name, len(dims)))
        shape = []
        for i, d in enumerate(dims):
            if d.HasField("dim_value"):
                shape.append(int(d.dim_value))
            elif i == 0:
                shape.append(1)
            elif i >= 2 and self.input_size:
                shape.append(int(self.input_size))
            else:
                raise ExportError("input %s has a symbolic %s (%r); give --input-size"
                                  % (x.name, "channel count" if i == 1 else "image size",
                                     d.dim_param))
        if shape[0] != 1 or shape[1] != 3:
            raise ExportError("input %s has shape %s; camclass takes [1, 3, H, W]"
                              % (x.name, shape))
        for d, v in zip(dims, shape):
            d.Clear()
            d.dim_value = v
        self._onnx_shapes = fold_constants(self.model)
        for t in graph.initializer:
            self.value[t.name] = numpy_helper.to_array(t)
        self.input = "input"
        self.shapes["input"] = shape
        self.value[x.name] = "input"
        self._output_value = graph.output[0].name

    def run(self):
        self._prepare()
        for k, node in enumerate(self.model.graph.node):
            handler = HANDLERS.get(node.op_type)
            where = node.name or "#%d" % k
            try:
                if handler is None:
                    self.fail("is not supported")
                result = handler(self, node)
                outs = result if isinstance(result, list) else [result]
                for name, v in zip(node.output, outs):
                    self.value[name] = v
            except _Skip:
                for name in node.output:
                    self.value[name] = _Unsupported()
            except _Fail as e:
                self.errors.append(("%s %s" % (node.op_type, e), where))
                for name in node.output:
                    self.value[name] = _Unsupported()
        if self.errors:
            raise ExportError(self.report())
        out = self.value.get(self._output_value)
        if not isinstance(out, str):
            raise ExportError("the model's output %s is not computed from the image"
                              % self._output_value)
        self.output = out
        fuse_gates(self)

    def report(self):
        """Each kind of problem once, with the first node that has it and how many more do."""
        kinds = {}
        for what, where in self.errors:
            kinds.setdefault(what, []).append(where)
        lines = ["%s: node %s%s" % (what, where[0], " (and %d more)" % (len(where) - 1)
                                    if len(where) > 1 else "")
                 for what, where in kinds.items()]
        return "%d kind%s of ONNX node that camclass cannot import (nothing written):\n  %s" % (
            len(lines), "" if len(lines) == 1 else "s", "\n  ".join(lines))


# ---------------------------------------------------------------------------------------------
# Handlers: (lowering, onnx node) -> value of output 0 (or a list, one per output)
# ---------------------------------------------------------------------------------------------

def _conv(L, n):
    a = _attrs(n)
    x = L.tensor(n.input[0])
    w = L.constant(n.input[1], "the weight")
    if w.ndim != 4:
        L.fail("has a %d-d weight; camclass convolutions are 2-d" % w.ndim)
    kh, kw = w.shape[2:]
    dil = _ints(a.get("dilations", [1, 1]))
    stride = _ints(a.get("strides", [1, 1]))
    pads = _ints(a.get("pads", [0, 0, 0, 0]))
    auto = a.get("auto_pad", b"NOTSET").decode()
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        h, wd = L.shapes[x][2:]
        pads = []
        for size, k, s, d in ((h, kh, stride[0], dil[0]), (wd, kw, stride[1], dil[1])):
            total = max((-(-size // s) - 1) * s + d * (k - 1) + 1 - size, 0)
            lo = total // 2 if auto == "SAME_UPPER" else total - total // 2
            pads.append((lo, total - lo))
        pads = [pads[0][0], pads[1][0], pads[0][1], pads[1][1]]
    elif auto == "VALID":
        pads = [0, 0, 0, 0]
    name = L.unique(n.name or "conv")
    inputs = [x, L.const(name + ".weight", w)]
    if len(n.input) > 2 and n.input[2]:
        inputs.append(L.const(name + ".bias", L.constant(n.input[2], "the bias")))
    return L.emit(n, "conv2d", inputs, {"stride": stride, "padding": pads, "dilation": dil,
                                        "groups": int(a.get("group", 1))}, name=name)


def _batchnorm(L, n):
    a = _attrs(n)
    x = L.tensor(n.input[0])
    gamma, beta, mean, var = (L.constant(n.input[i], "BatchNormalization's " + what).astype(
        np.float64) for i, what in ((1, "scale"), (2, "bias"), (3, "mean"), (4, "variance")))
    out = L.emit(n, "batchnorm", [x])
    L.nodes[-1].bn = (mean, var, gamma, beta, float(a.get("epsilon", 1e-5)))
    return out


def _act(lo, hi):
    def handle(L, n):
        out = L.emit(n, "clamp", [L.tensor(n.input[0])])
        L.nodes[-1].act = (lo, hi)
        return out
    return handle


def _function(kind):
    def handle(L, n):
        out = L.emit(n, "clamp", [L.tensor(n.input[0])])
        L.nodes[-1].act = kind
        return out
    return handle


def _clip(L, n):
    a = _attrs(n)
    lo, hi = a.get("min"), a.get("max")  # opset < 11: attributes
    if len(n.input) > 1 and n.input[1]:
        lo = float(L.constant(n.input[1], "the minimum"))
    if len(n.input) > 2 and n.input[2]:
        hi = float(L.constant(n.input[2], "the maximum"))
    return _act(None if lo is None else float(lo), None if hi is None else float(hi))(L, n)


def _hardsigmoid(L, n):
    a = _attrs(n)
    alpha, beta = float(a.get("alpha", 0.2)), float(a.get("beta", 0.5))
    if abs(alpha - 1 / 6) > 1e-6 or abs(beta - 0.5) > 1e-6:
        L.fail("with alpha %g, beta %g is not supported (PyTorch's 1/6 and 0.5 only)"
               % (alpha, beta))
    return _function("hardsigmoid")(L, n)


def _numpy_op(fn, tensor_op):
    """Arithmetic: numpy on constants (shape computations), else tensor_op(L, n)."""
    def handle(L, n):
        if all(L.is_const(i) for i in n.input):
            return np.asarray(fn(*[L.value[i] for i in n.input]))
        return tensor_op(L, n)
    return handle


def _by_constant(L, n, x, c, op):
    """Tensor x (ONNX name) `op` ("add" or "mul") the constant array c, broadcast as ONNX does:
    a normalization or scale baked into the model. The constant becomes a bundle constant of
    x's shape, or [1,C,1,1] for a per-channel mul (the bundle's broadcast form). Backends
    without a kernel for a constant operand run the node on the CPU (Vulkan's per-op
    fallback)."""
    t = L.tensor(x)
    shape = L.shapes[t]
    c = np.asarray(c, dtype=np.float64)
    try:
        if list(np.broadcast_shapes(tuple(shape), c.shape)) != shape:
            raise ValueError
    except ValueError:
        L.fail("of a %s tensor and a %s constant would change the tensor's shape (camclass "
               "broadcasts only the constant)" % (shape, list(c.shape)))
    full = np.broadcast_to(c, shape)
    k = full
    if op == "mul" and len(shape) == 4:
        per_channel = full[:, :, :1, :1]
        if np.array_equal(np.broadcast_to(per_channel, shape), full):
            k = per_channel
    name = L.const(L.unique((n.name or n.op_type) + ".k"), np.array(k))
    return L.emit(n, op, [t, name])


def _add(L, n):
    a, b = n.input[0], n.input[1]
    if L.is_const(a) or L.is_const(b):
        x, c = (b, a) if L.is_const(a) else (a, b)
        t = L.tensor(x)
        prod = next((p for p in L.nodes if p.output == t), None)
        bias = np.asarray(L.value[c], dtype=np.float64).reshape(-1)
        if prod is not None and prod.op == "linear" and len(prod.inputs) == 2 and \
                bias.size == L.shapes[t][1]:  # MatMul + Add: the bias of a linear
            prod.inputs.append(L.const(prod.name + ".bias", bias))
            return t
        return _by_constant(L, n, x, L.value[c], "add")
    x, y = L.tensor(a), L.tensor(b)
    if L.shapes[x] != L.shapes[y]:
        L.fail("of shapes %s and %s is not supported (no broadcasting)"
               % (L.shapes[x], L.shapes[y]))
    return L.emit(n, "add", [x, y])


def _sub(L, n):
    a, b = n.input[0], n.input[1]
    if L.is_const(b):  # x - c = x + (-c)
        return _by_constant(L, n, a, -np.asarray(L.value[b], dtype=np.float64), "add")
    L.fail("of a tensor is supported only with a constant subtrahend (x - c)")


def _div(L, n):
    a, b = n.input[0], n.input[1]
    if L.is_const(b):  # x / c = x * (1/c)
        c = np.asarray(L.value[b], dtype=np.float64)
        if not np.all(np.isfinite(c)) or np.any(c == 0):
            L.fail("divides by a constant that holds zero or a non-finite value")
        return _by_constant(L, n, a, 1.0 / c, "mul")
    L.fail("of a tensor is supported only with a constant divisor (x / c)")


def _mul(L, n):
    a, b = n.input[0], n.input[1]
    if L.is_const(a) or L.is_const(b):
        x, c = (b, a) if L.is_const(a) else (a, b)
        return _by_constant(L, n, x, L.value[c], "mul")
    x, y = L.tensor(a), L.tensor(b)
    sx, sy = L.shapes[x], L.shapes[y]
    if sx != sy and len(sx) == 4 and sx[2:] == [1, 1] and sy[2:] != [1, 1]:
        x, y = y, x
    elif sx != sy and not (len(sy) == 4 and sy[2:] == [1, 1] and sy[1] == sx[1]):
        L.fail("of shapes %s and %s is not supported (same shape, or [1,C,H,W] by [1,C,1,1])"
               % (sx, sy))
    return L.emit(n, "mul", [x, y])


def _pool(is_max):
    def handle(L, n):
        a = _attrs(n)
        x = L.tensor(n.input[0])
        if a.get("auto_pad", b"NOTSET").decode() not in ("NOTSET", "VALID"):
            L.fail("with auto_pad %s is not supported" % a["auto_pad"].decode())
        if _ints(a.get("dilations", [1, 1])) != [1, 1]:
            L.fail("with dilations is not supported")
        if len(n.output) > 1 and n.output[1]:
            L.fail("with an indices output is not supported")
        k = _ints(a["kernel_shape"])
        attrs = {"kernel": k, "stride": _ints(a.get("strides", [1, 1])),
                 "padding": _ints(a.get("pads", [0, 0, 0, 0])),
                 "ceil_mode": bool(a.get("ceil_mode", 0))}
        if not is_max:
            attrs["count_include_pad"] = bool(a.get("count_include_pad", 0))
        return L.emit(n, "max_pool2d" if is_max else "avg_pool2d", [x], attrs)
    return handle


def _global_avg_pool(L, n):
    x = L.tensor(n.input[0])
    return L.emit(n, "global_avg_pool", [x], shape=[1, L.shapes[x][1], 1, 1])


def _reduce_mean(L, n):
    a = _attrs(n)
    x = L.tensor(n.input[0])
    axes = a.get("axes")
    if axes is None and len(n.input) > 1:
        axes = L.constant(n.input[1], "the axes")
    rank = len(L.shapes[x])
    if rank != 4 or sorted(int(v) % 4 for v in axes) != [2, 3]:
        L.fail("over axes %s is not supported (only the spatial axes of [1,C,H,W])"
               % list(axes))
    c = L.shapes[x][1]
    if a.get("keepdims", 1):
        return L.emit(n, "global_avg_pool", [x], shape=[1, c, 1, 1])
    pooled = L.emit(n, "global_avg_pool", [x], shape=[1, c, 1, 1], suffix=".pool")
    return L.emit(n, "flatten", [pooled], shape=[1, c])


def _concat(L, n):
    a = _attrs(n)
    if all(L.is_const(i) for i in n.input):
        return np.concatenate([L.value[i] for i in n.input], axis=int(a["axis"]))
    xs = [L.tensor(i) for i in n.input]
    rank = len(L.shapes[xs[0]])
    if rank not in (2, 4) or int(a["axis"]) % rank != 1:
        L.fail("along axis %d is not supported (only the channels)" % a["axis"])
    if len(xs) == 1:
        return xs[0]
    if len(xs) > 64:
        L.fail("of %d tensors is not supported (at most 64)" % len(xs))
    return L.emit(n, "concat", xs)


def _channel_slices(L, n, x, sizes):
    shape = L.shapes[x]
    outs, start = [], 0
    for i, size in enumerate(sizes):
        outs.append(L.emit(n, "slice", [x], {"start": start, "end": start + size},
                           shape=shape[:1] + [size] + shape[2:], suffix=".%d" % i))
        start += size
    return outs


def _split(L, n):
    a = _attrs(n)
    x = L.tensor(n.input[0])
    rank = len(L.shapes[x])
    if int(a.get("axis", 0)) % rank != 1 or rank not in (2, 4):
        L.fail("along axis %d is not supported (only the channels)" % a.get("axis", 0))
    c = L.shapes[x][1]
    if "split" in a:
        sizes = _ints(a["split"])
    elif len(n.input) > 1 and n.input[1]:
        sizes = _ints(L.constant(n.input[1], "the split sizes"))
    else:
        size = -(-c // len(n.output))
        sizes = [min(size, c - i) for i in range(0, c, size)]
    if sum(sizes) != c or len(sizes) != len(n.output):
        L.fail("into %s does not match the %d channels" % (sizes, c))
    return _channel_slices(L, n, x, sizes)


def _slice(L, n):
    a = _attrs(n)
    if len(n.input) > 1:
        starts = _ints(L.constant(n.input[1], "the starts"))
        ends = _ints(L.constant(n.input[2], "the ends"))
        axes = _ints(L.constant(n.input[3], "the axes")) if len(n.input) > 3 and n.input[3] \
            else list(range(len(starts)))
        steps = _ints(L.constant(n.input[4], "the steps")) if len(n.input) > 4 and n.input[4] \
            else [1] * len(starts)
    else:  # opset < 10: attributes
        starts, ends = _ints(a["starts"]), _ints(a["ends"])
        axes, steps = _ints(a.get("axes", range(len(starts)))), [1] * len(starts)
    if L.is_const(n.input[0]):
        v = L.value[n.input[0]]
        index = [slice(None)] * v.ndim
        for s, e, ax, st in zip(starts, ends, axes, steps):
            index[ax] = slice(s, e, st)
        return v[tuple(index)]
    x = L.tensor(n.input[0])
    shape = L.shapes[x]
    if [ax % len(shape) for ax in axes] != [1] or steps != [1]:
        L.fail("along axes %s with steps %s is not supported (a channel range only)"
               % (axes, steps))
    c = shape[1]
    start, end = [max(0, min(c, v + c if v < 0 else v)) for v in (starts[0], ends[0])]
    if start >= end:
        L.fail("selects no channel")
    return L.emit(n, "slice", [x], {"start": start, "end": end},
                  shape=shape[:1] + [end - start] + shape[2:])


def _reshape_like(L, n):
    """Reshape / Flatten / Squeeze / Unsqueeze: the inferred output shape decides; a rank-5
    reshape and its way back are ShuffleNet's channel shuffle."""
    src = n.input[0]
    if L.is_const(src):  # shape arithmetic
        v = L.value[src]
        if n.op_type == "Unsqueeze":
            axes = _attrs(n).get("axes")
            axes = _ints(axes if axes is not None else L.constant(n.input[1], "the axes"))
            for ax in sorted(axes):
                v = np.expand_dims(v, ax)
            return v
        if n.op_type == "Squeeze":
            return np.squeeze(v)
        if n.op_type == "Reshape":
            return v.reshape(_ints(L.constant(n.input[1], "the shape")))
        return v.reshape(v.shape[0], -1)
    out = L._onnx_shapes.get(n.output[0])
    v = L.value.get(src)
    if isinstance(v, ShuffleView):
        if v.transposed and out == L.shapes[v.x]:
            return L.emit(n, "channel_shuffle", [v.x], {"groups": v.groups}, shape=out)
        L.fail("of a 5-d view is supported only as the end of ShuffleNet's channel shuffle")
    x = L.tensor(src)
    if out is not None and len(out) == 5 and None not in out:
        s4 = L.shapes[x]
        if len(s4) == 4 and out[0] == 1 and out[1] * out[2] == s4[1] and out[3:] == s4[2:]:
            return ShuffleView(x, out[1])
        L.fail("to the 5-d shape %s is supported only as ShuffleNet's channel shuffle view"
               % out)
    shape = L.shape_of(n.output[0])
    if shape == L.shapes[x]:
        return x
    if shape == [1, int(np.prod(L.shapes[x]))]:
        return L.emit(n, "flatten", [x])
    return L.emit(n, "reshape", [x])


def _transpose(L, n):
    perm = _ints(_attrs(n).get("perm", []))
    v = L.value.get(n.input[0])
    if isinstance(v, _Unsupported):
        raise _Skip()
    if isinstance(v, ShuffleView) and not v.transposed and perm == [0, 2, 1, 3, 4]:
        return ShuffleView(v.x, v.groups, transposed=True)
    L.fail("with perm %s is supported only inside ShuffleNet's channel shuffle" % perm)


def _gemm(L, n):
    a = _attrs(n)
    x = L.tensor(n.input[0])
    if int(a.get("transA", 0)):
        L.fail("with transA is not supported")
    w = np.asarray(L.constant(n.input[1], "the weight"), dtype=np.float64)
    w = w if int(a.get("transB", 0)) else w.T
    w = w * float(a.get("alpha", 1.0))
    if len(L.shapes[x]) != 2 or w.shape[1] != L.shapes[x][1]:
        L.fail("of %s by a %s weight is not supported ([1,K] by [N,K])"
               % (L.shapes[x], list(w.shape)))
    name = L.unique(n.name or "gemm")
    inputs = [x, L.const(name + ".weight", w)]
    if len(n.input) > 2 and n.input[2]:
        b = np.asarray(L.constant(n.input[2], "the bias"), dtype=np.float64).reshape(-1)
        b = b * float(a.get("beta", 1.0))
        if b.size == 1:
            b = np.full(w.shape[0], float(b[0]))
        inputs.append(L.const(name + ".bias", b))
    return L.emit(n, "linear", inputs, name=name)


def _matmul(L, n):
    x = L.tensor(n.input[0])
    w = np.asarray(L.constant(n.input[1], "the weight"), dtype=np.float64)
    if len(L.shapes[x]) != 2 or w.ndim != 2 or w.shape[0] != L.shapes[x][1]:
        L.fail("of %s by %s is not supported ([1,K] by a constant [K,N])"
               % (L.shapes[x], list(w.shape)))
    name = L.unique(n.name or "matmul")
    return L.emit(n, "linear", [x, L.const(name + ".weight", w.T)], name=name)


def _softmax(L, n):
    x = L.tensor(n.input[0])
    axis = int(_attrs(n).get("axis", -1))
    if len(L.shapes[x]) != 2 or axis % 2 != 1:
        L.fail("over axis %d of a %s tensor is not supported (the last axis of [1, N])"
               % (axis, L.shapes[x]))
    return L.emit(n, "softmax", [x])


def _identity(L, n):
    v = L.value.get(n.input[0])
    if isinstance(v, (np.ndarray, ShuffleView)):
        return v
    return L.tensor(n.input[0])


def _dropout(L, n):
    if len(n.output) > 1 and n.output[1]:
        L.fail("with a mask output is not supported")
    return _identity(L, n)


def _pad(L, n):
    a = _attrs(n)
    pads = _ints(a["pads"]) if "pads" in a else _ints(L.constant(n.input[1], "the pads"))
    if any(pads):
        L.fail("with non-zero pads %s is not supported (pad inside the Conv or pool)" % pads)
    return _identity(L, n)


def _constant(L, n):
    a = _attrs(n)
    if "value" not in a:
        L.fail("without a tensor value is not supported")
    return numpy_helper.to_array(a["value"])


def _shape(L, n):
    return np.array(L.shapes[L.tensor(n.input[0])], dtype=np.int64)


def _gather(L, n):
    data = L.constant(n.input[0], "the data")
    index = L.constant(n.input[1], "the indices")
    return np.take(data, index, axis=int(_attrs(n).get("axis", 0)))


def _cast(L, n):
    return np.asarray(L.constant(n.input[0], "the value"))


HANDLERS = {
    "Conv": _conv,
    "BatchNormalization": _batchnorm,
    "Relu": _act(0.0, None),
    "Clip": _clip,
    "Sigmoid": _function("sigmoid"),
    "HardSigmoid": _hardsigmoid,
    "HardSwish": _function("hardswish"),
    "Add": _numpy_op(np.add, _add),
    "Sub": _numpy_op(np.subtract, _sub),
    "Mul": _numpy_op(np.multiply, _mul),
    "Div": _numpy_op(lambda a, b: a // b if a.dtype.kind in "iu" and b.dtype.kind in "iu"
                     else a / b, _div),
    "MaxPool": _pool(True),
    "AveragePool": _pool(False),
    "GlobalAveragePool": _global_avg_pool,
    "ReduceMean": _reduce_mean,
    "Concat": _concat,
    "Split": _split,
    "Slice": _slice,
    "Reshape": _reshape_like,
    "Flatten": _reshape_like,
    "Squeeze": _reshape_like,
    "Unsqueeze": _reshape_like,
    "Transpose": _transpose,
    "Gemm": _gemm,
    "MatMul": _matmul,
    "Softmax": _softmax,
    "Identity": _identity,
    "Dropout": _dropout,
    "Pad": _pad,
    "Constant": _constant,
    "Shape": _shape,
    "Gather": _gather,
    "Cast": _cast,
}


def _infer(model):
    """{value name: shape (None for an unknown dimension)} by ONNX's shape inference."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception as e:  # onnx raises InferenceError and others
        raise ExportError("ONNX shape inference failed: %s" % str(e).splitlines()[0])
    shapes = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.output) + \
            list(inferred.graph.input):
        t = vi.type.tensor_type
        if t.HasField("shape"):
            shapes[vi.name] = [int(d.dim_value) if d.HasField("dim_value") else None
                               for d in t.shape.dim]
    return shapes


# What fold_constants evaluates: op_type -> f(node attrs, input arrays) -> output array.
_FOLD = {
    "Constant": lambda a, xs: numpy_helper.to_array(a["value"]) if "value" in a else None,
    "Gather": lambda a, xs: np.take(xs[0], xs[1], axis=int(a.get("axis", 0))),
    "Unsqueeze": lambda a, xs: np.reshape(xs[0], _unsqueezed(xs[0].shape,
                                                             a.get("axes", xs[1:2] and xs[1]))),
    "Squeeze": lambda a, xs: np.squeeze(xs[0], axis=tuple(_ints(a.get("axes", xs[1:2] and
                                                                      xs[1]))) or None),
    "Concat": lambda a, xs: np.concatenate([np.atleast_1d(x) for x in xs],
                                           axis=int(a["axis"])),
    "Cast": lambda a, xs: xs[0].astype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[int(a["to"])]),
    "Add": lambda a, xs: xs[0] + xs[1],
    "Sub": lambda a, xs: xs[0] - xs[1],
    "Mul": lambda a, xs: xs[0] * xs[1],
    "Div": lambda a, xs: (xs[0] // xs[1]) if xs[0].dtype.kind in "iu" else xs[0] / xs[1],
    "Reshape": lambda a, xs: np.reshape(xs[0], _ints(xs[1])),
}


def _unsqueezed(shape, axes):
    out = list(shape)
    for ax in sorted(_ints(axes)):
        out.insert(ax % (len(out) + 1), 1)
    return out


def fold_constants(model):
    """Evaluates, with numpy, the nodes that compute shapes rather than images (Shape of a
    tensor whose shape is known, then Gather, Unsqueeze, Concat, arithmetic on constants, as
    torch.onnx.export writes for x.size() and chunk) and puts their results in the graph as
    initializers, repeating with fresh shape inference until nothing changes: a Reshape whose
    shape was computed then gets a static output shape. Returns the final inferred shapes."""
    graph = model.graph
    for _ in range(32):
        shapes = _infer(model)
        known = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        kept, changed = [], False
        for node in graph.node:
            value = None
            if node.op_type == "Shape" and None not in shapes.get(node.input[0], [None]):
                value = np.array(shapes[node.input[0]], dtype=np.int64)
            elif node.op_type in _FOLD and all(i in known for i in node.input if i):
                try:
                    value = _FOLD[node.op_type](_attrs(node), [known[i] for i in node.input
                                                               if i])
                except (ValueError, IndexError, KeyError, TypeError):
                    value = None  # left for the lowering to report
            if value is None or len(node.output) != 1:
                kept.append(node)
                continue
            value = np.asarray(value)
            known[node.output[0]] = value
            graph.initializer.append(numpy_helper.from_array(value, node.output[0]))
            changed = True
        if not changed:
            return shapes
        del graph.node[:]
        graph.node.extend(kept)
    return _infer(model)


def fuse_gates(L):
    """x * sigmoid(x) -> silu(x) and x * hardsigmoid(x) -> hardswish(x): a mul whose operands
    are a tensor and a clamp node computing that function of the same tensor, used only
    there, becomes one activation node."""
    gates = {"sigmoid": "silu", "hardsigmoid": "hardswish"}
    producer = {node.output: node for node in L.nodes}
    uses = {}
    for node in L.nodes:
        for t in node.inputs:
            uses[t] = uses.get(t, 0) + 1
    uses[L.output] = uses.get(L.output, 0) + 1
    dead = set()
    for node in L.nodes:
        if node.op != "mul" or node.act != (None, None):
            continue
        for gate_in, other in ((node.inputs[1], node.inputs[0]), (node.inputs[0], node.inputs[1])):
            g = producer.get(gate_in)
            if g is not None and g.op == "clamp" and g.act in gates and g.inputs[0] == other \
                    and uses[gate_in] == 1 and L.shapes[gate_in] == L.shapes[other]:
                node.op, node.inputs, node.act = "clamp", [other], gates[g.act]
                dead.add(id(g))
                break
    L.nodes = [node for node in L.nodes if id(node) not in dead]


def load(path):
    """The ONNX model at path, checked; ExportError when it is not one or its opset is not
    11-17."""
    try:
        model = onnx.load(path)
        onnx.checker.check_model(model)
    except Exception as e:  # protobuf DecodeError, ValidationError, OSError
        msg = str(e).strip().splitlines()
        raise ExportError("%s is not a valid ONNX model: %s" % (path, msg[0] if msg else
                                                               type(e).__name__))
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None or opset not in OPSETS:
        raise ExportError("%s uses ONNX opset %s; camclass imports opsets %d to %d (re-export "
                          "it, e.g. torch.onnx.export(..., opset_version=13))"
                          % (path, opset, OPSETS[0], OPSETS[-1]))
    return model
