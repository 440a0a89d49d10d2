#!/usr/bin/python3
"""camclass's image inputs as a newcomer and a hostile client send them,
each through every door: --input FILE, --input DIR and POST /predict (suite app).

- formats: a CMYK JPEG (PIL writes Adobe-inverted inks), WebP (lossless and lossy), BMP
  (24-bit and 8-bit palette), TIFF (plain and LZW) and GIF (palette; through libavcodec) made
  with PIL from a sample frame classify like that frame's PNG: the lossless ones with the same
  scores (same pixels), the others with the same top-1; named alone, in a directory, and posted
  (raw and as a form); a GIF named alone plays as a video (an animation: a result per frame),
  a TIFF declaring 70000x70000 is refused by its header;
- a directory with a truncated PNG and a "JPEG" that is text among good files: one warning line
  each, the other files classified under their own names, the summary counts 2 skipped, exit 0;
  a directory where nothing decodes: exit non-zero, naming it;
- POST /predict from a hostile client on a raw socket: curl --data-binary's
  application/x-www-form-urlencoded body sniffed (415 before), the field "image" (400 before),
  boundary=XyZ; charset=utf-8, BOUNDARY=, Boundary=, a quoted boundary and a 1-character one
  (400 before), a form without its closing delimiter blamed on the form (the PNG before).

    test_image_inputs.py CAMCLASS SELFTEST_MODEL SAMPLES_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from io import BytesIO

from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import bound, check, env_headless, host_command, summary  # noqa: E402
import serve_client  # noqa: E402

EXE, MODEL, SAMPLES = sys.argv[1:4]
BASE = host_command(EXE) + ["--headless", "--model", MODEL, "--backend", "cpu"]
TOL = 1e-5


def classify(path):
    """--input PATH's log: (exit status, stderr, {file: top})."""
    out = subprocess.run(BASE + ["--input", path, "--log", "-"], capture_output=True,
                         env=env_headless(), timeout=bound(90))
    tops = {}
    for line in out.stdout.decode().splitlines():
        o = json.loads(line)
        if o.get("event") == "frame":
            tops[o.get("file")] = o["top"]
    return out.returncode, out.stderr.decode(errors="replace"), tops


def same_top(a, b, tol=TOL):
    return (a and b and len(a) == len(b) and all(x["index"] == y["index"] for x, y in zip(a, b))
            and all(abs(x["score"] - y["score"]) <= tol for x, y in zip(a, b)))


def make_images(d):
    """The sample frame as PNG (the reference) and in the other formats: {name: (bytes, exact)}
    where exact says the pixels are the PNG's."""
    frames = os.path.join(SAMPLES, "selftest")
    src = Image.open(os.path.join(frames, sorted(os.listdir(frames))[0])).convert("RGB")
    out = {}

    def save(name, img, fmt, exact, **kw):
        b = BytesIO()
        img.save(b, fmt, **kw)
        out[name] = (b.getvalue(), exact)
        with open(os.path.join(d, name), "wb") as f:
            f.write(b.getvalue())

    save("ref.png", src, "PNG", True)
    save("cmyk.jpg", src.convert("CMYK"), "JPEG", False, quality=95)
    save("lossless.webp", src, "WEBP", True, lossless=True)
    save("lossy.webp", src, "WEBP", False, quality=90)
    save("rgb24.bmp", src, "BMP", True)
    pal = src.convert("P", palette=Image.ADAPTIVE, colors=256)
    save("palette.bmp", pal, "BMP", False)
    save("plain.tif", src, "TIFF", True)
    save("lzw.tif", src, "TIFF", True, compression="tiff_lzw")
    save("palette.gif", pal, "GIF", False)
    return out


def test_formats(d, images, ref):
    """Each format named alone equals the reference (exact: same scores; else same top-1)."""
    for name, (_, exact) in images.items():
        if name == "ref.png" or name.endswith(".gif"):  # a GIF alone is a video: test_gif
            continue
        rc, err, tops = classify(os.path.join(d, name))
        top = tops.get(name)
        ok = same_top(top, ref) if exact else top and top[0]["index"] == ref[0]["index"]
        check(rc == 0 and ok, "--input %s: %s the PNG's (rc %d, %s vs %s, %s)"
              % (name, "the same scores as" if exact else "the same top-1 as", rc,
                 top and top[:2], ref[:2], err.strip()[-200:]))
    # A CMYK JPEG's colours: PIL's own RGB of it, saved as PNG, classifies within 0.02.
    cmyk_rgb = os.path.join(d, "cmyk_as_rgb.png")
    Image.open(os.path.join(d, "cmyk.jpg")).convert("RGB").save(cmyk_rgb)
    _, _, a = classify(os.path.join(d, "cmyk.jpg"))
    _, _, b = classify(cmyk_rgb)
    check(same_top(a.get("cmyk.jpg"), b.get("cmyk_as_rgb.png"), 0.02),
          "cmyk.jpg: the colours PIL gives it (%s vs %s)"
          % (a.get("cmyk.jpg", [None])[:1], b.get("cmyk_as_rgb.png", [None])[:1]))
    os.unlink(cmyk_rgb)


