#!/usr/bin/python3
"""camclass_export.checkpoint: a .pth read with the standard library, against torch.load.

    test_checkpoint.py

A torchvision mobilenet_v2 with seeded random weights and BatchNorm statistics, plus tensors
that reach the other paths (a transposed view, a view at an offset into a shared storage,
float16, bool, an empty tensor), saved here by torch.save in both its formats (zip, and the
legacy stream torchvision's published weights use). Checked:
- read() with numpy: the same names in the same order, and every tensor equal to torch.load's
  (dtype, shape, every value);
- read() in a python3 where torch and numpy cannot be imported (checks.hiding_modules):
  every tensor's values, bytes for bytes, equal torch.load's;
- a pickle that names os.system is refused with one line naming it, and the command does not
  run; a truncated legacy file and a file that is no checkpoint are one-line CheckpointErrors.
"""

import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import torch

from camclass_export import checkpoint
from camclass_export import export as ce
from checks import check, hiding_modules, summary

HIDDEN = ("torch", "numpy")
# The child: read the checkpoint without torch and numpy, write {name: (shape, format,
# values bytes)} as a plain pickle.
CHILD = """
import pickle, sys
from camclass_export import checkpoint
got = checkpoint.read(sys.argv[1])
assert "torch" not in sys.modules and "numpy" not in sys.modules
with open(sys.argv[2], "wb") as f:
    pickle.dump({k: (t.shape, t.format, t.values.tobytes()) for k, t in got.items()}, f)
"""


def state_dict():
    torch.manual_seed(3)
    sd = ce.build_torchvision_model("mobilenet_v2", 1000, random_seed=5).state_dict()
    x = torch.randn(4, 6)
    sd["extra.transposed"] = x.t()          # strides (1, 6): not contiguous
    sd["extra.row"] = x[2]                  # offset 12 into x's storage, shared
    sd["extra.half"] = x.half()
    sd["extra.bool"] = x > 0
    sd["extra.empty"] = torch.zeros(0, 3)
    return sd


def check_with_numpy(path, ref, what):
    got = checkpoint.read(path)
    check(list(got) == list(ref), "%s: the same %d names in order" % (what, len(ref)))
    bad = [k for k in ref if k in got and not (
        isinstance(got[k], np.ndarray) and got[k].dtype == ref[k].numpy().dtype
        and got[k].shape == tuple(ref[k].shape) and np.array_equal(got[k], ref[k].numpy()))]
    check(not bad, "%s: every tensor equals torch.load's (dtype, shape, values): %s"
          % (what, bad[:5]))


def as_stored(t):
    """torch.load's tensor as the reader without numpy holds it: (shape, format, bytes)."""
    if t.dtype == torch.float16:
        t = t.float()
    elif t.dtype == torch.bool:
        t = t.to(torch.uint8)
    a = t.contiguous().numpy()
    return tuple(t.shape), a.astype(a.dtype.newbyteorder("=")).tobytes()


def check_without_torch(path, ref, what, tmp):
    env = hiding_modules(os.path.join(tmp, "hidden"), HIDDEN)
    out = os.path.join(tmp, "child.pkl")
    r = subprocess.run([sys.executable, "-c", CHILD, path, out], env=env, capture_output=True,
                       text=True, timeout=120)
    if not check(r.returncode == 0, "%s without torch and numpy: read (exit %d) %s"
                 % (what, r.returncode, r.stderr.strip()[-400:])):
        return
    with open(out, "rb") as f:
        got = pickle.load(f)
    check(list(got) == list(ref), "%s without numpy: the same names in order" % what)
    bad = [k for k in ref if k in got and (got[k][0], got[k][2]) != as_stored(ref[k])]
    check(not bad, "%s without torch and numpy: every tensor's shape and bytes equal "
          "torch.load's: %s" % (what, bad[:5]))


class Evil:
    def __reduce__(self):
        return (os.system, ("touch %s" % MARKER,))


MARKER = os.path.join(tempfile.gettempdir(), "camclass-test-checkpoint-ran-%d" % os.getpid())


def expect_error(path, words, what):
    try:
        checkpoint.read(path)
    except checkpoint.CheckpointError as e:
        msg = str(e)
        check(all(w in msg for w in words) and "\n" not in msg,
              "%s: one line naming %s: %s" % (what, words, msg))
        return
    check(False, "%s: refused" % what)


def check_refusals(zip_path, legacy_path, tmp):
    evil = os.path.join(tmp, "evil.pth")
    with zipfile.ZipFile(zip_path) as z, zipfile.ZipFile(evil, "w") as w:
        for info in z.infolist():
            data = z.read(info)
            if info.filename.endswith("/data.pkl"):
                data = pickle.dumps({"weight": Evil()}, protocol=2)
            w.writestr(info, data)
    expect_error(evil, ["system", "refused"], "a pickle naming os.system")
    check(not os.path.exists(MARKER), "the command in the pickle did not run")
    cut = os.path.join(tmp, "cut.pth")
    with open(legacy_path, "rb") as f, open(cut, "wb") as g:
        g.write(f.read()[:-1000])
    expect_error(cut, ["truncated"], "a truncated legacy checkpoint")
    junk = os.path.join(tmp, "junk.pth")
    with open(junk, "wb") as f:
        f.write(b"this is not a checkpoint\n" * 10)
    expect_error(junk, ["PyTorch"], "a text file")


def main():
    torch.set_num_threads(1)
    tmp = tempfile.mkdtemp(prefix="camclass-test-checkpoint-")
    try:
        sd = state_dict()
        paths = {}
        for what, zipped in (("zip", True), ("legacy", False)):
            paths[what] = os.path.join(tmp, what + ".pth")
            torch.save(sd, paths[what], _use_new_zipfile_serialization=zipped)
            ref = torch.load(paths[what])
            check_with_numpy(paths[what], ref, what)
            check_without_torch(paths[what], ref, what, tmp)
        check_refusals(paths["zip"], paths["legacy"], tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if os.path.exists(MARKER):
            os.unlink(MARKER)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
