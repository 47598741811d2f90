/* The verifier: every static rule of PTIR.md.
 *
 * Per-statement rules (types, shapes, spaces, SSA visibility, where an op may appear, call
 * arguments, yields and returns, literal fit, division by a constant zero) live in the builder,
 * which every program comes from. To re-check a program assembled or edited through the C API,
 * the verifier rebuilds it through a fresh builder and compares what the rebuild deduced with what
 * the program records (value ids and types, aliases, expression dtypes). It then checks the rules
 * that span functions: unshaped tensors only where the entry's are, and each kernel's (and incore
 * scope's) tile footprint against the sim platform's buffers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"

static const uint64_t k_sim_capacity[PTO_SPACE_COUNT] = {
    [PTO_SPACE_DDR] = UINT64_MAX, [PTO_SPACE_VEC] = 192 * 1024,  [PTO_SPACE_MAT] = 512 * 1024,
    [PTO_SPACE_LEFT] = 64 * 1024, [PTO_SPACE_RIGHT] = 64 * 1024, [PTO_SPACE_ACC] = 128 * 1024,
};

/* ---- footprint ------------------------------------------------------------------------ */

static uint64_t tile_type_bytes(const pto_ir_type *t) {
  int64_t r, c;
  if (!t || t->kind != PTO_TYPE_TILE || pto_ir_expr_static_int(t->dims[0], &r) ||
      pto_ir_expr_static_int(t->dims[1], &c) || r <= 0 || c <= 0)
    return 0;
  int64_t shape[2] = {r, c}, bytes;
  /* The builder refuses a tile whose size overflows; saturate all the same. */
  return pto_shape_size(2, shape, t->dtype, NULL, &bytes) ? UINT64_MAX : (uint64_t)bytes;
}

static int expr_uses(const pto_ir_expr *e, const pto_ir_value *v) {
  if (!e) return 0;
  switch (e->kind) {
  case PTO_EXPR_VALUE: return e->value == v;
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: return expr_uses(e->a, v);
  case PTO_EXPR_BINARY: return expr_uses(e->lhs, v) || expr_uses(e->rhs, v);
  default: return 0;
  }
}

static int block_uses(const pto_ir_block *blk, int from, const pto_ir_value *v);

static int stmt_uses(const pto_ir_stmt *s, const pto_ir_value *v) {
  switch (s->kind) {
  case PTO_STMT_ASSIGN: return expr_uses(s->expr, v);
  case PTO_STMT_OP:
    for (int i = 0; i < s->op.nargs; i++) {
      const pto_ir_arg *a = &s->op.args[i];
      if (a->kind == PTO_ARG_EXPR && expr_uses(a->expr, v)) return 1;
      if (a->kind == PTO_ARG_LIST)
        for (int k = 0; k < a->list.n; k++)
          if (expr_uses(a->list.items[k], v)) return 1;
    }
    return 0;
  case PTO_STMT_CALL:
    for (int i = 0; i < s->call.nargs; i++)
      if (expr_uses(s->call.args[i], v)) return 1;
    return expr_uses(s->call.device, v);
  case PTO_STMT_FOR:
    for (int i = 0; i < s->loop.niters; i++)
      if (expr_uses(s->loop.inits[i], v)) return 1;
    return expr_uses(s->loop.lo, v) || expr_uses(s->loop.hi, v) || expr_uses(s->loop.step, v) ||
           block_uses(&s->loop.body, 0, v);
  case PTO_STMT_IF:
    return expr_uses(s->branch.cond, v) || block_uses(&s->branch.then_body, 0, v) ||
           block_uses(&s->branch.else_body, 0, v);
  case PTO_STMT_INCORE: return block_uses(&s->incore.body, 0, v);
  case PTO_STMT_YIELD:
  case PTO_STMT_RETURN:
    for (int i = 0; i < s->ret.n; i++)
      if (expr_uses(s->ret.vals[i], v)) return 1;
    return 0;
  }
  return 0;
}

static int block_uses(const pto_ir_block *blk, int from, const pto_ir_value *v) {
  for (int i = from; i < blk->n; i++)
    if (stmt_uses(blk->stmts[i], v)) return 1;
  return 0;
}

