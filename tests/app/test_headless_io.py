#!/usr/bin/python3
"""camclass --headless and where its output goes (suite app), one part per run:

- pipe: the reader of `--log -` goes away after one line (`camclass --headless --log - |
  head -1`, on a looped input that would run forever): camclass ends within seconds with exit
  status 0 and no warning; a log file that fails otherwise (/dev/full) is warned about and the
  run goes on to the end of its input;
- file: `--input DIR`: every frame line names its image ("file": the name in the directory),
  in order and again round a --loop; a single image names itself; a video's lines have no
  "file";
- summary: camclass's summary line on stderr gives the figures of the log's summary line: frames
  classified = "frames", "dropped", mean latency = "latency_ms", results/s = "fps" (0 for a
  one-frame run), over = "duration_s"; on one image, a directory, and a looped video played
  faster than inference (drops) ended by SIGTERM;
- text: the log on a terminal is text for people (time, #seq, top labels, latency) with no
  status line mixed in; --log-format json there is JSON; --log-format text to a file;
- status: with stderr on a pseudo-terminal, one status line rewritten in place ("\r"), at most
  4 times a second, with frames, results/s, latency, files done/total and ETA, ended by a
  newline before the summary line; with stderr on a pipe, none of it (no "\r", no escape).

    test_headless_io.py PART CAMCLASS MODEL ASSETS_SAMPLES

Every run is bounded (subprocess timeouts); a camclass that hangs is killed and fails the check.
"""
import functools
import json
import os
import pty
import select
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tty

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import bound, check, env_headless, host_command, summary, terminate  # noqa: E402
import checks  # noqa: E402

RUN_TIMEOUT = 60  # seconds for a run that ends by itself
run = functools.partial(checks.run, timeout=RUN_TIMEOUT)


def frames_dir(tmp, samples, n, name="frames"):
    """A directory of n PNG images from the self-test clip, named img-00.png ...; the names."""
    src = sorted(f for f in os.listdir(os.path.join(samples, "selftest")) if f.endswith(".png"))
    d = os.path.join(tmp, name)
    os.mkdir(d)
    names = []
    for i in range(n):
        names.append("img-%02d.png" % i)
        shutil.copy(os.path.join(samples, "selftest", src[i % len(src)]),
                    os.path.join(d, names[-1]))
    return d, names


def count_lines(path):
    try:
        with open(path) as f:
            return f.read().count("\n")
    except OSError:
        return 0


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
    p = subprocess.Popen(host_command(exe) + looped, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env_headless())
    try:
        first = p.stdout.readline()
        p.stdout.close()
        t0 = time.monotonic()
        try:
            p.wait(timeout=bound(30))
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
        p = subprocess.run(["bash", "-c", cmd, "sh"] + host_command(exe) + looped,
                           capture_output=True, text=True, timeout=bound(30), env=env_headless())
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
    check("camclass: 4 frames classified" in err, "/dev/full: not every frame: %r" % err)


def part_file(exe, base, samples, tmp):
    d, names = frames_dir(tmp, samples, 5)
    rc, out, err = run(exe, base + ["--input", d, "--log", "-"])
    check(rc == 0, "dir: exit %d: %s" % (rc, err))
    objs = [json.loads(l) for l in out.splitlines()]
    frames = [o for o in objs if o.get("event") == "frame"]
    check([o.get("file") for o in frames] == names, "dir: files %r, not %r" %
          ([o.get("file") for o in frames], names))
    check([o.get("seq") for o in frames] == list(range(5)), "dir: seq %r" %
          [o.get("seq") for o in frames])
    check(all(o.get("source") == d for o in objs), "dir: source changed")
    check(objs and objs[-1].get("event") == "summary" and "file" not in objs[-1],
          "dir: summary %r" % objs[-1:])

    # Round a loop (as fast as it goes; read 12 lines, then SIGTERM): names cycle with seq.
    p = subprocess.Popen(host_command(exe) + base + ["--input", d, "--loop", "--log", "-"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env_headless())
    lines = []
    try:
        # A bound for a camclass that stalls, not a speed check: the random mobilenet_v2 takes
        # ~2.5 s a frame under qemu-aarch64 (tools/test-arm64.sh), 12 lines ~30 s there.
        deadline = time.monotonic() + bound(90)
        while len(lines) < 12 and time.monotonic() < deadline:
            line = p.stdout.readline()
            if not line:
                break
            o = json.loads(line)
            if o.get("event") == "frame":  # not the stats line a run past 60 s writes
                lines.append(o)
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=bound(30))
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    check(len(lines) == 12, "loop: %d lines" % len(lines))
    check(all(o.get("file") == names[o.get("seq", 0) % 5] for o in lines),
          "loop: %r" % [(o.get("seq"), o.get("file")) for o in lines])

    # One image: its own name; a video: no "file".
    png = os.path.join(samples, "bars_320x240.png")
    rc, out, err = run(exe, base + ["--input", png, "--log", "-"])
    objs = [json.loads(l) for l in out.splitlines()]
    check(rc == 0 and objs and objs[0].get("file") == "bars_320x240.png",
          "one image: %r" % objs[:1])
    rc, out, err = run(exe, base + ["--input", os.path.join(samples, "moving_128x96.y4m")])
    objs = [json.loads(l) for l in out.splitlines()]
    check(rc == 0 and len(objs) == 5 and all("file" not in o for o in objs),
          "video: %r" % objs[:1])


