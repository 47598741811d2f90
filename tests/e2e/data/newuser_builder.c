/* A new user's program built with the C builder API (docs/c-api.md, pto/ir_builder.h; run by
 * tests/e2e/docs_newuser_capi.sh), verified, printed, compiled,
 * loaded and run:
 *   kernel @neg_part(%x: tensor[16, 64] f32, out %y: tensor[16, 64] f32) {  y = x < 0 ? x : 0 }
 *   orch @main(%x: tensor[32, 64] f32, out %y: tensor[32, 64] f32)
 *     for %i in range(0, 2) { slices of rows %i * 16; call @neg_part }              */
#include <pto/base.h>
#include <pto/ir_builder.h>
#include <pto/loader.h>
#include <pto/runtime.h>
#include <stdio.h>
#define CHECK(x)                                                                                   \
  do {                                                                                             \
    pto_status s_ = (x);                                                                           \
    if (s_) {                                                                                      \
      fprintf(stderr, "%s\n", pto_status_message(s_));                                             \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

static pto_ir_expr *use(pto_ir_builder *b, pto_ir_value *v) {
  pto_ir_expr *e;
  return pto_ir_builder_use(b, v, &e) ? NULL : e;
}
static pto_ir_expr *lit(pto_ir_builder *b, int64_t v) {
  pto_ir_expr *e;
  return pto_ir_builder_int(b, v, &e) ? NULL : e;
}
static pto_ir_arg ex(pto_ir_expr *e) { return (pto_ir_arg){.kind = PTO_ARG_EXPR, .expr = e}; }
static pto_ir_arg lst(pto_ir_expr **items, pto_ir_expr *a, pto_ir_expr *c) {
  items[0] = a, items[1] = c;
  return (pto_ir_arg){.kind = PTO_ARG_LIST, .list = {items, 2}};
}

int main(void) {
  pto_ir_builder *b;
  pto_ir_expr *d[2], *l1[2], *l2[2], *l3[2], *l4[2], *l5[2], *l6[2], *fz, *fz2, *ret, *rets[1];
  const pto_ir_type *t16, *t32;
  pto_ir_func *k, *o;
  pto_ir_value *x, *y, *ox, *oy;
  pto_ir_stmt *ld, *m, *s, *st, *loop, *xs, *ys;
  CHECK(pto_ir_builder_create("built2", NULL, &b));
  d[0] = lit(b, 16), d[1] = lit(b, 64);
  CHECK(pto_ir_builder_tensor_type(b, PTO_DTYPE_F32, 2, d, &t16));
  d[0] = lit(b, 32), d[1] = lit(b, 64);
  CHECK(pto_ir_builder_tensor_type(b, PTO_DTYPE_F32, 2, d, &t32));
  /* the kernel */
  CHECK(pto_ir_builder_func_begin(b, PTO_FUNC_KERNEL, "neg_part", &k));
  CHECK(pto_ir_builder_param(b, "x", t16, PTO_DIR_IN, 0, PTO_BIND_NONE, NULL, &x));
  CHECK(pto_ir_builder_param(b, "y", t16, PTO_DIR_OUT, 1, PTO_BIND_NONE, NULL, &y));
  CHECK(pto_ir_builder_func_rets(b, &t16, 1));
  CHECK(pto_ir_builder_header_end(b));
  /* the orch's header too, before either body */
  CHECK(pto_ir_builder_func_begin(b, PTO_FUNC_ORCH, "main", &o));
  CHECK(pto_ir_builder_param(b, "x", t32, PTO_DIR_IN, 0, PTO_BIND_NONE, NULL, &ox));
  CHECK(pto_ir_builder_param(b, "y", t32, PTO_DIR_OUT, 1, PTO_BIND_NONE, NULL, &oy));
  CHECK(pto_ir_builder_func_rets(b, &t32, 1));
  CHECK(pto_ir_builder_header_end(b));

  CHECK(pto_ir_builder_body_begin(b, k));
  pto_ir_arg a_ld[3] = {ex(use(b, x)), lst(l1, lit(b, 0), lit(b, 0)),
                        lst(l2, lit(b, 16), lit(b, 64))};
  CHECK(pto_ir_builder_op(b, PTO_OP_TILE_LOAD, a_ld, 3, &(pto_ir_result){.name = "t"}, 1, &ld));
  CHECK(pto_ir_builder_float(b, 0.0, &fz));
  pto_ir_arg a_m[3] = {
      ex(use(b, ld->results[0])), ex(fz), {.kind = PTO_ARG_WORD, .kw = "cmp", .str = "lt"}};
  CHECK(pto_ir_builder_op(b, PTO_OP_TILE_CMPS, a_m, 3, &(pto_ir_result){.name = "m"}, 1, &m));
  CHECK(pto_ir_builder_float(b, 0.0, &fz2));
  pto_ir_arg a_s[3] = {ex(use(b, m->results[0])), ex(use(b, ld->results[0])), ex(fz2)};
  CHECK(pto_ir_builder_op(b, PTO_OP_TILE_SELS, a_s, 3, &(pto_ir_result){.name = "s"}, 1, &s));
  pto_ir_arg a_st[3] = {ex(use(b, s->results[0])), lst(l3, lit(b, 0), lit(b, 0)), ex(use(b, y))};
  CHECK(pto_ir_builder_op(b, PTO_OP_TILE_STORE, a_st, 3, &(pto_ir_result){.name = "y1"}, 1, &st));
  ret = use(b, st->results[0]);
  CHECK(pto_ir_builder_return(b, &ret, 1));
  CHECK(pto_ir_builder_body_end(b));

  CHECK(pto_ir_builder_body_begin(b, o));
  CHECK(pto_ir_builder_for_begin(b, "i", 0, lit(b, 0), lit(b, 2), NULL, NULL, NULL, 0, NULL, 0,
                                 &loop));
  pto_ir_value *iv; /* the loop variable %i */
  CHECK(pto_ir_builder_lookup(b, "i", &iv));
  pto_ir_expr *row, *row2; /* %i * 16, used twice */
  CHECK(pto_ir_builder_binary(b, PTO_EOP_MUL, use(b, iv), lit(b, 16), &row));
  CHECK(pto_ir_builder_binary(b, PTO_EOP_MUL, use(b, iv), lit(b, 16), &row2));
  pto_ir_arg a_xs[3] = {ex(use(b, ox)), lst(l4, row, lit(b, 0)), lst(l5, lit(b, 16), lit(b, 64))};
  CHECK(pto_ir_builder_op(b, PTO_OP_TENSOR_SLICE, a_xs, 3, &(pto_ir_result){.name = "xs"}, 1, &xs));
  pto_ir_expr *l7[2];
  pto_ir_arg a_ys[3] = {ex(use(b, oy)), lst(l6, row2, lit(b, 0)), lst(l7, lit(b, 16), lit(b, 64))};
  CHECK(pto_ir_builder_op(b, PTO_OP_TENSOR_SLICE, a_ys, 3, &(pto_ir_result){.name = "ys"}, 1, &ys));
  pto_ir_expr *cargs[2] = {use(b, xs->results[0]), use(b, ys->results[0])};
  CHECK(pto_ir_builder_call(b, k, cargs, 2, NULL, NULL, 0, NULL));
  CHECK(pto_ir_builder_for_end(b));
  rets[0] = use(b, oy);
  CHECK(pto_ir_builder_return(b, rets, 1));
  CHECK(pto_ir_builder_body_end(b));

  pto_ir_program *ir;
  CHECK(pto_ir_builder_finish(b, &ir));
  pto_ir_builder_destroy(b);
  CHECK(pto_ir_verify(ir));
  char *text;
  CHECK(pto_ir_print(ir, &text));
  fputs(text, stdout);
  pto_free(text);

  pto_program *prog;
  pto_worker *w;
  CHECK(pto_compile(ir, NULL, &prog));
  CHECK(pto_worker_open(NULL, &w));
  static float xv[32 * 64], yv[32 * 64];
  for (int i = 0; i < 32 * 64; i++)
    xv[i] = (float)(i % 9) - 4.0f;
  int64_t shp[2] = {32, 64};
  pto_host_tensor xh, yh;
  pto_host_tensor_init(&xh, xv, PTO_DTYPE_F32, 2, shp);
  pto_host_tensor_init(&yh, yv, PTO_DTYPE_F32, 2, shp);
  pto_arg args[2] = {pto_arg_host_readonly(&xh), pto_arg_host(&yh)};
  CHECK(pto_worker_run(w, prog, args, 2));
  int bad = 0;
  for (int i = 0; i < 32 * 64; i++)
    bad += yv[i] != (xv[i] < 0 ? xv[i] : 0.0f);
  printf("built program: %s\n", bad ? "FAIL" : "PASS");
  pto_worker_close(w);
  pto_program_release(prog);
  pto_ir_program_destroy(ir);
  return bad != 0;
}
