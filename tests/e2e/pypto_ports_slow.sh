#!/usr/bin/env bash
# The larger ports of PyPTO's example programs (tests/e2e/data/pypto_ports.py with
# PTO_PORTS_SET=slow: flash attention over 1024 keys; paged attention over a block table as the
# per-request, dynamic-shape (two shapes, one program), multi-config (block groups) and SPMD
# examples write it; Qwen3's projections and its single-layer decode that composes them; the ring
# shift by remote load and by remote store and the hand-rolled notify/wait barrier, each on 2
# and 4 devices, and put/get and the dynamic rank count on 2 to 4), run as pypto_ports.sh runs
# the others: `pto run --check` against a numpy model, then through the Python package.
export PTO_PORTS_SET=slow
source "$(dirname "$0")/lib/pypto_ports.bash"
