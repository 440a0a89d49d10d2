#!/usr/bin/python3
"""camclass --mqtt against a real broker (Eclipse Mosquitto) on loopback (suite app):

- bad settings: a URL that is not mqtt(s)://, a password in the URL, a bad port, a device id
  with '/', a missing or directory --mqtt-auth, --mqtt-ca with mqtt:// — exit 2, one line
  naming the problem, nothing on stdout;
- outage: camclass logs detections (--log FILE --log-mode detections) and publishes them; the
  broker is stopped mid-run (events go on being logged and wait in camclass's queue) and
  started again: camclass says once that the connection is lost and once that it is back, and
  a subscriber with a persistent session receives every line of the log file (detection,
  clear, stats, summary; compared without "ts") exactly once, in order, on
  camclass/<device-id>/<event>; the retained status is "offline" after the run, "online"
  during it;
- late broker: no broker at start — camclass runs and says it keeps retrying; the broker comes
  up 1.5 s later and every event from before arrives;
- last will (the broker and device id set in a --config file, as the service does it): camclass
  killed with SIGKILL — the broker publishes "offline" on its status topic;
- mqtts:// with a user and password: a second broker with a TLS listener (a CA and server
  certificate made here with openssl) and a password file (mosquitto_passwd): with --mqtt-ca
  and the right --mqtt-auth every logged event arrives; a wrong password is refused with one
  line naming --mqtt-auth; without --mqtt-ca (the system CAs do not know this one) one line
  says the certificate failed to verify. The run goes on and exits 0 in each case.
- Home Assistant: retained discovery configs (a sensor, a binary sensor per --ha-binary label)
  with HA's field names and types, whose templates rendered with Jinja2 give the retained
  state's label and ON/OFF; a label with a quote is exit 2, one line;
- reload: SIGHUP after the --model file was rewritten with other labels: the log's "model" line
  arrives once on camclass/<device-id>/model, in order with every other event.

    test_mqtt.py CAMCLASS MODEL SELFTEST_DIR

Every process is bounded in time; the broker and subscriber are killed at the end.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import (check, env_headless, free_port, host_command, lines_of, relabeled,  # noqa: E402
                    summary, wait_for)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mqtt_broker import Broker  # noqa: E402

EXE, MODEL, FRAMES = sys.argv[1:4]


def camclass(args, log=None, err_path=None, model=MODEL):
    """camclass on FRAMES, looped; its stderr to err_path when given (to be read while it runs:
    stderr_has), else a pipe that finish() reads."""
    cmd = host_command(EXE) + ["--model", model, "--backend", "cpu", "--headless", "--input", FRAMES, "--loop",
           "--fps", "20", "--threshold", "0.3"] + args
    if log:
        cmd += ["--log", log, "--log-mode", "detections"]
    else:
        cmd += ["--log", os.devnull]
    err = open(err_path, "w") if err_path else subprocess.PIPE
    try:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True,
                                env=env_headless())
    finally:
        if err_path:
            err.close()


def stderr_has(err_path, text):
    with open(err_path) as f:
        return text in f.read()


def finish(p, sig=signal.SIGTERM, err_path=None):
    p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        check(False, "camclass did not end within 30 s of signal %d" % sig)
    if err_path:
        with open(err_path) as f:
            err = f.read()
    return p.returncode, out, err


def messages(path, device):
    """The subscriber's lines "topic payload" for device: [(event, payload)]."""
    got = []
    prefix = "camclass/%s/" % device
    for ln in lines_of(path):
        topic, _, payload = ln.partition(" ")
        if topic.startswith(prefix):
            got.append((topic[len(prefix):], payload))
    return got


def without_ts(line):
    o = json.loads(line)
    o.pop("ts", None)
    return o


def compare_with_log(what, log, got):
    """Every log line arrives once, in order, on its event's topic; nothing else but status."""
    want = [without_ts(ln) for ln in lines_of(log)]
    events = [(t, without_ts(p)) for t, p in got if t not in ("status", "state")]
    check(len(want) >= 6, "%s: only %d lines in the log" % (what, len(want)))
    check(want and want[-1]["event"] == "summary", "%s: the log ends without a summary" % what)
    check(all(t == o.get("event") for t, o in events),
          "%s: an event on another event's topic: %r" % (what, [(t, o.get("event"))
                                                                  for t, o in events][:5]))
    check([o for _, o in events] == want,
          "%s: %d events received for %d log lines; first differences: %r" %
          (what, len(events), len(want),
           [(a.get("event"), a.get("seq"), b.get("event"), b.get("seq"))
            for a, b in zip([o for _, o in events], want) if a != b][:3]))
    if [o for _, o in events] != want:
        print("  received: %r" % [(o.get("event"), o.get("seq")) for _, o in events])
        print("  logged:   %r" % [(o.get("event"), o.get("seq")) for o in want])


