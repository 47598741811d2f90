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

printf 'program p\norch @main( {\n' >"$T/bad.ptir"
cp "$T/bad.ptir" "$T/bad.orig"
run_pto 2 fmt -i "$T/bad.ptir" && expect_out "bad.ptir:2:"
expect_true "a bad file is left untouched" cmp -s "$T/bad.ptir" "$T/bad.orig"
finish
