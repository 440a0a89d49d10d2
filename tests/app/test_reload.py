#!/usr/bin/python3
"""Model reload without stopping (SIGHUP; docs/CLI.md, "Signals"), one part per meson test:

    test_reload.py PART CAMCLASS SELFTEST_MODEL SELFTEST_INT8_MODEL SAMPLES_DIR SMALL_NET_MODEL

- sighup: camclass --headless on the looped self-test sample with --model A (a copy of the
  self-test model); the file is replaced by B (the int8 model with its labels.txt rewritten, so
  that B's labels differ from A's) and SIGHUP sent: one "model" line naming B, its sha256, class
  count and labels; frame lines before it carry A's labels and after it B's; seq contiguous
  (no frame lost or repeated), the summary counts every frame with lines_lost 0; exit 0 on
  SIGTERM.
- serve: the same with --serve, /predict asked over and over from another thread meanwhile:
  every answer 200; before, /predict names A with A's labels; after, /predict and /latest
  name B and /predict answers with B's labels.
- post: POST /model with a bundle as the body (200 naming B, its classes and sha256; a "model"
  line; /predict then answers with B), with ?path=NAME found in $CAMCLASS_DATADIR/models (200
  naming A), ?path= names that are unsafe (400: "..", "/", not .ccm) or absent (404), a body that
  is no bundle (422 with the reason; /predict still answers, with B); the Host (421) and Origin
  (403) rules of the other POSTs, GET /model 405; frames go on with seq contiguous, exit 0. With
  --serve-token: 401 without the token or with a wrong one, 200 with it.
- classes: to a model with other classes and another input size (small_net: 7 classes,
  13 x 13, after the self-test model's 19) in detections mode with --serve: after the "model"
  line every line (detection, clear, stats) and /latest name only the new model's labels (the
  smoothed per-class state of the old classes is forgotten), and camclass goes on to exit 0.
- corrupt: the --model file overwritten by a bundle that does not load, then SIGHUP: exactly
  one stderr line says why, no "model" line, frames go on with A's labels and contiguous seq.
- cameras: four cameras in one process (config "cameras"), "a" and "b" on the top-level
  --model (one shared engine), "c" (the first) on a model file of its own, "d" on the top-level
  model with a clip that ends first (its pipeline switched on SIGHUP's thread). --model replaced by B and SIGHUP:
  a and b each log one "model" line naming B and its sha256 and then B's labels, c logs none
  and goes on with A's ("unchanged" said for its file); c's file replaced by a broken bundle and
  SIGHUP: one stderr line says why, c goes on with A; POST /model (A's bytes) with --serve: 200,
  a and b switch back to A (a second "model" line each), c untouched; with every camera on a
  model of its own, POST /model is 409. Every camera's result
  count grows after each step, seq contiguous per camera, a summary per camera, exit 0 (the
  engines freed once: the first camera on a model of its own was a double free at the end).
"""
import hashlib
import json
import os
import signal
import sys
import tempfile
import threading
import time
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import (check, host_command, json_objects, relabeled, start, stop, summary,  # noqa: E402
                    wait_until)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Server  # noqa: E402

PART, CAMCLASS, MODEL, MODEL_INT8, SAMPLES, SMALL_NET = sys.argv[1:7]
SELFTEST = os.path.join(SAMPLES, "selftest")


def bundle_info(path):
    with zipfile.ZipFile(path) as z:
        name = json.loads(z.read("manifest.json"))["name"]
        labels = z.read("labels.txt").decode().splitlines()
    return name, [x for x in labels if x]


def model_a(tmp):
    """A copy of MODEL at tmp/m.ccm, the --model a run starts with: (path, name, labels)."""
    model = os.path.join(tmp, "m.ccm")
    with open(MODEL, "rb") as f, open(model, "wb") as g:
        g.write(f.read())
    return (model,) + bundle_info(model)


def model_b(tmp):
    """MODEL_INT8 relabeled (checks.relabeled) at tmp/b.ccm, the model reloaded to: (path,
    name, labels)."""
    b = os.path.join(tmp, "b.ccm")
    relabeled(MODEL_INT8, b)
    return (b,) + bundle_info(b)