def test_gif_and_tiff_alone(d):
    """An animated GIF named alone plays as a video (FFmpeg), a result per frame; a TIFF that
    declares 70000x70000 is one line naming the limit, before anything is decoded."""
    frames = [Image.new("RGB", (64, 48), (40 * i, 200 - 40 * i, 90)) for i in range(5)]
    gif = os.path.join(d, "anim.gif")
    frames[0].save(gif, save_all=True, append_images=frames[1:], duration=100, loop=0)
    out = subprocess.run(BASE + ["--input", gif, "--log", "-"], capture_output=True,
                         env=env_headless(), timeout=bound(90))
    n = sum(1 for line in out.stdout.decode().splitlines() if '"event":"frame"' in line)
    check(out.returncode == 0 and n == 5, "anim.gif alone: 5 results, one per frame (rc %d, %d)"
          % (out.returncode, n))
    os.unlink(gif)
    big = os.path.join(d, "big.tif")
    Image.new("RGB", (8, 8)).save(big, "TIFF")
    with open(big, "r+b") as f:  # ImageWidth and ImageLength as LONGs of 70000
        data = bytearray(f.read())
        ifd = int.from_bytes(data[4:8], "little")
        for i in range(int.from_bytes(data[ifd:ifd + 2], "little")):
            e = ifd + 2 + 12 * i
            if int.from_bytes(data[e:e + 2], "little") in (256, 257):
                data[e + 2:e + 4] = (4).to_bytes(2, "little")
                data[e + 8:e + 12] = (70000).to_bytes(4, "little")
        f.seek(0)
        f.write(data)
    rc, err, tops = classify(big)
    lines = [l for l in err.splitlines() if "big.tif" in l]
    check(rc != 0 and not tops and lines and "70000x70000" in lines[0],
          "a TIFF declaring 70000x70000: refused by its header (rc %d, %s)" % (rc, lines[:1]))
    os.unlink(big)


def test_directory(d, images, ref):
    """Every format in a directory, with two bad files among them: skipped, counted, named."""
    with open(os.path.join(d, "b-truncated.png"), "wb") as f:
        f.write(images["ref.png"][0][:300])
    with open(os.path.join(d, "c-text.jpg"), "w") as f:
        f.write("this is not a JPEG\n")
    rc, err, tops = classify(d)
    warnings = [l for l in err.splitlines() if "warning" in l]
    check(rc == 0, "a directory with 2 bad files: exit 0 (%d: %s)" % (rc, err.strip()[-300:]))
    check(len(warnings) == 2 and "b-truncated.png" in warnings[0] and
          "c-text.jpg" in warnings[1] and all(w.endswith("skipped") for w in warnings),
          "one warning line per bad file, naming it (%s)" % warnings)
    check("2 files skipped" in err, "the summary counts 2 files skipped (%s)" % err[-200:])
    good = [n for n in images]
    check(sorted(tops) == sorted(good), "every good file classified under its own name (%s)"
          % sorted(tops))
    for name, (_, exact) in images.items():
        top = tops.get(name)
        ok = same_top(top, ref) if exact else top and top[0]["index"] == ref[0]["index"]
        check(ok, "in the directory, %s: as the PNG (%s)" % (name, top and top[:1]))
    bad = tempfile.mkdtemp(dir=d)
    shutil.copy(os.path.join(d, "b-truncated.png"), bad)
    shutil.copy(os.path.join(d, "c-text.jpg"), bad)
    rc, err, tops = classify(bad)
    check(rc != 0 and "none of its 2 image files decodes" in err and bad in err and not tops,
          "a directory where nothing decodes: exit %d, naming it (%s)" % (rc, err.strip()[-200:]))
    shutil.rmtree(bad)


