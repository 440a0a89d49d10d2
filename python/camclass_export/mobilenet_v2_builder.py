"""torchvision's mobilenet_v2 (width 1.0, 1000 classes) from its state_dict straight to a camclass
bundle, without PyTorch: what camclass-fetch-imagenet runs, so that a Raspberry Pi gets
mobilenet_v2-imagenet.ccm with python3 and python3-numpy only.

    graph = build_graph(state)      # {key: float32 ndarray}, as checkpoint.read gives it
    summary = write_bundle(graph, "mobilenet_v2-imagenet.ccm")

build_graph lays out torchvision's MobileNetV2 (torchvision/models/mobilenetv2.py) as the
exporter's torch.fx lowering (ccm_lower.py) sees it: the same nodes in the same order with the
same names (module paths for convolutions, BatchNorms and ReLU6s; add, add_1, ... for the
residual additions; adaptive_avg_pool2d, flatten, classifier.1), a temporary batchnorm node
after each convolution and a clamp [0, 6] for each ReLU6. The exporter's own passes
(ccm_graph.finish_lowering: BatchNorm folded with eps 1e-5, activations fused, the output
named logits) and writer (ccm_write) then make the bundle, so it is the bundle that
`camclass-export --model mobilenet_v2 --antialias on` writes for the same weights:
tests/models/test_mobilenet_v2_builder.py checks that against the torch exporter.

numpy rather than the standard library alone: the passes and the writer shared with the
exporter are numpy code, and python3-numpy is a small Debian package (PyTorch is not).

Without PyTorch there is no reference to run the graph against; the written file is read back
(ccm_format.read_bundle) and compared with what was meant to be written before it is renamed
into place (check_written).
"""

import numpy as np

from . import ccm_format, ccm_write
from .ccm_graph import ExportError, Graph, Node, finish_lowering

# torchvision's inverted residual settings: (expansion t, output channels c, blocks n, stride s
# of the first block; the others have stride 1).
SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
            (6, 160, 3, 2), (6, 320, 1, 1))
FIRST_CHANNELS = 32
LAST_CHANNELS = 1280
CLASSES = 1000
INPUT_SHAPE = [1, 3, 224, 224]
BN_EPS = 1e-5  # nn.BatchNorm2d's default, which torchvision's mobilenet_v2 keeps
RELU6 = (0.0, 6.0)
# What the bundle says about its input: torchvision's ImageNet evaluation transforms
# (resize to 256 as PIL does, center crop 224, ImageNet mean/std).
NAME = "mobilenet_v2-imagenet"
RESIZE = ("center_crop", 256)


class StateDictError(ExportError):
    """The state_dict is not torchvision's mobilenet_v2 (1000 classes): a key missing or
    unexpected, or a tensor of the wrong shape."""


