#!/usr/bin/python3
"""camclass's udev rule (systemd/70-camclass.rules), read the way udev 252 reads it, without
udev: Debian 12 has no `udevadm verify` (systemd 254+), and `udevadm test` needs udev installed,
a device in /sys and the rule in a rules directory. Checked here:

  syntax: every line is comma-separated KEY[{ATTR}]OP"VALUE" pairs with a key udev knows, an
    operator that key takes (a match key only == and !=, an action key no == or !=), an {ATTR}
    where the key needs one, a LABEL for every GOTO; a line with a mistake is refused (control);
  order: the name sorts after 60-persistent-v4l.rules (whose v4l_id sets ID_V4L_CAPABILITIES)
    and before 99-systemd.rules;
  behaviour, by evaluating the rule on the properties udev gives real nodes: a capture node
    (video0, ":capture:") is tagged "systemd" (so dev-video0.device exists for camclass@video0's
    BindsTo=), a UVC metadata node (":"), a radio, VBI or sub-device node, and a removal are not;
    and nothing sets SYSTEMD_WANTS: the rule starts no service on its own (the admin enables
    camclass@video0, which is WantedBy=dev-%i.device).

    udev_rules_check.py RULES_FILE
"""
import fnmatch
import os
import re
import sys

# udev 252's keys (udev(7), src/udev/udev-rules.c): those that only match, those that only act,
# those that do either; and the ones that need or take an {ATTR}.
MATCH_ONLY = {"ACTION", "DEVPATH", "KERNEL", "KERNELS", "SUBSYSTEM", "SUBSYSTEMS", "DRIVER",
              "DRIVERS", "ATTRS", "TAGS", "TEST", "PROGRAM", "RESULT", "CONST"}
ACTION_ONLY = {"OWNER", "GROUP", "MODE", "OPTIONS", "SECLABEL", "IMPORT", "RUN", "GOTO",
               "LABEL"}
EITHER = {"NAME", "SYMLINK", "ENV", "TAG", "ATTR", "SYSATTR", "SYSCTL"}
NEEDS_ATTR = {"ATTR", "SYSATTR", "ATTRS", "ENV", "SYSCTL", "CONST", "SECLABEL", "IMPORT"}
TAKES_ATTR = NEEDS_ATTR | {"TEST", "RUN"}
PAIR = re.compile(r'\s*([A-Z_]+)(?:\{([^}]*)\})?\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')


