"""camclass_export — PyTorch model -> camclass model bundle (docs/MODEL_FORMAT.md).

    camclass-export --model mobilenet_v2 | --module file.py:Class
                    [--weights state_dict.pth | --random-seed N]
                    [--labels labels.txt | --num-classes N] [--name NAME]
                    [--input-size 224] [--resize center_crop:256|squash]
                    [--antialias on|off] [--mean R G B --std R G B --color RGB|BGR]
                    [--quantize int8 [--calibrate DIR]] -o out.ccm

or, from Python, `export_module(module, "out.ccm", (1, 3, 224, 224), labels)` for your own
nn.Module.

How: the module is traced with torch.fx in eval mode and every tensor's shape is found with
ShapeProp. Each fx node is lowered through a table (module type / function / method name ->
handler, in ccm_lower.py) to a small graph of bundle ops plus a temporary `batchnorm` op;
activations become `clamp` nodes. Passes then drop dead nodes, fold every BatchNorm2d into the
convolution before it (or, with no convolution to fold into, turn it into a depthwise 1x1
convolution) and fuse each activation into the conv2d/linear/add/clamp that produces its input.
The result is run in float64 from the exact f32 tensors about to be written and compared with
the original module; only then is the zip written, to a temporary file renamed into place at the
end, so that a failed export never leaves a bundle behind.

Anything unsupported stops the export with one line naming the op and where it is in the source.

The bundle's resize resamples as the model was trained: with --antialias on (the default for
torchvision models, --model: their ImageNet transforms resize PIL images, which antialiases)
camclass resizes as PIL's Image.resize(BILINEAR) and the bundle is format version 3; with
--antialias off (the default for --module) as torch.nn.functional.interpolate without
antialias, as every bundle before (docs/PREPROCESSING.md §3, §3b).

With --quantize int8 (quantize="int8"), after that check the weights of conv2d and linear nodes
are written as int8 with symmetric per-output-channel f32 scales (docs/MODEL_FORMAT.md,
"i8 tensors"); the quantized graph is compared with the module and the difference reported.
With --calibrate DIR as well (post-training static quantization), the activations get per-tensor
int8 quantizations from their ranges on the user's images in DIR, preprocessed as camclass
does for this bundle (ccm_calibrate.py); the bundle is then format version 2 (3 with
antialias) and runs in
int8 arithmetic on the CPU backend. The int8-rounded graph is compared with the f32 one on
those images and the agreement reported.
"""

import argparse
import dis
import inspect
import linecache
import os
import re
import sys
import traceback
import zipfile

import numpy as np
import torch
import torch.fx
import torch.nn as nn
from torch.fx.passes.shape_prop import ShapeProp

from . import ccm_bundle, ccm_calibrate, ccm_torchquant
from .ccm_graph import finish_lowering, fold_input_normalization
from .ccm_lower import ExportError, Lowering
# The writer (torch-free, shared with camclass-fetch-imagenet), as this module's own names
# for the callers that use them from here.
from .ccm_write import (DATA_ENTRY, IMAGENET_MEAN, IMAGENET_STD, _Blob,  # noqa: F401
                        _quantized_names, build_manifest, check_labels, check_limits,
                        check_spec, imagenet_labels, quantize_int8, resize_spec, write_bundle)

VERIFY_TOLERANCE = 1e-4  # max |fused - pytorch| <= this x max |pytorch|


# ---------------------------------------------------------------------------------------------
# Verification against the module
# ---------------------------------------------------------------------------------------------

def verify(module, manifest, consts, seed=0):
    """Runs the fused graph (float64, from the f32 tensors to be written) and the original
    module (float32) on one random input; returns max |diff| / max |ref|."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(manifest["input"]["shape"], generator=g)
    with torch.no_grad():
        ref = module(x).double().numpy()
    got = ccm_bundle.run_graph(manifest, consts, x.numpy())
    scale = max(float(np.abs(ref).max()), 1e-30)
    err = float(np.abs(got - ref).max())
    if not err <= VERIFY_TOLERANCE * scale:  # also catches NaN
        raise ExportError("the fused graph differs from the module: max |diff| = %.3g "
                          "(%.3g x max |output|, tolerance %g); this is an exporter bug"
                          % (err, err / scale, VERIFY_TOLERANCE))
    return err / scale


def compare_quantized(module, manifest, consts, seed=0):
    """The quantized graph against the module on one random input: (max |diff| / max |ref|,
    cosine similarity of the outputs). Reported, not enforced: int8 weights change the
    numbers by design."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(manifest["input"]["shape"], generator=g)
    with torch.no_grad():
        ref = module(x).double().numpy().ravel()
    got = ccm_bundle.run_graph(manifest, consts, x.numpy()).ravel()
    rel = float(np.abs(got - ref).max()) / max(float(np.abs(ref).max()), 1e-30)
    cos = float(np.dot(got, ref) / max(np.linalg.norm(got) * np.linalg.norm(ref), 1e-300))
    return rel, cos


