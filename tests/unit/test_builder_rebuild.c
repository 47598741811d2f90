/* Every op and construct of the language, built through the C builder API's own calls.
 *
 * A generator walks each parsed program of the repository (examples/, tests/programs/,
 * tests/corpus/good/, bench/) and rebuilds it node by node with the primitive builder calls a C
 * user has (pto_ir_builder_dynamic, _func_begin, _param, _op, _call, _for_begin, ..., never the
 * copy helpers passes use), twice: declaring the type of every assignment, loop carry and if
 * result (the builder checks it equals the deduced one), and declaring it only where the text
 * does (a literal-only value), as a user translating the text would. Each time it checks
 * build -> print -> parse -> print: the C-built program
 * prints exactly the text the parsed one does, that text parses back to the same text, and the
 * two programs are structurally equal with the same hash (so they compile to the same cache entry
 * and run alike). It also counts the opcodes it built: every op of the op table must have been
 * built at least once (a program below covers those no file uses), so an op added to the
 * language without a C-built use fails here by name. Last, the C-built scale_rows example is
 * compiled and run beside the parsed one: the same binary (hid), the same output bits. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/base.h"
#include "pto/ir.h"
#include "pto/ir_builder.h"
#include "pto/loader.h"
#include "pto/runtime.h"
#include "testutil.h"

/* ---- the generator ------------------------------------------------------------------------ */

typedef struct rebuild {
  pto_ir_builder *b;
  const pto_ir_program *src;
  pto_ir_func **funcs; /* by source function index */
  pto_ir_value **vals; /* by source value id, of the function being built */
  int built[PTO_OP_COUNT];
  /* 0: a declared type on every assignment, loop carry and if result (it must equal the deduced
   * one). 1: only where the text carries one, on a literal-only value, as a user translating the
   * text would write it; everything else deduced. */
  int minimal_types;
} rebuild;

/* Whether e is made of literals only: it takes its dtype from a declared type. */
static int literal_only(const pto_ir_expr *e) {
  switch (e->kind) {
  case PTO_EXPR_INT:
  case PTO_EXPR_FLOAT:
  case PTO_EXPR_BOOL: return 1;
  case PTO_EXPR_UNARY: return literal_only(e->a);
  case PTO_EXPR_BINARY: return literal_only(e->lhs) && literal_only(e->rhs);
  default: return 0;
  }
}

/* Whether a block's closing yield has a literal-only value. */
static int yields_literal(const pto_ir_block *blk) {
  const pto_ir_stmt *y = blk->n ? blk->stmts[blk->n - 1] : NULL;
  for (int i = 0; y && y->kind == PTO_STMT_YIELD && i < y->ret.n; i++)
    if (literal_only(y->ret.vals[i])) return 1;
  return 0;
}

static pto_status expr(rebuild *r, const pto_ir_expr *e, pto_ir_expr **out);

static pto_status type(rebuild *r, const pto_ir_type *t, const pto_ir_type **out) {
  pto_ir_expr *dims[PTO_MAX_RANK] = {0}, *valid[PTO_MAX_RANK] = {0};
  pto_status s;
  if (t->kind == PTO_TYPE_SCALAR) return pto_ir_builder_scalar_type(r->b, t->dtype, out);
  for (int i = 0; i < t->rank; i++)
    if ((s = expr(r, t->dims[i], &dims[i]))) return s;
  switch (t->kind) {
  case PTO_TYPE_TENSOR: return pto_ir_builder_tensor_type(r->b, t->dtype, t->rank, dims, out);
  case PTO_TYPE_DTENSOR: return pto_ir_builder_dtensor_type(r->b, t->dtype, t->rank, dims, out);
  default: break;
  }
  for (int i = 0; t->has_valid && i < t->rank; i++)
    if ((s = expr(r, t->valid[i], &valid[i]))) return s;
  return pto_ir_builder_tile_type(r->b, t->dtype, t->rank, dims, t->space,
                                  t->has_valid ? t->rank : 0, valid, out);
}

