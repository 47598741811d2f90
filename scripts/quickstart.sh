#!/usr/bin/env bash
# The main job: set up, build, then compile examples/add.ptir and run it on the sim platform,
# checking the result against the reference interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
set -x
build/tools/pto run examples/add.ptir --dim M=100 --check
