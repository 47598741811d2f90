# Orchestration and host semantics against the language's contract (docs/language.md:
# Functions and parameters, Semantics, tensor.* and dist.* ops). Run by
# tests/e2e/contract_values.sh.
F, I = np.float32, np.int32
rng = np.random.default_rng(21)
CASES = []

INC = """kernel @inc(%x: tensor[R, 16] f32, out %y: tensor[R, 16] f32) -> (tensor[R, 16] f32) {
  %t = tile.load(%x, [0, 0], [8, 16], valid=[R, 16])
  %u = tile.adds(%t, 1.0)
  %y1 = tile.store(%u, [0, 0], %y)
  return %y1
}
"""

# tensor.slice clamps the extent at the edge: the last block of 20 rows has 4.
x = rng.standard_normal((20, 16)).astype(F)
CASES.append(Case("slice_clamped", """program s
dynamic M, R
""" + INC + """orch @main(%x: tensor[M, 16] f32, out %y: tensor[M, 16] f32) -> (tensor[M, 16] f32) {
  for %i in range(0, (M + 7) / 8) {
    %xs = tensor.slice(%x, [%i * 8, 0], [8, 16])
    %ys = tensor.slice(%y, [%i * 8, 0], [8, 16])
    call @inc(%xs, %ys)
  }
  return %y
}
""", ins={"x": x}, want={"y": x + 1}))

# tensor.dim in a kernel and an orch; tensor.read in an orch; reshape and select as views.
x3 = rng.standard_normal((3, 4, 16)).astype(F)
CASES.append(Case("dim_read_reshape_select", """program d
dynamic B
kernel @put(%x: tensor[4, 16] f32, out %y: tensor[4, 16] f32, %v: f32) -> (tensor[4, 16] f32) {
  %r = tensor.dim(%x, 0)
  %t = tile.load(%x, [0, 0], [4, 16])
  %u = tile.adds(%t, %v)
  %w = tile.adds(%u, f32(%r))
  %y1 = tile.store(%w, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[B, 4, 16] f32, out %y: tensor[B, 64] f32) -> (tensor[B, 64] f32) {
  %y3 = tensor.reshape(%y, [B, 4, 16])
  %nb = tensor.dim(%x, 0)
  for %i in range(0, %nb) {
    %xi = tensor.select(%x, %i)
    %yi = tensor.select(%y3, %i)
    %e = tensor.read(%x, [0, 1, 2])
    call @put(%xi, %yi, %e)
  }
  return %y
}
""", ins={"x": x3}, want={"y": (x3 + x3[0, 1, 2] + F(4)).reshape(3, 64)}))

# range(lo, hi, step) runs as Python's: a negative step counts down; for with iter carries.
CASES.append(Case("range_steps", """program r
kernel @put(out %y: tensor[1, 1] i32, %v: i32) -> (tensor[1, 1] i32) {
  %t = tile.full([1, 1], i32, %v)
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
orch @main(out %y: tensor[1, 4] i32, %n: i32 = runtime) -> (tensor[1, 4] i32) {
  %a = for %i in range(7, -1, -1) iter(%s: i32 = 0) {
    %s1 = %s * 10 + i32(%i)
    yield %s1
  }
  %b = for %i in range(0, 10, 3) iter(%s: i32 = 0) {
    %s1 = %s * 10 + i32(%i)
    yield %s1
  }
  %c = for %i in range(5, 5) iter(%s = %n) {
    yield 0
  }
  %d, %e = for %i in range(0, 3) iter(%p: i32 = 1, %q: i32 = 0) {
    %p1 = %p * 2
    %q1 = %q + %p
    yield %p1, %q1
  }
  %y0 = tensor.slice(%y, [0, 0], [1, 1])
  %y1 = tensor.slice(%y, [0, 1], [1, 1])
  %y2 = tensor.slice(%y, [0, 2], [1, 1])
  %y3 = tensor.slice(%y, [0, 3], [1, 1])
  call @put(%y0, %a)
  call @put(%y1, %b)
  call @put(%y2, %c)
  call @put(%y3, %d * 100 + %e)
  return %y
}
""", ins={"n": "42"}, want={"y": np.array([[76543210, 369, 42, 807]], I)}))

