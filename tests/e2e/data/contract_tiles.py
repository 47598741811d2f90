# Tile ops of both sets against the language's contract (docs/language.md, Ops), with expected
# values from numpy. Run by tests/e2e/contract_tiles.sh.


def kprog(ins, outs, body, scalars=(), name="t"):
    """A kernel entry @k: each input ("A", shape, dtype) is a tensor %A loaded whole into tile
    %a; each output ("Y", shape, dtype) a tensor %Y that the tile %y (made by body) is stored
    to. scalars are extra parameters ("%s: f32 = runtime")."""
    params = ["%%%s: tensor[%s] %s" % (n, ", ".join(map(str, s)), d) for n, s, d in ins]
    params += ["out %%%s: tensor[%s] %s" % (n, ", ".join(map(str, s)), d) for n, s, d in outs]
    params += list(scalars)
    arrow = ", ".join("tensor[%s] %s" % (", ".join(map(str, s)), d) for _, s, d in outs)
    loads = "".join("  %%%s = tile.load(%%%s, [0, 0], [%d, %d])\n" % (n.lower(), n, s[0], s[1])
                    for n, s, _ in ins)
    lines = "".join("  %s\n" % l for l in body)
    stores = "".join("  %%%s_ = tile.store(%%%s, [0, 0], %%%s)\n" % (n, n.lower(), n)
                     for n, _, _ in outs)
    rets = ", ".join("%%%s_" % n for n, _, _ in outs)
    return "program %s\nkernel @k(%s) -> (%s) {\n%s%s%s  return %s\n}\n" % (
        name, ", ".join(params), arrow, loads, lines, stores, rets)


def case(name, ins, outs, body, want, scalars=(), sargs=None, **kw):
    """ins: {name: array}; outs: {name: array or (array, ulps)} (the expected values)."""
    def spec(n, v):
        a = v[0] if isinstance(v, tuple) else v
        dt = DT[np.asarray(a).dtype.str] if not n.endswith("_bf16") else "bf16"
        return (n, np.asarray(a).shape, dt)
    prog = kprog([spec(n, v) for n, v in ins.items()], [spec(n, v) for n, v in outs.items()],
                 body, scalars)
    feeds = dict(ins)
    feeds.update(sargs or {})
    return Case(name, prog, ins=feeds, want=outs, args=["--entry", "k"], **kw)


DT = {"<f2": "f16", "<f4": "f32", "<f8": "f64", "|i1": "i8", "<i2": "i16", "<i4": "i32",
      "<i8": "i64", "|u1": "u8", "<u2": "u16", "<u4": "u32", "<u8": "u64", "|b1": "bool"}
F, I = np.float32, np.int32
rng = np.random.default_rng(20)
NAN, INF = np.float32(np.nan), np.float32(np.inf)
CASES = []

# -- first set ---------------------------------------------------------------------------------
a = rng.standard_normal((8, 16)).astype(F)
b = rng.standard_normal((8, 16)).astype(F)
b[0, :4] = [0.0, -0.0, INF, NAN]
CASES.append(case("elementwise_f32", {"A": a, "B": b},
                  {"Y": a + b, "Z": a - b, "W": a * b, "V": a / b},
                  ["%y = tile.add(%a, %b)", "%z = tile.sub(%a, %b)", "%w = tile.mul(%a, %b)",
                   "%v = tile.div(%a, %b)"], None))
ia = np.array([[-7, 7, -7, 7, -2147483648, 0, 5, -1]], I)
ib = np.array([[2, -2, -2, 2, -1, 3, 7, 2]], I)
CASES.append(case("int_div_floors", {"A": ia, "B": ib},
                  {"Y": np.array([[-4, -4, 3, 3, -2147483648, 0, 0, -1]], I),
                   "Z": ia - ib,
                   "W": np.array([[-14, -14, 14, 14, -2147483648, 0, 35, -2]], I)},
                  ["%y = tile.div(%a, %b)", "%z = tile.sub(%a, %b)", "%w = tile.mul(%a, %b)"],
                  None))
CASES.append(case("int_div_runtime_zero", {"A": ia, "B": np.zeros((1, 8), I)},
                  {"Y": ia}, ["%y = tile.div(%a, %b)"], None, err=(1, "zero")))
CASES.append(case("scalar_ops_f32", {"A": a},
                  {"Y": a + F(0.5), "Z": a - F(2), "W": a * F(3), "V": a / F(4),
                   "U": np.maximum(a, F(0.25)), "T": np.minimum(a, F(-0.25))},
                  ["%y = tile.adds(%a, 0.5)", "%z = tile.subs(%a, 2)", "%w = tile.muls(%a, %s)",
                   "%v = tile.divs(%a, 4.0)", "%u = tile.maxs(%a, 0.25)",
                   "%t = tile.mins(%a, -0.25)"], None, scalars=["%s: f32 = runtime"],
                  sargs={"s": "3"}))
ua = np.array([[3, 0, 255, 128]], np.uint8)
CASES.append(case("unsigned_unary", {"A": ua},
                  {"Y": np.array([[253, 0, 1, 128]], np.uint8), "Z": ua, "W": ua,
                   "V": np.array([[1, 0, 85, 42]], np.uint8)},
                  ["%y = tile.neg(%a)", "%z = tile.abs(%a)", "%w = tile.relu(%a)",
                   "%v = tile.divs(%a, 3)"], None))
sa = np.array([[-2147483648, -5, 0, 5]], I)
CASES.append(case("signed_unary", {"A": sa},
                  {"Y": np.array([[-2147483648, 5, 0, -5]], I),
                   "Z": np.array([[-2147483648, 5, 0, 5]], I),
                   "W": np.array([[0, 0, 0, 5]], I)},
                  ["%y = tile.neg(%a)", "%z = tile.abs(%a)", "%w = tile.relu(%a)"], None))
pos = np.abs(a) + F(0.01)
with np.errstate(all="ignore"):
    CASES.append(case("unary_f32", {"A": a, "P": pos},
                      {"Y": (np.exp(a), 2), "Z": (np.log(pos), 2), "W": np.sqrt(pos),
                       "V": (F(1) / np.sqrt(pos), 2), "U": F(1) / pos,
                       "T": np.maximum(a, F(0)), "S": -a, "R": np.abs(a),
                       "Q": ((1 / (1 + np.exp(-a.astype(np.float64)))).astype(F), 3)},
                      ["%y = tile.exp(%a)", "%z = tile.log(%p)", "%w = tile.sqrt(%p)",
                       "%v = tile.rsqrt(%p)", "%u = tile.recip(%p)", "%t = tile.relu(%a)",
                       "%s = tile.neg(%a)", "%r = tile.abs(%a)", "%q = tile.sigmoid(%a)"], None))
sp = np.array([[0.0, -0.0, INF, -INF, NAN, -1.0, 1e-45, 88.8]], F)
with np.errstate(all="ignore"):
    CASES.append(case("unary_specials", {"A": sp},
                      {"Y": (np.exp(sp.astype(np.float64)).astype(F), 1),
                       "Z": np.log(sp.astype(np.float64)).astype(F), "W": np.sqrt(sp),
                       "V": F(1) / sp, "S": -sp, "R": np.abs(sp)},
                      ["%y = tile.exp(%a)", "%z = tile.log(%a)", "%w = tile.sqrt(%a)",
                       "%v = tile.recip(%a)", "%s = tile.neg(%a)", "%r = tile.abs(%a)"], None))
