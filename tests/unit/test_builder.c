/* The IR builder's C API: the same IR as the parser makes, literal typing, aliases, error
 * recording, out-of-memory behaviour and the copy helpers passes use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_test.h"
#include "pto/arena.h"
#include "pto/ir.h"
#include "pto/ir_builder.h"
#include "testutil.h"

#define OK(expr) assert_pto_ok(expr)

static pto_ir_expr *lit(pto_ir_builder *b, int64_t v) {
  pto_ir_expr *e = NULL;
  OK(pto_ir_builder_int(b, v, &e));
  return e;
}

static pto_ir_expr *use(pto_ir_builder *b, pto_ir_value *v) {
  pto_ir_expr *e = NULL;
  OK(pto_ir_builder_use(b, v, &e));
  return e;
}

static pto_ir_expr *sym(pto_ir_builder *b, int s) {
  pto_ir_expr *e = NULL;
  OK(pto_ir_builder_sym(b, s, &e));
  return e;
}

static const pto_ir_type *tensor2(pto_ir_builder *b, pto_ir_expr *d0, int64_t d1) {
  pto_ir_expr *dims[2] = {d0, lit(b, d1)};
  const pto_ir_type *t = NULL;
  OK(pto_ir_builder_tensor_type(b, PTO_DTYPE_F32, 2, dims, &t));
  return t;
}

static pto_ir_arg list_arg(pto_ir_expr **items, int n) {
  pto_ir_arg a = {.kind = PTO_ARG_LIST};
  a.list.items = items;
  a.list.n = n;
  return a;
}

static pto_ir_arg expr_arg(pto_ir_expr *e) { return (pto_ir_arg){.kind = PTO_ARG_EXPR, .expr = e}; }

/* examples/add.ptir, built in C. */
static pto_ir_program *build_add(void) {
  pto_ir_builder *b = NULL;
  OK(pto_ir_builder_create("add", "examples/add.ptir", &b));
  int M, R;
  OK(pto_ir_builder_dynamic(b, "M", &M));
  OK(pto_ir_builder_dynamic(b, "R", &R));

  pto_ir_func *k = NULL;
  OK(pto_ir_builder_func_begin(b, PTO_FUNC_KERNEL, "add_block", &k));
  pto_ir_value *a, *bb, *c;
  OK(pto_ir_builder_param(b, "a", tensor2(b, sym(b, R), 128), PTO_DIR_IN, 0, PTO_BIND_NONE, NULL,
                          &a));
  OK(pto_ir_builder_param(b, "b", tensor2(b, sym(b, R), 128), PTO_DIR_IN, 0, PTO_BIND_NONE, NULL,
                          &bb));
  OK(pto_ir_builder_param(b, "c", tensor2(b, sym(b, R), 128), PTO_DIR_OUT, 1, PTO_BIND_NONE, NULL,
                          &c));
  const pto_ir_type *ret = tensor2(b, sym(b, R), 128);
  OK(pto_ir_builder_func_rets(b, &ret, 1));
  OK(pto_ir_builder_header_end(b));

  pto_ir_func *o = NULL;
  OK(pto_ir_builder_func_begin(b, PTO_FUNC_ORCH, "main", &o));
  pto_ir_value *oa, *ob, *oc;
  OK(pto_ir_builder_param(b, "a", tensor2(b, sym(b, M), 128), PTO_DIR_IN, 0, PTO_BIND_NONE, NULL,
                          &oa));
  OK(pto_ir_builder_param(b, "b", tensor2(b, sym(b, M), 128), PTO_DIR_IN, 0, PTO_BIND_NONE, NULL,
                          &ob));
  OK(pto_ir_builder_param(b, "c", tensor2(b, sym(b, M), 128), PTO_DIR_OUT, 1, PTO_BIND_NONE, NULL,
                          &oc));
  ret = tensor2(b, sym(b, M), 128);
  OK(pto_ir_builder_func_rets(b, &ret, 1));
  OK(pto_ir_builder_header_end(b));

  /* kernel body */
  OK(pto_ir_builder_body_begin(b, k));
  pto_ir_stmt *s;
  pto_ir_value *t[2];
  pto_ir_value *in[2] = {a, bb};
  const char *names[2] = {"ta", "tb"};
  for (int i = 0; i < 2; i++) {
    pto_ir_expr *offs[2] = {lit(b, 0), lit(b, 0)}, *shape[2] = {lit(b, 32), lit(b, 128)};
    pto_ir_expr *valid[2] = {sym(b, R), lit(b, 128)};
    pto_ir_arg args[4] = {expr_arg(use(b, in[i])), list_arg(offs, 2), list_arg(shape, 2),
                          list_arg(valid, 2)};
    args[3].kw = "valid";
    pto_ir_result r = {names[i], NULL, {0, 0}};
    OK(pto_ir_builder_op(b, PTO_OP_TILE_LOAD, args, 4, &r, 1, &s));
    t[i] = s->results[0];
  }
  pto_ir_arg add_args[2] = {expr_arg(use(b, t[0])), expr_arg(use(b, t[1]))};
  pto_ir_result tc = {"tc", NULL, {0, 0}};
  OK(pto_ir_builder_op(b, PTO_OP_TILE_ADD, add_args, 2, &tc, 1, &s));
  pto_ir_value *tcv = s->results[0];
  pto_ir_expr *soffs[2] = {lit(b, 0), lit(b, 0)};
  pto_ir_arg st_args[3] = {expr_arg(use(b, tcv)), list_arg(soffs, 2), expr_arg(use(b, c))};
  pto_ir_result c1 = {"c1", NULL, {0, 0}};
  OK(pto_ir_builder_op(b, PTO_OP_TILE_STORE, st_args, 3, &c1, 1, &s));
  pto_ir_expr *rv = use(b, s->results[0]);
  OK(pto_ir_builder_return(b, &rv, 1));
  OK(pto_ir_builder_body_end(b));

  /* orch body */
  OK(pto_ir_builder_body_begin(b, o));
  pto_ir_expr *m31, *nblk_e;
  OK(pto_ir_builder_binary(b, PTO_EOP_ADD, sym(b, M), lit(b, 31), &m31));
  OK(pto_ir_builder_binary(b, PTO_EOP_DIV, m31, lit(b, 32), &nblk_e));
  pto_ir_value *nblk;
  pto_ir_result nr = {"nblk", NULL, {0, 0}};
  OK(pto_ir_builder_assign(b, &nr, nblk_e, &nblk));
  pto_ir_stmt *loop;
  OK(pto_ir_builder_for_begin(b, "i", 0, lit(b, 0), use(b, nblk), NULL, NULL, NULL, 0, NULL, 0,
                              &loop));
  pto_ir_expr *row0_e;
  OK(pto_ir_builder_binary(b, PTO_EOP_MUL, use(b, loop->loop.iv), lit(b, 32), &row0_e));
  pto_ir_value *row0;
  pto_ir_result rr = {"row0", NULL, {0, 0}};
  OK(pto_ir_builder_assign(b, &rr, row0_e, &row0));
  pto_ir_value *src[3] = {oa, ob, oc}, *sl[3];
  const char *snames[3] = {"as", "bs", "cs"};
  for (int i = 0; i < 3; i++) {
    pto_ir_expr *offs[2] = {use(b, row0), lit(b, 0)}, *shape[2] = {lit(b, 32), lit(b, 128)};
    pto_ir_arg args[3] = {expr_arg(use(b, src[i])), list_arg(offs, 2), list_arg(shape, 2)};
    pto_ir_result r = {snames[i], NULL, {0, 0}};
    OK(pto_ir_builder_op(b, PTO_OP_TENSOR_SLICE, args, 3, &r, 1, &s));
    sl[i] = s->results[0];
  }
  pto_ir_expr *cargs[3] = {use(b, sl[0]), use(b, sl[1]), use(b, sl[2])};
  OK(pto_ir_builder_call(b, k, cargs, 3, NULL, NULL, 0, NULL));
  OK(pto_ir_builder_for_end(b));
  rv = use(b, oc);
  OK(pto_ir_builder_return(b, &rv, 1));
  OK(pto_ir_builder_body_end(b));

  pto_ir_program *p = NULL;
  OK(pto_ir_builder_finish(b, &p));
  pto_ir_builder_destroy(b);
  return p;
}

