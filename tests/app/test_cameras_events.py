#!/usr/bin/python3
"""The events of several cameras in one camclass (suite app), one test per part. Three
cameras of a config loop a picture each (blue, red, a thick cross; one camera's name has a space):

- mqtt: against mosquitto on loopback: one connection for the process (the broker sees one
  client), one status topic (camclass/<id>/status, "offline" after the run) and no status per
  camera; each camera's log lines arrive once, in order, on camclass/<id>/<camera>/<event>,
  carrying its camera and its picture's label; Home Assistant gets a retained discovery config
  per camera (homeassistant/sensor/camclass_<id>_<camera>/config, the space as '_') and the
  binary sensors of the camera that asks ("ha-binary"), with HA's field names and types
  (sensor.mqtt, binary_sensor.mqtt, the device block), a unique_id, device and state topic per
  camera, the node's status as availability, whose templates rendered with Jinja2 give each
  camera's label;
  two cameras whose names would be one HA object id are exit 2, one line.
- webhook: the top-level --webhook gets the events of two cameras, each naming its camera with
  its picture's label; the third camera's own "webhook" gets its events only.
- on_event: the top-level --on-event runs for two cameras and the third's own "on-event" for it;
  CAMCLASS_CAMERA is each camera's name with its label; an own program that does not exist is
  exit 2, one line naming the camera, before any model loads.
- gpio: two cameras driving one chip line ("gpiochip0:3" and "/dev/gpiochip0:3"; the --gpio of
  the top level inherited by both) are exit 2 with one line naming both, before any model loads;
  a camera's own line on a chip that is not there is exit 2, one line naming the camera.

    test_cameras_events.py PART CAMCLASS SELFTEST_MODEL SAMPLES_DIR
"""
import json
import os
import signal
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import (bound, check, env_headless, free_port, host_command, in_tmpdir,  # noqa: E402
                    json_objects, lines_of, terminate, wait_for)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mqtt_broker  # noqa: E402

PART, EXE, MODEL, SAMPLES = sys.argv[1:5]
PICTURES = {"door": "004-blue.png", "yard": "018-red.png", "back gate": "008-thick-cross.png"}
LABELS = {"door": "blue", "yard": "red", "back gate": "thick cross"}


def write_config(root, extra=None, cameras=None):
    """A config of the three cameras (each looping its picture) and the top-level extra keys;
    cameras: {name: {key: value}} added to those cameras."""
    cams = []
    for name, picture in PICTURES.items():
        c = {"name": name, "input": os.path.join(SAMPLES, "selftest", picture), "loop": True,
             "fps": 10}
        c.update((cameras or {}).get(name, {}))
        cams.append(c)
    obj = {"model": MODEL, "threshold": 0.3, "log-mode": "detections", "cameras": cams}
    obj.update(extra or {})
    path = os.path.join(root, "config-%d.json" % len(os.listdir(root)))
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


def start(root, config, args=()):
    """camclass on config, its log in root/log.jsonl: (Popen, log path)."""
    log = os.path.join(root, "log-%d.jsonl" % len(os.listdir(root)))
    cmd = host_command(EXE) + ["--headless", "--backend", "cpu", "--config", config, "--log",
                               log] + list(args)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env_headless()), log


def detected(log):
    """{camera: label} of the log's detection lines."""
    out = {}
    for o in json_objects(log):
        if o.get("event") == "detection":
            out.setdefault(o.get("camera"), o["detection"]["label"])
    return out


def run_until_detected(root, config, args=()):
    """Runs camclass until each camera has logged its detection, then SIGTERM: (exit status,
    stderr, log path)."""
    p, log = start(root, config, args)
    ok = wait_for(lambda: len(detected(log)) == len(PICTURES), bound(60))
    check(ok, "not every camera logged a detection: %r" % detected(log))
    time.sleep(0.5)  # the events' receivers at work
    _, err = terminate(p, signal.SIGTERM, 60)
    check(detected(log) == LABELS, "the cameras' detections %r, want %r" % (detected(log), LABELS))
    return p.returncode, err, log


def without_ts(line):
    o = json.loads(line)
    o.pop("ts", None)
    return o


