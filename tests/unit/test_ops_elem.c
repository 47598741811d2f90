/* The second set's elementwise ops (docs/language.md, "Ops (second set)"): their typing rules and
 * verifier messages, the printer's round trip, and the interpreter's values on hand-computed cases
 * (the edge rules: NaN comparisons, bool tiles). tests/unit/test_lower.c ("elem" group) checks that
 * compiled kernels give the interpreter's bits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pto/ir.h"
#include "pto/mathf.h"
#include "testutil.h"

/* ---- verifier messages ---- */

typedef struct bad_case {
  const char *body;
  const char *want;
} bad_case;

static void expect_errors(const bad_case *cases, size_t n) {
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    char text[4096];
    snprintf(text, sizeof text, "program bad\n%s", cases[i].body);
    pto_ir_program *p = NULL;
    pto_status s = pto_ir_parse_string(text, strlen(text), "v.ptir", &p);
    if (!s) {
      s = pto_ir_verify(p);
      pto_ir_program_destroy(p);
    }
    if (!s) {
      print_error("case %zu accepted:\n%s", i, text);
      bad++;
      continue;
    }
    if (!strstr(pto_status_message(s), cases[i].want)) {
      print_error("case %zu: got\n  %s\nwant\n  %s\n", i, pto_status_message(s), cases[i].want);
      bad++;
    }
    pto_status_free(s);
  }
  assert_int_equal(bad, 0);
}

#define K2(dt, body)                                                                               \
  "kernel @k(%a: tensor[8, 16] " dt ", %b: tensor[8, 16] " dt ", out %c: tensor[8, 16] " dt        \
  ") -> (tensor[8, 16] " dt ") {\n"                                                                \
  "  %ta = tile.load(%a, [0, 0], [8, 16])\n"                                                       \
  "  %tb = tile.load(%b, [0, 0], [8, 16])\n" body "  return %c\n}\n"

static void test_bool_and_compare_misuse(void **state) {
  static const bad_case cases[] = {
      {K2("f32", "  %m = tile.cmp(%ta, %tb)\n"),
       "v.ptir:5:8: tile.cmp: needs cmp= (one of eq ne lt le gt ge)"},
      {K2("f32", "  %m = tile.cmp(%ta, %tb, cmp=less)\n"),
       "v.ptir:5:31: tile.cmp: cmp=less: expected one of eq ne lt le gt ge"},
      {K2("f32", "  %x = tile.load(%b, [0, 0], [4, 16])\n  %m = tile.cmp(%ta, %x, cmp=eq)\n"),
       "v.ptir:6:8: tile.cmp: shapes [8,16] and [4,16] differ"},
      {K2("f32", "  %m = tile.cmps(%ta, true, cmp=eq)\n"), "tile.cmps: the scalar"},
      {K2("f32", "  %x = tile.sel(%ta, %ta, %tb)\n"),
       "v.ptir:5:17: tile.sel: the mask %ta must be a bool tile, got f32"},
      {K2("f32", "  %m = tile.cmp(%ta, %tb, cmp=lt)\n  %x = tile.cast(%ta, i32)\n"
                 "  %y = tile.sel(%m, %ta, %x)\n"),
       "v.ptir:7:8: tile.sel: dtypes f32 and i32 differ"},
      {K2("f32", "  %m = tile.cmp(%ta, %tb, cmp=lt)\n  %y = tile.sels(%m, %ta, true)\n"),
       "tile.sels: the scalar"},
      {"kernel @k(%a: tensor[8, 16] bool) {\n  %t = tile.load(%a, [0, 0], [8, 16], space=mat)\n}\n",
       "v.ptir:3:8: tile.load: a bool tile lives in vec, not mat"},
      {"kernel @k() {\n  %t = tile.create([8, 16], bool, space=acc)\n}\n",
       "v.ptir:3:8: tile.create: a bool tile lives in vec, not acc"},
      {"kernel @k(%a: tensor[8, 16] bool) {\n  %t = tile.load(%a, [0, 0], [8, 16])\n"
       "  %u = tile.move(%t, space=mat)\n}\n",
       "v.ptir:4:8: tile.move: a bool tile lives in vec, not mat"},
      {"kernel @k(%a: tensor[8, 16] f32) {\n  %t = tile.load(%a, [0, 0], [8, 16], space=mat)\n"
       "  %u = tile.cast(%t, bool)\n}\n",
       "v.ptir:4:8: tile.cast: a bool tile lives in vec, not mat"},
      {"kernel @k(%a: tensor[8, 16] bool, out %c: tensor[8, 16] i8) -> (tensor[8, 16] i8) {\n"
       "  %t = tile.load(%a, [0, 0], [8, 16])\n  %c1 = tile.store(%t, [0, 0], %c)\n  return "
       "%c1\n}\n",
       "v.ptir:4:9: tile.store: the tile is bool but %c is i8 (dtypes must be equal; an acc tile "
       "may "
       "also store to f16 or bf16, a bool tile to u8)"},
  };
  expect_errors(cases, sizeof cases / sizeof cases[0]);
}

