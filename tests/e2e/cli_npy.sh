#!/usr/bin/env bash
# .npy through pto run --in/--out for f16, bf16 (the '<u2' raw-bits convention), i8 and bool
# programs: files written by a plain-python writer (and by numpy, where installed) are read,
# outputs are written with the right descr, shape and values, big-endian files are converted,
# and files whose dtype or shape does not match are refused with a message naming both.
source "$(dirname "$0")/lib/common.bash"

PR="$PTO_SOURCE_DIR/tests/programs"
if ! command -v python3 >/dev/null; then
  echo "SKIP: python3 not found"
  exit 77
fi

# A .npy writer and reader in plain python3 (struct), so the test needs no numpy.
cat >"$T/npyio.py" <<'EOF'
import struct
FMT = {"f2": "e", "f4": "f", "f8": "d", "i1": "b", "i2": "h", "i4": "i", "i8": "q",
       "u1": "B", "u2": "H", "u4": "I", "u8": "Q", "b1": "B", "V2": "H"}
def write(path, descr, shape, values):
    bo = ">" if descr[0] == ">" else "<"
    data = b"".join(struct.pack(bo + FMT[descr[1:]], v) for v in values)
    dims = "%d," % shape[0] if len(shape) == 1 else ", ".join(str(s) for s in shape)
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + data)
def read(path):
    b = open(path, "rb").read()
    assert b[:8] == b"\x93NUMPY\x01\x00", path
    n = struct.unpack("<H", b[8:10])[0]
    assert (10 + n) % 64 == 0, "header not padded to 64 bytes"
    h = eval(b[10:10 + n].decode())
    d = h["descr"]
    count = 1
    for s in h["shape"]:
        count *= s
    f = FMT[d[1:]]
    vals = struct.unpack(("<" if d[0] != ">" else ">") + f * count,
                         b[10 + n:10 + n + count * struct.calcsize(f)])
    assert len(b) == 10 + n + count * struct.calcsize(f), "trailing bytes"
    return d, tuple(h["shape"]), list(vals)
def bf16_bits(x):
    # bf16 of an f32 that bf16 holds exactly: the f32's top 16 bits
    return struct.unpack("<I", struct.pack("<f", x))[0] >> 16
