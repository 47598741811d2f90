/* Kernel planning: statement positions, tile live ranges, buffer groups and scratch offsets.
 * See lower_kernel_internal.h for the model. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_kernel_internal.h"
#include "pto/base.h"

int pto__lower_static_int(const pto_ir_expr *e, int64_t *out) {
  if (!e) return -1;
  switch (e->kind) {
  case PTO_EXPR_INT: *out = e->i; return 0;
  case PTO_EXPR_UNARY:
    if (e->op == PTO_EOP_NEG && !pto__lower_static_int(e->a, out)) {
      *out = -*out;
      return 0;
    }
    return -1;
  default: return -1;
  }
}

const pto_ir_arg *pto__lower_kwarg(const pto_ir_stmt *s, const char *kw) {
  for (int i = 0; i < s->op.nargs; i++)
    if (s->op.args[i].kw && strcmp(s->op.args[i].kw, kw) == 0) return &s->op.args[i];
  return NULL;
}

int pto__lower_elementwise_kind(pto_opcode op) {
  const pto_op_info *info = pto_op_info_get(op);
  switch (info ? info->cls : PTO_OPC_OTHER) {
  case PTO_OPC_BINARY: return 1;
  case PTO_OPC_BINARY_SCALAR: return 2;
  case PTO_OPC_UNARY: return 3;
  case PTO_OPC_CAST: return 4;
  case PTO_OPC_EXPAND_ROW: return 5;
  case PTO_OPC_SELECT: return 6;
  case PTO_OPC_EXPAND_COL: return 7;
  default: return 0;
  }
}

int pto__lower_group_find(lw *L, int g) {
  if (g < 0) return -1;
  while (L->groups[g].parent != g) {
    L->groups[g].parent = L->groups[L->groups[g].parent].parent;
    g = L->groups[g].parent;
  }
  return g;
}

int pto__lower_tile_shape(const pto_ir_type *t, int64_t *r, int64_t *c) {
  if (t->kind != PTO_TYPE_TILE || t->rank != 2 || pto__lower_static_int(t->dims[0], r) ||
      pto__lower_static_int(t->dims[1], c))
    return -1;
  return 0;
}

static int tile_bytes(const pto_ir_type *t, int64_t *out) {
  int64_t r, c;
  if (pto__lower_tile_shape(t, &r, &c) || r <= 0 || c <= 0) return -1;
  *out = r * c * (int64_t)pto_dtype_size(t->dtype);
  return 0;
}

static int new_group(lw *L, int64_t bytes, int start, int end) {
  if (pto_grow_int(&L->groups, sizeof *L->groups, &L->capgroups, L->ngroups + 1)) return -1;
  int id = L->ngroups++;
  lw_group *g = &L->groups[id];
  memset(g, 0, sizeof *g);
  g->bytes = bytes;
  g->start = start;
  g->end = end;
  g->parent = id;
  return id;
}

static void group_union(lw *L, int a, int b) {
  a = pto__lower_group_find(L, a);
  b = pto__lower_group_find(L, b);
  if (a == b) return;
  lw_group *ga = &L->groups[a], *gb = &L->groups[b];
  gb->parent = a;
  if (gb->start < ga->start) ga->start = gb->start;
  if (gb->end > ga->end) ga->end = gb->end;
  if (gb->bytes > ga->bytes) ga->bytes = gb->bytes;
  ga->iter |= gb->iter;
}

/* ---- positions ---------------------------------------------------------------------------- */

static int count_block(const pto_ir_block *b) {
  int n = 0;
  for (int i = 0; i < b->n; i++) {
    const pto_ir_stmt *s = b->stmts[i];
    n++;
    if (s->kind == PTO_STMT_FOR) n += count_block(&s->loop.body);
    if (s->kind == PTO_STMT_IF)
      n += count_block(&s->branch.then_body) + count_block(&s->branch.else_body);
    if (s->kind == PTO_STMT_INCORE) n += count_block(&s->incore.body);
  }
  return n;
}

static void number_block(lw *L, const pto_ir_block *b, int *pos) {
  for (int i = 0; i < b->n; i++) {
    const pto_ir_stmt *s = b->stmts[i];
    int me = (*pos)++;
    L->plan[me].s = s;
    L->plan[me].blk = b;
    L->plan[me].yield_tmp = -1;
    L->plan[me].mm_pack = -1;
    L->plan[me].defer = -1;
    L->plan[me].defer_at = -1;
    L->plan[me].fuse_len = 1;
    if (s->kind == PTO_STMT_FOR) number_block(L, &s->loop.body, pos);
    if (s->kind == PTO_STMT_IF) {
      number_block(L, &s->branch.then_body, pos);
      number_block(L, &s->branch.else_body, pos);
    }
    if (s->kind == PTO_STMT_INCORE) number_block(L, &s->incore.body, pos);
    L->plan[me].end = *pos - 1;
  }
}

/* ---- uses and definitions --------------------------------------------------------------- */

typedef struct plan_walk {
  int loops[64]; /* positions of the enclosing for statements */
  int nloops;
} plan_walk;

static void use_value(lw *L, plan_walk *w, const pto_ir_value *v, int pos) {
  int eff = pos;
  for (int i = 0; i < w->nloops; i++) {
    int lp = w->loops[i];
    if (L->def_pos[v->id] < lp) {
      if (L->plan[lp].end > eff) eff = L->plan[lp].end;
      break;
    }
  }
  if (eff > L->last_use[v->id]) L->last_use[v->id] = eff;
  int g = pto__lower_group_find(L, L->group_of[v->id]);
  if (g >= 0 && eff > L->groups[g].end) L->groups[g].end = eff;
}

static void use_expr(lw *L, plan_walk *w, const pto_ir_expr *e, int pos) {
  if (!e) return;
  switch (e->kind) {
  case PTO_EXPR_VALUE: use_value(L, w, e->value, pos); break;
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: use_expr(L, w, e->a, pos); break;
  case PTO_EXPR_BINARY:
    use_expr(L, w, e->lhs, pos);
    use_expr(L, w, e->rhs, pos);
    break;
  default: break;
  }
}

static const pto_ir_value *first_tile_operand(const pto_ir_stmt *s) {
  for (int i = 0; i < s->op.nargs; i++) {
    const pto_ir_arg *a = &s->op.args[i];
    if (a->kind == PTO_ARG_EXPR && a->expr->kind == PTO_EXPR_VALUE &&
        a->expr->value->type->kind == PTO_TYPE_TILE)
      return a->expr->value;
  }
  return NULL;
}

static int define_tile(lw *L, const pto_ir_value *v, int pos) {
  int64_t bytes;
  if (tile_bytes(v->type, &bytes)) return 0;
  int g = new_group(L, bytes, pos, pos);
  if (g < 0) return -1;
  L->group_of[v->id] = g;
  return 0;
}

/* A matmul that may run on bf16 dot products gets a buffer of its own for its packed operands,
 * live at its statement only. */
