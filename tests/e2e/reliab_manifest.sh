#!/usr/bin/env bash
# A work dir's manifest is not trusted beyond its checksums (issue #10, class 6): a kernel
# symbol resolves only to a function defined in the kernels object (never libc, never data),
# a signature edited by hand (dtype, dims, direction, names) is refused against program.ptir and
# against the fingerprint compiled into the orchestration object,
# and editing program.ptir makes the work dir stale. Nothing edited is ever run.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

run_pto 0 compile "$EX/add.ptir" -o "$T/wd"
run_pto 0 run "$T/wd" --dim M=40 --check && expect_out PASS

edit() { # PYTHON-STATEMENT on m (the manifest as JSON)
  rm -rf "$T/w2" && cp -r "$T/wd" "$T/w2"
  python3 - "$T/w2/manifest.json" "$1" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(m, open(sys.argv[1], 'w'), indent=2)
PY
}

for sym in system abort exit printf dlopen pto_kernel_abi_version pto_orch_abi_version nosuch ""; do
  edit "m['kernels'][0]['symbol'] = '$sym'"
  OUT=$("$PTO" run "$T/w2" --dim M=40 2>&1)
  rc=$?
  expect_true "symbol '$sym' is refused (exit $rc)" test "$rc" = 1 -o "$rc" = 2
  expect_true "symbol '$sym': nothing ran" bash -c "! grep -q 'ran @main' <<<\"\$0\"" "$OUT"
done
edit "m['kernels'][0]['symbol'] = 'system'"
run_pto 2 run "$T/w2" --dim M=40 && expect_out "no function 'system' defined in it for kernel 0 'add_block'"

sig_edit() { # PYTHON-STATEMENT EXPECTED-TEXT
  edit "$1"
  run_pto 1 run "$T/w2" --dim M=40 && expect_out "the signature does not match program.ptir" && expect_out "$2"
}
sig_edit "m['signature']['params'][0]['dtype'] = 'f64'" "'a' f64 [M,128] in the manifest, 'a' f32 [M,128] in the program"
sig_edit "m['signature']['params'][2]['dims'] = ['M', 64]" "'c' f32 [M,64] in the manifest"
sig_edit "m['signature']['params'][2]['dims'] = ['M', 256]" "'c' f32 [M,256] in the manifest"
sig_edit "m['signature']['params'][0]['dims'] = [4096, 128]" "'a' f32 [4096,128] in the manifest"
sig_edit "m['signature']['params'][2]['direction'] = 'inout'" "parameter 2"
sig_edit "m['signature']['params'][1]['name'] = 'z'" "'z' f32 [M,128] in the manifest"
sig_edit "m['signature']['params'] = m['signature']['params'][:2]" "the parameter count"

# The compiled code carries the fingerprint of its signature and kernel table: a manifest edited
# past every other check (program.ptir dropped from its file list, so there is no text to
# compare with) is still refused against it.
fp_edit() { # PYTHON-STATEMENT
  edit "del m['files']['program.ptir']; $1"
  run_pto 1 run "$T/w2" --dim M=40 && expect_out "the signature or kernel table does not match the one orchestration/main.so was compiled for" && expect_out "the manifest was edited: compile the program again"
}
fp_edit "m['signature']['params'][0]['dtype'] = 'f64'"
fp_edit "m['signature']['params'][0]['dims'] = ['M', 64]"
fp_edit "m['signature']['params'][2]['dims'] = [40, 128]"
fp_edit "m['signature']['params'][1]['name'] = 'z'"
fp_edit "m['signature']['params'][2]['direction'] = 'inout'"
fp_edit "m['signature']['params'] = m['signature']['params'][:2]"
fp_edit "m['kernels'][0]['name'] = 'other'"
# Unedited but for the file list, it still runs (the fingerprint is not what refused above).
edit "del m['files']['program.ptir']"
run_pto 0 run "$T/w2" --dim M=40 --check && expect_out PASS
# Two kernels' symbols swapped: both resolve in kernels.so, but each id would run the other's code.
run_pto 0 compile "$EX/chain.ptir" -o "$T/chain"
rm -rf "$T/w2" && cp -r "$T/chain" "$T/w2"
python3 - "$T/w2/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
k = m['kernels']
k[0]['symbol'], k[1]['symbol'] = k[1]['symbol'], k[0]['symbol']
json.dump(m, open(sys.argv[1], 'w'), indent=2)
PY
run_pto 1 run "$T/w2" --dim M=40 --in alpha=0.5 && expect_out "the signature or kernel table does not match"
# The generated .cpp with its fingerprint line deleted and rebuilt is hand-written code: it runs,
# checked against program.ptir alone.
rm -rf "$T/w2" && cp -r "$T/wd" "$T/w2"
sed -i '/pto_orch_fingerprint/d' "$T/w2/orchestration/main.cpp"
run_pto 0 rebuild "$T/w2"
run_pto 0 run "$T/w2" --dim M=40 --check && expect_out PASS

# A host (L3) program's host code carries its own fingerprint (signature and callee list).
run_pto 0 compile "$EX/allreduce_ring.ptir" --devices 2 -o "$T/host"
run_pto 0 run "$T/host" --dim M=64 --in alpha=0.5 --in rounds=2 --check && expect_out PASS
for e in "m['signature']['params'][0]['dims'] = ['M', 32]" "m['signature']['params'][0]['dtype'] = 'f16'" \
  "m['signature']['params'][1]['name'] = 'z'"; do
  rm -rf "$T/w2" && cp -r "$T/host" "$T/w2"
  python3 - "$T/w2/manifest.json" "$e" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(m, open(sys.argv[1], 'w'), indent=2)
PY
  run_pto 1 run "$T/w2" --dim M=64 --in alpha=0.5 --in rounds=2 && expect_out "the signature or callee list does not match the one host/host.so was compiled for"
done

# program.ptir edited: the binaries were built from the old text.
rm -rf "$T/w2" && cp -r "$T/wd" "$T/w2"
sed -i 's/\[32, 128\]/[16, 128]/' "$T/w2/program.ptir"
run_pto 1 run "$T/w2" --dim M=40 --check && expect_out "program.ptir: edited since it was compiled" && expect_out "every binary of the work dir is stale"
echo "# a comment" >>"$T/wd/program.ptir"
run_pto 1 run "$T/wd" --dim M=40 && expect_out "program.ptir: edited since it was compiled"

finish
