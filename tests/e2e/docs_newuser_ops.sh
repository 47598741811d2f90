#!/usr/bin/env bash
# Programs a new user writes from docs/language.md and docs/cli.md alone, without pto's sources:
# the second-set ops (masks and comparisons, select, sin/cos and rem, argmax/argmin, sort,
# gather/scatter of rows, the layout ops), reductions, a softmax over a partly valid last block,
# a K-looped matmul, an orch of several kernels with a tensor.create and an incore scope, a work
# dir compiled with -D and run at two dynamic sizes with a runtime scalar. Each runs with
# `pto run --check` (the interpreter) and its outputs are also compared with numpy, an oracle
# written from the docs' words rather than from pto's interpreter.
source "$(dirname "$0")/lib/common.bash"
PY=${PTO_PYTHON:-/usr/bin/python3}
if ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "SKIP: $PY has no numpy (the oracle of these programs)"
  exit 77
fi
cd "$T" || exit 1

# py: runs the Python on stdin in $T (numpy as np, L = np.load); it prints OK when it passes.
py() {
  run_status 0 "$PY" -c "import numpy as np
L = np.load
rng = np.random.default_rng(21)
$(cat)
print('OK')" && expect_out OK
}
# run_check ARGS...: pto run ARGS --check, which must PASS.
run_check() { run_pto 0 run "$@" --check && expect_out PASS; }

# Masks: tile.cmp / tile.cmps give bool tiles, tile.and combines them, tile.sel / tile.sels pick;
# a bool output is stored to a bool tensor (language.md, "Ops (second set)").
cat >masks.ptir <<'EOF'
program masks
kernel @k(%x: tensor[16, 32] f32, %z: tensor[16, 32] f32, out %y: tensor[16, 32] f32,
          out %m: tensor[16, 32] bool) -> (tensor[16, 32] f32, tensor[16, 32] bool) {
  %a = tile.load(%x, [0, 0], [16, 32])
  %b = tile.load(%z, [0, 0], [16, 32])
  %gt = tile.cmp(%a, %b, cmp=gt)
  %pos = tile.cmps(%a, 0.0, cmp=ge)
  %both = tile.and(%gt, %pos)
  %hi = tile.sel(%gt, %a, %b)
  %o = tile.sels(%pos, %hi, -1.0)
  %y1 = tile.store(%o, [0, 0], %y)
  %m1 = tile.store(%both, [0, 0], %m)
  return %y1, %m1
}
EOF
py <<'P'
np.save("x.npy", rng.standard_normal((16, 32)).astype(np.float32))
np.save("z.npy", rng.standard_normal((16, 32)).astype(np.float32))
P
run_check masks.ptir --entry k --in x=x.npy --in z=z.npy --out y=y.npy --out m=m.npy
py <<'P'
x, z = L("x.npy"), L("z.npy")
assert (L("y.npy") == np.where(x >= 0, np.where(x > z, x, z), np.float32(-1))).all()
assert L("m.npy").dtype == np.bool_ and (L("m.npy") == ((x > z) & (x >= 0))).all()
P

# sin, cos (within 2 ulp of the correctly rounded value) and the floored remainder tile.rems
# (the divisor's sign, numpy's np.mod).
cat >trig.ptir <<'EOF'
program trig
kernel @k(%x: tensor[16, 64] f32, out %s: tensor[16, 64] f32, out %c: tensor[16, 64] f32,
          out %r: tensor[16, 64] f32) -> (tensor[16, 64] f32, tensor[16, 64] f32, tensor[16, 64] f32) {
  %a = tile.load(%x, [0, 0], [16, 64])
  %sn = tile.sin(%a)
  %cs = tile.cos(%a)
  %rm = tile.rems(%a, 1.5)
  %s1 = tile.store(%sn, [0, 0], %s)
  %c1 = tile.store(%cs, [0, 0], %c)
  %r1 = tile.store(%rm, [0, 0], %r)
  return %s1, %c1, %r1
}
EOF
py <<'P'
np.save("x.npy", (rng.standard_normal((16, 64)) * 4).astype(np.float32))
P
run_check trig.ptir --entry k --in x=x.npy --out s=s.npy --out c=c.npy --out r=r.npy
py <<'P'
x = L("x.npy")
for got, want in (("s", np.sin(x)), ("c", np.cos(x))):
    err = np.abs(L(got + ".npy") - want) / np.spacing(np.abs(want).astype(np.float32) + np.float32(1e-30))
    assert err.max() <= 2.5, (got, err.max())
