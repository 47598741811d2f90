# Shared by the contract tests (tests/e2e/contract_*.sh, pypto_language.sh), which run a cases
# file of tests/e2e/data/ through the harness tests/e2e/lib/contract.py: common.bash, one cache
# for every pass of the test (the later passes compile nothing), the harness's case folders under
# $T (removed at exit), and a SKIP where /usr/bin/python3 has no numpy.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
export PTO_CACHE_DIR="$T/cache"
export PTO_TEST_TMP="$T"
PY=/usr/bin/python3
if ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "SKIP: $PY has no numpy"
  exit 77
fi

# run_contract CASES [ARGS...]: the harness on a cases file, expected to pass; prints its output.
# Variables set before it (PTO_DIST_CHIPS=threads run_contract ...) reach the harness.
run_contract() {
  run_status 0 "$PY" "$PTO_SOURCE_DIR/tests/e2e/lib/contract.py" "$@"
  echo "$OUT"
}
