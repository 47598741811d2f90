#!/usr/bin/env bash
# Only regular files are read, with a size limit (issue #10, class 5): a FIFO, a device or a
# directory given as a source, a .npy input, a log, a binary or a work-dir file is rejected
# without being opened for reading (no hang: every command runs under a timeout) with exit 2;
# PTO_COMPILER_LIBRARY naming one fails the compile (exit 2) without a dlopen that would block.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

# no_hang EXIT TEXT ARGS...: pto ARGS exits EXIT within 20 s and says TEXT.
no_hang() {
  local want=$1 text=$2
  shift 2
  OUT=$(timeout 20 "$PTO" "$@" 2>&1)
  local got=$?
  expect_true "pto $* exits $want (got $got)" test "$got" = "$want"
  expect_out "$text"
}

mkfifo "$T/fifo.ptir" "$T/fifo.npy" "$T/fifo.log" "$T/fifo.so"
mkdir -p "$T/dir.ptir"
for cmd in check fmt run compile; do
  extra=()
  [ "$cmd" = compile ] && extra=(-o "$T/out-$cmd")
  no_hang 2 "fifo.ptir is a FIFO: only regular files are read" "$cmd" "$T/fifo.ptir" "${extra[@]}"
  no_hang 2 "/dev/zero is a character device: only regular files are read" "$cmd" /dev/zero "${extra[@]}"
done
no_hang 2 "dir.ptir is a directory: only regular files are read" check "$T/dir.ptir"
no_hang 2 "dir.ptir is a directory" fmt "$T/dir.ptir"
no_hang 2 "fifo.log is a FIFO" trace "$T/fifo.log"
no_hang 2 "is a directory" trace "$T"
no_hang 2 "/dev/zero is a character device" trace /dev/zero
no_hang 2 "--in a: $T/fifo.npy is a FIFO" run "$EX/add.ptir" --in a="$T/fifo.npy"
no_hang 2 "--in a: $T is a directory" run "$EX/add.ptir" --in a="$T"
no_hang 2 "fifo.so is a FIFO" build-id "$T/fifo.so"
no_hang 2 "/dev/zero is a character device" build-id /dev/zero
# The compiler library: dlopen of a FIFO would block for ever.
PTO_COMPILER_LIBRARY="$T/fifo.so" PTO_CACHE_DIR="$T/cache-lib" no_hang 2 \
  "$T/fifo.so is a FIFO: only regular files are read (set PTO_COMPILER_LIBRARY" \
  compile "$EX/add.ptir" -o "$T/out-lib"
PTO_COMPILER_LIBRARY="$T/dir.ptir" PTO_CACHE_DIR="$T/cache-lib" no_hang 2 \
  "dir.ptir is a directory: only regular files are read" compile "$EX/add.ptir" -o "$T/out-lib"

# Size limits: a sparse 300 MiB source is refused before it is read.
truncate -s 300M "$T/huge.ptir"
no_hang 2 "huge.ptir is 314572800 bytes, more than the limit of 256 MiB" check "$T/huge.ptir"

# Work-dir files: each one replaced by a FIFO or a directory.
run_pto 0 compile "$EX/add.ptir" -o "$T/wd"
for f in manifest.json program.ptir orchestration/main.cpp kernels/add_block.ll kernels/kernels.so orchestration/main.so; do
  rm -rf "$T/wd2" && cp -r "$T/wd" "$T/wd2" && rm "$T/wd2/$f" && mkfifo "$T/wd2/$f"
  no_hang 2 "$f is a FIFO: only regular files are read" run "$T/wd2" --dim M=64 --check
  if [ "$f" != program.ptir ]; then
    no_hang 2 "$f is a FIFO" rebuild "$T/wd2"
  fi
  rm -rf "$T/wd2" && cp -r "$T/wd" "$T/wd2" && rm "$T/wd2/$f" && mkdir "$T/wd2/$f"
  no_hang 2 "$f is a directory" run "$T/wd2" --dim M=64 --check
done

# Cache entries: a file of an entry replaced by a FIFO is corrupt (discarded, rebuilt), no hang.
run_pto 0 run "$EX/add.ptir" --dim M=64
entry=$(find "$PTO_CACHE_DIR" -mindepth 2 -maxdepth 2 -path "$PTO_CACHE_DIR/[0-9a-f][0-9a-f]/*" | head -1)
rm "$entry/orchestration/main.so" && mkfifo "$entry/orchestration/main.so"
OUT=$(timeout 60 "$PTO" run "$EX/add.ptir" --dim M=64 --check 2>&1)
expect_true "a FIFO in a cache entry does not hang the run" test $? = 0
expect_out "is corrupt, discarding it and compiling again"
expect_out PASS

finish
