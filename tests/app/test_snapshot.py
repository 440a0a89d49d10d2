"""camclass --snapshot-dir end to end, one part per run:

- files: a folder of self-test pictures whose class changes (red, blue, fine red/green checkers,
  green, red; the model copy's "red" relabelled "../../escape red"): one JPEG per "detection"
  line, named <UTC time>-<the label made safe>.jpg in DIR/<camera>/ and nowhere else, its path
  in that line (and in no "clear" line) and in the webhook's, decoding to the --window size;
  --on-event's
  CAMCLASS_SNAPSHOT names the same file, already complete when the program runs (its copy
  equals the final file); no temporary file left. One picture's snapshot is byte for byte
  the --output x.jpg of the same run.
- cap: old files of camclass's own name pattern (year 2000) and foreign ones beside them, with
  --snapshot-max-mb 0.2: the oldest own files are deleted until the folder fits, the foreign
  ones never; a missing DIR is exit 2 with one line.
- queue: 30 starts at once against 4K pictures: the queue of 4 fills, the rest is dropped
  (no "snapshot" on their lines), one line at the first drop and the count at the end.
- serve: GET /snapshots/<camera>/latest.jpg under --serve with a token: 401 without it, 404
  while no frame has come (a Y4M FIFO kept waiting), then 200 with the newest snapshot's bytes;
  another camera, other paths and traversal attempts 404 (or 400).

    test_snapshot.py PART CAMCLASS MODEL SAMPLES_DIR
"""
import http.client
import http.server
import json
import os
import re
import stat
import subprocess
import sys
import tempfile
import threading
import zipfile

from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import bound, check, env_headless, host_command, lines_of, run, summary, \
    wait_until  # noqa: E402

PART, CAMCLASS, MODEL, SAMPLES = sys.argv[1:5]
W, H = 480, 320
# files: pictures large enough that drawing and writing one takes longer than starting the
# program, which must wait for it (a program started at the event itself finds no file).
BIG_W, BIG_H = 3840, 2160
NAME = re.compile(r"^(\d{8}T\d{6}\.\d{3}Z)-([A-Za-z0-9_][A-Za-z0-9_.-]*?)(-\d+)?\.jpg$")
SEQUENCE = ["018-red.png"] * 3 + ["004-blue.png"] * 3 + \
    ["009-fine-red-green-checkers.png"] * 3 + ["019-green.png"] * 3 + ["040-red.png"] * 2


def safe(label):
    """The label as camclass names files with it (event_files.c)."""
    out = "".join(c if c.isascii() and (c.isalnum() or c in "_-.") else "_" for c in label)
    out = ("_" + out[1:]) if out.startswith(".") else out
    return out[:64] or "none"


def relabeled(tmp):
    """A copy of MODEL whose "red" is "../../escape red"."""
    dst = os.path.join(tmp, "m.ccm")
    with zipfile.ZipFile(MODEL) as zi, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zo:
        for item in zi.infolist():
            data = zi.read(item.filename)
            if item.filename == "labels.txt":
                data = "\n".join("../../escape red" if x == "red" else x
                                 for x in data.decode().splitlines()).encode() + b"\n"
            zo.writestr(item, data)
    return dst


def image_dir(tmp):
    d = os.path.join(tmp, "images")
    os.mkdir(d)
    for i, name in enumerate(SEQUENCE):
        os.symlink(os.path.join(SAMPLES, name), os.path.join(d, "%02d-%s" % (i, name)))
    return d


def hook(tmp):
    """A program that copies the snapshot its event names, at once (to PATH.PID.copy, or
    "none" when it is not there), and records the event and the copy."""
    path = os.path.join(tmp, "hook")
    with open(path, "w") as f:
        f.write('#!/bin/sh\ncopy=none\n'
                'if [ -n "$CAMCLASS_SNAPSHOT" ] && cp "$CAMCLASS_SNAPSHOT" '
                '"$CAMCLASS_SNAPSHOT.$$.copy"; then copy="$CAMCLASS_SNAPSHOT.$$.copy"; fi\n'
                'printf "%s|%s|%s|%s\\n" "$CAMCLASS_EVENT" "$CAMCLASS_LABEL" '
                '"${CAMCLASS_SNAPSHOT-unset}" "$copy" >> "' + os.path.join(tmp, "events") + '"\n')
    os.chmod(path, stat.S_IRWXU)
    return path


