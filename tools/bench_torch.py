#!/usr/bin/python3
"""PyTorch's own speed on mobilenet_v2, to quote next to camclass-bench's figures.

Times torch.jit.optimize_for_inference(torch.jit.script(model.eval())) at batch 1 on the CPU
and prints the same summary lines as camclass-bench (median, p90, p99, min, fps). Weights do
not change the speed, so the model is built with random (seeded) weights.

    /usr/bin/python3 tools/bench_torch.py [--model mobilenet_v2] [--threads 2] [--runs 50]
"""
import argparse
import statistics
import sys
import time

import torch
import torchvision


def percentile(sorted_ms, p):
    """Nearest-rank percentile, as camclass-bench computes it."""
    rank = max(1, -(-len(sorted_ms) * p // 100))
    return sorted_ms[int(rank) - 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="mobilenet_v2", help="torchvision model name")
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    ap.add_argument("--runs", type=int, default=50, help="timed runs (default 50)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    ap.add_argument("--size", type=int, default=224, help="input height and width")
    args = ap.parse_args()
    if args.threads < 1 or args.runs < 1 or args.warmup < 0:
        ap.error("--threads and --runs must be >= 1, --warmup >= 0")

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    try:
        model = getattr(torchvision.models, args.model)()
    except AttributeError:
        print(f"bench_torch: torchvision has no model {args.model}", file=sys.stderr)
        return 2
    x = torch.rand(1, 3, args.size, args.size) * 4 - 2

    t0 = time.perf_counter()
    with torch.no_grad():
        scripted = torch.jit.optimize_for_inference(torch.jit.script(model.eval()))
    load_ms = (time.perf_counter() - t0) * 1e3

    times = []
    with torch.no_grad():
        t0 = time.perf_counter()
        scripted(x)
        first_ms = (time.perf_counter() - t0) * 1e3
        for _ in range(args.warmup):
            scripted(x)
        for _ in range(args.runs):
            t0 = time.perf_counter()
            scripted(x)
            times.append((time.perf_counter() - t0) * 1e3)

    times.sort()
    median = statistics.median(times)
    print(f"model       {args.model} (torch {torch.__version__}, "
          f"torch.jit.optimize_for_inference)")
    print(f"device      CPU ({args.threads} thread{'s' if args.threads != 1 else ''})")
    print(f"load        {load_ms:.1f} ms (script + optimize)")
    print(f"first run   {first_ms:.2f} ms")
    print(f"runs        {args.runs}")
    print(f"median      {median:.2f} ms  ({1000 / median:.1f} fps)")
    print(f"p90         {percentile(times, 90):.2f} ms")
    print(f"p99         {percentile(times, 99):.2f} ms")
    print(f"min         {times[0]:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
