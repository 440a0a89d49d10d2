#!/usr/bin/python3
"""Fault injection on the running camclass (docs/RELIABILITY.md, "Fault injection"), one part
per meson test:

    test_faults.py PART CAMCLASS SELFTEST_MODEL SELFTEST_INT8_MODEL SAMPLES_DIR

- vulkan: --vk-fault lost:3 on --backend vulkan and oom:2 on backend auto (vulkan remembered in
  the cache): exit 0, one line naming the VkResult and the switch, every frame logged once
  with contiguous seq, "backend" vulkan then cpu (the summary too), top-1 of every frame as a
  --backend cpu run; alloc:1 at load: exit 1 naming vkAllocateMemory on vulkan, the CPU backend
  with auto; a bad spec: exit 2 naming --vk-fault.
- oom: RLIMIT_AS bisected from where camclass's main first runs (--version) up to where the run works:
  every limit gives exit 0, 1 or 2 with one "camclass: " line and no signal, and one limit fails
  the bundle load ("bundle ...: out of memory ...", exit 2).
- logfull: the log on a 64 KiB tmpfs filled by another file: one line names ENOSPC for each
  gap in the log (a shorter line may still fit while the disk is full), the log holds whole
  lines only, lines resume when space is freed, and the summary's lines_lost is exactly the
  number of frames missing from the log.
- logro: a log in a read-only directory at start: exit 2 naming it; a read-only file system
  mounted over the log directory after logrotate renamed the file: SIGHUP's reopen fails with
  one line and the old file keeps receiving every line.
- sighup: 200 rotations (rename + SIGHUP) and a burst of 300 SIGHUPs while logging: no line
  lost or repeated, seq contiguous across the files, one summary at the end, lines_lost 0.
- model: the loaded bundle truncated in place, then replaced by rename with another model:
  nothing crashes and every frame keeps the scores of the model that was loaded.

logfull and logro mount tmpfs file systems: the test runs itself again under `unshare -m`
(a private mount namespace, gone when it exits), which needs root or user namespaces. Without
them these parts FAIL (CI runs as root).
"""
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import bound, check, host_command, lines_of, start, stop, summary, wait_until  # noqa: E402

PART, CAMCLASS, MODEL, MODEL_INT8, SAMPLES = sys.argv[1:6]
SELFTEST = os.path.join(SAMPLES, "selftest")


def parse_all(lines, what):
    """The parsed objects; a FAIL for each line that is not one JSON object."""
    out = []
    for i, line in enumerate(lines):
        try:
            out.append(json.loads(line))
        except ValueError:
            check(False, "%s: line %d is not JSON: %r" % (what, i + 1, line[:80]))
    return out


def frames_of(objs):
    return [o for o in objs if o.get("event") == "frame"]


def contiguous(seqs):
    return all(b == a + 1 for a, b in zip(seqs, seqs[1:]))


def run(args, env=None, **kw):
    return subprocess.run(host_command(CAMCLASS) + args, capture_output=True, text=True, timeout=bound(120),
                          env=env, **kw)




def count_frames(path):
    try:
        return sum(1 for line in lines_of(path) if '"event":"frame"' in line)
    except OSError:
        return 0


def some_images(tmp, n):
    d = os.path.join(tmp, "imgs")
    os.makedirs(d, exist_ok=True)
    for name in sorted(x for x in os.listdir(SELFTEST) if x.endswith(".png"))[:n]:
        shutil.copy(os.path.join(SELFTEST, name), d)
    return d


def loop_args(log, model=MODEL):
    return ["--headless", "--backend", "cpu", "--threads", "1", "--model", model,
            "--input", SELFTEST, "--loop", "--log", log]


# ------------------------------------------------------------------------------------------
# Vulkan faults: the engine switches to the CPU mid-run