/* Arithmetic on bool tiles is not defined (docs/language.md: a bool tile loads, stores, casts,
 * masks and takes and/or/xor/not): the first set's arithmetic ops reject it as the second set's do,
 * where the interpreter and the compiled kernel used to give different bits (row_sum, add, max,
 * relu...). */
static void test_bool_arithmetic_rejected(void **state) {
  static const bad_case cases[] = {
      {K2("bool", "  %x = tile.add(%ta, %tb)\n"),
       "v.ptir:5:8: tile.add: needs an integer or float tile, got bool (cast it with tile.cast)"},
      {K2("bool", "  %x = tile.max(%ta, %tb)\n"),
       "v.ptir:5:8: tile.max: needs an integer or float"},
      {K2("bool", "  %x = tile.muls(%ta, true)\n"), "v.ptir:5:8: tile.muls: needs an integer or"},
      {K2("bool", "  %x = tile.relu(%ta)\n"), "v.ptir:5:8: tile.relu: needs an integer or float"},
      {K2("bool", "  %x = tile.neg(%ta)\n"), "v.ptir:5:8: tile.neg: needs an integer or float"},
      {K2("bool", "  %x = tile.row_sum(%ta)\n"), "v.ptir:5:8: tile.row_sum: needs an integer or"},
      {K2("bool", "  %x = tile.col_max(%ta)\n"), "v.ptir:5:8: tile.col_max: needs an integer or"},
      {K2("bool", "  %x = tile.row_prod(%ta)\n"), "v.ptir:5:8: tile.row_prod: needs an integer"},
      {K2("bool", "  %s = tile.load(%b, [0, 0], [8, 1])\n  %x = tile.row_expand_add(%ta, %s)\n"),
       "v.ptir:6:8: tile.row_expand_add: needs an integer or float tile, got bool"},
  };
  expect_errors(cases, sizeof cases / sizeof cases[0]);
}

static void test_second_set_dtype_rules(void **state) {
  static const bad_case cases[] = {
      {K2("f32", "  %x = tile.and(%ta, %tb)\n"),
       "v.ptir:5:8: tile.and: needs an integer or bool tile, got f32 (cast it with tile.cast)"},
      {K2("bool", "  %x = tile.ands(%ta, true)\n"),
       "v.ptir:5:8: tile.ands: needs an integer tile, got bool"},
      {K2("f16", "  %x = tile.not(%ta)\n"),
       "v.ptir:5:8: tile.not: needs an integer or bool tile, got f16"},
      {K2("f32", "  %x = tile.shl(%ta, %tb)\n"),
       "v.ptir:5:8: tile.shl: needs an integer tile, got f32"},
      {K2("i32", "  %x = tile.shrs(%ta, 1.5)\n"), "tile.shrs: the scalar"},
      {K2("i32", "  %x = tile.fmod(%ta, %tb)\n"),
       "v.ptir:5:8: tile.fmod: needs a float tile, got i32"},
      {K2("bool", "  %x = tile.rem(%ta, %tb)\n"),
       "v.ptir:5:8: tile.rem: needs an integer or float tile, got bool"},
      {K2("i32", "  %x = tile.rems(%ta, 0)\n"),
       "v.ptir:5:23: tile.rems: division by a constant zero"},
      {K2("bool", "  %x = tile.lrelu(%ta, true)\n"),
       "v.ptir:5:8: tile.lrelu: needs an integer or float tile"},
      {K2("f32", "  %s = tile.load(%b, [0, 0], [8, 1])\n  %x = tile.prelu(%ta, %s)\n"),
       "v.ptir:6:24: tile.prelu: operand 2 must be [1,16] for a [8,16] tile, got [8,1]"},
      {K2("f32", "  %s = tile.load(%b, [0, 0], [1, 16])\n  %x = tile.row_expand_max(%ta, %s)\n"),
       "v.ptir:6:33: tile.row_expand_max: operand 2 must be [8,1] for a [8,16] tile, got [1,16]"},
      {K2("i32", "  %s = tile.load(%b, [0, 0], [8, 1])\n  %x = tile.row_expand_expdif(%ta, %s)\n"),
       "v.ptir:6:8: tile.row_expand_expdif: needs a float tile, got i32"},
      {K2("f32", "  %s = tile.load(%b, [0, 0], [1, 16])\n  %y = tile.cast(%s, f16)\n"
                 "  %x = tile.col_expand_min(%ta, %y)\n"),
       "v.ptir:7:8: tile.col_expand_min: dtypes f32 and f16 differ"},
  };
  expect_errors(cases, sizeof cases / sizeof cases[0]);
}