def lines(path):
    try:
        with open(path, errors="replace") as f:
            return [json.loads(x) for x in f.read().splitlines() if x]
    except (OSError, ValueError):
        return []


def frames(objs):
    return [o for o in objs if o.get("event") == "frame"]


def start_looped(tmp, model):
    """camclass on the sample, looped, with model; (Popen, log path, stderr path)."""
    log, err = os.path.join(tmp, "log.jsonl"), os.path.join(tmp, "stderr")
    p = start(CAMCLASS, ["--headless", "--backend", "cpu", "--threads", "1", "--model", model,
                         "--input", SELFTEST, "--loop", "--log", log], err)
    return p, log, err


def top_labels(objs):
    return {t["label"] for f in frames(objs) for t in f.get("top", [])}


def check_stream(objs, what):
    seqs = [f["seq"] for f in frames(objs)]
    check(len(seqs) > 20 and all(b == a + 1 for a, b in zip(seqs, seqs[1:])),
          "%s: %d frames with seq contiguous" % (what, len(seqs)))
    s = objs[-1] if objs else {}
    check(s.get("event") == "summary" and s.get("frames") == len(seqs) and
          s.get("lines_lost") == 0,
          "%s: last line a summary of %d frames, lines_lost 0: %r" % (what, len(seqs), s))


def part_sighup(tmp):
    model, a_name, a_labels = model_a(tmp)
    b, b_name, b_labels = model_b(tmp)
    with open(b, "rb") as f:
        b_sha = hashlib.sha256(f.read()).hexdigest()
    p, log, err = start_looped(tmp, model)
    wait_until(lambda: len(frames(lines(log))) >= 10, 60, "10 frames with A")
    # The file unchanged (logrotate's SIGHUP): nothing reloaded, no model line, said once.
    p.send_signal(signal.SIGHUP)
    wait_until(lambda: "unchanged" in open(err).read(), 60, "the unchanged line")
    os.replace(b, model)
    p.send_signal(signal.SIGHUP)
    wait_until(lambda: any(o.get("event") == "model" for o in lines(log)), 60, "the model line")
    n = len(frames(lines(log)))
    wait_until(lambda: len(frames(lines(log))) >= n + 10, 60, "10 frames with B")
    stop(p, "sighup")
    objs = lines(log)
    models = [i for i, o in enumerate(objs) if o.get("event") == "model"]
    check(len(models) == 1, "sighup: one model line, got %d" % len(models))
    if models:
        m = objs[models[0]]
        check(m.get("model") == b_name and m.get("labels") == b_labels and
              m.get("classes") == len(b_labels) and m.get("sha256") == b_sha,
              "sighup: the model line names B (%s, %d labels, sha256 %s): %r"
              % (b_name, len(b_labels), b_sha, json.dumps(m)[:300]))
        before, after = objs[:models[0]], objs[models[0] + 1:]
        check(top_labels(before) <= set(a_labels) and frames(before),
              "sighup: frames before the reload carry A's labels")
        check(top_labels(after) <= set(b_labels) and frames(after) and
              all(f.get("model") == b_name for f in frames(after)),
              "sighup: frames after the reload carry B's labels and name: %r"
              % sorted(top_labels(after))[:5])
    check(a_name != b_name or a_labels != b_labels, "sighup: A and B differ")
    check_stream(objs, "sighup")
    check("reloaded" in open(err).read(), "sighup: stderr says the model was reloaded")