# ---------------------------------------------------------------------------------------------
# Public entry points
# ---------------------------------------------------------------------------------------------

class _Tracer(torch.fx.Tracer):
    """torch.fx's tracer, able to unpack a size: `n, c, h, w = x.size()` (ShuffleNet's
    channel_shuffle does this). torch 1.13 finds the UNPACK_SEQUENCE instruction by an index
    that Python 3.11's inline caches shift; here it is found by its byte offset."""

    def iter(self, obj):
        caller = inspect.currentframe().f_back.f_back  # Proxy.__iter__ is in between
        for inst in dis.get_instructions(caller.f_code):
            if inst.offset == caller.f_lasti and inst.opname == "UNPACK_SEQUENCE":
                return (obj[i] for i in range(inst.argval))
        return super().iter(obj)


def _user_line(tb):
    """'file.py:12 in forward `code`' of the innermost traceback frame outside torch (the
    user's source line where tracing failed), or None."""
    torch_dir = os.path.dirname(torch.__file__) + os.sep
    found = None
    for frame, lineno in traceback.walk_tb(tb):
        path = frame.f_code.co_filename
        if not path.startswith(torch_dir) and os.path.abspath(path) != os.path.abspath(__file__):
            found = (path, lineno, frame.f_code.co_name)
    if found is None:
        return None
    code = linecache.getline(found[0], found[1]).strip()
    return "%s:%d in %s `%s`" % (found[0], found[1], found[2], code)


def trace(module):
    tracer = _Tracer()
    tracer.record_stack_traces = True
    try:
        graph = tracer.trace(module)
    except Exception as e:  # fx raises TraceError, TypeError, ... for untraceable code
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        line = _user_line(e.__traceback__)
        raise ExportError("cannot trace %s with torch.fx at %s: %s"
                          % (type(module).__name__, line or "(no source line)", msg))
    return torch.fx.GraphModule(tracer.root, graph)


def lower(module, input_shape, name):
    """Traces module (eval mode) and lowers it to bundle ops, passes done (BatchNorm folded,
    activations fused, output named logits/probabilities). Returns (Lowering, fx module)."""
    gm = trace(module)
    try:
        ShapeProp(gm).propagate(torch.zeros(input_shape))
    except Exception as e:
        raise ExportError("cannot run %s on a %s input: %s"
                          % (name, input_shape, str(e).strip().splitlines()[0]))
    L = Lowering(gm)
    L.run()
    out_shape = L.shapes[L.output]
    if L.output == L.input or L.output in L.consts or len(out_shape) != 2 or out_shape[0] != 1:
        raise ExportError("the model's output has shape %s; camclass needs [1, classes] "
                          "computed from the input" % out_shape)
    finish_lowering(L)
    return L, gm


