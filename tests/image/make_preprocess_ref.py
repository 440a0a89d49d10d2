#!/usr/bin/python3
"""camclass — PyTorch and PIL references for tests/image/test_preprocess.c.

Usage: make_preprocess_ref.py OUTDIR [PHOTO...]

Writes test frames in every source format (random and structured content, several sizes,
padded strides) and, for each, the model input tensor computed with PyTorch exactly as
docs/PREPROCESSING.md specifies, by camclass_export.preprocess (python/camclass_export/
preprocess.py: the one Python reference, which the exporter's calibration uses too):
  native pixels -> RGB bytes (BT.601 limited-range fixed point for YUYV/NV12, chroma replicated)
  -> float32 (1,3,H,W) in model channel order
  -> squash: F.interpolate(size=(H,W), bilinear, align_corners=False, antialias=False)
     center_crop S: torchvision Resize(S, bilinear, antialias=False) + CenterCrop((H,W))
  -> x/255, (x - mean)/std.
MJPEG frames are JPEGs made with torchvision.io.encode_jpeg; their reference starts from
torchvision.io.decode_jpeg (libjpeg-turbo, default settings, like the C side).

Bundles with "antialias": true (§3b) get PIL's references instead: the same RGB bytes as a PIL
image through torchvision's ImageNet evaluation transforms on PIL images, Resize(S) +
CenterCrop((H, W)) (squash: Resize((H, W))) — that is PIL's Image.resize(size, BILINEAR) and
a crop, checked here for every case against PIL called directly — then x/255, (x - mean)/std.
The same for each PHOTO (a PNG or JPEG file; the C side decodes it with camclass's own file
source, PIL with its own decoder); without PHOTOs, the photographs of Debian's python3-skimage
(PHOTOS below; tools/setup.sh installs it), shrunk 1.2x to 5.5x, and one enlarged.

A region of interest (--roi, the bundle's input.roi) crops the frame first: ROI cases
crop the RGB bytes (PyTorch) or the PIL image (Image.crop) to the rectangle, then make the same
references; a fraction ROI's rectangle is round(f * size) at each edge, as common/roi.c says.

OUTDIR/cases.txt has one line per case:
  name format width height stride policy size antialias out_w out_h color m0 m1 m2 s0 s1 s2
  [path | roi=ROI]
and OUTDIR/<name>.frame (raw frame bytes; not for photos, format FILE, whose last field is the
file's path) and OUTDIR/<name>.ref (float32 NCHW, little endian).
"""
import math
import os
import sys

import numpy as np
import torch
import torchvision.io as tio
from PIL import Image

from camclass_export import preprocess

torch.set_num_threads(1)

IMAGENET = ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
# Photographs in skimage's data directory: RGB and grey PNGs, JPEGs, 102 to 1411 pixels.
PHOTOS = ("astronaut.png", "camera.png", "chelsea.png", "coffee.png", "motorcycle_left.png",
          "rocket.jpg", "hubble_deep_field.jpg", "retina.jpg", "coins.png", "microaneurysms.png")
OTHER = ((0.5, 0.25, 0.75), (0.5, 0.2, 0.3))


# ---- colour conversion (the spec) -------------------------------------------------------

def yuv_to_rgb(y, u, v):
    """BT.601 limited range, 8-bit fixed point: int tensors of one shape -> (3, ...) float."""
    c = 298 * (y.to(torch.int32) - 16) + 128
    d = u.to(torch.int32) - 128
    e = v.to(torch.int32) - 128

    def f(x):
        return torch.div(x, 256, rounding_mode="floor").clamp(0, 255)

    return torch.stack([f(c + 409 * e), f(c - 100 * d - 208 * e), f(c + 516 * d)]).float()


