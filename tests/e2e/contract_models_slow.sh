#!/usr/bin/env bash
# tests/e2e/contract_models.sh's generator as a larger sweep: another seed with three random
# variants per family (shapes, diagonals, dtypes, k, page sizes, layout chains), and the default
# cases once more through the generic lowering (no x86 fast paths). ~150 programs: under
# ctest's 600 s on a loaded 2-core host; more seeds by hand:
#   PTO_MODELS_SEED=7 PTO_MODELS_SWEEP=8 python3 tests/e2e/lib/contract.py \
#     tests/e2e/data/contract_models.py
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
export PTO_TEST_TMP="$T"
PY=/usr/bin/python3
if ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "SKIP: $PY has no numpy"
  exit 77
fi
CASES_PY="$PTO_SOURCE_DIR/tests/e2e/data/contract_models.py"
run_status 0 env PTO_MODELS_SEED=1 PTO_MODELS_SWEEP=3 "$PY" \
  "$PTO_SOURCE_DIR/tests/e2e/lib/contract.py" "$CASES_PY"
echo "$OUT"
run_status 0 env PTO_GENERIC_LOWERING=1 "$PY" "$PTO_SOURCE_DIR/tests/e2e/lib/contract.py" "$CASES_PY"
echo "$OUT"
finish
