#!/usr/bin/python3
"""meson test --benchmark cameras: several cameras in one camclass, on the CPU
with the self-test model. For 1, 2, 4 and 8 cameras, each looping the same 128x96 Y4M clip as
fast as it is taken (--frames F each, so every camera does the same work), it prints the
results/s of each camera (its own summary line) and in total (all results over the run's
longest camera), min/max of the per-camera rates, the peak RSS and the CPU time (os.wait4 of
the camclass process), and the RSS each camera adds over one camera. Figures only: nothing
here fails on a number (the machine is shared), only on a run that does not exit 0.

    bench_cameras.py CAMCLASS SELFTEST_MODEL SAMPLES_DIR [FRAMES]
"""
import json
import os
import re
import subprocess
import sys
import tempfile

EXE, MODEL, SAMPLES = sys.argv[1:4]
FRAMES = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
SUMMARY = re.compile(r"camclass: (\S+): (\d+) frames? classified.* ([\d.]+) results/s over "
                     r"([\d.]+) s")


def run(n, folder):
    clip = os.path.join(SAMPLES, "moving_128x96.y4m")
    config = os.path.join(folder, "cameras-%d.json" % n)
    with open(config, "w") as f:
        json.dump({"model": MODEL, "backend": "cpu", "headless": True, "log": "/dev/null",
                   "frames": FRAMES,
                   "cameras": [{"name": "c%d" % i, "input": clip, "loop": True}
                               for i in range(n)]}, f)
    err = os.path.join(folder, "stderr-%d.txt" % n)
    with open(err, "w") as e:
        p = subprocess.Popen([EXE, "--config", config], stdout=subprocess.DEVNULL, stderr=e)
    _, status, ru = os.wait4(p.pid, 0)
    text = open(err).read()
    if os.waitstatus_to_exitcode(status) != 0:
        print("FAIL %d cameras: exit %d: %s" % (n, os.waitstatus_to_exitcode(status), text))
        return None
    rows = [(m.group(1), int(m.group(2)), float(m.group(3)), float(m.group(4)))
            for m in SUMMARY.finditer(text)]
    results = sum(r[1] for r in rows)
    longest = max(r[3] for r in rows)
    rates = [r[2] for r in rows]  # the counts are equal (--frames): the rates tell
    return {"per_camera": rates, "total": results / longest if longest else 0,
            "fair": min(rates) / max(rates) if max(rates) else 0, "rss_mb": ru.ru_maxrss / 1024,
            "cpu_s": ru.ru_utime + ru.ru_stime}


def main():
    print("%d results per camera" % FRAMES)
    print("cameras  results/s total  per camera (min..max)  min/max  peak RSS MB  CPU s")
    base = None
    failed = False
    with tempfile.TemporaryDirectory(prefix="camclass-bench-cameras-") as folder:
        for n in (1, 2, 4, 8):
            r = run(n, folder)
            if not r:
                failed = True
                continue
            base = base or r
            added = (r["rss_mb"] - base["rss_mb"]) / (n - 1) if n > 1 else 0
            print("%7d  %15.1f  %9.1f..%-9.1f  %7.2f  %11.1f  %5.1f%s"
                  % (n, r["total"], min(r["per_camera"]), max(r["per_camera"]), r["fair"],
                     r["rss_mb"], r["cpu_s"],
                     "  (+%.1f MB per added camera)" % added if n > 1 else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
