# PyPTO's own example programs (hw-native-sys/pypto, examples/: beginner, intermediate, advanced,
# models), ported to PTIR the way docs/pypto-guide.md and docs/pypto-language.md tell a PyPTO
# user to: a `@pl.jit` function whose body is one `with pl.at(...)` block is an `orch` with an
# `incore` scope; `@pl.jit.incore` functions are `kernel`s and the `@pl.jit` function that calls
# them an `orch` that `call`s them; each `pl.*` op is the PTIR op the page's tables give. Every
# case runs `pto run --check` (the compiled program must give the interpreter's bits) and is
# held to a numpy model of what the PyPTO example asserts (its torch expected values), with the
# example's tolerance where it has one. Run by tests/e2e/pypto_ports.sh (the fast set) and
# tests/e2e/pypto_ports_slow.sh (PTO_PORTS_SET=slow: the larger models).
import os

F = np.float32
rng = np.random.default_rng(23)
FAST, SLOW = [], []


def randn(*shape):
    return rng.standard_normal(shape).astype(F)


def near(want, rtol=1e-5, atol=1e-5):
    return ("near", np.asarray(want), rtol, atol)


def port(where, name, prog, ins, want, entry=None, slow=False, defs=()):
    """defs: ("NAME=VALUE", ...) bound when compiling (-D), PyPTO's specialised scalars."""
    args = ["--entry", entry] if entry else []
    for d in defs:
        args += ["-D", d]
    (SLOW if slow else FAST).append(Case(name, prog, ins=ins, want=want, args=args))


def sigmoid(x):
    return (F(1) / (F(1) + np.exp(-x))).astype(F)


def mm(a, b):
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(F)


# ---- beginner/02_elementwise.py: tile_add/mul on 128x128 and 64x64 tiles, chunked_add over a
# 512x128 tensor (a `for` inside the pl.at block: one kernel, the load offset moves).
def ew(name, n, op):
    return """orch @%s(%%a: tensor[%d, %d] f32, %%b: tensor[%d, %d] f32,
        out %%c: tensor[%d, %d] f32) -> (tensor[%d, %d] f32) {
  incore {
    %%ta = tile.load(%%a, [0, 0], [%d, %d])
    %%tb = tile.load(%%b, [0, 0], [%d, %d])
    %%tc = tile.%s(%%ta, %%tb)
    tile.store(%%tc, [0, 0], %%c)
  }
  return %%c
}
""" % ((name,) + (n,) * 12 + (op,))


ELEMENTWISE = "program elementwise\n" + ew("tile_add_128", 128, "add") + \
    ew("tile_mul_128", 128, "mul") + ew("tile_add_64", 64, "add") + ew("tile_mul_64", 64, "mul") + \
    """
orch @chunked_add(%a: tensor[512, 128] f32, %b: tensor[512, 128] f32,
                  out %c: tensor[512, 128] f32) -> (tensor[512, 128] f32) {
  incore {
    for %i in range(0, 4) {
      %r0 = %i * 128
      %ta = tile.load(%a, [%r0, 0], [128, 128])
      %tb = tile.load(%b, [%r0, 0], [128, 128])
      %tc = tile.add(%ta, %tb)
      tile.store(%tc, [%r0, 0], %c)
    }
  }
  return %c
}
"""
for n in (128, 64):
    a, b = np.full((n, n), 2.0, F), np.full((n, n), 3.0, F)
    port("beginner/02", "tile_add_%d" % n, ELEMENTWISE, {"a": a, "b": b}, {"c": a + b},
         entry="tile_add_%d" % n)
    port("beginner/02", "tile_mul_%d" % n, ELEMENTWISE, {"a": a, "b": b}, {"c": a * b},
         entry="tile_mul_%d" % n)
a, b = randn(512, 128), randn(512, 128)
port("beginner/02", "chunked_add", ELEMENTWISE, {"a": a, "b": b}, {"c": a + b}, entry="chunked_add")

# ---- beginner/03_scalar_ops.py: pl.mul(tile, 2.0) is tile.muls.
SCALAR_OPS = """program scalar_ops
orch @fused_add_scale(%a: tensor[128, 128] f32, %b: tensor[128, 128] f32,
                      out %c: tensor[128, 128] f32) -> (tensor[128, 128] f32) {
  incore {
    %ta = tile.load(%a, [0, 0], [128, 128])
    %tb = tile.load(%b, [0, 0], [128, 128])
    %s = tile.add(%ta, %tb)
    %tc = tile.muls(%s, 2.0)
    tile.store(%tc, [0, 0], %c)
  }
  return %c
}
"""
a, b = np.full((128, 128), 2.0, F), np.full((128, 128), 3.0, F)
port("beginner/03", "fused_add_scale", SCALAR_OPS, {"a": a, "b": b}, {"c": (a + b) * F(2)})

# ---- beginner/04_activation.py: relu, silu, gelu (sigmoid approximation), swiglu, geglu, with
# PyPTO's own steps (mul by -1, exp, add 1, recip), not tile.sigmoid.
SIG = """    %%xn = tile.muls(%s, -1.0)
    %%e = tile.exp(%%xn)
    %%d = tile.adds(%%e, 1.0)
    %%sg = tile.recip(%%d)
"""
ACTIVATION = """program activation
orch @fused_add_relu(%a: tensor[128, 128] f32, %b: tensor[128, 128] f32,
                     out %c: tensor[128, 128] f32) -> (tensor[128, 128] f32) {
  incore {
    %ta = tile.load(%a, [0, 0], [128, 128])
    %tb = tile.load(%b, [0, 0], [128, 128])
    %s = tile.add(%ta, %tb)
    %tc = tile.relu(%s)
    tile.store(%tc, [0, 0], %c)
  }
  return %c
}

orch @silu(%x: tensor[32, 128] f32, out %output: tensor[32, 128] f32) -> (tensor[32, 128] f32) {
  incore {
    %tx = tile.load(%x, [0, 0], [32, 128])
""" + SIG % "%tx" + """    %r = tile.mul(%tx, %sg)
    tile.store(%r, [0, 0], %output)
  }
  return %output
}

orch @gelu(%x: tensor[32, 128] f32, out %output: tensor[32, 128] f32) -> (tensor[32, 128] f32) {
  incore {
    %tx = tile.load(%x, [0, 0], [32, 128])
    %xs = tile.muls(%tx, 1.702)
""" + SIG % "%xs" + """    %r = tile.mul(%tx, %sg)
    tile.store(%r, [0, 0], %output)
  }
  return %output
}

orch @swiglu(%gate: tensor[32, 128] f32, %up: tensor[32, 128] f32,
             out %output: tensor[32, 128] f32) -> (tensor[32, 128] f32) {
  incore {
    %tg = tile.load(%gate, [0, 0], [32, 128])
    %tu = tile.load(%up, [0, 0], [32, 128])
""" + SIG % "%tg" + """    %sw = tile.mul(%tg, %sg)
    %r = tile.mul(%sw, %tu)
    tile.store(%r, [0, 0], %output)
  }
  return %output
}

orch @geglu(%gate: tensor[32, 128] f32, %up: tensor[32, 128] f32,
            out %output: tensor[32, 128] f32) -> (tensor[32, 128] f32) {
  incore {
    %tg = tile.load(%gate, [0, 0], [32, 128])
    %tu = tile.load(%up, [0, 0], [32, 128])
    %gs = tile.muls(%tg, 1.702)
""" + SIG % "%gs" + """    %gg = tile.mul(%tg, %sg)
    %r = tile.mul(%gg, %tu)
    tile.store(%r, [0, 0], %output)
  }
  return %output
}
"""
a, b = np.full((128, 128), 2.0, F), np.full((128, 128), 3.0, F)
port("beginner/04", "fused_add_relu", ACTIVATION, {"a": a, "b": b}, {"c": np.maximum(a + b, 0)},
     entry="fused_add_relu")
x = randn(32, 128)
port("beginner/04", "silu", ACTIVATION, {"x": x}, {"output": near(x * sigmoid(x))}, entry="silu")
x = randn(32, 128)
port("beginner/04", "gelu", ACTIVATION, {"x": x}, {"output": near(x * sigmoid(F(1.702) * x))},
     entry="gelu")
g, u = randn(32, 128), randn(32, 128)
port("beginner/04", "swiglu", ACTIVATION, {"gate": g, "up": u},
     {"output": near(g * sigmoid(g) * u)}, entry="swiglu")
g, u = randn(32, 128), randn(32, 128)
port("beginner/04", "geglu", ACTIVATION, {"gate": g, "up": u},
     {"output": near(g * sigmoid(F(1.702) * g) * u)}, entry="geglu")

# ---- beginner/05_matmul.py: load into Mat, move to Left/Right, matmul, store the Acc tile.
MATMUL_KERNEL = """kernel @matmul_kernel(%a: tensor[64, 64] f32, %b: tensor[64, 64] f32,
                      out %output: tensor[64, 64] f32) -> (tensor[64, 64] f32) {
  %a1 = tile.load(%a, [0, 0], [64, 64], space=mat)
  %b1 = tile.load(%b, [0, 0], [64, 64], space=mat)
  %a0 = tile.move(%a1, space=left)
  %b0 = tile.move(%b1, space=right)
  %c0 = tile.matmul(%a0, %b0)
  %o = tile.store(%c0, [0, 0], %output)
  return %o
}
"""
MATMUL = """program matmul
orch @matmul_64(%a: tensor[64, 64] f32, %b: tensor[64, 64] f32,
                out %c: tensor[64, 64] f32) -> (tensor[64, 64] f32) {
  incore {
    %a1 = tile.load(%a, [0, 0], [64, 64], space=mat)
    %b1 = tile.load(%b, [0, 0], [64, 64], space=mat)
    %a0 = tile.move(%a1, space=left)
    %b0 = tile.move(%b1, space=right)
    %c0 = tile.matmul(%a0, %b0)
    tile.store(%c0, [0, 0], %c)
  }
  return %c
}
"""
a, b = randn(64, 64), randn(64, 64)
port("beginner/05", "matmul_64", MATMUL, {"a": a, "b": b}, {"c": near(mm(a, b), 1e-3, 1e-3)})

