#!/usr/bin/env bash
# The second set of ops composed as models compose them (causal attention with masks from tri or
# iota and cmp, RoPE with positions up to 1e5, top-k routing, greedy sampling into an embedding,
# KV-cache scatter with duplicate positions, layout chains, an orchestration over dynamic dims,
# dtype chains), checked against numpy models written from docs/language.md
# (tests/e2e/data/contract_models.py, a generator: fixed seed, one random variant per family).
# Every case also runs --check: the interpreter must give the compiled kernel's bits.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
export PTO_TEST_TMP="$T"
PY=/usr/bin/python3
if ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "SKIP: $PY has no numpy"
  exit 77
fi
# Under the sanitizers (CI) the 53 fixed cases only, to stay well inside the ctest timeout.
SWEEP=1
if [[ -n "${PTO_SANFLAGS:-}" ]]; then SWEEP=0; fi
run_status 0 env PTO_MODELS_SEED=22 PTO_MODELS_SWEEP=$SWEEP "$PY" \
  "$PTO_SOURCE_DIR/tests/e2e/lib/contract.py" "$PTO_SOURCE_DIR/tests/e2e/data/contract_models.py"
echo "$OUT"
finish
