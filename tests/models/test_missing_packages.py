#!/usr/bin/python3
"""The model tools with a python3 that lacks a package they need (checks.hiding_modules: the
package cannot be imported, as on a system set up only to run camclass): one line on stderr
naming the Debian package to install, exit status 2, no traceback (camclass_export.launch).

    test_missing_packages.py

- tools/camclass-export without torch, without numpy, and `python3 -m camclass_export`
  without torch: one line each, naming python3-torch / python3-numpy;
- without onnx, tools/camclass-export still exports a module (python3-onnx is for --onnx
  only), and --onnx is one line naming python3-onnx, nothing written;
- tools/camclass-fetch-imagenet --help without torch: its usage (it never needs torch:
  tests/models/test_fetch_imagenet.py installs a bundle without it); without numpy, an install
  (from a file:// URL, its hash checked) is one line naming python3-numpy, nothing installed.
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

from checks import check, hiding_modules, summary

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
EXPORT = os.path.join(ROOT, "tools", "camclass-export")
FETCH = os.path.join(ROOT, "tools", "camclass-fetch-imagenet")
SMALL_NET = os.path.join(ROOT, "tests", "engine", "small_net.py") + ":SmallNet"


def run(cmd, env, cwd):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    return r.returncode, r.stdout, r.stderr


def check_one_line(cmd, env, cwd, prefix, package, what):
    rc, out, err = run(cmd, env, cwd)
    check(rc == 2 and len(err.splitlines()) == 1 and err.startswith(prefix)
          and package in err and "Traceback" not in err,
          "%s: exit 2, one line naming %s (exit %d): %s" % (what, package, rc, err[-600:]))


def main():
    tmp = tempfile.mkdtemp(prefix="camclass-test-missing-")
    try:
        py = [sys.executable]
        no_torch = hiding_modules(os.path.join(tmp, "no-torch"), ["torch"])
        no_numpy = hiding_modules(os.path.join(tmp, "no-numpy"), ["numpy"])
        no_onnx = hiding_modules(os.path.join(tmp, "no-onnx"), ["onnx"])
        check_one_line(py + [EXPORT, "--help"], no_torch, tmp,
                       "camclass-export: No module named 'torch': ", "python3-torch",
                       "tools/camclass-export without torch")
        check_one_line(py + [EXPORT, "--model", "mobilenet_v2", "-o", "x.ccm"], no_numpy, tmp,
                       "camclass-export: No module named 'numpy': ", "python3-numpy",
                       "tools/camclass-export without numpy")
        check_one_line(py + ["-m", "camclass_export", "--help"], no_torch, tmp,
                       "python3 -m camclass_export: No module named 'torch': ", "python3-torch",
                       "python3 -m camclass_export without torch")
        out = os.path.join(tmp, "small.ccm")
        rc, _, err = run(py + [EXPORT, "--module", SMALL_NET, "--random-seed", "2",
                               "--input-size", "13", "-o", out], no_onnx, tmp)
        check(rc == 0 and os.path.isfile(out),
              "tools/camclass-export without onnx exports a module (exit %d): %s"
              % (rc, err[-600:]))
        with open(os.path.join(tmp, "model.onnx"), "wb") as f:
            f.write(b"\x08\x07")
        check_one_line(py + [EXPORT, "--onnx", "model.onnx", "-o", "m.ccm"], no_onnx, tmp,
                       "camclass-export: No module named 'onnx': ", "python3-onnx",
                       "tools/camclass-export --onnx without onnx")
        check(not os.path.exists(os.path.join(tmp, "m.ccm")), "--onnx without onnx: no bundle")
        rc, out_text, err = run(py + [FETCH, "--help"], no_torch, tmp)
        check(rc == 0 and out_text.startswith("usage: camclass-fetch-imagenet"),
              "tools/camclass-fetch-imagenet --help without torch (exit %d): %s"
              % (rc, err[-600:]))
        pth = os.path.join(tmp, "mobilenet_v2-%s.pth" % hashlib.sha256(b"x").hexdigest()[:8])
        with open(pth, "wb") as f:
            f.write(b"x")
        dest = os.path.join(tmp, "models")
        check_one_line(py + [FETCH, "--url", "file://" + pth, "--dest", dest], no_numpy, tmp,
                       "camclass-fetch-imagenet: No module named 'numpy': ", "python3-numpy",
                       "tools/camclass-fetch-imagenet without numpy")
        check(not os.path.exists(dest), "camclass-fetch-imagenet without numpy: nothing installed")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
