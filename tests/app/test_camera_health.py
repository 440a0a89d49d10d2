"""camclass --camera-health end to end on a crafted Y4M clip (mono, sensor noise on every
frame, played at 20 frames/s so that frame times move as a camera's do): a textured scene, then
3 s each of black, blurred, frozen (one frame repeated) and turned (the scene shifted by a
quarter), with the scene back for 3 s after each. The log must hold exactly one "camera" start
and one end per condition, in that order (black is both covered and dark), and none with the
default (auto: files are not checked).

    test_camera_health.py CAMCLASS MODEL
"""
import json
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, run, summary  # noqa: E402

camclass, model = sys.argv[1:3]
W, H, FPS, SEG = 160, 120, 20, 60  # a segment: 3 s
rng = np.random.default_rng(5)
scene = np.kron(rng.integers(40, 216, (H // 8, W // 8)), np.ones((8, 8))).astype(np.int32)


def box_blur(img, r=3):
    p = np.pad(img, r, mode="edge").astype(np.int64)
    c = p.cumsum(0).cumsum(1)
    c = np.pad(c, ((1, 0), (1, 0)))
    k = 2 * r + 1
    s = c[k:, k:] - c[:-k, k:] - c[k:, :-k] + c[:-k, :-k]
    return (s // (k * k)).astype(np.int32)


def noisy(img):
    return np.clip(img + rng.integers(-2, 3, img.shape), 0, 255).astype(np.uint8)


def frames():
    looks = [("normal", scene), ("black", np.full_like(scene, 4)), ("normal", scene),
             ("blurred", box_blur(scene)), ("normal", scene), ("frozen", None),
             ("normal", scene), ("turned", np.roll(scene, W // 4, axis=1)), ("normal", scene)]
    last = None
    for name, img in looks:
        for _ in range(SEG):
            if name != "frozen" or last is None:
                last = noisy(img)
            yield last


def write_y4m(path, pictures):
    with open(path, "wb") as f:
        f.write(b"YUV4MPEG2 W%d H%d F%d:1 Ip A1:1 Cmono\n" % (W, H, FPS))
        for p in pictures:
            f.write(b"FRAME\n" + p.tobytes())


def camera_lines(log_text):
    out = []
    for line in log_text.splitlines():
        o = json.loads(line)
        if o["event"] == "camera":
            out.append((o["condition"], o["state"]))
    return out


with tempfile.TemporaryDirectory() as tmp:
    clip = os.path.join(tmp, "clip.y4m")
    write_y4m(clip, frames())
    base = ["--headless", "--input", clip, "--model", model, "--backend", "cpu", "--fps",
            str(FPS), "--log", "-"]
    rc, out, err = run(camclass, base + ["--camera-health", "on"], timeout=180)
    check(rc == 0, "exit status %d: %s" % (rc, err[-400:]))
    got = camera_lines(out)
    want = [("covered", "start"), ("dark", "start"), ("covered", "end"), ("dark", "end"),
            ("blurred", "start"), ("blurred", "end"), ("frozen", "start"), ("frozen", "end"),
            ("moved", "start"), ("moved", "end")]
    # covered and dark start (and end) on the same frame: their order between them is free.
    check(sorted(got[:2]) == want[:2] and sorted(got[2:4]) == want[2:4] and got[4:] == want[4:],
          "camera lines %s, want %s" % (got, want))
    write_y4m(clip, (noisy(np.full_like(scene, 4)) for _ in range(SEG)))
    rc, out, err = run(camclass, base, timeout=120)
    check(rc == 0 and camera_lines(out) == [], "auto on a file: %d, %s" % (rc, camera_lines(out)))
sys.exit(summary())