SUMMARY = re.compile(r"^camclass: (\d+) frames? classified, (\d+) dropped(?:, \d+ bad skipped)?, "
                     r"mean latency (-?[\d.]+) ms, ([\d.]+) results/s over ([\d.]+) s$", re.M)


def compare_summaries(what, out, err):
    """The log's summary (last line of out) against camclass's line on stderr."""
    objs = [json.loads(l) for l in out.splitlines()]
    js = objs[-1] if objs and objs[-1].get("event") == "summary" else None
    m = SUMMARY.findall(err)
    if not check(js and len(m) == 1, "%s: summaries: log %r, stderr %r" % (what, js, err)):
        return None
    frames, dropped, latency, rate, over = m[0]
    check(int(frames) == js["frames"] == sum(o.get("event") == "frame" for o in objs),
          "%s: %s frames classified on stderr, log frames %s" % (what, frames, js["frames"]))
    check(int(dropped) == js["dropped"], "%s: %s dropped on stderr, log %s" %
          (what, dropped, js["dropped"]))
    # stderr prints one decimal, the log two or three: equal to within the rounding.
    check(abs(float(latency) - js["latency_ms"]) <= 0.051, "%s: mean latency %s ms, log %s" %
          (what, latency, js["latency_ms"]))
    check(abs(float(rate) - js["fps"]) <= 0.051, "%s: %s results/s, log fps %s" %
          (what, rate, js["fps"]))
    check(abs(float(over) - js["duration_s"]) <= 0.051, "%s: over %s s, log duration_s %s" %
          (what, over, js["duration_s"]))
    return js


def part_summary(exe, base, samples, tmp):
    # One frame: no rate from a single result, in both (the log documents fps 0).
    rc, out, err = run(exe, base + ["--input", os.path.join(samples, "bars_320x240.png")])
    check(rc == 0, "one image: exit %d: %s" % (rc, err))
    js = compare_summaries("one image", out, err)
    check(js and js["frames"] == 1 and js["fps"] == 0, "one image: log summary %r" % js)
    check("camclass: 1 frame classified, 0 dropped," in err, "one image: stderr %r" % err)

    d, names = frames_dir(tmp, samples, 6)
    rc, out, err = run(exe, base + ["--input", d])
    check(rc == 0, "dir: exit %d: %s" % (rc, err))
    js = compare_summaries("dir", out, err)
    check(js and js["frames"] == 6 and js["fps"] > 0, "dir: log summary %r" % js)

    # A video put faster than inference takes it, looped, stopped by SIGTERM: frames are
    # dropped, also while stopping; both lines count the drops up to the last result.
    log = os.path.join(tmp, "fast.jsonl")
    y4m = os.path.join(samples, "moving_128x96.y4m")
    p = subprocess.Popen(host_command(exe) + base + ["--input", y4m,
                                                     "--loop", "--fps", "1000", "--log", log],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env_headless())
    deadline = time.monotonic() + bound(60)
    while time.monotonic() < deadline and count_lines(log) < 20:
        time.sleep(0.05)
    out, err = terminate(p, signal.SIGTERM, 30)
    with open(log) as f:
        js = compare_summaries("fast", f.read(), err)
    check(p.returncode == 0 and js and js["frames"] >= 20 and js["dropped"] > 0,
          "fast: exit %s, no drops or too few frames: %r" % (p.returncode, js))


def run_on_pty(exe, args, timeout=RUN_TIMEOUT, stdout_too=False, env_extra=None):
    """Runs exe with stderr (and with stdout_too, stdout) on a pseudo-terminal (raw: no "\n" ->
    "\r\n"); else stdout discarded. Returns (exit status, what it wrote to the terminal,
    seconds it ran)."""
    master, slave = pty.openpty()
    tty.setraw(slave)
    t0 = time.monotonic()
    p = subprocess.Popen(host_command(exe) + args, stdin=subprocess.DEVNULL,
                         stdout=slave if stdout_too else subprocess.DEVNULL, stderr=slave,
                         env=dict(env_headless(), **(env_extra or {})))
    os.close(slave)
    out = b""
    try:
        deadline = t0 + bound(timeout)
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the slave side is closed, everything was read
                    break
                if not data:
                    break
                out += data
            elif p.poll() is not None:
                break
        p.wait(timeout=max(1, deadline - time.monotonic()))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        os.close(master)
    return p.returncode, out.decode(errors="replace"), time.monotonic() - t0


