# Scalar expressions, literals, parameters and their errors, against the language's contract
# (docs/language.md: Grammar, Types, Semantics). Run by tests/e2e/contract_scalars.sh.


def probe(kind, dt, params, lines, results, prog="probe"):
    """A program whose entry computes the scalars `results` (each of dtype dt) from `params`
    by `lines` and writes them to y[0, j]: in a kernel entry (kind 'kernel'), an orch or a
    host (which pass each to a kernel)."""
    n = len(results)
    body = "".join("  %s\n" % l for l in lines)
    if kind == "kernel":
        stores = "".join(
            "  %%t%d = tile.full([1, 1], %s, %s)\n  %%y%d = tile.store(%%t%d, [0, %d], %%y)\n"
            % (j, dt, r, j, j, j) for j, r in enumerate(results))
        return ("program %s\nkernel @k(out %%y: tensor[1, %d] %s%s) -> (tensor[1, %d] %s) {\n%s%s"
                "  return %%y\n}\n" % (prog, n, dt, "".join(", " + p for p in params), n, dt,
                                      body, stores))
    put = ("kernel @put(out %%y: tensor[1, 1] %s, %%v: %s) -> (tensor[1, 1] %s) {\n"
           "  %%t = tile.full([1, 1], %s, %%v)\n  %%y1 = tile.store(%%t, [0, 0], %%y)\n"
           "  return %%y1\n}\n" % (dt, dt, dt, dt))
    calls = "".join(
        "  %%s%d = tensor.slice(%%y, [0, %d], [1, 1])\n  call @put(%%s%d, %s)\n" % (j, j, j, r)
        for j, r in enumerate(results))
    if kind == "orch":
        return ("program %s\n%sorch @main(out %%y: tensor[1, %d] %s%s) -> (tensor[1, %d] %s) {\n"
                "%s%s  return %%y\n}\n" % (prog, put, n, dt, "".join(", " + p for p in params), n,
                                          dt, body, calls))
    orch = ("orch @o(out %%y: tensor[1, 1] %s, %%v: %s) -> (tensor[1, 1] %s) {\n"
            "  call @put(%%y, %%v)\n  return %%y\n}\n" % (dt, dt, dt))
    calls = "".join(
        "  %%s%d = tensor.slice(%%y, [0, %d], [1, 1])\n  call @o(%%s%d, %s) device=0\n" % (j, j, j, r)
        for j, r in enumerate(results))
    return ("program %s\n%s%shost @main(out %%y: tensor[1, %d] %s%s) {\n%s%s}\n"
            % (prog, put, orch, n, dt, "".join(", " + p for p in params), body, calls))


def run_args(kind):
    return {"kernel": ["--entry", "k"], "orch": [], "host": ["--devices", "1"]}[kind]


