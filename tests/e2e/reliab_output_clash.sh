#!/usr/bin/env bash
# No command writes over the file it reads, nor two of its outputs into one file: an output path
# that is the program (or, for pto trace, the log), under any spelling, a symlink or a hard link,
# or that is another output of the same command (--out, --swimlane, --swimlane-records and the
# files beside it, --timeline-svg, --dump-args's files, --depfile; a host program's records and
# dump where they really go, its rank_R/dispatch_N/ folders), is a usage error naming both before
# anything runs, and every file is left as it was.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

cp "$EX/add.ptir" "$T/add.ptir"
cd "$T" || exit 1
sum_prog() { cksum <"$T/add.ptir"; }
want=$(sum_prog)

# ---- an output over the program ------------------------------------------------------------
for cmd in run bench; do
  extra=()
  [ "$cmd" = bench ] && extra=(--rounds 1 --warmup 0)
  run_pto 2 "$cmd" add.ptir --dim M=8 "${extra[@]}" --swimlane add.ptir &&
    expect_out "--swimlane add.ptir: that file is the program add.ptir: writing it would lose it"
  run_pto 2 "$cmd" "$T/add.ptir" --dim M=8 "${extra[@]}" --timeline-svg ./add.ptir &&
    expect_out "--timeline-svg ./add.ptir: that file is the program $T/add.ptir"
  run_pto 2 "$cmd" add.ptir --dim M=8 "${extra[@]}" --swimlane-records add.ptir &&
    expect_out "--swimlane-records add.ptir: that file is the program add.ptir"
done
run_pto 2 run add.ptir --dim M=8 --out c=add.ptir &&
  expect_out "--out add.ptir: that file is the program add.ptir: writing it would lose it"
# --timeline-svg is read before the program: the check does not depend on the order.
run_pto 2 run --timeline-svg add.ptir add.ptir --dim M=8 &&
  expect_out "--timeline-svg add.ptir: that file is the program add.ptir"
ln -s add.ptir "$T/link.npy"
run_pto 2 run add.ptir --dim M=8 --out c=link.npy &&
  expect_out "--out link.npy: that file is the program add.ptir"
ln "$T/add.ptir" "$T/hard.npy"
run_pto 2 run add.ptir --dim M=8 --out c=hard.npy &&
  expect_out "--out hard.npy: that file is the program add.ptir"
run_pto 2 compile add.ptir -o "$T/w" --depfile "$T/add.ptir" &&
  expect_out "--depfile $T/add.ptir: that file is the program add.ptir"
expect_true "no work dir was made" test ! -e "$T/w"
# A depfile inside the work dir: --depfile DIR/manifest.json replaced the manifest (the dir no
# longer loaded); any other name there made the next compile refuse a file pto did not write.
run_pto 0 compile add.ptir -o wd
cp wd/manifest.json manifest.before
run_pto 2 compile add.ptir -o wd --depfile wd/manifest.json &&
  expect_out "--depfile wd/manifest.json: inside the work dir wd"
run_pto 2 compile add.ptir -o ./wd/ --depfile wd/kernels/add.d && expect_out "inside the work dir ./wd/"
ln -s wd wdlink
run_pto 2 compile add.ptir -o wdlink --depfile wd/add.d && expect_out "inside the work dir wdlink"
expect_true "the work dir's manifest is kept" cmp -s wd/manifest.json manifest.before
run_pto 0 run wd --dim M=8
run_pto 0 compile add.ptir -o wd --depfile wd.d
expect_true "a depfile beside the dir is written" test -s wd.d
# A work dir PROG: its files (compiled.xxh128 lists them, its callees' too) are the program, as a
# .ptir PROG is: 'pto run wd --out c=wd/manifest.json' left a dir that no longer loaded, and
# '--swimlane wd/kernels/kernels.so' a binary that the next run rebuilt. A new file there is fine.
run_pto 2 run wd --dim M=8 --out c=wd/manifest.json &&
  expect_out "--out wd/manifest.json: that file is the program wd (its manifest.json): writing it would lose it"
run_pto 2 run wd --dim M=8 --swimlane ./wd/kernels/kernels.so && expect_out "that file is the program wd (its kernels/kernels.so)"
run_pto 2 bench wdlink --dim M=8 --rounds 1 --timeline-svg wd/compiled.xxh128 &&
  expect_out "that file is the program wdlink (its compiled.xxh128)"
run_pto 2 run wd --dim M=8 --swimlane-records wd/r/../positions.json && expect_out "(its positions.json)"
expect_true "the work dir's manifest is kept" cmp -s wd/manifest.json manifest.before
run_pto 0 run wd --dim M=8 --out c=wd/c.npy && expect_out "ran @main"
run_pto 0 compile "$EX/allreduce_mesh.ptir" --devices 2 -o l3wd
run_pto 2 run l3wd --dim M=64 --out y=l3wd/callees/step/kernels/kernels.so &&
  expect_out "that file is the program l3wd (its callees/step/kernels/kernels.so)"