def part_status(exe, base, samples, tmp):
    n = 40
    d, names = frames_dir(tmp, samples, n)
    log = os.path.join(tmp, "status.jsonl")
    args = base + ["--input", d, "--fps", "16", "--log", log]  # about 2.5 s
    rc, err, wall = run_on_pty(exe, args)
    check(rc == 0, "tty: exit %s: %r" % (rc, err[-500:]))
    # Lines as a terminal shows them: each "\r" starts the line again.
    lines = err.split("\n")
    status = [l for l in lines if "\r" in l]
    check(len(status) == 1, "tty: %d lines hold status updates, not 1: %r" % (len(status), err))
    if not status:
        return
    updates = [u for u in status[0].split("\r") if u]
    check(2 <= len(updates) <= 4 * wall + 2, "tty: %d updates in %.1f s (at most 4/s)" %
          (len(updates), wall))
    for u in updates:
        check(re.match(r"^\d+ frames?  [\d.]+ results/s  latency -?[\d.]+ ms  files \d+/%d  "
                       r"ETA \d+:\d\d\x1b\[K$" % n, u) is not None or
              re.match(r"^1 frame  latency", u) is not None, "tty: update %r" % u)
    # At 16 files/s a loaded machine may drop some (the latest frame wins): the last update
    # gives the frames classified, as the summary does, and all the files fed.
    i = lines.index(status[0])
    summary_line = lines[i + 1] if i + 1 < len(lines) else ""
    m = re.match(r"^camclass: (\d+) frames classified", summary_line)
    check(m is not None, "tty: no summary line after the status line: %r" % summary_line)
    k = int(m.group(1)) if m else n
    check(updates[-1].startswith("%d frames " % k) and " files %d/%d " % (n, n) in updates[-1],
          "tty: the last update %r (the summary says %d frames)" % (updates[-1], k))
    check(lines[-1] == "", "tty: does not end with a newline: %r" % err[-100:])

    # The same without a terminal: the usual lines only.
    rc, out, err = run(exe, args)
    check(rc == 0, "pipe: exit %d: %s" % (rc, err))
    check("\r" not in err and "\x1b" not in err and "ETA" not in err and "results/s  " not in err,
          "no tty: status text on stderr: %r" % err)
    check(all(l.startswith("camclass: ") for l in err.splitlines()), "no tty: stderr %r" % err)


def part_text(exe, base, samples, tmp):
    """The log on the terminal (--log -, stdout a terminal): text lines for people, no status
    line mixed into them; --log-format json there gives JSON; text to a file when asked."""
    n = 12
    d, names = frames_dir(tmp, samples, n)
    args = base + ["--input", d, "--fps", "16", "--log", "-"]
    rc, out, _ = run_on_pty(exe, args, stdout_too=True)
    check(rc == 0, "text: exit %s: %r" % (rc, out[-400:]))
    check("\r" not in out and "\x1b" not in out and "ETA" not in out,
          "text: a status line on the log's terminal: %r" % out[-400:])
    frames = [l for l in out.splitlines() if re.match(r"^\d\d:\d\d:\d\d\.\d{3}  #\d+  ", l)]
    check(len(frames) >= n // 2 and all(re.search(r" [\d.]+ ms$", l) for l in frames),
          "text: %d frame lines like '12:00:01.512  #3  label 0.91 ... 41.8 ms':\n%s" %
          (len(frames), out[-600:]))
    check(re.search(r"^\d\d:\d\d:\d\d\.\d{3}  summary   \d+ frames, ", out, re.M) is not None,
          "text: no summary line: %r" % out[-300:])
    check(not any(l.startswith("{") for l in out.splitlines()), "text: JSON on the terminal")
    rc, out, _ = run_on_pty(exe, args + ["--log-format", "json"], stdout_too=True)
    js = [l for l in out.splitlines() if l.startswith("{")]
    check(rc == 0 and len(js) >= n // 2 and all(json.loads(l) for l in js),
          "text: --log-format json on a terminal: %d JSON lines" % len(js))
    # backend auto with nothing remembered: on a terminal a line says it is timing the backends.
    cache = os.path.join(tmp, "cache")
    auto = [a if a != "cpu" else "auto" for a in base]
    rc, out, _ = run_on_pty(exe, auto + ["--input", d, "--frames", "1"],
                            env_extra={"XDG_CACHE_HOME": cache})
    check(rc == 0 and "auto: timing the CPU and Vulkan backends" in out,
          "text: no progress line while auto times the backends: %r" % out[-400:])
    log = os.path.join(tmp, "text.log")
    rc, _, err = run(exe, base + ["--input", d, "--log", log, "--log-format", "text"])
    with open(log) as f:
        lines = f.read().splitlines()
    check(rc == 0 and len(lines) == n + 1 and lines[-1].split("  ")[1].startswith("summary"),
          "text: --log-format text to a file: %d lines %r" % (len(lines), lines[-1:]))


PARTS = {"pipe": part_pipe, "file": part_file, "summary": part_summary, "status": part_status,
         "text": part_text}


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
