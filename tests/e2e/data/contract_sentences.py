# The language's contract (docs/language.md) read sentence by sentence, as a held-out tester reads
# it: each case checks one rule that tests/e2e/contract_{values,l3,models}.sh do not reach. Run by
# tests/e2e/contract_sentences.sh. Errors name the file position; values come from numpy.

I32 = np.int32
CASES = []


def k(params, body, dt="i32"):
    """A kernel @k with an out tensor %y [1, 1] of dt, the extra params and body (line 3 on)."""
    return ("program e\nkernel @k(out %%y: tensor[1, 1] %s%s) -> (tensor[1, 1] %s) {\n%s"
            "  return %%y\n}\n" % (dt, params, dt, "".join("  %s\n" % l for l in body)))


def t8(body, dt="f32", extra=""):
    """A kernel @k(%x: tensor[8, 8], out %y: tensor[8, 8]) whose body starts on line 3."""
    return ("program e\nkernel @k(%%x: tensor[8, 8] %s, out %%y: tensor[8, 8] %s%s) -> "
            "(tensor[8, 8] %s) {\n%s  return %%y\n}\n"
            % (dt, dt, extra, dt, "".join("  %s\n" % l for l in body)))


def kent(params, body, outs, name="p"):
    """A kernel entry @k: outs [(name, shape, dtype)] first, then params; body is every line."""
    ps = ["out %%%s: tensor[%s] %s" % (n, ", ".join(map(str, s)), d) for n, s, d in outs]
    arrow = ", ".join("tensor[%s] %s" % (", ".join(map(str, s)), d) for _, s, d in outs)
    return "program %s\nkernel @k(%s) -> (%s) {\n%s}\n" % (
        name, ", ".join(ps + list(params)), arrow, "".join("  %s\n" % l for l in body))


J1 = "kernel @j(out %y: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n  return %y\n}\n"