/* Whether an elementwise-shaped op writes its result into a tile operand in place: an operand
 * of the same space and size, made earlier in this block (so not live across loop iterations)
 * and not used after this statement. This is PTIR.md's "in-place reuse shares a buffer". */
static int reuses_operand(const pto_ir_block *blk, int i, const pto_ir_type *rt) {
  const pto_ir_stmt *s = blk->stmts[i];
  pto_opcode op = s->op.opc;
  int elementwise = (op >= PTO_OP_TILE_ADD && op <= PTO_OP_TILE_CAST) ||
                    (op >= PTO_OP_TILE_ROW_EXPAND_ADD && op <= PTO_OP_TILE_COL_EXPAND_DIV);
  if (!elementwise) return 0;
  for (int a = 0; a < s->op.nargs; a++) {
    const pto_ir_arg *arg = &s->op.args[a];
    if (arg->kw || arg->kind != PTO_ARG_EXPR || arg->expr->kind != PTO_EXPR_VALUE) continue;
    const pto_ir_value *v = arg->expr->value;
    if (!v->type || v->type->kind != PTO_TYPE_TILE || v->type->space != rt->space ||
        tile_type_bytes(v->type) != tile_type_bytes(rt))
      continue;
    int made_here = 0;
    for (int j = 0; j < i && !made_here; j++)
      made_here = blk->stmts[j] == v->def;
    if (made_here && !block_uses(blk, i + 1, v)) return 1;
  }
  return 0;
}

/* Bytes of the tile statement i of blk allocates (0 for none or an in-place result). */
static uint64_t stmt_tile_bytes(const pto_ir_block *blk, int i, pto_space *out_space) {
  const pto_ir_stmt *s = blk->stmts[i];
  if (s->kind != PTO_STMT_OP || s->nresults != 1 || s->op.opc == PTO_OP_TILE_MATMUL_ACC) return 0;
  const pto_ir_type *t = s->results[0]->type;
  uint64_t bytes = tile_type_bytes(t);
  if (!bytes || reuses_operand(blk, i, t)) return 0;
  *out_space = t->space;
  return bytes;
}

static const pto_ir_stmt *walk_footprint(const pto_ir_block *blk, const uint64_t *cap,
                                         uint64_t running[PTO_SPACE_COUNT], pto_space *out_space) {
  for (int i = 0; i < blk->n; i++) {
    const pto_ir_stmt *s = blk->stmts[i];
    pto_space sp = PTO_SPACE_VEC;
    uint64_t bytes = stmt_tile_bytes(blk, i, &sp);
    if (bytes) {
      if (__builtin_add_overflow(running[sp], bytes, &running[sp])) running[sp] = UINT64_MAX;
      if (cap && running[sp] > cap[sp]) {
        *out_space = sp;
        return s;
      }
    }
    const pto_ir_stmt *hit = NULL;
    switch (s->kind) {
    case PTO_STMT_FOR: hit = walk_footprint(&s->loop.body, cap, running, out_space); break;
    case PTO_STMT_IF:
      hit = walk_footprint(&s->branch.then_body, cap, running, out_space);
      if (!hit) hit = walk_footprint(&s->branch.else_body, cap, running, out_space);
      break;
    case PTO_STMT_INCORE: hit = walk_footprint(&s->incore.body, cap, running, out_space); break;
    default: break;
    }
    if (hit) return hit;
  }
  return NULL;
}

void pto__ir_footprint_block(const pto_ir_block *blk, uint64_t out_bytes[PTO_SPACE_COUNT]) {
  pto_space sp;
  walk_footprint(blk, NULL, out_bytes, &sp);
}

const pto_ir_stmt *pto__ir_footprint_overflow(const pto_ir_block *blk,
                                              const uint64_t cap[PTO_SPACE_COUNT],
                                              uint64_t running[PTO_SPACE_COUNT],
                                              pto_space *out_space) {
  return walk_footprint(blk, cap, running, out_space);
}

