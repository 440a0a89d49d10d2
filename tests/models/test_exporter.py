#!/usr/bin/python3
"""Tests of the exporter (camclass_export/export.py, tools/camclass-export): BatchNorm
folding, activation fusion, unsupported ops, no partial bundles, labels, the bundle layout of
docs/MODEL_FORMAT.md.

Bundles are parsed here with zipfile + json, independently of the exporter's own reader; the
numbers are checked against PyTorch. Tolerances: folded weights within 1e-6 relative of the
float64 formula, graph outputs within 1e-5 x max |output| of the PyTorch module.

    test_exporter.py

Each test_* below runs in a folder of its own; an exception in one is a failure of it, and the
others still run.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile
import textwrap
import traceback
import zipfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "..", "..", "assets", "samples", "selftest")
TOOLS = os.path.join(HERE, "..", "..", "tools")
ENGINE_TESTS = os.path.join(HERE, "..", "engine")  # small_net.py, shared with tests/engine
EXPORTER = os.path.join(TOOLS, "camclass-export")
from camclass_export import ccm_bundle  # noqa: E402
from camclass_export import export as ce  # noqa: E402
from checks import check, summary  # noqa: E402

torch.set_num_threads(1)


def load(path):
    """(manifest, {name: f32 array}, labels, zipfile infos) parsed with zipfile + json."""
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json"))
        infos = {i.filename: i for i in z.infolist()}
        consts = {}
        for t in manifest["tensors"]:
            if "data" in t:
                d = t["data"]
                raw = z.read(d["entry"])[d["offset"]:d["offset"] + d["size"]]
                consts[t["name"]] = np.frombuffer(raw, "<f4").reshape(t["shape"])
        labels = manifest["labels"]
        if isinstance(labels, dict):
            labels = z.read(labels["entry"]).decode().rstrip("\n").split("\n")
    return manifest, consts, labels, infos


def randomize_bn(module, seed=3):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.BatchNorm2d):
                c = m.num_features
                m.running_mean.copy_(torch.randn(c, generator=g))
                m.running_var.copy_(torch.rand(c, generator=g) * 1.5 + 0.5)
                m.weight.copy_(torch.rand(c, generator=g) + 0.5)
                m.bias.copy_(torch.randn(c, generator=g) * 0.5)
    return module.eval()


class ConvBnRelu6(nn.Module):
    def __init__(self, bias=False):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=bias)
        self.bn = nn.BatchNorm2d(8)
        self.act = nn.ReLU6(inplace=True)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.dw_bn = nn.BatchNorm2d(8)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = self.act(self.bn(self.conv(x)))
        x = F.relu6(self.dw_bn(self.dw(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


class UserNet(nn.Module):
    """Functional forms: residual +, torch.add, clamp, hardtanh, mean over (2, 3), view,
    dropout, softmax; a BatchNorm with no conv before it; a ReLU used twice."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 6, 3, padding="same")
        self.bn0 = nn.BatchNorm2d(3)
        self.a = nn.Conv2d(6, 6, 1)
        self.b = nn.Conv2d(6, 6, 3, padding=1, bias=False)
        self.b_bn = nn.BatchNorm2d(6)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(0.2)
        self.head = nn.Linear(6, 4)

    def forward(self, x):
        x = self.stem(self.bn0(x))
        y = self.relu(x)
        z = x + torch.clamp(self.a(y), min=-0.5, max=1.5)
        z = torch.add(z, F.hardtanh(self.b_bn(self.b(self.relu(z)))))
        z = z.mean((2, 3), keepdim=True)
        z = self.drop(z.view(z.size(0), -1))
        return F.softmax(self.head(z), dim=1)


class Case:
    """One test's folder and the bundle path in it (m.ccm)."""

    def __init__(self, folder):
        self.dir = folder
        self.path = os.path.join(folder, "m.ccm")


def run_cli(*args):
    return subprocess.run([sys.executable, EXPORTER, *args], capture_output=True, text=True,
                          timeout=240)


