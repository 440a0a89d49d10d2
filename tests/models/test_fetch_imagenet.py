#!/usr/bin/python3
"""tools/camclass-fetch-imagenet without the internet and without PyTorch: a mobilenet_v2
state_dict with seeded random weights and BatchNorm statistics, saved here (with torch) and named
with its own sha256 prefix like the official file, is served over file:// and over an HTTP server
on 127.0.0.1 (started here in a thread, stopped at the end or after SERVER_LIFETIME seconds at
most); the tool runs where torch and torchvision cannot be imported (checks.hiding_modules).

    test_fetch_imagenet.py [CAMCLASS_BENCH]

Checked: the installed bundle (zip entries stored with good CRCs, manifest, torchvision's 1000
ImageNet labels, 106 constant tensors, two folded tensors against the float64 BatchNorm
formula, logits of the written graph within 1e-4 x max |logit| of the PyTorch module on a random
input, and camclass's own loader via camclass-bench when given); a wrong sha256 prefix, a closed
port, a stalled server, HTTP 404 and a file that is not a state_dict each exit 1 with one line and
leave the destination (and the temporary directory) as they were; an installed bundle is kept
without --force.
"""

import functools
import hashlib
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import unittest
import zipfile

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(HERE, "..", "..", "tools")
FETCH = os.path.join(TOOLS, "camclass-fetch-imagenet")
from camclass_export import ccm_bundle  # noqa: E402
from camclass_export import export as ce  # noqa: E402
from checks import free_port, hiding_modules, host_command  # noqa: E402

BENCH = sys.argv.pop(1) if len(sys.argv) > 1 else None
BUNDLE = "mobilenet_v2-imagenet.ccm"
SEED = 5
SERVER_LIFETIME = 120  # seconds; the whole test takes ~30
TOLERANCE = 1e-4  # max |bundle logits - pytorch logits| <= this x max |pytorch logits|

torch.set_num_threads(1)


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def listing(path):
    """{name: (size, mtime_ns, sha256)} of a folder, None if it does not exist."""
    if not os.path.isdir(path):
        return None
    out = {}
    for name in sorted(os.listdir(path)):
        p = os.path.join(path, name)
        with open(p, "rb") as f:
            out[name] = (os.path.getsize(p), os.stat(p).st_mtime_ns,
                         hashlib.sha256(f.read()).hexdigest())
    return out