def part_corrupt(tmp):
    model, _, a_labels = model_a(tmp)
    p, log, err = start_looped(tmp, model)
    wait_until(lambda: len(frames(lines(log))) >= 10, 60, "10 frames with A")
    with open(model, "wb") as f:
        f.write(b"PK\x03\x04 not a bundle any more")
    p.send_signal(signal.SIGHUP)
    wait_until(lambda: "model reload" in open(err).read(), 60, "the reload's error line")
    n = len(frames(lines(log)))
    wait_until(lambda: len(frames(lines(log))) >= n + 10, 60, "10 frames after the failure")
    stop(p, "corrupt")
    said = [x for x in open(err).read().splitlines() if "model reload" in x]
    check(len(said) == 1 and "old model goes on" in said[0],
          "corrupt: one stderr line says why and that the old model goes on: %r" % said)
    objs = lines(log)
    check(not any(o.get("event") == "model" for o in objs), "corrupt: no model line")
    check(top_labels(objs) <= set(a_labels), "corrupt: every frame carries A's labels")
    check_stream(objs, "corrupt")


def part_serve(tmp):
    model, a_name, a_labels = model_a(tmp)
    b, b_name, b_labels = model_b(tmp)
    log = os.path.join(tmp, "log.jsonl")
    s = Server(host_command(CAMCLASS) + [
        "--headless", "--backend", "cpu", "--threads", "1", "--model", model, "--input",
        SELFTEST, "--loop", "--log", log, "--serve", "127.0.0.1:0"])
    if not check(s.port is not None, "serve: no port: %s" % s.stderr()[-300:]):
        s.stop()
        return
    img = open(os.path.join(SELFTEST, sorted(os.listdir(SELFTEST))[0]), "rb").read()

    def predict():
        return s.request("POST", "/predict", img, {"Content-Type": "image/png"})
    st, _, o = predict()
    check(st == 200 and o and o.get("model") == a_name and
          {t["label"] for t in o.get("top", [])} <= set(a_labels),
          "serve: /predict before the reload answers with A: %d %r" % (st, o))
    statuses, done = [], threading.Event()

    def hammer():
        while not done.is_set():
            statuses.append(predict()[0])
    t = threading.Thread(target=hammer)
    t.start()
    wait_until(lambda: len(frames(lines(log))) >= 10, 60, "10 frames with A")
    os.replace(b, model)
    s.p.send_signal(signal.SIGHUP)
    wait_until(lambda: any(o.get("event") == "model" for o in lines(log)), 60, "the model line")
    n = len(frames(lines(log)))
    wait_until(lambda: len(frames(lines(log))) >= n + 5, 60, "5 frames with B")
    done.set()
    t.join()
    check(statuses and all(x == 200 for x in statuses),
          "serve: %d /predict during the reload, all 200: %r" % (len(statuses),
                                                               sorted(set(statuses))))
    st, _, o = predict()
    check(st == 200 and o and o.get("model") == b_name and
          {t["label"] for t in o.get("top", [])} <= set(b_labels),
          "serve: /predict after the reload answers with B: %d %r" % (st, o))
    st, _, o = s.request("GET", "/latest")
    check(st == 200 and o and o.get("model") == b_name and
          {t["label"] for t in o.get("top", [])} <= set(b_labels),
          "serve: /latest after the reload names B: %d %r" % (st, o))
    check(s.stop() == 0, "serve: exit 0 after SIGTERM")
    check_stream(lines(log), "serve")