def check_switch(tmp, what, args, vk_result, fail_at, cpu_top1, env):
    log = os.path.join(tmp, what + ".jsonl")
    r = run(args + ["--log", log], env=env)
    check(r.returncode == 0, "%s: exit %d, want 0: %s" % (what, r.returncode, r.stderr[-400:]))
    switch = [x for x in r.stderr.splitlines() if "switched to the CPU backend" in x]
    check(len(switch) == 1 and vk_result in switch[0],
          "%s: want one line naming %s and the switch: %r" % (what, vk_result, switch))
    objs = parse_all(lines_of(log), what)
    frames = frames_of(objs)
    check(len(frames) == len(cpu_top1), "%s: %d frames logged, want %d"
          % (what, len(frames), len(cpu_top1)))
    check(contiguous([f["seq"] for f in frames]), "%s: seq not contiguous" % what)
    want = ["vulkan"] * (fail_at - 1) + ["cpu"] * (len(frames) - fail_at + 1)
    check([f["backend"] for f in frames] == want, "%s: backends %s, want %s"
          % (what, [f["backend"] for f in frames], want))
    check(objs and objs[-1].get("event") == "summary" and objs[-1].get("backend") == "cpu",
          "%s: the summary does not name the cpu backend" % what)
    top1 = {f["file"]: f["top"][0]["index"] for f in frames}
    check(top1 == cpu_top1, "%s: top-1 per file %s, a cpu run gives %s" % (what, top1, cpu_top1))


def part_vulkan(tmp):
    imgs = some_images(tmp, 8)
    # The cache of backend auto's choices is the test's own; Mesa's shader cache stays where it
    # was (lavapipe compiles the pipelines for seconds without it).
    home_cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"),
               MESA_SHADER_CACHE_DIR=os.environ.get("MESA_SHADER_CACHE_DIR")
               or os.path.join(home_cache, "mesa_shader_cache"))
    base = ["--headless", "--model", MODEL, "--input", imgs]
    cpu_log = os.path.join(tmp, "cpu.jsonl")
    r = run(base + ["--backend", "cpu", "--log", cpu_log], env=env)
    check(r.returncode == 0, "cpu run: exit %d: %s" % (r.returncode, r.stderr[-400:]))
    cpu_top1 = {f["file"]: f["top"][0]["index"] for f in frames_of(parse_all(
        lines_of(cpu_log), "cpu run"))}
    check(len(cpu_top1) == 8, "cpu run: %d files classified, want 8" % len(cpu_top1))

    check_switch(tmp, "vulkan lost:3", base + ["--backend", "vulkan", "--vk-fault", "lost:3"],
                 "vkWaitForFences failed: VK_ERROR_DEVICE_LOST", 3, cpu_top1, env)

    # auto with vulkan remembered: a first start measures and writes the cache ("key\tlabel\t
    # cpu_ms\tvk_ms"); its label becomes vulkan.
    r = run(base[:-1] + [os.path.join(imgs, sorted(os.listdir(imgs))[0]), "--log", os.devnull],
            env=env)
    cache = os.path.join(tmp, "cache", "camclass", "backend-choice.txt")
    check(r.returncode == 0 and os.path.exists(cache),
          "auto did not remember a choice in %s: %s" % (cache, r.stderr[-400:]))
    if os.path.exists(cache):
        header, line = open(cache).read().split("\n", 1)
        key, rest = line.split("\t", 1)
        with open(cache, "w") as f:
            f.write("%s\n%s\tvulkan\t%s" % (header, key, rest.split("\t", 1)[1]))
        check_switch(tmp, "auto oom:2", base + ["--vk-fault", "oom:2"],
                     "vkQueueSubmit failed: VK_ERROR_OUT_OF_DEVICE_MEMORY", 2, cpu_top1, env)

    # An allocation failing at load: --backend vulkan fails (exit 1), auto takes the CPU.
    one = base[:-1] + [os.path.join(imgs, sorted(os.listdir(imgs))[0]), "--log", os.devnull]
    r = run(one + ["--backend", "vulkan", "--vk-fault", "alloc:1"], env=env)
    check(r.returncode == 1 and r.stderr.splitlines()[-1:] and
          "vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY" in r.stderr.splitlines()[-1],
          "vulkan alloc:1: exit %d, %r" % (r.returncode, r.stderr[-300:]))
    os.remove(cache)
    r = run(one + ["--vk-fault", "alloc:1"], env=env)
    check(r.returncode == 0 and "Vulkan unavailable (vkAllocateMemory failed: "
          "VK_ERROR_OUT_OF_DEVICE_MEMORY" in r.stderr and "on cpu" in r.stderr,
          "auto alloc:1: exit %d, %r" % (r.returncode, r.stderr[-400:]))
    r = run(one + ["--vk-fault", "melt:1"], env=env)
    check(r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "--vk-fault" in r.stderr
          and "melt:1" in r.stderr, "bad spec: exit %d, %r" % (r.returncode, r.stderr))


