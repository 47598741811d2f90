#!/usr/bin/env bash
# pto trace on hostile logs: numbers in an L3 log that would size the tables (rank=999999999 made
# a 5 GB world and crashed) are refused naming the line; huge logs are read in O(N log N): one L2
# launch of 400000 spans with --tree, and an L3 log of 20000 runs (each took minutes to hours, a
# scan of every record per span or per run). The 120 s deadlines guard against such a hang (or a
# walk gone quadratic again: minutes at these sizes), they are no speed assert: each read takes
# about 2 s here.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

# tpto STATUS ARGS...: run_pto with a deadline.
tpto() {
  local want=$1
  shift
  run_status "$want" timeout 120 "$PTO" "$@"
}

# ---- one L2 launch of many spans ------------------------------------------------------------
awk 'BEGIN {
  print "[STRACE] v=1 pid=7 tid=7 inv=1 hid=1 depth=0 name=chip.run ts=0 dur=1000000000"
  for (i = 0; i < 400000; i++)
    printf "[STRACE] v=1 pid=7 tid=7 inv=1 hid=1 depth=1 name=chip.run.s%d ts=%d dur=%d\n", i, i + 1, 1000
  # A name twice: its earliest span counts (3 us, not the 9 us of the later one).
  print "[STRACE] v=1 pid=7 tid=7 inv=1 hid=1 depth=1 name=chip.run.twice ts=9 dur=9000"
  print "[STRACE] v=1 pid=7 tid=7 inv=1 hid=1 depth=1 name=chip.run.twice ts=5 dur=3000"
}' >"$T/spans.log"
tpto 0 trace "$T/spans.log" --tree && expect_out "1 launch of hid 1 after 0 warmup; 400003 records" &&
  expect_out "s399999" && expect_true "the earliest span of a name counts" grep -Eq 'twice +3\.0us' <<<"$OUT"

# ---- L3 logs -------------------------------------------------------------------------------
run_pto 0 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --trace
grep '\[STRACE\]' <<<"$OUT" >"$T/l3.log"
tpto 0 trace "$T/l3.log" && expect_out "1 rounds after 0 warmup on 2 ranks"

# A dispatch selection that matches nothing is named with the dispatches there are (it said
# "--tree averages one dispatch ...: choose it with --rank R", though --rank 5 was given).
tpto 2 trace "$T/l3.log" --rank 5 --tree &&
  expect_out "no dispatch matches --rank 5 --slot 0; the dispatches of a round: rank 0 slot 0 (pid"
tpto 2 trace "$T/l3.log" --rank 1 --slot 3 && expect_out "no dispatch matches --rank 1 --slot 3;"
tpto 0 trace "$T/l3.log" --rank 1 && expect_out "mean tree of rank 1 slot 0"

# Numbers that size the world or the tables: refused, naming the line (rank= is on chip lines).
line=$(grep -n ' rank=1$' "$T/l3.log" | head -1 | cut -d: -f1)
for bad in 999999999 256 -1 18446744073709551616 1x; do
  sed "s/ rank=1\$/ rank=$bad/" "$T/l3.log" >"$T/bad.log"
  tpto 2 trace "$T/bad.log" && expect_out "line $line: rank=$bad is not an integer from 0 to 255"
done
sed "s/ rank=1\$/ rank=255/" "$T/l3.log" >"$T/edge.log"
tpto 0 trace "$T/edge.log" --json && expect_out '"nranks": 256'
sed 's/ depth=1 / depth=4294967296 /' "$T/l3.log" >"$T/bad.log"
tpto 2 trace "$T/bad.log" && expect_out "depth=4294967296 is not an integer from 0 to 2147483647"

# 20000 runs: every line of the run, its inv (and run_id) renumbered.
awk '{ for (r = 1; r <= 20000; r++) { l = $0; gsub(/ inv=1 /, " inv=" r " ", l); gsub(/ run_id=1 /, " run_id=" r " ", l); print l } }' \
  "$T/l3.log" >"$T/runs.log"
tpto 0 trace "$T/runs.log" --tree --rank 1 && expect_out "20000 rounds after 0 warmup on 2 ranks" &&
  expect_out "copy_back"

finish