static pto_status expr(rebuild *r, const pto_ir_expr *e, pto_ir_expr **out) {
  pto_ir_expr *a = NULL, *c = NULL;
  pto_status s;
  switch (e->kind) {
  case PTO_EXPR_INT:
    if (e->dtype == PTO_DTYPE_U64 && e->i < 0)
      return pto_ir_builder_uint(r->b, (uint64_t)e->i, out);
    return pto_ir_builder_int(r->b, e->i, out);
  case PTO_EXPR_FLOAT: return pto_ir_builder_float(r->b, e->f, out);
  case PTO_EXPR_BOOL: return pto_ir_builder_bool(r->b, e->b, out);
  case PTO_EXPR_VALUE: return pto_ir_builder_use(r->b, r->vals[e->value->id], out);
  case PTO_EXPR_SYM: {
    const char *name = r->src->syms[e->sym];
    return pto_ir_builder_sym(r->b, pto_ir_builder_find_sym(r->b, name, strlen(name)), out);
  }
  case PTO_EXPR_UNARY:
    if ((s = expr(r, e->a, &a))) return s;
    return pto_ir_builder_unary(r->b, e->op, a, out);
  case PTO_EXPR_BINARY:
    if ((s = expr(r, e->lhs, &a)) || (s = expr(r, e->rhs, &c))) return s;
    return pto_ir_builder_binary(r->b, e->op, a, c, out);
  case PTO_EXPR_CAST:
    if ((s = expr(r, e->a, &a))) return s;
    return pto_ir_builder_cast(r->b, e->dtype, a, out);
  }
  return pto_ir_builder_fail(r->b, "unknown expression kind %d", (int)e->kind);
}

static pto_status exprs(rebuild *r, pto_ir_expr *const *src, int n, pto_ir_expr **out) {
  for (int i = 0; i < n; i++) {
    pto_status s = expr(r, src[i], &out[i]);
    if (s) return s;
  }
  return PTO_OK;
}

/* Result names as written; a declared type where the text may carry one (assignments, loop
 * carries, if results: the printer writes it where the literal typing needs it), when typed and,
 * with minimal_types, flex (one per result, NULL: all) says the value is literal-only. */
static pto_status results(rebuild *r, pto_ir_value *const *src, int n, int typed,
                          pto_ir_expr *const *flex, pto_ir_result *out) {
  for (int i = 0; i < n; i++) {
    out[i] = (pto_ir_result){.name = src[i]->name};
    if (typed && (!r->minimal_types || !flex || literal_only(flex[i]))) {
      pto_status s = type(r, src[i]->type, &out[i].type);
      if (s) return s;
    }
  }
  return PTO_OK;
}

static void map_results(rebuild *r, const pto_ir_stmt *from, const pto_ir_stmt *to) {
  for (int i = 0; i < from->nresults; i++)
    r->vals[from->results[i]->id] = to->results[i];
}

#define MAXN 64

static pto_status block(rebuild *r, const pto_ir_block *blk);