/* ---- printing ---- */

static const char *k_round_trip =
    "program elem\n"
    "kernel @k(%a: tensor[8, 16] f32, %b: tensor[8, 16] f32, out %c: tensor[8, 16] f32,\n"
    "          out %d: tensor[8, 16] u8) -> (tensor[8, 16] f32, tensor[8, 16] u8) {\n"
    "  %ta = tile.load(%a, [0, 0], [8, 16])\n"
    "  %tb = tile.load(%b, [0, 0], [8, 16])\n"
    "  %m = tile.cmp(%ta, %tb, cmp=le)\n"
    "  %n = tile.cmps(%ta, 0.5, cmp=ne)\n"
    "  %x = tile.sel(%m, %ta, %tb)\n"
    "  %y = tile.sels(%n, %x, -1.0)\n"
    "  %v = tile.row_max(%y)\n"
    "  %e = tile.row_expand_expdif(%y, %v)\n"
    "  %w = tile.col_max(%e)\n"
    "  %f = tile.col_expand_min(%e, %w)\n"
    "  %g = tile.prelu(%f, %w)\n"
    "  %h = tile.lrelu(%g, 0.125)\n"
    "  %i = tile.fmods(%h, 3.0)\n"
    "  %j = tile.rem(%i, %tb)\n"
    "  %k = tile.cast(%j, i32)\n"
    "  %l = tile.shls(%k, 3)\n"
    "  %o = tile.xor(%l, %k)\n"
    "  %q = tile.not(%o)\n"
    "  %t = tile.shr(%q, %k)\n"
    "  %u = tile.ors(%t, 5)\n"
    "  %c1 = tile.store(%y, [0, 0], %c)\n"
    "  %d1 = tile.store(%m, [0, 0], %d)\n"
    "  return %c1, %d1\n"
    "}\n";

static void test_elem_ops_print_round_trip(void **state) {
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_string(k_round_trip, strlen(k_round_trip), "r.ptir", &p));
  assert_pto_ok(pto_ir_verify(p));
  char *t1 = NULL, *t2 = NULL;
  assert_pto_ok(pto_ir_print(p, &t1));
  pto_ir_program *q = NULL;
  assert_pto_ok(pto_ir_parse_string(t1, strlen(t1), "r2.ptir", &q));
  assert_pto_ok(pto_ir_print(q, &t2));
  assert_string_equal(t1, t2);
  assert_non_null(strstr(t1, "tile.cmp(%ta, %tb, cmp=le)"));
  assert_non_null(strstr(t1, "tile.sels(%n, %x, -1.0)"));
  assert_true(pto_ir_program_equal(p, q));
  free(t1);
  free(t2);
  pto_ir_program_destroy(p);
  pto_ir_program_destroy(q);
}

/* ---- interpreter values ---- */

/* Runs kernel @k of text (one f32/any in tensor a, one in tensor b, one out tensor c) on n
 * elements laid out [1, n]. */