def raises(fn, *args, **kw):
    """The ce.ExportError that fn(*args, **kw) raises, or None when it returns."""
    try:
        fn(*args, **kw)
    except ce.ExportError as e:
        return e
    return None


def check_equal(got, want, what):
    return check(got == want, "%s: %r, expected %r" % (what, got, want))


def check_outputs(c, module, shape, tol=1e-5):
    """The bundle's graph (float64, ccm_bundle) against module on a seeded input."""
    manifest, consts, _, _ = load(c.path)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(11))
    with torch.no_grad():
        ref = module(x).double().numpy()
    got = ccm_bundle.run_graph(manifest, consts, x.numpy())
    err = np.abs(got - ref).max() / np.abs(ref).max()
    check(err <= tol, "%s: outputs within %g x max|output| of PyTorch (%.3g)"
          % (manifest.get("name", "bundle"), tol, err))
    return manifest, consts


def check_layout(c):
    """Data entries stored, every tensor 64-byte aligned with size = count * 4; the data
    itself starts 64-byte aligned in the file."""
    manifest, consts, _, infos = load(c.path)
    with open(c.path, "rb") as f:
        for t in manifest["tensors"]:
            if "data" not in t:
                continue
            d, name = t["data"], t["name"]
            info = infos[d["entry"]]
            check(info.compress_type == zipfile.ZIP_STORED, "%s: entry stored" % name)
            check(d["offset"] % 64 == 0, "%s: offset %d 64-byte aligned" % (name, d["offset"]))
            check_equal(d["size"], int(np.prod(t["shape"])) * 4, "%s: size" % name)
            check(d["offset"] + d["size"] <= info.file_size, "%s: inside its entry" % name)
            f.seek(info.header_offset + 26)
            name_len, extra_len = struct.unpack("<HH", f.read(4))
            check((info.header_offset + 30 + name_len + extra_len) % 64 == 0,
                  "%s: entry data 64-byte aligned in the file" % d["entry"])


# -- BatchNorm folding and fusion --

def test_conv_bn_relu6_folding(c):
    for bias in (False, True):
        m = randomize_bn(ConvBnRelu6(bias))
        ce.export_module(m, c.path, (1, 3, 17, 15), labels=list("abcde"), name="cbr")
        manifest, consts = check_outputs(c, m, (1, 3, 17, 15))
        check_layout(c)
        ops = [(n["op"], n.get("attrs", {}).get("activation", "none"))
               for n in manifest["graph"]]
        check_equal(ops, [("conv2d", "relu6"), ("conv2d", "relu6"), ("global_avg_pool", "none"),
                          ("flatten", "none"), ("linear", "none")], "cbr graph")
        conv = manifest["graph"][0]
        check_equal(conv["attrs"]["stride"], [2, 2], "cbr stride")
        check_equal(conv["attrs"]["padding"], [1, 1, 1, 1], "cbr padding")
        check_equal(manifest["graph"][1]["attrs"]["groups"], 8, "cbr depthwise groups")
        # the folded tensors against the formula in float64
        bn = m.bn
        s = (bn.weight / torch.sqrt(bn.running_var + bn.eps)).double()
        w = m.conv.weight.double() * s.view(-1, 1, 1, 1)
        b0 = m.conv.bias.double() if bias else torch.zeros(8, dtype=torch.float64)
        b = (b0 - bn.running_mean.double()) * s + bn.bias.double()
        w_got = consts[conv["inputs"][1]]
        b_got = consts[conv["inputs"][2]]
        check_equal(list(w_got.shape), [8, 3, 3, 3], "folded weight shape")
        check(w_got.shape == (8, 3, 3, 3) and
              np.allclose(w_got, w.detach().numpy(), rtol=1e-6, atol=1e-7),
              "folded weights (bias %s) within 1e-6 of the float64 formula" % bias)
        check(np.allclose(b_got, b.detach().numpy(), rtol=1e-6, atol=1e-7),
              "folded bias (bias %s) within 1e-6 of the float64 formula" % bias)
        check_equal(manifest["output"], {"tensor": "logits", "kind": "logits", "classes": 5},
                    "cbr output")


