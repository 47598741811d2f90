#!/usr/bin/env bash
# First launch in a new process (bench/RESULTS.md, "Binary cache"): side by side, interleaved run
# by run (bench/interleave.py, so that a change in the host's load falls on both), a
# `pto --version` process (the peer: process start, the dynamic loader, exit) and `pto run` of a
# cached program in a new process (parse, cache key, verify and dlopen the entry, open a worker,
# random inputs, one launch, close). Prints the ratio of their min and median and the median of
# the round-by-round ratios; then the in-process split of the same work (bench/cache_repeat.c),
# and its first pto_compile with and without the identity memo in the cache dir
# (PTO_CACHE_NO_TOOLCHAIN_MEMO=1).
#
#   bench/first_launch.sh [BUILD_DIR] [RUNS]   (default: build, 60)
# The program is examples/softmax.ptir with 256 rows.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
RUNS=${2:-60}
PTO="$PWD/$BUILD/tools/pto"
[ -x "$PTO" ] || { echo "no $PTO: build first" >&2; exit 2; }
PROG=examples/softmax.ptir
T=$(mktemp -d "${TMPDIR:-/tmp}/pto-bench-first-XXXXXX")
trap 'rm -rf "$T"' EXIT
export PTO_CACHE_DIR="$T/cache"
"$PTO" compile "$PROG" -o "$T/work" >/dev/null # fills the cache

echo "== $("$PTO" --version), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
python3 bench/interleave.py --runs "$RUNS" --warmup 5 --json "$T/i.json" -- \
  "pto --version (peer)" "$PTO --version" \
  "pto run, new process, cache hit" "$PTO run $PROG --dim M=256"
python3 - "$T/i.json" <<'PY'
import json, statistics, sys
t = list(json.load(open(sys.argv[1]))["times_ms"].values())
v, run = t[0], t[1]
print(f"\nratio pto run / pto --version: min {min(run) / min(v):.2f}x, "
      f"median {statistics.median(run) / statistics.median(v):.2f}x, round by round "
      f"{statistics.median(a / b for a, b in zip(run, v)):.2f}x (target <= 2x)")
print(f"pto --version: min {min(v):.2f} ms, median {statistics.median(v):.2f} ms; "
      f"pto run: min {min(run):.2f} ms, median {statistics.median(run):.2f} ms")
PY
echo
echo "== in-process split (bench/cache_repeat.c), warm cache, three new processes"
cc -O2 -std=c17 -D_GNU_SOURCE -Iinclude bench/cache_repeat.c -o "$T/cache_repeat" \
  -L"$BUILD/base" -L"$BUILD/ir" -L"$BUILD/loader" -L"$BUILD/runtime" -lpto_runtime -lpto_loader \
  -lpto_ir -lpto_base \
  -Wl,-rpath,"$PWD/$BUILD/base:$PWD/$BUILD/ir:$PWD/$BUILD/loader:$PWD/$BUILD/runtime"
for i in 1 2 3; do "$T/cache_repeat" "$PROG" 256 200000; echo; done
echo "== first pto_compile (a disk hit) with the identity memo and without (PTO_CACHE_NO_TOOLCHAIN_MEMO=1), alternating"
for i in 1 2 3 4 5 6; do
  echo "memo    $("$T/cache_repeat" "$PROG" 256 1000 | grep 'first pto_compile')"
  echo "no memo $(PTO_CACHE_NO_TOOLCHAIN_MEMO=1 "$T/cache_repeat" "$PROG" 256 1000 | grep 'first pto_compile')"
done
