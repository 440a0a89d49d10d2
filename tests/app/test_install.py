#!/usr/bin/python3
"""The install layout: `meson install --destdir TMP --no-rebuild` of this build, then what the
installed files do, run from another working directory with only the installed files.

    test_install.py PART MESON BUILD_ROOT

PART layout: every program in bin/ (camclass, camclass-bench, camclass-capture, camclass-export,
  camclass-fetch-imagenet, camclass-train) and a man page for each, every page named in a SEE ALSO installed,
  each page rendering without a groff warning (`man --warnings -l`); the models, sample clip
  and the tools' Python modules under <datadir>/camclass, the config at
  <sysconfdir>/camclass/config.json, --serve's page under <datadir>/camclass/www, README.md
  and docs/*.md under <datadir>/doc/camclass; the paths --help and the man page name (the
  guides included) are the ones installed for this prefix; the installed camclass classifies the installed sample with the
  installed model (--selftest, and --headless: stdout only JSON Lines) and finds a model put in
  $XDG_DATA_HOME/camclass/models or ~/.local/share/camclass/models without reinstalling; the
  installed camclass-export names the packages to install when PyTorch is missing.
PART fetch: the installed camclass-fetch-imagenet (with a mobilenet_v2 state_dict of seeded
  random weights, named with its sha256 prefix, over file://) installs into the user's
  $XDG_DATA_HOME/camclass/models by default, and the installed camclass then uses that model.
  Needs PyTorch (~20 s).
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

PART, MESON, BUILD = sys.argv[1:4]  # argv[4]: the built camclass (see meson.build)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, hiding_modules, host_command, in_tmpdir  # noqa: E402


def run(cmd, env=None, cwd=None, timeout=120):
    # An installed program of a cross build (tools/test-arm64.sh) runs through the exe wrapper;
    # the Python front ends and the build machine's tools do not.
    try:
        with open(cmd[0], "rb") as f:
            if f.read(4) == b"\x7fELF" and os.access(cmd[0], os.X_OK) and "/" in cmd[0]:
                cmd = host_command(cmd[0]) + list(cmd[1:])
    except OSError:
        pass
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd,
                           timeout=timeout)
    except OSError as e:  # a program that was not installed
        return 127, "", "%s: %s" % (cmd[0], e.strerror)
    return r.returncode, r.stdout, r.stderr


def options():
    """meson's own idea of the install dirs for this build: {name: value}."""
    rc, out, err = run([MESON, "introspect", "--buildoptions", BUILD])
    if rc != 0:
        sys.exit("FAIL meson introspect --buildoptions: %s" % err.strip())
    return {o["name"]: o["value"] for o in json.loads(out)}