def test_user_module(c):
    m = randomize_bn(UserNet())
    info = ce.export_module(m, c.path, (1, 3, 12, 10), labels=["w", "x", "y", "z"],
                            name="user", color="BGR", mean=(0.5, 0.5, 0.5),
                            std=(0.25, 0.25, 0.25), resize=("squash", None))
    check(info["verify_rel_err"] < 1e-5, "user: verify_rel_err %g < 1e-5" % info["verify_rel_err"])
    manifest, consts = check_outputs(c, m, (1, 3, 12, 10))
    check_layout(c)
    check_equal(manifest["input"], {
        "tensor": "input", "shape": [1, 3, 12, 10], "color_order": "BGR",
        "mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25], "resize": {"policy": "squash"}},
        "user input")
    check_equal(manifest["output"]["kind"], "probabilities", "user output kind")
    ops = [n["op"] for n in manifest["graph"]]
    # bn0 has no conv before it: a depthwise 1x1 conv; the shared ReLU stays a clamp
    # node where its input has another user (x feeds the residual add too)
    check_equal(ops[0], "conv2d", "user: bn0 as a conv")
    check_equal(manifest["graph"][0]["attrs"]["groups"], 3, "user: bn0 conv groups")
    check("clamp" in ops, "user: a clamp node stays (%s)" % ops)
    check("batchnorm" not in ops, "user: no batchnorm node (%s)" % ops)
    acts = {n["name"]: n.get("attrs", {}) for n in manifest["graph"]}
    check_equal(acts["a"]["activation"], "clamp", "user: a's activation")
    check_equal((acts["a"]["clamp_min"], acts["a"]["clamp_max"]), (-0.5, 1.5), "user: a's clamp")
    check_equal(acts["b"]["activation"], "clamp", "user: b's activation")
    check_equal((acts["b"]["clamp_min"], acts["b"]["clamp_max"]), (-1.0, 1.0), "user: b's clamp")
    check_equal(ops[-1], "softmax", "user: last op")
    names = [n["name"] for n in manifest["graph"]]
    check(len(names) == len(set(names)), "user: node names unique (%s)" % names)
    tensor_names = [t["name"] for t in manifest["tensors"]]
    check(len(tensor_names) == len(set(tensor_names)), "user: tensor names unique")


def test_fusion_respects_other_users(c):
    """relu fuses into the conv; the clamp after it must not, because the relu's result
    also feeds the add (fusing it would clamp what the add sees). The unused sigmoid-free
    dead branch is dropped."""
    class TwoUsers(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)

        def forward(self, x):
            y = F.relu(self.conv(x))
            unused = y + y  # noqa: F841  (dead: must not reach the bundle)
            z = torch.clamp(y, max=0.1)
            return torch.flatten((y + z).mean((2, 3), keepdim=True), 1)

    m = TwoUsers().eval()
    ce.export_module(m, c.path, (1, 3, 6, 6), resize=("squash", None))
    manifest, _ = check_outputs(c, m, (1, 3, 6, 6))
    graph = [(n["op"], n.get("attrs", {}).get("activation", "none"))
             for n in manifest["graph"]]
    check_equal(graph, [("conv2d", "relu"), ("clamp", "clamp"), ("add", "none"),
                        ("global_avg_pool", "none"), ("flatten", "none")], "two users graph")


# -- errors: one line naming op and location, exit 1, no file --

def check_refused(c, result, *needles, lines=1):
    """Exit 1, `lines` lines on stderr holding every needle, nothing written."""
    got = result.stderr.strip().splitlines()
    check(result.returncode == 1 and len(got) == lines,
          "exit 1 (%d) with %d lines on stderr: %r" % (result.returncode, lines, result.stderr))
    for needle in needles:
        check(needle in "\n".join(got), "stderr names %r: %r" % (needle, result.stderr))
    check(not os.path.exists(c.path), "nothing written at %s" % c.path)
    left = [p for p in os.listdir(c.dir) if p.startswith(".m.ccm")]
    check(not left, "no temporary file left: %s" % left)


def test_unsupported_function(c):
    # Every kind of unsupported op at once, each with the user's line; what only depends
    # on an unsupported result (the add) is not reported again; a kind met twice is
    # reported once with a count.
    src = os.path.join(c.dir, "mynet.py")
    with open(src, "w") as f:
        f.write(textwrap.dedent("""\
            import torch
            import torch.nn as nn
            import torch.nn.functional as F

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 4, 3)

                def forward(self, x):
                    y = torch.tanh(self.conv(x))
                    z = F.gelu(self.conv(x)) + y
                    w = torch.tanh(z)
                    return w.mean((2, 3))
            """))
    r = run_cli("--module", src + ":Net", "--input-size", "8", "--resize", "squash",
                "--num-classes", "4", "-o", c.path)
    check_refused(c, r, "2 kinds of op that camclass cannot export",
                  "unsupported op torch.tanh at ", "mynet.py:11 in forward",
                  "(and 1 more)", "unsupported op torch._C._nn.gelu at ",
                  "mynet.py:12 in forward `z = F.gelu(self.conv(x)) + y`", lines=3)


def test_untraceable_names_user_line(c):
    src = os.path.join(c.dir, "branchy.py")
    with open(src, "w") as f:
        f.write(textwrap.dedent("""\
            import torch.nn as nn

            class Net(nn.Module):
                def forward(self, x):
                    if x.sum() > 0:
                        return x.mean((2, 3))
                    return -x.mean((2, 3))
            """))
    r = run_cli("--module", src + ":Net", "--input-size", "8", "--resize", "squash",
                "--num-classes", "3", "-o", c.path)
    check_refused(c, r, "cannot trace Net with torch.fx at ",
                  "branchy.py:5 in forward `if x.sum() > 0:`")


def check_export_error(c, e, *needles):
    """e is an ExportError naming every needle; nothing written."""
    check(e is not None, "refused with an ExportError")
    for needle in needles:
        check(needle in str(e), "the error names %r: %s" % (needle, e))
    check(not os.path.exists(c.path), "nothing written at %s" % c.path)


def test_unsupported_module(c):
    class GeluNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 1)
            self.act = nn.GELU()

        def forward(self, x):
            return torch.flatten(self.act(self.conv(x)).mean((2, 3), keepdim=True), 1)

    e = raises(ce.export_module, GeluNet(), c.path, (1, 3, 8, 8), resize=("squash", None))
    check_export_error(c, e, "unsupported op torch.nn.GELU", "module act", "test_exporter.py")


