#!/usr/bin/python3
"""camclass-bench's command line: bad flags exit 2 with one line, a CPU run prints every
figure, --profile prints the per-op and slowest-layer tables, --trace writes a Chrome trace
with one "X" event per layer per run. --input/--save-output on the (input-sensitive) self-test
model: an image through camclass's file source and preprocessing, and the same tensor given
raw, both give PyTorch's output of that tensor (ccm_bundle.run_graph) within 1e-4 x max; bad
inputs exit 1 with one line. With --residual-names (resnet18): a convolution that took the
residual add after it is named "<conv> (+ add, relu)", op conv2d, in the trace and the profile.

    test_bench.py CAMCLASS_BENCH MODEL.ccm TRACE_OUT.json SELFTEST.ccm SAMPLE_DIR
    test_bench.py --residual-names CAMCLASS_BENCH RESNET18.ccm TRACE_OUT.json
"""
import json
import os
import subprocess
import sys
import tempfile

from checks import check, host_command, summary


def run(*args):
    return subprocess.run([*host_command(BENCH), *args], capture_output=True, text=True,
                          timeout=300)


if sys.argv[1] == "--residual-names":
    # resnet18 with our own 3x3 convs (which take the residual add and ReLU after them into
    # their store): the trace and the profile name each such conv "<conv> (+ add, relu)", op
    # conv2d, not the add.
    BENCH, MODEL, TRACE = sys.argv[2:5]
    r = subprocess.run([*host_command(BENCH), MODEL, "--backend", "cpu", "--threads", "1",
                        "--runs", "2", "--warmup", "0", "--profile", "--trace", TRACE],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "CAMCLASS_CPU_CONV3X3": "on"})
    check(r.returncode == 0 and "8 with the residual" in r.stdout,
          f"resnet18: exit {r.returncode}, {r.stdout!r} {r.stderr!r}")
    with open(TRACE) as f:
        named = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and
                 e.get("tid") == 2 and e["name"].endswith(" (+ add, relu)")]
    check(len(named) == 2 * 8 and all(e["cat"] == "conv2d" and ".conv2 " in e["name"]
                                      for e in named),
          f"trace: {len(named)} events named '<conv> (+ add, relu)', want 2 runs x 8: {named[:3]}")
    rows = [line for line in r.stdout.splitlines() if "(+ add" in line]
    check(all(line.split()[-4:-2] == ["relu)", "conv2d"] for line in rows),
          f"profile rows of fused convs: {rows}")
    sys.exit(summary())

BENCH, MODEL, TRACE, SELFTEST, SAMPLE = sys.argv[1:6]

for bad in (["--runs", "0", MODEL], ["--backend", "gpu", MODEL], ["--bogus", MODEL],
            [MODEL, "--threads"], [MODEL, MODEL], [], ["--device", "x", MODEL]):
    r = run(*bad)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("camclass-bench: "),
          f"{bad}: exit {r.returncode}, stderr {r.stderr!r}")

r = run("--help")
check(r.returncode == 0 and "--trace FILE" in r.stdout, f"--help: exit {r.returncode}")

# No usable bundle: a bad argument, exit 2 and one line, as camclass says it.
with tempfile.NamedTemporaryFile(suffix=".ccm") as junk:
    junk.write(b"not a zip")
    junk.flush()
    for path in ("/nonexistent.ccm", junk.name):
        r = run(path, "--backend", "cpu")
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and
              r.stderr.startswith("camclass-bench: "), f"{path}: exit {r.returncode} {r.stderr!r}")

runs = 3
r = run(MODEL, "--backend", "cpu", "--runs", str(runs), "--warmup", "0", "--profile",
        "--trace", TRACE)
out = r.stdout
check(r.returncode == 0, f"cpu run: exit {r.returncode}, {r.stderr!r}")
for key in ("model", "backend", "device", "load", "first run", "median", "p90", "p99", "min",
            "per op", "slowest 10 layers", "trace"):
    check(any(line.startswith(key) for line in out.splitlines()), f"no '{key}' line in:\n{out}")