assert np.allclose(L("r.npy"), np.mod(x, np.float32(1.5)), rtol=0, atol=2e-6)
P

# Arg-extremes (the first one, numpy's rule) and a row product.
cat >argx.ptir <<'EOF'
program argx
kernel @k(%x: tensor[16, 32] f32, out %amax: tensor[16, 1] i32, out %amin: tensor[1, 32] i32,
          out %p: tensor[16, 1] f32) -> (tensor[16, 1] i32, tensor[1, 32] i32, tensor[16, 1] f32) {
  %a = tile.load(%x, [0, 0], [16, 32])
  %am = tile.row_argmax(%a)
  %cm = tile.col_argmin(%a)
  %pr = tile.row_prod(%a)
  %o1 = tile.store(%am, [0, 0], %amax)
  %o2 = tile.store(%cm, [0, 0], %amin)
  %o3 = tile.store(%pr, [0, 0], %p)
  return %o1, %o2, %o3
}
EOF
py <<'P'
np.save("x.npy", rng.standard_normal((16, 32)).astype(np.float32))
P
run_check argx.ptir --entry k --in x=x.npy --out amax=amax.npy --out amin=amin.npy --out p=p.npy
py <<'P'
x = L("x.npy")
assert (L("amax.npy")[:, 0] == x.argmax(1)).all() and (L("amin.npy")[0] == x.argmin(0)).all()
assert np.allclose(L("p.npy")[:, 0], np.prod(x, 1), rtol=1e-5)
P

# A stable ascending sort of every row: tile.sort_idx gives columns, tile.gather takes row-major
# positions, so each row's start i*C is added first (the recipe under tile.sort_idx).
cat >sortrows.ptir <<'EOF'
program sortrows
kernel @k(%x: tensor[8, 32] f32, out %v: tensor[8, 32] f32, out %ix: tensor[8, 32] i32)
    -> (tensor[8, 32] f32, tensor[8, 32] i32) {
  %a = tile.load(%x, [0, 0], [8, 32])
  %order = tile.sort_idx(%a, order=asc)
  %rows = tile.ci(0, [1, 8], dtype=i32)
  %col = tile.transpose(%rows)
  %start = tile.muls(%col, 32)
  %pos = tile.row_expand_add(%order, %start)
  %vals = tile.gather(%a, %pos)
  %v1 = tile.store(%vals, [0, 0], %v)
  %i1 = tile.store(%order, [0, 0], %ix)
  return %v1, %i1
}
EOF
py <<'P'
x = rng.standard_normal((8, 32)).astype(np.float32)
x[3, 5:9] = 0.25                                  # ties: a stable sort keeps their order
np.save("x.npy", x)
P
run_check sortrows.ptir --entry k --in x=x.npy --out v=v.npy --out ix=ix.npy
py <<'P'
x = L("x.npy")
assert (L("v.npy") == np.sort(x, 1)).all() and (L("ix.npy") == np.argsort(x, 1, kind="stable")).all()
P

# An embedding lookup (tile.gather_rows) and a scatter of rows back into an inout tensor whose
# other rows keep their values; the i32 indices come from a .npy file (cli.md: index inputs
# need one).
cat >embed.ptir <<'EOF'
program embed
kernel @k(%tab: tensor[32, 64] f32, %ids: tensor[16, 1] i32, out %e: tensor[16, 64] f32,
          inout %acc: tensor[32, 64] f32) -> (tensor[16, 64] f32, tensor[32, 64] f32) {
  %ix = tile.load(%ids, [0, 0], [16, 1])
  %rows = tile.gather_rows(%tab, %ix, [0], [16, 64])
  %e1 = tile.store(%rows, [0, 0], %e)
  %twice = tile.muls(%rows, 2.0)
  %a1 = tile.scatter_rows(%twice, %ix, [0], %acc)
  return %e1, %a1
}
EOF
py <<'P'
np.save("tab.npy", rng.standard_normal((32, 64)).astype(np.float32))
np.save("ids.npy", rng.permutation(32)[:16].astype(np.int32).reshape(16, 1))
np.save("acc.npy", np.ones((32, 64), np.float32))
P
run_check embed.ptir --entry k --in tab=tab.npy --in ids=ids.npy --in acc=acc.npy --out e=e.npy \
  --out acc=acc_out.npy
