#!/usr/bin/python3
"""The ONNX importer (camclass-export --onnx, camclass_export/ccm_onnx.py).

    test_onnx.py CAMCLASS_BENCH

1. The torchvision zoo written by torch.onnx.export (opsets 11, 13 and 17; seeded random weights
   with calibrated BatchNorm statistics, 64x64) is imported, and the bundle's graph, run in
   float64 by camclass_export.ccm_bundle, must match PyTorch's own module within 1e-4 x max|logit| on
   two inputs that move the logits by >= 5% (the model must be input-sensitive); two bundles
   also run in C (camclass-bench --save-output on the cpu and ref backends) within 1e-4.
2. A model built with onnx.helper, not from PyTorch (SAME_UPPER padding, Clip from inputs, a
   standalone BatchNormalization, MaxPool with ceil_mode, AveragePool excluding padding, Split,
   Concat, Gemm with transB=0 and alpha, x*Sigmoid(x), Softmax), against a reference written
   here with torch.nn.functional.
3. Constant operands (a normalization and a scale baked into the model: Sub/Div/Mul/Add with
   initializers, broadcast from a scalar, [C,1,1] and [1,C,1,1]): the input's normalization is
   folded into the bundle's mean/std, the rest imported as add/mul with a constant input,
   checked in float64 and in C on ref, cpu and vulkan, where the Vulkan backend runs those
   nodes on the CPU between its segments (per-op fallback) and says so at load.
4. Refusals, each with nothing written: every unsupported node listed at once by name, two
   inputs, an opset outside 11-17, a file that is not ONNX.
"""

import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

from camclass_export import ccm_bundle
from camclass_export import export as ce
from camclass_export.ccm_lower import ExportError
from checks import check, host_command, summary

TOLERANCE = 1e-4
EXPORTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                        "camclass-export")
ZOO = {13: ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large",
            "efficientnet_b0", "squeezenet1_1", "densenet121", "shufflenet_v2_x1_0",
            "googlenet", "regnet_x_400mf", "regnet_y_400mf", "mnasnet0_5"],
       11: ["mobilenet_v3_small", "shufflenet_v2_x1_0"],
       17: ["mobilenet_v3_large", "densenet121"]}


def two_inputs(shape, seed=5):
    """An input and another with half the contrast and a colour cast (as tests/engine/make_reference.py)."""
    g = torch.Generator().manual_seed(seed)
    cast = torch.tensor([0.5, -0.5, 0.25]).view(1, 3, 1, 1)
    return [torch.randn(shape, generator=g), 0.5 * torch.randn(shape, generator=g) + cast]


def compare(what, bundle, reference, shape):
    """The bundle's graph (float64) against reference(x) on two inputs; returns the worst
    relative error (None on failure)."""
    manifest, consts, _ = ccm_bundle.read_bundle(bundle)
    worst = 0.0
    refs = []
    for x in two_inputs(shape):
        ref = np.asarray(reference(x), dtype=np.float64).ravel()
        got = ccm_bundle.run_graph(manifest, consts, x.numpy()).ravel()
        scale = float(np.abs(ref).max())
        worst = max(worst, float(np.abs(got - ref).max()) / scale)
        refs.append((ref, scale))
    moved = float(np.abs(refs[0][0] - refs[1][0]).max()) / refs[0][1]
    check(moved >= 0.05, "%s: not input-sensitive (two inputs move the output by %.3g x max)"
          % (what, moved))
    check(worst <= TOLERANCE, "%s: bundle vs reference %.3g x max|output| > %g"
          % (what, worst, TOLERANCE))
    return worst, moved


def run_c(bench, bundle, x, backend, tmp):
    """camclass-bench's raw output for input x on backend."""
    inp, out = os.path.join(tmp, "in.f32"), os.path.join(tmp, "out.f32")
    x.numpy().astype("<f4").tofile(inp)
    r = subprocess.run(host_command(bench) + [bundle, "--backend", backend, "--runs", "1",
                                              "--input", inp, "--save-output", out],
                       capture_output=True, text=True, timeout=300)
    if not check(r.returncode == 0, "%s on %s: %s" % (bundle, backend, r.stderr.strip())):
        return None
    return np.fromfile(out, dtype="<f4")