# incore scopes: outlined with directions from use (store target only -> out, read -> in).
CASES.append(Case("incore_dirs", """program ic
orch @main(%x: tensor[16, 16] f32, inout %z: tensor[16, 16] f32, out %y: tensor[16, 16] f32)
    -> (tensor[16, 16] f32, tensor[16, 16] f32) {
  incore {
    %a = tile.load(%x, [0, 0], [16, 16])
    %b = tile.load(%z, [0, 0], [16, 16])
    %c = tile.add(%a, %b)
    tile.store(%c, [0, 0], %y)
    tile.store(%a, [0, 0], %z)
  }
  return %z, %y
}
""", ins={"x": x[:16], "z": x[4:20]}, want={"y": x[:16] + x[4:20], "z": x[:16]}))

# The contract's example, as written (a runtime %alpha, a standalone store).
EXAMPLE = """program scale_rows
dynamic M, R

kernel @scale_block(%x: tensor[R,128] f32, out %y: tensor[R,128] f32,
                    %alpha: f32, %act: i32) -> (tensor[R,128] f32) {
  %t = tile.load(%x, [0, 0], [32, 128], valid=[R, 128])
  %s = tile.muls(%t, %alpha)
  %o = if %act != 0 {
         %r = tile.relu(%s)
         yield %r
       } else {
         yield %s
       }
  tile.store(%o, [0, 0], %y)
  return %y
}

orch @main(%x: tensor[M,128] f32, out %y: tensor[M,128] f32,
           %alpha: f32 = runtime, %act: i32 = 1) -> (tensor[M,128] f32) {
  %nblk = (M + 31) / 32
  for %i in range(0, %nblk) {
    %row0 = %i * 32
    %xs = tensor.slice(%x, [%row0, 0], [32, 128])
    %ys = tensor.slice(%y, [%row0, 0], [32, 128])
    call @scale_block(%xs, %ys, %alpha, %act)
  }
  return %y
}
"""
xe = rng.standard_normal((100, 128)).astype(F)
CASES.append(Case("contract_example", EXAMPLE, ins={"x": xe, "alpha": "-1.5"},
                  want={"y": np.maximum(xe * F(-1.5), F(0))}))
CASES.append(Case("contract_example_act0", EXAMPLE, ins={"x": xe, "alpha": "0.5"},
                  want={"y": xe * F(0.5)}, args=["-D", "act=0"]))

