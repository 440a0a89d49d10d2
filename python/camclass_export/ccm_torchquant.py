"""camclass exporter, PyTorch eager-mode quantized models (used by export.py).

PyTorch's own post-training quantization workflow, as its Raspberry Pi tutorial runs it:
a quantizable model (torchvision.models.quantization.*), fuse_model(), a qconfig of the
quantized engine (qnnpack by default), prepare(), calibration, convert(). `quantize_torch`
runs that workflow; `stamp` carries the converted model's numbers into a bundle as they are:

- The graph is the one of the fused float model (before prepare): lowered with the ordinary
  exporter passes, so its ops, shapes and fused ReLUs are what PyTorch's quantized modules do.
- Weights: every conv2d/linear weight is written from the converted module's int8 values and
  scales (per tensor or per output channel; zero point must be 0: symmetric, as qnnpack's and
  onednn's default weight observers make it), biases from its f32 bias.
- Activations: each quantized module's output scale and zero point (QuantStub for the input,
  the converted conv/linear for their outputs, QFunctional for adds); pooling, flatten and
  reshape keep their input's, as PyTorch's quantized ops do. quint8 maps to our signed int8
  exactly: q - 128, zero_point - 128.
"""

import copy

import numpy as np
import torch

from .ccm_lower import ExportError

OBSERVER_SUFFIX = ".activation_post_process"
KEEPS_INPUT_QUANT = ("global_avg_pool", "flatten", "reshape", "clamp")


def quantize_torch(model, images, engine="qnnpack"):
    """Runs PyTorch's eager-mode static quantization on a quantizable model (it must have
    fuse_model()). Returns (fused float model, converted int8 model, activation dtype);
    model is changed."""
    import warnings
    from torch.ao import quantization as tq
    if engine not in torch.backends.quantized.supported_engines:
        raise ExportError("this PyTorch has no quantized engine %s (it has %s)"
                          % (engine, ", ".join(torch.backends.quantized.supported_engines)))
    if not hasattr(model, "fuse_model"):
        raise ExportError("%s has no fuse_model(); use a quantizable model such as "
                          "torchvision.models.quantization.mobilenet_v2" % type(model).__name__)
    torch.backends.quantized.engine = engine
    model.eval()
    model.fuse_model()
    fused = copy.deepcopy(model)
    model.qconfig = tq.get_default_qconfig(engine)
    tq.prepare(model, inplace=True)
    with torch.no_grad():
        for i in range(0, len(images), 16):
            model(images[i:i + 16])
    with warnings.catch_warnings():  # observers of unused FloatFunctionals never ran
        warnings.filterwarnings("ignore", "must run observer before calling calculate_qparams")
        tq.convert(model, inplace=True)
    return fused, model, model.qconfig.activation().dtype if hasattr(model, "qconfig") \
        else tq.get_default_qconfig(engine).activation().dtype


def _act_quant(module, signed_shift):
    scale = float(module.scale)
    zp = int(module.zero_point) - signed_shift
    if not -128 <= zp <= 127:
        raise ExportError("zero point %d of %s is outside int8" % (zp, type(module).__name__))
    return {"scale": float(np.float32(scale)), "zero_point": zp}


def _quantized_module(converted, path):
    """The converted module a lowered conv/linear node stands for: at the node's own path,
    or its parent's (fused ConvReLU2d: the float conv is the parent's child 0)."""
    for p in (path, path.rsplit(".", 1)[0] if "." in path else None):
        try:
            m = converted.get_submodule(p) if p else None
        except AttributeError:
            continue
        if m is not None and hasattr(m, "scale") and hasattr(m, "weight") and callable(m.weight):
            return m
    raise ExportError("no quantized module for node %s in the converted model" % path)


def _weight_i8(m, name):
    """(int8 values, per-output-channel f32 scales) of a converted module's weight."""
    w = m.weight()
    if w.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        if int(w.q_zero_point()) != 0:
            raise ExportError("weight of %s has zero point %d; camclass takes symmetric int8 "
                              "weights (zero point 0)" % (name, w.q_zero_point()))
        scales = np.full(w.shape[0], w.q_scale(), dtype="<f4")
    elif w.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric):
        if w.q_per_channel_axis() != 0 or bool((w.q_per_channel_zero_points() != 0).any()):
            raise ExportError("weight of %s: per-channel scales must be along the output "
                              "channels with zero points 0" % name)
        scales = w.q_per_channel_scales().numpy().astype("<f4")
    else:
        raise ExportError("weight of %s has qscheme %s" % (name, w.qscheme()))
    return w.int_repr().numpy().astype(np.int8), scales


def observed_tensors(gm, L):
    """{module path of an observer (e.g. features.3.skip_add): the tensor it observes}: the
    places where the fused float model calls an activation_post_process (FloatFunctional)."""
    sites = {}
    for n in gm.graph.nodes:
        if n.op == "call_module" and str(n.target).endswith(OBSERVER_SUFFIX) and n.args:
            t = L.value.get(n.args[0])
            if isinstance(t, str):
                sites[str(n.target)[:-len(OBSERVER_SUFFIX)]] = t
    return sites


def weights_of(L, converted):
    """{weight tensor name: (int8 values, scales)} and {bias tensor name: f32 values} for every
    conv2d/linear node of the lowered graph, from the converted model."""
    i8, bias = {}, {}
    for node in L.nodes:
        if node.op in ("conv2d", "linear"):
            m = _quantized_module(converted, node.name)
            q, scales = _weight_i8(m, node.name)
            if list(q.shape) != L.shapes[node.inputs[1]]:
                raise ExportError("node %s: PyTorch's int8 weight has shape %s, the graph's %s"
                                  % (node.name, list(q.shape), L.shapes[node.inputs[1]]))
            i8[node.inputs[1]] = (q, scales)
            b = m.bias()
            if len(node.inputs) > 2 and b is not None:
                bias[node.inputs[2]] = b.detach().double().numpy()
    return i8, bias


def stamp(manifest, L, converted, sites, activation_dtype=torch.quint8):
    """Writes the converted model's activation quantizations into manifest (version 2, or a
    later one it has)."""
    shift = 128 if activation_dtype == torch.quint8 else 0
    quant = {}
    quant[manifest["input"]["tensor"]] = _act_quant(converted.quant, shift)
    by_tensor = {t: converted.get_submodule(path) for path, t in sites.items()}
    for node in manifest["graph"]:
        out = node["outputs"][0]
        if node["op"] in ("conv2d", "linear"):
            quant[out] = _act_quant(_quantized_module(converted, node["name"]), shift)
        elif out in by_tensor:
            quant[out] = _act_quant(by_tensor[out], shift)
        elif node["op"] in KEEPS_INPUT_QUANT and node["inputs"][0] in quant:
            quant[out] = quant[node["inputs"][0]]
        elif node["op"] != "softmax":
            raise ExportError("node %s (%s): no quantization for its output in the converted "
                              "model" % (node["name"], node["op"]))
    for t in manifest["tensors"]:
        if t["name"] in quant:
            t["quant"] = dict(quant[t["name"]])
    manifest["version"] = max(manifest["version"], 2)