static int plan_mm_pack(lw *L, const pto_ir_stmt *s, int pos) {
  int base = s->op.opc == PTO_OP_TILE_MATMUL_ACC;
  if ((s->op.opc != PTO_OP_TILE_MATMUL && !base) || s->op.nargs < base + 2) return 0;
  const pto_ir_type *t[2];
  int64_t d[2][2];
  for (int i = 0; i < 2; i++) {
    const pto_ir_arg *a = &s->op.args[base + i];
    if (a->kind != PTO_ARG_EXPR || a->expr->kind != PTO_EXPR_VALUE) return 0;
    t[i] = a->expr->value->type;
    if (pto__lower_tile_shape(t[i], &d[i][0], &d[i][1])) return 0;
  }
  int64_t bytes = pto__lower_mm_pack_bytes(t[0]->dtype, t[1]->dtype, d[0][0], d[0][1], d[1][1]);
  if (bytes <= 0 || d[1][0] != d[0][1]) return 0;
  int g = new_group(L, bytes, pos, pos);
  if (g < 0) return -1;
  L->plan[pos].mm_pack = g;
  return 0;
}

static int walk_block(lw *L, plan_walk *w, const pto_ir_block *b, int *pos);

static int walk_stmt(lw *L, plan_walk *w, const pto_ir_stmt *s, int *pos) {
  int me = (*pos)++;
  int end = L->plan[me].end;
  switch (s->kind) {
  case PTO_STMT_ASSIGN:
    use_expr(L, w, s->expr, me);
    for (int i = 0; i < s->nresults; i++)
      L->def_pos[s->results[i]->id] = me;
    if (s->nresults == 1 && s->results[0]->type->kind == PTO_TYPE_TILE) {
      if (s->expr->kind == PTO_EXPR_VALUE && L->group_of[s->expr->value->id] >= 0) {
        L->group_of[s->results[0]->id] = L->group_of[s->expr->value->id];
      } else if (define_tile(L, s->results[0], me)) {
        return -1;
      }
    }
    break;
  case PTO_STMT_OP:
    for (int i = 0; i < s->op.nargs; i++) {
      const pto_ir_arg *a = &s->op.args[i];
      if (a->kind == PTO_ARG_EXPR) use_expr(L, w, a->expr, me);
      if (a->kind == PTO_ARG_LIST)
        for (int j = 0; j < a->list.n; j++)
          use_expr(L, w, a->list.items[j], me);
    }
    for (int i = 0; i < s->nresults; i++) {
      const pto_ir_value *r = s->results[i];
      L->def_pos[r->id] = me;
      if (r->type->kind != PTO_TYPE_TILE) continue;
      const pto_ir_value *src = first_tile_operand(s);
      if (s->op.opc == PTO_OP_TILE_MOVE && src && L->group_of[src->id] >= 0) {
        L->group_of[r->id] = L->group_of[src->id];
        use_value(L, w, src, me);
      } else if (define_tile(L, r, me)) {
        return -1;
      }
    }
    if (plan_mm_pack(L, s, me)) return -1;
    break;
  case PTO_STMT_CALL:
    for (int i = 0; i < s->call.nargs; i++)
      use_expr(L, w, s->call.args[i], me);
    for (int i = 0; i < s->nresults; i++)
      L->def_pos[s->results[i]->id] = me;
    break;
  case PTO_STMT_FOR: {
    use_expr(L, w, s->loop.lo, me);
    use_expr(L, w, s->loop.hi, me);
    use_expr(L, w, s->loop.step, me);
    L->def_pos[s->loop.iv->id] = me;
    for (int i = 0; i < s->loop.niters; i++) {
      use_expr(L, w, s->loop.inits[i], me);
      const pto_ir_value *it = s->loop.iters[i];
      L->def_pos[it->id] = me;
      if (it->type->kind == PTO_TYPE_TILE) {
        if (define_tile(L, it, me)) return -1;
        int g = L->group_of[it->id];
        L->groups[g].end = end;
        L->groups[g].iter = 1;
        L->groups[g].loop_pos = me;
        L->groups[g].iter_index = i;
        if (i < s->nresults) L->group_of[s->results[i]->id] = g;
      }
    }
    for (int i = 0; i < s->nresults; i++)
      L->def_pos[s->results[i]->id] = end;
    if (w->nloops == (int)(sizeof w->loops / sizeof w->loops[0])) return -2;
    w->loops[w->nloops++] = me;
    if (walk_block(L, w, &s->loop.body, pos)) return -1;
    w->nloops--;
    break;
  }
  case PTO_STMT_IF:
    use_expr(L, w, s->branch.cond, me);
    for (int i = 0; i < s->nresults; i++) {
      const pto_ir_value *r = s->results[i];
      if (r->type->kind == PTO_TYPE_TILE) {
        if (define_tile(L, r, me)) return -1;
        L->groups[L->group_of[r->id]].end = end;
      }
    }
    if (walk_block(L, w, &s->branch.then_body, pos)) return -1;
    if (walk_block(L, w, &s->branch.else_body, pos)) return -1;
    for (int i = 0; i < s->nresults; i++)
      L->def_pos[s->results[i]->id] = end;
    break;
  case PTO_STMT_INCORE:
    if (walk_block(L, w, &s->incore.body, pos)) return -1;
    break;
  case PTO_STMT_YIELD:
  case PTO_STMT_RETURN:
    for (int i = 0; i < s->ret.n; i++)
      use_expr(L, w, s->ret.vals[i], me);
    break;
  }
  return 0;
}

static int walk_block(lw *L, plan_walk *w, const pto_ir_block *b, int *pos) {
  for (int i = 0; i < b->n; i++) {
    int r = walk_stmt(L, w, b->stmts[i], pos);
    if (r) return r;
  }
  return 0;
}

/* A yield that hands one loop-carried tile to another carried position would overwrite a buffer
 * it still reads: such sources go through temporaries first. */
static int plan_yield_temps(lw *L, const pto_ir_block *b) {
  for (int i = 0; i < b->n; i++) {
    const pto_ir_stmt *s = b->stmts[i];
    if (s->kind == PTO_STMT_FOR) {
      if (plan_yield_temps(L, &s->loop.body)) return -1;
      const pto_ir_block *body = &s->loop.body;
      if (body->n == 0 || body->stmts[body->n - 1]->kind != PTO_STMT_YIELD) continue;
      const pto_ir_stmt *y = body->stmts[body->n - 1];
      int ypos = -1;
      for (int p = 0; p < L->npos; p++)
        if (L->plan[p].s == y) ypos = p;
      int need = 0;
      for (int j = 0; j < y->ret.n && j < s->loop.niters; j++) {
        const pto_ir_expr *e = y->ret.vals[j];
        if (e->kind != PTO_EXPR_VALUE) continue;
        int gs = pto__lower_group_find(L, L->group_of[e->value->id]);
        if (gs < 0) continue;
        for (int q = 0; q < s->loop.niters; q++) {
          int gi = pto__lower_group_find(L, L->group_of[s->loop.iters[q]->id]);
          if (q != j && gi == gs) need = 1;
        }
      }
      if (need && ypos >= 0) {
        int first = -1;
        for (int j = 0; j < y->ret.n; j++) {
          const pto_ir_expr *e = y->ret.vals[j];
          int64_t bytes = 64;
          if (e->kind == PTO_EXPR_VALUE) tile_bytes(e->value->type, &bytes);
          int g = new_group(L, bytes, ypos, ypos);
          if (g < 0) return -1;
          if (first < 0) first = g;
        }
        L->plan[ypos].yield_tmp = first;
      }
    }
    if (s->kind == PTO_STMT_IF) {
      if (plan_yield_temps(L, &s->branch.then_body)) return -1;
      if (plan_yield_temps(L, &s->branch.else_body)) return -1;
    }
  }
  return 0;
}

