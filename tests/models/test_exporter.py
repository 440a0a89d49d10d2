#!/usr/bin/python3
"""Tests of the exporter (tools/camclass_export.py): BatchNorm folding, activation fusion,
unsupported ops, no partial bundles, labels, the bundle layout of docs/MODEL_FORMAT.md.

Bundles are parsed here with zipfile + json, independently of the exporter's own reader; the
numbers are checked against PyTorch. Tolerances: folded weights within 1e-6 relative of the
float64 formula, graph outputs within 1e-5 x max |output| of the PyTorch module.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile
import textwrap
import unittest
import zipfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "..", "..", "assets", "samples", "selftest")
TOOLS = os.path.join(HERE, "..", "..", "tools")
ENGINE_TESTS = os.path.join(HERE, "..", "engine")  # small_net.py, shared with tests/engine
EXPORTER = os.path.join(TOOLS, "camclass_export.py")
sys.path.insert(0, TOOLS)
import camclass_export as ce  # noqa: E402
import ccm_bundle  # noqa: E402

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


class ExporterTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "m.ccm")

    def tearDown(self):
        self.dir.cleanup()

    def run_cli(self, *args):
        return subprocess.run([sys.executable, EXPORTER, *args], capture_output=True,
                              text=True, timeout=240)

    def check_outputs(self, module, shape, tol=1e-5):
        manifest, consts, _, _ = load(self.path)
        x = torch.randn(shape, generator=torch.Generator().manual_seed(11))
        with torch.no_grad():
            ref = module(x).double().numpy()
        got = ccm_bundle.run_graph(manifest, consts, x.numpy())
        err = np.abs(got - ref).max() / np.abs(ref).max()
        self.assertLessEqual(err, tol)
        return manifest, consts

    def check_layout(self):
        """Data entries stored, every tensor 64-byte aligned with size = count * 4; the data
        itself starts 64-byte aligned in the file."""
        manifest, consts, _, infos = load(self.path)
        with open(self.path, "rb") as f:
            for t in manifest["tensors"]:
                if "data" not in t:
                    continue
                d = t["data"]
                info = infos[d["entry"]]
                self.assertEqual(info.compress_type, zipfile.ZIP_STORED, t["name"])
                self.assertEqual(d["offset"] % 64, 0, t["name"])
                self.assertEqual(d["size"], int(np.prod(t["shape"])) * 4, t["name"])
                self.assertLessEqual(d["offset"] + d["size"], info.file_size, t["name"])
                f.seek(info.header_offset + 26)
                name_len, extra_len = struct.unpack("<HH", f.read(4))
                self.assertEqual((info.header_offset + 30 + name_len + extra_len) % 64, 0)

    # -- BatchNorm folding and fusion --

    def test_conv_bn_relu6_folding(self):
        for bias in (False, True):
            m = randomize_bn(ConvBnRelu6(bias))
            ce.export_module(m, self.path, (1, 3, 17, 15), labels=list("abcde"), name="cbr")
            manifest, consts = self.check_outputs(m, (1, 3, 17, 15))
            self.check_layout()
            ops = [(n["op"], n.get("attrs", {}).get("activation", "none"))
                   for n in manifest["graph"]]
            self.assertEqual(ops, [("conv2d", "relu6"), ("conv2d", "relu6"),
                                   ("global_avg_pool", "none"), ("flatten", "none"),
                                   ("linear", "none")])
            conv = manifest["graph"][0]
            self.assertEqual(conv["attrs"]["stride"], [2, 2])
            self.assertEqual(conv["attrs"]["padding"], [1, 1, 1, 1])
            self.assertEqual(manifest["graph"][1]["attrs"]["groups"], 8)
            # the folded tensors against the formula in float64
            bn = m.bn
            s = (bn.weight / torch.sqrt(bn.running_var + bn.eps)).double()
            w = m.conv.weight.double() * s.view(-1, 1, 1, 1)
            b0 = m.conv.bias.double() if bias else torch.zeros(8, dtype=torch.float64)
            b = (b0 - bn.running_mean.double()) * s + bn.bias.double()
            w_got = consts[conv["inputs"][1]]
            b_got = consts[conv["inputs"][2]]
            self.assertEqual(list(w_got.shape), [8, 3, 3, 3])
            np.testing.assert_allclose(w_got, w.detach().numpy(), rtol=1e-6, atol=1e-7)
            np.testing.assert_allclose(b_got, b.detach().numpy(), rtol=1e-6, atol=1e-7)
            self.assertEqual(manifest["output"], {"tensor": "logits", "kind": "logits",
                                                  "classes": 5})

    def test_user_module(self):
        m = randomize_bn(UserNet())
        info = ce.export_module(m, self.path, (1, 3, 12, 10), labels=["w", "x", "y", "z"],
                                name="user", color="BGR", mean=(0.5, 0.5, 0.5),
                                std=(0.25, 0.25, 0.25), resize=("squash", None))
        self.assertLess(info["verify_rel_err"], 1e-5)
        manifest, consts = self.check_outputs(m, (1, 3, 12, 10))
        self.check_layout()
        self.assertEqual(manifest["input"], {
            "tensor": "input", "shape": [1, 3, 12, 10], "color_order": "BGR",
            "mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25], "resize": {"policy": "squash"}})
        self.assertEqual(manifest["output"]["kind"], "probabilities")
        ops = [n["op"] for n in manifest["graph"]]
        # bn0 has no conv before it: a depthwise 1x1 conv; the shared ReLU stays a clamp
        # node where its input has another user (x feeds the residual add too)
        self.assertEqual(ops[0], "conv2d")
        self.assertEqual(manifest["graph"][0]["attrs"]["groups"], 3)
        self.assertIn("clamp", ops)
        self.assertNotIn("batchnorm", ops)
        acts = {n["name"]: n.get("attrs", {}) for n in manifest["graph"]}
        self.assertEqual(acts["a"]["activation"], "clamp")
        self.assertEqual((acts["a"]["clamp_min"], acts["a"]["clamp_max"]), (-0.5, 1.5))
        self.assertEqual(acts["b"]["activation"], "clamp")
        self.assertEqual((acts["b"]["clamp_min"], acts["b"]["clamp_max"]), (-1.0, 1.0))
        self.assertEqual(ops[-1], "softmax")
        names = [n["name"] for n in manifest["graph"]]
        self.assertEqual(len(names), len(set(names)))
        tensor_names = [t["name"] for t in manifest["tensors"]]
        self.assertEqual(len(tensor_names), len(set(tensor_names)))

    def test_fusion_respects_other_users(self):
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
        ce.export_module(m, self.path, (1, 3, 6, 6), resize=("squash", None))
        manifest, _ = self.check_outputs(m, (1, 3, 6, 6))
        graph = [(n["op"], n.get("attrs", {}).get("activation", "none"))
                 for n in manifest["graph"]]
        self.assertEqual(graph, [("conv2d", "relu"), ("clamp", "clamp"), ("add", "none"),
                                 ("global_avg_pool", "none"), ("flatten", "none")])

    # -- errors: one line naming op and location, exit 1, no file --

    def check_refused(self, result, *needles, lines=1):
        """Exit 1, `lines` lines on stderr holding every needle, nothing written."""
        self.assertEqual(result.returncode, 1, result.stderr)
        got = result.stderr.strip().splitlines()
        self.assertEqual(len(got), lines, result.stderr)
        for needle in needles:
            self.assertIn(needle, "\n".join(got))
        self.assertFalse(os.path.exists(self.path))
        self.assertEqual(os.listdir(self.dir.name), [p for p in os.listdir(self.dir.name)
                                                     if not p.startswith(".m.ccm")])

    def test_unsupported_function(self):
        # Every kind of unsupported op at once, each with the user's line; what only depends
        # on an unsupported result (the add) is not reported again; a kind met twice is
        # reported once with a count.
        src = os.path.join(self.dir.name, "mynet.py")
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
        r = self.run_cli("--module", src + ":Net", "--input-size", "8", "--resize", "squash",
                         "--num-classes", "4", "-o", self.path)
        self.check_refused(r, "2 kinds of op that camclass cannot export",
                           "unsupported op torch.tanh at ", "mynet.py:11 in forward",
                           "(and 1 more)", "unsupported op torch._C._nn.gelu at ",
                           "mynet.py:12 in forward `z = F.gelu(self.conv(x)) + y`", lines=3)

    def test_untraceable_names_user_line(self):
        src = os.path.join(self.dir.name, "branchy.py")
        with open(src, "w") as f:
            f.write(textwrap.dedent("""\
                import torch.nn as nn

                class Net(nn.Module):
                    def forward(self, x):
                        if x.sum() > 0:
                            return x.mean((2, 3))
                        return -x.mean((2, 3))
                """))
        r = self.run_cli("--module", src + ":Net", "--input-size", "8", "--resize", "squash",
                         "--num-classes", "3", "-o", self.path)
        self.check_refused(r, "cannot trace Net with torch.fx at ",
                           "branchy.py:5 in forward `if x.sum() > 0:`")

    def test_unsupported_module(self):
        class GeluNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 1)
                self.act = nn.GELU()

            def forward(self, x):
                return torch.flatten(self.act(self.conv(x)).mean((2, 3), keepdim=True), 1)

        with self.assertRaises(ce.ExportError) as cm:
            ce.export_module(GeluNet(), self.path, (1, 3, 8, 8), resize=("squash", None))
        msg = str(cm.exception)
        self.assertIn("unsupported op torch.nn.GELU", msg)
        self.assertIn("module act", msg)
        self.assertIn("test_exporter.py", msg)
        self.assertFalse(os.path.exists(self.path))

    def test_unsupported_torchvision_model(self):
        # convnext uses LayerNorm, GELU, permute and a bare parameter (layer_scale): all named
        r = self.run_cli("--model", "convnext_tiny", "--random-seed", "1", "--input-size", "32",
                         "--resize", "squash", "-o", self.path)
        self.check_refused(r, "6 kinds of op", "unsupported op torch.nn.LayerNorm",
                           "unsupported op torch.nn.GELU", "Tensor.permute", "convnext.py:",
                           "reads a parameter directly", lines=7)

    def test_untraceable(self):
        class Branchy(nn.Module):
            def forward(self, x):
                return x.flatten(1) if x.sum() > 0 else -x.flatten(1)

        with self.assertRaises(ce.ExportError) as cm:
            ce.export_module(Branchy(), self.path, (1, 3, 4, 4), resize=("squash", None))
        self.assertIn("cannot trace", str(cm.exception))
        self.assertFalse(os.path.exists(self.path))

    def test_existing_bundle_kept_on_failure(self):
        with open(self.path, "wb") as f:
            f.write(b"old")
        class Bad(nn.Module):
            def forward(self, x):
                return torch.tanh(x).flatten(1)
        with self.assertRaises(ce.ExportError):
            ce.export_module(Bad(), self.path, (1, 3, 4, 4), resize=("squash", None))
        with open(self.path, "rb") as f:
            self.assertEqual(f.read(), b"old")
        self.assertEqual(os.listdir(self.dir.name), ["m.ccm"])

    def test_format_limits(self):
        class BigStride(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 1, stride=65)

            def forward(self, x):
                return torch.flatten(self.conv(x), 1)

        with self.assertRaises(ce.ExportError) as cm:
            ce.export_module(BigStride(), self.path, (1, 3, 8, 8), resize=("squash", None))
        self.assertIn("node conv: kernel [1, 1], stride [65, 65]", str(cm.exception))
        self.assertFalse(os.path.exists(self.path))

    # -- labels --

    def test_labels(self):
        m = randomize_bn(ConvBnRelu6())
        with self.assertRaises(ce.ExportError) as cm:
            ce.export_module(m, self.path, (1, 3, 8, 8), labels=["a", "b"],
                             resize=("squash", None))
        self.assertIn("2 labels for a model with 5 classes", str(cm.exception))
        self.assertFalse(os.path.exists(self.path))
        with self.assertRaises(ce.ExportError):
            ce.export_module(m, self.path, (1, 3, 8, 8), labels=["a", "", "c", "d", "e"],
                             resize=("squash", None))
        ce.export_module(m, self.path, (1, 3, 8, 8), resize=("squash", None))
        manifest, _, labels, _ = load(self.path)
        self.assertEqual(labels, ["class_%d" % i for i in range(5)])
        self.assertEqual(manifest["labels"], {"entry": "labels.txt"})

    def test_cli_mobilenet_v2_labels_file(self):
        labels = os.path.join(self.dir.name, "labels.txt")
        with open(labels, "w") as f:
            f.write("".join("thing %d\n" % i for i in range(10)))
        r = self.run_cli("--model", "mobilenet_v2", "--random-seed", "4", "--labels", labels,
                         "--input-size", "96", "--resize", "center_crop:110", "-o", self.path)
        self.assertEqual(r.returncode, 0, r.stderr)
        manifest, consts, got, _ = load(self.path)
        self.assertEqual(got, ["thing %d" % i for i in range(10)])
        self.assertEqual(manifest["output"]["classes"], 10)
        self.assertEqual(manifest["input"]["shape"], [1, 3, 96, 96])
        # a torchvision model resizes as PIL does by default (format version 3)
        self.assertEqual(manifest["input"]["resize"],
                         {"policy": "center_crop", "size": 110, "antialias": True})
        self.assertEqual(manifest["version"], 3)
        self.assertIn("antialias on", r.stdout)
        self.assertEqual(manifest["name"], "mobilenet_v2")
        ops = [n["op"] for n in manifest["graph"]]
        self.assertEqual(ops.count("conv2d"), 52)
        self.assertEqual(ops.count("add"), 10)
        self.assertNotIn("clamp", ops)
        self.check_layout()
        # the original, unfused module with the same seed computes the same logits
        module = ce.build_torchvision_model("mobilenet_v2", 10, random_seed=4,
                                            input_shape=(1, 3, 96, 96))
        # 52 convolutions in PyTorch's float32 against the graph in float64: 1e-5 is the
        # order of float32's own error over that depth (calibrated statistics keep the
        # activations alive), so the whole-network tolerance of the C tests applies
        self.check_outputs(module, (1, 3, 96, 96), tol=1e-4)

    def test_cli_user_module_with_weights(self):
        """--module FILE:CLASS --weights state_dict.pth: the bundle computes what the module
        with those weights computes (not its fresh initialization)."""
        sys.path.insert(0, ENGINE_TESTS)
        from small_net import SmallNet
        m = randomize_bn(SmallNet(), seed=9)
        weights = os.path.join(self.dir.name, "small.pth")
        torch.save(m.state_dict(), weights)
        r = self.run_cli("--module", os.path.join(ENGINE_TESTS, "small_net.py") + ":SmallNet",
                         "--weights", weights, "--input-size", "13", "--resize", "squash",
                         "-o", self.path)
        self.assertEqual(r.returncode, 0, r.stderr)
        manifest, _ = self.check_outputs(m, (1, 3, 13, 13))
        self.assertEqual(manifest["name"], "SmallNet")
        self.assertEqual(manifest["output"]["kind"], "probabilities")
        # a user's module keeps the resize without antialias, format version 1, by default
        self.assertEqual((manifest["version"], manifest["input"]["resize"]),
                         (1, {"policy": "squash"}))
        self.assertIn("antialias off", r.stdout)
        # a state_dict for another module is refused in one line, nothing written
        os.unlink(self.path)
        torch.save(ConvBnRelu6().state_dict(), weights)
        r = self.run_cli("--module", os.path.join(ENGINE_TESTS, "small_net.py") + ":SmallNet",
                         "--weights", weights, "--input-size", "13", "-o", self.path)
        self.check_refused(r, "cannot load", "small.pth")

    def test_antialias(self):
        """--antialias on|off overrides the default (on for --model, off for --module); with
        activation quantization too the bundle is version 3; --bundle keeps its own resize;
        a non-boolean is refused."""
        small = os.path.join(ENGINE_TESTS, "small_net.py") + ":SmallNet"
        r = self.run_cli("--module", small, "--random-seed", "1", "--input-size", "13",
                         "--resize", "center_crop:15", "--antialias", "on", "-o", self.path)
        self.assertEqual(r.returncode, 0, r.stderr)
        manifest, _, _, _ = load(self.path)
        self.assertEqual((manifest["version"], manifest["input"]["resize"]),
                         (3, {"policy": "center_crop", "size": 15, "antialias": True}))
        # quantizing it with calibration: version 3 stays (it includes version 2's "quant"),
        # and the calibration images are resized as PIL does (ccm_calibrate.preprocess)
        q = os.path.join(self.dir.name, "q.ccm")
        r = self.run_cli("--bundle", self.path, "--quantize", "int8", "--calibrate", SAMPLES,
                         "--calibrate-limit", "4", "-o", q)
        self.assertEqual(r.returncode, 0, r.stderr)
        with zipfile.ZipFile(q) as z:
            manifest = json.loads(z.read("manifest.json"))
        self.assertEqual(manifest["version"], 3)
        self.assertTrue(manifest["input"]["resize"]["antialias"])
        self.assertTrue(any("quant" in t and "data" not in t for t in manifest["tensors"]))
        os.unlink(q)
        r = self.run_cli("--bundle", self.path, "--quantize", "int8", "--antialias", "off",
                         "-o", q)
        self.assertEqual(r.returncode, 1)
        self.assertIn("--bundle keeps the bundle's own resize", r.stderr)
        self.assertFalse(os.path.exists(q))
        # a torchvision model told off: no "antialias" key at all, version 1
        r = self.run_cli("--model", "mobilenet_v2", "--random-seed", "1", "--num-classes", "3",
                         "--input-size", "32", "--antialias", "off", "-o", self.path)
        self.assertEqual(r.returncode, 0, r.stderr)
        manifest, _, _, _ = load(self.path)
        self.assertEqual((manifest["version"], manifest["input"]["resize"]),
                         (1, {"policy": "center_crop", "size": 36}))
        with self.assertRaises(ce.ExportError):
            ce.export_module(ConvBnRelu6().eval(), self.path, (1, 3, 8, 8),
                             resize=("squash", None), antialias="yes")

    def test_imagenet_labels_default(self):
        labels = ce.imagenet_labels()
        if labels is not None:  # torchvision ships them in 0.14
            self.assertEqual(len(labels), 1000)
            self.assertEqual(labels[0], "tench")


if __name__ == "__main__":
    unittest.main(verbosity=2)
