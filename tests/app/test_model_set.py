#!/usr/bin/python3
"""The retained MQTT message camclass/<device-id>/model/set (docs/FLEET.md; app/output/model_set.c)
against a real mosquitto broker and a local http server (bound before any node starts):

- settings: --mqtt-model-token without --mqtt, and with a token file that is missing or empty:
  exit 2, one line naming the flag, before any model loads.
- run: camclass --mqtt --mqtt-model-token FILE on the looped self-test sample, model A. Each
  message published retained on model/set gets one retained answer on model/status and one
  stderr line: a wrong token, a file:// URL, a sha256 that is not the file's, a URL that is 404,
  a file with the right sha256 that is no bundle: {"ok": false, "error": ...} and nothing
  changes (no "model" line, frames go on with A's labels); then B (the int8 model relabeled)
  with its sha256: {"ok": true, "model": B}, one "model" line in the log naming B and its
  sha256, frames after it with B's labels; the same message again: "already running", no second
  "model" line. Exit 0 on SIGTERM. A node started while the retained message names B loads B
  once its camera runs (the message comes at the first connect, before the pipelines exist).
  A node started while the retained message names B on a server that is not up yet says it
  tries again (connection refused) and loads B once the server runs.

    test_model_set.py CAMCLASS SELFTEST_MODEL SELFTEST_INT8_MODEL SAMPLES_DIR
"""
import functools
import hashlib
import http.server
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import (check, env_headless, free_port, host_command, json_objects,  # noqa: E402
                    lines_of, relabeled, run, summary, wait_exit, wait_until)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mqtt_broker import Broker  # noqa: E402

EXE, MODEL, MODEL_INT8, SAMPLES = sys.argv[1:5]
DEVICE = "node1"
SET, STATUS = "camclass/%s/model/set" % DEVICE, "camclass/%s/model/status" % DEVICE


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def serve_dir(www, port=0):
    """An http server for www on loopback port (0: a free one), bound (so it takes connections)
    before it returns; the caller shuts it down."""
    handler = functools.partial(Quiet, directory=www)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def labels_of(path):
    with zipfile.ZipFile(path) as z:
        return [x for x in z.read("labels.txt").decode().splitlines() if x]


def test_settings(tmp):
    base = ["--headless", "--backend", "cpu", "--model", MODEL, "--input",
            os.path.join(SAMPLES, "selftest")]
    empty = os.path.join(tmp, "empty")
    open(empty, "w").close()
    for extra, says in ((["--mqtt-model-token", empty], "--mqtt-model-token"),
                        (["--mqtt", "mqtt://127.0.0.1:1", "--mqtt-model-token",
                          os.path.join(tmp, "nope")], "--mqtt-model-token"),
                        (["--mqtt", "mqtt://127.0.0.1:1", "--mqtt-model-token", empty],
                         "first line")):
        rc, out, err = run(EXE, base + extra)
        lines = err.strip().splitlines()
        check(rc == 2 and len(lines) == 1 and says in err and " on cpu " not in err,
              "settings %r: exit %d, want 2 and one line naming %s: %r" % (extra, rc, says, err))


def start_node(broker, token, log, err_path):
    """camclass on the looped sample with model A, --mqtt and the token file."""
    with open(err_path, "w") as err_file:
        return subprocess.Popen(host_command(EXE) + [
            "--headless", "--backend", "cpu", "--threads", "1", "--model", MODEL, "--input",
            os.path.join(SAMPLES, "selftest"), "--loop", "--log", log, "--mqtt",
            "mqtt://127.0.0.1:%d" % broker.port, "--device-id", DEVICE,
            "--mqtt-model-token", token], stdout=subprocess.DEVNULL, stderr=err_file,
            env=env_headless())


def test_boot(tmp, broker, b_sha):
    """A node started while the retained model/set names B: B is loaded once the camera runs."""
    log, err_path = os.path.join(tmp, "boot.jsonl"), os.path.join(tmp, "boot-stderr.txt")
    p = start_node(broker, os.path.join(tmp, "token"), log, err_path)
    try:
        wait_until(lambda: any(o.get("event") == "model" for o in json_objects(log)), 90,
                   "the model line of the retained B at the start")
    finally:
        p.send_signal(signal.SIGTERM)
        rc = wait_exit(p, 30)
    models = [o for o in json_objects(log) if o.get("event") == "model"]
    check(rc == 0 and len(models) == 1 and models[0].get("sha256") == b_sha,
          "boot: exit %d, one model line naming B: %r; stderr: %s" %
          (rc, models, open(err_path).read()[-800:]))


def test_late_server(tmp, broker, www, b_sha):
    """A node started while the retained model/set names B on a server that is not up yet: the
    fetch fails (connection refused), the node says it tries again, and loads B once the server
    runs."""
    port = free_port()
    subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker.port), "-r", "-q", "1",
                    "-t", SET, "-m", json.dumps({"url": "http://127.0.0.1:%d/b.ccm" % port,
                                                 "sha256": b_sha, "token": "s3cret"})],
                   check=True)
    log, err_path = os.path.join(tmp, "late.jsonl"), os.path.join(tmp, "late-stderr.txt")
    p = start_node(broker, os.path.join(tmp, "token"), log, err_path)
    web = None
    try:
        wait_until(lambda: "trying again in" in open(err_path).read(), 60,
                   "a line saying the fetch is tried again")
        web = serve_dir(www, port)
        wait_until(lambda: any(o.get("event") == "model" for o in json_objects(log)), 60,
                   "the model line of B once its server runs")
    finally:
        p.send_signal(signal.SIGTERM)
        rc = wait_exit(p, 30)
        if web:
            web.shutdown()
            web.server_close()
    said = [x for x in open(err_path).read().splitlines() if "model/set" in x]
    models = [o for o in json_objects(log) if o.get("event") == "model"]
    check(rc == 0 and len(models) == 1 and models[0].get("sha256") == b_sha,
          "late server: exit %d, one model line naming B: %r" % (rc, models))
    check(len(said) >= 2 and all("trying again in" in x for x in said[:-1]) and
          "loaded" in said[-1], "late server: retries, then loaded: %r" % said)
    print("\n".join(said))