# ---- beginner/06_concat.py: pl.concat joins along the columns, as tile.concat.
CONCAT = """program concat
orch @tile_concat_32x32(%a: tensor[32, 16] f32, %b: tensor[32, 16] f32,
                        out %c: tensor[32, 32] f32) -> (tensor[32, 32] f32) {
  incore {
    %ta = tile.load(%a, [0, 0], [32, 16])
    %tb = tile.load(%b, [0, 0], [32, 16])
    %tc = tile.concat(%ta, %tb)
    tile.store(%tc, [0, 0], %c)
  }
  return %c
}
"""
a, b = randn(32, 16), randn(32, 16)
port("beginner/06", "tile_concat_32x32", CONCAT, {"a": a, "b": b},
     {"c": np.concatenate([a, b], axis=1)})

# ---- intermediate/01_fused_linear.py: @pl.jit.incore kernels called from an orchestrating
# @pl.jit function; pl.create_tensor is tensor.create.
FUSED_LINEAR = "program fused_linear\n" + MATMUL_KERNEL + """
kernel @add_bias_kernel(%x: tensor[64, 64] f32, %bias: tensor[64, 64] f32,
                        out %output: tensor[64, 64] f32) -> (tensor[64, 64] f32) {
  %tx = tile.load(%x, [0, 0], [64, 64])
  %tb = tile.load(%bias, [0, 0], [64, 64])
  %tc = tile.add(%tx, %tb)
  %o = tile.store(%tc, [0, 0], %output)
  return %o
}

kernel @add_bias_relu_kernel(%x: tensor[64, 64] f32, %bias: tensor[64, 64] f32,
                             out %output: tensor[64, 64] f32) -> (tensor[64, 64] f32) {
  %tx = tile.load(%x, [0, 0], [64, 64])
  %tb = tile.load(%bias, [0, 0], [64, 64])
  %s = tile.add(%tx, %tb)
  %ty = tile.relu(%s)
  %o = tile.store(%ty, [0, 0], %output)
  return %o
}

orch @fused_matmul_bias(%a: tensor[64, 64] f32, %b: tensor[64, 64] f32,
                        %bias: tensor[64, 64] f32, out %c: tensor[64, 64] f32)
    -> (tensor[64, 64] f32) {
  %mm = tensor.create([64, 64], f32)
  %mm1 = call @matmul_kernel(%a, %b, %mm)
  %c1 = call @add_bias_kernel(%mm1, %bias, %c)
  return %c1
}

orch @fused_linear_relu(%x: tensor[64, 64] f32, %w: tensor[64, 64] f32,
                        %bias: tensor[64, 64] f32, out %y: tensor[64, 64] f32)
    -> (tensor[64, 64] f32) {
  %mm = tensor.create([64, 64], f32)
  %mm1 = call @matmul_kernel(%x, %w, %mm)
  %y1 = call @add_bias_relu_kernel(%mm1, %bias, %y)
  return %y1
}
"""
a, b, bias = np.full((64, 64), 2.0, F), np.full((64, 64), 3.0, F), randn(64, 64)
port("intermediate/01", "fused_matmul_bias", FUSED_LINEAR, {"a": a, "b": b, "bias": bias},
     {"c": near(mm(a, b) + bias, 1e-3, 1e-3)}, entry="fused_matmul_bias")
port("intermediate/01", "fused_linear_relu", FUSED_LINEAR, {"x": a, "w": b, "bias": bias},
     {"y": near(np.maximum(mm(a, b) + bias, 0), 1e-3, 1e-3)}, entry="fused_linear_relu")

# ---- intermediate/02_softmax.py: the scratch tiles of pl.row_max/pl.row_sum are dropped.
SOFTMAX = """program softmax
orch @tile_softmax(%a: tensor[64, 64] f32, out %output: tensor[64, 64] f32)
    -> (tensor[64, 64] f32) {
  incore {
    %ta = tile.load(%a, [0, 0], [64, 64])
    %mx = tile.row_max(%ta)
    %sh = tile.row_expand_sub(%ta, %mx)
    %e = tile.exp(%sh)
    %sm = tile.row_sum(%e)
    %r = tile.row_expand_div(%e, %sm)
    tile.store(%r, [0, 0], %output)
  }
  return %output
}
"""
a = randn(64, 64)
e = np.exp(a - a.max(axis=1, keepdims=True))
port("intermediate/02", "tile_softmax", SOFTMAX, {"a": a},
     {"output": near(e / e.sum(axis=1, keepdims=True))})

# ---- intermediate/03_normalization.py: RMSNorm and LayerNorm, written as PyPTO writes them:
# the [32, 1] row statistic reshaped to [1, 32] for the scalar ops and back (pl.reshape is
# tile.reshape, pl.mul/pl.add with a float are tile.muls/tile.adds); pl.col_expand(target, v)
# is tile.col_expand(v, [R, C]) (the vector first, the shape as a list).
NORM = """program normalization
orch @rms_norm(%x: tensor[32, 64] f32, %gamma: tensor[1, 64] f32,
               out %output: tensor[32, 64] f32) -> (tensor[32, 64] f32) {
  incore {
    %tx = tile.load(%x, [0, 0], [32, 64])
    %tg = tile.load(%gamma, [0, 0], [1, 64])
    %sq = tile.mul(%tx, %tx)
    %ms = tile.row_sum(%sq)
    %mst = tile.reshape(%ms, [1, 32])
    %mst1 = tile.muls(%mst, 0.015625)
    %ms1 = tile.reshape(%mst1, [32, 1])
    %mst2 = tile.reshape(%ms1, [1, 32])
    %rt = tile.adds(%mst2, 1e-5)
    %rt1 = tile.sqrt(%rt)
    %rms = tile.reshape(%rt1, [32, 1])
    %nm = tile.row_expand_div(%tx, %rms)
    %r = tile.col_expand_mul(%nm, %tg)
    tile.store(%r, [0, 0], %output)
  }
  return %output
}

orch @layer_norm(%x: tensor[32, 64] f32, %gamma: tensor[1, 64] f32, %beta: tensor[1, 64] f32,
                 out %output: tensor[32, 64] f32) -> (tensor[32, 64] f32) {
  incore {
    %tx = tile.load(%x, [0, 0], [32, 64])
    %tg = tile.load(%gamma, [0, 0], [1, 64])
    %tb = tile.load(%beta, [0, 0], [1, 64])
    %sm = tile.row_sum(%tx)
    %smt = tile.reshape(%sm, [1, 32])
    %mt = tile.muls(%smt, 0.015625)
    %mean = tile.reshape(%mt, [32, 1])
    %c = tile.row_expand_sub(%tx, %mean)
    %sq = tile.mul(%c, %c)
    %vs = tile.row_sum(%sq)
    %vst = tile.reshape(%vs, [1, 32])
    %vt = tile.muls(%vst, 0.015625)
    %var = tile.reshape(%vt, [32, 1])
    %vt2 = tile.reshape(%var, [1, 32])
    %ve = tile.adds(%vt2, 1e-5)
    %st = tile.sqrt(%ve)
    %std = tile.reshape(%st, [32, 1])
    %nm = tile.row_expand_div(%c, %std)
    %sc = tile.col_expand_mul(%nm, %tg)
    %bf = tile.col_expand(%tb, [32, 64])
    %r = tile.add(%sc, %bf)
    tile.store(%r, [0, 0], %output)
  }
  return %output
}
"""
x, g = randn(32, 64), randn(1, 64)
rms = np.sqrt((x * x).sum(axis=1, keepdims=True) / F(64) + F(1e-5))
port("intermediate/03", "rms_norm", NORM, {"x": x, "gamma": g}, {"output": near(x / rms * g)},
     entry="rms_norm")
x, g, bt = randn(32, 64), randn(1, 64), randn(1, 64)
c = x - x.sum(axis=1, keepdims=True) / F(64)
std = np.sqrt((c * c).sum(axis=1, keepdims=True) / F(64) + F(1e-5))
port("intermediate/03", "layer_norm", NORM, {"x": x, "gamma": g, "beta": bt},
     {"output": near(c / std * g + bt)}, entry="layer_norm")

# ---- intermediate/04_matmul_acc.py: K split in two; matmul then matmul_acc (no init_cond=).
MATMUL_ACC = """program matmul_acc
orch @matmul_acc_64(%a: tensor[64, 64] f32, %b: tensor[64, 64] f32,
                    out %c: tensor[64, 64] f32) -> (tensor[64, 64] f32) {
  incore {
    %a01 = tile.load(%a, [0, 0], [64, 32], space=mat)
    %b01 = tile.load(%b, [0, 0], [32, 64], space=mat)
    %a00 = tile.move(%a01, space=left)
    %b00 = tile.move(%b01, space=right)
    %acc = tile.matmul(%a00, %b00)
    %a11 = tile.load(%a, [0, 32], [64, 32], space=mat)
    %b11 = tile.load(%b, [32, 0], [32, 64], space=mat)
    %a10 = tile.move(%a11, space=left)
    %b10 = tile.move(%b11, space=right)
    %acc1 = tile.matmul_acc(%acc, %a10, %b10)
    tile.store(%acc1, [0, 0], %c)
  }
  return %c
}
"""
a, b = randn(64, 64), randn(64, 64)
port("intermediate/04", "matmul_acc_64", MATMUL_ACC, {"a": a, "b": b},
     {"c": near(mm(a, b), 1e-3, 1e-3)})