def part_post(tmp):
    model, a_name, _ = model_a(tmp)
    b, b_name, b_labels = model_b(tmp)
    b_bytes = open(b, "rb").read()
    data = os.path.join(tmp, "data")
    os.makedirs(os.path.join(data, "models"))
    with open(os.path.join(data, "models", "a.ccm"), "wb") as g:
        g.write(open(MODEL, "rb").read())
    os.environ["CAMCLASS_DATADIR"] = data
    log = os.path.join(tmp, "log.jsonl")
    cmd = host_command(CAMCLASS) + ["--headless", "--backend", "cpu", "--threads", "1",
                                    "--model", model, "--serve", "127.0.0.1:0"]
    s = Server(cmd + ["--input", SELFTEST, "--loop", "--log", log])
    if not check(s.port is not None, "post: no port: %s" % s.stderr()[-300:]):
        s.stop()
        return
    img = open(os.path.join(SELFTEST, sorted(os.listdir(SELFTEST))[0]), "rb").read()
    octet = {"Content-Type": "application/octet-stream"}

    def predict():
        return s.request("POST", "/predict", img, {"Content-Type": "image/png"})
    wait_until(lambda: len(frames(lines(log))) >= 5, 60, "5 frames")
    st, _, o = s.request("POST", "/model", b_bytes, octet)
    check(st == 200 and o and o.get("model") == b_name and o.get("classes") == len(b_labels) and
          o.get("sha256") == hashlib.sha256(b_bytes).hexdigest(),
          "post: a bundle body: 200 naming B: %d %r" % (st, o))
    models = [o for o in lines(log) if o.get("event") == "model"]
    check(len(models) == 1 and models[0].get("model") == b_name and
          models[0].get("labels") == b_labels, "post: one model line naming B: %r" % models)
    st, _, o = predict()
    check(st == 200 and o and o.get("model") == b_name and
          {t["label"] for t in o.get("top", [])} <= set(b_labels),
          "post: /predict answers with B: %d %r" % (st, o))
    st, _, o = s.request("POST", "/model", b"PK\x03\x04 not a bundle", octet)
    check(st == 422 and o and "old model goes on" in o.get("error", ""),
          "post: a bad bundle: 422 with the reason: %d %r" % (st, o))
    st, _, o = predict()
    check(st == 200 and o and o.get("model") == b_name,
          "post: after the bad bundle /predict still answers with B: %d %r" % (st, o))
    for name, want in (("../m.ccm", 400), ("%2Fetc%2Fpasswd", 400), ("a.txt", 400),
                       (".a.ccm", 400), ("nope.ccm", 404)):
        st, _, o = s.request("POST", "/model?path=" + name)
        check(st == want and o and o.get("error"), "post: ?path=%s: %d, want %d: %r"
              % (name, st, want, o))
    st, _, o = s.request("POST", "/model?path=a.ccm")
    check(st == 200 and o and o.get("model") == a_name,
          "post: ?path=a.ccm: 200 naming A: %d %r" % (st, o))
    st, _, _ = s.request("POST", "/model", b_bytes, dict(octet, Host="evil.example"))
    check(st == 421, "post: a foreign Host: %d, want 421" % st)
    st, _, _ = s.request("POST", "/model", b_bytes,
                         dict(octet, Origin="http://evil.example"))
    check(st == 403, "post: a cross-origin POST: %d, want 403" % st)
    st, _, _ = s.request("GET", "/model")
    check(st == 405, "post: GET /model: %d, want 405" % st)
    n = len(frames(lines(log)))
    wait_until(lambda: len(frames(lines(log))) >= n + 5, 60, "5 frames after")
    check(s.stop() == 0, "post: exit 0 after SIGTERM")
    check_stream(lines(log), "post")
    check(len([o for o in lines(log) if o.get("event") == "model"]) == 2,
          "post: two model lines (B, then A)")

    t = Server(cmd + ["--serve-token", "s3cret"])
    if not check(t.port is not None, "post: no port with a token: %s" % t.stderr()[-300:]):
        t.stop()
        return
    st, _, _ = t.request("POST", "/model", b_bytes, octet)
    check(st == 401, "post: no token: %d, want 401" % st)
    st, _, _ = t.request("POST", "/model", b_bytes, dict(octet, Authorization="Bearer nope"))
    check(st == 401, "post: a wrong token: %d, want 401" % st)
    st, _, o = t.request("POST", "/model", b_bytes, dict(octet, Authorization="Bearer s3cret"))
    check(st == 200 and o and o.get("model") == b_name, "post: the token: %d %r" % (st, o))
    check(t.stop() == 0, "post: exit 0 after SIGTERM (token)")


def labels_in(o):
    """Every label an event object names (its top, detection and previous)."""
    got = [t.get("label") for t in o.get("top", [])]
    for k in ("detection", "previous"):
        if isinstance(o.get(k), dict):
            got.append(o[k].get("label"))
    return set(got)