def bad_settings(tmp):
    auth_dir = os.path.join(tmp, "authdir")
    os.mkdir(auth_dir)
    cases = [
        (["--mqtt", "http://127.0.0.1:1883"], "must start with mqtt:// or mqtts://"),
        (["--mqtt", "mqtt://user:secret@127.0.0.1"], "put them in a file given with --mqtt-auth"),
        (["--mqtt", "mqtt://127.0.0.1:99999"], "the port must be a number from 1 to 65535"),
        (["--mqtt", "mqtt://"], "no host name"),
        (["--mqtt", "mqtt://127.0.0.1/topic"], "unexpected \"topic\" after the address"),
        (["--mqtt", "mqtt://127.0.0.1", "--device-id", "cam/1"], "--device-id \"cam/1\": use"),
        (["--mqtt", "mqtt://127.0.0.1", "--mqtt-auth", os.path.join(tmp, "none")],
         "--mqtt-auth %s: No such file or directory" % os.path.join(tmp, "none")),
        (["--mqtt", "mqtt://127.0.0.1", "--mqtt-auth", auth_dir], "is a directory"),
        (["--mqtt", "mqtt://127.0.0.1", "--mqtt-ca", "/etc/hostname"],
         "only mqtts:// URLs use a CA file"),
    ]
    for args, want in cases:
        p = subprocess.run(host_command(EXE) + ["--model", MODEL, "--backend", "cpu", "--headless", "--input",
                            FRAMES] + args, capture_output=True, text=True, timeout=60,
                           env=env_headless())
        lines = [ln for ln in p.stderr.split("\n") if ln]
        check(p.returncode == 2 and p.stdout == "" and len(lines) == 1 and want in lines[0],
              "bad settings %r: exit %d, stdout %d bytes, lines %r (want one with %r)" %
              (args, p.returncode, len(p.stdout), lines, want))


def outage(tmp, broker, sub_out):
    log = os.path.join(tmp, "outage.jsonl")
    p = camclass(["--mqtt", "mqtt://127.0.0.1:%d" % broker.port, "--device-id", "dev1"], log)
    check(wait_for(lambda: len(lines_of(log)) >= 3, 30), "outage: no detections logged")
    check(wait_for(lambda: len(messages(sub_out, "dev1")) >= 3, 10),
          "outage: nothing received before the outage")
    broker.stop()
    n = len(lines_of(log))
    check(wait_for(lambda: len(lines_of(log)) >= n + 3, 30),
          "outage: detections stopped while the broker was away")
    broker.start()
    # Reconnect back-off: 1, 2, 4 s ... after the loss.
    reconnected = wait_for(lambda: len(messages(sub_out, "dev1")) > n + 3, 60)
    check(reconnected, "outage: the events of the outage did not arrive after the restart")
    rc, _, err = finish(p)
    check(rc == 0, "outage: exit %d: %s" % (rc, err))
    lost = [ln for ln in err.split("\n") if "is lost" in ln]
    back = [ln for ln in err.split("\n") if "connected again" in ln]
    check(len(lost) == 1 and len(back) == 1,
          "outage: want one 'lost' and one 'connected again' line: %r" % err)
    check(wait_for(lambda: (messages(sub_out, "dev1") or [("", "")])[-1] == ("status", "offline"),
                   10), "outage: the last message is not status offline: %r" %
          messages(sub_out, "dev1")[-3:])
    got = messages(sub_out, "dev1")
    check(got and got[0] == ("status", "online"), "outage: first message %r" % got[:1])
    compare_with_log("outage", log, got)