void pto_ir_kernel_footprint(const pto_ir_func *f, uint64_t out_bytes[PTO_SPACE_COUNT]) {
  for (int i = 0; i < PTO_SPACE_COUNT; i++)
    out_bytes[i] = 0;
  if (f) pto__ir_footprint_block(&f->body, out_bytes);
}

static void kib(char *out, size_t n, uint64_t bytes) {
  if (bytes % 1024 == 0)
    snprintf(out, n, "%llu KiB", (unsigned long long)(bytes / 1024));
  else
    snprintf(out, n, "%.1f KiB", (double)bytes / 1024.0);
}

static pto_status check_footprint(const pto_ir_program *p, const pto_ir_block *blk,
                                  const char *what) {
  uint64_t running[PTO_SPACE_COUNT] = {0};
  pto_space sp = PTO_SPACE_VEC;
  const pto_ir_stmt *s = pto__ir_footprint_overflow(blk, k_sim_capacity, running, &sp);
  if (!s) return PTO_OK;
  uint64_t total[PTO_SPACE_COUNT] = {0};
  pto__ir_footprint_block(blk, total);
  char need[32], cap[32];
  kib(need, sizeof need, total[sp]);
  kib(cap, sizeof cap, k_sim_capacity[sp]);
  return pto__ir_errorf(
      p, s->loc,
      "%s: its tiles need %s of %s (%llu bytes), more than the %s (%llu bytes) of the sim "
      "platform; use smaller tiles",
      what, need, pto_space_name(sp), (unsigned long long)total[sp], cap,
      (unsigned long long)k_sim_capacity[sp]);
}

static pto_status check_incore_footprints(const pto_ir_program *p, const pto_ir_block *blk) {
  for (int i = 0; i < blk->n; i++) {
    const pto_ir_stmt *s = blk->stmts[i];
    pto_status st = PTO_OK;
    if (s->kind == PTO_STMT_INCORE) {
      char what[160];
      if (s->incore.name)
        snprintf(what, sizeof what, "incore scope \"%.100s\"", s->incore.name);
      else
        snprintf(what, sizeof what, "incore scope at %d:%d", s->loc.line, s->loc.col);
      st = check_footprint(p, &s->incore.body, what);
    } else if (s->kind == PTO_STMT_FOR) {
      st = check_incore_footprints(p, &s->loop.body);
    } else if (s->kind == PTO_STMT_IF) {
      st = check_incore_footprints(p, &s->branch.then_body);
      if (!st) st = check_incore_footprints(p, &s->branch.else_body);
    }
    if (st) return st;
  }
  return PTO_OK;
}

/* ---- comparing a program with its rebuild --------------------------------------------- */

static pto_status mismatch(const pto_ir_program *p, pto_loc loc, const char *what) {
  return pto__ir_errorf(
      p, loc, "%s does not match its definition (the IR was edited inconsistently)", what);
}

static pto_status cmp_value(const pto_ir_program *p, const pto_ir_value *a, const pto_ir_value *b) {
  char what[160];
  snprintf(what, sizeof what, "value %%%s", a && a->name ? a->name : "?");
  if (!a || !b) return mismatch(p, (pto_loc){0, 0}, what);
  if (a->id != b->id) {
    snprintf(what, sizeof what, "the id %d of %%%s (values are numbered in definition order)",
             a->id, a->name);
    return mismatch(p, a->loc, what);
  }
  if (!a->type || a->type->kind != b->type->kind || a->type->dtype != b->type->dtype ||
      a->type->rank != b->type->rank) {
    snprintf(what, sizeof what, "the type of %%%s", a->name);
    return mismatch(p, a->loc, what);
  }
  if (!a->alias_of != !b->alias_of || (a->alias_of && a->alias_of->id != b->alias_of->id)) {
    snprintf(what, sizeof what, "the alias of %%%s", a->name);
    return mismatch(p, a->loc, what);
  }
  return PTO_OK;
}