cf = np.array([[2.7, -2.7, 0.5, -0.5, 3e9, -3e9, NAN, INF]], F)
CASES.append(case("cast_float_to_int", {"A": cf},
                  {"Y": np.array([[2, -2, 0, 0, 2147483647, -2147483648, 0, 2147483647]], I),
                   "Z": np.array([[2, 0, 0, 0, 255, 0, 0, 255]], np.uint8),
                   "W": np.array([[2, -2, 0, 0, 127, -128, 0, 127]], np.int8),
                   "V": np.array([[1, 1, 1, 1, 1, 1, 1, 1]], np.bool_)},
                  ["%y = tile.cast(%a, i32)", "%z = tile.cast(%a, u8)", "%w = tile.cast(%a, i8)",
                   "%v = tile.cast(%a, bool)"], None))
ci = np.array([[300, -1, 65535, -129, 0, 2, 128, 256]], I)
CASES.append(case("cast_int_narrowing", {"A": ci},
                  {"Y": ci.astype(np.int8), "Z": ci.astype(np.uint8), "W": ci.astype(np.uint16),
                   "V": ci.astype(F), "U": ci != 0},
                  ["%y = tile.cast(%a, i8)", "%z = tile.cast(%a, u8)", "%w = tile.cast(%a, u16)",
                   "%v = tile.cast(%a, f32)", "%u = tile.cast(%a, bool)"], None))
# f32 -> f16 rounds to nearest-even; overflow gives inf; f16 arithmetic in f32, rounded once.
h = np.array([[1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 65520.0, 1e-8, -0.0, 65504.0, 2049.0, 2051.0]],
             F)
CASES.append(case("cast_to_f16", {"A": h}, {"Y": h.astype(np.float16)},
                  ["%y = tile.cast(%a, f16)"], None))
ha = rng.standard_normal((8, 16)).astype(np.float16)
hb = rng.standard_normal((8, 16)).astype(np.float16)
f32a, f32b = ha.astype(F), hb.astype(F)
CASES.append(case("f16_arith_once", {"A": ha, "B": hb},
                  {"Y": (f32a * f32b).astype(np.float16), "Z": (f32a / f32b).astype(np.float16),
                   "W": (f32a + f32b).astype(np.float16),
                   "V": (f32a * F(np.float16(0.1))).astype(np.float16)},
                  ["%y = tile.mul(%a, %b)", "%z = tile.div(%a, %b)", "%w = tile.add(%a, %b)",
                   "%v = tile.muls(%a, 0.1)"], None))
# bf16 (raw bits in u16 files): the sum rounded once to nearest-even.
ba = bf16(rng.standard_normal((4, 16)).astype(F))
bb = bf16(rng.standard_normal((4, 16)).astype(F))
CASES.append(Case("bf16_add", """program b
kernel @k(%A: tensor[4, 16] bf16, %B: tensor[4, 16] bf16, out %Y: tensor[4, 16] bf16) -> (tensor[4, 16] bf16) {
  %a = tile.load(%A, [0, 0], [4, 16])
  %b = tile.load(%B, [0, 0], [4, 16])
  %y = tile.add(%a, %b)
  %Y1 = tile.store(%y, [0, 0], %Y)
  return %Y1
}
""", ins={"A": ba, "B": bb}, want={"Y": bf16(bf16_to_f32(ba) + bf16_to_f32(bb))},
    args=["--entry", "k"]))
# reductions in index order; reductions see the pad value
r = rng.standard_normal((8, 16)).astype(F)
def seqsum(a, axis):
    """Sums in index order, each step rounded to a's dtype."""
    a = np.moveaxis(a, axis, 0)
    s = np.zeros(a.shape[1:], a.dtype)
    for row in a:
        s = (s + row).astype(a.dtype)
    return np.expand_dims(s, axis)
CASES.append(case("reductions", {"A": r},
                  {"Y": r.max(1, keepdims=True), "Z": r.min(1, keepdims=True),
                   "W": r.max(0, keepdims=True), "V": r.min(0, keepdims=True),
                   "U": seqsum(r, 1), "T": seqsum(r, 0)},
                  ["%y = tile.row_max(%a)", "%z = tile.row_min(%a)", "%w = tile.col_max(%a)",
                   "%v = tile.col_min(%a)", "%u = tile.row_sum(%a)", "%t = tile.col_sum(%a)"],
                  None))
ri = rng.integers(-100, 100, (8, 16)).astype(I)
CASES.append(case("reductions_int", {"A": ri},
                  {"Y": ri.sum(1, keepdims=True, dtype=I), "Z": ri.min(0, keepdims=True),
                   "W": ri.max(1, keepdims=True)},
                  ["%y = tile.row_sum(%a)", "%z = tile.col_min(%a)", "%w = tile.row_max(%a)"],
                  None))
v = rng.standard_normal((8, 1)).astype(F)
w = rng.standard_normal((1, 16)).astype(F) + F(3)
CASES.append(case("expand_ops", {"A": r, "V": v, "W": w},
                  {"Y": r + v, "Z": r - v, "X": r * v, "U": r / v, "T": r + w, "S": r - w,
                   "Q": r * w, "P": r / w},
                  ["%y = tile.row_expand_add(%a, %v)", "%z = tile.row_expand_sub(%a, %v)",
                   "%x = tile.row_expand_mul(%a, %v)", "%u = tile.row_expand_div(%a, %v)",
                   "%t = tile.col_expand_add(%a, %w)", "%s = tile.col_expand_sub(%a, %w)",
                   "%q = tile.col_expand_mul(%a, %w)", "%p = tile.col_expand_div(%a, %w)"], None))
# matmul: f32 accumulation of f16 inputs; i32 for integer inputs; matmul_acc adds in place;
# an acc tile stores to an f16 tensor, rounded to nearest-even.
ml = rng.integers(-4, 5, (16, 32)).astype(np.float16)
mr = rng.integers(-4, 5, (32, 16)).astype(np.float16)
mm = ml.astype(F) @ mr.astype(F)
CASES.append(Case("matmul_f16", """program m
kernel @k(%L: tensor[16, 32] f16, %R: tensor[32, 16] f16, out %Y: tensor[16, 16] f32,
          out %Z: tensor[16, 16] f32, out %H: tensor[16, 16] f16)
    -> (tensor[16, 16] f32, tensor[16, 16] f32, tensor[16, 16] f16) {
  %lm = tile.load(%L, [0, 0], [16, 32], space=mat)
  %rm = tile.load(%R, [0, 0], [32, 16], space=mat)
  %l = tile.move(%lm, space=left)
  %r = tile.move(%rm, space=right)
  %p = tile.matmul(%l, %r)
  %z0 = tile.full([16, 16], f32, 1.5, space=acc)
  %z = tile.matmul_acc(%z0, %l, %r)
  %h = tile.matmul_acc(%p, %l, %r)
  %Y1 = tile.store(%p, [0, 0], %Y)
  %Z1 = tile.store(%z, [0, 0], %Z)
  %H1 = tile.store(%h, [0, 0], %H)
  return %Y1, %Z1, %H1
}
""", ins={"L": ml, "R": mr}, want={"Y": mm, "Z": mm + F(1.5), "H": (2 * mm).astype(np.float16)},
    args=["--entry", "k"]))