# ---- intermediate/05_assemble.py: pl.tile.assemble into a tile; pl.slice of a tile is
# tile.extract (offsets first); loops carry the target tile (iter/yield). The example itself
# only lowers its programs; the numpy model is what each body computes.
ASSEMBLE = """program assemble
orch @tile_assemble_acc_mat(%x: tensor[32, 32] f32, %a: tensor[32, 16] f32,
                            %b: tensor[16, 16] f32, out %y: tensor[32, 32] f32)
    -> (tensor[32, 32] f32) {
  incore {
    %tx = tile.load(%x, [0, 0], [32, 32], space=mat)
    %ta1 = tile.load(%a, [0, 0], [32, 16], space=mat)
    %tb1 = tile.load(%b, [0, 0], [16, 16], space=mat)
    %ta = tile.move(%ta1, space=left)
    %tb = tile.move(%tb1, space=right)
    %src = tile.matmul(%ta, %tb)
    %res = tile.assemble(%tx, %src, [0, 16])
    %rv = tile.move(%res, space=vec)
    tile.store(%rv, [0, 0], %y)
  }
  return %y
}

orch @tile_assemble_vec(%x: tensor[32, 32] f32, %src: tensor[32, 16] f32,
                        out %y: tensor[32, 32] f32) -> (tensor[32, 32] f32) {
  incore {
    %tx = tile.load(%x, [0, 0], [32, 32])
    %ts = tile.load(%src, [0, 0], [32, 16])
    %r = tile.assemble(%tx, %ts, [0, 0])
    tile.store(%r, [0, 0], %y)
  }
  return %y
}

orch @tile_assemble_row_by_row(%x: tensor[32, 32] f32, %src: tensor[32, 16] f32,
                               out %y: tensor[32, 32] f32) -> (tensor[32, 32] f32) {
  incore {
    %tx = tile.load(%x, [0, 0], [32, 32])
    %ts = tile.load(%src, [0, 0], [32, 16])
    %r = for %i in range(0, 32) iter(%t = %tx) {
      %row = tile.extract(%ts, [%i, 0], [1, 16])
      %t1 = tile.assemble(%t, %row, [%i, 0])
      yield %t1
    }
    tile.store(%r, [0, 0], %y)
  }
  return %y
}

orch @tile_assemble_double_loop(%x: tensor[32, 32] f32, %src: tensor[32, 16] f32,
                                out %y: tensor[32, 32] f32) -> (tensor[32, 32] f32) {
  incore {
    %tx = tile.load(%x, [0, 0], [32, 32])
    %ts = tile.load(%src, [0, 0], [32, 16])
    %r = for %b in range(0, 4) iter(%t = %tx) {
      %r1 = for %i in range(0, 8) iter(%u = %t) {
        %row = %b * 8 + %i
        %tr = tile.extract(%ts, [%row, 0], [1, 16])
        %u1 = tile.assemble(%u, %tr, [%row, 0])
        yield %u1
      }
      yield %r1
    }
    tile.store(%r, [0, 0], %y)
  }
  return %y
}

orch @tile_assemble_loop_col_broadcast(%x: tensor[32, 32] f32, %src: tensor[32, 8] f32,
                                       out %y: tensor[32, 32] f32) -> (tensor[32, 32] f32) {
  incore {
    %tx = tile.load(%x, [0, 0], [32, 32])
    %ts = tile.load(%src, [0, 0], [32, 8])
    %r = for %c in range(0, 4) iter(%t = %tx) {
      %c8 = %c * 8
      %t1 = tile.assemble(%t, %ts, [0, %c8])
      yield %t1
    }
    tile.store(%r, [0, 0], %y)
  }
  return %y
}

orch @tile_assemble_double_loop_broadcast(%x: tensor[32, 32] f32, %src: tensor[16, 16] f32,
                                          out %y: tensor[32, 32] f32) -> (tensor[32, 32] f32) {
  incore {
    %tx = tile.load(%x, [0, 0], [32, 32])
    %ts = tile.load(%src, [0, 0], [16, 16])
    %r = for %b in range(0, 2) iter(%t = %tx) {
      %r1 = for %c in range(0, 2) iter(%u = %t) {
        %b16 = %b * 16
        %c16 = %c * 16
        %u1 = tile.assemble(%u, %ts, [%b16, %c16])
        yield %u1
      }
      yield %r1
    }
    tile.store(%r, [0, 0], %y)
  }
  return %y
}
"""
x, a, b = randn(32, 32), randn(32, 16), randn(16, 16)
want = x.copy()
want[:, 16:] = mm(a, b)
port("intermediate/05", "tile_assemble_acc_mat", ASSEMBLE, {"x": x, "a": a, "b": b},
     {"y": near(want, 1e-3, 1e-3)}, entry="tile_assemble_acc_mat")
x, s = randn(32, 32), randn(32, 16)
want = x.copy()
want[:, :16] = s
for n in ("vec", "row_by_row", "double_loop"):
    port("intermediate/05", "tile_assemble_" + n, ASSEMBLE, {"x": x, "src": s}, {"y": want},
         entry="tile_assemble_" + n)
s8 = randn(32, 8)
port("intermediate/05", "tile_assemble_loop_col_broadcast", ASSEMBLE, {"x": x, "src": s8},
     {"y": np.tile(s8, (1, 4))}, entry="tile_assemble_loop_col_broadcast")
s16 = randn(16, 16)
port("intermediate/05", "tile_assemble_double_loop_broadcast", ASSEMBLE, {"x": x, "src": s16},
     {"y": np.tile(s16, (2, 2))}, entry="tile_assemble_double_loop_broadcast")

# ---- intermediate/06_dyn_valid_shape.py: a load whose valid columns are a scalar, fillpad
# with min, scale. PyPTO's `vlen: pl.INDEX` and `scale: pl.FP32` are specialisation constants
# (each value compiles its own kernel): a PTIR scalar with no default, bound with -D (Python:
# pto.compile(.., vlen=32)). The if_else and loop forms pl.read a config tensor inside the
# pl.at block; PTIR reads it in the orch (tensor.read is an orch op) and the incore scope takes
# the scalars; `if c: vlen = a else: vlen = b` is an if that yields. The example only lowers
# its programs; the model is what each computes.
DYN_VALID = """program dyn_valid_shape
orch @dyn_valid_shape(%data: tensor[64, 64] f32, %scale: f32, %vlen: index,
                      out %output: tensor[64, 64] f32) -> (tensor[64, 64] f32) {
  incore {
    %s = tile.load(%data, [0, 0], [64, 64], valid=[64, %vlen])
    %sp = tile.fillpad(%s, pad=min)
    %sc = tile.muls(%sp, %scale)
    tile.store(%sc, [0, 0], %output)
  }
  return %output
}

orch @dyn_valid_shape_if_else(%data: tensor[64, 64] f32, %cfg: tensor[3] i64,
                              out %output: tensor[64, 64] f32) -> (tensor[64, 64] f32) {
  %is_last = tensor.read(%cfg, [0])
  %last_valid_len = tensor.read(%cfg, [1])
  %full_len = tensor.read(%cfg, [2])
  %vlen = if %is_last == 1 {
    yield index(%last_valid_len)
  } else {
    yield index(%full_len)
  }
  incore {
    %s = tile.load(%data, [0, 0], [64, 64], valid=[64, %vlen])
    %sp = tile.fillpad(%s, pad=min)
    tile.store(%sp, [0, 0], %output)
  }
  return %output
}

orch @dyn_valid_shape_loop(%sij_buf: tensor[128, 64] f32, %cfg: tensor[3] i64,
                           out %output: tensor[128, 64] f32) -> (tensor[128, 64] f32) {
  %c0 = tensor.read(%cfg, [0])
  %c1 = tensor.read(%cfg, [1])
  %c2 = tensor.read(%cfg, [2])
  %n_blocks = index(%c0)
  %last_valid_len = index(%c1)
  %block_size = index(%c2)
  incore {
    for %i in range(0, %n_blocks) {
      %vlen = if %i == %n_blocks - 1 {
        yield %last_valid_len
      } else {
        yield %block_size
      }
      %r0 = %i * 64
      %s = tile.load(%sij_buf, [%r0, 0], [64, 64], valid=[64, %vlen])
      %sp = tile.fillpad(%s, pad=min)
      tile.store(%sp, [%r0, 0], %output)
    }
  }
  return %output
}
"""
def padded(d, vlen):  # pad=min for floats is -inf (docs/language.md, Semantics)
    o = d.copy()
    o[:, vlen:] = -np.inf
    return o


d = randn(64, 64)
port("intermediate/06", "dyn_valid_shape_full", DYN_VALID, {"data": d},
     {"output": d * F(0.5)}, entry="dyn_valid_shape", defs=("vlen=64", "scale=0.5"))
port("intermediate/06", "dyn_valid_shape_partial", DYN_VALID, {"data": d},
     {"output": padded(d, 32) * F(0.5)}, entry="dyn_valid_shape", defs=("vlen=32", "scale=0.5"))
port("intermediate/06", "dyn_valid_shape_if_else", DYN_VALID,
     {"data": d, "cfg": np.array([1, 48, 64], np.int64)}, {"output": padded(d, 48)},
     entry="dyn_valid_shape_if_else")
sb = randn(128, 64)
want = sb.copy()
want[64:, 48:] = -np.inf
port("intermediate/06", "dyn_valid_shape_loop", DYN_VALID,
     {"sij_buf": sb, "cfg": np.array([2, 48, 64], np.int64)}, {"output": want},
     entry="dyn_valid_shape_loop")

