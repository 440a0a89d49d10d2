#!/usr/bin/python3
"""Reference data for the whole-network test (test_network.c).

    make_reference.py --bundle B.ccm (--model mobilenet_v2 | --module FILE.py:CLASS) \
                      --random-seed N --input-seed S \
                      --input-out input.bin --logits-out logits.bin

Rebuilds the ORIGINAL, unfused module the bundle was exported from (same torchvision model name
or module class, same seed as the exporter's --random-seed), draws a seeded random input of the
bundle's input shape and writes it (NCHW f32, little endian) together with the module's own
logits (f32). Before writing it checks that the bundle really is that module: its graph, run in
float64 by tools/ccm_bundle.py, must give the same logits (1e-4 relative), so a bundle built
from another seed or model fails here with a clear message instead of in the C test.
"""

import argparse
import os
import sys

import numpy as np
import torch

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")
sys.path.insert(0, TOOLS)
import camclass_export  # noqa: E402
import ccm_bundle  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bundle", required=True)
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--model")
    source.add_argument("--module")
    p.add_argument("--random-seed", type=int, required=True)
    p.add_argument("--input-seed", type=int, default=7)
    p.add_argument("--input-out", required=True)
    p.add_argument("--logits-out", required=True)
    args = p.parse_args()
    torch.set_num_threads(1)

    manifest, consts, labels = ccm_bundle.read_bundle(args.bundle)
    classes = manifest["output"]["classes"]
    if args.model:
        module = camclass_export.build_torchvision_model(args.model, classes,
                                                         random_seed=args.random_seed)
    else:
        module = camclass_export.build_user_module(args.module, random_seed=args.random_seed)
    what = args.model or args.module
    g = torch.Generator().manual_seed(args.input_seed)
    x = torch.randn(manifest["input"]["shape"], generator=g)
    with torch.no_grad():
        logits = module(x)
    ref = logits.numpy().astype("<f4").reshape(-1)

    got = ccm_bundle.run_graph(manifest, consts, x.numpy()).reshape(-1)
    scale = float(np.abs(ref).max())
    err = float(np.abs(got - ref).max())
    if not err <= 1e-4 * scale:
        print("make_reference: %s is not %s with --random-seed %d: its graph differs from the "
              "module by %.3g (max |logit| %.3g)" % (args.bundle, what, args.random_seed,
                                                      err, scale), file=sys.stderr)
        return 1

    x.numpy().astype("<f4").tofile(args.input_out)
    ref.tofile(args.logits_out)
    top = np.argsort(-ref, kind="stable")[:5]
    print("make_reference: %s seed %d, input seed %d: max |logit| %.4g, top-5 %s (%s); "
          "bundle graph in float64 within %.2g x max|logit|"
          % (what, args.random_seed, args.input_seed, scale, list(top),
             ", ".join(labels[i] for i in top), err / scale))
    return 0


if __name__ == "__main__":
    sys.exit(main())
