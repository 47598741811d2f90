/* Outlining incore scopes (docs/language.md "Functions and parameters").
 *
 * Each `incore ["name"] { ... }` of an orch becomes a kernel whose parameters are the tensors
 * and scalars the scope uses from outside, in order of first use: a tensor only stored to is
 * `out`, one read and written `inout`, one only read (or only asked for its dims) `in`. The scope
 * is replaced by a call of that kernel, so the runtime orders it like any other task.
 *
 * A captured tensor's dims keep their static extents and dynamic symbols; an extent that is an
 * expression of orch values (a clamped tensor.slice) becomes a fresh dynamic symbol of the
 * kernel, bound from the argument at each call, as every kernel dim is. The new program is built
 * through the builder's copy helpers, so every check runs again on it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_internal.h"
#include "pto/ir_builder.h"

typedef struct capture {
  const pto_ir_value *v;
  int read, written;
} capture;

typedef struct scope {
  const pto_ir_stmt *stmt;
  const pto_ir_func *orch;
  char name[128];
  capture *caps;
  int ncaps, cap_cap;
  pto_ir_func *kernel;
} scope;

typedef struct outliner {
  const pto_ir_program *src;
  pto_ir_builder *b;
  scope *scopes;
  int nscopes, cap;
  unsigned char *inside; /* per value id of the orch being scanned: defined inside the scope */
  unsigned char *syms;   /* per dynamic symbol: used by the scope being scanned */
  pto_status err;
} outliner;

static pto_status oom(void) {
  return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory outlining incore scopes");
}

/* ---- finding scopes and what they capture ---------------------------------------------- */

static int add_capture(scope *sc, const pto_ir_value *v, int read, int written) {
  for (int i = 0; i < sc->ncaps; i++)
    if (sc->caps[i].v == v) {
      sc->caps[i].read |= read;
      sc->caps[i].written |= written;
      return 0;
    }
  if (pto_grow_int(&sc->caps, sizeof *sc->caps, &sc->cap_cap, sc->ncaps + 1)) return -1;
  sc->caps[sc->ncaps++] = (capture){v, read, written};
  return 0;
}

/* Records the uses of outside values in e; read/written say how the value is used. */
static int scan_expr(outliner *o, scope *sc, const pto_ir_expr *e, int read, int written) {
  if (!e) return 0;
  switch (e->kind) {
  case PTO_EXPR_VALUE:
    if (o->inside[e->value->id]) return 0;
    return add_capture(sc, e->value, read, written);
  case PTO_EXPR_SYM:
    if (e->sym >= 0 && e->sym < o->src->nsyms) o->syms[e->sym] = 1;
    return 0;
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: return scan_expr(o, sc, e->a, 1, 0);
  case PTO_EXPR_BINARY: return scan_expr(o, sc, e->lhs, 1, 0) || scan_expr(o, sc, e->rhs, 1, 0);
  default: return 0;
  }
}

static void mark_inside(outliner *o, pto_ir_value *const *vals, int n) {
  for (int i = 0; i < n; i++)
    o->inside[vals[i]->id] = 1;
}

static int scan_block(outliner *o, scope *sc, const pto_ir_block *blk);