def test_unsupported_torchvision_model(c):
    # convnext uses LayerNorm, GELU, permute and a bare parameter (layer_scale): all named
    r = run_cli("--model", "convnext_tiny", "--random-seed", "1", "--input-size", "32",
                "--resize", "squash", "-o", c.path)
    check_refused(c, r, "6 kinds of op", "unsupported op torch.nn.LayerNorm",
                  "unsupported op torch.nn.GELU", "Tensor.permute", "convnext.py:",
                  "reads a parameter directly", lines=7)


def test_untraceable(c):
    class Branchy(nn.Module):
        def forward(self, x):
            return x.flatten(1) if x.sum() > 0 else -x.flatten(1)

    e = raises(ce.export_module, Branchy(), c.path, (1, 3, 4, 4), resize=("squash", None))
    check_export_error(c, e, "cannot trace")


def test_existing_bundle_kept_on_failure(c):
    with open(c.path, "wb") as f:
        f.write(b"old")

    class Bad(nn.Module):
        def forward(self, x):
            return torch.tanh(x).flatten(1)

    e = raises(ce.export_module, Bad(), c.path, (1, 3, 4, 4), resize=("squash", None))
    check(e is not None, "a failed export over an existing bundle is refused")
    with open(c.path, "rb") as f:
        check_equal(f.read(), b"old", "the existing bundle")
    check_equal(os.listdir(c.dir), ["m.ccm"], "the folder after a failed export")