static pto_status stmt(rebuild *r, const pto_ir_stmt *st) {
  pto_ir_result res[MAXN];
  pto_ir_expr *ex[MAXN], *ex2[MAXN], *a = NULL, *c = NULL, *d = NULL;
  pto_ir_stmt *out = NULL;
  pto_ir_value *v = NULL;
  pto_status s;
  if (st->nresults > MAXN) return pto_ir_builder_fail(r->b, "too many results");
  switch (st->kind) {
  case PTO_STMT_ASSIGN:
    if ((s = results(r, st->results, 1, 1, &st->expr, res)) || (s = expr(r, st->expr, &a)))
      return s;
    if ((s = pto_ir_builder_assign(r->b, &res[0], a, &v))) return s;
    r->vals[st->results[0]->id] = v;
    return PTO_OK;
  case PTO_STMT_OP: {
    pto_ir_arg args[MAXN];
    pto_ir_expr *items[MAXN][PTO_MAX_RANK + 1];
    if (st->op.nargs > MAXN) return pto_ir_builder_fail(r->b, "too many arguments");
    for (int i = 0; i < st->op.nargs; i++) {
      const pto_ir_arg *sa = &st->op.args[i];
      args[i] = (pto_ir_arg){.kind = sa->kind, .kw = sa->kw};
      switch (sa->kind) {
      case PTO_ARG_EXPR:
        if ((s = expr(r, sa->expr, &args[i].expr))) return s;
        break;
      case PTO_ARG_DTYPE: args[i].dtype = sa->dtype; break;
      case PTO_ARG_LIST:
        if (sa->list.n > PTO_MAX_RANK + 1) return pto_ir_builder_fail(r->b, "long list");
        if ((s = exprs(r, sa->list.items, sa->list.n, items[i]))) return s;
        args[i].list.items = items[i];
        args[i].list.n = sa->list.n;
        break;
      case PTO_ARG_STRING:
      case PTO_ARG_WORD: args[i].str = sa->str; break;
      }
    }
    if ((s = results(r, st->results, st->nresults, 0, NULL, res))) return s;
    if ((s = pto_ir_builder_op(r->b, st->op.opc, args, st->op.nargs, res, st->nresults, &out)))
      return s;
    r->built[st->op.opc]++;
    map_results(r, st, out);
    return PTO_OK;
  }
  case PTO_STMT_CALL:
    if (st->call.nargs > MAXN) return pto_ir_builder_fail(r->b, "too many arguments");
    if ((s = exprs(r, st->call.args, st->call.nargs, ex))) return s;
    if (st->call.device && (s = expr(r, st->call.device, &d))) return s;
    if ((s = results(r, st->results, st->nresults, 0, NULL, res))) return s;
    if ((s = pto_ir_builder_call(r->b, r->funcs[st->call.callee->index], ex, st->call.nargs, d, res,
                                 st->nresults, &out)))
      return s;
    map_results(r, st, out);
    return PTO_OK;
  case PTO_STMT_FOR: {
    pto_ir_result iters[MAXN];
    if (st->loop.niters > MAXN) return pto_ir_builder_fail(r->b, "too many iters");
    if ((s = expr(r, st->loop.lo, &a)) || (s = expr(r, st->loop.hi, &c)) ||
        (st->loop.step && (s = expr(r, st->loop.step, &d))) ||
        (s = results(r, st->loop.iters, st->loop.niters, 1, st->loop.inits, iters)) ||
        (s = exprs(r, st->loop.inits, st->loop.niters, ex)) ||
        (s = results(r, st->results, st->nresults, 0, NULL, res)))
      return s;
    if ((s = pto_ir_builder_for_begin(r->b, st->loop.iv->name, st->loop.parallel, a, c, d, iters,
                                      ex, st->loop.niters, res, st->nresults, &out)))
      return s;
    r->vals[st->loop.iv->id] = out->loop.iv;
    for (int i = 0; i < st->loop.niters; i++)
      r->vals[st->loop.iters[i]->id] = out->loop.iters[i];
    if ((s = block(r, &st->loop.body)) || (s = pto_ir_builder_for_end(r->b))) return s;
    map_results(r, st, out);
    return PTO_OK;
  }
  case PTO_STMT_IF:
    if ((s = expr(r, st->branch.cond, &a)) ||
        (s = results(r, st->results, st->nresults,
                     !r->minimal_types || yields_literal(&st->branch.then_body) ||
                         yields_literal(&st->branch.else_body),
                     NULL, res)) ||
        (s = pto_ir_builder_if_begin(r->b, a, res, st->nresults, &out)) ||
        (s = block(r, &st->branch.then_body)))
      return s;
    if (st->branch.has_else &&
        ((s = pto_ir_builder_else(r->b)) || (s = block(r, &st->branch.else_body))))
      return s;
    if ((s = pto_ir_builder_if_end(r->b))) return s;
    map_results(r, st, out);
    return PTO_OK;
  case PTO_STMT_INCORE:
    if ((s = pto_ir_builder_incore_begin(r->b, st->incore.name, &out)) ||
        (s = block(r, &st->incore.body)))
      return s;
    return pto_ir_builder_incore_end(r->b);
  case PTO_STMT_YIELD:
  case PTO_STMT_RETURN:
    if (st->ret.n > MAXN) return pto_ir_builder_fail(r->b, "too many values");
    if ((s = exprs(r, st->ret.vals, st->ret.n, ex2))) return s;
    return st->kind == PTO_STMT_YIELD ? pto_ir_builder_yield(r->b, ex2, st->ret.n)
                                      : pto_ir_builder_return(r->b, ex2, st->ret.n);
  }
  return pto_ir_builder_fail(r->b, "unknown statement kind %d", (int)st->kind);
}

static pto_status block(rebuild *r, const pto_ir_block *blk) {
  for (int i = 0; i < blk->n; i++) {
    pto_status s = stmt(r, blk->stmts[i]);
    if (s) return s;
  }
  return PTO_OK;
}