/* ---- fusion ------------------------------------------------------------------------------ */

static int tile_result_count(const pto_ir_stmt *s, int64_t *out) {
  if (s->kind != PTO_STMT_OP || s->nresults != 1) return -1;
  const pto_ir_type *t = s->results[0]->type;
  int64_t r, c;
  if (t->kind != PTO_TYPE_TILE || pto__lower_static_int(t->dims[0], &r) ||
      pto__lower_static_int(t->dims[1], &c))
    return -1;
  *out = r * c;
  return 0;
}

/* Elementwise statements that may share one loop. f64 exp and log call libm, which keeps a loop
 * scalar: they stay alone so the ops around them still vectorize (f32 ones are inline code). */
static int fusable(const pto_ir_stmt *s, int64_t *count) {
  if (s->kind != PTO_STMT_OP || !pto__lower_elementwise_kind(s->op.opc)) return 0;
  if (s->nresults == 1 && s->results[0]->type->kind == PTO_TYPE_TILE &&
      pto__lower_fn_calls_libm(pto_op_info_get(s->op.opc)->fn, s->results[0]->type->dtype))
    return 0;
  return tile_result_count(s, count) == 0;
}

#define LW_MAX_FUSE 16

/* A row expansion reads its [R,1] operand at the start of each row, from that tile's buffer: the
 * operand must come from before the run (from position `from` on), not from inside it. */
static int expand_operand_in(lw *L, int pos, int from) {
  const pto_ir_stmt *s = L->plan[pos].s;
  if (pto__lower_elementwise_kind(s->op.opc) != 5 || s->op.nargs < 2) return 0;
  const pto_ir_arg *a = &s->op.args[1];
  if (a->kind != PTO_ARG_EXPR || a->expr->kind != PTO_EXPR_VALUE) return 1;
  return L->def_pos[a->expr->value->id] >= from;
}

/* Consecutive elementwise statements of one block over tiles of one size become one loop; a
 * result used only inside its run needs no buffer. */
static void plan_fusion(lw *L) {
  for (int p = 0; p < L->npos;) {
    int64_t count, c2;
    if (!fusable(L->plan[p].s, &count)) {
      p++;
      continue;
    }
    int q = p + 1;
    while (q < L->npos && q - p < LW_MAX_FUSE && L->plan[q].blk == L->plan[p].blk &&
           fusable(L->plan[q].s, &c2) && c2 == count && !expand_operand_in(L, q, p))
      q++;
    int n = q - p;
    if (n > 1) {
      L->plan[p].fuse_len = n;
      for (int m = p; m < q; m++) {
        const pto_ir_value *r = L->plan[m].s->results[0];
        int g = pto__lower_group_find(L, L->group_of[r->id]);
        if (g >= 0 && L->groups[g].end < q && !L->groups[g].iter) {
          L->groups[g].dead = 1;
          L->group_of[r->id] = LW_FUSED;
        }
      }
    }
    p = q;
  }
}

/* ---- streaming ----------------------------------------------------------------------------- */

const pto_ir_value *pto__lower_stmt_value_arg(const pto_ir_stmt *s, int i) {
  if (i >= s->op.nargs || s->op.args[i].kw) return NULL;
  const pto_ir_arg *a = &s->op.args[i];
  if (a->kind != PTO_ARG_EXPR || a->expr->kind != PTO_EXPR_VALUE) return NULL;
  return a->expr->value;
}

static int is_tile_of(const pto_ir_value *v, int64_t rows, int64_t cols) {
  int64_t r, c;
  return v && v->type->kind == PTO_TYPE_TILE && v->type->rank == 2 &&
         !pto__lower_static_int(v->type->dims[0], &r) &&
         !pto__lower_static_int(v->type->dims[1], &c) && r == rows && c == cols;
}

/* tile.loads, then one elementwise op or a fused run, then a tile.store of its result, where
 * every tile of the run dies inside it: the loads' tiles, the intermediates and the stored tile
 * are never needed as buffers if each element is loaded, computed and stored in one pass (the
 * copies into and out of the scratch arena are what such a kernel spends its time on). Code
 * generation still keeps the buffered lowering for the cases the streamed loop cannot do (a
 * load whose valid region does not cover the store's, strided tensors, overlapping windows), so
 * the plan keeps every buffer. Integer division stays buffered: it must see the padding's zero
 * divisors. */
static void plan_streams(lw *L) {
  for (int p = 0; p < L->npos; p++) {
    const pto_ir_block *blk = L->plan[p].blk;
    int bi = 0;
    while (bi < blk->n && blk->stmts[bi] != L->plan[p].s)
      bi++;
    int q = bi, nloads = 0;
    while (q < blk->n && blk->stmts[q]->kind == PTO_STMT_OP &&
           blk->stmts[q]->op.opc == PTO_OP_TILE_LOAD && blk->stmts[q]->nresults == 1)
      q++, nloads++;
    if (q >= blk->n) continue;
    int qpos = p + (q - bi), nrun = 0;
    const pto_ir_stmt *s = blk->stmts[q];
    if (s->kind == PTO_STMT_OP && pto__lower_elementwise_kind(s->op.opc) && s->nresults == 1)
      nrun = L->plan[qpos].fuse_len > 1 ? L->plan[qpos].fuse_len : 1;
    /* a run is streamed whole or not at all: never from its middle */
    int skip = nloads == 0 && nrun > 1 ? nrun - 1 : 0;
    int st = q + nrun;
    if (st >= blk->n || (nloads == 0 && nrun == 0)) {
      p += skip;
      continue;
    }
    const pto_ir_stmt *store = blk->stmts[st];
    if (store->kind != PTO_STMT_OP || store->op.opc != PTO_OP_TILE_STORE || store->nresults > 1) {
      p += skip;
      continue;
    }
    const pto_ir_value *sv = pto__lower_stmt_value_arg(store, 0);
    int spos = p + (st - bi);
    int64_t rows, cols;
    if (!sv || sv->type->kind != PTO_TYPE_TILE || pto__lower_static_int(sv->type->dims[0], &rows) ||
        pto__lower_static_int(sv->type->dims[1], &cols)) {
      p += skip;
      continue;
    }
    int ok = L->def_pos[sv->id] >= p && L->def_pos[sv->id] < spos && L->last_use[sv->id] == spos;
    for (int m = bi; ok && m < st; m++) {
      const pto_ir_stmt *x = blk->stmts[m];
      const pto_ir_value *r = x->results[0];
      if (!is_tile_of(r, rows, cols)) ok = 0;
      /* every other tile of the run is read inside it and dies there */
      if (r != sv && (L->last_use[r->id] <= L->def_pos[r->id] || L->last_use[r->id] >= spos))
        ok = 0;
      if (m >= q) {
        pto_opcode op = x->op.opc;
        int kind = pto__lower_elementwise_kind(op);
        pto_op_fn fn = pto_op_info_get(op)->fn;
        if ((kind == 1 || kind == 2 || kind == 5) && (fn == PTO_FN_DIV || fn == PTO_FN_REM) &&
            !pto_dtype_is_float(r->type->dtype))
          ok = 0;
        int ntiles = kind == 1 ? 2 : kind == 6 ? (op == PTO_OP_TILE_SELS ? 2 : 3) : 1;
        for (int i = 0; i < ntiles; i++)
          if (!is_tile_of(pto__lower_stmt_value_arg(x, i), rows, cols)) ok = 0;
        if (kind == 5 && (!is_tile_of(pto__lower_stmt_value_arg(x, 1), rows, 1) ||
                          expand_operand_in(L, m - bi + p, p)))
          ok = 0;
        if (kind == 7) ok = 0; /* its [1,C] operand is read at the column: runs by rows only */
      }
    }
    if (!ok) {
      p += skip;
      continue;
    }
    L->plan[p].stream_len = st - bi + 1;
    L->plan[p].stream_loads = nloads;
    p = spos;
  }
}

