/* The verifier: every static rule of docs/language.md.
 *
 * Per-statement rules (types, shapes, spaces, SSA visibility, where an op may appear, call
 * arguments, yields and returns, literal fit, division by a constant zero) live in the builder,
 * which every program comes from. To re-check a program assembled or edited through the C API,
 * the verifier rebuilds it through a fresh builder and compares what the rebuild deduced with what
 * the program records (value ids and types, aliases, expression dtypes). It then checks the rules
 * that span a function: unshaped tensors only where the entry's are, dynamic symbols only where
 * a tensor parameter of the function binds them, and each kernel's (and incore scope's) tile
 * footprint against the sim platform's buffers. */
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

/* The last statement of a block that uses each value, found in one pass over the block (nested
 * blocks included), so the in-place check below is linear in the size of the block rather
 * than quadratic: a pointer-keyed open-addressing map from value to statement index. */
typedef struct last_use_map {
  const pto_ir_value **keys;
  int *last;
  size_t cap; /* a power of two; 0 when the map could not be allocated */
} last_use_map;

static size_t ptr_slot(const last_use_map *m, const void *p) {
  uint64_t h = (uint64_t)(uintptr_t)p * UINT64_C(0x9e3779b97f4a7c15);
  size_t i = (size_t)(h >> 17) & (m->cap - 1);
  while (m->keys[i] && m->keys[i] != p)
    i = (i + 1) & (m->cap - 1);
  return i;
}

static void note_use(last_use_map *m, const pto_ir_value *v, int at) {
  if (!m->cap || !v) return;
  size_t i = ptr_slot(m, v);
  m->keys[i] = v;
  m->last[i] = at;
}

static int last_use(const last_use_map *m, const pto_ir_value *v) {
  if (!m->cap) return INT32_MAX; /* no map: assume used later (no reuse, the safe side) */
  size_t i = ptr_slot(m, v);
  return m->keys[i] ? m->last[i] : -1;
}

static void note_block(last_use_map *m, const pto_ir_block *blk, int at);

/* Expression trees are at most PTO_IR_MAX_EXPR_HEIGHT deep. */
static void note_expr(last_use_map *m, const pto_ir_expr *e, int at) {
  if (!e) return;
  switch (e->kind) {
  case PTO_EXPR_VALUE: note_use(m, e->value, at); break;
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: note_expr(m, e->a, at); break;
  case PTO_EXPR_BINARY:
    note_expr(m, e->lhs, at);
    note_expr(m, e->rhs, at);
    break;
  default: break;
  }
}

static void note_stmt(last_use_map *m, const pto_ir_stmt *s, int at) {
  switch (s->kind) {
  case PTO_STMT_ASSIGN: note_expr(m, s->expr, at); break;
  case PTO_STMT_OP:
    for (int i = 0; i < s->op.nargs; i++) {
      const pto_ir_arg *a = &s->op.args[i];
      if (a->kind == PTO_ARG_EXPR) note_expr(m, a->expr, at);
      if (a->kind == PTO_ARG_LIST)
        for (int k = 0; k < a->list.n; k++)
          note_expr(m, a->list.items[k], at);
    }
    break;
  case PTO_STMT_CALL:
    for (int i = 0; i < s->call.nargs; i++)
      note_expr(m, s->call.args[i], at);
    note_expr(m, s->call.device, at);
    break;
  case PTO_STMT_FOR:
    for (int i = 0; i < s->loop.niters; i++)
      note_expr(m, s->loop.inits[i], at);
    note_expr(m, s->loop.lo, at);
    note_expr(m, s->loop.hi, at);
    note_expr(m, s->loop.step, at);
    note_block(m, &s->loop.body, at);
    break;
  case PTO_STMT_IF:
    note_expr(m, s->branch.cond, at);
    note_block(m, &s->branch.then_body, at);
    note_block(m, &s->branch.else_body, at);
    break;
  case PTO_STMT_INCORE: note_block(m, &s->incore.body, at); break;
  case PTO_STMT_YIELD:
  case PTO_STMT_RETURN:
    for (int i = 0; i < s->ret.n; i++)
      note_expr(m, s->ret.vals[i], at);
    break;
  }
}

static void note_block(last_use_map *m, const pto_ir_block *blk, int at) {
  for (int i = 0; i < blk->n; i++)
    note_stmt(m, blk->stmts[i], at);
}

/* Counts the value references of a block (an upper bound on the map's keys). */
static size_t count_refs(const pto_ir_block *blk);

static size_t count_expr(const pto_ir_expr *e) {
  if (!e) return 0;
  switch (e->kind) {
  case PTO_EXPR_VALUE: return 1;
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: return count_expr(e->a);
  case PTO_EXPR_BINARY: return count_expr(e->lhs) + count_expr(e->rhs);
  default: return 0;
  }
}

