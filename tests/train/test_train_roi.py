#!/usr/bin/python3
"""A region of interest end to end: the crop is what makes a state sensor learnable.

The scenes (drawn here with PIL): a small lamp, red or blue, somewhere in the bottom-right
quadrant is the class; the other three quadrants hold 8 to 12 red and blue blobs at random and
everything is noise. The same training with --roi on that quadrant must reach FLOOR held out
and beat the whole frame by MARGIN (measured on this machine: 0.92 against 0.67 with seed 1).

- The bundle's manifest carries "input": {"roi": [0.5, 0.5, 0.5, 0.5]}; camclass --input on
  a folder applies it (one line names it) and --roi none gives other scores; a config's "roi"
  is --roi's.
- camclass-train takes the default ROI from DIR/camclass-dataset.json, pixels (80,80,80,80px
  of the 160x160 pictures) as the same fractions, and the feature cache keys on the ROI: the
  same ROI computes nothing again, another ROI computes every view.
- POST /predict crops to the running ROI, ?roi=none and ?roi=X,Y,W,H override it; the answer
  names the ROI applied; a malformed ?roi= is 400, a pixel ROI outside the image 422.
- Bad ROIs, each one line and exit 2: malformed or outside the frame (--roi of both
  programs, a pixel ROI past the first frame), a bad camclass-dataset.json.

    test_train_roi.py CAMCLASS_TRAIN CAMCLASS SELFTEST_CCM
"""
import json
import os
import random
import re
import shutil
import sys
import tempfile
import zipfile

from PIL import Image, ImageDraw

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "app"))
from checks import check, host_command, run_process, summary  # noqa: E402
from serve_client import Server  # noqa: E402

TRAIN, CAMCLASS, SELFTEST = sys.argv[1:4]
FLOOR = 0.8    # held-out accuracy with the ROI (2 classes: chance is 0.5)
MARGIN = 0.15  # at least this much above the whole frame's
QUADRANT = "0.5,0.5,0.5,0.5"
RED, BLUE = (220, 30, 30), (30, 30, 220)
CACHE = tempfile.mkdtemp(prefix="camclass-roi-cache-")


def scene(cls, rng, size=160):
    img = Image.effect_noise((size, size), 60).convert("RGB")
    d = ImageDraw.Draw(img)
    h = size // 2
    for _ in range(rng.randint(8, 12)):  # clutter, outside the bottom-right quadrant
        while True:
            x, y = rng.randint(0, size - 20), rng.randint(0, size - 20)
            if not (x + 20 > h and y + 20 > h):
                break
        r = rng.randint(8, 18)
        d.ellipse([x, y, x + r * 2, y + r * 2], fill=rng.choice([RED, BLUE]))
    x, y, r = rng.randint(h + 5, size - 30), rng.randint(h + 5, size - 30), rng.randint(8, 12)
    d.ellipse([x, y, x + 2 * r, y + 2 * r], fill=RED if cls == "red" else BLUE)
    return img


def make(path, per_class, seed):
    rng = random.Random(seed)
    for cls in ("red", "blue"):
        os.makedirs(os.path.join(path, cls), exist_ok=True)
        for i in range(per_class):
            scene(cls, rng).save(os.path.join(path, cls, f"{i:03d}.png"))


def run(exe, *args):
    return run_process(exe, args, 600, {"XDG_CACHE_HOME": CACHE})


def train(data, out, *extra):
    return run(TRAIN, data, "--base", SELFTEST, "-o", out, "--backend", "cpu", "--val", "0.3",
               "--force", *extra)


def manifest(path):
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("manifest.json"))


def computed(r):
    m = re.search(r"features: (\d+) views computed, (\d+) from the cache", r.stdout)
    return (int(m.group(1)), int(m.group(2))) if r.returncode == 0 and m else (-1, -1)


def one_line_exit2(r, want, what):
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(lines) == 1 and want in lines[0],
          f"{what}: exit {r.returncode}, one line with {want!r}: {r.stderr!r}")