il = rng.integers(-128, 128, (16, 32)).astype(np.int8)
ir_ = rng.integers(-128, 128, (32, 16)).astype(np.int8)
CASES.append(Case("matmul_i8", """program m
kernel @k(%L: tensor[16, 32] i8, %R: tensor[32, 16] i8, out %Y: tensor[16, 16] i32) -> (tensor[16, 16] i32) {
  %lm = tile.load(%L, [0, 0], [16, 32], space=mat)
  %rm = tile.load(%R, [0, 0], [32, 16], space=mat)
  %l = tile.move(%lm, space=left)
  %r = tile.move(%rm, space=right)
  %p = tile.matmul(%l, %r)
  %Y1 = tile.store(%p, [0, 0], %Y)
  return %Y1
}
""", ins={"L": il, "R": ir_}, want={"Y": il.astype(I) @ ir_.astype(I)}, args=["--entry", "k"]))
# valid regions: pad values fill the rest; min/max are -inf/+inf for floats and the dtype's
# extremes for integers; stores write only the valid region; reductions see the pad.
x = rng.standard_normal((8, 16)).astype(F)
def padded(src, r, c, fill):
    o = np.full((8, 16), fill, src.dtype)
    o[:r, :c] = src[:r, :c]
    return o
CASES.append(Case("valid_pads", """program v
kernel @k(%X: tensor[8, 16] f32, %XI: tensor[8, 16] i32, out %Y: tensor[8, 16] f32,
          out %Z: tensor[8, 16] f32, out %W: tensor[8, 16] i32, out %V: tensor[8, 16] i32,
          out %M: tensor[8, 1] f32, inout %S: tensor[8, 16] f32)
    -> (tensor[8, 16] f32, tensor[8, 16] f32, tensor[8, 16] i32, tensor[8, 16] i32,
        tensor[8, 1] f32, tensor[8, 16] f32) {
  %a = tile.load(%X, [0, 0], [8, 16], valid=[6, 10], pad=min)
  %b = tile.load(%X, [0, 0], [8, 16], valid=[6, 10], pad=max)
  %c = tile.load(%XI, [0, 0], [8, 16], valid=[5, 3], pad=min)
  %d = tile.load(%XI, [0, 0], [8, 16], valid=[5, 3], pad=max)
  %fa = tile.fillpad(%a, pad=min)
  %fb = tile.fillpad(%b, pad=max)
  %fc = tile.fillpad(%c, pad=min)
  %fd = tile.fillpad(%d, pad=max)
  %m = tile.row_max(%b)
  %e = tile.load(%X, [0, 0], [8, 16], valid=[3, 4])
  %Y1 = tile.store(%fa, [0, 0], %Y)
  %Z1 = tile.store(%fb, [0, 0], %Z)
  %W1 = tile.store(%fc, [0, 0], %W)
  %V1 = tile.store(%fd, [0, 0], %V)
  %M1 = tile.store(%m, [0, 0], %M)
  %S1 = tile.store(%e, [0, 0], %S)
  return %Y1, %Z1, %W1, %V1, %M1, %S1
}
""", ins={"X": x, "XI": (x * 100).astype(I), "S": np.full((8, 16), 7, F)},
    want={"Y": padded(x, 6, 10, -INF), "Z": padded(x, 6, 10, INF),
          "W": padded((x * 100).astype(I), 5, 3, np.iinfo(I).min),
          "V": padded((x * 100).astype(I), 5, 3, np.iinfo(I).max),
          # the reduction keeps the source's valid rows: rows 6 and 7 are not stored
          "M": np.where(np.arange(8)[:, None] < 6, INF, 0).astype(F),
          "S": np.where((np.arange(8)[:, None] < 3) & (np.arange(16) < 4), x, F(7))},
    args=["--entry", "k"]))
# a rank-3 tensor: the leading dim indexed by the offsets alone
x3 = rng.standard_normal((3, 8, 16)).astype(F)
CASES.append(Case("load_rank3", """program r3
kernel @k(%X: tensor[3, 8, 16] f32, out %Y: tensor[3, 8, 16] f32) -> (tensor[3, 8, 16] f32) {
  %t = tile.load(%X, [2, 4, 8], [4, 8])
  %Y1 = tile.store(%t, [0, 0, 0], %Y)
  %u = tile.load(%X, [1, 0, 0], [8, 16])
  %Y2 = tile.store(%u, [2, 0, 0], %Y1)
  return %Y2
}
""", ins={"X": x3}, want={"Y": np.concatenate([
    np.pad(x3[2, 4:8, 8:16], ((0, 4), (0, 8)))[None], np.zeros((1, 8, 16), F), x3[1][None]])},
    args=["--entry", "k"]))

# -- second set --------------------------------------------------------------------------------
# sin/cos: f32 within 2 ulp for |x| <= 2^20; sin(-0) = -0.
tx = np.concatenate([rng.uniform(-10, 10, 40), rng.uniform(-2.0**20, 2.0**20, 20),
                     [0.0, -0.0, np.pi, 1e-30]]).astype(F).reshape(4, 16)
CASES.append(case("sin_cos", {"A": tx},
                  {"Y": (np.sin(tx.astype(np.float64)).astype(F), 2),
                   "Z": (np.cos(tx.astype(np.float64)).astype(F), 2)},
                  ["%y = tile.sin(%a)", "%z = tile.cos(%a)"], None))
CASES.append(case("sin_neg_zero", {"A": np.array([[-0.0, 0.0]], F)},
                  {"Y": np.array([[-0.0, 0.0]], F)}, ["%y = tile.sin(%a)"], None))
# rem: floored (sign of the divisor); fmod: C's (sign of the dividend)
ra = np.array([[7, -7, 7, -7, -2147483648, 0, 5, -5]], I)
rb = np.array([[3, 3, -3, -3, -1, 4, 5, 1]], I)
CASES.append(case("rem_int", {"A": ra, "B": rb},
                  {"Y": np.mod(ra, rb).astype(I), "Z": np.mod(ra, 3).astype(I),
                   "W": np.mod(ra, -4).astype(I)},
                  ["%y = tile.rem(%a, %b)", "%z = tile.rems(%a, 3)", "%w = tile.rems(%a, -4)"],
                  None))
CASES.append(case("rem_int_zero", {"A": ra, "B": np.zeros_like(rb)}, {"Y": ra},
                  ["%y = tile.rem(%a, %b)"], None, err=(1, "zero")))
fa = np.array([[5.5, -5.5, 5.5, -5.5, 1e-30, -1e-30, 6.0, -6.0]], F)
fb = np.array([[2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 3.0, 3.0]], F)
CASES.append(case("rem_fmod_float", {"A": fa, "B": fb},
                  {"Y": np.mod(fa, fb), "Z": np.fmod(fa, fb), "W": np.fmod(fa, F(-2)),
                   "V": np.mod(fa, F(-2))},
                  ["%y = tile.rem(%a, %b)", "%z = tile.fmod(%a, %b)", "%w = tile.fmods(%a, -2.0)",
                   "%v = tile.rems(%a, -2.0)"], None))