def test_zoo(bench, tmp):
    for opset, names in sorted(ZOO.items()):
        for name in names:
            module = ce.build_torchvision_model(name, random_seed=3, input_shape=(1, 3, 64, 64))
            path = os.path.join(tmp, "%s-%d.onnx" % (name, opset))
            torch.onnx.export(module, torch.zeros(1, 3, 64, 64), path, opset_version=opset,
                              input_names=["image"], output_names=["logits"])
            bundle = os.path.join(tmp, "%s-%d.ccm" % (name, opset))
            try:
                info = ce.export_onnx(path, bundle)
            except ExportError as e:
                check(False, "%s opset %d: %s" % (name, opset, e))
                continue

            def reference(x):
                with torch.no_grad():
                    return module(x).numpy()
            err, moved = compare("%s opset %d" % (name, opset), bundle, reference,
                                 (1, 3, 64, 64))
            print("%-20s opset %d: %3d nodes, bundle vs PyTorch %.2g x max|logit| "
                  "(inputs move it %.2f)" % (name, opset, info["nodes"], err, moved))
            if opset == 13 and name in ("shufflenet_v2_x1_0", "mobilenet_v3_small"):
                x = two_inputs((1, 3, 64, 64))[0]
                ref = reference(x).ravel()
                for backend in ("ref", "cpu"):
                    got = run_c(bench, bundle, x, backend, tmp)
                    if got is not None:
                        e = float(np.abs(got - ref).max() / np.abs(ref).max())
                        print("%-20s opset 13 on %s: %.2g x max|logit|" % (name, backend, e))
                        check(e <= TOLERANCE, "%s on %s: %.3g > %g" % (name, backend, e,
                                                                      TOLERANCE))


def const(name, array):
    return numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)