def late_broker(tmp, broker, sub_out):
    log, err_path = os.path.join(tmp, "late.jsonl"), os.path.join(tmp, "late.err")
    p = camclass(["--mqtt", "mqtt://127.0.0.1:%d" % broker.port, "--device-id", "dev3"], log,
                 err_path)
    check(wait_for(lambda: len(lines_of(log)) >= 3, 60), "late broker: no detections logged")
    # The broker starts once camclass has said it cannot reach it (not after a fixed 1.5 s).
    retrying = "cannot reach the broker at 127.0.0.1:%d yet" % broker.port
    check(wait_for(lambda: stderr_has(err_path, retrying), 60),
          "late broker: no line saying it retries: %r" % open(err_path).read())
    broker.start()
    check(wait_for(lambda: len(messages(sub_out, "dev3")) >= 4, 60),
          "late broker: events did not arrive once the broker was up")
    rc, _, err = finish(p, err_path=err_path)
    check(rc == 0, "late broker: exit %d: %s" % (rc, err))
    check("cannot reach the broker at 127.0.0.1:%d yet" % broker.port in err,
          "late broker: no line saying it retries: %r" % err)
    check(wait_for(lambda: (messages(sub_out, "dev3") or [("", "")])[-1] == ("status", "offline"),
                   10), "late broker: not offline at the end")
    compare_with_log("late broker", log, messages(sub_out, "dev3"))


def last_will(tmp, broker):
    # Set in the config file, as the service enables MQTT (/etc/camclass/config.json).
    config = os.path.join(tmp, "config.json")
    with open(config, "w") as f:
        json.dump({"mqtt": "mqtt://127.0.0.1:%d" % broker.port, "device-id": "dev2"}, f)
    p = camclass(["--config", config])
    seen = subprocess.run(["mosquitto_sub", "-p", str(broker.port), "-h", "127.0.0.1", "-C", "1",
                           "-W", "20", "-t", "camclass/dev2/status"], capture_output=True,
                          text=True, timeout=30)
    check(seen.stdout.strip() == "online", "last will: status %r before the kill" % seen.stdout)
    p.kill()
    p.communicate(timeout=30)
    after = subprocess.run(["mosquitto_sub", "-p", str(broker.port), "-h", "127.0.0.1", "-C",
                            "1", "-W", "10", "-t", "camclass/dev2/status"], capture_output=True,
                           text=True, timeout=30)
    check(after.stdout.strip() == "offline",
          "last will: retained status %r after SIGKILL, want offline" % after.stdout)


def reload(tmp, broker, sub_out):
    """SIGHUP after the --model file was rewritten with other labels: the log's "model" line
    arrives on camclass/<id>/model, in order with every other event."""
    model = os.path.join(tmp, "reload.ccm")
    with open(MODEL, "rb") as f, open(model, "wb") as g:
        g.write(f.read())
    log = os.path.join(tmp, "reload.jsonl")
    p = camclass(["--mqtt", "mqtt://127.0.0.1:%d" % broker.port, "--device-id", "dev4"], log,
                 model=model)
    check(wait_for(lambda: len(lines_of(log)) >= 3, 30), "reload: no detections logged")
    relabeled(MODEL, model + ".new")
    os.replace(model + ".new", model)
    p.send_signal(signal.SIGHUP)
    check(wait_for(lambda: any(t == "model" for t, _ in messages(sub_out, "dev4")), 30),
          "reload: no message on camclass/dev4/model")
    n = len(lines_of(log))
    check(wait_for(lambda: len(lines_of(log)) >= n + 2, 30), "reload: no detections after")
    rc, _, err = finish(p)
    check(rc == 0, "reload: exit %d: %s" % (rc, err))
    check(wait_for(lambda: (messages(sub_out, "dev4") or [("", "")])[-1] == ("status", "offline"),
                   10), "reload: the last message is not status offline")
    got = messages(sub_out, "dev4")
    model_msgs = [json.loads(x) for t, x in got if t == "model"]
    check(len(model_msgs) == 1 and model_msgs[0].get("labels", [""])[0] == "reload-0",
          "reload: one model message with the new labels: %r" % model_msgs)
    compare_with_log("reload", log, got)


def retained(broker, topic, count=None):
    """The retained messages on topic (a filter): {topic: payload}; count: stop after that
    many, else take what comes within 2 s."""
    limit = ["-C", str(count), "-W", "10"] if count else ["-W", "2"]
    r = subprocess.run(["mosquitto_sub", "-p", str(broker.port), "-h", "127.0.0.1", "-v",
                        "--retained-only", "-t", topic] + limit, capture_output=True,
                       text=True, timeout=30)
    return dict(ln.split(" ", 1) for ln in r.stdout.splitlines() if " " in ln)


