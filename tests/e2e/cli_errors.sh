#!/usr/bin/env bash
# Bad usage and bad input: exit status 2 and a message that names the problem.
source "$(dirname "$0")/lib/common.bash"

run_pto 2 && expect_out "usage: pto <command>"
run_pto 2 frobnicate && expect_out "'frobnicate' is not a pto command"
run_pto 2 run && expect_out "no program given"
run_pto 2 run "$EX/add.ptir" --bogus && expect_out "unknown option '--bogus'"
run_pto 2 run "$T/missing.ptir" && expect_out "missing.ptir"
run_pto 0 run "$EX/add.ptir" --check && expect_out "note: dynamic dim M has no value; using M=128 (pass --dim M=VALUE" && expect_out PASS
run_pto 2 run "$EX/add.ptir" --dim Q=3 && expect_out "--dim Q: the entry's parameters have no dynamic dim 'Q'"
run_pto 2 run "$EX/add.ptir" --dim M=4 --in nope=zeros && expect_out "--in nope: @main has no parameter named 'nope'"
run_pto 2 run "$EX/chain.ptir" --dim M=4 && expect_out "runtime scalar parameter 'alpha' (f32) has no value: pass --in alpha=VALUE"
run_pto 2 run "$EX/chain.ptir" --dim M=4 --in alpha=abc && expect_out "--in alpha=abc: not a valid f32 value"
# A scalar out of its dtype's range is refused by -D and --in alike (base/scalar.c), never wrapped
# (--in s=300 for an i8 once ran with 44).
sed 's/out %c: tensor\[M,128\] f32)/out %c: tensor[M,128] f32, %s: i8 = runtime)/' "$EX/add.ptir" >"$T/add_i8.ptir"
run_pto 2 run "$T/add_i8.ptir" --dim M=4 --in s=300 &&
  expect_out "--in s=300: out of range for i8: expected an integer from -128 to 127"
run_pto 2 run "$T/add_i8.ptir" --dim M=4 --in s=-129 && expect_out "--in s=-129: out of range for i8"
run_pto 2 run "$T/add_i8.ptir" --dim M=4 --in s=1.5 &&
  expect_out "--in s=1.5: not a valid i8 value: expected an integer from -128 to 127 (decimal or 0x hex)"
run_pto 2 run "$T/add_i8.ptir" --dim M=4 -D s=300 && expect_out "-D s=300: out of range for i8"
run_pto 2 compile "$T/add_i8.ptir" -o "$T/add_i8_wd" -D s=0x80 && expect_out "-D s=0x80: out of range for i8"
run_pto 0 run "$T/add_i8.ptir" --dim M=4 --in s=-128 --check && expect_out PASS
run_pto 0 run "$T/add_i8.ptir" --dim M=4 --in s=0x7f --check && expect_out PASS
run_pto 2 run "$EX/add.ptir" --dim M=4 --in a=random:x && expect_out "expected random or random:SEED"
run_pto 2 run "$EX/add.ptir" --dim M=4 --out a="$T/a.npy" && expect_out "--out a: @main has no out or inout tensor parameter named 'a'"
run_pto 2 run "$EX/add.ptir" --dim M=4 -O7 && expect_out "-O7: the optimization levels are"
run_pto 2 compile "$EX/add.ptir" && expect_out "no output directory: pass -o DIR"
run_pto 2 compile "$EX/add.ptir" -o "$T/w" -D nope=3 && expect_out "-D nope: @main has no parameter named 'nope'"
run_pto 2 compile "$EX/add.ptir" -o "$T/w" --platform npu && expect_out "--platform npu: unknown platform"

printf 'program p\norch @main() {\n  %%x = tile.bogus(1)\n}\n' >"$T/bad.ptir"
run_pto 2 check "$T/bad.ptir" && expect_out "bad.ptir:3:"
run_pto 2 run "$T/bad.ptir" && expect_out "bad.ptir:3:"
run_pto 2 build-id "$T/bad.ptir" && expect_out "bad.ptir"
# A truncated or malformed ELF file is bad input too (exit 2), as one that is no ELF at all; the
# other files are still read.
head -c 100 "$PTO" >"$T/trunc.so"
run_pto 2 build-id "$T/trunc.so" && expect_out "trunc.so: malformed ELF file: section header table"
run_pto 2 build-id "$T/trunc.so" "$PTO" && expect_out "$PTO: hid="
finish