CASES = []
I32 = np.int32
for kind in ("kernel", "orch", "host"):
    # Integer '/' floors and mod has the sign of the divisor, on runtime values and on literals;
    # the minimum divided by -1 wraps to itself and its mod by -1 is 0.
    CASES.append(Case(
        "int_div_mod_" + kind,
        probe(kind, "i32", ["%a: i32 = runtime", "%b: i32 = runtime", "%m: i32 = runtime",
                            "%c: i32 = runtime"],
              ["%q = %a / %b", "%r = mod(%a, %b)", "%q2 = %b / %c", "%r2 = mod(%b, %c)",
               "%q3 = %m / %c", "%r3 = mod(%m, %c)", "%nb = -%b", "%r4 = mod(%a, %nb)",
               "%q5 = i32(-7 / 2)", "%r5 = i32(mod(-7, 2))", "%r6 = i32(mod(7, -2))",
               "%q6 = -7 / %b"],
              ["%q", "%r", "%q2", "%r2", "%q3", "%r3", "%r4", "%q5", "%r5", "%r6", "%q6"]),
        ins={"a": "-7", "b": "2", "m": "-2147483648", "c": "-1"},
        want={"y": np.array([[-4, 1, -2, 0, -2147483648, 0, -1, -4, 1, -1, -4]], I32)},
        args=run_args(kind)))
    # Precedence and associativity: * over +, left-assoc -, && over ||, ! binds tightest;
    # min/max/mod builtins; a comparison gives bool (cast to i32 here).
    CASES.append(Case(
        "precedence_" + kind,
        probe(kind, "i32", ["%a: i32 = runtime", "%b: i32 = runtime", "%c: i32 = runtime"],
              ["%p = %a + %b * %c", "%s = %a - %b - %c", "%d = %a / %b / %c",
               "%l = !(%a < %b) || %a == %b && false", "%li = i32(%l)",
               "%l2 = %a < %b || %b < %c && %c < %a", "%l2i = i32(%l2)",
               "%mn = min(%a, %b)", "%mx = max(%a, max(%b, %c))", "%ng = -%a * -%b",
               "%par = (%a + %b) * %c"],
              ["%p", "%s", "%d", "%li", "%l2i", "%mn", "%mx", "%ng", "%par"]),
        ins={"a": "20", "b": "3", "c": "-2"},
        want={"y": np.array([[14, 19, -3, 1, 0, 3, 20, 60, -46]], I32)},
        args=run_args(kind)))
    # u8 and i8 arithmetic wraps after every operation; i8 min / -1 is the min.
    CASES.append(Case(
        "narrow_wrap_" + kind,
        probe(kind, "i8", ["%a: i8 = runtime", "%b: i8 = runtime"],
              ["%p = %a * %b", "%s = %a + %a", "%m: i8 = -128", "%q = %m / %b", "%r = mod(%m, %b)",
               "%n = -%m", "%big = %p > %a", "%bi = i8(%big)"],
              ["%p", "%s", "%q", "%r", "%n", "%bi"]),
        ins={"a": "100", "b": "-1"},
        want={"y": np.array([[-100, -56, -128, 0, -128, 0]], np.int8)},
        args=run_args(kind)))
    # Float -> integer casts truncate toward zero and saturate; NaN gives 0; int -> narrower
    # int keeps the low bits.
    CASES.append(Case(
        "scalar_casts_" + kind,
        probe(kind, "i32", ["%f: f32 = runtime", "%g: f64 = runtime", "%w: i64 = runtime"],
              ["%c1 = i32(%f)", "%nf = -%f", "%c2 = i32(%nf)", "%c3 = i32(%g)", "%ng = -%g",
               "%c4 = i32(%ng)", "%z = %g - %g", "%c5 = i32(%z / %z)", "%c6 = i32(%w)",
               "%c7 = i32(u8(%w))", "%c8 = i32(i8(%w))"],
              ["%c1", "%c2", "%c3", "%c4", "%c5", "%c6", "%c7", "%c8"]),
        ins={"f": "2.75", "g": "1e20", "w": "4294967551"},
        want={"y": np.array([[2, -2, 2147483647, -2147483648, 0, 255, 255, -1]], I32)},
        args=run_args(kind)))

    # Float mod: the sign of the divisor, a zero result included (numpy's and Python's rule).
    CASES.append(Case(
        "float_mod_" + kind,
        probe(kind, "f32", ["%a: f32 = runtime", "%b: f32 = runtime", "%c: f32 = runtime",
                            "%d: f32 = runtime"],
              ["%r1 = mod(%a, %b)", "%r2 = mod(%c, %d)", "%r3 = mod(%a, %d)", "%r4 = mod(%c, %b)",
               "%h = %a + 0.5", "%r5 = mod(%h, %b)", "%r6 = mod(%h, %d)", "%r7 = mod(-6.0, 3.0)",
               "%r8 = mod(6.0, -3.0)"],
              ["%r1", "%r2", "%r3", "%r4", "%r5", "%r6", "%r7", "%r8"]),
        ins={"a": "-6", "b": "3", "c": "6", "d": "-2"},
        want={"y": np.array([[0.0, -0.0, -0.0, 0.0, 0.5, -1.5, 0.0, -0.0]], np.float32)},
        args=run_args(kind)))

    # Float min and max of scalars as of tiles: a NaN is ignored unless both are NaN, and +0
    # is above -0, whichever side each is on.
    CASES.append(Case(
        "float_min_max_" + kind,
        probe(kind, "f32", ["%a: f32 = runtime", "%n: f32 = runtime", "%z: f32 = runtime",
                            "%m: f32 = runtime"],
              ["%r1 = min(%a, %n)", "%r2 = min(%n, %a)", "%r3 = max(%a, %n)", "%r4 = max(%n, %a)",
               "%r5 = min(%z, %m)", "%r6 = min(%m, %z)", "%r7 = max(%z, %m)", "%r8 = max(%m, %z)"],
              ["%r1", "%r2", "%r3", "%r4", "%r5", "%r6", "%r7", "%r8"]),
        ins={"a": "1.5", "n": "nan", "z": "0", "m": "-0.0"},
        want={"y": np.array([[1.5, 1.5, 1.5, 1.5, -0.0, -0.0, 0.0, 0.0]], np.float32)},
        args=run_args(kind)))
    CASES.append(Case(
        "f16_min_max_mod_" + kind,
        probe(kind, "f16", ["%a: f16 = runtime", "%n: f16 = runtime", "%z: f16 = runtime",
                            "%m: f16 = runtime"],
              ["%r1 = min(%a, %n)", "%r2 = max(%n, %a)", "%r5 = min(%z, %m)", "%r8 = max(%m, %z)",
               "%r9 = mod(%m, %a)"], ["%r1", "%r2", "%r5", "%r8", "%r9"]),
        ins={"a": "1.5", "n": "nan", "z": "0", "m": "-0.0"},
        want={"y": np.array([[1.5, 1.5, -0.0, 0.0, 0.0]], np.float16)}, args=run_args(kind)))
    # Unsigned scalars compare and divide as unsigned; u64 takes its whole range.
    CASES.append(Case(
        "u64_scalars_" + kind,
        probe(kind, "u64", ["%a: u64 = runtime", "%b: u64 = runtime", "%c: u64 = runtime"],
              ["%q = %a / %b", "%r = mod(%a, %c)", "%g = u64(%a > %b)", "%l = u64(%c < %b)",
               "%mx = max(%a, %b)", "%mn = min(%c, %b)", "%w = %a + %b", "%s = %b - %c"],
              ["%q", "%r", "%g", "%l", "%mx", "%mn", "%w", "%s"]),
        ins={"a": "18446744073709551615", "b": "2", "c": "9223372036854775808"},
        want={"y": np.array([[9223372036854775807, 9223372036854775807, 1, 0,
                              18446744073709551615, 2, 1, 9223372036854775810]], np.uint64)},
        args=run_args(kind)))