expect_true "the program is unchanged" test "$(sum_prog)" = "$want"

# pto trace: --timeline-svg over the log it reads.
run_pto 0 run add.ptir --dim M=8 --trace
printf '%s\n' "$OUT" | grep -E '\[(STRACE|STASK)\]' >"$T/run.log"
log_sum=$(cksum <"$T/run.log")
run_pto 2 trace "$T/run.log" --timeline-svg "$T/./run.log" &&
  expect_out "--timeline-svg $T/./run.log: that file is the log $T/run.log: writing it would lose it"
expect_true "the log is unchanged" test "$(cksum <"$T/run.log")" = "$log_sum"
run_pto 0 trace "$T/run.log" --timeline-svg "$T/t.svg"
expect_true "another file is drawn" grep -q "<svg" "$T/t.svg"

# ---- two outputs in one file ---------------------------------------------------------------
run_pto 2 run add.ptir --dim M=8 --out c=c.npy --swimlane ./c.npy &&
  expect_out "--out c.npy and --swimlane ./c.npy are one file: one would overwrite the other"
run_pto 2 run add.ptir --dim M=8 --timeline-svg s.json --swimlane "$T/s.json" &&
  expect_out "--timeline-svg s.json and --swimlane $T/s.json are one file"
run_pto 2 run add.ptir --dim M=8 --swimlane-records rec.json --out c=deps.json &&
  expect_out "--out deps.json and --swimlane-records rec.json (its deps.json) are one file"
run_pto 2 run add.ptir --dim M=8 --swimlane-records deps.json &&
  expect_out "--swimlane-records deps.json and --swimlane-records deps.json (its deps.json) are one file"
mkdir "$T/dump"
run_pto 2 run add.ptir --dim M=8 --out c=dump/args.bin --dump-args dump &&
  expect_out "--out dump/args.bin and --dump-args dump (its args.bin) are one file"
expect_true "nothing was written" test -z "$(ls "$T/dump")" -a ! -e "$T/c.npy" -a ! -e "$T/s.json" -a ! -e "$T/deps.json"

# A host program writes its records and dump into rank_R/dispatch_N/ folders, not beside FILE or
# in DIR: an --out there is no clash, one in such a folder that exists already is.
mkdir "$T/l3rec" "$T/l3dump"
run_pto 0 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --swimlane-records l3rec/r.json \
  --out y=l3rec/deps.json --dump-args l3dump
expect_true "the out and the records written" test -s l3rec/deps.json -a -s l3rec/rank_1/dispatch_0/deps.json
run_pto 0 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --swimlane-records l3rec/r.json \
  --out y=l3rec/r.json --dump-args l3dump
run_pto 0 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --dump-args l3dump \
  --out y=l3dump/args.bin
expect_true "the dump in rank folders" test -s l3dump/rank_0/dispatch_0/args_dump.json
sum_y=$(cksum <l3rec/r.json)
run_pto 2 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --swimlane-records l3rec/r.json \
  --out y=./l3rec/rank_1/dispatch_0/deps.json &&
  expect_out "--out ./l3rec/rank_1/dispatch_0/deps.json and --swimlane-records l3rec/r.json (its rank_1/dispatch_0/deps.json) are one file"
run_pto 2 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --swimlane-records l3rec/r.json \
  --out y=l3rec/rank_0/dispatch_0/r.json &&
  expect_out "--out l3rec/rank_0/dispatch_0/r.json and --swimlane-records l3rec/r.json (its rank_0/dispatch_0/r.json) are one file"
run_pto 2 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --dump-args l3dump \
  --out y=l3dump/rank_1/dispatch_0/args.bin &&
  expect_out "--out l3dump/rank_1/dispatch_0/args.bin and --dump-args l3dump (its rank_1/dispatch_0/args.bin) are one file"
expect_true "a refused run leaves the files" test "$(cksum <l3rec/r.json)" = "$sum_y"

# The same flag and file twice is one output; distinct files are fine.
run_pto 0 run add.ptir --dim M=8 --timeline-svg s.svg --timeline-svg=s.svg --out c=c.npy \
  --swimlane s.json --swimlane-records r/rec.json --dump-args dump
expect_true "every output written" test -s s.svg -a -s c.npy -a -s s.json -a -s r/deps.json -a -s dump/args.bin
# An input read from the file an output then replaces is the user's choice (an inout's state).
run_pto 0 run add.ptir --dim M=8 --in a=c.npy --out c=c.npy
expect_true "the program is unchanged" test "$(sum_prog)" = "$want"

finish
