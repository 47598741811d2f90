#!/usr/bin/env bash
# Valid regions in compiled kernels (issue #33, a Llama decode layer): a negative runtime valid=
# fails the launch naming the kernel, the load's file:line:col and the value, and one past the
# tile's shape is clamped to it in both paths (`valid=[M - row0, C]` for a last partial block, as
# tensor.slice clamps at the edge); a loop carrying a tile whose written-out valid region is
# its whole shape checks and runs (that region is the same type as none); tile.scatter_rows writes
# only the tile's valid region, so the cache rows the padding rows point at keep their bits.
# (The interpreter's side: test_interp, test_ops_struct.)
source "$(dirname "$0")/lib/common.bash"

if ! command -v python3 >/dev/null; then
  echo "SKIP: python3 not found"
  exit 77
fi

cat >"$T/big.ptir" <<'PTIR'
program valid_big
kernel @k(%x: tensor[4,4] f32, out %y: tensor[4,4] f32, %vr: index, %vc: index)
    -> (tensor[4,4] f32) {
  %t = tile.load(%x, [0, 0], [4, 4], valid=[%vr, %vc])
  %s = tile.adds(%t, 1.0)
  %y1 = tile.store(%s, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[4,4] f32, out %y: tensor[4,4] f32, %vr: index = runtime,
           %vc: index = runtime) -> (tensor[4,4] f32) {
  call @k(%x, %y, %vr, %vc)
  return %y
}
PTIR
MSG="nothing outside a tensor was read or written"
run_pto 1 run "$T/big.ptir" --in vr=-1 --in vc=4
expect_out "kernel 'k'" && expect_out "big.ptir:4:8: tile.load: value -1 at [0,0]; $MSG"
run_pto 1 run "$T/big.ptir" --in vr=2 --in vc=-5
expect_out "big.ptir:4:8: tile.load: value -5 at [1,0]"
# a work dir names the load through its positions.json
run_pto 0 compile "$T/big.ptir" -o "$T/wd"
run_pto 1 run "$T/wd" --in vr=-6 --in vc=4
expect_out "big.ptir:4:8: tile.load: value -6 at [0,0]; $MSG"
# within the shape (its edge included), and past it (clamped): both paths agree
run_pto 0 run "$T/big.ptir" --in vr=4 --in vc=4 --check && expect_out PASS
run_pto 0 run "$T/big.ptir" --in vr=2 --in vc=0 --check && expect_out PASS
run_pto 0 run "$T/big.ptir" --in vr=6 --in vc=4 --check && expect_out PASS
run_pto 0 run "$T/big.ptir" --in vr=2 --in vc=500 --check && expect_out PASS

cat >"$T/carry.ptir" <<'PTIR'
program carry
kernel @k(%x: tensor[8,4] f32, out %y: tensor[8,1] f32) -> (tensor[8,1] f32) {
  %z = tile.full([8, 1], f32, 0.0)
  %s = for %i in range(0, 3) iter(%acc = %z) {
    %t = tile.load(%x, [0, 0], [8, 4], valid=[8, 4])
    %r = tile.row_sum(%t)
    %n = tile.add(%acc, %r)
    yield %n
  }
  %y1 = tile.store(%s, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[8,4] f32, out %y: tensor[8,1] f32) -> (tensor[8,1] f32) {
  call @k(%x, %y)
  return %y
}
PTIR
run_pto 0 check "$T/carry.ptir"
run_pto 0 run "$T/carry.ptir" --check && expect_out PASS

# A [8, 4] tile with 3 valid rows and 3 valid columns scattered into a [10, 6] KV cache from
# column 1: rows 7, 2, 5 change in columns 1..3; the padding rows' indices (0, 99, -4) are
# neither checked nor used, and every other element keeps its bits.
cat >"$T/kv.ptir" <<'PTIR'
program kv
kernel @put(%s: tensor[8,4] f32, %ix: tensor[8,1] i32, inout %kv: tensor[10,6] f32, %n: index)
    -> (tensor[10,6] f32) {
  %i = tile.load(%ix, [0, 0], [8, 1])
  %t = tile.load(%s, [0, 0], [8, 4], valid=[%n, 3])
  %kv1 = tile.scatter_rows(%t, %i, [1], %kv)
  return %kv1
}
orch @main(%s: tensor[8,4] f32, %ix: tensor[8,1] i32, inout %kv: tensor[10,6] f32,
           %n: index = runtime) -> (tensor[10,6] f32) {
  %kv1 = call @put(%s, %ix, %kv, %n)
  return %kv1
}
PTIR
cat >"$T/npy.py" <<'EOF'
import struct, sys
def write(path, descr, shape, fmt, values):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (descr, *shape)
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))
def raw(path):  # the data bytes, 4 per element
    b = open(path, "rb").read()
    return b[10 + struct.unpack("<H", b[8:10])[0]:]
d = sys.argv[2]
if sys.argv[1] == "make":
    write(d + "/s.npy", "<f4", (8, 4), "f", [100.0 + k for k in range(32)])
    write(d + "/ix.npy", "<i4", (8, 1), "i", [7, 2, 5, 0, 0, 99, -4, 0])
    write(d + "/kv.npy", "<f4", (10, 6), "f", [-k - 0.5 for k in range(60)])
else:
    before, after = raw(d + "/kv.npy"), raw(d + "/kv_out.npy")
    src = {7: 0, 2: 1, 5: 2}
    for r in range(10):
        for c in range(6):
            e = r * 6 + c
            if r in src and 1 <= c <= 3:
                want = struct.pack("<f", 100.0 + src[r] * 4 + c - 1)
            else:
                want = before[4 * e:4 * e + 4]
            if after[4 * e:4 * e + 4] != want:
                sys.exit("kv[%d][%d] changed wrongly" % (r, c))
    print("KV OK")
EOF
python3 "$T/npy.py" make "$T"
run_pto 0 run "$T/kv.ptir" --in s="$T/s.npy" --in ix="$T/ix.npy" --in kv="$T/kv.npy" --in n=3 \
  --out kv="$T/kv_out.npy" --check && expect_out PASS
OUT=$(python3 "$T/npy.py" compare "$T" 2>&1)
expect_out "KV OK"
finish
