"""fetch_imagenet — torchvision's ImageNet mobilenet_v2 -> a camclass bundle, mobilenet_v2-imagenet.ccm

    tools/camclass-fetch-imagenet [--url URL] [--dest DIR] [--force] [--timeout S]
    camclass-fetch-imagenet [--url URL] [--dest DIR | --system] [--force] [--timeout S]

From the source tree the bundle goes to assets/models/ (where build/app/camclass looks); as
installed (camclass-fetch-imagenet, python/installed_tool.py.in) to $XDG_DATA_HOME/camclass/models
(~/.local/share/camclass/models), where the installed camclass looks first, or with --system to
<datadir>/camclass/models (for every user and the service; needs root).

Downloads torchvision's official mobilenet_v2 ImageNet-1k weights (the published .pth of
MobileNet_V2_Weights.IMAGENET1K_V1), checks the sha256 prefix that the file name carries
(`mobilenet_v2-b0353104.pth`: the first hex digits of the file's sha256, the check torch.hub
makes), reads them with the standard library (checkpoint.py: a restricted unpickler, nothing of
the file run) and builds the camclass bundle with mobilenet_v2_builder.py: the graph, BatchNorm
folding and bundle of the exporter (`camclass-export --model mobilenet_v2 --antialias on` writes
the same file for the same weights), torchvision's 1000 ImageNet category names
(imagenet_classes.txt), center crop 256 -> 224 resized as PIL does ("antialias": true, format
version 3: the preprocessing torchvision trained and evaluated it with), ImageNet mean/std.

No PyTorch: this needs python3 and python3-numpy only (a Raspberry Pi need not install
PyTorch), always, also where PyTorch is installed: one path, the one a Pi runs. The numeric
check of the built graph against PyTorch is the test suite's
(tests/models/test_mobilenet_v2_builder.py); here the written bundle is read back and compared
with what was meant to be written (manifest, every tensor bit for bit, labels, graph order)
before it is renamed into place.

Nothing partial is ever installed: the download goes to a temporary file (deleted on every
exit), and the bundle is written to a temporary file renamed into place only after that check.
Any failure (no network, a wrong hash, a file that is not a mobilenet_v2 state_dict) is one line
on stderr, exit status 1, and leaves the destination as it was; camclass then keeps using the
self-test model.
"""

import argparse
import hashlib
import http.client
import os
import re
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DEST = os.path.normpath(os.path.join(HERE, "..", "..", "assets", "models"))
BUNDLE_NAME = "mobilenet_v2-imagenet.ccm"
MODEL_NAME = "mobilenet_v2-imagenet"
PROG = "fetch_imagenet"  # camclass-fetch-imagenet when installed (main's prog)

# torch.hub's HASH_REGEX: the hex digits between the first "-" and the following "." of the
# file name are a prefix of the file's sha256. We ask for at least 8 of them (torchvision's
# names carry 8): fewer would make the check meaningless.
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
MIN_HASH_DIGITS = 8
MAX_DOWNLOAD = 256 << 20  # the official file is 14 MB; a server streaming forever stops here
CHUNK = 64 << 10


# The published URL of torchvision's ImageNet mobilenet_v2 weights (MobileNet_V2_Weights.
# IMAGENET1K_V1.url; tests/models/test_mobilenet_v2_builder.py checks it against torchvision's).
DEFAULT_URL = "https://download.pytorch.org/models/mobilenet_v2-b0353104.pth"


class FetchError(Exception):
    """One line for the user; nothing has been changed when it is raised."""


def normalize_url(url):
    """file://, http:// and https:// URLs; a bare path is taken as a local file."""
    try:
        scheme = urllib.parse.urlsplit(url).scheme.lower()
    except ValueError as e:
        raise FetchError("--url %s: %s" % (url, e))
    if scheme == "":
        return "file://" + urllib.request.pathname2url(os.path.abspath(url))
    if scheme not in ("file", "http", "https"):
        raise FetchError("--url %s: use a file://, http:// or https:// URL" % url)
    return url


def hash_prefix(url):
    """The sha256 prefix the URL's file name carries, as torch.hub finds it."""
    name = urllib.parse.unquote(os.path.basename(urllib.parse.urlsplit(url).path))
    m = HASH_REGEX.search(name)
    if m is None or len(m.group(1)) < MIN_HASH_DIGITS:
        raise FetchError("%s: the file name %r carries no sha256 prefix (NAME-<%d or more hex "
                         "digits>.pth, as in mobilenet_v2-b0353104.pth), so the download cannot "
                         "be verified; keep the published file name"
                         % (url, name, MIN_HASH_DIGITS))
    return m.group(1)