# ---- intermediate/07_task_graph.py: two pl.at scopes, the second reading what the first
# wrote; the edge is inferred from the directions in both PyPTO and pto. declared_edge's
# `deps=[first]` has no PTIR form (pto derives every edge), so both modes are the same program.
# `scratch[:] = pl.add(x, x)` on whole tensors is a load, tile.add and a store in the scope.
TASK_GRAPH = """program task_graph
orch @inferred_edge(%x: tensor[128, 128] f32, out %scratch: tensor[128, 128] f32,
                    out %out: tensor[128, 128] f32)
    -> (tensor[128, 128] f32, tensor[128, 128] f32) {
  incore "stage1" {
    %tx = tile.load(%x, [0, 0], [128, 128])
    %s = tile.add(%tx, %tx)
    tile.store(%s, [0, 0], %scratch)
  }
  incore "stage2" {
    %ts = tile.load(%scratch, [0, 0], [128, 128])
    %o = tile.add(%ts, %ts)
    tile.store(%o, [0, 0], %out)
  }
  return %scratch, %out
}
"""
x = randn(128, 128)
port("intermediate/07", "inferred_edge", TASK_GRAPH, {"x": x},
     {"scratch": x + x, "out": (x + x) + (x + x)})

# ---- models/02_vector_dag.py: five tasks on tensor.create'd intermediates,
# f = (a + b + 1)(a + b + 2) + (a + b); pl.add(tile, scalar) with a Scalar parameter is
# tile.adds; example_orch is the 16x16 four-task form.
def dag_kernels(n):
    return """kernel @kernel_add_%(n)d(%%a: tensor[%(n)d, %(n)d] f32, %%b: tensor[%(n)d, %(n)d] f32,
                      out %%output: tensor[%(n)d, %(n)d] f32) -> (tensor[%(n)d, %(n)d] f32) {
  %%ta = tile.load(%%a, [0, 0], [%(n)d, %(n)d])
  %%tb = tile.load(%%b, [0, 0], [%(n)d, %(n)d])
  %%r = tile.add(%%ta, %%tb)
  %%o = tile.store(%%r, [0, 0], %%output)
  return %%o
}

kernel @kernel_add_scalar_%(n)d(%%a: tensor[%(n)d, %(n)d] f32, %%scalar: f32,
                             out %%output: tensor[%(n)d, %(n)d] f32) -> (tensor[%(n)d, %(n)d] f32) {
  %%x = tile.load(%%a, [0, 0], [%(n)d, %(n)d])
  %%r = tile.adds(%%x, %%scalar)
  %%o = tile.store(%%r, [0, 0], %%output)
  return %%o
}

kernel @kernel_mul_%(n)d(%%a: tensor[%(n)d, %(n)d] f32, %%b: tensor[%(n)d, %(n)d] f32,
                      out %%output: tensor[%(n)d, %(n)d] f32) -> (tensor[%(n)d, %(n)d] f32) {
  %%ta = tile.load(%%a, [0, 0], [%(n)d, %(n)d])
  %%tb = tile.load(%%b, [0, 0], [%(n)d, %(n)d])
  %%r = tile.mul(%%ta, %%tb)
  %%o = tile.store(%%r, [0, 0], %%output)
  return %%o
}
""" % {"n": n}


VECTOR_DAG = "program vector_dag\n" + dag_kernels(128) + dag_kernels(16) + """
orch @vector_dag(%a: tensor[128, 128] f32, %b: tensor[128, 128] f32,
                 out %f: tensor[128, 128] f32) -> (tensor[128, 128] f32) {
  %c = tensor.create([128, 128], f32)
  %c1 = call @kernel_add_128(%a, %b, %c)
  %d = tensor.create([128, 128], f32)
  %d1 = call @kernel_add_scalar_128(%c1, 1.0, %d)
  %e = tensor.create([128, 128], f32)
  %e1 = call @kernel_add_scalar_128(%c1, 2.0, %e)
  %g = tensor.create([128, 128], f32)
  %g1 = call @kernel_mul_128(%d1, %e1, %g)
  %f1 = call @kernel_add_128(%g1, %c1, %f)
  return %f1
}

orch @example_orch(%a: tensor[16, 16] f32, %b: tensor[16, 16] f32,
                   out %f_result: tensor[16, 16] f32) -> (tensor[16, 16] f32) {
  %c = tensor.create([16, 16], f32)
  %c1 = call @kernel_add_16(%a, %b, %c)
  %d = tensor.create([16, 16], f32)
  %d1 = call @kernel_add_scalar_16(%c1, 1.0, %d)
  %e = tensor.create([16, 16], f32)
  %e1 = call @kernel_add_scalar_16(%c1, 2.0, %e)
  %f1 = call @kernel_mul_16(%d1, %e1, %f_result)
  return %f1
}
"""
a, b = randn(128, 128), randn(128, 128)
c = a + b
port("models/02", "vector_dag", VECTOR_DAG, {"a": a, "b": b},
     {"f": (c + F(1)) * (c + F(2)) + c}, entry="vector_dag")
a, b = randn(16, 16), randn(16, 16)
c = a + b
port("models/02", "example_orch", VECTOR_DAG, {"a": a, "b": b},
     {"f_result": (c + F(1)) * (c + F(2))}, entry="example_orch")

# ---- advanced/03_mixed_kernel.py: a @ b + bias with f16 operands, as two scopes (staged: the
# f32 product goes through a tensor.create'd buffer, since an incore scope's values do not
# escape it) and as one scope (mixed: pl.split(UP_DOWN) and LEFT_RIGHT are the compiler's
# placement hints, with no PTIR form: the same single scope).
MIXED = """program mixed_kernel
orch @staged_matmul_bias(%a: tensor[128, 256] f16, %b: tensor[256, 128] f16,
                         %bias: tensor[128, 128] f32, out %out: tensor[128, 128] f32)
    -> (tensor[128, 128] f32) {
  %acc = tensor.create([128, 128], f32)
  incore "cube_only" {
    %a1 = tile.load(%a, [0, 0], [128, 256], space=mat)
    %b1 = tile.load(%b, [0, 0], [256, 128], space=mat)
    %a0 = tile.move(%a1, space=left)
    %b0 = tile.move(%b1, space=right)
    %p = tile.matmul(%a0, %b0)
    tile.store(%p, [0, 0], %acc)
  }
  incore "vector_only" {
    %t = tile.load(%acc, [0, 0], [128, 128])
    %tb = tile.load(%bias, [0, 0], [128, 128])
    %r = tile.add(%t, %tb)
    tile.store(%r, [0, 0], %out)
  }
  return %out
}

orch @mixed_matmul_bias(%a: tensor[128, 256] f16, %b: tensor[256, 128] f16,
                        %bias: tensor[128, 128] f32, out %out: tensor[128, 128] f32)
    -> (tensor[128, 128] f32) {
  incore "mixed_up_down" {
    %a1 = tile.load(%a, [0, 0], [128, 256], space=mat)
    %b1 = tile.load(%b, [0, 0], [256, 128], space=mat)
    %a0 = tile.move(%a1, space=left)
    %b0 = tile.move(%b1, space=right)
    %p = tile.matmul(%a0, %b0)
    %pv = tile.move(%p, space=vec)
    %tb = tile.load(%bias, [0, 0], [128, 128])
    %r = tile.add(%pv, %tb)
    tile.store(%r, [0, 0], %out)
  }
  return %out
}
"""
a, b = randn(128, 256).astype(np.float16), randn(256, 128).astype(np.float16)
bias = randn(128, 128)
want = mm(a.astype(F), b.astype(F)) + bias
for n in ("staged_matmul_bias", "mixed_matmul_bias"):
    port("advanced/03", n, MIXED, {"a": a, "b": b, "bias": bias},
         {"out": near(want, 1e-2, 1e-2)}, entry=n)

# ---- advanced/01_split_k.py: K = 512 split across 4 parallel tasks. PyPTO's tasks add their
# partial products into c with pl.assemble(.., atomic=AtomicType.Add); pto has no atomic store
# (docs/pypto-language.md: "sum partial outputs"), so each task writes its own [64, 64] slice
# of a scratch tensor and one more task sums the four.
SPLIT_K = """program split_k
kernel @split_k(%a: tensor[64, 128] f32, %b: tensor[128, 64] f32,
                out %p: tensor[64, 64] f32) -> (tensor[64, 64] f32) {
  %a1 = tile.load(%a, [0, 0], [64, 128], space=mat)
  %b1 = tile.load(%b, [0, 0], [128, 64], space=mat)
  %a0 = tile.move(%a1, space=left)
  %b0 = tile.move(%b1, space=right)
  %c0 = tile.matmul(%a0, %b0)
  %o = tile.store(%c0, [0, 0], %p)
  return %o
}

kernel @sum_partials(%p: tensor[256, 64] f32, out %c: tensor[64, 64] f32)
    -> (tensor[64, 64] f32) {
  %t0 = tile.load(%p, [0, 0], [64, 64])
  %s = for %k in range(1, 4) iter(%acc = %t0) {
    %r0 = %k * 64
    %tk = tile.load(%p, [%r0, 0], [64, 64])
    %acc1 = tile.add(%acc, %tk)
    yield %acc1
  }
  %o = tile.store(%s, [0, 0], %c)
  return %o
}

orch @matmul_split_k(%a: tensor[64, 512] f32, %b: tensor[512, 64] f32,
                     out %c: tensor[64, 64] f32) -> (tensor[64, 64] f32) {
  %parts = tensor.create([256, 64], f32)
  for %ks in parallel(0, 4) {
    %k0 = %ks * 128
    %ak = tensor.slice(%a, [0, %k0], [64, 128])
    %bk = tensor.slice(%b, [%k0, 0], [128, 64])
    %pk = tensor.slice(%parts, [%ks * 64, 0], [64, 64])
    call @split_k(%ak, %bk, %pk)
  }
  %c1 = call @sum_partials(%parts, %c)
  return %c1
}
"""
a, b = randn(64, 512), randn(512, 64)
port("advanced/01", "matmul_split_k", SPLIT_K, {"a": a, "b": b}, {"c": near(mm(a, b), 1e-3, 1e-3)},
     entry="matmul_split_k")