def rgb_of(fmt, raw, w, h, stride):
    """Raw frame bytes (numpy uint8) -> (3, h, w) float RGB as the spec defines it."""
    t = torch.from_numpy(raw)
    if fmt in ("RGB24", "BGR24", "GREY"):
        bpp = {"RGB24": 3, "BGR24": 3, "GREY": 1}[fmt]
        rows = t[: h * stride].reshape(h, stride)[:, : w * bpp].reshape(h, w, bpp)
        if fmt == "GREY":
            return rows.permute(2, 0, 1).expand(3, h, w).float()
        rgb = rows.permute(2, 0, 1).float()
        return rgb if fmt == "RGB24" else rgb.flip(0)
    pairs = (w + 1) // 2
    if fmt == "YUYV":
        q = t[: h * stride].reshape(h, stride)[:, : 4 * pairs].reshape(h, pairs, 4)
        y = torch.stack([q[..., 0], q[..., 2]], dim=-1).reshape(h, 2 * pairs)[:, :w]
        u = q[..., 1].repeat_interleave(2, dim=1)[:, :w]
        v = q[..., 3].repeat_interleave(2, dim=1)[:, :w]
        return yuv_to_rgb(y, u, v)
    if fmt == "NV12":
        ch = (h + 1) // 2
        y = t[: h * stride].reshape(h, stride)[:, :w]
        uv = t[h * stride: h * stride + ch * stride].reshape(ch, stride)[:, : 2 * pairs]
        u = uv[:, 0::2].repeat_interleave(2, 0).repeat_interleave(2, 1)[:h, :w]
        v = uv[:, 1::2].repeat_interleave(2, 0).repeat_interleave(2, 1)[:h, :w]
        return yuv_to_rgb(y, u, v)
    raise ValueError(fmt)


# ---- resampling + normalisation (the spec) ----------------------------------------------

def spec_of(color, policy, size, out_w, out_h, mean, std, antialias):
    """A bundle's "input" spec (manifest.json) for these settings."""
    spec = {"shape": [1, 3, out_h, out_w], "color_order": color, "mean": list(mean),
            "std": list(std), "resize": {"policy": policy, "antialias": antialias}}
    if policy == "center_crop":
        spec["resize"]["size"] = size
    return spec


def reference(rgb, color, policy, size, out_w, out_h, mean, std):
    """(3, h, w) float RGB integers -> (1, 3, H, W) float32 as camclass_export.preprocess (the
    one Python reference, the exporter's calibration included) computes it, no antialias."""
    hwc = rgb.permute(1, 2, 0).to(torch.uint8).numpy()
    spec = spec_of(color, policy, size, out_w, out_h, mean, std, False)
    return preprocess.preprocess(hwc, spec).unsqueeze(0).contiguous()


def pil_reference(img, color, policy, size, out_w, out_h, mean, std):
    """An RGB PIL image -> (1,3,H,W) float32 as camclass_export.preprocess computes it with
    antialias (torchvision's transforms on PIL images: PIL's bilinear, antialiased), checked
    against PIL's own resize called directly."""
    spec = spec_of(color, policy, size, out_w, out_h, mean, std, True)
    ref = preprocess.preprocess(np.asarray(img.convert("RGB")), spec).unsqueeze(0).contiguous()
    w, h = img.size
    if policy == "squash":
        direct = img.resize((out_w, out_h), Image.BILINEAR)
    else:
        rw, rh = (size, int(size * h / w)) if w <= h else (int(size * w / h), size)
        left, top = int(round((rw - out_w) / 2.0)), int(round((rh - out_h) / 2.0))
        direct = img.resize((rw, rh), Image.BILINEAR).crop(
            (left, top, left + out_w, top + out_h))
    x = torch.from_numpy(np.asarray(direct).copy()).permute(2, 0, 1).float()
    assert torch.equal(preprocess.normalize(x, color, mean, std).unsqueeze(0), ref), \
        "camclass_export.preprocess's antialiased resize is not PIL's"
    return ref


# ---- test frames ------------------------------------------------------------------------