/* ---- deferred stores ----------------------------------------------------------------------- */

/* Whether expression e reads value v (bounded: PTO_IR_MAX_EXPR_HEIGHT). */
static int expr_reads(const pto_ir_expr *e, const pto_ir_value *v) {
  if (!e) return 0;
  switch (e->kind) {
  case PTO_EXPR_VALUE: return e->value == v;
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: return expr_reads(e->a, v);
  case PTO_EXPR_BINARY: return expr_reads(e->lhs, v) || expr_reads(e->rhs, v);
  default: return 0;
  }
}

/* Whether some tensor value other than a kernel parameter appears in e. */
static int expr_nonparam_tensor(lw *L, const pto_ir_expr *e) {
  if (!e) return 0;
  switch (e->kind) {
  case PTO_EXPR_VALUE:
    return (e->value->type->kind == PTO_TYPE_TENSOR || e->value->type->kind == PTO_TYPE_DTENSOR) &&
           L->def_pos[e->value->id] >= 0;
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: return expr_nonparam_tensor(L, e->a);
  case PTO_EXPR_BINARY: return expr_nonparam_tensor(L, e->lhs) || expr_nonparam_tensor(L, e->rhs);
  default: return 0;
  }
}

typedef struct expr_list {
  const pto_ir_expr **out;
  int n, cap;
} expr_list;

static int put_expr(void *ctx, const pto_ir_expr *e) {
  expr_list *l = ctx;
  if (l->n == l->cap) return 1; /* more than fit: stop */
  l->out[l->n++] = e;
  return 0;
}

/* The expressions statement s reads itself (not its nested blocks: pto_ir_stmt_each_expr): n of
 * them into out, -1 where more than cap. */
static int stmt_exprs(const pto_ir_stmt *s, const pto_ir_expr **out, int cap) {
  expr_list l = {out, 0, cap};
  return pto_ir_stmt_each_expr(s, put_expr, &l) ? -1 : l.n;
}

/* A streamed run with no loads (its inputs are tiles: the division of a row softmax) straight in
 * the body of a for loop may leave its values in a staging buffer and have the loop's next
 * iteration write them to the tensor while it computes (lw_defer): the stores past the cache then
 * overlap arithmetic instead of stalling the core at the end of every tile. That is invisible
 * when nothing in the loop reads or writes the tensor but the run's store, and no other tensor
 * shares its bytes: the first is checked here (the tensor is a kernel parameter that the body
 * names nowhere else, every tensor the body names is a parameter, no dist.* op or call), the
 * second at run time (pto__lower_streamed). The staging buffer is live for the whole loop. */
static int plan_deferred_stores(lw *L) {
  for (int p = 0; p < L->npos; p++) {
    int n = L->plan[p].stream_len;
    if (n <= 1 || L->plan[p].stream_loads != 0) continue;
    const pto_ir_block *blk = L->plan[p].blk;
    int lp = -1;
    for (int q = p - 1; q >= 0 && lp < 0; q--)
      if (L->plan[q].s->kind == PTO_STMT_FOR && &L->plan[q].s->loop.body == blk) lp = q;
    if (lp < 0 || L->plan[lp].defer_at >= 0) continue;
    const pto_ir_stmt *store = L->plan[p + n - 1].s;
    const pto_ir_value *sv = pto__lower_stmt_value_arg(store, 0),
                       *tv = pto__lower_stmt_value_arg(store, 2);
    int64_t rows, cols;
    if (!sv || !tv || tv->type->kind != PTO_TYPE_TENSOR || L->def_pos[tv->id] >= 0 ||
        pto__lower_tile_shape(sv->type, &rows, &cols) || rows <= 0 || cols <= 0 ||
        (store->nresults == 1 && L->last_use[store->results[0]->id] >= 0))
      continue;
    /* what the non-temporal path stores: floats of the tensor's dtype, rows of whole lines */
    pto_dtype dt = sv->type->dtype;
    if (!pto__lower_x86_streaming() || tv->type->dtype != dt ||
        !(dt == PTO_DTYPE_F32 || dt == PTO_DTYPE_F16 || dt == PTO_DTYPE_BF16) ||
        cols * (int64_t)pto_dtype_size(dt) % 64)
      continue;
    int ok = 1;
    for (int q = lp + 1; ok && q <= L->plan[lp].end; q++) {
      const pto_ir_stmt *s = L->plan[q].s;
      if (s->kind == PTO_STMT_CALL ||
          (s->kind == PTO_STMT_OP && !strncmp(pto_op_info_get(s->op.opc)->name, "dist.", 5))) {
        ok = 0;
        break;
      }
      const pto_ir_expr *ex[64];
      int ne = stmt_exprs(s, ex, 64);
      if (ne < 0) ok = 0;
      for (int i = 0; ok && i < ne; i++) {
        if (expr_nonparam_tensor(L, ex[i])) ok = 0;
        /* the tensor only as the store's target */
        if (expr_reads(ex[i], tv) && !(s == store && store->op.args[2].expr == ex[i])) ok = 0;
      }
    }
    if (!ok) continue;
    int g =
        new_group(L, rows * cols * (int64_t)pto_dtype_size(sv->type->dtype), lp, L->plan[lp].end);
    if (g < 0) return -1;
    L->plan[p].defer = g;
    L->plan[lp].defer_at = p;
  }
  return 0;
}

/* Inside a fused loop every statement touches element k before any touches k+1: buffers the run
 * reads or writes must not share bytes with each other for the whole run, so their ranges are
 * widened to it. */
static void widen_fused_runs(lw *L) {
  for (int p = 0; p < L->npos; p++) {
    int n = L->plan[p].fuse_len;
    if (n <= 1) continue;
    for (int m = p; m < p + n; m++) {
      const pto_ir_stmt *s = L->plan[m].s;
      for (int i = -1; i < s->op.nargs; i++) {
        const pto_ir_value *v = NULL;
        if (i < 0) {
          v = s->results[0];
        } else {
          const pto_ir_arg *a = &s->op.args[i];
          if (a->kind == PTO_ARG_EXPR && a->expr->kind == PTO_EXPR_VALUE) v = a->expr->value;
        }
        int g = v ? pto__lower_group_find(L, L->group_of[v->id]) : -1;
        if (g < 0) continue;
        if (L->groups[g].start > p) L->groups[g].start = p;
        if (L->groups[g].end < p + n - 1) L->groups[g].end = p + n - 1;
      }
    }
  }
}

