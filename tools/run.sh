#!/bin/sh
# camclass — the main job: set everything up, then run it. Extra arguments go to the program.
set -eu
cd "$(dirname "$0")/.."
tools/setup.sh
exec build/app/camclass-bench "${@:-build/tools/mobilenet_v2_random.ccm}"