# Literals: hex, the float forms (1., 1e-3, 2.5E+1), inf and nan as floats, a literal taking
# the float dtype of its context, a negative default.
CASES.append(Case(
    "literal_forms",
    probe("kernel", "f32", ["%n: f32 = -2"],
          ["%h = f32(0xff)", "%h2 = f32(0x7FFFFFFF)", "%a = 1.", "%b = 1e-3", "%c = 2.5E+1",
           "%i = inf", "%ni = -inf", "%nn = nan", "%ctx = %n + 1", "%d = %n * 3"],
          ["%h", "%h2", "%a", "%b", "%c", "%i", "%ni", "%nn", "%ctx", "%d"]),
    want={"y": np.array([[255, 2147483648.0, 1, np.float32(1e-3), 25, np.inf, -np.inf, np.nan,
                          -1, -6]], np.float32)},
    args=["--entry", "k"]))

# Comments anywhere, strings with escapes as an incore scope's name, value names that are
# keywords elsewhere, keyword arguments named like keywords.
CASES.append(Case(
    "lexical_words",
    """program words  # a comment after the header
dynamic M
# a whole-line comment
kernel @k(%x: tensor[M, 16] f32, out %y: tensor[M, 16] f32, %for: f32 = 2.0) -> (tensor[M, 16] f32) {
  %in = tile.load(%x, [0, 0], [8, 16], valid=[M, 16], pad=min)  # pad=min: a WORD value
  %range = tile.muls(%in, %for)
  %if = tile.store(%range, [0, 0], %y)
  return %if
}
orch @main(%x: tensor[M, 16] f32, out %y: tensor[M, 16] f32) -> (tensor[M, 16] f32) {
  incore "a \\"quoted\\" name\\twith\\\\escapes" {
    %t = tile.load(%x, [0, 0], [8, 16], valid=[M, 16])
    %u = tile.adds(%t, 1.0)
    tile.store(%u, [0, 0], %y)
  }
  return %y
}
""",
    ins={"x": np.arange(64, dtype=np.float32).reshape(4, 16)},
    want={"y": np.arange(64, dtype=np.float32).reshape(4, 16) + 1}))