/* ---- in-place reuse --------------------------------------------------------------------- */

/* The final yield of the for statement at loop_pos, or NULL. */
static const pto_ir_stmt *loop_yield(lw *L, int loop_pos) {
  const pto_ir_block *body = &L->plan[loop_pos].s->loop.body;
  if (body->n == 0 || body->stmts[body->n - 1]->kind != PTO_STMT_YIELD) return NULL;
  return body->stmts[body->n - 1];
}

/* May group g (values of one loop body) share the loop-carried buffer G? Every value of g is
 * defined after every body value held in G was last read (at the same statement too when
 * same_stmt_ok: an elementwise op reads each element before writing it), none outlives the body,
 * and g's values reach the yield only at G's index (and at least one does: else nothing is
 * gained). Then the yield's copy disappears. */
static int may_join_iter(lw *L, int G, int g, int same_stmt_ok) {
  const lw_group *GG = &L->groups[G];
  int lp = GG->loop_pos, end = L->plan[lp].end;
  const pto_ir_stmt *y = loop_yield(L, lp);
  if (!y) return 0;
  int first_def = end + 1, yielded = 0;
  for (int v = 0; v < L->k->nvalues; v++) {
    if (pto__lower_group_find(L, L->group_of[v]) != g) continue;
    if (L->def_pos[v] <= lp || L->def_pos[v] >= end || L->last_use[v] > end) return 0;
    if (L->def_pos[v] < first_def) first_def = L->def_pos[v];
    for (int j = 0; j < y->ret.n; j++) {
      const pto_ir_expr *e = y->ret.vals[j];
      if (e->kind != PTO_EXPR_VALUE || e->value->id != v) continue;
      if (j != GG->iter_index) return 0;
      yielded = 1;
    }
  }
  if (!yielded) return 0;
  for (int v = 0; v < L->k->nvalues; v++) {
    if (pto__lower_group_find(L, L->group_of[v]) != G) continue;
    if (L->def_pos[v] >= end) continue; /* the loop's result, after the body */
    if (L->last_use[v] > first_def || (!same_stmt_ok && L->last_use[v] == first_def)) return 0;
  }
  return 1;
}

/* An elementwise op (any operand) or matmul_acc (its accumulator) whose operand dies at this
 * statement writes into that operand's buffer: each element is read before it is written, so
 * the reuse is invisible. */
static void plan_in_place(lw *L) {
  for (int pos = 0; pos < L->npos; pos++) {
    const pto_ir_stmt *s = L->plan[pos].s;
    if (s->kind != PTO_STMT_OP || s->nresults != 1) continue;
    int acc_only = s->op.opc == PTO_OP_TILE_MATMUL_ACC;
    if (!pto__lower_elementwise_kind(s->op.opc) && !acc_only) continue;
    const pto_ir_value *r = s->results[0];
    int gr = pto__lower_group_find(L, L->group_of[r->id]);
    if (gr < 0 || L->groups[gr].iter) continue;
    for (int i = 0; i < (acc_only ? 1 : s->op.nargs); i++) {
      const pto_ir_arg *a = &s->op.args[i];
      if (a->kind != PTO_ARG_EXPR || a->expr->kind != PTO_EXPR_VALUE) continue;
      const pto_ir_value *v = a->expr->value;
      int g = pto__lower_group_find(L, L->group_of[v->id]);
      if (g < 0 || g == gr || L->groups[g].bytes != L->groups[gr].bytes) continue;
      if (pto_dtype_size(v->type->dtype) != pto_dtype_size(r->type->dtype)) continue;
      if (L->groups[g].iter) {
        if (!may_join_iter(L, g, gr, 1)) continue;
        /* The carried group already spans the loop; r joins it. */
        group_union(L, g, gr);
        break;
      }
      if (L->groups[g].end != pos) continue;
      /* Both groups are live at pos, so no other group took either's bytes here: merge. */
      group_union(L, g, gr);
      break;
    }
  }
}

/* May group g, whose values are written from its start on, take over buffer G? When G is a
 * loop-carried buffer (an if's result that the loop's yield took over), the carried value and
 * everything else of G defined before g's start must have been read for the last time before it:
 * else `%mn = ..; %d = tile.sub(%m, %mn); yield %mn` in a branch would overwrite %m before the
 * sub reads it. */
static int free_from(lw *L, int G, int start) {
  if (!L->groups[G].iter) return 1;
  for (int v = 0; v < L->k->nvalues; v++) {
    if (pto__lower_group_find(L, L->group_of[v]) != G || L->def_pos[v] >= start) continue;
    if (L->last_use[v] >= start) return 0;
  }
  return 1;
}

static int find_pos(lw *L, const pto_ir_stmt *s, int from, int to) {
  for (int q = from; q <= to && q < L->npos; q++)
    if (L->plan[q].s == s) return q;
  return -1;
}

static int same_size(lw *L, int g1, int g2) { return L->groups[g1].bytes == L->groups[g2].bytes; }

/* Buffers that carried values and if results can take over instead of being copied into: a
 * loop's init that dies at the loop becomes its carried buffer; a yielded value defined in the
 * body (or branch) that dies at the yield is computed directly in the destination buffer. */
static void plan_takeovers(lw *L) {
  for (int pos = 0; pos < L->npos; pos++) {
    const pto_ir_stmt *s = L->plan[pos].s;
    if (s->kind == PTO_STMT_FOR) {
      const pto_ir_stmt *y = loop_yield(L, pos);
      for (int i = 0; i < s->loop.niters; i++) {
        int gi = pto__lower_group_find(L, L->group_of[s->loop.iters[i]->id]);
        if (gi < 0) continue;
        const pto_ir_expr *e = s->loop.inits[i];
        if (e->kind == PTO_EXPR_VALUE) {
          int g = pto__lower_group_find(L, L->group_of[e->value->id]);
          if (g >= 0 && g != gi && !L->groups[g].iter && L->groups[g].end == pos &&
              same_size(L, g, gi))
            group_union(L, gi, g);
        }
        if (y && i < y->ret.n && y->ret.vals[i]->kind == PTO_EXPR_VALUE) {
          int g = pto__lower_group_find(L, L->group_of[y->ret.vals[i]->value->id]);
          if (g >= 0 && g != gi && !L->groups[g].iter && same_size(L, g, gi) &&
              may_join_iter(L, gi, g, 0))
            group_union(L, gi, g);
        }
      }
    }
    if (s->kind == PTO_STMT_IF && s->nresults > 0) {
      for (int side = 0; side < 2; side++) {
        const pto_ir_block *body = side ? &s->branch.else_body : &s->branch.then_body;
        if (body->n == 0 || body->stmts[body->n - 1]->kind != PTO_STMT_YIELD) continue;
        const pto_ir_stmt *y = body->stmts[body->n - 1];
        int ypos = find_pos(L, y, pos + 1, L->plan[pos].end);
        for (int i = 0; i < s->nresults && i < y->ret.n; i++) {
          int gr = pto__lower_group_find(L, L->group_of[s->results[i]->id]);
          const pto_ir_expr *e = y->ret.vals[i];
          if (gr < 0 || e->kind != PTO_EXPR_VALUE) continue;
          int g = pto__lower_group_find(L, L->group_of[e->value->id]);
          if (g < 0 || g == gr || L->groups[g].iter || !same_size(L, g, gr)) continue;
          if (L->groups[g].start <= pos || L->groups[g].end != ypos) continue;
          if (!free_from(L, gr, L->groups[g].start)) continue;
          int twice = 0;
          for (int j = 0; j < y->ret.n; j++)
            if (j != i && y->ret.vals[j]->kind == PTO_EXPR_VALUE &&
                pto__lower_group_find(L, L->group_of[y->ret.vals[j]->value->id]) == g)
              twice = 1;
          if (!twice) group_union(L, gr, g);
        }
      }
    }
  }
}

