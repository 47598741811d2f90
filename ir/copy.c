/* Copying IR through a builder. Every copied node is re-created by the same builder calls that
 * made it (source result types passed as declared types), so a copy re-runs every check: the
 * verifier uses a full copy to re-check programs assembled or edited through the C API, and
 * passes use the pieces to build new programs from old ones. */
#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"

#define TRY(expr)                                                                                  \
  do {                                                                                             \
    pto_status s__ = (expr);                                                                       \
    if (s__) return s__;                                                                           \
  } while (0)

pto_status pto_ir_value_map_init(pto_ir_value_map *m, int n) {
  if (!m) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_value_map_init: m is NULL");
  memset(m, 0, sizeof *m);
  if (n < 0) n = 0;
  m->values = pto_calloc((size_t)n + 1, sizeof *m->values);
  m->exprs = pto_calloc((size_t)n + 1, sizeof *m->exprs);
  if (!m->values || !m->exprs) {
    pto_ir_value_map_clear(m);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory making a value map");
  }
  m->n = n;
  return PTO_OK;
}

void pto_ir_value_map_clear(pto_ir_value_map *m) {
  if (!m) return;
  free(m->values);
  free((void *)m->exprs);
  memset(m, 0, sizeof *m);
}

static void map_value(pto_ir_value_map *m, const pto_ir_value *from, pto_ir_value *to) {
  if (m && from && from->id >= 0 && from->id < m->n) m->values[from->id] = to;
}

static pto_status sym_of(pto_ir_builder *b, const pto_ir_program *src, int sym, int *out) {
  if (!src || sym < 0 || sym >= src->nsyms)
    return pto_ir_builder_fail(b, "copy: a symbol index out of range");
  const char *name = src->syms[sym];
  int i = pto_ir_builder_find_sym(b, name, strlen(name));
  if (i >= 0) {
    *out = i;
    return PTO_OK;
  }
  return pto_ir_builder_dynamic(b, name, out);
}

/* m == NULL: e already belongs to the program being built; its values are used as they are. */
static pto_status clone_expr(pto_ir_builder *b, const pto_ir_program *src, const pto_ir_expr *e,
                             pto_ir_value_map *m, pto_ir_expr **out) {
  if (!e) return pto_ir_builder_fail(b, "copy: a missing expression");
  pto_ir_builder_set_loc(b, e->loc);
  pto_ir_expr *a, *c;
  switch (e->kind) {
  case PTO_EXPR_INT: /* a u64 literal above INT64_MAX stays one */
    if (e->dtype == PTO_DTYPE_U64) return pto_ir_builder_uint(b, (uint64_t)e->i, out);
    return pto_ir_builder_int(b, e->i, out);
  case PTO_EXPR_FLOAT: return pto_ir_builder_float(b, e->f, out);
  case PTO_EXPR_BOOL: return pto_ir_builder_bool(b, e->b, out);
  case PTO_EXPR_VALUE: {
    const pto_ir_value *v = e->value;
    if (!v) return pto_ir_builder_fail(b, "copy: a use of a NULL value");
    if (!m) return pto_ir_builder_use(b, (pto_ir_value *)v, out);
    if (v->id < 0 || v->id >= m->n)
      return pto_ir_builder_fail(b, "%%%s: value id %d is outside its function's %d values",
                                 v->name, v->id, m->n);
    if (m->values[v->id]) return pto_ir_builder_use(b, m->values[v->id], out);
    if (m->exprs[v->id]) return clone_expr(b, NULL, m->exprs[v->id], NULL, out);
    return pto_ir_builder_fail(b, "%%%s is used before its definition", v->name);
  }
  case PTO_EXPR_SYM: {
    int sym = e->sym;
    if (m || src) TRY(sym_of(b, src, e->sym, &sym));
    pto_ir_builder_set_loc(b, e->loc);
    return pto_ir_builder_sym(b, sym, out);
  }
  case PTO_EXPR_UNARY:
    TRY(clone_expr(b, src, e->a, m, &a));
    pto_ir_builder_set_loc(b, e->loc);
    return pto_ir_builder_unary(b, e->op, a, out);
  case PTO_EXPR_CAST:
    TRY(clone_expr(b, src, e->a, m, &a));
    pto_ir_builder_set_loc(b, e->loc);
    return pto_ir_builder_cast(b, e->dtype, a, out);
  case PTO_EXPR_BINARY:
    TRY(clone_expr(b, src, e->lhs, m, &a));
    TRY(clone_expr(b, src, e->rhs, m, &c));
    pto_ir_builder_set_loc(b, e->loc);
    TRY(pto_ir_builder_binary(b, e->op, a, c, out));
    (*out)->at_launch = e->at_launch; /* a clamped static slice's extent stays dynamic */
    return PTO_OK;
  }
  return pto_ir_builder_fail(b, "copy: an expression of unknown kind");
}

