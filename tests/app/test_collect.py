#!/usr/bin/python3
"""camclass --collect over HTTP, with real clients on loopback (suite app).

- settings: --classes without --collect, --collect headless without --serve, an unsafe class
  name in --classes (the rule named), --collect on a file: exit 2 with one line, before the
  model loads;
- POST /samples?label=NAME: an empty body saves the newest camera frame (201, a JPEG of the
  input's size in DIR/NAME/), a PNG body is saved as a JPEG of its pixels, a JPEG body byte for
  byte, a multipart form's field "file" as /predict takes it; GET /samples counts them (--classes order, new labels after); an unsafe label (.., a
  '/', a leading '.', a control character) is 400 and makes nothing; no ?label= 400; a text
  body 415; PUT 405; a browser's cross-site POST (Origin, Sec-Fetch-Site) 403 and a same-origin
  one 201; with --serve-token, 401 without it; without --collect, 404 naming the flag;
- the folder collected over HTTP trains: camclass-train on it exits 0 and writes a bundle.

usage: test_collect.py CAMCLASS CAMCLASS_TRAIN MODEL SAMPLES_DIR
"""
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import bound, check, env_headless, summary  # noqa: E402
from serve_client import Server  # noqa: E402

from PIL import Image  # noqa: E402

CAMCLASS, TRAIN, MODEL, SAMPLES = sys.argv[1:5]
CLIP = os.path.join(SAMPLES, "selftest")


def run(args):
    p = subprocess.run([CAMCLASS] + args, capture_output=True, text=True, env=env_headless(),
                       timeout=bound(60))
    return p.returncode, p.stderr.strip().splitlines()


def test_settings(tmp):
    afile = os.path.join(tmp, "afile")
    open(afile, "w").close()
    cases = [
        (["--classes", "a,b"], "--classes names what --collect"),
        (["--headless", "--collect", tmp], "drop --headless, or add --serve"),
        (["--serve", "0", "--headless", "--collect", tmp, "--classes", "a,.."], "folder above"),
        (["--serve", "0", "--headless", "--collect", tmp, "--classes", "a,.x"], "starts with '.'"),
        (["--serve", "0", "--headless", "--collect", afile], "not a folder"),
    ]
    for args, says in cases:
        rc, lines = run(["--model", MODEL, "--input", CLIP] + args)
        check(rc == 2 and len(lines) == 1 and says in lines[0] and "model" not in lines[0],
              "%s: exit 2 with one line naming '%s' (got %d: %s)" % (args, says, rc, lines))


def post(s, label, body=b"", headers=None):
    path = "/samples" if label is None else "/samples?label=" + urllib.parse.quote(label, safe="")
    return s.request("POST", path, body=body, headers=headers)


def files_in(d):
    out = []
    for root, _, names in os.walk(d):
        out += [os.path.join(root, n) for n in names]
    return sorted(out)


