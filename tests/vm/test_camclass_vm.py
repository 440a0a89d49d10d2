#!/usr/bin/python3
"""camclass end to end on a real V4L2 driver: `camclass --headless --log - --camera /dev/video0
--backend cpu` in the vivid guest of run-vm.sh produces at least LINES well-formed JSON lines
and exits 0 on SIGTERM, its last line the summary.

The guest has no libraries and no Vulkan: camclass runs as built (dynamically linked), started
by the dynamic loader copied into the guest's /bin with every library `ldd` names
(`ld-linux-x86-64.so.2 --library-path /bin /bin/camclass ...`), on the CPU backend.

    test_camclass_vm.py RUN_VM CAMCLASS MODEL GUEST_SCRIPT [LINES [EXPECTED_TOP1]]

With EXPECTED_TOP1 (e.g. "75% colour bars", vivid's default pattern, for the self-test model),
at least 80 % of the frame lines must have that top-1 label.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, summary  # noqa: E402


def libraries(exe):
    """The loader and the libraries exe needs, as host paths (ldd)."""
    out = subprocess.run(["ldd", exe], capture_output=True, text=True, check=True).stdout
    paths = []
    for line in out.splitlines():
        parts = line.split()
        if "=>" in parts and len(parts) >= 3 and parts[2].startswith("/"):
            paths.append(parts[2])
        elif parts and parts[0].startswith("/"):  # the loader
            paths.append(parts[0])
    return paths


def boot_with(run_vm, exe, files, timeout, guest_argv, tmp):
    """Stages exe as /bin/camclass with its loader and libraries (copied under the names ldd
    shows, symlinks resolved) and files, [(host path, guest name)], into the guest's /bin,
    boots the vivid VM and runs guest_argv there. Returns (run-vm's exit status, the folder
    the guest's /out came back to)."""
    stage = os.path.join(tmp, "bin")
    os.mkdir(stage)
    bins = []
    staged = [(p, os.path.basename(p)) for p in libraries(exe)] + [(exe, "camclass")] + files
    for src, name in staged:
        dst = os.path.join(stage, name)
        shutil.copy(src, dst)
        bins.append(dst)
    out = os.path.join(tmp, "out")
    cmd = [run_vm, "--timeout", str(timeout), "--output", out, "--output-mb", "64"]
    for b in bins:
        cmd += ["--bin", b]
    return subprocess.run(cmd + ["--"] + guest_argv).returncode, out


def main():
    run_vm, exe, model, guest = sys.argv[1:5]
    lines = int(sys.argv[5]) if len(sys.argv) > 5 else 30
    expect = sys.argv[6] if len(sys.argv) > 6 else None
    tmp = tempfile.mkdtemp(prefix="camclass-vm-")
    rc_vm, out = boot_with(run_vm, exe, [(model, "model.ccm"), (guest, "camclass-e2e-guest.sh")],
                           200, ["sh", "/bin/camclass-e2e-guest.sh", str(lines), "90", "--",
                                 "--headless", "--log", "-", "--camera", "/dev/video0",
                                 "--backend", "cpu", "--size", "320x180",
                                 "--model", "/bin/model.ccm"], tmp)
    if not check(rc_vm == 0, "run-vm exit %d" % rc_vm):
        return 1
    rc = open(os.path.join(out, "rc")).read().strip() if os.path.exists(
        os.path.join(out, "rc")) else "missing"
    check(rc == "0", "camclass exit status in the guest: %s" % rc)
    text = open(os.path.join(out, "log.jsonl")).read()
    objs = []
    for i, line in enumerate(text.splitlines()):
        try:
            o = json.loads(line)
        except ValueError as e:
            check(False, "line %d is not JSON (%s): %r" % (i + 1, e, line))
            continue
        objs.append(o)
    frames = [o for o in objs if o.get("event") == "frame"]
    check(len(frames) >= lines, "%d frame lines, want >= %d" % (len(frames), lines))
    for o in frames:
        ok = (o.get("source") == "/dev/video0" and o.get("backend") == "cpu" and
              isinstance(o.get("seq"), int) and isinstance(o.get("top"), list) and
              len(o["top"]) == 5 and all(isinstance(c.get("label"), str) and
                                         0 <= c.get("score", -1) <= 1 for c in o["top"]))
        if not check(ok, "malformed frame line: %r" % o):
            break
    seqs = [o["seq"] for o in frames if isinstance(o.get("seq"), int)]
    check(seqs == sorted(set(seqs)), "frame seqs not increasing")
    check(objs and objs[-1].get("event") == "summary", "the last line is not the summary")
    if expect and frames:
        top1 = [o["top"][0].get("label") for o in frames if o.get("top")]
        hits = top1.count(expect)
        print("top-1 %r in %d of %d frames" % (expect, hits, len(top1)))
        check(hits >= 0.8 * len(top1), "top-1 %r in only %d of %d frames: %r" %
              (expect, hits, len(top1), sorted(set(top1))))
    if objs and objs[-1].get("event") == "summary":
        print("summary:", json.dumps(objs[-1]))
    shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