def one_line_exit_2(root, config, args, says, what):
    p, _ = start(root, config, args)
    try:
        _, err = p.communicate(timeout=bound(60))
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    lines = err.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and all(s in err for s in says),
          "%s: exit %d, want 2 and one line with %r: %r" % (what, p.returncode, says, err))
    check(" on cpu " not in err, "%s: a model was loaded before the check" % what)


# ------------------------------------------------------------------------------------------
# mqtt


class Broker(mqtt_broker.Broker):
    """mqtt_broker's mosquitto on a free port, its log (connections) in root, started; with the
    subscribers this test reads."""

    def __init__(self, root):
        super().__init__(root, free_port())
        self.start()

    def sub(self, topic, out, args=()):
        """mosquitto_sub on topic, "TOPIC<TAB>PAYLOAD" lines into out (topics may hold spaces)."""
        return subprocess.Popen(["mosquitto_sub", "-p", str(self.port), "-h", "127.0.0.1", "-q",
                                 "1", "-F", "%t\t%p", "-t", topic] + list(args),
                                stdout=open(out, "w"), stderr=subprocess.DEVNULL)

    def retained(self, root, topic):
        out = os.path.join(root, "retained.txt")
        p = self.sub(topic, out, ["--retained-only", "-W", "2"])
        p.wait(bound(30))
        return dict(ln.split("\t", 1) for ln in lines_of(out) if "\t" in ln)

def check_ha_config(topic, c, camera):
    """A discovery config against the field names and types of Home Assistant's MQTT discovery
    documentation (sensor.mqtt / binary_sensor.mqtt: strings; the device block: identifiers a list
    of strings, name, manufacturer, model, sw_version strings), with the camera's topics."""
    strings = ["name", "unique_id", "state_topic", "availability_topic", "payload_available",
               "payload_not_available", "value_template"]
    check(all(isinstance(c.get(k), str) and c[k] for k in strings),
          "ha: %s lacks a string of %s: %r" % (topic, strings, c))
    check(c.get("state_topic") == "camclass/node1/%s/state" % camera and
          c.get("availability_topic") == "camclass/node1/status" and
          (c.get("payload_available"), c.get("payload_not_available")) == ("online", "offline"),
          "ha: %s topics/availability %r" % (topic, c))
    if "/sensor/" in topic:
        check(c.get("json_attributes_topic") == c.get("state_topic"),
              "ha: %s json_attributes_topic %r" % (topic, c.get("json_attributes_topic")))
    d = c.get("device", {})
    check(isinstance(d.get("identifiers"), list) and d["identifiers"] and
          all(isinstance(i, str) for i in d["identifiers"]) and
          all(isinstance(d.get(k), str) for k in ["name", "manufacturer", "model", "sw_version"]),
          "ha: %s device block %r" % (topic, d))
    check(camera in d.get("name", ""), "ha: %s device name %r lacks the camera" % (topic, d))
    obj = topic.split("/")[-2]
    check(all(ch.isalnum() or ch in "_-" for ch in obj) and obj == c.get("unique_id"),
          "ha: %s object id is not [a-zA-Z0-9_-] and the unique_id %r" % (topic, c))


def check_discovery(root, broker):
    import jinja2
    configs = {t: json.loads(v) for t, v in broker.retained(root, "homeassistant/#").items()}
    objects = {"door": "camclass_node1_door", "yard": "camclass_node1_yard",
               "back gate": "camclass_node1_back_gate"}
    want = {"homeassistant/sensor/%s/config" % o for o in objects.values()}
    want |= {"homeassistant/binary_sensor/camclass_node1_yard_red0/config",
             "homeassistant/binary_sensor/camclass_node1_yard_blue1/config"}
    check(set(configs) == want, "ha: config topics %r, want %r" % (sorted(configs), sorted(want)))
    states = {cam: json.loads(broker.retained(root, "camclass/node1/%s/state" % cam).get(
        "camclass/node1/%s/state" % cam, "{}")) for cam in PICTURES}
    env = jinja2.Environment()
    for t, c in configs.items():
        cam = [k for k, o in objects.items() if t.split("/")[2].startswith(o + "_") or
               t.split("/")[2] == o]
        cam = max(cam, key=len) if cam else None
        check(cam is not None, "ha: %s is no camera's" % t)
        if cam is None:
            continue
        check_ha_config(t, c, cam)
        got = env.from_string(c["value_template"]).render(value_json=states[cam]).strip()
        want_v = ("ON" if c["name"] == LABELS[cam] else "OFF") if "binary" in t else LABELS[cam]
        check(got == want_v, "ha: %s renders %r for %r, want %r" % (t, got, states[cam], want_v))
    ids = [c.get("unique_id") for c in configs.values()]
    check(len(set(ids)) == len(ids), "ha: unique ids repeat: %r" % ids)
    devices = {json.dumps(c["device"]["identifiers"]) for c in configs.values() if "device" in c}
    check(len(devices) == len(PICTURES), "ha: %d devices for 3 cameras" % len(devices))