def accuracy(tmp, data, name, *extra):
    out, report = os.path.join(tmp, name + ".ccm"), os.path.join(tmp, name + ".json")
    r = train(data, out, "--report", report, *extra)
    check(r.returncode == 0, f"{name}: exit 0 ({r.stderr[-300:]!r})")
    if r.returncode:
        return out, -1.0, r
    with open(report) as f:
        return out, json.load(f)["held_out_accuracy"], r


def frames(r):
    return [json.loads(x) for x in r.stdout.splitlines() if '"event":"frame"' in x]


def scores(fr):
    return [(f["file"], [(t["label"], round(t["score"], 5)) for t in f["top"]]) for f in fr]


def check_camclass(tmp, out, data):
    pick = os.path.join(tmp, "pick")
    os.makedirs(pick, exist_ok=True)
    for c in ("red", "blue"):
        for n in sorted(os.listdir(os.path.join(data, c)))[:3]:
            shutil.copy(os.path.join(data, c, n), os.path.join(pick, c + n))
    base = ["--model", out, "--input", pick, "--headless", "--log", "-", "--backend", "cpu"]
    own, none = run(CAMCLASS, *base), run(CAMCLASS, *base, "--roi", "none")
    flag = run(CAMCLASS, *base, "--roi", QUADRANT)
    check(own.returncode == 0 and len(frames(own)) == 6 and
          f"region of interest {QUADRANT} (the model's" in own.stderr,
          f"camclass applies the bundle's ROI and says so: {own.stderr[-300:]!r}")
    check(none.returncode == 0 and len(frames(none)) == 6 and
          scores(frames(none)) != scores(frames(own)),
          "camclass --roi none classifies the whole frame: other scores")
    check(scores(frames(flag)) == scores(frames(own)) and "(--roi)" in flag.stderr,
          "camclass --roi with the bundle's own ROI: the same scores")
    right = sum(f["top"][0]["label"] in f["file"] for f in frames(own))
    print(f"camclass with the bundle's ROI: {right} of 6 pictures right")
    conf = os.path.join(tmp, "roi-none.json")
    with open(conf, "w") as f:
        json.dump({"roi": "none"}, f)
    c = run(CAMCLASS, *base, "--config", conf)
    check(scores(frames(c)) == scores(frames(none)), "a config's \"roi\" is --roi's")
    one_line_exit2(run(CAMCLASS, *base, "--roi", "0.5,0.5,0.6,0.5"), "--roi", "camclass --roi "
                   "past the frame's edge")
    one_line_exit2(run(CAMCLASS, *base, "--roi", "1,2,3"), "X,Y,W,H", "camclass --roi malformed")
    # Found when the first frame comes, after the lines of a start: one line says it.
    r = run(CAMCLASS, *base, "--roi", "100,100,80,80px")
    said = [x for x in r.stderr.splitlines() if "outside" in x]
    check(r.returncode == 2 and len(said) == 1 and "160x160" in said[0] and not frames(r),
          f"camclass --roi in pixels past the first frame: exit 2, one line: {r.stderr!r}")
    return os.path.join(pick, sorted(os.listdir(pick))[0])


def check_predict(out, image):
    with open(image, "rb") as f:
        body = f.read()
    srv = Server(host_command(CAMCLASS) + ["--headless", "--model", out, "--backend", "cpu",
                                            "--serve", "127.0.0.1:0"])
    try:
        check(srv.port is not None, f"camclass --serve started: {srv.stderr()[-300:]!r}")
        if srv.port is None:
            return

        def post(q):
            return srv.request("POST", "/predict" + q, body, {"Content-Type": "image/png"})

        own, none, quad = post(""), post("?roi=none"), post("?roi=" + QUADRANT)
        px = post("?roi=80,80,80,80px")
        check(own[0] == 200 and own[2].get("roi") == QUADRANT,
              f"/predict crops to the running ROI and says so: {own[0]} {own[2]}")
        check(none[0] == 200 and none[2].get("roi") == "none" and none[2]["top"] != own[2]["top"],
              f"/predict?roi=none: the whole image, other scores ({none[2]})")
        check(quad[0] == 200 and quad[2]["top"] == own[2]["top"] and
              px[0] == 200 and px[2]["top"] == own[2]["top"],
              "/predict?roi= the same quadrant, in fractions or pixels: the same scores")
        for q, status in (("?roi=0.5,0.5", 400), ("?roi=0.9,0,0.2,1", 400),
                          ("?roi=100,100,80,80px", 422)):
            st, _, obj = post(q)
            check(st == status and isinstance(obj, dict) and obj.get("status") == status and
                  "\n" not in obj.get("error", "\n"), f"/predict{q}: {status} ({st} {obj})")
    finally:
        srv.stop()