static pto_status header(rebuild *r, const pto_ir_func *f) {
  pto_status s = pto_ir_builder_func_begin(r->b, f->kind, f->name, &r->funcs[f->index]);
  if (s) return s;
  for (int i = 0; i < f->nparams; i++) {
    const pto_ir_param *pa = &f->params[i];
    const pto_ir_type *t = NULL;
    pto_ir_expr *lit = NULL;
    pto_ir_value *v = NULL;
    if ((s = type(r, pa->value->type, &t))) return s;
    if (pa->bind == PTO_BIND_LITERAL && (s = expr(r, pa->literal, &lit))) return s;
    if ((s = pto_ir_builder_param(r->b, pa->value->name, t, pa->dir, pa->dir_written, pa->bind, lit,
                                  &v)))
      return s;
  }
  if (f->nrets > 0) {
    const pto_ir_type *rets[MAXN];
    if (f->nrets > MAXN) return pto_ir_builder_fail(r->b, "too many results");
    for (int i = 0; i < f->nrets; i++)
      if ((s = type(r, f->rets[i], &rets[i]))) return s;
    if ((s = pto_ir_builder_func_rets(r->b, rets, f->nrets))) return s;
  }
  return pto_ir_builder_header_end(r->b);
}

/* src rebuilt through the builder's primitive calls; counts the opcodes built in built[]. */
static pto_status rebuild_program(const pto_ir_program *src, int minimal_types, int *built,
                                  pto_ir_program **out) {
  rebuild r = {.src = src, .minimal_types = minimal_types};
  pto_status s = pto_ir_builder_create(src->name, NULL, &r.b);
  if (s) return s;
  r.funcs = calloc((size_t)src->nfuncs + 1, sizeof *r.funcs);
  for (int i = 0; !s && i < src->nsyms; i++) {
    int sym;
    s = pto_ir_builder_dynamic(r.b, src->syms[i], &sym);
  }
  /* Every header first, so calls may name functions defined later in the text. */
  for (int i = 0; !s && i < src->nfuncs; i++)
    s = header(&r, src->funcs[i]);
  for (int i = 0; !s && i < src->nfuncs; i++) {
    const pto_ir_func *f = src->funcs[i];
    r.vals = calloc((size_t)f->nvalues + 1, sizeof *r.vals);
    for (int j = 0; j < f->nparams; j++)
      r.vals[f->params[j].value->id] = r.funcs[i]->params[j].value;
    if (!(s = pto_ir_builder_body_begin(r.b, r.funcs[i])) && !(s = block(&r, &f->body)))
      s = pto_ir_builder_body_end(r.b);
    free(r.vals);
    r.vals = NULL;
  }
  if (!s) s = pto_ir_builder_finish(r.b, out);
  pto_ir_builder_destroy(r.b);
  free(r.funcs);
  for (int i = 0; !s && i < PTO_OP_COUNT; i++)
    built[i] += r.built[i];
  return s;
}

/* ---- the checks --------------------------------------------------------------------------- */

static int g_built[PTO_OP_COUNT];
static int g_nprograms;

/* build -> print equals parse -> print; the printed text parses back to itself; equal and
 * hash-equal programs; both pass or both fail the verifier. */
static void check_built(const char *what, const pto_ir_program *parsed, const char *t_parsed,
                        int minimal_types) {
  pto_ir_program *built = NULL, *reparsed = NULL;
  pto_status s = rebuild_program(parsed, minimal_types, g_built, &built);
  if (s) {
    print_error("%s: rebuilding in C (%s declared types): %s\n", what,
                minimal_types ? "minimal" : "all", pto_status_message(s));
    pto_status_free(s);
    fail();
  }
  char *t_built = NULL, *t_again = NULL;
  assert_pto_ok(pto_ir_print(built, &t_built));
  if (strcmp(t_parsed, t_built) != 0) {
    print_error("%s: the C-built program (%s declared types) prints\n%s\nthe parsed one\n%s\n",
                what, minimal_types ? "minimal" : "all", t_built, t_parsed);
    fail();
  }
  assert_pto_ok(pto_ir_parse_string(t_built, strlen(t_built), what, &reparsed));
  assert_pto_ok(pto_ir_print(reparsed, &t_again));
  assert_string_equal(t_again, t_built);
  if (!pto_ir_program_equal(parsed, built)) {
    print_error("%s: the C-built program is not equal to the parsed one\n", what);
    fail();
  }
  pto_ir_hash128 h1 = pto_ir_program_hash(parsed), h2 = pto_ir_program_hash(built);
  assert_true(h1.lo == h2.lo && h1.hi == h2.hi);
  pto_status v1 = pto_ir_verify(parsed), v2 = pto_ir_verify(built);
  assert_int_equal(v1 == PTO_OK, v2 == PTO_OK);
  pto_status_free(v1);
  pto_status_free(v2);
  pto_free(t_built);
  pto_free(t_again);
  pto_ir_program_destroy(built);
  pto_ir_program_destroy(reparsed);
}