def test_mqtt(root):
    broker = Broker(root)
    sub_out = os.path.join(root, "sub.txt")
    sub = broker.sub("camclass/#", sub_out)
    try:
        time.sleep(0.3)
        config = write_config(root, {"mqtt": "mqtt://127.0.0.1:%d" % broker.port,
                                     "device-id": "node1"}, {"yard": {"ha-binary": "red,blue"}})
        p, log = start(root, config)
        ok = wait_for(lambda: len(detected(log)) == len(PICTURES), bound(60))
        check(ok, "mqtt: not every camera logged a detection: %r" % detected(log))
        time.sleep(0.5)
        check_discovery(root, broker)
        _, err = terminate(p, signal.SIGTERM, 60)
        check(p.returncode == 0, "mqtt: exit %d: %s" % (p.returncode, err[-400:]))
        wait_for(lambda: any(ln == "camclass/node1/status\toffline" for ln in lines_of(sub_out)),
                 bound(10))
    finally:
        sub.terminate()
        sub.wait()
        broker.stop()
    got = [ln.split("\t", 1) for ln in lines_of(sub_out) if "\t" in ln]
    status = [(t, v) for t, v in got if t.endswith("/status")]
    check({t for t, _ in status} == {"camclass/node1/status"} and status[-1][1] == "offline",
          "mqtt: status topics %r" % status)
    clients = [ln for ln in lines_of(broker.log) if "New client connected" in ln and
               "camclass-node1" in ln]
    check(len(clients) == 1, "mqtt: %d camclass connections, want one: %r" % (len(clients),
                                                                              clients))
    for cam in PICTURES:
        prefix = "camclass/node1/%s/" % cam
        events = [(t[len(prefix):], without_ts(v)) for t, v in got
                  if t.startswith(prefix) and not t.endswith("/state")]
        want = [without_ts(ln) for ln in lines_of(log) if json.loads(ln).get("camera") == cam]
        check(len(want) >= 2 and [o for _, o in events] == want,
              "mqtt: %s: %d events received for %d log lines: %r" % (cam, len(events), len(want),
                                                                    events[:3]))
        check(all(t == o.get("event") and o.get("camera") == cam for t, o in events),
              "mqtt: %s: an event on another topic or camera" % cam)
        labels = {o["detection"]["label"] for t, o in events if t == "detection"}
        check(labels == {LABELS[cam]}, "mqtt: %s detected %r" % (cam, labels))
    stray = [t for t, _ in got if t.count("/") == 2 and t != "camclass/node1/status"]
    check(not stray, "mqtt: events on the node's topics with several cameras: %r" % stray[:3])
    # Names that Home Assistant's object ids cannot tell apart.
    bad = write_config(root, {"mqtt": "mqtt://127.0.0.1:1"}, None)
    with open(bad) as f:
        obj = json.load(f)
    obj["cameras"][0]["name"], obj["cameras"][1]["name"] = "front door", "front_door"
    with open(bad, "w") as f:
        json.dump(obj, f)
    one_line_exit_2(root, bad, [], ['"front door"', '"front_door"', "Home Assistant"],
                    "mqtt: names alike for HA")


# ------------------------------------------------------------------------------------------
# webhook


