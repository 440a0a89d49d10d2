#!/usr/bin/python3
"""camclass-train's speed (`meson test --benchmark train`): figures only, no timed assertion.

Draws 4 classes x 20 pictures (make_dataset.py), then trains on them with --augment 8 on the
CPU backend at 1 and 2 threads, each twice, rounds alternating: wall time, feature vectors per
second (pictures x views, held-out pictures one view each), the head's fit, peak RSS.

    bench_train.py CAMCLASS_TRAIN BASE.ccm [BASE.ccm...]
"""
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from checks import host_command  # noqa: E402

TRAIN, BASES = sys.argv[1], sys.argv[2:]
AUGMENT = 8


def one(data, base, out, threads):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.monotonic()
    r = subprocess.run(host_command(TRAIN) + [data, "--base", base, "-o", out, "--force",
                                              "--backend", "cpu", "--threads", str(threads),
                                              "--augment", str(AUGMENT), "--no-cache"],
                       capture_output=True, text=True, timeout=900)
    wall = time.monotonic() - t0
    if r.returncode:
        sys.exit(f"camclass-train failed: {r.stderr}")
    rows = int(re.search(r"head trained on (\d+) rows \((\d+) held out\) in (\d+) ms", r.stdout)
               .group(1))
    held = int(re.search(r"\((\d+) held out\)", r.stdout).group(1))
    head_ms = int(re.search(r"head trained on .* in (\d+) ms", r.stdout).group(1))
    rss = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return wall, rows + held, head_ms, rss


def main():
    with tempfile.TemporaryDirectory(prefix="camclass-train-bench-") as tmp:
        data = os.path.join(tmp, "scenes")
        subprocess.run([sys.executable, os.path.join(HERE, "make_dataset.py"), data,
                        "--per-class", "20"], check=True)
        for base in BASES:
            runs = {1: [], 2: []}
            for _ in range(2):
                for threads in (1, 2):
                    runs[threads].append(one(data, base, os.path.join(tmp, "out.ccm"), threads))
            for threads, rs in runs.items():
                wall = sorted(r[0] for r in rs)[len(rs) // 2]
                vecs = rs[0][1]
                print(f"{os.path.basename(base)}: 4 classes x 20 pictures, augment {AUGMENT}, "
                      f"{threads} thread(s): {wall:.2f} s wall (best of {len(rs)}: "
                      f"{min(r[0] for r in rs):.2f} s), {vecs} feature vectors, "
                      f"{vecs / wall:.1f}/s, head {rs[0][2]} ms, peak RSS {rs[0][3] / 1024:.0f} MB")


if __name__ == "__main__":
    main()
