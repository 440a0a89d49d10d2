"""camclass's preprocessing in Python (docs/PREPROCESSING.md): the one reference of it.

What camclass computes for a bundle's "input" spec, from RGB pixels to the model's input:
resize (squash to the input size, or the shorter side to `size` then a centre crop) with
bilinear sampling — PyTorch's, align_corners=False, no antialias, or with "antialias": true
PIL's, antialiased, as torchvision's transforms on PIL images —, the colour order, then
(x/255 - mean) / std per model channel.

Its users: the exporter's calibration (ccm_calibrate.load_images), the self-test model's
training (tools/train_selftest.py), and tests/image/make_preprocess_ref.py, which writes this
module's outputs as the references camclass's C preprocessing is checked against (the
`preprocess` test) — so what the exporter calibrates with is what camclass computes.
"""

import numpy as np
import torch
import torch.nn.functional as F
import torchvision.transforms.functional as TF
from torchvision.transforms import InterpolationMode


def resize(x, policy, size, out_h, out_w):
    """x: float RGB in [0, 255], (3, H, W) or (N, 3, H, W) -> the same shape resized to
    (out_h, out_w) without antialias: "squash" straight to it, "center_crop" the shorter side
    to size, then the centre out_h x out_w."""
    # Contiguous NCHW: interpolate on a channels-last view (an HxWx3 array permuted) rounds
    # differently, by up to a few float32 ulps.
    batch = (x if x.dim() == 4 else x.unsqueeze(0)).contiguous()
    if policy == "squash":
        y = F.interpolate(batch, size=(out_h, out_w), mode="bilinear", align_corners=False)
    else:
        y = TF.resize(batch, [size], InterpolationMode.BILINEAR, antialias=False)
        y = TF.center_crop(y, [out_h, out_w])
    return y if x.dim() == 4 else y[0]


def resize_pil(img, policy, size, out_h, out_w):
    """A PIL RGB image resized as resize() does, but with PIL's bilinear (antialiased), as
    torchvision's transforms do on PIL images; PIL rounds the result to bytes. Returns the
    (3, out_h, out_w) float tensor of those bytes."""
    if policy == "squash":
        img = TF.resize(img, [out_h, out_w], InterpolationMode.BILINEAR)
    else:
        img = TF.center_crop(TF.resize(img, size, InterpolationMode.BILINEAR), [out_h, out_w])
    return torch.from_numpy(np.asarray(img).copy()).permute(2, 0, 1).float()


def normalize(x, color, mean, std):
    """x: float RGB in [0, 255], channels at dim -3 -> the model's input: channels in colour
    order color ("RGB" or "BGR"), then (x/255 - mean) / std with mean and std in that order."""
    if color == "BGR":
        x = x.flip(-3)
    m = torch.tensor(mean, dtype=torch.float32).view(3, 1, 1)
    s = torch.tensor(std, dtype=torch.float32).view(3, 1, 1)
    return (x / 255.0 - m) / s


def preprocess(rgb, inp):
    """rgb: uint8 H x W x 3 array -> float32 (3, H, W) model input as camclass computes it for
    the bundle's "input" spec inp (manifest.json: shape, resize, color_order, mean, std)."""
    h, w = inp["shape"][2:]
    rs = inp["resize"]
    size = rs.get("size", 0)
    if rs.get("antialias", False):
        from PIL import Image
        img = Image.fromarray(np.ascontiguousarray(rgb, dtype=np.uint8), "RGB")
        x = resize_pil(img, rs["policy"], size, h, w)
    else:
        x = resize(torch.from_numpy(rgb.copy()).permute(2, 0, 1).float(), rs["policy"], size,
                   h, w)
    return normalize(x, inp["color_order"], inp["mean"], inp["std"])