# ------------------------------------------------------------------------------------------
# Out of memory at model load (RLIMIT_AS)


def run_limited(mb, args=None):
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (mb << 20, mb << 20))
    if args is None:
        args = ["--headless", "--backend", "cpu", "--threads", "1", "--model", MODEL,
                "--input", os.path.join(SAMPLES, "bars_320x240.png"), "--log", os.devnull]
    return subprocess.run(host_command(CAMCLASS) + args, capture_output=True, text=True,
                          timeout=bound(60), preexec_fn=limit)


def part_oom(tmp):
    # The lowest limit at which camclass's main runs (--version answers). Below it the dynamic
    # loader cannot map every library (127), or a library's constructor fails before main:
    # GnuTLS (under libcurl) prints "Error in GnuTLS initialization" and the process exits 1
    # at the boundary, which no code of camclass's can word.
    lo, hi = 8, 1024
    check(run_limited(hi).returncode == 0, "camclass does not run under %d MiB" % hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if run_limited(mid, ["--version"]).returncode != 0:
            lo = mid
        else:
            hi = mid
    load_failed = False
    outcomes = []
    # Every MiB up to where it runs: a library that aborts when one of its first allocations
    # fails (BLIS did, at the first run) leaves a window of a MiB or so.
    for mb in range(hi, hi + 96):
        r = run_limited(mb)
        outcomes.append((mb, r.returncode))
        errs = [x for x in r.stderr.splitlines() if not x.startswith("camclass: model ")
                and not x.startswith("camclass: selftest_") and "classified" not in x]
        check(r.returncode in (0, 1, 2), "%d MiB: exit %d (a signal?): %r"
              % (mb, r.returncode, r.stderr[-300:]))
        if r.returncode == 0:
            break
        check(len(errs) == 1 and errs[0].startswith("camclass: "),
              "%d MiB: want one error line, got %r" % (mb, errs))
        if errs and "bundle " in errs[0] and "out of memory" in errs[0]:
            load_failed = True
            check(r.returncode == 2, "%d MiB: the load failed with exit %d, want 2"
                  % (mb, r.returncode))
    print("RLIMIT_AS MiB -> exit: %s" % outcomes)
    check(outcomes and outcomes[-1][1] == 0, "no limit up to %d MiB ran" % (hi + 95))
    check(load_failed, "no limit made the bundle load fail: %s" % outcomes)


# ------------------------------------------------------------------------------------------
# The log's disk full; a read-only log directory


def mount_tmpfs(path, opts):
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", path],
                       capture_output=True, text=True)
    return check(r.returncode == 0, "mount tmpfs -o %s %s: %s" % (opts, path, r.stderr.strip()))


def part_logfull(tmp):
    mnt = os.path.join(tmp, "small")
    if not mount_tmpfs(mnt, "size=64k"):
        return
    filler = os.path.join(mnt, "filler")
    with open(filler, "wb") as f:
        f.write(b"x" * (44 << 10))
    log, err = os.path.join(mnt, "log.jsonl"), os.path.join(tmp, "stderr")
    p = start(CAMCLASS, loop_args(log), err)
    full = wait_until(lambda: "No space left on device" in open(err).read(), 30, "ENOSPC")
    n_full = count_frames(log)
    time.sleep(0.3)  # frames go on and are lost
    os.remove(filler)
    if full:
        wait_until(lambda: count_frames(log) > n_full + 20, 30, "lines after space was freed")
    stop(p, "logfull")
    msgs = [x for x in open(err).read().splitlines() if "No space left on device" in x]
    objs = parse_all(lines_of(log), "logfull")
    frames = frames_of(objs)
    seqs = [f["seq"] for f in frames]
    gaps = [(a, b) for a, b in zip(seqs, seqs[1:]) if b != a + 1]
    # Lines differ in length, so while the disk is full a shorter line may still fit in what a
    # longer one left: that success ends one failure, and the next failure is reported anew.
    # Hence one message per gap in the log, each naming the file.
    check(len(msgs) >= 1 and len(msgs) == len(gaps) and all(log in m for m in msgs),
          "logfull: want one line naming %s per gap in the log (gaps %s): %r" % (log, gaps, msgs))
    last = objs[-1] if objs else {}
    check(last.get("event") == "summary", "logfull: the last line is no summary")
    lost = last.get("lines_lost", 0)
    missing = sum(b - a - 1 for a, b in gaps)
    after = len(seqs) - 1 - (seqs.index(gaps[-1][1]) if gaps else 0)
    check(len(gaps) >= 1 and all(b > a for a, b in gaps) and lost >= 1 and missing == lost
          and after >= 20,
          "logfull: gaps %s (%d frames missing), summary lines_lost %d, %d frames after the "
          "last gap" % (gaps, missing, lost, after))
    check(last.get("frames") == len(frames) + lost, "logfull: summary frames %s, logged %d + "
          "lost %d" % (last.get("frames"), len(frames), lost))


