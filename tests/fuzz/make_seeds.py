#!/usr/bin/python3
"""camclass — writes the seed corpora of the fuzz targets into tests/fuzz/corpus/TARGET/.

A few small valid inputs per target (and a few near-misses), made here so that they can be made
again: tiny bundles and manifests (the valid bundle of tests/engine/test_bundle.c, an int8 and
an antialias variant, and tests/engine/small_net.py exported by tools/camclass-export),
PNG/JPEG images in each colour type PIL writes, Y4M streams in each colour space y4m.c reads,
config files, preprocessing inputs (the 12-byte header of fuzz_preprocess.c + pixels), and
tiny video clips made by the ffmpeg CLI (VIDEO_SEEDS; --only-video writes just those).
Files named crash-*/timeout-*/leak-* (inputs the fuzzers found, kept as regressions) are left
alone. Run: tests/fuzz/make_seeds.py [--small-net BUILD/tests/engine/small_net.ccm]
"""
import argparse
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import zipfile

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The valid manifest of tests/engine/test_bundle.c (version 1, center_crop, BGR).
TINY = {
    "format": "camclass-bundle", "version": 1, "name": "tiny",
    "input": {"tensor": "input", "shape": [1, 3, 8, 8], "color_order": "BGR",
              "mean": [0.5, 0.4, 0.3], "std": [0.2, 0.25, 0.5],
              "resize": {"policy": "center_crop", "size": 10}},
    "output": {"tensor": "logits", "kind": "logits", "classes": 2},
    "labels": {"entry": "labels.txt"},
    "tensors": [
        {"name": "input", "dtype": "f32", "shape": [1, 3, 8, 8]},
        {"name": "conv.w", "dtype": "f32", "shape": [4, 3, 3, 3],
         "data": {"entry": "weights.bin", "offset": 0, "size": 432}},
        {"name": "conv.b", "dtype": "f32", "shape": [4],
         "data": {"entry": "weights.bin", "offset": 448, "size": 16}},
        {"name": "conv.out", "dtype": "f32", "shape": [1, 4, 4, 4]},
        {"name": "gap.out", "dtype": "f32", "shape": [1, 4, 1, 1]},
        {"name": "flat.out", "dtype": "f32", "shape": [1, 4]},
        {"name": "fc.w", "dtype": "f32", "shape": [2, 4],
         "data": {"entry": "weights.bin", "offset": 512, "size": 32}},
        {"name": "fc.b", "dtype": "f32", "shape": [2],
         "data": {"entry": "weights.bin", "offset": 576, "size": 8}},
        {"name": "logits", "dtype": "f32", "shape": [1, 2]}],
    "graph": [
        {"op": "conv2d", "name": "conv", "inputs": ["input", "conv.w", "conv.b"],
         "outputs": ["conv.out"], "attrs": {"stride": [2, 2], "padding": [1, 1, 1, 1],
                                            "dilation": [1, 1], "groups": 1,
                                            "activation": "relu6"}},
        {"op": "global_avg_pool", "name": "gap", "inputs": ["conv.out"], "outputs": ["gap.out"]},
        {"op": "flatten", "name": "flat", "inputs": ["gap.out"], "outputs": ["flat.out"]},
        {"op": "linear", "name": "fc", "inputs": ["flat.out", "fc.w", "fc.b"],
         "outputs": ["logits"],
         "attrs": {"activation": "clamp", "clamp_min": -5, "clamp_max": 5}}]}


def variants():
    """(name, manifest) of the tiny bundle: as it is, int8 fc.w with scales, v3 antialias."""
    yield "tiny", TINY
    i8 = json.loads(json.dumps(TINY))
    i8["tensors"][6] = {"name": "fc.w", "dtype": "i8", "shape": [2, 4],
                        "data": {"entry": "weights.bin", "offset": 512, "size": 8},
                        "quant": {"axis": 0, "scales": {"entry": "scales.bin", "offset": 0,
                                                        "size": 8}}}
    yield "tiny-i8", i8
    v3 = json.loads(json.dumps(TINY))
    v3["version"] = 3
    v3["input"]["color_order"] = "RGB"
    v3["input"]["resize"] = {"policy": "squash", "antialias": True}
    v3["output"]["kind"] = "probabilities"
    yield "tiny-v3-antialias", v3