def part_classes(tmp):
    model, _, a_labels = model_a(tmp)
    b_name, b_labels = bundle_info(SMALL_NET)
    check(len(b_labels) < len(a_labels), "classes: B has fewer classes than A")
    log = os.path.join(tmp, "log.jsonl")
    s = Server(host_command(CAMCLASS) + [
        "--headless", "--backend", "cpu", "--threads", "1", "--model", model, "--input",
        SELFTEST, "--loop", "--log", log, "--log-mode", "detections", "--threshold", "0.3",
        "--serve", "127.0.0.1:0"])
    if not check(s.port is not None, "classes: no port: %s" % s.stderr()[-300:]):
        s.stop()
        return
    # A detection of one of A's classes past B's last index is in progress at the switch.
    wait_until(lambda: any(o.get("event") == "detection" and
                         o["detection"].get("index", 0) >= len(b_labels) for o in lines(log)),
             60, "a detection of a class past B's count")
    with open(SMALL_NET, "rb") as f, open(model + ".new", "wb") as g:
        g.write(f.read())
    os.replace(model + ".new", model)
    s.p.send_signal(signal.SIGHUP)
    wait_until(lambda: any(o.get("event") == "model" for o in lines(log)), 60, "the model line")
    time.sleep(1)
    st, _, latest = s.request("GET", "/latest")
    check(s.stop() == 0, "classes: exit 0 after SIGTERM")
    objs = lines(log)
    at = [i for i, o in enumerate(objs) if o.get("event") == "model"]
    if not check(len(at) == 1, "classes: one model line: %d" % len(at)):
        return
    m = objs[at[0]]
    check(m.get("model") == b_name and m.get("labels") == b_labels and
          m.get("classes") == len(b_labels), "classes: the model line names B: %r" % m)
    after = objs[at[0] + 1:]
    stray = [o for o in after if not labels_in(o) <= set(b_labels) or o.get("model") != b_name]
    check(not stray, "classes: lines after the switch name only B and its labels: %r"
          % stray[:2])
    check(after and after[-1].get("event") == "summary", "classes: a summary at the end")
    check(st == 200 and latest and latest.get("model") == b_name and
          labels_in(latest) <= set(b_labels), "classes: /latest names B: %d %r" % (st, latest))


def per_camera(objs, event):
    out = {}
    for o in objs:
        if o.get("event") == event:
            out.setdefault(o.get("camera"), []).append(o)
    return out


