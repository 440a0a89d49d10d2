#!/usr/bin/python3
"""camclass-capture --label in the vivid guest of run-vm.sh (suite capture): two
classes of vivid test patterns (red and blue, set through the V4L2 control), 3 pictures each
0.2 s apart, saved by the statically linked camclass-capture into /out/ds/<class>/ and copied
back; then on the host: 3 JPEGs per class at the camera's size whose colour is the pattern's,
no temporary file left, an unsafe --label refused with exit 2 in the guest before the camera
opens, and camclass-train on the folder exits 0.

    test_capture_label_vm.py RUN_VM CAPTURE_STATIC CAMCLASS_TRAIN MODEL
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import bound, check, summary  # noqa: E402

from PIL import Image  # noqa: E402

GUEST = """set -e
c=camclass-capture-static
$c -n 0 -q --set-ctrl test_pattern=7
$c --label red --count 3 --interval 0.2 -q /out/ds
$c -n 0 -q --set-ctrl test_pattern=9
$c --label blue --count 3 --interval 0.2 -q /out/ds
rc=0; $c --label .. /out/ds 2>/out/bad.txt || rc=$?
echo $rc > /out/bad-rc.txt
"""


def main():
    run_vm, capture, train, model = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as out:
        p = subprocess.run([run_vm, "--output", out, "--bin", capture, "--", "sh", "-c", GUEST],
                           capture_output=True, text=True, timeout=bound(300))
        check(p.returncode == 0, "the guest ran: exit %d %s" % (p.returncode, p.stdout[-600:]))
        ds = os.path.join(out, "ds")
        for label, channel in (("red", 0), ("blue", 2)):
            d = os.path.join(ds, label)
            names = sorted(os.listdir(d)) if os.path.isdir(d) else []
            check(len(names) == 3 and all(n.endswith(".jpg") and not n.startswith(".")
                                          for n in names), "%s: 3 JPEGs: %s" % (label, names))
            for n in names:
                im = Image.open(os.path.join(d, n))
                px = im.convert("RGB").getpixel((im.width // 2, im.height // 2))
                check(im.format == "JPEG" and im.size == (640, 480) and px[channel] > 150
                      and max(px) == px[channel], "%s/%s: %s %s centre %s" %
                      (label, n, im.format, im.size, px))
        try:
            rc = open(os.path.join(out, "bad-rc.txt")).read().strip()
            bad = open(os.path.join(out, "bad.txt")).read().strip().splitlines()
        except OSError:
            rc, bad = None, []
        check(rc == "2" and len(bad) == 1 and "folder above" in bad[0],
              "--label ..: exit 2 with one line (%s %s)" % (rc, bad))
        check(sorted(os.listdir(ds)) == ["blue", "red"] if os.path.isdir(ds) else False,
              "nothing else in the folder")
        t = subprocess.run([train, ds, "--base", model, "-o", os.path.join(out, "rb.ccm"),
                            "--backend", "cpu", "--augment", "1", "--no-cache"],
                           capture_output=True, text=True, timeout=bound(300))
        check(t.returncode == 0, "camclass-train on it: exit %d %s" % (t.returncode,
                                                                       t.stderr[-400:]))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
