/* The compile front end is linear in a function's statement count (issue #34, item 16): the
 * position table and the orchestration emitter each list the entry's statements in one walk
 * instead of looking each one up from the start. No timing: the test counts the statements the
 * IR walks visit (pto__ir_stmt_steps) on a generated program of N statements; a lookup per
 * statement would visit about N*N/2 of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_internal.h"
#include "emit_internal.h"
#include "ir_internal.h"
#include "loader_internal.h"
#include "pto/ir.h"
#include "pto/signature.h"
#include "testutil.h"

enum { N = 4000 };

/* An orch of N statements: N-1 slices, one in a loop, and the return. */
static pto_ir_program *big_program(void) {
  pto_text t = {0};
  pto_text_puts(&t, "program big\n"
                    "orch @main(%a: tensor[64,128] f32, out %c: tensor[64,128] f32)\n"
                    "    -> (tensor[64,128] f32) {\n"
                    "  for %i in range(0, 2) {\n"
                    "    %in = tensor.slice(%a, [0, 0], [32, 128])\n"
                    "  }\n");
  for (int i = 0; i < N - 3; i++)
    pto_text_printf(&t, "  %%s%d = tensor.slice(%%a, [0, 0], [32, 128])\n", i);
  pto_text_puts(&t, "  return %c\n}\n");
  char *text = pto_text_finish(&t);
  assert_non_null(text);
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_string(text, strlen(text), "big.ptir", &p));
  free(text);
  assert_pto_ok(pto_ir_verify(p));
  return p;
}

/* pto_ir_program_find_func looks a name up by the builder's hash index, so a program of NF
 * kernels, each found by name (a host's callees, an entry, incore scope names checked for
 * clashes), costs O(NF) name comparisons, not NF*NF/2 (counted: pto__ir_func_compares). */
enum { NF = 20000 };

static void test_find_func_is_by_index(void **state) {
  (void)state;
  pto_text t = {0};
  pto_text_puts(&t, "program many\n");
  for (int i = 0; i < NF; i++)
    pto_text_printf(&t,
                    "kernel @k%d(out %%c: tensor[32,128] f32) -> (tensor[32,128] f32) {\n"
                    "  return %%c\n}\n",
                    i);
  char *text = pto_text_finish(&t);
  assert_non_null(text);
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_string(text, strlen(text), "many.ptir", &p));
  free(text);
  assert_int_equal(p->nfuncs, NF);
  long before = pto__ir_func_compares();
  char name[32];
  for (int i = 0; i < NF; i++) {
    snprintf(name, sizeof name, "k%d", i);
    pto_ir_func *f = pto_ir_program_find_func(p, name);
    assert_non_null(f);
    assert_ptr_equal(f, p->funcs[i]);
    snprintf(name, sizeof name, "k%dx", i); /* a miss, as an incore scope's new name is */
    assert_null(pto_ir_program_find_func(p, name));
  }
  long compares = pto__ir_func_compares() - before;
  assert_true(compares <= 4L * NF);
  assert_null(pto_ir_program_find_func(p, ""));
  assert_null(pto_ir_program_find_func(p, NULL));
  /* A program struct without the index (one not made by the builder) is still searched. */
  pto_ir_program bare = *p;
  bare.func_slots = NULL;
  assert_ptr_equal(pto_ir_program_find_func(&bare, "k7"), p->funcs[7]);
  assert_null(pto_ir_program_find_func(&bare, "k7x"));
  /* Nor is an index trusted for more functions than it was made for. */
  bare = *p;
  bare.nfuncs = NF - 1;
  assert_ptr_equal(pto_ir_program_find_func(&bare, "k3"), p->funcs[3]);
  assert_null(pto_ir_program_find_func(&bare, "k19999"));
  pto_ir_program_destroy(p);
}

static void test_func_stmts_lists_the_pre_order(void **state) {
  pto_ir_program *p = big_program();
  pto_ir_func *f = pto_ir_program_find_func(p, "main");
  const pto_ir_stmt **v = NULL;
  int n = 0;
  long before = pto__ir_stmt_steps();
  assert_pto_ok(pto_ir_func_stmts(f, &v, &n));
  assert_int_equal(n, N);
  assert_true(pto__ir_stmt_steps() - before <= 2L * N); /* counted, then filled */
  /* The same numbering as stmt_at and stmt_index (checked at a few indexes: each is a walk). */
  const int probe[] = {0, 1, 2, N / 2, N - 1};
  for (size_t k = 0; k < sizeof probe / sizeof *probe; k++) {
    assert_ptr_equal(v[probe[k]], pto_ir_func_stmt_at(f, probe[k]));
    assert_int_equal(pto_ir_func_stmt_index(f, v[probe[k]]->loc), probe[k]);
  }
  assert_null(pto_ir_func_stmt_at(f, N));
  free(v);
  pto_ir_program_destroy(p);
}

