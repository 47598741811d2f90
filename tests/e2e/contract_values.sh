#!/usr/bin/env bash
# The language's contract (docs/language.md) checked with expected values computed by numpy,
# not by pto's interpreter: scalar semantics (tests/e2e/data/contract_scalars.py), the tile ops
# of both sets (contract_tiles.py), orchestrations, hosts and collectives (contract_tensors.py)
# and every dtype through the ops that take it (contract_dtypes.py). Every case also runs --check
# and requires its worst error to be 0: the compiled kernel gives the interpreter's bits.
source "$(dirname "$0")/lib/contract.bash"
for cases in contract_scalars contract_tiles contract_tensors contract_dtypes; do
  run_contract "$PTO_SOURCE_DIR/tests/e2e/data/$cases.py"
done
# The dtype sweep once more through the generic lowering (no x86 fast paths), as a host without
# them compiles it.
PTO_GENERIC_LOWERING=1 run_contract "$PTO_SOURCE_DIR/tests/e2e/data/contract_dtypes.py"
finish
