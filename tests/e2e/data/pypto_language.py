# PyPTO's language ops, written in PTIR as docs/pypto-language.md says, checked against the
# expected values of PyPTO's own runtime tests (hw-native-sys/pypto, tests/st/runtime/ops/
# test_*.py: their compute_expected), recomputed here with numpy in place of torch. Each case
# names the PyPTO test it follows. Where PyPTO's op and pto's op of the same name differ (integer
# division, prelu's slope, gather's indices, cast's rounding), the case writes PyPTO's meaning
# with the composition the page gives, and a second case holds pto's own meaning to numpy.
# Run by tests/e2e/pypto_language.sh.


def kprog(ins, outs, body, scalars=()):
    """A kernel entry @k: each input ("A", shape, dtype) is a tensor %A loaded whole into tile
    %a (unless body loads it itself: ("A", shape, dtype, False)); each output ("Y", shape, dtype)
    a tensor %Y that the tile %y (made by body) is stored to."""
    def dims(s):
        return ", ".join(map(str, s))
    params = ["%%%s: tensor[%s] %s" % (i[0], dims(i[1]), i[2]) for i in ins]
    params += ["out %%%s: tensor[%s] %s" % (n, dims(s), d) for n, s, d in outs]
    params += list(scalars)
    arrow = ", ".join("tensor[%s] %s" % (dims(s), d) for _, s, d in outs)
    loads = "".join("  %%%s = tile.load(%%%s, [0, 0], [%d, %d])\n" % (i[0].lower(), i[0],
                                                                    i[1][0], i[1][1])
                    for i in ins if len(i) == 3)
    lines = "".join("  %s\n" % l for l in body)
    stores = "".join("  %%%s_ = tile.store(%%%s, [0, 0], %%%s)\n" % (n, n.lower(), n)
                     for n, _, _ in outs)
    rets = ", ".join("%%%s_" % n for n, _, _ in outs)
    return "program pl\nkernel @k(%s) -> (%s) {\n%s%s%s  return %s\n}\n" % (
        ", ".join(params), arrow, loads, lines, stores, rets)


DT = {"<f2": "f16", "<f4": "f32", "<i2": "i16", "<i4": "i32", "|u1": "u8", "|b1": "bool"}


def case(name, ins, outs, body, scalars=(), sargs=None, noload=(), **kw):
    """ins: {name: array}; outs: {name: array, (array, ulps) or ("near", array, rtol, atol)}
    (numpy's expected values)."""
    def spec(n, v, load=True):
        if isinstance(v, tuple):  # (array, ulps) or ("near", array, rtol, atol)
            v = v[1] if isinstance(v[0], str) else v[0]
        a = np.asarray(v)
        return (n, a.shape, DT[a.dtype.str]) + (() if load else (False,))
    prog = kprog([spec(n, v, n not in noload) for n, v in ins.items()],
                 [spec(n, v) for n, v in outs.items()], body, scalars)
    feeds = dict(ins)
    feeds.update(sargs or {})
    return Case(name, prog, ins=feeds, want=outs, args=["--entry", "k"], **kw)


F, I = np.float32, np.int32
rng = np.random.default_rng(21)
CASES = []


def signed(m, n):  # test_activation_ops.py's _signed: values of both signs
    return (rng.standard_normal((m, n)) * 4).astype(F)


# test_activation_ops.py, lrelu: torch.where(a > 0, a, slope * a).
a = signed(16, 32)
a[0, :3] = [0.0, -0.0, -3.0]
CASES.append(case("lrelu", {"A": a}, {"Y": np.where(a > 0, a, F(0.1) * a).astype(F)},
                  ["%y = tile.lrelu(%a, 0.1)"]))

# test_prelu.py: the slope is a tile of src's shape, torch.where(src > 0, src, src * slope).
# pto's tile.prelu takes a [1, C] slope; PyPTO's is cmps, mul and sel.
s = (rng.random((16, 32)) * 0.5).astype(F)
CASES.append(case("prelu_elementwise_slope", {"A": a, "S": s},
                  {"Y": np.where(a > 0, a, a * s).astype(F)},
                  ["%pos = tile.cmps(%a, 0.0, cmp=gt)", "%neg = tile.mul(%a, %s)",
                   "%y = tile.sel(%pos, %a, %neg)"]))
# pto's own tile.prelu: a >= 0 ? a : a * s[0, j] (torch's per-channel PReLU).
sc = s[:1, :]
CASES.append(case("prelu_per_column", {"A": a, "S": sc},
                  {"Y": np.where(a >= 0, a, a * sc).astype(F)}, ["%y = tile.prelu(%a, %s)"]))

# test_fmod.py: torch.fmod (sign of the dividend), tile and scalar forms.
lhs = (np.arange(16 * 32, dtype=F).reshape(16, 32) % 13 - 6).astype(F)
rhs = (np.arange(16 * 32, dtype=F).reshape(16, 32) % 5 + 1.5).astype(F)
CASES.append(case("fmod", {"A": lhs, "B": rhs},
                  {"Y": np.fmod(lhs, rhs), "Z": np.fmod(lhs, F(2.5))},
                  ["%y = tile.fmod(%a, %b)", "%z = tile.fmods(%a, 2.5)"]))

