# Sourced by the tests of a runtime-only pto (-DPTO_COMPILER=OFF, docs/remote-cache.md): builds
# one beside the tested build, in <build>/runtime-only (a few minutes the first time, ccache
# hits and an up-to-date ninja after), with that build's compilers, type and sanitizers, and
# sets RTPTO to its pto. The build holds a lock, so two such tests run by ctest -j share it.
build_runtime_only() {
  local build launcher
  build=$(cd "$(dirname "$PTO")/.." && pwd)
  RT="$build/runtime-only"
  cache_var() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
  launcher=$(cache_var CMAKE_C_COMPILER_LAUNCHER)
  if ! (
    flock 9
    timeout 300 cmake -S "$PTO_SOURCE_DIR" -B "$RT" -G Ninja -DPTO_COMPILER=OFF -DPTO_WERROR=ON \
      -DCMAKE_BUILD_TYPE="$(cache_var CMAKE_BUILD_TYPE)" -DPTO_SANITIZE="$(cache_var PTO_SANITIZE)" \
      -DCMAKE_C_COMPILER="$(cache_var CMAKE_C_COMPILER)" -DCMAKE_CXX_COMPILER="$(cache_var CMAKE_CXX_COMPILER)" \
      ${launcher:+-DCMAKE_C_COMPILER_LAUNCHER=$launcher -DCMAKE_CXX_COMPILER_LAUNCHER=$launcher} \
      >"$T/configure.log" 2>&1 &&
      timeout 1500 cmake --build "$RT" -j"$(nproc)" >"$T/build.log" 2>&1
  ) 9>"$build/runtime-only.lock"; then
    echo "FAIL: the runtime-only build (-DPTO_COMPILER=OFF) failed:"
    tail -n 30 "$T/configure.log" "$T/build.log" | sed 's/^/  | /'
    exit 1
  fi
  RTPTO="$RT/tools/pto"
}
