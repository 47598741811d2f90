#!/usr/bin/env bash
# Files the user owns (issue #10, class 8) and exit codes (class 12): fmt -i keeps mode, owner
# and symlinks; --out writes through a temp file and a rename; output paths are checked before
# the run; a directory or empty path given where a file is expected, and -o '', are usage
# errors (2); a broken .cpp and a broken .ll fail the same way (2, with the file position).
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

# ---- fmt -i ---------------------------------------------------------------------------------
cp "$EX/add.ptir" "$T/a.ptir"
chmod 640 "$T/a.ptir"
run_pto 0 fmt -i "$T/a.ptir"
expect_true "fmt -i keeps mode 640" test "$(stat -c %a "$T/a.ptir")" = 640
chmod 755 "$T/a.ptir"
run_pto 0 fmt -i "$T/a.ptir"
expect_true "fmt -i keeps mode 755" test "$(stat -c %a "$T/a.ptir")" = 755
if [ "$(id -u)" = 0 ] && getent passwd nobody >/dev/null; then
  chown nobody "$T/a.ptir"
  run_pto 0 fmt -i "$T/a.ptir"
  expect_true "fmt -i keeps the owner" test "$(stat -c %U "$T/a.ptir")" = nobody
fi
mkdir -p "$T/real"
cp "$EX/add.ptir" "$T/real/target.ptir"
ln -s real/target.ptir "$T/link.ptir"
run_pto 0 fmt -i "$T/link.ptir"
expect_true "fmt -i keeps the symlink" test -L "$T/link.ptir"
expect_true "fmt -i wrote the target" cmp -s "$T/real/target.ptir" <("$PTO" fmt "$EX/add.ptir")
ln -s missing.ptir "$T/dangling.ptir"
run_pto 2 fmt -i "$T/dangling.ptir"
expect_true "no temp files left" test -z "$(find "$T" -name '*.tmp-*')"
# A program that does not verify is never touched.
printf 'program x\norch @main() {\n  %%y = %%nope\n  return\n}\n' >"$T/bad.ptir"
cp "$T/bad.ptir" "$T/bad.orig"
run_pto 2 fmt -i "$T/bad.ptir"
expect_true "a bad program is unchanged" cmp -s "$T/bad.ptir" "$T/bad.orig"

# ---- --out ----------------------------------------------------------------------------------
echo keep >"$T/target.npy"
chmod 600 "$T/target.npy"
ln -s target.npy "$T/out-link.npy"
run_pto 0 run "$EX/add.ptir" --dim M=4 --out c="$T/out-link.npy"
expect_true "--out keeps the symlink" test -L "$T/out-link.npy"
expect_true "--out wrote an .npy to the target" bash -c "head -c 6 '$T/target.npy' | grep -q NUMPY"
expect_true "--out keeps the target's mode" test "$(stat -c %a "$T/target.npy")" = 600
run_pto 0 run "$EX/add.ptir" --dim M=4 --out c="$T/new.npy"
expect_true "a new --out file is not 0600" test "$(stat -c %a "$T/new.npy")" != 600
expect_true "no temp files left" test -z "$(find "$T" -name '*.tmp-*')"

# ---- output paths checked before the run ----------------------------------------------------
run_pto 2 run "$EX/add.ptir" --out c="$T" && expect_out "--out $T: is a directory, not a file"
run_pto 2 run "$EX/add.ptir" --out c="$T/nodir/c.npy" && expect_out "directory $T/nodir does not exist"
run_pto 2 run "$EX/add.ptir" --swimlane "$T/nodir/s.json" && expect_out "does not exist"
run_pto 2 bench "$EX/add.ptir" --swimlane "$T" --rounds 1 && expect_out "is a directory, not a file"
run_pto 2 compile "$EX/add.ptir" -o '' && expect_out "-o: the path is empty"
run_pto 2 compile "$EX/add.ptir" -o "$T/a.ptir" && expect_out "exists and is not a directory"
run_pto 2 compile "$EX/add.ptir" -o "$T/wd" --depfile '' && expect_out "--depfile: the path is empty"
run_pto 2 compile "$EX/add.ptir" -o "$T/wd" --depfile "$T/nodir/d" && expect_out "does not exist"
expect_true "nothing was compiled for a bad output path" test ! -e "$T/wd"