la = np.array([[-2.0, -0.5, 0.0, -0.0, 3.0, -INF, NAN, 1.0]], F)
ls = np.array([[0.5, 2.0, 3.0, -1.0, 0.1, 0.25, 4.0, -2.0]], F)
CASES.append(case("lrelu_prelu", {"A": la, "S": ls},
                  {"Y": np.where(la >= 0, la, la * F(0.1)), "Z": np.where(la >= 0, la, la * ls)},
                  ["%y = tile.lrelu(%a, 0.1)", "%z = tile.prelu(%a, %s)"], None))
ba_ = np.array([[0, 1, 0, 1]], np.bool_)
bb_ = np.array([[0, 0, 1, 1]], np.bool_)
CASES.append(case("bool_logic", {"A": ba_, "B": bb_},
                  {"Y": ba_ & bb_, "Z": ba_ | bb_, "W": ba_ ^ bb_, "V": ~ba_},
                  ["%y = tile.and(%a, %b)", "%z = tile.or(%a, %b)", "%w = tile.xor(%a, %b)",
                   "%v = tile.not(%a)"], None))
sh = np.array([[1, -8, -1, 1 << 30, -2147483648, 5, 5, -5]], I)
cnt = np.array([[1, 1, 31, 1, 31, 32, -1, 40]], I)
def shl(x, n): return np.where((n < 0) | (n >= 32), 0, (x.astype(np.int64) << np.clip(n, 0, 31)).astype(np.int64) & 0xffffffff).astype(np.uint32).view(I)
def sar(x, n): return np.where((n < 0) | (n >= 32), np.where(x < 0, -1, 0), x >> np.clip(n, 0, 31)).astype(I)
us = sh.view(np.uint32)
def shru(x, n): return np.where((n < 0) | (n >= 32), 0, x >> np.clip(n, 0, 31).astype(np.uint32)).astype(np.uint32)
CASES.append(case("shifts", {"A": sh, "N": cnt, "U": us, "M": cnt.view(np.uint32)},
                  {"Y": shl(sh, cnt), "Z": sar(sh, cnt), "W": shru(us, cnt.view(np.uint32)),
                   "V": sar(sh, np.full_like(cnt, 33)), "X": shl(sh, np.full_like(cnt, 3)),
                   "T": shru(us, np.full_like(cnt, 32)), "S": shl(us.view(I), np.full_like(cnt, 31)).view(np.uint32)},
                  ["%y = tile.shl(%a, %n)", "%z = tile.shr(%a, %n)", "%w = tile.shr(%u, %m)",
                   "%v = tile.shrs(%a, 33)", "%x = tile.shls(%a, 3)", "%t = tile.shrs(%u, 32)",
                   "%s = tile.shls(%u, 31)"], None))
ca = np.array([[1.0, NAN, NAN, -0.0, INF, 2.0, -INF, 3.0]], F)
cb = np.array([[1.0, 1.0, NAN, 0.0, INF, 1.0, 0.0, 4.0]], F)
ops = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
       "gt": np.greater, "ge": np.greater_equal}
with np.errstate(invalid="ignore"):
    CASES.append(case("cmp_nan", {"A": ca, "B": cb},
                      dict(("Y" + k.upper(), f(ca, cb)) for k, f in ops.items()) |
                      {"S": np.greater(ca, F(1.0)), "T": np.not_equal(ca, NAN)},
                      ["%%y%s = tile.cmp(%%a, %%b, cmp=%s)" % (k, k) for k in ops] +
                      ["%s = tile.cmps(%a, 1.0, cmp=gt)", "%t = tile.cmps(%a, nan, cmp=ne)"],
                      None))
m = np.array([[1, 0, 1, 0]], np.bool_)
sa_ = np.array([[1.0, 2.0, 3.0, 4.0]], F)
sb_ = np.array([[-1.0, -2.0, -3.0, -4.0]], F)
CASES.append(case("sel_sels", {"M": m, "A": sa_, "B": sb_},
                  {"Y": np.where(m, sa_, sb_), "Z": np.where(m, sa_, F(9.5))},
                  ["%y = tile.sel(%m, %a, %b)", "%z = tile.sels(%m, %a, 9.5)"], None))
pa = np.array([[2.0, 3.0, 0.5, -1.0], [1e30, 1e30, 1e-30, 1e-30], [NAN, 1, 2, 3]], F)
CASES.append(case("prod_order", {"A": pa},
                  {"Y": np.array([[-3.0], [F(F(F(1e30) * F(1e30)) * F(1e-30)) * F(1e-30)], [NAN]], F),
                   "Z": np.prod(pa, axis=0, keepdims=True, dtype=F)},
                  ["%y = tile.row_prod(%a)", "%z = tile.col_prod(%a)"], None))
am = np.array([[1, 3, 3, 2], [NAN, 5, NAN, 1], [-INF, -INF, 0, 0], [2, 2, 2, 2]], F)
CASES.append(case("argmax_ties_nan", {"A": am},
                  {"Y": np.argmax(am, 1).astype(I)[:, None], "Z": np.argmin(am, 1).astype(I)[:, None],
                   "W": np.argmax(am, 0).astype(I)[None], "V": np.argmin(am, 0).astype(I)[None]},
                  ["%y = tile.row_argmax(%a)", "%z = tile.row_argmin(%a)",
                   "%w = tile.col_argmax(%a)", "%v = tile.col_argmin(%a)"], None))
ea = rng.standard_normal((4, 8)).astype(F)
ev = rng.standard_normal((4, 1)).astype(F)
ew = rng.standard_normal((1, 8)).astype(F)
CASES.append(case("expand_max_min_expdif", {"A": ea, "V": ev, "W": ew},
                  {"Y": np.maximum(ea, ev), "Z": np.minimum(ea, ev), "X": np.maximum(ea, ew),
                   "U": np.minimum(ea, ew), "T": (np.exp(ea - ev), 2), "S": (np.exp(ea - ew), 2)},
                  ["%y = tile.row_expand_max(%a, %v)", "%z = tile.row_expand_min(%a, %v)",
                   "%x = tile.col_expand_max(%a, %w)", "%u = tile.col_expand_min(%a, %w)",
                   "%t = tile.row_expand_expdif(%a, %v)", "%s = tile.col_expand_expdif(%a, %w)"],
                  None))
CASES.append(case("expand_transpose", {"V": ev, "W": ew, "A": ea},
                  {"Y": np.repeat(ev, 8, 1), "Z": np.repeat(ew, 4, 0), "X": ea.T.copy()},
                  ["%y = tile.row_expand(%v, [4, 8])", "%z = tile.col_expand(%w, [4, 8])",
                   "%x = tile.transpose(%a)"], None))