def decodes(path, size=(W, H)):
    try:
        with Image.open(path) as im:
            im.load()
            return im.format == "JPEG" and im.size == size
    except OSError:
        return False


def all_files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, fs in os.walk(root) for f in fs)


class Receiver(http.server.ThreadingHTTPServer):
    """A --webhook receiver on a free loopback port: bodies keeps each POST's JSON."""

    def __init__(self):
        self.bodies = []
        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.server.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_files(tmp):
    snaps, log = os.path.join(tmp, "snaps"), os.path.join(tmp, "log.jsonl")
    os.mkdir(snaps)
    hook_rx = Receiver()
    rc, _, err = run(CAMCLASS, ["--headless", "--input", image_dir(tmp), "--model", relabeled(tmp),
                                "--backend", "cpu", "--threshold", "0.5", "--fps", "5",
                                "--window", "%dx%d" % (BIG_W, BIG_H), "--log", log,
                                "--snapshot-dir", snaps, "--on-event", hook(tmp),
                                "--webhook", "http://127.0.0.1:%d/" % hook_rx.server_address[1]],
                     timeout=bound(180))
    check(rc == 0, "files: exit status %d: %s" % (rc, err[-400:]))
    objs = [json.loads(x) for x in lines_of(log)]
    det = [o for o in objs if o["event"] == "detection"]
    labels = [o["detection"]["label"] for o in det]
    check(len(det) >= 5 and "../../escape red" in labels and "fine red/green checkers" in labels,
          "files: the detections are %r" % labels)
    check(all("snapshot" not in o for o in objs if o["event"] != "detection"),
          "files: a snapshot on a line that is no detection")
    cam = os.path.join(snaps, "images")
    paths = [o.get("snapshot") for o in det]
    for o, p in zip(det, paths):
        if not check(p and os.path.dirname(p) == cam, "files: %r not in %s" % (p, cam)):
            continue
        m = NAME.match(os.path.basename(p))
        check(m and m.group(2) == safe(o["detection"]["label"]),
              "files: %s does not name %r" % (p, o["detection"]["label"]))
        check(decodes(p, (BIG_W, BIG_H)), "files: %s is not a %dx%d JPEG" % (p, BIG_W, BIG_H))
    posted = [o.get("snapshot") for o in hook_rx.bodies if o["event"] == "detection"]
    hook_rx.shutdown()
    check(posted == paths, "files: the webhook's detections name %r, the log's %r" % (posted, paths))
    want = sorted(os.path.relpath(p, snaps) for p in paths if p)
    got = [f for f in all_files(tmp) if f.startswith("snaps/")]
    jpgs = sorted(f[len("snaps/"):] for f in got if f.endswith(".jpg"))
    check(jpgs == want, "files: the folder holds %r, the log names %r" % (jpgs, want))
    check(not any("partial" in f for f in got), "files: a temporary file was left: %r" % got)
    check(not any("escape" in f for f in all_files(tmp) if not f.startswith("snaps/")),
          "files: the label escaped the folder")
    runs = [ln.split("|") for ln in lines_of(os.path.join(tmp, "events"))]
    starts = [r for r in runs if r[0] == "start"]
    check(len(starts) >= 1, "files: the program never ran for a start: %r" % runs)
    for ev, label, snap, copy in starts:
        check(snap in paths and NAME.match(os.path.basename(snap)).group(2) == safe(label),
              "files: CAMCLASS_SNAPSHOT %r is not the log's snapshot of %r" % (snap, label))
        with open(snap, "rb") as f:
            check(copy != "none" and f.read() == open(copy, "rb").read(),
                  "files: %s was not complete when the program ran" % snap)
    check(all(r[2] == "unset" for r in runs if r[0] == "end"), "files: an end with a snapshot")