pto_status pto_ir_builder_copy_expr(pto_ir_builder *b, const pto_ir_program *src,
                                    const pto_ir_expr *e, pto_ir_value_map *m,
                                    pto_ir_expr **out_expr) {
  if (!b)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_copy_expr: b is NULL");
  if (!out_expr)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_builder_copy_expr: out_expr is NULL");
  return clone_expr(b, src, e, m, out_expr);
}

pto_status pto_ir_builder_copy_type(pto_ir_builder *b, const pto_ir_program *src,
                                    const pto_ir_type *t, pto_ir_value_map *m,
                                    const pto_ir_type **out_type) {
  if (!b)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_copy_type: b is NULL");
  if (!out_type)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_builder_copy_type: out_type is NULL");
  if (!t) return pto_ir_builder_fail(b, "copy: a missing type");
  if (t->rank > PTO_MAX_RANK) return pto_ir_builder_fail(b, "copy: a type of rank %d", t->rank);
  pto_ir_expr *dims[PTO_MAX_RANK], *valid[PTO_MAX_RANK];
  for (int i = 0; i < t->rank; i++)
    TRY(clone_expr(b, src, t->dims[i], m, &dims[i]));
  switch (t->kind) {
  case PTO_TYPE_SCALAR: return pto_ir_builder_scalar_type(b, t->dtype, out_type);
  case PTO_TYPE_TENSOR: return pto_ir_builder_tensor_type(b, t->dtype, t->rank, dims, out_type);
  case PTO_TYPE_DTENSOR: return pto_ir_builder_dtensor_type(b, t->dtype, t->rank, dims, out_type);
  case PTO_TYPE_TILE:
    for (int i = 0; t->has_valid && i < t->rank; i++)
      TRY(clone_expr(b, src, t->valid[i], m, &valid[i]));
    return pto_ir_builder_tile_type(b, t->dtype, t->rank, dims, t->space,
                                    t->has_valid ? t->rank : 0, valid, out_type);
  }
  return pto_ir_builder_fail(b, "copy: a type of unknown kind");
}

/* Results of s as declared results of the copy: same names, the source types. */
static pto_status copy_results(pto_ir_builder *b, const pto_ir_program *src,
                               pto_ir_value *const *vals, int n, pto_ir_value_map *m,
                               pto_ir_result **out) {
  *out = NULL;
  if (n <= 0) return PTO_OK;
  pto_ir_result *r = pto_calloc((size_t)n, sizeof *r);
  if (!r) return pto__ir_builder_oom(b);
  for (int i = 0; i < n; i++) {
    const pto_ir_value *v = vals[i];
    if (!v) {
      free(r);
      return pto_ir_builder_fail(b, "copy: a missing result value");
    }
    r[i].name = v->name;
    r[i].loc = v->loc;
    /* A type derived from an unshaped tensor is deduced again: specialization gives that tensor
     * its sample shape, so the copy's type is the shaped one. */
    if (v->type->kind != PTO_TYPE_SCALAR && v->type->kind != PTO_TYPE_TILE && v->type->rank < 0)
      continue;
    pto_status s = pto_ir_builder_copy_type(b, src, v->type, m, &r[i].type);
    if (s) {
      free(r);
      return s;
    }
  }
  *out = r;
  return PTO_OK;
}

static pto_status copy_exprs(pto_ir_builder *b, const pto_ir_program *src, pto_ir_expr *const *in,
                             int n, pto_ir_value_map *m, pto_ir_expr ***out) {
  *out = NULL;
  if (n <= 0) return PTO_OK;
  pto_ir_expr **v = pto_calloc((size_t)n, sizeof *v);
  if (!v) return pto__ir_builder_oom(b);
  for (int i = 0; i < n; i++) {
    pto_status s = clone_expr(b, src, in[i], m, &v[i]);
    if (s) {
      free(v);
      return s;
    }
  }
  *out = v;
  return PTO_OK;
}