def test_webhook(root):
    import http.server
    import threading

    got, lock = [], threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                got.append((self.path, json.loads(body)))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    port = free_port()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d" % port
    config = write_config(root, {"webhook": url + "/all"},
                          {"back gate": {"webhook": url + "/gate"}})
    rc, err, log = run_until_detected(root, config)
    server.shutdown()
    check(rc == 0, "webhook: exit %d: %s" % (rc, err[-400:]))
    by_path = {}
    for path, o in got:
        by_path.setdefault(path, []).append(o)
    cams = {p: {o.get("camera") for o in objs} for p, objs in by_path.items()}
    check(cams == {"/all": {"door", "yard"}, "/gate": {"back gate"}},
          "webhook: cameras by path %r" % cams)
    for cam in PICTURES:
        objs = [o for _, o in got if o.get("camera") == cam]
        want = [without_ts(ln) for ln in lines_of(log) if json.loads(ln).get("camera") == cam
                and json.loads(ln)["event"] != "stats"]
        check([without_ts(json.dumps(o)) for o in objs] == want,
              "webhook: %s: %d POSTs for %d log lines" % (cam, len(objs), len(want)))
        labels = {o["detection"]["label"] for o in objs if o["event"] == "detection"}
        check(labels == {LABELS[cam]}, "webhook: %s detected %r" % (cam, labels))


# ------------------------------------------------------------------------------------------
# on_event


def hook(root, name):
    path, out = os.path.join(root, name), os.path.join(root, name + ".txt")
    with open(path, "w") as f:
        f.write('#!/bin/sh\nprintf "%%s|%%s|%%s\\n" "$CAMCLASS_CAMERA" "$CAMCLASS_EVENT" '
                '"$CAMCLASS_LABEL" >> "%s"\n' % out)
    os.chmod(path, stat.S_IRWXU)
    return path, out


def test_on_event(root):
    top, top_out = hook(root, "top-hook")
    own, own_out = hook(root, "gate-hook")
    config = write_config(root, {"on-event": top}, {"back gate": {"on-event": own}})
    rc, err, _ = run_until_detected(root, config)
    check(rc == 0, "on_event: exit %d: %s" % (rc, err[-400:]))
    runs = {name: [tuple(ln.split("|")) for ln in lines_of(out)]
            for name, out in [("top", top_out), ("own", own_out)]}
    check(sorted(runs["top"]) == [("door", "start", "blue"), ("yard", "start", "red")],
          "on_event: the top-level program's runs %r" % runs["top"])
    check(runs["own"] == [("back gate", "start", "thick cross")],
          "on_event: the camera's own program's runs %r" % runs["own"])
    check(err.count("camera yard: ") >= 1 and err.count("camera back gate: ") >= 1,
          "on_event: the programs' exit lines do not name their camera:\n" + err[-600:])
    config = write_config(root, {}, {"yard": {"on-event": os.path.join(root, "nope")}})
    one_line_exit_2(root, config, [], ['camera "yard"', "--on-event", "nope"],
                    "on_event: a missing own program")


# ------------------------------------------------------------------------------------------
# gpio


def test_gpio(root):
    config = write_config(root, {}, {"door": {"gpio": ["blue=gpiochip0:3"]},
                                     "yard": {"gpio": ["red=/dev/gpiochip0:3"]}})
    one_line_exit_2(root, config, [], ['"door"', '"yard"', "gpiochip0:3", "own lines"],
                    "gpio: two cameras on one line")
    config = write_config(root, {"gpio": ["blue=gpiochip7:1"]},
                          {"back gate": {"gpio": ["thick cross=gpiochip7:2"]}})
    one_line_exit_2(root, config, [], ['"door"', '"yard"', "gpiochip7:1"],
                    "gpio: the top-level --gpio inherited by two cameras")
    config = write_config(root, {}, {"yard": {"gpio": ["red=nochip9:1"]}})
    one_line_exit_2(root, config, [], ["camera yard", "nochip9"],
                    "gpio: a camera's line on a chip that is not there")


PARTS = {"mqtt": test_mqtt, "webhook": test_webhook, "on_event": test_on_event,
         "gpio": test_gpio}

if __name__ == "__main__":
    sys.exit(in_tmpdir("camclass-events-", PARTS[PART]))