class _Builder(Graph):
    """The graph of one state_dict; every key read is recorded, so that unexpected keys (a
    state_dict of another model that happens to share these) are refused as torch's strict
    load_state_dict refuses them."""

    def __init__(self, state):
        super().__init__()
        self.state = state
        self.used = set()
        self.input = "input"
        self.shapes["input"] = list(INPUT_SHAPE)

    def param(self, key, shape):
        a = self.state.get(key)
        if a is None:
            raise StateDictError("missing key %s" % key)
        if list(np.shape(a)) != list(shape):
            raise StateDictError("%s has shape %s, mobilenet_v2 needs %s"
                                 % (key, list(np.shape(a)), list(shape)))
        self.used.add(key)
        return np.asarray(a, dtype=np.float64)

    def node(self, op, name, inputs, shape, attrs=None, claimed=False):
        """Appends a node named name (made unique unless claimed); returns it."""
        name = name if claimed else self.unique(name)
        out = name + ".out"
        self.shapes[out] = list(shape)
        node = Node(op, name, inputs, out, attrs)
        self.nodes.append(node)
        return node

    def conv(self, x, path, cout, kernel, stride, groups):
        """nn.Conv2d(bias=False, padding=(kernel - 1) // 2) at module path `path`."""
        _, cin, h, w = self.shapes[x]
        pad = (kernel - 1) // 2
        name = self.unique(path)
        weight = self.const(name + ".weight",
                            self.param(path + ".weight", [cout, cin // groups, kernel, kernel]))
        oh, ow = [(d + 2 * pad - kernel) // stride + 1 for d in (h, w)]
        attrs = {"stride": [stride, stride], "padding": [pad] * 4, "dilation": [1, 1],
                 "groups": groups}
        return self.node("conv2d", name, [x, weight], [1, cout, oh, ow], attrs,
                         claimed=True).output

    def batchnorm(self, x, path):
        c = self.shapes[x][1]
        stats = [self.param("%s.%s" % (path, k), [c])
                 for k in ("running_mean", "running_var", "weight", "bias")]
        self.used.add(path + ".num_batches_tracked")  # a counter, not used in eval mode
        node = self.node("batchnorm", path, [x], self.shapes[x])
        node.bn = (stats[0], stats[1], stats[2], stats[3], BN_EPS)
        return node.output

    def relu6(self, x, path):
        node = self.node("clamp", path, [x], self.shapes[x])
        node.act = RELU6
        return node.output

    def conv_bn_relu6(self, x, path, cout, kernel=1, stride=1, groups=1):
        """torchvision's Conv2dNormActivation: PATH.0 conv, PATH.1 BatchNorm, PATH.2 ReLU6."""
        x = self.conv(x, path + ".0", cout, kernel, stride, groups)
        x = self.batchnorm(x, path + ".1")
        return self.relu6(x, path + ".2")

    def inverted_residual(self, x, path, cout, stride, t):
        """torchvision's InvertedResidual at PATH: [PATH.conv.0 1x1 expansion when t != 1],
        3x3 depthwise, 1x1 projection and its BatchNorm; x added when the shape is kept."""
        cin = self.shapes[x][1]
        hidden = cin * t
        y, i = x, 0
        if t != 1:
            y = self.conv_bn_relu6(y, "%s.conv.0" % path, hidden)
            i = 1
        y = self.conv_bn_relu6(y, "%s.conv.%d" % (path, i), hidden, 3, stride, hidden)
        y = self.conv(y, "%s.conv.%d" % (path, i + 1), cout, 1, 1, 1)
        y = self.batchnorm(y, "%s.conv.%d" % (path, i + 2))
        if stride == 1 and cin == cout:
            return self.node("add", "add", [x, y], self.shapes[y]).output
        return y

    def build(self):
        x = self.conv_bn_relu6(self.input, "features.0", FIRST_CHANNELS, 3, 2)
        index = 1
        for t, c, n, s in SETTINGS:
            for i in range(n):
                x = self.inverted_residual(x, "features.%d" % index, c, s if i == 0 else 1, t)
                index += 1
        x = self.conv_bn_relu6(x, "features.%d" % index, LAST_CHANNELS)
        c = self.shapes[x][1]
        x = self.node("global_avg_pool", "adaptive_avg_pool2d", [x], [1, c, 1, 1]).output
        x = self.node("flatten", "flatten", [x], [1, c]).output
        name = self.unique("classifier.1")  # classifier.0 is Dropout: nothing in eval mode
        inputs = [x, self.const(name + ".weight", self.param(name + ".weight", [CLASSES, c])),
                  self.const(name + ".bias", self.param(name + ".bias", [CLASSES]))]
        self.output = self.node("linear", name, inputs, [1, CLASSES], claimed=True).output


def build_graph(state):
    """The graph of torchvision's mobilenet_v2 with the weights of state_dict `state` ({key:
    array}), passes done (BatchNorm folded, ReLU6 fused). Raises StateDictError."""
    if not isinstance(state, dict):
        raise StateDictError("a %s, not a state_dict" % type(state).__name__)
    b = _Builder(state)
    b.build()
    unexpected = sorted(set(state) - b.used)
    if unexpected:
        raise StateDictError("unexpected key%s %s" % ("s" if len(unexpected) > 1 else "",
                                                       ", ".join(unexpected[:3])
                                                       + (", ..." if len(unexpected) > 3
                                                          else "")))
    finish_lowering(b)
    return b


def check_written(path, manifest, consts, labels):
    """Reads the bundle at path back and compares it with what was meant: the manifest, every
    constant bit for bit, the labels, and a graph whose every input is the image, a constant or
    an earlier node's output. Raises ExportError naming the first difference."""
    got_manifest, got_consts, got_labels = ccm_format.read_bundle(path)
    if got_manifest != manifest:
        raise ExportError("%s: its manifest reads back different from the one written" % path)
    if got_labels != labels:
        raise ExportError("%s: its labels read back different from the ones written" % path)
    if sorted(got_consts) != sorted(consts):
        raise ExportError("%s: its constant tensors read back as another set" % path)
    for name, a in consts.items():
        if not np.array_equal(got_consts[name], a):
            raise ExportError("%s: tensor %s reads back different" % (path, name))
    known = {manifest["input"]["tensor"]} | set(consts)
    for node in manifest["graph"]:
        missing = [t for t in node["inputs"] if t not in known]
        if missing:
            raise ExportError("%s: node %s reads %s before any node computes it"
                              % (path, node["name"], missing[0]))
        known.update(node["outputs"])
    if manifest["output"]["tensor"] not in known:
        raise ExportError("%s: no node computes the output" % path)


def write_bundle(graph, out_path, labels=None, name=NAME):
    """Writes graph (build_graph's) as the bundle camclass-export writes for torchvision's
    mobilenet_v2 (format version 3: PIL's antialiased resize, center crop 256 -> 224, ImageNet
    mean/std; labels: the ImageNet category names by default), read back and checked before it
    is renamed into place. Returns a summary dict. Raises ExportError, OSError."""
    labels = ccm_write.imagenet_labels() if labels is None else labels
    mean, std = ccm_write.IMAGENET_MEAN, ccm_write.IMAGENET_STD
    ccm_write.check_spec(graph.shapes[graph.input], "RGB", mean, std, RESIZE, name, True)
    ccm_write.check_labels(labels, CLASSES)
    manifest, consts, blob = ccm_write.build_manifest(graph, name, labels, "RGB", mean, std,
                                                      RESIZE, antialias=True)
    ccm_write.check_limits(manifest)
    ccm_write.write_bundle(out_path, manifest, blob, labels,
                           check=lambda tmp: check_written(tmp, manifest, consts, labels))
    return {"nodes": len(manifest["graph"]), "tensors": len(manifest["tensors"]),
            "weight_bytes": len(blob), "classes": CLASSES}
