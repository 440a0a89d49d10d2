#!/usr/bin/python3
"""camclass soak: a long headless run with the log rotated in the middle.

    tools/soak.py CAMCLASS MODEL INPUT [--backend B] [--frames N] [--every S]

Runs `camclass --headless --input INPUT --loop --log FILE --backend B --model MODEL` until N
frames are logged, sampling the process's resident memory (VmRSS) every S seconds. Halfway,
the log is renamed and camclass gets SIGHUP (what logrotate does), so the run writes two files.
Then SIGTERM, and the two files are read back:

  - lines lost: the summary's "frames" (results classified) minus the frame lines in both files;
  - seq gaps: seq numbers missing between the first and the last frame line (a headless file
    run classifies every frame, so seq runs 0, 1, 2, ...);
  - RSS at the start (after the first 5% of the frames: model, arena and caches loaded) and at
    the end, and the growth; the goal is <= 1 MB.

Prints the figures; exits 1 if a line was lost, a seq is missing or the summary is absent, or
camclass failed (memory growth is a figure to read, not a pass/fail: the machine is shared).
Runs as `meson test --benchmark` (soak-cpu, soak-vulkan) and by hand for longer runs.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class Counter:
    """Counts the frame lines appended to a growing file, reading only what is new."""

    def __init__(self, path):
        self.path, self.offset, self.frames, self.rest = path, 0, 0, b""

    def poll(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return self.frames
        self.offset += len(data)
        lines = (self.rest + data).split(b"\n")
        self.rest = lines.pop()
        self.frames += sum(1 for line in lines if b'"event":"frame"' in line)
        return self.frames


def read_log(path):
    frames, summary, bad = [], None, 0
    try:
        with open(path) as f:
            for line in f:
                try:
                    o = json.loads(line)
                except ValueError:
                    bad += 1
                    continue
                if o.get("event") == "frame":
                    frames.append(o["seq"])
                elif o.get("event") == "summary":
                    summary = o
    except FileNotFoundError:
        pass
    return frames, summary, bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("camclass")
    ap.add_argument("model")
    ap.add_argument("input")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--frames", type=int, default=100000)
    ap.add_argument("--every", type=float, default=1.0)
    ap.add_argument("--timeout", type=float, default=3600.0, help="give up after this many s")
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="camclass-soak-")
    log, rotated = os.path.join(tmp, "soak.jsonl"), os.path.join(tmp, "soak.jsonl.1")
    err = open(os.path.join(tmp, "stderr.txt"), "w+")
    cmd = [a.camclass, "--headless", "--input", a.input, "--loop", "--log", log,
           "--backend", a.backend, "--model", a.model]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    first, second = Counter(log), None
    samples = []  # (frames so far, rss kB)
    rss_start = None
    done = 0
    ok = True
    while True:
        time.sleep(a.every)
        if p.poll() is not None:
            print("soak: camclass exited early with status %d" % p.returncode)
            ok = False
            break
        done = first.poll() + (second.poll() if second else 0)
        rss = rss_kb(p.pid)
        if rss is not None:
            samples.append((done, rss))
            if rss_start is None and done >= a.frames // 20:
                rss_start = rss
        if second is None and done >= a.frames // 2:
            os.rename(log, rotated)  # logrotate's "create" style: rename, then SIGHUP
            first.path = rotated
            second = Counter(log)
            p.send_signal(signal.SIGHUP)
        if done >= a.frames:
            break
        if time.monotonic() - t0 > a.timeout:
            print("soak: %d of %d frames after %.0f s; stopping" % (done, a.frames, a.timeout))
            break
    rss_end = samples[-1][1] if samples else None
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            print("soak: camclass did not stop within 60 s of SIGTERM")
            ok = False
    wall = time.monotonic() - t0
    ok &= p.returncode == 0

    f1, s1, bad1 = read_log(rotated)
    f2, s2, bad2 = read_log(log)
    seqs = f1 + f2
    summary = s2 or s1
    lost = (summary["frames"] - len(seqs)) if summary else None
    gaps = (max(seqs) - min(seqs) + 1 - len(set(seqs))) if seqs else None
    err.seek(0)
    stderr = err.read().strip().splitlines()
    print("soak: %s backend, %d frame lines (%d before the rotation, %d after) in %.0f s, "
          "%.0f results/s" % (a.backend, len(seqs), len(f1), len(f2), wall, len(seqs) / wall))
    print("soak: summary frames %s, lines lost %s (summary says %s), seq gaps %s, "
          "unparsable lines %d" % (summary["frames"] if summary else "(no summary)", lost,
                                   summary.get("lines_lost") if summary else "-", gaps,
                                   bad1 + bad2))
    if rss_start is not None and rss_end is not None:
        growth = (rss_end - rss_start) / 1024.0
        print("soak: RSS %.1f MB after %d%% of the frames, %.1f MB at the end: growth %+.2f MB "
              "(goal <= 1 MB: %s)" % (rss_start / 1024.0, 5, rss_end / 1024.0, growth,
                                     "met" if growth <= 1.0 else "NOT met"))
    print("soak: camclass exit status %s; stderr: %s" % (p.returncode, " | ".join(stderr[-3:])))
    if summary is None or lost != 0 or gaps != 0 or bad1 + bad2:
        ok = False
    for path in (log, rotated, err.name):
        if os.path.exists(path):
            os.unlink(path)
    os.rmdir(tmp)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