py <<'P'
tab, ids = L("tab.npy"), L("ids.npy")[:, 0]
acc = np.ones((32, 64), np.float32); acc[ids] = 2 * tab[ids]
assert (L("e.npy") == tab[ids]).all() and (L("acc_out.npy") == acc).all()
P

# Layout: transpose, reshape (row-major), concat, extract a block and assemble it elsewhere.
cat >layout.ptir <<'EOF'
program layout
kernel @k(%x: tensor[16, 32] f32, out %t: tensor[32, 16] f32, out %r: tensor[8, 64] f32,
          out %c: tensor[16, 64] f32, out %q: tensor[16, 32] f32)
    -> (tensor[32, 16] f32, tensor[8, 64] f32, tensor[16, 64] f32, tensor[16, 32] f32) {
  %a = tile.load(%x, [0, 0], [16, 32])
  %tt = tile.transpose(%a)
  %rs = tile.reshape(%a, [8, 64])
  %cc = tile.concat(%a, %a)
  %blk = tile.extract(%a, [0, 0], [8, 8])
  %neg = tile.neg(%blk)
  %asm = tile.assemble(%a, %neg, [8, 24])
  %t1 = tile.store(%tt, [0, 0], %t)
  %r1 = tile.store(%rs, [0, 0], %r)
  %c1 = tile.store(%cc, [0, 0], %c)
  %q1 = tile.store(%asm, [0, 0], %q)
  return %t1, %r1, %c1, %q1
}
EOF
py <<'P'
np.save("x.npy", rng.standard_normal((16, 32)).astype(np.float32))
P
run_check layout.ptir --entry k --in x=x.npy --out t=t.npy --out r=r.npy --out c=c.npy --out q=q.npy
py <<'P'
x = L("x.npy")
q = x.copy(); q[8:16, 24:32] = -x[0:8, 0:8]
assert (L("t.npy") == x.T).all() and (L("r.npy") == x.reshape(8, 64)).all()
assert (L("c.npy") == np.concatenate([x, x], 1)).all() and (L("q.npy") == q).all()
P

# A causal softmax: tile.tri with a runtime diagonal, tile.cmps to a mask, tile.sels of -inf
# ("With tile.cmps and tile.sel: a causal mask"), then the row softmax of tile.row_expand_expdif.
cat >causal.ptir <<'EOF'
program causal
kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32, %off: i32) -> (tensor[16, 16] f32) {
  %a = tile.load(%x, [0, 0], [16, 16])
  %tri = tile.tri(%off, [16, 16], dtype=f32)
  %keep = tile.cmps(%tri, 0.0, cmp=ne)
  %s = tile.sels(%keep, %a, -inf)
  %mx = tile.row_max(%s)
  %e = tile.row_expand_expdif(%s, %mx)
  %sum = tile.row_sum(%e)
  %p = tile.row_expand_div(%e, %sum)
  %y1 = tile.store(%p, [0, 0], %y)
  return %y1
}
EOF
py <<'P'
np.save("x.npy", rng.standard_normal((16, 16)).astype(np.float32))
P
for off in 0 -2; do
  run_check causal.ptir --entry k -D off=runtime --in x=x.npy --in off=$off --out y=y.npy
  OFF=$off py <<'P'
import os
x = L("x.npy")
s = np.where(np.tri(16, 16, int(os.environ["OFF"])) > 0, x, -np.inf)
e = np.exp(s - s.max(1, keepdims=True))
y = L("y.npy")
assert np.allclose(y[2:], (e / e.sum(1, keepdims=True))[2:], rtol=1e-5, atol=1e-7)
P
done

# Control flow on device data: the orch reads two values (tensor.read), picks a column block by
# an if whose result is a runtime tile.extract offset, and feeds the other value to tile.ci as a
# runtime start; an offset past the tile is a launch error naming it, its dim and the offsets
# that fit ("Ops (second set)").
cat >route.ptir <<'EOF'
program route
kernel @pick(%x: tensor[16, 64] f32, out %y: tensor[16, 8] f32, %c: index) -> (tensor[16, 8] f32) {
  %a = tile.load(%x, [0, 0], [16, 64])
  %q = tile.extract(%a, [0, %c], [16, 8])
  %y1 = tile.store(%q, [0, 0], %y)
  return %y1
}