static size_t count_stmt(const pto_ir_stmt *s) {
  size_t n = 0;
  switch (s->kind) {
  case PTO_STMT_ASSIGN: return count_expr(s->expr);
  case PTO_STMT_OP:
    for (int i = 0; i < s->op.nargs; i++) {
      const pto_ir_arg *a = &s->op.args[i];
      if (a->kind == PTO_ARG_EXPR) n += count_expr(a->expr);
      if (a->kind == PTO_ARG_LIST)
        for (int k = 0; k < a->list.n; k++)
          n += count_expr(a->list.items[k]);
    }
    return n;
  case PTO_STMT_CALL:
    for (int i = 0; i < s->call.nargs; i++)
      n += count_expr(s->call.args[i]);
    return n + count_expr(s->call.device);
  case PTO_STMT_FOR:
    for (int i = 0; i < s->loop.niters; i++)
      n += count_expr(s->loop.inits[i]);
    return n + count_expr(s->loop.lo) + count_expr(s->loop.hi) + count_expr(s->loop.step) +
           count_refs(&s->loop.body);
  case PTO_STMT_IF:
    return count_expr(s->branch.cond) + count_refs(&s->branch.then_body) +
           count_refs(&s->branch.else_body);
  case PTO_STMT_INCORE: return count_refs(&s->incore.body);
  case PTO_STMT_YIELD:
  case PTO_STMT_RETURN:
    for (int i = 0; i < s->ret.n; i++)
      n += count_expr(s->ret.vals[i]);
    return n;
  }
  return 0;
}

static size_t count_refs(const pto_ir_block *blk) {
  size_t n = 0;
  for (int i = 0; i < blk->n; i++)
    n += count_stmt(blk->stmts[i]);
  return n;
}

static void last_use_map_build(last_use_map *m, const pto_ir_block *blk) {
  memset(m, 0, sizeof *m);
  size_t cap = 16, need = count_refs(blk) * 2 + 1;
  while (cap < need)
    cap *= 2;
  m->keys = pto_calloc(cap, sizeof *m->keys);
  m->last = pto_calloc(cap, sizeof *m->last);
  if (!m->keys || !m->last) {
    free(m->keys);
    free(m->last);
    m->keys = NULL;
    m->last = NULL;
    return;
  }
  m->cap = cap;
  for (int i = 0; i < blk->n; i++)
    note_stmt(m, blk->stmts[i], i);
}

static void last_use_map_free(last_use_map *m) {
  free(m->keys);
  free(m->last);
}

/* Whether an elementwise-shaped op writes its result into a tile operand in place: an operand
 * of the same space and size, made earlier in this block (so not live across loop iterations)
 * and not used after this statement. This is docs/language.md's "in-place reuse shares a buffer".
 * def_at: index in blk of each statement that defines a value of this block (via the map of
 * statement pointers), uses: the block's last uses. */
static int reuses_operand(const pto_ir_block *blk, int i, const pto_ir_type *rt,
                          const last_use_map *uses, const last_use_map *defs) {
  const pto_ir_stmt *s = blk->stmts[i];
  const pto_op_info *info = pto_op_info_get(s->op.opc);
  pto_op_class cls = info ? info->cls : PTO_OPC_OTHER;
  int elementwise = cls == PTO_OPC_BINARY || cls == PTO_OPC_BINARY_SCALAR || cls == PTO_OPC_UNARY ||
                    cls == PTO_OPC_CAST || cls == PTO_OPC_EXPAND_ROW || cls == PTO_OPC_EXPAND_COL ||
                    cls == PTO_OPC_SELECT;
  if (!elementwise || !uses->cap || !defs->cap) return 0;
  for (int a = 0; a < s->op.nargs; a++) {
    const pto_ir_arg *arg = &s->op.args[a];
    if (arg->kw || arg->kind != PTO_ARG_EXPR || arg->expr->kind != PTO_EXPR_VALUE) continue;
    const pto_ir_value *v = arg->expr->value;
    if (!v->type || v->type->kind != PTO_TYPE_TILE || v->type->space != rt->space ||
        tile_type_bytes(v->type) != tile_type_bytes(rt))
      continue;
    int def_at = last_use(defs, (const pto_ir_value *)(const void *)v->def);
    int made_here = v->def && def_at >= 0 && def_at < i;
    if (made_here && last_use(uses, v) <= i) return 1;
  }
  return 0;
}