def export_onnx(path, out_path, input_size=None, labels=None, name=None, color="RGB",
                mean=IMAGENET_MEAN, std=IMAGENET_STD, resize=None, quantize=None,
                calibrate=None, calibrate_limit=None, antialias=False):
    """Imports the ONNX classifier at path (opsets 11-17, one float32 NCHW image input, one
    [1, classes] output) to a bundle at out_path, with the same passes, checks and options as
    export_module. input_size: the image side when the model's is symbolic. resize: None =
    center_crop at 256/224 of the input size. The graph is checked against PyTorch by the
    tests (tests/models/test_onnx.py), not here: Debian has no ONNX runtime for Python.
    Returns a summary dict like export_module's. Raises ExportError (nothing written)."""
    from . import ccm_onnx  # python3-onnx: needed for --onnx only
    model = ccm_onnx.load(path)
    L = ccm_onnx.OnnxLowering(model, input_size)
    L.run()
    finish_lowering(L)
    mean, std, folded = fold_input_normalization(L, mean, std)
    input_shape = L.shapes[L.input]
    name = name or os.path.splitext(os.path.basename(path))[0][:128] or "onnx"
    resize = resize or ("center_crop", max(input_shape[2:]) * 256 // 224)
    check_spec(input_shape, color, mean, std, resize, name, antialias)
    classes = L.shapes[L.output][1]
    if labels is None:
        labels = imagenet_labels() if classes == 1000 else None
        labels = labels or ["class_%d" % i for i in range(classes)]
    check_labels(labels, classes)
    manifest, consts, blob = build_manifest(L, name, labels, color, mean, std, resize,
                                            quantize, antialias=antialias)
    check_limits(manifest)
    calib = _calibrate(manifest, consts, calibrate, calibrate_limit) if calibrate else None
    write_bundle(out_path, manifest, blob, labels)
    return {"nodes": len(manifest["graph"]), "tensors": len(manifest["tensors"]),
            "weight_bytes": len(blob), "classes": classes, "verify_rel_err": None,
            "quantized_rel_err": None, "quantized_cosine": None, "calibration": calib,
            "input_folded": (folded, mean, std)}


def export_module(module, out_path, input_shape=(1, 3, 224, 224), labels=None, name=None,
                  color="RGB", mean=IMAGENET_MEAN, std=IMAGENET_STD,
                  resize=("center_crop", 256), quantize=None, calibrate=None,
                  calibrate_limit=None, antialias=False):
    """Exports module (an nn.Module taking one [1,3,H,W] image, returning [1, classes]) to
    out_path. labels: list of class names; None = ImageNet names for 1000 classes, else
    "class_N". resize: ("squash", None) or ("center_crop", S); antialias: True when the model
    was trained on images resized by PIL (torchvision's transforms on PIL images: its ImageNet
    models), False for PyTorch's interpolate without antialias. quantize: None (all f32) or
    "int8" (conv2d/linear weights as i8 with per-output-channel scales, see quantize_int8;
    the fp32 graph is verified as always, then the quantized one is compared and reported).
    calibrate: a folder of images; with quantize="int8", activations are quantized too from
    their ranges on those images (see ccm_calibrate), the first calibrate_limit of them when
    given.
    Returns a summary dict. Raises ExportError (nothing is written then)."""
    if quantize not in (None, "int8"):
        raise ExportError("quantize %r: use int8 (or none)" % (quantize,))
    if calibrate and quantize != "int8":
        raise ExportError("--calibrate quantizes activations for int8: add --quantize int8")
    input_shape = [int(d) for d in input_shape]
    name = name or type(module).__name__
    check_spec(input_shape, color, mean, std, resize, name, antialias)

    was_training = module.training
    module.eval()
    try:
        L, _ = lower(module, input_shape, name)
        out_shape = L.shapes[L.output]
        if labels is None:
            labels = imagenet_labels() if out_shape[1] == 1000 else None
            labels = labels or ["class_%d" % i for i in range(out_shape[1])]
        check_labels(labels, out_shape[1])
        manifest, consts, blob = build_manifest(L, name, labels, color, mean, std, resize,
                                                antialias=antialias)
        check_limits(manifest)
        rel_err = verify(module, manifest, consts)
        q_err = q_cos = calib = None
        if quantize:
            manifest, consts, blob = build_manifest(L, name, labels, color, mean, std, resize,
                                                    quantize, antialias=antialias)
            check_limits(manifest)
            q_err, q_cos = compare_quantized(module, manifest, consts)
        if calibrate:
            calib = _calibrate(manifest, consts, calibrate, calibrate_limit)
    finally:
        module.train(was_training)
    write_bundle(out_path, manifest, blob, labels)
    return {"nodes": len(manifest["graph"]), "tensors": len(manifest["tensors"]),
            "weight_bytes": len(blob), "classes": out_shape[1], "verify_rel_err": rel_err,
            "quantized_rel_err": q_err, "quantized_cosine": q_cos, "calibration": calib}


def export_torch_quantized(model, out_path, calibrate, input_shape=(1, 3, 224, 224),
                           labels=None, name=None, color="RGB", mean=IMAGENET_MEAN,
                           std=IMAGENET_STD, resize=("center_crop", 256), engine="qnnpack",
                           calibrate_limit=None, antialias=False):
    """PyTorch's own eager-mode static quantization of a quantizable model (fuse_model(),
    the engine's default qconfig, calibration on the images in calibrate preprocessed as
    camclass will, convert()), exported with the converted model's int8 weights, scales and
    zero points as they are (ccm_torchquant). Returns a summary dict like export_module's,
    with "torch_int8": (min cosine, mean cosine, top-1 agreement) of the bundle's int8
    rounding against the converted PyTorch model on the calibration images."""
    input_shape = [int(d) for d in input_shape]
    name = name or type(model).__name__
    check_spec(input_shape, color, mean, std, resize, name, antialias)
    spec = {"input": {"shape": input_shape, "color_order": color, "mean": list(mean),
                      "std": list(std), "resize": resize_spec(resize, antialias)}}
    try:
        images = ccm_calibrate.load_images(calibrate, spec, calibrate_limit)
    except ccm_calibrate.CalibrationError as e:
        raise ExportError(str(e))
    fused, converted, act_dtype = ccm_torchquant.quantize_torch(model, images, engine)
    L, gm = lower(fused, input_shape, name)
    sites = ccm_torchquant.observed_tensors(gm, L)
    i8, biases = ccm_torchquant.weights_of(L, converted)
    L.consts.update(biases)
    classes = L.shapes[L.output][1]
    if labels is None:
        labels = imagenet_labels() if classes == 1000 else None
        labels = labels or ["class_%d" % i for i in range(classes)]
    check_labels(labels, classes)
    manifest, consts, blob = build_manifest(L, name, labels, color, mean, std, resize, "int8",
                                            i8_weights=i8, antialias=antialias)
    ccm_torchquant.stamp(manifest, L, converted, sites, act_dtype)
    check_limits(manifest)
    with torch.no_grad():
        ref = converted(images).double().numpy()
    got = ccm_bundle.run_graph(manifest, consts, images.numpy(), fake_quant=True)
    cos = [float(np.dot(a, b) / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-300))
           for a, b in zip(got, ref)]
    same = float(np.mean(got.argmax(1) == ref.argmax(1)))
    write_bundle(out_path, manifest, blob, labels)
    return {"nodes": len(manifest["graph"]), "tensors": len(manifest["tensors"]),
            "weight_bytes": len(blob), "classes": classes, "verify_rel_err": None,
            "quantized_rel_err": None, "quantized_cosine": None, "calibration": None,
            "torch_int8": (len(images), engine, min(cos), float(np.mean(cos)), same)}


