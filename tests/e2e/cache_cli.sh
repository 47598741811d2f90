#!/usr/bin/env bash
# The binary cache from the command line: pto compile hits the cache into a second work dir,
# pto cache stats|ls|show|verify|gc|clear, signature-only compile and its errors, a specialized
# scalar passed at launch, a depfile that ninja and make use correctly.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
export PTO_CACHE_DEBUG=1

# ---- miss, then hit into another work dir -------------------------------------------------
run_pto 0 compile "$EX/add.ptir" -o "$T/w1"
run_pto 0 compile "$EX/add.ptir" -o "$T/w2"
expect_true "the hit copies the same manifest" cmp -s "$T/w1/manifest.json" "$T/w2/manifest.json"
expect_true "key.txt beside the work dir" grep -q '^format=pto-cache-key/' "$T/w2/key.txt"
run_pto 0 run "$T/w2" --dim M=70 --check && expect_out PASS
run_pto 0 cache stats
expect_out "entries          1"
expect_out "hits             1"
expect_out "misses           1"
expect_out "stores           1"
run_pto 0 cache stats --json
expect_out '"hits": 1, "misses": 1, "stores": 1'
key=$(sed -n 's/.*"cache_key": "\([0-9a-f]*\)".*/\1/p' "$T/w1/manifest.json")
expect_true "the manifest records a key" test ${#key} = 32
run_pto 0 cache ls
expect_out "$key"
expect_out "add@main"
expect_out "a:in[M,128]f32 b:in[M,128]f32 c:out[M,128]f32"
run_pto 0 cache ls --json
expect_out "\"key\": \"$key\""
expect_out '"signature": "a:in[M,128]f32 b:in[M,128]f32 c:out[M,128]f32", "specialised": "-"'
run_pto 0 cache show "${key:0:6}"
expect_out "key          $key"
expect_out "add_block"
expect_out "key.txt:"
expect_out "param.2=tensor;out;f32;[?,128]"
run_pto 0 cache show "$key" --json
expect_out "\"key_text\": \"format=pto-cache-key/"
expect_out '"schema": "pto.manifest/1"'
run_pto 2 cache show 0000000000000000000000000000000g
# PTO_CACHE_DIR naming a file (or a path below one) is bad input for every subcommand: exit 2
# naming the variable and the path; a missing directory is an empty cache
echo not a dir >"$T/cache-file"
for sub in stats ls "show ${key:0:6}" "rm ${key:0:6}" verify gc clear; do
  # shellcheck disable=SC2086  # sub is a subcommand and its arguments
  PTO_CACHE_DIR="$T/cache-file" run_pto 2 cache $sub &&
    expect_out "PTO_CACHE_DIR=$T/cache-file is not a directory"
done
PTO_CACHE_DIR="$T/cache-file/sub" run_pto 2 cache stats &&
  expect_out "PTO_CACHE_DIR=$T/cache-file/sub is not a directory"
run_status 2 env -u PTO_CACHE_DIR XDG_CACHE_HOME="$T/cache-file" "$PTO" cache ls &&
  expect_out "the cache directory $T/cache-file/pto (from XDG_CACHE_HOME=$T/cache-file)"
PTO_CACHE_DIR="$T/no-cache" run_pto 0 cache stats && expect_out "entries          0"
expect_true "stats makes no cache dir" test ! -e "$T/no-cache"
run_pto 2 cache show
run_pto 2 cache frobnicate
expect_out "not a cache command"
run_pto 2 cache ls extra
run_pto 2 cache verify --json
run_pto 0 cache --help
expect_out "pto cache gc --max-size 512M"

# ---- verify finds a damaged entry; the next compile rebuilds it ----------------------------
entry="$PTO_CACHE_DIR/${key:0:2}/${key:2}"
printf 'x' | dd of="$entry/kernels/kernels.so" bs=1 seek=300 conv=notrunc 2>/dev/null
run_pto 1 cache verify
expect_out "1 entries checked, 1 corrupt"
expect_true "the corrupt entry is gone" test ! -e "$entry"
run_pto 0 cache stats
expect_out "corruptions      1"
run_pto 0 compile "$EX/add.ptir" -o "$T/w3"
run_pto 0 cache verify
expect_out "1 entries checked, 0 corrupt"

# ---- gc and clear ------------------------------------------------------------------------
run_pto 0 compile "$EX/scale_rows.ptir" -o "$T/s1"
run_pto 0 cache gc --max-size 1
expect_out "evicted 2 entries"
run_pto 0 cache stats
expect_out "entries          0"
expect_out "evictions        2"
run_pto 2 cache gc --max-size lots
run_pto 0 compile "$EX/add.ptir" -o "$T/w4"
run_pto 0 cache clear
expect_out "removed 1 entries"
run_pto 0 cache ls
expect_true "ls of an empty cache prints nothing" test -z "$OUT"

# ---- rm: a unique start of a key removes that entry; a bad KEY removes nothing ---------------
run_pto 0 compile "$EX/add.ptir" -o "$T/r1"
run_pto 0 compile "$EX/scale_rows.ptir" -o "$T/r2"
k1=$(sed -n 's/.*"cache_key": "\([0-9a-f]*\)".*/\1/p' "$T/r1/manifest.json")
k2=$(sed -n 's/.*"cache_key": "\([0-9a-f]*\)".*/\1/p' "$T/r2/manifest.json")
run_pto 2 cache rm
expect_out "rm needs a KEY"
run_pto 2 cache rm "${k1:0:6}" zz
expect_out "1 to 32 hex digits"
run_pto 0 cache stats && expect_out "entries          2"
run_pto 0 cache rm "${k1:0:6}" "$k1"
expect_out "removed $k1"
expect_true "the entry is gone" test ! -e "$PTO_CACHE_DIR/${k1:0:2}/${k1:2}"
expect_true "the other entry stays" test -d "$PTO_CACHE_DIR/${k2:0:2}/${k2:2}"
run_pto 2 cache rm "$k1"
expect_out "no cache entry has a key starting with '$k1'"
run_pto 0 cache rm "$k2"
run_pto 0 cache stats && expect_out "entries          0"

# ---- signature-only compile ----------------------------------------------------------------
# Every entry tensor of add.ptir is annotated: no samples needed, and samples that agree with
# the annotations (any extent for the dynamic M) give the same key.
run_pto 0 compile "$EX/add.ptir" -o "$T/sig1"
run_pto 0 compile "$EX/add.ptir" -o "$T/sig2" --arg a=100x128 --arg b=7x128
expect_true "samples that agree with the annotation give the same key" \
  cmp -s "$T/sig1/manifest.json" "$T/sig2/manifest.json"
run_pto 2 compile "$EX/add.ptir" -o "$T/sig3" --arg a=100x64
expect_out "declared with 128"

cat >"$T/unbound.ptir" <<'EOF'
program unbound
dynamic M, R
kernel @blk(%x: tensor[R,64] f32, out %y: tensor[R,64] f32, %s: f32) -> (tensor[R,64] f32) {
  %t = tile.load(%x, [0, 0], [16, 64], valid=[R, 64])
  %u = tile.muls(%t, %s)
  %y1 = tile.store(%u, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor f32, out %y: tensor[M,64] f32, %n: i32, %s: f32 = runtime)
    -> (tensor[M,64] f32) {
  call @blk(%x, %y, %s)
  return %y
}
EOF
run_pto 2 compile "$T/unbound.ptir" -o "$T/u1" --arg x=16x64
expect_out "scalar parameter 'n' has no value: pass -D n=VALUE or -D n=runtime"
run_pto 2 compile "$T/unbound.ptir" -o "$T/u1" -D n=4
expect_out "tensor parameter 'x' has no shape: annotate it (tensor[64,128] f32) or pass --arg x=64x128"
run_pto 0 compile "$T/unbound.ptir" -o "$T/u1" -D n=4 --arg x=16x64
run_pto 0 compile "$T/unbound.ptir" -o "$T/u2" -D n=runtime --arg x=16x64
expect_true "-D n=4 and -D n=runtime are different keys" \
  test "$(grep cache_key "$T/u1/manifest.json")" != "$(grep cache_key "$T/u2/manifest.json")"
expect_true "a runtime scalar is its dtype only in the key" grep -q 'param.2=scalar;i32;runtime' "$T/u2/key.txt"
expect_true "a specialized scalar is its value in the key" grep -q 'param.2=scalar;i32;=4' "$T/u1/key.txt"
expect_true "the sample is the static shape in the key" grep -qF 'param.0=tensor;in;f32;[16,64]' "$T/u1/key.txt"
run_pto 0 run "$T/u1" --dim M=16 --in s=2 --check
expect_out PASS

# ---- a specialized scalar passed at launch with another value ----------------------------
run_pto 2 run "$EX/scale_rows.ptir" --dim M=64 --in alpha=0.5 --in act=0
expect_out "its value was fixed at compile time to 1"
run_pto 0 run "$EX/scale_rows.ptir" --dim M=64 --in alpha=0.5 --in act=1 --check
run_pto 0 run "$EX/scale_rows.ptir" -D act=runtime --dim M=64 --in alpha=0.5 --in act=0 --check
expect_out PASS

# ---- depfile: ninja and make rebuild exactly when the source changes -------------------------
mkdir -p "$T/src dir"
cp "$EX/add.ptir" "$T/src dir/my add.ptir"
run_pto 0 compile "$T/src dir/my add.ptir" -o "$T/dep out" --depfile "$T/add.d"
expect_true "depfile escapes spaces" grep -qF 'dep\ out/manifest.json: ' "$T/add.d"
expect_true "depfile names the source" grep -qF 'src\ dir/my\ add.ptir' "$T/add.d"
if command -v ninja >/dev/null; then
  mkdir -p "$T/nj"
  cat >"$T/nj/build.ninja" <<EOF
rule pto
  command = "$PTO" compile "$T/src dir/my add.ptir" -o work --depfile work.d
  depfile = work.d
  deps = gcc
build work/manifest.json: pto
EOF
  expect_true "ninja builds the work dir" ninja -C "$T/nj" >/dev/null
  expect_true "ninja: nothing to do when nothing changed" \
    bash -c "ninja -C '$T/nj' | grep -q 'no work to do'"
  sleep 1.1
  touch "$T/src dir/my add.ptir"
  expect_true "ninja: the source changed, the work dir is rebuilt" \
    bash -c "ninja -C '$T/nj' | grep -q 'pto compile\\|\\[1/1\\]'"
fi
if command -v make >/dev/null; then
  mkdir -p "$T/mk"
  printf 'work/manifest.json:\n\t"%s" compile "%s" -o work --depfile work.d\n-include work.d\n' \
    "$PTO" "$T/src dir/my add.ptir" >"$T/mk/Makefile"
  expect_true "make builds the work dir" make -s -C "$T/mk" >/dev/null
  expect_true "make: up to date" make -q -C "$T/mk"
  sleep 1.1
  touch "$T/src dir/my add.ptir"
  expect_true "make: out of date after the source changed" bash -c "! make -q -C '$T/mk'"
fi

# ---- ls tells entries of one program apart by their specialised scalars ---------------------
# Two entries of one program, told apart by their specialised scalars.
run_pto 0 compile "$EX/scale_rows.ptir" -o "$T/sr1" -D act=1
run_pto 0 compile "$EX/scale_rows.ptir" -o "$T/sr2" -D act=2
run_pto 0 cache ls && expect_out "act=1" && expect_out "act=2" && expect_out "act:i32=2"
# ... and by the rest of what their key holds: an -O level other than -O2, a host program's
# device set (both listed the same row twice before).
run_pto 0 compile "$EX/add.ptir" -o "$T/o3" -O3
run_pto 0 compile "$EX/allreduce_mesh.ptir" -o "$T/ar2" --devices 2
run_pto 0 compile "$EX/allreduce_mesh.ptir" -o "$T/ar23" --devices 2,3
run_pto 0 cache ls && expect_out " -O3 " && expect_out " devices=0,1 " && expect_out " devices=2,3 "
run_pto 0 cache ls --json && expect_out '"specialised": "devices=2,3"' && expect_out '"specialised": "-O3"'
run_pto 0 cache show "$(grep -o 'key": "[0-9a-f]*' "$T/ar23/manifest.json" | head -1 | cut -d'"' -f3)" &&
  expect_out "devices      2,3 (rank r runs on the r-th)"

finish