# ---- models/01_ffn.py: matmul, activation, matmul as three @pl.jit.incore tasks.
FFN = "program ffn\n" + MATMUL_KERNEL + """
kernel @gelu_kernel(%x: tensor[64, 64] f32, out %output: tensor[64, 64] f32)
    -> (tensor[64, 64] f32) {
  %tx = tile.load(%x, [0, 0], [64, 64])
  %xs = tile.muls(%tx, 1.702)
""" + SIG % "%xs" + """  %r = tile.mul(%tx, %sg)
  %o = tile.store(%r, [0, 0], %output)
  return %o
}

kernel @swiglu_kernel(%gate: tensor[64, 64] f32, %up: tensor[64, 64] f32,
                      out %output: tensor[64, 64] f32) -> (tensor[64, 64] f32) {
  %tg = tile.load(%gate, [0, 0], [64, 64])
  %tu = tile.load(%up, [0, 0], [64, 64])
""" + SIG % "%tg" + """  %sw = tile.mul(%tg, %sg)
  %r = tile.mul(%sw, %tu)
  %o = tile.store(%r, [0, 0], %output)
  return %o
}

kernel @relu_kernel(%x: tensor[64, 64] f32, out %output: tensor[64, 64] f32)
    -> (tensor[64, 64] f32) {
  %tx = tile.load(%x, [0, 0], [64, 64])
  %r = tile.relu(%tx)
  %o = tile.store(%r, [0, 0], %output)
  return %o
}

orch @ffn_gelu(%h: tensor[64, 64] f32, %wg: tensor[64, 64] f32, %wd: tensor[64, 64] f32,
               out %output: tensor[64, 64] f32) -> (tensor[64, 64] f32) {
  %gate = tensor.create([64, 64], f32)
  %g1 = call @matmul_kernel(%h, %wg, %gate)
  %act = tensor.create([64, 64], f32)
  %a1 = call @gelu_kernel(%g1, %act)
  %o = call @matmul_kernel(%a1, %wd, %output)
  return %o
}

orch @ffn_swiglu(%h: tensor[64, 64] f32, %wg: tensor[64, 64] f32, %wu: tensor[64, 64] f32,
                 %wd: tensor[64, 64] f32, out %output: tensor[64, 64] f32)
    -> (tensor[64, 64] f32) {
  %gate = tensor.create([64, 64], f32)
  %g1 = call @matmul_kernel(%h, %wg, %gate)
  %up = tensor.create([64, 64], f32)
  %u1 = call @matmul_kernel(%h, %wu, %up)
  %act = tensor.create([64, 64], f32)
  %a1 = call @swiglu_kernel(%g1, %u1, %act)
  %o = call @matmul_kernel(%a1, %wd, %output)
  return %o
}

orch @ffn_relu(%h: tensor[64, 64] f32, %wg: tensor[64, 64] f32, %wd: tensor[64, 64] f32,
               out %output: tensor[64, 64] f32) -> (tensor[64, 64] f32) {
  %gate = tensor.create([64, 64], f32)
  %g1 = call @matmul_kernel(%h, %wg, %gate)
  %act = tensor.create([64, 64], f32)
  %a1 = call @relu_kernel(%g1, %act)
  %o = call @matmul_kernel(%a1, %wd, %output)
  return %o
}
"""
h, wg, wu, wd = randn(64, 64), randn(64, 64), randn(64, 64), randn(64, 64)
gate, up = mm(h, wg), mm(h, wu)
port("models/01", "ffn_gelu", FFN, {"h": h, "wg": wg, "wd": wd},
     {"output": near(mm(gate * sigmoid(F(1.702) * gate), wd), 3e-3, 3e-3)}, entry="ffn_gelu")
port("models/01", "ffn_swiglu", FFN, {"h": h, "wg": wg, "wu": wu, "wd": wd},
     {"output": near(mm(gate * sigmoid(gate) * up, wd), 3e-3, 3e-3)}, entry="ffn_swiglu")
port("models/01", "ffn_relu", FFN, {"h": h, "wg": wg, "wd": wd},
     {"output": near(mm(np.maximum(gate, 0), wd), 3e-3, 3e-3)}, entry="ffn_relu")

# ---- models/03_flash_attention.py: online softmax over 16 blocks of 64 keys, one pl.at block
# (one kernel). The example is marked SKIPPED upstream (its body fails PyPTO's IR verification:
# its else branch reads a fresh pl.create_tensor where it means the carried running max); this
# is the algorithm it writes, with the running max carried. pl.matmul(.., b_trans=True) is
# tile.transpose then tile.move to right; pl.sub/pl.div/pl.mul of a [64, 64] or [64, 128] tile by
# a [64, 1] one are the row_expand ops (no implicit broadcast); pl.maximum is tile.max. f32
# throughout (PyPTO's out_dtype=FP16 products and the FP16 cast of p are left out). Written for
# all 64 query rows in one kernel it needs 210 KiB of vec: pto counts every tile a kernel
# allocates (docs/language.md: only in-place reuse shares a buffer), where PyPTO's compiler
# reuses buffers by liveness; so the kernel takes 32 query rows and the orchestration calls it
# for each half (in parallel), which is the tiling a PyPTO user would otherwise leave to it.
FLASH = """program flash_attention
kernel @flash_block(%q: tensor[32, 128] f32, %k: tensor[1024, 128] f32,
                        %v: tensor[1024, 128] f32, out %attn: tensor[32, 128] f32)
    -> (tensor[32, 128] f32) {
  %q1 = tile.load(%q, [0, 0], [32, 128], space=mat)
  %ql = tile.move(%q1, space=left)
  %m0 = tile.full([32, 1], f32, 0.0)
  %l0 = tile.full([32, 1], f32, 0.0)
  %o0 = tile.full([32, 128], f32, 0.0)
  %mf, %lf, %of = for %i in range(0, 16) iter(%mi = %m0, %li = %l0, %oi = %o0) {
    %r0 = %i * 64
    %kj = tile.load(%k, [%r0, 0], [64, 128])
    %kt = tile.transpose(%kj)
    %kr = tile.move(%kt, space=right)
    %s = tile.matmul(%ql, %kr)
    %sv = tile.move(%s, space=vec)
    %s1 = tile.muls(%sv, 0.0883883)
    %rm = tile.row_max(%s1)
    %sub = tile.row_expand_sub(%s1, %rm)
    %p = tile.exp(%sub)
    %l = tile.row_sum(%p)
    %pl = tile.move(%p, space=left)
    %vj = tile.load(%v, [%r0, 0], [64, 128], space=mat)
    %vr = tile.move(%vj, space=right)
    %pv = tile.matmul(%pl, %vr)
    %pvv = tile.move(%pv, space=vec)
    %mo, %lo, %oo = if %i == 0 {
      yield %rm, %l, %pvv
    } else {
      %mn = tile.max(%mi, %rm)
      %t1 = tile.sub(%mi, %mn)
      %t2 = tile.exp(%t1)
      %t3 = tile.sub(%rm, %mn)
      %t4 = tile.exp(%t3)
      %t5 = tile.mul(%t4, %l)
      %t6 = tile.mul(%t2, %li)
      %ln = tile.add(%t6, %t5)
      %q3 = tile.row_expand_mul(%oi, %t2)
      %q2 = tile.row_expand_mul(%pvv, %t4)
      %on = tile.add(%q3, %q2)
      yield %mn, %ln, %on
    }
    yield %mo, %lo, %oo
  }
  %res = tile.row_expand_div(%of, %lf)
  %o = tile.store(%res, [0, 0], %attn)
  return %o
}

orch @flash_attention(%q: tensor[64, 128] f32, %k: tensor[1024, 128] f32,
                      %v: tensor[1024, 128] f32, out %attn: tensor[64, 128] f32)
    -> (tensor[64, 128] f32) {
  for %qb in parallel(0, 2) {
    %qs = tensor.slice(%q, [%qb * 32, 0], [32, 128])
    %os = tensor.slice(%attn, [%qb * 32, 0], [32, 128])
    call @flash_block(%qs, %k, %v, %os)
  }
  return %attn
}
"""
q, k, v = randn(64, 128), randn(1024, 128), randn(1024, 128)
s = (q.astype(np.float64) @ k.T.astype(np.float64)) * 0.0883883
p = np.exp(s - s.max(axis=1, keepdims=True))
port("models/03", "flash_attention", FLASH, {"q": q, "k": k, "v": v},
     {"attn": near((p / p.sum(axis=1, keepdims=True)) @ v, 1e-4, 1e-4)},
     entry="flash_attention", slow=True)

