#!/usr/bin/env bash
# C programs a new user writes from docs/c-api.md and the README alone, built as the docs say
# (`cc prog.c $(pkg-config --cflags --libs pto)`, PKG_CONFIG_PATH=build for the build tree):
# data/newuser_runtime.c runs data/newuser_pipe.ptir (an orch of three kernels) with -D alpha=2
# on a worker with resident tensors, registered once and dispatched five times (called and
# submitted), checked against a C oracle, and a copy past the tensor's edge refused;
# data/newuser_builder.c builds a kernel and an orch with a loop and a call through
# pto/ir_builder.h, prints it, compiles and runs it.
source "$(dirname "$0")/lib/common.bash"
B=$(cd "$(dirname "$PTO")/.." && pwd)
D="$PTO_SOURCE_DIR/tests/e2e/data"
cd "$T" || exit 1
cp "$D/newuser_pipe.ptir" pipe.ptir
for prog in runtime builder; do
  # shellcheck disable=SC2046,SC2086 # pkg-config's flags and PTO_SANFLAGS are flag lists
  run_status 0 cc -std=c17 -Wall -Wextra -Werror $PTO_SANFLAGS "$D/newuser_$prog.c" -o "$prog" \
    $(PKG_CONFIG_PATH=$B pkg-config --cflags --libs pto) -lm || continue
  run_status 0 "./$prog"
  case $prog in
  runtime)
    expect_out "resident dispatch x5: PASS"
    expect_out "pto_worker_copy_from_tensor_slice: dim 0: [40, 41) is outside the extent 40" ;;
  builder)
    expect_out "built program: PASS"
    expect_out "    %xs = tensor.slice(%x, [%i * 16, 0], [16, 64])"
    # what it printed is a program pto check accepts
    sed -n '/^program/,/^built program/p' <<<"$OUT" | sed '$d' >built.ptir
    run_pto 0 check built.ptir && run_pto 0 run built.ptir --check && expect_out PASS ;;
  esac
done
# examples/runtime/README.md, where a new user looks for more C programs, lists every one there.
for c in "$PTO_SOURCE_DIR"/examples/runtime/*.c; do
  expect_true "examples/runtime/README.md lists $(basename "$c")" \
    grep -q "^| \`$(basename "$c")\` |" "$PTO_SOURCE_DIR/examples/runtime/README.md"
done
finish