def test_format_limits(c):
    class BigStride(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 1, stride=65)

        def forward(self, x):
            return torch.flatten(self.conv(x), 1)

    e = raises(ce.export_module, BigStride(), c.path, (1, 3, 8, 8), resize=("squash", None))
    check_export_error(c, e, "node conv: kernel [1, 1], stride [65, 65]")


# -- labels --

def test_labels(c):
    m = randomize_bn(ConvBnRelu6())
    e = raises(ce.export_module, m, c.path, (1, 3, 8, 8), labels=["a", "b"],
               resize=("squash", None))
    check_export_error(c, e, "2 labels for a model with 5 classes")
    e = raises(ce.export_module, m, c.path, (1, 3, 8, 8), labels=["a", "", "c", "d", "e"],
               resize=("squash", None))
    check(e is not None, "an empty label is refused")
    ce.export_module(m, c.path, (1, 3, 8, 8), resize=("squash", None))
    manifest, _, labels, _ = load(c.path)
    check_equal(labels, ["class_%d" % i for i in range(5)], "default labels")
    check_equal(manifest["labels"], {"entry": "labels.txt"}, "labels entry")


def test_cli_mobilenet_v2_labels_file(c):
    labels = os.path.join(c.dir, "labels.txt")
    with open(labels, "w") as f:
        f.write("".join("thing %d\n" % i for i in range(10)))
    r = run_cli("--model", "mobilenet_v2", "--random-seed", "4", "--labels", labels,
                "--input-size", "96", "--resize", "center_crop:110", "-o", c.path)
    if not check(r.returncode == 0, "mobilenet_v2 --labels exported: %s" % r.stderr):
        return
    manifest, consts, got, _ = load(c.path)
    check_equal(got, ["thing %d" % i for i in range(10)], "labels from the file")
    check_equal(manifest["output"]["classes"], 10, "classes")
    check_equal(manifest["input"]["shape"], [1, 3, 96, 96], "input shape")
    # a torchvision model resizes as PIL does by default (format version 3)
    check_equal(manifest["input"]["resize"],
                {"policy": "center_crop", "size": 110, "antialias": True}, "resize")
    check_equal(manifest["version"], 3, "format version")
    check("antialias on" in r.stdout, "says antialias on: %s" % r.stdout)
    check_equal(manifest["name"], "mobilenet_v2", "name")
    ops = [n["op"] for n in manifest["graph"]]
    check_equal(ops.count("conv2d"), 52, "conv2d nodes")
    check_equal(ops.count("add"), 10, "add nodes")
    check("clamp" not in ops, "no clamp node: relu6 fused everywhere")
    check_layout(c)
    # the original, unfused module with the same seed computes the same logits
    module = ce.build_torchvision_model("mobilenet_v2", 10, random_seed=4,
                                        input_shape=(1, 3, 96, 96))
    # 52 convolutions in PyTorch's float32 against the graph in float64: 1e-5 is the
    # order of float32's own error over that depth (calibrated statistics keep the
    # activations alive), so the whole-network tolerance of the C tests applies
    check_outputs(c, module, (1, 3, 96, 96), tol=1e-4)


def test_cli_user_module_with_weights(c):
    """--module FILE:CLASS --weights state_dict.pth: the bundle computes what the module
    with those weights computes (not its fresh initialization)."""
    sys.path.insert(0, ENGINE_TESTS)
    from small_net import SmallNet
    m = randomize_bn(SmallNet(), seed=9)
    weights = os.path.join(c.dir, "small.pth")
    torch.save(m.state_dict(), weights)
    r = run_cli("--module", os.path.join(ENGINE_TESTS, "small_net.py") + ":SmallNet",
                "--weights", weights, "--input-size", "13", "--resize", "squash", "-o", c.path)
    if not check(r.returncode == 0, "SmallNet --weights exported: %s" % r.stderr):
        return
    manifest, _ = check_outputs(c, m, (1, 3, 13, 13))
    check_equal(manifest["name"], "SmallNet", "name")
    check_equal(manifest["output"]["kind"], "probabilities", "output kind")
    # a user's module keeps the resize without antialias, format version 1, by default
    check_equal((manifest["version"], manifest["input"]["resize"]), (1, {"policy": "squash"}),
                "version and resize")
    check("antialias off" in r.stdout, "says antialias off: %s" % r.stdout)
    # a state_dict for another module is refused in one line, nothing written
    os.unlink(c.path)
    torch.save(ConvBnRelu6().state_dict(), weights)
    r = run_cli("--module", os.path.join(ENGINE_TESTS, "small_net.py") + ":SmallNet",
                "--weights", weights, "--input-size", "13", "-o", c.path)
    check_refused(c, r, "cannot load", "small.pth")