def check_ha_config(topic, c, device):
    """A discovery config against the fields and types of Home Assistant's MQTT discovery
    documentation (sensor.mqtt / binary_sensor.mqtt, the device block)."""
    strings = ["name", "unique_id", "state_topic", "availability_topic", "payload_available",
               "payload_not_available", "value_template"]
    check(all(isinstance(c.get(k), str) and c[k] for k in strings),
          "ha: %s lacks a string of %s: %r" % (topic, strings, c))
    check(c.get("state_topic") == "camclass/%s/state" % device and
          c.get("availability_topic") == "camclass/%s/status" % device and
          (c.get("payload_available"), c.get("payload_not_available")) == ("online", "offline"),
          "ha: %s topics/availability %r" % (topic, c))
    d = c.get("device", {})
    check(isinstance(d.get("identifiers"), list) and all(isinstance(i, str) for i in
                                                        d["identifiers"]) and
          all(isinstance(d.get(k), str) for k in ["name", "manufacturer", "model", "sw_version"]),
          "ha: %s device block %r" % (topic, d))


def home_assistant(tmp, broker):
    """--ha-binary: a retained discovery config per entity whose fields match HA's schema and
    whose templates, rendered with Jinja2 as HA does, give the label and ON/OFF of the retained
    state; the state follows the detections; the configs are gone from nothing at exit (kept
    retained) and the availability goes offline."""
    import jinja2
    log = os.path.join(tmp, "ha.jsonl")
    p = camclass(["--mqtt", "mqtt://127.0.0.1:%d" % broker.port, "--device-id", "dev5.a",
                  "--ha-binary", "thin cross,blue"], log)
    check(wait_for(lambda: len(lines_of(log)) >= 3, 30), "ha: no detections logged")
    configs = {k: v for k, v in retained(broker, "homeassistant/#").items()
               if "camclass_dev5_a" in k}
    want = {"homeassistant/sensor/camclass_dev5_a/config",
            "homeassistant/binary_sensor/camclass_dev5_a_thin_cross0/config",
            "homeassistant/binary_sensor/camclass_dev5_a_blue1/config"}
    check(set(configs) == want, "ha: config topics %r" % sorted(configs))
    parsed = {t: json.loads(v) for t, v in configs.items()}
    for t, c in parsed.items():
        check_ha_config(t, c, "dev5.a")
    check(len({c.get("unique_id") for c in parsed.values()}) == len(parsed), "ha: unique ids")
    env = jinja2.Environment()
    # Wait until a label of --ha-binary is detected, then render every template with the state.
    state = {}
    for _ in range(100):
        state = json.loads(retained(broker, "camclass/dev5.a/state", 1).get(
            "camclass/dev5.a/state", "{}"))
        if state.get("label") in ("thin cross", "blue"):
            break
        time.sleep(0.1)
    check(isinstance(state.get("label"), str) and isinstance(state.get("score"), (int, float))
          and isinstance(state.get("model"), str), "ha: state %r" % state)
    for t, c in parsed.items():
        got = env.from_string(c["value_template"]).render(value_json=state).strip()
        if "binary_sensor" in t:
            want_v = "ON" if c["name"] == state.get("label") else "OFF"
        else:
            want_v = state.get("label")
        check(got == want_v, "ha: %s renders %r for state %r, want %r" % (t, got, state, want_v))
    rc, _, err = finish(p)
    check(rc == 0, "ha: exit %d: %s" % (rc, err))
    bad = subprocess.run(host_command(EXE) + ["--headless", "--mqtt", "mqtt://127.0.0.1:1",
                                              "--ha-binary", "it's"],
                         capture_output=True, text=True, timeout=60, env=env_headless())
    check(bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and
          "--ha-binary" in bad.stderr, "ha: a label with a quote: %d %r" % (bad.returncode,
                                                                             bad.stderr))