kernel @ramp(out %y: tensor[1, 16] i32, %s: i32) -> (tensor[1, 16] i32) {
  %r = tile.ci(%s, [1, 16], dtype=i32, descending=true)
  %y1 = tile.store(%r, [0, 0], %y)
  return %y1
}

orch @main(%x: tensor[16, 64] f32, %sel: tensor[1, 2] i32, out %y: tensor[16, 8] f32,
           out %r: tensor[1, 16] i32) -> (tensor[16, 8] f32, tensor[1, 16] i32) {
  %v = tensor.read(%sel, [0, 0])
  %w = tensor.read(%sel, [0, 1])
  %c = if %v > 3 {
         yield index(%v) * 8
       } else {
         yield 0
       }
  call @pick(%x, %y, %c)
  call @ramp(%r, %w)
  return %y, %r
}
EOF
py <<'P'
np.save("x.npy", np.arange(16 * 64, dtype=np.float32).reshape(16, 64))
np.save("sel.npy", np.array([[5, 100]], np.int32))
np.save("sel9.npy", np.array([[9, 1]], np.int32))
P
run_check route.ptir --in x=x.npy --in sel=sel.npy --out y=y.npy --out r=r.npy
py <<'P'
assert (L("y.npy") == L("x.npy")[:, 40:48]).all() and (L("r.npy") == np.arange(100, 84, -1)).all()
P
run_pto 1 run route.ptir --in x=x.npy --in sel=sel9.npy
expect_out "route.ptir:4:8: tile.extract: offset 72 of dim 1 is outside 0..56"

# Reductions over a dynamic M: a row softmax in blocks of 16 rows whose last block is partly
# valid (valid=[R, 64] with R the slice's clamped extent, pad=min so that row_max ignores the
# padding), scaled by a runtime scalar.
cat >softmax.ptir <<'EOF'
program softmax_dyn
dynamic M, R

kernel @sm(%x: tensor[R, 64] f32, out %y: tensor[R, 64] f32, %scale: f32) -> (tensor[R, 64] f32) {
  %t = tile.load(%x, [0, 0], [16, 64], valid=[R, 64], pad=min)
  %s = tile.muls(%t, %scale)
  %mx = tile.row_max(%s)
  %e = tile.row_expand_expdif(%s, %mx)
  %sum = tile.row_sum(%e)
  %p = tile.row_expand_div(%e, %sum)
  %y1 = tile.store(%p, [0, 0], %y)
  return %y1
}

