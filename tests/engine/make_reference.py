#!/usr/bin/python3
"""Reference data for the whole-network test (test_network.c).

    make_reference.py --bundle B.ccm (--model mobilenet_v2 | --module FILE.py:CLASS) \
                      --random-seed N --input-seed S \
                      --input-out input.bin --logits-out logits.bin

Rebuilds the ORIGINAL, unfused module the bundle was exported from (same torchvision model name
or module class, same seed as the exporter's --random-seed), draws TWO seeded random inputs of
the bundle's input shape (the second with half the contrast and a colour cast) and writes them one after the other (NCHW f32, little endian) together
with the module's own logits for each (f32, one after the other). Before writing it checks
  - that the bundle really is that module: its graph, run in float64 by camclass_export.ccm_bundle,
    must give the same logits (1e-4 relative), so a bundle built from another seed or model
    fails here with a clear message instead of in the C test;
  - that the model is input-sensitive: the two inputs' logits differ by >= 5% of the largest
    logit. A parity test on a model whose output does not depend on its input proves nothing
    about its early layers; test_network checks the same on the engine's output.
"""

import argparse
import sys

import numpy as np
import torch

from camclass_export import ccm_bundle
from camclass_export import export as camclass_export


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
    shape = manifest["input"]["shape"]
    if args.model:
        module = camclass_export.build_torchvision_model(args.model, classes,
                                                         random_seed=args.random_seed,
                                                         input_shape=shape)
    else:
        module = camclass_export.build_user_module(args.module, random_seed=args.random_seed,
                                                   input_shape=shape)
    what = args.model or args.module
    g = torch.Generator().manual_seed(args.input_seed)
    # The second input is another draw with half the contrast and a colour cast: i.i.d. noise
    # of the same statistics averages out in a small net's global pooling.
    cast = torch.tensor([0.5, -0.5, 0.25]).view(1, 3, 1, 1)
    xs = [torch.randn(shape, generator=g), 0.5 * torch.randn(shape, generator=g) + cast]
    with torch.no_grad():
        refs = [module(x).numpy().astype("<f4").reshape(-1) for x in xs]
    ref = refs[0]
    scale = float(np.abs(ref).max())
    err = 0.0
    for x, r in zip(xs, refs):
        got = ccm_bundle.run_graph(manifest, consts, x.numpy()).reshape(-1)
        err = max(err, float(np.abs(got - r).max()))
    if not err <= 1e-4 * scale:
        print("make_reference: %s is not %s with --random-seed %d: its graph differs from the "
              "module by %.3g (max |logit| %.3g)" % (args.bundle, what, args.random_seed,
                                                      err, scale), file=sys.stderr)
        return 1
    moved = float(np.abs(refs[1] - refs[0]).max())
    if not moved >= 0.05 * scale:
        print("make_reference: %s (seed %d) is not input-sensitive: two inputs move its logits "
              "by %.3g, %.2g x max |logit| (need >= 0.05); calibrate its BatchNorm statistics "
              "(camclass_export.randomize)" % (what, args.random_seed, moved, moved / scale),
              file=sys.stderr)
        return 1

    np.concatenate([x.numpy().astype("<f4").reshape(-1) for x in xs]).tofile(args.input_out)
    np.concatenate(refs).tofile(args.logits_out)
    top = np.argsort(-ref, kind="stable")[:5]
    print("make_reference: %s seed %d, input seed %d: max |logit| %.4g, top-5 %s (%s); "
          "bundle graph in float64 within %.2g x max|logit|; a second input moves the logits "
          "by %.2f x max|logit|"
          % (what, args.random_seed, args.input_seed, scale, list(top),
             ", ".join(labels[i] for i in top), err / scale, moved / scale))
    return 0


if __name__ == "__main__":
    sys.exit(main())