static void test_position_table_is_linear(void **state) {
  pto_ir_program *p = big_program();
  pto__positions *t = NULL;
  long before = pto__ir_stmt_steps();
  assert_pto_ok(pto__positions_from_ir(p, "main", &t));
  long steps = pto__ir_stmt_steps() - before;
  assert_non_null(t);
  assert_true(steps <= 2L * N);
  pto__positions_free(t);
  pto_ir_program_destroy(p);
}

static void test_orchestration_emitter_is_linear(void **state) {
  pto_ir_program *p = big_program();
  pto_ir_func *f = pto_ir_program_find_func(p, "main");
  pto_signature sig;
  assert_pto_ok(pto_signature_build(p, f, NULL, 0, NULL, 0, &sig));
  int kernel_ids[2] = {-1, -1};
  char *cpp = NULL;
  int calls = -1, parts = -1;
  long before = pto__ir_stmt_steps();
  assert_pto_ok(pto__emit_orchestration(p, f, f, &sig, kernel_ids, &cpp, &calls, &parts));
  long steps = pto__ir_stmt_steps() - before;
  assert_true(steps <= 2L * N);
  /* Written in parts of PTO__EMIT_PART statements or fewer (docs/cli.md), each closed. */
  assert_int_equal(calls, 0);
  assert_true(parts >= N / PTO__EMIT_PART - 1 && parts <= N / (PTO__EMIT_PART / 2));
  assert_non_null(strstr(cpp, "[&]() __attribute__((noinline)) {  // part 2 of this block\n"));
  int opened = 0, closed = 0;
  for (const char *q = cpp; (q = strstr(q, "[&]() __attribute__((noinline)) {")); q++)
    opened++;
  for (const char *q = cpp; (q = strstr(q, "}();  // part ")); q++)
    closed++;
  assert_int_equal(opened, parts);
  assert_int_equal(closed, parts);
  /* Every statement that can fail records its op id: the last slice is statement N-2. */
  char want[64];
  snprintf(want, sizeof want, "pto_orch_current_op = %d;", N - 2);
  assert_non_null(strstr(cpp, want));
  assert_non_null(strstr(cpp, "pto_orch_current_op = 1;")); /* the slice in the loop */
  free(cpp);
  pto_signature_clear(&sig);
  pto_ir_program_destroy(p);
}

/* Incore scopes name the kernels they become <func>_incore (or the scope's string), then with
 * 0, 1, ... past every name taken by a function or an earlier scope. pto_ir_each_incore found a
 * taken name by a scan of all earlier names, per candidate suffix: NS unnamed scopes of one orch
 * cost NS^3/6 comparisons (2,000 took 2.8 s, 100,000 would take days). Its names are checked here
 * against that definition, computed the slow way, and its comparisons counted. */
enum { NS = 3000 };

typedef struct scope_names {
  char (*names)[PTO_IR_KERNEL_NAME_MAX];
  int n;
} scope_names;

static int collect_scope(void *ctx, const pto_ir_func *f, const pto_ir_stmt *scope,
                         const char *kernel) {
  (void)f;
  (void)scope;
  scope_names *c = ctx;
  assert_true(c->n < NS + 16);
  snprintf(c->names[c->n++], PTO_IR_KERNEL_NAME_MAX, "%s", kernel);
  return 0;
}

/* The definition, by linear scans: base's first name not taken by a function or earlier name. */
static void reference_name(const pto_ir_program *p, char (*names)[PTO_IR_KERNEL_NAME_MAX], int n,
                           const char *base, int *next, char *out) {
  for (int k = *next;; k++) {
    if (k < 0)
      snprintf(out, PTO_IR_KERNEL_NAME_MAX, "%s", base);
    else
      snprintf(out, PTO_IR_KERNEL_NAME_MAX, "%s%d", base, k);
    int taken = 0;
    for (int i = 0; i < p->nfuncs && !taken; i++)
      taken = !strcmp(p->funcs[i]->name, out);
    for (int i = 0; i < n && !taken; i++)
      taken = !strcmp(names[i], out);
    if (!taken) {
      *next = k + 1;
      return;
    }
  }
}