# (name, program, [texts the message holds]): `pto check` exits 2 naming the position.
ERRS = [
    # -- lexical rules --
    ("percent_operator", k(", %a: i32, %b: i32", ["%c = %a % %b"]),
     [":3:11:", "mod(a, b)"]),
    ("string_bad_escape", "program e\norch @main(out %y: tensor[8, 8] f32) -> (tensor[8, 8] f32) {\n"
     "  incore \"a \\q\" {\n  }\n  return %y\n}\n", [":3:13:", "unknown escape"]),
    ("string_unterminated", "program e\norch @main(out %y: tensor[8, 8] f32) -> (tensor[8, 8] f32) {\n"
     "  incore \"a\n  {\n  }\n  return %y\n}\n", [":3:10:", "unterminated string"]),
    ("float_no_leading_digit", k("", ["%c = .5"]), [":3:8:"]),
    ("hex_without_digits", k("", ["%c = 0x"]), [":3:8:", "malformed number"]),
    ("digits_then_letters", k("", ["%c = 12abc"]), [":3:8:", "malformed number"]),
    ("value_name_digit", k("", ["%1 = 5"]), [":3:3:", "value name"]),
    ("hex_above_u64", k("", ["%c: u64 = 0x1FFFFFFFFFFFFFFFF"]), [":3:13:", "18446744073709551615"]),
    ("nul_byte", k("", ["%c = 1\0"]), [":3:9:", "0x00"]),
    # a statement that starts with a value is an assignment: the message says what follows it
    ("value_then_non_ascii", k("", ["%caf\u00e9 = 1"]), [":3:7:", "unexpected character (byte 0xc3)"]),
    ("value_without_assign", k(", %a: i32", ["%a + 1"]), [":3:6:", "expected '=' after %a", "found '+'"]),
    ("space_not_a_space", t8(["%t: tile[8, 8] f32 @foo = tile.load(%x, [0, 0], [8, 8])"]),
     [":3:22:", "@foo", "vec, mat, left, right, acc"]),
    # -- grammar --
    ("no_program_header", J1, [":1:1:", "program NAME"]),
    ("rank_zero_tensor", "program e\nkernel @k(%x: tensor[] f32, out %y: tensor[1, 1] i32) -> "
     "(tensor[1, 1] i32) {\n  return %y\n}\n", [":2:22:"]),
    ("trailing_comma", k(", %a: i32", ["%c = min(%a, 1,)"]), [":3:17:"]),
    ("keyword_before_positional", t8(["%t = tile.load(%x, pad=min, [0, 0], [8, 8])"]),
     [":3:31:", "positional argument follows a keyword"]),
    ("keyword_twice", t8(["%t = tile.load(%x, [0, 0], [8, 8], pad=min, pad=max)"]),
     [":3:51:", "'pad' is given twice"]),
    ("unknown_keyword", t8(["%t = tile.load(%x, [0, 0], [8, 8], bogus=1)"]),
     [":3:44:", "unknown keyword 'bogus'", "space, valid, pad"]),
    ("unknown_op", t8(["%t = tile.frobnicate(%x)"]), [":3:8:", "unknown op 'tile.frobnicate'"]),
    ("space_as_func_token_value", t8(["%t = tile.load(%x, [0, 0], [8, 8], space=@vec)"]),
     [":3:44:"]),
    ("string_for_word_kwarg", t8(["%t = tile.load(%x, [0, 0], [8, 8], pad=\"zero\")"]),
     [":3:42:", "pad= takes a word"]),
    ("if_branch_counts", k(", %a: i32", ["%c = if %a > 0 {", "  yield %a", "} else {",
                                        "  yield %a, %a", "}"]), [":6:5:", "yield of 2 values"]),
    ("if_branch_dtypes", k(", %a: i32, %f: f32", ["%c = if %a > 0 {", "  yield %a", "} else {",
                                                  "  yield %f", "}"]), [":6:11:", "expected i32"]),
    ("iter_yield_dtype", k(", %a: i32, %f: f32", ["%c = for %i in range(0, 2) iter(%s = %a) {",
                                                  "  yield %f", "}"]), [":4:11:", "iter %s"]),
    ("if_branch_tile_shapes", t8(["%t = tile.load(%x, [0, 0], [8, 8])",
                                  "%u = tile.load(%x, [0, 0], [4, 8])", "%c = if %a > 0 {",
                                  "  yield %t", "} else {", "  yield %u", "}"], extra=", %a: i32"),
     [":8:11:", "tile[4, 8] f32"]),
    ("yield_not_last", k(", %a: i32", ["%c = for %i in range(0, 4) iter(%s = %a) {", "  yield %s",
                                      "  %d = %s + 1", "}"]), [":5:5:", "last statement"]),
    ("yield_in_function", "program e\nkernel @k(out %y: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n"
     "  yield %y\n}\n", [":3:3:", "use return"]),
    ("return_in_for", k("", ["for %i in range(0, 4) {", "  return %y", "}"]), [":4:5:", "return"]),
    ("call_device_in_kernel", "program e\n" + J1 + "kernel @k(out %y: tensor[1, 1] i32) -> "
     "(tensor[1, 1] i32) {\n  call @j(%y) device=0\n  return %y\n}\n", [":6:3:"]),
    ("kernel_without_arrow", "program e\nkernel @k(out %y: tensor[1, 1] i32) {\n  return %y\n}\n",
     [":2:1:", "-> (tensor[1, 1] i32)"]),
    ("host_with_results", "program e\nhost @h(out %y: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n}\n",
     [":3:1:"]),
    # -- types and conversions --
    ("float_literal_is_f32", k(", %g: f64", ["%c = 1.5", "%d = %c + %g"]), [":4:11:", "f32 and f64"]),
    ("int_literal_is_index", k(", %a: i32", ["%c = 5", "%d = %c + %a"]), [":4:11:", "index and i32"]),
    ("loop_var_is_index", k(", %a: i32", ["for %i in range(0, 4) {", "  %c = %i + %a", "}"]),
     [":4:13:", "index and i32"]),
    ("loop_bound_not_index", k(", %a: i32", ["for %i in range(0, %a) {", "}"]),
     [":3:22:", "index(x)"]),
    ("bool_default_int", k(", %b: bool = 1", []), [":2:48:", "true or false"]),
    ("int_default_bool", k(", %n: i32 = true", []), [":2:47:", "bool, not i32"]),
    ("i32_default_above", k(", %n: i32 = 2147483648", []),
     [":2:47:", "-2147483648 to 2147483647"]),
    ("u8_default_negative", k(", %n: u8 = -1", []), [":2:46:", "0 to 255"]),
    ("int_default_inf", k(", %n: i32 = inf", []), [":2:47:", "inf does not fit i32 (an integer"]),
    ("float_literal_int_context", k(", %a: i32", ["%c = %a + 1.5"]),
     [":3:13:", "1.5 does not fit i32 (an integer from -2147483648"]),
    ("int_literal_i8_context", k(", %a: i8", ["%c = %a + 200"]), [":3:13:", "-128 to 127"]),
    ("op_scalar_float_literal_int_tile", t8(["%t = tile.load(%x, [0, 0], [8, 8])",
                                             "%u = tile.adds(%t, 1.5)"], "i32"),
     [":4:22:", "1.5 does not fit i32"]),
    ("op_scalar_other_dtype", t8(["%t = tile.load(%x, [0, 0], [8, 8])", "%u = tile.adds(%t, %s)"],
                                 extra=", %s: f64"), [":4:22:", "f32(x)"]),
    ("not_of_int", k(", %a: i32", ["%c = !%a"]), [":3:9:", "bool"]),
    ("minus_of_bool", k(", %a: bool", ["%c = -%a"]), [":3:9:", "number"]),
    ("typed_result_mismatch", k(", %a: i32", ["%c: i64 = %a + 1"]), [":3:16:", "i64(x)"]),
    ("typed_iter_mismatch", k(", %a: i32", ["%c = for %i in range(0, 4) iter(%s: i64 = %a) {",
                                           "  yield %s", "}"]), [":3:45:", "iter %s"]),
    ("typed_tile_valid_mismatch",
     t8(["%t: tile[8, 8] f32 @vec valid[5, 8] = tile.load(%x, [0, 0], [8, 8], valid=[4, 8])"]),
     [":3:3:", "valid[4, 8]"]),
    ("typed_tile_space_mismatch", t8(["%t: tile[8, 8] f32 @mat = tile.load(%x, [0, 0], [8, 8])"]),
     [":3:3:", "@vec"]),
    # -- functions, parameters, symbols --
    ("symbol_declared_twice", "program e\ndynamic R, R\n" + J1, [":2:12:", "declared twice"]),
    ("symbol_true", "program e\ndynamic true\n" + J1, [":2:9:", "'true'"]),
    ("symbol_yield", "program e\ndynamic yield\n" + J1, [":2:9:", "'yield'"]),
    ("symbol_index", "program e\ndynamic index\n" + J1, [":2:9:", "'index'"]),
    ("symbol_incore", "program e\ndynamic incore\n" + J1, [":2:9:", "'incore'"]),
    ("symbol_undeclared", "program e\nkernel @k(out %y: tensor[Q, 1] i32) -> (tensor[Q, 1] i32) {\n"
     "  return %y\n}\n", [":2:26:", "dynamic Q"]),
    ("symbol_declared_after_use", "program e\nkernel @k(out %y: tensor[R, 1] i32) -> "
     "(tensor[R, 1] i32) {\n  return %y\n}\ndynamic R\n", [":2:26:", "before its declaration"]),
    ("extent_expression", "program e\ndynamic R\nkernel @k(%x: tensor[R, 4] f32, out %y: "
     "tensor[R * 2, 4] f32) -> (tensor[R * 2, 4] f32) {\n  return %y\n}\n",
     [":3:50:", "static integer or a dynamic symbol"]),
    # symbols are bound from the function's own tensor parameters: one no tensor parameter has is
    # refused by the verifier (pto check), not left to fail in code generation
    ("symbol_unbound_kernel", "program e\ndynamic R\nkernel @k(out %y: tensor[1, 1] index) -> "
     "(tensor[1, 1] index) {\n  %n = R + 1\n  return %y\n}\n",
     [":4:8:", "'R' is not bound by any tensor parameter of @k"]),
    ("symbol_unbound_orch_callee", "program e\ndynamic M\n"
     "kernel @k(out %y: tensor[1, 1] i32, %v: i32) -> (tensor[1, 1] i32) {\n  return %y\n}\n"
     "orch @o(out %y: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n  call @k(%y, i32(M))\n"
     "  return %y\n}\nhost @h(%x: tensor[M, 4] i32, out %y: tensor[1, 1] i32) {\n"
     "  call @o(%y) device=0\n}\n", [":7:19:", "'M' is not bound by any tensor parameter of @o"]),
    ("symbol_unbound_host", "program e\ndynamic M\nhost @h(out %y: tensor[1, 1] i32) {\n"
     "  %w = dist.alloc_window([M, 4], f32)\n}\n", [":4:27:", "'M' is not bound", "@h"]),
    ("param_twice", "program e\nkernel @k(out %y: tensor[1, 1] i32, %y: i32) -> "
     "(tensor[1, 1] i32) {\n  return %y\n}\n", [":2:37:", "declared twice"]),
    ("tensor_param_default", "program e\nkernel @k(out %y: tensor[1, 1] i32 = 3) -> "
     "(tensor[1, 1] i32) {\n  return %y\n}\n", [":2:15:", "only scalar parameters"]),
    ("scalar_param_direction", "program e\nkernel @k(out %y: tensor[1, 1] i32, out %n: i32) -> "
     "(tensor[1, 1] i32) {\n  return %y\n}\n", [":2:41:", "only tensor parameters"]),
    ("unshaped_kernel_param", "program e\nkernel @k(%x: tensor f32, out %y: tensor[8, 8] f32) -> "
     "(tensor[8, 8] f32) {\n  return %y\n}\n", [":2:11:", "only on the entry"]),
    ("function_twice", "program e\n" + J1 + J1, [":5:8:", "already defined at 2:1"]),
    ("value_twice", k(", %a: i32", ["%c = %a + 1", "%c = %a + 2"]), [":4:3:", "SSA"]),
    ("value_undefined", k("", ["%c = %zz + 1"]), [":3:8:", "%zz"]),
    ("incore_value_escapes", "program e\norch @main(%x: tensor[8, 8] f32, out %y: tensor[8, 8] f32)"
     " -> (tensor[8, 8] f32) {\n  incore {\n    %t = tile.load(%x, [0, 0], [8, 8])\n  }\n"
     "  incore {\n    tile.store(%t, [0, 0], %y)\n  }\n  return %y\n}\n", [":7:16:", "%t"]),
    ("incore_dist", "program e\norch @main(%x: dtensor[1, 8] i32, out %y: tensor[8, 8] f32) -> "
     "(tensor[8, 8] f32) {\n  incore {\n    %c = dist.comm_ctx(%x)\n  }\n  return %y\n}\n",
     [":4:10:", "incore"]),
    ("call_arg_count", "program e\nkernel @j(out %y: tensor[1, 1] i32, %a: i32) -> (tensor[1, 1] i32)"
     " {\n  return %y\n}\norch @main(out %y: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n"
     "  call @j(%y)\n  return %y\n}\n", [":6:3:", "1 argument for 2 parameters"]),
    ("call_result_count", "program e\nkernel @j(out %a: tensor[1, 1] i32, out %b: tensor[1, 1] i32)"
     " -> (tensor[1, 1] i32, tensor[1, 1] i32) {\n  return %a, %b\n}\norch @main(out %a: "
     "tensor[1, 1] i32, out %b: tensor[1, 1] i32) -> (tensor[1, 1] i32, tensor[1, 1] i32) {\n"
     "  %a1 = call @j(%a, %b)\n  return %a, %b\n}\n", [":6:9:", "1 result named"]),
    ("call_orch_from_orch", "program e\norch @o(out %a: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n"
     "  return %a\n}\norch @main(out %a: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n"
     "  call @o(%a)\n  return %a\n}\n", [":6:3:", "@o is an orch"]),
    ("call_unknown", "program e\norch @main(out %a: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n"
     "  call @nope(%a)\n  return %a\n}\n", [":3:8:", "@nope"]),
    ("call_shape", "program e\nkernel @j(out %a: tensor[2, 2] i32) -> (tensor[2, 2] i32) {\n"
     "  return %a\n}\norch @main(out %a: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n"
     "  call @j(%a)\n  return %a\n}\n", [":6:11:", "dim 0 is 1, the parameter's 2"]),
    ("call_dtype", "program e\nkernel @j(out %a: tensor[1, 1] f32) -> (tensor[1, 1] f32) {\n"
     "  return %a\n}\norch @main(out %a: tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n"
     "  call @j(%a)\n  return %a\n}\n", [":6:11:", "tensor[1, 1] f32"]),
    ("call_tensor_for_scalar", "program e\nkernel @j(out %y: tensor[1, 1] i32, %a: i32) -> "
     "(tensor[1, 1] i32) {\n  return %y\n}\norch @main(out %y: tensor[1, 1] i32) -> "
     "(tensor[1, 1] i32) {\n  call @j(%y, %y)\n  return %y\n}\n",
     [":6:15:", "argument 2 for %a: expected a scalar of type i32, got %y: tensor[1, 1] i32"]),
    ("fill_value_tile", t8(["%t = tile.load(%x, [0, 0], [8, 8])", "%f = tile.full([8, 8], f32, %t)"]),
     [":4:31:", "the fill value: expected a scalar of type f32"]),
    # a tensor parameter without a direction is in and never written, through a view either
    ("in_written_by_call", "program e\n" + J1 + "orch @main(%x: tensor[1, 1] i32, out %y: "
     "tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n  call @j(%x)\n  call @j(%y)\n  return %y\n}\n",
     [":6:3:", "writes %x, an in parameter"]),
    ("in_slice_written_by_call", "program e\n" + J1 + "orch @main(%x: tensor[2, 1] i32, out %y: "
     "tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n  %s = tensor.slice(%x, [1, 0], [1, 1])\n"
     "  call @j(%s)\n  call @j(%y)\n  return %y\n}\n", [":7:3:", "a view of %x"]),
    ("in_reshape_written_by_call", "program e\n" + J1 + "orch @main(%x: tensor[1] i32, out %y: "
     "tensor[1, 1] i32) -> (tensor[1, 1] i32) {\n  %s = tensor.reshape(%x, [1, 1])\n"
     "  call @j(%s)\n  call @j(%y)\n  return %y\n}\n", [":7:3:", "a view of %x"]),
    # -- ops in the wrong function, ops' required keywords, spaces --
    ("read_in_kernel", t8(["%v = tensor.read(%x, [0, 0])"]), [":3:8:", "only in an orch"]),
    ("create_in_kernel", t8(["%t = tensor.create([8, 8], f32)"]), [":3:8:", "orch or a host"]),
    ("world_size_in_orch", "program e\norch @main(out %y: tensor[8, 8] f32) -> (tensor[8, 8] f32) {\n"
     "  %n = dist.world_size()\n  return %y\n}\n", [":3:8:", "only in a host"]),
    ("alloc_window_in_orch", "program e\norch @main(out %y: tensor[8, 8] f32) -> "
     "(tensor[8, 8] f32) {\n  %w = dist.alloc_window([8, 8], f32)\n  return %y\n}\n",
     [":3:8:", "only in a host"]),
    ("barrier_in_orch", "program e\norch @main(inout %s: dtensor[1, 4] i32) -> (dtensor[1, 4] i32)"
     " {\n  dist.barrier(%s)\n  return %s\n}\n", [":3:3:", "only in a kernel"]),
    ("move_needs_space", t8(["%t = tile.load(%x, [0, 0], [8, 8])", "%m = tile.move(%t)"]),
     [":4:8:", "needs space="]),
    ("notify_needs_op", "program e\nkernel @k(inout %s: dtensor[1, 4] i32) -> (dtensor[1, 4] i32) {\n"
     "  dist.notify(%s, 0, [0, 0], 1)\n  return %s\n}\n", [":3:3:", "needs op="]),
    ("wait_needs_cmp", "program e\nkernel @k(inout %s: dtensor[1, 4] i32) -> (dtensor[1, 4] i32) {\n"
     "  dist.wait(%s, [0, 0], 1)\n  return %s\n}\n", [":3:3:", "needs cmp="]),
    ("cmp_needs_cmp", t8(["%t = tile.load(%x, [0, 0], [8, 8])", "%e = tile.cmp(%t, %t)"]),
     [":4:8:", "needs cmp="]),
    ("cmp_unknown", t8(["%t = tile.load(%x, [0, 0], [8, 8])", "%e = tile.cmp(%t, %t, cmp=foo)"]),
     [":4:29:", "eq ne lt le gt ge"]),
    ("pad_unknown", t8(["%t = tile.load(%x, [0, 0], [8, 8], pad=foo)"]), [":3:42:", "zero min max"]),
    ("allreduce_mode_unknown", "program e\nkernel @k(inout %w: dtensor[1, 4] f32, inout %s: "
     "dtensor[1, 4] i32) -> (dtensor[1, 4] f32, dtensor[1, 4] i32) {\n"
     "  %w1 = dist.allreduce(%w, %s, mode=tree)\n  return %w1, %s\n}\n", [":3:37:", "mesh ring"]),
    ("signal_not_i32", "program e\nkernel @k(inout %w: dtensor[1, 4] f32, inout %s: dtensor[1, 4] "
     "f32) -> (dtensor[1, 4] f32, dtensor[1, 4] f32) {\n  %w1 = dist.allreduce(%w, %s)\n"
     "  return %w1, %s\n}\n", [":3:28:", "i32 dtensor [1, S]"]),
    ("signal_two_rows", "program e\nkernel @k(inout %w: dtensor[1, 4] f32, inout %s: dtensor[2, 4] "
     "i32) -> (dtensor[1, 4] f32, dtensor[2, 4] i32) {\n  %w1 = dist.allreduce(%w, %s)\n"
     "  return %w1, %s\n}\n", [":3:28:", "i32 dtensor [1, S]"]),
    ("load_into_left", t8(["%t = tile.load(%x, [0, 0], [8, 8], space=left)"]),
     [":3:44:", "only vec and mat"]),
    ("matmul_of_vec", t8(["%t = tile.load(%x, [0, 0], [8, 8])", "%c = tile.matmul(%t, %t)"]),
     [":4:20:", "left"]),
    ("matmul_inner_dims", "program e\nkernel @k(%x: tensor[16, 16] f32, out %y: tensor[16, 16] f32)"
     " -> (tensor[16, 16] f32) {\n  %a = tile.load(%x, [0, 0], [16, 8], space=mat)\n"
     "  %b = tile.load(%x, [0, 0], [16, 16], space=mat)\n  %l = tile.move(%a, space=left)\n"
     "  %r = tile.move(%b, space=right)\n  %c = tile.matmul(%l, %r)\n  return %y\n}\n",
     [":7:8:", "inner dims"]),
    ("store_dtype", "program e\nkernel @k(%x: tensor[8, 8] f32, out %y: tensor[8, 8] f16) -> "
     "(tensor[8, 8] f16) {\n  %t = tile.load(%x, [0, 0], [8, 8])\n"
     "  %y1 = tile.store(%t, [0, 0], %y)\n  return %y1\n}\n", [":4:9:", "f32", "f16"]),
    ("add_shapes", t8(["%t = tile.load(%x, [0, 0], [8, 8])", "%u = tile.load(%x, [0, 0], [4, 8])",
                       "%v = tile.add(%t, %u)"]), [":5:8:", "[8,8] and [4,8]"]),
    ("op_arg_count", t8(["%t = tile.load(%x, [0, 0], [8, 8])", "%u = tile.add(%t)"]),
     [":4:8:", "2 positional arguments"]),
    ("tile_rank_three", t8(["%t = tile.create([2, 8, 8], f32)"]), [":3:20:", "3 entries, expected 2"]),
    ("load_offsets_rank", t8(["%t = tile.load(%x, [0], [8, 8])"]), [":3:22:", "1 entry, expected 2"]),
    ("slice_offsets_rank", "program e\norch @main(%x: tensor[8, 8] f32, out %y: tensor[8, 8] f32) ->"
     " (tensor[8, 8] f32) {\n  %s = tensor.slice(%x, [0], [8])\n  return %y\n}\n",
     [":3:25:", "1 entry, expected 2"]),
    ("load_offset_past_edge", t8(["%a = tile.load(%x, [8, 0], [8, 8])"]), [":3:23:", "offset 8"]),
    ("store_offset_past_edge", t8(["%a = tile.load(%x, [0, 0], [8, 8])",
                                   "%y1 = tile.store(%a, [0, 8], %y)"]), [":4:28:", "offset 8"]),
    ("valid_above_shape", t8(["%t = tile.load(%x, [0, 0], [8, 8], valid=[9, 8])"]),
     [":3:45:", "valid rows 9"]),
    ("footprint_vec", "program e\nkernel @k(%x: tensor[512, 512] f32, out %y: tensor[512, 512] f32)"
     " -> (tensor[512, 512] f32) {\n  %t = tile.load(%x, [0, 0], [256, 256])\n"
     "  %y1 = tile.store(%t, [0, 0], %y)\n  return %y1\n}\n",
     [":3:8:", "262144 bytes", "196608 bytes"]),
    ("select_rank_one", "program e\norch @main(%x: tensor[8] f32, out %y: tensor[8] f32) -> "
     "(tensor[8] f32) {\n  %s = tensor.select(%x, 0)\n  return %y\n}\n", [":3:22:", "rank 1"]),
    ("reshape_count", "program e\norch @main(%x: tensor[8, 8] f32, out %y: tensor[8, 8] f32) -> "
     "(tensor[8, 8] f32) {\n  %s = tensor.reshape(%x, [8, 7])\n  return %y\n}\n", [":3:27:", "64"]),
    ("reshape_not_contiguous", "program e\norch @main(%x: tensor[8, 8] f32, out %y: tensor[8, 8] "
     "f32) -> (tensor[8, 8] f32) {\n  %a = tensor.slice(%x, [0, 0], [8, 4])\n"
     "  %s = tensor.reshape(%a, [32])\n  return %y\n}\n", [":4:23:", "not contiguous"]),
    ("dim_axis_past_rank", t8(["%d = tensor.dim(%x, 2)"]), [":3:23:", "axis 2"]),
    # -- second set: dtypes, shapes, static indices --
    ("divs_constant_zero", t8(["%t = tile.load(%x, [0, 0], [8, 8])", "%u = tile.divs(%t, 0)"], "i32"),
     [":4:22:", "constant zero"]),
    ("rems_constant_zero", t8(["%t = tile.load(%x, [0, 0], [8, 8])", "%u = tile.rems(%t, 0)"], "i32"),
     [":4:22:", "constant zero"]),
    ("ci_float_dtype", "program e\nkernel @k(out %y: tensor[1, 8] f32) -> (tensor[1, 8] f32) {\n"
     "  %t = tile.ci(0, [1, 8], dtype=f32)\n  return %y\n}\n", [":3:33:", "i32 i16 i64"]),
    ("ci_two_rows", "program e\nkernel @k(out %y: tensor[2, 8] i32) -> (tensor[2, 8] i32) {\n"
     "  %t = tile.ci(0, [2, 8], dtype=i32)\n  return %y\n}\n", [":3:19:", "[1, N]"]),
    ("extract_static_outside", t8(["%t = tile.load(%x, [0, 0], [8, 8])",
                                   "%e = tile.extract(%t, [6, 0], [4, 4])"]), [":4:26:", "rows 6..10"]),
    ("gather_static_outside", "program e\nkernel @k(%x: tensor[8, 8] f32, out %y: tensor[1, 8] f32)"
     " -> (tensor[1, 8] f32) {\n  %t = tile.load(%x, [0, 0], [8, 8])\n"
     "  %i = tile.full([1, 8], i32, 64)\n  %g = tile.gather(%t, %i)\n"
     "  %y1 = tile.store(%g, [0, 0], %y)\n  return %y1\n}\n", [":5:24:", "index 64"]),
    ("tile_reshape_count", t8(["%t = tile.load(%x, [0, 0], [8, 8])", "%e = tile.reshape(%t, [4, 8])"]),
     [":4:25:", "64 elements"]),
    ("concat_rows", t8(["%t = tile.load(%x, [0, 0], [8, 8])", "%u = tile.load(%x, [0, 0], [4, 8])",
                        "%e = tile.concat(%t, %u)"]), [":5:8:", "row counts differ"]),
    ("sel_mask_not_bool", t8(["%t = tile.load(%x, [0, 0], [8, 8])", "%e = tile.sel(%t, %t, %t)"]),
     [":4:17:", "bool tile"]),
    ("and_of_float", t8(["%t = tile.load(%x, [0, 0], [8, 8])", "%e = tile.and(%t, %t)"]),
     [":4:8:", "integer or bool"]),
    ("sin_of_int", t8(["%t = tile.load(%x, [0, 0], [8, 8])", "%e = tile.sin(%t)"], "i32"),
     [":4:8:", "float tile"]),
]
for name, text, msgs in ERRS:
    CASES.append(Case("err_" + name, text, cmd="check", err=(2, msgs)))