la2 = np.arange(64, dtype=I).reshape(8, 8)
lb2 = -np.arange(32, dtype=I).reshape(8, 4)
asm = la2.copy()
asm[2:4, 4:8] = la2[0:2, 0:4]
CASES.append(case("layout_ops", {"A": la2, "B": lb2},
                  {"Y": la2[2:5, 3:7].copy(), "Z": np.concatenate([la2, lb2], 1),
                   "W": la2.reshape(4, 16), "V": asm},
                  ["%y = tile.extract(%a, [2, %c3], [3, 4])", "%z = tile.concat(%a, %b)",
                   "%w = tile.reshape(%a, [4, 16])", "%q = tile.extract(%a, [0, 0], [2, 4])",
                   "%v = tile.assemble(%a, %q, [2, 4])"], None,
                  scalars=["%c: index = runtime"], sargs={"c": "3"}))
CASES[-1].prog = CASES[-1].prog.replace("%c3", "%c")
CASES.append(case("extract_runtime_oob", {"A": la2}, {"Y": la2[0:3, 0:4].copy()},
                  ["%y = tile.extract(%a, [%c, 0], [3, 4])"], None,
                  scalars=["%c: index = runtime"], sargs={"c": "6"}, err=(1, "extract")))
CASES.append(case("ci_tri", {"A": np.zeros((1, 1), I)},
                  {"Y": (5 + np.arange(8)).astype(I)[None], "Z": (5 - np.arange(8)).astype(np.int16)[None],
                   "W": np.tril(np.ones((4, 6), F), 1), "V": np.triu(np.ones((4, 6), I), -1),
                   "U": (-3 + np.arange(8)).astype(np.int64)[None]},
                  ["%y = tile.ci(5, [1, 8], dtype=i32)", "%z = tile.ci(5, [1, 8], dtype=i16, descending=true)",
                   "%w = tile.tri(1, [4, 6], dtype=f32)", "%v = tile.tri(%d, [4, 6], dtype=i32, upper=true)",
                   "%u = tile.ci(%st, [1, 8], dtype=i64)"], None,
                  scalars=["%d: i32 = runtime", "%st: i64 = runtime"], sargs={"d": "-1", "st": "-3"}))
gs = rng.standard_normal((4, 8)).astype(F)
gi = np.array([[31, 0, 7, 8], [8, 8, 8, 8]], I)
CASES.append(case("gather", {"S": gs, "I": gi}, {"Y": gs.reshape(-1)[gi]},
                  ["%y = tile.gather(%s, %i)"], None))
CASES.append(case("gather_oob", {"S": gs, "I": np.array([[0, 32]], I)}, {"Y": np.zeros((1, 2), F)},
                  ["%y = tile.gather(%s, %i)"], None, err=(1, "32")))
CASES.append(case("gather_negative", {"S": gs, "I": np.array([[-1, 0]], I)}, {"Y": np.zeros((1, 2), F)},
                  ["%y = tile.gather(%s, %i)"], None, err=(1, "-1")))
tab = rng.standard_normal((10, 16)).astype(F)
ids = np.array([[3], [3], [0], [9]], I)
CASES.append(Case("gather_scatter_rows", """program g
kernel @k(%T: tensor[10, 16] f32, %I: tensor[4, 1] i32, %S: tensor[4, 8] f32, out %Y: tensor[4, 8] f32,
          inout %Z: tensor[10, 16] f32) -> (tensor[4, 8] f32, tensor[10, 16] f32) {
  %i = tile.load(%I, [0, 0], [4, 1])
  %g = tile.gather_rows(%T, %i, [4], [4, 8])
  %Y1 = tile.store(%g, [0, 0], %Y)
  %s = tile.load(%S, [0, 0], [4, 8])
  %Z1 = tile.scatter_rows(%s, %i, [8], %Z)
  return %Y1, %Z1
}
""", ins={"T": tab, "I": ids, "S": np.arange(32, dtype=F).reshape(4, 8), "Z": tab},
    want={"Y": tab[ids[:, 0], 4:12],
          "Z": (lambda z: (z.__setitem__((slice(3, 4), slice(8, 16)), np.arange(8, 16, dtype=F)[None]),
                           z.__setitem__((slice(0, 1), slice(8, 16)), np.arange(16, 24, dtype=F)[None]),
                           z.__setitem__((slice(9, 10), slice(8, 16)), np.arange(24, 32, dtype=F)[None]), z)[-1])(tab.copy())},
    args=["--entry", "k"]))
st = np.array([[3, 1, 3, NAN, INF, -INF, 1, 0], [2, 2, 2, 2, 2, 2, 2, 2],
               [-0.0, 0.0, -0.0, 0.0, NAN, NAN, 1, -1]], F)
def sort_idx(a, desc):
    out = []
    for row in a:
        key = [(0 if np.isnan(v) else 1, -v if not np.isnan(v) else 0) if desc else
               (1 if np.isnan(v) else 0, v if not np.isnan(v) else 0) for v in row]
        out.append(sorted(range(len(row)), key=lambda j: key[j]))
    return np.array(out, I)
CASES.append(case("sort_idx_stable_nan", {"A": st},
                  {"Y": sort_idx(st, True), "Z": sort_idx(st, False)},
                  ["%y = tile.sort_idx(%a, order=desc)", "%z = tile.sort_idx(%a, order=asc)"], None))
bl = rng.integers(-4, 5, (16, 16)).astype(F)
bias = (rng.integers(-8, 8, (1, 16)) + 0.5).astype(F)
CASES.append(Case("matmul_bias", """program mb
kernel @k(%L: tensor[16, 16] f32, %B: tensor[1, 16] f32, out %Y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {
  %lm = tile.load(%L, [0, 0], [16, 16], space=mat)
  %l = tile.move(%lm, space=left)
  %r = tile.move(%lm, space=right)
  %b = tile.load(%B, [0, 0], [1, 16])
  %p = tile.matmul_bias(%l, %r, %b)
  %Y1 = tile.store(%p, [0, 0], %Y)
  return %Y1
}
""", ins={"L": bl, "B": bias}, want={"Y": (bl @ bl) + bias}, args=["--entry", "k"]))

# -- more of both sets -------------------------------------------------------------------------
# Float max and min (elementwise, with a scalar, reductions, expands, relu) ignore a NaN unless
# both are NaN, and take +0 above -0 (IEEE maxNum, C's fmax; as dist.allreduce's max and min).
def fmax0(x, y):
    r = np.fmax(x, y)
    both0 = (x == 0) & (y == 0)
    return np.where(both0, np.where(np.signbit(x) & np.signbit(y), F(-0.0), F(0.0)), r).astype(F)
def fmin0(x, y):
    r = np.fmin(x, y)
    both0 = (x == 0) & (y == 0)
    return np.where(both0, np.where(np.signbit(x) | np.signbit(y), F(-0.0), F(0.0)), r).astype(F)
na = np.array([[NAN, 1, NAN, 0.0, -0.0, 2, -INF, 5], [1, 2, 3, NAN, 5, 6, 7, 8]], F)
nb = np.array([[1, NAN, NAN, -0.0, 0.0, 3, NAN, 5], [0, -0.0, 0, 0, 0, 0, 0, 0]], F)
CASES.append(case("max_min_nan_zero", {"A": na, "B": nb},
                  {"Y": fmax0(na, nb), "Z": fmin0(na, nb), "R": np.nanmax(na, 1, keepdims=True),
                   "C": np.array([[1, 1, 3, 0.0, -0.0, 2, -INF, 5]], F),
                   "S": fmax0(na, np.zeros_like(na)), "T": fmax0(na, np.zeros_like(na))},
                  ["%y = tile.max(%a, %b)", "%z = tile.min(%a, %b)", "%r = tile.row_max(%a)",
                   "%c = tile.col_min(%a)", "%s = tile.maxs(%a, 0.0)", "%t = tile.relu(%a)"],
                  None))