/* Bytes of the tile statement i of blk allocates (0 for none or an in-place result). */
static uint64_t stmt_tile_bytes(const pto_ir_block *blk, int i, pto_space *out_space,
                                const last_use_map *uses, const last_use_map *defs) {
  const pto_ir_stmt *s = blk->stmts[i];
  if (s->kind != PTO_STMT_OP || s->nresults != 1 || s->op.opc == PTO_OP_TILE_MATMUL_ACC) return 0;
  const pto_ir_type *t = s->results[0]->type;
  uint64_t bytes = tile_type_bytes(t);
  if (!bytes || reuses_operand(blk, i, t, uses, defs)) return 0;
  *out_space = t->space;
  return bytes;
}

/* The statements of a block by pointer, keyed like values (a statement is never a value, so
 * the map's key type is only borrowed). */
static void def_map_build(last_use_map *m, const pto_ir_block *blk) {
  memset(m, 0, sizeof *m);
  size_t cap = 16;
  while (cap < (size_t)blk->n * 2 + 1)
    cap *= 2;
  m->keys = pto_calloc(cap, sizeof *m->keys);
  m->last = pto_calloc(cap, sizeof *m->last);
  if (!m->keys || !m->last) {
    last_use_map_free(m);
    memset(m, 0, sizeof *m);
    return;
  }
  m->cap = cap;
  for (int i = 0; i < blk->n; i++)
    note_use(m, (const pto_ir_value *)(const void *)blk->stmts[i], i);
}