def test_still(tmp):
    """One picture: its snapshot is byte for byte the --output x.jpg of the same run (the same
    annotated picture, the same encoder)."""
    snaps = os.path.join(tmp, "still-snaps")
    os.mkdir(snaps)
    still = os.path.join(tmp, "still.jpg")
    rc, _, err = run(CAMCLASS, ["--headless", "--input", os.path.join(SAMPLES, "018-red.png"),
                                "--model", MODEL, "--backend", "cpu", "--threshold", "0.5",
                                "--window", "%dx%d" % (W, H), "--log", os.devnull,
                                "--snapshot-dir", snaps, "--output", still], timeout=bound(60))
    check(rc == 0, "still: exit status %d: %s" % (rc, err[-400:]))
    shots = os.listdir(os.path.join(snaps, "018-red"))
    with open(still, "rb") as f:
        want = f.read()
    check(len(shots) == 1 and open(os.path.join(snaps, "018-red", shots[0]), "rb").read() == want,
          "still: the snapshot %r is not --output's picture" % shots)


def test_cap(tmp):
    snaps = os.path.join(tmp, "snaps")
    cam = os.path.join(snaps, "images")
    os.makedirs(cam)
    old = ["20000101T00000%d.000Z-old.jpg" % i for i in range(4)]
    foreign = ["keep.jpg", "20000101T000000.000Z-old.png", "notes.txt"]
    for name in old + foreign:
        with open(os.path.join(cam, name), "wb") as f:
            f.write(b"x" * 60000)
    rc, _, err = run(CAMCLASS, ["--headless", "--input", image_dir(tmp), "--model", MODEL,
                                "--backend", "cpu", "--threshold", "0.5", "--window", "%dx%d" % (W, H),
                                "--log", os.path.join(tmp, "log"), "--snapshot-dir", snaps,
                                "--snapshot-max-mb", "0.2"], timeout=bound(180))
    check(rc == 0, "cap: exit status %d: %s" % (rc, err[-400:]))
    left = os.listdir(cam)
    own = sorted(f for f in left if NAME.match(f))
    size = sum(os.path.getsize(os.path.join(cam, f)) for f in own)
    check(size <= 200000, "cap: %d bytes of snapshots left, cap 200000: %r" % (size, own))
    check(old[0] not in left and any(f not in old for f in own),
          "cap: the oldest was not deleted, or nothing new kept: %r" % own)
    kept_old = [f for f in old if f in left]
    check(kept_old == old[len(old) - len(kept_old):], "cap: not the oldest first: %r" % kept_old)
    check(all(f in left for f in foreign), "cap: a foreign file was deleted: %r" % left)
    rc, _, err = run(CAMCLASS, ["--headless", "--input", os.path.join(tmp, "images"), "--model", MODEL,
                                "--backend", "cpu", "--snapshot-dir", os.path.join(tmp, "nope")],
                     timeout=bound(60))
    lines = err.strip().splitlines()
    check(rc == 2 and len(lines) == 1 and "--snapshot-dir" in lines[0] and "nope" in lines[0],
          "missing DIR: exit %d, %r" % (rc, lines))


def test_queue(tmp):
    """30 starts in a few tenths of a second (red and blue pictures alternating, classified as
    fast as they come) against 4K pictures that take far longer each to draw and write: the
    queue of 4 fills, and what does not fit is dropped, said once and counted at the end."""
    d = os.path.join(tmp, "images")
    os.mkdir(d)
    for i in range(30):
        os.symlink(os.path.join(SAMPLES, ["018-red.png", "004-blue.png"][i % 2]),
                   os.path.join(d, "%02d.png" % i))
    snaps, log = os.path.join(tmp, "snaps"), os.path.join(tmp, "log.jsonl")
    os.mkdir(snaps)
    rc, _, err = run(CAMCLASS, ["--headless", "--input", d, "--model", MODEL, "--backend", "cpu",
                                "--threshold", "0.5", "--window", "%dx%d" % (BIG_W, BIG_H),
                                "--log", log, "--snapshot-dir", snaps], timeout=bound(180))
    check(rc == 0, "queue: exit status %d: %s" % (rc, err[-400:]))
    det = [json.loads(x) for x in lines_of(log)]
    det = [o for o in det if o["event"] == "detection"]
    saved = [o["snapshot"] for o in det if "snapshot" in o]
    files = sorted(os.listdir(os.path.join(snaps, "images")))
    dropped = re.findall(r"snapshot: (\d+) events? dropped in all", err)
    check(len(det) == 30 and 4 <= len(saved) < 30, "queue: %d detections, %d snapshots"
          % (len(det), len(saved)))
    check(sorted(os.path.basename(p) for p in saved) == files,
          "queue: the files %r are not the lines' %r" % (files, saved))
    check(err.count("was dropped") == 1 and dropped == [str(30 - len(saved))],
          "queue: not one line at the first drop and the count at the end:\n" + err[-800:])


