#!/usr/bin/env bash
# Set up, build, and run the whole test suite through CTest. Extra arguments go to ctest
# (e.g. scripts/test.sh -L unit for the quick loop).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)" "$@"
