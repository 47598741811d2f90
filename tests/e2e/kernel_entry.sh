#!/usr/bin/env bash
# --entry naming a kernel (docs/language.md "Functions and parameters"): the kernel runs as one
# task of an orch made for it, through compile, run (--check against the interpreter, --out,
# -D, --dim), bench, the cache and a work dir; what cannot run that way is refused saying why.
source "$(dirname "$0")/lib/common.bash"

cat >"$T/k.ptir" <<'PTIR'
program kon
dynamic R

kernel @scale(%x: tensor[R,64] f32, out %y: tensor[R,64] f32, %n: i32) -> (tensor[R,64] f32) {
  %t = tile.load(%x, [0, 0], [16, 64], valid=[R, 64])
  %f = f32(%n)
  %s = tile.muls(%t, %f)
  tile.store(%s, [0, 0], %y)
  return %y
}

kernel @acc(inout %y: tensor[16,64] f32, %x: tensor[16,64] f32, %k: f32 = 2)
    -> (tensor[16,64] f32) {
  %a = tile.load(%y, [0, 0], [16, 64])
  %b = tile.load(%x, [0, 0], [16, 64])
  %c = tile.muls(%b, %k)
  %d = tile.add(%a, %c)
  tile.store(%d, [0, 0], %y)
  return %y
}

kernel @scale_entry(%x: tensor[16,64] f32, out %y: tensor[16,64] f32) -> (tensor[16,64] f32) {
  %t = tile.load(%x, [0, 0], [16, 64])
  tile.store(%t, [0, 0], %y)
  return %y
}
PTIR
K="$T/k.ptir"

# ---- no default entry: the message suggests --entry and lists the candidates ----------------
run_pto 2 run "$K" &&
  expect_out "k.ptir: the program has no host or orch function to run: name the entry with --entry NAME to run a kernel as one task (kernels: @scale, @acc, @scale_entry)"
run_pto 2 compile "$K" -o "$T/none" && expect_out "name the entry with --entry NAME"

# ---- scalars follow the entry rules; positions are the kernel's -----------------------------
run_pto 2 run "$K" --entry scale --dim R=9 &&
  expect_out "k.ptir:4:63: scalar parameter 'n' has no value: pass -D n=VALUE or -D n=runtime"
run_pto 2 run "$K" --entry scale --dim R=9 -D m=3 && expect_out "-D m: @scale_entry0 has no parameter named 'm'"
# @scale_entry is taken by the user's kernel: the orch made for @scale is @scale_entry0.
run_pto 0 run "$K" --entry scale --dim R=9 -D n=3 --check &&
  expect_out "ran @scale_entry0 on sim" && expect_out "1 task," && expect_out "y: [9,64] f32" &&
  expect_out "PASS"
run_pto 0 run "$K" --entry @scale --dim R=16 -D n=runtime --in n=-2 --check && expect_out "PASS"
run_pto 2 run "$K" --entry scale --dim R=16 -D n=runtime && expect_out "n"
# A kernel default is the entry's default; -D overrides it. inout tensors are written back.
run_pto 0 run "$K" --entry acc --in y=ones --check --out y="$T/acc2.npy" && expect_out "PASS"
run_pto 0 run "$K" --entry acc --in y=ones -D k=runtime --in k=2 --out y="$T/acc2rt.npy"
expect_true "the default k=2 and a runtime k=2 write the same y" cmp "$T/acc2.npy" "$T/acc2rt.npy"
run_pto 0 run "$K" --entry acc --in y=ones -D k=3 --out y="$T/acc3.npy" --check && expect_out "PASS"
expect_true "-D k=3 changes y" bash -c "! cmp -s '$T/acc2.npy' '$T/acc3.npy'"
run_pto 0 run "$K" --entry scale_entry --check && expect_out "ran @scale_entry_entry on sim"

# A launch error names the user's source: the kernel's header for the call, then its op.
cat >"$T/dz.ptir" <<'PTIR'
program dz
kernel @k(%x: tensor[16,64] f32, out %y: tensor[16,64] f32, %n: i32) -> (tensor[16,64] f32) {
  %t = tile.load(%x, [0, 0], [16, 64])
  %q = 10 / %n
  %s = tile.muls(%t, f32(%q))
  tile.store(%s, [0, 0], %y)
  return %y
}
PTIR
run_pto 1 run "$T/dz.ptir" --entry k -D n=runtime --in n=0 &&
  expect_out "launch of 'k_entry': $T/dz.ptir:2:1: call @k: kernel 'k' (id 0, task 0) failed with code 1 (integer division by zero): $T/dz.ptir:4:3: %q ="

# ---- the same kernel through the example's orch and as the entry: the same bits ------------
# Unfed inputs are random with the parameter's position as seed: a and b are 0 and 1 in both.
run_pto 0 run "$EX/add.ptir" --dim M=32 --out c="$T/c_orch.npy"
run_pto 0 run "$EX/add.ptir" --entry add_block --dim R=32 --check --out c="$T/c_kernel.npy" &&
  expect_out "ran @add_block_entry on sim" && expect_out "PASS"
expect_true "--entry add_block writes what @main writes" cmp "$T/c_orch.npy" "$T/c_kernel.npy"
run_pto 0 bench "$EX/add.ptir" --entry add_block --dim R=32 --rounds 3 --warmup 1 &&
  expect_out "device wall"

# ---- a work dir: the orch is an ordinary entry (manifest, sources, rebuild, run) ------------
run_pto 0 compile "$EX/add.ptir" --entry add_block -o "$T/w"
expect_true "the orchestration is add_block_entry.cpp" test -f "$T/w/orchestration/add_block_entry.cpp"
expect_true "the manifest names the orch" grep -q '"add_block_entry"' "$T/w/manifest.json"
expect_true "the orch calls the kernel at its header's line" \
  grep -q "// add.ptir:8 call @add_block" "$T/w/orchestration/add_block_entry.cpp"
sed -i 's|call @add_block$|call @add_block (edited)|' "$T/w/orchestration/add_block_entry.cpp"
run_pto 0 rebuild "$T/w" && expect_out "rebuilt"
run_pto 0 run "$T/w" --dim R=5 --check && expect_out "PASS"

# ---- the cache tells entries of one program apart -------------------------------------------
export PTO_CACHE_DIR="$T/cache"
run_pto 0 compile "$K" --entry acc -o "$T/wa"
run_pto 0 compile "$K" --entry scale_entry -o "$T/wb"
run_pto 0 compile "$K" --entry scale -D n=1 -o "$T/wc"
run_pto 0 cache ls && expect_out "kon@acc_entry" && expect_out "kon@scale_entry_entry" &&
  expect_out "kon@scale_entry0"
expect_true "three entries, three cache entries" test "$(find "$T/cache" -name manifest.json | wc -l)" = 3
run_pto 0 compile "$K" --entry acc -o "$T/wa2"
expect_true "the same entry again hits" test "$(find "$T/cache" -name manifest.json | wc -l)" = 3

# ---- refused: a kernel that needs a host's comm windows; --devices ----------------------------
run_pto 2 run "$EX/allreduce_ring.ptir" --entry allreduce &&
  expect_out "allreduce_ring.ptir:16:49: entry @allreduce is a kernel with a dtensor parameter %buf" &&
  expect_out "the entry must be a host whose orch calls @allreduce"
run_pto 2 run "$EX/add.ptir" --entry add_block --devices 2 --dim R=4 &&
  expect_out "--devices applies to programs with a host entry; entry @add_block is a kernel"
run_pto 2 run "$EX/add.ptir" --entry nope && expect_out "the program has no function named @nope"

finish