static void test_builder_add_program_matches_the_parsed_example(void **state) {
  pto_ir_program *built = build_add(), *parsed = NULL;
  OK(pto_ir_parse_file(PTO_SOURCE_DIR "/examples/add.ptir", &parsed));
  char *t1 = NULL, *t2 = NULL;
  OK(pto_ir_print(built, &t1));
  OK(pto_ir_print(parsed, &t2));
  assert_string_equal(t1, t2);
  assert_true(pto_ir_program_equal(built, parsed));
  OK(pto_ir_verify(built));
  free(t1);
  free(t2);
  pto_ir_program_destroy(built);
  pto_ir_program_destroy(parsed);
}

/* A builder with one open kernel body taking scalar params %n: i32, %f: f32, %x: f64. */
static pto_ir_builder *scalar_kernel(pto_ir_value **n, pto_ir_value **f, pto_ir_value **x) {
  pto_ir_builder *b = NULL;
  OK(pto_ir_builder_create("s", NULL, &b));
  pto_ir_func *k;
  OK(pto_ir_builder_func_begin(b, PTO_FUNC_KERNEL, "k", &k));
  const pto_ir_type *i32, *f32, *f64;
  OK(pto_ir_builder_scalar_type(b, PTO_DTYPE_I32, &i32));
  OK(pto_ir_builder_scalar_type(b, PTO_DTYPE_F32, &f32));
  OK(pto_ir_builder_scalar_type(b, PTO_DTYPE_F64, &f64));
  OK(pto_ir_builder_param(b, "n", i32, PTO_DIR_IN, 0, PTO_BIND_NONE, NULL, n));
  OK(pto_ir_builder_param(b, "f", f32, PTO_DIR_IN, 0, PTO_BIND_NONE, NULL, f));
  OK(pto_ir_builder_param(b, "x", f64, PTO_DIR_IN, 0, PTO_BIND_NONE, NULL, x));
  OK(pto_ir_builder_body_begin(b, k));
  return b;
}

static void test_builder_literals_take_their_context_dtype(void **state) {
  pto_ir_value *n, *f, *x, *v;
  pto_ir_builder *b = scalar_kernel(&n, &f, &x);
  pto_ir_expr *e, *one = lit(b, 1);
  OK(pto_ir_builder_binary(b, PTO_EOP_ADD, use(b, n), one, &e));
  assert_int_equal(one->dtype, PTO_DTYPE_I32);
  assert_int_equal(e->dtype, PTO_DTYPE_I32);
  /* an integer literal may take a float dtype */
  pto_ir_expr *two = lit(b, 2);
  OK(pto_ir_builder_binary(b, PTO_EOP_MUL, two, use(b, x), &e));
  assert_int_equal(two->dtype, PTO_DTYPE_F64);
  /* without context: index and f32 */
  pto_ir_result r = {"d", NULL, {0, 0}};
  OK(pto_ir_builder_assign(b, &r, lit(b, 7), &v));
  assert_int_equal(v->type->dtype, PTO_DTYPE_INDEX);
  pto_ir_expr *fl;
  OK(pto_ir_builder_float(b, 0.5, &fl));
  r.name = "g";
  OK(pto_ir_builder_assign(b, &r, fl, &v));
  assert_int_equal(v->type->dtype, PTO_DTYPE_F32);
  /* a literal-only expression takes a declared dtype as a whole */
  pto_ir_expr *sum;
  OK(pto_ir_builder_binary(b, PTO_EOP_ADD, lit(b, 1), lit(b, 2), &sum));
  const pto_ir_type *u16;
  OK(pto_ir_builder_scalar_type(b, PTO_DTYPE_U16, &u16));
  r = (pto_ir_result){"h", u16, {0, 0}};
  OK(pto_ir_builder_assign(b, &r, sum, &v));
  assert_int_equal(sum->lhs->dtype, PTO_DTYPE_U16);
  /* a float literal never becomes an integer */
  OK(pto_ir_builder_float(b, 1.5, &fl));
  assert_status_contains(pto_ir_builder_binary(b, PTO_EOP_ADD, use(b, n), fl, &e),
                         "literal 1.5 does not fit i32");
  pto_ir_builder_destroy(b);
}