# Errors of orchestrations and entries.
ERRS = [
    ("slice_static_offset_past", "orch @main(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %s = tensor.slice(%x, [16, 0], [1, 16])\n  return %y\n}\n", "2:"),
    ("reshape_count", "orch @main(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %s = tensor.reshape(%x, [255])\n  return %y\n}\n", "2:"),
    ("reshape_noncontiguous", "orch @main(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %c = tensor.slice(%x, [0, 0], [16, 8])\n  %s = tensor.reshape(%c, [128])\n  return %y\n}\n", "contiguous"),
    ("select_rank1", "orch @main(%x: tensor[16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %s = tensor.select(%x, 0)\n  return %y\n}\n", "2:"),
    ("read_in_kernel", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %e = tensor.read(%x, [0, 0])\n  return %y\n}\n", "2:"),
    ("step_zero", "orch @main(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  for %i in range(0, 4, 0) {\n    %s = tensor.slice(%x, [%i, 0], [1, 16])\n  }\n  return %y\n}\n", "2:"),
    ("load_into_left", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16], space=left)\n  return %y\n}\n", "2:"),
    ("matmul_vec_operands", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  %p = tile.matmul(%t, %t)\n  return %y\n}\n", "3:"),
    ("shape_mismatch", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  %u = tile.load(%x, [0, 0], [16, 8])\n  %v = tile.add(%t, %u)\n  return %y\n}\n", "4:"),
    ("static_load_offset_past", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [16, 0], [16, 16])\n  return %y\n}\n", "2:"),
    ("footprint", "kernel @k(%x: tensor[512, 512] f32, out %y: tensor[512, 512] f32) -> (tensor[512, 512] f32) {\n  %t = tile.load(%x, [0, 0], [256, 256])\n  %y1 = tile.store(%t, [0, 0], %y)\n  return %y1\n}\n", "its tiles need 256 KiB of vec (262144 bytes), more than the 192 KiB (196608 bytes) of the sim platform"),
    ("footprint_left", "kernel @k(%x: tensor[512, 512] f32, out %y: tensor[512, 512] f32) -> (tensor[512, 512] f32) {\n  %t = tile.load(%x, [0, 0], [128, 256], space=mat)\n  %l = tile.move(%t, space=left)\n  return %y\n}\n", "more than the 64 KiB (65536 bytes)"),
    ("valid_static_past", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16], valid=[17, 16])\n  return %y\n}\n", "2:"),
    ("move_without_space", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16], space=mat)\n  %m = tile.move(%t)\n  return %y\n}\n", "space"),
    ("cmp_without_cmp", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  %m = tile.cmp(%t, %t)\n  return %y\n}\n", "cmp"),
    ("gather_static_oob", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  %e = tile.extract(%t, [10, 0], [8, 8])\n  return %y\n}\n", "3:"),
    ("int_only_op_on_float", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  %e = tile.shls(%t, 1)\n  return %y\n}\n", "3:"),
    ("float_only_op_on_int", "kernel @k(%x: tensor[16, 16] i32, out %y: tensor[16, 16] i32) -> (tensor[16, 16] i32) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  %e = tile.exp(%t)\n  return %y\n}\n", "3:"),
    ("fmod_on_int", "kernel @k(%x: tensor[16, 16] i32, out %y: tensor[16, 16] i32) -> (tensor[16, 16] i32) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  %e = tile.fmod(%t, %t)\n  return %y\n}\n", "3:"),
    ("sin_on_int", "kernel @k(%x: tensor[16, 16] i32, out %y: tensor[16, 16] i32) -> (tensor[16, 16] i32) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  %e = tile.sin(%t)\n  return %y\n}\n", "3:"),
    ("add_on_bool", "kernel @k(%x: tensor[16, 16] bool, out %y: tensor[16, 16] bool) -> (tensor[16, 16] bool) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  %e = tile.add(%t, %t)\n  return %y\n}\n", "3:"),
    ("sel_mask_not_bool", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  %e = tile.sel(%t, %t, %t)\n  return %y\n}\n", "3:"),
    ("concat_rows_differ", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  %u = tile.load(%x, [0, 0], [8, 16])\n  %e = tile.concat(%t, %u)\n  return %y\n}\n", "4:"),
    ("tile_reshape_count", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  %e = tile.reshape(%t, [8, 16])\n  return %y\n}\n", "3:"),
    ("gather_idx_not_i32", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  %e = tile.gather(%t, %t)\n  return %y\n}\n", "3:"),
    ("matmul_inner_differs", "kernel @k(%x: tensor[32, 32] f32, out %y: tensor[32, 32] f32) -> (tensor[32, 32] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16], space=mat)\n  %u = tile.load(%x, [0, 0], [8, 16], space=mat)\n  %l = tile.move(%t, space=left)\n  %r = tile.move(%u, space=right)\n  %p = tile.matmul(%l, %r)\n  return %y\n}\n", "6:"),
    ("store_dtype_mismatch", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f16) -> (tensor[16, 16] f16) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  %y1 = tile.store(%t, [0, 0], %y)\n  return %y1\n}\n", "3:"),
    ("dist_in_incore", "orch @main(%x: tensor[16, 16] f32, inout %w: dtensor[16, 16] f32) -> (dtensor[16, 16] f32) {\n  incore {\n    %r = dist.rank(%w)\n  }\n  return %w\n}\n", "3:"),
    ("load_offsets_rank", "kernel @k(%x: tensor[2, 16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  return %y\n}\n", "2:"),
    ("slice_list_rank", "orch @main(%x: tensor[2, 16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %s = tensor.slice(%x, [0, 0], [16, 16])\n  return %y\n}\n", "2:"),
    ("wait_without_cmp", "kernel @k(inout %sig: dtensor[1, 8] i32) -> (dtensor[1, 8] i32) {\n  dist.wait(%sig, [0, 0], 1)\n  return %sig\n}\n", "cmp="),
    ("tile_load_in_host", "host @main(%x: tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n}\n", "2:"),
    ("call_writes_in", "kernel @k(out %z: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.full([16, 16], f32, 1.0)\n  %z1 = tile.store(%t, [0, 0], %z)\n  return %z1\n}\norch @main(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %s = tensor.slice(%x, [0, 0], [16, 16])\n  call @k(%s)\n  return %y\n}\n", "call @k writes %s, which is a view of %x, an in parameter"),
    ("incore_writes_in", "orch @main(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  incore {\n    %t = tile.full([16, 16], f32, 1.0)\n    tile.store(%t, [0, 0], %x)\n  }\n  return %y\n}\n", "tile.store writes %x, an in parameter"),
    ("unshaped_non_entry", "kernel @k(%x: tensor f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  return %y\n}\norch @main(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  call @k(%x, %y)\n  return %y\n}\n", "1:"),
]
for name, text, msg in ERRS:
    if msg[:-1].isdigit():  # a line of text: the program's header adds one
        msg = ".ptir:%d:" % (int(msg[:-1]) + 1)
    CASES.append(Case("err_" + name, "program e\n" + text, cmd="check", err=(2, msg)))

