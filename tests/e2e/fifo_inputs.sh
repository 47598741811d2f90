#!/usr/bin/env bash
# A FIFO (or a device) where pto expects a regular file is refused at once, never waited on:
# program.ptir of a work dir under pto rebuild (it said "up to date" and left a dir that does
# not load), the cache's counters file under pto cache stats and every compile that counts into
# it. Each run is under `timeout 20`, so a regression fails (exit 124) instead of hanging.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
unset PTO_REMOTE_CACHE
run_pto 0 compile "$EX/add.ptir" -o "$T/w"

# pto rebuild: program.ptir a FIFO, a link to a device, missing, edited.
rm "$T/w/program.ptir"
mkfifo "$T/w/program.ptir"
run_status 2 timeout 20 "$PTO" rebuild "$T/w" && expect_out "program.ptir is a FIFO: only regular files are read"
expect_true "the FIFO is left as it was" test -p "$T/w/program.ptir"
rm "$T/w/program.ptir"
ln -s /dev/zero "$T/w/program.ptir"
run_status 2 timeout 20 "$PTO" rebuild "$T/w" && expect_out "(to /dev/zero); refusing to open it"
rm "$T/w/program.ptir"
run_status 2 timeout 20 "$PTO" rebuild "$T/w" &&
  expect_out "program.ptir: listed in the manifest but missing; compile the program again"
cp "$EX/add.ptir" "$T/w/program.ptir"
echo "# a comment" >>"$T/w/program.ptir"
run_status 1 timeout 20 "$PTO" rebuild "$T/w" &&
  expect_out "program.ptir: edited since it was compiled" && expect_out "pto compile $T/w/program.ptir -o DIR"
# Nothing was written: the manifest still names the program as compiled.
rm -rf "$T/w"
run_pto 0 compile "$EX/add.ptir" -o "$T/w"
run_status 0 timeout 20 "$PTO" rebuild "$T/w" && expect_out "up to date"

# The cache's counters file a FIFO: cache stats refuses it, a compile does not wait on it.
mkdir -p "$PTO_CACHE_DIR"
rm -f "$PTO_CACHE_DIR/stats"
mkfifo "$PTO_CACHE_DIR/stats"
run_status 1 timeout 20 "$PTO" cache stats && expect_out "stats: it is a FIFO, not a regular file"
run_status 0 timeout 20 "$PTO" compile "$EX/add.ptir" -o "$T/w2"
expect_true "the counters FIFO is left as it was" test -p "$PTO_CACHE_DIR/stats"
finish
