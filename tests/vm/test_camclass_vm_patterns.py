#!/usr/bin/python3
"""camclass end to end on every class of the self-test model, in one boot of the vivid guest of
run-vm.sh: for each of the 19 classes, one vivid "Test Pattern" menu item of that class is set
through the V4L2 control (`camclass-capture-static -n 0 --set-ctrl test_pattern=N`; vivid's
other controls stay at their defaults), `camclass --headless --log - --camera /dev/video0
--backend cpu --size SIZE --fps 5` runs until LINES frame lines (then SIGTERM), and the top-1
label of the majority of the lines it logged must be the pattern's class (docs/MODELS.md,
"Classes"). Prints one result line per class. Defaults: 2 lines, 640x360 (at 320x180 vivid's OSD
text covers most of the frame: the 1-pixel cross is taken for white, the 2x2 red/green checkers
for blue).

    test_camclass_vm_patterns.py RUN_VM CAMCLASS CAPTURE_STATIC MODEL GUEST_SCRIPT [LINES [SIZE]]

camclass runs as in test_camclass_vm.py: dynamically linked, started by the loader copied into the
guest's /bin with every library `ldd` names, on the CPU backend (the guest has no Vulkan).
"""
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_camclass_vm as vm  # noqa: E402  (boot_with)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, summary  # noqa: E402

# One vivid menu index per class (the first item of a merged class), as in docs/MODELS.md.
PATTERNS = [
    (0, "75% colour bars"), (1, "100% colour bars"), (2, "CSC colour bars"),
    (3, "horizontal colour bars"), (4, "colour squares"), (5, "black"), (6, "white"),
    (7, "red"), (8, "green"), (9, "blue"), (10, "16x16 checkers"), (11, "fine checkers"),
    (13, "fine red/green checkers"), (15, "horizontal lines"), (16, "vertical lines"),
    (17, "thin cross"), (19, "thick cross"), (20, "gray ramp"), (21, "noise"),
]


def read_log(path):
    """The JSON objects of one log, and how many lines were not JSON."""
    objs, bad = [], 0
    if not os.path.exists(path):
        return objs, bad
    for line in open(path).read().splitlines():
        try:
            objs.append(json.loads(line))
        except ValueError:
            bad += 1
    return objs, bad


def main():
    run_vm, exe, capture, model, guest = sys.argv[1:6]
    lines = int(sys.argv[6]) if len(sys.argv) > 6 else 2
    size = sys.argv[7] if len(sys.argv) > 7 else "640x360"
    t0 = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="camclass-vm-patterns-")
    files = [(capture, "camclass-capture-static"), (model, "model.ccm"),
             (guest, "camclass-e2e-patterns.sh")]
    # --fps 5: under TCG vivid drawing 30 frames a second takes CPU from inference (before
    # BLIS: 151 s in all instead of 169 s); camclass classifies the latest frame either way.
    # 30 s a pattern, 120 s for the first: camclass's first start in the guest times its layers
    # (seen: no line within 30 s on the loaded CI machine, where the later starts took 20 s).
    guest_argv = ["sh", "/bin/camclass-e2e-patterns.sh", str(lines), "30", "120",
                  " ".join(str(n) for n, _ in PATTERNS), "--",
                  "--headless", "--log", "-", "--camera", "/dev/video0", "--backend", "cpu",
                  "--size", size, "--fps", "5", "--model", "/bin/model.ccm"]
    # Under TCG one inference of the self-test model takes about 4.5 s: qemu emulates the
    # AVX2/FMA instructions of BLIS's kernels (-cpu max) slowly, 2.2x slower than the SSE code
    # camclass had before BLIS; on the host the BLIS build is 1.7x faster. 19 patterns take
    # about 270 s on an idle machine; 400 s beside the rest of the suite (2026-11-26).
    rc_vm, out = vm.boot_with(run_vm, exe, files, 600, guest_argv, tmp)
    if not check(rc_vm == 0, "run-vm exit %d" % rc_vm):
        return 1
    results = []
    for n, want in PATTERNS:
        rc_path = os.path.join(out, "rc-%d" % n)
        rc = open(rc_path).read().strip() if os.path.exists(rc_path) else "missing"
        objs, bad = read_log(os.path.join(out, "log-%d.jsonl" % n))
        frames = [o for o in objs if o.get("event") == "frame"]
        top1 = [o["top"][0].get("label") for o in frames
                if isinstance(o.get("top"), list) and o["top"]]
        hits = top1.count(want)
        ok = rc == "0" and not bad and len(frames) >= lines and hits * 2 > len(top1)
        results.append(ok)
        print("%-4s pattern %2d  want %-24r top-1 %d/%d  %s%s" % (
            "ok" if ok else "FAIL", n, want, hits, len(top1), top1,
            "" if rc == "0" else "  camclass exit %s" % rc), flush=True)
        if not ok and frames:  # what it saw instead, with the scores
            print("     first line's top-3: %s" % ", ".join(
                "%s %.3f" % (c.get("label"), c.get("score", -1)) for c in frames[0]["top"][:3]))
        check(rc == "0", "pattern %d: camclass exit status in the guest: %s" % (n, rc))
        check(not bad, "pattern %d: %d lines are not JSON" % (n, bad))
        check(len(frames) >= lines, "pattern %d: %d frame lines, want >= %d" %
              (n, len(frames), lines))
        check(objs and objs[-1].get("event") == "summary",
              "pattern %d: the last line is not the summary" % n)
        check(all(o.get("source") == "/dev/video0" and o.get("backend") == "cpu"
                  for o in frames), "pattern %d: frame lines not from /dev/video0 on cpu" % n)
        check(hits * 2 > len(top1), "pattern %d (%s): top-1 in only %d of %d frames" %
              (n, want, hits, len(top1)))
    print("classes right: %d of %d; %.0f s in all" % (sum(results), len(PATTERNS),
                                                      time.monotonic() - t0))
    shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
