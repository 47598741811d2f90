#!/usr/bin/env bash
# --entry naming a kernel (docs/language.md "Functions and parameters"): the kernel runs as one
# task of an orch made for it, through compile, run (--check against the interpreter, --out,
# -D, --dim), bench, the cache and a work dir; what cannot run that way is refused saying why.
# What users read names the entry as they did (@scale), never the orch made for it
# (@scale_entry): run and bench reports, -D/--in/--out messages, launch errors, the manifest's
# signature.kernel_entry, 'pto cache ls' and 'pto cache show'.
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
run_pto 2 run "$K" --entry scale --dim R=9 -D m=3 && expect_out "-D m: @scale has no parameter named 'm'"
run_pto 2 run "$K" --entry scale --dim R=9 --arg q=4x64 -D n=1 &&
  expect_out "--arg q: @scale has no parameter named 'q'"
run_pto 2 run "$K" --entry scale --dim R=9 -D n=3 --in q=ones &&
  expect_out "--in q: @scale has no parameter named 'q'"
run_pto 2 run "$K" --entry scale --dim R=9 -D n=3 --out x="$T/x.npy" &&
  expect_out "--out x: @scale has no out or inout tensor parameter named 'x'"
# @scale_entry is taken by the user's kernel: the orch made for @scale is @scale_entry0, and
# the run is still reported as @scale's.
run_pto 0 run "$K" --entry scale --dim R=9 -D n=3 --check &&
  expect_out "ran @scale on sim" && expect_out "1 task," && expect_out "y: [9,64] f32" &&
  expect_out "PASS"
run_pto 0 run "$K" --entry @scale --dim R=16 -D n=runtime --in n=-2 --check && expect_out "PASS"
run_pto 2 run "$K" --entry scale --dim R=16 -D n=runtime && expect_out "n"
# A kernel default is the entry's default; -D overrides it. inout tensors are written back.
run_pto 0 run "$K" --entry acc --in y=ones --check --out y="$T/acc2.npy" && expect_out "PASS"
run_pto 0 run "$K" --entry acc --in y=ones -D k=runtime --in k=2 --out y="$T/acc2rt.npy"
expect_true "the default k=2 and a runtime k=2 write the same y" cmp "$T/acc2.npy" "$T/acc2rt.npy"
run_pto 0 run "$K" --entry acc --in y=ones -D k=3 --out y="$T/acc3.npy" --check && expect_out "PASS"
expect_true "-D k=3 changes y" bash -c "! cmp -s '$T/acc2.npy' '$T/acc3.npy'"
run_pto 0 run "$K" --entry scale_entry --check && expect_out "ran @scale_entry on sim"

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
  expect_out "launch of 'k': $T/dz.ptir:2:1: call @k: kernel 'k' (id 0, task 0) failed with code 1 (integer division by zero): $T/dz.ptir:4:3: %q ="

# ---- the same kernel through the example's orch and as the entry: the same bits ------------
# Unfed inputs are random with the parameter's position as seed: a and b are 0 and 1 in both.
run_pto 0 run "$EX/add.ptir" --dim M=32 --out c="$T/c_orch.npy"
run_pto 0 run "$EX/add.ptir" --entry add_block --dim R=32 --check --out c="$T/c_kernel.npy" &&
  expect_out "ran @add_block on sim" && expect_out "PASS"
expect_true "--entry add_block writes what @main writes" cmp "$T/c_orch.npy" "$T/c_kernel.npy"
run_pto 0 bench "$EX/add.ptir" --entry add_block --dim R=32 --rounds 3 --warmup 1 &&
  expect_out "bench @add_block on sim" && expect_out "device wall"

