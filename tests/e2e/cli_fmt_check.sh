#!/usr/bin/env bash
# pto check and pto fmt on every example; fmt -i never touches a bad file.
source "$(dirname "$0")/lib/common.bash"

for f in "$EX"/*.ptir; do
  run_pto 0 check "$f"
  run_pto 0 fmt "$f"
  printf '%s\n' "$OUT" >"$T/once.ptir"
  run_pto 0 fmt "$T/once.ptir"
  expect_true "fmt is a fixed point on $(basename "$f")" test "$OUT" = "$(cat "$T/once.ptir")"
done
run_pto 0 check "$EX"/*.ptir

cp "$EX/add.ptir" "$T/edit.ptir"
run_pto 0 fmt -i "$T/edit.ptir"
run_pto 0 check "$T/edit.ptir"
# A file in canonical form already is not written again: its mtime (make, ninja) and its hard
# links stay; a file that changes is replaced.
touch -d 2020-01-01 "$T/edit.ptir"
ln "$T/edit.ptir" "$T/edit.link"
run_pto 0 fmt -i "$T/edit.ptir"
expect_true "fmt -i of a canonical file keeps its mtime" test "$(stat -c %Y "$T/edit.ptir")" = "$(date -d 2020-01-01 +%s)"
expect_true "fmt -i of a canonical file keeps its hard link" test "$(stat -c %h "$T/edit.ptir")" = 2
cp "$EX/add.ptir" "$T/raw.ptir"
touch -d 2020-01-01 "$T/raw.ptir"
run_pto 0 fmt -i "$T/raw.ptir"
expect_true "fmt -i of a file that changes writes it" test "$(stat -c %Y "$T/raw.ptir")" != "$(date -d 2020-01-01 +%s)"

printf 'program p\norch @main( {\n' >"$T/bad.ptir"
cp "$T/bad.ptir" "$T/bad.orig"
run_pto 2 fmt -i "$T/bad.ptir" && expect_out "bad.ptir:2:"
expect_true "a bad file is left untouched" cmp -s "$T/bad.ptir" "$T/bad.orig"
finish