# Errors at compile time (the entry) and at launch.
CASES.append(Case("unshaped_needs_sample", """program u
kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {
  %t = tile.load(%x, [0, 0], [16, 16])
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor f32, out %y: tensor f32) -> (tensor f32) {
  call @k(%x, %y)
  return %y
}
""", err=(2, "--arg x="), args=[]))
CASES.append(Case("two_orchs_no_entry", """program two
orch @a(out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {
  return %y
}
orch @b(out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {
  return %y
}
""", err=(2, "--entry")))
CASES.append(Case("symbol_disagrees", """program sym
dynamic R
kernel @k(%x: tensor[R, 16] f32, out %y: tensor[R, 16] f32) -> (tensor[R, 16] f32) {
  %t = tile.load(%x, [0, 0], [8, 16], valid=[R, 16])
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[8, 16] f32, out %y: tensor[8, 16] f32) -> (tensor[8, 16] f32) {
  %xs = tensor.slice(%x, [0, 0], [4, 16])
  call @k(%xs, %y)
  return %y
}
""", err=(2, "symbol R is bound to 4 by %xs and to 8 by %y")))
CASES.append(Case("symbol_disagrees_at_launch", """program sym
dynamic R, M, N
kernel @k(%x: tensor[R, 16] f32, out %y: tensor[R, 16] f32) -> (tensor[R, 16] f32) {
  %t = tile.load(%x, [0, 0], [8, 16], valid=[R, 16])
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[M, 16] f32, out %y: tensor[N, 16] f32) -> (tensor[N, 16] f32) {
  call @k(%x, %y)
  return %y
}
""", ins={"x": np.zeros((4, 16), F)}, args=["--dim", "N=6"],
    err=(1, "dynamic symbol R is 4 from parameter 'x' (dim 0) but 6 from parameter 'y' (dim 0)")))

# An out parameter starts as zeros on the device whatever --in gives (the runtime never copies
# it in); --check's interpreter starts from the same zeros (it used the fed values: FAIL).
CASES.append(Case("out_fed_starts_zero", """program o
kernel @k(%x: tensor[8, 16] f32, out %y: tensor[8, 16] f32) -> (tensor[8, 16] f32) {
  %t = tile.load(%x, [0, 0], [4, 16])
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
""", ins={"x": x[:8], "y": np.ones((8, 16), F)}, args=["--entry", "k"],
    want={"y": np.concatenate([x[:4], np.zeros((4, 16), F)])}))
CASES.append(Case("dynamic_to_static_param", """program dts
dynamic M
kernel @k(%x: tensor[8, 16] f32, out %y: tensor[8, 16] f32) -> (tensor[8, 16] f32) {
  %t = tile.load(%x, [0, 0], [8, 16])
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[M, 16] f32, out %y: tensor[M, 16] f32) -> (tensor[M, 16] f32) {
  for %i in range(0, (M + 7) / 8) {
    %xs = tensor.slice(%x, [%i * 8, 0], [8, 16])
    %ys = tensor.slice(%y, [%i * 8, 0], [8, 16])
    call @k(%xs, %ys)
  }
  return %y
}
""", ins={"x": np.zeros((12, 16), F)},
    err=(1, "call @k: parameter %x: extent of dim 0 is 4, expected 8")))