# Errors the contract names.
ERRS = [
    # a parameter default must fit its dtype
    ("default_fraction", "kernel @k(out %y: tensor[1, 1] i32, %n: i32 = 1.5) -> (tensor[1, 1] i32) {\n  return %y\n}\n", "1.5"),
    ("default_u8_300", "kernel @k(out %y: tensor[1, 1] i32, %b: u8 = 300) -> (tensor[1, 1] i32) {\n  return %y\n}\n", "300 does not fit u8"),
    # operands of a binary operator have the same dtype
    ("mixed_dtypes", "kernel @k(out %y: tensor[1, 1] i32, %a: i32, %b: i64) -> (tensor[1, 1] i32) {\n  %c = %a + %b\n  return %y\n}\n", "i64"),
    # an if condition is bool
    ("if_not_bool", "kernel @k(out %y: tensor[1, 1] i32, %a: i32) -> (tensor[1, 1] i32) {\n  if %a {\n    %c = %a + 1\n  }\n  return %y\n}\n", "bool"),
    ("and_not_bool", "kernel @k(out %y: tensor[1, 1] i32, %a: i32) -> (tensor[1, 1] i32) {\n  %c = %a && true\n  return %y\n}\n", "bool"),
    # integer division by a constant zero is a compile error
    ("div_const_zero", "kernel @k(out %y: tensor[1, 1] i32, %a: i32) -> (tensor[1, 1] i32) {\n  %c = %a / 0\n  %t = tile.full([1, 1], i32, %c)\n  %y1 = tile.store(%t, [0, 0], %y)\n  return %y1\n}\n", "zero"),
    ("mod_const_zero", "kernel @k(out %y: tensor[1, 1] i32, %a: i32) -> (tensor[1, 1] i32) {\n  %c = mod(%a, 0)\n  %t = tile.full([1, 1], i32, %c)\n  %y1 = tile.store(%t, [0, 0], %y)\n  return %y1\n}\n", "zero"),
    # comparisons do not chain: cmp := add [op add]
    ("cmp_chain", "kernel @k(out %y: tensor[1, 1] i32, %a: i32) -> (tensor[1, 1] i32) {\n  %c = %a < %a < %a\n  return %y\n}\n", "2:"),
    # a dynamic symbol may not be named like a keyword, a dtype, min, max or mod
    ("dynamic_keyword", "dynamic range\nkernel @k(out %y: tensor[range, 1] i32) -> (tensor[range, 1] i32) {\n  return %y\n}\n", "range"),
    ("dynamic_dtype", "dynamic f32\nkernel @k(out %y: tensor[f32, 1] i32) -> (tensor[f32, 1] i32) {\n  return %y\n}\n", "f32"),
    ("dynamic_mod", "dynamic mod\nkernel @k(out %y: tensor[mod, 1] i32) -> (tensor[mod, 1] i32) {\n  return %y\n}\n", "mod"),
    # a literal above 2^63 - 1 without a context that takes it
    ("index_literal_too_big", "kernel @k(out %y: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n  %c = 9223372036854775808\n  return %y\n}\n", "does not fit index"),
    # tensor rank 1 to 5
    ("rank_6", "kernel @k(%x: tensor[1, 1, 1, 1, 1, 1] f32, out %y: tensor[1, 1] f32) -> (tensor[1, 1] f32) {\n  return %y\n}\n", "rank"),
    # the -> list equals the out/inout tensors, and return returns them
    ("arrow_mismatch", "kernel @k(%x: tensor[1, 1] f32, out %y: tensor[1, 1] f32) -> (tensor[1, 2] f32) {\n  return %y\n}\n", "1:"),
    ("return_wrong", "kernel @k(inout %x: tensor[1, 1] f32, out %y: tensor[1, 1] f32) -> (tensor[1, 1] f32, tensor[1, 1] f32) {\n  return %y, %x\n}\n", "2:"),
    # an in tensor is never written
    ("store_to_in", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  %x1 = tile.store(%t, [0, 0], %x)\n  return %y\n}\n", "3:"),
    # an if with results needs an else; a for with iter yields as many values
    ("if_results_no_else", "kernel @k(out %y: tensor[1, 1] i32, %a: i32) -> (tensor[1, 1] i32) {\n  %c = if %a > 0 {\n    yield %a\n  }\n  return %y\n}\n", "else"),
    ("for_yield_count", "kernel @k(out %y: tensor[1, 1] i32, %a: i32) -> (tensor[1, 1] i32) {\n  %c = for %i in range(0, 4) iter(%s = %a) {\n    yield %s, %s\n  }\n  return %y\n}\n", "yield"),
    ("return_not_last", "kernel @k(out %y: tensor[1, 1] i32, %a: i32) -> (tensor[1, 1] i32) {\n  return %y\n  %c = %a + 1\n}\n", "3:"),
    # tile ops belong in kernels, tensor.slice in orch/host
    ("tile_op_in_orch", "orch @main(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [16, 16])\n  return %y\n}\n", "2:"),
    ("slice_in_kernel", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32) -> (tensor[16, 16] f32) {\n  %s = tensor.slice(%x, [0, 0], [8, 8])\n  return %y\n}\n", "2:"),
    # non-constant tile shapes
    ("tile_shape_runtime", "kernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32, %n: index) -> (tensor[16, 16] f32) {\n  %t = tile.load(%x, [0, 0], [%n, 16])\n  %y1 = tile.store(%t, [0, 0], %y)\n  return %y1\n}\n", "2:"),
    # device= only in a host
    ("device_in_orch", "kernel @k(out %y: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n  return %y\n}\norch @main(out %y: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n  call @k(%y) device=0\n  return %y\n}\n", "device"),
]
for name, text, msg in ERRS:
    if msg[:-1].isdigit():  # a line of text: the program's header adds one
        msg = ".ptir:%d:" % (int(msg[:-1]) + 1)
    CASES.append(Case("err_" + name, "program e\n" + text, cmd="check", err=(2, msg)))

