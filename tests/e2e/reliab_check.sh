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

# Invalid tolerances: usage errors.
for bad in nan NaN inf -inf -1 -0.5 1e999 abc "" 1x; do
  run_pto 2 run "$EX/add.ptir" --check --rtol "$bad" && expect_out "expected a finite non-negative number"
  run_pto 2 run "$EX/add.ptir" --check --atol "$bad" && expect_out "expected a finite non-negative number"
done
run_pto 2 run "$EX/add.ptir" --check --rtol && expect_out "--rtol needs a number"

expect_true "no message ever says index -1" bash -c "! grep -rq -- 'index -1' '$T' 2>/dev/null"
finish
