#!/usr/bin/python3
"""camclass's cameras (#23 section 1; suite app), one test per part:

- rotation: --input DIR with --rotation 90 (and 180, 270 with --hflip, --vflip alone) logs the
  same top-k, score for score, as the same images turned by PIL and given as --input; the
  turned run differs from the unturned one on those images (so the comparison can fail);
  --rotation 45 and "rotation": "90" in a config exit 2 with one line.

    test_cameras.py PART CAMCLASS SELFTEST_MODEL SAMPLES_DIR
"""
import json
import os
import subprocess
import sys

from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import bound, check, env_headless, host_command, in_tmpdir  # noqa: E402

PART, EXE, MODEL, SAMPLES = sys.argv[1:5]
BASE = host_command(EXE) + ["--headless", "--model", MODEL, "--backend", "cpu"]
# Sample frames that are not symmetric under the turns (crosses and ramps would be).
FRAMES = ["001-horizontal-lines.png", "005-75-colour-bars.png", "006-colour-squares.png",
          "011-gray-ramp.png", "016-horizontal-colour-bars.png"]


def run(args, timeout=120):
    """camclass BASE + args: (exit status, stdout lines as JSON objects, stderr)."""
    out = subprocess.run(BASE + args, capture_output=True, env=env_headless(),
                         timeout=bound(timeout))
    objs = []
    for line in out.stdout.decode().splitlines():
        try:
            objs.append(json.loads(line))
        except ValueError:
            check(False, "not JSON: %r" % line)
    return out.returncode, objs, out.stderr.decode(errors="replace")


def tops_by_file(args):
    """{file: top} of a run's frame lines; a FAIL when the run does not exit 0."""
    rc, objs, err = run(args)
    check(rc == 0, "%s: exit %d: %s" % (" ".join(args), rc, err.strip()[-300:]))
    return {o.get("file"): o["top"] for o in objs if o.get("event") == "frame"}  # by file name


# PIL's name for each turn: flips first, then clockwise degrees (orient.h).
def turned(img, rotation, hflip, vflip):
    if hflip:
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
    if vflip:
        img = img.transpose(Image.FLIP_TOP_BOTTOM)
    return img.rotate(-rotation, expand=True) if rotation else img


def test_rotation(root):
    src = os.path.join(root, "src")
    os.makedirs(src)
    for name in FRAMES:
        Image.open(os.path.join(SAMPLES, "selftest", name)).convert("RGB").save(
            os.path.join(src, name))
    plain = tops_by_file(["--input", src, "--log", "-", "--log-format", "json"])
    check(len(plain) == len(FRAMES), "unturned run: %d of %d frames" % (len(plain), len(FRAMES)))
    for rotation, hflip, vflip in [(90, False, False), (180, False, False), (270, True, False),
                                   (0, False, True), (90, True, True)]:
        what = "--rotation %d%s%s" % (rotation, " --hflip" if hflip else "",
                                     " --vflip" if vflip else "")
        ref_dir = os.path.join(root, "turned-%d-%d-%d" % (rotation, hflip, vflip))
        os.makedirs(ref_dir)
        for name in FRAMES:
            turned(Image.open(os.path.join(src, name)), rotation, hflip, vflip).save(
                os.path.join(ref_dir, name))
        ref = tops_by_file(["--input", ref_dir, "--log", "-", "--log-format", "json"])
        args = ["--input", src, "--log", "-", "--log-format", "json", "--rotation", str(rotation)]
        args += (["--hflip"] if hflip else []) + (["--vflip"] if vflip else [])
        got = tops_by_file(args)
        check(len(got) == len(FRAMES), "%s: %d of %d frames" % (what, len(got), len(FRAMES)))
        for name in FRAMES:
            r, g = ref.get(name), got.get(name)
            check(r is not None and r == g, "%s %s: %s, the turned image gives %s"
                  % (what, name, g, r))
        differs = sum(plain.get(n) != got.get(n) for n in FRAMES)
        check(differs > 0, "%s: every frame scores as unturned: the test cannot tell" % what)
    rc, objs, err = run(["--input", src, "--rotation", "45"])
    check(rc == 2 and len(err.strip().splitlines()) == 1 and "--rotation" in err,
          "--rotation 45: exit %d, want 2 and one line: %r" % (rc, err))
    config = os.path.join(root, "config.json")
    with open(config, "w") as f:
        json.dump({"rotation": "90"}, f)
    rc, objs, err = run(["--input", src, "--config", config])
    check(rc == 2 and "rotation" in err and len(err.strip().splitlines()) == 1,
          "config \"rotation\": \"90\": exit %d, want 2 and one line: %r" % (rc, err))


PARTS = {"rotation": test_rotation}

if __name__ == "__main__":
    sys.exit(in_tmpdir("camclass-cameras-", PARTS[PART]))