# L3: collectives give numpy's reduction over ranks; a host's tensor.select of a stacked
# tensor is the shard.
CASES.append(Case("allreduce_sum_max", """program ar
kernel @k(%x: tensor[4, 8] f32, inout %w: dtensor[4, 8] f32, inout %sig: dtensor[1, 4] i32,
          out %ys: tensor[4, 8] f32, out %ym: tensor[4, 8] f32)
    -> (dtensor[4, 8] f32, dtensor[1, 4] i32, tensor[4, 8] f32, tensor[4, 8] f32) {
  %t = tile.load(%x, [0, 0], [4, 8])
  %w1 = tile.store(%t, [0, 0], %w)
  dist.allreduce(%w1, %sig, op=sum, mode=ring)
  %s = tile.load(%w1, [0, 0], [4, 8])
  %ys1 = tile.store(%s, [0, 0], %ys)
  %w2 = tile.store(%t, [0, 0], %w1)
  dist.allreduce(%w2, %sig, op=max)
  %m = tile.load(%w2, [0, 0], [4, 8])
  %ym1 = tile.store(%m, [0, 0], %ym)
  return %w2, %sig, %ys1, %ym1
}
orch @o(%x: tensor[4, 8] f32, inout %w: dtensor[4, 8] f32, inout %sig: dtensor[1, 4] i32,
        out %ys: tensor[4, 8] f32, out %ym: tensor[4, 8] f32)
    -> (dtensor[4, 8] f32, dtensor[1, 4] i32, tensor[4, 8] f32, tensor[4, 8] f32) {
  %a, %b, %c, %d = call @k(%x, %w, %sig, %ys, %ym)
  return %a, %b, %c, %d
}
host @main(%x: tensor[3, 4, 8] f32, out %ys: tensor[3, 4, 8] f32, out %ym: tensor[3, 4, 8] f32) {
  %ww = dist.alloc_window([4, 8], f32)
  %ws = dist.alloc_window([1, 4], i32)
  %w = dist.window(%ww)
  %s = dist.window(%ws)
  %nd = dist.world_size()
  for %d in range(0, %nd) {
    %xd = tensor.select(%x, %d)
    %ysd = tensor.select(%ys, %d)
    %ymd = tensor.select(%ym, %d)
    call @o(%xd, %w, %s, %ysd, %ymd) device=%d
  }
}
""", ins={"x": np.arange(96, dtype=F).reshape(3, 4, 8) * np.array([1, -1, 2], F)[:, None, None]},
    want={"ys": np.broadcast_to((np.arange(96, dtype=F).reshape(3, 4, 8) * np.array([1, -1, 2], F)[:, None, None]).sum(0), (3, 4, 8)).copy(),
          "ym": np.broadcast_to((np.arange(96, dtype=F).reshape(3, 4, 8) * np.array([1, -1, 2], F)[:, None, None]).max(0), (3, 4, 8)).copy()},
    args=["--devices", "3"]))

# -- functions, entries, control flow ----------------------------------------------------------
PUT = """kernel @put(out %y: tensor[1, 1] i32, %v: i32) -> (tensor[1, 1] i32) {
  %t = tile.full([1, 1], i32, %v)
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
"""
# The single host is the entry even with orchs around; a call without device= goes to device 0;
# dist.world_size() is the device count.
CASES.append(Case("host_entry_world_size", "program h\n" + PUT + """orch @o(out %y: tensor[1, 1] i32, %v: i32) -> (tensor[1, 1] i32) {
  call @put(%y, %v)
  return %y
}
orch @other(out %y: tensor[1, 1] i32) -> (tensor[1, 1] i32) {
  return %y
}
host @main(out %y: tensor[1, 2] i32) {
  %n = dist.world_size()
  %a = tensor.slice(%y, [0, 0], [1, 1])
  %b = tensor.slice(%y, [0, 1], [1, 1])
  call @o(%a, i32(%n))
  call @o(%b, 7) device=2
}
""", want={"y": np.array([[3, 7]], I)}, args=["--devices", "3"]))
# if with results in an orch, two results; typed results; bool scalars; casts index <-> i32;
# for ... in parallel; call results
CASES.append(Case("orch_control", "program oc\n" + PUT + """orch @main(out %y: tensor[1, 4] i32, %n: i32 = runtime, %f: bool = runtime) -> (tensor[1, 4] i32) {
  %a, %b = if %n > 2 && !%f {
    yield %n * 2, %n + 1
  } else {
    yield 0 - %n, 5
  }
  %k: index = index(%n)
  %c: i32 = i32(%k * 3)
  for %j in parallel(0, 4) {
    %s = tensor.slice(%y, [0, %j], [1, 1])
    %v = if %j == 0 {
      yield %a
    } else {
      %w = if %j == 1 {
        yield %b
      } else {
        yield %c + i32(%j)
      }
      yield %w
    }
    %r = call @put(%s, %v)
  }
  return %y
}
""", ins={"n": "5", "f": "false"}, want={"y": np.array([[10, 6, 17, 18]], I)}))
CASES.append(Case("orch_control_else", CASES[-1].prog, ins={"n": "5", "f": "true"},
                  want={"y": np.array([[-5, 5, 17, 18]], I)}))
# -D n=runtime keeps a scalar without default a launch argument; -D n=VALUE bakes it
CASES.append(Case("define_runtime", "program dr\n" + PUT + """orch @main(out %y: tensor[1, 1] i32, %n: i32) -> (tensor[1, 1] i32) {
  call @put(%y, %n * 2)
  return %y
}
""", ins={"n": "21"}, args=["-D", "n=runtime"], want={"y": np.array([[42]], I)}))
CASES.append(Case("define_value", CASES[-1].prog, args=["-D", "n=4"],
                  want={"y": np.array([[8]], I)}))