# ---- a work dir: the orch is an ordinary entry (manifest, sources, rebuild, run) ------------
run_pto 0 compile "$EX/add.ptir" --entry add_block -o "$T/w"
expect_true "the orchestration is add_block_entry.cpp" test -f "$T/w/orchestration/add_block_entry.cpp"
expect_true "the manifest names the orch" grep -q '"entry": "add_block_entry"' "$T/w/manifest.json"
expect_true "and the kernel the user named" grep -q '"kernel_entry": "add_block"' "$T/w/manifest.json"
expect_true "the orch calls the kernel at its header's line" \
  grep -q "// add.ptir:8 call @add_block" "$T/w/orchestration/add_block_entry.cpp"
sed -i 's|call @add_block$|call @add_block (edited)|' "$T/w/orchestration/add_block_entry.cpp"
run_pto 0 rebuild "$T/w" && expect_out "rebuilt"
run_pto 0 run "$T/w" --dim R=5 --check && expect_out "ran @add_block on sim" && expect_out "PASS"
# The kernel's name is part of the compiled fingerprint: a manifest edited to name another is
# refused.
cp -r "$T/w" "$T/wedit"
sed -i 's/"kernel_entry": "add_block"/"kernel_entry": "main"/' "$T/wedit/manifest.json"
run_pto 1 run "$T/wedit" --dim R=5 && expect_out "the manifest was edited"

# ---- the cache tells entries of one program apart -------------------------------------------
export PTO_CACHE_DIR="$T/cache"
run_pto 0 compile "$K" --entry acc -o "$T/wa"
run_pto 0 compile "$K" --entry scale_entry -o "$T/wb"
run_pto 0 compile "$K" --entry scale -D n=1 -o "$T/wc"
run_pto 0 cache ls && expect_out "kon@acc " && expect_out "kon@scale_entry " &&
  expect_out "kon@scale "
expect_true "three entries, three cache entries" test "$(find "$T/cache" -name manifest.json | wc -l)" = 3
run_pto 0 compile "$K" --entry acc -o "$T/wa2"
expect_true "the same entry again hits" test "$(find "$T/cache" -name manifest.json | wc -l)" = 3
run_pto 0 cache show "$(sed -n 's/.*"cache_key": "\([0-9a-f]*\)".*/\1/p' "$T/wa/manifest.json")" &&
  expect_out "(entry @acc, platform sim"
# An orch written by hand as the one made for @acc (same name, parameters and body) is an orch
# entry of its own: it never shares the kernel entry's cache entry (kernel_entry is part of the
# program's structural hash), so each is listed, and reported, by its own name.
cp "$K" "$T/twin.ptir"
cat >>"$T/twin.ptir" <<'PTIR'

orch @acc_entry(inout %y: tensor[16,64] f32, %x: tensor[16,64] f32, %k: f32 = 2)
    -> (tensor[16,64] f32) {
  call @acc(%y, %x, %k)
  return %y
}
PTIR
run_pto 0 compile "$T/twin.ptir" --entry acc_entry -o "$T/wt"
expect_true "the hand-written twin is a cache entry of its own" \
  test "$(find "$T/cache" -name manifest.json | wc -l)" = 4
expect_true "whose manifest names no kernel" bash -c "! grep -q kernel_entry '$T/wt/manifest.json'"
run_pto 0 cache ls && expect_out "kon@acc_entry " && expect_out "kon@acc "
run_pto 0 run "$T/twin.ptir" --entry acc_entry && expect_out "ran @acc_entry on sim"
run_pto 0 run "$K" --entry acc && expect_out "ran @acc on sim"

# ---- refused: a kernel that needs a host's comm windows; --devices ----------------------------
run_pto 2 run "$EX/allreduce_ring.ptir" --entry allreduce &&
  expect_out "allreduce_ring.ptir:16:49: entry @allreduce is a kernel with a dtensor parameter %buf" &&
  expect_out "the entry must be a host whose orch calls @allreduce"
run_pto 2 run "$EX/add.ptir" --entry add_block --devices 2 --dim R=4 &&
  expect_out "--devices applies to programs with a host entry; entry @add_block is a kernel"
run_pto 2 run "$EX/add.ptir" --entry nope && expect_out "the program has no function named @nope"

finish
