#!/usr/bin/env bash
# --check semantics (issue #10, class 7): NaN equals NaN at the same position and an infinity
# equals itself (PASS), a NaN or infinity against anything else fails naming a real index,
# invalid tolerances (nan, inf, negative, not a number) are usage errors (exit 2), and no
# message ever says "index -1".
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

# npy FILE ROWS VALUES...: a float32 .npy of shape [ROWS,128]: the values, then zeros.
npy() {
  python3 - "$@" <<'PY'
import struct, sys
path, rows, vals = sys.argv[1], int(sys.argv[2]), [float(v) for v in sys.argv[3:]]
n = rows * 128
vals = vals + [0.0] * (n - len(vals))
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, 128), }" % rows
hdr += ' ' * (64 - (10 + len(hdr) + 1) % 64) + '\n'
with open(path, 'wb') as f:
    f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode())
    f.write(struct.pack('<%df' % n, *vals))
PY
}

# add.ptir computes c = a + b on the device and in the reference interpreter alike.
npy "$T/special.npy" 2 nan inf -inf 1 nan 3.5 -0.0 inf
npy "$T/zeros.npy" 2
for tol in "" "--rtol 0 --atol 0" "--rtol 0" "--atol 0" "--rtol 1e-3 --atol 1e-3"; do
  # shellcheck disable=SC2086
  run_pto 0 run "$EX/add.ptir" --in a="$T/special.npy" --in b="$T/zeros.npy" --check $tol && expect_out PASS
  expect_true "no FAIL with '$tol'" bash -c "! grep -q FAIL <<<\"\$0\"" "$OUT"
done
# a + a: NaN + NaN, inf + inf, -inf + -inf.
run_pto 0 run "$EX/add.ptir" --in a="$T/special.npy" --in b="$T/special.npy" --check --rtol 0 --atol 0 && expect_out PASS

# A mismatch involving NaN or infinity fails and names a real index: a work dir whose kernel
# is edited to multiply (a * 0: NaN where the reference has inf or -inf).
run_pto 0 compile "$EX/add.ptir" -o "$T/wd"
sed -i 's/= fadd float/= fmul float/' "$T/wd/kernels/add_block.ll"
run_pto 1 run "$T/wd" --in a="$T/special.npy" --in b="$T/zeros.npy" --check && expect_out FAIL
expect_out "worst at flat index 1: got "
expect_out "5 of 256 elements differ"
run_pto 1 run "$T/wd" --in a="$T/special.npy" --in b="$T/zeros.npy" --check --rtol 1e9 --atol 1e9
expect_out "worst at flat index 1: got "

# Integer outputs compare exactly, also above 2^53 where a double no longer tells 2^60 + 1 from
# 2^60: a work dir whose i64 kernel is edited to add 1 fails, and prints both values exactly.
cat >"$T/i64.ptir" <<'PTIR'
program i64
kernel @k(%x: tensor[1,8] i64, out %y: tensor[1,8] i64) -> (tensor[1,8] i64) {
  %t = tile.load(%x, [0, 0], [1, 8])
  %u = tile.adds(%t, 0)
  %y1 = tile.store(%u, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[1,8] i64, out %y: tensor[1,8] i64) -> (tensor[1,8] i64) {
  call @k(%x, %y)
  return %y
}
PTIR
python3 - "$T/big.npy" <<'PY'
import struct, sys
hdr = "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 8), }"
hdr += ' ' * (64 - (10 + len(hdr) + 1) % 64) + '\n'
with open(sys.argv[1], 'wb') as f:
    f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode())
    f.write(struct.pack('<8q', *([2**60] * 7 + [-2**63 + 5])))
PY
run_pto 0 compile "$T/i64.ptir" -o "$T/wd64"
run_pto 0 run "$T/wd64" --in x="$T/big.npy" --check && expect_out PASS
sed -i 's/= add i64 \(%[0-9]*\), 0$/= add i64 \1, 1/' "$T/wd64/kernels/k.ll"
run_pto 1 run "$T/wd64" --in x="$T/big.npy" --check && expect_out FAIL
expect_out "8 of 8 elements differ; worst at flat index 0: got 1152921504606846977, reference 1152921504606846976"
run_pto 0 run "$T/wd64" --in x="$T/big.npy" --check --atol 1 && expect_out PASS

# Invalid tolerances: usage errors.
for bad in nan NaN inf -inf -1 -0.5 1e999 abc "" 1x; do
  run_pto 2 run "$EX/add.ptir" --check --rtol "$bad" && expect_out "expected a finite non-negative number"
  run_pto 2 run "$EX/add.ptir" --check --atol "$bad" && expect_out "expected a finite non-negative number"
done
run_pto 2 run "$EX/add.ptir" --check --rtol && expect_out "--rtol needs a number"

expect_true "no message ever says index -1" bash -c "! grep -rq -- 'index -1' '$T' 2>/dev/null"
finish
