"""What the tests of camclass --serve share (test_serve.py, test_serve_browser.py): a camclass
started with --serve whose port is read from its "serving on" line, one HTTP request to it, and
the parts of GET /stream read as a viewer reads them, and one raw request as a hostile client
writes it (raw_answer; test_image_inputs.py posts its pictures with it too).

    sys.path.insert(0, <the tests/app folder>)
    from serve_client import Server, read_stream
"""
import http.client
import json
import re
import socket
import subprocess
import tempfile
import time

from checks import bound, env_headless, wait_exit


class Server:
    """cmd (camclass with --serve, its whole command line) started headless; port: the one its
    "serving on http://127.0.0.1:PORT" line names (None when that line did not come in 30 s or
    camclass ended first); stderr() what it wrote there so far."""

    def __init__(self, cmd, log=None):
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen(cmd, stdout=log or subprocess.DEVNULL, stderr=self.err,
                                  env=env_headless())
        self.port = None
        end = time.time() + bound(30)
        while time.time() < end and self.p.poll() is None:
            m = re.search(r"serving on http://127\.0\.0\.1:(\d+)", self.stderr())
            if m:
                self.port = int(m.group(1))
                break
            time.sleep(0.05)

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode(errors="replace")

    def stop(self):
        """SIGTERM, SIGKILL after 10 s; the exit status."""
        self.p.terminate()
        return wait_exit(self.p, 10)

    def request(self, method, path, body=None, headers=None, timeout=None):
        """(status, headers, the body parsed as JSON or None)."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout or bound(30))
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        try:
            obj = json.loads(data)
        except ValueError:
            obj = None
        return r.status, dict(r.getheaders()), obj


def read_stream(port, parts, out, path="/stream"):
    """GET path (/stream, /stream?panel=0): the first `parts` parts appended to out as
    (Content-Type, bytes), or an error string when the answer or a part is not what a
    multipart/x-mixed-replace viewer expects."""
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", path)
        r = c.getresponse()
        ctype = r.getheader("Content-Type", "")
        if r.status != 200 or not ctype.startswith("multipart/x-mixed-replace; boundary="):
            out.append("status %d, %s" % (r.status, ctype))
            return
        boundary = b"--" + ctype.split("boundary=")[1].encode()
        for _ in range(parts):
            line = r.readline().strip()
            if line != boundary:
                out.append("part starts with %r" % line[:40])
                return
            head = {}
            while True:
                line = r.readline().strip()
                if not line:
                    break
                k, v = line.decode().split(":", 1)
                head[k.lower()] = v.strip()
            data = r.read(int(head["content-length"]))
            r.readline()
            out.append((head.get("content-type"), data))
        c.close()
    except (OSError, ValueError, KeyError) as e:
        out.append("error %s" % e)


def raw_answer(port, request, timeout=10):
    """One raw request (as a hostile client writes it) on its own connection: (status or 0, the
    JSON body or None, the whole answer until close)."""
    c = socket.create_connection(("127.0.0.1", port), timeout=bound(timeout))
    c.sendall(request)
    answer, end = b"", time.time() + bound(timeout)
    try:  # until close, at most timeout s and 64 KB (an endless /stream answered by mistake)
        while len(answer) < 65536 and time.time() < end:
            got = c.recv(65536)
            if not got:
                break
            answer += got
    except OSError as e:
        answer += b" (%s)" % str(e).encode()
    c.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    try:
        status = int(head.split(b" ", 2)[1])
    except (IndexError, ValueError):
        status = 0
    try:
        obj = json.loads(body)
    except ValueError:
        obj = None
    return status, obj, answer
