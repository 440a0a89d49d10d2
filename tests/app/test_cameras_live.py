#!/usr/bin/python3
"""Four cameras in one camclass, one of them an RTSP camera whose server goes away and comes back
(suite app):

- "clip" loops a Y4M clip, "images" loops a folder of images, "pipe" reads Y4M frames from a
  FIFO that this test writes on (a capture program's pipe, paced), and "rtsp" is an IP camera:
  GStreamer's rtsp-server (rtsp_server.py, as video_live uses it) on a loopback port.
- Every camera logs results; then the RTSP server is killed: camclass says "stream lost" for its
  URL and reconnects with the existing back-off while the three others keep classifying (each
  adds 30 results while the server is down); the server restarts on the same port: one
  "reconnected" line and the RTSP camera's results resume (10 more).
- At SIGTERM: exit 0; every log line names one of the four cameras; each camera's seq (the
  source's frame number: live sources drop frames) increases, the RTSP camera's too across the
  outage; one summary line per camera counting its results, no line lost; one "stream lost" and
  one "reconnected" line, for the RTSP URL.

No timed assertion: every wait is for an event, with a generous bound.

    test_cameras_live.py CAMCLASS SELFTEST_MODEL SAMPLES_DIR
"""
import json
import os
import signal
import subprocess
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import (check, env_headless, free_port, host_command, in_tmpdir,  # noqa: E402
                    json_objects, wait_exit, wait_until)

EXE, MODEL, SAMPLES = sys.argv[1:4]
CAMS = ["clip", "images", "pipe", "rtsp"]
RTSP_SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rtsp_server.py")


def rtsp_serve(port):
    """rtsp_server.py on port, once it listens (None when it did not say so)."""
    s = subprocess.Popen(["/usr/bin/python3", RTSP_SERVER, str(port), "10"],
                         stdout=subprocess.PIPE, text=True)
    ready = s.stdout.readline().strip() == "ready"
    check(ready, "the RTSP server listens on %d" % port)
    return s


class FifoWriter(threading.Thread):
    """Writes a Y4M header, then the clip's frames over and over (about 20 a second), on the
    FIFO at path until stop() or until camclass closes its end."""

    def __init__(self, path, clip):
        super().__init__(daemon=True)
        data = open(clip, "rb").read()
        head, rest = data.split(b"\n", 1)
        self.head = head + b"\n"
        self.frames = [b"FRAME\n" + p for p in rest.split(b"FRAME\n") if p]
        self.path = path
        self.done = threading.Event()

    def run(self):
        try:
            with open(self.path, "wb") as f:  # opens when camclass opens its end
                f.write(self.head)
                i = 0
                while not self.done.wait(0.05):
                    f.write(self.frames[i % len(self.frames)])
                    f.flush()
                    i += 1
        except OSError:
            pass  # camclass ended: the pipe is broken

    def stop(self):
        self.done.set()


def counts(log):
    c = dict.fromkeys(CAMS, 0)
    for o in json_objects(log):
        if o.get("event") == "frame" and o.get("camera") in c:
            c[o["camera"]] += 1
    return c


def test(root):
    clip = os.path.join(SAMPLES, "moving_128x96.y4m")
    fifo = os.path.join(root, "pipe.y4m")
    os.mkfifo(fifo)
    port = free_port()
    url = "rtsp://127.0.0.1:%d/cam" % port
    log, err_path = os.path.join(root, "log.jsonl"), os.path.join(root, "stderr.txt")
    config = os.path.join(root, "config.json")
    with open(config, "w") as f:
        json.dump({"headless": True, "log": log, "log-format": "json", "cameras": [
            {"name": "clip", "input": clip, "loop": True, "fps": 20},
            {"name": "images", "input": os.path.join(SAMPLES, "selftest"), "loop": True,
             "fps": 20},
            {"name": "pipe", "input": fifo},
            {"name": "rtsp", "input": url}]}, f)
    server = rtsp_serve(port)
    writer = FifoWriter(fifo, clip)
    writer.start()
    with open(err_path, "w") as err_file:
        p = subprocess.Popen(host_command(EXE) + ["--model", MODEL, "--backend", "cpu",
                                                  "--threads", "1", "--config", config],
                             stdout=subprocess.DEVNULL, stderr=err_file, env=env_headless())

    def stderr_text():
        return open(err_path, errors="replace").read()

    def grows(at, names, n):
        return lambda: all(counts(log)[c] >= at[c] + n for c in names)
    try:
        wait_until(grows(dict.fromkeys(CAMS, 0), CAMS, 10), 120, "10 results of each camera")
        server.kill()
        server.wait()
        lost = wait_until(lambda: "%s: stream lost" % url in stderr_text(), 60,
                          "the RTSP camera's \"stream lost\" line")
        at_loss = counts(log)
        others = [c for c in CAMS if c != "rtsp"]
        wait_until(grows(at_loss, others, 30), 120,
                   "30 more results of each other camera while the RTSP server is down")
        check(lost and "reconnected" not in stderr_text(),
              "the other cameras went on while the RTSP camera was down")
        server = rtsp_serve(port)
        wait_until(lambda: "%s: reconnected after" % url in stderr_text(), 120,
                   "the RTSP camera's \"reconnected\" line")
        wait_until(grows(at_loss, ["rtsp"], 10), 120, "10 more results of the RTSP camera")
        wait_until(grows(counts(log), others, 5), 60, "the other cameras still classifying")
    finally:
        p.send_signal(signal.SIGTERM)
        rc = wait_exit(p, 30)
        writer.stop()
        server.kill()
        server.wait()
    err = stderr_text()
    check(rc == 0, "exit %d after SIGTERM, want 0: %s" % (rc, err[-500:]))
    objs = json_objects(log)
    check(objs and all(o.get("camera") in CAMS for o in objs),
          "every log line names one of the cameras")
    summaries = {o.get("camera"): o for o in objs if o.get("event") == "summary"}
    check(sorted(summaries) == sorted(CAMS), "one summary line per camera: %r" % sorted(summaries))
    for cam in CAMS:
        seqs = [o["seq"] for o in objs if o.get("camera") == cam and o.get("event") == "frame"]
        check(seqs and all(b > a for a, b in zip(seqs, seqs[1:])),
              "%s: %d results, seq increasing: %s" % (cam, len(seqs), seqs[:10]))
        s = summaries.get(cam, {})
        check(s.get("frames") == len(seqs) and s.get("lines_lost") == 0,
              "%s: its summary counts its %d results, lines_lost 0: %r" % (cam, len(seqs), s))
    said = [x for x in err.splitlines() if "stream lost" in x or "reconnected after" in x]
    check(len(said) == 2 and all(url in x for x in said),
          "one \"stream lost\" and one \"reconnected\" line, for %s: %r" % (url, said))
    print("results per camera: %s" % counts(log))


if __name__ == "__main__":
    sys.exit(in_tmpdir("camclass-cameras-live-", test))