def bundle_bytes(manifest):
    # The fuzz_manifest harness's entries: weights.bin of small f32, scales.bin, labels.txt.
    weights = b"".join(struct.pack("<f", (i % 64) * 0.25 - 8.0) for i in range(1024))
    scales = b"".join(struct.pack("<f", 0.01 * (i + 1)) for i in range(64))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data, method in [("manifest.json", manifest, zipfile.ZIP_DEFLATED),
                                   ("weights.bin", weights, zipfile.ZIP_STORED),
                                   ("scales.bin", scales, zipfile.ZIP_STORED),
                                   ("labels.txt", "cat\ndog\n", zipfile.ZIP_DEFLATED)]:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # reproducible
            info.compress_type = method
            z.writestr(info, data)
    return buf.getvalue()


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def small_net(path):
    if not path:
        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, "small_net.ccm")
        subprocess.run([sys.executable, os.path.join(ROOT, "tools", "camclass-export"),
                        "--module", os.path.join(ROOT, "tests", "engine", "small_net.py") +
                        ":SmallNet", "--random-seed", "2", "--input-size", "13", "-o", path],
                       check=True)
    with open(path, "rb") as f:
        return f.read()


def image(mode, size, fmt, **kw):
    im = Image.new("RGB", size)
    im.putdata([((x * 37) % 256, (y * 59) % 256, (x * y * 13) % 256)
                for y in range(size[1]) for x in range(size[0])])
    if mode == "P":
        im = im.convert("P", palette=Image.ADAPTIVE, colors=8)
    elif mode == "I;16":
        im = im.convert("L").convert("I;16")
    elif mode != "RGB":
        im = im.convert(mode)
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def y4m(header, frames, frame_bytes):
    out = (header + "\n").encode()
    for k in range(frames):
        out += b"FRAME\n" + bytes((i * 7 + k * 31) % 256 for i in range(frame_bytes))
    return out


# Tiny clips for the video target, made by the ffmpeg CLI (bit-exact muxing, no metadata): a
# few frames of 16x16 to 34x18 in each container and codec family the app tests use.
VIDEO_SEEDS = [
    ("h264.mp4", "testsrc2=size=32x16:rate=10", 3, ["-c:v", "libx264", "-pix_fmt", "yuv420p",
                                                      "-preset", "ultrafast"]),
    ("vp9-odd.webm", "testsrc2=size=17x9:rate=10", 3, ["-c:v", "libvpx-vp9", "-pix_fmt",
                                                         "yuv420p", "-deadline", "realtime"]),
    ("mjpeg.avi", "testsrc2=size=16x16:rate=10", 2, ["-c:v", "mjpeg"]),
    ("gray-ffv1.mkv", "testsrc2=size=34x18:rate=10", 2, ["-c:v", "ffv1", "-pix_fmt", "gray"]),
    ("mpeg2.ts", "testsrc2=size=32x32:rate=25", 8, ["-c:v", "mpeg2video"]),
]