def part_logro(tmp):
    ro = os.path.join(tmp, "ro")
    if not mount_tmpfs(ro, "ro,size=64k"):
        return
    bad = os.path.join(ro, "log.jsonl")
    r = run(loop_args(bad)[:-5] + ["--input", os.path.join(SAMPLES, "bars_320x240.png"),
                                   "--log", bad])
    check(r.returncode == 2 and len(r.stderr.splitlines()) == 1 and bad in r.stderr and
          "Read-only file system" in r.stderr, "read-only at start: exit %d, %r"
          % (r.returncode, r.stderr))

    logs = os.path.join(tmp, "logs")
    if not mount_tmpfs(logs, "size=16m"):
        return
    log, rotated, err = os.path.join(logs, "log.jsonl"), os.path.join(logs, "log.1"), \
        os.path.join(tmp, "stderr")
    p = start(CAMCLASS, loop_args(log), err)
    wait_until(lambda: count_frames(log) >= 10, 30, "10 lines")
    os.rename(log, rotated)  # logrotate, then the directory turns read-only
    old = os.open(rotated, os.O_RDONLY)
    mounted = mount_tmpfs(logs, "ro,size=64k")
    # The read-only mount hides the directory: the old file is read through the fd.
    old_path = "/proc/self/fd/%d" % old
    n = count_frames(old_path)
    p.send_signal(signal.SIGHUP)
    wait_until(lambda: "Read-only file system" in open(err).read(), 20, "the reopen's error")
    wait_until(lambda: count_frames(old_path) > max(n + 10, 20), 20,
             "10 lines in the old file after SIGHUP")
    if mounted:
        subprocess.run(["umount", logs])
    stop(p, "logro")
    os.close(old)
    msgs = [x for x in open(err).read().splitlines() if "Read-only file system" in x]
    check(len(msgs) == 1 and log in msgs[0], "logro: want one line naming %s: %r" % (log, msgs))
    check(not os.path.exists(log), "logro: %s was created in the read-only directory" % log)
    objs = parse_all(lines_of(rotated), "logro")
    seqs = [f["seq"] for f in frames_of(objs)]
    check(contiguous(seqs) and len(seqs) > 20, "logro: %d frames, contiguous %s"
          % (len(seqs), contiguous(seqs)))
    check(objs and objs[-1].get("event") == "summary" and objs[-1].get("lines_lost") == 0,
          "logro: the old file does not end with a summary with lines_lost 0")


# ------------------------------------------------------------------------------------------
# SIGHUP storms