# ---- models/qwen3_jit/kernels/attention.py, rope_kv_cache_update: per batch row (pl.parallel),
# pl.read of seq_lens in the orchestration, then one pl.at block over the KV heads that rotates
# K and Q by RoPE, writes K and V rows of the bf16 caches and pads Q. Sizes shrunk (BATCH 4, 2 KV
# heads of dim 64, MAX_SEQ 16, 8 query heads per KV head padded to 16). Tensor slices read in the
# pl.at block (k_proj[b:b+1, c:c+32]) are tile.loads at those offsets; pl.reshape of a [1, 512]
# slice to [8, 64] is tile.reshape; q_block[:, 0:32] is tile.extract; pl.assemble into an Out
# tensor is tile.store; pl.cast(.., target_type=BF16) is tile.cast(.., bf16).
ROPE = """program rope
orch @rope_kv_cache_update(%q_proj: tensor[4, 1024] f32, %k_proj: tensor[4, 128] f32,
                           %v_proj: tensor[4, 128] f32, %seq_lens: tensor[4] i32,
                           %rope_cos: tensor[16, 64] f32, %rope_sin: tensor[16, 64] f32,
                           out %k_cache: tensor[128, 64] bf16, out %v_cache: tensor[128, 64] bf16,
                           out %all_q_padded: tensor[128, 64] bf16)
    -> (tensor[128, 64] bf16, tensor[128, 64] bf16, tensor[128, 64] bf16) {
  for %b in parallel(0, 4) {
    %ctx = tensor.read(%seq_lens, [%b])
    %pos = index(%ctx) - 1
    %cos = tensor.slice(%rope_cos, [%pos, 0], [1, 64])
    %sin = tensor.slice(%rope_sin, [%pos, 0], [1, 64])
    incore "rope_kv_cache" {
      %cos_lo = tile.load(%cos, [0, 0], [1, 32])
      %cos_hi = tile.load(%cos, [0, 32], [1, 32])
      %sin_lo = tile.load(%sin, [0, 0], [1, 32])
      %sin_hi = tile.load(%sin, [0, 32], [1, 32])
      for %ki in range(0, 2) {
        %kv_col = %ki * 64
        %k_lo = tile.load(%k_proj, [%b, %kv_col], [1, 32])
        %k_hi = tile.load(%k_proj, [%b, %kv_col + 32], [1, 32])
        %a1 = tile.col_expand_mul(%k_lo, %cos_lo)
        %a2 = tile.col_expand_mul(%k_hi, %sin_lo)
        %rot_lo = tile.sub(%a1, %a2)
        %a3 = tile.col_expand_mul(%k_hi, %cos_hi)
        %a4 = tile.col_expand_mul(%k_lo, %sin_hi)
        %rot_hi = tile.add(%a3, %a4)
        %cache_row = %b * 32 + %ki * 16 + %pos
        %klb = tile.cast(%rot_lo, bf16)
        %khb = tile.cast(%rot_hi, bf16)
        tile.store(%klb, [%cache_row, 0], %k_cache)
        tile.store(%khb, [%cache_row, 32], %k_cache)
        %vr = tile.load(%v_proj, [%b, %kv_col], [1, 64])
        %vb = tile.cast(%vr, bf16)
        tile.store(%vb, [%cache_row, 0], %v_cache)
        %q_base = %ki * 8
        %qr = tile.load(%q_proj, [%b, %q_base * 64], [1, 512])
        %q_block = tile.reshape(%qr, [8, 64])
        %q_lo = tile.extract(%q_block, [0, 0], [8, 32])
        %q_hi = tile.extract(%q_block, [0, 32], [8, 32])
        %b1 = tile.col_expand_mul(%q_lo, %cos_lo)
        %b2 = tile.col_expand_mul(%q_hi, %sin_lo)
        %q_rot_lo = tile.sub(%b1, %b2)
        %b3 = tile.col_expand_mul(%q_hi, %cos_hi)
        %b4 = tile.col_expand_mul(%q_lo, %sin_hi)
        %q_rot_hi = tile.add(%b3, %b4)
        %q_pad_row0 = %b * 32 + %ki * 16
        %qlb = tile.cast(%q_rot_lo, bf16)
        %qhb = tile.cast(%q_rot_hi, bf16)
        tile.store(%qlb, [%q_pad_row0, 0], %all_q_padded)
        tile.store(%qhb, [%q_pad_row0, 32], %all_q_padded)
        %z = tile.full([8, 64], f32, 0.0)
        %zb = tile.cast(%z, bf16)
        tile.store(%zb, [%q_pad_row0 + 8, 0], %all_q_padded)
      }
    }
  }
  return %k_cache, %v_cache, %all_q_padded
}
"""
qp, kp, vp = randn(4, 1024), randn(4, 128), randn(4, 128)
seq = np.array([3, 16, 1, 9], np.int32)
cos, sin = randn(16, 64), randn(16, 64)
kc, vc, qpad = (np.zeros((128, 64), F) for _ in range(3))
for bb in range(4):
    pos = seq[bb] - 1
    cl, ch, sl, sh = cos[pos, :32], cos[pos, 32:], sin[pos, :32], sin[pos, 32:]
    for ki in range(2):
        klo, khi = kp[bb, ki * 64:ki * 64 + 32], kp[bb, ki * 64 + 32:ki * 64 + 64]
        row = bb * 32 + ki * 16 + pos
        kc[row, :32] = klo * cl - khi * sl
        kc[row, 32:] = khi * ch + klo * sh
        vc[row] = vp[bb, ki * 64:ki * 64 + 64]
        qb = qp[bb, ki * 512:ki * 512 + 512].reshape(8, 64)
        r0 = bb * 32 + ki * 16
        qpad[r0:r0 + 8, :32] = qb[:, :32] * cl - qb[:, 32:] * sl
        qpad[r0:r0 + 8, 32:] = qb[:, 32:] * ch + qb[:, :32] * sh
port("models/qwen3_jit/kernels/attention", "rope_kv_cache_update", ROPE,
     {"q_proj": qp, "k_proj": kp, "v_proj": vp, "seq_lens": seq, "rope_cos": cos, "rope_sin": sin},
     {"k_cache": ("bf16", bf16(kc)), "v_cache": ("bf16", bf16(vc)),
      "all_q_padded": ("bf16", bf16(qpad))})

# ---- models/qwen3_jit/kernels/mlp.py, mlp_block: per 64-column output chunk (pl.parallel),
# three pl.at scopes: the gate and up projections, each a K loop whose first step is
# pl.matmul and the others pl.matmul_acc (an if on k0 == 0 yielding the carried accumulator),
# then SiLU(gate) * up cast to bf16 into the output. The scopes' f32 results go through
# tensor.create'd buffers (an incore scope's values do not escape it). Sizes shrunk (BATCH 16,
# HIDDEN 256, INTERMEDIATE 256, K_CHUNK 64).
def proj(name, w, out):
    return """    incore "%(n)s" {
      %%z = tile.full([16, 64], f32, 0.0, space=acc)
      %%r = for %%kb in range(0, 4) iter(%%acc = %%z) {
        %%k0 = %%kb * 64
        %%pc = tile.load(%%post_norm_tile, [0, %%k0], [16, 64], space=mat)
        %%wc = tile.load(%%%(w)s, [%%k0, %%o0], [64, 64], space=mat)
        %%pl = tile.move(%%pc, space=left)
        %%wr = tile.move(%%wc, space=right)
        %%a1 = if %%k0 == 0 {
          %%m = tile.matmul(%%pl, %%wr)
          yield %%m
        } else {
          %%m2 = tile.matmul_acc(%%acc, %%pl, %%wr)
          yield %%m2
        }
        yield %%a1
      }
      tile.store(%%r, [0, 0], %%%(o)s)
    }
""" % {"n": name, "w": w, "o": out}


MLP = """program qwen3_mlp
orch @mlp_block(%post_norm_tile: tensor[16, 256] bf16, %w_gate: tensor[256, 256] bf16,
                %w_up: tensor[256, 256] bf16, out %mlp_tile: tensor[16, 256] bf16)
    -> (tensor[16, 256] bf16) {
  for %oc in parallel(0, 4) {
    %o0 = %oc * 64
    %gate = tensor.create([16, 64], f32)
    %up = tensor.create([16, 64], f32)
""" + proj("gate_proj", "w_gate", "gate") + proj("up_proj", "w_up", "up") + """    incore "silu" {
      %g = tile.load(%gate, [0, 0], [16, 64])
      %u = tile.load(%up, [0, 0], [16, 64])
      %ng = tile.neg(%g)
      %e = tile.exp(%ng)
      %d = tile.adds(%e, 1.0)
      %sg = tile.recip(%d)
      %gs = tile.mul(%g, %sg)
      %mc = tile.mul(%gs, %u)
      %mb = tile.cast(%mc, bf16)
      tile.store(%mb, [0, %o0], %mlp_tile)
    }
  }
  return %mlp_tile
}
"""
pn, wgb, wub = bf16(randn(16, 256)), bf16(randn(256, 256) * F(0.1)), bf16(randn(256, 256) * F(0.1))
g = mm(bf16_to_f32(pn), bf16_to_f32(wgb))
u = mm(bf16_to_f32(pn), bf16_to_f32(wub))
port("models/qwen3_jit/kernels/mlp", "mlp_block", MLP,
     {"post_norm_tile": pn, "w_gate": wgb, "w_up": wub},
     {"mlp_tile": near(g * sigmoid(g) * u, 2e-2, 2e-2)})

# ---- models/08_llama_mini.py, kernel_matmul_trans_b: Q @ K^T with head_dim tiled into four
# 16-wide blocks, each K block loaded into Mat and pl.tile.transpose_view'ed for the right
# operand: tile.transpose of the mat tile (a copy), then tile.move to right; the four unrolled
# steps are matmul then matmul_acc in a loop.
TRANS_B = """program llama_matmul_trans_b
kernel @kernel_matmul_trans_b(%a: tensor[64, 64] f32, %b: tensor[64, 64] f32,
                              out %output: tensor[64, 64] f32) -> (tensor[64, 64] f32) {
  %a0 = tile.load(%a, [0, 0], [64, 16], space=mat)
  %b0n = tile.load(%b, [0, 0], [64, 16], space=mat)
  %b0 = tile.transpose(%b0n)
  %a0l = tile.move(%a0, space=left)
  %b0r = tile.move(%b0, space=right)
  %acc0 = tile.matmul(%a0l, %b0r)
  %acc = for %kt in range(1, 4) iter(%c = %acc0) {
    %k = %kt * 16
    %ak = tile.load(%a, [0, %k], [64, 16], space=mat)
    %bkn = tile.load(%b, [0, %k], [64, 16], space=mat)
    %bk = tile.transpose(%bkn)
    %akl = tile.move(%ak, space=left)
    %bkr = tile.move(%bk, space=right)
    %c1 = tile.matmul_acc(%c, %akl, %bkr)
    yield %c1
  }
  %o = tile.store(%acc, [0, 0], %output)
  return %o
}
"""
q, k = randn(64, 64), randn(64, 64)
port("models/08", "kernel_matmul_trans_b", TRANS_B, {"a": q, "b": k},
     {"output": near(mm(q, k.T), 1e-3, 1e-3)}, entry="kernel_matmul_trans_b")