# an unshaped entry tensor takes its shape from --arg
CASES.append(Case("unshaped_with_arg", """program u
kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {
  %t = tile.load(%x, [0, 0], [16, 16])
  %u = tile.muls(%t, 2.0)
  %y1 = tile.store(%u, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor f32, out %y: tensor f32) -> (tensor f32) {
  call @k(%x, %y)
  return %y
}
""", ins={"x": x[:16]}, args=["--arg", "x=16x16", "--arg", "y=16x16"], want={"y": x[:16] * 2}))
# tensor.create: a scratch buffer between two tasks, ordered by the data
CASES.append(Case("create_scratch", """program c
kernel @dbl(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {
  %t = tile.load(%x, [0, 0], [16, 16])
  %u = tile.add(%t, %t)
  %y1 = tile.store(%u, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {
  %tmp = tensor.create([16, 16], f32)
  %t1 = call @dbl(%x, %tmp)
  call @dbl(%t1, %y)
  return %y
}
""", ins={"x": x[:16]}, want={"y": x[:16] * 4}))
# scalar f16 arithmetic: each operation rounds to f16 (the product before the sum it feeds)
CASES.append(Case("f16_scalars", """program h
kernel @put(out %y: tensor[1, 2] f16, %v: f16, %w: f16) -> (tensor[1, 2] f16) {
  %t = tile.full([1, 1], f16, %v)
  %u = tile.full([1, 1], f16, %w)
  %c = tile.concat(%t, %u)
  %y1 = tile.store(%c, [0, 0], %y)
  return %y1
}
orch @main(out %y: tensor[1, 2] f16, %a: f16 = runtime, %b: f16 = runtime) -> (tensor[1, 2] f16) {
  %p = %a * %b + %a
  %q = %a / %b
  call @put(%y, %p, %q)
  return %y
}
""", ins={"a": "1.001", "b": "3.3"},
    want={"y": np.array([[np.float16(np.float16(np.float16(1.001) * np.float16(3.3)) + np.float16(1.001)),
                          np.float16(np.float16(1.001) / np.float16(3.3))]], np.float16)}))
# index is not i64
CASES.append(Case("err_index_not_i64", """program e
kernel @k(out %y: tensor[1, 1] i32, %a: index, %b: i64) -> (tensor[1, 1] i32) {
  %c = %a + %b
  return %y
}
""", cmd="check", err=(2, "index and i64")))
# a typed result must match
CASES.append(Case("err_typed_result", """program e
kernel @k(out %y: tensor[1, 1] i32, %a: i32) -> (tensor[1, 1] i32) {
  %c: i64 = %a + 1
  return %y
}
""", cmd="check", err=(2, ".ptir:3:")))
# dist collectives: broadcast from a root, allgather blocks, reduce_scatter sums
xs = np.arange(3 * 6 * 4, dtype=F).reshape(3, 6, 4) - 30
CASES.append(Case("collectives_values", """program col
kernel @k(%x: tensor[6, 4] f32, inout %w: dtensor[6, 4] f32, inout %sig: dtensor[1, 4] i32,
          out %yb: tensor[6, 4] f32, out %yg: tensor[6, 4] f32, out %yr: tensor[6, 4] f32)
    -> (dtensor[6, 4] f32, dtensor[1, 4] i32, tensor[6, 4] f32, tensor[6, 4] f32, tensor[6, 4] f32) {
  %t = tile.load(%x, [0, 0], [6, 4])
  %w1 = tile.store(%t, [0, 0], %w)
  dist.broadcast(%w1, %sig, 2)
  %b = tile.load(%w1, [0, 0], [6, 4])
  %yb1 = tile.store(%b, [0, 0], %yb)
  %w2 = tile.store(%t, [0, 0], %w1)
  dist.allgather(%w2, %sig)
  %g = tile.load(%w2, [0, 0], [6, 4])
  %yg1 = tile.store(%g, [0, 0], %yg)
  %w3 = tile.store(%t, [0, 0], %w2)
  dist.reduce_scatter(%w3, %sig)
  %ctx = dist.comm_ctx(%w3)
  %r = dist.rank(%ctx)
  %rs = tile.load(%w3, [%r * 2, 0], [2, 4])
  %yr1 = tile.store(%rs, [%r * 2, 0], %yr)
  return %w3, %sig, %yb1, %yg1, %yr1
}
orch @o(%x: tensor[6, 4] f32, inout %w: dtensor[6, 4] f32, inout %sig: dtensor[1, 4] i32,
        out %yb: tensor[6, 4] f32, out %yg: tensor[6, 4] f32, out %yr: tensor[6, 4] f32)
    -> (dtensor[6, 4] f32, dtensor[1, 4] i32, tensor[6, 4] f32, tensor[6, 4] f32, tensor[6, 4] f32) {
  %a, %b, %c, %d, %e = call @k(%x, %w, %sig, %yb, %yg, %yr)
  return %a, %b, %c, %d, %e
}
host @main(%x: tensor[3, 6, 4] f32, out %yb: tensor[3, 6, 4] f32, out %yg: tensor[3, 6, 4] f32,
           out %yr: tensor[3, 6, 4] f32) {
  %ww = dist.alloc_window([6, 4], f32)
  %ws = dist.alloc_window([1, 4], i32)
  %w = dist.window(%ww)
  %s = dist.window(%ws)
  %nd = dist.world_size()
  for %d in range(0, %nd) {
    %xd = tensor.select(%x, %d)
    %b = tensor.select(%yb, %d)
    %g = tensor.select(%yg, %d)
    %r = tensor.select(%yr, %d)
    call @o(%xd, %w, %s, %b, %g, %r) device=%d
  }
}
""", ins={"x": xs},
    want={"yb": np.broadcast_to(xs[2], (3, 6, 4)).copy(),
          "yg": np.broadcast_to(np.concatenate([xs[r, 2 * r:2 * r + 2] for r in range(3)]), (3, 6, 4)).copy(),
          "yr": np.stack([np.pad(xs.sum(0)[2 * r:2 * r + 2], ((2 * r, 4 - 2 * r), (0, 0))) for r in range(3)])},
    args=["--devices", "3"]))