def test_antialias(c):
    """--antialias on|off overrides the default (on for --model, off for --module); with
    activation quantization too the bundle is version 3; --bundle keeps its own resize;
    a non-boolean is refused."""
    small = os.path.join(ENGINE_TESTS, "small_net.py") + ":SmallNet"
    r = run_cli("--module", small, "--random-seed", "1", "--input-size", "13",
                "--resize", "center_crop:15", "--antialias", "on", "-o", c.path)
    if not check(r.returncode == 0, "--antialias on exported: %s" % r.stderr):
        return
    manifest, _, _, _ = load(c.path)
    check_equal((manifest["version"], manifest["input"]["resize"]),
                (3, {"policy": "center_crop", "size": 15, "antialias": True}),
                "--antialias on: version and resize")
    # quantizing it with calibration: version 3 stays (it includes version 2's "quant"),
    # and the calibration images are resized as PIL does (camclass_export.preprocess)
    q = os.path.join(c.dir, "q.ccm")
    r = run_cli("--bundle", c.path, "--quantize", "int8", "--calibrate", SAMPLES,
                "--calibrate-limit", "4", "-o", q)
    if check(r.returncode == 0, "--quantize int8 --calibrate exported: %s" % r.stderr):
        with zipfile.ZipFile(q) as z:
            manifest = json.loads(z.read("manifest.json"))
        check_equal(manifest["version"], 3, "quantized version")
        check(manifest["input"]["resize"]["antialias"], "quantized: antialias kept")
        check(any("quant" in t and "data" not in t for t in manifest["tensors"]),
              "quantized: activations carry quant")
        os.unlink(q)
    r = run_cli("--bundle", c.path, "--quantize", "int8", "--antialias", "off", "-o", q)
    check_equal(r.returncode, 1, "--bundle with --antialias: exit status")
    check("--bundle keeps the bundle's own resize" in r.stderr, "says why: %s" % r.stderr)
    check(not os.path.exists(q), "nothing written at %s" % q)
    # a torchvision model told off: no "antialias" key at all, version 1
    r = run_cli("--model", "mobilenet_v2", "--random-seed", "1", "--num-classes", "3",
                "--input-size", "32", "--antialias", "off", "-o", c.path)
    if check(r.returncode == 0, "--model --antialias off exported: %s" % r.stderr):
        manifest, _, _, _ = load(c.path)
        check_equal((manifest["version"], manifest["input"]["resize"]),
                    (1, {"policy": "center_crop", "size": 36}), "--antialias off: resize")
    e = raises(ce.export_module, ConvBnRelu6().eval(), c.path, (1, 3, 8, 8),
               resize=("squash", None), antialias="yes")
    check(e is not None, "antialias='yes' is refused")


def test_imagenet_labels_default(c):
    labels = ce.imagenet_labels()
    if labels is not None:  # torchvision ships them in 0.14
        check_equal(len(labels), 1000, "ImageNet labels")
        check_equal(labels[0], "tench", "the first ImageNet label")


def main():
    tests = [(name, fn) for name, fn in globals().items()
             if name.startswith("test_") and callable(fn)]
    for name, fn in tests:
        print("-- %s" % name, flush=True)
        with tempfile.TemporaryDirectory() as folder:
            try:
                fn(Case(folder))
            except Exception:  # a failure of this test; the others still run
                check(False, "%s raised:\n%s" % (name, traceback.format_exc()))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