static const pto_ir_stmt *walk_footprint(const pto_ir_block *blk, const uint64_t *cap,
                                         uint64_t running[PTO_SPACE_COUNT], pto_space *out_space) {
  last_use_map uses, defs;
  last_use_map_build(&uses, blk);
  def_map_build(&defs, blk);
  const pto_ir_stmt *hit = NULL;
  for (int i = 0; i < blk->n && !hit; i++) {
    const pto_ir_stmt *s = blk->stmts[i];
    pto_space sp = PTO_SPACE_VEC;
    uint64_t bytes = stmt_tile_bytes(blk, i, &sp, &uses, &defs);
    if (bytes) {
      if (__builtin_add_overflow(running[sp], bytes, &running[sp])) running[sp] = UINT64_MAX;
      if (cap && running[sp] > cap[sp]) {
        *out_space = sp;
        hit = s;
        break;
      }
    }
    switch (s->kind) {
    case PTO_STMT_FOR: hit = walk_footprint(&s->loop.body, cap, running, out_space); break;
    case PTO_STMT_IF:
      hit = walk_footprint(&s->branch.then_body, cap, running, out_space);
      if (!hit) hit = walk_footprint(&s->branch.else_body, cap, running, out_space);
      break;
    case PTO_STMT_INCORE: hit = walk_footprint(&s->incore.body, cap, running, out_space); break;
    default: break;
    }
  }
  last_use_map_free(&uses);
  last_use_map_free(&defs);
  return hit;
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

/* A dynamic symbol takes its value, at each call of a function, from the shapes of that function's
 * tensor parameters (docs/language.md "Functions and parameters"), so every symbol its body uses
 * (incore scopes included) must be an extent of one of them. Expression trees are at most
 * PTO_IR_MAX_EXPR_HEIGHT deep. */
static const pto_ir_expr *unbound_sym(const pto_ir_expr *e, const unsigned char *bound) {
  if (!e) return NULL;
  switch (e->kind) {
  case PTO_EXPR_SYM: return bound[e->sym] ? NULL : e;
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: return unbound_sym(e->a, bound);
  case PTO_EXPR_BINARY: {
    const pto_ir_expr *l = unbound_sym(e->lhs, bound);
    return l ? l : unbound_sym(e->rhs, bound);
  }
  default: return NULL;
  }
}

static const pto_ir_expr *stmt_unbound_sym(const pto_ir_stmt *s, const unsigned char *bound) {
  const pto_ir_expr *e = NULL;
  switch (s->kind) {
  case PTO_STMT_ASSIGN: return unbound_sym(s->expr, bound);
  case PTO_STMT_OP:
    for (int i = 0; i < s->op.nargs && !e; i++) {
      const pto_ir_arg *a = &s->op.args[i];
      if (a->kind == PTO_ARG_EXPR) e = unbound_sym(a->expr, bound);
      for (int k = 0; a->kind == PTO_ARG_LIST && k < a->list.n && !e; k++)
        e = unbound_sym(a->list.items[k], bound);
    }
    return e;
  case PTO_STMT_CALL:
    for (int i = 0; i < s->call.nargs && !e; i++)
      e = unbound_sym(s->call.args[i], bound);
    return e ? e : unbound_sym(s->call.device, bound);
  case PTO_STMT_FOR:
    e = unbound_sym(s->loop.lo, bound);
    if (!e) e = unbound_sym(s->loop.hi, bound);
    if (!e) e = unbound_sym(s->loop.step, bound);
    for (int i = 0; i < s->loop.niters && !e; i++)
      e = unbound_sym(s->loop.inits[i], bound);
    return e;
  case PTO_STMT_IF: return unbound_sym(s->branch.cond, bound);
  case PTO_STMT_YIELD:
  case PTO_STMT_RETURN:
    for (int i = 0; i < s->ret.n && !e; i++)
      e = unbound_sym(s->ret.vals[i], bound);
    return e;
  default: return NULL;
  }
}

static pto_status check_syms_bound(const pto_ir_program *p, const pto_ir_func *f) {
  if (p->nsyms <= 0) return PTO_OK;
  unsigned char *bound = pto_calloc((size_t)p->nsyms, 1);
  if (!bound) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory verifying");
  for (int i = 0; i < f->nparams; i++) {
    const pto_ir_type *t = f->params[i].value->type;
    for (int d = 0; t->kind != PTO_TYPE_SCALAR && d < t->rank; d++)
      if (t->dims[d] && t->dims[d]->kind == PTO_EXPR_SYM && t->dims[d]->sym >= 0 &&
          t->dims[d]->sym < p->nsyms)
        bound[t->dims[d]->sym] = 1;
  }
  const pto_ir_stmt **stmts = NULL;
  int n = 0;
  pto_status s = pto_ir_func_stmts(f, &stmts, &n);
  const pto_ir_expr *e = NULL;
  for (int k = 0; !s && k < n && !e; k++)
    e = stmt_unbound_sym(stmts[k], bound);
  if (!s && e) {
    const char *sym = e->sym >= 0 && e->sym < p->nsyms ? p->syms[e->sym] : "?";
    s = pto__ir_errorf(p, e->loc,
                       "dynamic symbol '%s' is not bound by any tensor parameter of @%s (a "
                       "function's symbols take their values from the shapes of its tensor "
                       "parameters: pass it a tensor with extent %s, or pass the value as an "
                       "index parameter)",
                       sym, f->name, sym);
  }
  pto_free((void *)stmts);
  free(bound);
  return s;
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

  unsigned char *called = pto_calloc((size_t)p->nfuncs + 1, 1);
  if (!called) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory verifying");
  for (int i = 0; i < p->nfuncs; i++)
    mark_calls(&p->funcs[i]->body, called, p->nfuncs);
  for (int i = 0; !s && i < p->nfuncs; i++) {
    const pto_ir_func *f = p->funcs[i];
    s = check_unshaped(p, f, called[i]);
    if (!s) s = check_syms_bound(p, f);
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

/* ---- launch warnings ---- */

static void warn_call(const pto_ir_program *p, const pto_ir_stmt *s, pto_ir_warning_fn fn,
                      void *ctx) {
  const pto_ir_func *k = s->call.callee;
  for (int i = 0; k && i < s->call.nargs && i < k->nparams; i++) {
    const pto_ir_expr *e = s->call.args[i];
    const pto_ir_type *pt = k->params[i].value->type;
    if (pt->kind == PTO_TYPE_SCALAR || !e || e->kind != PTO_EXPR_VALUE) continue;
    const pto_ir_type *at = e->value->type;
    for (int d = 0; d < pt->rank && d < at->rank; d++) {
      int64_t want, got;
      /* Only an extent that is dynamic by the clamping rule yet whose value is known. */
      if (pto_ir_expr_static_int(pt->dims[d], &want) ||
          !pto_ir_expr_static_int(at->dims[d], &got) || pto_ir_expr_launch_int(at->dims[d], &got) ||
          got == want)
        continue;
      char msg[600];
      pto_loc l = e->loc.line ? e->loc : s->loc;
      snprintf(msg, sizeof msg,
               "%s:%d:%d: call @%s: argument %d for %%%s: %%%s has extent %lld in dim %d (a "
               "tensor.slice clamped at its tensor's edge), the parameter declares %lld: the "
               "launch will fail",
               p->file ? p->file : "<program>", l.line, l.col, k->name, i + 1,
               k->params[i].value->name, e->value->name, (long long)got, d, (long long)want);
      fn(ctx, msg);
    }
  }
}

pto_status pto_ir_launch_warnings(const pto_ir_program *p, pto_ir_warning_fn fn, void *ctx) {
  if (!p || !fn) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "launch warnings: no program");
  for (int i = 0; i < p->nfuncs; i++) {
    const pto_ir_stmt **stmts = NULL;
    int n = 0;
    PTO_RETURN_IF_ERROR(pto_ir_func_stmts(p->funcs[i], &stmts, &n));
    for (int k = 0; k < n; k++)
      if (stmts[k]->kind == PTO_STMT_CALL) warn_call(p, stmts[k], fn, ctx);
    pto_free((void *)stmts);
  }
  return PTO_OK;
}
