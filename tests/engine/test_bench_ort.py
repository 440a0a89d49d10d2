#!/usr/bin/python3
"""tools/bench_ort.js, ONNX Runtime's side of tools/perf_compare.sh. Skipped (77) where node or
onnxruntime-node (tools/setup.sh ort) is missing: nothing but that comparison needs them.

Bad flags, a model that does not load and a missing runtime exit 2 with one line; its fixed
input is camclass-bench's (an identity model hands it back, and camclass-bench's output on it
as --input equals its output on its own input); a Conv/Relu/GlobalAveragePool/Gemm model's output equals numpy's,
--reference reports the largest difference and a changed top-1, --profile prints per-op and
slowest-node tables of the timed runs, --trace keeps ONNX Runtime's profile; a wrong-sized
--input exits 2.

    test_bench_ort.py BENCH_ORT.js CAMCLASS_BENCH SELFTEST.ccm
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from checks import check, host_command, summary

SCRIPT, BENCH, SELFTEST = sys.argv[1:4]
NODE = shutil.which("node")
ORT_DIR = os.environ.get("CAMCLASS_ORT_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "camclass", "ort")
if not NODE or not os.path.isdir(os.path.join(ORT_DIR, "node_modules", "onnxruntime-node")):
    print(f"skipped: no node or no onnxruntime-node in {ORT_DIR} (tools/setup.sh ort)")
    sys.exit(77)


def ort(*args, env=None):
    return subprocess.run([NODE, SCRIPT, *args], capture_output=True, text=True, timeout=300,
                          env=env)


def one_line_exit2(r, what, words):
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2 and lines and lines[0].startswith("bench_ort: ") and
          all(w in lines[0] for w in words), f"{what}: exit {r.returncode}, {r.stderr!r}")


def save(model, path):
    onnx.checker.check_model(model)
    onnx.save(model, path)


def identity_model(path):
    """output = the input, flattened: the input ONNX Runtime was given, handed back."""
    x = helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])
    y = helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 3 * 224 * 224])
    g = helper.make_graph([helper.make_node("Flatten", ["input"], ["out"])], "id", [x], [y])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def small_net(path, rng):
    """Conv 3x3 (3->8) + Relu + GlobalAveragePool + Flatten + Gemm (8->10); returns its
    weights for numpy."""
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    fw = rng.standard_normal((10, 8)).astype(np.float32)
    fb = rng.standard_normal(10).astype(np.float32)
    nodes = [helper.make_node("Conv", ["input", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "fw", "fb"], ["logits"], transB=1)]
    inits = [numpy_helper.from_array(a, n) for a, n in ((w, "w"), (b, "b"), (fw, "fw"), (fb, "fb"))]
    g = helper.make_graph(nodes, "small", [helper.make_tensor_value_info(
        "input", TensorProto.FLOAT, [1, 3, 16, 16])], [helper.make_tensor_value_info(
            "logits", TensorProto.FLOAT, [1, 10])], inits)
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return w, b, fw, fb


def small_net_numpy(x, w, b, fw, fb):
    xp = np.pad(x[0].astype(np.float64), ((0, 0), (1, 1), (1, 1)))
    conv = np.zeros((8, 16, 16))
    for dy in range(3):
        for dx in range(3):
            conv += np.einsum("oc,chw->ohw", w[:, :, dy, dx], xp[:, dy:dy + 16, dx:dx + 16])
    pooled = np.maximum(conv + b[:, None, None], 0).mean(axis=(1, 2))
    return fw.astype(np.float64) @ pooled + fb


def reference_line(out):
    m = re.search(r"^reference .*: top-1 (\d+) vs (\d+) \((same top-1|TOP-1 DIFFERS)\), "
                  r"max \|diff\| (\S+) ", out, re.M)
    check(m is not None, f"no reference line in:\n{out}")
    return m


with tempfile.TemporaryDirectory() as tmp:
    p = lambda name: os.path.join(tmp, name)  # noqa: E731
    identity_model(p("id.onnx"))
    for bad in (["--runs", "0", p("id.onnx")], ["--bogus", p("id.onnx")], [],
                [p("id.onnx"), p("id.onnx")], [p("id.onnx"), "--input"]):
        one_line_exit2(ort(*bad), bad, [])
    with open(p("junk.onnx"), "wb") as f:
        f.write(b"not a model")
    for model in (p("missing.onnx"), p("junk.onnx")):
        one_line_exit2(ort(model, "--runs", "1"), model, ["cannot load", model])
    env = dict(os.environ, CAMCLASS_ORT_DIR=p("none"))
    one_line_exit2(ort(p("id.onnx"), env=env), "no runtime", ["not installed", "tools/setup.sh ort"])

    # camclass-bench's input: ONNX Runtime hands back its fixed input; camclass-bench on that
    # file gives the same output as on its own.
    r = ort(p("id.onnx"), "--runs", "1", "--warmup", "0", "--save-output", p("fixed.f32"))
    check(r.returncode == 0, f"identity run: exit {r.returncode}, {r.stderr!r}")
    fixed = np.fromfile(p("fixed.f32"), dtype="<f4")
    check(fixed.size == 3 * 224 * 224 and fixed.min() >= -2 and fixed.max() < 2 and fixed.std() > 1,
          f"fixed input: {fixed.size} values in [{fixed.min()}, {fixed.max()}]")
    outs = []
    for extra in ([], ["--input", p("fixed.f32")]):
        r = subprocess.run([*host_command(BENCH), SELFTEST, "--backend", "ref", "--runs", "1",
                            "--warmup", "0", "--save-output", p("cc.f32"), *extra],
                           capture_output=True, text=True, timeout=300)
        check(r.returncode == 0, f"camclass-bench {extra}: exit {r.returncode} {r.stderr!r}")
        outs.append(np.fromfile(p("cc.f32"), dtype="<f4"))
    check(np.array_equal(outs[0], outs[1]), "bench_ort.js's fixed input is not camclass-bench's")

    # A real network: numpy's output, --reference, --profile.
    rng = np.random.default_rng(5)
    weights = small_net(p("small.onnx"), rng)
    x = rng.uniform(-2, 2, (1, 3, 16, 16)).astype(np.float32)
    x.astype("<f4").tofile(p("x.f32"))
    want = small_net_numpy(x, *weights)
    want.astype("<f4").tofile(p("want.f32"))
    os.mkdir(p("tmp"))  # its TMPDIR: where the profile goes, and must not stay
    r = ort(p("small.onnx"), "--threads", "1", "--runs", "4", "--warmup", "1", "--input",
            p("x.f32"), "--save-output", p("got.f32"), "--reference", p("want.f32"), "--profile",
            "--trace", p("trace.json"), env=dict(os.environ, TMPDIR=p("tmp")))
    check(r.returncode == 0, f"small net: exit {r.returncode}, {r.stderr!r}")
    got = np.fromfile(p("got.f32"), dtype="<f4")
    err = np.abs(got - want).max() / np.abs(want).max()
    check(err < 1e-5, f"small net vs numpy: {err:.2e} x max")
    m = reference_line(r.stdout)
    if m:
        check(m[3] == "same top-1" and int(m[1]) == int(np.argmax(want)) and float(m[4]) < 1e-3,
              f"reference line: {m[0]}")
    check(f"top-1       {int(np.argmax(want))} " in r.stdout, f"top-1 line in:\n{r.stdout}")
    for key in ("median", "p90", "p99", "min", "per op (mean of 4 runs;", "slowest 5 nodes"):
        check(any(line.startswith(key) for line in r.stdout.splitlines()), f"no '{key}' in:\n{r.stdout}")
    check(re.search(r"^  Conv\s+\d", r.stdout, re.M) and re.search(r"^  Gemm\s+\d", r.stdout, re.M),
          f"no Conv/Gemm rows in the profile:\n{r.stdout}")
    with open(p("trace.json")) as f:
        events = json.load(f)
    runs = [e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"]
    kernels = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    check(len(runs) == 1 + 1 + 4 and len(kernels) >= len(runs),
          f"--trace: {len(runs)} runs (want 6: first, warm-up, 4 timed), {len(kernels)} kernels")
    left = [f for f in os.listdir(p("tmp")) if f.startswith("bench_ort-")]
    check(not left, f"--profile left its profile behind: {left}")

    # A reference whose top class moved by +100: reported as such, and the difference.
    moved = want.copy()
    low = int(np.argmin(want))
    moved[low] += 100
    moved.astype("<f4").tofile(p("moved.f32"))
    r = ort(p("small.onnx"), "--runs", "1", "--input", p("x.f32"), "--reference", p("moved.f32"))
    m = reference_line(r.stdout)
    if m:
        check(m[3] == "TOP-1 DIFFERS" and int(m[1]) == low and abs(float(m[4]) - 100) < 1e-3,
              f"moved reference: {m[0]}")

    one_line_exit2(ort(p("small.onnx"), "--input", p("want.f32")), "short input",
                   ["input", "float32"])
    one_line_exit2(ort(p("small.onnx"), "--input", p("x.f32"), "--reference", p("x.f32")),
                   "long reference", ["reference", "float32"])

sys.exit(summary())