def _calibrate(manifest, consts, folder, limit=None):
    """Quantizes manifest's activations on folder's images (the first limit of them); returns
    (images, quantized tensors, min cosine, mean cosine, top-1 agreement) of the int8-rounded
    vs f32 graph."""
    try:
        images = ccm_calibrate.load_images(folder, manifest, limit)
        n_quant = ccm_calibrate.quantize_activations(manifest, consts, images)
        return (len(images), n_quant) + ccm_calibrate.compare(manifest, consts, images)
    except ccm_calibrate.CalibrationError as e:
        raise ExportError(str(e))


def quantize_bundle(in_path, out_path, quantize="int8", calibrate=None, calibrate_limit=None):
    """An existing f32 bundle (say, one exported earlier, or whose PyTorch source is gone)
    -> int8 weights, and with calibrate int8 activations too. Returns a summary dict like
    export_module's. Raises ExportError (nothing is written then)."""
    import types
    if quantize != "int8":
        raise ExportError("--bundle quantizes an f32 bundle: add --quantize int8")
    try:
        manifest, consts, labels = ccm_bundle.read_bundle(in_path)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as e:
        raise ExportError("cannot read bundle %s: %s" % (in_path, e))
    if any(t["dtype"] != "f32" or "quant" in t for t in manifest["tensors"]):
        raise ExportError("%s is already quantized; give the f32 bundle it came from" % in_path)
    nodes = [types.SimpleNamespace(op=n["op"], inputs=n["inputs"]) for n in manifest["graph"]]
    quantized = _quantized_names(nodes, consts)
    blob = _Blob()
    for t in manifest["tensors"]:
        name = t["name"]
        if name in quantized:
            fields, consts[name] = blob.put_i8(*quantize_int8(consts[name]))
            t.update(fields)
        elif name in consts:
            t["data"] = blob.put(np.ascontiguousarray(consts[name], dtype="<f4"))
    calib = _calibrate(manifest, consts, calibrate, calibrate_limit) if calibrate else None
    check_limits(manifest)
    write_bundle(out_path, manifest, bytes(blob.data), labels)
    return {"nodes": len(manifest["graph"]), "tensors": len(manifest["tensors"]),
            "weight_bytes": len(blob.data), "classes": manifest["output"]["classes"],
            "verify_rel_err": None, "quantized_rel_err": None, "quantized_cosine": None,
            "calibration": calib}