# test_div.py: integer tile division is torch.div(rounding_mode="trunc") in PyPTO; pto's
# tile.div floors (the contract), so PyPTO's quotient is the floored one plus 1 where the
# floored remainder is nonzero and the operands' signs differ.
ia = rng.integers(-1000, 1000, (8, 16)).astype(I)
ib = rng.integers(1, 50, (8, 16)).astype(I) * np.where(rng.random((8, 16)) < 0.5, -1, 1).astype(I)
trunc = (np.sign(ia) * np.sign(ib) * (np.abs(ia) // np.abs(ib))).astype(I)
CASES.append(case("div_int_trunc", {"A": ia, "B": ib}, {"Y": trunc, "Z": ia // ib},
                  ["%q = tile.div(%a, %b)", "%r = tile.rem(%a, %b)",
                   "%rnz = tile.cmps(%r, 0, cmp=ne)", "%sx = tile.xor(%a, %b)",
                   "%neg = tile.cmps(%sx, 0, cmp=lt)", "%fix = tile.and(%rnz, %neg)",
                   "%q1 = tile.adds(%q, 1)", "%y = tile.sel(%fix, %q1, %q)",
                   "%z = tile.div(%a, %b)"]))
fa, fb = signed(16, 32), signed(16, 32)
CASES.append(case("div_float", {"A": fa, "B": fb}, {"Y": fa / fb}, ["%y = tile.div(%a, %b)"]))

# test_argmax_reduction.py: torch.argmax / argmin along dim 1 and dim 0 (the first extreme on
# ties, as numpy).
am = rng.integers(-3, 4, (16, 32)).astype(F)  # many ties
CASES.append(case("argmax_argmin", {"A": am},
                  {"Y": np.argmax(am, 1).astype(I)[:, None], "Z": np.argmin(am, 1).astype(I)[:, None],
                   "W": np.argmax(am, 0).astype(I)[None, :], "V": np.argmin(am, 0).astype(I)[None, :]},
                  ["%y = tile.row_argmax(%a)", "%z = tile.row_argmin(%a)",
                   "%w = tile.col_argmax(%a)", "%v = tile.col_argmin(%a)"]))

# test_prod_reduction.py: torch.prod(a, dim=1 / 0, keepdim=True) (in index order).
pa = (1 + rng.random((16, 16)) * 0.2).astype(F)


def prod_in_order(x, axis):
    x = np.moveaxis(x, axis, 0)
    acc = x[0].copy()
    for k in range(1, x.shape[0]):
        acc = (acc * x[k]).astype(F)
    return np.expand_dims(acc, axis)


CASES.append(case("row_col_prod", {"A": pa}, {"Y": prod_in_order(pa, 1), "Z": prod_in_order(pa, 0)},
                  ["%y = tile.row_prod(%a)", "%z = tile.col_prod(%a)"]))

# test_row_min.py: torch.amin(src, dim=1, keepdim=True), over a valid region [12, 20] of a
# [16, 32] tile (pad=max, so the padding never wins), stored where valid.
src = signed(16, 32)
want = np.zeros((16, 1), F)
want[:12, 0] = src[:12, :20].min(1)
CASES.append(case("row_min_valid", {"A": src}, {"Y": want},
                  ["%t = tile.load(%A, [0, 0], [16, 32], valid=[12, 20], pad=max)",
                   "%y = tile.row_min(%t)"], noload=("A",)))

# test_tri.py: torch.tril(ones, diagonal=2) / torch.triu(ones, diagonal=-1).
CASES.append(case("tri", {}, {"Y": np.tril(np.ones((16, 32), F), 2),
                              "Z": np.triu(np.ones((16, 32), I), -1).astype(I)},
                  ["%y = tile.tri(2, [16, 32], dtype=f32)",
                   "%z = tile.tri(-1, [16, 32], dtype=i32, upper=true)"]))

# tensor.ci's docstring: numpy.arange (ascending), start - k (descending).
CASES.append(case("ci_arange", {}, {"Y": np.arange(3, 35, dtype=I)[None, :],
                                    "Z": (10 - np.arange(32)).astype(I)[None, :]},
                  ["%y = tile.ci(3, [1, 32], dtype=i32)",
                   "%z = tile.ci(10, [1, 32], dtype=i32, descending=true)"]))

# test_gather.py, index form: torch.gather(inp, dim=-1, index=idx), out[b, k] = inp[b, idx[b, k]].
# pto's tile.gather takes row-major positions: add each row's start b * C first.
inp = signed(8, 32)
gidx = rng.integers(0, 32, (8, 16)).astype(I)
CASES.append(case("gather_dim_last", {"A": inp, "X": gidx},
                  {"Y": np.take_along_axis(inp, gidx, -1)},
                  ["%rows = tile.ci(0, [1, 8], dtype=i32)", "%col = tile.transpose(%rows)",
                   "%start = tile.muls(%col, 32)", "%pos = tile.row_expand_add(%x, %start)",
                   "%y = tile.gather(%a, %pos)"]))

# test_sort.py: torch.sort(src, descending=True): values and original indices (distinct values,
# so the order is the same whatever the tie rule).
srt = rng.permutation(4 * 32).astype(F).reshape(4, 32) - 40
order = np.argsort(-srt, axis=1, kind="stable").astype(I)
CASES.append(case("sort_desc", {"A": srt},
                  {"Y": order, "Z": np.take_along_axis(srt, order, 1)},
                  ["%y = tile.sort_idx(%a, order=desc)", "%rows = tile.ci(0, [1, 4], dtype=i32)",
                   "%col = tile.transpose(%rows)", "%start = tile.muls(%col, 32)",
                   "%pos = tile.row_expand_add(%y, %start)", "%z = tile.gather(%a, %pos)"]))

# test_scatter_update.py (2-D): input[index[k]] = src[k] for every k, in order.
inpu = signed(16, 32)
srcu = signed(4, 32)
uidx = np.array([[9], [2], [9], [0]], I)  # a repeated row: the later one wins
want = inpu.copy()
for k in range(4):
    want[uidx[k, 0]] = srcu[k]
CASES.append(Case("scatter_update", """program pl
kernel @k(%A: tensor[16, 32] f32, %S: tensor[4, 32] f32, %X: tensor[4, 1] i32,
          out %Y: tensor[16, 32] f32) -> (tensor[16, 32] f32) {
  %a = tile.load(%A, [0, 0], [16, 32])
  %Y1 = tile.store(%a, [0, 0], %Y)
  %s = tile.load(%S, [0, 0], [4, 32])
  %x = tile.load(%X, [0, 0], [4, 1])
  %Y2 = tile.scatter_rows(%s, %x, [0], %Y1)
  return %Y2
}
""", ins={"A": inpu, "S": srcu, "X": uidx}, want={"Y": want}, args=["--entry", "k"]))

# test_fillpad.py: a [48, 64] valid region of a [64, 64] tile, the rest +inf (PadValue.max),
# -inf (min) or 0 (zero).
fp = signed(48, 64)
pads = {}
for pad, v in (("max", np.inf), ("min", -np.inf), ("zero", 0.0)):
    e = np.full((64, 64), v, F)
    e[:48, :] = fp
    pads[pad] = e
CASES.append(case("fillpad", {"A": fp}, {"Y": pads["max"], "Z": pads["min"], "W": pads["zero"]},
                  ["%t = tile.load(%A, [0, 0], [64, 64], valid=[48, 64])",
                   "%y = tile.fillpad(%t, pad=max)", "%z = tile.fillpad(%t, pad=min)",
                   "%w = tile.fillpad(%t, pad=zero)"], noload=("A",)))

# test_trans.py: x.t().
tx = signed(16, 8)
CASES.append(case("transpose", {"A": tx}, {"Y": np.ascontiguousarray(tx.T)},
                  ["%y = tile.transpose(%a)"]))

# test_max_min.py: torch.maximum / minimum, tile and scalar (PyPTO's maximum, maximums; pto's
# tile.max, tile.maxs).
CASES.append(case("maximum_minimum", {"A": fa, "B": fb},
                  {"Y": np.maximum(fa, fb), "Z": np.minimum(fa, fb),
                   "W": np.maximum(fa, F(0.5)), "V": np.minimum(fa, F(-1.0))},
                  ["%y = tile.max(%a, %b)", "%z = tile.min(%a, %b)", "%w = tile.maxs(%a, 0.5)",
                   "%v = tile.mins(%a, -1.0)"]))

# test_sels.py: torch.where(cmp(src, threshold), src, scalar), cmp_type GT (4) and LE (3).
CASES.append(case("cmps_sels", {"A": fa},
                  {"Y": np.where(fa > 0.5, fa, F(-2.0)).astype(F),
                   "Z": np.where(fa <= 0.0, fa, F(7.0)).astype(F)},
                  ["%m = tile.cmps(%a, 0.5, cmp=gt)", "%y = tile.sels(%m, %a, -2.0)",
                   "%n = tile.cmps(%a, 0.0, cmp=le)", "%z = tile.sels(%n, %a, 7.0)"]))

# test_cmp.py: the six modes of cmp (EQ=0 ... GE=5), tile against tile; PyPTO's mask is a
# target-encoded UINT8 tile, pto's a bool tile per element (stored to u8 as 0 or 1).
ca = rng.integers(-2, 3, (8, 32)).astype(F)
cb = rng.integers(-2, 3, (8, 32)).astype(F)
u8 = np.uint8
CASES.append(case("cmp_modes", {"A": ca, "B": cb},
                  {"Y": (ca == cb).astype(u8), "Z": (ca != cb).astype(u8), "W": (ca < cb).astype(u8),
                   "V": (ca <= cb).astype(u8), "U": (ca > cb).astype(u8), "T": (ca >= cb).astype(u8)},
                  ["%y0 = tile.cmp(%a, %b, cmp=eq)", "%y = tile.cast(%y0, u8)",
                   "%z0 = tile.cmp(%a, %b, cmp=ne)", "%z = tile.cast(%z0, u8)",
                   "%w0 = tile.cmp(%a, %b, cmp=lt)", "%w = tile.cast(%w0, u8)",
                   "%v0 = tile.cmp(%a, %b, cmp=le)", "%v = tile.cast(%v0, u8)",
                   "%u0 = tile.cmp(%a, %b, cmp=gt)", "%u = tile.cast(%u0, u8)",
                   "%t0 = tile.cmp(%a, %b, cmp=ge)", "%t = tile.cast(%t0, u8)"]))

# test_bitwise.py: torch.bitwise_not, and / or / xor and the shifts on int32.
ba = rng.integers(-(2 ** 31), 2 ** 31 - 1, (8, 32), dtype=np.int64).astype(I)
bb = rng.integers(-(2 ** 31), 2 ** 31 - 1, (8, 32), dtype=np.int64).astype(I)
CASES.append(case("bitwise", {"A": ba, "B": bb},
                  {"Y": ~ba, "Z": ba & bb, "W": ba | bb, "V": ba ^ bb,
                   "U": (ba.astype(np.int64) << 3).astype(I), "T": ba >> 5},
                  ["%y = tile.not(%a)", "%z = tile.and(%a, %b)", "%w = tile.or(%a, %b)",
                   "%v = tile.xor(%a, %b)", "%u = tile.shls(%a, 3)", "%t = tile.shrs(%a, 5)"]))

# test_expand_ops.py / test_row_expand_add.py / test_col_expand_arith.py: the broadcast ops.
ea = signed(16, 32)
rv = signed(16, 1)
cv = (np.abs(signed(1, 32)) + 1).astype(F)
CASES.append(case("expand_ops", {"A": ea, "R": rv, "C": cv},
                  {"Y": ea + rv, "Z": ea - rv, "W": ea * rv, "V": np.maximum(ea, rv),
                   "U": ea / cv, "T": np.minimum(ea, cv), "S": np.broadcast_to(cv, (16, 32)).copy()},
                  ["%y = tile.row_expand_add(%a, %r)", "%z = tile.row_expand_sub(%a, %r)",
                   "%w = tile.row_expand_mul(%a, %r)", "%v = tile.row_expand_max(%a, %r)",
                   "%u = tile.col_expand_div(%a, %c)", "%t = tile.col_expand_min(%a, %c)",
                   "%s = tile.col_expand(%c, [16, 32])"]))

# test_concat.py: torch.cat([a, b], dim=1).
c1, c2 = signed(16, 16), signed(16, 32)
CASES.append(case("concat", {"A": c1, "B": c2}, {"Y": np.concatenate([c1, c2], 1)},
                  ["%y = tile.concat(%a, %b)"]))

# test_cast.py: i32 -> i16 keeps the low bits (torch's .to(torch.int16)).
ci32 = rng.integers(-(2 ** 31), 2 ** 31 - 1, (1, 64), dtype=np.int64).astype(I)
CASES.append(case("cast_i32_i16", {"A": ci32}, {"Y": ci32.astype(np.int16)},
                  ["%y = tile.cast(%a, i16)"]))
# f32 -> i32: PyPTO's default mode="round" rounds to nearest; pto's tile.cast truncates (the
# contract), and PyPTO's floor / ceil modes are a floored remainder away.
fr = np.array([[2.5, -2.5, 1.7, -1.7, 0.2, -0.2, 3.0, -3.0]], F)
CASES.append(case("cast_f32_i32_modes", {"A": fr},
                  {"Y": np.trunc(fr).astype(I), "Z": np.floor(fr).astype(I),
                   "W": np.ceil(fr).astype(I)},
                  ["%y = tile.cast(%a, i32)",
                   "%fr = tile.rems(%a, 1.0)", "%fl = tile.sub(%a, %fr)", "%z = tile.cast(%fl, i32)",
                   "%na = tile.neg(%a)", "%nr = tile.rems(%na, 1.0)", "%nf = tile.sub(%na, %nr)",
                   "%ce = tile.neg(%nf)", "%w = tile.cast(%ce, i32)"]))

# test_unary_math.py / test_abs.py / test_rsqrt.py / test_log.py: the float unary ops (within
# 2 ulp of numpy's float64 values rounded to f32; abs exact).
ua = (np.abs(signed(16, 32)) + F(0.01)).astype(F)
d = ua.astype(np.float64)
CASES.append(case("unary_math", {"A": ua},
                  {"Y": (np.sqrt(d).astype(F), 1), "Z": ((1 / np.sqrt(d)).astype(F), 2),
                   "W": (np.log(d).astype(F), 2), "V": (np.sin(d).astype(F), 2),
                   "U": (np.cos(d).astype(F), 2), "T": (np.exp(-d).astype(F), 2)},
                  ["%y = tile.sqrt(%a)", "%z = tile.rsqrt(%a)", "%w = tile.log(%a)",
                   "%v = tile.sin(%a)", "%u = tile.cos(%a)", "%n = tile.neg(%a)",
                   "%t = tile.exp(%n)"]))
CASES.append(case("abs_recip", {"A": fa}, {"Y": np.abs(fa), "Z": (F(1) / fa).astype(F)},
                  ["%y = tile.abs(%a)", "%z = tile.recip(%a)"]))

# test_part_ops.py: part_add / part_max / part_min with src0 whole and src1 valid [8, 16] of
# [16, 32]: the op where both are valid, src0 elsewhere. pto: fill src1's padding with the op's
# identity (zero, min, max), then the plain op.
p0 = (np.arange(16 * 32, dtype=F).reshape(16, 32) % 13 - 6).astype(F)
p1 = (np.arange(16 * 32, dtype=F).reshape(16, 32) % 7 - 3).astype(F)


def part(op):
    out = op(p0, p1).astype(F)
    out[8:, :] = p0[8:, :]
    out[:, 16:] = p0[:, 16:]
    return out


CASES.append(case("part_add_max_min_mul", {"A": p0, "B": p1},
                  {"Y": part(np.add), "Z": part(np.maximum), "W": part(np.minimum),
                   "V": part(np.multiply)},
                  ["%t = tile.load(%B, [0, 0], [16, 32], valid=[8, 16])",
                   "%b0 = tile.fillpad(%t, pad=zero)", "%y = tile.add(%a, %b0)",
                   "%bmin = tile.fillpad(%t, pad=min)", "%z = tile.max(%a, %bmin)",
                   "%bmax = tile.fillpad(%t, pad=max)", "%w = tile.min(%a, %bmax)",
                   # part_mul: 1 where src1 is invalid (row >= 8 or column >= 16), by a mask
                   "%c = tile.ci(0, [1, 32], dtype=i32)", "%cin = tile.cmps(%c, 16, cmp=lt)",
                   "%cm = tile.col_expand(%cin, [16, 32])",
                   "%r0 = tile.ci(0, [1, 16], dtype=i32)", "%r = tile.transpose(%r0)",
                   "%rin = tile.cmps(%r, 8, cmp=lt)", "%rm = tile.row_expand(%rin, [16, 32])",
                   "%valid = tile.and(%rm, %cm)", "%b1 = tile.sels(%valid, %b0, 1.0)",
                   "%v = tile.mul(%a, %b1)"], noload=("B",)))

# test_paged_gather.py: phys = block_table[idx // bs] * bs + idx % bs; out[i] = src[phys, :size].
BS, NB = 4, 6
pool = signed(NB * BS, 32)
btab = rng.permutation(NB).astype(I)[:, None]
lidx = rng.integers(0, NB * BS, (8, 1)).astype(I)
phys = btab[lidx[:, 0] // BS, 0] * BS + lidx[:, 0] % BS
CASES.append(case("paged_gather", {"P": pool, "T": btab, "X": lidx}, {"Y": pool[phys, :16]},
                  ["%blk = tile.divs(%x, %bs)", "%off = tile.rems(%x, %bs)",
                   "%tb = tile.gather(%t, %blk)", "%base = tile.muls(%tb, %bs)",
                   "%ph = tile.add(%base, %off)", "%y = tile.gather_rows(%P, %ph, [0], [8, 16])"],
                  scalars=["%bs: i32 = 4"], noload=("P",)))

# test_mgather.py, row mode with gather_oob= clamp / wrap / zero (pto: an index outside is a
# launch error, so the policy is written on the indices first).
ROWS = 10
mem = signed(ROWS, 16)
midx = np.array([[3], [12], [0], [9], [25], [7], [10], [1]], I)
zero = np.zeros((8, 16), F)
inb = midx[:, 0] < ROWS
zero[inb] = mem[midx[inb, 0]]
CASES.append(case("mgather_oob", {"M": mem, "X": midx},
                  {"Y": mem[np.minimum(midx[:, 0], ROWS - 1)], "Z": mem[midx[:, 0] % ROWS],
                   "W": zero},
                  ["%cl = tile.mins(%x, 9)", "%y = tile.gather_rows(%M, %cl, [0], [8, 16])",
                   "%wr = tile.rems(%x, 10)", "%z = tile.gather_rows(%M, %wr, [0], [8, 16])",
                   "%in = tile.cmps(%x, 10, cmp=lt)", "%inm = tile.row_expand(%in, [8, 16])",
                   "%w = tile.sels(%inm, %y, 0.0)"], noload=("M",)))

# test_fillpad_expand.py: a [48, 64] source in the top-left of a [64, 64] tile, the rest the pad
# value (+inf for PadValue.max).
fe = signed(48, 64)
want = np.full((64, 64), np.inf, F)
want[:48, :] = fe
CASES.append(case("fillpad_expand", {"A": fe}, {"Y": want},
                  ["%big = tile.full([64, 64], f32, inf)", "%f = tile.fillpad(%a, pad=max)",
                   "%y = tile.assemble(%big, %f, [0, 0])"]))

# test_assemble.py-style: write a [8, 16] tile at (8, 16) of a [16, 32] one.
as_dst, as_src = signed(16, 32), signed(8, 16)
want = as_dst.copy()
want[8:, 16:] = as_src
CASES.append(case("assemble", {"A": as_dst, "B": as_src}, {"Y": want},
                  ["%y = tile.assemble(%a, %b, [8, 16])"]))

# test_broadcast.py-style broadcasting (PyPTO's add of [R, C] and [R, 1] / [1, C] tiles) and
# addc (a + b + c): the expand ops and two adds.
CASES.append(case("broadcast_addc", {"A": ea, "R": rv, "C": cv, "B": fa},
                  {"Y": (ea + rv) + cv, "Z": ((ea + fa) + ea).astype(F)},
                  ["%t = tile.row_expand_add(%a, %r)", "%y = tile.col_expand_add(%t, %c)",
                   "%s = tile.add(%a, %b)", "%z = tile.add(%s, %a)"]))
# ... and without a policy (PyPTO's gather_oob="undefined"), pto refuses the launch, naming the
# index, before anything is read.
CASES.append(case("mgather_oob_refused", {"M": mem, "X": midx}, {"Y": zero},
                  ["%y = tile.gather_rows(%M, %x, [0], [8, 16])"], noload=("M",),
                  err=(1, "= 12 is not a row of %M (0 to 9)")))

# lrelu with a slope above 1 (or below 0): PyPTO's doc string says max(x, slope * x), its test
# x > 0 ? x : slope * x; they part there, and pto's tile.lrelu is the test's select.
lx = np.array([[-2.0, -0.5, 0.0, -0.0, 3.0, np.nan, -np.inf, np.inf]], F)
CASES.append(case("lrelu_slope_outside_0_1", {"A": lx},
                  {"Y": np.where(lx >= 0, lx, lx * F(2.0)).astype(F),
                   "Z": np.where(lx >= 0, lx, lx * F(-0.5)).astype(F)},
                  ["%y = tile.lrelu(%a, 2.0)", "%z = tile.lrelu(%a, -0.5)"]))

# test_col_reduction.py's f16 col_sum rounds to f16 after every step; pto's sums in f32 in index
# order and rounds once (docs/language.md), so the values differ where the f16 steps lose bits.
h = (rng.random((64, 8)) * 3).astype(np.float16)
acc = np.zeros((1, 8), F)
for k in range(64):
    acc = (acc + h[k].astype(F)).astype(F)
CASES.append(case("col_sum_f16_rounds_once", {"A": h}, {"Y": acc.astype(np.float16)},
                  ["%y = tile.col_sum(%a)"]))

# ---- Edge cases of the second op set: what PyPTO's tests leave open, pto fixes (docs/language.md)
# and docs/pypto-language.md ("Edge cases") compares. Each runs compiled and in the interpreter
# (--check, the same bits) and checks the values.
nan, inf = np.nan, np.inf

# argmax / argmin on ties, NaN, signed zeros and infinities. PyPTO's test_argmax_reduction.py
# feeds distinct values ("no tie-break ambiguity vs torch"); pto takes the first extreme, and a
# NaN is the extreme (numpy's and torch's rule). row_max ignores the NaN (fmax): the two differ
# on a row holding NaN, as docs/language.md says; torch.amax, PyPTO's reference, gives NaN.
ax = np.array([[1, 3, 3, 2, 3, 0, -1, 3],
               [0, nan, 5, nan, 5, -5, -5, 1],
               [-0.0, 0.0, -0.0, 0.0, -inf, -inf, inf, inf],
               [2, 2, 2, 2, 2, 2, 2, 2]], F)
CASES.append(case("argmax_ties_nan", {"A": ax},
                  {"Y": np.argmax(ax, 1).astype(I)[:, None],
                   "Z": np.argmin(ax, 1).astype(I)[:, None],
                   "W": np.argmax(ax, 0).astype(I)[None, :],
                   "V": np.argmin(ax, 0).astype(I)[None, :],
                   "U": np.fmax.reduce(ax, 1)[:, None], "T": np.fmin.reduce(ax, 0)[None, :]},
                  ["%y = tile.row_argmax(%a)", "%z = tile.row_argmin(%a)",
                   "%w = tile.col_argmax(%a)", "%v = tile.col_argmin(%a)",
                   "%u = tile.row_max(%a)", "%t = tile.col_min(%a)"]))

# argmax over a valid region (test_argmax_reduction.py's valid_shape cases): the reduction sees
# the pad values, so load with pad=min for argmax (max for argmin); the result keeps the valid
# rows, and its padding rows are not stored.
av = signed(16, 32) - 20  # every value below 0, the default pad
want_y, want_z = np.zeros((16, 1), I), np.zeros((16, 1), I)
want_y[:12, 0] = np.argmax(av[:12, :20], 1)
want_z[:12, 0] = np.argmin(av[:12, :20], 1)
CASES.append(case("argmax_valid_region", {"A": av}, {"Y": want_y, "Z": want_z},
                  ["%lo = tile.load(%A, [0, 0], [16, 32], valid=[12, 20], pad=min)",
                   "%hi = tile.load(%A, [0, 0], [16, 32], valid=[12, 20], pad=max)",
                   "%y = tile.row_argmax(%lo)", "%z = tile.row_argmin(%hi)"], noload=("A",)))


# max / min with NaN and signed zeros: pto's are C's fmax / fmin, +0 above -0 (docs/language.md);
# torch.maximum (PyPTO's test reference) propagates NaN instead.
def fmax_signed(a, b, hi=True):
    r = (np.fmax if hi else np.fmin)(a, b)
    z = (a == 0) & (b == 0)
    pos = (~np.signbit(a)) | (~np.signbit(b)) if hi else (~np.signbit(a)) & (~np.signbit(b))
    r[z] = np.where(pos[z], F(0.0), F(-0.0))
    return r


mxa = np.array([[nan, 1, nan, -0.0, 0.0, -0.0, -inf, inf]], F)
mxb = np.array([[2, nan, nan, 0.0, -0.0, -0.0, nan, -inf]], F)
CASES.append(case("max_min_nan_zeros", {"A": mxa, "B": mxb},
                  {"Y": fmax_signed(mxa, mxb), "Z": fmax_signed(mxa, mxb, False),
                   "W": np.fmax(mxa, F(0.5)), "V": fmax_signed(mxa, np.zeros_like(mxa))},
                  ["%y = tile.max(%a, %b)", "%z = tile.min(%a, %b)", "%w = tile.maxs(%a, 0.5)",
                   "%v = tile.maxs(%a, 0.0)"]))


# sort_idx on ties, NaN, infinities and signed zeros: stable (equal values, -0 and +0 included,
# keep their column order), NaN above +inf. PyPTO's test_sort.py feeds unique values; torch.sort,
# its reference, puts NaN above +inf too, but its CPU sort is not stable unless asked.
def sort_order(row, desc):
    key = [(1, 0.0) if np.isnan(v) else (0, float(v)) for v in row]
    return sorted(range(len(row)), key=lambda j: key[j], reverse=desc)


sx = np.array([[3, 1, 3, nan, -inf, 1, nan, inf, -0.0, 0.0, 3, 1, -0.0, inf, -inf, 2],
               [5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5]], F)
desc = np.array([sort_order(r, True) for r in sx], I)
asc = np.array([sort_order(r, False) for r in sx], I)
CASES.append(case("sort_ties_nan", {"A": sx},
                  {"Y": desc, "Z": asc, "W": np.take_along_axis(sx, desc, 1)},
                  ["%y = tile.sort_idx(%a, order=desc)", "%z = tile.sort_idx(%a, order=asc)",
                   "%rows = tile.ci(0, [1, 2], dtype=i32)", "%col = tile.transpose(%rows)",
                   "%start = tile.muls(%col, 16)", "%pos = tile.row_expand_add(%y, %start)",
                   "%w = tile.gather(%a, %pos)"]))

# tile.gather with a position outside the source: PyPTO leaves it to the hardware; pto refuses
# the launch, naming the index's place and value (tests/unit's interpreter tests hold its own).
gsrc = signed(4, 8)
for bad, name in ((32, "gather_oob_refused"), (-1, "gather_negative_refused")):
    gi = rng.integers(0, 32, (4, 8)).astype(I)
    gi[1, 2] = bad
    CASES.append(case(name, {"A": gsrc, "X": gi}, {"Y": np.zeros((4, 8), F)},
                      ["%y = tile.gather(%a, %x)"],
                      err=(1, "index %d at [1,2] is outside [0, 32)" % bad)))

# sin / cos of large arguments: PyPTO's test_unary_math.py keeps |x| <= 2 pi ("large-arg
# sin/cos accuracy is out of scope"); pto's are within 2 ulp of the correctly rounded value for
# |x| <= 2^20 (docs/language.md), and odd / even for signed zeros; +-inf and NaN give NaN.
lx = np.array([[0.0, -0.0, 1e-30, -3.0, 100.0, 1e3, -1e4, 12345.678, 65536.0, 1e5 + 0.5,
                -5e5, 2.0 ** 20, 7.0e5, 9.99e5, -1048575.9, 3.3e5]], F)
ld = lx.astype(np.float64)
CASES.append(case("sin_cos_large", {"A": lx},
                  {"Y": (np.sin(ld).astype(F), 2), "Z": (np.cos(ld).astype(F), 2)},
                  ["%y = tile.sin(%a)", "%z = tile.cos(%a)"]))
# Past 2^20, to the largest f32, the same 2 ulp bound (Payne-Hanek's reduction there): random
# exponents over the whole range, 1e20 / 1e30 / 3e38 (values far outside [-1, 1] before the
# reduction was replaced), the largest f32, the f32 nearest a multiple of pi/2 in a few binades
# (the hardest to reduce: x 2/pi within ~1e-9 of an integer) and 2^20's neighbours, on either
# side of the switch between the two reductions.
hard = np.array([0x6f79be45, 0x50a3e87f, 0x6a1976f1, 0x53b146a6, 0x65898498, 0x77584625,
                 0x4c2332e9, 0x6c55da58, 0x49800001, 0x497fffff], "<u4").view(F)
hx = (2.0 ** rng.uniform(20, 127.99, (1, 64)) * rng.choice([-1, 1], (1, 64))).astype(F)
hx[0, :6] = [1e20, 1e30, 3e38, -1e30, np.finfo(F).max, -np.finfo(F).max]
hx[0, 6:16] = hard
hx[0, 16:26] = -hard
hd = hx.astype(np.float64)
CASES.append(case("sin_cos_past_2_20", {"A": hx},
                  {"Y": (np.sin(hd).astype(F), 2), "Z": (np.cos(hd).astype(F), 2)},
                  ["%y = tile.sin(%a)", "%z = tile.cos(%a)"]))
sz = np.array([[0.0, -0.0, inf, -inf, nan, 1.0, -1.0, 0.5]], F)
with np.errstate(invalid="ignore"):
    CASES.append(case("sin_cos_specials", {"A": sz},
                      {"Y": (np.sin(sz.astype(np.float64)).astype(F), 2),
                       "Z": (np.cos(sz.astype(np.float64)).astype(F), 2)},
                      ["%y = tile.sin(%a)", "%z = tile.cos(%a)"]))

# transpose and reshape of a partly valid tile (docs/language.md, Semantics): transpose swaps
# the valid region (a store writes [20, 12]); reshape's result is whole, its padding included
# (pad=zero here). PyPTO's tile.transpose makes the whole tile valid, and its reshape keeps a
# region that is a flat prefix (12 full rows of 32 become 24 rows of 16) and rejects another.
pv = signed(16, 32)
tw = np.zeros((32, 16), F)
tw[:20, :12] = pv[:12, :20].T
padded = np.zeros((16, 32), F)
padded[:12, :20] = pv[:12, :20]
rows12 = np.zeros((16, 32), F)
rows12[:12] = pv[:12]
CASES.append(case("transpose_reshape_valid", {"A": pv},
                  {"Y": tw, "Z": padded.reshape(32, 16), "W": rows12.reshape(32, 16)},
                  ["%t = tile.load(%A, [0, 0], [16, 32], valid=[12, 20])",
                   "%y = tile.transpose(%t)", "%z = tile.reshape(%t, [32, 16])",
                   "%r = tile.load(%A, [0, 0], [16, 32], valid=[12, 32])",
                   "%w = tile.reshape(%r, [32, 16])"], noload=("A",)))

# test_scatter.py: PyPTO's element scatter along the columns, out[i, index[i, m]] = val[i, m] in
# ascending m, so of repeated columns the later m wins (its _make_repeat_index case). pto has no
# element scatter; docs/pypto-language.md's composition (tile.sel over a tile.cmp of the indices
# with tile.ci), one column of indices per step of a for, keeps the same rule: a later step
# overwrites.
SB, SS, SK = 8, 16, 8
sbase = (-(np.arange(SB)[:, None] * SS + np.arange(SS)[None, :]) - 1).astype(F)
sidx = ((np.arange(SK)[None, :] // 2 + np.arange(SB)[:, None]) % SS).astype(I)
sval = (np.arange(SB)[:, None] * SK + np.arange(SK)[None, :] + 1).astype(F)
swant = sbase.copy()
for i in range(SB):
    for m in range(SK):
        swant[i, sidx[i, m]] = sval[i, m]
CASES.append(case("scatter_repeat_later_wins", {"A": sbase, "X": sidx, "V": sval}, {"Y": swant},
                  ["%c = tile.ci(0, [1, 16], dtype=i32)", "%cols = tile.col_expand(%c, [8, 16])",
                   "%y = for %m in range(0, 8) iter(%o = %a) {",
                   "  %im = tile.extract(%x, [0, %m], [8, 1])",
                   "  %ie = tile.row_expand(%im, [8, 16])",
                   "  %hit = tile.cmp(%cols, %ie, cmp=eq)",
                   "  %vm = tile.extract(%v, [0, %m], [8, 1])",
                   "  %ve = tile.row_expand(%vm, [8, 16])",
                   "  %o2 = tile.sel(%hit, %ve, %o)",
                   "  yield %o2", "}"]))

# extract of a partly valid tile: pto's result is whole, the source's padding included (pad=zero
# here), so a store writes all [8, 16]; PyPTO's tile.slice keeps the window's part of the valid
# region ([4, 12] here) and a store writes that.
ew = np.zeros((8, 16), F)
ew[:4, :12] = pv[8:12, 8:20]
CASES.append(case("extract_valid", {"A": pv}, {"Y": ew},
                  ["%t = tile.load(%A, [0, 0], [16, 32], valid=[12, 20])",
                   "%y = tile.extract(%t, [8, 8], [8, 16])"], noload=("A",)))

# Masks and NaN: every comparison with NaN is false but ne (torch's and numpy's rule, so PyPTO's
# too); a mask selects with sel / sels and casts to 0 / 1.
na = np.array([[nan, nan, 1.0, -0.0, inf, -inf, 2.0, nan]], F)
nb = np.array([[nan, 1.0, nan, 0.0, inf, inf, 2.0, -inf]], F)
with np.errstate(invalid="ignore"):
    CASES.append(case("cmp_sel_nan", {"A": na, "B": nb},
                      {"Y": (na == nb).astype(np.uint8), "Z": (na != nb).astype(np.uint8),
                       "W": (na < nb).astype(np.uint8), "V": (na >= nb).astype(np.uint8),
                       "U": np.where(na > nb, na, nb).astype(F),
                       "T": np.where(na == na, na, F(0.0)).astype(F)},
                      ["%e = tile.cmp(%a, %b, cmp=eq)", "%y = tile.cast(%e, u8)",
                       "%n = tile.cmp(%a, %b, cmp=ne)", "%z = tile.cast(%n, u8)",
                       "%l = tile.cmp(%a, %b, cmp=lt)", "%w = tile.cast(%l, u8)",
                       "%g = tile.cmp(%a, %b, cmp=ge)", "%v = tile.cast(%g, u8)",
                       "%gt = tile.cmp(%a, %b, cmp=gt)", "%u = tile.sel(%gt, %a, %b)",
                       "%ok = tile.cmp(%a, %a, cmp=eq)", "%t = tile.sels(%ok, %a, 0.0)"]))

# dtype promotion: PyPTO's binary tile ops promote (float over integer, the wider, signed over
# unsigned: INT32 + FP32 is FP32); pto's take one dtype and say so, and tile.cast is explicit.
CASES.append(Case("binary_dtypes_differ",
                  kprog([("A", (8, 16), "f32"), ("B", (8, 16), "i32")], [("Y", (8, 16), "f32")],
                        ["%y = tile.add(%a, %b)"]),
                  cmd="check", err=(2, "tile.add: dtypes f32 and i32 differ")))
CASES.append(case("binary_dtypes_cast", {"A": fa[:8, :16], "B": ia},
                  {"Y": (fa[:8, :16] + ia.astype(F)).astype(F)},
                  ["%bf = tile.cast(%b, f32)", "%y = tile.add(%a, %bf)"]))