# A static slice past the edge is clamped, its extent dynamic (min(8, 20 - 16), 4 at launch); a
# kernel with [R, 16] takes it (R = 4); one declaring [8, 16] fails at launch, naming the call and
# the parameter, and pto check warns of it (exit 0), naming both extents.
CLAMP = """program s
dynamic R
""" + INC + """kernel @st(%x: tensor[8, 16] f32, out %y: tensor[8, 16] f32) -> (tensor[8, 16] f32) {
  %t = tile.load(%x, [0, 0], [8, 16])
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[20, 16] f32, out %y: tensor[20, 16] f32) -> (tensor[20, 16] f32) {
  %xs = tensor.slice(%x, [16, 0], [8, 16])
  %ys = tensor.slice(%y, [16, 0], [8, 16])
  call @inc(%xs, %ys)
  return %y
}
"""
CASES.append(Case("slice_static_clamped", CLAMP, ins={"x": x},
                  want={"y": np.concatenate([np.zeros((16, 16), F), x[16:] + 1])}))
CASES.append(Case("err_slice_static_clamped_to_static", CLAMP.replace("call @inc(", "call @st("),
                  ins={"x": x},
                  err=(1, "call @st: parameter %x: extent of dim 0 is 4, expected 8")))
CASES.append(Case("warn_slice_static_clamped_to_static", CLAMP.replace("call @inc(", "call @st("),
                  cmd="check",
                  err=(0, "call @st: argument 1 for %x: %xs has extent 4 in dim 0 (a tensor.slice "
                          "clamped at its tensor's edge), the parameter declares 8: the launch will fail")))
# allreduce: mode picks the algorithm, never the result (the sum in rank order, f32 rounding at
# each step, in both modes); the signal window is left zero by every collective.
xr = rng.standard_normal((4, 4, 8)).astype(F)
seq = xr[0].copy()
for r in range(1, 4):
    seq = (seq + xr[r]).astype(F)
