#!/usr/bin/python3
"""PyTorch's own speed on mobilenet_v2, to quote next to camclass-bench's figures.

Times one of PyTorch's CPU inference paths at batch 1 and prints the same summary lines as
camclass-bench (median, p90, p99, min, fps). Weights do not change the speed, so the model is
built with random (seeded) weights.

    /usr/bin/python3 tools/bench_torch.py [--model mobilenet_v2] [--threads 2] [--runs 50]
                                          [--variant jit|mobile|quant-qnnpack|quant-onednn]
    /usr/bin/python3 tools/bench_torch.py --export-onnx OUT.onnx [--variant quant-qnnpack]

--export-onnx writes the model for ONNX Runtime (tools/bench_ort.js) instead of timing it: the
camclass exporter's seeded random weights (--random-seed, default 1: the weights of
build/tools/mobilenet_v2_random.ccm, so that both engines' outputs can be compared), fp32, or
with a quant-ENGINE variant quantized as below and written as QDQ (QuantizeLinear /
DequantizeLinear around float Conv/Gemm/Add, which ONNX Runtime fuses into QLinearConv etc.).

Variants:
  jit            torch.jit.optimize_for_inference(torch.jit.script(model)) (oneDNN fp32)
  mobile         torch.utils.mobile_optimizer.optimize_for_mobile(torch.jit.script(model)):
                 PyTorch Mobile's path, XNNPACK fp32 ops
  quant-ENGINE   torchvision's quantizable model, fuse_model(), the engine's default qconfig,
                 calibrated on 8 random inputs, convert(), torch.jit.script; run with
                 torch.backends.quantized.engine = ENGINE (qnnpack: the Raspberry Pi
                 tutorial's; onednn: x86's)
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torchvision

VARIANTS = ("jit", "mobile", "quant-qnnpack", "quant-onednn")


def percentile(sorted_ms, p):
    """Nearest-rank percentile, as camclass-bench computes it."""
    rank = max(1, -(-len(sorted_ms) * p // 100))
    return sorted_ms[int(rank) - 1]


def quantize(model, engine, size):
    """torchvision's quantizable model (float, eval) fused, given the engine's default qconfig,
    calibrated on 8 random inputs and converted, in place."""
    if engine not in torch.backends.quantized.supported_engines:
        raise SystemExit("bench_torch: this torch has no quantized engine %s (it has %s)"
                         % (engine, ", ".join(torch.backends.quantized.supported_engines)))
    torch.backends.quantized.engine = engine
    from torch.ao import quantization as tq
    model.fuse_model()
    model.qconfig = tq.get_default_qconfig(engine)
    tq.prepare(model, inplace=True)
    with torch.no_grad():
        for _ in range(8):
            model(torch.rand(1, 3, size, size) * 4 - 2)
    tq.convert(model, inplace=True)
    return model


def export_onnx(name, variant, size, seed, out):
    """The camclass exporter's seeded random model, fp32 or quantized for variant, as ONNX."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "python"))
    from camclass_export.export import build_torchvision_model
    quant = variant.startswith("quant-")
    model = build_torchvision_model(("quantization." if quant else "") + name,
                                    random_seed=seed, input_shape=(1, 3, size, size))
    if quant:
        torch.manual_seed(seed)
        quantize(model, variant[len("quant-"):], size)
    torch.onnx.export(model, torch.zeros(1, 3, size, size), out, opset_version=13,
                      input_names=["input"], output_names=["logits"])


def build(name, variant, size):
    """The model prepared for variant; returns (callable, description)."""
    torch.manual_seed(0)
    if variant.startswith("quant-"):
        engine = variant[len("quant-"):]
        model = getattr(torchvision.models.quantization, name)(quantize=False).eval()
        quantize(model, engine, size)
        return torch.jit.script(model), "quantized int8, engine %s, jit.script" % engine
    model = getattr(torchvision.models, name)().eval()
    scripted = torch.jit.script(model)
    if variant == "mobile":
        from torch.utils.mobile_optimizer import optimize_for_mobile
        return optimize_for_mobile(scripted), "optimize_for_mobile (XNNPACK)"
    return torch.jit.optimize_for_inference(scripted), "torch.jit.optimize_for_inference"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="mobilenet_v2", help="torchvision model name")
    ap.add_argument("--variant", choices=VARIANTS, default="jit", help="inference path (jit)")
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    ap.add_argument("--runs", type=int, default=50, help="timed runs (default 50)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    ap.add_argument("--size", type=int, default=224, help="input height and width")
    ap.add_argument("--export-onnx", metavar="OUT.onnx",
                    help="write the model (fp32, or QDQ int8 with --variant quant-ENGINE) as "
                    "ONNX (opset 13) and exit")
    ap.add_argument("--random-seed", type=int, default=1,
                    help="--export-onnx: the camclass exporter's random weights of this seed "
                    "(default 1, as build/tools/mobilenet_v2_random.ccm)")
    args = ap.parse_args()
    if args.threads < 1 or args.runs < 1 or args.warmup < 0:
        ap.error("--threads and --runs must be >= 1, --warmup >= 0")
    if args.export_onnx and args.variant == "mobile":
        ap.error("--export-onnx writes the fp32 model (--variant jit) or a quantized one "
                 "(quant-ENGINE), not mobile")
    if not hasattr(torchvision.models, args.model):
        print(f"bench_torch: torchvision has no model {args.model}", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    if args.export_onnx:
        export_onnx(args.model, args.variant, args.size, args.random_seed, args.export_onnx)
        return 0

    t0 = time.perf_counter()
    with torch.no_grad():
        model, how = build(args.model, args.variant, args.size)
    load_ms = (time.perf_counter() - t0) * 1e3
    x = torch.rand(1, 3, args.size, args.size) * 4 - 2

    times = []
    with torch.no_grad():
        t0 = time.perf_counter()
        model(x)
        first_ms = (time.perf_counter() - t0) * 1e3
        for _ in range(args.warmup):
            model(x)
        for _ in range(args.runs):
            t0 = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - t0) * 1e3)

    times.sort()
    median = statistics.median(times)
    print(f"model       {args.model} (torch {torch.__version__}, {how})")
    print(f"device      CPU ({args.threads} thread{'s' if args.threads != 1 else ''})")
    print(f"load        {load_ms:.1f} ms")
    print(f"first run   {first_ms:.2f} ms")
    print(f"runs        {args.runs}")
    print(f"median      {median:.2f} ms  ({1000 / median:.1f} fps)")
    print(f"p90         {percentile(times, 90):.2f} ms")
    print(f"p99         {percentile(times, 99):.2f} ms")
    print(f"min         {times[0]:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
