#!/usr/bin/python3
"""camclass --headless and where its output goes (suite app), one part per run:

- pipe: the reader of `--log -` goes away after one line (`camclass --headless --log - |
  head -1`, on a looped input that would run forever): camclass ends within seconds with exit
  status 0 and no warning; a log file that fails otherwise (/dev/full) is warned about and the
  run goes on to the end of its input.

    test_headless_io.py PART CAMCLASS MODEL ASSETS_SAMPLES

Every run is bounded (subprocess timeouts); a camclass that hangs is killed and fails the check.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, summary  # noqa: E402

RUN_TIMEOUT = 60  # seconds for a run that ends by itself


def env_headless():
    env = dict(os.environ)
    for k in ("DISPLAY", "WAYLAND_DISPLAY", "NOTIFY_SOCKET"):
        env.pop(k, None)
    return env


def run(exe, args, timeout=RUN_TIMEOUT):
    p = subprocess.run([exe] + args, capture_output=True, text=True, timeout=timeout,
                       env=env_headless())
    return p.returncode, p.stdout, p.stderr


def warnings(err):
    """stderr lines that are not camclass's usual notices (model, backend, summary)."""
    usual = ("camclass: model ", "camclass: input ", "camclass: backend ")
    return [l for l in err.splitlines()
            if not l.startswith(usual) and " on cpu (" not in l and
            " classified, " not in l]


def part_pipe(exe, base, samples, tmp):
    y4m = os.path.join(samples, "moving_128x96.y4m")
    looped = base + ["--input", y4m, "--loop", "--log", "-"]

    # 1. The reader reads one line and closes the pipe; camclass must notice at its next line.
    p = subprocess.Popen([exe] + looped, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env_headless())
    try:
        first = p.stdout.readline()
        p.stdout.close()
        t0 = time.monotonic()
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            check(False, "pipe: camclass still runs 30 s after its reader went away")
            p.kill()
            p.wait()
        took = time.monotonic() - t0
        err = p.stderr.read().decode()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    check(json.loads(first).get("event") == "frame", "pipe: first line %r" % first[:100])
    check(p.returncode == 0, "pipe: exit status %d, not 0: %s" % (p.returncode, err))
    check(took < 10, "pipe: %.1f s to end after the reader went away" % took)
    check(warnings(err) == [], "pipe: warnings on stderr: %r" % warnings(err))
    check(err.count(" classified, ") == 1, "pipe: the summary line on stderr: %r" % err)

    # 2. The command of the issue, through a shell: `camclass ... | head -1` (pipefail gives
    # camclass's status when it is not 0).
    cmd = 'set -o pipefail; "$@" | head -1'
    try:
        p = subprocess.run(["bash", "-c", cmd, "sh", exe] + looped, capture_output=True,
                           text=True, timeout=30, env=env_headless())
        check(p.returncode == 0, "| head -1: exit status %d: %s" % (p.returncode, p.stderr))
        check(len(p.stdout.splitlines()) == 1, "| head -1: stdout %r" % p.stdout[:200])
        check(warnings(p.stderr) == [], "| head -1: warnings: %r" % warnings(p.stderr))
    except subprocess.TimeoutExpired:
        check(False, "| head -1: still running after 30 s")

    # 3. A log that fills up is another matter: warned about (the lines, then the summary that
    # could not be written either), and the run goes on to the end of the input.
    rc, out, err = run(exe, base + ["--input", y4m, "--log", "/dev/full"])
    full = [l for l in err.splitlines() if os.strerror(28) in l]  # ENOSPC
    check(rc == 0, "/dev/full: exit status %d: %s" % (rc, err))
    check(1 <= len(full) <= 2 and all("/dev/full" in l for l in full),
          "/dev/full: the warnings: %r" % err)
    check(" 4 classified" in err, "/dev/full: not every frame: %r" % err)


PARTS = {"pipe": part_pipe}


def main():
    part, exe, model, samples = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3]), sys.argv[4]
    tmp = tempfile.mkdtemp(prefix="camclass-io-")
    base = ["--model", model, "--backend", "cpu", "--headless"]
    try:
        PARTS[part](exe, base, samples, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
