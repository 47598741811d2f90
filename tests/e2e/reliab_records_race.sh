#!/usr/bin/env bash
# Two runs with one --swimlane-records folder: run A makes new/, run B finds it there, A fails
# and removes new/ while it is empty (as a failed run leaves no output folder behind), and B, still
# launching, then wrote its records into a folder that was gone: "cannot write the swimlane
# records: ... No such file or directory", exit 1. B makes the folder again now.
# No timing: each run's --trace lines go to a FIFO this script reads, and 2.8 MB of them (20,000
# tasks) fill the pipe, so a run is held inside its launch, past its folder check and before its
# records, until the script drains its FIFO. Every wait has a deadline (timeout, a bounded poll).
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
cd "$T" || exit 1
prog() { # prog NAME TAIL: 20,000 tasks, then TAIL
  cat <<PTIR
program $1
kernel @k(%x: tensor[1, 8] f32, out %y: tensor[1, 8] f32) -> (tensor[1, 8] f32) {
  %t = tile.load(%x, [0, 0], [1, 8])
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[1, 8] f32, out %y: tensor[1, 8] f32, %j: index = runtime)
    -> (tensor[1, 8] f32) {
  for %i in range(0, 20000) {
    call @k(%x, %y)
  }
$2
  return %y
}
PTIR
}
prog ok "" >ok.ptir
prog fails "  %v = tensor.read(%x, [0, %j])" >fails.ptir
run_pto 0 compile ok.ptir -o okwd # compiled before, so neither run spends its hold compiling
run_pto 0 compile fails.ptir -o failswd

wait_for() { # wait_for TEST...: polls up to 60 s
  for _ in $(seq 1 600); do "$@" && return 0; sleep 0.1; done
  return 1
}
mkfifo fa fb
timeout 120 "$PTO" run failswd --in j=99 --trace --swimlane-records new/r.json >a.out 2>fa &
a=$!
exec 3<fa
expect_true "run A made new/" wait_for test -d new
timeout 120 "$PTO" run okwd --in j=0 --trace --swimlane-records new/r.json >b.out 2>fb &
b=$!
exec 4<fb
IFS= read -r -t 60 first <&4 # B's first trace line: it is launching, its folder check done
expect_true "run B is launching: '$first'" grep -q STRACE <<<"$first"
cat <&3 >a.log # A goes on, fails and removes its empty folder
exec 3<&-
wait $a
expect_true "run A fails (exit 1)" test "$?" = 1
expect_true "A's launch error" grep -q "index 99 of dim 1 is out of range" a.log
expect_true "A removed new/, empty, as a failed run does" test ! -e new
cat <&4 >b.log # B goes on and writes its records
exec 4<&-
wait $b
status=$?
expect_true "run B exits 0, got $status: $(grep -v '^\[ST' b.log)" test "$status" = 0
for f in r.json deps.json func_names.json name_map.json; do
  expect_true "B wrote new/$f" test -s "new/$f"
done
finish