/* The program text parsed, then built in C both ways. */
static void check_text(const char *what, const char *text, size_t len) {
  pto_ir_program *parsed = NULL;
  pto_status s = pto_ir_parse_string(text, len, what, &parsed);
  if (s) {
    print_error("%s: %s\n", what, pto_status_message(s));
    pto_status_free(s);
    fail();
  }
  char *t_parsed = NULL;
  assert_pto_ok(pto_ir_print(parsed, &t_parsed));
  check_built(what, parsed, t_parsed, 0);
  check_built(what, parsed, t_parsed, 1);
  pto_free(t_parsed);
  pto_ir_program_destroy(parsed);
  g_nprograms++;
}

static void check_dir(const char *dir, int recurse) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct dirent *de;
  char **names = NULL;
  size_t n = 0;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    names = realloc(names, (n + 1) * sizeof *names);
    names[n++] = pto_strdup_printf("%s/%s", dir, de->d_name);
  }
  closedir(d);
  for (size_t i = 0; i < n; i++) {
    size_t l = strlen(names[i]);
    if (l > 5 && strcmp(names[i] + l - 5, ".ptir") == 0) {
      size_t len = 0;
      char *text = tu_read_file(names[i], &len);
      assert_non_null(text);
      check_text(names[i], text, len);
      free(text);
    } else if (recurse) {
      DIR *sub = opendir(names[i]);
      if (sub) {
        closedir(sub);
        check_dir(names[i], 1);
      }
    }
    pto_free(names[i]);
  }
  free(names);
}

/* Ops no program of the repository uses, and the forms around them: a kernel with them all. */
static const char extra_ops[] =
    "program extra_ops\n"
    "dynamic R\n"
    "kernel @k(%x: tensor[R, 64] f32, out %y: tensor[R, 64] f32, %big: u64 = "
    "18446744073709551615,\n"
    "          %h: f16 = -1.5, %flag: bool = true, %n: i32 = runtime) -> (tensor[R, 64] f32) {\n"
    "  %t = tile.load(%x, [0, 0], [16, 64], valid=[R, 64], pad=max)\n"
    "  %a = tile.abs(%t)\n"
    "  %q = tile.sqrt(%a)\n"
    "  %m = tile.min(%q, %t)\n"
    "  %cm = tile.col_min(%m)\n"
    "  %cs = tile.col_expand_sub(%m, %cm)\n"
    "  %rs = tile.row_sum(%cs)\n"
    "  %ra = tile.row_expand_add(%cs, %rs)\n"
    "  %k: i32 = 3\n"
    "  %z = (%n + %k) * 2 - mod(%n, 4) / max(%k, 1)\n"
    "  %c = !(%z >= 0) || %flag && min(%z, 7) != 5\n"
    "  %o = if %c {\n"
    "    yield %ra\n"
    "  } else {\n"
    "    %g = tile.muls(%ra, f32(%z))\n"
    "    yield %g\n"
    "  }\n"
    "  %y1 = tile.store(%o, [0, 0], %y)\n"
    "  return %y1\n"
    "}\n";

static void test_every_program_rebuilds_in_c(void **state) {
  (void)state;
  check_dir(PTO_SOURCE_DIR "/examples", 1);
  check_dir(PTO_SOURCE_DIR "/tests/programs", 0);
  check_dir(PTO_SOURCE_DIR "/tests/corpus/good", 0);
  check_dir(PTO_SOURCE_DIR "/bench", 1);
  check_text("extra_ops", extra_ops, sizeof extra_ops - 1);
  assert_true(g_nprograms > 80);
}

/* Run after the sweep: every op of the table was built through pto_ir_builder_op. */
static void test_every_op_was_built(void **state) {
  (void)state;
  int missing = 0;
  for (int i = 0; i < PTO_OP_COUNT; i++) {
    if (g_built[i]) continue;
    const pto_op_info *info = pto_op_info_get((pto_opcode)i);
    print_error("op %s was never built through the C API\n", info ? info->name : "?");
    missing++;
  }
  assert_int_equal(missing, 0);
}

/* The C-built scale_rows (the example of docs/language.md) and the parsed one compile to the
 * same binary and give the same bits for the same arguments. */