# -- values: compiled, with --check holding it to the interpreter's bits -------------------------

# yield and iter take expressions; typed iter variables and typed multi-result ifs.
CASES.append(Case("yield_expr_typed_iter", kent(["%a: i32 = runtime"], [
    "%c = for %i in range(0, 4) iter(%s: i32 = %a) {", "  yield %s + i32(%i) * 2", "}",
    "%m: i32, %n: f32 = if %a > 0 {", "  yield %a * 10, 1.5", "} else {", "  yield 0, 2.5", "}",
    "%t0 = tile.full([1, 1], i32, %c)", "%y0 = tile.store(%t0, [0, 0], %y)",
    "%t1 = tile.full([1, 1], i32, %m)", "%y1 = tile.store(%t1, [0, 1], %y0)",
    "%t2 = tile.full([1, 1], i32, i32(%n * 2.0))", "%y2 = tile.store(%t2, [0, 2], %y1)",
    "return %y2"], [("y", (1, 3), "i32")]), ins={"a": "3"},
    want={"y": np.array([[15, 30, 3]], I32)}, args=["--entry", "k"]))
# A bool parameter's default is true or false, and -D overrides it.
for b, v in (("", 1), ("false", 2)):
    CASES.append(Case("bool_default_" + (b or "true"), kent(["%b: bool = true"], [
        "%c: i32 = if %b {", "  yield 1", "} else {", "  yield 2", "}",
        "%t = tile.full([1, 1], i32, %c)", "%y1 = tile.store(%t, [0, 0], %y)", "return %y1"],
        [("y", (1, 1), "i32")]), want={"y": np.array([[v]], I32)},
        args=["--entry", "k"] + (["-D", "b=" + b] if b else [])))