static void run_k(const char *text, pto_dtype in_dt, const void *a, const void *b, pto_dtype out_dt,
                  void *c, int64_t n) {
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_string(text, strlen(text), "i.ptir", &p));
  pto_ir_func *f = pto_ir_program_find_func(p, "k");
  assert_non_null(f);
  int64_t shape[2] = {1, n};
  pto_ir_interp_arg args[3];
  memset(args, 0, sizeof args);
  for (int i = 0; i < 3; i++)
    args[i].is_tensor = 1;
  pto_host_tensor_init(&args[0].tensor, (void *)a, in_dt, 2, shape);
  pto_host_tensor_init(&args[1].tensor, (void *)b, in_dt, 2, shape);
  pto_host_tensor_init(&args[2].tensor, c, out_dt, 2, shape);
  assert_pto_ok(pto_ir_interp_run(p, f, args, 3));
  pto_ir_program_destroy(p);
}

static void test_cmp_nan_is_false_except_ne(void **state) {
  static const char *const preds[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  /* pairs: (nan, 1), (1, nan), (nan, nan), (1, 1), (-0, 0), (-inf, 2) */
  const float a[6] = {NAN, 1, NAN, 1, -0.0f, -INFINITY};
  const float b[6] = {1, NAN, NAN, 1, 0.0f, 2};
  static const uint8_t want[6][6] = {
      {0, 0, 0, 1, 1, 0}, /* eq */
      {1, 1, 1, 0, 0, 1}, /* ne */
      {0, 0, 0, 0, 0, 1}, /* lt */
      {0, 0, 0, 1, 1, 1}, /* le */
      {0, 0, 0, 0, 0, 0}, /* gt */
      {0, 0, 0, 1, 1, 0}, /* ge */
  };
  for (int k = 0; k < 6; k++) {
    char text[1024];
    snprintf(text, sizeof text,
             "program c\n"
             "kernel @k(%%a: tensor[1, 6] f32, %%b: tensor[1, 6] f32, out %%c: tensor[1, 6] bool)"
             " -> (tensor[1, 6] bool) {\n"
             "  %%ta = tile.load(%%a, [0, 0], [1, 6])\n"
             "  %%tb = tile.load(%%b, [0, 0], [1, 6])\n"
             "  %%m = tile.cmp(%%ta, %%tb, cmp=%s)\n"
             "  %%c1 = tile.store(%%m, [0, 0], %%c)\n"
             "  return %%c1\n}\n",
             preds[k]);
    uint8_t c[6];
    memset(c, 7, sizeof c);
    run_k(text, PTO_DTYPE_F32, a, b, PTO_DTYPE_BOOL, c, 6);
    for (int i = 0; i < 6; i++)
      if (c[i] != want[k][i]) {
        print_error("cmp=%s pair %d: got %d, want %d\n", preds[k], i, c[i], want[k][i]);
        fail();
      }
  }
}

static void test_bool_tile_casts_and_selects(void **state) {
  /* nonzero -> 1 (NaN and -0.0 included: NaN is nonzero, -0.0 is zero), then sel on the mask */
  const float a[6] = {0.0f, -0.0f, NAN, 0.25f, -3, INFINITY};
  const float b[6] = {10, 20, 30, 40, 50, 60};
  const char *text =
      "program s\n"
      "kernel @k(%a: tensor[1, 6] f32, %b: tensor[1, 6] f32, out %c: tensor[1, 6] f32)"
      " -> (tensor[1, 6] f32) {\n"
      "  %ta = tile.load(%a, [0, 0], [1, 6])\n"
      "  %tb = tile.load(%b, [0, 0], [1, 6])\n"
      "  %m = tile.cast(%ta, bool)\n"
      "  %x = tile.sel(%m, %tb, %ta)\n"
      "  %n = tile.cmps(%tb, 35.0, cmp=gt)\n"
      "  %y = tile.sels(%n, %x, -1.0)\n"
      "  %c1 = tile.store(%y, [0, 0], %c)\n"
      "  return %c1\n}\n";
  float c[6];
  run_k(text, PTO_DTYPE_F32, a, b, PTO_DTYPE_F32, c, 6);
  const float want[6] = {-1, -1, -1, 40, 50, 60};
  for (int i = 0; i < 6; i++)
    assert_true(memcmp(&c[i], &want[i], 4) == 0);
  /* x for the first three: 0, -0.0, 30 (sel), then sels replaced them */
}

/* Runs a one-op i32 kernel `tile.OP(%ta, %tb)` (or with a scalar) on n pairs; c gets the result. */
static void run_i32(const char *call, const int32_t *a, const int32_t *b, int32_t *c, int n) {
  char text[1024];
  snprintf(text, sizeof text,
           "program i\n"
           "kernel @k(%%a: tensor[1, %d] i32, %%b: tensor[1, %d] i32, out %%c: tensor[1, %d] i32)"
           " -> (tensor[1, %d] i32) {\n"
           "  %%ta = tile.load(%%a, [0, 0], [1, %d])\n"
           "  %%tb = tile.load(%%b, [0, 0], [1, %d])\n"
           "  %%x = %s\n"
           "  %%c1 = tile.store(%%x, [0, 0], %%c)\n"
           "  return %%c1\n}\n",
           n, n, n, n, n, n, call);
  run_k(text, PTO_DTYPE_I32, a, b, PTO_DTYPE_I32, c, n);
}

static void expect_i32(const char *call, const int32_t *a, const int32_t *b, const int32_t *want,
                       int n) {
  int32_t c[16];
  run_i32(call, a, b, c, n);
  for (int i = 0; i < n; i++)
    if (c[i] != want[i]) {
      print_error("%s: element %d (%d, %d): got %d, want %d\n", call, i, a[i], b[i], c[i], want[i]);
      fail();
    }
}

static void test_integer_edges(void **state) {
  const int32_t MIN = INT32_MIN, MAX = INT32_MAX;
  /* shifts: counts outside [0, 32) give 0 or the sign fill */
  const int32_t a[8] = {1, -8, MIN, 5, -1, 7, -7, MAX};
  const int32_t n[8] = {31, 1, 31, 32, 40, -1, 33, 0};
  expect_i32("tile.shl(%ta, %tb)", a, n, (const int32_t[8]){MIN, -16, 0, 0, 0, 0, 0, MAX}, 8);
  expect_i32("tile.shr(%ta, %tb)", a, n, (const int32_t[8]){0, -4, -1, 0, -1, 0, -1, MAX}, 8);
  /* wraps; MIN / -1 = MIN, MIN mod -1 = 0; floored remainder takes the divisor's sign */
  const int32_t x[8] = {MIN, MIN, 7, -7, 7, -7, MAX, MIN};
  const int32_t y[8] = {-1, -1, -2, 2, 2, -2, 2, 2};
  expect_i32("tile.div(%ta, %tb)", x, y,
             (const int32_t[8]){MIN, MIN, -4, -4, 3, 3, MAX / 2, MIN / 2}, 8);
  expect_i32("tile.rem(%ta, %tb)", x, y, (const int32_t[8]){0, 0, -1, 1, 1, -1, 1, 0}, 8);
  expect_i32("tile.mul(%ta, %tb)", x, y, (const int32_t[8]){MIN, MIN, -14, -14, 14, 14, -2, 0}, 8);
  expect_i32("tile.lrelu(%ta, 3)", x, y, (const int32_t[8]){MIN, MIN, 7, -21, 7, -21, MAX, MIN}, 8);
  expect_i32("tile.xor(%ta, %tb)", x, y,
             (const int32_t[8]){MAX, MAX, -7, -5, 5, 7, MAX - 2, MIN + 2}, 8);
  expect_i32("tile.not(%ta)", x, y, (const int32_t[8]){MAX, MAX, -8, 6, -8, 6, MIN, MAX}, 8);
}

static void test_rem_by_zero_is_a_launch_error(void **state) {
  const char *text =
      "program z\n"
      "kernel @k(%a: tensor[1, 4] i32, %b: tensor[1, 4] i32, out %c: tensor[1, 4] i32)"
      " -> (tensor[1, 4] i32) {\n"
      "  %ta = tile.load(%a, [0, 0], [1, 4])\n"
      "  %tb = tile.load(%b, [0, 0], [1, 4])\n"
      "  %x = tile.rem(%ta, %tb)\n"
      "  %c1 = tile.store(%x, [0, 0], %c)\n"
      "  return %c1\n}\n";
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_string(text, strlen(text), "z.ptir", &p));
  int32_t a[4] = {1, 2, 3, 4}, b[4] = {1, 1, 0, 1}, c[4] = {9, 9, 9, 9};
  int64_t shape[2] = {1, 4};
  pto_ir_interp_arg args[3];
  memset(args, 0, sizeof args);
  for (int i = 0; i < 3; i++)
    args[i].is_tensor = 1;
  pto_host_tensor_init(&args[0].tensor, a, PTO_DTYPE_I32, 2, shape);
  pto_host_tensor_init(&args[1].tensor, b, PTO_DTYPE_I32, 2, shape);
  pto_host_tensor_init(&args[2].tensor, c, PTO_DTYPE_I32, 2, shape);
  pto_status s = pto_ir_interp_run(p, pto_ir_program_find_func(p, "k"), args, 3);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_LAUNCH);
  assert_status_contains(s, "z.ptir:5:8: tile.rem: integer division by zero at [0,2]");
  for (int i = 0; i < 4; i++)
    assert_int_equal(c[i], 9); /* nothing stored */
  pto_ir_program_destroy(p);
}