/* ---- offsets ------------------------------------------------------------------------------ */

static int cmp_start(const lw_group *g, int x, int y) {
  if (g[x].start != g[y].start) return g[x].start < g[y].start ? -1 : 1;
  return x < y ? -1 : x > y;
}

static void assign_offsets(lw *L, int *order) {
  int n = 0;
  for (int g = 0; g < L->ngroups; g++)
    if (pto__lower_group_find(L, g) == g && !L->groups[g].dead) order[n++] = g;
  /* insertion sort by start: kernels have few tiles */
  for (int i = 1; i < n; i++) {
    int x = order[i], j = i - 1;
    while (j >= 0 && cmp_start(L->groups, order[j], x) > 0) {
      order[j + 1] = order[j];
      j--;
    }
    order[j + 1] = x;
  }
  int64_t top = 0;
  for (int i = 0; i < n; i++) {
    lw_group *g = &L->groups[order[i]];
    int64_t size = (g->bytes + 63) & ~(int64_t)63;
    int64_t off = 0;
    for (int again = 1; again;) {
      again = 0;
      for (int j = 0; j < i; j++) {
        lw_group *h = &L->groups[order[j]];
        int64_t hsize = (h->bytes + 63) & ~(int64_t)63;
        if (h->end < g->start || g->end < h->start) continue; /* not live together */
        if (off < h->offset + hsize && h->offset < off + size) {
          off = h->offset + hsize;
          again = 1;
        }
      }
    }
    g->offset = off;
    if (off + size > top) top = off + size;
  }
  L->footprint = top;
}

/* ---- loads as views ---------------------------------------------------------------------- */

/* A tile.load copies a window of a tensor into the tile's buffer. When the window is the same
 * bytes in the same order (checked at run time: unit column stride, rows back to back, nothing
 * clipped or padded, no conversion), the tile may instead be the tensor's memory itself, as long
 * as nothing can tell the difference: nothing writes any tensor (tile.store, dist.*) from the load
 * to the tile's last use (to the store of a streamed run that reads it), and no other value
 * shares the tile's buffer (an in-place op, a loop carry, a takeover would write into it).
 * Kernels that stream a tile through reductions (a row softmax) then read the tensor once,
 * overlapped with the arithmetic, instead of copying it first. */
static int writes_tensor(const pto_ir_stmt *s) {
  if (s->kind != PTO_STMT_OP) return 0;
  const pto_op_info *info = pto_op_info_get(s->op.opc);
  return !info || info->write_mask || strncmp(info->name, "dist.", 5) == 0;
}

/* Whether a statement at positions from..to (both included) writes a tensor (writes_tensor). */
static int tensor_written_in(const lw *L, int from, int to) {
  for (int q = from; q <= to && q < L->npos; q++)
    if (writes_tensor(L->plan[q].s)) return 1;
  return 0;
}

/* Whether expression e reads a value of group g. */
static int expr_reads_group(lw *L, const pto_ir_expr *e, int g) {
  if (!e) return 0;
  switch (e->kind) {
  case PTO_EXPR_VALUE: return pto__lower_group_find(L, L->group_of[e->value->id]) == g;
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: return expr_reads_group(L, e->a, g);
  case PTO_EXPR_BINARY: return expr_reads_group(L, e->lhs, g) || expr_reads_group(L, e->rhs, g);
  default: return 0;
  }
}

/* A tile.load's tile (at p, group g) whose values are that tile and tile.moves of it (same dtype
 * and shape), each read only by such a move or as the right operand of a matmul of at most
 * LW_VIEW_MM_ROWS rows, may be a view whose rows lie any distance apart in the tensor: the matmul
 * reads its right operand row by row with the view's row stride (lw_tile.rs), so a weight goes
 * from the tensor into the multiply-adds once instead of through a copy first (a decode step's
 * [1, K] x [K, N] is bound by those bytes). A matmul of more rows reads r once per register block
 * of rows: a copy, paid once, keeps those reads contiguous (rows a power of two apart in the
 * tensor would share cache sets). */
#define LW_VIEW_MM_ROWS 8

static int matmul_right_only(lw *L, int g, int p) {
  const pto_ir_type *t0 = L->plan[p].s->results[0]->type;
  for (int q = 0; q < L->npos; q++) {
    const pto_ir_stmt *s = L->plan[q].s;
    int right = -1; /* the one argument that may read g */
    if (s->kind == PTO_STMT_OP && s->op.opc == PTO_OP_TILE_MOVE) right = 0;
    if (s->kind == PTO_STMT_OP && pto_op_info_get(s->op.opc)->cls == PTO_OPC_MATMUL) {
      right = s->op.opc == PTO_OP_TILE_MATMUL_ACC ? 2 : 1;
      const pto_ir_value *lv = pto__lower_stmt_value_arg(s, right - 1);
      int64_t rows, cols;
      if (!lv || pto__lower_tile_shape(lv->type, &rows, &cols) || rows > LW_VIEW_MM_ROWS)
        right = -1;
    }
    for (int i = 0; i < s->nresults; i++) {
      const pto_ir_value *v = s->results[i];
      if (pto__lower_group_find(L, L->group_of[v->id]) != g || q == p) continue;
      int64_t r0, c0, r1, c1;
      if (s->kind != PTO_STMT_OP || s->op.opc != PTO_OP_TILE_MOVE || v->type->dtype != t0->dtype ||
          pto__lower_tile_shape(v->type, &r1, &c1) || pto__lower_tile_shape(t0, &r0, &c0) ||
          r0 != r1 || c0 != c1)
        return 0;
    }
    const pto_ir_expr *ex[64];
    int ne = stmt_exprs(s, ex, 64);
    if (ne < 0) return 0;
    for (int i = 0; i < ne; i++) {
      if (!expr_reads_group(L, ex[i], g)) continue;
      if (right < 0 || right >= s->op.nargs || s->op.args[right].kind != PTO_ARG_EXPR ||
          s->op.args[right].expr != ex[i] || ex[i]->kind != PTO_EXPR_VALUE)
        return 0;
    }
  }
  return 1;
}