def clean_env(home, **extra):
    """An environment without the variables that change where camclass looks."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CAMCLASS_DATADIR", "XDG_DATA_HOME", "PYTHONPATH", "LD_LIBRARY_PATH")}
    env["HOME"] = home
    env["XDG_CACHE_HOME"] = os.path.join(home, ".cache")  # backend-choice.txt, if any
    env.update(extra)
    return env


def install(root):
    dest = os.path.join(root, "dest")
    rc, out, err = run([MESON, "install", "-C", BUILD, "--destdir", dest, "--no-rebuild",
                        "--quiet"], timeout=300)
    if not check(rc == 0, "meson install --destdir (exit %d)" % rc):
        sys.exit("FAIL meson install: %s" % (err or out).strip()[-2000:])
    o = options()
    at = lambda *p: os.path.join(dest + o["prefix"], *p)  # noqa: E731 (prefix is absolute)
    dirs = {
        "bin": at(o["bindir"]),
        "data": at(o["datadir"], "camclass"),
        "man1": at(o["mandir"], "man1"),
        "doc": at(o["datadir"], "doc", "camclass"),
        # with --prefix=/usr meson's sysconfdir is /etc: absolute, so not under the prefix
        "config": dest + os.path.join(o["prefix"], o["sysconfdir"], "camclass", "config.json"),
    }
    paths = {  # the same, on the installed system (no destdir)
        "data": os.path.join(o["prefix"], o["datadir"], "camclass"),
        "config": os.path.join(o["prefix"], o["sysconfdir"], "camclass", "config.json"),
        "bin": os.path.join(o["prefix"], o["bindir"]),
        "doc": os.path.join(o["prefix"], o["datadir"], "doc", "camclass"),
    }
    return dest, dirs, paths


ETC = re.compile(r"(?<![\w.-])/etc/camclass")  # /etc/camclass, not /usr/local/etc/camclass
PROGRAMS = ["camclass", "camclass-bench", "camclass-capture", "camclass-export",
            "camclass-fetch-imagenet", "camclass-train"]
MODULES = ["__init__.py", "__main__.py", "export.py", "ccm_bundle.py", "ccm_lower.py",
           "ccm_calibrate.py", "ccm_torchquant.py", "ccm_onnx.py", "fetch_imagenet.py",
           "preprocess.py", "launch.py", "checkpoint.py", "ccm_format.py", "ccm_graph.py",
           "ccm_write.py", "mobilenet_v2_builder.py", "imagenet_classes.txt"]


def check_layout(dirs, paths):
    for p in PROGRAMS:
        exe = os.path.join(dirs["bin"], p)
        check(os.path.isfile(exe) and os.access(exe, os.X_OK), "bin/%s installed, executable" % p)
        page = os.path.join(dirs["man1"], p + ".1")
        check(os.path.isfile(page), "man page %s.1 installed" % p)
    for m in ["selftest.ccm", "selftest-int8.ccm"]:
        check(os.path.isfile(os.path.join(dirs["data"], "models", m)), "models/%s installed" % m)
    frames = os.path.join(dirs["data"], "samples", "selftest")
    check(os.path.isdir(frames) and len(os.listdir(frames)) > 10, "samples/selftest installed")
    for m in MODULES:
        check(os.path.isfile(os.path.join(dirs["data"], "python", "camclass_export", m)),
              "python/camclass_export/%s installed" % m)
    check(os.path.isfile(dirs["config"]), "config installed as %s" % paths["config"])
    check(os.path.isfile(os.path.join(dirs["data"], "www", "index.html")),
          "www/index.html (--serve's page) installed")
    # The guides, as in the source tree: README.md with docs/ beside it (their relative links).
    docs = os.path.join(dirs["doc"], "docs")
    for d in ["README.md", "docs/SERVE.md", "docs/RELIABILITY.md", "docs/LOG_FORMAT.md",
              "docs/MODEL_FORMAT.md", "docs/CLI.md", "docs/RASPBERRY_PI.md"]:
        check(os.path.isfile(os.path.join(dirs["doc"], d)), "%s installed in %s" % (d, paths["doc"]))
    if os.path.isdir(docs):
        check(not [f for f in os.listdir(docs) if not f.endswith(".md")],
              "only guides in %s/docs: %s" % (paths["doc"], sorted(os.listdir(docs))))
    # The installed front ends point at the installed modules (by their real path).
    for p in ["camclass-export", "camclass-fetch-imagenet"]:
        if not os.path.isfile(os.path.join(dirs["bin"], p)):
            continue  # failed above
        with open(os.path.join(dirs["bin"], p)) as f:
            text = f.read()
        check(text.startswith("#!/usr/bin/python3\n"), "%s runs Debian's /usr/bin/python3" % p)
        check('places = [os.path.join(here, "..", "share", "camclass", "python"), "%s"]'
              % os.path.join(paths["data"], "python") in text,
              "%s looks for its modules in %s" % (p, os.path.join(paths["data"], "python")))


def check_man(dirs, paths):
    pages = sorted(os.listdir(dirs["man1"]))
    for page in pages:
        path = os.path.join(dirs["man1"], page)
        env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8")
        rc, out, err = run(["man", "--warnings", "-l", path], env=env)
        check(rc == 0 and err == "" and len(out) > 500,
              "man --warnings -l %s: no warning (exit %d) %s" % (page, rc, err.strip()[:300]))
        with open(path) as f:
            text = f.read()
        see = text.split(".SH SEE ALSO", 1)[1] if ".SH SEE ALSO" in text else ""
        named = re.findall(r"\.BR (camclass[\\\-a-z]*) \(1\)", see)
        check(named != [], "%s has a SEE ALSO naming camclass pages" % page)
        for n in named:
            n = n.replace("\\-", "-")
            check(n + ".1" in pages, "%s: SEE ALSO %s(1) is installed" % (page, n))
        check("@" not in re.sub(r"camclass@[.a-z%]", "", text),
              "%s: no @placeholder@ left" % page)
    with open(os.path.join(dirs["man1"], "camclass.1")) as f:
        text = f.read().replace("\\-", "-")
    check(paths["config"] in text, "camclass(1) names the config %s" % paths["config"])
    check(paths["data"] + "/models/" in text, "camclass(1) names %s/models/" % paths["data"])
    # Every guide the page names is there, by its installed path; none by a source-tree path.
    named = re.findall(re.escape(paths["doc"]) + r"/([\w/]+\.md)", text)
    check(len(named) >= 4, "camclass(1) names the guides in %s: %s" % (paths["doc"], named))
    for n in named:
        check(os.path.isfile(os.path.join(dirs["doc"], n)),
              "camclass(1) names %s/%s, which is installed" % (paths["doc"], n))
    check(not re.search(r"(?<![\w/])docs/", text), "camclass(1) names no source-tree docs/ path")
    check(not ETC.search(text) or paths["config"].startswith("/etc/"),
          "camclass(1) names no /etc/camclass when the prefix's config is elsewhere")


def check_help(dirs, paths, home):
    camclass = os.path.join(dirs["bin"], "camclass")
    rc, out, err = run([camclass, "--help"], env=clean_env(home), cwd=home)
    flat = " ".join(out.split())
    check(rc == 0 and paths["config"] in flat,
          "camclass --help names the config it reads, %s" % paths["config"])
    check(paths["data"] in flat, "camclass --help names the data dir %s" % paths["data"])
    check(paths["doc"] + "/docs " in flat and "SERVE.md" in flat
          and os.path.isfile(os.path.join(dirs["doc"], "docs", "SERVE.md")),
          "camclass --help names the installed guides, %s/docs" % paths["doc"])
    check(not ETC.search(flat) or paths["config"].startswith("/etc/"),
          "camclass --help names no /etc/camclass for this prefix")


def model_line(err):
    m = re.search(r"^camclass: model (\S+)", err, re.M)
    return m.group(1) if m else None


def check_runs(dirs, home):
    camclass = os.path.join(dirs["bin"], "camclass")
    models = os.path.realpath(os.path.join(dirs["data"], "models"))
    # --selftest: the default model and the default sample, both found beside the program.
    rc, out, err = run([camclass, "--selftest", "--backend", "cpu", "--threads", "1"],
                       env=clean_env(home), cwd=home)
    check(rc == 0, "installed camclass --selftest passes (exit %d) %s" % (rc, err.strip()[-300:]))
    check(model_line(err) == os.path.join(models, "selftest.ccm"),
          "--selftest uses the installed model (%s)" % model_line(err))
    check("tools/" not in err and "assets/" not in err,
          "no message names the source tree: %s" % err.strip()[-300:])
    # A model camclass cannot read: the way out names the installed exporter, and no source
    # path but the source tree's command, named as such.
    for name in ("model.onnx", "model.pth", "model.ccm"):
        with open(os.path.join(home, name), "w") as f:
            f.write("not a bundle\n")
        rc, out, err = run([camclass, "--headless", "--model", name, "--input", home],
                           env=clean_env(home), cwd=home)
        err = err.replace("in camclass's source tree: tools/camclass-export", "")
        check(rc == 2 and "camclass-export" in err and not re.search(r"tools/|docs/|assets/", err),
              "--model %s: exit 2, names camclass-export, no source path (exit %d): %s"
              % (name, rc, err.strip()[-300:]))
    # --headless on the installed sample: stdout is the log and nothing else.
    frames = os.path.join(dirs["data"], "samples", "selftest")
    rc, out, err = run([camclass, "--headless", "--backend", "cpu", "--threads", "1",
                        "--input", frames, "--log", "-"], env=clean_env(home), cwd=home)
    lines = out.splitlines()
    try:
        objs = [json.loads(line) for line in lines]
    except ValueError:
        objs = []
    check(rc == 0 and len(objs) == len(lines) and len(objs) >= 50,
          "installed camclass --headless --log -: %d JSON lines on stdout (exit %d)"
          % (len(objs), rc))
    check("tools/camclass-fetch-imagenet" not in err and "camclass-fetch-imagenet" in err,
          "the self-test model's notice names the installed fetch command")
    # A model put into the user's data folder later is found, without reinstalling: through
    # $XDG_DATA_HOME, through ~/.local/share when it is unset, and a relative one is ignored.
    image = os.path.join(frames, sorted(os.listdir(frames))[0])
    src = os.path.join(models, "selftest.ccm")
    for how, xdg in (("XDG_DATA_HOME", os.path.join(home, "xdg")),
                     ("~/.local/share", None)):
        user = os.path.join(xdg or os.path.join(home, ".local", "share"), "camclass", "models")
        os.makedirs(user, exist_ok=True)
        mine = os.path.join(user, "mobilenet_v2-imagenet.ccm")
        shutil.copy(src, mine)
        env = clean_env(home, **({"XDG_DATA_HOME": xdg} if xdg else {}))
        rc, out, err = run([camclass, "--headless", "--backend", "cpu", "--input", image,
                            "--log", "-"], env=env, cwd=home)
        check(rc == 0 and model_line(err) == os.path.realpath(mine),
              "a model in %s is found: %s (exit %d)" % (how, model_line(err), rc))
        os.unlink(mine)
    env = clean_env(home, XDG_DATA_HOME="xdg")  # relative: ignored, as the spec says
    os.makedirs(os.path.join(home, "xdg", "camclass", "models"), exist_ok=True)
    shutil.copy(src, os.path.join(home, "xdg", "camclass", "models", "mobilenet_v2-imagenet.ccm"))
    rc, out, err = run([camclass, "--headless", "--backend", "cpu", "--input", image, "--log",
                        "-"], env=env, cwd=home)
    check(model_line(err) == os.path.join(models, "selftest.ccm"),
          "a relative XDG_DATA_HOME is ignored: %s" % model_line(err))


def check_export_needs(dirs, root, home):
    """camclass-export without PyTorch: one line naming the package, exit 2."""
    env = hiding_modules(os.path.join(root, "no-torch"), ["torch"], clean_env(home))
    exe = os.path.join(dirs["bin"], "camclass-export")
    rc, out, err = run([exe, "--help"], env=env, cwd=home)
    check(rc == 2 and len(err.splitlines()) == 1 and "python3-torch" in err
          and err.startswith("camclass-export: No module named 'torch': "),
          "camclass-export without PyTorch: one line naming python3-torch, exit 2 (exit %d): %s"
          % (rc, err.strip()[:300]))
    rc, out, err = run([exe, "--help"], env=clean_env(home), cwd=home)
    check(rc == 0 and out.startswith("usage: camclass-export"),
          "installed camclass-export --help (exit %d) %s" % (rc, err.strip()[-300:]))


def check_fetch(dirs, root, home):
    sys.path.insert(0, os.path.join(dirs["data"], "python"))  # the installed modules
    import torch
    from camclass_export import export as ce
    torch.set_num_threads(1)
    served = os.path.join(root, "served")
    os.makedirs(served)
    model = ce.build_torchvision_model("mobilenet_v2", 1000, random_seed=11)
    src = os.path.join(served, "src.pth")
    torch.save(model.state_dict(), src)
    with open(src, "rb") as f:
        prefix = hashlib.sha256(f.read()).hexdigest()[:8]
    pth = os.path.join(served, "mobilenet_v2-%s.pth" % prefix)
    os.rename(src, pth)
    xdg = os.path.join(home, "data")
    env = clean_env(home, XDG_DATA_HOME=xdg)
    env = {k: v for k, v in env.items() if not k.lower().endswith("_proxy")}
    rc, out, err = run([os.path.join(dirs["bin"], "camclass-fetch-imagenet"), "--url",
                        "file://" + pth], env=env, cwd=home, timeout=300)
    want = os.path.join(xdg, "camclass", "models", "mobilenet_v2-imagenet.ccm")
    check(rc == 0 and os.path.isfile(want),
          "installed camclass-fetch-imagenet installs %s (exit %d) %s"
          % (want, rc, (err or out).strip()[-300:]))
    frames = os.path.join(dirs["data"], "samples", "selftest")
    image = os.path.join(frames, sorted(os.listdir(frames))[0])
    rc, out, err = run([os.path.join(dirs["bin"], "camclass"), "--headless", "--backend", "cpu",
                        "--input", image, "--log", "-"], env=env, cwd=home)
    check(rc == 0 and model_line(err) == os.path.realpath(want) and len(out.splitlines()) >= 1,
          "the installed camclass uses the fetched model: %s (exit %d)" % (model_line(err), rc))


def parts(root):
    dest, dirs, paths = install(root)
    home = os.path.join(root, "home")  # an empty home, also the working directory
    os.makedirs(home)
    if PART == "layout":
        check_layout(dirs, paths)
        check_man(dirs, paths)
        check_help(dirs, paths, home)
        check_runs(dirs, home)
        check_export_needs(dirs, root, home)
    elif PART == "fetch":
        check_fetch(dirs, root, home)
    else:
        sys.exit("usage: test_install.py layout|fetch MESON BUILD_ROOT")


def main():
    return in_tmpdir("camclass-test-install-", parts)


if __name__ == "__main__":
    sys.exit(main())
