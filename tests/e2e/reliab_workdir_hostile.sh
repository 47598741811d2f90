#!/usr/bin/env bash
# Hostile files in a work dir that pto run DIR reads besides the manifest's: positions.json (the
# source positions of launch errors, outside the manifest) and compiled.xxh128 (the list of
# pto's files, which outputs may not overwrite) made a FIFO, a link to a device, or garbage.
# They are read as every file of a work dir is (a regular file, of bounded size): each run
# finishes (under a deadline: a FIFO blocked it for good), right, and the work dir is left as it
# was.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
run_pto 0 compile "$EX/add.ptir" -o "$T/w" --force
cp -r "$T/w" "$T/orig"
for kind in fifo zero garbage; do
  rm -f "$T/w/positions.json"
  case $kind in
  fifo) mkfifo "$T/w/positions.json" ;;
  zero) ln -s /dev/zero "$T/w/positions.json" ;;
  garbage) printf '{"schema": "pto.positions/1", "ops": [[[[' >"$T/w/positions.json" ;;
  esac
  run_status 0 timeout 120 "$PTO" run "$T/w" --dim M=100 --check && expect_out PASS
  expect_true "positions.json is still the $kind it was" test -e "$T/w/positions.json" -o -L "$T/w/positions.json"
done
rm -f "$T/w/positions.json"
cp "$T/orig/positions.json" "$T/w/positions.json"
expect_true "the work dir is as it was" diff -r "$T/orig" "$T/w"
for kind in fifo zero garbage; do
  rm -f "$T/w/compiled.xxh128"
  case $kind in
  fifo) mkfifo "$T/w/compiled.xxh128" ;;
  zero) ln -s /dev/zero "$T/w/compiled.xxh128" ;;
  garbage) head -c 100000 /dev/urandom >"$T/w/compiled.xxh128" ;;
  esac
  run_status 0 timeout 120 "$PTO" run "$T/w" --dim M=100 --check --out c="$T/c.npy" &&
    expect_out PASS
done
# With the list back, an output over a file it lists is still refused.
rm -f "$T/w/compiled.xxh128"
cp "$T/orig/compiled.xxh128" "$T/w/compiled.xxh128"
run_pto 2 run "$T/w" --dim M=100 --out c="$T/w/kernels/kernels.so" &&
  expect_out "that file is the program $T/w (its kernels/kernels.so): writing it would lose it"
expect_true "the work dir is as it was" diff -r "$T/orig" "$T/w"
finish