# ---- models/qwen3_jit/kernels/rmsnorm.py, input_rmsnorm: two passes over 256-column chunks of
# bf16 hidden states (HIDDEN shrunk to 1024): the squared sums accumulate in a [1, BATCH] tile
# (row_sum reshaped), then x * inv_rms * gamma is cast to bf16 and written chunk by chunk.
# pl.pipeline(.., stage=) is a plain range; a loop-carried tile is iter/yield.
RMSNORM = """program qwen3_rmsnorm
orch @input_rmsnorm(%hidden_states: tensor[16, 1024] bf16, %input_rms_weight: tensor[1, 1024] f32,
                    out %normed_states: tensor[16, 1024] bf16) -> (tensor[16, 1024] bf16) {
  incore "rmsnorm" {
    %ps0 = tile.full([1, 16], f32, 0.0)
    %ps = for %kb in range(0, 4) iter(%p = %ps0) {
      %k0 = %kb * 256
      %xb = tile.load(%hidden_states, [0, %k0], [16, 256])
      %x = tile.cast(%xb, f32)
      %sq = tile.mul(%x, %x)
      %rs = tile.row_sum(%sq)
      %rr = tile.reshape(%rs, [1, 16])
      %p1 = tile.add(%p, %rr)
      yield %p1
    }
    %v1 = tile.muls(%ps, 0.0009765625)
    %v2 = tile.adds(%v1, 1e-6)
    %var = tile.reshape(%v2, [16, 1])
    %sd = tile.sqrt(%var)
    %inv = tile.recip(%sd)
    for %kb in range(0, 4) {
      %k0 = %kb * 256
      %xb = tile.load(%hidden_states, [0, %k0], [16, 256])
      %x = tile.cast(%xb, f32)
      %g = tile.load(%input_rms_weight, [0, %k0], [1, 256])
      %n1 = tile.row_expand_mul(%x, %inv)
      %n2 = tile.col_expand_mul(%n1, %g)
      %nb = tile.cast(%n2, bf16)
      tile.store(%nb, [0, %k0], %normed_states)
    }
  }
  return %normed_states
}
"""
hs = bf16(randn(16, 1024))
x = bf16_to_f32(hs)
w = randn(1, 1024)
inv = 1 / np.sqrt((x.astype(np.float64) ** 2).sum(axis=1, keepdims=True) / 1024 + 1e-6)
port("models/qwen3_jit/kernels/rmsnorm", "input_rmsnorm", RMSNORM,
     {"hidden_states": hs, "input_rms_weight": w},
     {"normed_states": near(x * inv * w, 1e-2, 1e-3)})

# ---- models/04_paged_attention.py (its unaligned variant: context lengths that are not a
# multiple of the block size): the orchestration reads its loop bounds from a config tensor and
# the block table with pl.tensor.read (tensor.read, converted with index(..)), and per KV block
# calls the four InCore kernels (QK matmul, softmax prepare, PV matmul, online update) on
# tensor.create'd buffers; the accumulators mi/li/oi are tensors carried from call to call
# (inout). Sizes shrunk: 2 requests of 16 heads, head_dim 64, blocks of 64 rows, 4 blocks per
# request. pl.load(.., valid_shape=) + pl.tile.fillpad(pad_value=min) is tile.load(.., valid=,
# pad=min) + tile.fillpad(pad=min); the [16, 1] <-> [1, 16] reshapes PyPTO needs for its DN
# layout are not needed (a PTIR tile has no layout). kernel_init_inplace (which writes nothing)
# is left out. is_first/is_last are index scalars (0/1) yielded by an if.
PAGED = """program paged_attention
kernel @kernel_qk_matmul(%qi: tensor[16, 64] bf16, %kj: tensor[64, 64] bf16,
                         out %output: tensor[16, 64] f32) -> (tensor[16, 64] f32) {
  %q1 = tile.load(%qi, [0, 0], [16, 64], space=mat)
  %k = tile.load(%kj, [0, 0], [64, 64])
  %kt = tile.transpose(%k)
  %q0 = tile.move(%q1, space=left)
  %k0 = tile.move(%kt, space=right)
  %s = tile.matmul(%q0, %k0)
  %o = tile.store(%s, [0, 0], %output)
  return %o
}

kernel @kernel_softmax_prepare(%sij: tensor[16, 64] f32, %scale: f32, %valid_len: index,
                               out %out_pij: tensor[16, 64] bf16, out %out_mi: tensor[16, 1] f32,
                               out %out_li: tensor[16, 1] f32)
    -> (tensor[16, 64] bf16, tensor[16, 1] f32, tensor[16, 1] f32) {
  %st = tile.load(%sij, [0, 0], [16, 64], valid=[16, %valid_len], pad=min)
  %sp = tile.fillpad(%st, pad=min)
  %sc = tile.muls(%sp, %scale)
  %mi = tile.row_max(%sc)
  %ce = tile.row_expand_sub(%sc, %mi)
  %ex = tile.exp(%ce)
  %pb = tile.cast(%ex, bf16)
  %pf = tile.cast(%pb, f32)
  %li = tile.row_sum(%pf)
  %o1 = tile.store(%pb, [0, 0], %out_pij)
  %o2 = tile.store(%mi, [0, 0], %out_mi)
  %o3 = tile.store(%li, [0, 0], %out_li)
  return %o1, %o2, %o3
}

kernel @kernel_pv_matmul(%pij: tensor[16, 64] bf16, %vj: tensor[64, 64] bf16,
                         out %output: tensor[16, 64] f32) -> (tensor[16, 64] f32) {
  %p1 = tile.load(%pij, [0, 0], [16, 64], space=mat)
  %v1 = tile.load(%vj, [0, 0], [64, 64], space=mat)
  %p0 = tile.move(%p1, space=left)
  %v0 = tile.move(%v1, space=right)
  %o = tile.matmul(%p0, %v0)
  %r = tile.store(%o, [0, 0], %output)
  return %r
}

kernel @kernel_online_update(%mij: tensor[16, 1] f32, %lij: tensor[16, 1] f32,
                             %oi_new: tensor[16, 64] f32, inout %mi: tensor[16, 1] f32,
                             inout %li: tensor[16, 1] f32, inout %oi: tensor[16, 64] f32,
                             out %dst: tensor[16, 64] f32, %is_first: index, %is_last: index)
    -> (tensor[16, 1] f32, tensor[16, 1] f32, tensor[16, 64] f32, tensor[16, 64] f32) {
  %mij_t = tile.load(%mij, [0, 0], [16, 1])
  %lij_t = tile.load(%lij, [0, 0], [16, 1])
  %on_t = tile.load(%oi_new, [0, 0], [16, 64])
  %mi_t = tile.load(%mi, [0, 0], [16, 1])
  %li_t = tile.load(%li, [0, 0], [16, 1])
  %oi_t = tile.load(%oi, [0, 0], [16, 64])
  if %is_first != 0 {
    tile.store(%mij_t, [0, 0], %mi)
    tile.store(%lij_t, [0, 0], %li)
    tile.store(%on_t, [0, 0], %oi)
    if %is_last != 0 {
      %d = tile.row_expand_div(%on_t, %lij_t)
      tile.store(%d, [0, 0], %dst)
    } else {
      %z = tile.full([16, 64], f32, 0.0)
      tile.store(%z, [0, 0], %dst)
    }
  } else {
    %mn = tile.max(%mi_t, %mij_t)
    %md = tile.sub(%mi_t, %mn)
    %alpha = tile.exp(%md)
    %mjd = tile.sub(%mij_t, %mn)
    %beta = tile.exp(%mjd)
    %ls = tile.mul(%alpha, %li_t)
    %ljs = tile.mul(%beta, %lij_t)
    %lu = tile.add(%ls, %ljs)
    %os = tile.row_expand_mul(%oi_t, %alpha)
    %ons = tile.row_expand_mul(%on_t, %beta)
    %ou = tile.add(%os, %ons)
    tile.store(%mn, [0, 0], %mi)
    tile.store(%lu, [0, 0], %li)
    tile.store(%ou, [0, 0], %oi)
    if %is_last != 0 {
      %d = tile.row_expand_div(%ou, %lu)
      tile.store(%d, [0, 0], %dst)
    } else {
      %z = tile.full([16, 64], f32, 0.0)
      tile.store(%z, [0, 0], %dst)
    }
  }
  return %mi, %li, %oi, %dst
}

orch @paged_attention(%query: tensor[32, 64] bf16, %key_cache: tensor[512, 64] bf16,
                      %value_cache: tensor[512, 64] bf16, %block_table: tensor[8] i32,
                      %context_lens: tensor[2] i32, out %out: tensor[32, 64] f32,
                      %config: tensor[7] i64) -> (tensor[32, 64] f32) {
  %c0 = tensor.read(%config, [0])
  %c1 = tensor.read(%config, [1])
  %c4 = tensor.read(%config, [4])
  %c5 = tensor.read(%config, [5])
  %batch = index(%c0)
  %num_heads = index(%c1)
  %block_size = index(%c4)
  %block_num = index(%c5)
  %q_loop = (%num_heads + 15) / 16
  for %b in range(0, %batch) {
    %cl = tensor.read(%context_lens, [%b])
    %cur_seq = index(%cl)
    %bn_this = (%cur_seq + %block_size - 1) / %block_size
    for %q in range(0, %q_loop) {
      %cur_offset = %b * %num_heads + %q * 16
      %oi = tensor.create([16, 64], f32)
      %li = tensor.create([16, 1], f32)
      %mi = tensor.create([16, 1], f32)
      for %bn in range(0, %bn_this) {
        %qi = tensor.slice(%query, [%cur_offset, 0], [16, 64])
        %blk = tensor.read(%block_table, [%b * %block_num + %bn])
        %valid_len = min(%block_size, %cur_seq - %bn * %block_size)
        %kv_row = index(%blk) * %block_size
        %kj = tensor.slice(%key_cache, [%kv_row, 0], [64, 64])
        %vj = tensor.slice(%value_cache, [%kv_row, 0], [64, 64])
        %sij_buf = tensor.create([16, 64], f32)
        %sij = call @kernel_qk_matmul(%qi, %kj, %sij_buf)
        %pij_buf = tensor.create([16, 64], bf16)
        %mi_buf = tensor.create([16, 1], f32)
        %li_buf = tensor.create([16, 1], f32)
        %pij, %mij, %lij = call @kernel_softmax_prepare(%sij, 1.0, %valid_len, %pij_buf,
                                                        %mi_buf, %li_buf)
        %oi_buf = tensor.create([16, 64], f32)
        %oi_tmp = call @kernel_pv_matmul(%pij, %vj, %oi_buf)
        %is_first = if %bn == 0 {
          yield 1
        } else {
          yield 0
        }
        %is_last = if %bn == %bn_this - 1 {
          yield 1
        } else {
          yield 0
        }
        %out_view = tensor.slice(%out, [%cur_offset, 0], [16, 64])
        %m2, %l2, %o2, %d2 = call @kernel_online_update(%mij, %lij, %oi_tmp, %mi, %li, %oi,
                                                        %out_view, %is_first, %is_last)
      }
    }
  }
  return %out
}
"""
qf = (randn(32, 64) * 0.5).astype(F)
kf, vf = (randn(512, 64) * 0.5).astype(F), randn(512, 64)
qb, kb, vb = bf16(qf), bf16(kf), bf16(vf)
q64, k64, v64 = (bf16_to_f32(t).astype(np.float64) for t in (qb, kb, vb))
table = rng.permutation(8).astype(np.int32)
ctx = np.array([100, 256], np.int32)
config = np.array([2, 16, 16, 64, 64, 4, 0], np.int64)
want = np.zeros((32, 64))
for bb in range(2):
    rows = np.concatenate([np.arange(table[bb * 4 + j] * 64, table[bb * 4 + j] * 64 + 64)
                           for j in range(4)])[:ctx[bb]]
    s = q64[bb * 16:bb * 16 + 16] @ k64[rows].T
    p = np.exp(s - s.max(axis=1, keepdims=True))
    want[bb * 16:bb * 16 + 16] = (p / p.sum(axis=1, keepdims=True)) @ v64[rows]