def y4m_frame(rgb):
    """One 64x48 Y4M frame (4:2:0) of a flat colour."""
    y, cb, cr = Image.new("RGB", (64, 48), rgb).convert("YCbCr").getpixel((0, 0))
    return b"FRAME\n" + bytes([y]) * (64 * 48) + bytes([cb]) * (32 * 24) + bytes([cr]) * (32 * 24)


def get(port, path, token="tok"):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=bound(30))
    c.request("GET", path, headers={"Authorization": "Bearer " + token} if token else {})
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, r.getheader("Content-Type"), body


def test_serve(tmp):
    snaps, fifo = os.path.join(tmp, "snaps"), os.path.join(tmp, "cam1.y4m")
    os.mkdir(snaps)
    os.mkfifo(fifo)
    errf = open(os.path.join(tmp, "stderr"), "w+")
    p = subprocess.Popen(host_command(CAMCLASS) + [
        "--headless", "--input", fifo, "--model", MODEL, "--backend", "cpu", "--threshold",
        "0.6", "--window", "%dx%d" % (W, H), "--log", os.path.join(tmp, "log"), "--snapshot-dir",
        snaps, "--serve", "127.0.0.1:0", "--serve-token", "tok"], stdout=subprocess.DEVNULL,
        stderr=errf, env=env_headless())
    try:
        with open(fifo, "wb", buffering=0) as f:
            # Camclass reads the first frame before it serves: orange, which the self-test model
            # gives no label above 0.5 (so no detection, no snapshot yet).
            f.write(b"YUV4MPEG2 W64 H48 F10:1 Ip A1:1 C420jpeg\n" + y4m_frame((255, 128, 0)))

            def port():
                errf.seek(0)
                m = re.search(r"serving on http://127\.0\.0\.1:(\d+)", errf.read())
                return int(m.group(1)) if m else None
            if not wait_until(lambda: port() or p.poll() is not None, 60, "serving on"):
                return
            pt = port()
            url = "/snapshots/cam1/latest.jpg"
            check(get(pt, url, None)[0] == 401, "serve: no token answered")
            check(get(pt, url)[0] == 404, "serve: not 404 before the first snapshot")
            for rgb in [(255, 0, 0)] * 6 + [(0, 0, 255)] * 6:
                f.write(y4m_frame(rgb))
            newest = lambda: sorted(x for x in os.listdir(os.path.join(snaps, "cam1"))
                                    if NAME.match(x))
            wait_until(lambda: len(newest()) >= 2, 60, "two snapshots")
            status, ctype, body = get(pt, url)
            with open(os.path.join(snaps, "cam1", newest()[-1]), "rb") as g:
                check(status == 200 and ctype == "image/jpeg" and body == g.read(),
                      "serve: %d %s, not the newest snapshot %s" % (status, ctype, newest()[-1]))
            for bad in ["/snapshots/other/latest.jpg", "/snapshots/cam1/../cam1/latest.jpg",
                        "/snapshots/../snapshots/cam1/latest.jpg", "/snapshots/cam1/" +
                        newest()[-1], "/snapshots/cam1", "/snapshots/", "/snapshots/%2e%2e/cam1/"
                        "latest.jpg", "/snapshots/cam1/latest.jpg/", "/snapshots/..%2fcam1/"
                        "latest.jpg", "/snapshots//cam1/latest.jpg"]:
                st = get(pt, bad)[0]
                check(st in (400, 404), "serve: %s answered %d" % (bad, st))
    finally:
        p.terminate()
        check(p.wait(timeout=bound(30)) == 0, "serve: exit status after SIGTERM")
        errf.close()


with tempfile.TemporaryDirectory() as tmp:
    {"files": lambda t: (test_files(t), test_still(t)), "cap": test_cap, "serve": test_serve, "queue": test_queue}[PART](tmp)
sys.exit(summary())