static void test_builder_literal_must_fit_its_dtype(void **state) {
  pto_ir_value *n, *f, *x, *v;
  pto_ir_builder *b = scalar_kernel(&n, &f, &x);
  const pto_ir_type *i8;
  OK(pto_ir_builder_scalar_type(b, PTO_DTYPE_I8, &i8));
  pto_ir_result r = {"a", i8, {0, 0}};
  OK(pto_ir_builder_assign(b, &r, lit(b, -128), &v));
  r.name = "c";
  assert_status_contains(pto_ir_builder_assign(b, &r, lit(b, 128), &v),
                         "literal 128 does not fit i8");
  pto_ir_builder_destroy(b);

  b = scalar_kernel(&n, &f, &x);
  const pto_ir_type *f16;
  OK(pto_ir_builder_scalar_type(b, PTO_DTYPE_F16, &f16));
  pto_ir_expr *big;
  OK(pto_ir_builder_float(b, 1e5, &big));
  r = (pto_ir_result){"h", f16, {0, 0}};
  assert_status_contains(pto_ir_builder_assign(b, &r, big, &v),
                         "<builder>: %h: literal 1e+05 does not fit f16");
  pto_ir_builder_destroy(b);
}

/* pto_ir_builder_uint: a literal above INT64_MAX fits a u64 (and a float) context only, and the
 * messages name the dtype's range. */