orch @main(%x: tensor[M, 64] f32, out %y: tensor[M, 64] f32, %scale: f32 = runtime)
    -> (tensor[M, 64] f32) {
  %nblk = (M + 15) / 16
  for %i in range(0, %nblk) {
    %r0 = %i * 16
    %xs = tensor.slice(%x, [%r0, 0], [16, 64])
    %ys = tensor.slice(%y, [%r0, 0], [16, 64])
    call @sm(%xs, %ys, %scale)
  }
  return %y
}
EOF
py <<'P'
np.save("x.npy", rng.standard_normal((37, 64)).astype(np.float32))
P
run_check softmax.ptir --in x=x.npy --in scale=0.5 --out y=y.npy
expect_out "3 tasks"
py <<'P'
x = L("x.npy") * np.float32(0.5)
e = np.exp(x - x.max(1, keepdims=True))
assert np.allclose(L("y.npy"), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
P

# A matmul over K in two steps of tile.matmul_acc (mat -> left/right by tile.move), the acc
# tile moved to vec and a bias row added with tile.col_expand_add; M = 40 is not a multiple of
# the 16-row blocks.
cat >mm.ptir <<'EOF'
program mm
dynamic M, R

kernel @mm_blk(%a: tensor[R, 64] f32, %b: tensor[64, 32] f32, %bias: tensor[1, 32] f32,
               out %c: tensor[R, 32] f32) -> (tensor[R, 32] f32) {
  %zero = tile.full([16, 32], f32, 0.0, space=acc)
  %acc = for %k in range(0, 64, 32) iter(%s = %zero) {
    %am = tile.load(%a, [0, %k], [16, 32], space=mat, valid=[R, 32])
    %bm = tile.load(%b, [%k, 0], [32, 32], space=mat)
    %l = tile.move(%am, space=left)
    %r = tile.move(%bm, space=right)
    %s2 = tile.matmul_acc(%s, %l, %r)
    yield %s2
  }
  %bv = tile.load(%bias, [0, 0], [1, 32])
  %v = tile.move(%acc, space=vec)
  %o = tile.col_expand_add(%v, %bv)
  %c1 = tile.store(%o, [0, 0], %c)
  return %c1
}

orch @main(%a: tensor[M, 64] f32, %b: tensor[64, 32] f32, %bias: tensor[1, 32] f32,
           out %c: tensor[M, 32] f32) -> (tensor[M, 32] f32) {
  for %i in range(0, (M + 15) / 16) {
    %r0 = %i * 16
    %as = tensor.slice(%a, [%r0, 0], [16, 64])
    %cs = tensor.slice(%c, [%r0, 0], [16, 32])
    call @mm_blk(%as, %b, %bias, %cs)
  }
  return %c
}
EOF
py <<'P'
np.save("a.npy", rng.standard_normal((40, 64)).astype(np.float32))
np.save("b.npy", rng.standard_normal((64, 32)).astype(np.float32))
np.save("bias.npy", rng.standard_normal((1, 32)).astype(np.float32))
P
run_check mm.ptir --in a=a.npy --in b=b.npy --in bias=bias.npy --out c=c.npy
py <<'P'
ref = L("a.npy").astype(np.float64) @ L("b.npy") + L("bias.npy")
assert np.allclose(L("c.npy"), ref, rtol=1e-4, atol=1e-4)
P

# 16-bit dtypes: an f16 matmul whose f32 acc tile is stored to an f16 tensor (rounded), and a
# column sum of a bf16 tile (computed in f32, rounded once) broadcast by tile.col_expand; bf16
# travels as uint16 bits in .npy files (cli.md).
cat >mmh.ptir <<'EOF'
program mmh
kernel @k(%a: tensor[16, 32] f16, %b: tensor[32, 16] bf16, %bb: tensor[32, 16] f16, out %c: tensor[16, 16] f16,
          out %d: tensor[16, 16] bf16) -> (tensor[16, 16] f16, tensor[16, 16] bf16) {
  %am = tile.load(%a, [0, 0], [16, 32], space=mat)
  %bm = tile.load(%bb, [0, 0], [32, 16], space=mat)
  %l = tile.move(%am, space=left)
  %r = tile.move(%bm, space=right)
  %p = tile.matmul(%l, %r)
  %c1 = tile.store(%p, [0, 0], %c)
  %bt = tile.load(%b, [0, 0], [32, 16])
  %s = tile.col_sum(%bt)
  %e = tile.col_expand(%s, [16, 16])
  %d1 = tile.store(%e, [0, 0], %d)
  return %c1, %d1
}
EOF
py <<'P'
np.save("a.npy", rng.standard_normal((16, 32)).astype(np.float16))
np.save("bb.npy", rng.standard_normal((32, 16)).astype(np.float16))
b = rng.standard_normal((32, 16)).astype(np.float32)
np.save("b.npy", (b.view(np.uint32) >> 16).astype(np.uint16))     # bf16 bits (truncated)
P
run_check mmh.ptir --entry k --in a=a.npy --in b=b.npy --in bb=bb.npy --out c=c.npy --out d=d.npy
py <<'P'
c = L("c.npy"); assert c.dtype == np.float16
ref = L("a.npy").astype(np.float32) @ L("bb.npy").astype(np.float32)
assert (np.abs(c.astype(np.float32) - ref) <= np.spacing(np.abs(ref).astype(np.float16)).astype(np.float32)).all()
bf = lambda u: (u.astype(np.uint32) << 16).view(np.float32)
s = bf(L("b.npy")).sum(0, dtype=np.float64)
d = bf(L("d.npy"))
assert (d == d[0]).all() and (np.abs(d[0] - s) <= 2.0 ** (np.floor(np.log2(np.abs(s))) - 7)).all()
P

# An orch of several kernels: scale into a tensor.create'd buffer, add and relu, then an incore
# scope's row sum plus a runtime scalar. Compiled once into a work dir with -D alpha=2 (bias
# stays a runtime argument), then run at two sizes (the dynamic M is not in the cache key).
cp "$PTO_SOURCE_DIR/tests/e2e/data/newuser_pipe.ptir" pipe.ptir
run_pto 0 compile pipe.ptir -o wd -D alpha=2
expect_true "the work dir has the incore scope's kernel" test -f wd/kernels/rowsum.ll
for f in manifest.json program.ptir orchestration/main.cpp orchestration/main.so kernels/scale.ll \
  kernels/scale.o kernels/pto_abi.o kernels/kernels.so compiled.xxh128 positions.json; do
  expect_true "the work dir has $f (cli.md, pto compile)" test -f "wd/$f"
done
for m in 16 45; do
  M=$m py <<'P'
import os
m = int(os.environ["M"])
np.save("x.npy", rng.standard_normal((m, 64)).astype(np.float32))
np.save("b.npy", rng.standard_normal((m, 64)).astype(np.float32))
P
  run_check wd --in x=x.npy --in b=b.npy --in bias=0.25 --out y=y.npy --out rs=rs.npy
  py <<'P'
y = np.maximum(L("x.npy") * 2 + L("b.npy"), 0)
assert np.allclose(L("y.npy"), y, rtol=1e-6) and np.allclose(L("rs.npy")[:, 0], y.sum(1) + 0.25, rtol=1e-5)
P
done
# The specialised scalar keeps its value; the runtime one must be fed.
run_pto 2 run wd --dim M=16 --in bias=1 --in alpha=3
expect_out "its value was fixed at compile time to 2"
run_pto 2 run wd --dim M=16
expect_out "runtime scalar parameter 'bias' (f32) has no value: pass --in bias=VALUE"

# Shapes from samples and loops: entry tensors declared without dims (`tensor f32`, shaped by
# --arg), tensor.dim, a parallel loop, a scalar carried through a loop with a typed iter, and a
# loop bound cast from an i32 parameter (language.md: the bounds are index values).
cat >misc.ptir <<'EOF'
program misc
dynamic R

kernel @acc(%x: tensor[R, 32] f32, out %y: tensor[R, 32] f32, %n: i32) -> (tensor[R, 32] f32) {
  %t = tile.load(%x, [0, 0], [8, 32], valid=[R, 32])
  # a scalar carried through a loop: s = 0 + 1 + ... + (n-1), as f32
  %s = for %i in range(0, index(%n)) iter(%a: f32 = 0.0) {
    %b = %a + f32(%i)
    yield %b
  }
  %u = tile.adds(%t, %s)
  %y1 = tile.store(%u, [0, 0], %y)
  return %y1
}

orch @main(%x: tensor f32, out %y: tensor f32, %n: i32 = runtime) -> (tensor f32) {
  %rows = tensor.dim(%x, 0)
  %nb = (%rows + 7) / 8
  for %i in parallel(0, %nb) {
    %r0 = %i * 8
    %last = %i == %nb - 1 && mod(%rows, 8) != 0
    %xs = tensor.slice(%x, [%r0, 0], [8, 32])
    %ys = tensor.slice(%y, [%r0, 0], [8, 32])
    call @acc(%xs, %ys, %n)
  }
  return %y
}
EOF
py <<'P'
np.save("x.npy", rng.standard_normal((20, 32)).astype(np.float32))
P
run_check misc.ptir --arg x=20x32 --arg y=20x32 --in x=x.npy --in n=5 --out y=y.npy
expect_out "3 tasks"
py <<'P'
assert (L("y.npy") == L("x.npy") + np.float32(10)).all()
P
sed 's/range(0, index(%n))/range(0, %n)/' misc.ptir >misc_i32.ptir
run_pto 2 check misc_i32.ptir
expect_out "for bound: expected index, got %n of type i32 (convert with a cast, e.g. index(x))"

# A launch error names the op's line from the work dir's positions.json (cli.md, pto compile);
# without that file the run fails the same way, naming no line.
cat >divz.ptir <<'EOF'
program divz
kernel @k(%x: tensor[16, 16] i32, out %y: tensor[16, 16] i32, %d: i32) -> (tensor[16, 16] i32) {
  %a = tile.load(%x, [0, 0], [16, 16])
  %q = tile.divs(%a, %d)
  %y1 = tile.store(%q, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[16, 16] i32, out %y: tensor[16, 16] i32, %d: i32 = runtime)
    -> (tensor[16, 16] i32) {
  call @k(%x, %y, %d)
  return %y
}
EOF
run_pto 0 compile divz.ptir -o dz
run_pto 1 run dz --in d=0
expect_out "(integer division by zero): divz.ptir:4:8: tile.divs"
rm dz/positions.json
run_pto 1 run dz --in d=0
expect_out "failed with code 1 (integer division by zero)"
expect_true "no line without positions.json" test -z "$(grep "divz.ptir:4" <<<"$OUT")"
finish
