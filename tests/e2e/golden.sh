#!/usr/bin/env bash
# Whole-text golden tests of emitted code: the orchestration C++ and the kernel LLVM IR (as
# lowered, before optimization) of examples compiled into work dirs. After an intended change
# to the emitters, regenerate with: PTO_UPDATE_GOLDEN=1 ctest --test-dir build -R golden
source "$(dirname "$0")/lib/common.bash"
G="$PTO_SOURCE_DIR/tests/golden"

check_golden() { # FILE GOLDEN
  if [ "${PTO_UPDATE_GOLDEN:-}" = 1 ]; then
    cp "$1" "$2"
  fi
  if diff -u "$2" "$1" >"$T/diff"; then
    PASSES=$((PASSES + 1))
  else
    echo "FAIL: $1 differs from $2:"
    head -40 "$T/diff"
    FAILS=$((FAILS + 1))
  fi
}

run_pto 0 compile "$EX/add.ptir" -o "$T/add" --no-cache
check_golden "$T/add/orchestration/main.cpp" "$G/add.main.cpp"
# The kernel's IR is an x86-64 host's with AVX-512 (the project's machines): its attributes say
# so ("prefer-vector-width"="512", compiler/lower_x86.c); on another host it is not compared.
if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
  check_golden "$T/add/kernels/add_block.ll" "$G/add.add_block.ll"
else
  echo "note: $G/add.add_block.ll not compared: this host has no avx512f"
fi
check_golden "$T/add/program.ptir" "$G/add.program.ptir"
# A kernel as the entry: the orch made for it calls it once, at the kernel header's line.
run_pto 0 compile "$EX/add.ptir" -o "$T/addk" --entry add_block --no-cache
check_golden "$T/addk/orchestration/add_block_entry.cpp" "$G/add.add_block_entry.cpp"
check_golden "$T/addk/program.ptir" "$G/add.add_block_entry.program.ptir"
run_pto 0 compile "$EX/incore.ptir" -o "$T/incore" --no-cache
check_golden "$T/incore/orchestration/main.cpp" "$G/incore.main.cpp"
check_golden "$T/incore/program.ptir" "$G/incore.program.ptir"
run_pto 0 compile "$EX/scale_rows.ptir" -o "$T/sr" -D act=0 --no-cache
check_golden "$T/sr/orchestration/main.cpp" "$G/scale_rows.main.cpp"
# A kernel whose matmul sits in a K loop runs on the cube core: rt_submit_aic_task, as in the
# manifest's core_type.
run_pto 0 compile "$EX/matmul.ptir" -o "$T/mm" --entry main --no-cache
check_golden "$T/mm/orchestration/main.cpp" "$G/matmul.main.cpp"
expect_true "matmul kernel is aic in the manifest" grep -q '"core_type": "aic"' "$T/mm/manifest.json"
# The host C of an L3 program (scalars, division, loop, if, slices, window, call arguments).
run_pto 0 compile "$G/host_small.ptir" -o "$T/hs" --devices 2 --no-cache
check_golden "$T/hs/host/host.c" "$G/host_small.host.c"
# The orchestration header and every golden orchestration compile with both C++ compilers.
for cxx in c++ clang++; do
  if ! command -v "$cxx" >/dev/null; then
    echo "note: $cxx is not installed; its golden compile is skipped"
    continue
  fi
  for f in "$G"/*.main.cpp; do
    expect_true "$(basename "$f") compiles with $cxx" \
      "$cxx" -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I "$PTO_SOURCE_DIR/include" "$f"
  done
done
# PTO_CXX=clang++ builds the orchestration of a program with f16 scalars and tensors, which runs.
if command -v clang++ >/dev/null; then
  PTO_CXX=clang++ run_pto 0 run "$PTO_SOURCE_DIR/tests/programs/dtype_f16.ptir" --dim M=40 --check --no-cache
  expect_out PASS
fi
finish
