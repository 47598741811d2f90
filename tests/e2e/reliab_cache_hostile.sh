#!/usr/bin/env bash
# Odd files where the cache keeps its own (ROOT/stats, ROOT/lock), a hard link inside an entry to
# a file of the user's, and pto cache gc / clear / verify racing compiles in other processes:
# nothing hangs, nothing of the user's outside the cache is touched, every run is right.
# loader/cache_stats.c, loader/cache.c (publish_entry), loader/cache_admin.c.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/c"
entries() { find "$1" -mindepth 2 -maxdepth 2 -path "$1/[0-9a-f][0-9a-f]/*" -type d; }
run_pto 0 run "$EX/add.ptir" --dim M=40 --check && expect_out PASS
entry=$(entries "$PTO_CACHE_DIR")

# ---- ROOT/stats a FIFO: pto cache stats opened it for reading and waited for a writer for good --
rm "$PTO_CACHE_DIR/stats" && mkfifo "$PTO_CACHE_DIR/stats"
run_status 1 timeout 60 "$PTO" cache stats &&
  expect_out "cannot read $PTO_CACHE_DIR/stats: it is a FIFO, not a regular file"
run_status 0 timeout 60 "$PTO" run "$EX/add.ptir" --dim M=40 --check && expect_out PASS
expect_true "the FIFO is left as it was" test -p "$PTO_CACHE_DIR/stats"
run_pto 0 cache ls && expect_out "${entry##*/}"
rm "$PTO_CACHE_DIR/stats" && mkdir "$PTO_CACHE_DIR/stats"
run_status 1 timeout 60 "$PTO" cache stats &&
  expect_out "cannot read $PTO_CACHE_DIR/stats: it is a directory, not a regular file"
rmdir "$PTO_CACHE_DIR/stats"
run_pto 0 cache stats && expect_out "entries"

# ---- ROOT/lock a FIFO or a directory: gc is bounded and says so --------------------------------
mkfifo "$PTO_CACHE_DIR/lock"
run_status 0 timeout 60 "$PTO" cache gc
rm "$PTO_CACHE_DIR/lock" && mkdir "$PTO_CACHE_DIR/lock"
run_status 1 timeout 60 "$PTO" cache gc --max-size 1 &&
  expect_out "cannot open $PTO_CACHE_DIR/lock: Is a directory"
expect_true "a failed gc removed nothing" test -d "$entry"
rmdir "$PTO_CACHE_DIR/lock"

# ---- a file of an entry replaced by a hard link to the user's file: discarded, the file kept ----
echo precious >"$T/mine.txt"
so=$(find "$entry" -name kernels.so)
rm "$so" && ln "$T/mine.txt" "$so"
run_pto 0 run "$EX/add.ptir" --dim M=40 --check && expect_out PASS
expect_out "is corrupt, discarding it"
run_pto 0 cache clear
expect_true "the user's hard-linked file is untouched" grep -qx precious "$T/mine.txt"

# ---- gc, clear and verify in a loop while other processes compile and run ----------------------
# (bounded: the loop stops when the runs are done, or after 240 s whatever happens)
mkdir -p "$T/victim" && echo precious >"$T/victim/keep"
run_pto 0 run "$EX/add.ptir" --dim M=40
ln -s "$T/victim" "$PTO_CACHE_DIR/tmp/discard-999997-ABCdef"
echo mine >"$PTO_CACHE_DIR/tmp/notes"
(
  end=$((SECONDS + 240))
  while [ ! -e "$T/stop" ] && [ $SECONDS -lt $end ]; do
    "$PTO" cache gc --max-size 1 >/dev/null 2>&1
    "$PTO" cache clear >/dev/null 2>&1
    "$PTO" cache verify >/dev/null 2>&1
  done
) &
cleaner=$!
for i in 1 2 3 4 5 6; do
  run_status 0 timeout 120 "$PTO" run "$EX/add.ptir" --dim M=$((40 + i)) --check && expect_out PASS
  PTO_CACHE_MAX_SIZE=1 run_status 0 timeout 120 "$PTO" run "$EX/chain.ptir" --dim M=40 \
    --in alpha=$i --check && expect_out PASS
done
touch "$T/stop"
wait "$cleaner"
expect_true "nothing behind a symlink in tmp/ was removed" grep -qx precious "$T/victim/keep"
expect_true "a user's file in tmp/ was kept" grep -qx mine "$PTO_CACHE_DIR/tmp/notes"
finish
