#!/usr/bin/env bash
# pto compile -o DIR never loses the user's work (issue #34, items 1, 2 and 19): hand edits inside
# a host's callees/<orch>/ are refused like those of an L2 work dir, and stay refused after
# `pto rebuild` recorded them in the manifests (DIR/compiled.xxh128 keeps what pto wrote);
# --force never overwrites a file pto did not write nor writes through a symlink, and a refused
# compile changes nothing; concurrent compiles of different programs into one DIR leave exactly
# one program there.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

not() { ! "$@"; }

# snapshot DIR: every path under DIR with its type, target and content hash, sorted.
snapshot() {
  (cd "$1" && find . -printf '%p %y %l\n' | sort && find . -type f -exec md5sum {} + | sort)
}

# ---- item 1: edits in callees/<orch>/ of a host work dir, before and after rebuild -----------
run_pto 0 compile "$EX/allreduce_mesh.ptir" --devices 2 -o "$T/hw"
expect_true "the record lists the callee's files" grep -q "  callees/step/orchestration/step.cpp$" "$T/hw/compiled.xxh128"
echo "// my edit" >>"$T/hw/callees/step/orchestration/step.cpp"
cp "$T/hw/callees/step/orchestration/step.cpp" "$T/step.cpp"
run_pto 2 compile "$EX/allreduce_mesh.ptir" --devices 2 -o "$T/hw" &&
  expect_out "$T/hw/callees/step/orchestration/step.cpp (and 0 more) was edited since it was compiled"
expect_true "a refused compile keeps the callee edit" cmp -s "$T/hw/callees/step/orchestration/step.cpp" "$T/step.cpp"
echo "; my edit" >>"$T/hw/callees/step/kernels/allreduce.ll"
run_pto 0 rebuild "$T/hw"
snapshot "$T/hw" >"$T/hw.before"
run_pto 2 compile "$EX/allreduce_mesh.ptir" --devices 2 -o "$T/hw" &&
  expect_out "was edited since it was compiled" && expect_out "callees/step/"
expect_true "a rebuilt callee edit is not overwritten" cmp -s "$T/hw/callees/step/orchestration/step.cpp" "$T/step.cpp"
expect_true "a refused compile changes nothing in the dir" cmp -s "$T/hw.before" <(snapshot "$T/hw")
run_pto 0 compile "$EX/allreduce_mesh.ptir" --devices 2 -o "$T/hw" --force
expect_true "--force overwrites the edit" not grep -q "my edit" "$T/hw/callees/step/orchestration/step.cpp"
run_pto 0 run "$T/hw" && expect_true "no rebuild after --force" not grep -q rebuilt <<<"$OUT"

# The same for an L2 work dir: an edit rebuilt (by pto run) is still the user's.
run_pto 0 compile "$EX/add.ptir" -o "$T/cw"
echo "// my edit" >>"$T/cw/orchestration/main.cpp"
cp "$T/cw/orchestration/main.cpp" "$T/main.cpp"
run_pto 0 run "$T/cw" --dim M=4 --check && expect_out "rebuilt 1 stale file"
run_pto 2 compile "$EX/add.ptir" -o "$T/cw" && expect_out "$T/cw/orchestration/main.cpp (and 1 more) was edited"
expect_true "a rebuilt L2 edit is not overwritten" cmp -s "$T/cw/orchestration/main.cpp" "$T/main.cpp"
# A work dir of an older pto (no record) is judged by its manifests, callees included.
run_pto 0 compile "$EX/allreduce_mesh.ptir" --devices 2 -o "$T/old"
rm "$T/old/compiled.xxh128"
run_pto 0 compile "$EX/allreduce_mesh.ptir" --devices 2 -o "$T/old"
rm "$T/old/compiled.xxh128"
echo "; edit" >>"$T/old/callees/step/kernels/allreduce.ll"
run_pto 2 compile "$EX/allreduce_mesh.ptir" --devices 2 -o "$T/old" && expect_out "callees/step/kernels/allreduce.ll (and 0 more) was edited"

# ---- item 2: --force keeps what pto did not write and never follows a symlink --------------
mkdir -p "$T/proj/orchestration" "$T/proj/kernels"
echo "my own main" >"$T/proj/orchestration/main.cpp"
echo "notes" >"$T/proj/notes.txt"
snapshot "$T/proj" >"$T/proj.before"
run_pto 2 compile "$EX/add.ptir" -o "$T/proj" --force &&
  expect_out "$T/proj/orchestration/main.cpp was not written by pto, and the program has a file of that name; pto never overwrites a file it did not write, not even with --force"
