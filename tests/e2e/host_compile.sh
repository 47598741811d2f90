#!/usr/bin/env bash
# Host (L3) programs compile (issue #17): `pto compile PROG --devices N` writes the host work-dir
# layout (host/host.c + host.so with a Build-ID, one L2 work dir per called orch under callees/,
# a manifest of kind host with the device set and the callees in call-index order); --devices is
# validated (exit 2) and refused for a program without a host entry; the device set is part of
# the host program's cache key; a tampered host.so is refused, an edited host.c rebuilt; pto run
# of the work dir runs it on a distributed worker.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
P="$EX/allreduce_mesh.ptir"
W="$T/ar"

run_pto 0 compile "$P" --devices 4 -o "$W"
for f in manifest.json program.ptir host/host.c host/host.so callees/step/manifest.json \
  callees/step/orchestration/step.cpp callees/step/orchestration/step.so \
  callees/step/kernels/allreduce.ll callees/step/kernels/kernels.so; do
  expect_true "$f exists" test -f "$W/$f"
done
M=$(cat "$W/manifest.json")
expect_true "kind host" grep -q '"kind": "host"' <<<"$M"
expect_true "devices 0..3" python3 -c "import json,sys; m=json.load(open('$W/manifest.json')); sys.exit(m['devices']!=[0,1,2,3] or m['callees']!=['step'] or m['host']['source']!='host/host.c')"
OUT=$("$PTO" build-id "$W/host/host.so" 2>&1)
expect_out "hid="
expect_true "host.c exports the entry" grep -q 'int32_t pto_host_entry(const pto_host_api \*api' "$W/host/host.c"
expect_true "the callee is an L2 work dir with itself as entry" grep -q '"entry": "step"' "$W/callees/step/manifest.json"

# A second compile is a cache hit: the entry's callee work dirs are copied too, and load.
run_pto 0 compile "$P" --devices 4 -o "$T/ar_hit"
expect_true "callee copied from the cache" test -f "$T/ar_hit/callees/step/manifest.json"
expect_true "same manifest" cmp -s "$W/manifest.json" "$T/ar_hit/manifest.json"
run_pto 0 run "$T/ar_hit" --dim M=128 --check && expect_out "PASS"

# pto cache verify checks a host entry's callee work dirs too.
k=$(python3 -c "import json; print(json.load(open('$W/manifest.json'))['cache_key'])")
entry="$PTO_CACHE_DIR/${k:0:2}/${k:2}"
expect_true "a cache entry with its callees" test -f "$entry/callees/step/kernels/kernels.so"
run_pto 0 cache verify && expect_out "0 corrupt"
printf 'x' | dd of="$entry/callees/step/kernels/kernels.so" bs=1 seek=300 conv=notrunc 2>/dev/null
run_pto 1 cache verify && expect_out "1 corrupt"
expect_true "the corrupt host entry is gone" test ! -e "$entry"

# ---- the device set: a permutation, validation, and only for host programs ---------------------
run_pto 0 compile "$P" --devices 2,3 -o "$T/ar23"
expect_true "devices [2,3]" python3 -c "import json,sys; sys.exit(json.load(open('$T/ar23/manifest.json'))['devices']!=[2,3])"
k4=$(python3 -c "import json; print(json.load(open('$W/manifest.json'))['cache_key'])")
k23=$(python3 -c "import json; print(json.load(open('$T/ar23/manifest.json'))['cache_key'])")
expect_true "the device set is in the host program's key" test "$k4" != "$k23"
run_pto 0 compile "$P" -o "$T/ar1"
expect_true "default: one device, id 0" python3 -c "import json,sys; sys.exit(json.load(open('$T/ar1/manifest.json'))['devices']!=[0])"
run_pto 2 compile "$P" --devices 2,2 -o "$T/bad" && expect_out "device id 2 appears twice"
run_pto 2 compile "$P" --devices 0 -o "$T/bad" && expect_out "the device count must be 1 to 64"
run_pto 2 compile "$P" --devices 65 -o "$T/bad" && expect_out "the device count must be 1 to 64"
run_pto 2 compile "$P" --devices=1,-2 -o "$T/bad" && expect_out "expected N or ID,ID"
run_pto 2 compile "$P" --devices 1, -o "$T/bad" && expect_out "trailing ','"
run_pto 2 compile "$P" --devices -o "$T/bad"
run_pto 2 compile "$EX/add.ptir" --devices 2 -o "$T/bad" && expect_out "--devices applies to programs with a host entry"
run_pto 2 run "$EX/add.ptir" --devices 2 && expect_out "--devices applies to programs with a host entry"

# Collectives, barrier, tensor.reshape and tensor.select (kernel, orch and host) compile too.
run_pto 0 compile "$PTO_SOURCE_DIR/tests/corpus/good/dist_collectives.ptir" --devices 3 -o "$T/coll"
expect_true "host reshape/select are view arithmetic" grep -q 'ph_select(&st, &' "$T/coll/host/host.c"
expect_true "orch reshape" grep -q 'pto_reshape(' "$T/coll/callees/step/orchestration/step.cpp"

# ---- run: the compiled work dir runs on 4 chips ---------------------------------------------------
run_pto 0 run "$W" --dim M=128 --check && expect_out "ran host @main on sim: 4 devices (0,1,2,3)"

# ---- an edited host.c is rebuilt; a tampered host.so refused --------------------------------------
echo "/* hand edit */" >>"$W/host/host.c"
PTO_NO_REBUILD=1 run_pto 1 run "$W" && expect_out "host/host.c: edited since it was compiled"
run_pto 0 rebuild "$W" && expect_out "rebuilt 1 file"
run_pto 0 rebuild "$W" && expect_out "up to date"
printf 'x' >>"$W/host/host.so"
PTO_NO_REBUILD=1 run_pto 1 run "$W" && expect_out "host/host.so: content hash"
# An edited callee (an L2 work dir inside) is rebuilt by rebuilding the host dir.
run_pto 0 rebuild "$W"
echo "// hand edit" >>"$W/callees/step/orchestration/step.cpp"
run_pto 0 rebuild "$W" && expect_out "rebuilt 1 file"

finish