static int scan_stmt(outliner *o, scope *sc, const pto_ir_stmt *s) {
  int r = 0;
  switch (s->kind) {
  case PTO_STMT_ASSIGN: r = scan_expr(o, sc, s->expr, 1, 0); break;
  case PTO_STMT_OP: {
    const pto_op_info *info = pto_op_info_get(s->op.opc);
    int pos = 0;
    for (int i = 0; i < s->op.nargs && !r; i++) {
      const pto_ir_arg *a = &s->op.args[i];
      int is_pos = a->kw == NULL;
      int written = is_pos && info && (info->write_mask >> pos & 1u);
      /* tensor.dim asks for a dim: the data is neither read nor written. */
      int read = !written && !(s->op.opc == PTO_OP_TENSOR_DIM && is_pos && pos == 0);
      if (a->kind == PTO_ARG_EXPR)
        r = scan_expr(o, sc, a->expr, read, written);
      else if (a->kind == PTO_ARG_LIST)
        for (int k = 0; k < a->list.n && !r; k++)
          r = scan_expr(o, sc, a->list.items[k], 1, 0);
      if (is_pos) pos++;
    }
    break;
  }
  case PTO_STMT_CALL:
    for (int i = 0; i < s->call.nargs && !r; i++)
      r = scan_expr(o, sc, s->call.args[i], 1, 0);
    break;
  case PTO_STMT_FOR:
    r = scan_expr(o, sc, s->loop.lo, 1, 0) || scan_expr(o, sc, s->loop.hi, 1, 0) ||
        scan_expr(o, sc, s->loop.step, 1, 0);
    for (int i = 0; i < s->loop.niters && !r; i++)
      r = scan_expr(o, sc, s->loop.inits[i], 1, 0);
    o->inside[s->loop.iv->id] = 1;
    mark_inside(o, s->loop.iters, s->loop.niters);
    if (!r) r = scan_block(o, sc, &s->loop.body);
    break;
  case PTO_STMT_IF:
    r = scan_expr(o, sc, s->branch.cond, 1, 0) || scan_block(o, sc, &s->branch.then_body) ||
        scan_block(o, sc, &s->branch.else_body);
    break;
  case PTO_STMT_INCORE: r = scan_block(o, sc, &s->incore.body); break;
  case PTO_STMT_YIELD:
  case PTO_STMT_RETURN:
    for (int i = 0; i < s->ret.n && !r; i++)
      r = scan_expr(o, sc, s->ret.vals[i], 1, 0);
    break;
  }
  mark_inside(o, s->results, s->nresults);
  return r;
}

static int scan_block(outliner *o, scope *sc, const pto_ir_block *blk) {
  for (int i = 0; i < blk->n; i++)
    if (scan_stmt(o, sc, blk->stmts[i])) return -1;
  return 0;
}

static int has_sym(const pto_ir_type *t, int sym) {
  for (int d = 0; t->kind != PTO_TYPE_SCALAR && d < t->rank; d++)
    if (t->dims[d] && t->dims[d]->kind == PTO_EXPR_SYM && t->dims[d]->sym == sym) return 1;
  return 0;
}

/* A scope's kernel binds a dynamic symbol only from the dims of its tensor parameters: a symbol
 * the scope uses that no captured tensor has (`i32(M)` in a scalar, `valid=[M, 64]` on a tile of
 * another tensor) is bound by also capturing the orch's first tensor parameter that has it (the
 * verifier made sure there is one), `in`: its dims asked for, as by tensor.dim, no data read. */
static int bind_syms(outliner *o, scope *sc) {
  for (int sym = 0; sym < o->src->nsyms; sym++) {
    if (!o->syms[sym]) continue;
    int bound = 0;
    for (int i = 0; i < sc->ncaps && !bound; i++)
      bound = has_sym(sc->caps[i].v->type, sym);
    for (int i = 0; i < sc->orch->nparams && !bound; i++)
      if (has_sym(sc->orch->params[i].value->type, sym)) {
        if (add_capture(sc, sc->orch->params[i].value, 0, 0)) return -1;
        bound = 1;
      }
  }
  return 0;
}

/* One incore scope, named as pto_ir_each_incore names the kernel it becomes. */
static pto_status add_scope(outliner *o, const pto_ir_func *orch, const pto_ir_stmt *s,
                            const char *name) {
  if (pto_grow_int(&o->scopes, sizeof *o->scopes, &o->cap, o->nscopes + 1)) return oom();
  scope *sc = &o->scopes[o->nscopes];
  memset(sc, 0, sizeof *sc);
  sc->stmt = s;
  sc->orch = orch;
  snprintf(sc->name, sizeof sc->name, "%s", name);
  memset(o->inside, 0, (size_t)orch->nvalues);
  memset(o->syms, 0, (size_t)o->src->nsyms + 1);
  if (scan_block(o, sc, &s->incore.body) || bind_syms(o, sc)) return oom();
  o->nscopes++;
  return PTO_OK;
}

static int visit_scope(void *ctx, const pto_ir_func *f, const pto_ir_stmt *s, const char *name) {
  outliner *o = ctx;
  o->err = add_scope(o, f, s, name);
  return o->err != PTO_OK;
}

/* ---- building the new program ---------------------------------------------------------- */

/* The kernel parameter type of a captured tensor: static dims and symbols kept, any other extent
 * a fresh symbol. An extent of a slice clamped at a static edge is dynamic in the orch
 * (docs/language.md) but its value is known: the kernel is compiled for it, as for a static one,
 * and the launch checks the argument against it. */