def videos():
    with tempfile.TemporaryDirectory() as tmp:
        for name, src, frames, enc in VIDEO_SEEDS:
            out = os.path.join(tmp, name)
            subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi",
                            "-i", src, "-frames:v", str(frames)] + enc +
                           ["-map_metadata", "-1", "-fflags", "+bitexact", "-flags:v",
                            "+bitexact", out], check=True)
            with open(out, "rb") as f:
                write("video", name, f.read())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--small-net", help="tests/engine/small_net.ccm of a build (else exported)")
    ap.add_argument("--only-video", action="store_true",
                    help="write only the video target's clips (needs the ffmpeg CLI)")
    args = ap.parse_args()
    videos()
    if args.only_video:
        return

    net = small_net(args.small_net)
    write("bundle", "small_net.ccm", net)
    for name, m in variants():
        text = json.dumps(m)
        write("bundle", name + ".ccm", bundle_bytes(text))
        write("manifest", name + ".json", text)
    with zipfile.ZipFile(io.BytesIO(net)) as z:
        write("manifest", "small_net.json", z.read("manifest.json"))

    for mode in ["RGB", "L", "LA", "RGBA", "P", "I;16"]:
        write("image", "%s.png" % mode.replace(";", ""), image(mode, (5, 3), "PNG"))
    write("image", "RGB-9x7.png", image("RGB", (9, 7), "PNG"))
    write("image", "rgb.jpg", image("RGB", (9, 7), "JPEG", quality=50))
    write("image", "grey.jpg", image("L", (9, 7), "JPEG", quality=50))
    write("image", "progressive.jpg", image("RGB", (17, 9), "JPEG", quality=50,
                                            progressive=True))
    write("image", "subsampling444.jpg", image("RGB", (8, 8), "JPEG", subsampling=0))
    write("image", "cmyk.jpg", image("CMYK", (9, 7), "JPEG", quality=50))  # Adobe-inverted
    write("image", "lossless.webp", image("RGB", (9, 7), "WEBP", lossless=True))
    write("image", "lossy.webp", image("RGB", (9, 7), "WEBP", quality=50))
    write("image", "rgba.webp", image("RGBA", (5, 3), "WEBP", lossless=True))
    write("image", "rgb24.bmp", image("RGB", (9, 7), "BMP"))
    write("image", "palette.bmp", image("P", (5, 3), "BMP"))
    write("image", "grey.bmp", image("L", (5, 3), "BMP"))

    write("y4m", "420jpeg.y4m", y4m("YUV4MPEG2 W4 H2 F25:1 Ip A1:1", 2, 8 + 2 * 2))
    write("y4m", "420-odd.y4m", y4m("YUV4MPEG2 W3 H3 F30000:1001 C420mpeg2 XYSCSS=420MPEG2",
                                    2, 9 + 2 * 4))
    write("y4m", "444.y4m", y4m("YUV4MPEG2 W2 H2 F0:0 A0:0 C444", 2, 12))
    write("y4m", "mono.y4m", y4m("YUV4MPEG2 W5 H1 Cmono", 3, 5))

    with open(os.path.join(ROOT, "systemd", "config.json"), "rb") as f:
        write("config", "systemd.json", f.read())
    write("config", "all.json", "\x00" + json.dumps(
        {"input": "clip.y4m", "loop": True, "model": "m.ccm", "labels": "l.txt",
         "backend": "cpu", "device": 1, "threads": 2, "size": "640x480", "fps": 12.5,
         "top-k": 3, "threshold": 0.25, "headless": False, "log": "out.jsonl",
         "log-mode": "every", "profile": True}))
    write("config", "cli-wins.json", "\x1f" + json.dumps({"camera": "1", "top-k": 7}))
    write("config", "empty.json", "{}")

    # fuzz_preprocess: header (format, width-4, height-4, stride delta, out w, h, flags, size).
    def pre(fmt, w, h, row, out=(8, 6), flags=0, size=10, stride_delta=0):
        hdr = struct.pack("<BHHbBBBBH", fmt, w + 4, h + 4, stride_delta, 0,
                          out[0] - 1, out[1] - 1, flags, size)
        rows = h + (h + 1) // 2 if fmt == 4 else h
        return hdr + bytes((i * 11) % 256 for i in range(rows * (row + max(stride_delta, 0))))
    write("preprocess", "yuyv.bin", pre(0, 9, 5, 20))
    write("preprocess", "rgb-crop.bin", pre(2, 7, 6, 21, flags=1, size=9))
    write("preprocess", "bgr-antialias.bin", pre(3, 30, 20, 90, out=(4, 4), flags=2 | 4))
    write("preprocess", "nv12.bin", pre(4, 5, 5, 6, flags=1, size=8, stride_delta=2))
    write("preprocess", "grey-aa-crop.bin", pre(5, 40, 3, 40, out=(3, 2), flags=3, size=3))
    write("preprocess", "mjpeg.bin", struct.pack("<BHHbBBBBH", 1, 4, 4, 0, 0, 7, 7, 0, 0) +
          image("RGB", (9, 7), "JPEG", quality=50))


if __name__ == "__main__":
    main()