def part_cameras(tmp):
    model, a_name, a_labels = model_a(tmp)
    b, b_name, b_labels = model_b(tmp)
    a_bytes = open(MODEL, "rb").read()
    a_sha = hashlib.sha256(a_bytes).hexdigest()
    b_sha = hashlib.sha256(open(b, "rb").read()).hexdigest()
    own = os.path.join(tmp, "c.ccm")
    with open(own, "wb") as g:
        g.write(a_bytes)
    log, config = os.path.join(tmp, "log.jsonl"), os.path.join(tmp, "config.json")
    cams = ["a", "b", "c"]
    with open(config, "w") as f:
        json.dump({"log": log, "log-format": "json", "cameras": [
            {"name": "c", "input": SELFTEST, "loop": True, "model": own},
            {"name": "a", "input": SELFTEST, "loop": True},
            {"name": "b", "input": SELFTEST, "loop": True},
            {"name": "d", "input": os.path.join(SAMPLES, "moving_128x96.y4m")}]}, f)
    s = Server(host_command(CAMCLASS) + [
        "--headless", "--backend", "cpu", "--threads", "1", "--model", model, "--config",
        config, "--serve", "127.0.0.1:0"])
    if not check(s.port is not None, "cameras: no port: %s" % s.stderr()[-300:]):
        s.stop()
        return

    def counts():
        got = per_camera(json_objects(log), "frame")
        return {c: len(got.get(c, [])) for c in cams}

    def all_grow(what, n=10):
        at = counts()
        return wait_until(lambda: all(counts()[c] >= at[c] + n for c in cams), 90,
                          "%d more frames of every camera %s" % (n, what))

    def models_of(cam):
        return per_camera(json_objects(log), "model").get(cam, [])

    all_grow("with A")
    wait_until(lambda: "camera d: its input ended" in s.stderr(), 60, "d's end")
    os.replace(b, model)
    s.p.send_signal(signal.SIGHUP)
    wait_until(lambda: models_of("a") and models_of("b"), 90, "a's and b's model lines")
    wait_until(lambda: "c.ccm unchanged" in s.stderr(), 60, "c's model said unchanged")
    all_grow("after the SIGHUP")
    with open(own, "wb") as f:
        f.write(b"PK\x03\x04 not a bundle any more")
    s.p.send_signal(signal.SIGHUP)
    wait_until(lambda: "model reload:" in s.stderr(), 60, "the broken bundle's line")
    all_grow("after the broken bundle")
    st, _, o = s.request("POST", "/model", a_bytes, {"Content-Type": "application/octet-stream"})
    check(st == 200 and o and o.get("model") == a_name and o.get("sha256") == a_sha,
          "cameras: POST /model: 200 naming A: %d %r" % (st, o))
    wait_until(lambda: len(models_of("a")) == 2 and len(models_of("b")) == 2, 60,
               "a's and b's second model lines")
    all_grow("after POST /model")
    rc = s.stop()
    err = s.stderr()
    check(rc == 0, "cameras: exit %d after SIGTERM, want 0: %s" % (rc, err[-500:]))
    objs = json_objects(log)
    models = per_camera(objs, "model")
    for cam in ("a", "b"):
        got = [(m.get("model"), m.get("sha256"), m.get("labels")) for m in models.get(cam, [])]
        check(got == [(b_name, b_sha, b_labels), (a_name, a_sha, a_labels)],
              "cameras: %s's model lines name B then A: %r" % (cam, [g[:2] for g in got]))
        i = [k for k, o in enumerate(objs) if o.get("camera") == cam and
             o.get("event") == "model"]
        if len(i) == 2:
            mine = [o for o in objs[i[0] + 1:i[1]] if o.get("camera") == cam]
            check(frames(mine) and top_labels(mine) <= set(b_labels),
                  "cameras: %s's frames between its model lines carry B's labels: %r"
                  % (cam, sorted(top_labels(mine))[:5]))
            mine = [o for o in objs[i[1] + 1:] if o.get("camera") == cam]
            check(frames(mine) and top_labels(mine) <= set(a_labels),
                  "cameras: %s's frames after POST /model carry A's labels" % cam)
    check(not models.get("c"), "cameras: c logs no model line: %r" % models.get("c"))
    mine = [o for o in objs if o.get("camera") == "c"]
    check(top_labels(mine) <= set(a_labels), "cameras: every frame of c carries A's labels")
    said = [x for x in err.splitlines() if "model reload:" in x]
    check(len(said) == 1 and "old model goes on" in said[0] and "c.ccm" in said[0],
          "cameras: one stderr line says why c's bundle failed: %r" % said)
    check("reloaded from %s (cameras a, b, d)" % model in err,
          "cameras: stderr says a and b reloaded: %r" % err[-600:])
    for cam in cams:
        seqs = [f["seq"] for f in frames(o for o in objs if o.get("camera") == cam)]
        check(seqs == list(range(len(seqs))), "cameras: %s's seq contiguous from 0" % cam)
    summaries = sorted(o.get("camera") for o in objs if o.get("event") == "summary")
    check(summaries == cams + ["d"], "cameras: one summary per camera: %r" % summaries)
    # Every camera on a model of its own: POST /model has no camera to switch.
    with open(own, "wb") as g:
        g.write(a_bytes)
    with open(config, "w") as f:
        json.dump({"cameras": [{"name": "c", "input": SELFTEST, "loop": True, "model": own}]}, f)
    s = Server(host_command(CAMCLASS) + [
        "--headless", "--backend", "cpu", "--threads", "1", "--model", MODEL, "--config",
        config, "--serve", "127.0.0.1:0"])
    if check(s.port is not None, "cameras: no port (own models): %s" % s.stderr()[-300:]):
        st, _, o = s.request("POST", "/model", a_bytes,
                             {"Content-Type": "application/octet-stream"})
        check(st == 409 and o and "top-level model" in o.get("error", ""),
              "cameras: POST /model with no camera on the top-level model: 409: %d %r" % (st, o))
    check(s.stop() == 0, "cameras: exit 0 after SIGTERM (own models)")


