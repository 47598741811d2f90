#!/usr/bin/env bash
# A NaN given to -D (a binding baked into the binaries) loads and runs: -D a=-nan was written into
# the manifest as "nan" (sign lost), and -D a=nan(0x20000000) kept its payload in the signature
# while program.ptir and the manifest cannot hold one, so the entry's fingerprint never matched:
# every pto run failed with "the signature or kernel table does not match the one
# orchestration/main.so was compiled for", and a work dir from pto compile -o with "the signature
# does not match program.ptir". A NaN now reads as the quiet NaN of its sign (docs/cli.md,
# *Scalar values*).
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
cat >"$T/nan.ptir" <<'PTIR'
program nan_bind
kernel @k(%x: tensor[2, 8] f32, out %y: tensor[2, 8] f32, %a: f32, %b: f32) -> (tensor[2, 8] f32) {
  %t = tile.load(%x, [0, 0], [2, 8])
  %u = tile.muls(%t, %a)
  %v = tile.adds(%u, %b)
  %y1 = tile.store(%v, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[2, 8] f32, out %y: tensor[2, 8] f32, %a: f32 = runtime, %b: f64 = runtime)
    -> (tensor[2, 8] f32) {
  %bf = f32(%b)
  call @k(%x, %y, %a, %bf)
  return %y
}
PTIR
for a in nan -nan "nan(0x20000000)" "-nan(0x8000000000)" -inf -0; do
  for b in 1 -nan "nan(0x123)"; do
    run_pto 0 run "$T/nan.ptir" -D "a=$a" -D "b=$b" --check && expect_out PASS
  done
done
# Cached entries load too (the second run of each is a hit).
run_pto 0 run "$T/nan.ptir" -D a=-nan -D b=-nan --check && expect_out PASS
# A work dir: compiled, then loaded from its own manifest and program.ptir.
run_pto 0 compile "$T/nan.ptir" -o "$T/dir" -D a=-nan -D b="nan(0x123)"
expect_true "manifest keeps -nan" grep -q '"binding": "-nan"' "$T/dir/manifest.json"
expect_true "program.ptir keeps -nan" grep -q '%a: f32 = -nan' "$T/dir/program.ptir"
run_pto 0 run "$T/dir" --check && expect_out PASS
# A payload does not make another binding: nan(0x123) and nan are one value (cli_same_value).
run_pto 0 run "$T/nan.ptir" -D a=nan -D "a=nan(0x123)" -D b=0 --check && expect_out PASS
finish
