#!/usr/bin/env bash
# A float -> integer scalar cast in generated orchestration (C++) and host (C) code converts as
# kernels (llvm.fpto[su]i.sat) and the interpreter do: toward zero, saturated at the integer's
# range, NaN -> 0. It was a C cast, undefined out of range: on x86 i64(1e30) gave INT64_MIN where
# the interpreter gives INT64_MAX (pto run --check: FAIL with a NaN; found by atk16).
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

# The kernel writes v, w, z and q (four casts of the runtime f64 %a) into y[0, 0..3].
kernel='kernel @k(out %y: tensor[1, 4] i64, %v: i64, %w: u8, %z: i32, %q: u64)
    -> (tensor[1, 4] i64) {
  %t0 = tile.full([1, 1], i64, %v)
  %t1 = tile.full([1, 1], i64, i64(%w))
  %t2 = tile.full([1, 1], i64, i64(%z))
  %t3 = tile.full([1, 1], i64, i64(%q))
  %a = tile.concat(%t0, %t1)
  %b = tile.concat(%t2, %t3)
  %c = tile.concat(%a, %b)
  %y1 = tile.store(%c, [0, 0], %y)
  return %y1
}'
casts='  %v = i64(%a * 1e30)
  %w = u8(%a)
  %z = i32(%a * 1e10)
  %q = u64(%a * 1e30)'
cat >"$T/orch.ptir" <<PTIR
program casts_orch
$kernel
orch @main(out %y: tensor[1, 4] i64, %a: f64 = runtime) -> (tensor[1, 4] i64) {
$casts
  call @k(%y, %v, %w, %z, %q)
  return %y
}
PTIR
cat >"$T/host.ptir" <<PTIR
program casts_host
$kernel
orch @o(out %y: tensor[1, 4] i64, %v: i64, %w: u8, %z: i32, %q: u64) -> (tensor[1, 4] i64) {
  %r = call @k(%y, %v, %w, %z, %q)
  return %r
}
host @main(out %y: tensor[1, 4] i64, %a: f64 = runtime) {
$casts
  call @o(%y, %v, %w, %z, %q) device=0
}
PTIR

# y as text: "v w z q", q as u64.
values() {
  python3 - "$1" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
hl = struct.unpack('<H', b[8:10])[0]
v = struct.unpack('<4q', b[10 + hl:10 + hl + 32])
print(v[0], v[1], v[2], v[3] & (2**64 - 1))
PY
}
for p in orch host; do
  for case in "1:9223372036854775807 1 2147483647 18446744073709551615" \
    "-1:-9223372036854775808 0 -2147483648 0" "nan:0 0 0 0" \
    "300:9223372036854775807 255 2147483647 18446744073709551615" \
    "-inf:-9223372036854775808 0 -2147483648 0" "2.75:9223372036854775807 2 2147483647 18446744073709551615" \
    "1e-31:0 0 0 0" "-1e-20:-10000000000 0 0 0"; do
    a=${case%%:*} want=${case#*:}
    run_pto 0 run "$T/$p.ptir" --in a="$a" --check --out y="$T/y_$p.npy" && expect_out PASS
    got=$(values "$T/y_$p.npy")
    expect_true "$p a=$a: y = '$want', got '$got'" test "$got" = "$want"
  done
done
finish