# ---- compile -o DIR: hand edits and foreign files are refused unless --force; stale files of
# the previous program are removed, never a file pto did not write ---------------------------
run_pto 0 compile "$EX/add.ptir" -o "$T/cw"
run_pto 0 compile "$EX/add.ptir" -o "$T/cw"
run_pto 0 compile "$EX/chain.ptir" -o "$T/cw"
expect_true "the previous program's kernel is gone" test ! -e "$T/cw/kernels/add_block.ll" -a ! -e "$T/cw/kernels/add_block.o"
expect_true "the new program is there" test -f "$T/cw/kernels/scale.ll"
echo "// my edit" >>"$T/cw/orchestration/main.cpp"
cp "$T/cw/orchestration/main.cpp" "$T/edited.cpp"
run_pto 2 compile "$EX/add.ptir" -o "$T/cw" && expect_out "orchestration/main.cpp (and 0 more) was edited since it was compiled"
expect_true "the edit survives a refused compile" cmp -s "$T/cw/orchestration/main.cpp" "$T/edited.cpp"
echo "// edit" >>"$T/cw/kernels/scale.ll"
run_pto 2 compile "$EX/add.ptir" -o "$T/cw" && expect_out "(and 1 more) was edited"
run_pto 0 compile "$EX/chain.ptir" -o "$T/cw" --force
echo notes >"$T/cw/notes.txt"
mkdir -p "$T/cw/mine" && echo data >"$T/cw/mine/data"
run_pto 2 compile "$EX/add.ptir" -o "$T/cw" && expect_out "(and 1 more) was not written by pto"
run_pto 0 compile "$EX/add.ptir" -o "$T/cw" --force
expect_true "--force keeps files pto did not write" test -f "$T/cw/notes.txt" -a -f "$T/cw/mine/data"
expect_true "--force removed the previous program's files" test ! -e "$T/cw/kernels/scale.ll"
# -o a symlink to a directory holding a file pto did not write is refused as the directory
# itself is (the check walked the link, not the directory, and compiled into it: exit 0).
mkdir "$T/owndir" && echo keep >"$T/owndir/keep" && ln -s owndir "$T/linked-o"
run_pto 2 compile "$EX/add.ptir" -o "$T/linked-o" &&
  expect_out "-o $T/linked-o: $T/linked-o/keep (and 0 more) was not written by pto (the directory is not a pto work dir)"
expect_true "a refused -o through a symlink writes nothing" test "$(ls -A "$T/owndir")" = keep
run_pto 0 compile "$EX/add.ptir" -o "$T/linked-o" --force
run_pto 2 compile "$EX/add.ptir" -o "$T/linked-o" && expect_out "(and 0 more) was not written by pto;"
expect_true "the file pto did not write is kept" test "$(cat "$T/owndir/keep")" = keep
# A host program's work dir (host/, callees/<orch>/) compiles again into itself.
run_pto 0 compile "$EX/allreduce_mesh.ptir" --devices 2 -o "$T/hw"
run_pto 0 compile "$EX/allreduce_mesh.ptir" --devices 2 -o "$T/hw"
run_pto 0 compile "$EX/allreduce_mesh.ptir" --devices 4 -o "$T/hw"
mkdir -p "$T/proj" && echo "int main;" >"$T/proj/main.c"
run_pto 2 compile "$EX/add.ptir" -o "$T/proj" && expect_out "the directory is not a pto work dir"
expect_true "a project dir is untouched" test "$(ls "$T/proj")" = main.c
mkdir -p "$T/empty"
run_pto 0 compile "$EX/add.ptir" -o "$T/empty"

# ---- inputs that are not files: usage errors ------------------------------------------------
for cmd in check fmt run; do
  run_pto 2 "$cmd" '' && expect_out "an empty path names no file"
done
run_pto 2 check "$T" && expect_out "is a directory: only regular files are read"
run_pto 2 fmt "$T" && expect_out "is a directory: only regular files are read"
run_pto 2 run "$T" && expect_out "is not a work dir"
run_pto 2 compile "$T" -o "$T/x" && expect_out "is a directory"
run_pto 2 trace "$T" && expect_out "is a directory"
run_pto 2 build-id "$T" && expect_out "is a directory"
run_pto 2 check "$T/missing.ptir" && expect_out "No such file or directory"

# ---- a broken .cpp and a broken .ll fail the same way --------------------------------------
run_pto 0 compile "$EX/add.ptir" -o "$T/b1"
cp -r "$T/b1" "$T/b2"
echo "garbage {" >>"$T/b1/orchestration/main.cpp"
echo "garbage {" >>"$T/b2/kernels/add_block.ll"
GARBAGE_LINE=$(wc -l <"$T/b2/kernels/add_block.ll") # the line just appended
run_pto 2 rebuild "$T/b1" && expect_out "main.cpp does not compile" && expect_true "the C++ error has its position" grep -qE "main.cpp:[0-9]+:1: error" <<<"$OUT"
run_pto 2 rebuild "$T/b2" && expect_out "add_block.ll:$GARBAGE_LINE:1: error"
run_pto 2 run "$T/b1" --dim M=4 && expect_true "the C++ error has its position" grep -qE "main.cpp:[0-9]+:1: error" <<<"$OUT"
run_pto 2 run "$T/b2" --dim M=4 && expect_out "add_block.ll:$GARBAGE_LINE:1: error"

finish
