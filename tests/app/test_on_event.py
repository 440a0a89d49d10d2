"""camclass --on-event end to end: over the 59 pictures of the self-test sample (detections
mode, --threshold 0.6), the program sees one start per "detection" line of the log and one
end per "clear" line, in the same order, with the same labels (an event that came while the
program still ran is said on stderr and counted); a missing program is exit 2 with one line
before any model loads.

    test_on_event.py CAMCLASS SAMPLES_DIR MODEL
"""
import json
import os
import stat
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, lines_of, run, summary  # noqa: E402

camclass, samples, model = sys.argv[1:4]


def hook_script(tmp):
    path = os.path.join(tmp, "hook")
    with open(path, "w") as f:
        f.write('#!/bin/sh\nprintf "%s|%s|%s\\n" "$CAMCLASS_EVENT" "$CAMCLASS_LABEL" '
                '"${CAMCLASS_PREVIOUS-unset}" >> "' + os.path.join(tmp, "events") + '"\n')
    os.chmod(path, stat.S_IRWXU)
    return path


def expected_events(log):
    """(event, label, previous) per detection/clear line of the log."""
    out = []
    for line in lines_of(log):
        o = json.loads(line)
        if o["event"] == "detection":
            prev = o["previous"]["label"] if "previous" in o else "unset"
            out.append(("start", o["detection"]["label"], prev))
        elif o["event"] == "clear":
            out.append(("end", o["detection"]["label"], "unset"))
    return out


def test_events(tmp):
    log, events = os.path.join(tmp, "log.jsonl"), os.path.join(tmp, "events")
    rc, _, err = run(camclass, ["--headless", "--input", samples, "--model", model, "--backend", "cpu",
                       "--fps", "10", "--threshold", "0.6", "--log", log,
                       "--on-event", hook_script(tmp)], timeout=180)
    check(rc == 0, "exit status %d: %s" % (rc, err[-400:]))
    want = expected_events(log)
    got = [tuple(ln.split("|")) for ln in lines_of(events)] if os.path.exists(events) else []
    skipped = err.count("was not passed")
    check(len(want) >= 5, "the sample gave only %d detection lines" % len(want))
    check(len(got) + skipped == len(want),
          "%d runs + %d skipped for %d detection/clear lines" % (len(got), skipped, len(want)))
    it = iter(want)
    check(all(g in it for g in got), "the runs are not the log's events in order:\n%s\n%s"
          % (got[:8], want[:8]))
    check(err.count(": exit status 0 after") == len(got),
          "not one exit-status line per run:\n" + err[-600:])


def test_missing_program(tmp):
    rc, _, err = run(camclass, ["--headless", "--input", samples, "--model", model,
                                "--on-event", os.path.join(tmp, "nope")], timeout=60)
    lines = err.strip().splitlines()
    check(rc == 2, "missing program: exit status %d" % rc)
    check(len(lines) == 1 and "no such file" in lines[0] and "--on-event" in lines[0],
          "missing program: not one line naming it: %r" % lines)


with tempfile.TemporaryDirectory() as tmp:
    test_events(tmp)
    test_missing_program(tmp)
sys.exit(summary())
