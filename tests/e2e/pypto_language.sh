#!/usr/bin/env bash
# PyPTO's language ops written in PTIR as docs/pypto-language.md maps them, checked against the
# expected values of PyPTO's own runtime tests recomputed with numpy (tests/e2e/data/
# pypto_language.py); every case also runs --check, and the compiled kernel must give the
# interpreter's bits.
source "$(dirname "$0")/lib/contract.bash"
run_contract "$PTO_SOURCE_DIR/tests/e2e/data/pypto_language.py"
finish