static void test_float_rem_fmod_lrelu_expdif(void **state) {
  const float a[6] = {7.5f, -7.5f, 7.5f, -7.5f, -0.0f, 2.0f};
  const float b[6] = {2.0f, 2.0f, -2.0f, -2.0f, 3.0f, 2.0f};
  float c[6];
  const char *fmt =
      "program f\n"
      "kernel @k(%%a: tensor[1, 6] f32, %%b: tensor[1, 6] f32, out %%c: tensor[1, 6] f32)"
      " -> (tensor[1, 6] f32) {\n"
      "  %%ta = tile.load(%%a, [0, 0], [1, 6])\n"
      "  %%tb = tile.load(%%b, [0, 0], [1, 6])\n"
      "  %%x = %s\n"
      "  %%c1 = tile.store(%%x, [0, 0], %%c)\n"
      "  return %%c1\n}\n";
  char text[1024];
  snprintf(text, sizeof text, fmt, "tile.rem(%ta, %tb)");
  run_k(text, PTO_DTYPE_F32, a, b, PTO_DTYPE_F32, c, 6);
  /* a zero remainder has the divisor's sign (numpy's np.mod, Python's %): rem(-0, 3) is +0 */
  const float rem[6] = {1.5f, 0.5f, -0.5f, -1.5f, 0.0f, 0.0f};
  for (int i = 0; i < 6; i++)
    assert_true(memcmp(&c[i], &rem[i], 4) == 0);
  snprintf(text, sizeof text, fmt, "tile.fmod(%ta, %tb)");
  run_k(text, PTO_DTYPE_F32, a, b, PTO_DTYPE_F32, c, 6);
  const float fm[6] = {1.5f, -1.5f, 1.5f, -1.5f, -0.0f, 0.0f};
  for (int i = 0; i < 6; i++)
    assert_true(memcmp(&c[i], &fm[i], 4) == 0);
  snprintf(text, sizeof text, fmt, "tile.lrelu(%ta, 0.5)");
  run_k(text, PTO_DTYPE_F32, a, b, PTO_DTYPE_F32, c, 6);
  const float lr[6] = {7.5f, -3.75f, 7.5f, -3.75f, -0.0f, 2.0f};
  for (int i = 0; i < 6; i++)
    assert_true(memcmp(&c[i], &lr[i], 4) == 0);
  /* expdif is exp of the rounded difference: exactly tile.exp(a - b) */
  snprintf(text, sizeof text, fmt, "tile.col_expand_expdif(%ta, %tb)");
  /* (col expand needs [1,C]: the [1,6] operand is one) */
  run_k(text, PTO_DTYPE_F32, a, b, PTO_DTYPE_F32, c, 6);
  for (int i = 0; i < 6; i++) {
    float want = pto_expf(a[i] - b[i]);
    assert_true(memcmp(&c[i], &want, 4) == 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bool_arithmetic_rejected),
      cmocka_unit_test(test_second_set_dtype_rules),
      cmocka_unit_test(test_integer_edges),
      cmocka_unit_test(test_rem_by_zero_is_a_launch_error),
      cmocka_unit_test(test_float_rem_fmod_lrelu_expdif),
      cmocka_unit_test(test_bool_and_compare_misuse),
      cmocka_unit_test(test_elem_ops_print_round_trip),
      cmocka_unit_test(test_cmp_nan_is_false_except_ne),
      cmocka_unit_test(test_bool_tile_casts_and_selects),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
