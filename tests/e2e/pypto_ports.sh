#!/usr/bin/env bash
# PyPTO's own example programs (its examples/: elementwise, scalar ops, activations, matmul,
# concat, fused linear, softmax, RMSNorm and LayerNorm, matmul_acc, tile assemble, dynamic valid
# shapes, the task graph, split-K, the auto-tiled matmuls, the mixed kernel, the FFNs, the vector
# DAG, the whole llama_mini model, Qwen3's RoPE + KV-cache update, MLP and RMSNorm, the batch
# paged attention, and the distributed hello_rank, programming model and window buffer on 2
# devices) ported to PTIR as
# docs/pypto-guide.md and docs/pypto-language.md tell a PyPTO user to
# (tests/e2e/data/pypto_ports.py). Each runs with `pto run --check` (compiled == interpreter, bit
# for bit) against a numpy model of what the
# example asserts; then the same ports run through the Python package as a PyPTO user calls a
# compiled program (pto.compile(text, entry=...), compiled(*arrays) in a ChipWorker of PyPTO's
# a2a3sim platform) and must give the CLI's results. The larger models are pypto_ports_slow.sh.
source "$(dirname "$0")/lib/pypto_ports.bash"
