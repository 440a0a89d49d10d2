#!/usr/bin/python3
"""camclass-capture's command line without a camera (suite app): --list is --list-cameras (it
was "option '--list' is ambiguous" after the usage); an unknown option, an unsafe
--label, --label without its folder, a folder without --label, a bad --count, --interval, --frames, --slow, --size, --format or --fps: exit
2 with one line and nothing written; --label with a camera that is not there: exit 1 and no
class folder made.

usage: test_capture_cli.py CAMCLASS_CAPTURE
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import bound, check, summary  # noqa: E402

EXE = sys.argv[1]


def run(args):
    p = subprocess.run([EXE] + args, capture_output=True, text=True, timeout=bound(30))
    return p.returncode, p.stdout, p.stderr.strip().splitlines()


def main():
    rc, out, err = run(["--list"])
    ref = run(["--list-cameras"])
    check(rc == ref[0] and out == ref[1] and err == ref[2] and rc in (0, 1),
          "--list answers as --list-cameras (%d %s / %d %s)" % (rc, err, ref[0], ref[2]))
    check(not any("ambiguous" in line or "usage" in line for line in err),
          "--list: no usage, not ambiguous: %s" % err)
    with tempfile.TemporaryDirectory() as tmp:
        cases = [
            (["--bogus"], "'--bogus'"),
            (["--label", "..", tmp], "folder above"),
            (["--label", "a/b", tmp], "'/'"),
            (["--label", "a"], "needs the folder"),
            ([tmp], "--label NAME DIR"),
            (["--label", "a", "--count", "0", tmp], "--count 0"),
            (["--label", "a", "--count", "2.5", tmp], "--count 2.5"),
            (["--label", "a", "--interval", "-1", tmp], "--interval -1"),
            (["--label", "a", "--interval", "x", tmp], "--interval x"),
            (["-n", "ten"], "--frames ten"),
            (["--frames", "-1"], "--frames -1"),
            (["--slow", "5ms"], "--slow 5ms"),
            (["-s", "640"], "--size 640"),
            (["-f", "H264"], "--format H264"),
            (["-r", "0"], "--fps 0"),
        ]
        for args, says in cases:
            rc, out, err = run(args)
            check(rc == 2 and len(err) == 1 and says in err[0],
                  "%s: exit 2, one line naming %s (%d %s)" % (args, says, rc, err))
        check(os.listdir(tmp) == [], "refused command lines wrote nothing: %s" % os.listdir(tmp))
        for spelling in ("-d", "--camera"):
            rc, out, err = run(["-n", "1", spelling, os.path.join(tmp, "no-camera")])
            check(rc == 1 and err and "no-camera" in err[-1],
                  "%s names the camera to open: %d %s" % (spelling, rc, err))
        rc, out, err = run(["--label", "ok", "-d", os.path.join(tmp, "no-camera"), tmp])
        check(rc == 1 and len(err) == 1 and "no-camera" in err[0],
              "a camera that is not there: exit 1 naming it (%d %s)" % (rc, err))
        check(not os.path.exists(os.path.join(tmp, "ok")), "no class folder without a picture")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