static void test_incore_names_are_unique_and_linear(void **state) {
  (void)state;
  static const char *const named[] = {"main_incore", "main_incore1", "x-y",
                                      "x_y",         "9lives",       "main_incore"};
  enum { NNAMED = sizeof named / sizeof *named, NSECOND = 10 };
  pto_text t = {0};
  pto_text_puts(&t, "program scopes\n");
  for (int i = 0; i < 2; i++) /* functions that take names the scopes would get */
    pto_text_printf(&t,
                    "kernel @main_incore%s(out %%c: tensor[32,128] f32) -> (tensor[32,128] f32) {\n"
                    "  return %%c\n}\n",
                    i ? "3" : "");
  const char *scope = "  incore %s{\n    %%t%d = tile.load(%%a, [0, 0], [32, 128])\n"
                      "    tile.store(%%t%d, [0, 0], %%c)\n  }\n";
  const char *head = "orch @%s(%%a: tensor[32,128] f32, out %%c: tensor[32,128] f32)\n"
                     "    -> (tensor[32,128] f32) {\n";
  pto_text_printf(&t, head, "main");
  char quoted[64];
  for (int i = 0; i < NS; i++)
    pto_text_printf(&t, scope, "", i, i);
  for (int i = 0; i < NNAMED; i++) {
    snprintf(quoted, sizeof quoted, "\"%s\" ", named[i]);
    pto_text_printf(&t, scope, quoted, NS + i, NS + i);
  }
  pto_text_puts(&t, "  return %c\n}\n");
  pto_text_printf(&t, head, "second");
  for (int i = 0; i < NSECOND; i++)
    pto_text_printf(&t, scope, "", i, i);
  pto_text_puts(&t, "  return %c\n}\n");
  char *text = pto_text_finish(&t);
  assert_non_null(text);
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_string(text, strlen(text), "scopes.ptir", &p));
  free(text);

  enum { TOTAL = NS + NNAMED + NSECOND };
  scope_names got = {calloc(NS + 16, sizeof *got.names), 0};
  char(*want)[PTO_IR_KERNEL_NAME_MAX] = calloc(TOTAL, sizeof *want);
  assert_non_null(got.names);
  assert_non_null(want);
  long before = pto__ir_name_compares() + pto__ir_func_compares();
  assert_pto_ok(pto_ir_each_incore(p, collect_scope, &got));
  long compares = pto__ir_name_compares() + pto__ir_func_compares() - before;
  assert_int_equal(got.n, TOTAL);

  /* The same names, the slow way: each base's next suffix, names only ever added. */
  static const char *const bases[] = {"main_incore", "main_incore1", "x_y", "_lives",
                                      "second_incore"};
  int next[5] = {-1, -1, -1, -1, -1}, n = 0;
  for (int i = 0; i < NS; i++, n++)
    reference_name(p, want, n, bases[0], &next[0], want[n]);
  static const int base_of_named[NNAMED] = {0, 1, 2, 2, 3, 0};
  for (int i = 0; i < NNAMED; i++, n++)
    reference_name(p, want, n, bases[base_of_named[i]], &next[base_of_named[i]], want[n]);
  for (int i = 0; i < NSECOND; i++, n++)
    reference_name(p, want, n, bases[4], &next[4], want[n]);
  for (int i = 0; i < TOTAL; i++)
    if (strcmp(got.names[i], want[i]))
      fail_msg("scope %d: %s, expected %s", i, got.names[i], want[i]);
  /* Spot checks of the definition itself. */
  assert_string_equal(got.names[0], "main_incore0"); /* @main_incore is a kernel */
  assert_string_equal(got.names[3], "main_incore4"); /* @main_incore3 too */
  assert_string_equal(got.names[NS - 1], "main_incore3000");
  /* "main_incore1" is scope 1's, and main_incore1K for K up to 999 and from 1000 to 1999 are
   * unnamed scopes' (main_incore10 .. main_incore3000 are taken): the first free is 11000. */
  assert_string_equal(got.names[NS + 1], "main_incore11000");
  assert_string_equal(got.names[NS + 2], "x_y");
  assert_string_equal(got.names[NS + 3], "x_y0");
  assert_string_equal(got.names[NS + 4], "_lives");
  assert_string_equal(got.names[TOTAL - NSECOND], "second_incore");
  assert_string_equal(got.names[TOTAL - 1], "second_incore8");
  /* A few lookups and probes per scope, not a scan of the names before it. */
  if (compares > 16L * TOTAL) fail_msg("%ld name comparisons for %d scopes", compares, TOTAL);
  free(got.names);
  free(want);
  pto_ir_program_destroy(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_find_func_is_by_index),
      cmocka_unit_test(test_func_stmts_lists_the_pre_order),
      cmocka_unit_test(test_position_table_is_linear),
      cmocka_unit_test(test_orchestration_emitter_is_linear),
      cmocka_unit_test(test_incore_names_are_unique_and_linear),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