# tile.cast to bool: nonzero -> 1 (NaN and a denormal are nonzero, -0.0 is zero); a bool tile
# stores to u8 and bool tensors and loads from u8 ones.
CASES.append(Case("cast_bool_zeros", kent(["%x: tensor[1, 6] f32"], [
    "%t = tile.load(%x, [0, 0], [1, 6])", "%b = tile.cast(%t, bool)", "%n = tile.not(%b)",
    "%y1 = tile.store(%b, [0, 0], %y)", "%z1 = tile.store(%n, [0, 0], %z)", "return %y1, %z1"],
    [("y", (1, 6), "u8"), ("z", (1, 6), "bool")]),
    ins={"x": np.array([[0.0, -0.0, np.nan, 1e-45, -np.inf, 0.5]], np.float32)},
    want={"y": np.array([[0, 0, 1, 1, 1, 1]], np.uint8),
          "z": np.array([[1, 1, 0, 0, 0, 0]], bool)}, args=["--entry", "k"]))
# Integer division by a runtime zero is a launch error, for the scalar forms of the ops too.
for op in ("divs", "rems"):
    CASES.append(Case(op + "_runtime_zero", kent(["%x: tensor[1, 4] i32", "%z: i32 = runtime"], [
        "%t = tile.load(%x, [0, 0], [1, 4])", "%%u = tile.%s(%%t, %%z)" % op,
        "%y1 = tile.store(%u, [0, 0], %y)", "return %y1"], [("y", (1, 4), "i32")]),
        ins={"x": np.array([[1, 2, 3, 4]], I32), "z": "0"}, err=(1, "zero"),
        args=["--entry", "k"]))