def test_http(tmp):
    ds = os.path.join(tmp, "ds")
    s = Server([CAMCLASS, "--headless", "--serve", "0", "--collect", ds, "--classes",
                "open,closed", "--model", MODEL, "--input", CLIP, "--loop", "--fps", "20",
                "--backend", "cpu", "--log", os.devnull])
    if not check(s.port, "camclass --collect --serve started: " + s.stderr()[-300:]):
        s.stop()
        return
    try:
        st, _, obj = s.request("GET", "/samples")
        check(st == 200 and obj == {"counts": {"open": 0, "closed": 0}}, "GET /samples: %s" % obj)
        # The camera's frame: retried while none has been classified yet (503).
        end = time.time() + bound(20)
        while True:
            st, h, obj = post(s, "open")
            if st != 503 or time.time() > end:
                break
            time.sleep(0.2)
        check(st == 201 and obj and obj["label"] == "open" and obj["file"].startswith("open/")
              and obj["counts"] == {"open": 1, "closed": 0}, "POST empty body: %d %s" % (st, obj))
        if obj and "file" in obj:
            im = Image.open(os.path.join(ds, obj["file"]))
            sizes = {Image.open(os.path.join(CLIP, n)).size for n in os.listdir(CLIP)
                     if n.endswith(".png")}
            check(im.format == "JPEG" and im.size in sizes,
                  "the frame saved is a JPEG of an input's size: %s %s" % (im.format, im.size))
        # A PNG body: its pixels, as a JPEG.
        buf = io.BytesIO()
        Image.new("RGB", (64, 40), (0, 0, 255)).save(buf, "PNG")
        st, _, obj = post(s, "closed", buf.getvalue(), {"Content-Type": "image/png"})
        ok = st == 201 and obj["counts"] == {"open": 1, "closed": 1}
        if check(ok, "POST a PNG: %d %s" % (st, obj)):
            im = Image.open(os.path.join(ds, obj["file"])).convert("RGB")
            px = im.getpixel((10, 10))
            check(im.format is None or im.size == (64, 40), "PNG saved at its size")
            check(px[2] > 200 and px[0] < 40 and px[1] < 40, "PNG saved with its colour: %s" % (px,))
        # A JPEG body: kept byte for byte; a new label gets its folder, after the listed ones.
        buf = io.BytesIO()
        Image.new("RGB", (48, 32), (200, 30, 30)).save(buf, "JPEG")
        st, _, obj = post(s, "car in", buf.getvalue(), {"Content-Type": "image/jpeg"})
        if check(st == 201 and list(obj["counts"]) == ["open", "closed", "car in"],
                 "POST a JPEG under a new label: %d %s" % (st, obj)):
            with open(os.path.join(ds, obj["file"]), "rb") as f:
                check(f.read() == buf.getvalue(), "the posted JPEG is kept as it came")
        # A multipart form, as /predict takes it (field "file").
        buf = io.BytesIO()
        Image.new("RGB", (16, 16), (0, 200, 0)).save(buf, "PNG")
        form = (b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"g.png\"\r\n"
                b"Content-Type: image/png\r\n\r\n" + buf.getvalue() + b"\r\n--XyZ--\r\n")
        st, _, obj = post(s, "closed", form, {"Content-Type": "multipart/form-data; boundary=XyZ"})
        if check(st == 201 and obj["counts"]["closed"] == 2, "POST a form: %d %s" % (st, obj)):
            im = Image.open(os.path.join(ds, obj["file"])).convert("RGB")
            check(im.size == (16, 16) and im.getpixel((8, 8))[1] > 150,
                  "the form's picture saved: %s %s" % (im.size, im.getpixel((8, 8))))
        before = files_in(tmp)
        for label in ["..", "a/b", ".hidden", "tab\there", "", "x" * 65]:
            st, _, obj = post(s, label)
            check(st == 400 and obj and "error" in obj and "\n" not in obj["error"],
                  "label %r: 400 with one line (%d %s)" % (label, st, obj))
        st, _, obj = post(s, None)
        check(st == 400 and "?label=" in obj["error"], "no ?label=: 400 (%d %s)" % (st, obj))
        st, _, obj = post(s, "open", b"hello", {"Content-Type": "text/plain"})
        check(st == 415, "a text body: 415 (%d)" % st)
        st, _, obj = post(s, "open", b"hello", {"Content-Type": "image/jpeg"})
        check(st == 415, "a body that is no image: 415 (%d)" % st)
        st, h, obj = s.request("PUT", "/samples?label=open")
        check(st == 405 and "POST" in h.get("Allow", ""), "PUT: 405 with Allow (%d %s)" % (st, h))
        st, _, obj = post(s, "open", headers={"Origin": "http://evil.example"})
        check(st == 403, "cross-site Origin: 403 (%d)" % st)
        st, _, obj = post(s, "open", headers={"Sec-Fetch-Site": "cross-site"})
        check(st == 403, "Sec-Fetch-Site cross-site: 403 (%d)" % st)
        check(files_in(tmp) == before, "refused requests wrote nothing")
        st, _, obj = post(s, "open", headers={"Origin": "http://127.0.0.1:%d" % s.port,
                                              "Sec-Fetch-Site": "same-origin"})
        check(st == 201 and obj["counts"]["open"] == 2, "same-origin POST: 201 (%d %s)" % (st, obj))
        # Enough pictures to train on: the clip's patterns, 6 each, in two classes.
        pats = {"lines": "001-horizontal-lines.png", "blue": "004-blue.png"}
        for label, name in pats.items():
            with open(os.path.join(CLIP, name), "rb") as f:
                data = f.read()
            for i in range(6):
                st, _, obj = post(s, label, data, {"Content-Type": "image/png"})
        check(st == 201 and obj["counts"]["lines"] == 6 and obj["counts"]["blue"] == 6,
              "12 more pictures: %s" % obj)
        st, _, obj = s.request("GET", "/samples")
        check(st == 200 and obj["counts"] == {"open": 2, "closed": 2, "car in": 1, "lines": 6,
                                              "blue": 6}, "GET /samples after: %s" % obj)
    finally:
        rc = s.stop()
    check(rc == 0, "camclass ended with 0 on SIGTERM (%s)" % rc)
    leftovers = [f for f in files_in(ds) if os.path.basename(f).startswith(".")]
    check(not leftovers, "no temporary file left: %s" % leftovers)
    out = os.path.join(tmp, "collected.ccm")
    p = subprocess.run([TRAIN, ds, "--base", MODEL, "-o", out, "--backend", "cpu", "--augment",
                        "1", "--no-cache"], capture_output=True, text=True, timeout=bound(300))
    check(p.returncode == 0 and os.path.getsize(out) > 0,
          "camclass-train on the collected folder: exit %d %s" % (p.returncode, p.stderr[-400:]))


