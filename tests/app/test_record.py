#!/usr/bin/python3
"""camclass --output: the annotated recording, decoded back with the ffmpeg CLI (suite app), one
part per run:

- mp4: `camclass --headless --input DIR --output out.mp4 --window 960x540` on six self-test
  images: the file decodes (`ffmpeg -f rawvideo -pix_fmt rgb24`) to as many 960x540 pictures as
  the log has frame lines; in each, the frame area (laid out as overlay_draw.c does) shows its
  image (both reduced to 24x18 blocks, mean difference <= 8 of 255), the panel's bars are as long
  as that frame's logged top-k scores say (within 4 % of the track), the header has text;
- mkv: the same as .mkv at --fps 5: timestamps 200 ms apart (ffprobe); and the sample Y4M video
  at its own rate, 30/1: every frame, 33 or 34 ms apart;
- window: a window run under SDL's offscreen video driver records the same way (stopped with
  SIGTERM once every image is classified; exit 0, the trailer written);
- stop: a looped input ended by SIGTERM, and by the log's reader going away (`--log - | head
  -1`): exit 0, and the file decodes to as many pictures as were classified;
- errors: an unknown extension, a missing directory, a path under a regular file: exit 2 and one
  line naming the file; a full disk (a .mkv link to /dev/full): one line naming it, the log
  still complete, exit 1.

    test_record.py PART CAMCLASS MODEL ASSETS_SAMPLES
"""
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, host_command, summary  # noqa: E402

RUN_TIMEOUT = 90
# Low-detail self-test images: SDL's linear scaling and PIL's box filter agree on them.
IMAGES = ["004-blue.png", "005-75-colour-bars.png", "006-colour-squares.png",
          "011-gray-ramp.png", "016-horizontal-colour-bars.png", "018-red.png"]
BAR = np.array([64, 170, 255])
TRACK = np.array([58, 62, 72])
PANEL = np.array([32, 34, 40])


def env(window=False):
    e = dict(os.environ)
    for k in ("DISPLAY", "WAYLAND_DISPLAY", "NOTIFY_SOCKET", "SDL_VIDEODRIVER"):
        e.pop(k, None)
    if window:
        e["SDL_VIDEODRIVER"] = "offscreen"
    return e


def run(exe, args, window=False):
    p = subprocess.run(host_command(exe) + args, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                       env=env(window))
    return p.returncode, p.stderr


def image_dir(tmp, samples):
    d = os.path.join(tmp, "images")
    os.mkdir(d)
    for i, name in enumerate(IMAGES):
        os.symlink(os.path.join(samples, "selftest", name), os.path.join(d, "%02d-%s" % (i, name)))
    return d


def decode(path, w, h):
    """The pictures of a recording as an (n, h, w, 3) uint8 array."""
    # passthrough: every coded picture once, whatever its timestamp (no rate conversion).
    p = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-fps_mode", "passthrough", "-f",
                        "rawvideo", "-pix_fmt", "rgb24", "-"], capture_output=True, timeout=RUN_TIMEOUT)
    if not check(p.returncode == 0, "ffmpeg decodes %s: %s" % (path, p.stderr.decode()[-300:])):
        return np.zeros((0, h, w, 3), np.uint8)
    raw = np.frombuffer(p.stdout, np.uint8)
    check(raw.size % (w * h * 3) == 0, "%s: %d bytes, not whole %dx%d pictures"
          % (path, raw.size, w, h))
    return raw[: raw.size // (w * h * 3) * (w * h * 3)].reshape(-1, h, w, 3)


def probe(path):
    """Width, height and the pictures' timestamps in ms (ffprobe)."""
    p = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                        "stream=width,height:frame=pts_time", "-of", "json", path],
                       capture_output=True, text=True, timeout=RUN_TIMEOUT)
    j = json.loads(p.stdout or "{}")
    s = (j.get("streams") or [{}])[0]
    pts = [round(float(f["pts_time"]) * 1000) for f in j.get("frames", []) if "pts_time" in f]
    return s.get("width"), s.get("height"), pts


def log_frames(path):
    lines = [json.loads(x) for x in open(path) if x.strip()]
    frames = [x for x in lines if x.get("event") == "frame"]
    summ = [x for x in lines if x.get("event") == "summary"]
    return frames, (summ[-1] if summ else None)


