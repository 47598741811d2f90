#!/usr/bin/env bash
# Where a cold `pto compile` spends its time (bench/RESULTS.md, "Binary cache"): each run is a
# cold compile into an empty cache under `strace -f --seccomp-bpf` tracing only process starts
# and exits and the opening of libpto_compiler (a few syscalls: the compile itself is not slowed
# by the trace), split at those events into phases. Prints min and median per phase over RUNS,
# with the precompiled orchestration header (default) and without (PTO_NO_PCH=1), alternating,
# and the CPU time of the whole process tree (the strace process's own time included).
#
#   bench/compile_split.sh [BUILD_DIR] [RUNS] [PROGRAM]   (default: build, 10, examples/softmax.ptir)
# strace is installed with apt-get when missing (for this benchmark only).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
RUNS=${2:-10}
PROG=${3:-examples/softmax.ptir}
PTO="$PWD/$BUILD/tools/pto"
[ -x "$PTO" ] || { echo "no $PTO: build first" >&2; exit 2; }
if ! command -v strace >/dev/null; then
  echo "installing strace" >&2
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y strace >/dev/null
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/pto-bench-split-XXXXXX")
trap 'rm -rf "$T"' EXIT

# One traced cold compile; prints the phases in ms on one line.
split_once() {
  rm -rf "$T/cache" "$T/work"
  local TIMEFORMAT='%U %S' # bash's time: user and system CPU of the whole process tree
  { time env "$@" PTO_CACHE_DIR="$T/cache" strace -f --seccomp-bpf -ttt -qq -s 512 -o "$T/trace" \
    -e trace=execve,exit_group,openat "$PTO" compile "$PROG" -o "$T/work" >/dev/null; } 2>"$T/cpu"
  awk -v cpu="$(cat "$T/cpu")" '
    function ms(a, b) { return (b - a) * 1000 }
    $3 ~ /^execve\(/ && !t0 { t0 = $2; pto = $1 }
    $1 == pto && /libpto_compiler\.so"/ && !/ENOENT/ && !tc { tc = $2 }
    $3 ~ /^execve\(/ && /"-shared"/ && /\.cpp"/ && !cxx { cxx = $1; tcxx = $2 }
    $3 ~ /^execve\(/ && /"-shared"/ && /kernels\.so"/ && !cc { cc = $1; tcc = $2 }
    $3 ~ /^exit_group/ && $1 == cxx { ecxx = $2 }
    $3 ~ /^exit_group/ && $1 == cc { ecc = $2 }
    $3 ~ /^exit_group/ && $1 == pto { tend = $2 }
    END {
      both = ecxx > ecc ? ecxx : ecc
      split(cpu, c, " ")
      printf "%.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f\n", ms(t0, tc), ms(tc, tcxx), ms(tcxx, ecxx),
        ms(tcxx, tcc), ms(tcc, ecc), ms(both, tend), ms(t0, tend), (c[1] + c[2]) * 1000
    }' "$T/trace"
}

names=("start, parse, verify, cache key and lookup (until libpto_compiler is opened)"
       "dlopen libpto_compiler + libLLVM, passes, emit orchestration C++ (until c++ starts)"
       "orchestration: c++ -O2 -shared (compile, assemble, link), in parallel with:"
       "kernels: LLVM lowering, opt and codegen (c++ start until the kernel link starts)"
       "kernels: link (cc -shared)"
       "wait, manifest (hashes, Build-IDs), publish into the cache"
       "total (process start to exit)"
       "CPU time of all its processes (user + system; less sensitive to a loaded machine)")
for mode in pch nopch; do : >"$T/$mode"; done
for ((i = 0; i < RUNS; i++)); do
  split_once PTO_NO_PCH=0 >>"$T/pch"
  split_once PTO_NO_PCH=1 >>"$T/nopch"
done
echo "== cold pto compile $PROG, $RUNS runs each, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
for mode in pch nopch; do
  echo
  echo "### $( [ $mode = pch ] && echo "with the precompiled header (default)" || echo "PTO_NO_PCH=1")"
  echo
  echo "| phase | min ms | median ms |"
  echo "| --- | ---: | ---: |"
  for c in 1 2 3 4 5 6 7 8; do
    sort -n -k$c,$c "$T/$mode" | awk -v c=$c -v name="${names[$((c - 1))]}" '
      { v[NR] = $c } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "| %s | %.1f | %.1f |\n", name, v[1], m }'
  done
done