def randomize(model, seed, input_shape=(1, 3, 224, 224), batches=8):
    """Seeded random BatchNorm affine parameters and conv/linear biases (so that folding is
    really exercised), then BatchNorm statistics calibrated on seeded random inputs of
    input_shape: train-mode forward passes with momentum=None (a plain average over the
    passes), as a trained network's statistics are. Two images per pass (a BatchNorm over a 1x1
    map needs more than one value per channel), or one when the module refuses a batch (user
    modules may assume batch 1: x.view(1, -1)). Random statistics instead saturate the
    activations and leave a network whose logits barely depend on its input."""
    g = torch.Generator().manual_seed(seed)

    def u(shape, lo, hi):
        return torch.rand(shape, generator=g) * (hi - lo) + lo

    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        for m in norms:
            if m.affine:
                c = m.num_features
                m.weight.copy_(u(c, 0.75, 2.0))
                m.bias.copy_(u(c, -0.25, 0.5))
        for m in model.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)) and m.bias is not None:
                m.bias.copy_(u(m.bias.shape, -0.1, 0.1))
        calibrated = [m for m in norms if m.track_running_stats]
        if not calibrated:
            return
        momenta = [m.momentum for m in calibrated]
        for m in calibrated:
            m.reset_running_stats()
            m.momentum = None
        model.train()
        torch.manual_seed(seed)  # dropout and stochastic depth draw from the global generator
        for batch in (2, 1):
            state = g.get_state()
            try:
                for _ in range(batches):
                    model(torch.randn((batch,) + tuple(input_shape[1:]), generator=g))
                break
            except (RuntimeError, ValueError):  # a module that takes one image only
                if batch == 1:
                    raise
                g.set_state(state)
                for m in calibrated:
                    m.reset_running_stats()
        model.eval()
        for m, momentum in zip(calibrated, momenta):
            m.momentum = momentum


def build_torchvision_model(model_name, num_classes=1000, weights=None, random_seed=None,
                            input_shape=(1, 3, 224, 224)):
    """A torchvision classifier by name, in eval mode: with the state_dict file `weights`,
    or seeded random weights (torchvision's own init under torch.manual_seed(random_seed),
    then randomize(), calibrated at input_shape). Same arguments, same module, in any
    process."""
    import torchvision
    import torchvision.models.quantization  # noqa: F401 (quantization.NAME models)
    space, short = torchvision.models, model_name
    extra = {}
    if model_name.startswith("quantization."):  # quantizable float model, not yet quantized
        space, short = torchvision.models.quantization, model_name[len("quantization."):]
        extra = {"quantize": False}
    ctor = getattr(space, short, None)
    if ctor is None or not callable(ctor) or short.startswith("_"):
        raise ExportError("unknown torchvision model %r" % model_name)
    if random_seed is not None:
        torch.manual_seed(random_seed)
    if short == "googlenet":  # no auxiliary classifiers: they only run in training
        extra.update(aux_logits=False, init_weights=True)
    if short == "inception_v3":
        extra.update(aux_logits=False, init_weights=True)
    try:
        model = ctor(weights=None, num_classes=num_classes, **extra)
    except TypeError as e:
        raise ExportError("cannot build %s: %s" % (model_name, e))
    if weights is not None:
        _load_state_dict(model, weights)
    elif random_seed is not None:
        randomize(model, random_seed, input_shape)
    return model.eval()


def _load_state_dict(model, weights):
    try:
        state = torch.load(weights, map_location="cpu")
        model.load_state_dict(state.get("state_dict", state))
    except Exception as e:
        msg = str(e).strip().splitlines()
        raise ExportError("cannot load %s into %s: %s"
                          % (weights, type(model).__name__, msg[0] if msg else type(e).__name__))


