#!/usr/bin/env bash
# Faults of the binary cache, each asserting that nothing wrong is loaded and the run still
# succeeds: a process killed during publish, a flipped byte, a truncated file, a swapped shared
# object, a read-only cache, a full cache, a cache dir that is not private. And a hit never
# loads the compiler library or LLVM.
source "$(dirname "$0")/lib/common.bash"

RUN=(run "$EX/add.ptir" --dim M=70 --check)

# stat_of FIELD: a counter from pto cache stats.
stat_of() { "$PTO" cache stats | sed -n "s/^$1 *//p"; }
entries() { find "$PTO_CACHE_DIR" -mindepth 2 -maxdepth 2 -path "$PTO_CACHE_DIR/[0-9a-f][0-9a-f]/*"; }

# ---- killed during publish: no partial entry is ever visible --------------------------------
export PTO_CACHE_DIR="$T/kill"
PTO_CACHE_TEST_PAUSE=60 "$PTO_TEST" compile "$EX/add.ptir" -o "$T/k1" 2>/dev/null &
pid=$!
for _ in $(seq 1 600); do
  ls "$PTO_CACHE_DIR"/tmp/*/manifest.json >/dev/null 2>&1 && break
  sleep 0.1
done
expect_true "the build finished into a private dir" bash -c "ls '$PTO_CACHE_DIR'/tmp/*/manifest.json >/dev/null"
{
  kill -9 "$pid"
  wait "$pid"
} 2>/dev/null
expect_true "no entry after SIGKILL during publish" test -z "$(entries)"
run_pto 0 cache ls
expect_true "pto cache ls shows nothing" test -z "$OUT"
run_pto 0 "${RUN[@]}" && expect_out PASS
expect_true "one whole entry after the rerun" test "$(entries | wc -l)" = 1
run_pto 0 cache verify
expect_out "1 entries checked, 0 corrupt"
run_pto 0 cache gc
expect_out "removed 1 stale build dirs"

# ---- damaged entries: detected, discarded, rebuilt; never loaded ----------------------------
damage_test() { # NAME COMMAND-ON-ENTRY...
  local name=$1
  shift
  export PTO_CACHE_DIR="$T/damage-$name"
  run_pto 0 "${RUN[@]}"
  local entry
  entry=$(entries)
  (cd "$entry" && "$@")
  run_pto 0 "${RUN[@]}" && expect_out PASS
  expect_out "is corrupt, discarding it and compiling again"
  expect_true "$name: the corruption is counted" test "$(stat_of corruptions)" = 1
  run_pto 0 cache verify
  expect_out "1 entries checked, 0 corrupt"
}
damage_test flipped bash -c "printf 'Z' | dd of=orchestration/main.so bs=1 seek=1000 conv=notrunc 2>/dev/null"
damage_test truncated truncate -s 200 kernels/kernels.so
damage_test swapped cp kernels/kernels.so orchestration/main.so
damage_test edited bash -c "echo '// edited' >>orchestration/main.cpp"
damage_test manifest bash -c "echo '{' >manifest.json"
# One changed field of a manifest that still reads (issue #34 item 7): the seal catches it.
damage_test scratch sed -i 's/"scratch_bytes": *[0-9]*/"scratch_bytes": 4096/' manifest.json
damage_test unsealed rm manifest.xxh128

# ---- pto cache verify checks the manifest against its seal, and discards a changed one ------
export PTO_CACHE_DIR="$T/seal-verify"
run_pto 0 "${RUN[@]}"
entry=$(entries)
expect_true "the entry holds its manifest's seal" test -s "$entry/manifest.xxh128"
sed -i 's/"scratch_bytes": *[0-9]*/"scratch_bytes": 4096/' "$entry/manifest.json"
expect_true "the edit changed the manifest" grep -q '"scratch_bytes": 4096' "$entry/manifest.json"
run_pto 1 cache verify
expect_out "1 entries checked, 1 corrupt (discarded)"
expect_out "manifest.json: content hash"
expect_out "differs from the one sealed in manifest.xxh128"
expect_true "verify discarded the entry" test -z "$(entries)"
run_pto 0 "${RUN[@]}" && expect_out PASS
run_pto 0 cache verify
expect_out "1 entries checked, 0 corrupt"

# ---- a cache that cannot be written: compile without caching, warn once ---------------------
can_mount=0
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then can_mount=1; fi

# in_ns COMMANDS: runs bash COMMANDS in a private mount namespace (root only).
in_ns() { unshare -m bash -c "$1"; }

