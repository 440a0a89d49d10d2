#!/usr/bin/python3
"""Where camclass and ONNX Runtime spend a run, block by block: the median over runs of each
block's time in a `camclass-bench --trace` and in a `tools/bench_ort.js --trace` (ONNX Runtime's
profile) of the same torchvision-style model (layers named features.N...: mobilenet_v2,
mobilenet_v3, efficientnet). A residual add counts in the block of its last input (camclass
runs fused blocks as their add node; ONNX Runtime fuses the add into the project conv).

    tools/layers_vs_ort.py MODEL.ccm CAMCLASS_TRACE.json ORT_TRACE.json

ONNX Runtime's first run (its profile holds every run) is left out; medians, not means, so
that a run interrupted by other load moves no row (and the sum of the rows is no run's time:
under load, hardly any run goes without a stall somewhere).
"""
import json
import re
import statistics
import sys
import zipfile

# features.2.conv... (camclass, ORT from a float export), features/2/conv... (ORT, QDQ export)
BLOCK = re.compile(r"features[./](\d+)")


def block_of(name):
    m = BLOCK.search(name)
    return int(m[1]) if m else None


def camclass_blocks(model, trace):
    """{block: [ms per run]} from camclass-bench's layer events (tid 2, args.run)."""
    with zipfile.ZipFile(model) as z:
        graph = json.loads(z.read("manifest.json"))["graph"]
    where = {}
    for n in graph:
        b = block_of(n["name"])
        if n["op"] == "add":
            ins = [block_of(i) for i in n["inputs"] if block_of(i) is not None]
            b = max(ins) if ins else None
        where[n["name"]] = b
    runs = {}
    for e in json.load(open(trace))["traceEvents"]:
        if e.get("ph") == "X" and e.get("tid") == 2:
            row = runs.setdefault(e["args"]["run"], {})
            b = where.get(e["name"])
            row[b] = row.get(b, 0.0) + e["dur"] / 1e3
    return runs


def ort_blocks(trace):
    """{run index: {block: ms}} from ONNX Runtime's profile, its first run left out."""
    events = json.load(open(trace))
    starts = sorted(e["ts"] for e in events
                    if e.get("cat") == "Session" and e.get("name") == "model_run")
    runs = {}
    for e in events:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        i = sum(1 for s in starts if s <= e["ts"]) - 1
        if i >= 1:
            row = runs.setdefault(i, {})
            b = block_of(e["name"])
            row[b] = row.get(b, 0.0) + e["dur"] / 1e3
    return runs


def medians(runs):
    keys = {k for r in runs.values() for k in r}
    return {k: statistics.median(r.get(k, 0.0) for r in runs.values()) for k in keys}


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: layers_vs_ort.py MODEL.ccm CAMCLASS_TRACE.json ORT_TRACE.json", file=sys.stderr)
        return 2
    cc_runs = camclass_blocks(sys.argv[1], sys.argv[2])
    ort_runs = ort_blocks(sys.argv[3])
    cc, ort = medians(cc_runs), medians(ort_runs)
    label = lambda b: "other (pool, classifier)" if b is None else f"features.{b}"  # noqa: E731
    print(f"| block | camclass ms | ONNX Runtime ms | ÷ ORT |  (medians of {len(cc_runs)} / "
          f"{len(ort_runs)} runs)")
    print("|---|---|---|---|")
    order = sorted(set(cc) | set(ort), key=lambda b: (b is None, b or 0))
    for b in order:
        c, o = cc.get(b, 0.0), ort.get(b, 0.0)
        print(f"| {label(b)} | {c:.3f} | {o:.3f} | {c / o:.2f} |" if o else
              f"| {label(b)} | {c:.3f} | {o:.3f} | – |")
    tc, to = sum(cc.values()), sum(ort.values())
    print(f"| sum of the rows | {tc:.3f} | {to:.3f} | {tc / to:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