def build_user_module(spec, weights=None, random_seed=None, input_shape=(1, 3, 224, 224)):
    """FILE.py:CLASS -> an instance (constructed without arguments), eval mode."""
    import importlib.util
    path, _, cls = spec.rpartition(":")
    if not path or not cls:
        raise ExportError("--module %s: use FILE.py:CLASS" % spec)
    try:
        mod_spec = importlib.util.spec_from_file_location("camclass_user_module", path)
        mod = importlib.util.module_from_spec(mod_spec)
        mod_spec.loader.exec_module(mod)
    except (OSError, SyntaxError, ImportError) as e:
        raise ExportError("cannot load %s: %s" % (path, e))
    ctor = getattr(mod, cls, None)
    if ctor is None:
        raise ExportError("%s has no %s" % (path, cls))
    if random_seed is not None:
        torch.manual_seed(random_seed)
    model = ctor()
    if not isinstance(model, nn.Module):
        raise ExportError("%s:%s is not an nn.Module" % (path, cls))
    if weights is not None:
        _load_state_dict(model, weights)
    elif random_seed is not None:
        randomize(model, random_seed, input_shape)
    return model.eval()


def _parse_resize(s):
    if s == "squash":
        return ("squash", None)
    m = re.fullmatch(r"center_crop:(\d+)", s)
    if not m:
        raise argparse.ArgumentTypeError("use squash or center_crop:SIZE")
    return ("center_crop", int(m.group(1)))