check("fps)" in out and "conv2d" in out, "fps or the conv2d row missing")

nodes = int(out.split(" nodes)")[0].rsplit(", ", 1)[1])
with open(TRACE) as f:
    trace = json.load(f)
events = trace["traceEvents"]
layers = [e for e in events if e.get("ph") == "X" and e.get("tid") == 2]
run_events = [e for e in events if e.get("ph") == "X" and e.get("tid") == 1]
check(len(layers) == runs * nodes, f"{len(layers)} layer events for {runs} runs x {nodes} nodes")
check(len(run_events) == runs, f"{len(run_events)} run events")
check(all(e["dur"] >= 0 and e["ts"] >= 0 and e["cat"] and e["name"] for e in layers),
      "a layer event without name, category, ts or dur")

# --input / --save-output against PyTorch on the same tensor.
import numpy as np  # noqa: E402

from camclass_export import ccm_bundle, ccm_calibrate  # noqa: E402

manifest, consts, labels = ccm_bundle.read_bundle(SELFTEST)
images = sorted(n for n in os.listdir(SAMPLE) if n.endswith(".png"))[:2]
with tempfile.TemporaryDirectory(prefix="camclass-bench-io-") as tmp:
    outs = []
    for name in images:
        one = os.path.join(tmp, "one")
        os.makedirs(one, exist_ok=True)
        for old in os.listdir(one):
            os.unlink(os.path.join(one, old))
        os.symlink(os.path.abspath(os.path.join(SAMPLE, name)), os.path.join(one, name))
        x = ccm_calibrate.load_images(one, manifest).numpy()  # camclass's preprocessing
        want = ccm_bundle.run_graph(manifest, consts, x)[0]
        raw = os.path.join(tmp, "x.f32")
        x.astype("<f4").tofile(raw)
        # The raw tensor also with --poison, on both CPU backends: the same output.
        for src, extra in ((os.path.join(SAMPLE, name), ()), (raw, ()),
                           (raw, ("--poison",)), (raw, ("--poison", "--backend", "ref"))):
            dest = os.path.join(tmp, "y.f32")
            r = run(SELFTEST, "--backend", "cpu", "--runs", "1", "--warmup", "0",
                    "--input", src, "--save-output", dest, *extra)
            got = np.fromfile(dest, dtype="<f4") if r.returncode == 0 else np.zeros(0)
            err = float(np.abs(got - want).max() / np.abs(want).max()) if got.size == \
                want.size else float("inf")
            check(r.returncode == 0 and err <= 1e-4,
                  f"--input {os.path.basename(src)} {' '.join(extra)}: output within "
                  f"{err:.2g} x max of PyTorch's (1e-4); exit {r.returncode} "
                  f"{r.stderr.strip()!r}")
            if src == raw and not extra:
                outs.append(got)
    if len(outs) == 2:
        spread = float(np.abs(outs[0] - outs[1]).max() / np.abs(outs).max())
        check(spread >= 0.05, f"two frames' outputs differ by {spread:.3f} of max (>= 0.05): "
              "the model is input-sensitive")
    short = os.path.join(tmp, "short.f32")
    np.zeros(10, dtype="<f4").tofile(short)
    for bad, want in ((short, "float32 values"), (os.path.join(tmp, "nope.f32"), "cannot open"),
                      (os.path.join(tmp, "nope.png"), "nope.png")):
        r = run(SELFTEST, "--backend", "cpu", "--runs", "1", "--input", bad)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 1 and len(lines) == 1 and want in lines[0],
              f"--input {os.path.basename(bad)}: exit {r.returncode}, {r.stderr!r}")
    r = run(SELFTEST, "--input")
    check(r.returncode == 2 and "--input needs a file name" in r.stderr, f"--input alone: {r.stderr!r}")

sys.exit(summary())
