#!/usr/bin/env bash
# PyPTO's language ops written in PTIR as docs/pypto-language.md maps them, checked against the
# expected values of PyPTO's own runtime tests recomputed with numpy (tests/e2e/data/
# pypto_language.py); every case also runs --check, and the compiled kernel must give the
# interpreter's bits.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
export PTO_TEST_TMP="$T"
PY=/usr/bin/python3
if ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "SKIP: $PY has no numpy"
  exit 77
fi
run_status 0 "$PY" "$PTO_SOURCE_DIR/tests/e2e/lib/contract.py" \
  "$PTO_SOURCE_DIR/tests/e2e/data/pypto_language.py"
echo "$OUT"
finish