expect_true "the user's file of pto's name is unchanged, nothing added" cmp -s "$T/proj.before" <(snapshot "$T/proj")
# A symlinked subfolder: nothing outside the dir is written, with or without --force.
run_pto 0 compile "$EX/add.ptir" -o "$T/sw"
mkdir "$T/outside"
cp "$T/sw/kernels/"* "$T/outside/"
rm -r "$T/sw/kernels"
ln -s ../outside "$T/sw/kernels"
snapshot "$T/outside" >"$T/outside.before"
snapshot "$T/sw" >"$T/sw.before"
run_pto 2 compile "$EX/chain.ptir" -o "$T/sw" && expect_out "$T/sw/kernels (and 0 more) was not written by pto"
run_pto 2 compile "$EX/chain.ptir" -o "$T/sw" --force &&
  expect_out "$T/sw/kernels is a symlink, and the program has files below it; pto never writes through a symlink"
expect_true "nothing outside the dir was written" cmp -s "$T/outside.before" <(snapshot "$T/outside")
expect_true "the refused dir is unchanged" cmp -s "$T/sw.before" <(snapshot "$T/sw")
# A symlink where pto has a file: replaced by neither the compile nor the stale-file removal.
run_pto 0 compile "$EX/add.ptir" -o "$T/sl"
echo "mine" >"$T/target.txt"
rm "$T/sl/program.ptir" && ln -s ../target.txt "$T/sl/program.ptir"
run_pto 2 compile "$EX/add.ptir" -o "$T/sl" --force && expect_out "$T/sl/program.ptir was not written by pto"
expect_true "the symlink and its target are kept" test -L "$T/sl/program.ptir" -a "$(cat "$T/target.txt")" = mine
# Files pto did not write elsewhere in the dir are kept by --force; stale files of pto's go.
run_pto 0 compile "$EX/add.ptir" -o "$T/fw"
echo "notes" >"$T/fw/notes.txt"
run_pto 0 compile "$EX/chain.ptir" -o "$T/fw" --force
expect_true "--force keeps notes.txt" test "$(cat "$T/fw/notes.txt")" = notes
expect_true "the previous program's kernel is gone" test ! -e "$T/fw/kernels/add_block.ll"
# A build dir left by a killed compile is reclaimed by the next one.
mkdir -p "$T/fw/.pto-build-999999999-abcdef/kernels" && echo x >"$T/fw/.pto-build-999999999-abcdef/kernels/k.ll"
run_pto 0 compile "$EX/chain.ptir" -o "$T/fw" --force
expect_true "a dead compile's build dir is reclaimed" test ! -e "$T/fw/.pto-build-999999999-abcdef"

# ---- item 19: concurrent compiles of different programs into one dir -------------------------
# Four programs of one signature, each with its own kernel name (so files of two would show).
for i in 0 1 2 3; do
  sed "s/add_block/add_v$i/g" "$EX/add.ptir" >"$T/p$i.ptir"
done
for round in 1 2; do
  pids=()
  for i in 0 1 2 3; do
    "$PTO" compile "$T/p$i.ptir" -o "$T/same" >"$T/log$i" 2>&1 &
    pids+=($!)
  done
  fails=0
  for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
  expect_true "round $round: every concurrent compile succeeded" test "$fails" = 0
  # One program's kernel files, and every file of the dir recorded with its content.
  nk=$(ls "$T/same/kernels" | grep -c '^add_v.\.ll$')
  expect_true "round $round: one program's kernels in the dir ($nk)" test "$nk" = 1
  nrec=$(wc -l <"$T/same/compiled.xxh128")
  nfiles=$(cd "$T/same" && find . -type f ! -name compiled.xxh128 | wc -l)
  expect_true "round $round: the record lists every file ($nrec, $nfiles)" test "$nrec" = "$nfiles"
  expect_true "round $round: no build dir left" test -z "$(find "$T/same" -name '.pto-build-*')"
  PTO_NO_REBUILD=1 run_pto 0 run "$T/same" --dim M=64 --check && expect_true "round $round: no stale file" not grep -q rebuilt <<<"$OUT"
  # Every file as recorded (an edited or foreign one would be refused).
  run_pto 0 compile "$T/p0.ptir" -o "$T/same"
done

finish
