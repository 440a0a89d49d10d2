#!/usr/bin/python3
"""The torch-free mobilenet_v2 builder (python/camclass_export/mobilenet_v2_builder.py, what
camclass-fetch-imagenet runs) against the torch exporter (export.py), for the same weights.

    test_mobilenet_v2_builder.py [CAMCLASS_BENCH]

A torchvision mobilenet_v2 with seeded random weights and BatchNorm statistics is saved with
torch.save; the builder's bundle (from the .pth read by checkpoint.py) and the exporter's bundle
(from the module, torch.fx) must have the same manifest (nodes, names, attributes, shapes, input
spec, labels, version), the same tensors (within 1e-6 relative; they are in fact equal), the same
outputs in float64 (ccm_bundle.run_graph), each within ENGINE_RTOL of those in camclass's C
engine (camclass-bench --save-output, when given), and the builder's graph must match the PyTorch module within
export.VERIFY_TOLERANCE. A wrong stride, a BatchNorm folded with another eps or not at all, a
missing residual add: each changes the manifest, a tensor or the output, and fails here.
Also: the ImageNet category names kept in the source tree and the default URL are torchvision's,
and a state_dict of another shape is refused with one line naming the key.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch

from camclass_export import ccm_bundle, checkpoint, fetch_imagenet
from camclass_export import export as ce
from camclass_export import mobilenet_v2_builder as mb
from checks import host_command

BENCH = sys.argv.pop(1) if len(sys.argv) > 1 else None
SEED = 7
TENSOR_RTOL = 1e-6  # |builder - exporter| <= this x max|exporter tensor|, per tensor
OUTPUT_RTOL = 1e-6  # the two bundles' outputs in the float64 reference
# camclass's C engine (f32) against that reference, per bundle: the CPU backend picks each
# layer's kernels by timing them at load, separately for each bundle (another model hash), so the
# two bundles may run on different kernels (fused or not, BLIS or XNNPACK), whose f32 sums round
# apart: 1.75e-6 x max was seen between the two bundles.
ENGINE_RTOL = 1e-5

torch.set_num_threads(1)


def max_rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.abs(a - b).max()) / max(float(np.abs(b).max()), 1e-30)


class Builder(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="camclass-test-mbv2-")
        cls.model = ce.build_torchvision_model("mobilenet_v2", 1000, random_seed=SEED)
        cls.pth = os.path.join(cls.tmp, "weights.pth")
        torch.save(cls.model.state_dict(), cls.pth)
        cls.torch_ccm = os.path.join(cls.tmp, "torch.ccm")
        ce.export_module(cls.model, cls.torch_ccm, (1, 3, 224, 224), None, mb.NAME, "RGB",
                         ce.IMAGENET_MEAN, ce.IMAGENET_STD, ("center_crop", 256),
                         antialias=True)
        cls.state = checkpoint.read(cls.pth, use_numpy=True)
        cls.built_ccm = os.path.join(cls.tmp, "built.ccm")
        mb.write_bundle(mb.build_graph(cls.state), cls.built_ccm)
        cls.ref = ccm_bundle.read_bundle(cls.torch_ccm)
        cls.got = ccm_bundle.read_bundle(cls.built_ccm)
        g = torch.Generator().manual_seed(SEED)
        cls.inputs = [torch.randn(1, 3, 224, 224, generator=g) for _ in range(2)]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_labels_and_url_are_torchvision(self):
        from torchvision.models import MobileNet_V2_Weights
        weights = MobileNet_V2_Weights.IMAGENET1K_V1
        self.assertEqual(ce.imagenet_labels(), list(weights.meta["categories"]))
        self.assertEqual(fetch_imagenet.DEFAULT_URL, weights.url)

    def test_same_manifest(self):
        ref, got = self.ref[0], self.got[0]
        self.assertEqual([(n["op"], n["name"]) for n in got["graph"]],
                         [(n["op"], n["name"]) for n in ref["graph"]])
        self.assertEqual(len(got["graph"]), 65)
        self.assertEqual(sum(n["op"] == "add" for n in got["graph"]), 10)
        for a, b in zip(got["graph"], ref["graph"]):
            self.assertEqual(a, b)
        for a, b in zip(got["tensors"], ref["tensors"]):
            self.assertEqual(a, b)
        self.assertEqual(got, ref)  # input spec, output, version, name, labels entry
        self.assertEqual(got["version"], 3)
        self.assertEqual(self.got[2], self.ref[2])

    def test_same_tensors(self):
        ref, got = self.ref[1], self.got[1]
        self.assertEqual(sorted(got), sorted(ref))
        for name in ref:
            self.assertEqual(got[name].shape, ref[name].shape, name)
            self.assertLessEqual(max_rel(got[name], ref[name]), TENSOR_RTOL, name)

    def test_same_outputs_and_pytorch(self):
        for x in self.inputs:
            with torch.no_grad():
                module = self.model(x).double().numpy()
            ref = ccm_bundle.run_graph(self.ref[0], self.ref[1], x.numpy())
            got = ccm_bundle.run_graph(self.got[0], self.got[1], x.numpy())
            self.assertLessEqual(max_rel(got, ref), OUTPUT_RTOL)
            self.assertLessEqual(max_rel(got, module), ce.VERIFY_TOLERANCE)
        moved = max_rel(self.model(self.inputs[0]).detach(), self.model(self.inputs[1]).detach())
        self.assertGreater(moved, 0.05, "the random model ignores its input")

    @unittest.skipIf(BENCH is None, "camclass-bench not given")
    def test_same_outputs_in_camclass(self):
        outs = []
        for path in (self.built_ccm, self.torch_ccm):
            inp, out = os.path.join(self.tmp, "in.f32"), os.path.join(self.tmp, "out.f32")
            self.inputs[0].numpy().astype("<f4").tofile(inp)
            r = subprocess.run(host_command(BENCH) + [path, "--backend", "cpu", "--runs", "1",
                                                      "--warmup", "0", "--threads", "1",
                                                      "--input", inp, "--save-output", out],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            outs.append(np.fromfile(out, dtype="<f4"))
        ref = ccm_bundle.run_graph(self.ref[0], self.ref[1], self.inputs[0].numpy()).reshape(-1)
        for out in outs:
            self.assertEqual(out.shape, (1000,))
            self.assertLessEqual(max_rel(out, ref), ENGINE_RTOL)

    def refused(self, state, *parts):
        with self.assertRaises(mb.StateDictError) as cm:
            mb.build_graph(state)
        msg = str(cm.exception)
        self.assertEqual(len(msg.splitlines()), 1, msg)
        for p in parts:
            self.assertIn(p, msg)

    def test_other_state_dicts_refused(self):
        state = dict(self.state)
        del state["features.5.conv.1.1.running_var"]
        self.refused(state, "missing key features.5.conv.1.1.running_var")
        state = dict(self.state, **{"features.19.0.weight": np.zeros(3, np.float32)})
        self.refused(state, "unexpected key features.19.0.weight")
        state = dict(self.state)
        state["classifier.1.weight"] = np.zeros((10, 1280), np.float32)
        self.refused(state, "classifier.1.weight has shape [10, 1280]", "[1000, 1280]")
        self.refused([1, 2], "a list, not a state_dict")

    def test_failed_check_writes_nothing(self):
        """The read-back check runs before the rename: a bundle that reads back different
        leaves the destination as it was."""
        out = os.path.join(self.tmp, "checked.ccm")
        with open(out, "wb") as f:
            f.write(b"older")
        graph = mb.build_graph(self.state)
        real = mb.ccm_format.read_bundle

        def damaged(path):
            manifest, consts, labels = real(path)
            consts["features.0.0.bias"] = consts["features.0.0.bias"] + 1
            return manifest, consts, labels
        mb.ccm_format.read_bundle = damaged
        try:
            with self.assertRaisesRegex(mb.ExportError, "features.0.0.bias reads back"):
                mb.write_bundle(graph, out)
        finally:
            mb.ccm_format.read_bundle = real
        with open(out, "rb") as f:
            self.assertEqual(f.read(), b"older")
        self.assertEqual([n for n in os.listdir(self.tmp) if n.endswith(".tmp")], [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
