#!/usr/bin/env bash
# The larger ports of PyPTO's example programs (tests/e2e/data/pypto_ports.py with
# PTO_PORTS_SET=slow: flash attention over 1024 keys, paged attention over a block table, the
# ring shift by remote load and by remote store and the hand-rolled notify/wait barrier, each on
# 2 and 4 devices), run as pypto_ports.sh runs the others: `pto run --check` against a numpy
# model, then through the Python package.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
export PTO_TEST_TMP="$T"
export PTO_PORTS_SET=slow
PY=/usr/bin/python3
if ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "SKIP: $PY has no numpy"
  exit 77
fi
run_status 0 "$PY" "$PTO_SOURCE_DIR/tests/e2e/lib/contract.py" \
  "$PTO_SOURCE_DIR/tests/e2e/data/pypto_ports.py"
echo "$OUT"
if [ -n "$PTO_SANFLAGS" ]; then # an uninstrumented python3 cannot load sanitized libraries
  echo "skipped the Python package part: a sanitizer build ($PTO_SANITIZE)"
else
  B=$(cd "$(dirname "$PTO")/.." && pwd)
  PYTHONPATH="$B/python" run_status 0 "$PY" "$PTO_SOURCE_DIR/tests/e2e/lib/pypto_ports_py.py" \
    "$PTO_SOURCE_DIR/tests/e2e/data/pypto_ports.py"
  echo "$OUT"
fi
finish
