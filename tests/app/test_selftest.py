#!/usr/bin/python3
"""camclass --selftest on crafted samples (any model): the truth in labels.txt (or the file
names), the minimum in selftest.json (by bundle file name, stem, or model name; a percentage
too) or --threshold; PASS -> 0, below -> 1, nothing to compare with -> 1, an unreadable sample or
model -> 2; the per-class lines and the total.

With the committed self-test assets (assets/models/selftest*.ccm, assets/samples/selftest/),
`camclass --selftest` on each bundle must pass on the backends given (cpu and vulkan).

    test_selftest.py CAMCLASS MODEL SAMPLES_DIR [ASSETS_DIR BACKEND...]
"""
import functools
import json
import os
import re
import shutil
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, summary  # noqa: E402
import checks  # noqa: E402

run = functools.partial(checks.run, timeout=600)


def main():
    exe, model, samples = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    assets = sys.argv[4] if len(sys.argv) > 4 else None
    backends = sys.argv[5:] or ["cpu"]
    tmp = tempfile.mkdtemp(prefix="camclass-selftest-")
    base = ["--model", model, "--backend", "cpu"]
    png = os.path.join(samples, "bars_320x240.png")
    jpg = os.path.join(samples, "bars_320x240.jpg")

    # The model's answers on six frames, from a headless run: they become the truth.
    sample = os.path.join(tmp, "sample")
    os.mkdir(sample)
    for i in range(6):
        shutil.copy(png if i % 2 == 0 else jpg, os.path.join(sample, "%03d-x.%s" %
                                                              (i, "png" if i % 2 == 0 else "jpg")))
    rc, out, err = run(exe, base + ["--headless", "--input", sample, "--log", "-", "--top-k", "2"])
    check(rc == 0, "headless run: %s" % err)
    frames = [json.loads(l) for l in out.splitlines()]
    frames = [o for o in frames if o.get("event") == "frame"]
    truth = [o["top"][0]["label"] for o in frames]
    second = [o["top"][1]["label"] for o in frames]
    check(len(truth) == 6, "6 frames classified")
    model_name = frames[0]["model"] if frames else ""
    with open(os.path.join(sample, "labels.txt"), "w") as f:
        f.write("".join(t + "\n" for t in truth))

    def selftest(extra=(), folder=sample):
        return run(exe, base + ["--selftest", "--input", folder] + list(extra))

    # No minimum recorded anywhere: fail, saying so.
    rc, out, err = selftest()
    check(rc == 1 and "no minimum recorded" in out, "no minimum: rc %d: %s%s" % (rc, out, err))
    check("total 6/6 = 100.00% top-1" in out, "no minimum: total line: %s" % out)

    # The minimum by bundle file name, by stem, by model name, as a plain number, as a percentage.
    stem = os.path.splitext(os.path.basename(model))[0]
    for spec in ({"min_top1": {os.path.basename(model): 1.0}}, {"min_top1": {stem: 0.99}},
                 {"min_top1": {model_name: 1.0}}, {"min_top1": 0.5}, {"min_top1": 98}):
        with open(os.path.join(sample, "selftest.json"), "w") as f:
            json.dump(spec, f)
        rc, out, err = selftest()
        check(rc == 0 and "PASS" in out, "%r: rc %d: %s%s" % (spec, rc, out, err))
    # Per-class lines: each label of the truth with its frame count.
    for label in set(truth):
        check(any(l.startswith("selftest: " + label) and (" %d " % truth.count(label)) in l
                  for l in out.splitlines()), "no per-class line for %r: %s" % (label, out))

    # One wrong truth: 5/6 = 83.33% < 98% -> exit 1; --threshold 0.8 lets it pass.
    wrong = list(truth)
    wrong[3] = second[3]
    with open(os.path.join(sample, "labels.txt"), "w") as f:
        f.write("".join(t + "\n" for t in wrong))
    rc, out, err = selftest()
    check(rc == 1 and "total 5/6 = 83.33% top-1; FAIL: below the minimum 98.00%" in out,
          "below: rc %d: %s%s" % (rc, out, err))
    check("(1)" in out, "below: the mistake is named: %s" % out)
    rc, out, err = selftest(["--threshold", "0.8"])
    check(rc == 0 and "PASS (minimum 80.00%)" in out, "--threshold: rc %d: %s" % (rc, out))

    # Truth from the names when there is no labels.txt: "<NNN->label<-...>.png".
    named = os.path.join(tmp, "named")
    os.mkdir(named)
    for i, t in enumerate(truth):
        slug = "".join(ch if ch.isalnum() else "-" for ch in t.lower())
        shutil.copy(png if i % 2 == 0 else jpg, os.path.join(named, "%03d-%s-v1.%s" %
                                                             (i, slug, "png" if i % 2 == 0 else "jpg")))
    rc, out, err = selftest(["--threshold", "1"], folder=named)
    check(rc == 0 and "total 6/6" in out, "names: rc %d: %s%s" % (rc, out, err))

    # --labels renames the model's classes for the self-test too: the truth in the old names is
    # then none of the model's (exit 1); a file of the wrong length is a bad argument (exit 2).
    with zipfile.ZipFile(model) as z:
        names = z.read("labels.txt").decode().splitlines()
    renamed = os.path.join(tmp, "renamed.txt")
    with open(renamed, "w") as f:
        f.write("".join("renamed-%d\n" % i for i in range(len(names))))
    rc, out, err = selftest(["--threshold", "1", "--labels", renamed])
    check(rc == 1 and "6 frames not counted: their labels are not the model's" in out,
          "--labels: the self-test reads the renamed classes: rc %d: %s%s" % (rc, out, err))
    with open(renamed, "w") as f:
        f.write("only-one\n")
    rc, out, err = selftest(["--threshold", "1", "--labels", renamed])
    check(rc == 2 and renamed in err and len(err.strip().splitlines()) == 1,
          "--labels of the wrong length: rc %d: %s" % (rc, err))

    # Unusable samples and models: 2.
    rc, out, err = selftest(folder=os.path.join(tmp, "missing"))
    check(rc == 2 and err.startswith("camclass: cannot read sample"), "missing: %d %s" % (rc, err))
    with open(os.path.join(sample, "labels.txt"), "w") as f:
        f.write(truth[0] + "\n")
    rc, out, err = selftest()
    check(rc == 2 and "lists 1 labels for 6 images" in err, "short labels: %d %s" % (rc, err))
    rc, out, err = run(exe, ["--selftest", "--model", "/nonexistent.ccm"])
    check(rc == 2 and "cannot read model /nonexistent.ccm" in err, "no model: %d %s" % (rc, err))

    # The committed self-test model(s) on the committed sample, on each backend given.
    if assets:
        bundles = [b for b in ("selftest.ccm", "selftest-int8.ccm")
                   if os.path.exists(os.path.join(assets, "models", b))]
        check(bundles, "no self-test bundle in %s/models" % assets)
        for b in bundles:
            for be in backends:
                rc, out, err = run(exe, ["--selftest", "--backend", be, "--model",
                                         os.path.join(assets, "models", b)])
                print(out, end="")
                check(rc == 0 and "PASS" in out, "%s on %s: rc %d: %s" % (b, be, rc, err))
                # Which one ran shows in the name the window, logs and /metrics show.
                named = re.search(r"selftest: model (\S+) ", out)
                check(named and named.group(1).endswith("_int8") == ("int8" in b),
                      "%s: the model's name %r says int8 or not" % (b, named and named.group(1)))

    shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
