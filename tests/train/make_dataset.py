#!/usr/bin/python3
"""Writes a labelled image folder for camclass-train's tests: DIR/<class>/<n>.jpg|png.

Four classes of drawn scenes, each image a new draw (seeded): where a shape is, its size and
its shade, the background's tint and noise vary, so that a class is a kind of scene, not one
picture. "door open" and "door closed" differ in one region of the frame, as a state sensor's
classes do; "lights off" is dark; "cat" is a round blob on a counter.

    make_dataset.py DIR [--per-class N] [--seed S] [--shuffle-labels]

--shuffle-labels puts the same images into the classes at random (a dataset with nothing to
learn: what the held-out accuracy of a model that learned nothing looks like).
"""
import argparse
import os
import random

from PIL import Image, ImageDraw, ImageFilter

CLASSES = ["door closed", "door open", "lights off", "cat"]


def scene(cls, rng, size=160):
    bg = tuple(rng.randint(150, 210) + rng.randint(-15, 15) for _ in range(3))
    img = Image.new("RGB", (size, size), bg)
    d = ImageDraw.Draw(img)
    wall = tuple(max(0, c - 60) for c in bg)
    d.rectangle([0, int(size * 0.75), size, size], fill=wall)  # the floor / counter
    x0 = rng.randint(int(size * 0.25), int(size * 0.4))
    door = [x0, int(size * 0.15), x0 + int(size * 0.35), int(size * 0.75)]
    if cls in ("door closed", "door open"):
        d.rectangle(door, fill=(120 + rng.randint(-20, 20), 70, 30))
        if cls == "door open":  # a dark gap where the door swung away
            gap = [door[0] + 4, door[1] + 4, door[0] + (door[2] - door[0]) * 2 // 3, door[3]]
            d.rectangle(gap, fill=(25, 25, 30))
        d.ellipse([door[2] - 12, (door[1] + door[3]) // 2 - 4, door[2] - 4,
                   (door[1] + door[3]) // 2 + 4], fill=(220, 200, 60))
    elif cls == "cat":
        cx, cy, r = rng.randint(40, size - 40), int(size * 0.62), rng.randint(16, 26)
        fur = rng.choice([(230, 140, 40), (60, 60, 60), (240, 240, 235)])
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=fur)
        d.polygon([(cx - r, cy - r // 2), (cx - r // 2, cy - r - 10), (cx, cy - r)], fill=fur)
        d.polygon([(cx + r, cy - r // 2), (cx + r // 2, cy - r - 10), (cx, cy - r)], fill=fur)
    else:  # lights off: the same room, dark
        d.rectangle(door, fill=(70, 40, 20))
        img = Image.eval(img, lambda v: v // 6)
    noise = Image.effect_noise((size, size), rng.randint(10, 30)).convert("RGB")
    img = Image.blend(img, noise, 0.08)
    return img.filter(ImageFilter.GaussianBlur(rng.uniform(0, 0.8)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--per-class", type=int, default=16)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--shuffle-labels", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    images = [(cls, scene(cls, rng)) for cls in CLASSES for _ in range(a.per_class)]
    if a.shuffle_labels:
        labels = [c for c, _ in images]
        rng.shuffle(labels)
        images = [(labels[i], img) for i, (_, img) in enumerate(images)]
    for i, (cls, img) in enumerate(images):
        os.makedirs(os.path.join(a.dir, cls), exist_ok=True)
        ext = "png" if i % 3 == 0 else "jpg"
        img.save(os.path.join(a.dir, cls, f"{i:04d}.{ext}"))


if __name__ == "__main__":
    main()