# f16 reductions: in f32, in index order, rounded once at the end.
hr = (rng.standard_normal((4, 64)) * 100).astype(np.float16)
def seqsum32(a, axis):
    s = seqsum(a.astype(F), axis)
    return s.astype(np.float16)
CASES.append(case("f16_reductions", {"A": hr},
                  {"Y": seqsum32(hr, 1), "Z": seqsum32(hr, 0),
                   "W": hr.max(1, keepdims=True)},
                  ["%y = tile.row_sum(%a)", "%z = tile.col_sum(%a)", "%w = tile.row_max(%a)"],
                  None))
# a wider row: still index order
wr = rng.standard_normal((2, 512)).astype(F)
CASES.append(case("wide_row_sum", {"A": wr}, {"Y": seqsum(wr, 1)}, ["%y = tile.row_sum(%a)"],
                  None))
# casts: bool to numbers; f16 to integers saturates; f64 to f32 rounds to nearest-even
bc = np.array([[0, 1, 1, 0]], np.bool_)
CASES.append(case("cast_bool", {"A": bc},
                  {"Y": bc.astype(F), "Z": bc.astype(np.int8), "W": bc.astype(np.float16)},
                  ["%y = tile.cast(%a, f32)", "%z = tile.cast(%a, i8)", "%w = tile.cast(%a, f16)"],
                  None))
hc = np.array([[300.0, -300.0, 65504.0, -2.5, 2.5, np.inf, -np.inf, np.nan]], np.float16)
CASES.append(case("cast_f16_to_int", {"A": hc},
                  {"Y": np.array([[127, -128, 127, -2, 2, 127, -128, 0]], np.int8),
                   "Z": np.array([[300, 0, 65504, 0, 2, 65535, 0, 0]], np.uint16)},
                  ["%y = tile.cast(%a, i8)", "%z = tile.cast(%a, u16)"], None))
dc = np.array([[1.0 + 2.0**-24, 1.0 + 3 * 2.0**-24, 1e300, -1e-300, 3.4028235677973366e38]],
              np.float64)
CASES.append(case("cast_f64_to_f32", {"A": dc}, {"Y": dc.astype(F)},
                  ["%y = tile.cast(%a, f32)"], None))
# tile.full: the value of the tile's dtype; a literal that does not fit is an error
CASES.append(Case("full_literal_fits", """program f
kernel @k(out %Y: tensor[2, 4] i8, out %Z: tensor[2, 4] u64, out %W: tensor[2, 4] f16)
    -> (tensor[2, 4] i8, tensor[2, 4] u64, tensor[2, 4] f16) {
  %y = tile.full([2, 4], i8, -128)
  %z = tile.full([2, 4], u64, 0xffffffffffffffff)
  %w = tile.full([2, 4], f16, 65519.0)
  %Y1 = tile.store(%y, [0, 0], %Y)
  %Z1 = tile.store(%z, [0, 0], %Z)
  %W1 = tile.store(%w, [0, 0], %W)
  return %Y1, %Z1, %W1
}
""", want={"Y": np.full((2, 4), -128, np.int8), "Z": np.full((2, 4), 2**64 - 1, np.uint64),
           "W": np.full((2, 4), 65504, np.float16)}, args=["--entry", "k"]))
CASES.append(Case("err_full_literal_i8", """program f
kernel @k(out %Y: tensor[2, 4] i8) -> (tensor[2, 4] i8) {
  %y = tile.full([2, 4], i8, 300)
  %Y1 = tile.store(%y, [0, 0], %Y)
  return %Y1
}
""", cmd="check", err=(2, "300 does not fit i8")))
# a load whose static tile passes the tensor's edge needs a valid region that fits (verifier);
# with a dynamic extent the rows past the edge are pad
pe = rng.standard_normal((6, 12)).astype(F)
CASES.append(Case("err_load_past_edge", """program e
kernel @k(%X: tensor[6, 12] f32, out %Y: tensor[8, 16] f32) -> (tensor[8, 16] f32) {
  %t = tile.load(%X, [2, 4], [8, 16], pad=max)
  %Y1 = tile.store(%t, [0, 0], %Y)
  return %Y1
}
""", cmd="check", err=(2, "rows 2..10 fall past the extent 6 of dim 0")))
CASES.append(Case("load_past_edge", """program e
dynamic M, N
kernel @k(%X: tensor[M, N] f32, out %Y: tensor[8, 16] f32) -> (tensor[8, 16] f32) {
  %t = tile.load(%X, [2, 4], [8, 16], pad=max)
  %u = tile.fillpad(%t, pad=max)
  %Y1 = tile.store(%u, [0, 0], %Y)
  return %Y1
}
""", ins={"X": pe}, want={"Y": np.pad(pe[2:, 4:], ((0, 4), (0, 8)), constant_values=np.inf)},
    args=["--entry", "k"]))
# gather_rows: a column offset past the edge is a launch error
CASES.append(Case("gather_rows_bad_c0", """program g
kernel @k(%T: tensor[10, 16] f32, %I: tensor[4, 1] i32, out %Y: tensor[4, 8] f32, %c: index = runtime)
    -> (tensor[4, 8] f32) {
  %i = tile.load(%I, [0, 0], [4, 1])
  %g = tile.gather_rows(%T, %i, [%c], [4, 8])
  %Y1 = tile.store(%g, [0, 0], %Y)
  return %Y1
}
""", ins={"T": tab, "I": ids, "c": "9"}, err=(1, "9"), args=["--entry", "k"]))
CASES.append(Case("gather_rows_bad_row", """program g
kernel @k(%T: tensor[10, 16] f32, %I: tensor[4, 1] i32, out %Y: tensor[4, 8] f32) -> (tensor[4, 8] f32) {
  %i = tile.load(%I, [0, 0], [4, 1])
  %g = tile.gather_rows(%T, %i, [0], [4, 8])
  %Y1 = tile.store(%g, [0, 0], %Y)
  return %Y1
}
""", ins={"T": tab, "I": np.array([[0], [10], [1], [2]], I)}, err=(1, "10"),
    args=["--entry", "k"]))
CASES.append(case("assemble_runtime_oob", {"A": la2, "B": lb2}, {"Y": la2},
                  ["%y = tile.assemble(%a, %b, [0, %c])"], None,
                  scalars=["%c: index = runtime"], sargs={"c": "5"}, err=(1, "assemble")))
# bool tiles: cmps on bool, sel picking bool, row_expand of bool, transpose of bool
bm = np.array([[1, 0, 1, 1], [0, 0, 1, 0]], np.bool_)
CASES.append(case("bool_tiles", {"M": bm},
                  {"Y": bm == True, "Z": bm.T.copy(), "W": np.where(bm, bm, ~bm)},
                  ["%y = tile.cmps(%m, true, cmp=eq)", "%z = tile.transpose(%m)",
                   "%n = tile.not(%m)", "%w = tile.sel(%m, %m, %n)"], None))