class FetchImagenet(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="camclass-test-fetch-")
        cls.served = os.path.join(cls.root, "served")
        cls.tmpdir = os.path.join(cls.root, "tmp")  # the tool's TMPDIR: must stay empty
        os.makedirs(cls.served)
        os.makedirs(cls.tmpdir)

        cls.model = ce.build_torchvision_model("mobilenet_v2", 1000, random_seed=SEED)
        src = os.path.join(cls.served, "src.pth")
        torch.save(cls.model.state_dict(), src)
        with open(src, "rb") as f:
            data = f.read()
        cls.prefix = hashlib.sha256(data).hexdigest()[:8]
        cls.good = "mobilenet_v2-%s.pth" % cls.prefix
        os.rename(src, os.path.join(cls.served, cls.good))
        # the same bytes under a name promising another hash
        cls.wrong = "%08x" % (int(cls.prefix, 16) ^ 0x5a5a5a5a)
        cls.bad = "mobilenet_v2-%s.pth" % cls.wrong
        shutil.copy(os.path.join(cls.served, cls.good), os.path.join(cls.served, cls.bad))
        # not a state_dict, but named with its true hash
        junk = np.random.default_rng(SEED).bytes(100000)
        cls.junk = "mobilenet_v2-%s.pth" % hashlib.sha256(junk).hexdigest()[:8]
        with open(os.path.join(cls.served, cls.junk), "wb") as f:
            f.write(junk)

        cls.server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Quiet, directory=cls.served))
        cls.http = "http://127.0.0.1:%d/" % cls.server.server_address[1]
        cls.thread = threading.Thread(target=cls.server.serve_forever, args=(0.1,),
                                      daemon=True)
        cls.thread.start()
        cls.deadline = threading.Timer(SERVER_LIFETIME, cls.server.shutdown)
        cls.deadline.daemon = True
        cls.deadline.start()

    @classmethod
    def tearDownClass(cls):
        cls.deadline.cancel()
        cls.server.shutdown()
        cls.server.server_close()
        cls.thread.join(10)
        shutil.rmtree(cls.root, ignore_errors=True)

    def file_url(self, name):
        return "file://" + os.path.join(self.served, name)

    def fetch(self, *args, timeout=180):
        """The tool run where torch and torchvision cannot be imported (it needs neither)."""
        env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
        env = hiding_modules(os.path.join(self.root, "no-torch"), ["torch", "torchvision"], env)
        env["TMPDIR"] = self.tmpdir
        r = subprocess.run([sys.executable, FETCH, *args], capture_output=True, text=True,
                           env=env, timeout=timeout)
        left = os.listdir(self.tmpdir)
        for name in left:  # so that the next test starts clean
            os.unlink(os.path.join(self.tmpdir, name))
        self.assertEqual(left, [], "temporary files left behind")
        return r

    def dest(self, name):
        return os.path.join(self.root, name)

    def assert_one_line_failure(self, r, *parts):
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, "")
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("fetch_imagenet: "), lines[0])
        for p in parts:
            self.assertIn(p, lines[0])
        return lines[0]

    def offline_line(self, url, reason):
        return ("fetch_imagenet: cannot download %s: %s; camclass keeps using the self-test model "
                "(selftest.ccm). Copy the .pth by hand and run with "
                "--url file:///path/to/mobilenet_v2-b0353104.pth" % (url, reason))

    def sentinel(self, name):
        """A folder holding an older 'installed' bundle."""
        d = self.dest(name)
        os.makedirs(d)
        with open(os.path.join(d, BUNDLE), "wb") as f:
            f.write(b"an older bundle")
        return d

    # -----------------------------------------------------------------------------------------
    # The installed bundle
    # -----------------------------------------------------------------------------------------

    def check_bundle(self, dest):
        self.assertEqual(os.listdir(dest), [BUNDLE])
        path = os.path.join(dest, BUNDLE)
        with zipfile.ZipFile(path) as z:
            self.assertEqual(sorted(z.namelist()), ["labels.txt", "manifest.json", "weights.bin"])
            self.assertIsNone(z.testzip())
            self.assertEqual(z.getinfo("weights.bin").compress_type, zipfile.ZIP_STORED)
            manifest = json.loads(z.read("manifest.json"))
            labels = z.read("labels.txt").decode("utf-8").rstrip("\n").split("\n")
            weights = z.read("weights.bin")
        self.assertEqual((manifest["format"], manifest["version"]), ("camclass-bundle", 3))
        self.assertEqual(manifest["name"], "mobilenet_v2-imagenet")
        inp = manifest["input"]
        self.assertEqual(inp["shape"], [1, 3, 224, 224])
        self.assertEqual(inp["color_order"], "RGB")
        np.testing.assert_allclose(inp["mean"], [0.485, 0.456, 0.406])
        np.testing.assert_allclose(inp["std"], [0.229, 0.224, 0.225])
        self.assertEqual(inp["resize"], {"policy": "center_crop", "size": 256, "antialias": True})
        self.assertEqual(manifest["output"]["classes"], 1000)
        self.assertEqual(manifest["output"]["kind"], "logits")

        from torchvision.models import MobileNet_V2_Weights
        self.assertEqual(labels, list(MobileNet_V2_Weights.IMAGENET1K_V1.meta["categories"]))
        self.assertEqual(labels[0], "tench")

        # every Conv2d+BN pair becomes one conv2d with weight and bias, plus the Linear
        layers = [m for m in self.model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
        consts = {}
        for t in manifest["tensors"]:
            if "data" in t:
                d = t["data"]
                self.assertEqual(d["offset"] % 64, 0)
                raw = weights[d["offset"]:d["offset"] + d["size"]]
                consts[t["name"]] = np.frombuffer(raw, "<f4").reshape(t["shape"])
        self.assertEqual(len(layers), 53)
        self.assertEqual(len(consts), 2 * len(layers))
        self.assertEqual(len(manifest["tensors"]), 1 + len(consts) + len(manifest["graph"]))

        # two folded tensors, from the state_dict in float64
        sd = {k: v.double().numpy() for k, v in self.model.state_dict().items()}
        scale = sd["features.0.1.weight"] / np.sqrt(sd["features.0.1.running_var"] + 1e-5)
        np.testing.assert_allclose(consts["features.0.0.weight"],
                                   sd["features.0.0.weight"] * scale[:, None, None, None],
                                   rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(consts["features.0.0.bias"],
                                   sd["features.0.1.bias"] - sd["features.0.1.running_mean"] *
                                   scale, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(consts["classifier.1.weight"],
                                      self.model.classifier[1].weight.detach().numpy())

        # the written graph against the PyTorch module
        x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(11))
        with torch.no_grad():
            ref = self.model(x).double().numpy()
        got = ccm_bundle.run_graph(manifest, consts, x.numpy())
        err = float(np.abs(got - ref).max())
        self.assertLessEqual(err, TOLERANCE * float(np.abs(ref).max()))
        self.assertEqual(int(got.argmax()), int(ref.argmax()))

        # camclass's own loader (engine/bundle/bundle.c) accepts it and runs it
        if BENCH:
            r = subprocess.run(host_command(BENCH) + [path, "--backend", "cpu", "--runs", "1",
                                                      "--warmup", "0", "--threads", "1"],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
        with open(path, "rb") as f:
            return f.read()

    def test_file_url_installs(self):
        d = self.dest("file")
        r = self.fetch("--url", self.file_url(self.good), "--dest", d)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("installed " + os.path.join(d, BUNDLE), r.stdout)
        self.check_bundle(d)

    def test_http_url_installs_over_older_with_force(self):
        d = self.sentinel("http")
        r = self.fetch("--url", self.http + self.good, "--dest", d, "--force")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_bundle(d)

    def test_installed_bundle_kept_without_force(self):
        d = self.sentinel("kept")
        before = listing(d)
        url = "http://127.0.0.1:%d/%s" % (free_port(), self.good)
        r = self.fetch("--url", url, "--dest", d)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("already installed", r.stdout)
        self.assertEqual(listing(d), before)

    # -----------------------------------------------------------------------------------------
    # Failures: one line, exit 1, nothing changed
    # -----------------------------------------------------------------------------------------

    def test_hash_mismatch_file_creates_nothing(self):
        d = self.dest("mismatch-file")
        r = self.fetch("--url", self.file_url(self.bad), "--dest", d)
        line = self.assert_one_line_failure(r, "sha256 mismatch")
        self.assertIn("expected prefix %s" % self.wrong, line)
        self.assertIn("got %s" % self.prefix, line)
        self.assertIsNone(listing(d))

    def test_hash_mismatch_http_keeps_installed(self):
        d = self.sentinel("mismatch-http")
        before = listing(d)
        r = self.fetch("--url", self.http + self.bad, "--dest", d, "--force")
        self.assert_one_line_failure(r, "expected prefix %s" % self.wrong,
                                     "got %s" % self.prefix)
        self.assertEqual(listing(d), before)

    def test_closed_port_is_offline(self):
        d = self.dest("offline")
        url = "http://127.0.0.1:%d/%s" % (free_port(), self.good)
        r = self.fetch("--url", url, "--dest", d)
        self.assert_one_line_failure(r)
        self.assertEqual(r.stderr.strip(), self.offline_line(url, "Connection refused"))
        self.assertIsNone(listing(d))

        d = self.sentinel("offline-installed")
        before = listing(d)
        r = self.fetch("--url", url, "--dest", d, "--force")
        self.assert_one_line_failure(r, "cannot download %s: " % url)
        self.assertEqual(listing(d), before)

    def test_stalled_server_times_out(self):
        with socket.socket() as s:  # listens, never accepts: the request waits for an answer
            s.bind(("127.0.0.1", 0))
            s.listen(1)
            url = "http://127.0.0.1:%d/%s" % (s.getsockname()[1], self.good)
            d = self.dest("stalled")
            r = self.fetch("--url", url, "--dest", d, "--timeout", "1", timeout=60)
        self.assert_one_line_failure(r)
        self.assertEqual(r.stderr.strip(), self.offline_line(url, "timed out"))
        self.assertIsNone(listing(d))

    def test_http_404(self):
        d = self.dest("404")
        url = self.http + "mobilenet_v2-b0353104.pth"
        r = self.fetch("--url", url, "--dest", d)
        self.assertEqual(r.stderr.strip(), self.offline_line(url, "HTTP 404 File not found"))
        self.assertIsNone(listing(d))

    def test_not_a_state_dict(self):
        d = self.dest("junk")
        r = self.fetch("--url", self.file_url(self.junk), "--dest", d)
        self.assert_one_line_failure(r, "not a mobilenet_v2 ImageNet state_dict")
        self.assertIsNone(listing(d))

    def test_unverifiable_name(self):
        d = self.dest("noname")
        r = self.fetch("--url", self.http + "mobilenet_v2.pth", "--dest", d)
        self.assert_one_line_failure(r, "carries no sha256 prefix")
        self.assertIsNone(listing(d))

    def test_help(self):
        r = self.fetch("--help")
        self.assertEqual(r.returncode, 0)
        for flag in ("--url", "--dest", "--force", "file://"):
            self.assertIn(flag, r.stdout)


if __name__ == "__main__":
    if BENCH is None:
        print("camclass-bench not given: the bundle is not loaded by camclass's own loader")
    unittest.main(verbosity=2)