static void run_scale_rows(const pto_ir_program *ir, float *y, uint64_t *hid) {
  enum { M = 77 };
  static float x[M * 128];
  for (int i = 0; i < M * 128; i++)
    x[i] = (float)(i % 19) - 9.0f;
  pto_program *prog = NULL;
  pto_worker *w = NULL;
  assert_pto_ok(pto_compile(ir, NULL, &prog));
  *hid = pto_program_hid(prog);
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.ncores = 2;
  assert_pto_ok(pto_worker_open(&cfg, &w));
  int64_t shape[2] = {M, 128};
  pto_host_tensor xh, yh;
  pto_host_tensor_init(&xh, x, PTO_DTYPE_F32, 2, shape);
  pto_host_tensor_init(&yh, y, PTO_DTYPE_F32, 2, shape);
  pto_arg args[4] = {pto_arg_host_readonly(&xh), pto_arg_host(&yh), pto_arg_f32(-1.5f),
                     pto_arg_i32(1)};
  assert_pto_ok(pto_worker_run(w, prog, args, 4));
  pto_worker_close(w);
  pto_program_release(prog);
}

static void test_c_built_program_runs_alike(void **state) {
  (void)state;
  pto_ir_program *parsed = NULL, *built = NULL;
  assert_pto_ok(pto_ir_parse_file(PTO_SOURCE_DIR "/examples/scale_rows.ptir", &parsed));
  int built_ops[PTO_OP_COUNT] = {0};
  assert_pto_ok(rebuild_program(parsed, 1, built_ops, &built));
  static float y1[77 * 128], y2[77 * 128];
  uint64_t h1 = 0, h2 = 0;
  run_scale_rows(parsed, y1, &h1);
  run_scale_rows(built, y2, &h2);
  assert_int_equal(h1, h2);
  assert_memory_equal(y1, y2, sizeof y1);
  assert_true(y1[1] == 1.5f * 8.0f); /* x = -8, times -1.5, relu */
  assert_true(y1[0] == 13.5f);       /* x = -9 */
  pto_ir_program_destroy(parsed);
  pto_ir_program_destroy(built);
}

/* ---- a float literal built with a NaN payload ----------------------------------------------- */

static pto_ir_expr *int_lit(pto_ir_builder *b, int64_t v) {
  pto_ir_expr *e = NULL;
  assert_pto_ok(pto_ir_builder_int(b, v, &e));
  return e;
}

static pto_ir_expr *use_of(pto_ir_builder *b, pto_ir_value *v) {
  pto_ir_expr *e = NULL;
  assert_pto_ok(pto_ir_builder_use(b, v, &e));
  return e;
}

static const pto_ir_type *t16x64(pto_ir_builder *b) {
  pto_ir_expr *dims[2] = {int_lit(b, 16), int_lit(b, 64)};
  const pto_ir_type *t = NULL;
  assert_pto_ok(pto_ir_builder_tensor_type(b, PTO_DTYPE_F32, 2, dims, &t));
  return t;
}

/* y = x + c in one kernel, c the literal nan_bits: in the kernel's tile.adds (in_orch 0), or the
 * default of the orch's f32 parameter %c, a specialized scalar of the signature (in_orch 1). */
