/* Structural hash and equality: what they ignore (names, positions, layout) and what they see
 * (every structural field). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/ir.h"
#include "testutil.h"

static const char *k_base =
    "program h\n"
    "dynamic M, R\n"
    "\n"
    "kernel @blk(%a: tensor[R,128] f32, out %c: tensor[R,128] f32, %s: f32)\n"
    "    -> (tensor[R,128] f32) {\n"
    "  %ta = tile.load(%a, [0, 0], [32, 128], valid=[R, 128])\n"
    "  %tb = tile.muls(%ta, %s)\n"
    "  %tc = tile.add(%ta, %tb)\n"
    "  %tm = tile.create([32, 128], f32, space=vec)\n"
    "  %c1 = tile.store(%tc, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n"
    "\n"
    "orch @main(%a: tensor[M,128] f32, out %c: tensor[M,128] f32, %s: f32 = 2.0)\n"
    "    -> (tensor[M,128] f32) {\n"
    "  %nblk = (M + 31) / 32\n"
    "  for %i in range(0, %nblk) {\n"
    "    %row0 = %i * 32\n"
    "    %as = tensor.slice(%a, [%row0, 0], [32, 128])\n"
    "    %cs = tensor.slice(%c, [%row0, 0], [32, 128])\n"
    "    call @blk(%as, %cs, %s)\n"
    "  }\n"
    "  return %c\n"
    "}\n";

static pto_ir_program *parse(const char *text) {
  pto_ir_program *p = NULL;
  pto_status s = pto_ir_parse_string(text, strlen(text), "h.ptir", &p);
  if (s) {
    print_error("parse failed: %s\n--- text ---\n%s\n", pto_status_message(s), text);
    pto_status_free(s);
    fail();
  }
  return p;
}

/* text with every occurrence of `from` replaced by `to` (malloc'd). A `from` that occurs
 * nowhere fails the test: a substitution that changes nothing would make a variant equal to its
 * base for the wrong reason. */
static char *replace_all(const char *text, const char *from, const char *to) {
  size_t fl = strlen(from), tl = strlen(to), n = 0;
  for (const char *q = strstr(text, from); q; q = strstr(q + fl, from))
    n++;
  if (!n) {
    print_error("the substitution '%s' -> '%s' matches nothing in:\n%s\n", from, to, text);
    fail();
  }
  char *out = malloc(strlen(text) + n * (tl > fl ? tl - fl : 0) + 1);
  char *w = out;
  const char *r = text;
  for (const char *q = strstr(r, from); q; q = strstr(r, from)) {
    memcpy(w, r, (size_t)(q - r));
    w += q - r;
    memcpy(w, to, tl);
    w += tl;
    r = q + fl;
  }
  strcpy(w, r);
  return out;
}

static int hash_eq(pto_ir_hash128 a, pto_ir_hash128 b) { return a.lo == b.lo && a.hi == b.hi; }

/* Parses both texts and asserts they are equal (and hash equal) or differ (and hash apart). */
static void check_pair(const char *a_text, const char *b_text, int want_equal, const char *what) {
  pto_ir_program *a = parse(a_text), *b = parse(b_text);
  int eq = pto_ir_program_equal(a, b);
  int heq = hash_eq(pto_ir_program_hash(a), pto_ir_program_hash(b));
  if (eq != want_equal || heq != want_equal) {
    print_error("%s: equal=%d hash_equal=%d, expected %d\n", what, eq, heq, want_equal);
    pto_ir_program_destroy(a);
    pto_ir_program_destroy(b);
    fail();
  }
  /* Equality is reflexive and symmetric whatever the pair. */
  assert_true(pto_ir_program_equal(a, a));
  assert_int_equal(pto_ir_program_equal(b, a), eq);
  pto_ir_program_destroy(a);
  pto_ir_program_destroy(b);
}

/* The base program with one substitution applied, compared against the base. */
static void check_variant(const char *from, const char *to, int want_equal) {
  char *v = replace_all(k_base, from, to);
  char what[256];
  snprintf(what, sizeof what, "'%s' -> '%s'", from, to);
  check_pair(k_base, v, want_equal, what);
  free(v);
}

static void test_hash_is_stable_across_parses(void **state) {
  pto_ir_program *a = parse(k_base), *b = parse(k_base);
  assert_true(hash_eq(pto_ir_program_hash(a), pto_ir_program_hash(b)));
  assert_true(pto_ir_program_equal(a, b));
  pto_ir_hash128 h = pto_ir_program_hash(a);
  assert_true(h.lo != 0 || h.hi != 0);
  pto_ir_program_destroy(a);
  pto_ir_program_destroy(b);
}

static void test_hash_ignores_value_names(void **state) {
  char *v1 = replace_all(k_base, "%ta", "%first");
  char *v2 = replace_all(v1, "%row0", "%r");
  char *v3 = replace_all(v2, "for %i in", "for %blockidx in");
  char *v4 = replace_all(v3, "%i * 32", "%blockidx * 32");
  check_pair(k_base, v4, 1, "renamed values");
  /* Parameter names are value names too. */
  char *v5 = replace_all(k_base, "%s", "%alpha");
  check_pair(k_base, v5, 1, "renamed scalar parameter");
  free(v1);
  free(v2);
  free(v3);
  free(v4);
  free(v5);
}