def hand_built(tmp):
    """A model built node by node with onnx.helper; returns (path, reference function)."""
    rng = np.random.default_rng(11)
    w1 = rng.normal(0, 0.4, (8, 3, 4, 4))
    b1 = rng.normal(0, 0.1, 8)
    bn = [rng.uniform(0.5, 1.5, 8), rng.normal(0, 0.2, 8), rng.normal(0, 0.3, 8),
          rng.uniform(0.5, 2.0, 8)]  # scale, bias, mean, var
    w2 = rng.normal(0, 0.3, (6, 4, 3, 3))
    wg = rng.normal(0, 0.3, (10, 7))  # Gemm B with transB=0: [K, N]
    bg = rng.normal(0, 0.1, 7)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], auto_pad="SAME_UPPER",
                         strides=[2, 2], name="conv_same"),
        helper.make_node("BatchNormalization", ["c1", "s", "bb", "m", "v"], ["n1"],
                         epsilon=1e-3, name="bn"),
        helper.make_node("Clip", ["n1", "lo", "hi"], ["r1"], name="clip"),
        helper.make_node("Split", ["r1"], ["s1", "s2"], axis=1, split=[4, 4], name="split"),
        helper.make_node("Conv", ["s1", "w2"], ["c2"], pads=[1, 0, 1, 2], name="conv_pads"),
        helper.make_node("Sigmoid", ["c2"], ["g2"], name="gate"),
        helper.make_node("Mul", ["c2", "g2"], ["silu"], name="swish"),
        helper.make_node("MaxPool", ["silu"], ["p1"], kernel_shape=[3, 3], strides=[2, 2],
                         ceil_mode=1, name="maxpool"),
        helper.make_node("AveragePool", ["s2"], ["p2"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 0, 1, 0], count_include_pad=0, name="avgpool"),
        helper.make_node("Concat", ["p1", "p2"], ["cat"], axis=1, name="concat"),
        helper.make_node("GlobalAveragePool", ["cat"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], axis=1, name="flatten"),
        helper.make_node("Gemm", ["flat", "wg", "bg"], ["fc"], alpha=0.5, beta=2.0,
                         name="fc"),
        helper.make_node("Softmax", ["fc"], ["prob"], axis=1, name="softmax"),
    ]
    graph = helper.make_graph(
        nodes, "hand_built",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 15, 13])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["batch", 7])],
        [const("w1", w1), const("b1", b1), const("s", bn[0]), const("bb", bn[1]),
         const("m", bn[2]), const("v", bn[3]), const("lo", -0.5), const("hi", 1.5),
         const("w2", w2), const("wg", wg), const("bg", bg)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    onnx.checker.check_model(model)
    path = os.path.join(tmp, "hand_built.onnx")
    onnx.save(model, path)

    f32 = lambda a: torch.tensor(np.asarray(a, dtype=np.float32))  # noqa: E731

    def reference(x):
        with torch.no_grad():
            # SAME_UPPER, stride 2, kernel 4 on 15x13: output 8x7; padding total 3 (h), 4 (w),
            # the odd pixel at the end.
            y = F.conv2d(F.pad(x, (1, 2, 1, 2)), f32(w1), f32(b1), stride=2)
            y = F.batch_norm(y, f32(bn[2]), f32(bn[3]), f32(bn[0]), f32(bn[1]), eps=1e-3)
            y = torch.clamp(y, -0.5, 1.5)
            a, b = y[:, :4], y[:, 4:]
            c = F.conv2d(F.pad(a, (0, 2, 1, 1)), f32(w2))
            c = c * torch.sigmoid(c)
            p1 = F.max_pool2d(c, 3, 2, ceil_mode=True)
            p2 = F.avg_pool2d(b, 3, 2, (1, 0), count_include_pad=False)
            g = torch.cat([p1, p2], 1).mean((2, 3))
            return torch.softmax(0.5 * g @ f32(wg) + 2.0 * f32(bg), 1).numpy()
    return path, reference


def test_constants(bench, tmp):
    rng = np.random.default_rng(12)
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    w = rng.normal(0, 0.4, (6, 3, 3, 3))
    gain = rng.uniform(0.5, 2.0, (1, 6, 1, 1))
    shift = rng.normal(0, 0.2, (6, 1, 1))
    wg = rng.normal(0, 0.5, (6, 5))
    nodes = [
        helper.make_node("Sub", ["x", "mean"], ["centred"], name="sub_mean"),
        helper.make_node("Div", ["centred", "std"], ["normal"], name="div_std"),
        helper.make_node("Conv", ["normal", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Add", ["c", "shift"], ["cs"], name="add_shift"),
        helper.make_node("Relu", ["cs"], ["r"], name="relu"),
        helper.make_node("Mul", ["gain", "r"], ["g"], name="mul_gain"),
        helper.make_node("Mul", ["g", "half"], ["h"], name="mul_half"),
        helper.make_node("GlobalAveragePool", ["h"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], axis=1, name="flatten"),
        helper.make_node("MatMul", ["flat", "wg"], ["y"], name="fc"),
    ]
    graph = helper.make_graph(
        nodes, "constants",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 11, 9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
        [const("mean", mean.reshape(1, 3, 1, 1)), const("std", std.reshape(3, 1, 1)),
         const("w", w), const("shift", shift), const("gain", gain), const("half", 0.5),
         const("wg", wg)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    path, bundle = os.path.join(tmp, "constants.onnx"), os.path.join(tmp, "constants.ccm")
    onnx.save(model, path)
    try:  # pixels in [0, 1] go in as they are: the model normalizes them itself
        info = ce.export_onnx(path, bundle, resize=("squash", None), mean=(0, 0, 0),
                              std=(1, 1, 1))
    except ExportError as e:
        check(False, "constant operands: %s" % e)
        return
    f32 = lambda a: torch.tensor(np.asarray(a, dtype=np.float32))  # noqa: E731

    def reference(x):
        with torch.no_grad():
            y = (x - f32(mean).view(1, 3, 1, 1)) / f32(std).view(1, 3, 1, 1)
            y = torch.relu(F.conv2d(y, f32(w), padding=1) + f32(shift).view(1, 6, 1, 1))
            y = 0.5 * (f32(gain) * y)
            return (y.mean((2, 3)) @ f32(wg)).numpy()
    manifest, _, _ = ccm_bundle.read_bundle(bundle)
    ops = [n["op"] for n in manifest["graph"]]
    # The Sub and Div on the input become the bundle's own mean and std: the graph starts at
    # the conv, and its input is (pixels - mean) / std.
    got_mean, got_std = manifest["input"]["mean"], manifest["input"]["std"]
    check(ops[0] == "conv2d" and info["input_folded"][0] == 2
          and np.allclose(got_mean, mean) and np.allclose(got_std, std),
          "input normalization folded: ops %s, mean %s, std %s" % (ops, got_mean, got_std))
    check(ops.count("mul") + ops.count("add") == 3, "constant operands: ops %s" % ops)

    def on_bundle_input(x):  # the bundle's graph input back to the pixels the model takes
        return reference(x * f32(got_std).view(1, 3, 1, 1) + f32(got_mean).view(1, 3, 1, 1))
    err, moved = compare("constant operands", bundle, on_bundle_input, (1, 3, 11, 9))
    print("constant operands: %s, mean %s, std %s, bundle vs reference %.2g x max (inputs "
          "move it %.2f)" % (", ".join(ops), got_mean, got_std, err, moved))
    x = two_inputs((1, 3, 11, 9))[0]
    ref = on_bundle_input(x).ravel()
    for backend in ("ref", "cpu", "vulkan"):
        got = run_c(bench, bundle, x, backend, tmp)
        if got is not None:
            e = float(np.abs(got - ref).max() / np.abs(ref).max())
            print("constant operands on %s: %.2g x max|output|" % (backend, e))
            check(e <= TOLERANCE, "constant operands on %s: %.3g > %g" % (backend, e, TOLERANCE))
    r = subprocess.run(host_command(bench) + [bundle, "--backend", "vulkan", "--runs", "1"],
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0 and "run on the CPU between Vulkan segments" in r.stderr
          and "add_shift" in r.stderr and "mul_gain" in r.stderr,
          "the Vulkan load notice names the CPU nodes: %s" % r.stderr.strip())
    # A constant that would broadcast the tensor itself is refused, naming the node.
    bad = helper.make_graph(
        [helper.make_node("Add", ["x", "big"], ["s"], name="widen"),
         helper.make_node("GlobalAveragePool", ["s"], ["g"]),
         helper.make_node("Flatten", ["g"], ["y"])], "widen",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [const("big", np.ones((2, 3, 4, 4)))])
    bad_path = os.path.join(tmp, "widen.onnx")
    onnx.save(helper.make_model(bad, opset_imports=[helper.make_opsetid("", 13)]), bad_path)
    refused("a constant that widens the tensor", bad_path, "widen", "change the tensor's shape")


def test_hand_built(tmp):
    path, reference = hand_built(tmp)
    bundle = os.path.join(tmp, "hand_built.ccm")
    try:
        info = ce.export_onnx(path, bundle, resize=("squash", None))
    except ExportError as e:
        check(False, "hand-built model: %s" % e)
        return
    manifest, _, _ = ccm_bundle.read_bundle(bundle)
    ops = [n["op"] for n in manifest["graph"]]
    acts = [n.get("attrs", {}).get("activation") for n in manifest["graph"]]
    check("batchnorm" not in ops and ops.count("conv2d") == 2,
          "hand-built: BatchNorm not folded into the conv: %s" % ops)
    check("silu" in acts, "hand-built: x*sigmoid(x) not fused to silu: %s" % list(zip(ops, acts)))
    check(manifest["output"]["kind"] == "probabilities", "hand-built: output kind")
    err, moved = compare("hand-built", bundle, reference, (1, 3, 15, 13))
    print("hand-built opset 12: %d nodes (%s), bundle vs reference %.2g x max (inputs move it "
          "%.2f)" % (info["nodes"], ", ".join(ops), err, moved))
    # The command line: the same import, with labels and a name.
    labels = os.path.join(tmp, "labels.txt")
    with open(labels, "w") as f:
        f.write("".join("thing %d\n" % i for i in range(7)))
    out = os.path.join(tmp, "cli.ccm")
    r = subprocess.run([sys.executable, EXPORTER, "--onnx", path, "--labels", labels, "--name",
                        "hand", "--resize", "squash", "-o", out], capture_output=True, text=True)
    check(r.returncode == 0 and "wrote %s: 11 nodes" % out in r.stdout,
          "camclass-export --onnx: exit %d: %s%s" % (r.returncode, r.stdout, r.stderr))
    if r.returncode == 0:
        manifest, _, names = ccm_bundle.read_bundle(out)
        check(manifest["name"] == "hand" and names[6] == "thing 6", "--onnx: name/labels")


def refused(what, path, *needles, **kw):
    out = os.path.join(os.path.dirname(path), "refused.ccm")
    try:
        ce.export_onnx(path, out, **kw)
        check(False, "%s: imported" % what)
    except ExportError as e:
        msg = str(e)
        print("%s: %s" % (what, msg.replace("\n", " | ")))
        for n in needles:
            check(n in msg, "%s: %r lacks %r" % (what, msg, n))
    check(not os.path.exists(out), "%s: wrote %s" % (what, out))


def test_refusals(tmp):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])
    nodes = [helper.make_node("LeakyRelu", ["x"], ["a"], name="leaky1"),
             helper.make_node("Tanh", ["a"], ["b"], name="tanh1"),
             helper.make_node("LeakyRelu", ["b"], ["c"], name="leaky2"),
             helper.make_node("Erf", ["x"], ["e"], name="erf1"),
             helper.make_node("Add", ["c", "e"], ["d"], name="add"),
             helper.make_node("GlobalAveragePool", ["d"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["y"], name="flat")]
    path = os.path.join(tmp, "unsupported.onnx")
    onnx.save(helper.make_model(helper.make_graph(nodes, "u", [x], [y]),
                                opset_imports=[helper.make_opsetid("", 13)]), path)
    refused("unsupported ops", path, "3 kinds of ONNX node", "Erf is not supported: node erf1",
            "Tanh is not supported: node tanh1",
            "LeakyRelu is not supported: node leaky1 (and 1 more)")

    x2 = helper.make_tensor_value_info("x2", TensorProto.FLOAT, [1, 3, 8, 8])
    path = os.path.join(tmp, "two_inputs.onnx")
    onnx.save(helper.make_model(helper.make_graph(
        [helper.make_node("Add", ["x", "x2"], ["s"]),
         helper.make_node("GlobalAveragePool", ["s"], ["g"]),
         helper.make_node("Flatten", ["g"], ["y"])], "t", [x, x2], [y]),
        opset_imports=[helper.make_opsetid("", 13)]), path)
    refused("two inputs", path, "2 inputs (x, x2)", "one image")

    path = os.path.join(tmp, "old.onnx")
    onnx.save(helper.make_model(helper.make_graph(
        [helper.make_node("GlobalAveragePool", ["x"], ["g"]),
         helper.make_node("Flatten", ["g"], ["y"])], "o", [x], [y]),
        opset_imports=[helper.make_opsetid("", 9)]), path)
    refused("opset 9", path, "opset 9", "opsets 11 to 17")

    path = os.path.join(tmp, "symbolic.onnx")
    xs = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])
    onnx.save(helper.make_model(helper.make_graph(
        [helper.make_node("GlobalAveragePool", ["x"], ["g"]),
         helper.make_node("Flatten", ["g"], ["y"])], "s", [xs], [y]),
        opset_imports=[helper.make_opsetid("", 13)]), path)
    refused("symbolic size", path, "symbolic image size", "--input-size")

    path = os.path.join(tmp, "not.onnx")
    with open(path, "wb") as f:
        f.write(b"\x08\x07 this is not a protobuf of a model")
    refused("not ONNX", path, "is not a valid ONNX model")


def main():
    bench = sys.argv[1]
    torch.set_num_threads(1)
    tmp = tempfile.mkdtemp(prefix="camclass-onnx-")
    test_hand_built(tmp)
    test_refusals(tmp)
    test_constants(bench, tmp)
    test_zoo(bench, tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
