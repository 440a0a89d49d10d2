#!/usr/bin/python3
"""camclass --serve with several cameras (suite app), one test per part:

- routes: three cameras in one process, each looping a picture of its own colour (blue, red,
  green; one camera's name has a space, %-encoded in the URLs). GET /latest/<camera> gives that
  camera's label and "camera"; /latest alone the first camera's; GET /stream/<camera>?panel=0
  a JPEG (PIL decodes it) whose colour is that camera's, /stream/<camera> one too; GET /cameras
  the names in the config's order; /metrics parsed by prometheus_client has every per-result
  series once per camera, labelled camera="<name>", with each camera's results counted; an
  unknown camera is 404 with one line naming the known ones (also for /stream); POST
  /camera/<camera>/reference: 409 without health checks, 405 for GET, 404 for an unknown
  camera and for /camera/<camera>/other, 403 for a browser's cross-origin POST.
- snapshots: two cameras with --snapshot-dir: GET /snapshots/<camera>/latest.jpg is each
  camera's own snapshot (a JPEG; they differ), an unknown camera 404.
- reference: two cameras with --camera-health on play a clip whose scene changes after 3 s
  (the health checks' "moved" condition starts on both), with --serve-token: POST
  /camera/<camera>/reference without the token or with a wrong one is 401; with it, 200 and
  {"camera", "reference": "reset"}; then that camera's moved condition ends (its reference is
  retaken from the new scene: /metrics' camclass_camera_condition and the log's "camera" line)
  while the other camera's stays on.
- one: one camera from the command line keeps /metrics without a camera label, and is
  /latest/<its name> as /snapshots names it.

    test_serve_cameras.py PART CAMCLASS SELFTEST_MODEL SAMPLES_DIR
"""
import http.client
import json
import os
import subprocess
import sys
import urllib.parse
from io import BytesIO

import numpy as np
from PIL import Image
from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, host_command, in_tmpdir, wait_until, write_json_config  # noqa: E402
from serve_client import Server, read_stream  # noqa: E402

PART, EXE, MODEL, SAMPLES = sys.argv[1:5]
BASE = host_command(EXE) + ["--headless", "--model", MODEL, "--backend", "cpu",
                            "--serve", "0"]
# Each camera's picture, and which of its RGB channels is brightest.
PICTURES = [("front door", "004-blue.png", 2), ("yard", "018-red.png", 0),
            ("shed", "019-green.png", 1)]
PER_RESULT = ["camclass_results_total", "camclass_frames_total", "camclass_frames_dropped_total",
              "camclass_bad_frames_total", "camclass_frame_latency_seconds_count",
              "camclass_frame_latency_seconds_sum", "camclass_frame_stage_seconds_sum"]


def path_of(name):
    return urllib.parse.quote(name)


def metrics(s, headers=None):
    """GET /metrics parsed by prometheus_client: ({sample name: [(labels, value)]}, the text);
    raises on a text Prometheus would refuse."""
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
    c.request("GET", "/metrics", headers=headers or {})
    text = c.getresponse().read().decode()
    c.close()
    out = {}
    for fam in text_string_to_metric_families(text):
        for smp in fam.samples:
            out.setdefault(smp.name, []).append((smp.labels, smp.value))
    return out, text


def labels_of():
    """The self-test model's top label for each picture, from a one-camera run of it."""
    out = {}
    for name, picture, _ in PICTURES:
        p = subprocess.run(host_command(EXE) + ["--headless", "--model", MODEL, "--backend",
                                                "cpu", "--input",
                                                os.path.join(SAMPLES, "selftest", picture),
                                                "--log", "-", "--log-format", "json"],
                           capture_output=True, text=True, timeout=120)
        frames = [json.loads(x) for x in p.stdout.splitlines() if '"frame"' in x]
        check(p.returncode == 0 and frames, "%s alone: exit %d" % (picture, p.returncode))
        out[name] = frames[0]["top"][0]["label"] if frames else None
    check(len(set(out.values())) == len(out), "the pictures' labels differ: %s" % out)
    return out


def newest(s, path):
    """The 200 answer of GET path once there is one (503 before the first result)."""
    got = {}

    def ready():
        st, _, obj = s.request("GET", path)
        got["st"], got["obj"] = st, obj
        return st != 503
    wait_until(ready, 60, "a result at " + path)
    return got["st"], got["obj"]


def stream_colour(port, path):
    """(the brightest RGB channel of a /stream picture, its size), or (None, what failed)."""
    parts = []
    read_stream(port, 1, parts, path)
    if len(parts) != 1 or isinstance(parts[0], str) or parts[0][0] != "image/jpeg":
        return None, "GET %s: %s" % (path, parts)
    img = Image.open(BytesIO(parts[0][1])).convert("RGB")
    mean = np.asarray(img, dtype=np.float64).reshape(-1, 3).mean(axis=0)
    return int(np.argmax(mean)), img.size


