#!/usr/bin/env bash
# tile.sin / tile.cos against tile.exp (bench/kernels/sincos.ptir) on one [M,N] f32 matrix:
#   bench/kernels/sincos.sh [BUILD_DIR] [M] [N] [ROUNDS]     (defaults: build, 1024, 4096, 30)
# prints each entry's median device wall (pto bench) and sin's and cos's ratio to exp's.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
M=${2:-1024}
N=${3:-4096}
ROUNDS=${4:-30}
export PTO_CACHE_DIR=${PTO_CACHE_DIR:-$PWD/$B/bench-kernels-cache}
echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
declare -A med low
for e in exp sin cos; do
  # the default random input (uniform in [-1, 1)): every element runs the whole reduction and
  # both polynomials, whatever its value
  out=$("$B/tools/pto" bench bench/kernels/sincos.ptir --entry "$e" --dim M="$M" --dim N="$N" \
    --rounds "$ROUNDS" --spread none)
  us() { awk -v f="$1" '/^device wall/ { v = $f; m = v ~ /ms$/ ? 1000 : 1; sub(/[mu]s$/, "", v);
                                          print v * m; exit }' <<<"$out"; }
  low[$e]=$(us 4)
  med[$e]=$(us 5)
  echo "$e: device wall min ${low[$e]} us, median ${med[$e]} us"
done
# on a shared machine the minimum is the steadier of the two
awk -v e="${med[exp]}" -v s="${med[sin]}" -v c="${med[cos]}" -v le="${low[exp]}" \
  -v ls="${low[sin]}" -v lc="${low[cos]}" \
  'BEGIN {printf "median: sin/exp %.2fx, cos/exp %.2fx; min: sin/exp %.2fx, cos/exp %.2fx\n",
          s / e, c / e, ls / le, lc / le}'