def parse(text):
    """Rules as lists of (key, attr, op, value); raises ValueError naming the line."""
    rules, labels, gotos = [], set(), []
    joined = re.sub(r"\\\n", "", text)  # udev joins a line ending in a backslash to the next
    for n, line in enumerate(joined.split("\n"), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        pos, rule = 0, []
        while pos < len(line):
            m = PAIR.match(line, pos)
            if not m:
                raise ValueError(f"line {n}: cannot read a KEY OP \"VALUE\" pair at '{line[pos:]}'")
            key, attr, op, value, _ = m.groups()
            if key not in MATCH_ONLY | ACTION_ONLY | EITHER:
                raise ValueError(f"line {n}: unknown key {key}")
            if key in MATCH_ONLY and op not in ("==", "!="):
                raise ValueError(f"line {n}: {key} only matches (== or !=), not {op}")
            if key in ACTION_ONLY and op in ("==", "!="):
                raise ValueError(f"line {n}: {key} is an action, {op} does not apply")
            if key in NEEDS_ATTR and not attr:
                raise ValueError(f"line {n}: {key} needs {{ATTR}}")
            if attr is not None and key not in TAKES_ATTR:
                raise ValueError(f"line {n}: {key} takes no {{ATTR}}")
            if key == "LABEL":
                labels.add(value)
            if key == "GOTO":
                gotos.append((n, value))
            rule.append((key, attr, op, value))
            pos = m.end()
        rules.append(rule)
    for n, label in gotos:
        if label not in labels:
            raise ValueError(f"line {n}: GOTO=\"{label}\" has no LABEL")
    return rules


def glob(pattern, value):
    """udev's match: shell glob, '|' separating alternatives."""
    return any(fnmatch.fnmatchcase(value, alt) for alt in pattern.split("|"))


def evaluate(rules, dev):
    """(tags, env) the rules give a device: dev has ACTION, SUBSYSTEM, KERNEL and ENV{...}."""
    tags, env = set(), dict(dev.get("ENV", {}))
    for rule in rules:
        acts = []
        for key, attr, op, value in rule:
            if op in ("==", "!="):
                have = env.get(attr, "") if key == "ENV" else dev.get(key, "")
                if glob(value, have) != (op == "=="):
                    break
            else:
                acts.append((key, attr, op, value))
        else:
            for key, attr, op, value in acts:
                if key == "TAG":
                    tags.add(value)
                elif key == "ENV":
                    env[attr] = (env.get(attr, "") + " " + value).strip() if op == "+=" else value
                elif key == "GOTO":
                    raise ValueError("GOTO in the camclass rule: the evaluator here follows none")
    return tags, env


def main():
    path = sys.argv[1]
    fails = 0

    def check(ok, what):
        nonlocal fails
        print(("ok: " if ok else "FAIL: ") + what)
        fails += not ok

    text = open(path).read()
    try:
        rules = parse(text)
        check(True, f"{os.path.basename(path)} parses ({len(rules)} rule line(s))")
    except ValueError as e:
        check(False, f"{os.path.basename(path)}: {e}")
        return 1
    # Controls: the parser must refuse what udev refuses ("Invalid key", an operator a key
    # does not take, a missing quote, a GOTO with no LABEL).
    for bad in ('SUBSYSTEM=="video4linux", FOO="x"', 'SUBSYSTEM="video4linux"',
                'RUN=="x"', 'ENV=="x"', 'KERNEL=="video*, TAG+="systemd"',
                'GOTO="nowhere"'):
        try:
            parse(bad)
            check(False, f"control: the parser accepts '{bad}'")
        except ValueError:
            pass
    name = os.path.basename(path)
    check("60-persistent-v4l.rules" < name < "99-systemd.rules",
          f"{name} sorts after 60-persistent-v4l.rules and before 99-systemd.rules")
    check("SYSTEMD_WANTS" not in re.sub(r"#.*", "", text),
          "no SYSTEMD_WANTS: the rule starts nothing (an enabled camclass@ instance does)")

    def dev(kernel, caps, action="add", subsystem="video4linux"):
        env = {} if caps is None else {"ID_V4L_CAPABILITIES": caps}
        return {"ACTION": action, "SUBSYSTEM": subsystem, "KERNEL": kernel, "ENV": env}

    cases = [  # (what, device, tagged)
        ("capture node video0 (:capture:)", dev("video0", ":capture:"), True),
        ("capture and output node video3 (:capture:video_output:)",
         dev("video3", ":capture:video_output:"), True),
        ("UVC metadata node video1 (:)", dev("video1", ":"), False),
        ("output-only node video2 (:video_output:)", dev("video2", ":video_output:"), False),
        ("radio0 (:radio:tuner:)", dev("radio0", ":radio:tuner:"), False),
        ("vbi0", dev("vbi0", ":capture:"), False),
        ("v4l-subdev0", dev("v4l-subdev0", None), False),
        ("removal of video0", dev("video0", ":capture:", action="remove"), False),
        ("a sound device", dev("controlC0", None, subsystem="sound"), False),
    ]
    for what, device, tagged in cases:
        tags, env = evaluate(rules, device)
        check(("systemd" in tags) == tagged and "SYSTEMD_WANTS" not in env,
              f"{what}: {'tagged' if tagged else 'not tagged'} for systemd, no SYSTEMD_WANTS"
              f" (got tags {sorted(tags)})")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