# A u64 context takes every value to 2^64 - 1, hex included; i64 down to -2^63.
CASES.append(Case("u64_i64_literal_ranges",
                  kent(["%m: i64 = -9223372036854775808", "%u: u64 = 0xffffffffffffffff"], [
                      "%a = tile.full([1, 1], i64, %m)", "%y1 = tile.store(%a, [0, 0], %y)",
                      "%b = %u - 18446744073709551615", "%c = tile.full([1, 1], i64, i64(%b) + 5)",
                      "%y2 = tile.store(%c, [0, 1], %y1)",
                      "%f = tile.full([1, 2], u64, 0xffffffffffffffff)",
                      "%g = tile.subs(%f, 18446744073709551614)",
                      "%z1 = tile.store(%g, [0, 0], %z)", "return %y2, %z1"],
                      [("y", (1, 2), "i64"), ("z", (1, 2), "u64")]),
                  want={"y": np.array([[-2**63, 5]], np.int64),
                        "z": np.array([[1, 1]], np.uint64)}, args=["--entry", "k"]))
# A store inside an if without else writes only on the branch taken.
for a, row in (("0", [0, 0, 0, 7]), ("1", [1, 2, 3, 7])):
    CASES.append(Case("store_in_if_" + a, kent(["%x: tensor[1, 4] i32", "%a: i32 = runtime"], [
        "%t = tile.load(%x, [0, 0], [1, 4])", "if %a > 0 {", "  tile.store(%t, [0, 0], %y)", "}",
        "%z = tile.full([1, 1], i32, 7)", "%y1 = tile.store(%z, [0, 3], %y)", "return %y1"],
        [("y", (1, 4), "i32")]), ins={"x": np.array([[1, 2, 3, 4]], I32), "a": a},
        want={"y": np.array([row], I32)}, args=["--entry", "k"]))