def part_window(tmp):
    """With a window (SDL's offscreen driver, asked for by name): SIGHUP reloads too, on a thread
    beside the drawing one; one model line naming B, frames after it with B's labels."""
    model, _, a_labels = model_a(tmp)
    b, b_name, b_labels = model_b(tmp)
    log, err = os.path.join(tmp, "log.jsonl"), os.path.join(tmp, "stderr")
    env = dict(os.environ, SDL_VIDEODRIVER="offscreen")
    p = start(CAMCLASS, ["--backend", "cpu", "--threads", "1", "--model", model, "--input",
                         SELFTEST, "--loop", "--fps", "30", "--log", log], err, env=env)
    wait_until(lambda: len(frames(lines(log))) >= 5, 60, "5 frames with A in a window")
    os.replace(b, model)
    p.send_signal(signal.SIGHUP)
    wait_until(lambda: any(o.get("event") == "model" for o in lines(log)), 60, "the model line")
    n = len(frames(lines(log)))
    wait_until(lambda: len(frames(lines(log))) >= n + 5, 60, "5 frames with B")
    stop(p, "window")
    text = open(err).read()
    objs = lines(log)
    models = [o for o in objs if o.get("event") == "model"]
    check(len(models) == 1 and models[0].get("model") == b_name, "window: one model line, B's")
    check("not with a window" not in text and "reloaded" in text,
          "window: stderr says it reloaded: %r" % text[-300:])
    after = objs[objs.index(models[0]) + 1:] if models else []
    check(top_labels(after) <= set(b_labels) and frames(after),
          "window: frames after the reload carry B's labels")


def part_window_cameras(tmp):
    """The window's grid of two cameras (SDL's offscreen driver): SIGHUP reloads them beside the
    drawing thread; each camera logs one model line naming B, and its frames after it carry B's
    labels."""
    model, _, _ = model_a(tmp)
    b, b_name, b_labels = model_b(tmp)
    log, err, config = (os.path.join(tmp, n) for n in ("log.jsonl", "stderr", "config.json"))
    cams = ["a", "b"]
    with open(config, "w") as f:
        json.dump({"log": log, "cameras": [{"name": c, "input": SELFTEST, "loop": True}
                                           for c in cams]}, f)
    env = dict(os.environ, SDL_VIDEODRIVER="offscreen")
    p = start(CAMCLASS, ["--backend", "cpu", "--threads", "1", "--model", model, "--config",
                         config, "--fps", "30"], err, env=env)

    def counts():
        got = per_camera(json_objects(log), "frame")
        return {c: len(got.get(c, [])) for c in cams}

    wait_until(lambda: min(counts().values()) >= 5, 60, "5 frames of each camera in the grid")
    os.replace(b, model)
    p.send_signal(signal.SIGHUP)
    wait_until(lambda: all(per_camera(json_objects(log), "model").get(c) for c in cams), 60,
               "each camera's model line")
    at = counts()
    wait_until(lambda: all(counts()[c] >= at[c] + 5 for c in cams), 60, "5 frames each with B")
    stop(p, "window cameras")
    objs = json_objects(log)
    for cam in cams:
        mine = [o for o in objs if o.get("camera") == cam]
        models = [o for o in mine if o.get("event") == "model"]
        check(len(models) == 1 and models[0].get("model") == b_name,
              "window cameras: %s: one model line, B's: %r" % (cam, models))
        after = mine[mine.index(models[0]) + 1:] if models else []
        check(frames(after) and top_labels(after) <= set(b_labels),
              "window cameras: %s's frames after its model line carry B's labels" % cam)


PARTS = {"cameras": part_cameras, "sighup": part_sighup, "window": part_window,
         "window_cameras": part_window_cameras, "serve": part_serve, "post": part_post,
         "classes": part_classes, "corrupt": part_corrupt}

if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        PARTS[PART](tmp)
    sys.exit(summary())
