#!/bin/sh
# camclass — the main job: set up what running needs (tools/setup.sh run: no PyTorch, no test
# tools, a build without the tests), then run camclass (arguments are passed on; with none it
# classifies the first camera, else the bundled sample clip, in a window).
# Setup's output (apt-get, meson, ninja) goes to stderr: stdout is camclass's alone, so that
# `tools/run.sh --headless --log - | jq .` works from the first run. The working directory is
# kept, so relative paths in the arguments mean what they say.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/setup.sh" run >&2
exec "$root/build/app/camclass" "$@"