static pto_status param_type(outliner *o, scope *sc, int ci, const pto_ir_type **out) {
  const pto_ir_type *t = sc->caps[ci].v->type;
  pto_ir_value_map none = {0};
  if (t->kind == PTO_TYPE_SCALAR || t->rank < 0)
    return pto_ir_builder_copy_type(o->b, o->src, t, &none, out);
  pto_ir_expr *dims[PTO_MAX_RANK];
  for (int d = 0; d < t->rank; d++) {
    const pto_ir_expr *e = t->dims[d];
    int64_t v;
    if (pto_ir_expr_static_int(e, &v) != 0 && pto_ir_expr_launch_int(e, &v) == 0) {
      PTO_RETURN_IF_ERROR(pto_ir_builder_int(o->b, v, &dims[d]));
      continue;
    }
    if (e->kind == PTO_EXPR_INT || e->kind == PTO_EXPR_SYM) {
      PTO_RETURN_IF_ERROR(pto_ir_builder_copy_expr(o->b, o->src, e, &none, &dims[d]));
      continue;
    }
    char name[160];
    snprintf(name, sizeof name, "%s_%s_d%d", sc->name, sc->caps[ci].v->name, d);
    int sym = pto_ir_builder_find_sym(o->b, name, strlen(name));
    if (sym < 0) PTO_RETURN_IF_ERROR(pto_ir_builder_dynamic(o->b, name, &sym));
    PTO_RETURN_IF_ERROR(pto_ir_builder_sym(o->b, sym, &dims[d]));
  }
  if (t->kind == PTO_TYPE_DTENSOR)
    return pto_ir_builder_dtensor_type(o->b, t->dtype, t->rank, dims, out);
  return pto_ir_builder_tensor_type(o->b, t->dtype, t->rank, dims, out);
}

static pto_dir cap_dir(const capture *c) {
  if (c->v->type->kind == PTO_TYPE_SCALAR || !c->written) return PTO_DIR_IN;
  return c->read ? PTO_DIR_INOUT : PTO_DIR_OUT;
}

static pto_status kernel_header(outliner *o, scope *sc) {
  pto_ir_builder_set_loc(o->b, sc->stmt->loc);
  PTO_RETURN_IF_ERROR(pto_ir_builder_func_begin(o->b, PTO_FUNC_KERNEL, sc->name, &sc->kernel));
  const pto_ir_type *rets[64];
  int nrets = 0;
  for (int i = 0; i < sc->ncaps; i++) {
    const pto_ir_type *t;
    PTO_RETURN_IF_ERROR(param_type(o, sc, i, &t));
    pto_dir dir = cap_dir(&sc->caps[i]);
    pto_ir_value *pv;
    PTO_RETURN_IF_ERROR(pto_ir_builder_param(o->b, sc->caps[i].v->name, t, dir, dir != PTO_DIR_IN,
                                             PTO_BIND_NONE, NULL, &pv));
    if (dir != PTO_DIR_IN) {
      if (nrets == 64)
        return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                               "incore scope writes more than 64 tensors");
      rets[nrets++] = t;
    }
  }
  if (nrets) PTO_RETURN_IF_ERROR(pto_ir_builder_func_rets(o->b, rets, nrets));
  return pto_ir_builder_header_end(o->b);
}

static pto_status kernel_body(outliner *o, scope *sc) {
  pto_ir_value_map m;
  PTO_RETURN_IF_ERROR(pto_ir_value_map_init(&m, sc->orch->nvalues));
  for (int i = 0; i < sc->ncaps; i++)
    m.values[sc->caps[i].v->id] = sc->kernel->params[i].value;
  pto_status s = pto_ir_builder_body_begin(o->b, sc->kernel);
  if (!s) s = pto_ir_builder_copy_block(o->b, o->src, &sc->stmt->incore.body, &m);
  pto_ir_expr *rets[64];
  int nrets = 0;
  for (int i = 0; i < sc->ncaps && !s; i++)
    if (cap_dir(&sc->caps[i]) != PTO_DIR_IN)
      s = pto_ir_builder_use(o->b, sc->kernel->params[i].value, &rets[nrets++]);
  if (!s) s = pto_ir_builder_return(o->b, rets, nrets);
  if (!s) s = pto_ir_builder_body_end(o->b);
  pto_ir_value_map_clear(&m);
  return s;
}