def _reason(e):
    """A short reason for a failed download: 'Connection refused', 'timed out', ..."""
    if isinstance(e, urllib.error.HTTPError):
        return "HTTP %d %s" % (e.code, e.reason)
    if isinstance(e, urllib.error.URLError):
        if not isinstance(e.reason, BaseException):
            return str(e.reason)
        e = e.reason
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e) or type(e).__name__


def offline_message(url, reason):
    verb = "read" if url.startswith("file:") else "download"
    return ("cannot %s %s: %s; camclass keeps using the self-test model (selftest.ccm). Copy "
            "the .pth by hand and run with --url file:///path/to/mobilenet_v2-b0353104.pth"
            % (verb, url, reason))


class Progress:
    """A progress line on stderr, redrawn at most 10 times a second, only on a terminal."""

    def __init__(self, name, total):
        self.name, self.total = name, total
        self.on = sys.stderr.isatty()
        self.last = 0.0
        self.drawn = False

    def update(self, done, final=False):
        now = time.monotonic()
        if not self.on or (not final and now - self.last < 0.1):
            return
        self.last = now
        line = "%s: %s %.1f" % (PROG, self.name, done / 1e6)
        if self.total:
            line += " / %.1f MB (%d%%)" % (self.total / 1e6, 100 * done // self.total)
        else:
            line += " MB"
        sys.stderr.write("\r" + line + ("\n" if final else ""))
        sys.stderr.flush()
        self.drawn = not final

    def break_line(self):
        """Ends a half-drawn line, so that an error message starts on its own."""
        if self.drawn:
            sys.stderr.write("\n")
            self.drawn = False


def download(url, f, timeout):
    """Streams url into the open binary file f; returns (bytes, sha256 hex digest).
    Raises FetchError with the offline message when the URL cannot be read."""
    name = os.path.basename(urllib.parse.urlsplit(url).path)
    sha = hashlib.sha256()
    done = 0
    progress = None
    try:
        req = urllib.request.Request(url, headers={"User-Agent": "camclass-fetch_imagenet"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            total = r.headers.get("Content-Length")
            total = int(total) if total and total.isdigit() else None
            progress = Progress(name, total)
            while True:
                buf = r.read(CHUNK)
                if not buf:
                    break
                done += len(buf)
                if done > MAX_DOWNLOAD:
                    raise FetchError("%s: more than %d MB, far larger than mobilenet_v2's "
                                     "weights; nothing installed" % (url, MAX_DOWNLOAD >> 20))
                try:
                    f.write(buf)
                except OSError as e:
                    raise FetchError("cannot write the download to %s: %s; nothing installed"
                                     % (tempfile.gettempdir(), _reason(e)))
                sha.update(buf)
                progress.update(done)
            progress.update(done, final=True)
    except (OSError, ValueError, http.client.HTTPException) as e:
        # URLError (DNS failure, connection refused, HTTP status, missing file), socket
        # timeouts and resets, a truncated or malformed HTTP response
        if progress:
            progress.break_line()
        raise FetchError(offline_message(url, _reason(e)))
    except BaseException:
        if progress:
            progress.break_line()
        raise
    if total is not None and done != total:
        raise FetchError(offline_message(url, "got %d of %d bytes" % (done, total)))
    return done, sha.hexdigest()


def load_graph(pth):
    """The bundle graph of torchvision's mobilenet_v2 with the state_dict in pth. The file came
    from the network: it is read by checkpoint.py's restricted unpickler (tensors only, nothing
    of the file run)."""
    from . import checkpoint
    from . import mobilenet_v2_builder as mb
    try:
        state = checkpoint.read(pth, use_numpy=True)
        if isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
            state = state["state_dict"]
        return mb.build_graph(state)
    except ImportError:
        raise  # python3-numpy missing: launch.py names the package
    except Exception as e:  # not a checkpoint (any unpickling error), missing/unexpected keys,
        # size mismatches (StateDictError)
        msg = str(e).strip().splitlines()
        raise FetchError("the downloaded file is not a mobilenet_v2 ImageNet state_dict (%s); "
                         "nothing installed" % (msg[0] if msg else type(e).__name__))


def fetch(url, dest, force=False, timeout=30.0):
    """Downloads, verifies, exports and installs; returns (bundle path, summary) or
    (bundle path, None) when it was already installed. Raises FetchError."""
    out = os.path.join(dest, BUNDLE_NAME)
    if os.path.exists(out) and not force:
        return out, None
    url = normalize_url(url)
    expected = hash_prefix(url)

    # The download goes to the temporary directory (not to dest: nothing appears there until
    # the bundle is complete) and is deleted on every way out.
    try:
        fd, tmp = tempfile.mkstemp(prefix="camclass-fetch-", suffix=".pth")
    except OSError as e:
        raise FetchError("cannot create a temporary file in %s: %s; nothing installed"
                         % (tempfile.gettempdir(), _reason(e)))
    try:
        with os.fdopen(fd, "wb") as f:
            size, digest = download(url, f, timeout)
        if digest[:len(expected)] != expected:
            raise FetchError("%s: sha256 mismatch: expected prefix %s (from the file name), got "
                             "%s (sha256 %s of %d bytes); a damaged download or another file; "
                             "nothing installed"
                             % (url, expected, digest[:len(expected)], digest, size))

        from . import mobilenet_v2_builder as mb
        graph = load_graph(tmp)
        created = not os.path.isdir(dest)
        try:
            os.makedirs(dest, exist_ok=True)
            summary = mb.write_bundle(graph, out, name=MODEL_NAME)
        except (mb.ExportError, OSError) as e:
            if created:
                try:
                    os.rmdir(dest)
                except OSError:
                    pass
            raise FetchError("cannot export %s: %s; nothing installed" % (out, e))
        summary["sha256"] = digest
        return out, summary
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def user_models_dir():
    """$XDG_DATA_HOME/camclass/models, else ~/.local/share/camclass/models (the XDG base
    directory rule; the installed camclass looks there first, app/main.c find_asset)."""
    data = os.environ.get("XDG_DATA_HOME", "")
    if not os.path.isabs(data):  # unset, empty or relative: the spec says ignore it
        data = os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(data, "camclass", "models")


def main(argv=None, prog=None, system_dest=None):
    """prog and system_dest are given by the installed front end (camclass-fetch-imagenet):
    then the default folder is the user's, and --system picks system_dest."""
    global PROG
    installed = system_dest is not None
    if prog:
        PROG = prog
    me = prog or "tools/camclass-fetch-imagenet"
    p = argparse.ArgumentParser(
        prog=prog or "camclass-fetch-imagenet",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Download torchvision's ImageNet mobilenet_v2 weights, verify them and "
                    "install them as a camclass bundle (%s)." % BUNDLE_NAME,
        epilog=("examples:\n"
                "  {me}\n      download and install\n"
                "  {me} --url file:///path/to/mobilenet_v2-b0353104.pth\n"
                "      a .pth copied by hand\n"
                "  {me} --force\n      download and install again\n\n"
                "The file name must keep its -<sha256 prefix> part (b0353104): it is checked.\n"
                "Needs python3 and Debian's python3-numpy; not PyTorch.\n"
                "Exit status 0: installed (or already there); 1: nothing changed, one line\n"
                "on stderr says why; camclass then keeps using the self-test model.")
        .format(me=me))
    p.add_argument("--url", help="where to get the .pth: http(s):// or file:// URL or a local "
                                 "path (default: torchvision's published URL, "
                                 "MobileNet_V2_Weights.IMAGENET1K_V1.url, %s)" % DEFAULT_URL)
    if installed:
        where = p.add_mutually_exclusive_group()
        where.add_argument("--dest", default=user_models_dir(),
                           help="folder to install %s into (default: yours, %s, where "
                                "camclass looks for it)" % (BUNDLE_NAME, user_models_dir()))
        where.add_argument("--system", action="store_const", dest="dest", const=system_dest,
                           help="install into %s, for every user and the camclass service "
                                "(needs root)" % system_dest)
    else:
        p.add_argument("--dest", default=DEFAULT_DEST,
                       help="folder to install %s into (default: the repository's "
                            "assets/models/)" % BUNDLE_NAME)
    p.add_argument("--force", action="store_true",
                   help="download and install even if the bundle is already there")
    p.add_argument("--timeout", type=float, default=30.0,
                   help="seconds without progress before a download gives up (30)")
    # Accepted so that scripts written for the PyTorch version keep working; nothing to thread.
    p.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if not args.timeout > 0:
        p.error("--timeout must be > 0")
    try:
        out, summary = fetch(args.url or DEFAULT_URL, args.dest, args.force, args.timeout)
    except FetchError as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("%s: interrupted; nothing installed" % PROG, file=sys.stderr)
        return 130
    if summary is None:
        print("%s: %s is already installed (--force to download it again)" % (PROG, out))
    else:
        print("%s: installed %s: %d classes, %d nodes, %.1f MB of weights (sha256 %s...); "
              "read back and checked"
              % (PROG, out, summary["classes"], summary["nodes"], summary["weight_bytes"] / 1e6,
                 summary["sha256"][:16]))
    return 0