static pto_ir_program *build_nan_add(uint64_t nan_bits, int in_orch) {
  double v;
  memcpy(&v, &nan_bits, sizeof v);
  pto_ir_builder *b = NULL;
  assert_pto_ok(pto_ir_builder_create("nan_add", NULL, &b));
  const pto_ir_type *f32 = NULL;
  assert_pto_ok(pto_ir_builder_scalar_type(b, PTO_DTYPE_F32, &f32));
  pto_ir_func *k = NULL, *o = NULL;
  pto_ir_value *kx, *ky, *kc = NULL, *ox, *oy, *oc = NULL;
  assert_pto_ok(pto_ir_builder_func_begin(b, PTO_FUNC_KERNEL, "k", &k));
  assert_pto_ok(pto_ir_builder_param(b, "x", t16x64(b), PTO_DIR_IN, 0, PTO_BIND_NONE, NULL, &kx));
  assert_pto_ok(pto_ir_builder_param(b, "y", t16x64(b), PTO_DIR_OUT, 1, PTO_BIND_NONE, NULL, &ky));
  if (in_orch)
    assert_pto_ok(pto_ir_builder_param(b, "c", f32, PTO_DIR_IN, 0, PTO_BIND_NONE, NULL, &kc));
  const pto_ir_type *ret = t16x64(b);
  assert_pto_ok(pto_ir_builder_func_rets(b, &ret, 1));
  assert_pto_ok(pto_ir_builder_header_end(b));
  assert_pto_ok(pto_ir_builder_func_begin(b, PTO_FUNC_ORCH, "main", &o));
  assert_pto_ok(pto_ir_builder_param(b, "x", t16x64(b), PTO_DIR_IN, 0, PTO_BIND_NONE, NULL, &ox));
  assert_pto_ok(pto_ir_builder_param(b, "y", t16x64(b), PTO_DIR_OUT, 1, PTO_BIND_NONE, NULL, &oy));
  if (in_orch) {
    pto_ir_expr *lit = NULL;
    assert_pto_ok(pto_ir_builder_float(b, v, &lit));
    assert_pto_ok(pto_ir_builder_param(b, "c", f32, PTO_DIR_IN, 0, PTO_BIND_LITERAL, lit, &oc));
  }
  ret = t16x64(b);
  assert_pto_ok(pto_ir_builder_func_rets(b, &ret, 1));
  assert_pto_ok(pto_ir_builder_header_end(b));

  assert_pto_ok(pto_ir_builder_body_begin(b, k));
  pto_ir_stmt *s = NULL;
  pto_ir_expr *offs[2] = {int_lit(b, 0), int_lit(b, 0)},
              *shape[2] = {int_lit(b, 16), int_lit(b, 64)};
  pto_ir_arg la[3] = {{.kind = PTO_ARG_EXPR, .expr = use_of(b, kx)},
                      {.kind = PTO_ARG_LIST, .list = {offs, 2}},
                      {.kind = PTO_ARG_LIST, .list = {shape, 2}}};
  pto_ir_result r = {"t", NULL, {0, 0}};
  assert_pto_ok(pto_ir_builder_op(b, PTO_OP_TILE_LOAD, la, 3, &r, 1, &s));
  pto_ir_expr *c = NULL;
  if (in_orch)
    c = use_of(b, kc);
  else
    assert_pto_ok(pto_ir_builder_float(b, v, &c));
  pto_ir_arg aa[2] = {{.kind = PTO_ARG_EXPR, .expr = use_of(b, s->results[0])},
                      {.kind = PTO_ARG_EXPR, .expr = c}};
  r.name = "s";
  assert_pto_ok(pto_ir_builder_op(b, PTO_OP_TILE_ADDS, aa, 2, &r, 1, &s));
  pto_ir_expr *soffs[2] = {int_lit(b, 0), int_lit(b, 0)};
  pto_ir_arg sa[3] = {{.kind = PTO_ARG_EXPR, .expr = use_of(b, s->results[0])},
                      {.kind = PTO_ARG_LIST, .list = {soffs, 2}},
                      {.kind = PTO_ARG_EXPR, .expr = use_of(b, ky)}};
  r.name = "y1";
  assert_pto_ok(pto_ir_builder_op(b, PTO_OP_TILE_STORE, sa, 3, &r, 1, &s));
  pto_ir_expr *rv = use_of(b, s->results[0]);
  assert_pto_ok(pto_ir_builder_return(b, &rv, 1));
  assert_pto_ok(pto_ir_builder_body_end(b));

  assert_pto_ok(pto_ir_builder_body_begin(b, o));
  pto_ir_expr *cargs[3] = {use_of(b, ox), use_of(b, oy), in_orch ? use_of(b, oc) : NULL};
  assert_pto_ok(pto_ir_builder_call(b, k, cargs, in_orch ? 3 : 2, NULL, NULL, 0, NULL));
  rv = use_of(b, oy);
  assert_pto_ok(pto_ir_builder_return(b, &rv, 1));
  assert_pto_ok(pto_ir_builder_body_end(b));
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_builder_finish(b, &p));
  pto_ir_builder_destroy(b);
  return p;
}

/* Every element of y has the f32 bits want. */
static void expect_bits(const float *y, int n, uint32_t want, const char *how, const char *what) {
  for (int i = 0; i < n; i++) {
    uint32_t got;
    memcpy(&got, &y[i], sizeof got);
    if (got != want) fail_msg("%s, %s: y[%d] is 0x%08x, expected 0x%08x", what, how, i, got, want);
  }
}

/* A NaN literal is the quiet NaN of its sign, as -D and --in read one (docs/c-api.md): PTIR's
 * text and a work dir's manifest have no way to write a payload, so one the builder kept made a
 * program whose printed text parsed to another program (another hash and cache key), and a
 * specialized parameter's payload made its work dir unloadable. Built, printed and parsed back,
 * compiled and interpreted, the constant has the same bits: 0x7fc00000 or 0xffc00000. */