static pto_status cmp_expr(const pto_ir_program *p, const pto_ir_expr *a, const pto_ir_expr *b) {
  if (!a || !b) return PTO_OK; /* absent on both sides, or the rebuild already failed */
  if (a->kind != b->kind || a->dtype != b->dtype) {
    char t[160];
    pto__ir_expr_text(p, a, t, sizeof t);
    return pto__ir_errorf(p, a->loc, "expression %s has dtype %s where its context gives %s", t,
                          pto_dtype_name(a->dtype), pto_dtype_name(b->dtype));
  }
  switch (a->kind) {
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: return cmp_expr(p, a->a, b->a);
  case PTO_EXPR_BINARY: {
    pto_status s = cmp_expr(p, a->lhs, b->lhs);
    return s ? s : cmp_expr(p, a->rhs, b->rhs);
  }
  default: return PTO_OK;
  }
}

static pto_status cmp_block(const pto_ir_program *p, const pto_ir_block *a, const pto_ir_block *b);

#define TRY(expr)                                                                                  \
  do {                                                                                             \
    pto_status s__ = (expr);                                                                       \
    if (s__) return s__;                                                                           \
  } while (0)

static pto_status cmp_stmt(const pto_ir_program *p, const pto_ir_stmt *a, const pto_ir_stmt *b) {
  if (a->kind != b->kind || a->nresults != b->nresults) return mismatch(p, a->loc, "a statement");
  for (int i = 0; i < a->nresults; i++)
    TRY(cmp_value(p, a->results[i], b->results[i]));
  switch (a->kind) {
  case PTO_STMT_ASSIGN: return cmp_expr(p, a->expr, b->expr);
  case PTO_STMT_OP:
    if (a->op.nargs != b->op.nargs) return mismatch(p, a->loc, "the arguments of an op");
    for (int i = 0; i < a->op.nargs; i++) {
      const pto_ir_arg *x = &a->op.args[i], *y = &b->op.args[i];
      if (x->kind != y->kind) return mismatch(p, x->loc, "an op argument");
      if (x->kind == PTO_ARG_EXPR) TRY(cmp_expr(p, x->expr, y->expr));
      if (x->kind == PTO_ARG_LIST)
        for (int k = 0; k < x->list.n && k < y->list.n; k++) {
          /* a list item may have been folded to a literal by the rebuild; compare dtypes only */
          if (x->list.items[k]->dtype != y->list.items[k]->dtype)
            return cmp_expr(p, x->list.items[k], y->list.items[k]);
        }
    }
    return PTO_OK;
  case PTO_STMT_CALL:
    for (int i = 0; i < a->call.nargs; i++)
      TRY(cmp_expr(p, a->call.args[i], b->call.args[i]));
    return cmp_expr(p, a->call.device, b->call.device);
  case PTO_STMT_FOR:
    TRY(cmp_value(p, a->loop.iv, b->loop.iv));
    TRY(cmp_expr(p, a->loop.lo, b->loop.lo));
    TRY(cmp_expr(p, a->loop.hi, b->loop.hi));
    TRY(cmp_expr(p, a->loop.step, b->loop.step));
    for (int i = 0; i < a->loop.niters; i++) {
      TRY(cmp_value(p, a->loop.iters[i], b->loop.iters[i]));
      TRY(cmp_expr(p, a->loop.inits[i], b->loop.inits[i]));
    }
    return cmp_block(p, &a->loop.body, &b->loop.body);
  case PTO_STMT_IF:
    TRY(cmp_expr(p, a->branch.cond, b->branch.cond));
    TRY(cmp_block(p, &a->branch.then_body, &b->branch.then_body));
    return cmp_block(p, &a->branch.else_body, &b->branch.else_body);
  case PTO_STMT_INCORE: return cmp_block(p, &a->incore.body, &b->incore.body);
  case PTO_STMT_YIELD:
  case PTO_STMT_RETURN:
    for (int i = 0; i < a->ret.n; i++)
      TRY(cmp_expr(p, a->ret.vals[i], b->ret.vals[i]));
    return PTO_OK;
  }
  return PTO_OK;
}

