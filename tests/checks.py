"""What camclass's Python test drivers share: check() records a failed condition and goes on,
so that one run reports every failure; summary() prints "N failed" and returns the exit status;
env_headless() is the environment of a camclass run without a display or systemd; wait_for()
polls a condition until a deadline and wait_until() fails a check when it passes; host_command()
is how a driver starts a program of this build, wrapped() whether it runs emulated, bound() a
wait's limit allowing for that, run() runs one to its end, start() in the background,
terminate() signals a started program and collects its output, wait_exit() waits for its exit
and stop() checks that SIGTERM ends it with 0, each killing it on a hang; free_port() is a
loopback port with nothing on it, lines_of() a log file's lines; in_tmpdir() runs a driver's
parts in a temporary folder and ends with summary(); relabeled() copies a bundle with other
labels (a model reload's "other model"); hiding_modules() an environment whose python3 cannot
import the named packages.

    from checks import check, summary   (tests/ is on PYTHONPATH: tests/meson.build)
"""
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import zipfile

failures = []


def host_command(exe):
    """The command (a list) that runs exe, a program of this build: [exe], or in a cross build
    (tools/test-arm64.sh) the exe_wrapper of the cross file first, which meson test hands a test
    given a cross-built program as MESON_EXE_WRAPPER (e.g. "qemu-aarch64 -cpu cortex-a72")."""
    return shlex.split(os.environ.get("MESON_EXE_WRAPPER", "")) + [exe]


def wrapped():
    """True when host_command() puts a wrapper first: the programs run emulated (qemu-user),
    some ten times slower, which a wait for a program to get somewhere must allow for."""
    return bool(shlex.split(os.environ.get("MESON_EXE_WRAPPER", "")))


def bound(seconds):
    """A wait's upper bound (for a hang only): seconds natively, ten times that when the
    programs run emulated (wrapped()), as tools/test-arm64.sh's --timeout-multiplier 10."""
    return seconds * 10 if wrapped() else seconds


def check(cond, what, verbose=False):
    """FAIL what (and remember it) when cond is false; with verbose, "ok   what" otherwise."""
    if not cond or verbose:
        print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)
    return bool(cond)


def summary():
    """Prints how many checks failed; 1 if any did, else 0."""
    print("%d failed" % len(failures), flush=True)
    return 1 if failures else 0


def env_headless():
    """os.environ without DISPLAY, WAYLAND_DISPLAY and NOTIFY_SOCKET: no window, no sd_notify."""
    env = dict(os.environ)
    for k in ("DISPLAY", "WAYLAND_DISPLAY", "NOTIFY_SOCKET"):
        env.pop(k, None)
    return env


def wait_for(cond, timeout, interval=0.05):
    """Polls cond() every interval seconds for up to timeout seconds; its last value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(interval)
    return bool(cond())


def wait_until(cond, timeout, what):
    """wait_for(cond) for bound(timeout) seconds, polling every 20 ms; a FAIL naming what when
    it timed out. True when cond held."""
    return wait_for(cond, bound(timeout), 0.02) or \
        check(False, "timed out (%g s) waiting for %s" % (bound(timeout), what))


def start(exe, args, stderr_path, env=None):
    """Starts the program exe of this build (host_command) with args, stdout discarded, stderr
    written to the file at stderr_path (read it while the program runs); the Popen."""
    with open(stderr_path, "w") as err:
        return subprocess.Popen(host_command(exe) + list(args), stdout=subprocess.DEVNULL,
                                stderr=err, env=env)


def wait_exit(p, timeout):
    """The exit status of the Popen p once it ends; killed when it has not ended within
    bound(timeout) (a hang), and the status of that kill returned."""
    try:
        return p.wait(timeout=bound(timeout))
    except subprocess.TimeoutExpired:
        p.kill()
        return p.wait()


def stop(p, what, timeout=30):
    """SIGTERM to the Popen p; a FAIL naming what unless it exits 0 (wait_exit). Its status."""
    p.send_signal(signal.SIGTERM)
    rc = wait_exit(p, timeout)
    check(rc == 0, "%s: exit %d after SIGTERM, want 0" % (what, rc))
    return rc


def in_tmpdir(prefix, body):
    """Runs body(folder) in a new temporary folder named prefix..., removed after it whatever
    happens; then summary(): a driver's main."""
    root = tempfile.mkdtemp(prefix=prefix)
    try:
        body(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return summary()


def terminate(p, sig, timeout):
    """Sends sig to the Popen p and collects its output (communicate); kills it when it has not
    ended within bound(timeout), and raises that TimeoutExpired after the kill."""
    try:
        p.send_signal(sig)
        return p.communicate(timeout=bound(timeout))
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


def run_process(exe, args, timeout=120, env_extra=None):
    """Runs the program exe of this build (host_command) with args to its end, without a display
    or systemd (env_headless, updated with env_extra); the subprocess.CompletedProcess, as text.
    timeout bounds a hang only (bound(): longer under emulation)."""
    env = env_headless()
    env.update(env_extra or {})
    return subprocess.run(host_command(exe) + list(args), capture_output=True, text=True,
                          timeout=bound(timeout), env=env)


def run(exe, args, timeout=120, env_extra=None):
    """run_process's (exit status, stdout, stderr)."""
    p = run_process(exe, args, timeout, env_extra)
    return p.returncode, p.stdout, p.stderr


def free_port(kind=socket.SOCK_STREAM):
    """A port on 127.0.0.1 with nothing on it (bound, then closed), for TCP or (SOCK_DGRAM) UDP."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lines_of(path):
    """The lines of the text file at path, a last one without its newline included (a log being
    written); [] while there is no such file. Bytes that are not UTF-8 are replaced."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def json_objects(path):
    """The JSON lines of a log at path that parse (a line being written, or a torn one, left
    out); [] while there is no such file."""
    out = []
    for line in lines_of(path):
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def write_json_config(root, obj):
    """obj as a new config file in root (config-N.json); its path."""
    path = os.path.join(root, "config-%d.json" % len(os.listdir(root)))
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


def relabeled(src, dst):
    """A copy at dst of the bundle src whose labels.txt says reload-N (as many as src has): the
    same network with other labels, which a reload's lines must then carry."""
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zo:
        for item in zi.infolist():
            data = zi.read(item.filename)
            if item.filename == "labels.txt":
                n = len([x for x in data.decode().splitlines() if x])
                data = "".join("reload-%d\n" % i for i in range(n)).encode()
            zo.writestr(item, data)


def hiding_modules(folder, names, env=None):
    """env (os.environ by default) with folder first on PYTHONPATH, where a package of each
    name raises what a missing package raises (ModuleNotFoundError "No module named 'NAME'"):
    a python3 run with it cannot import them, as on a system that lacks them (Debian's
    packages stay installed). Creates folder's packages."""
    for name in names:
        os.makedirs(os.path.join(folder, name), exist_ok=True)
        with open(os.path.join(folder, name, "__init__.py"), "w") as f:
            f.write("raise ModuleNotFoundError(\"No module named '%s'\", name=%r)\n"
                    % (name, name))
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (folder, env.get("PYTHONPATH")) if p)
    return env