static void test_hash_ignores_symbol_and_program_names(void **state) {
  char *v1 = replace_all(k_base, "M", "Rows");
  char *v2 = replace_all(v1, "[R,128]", "[Q,128]");
  char *v3 = replace_all(v2, "valid=[R, 128]", "valid=[Q, 128]");
  char *v4 = replace_all(v3, "dynamic Rows, R", "dynamic Rows, Q");
  char *v5 = replace_all(v4, "program h", "program other");
  check_pair(k_base, v5, 1, "renamed symbols and program");
  free(v1);
  free(v2);
  free(v3);
  free(v4);
  free(v5);
}

static void test_hash_ignores_whitespace_and_comments(void **state) {
  char *v1 = replace_all(k_base, "\n", "  # a comment\n\n");
  char *v2 = replace_all(v1, ", ", " ,\t");
  check_pair(k_base, v2, 1, "whitespace and comments");
  free(v1);
  free(v2);
}

static void test_hash_sees_structural_changes(void **state) {
  check_variant("[32, 128], valid", "[16, 128], valid", 0);     /* one tile dim */
  check_variant("%row0 = %i * 32", "%row0 = %i * 31", 0);       /* a literal */
  check_variant("%s: f32 = 2.0", "%s: f32 = 3.0", 0);           /* a specialized value */
  check_variant("%s: f32 = 2.0", "%s: f32 = runtime", 0);       /* a scalar binding */
  check_variant("tile.add(%ta, %tb)", "tile.sub(%ta, %tb)", 0); /* an op */
  check_variant("tile.add(%ta, %tb)", "tile.add(%tb, %ta)", 0); /* operand order */
  check_variant("space=vec", "space=mat", 0);                   /* a space */
  check_variant("valid=[R, 128]", "valid=[R, 127]", 0);         /* a valid dim */
  check_variant("@blk", "@block", 0);                           /* a function name (ABI) */
  check_variant("range(0, %nblk)", "parallel(0, %nblk)", 0);    /* loop kind */
  check_variant("(M + 31) / 32", "(M + 31) / 32 + 0", 0);       /* expression tree */
}

static void test_hash_sees_dims_dtypes_and_directions(void **state) {
  const char *base =
      "program p\n"
      "kernel @k(%a: tensor[4,8] f32, out %b: tensor[4,8] f32) -> (tensor[4,8] f32) {\n"
      "  %t = tile.load(%a, [0, 0], [2, 8])\n"
      "  %b1 = tile.store(%t, [0, 0], %b)\n"
      "  return %b1\n"
      "}\n";
  char *dim = replace_all(base, "[4,8]", "[4,16]");
  char *dt = replace_all(base, "f32", "f16");
  char *dir = replace_all(base, "out %b", "inout %b");
  char *lit = replace_all(base, "[0, 0], [2, 8]", "[1, 0], [2, 8]");
  check_pair(base, dim, 0, "tensor dim");
  check_pair(base, dt, 0, "dtype");
  check_pair(base, dir, 0, "direction");
  check_pair(base, lit, 0, "offset literal");
  /* 'in' written or not is the same parameter. */
  char *in = replace_all(base, "(%a:", "(in %a:");
  check_pair(base, in, 1, "explicit in");
  free(dim);
  free(dt);
  free(dir);
  free(lit);
  free(in);
}

static void test_hash_float_literals_are_bit_exact(void **state) {
  const char *base = "program p\n"
                     "kernel @k(out %b: tensor[4,8] f32) -> (tensor[4,8] f32) {\n"
                     "  %t = tile.full([4, 8], f32, 0.0)\n"
                     "  %b1 = tile.store(%t, [0, 0], %b)\n"
                     "  return %b1\n"
                     "}\n";
  char *neg = replace_all(base, "0.0)", "-0.0)");
  char *same = replace_all(base, "0.0)", "0.000)");
  check_pair(base, neg, 0, "-0.0 vs 0.0");
  check_pair(base, same, 1, "0.0 vs 0.000");
  free(neg);
  free(same);
}

static void test_hash_sees_symbol_identity(void **state) {
  /* Which symbol a dim uses matters, though names do not. */
  const char *base =
      "program p\n"
      "dynamic A, B\n"
      "kernel @k(%a: tensor[A,8] f32, out %b: tensor[A,8] f32) -> (tensor[A,8] f32) {\n"
      "  return %b\n"
      "}\n";
  char *other = replace_all(base, "out %b: tensor[A,8] f32) -> (tensor[A,8]",
                            "out %b: tensor[B,8] f32) -> (tensor[B,8]");
  check_pair(base, other, 0, "dim symbol A vs B");
  free(other);
}

static void test_hash_null_and_identity(void **state) {
  pto_ir_program *a = parse(k_base);
  assert_true(pto_ir_program_equal(a, a));
  assert_false(pto_ir_program_equal(a, NULL));
  assert_false(pto_ir_program_equal(NULL, a));
  pto_ir_program_destroy(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hash_is_stable_across_parses),
      cmocka_unit_test(test_hash_ignores_value_names),
      cmocka_unit_test(test_hash_ignores_symbol_and_program_names),
      cmocka_unit_test(test_hash_ignores_whitespace_and_comments),
      cmocka_unit_test(test_hash_sees_structural_changes),
      cmocka_unit_test(test_hash_sees_dims_dtypes_and_directions),
      cmocka_unit_test(test_hash_float_literals_are_bit_exact),
      cmocka_unit_test(test_hash_sees_symbol_identity),
      cmocka_unit_test(test_hash_null_and_identity),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