# Comments need no blank before them, and the last line needs no newline; CR LF line ends and
# tabs are blanks.
CASES.append(Case("comment_tight_crlf_tabs", (kent(["%a: i32 = runtime"], [
    "%c = %a+1#no blank before this comment", "%t = tile.full([1, 1],\ti32, %c)#nor here",
    "%y1 = tile.store(%t, [0, 0], %y)", "return %y1"], [("y", (1, 1), "i32")])
    + "# last line, no newline").replace("\n", "\r\n"),
    ins={"a": "41"}, want={"y": np.array([[42]], I32)}, args=["--entry", "k"]))
# for ... in parallel in a kernel.
CASES.append(Case("parallel_in_kernel", kent(["%x: tensor[4, 8] f32"], [
    "for %i in parallel(0, 4) {", "  %t = tile.load(%x, [%i, 0], [1, 8])", "  %u = tile.muls(%t, 2)",
    "  tile.store(%u, [%i, 0], %y)", "}", "return %y"], [("y", (4, 8), "f32")]),
    ins={"x": np.arange(32, dtype=np.float32).reshape(4, 8)},
    want={"y": np.arange(32, dtype=np.float32).reshape(4, 8) * 2}, args=["--entry", "k"]))
# A float literal takes the float dtype of its context in one rounding (G = 1 + 2^-11 + 2^-30
# written out: to f16 straight it rounds up; through f32 it would tie and round to 1); an f64
# context keeps 0.1 as f64's 0.1, in a default, a -D binding and an op's scalar.
G = "1.000488281715310551226139068603515625"
CASES.append(Case("float_literal_rounds_once", kent(["%g: f64 = 0.1", "%h: f16 = " + G], [
    "%a = tile.full([1, 1], f16, " + G + ")", "%ya = tile.store(%a, [0, 0], %y)",
    "%b = tile.full([1, 1], f64, 0.1)", "%zb = tile.store(%b, [0, 0], %z)",
    "%c = tile.full([1, 1], f64, %g)", "%zc = tile.store(%c, [0, 1], %zb)",
    "%d = tile.full([1, 1], f16, %h)", "%yd = tile.store(%d, [0, 1], %ya)",
    "%e = %g * 3.0", "%f = tile.full([1, 1], f64, %e)", "%zf = tile.store(%f, [0, 2], %zc)",
    "%hh = %h + 0.0", "%i = tile.full([1, 1], f16, %hh)", "%yi = tile.store(%i, [0, 2], %yd)",
    "return %yi, %zf"], [("y", (1, 3), "f16"), ("z", (1, 3), "f64")]),
    want={"y": np.array([[1.0009765625] * 3], np.float16),
          "z": np.array([[0.1, 0.1, 0.1 * 3.0]], np.float64)}, args=["--entry", "k"]))
