#!/usr/bin/python3
"""camclass --serve's page, GET /, in a real browser: Debian's headless Chromium (suite app).

camclass serves a looped picture whose colours are known (assets/samples/bars_320x240.png: 8
colour bars over a grey ramp); Chromium, driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: no port, no WebSocket client needed), opens http://127.0.0.1:PORT/
and the test waits, each wait bounded, until the page's <img> has a picture from /stream and
its script has shown a /latest result. Then:

- (a) the stream: a screenshot of the viewport, cut to the <img>'s box as the DOM gives it
  (getBoundingClientRect, device scale 1), equals a JPEG part of /stream that the test reads
  itself (mean absolute difference per channel, small: the two pictures differ only in the
  fps and latency figures), and each of the 7 coloured bars' colours covers its share of the
  box; the same page with the <img>'s src pointed at a path camclass does not serve must fail
  both (the control, run every time);
- (b) the labels: the top-k table in the rendered DOM (document.documentElement.outerHTML, what
  chromium --dump-dom prints, read after the script ran; parsed by html.parser) holds
  /latest's labels in order with their scores as the page rounds them, and the status line
  names the model and the backend;
- (c) "label this frame" (--collect): hidden without it; with it, a button per class in the
  --classes order, a click saves the camera's frame into DIR/<class>/ (the browser's own
  same-origin POST, with its Origin and Sec-Fetch-Site) and the button's count follows, a new
  class typed into the field gets its folder, an unsafe one shows the refusal and makes nothing;
- (d) several cameras: a selector lists them; choosing the second shows its
  /stream/<camera> picture (the bar colours, against that route's JPEG) and
  /latest/<camera>'s labels;
- Chromium ends when told (Browser.close), else its process group is killed, and no process of
  its session is left, nor its crash handler (which leaves the session: it is found by the
  profile folder in its command line).

    test_serve_browser.py CAMCLASS SELFTEST_MODEL SAMPLES_DIR

Every wait is bounded; camclass and Chromium are stopped at the end, also on a failure.
"""
import base64
import fcntl
import html.parser
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from io import BytesIO

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, host_command, summary  # noqa: E402
from serve_client import Server, read_stream  # noqa: E402

EXE, MODEL, SAMPLES = sys.argv[1:4]
PICTURE = os.path.join(SAMPLES, "bars_320x240.png")
VIEW_W, VIEW_H = 1000, 600   # the page's viewport, CSS pixels at scale 1: the 640x360 <img> fits
START_S = 90                 # Chromium's start: 5-10 s seen here, over 20 s at load average 20
PAGE_S = 30                  # the page's first picture and first result
MAX_MEAN_DIFF = 6.0          # screenshot vs /stream JPEG, mean |difference| per channel (0-255):
                             # seen 0.1; a broken <img> 98, the picture mirrored by CSS 92
BAR_TOL = 24                 # a bar's colour within this of the sample's, on every channel
BAR_SHARE = 0.03             # ... on at least this share of the box (one bar is ~5 %)


# ------------------------------------------------------------------------------------------
# Chromium over the DevTools protocol

