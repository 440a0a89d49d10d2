#!/usr/bin/python3
"""camclass — PyTorch references for tests/capture/test_preprocess.c.

Usage: make_preprocess_ref.py OUTDIR

Writes test frames in every source format (random and structured content, several sizes,
padded strides) and, for each, the model input tensor computed with PyTorch exactly as
docs/PREPROCESSING.md specifies:
  native pixels -> RGB bytes (BT.601 limited-range fixed point for YUYV/NV12, chroma replicated)
  -> float32 (1,3,H,W) in model channel order
  -> squash: F.interpolate(size=(H,W), bilinear, align_corners=False, antialias=False)
     center_crop S: torchvision Resize(S, bilinear, antialias=False) + CenterCrop((H,W))
  -> x/255, (x - mean)/std.
MJPEG frames are JPEGs made with torchvision.io.encode_jpeg; their reference starts from
torchvision.io.decode_jpeg (libjpeg-turbo, default settings, like the C side).

OUTDIR/cases.txt has one line per case:
  name format width height stride policy size out_w out_h color m0 m1 m2 s0 s1 s2
and OUTDIR/<name>.frame (raw frame bytes) and OUTDIR/<name>.ref (float32 NCHW, little endian).
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
import torchvision.io as tio
import torchvision.transforms.functional as TF
from torchvision.transforms import InterpolationMode

torch.set_num_threads(1)

IMAGENET = ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
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

def reference(rgb, color, policy, size, out_w, out_h, mean, std):
    x = rgb if color == "RGB" else rgb.flip(0)
    x = x.unsqueeze(0).contiguous()
    if policy == "squash":
        x = F.interpolate(x, size=(out_h, out_w), mode="bilinear", align_corners=False,
                          antialias=False)
    else:
        x = TF.resize(x, [size], interpolation=InterpolationMode.BILINEAR, antialias=False)
        x = TF.center_crop(x, [out_h, out_w])
    m = torch.tensor(mean, dtype=torch.float32).view(1, 3, 1, 1)
    s = torch.tensor(std, dtype=torch.float32).view(1, 3, 1, 1)
    return ((x / 255.0 - m) / s).contiguous()


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
    lines = []
    n = 0
    for fmt in ("YUYV", "NV12", "RGB24", "BGR24", "GREY", "MJPEG"):
        for si, (w, h) in enumerate(sizes):
            for pi, (policy, size, ow, oh) in enumerate(policies + extra):
                if pi >= len(policies) and si not in (0, 3, 6):
                    continue  # the extra geometries on a few sizes only
                n += 1
                name = "c%03d_%s_%dx%d_%s" % (n, fmt, w, h, policy)
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
                ref = reference(rgb, color, policy, size, ow, oh, mean, std)
                raw.tofile(os.path.join(out, name + ".frame"))
                ref.numpy().astype("<f4").tofile(os.path.join(out, name + ".ref"))
                lines.append("%s %s %d %d %d %s %d %d %d %s %s %s\n" % (
                    name, fmt, w, h, stride, policy, size, ow, oh, color,
                    " ".join(repr(float(np.float32(m))) for m in mean),
                    " ".join(repr(float(np.float32(s))) for s in std)))
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.writelines(lines)
    print("make_preprocess_ref: %d cases in %s" % (len(lines), out))


if __name__ == "__main__":
    main()