# integer sort and argmax: stable, first of ties
si = np.array([[3, -1, 3, 7, -1, 0, 7, 2]], I)
CASES.append(case("sort_argmax_int", {"A": si},
                  {"Y": np.argsort(-si, kind="stable").astype(I), "Z": np.argsort(si, kind="stable").astype(I),
                   "W": np.argmax(si, 1).astype(I)[:, None], "V": np.argmin(si, 1).astype(I)[:, None]},
                  ["%y = tile.sort_idx(%a, order=desc)", "%z = tile.sort_idx(%a, order=asc)",
                   "%w = tile.row_argmax(%a)", "%v = tile.row_argmin(%a)"], None))
# integer products wrap; row_prod of u8
pu = np.array([[16, 16, 2, 1], [255, 255, 1, 1]], np.uint8)
CASES.append(case("prod_wraps", {"A": pu},
                  {"Y": np.prod(pu, 1, keepdims=True, dtype=np.uint8),
                   "Z": np.prod(pu, 0, keepdims=True, dtype=np.uint8)},
                  ["%y = tile.row_prod(%a)", "%z = tile.col_prod(%a)"], None))
# bf16 matmul accumulates in f32
mb = bf16(rng.integers(-4, 5, (16, 16)).astype(F))
CASES.append(Case("matmul_bf16", """program m
kernel @k(%L: tensor[16, 16] bf16, out %Y: tensor[16, 16] f32, out %H: tensor[16, 16] bf16)
    -> (tensor[16, 16] f32, tensor[16, 16] bf16) {
  %lm = tile.load(%L, [0, 0], [16, 16], space=mat)
  %l = tile.move(%lm, space=left)
  %r = tile.move(%lm, space=right)
  %p = tile.matmul(%l, %r)
  %Y1 = tile.store(%p, [0, 0], %Y)
  %H1 = tile.store(%p, [0, 0], %H)
  return %Y1, %H1
}
""", ins={"L": mb}, want={"Y": bf16_to_f32(mb) @ bf16_to_f32(mb),
                          "H": bf16(bf16_to_f32(mb) @ bf16_to_f32(mb))}, args=["--entry", "k"]))
# i64 and u64 elementwise at the extremes
i64a = np.array([[np.iinfo(np.int64).min, -1, np.iinfo(np.int64).max, 7]], np.int64)
i64b = np.array([[-1, np.iinfo(np.int64).min, 1, -2]], np.int64)
with np.errstate(all="ignore"):
    CASES.append(case("i64_extremes", {"A": i64a, "B": i64b},
                      {"Y": i64a + i64b, "Z": np.array([[np.iinfo(np.int64).min, 0,
                                                         np.iinfo(np.int64).max, -4]], np.int64),
                       "W": np.array([[0, -1, 0, -1]], np.int64)},
                      ["%y = tile.add(%a, %b)", "%z = tile.div(%a, %b)", "%w = tile.rem(%a, %b)"],
                      None))
# shifts on narrow dtypes: counts outside [0, bits) of the dtype give 0 or the sign fill
s8 = np.array([[1, -128, -1, 64, 3, -3, 127, -2]], np.int8)
c8 = np.array([[7, 7, 8, 1, 9, 1, -1, 100]], np.int8)
def sh8(x, n, kind):
    out = []
    for v, k in zip(x[0].tolist(), n[0].tolist()):
        if k < 0 or k >= 8:
            out.append(0 if kind == "shl" else (-1 if v < 0 else 0))
        else:
            out.append(((v << k) + 128) % 256 - 128 if kind == "shl" else v >> k)
    return np.array([out], np.int8)
u16 = np.array([[1, 0x8000, 0xffff, 3]], np.uint16)
CASES.append(case("shifts_narrow", {"A": s8, "N": c8, "U": u16},
                  {"Y": sh8(s8, c8, "shl"), "Z": sh8(s8, c8, "shr"),
                   "W": np.array([[0, 0, 0, 0]], np.uint16), "V": (u16 >> 15).astype(np.uint16)},
                  ["%y = tile.shl(%a, %n)", "%z = tile.shr(%a, %n)", "%w = tile.shrs(%u, 16)",
                   "%v = tile.shrs(%u, 15)"], None))
# an integer literal takes the float dtype of its context (cmps on f32, sels on f16)
ff = np.array([[0.5, 1.0, 1.5, -2.0]], F)
fh = np.array([[0.5, 1.0, 1.5, -2.0]], np.float16)
CASES.append(case("int_literal_float_context", {"A": ff, "H": fh},
                  {"Y": ff >= 1, "Z": np.where(fh > 0, fh, np.float16(3)), "W": ff * F(2)},
                  ["%y = tile.cmps(%a, 1, cmp=ge)", "%m = tile.cmps(%h, 0, cmp=gt)",
                   "%z = tile.sels(%m, %h, 3)", "%w = tile.muls(%a, 2)"], None))
# matmul_acc carried through a loop: acc + sum of the products
ka = rng.integers(-3, 4, (16, 64)).astype(F)
kb = rng.integers(-3, 4, (64, 16)).astype(F)
CASES.append(Case("matmul_acc_loop", """program ml
kernel @k(%A: tensor[16, 64] f32, %B: tensor[64, 16] f32, out %Y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {
  %z = tile.full([16, 16], f32, 0.0, space=acc)
  %acc = for %i in range(0, 4) iter(%c = %z) {
    %am = tile.load(%A, [0, %i * 16], [16, 16], space=mat)
    %bm = tile.load(%B, [%i * 16, 0], [16, 16], space=mat)
    %l = tile.move(%am, space=left)
    %r = tile.move(%bm, space=right)
    %c1 = tile.matmul_acc(%c, %l, %r)
    yield %c1
  }
  %Y1 = tile.store(%acc, [0, 0], %Y)
  return %Y1
}
""", ins={"A": ka, "B": kb}, want={"Y": ka @ kb}, args=["--entry", "k"]))
# f16 transcendental ops compute in f32 and round once
he = (rng.standard_normal((2, 16)) * 2).astype(np.float16)
CASES.append(case("f16_unary", {"A": he},
                  {"Y": (np.exp(he.astype(np.float64)).astype(np.float16), 1),
                   "Z": (np.sin(he.astype(np.float64)).astype(np.float16), 1),
                   "W": (np.abs(he.astype(np.float64)) ** 0.5).astype(np.float16)},
                  ["%y = tile.exp(%a)", "%z = tile.sin(%a)", "%p = tile.abs(%a)",
                   "%w = tile.sqrt(%p)"], None))
# integer expand_div floors; by a runtime zero it is a launch error
ea_i = np.array([[7, -7, 8, -9], [5, 6, -7, 8]], I)
ev_i = np.array([[2], [-3]], I)
CASES.append(case("expand_div_int", {"A": ea_i, "V": ev_i},
                  {"Y": np.floor_divide(ea_i, ev_i).astype(I)},
                  ["%y = tile.row_expand_div(%a, %v)"], None))
