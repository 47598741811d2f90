#!/usr/bin/env bash
# The orchestration C++ compile uses the precompiled pto_orchestration_api.h built beside
# libpto_compiler (compiler/CMakeLists.txt) at -O2, and only there: not at other levels, not with
# PTO_NO_PCH=1, not with PTO_INCLUDE_DIR (headers it was not built from). Either way the program
# compiles and runs the same.
source "$(dirname "$0")/lib/common.bash"

# A C++ compiler that logs its arguments: a fresh identity, so every compile below is cold.
cat >"$T/cxx" <<EOS
#!/bin/sh
echo "\$*" >>"$T/cxx.log"
exec c++ "\$@"
EOS
chmod +x "$T/cxx"
export PTO_CXX="$T/cxx"

cold() { # cold LABEL ARGS...: a cold compile into a cache of its own, then a checked run
  local label=$1
  shift
  : >"$T/cxx.log"
  PTO_CACHE_DIR="$T/cache-$label" run_pto 0 compile "$EX/add.ptir" -o "$T/w-$label" "$@"
  PTO_CACHE_DIR="$T/cache-$label" run_pto 0 run "$T/w-$label" --dim M=77 --check
  expect_out PASS
}
orch_line() { grep -F -- "-shared" "$T/cxx.log" | grep -F -- ".cpp"; }

if [ -f "$(dirname "$PTO")/../compiler/pch/pto/pto_orchestration_api.h.gch" ]; then
  cold default
  expect_true "-O2 compile searches the precompiled header first" \
    grep -qE -- "-I [^ ]*/compiler/pch -I " <<<"$(orch_line)"
  # GCC reports a precompiled header it used with a leading '!' under -H.
  "$T/cxx" -std=c++17 -O2 -fwrapv -fPIC -c -H -I "$(dirname "$PTO")/../compiler/pch" \
    -I "$PTO_SOURCE_DIR/include" -o "$T/o.o" "$T/w-default/orchestration/main.cpp" 2>"$T/h.txt"
  expect_true "GCC accepts the precompiled header" grep -q "^! .*pto_orchestration_api.h.gch" "$T/h.txt"
else
  echo "no precompiled header beside this pto (an installed or out-of-tree layout): skipped"
fi

no_pch() { # no_pch LABEL ARGS...: a cold compile whose C++ compile has no precompiled header
  local label=$1
  shift
  : >"$T/cxx.log"
  PTO_CACHE_DIR="$T/cache-$label" run_pto 0 compile "$EX/add.ptir" -o "$T/w-$label" "$@"
  expect_true "$label: the orchestration was compiled" test -n "$(orch_line)"
  expect_true "$label: no precompiled header" test -z "$(grep -F -- "/compiler/pch" "$T/cxx.log")"
}
PTO_NO_PCH=1 no_pch env-off
no_pch O1 -O1
PTO_INCLUDE_DIR="$PTO_SOURCE_DIR/include" no_pch include-dir
finish
