# Every dtype through the ops that take it (docs/language.md: "every op runs on every dtype its
# entry allows"), against numpy: f16 computes in f32 and rounds once; integers wrap; division
# floors. Run by tests/e2e/contract_values.sh.
rng = np.random.default_rng(22)
CASES = []
DT = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
      "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "f16": np.float16,
      "f32": np.float32, "f64": np.float64}
R, C = 4, 8


def seqsum(a, axis, acc):
    a = np.moveaxis(a.astype(acc), axis, 0)
    s = np.zeros(a.shape[1:], acc)
    for row in a:
        s = (s + row).astype(acc)
    return np.expand_dims(s, axis)


for name, t in DT.items():
    fl = np.issubdtype(t, np.floating)
    if fl:
        a = (rng.standard_normal((R, C)) * 8).astype(t)
        b = (rng.standard_normal((R, C)) * 8).astype(t)
        b[b == 0] = 1
        a[0, :3] = [-0.0, 0.0, 2.0]
        b[0, :3] = [1.0, -3.0, 2.0]
    else:
        info = np.iinfo(t)
        lo, hi = max(info.min, -100), min(info.max, 100)
        a = rng.integers(info.min, info.max, (R, C), dtype=t, endpoint=True)
        b = rng.integers(lo, hi, (R, C), dtype=t, endpoint=True)
        b[b == 0] = 3
        a[0, :4] = [info.min, info.max, 0, 1]
        if info.min < 0:
            b[0, 0] = -1  # the minimum divided by -1 wraps to itself
    cw = np.float32 if t == np.float16 else t  # the type arithmetic happens in
    A, B = a.astype(cw), b.astype(cw)
    with np.errstate(all="ignore"):
        if fl:
            div = (A / B).astype(t)
            rem = np.mod(A, B).astype(t)
        else:
            q = np.zeros_like(a)
            r = np.zeros_like(a)
            for i in np.ndindex(a.shape):
                x, y = int(a[i]), int(b[i])
                qq = x // y
                q[i] = np.array(qq).astype(np.int64).astype(t) if -2**63 <= qq < 2**63 else \
                    np.array(qq % 2**64, np.uint64).astype(t)
                r[i] = x - y * (x // y) if not (y == -1) else 0
            div, rem = q, r
        want = {
            "YADD": (A + B).astype(t), "YSUB": (A - B).astype(t), "YMUL": (A * B).astype(t),
            "YDIV": div, "YMAX": np.maximum(A, B).astype(t), "YMIN": np.minimum(A, B).astype(t),
            "YREM": rem,
            "YRSUM": seqsum(a, 1, cw).astype(t), "YCMAX": a.max(0, keepdims=True),
            "YAMAX": np.argmax(a, 1).astype(np.int32)[:, None],
            "YSORT": np.array([sorted(range(C), key=lambda j: -row[j]) for row in a.tolist()],
                              np.int32),
            "YLT": A < B, "YNEG": (-A).astype(t), "YABS": np.abs(A).astype(t) if fl or
            np.iinfo(t).min < 0 else a, "YF32": a.astype(np.float32), "YT": a.T.copy(),
            "YSEL": np.where(A < B, a, b),
        }
        if not fl and np.iinfo(t).min < 0:
            want["YABS"] = np.where(a == np.iinfo(t).min, a, np.abs(a)).astype(t)
        if not fl and np.iinfo(t).min == 0:
            want["YNEG"] = (np.zeros_like(a) - a).astype(t)
    body = ["%yadd = tile.add(%a, %b)", "%ysub = tile.sub(%a, %b)", "%ymul = tile.mul(%a, %b)",
            "%ydiv = tile.div(%a, %b)", "%ymax = tile.max(%a, %b)", "%ymin = tile.min(%a, %b)",
            "%yrem = tile.rem(%a, %b)", "%yrsum = tile.row_sum(%a)", "%ycmax = tile.col_max(%a)",
            "%yamax = tile.row_argmax(%a)", "%ysort = tile.sort_idx(%a, order=desc)",
            "%ylt = tile.cmp(%a, %b, cmp=lt)", "%yneg = tile.neg(%a)", "%yabs = tile.abs(%a)",
            "%yf32 = tile.cast(%a, f32)", "%yt = tile.transpose(%a)",
            "%ysel = tile.sel(%ylt, %a, %b)"]
    def tdt(v):
        return {np.dtype(np.bool_): "bool", np.dtype(np.int32): "i32",
                np.dtype(np.float32): "f32"}.get(v.dtype, name)
    outs = ", ".join("out %%%s: tensor[%d, %d] %s" % (k, v.shape[0], v.shape[1], tdt(v))
                     for k, v in want.items())
    arrow = ", ".join("tensor[%d, %d] %s" % (v.shape[0], v.shape[1], tdt(v)) for v in want.values())
    stores = "".join("  %%%s1 = tile.store(%%%s, [0, 0], %%%s)\n" % (k, k.lower(), k) for k in want)
    prog = ("program d\nkernel @k(%%A: tensor[%d, %d] %s, %%B: tensor[%d, %d] %s, %s)\n"
            "    -> (%s) {\n  %%a = tile.load(%%A, [0, 0], [%d, %d])\n"
            "  %%b = tile.load(%%B, [0, 0], [%d, %d])\n%s%s  return %s\n}\n" % (
                R, C, name, R, C, name, outs, arrow, R, C, R, C,
                "".join("  %s\n" % l for l in body), stores,
                ", ".join("%%%s1" % k for k in want)))
    CASES.append(Case("dtype_" + name, prog, ins={"A": a, "B": b}, want=want,
                      args=["--entry", "k"]))

# bf16 (raw bits in u16 files): computes in f32 and rounds once to nearest-even
a = bf16((rng.standard_normal((R, C)) * 8).astype(np.float32))
b = bf16((rng.standard_normal((R, C)) * 8).astype(np.float32))
b[bf16_to_f32(b) == 0] = bf16(np.float32(1))
A, B = bf16_to_f32(a), bf16_to_f32(b)
with np.errstate(all="ignore"):
    want = {"YADD": bf16(A + B), "YSUB": bf16(A - B), "YMUL": bf16(A * B), "YDIV": bf16(A / B),
            "YMAX": bf16(np.maximum(A, B)), "YMIN": bf16(np.minimum(A, B)), "YREM": bf16(np.mod(A, B)),
            "YRSUM": bf16(seqsum(A, 1, np.float32)), "YCMAX": bf16(A.max(0, keepdims=True)),
            "YAMAX": np.argmax(A, 1).astype(np.int32)[:, None],
            "YSORT": np.array([sorted(range(C), key=lambda j: -row[j]) for row in A.tolist()], np.int32),
            "YLT": A < B, "YNEG": bf16(-A), "YABS": bf16(np.abs(A)), "YF32": A, "YT": a.T.copy(),
            "YSEL": np.where(A < B, a, b)}
CASES.append(Case("dtype_bf16", CASES[-1].prog.replace(" f64", " bf16"), ins={"A": a, "B": b},
                  want=want, args=["--entry", "k"]))