EOF
py() { (cd "$T" && python3 -c "import npyio
$1"); }

# ---- f16 -----------------------------------------------------------------------------------
# x in k/8 for k in [-16, 16): x*x + x is exact in f16, so the expected output is exact too.
py "npyio.write('x16.npy', '<f2', (16, 32), [((i % 32) - 16) / 8 for i in range(512)])
npyio.write('x16be.npy', '>f2', (16, 32), [((i % 32) - 16) / 8 for i in range(512)])"
run_pto 0 run "$PR/dtype_f16.ptir" --in x="$T/x16.npy" --out y="$T/y16.npy" --out z="$T/z16.npy" --check &&
  expect_out "ran @main on sim" && expect_out "4 tasks" && expect_out "y: [16,32] f16" && expect_out PASS
expect_true "f16 out: '<f2', the file's rows, x*x + x" py "
d, s, v = npyio.read('y16.npy')
x = [((i % 32) - 16) / 8 for i in range(512)]
assert d == '<f2' and s == (16, 32), (d, s)
assert v == [a * a + a for a in x]"
expect_true "f32 out of an f16 input: '<f4', x/2" py "
d, s, v = npyio.read('z16.npy')
assert d == '<f4' and s == (16, 32) and v == [((i % 32) - 16) / 16 for i in range(512)], (d, s)"
run_pto 0 run "$PR/dtype_f16.ptir" --in x="$T/x16be.npy" --out y="$T/y16be.npy"
expect_true "a big-endian f16 file is converted: the same output" cmp "$T/y16.npy" "$T/y16be.npy"

# ---- bf16 (stored as '<u2' raw bits; '|V2' as ml_dtypes saves it) ------------------------------
# x = 0 gives exp(0) * 0.5 - 0 = 0.5 exactly (bits 0x3f00); the rest is checked by --check.
py "x = [0.0 if i % 3 == 0 else ((i % 16) - 8) / 4 for i in range(24 * 16)]
bits = [npyio.bf16_bits(a) for a in x]
npyio.write('xb.npy', '<u2', (24, 16), bits)
npyio.write('xbv.npy', '|V2', (24, 16), bits)
npyio.write('xbbe.npy', '>u2', (24, 16), bits)"
run_pto 0 run "$PR/dtype_bf16.ptir" --in x="$T/xb.npy" --out y="$T/yb.npy" --check &&
  expect_out "y: [24,16] bf16" && expect_out PASS
expect_true "bf16 out: '<u2' bits, 0.5 where x = 0" py "
d, s, v = npyio.read('yb.npy')
assert d == '<u2' and s == (24, 16), (d, s)
assert all(v[i] == 0x3f00 for i in range(0, 24 * 16, 3)), [hex(b) for b in v[:6]]
assert len(set(v)) > 4"
run_pto 0 run "$PR/dtype_bf16.ptir" --in x="$T/xbv.npy" --out y="$T/ybv.npy"
expect_true "a '|V2' bf16 file reads as the same bits" cmp "$T/yb.npy" "$T/ybv.npy"
run_pto 0 run "$PR/dtype_bf16.ptir" --in x="$T/xbbe.npy" --out y="$T/ybbe.npy"
expect_true "a big-endian '>u2' bf16 file is converted" cmp "$T/yb.npy" "$T/ybbe.npy"
# pto's own bf16 output feeds the next run as it is
run_pto 0 run "$PR/dtype_bf16.ptir" --in x="$T/yb.npy" --check && expect_out PASS

# ---- i8 ------------------------------------------------------------------------------------
# N comes from the file (40 columns: two 32-column blocks, the second clamped).
py "npyio.write('xi.npy', '|i1', (4, 40), [(i % 17) - 8 for i in range(160)])"
run_pto 0 run "$PR/dtype_i8.ptir" --in x="$T/xi.npy" --out y="$T/yi.npy" --check &&
  expect_out "2 tasks" && expect_out "y: [4,40] i8" && expect_out PASS
expect_true "i8 out: '|i1', max(3x + 1, -10)" py "
d, s, v = npyio.read('yi.npy')
assert d == '|i1' and s == (4, 40), (d, s)
assert v == [max(3 * ((i % 17) - 8) + 1, -10) for i in range(160)], v[:8]"

# ---- bool ----------------------------------------------------------------------------------
# A bool element other than 0 or 1 in the file reads as true.
py "npyio.write('m.npy', '|b1', (8, 16), [(2 if i % 4 == 1 else 1) if i % 2 else 0 for i in range(128)])
npyio.write('v.npy', '<f4', (8, 16), [((i % 9) - 4) / 2 for i in range(128)])"
run_pto 0 run "$PR/dtype_bool.ptir" --in m="$T/m.npy" --in v="$T/v.npy" --out y="$T/yy.npy" \
  --out b="$T/bb.npy" --check && expect_out "b: [8,16] bool" && expect_out PASS
expect_true "bool in and out: '|b1' of 0 and 1, v masked by m" py "
v = [((i % 9) - 4) / 2 for i in range(128)]
d, s, y = npyio.read('yy.npy')
assert d == '<f4' and s == (8, 16) and y == [v[i] if i % 2 else 0.0 for i in range(128)], (d, s)
d, s, b = npyio.read('bb.npy')
assert d == '|b1' and s == (8, 16) and b == [1 if x > 0 else 0 for x in v], (d, s, b[:8])"

# ---- refusals: exit 2, naming the option, the file and both values -----------------------------
py "npyio.write('f32.npy', '<f4', (16, 32), [0.0] * 512)
npyio.write('w31.npy', '<f2', (16, 31), [0.0] * (16 * 31))
npyio.write('flat.npy', '<f2', (512,), [0.0] * 512)
npyio.write('i2.npy', '<i2', (4, 40), [0] * 160)
npyio.write('v8.npy', '<f4', (4, 16), [0.0] * 64)"
run_pto 2 run "$PR/dtype_f16.ptir" --in x="$T/f32.npy" &&
  expect_out "--in x: $T/f32.npy: dtype f32 ('<f4'), expected f16 ('<f2')"
run_pto 2 run "$PR/dtype_bf16.ptir" --in x="$T/f32.npy" &&
  expect_out "dtype f32 ('<f4'), expected bf16 ('<u2'): a bf16 file holds the raw bfloat16 bits"
run_pto 2 run "$PR/dtype_bf16.ptir" --in x="$T/x16.npy" && expect_out "dtype f16 ('<f2'), expected bf16"
run_pto 2 run "$PR/dtype_f16.ptir" --in x="$T/xb.npy" && expect_out "dtype u16 ('<u2'), expected f16 ('<f2')"
run_pto 2 run "$PR/dtype_i8.ptir" --in x="$T/i2.npy" && expect_out "dtype i16 ('<i2'), expected i8 ('|i1')"
run_pto 2 run "$PR/dtype_bool.ptir" --in m="$T/xi.npy" && expect_out "dtype i8 ('|i1'), expected bool ('|b1')"
run_pto 2 run "$PR/dtype_f16.ptir" --in x="$T/w31.npy" && expect_out "w31.npy: shape [16, 31], expected [?, 32]"
run_pto 2 run "$PR/dtype_f16.ptir" --in x="$T/flat.npy" && expect_out "flat.npy: shape [512], expected [?, 32]"
run_pto 2 run "$PR/dtype_f16.ptir" --in x="$T/x16.npy" --dim M=8 &&
  expect_out "x16.npy: shape [16, 32], expected [8, 32]"
run_pto 2 run "$PR/dtype_bool.ptir" --in m="$T/m.npy" --in v="$T/v8.npy" &&
  expect_out "--in v: $T/v8.npy: shape [4, 16], expected [8, 16]"
printf 'hello' >"$T/text.npy"
run_pto 2 run "$PR/dtype_f16.ptir" --in x="$T/text.npy" && expect_out "text.npy: not a .npy file"
head -c 200 "$T/x16.npy" >"$T/cut.npy"
run_pto 2 run "$PR/dtype_f16.ptir" --in x="$T/cut.npy" && expect_out "cut.npy: truncated"
run_pto 2 run "$PR/dtype_f16.ptir" --in x="$T/missing.npy" && expect_out "--in x: cannot open $T/missing.npy"
run_pto 2 run "$PR/dtype_f16.ptir" --dim M=8 --out x="$T/o.npy" &&
  expect_out "--out x: @main has no out or inout tensor parameter named 'x'"
# Checked before the run (issue #10): a usage error, not a failure after the launch.
run_pto 2 run "$PR/dtype_f16.ptir" --dim M=8 --out y="$T/no/dir/y.npy" &&
  expect_out "--out $T/no/dir/y.npy: directory $T/no/dir does not exist"

# ---- generated inputs ------------------------------------------------------------------------
# An unfed f32 input is splitmix64 from seed*0x2545f4914f6cdd1d + 1, each word's top 53 bits
# scaled to [-1, 1) and rounded to f32 (element by element, or 8 at a time on AVX-512 hosts: the
# same values). y = x - 1 of slice_edges shows them; sizes with and without a remainder of 8.
cat >"$T/splitmix.py" <<'EOF'
import struct
def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]
def inputs(seed, n):
    m = (1 << 64) - 1
    st = (seed * 0x2545f4914f6cdd1d + 1) & m
    out = []
    for _ in range(n):
        st = (st + 0x9e3779b97f4a7c15) & m
        z = st
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & m
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & m
        z ^= z >> 31
        out.append(f32((z >> 11) * 2.0 ** -52 - 1.0))
    return out
EOF
for dims in "3 13" "2 3" "17 35"; do
  set -- $dims
  run_pto 0 run "$PR/slice_edges.ptir" --dim M=$1 --dim N=$2 --in x=random:$(($1 * 7)) \
    --out y="$T/ry.npy" && expect_out "ran @main on sim"
  expect_true "random:SEED is the splitmix64 sequence, [$1,$2]" py "
import splitmix
d, s, v = npyio.read('ry.npy')
x = splitmix.inputs($1 * 7, $1 * $2)
assert d == '<f4' and s == ($1, $2), (d, s)
bad = [i for i in range(len(v)) if v[i] != splitmix.f32(x[i] - 1.0)]
assert not bad, (len(bad), bad[:4])"
done
# Unfed: the seed is the parameter's position (x is parameter 0).
run_pto 0 run "$PR/slice_edges.ptir" --dim M=2 --dim N=9 --out y="$T/ry.npy"
expect_true "an unfed input is random:POSITION" py "
import splitmix
d, s, v = npyio.read('ry.npy')
x = splitmix.inputs(0, 18)
assert v == [splitmix.f32(a - 1.0) for a in x], v[:4]"

# ---- numpy, where installed --------------------------------------------------------------------
NP=""
for c in python3 /usr/bin/python3; do
  if "$c" -c 'import numpy' 2>/dev/null; then NP=$c && break; fi
done
if [ -n "$NP" ]; then
  (cd "$T" && "$NP" -c "
import numpy as np
x = (np.arange(16 * 32).reshape(16, 32) % 32 - 16).astype(np.float16) / np.float16(8)
np.save('npx.npy', x)
xb = (np.arange(8 * 16).reshape(8, 16) % 16 - 8).astype(np.float32) / 4
np.save('npxb.npy', (xb.view(np.uint32) >> 16).astype(np.uint16))
np.save('npxi.npy', (np.arange(4 * 40).reshape(4, 40) % 17 - 8).astype(np.int8))
np.save('npm.npy', np.arange(128).reshape(8, 16) % 2 == 1)
np.save('npv.npy', ((np.arange(128).reshape(8, 16) % 9 - 4) / 2).astype(np.float32))")
  run_pto 0 run "$PR/dtype_f16.ptir" --in x="$T/npx.npy" --out y="$T/npy.npy" --check && expect_out PASS
  run_pto 0 run "$PR/dtype_bf16.ptir" --in x="$T/npxb.npy" --out y="$T/npyb.npy" --check && expect_out PASS
  run_pto 0 run "$PR/dtype_i8.ptir" --in x="$T/npxi.npy" --out y="$T/npyi.npy" --check && expect_out PASS
  run_pto 0 run "$PR/dtype_bool.ptir" --in m="$T/npm.npy" --in v="$T/npv.npy" --out b="$T/npb.npy" --check &&
    expect_out PASS
  expect_true "numpy reads pto's outputs: dtypes, shapes and values" bash -c "cd '$T' && '$NP' -c \"
import numpy as np
x = np.load('npx.npy'); y = np.load('npy.npy')
assert y.dtype == np.float16 and y.shape == (16, 32) and (y == x * x + x).all()
yb = np.load('npyb.npy')
assert yb.dtype == np.uint16 and yb.shape == (8, 16)
xi = np.load('npxi.npy').astype(int); yi = np.load('npyi.npy')
assert yi.dtype == np.int8 and (yi == np.maximum(3 * xi + 1, -10)).all()
b = np.load('npb.npy')
assert b.dtype == np.bool_ and (b == (np.load('npv.npy') > 0)).all()
\""
else
  echo "numpy not installed: the numpy round trips are skipped (the plain-python ones ran)"
fi
finish