static scope *scope_of(outliner *o, const pto_ir_stmt *s) {
  for (int i = 0; i < o->nscopes; i++)
    if (o->scopes[i].stmt == s) return &o->scopes[i];
  return NULL;
}

static int contains_incore(const pto_ir_block *blk) {
  for (int i = 0; i < blk->n; i++) {
    const pto_ir_stmt *s = blk->stmts[i];
    if (s->kind == PTO_STMT_INCORE) return 1;
    if (s->kind == PTO_STMT_FOR && contains_incore(&s->loop.body)) return 1;
    if (s->kind == PTO_STMT_IF &&
        (contains_incore(&s->branch.then_body) || contains_incore(&s->branch.else_body)))
      return 1;
  }
  return 0;
}

static pto_status copy_exprs(outliner *o, pto_ir_expr *const *src, int n, pto_ir_value_map *m,
                             pto_ir_expr **out) {
  for (int i = 0; i < n; i++)
    PTO_RETURN_IF_ERROR(pto_ir_builder_copy_expr(o->b, o->src, src[i], m, &out[i]));
  return PTO_OK;
}

static void results_of(pto_ir_value *const *vals, int n, pto_ir_result *out) {
  for (int i = 0; i < n; i++)
    out[i] = (pto_ir_result){vals[i]->name, vals[i]->type, vals[i]->loc};
}

static pto_status rewrite_block(outliner *o, const pto_ir_block *blk, pto_ir_value_map *m);

static pto_status rewrite_stmt(outliner *o, const pto_ir_stmt *s, pto_ir_value_map *m) {
  pto_ir_builder_set_loc(o->b, s->loc);
  if (s->kind == PTO_STMT_INCORE) {
    scope *sc = scope_of(o, s);
    pto_ir_expr *args[256];
    if (sc->ncaps > 256)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "incore scope uses more than 256 values");
    for (int i = 0; i < sc->ncaps; i++) {
      const pto_ir_value *v = sc->caps[i].v;
      if (m->values[v->id])
        PTO_RETURN_IF_ERROR(pto_ir_builder_use(o->b, m->values[v->id], &args[i]));
      else
        PTO_RETURN_IF_ERROR(pto_ir_builder_copy_expr(o->b, o->src, m->exprs[v->id], m, &args[i]));
    }
    pto_ir_stmt *call;
    return pto_ir_builder_call(o->b, sc->kernel, args, sc->ncaps, NULL, NULL, 0, &call);
  }
  if (s->kind == PTO_STMT_FOR && contains_incore(&s->loop.body)) {
    pto_ir_expr *lo, *hi, *step = NULL, *inits[64];
    pto_ir_result iters[64], results[64];
    if (s->loop.niters > 64)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "more than 64 loop-carried values");
    PTO_RETURN_IF_ERROR(pto_ir_builder_copy_expr(o->b, o->src, s->loop.lo, m, &lo));
    PTO_RETURN_IF_ERROR(pto_ir_builder_copy_expr(o->b, o->src, s->loop.hi, m, &hi));
    if (s->loop.step)
      PTO_RETURN_IF_ERROR(pto_ir_builder_copy_expr(o->b, o->src, s->loop.step, m, &step));
    PTO_RETURN_IF_ERROR(copy_exprs(o, s->loop.inits, s->loop.niters, m, inits));
    results_of(s->loop.iters, s->loop.niters, iters);
    results_of(s->results, s->nresults, results);
    pto_ir_stmt *ns;
    PTO_RETURN_IF_ERROR(pto_ir_builder_for_begin(o->b, s->loop.iv->name, s->loop.parallel, lo, hi,
                                                 step, iters, inits, s->loop.niters, results,
                                                 s->nresults, &ns));
    m->values[s->loop.iv->id] = ns->loop.iv;
    for (int i = 0; i < s->loop.niters; i++)
      m->values[s->loop.iters[i]->id] = ns->loop.iters[i];
    PTO_RETURN_IF_ERROR(rewrite_block(o, &s->loop.body, m));
    PTO_RETURN_IF_ERROR(pto_ir_builder_for_end(o->b));
    for (int i = 0; i < s->nresults; i++)
      m->values[s->results[i]->id] = ns->results[i];
    return PTO_OK;
  }
  if (s->kind == PTO_STMT_IF &&
      (contains_incore(&s->branch.then_body) || contains_incore(&s->branch.else_body))) {
    pto_ir_expr *cond;
    pto_ir_result results[64];
    if (s->nresults > 64)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "more than 64 if results");
    PTO_RETURN_IF_ERROR(pto_ir_builder_copy_expr(o->b, o->src, s->branch.cond, m, &cond));
    results_of(s->results, s->nresults, results);
    pto_ir_stmt *ns;
    PTO_RETURN_IF_ERROR(pto_ir_builder_if_begin(o->b, cond, results, s->nresults, &ns));
    PTO_RETURN_IF_ERROR(rewrite_block(o, &s->branch.then_body, m));
    if (s->branch.has_else) {
      PTO_RETURN_IF_ERROR(pto_ir_builder_else(o->b));
      PTO_RETURN_IF_ERROR(rewrite_block(o, &s->branch.else_body, m));
    }
    PTO_RETURN_IF_ERROR(pto_ir_builder_if_end(o->b));
    for (int i = 0; i < s->nresults; i++)
      m->values[s->results[i]->id] = ns->results[i];
    return PTO_OK;
  }
  return pto_ir_builder_copy_stmt(o->b, o->src, s, m);
}

