#!/usr/bin/env bash
# The language's contract (docs/language.md) checked with expected values computed by numpy,
# not by pto's interpreter: scalar semantics (tests/e2e/data/contract_scalars.py), the tile ops
# of both sets (contract_tiles.py), orchestrations, hosts and collectives (contract_tensors.py)
# and every dtype through the ops that take it (contract_dtypes.py). Every case also runs --check
# and requires its worst error to be 0: the compiled kernel gives the interpreter's bits.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
export PTO_TEST_TMP="$T" # the harness's case folders go under $T, removed at exit
PY=/usr/bin/python3
if ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "SKIP: $PY has no numpy"
  exit 77
fi
for cases in contract_scalars contract_tiles contract_tensors contract_dtypes; do
  run_status 0 "$PY" "$PTO_SOURCE_DIR/tests/e2e/lib/contract.py" \
    "$PTO_SOURCE_DIR/tests/e2e/data/$cases.py"
  echo "$OUT"
done
# The dtype sweep once more through the generic lowering (no x86 fast paths), as a host without
# them compiles it.
PTO_GENERIC_LOWERING=1 run_status 0 "$PY" "$PTO_SOURCE_DIR/tests/e2e/lib/contract.py" \
  "$PTO_SOURCE_DIR/tests/e2e/data/contract_dtypes.py"
echo "$OUT"
finish