static pto_status copy_op(pto_ir_builder *b, const pto_ir_program *src, const pto_ir_stmt *s,
                          pto_ir_value_map *m) {
  int n = s->op.nargs;
  pto_ir_arg *args = pto_calloc((size_t)(n > 0 ? n : 1), sizeof *args);
  pto_ir_expr **items = NULL;
  int nitems = 0;
  for (int i = 0; i < n; i++)
    if (s->op.args[i].kind == PTO_ARG_LIST) nitems += s->op.args[i].list.n;
  items = pto_calloc((size_t)(nitems > 0 ? nitems : 1), sizeof *items);
  pto_ir_result *rs = NULL;
  pto_status st = PTO_OK;
  if (!args || !items) st = pto__ir_builder_oom(b);
  int k = 0;
  for (int i = 0; !st && i < n; i++) {
    const pto_ir_arg *a = &s->op.args[i];
    args[i] = *a;
    if (a->kind == PTO_ARG_EXPR) {
      st = clone_expr(b, src, a->expr, m, &args[i].expr);
    } else if (a->kind == PTO_ARG_LIST) {
      args[i].list.items = items + k;
      for (int j = 0; !st && j < a->list.n; j++)
        st = clone_expr(b, src, a->list.items[j], m, &items[k++]);
    }
  }
  if (!st) st = copy_results(b, src, s->results, s->nresults, m, &rs);
  pto_ir_stmt *ns = NULL;
  if (!st) {
    pto_ir_builder_set_loc(b, s->loc);
    st = pto_ir_builder_op(b, s->op.opc, args, n, rs, s->nresults, &ns);
  }
  for (int i = 0; !st && i < s->nresults; i++)
    map_value(m, s->results[i], ns->results[i]);
  free(rs);
  free(items);
  free(args);
  return st;
}

static pto_status copy_call(pto_ir_builder *b, const pto_ir_program *src, const pto_ir_stmt *s,
                            pto_ir_value_map *m) {
  if (!s->call.callee) return pto_ir_builder_fail(b, "copy: a call without a callee");
  pto_ir_func *callee = pto__ir_builder_find_func(b, s->call.callee->name);
  pto_ir_builder_set_loc(b, s->loc);
  if (!callee) return pto_ir_builder_fail(b, "unknown function @%s", s->call.callee->name);
  pto_ir_expr **args = NULL, *device = NULL;
  pto_ir_result *rs = NULL;
  pto_status st = copy_exprs(b, src, s->call.args, s->call.nargs, m, &args);
  if (!st && s->call.device) st = clone_expr(b, src, s->call.device, m, &device);
  if (!st) st = copy_results(b, src, s->results, s->nresults, m, &rs);
  pto_ir_stmt *ns = NULL;
  if (!st) {
    pto_ir_builder_set_loc(b, s->loc);
    st = pto_ir_builder_call(b, callee, args, s->call.nargs, device, rs, s->nresults, &ns);
  }
  for (int i = 0; !st && i < s->nresults; i++)
    map_value(m, s->results[i], ns->results[i]);
  free(rs);
  free(args);
  return st;
}

static pto_status copy_for(pto_ir_builder *b, const pto_ir_program *src, const pto_ir_stmt *s,
                           pto_ir_value_map *m) {
  pto_ir_expr *lo, *hi, *step = NULL, **inits = NULL;
  pto_ir_result *iters = NULL, *rs = NULL;
  if (!s->loop.iv) return pto_ir_builder_fail(b, "copy: a for without a loop variable");
  TRY(clone_expr(b, src, s->loop.lo, m, &lo));
  TRY(clone_expr(b, src, s->loop.hi, m, &hi));
  if (s->loop.step) TRY(clone_expr(b, src, s->loop.step, m, &step));
  pto_status st = copy_exprs(b, src, s->loop.inits, s->loop.niters, m, &inits);
  if (!st) st = copy_results(b, src, s->loop.iters, s->loop.niters, m, &iters);
  if (!st) st = copy_results(b, src, s->results, s->nresults, m, &rs);
  pto_ir_stmt *ns = NULL;
  if (!st) {
    pto_ir_builder_set_loc(b, s->loc);
    st = pto_ir_builder_for_begin(b, s->loop.iv->name, s->loop.parallel, lo, hi, step, iters, inits,
                                  s->loop.niters, rs, s->nresults, &ns);
  }
  free(inits);
  free(iters);
  free(rs);
  TRY(st);
  map_value(m, s->loop.iv, ns->loop.iv);
  for (int i = 0; i < s->loop.niters; i++)
    map_value(m, s->loop.iters[i], ns->loop.iters[i]);
  TRY(pto_ir_builder_copy_block(b, src, &s->loop.body, m));
  pto_ir_builder_set_loc(b, s->loc);
  TRY(pto_ir_builder_for_end(b));
  for (int i = 0; i < s->nresults; i++)
    map_value(m, s->results[i], ns->results[i]);
  return PTO_OK;
}