static pto_status cmp_block(const pto_ir_program *p, const pto_ir_block *a, const pto_ir_block *b) {
  if (a->n != b->n) return mismatch(p, (pto_loc){0, 0}, "a block");
  for (int i = 0; i < a->n; i++)
    TRY(cmp_stmt(p, a->stmts[i], b->stmts[i]));
  return PTO_OK;
}

/* ---- whole-program rules -------------------------------------------------------------- */

static void mark_calls(const pto_ir_block *blk, unsigned char *called, int nfuncs) {
  for (int i = 0; i < blk->n; i++) {
    const pto_ir_stmt *s = blk->stmts[i];
    switch (s->kind) {
    case PTO_STMT_CALL:
      if (s->call.callee && s->call.callee->index >= 0 && s->call.callee->index < nfuncs)
        called[s->call.callee->index] = 1;
      break;
    case PTO_STMT_FOR: mark_calls(&s->loop.body, called, nfuncs); break;
    case PTO_STMT_IF:
      mark_calls(&s->branch.then_body, called, nfuncs);
      mark_calls(&s->branch.else_body, called, nfuncs);
      break;
    case PTO_STMT_INCORE: mark_calls(&s->incore.body, called, nfuncs); break;
    default: break;
    }
  }
}

/* 'tensor f32' takes its shape from a compile-time sample, which only the entry's parameters get:
 * so only an orch or host that nothing calls (an entry candidate) may have one. */
static pto_status check_unshaped(const pto_ir_program *p, const pto_ir_func *f, int called) {
  int can_be_entry = f->kind != PTO_FUNC_KERNEL && !called;
  const char *why = f->kind == PTO_FUNC_KERNEL ? "a kernel's shapes come from its calls"
                                               : "it is called, so it is not the entry";
  for (int i = 0; i < f->nparams; i++) {
    const pto_ir_value *v = f->params[i].value;
    if (v->type->rank < 0 && !can_be_entry)
      return pto__ir_errorf(
          p, v->loc,
          "parameter %%%s of @%s: an unshaped tensor (tensor %s) is allowed only on the entry "
          "function (%s); give it a shape like tensor[M, 128] %s",
          v->name, f->name, pto_dtype_name(v->type->dtype), why, pto_dtype_name(v->type->dtype));
  }
  for (int i = 0; i < f->nrets; i++)
    if (f->rets[i]->rank < 0 && !can_be_entry)
      return pto__ir_errorf(
          p, f->loc,
          "@%s: an unshaped tensor in the -> list is allowed only on the entry function (%s)",
          f->name, why);
  return PTO_OK;
}

pto_status pto_ir_verify(const pto_ir_program *p) {
  if (!p) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "verify: no program");
  pto_ir_program *copy = NULL;
  pto_status s = pto_ir_program_copy(p, &copy);
  if (s) return s;
  for (int i = 0; !s && i < p->nfuncs; i++) {
    const pto_ir_func *a = p->funcs[i], *b = copy->funcs[i];
    if (a->nvalues != b->nvalues) {
      char what[96];
      snprintf(what, sizeof what, "the value count of @%s", a->name);
      s = mismatch(p, a->loc, what);
    }
    for (int k = 0; !s && k < a->nparams; k++)
      s = cmp_value(p, a->params[k].value, b->params[k].value);
    if (!s) s = cmp_block(p, &a->body, &b->body);
  }
  pto_ir_program_destroy(copy);
  if (s) return s;

  unsigned char *called = calloc((size_t)p->nfuncs + 1, 1);
  if (!called) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory verifying");
  for (int i = 0; i < p->nfuncs; i++)
    mark_calls(&p->funcs[i]->body, called, p->nfuncs);
  for (int i = 0; !s && i < p->nfuncs; i++) {
    const pto_ir_func *f = p->funcs[i];
    s = check_unshaped(p, f, called[i]);
    if (s) break;
    if (f->kind == PTO_FUNC_KERNEL) {
      char what[160];
      snprintf(what, sizeof what, "kernel @%.100s", f->name);
      s = check_footprint(p, &f->body, what);
    } else if (f->kind == PTO_FUNC_ORCH) {
      s = check_incore_footprints(p, &f->body);
    }
  }
  free(called);
  return s;
}
