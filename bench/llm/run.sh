#!/usr/bin/env bash
# The Llama-style decode step of bench/RESULTS.md ("Issue #33 item 5"), in one run:
#   bench/llm/run.sh [BUILD_DIR] [decode_bench.py options]      (default build dir: build)
# Installs Debian's python3-torch when it is missing (the PyTorch peer; never needed to build or
# test pto; if it cannot be installed, the torch column says why and the rest runs) and
# libopenblas-dev (numpy's BLAS through Debian's alternatives: without it numpy, the faster peer,
# runs on the reference BLAS and the peer column is meaningless; the bench says which it loaded),
# builds the
# Python package and the compiler, prints the machine (lscpu) and its load, then runs
# decode_bench.py with Debian's python3 at the issue's sizes (batch 1 and 8, hidden 1024, 8 heads,
# context 512). A private cache dir keeps the compile out of the timings and away from other
# caches.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
[ $# -gt 0 ] && shift

if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "installing python3-torch (the PyTorch peer)" >&2
  SUDO=
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y --no-install-recommends python3-torch >&2 ||
    echo "python3-torch could not be installed: the torch column is skipped" >&2
fi

if ! grep -q 'libopenblas\.so' <<<"$(ldconfig -p)"; then
  echo "installing libopenblas-dev (numpy's BLAS for the numpy peer)" >&2
  SUDO=
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y --no-install-recommends libopenblas-dev >&2 ||
    echo "libopenblas-dev could not be installed: numpy runs on the reference BLAS" >&2
fi

[ -f "$B/build.ninja" ] || cmake -S . -B "$B" -G Ninja >&2
ninja -C "$B" pto_compiler pto_runtime pto_stats >&2

lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|L[123])' || true
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
export PTO_CACHE_DIR=${PTO_CACHE_DIR:-$(mktemp -d)}
PYTHONPATH="$B/python" exec /usr/bin/python3 bench/llm/decode_bench.py "$@"