static pto_status copy_if(pto_ir_builder *b, const pto_ir_program *src, const pto_ir_stmt *s,
                          pto_ir_value_map *m) {
  pto_ir_expr *cond;
  TRY(clone_expr(b, src, s->branch.cond, m, &cond));
  pto_ir_result *rs = NULL;
  TRY(copy_results(b, src, s->results, s->nresults, m, &rs));
  pto_ir_stmt *ns = NULL;
  pto_ir_builder_set_loc(b, s->loc);
  pto_status st = pto_ir_builder_if_begin(b, cond, rs, s->nresults, &ns);
  free(rs);
  TRY(st);
  TRY(pto_ir_builder_copy_block(b, src, &s->branch.then_body, m));
  if (s->branch.has_else) {
    pto_ir_builder_set_loc(b, s->loc);
    TRY(pto_ir_builder_else(b));
    TRY(pto_ir_builder_copy_block(b, src, &s->branch.else_body, m));
  }
  pto_ir_builder_set_loc(b, s->loc);
  TRY(pto_ir_builder_if_end(b));
  for (int i = 0; i < s->nresults; i++)
    map_value(m, s->results[i], ns->results[i]);
  return PTO_OK;
}

pto_status pto_ir_builder_copy_stmt(pto_ir_builder *b, const pto_ir_program *src,
                                    const pto_ir_stmt *s, pto_ir_value_map *m) {
  if (!s) return pto_ir_builder_fail(b, "copy: a missing statement");
  pto_ir_builder_set_loc(b, s->loc);
  switch (s->kind) {
  case PTO_STMT_ASSIGN: {
    if (s->nresults != 1)
      return pto_ir_builder_fail(b, "an assignment names one result, not %d", s->nresults);
    pto_ir_expr *e;
    TRY(clone_expr(b, src, s->expr, m, &e));
    pto_ir_result *rs;
    TRY(copy_results(b, src, s->results, 1, m, &rs));
    pto_ir_value *v;
    pto_ir_builder_set_loc(b, s->loc);
    pto_status st = pto_ir_builder_assign(b, rs, e, &v);
    free(rs);
    TRY(st);
    map_value(m, s->results[0], v);
    return PTO_OK;
  }
  case PTO_STMT_OP: return copy_op(b, src, s, m);
  case PTO_STMT_CALL: return copy_call(b, src, s, m);
  case PTO_STMT_FOR: return copy_for(b, src, s, m);
  case PTO_STMT_IF: return copy_if(b, src, s, m);
  case PTO_STMT_INCORE:
    TRY(pto_ir_builder_incore_begin(b, s->incore.name, NULL));
    TRY(pto_ir_builder_copy_block(b, src, &s->incore.body, m));
    pto_ir_builder_set_loc(b, s->loc);
    return pto_ir_builder_incore_end(b);
  case PTO_STMT_YIELD:
  case PTO_STMT_RETURN: {
    pto_ir_expr **vals = NULL;
    TRY(copy_exprs(b, src, s->ret.vals, s->ret.n, m, &vals));
    pto_ir_builder_set_loc(b, s->loc);
    pto_status st = s->kind == PTO_STMT_YIELD ? pto_ir_builder_yield(b, vals, s->ret.n)
                                              : pto_ir_builder_return(b, vals, s->ret.n);
    free(vals);
    return st;
  }
  }
  return pto_ir_builder_fail(b, "copy: a statement of unknown kind");
}

pto_status pto_ir_builder_copy_block(pto_ir_builder *b, const pto_ir_program *src,
                                     const pto_ir_block *blk, pto_ir_value_map *m) {
  if (!blk)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_copy_block: blk is NULL");
  if (!b)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_copy_block: b is NULL");
  for (int i = 0; i < blk->n; i++)
    TRY(pto_ir_builder_copy_stmt(b, src, blk->stmts[i], m));
  return PTO_OK;
}