port("models/04", "paged_attention", PAGED,
     {"query": qb, "key_cache": kb, "value_cache": vb, "block_table": table, "context_lens": ctx,
      "config": config}, {"out": near(want.astype(F), 2e-2, 2e-2)}, entry="paged_attention",
     slow=True)

# ---- distributed/05_remote_load_store.py: a ring shift over the ranks, by remote_load (pull
# the next rank's slice after a barrier) and by remote_store (push into the next rank, barrier,
# read your own). pld.get_comm_ctx/rank/nranks are dist.comm_ctx/rank/nranks;
# pld.alloc_window_buffer + pld.window are dist.alloc_window + dist.window; `x[r]` of the host's
# [N, 1, 64] tensor is tensor.slice(%x, [%r, 0, 0], [1, 1, 64]) (the kernel loads it with three
# offsets); `per_rank_load(.., device=r)` is `call @.. device=%r`. The signal window:
# PyPTO's barrier takes an [N_RANKS, 1] INT32 signal buffer; pto's dist.barrier takes that column
# or a [1, S] row (S at least the rank count), and this port allocates the row [1, 8]
# (tests/programs/dist_signal_column.ptir runs the column). N is the host's device count (2 as
# the example, and 4).
def ring(mode):
    if mode == "load":
        body = """  %d1 = tile.store(%local, [0, 0, 0], %data)
  dist.barrier(%signal)
  %recv = dist.remote_load(%d1, %peer, [0, 0, 0], [1, 64])
  %y1 = tile.store(%recv, [0, 0, 0], %y)
  return %y1, %d1, %signal
"""
    else:
        body = """  dist.remote_store(%local, %data, %peer, [0, 0, 0])
  dist.barrier(%signal)
  %back = tile.load(%data, [0, 0, 0], [1, 64])
  %y1 = tile.store(%back, [0, 0, 0], %y)
  return %y1, %data, %signal
"""
    return """program ring_shift_%(m)s
dynamic N

kernel @shift_by_%(m)s(%%x: tensor[1, 1, 64] f32, out %%y: tensor[1, 1, 64] f32,
                     inout %%data: dtensor[1, 1, 64] f32, inout %%signal: dtensor[1, 8] i32)
    -> (tensor[1, 1, 64] f32, dtensor[1, 1, 64] f32, dtensor[1, 8] i32) {
  %%ctx = dist.comm_ctx(%%data)
  %%my_rank = dist.rank(%%ctx)
  %%nranks = dist.nranks(%%ctx)
  %%local = tile.load(%%x, [0, 0, 0], [1, 64])
  %%peer = mod(%%my_rank + 1, %%nranks)
%(body)s}

orch @per_rank_%(m)s(%%x: tensor[1, 1, 64] f32, out %%y: tensor[1, 1, 64] f32,
                   inout %%data: dtensor[1, 1, 64] f32, inout %%signal: dtensor[1, 8] i32)
    -> (tensor[1, 1, 64] f32, dtensor[1, 1, 64] f32, dtensor[1, 8] i32) {
  %%a, %%b, %%c = call @shift_by_%(m)s(%%x, %%y, %%data, %%signal)
  return %%a, %%b, %%c
}

host @ring_shift_%(m)s(%%x: tensor[N, 1, 64] f32, out %%y: tensor[N, 1, 64] f32) {
  %%data_buf = dist.alloc_window([1, 1, 64], f32)
  %%signal_buf = dist.alloc_window([1, 8], i32)
  %%n = dist.world_size()
  for %%r in range(0, %%n) {
    %%data = dist.window(%%data_buf)
    %%signal = dist.window(%%signal_buf)
    %%xr = tensor.slice(%%x, [%%r, 0, 0], [1, 1, 64])
    %%yr = tensor.slice(%%y, [%%r, 0, 0], [1, 1, 64])
    call @per_rank_%(m)s(%%xr, %%yr, %%data, %%signal) device=%%r
  }
}
""" % {"m": mode, "body": body}


for nr in (2, 4):
    x = randn(nr, 1, 64)
    for mode, sh in (("load", -1), ("store", 1)):
        # load: y[r] = x[(r + 1) % N]; store: y[r] = x[(r - 1) % N] (the example's expected_shift)
        SLOW.append(Case("ring_shift_%s_%d" % (mode, nr), ring(mode), ins={"x": x},
                         want={"y": np.roll(x, sh, axis=0)}, args=["--devices", str(nr)]))

# ---- distributed/04_barrier.py, barrier_handrolled: every rank notifies each other rank
# (atomic add of 1 at [my_rank, 0] of the peer's signal window), waits for every other rank's
# notification, then surfaces its signal column. pld.system.notify/wait are dist.notify/wait
# (a [N, 1] signal window is fine for them, only dist.barrier wants [1, S]); the example's
# per-element `pl.read(signal, [i, 0])` + `pl.write(y, [i, 0], val)` in the kernel has no PTIR
# form (no scalar element access in a kernel), so the column is one tile.load of the window and
# one tile.store. `pl.range(pld.world_size())` nests an op call, which PTIR (three-address)
# refuses, naming the fix: `%ws = dist.world_size()` first.
def hand_barrier(n):
    return """program barrier_hand
kernel @barrier_handrolled(out %%y: tensor[1, %(n)d, 1] i32, inout %%signal: dtensor[%(n)d, 1] i32)
    -> (tensor[1, %(n)d, 1] i32, dtensor[%(n)d, 1] i32) {
  %%ctx = dist.comm_ctx(%%signal)
  %%my_rank = dist.rank(%%ctx)
  for %%peer in range(0, %(n)d) {
    if %%peer != %%my_rank {
      dist.notify(%%signal, %%peer, [%%my_rank, 0], 1, op=atomic_add)
    }
  }
  for %%src in range(0, %(n)d) {
    if %%src != %%my_rank {
      dist.wait(%%signal, [%%src, 0], 1, cmp=ge)
    }
  }
  %%t = tile.load(%%signal, [0, 0], [%(n)d, 1])
  %%y1 = tile.store(%%t, [0, 0, 0], %%y)
  return %%y1, %%signal
}

orch @per_rank_hand(out %%y: tensor[1, %(n)d, 1] i32, inout %%signal: dtensor[%(n)d, 1] i32)
    -> (tensor[1, %(n)d, 1] i32, dtensor[%(n)d, 1] i32) {
  %%a, %%b = call @barrier_handrolled(%%y, %%signal)
  return %%a, %%b
}

host @barrier_program_hand(out %%y: tensor[%(n)d, %(n)d, 1] i32) {
  %%signal_buf = dist.alloc_window([%(n)d, 1], i32)
  %%ws = dist.world_size()
  for %%r in range(0, %%ws) {
    %%signal = dist.window(%%signal_buf)
    %%yr = tensor.slice(%%y, [%%r, 0, 0], [1, %(n)d, 1])
    call @per_rank_hand(%%yr, %%signal) device=%%r
  }
}
""" % {"n": n}


for nr in (2, 4):
    SLOW.append(Case("barrier_handrolled_%d" % nr, hand_barrier(nr), ins={},
                     want={"y": (1 - np.eye(nr, dtype=np.int32)).reshape(nr, nr, 1)},
                     args=["--devices", str(nr)]))

CASES = SLOW if os.environ.get("PTO_PORTS_SET") == "slow" else FAST
