#!/usr/bin/env bash
# Compile time of long orchestrations (bench/RESULTS.md, "Round 20: orchestration compile time"):
# generates programs of N kernel calls and times a cold `pto compile --no-cache` of each, end to
# end and its orchestration C++ step alone (the host C++ compiler, through a PTO_CXX wrapper that
# times the command compiling the .cpp). Wall seconds and CPU seconds (user + system of the whole
# process tree; less sensitive to a loaded host than wall).
#
#   bench/compile_orch.sh [BUILD_DIR] [SIZES] [SHAPES] [RUNS]
#     default: build "100 1000 3000 10000" "straight loop" 1
#
# Shapes: `straight` is N calls in the entry's body, each on a slice of its own (an unrolled
# graph); `loop` is a for of 2 iterations whose body holds N/2 calls (an unrolled layer in a
# loop over layers). A rolled loop (one call in a body run N times) compiles in constant time and
# is not measured. PTO_CXX_REAL names the C++ compiler the wrapper runs (default: c++). Run it
# under `nice -n 19` on a shared host; compare two builds by running it on each, alternated.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
SIZES=${2:-100 1000 3000 10000}
SHAPES=${3:-straight loop}
RUNS=${4:-1}
case $BUILD in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac # relative: to the repository root
PTO="$BUILD/tools/pto"
[ -x "$PTO" ] || { echo "no $PTO: build first" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/pto-bench-orch-XXXXXX")
trap 'rm -rf "$T"' EXIT

# The wrapper: the compile of the orchestration .cpp appends "wall user sys" to $T/cxx.
cat >"$T/cxx" <<EOF
#!/usr/bin/env bash
case " \$* " in
*.cpp\ *)
  exec 3>&2
  { TIMEFORMAT='%R %U %S'; time "${PTO_CXX_REAL:-c++}" "\$@" 2>&3; } 2>>"$T/cxx.times" ;;
*) exec "${PTO_CXX_REAL:-c++}" "\$@" ;;
esac
EOF
chmod +x "$T/cxx"

# gen SHAPE N: the program, of the e2e tests' kernels and calls (tests/e2e/lib/long_orch.bash).
source tests/e2e/lib/long_orch.bash
gen() {
  local shape=$1 n=$2 pad=
  long_orch_kernels
  cat <<'PTIR'

orch @main(%x: tensor[64,16] f32, inout %y: tensor[64,16] f32, %a: f32 = runtime)
    -> (tensor[64,16] f32) {
PTIR
  if [ "$shape" = loop ]; then
    echo '  for %l in range(0, 2) {'
    pad='  '
    n=$((n / 2))
  fi
  long_orch_calls "$n" "$pad"
  [ "$shape" = loop ] && echo '  }'
  echo '  return %y'
  echo '}'
}

load() { cut -d' ' -f1 /proc/loadavg; }
rev=$(git -C "$BUILD/.." rev-parse --short HEAD 2>/dev/null || echo '?')
echo "== cold pto compile --no-cache of long orchestrations, $BUILD ($rev), $(nproc) cores," \
  "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "$(${PTO_CXX_REAL:-c++} --version | head -1), -O2, nice $(nice)"
echo
echo "| shape | calls | run | load before | compile wall s | compile CPU s | C++ wall s | C++ CPU s |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for shape in $SHAPES; do
  for n in $SIZES; do
    gen "$shape" "$n" >"$T/p.ptir"
    for ((run = 1; run <= RUNS; run++)); do
      rm -rf "$T/w" "$T/cxx.times"
      l=$(load)
      TIMEFORMAT='%R %U %S'
      { time PTO_CXX="$T/cxx" "$PTO" compile "$T/p.ptir" -o "$T/w" --no-cache >/dev/null; } \
        2>"$T/all.times"
      read -r aw au as <"$T/all.times"
      read -r cw cu cs <"$T/cxx.times"
      awk -v s="$shape" -v n="$n" -v r="$run" -v l="$l" -v aw="$aw" -v au="$au" -v as="$as" \
        -v cw="$cw" -v cu="$cu" -v cs="$cs" 'BEGIN {
          printf "| %s | %d | %d | %s | %.1f | %.1f | %.1f | %.1f |\n", s, n, r, l, aw, au + as,
            cw, cu + cs }'
    done
  done
done