def tls_auth(tmp):
    d = os.path.join(tmp, "tls")
    os.mkdir(d)
    f = {k: os.path.join(d, k) for k in ("ca.key", "ca.crt", "srv.key", "srv.csr", "srv.crt",
                                          "ext", "pw", "auth", "bad")}
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=60)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    f["ca.key"], "-out", f["ca.crt"], "-days", "2", "-subj",
                    "/CN=camclass test CA"], **quiet)
    subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f["srv.key"],
                    "-out", f["srv.csr"], "-subj", "/CN=localhost"], **quiet)
    with open(f["ext"], "w") as fh:
        fh.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    subprocess.run(["openssl", "x509", "-req", "-in", f["srv.csr"], "-CA", f["ca.crt"], "-CAkey",
                    f["ca.key"], "-CAcreateserial", "-out", f["srv.crt"], "-days", "2",
                    "-extfile", f["ext"]], **quiet)
    subprocess.run(["mosquitto_passwd", "-c", "-b", f["pw"], "cam", "s3cret pass"], **quiet)
    for name, text in (("auth", "cam\ns3cret pass\n"), ("bad", "cam\nwrong\n")):
        with open(f[name], "w") as fh:
            fh.write(text)
        os.chmod(f[name], 0o600)
    broker = Broker(tmp, free_port(), "tls", "cafile %s\ncertfile %s\nkeyfile %s\n"
                    "password_file %s\nallow_anonymous false\n" %
                    (f["ca.crt"], f["srv.crt"], f["srv.key"], f["pw"]))
    url = "mqtts://localhost:%d" % broker.port
    sub_out = os.path.join(tmp, "tls-sub.txt")
    sub = None
    try:
        broker.start()
        sub = subprocess.Popen(["mosquitto_sub", "-p", str(broker.port), "-h", "localhost",
                                "--cafile", f["ca.crt"], "-u", "cam", "-P", "s3cret pass", "-c",
                                "-i", "camclass-test-tls-sub", "-q", "1", "-v", "-t",
                                "camclass/#"], stdout=open(sub_out, "w"),
                               stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        log = os.path.join(tmp, "tls.jsonl")
        p = camclass(["--mqtt", url, "--mqtt-ca", f["ca.crt"], "--mqtt-auth", f["auth"],
                      "--device-id", "tls1"], log)
        check(wait_for(lambda: len(lines_of(log)) >= 6, 30), "tls: no detections logged")
        rc, _, err = finish(p)
        check(rc == 0 and "connected to localhost:%d" % broker.port in err,
              "tls: exit %d, no 'connected' line: %r" % (rc, err))
        check(wait_for(lambda: (messages(sub_out, "tls1") or [("", "")])[-1] ==
                       ("status", "offline"), 10), "tls: not offline at the end")
        compare_with_log("tls", log, messages(sub_out, "tls1"))
        for what, args, want in (
                ("wrong password", ["--mqtt-ca", f["ca.crt"], "--mqtt-auth", f["bad"]],
                 "refused the connection (Connection Refused: not authorised); retrying with "
                 "back-off (check --mqtt-auth)"),
                ("unknown CA", ["--mqtt-auth", f["auth"]], "certificate verify failed")):
            # SIGTERM 2.5 s after camclass said it once (its back-off retries meanwhile, and
            # says nothing more), not 2.5 s after its start, which a loaded machine may spend
            # loading the model.
            err_path = os.path.join(tmp, "tls2.err")
            p = camclass(["--mqtt", url, "--device-id", "tls2"] + args, err_path=err_path)
            check(wait_for(lambda: stderr_has(err_path, want), 60),
                  "tls, %s: no line with %r in 60 s" % (what, want))
            time.sleep(2.5)
            rc, _, err = finish(p, err_path=err_path)
            said = [ln for ln in err.split("\n") if want in ln]
            check(rc == 0 and len(said) == 1,
                  "tls, %s: exit %d, want one line with %r: %r" % (what, rc, want, err))
        check(messages(sub_out, "tls2") == [], "tls: events of a refused client arrived")
    finally:
        if sub:
            sub.kill()
            sub.wait()
        broker.stop()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        bad_settings(tmp)
        broker = Broker(tmp, free_port())
        sub_out = os.path.join(tmp, "sub.txt")
        sub = None
        try:
            broker.start()
            # A persistent session (-c, QoS 1): what is published while the subscriber is
            # reconnecting after a broker restart waits for it on the broker.
            sub = subprocess.Popen(["mosquitto_sub", "-p", str(broker.port), "-h", "127.0.0.1",
                                    "-c", "-i", "camclass-test-sub", "-q", "1", "-v", "-t",
                                    "camclass/#"], stdout=open(sub_out, "w"),
                                   stderr=subprocess.DEVNULL)
            time.sleep(0.5)
            outage(tmp, broker, sub_out)
            broker.stop()
            late_broker(tmp, broker, sub_out)
            last_will(tmp, broker)
            reload(tmp, broker, sub_out)
            home_assistant(tmp, broker)
            tls_auth(tmp)
        finally:
            if sub:
                sub.kill()
                sub.wait()
            broker.stop()
    return summary()


if __name__ == "__main__":
    sys.exit(main())