def raw_post(port, ctype, body):
    """POST /predict as a raw client writes it: (status, JSON body or None)."""
    status, obj, _ = serve_client.raw_answer(
        port, b"POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        b"Content-Type: %s\r\nContent-Length: %d\r\n\r\n" % (ctype, len(body)) + body, 30)
    return status, obj


def form(boundary, name, data, close=True):
    return (b"--" + boundary + b"\r\nContent-Disposition: form-data; name=\"" + name +
            b"\"; filename=\"x\"\r\nContent-Type: application/octet-stream\r\n\r\n" + data +
            b"\r\n--" + boundary + (b"--\r\n" if close else b"\r\n"))


def test_predict(images, ref):
    s = serve_client.Server(BASE + ["--serve", "0"])
    if not check(s.port is not None, "serving (%s)" % s.stderr()[-300:]):
        s.stop()
        return
    png = images["ref.png"][0]
    for name, (data, exact) in images.items():
        st, o = raw_post(s.port, b"image/" + name.split(".")[1].encode(), data)
        top = o.get("top") if st == 200 and o else None
        ok = same_top(top, ref) if exact else top and top[0]["index"] == ref[0]["index"]
        check(ok, "POST /predict %s: as the PNG from --input (%d %s)" % (name, st, str(o)[:120]))
    # curl --data-binary @x.jpg sends application/x-www-form-urlencoded: sniffed.
    for name in ("ref.png", "cmyk.jpg", "lossless.webp", "rgb24.bmp", "lzw.tif", "palette.gif"):
        st, o = raw_post(s.port, b"application/x-www-form-urlencoded", images[name][0])
        check(st == 200 and o and o["top"][0]["index"] == ref[0]["index"],
              "%s as curl --data-binary sends it: 200 (%d %s)" % (name, st, str(o)[:120]))
    cp = subprocess.run(["curl", "-sS", "--max-time", "20", "--data-binary",
                         "@" + os.path.join(SAMPLES, "bars_320x240.jpg"),
                         "http://127.0.0.1:%d/predict" % s.port], capture_output=True,
                        timeout=30)
    o = json.loads(cp.stdout or b"null")
    check(o and "top" in o, "curl --data-binary @bars_320x240.jpg: classified (%s)" % cp.stdout[:120])
    # Multipart forms as clients write them.
    mp = b"multipart/form-data; "
    for what, ctype, body in [
            ("the field \"image\"", mp + b"boundary=XyZ", form(b"XyZ", b"image", png)),
            ("boundary=XyZ; charset=utf-8", mp + b"boundary=XyZ; charset=utf-8",
             form(b"XyZ", b"file", png)),
            ("BOUNDARY=", mp + b"BOUNDARY=XyZ", form(b"XyZ", b"file", png)),
            ("Boundary=", mp + b"Boundary=XyZ", form(b"XyZ", b"file", png)),
            ("a quoted boundary", mp + b"boundary=\"a b:c\"", form(b"a b:c", b"file", png)),
            ("a 1-character boundary", mp + b"boundary=Z", form(b"Z", b"file", png)),
            ("charset before the boundary", mp + b"charset=utf-8;boundary=XyZ",
             form(b"XyZ", b"file", png))]:
        st, o = raw_post(s.port, ctype, body)
        check(st == 200 and o and same_top(o["top"], ref), "a form with %s: 200 (%d %s)"
              % (what, st, str(o)[:120]))
    st, o = raw_post(s.port, mp + b"boundary=XyZ", form(b"XyZ", b"file", png, close=False))
    check(st == 400 and o and "ends before its closing boundary" in o["error"] and
          "PNG" not in o["error"], "a form without its closing delimiter: 400 blaming the form "
          "(%d %s)" % (st, o))
    st, o = raw_post(s.port, mp + b"boundary=XyZ", form(b"XyZ", b"photo", png))
    check(st == 400 and o and "no field \"file\" or \"image\"" in o["error"],
          "a form without \"file\" or \"image\": 400 naming both (%d %s)" % (st, o))
    st, o = raw_post(s.port, mp + b"charset=utf-8", form(b"XyZ", b"file", png))
    check(st == 400 and o and "boundary" in o["error"], "a form without a boundary: 400 (%d %s)"
          % (st, o))
    st, o = raw_post(s.port, b"text/plain", png)
    check(st == 415, "text/plain is still refused: 415 (%d)" % st)
    check(s.stop() == 0, "then exit 0")


with tempfile.TemporaryDirectory() as d:
    imgs = make_images(d)
    _, _, tops = classify(os.path.join(d, "ref.png"))
    reference = tops.get("ref.png")
    if check(reference, "the reference PNG classifies"):
        test_formats(d, imgs, reference)
        test_gif_and_tiff_alone(d)
        test_predict(imgs, reference)
        test_directory(d, imgs, reference)
sys.exit(summary())