class Chromium:
    """Debian's chromium, headless, driven over the DevTools protocol on a pipe: Chromium reads
    the commands on its fd 3 and writes answers and events on its fd 4, each message JSON ended
    by a NUL byte. In a session of its own, so that its process group can be killed."""

    def __init__(self, exe, profile):
        self.profile = profile
        cmd_r, cmd_w = os.pipe()
        ev_r, ev_w = os.pipe()
        # The child's ends are moved to 10 and above so that bash (dash takes fds up to 9 only)
        # can put them on 3 and 4
        # without one overwriting the other.
        child_r = os_dup_above(cmd_r, 10)
        child_w = os_dup_above(ev_w, 10)
        for fd in (cmd_r, ev_w):
            os.close(fd)
        self.err = tempfile.TemporaryFile()
        # Its crash handler (chrome_crashpad_handler) daemonizes: a session of its own, outside
        # the process group. With the XDG folders in the profile its database is there, not in
        # ~/.config/chromium, and the profile's path in its command line says it is this one.
        env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(profile, "config"),
                   XDG_CACHE_HOME=os.path.join(profile, "cache"))
        # --no-sandbox: CI and this machine run the tests as root, and Chromium refuses to
        # start as root with its sandbox ("Running as root without --no-sandbox is not
        # supported"). --disable-gpu: no GPU process; Skia draws on the CPU.
        # --disable-background-networking, --disable-component-update, --no-first-run, a fresh
        # --user-data-dir: no fetches to Google and no profile state between runs (no network
        # in CI anyway).
        argv = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                "--user-data-dir=" + profile, "--no-first-run", "--disable-sync",
                "--disable-background-networking", "--disable-component-update",
                "--hide-scrollbars", "--window-size=%d,%d" % (VIEW_W, VIEW_H), "about:blank"]
        self.p = subprocess.Popen(
            ["/bin/bash", "-c", 'exec "$@" 3<&%d 4>&%d %d<&- %d>&-'
             % (child_r, child_w, child_r, child_w), "bash"] + argv,
            pass_fds=(child_r, child_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=self.err, start_new_session=True, env=env)
        os.close(child_r)
        os.close(child_w)
        self.out = os.fdopen(cmd_w, "wb", buffering=0)
        self.msgs = queue.Queue()
        self.events = []
        self.next_id = 0
        self.reader = threading.Thread(target=self._read, args=(ev_r,), daemon=True)
        self.reader.start()

    def _read(self, fd):
        buf = b""
        with os.fdopen(fd, "rb", buffering=0) as f:
            while True:
                data = f.read(65536)
                if not data:
                    break
                buf += data
                *msgs, buf = buf.split(b"\0")
                for m in msgs:
                    self.msgs.put(json.loads(m))
        self.msgs.put(None)  # Chromium closed its end: it has ended

    def send(self, method, params=None, session=None, timeout=PAGE_S):
        """The result of one command, or raises RuntimeError with the protocol's error or
        "no answer in N s"."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        try:
            self.out.write(json.dumps(msg).encode() + b"\0")
        except OSError as e:
            raise RuntimeError("%s: Chromium's pipe is closed (%s)" % (method, e)) from None
        end = time.monotonic() + timeout
        while True:
            try:
                m = self.msgs.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                raise RuntimeError("%s: no answer in %d s" % (method, timeout)) from None
            if m is None:
                raise RuntimeError("%s: Chromium ended" % method)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def close(self):
        """Browser.close, then the whole process group killed after 10 s (or at once when the
        command is not answered), and then any process still naming the profile; returns
        whether no process of Chromium's session or naming its profile is left."""
        try:
            self.send("Browser.close", timeout=10)
            self.p.wait(10)
        except (RuntimeError, subprocess.TimeoutExpired):
            pass
        try:
            os.killpg(self.p.pid, signal.SIGKILL)  # whatever is left (none after a clean close)
        except ProcessLookupError:
            pass
        self.p.wait()
        self.out.close()
        left = wait_for_none(self.p.pid, self.profile, 10)
        for pid in left:  # its own (the profile's path is unique): not to outlive the test
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return not left

    def stderr(self):
        """What Chromium wrote on stderr, less its lines about D-Bus (there is no bus here)."""
        self.err.seek(0)
        return "\n".join(x for x in self.err.read().decode(errors="replace").splitlines()
                         if "dbus" not in x)


def os_dup_above(fd, low):
    return fcntl.fcntl(fd, fcntl.F_DUPFD, low)


def chromium_processes(sid, profile):
    """pids in session sid (/proc/PID/stat, field 6) or whose command line names profile."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    cmdline = f.read()
            except OSError:
                continue
            if int(fields[3]) == sid or profile.encode() in cmdline:
                out.append(int(d))
    return out


def wait_for_none(sid, profile, timeout):
    """The pids chromium_processes() still finds after up to timeout s ([] when none)."""
    end = time.monotonic() + timeout
    while chromium_processes(sid, profile) and time.monotonic() < end:
        time.sleep(0.1)
    return chromium_processes(sid, profile)


class Page:
    """One tab, attached in flat mode (its commands carry the session id)."""

    def __init__(self, browser):
        self.b = browser
        target = browser.send("Target.createTarget", {"url": "about:blank"}, timeout=START_S)
        self.s = browser.send("Target.attachToTarget",
                              {"targetId": target["targetId"], "flatten": True})["sessionId"]
        # Scale 1 whatever the screen: the <img>'s CSS box is its box in the screenshot.
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": VIEW_W, "height": VIEW_H, "deviceScaleFactor": 1, "mobile": False})

    def send(self, method, params=None, timeout=PAGE_S):
        return self.b.send(method, params, self.s, timeout)

    def eval(self, expr, timeout=PAGE_S):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": True}, timeout)
        if "exceptionDetails" in r:
            e = r["exceptionDetails"]
            raise RuntimeError("%s…: %s" % (expr[:60], e.get("exception", {}).get(
                "description", e.get("text"))))
        return r["result"].get("value")

    def wait(self, expr, timeout):
        """Polls expr (JavaScript) until it is truthy, at most timeout s; its last value."""
        end = time.monotonic() + timeout
        while True:
            v = self.eval(expr)
            if v or time.monotonic() > end:
                return v
            time.sleep(0.1)

    def screenshot(self):
        png = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"})["data"])
        return Image.open(BytesIO(png)).convert("RGB")


# ------------------------------------------------------------------------------------------
# What the page shows

# The page's state: the <img>'s decoded size and box, the table's rows, the status line.
# null while the document is not the page yet (Page.navigate answers before it is parsed).
STATE = """(() => {
  const img = document.getElementById("stream"), st = document.getElementById("status");
  if (!img || !st) return null;
  const r = img.getBoundingClientRect();
  return {natural: img.naturalWidth, complete: img.complete,
          box: [r.left, r.top, r.width, r.height], scale: window.devicePixelRatio,
          rows: document.querySelectorAll("#top tbody tr").length,
          status: st.textContent};
})()"""
WAITING = "waiting for the first result…"  # index.html's status before the first /latest
# Two animation frames: what the last change put on the page has been painted.
PAINTED = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(1))))"


class TopTable(html.parser.HTMLParser):
    """The rows of <table id="top"> as lists of cell texts, and the text of #status."""

    def __init__(self):
        super().__init__()
        self.rows, self.status = [], ""
        self.in_top = self.in_status = False
        self.cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id") == "top":
            self.in_top = True
        elif tag == "p" and a.get("id") == "status":
            self.in_status = True
        elif self.in_top and tag == "tr":
            self.rows.append([])
        elif self.in_top and tag == "td":
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "table":
            self.in_top = False
        elif tag == "p":
            self.in_status = False
        elif tag == "td" and self.cell is not None:
            self.rows[-1].append(self.cell.strip())
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        elif self.in_status:
            self.status += data


def bar_colours():
    """The 7 coloured bars of the sample (the 8th is black, like the page): their RGB at a
    quarter of the height, in each bar's middle."""
    im = Image.open(PICTURE).convert("RGB")
    w, h = im.size
    return [im.getpixel((int((i + 0.5) * w / 8), h // 4)) for i in range(7)]


def shows_stream(shot, state, jpeg):
    """(ok, what): the screenshot cut to the <img>'s box against the /stream JPEG and the
    sample's bar colours."""
    x, y, w, h = (round(v) for v in state["box"])
    if state["scale"] != 1 or w <= 0 or h <= 0:
        return False, "box %s at scale %s" % (state["box"], state["scale"])
    box = np.asarray(shot.crop((x, y, x + w, y + h)), dtype=np.int16)
    ref = np.asarray(jpeg.convert("RGB").resize((w, h)), dtype=np.int16)
    diff = float(np.abs(box - ref).mean())
    shares = [float((np.abs(box - np.array(c, dtype=np.int16)).max(axis=2) <= BAR_TOL).mean())
              for c in bar_colours()]
    ok = diff <= MAX_MEAN_DIFF and min(shares) >= BAR_SHARE
    return ok, ("mean |difference| %.1f (at most %.0f), bar colour shares %s (each at least %.2f)"
                % (diff, MAX_MEAN_DIFF, " ".join("%.3f" % s for s in shares), BAR_SHARE))


def stream_jpeg(port, path="/stream?panel=0"):
    """A picture of what the page's <img> shows: the frame alone (GET /stream?panel=0)."""
    parts = []
    read_stream(port, 1, parts, path)
    if len(parts) != 1 or isinstance(parts[0], str):
        return None, "GET %s: %s" % (path, parts)
    im = Image.open(BytesIO(parts[0][1]))
    im.load()
    return im, "%dx%d" % im.size


def same_labels(table, latest):
    """The table's rows are /latest's top: label, then the score as the page writes it."""
    want = [[c["label"], "%.1f %%" % (100 * c["score"])] for c in latest["top"]]
    got = [r[:2] for r in table.rows]
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        # toFixed(1) and %.1f may round a tie differently: the score within 0.1.
        if g[0] != w[0] or not g[1].endswith(" %") or \
                abs(float(g[1][:-2]) - float(w[1][:-2])) > 0.11:
            return False
    return True


# ------------------------------------------------------------------------------------------

def test_page(exe):
    t0 = time.monotonic()
    s = Server(host_command(EXE) + ["--headless", "--model", MODEL, "--backend", "cpu",
                                    "--input", PICTURE, "--loop", "--fps", "5",
                                    "--serve", "0", "--log", os.devnull])
    if not check(s.port is not None, "camclass --serve 0 --input: serving (%s)"
                 % s.stderr()[-300:]):
        s.stop()
        return
    t_serve = time.monotonic() - t0
    url = "http://127.0.0.1:%d/" % s.port
    with tempfile.TemporaryDirectory() as profile:
        b = Chromium(exe, profile)
        try:
            t1 = time.monotonic()
            page = Page(b)
            t_start = time.monotonic() - t1
            t1 = time.monotonic()
            page.send("Page.navigate", {"url": url})
            st = page.wait("(s => s && s.natural > 0 && s.rows > 0 && s.status !== %s && s)(%s)"
                           % (json.dumps(WAITING), STATE), PAGE_S)
            t_page = time.monotonic() - t1
            if not check(st, "%s: a /stream picture in the <img> and a result in the table "
                         "within %d s (%s)" % (url, PAGE_S, page.eval(STATE))):
                return
            page.eval(PAINTED)
            shot = page.screenshot()
            dom = page.eval("document.documentElement.outerHTML")
            jpeg, what = stream_jpeg(s.port)
            code, _, latest = s.request("GET", "/latest")
            check(jpeg is not None, "a /stream part for the comparison: " + what)
            check(code == 200 and latest and latest.get("top"), "/latest: %d" % code)
            if jpeg is None or not latest:
                return

            # (a) The picture in the <img> is the stream's.
            ok, what = shows_stream(shot, st, jpeg)
            check(ok, "(a) the screenshot's <img> box %s is the /stream picture: %s"
                  % (st["box"], what), verbose=True)

            # (b) The labels in the rendered DOM are /latest's.
            table = TopTable()
            table.feed(dom)
            check(same_labels(table, latest),
                  "(b) the page's top-k %s are /latest's %s"
                  % (table.rows, [(c["label"], c["score"]) for c in latest["top"]]))
            check(latest["model"] in table.status and latest["backend"] in table.status,
                  "(b) the status line names the model and backend: %r" % table.status)

            check(page.eval('document.getElementById("collect").hidden') is True,
                  "(c) without --collect the label control is hidden")

            # The control: the same page with a broken stream (a src camclass does not serve)
            # must fail (a).
            page.eval('document.getElementById("stream").src = "/stream-not-served"')
            broken = page.wait("(s => s && s.complete && s.natural === 0 && s)(%s)" % STATE,
                               PAGE_S)
            page.eval(PAINTED)
            bad, what = shows_stream(page.screenshot(), broken or st, jpeg)
            check(broken and not bad,
                  "control: with <img src=/stream-not-served> (a) fails: %s" % what, verbose=True)
            print("camclass serving in %.1f s, Chromium's start %.1f s, the page's first "
                  "picture and result %.1f s, the checks and the control %.1f s"
                  % (t_serve, t_start, t_page, time.monotonic() - t1 - t_page))
        except RuntimeError as e:
            check(False, "Chromium: %s (its stderr: %s)" % (e, b.stderr()[-600:]))
        finally:
            t1 = time.monotonic()
            check(b.close(), "no Chromium process is left")
            print("Chromium closed in %.1f s" % (time.monotonic() - t1))
            s.stop()


def test_cameras_page(exe):
    """(d) several cameras: the selector lists them (the first, a red picture, shown first);
    choosing the second (the bars) shows its /stream/<camera> picture and /latest/<camera>'s
    labels."""
    with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as profile:
        config = os.path.join(d, "cameras.json")
        with open(config, "w") as f:
            json.dump({"cameras": [
                {"name": "red one", "input": os.path.join(SAMPLES, "selftest", "018-red.png")},
                {"name": "bars", "input": PICTURE}]}, f)
        s = Server(host_command(EXE) + ["--headless", "--model", MODEL, "--backend", "cpu",
                                        "--config", config, "--loop", "--fps", "5",
                                        "--serve", "0", "--log", os.devnull])
        if not check(s.port is not None, "two cameras --serve: serving (%s)" % s.stderr()[-300:]):
            s.stop()
            return
        b = Chromium(exe, profile)
        try:
            page = Page(b)
            page.send("Page.navigate", {"url": "http://127.0.0.1:%d/" % s.port})
            names = page.wait('(p => p && !p.hidden && p.options.length === 2 && '
                              '[...p.options].map(o => o.value))(document.getElementById('
                              '"camera"))', PAGE_S)
            check(names == ["red one", "bars"], "(d) the selector lists the cameras: %s" % names)
            page.eval('(p => { p.value = "bars"; p.dispatchEvent(new Event("change")); })'
                      '(document.getElementById("camera"))')
            st = page.wait('(s => s && s.natural > 0 && s.rows > 0 && s.status.includes("bars")'
                           ' && s)(%s)' % STATE, PAGE_S)
            if not check(st, "(d) the bars camera's picture and result (%s)" % page.eval(STATE)):
                return
            page.wait(PAINTED, PAGE_S)
            shot = page.screenshot()
            dom = page.eval("document.documentElement.outerHTML")
            jpeg, what = stream_jpeg(s.port, "/stream/bars?panel=0")
            code, _, latest = s.request("GET", "/latest/bars")
            if not check(jpeg is not None and code == 200, "(d) /stream/bars, /latest/bars: "
                         "%s %d" % (what, code)):
                return
            ok, what = shows_stream(shot, st, jpeg)
            check(ok, "(d) the <img> shows /stream/bars: %s" % what, verbose=True)
            table = TopTable()
            table.feed(dom)
            check(same_labels(table, latest), "(d) the page's top-k %s are /latest/bars' %s"
                  % (table.rows, [(c["label"], c["score"]) for c in latest["top"]]))
        except RuntimeError as e:
            check(False, "Chromium: %s (its stderr: %s)" % (e, b.stderr()[-600:]))
        finally:
            check(b.close(), "no Chromium process is left")
            s.stop()


BUTTONS = """[...document.querySelectorAll("#classes button")].map(b => b.textContent)"""


def saved_files(d):
    return sorted(os.path.relpath(os.path.join(r, n), d) for r, _, ns in os.walk(d) for n in ns)


def test_collect_page(exe):
    with tempfile.TemporaryDirectory() as ds, tempfile.TemporaryDirectory() as profile:
        s = Server(host_command(EXE) + ["--headless", "--model", MODEL, "--backend", "cpu",
                                        "--input", PICTURE, "--loop", "--fps", "5",
                                        "--serve", "0", "--log", os.devnull, "--collect", ds,
                                        "--classes", "open,closed"])
        if not check(s.port is not None, "camclass --collect --serve: serving (%s)"
                     % s.stderr()[-300:]):
            s.stop()
            return
        b = Chromium(exe, profile)
        try:
            page = Page(b)
            page.send("Page.navigate", {"url": "http://127.0.0.1:%d/" % s.port})
            shown = page.wait('!document.getElementById("collect")?.hidden && %s.length === 2 '
                              '&& %s' % (BUTTONS, BUTTONS), PAGE_S)
            check(shown == ["1 open (0)", "2 closed (0)"],
                  "(c) the label control shows the classes: %s" % shown)
            page.wait("(%s)(%s)" % ("s => s && s.rows > 0", STATE), PAGE_S)  # a frame is in
            page.eval('document.querySelector(\'#classes button[data-label="closed"]\').click()')
            after = page.wait('(b => b[1] === "2 closed (1)" && b)(%s)' % BUTTONS, PAGE_S)
            files = saved_files(ds)
            check(after and len(files) == 1 and files[0].startswith("closed/"),
                  "(c) a click saved the frame under closed: %s %s" % (after, files))
            page.eval('document.getElementById("newclass").value = "car in";'
                      'document.getElementById("add").click()')
            after = page.wait('(b => b.length === 3 && b)(%s)' % BUTTONS, PAGE_S)
            files = saved_files(ds)
            check(after and after[2] == "3 car in (1)" and
                  sum(f.startswith("car in/") for f in files) == 1,
                  "(c) a new class got its folder and button: %s %s" % (after, files))
            page.eval('document.getElementById("newclass").value = "../up";'
                      'document.getElementById("add").click()')
            msg = page.wait('(t => t.includes("starts with") && t)'
                            '(document.getElementById("saved").textContent)', PAGE_S)
            check(msg and len(saved_files(ds)) == 2,
                  "(c) an unsafe class shows the refusal, makes nothing: %s" % msg)
        except RuntimeError as e:
            check(False, "Chromium: %s (its stderr: %s)" % (e, b.stderr()[-600:]))
        finally:
            check(b.close(), "no Chromium process is left")
            s.stop()


t0 = time.time()
chromium = shutil.which("chromium")
if check(chromium, "chromium is not installed: apt-get install --no-install-recommends "
         "chromium (tools/setup.sh test installs it)"):
    test_page(chromium)
    test_collect_page(chromium)
    test_cameras_page(chromium)
print("%.1f s" % (time.time() - t0))
sys.exit(summary())