static int plan_views(lw *L, const pto_ir_func *k) {
  int nv = k->nvalues > 0 ? k->nvalues : 1;
  int *members = pto_calloc((size_t)(L->ngroups + 1), sizeof *members);
  if (!members) return -1; /* not a silent fallback: the code would differ */
  for (int v = 0; v < nv; v++) {
    int g = L->group_of[v] >= 0 ? pto__lower_group_find(L, L->group_of[v]) : -1;
    if (g >= 0) members[g]++;
  }
  for (int p = 0; p < L->npos; p++) {
    const pto_ir_stmt *s = L->plan[p].s;
    if (s->kind != PTO_STMT_OP || s->op.opc != PTO_OP_TILE_LOAD || s->nresults != 1) continue;
    const pto_ir_value *r = s->results[0];
    int g = L->group_of[r->id] >= 0 ? pto__lower_group_find(L, L->group_of[r->id]) : -1;
    if (g < 0 || L->groups[g].iter || L->groups[g].dead) continue;
    int kind = members[g] == 1 ? 1 : 0;
    if (matmul_right_only(L, g, p)) kind = 2;
    if (!kind) continue;
    int end = kind == 2 ? L->groups[g].end : L->last_use[r->id], ok = end > p;
    /* a streamed run computes and stores element by element: a tile it reads is in use until
     * its store */
    for (int q = 0; q < L->npos; q++)
      if (L->plan[q].stream_len > 0 && q <= end && end < q + L->plan[q].stream_len)
        end = q + L->plan[q].stream_len - 1;
    L->plan[p].view = ok && !tensor_written_in(L, p + 1, end) ? kind : 0;
  }
  free(members);
  return 0;
}

/* Whether the tile of group g defined at p, and tile.moves of it, are read only by elementwise
 * statements outside streamed runs, as their element operands (not a row expansion's [R,1]
 * operand), or by such moves: those statements run row by row (pto__lower_fused) and may read a
 * gather through its index tile. g's other values are elementwise results (in place: written to
 * the buffer, not through the view). */
#define LW_VIEW_MOVES 16

static int elementwise_only(lw *L, int g, int p) {
  const pto_ir_value *vv[LW_VIEW_MOVES + 1] = {L->plan[p].s->results[0]};
  int nv = 1;
  for (int q = p + 1; q < L->npos; q++) {
    const pto_ir_stmt *s = L->plan[q].s;
    int kind = s->kind == PTO_STMT_OP ? pto__lower_elementwise_kind(s->op.opc) : 0;
    int move = s->kind == PTO_STMT_OP && s->op.opc == PTO_OP_TILE_MOVE && s->nresults == 1;
    const pto_ir_expr *ex[64];
    int ne = stmt_exprs(s, ex, 64);
    if (ne < 0) return 0;
    for (int i = 0; i < ne; i++) {
      int reads = 0;
      for (int m = 0; m < nv; m++)
        reads |= expr_reads(ex[i], vv[m]);
      if (!reads) continue;
      if ((!kind && !move) || ex[i]->kind != PTO_EXPR_VALUE) return 0;
      if ((kind == 5 || kind == 7) && s->op.nargs > 1 && s->op.args[1].expr == ex[i]) return 0;
      for (int r = 0; r <= q; r++)
        if (L->plan[r].stream_len > 0 && q < r + L->plan[r].stream_len) return 0;
      if (move) {
        if (nv > LW_VIEW_MOVES) return 0;
        vv[nv++] = s->results[0];
      }
    }
    for (int i = 0; i < s->nresults; i++)
      if (pto__lower_group_find(L, L->group_of[s->results[i]->id]) == g && !kind && !move) return 0;
  }
  for (int q = 0; q < p; q++) /* nothing before the gather shares its buffer */
    for (int i = 0; i < L->plan[q].s->nresults; i++)
      if (pto__lower_group_find(L, L->group_of[L->plan[q].s->results[i]->id]) == g) return 0;
  return 1;
}

/* A tile.gather_rows (at p) whose tile is read only as the right operand of small matmuls (as
 * matmul_right_only says of a load) or only by elementwise statements (elementwise_only) need
 * not be copied: the matmul, or the elementwise loop row by row, reads row k of it at row idx[k]
 * of the tensor (lw_tile.ri) through the index tile's buffer, when at run time the tensor's
 * columns are unit-strided (same dtype always: the op's rule). The indices are all checked
 * first, as for the copy. That is invisible when nothing writes a tensor from the gather to the
 * tile's last use, and nothing writes the index tile's buffer in that range: no value of its
 * group is defined there and it is no loop-carried buffer; the range stays inside every loop
 * around the gather (a later iteration's index tile is another). The index tile's group then
 * lives to that end: decided before the offsets are assigned. The decode attention reads K's and
 * V's cached rows straight from the cache this way, for q . K (a mul, then a row_sum) and P . V
 * (a one-row matmul) (bench/RESULTS.md, attnlow). */
static void plan_row_views(lw *L) {
  for (int p = 0; p < L->npos; p++) {
    const pto_ir_stmt *s = L->plan[p].s;
    if (s->kind != PTO_STMT_OP || s->op.opc != PTO_OP_TILE_GATHER_ROWS || s->nresults != 1)
      continue;
    const pto_ir_value *r = s->results[0], *ix = pto__lower_stmt_value_arg(s, 1);
    int g = L->group_of[r->id] >= 0 ? pto__lower_group_find(L, L->group_of[r->id]) : -1;
    int gi = ix && L->group_of[ix->id] >= 0 ? pto__lower_group_find(L, L->group_of[ix->id]) : -1;
    if (g < 0 || gi < 0 || g == gi || L->groups[g].iter || L->groups[g].dead ||
        L->groups[gi].iter || L->groups[gi].dead || ix->type->dtype != PTO_DTYPE_I32 ||
        !(matmul_right_only(L, g, p) || elementwise_only(L, g, p)))
      continue;
    int end = L->groups[g].end, ok = end > p;
    for (int q = 0; ok && q < p; q++)
      if (L->plan[q].s->kind == PTO_STMT_FOR && L->plan[q].end >= p && L->plan[q].end < end) ok = 0;
    if (ok && tensor_written_in(L, p + 1, end)) ok = 0;
    for (int v = 0; ok && v < L->k->nvalues; v++)
      if (L->group_of[v] >= 0 && pto__lower_group_find(L, L->group_of[v]) == gi &&
          L->def_pos[v] > p && L->def_pos[v] <= end)
        ok = 0;
    if (!ok) continue;
    L->plan[p].view = 3;
    if (L->groups[gi].end < end) L->groups[gi].end = end;
    if (L->last_use[ix->id] < end) L->last_use[ix->id] = end;
  }
}

pto_status pto__lower_plan(lw *L) {
  const pto_ir_func *k = L->k;
  L->npos = count_block(&k->body);
  int nv = k->nvalues > 0 ? k->nvalues : 1;
  L->plan = pto_calloc((size_t)(L->npos + 1), sizeof *L->plan);
  L->def_pos = pto_malloc((size_t)nv * sizeof *L->def_pos);
  L->group_of = pto_malloc((size_t)nv * sizeof *L->group_of);
  L->last_use = pto_malloc((size_t)nv * sizeof *L->last_use);
  if (!L->plan || !L->def_pos || !L->group_of || !L->last_use)
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory planning @%s", k->name);
  for (int i = 0; i < nv; i++) {
    L->def_pos[i] = -1;
    L->group_of[i] = -1;
    L->last_use[i] = -1;
  }
  int pos = 0;
  number_block(L, &k->body, &pos);
  plan_walk w = {.nloops = 0};
  pos = 0;
  int r = walk_block(L, &w, &k->body, &pos);
  if (r == -2)
    return pto_status_make(PTO_STATUS_UNIMPLEMENTED, "@%s: loops nested deeper than 64", k->name);
  if (r || plan_yield_temps(L, &k->body))
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory planning @%s", k->name);
  plan_fusion(L);
  plan_streams(L);
  if (plan_deferred_stores(L))
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory planning @%s", k->name);
  plan_in_place(L);
  plan_takeovers(L);
  widen_fused_runs(L);
  plan_row_views(L);
  int *order = pto_malloc((size_t)(L->ngroups + 1) * sizeof *order);
  if (!order)
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory planning @%s", k->name);
  assign_offsets(L, order);
  free(order);
  if (plan_views(L, k))
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory planning @%s", k->name);
#if defined(PTO_DEBUG_CHECKS) || !defined(NDEBUG)
  return pto__lower_plan_check(L);
#else
  return PTO_OK;
#endif
}