if [ "$can_mount" = 1 ]; then
  # Read-only: a private tmpfs with one entry, remounted read-only. The entry still hits;
  # another program compiles without caching, with one warning.
  D="$T/ro"
  mkdir -p "$D"
  OUT=$(in_ns "mount -t tmpfs -o mode=0700,size=16m tmpfs '$D' &&
    PTO_CACHE_DIR='$D' '$PTO' ${RUN[*]} >/dev/null 2>&1 &&
    mount -o remount,ro '$D' &&
    PTO_CACHE_DIR='$D' '$PTO' ${RUN[*]} 2>&1 &&
    echo ---- &&
    PTO_CACHE_DIR='$D' '$PTO' run '$EX/scale_rows.ptir' --dim M=64 --in alpha=0.5 --check 2>&1" 2>&1)
  expect_true "read-only cache: both runs pass" test "$(grep -c PASS <<<"$OUT")" -ge 3
  expect_true "read-only cache: a hit needs no writing" \
    bash -c "sed '/^----/q' <<<'$OUT' | grep -vq warning"
  expect_true "read-only cache: one warning" test "$(grep -c 'pto: warning:' <<<"$OUT")" = 1
  expect_true "read-only cache: it says why" grep -q "Read-only file system" <<<"$OUT"

  # Full: a tmpfs too small for one entry.
  D="$T/full"
  mkdir -p "$D"
  OUT=$(in_ns "mount -t tmpfs -o mode=0700,size=48k tmpfs '$D' &&
    PTO_CACHE_DIR='$D' '$PTO' ${RUN[*]} 2>&1" 2>&1)
  expect_true "full cache: the run passes" grep -q PASS <<<"$OUT"
  expect_true "full cache: one warning" test "$(grep -c 'pto: warning:' <<<"$OUT")" = 1
  expect_true "full cache: it says why" grep -q "compiling without caching" <<<"$OUT"
  expect_true "full cache: it says why" grep -qi "full\|No space" <<<"$OUT"
else
  for err in EROFS ENOSPC; do
    export PTO_CACHE_DIR="$T/hook-$err"
    OUT=$(PTO_CACHE_TEST_FAIL_PUBLISH=$err "$PTO_TEST" "${RUN[@]}" 2>&1)
    expect_true "$err: the run passes" grep -q PASS <<<"$OUT"
    expect_true "$err: one warning" test "$(grep -c 'pto: warning:' <<<"$OUT")" = 1
  done
  if [ "$(id -u)" != 0 ]; then
    export PTO_CACHE_DIR="$T/ro-chmod"
    mkdir -p "$PTO_CACHE_DIR" && chmod 500 "$PTO_CACHE_DIR"
    run_pto 0 "${RUN[@]}" && expect_out PASS
    expect_out "compiling without caching"
    chmod 700 "$PTO_CACHE_DIR"
  fi
fi

# ---- a cache dir that is not private is refused, and the run still succeeds ------------------
export PTO_CACHE_DIR="$T/open"
mkdir -p "$PTO_CACHE_DIR" && chmod 777 "$PTO_CACHE_DIR"
run_pto 0 "${RUN[@]}" && expect_out PASS
expect_out "writable by group or others (mode 777): refusing to use it; run chmod 700"
expect_true "nothing was written into it" test -z "$(ls -A "$PTO_CACHE_DIR")"
run_pto 1 cache ls
expect_out "refusing to use it"
if [ "$(id -u)" = 0 ]; then
  export PTO_CACHE_DIR="$T/theirs"
  mkdir -p "$PTO_CACHE_DIR" && chmod 700 "$PTO_CACHE_DIR" && chown 65534 "$PTO_CACHE_DIR"
  run_pto 0 "${RUN[@]}" && expect_out PASS
  expect_out "is owned by uid 65534, not by you (uid 0): refusing to use it"
fi

# ---- a hit never loads the compiler library or LLVM -----------------------------------------
export PTO_CACHE_DIR="$T/llvm"
expect_true "pto does not link LLVM" bash -c "! ldd '$PTO' | grep -qi llvm"
rt=$(ldd "$PTO" | sed -n 's/.*libpto_runtime.so => \([^ ]*\).*/\1/p')
if [ -n "$rt" ]; then
  expect_true "libpto_runtime does not link LLVM" bash -c "! readelf -d '$rt' | grep NEEDED | grep -qi llvm"
  expect_true "libpto_runtime does not link the compiler" \
    bash -c "! readelf -d '$rt' | grep NEEDED | grep -q pto_compiler"
fi
OUT=$(LD_DEBUG=files "$PTO" "${RUN[@]}" 2>&1)
expect_true "a miss loads the compiler library" grep -q "file=.*libpto_compiler" <<<"$OUT"
expect_true "a miss loads LLVM" grep -q "file=.*libLLVM" <<<"$OUT"
OUT=$(LD_DEBUG=files "$PTO" "${RUN[@]}" 2>&1)
expect_true "a hit passes" grep -q PASS <<<"$OUT"
expect_true "a hit loads no compiler library" bash -c "! grep -q 'file=.*libpto_compiler' <<<'$OUT'"
expect_true "a hit loads no LLVM" bash -c "! grep -qi 'file=.*libLLVM' <<<'$OUT'"
OUT=$(LD_DEBUG=files "$PTO" compile "$EX/add.ptir" -o "$T/llvm-w" 2>&1)
expect_true "a compile that hits loads no LLVM" bash -c "! grep -qi 'file=.*libLLVM' <<<'$OUT'"
finish