static pto_status rewrite_block(outliner *o, const pto_ir_block *blk, pto_ir_value_map *m) {
  for (int i = 0; i < blk->n; i++)
    PTO_RETURN_IF_ERROR(rewrite_stmt(o, blk->stmts[i], m));
  return PTO_OK;
}

static pto_status rewrite_func(outliner *o, const pto_ir_func *f, pto_ir_func *nf) {
  if (!contains_incore(&f->body)) return pto_ir_builder_copy_func_body(o->b, o->src, f, nf);
  pto_ir_value_map m;
  PTO_RETURN_IF_ERROR(pto_ir_value_map_init(&m, f->nvalues));
  for (int i = 0; i < f->nparams; i++)
    m.values[f->params[i].value->id] = nf->params[i].value;
  pto_status s = pto_ir_builder_body_begin(o->b, nf);
  if (!s) s = rewrite_block(o, &f->body, &m);
  if (!s) s = pto_ir_builder_body_end(o->b);
  pto_ir_value_map_clear(&m);
  return s;
}

pto_status pto__outline_incore(const pto_ir_program *p, pto_ir_program **out_program) {
  *out_program = NULL;
  int any = 0, maxvals = 1;
  for (int i = 0; i < p->nfuncs; i++) {
    any |= contains_incore(&p->funcs[i]->body);
    if (p->funcs[i]->nvalues > maxvals) maxvals = p->funcs[i]->nvalues;
  }
  if (!any) return PTO_OK;
  outliner o = {.src = p};
  o.inside = pto_calloc((size_t)maxvals, 1);
  o.syms = pto_calloc((size_t)p->nsyms + 1, 1);
  pto_ir_func **nfs = pto_calloc((size_t)p->nfuncs, sizeof *nfs);
  pto_status s = (!o.inside || !o.syms || !nfs) ? oom() : PTO_OK;
  if (!s) s = pto_ir_each_incore(p, visit_scope, &o);
  if (!s && o.err) {
    s = o.err;
    o.err = PTO_OK;
  }
  if (!s) s = pto_ir_builder_create(p->name, p->file, &o.b);
  for (int i = 0; i < p->nsyms && !s; i++) {
    int sym;
    s = pto_ir_builder_dynamic(o.b, p->syms[i], &sym);
  }
  for (int i = 0; i < p->nfuncs && !s; i++)
    s = pto_ir_builder_copy_func_header(o.b, p, p->funcs[i], &nfs[i]);
  for (int i = 0; i < o.nscopes && !s; i++)
    s = kernel_header(&o, &o.scopes[i]);
  for (int i = 0; i < o.nscopes && !s; i++)
    s = kernel_body(&o, &o.scopes[i]);
  for (int i = 0; i < p->nfuncs && !s; i++)
    s = rewrite_func(&o, p->funcs[i], nfs[i]);
  if (!s) s = pto_ir_builder_finish(o.b, out_program);
  if (s) s = pto_status_annotate(s, "outlining incore scopes");
  pto_ir_builder_destroy(o.b);
  for (int i = 0; i < o.nscopes; i++)
    free(o.scopes[i].caps);
  free(o.scopes);
  free(o.inside);
  free(o.syms);
  free(nfs);
  return s;
}
