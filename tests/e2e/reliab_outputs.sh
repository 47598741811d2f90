#!/usr/bin/env bash
# Output files (issue #34, item 18): --timeline-svg and --swimlane-records are checked before the
# run like --out and --swimlane (a FIFO, a device or a directory is a usage error, never a hang),
# and every output file is written the same way (temp file and rename, a symlink kept, anything
# but a regular file refused with the file named). Every pto run here has a deadline.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

# tpto STATUS ARGS...: run_pto with a deadline (a hang fails the test instead of blocking it).
tpto() {
  local want=$1
  shift
  run_status "$want" timeout 120 "$PTO" "$@"
}

mkfifo "$T/fifo"
for cmd in run bench; do
  extra=()
  [ "$cmd" = bench ] && extra=(--rounds 1 --warmup 0)
  tpto 2 "$cmd" "$EX/add.ptir" --dim M=8 "${extra[@]}" --timeline-svg "$T/fifo" &&
    expect_out "--timeline-svg $T/fifo: exists and is not a regular file"
  tpto 2 "$cmd" "$EX/add.ptir" --dim M=8 "${extra[@]}" --swimlane-records "$T/fifo" &&
    expect_out "--swimlane-records $T/fifo: exists and is not a regular file"
  tpto 2 "$cmd" "$EX/add.ptir" --dim M=8 "${extra[@]}" --timeline-svg /dev/full &&
    expect_out "--timeline-svg /dev/full: exists and is not a regular file"
  tpto 2 "$cmd" "$EX/add.ptir" --dim M=8 "${extra[@]}" --timeline-svg="$T/nodir/t.svg" &&
    expect_out "directory $T/nodir does not exist"
  tpto 2 "$cmd" "$EX/add.ptir" --dim M=8 "${extra[@]}" --swimlane-records "$T" &&
    expect_out "is a directory, not a file"
done

# The files written beside --swimlane-records go through the same writer: a FIFO there is
# refused with its name after the run, without blocking.
mkdir -p "$T/rec"
mkfifo "$T/rec/deps.json"
tpto 2 run "$EX/add.ptir" --dim M=8 --swimlane-records "$T/rec/records.json" &&
  expect_out "$T/rec/deps.json is not a regular file"
expect_true "the FIFO is left as it was" test -p "$T/rec/deps.json"

# Symlinks are kept, the target written; a new file gets the usual mode.
echo old >"$T/target.svg"
ln -s target.svg "$T/link.svg"
tpto 0 run "$EX/add.ptir" --dim M=8 --timeline-svg "$T/link.svg"
expect_true "--timeline-svg keeps the symlink" test -L "$T/link.svg"
expect_true "--timeline-svg wrote the target" grep -q "<svg" "$T/target.svg"
tpto 0 run "$EX/add.ptir" --dim M=8 --swimlane-records "$T/records.json" --timeline-svg "$T/t.svg"
expect_true "the records and their companions are written" test -s "$T/records.json" -a -s "$T/deps.json" -a -s "$T/func_names.json" -a -s "$T/name_map.json"
expect_true "no temp files left" test -z "$(find "$T" -name '*.tmp-*')"

# --depfile goes through the same writer: a FIFO is refused before the compile.
tpto 2 compile "$EX/add.ptir" -o "$T/w" --depfile "$T/fifo" && expect_out "--depfile $T/fifo: exists and is not a regular file"

finish
