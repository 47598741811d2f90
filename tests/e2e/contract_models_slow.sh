#!/usr/bin/env bash
# tests/e2e/contract_models.sh's generator as a larger sweep: another seed with three random
# variants per family (shapes, diagonals, dtypes, k, page sizes, layout chains), and the default
# cases once more through the generic lowering (no x86 fast paths). ~150 programs: under
# ctest's 600 s on a loaded 2-core host; more seeds by hand:
#   PTO_MODELS_SEED=7 PTO_MODELS_SWEEP=8 python3 tests/e2e/lib/contract.py \
#     tests/e2e/data/contract_models.py
source "$(dirname "$0")/lib/contract.bash"
CASES_PY="$PTO_SOURCE_DIR/tests/e2e/data/contract_models.py"
PTO_MODELS_SEED=1 PTO_MODELS_SWEEP=3 run_contract "$CASES_PY"
PTO_GENERIC_LOWERING=1 run_contract "$CASES_PY"
finish