CASES.append(Case("define_f64_exact", kent(["%g: f64"], [
    "%c = tile.full([1, 1], f64, %g)", "%y1 = tile.store(%c, [0, 0], %y)", "return %y1"],
    [("y", (1, 1), "f64")]), want={"y": np.array([[0.1]], np.float64)},
    args=["--entry", "k", "-D", "g=0.1"]))
# tri and ci take runtime scalars (a negative diagonal, a descending i64 start).
CASES.append(Case("tri_ci_runtime", kent(["%d: index = runtime", "%s: i64 = runtime"], [
    "%t = tile.tri(%d, [4, 4], dtype=f32, upper=true)", "%y1 = tile.store(%t, [0, 0], %y)",
    "%c = tile.ci(%s, [1, 8], dtype=i64, descending=true)", "%z1 = tile.store(%c, [0, 0], %z)",
    "return %y1, %z1"], [("y", (4, 4), "f32"), ("z", (1, 8), "i64")]), ins={"d": "-1", "s": "3"},
    want={"y": np.triu(np.ones((4, 4), np.float32), -1),
          "z": np.array([[3 - j for j in range(8)]], np.int64)}, args=["--entry", "k"]))
# A call's results name the callee's out/inout tensors in order; the second call's inputs are
# the first one's results (aliases of the same buffers).
CASES.append(Case("orch_call_results", """program p
kernel @j(out %a: tensor[1, 2] i32, inout %b: tensor[1, 2] i32) -> (tensor[1, 2] i32, tensor[1, 2] i32) {
  %t = tile.load(%b, [0, 0], [1, 2])
  %u = tile.adds(%t, 1)
  %a1 = tile.store(%u, [0, 0], %a)
  %b1 = tile.store(%u, [0, 0], %b)
  return %a1, %b1
}
orch @main(out %a: tensor[1, 2] i32, inout %b: tensor[1, 2] i32) -> (tensor[1, 2] i32, tensor[1, 2] i32) {
  %a1, %b1 = call @j(%a, %b)
  %a2, %b2 = call @j(%a1, %b1)
  return %a2, %b2
}
""", ins={"b": np.array([[5, -1]], I32)},
    want={"a": np.array([[7, 1]], I32), "b": np.array([[7, 1]], I32)}))
# tensor.create's elements start as zeros (as PyPTO's create_tensor), a buffer made again in a
# loop too (its memory is the last iteration's, given back when that iteration's tasks ended).
CASES.append(Case("tensor_create_zeros", """program p
kernel @bump(inout %t: tensor[4, 8] i32, %v: i32) -> (tensor[4, 8] i32) {
  %a = tile.load(%t, [0, 0], [4, 8])
  %b = tile.adds(%a, %v)
  %t1 = tile.store(%b, [0, 0], %t)
  return %t1
}
kernel @row(%t: tensor[4, 8] i32, %f: tensor[2, 8] f16, out %y: tensor[1, 8] i32, out %z: tensor[1, 8] f16) -> (tensor[1, 8] i32, tensor[1, 8] f16) {
  %a = tile.load(%t, [3, 0], [1, 8])
  %y1 = tile.store(%a, [0, 0], %y)
  %g = tile.load(%f, [1, 0], [1, 8])
  %z1 = tile.store(%g, [0, 0], %z)
  return %y1, %z1
}
orch @main(out %y: tensor[3, 8] i32, out %z: tensor[3, 8] f16) -> (tensor[3, 8] i32, tensor[3, 8] f16) {
  for %i in range(0, 3) {
    %t = tensor.create([4, 8], i32)
    %f = tensor.create([2, 8], f16)
    call @bump(%t, i32(%i) + 1)
    %ys = tensor.slice(%y, [%i, 0], [1, 8])
    %zs = tensor.slice(%z, [%i, 0], [1, 8])
    call @row(%t, %f, %ys, %zs)
  }
  return %y, %z
}
""", want={"y": np.repeat(np.array([[1], [2], [3]], I32), 8, 1),
           "z": np.zeros((3, 8), np.float16)}))