CASES.append(Case("allreduce_modes_same_bits", """program arm
kernel @k(%x: tensor[4, 8] f32, inout %w: dtensor[4, 8] f32, inout %sig: dtensor[1, 4] i32,
          out %ym: tensor[4, 8] f32, out %yr: tensor[4, 8] f32, out %ys: tensor[1, 4] i32)
    -> (dtensor[4, 8] f32, dtensor[1, 4] i32, tensor[4, 8] f32, tensor[4, 8] f32, tensor[1, 4] i32) {
  %t = tile.load(%x, [0, 0], [4, 8])
  %w1 = tile.store(%t, [0, 0], %w)
  dist.allreduce(%w1, %sig, op=sum, mode=mesh)
  %m = tile.load(%w1, [0, 0], [4, 8])
  %ym1 = tile.store(%m, [0, 0], %ym)
  %w2 = tile.store(%t, [0, 0], %w1)
  dist.allreduce(%w2, %sig, op=sum, mode=ring)
  %r = tile.load(%w2, [0, 0], [4, 8])
  %yr1 = tile.store(%r, [0, 0], %yr)
  dist.barrier(%sig)
  %s = tile.load(%sig, [0, 0], [1, 4])
  %ys1 = tile.store(%s, [0, 0], %ys)
  return %w2, %sig, %ym1, %yr1, %ys1
}
orch @o(%x: tensor[4, 8] f32, inout %w: dtensor[4, 8] f32, inout %sig: dtensor[1, 4] i32,
        out %ym: tensor[4, 8] f32, out %yr: tensor[4, 8] f32, out %ys: tensor[1, 4] i32)
    -> (dtensor[4, 8] f32, dtensor[1, 4] i32, tensor[4, 8] f32, tensor[4, 8] f32, tensor[1, 4] i32) {
  %a, %b, %c, %d, %e = call @k(%x, %w, %sig, %ym, %yr, %ys)
  return %a, %b, %c, %d, %e
}
host @main(%x: tensor[4, 4, 8] f32, out %ym: tensor[4, 4, 8] f32, out %yr: tensor[4, 4, 8] f32,
           out %ys: tensor[4, 1, 4] i32) {
  %ww = dist.alloc_window([4, 8], f32)
  %ws = dist.alloc_window([1, 4], i32)
  %w = dist.window(%ww)
  %s = dist.window(%ws)
  %nd = dist.world_size()
  for %d in range(0, %nd) {
    %xd = tensor.select(%x, %d)
    %a = tensor.select(%ym, %d)
    %b = tensor.select(%yr, %d)
    %c = tensor.select(%ys, %d)
    call @o(%xd, %w, %s, %a, %b, %c) device=%d
  }
}
""", ins={"x": xr}, want={"ym": np.broadcast_to(seq, (4, 4, 8)).copy(),
                         "yr": np.broadcast_to(seq, (4, 4, 8)).copy(),
                         "ys": np.zeros((4, 1, 4), I)}, args=["--devices", "4"]))
# Host calls run in the order their data requires: on one device and across devices, a call
# reading what an earlier call wrote sees it.
CASES.append(Case("host_data_order", """program ho
kernel @inc(%x: tensor[8, 16] f32, out %y: tensor[8, 16] f32) -> (tensor[8, 16] f32) {
  %t = tile.load(%x, [0, 0], [8, 16])
  %u = tile.adds(%t, 1.0)
  %y1 = tile.store(%u, [0, 0], %y)
  return %y1
}
orch @o(%x: tensor[8, 16] f32, out %y: tensor[8, 16] f32) -> (tensor[8, 16] f32) {
  call @inc(%x, %y)
  return %y
}
host @main(%x: tensor[8, 16] f32, out %a: tensor[8, 16] f32, out %b: tensor[8, 16] f32,
           out %c: tensor[8, 16] f32) {
  call @o(%x, %a) device=0
  call @o(%a, %b) device=0
  call @o(%b, %c) device=1
}
""", ins={"x": x[:8]}, want={"a": x[:8] + F(1), "b": (x[:8] + F(1)) + F(1), "c": ((x[:8] + F(1)) + F(1)) + F(1)},
    args=["--devices", "2"]))
# tensor.read of every kind of dtype in an orch passes the element's bits on (NaN, -0, u64 max, bf16 raw bits)
for dt, arr in (("u64", np.array([[2**64 - 1, 5]], np.uint64)), ("f16", np.array([[np.nan, -0.0]], np.float16)),
                ("bool", np.array([[True, False]])), ("i8", np.array([[-128, 7]], np.int8)),
                ("bf16", np.array([[0x7F80, 0x8001]], np.uint16)), ("f64", np.array([[1e300, -0.0]]))):
    prog = """program r
kernel @put(out %%y: tensor[1, 1] %s, %%v: %s) -> (tensor[1, 1] %s) {
  %%t = tile.full([1, 1], %s, %%v)
  %%y1 = tile.store(%%t, [0, 0], %%y)
  return %%y1
}
orch @main(%%x: tensor[1, 2] %s, out %%y: tensor[1, 2] %s, %%k: index = runtime) -> (tensor[1, 2] %s) {
  %%a = tensor.read(%%x, [0, 0])
  %%b = tensor.read(%%x, [0, %%k])
  %%y0 = tensor.slice(%%y, [0, 0], [1, 1])
  %%y1 = tensor.slice(%%y, [0, 1], [1, 1])
  call @put(%%y0, %%a)
  call @put(%%y1, %%b)
  return %%y
}
""" % ((dt,) * 7)
    CASES.append(Case("read_" + dt, prog, ins={"x": arr, "k": "1"}, want={"y": arr}))
