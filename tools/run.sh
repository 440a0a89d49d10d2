#!/bin/sh
# camclass — the main job: set everything up, then run camclass (arguments are passed on; with
# none it classifies the first camera, else the bundled sample clip, in a window).
set -eu
cd "$(dirname "$0")/.."
tools/setup.sh
exec build/app/camclass "$@"