def check_unknown(s):
    for path in ["/latest/nobody", "/stream/nobody", "/latest/", "/latest/yard/",
                 "/latest/YARD", "/camera/nobody/reference"]:
        method = "POST" if path.startswith("/camera/") else "GET"
        st, _, obj = s.request(method, path)
        err = (obj or {}).get("error", "")
        check(st == 404 and "\n" not in err and all(n in err for n, _, _ in PICTURES),
              "%s %s: %d %r, want 404 naming the cameras" % (method, path, st, err))


def test_snapshots(root):
    """GET /snapshots/<camera>/latest.jpg: each camera's own (a JPEG, different pictures), by its
    name and by its folder's ("front door" keeps its files in front_door); two cameras whose
    folders would be one are refused (exit 2, one line naming both)."""
    snaps = os.path.join(root, "snapshots")
    os.makedirs(snaps)
    clash = write_json_config(root, {"cameras": [
        {"name": n, "input": os.path.join(SAMPLES, "selftest", PICTURES[0][1])}
        for n in ("front door", "front_door")]})
    r = subprocess.run(BASE + ["--config", clash, "--snapshot-dir", snaps], capture_output=True,
                       text=True, timeout=120)
    rc, err = r.returncode, r.stderr
    check(rc == 2 and len(err.strip().splitlines()) == 1 and "front_door" in err and
          "rename one" in err, "two cameras in one snapshot folder: exit %d, %r" % (rc, err))
    cams = PICTURES
    config = write_json_config(root, {"cameras": [
        {"name": n, "input": os.path.join(SAMPLES, "selftest", p), "loop": True, "fps": 10}
        for n, p, _ in cams]})
    s = Server(BASE + ["--config", config, "--log", os.devnull, "--threshold", "0.5",
                       "--snapshot-dir", snaps])
    try:
        if check(s.port, "serving: %s" % s.stderr()[-400:]):
            check_snapshots(s, cams, snaps)
    finally:
        s.stop()


def check_snapshots(s, cams, snaps):
    got = {}
    for name, _, _ in cams:
        path = "/snapshots/%s/latest.jpg" % path_of(name)

        def saved():
            c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
            c.request("GET", path)
            r = c.getresponse()
            got[name] = (r.status, r.getheader("Content-Type"), r.read())
            c.close()
            return got[name][0] == 200
        wait_until(saved, 60, path)
        st, ctype, data = got[name]
        check(st == 200 and ctype == "image/jpeg" and data[:2] == b"\xff\xd8",
              "%s: %d %s" % (path, st, ctype))
    check(len({d for _, _, d in got.values()}) == len(cams), "each camera's snapshot differs")
    check(os.path.isdir(os.path.join(snaps, "front_door")),
          "front door's snapshots in front_door: %r" % sorted(os.listdir(snaps)))
    st, _, _ = s.request("GET", "/snapshots/front_door/latest.jpg")
    check(st == 200, "/snapshots/front_door/latest.jpg (the folder's name): %d" % st)
    st, _, _ = s.request("GET", "/snapshots/nobody/latest.jpg")
    check(st == 404, "/snapshots/nobody/latest.jpg: %d" % st)


def check_metrics(s, names):
    m, text = metrics(s)
    for series in PER_RESULT:
        got = {lab.get("camera") for lab, _ in m.get(series, [])}
        check(got == set(names), "%s for cameras %s, want %s" % (series, got, set(names)))
    for name in names:
        res = [v for lab, v in m.get("camclass_results_total", []) if lab.get("camera") == name]
        check(res and res[0] > 0, "camclass_results_total{camera=%r}: %s" % (name, res))
    buckets = [lab for lab, _ in m.get("camclass_frame_latency_seconds_bucket", [])]
    check(len(buckets) == 12 * len(names) and all("camera" in b and "le" in b for b in buckets),
          "latency buckets per camera: %d" % len(buckets))
    check('camclass_results_total{camera="front door"}' in text, "the label as written")


def test_routes(root):
    want = labels_of()
    config = write_json_config(root, {"cameras": [
        {"name": n, "input": os.path.join(SAMPLES, "selftest", p), "loop": True, "fps": 10}
        for n, p, _ in PICTURES]})
    s = Server(BASE + ["--config", config, "--log", os.devnull])
    try:
        if not check(s.port, "serving: %s" % s.stderr()[-400:]):
            return
        for name, _, channel in PICTURES:
            st, obj = newest(s, "/latest/" + path_of(name))
            top = (obj or {}).get("top", [{}])[0].get("label")
            check(st == 200 and top == want[name] and obj.get("camera") == name,
                  "/latest/%s: %d top %s camera %s, want %s" % (name, st, top,
                                                                (obj or {}).get("camera"),
                                                                want[name]))
            got, size = stream_colour(s.port, "/stream/%s?panel=0" % path_of(name))
            check(got == channel, "/stream/%s?panel=0: brightest channel %s (%s), want %d"
                  % (name, got, size, channel))
            got, size = stream_colour(s.port, "/stream/%s" % path_of(name))
            check(got is not None, "/stream/%s: %s" % (name, size))
        st, obj = newest(s, "/latest")
        check(st == 200 and obj["top"][0]["label"] == want["front door"],
              "/latest alone: the first camera's, got %s" % obj)
        st, _, obj = s.request("GET", "/cameras")
        check(st == 200 and obj == {"cameras": [n for n, _, _ in PICTURES]}, "/cameras: %s" % obj)
        check_unknown(s)
        check_metrics(s, [n for n, _, _ in PICTURES])
        st, hd, obj = s.request("GET", "/camera/yard/reference")
        check(st == 405 and hd.get("Allow") == "POST", "GET .../reference: %d %s" % (st, hd))
        st, _, obj = s.request("POST", "/camera/yard/other")
        check(st == 404, "POST /camera/yard/other: %d" % st)
        st, _, obj = s.request("POST", "/camera/yard/reference")
        check(st == 409 and "--camera-health" in obj["error"],
              "no health checks: %d %s" % (st, obj))
        st, _, obj = s.request("POST", "/camera/yard/reference",
                               headers={"Origin": "http://evil.example"})
        check(st == 403, "a cross-origin POST: %d %s" % (st, obj))
    finally:
        s.stop()


