#!/usr/bin/python3
"""camclass's exit status and its one line on stderr for every kind of bad command line:
unknown flags, bad values, unreadable or unusable files (model, input, config, log). Each must
end with exit status 2 and exactly one line, "camclass: ...", naming the problem. A camera that
is not there is exit 1 (the systemd unit retries 1 but not 2), given as a path or as an index
(--camera N is /dev/videoN). --help and --version exit 0 with their text on stdout.

    test_cli_exit.py CAMCLASS MODEL
"""
import functools
import json
import os
import socket
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import bound, check, host_command, summary  # noqa: E402
import checks  # noqa: E402

run = functools.partial(checks.run, timeout=60)


def main():
    exe, model = sys.argv[1], os.path.abspath(sys.argv[2])
    tmp = tempfile.mkdtemp(prefix="camclass-cli-")
    text = os.path.join(tmp, "notes.txt")
    with open(text, "w") as f:
        f.write("not a model, not an image\n")
    bad_json = os.path.join(tmp, "bad.json")
    with open(bad_json, "w") as f:
        f.write('{"top-k": 3,\n')
    bad_key = os.path.join(tmp, "key.json")
    with open(bad_key, "w") as f:
        f.write('{"topk": 3}\n')
    unreadable = os.path.join(tmp, "secret.json")
    with open(unreadable, "w") as f:
        f.write("{}\n")
    os.chmod(unreadable, 0)
    empty_dir = os.path.join(tmp, "empty")
    os.mkdir(empty_dir)
    y4m = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets",
                       "samples", "moving_128x96.y4m")
    common = ["--model", model, "--backend", "cpu", "--headless"]
    with zipfile.ZipFile(model) as z:
        classes = json.loads(z.read("manifest.json"))["output"]["classes"]
    for foreign in ("net.onnx", "net.pth"):  # other frameworks' files: the line names the tool
        with open(os.path.join(tmp, foreign), "wb") as f:
            f.write(b"PK\x03\x04 not a camclass bundle")
    good_labels = os.path.join(tmp, "labels.txt")
    with open(good_labels, "w") as f:
        f.write("".join("my label %d\n" % i for i in range(classes)))
    short_labels = os.path.join(tmp, "short.txt")
    with open(short_labels, "w") as f:
        f.write("one\ntwo\n")
    blank_labels = os.path.join(tmp, "blank.txt")
    with open(blank_labels, "w") as f:
        f.write("one\n\nthree\n")

    # A port something listens on: --serve on it is refused before the model loads.
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    busy_port = busy.getsockname()[1]
    cases = [
        # (arguments, text the one line must contain)
        # Paths and ports are checked before the model loads (no "model" line first).
        (common + ["--input", y4m, "--log", "/nonexistent-dir/x.jsonl"],
         "camclass: --log /nonexistent-dir/x.jsonl: the folder /nonexistent-dir: No such file or "
         "directory; make it first"),
        (common + ["--input", y4m, "--log", empty_dir], "--log %s: that is a folder" % empty_dir),
        (common + ["--input", y4m, "--output", "/nonexistent-dir/x.mp4"],
         "camclass: --output /nonexistent-dir/x.mp4: the folder /nonexistent-dir"),
        (["--model", model, "--backend", "cpu", "--screenshot-dir", "/nonexistent-dir"],
         "camclass: --screenshot-dir: the folder /nonexistent-dir"),
        (common + ["--serve", str(busy_port)], "--serve %d: the port is in use" % busy_port),
        (common + ["--serve", "10.254.254.254:0", "--serve-token", "t"],
         "this machine has no such address"),
        (["--bogus"], "camclass: unknown option --bogus (see --help)"),
        (["--camera"], "camclass: --camera needs a value"),
        (["video0"], "camclass: cannot read input video0: No such file or directory"),
        (["--top-k", "0"], "camclass: --top-k takes a whole number from 1 to 16, not \"0\""),
        (["--top-k", "abc"], "not \"abc\""),
        (["--fps", "-5"], "camclass: --fps takes a number from 0.1 to 1000"),
        (["--threshold", "2"], "camclass: --threshold takes a number from 0 to 1, not \"2\""),
        (["--size", "huge"], "camclass: --size takes WIDTHxHEIGHT"),
        (["--backend", "opengl"], "camclass: --backend takes auto, vulkan, cpu or ref, not \"opengl\""),
        (["--device", "x"], "camclass: --device takes a whole number"),
        (["--device", "/dev/video0"], "(the Vulkan device, see --list-devices; a camera is "
                                      "--camera PATH)"),
        (["--headless=1"], "camclass: --headless takes no value"),
        (["--camera", "/dev/video0", "--input", y4m], "exclude each other"),
        (["--model", "/nonexistent/m.ccm", "--input", y4m],
         "camclass: cannot read model /nonexistent/m.ccm: No such file or directory"),
        (["--model", text, "--input", y4m, "--backend", "cpu", "--headless"],
         "camclass: bundle " + text),
        (["--model", os.path.join(tmp, "net.onnx"), "--input", y4m, "--headless"],
         "an ONNX model; convert it with camclass-export --onnx FILE (camclass-export(1); "
         "in camclass's source tree: tools/camclass-export)"),
        (["--model", os.path.join(tmp, "net.pth"), "--input", y4m, "--headless"],
         "a PyTorch file; convert it with camclass-export"),
        (common + ["--input", "/nonexistent/clip.y4m"],
         "camclass: cannot read input /nonexistent/clip.y4m: No such file or directory"),
        (common + ["--input", text], text),
        (common + ["--input", empty_dir], empty_dir),
        (common + ["--config", "/nonexistent/c.json"],
         "camclass: cannot read config /nonexistent/c.json: No such file or directory"),
        (common + ["--config", bad_json], "camclass: config %s: not valid JSON" % bad_json),
        (common + ["--config", bad_key], "camclass: config %s: unknown key \"topk\"" % bad_key),
        (common + ["--input", y4m, "--log", "/nonexistent/dir/log.jsonl"],
         "/nonexistent/dir/log.jsonl"),
        (common + ["--input", y4m, "--labels", short_labels],
         "camclass: labels file %s has 2 labels for a model with %d classes; give one label "
         "per line, %d lines" % (short_labels, classes, classes)),
        (common + ["--input", y4m, "--labels", blank_labels],
         "camclass: labels file %s line 2 is empty" % blank_labels),
        (common + ["--input", y4m, "--labels", "/nonexistent/labels.txt"],
         "camclass: labels file /nonexistent/labels.txt: No such file or directory"),
        (common + ["--input", y4m, "--log-mode", "sometimes"],
         "camclass: --log-mode takes every or detections, not \"sometimes\""),
        # --gpio: the spec's form, then the chip (none here has this name), before the model.
        (common + ["--input", y4m, "--gpio", "cat"],
         "camclass: --gpio \"cat\": no '=' after the label; give LABEL=CHIP:LINE, e.g. "
         "cat=gpiochip0:17"),
        (common + ["--input", y4m, "--gpio", "cat=camclass-no-such-chip:17"],
         "camclass: --gpio cat=camclass-no-such-chip:17: no GPIO chip "
         "\"camclass-no-such-chip\""),
        (common + ["--input", y4m, "--gpio-active-low"],
         "camclass: --gpio-active-low is about --gpio lines"),
    ]
    if os.geteuid() != 0:  # root reads mode-0 files
        cases.append((common + ["--config", unreadable],
                      "camclass: cannot read config %s: Permission denied" % unreadable))

    # An input whose first frame cannot be read is unusable (exit 2), like one that does not
    # open: a y4m cut inside its first frame, a corrupt PNG.
    with open(y4m, "rb") as f:
        clip = f.read()
    cut_y4m = os.path.join(tmp, "cut.y4m")
    with open(cut_y4m, "wb") as f:
        f.write(clip[:clip.index(b"FRAME") + 1000])
    png = os.path.join(os.path.dirname(y4m), "bars_320x240.png")
    with open(png, "rb") as f:
        image = f.read()
    cut_png = os.path.join(tmp, "cut.png")
    with open(cut_png, "wb") as f:
        f.write(image[:len(image) // 2])
    cases += [
        (common + ["--input", cut_y4m],
         "camclass: %s: truncated y4m: frame 0 has" % cut_y4m),
        (common + ["--input", cut_png],
         "camclass: %s: corrupt or truncated PNG" % cut_png),
    ]

    # Paths that are not files: refused at once, a FIFO without waiting for a writer (the config
    # is read before the signal handlers exist: a blocked open could only be killed).
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    cases += [
        (common + ["--config", fifo],
         "camclass: config %s is a FIFO, not a regular file; give the path of a JSON file" % fifo),
        (common + ["--config", tmp],
         "camclass: config %s is a directory, not a regular file; give the path of a JSON file"
         % tmp),
        (common + ["--config", "/dev/null"], "config /dev/null is a character device"),
        (["--model", tmp, "--input", y4m, "--backend", "cpu", "--headless"],
         "camclass: bundle %s is a directory; give the path of a .ccm bundle" % tmp),
        (common + ["--input", y4m, "--labels", fifo],
         "camclass: labels file %s is a FIFO, not a regular file; give a text file "
         "with one label per line" % fifo),
        (common + ["--input", y4m, "--labels", tmp],
         "camclass: labels file %s is a directory, not a regular file" % tmp),
        (["--model", fifo, "--input", y4m, "--backend", "cpu", "--headless"],
         "camclass: bundle %s is not a regular file (a FIFO); give the path of a .ccm bundle"
         % fifo),
    ]

    for args, want in cases:
        try:
            rc, out, err = run(exe, args, timeout=20)
        except subprocess.TimeoutExpired:
            check(False, "%s: still running after 20 s" % " ".join(args))
            continue
        lines = err.splitlines()
        what = " ".join(args)
        check(rc == 2, "%s: exit status %d, not 2 (stderr: %r)" % (what, rc, err))
        if check(len(lines) == 1, "%s: %d lines on stderr, not 1: %r" % (what, len(lines), err)):
            check(want in lines[0], "%s: %r lacks %r" % (what, lines[0], want))
            check(lines[0].startswith("camclass: "), "%s: %r" % (what, lines[0]))
        check(out == "", "%s: wrote to stdout: %r" % (what, out))

    # A stale DISPLAY (no X server there): not a window nobody sees, but headless, said once.
    rc, out, err = run(exe, ["--model", model, "--backend", "cpu", "--input", png],
                       env_extra={"DISPLAY": ":99"})
    check(rc == 0 and "nothing answers at DISPLAY=:99" in err and "running headless" in err and
          out.startswith("{"), "stale DISPLAY: exit %d, stderr %r, stdout %r" % (rc, err, out[:80]))

    # camclass IN: the input as a bare argument, "-" standard input; --frames N stops after N.
    with open(y4m, "rb") as f:
        clip = f.read()
    env = checks.env_headless()
    for args, data in ((common + [y4m, "--frames", "3", "--log", "-"], None),
                       (common + ["-", "--frames", "3", "--log", "-"], clip)):
        p = subprocess.run(host_command(exe) + args, input=data, capture_output=True,
                           timeout=bound(60), env=env)
        events = [json.loads(l)["event"] for l in p.stdout.decode().splitlines()]
        check(p.returncode == 0 and events == ["frame"] * 3 + ["summary"],
              "%s: exit %d, events %r" % (" ".join(args[-5:]), p.returncode, events))

    # camclass IN OUT.jpg: one annotated picture (the frame on the left, the panel on the right).
    still = os.path.join(tmp, "annotated.jpg")
    rc, _, err = run(exe, common + [png, still])
    try:
        from PIL import Image
        im = Image.open(still).convert("RGB")
        frame_px, panel_px = im.getpixel((40, 100)), im.getpixel((1200, 420))
        check(rc == 0 and im.format is None and im.size == (1280, 720) and
              min(frame_px) > 150 and max(panel_px) < 80,
              "IN OUT.jpg: exit %d, %s, frame %s, panel %s" % (rc, im.size, frame_px, panel_px))
    except (OSError, ImportError) as e:
        check(False, "IN OUT.jpg: exit %d, no picture (%s): %s" % (rc, e, err[-300:]))

    # A pipe carries Y4M only, once: an image or --loop on a pipe is refused at once (exit 2).
    for what, path, extra, want in (
            ("--loop on a pipe", y4m, ["--loop"],
             "camclass: /dev/stdin: a pipe cannot be played again; drop --loop or save the "
             "stream to a file"),
            ("PNG on a pipe", png, [],
             "camclass: /dev/stdin: an image is read from a file, not from a pipe or "
             "device; save it to a file first")):
        with open(path, "rb") as f:
            data = f.read()
        env = dict(os.environ)
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        try:
            p = subprocess.run(host_command(exe) + common + ["--input", "/dev/stdin"] + extra,
                               input=data, capture_output=True, timeout=bound(20), env=env)
        except subprocess.TimeoutExpired:
            check(False, "%s: still running after 20 s" % what)
            continue
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 2 and err.splitlines() == [err.strip()] and want in err,
              "%s: exit %d, stderr %r, want %r" % (what, p.returncode, err, want))

    rc, out, err = run(exe, ["--help"])
    check(rc == 0 and out.startswith("usage: camclass") and err == "", "--help")
    for flag in ("--camera", "--input", "--model", "--backend", "--device", "--list-devices",
                 "--list-cameras", "--size", "--fps", "--top-k", "--threshold", "--headless",
                 "--log", "--config", "--profile", "--version", "--help", "--selftest",
                 "--loop", "--log-mode", "--threads", "--labels", "--window", "--fullscreen",
                 "--screenshot-dir"):
        check(flag + " " in out, "--help does not list %s" % flag)
    rc, out, err = run(exe, ["--version"])
    check(rc == 0 and out.startswith("camclass ") and len(out.splitlines()) == 1, "--version")

    # A camera that is not there: exit 1 (it may come later; the service retries), one line.
    rc, out, err = run(exe, common + ["--camera", "/dev/nonexistent-video"])
    check(rc == 1 and err == "camclass: camera /dev/nonexistent-video: No such file or directory"
          " (see --list-cameras)\n", "missing camera: rc %d: %r" % (rc, err))

    # --camera N is /dev/videoN: a missing index is the same exit 1 and one line, naming both.
    n = next(i for i in range(90, 1000) if not os.path.exists("/dev/video%d" % i))
    rc, out, err = run(exe, common + ["--camera", str(n)])
    check(rc == 1 and err == "camclass: camera %d (/dev/video%d): No such file or directory"
          " (see --list-cameras)\n" % (n, n), "missing camera index: rc %d: %r" % (rc, err))
    rc, out, err = run(exe, common + ["--camera", "0%d" % n])  # leading zeros: the same device
    check(rc == 1 and "(/dev/video%d)" % n in err, "--camera 0%d: rc %d: %r" % (n, rc, err))
    # A config's "camera" is resolved the same way.
    cam_cfg = os.path.join(tmp, "camera.json")
    with open(cam_cfg, "w") as f:
        json.dump({"camera": str(n)}, f)
    rc, out, err = run(exe, common + ["--config", cam_cfg])
    check(rc == 1 and "(/dev/video%d)" % n in err, "config camera: rc %d: %r" % (rc, err))

    # A good run for contrast: exit 0 on a file input (every frame, then the end).
    rc, out, err = run(exe, common + ["--input", y4m, "--log", os.path.join(tmp, "ok.jsonl")])
    check(rc == 0, "good run: exit %d: %s" % (rc, err))

    # --labels with the right count: the log names our labels, not the bundle's.
    log = os.path.join(tmp, "labels.jsonl")
    rc, out, err = run(exe, common + ["--input", y4m, "--labels", good_labels, "--log", log])
    check(rc == 0, "--labels run: exit %d: %s" % (rc, err))
    with open(log) as f:
        tops = [c["label"] for line in f for c in json.loads(line).get("top", [])]
    check(tops and all(t.startswith("my label ") for t in tops),
          "--labels: the log's labels are %r" % tops[:5])

    os.chmod(unreadable, 0o600)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