def frame_bytes(fmt, w, h, stride, rng, structured):
    """Raw bytes of a frame: noise, or gradients/edges/saturated patches (hits the clamps)."""
    if fmt == "NV12":
        n = h * stride + ((h + 1) // 2) * stride
    else:
        n = h * stride
    if not structured:
        return rng.integers(0, 256, n, dtype=np.uint8)
    yy, xx = np.mgrid[0:h, 0:stride]
    base = ((xx * 255) // max(stride - 1, 1) + ((yy // 7) % 2) * 64) % 256
    if fmt == "NV12":
        cy, cx = np.mgrid[0:(h + 1) // 2, 0:stride]
        chroma = np.where((cx // 8 + cy // 5) % 2 == 0, 0, 255) ^ ((cx % 2) * 255)
        return np.concatenate([base.ravel(), chroma.ravel()]).astype(np.uint8)
    if fmt == "YUYV":
        # Y on even bytes (gradient), U/V on odd bytes alternating extremes in blocks.
        chroma = np.where((xx // 16 + yy // 9) % 2 == 0, 16, 240)
        chroma = np.where(xx % 4 == 3, 255 - chroma, chroma)
        return np.where(xx % 2 == 0, base, chroma).astype(np.uint8).ravel()
    return np.where((xx // 12 + yy // 12) % 3 == 0, 255 - base, base).astype(np.uint8).ravel()


def min_stride(fmt, w):
    return {"YUYV": (w + 1) // 2 * 4, "NV12": (w + 1) // 2 * 2, "RGB24": 3 * w,
            "BGR24": 3 * w, "GREY": w}[fmt]


def skimage_photos():
    """Paths of PHOTOS in skimage's data directory (found without importing skimage)."""
    import importlib.util
    spec = importlib.util.find_spec("skimage")
    data = os.path.join(list(spec.submodule_search_locations)[0], "data") if spec else None
    missing = [n for n in PHOTOS if not data or not os.path.isfile(os.path.join(data, n))]
    if missing:
        sys.exit("make_preprocess_ref: no %s in skimage's data directory (%s): install Debian's "
                 "python3-skimage (tools/setup.sh does)" % (", ".join(missing), data))
    return [os.path.join(data, n) for n in PHOTOS]


def spec_line(name, fmt, w, h, stride, policy, size, aa, ow, oh, color, mean, std, path=""):
    return "%s %s %d %d %d %s %d %d %d %d %s %s %s%s\n" % (
        name, fmt, w, h, stride, policy, size, int(aa), ow, oh, color,
        " ".join(repr(float(np.float32(m))) for m in mean),
        " ".join(repr(float(np.float32(s))) for s in std), " " + path if path else "")


def roi_rect(roi, w, h):
    """--roi text -> (x, y, w, h) in pixels of a w x h frame (common/roi.c's rule)."""
    px = roi.endswith("px")
    v = [float(t) for t in roi[:-2 if px else None].split(",")]
    if px:
        return tuple(int(t) for t in v)

    def edge(f, size):
        return min(max(int(math.floor(f * size + 0.5)), 0), size)

    x0, x1 = edge(v[0], w), edge(v[0] + v[2], w)
    y0, y1 = edge(v[1], h), edge(v[1] + v[3], h)
    return x0, y0, x1 - x0, y1 - y0


def roi_cases(out, rng, n, lines):
    """Frames of every format cropped to a ROI, with and without antialias: odd offsets (the
    YUYV pair and NV12 chroma row of the first column and row), fractions, a ROI smaller than
    the tensor (enlarged), a ROI at the frame's far corner."""
    cases = [((640, 480), "101,37,300,251px", ("squash", 0, 224, 224)),
             ((640, 480), "0.25,0.5,0.5,0.5", ("center_crop", 256, 224, 224)),
             ((333, 101), "0.25,0.5,0.5,0.5", ("squash", 0, 160, 128)),
             ((320, 180), "3,5,40,30px", ("squash", 0, 224, 224)),
             ((320, 180), "181,91,139,89px", ("center_crop", 200, 160, 128))]
    for aa in (False, True):
        for fmt in ("YUYV", "NV12", "RGB24", "BGR24", "GREY", "MJPEG"):
            for (w, h), roi, (policy, size, ow, oh) in cases:
                n += 1
                name = "r%03d_%s_%dx%d_%s%s" % (n, fmt, w, h, policy, "_aa" if aa else "")
                color = "BGR" if n % 3 == 0 else "RGB"
                mean, std = OTHER if n % 4 == 1 else IMAGENET
                if fmt == "MJPEG":
                    raw = frame_bytes("RGB24", w, h, w * 3, rng, n % 2 == 0)
                    jpeg = tio.encode_jpeg(rgb_of("RGB24", raw, w, h, w * 3).to(torch.uint8),
                                           quality=85)
                    raw, stride = jpeg.numpy(), 0
                    rgb = tio.decode_jpeg(jpeg, mode=tio.ImageReadMode.RGB).float()
                else:
                    stride = min_stride(fmt, w) + (8 if n % 3 == 1 else 0)
                    raw = frame_bytes(fmt, w, h, stride, rng, n % 2 == 0)
                    rgb = rgb_of(fmt, raw, w, h, stride)
                x, y, rw, rh = roi_rect(roi, w, h)
                if aa:
                    img = Image.fromarray(rgb.permute(1, 2, 0).to(torch.uint8).numpy(), "RGB")
                    img = img.crop((x, y, x + rw, y + rh))
                    ref = pil_reference(img, color, policy, size, ow, oh, mean, std)
                else:
                    crop = rgb[:, y:y + rh, x:x + rw].contiguous()
                    ref = reference(crop, color, policy, size, ow, oh, mean, std)
                raw.tofile(os.path.join(out, name + ".frame"))
                ref.numpy().astype("<f4").tofile(os.path.join(out, name + ".ref"))
                lines.append(spec_line(name, fmt, w, h, stride, policy, size, aa, ow, oh, color,
                                       mean, std, "roi=" + roi))
    return n


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20261122)
    sizes = [(640, 480), (320, 180), (1280, 720), (333, 101), (100, 80), (101, 333),
             (224, 224)]
    # (policy, size, out_w, out_h)
    policies = [("squash", 0, 224, 224), ("center_crop", 256, 224, 224)]
    extra = [("squash", 0, 160, 128), ("center_crop", 200, 160, 128),
             ("center_crop", 224, 224, 224)]
    # Antialias only: axes hardly longer than the filter (windows cut at both edges), and a
    # 3x2 frame blown up.
    tiny = [((9, 5), ("squash", 0, 3, 2)), ((5, 9), ("center_crop", 3, 3, 3)),
            ((3, 2), ("squash", 0, 224, 224))]
    lines = []
    n = 0
    for aa in (False, True):
        for fmt in ("YUYV", "NV12", "RGB24", "BGR24", "GREY", "MJPEG"):
            geometries = [((w, h), g) for si, (w, h) in enumerate(sizes)
                          for pi, g in enumerate(policies + extra)
                          if pi < len(policies) or si in (0, 3, 6)]  # extras on a few sizes
            if aa and fmt in ("YUYV", "RGB24", "MJPEG"):
                geometries += tiny
            for (w, h), (policy, size, ow, oh) in geometries:
                n += 1
                name = "c%03d_%s_%dx%d_%s%s" % (n, fmt, w, h, policy, "_aa" if aa else "")
                color = "BGR" if n % 3 == 0 else "RGB"
                mean, std = OTHER if n % 4 == 1 else IMAGENET
                structured = n % 2 == 0
                if fmt == "MJPEG":
                    src = "GREY" if n % 5 == 0 else "RGB24"
                    raw = frame_bytes(src, w, h, min_stride(src, w), rng, structured)
                    img = rgb_of(src, raw, w, h, min_stride(src, w))
                    img = img[:1] if src == "GREY" else img
                    jpeg = tio.encode_jpeg(img.to(torch.uint8), quality=85)
                    raw = jpeg.numpy()
                    rgb = tio.decode_jpeg(jpeg, mode=tio.ImageReadMode.RGB).float()
                    stride = 0
                else:
                    stride = min_stride(fmt, w) + (8 if n % 3 == 1 else 0)
                    raw = frame_bytes(fmt, w, h, stride, rng, structured)
                    rgb = rgb_of(fmt, raw, w, h, stride)
                if aa:
                    img = Image.fromarray(rgb.permute(1, 2, 0).to(torch.uint8).numpy(), "RGB")
                    ref = pil_reference(img, color, policy, size, ow, oh, mean, std)
                else:
                    ref = reference(rgb, color, policy, size, ow, oh, mean, std)
                raw.tofile(os.path.join(out, name + ".frame"))
                ref.numpy().astype("<f4").tofile(os.path.join(out, name + ".ref"))
                lines.append(spec_line(name, fmt, w, h, stride, policy, size, aa, ow, oh, color,
                                       mean, std))
    n = roi_cases(out, rng, n, lines)
    # Real photos, through each side's own decoder: ImageNet's evaluation geometry, and a few
    # other geometries and channel orders on the first ones.
    photo_geometries = [("center_crop", 256, 224, 224, "RGB"), ("squash", 0, 224, 224, "BGR"),
                        ("center_crop", 200, 160, 128, "RGB")]
    for i, path in enumerate(sys.argv[2:] or skimage_photos()):
        with Image.open(path) as im:
            img = im.convert("RGB")
        for gi, (policy, size, ow, oh, color) in enumerate(photo_geometries):
            if gi > 0 and i >= 2:
                continue
            n += 1
            name = "p%03d_%s_%s" % (n, os.path.splitext(os.path.basename(path))[0], policy)
            ref = pil_reference(img, color, policy, size, ow, oh, *IMAGENET)
            ref.numpy().astype("<f4").tofile(os.path.join(out, name + ".ref"))
            lines.append(spec_line(name, "FILE", img.size[0], img.size[1], 0, policy, size, True,
                                   ow, oh, color, *IMAGENET, path=os.path.abspath(path)))
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.writelines(lines)
    print("make_preprocess_ref: %d cases in %s" % (len(lines), out))


if __name__ == "__main__":
    main()