W, H, FPS = 160, 120, 20


def write_clip(path, seconds_after):
    """A textured scene for 3 s, then the scene turned by a quarter for seconds_after s."""
    rng = np.random.default_rng(5)
    scene = np.kron(rng.integers(40, 216, (H // 8, W // 8)), np.ones((8, 8))).astype(np.int32)
    turned = np.roll(scene, W // 4, axis=1)
    with open(path, "wb") as f:
        f.write(b"YUV4MPEG2 W%d H%d F%d:1 Ip A1:1 Cmono\n" % (W, H, FPS))
        for i in range(FPS * (3 + seconds_after)):
            img = scene if i < 3 * FPS else turned
            noisy = np.clip(img + rng.integers(-2, 3, img.shape), 0, 255).astype(np.uint8)
            f.write(b"FRAME\n" + noisy.tobytes())


TOKEN = {"Authorization": "Bearer s3cret"}


def moved(s, name):
    m, _ = metrics(s, TOKEN)
    v = [v for lab, v in m.get("camclass_camera_condition", [])
         if lab.get("camera") == name and lab.get("condition") == "moved"]
    return v[0] if v else None


def test_reference(root):
    clip = os.path.join(root, "clip.y4m")
    write_clip(clip, 60)
    config = write_json_config(root, {"cameras": [{"name": "a", "input": clip},
                                             {"name": "b", "input": clip}]})
    log = open(os.path.join(root, "log.jsonl"), "w")
    s = Server(BASE + ["--config", config, "--fps", str(FPS), "--camera-health", "on",
                       "--serve-token", "s3cret", "--log", "-"], log=log)
    try:
        if not check(s.port, "serving: %s" % s.stderr()[-400:]):
            return
        if not wait_until(lambda: moved(s, "a") == 1 and moved(s, "b") == 1, 60,
                          "the moved condition on both cameras"):
            return
        for headers in [{}, {"Authorization": "Bearer wrong"}]:
            st, hd, obj = s.request("POST", "/camera/b/reference", headers=headers)
            check(st == 401 and "WWW-Authenticate" in hd,
                  "POST reference with %s: %d %s" % (headers, st, obj))
        check(moved(s, "b") == 1, "b still moved after the refused requests")
        st, _, obj = s.request("POST", "/camera/b/reference", headers=TOKEN)
        check(st == 200 and obj == {"camera": "b", "reference": "reset"},
              "POST /camera/b/reference: %d %s" % (st, obj))
        wait_until(lambda: moved(s, "b") == 0, 30, "b's moved condition to end")
        check(moved(s, "a") == 1, "a's moved condition still on")
    finally:
        s.stop()
        log.close()
    lines = [json.loads(x) for x in open(os.path.join(root, "log.jsonl"))]
    ends = [(o.get("camera"), o["state"]) for o in lines
            if o.get("event") == "camera" and o.get("condition") == "moved"]
    check(ends == [("a", "start"), ("b", "start"), ("b", "end")] or
          ends == [("b", "start"), ("a", "start"), ("b", "end")],
          "the log's moved lines: %s" % ends)


def test_one(root):
    picture = os.path.join(SAMPLES, "selftest", "004-blue.png")
    s = Server(BASE + ["--input", picture, "--loop", "--fps", "10", "--log", os.devnull])
    try:
        if not check(s.port, "serving: %s" % s.stderr()[-400:]):
            return
        st, obj = newest(s, "/latest")
        st2, obj2 = newest(s, "/latest/004-blue")
        check(st == 200 and st2 == 200 and "camera" not in obj2,
              "/latest/004-blue (the name /snapshots gives): %d %d %s" % (st, st2, obj2))
        st, _, obj = s.request("GET", "/cameras")
        check(st == 200 and obj == {"cameras": ["004-blue"]}, "/cameras: %s" % obj)
        m, text = metrics(s)
        check("camera=" not in text and m.get("camclass_results_total"),
              "one camera: no camera label")
    finally:
        s.stop()


sys.exit(in_tmpdir("camclass-serve-cameras-",
                   {"routes": test_routes, "reference": test_reference, "one": test_one,
                    "snapshots": test_snapshots}[PART]))
