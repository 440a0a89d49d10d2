"""camclass --webhook end to end against a receiver on loopback (http.server):

- outage: camclass starts while nothing listens; the receiver comes up later and answers its
  first POST with 503: camclass says once that the POSTs fail and once that the receiver answers
  again, and the receiver gets every line of the log but "stats" (detection, clear, summary;
  compared without "ts"), once each, in order, as application/json;
- refused: a receiver answering 404 gets each event once (not retried) and camclass says why;
- bad URLs: exit 2 with one line naming --webhook, before the model loads.

    test_webhook.py CAMCLASS MODEL SELFTEST_DIR
"""
import http.server
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import (check, env_headless, free_port, host_command, lines_of, run,  # noqa: E402
                    summary, terminate, wait_for)

EXE, MODEL, FRAMES = sys.argv[1:4]


class Receiver(http.server.ThreadingHTTPServer):
    """Records each POST's (path, content type, body); answers `status` (the first `fail`
    POSTs get 503)."""

    def __init__(self, port, status=200, fail=0):
        self.got, self.status, self.fail, self.lock = [], status, fail, threading.Lock()
        super().__init__(("127.0.0.1", port), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with self.server.lock:
            failing = self.server.fail > 0
            self.server.fail -= failing
            if not failing:
                self.server.got.append((self.path, self.headers.get("Content-Type"), body))
        self.send_response(503 if failing else self.server.status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def camclass(args, log):
    cmd = host_command(EXE) + ["--model", MODEL, "--backend", "cpu", "--headless", "--input",
                               FRAMES, "--fps", "20", "--threshold", "0.3", "--log", log,
                               "--log-mode", "detections"] + args
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env_headless())


def without_ts(text):
    o = json.loads(text)
    o.pop("ts", None)
    return o


def outage(tmp):
    port, log = free_port(), os.path.join(tmp, "outage.jsonl")
    p = camclass(["--loop", "--webhook", "http://127.0.0.1:%d/hook" % port], log)
    check(wait_for(lambda: len(lines_of(log)) >= 3, 30), "outage: no detections logged")
    rx = Receiver(port, fail=1)
    n0 = len(lines_of(log))
    # Events logged after the receiver came up arrive: the outage is over.
    check(wait_for(lambda: len(rx.got) >= n0 + 2, 60), "outage: events did not arrive")
    _, err = terminate(p, signal.SIGTERM, 30)
    check(p.returncode == 0, "outage: exit status %s: %s" % (p.returncode, err[-300:]))
    time.sleep(0.2)
    rx.shutdown()
    want = [without_ts(x) for x in lines_of(log) if json.loads(x)["event"] != "stats"]
    got = [without_ts(b) for _, _, b in rx.got]
    check(got == want, "outage: %d POSTs for %d log lines; first differences %r" % (
        len(got), len(want), [(a.get("event"), a.get("seq"), b.get("event"), b.get("seq"))
                              for a, b in zip(got, want) if a != b][:3]))
    check(all(t == "application/json" and path == "/hook" for path, t, _ in rx.got),
          "outage: path or content type %r" % {(pa, t) for pa, t, _ in rx.got})
    check(err.count("failed (") == 1 and "retrying with back-off" in err,
          "outage: not one line saying the POSTs fail:\n" + err[-600:])
    check(err.count("answers again after") == 1, "outage: not one line saying it is back:\n" +
          err[-600:])


def refused(tmp):
    port, log = free_port(), os.path.join(tmp, "refused.jsonl")
    rx = Receiver(port, status=404)
    rc, _, err = run(EXE, ["--model", MODEL, "--backend", "cpu", "--headless", "--input", FRAMES,
                           "--fps", "20", "--threshold", "0.3", "--log", log, "--log-mode",
                           "detections", "--webhook", "http://127.0.0.1:%d/gone" % port])
    rx.shutdown()
    n = len([x for x in lines_of(log) if json.loads(x)["event"] != "stats"])
    check(rc == 0, "refused: exit status %d" % rc)
    check(len(rx.got) == n and err.count("answered HTTP 404") == n,
          "refused: %d POSTs, %d lines saying 404, for %d events" % (
              len(rx.got), err.count("answered HTTP 404"), n))


def bad_urls():
    for url in ["ftp://127.0.0.1/x", "http://u:pw@127.0.0.1/x", "127.0.0.1:8080"]:
        rc, out, err = run(EXE, ["--model", MODEL, "--headless", "--input", FRAMES, "--webhook",
                                 url], timeout=60)
        lines = err.strip().splitlines()
        check(rc == 2 and len(lines) == 1 and "--webhook" in lines[0] and not out,
              "bad URL %s: exit %d, %r" % (url, rc, lines))


with tempfile.TemporaryDirectory() as tmp:
    outage(tmp)
    refused(tmp)
    bad_urls()
sys.exit(summary())