def layout(w, h, fw, fh):
    """overlay_draw.c's layout: body text size, panel width, the letterboxed frame."""
    clamp = lambda v, lo, hi: max(lo, min(hi, v))  # noqa: E731
    px = clamp((h if h < w else w * 3 // 4) // 32, 12, 40)
    panel_w = clamp(w * 3 // 10, 16 * px, w // 2)
    aw, ah = w - panel_w, h
    if aw * fh <= ah * fw:
        dw, dh = aw, (aw * fh * 2 + fw) // (2 * fw)
    else:
        dw, dh = (ah * fw * 2 + fh) // (2 * fh), ah
    return {"px": px, "panel_x": aw, "frame": ((aw - dw) // 2, (ah - dh) // 2, dw, dh)}


def blocks(a, bw=24, bh=18):
    return np.asarray(Image.fromarray(a).resize((bw, bh), Image.BOX), np.float32)


def check_frame_area(pic, L, src, what):
    x, y, w, h = L["frame"]
    got = blocks(np.ascontiguousarray(pic[y:y + h, x:x + w]))
    want = blocks(np.asarray(src.convert("RGB")))
    diff = np.abs(got - want)
    check(diff.mean() <= 8, "%s: frame area differs from its image by %.1f on average "
          "(max %.0f)" % (what, diff.mean(), diff.max()))


def bar_rows(pic, L):
    """The bars in the panel, top to bottom: (filled fraction, track width) on each bar's middle
    line. A bar line is a panel row that is mostly track or bar colour."""
    x0 = L["panel_x"] + L["px"] * 3 // 4
    panel = pic[:, x0:].astype(np.int32)
    is_bar = np.abs(panel - BAR).max(axis=2) <= 40
    is_track = np.abs(panel - TRACK).max(axis=2) <= 24
    inner = panel.shape[1] - L["px"] * 3 // 4
    rows = np.nonzero((is_bar | is_track).sum(axis=1) >= inner * 0.9)[0]
    groups, out = [], []
    for r in rows:
        if groups and r == groups[-1][-1] + 1:
            groups[-1].append(r)
        else:
            groups.append([r])
    for g in groups:
        m = g[len(g) // 2]
        line = is_bar[m] | is_track[m]
        width = int(np.nonzero(line)[0].max()) + 1
        out.append((int(is_bar[m, :width].sum()) / width, width))
    return out


def check_recording(path, logpath, w, h, srcs, what, expect_pts_ms=None):
    frames, summ = log_frames(logpath)
    pics = decode(path, w, h)
    pw, ph, pts = probe(path)
    check((pw, ph) == (w, h), "%s: %sx%s, asked %dx%d" % (what, pw, ph, w, h))
    n = summ["frames"] if summ else -1
    check(len(pics) == n == len(frames) and n > 0,
          "%s: %d pictures, %d frames classified, %d frame lines" % (what, len(pics), n,
                                                                     len(frames)))
    if expect_pts_ms:
        # A picture's time is its frame's index at the file's rate: expect_pts_ms per step of
        # seq, so a frame dropped in between (a slow machine, emulation) leaves its gap.
        steps = [b - a for a, b in zip(pts, pts[1:])]
        want = [expect_pts_ms * (b["seq"] - a["seq"]) for a, b in zip(frames, frames[1:])]
        check(steps and len(steps) == len(want) and
              all(abs(s - w) <= 1 for s, w in zip(steps, want)),
              "%s: timestamp steps %s ms, expected %s (%d ms per frame)"
              % (what, steps[:8], want[:8], expect_pts_ms))
    for i, (pic, fr) in enumerate(zip(pics, frames)):
        src = Image.open(srcs[fr["seq"] % len(srcs)])
        L = layout(w, h, src.width, src.height)
        check_frame_area(pic, L, src, "%s picture %d" % (what, i))
        bars = bar_rows(pic, L)
        scores = [t["score"] for t in fr["top"]]
        check(len(bars) == len(scores), "%s picture %d: %d bars, %d scores logged"
              % (what, i, len(bars), len(scores)))
        for k, ((frac, width), s) in enumerate(zip(bars, scores)):
            check(abs(frac - s) <= 0.04, "%s picture %d bar %d: %.3f of %d px, score %.3f"
                  % (what, i, k, frac, width, s))
        hx, hy = L["panel_x"] + L["px"] // 2, L["px"] // 2
        header = pic[hy:hy + L["px"] * 3, hx:].astype(np.int32)
        text = (np.abs(header - PANEL).max(axis=2) > 60).sum()
        check(text > 100, "%s picture %d: %d text pixels in the header" % (what, i, text))
    return pics


def part_mp4(exe, model, samples, tmp, ext="mp4", extra=(), step=None, window=False):
    d = image_dir(tmp, samples)
    out, logp = os.path.join(tmp, "out." + ext), os.path.join(tmp, "log.jsonl")
    args = ["--input", d, "--model", model, "--backend", "cpu", "--output", out, "--window",
            "960x540", "--log", logp] + list(extra)
    t0 = time.monotonic()
    if not window:
        rc, err = run(exe, ["--headless"] + args)
    else:
        p = subprocess.Popen(host_command(exe) + args, stderr=subprocess.PIPE, text=True, env=env(True))
        deadline = time.monotonic() + RUN_TIMEOUT
        while time.monotonic() < deadline and p.poll() is None:
            # The window plays the images at --fps and may drop some (latest frame wins); the
            # last one is always classified, and then the window waits for q.
            if os.path.exists(logp) and any(f["seq"] == len(IMAGES) - 1
                                            for f in log_frames(logp)[0]):
                break
            time.sleep(0.1)
        p.send_signal(signal.SIGTERM)
        err = p.communicate(timeout=RUN_TIMEOUT)[1]
        rc = p.returncode
        check("running headless" not in err, "window run fell back to headless: " + err)
    check(rc == 0, "%s run: exit %d, stderr: %s" % (ext, rc, err))
    summ = log_frames(logp)[1]
    n = summ["frames"] if summ else -1
    # Every image classified or counted as dropped (a machine slower than --fps, emulation).
    dropped = summ.get("dropped", 0) if summ else 0
    check(("recording %s (" % out) in err and ("recorded %d frames to %s" % (n, out)) in err
          and (window or n + dropped == len(IMAGES)), "%s: start and end lines: %s" % (ext, err))
    print("%s run %.1f s; %s" % (ext, time.monotonic() - t0,
                                 [x for x in err.splitlines() if "record" in x]))
    srcs = [os.path.join(d, f) for f in sorted(os.listdir(d))]
    check_recording(out, logp, 960, 540, srcs, ext, step)


def part_y4m(exe, model, samples, tmp):
    """A Y4M video at its own rate (30/1): every frame, 33 or 34 ms apart."""
    out, logp = os.path.join(tmp, "y4m.mkv"), os.path.join(tmp, "y4m.jsonl")
    rc, err = run(exe, ["--headless", "--input", os.path.join(samples, "moving_128x96.y4m"),
                        "--model", model, "--backend", "cpu", "--output", out, "--window",
                        "640x360", "--log", logp])
    check(rc == 0, "y4m run: exit %d: %s" % (rc, err))
    frames, summ = log_frames(logp)
    pics = decode(out, 640, 360)
    pw, ph, pts = probe(out)
    steps = [b - a for a, b in zip(pts, pts[1:])]
    check(len(pics) == len(frames) == (summ or {}).get("frames") and len(pics) >= 2
          and (pw, ph) == (640, 360), "y4m: %d pictures, %d frame lines, %sx%s"
          % (len(pics), len(frames), pw, ph))
    check(steps and all(s in (33, 34) for s in steps), "y4m: timestamp steps %s ms" % steps)


def part_stop(exe, model, samples, tmp):
    d = image_dir(tmp, samples)
    srcs = [os.path.join(d, f) for f in sorted(os.listdir(d))]
    # SIGTERM on a looped input: the trailer is written, every classified frame is in the file.
    out, logp = os.path.join(tmp, "loop.mp4"), os.path.join(tmp, "loop.jsonl")
    p = subprocess.Popen(host_command(exe) + ["--headless", "--input", d, "--loop", "--fps", "20", "--model",
                          model, "--backend", "cpu", "--output", out, "--window", "640x360",
                          "--log", logp], stderr=subprocess.PIPE, text=True, env=env())
    deadline = time.monotonic() + RUN_TIMEOUT
    while time.monotonic() < deadline and p.poll() is None:
        if os.path.exists(logp) and len(log_frames(logp)[0]) >= 8:
            break
        time.sleep(0.1)
    p.send_signal(signal.SIGTERM)
    err = p.communicate(timeout=RUN_TIMEOUT)[1]
    check(p.returncode == 0, "SIGTERM: exit %d: %s" % (p.returncode, err))
    check_recording(out, logp, 640, 360, srcs, "SIGTERM")
    # The log's reader goes away: exit 0 as before, the recording closed properly.
    out = os.path.join(tmp, "pipe.mkv")
    sh = "%s --headless --input %s --loop --fps 20 --model %s --backend cpu --output %s " \
         "--window 640x360 --log - | head -1 >/dev/null; exit ${PIPESTATUS[0]}" % (
             " ".join(shlex.quote(a) for a in host_command(exe)), d, model, out)
    r = subprocess.run(["bash", "-c", sh], capture_output=True, text=True, timeout=RUN_TIMEOUT,
                       env=env())
    check(r.returncode == 0, "| head -1: exit %d: %s" % (r.returncode, r.stderr))
    classified = [x for x in r.stderr.splitlines() if "classified" in x]
    n = int(classified[0].split()[1]) if classified else -1
    pics = decode(out, 640, 360)
    check(len(pics) == n and n >= 1, "| head -1: %d pictures, %d classified" % (len(pics), n))


def one_line(err, what):
    lines = [x for x in err.splitlines() if x.strip()]
    return check(len(lines) == 1, "%s: %d stderr lines: %s" % (what, len(lines), err)) and lines[0]


def part_errors(exe, model, samples, tmp):
    d = image_dir(tmp, samples)
    base = ["--headless", "--input", d, "--model", model, "--backend", "cpu", "--window",
            "640x360"]
    notfile = os.path.join(tmp, "plain-file")
    open(notfile, "w").close()
    cases = [(os.path.join(tmp, "clip.avi"), [".avi", ".mp4 or .mkv"]),
             (os.path.join(tmp, "clip"), ["no extension", ".mp4 or .mkv"]),
             (os.path.join(tmp, "no-such-dir", "clip.mp4"), ["No such file or directory"]),
             (os.path.join(notfile, "clip.mkv"), ["Not a directory"])]
    for path, words in cases:
        rc, err = run(exe, base + ["--log", os.path.join(tmp, "e.jsonl"), "--output", path])
        # The model and engine lines come first; the one about --output is the last.
        lines = [x for x in err.splitlines() if "--output" in x or path in x]
        check(rc == 2, "%s: exit %d: %s" % (path, rc, err))
        if one_line("\n".join(lines), path):
            check(path in lines[0] and all(w in lines[0] for w in words),
                  "%s: line %r lacks %s" % (path, lines[0], words))
            print("%s -> %s" % (os.path.basename(path), lines[0]))
        check(not os.path.exists(path) or path.endswith("clip"), "%s was created" % path)
    # A full disk: one line naming the file; classification and its log go on; exit 1.
    full = os.path.join(tmp, "full.mkv")
    os.symlink("/dev/full", full)
    logp = os.path.join(tmp, "full.jsonl")
    rc, err = run(exe, base + ["--log", logp, "--output", full])
    check(rc == 1, "/dev/full: exit %d: %s" % (rc, err))
    lines = [x for x in err.splitlines() if "full.mkv" in x and "recording " not in x]
    if one_line("\n".join(lines), "/dev/full"):
        check("No space left on device" in lines[0], "/dev/full: %r" % lines[0])
        print("full disk -> %s" % lines[0])
    frames, summ = log_frames(logp)
    check(len(frames) == len(IMAGES) and summ and summ["frames"] == len(IMAGES),
          "/dev/full: the log has %d frame lines, summary %s" % (len(frames), summ))
    # An MP4's header is flushed at once: the full disk shows before the run, exit 2.
    full = os.path.join(tmp, "full.mp4")
    os.symlink("/dev/full", full)
    rc, err = run(exe, base + ["--log", logp, "--output", full])
    check(rc == 2, "/dev/full as .mp4: exit %d: %s" % (rc, err))
    lines = [x for x in err.splitlines() if "full.mp4" in x]
    if one_line("\n".join(lines), "/dev/full as .mp4"):
        check("No space left on device" in lines[0], "/dev/full as .mp4: %r" % lines[0])
        print("full disk (mp4) -> %s" % lines[0])


def main():
    part, exe, model, samples = sys.argv[1:5]
    with tempfile.TemporaryDirectory(prefix="camclass-record-") as tmp:
        t0 = time.monotonic()
        if part == "mp4":
            part_mp4(exe, model, samples, tmp)
        elif part == "mkv":
            part_mp4(exe, model, samples, tmp, "mkv", ["--fps", "5"], step=200)
            part_y4m(exe, model, samples, tmp)
        elif part == "window":
            part_mp4(exe, model, samples, tmp, "mp4", ["--fps", "10"], window=True)
        elif part == "stop":
            part_stop(exe, model, samples, tmp)
        elif part == "errors":
            part_errors(exe, model, samples, tmp)
        else:
            check(False, "unknown part " + part)
        print("%s: %.1f s" % (part, time.monotonic() - t0))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
