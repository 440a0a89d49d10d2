#!/bin/bash
# camclass — captures the self-test model's data set from vivid (docs/MODELS.md): one boot of
# the vivid VM (tests/vm/run-vm.sh) per split, each running the capture plan that
# tools/train_selftest.py writes, then the frames are converted to RGB PNGs (BT.601 limited
# range, as camclass converts them) under the data set folder.
#
#   tools/capture_vivid_dataset.sh [--build DIR] [--data DIR] [--seed N] [split...]
#     --build DIR   build folder holding tests/input/camclass-capture-static (default: build;
#                   built there with ninja if missing)
#     --data DIR    data set root (default ~/.cache/camclass-dataset); SPLIT/*.png land there
#     --seed N      seed of the capture plan's control values (default 1)
#     split         train, train-hd, train-hard, heldout (default all four)
# About 1-2 minutes per split on a 2-core machine; nothing is written inside the repository.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
build="$repo/build" data="$HOME/.cache/camclass-dataset" seed=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "capture_vivid_dataset: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
splits=("$@")
[ ${#splits[@]} -gt 0 ] || splits=(train train-hd train-hard heldout)
py=/usr/bin/python3
bin="$build/tests/input/camclass-capture-static"
[ -x "$bin" ] || ninja -C "$build" -j2 tests/input/camclass-capture-static
work=$(mktemp -d "${TMPDIR:-/tmp}/camclass-dataset.XXXXXX")
trap 'rm -rf "$work"' EXIT
for split in "${splits[@]}"; do
  "$py" "$here/train_selftest.py" plan --split "$split" --seed "$seed" >"$work/capture-plan.sh"
  rm -rf "$work/raw"
  "$repo/tests/vm/run-vm.sh" --timeout 600 --output "$work/raw" --output-mb 2048 \
    --bin "$bin" --bin "$work/capture-plan.sh" -- sh /bin/capture-plan.sh
  rm -rf "${data:?}/$split"
  "$py" "$here/train_selftest.py" import "$work/raw" "$data/$split"
done
