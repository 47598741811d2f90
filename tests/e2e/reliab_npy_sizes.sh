#!/usr/bin/env bash
# A hostile .npy input costs what its array needs, not what the file holds: the header is read
# first, then only the data it announces. Bytes after the array (a 3 GiB sparse tail; numpy
# itself ignores them, as a second numpy.save to one file leaves them) are never read, so the run
# fits in 1.5 GB of address space and is right; a header announcing 6.4 GB (a sparse file of that
# size) is refused from the header, naming the file, before any data is read; a header that
# does not match the parameter is refused the same way; a file cut short says so; a header
# longer than 1 MiB is refused from its length, never read, however long the file. tools/npy.c.
source "$(dirname "$0")/lib/common.bash"
command -v truncate >/dev/null || {
  echo "SKIP: needs truncate"
  exit 77
}
export PTO_CACHE_DIR="$T/cache"
run_pto 0 compile "$EX/add.ptir" -o "$T/w" --force
# npy FILE SHAPE NBYTES: a .npy 1.0 of f32 zeros, SHAPE as numpy writes it, NBYTES of data.
npy() {
  /usr/bin/python3 - "$@" <<'PY'
import struct, sys
path, shape, nbytes = sys.argv[1], sys.argv[2], int(sys.argv[3])
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape
hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
    f.write(bytes(min(nbytes, 1 << 20)))
    f.truncate(10 + len(hdr) + nbytes)
PY
}
npy "$T/tail.npy" "(100, 128)" $((100 * 128 * 4))
truncate -s 3G "$T/tail.npy"
if [ -n "$PTO_SANFLAGS" ]; then
  run_pto 0 run "$T/w" --dim M=100 --in a="$T/tail.npy" --check && expect_out PASS
else
  # Read whole, the file alone would take 3 GiB of the 1.5 GB.
  run_status 0 bash -c "ulimit -v 1500000 && exec \"\$0\" \"\$@\"" "$PTO" run "$T/w" --dim M=100 \
    --in a="$T/tail.npy" --check && expect_out PASS
fi
# 40000 x 128 x ... : a header announcing 6.4 GB of data, all of it there (sparse).
npy "$T/huge.npy" "(12500000, 128)" $((12500000 * 128 * 4))
run_pto 2 run "$T/w" --in a="$T/huge.npy" &&
  expect_out "huge.npy: the array is 6400000000 bytes, more than the 1073741824 bytes of device memory"
# The header checked against the parameter before any data is read.
npy "$T/shape.npy" "(100, 64)" $((100 * 64 * 4))
run_pto 2 run "$T/w" --in a="$T/shape.npy" && expect_out "shape.npy: shape [100, 64], expected [?, 128]"
npy "$T/short.npy" "(100, 128)" 1000
run_pto 2 run "$T/w" --in a="$T/short.npy" &&
  expect_out "short.npy: truncated: the shape needs 51200 bytes of data, the file has 1000"
# A header longer than any numpy writes (v2.0, 4 GiB announced) is refused by its length.
/usr/bin/python3 -c "
import struct; open('$T/hdr.npy','wb').write(b'\x93NUMPY\x02\x00' + struct.pack('<I', 0xffffff00) + b'{')"
truncate -s 5G "$T/hdr.npy"
run_pto 2 run "$T/w" --in a="$T/hdr.npy" &&
  expect_out "hdr.npy: the .npy header is 4294967052 bytes, more than the 1048576 that pto reads"
# The same header in a file shorter than it (3 GiB) is refused from its length too, not read
# whole (3 GB and 11 s) to find it cut short.
truncate -s 3G "$T/hdr.npy"
if [ -z "$PTO_SANFLAGS" ]; then
  run_status 2 bash -c "ulimit -v 1500000 && exec \"\$0\" \"\$@\"" "$PTO" run "$T/w" \
    --in a="$T/hdr.npy"
else
  run_pto 2 run "$T/w" --in a="$T/hdr.npy"
fi
expect_out "hdr.npy: truncated .npy header (4294967040 bytes announced, 3221225460 present)"
finish
