#!/usr/bin/env bash
# The CMake install's components (CMakeLists.txt, docs/remote-cache.md): runtime (the command and
# the libraries that run programs, no LLVM), compiler (libpto_compiler and its precompiled
# header), dev (headers, CMake package, pkg-config file) and python, each installed alone.
source "$(dirname "$0")/lib/common.bash"
build=$(cd "$(dirname "$PTO")/.." && pwd)
for c in runtime compiler dev python; do
  run_status 0 cmake --install "$build" --component "$c" --prefix "$T/$c"
done
files() { (cd "$T/$1" && find . -type f -o -type l | sort); }
OUT=$(files runtime)
expect_out ./bin/pto
expect_out libpto_runtime.so
expect_out libpto_loader.so
expect_true "runtime has no compiler library" test "$(grep -c 'compiler\|include/\|python' <<<"$OUT")" = 0
deps=$(ldd "$T/runtime/bin/pto" "$T"/runtime/lib*/libpto_*.so)
expect_true "runtime links no LLVM" test "$(grep -ci llvm <<<"$deps")" = 0
expect_true "runtime resolves its libraries from the install" test "$(grep -c 'not found' <<<"$deps")" = 0
OUT=$(files compiler)
expect_out libpto_compiler.so
expect_out pch/pto/pto_orchestration_api.h.gch
expect_true "compiler holds only the compiler" test "$(grep -vc 'compiler\|pch' <<<"$OUT")" = 0
OUT=$(files dev)
expect_out include/pto/cache.h
expect_out cmake/pto/ptoConfig.cmake
expect_out pkgconfig/pto.pc
expect_true "dev holds no binary" test "$(grep -c '\.so\|bin/' <<<"$OUT")" = 0
OUT=$(files python)
expect_out pto/__init__.py
expect_out pto/_paths.py
finish