def test_token_and_off(tmp):
    ds = os.path.join(tmp, "tok")
    s = Server([CAMCLASS, "--headless", "--serve", "0", "--serve-token", "sekrit", "--collect",
                ds, "--model", MODEL, "--backend", "cpu"])
    if check(s.port, "camclass --serve-token --collect started: " + s.stderr()[-300:]):
        buf = io.BytesIO()
        Image.new("RGB", (8, 8), (0, 255, 0)).save(buf, "JPEG")
        st, _, _ = post(s, "green", buf.getvalue(), {"Content-Type": "image/jpeg"})
        check(st == 401, "without the token: 401 (%d)" % st)
        st, _, obj = post(s, "green", buf.getvalue(), {"Content-Type": "image/jpeg",
                                                       "Authorization": "Bearer sekrit"})
        check(st == 201 and obj["counts"] == {"green": 1}, "with the token: 201 (%d %s)" % (st, obj))
        st, _, obj = post(s, "green", b"", {"Authorization": "Bearer sekrit"})
        check(st == 409 and "--input" in obj["error"],
              "empty body with no camera: 409 (%d %s)" % (st, obj))
    s.stop()
    s = Server([CAMCLASS, "--headless", "--serve", "0", "--model", MODEL, "--backend", "cpu"])
    if check(s.port, "camclass --serve started: " + s.stderr()[-300:]):
        for method in ("GET", "POST"):
            st, _, obj = s.request(method, "/samples?label=x")
            check(st == 404 and "--collect" in obj["error"],
                  "%s /samples without --collect: 404 naming it (%d %s)" % (method, st, obj))
    s.stop()


def test_roi_recorded(tmp):
    """--collect with --roi writes the crop into DIR/camclass-dataset.json (keeping other keys),
    and camclass-train on DIR uses it: the trained bundle's input.roi is that crop."""
    ds = os.path.join(tmp, "roi")
    os.makedirs(ds)
    with open(os.path.join(ds, "camclass-dataset.json"), "w") as f:
        f.write('{"note": "mine", "roi": "0,0,1,1"}')
    s = Server([CAMCLASS, "--headless", "--serve", "0", "--collect", ds, "--classes", "red,blue",
                "--roi", "0.5,0,0.5,1", "--model", MODEL, "--backend", "cpu"])
    check(s.port, "camclass --collect --roi started: " + s.stderr()[-300:])
    s.stop()
    with open(os.path.join(ds, "camclass-dataset.json")) as f:
        settings = json.load(f)
    check(settings == {"note": "mine", "roi": "0.5,0,0.5,1"},
          "camclass-dataset.json after --collect --roi: %r" % settings)
    for cls, rgb in (("red", (220, 30, 30)), ("blue", (30, 30, 220))):
        os.makedirs(os.path.join(ds, cls), exist_ok=True)
        for i in range(4):
            Image.new("RGB", (64, 48), tuple(max(0, c - 12 * i) for c in rgb)).save(
                os.path.join(ds, cls, "%d.png" % i))
    out = os.path.join(tmp, "roi.ccm")
    p = subprocess.run([TRAIN, ds, "--base", MODEL, "-o", out, "--backend", "cpu", "--augment",
                        "0", "--no-cache"], capture_output=True, text=True, timeout=bound(300))
    roi = None
    if check(p.returncode == 0, "camclass-train on DIR: %d %s" % (p.returncode, p.stderr[-300:])):
        with zipfile.ZipFile(out) as z:
            roi = json.loads(z.read("manifest.json"))["input"].get("roi")
    check(roi == [0.5, 0, 0.5, 1], "the trained bundle's input.roi: %r" % roi)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_roi_recorded(tmp)
        test_settings(tmp)
        test_http(tmp)
        test_token_and_off(tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
