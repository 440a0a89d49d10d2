#!/usr/bin/python3
"""What running camclass needs, apart from what testing it needs.

    test_setup.py PART MESON SOURCE_ROOT

PART notests: `meson setup -Dtests=false` of the source tree in a temporary folder, with
  PyTorch, torchvision, ONNX, numpy, PIL and skimage made unimportable (a PYTHONPATH folder whose
  packages raise ImportError), succeeds; no command of its build runs Python (every one is the
  compiler, glslc or meson's own), it has no test target, and it still installs every program.
  tools/setup.sh's run list names none of the test-only packages. ~15 s (the configure).
PART run-sh: tools/run.sh (setup in ./build, already done) prints nothing but camclass's own
  output on stdout: `tools/run.sh --version` is exactly "camclass VERSION", and
  `tools/run.sh --headless --input IMAGE --log -` is JSON Lines only, as `| jq .` needs; the
  working directory is kept (a relative --input works from elsewhere). ~3 s.
"""

import json
import os
import re
import shutil
import subprocess
import sys

PART, MESON, SOURCE = sys.argv[1:4]
HIDDEN = ["torch", "torchvision", "onnx", "numpy", "PIL", "skimage"]
TEST_ONLY = ["python3-torch", "python3-torchvision", "python3-onnx", "python3-numpy",
             "python3-pil", "python3-skimage", "qemu-system-x86", "busybox-static", "cpio",
             "clang", "libclang-rt-14-dev", "vulkan-validationlayers", "chromium"]

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, in_tmpdir  # noqa: E402


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 300), **kw)
    return r.returncode, r.stdout, r.stderr


def setup_lists():
    """RUN_PACKAGES and TEST_PACKAGES of tools/setup.sh, as lists."""
    with open(os.path.join(SOURCE, "tools", "setup.sh")) as f:
        text = f.read()
    lists = {}
    for name in ("RUN_PACKAGES", "TEST_PACKAGES"):
        m = re.search(r'^%s="([^"]*)"' % name, text, re.M)
        lists[name] = m.group(1).split() if m else []
    return lists


def part_notests(root):
    hidden = os.path.join(root, "hidden")
    for mod in HIDDEN:
        os.makedirs(os.path.join(hidden, mod))
        with open(os.path.join(hidden, mod, "__init__.py"), "w") as f:
            f.write("raise ImportError('%s is hidden by test_setup.py')\n" % mod)
    env = dict(os.environ, PYTHONPATH=hidden)
    rc, _, err = run(["/usr/bin/python3", "-c", "import torch"], env=env)
    check(rc != 0 and "hidden" in err, "PyTorch is hidden from /usr/bin/python3")
    build = os.path.join(root, "build")
    rc, out, err = run([MESON, "setup", build, SOURCE, "-Dtests=false", "-Dwerror=true",
                        "--buildtype=release"], env=env)
    if not check(rc == 0, "meson setup -Dtests=false without PyTorch (exit %d)" % rc):
        print((out + err)[-3000:])
        return
    rc, out, err = run(["ninja", "-C", build, "-t", "commands"], env=env)
    commands = out.splitlines()
    tools = sorted({os.path.basename(c.split()[0]) for c in commands if c.strip()})
    check(rc == 0 and len(commands) > 20, "ninja -t commands lists the build (%d)" % len(commands))
    python = [c for c in commands if "python" in c or ".py" in c]
    check(python == [], "no build command runs Python (tools: %s)%s"
          % (", ".join(tools), "".join("\n     " + c[:200] for c in python[:3])))
    rc, out, err = run(["ninja", "-C", build, "-t", "targets", "all"], env=env)
    tests = [t for t in out.splitlines() if t.startswith("tests/")]
    check(rc == 0 and tests == [], "no test target is built (%d: %s)" % (len(tests), tests[:3]))
    rc, out, err = run([MESON, "introspect", "--installed", build], env=env)
    installed = {os.path.basename(p) for p in json.loads(out).values()} if rc == 0 else set()
    for p in ["camclass", "camclass-bench", "camclass-capture", "camclass-export",
              "camclass-fetch-imagenet", "camclass.1", "selftest.ccm", "config.json"]:
        check(p in installed, "-Dtests=false still installs %s" % p)
    lists = setup_lists()
    check(len(lists["RUN_PACKAGES"]) > 10 and len(lists["TEST_PACKAGES"]) > 5,
          "tools/setup.sh has RUN_PACKAGES and TEST_PACKAGES")
    both = sorted(set(lists["RUN_PACKAGES"]) & set(TEST_ONLY))
    check(both == [], "tools/setup.sh run installs no test-only package (%s)" % ", ".join(both))


def part_run_sh(root):
    run_sh = os.path.join(SOURCE, "tools", "run.sh")
    rc, out, err = run([run_sh, "--version"], cwd=root)
    check(rc == 0 and re.fullmatch(r"camclass \S+\n", out) is not None,
          "tools/run.sh --version: stdout is camclass's line alone: %r (exit %d) %s"
          % (out[:200], rc, err.strip()[-300:]))
    # A relative --input, from another working directory.
    shutil.copy(os.path.join(SOURCE, "assets", "samples", "bars_320x240.png"), root)
    rc, out, err = run([run_sh, "--headless", "--backend", "cpu", "--threads", "1",
                        "--model", os.path.join(SOURCE, "assets", "models", "selftest.ccm"),
                        "--input", "bars_320x240.png", "--log", "-"], cwd=root)
    lines = out.splitlines()
    try:
        kinds = [json.loads(line).get("event") for line in lines]
    except ValueError as e:
        kinds = ["not JSON: %s" % e]
    check(rc == 0 and len(lines) >= 2 and all(k in ("frame", "summary") for k in kinds),
          "tools/run.sh --headless --log -: stdout is JSON Lines only (%s; exit %d) %s"
          % (kinds[:4], rc, err.strip()[-300:]))


def main():
    parts = {"notests": part_notests, "run-sh": part_run_sh}
    if PART not in parts:
        sys.exit("usage: test_setup.py notests|run-sh MESON SOURCE_ROOT")
    return in_tmpdir("camclass-test-setup-", parts[PART])


if __name__ == "__main__":
    sys.exit(main())