def check_dataset_file_and_cache(tmp, data):
    total = 80 + 56 * 4  # held-out pictures once, the others with 4 augmented views each
    out = os.path.join(tmp, "file.ccm")
    settings = os.path.join(data, "camclass-dataset.json")
    with open(settings, "w") as f:
        json.dump({"roi": QUADRANT, "classes": ["red", "blue"]}, f)
    r = train(data, out)
    check(f"region of interest: {QUADRANT} (camclass-dataset.json)" in r.stdout and
          manifest(out)["input"].get("roi") == [0.5, 0.5, 0.5, 0.5],
          f"camclass-dataset.json's \"roi\" is the default: {r.stdout[:200]!r}")
    check(computed(r) == (0, total), f"the same ROI again: every view from the cache "
          f"{computed(r)}")
    r = train(data, out, "--roi", "80,80,80,80px")
    check(r.returncode == 0 and manifest(out)["input"].get("roi") == [0.5, 0.5, 0.5, 0.5] and
          computed(r) == (0, total),
          f"--roi in pixels of the 160x160 pictures: the same fractions, cached ({r.stderr!r})")
    r = train(data, out, "--roi", "0.5,0.5,0.5,0.4")
    check(computed(r) == (total, 0), f"another ROI computes every view {computed(r)}")
    for text, want in (('{"roi": 5}', "must be a string"), ("roi=1", "not one JSON object"),
                       ('{"roi": "0.5,0.5"}', "X,Y,W,H"), ('["0,0,1,1"]', "not one JSON"),
                       ('{"roi": "0.9,0.9,0.2,0.2"}', "outside")):
        with open(settings, "w") as f:
            f.write(text)
        if os.path.exists(out):
            os.unlink(out)
        r = train(data, out)
        one_line_exit2(r, "camclass-dataset.json", f"camclass-dataset.json {text}")
        check(want in r.stderr and not os.path.exists(out), f"{text}: says {want!r}, no bundle")
    os.unlink(settings)
    one_line_exit2(train(data, out, "--roi", "0.5,0.5,0.5"), "--roi", "camclass-train --roi "
                   "malformed")
    one_line_exit2(train(data, out, "--roi", "100,100,80,80px"), "160x160",
                   "camclass-train --roi in pixels past the first picture")


def main():
    with tempfile.TemporaryDirectory(prefix="camclass-roi-") as tmp:
        data = os.path.join(tmp, "lamp")
        make(data, 40, 5)
        whole, acc_whole, _ = accuracy(tmp, data, "whole", "--roi", "none")
        out, acc, r = accuracy(tmp, data, "quadrant", "--roi", QUADRANT)
        print(f"held-out accuracy: {acc:.3f} with --roi {QUADRANT}, {acc_whole:.3f} without")
        check(acc >= FLOOR and acc >= acc_whole + MARGIN,
              f"the ROI makes the lamp learnable: {acc:.3f} >= {FLOOR} and >= "
              f"{acc_whole:.3f} + {MARGIN}")
        check(f"region of interest: {QUADRANT} (--roi)" in r.stdout, "camclass-train names the "
              "ROI in use")
        check(manifest(out)["input"].get("roi") == [0.5, 0.5, 0.5, 0.5] and
              "roi" not in manifest(whole)["input"],
              "the manifest's input.roi: the ROI trained with, absent without one")
        image = check_camclass(tmp, out, data)
        check_predict(out, image)
        check_dataset_file_and_cache(tmp, data)
    shutil.rmtree(CACHE, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