static void test_builder_u64_literals_take_the_whole_range(void **state) {
  pto_ir_value *n, *f, *x, *v;
  pto_ir_builder *b = scalar_kernel(&n, &f, &x);
  const pto_ir_type *u64, *i64, *f64;
  OK(pto_ir_builder_scalar_type(b, PTO_DTYPE_U64, &u64));
  OK(pto_ir_builder_scalar_type(b, PTO_DTYPE_I64, &i64));
  OK(pto_ir_builder_scalar_type(b, PTO_DTYPE_F64, &f64));
  pto_ir_expr *top, *e;
  OK(pto_ir_builder_uint(b, UINT64_MAX, &top));
  pto_ir_result r = {"top", u64, {0, 0}};
  OK(pto_ir_builder_assign(b, &r, top, &v));
  assert_int_equal(top->dtype, PTO_DTYPE_U64);
  assert_true((uint64_t)top->i == UINT64_MAX);
  OK(pto_ir_builder_uint(b, 7, &e)); /* at most INT64_MAX: pto_ir_builder_int's literal */
  assert_int_equal(e->dtype, PTO_DTYPE_INDEX);
  r = (pto_ir_result){"i", i64, {0, 0}};
  OK(pto_ir_builder_assign(b, &r, lit(b, INT64_MIN), &v));
  OK(pto_ir_builder_uint(b, UINT64_MAX, &e));
  r = (pto_ir_result){"g", f64, {0, 0}}; /* a float context: the value */
  OK(pto_ir_builder_assign(b, &r, e, &v));
  assert_int_equal(e->kind, PTO_EXPR_FLOAT);
  assert_true(e->f == 18446744073709551615.0);
  pto_ir_builder_destroy(b);

  /* Each refusal in a builder of its own (an error ends a builder). */
  static const struct {
    uint64_t v;
    int neg, dtype; /* dtype -1: no context */
    const char *msg;
  } bad[] = {
      {(uint64_t)INT64_MAX + 1, 0, PTO_DTYPE_I64,
       "%r: literal 9223372036854775808 does not fit i64 (an integer from -9223372036854775808 "
       "to 9223372036854775807); only a u64 holds it"},
      {UINT64_MAX, 0, -1, "literal 18446744073709551615 does not fit index"},
      {UINT64_MAX, 1, PTO_DTYPE_U64,
       "integer literal -18446744073709551615 out of range (at least -9223372036854775808, the "
       "lowest i64)"},
      {1, 1, PTO_DTYPE_U64,
       "%r: literal -1 does not fit u64 (an integer from 0 to "
       "18446744073709551615)"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    b = scalar_kernel(&n, &f, &x);
    const pto_ir_type *t = NULL;
    if (bad[k].dtype >= 0) OK(pto_ir_builder_scalar_type(b, (pto_dtype)bad[k].dtype, &t));
    OK(pto_ir_builder_uint(b, bad[k].v, &e));
    pto_status s = bad[k].neg ? pto_ir_builder_unary(b, PTO_EOP_NEG, e, &e) : PTO_OK;
    if (!s) {
      r = (pto_ir_result){"r", t, {0, 0}};
      s = pto_ir_builder_assign(b, &r, e, &v);
    }
    assert_status_contains(s, bad[k].msg);
    pto_ir_builder_destroy(b);
  }
}

static void test_builder_param_defaults_follow_literal_typing(void **state) {
  pto_ir_builder *b = NULL;
  OK(pto_ir_builder_create("p", NULL, &b));
  pto_ir_func *o;
  OK(pto_ir_builder_func_begin(b, PTO_FUNC_ORCH, "o", &o));
  const pto_ir_type *i32, *f32, *u8;
  OK(pto_ir_builder_scalar_type(b, PTO_DTYPE_I32, &i32));
  OK(pto_ir_builder_scalar_type(b, PTO_DTYPE_F32, &f32));
  OK(pto_ir_builder_scalar_type(b, PTO_DTYPE_U8, &u8));
  OK(pto_ir_builder_param(b, "act", i32, PTO_DIR_IN, 0, PTO_BIND_LITERAL, lit(b, 1), NULL));
  pto_ir_expr *two = lit(b, 2);
  OK(pto_ir_builder_param(b, "s", f32, PTO_DIR_IN, 0, PTO_BIND_LITERAL, two, NULL));
  assert_int_equal(two->dtype, PTO_DTYPE_F32);
  OK(pto_ir_builder_param(b, "r", f32, PTO_DIR_IN, 0, PTO_BIND_RUNTIME, NULL, NULL));
  assert_status_contains(
      pto_ir_builder_param(b, "b", u8, PTO_DIR_IN, 0, PTO_BIND_LITERAL, lit(b, 300), NULL),
      "<builder>: parameter %b: default literal 300 does not fit u8");
  pto_ir_builder_destroy(b);

  OK(pto_ir_builder_create("p", NULL, &b));
  OK(pto_ir_builder_func_begin(b, PTO_FUNC_ORCH, "o", &o));
  OK(pto_ir_builder_scalar_type(b, PTO_DTYPE_I32, &i32));
  pto_ir_expr *half;
  OK(pto_ir_builder_float(b, 1.5, &half));
  assert_status_contains(
      pto_ir_builder_param(b, "n", i32, PTO_DIR_IN, 0, PTO_BIND_LITERAL, half, NULL),
      "parameter %n: default literal 1.5 does not fit i32");
  pto_ir_builder_destroy(b);
}

static void test_builder_negated_literal_is_one_node(void **state) {
  pto_ir_value *n, *f, *x;
  pto_ir_builder *b = scalar_kernel(&n, &f, &x);
  pto_ir_expr *e;
  OK(pto_ir_builder_unary(b, PTO_EOP_NEG, lit(b, 5), &e));
  assert_int_equal(e->kind, PTO_EXPR_INT);
  assert_int_equal(e->i, -5);
  OK(pto_ir_builder_unary(b, PTO_EOP_NEG, use(b, n), &e));
  assert_int_equal(e->kind, PTO_EXPR_UNARY);
  pto_ir_builder_destroy(b);
}

static void test_builder_write_results_alias_their_target(void **state) {
  pto_ir_program *p = NULL;
  const char *text = "program al\n"
                     "kernel @k(inout %y: tensor[8, 8] f32) -> (tensor[8, 8] f32) {\n"
                     "  %t = tile.full([8, 8], f32, 1)\n"
                     "  %y1 = tile.store(%t, [0, 0], %y)\n"
                     "  %y2 = tile.store(%t, [0, 0], %y1)\n"
                     "  return %y2\n"
                     "}\n"
                     "orch @o(inout %z: tensor[8, 8] f32) -> (tensor[8, 8] f32) {\n"
                     "  %z1 = call @k(%z)\n"
                     "  return %z1\n"
                     "}\n";
  OK(pto_ir_parse_string(text, strlen(text), "al.ptir", &p));
  const pto_ir_func *k = p->funcs[0], *o = p->funcs[1];
  pto_ir_value *y1 = k->body.stmts[1]->results[0], *y2 = k->body.stmts[2]->results[0];
  assert_ptr_equal(y1->alias_of, k->params[0].value);
  assert_ptr_equal(y2->alias_of, y1);
  assert_null(k->body.stmts[0]->results[0]->alias_of);
  assert_ptr_equal(o->body.stmts[0]->results[0]->alias_of, o->params[0].value);
  assert_ptr_equal(y1->type, k->params[0].value->type);
  OK(pto_ir_verify(p));
  pto_ir_program_destroy(p);
}

static void test_builder_keeps_the_first_error(void **state) {
  pto_ir_value *n, *f, *x;
  pto_ir_builder *b = scalar_kernel(&n, &f, &x);
  pto_ir_builder_set_loc(b, (pto_loc){7, 3});
  pto_ir_expr *e;
  assert_status_contains(pto_ir_builder_binary(b, PTO_EOP_ADD, use(b, n), use(b, f), &e),
                         "<builder>:7:3: operands of + have different dtypes, i32 and f32");
  assert_non_null(pto_ir_builder_error(b));
  /* later calls, even valid ones, fail with the first error */
  pto_ir_builder_set_loc(b, (pto_loc){9, 1});
  pto_ir_expr *one = NULL;
  assert_status_contains(pto_ir_builder_int(b, 1, &one),
                         "<builder>:7:3: operands of + have different dtypes");
  pto_ir_program *p = NULL;
  assert_status_contains(pto_ir_builder_finish(b, &p), "<builder>:7:3:");
  assert_null(p);
  pto_ir_builder_destroy(b);
}

static void test_builder_rejects_values_out_of_scope(void **state) {
  pto_ir_value *n, *f, *x, *inner;
  pto_ir_builder *b = scalar_kernel(&n, &f, &x);
  pto_ir_stmt *loop;
  OK(pto_ir_builder_for_begin(b, "i", 0, lit(b, 0), lit(b, 4), NULL, NULL, NULL, 0, NULL, 0,
                              &loop));
  pto_ir_result r = {"t", NULL, {0, 0}};
  OK(pto_ir_builder_assign(b, &r, use(b, loop->loop.iv), &inner));
  OK(pto_ir_builder_for_end(b));
  pto_ir_expr *e = NULL;
  assert_status_contains(pto_ir_builder_use(b, inner, &e),
                         "%t (defined inside a block) is not visible here");
  pto_ir_builder_destroy(b);
}

/* A value of another function is refused naming which: another function of this program, or a
 * function of another program (a value from another builder). */
static void test_builder_names_where_a_foreign_value_belongs(void **state) {
  pto_ir_value *n, *f, *x, *n2, *f2, *x2;
  pto_ir_builder *b = scalar_kernel(&n, &f, &x);
  pto_ir_builder *other = scalar_kernel(&n2, &f2, &x2);
  pto_ir_expr *e = NULL;
  assert_status_contains(pto_ir_builder_use(b, n2, &e),
                         "%n belongs to another program (it was made by another builder)");
  pto_ir_builder_destroy(b);
  b = scalar_kernel(&n, &f, &x);
  OK(pto_ir_builder_return(b, NULL, 0));
  OK(pto_ir_builder_body_end(b));
  pto_ir_func *k2;
  OK(pto_ir_builder_func_begin(b, PTO_FUNC_KERNEL, "k2", &k2));
  OK(pto_ir_builder_body_begin(b, k2));
  assert_status_contains(pto_ir_builder_use(b, n, &e),
                         "%n belongs to another function of this program");
  pto_ir_builder_destroy(b);
  pto_ir_builder_destroy(other);
}

/* Blocks nest at most PTO_IR_MAX_BLOCK_DEPTH deep through the API (the parser has its own, lower
 * bound), so no recursive walk over statements can run out of stack; the limit is kept exactly. */
static void test_builder_bounds_block_nesting(void **state) {
  for (int kind = 0; kind < 2; kind++) { /* for loops, then ifs */
    pto_ir_value *n, *f, *x;
    pto_ir_builder *b = scalar_kernel(&n, &f, &x);
    pto_ir_stmt *st;
    for (int d = 0; d < PTO_IR_MAX_BLOCK_DEPTH; d++) {
      if (kind == 0) {
        char iv[16];
        snprintf(iv, sizeof iv, "i%d", d);
        OK(pto_ir_builder_for_begin(b, iv, 0, lit(b, 0), lit(b, 2), NULL, NULL, NULL, 0, NULL, 0,
                                    &st));
      } else {
        pto_ir_expr *c = NULL;
        OK(pto_ir_builder_bool(b, 1, &c));
        OK(pto_ir_builder_if_begin(b, c, NULL, 0, &st));
      }
    }
    pto_status s;
    if (kind == 0) {
      s = pto_ir_builder_for_begin(b, "deep", 0, lit(b, 0), lit(b, 2), NULL, NULL, NULL, 0, NULL, 0,
                                   &st);
    } else {
      pto_ir_expr *c = NULL;
      OK(pto_ir_builder_bool(b, 1, &c));
      s = pto_ir_builder_if_begin(b, c, NULL, 0, &st);
    }
    assert_status_contains(s, "blocks nested too deeply: more than 256 levels of for, if and "
                              "incore (move the inner part into a function)");
    pto_ir_builder_destroy(b);
  }
  /* At the limit the program builds, verifies and prints. */
  pto_ir_value *n, *f, *x;
  pto_ir_builder *b = scalar_kernel(&n, &f, &x);
  pto_ir_stmt *st;
  for (int d = 0; d < PTO_IR_MAX_BLOCK_DEPTH; d++) {
    char iv[16];
    snprintf(iv, sizeof iv, "i%d", d);
    OK(pto_ir_builder_for_begin(b, iv, 0, lit(b, 0), lit(b, 2), NULL, NULL, NULL, 0, NULL, 0, &st));
  }
  for (int d = 0; d < PTO_IR_MAX_BLOCK_DEPTH; d++)
    OK(pto_ir_builder_for_end(b));
  OK(pto_ir_builder_body_end(b));
  pto_ir_program *p = NULL;
  OK(pto_ir_builder_finish(b, &p));
  OK(pto_ir_verify(p));
  char *text = NULL;
  OK(pto_ir_print(p, &text));
  assert_non_null(strstr(text, "for %i255 in range(0, 2)"));
  free(text);
  pto_ir_program_destroy(p);
  pto_ir_builder_destroy(b);
}

/* Every allocation failure surfaces as an out-of-memory status: no crash, no leak. */
static void test_builder_reports_out_of_memory(void **state) {
  int saw_oom = 0, saw_ok = 0;
  for (long n = 0; n < 400 && !saw_ok; n++) {
    pto_ir_builder *b = NULL;
    OK(pto_ir_builder_create("m", NULL, &b));
    pto__arena_fail_after(pto_ir_builder_program(b)->arena, n);
    pto_status s = PTO_OK;
    pto_ir_func *k;
    const pto_ir_type *t = NULL;
    pto_ir_expr *dims[2] = {0}, *e = NULL;
    pto_ir_value *a = NULL, *v = NULL;
    if (!s) s = pto_ir_builder_func_begin(b, PTO_FUNC_KERNEL, "k", &k);
    if (!s) s = pto_ir_builder_int(b, 8, &dims[0]);
    if (!s) s = pto_ir_builder_int(b, 8, &dims[1]);
    if (!s) s = pto_ir_builder_tensor_type(b, PTO_DTYPE_F32, 2, dims, &t);
    if (!s) s = pto_ir_builder_param(b, "a", t, PTO_DIR_IN, 0, PTO_BIND_NONE, NULL, &a);
    if (!s) s = pto_ir_builder_body_begin(b, k);
    for (int i = 0; i < 20 && !s; i++) {
      char name[16];
      snprintf(name, sizeof name, "v%d", i);
      pto_ir_result r = {name, NULL, {0, 0}};
      s = pto_ir_builder_int(b, i, &e);
      if (!s) s = pto_ir_builder_assign(b, &r, e, &v);
    }
    if (!s) s = pto_ir_builder_body_end(b);
    pto_ir_program *p = NULL;
    if (!s) s = pto_ir_builder_finish(b, &p);
    if (s) {
      assert_int_equal(pto_status_code_of(s), PTO_STATUS_OUT_OF_MEMORY);
      saw_oom = 1;
      pto_status_free(s);
    } else {
      saw_ok = 1;
      pto__arena_fail_after(p->arena, -1);
      OK(pto_ir_verify(p));
      pto_ir_program_destroy(p);
    }
    pto_ir_builder_destroy(b);
  }
  assert_true(saw_oom);
  assert_true(saw_ok);
}

static void test_builder_deduces_result_types(void **state) {
  pto_ir_program *p = NULL;
  const char *text;
  text = "program ty\ndynamic M\n"
         "kernel @k(%a: tensor[64, 64] f16, %b: tensor[64, 64] i8, %n: index) {\n"
         "  %x = tile.load(%a, [0, 0], [64, 32], space=mat)\n"
         "  %l = tile.move(%x, space=left)\n"
         "  %y = tile.load(%a, [0, 0], [32, 64], space=mat)\n"
         "  %r = tile.move(%y, space=right)\n"
         "  %m = tile.matmul(%l, %r)\n"
         "  %bl = tile.load(%b, [0, 0], [64, 32], space=mat)\n"
         "  %br = tile.load(%b, [0, 0], [32, 64], space=mat)\n"
         "  %il = tile.move(%bl, space=left)\n"
         "  %ir = tile.move(%br, space=right)\n"
         "  %mi = tile.matmul(%il, %ir)\n"
         "  %rs = tile.row_sum(%m)\n"
         "  %cs = tile.col_max(%m)\n"
         "  %v = tile.load(%a, [0, 0], [16, 64], valid=[%n, 60])\n"
         "  %vr = tile.row_max(%v)\n"
         "}\n"
         "orch @o(%t: tensor[M, 100] f32, %u: tensor[100, 100] f32, %n: index) {\n"
         "  %s1 = tensor.slice(%u, [10, 0], [32, 100])\n"
         "  %s2 = tensor.slice(%u, [80, 0], [32, 100])\n"
         "  %s3 = tensor.slice(%t, [0, %n], [16, 50])\n"
         "  %c = tensor.create([%n, 8], i32)\n"
         "  %d = tensor.dim(%t, 1)\n"
         "  %e = tensor.read(%u, [1, 2])\n"
         "}\n";
  OK(pto_ir_parse_string(text, strlen(text), "ty.ptir", &p));
  static const char *const want_k[] = {"tile[64, 32] f16 @mat",
                                       "tile[64, 32] f16 @left",
                                       "tile[32, 64] f16 @mat",
                                       "tile[32, 64] f16 @right",
                                       "tile[64, 64] f32 @acc",
                                       "tile[64, 32] i8 @mat",
                                       "tile[32, 64] i8 @mat",
                                       "tile[64, 32] i8 @left",
                                       "tile[32, 64] i8 @right",
                                       "tile[64, 64] i32 @acc",
                                       "tile[64, 1] f32 @acc",
                                       "tile[1, 64] f32 @acc",
                                       "tile[16, 64] f16 @vec valid[%n, 60]",
                                       "tile[16, 1] f16 @vec valid[%n, 1]"};
  const pto_ir_func *k = p->funcs[0], *o = p->funcs[1];
  for (int i = 0; i < k->body.n; i++) {
    char *t = pto_ir_type_str(p, k->body.stmts[i]->results[0]->type);
    assert_string_equal(t, want_k[i]);
    free(t);
  }
  static const char *const want_o[] = {"tensor[32, 100] f32",
                                       /* past the static edge: clamped, dynamic */
                                       "tensor[min(32, 100 - 80), 100] f32",
                                       "tensor[min(16, M), min(50, 100 - %n)] f32",
                                       "tensor[%n, 8] i32", "index", "f32"};
  for (int i = 0; i < o->body.n; i++) {
    char *t = pto_ir_type_str(p, o->body.stmts[i]->results[0]->type);
    assert_string_equal(t, want_o[i]);
    free(t);
  }
  OK(pto_ir_verify(p));
  pto_ir_program_destroy(p);
}

/* A static slice that fits keeps a static extent; one that runs past the edge keeps the clamping
 * expression, dynamic (docs/language.md), through a copy too; a call passing it where another
 * static extent is declared verifies, with one launch warning per dim naming both extents. */
static void collect_warning(void *ctx, const char *message) {
  char *buf = ctx;
  size_t n = strlen(buf);
  snprintf(buf + n, 2048 - n, "%s\n", message);
}

static void test_builder_clamped_static_slice_is_dynamic(void **state) {
  static const char text[] = "program t\n"
                             "kernel @k(%x: tensor[8, 16] f32) {\n"
                             "  %t = tile.load(%x, [0, 0], [8, 16])\n"
                             "}\n"
                             "orch @main(%x: tensor[20, 16] f32) {\n"
                             "  %a = tensor.slice(%x, [8, 0], [8, 16])\n"
                             "  %b = tensor.slice(%x, [16, 0], [8, 16])\n"
                             "  %c = tensor.slice(%b, [0, 0], [2, 16])\n"
                             "  call @k(%a)\n"
                             "  call @k(%b)\n"
                             "}\n";
  pto_ir_program *p = NULL, *c = NULL;
  OK(pto_ir_parse_string(text, sizeof text - 1, "t.ptir", &p));
  OK(pto_ir_verify(p));
  const pto_ir_func *o = pto_ir_program_find_func(p, "main");
  static const char *const want[] = {"tensor[8, 16] f32", "tensor[min(8, 20 - 16), 16] f32",
                                     "tensor[min(2, min(8, 20 - 16)), 16] f32"};
  for (int i = 0; i < 3; i++) {
    const pto_ir_type *t = o->body.stmts[i]->results[0]->type;
    char *str = pto_ir_type_str(p, t);
    assert_string_equal(str, want[i]);
    free(str);
    int64_t v;
    assert_int_equal(pto_ir_expr_static_int(t->dims[0], &v) == 0, i == 0);
  }
  OK(pto_ir_program_copy(p, &c));
  const pto_ir_func *oc = pto_ir_program_find_func(c, "main");
  int64_t v;
  assert_int_not_equal(pto_ir_expr_static_int(oc->body.stmts[1]->results[0]->type->dims[0], &v), 0);
  OK(pto_ir_verify(c));
  char warnings[2048] = "";
  OK(pto_ir_launch_warnings(p, collect_warning, warnings));
  assert_string_equal(warnings, "t.ptir:10:11: call @k: argument 1 for %x: %b has extent 4 in dim "
                                "0 (a tensor.slice clamped at its tensor's edge), the parameter "
                                "declares 8: the launch will fail\n");
  pto_ir_program_destroy(c);
  pto_ir_program_destroy(p);
}

/* The copy helpers rebuild a program node for node. */
static void test_builder_copy_makes_an_equal_program(void **state) {
  pto_ir_program *p = NULL, *c = NULL;
  OK(pto_ir_parse_file(PTO_SOURCE_DIR "/tests/corpus/good/control.ptir", &p));
  OK(pto_ir_program_copy(p, &c));
  assert_true(pto_ir_program_equal(p, c));
  char *t1, *t2;
  OK(pto_ir_print(p, &t1));
  OK(pto_ir_print(c, &t2));
  assert_string_equal(t1, t2);
  free(t1);
  free(t2);
  pto_ir_program_destroy(p);
  pto_ir_program_destroy(c);
}

/* What a specialization pass does: copy a function with a scalar parameter's uses replaced by a
 * literal. */
static void test_builder_copy_with_a_value_map_substitutes_uses(void **state) {
  const char *text =
      "program sp\n"
      "kernel @k(%x: tensor[8, 8] f32, out %y: tensor[8, 8] f32, %s: f32) -> (tensor[8, 8] f32) {\n"
      "  %t = tile.load(%x, [0, 0], [8, 8])\n"
      "  %u = tile.muls(%t, %s)\n"
      "  %y1 = tile.store(%u, [0, 0], %y)\n"
      "  return %y1\n"
      "}\n";
  pto_ir_program *src = NULL;
  OK(pto_ir_parse_string(text, strlen(text), "sp.ptir", &src));
  const pto_ir_func *f = src->funcs[0];
  pto_ir_builder *b = NULL;
  OK(pto_ir_builder_create("sp", "sp.ptir", &b));
  pto_ir_func *dst = NULL;
  OK(pto_ir_builder_copy_func_header(b, src, f, &dst));
  OK(pto_ir_builder_body_begin(b, dst));
  pto_ir_value_map m;
  OK(pto_ir_value_map_init(&m, f->nvalues));
  m.values[0] = dst->params[0].value;
  m.values[1] = dst->params[1].value;
  pto_ir_expr *three = NULL;
  OK(pto_ir_builder_float(b, 3.0, &three));
  m.exprs[2] = three; /* %s := 3.0 */
  OK(pto_ir_builder_copy_block(b, src, &f->body, &m));
  OK(pto_ir_builder_body_end(b));
  pto_ir_value_map_clear(&m);
  pto_ir_program *out = NULL;
  OK(pto_ir_builder_finish(b, &out));
  pto_ir_builder_destroy(b);
  char *t = NULL;
  OK(pto_ir_print(out, &t));
  assert_non_null(strstr(t, "  %u = tile.muls(%t, 3.0)\n"));
  free(t);
  OK(pto_ir_verify(out));
  pto_ir_program_destroy(out);
  pto_ir_program_destroy(src);
}

/* The L3 ops through the C API: a kernel with a barrier and an allreduce (keywords in any
 * order), an orch with reshape and select; the same program as its text, and the deduced types. */
static void test_builder_l3_ops_match_their_text(void **state) {
  pto_ir_builder *b = NULL;
  OK(pto_ir_builder_create("l3", "l3.ptir", &b));
  pto_ir_expr *wd[2] = {lit(b, 64), lit(b, 32)}, *sd[2] = {lit(b, 1), lit(b, 8)};
  const pto_ir_type *wt = NULL, *st = NULL, *xt = NULL;
  OK(pto_ir_builder_dtensor_type(b, PTO_DTYPE_F32, 2, wd, &wt));
  OK(pto_ir_builder_dtensor_type(b, PTO_DTYPE_I32, 2, sd, &st));
  pto_ir_expr *xd[3] = {lit(b, 4), lit(b, 16), lit(b, 8)};
  OK(pto_ir_builder_tensor_type(b, PTO_DTYPE_F32, 3, xd, &xt));

  pto_ir_func *k = NULL;
  pto_ir_value *w, *sg;
  OK(pto_ir_builder_func_begin(b, PTO_FUNC_KERNEL, "k", &k));
  OK(pto_ir_builder_param(b, "w", wt, PTO_DIR_INOUT, 1, PTO_BIND_NONE, NULL, &w));
  OK(pto_ir_builder_param(b, "s", st, PTO_DIR_INOUT, 1, PTO_BIND_NONE, NULL, &sg));
  const pto_ir_type *rets[2] = {wt, st};
  OK(pto_ir_builder_func_rets(b, rets, 2));
  OK(pto_ir_builder_header_end(b));
  pto_ir_func *o = NULL;
  pto_ir_value *x;
  OK(pto_ir_builder_func_begin(b, PTO_FUNC_ORCH, "o", &o));
  OK(pto_ir_builder_param(b, "x", xt, PTO_DIR_IN, 0, PTO_BIND_NONE, NULL, &x));
  OK(pto_ir_builder_header_end(b));

  OK(pto_ir_builder_body_begin(b, k));
  pto_ir_stmt *s;
  pto_ir_arg bar[1] = {expr_arg(use(b, sg))};
  OK(pto_ir_builder_op(b, PTO_OP_DIST_BARRIER, bar, 1, NULL, 0, &s));
  pto_ir_arg ar[4] = {expr_arg(use(b, w)),
                      expr_arg(use(b, sg)),
                      {.kind = PTO_ARG_WORD, .kw = "mode", .str = "ring"},
                      {.kind = PTO_ARG_WORD, .kw = "op", .str = "max"}};
  pto_ir_result r = {"r", NULL, {0, 0}};
  OK(pto_ir_builder_op(b, PTO_OP_DIST_ALLREDUCE, ar, 4, &r, 1, &s));
  pto_ir_value *rv = s->results[0];
  assert_ptr_equal(rv->alias_of, w);
  assert_ptr_equal(rv->type, wt);
  pto_ir_expr *rvals[2] = {use(b, rv), use(b, sg)};
  OK(pto_ir_builder_return(b, rvals, 2));
  OK(pto_ir_builder_body_end(b));

  OK(pto_ir_builder_body_begin(b, o));
  pto_ir_arg sel[2] = {expr_arg(use(b, x)), expr_arg(lit(b, 3))};
  pto_ir_result rs = {"row", NULL, {0, 0}};
  OK(pto_ir_builder_op(b, PTO_OP_TENSOR_SELECT, sel, 2, &rs, 1, &s));
  pto_ir_value *row = s->results[0];
  pto_ir_expr *shape[1] = {lit(b, 128)};
  pto_ir_arg rsh[2] = {expr_arg(use(b, row)), list_arg(shape, 1)};
  pto_ir_result rf = {"flat", NULL, {0, 0}};
  OK(pto_ir_builder_op(b, PTO_OP_TENSOR_RESHAPE, rsh, 2, &rf, 1, &s));
  pto_ir_value *flat = s->results[0];
  OK(pto_ir_builder_body_end(b));
  pto_ir_program *built = NULL;
  OK(pto_ir_builder_finish(b, &built));
  pto_ir_builder_destroy(b);
  char *ts = pto_ir_type_str(built, row->type);
  assert_string_equal(ts, "tensor[16, 8] f32");
  free(ts);
  ts = pto_ir_type_str(built, flat->type);
  assert_string_equal(ts, "tensor[128] f32");
  free(ts);

  const char *text = "program l3\n"
                     "kernel @k(inout %w: dtensor[64, 32] f32, inout %s: dtensor[1, 8] i32)\n"
                     "    -> (dtensor[64, 32] f32, dtensor[1, 8] i32) {\n"
                     "  dist.barrier(%s)\n"
                     "  %r = dist.allreduce(%w, %s, mode=ring, op=max)\n"
                     "  return %r, %s\n"
                     "}\n"
                     "orch @o(%x: tensor[4, 16, 8] f32) {\n"
                     "  %row = tensor.select(%x, 3)\n"
                     "  %flat = tensor.reshape(%row, [128])\n"
                     "}\n";
  pto_ir_program *parsed = NULL;
  OK(pto_ir_parse_string(text, strlen(text), "l3.ptir", &parsed));
  assert_true(pto_ir_program_equal(built, parsed));
  char *p1 = NULL, *p2 = NULL;
  OK(pto_ir_print(built, &p1));
  OK(pto_ir_print(parsed, &p2));
  assert_string_equal(p1, p2);
  assert_non_null(strstr(p1, "dist.allreduce(%w, %s, op=max, mode=ring)"));
  free(p1);
  free(p2);
  pto_ir_program_destroy(built);

  /* a wrong element count is refused through the C API too */
  b = NULL;
  OK(pto_ir_builder_create("l3", "l3.ptir", &b));
  OK(pto_ir_builder_func_begin(b, PTO_FUNC_ORCH, "o", &o));
  pto_ir_expr *xd2[3] = {lit(b, 4), lit(b, 16), lit(b, 8)};
  OK(pto_ir_builder_tensor_type(b, PTO_DTYPE_F32, 3, xd2, &xt));
  OK(pto_ir_builder_param(b, "x", xt, PTO_DIR_IN, 0, PTO_BIND_NONE, NULL, &x));
  OK(pto_ir_builder_header_end(b));
  OK(pto_ir_builder_body_begin(b, o));
  pto_ir_expr *bad[2] = {lit(b, 3), lit(b, 40)};
  pto_ir_arg rbad[2] = {expr_arg(use(b, x)), list_arg(bad, 2)};
  pto_ir_result rb = {"bad", NULL, {0, 0}};
  assert_status_contains(pto_ir_builder_op(b, PTO_OP_TENSOR_RESHAPE, rbad, 2, &rb, 1, NULL),
                         "tensor.reshape: %x [4,16,8] has 512 elements, the shape 120");
  pto_ir_builder_destroy(b);
  pto_ir_program_destroy(parsed);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_builder_add_program_matches_the_parsed_example),
      cmocka_unit_test(test_builder_literals_take_their_context_dtype),
      cmocka_unit_test(test_builder_literal_must_fit_its_dtype),
      cmocka_unit_test(test_builder_u64_literals_take_the_whole_range),
      cmocka_unit_test(test_builder_param_defaults_follow_literal_typing),
      cmocka_unit_test(test_builder_negated_literal_is_one_node),
      cmocka_unit_test(test_builder_write_results_alias_their_target),
      cmocka_unit_test(test_builder_keeps_the_first_error),
      cmocka_unit_test(test_builder_rejects_values_out_of_scope),
      cmocka_unit_test(test_builder_names_where_a_foreign_value_belongs),
      cmocka_unit_test(test_builder_reports_out_of_memory),
      cmocka_unit_test(test_builder_bounds_block_nesting),
      cmocka_unit_test(test_builder_deduces_result_types),
      cmocka_unit_test(test_builder_clamped_static_slice_is_dynamic),
      cmocka_unit_test(test_builder_copy_makes_an_equal_program),
      cmocka_unit_test(test_builder_copy_with_a_value_map_substitutes_uses),
      cmocka_unit_test(test_builder_l3_ops_match_their_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