/* ---- invariants --------------------------------------------------------------------------- */

static pto_status broken(const lw *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static pto_status broken(const lw *L, const char *fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return pto_status_make(PTO_STATUS_INTERNAL,
                         "the kernel plan of @%s breaks an invariant: %s (a compiler bug: please "
                         "report it with the program)",
                         L->k->name, what);
}

static int group_ok(const lw *L, int g) { return g >= 0 && g < L->ngroups; }

/* A run of n statements from position p stays in p's block. */
static int run_in_block(const lw *L, int p, int n) {
  if (n < 1 || p + n > L->npos) return 0;
  for (int m = p; m < p + n; m++)
    if (L->plan[m].blk != L->plan[p].blk) return 0;
  return 1;
}

/* The root of group g without path compression (the checks change nothing); -1 for none or for
 * a parent chain longer than the groups. */
static int root_of(const lw *L, int g) {
  for (int n = 0; group_ok(L, g) && n <= L->ngroups; n++) {
    if (L->groups[g].parent == g) return g;
    g = L->groups[g].parent;
  }
  return -1;
}

static pto_status check_position(const lw *L, int p) {
  const lw_stmt_plan *sp = &L->plan[p];
  if (!sp->s || !sp->blk || sp->end < p || sp->end >= L->npos)
    return broken(L, "position %d: no statement, or its end %d outside [%d, %d)", p, sp->end, p,
                  L->npos);
  if (!run_in_block(L, p, sp->fuse_len))
    return broken(L, "position %d: a fused run of %d leaves its block", p, sp->fuse_len);
  if (sp->stream_len < 0 || (sp->stream_len > 0 && !run_in_block(L, p, sp->stream_len)) ||
      sp->stream_loads < 0 || (sp->stream_len > 0 && sp->stream_loads >= sp->stream_len))
    return broken(L, "position %d: a streamed run of %d (%d loads) leaves its block", p,
                  sp->stream_len, sp->stream_loads);
  if ((sp->yield_tmp != -1 && !group_ok(L, sp->yield_tmp)) ||
      (sp->mm_pack != -1 && !group_ok(L, sp->mm_pack)) ||
      (sp->defer != -1 && !group_ok(L, sp->defer)))
    return broken(L, "position %d: a group index outside [0, %d)", p, L->ngroups);
  if (sp->view && sp->view != 3 &&
      (sp->s->kind != PTO_STMT_OP || sp->s->op.opc != PTO_OP_TILE_LOAD))
    return broken(L, "position %d: a view that is not a tile.load", p);
  if (sp->view == 3 && (sp->s->kind != PTO_STMT_OP || sp->s->op.opc != PTO_OP_TILE_GATHER_ROWS ||
                        sp->s->nresults != 1 || pto__lower_stmt_value_arg(sp->s, 1) == NULL))
    return broken(L, "position %d: a row view that is not a tile.gather_rows", p);
  if (sp->view == 3) {
    /* the index tile's buffer lives as long as the tile read through it */
    const pto_ir_value *r = sp->s->results[0], *ix = pto__lower_stmt_value_arg(sp->s, 1);
    int g = root_of(L, L->group_of[r->id]), gi = root_of(L, L->group_of[ix->id]);
    if (g < 0 || gi < 0 || L->groups[gi].start > p || L->groups[gi].end < L->groups[g].end)
      return broken(L, "position %d: a row view whose index tile dies before it", p);
  }
  if (sp->defer >= 0 &&
      (sp->stream_len <= 1 || sp->stream_loads != 0 || !pto__lower_x86_streaming()))
    return broken(L, "position %d: a deferred store on a run that cannot defer it", p);
  if (sp->defer_at >= 0 && (sp->s->kind != PTO_STMT_FOR || sp->defer_at <= p ||
                            sp->defer_at > sp->end || L->plan[sp->defer_at].defer < 0))
    return broken(L, "position %d: defer_at %d is no deferred run in its loop's body", p,
                  sp->defer_at);
  return PTO_OK;
}

static int live_root(const lw *L, int g) { return L->groups[g].parent == g && !L->groups[g].dead; }

static pto_status check_groups(const lw *L) {
  for (int g = 0; g < L->ngroups; g++) {
    const lw_group *G = &L->groups[g];
    if (!group_ok(L, G->parent)) return broken(L, "group %d: parent %d", g, G->parent);
    if (!live_root(L, g)) continue;
    if (G->bytes < 0 || G->start < 0 || G->start > G->end || G->end >= L->npos)
      return broken(L, "group %d: %lld bytes live over [%d, %d] of %d positions", g,
                    (long long)G->bytes, G->start, G->end, L->npos);
    if (G->offset < 0 || G->offset % 64 || G->offset + G->bytes > L->footprint)
      return broken(L, "group %d: offset %lld (%lld bytes) not 64-aligned inside %lld", g,
                    (long long)G->offset, (long long)G->bytes, (long long)L->footprint);
    for (int h = 0; h < g; h++) {
      const lw_group *H = &L->groups[h];
      if (!live_root(L, h) || H->end < G->start || G->end < H->start) continue;
      if (G->offset < H->offset + H->bytes && H->offset < G->offset + G->bytes)
        return broken(L, "groups %d and %d live together over shared bytes", h, g);
    }
  }
  return PTO_OK;
}

pto_status pto__lower_plan_check(const lw *L) {
  for (int p = 0; p < L->npos; p++)
    PTO_RETURN_IF_ERROR(check_position(L, p));
  PTO_RETURN_IF_ERROR(check_groups(L));
  int nv = L->k->nvalues;
  for (int v = 0; v < nv; v++) {
    int g = L->group_of[v];
    if ((g != -1 && g != LW_FUSED && !group_ok(L, g)) || L->def_pos[v] < -1 ||
        L->def_pos[v] >= L->npos || L->last_use[v] < -1 || L->last_use[v] >= L->npos)
      return broken(L, "value %d: group %d, defined at %d, last used at %d", v, g, L->def_pos[v],
                    L->last_use[v]);
  }
  return PTO_OK;
}

void pto__lower_plan_free(lw *L) {
  free(L->plan);
  free(L->def_pos);
  free(L->group_of);
  free(L->last_use);
  free(L->groups);
  L->plan = NULL;
  L->def_pos = L->group_of = L->last_use = NULL;
  free(L->views);
  L->views = NULL;
  L->nviews = L->capviews = 0;
  L->groups = NULL;
}
