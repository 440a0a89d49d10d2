"""The Python side reads a bundle written by C (engine/bundle/bundle_write.c), called by
test_bundle_write.c: camclass_export.ccm_bundle's read_bundle and run_graph on it, against the C ref
backend's output on the same input.

Usage: check_written_bundle.py BUNDLE INPUT.f32 OUTPUT.f32
INPUT.f32 / OUTPUT.f32: the input and the ref backend's output as raw little-endian f32.
Checks: every entry stored, every data reference 64-byte aligned and inside its entry with the
size its dtype and shape take, one label per class, and run_graph's output (float64, the
format's op table) within 1e-5 x max(1, max |ref|) of C's. Prints one line; exit 1 on failure.
"""

import os
import sys
import zipfile

import numpy as np

from camclass_export import ccm_bundle

TOLERANCE = 1e-5


def layout_errors(path, manifest):
    """What breaks docs/MODEL_FORMAT.md's rules for entries and data references."""
    errors = []
    with zipfile.ZipFile(path) as z:
        infos = {i.filename: i for i in z.infolist()}
    for name, info in infos.items():
        if info.compress_type != zipfile.ZIP_STORED:
            errors.append("entry %s is compressed" % name)
    for t in manifest["tensors"]:
        refs = [("data", t.get("data"), 1 if t["dtype"] == "i8" else 4, int(np.prod(t["shape"])))]
        if t["dtype"] == "i8":
            refs.append(("scales", t["quant"]["scales"], 4, t["shape"][0]))
        for key, ref, elem, count in refs:
            if ref is None:
                continue
            if ref["offset"] % ccm_bundle.ALIGN:
                errors.append("%s %s offset %d is not 64-aligned"
                              % (t["name"], key, ref["offset"]))
            if ref["size"] != elem * count:
                errors.append("%s %s size %d, want %d" % (t["name"], key, ref["size"], elem * count))
            if ref["offset"] + ref["size"] > infos[ref["entry"]].file_size:
                errors.append("%s %s lies outside %s" % (t["name"], key, ref["entry"]))
    return errors


def main():
    path, input_path, output_path = sys.argv[1:4]
    manifest, consts, labels = ccm_bundle.read_bundle(path)
    errors = layout_errors(path, manifest)
    if len(labels) != manifest["output"]["classes"]:
        errors.append("%d labels for %d classes" % (len(labels), manifest["output"]["classes"]))
    x = np.fromfile(input_path, dtype="<f4").reshape(manifest["input"]["shape"])
    ref = np.fromfile(output_path, dtype="<f4").astype(np.float64)
    got = ccm_bundle.run_graph(manifest, consts, x).ravel()
    scale = max(1.0, float(np.abs(ref).max()))
    diff = float(np.abs(got - ref).max()) if got.shape == ref.shape else float("inf")
    if not diff <= TOLERANCE * scale:  # also catches NaN
        errors.append("run_graph differs from C's ref output by %.3g (tolerance %.3g)"
                      % (diff, TOLERANCE * scale))
    if errors:
        print("check_written_bundle %s: %s" % (path, "; ".join(errors)))
        return 1
    print("check_written_bundle %s: %d tensors, %d nodes, max |diff| %.3g x max(1, |ref|)"
          % (os.path.basename(path), len(manifest["tensors"]), len(manifest["graph"]),
             diff / scale))
    return 0


if __name__ == "__main__":
    sys.exit(main())
