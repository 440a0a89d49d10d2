"""How each command of the package starts: tools/camclass-export and
tools/camclass-fetch-imagenet in the source tree, the installed front ends
(python/installed_tool.py.in) and `python3 -m camclass_export`.

PyTorch and the rest are needed by these tools alone, so a python3 set up to run camclass
(tools/setup.sh run) may lack them: a module missing at import or later (torchvision for
--model, onnx for --onnx, PIL for --calibrate) is one line naming the Debian package that
brings it, exit status 2, never a traceback. Standard library only: it runs before anything
else is imported.
"""

import importlib
import sys

# The modules these tools import that a python3 may lack, and the Debian package of each.
DEBIAN_PACKAGES = {
    "torch": "python3-torch",
    "torchvision": "python3-torchvision",
    "numpy": "python3-numpy",
    "onnx": "python3-onnx",
    "PIL": "python3-pil",
}
EXIT_MISSING = 2  # what is wrong is the python3 it runs with, not what the tool was asked


def missing_package_line(name, e):
    """One line for the ImportError e in command name, or None for a module that is not one
    of DEBIAN_PACKAGES (a bug, not a missing package: its traceback is wanted)."""
    top = (e.name or "").split(".")[0]
    package = DEBIAN_PACKAGES.get(top)
    if package is None:
        return None
    return ("%s: %s: install Debian's %s (apt-get install %s), or run it with a python3 that "
            "has %s" % (name, e, package, package, top))


def run(name, module, **main_args):
    """Imports camclass_export.module and returns its main(**main_args)'s exit status; a
    missing third-party module is one line on stderr and EXIT_MISSING."""
    try:
        tool = importlib.import_module("camclass_export." + module)
        return tool.main(**main_args)
    except ImportError as e:
        line = missing_package_line(name, e)
        if line is None:
            raise
        print(line, file=sys.stderr)
        return EXIT_MISSING