# An incore scope is outlined into a kernel of the tensors and scalars it uses: a dynamic symbol
# of the orch used in the scope (here only in scalars and a valid region, on no tensor the scope
# touches) is bound in that kernel too.
CASES.append(Case("incore_uses_orch_symbol", """program p
dynamic M
orch @main(%x: tensor[M, 4] f32, %w: tensor[8, 4] f32, out %y: tensor[1, 2] i32, out %z: tensor[8, 4] f32) -> (tensor[1, 2] i32, tensor[8, 4] f32) {
  for %i in range(0, 2) {
    incore {
      %t = tile.full([1, 1], i32, i32(M) * 10 + i32(%i))
      tile.store(%t, [0, %i], %y)
    }
  }
  incore "valid" {
    %u = tile.load(%w, [0, 0], [8, 4], valid=[M, 4], pad=max)
    tile.store(%u, [0, 0], %z)
  }
  return %y, %z
}
""", ins={"x": np.zeros((5, 4), np.float32), "w": np.ones((8, 4), np.float32)},
    want={"y": np.array([[50, 51]], I32),
          "z": np.concatenate([np.ones((5, 4), np.float32),
                               np.zeros((3, 4), np.float32)])}))
# In a kernel, statements run in program order: a load after a store to the same tensor (through
# its alias, in an overlapping region) reads what the store wrote.
KX = np.arange(16 * 8, dtype=np.float32).reshape(16, 8)
KY = KX.copy()
KY[4:12] = KX[0:8] * 2
KY += 1
KY[8:16] = -KY[8:16]
CASES.append(Case("kernel_store_then_load", """program p
kernel @k(inout %y: tensor[16, 8] f32) -> (tensor[16, 8] f32) {
  %a = tile.load(%y, [0, 0], [8, 8])
  %b = tile.muls(%a, 2.0)
  %y1 = tile.store(%b, [4, 0], %y)
  %c = tile.load(%y1, [0, 0], [16, 8])
  %d = tile.adds(%c, 1.0)
  %y2 = tile.store(%d, [0, 0], %y1)
  %e = tile.load(%y2, [8, 0], [8, 8])
  %f = tile.muls(%e, -1.0)
  %y3 = tile.store(%f, [8, 0], %y2)
  return %y3
}
""", ins={"y": KX}, want={"y": KY}, args=["--entry", "k"]))
# In an orch, program order orders nothing by itself: tasks are ordered by overlapping regions
# and directions. @add1 reads rows 4..11 of %a after the first copy wrote rows 0..7 (read after
# write, half of it); the loop then overwrites all of %a (write after read: it must wait); the
# last @add1 reads rows 6..13, written by both iterations of the loop.
CASES.append(Case("orch_overlap_order", """program p
kernel @cp(%s: tensor[8, 8] f32, out %d: tensor[8, 8] f32) -> (tensor[8, 8] f32) {
  %t = tile.load(%s, [0, 0], [8, 8])
  %d1 = tile.store(%t, [0, 0], %d)
  return %d1
}
kernel @add1(%s: tensor[8, 8] f32, out %d: tensor[8, 8] f32) -> (tensor[8, 8] f32) {
  %t = tile.load(%s, [0, 0], [8, 8])
  %u = tile.adds(%t, 1.0)
  %d1 = tile.store(%u, [0, 0], %d)
  return %d1
}
orch @main(%x: tensor[16, 8] f32, %z: tensor[16, 8] f32, inout %a: tensor[16, 8] f32,
           out %b: tensor[8, 8] f32, out %c: tensor[8, 8] f32)
    -> (tensor[16, 8] f32, tensor[8, 8] f32, tensor[8, 8] f32) {
  %x0 = tensor.slice(%x, [0, 0], [8, 8])
  %a0 = tensor.slice(%a, [0, 0], [8, 8])
  call @cp(%x0, %a0)
  %a4 = tensor.slice(%a, [4, 0], [8, 8])
  call @add1(%a4, %b)
  for %i in range(0, 2) {
    %zi = tensor.slice(%z, [%i * 8, 0], [8, 8])
    %ai = tensor.slice(%a, [%i * 8, 0], [8, 8])
    call @cp(%zi, %ai)
  }
  %a6 = tensor.slice(%a, [6, 0], [8, 8])
  call @add1(%a6, %c)
  return %a, %b, %c
}
""", ins={"x": KX, "z": -KX, "a": KX + 1000},
    want={"a": -KX, "b": np.concatenate([KX[4:8], KX[8:12] + 1000]) + 1, "c": -KX[6:14] + 1}))
# Comm windows come from a host: an orch entry with a dtensor parameter is refused when it is
# compiled (as a kernel entry is), not left to fail in its kernel at launch.
CASES.append(Case("orch_entry_with_dtensor", """program de
kernel @k(inout %s: dtensor[1, 4] i32) -> (dtensor[1, 4] i32) {
  dist.barrier(%s)
  return %s
}
orch @main(inout %s: dtensor[1, 4] i32) -> (dtensor[1, 4] i32) {
  call @k(%s)
  return %s
}
""", err=(2, [":6:18:", "entry @main is an orch with a dtensor parameter %s", "a host that calls @main"])))
# In-place ops reuse a dead operand's buffer and copy a live one: the carried acc is stored after
# the matmul_acc that consumed it, so every round stores the value before its update.
ML = np.arange(16 * 16, dtype=np.float32).reshape(16, 16) % 5 - 2
CASES.append(Case("acc_still_used_in_loop", """program p
kernel @k(%L: tensor[16, 16] f32, %R: tensor[16, 16] f32, out %Y: tensor[48, 16] f32,
          out %Z: tensor[16, 16] f32) -> (tensor[48, 16] f32, tensor[16, 16] f32) {
  %lm = tile.load(%L, [0, 0], [16, 16], space=mat)
  %rm = tile.load(%R, [0, 0], [16, 16], space=mat)
  %l = tile.move(%lm, space=left)
  %r = tile.move(%rm, space=right)
  %z = tile.full([16, 16], f32, 1.0, space=acc)
  %c = for %i in range(0, 3) iter(%a = %z) {
    %a1 = tile.matmul_acc(%a, %l, %r)
    tile.store(%a, [%i * 16, 0], %Y)
    yield %a1
  }
  %Z1 = tile.store(%c, [0, 0], %Z)
  return %Y, %Z1
}
""", ins={"L": ML, "R": np.eye(16, dtype=np.float32)},
    want={"Y": np.concatenate([1 + k * ML for k in range(3)]), "Z": 1 + 3 * ML},
    args=["--entry", "k"]))
