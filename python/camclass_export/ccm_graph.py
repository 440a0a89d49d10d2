"""The exporter's graph without PyTorch: the intermediate graph (Node, Graph) that every front end
builds, and the passes run on it before it is written (dead nodes dropped, BatchNorm folded into
the convolution before it, activations fused, input normalization folded). numpy only: used by
ccm_lower (torch.fx), ccm_onnx and mobilenet_v2_builder (camclass-fetch-imagenet, no PyTorch).
"""

import numpy as np

from . import ccm_format


class ExportError(Exception):
    """An export that cannot be done; the message is one line for the user."""


# ---------------------------------------------------------------------------------------------
# Intermediate graph
# ---------------------------------------------------------------------------------------------

class Node:
    """One op of the graph being built. op is a bundle op name or, before the passes run,
    "batchnorm"; act is the fused activation: a (min, max) clamp range (None = open side) or
    the name of a function activation ("sigmoid", "hardsigmoid", "hardswish", "silu")."""

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
    if isinstance(act, str):
        return {"activation": act}
    lo, hi = act
    if lo is None and hi is None:
        return {}
    if lo == 0.0 and hi is None:
        return {"activation": "relu"}
    if lo == 0.0 and hi == 6.0:
        return {"activation": "relu6"}
    big = ccm_format.F32_MAX
    return {"activation": "clamp",
            "clamp_min": -big if lo is None else float(lo),
            "clamp_max": big if hi is None else float(hi)}


class Graph:
    """A graph being built: Nodes in execution order, their constants (float64, cast to f32
    when written) and every tensor's shape. The front ends (ccm_lower's torch.fx Lowering,
    ccm_onnx, mobilenet_v2_builder) fill one; the passes below and ccm_write read it."""

    def __init__(self):
        self.nodes = []
        self.consts = {}  # name -> float64 ndarray (cast to f32 when written)
        self.shapes = {}  # tensor name -> list of ints
        self.input = None
        self.output = None
        self._names = set()

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


def fold_input_normalization(L, mean, std):
    """Per-channel arithmetic on the model's input, as models that normalize their own input
    begin ((x - m) / s written as add/mul by constants: ONNX files often do), folded into the
    bundle's preprocessing. camclass feeds (p - mean) / std per channel, so that + a is
    (p - (mean - a*std)) / std and that * k (k > 0) is (p - mean) / (std / k): the nodes go,
    their work is done by the normalization camclass does anyway, and a backend without a
    kernel for a constant operand (Vulkan) does not have to hand them to the CPU. A node with a
    fused activation, a non-positive scale or a constant that varies over H, W stays. Returns
    (mean, std, count folded)."""
    mean, std = [float(v) for v in mean], [float(v) for v in std]
    folded = 0
    while True:
        users = [node for node in L.nodes if L.input in node.inputs]
        if len(users) != 1 or L.output == L.input:
            break
        node = users[0]
        if node.op not in ("add", "mul") or node.act != (None, None) \
                or node.inputs.count(L.input) != 1:
            break
        k = node.inputs[1] if node.inputs[0] == L.input else node.inputs[0]
        if k not in L.consts:
            break
        shape = L.shapes[L.input]
        try:
            c = np.broadcast_to(L.consts[k], shape)
        except ValueError:
            break
        per = np.array(c[0, :, 0, 0], dtype=np.float64)
        if not np.array_equal(np.broadcast_to(per.reshape(1, -1, 1, 1), shape), c) \
                or (node.op == "mul" and np.any(per <= 0)):
            break
        if node.op == "add":
            mean = [m - a * s for m, a, s in zip(mean, per, std)]
        else:
            std = [s / v for s, v in zip(std, per)]
        L.nodes.remove(node)
        _replace_uses(L, node.output, L.input)
        folded += 1
    prune_dead(L)
    return mean, std, folded


FUSES_ACTIVATION = ("conv2d", "linear", "add", "mul", "clamp")


def _fusable(first, then):
    """Whether activation `then` applied after `first` is one activation: two clamps are; a
    function activation is only after no activation at all."""
    if isinstance(first, str):
        return False
    return not isinstance(then, str) or first == (None, None)


def fuse_activations(L):
    """A clamp whose input comes from a conv2d/linear/add/mul/clamp used by nothing else is
    merged into that node's activation, where the two make one activation."""
    uses = _uses(L)
    producer = {node.output: node for node in L.nodes}
    kept = []
    for node in L.nodes:
        prev = producer.get(node.inputs[0])
        if node.op == "clamp" and prev is not None and prev.op in FUSES_ACTIVATION \
                and uses[node.inputs[0]] == 1 and _fusable(prev.act, node.act):
            prev.act = node.act if isinstance(node.act, str) else compose_act(prev.act, node.act)
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


def finish_lowering(L):
    """The passes every front end (torch.fx, ONNX) runs on its lowering: dead nodes dropped,
    BatchNorm folded, activations fused, the output named logits/probabilities."""
    out_shape = L.shapes[L.output]
    if L.output == L.input or L.output in L.consts or len(out_shape) != 2 or out_shape[0] != 1:
        raise ExportError("the model's output has shape %s; camclass needs [1, classes] "
                          "computed from the input" % out_shape)
    prune_dead(L)
    fold_batchnorm(L)
    fuse_activations(L)
    rename_tensor(L, L.output, "probabilities" if L.nodes[-1].op == "softmax" else "logits")
