#!/usr/bin/env bash
# Binary-cache benchmarks, side by side, interleaved run by run (bench/interleave.py;
# bench/RESULTS.md, "Binary cache"):
#   1. a ccache hit compiling the emitted orchestration C++ (the peer of 2)
#   2. `pto compile` that hits the disk cache (key, verify, copy into the work dir), into the
#      work dir of the previous run and into a new one
#   3. `pto run` in a new process from a cache entry (key, verify, dlopen, register, one launch)
#   4. apart: cold `pto compile` (empty cache: parse, lower through LLVM, C++ compile, publish)
# then bench/cache_repeat.c: the first compile of a new process split up, and the in-process
# repeat compile with an equal key (target <= 1 us).
#
#   bench/cache.sh [BUILD_DIR]        (default: build; ccache is installed if missing, with
#                                      apt-get)
# The program is examples/softmax.ptir when it exists, else examples/chain.ptir.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
PTO="$PWD/$BUILD/tools/pto"
[ -x "$PTO" ] || { echo "no $PTO: build first (cmake -S . -B $BUILD -G Ninja && ninja -C $BUILD)" >&2; exit 2; }

need=()
command -v ccache >/dev/null || need+=(ccache)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]}" >&2
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y "${need[@]}" >/dev/null
fi

PROG=examples/softmax.ptir
[ -f "$PROG" ] || PROG=examples/chain.ptir
ROWS=256
RUNARGS=(--dim M=$ROWS)
case "$PROG" in *chain.ptir) RUNARGS+=(--in alpha=0.5) ;; esac

T=$(mktemp -d "${TMPDIR:-/tmp}/pto-bench-cache-XXXXXX")
trap 'rm -rf "$T"' EXIT
COLD="$T/cold-cache" WARM="$T/warm-cache"

# The warm cache, and the emitted C++ for ccache.
PTO_CACHE_DIR="$WARM" "$PTO" compile "$PROG" -o "$T/warm-work" >/dev/null
CPP=$(ls "$T"/warm-work/orchestration/*.cpp | head -1)
export CCACHE_DIR="$T/ccache" CCACHE_NOHASHDIR=1
CXXCMD=(ccache c++ -std=c++17 -O2 -fPIC -I "$PWD/include" -c "$CPP" -o "$T/orch.o")
"${CXXCMD[@]}"  # fill ccache
ccache -z >/dev/null
"${CXXCMD[@]}"
grep -qiE "hits: *1|cache hit \(direct\) *1|Direct: *1" <<<"$(ccache -s 2>/dev/null)" ||
  { echo "warning: the ccache peer did not hit; ccache -s:" >&2; ccache -s >&2; }

echo "== $PROG, $("$PTO" --version), $(nproc) cores, $(uname -m)"
# Interleaved run by run (bench/interleave.py): the ccache hit is the peer of the disk-cache hit.
# The new work dir's predecessor is moved aside, not deleted, before each run: on a filesystem
# mounted with discard (this machine's) deletions cost the next writes their time.
mkdir -p "$T/trash"
python3 bench/interleave.py --runs 60 --warmup 3 -- \
  "ccache hit, orchestration C++" "${CXXCMD[*]}" \
  "pto compile, disk-cache hit" "PTO_CACHE_DIR=$WARM $PTO compile $PROG -o $T/hit-work" \
  "pto compile, disk-cache hit, new work dir" \
  "prepare:mv $T/hit-new \$(mktemp -u -p $T/trash) 2>/dev/null || true; PTO_CACHE_DIR=$WARM $PTO compile $PROG -o $T/hit-new" \
  "pto run, new process, cache hit" "PTO_CACHE_DIR=$WARM $PTO run $PROG ${RUNARGS[*]}"
# The cold compile apart: between the others, its 100+ ms of work would slow whichever ran next.
python3 bench/interleave.py --runs 20 --warmup 2 -- \
  "cold pto compile" "prepare:rm -rf $COLD $T/cold-work; PTO_CACHE_DIR=$COLD $PTO compile $PROG -o $T/cold-work"
echo
echo "== in-process (bench/cache_repeat.c), warm cache"
cc -O2 -std=c17 -D_GNU_SOURCE -Iinclude bench/cache_repeat.c -o "$T/cache_repeat" \
  -L"$BUILD/base" -L"$BUILD/ir" -L"$BUILD/loader" -L"$BUILD/runtime" -lpto_runtime -lpto_loader \
  -lpto_ir -lpto_base \
  -Wl,-rpath,"$PWD/$BUILD/base:$PWD/$BUILD/ir:$PWD/$BUILD/loader:$PWD/$BUILD/runtime"
for i in 1 2 3; do PTO_CACHE_DIR="$WARM" "$T/cache_repeat" "$PROG" $ROWS 2000000; echo; done