def main(argv=None):
    p = argparse.ArgumentParser(description="Export a PyTorch classifier to a camclass bundle.")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--model", help="torchvision model name, e.g. mobilenet_v2")
    what.add_argument("--module", metavar="FILE.py:CLASS",
                      help="your own nn.Module class, constructed without arguments")
    what.add_argument("--bundle", metavar="IN.ccm",
                      help="an f32 camclass bundle to quantize (with --quantize int8)")
    what.add_argument("--onnx", metavar="MODEL.onnx",
                      help="an ONNX classifier (opsets 11-17, one float32 NCHW image input)")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--weights", help="state_dict .pth file (torchvision's format)")
    src.add_argument("--random-seed", type=int, help="seeded random weights and BN statistics")
    cls = p.add_mutually_exclusive_group()
    cls.add_argument("--labels", help="labels.txt, one class name per line")
    cls.add_argument("--num-classes", type=int, help="number of classes (default 1000)")
    p.add_argument("--name", help="model name in the bundle (default: --model)")
    p.add_argument("--input-size", type=int, default=None,
                   help="square input side (224; with --onnx: the model's, needed only when "
                        "it is symbolic)")
    p.add_argument("--resize", type=_parse_resize, default=None,
                   help="squash or center_crop:SIZE (default center_crop:256 for 224)")
    p.add_argument("--antialias", choices=("on", "off"), default=None,
                   help="resize as PIL does (on: antialiased, as torchvision's transforms on PIL "
                        "images; bundle format version 3) or as interpolate without antialias "
                        "(off); default on for --model, off for --module and --onnx")
    p.add_argument("--mean", type=float, nargs=3, default=IMAGENET_MEAN)
    p.add_argument("--std", type=float, nargs=3, default=IMAGENET_STD)
    p.add_argument("--color", choices=("RGB", "BGR"), default="RGB")
    p.add_argument("--quantize", choices=("int8",), default=None,
                   help="int8: conv/linear weights as int8, per-output-channel scales")
    p.add_argument("--calibrate", metavar="DIR",
                   help="with --quantize int8: quantize activations too, from their ranges "
                        "on the PNG/JPEG images in DIR (int8 arithmetic on the CPU backend)")
    p.add_argument("--engine", choices=("qnnpack", "onednn"), default="qnnpack",
                   help="with --model quantization.NAME: PyTorch's quantized engine whose "
                        "qconfig quantizes the model (qnnpack, as on the Raspberry Pi)")
    p.add_argument("--calibrate-limit", type=int, metavar="N",
                   help="use only the first N images of --calibrate DIR (name order)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (1)")
    p.add_argument("-o", "--output", required=True, help="bundle to write (.ccm)")
    args = p.parse_args(argv)
    torch.set_num_threads(max(1, args.threads))
    # Messages begin with the name it was run by: camclass-export when installed.
    prog = "camclass_export" if p.prog.endswith(".py") else p.prog
    try:
        labels = None
        num_classes = args.num_classes or 1000
        if args.labels:
            with open(args.labels, encoding="utf-8") as f:
                labels = f.read().replace("\r\n", "\n").rstrip("\n").split("\n")
            num_classes = len(labels)
        input_size = args.input_size or 224
        shape = (1, 3, input_size, input_size)
        resize = args.resize or ("center_crop", input_size * 256 // 224)
        # torchvision's models were trained on PIL images resized by PIL (antialiased); a
        # user's module or an ONNX file, who knows: the old behaviour unless told.
        antialias = (args.antialias or ("on" if args.model else "off")) == "on"
        if args.bundle and args.antialias:
            raise ExportError("--antialias: --bundle keeps the bundle's own resize; export the "
                              "model again to change it")
        if args.onnx:
            info = export_onnx(args.onnx, args.output, args.input_size, labels, args.name,
                               args.color, args.mean, args.std, args.resize, args.quantize,
                               args.calibrate, args.calibrate_limit, antialias)
        elif args.bundle:
            info = quantize_bundle(args.bundle, args.output, args.quantize, args.calibrate,
                                   args.calibrate_limit)
        elif args.model and args.model.startswith("quantization."):
            if not args.calibrate:
                raise ExportError("--model %s is quantized by PyTorch's own workflow: give "
                                  "--calibrate DIR (images for its observers)" % args.model)
            model = build_torchvision_model(args.model, num_classes, args.weights,
                                            args.random_seed, shape)
            info = export_torch_quantized(model, args.output, args.calibrate, shape, labels,
                                          args.name or args.model, args.color, args.mean,
                                          args.std, resize, args.engine, args.calibrate_limit,
                                          antialias)
        else:
            if args.model:
                model = build_torchvision_model(args.model, num_classes, args.weights,
                                                args.random_seed, shape)
            else:
                model = build_user_module(args.module, args.weights, args.random_seed, shape)
            info = export_module(model, args.output, shape, labels,
                                 args.name or args.model or type(model).__name__,
                                 args.color, args.mean, args.std, resize, args.quantize,
                                 args.calibrate, args.calibrate_limit, antialias)
    except (ExportError, OSError) as e:
        print("%s: error: %s" % (prog, e), file=sys.stderr)
        return 1
    print("%s: wrote %s: %d nodes, %d tensors, %.1f MB of weights, %d classes"
          % (prog, args.output, info["nodes"], info["tensors"], info["weight_bytes"] / 1e6,
             info["classes"]) + ("" if info["verify_rel_err"] is None else
                                 "; fused graph matches PyTorch within %.2g x max|output|"
                                 % info["verify_rel_err"]))
    if args.quantize and info["quantized_rel_err"] is not None:
        print("%s: %s weights: outputs differ by %.2g x max|output| from PyTorch's on a random "
              "input (cosine %.6f)" % (prog, args.quantize, info["quantized_rel_err"],
                                       info["quantized_cosine"]))
    if not args.bundle:
        print("%s: input: %s, %s" % (prog, "squash" if resize[0] == "squash" else
                                     "center_crop:%d" % resize[1],
                                     "antialias on (PIL's resize; format version 3)" if antialias
                                     else "antialias off (interpolate, as before version 3)"))
    if info.get("input_folded") and info["input_folded"][0]:
        n, mean, std = info["input_folded"]
        print("%s: the model's own input normalization (%d node%s) folded into the bundle's: "
              "mean %s, std %s" % (prog, n, "" if n == 1 else "s",
                                   " ".join("%.6g" % v for v in mean),
                                   " ".join("%.6g" % v for v in std)))
    if info.get("torch_int8"):
        n, engine, cos_min, cos_mean, top1 = info["torch_int8"]
        print("%s: PyTorch's %s quantization exported as is; the bundle's int8 rounding vs "
              "PyTorch's quantized model on the %d calibration images: cosine min %.5f mean "
              "%.5f, same top-1 %.1f%%" % (prog, engine, n, cos_min, cos_mean, 100 * top1))
    if info["calibration"]:
        n, n_quant, cos_min, cos_mean, top1 = info["calibration"]
        print("%s: activations: %d tensors quantized from %d calibration images; int8-rounded "
              "vs f32 graph on them: cosine min %.5f mean %.5f, same top-1 %.1f%%"
              % (prog, n_quant, n, cos_min, cos_mean, 100 * top1))
    return 0