# A scalar parameter of the entry with no default must be bound at compile time: the message
# names the parameter and both fixes; a -D binding overrides a default.
CASES.append(Case(
    "unbound_scalar",
    probe("kernel", "i32", ["%n: i32"], ["%c = %n + 1"], ["%c"]),
    err=(2, "-D n=runtime"), args=["--entry", "k"]))
CASES.append(Case(
    "define_overrides_default",
    probe("kernel", "i32", ["%n: i32 = 5"], ["%c = %n + 1"], ["%c"]),
    want={"y": np.array([[8]], I32)}, args=["--entry", "k", "-D", "n=7"]))
# Runtime integer division by zero: a launch error (exit 1), in every kind of function.
for kind in ("kernel", "orch", "host"):
    CASES.append(Case(
        "div_runtime_zero_" + kind,
        probe(kind, "i32", ["%a: i32 = runtime", "%b: i32 = runtime"], ["%c = %a / %b"], ["%c"]),
        ins={"a": "7", "b": "0"}, err=(1, "zero"), args=run_args(kind)))

# Conversions round once: f64 -> f16 is not f64 -> f32 -> f16 (1 + 2^-11 + 2^-30 rounds up, where
# the f32 step would leave a tie that rounds to even), i64/u64 -> f32 neither (2^62 + 2^38 + 1
# rounds up to 2^62 + 2^39; through f64 it would be a tie).
G = 1 + 2.0**-11 + 2.0**-30
for kind in ("kernel", "orch", "host"):
    CASES.append(Case(
        "round_once_f16_" + kind,
        probe(kind, "f16", ["%g: f64 = runtime", "%u: u64 = runtime", "%i: i64 = runtime"],
              ["%a = f16(%g)", "%ng = -%g", "%b = f16(%ng)", "%c = f16(%u)", "%d = f16(%i)"],
              ["%a", "%b", "%c", "%d"]),
        ins={"g": repr(G), "u": "2049", "i": "-2051"},
        want={"y": np.array([[1.0009765625, -1.0009765625, 2048, -2052]], np.float16)},
        args=run_args(kind)))
    CASES.append(Case(
        "round_once_f32_" + kind,
        probe(kind, "f32", ["%u: u64 = runtime", "%i: i64 = runtime", "%g: f64 = runtime"],
              ["%a = f32(%u)", "%b = f32(%i)", "%c = f32(%g)"], ["%a", "%b", "%c"]),
        ins={"u": str(2**64 - 1), "i": str(2**62 + 2**38 + 1), "g": repr(1 + 2.0**-24 + 2.0**-52)},
        want={"y": np.array([[2.0**64, 2.0**62 + 2.0**39, 1 + 2.0**-23]], np.float32)},
        args=run_args(kind)))

# bf16 scalars round to bf16 after each operation (the product before the sum it feeds); u8
# negation wraps; index '/' floors and mod has the divisor's sign.
BA = bf16_to_f32(bf16(np.float32(1.00390625)))
BB = bf16_to_f32(bf16(np.float32(3.3)))
BP = bf16(bf16_to_f32(bf16(BA * BB)) + BA)
for kind in ("kernel", "orch", "host"):
    CASES.append(Case(
        "bf16_scalars_" + kind,
        probe(kind, "bf16", ["%a: bf16 = runtime", "%b: bf16 = runtime"],
              ["%p = %a * %b + %a", "%q = %a / %b"], ["%p", "%q"]),
        ins={"a": "1.00390625", "b": "3.3"},
        want={"y": np.array([[BP, bf16(BA / BB)]], np.uint16)}, args=run_args(kind)))
    CASES.append(Case(
        "u8_neg_index_floor_" + kind,
        probe(kind, "i64", ["%u: u8 = runtime", "%k: index = runtime"],
              ["%n = -%u", "%a = i64(%n)", "%q = i64(%k / 2)", "%r = i64(mod(%k, 4))",
               "%m = i64(min(%k, 0 - 3))"], ["%a", "%q", "%r", "%m"]),
        ins={"u": "3", "k": "-7"},
        want={"y": np.array([[253, -4, 1, -7]], np.int64)}, args=run_args(kind)))
