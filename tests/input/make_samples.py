#!/usr/bin/python3
"""camclass — regenerates the small synthetic sample media in assets/samples/.

Usage: make_samples.py [OUTDIR]   (default: assets/samples next to this checkout)

  bars_320x240.png   colour bars over a grey ramp (RGB PNG)
  bars_320x240.jpg   the same as a JPEG (quality 90)
  moving_128x96.y4m  4 frames of C420jpeg video: the bars scrolling right, 30 fps

Deterministic: running it again gives the same bytes (for the same torchvision/libpng).
"""
import os
import sys

import numpy as np
import torch
import torchvision.io as tio

BARS = [(235, 235, 235), (235, 235, 16), (16, 235, 235), (16, 235, 16), (235, 16, 235),
        (235, 16, 16), (16, 16, 235), (16, 16, 16)]


def bars(w, h, shift=0):
    """(h, w, 3) uint8: 8 colour bars on the top 2/3, a grey ramp below."""
    img = np.zeros((h, w, 3), np.uint8)
    top = h * 2 // 3
    for x in range(w):
        img[:top, x] = BARS[((x + shift) % w) * len(BARS) // w]
        img[top:, x] = ((x + shift) % w) * 255 // (w - 1)
    return img


def rgb_to_i420(img):
    """BT.601 limited range (the inverse of docs/PREPROCESSING.md §1, rounded), 4:2:0 by
    averaging 2x2 chroma."""
    rgb = img.astype(np.float64)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    y = 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255
    u = 128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255
    v = 128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255
    h, w = y.shape

    def sub(c):
        return c.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3))

    planes = [y, sub(u), sub(v)]
    return b"".join(np.clip(np.rint(p), 0, 255).astype(np.uint8).tobytes() for p in planes)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "assets",
                                                              "samples")
    os.makedirs(out, exist_ok=True)
    img = torch.from_numpy(bars(320, 240)).permute(2, 0, 1).contiguous()
    tio.write_png(img, os.path.join(out, "bars_320x240.png"), compression_level=9)
    tio.write_jpeg(img, os.path.join(out, "bars_320x240.jpg"), quality=90)
    with open(os.path.join(out, "moving_128x96.y4m"), "wb") as f:
        f.write(b"YUV4MPEG2 W128 H96 F30:1 Ip A1:1 C420jpeg\n")
        for k in range(4):
            f.write(b"FRAME\n")
            f.write(rgb_to_i420(bars(128, 96, shift=8 * k)))
    print("make_samples: wrote", out)


if __name__ == "__main__":
    main()
