#!/usr/bin/python3
"""camclass-train end to end, on image folders drawn here (make_dataset.py).

- Trained on four drawn scene classes with the self-test model and the random-weight
  mobilenet_v2 as bases: exit 0, a held-out accuracy at or above the floor, and the same
  training with the labels shuffled (nothing to learn) far below it: the accuracy measures
  something.
- The bundle written loads in camclass (a folder of images, headless: the log's top label) and
  camclass-bench; its manifest's "training" record names the base, its SHA-256 and the classes;
  --report writes the same JSON, plus "wrong": per class the held-out images the head got wrong
  (the confusion matrix's off-diagonal counts), each with the 7x7 class activation map of its
  wrong answer, which is the map camclass itself gives for that image with the trained bundle
  (GET /latest?cam=1).
- Near-duplicates: noisy copies of one picture are named, in one class and across two; the
  drawn scenes have none.
- The feature cache: a second run computes nothing, an edited picture computes its views only,
  another base or --no-cache computes all.
- Bad input, each one line and exit 2, nothing written: one class, a class folder without
  images, an unsafe class name, an undecodable image, a base that is no classifier, an existing
  output without --force (left unchanged), bad flags.

    test_train.py CAMCLASS_TRAIN CAMCLASS CAMCLASS_BENCH SELFTEST_CCM MOBILENET_V2_RANDOM_CCM
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "app"))
from checks import check, host_command, run_process, summary  # noqa: E402
from serve_client import Server  # noqa: E402

TRAIN, CAMCLASS, BENCH, SELFTEST, MOBILENET = sys.argv[1:6]
FLOOR = 0.6      # held-out accuracy of the drawn classes (4 classes: chance is 0.25)
SHUFFLED = 0.5   # above this with shuffled labels, the measure itself would be suspect


CACHE = [tempfile.mkdtemp(prefix="camclass-train-cache-")]  # XDG_CACHE_HOME of the runs
FIRST_CACHE = CACHE[0]


def run(exe, *args):
    return run_process(exe, args, 600, {"XDG_CACHE_HOME": CACHE[0]})


def make(path, *extra):
    subprocess.run([sys.executable, os.path.join(HERE, "make_dataset.py"), path, *extra],
                   check=True)


def train(data, base, out, *extra):
    return run(TRAIN, data, "--base", base, "-o", out, "--backend", "cpu", *extra)


def manifest(path):
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("manifest.json"))


def one_line_exit2(r, want, what):
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(lines) == 1 and want in lines[0],
          f"{what}: exit {r.returncode}, one line with {want!r}: {r.stderr!r}")


def trained(tmp, data, base, name):
    out, report = os.path.join(tmp, name + ".ccm"), os.path.join(tmp, name + ".json")
    r = train(data, base, out, "--report", report, "--augment", "4")
    check(r.returncode == 0, f"{name}: exit 0 ({r.stderr[-400:]!r})")
    if r.returncode:
        return None, None
    with open(report) as f:
        rep = json.load(f)
    return out, rep


def check_bundle(out, rep, base, data):
    m = manifest(out)
    t = m.get("training", {})
    with open(base, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    classes = sorted(os.listdir(data))
    in_bundle = {k: v for k, v in rep.items() if k not in ("wrong", "wrong_maps")}
    check(t.get("base", {}).get("sha256") == sha and t == in_bundle,
          f"the bundle's training record names the base's sha256 and equals --report ({t!r:.200})")
    check([c["name"] for c in t.get("classes", [])] == classes and
          m["output"]["classes"] == len(classes), f"classes {classes} in the bundle")
    u = m["output"].get("unknown_threshold", 0)
    check(abs(u - rep["unknown_threshold"]) < 1e-6 and (u == 0 or (1 / len(classes) < u < 1 and
                                                                    m["version"] == 4)),
          f"the unknown threshold {u} is the report's, above chance, in a version 4 bundle")
    # camclass on a folder of one image per class: the log names a class for each.
    pick = os.path.join(os.path.dirname(out), "pick")
    os.makedirs(pick, exist_ok=True)
    for i, c in enumerate(classes):
        first = sorted(os.listdir(os.path.join(data, c)))[0]
        shutil.copy(os.path.join(data, c, first), os.path.join(pick, f"{i}{first[-4:]}"))
    r = run(CAMCLASS, "--model", out, "--input", pick, "--headless", "--log", "-",
            "--backend", "cpu")
    frames = [json.loads(x) for x in r.stdout.splitlines() if '"event":"frame"' in x]
    check(r.returncode == 0 and len(frames) == len(classes) and
          all(f["top"][0]["label"] in classes for f in frames),
          f"camclass runs the trained bundle: exit {r.returncode}, {len(frames)} frames")
    # "unknown": below the bundle's threshold, or --unknown-threshold's; 0 never.
    for flag, t in (([], u), (["--unknown-threshold", "0.999"], 0.999),
                    (["--unknown-threshold", "0"], 0)):
        r = run(CAMCLASS, "--model", out, "--input", pick, "--headless", "--log", "-",
                "--backend", "cpu", *flag)
        fr = [json.loads(x) for x in r.stdout.splitlines() if '"event":"frame"' in x]
        check(r.returncode == 0 and len(fr) == len(classes) and
              all(f.get("unknown", False) == (t > 0 and f["top"][0]["score"] < t) for f in fr),
              f"camclass {' '.join(flag) or '(the bundle threshold)'}: unknown exactly when the "
              f"top score is below {t}: {[(f['top'][0]['score'], f.get('unknown')) for f in fr]}")
    r = run(BENCH, out, "--backend", "cpu", "--runs", "2", "--input",
            os.path.join(pick, sorted(os.listdir(pick))[0]))
    check(r.returncode == 0, f"camclass-bench runs it: exit {r.returncode} {r.stderr[-200:]!r}")


def map_of(bundle, image):
    """camclass's map for one image with bundle: GET /latest?cam=1's "cam" (None if none)."""
    with tempfile.TemporaryDirectory() as one:
        shutil.copy(image, one)
        s = Server(host_command(CAMCLASS) + ["--headless", "--model", bundle, "--backend", "cpu",
                                             "--input", one, "--loop", "--fps", "10", "--serve",
                                             "0"])
        got = None
        for _ in range(50 if s.port else 0):
            st, _, o = s.request("GET", "/latest?cam=1")
            if st == 200:
                got = o.get("cam")
                break
            time.sleep(0.2)
        s.stop()
    return got


def check_wrong(out, rep, name, cross):
    """--report's "wrong" (wrong_maps.h); cross: the first map against camclass's own."""
    classes = [c["name"] for c in rep["classes"]]
    wrong, conf = rep.get("wrong", {}), rep["confusion"]
    entries = [(c, e) for c in classes for e in wrong.get(c, [])]
    check(list(wrong) == classes and
          all(len(wrong[c]) == sum(conf[i]) - conf[i][i] for i, c in enumerate(classes)),
          f"{name}: the report's wrong images per class are the confusion's off-diagonal")

    def good(c, e):
        v = e.get("cam", {}).get("values", [])
        return (e["answer"] != c and e["answer"] in classes and
                os.path.basename(os.path.dirname(e["file"])) == c and e["cam"]["w"] == 7 and
                e["cam"]["h"] == 7 and len(v) == 49 and min(v) == 0 and max(v) == 1)
    bad = [e for c, e in entries if not good(c, e)]
    check(not bad, f"{name}: each wrong image with a 7x7 map of its answer in 0..1 ({bad[:1]})")
    if not cross or not check(entries, f"{name}: some held-out images are wrong"):
        return
    c, e = entries[0]
    got = map_of(out, e["file"])
    diff = max((abs(a - b) for a, b in zip(got["values"], e["cam"]["values"])), default=9) \
        if got else 9
    check(got and got["label"] == e["answer"] and len(got["values"]) == 49 and diff <= 2e-3,
          f"{name}: the report's map of {e['file']} is camclass's (max diff {diff:.2g}; "
          f"{str(got)[:120]})")


def computed(r):
    m = re.search(r"features: (\d+) views computed, (\d+) from the cache", r.stdout)
    return (int(m.group(1)), int(m.group(2))) if r.returncode == 0 and m else (-1, -1)


def cache(tmp, data):
    CACHE[0] = os.path.join(tmp, "fresh-cache")
    out = os.path.join(tmp, "cache.ccm")
    total = computed(train(data, SELFTEST, out, "--force"))
    check(total[0] > 0, f"the first run with a fresh cache computes {total}")
    again = computed(train(data, SELFTEST, out, "--force"))
    check(again == (0, sum(total)), f"the second run computes nothing: {again}")
    pic = os.path.join(data, "cat", sorted(os.listdir(os.path.join(data, "cat")))[-1])
    with open(pic, "rb") as f:
        keep = f.read()
    from PIL import Image
    Image.open(pic).transpose(Image.ROTATE_180).save(pic)
    edited = computed(train(data, SELFTEST, out, "--force", "--augment", "4"))
    check(edited[0] in (1, 5), f"one edited picture computes its views only (1 or 5): {edited}")
    with open(pic, "wb") as f:
        f.write(keep)
    other = computed(train(data, MOBILENET, out, "--force"))
    check(other[1] == 0, f"another base finds nothing cached: {other}")
    none = computed(train(data, SELFTEST, out, "--force", "--no-cache"))
    check(none == (sum(total), 0), f"--no-cache computes all: {none}")
    r = train(data, SELFTEST, out, "--force", "--unknown-threshold", "0")
    check(r.returncode == 0 and "unknown_threshold" not in manifest(out)["output"],
          "--unknown-threshold 0: no threshold in the bundle")
    r = train(data, SELFTEST, out, "--force", "--unknown-threshold", "0.9")
    check(r.returncode == 0 and abs(manifest(out)["output"].get("unknown_threshold", 0) - 0.9)
          < 1e-6, "--unknown-threshold 0.9 is written")


def bad_inputs(tmp, good):
    out = os.path.join(tmp, "bad.ccm")
    one = os.path.join(tmp, "one")
    shutil.copytree(os.path.join(good, "cat"), os.path.join(one, "cat"))
    one_line_exit2(train(one, SELFTEST, out), "1 class folders", "one class")
    empty = os.path.join(tmp, "empty")
    shutil.copytree(good, empty)
    os.makedirs(os.path.join(empty, "nothing here"))
    one_line_exit2(train(empty, SELFTEST, out), "holds no .jpg", "a class without images")
    unsafe = os.path.join(tmp, "unsafe")
    shutil.copytree(good, unsafe)
    os.rename(os.path.join(unsafe, "cat"), os.path.join(unsafe, "c*t"))
    one_line_exit2(train(unsafe, SELFTEST, out), "rename the folder", "an unsafe class name")
    broken = os.path.join(tmp, "broken")
    shutil.copytree(good, broken)
    with open(os.path.join(broken, "cat", "zz.jpg"), "wb") as f:
        f.write(b"\xff\xd8\xff\xe0 not really a jpeg")
    one_line_exit2(train(broken, SELFTEST, out), "zz.jpg", "an undecodable image")
    # A base whose output is the pooled features, not a classifier's.
    m = manifest(SELFTEST)
    feat = next(n for n in m["graph"] if n["op"] == "flatten")["outputs"][0]
    width = next(t for t in m["tensors"] if t["name"] == feat)["shape"][1]
    m["output"] = {"tensor": feat, "kind": "logits", "classes": width}
    m["labels"] = [f"f{i}" for i in range(width)]
    linear = next(n for n in m["graph"] if n["op"] == "linear")
    m["graph"] = [n for n in m["graph"] if n is not linear]
    gone = linear["inputs"][1:] + linear["outputs"]
    m["tensors"] = [t for t in m["tensors"] if t["name"] not in gone]
    nobase = os.path.join(tmp, "features.ccm")
    with zipfile.ZipFile(SELFTEST) as zin, zipfile.ZipFile(nobase, "w") as zout:
        for item in zin.infolist():
            if item.filename == "manifest.json":
                zout.writestr("manifest.json", json.dumps(m))
            elif item.filename != "labels.txt":
                zout.writestr(item, zin.read(item.filename))
    one_line_exit2(train(good, nobase, out), "not a classifier base", "a base without classifier")
    check(not os.path.exists(out), "nothing written by the failed runs")
    with open(out, "wb") as f:
        f.write(b"keep me")
    one_line_exit2(train(good, SELFTEST, out), "--force", "an existing output")
    with open(out, "rb") as f:
        check(f.read() == b"keep me", "the existing output is unchanged")
    for flags, want in ((["--val", "2"], "--val"), (["--augment", "x"], "--augment"),
                        (["--unknown-threshold", "1"], "--unknown-threshold"),
                        (["--backend", "gpu"], "--backend"), (["--bogus"], "--bogus")):
        one_line_exit2(train(good, SELFTEST, out + "2", *flags), want, " ".join(flags))


def mislabelled(tmp):
    """A dark "lights off" picture planted among the cats is named as looking like "lights off"
    (in the text and in the report's look_mislabelled); the clean dataset names nothing of it."""
    data = os.path.join(tmp, "planted")
    make(data, "--per-class", "20", "--seed", "11")
    dark = os.path.join(data, "lights off")
    name = sorted(os.listdir(dark))[4]
    shutil.copy(os.path.join(dark, name), os.path.join(data, "cat", "planted-" + name))
    out, report = os.path.join(tmp, "planted.ccm"), os.path.join(tmp, "planted.json")
    r = train(data, SELFTEST, out, "--report", report)
    check(r.returncode == 0, f"planted: exit {r.returncode} {r.stderr[-300:]!r}")
    line = f'cat/planted-{name} looks like "lights off"'
    check(line in r.stdout, f"planted: no warning {line!r} in:\n{r.stdout[-800:]}")
    with open(report) as f:
        mis = json.load(f).get("look_mislabelled")
    check(isinstance(mis, list) and {"file": os.path.join(data, "cat", "planted-" + name),
                                     "class": "cat", "looks_like": "lights off"} in mis,
          f"planted: the report's look_mislabelled {mis!r}")


def duplicates(tmp):
    """Six noisy JPEG copies of one cat (+-3 per pixel: two captures of a still scene) are named
    as near-duplicates, and a copy in another class as the same picture in two classes, in the
    text and in the report's near_duplicates; again from the cache (the thumbnails are kept with
    the features). The clean datasets of main() name no pair."""
    import numpy as np
    from PIL import Image
    data = os.path.join(tmp, "dups")
    make(data, "--per-class", "12", "--seed", "21")
    cats = os.path.join(data, "cat")
    first = sorted(os.listdir(cats))[0]
    pixels = np.asarray(Image.open(os.path.join(cats, first)).convert("RGB"), dtype=np.int16)
    rng = np.random.default_rng(5)
    for k in range(6):
        noisy = np.clip(pixels + rng.integers(-3, 4, size=pixels.shape), 0, 255)
        Image.fromarray(noisy.astype(np.uint8)).save(os.path.join(cats, f"copy{k}.jpg"),
                                                     quality=92)
    shutil.copy(os.path.join(cats, first), os.path.join(data, "door open", "stray.png"))
    out, report = os.path.join(tmp, "dups.ccm"), os.path.join(tmp, "dups.json")
    for run_no in (1, 2):
        r = train(data, SELFTEST, out, "--report", report, "--force")
        check(r.returncode == 0, f"dups {run_no}: exit {r.returncode} {r.stderr[-300:]!r}")
        line = '"cat": 6 of its 18 images are near-duplicates of another one'
        check(line in r.stdout, f"dups {run_no}: no {line!r} in:\n{r.stdout[-900:]}")
        line = f"door open/stray.png and cat/{first} are the same picture in two classes"
        check(line in r.stdout, f"dups {run_no}: no {line!r}")
        with open(report) as f:
            pairs = json.load(f).get("near_duplicates")
        want = [[os.path.join(cats, first), os.path.join(cats, f"copy{k}.jpg")] for k in range(6)]
        want.append([os.path.join(cats, first), os.path.join(data, "door open", "stray.png")])
        check(isinstance(pairs, list) and sorted(pairs) == sorted(want),
              f"dups {run_no}: the report's near_duplicates {pairs!r}")


def main():
    with tempfile.TemporaryDirectory(prefix="camclass-train-") as tmp:
        data, shuffled = os.path.join(tmp, "scenes"), os.path.join(tmp, "shuffled")
        make(data, "--per-class", "24", "--seed", "3")
        make(shuffled, "--per-class", "24", "--seed", "3", "--shuffle-labels")
        for base, name in ((SELFTEST, "selftest"), (MOBILENET, "mobilenet_v2_random")):
            out, rep = trained(tmp, data, base, name)
            if not rep:
                continue
            acc = rep["held_out_accuracy"]
            print(f"{name}: held-out accuracy {acc:.3f} of {rep['held_out_images']} images")
            check(acc >= FLOOR, f"{name}: held-out accuracy {acc:.3f} >= {FLOOR}")
            check(rep.get("near_duplicates") == [],
                  f"{name}: no near-duplicates among drawn scenes: {rep.get('near_duplicates')}")
            check_bundle(out, rep, base, data)
            check_wrong(out, rep, name, False)
            sout, srep = trained(tmp, shuffled, base, name + "-shuffled")
            if srep:
                check_wrong(sout, srep, name + "-shuffled", True)
                print(f"{name}, labels shuffled: {srep['held_out_accuracy']:.3f}")
                check(srep["held_out_accuracy"] <= SHUFFLED,
                      f"{name}, labels shuffled: accuracy {srep['held_out_accuracy']:.3f} <= "
                      f"{SHUFFLED}")
        cache(tmp, data)
        mislabelled(tmp)
        duplicates(tmp)
        bad_inputs(tmp, data)
    shutil.rmtree(FIRST_CACHE, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
