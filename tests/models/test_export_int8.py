#!/usr/bin/python3
"""The exporter's int8 weights (camclass_export --quantize int8) against the layout of
docs/MODEL_FORMAT.md, "i8 tensors": parsed here with zipfile + json, not with the exporter's
reader.

- every conv2d/linear weight is i8 with "quant": {"axis": 0, "scales": ref}; data size = count,
  scales size = shape[0] x 4, both offsets multiples of 64 inside the entry; biases stay f32;
- scale[o] = f32(max |w[o]| / 127) of the folded f32 weight (the fp32 export of the same
  module), q = round(w / scale) in [-127, 127] with some |q| = 127 in every non-zero channel,
  so |q x scale - w| <= scale / 2;
- the quantized graph stays close to the module (cosine > 0.999 on random inputs) and the fp32
  export of the same module is unchanged by the option's existence (all f32, no "quant").
"""

import json
import os
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(HERE, "..", "..", "tools")
from camclass_export import ccm_bundle  # noqa: E402
from camclass_export import export as ce  # noqa: E402

from checks import check, summary  # noqa: E402

torch.set_num_threads(1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pw = nn.Conv2d(8, 16, 1)
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        x = torch.clamp(self.bn(self.conv(x)), 0, 6)
        x = torch.relu(self.pw(self.dw(x)))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def parse(path):
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json"))
        blobs = {i.filename: z.read(i.filename) for i in z.infolist()}
    return manifest, blobs


def main():
    torch.manual_seed(5)
    net = Net().eval()
    with torch.no_grad():
        net.bn.running_mean.uniform_(-0.5, 0.5)
        net.bn.running_var.uniform_(0.5, 2)
        net.dw.weight[3].zero_()  # an all-zero output channel: scale 1, q = 0
    tmp = tempfile.mkdtemp(prefix="ccm-int8-")
    f32_path, i8_path = os.path.join(tmp, "f32.ccm"), os.path.join(tmp, "i8.ccm")
    ce.export_module(net, f32_path, (1, 3, 16, 16), ["a", "b", "c", "d", "e"], name="n",
                     resize=("squash", None))
    info = ce.export_module(net, i8_path, (1, 3, 16, 16), ["a", "b", "c", "d", "e"], name="n",
                            resize=("squash", None), quantize="int8")
    check(info["quantized_cosine"] > 0.999, "quantized cosine %s" % info["quantized_cosine"])

    mf, blobs_f = parse(f32_path)
    mq, blobs_q = parse(i8_path)
    check(all(t["dtype"] == "f32" and "quant" not in t for t in mf["tensors"]),
          "the fp32 export has only f32 tensors")
    tf = {t["name"]: t for t in mf["tensors"]}
    tq = {t["name"]: t for t in mq["tensors"]}
    check(mf["graph"] == mq["graph"], "same graph with and without --quantize")
    weights = {n["inputs"][1] for n in mq["graph"] if n["op"] in ("conv2d", "linear")}
    check(len(weights) == 4, "4 weights, got %d" % len(weights))
    for name, t in tq.items():
        if "data" not in t:
            check(t["dtype"] == "f32", "%s: activation is f32" % name)
            continue
        d = t["data"]
        check(d["offset"] % 64 == 0, "%s: data offset %d is 64-aligned" % (name, d["offset"]))
        ref = np.frombuffer(blobs_f[tf[name]["data"]["entry"]], "<f4",
                            int(np.prod(t["shape"])), tf[name]["data"]["offset"])
        if name not in weights:
            check(t["dtype"] == "f32" and "quant" not in t, "%s: bias stays f32" % name)
            continue
        count = int(np.prod(t["shape"]))
        check(t["dtype"] == "i8" and d["size"] == count, "%s: i8, size %d == count %d"
              % (name, d["size"], count))
        quant = t.get("quant", {})
        s = quant.get("scales", {})
        check(quant.get("axis") == 0 and set(quant) == {"axis", "scales"}, "%s: quant %s"
              % (name, quant))
        check(s.get("size") == t["shape"][0] * 4 and s.get("offset", 1) % 64 == 0 and
              s["offset"] + s["size"] <= len(blobs_q[s["entry"]]),
              "%s: scales ref %s for %d channels" % (name, s, t["shape"][0]))
        q = np.frombuffer(blobs_q[d["entry"]], np.int8, count, d["offset"])
        q = q.reshape(t["shape"][0], -1).astype(np.float32)
        scales = np.frombuffer(blobs_q[s["entry"]], "<f4", t["shape"][0], s["offset"])
        w = ref.reshape(t["shape"][0], -1)
        amax = np.abs(w).max(axis=1)
        want = np.where(amax > 0, (amax.astype(np.float64) / 127).astype(np.float32), 1)
        check(np.array_equal(scales, want), "%s: scale = f32(max|w| / 127)" % name)
        check(np.abs(q).max() <= 127, "%s: q within [-127, 127]" % name)
        check(all(np.abs(q[o]).max() == 127 for o in range(len(q)) if amax[o] > 0),
              "%s: every non-zero channel reaches |q| = 127" % name)
        err = np.abs(q * scales[:, None] - w).max(axis=1)
        check(np.all(err <= scales / 2 * (1 + 1e-6)), "%s: |q*scale - w| <= scale/2" % name)
        if name == "dw.weight":
            check(scales[3] == 1 and not q[3].any(), "%s: zero channel -> scale 1, q 0" % name)

    # The exporter's reader dequantizes i8; the graph stays close to the module.
    manifest, consts, _ = ccm_bundle.read_bundle(i8_path)
    g = torch.Generator().manual_seed(1)
    for _ in range(3):
        x = torch.randn(1, 3, 16, 16, generator=g)
        with torch.no_grad():
            ref = net(x).double().numpy().ravel()
        got = ccm_bundle.run_graph(manifest, consts, x.numpy()).ravel()
        cos = np.dot(got, ref) / (np.linalg.norm(got) * np.linalg.norm(ref))
        check(cos > 0.999, "int8 graph cosine %.6f vs the module" % cos)

    # Command line, and a bad value.
    cli = subprocess.run([sys.executable, os.path.join(TOOLS, "camclass-export"), "--model",
                          "mobilenet_v2", "--random-seed", "1", "--num-classes", "10",
                          "--input-size", "64", "--quantize", "int8", "-o",
                          os.path.join(tmp, "mb.ccm")], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=240)
    check(cli.returncode == 0 and "int8 weights" in cli.stdout, "CLI: %s" % cli.stdout)
    mm, _ = parse(os.path.join(tmp, "mb.ccm"))
    n_i8 = sum(t["dtype"] == "i8" for t in mm["tensors"])
    n_w = sum(n["op"] in ("conv2d", "linear") for n in mm["graph"])
    check(n_i8 == n_w, "mobilenet_v2: %d i8 tensors for %d conv2d/linear nodes" % (n_i8, n_w))
    try:
        ce.export_module(net, os.path.join(tmp, "bad.ccm"), (1, 3, 16, 16), list("abcde"),
                         quantize="int4")
        check(False, "quantize=int4 accepted")
    except ce.ExportError as e:
        check("int8" in str(e), "quantize=int4: %s" % e)
    check(not os.path.exists(os.path.join(tmp, "bad.ccm")), "nothing written on error")
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
