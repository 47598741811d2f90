#!/usr/bin/env bash
# The second set of ops composed as models compose them (causal attention with masks from tri or
# iota and cmp, RoPE with positions up to 1e5, top-k routing, greedy sampling into an embedding,
# KV-cache scatter with duplicate positions, layout chains, an orchestration over dynamic dims,
# dtype chains), checked against numpy models written from docs/language.md
# (tests/e2e/data/contract_models.py, a generator: fixed seed, one random variant per family).
# Every case also runs --check: the interpreter must give the compiled kernel's bits.
source "$(dirname "$0")/lib/contract.bash"
# Under the sanitizers (CI) the 53 fixed cases only, to stay well inside the ctest timeout.
SWEEP=1
if [[ -n "${PTO_SANFLAGS:-}" ]]; then SWEEP=0; fi
PTO_MODELS_SEED=22 PTO_MODELS_SWEEP=$SWEEP run_contract "$PTO_SOURCE_DIR/tests/e2e/data/contract_models.py"
finish