pto_status pto_ir_builder_copy_func_header(pto_ir_builder *b, const pto_ir_program *src,
                                           const pto_ir_func *f, pto_ir_func **out_func) {
  if (!b)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_builder_copy_func_header: b is NULL");
  if (!src)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_builder_copy_func_header: src is NULL");
  if (!f)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_builder_copy_func_header: f is NULL");
  if (!out_func)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_builder_copy_func_header: out_func is NULL");
  pto_ir_builder_set_loc(b, f->loc);
  TRY(pto_ir_builder_func_begin(b, f->kind, f->name, out_func));
  TRY(pto__ir_builder_kernel_entry(b, *out_func, f->kernel_entry));
  for (int i = 0; i < f->nparams; i++) {
    const pto_ir_param *pa = &f->params[i];
    if (!pa->value) return pto_ir_builder_fail(b, "copy: a parameter without a value");
    const pto_ir_type *t;
    TRY(pto_ir_builder_copy_type(b, src, pa->value->type, NULL, &t));
    pto_ir_expr *lit = NULL;
    if (pa->bind == PTO_BIND_LITERAL) TRY(clone_expr(b, src, pa->literal, NULL, &lit));
    pto_ir_builder_set_loc(b, pa->value->loc);
    TRY(pto_ir_builder_param(b, pa->value->name, t, pa->dir, pa->dir_written, pa->bind, lit, NULL));
  }
  if (f->nrets > 0) {
    const pto_ir_type **rets = pto_calloc((size_t)f->nrets, sizeof *rets);
    if (!rets) return pto__ir_builder_oom(b);
    pto_status st = PTO_OK;
    for (int i = 0; !st && i < f->nrets; i++)
      st = pto_ir_builder_copy_type(b, src, f->rets[i], NULL, &rets[i]);
    pto_ir_builder_set_loc(b, f->loc);
    if (!st) st = pto_ir_builder_func_rets(b, rets, f->nrets);
    free(rets);
    TRY(st);
  }
  pto_ir_builder_set_loc(b, f->loc);
  return pto_ir_builder_header_end(b);
}

pto_status pto_ir_builder_copy_func_body(pto_ir_builder *b, const pto_ir_program *src,
                                         const pto_ir_func *f, pto_ir_func *dst) {
  if (!b)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_copy_func_body: b is NULL");
  if (!src)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_builder_copy_func_body: src is NULL");
  if (!f)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_copy_func_body: f is NULL");
  if (!dst)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_builder_copy_func_body: dst is NULL");
  pto_ir_builder_set_loc(b, f->loc);
  if (dst->nparams != f->nparams)
    return pto_ir_builder_fail(b, "copy of @%s: %d parameters for %d", f->name, dst->nparams,
                               f->nparams);
  int n = f->nvalues > f->nparams ? f->nvalues : f->nparams;
  pto_ir_value_map m;
  pto_status st = pto_ir_value_map_init(&m, n);
  if (st) return st;
  for (int i = 0; i < f->nparams; i++)
    map_value(&m, f->params[i].value, dst->params[i].value);
  st = pto_ir_builder_body_begin(b, dst);
  if (!st) st = pto_ir_builder_copy_block(b, src, &f->body, &m);
  if (!st) {
    const pto_ir_block *body = &f->body;
    pto_ir_builder_set_loc(b, body->n ? body->stmts[body->n - 1]->loc : f->loc);
    st = pto_ir_builder_body_end(b);
  }
  pto_ir_value_map_clear(&m);
  return st;
}

pto_status pto_ir_program_copy(const pto_ir_program *src, pto_ir_program **out_program) {
  if (!src) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_program_copy: src is NULL");
  if (!out_program)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_program_copy: out_program is NULL");
  *out_program = NULL;
  pto_ir_builder *b;
  TRY(pto_ir_builder_create(src->name, src->file, &b));
  pto_status st = PTO_OK;
  for (int i = 0; !st && i < src->nsyms; i++)
    st = pto_ir_builder_dynamic(b, src->syms[i], NULL);
  pto_ir_func **dst = pto_calloc((size_t)src->nfuncs + 1, sizeof *dst);
  if (!dst && !st) st = pto__ir_builder_oom(b);
  for (int i = 0; !st && i < src->nfuncs; i++)
    st = pto_ir_builder_copy_func_header(b, src, src->funcs[i], &dst[i]);
  for (int i = 0; !st && i < src->nfuncs; i++)
    st = pto_ir_builder_copy_func_body(b, src, src->funcs[i], dst[i]);
  if (!st) st = pto_ir_builder_finish(b, out_program);
  free(dst);
  pto_ir_builder_destroy(b);
  return st;
}
