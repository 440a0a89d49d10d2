"""camclass --clip-dir end to end: a folder of 121 self-test pictures at the folder's 2 images/s
(frame times from the frame index, so every count below is exact whatever the machine's speed):
red 0-15, blue 16-39, orange 40-70 (no label reaches the threshold: a clear), green 71-120, with
the default --clip-before 5 and --clip-after 10:

- red's onset at frame 0 starts clip A (nothing before it), blue's start at frame 16 (8 s, before
  A's end at 10 s) extends A to 18 s: A is frames 0-36, 37 pictures;
- the clear at frame 40 names A ("clip" on the clear line);
- green's onset at frame 71 (35.5 s) starts clip B at the key frame at or before 30.5 s (frame
  60, the picture at 30.5 s being no key frame, or one key interval earlier) to 45.5 s (frame
  91): 32 to 34 pictures;
- each clip decodes (ffprobe counts its pictures), starts with a key frame, has one at least
  every second, is named <UTC time>-<label>.mp4 for the start that opened it; no temporary file
  is left; with --clip-max-mb 1 an old clip (2 MB, camclass's name) beside them is deleted, a
  foreign file kept; a bad --clip-after is exit 2 with one line.

    test_clip.py CAMCLASS MODEL SAMPLES_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import bound, check, lines_of, run, summary  # noqa: E402

CAMCLASS, MODEL, SAMPLES = sys.argv[1:4]
NAME = re.compile(r"^\d{8}T\d{6}\.\d{3}Z-([A-Za-z0-9_][A-Za-z0-9_.-]*?)(-\d+)?\.mp4$")
SEQUENCE = ["018-red.png"] * 16 + ["004-blue.png"] * 24 + ["orange"] * 31 + ["019-green.png"] * 50


def image_dir(tmp):
    from PIL import Image
    d = os.path.join(tmp, "images")
    os.mkdir(d)
    orange = os.path.join(tmp, "orange.png")  # the self-test model's top score for it is < 0.5
    Image.new("RGB", (64, 48), (255, 128, 0)).save(orange)
    for i, name in enumerate(SEQUENCE):
        src = orange if name == "orange" else os.path.join(SAMPLES, name)
        os.symlink(src, os.path.join(d, "%03d.png" % i))
    return d


def key_frames(path):
    """The key frame flag of each picture, in order (ffprobe)."""
    p = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_frames",
                        "-show_entries", "frame=key_frame", "-of", "csv=p=0", path],
                       capture_output=True, text=True, timeout=bound(60))
    check(p.returncode == 0, "ffprobe %s: %s" % (path, p.stderr[-300:]))
    return [ln.strip().startswith("1") for ln in p.stdout.splitlines() if ln.strip()]


def check_clip(path, label, lo, hi):
    m = NAME.match(os.path.basename(path))
    check(m and m.group(1) == label, "%s is not named for %r" % (path, label))
    keys = key_frames(path)
    check(lo <= len(keys) <= hi, "%s: %d pictures, want %d to %d" % (path, len(keys), lo, hi))
    check(keys[:1] == [True], "%s does not start with a key frame" % path)
    at = [i for i, k in enumerate(keys) if k] + [len(keys)]
    gaps = [b - a for a, b in zip(at, at[1:])]
    check(max(gaps or [0]) <= 2, "%s: key frames %r, want one every second (2 pictures)" % (path, at))


def test_clips(tmp):
    clips, log = os.path.join(tmp, "clips"), os.path.join(tmp, "log.jsonl")
    folder = os.path.join(clips, "images")
    os.makedirs(folder)
    old, foreign = "20000101T000000.000Z-old.mp4", "keep.mp4"  # 2 MB each, the cap 1 MB
    for name in (old, foreign):
        with open(os.path.join(folder, name), "wb") as f:
            f.write(b"x" * 2000000)
    rc, _, err = run(CAMCLASS, ["--headless", "--input", image_dir(tmp), "--model", MODEL,
                                "--backend", "cpu", "--threshold", "0.6", "--window", "480x320",
                                "--log", log, "--clip-dir", clips, "--clip-max-mb", "1"],
                     timeout=bound(180))
    check(rc == 0, "exit status %d: %s" % (rc, err[-400:]))
    objs = [json.loads(x) for x in lines_of(log)]
    events = [(o["event"], o["seq"], o["detection"]["label"], o.get("clip")) for o in objs
              if o["event"] in ("detection", "clear")]
    check([e[:3] for e in events] == [("detection", 0, "red"), ("detection", 16, "blue"),
                                      ("clear", 40, "blue"), ("detection", 71, "green")],
          "the events are %r" % events)
    left = os.listdir(folder)
    check(old not in left and foreign in left,
          "the cap: %r left (the old clip must go, the foreign file stay)" % left)
    files = sorted(f for f in left if f not in (old, foreign))
    check(len(files) == 2 and all(NAME.match(f) for f in files), "the clips are %r" % files)
    if len(files) != 2:
        return
    a, b = (os.path.join(folder, f) for f in files)
    check(len(events) > 2 and events[2][3] == a, "the clear line names %r, not clip A %s"
          % (events[2][3] if len(events) > 2 else None, a))
    check_clip(a, "red", 37, 37)
    check_clip(b, "green", 32, 34)
    rc, _, err = run(CAMCLASS, ["--headless", "--input", os.path.join(tmp, "images"), "--model",
                                MODEL, "--backend", "cpu", "--clip-dir", clips, "--clip-after",
                                "0"], timeout=bound(60))
    lines = err.strip().splitlines()
    check(rc == 2 and len(lines) == 1 and "--clip-after" in lines[0],
          "--clip-after 0: exit %d, %r" % (rc, lines))


with tempfile.TemporaryDirectory() as tmp:
    test_clips(tmp)
sys.exit(summary())