def test_run(tmp, broker):
    www = os.path.join(tmp, "www")
    os.makedirs(www)
    b = os.path.join(www, "b.ccm")
    relabeled(MODEL_INT8, b)
    b_sha, b_labels = sha(b), labels_of(b)
    bad = os.path.join(www, "bad.ccm")
    with open(bad, "wb") as f:
        f.write(b"PK\x03\x04 not a bundle")
    a_labels = labels_of(MODEL)
    token = os.path.join(tmp, "token")
    with open(token, "w") as f:
        f.write("s3cret\n")
    web = serve_dir(www)
    sub_out = os.path.join(tmp, "status.txt")
    sub = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(broker.port), "-t",
                            STATUS], stdout=open(sub_out, "w"), stderr=subprocess.DEVNULL)
    log, err_path = os.path.join(tmp, "log.jsonl"), os.path.join(tmp, "stderr.txt")
    p = start_node(broker, token, log, err_path)
    url = "http://127.0.0.1:%d/" % web.server_address[1]

    def statuses():
        return [json.loads(x) for x in lines_of(sub_out) if x.startswith("{")]

    def ask(what, msg):
        n = len(statuses())
        subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker.port), "-r", "-q",
                        "1", "-t", SET, "-m", json.dumps(msg)], check=True)
        wait_until(lambda: len(statuses()) > n, 90, "the status of %s" % what)
        got = statuses()
        return got[-1] if len(got) > n else {}

    def frames():
        return [o for o in json_objects(log) if o.get("event") == "frame"]

    try:
        wait_until(lambda: len(frames()) >= 5, 60, "5 frames with A")
        good = {"url": url + "b.ccm", "sha256": b_sha, "token": "s3cret"}
        refused = [
            ("a wrong token", dict(good, token="s3creT"), "token"),
            ("a file URL", dict(good, url="file:///etc/passwd"), "http"),
            ("a sha256 not the file's", dict(good, sha256="0" * 64), "its sha256 is " + b_sha),
            ("a URL that is 404", dict(good, url=url + "nope.ccm"), "404"),
            ("a file that is no bundle", dict(good, url=url + "bad.ccm", sha256=sha(bad)),
             "old model goes on"),
        ]
        for what, msg, says in refused:
            st = ask(what, msg)
            check(st.get("ok") is False and says in st.get("error", ""),
                  "%s: {ok: false} with an error naming %r: %r" % (what, says, st))
        check(not any(o.get("event") == "model" for o in json_objects(log)),
              "no model line after the refused messages")
        st = ask("B", good)
        check(st.get("ok") is True and st.get("model") and st.get("sha256") == b_sha,
              "B: {ok: true} naming B and its sha256: %r" % st)
        n = len(frames())
        wait_until(lambda: len(frames()) >= n + 5, 60, "5 frames with B")
        st = ask("B again", good)
        check(st.get("ok") is True and "already running" in st.get("note", ""),
              "B again: already running: %r" % st)
    finally:
        p.send_signal(signal.SIGTERM)
        rc = wait_exit(p, 30)
        sub.kill()
        sub.wait()
    err = open(err_path).read()
    check(rc == 0, "exit %d after SIGTERM, want 0: %s" % (rc, err[-500:]))
    said = [x for x in err.splitlines() if "model/set" in x]
    check(len(said) == len(refused) + 2, "one stderr line per message: %r" % said)
    print("\n".join(said))
    objs = json_objects(log)
    models = [i for i, o in enumerate(objs) if o.get("event") == "model"]
    check(len(models) == 1 and objs[models[0]].get("sha256") == b_sha and
          objs[models[0]].get("labels") == b_labels,
          "one model line naming B's sha256 and labels: %r" % [objs[i] for i in models])
    if models:
        before = {t["label"] for o in objs[:models[0]] if o.get("event") == "frame"
                  for t in o["top"]}
        after = {t["label"] for o in objs[models[0]:] if o.get("event") == "frame"
                 for t in o["top"]}
        check(before and before <= set(a_labels), "frames before B carry A's labels")
        check(after and after <= set(b_labels), "frames after B carry B's labels")
    try:
        test_boot(tmp, broker, b_sha)
        test_late_server(tmp, broker, www, b_sha)
    finally:
        web.shutdown()
        web.server_close()


def main():
    if not shutil.which("mosquitto"):
        check(False, "mosquitto is not installed (tools/setup.sh installs it)")
        return summary()
    tmp = tempfile.mkdtemp(prefix="camclass-model-set-")
    broker = Broker(tmp, free_port())
    try:
        test_settings(tmp)
        broker.start()
        test_run(tmp, broker)
    finally:
        broker.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