CASES.append(case("divs_runtime_zero", {"A": ea_i}, {"Y": ea_i},
                  ["%y = tile.divs(%a, %z)"], None, scalars=["%z: i32 = runtime"],
                  sargs={"z": "0"}, err=(1, "zero")))
# sort_idx with -0 and +0 equal (stable), and an all-NaN row
sz = np.array([[0.0, -0.0, 0.0, -0.0], [NAN, NAN, NAN, NAN]], F)
CASES.append(case("sort_zeros_nans", {"A": sz},
                  {"Y": np.array([[0, 1, 2, 3], [0, 1, 2, 3]], I),
                   "Z": np.array([[0, 1, 2, 3], [0, 1, 2, 3]], I),
                   "W": np.array([[0], [0]], I)},
                  ["%y = tile.sort_idx(%a, order=desc)", "%z = tile.sort_idx(%a, order=asc)",
                   "%w = tile.row_argmin(%a)"], None))
# ci wraps like any integer arithmetic; tri of u8; fillpad of bool with min/max (0/1)
CASES.append(case("ci_wraps_tri_u8", {"A": np.zeros((1, 1), I)},
                  {"Y": (32760 + np.arange(16)).astype(np.int16)[None],
                   "Z": np.tril(np.ones((3, 5), np.uint8), -1)},
                  ["%y = tile.ci(32760, [1, 16], dtype=i16)", "%z = tile.tri(-1, [3, 5], dtype=u8)"],
                  None))
xb8 = np.array([[1, 0, 1, 0], [0, 1, 1, 0]], np.bool_)
CASES.append(Case("fillpad_bool", """program fb
kernel @k(%X: tensor[2, 4] bool, out %Y: tensor[2, 4] bool, out %Z: tensor[2, 4] bool)
    -> (tensor[2, 4] bool, tensor[2, 4] bool) {
  %t = tile.load(%X, [0, 0], [2, 4], valid=[1, 2])
  %y = tile.fillpad(%t, pad=max)
  %z = tile.fillpad(%t, pad=min)
  %Y1 = tile.store(%y, [0, 0], %Y)
  %Z1 = tile.store(%z, [0, 0], %Z)
  return %Y1, %Z1
}
""", ins={"X": xb8}, want={"Y": np.array([[1, 0, 1, 1], [1, 1, 1, 1]], np.bool_),
                          "Z": np.array([[1, 0, 0, 0], [0, 0, 0, 0]], np.bool_)},
    args=["--entry", "k"]))
# specials of the other unary ops and of sin/cos
sp2 = np.array([[0.0, -0.0, INF, -INF, NAN, 1.0, 4.0, -4.0]], F)
with np.errstate(all="ignore"):
    CASES.append(case("unary_specials_2", {"A": sp2},
                      {"Y": (F(1) / np.sqrt(sp2)).astype(F), "Z": np.sin(sp2),
                       "W": np.cos(sp2), "V": np.array([[0.5, 0.5, 1, 0, NAN, 0.7310586,
                                                         0.98201376, 0.01798621]], F)},
                      ["%y = tile.rsqrt(%a)", "%z = tile.sin(%a)", "%w = tile.cos(%a)",
                       "%v = tile.sigmoid(%a)"], None))
CASES[-1].want["V"] = (CASES[-1].want["V"], 2)
# tile.cast rounds once too: f64 -> f16, i64 -> f32
CASES.append(case("cast_round_once", {"A": np.array([[1 + 2.0**-11 + 2.0**-30, -(1 + 2.0**-11 + 2.0**-30)]]),
                                      "B": np.array([[2**62 + 2**38 + 1, -(2**62 + 2**38 + 1)]], np.int64)},
                  {"Y": np.array([[1.0009765625, -1.0009765625]], np.float16),
                   "Z": np.array([[2.0**62 + 2.0**39, -(2.0**62 + 2.0**39)]], F)},
                  ["%y = tile.cast(%a, f16)", "%z = tile.cast(%b, f32)"], None))
# f16 sorts and arg-extremes: NaN above +inf, the first NaN wins; col_argmax by the same rule
hs = np.array([[1, np.nan, -np.inf, 2, np.nan, np.inf, -0.0, 0.0],
               [3, 3, -1, -1, 0.5, 0.5, 2, 2]], np.float16)
CASES.append(case("f16_sort_argmax_nan", {"A": hs},
                  {"Y": sort_idx(hs.astype(F), True), "Z": sort_idx(hs.astype(F), False),
                   "W": np.argmax(hs, 1).astype(I)[:, None], "V": np.argmin(hs, 1).astype(I)[:, None],
                   "U": np.argmax(hs, 0).astype(I)[None]},
                  ["%y = tile.sort_idx(%a, order=desc)", "%z = tile.sort_idx(%a, order=asc)",
                   "%w = tile.row_argmax(%a)", "%v = tile.row_argmin(%a)",
                   "%u = tile.col_argmax(%a)"], None))
# gather of a bool tile, indices of another shape
gb = np.array([[1, 0, 0, 1], [0, 1, 1, 0]], np.bool_)
gbi = np.array([[7, 0], [3, 5], [1, 1]], I)
CASES.append(case("gather_bool", {"S": gb, "I": gbi}, {"Y": gb.reshape(-1)[gbi]},
                  ["%y = tile.gather(%s, %i)"], None))
# a runtime valid extent past the shape is clamped to it; a negative one is a launch error
vx = rng.standard_normal((8, 16)).astype(F)
VALIDK = """program rv
kernel @k(%X: tensor[8, 16] f32, out %Y: tensor[8, 16] f32, %r: index = runtime) -> (tensor[8, 16] f32) {
  %t = tile.load(%X, [0, 0], [8, 16], valid=[%r, 16], pad=max)
  %u = tile.fillpad(%t, pad=zero)
  %Y1 = tile.store(%u, [0, 0], %Y)
  return %Y1
}
"""
CASES.append(Case("valid_runtime_clamped", VALIDK, ins={"X": vx, "r": "100"}, want={"Y": vx},
                  args=["--entry", "k"]))
CASES.append(Case("valid_runtime_partial", VALIDK, ins={"X": vx, "r": "3"},
                  want={"Y": np.where(np.arange(8)[:, None] < 3, vx, F(0))}, args=["--entry", "k"]))
CASES.append(Case("valid_runtime_negative", VALIDK.replace("%r: index", "%r: i64").replace(
    "valid=[%r, 16]", "valid=[index(%r), 16]"), ins={"X": vx, "r": "-1"}, err=(1, "-1"),
    args=["--entry", "k"]))
# range with a runtime step of 0 is a launch error
CASES.append(Case("range_runtime_step_zero", """program rz
kernel @k(out %Y: tensor[1, 1] i32, %s: index = runtime) -> (tensor[1, 1] i32) {
  %n = for %i in range(0, 4, %s) iter(%c: i32 = 0) {
    %c1 = %c + 1
    yield %c1
  }
  %t = tile.full([1, 1], i32, %n)
  %Y1 = tile.store(%t, [0, 0], %Y)
  return %Y1
}
""", ins={"s": "0"}, err=(1, "step"), args=["--entry", "k"]))