static void test_c_built_nan_payload_is_the_quiet_nan_of_its_sign(void **state) {
  (void)state;
  static const uint64_t nans[] = {UINT64_C(0x7ff8000000000123), UINT64_C(0xfff4000000000001),
                                  UINT64_C(0x7ff0000020000000), UINT64_C(0xfff8000000000000)};
  for (size_t i = 0; i < sizeof nans / sizeof *nans; i++) {
    for (int in_orch = 0; in_orch < 2; in_orch++) {
      uint32_t want = nans[i] >> 63 ? UINT32_C(0xffc00000) : UINT32_C(0x7fc00000);
      char what[96];
      snprintf(what, sizeof what, "0x%016llx in %s", (unsigned long long)nans[i],
               in_orch ? "the orch's %c default" : "the kernel's tile.adds");
      pto_ir_program *built = build_nan_add(nans[i], in_orch), *parsed = NULL;
      char *text = NULL, *again = NULL;
      assert_pto_ok(pto_ir_print(built, &text));
      assert_non_null(strstr(text, nans[i] >> 63 ? "-nan" : "nan"));
      assert_pto_ok(pto_ir_parse_string(text, strlen(text), "<printed>", &parsed));
      assert_pto_ok(pto_ir_print(parsed, &again));
      assert_string_equal(text, again);
      if (!pto_ir_program_equal(built, parsed))
        fail_msg("%s: printed and parsed, another program", what);
      pto_ir_hash128 h1 = pto_ir_program_hash(built), h2 = pto_ir_program_hash(parsed);
      assert_memory_equal(&h1, &h2, sizeof h1);

      enum { N = 16 * 64 };
      static float x[N], y[N];
      for (int j = 0; j < N; j++)
        x[j] = (float)j;
      int64_t shape[2] = {16, 64};
      /* interpreted */
      memset(y, 0, sizeof y);
      double nan_of_sign = nans[i] >> 63 ? -(double)NAN : (double)NAN;
      pto_scalar c = {.dtype = PTO_DTYPE_F32, .f = nan_of_sign}; /* the specialized %c's place */
      pto_ir_interp_arg ia[3];
      memset(ia, 0, sizeof ia);
      ia[0].is_tensor = ia[1].is_tensor = 1;
      pto_host_tensor_init(&ia[0].tensor, x, PTO_DTYPE_F32, 2, shape);
      pto_host_tensor_init(&ia[1].tensor, y, PTO_DTYPE_F32, 2, shape);
      ia[2].scalar = c;
      assert_pto_ok(
          pto_ir_interp_run(built, pto_ir_program_find_func(built, "main"), ia, 2 + in_orch));
      expect_bits(y, N, want, "interpreted", what);
      /* compiled, from the built and the parsed program: one binary */
      pto_program *pb = NULL, *pp = NULL;
      assert_pto_ok(pto_compile(built, NULL, &pb));
      assert_pto_ok(pto_compile(parsed, NULL, &pp));
      assert_int_equal(pto_program_hid(pb), pto_program_hid(pp));
      pto_run_config cfg;
      pto_run_config_init(&cfg);
      cfg.ncores = 1;
      pto_worker *w = NULL;
      assert_pto_ok(pto_worker_open(&cfg, &w));
      pto_host_tensor xh, yh;
      pto_host_tensor_init(&xh, x, PTO_DTYPE_F32, 2, shape);
      pto_host_tensor_init(&yh, y, PTO_DTYPE_F32, 2, shape);
      pto_arg args[3] = {pto_arg_host_readonly(&xh), pto_arg_host(&yh), pto_arg_scalar(c)};
      memset(y, 0, sizeof y);
      assert_pto_ok(pto_worker_run(w, pb, args, 2 + in_orch));
      expect_bits(y, N, want, "compiled", what);
      pto_worker_close(w);
      pto_program_release(pb);
      pto_program_release(pp);
      free(text);
      free(again);
      pto_ir_program_destroy(built);
      pto_ir_program_destroy(parsed);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_program_rebuilds_in_c),
      cmocka_unit_test(test_every_op_was_built),
      cmocka_unit_test(test_c_built_program_runs_alike),
      cmocka_unit_test(test_c_built_nan_payload_is_the_quiet_nan_of_its_sign),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
