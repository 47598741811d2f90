/* The second set's elementwise ops (PTIR.md, "Ops (second set)"): their typing rules and verifier
 * messages, the printer's round trip, and the interpreter's values on hand-computed cases (the
 * edge rules: NaN comparisons, bool tiles). tests/unit/test_lower.c ("elem" group) checks that
 * compiled kernels give the interpreter's bits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pto/ir.h"
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
  "kernel @k(%a: tensor[8, 16] " dt ", %b: tensor[8, 16] " dt ", out %c: tensor[8, 16] " dt      \
  ") -> (tensor[8, 16] " dt ") {\n"                                                                \
  "  %ta = tile.load(%a, [0, 0], [8, 16])\n"                                                       \
  "  %tb = tile.load(%b, [0, 0], [8, 16])\n" body "  return %c\n}\n"

static void test_bool_and_compare_misuse(void **state) {
  static const bad_case cases[] = {
      {K2("f32", "  %m = tile.cmp(%ta, %tb)\n"), "v.ptir:5:8: tile.cmp: needs cmp= (one of eq ne lt le gt ge)"},
      {K2("f32", "  %m = tile.cmp(%ta, %tb, cmp=less)\n"), "v.ptir:5:31: tile.cmp: cmp=less: expected one of eq ne lt le gt ge"},
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
       "  %t = tile.load(%a, [0, 0], [8, 16])\n  %c1 = tile.store(%t, [0, 0], %c)\n  return %c1\n}\n",
       "v.ptir:4:9: tile.store: the tile is bool but %c is i8 (dtypes must be equal; an acc tile may "
       "also store to f16 or bf16, a bool tile to u8)"},
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
static void run_k(const char *text, pto_dtype in_dt, const void *a, const void *b,
                  pto_dtype out_dt, void *c, int64_t n) {
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_string(text, strlen(text), "i.ptir", &p));
  pto_ir_func *f = pto_ir_program_find_func(p, "k");
  assert_non_null(f);
  int64_t shape[2] = {1, n};
  pto_ir_interp_arg args[3];
  memset(args, 0, sizeof args);
  for (int i = 0; i < 3; i++) args[i].is_tensor = 1;
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bool_and_compare_misuse),
      cmocka_unit_test(test_elem_ops_print_round_trip),
      cmocka_unit_test(test_cmp_nan_is_false_except_ne),
      cmocka_unit_test(test_bool_tile_casts_and_selects),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
