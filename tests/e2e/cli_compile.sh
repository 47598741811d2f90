#!/usr/bin/env bash
# pto compile writes a work dir that pto run loads; pto build-id agrees with readelf.
source "$(dirname "$0")/lib/common.bash"

run_pto 0 compile "$EX/add.ptir" -o "$T/add" --depfile "$T/add.d"
for f in manifest.json program.ptir orchestration/main.cpp orchestration/main.so \
         kernels/add_block.ll kernels/add_block.o kernels/kernels.so; do
  expect_true "work dir has $f" test -s "$T/add/$f"
done
expect_true "depfile names the source" grep -q "add.ptir" "$T/add.d"
run_pto 0 run "$T/add" --dim M=77 --check && expect_out PASS

for so in "$T/add/orchestration/main.so" "$T/add/kernels/kernels.so"; do
  run_pto 0 build-id "$so"
  want=$(readelf -n "$so" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
  expect_out "build-id=$want"
done

# program.ptir is the canonical print: check and fmt accept it and fmt is a fixed point.
run_pto 0 check "$T/add/program.ptir"
run_pto 0 fmt "$T/add/program.ptir"
expect_true "fmt of program.ptir is a fixed point" test "$OUT" = "$(cat "$T/add/program.ptir")"
finish