def part_sighup(tmp):
    d = os.path.join(tmp, "h")
    os.makedirs(d)
    log, err = os.path.join(d, "log.jsonl"), os.path.join(tmp, "stderr")
    p = start(CAMCLASS, loop_args(log), err)
    wait_until(lambda: count_frames(log) >= 1, 60, "the first line")
    for i in range(200):  # logrotate, 200 times
        if os.path.exists(log):
            os.rename(log, os.path.join(d, "log.%04d" % i))
        p.send_signal(signal.SIGHUP)
        time.sleep(0.005)
    for _ in range(300):  # a storm without rotations
        p.send_signal(signal.SIGHUP)

    def rotated():
        return sorted(x for x in os.listdir(d) if x.startswith("log.0"))

    # Then until the last file holds 20 lines and all more than 50 (not a fixed 0.3 s: how many
    # frames come in the storm's time depends on the machine; under TSan 40 came): lines go on
    # after the storm, and enough of them to see one lost or repeated. The bound is for a hang.
    n_rotated = sum(count_frames(os.path.join(d, x)) for x in rotated())
    wait_until(lambda: count_frames(log) >= 20 and n_rotated + count_frames(log) > 50, 120,
             "20 lines after the storm, more than 50 in all")
    stop(p, "sighup")
    check(open(err).read().count("camclass: detection log") == 0,
          "sighup: log errors on stderr: %r" % open(err).read()[-300:])
    files = rotated() + ["log.jsonl"]
    objs = []
    for name in files:
        if os.path.exists(os.path.join(d, name)):
            objs += parse_all(lines_of(os.path.join(d, name)), "sighup " + name)
    seqs = [f["seq"] for f in frames_of(objs)]
    summaries = [i for i, o in enumerate(objs) if o.get("event") == "summary"]
    print("sighup: %d files, %d frames" % (len(files), len(seqs)))
    check(len(seqs) > 50 and contiguous(seqs), "sighup: %d frames, seq contiguous: %s"
          % (len(seqs), contiguous(seqs)))
    check(summaries == [len(objs) - 1], "sighup: summaries at %s of %d lines"
          % (summaries, len(objs)))
    if summaries:
        s = objs[-1]
        check(s.get("lines_lost") == 0 and s.get("frames") == len(seqs),
              "sighup: summary frames %s lines_lost %s, logged %d"
              % (s.get("frames"), s.get("lines_lost"), len(seqs)))


# ------------------------------------------------------------------------------------------
# The model file replaced while loaded


def part_model(tmp):
    model = os.path.join(tmp, "m.ccm")
    shutil.copy(MODEL, model)
    imgs = some_images(tmp, 8)
    log, err = os.path.join(tmp, "log.jsonl"), os.path.join(tmp, "stderr")
    args = loop_args(log, model)
    args[args.index("--input") + 1] = imgs
    p = start(CAMCLASS, args, err)
    wait_until(lambda: count_frames(log) >= 16, 30, "16 lines")
    with open(model, "r+b") as f:  # truncated and overwritten in place
        f.truncate(0)
        f.write(b"PK\x03\x04 not a bundle any more")
    n = count_frames(log)
    wait_until(lambda: count_frames(log) >= n + 16, 30, "16 lines after the truncation")
    other = os.path.join(tmp, "other.ccm")
    shutil.copy(MODEL_INT8, other)
    os.replace(other, model)  # replaced by rename with another model
    n = count_frames(log)
    wait_until(lambda: count_frames(log) >= n + 16, 30, "16 lines after the rename")
    stop(p, "model")
    noise = [x for x in open(err).read().splitlines() if not (
        x.startswith("camclass: model ") or " on cpu (" in x or "classified" in x)]
    check(not noise, "model: unexpected lines on stderr: %r" % noise)
    by_file = {}
    for f in frames_of(parse_all(lines_of(log), "model")):
        by_file.setdefault(f["file"], set()).add(json.dumps(f["top"], sort_keys=True))
    check(len(by_file) == 8 and all(len(v) == 1 for v in by_file.values()),
          "model: each file should keep one result: %s"
          % {k: len(v) for k, v in by_file.items()})


PARTS = {"vulkan": part_vulkan, "oom": part_oom, "logfull": part_logfull, "logro": part_logro,
         "sighup": part_sighup, "model": part_model}


def main():
    if PART not in PARTS:
        print("unknown part %s; one of %s" % (PART, ", ".join(PARTS)))
        return 2
    if PART in ("logfull", "logro") and os.environ.get("CC_FAULTS_NS") != "1":
        # Again in a private mount namespace: the mounts vanish with it.
        env = dict(os.environ, CC_FAULTS_NS="1")
        try:
            return subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable]
                                  + sys.argv, env=env, timeout=bound(170)).returncode
        except OSError as e:
            check(False, "unshare: %s (needs util-linux, and root or user namespaces)" % e)
            return summary()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="camclass-faults-") as tmp:
        try:
            PARTS[PART](tmp)
        finally:
            if PART in ("logfull", "logro"):  # lazy: nothing may stay mounted in tmp
                for m in ("small", "ro", "logs", "logs"):
                    subprocess.run(["umount", "-l", os.path.join(tmp, m)],
                                   capture_output=True)
    print("%s: %.1f s" % (PART, time.monotonic() - t0))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
