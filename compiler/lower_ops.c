/* Tile op lowering: loads and stores with valid regions and padding, elementwise ops (fused
 * runs), reductions, broadcasts and matmul. The x86 fast paths it calls are in files of their
 * own: the matmul microkernel in lower_matmul_x86.c, the deferred stores in lower_stream_x86.c,
 * the rest in lower_x86.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lower.h"
#include "lower_kernel_internal.h"

/* ---- operands ------------------------------------------------------------------------------ */

static int npositional(const pto_ir_stmt *s) {
  int n = 0;
  while (n < s->op.nargs && !s->op.args[n].kw)
    n++;
  return n;
}

static const pto_ir_arg *pos_arg(lw *L, const pto_ir_stmt *s, int i) {
  if (i >= npositional(s)) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc, "%s: missing argument %d",
                    pto_op_info_get(s->op.opc)->name, i + 1);
    return NULL;
  }
  return &s->op.args[i];
}

static lw_tile *tile_arg(lw *L, const pto_ir_stmt *s, int i) {
  const pto_ir_arg *a = pos_arg(L, s, i);
  if (!a) return NULL;
  if (a->kind != PTO_ARG_EXPR || a->expr->kind != PTO_EXPR_VALUE ||
      L->vals[a->expr->value->id].kind != LW_V_TILE) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, a->loc, "%s: argument %d is not a tile",
                    pto_op_info_get(s->op.opc)->name, i + 1);
    return NULL;
  }
  return &L->vals[a->expr->value->id].tile;
}

static lw_tensor *tensor_arg(lw *L, const pto_ir_stmt *s, int i) {
  const pto_ir_arg *a = pos_arg(L, s, i);
  if (!a) return NULL;
  if (a->kind != PTO_ARG_EXPR || a->expr->kind != PTO_EXPR_VALUE ||
      L->vals[a->expr->value->id].kind != LW_V_TENSOR) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, a->loc, "%s: argument %d is not a tensor",
                    pto_op_info_get(s->op.opc)->name, i + 1);
    return NULL;
  }
  return &L->tensors[L->vals[a->expr->value->id].tensor];
}

/* A scalar argument converted to the compute type of dt. */
static LLVMValueRef scalar_arg(lw *L, const pto_ir_arg *a, pto_dtype dt) {
  if (!a || a->kind != PTO_ARG_EXPR) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, a ? a->loc : (pto_loc){0, 0},
                    "expected a scalar argument");
    return NULL;
  }
  LLVMValueRef v = pto__lower_expr(L, a->expr);
  return v ? pto__lower_convert(L, v, a->expr->dtype, dt) : NULL;
}

static int64_t tile_dim(const pto_ir_type *t, int d) {
  int64_t v = 1;
  if (t->rank == 2) pto__lower_static_int(t->dims[d], &v);
  return v;
}

static LLVMValueRef clamp(lw *L, LLVMValueRef v, int64_t hi) {
  return pto__lower_smax(L, pto__lower_smin(L, v, pto__lower_i64(L, hi)), pto__lower_i64(L, 0));
}

/* Defines the tile result r of the current statement: its buffer and valid extents (the type's
 * valid dims when written, else vr/vc, else the whole tile). */
static lw_tile *def_tile(lw *L, const pto_ir_value *r, LLVMValueRef vr, LLVMValueRef vc) {
  lw_value *x = &L->vals[r->id];
  x->kind = LW_V_TILE;
  lw_tile *t = &x->tile;
  t->base = pto__lower_value_base(L, r);
  t->rows = tile_dim(r->type, 0);
  t->cols = tile_dim(r->type, 1);
  t->dt = r->type->dtype;
  if (r->type->has_valid) {
    LLVMValueRef a = pto__lower_expr(L, r->type->valid[0]);
    LLVMValueRef b = a ? pto__lower_expr(L, r->type->valid[1]) : NULL;
    if (b) {
      vr = clamp(L, pto__lower_convert(L, a, r->type->valid[0]->dtype, PTO_DTYPE_INDEX), t->rows);
      vc = clamp(L, pto__lower_convert(L, b, r->type->valid[1]->dtype, PTO_DTYPE_INDEX), t->cols);
    }
  }
  t->vr = vr ? vr : pto__lower_i64(L, t->rows);
  t->vc = vc ? vc : pto__lower_i64(L, t->cols);
  t->rs = t->ri = t->ri_on = NULL;
  if (!t->base && !L->err && L->group_of[r->id] != LW_FUSED)
    pto__lower_fail(L, PTO_STATUS_INTERNAL, r->loc, "tile '%%%s' has no buffer", r->name);
  return t;
}

static LLVMValueRef mul(lw *L, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildMul(L->b, a, b, "");
}
static LLVMValueRef add(lw *L, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildAdd(L->b, a, b, "");
}

/* Binary op bop of tile statement s on a and b; an integer divide (or mod) records s as the op
 * a zero divisor names (L->divzero_op, check_divzero_flag). */
static LLVMValueRef stmt_binop(lw *L, const pto_ir_stmt *s, lw_bin bop, pto_dtype dt,
                               LLVMValueRef a, LLVMValueRef b) {
  if (bop == LW_DIV || bop == LW_MOD) L->divzero_op = pto__lower_op_index(L, s) + 1;
  return pto__lower_binop(L, bop, dt, a, b, L->divzero);
}

/* Fails the launch when a divide met a zero divisor: err_detail {its statement index (or -2),
 * 1} (pto/kernel_abi.h). */
static void check_divzero_flag(lw *L) {
  LLVMValueRef f = LLVMBuildLoad2(L->b, L->t_i64, L->divzero, "");
  LLVMValueRef z = LLVMBuildICmp(L->b, LLVMIntNE, f, pto__lower_i64(L, 0), "");
  LLVMValueRef op = LLVMBuildSub(L->b, f, pto__lower_i64(L, 1), "");
  pto__lower_fail_if(L, z, PTO_KERNEL_ERR_DIV_ZERO, op, pto__lower_i64(L, 1));
}

/* Tile buffers are 64-byte aligned; a tile that may be a view of a tensor (lower_load) is
 * aligned only to its elements: a window at column 13 of a bf16 row starts 26 bytes in. */
void pto__lower_copy_tile(lw *L, LLVMValueRef dst, LLVMValueRef src, const lw_tile *t) {
  int64_t bytes = t->rows * t->cols * (int64_t)pto_dtype_size(t->dt);
  unsigned elem = (unsigned)pto_dtype_size(t->dt);
  unsigned da = pto__lower_maybe_view(L, dst) ? elem : 64;
  unsigned sa = pto__lower_maybe_view(L, src) ? elem : 64;
  LLVMBuildMemCpy(L->b, dst, da, src, sa, pto__lower_i64(L, bytes));
}

/* Fills elements [lo, hi) of a tile buffer with the storage value raw. */
static void fill(lw *L, LLVMValueRef base, pto_dtype dt, LLVMValueRef lo, LLVMValueRef hi,
                 LLVMValueRef raw, const char *name) {
  lw_loop lp;
  LLVMValueRef k = pto__lower_loop_begin(L, &lp, lo, hi, name);
  pto__lower_tile_store(L, base, dt, k, raw);
  pto__lower_loop_end(L, &lp);
}

/* ---- tensor addressing ---------------------------------------------------------------------- */

/* Fails the launch (PTO_KERNEL_ERR_LOAD_OFFSET / _STORE_OFFSET, pto/kernel_abi.h) when an offset
 * is negative or a leading dim's offset is not inside its extent, as the interpreter does: the
 * detail names the first such dim. Nothing is emitted for offsets known to be in range. */
static void check_offsets(lw *L, const pto_ir_stmt *s, const lw_tensor *T, LLVMValueRef *o) {
  LLVMBuilderRef b = L->b;
  LLVMValueRef zero = pto__lower_i64(L, 0), any = NULL, off = zero, why = zero;
  for (int d = T->rank - 1; d >= 0; d--) {
    LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, o[d], zero, "");
    LLVMValueRef past =
        d < T->rank - 2 ? LLVMBuildICmp(b, LLVMIntSGE, o[d], T->shape[d], "") : NULL;
    LLVMValueRef bad = past ? LLVMBuildOr(b, neg, past, "") : neg;
    if (LLVMIsConstant(bad) && !LLVMConstIntGetZExtValue(bad)) continue; /* cannot fail */
    /* detail[1]: the dim when negative, dim + 8 * (extent + 1) when past the extent */
    LLVMValueRef dim = pto__lower_i64(L, d);
    LLVMValueRef w = dim;
    if (past)
      w = LLVMBuildSelect(
          b, neg, dim,
          add(L, dim, mul(L, add(L, T->shape[d], pto__lower_i64(L, 1)), pto__lower_i64(L, 8))), "");
    off = LLVMBuildSelect(b, bad, o[d], off, "");
    why = LLVMBuildSelect(b, bad, w, why, "");
    any = any ? LLVMBuildOr(b, any, bad, "") : bad;
  }
  if (!any) return;
  pto__lower_fail_if(L, any,
                     s->op.opc == PTO_OP_TILE_STORE ? PTO_KERNEL_ERR_STORE_OFFSET
                                                    : PTO_KERNEL_ERR_LOAD_OFFSET,
                     off, why);
}

/* Where a tile at offs sits in T, clipped to the tensor and to the valid extents vr x vc. With
 * check, offsets out of range fail the launch (check_offsets); without (the window of a later
 * iteration, for a prefetch), they leave an empty window. */
static int tensor_window(lw *L, const pto_ir_stmt *s, const lw_tensor *T, const pto_ir_arg *offs,
                         LLVMValueRef vr, LLVMValueRef vc, int64_t rows, int64_t cols, int check,
                         lw_window *w) {
  if (!offs || offs->kind != PTO_ARG_LIST || offs->list.n != T->rank) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc, "%s: offsets need %d entries",
                    pto_op_info_get(s->op.opc)->name, T->rank);
    return -1;
  }
  LLVMValueRef o[PTO_MAX_RANK];
  for (int d = 0; d < T->rank; d++) {
    LLVMValueRef v = pto__lower_expr(L, offs->list.items[d]);
    if (!v) return -1;
    o[d] = pto__lower_convert(L, v, offs->list.items[d]->dtype, PTO_DTYPE_INDEX);
  }
  if (check) check_offsets(L, s, T, o);
  LLVMBuilderRef b = L->b;
  LLVMValueRef zero = pto__lower_i64(L, 0);
  LLVMValueRef lin = zero, inb = LLVMConstInt(L->t_i1, 1, 0);
  int rd = T->rank - 2, cd = T->rank - 1;
  for (int d = 0; d < T->rank; d++) {
    lin = add(L, lin, mul(L, o[d], T->stride[d]));
    inb = LLVMBuildAnd(b, inb, LLVMBuildICmp(b, LLVMIntSGE, o[d], zero, ""), "");
    if (d < rd) inb = LLVMBuildAnd(b, inb, LLVMBuildICmp(b, LLVMIntSLT, o[d], T->shape[d], ""), "");
  }
  LLVMValueRef avail_r = rd >= 0 ? LLVMBuildSub(b, T->shape[rd], o[rd], "") : pto__lower_i64(L, 1);
  LLVMValueRef avail_c = LLVMBuildSub(b, T->shape[cd], o[cd], "");
  LLVMValueRef nr = clamp(L, pto__lower_smin(L, vr, avail_r), rows);
  LLVMValueRef nc = clamp(L, pto__lower_smin(L, vc, avail_c), cols);
  w->nr = LLVMBuildSelect(b, inb, nr, zero, "nr");
  w->nc = LLVMBuildSelect(b, inb, nc, zero, "nc");
  w->sr = rd >= 0 ? T->stride[rd] : zero;
  w->sc = T->stride[cd];
  LLVMTypeRef et = pto__lower_storage_type(L, T->dt);
  /* Out-of-range offsets leave nr = 0: the address is then never dereferenced. */
  w->ptr = LLVMBuildGEP2(b, et, T->data, &lin, 1, "win");
  return 0;
}

/* vw (1: a scalar) consecutive elements of a tensor from element idx of ptr on; and the store. */
static LLVMValueRef tensor_loadv(lw *L, pto_dtype dt, LLVMValueRef ptr, LLVMValueRef idx, int vw) {
  LLVMTypeRef et = pto__lower_storage_type(L, dt);
  LLVMValueRef p = LLVMBuildInBoundsGEP2(L->b, et, ptr, &idx, 1, "");
  LLVMValueRef v = LLVMBuildLoad2(L->b, vw > 1 ? LLVMVectorType(et, (unsigned)vw) : et, p, "");
  LLVMSetAlignment(v, (unsigned)pto_dtype_size(dt));
  pto__lower_tag(L, v, 1);
  return v;
}

static LLVMValueRef tensor_load(lw *L, pto_dtype dt, LLVMValueRef ptr, LLVMValueRef idx) {
  return tensor_loadv(L, dt, ptr, idx, 1);
}

/* Alias scopes of one streamed run's fast loop, where a runtime check has proven the store's
 * window disjoint from every load's: the loads are in scope "load" and the store in "store" (both
 * also tensor accesses, never scratch), each noalias with the other, so LLVM vectorizes the loop
 * without overlap checks of its own. Fresh scopes per run: two runs' accesses may alias. */
typedef struct stream_md {
  LLVMValueRef load_scope, load_noalias, store_scope, store_noalias;
} stream_md;

static void stream_scopes(lw *L, stream_md *m) {
  char name[64];
  LLVMMetadataRef sc[2];
  for (int k = 0; k < 2; k++) {
    int n = snprintf(name, sizeof name, "pto.stream%d.%s", L->nstreams, k ? "store" : "load");
    LLVMMetadataRef ops[2] = {LLVMMDStringInContext2(L->c, name, (size_t)n), L->md_domain};
    sc[k] = LLVMMDNodeInContext2(L->c, ops, 2);
  }
  L->nstreams++;
  LLVMMetadataRef ls[2] = {L->md_tensor_scope, sc[0]}, ln[2] = {L->md_scratch_scope, sc[1]};
  LLVMMetadataRef ss[2] = {L->md_tensor_scope, sc[1]}, sn[2] = {L->md_scratch_scope, sc[0]};
  m->load_scope = LLVMMetadataAsValue(L->c, LLVMMDNodeInContext2(L->c, ls, 2));
  m->load_noalias = LLVMMetadataAsValue(L->c, LLVMMDNodeInContext2(L->c, ln, 2));
  m->store_scope = LLVMMetadataAsValue(L->c, LLVMMDNodeInContext2(L->c, ss, 2));
  m->store_noalias = LLVMMetadataAsValue(L->c, LLVMMDNodeInContext2(L->c, sn, 2));
}

static LLVMValueRef tensor_store(lw *L, pto_dtype dt, LLVMValueRef ptr, LLVMValueRef idx,
                                 LLVMValueRef raw) {
  LLVMTypeRef et = pto__lower_storage_type(L, dt);
  LLVMValueRef p = LLVMBuildInBoundsGEP2(L->b, et, ptr, &idx, 1, "");
  LLVMValueRef st = LLVMBuildStore(L->b, raw, p);
  LLVMSetAlignment(st, (unsigned)pto_dtype_size(dt));
  pto__lower_tag(L, st, 1);
  return st;
}

static LLVMValueRef entry_alloca(lw *L, LLVMTypeRef ty, const char *name);

/* Storage value of dt converted from storage value of from. */
static LLVMValueRef convert_raw(lw *L, LLVMValueRef raw, pto_dtype from, pto_dtype to) {
  if ((from == to && to != PTO_DTYPE_BOOL) ||
      (pto_dtype_size(from) == pto_dtype_size(to) && !pto_dtype_is_float(from) &&
       !pto_dtype_is_float(to) && from != PTO_DTYPE_BOOL && to != PTO_DTYPE_BOOL))
    return raw;
  return pto__lower_to_storage(
      L, to, pto__lower_convert(L, pto__lower_to_compute(L, from, raw), from, to));
}

static LLVMValueRef pad_value(lw *L, pto_dtype dt, const char *pad) {
  LLVMTypeRef st = pto__lower_storage_type(L, dt);
  int kind = !pad || strcmp(pad, "zero") == 0 ? 0 : strcmp(pad, "min") == 0 ? -1 : 1;
  if (kind == 0) return LLVMConstNull(st);
  switch (dt) {
  case PTO_DTYPE_F16:
  case PTO_DTYPE_F32:
  case PTO_DTYPE_F64: return LLVMConstReal(st, kind < 0 ? -INFINITY : INFINITY);
  case PTO_DTYPE_BF16: return LLVMConstInt(st, kind < 0 ? 0xff80u : 0x7f80u, 0);
  case PTO_DTYPE_BOOL: return LLVMConstInt(st, kind > 0, 0);
  case PTO_DTYPE_U8:
  case PTO_DTYPE_U16:
  case PTO_DTYPE_U32:
  case PTO_DTYPE_U64: return kind < 0 ? LLVMConstNull(st) : LLVMConstAllOnes(st);
  default: {
    unsigned w = LLVMGetIntTypeWidth(st);
    uint64_t minv = (uint64_t)1 << (w - 1);
    return LLVMConstInt(st, kind < 0 ? minv : minv - 1, 0);
  }
  }
}

/* ---- tile.load / tile.store ------------------------------------------------------------------ */

/* The valid extents a tile.load gives its tile: valid= clamped to the shape, else the shape. A
 * negative runtime extent fails the launch (PTO_KERNEL_ERR_INDEX, position [k, 0] of the list, as
 * the interpreter refuses it); one past the shape is clamped, as in the interpreter. */
static int load_extents(lw *L, const pto_ir_stmt *s, int64_t R, int64_t C, LLVMValueRef *out_vr,
                        LLVMValueRef *out_vc) {
  *out_vr = pto__lower_i64(L, R);
  *out_vc = pto__lower_i64(L, C);
  const pto_ir_arg *valid = pto__lower_kwarg(s, "valid");
  if (!valid) return 0;
  if (valid->kind != PTO_ARG_LIST || valid->list.n != 2) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, valid->loc,
                    "tile.load: valid= needs [rows, cols]");
    return -1;
  }
  LLVMValueRef a = pto__lower_expr(L, valid->list.items[0]);
  LLVMValueRef b = a ? pto__lower_expr(L, valid->list.items[1]) : NULL;
  if (!b) return -1;
  LLVMValueRef v[2] = {pto__lower_convert(L, a, valid->list.items[0]->dtype, PTO_DTYPE_INDEX),
                       pto__lower_convert(L, b, valid->list.items[1]->dtype, PTO_DTYPE_INDEX)};
  for (int k = 0; k < 2; k++) /* a constant one the builder has checked */
    if (!LLVMIsAConstantInt(v[k]))
      pto__lower_check_index(L, s, v[k], pto__lower_i64(L, 0), NULL, pto__lower_i64(L, k),
                             pto__lower_i64(L, 0));
  *out_vr = clamp(L, v[0], R);
  *out_vc = clamp(L, v[1], C);
  return 0;
}

/* Rows a tile load from rows with gaps prefetches ahead of the row it copies. */
#define LOAD_PF_ROWS 8

/* Prefetches (into L1) the nbytes from ptr + idx elements of dt on, a line at a time. A prefetch
 * never faults, so the row may lie past the tensor's end (plain, not inbounds, addressing). */
static void prefetch_bytes(lw *L, pto_dtype dt, LLVMValueRef ptr, LLVMValueRef idx,
                           LLVMValueRef nbytes, int write, const char *name) {
  LLVMValueRef p = LLVMBuildGEP2(L->b, pto__lower_storage_type(L, dt), ptr, &idx, 1, name);
  LLVMValueRef lines =
      LLVMBuildLShr(L->b, add(L, nbytes, pto__lower_i64(L, 63)), pto__lower_i64(L, 6), "");
  lw_loop lp;
  LLVMValueRef line = pto__lower_loop_begin(L, &lp, pto__lower_i64(L, 0), lines, "pf.line");
  LLVMValueRef off = mul(L, line, pto__lower_i64(L, 64));
  LLVMValueRef q = LLVMBuildGEP2(L->b, L->t_i8, p, &off, 1, "");
  pto__lower_prefetch(L, q, write, 3);
  pto__lower_loop_end(L, &lp);
}

/* Whether every value and symbol e reads has its code already (a look-ahead computes nothing
 * that is not there yet). */
static int expr_ready(const lw *L, const pto_ir_expr *e) {
  switch (e->kind) {
  case PTO_EXPR_VALUE: return L->vals[e->value->id].kind == LW_V_SCALAR;
  case PTO_EXPR_SYM: return L->syms[e->sym] != NULL;
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: return expr_ready(L, e->a);
  case PTO_EXPR_BINARY: return expr_ready(L, e->lhs) && expr_ready(L, e->rhs);
  default: return 1;
  }
}

/* A store ahead: the first tile.store after `after` in the block being lowered that writes a
 * tile of `rows` rows into a tensor at offsets whose values exist already, and that no run has
 * prefetched: its window's start, its row stride and its row length in bytes; 0 when there is
 * none. */
static int store_ahead(lw *L, const pto_ir_stmt *after, int64_t rows, LLVMValueRef *out_ptr,
                       LLVMValueRef *out_stride_bytes, int64_t *out_row_bytes) {
  const pto_ir_block *blk = L->cur_blk;
  int k = 0;
  while (blk && k < blk->n && blk->stmts[k] != after)
    k++;
  if (!blk || k >= blk->n) return 0;
  for (k++; k < blk->n; k++) {
    const pto_ir_stmt *s = blk->stmts[k];
    if (s->kind != PTO_STMT_OP || s->op.opc != PTO_OP_TILE_STORE || s == L->pf_store) continue;
    if (npositional(s) < 3) return 0;
    const pto_ir_arg *ta = &s->op.args[0], *offs = &s->op.args[1], *tt = &s->op.args[2];
    if (ta->kind != PTO_ARG_EXPR || ta->expr->kind != PTO_EXPR_VALUE || tt->kind != PTO_ARG_EXPR ||
        tt->expr->kind != PTO_EXPR_VALUE || L->vals[tt->expr->value->id].kind != LW_V_TENSOR ||
        offs->kind != PTO_ARG_LIST)
      return 0;
    const pto_ir_type *ty = ta->expr->value->type;
    int64_t r = 0, c = 0;
    if (ty->kind != PTO_TYPE_TILE || pto__lower_static_int(ty->dims[0], &r) ||
        pto__lower_static_int(ty->dims[1], &c) || r != rows)
      return 0;
    const lw_tensor *T = &L->tensors[L->vals[tt->expr->value->id].tensor];
    if (offs->list.n != T->rank) return 0;
    for (int d = 0; d < offs->list.n; d++)
      if (!expr_ready(L, offs->list.items[d])) return 0;
    lw_window w;
    if (tensor_window(L, s, T, offs, pto__lower_i64(L, r), pto__lower_i64(L, c), r, c, 0, &w))
      return 0;
    L->pf_store = s;
    int64_t es = (int64_t)pto_dtype_size(T->dt);
    *out_ptr = w.ptr;
    *out_stride_bytes = mul(L, w.sr, pto__lower_i64(L, es));
    *out_row_bytes = c * es;
    return 1;
  }
  return 0;
}

/* A run straight in a loop body computing a tile row by row prefetches, a block of
 * FUSED_PF_BLOCK elements at a time, the share of that row's lines (a) of a later tile.store of
 * the tile's shape, for writing, and (b) of the loop's next iteration's tile.load windows of as
 * many rows (lw_loop_ctx.next), so neither the store nor the next iteration's first pass over its
 * tile waits on memory with no arithmetic to hide it (softmax 4096x1024: a copy of an 8-row tile
 * alone cost 112 ns a row more at DRAM sizes than in L2; with this, 10-15% off the kernel;
 * bench/RESULTS.md). Spread rather than a burst per row: a core has only so many misses in
 * flight. */
#define FUSED_PF_BLOCK 256

#define FUSED_PF_MAX (LW_NEXT_MAX + 2) /* a store ahead, the next loads, a gather ahead */

typedef struct fused_pf {
  int nwin;
  LLVMValueRef ptr[FUSED_PF_MAX], row_stride_bytes[FUSED_PF_MAX];
  LLVMValueRef idx[FUSED_PF_MAX]; /* a gather ahead's index tile (row i is idx[i]); else NULL */
  int64_t row_bytes[FUSED_PF_MAX];
  int write[FUSED_PF_MAX];
} fused_pf;

/* Whether offset e is built of literals, symbols, values whose code exists, negation, +, - and *
 * only: evaluating it ahead of its statement can neither fail nor compute what is not there. */
static int offset_ahead_ok(const lw *L, const pto_ir_expr *e) {
  switch (e->kind) {
  case PTO_EXPR_INT:
  case PTO_EXPR_SYM:
  case PTO_EXPR_VALUE: return expr_ready(L, e);
  case PTO_EXPR_UNARY: return e->op == PTO_EOP_NEG && offset_ahead_ok(L, e->a);
  case PTO_EXPR_CAST: return offset_ahead_ok(L, e->a);
  case PTO_EXPR_BINARY:
    return (e->op == PTO_EOP_ADD || e->op == PTO_EOP_SUB || e->op == PTO_EOP_MUL) &&
           offset_ahead_ok(L, e->lhs) && offset_ahead_ok(L, e->rhs);
  default: return 0;
  }
}

/* A gather ahead: the first tile.gather_rows after the run `first`..`last` in the block being
 * lowered, of `rows` rows, whose index tile was defined before the run (so its rows hold their
 * values now), whose tensor and column offset exist already, and that no run has prefetched: the
 * run brings row idx[i] of it into the cache beside its own row i. The rows of a gather are where
 * no hardware prefetcher looks; read later (the decode attention's V rows, after its q . K run
 * over K's rows), they would be read with nothing else in flight: bench/llm/attend_bench.py. */
static int gather_ahead(lw *L, const pto_ir_stmt *first, const pto_ir_stmt *last, int64_t rows,
                        fused_pf *pf) {
  const pto_ir_block *blk = L->cur_blk;
  int k = 0;
  while (blk && k < blk->n && blk->stmts[k] != last)
    k++;
  if (!blk || k >= blk->n || first->nresults < 1) return 0;
  int run_pos = L->def_pos[first->results[0]->id];
  for (k++; k < blk->n; k++) {
    const pto_ir_stmt *s = blk->stmts[k];
    if (s->kind != PTO_STMT_OP || s->op.opc != PTO_OP_TILE_GATHER_ROWS || s == L->pf_gather ||
        s->nresults != 1 || npositional(s) < 3)
      continue;
    const pto_ir_arg *ta = &s->op.args[0], *ia = &s->op.args[1], *ca = &s->op.args[2];
    if (ta->kind != PTO_ARG_EXPR || ta->expr->kind != PTO_EXPR_VALUE ||
        L->vals[ta->expr->value->id].kind != LW_V_TENSOR || ia->kind != PTO_ARG_EXPR ||
        ia->expr->kind != PTO_EXPR_VALUE || ca->kind != PTO_ARG_LIST || ca->list.n != 1)
      continue;
    const pto_ir_value *iv = ia->expr->value;
    const pto_ir_type *ty = s->results[0]->type;
    int64_t r = 0, c = 0;
    if (L->vals[iv->id].kind != LW_V_TILE || L->def_pos[iv->id] >= run_pos ||
        L->group_of[iv->id] < 0 || ty->kind != PTO_TYPE_TILE ||
        pto__lower_static_int(ty->dims[0], &r) || pto__lower_static_int(ty->dims[1], &c) ||
        r != rows || L->vals[iv->id].tile.rows < rows || L->vals[iv->id].tile.dt != PTO_DTYPE_I32 ||
        !offset_ahead_ok(L, ca->list.items[0]))
      continue;
    const lw_tensor *T = &L->tensors[L->vals[ta->expr->value->id].tensor];
    if (T->rank != 2) continue;
    LLVMValueRef c0 = pto__lower_expr(L, ca->list.items[0]);
    if (!c0) return 0;
    c0 = pto__lower_convert(L, c0, ca->list.items[0]->dtype, PTO_DTYPE_INDEX);
    int64_t es = (int64_t)pto_dtype_size(T->dt);
    L->pf_gather = s;
    LLVMValueRef c0_bytes = mul(L, mul(L, c0, T->stride[1]), pto__lower_i64(L, es));
    pf->ptr[pf->nwin] = LLVMBuildGEP2(L->b, L->t_i8, T->data, &c0_bytes, 1, "pf.gather");
    pf->row_stride_bytes[pf->nwin] = mul(L, T->stride[0], pto__lower_i64(L, es));
    pf->idx[pf->nwin] = L->vals[iv->id].tile.base;
    pf->row_bytes[pf->nwin] = c * es;
    pf->write[pf->nwin++] = 0;
    return 1;
  }
  return 0;
}

static void fused_pf_plan(lw *L, const pto_ir_stmt *first, const pto_ir_stmt *last, int64_t rows,
                          fused_pf *pf) {
  memset(pf, 0, sizeof *pf);
  /* Only straight in a loop body: a loop over tiles is where the next tile's and this tile's
   * memory can be overlapped with arithmetic (a lone run keeps its flat loop). */
  if (!L->loop.iv || L->cur_blk != L->loop.body) return;
  if (store_ahead(L, last, rows, &pf->ptr[0], &pf->row_stride_bytes[0], &pf->row_bytes[0]))
    pf->write[pf->nwin++] = 1;
  if (!L->loop.prefetched) {
    for (int e = 0; e < L->loop.nnext; e++) {
      const lw_next_window *nw = &L->loop.next[e];
      if (nw->rows != rows) continue;
      pf->ptr[pf->nwin] = nw->ptr;
      pf->row_stride_bytes[pf->nwin] =
          mul(L, nw->sr, pto__lower_i64(L, (int64_t)pto_dtype_size(nw->dt)));
      pf->row_bytes[pf->nwin] = nw->row_bytes;
      pf->write[pf->nwin++] = 0;
      L->loop.prefetched = 1;
    }
  }
  gather_ahead(L, first, last, rows, pf);
}

/* Block jb of nb of row i: each window's share of the row's lines. */
static void fused_pf_block(lw *L, const fused_pf *pf, LLVMValueRef i, LLVMValueRef jb, int64_t nb) {
  for (int k = 0; k < pf->nwin; k++) {
    int64_t share = (pf->row_bytes[k] + nb - 1) / nb;
    LLVMValueRef row =
        pf->idx[k] ? LLVMBuildSExt(L->b, pto__lower_tile_load(L, pf->idx[k], PTO_DTYPE_I32, i),
                                   L->t_i64, "")
                   : i;
    LLVMValueRef off =
        add(L, mul(L, row, pf->row_stride_bytes[k]), mul(L, jb, pto__lower_i64(L, share)));
    /* none for the store when the runtime says outputs go past the cache: a line fetched for
     * writing would only be evicted again by the non-temporal store */
    LLVMValueRef n = pto__lower_i64(L, share);
    if (pf->write[k])
      n = LLVMBuildSelect(L->b, pto__lower_stream_stores(L), pto__lower_i64(L, 0), n, "");
    prefetch_bytes(L, PTO_DTYPE_U8, pf->ptr[k], off, n, pf->write[k],
                   pf->write[k] ? "pf.store" : "pf.next");
  }
}

/* The assignment straight in the loop body being lowered that defines scalar v (`%r = %i * 8`),
 * or NULL: a parameter, a value from outside the loop, an op's result. */
static const pto_ir_stmt *body_assign(const lw *L, const pto_ir_value *v) {
  int pos = L->def_pos[v->id];
  if (pos < 0 || pos >= L->npos || v->type->kind != PTO_TYPE_SCALAR) return NULL;
  const lw_stmt_plan *pl = &L->plan[pos];
  if (pl->blk != L->loop.body || pl->s->kind != PTO_STMT_ASSIGN || pl->s->nresults != 1)
    return NULL;
  return pl->s;
}

/* Scalars assigned in the loop body that an offset reads, re-evaluated at most this deep and
 * this many per load (a hint's look-ahead: past that, no prefetch). */
#define LW_REBIND_MAX 16

/* Uses of v in an offset e built of literals, symbols, values, negation, +, - and * only, seeing
 * through scalars assigned in the loop body (evaluated at another v, such an offset can fail no
 * runtime check); -1 for anything else. */
static int affine_uses(const lw *L, const pto_ir_expr *e, const pto_ir_value *v, int depth) {
  if (!e || depth > LW_REBIND_MAX) return -1;
  switch (e->kind) {
  case PTO_EXPR_INT:
  case PTO_EXPR_SYM: return 0;
  case PTO_EXPR_VALUE: {
    if (e->value == v) return 1;
    const pto_ir_stmt *d = body_assign(L, e->value);
    return d ? affine_uses(L, d->expr, v, depth + 1) : 0;
  }
  case PTO_EXPR_UNARY: return e->op == PTO_EOP_NEG ? affine_uses(L, e->a, v, depth) : -1;
  case PTO_EXPR_BINARY: {
    if (e->op != PTO_EOP_ADD && e->op != PTO_EOP_SUB && e->op != PTO_EOP_MUL) return -1;
    int a = affine_uses(L, e->lhs, v, depth), b = affine_uses(L, e->rhs, v, depth);
    return a < 0 || b < 0 ? -1 : a + b;
  }
  default: return -1;
  }
}

/* The scalars re-evaluated for a look-ahead, with the values they had. */
typedef struct lw_rebind {
  int n;
  int id[LW_REBIND_MAX];
  LLVMValueRef old[LW_REBIND_MAX];
} lw_rebind;

/* Re-evaluates, dependencies first, each scalar assigned in the loop body that e reads, at the
 * induction value now bound (affine_uses has vetted e); -1 when there are too many. */
static int rebind_expr(lw *L, const pto_ir_expr *e, lw_rebind *rb) {
  switch (e->kind) {
  case PTO_EXPR_VALUE: {
    const pto_ir_stmt *d = body_assign(L, e->value);
    if (!d) return 0;
    for (int i = 0; i < rb->n; i++)
      if (rb->id[i] == e->value->id) return 0;
    if (rebind_expr(L, d->expr, rb) || rb->n == LW_REBIND_MAX) return -1;
    LLVMValueRef v = pto__lower_expr(L, d->expr);
    if (!v) return -1;
    lw_value *x = &L->vals[e->value->id];
    rb->id[rb->n] = e->value->id;
    rb->old[rb->n++] = x->v;
    x->v = pto__lower_convert(L, v, d->expr->dtype, e->value->type->dtype);
    return 0;
  }
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: return rebind_expr(L, e->a, rb);
  case PTO_EXPR_BINARY: return rebind_expr(L, e->lhs, rb) || rebind_expr(L, e->rhs, rb) ? -1 : 0;
  default: return 0;
  }
}

/* A tile.load straight in a loop body whose offsets move with the loop's induction value
 * (directly or through scalars assigned in the body): note the window it reads in the next
 * iteration (its offsets at iv + step), for a matmul or a fused run later in the body to
 * prefetch (mm_prefetch_line, fused_pf_plan). */
static void note_next_window(lw *L, const pto_ir_stmt *s, const lw_tensor *T,
                             const pto_ir_arg *offs, LLVMValueRef vr, LLVMValueRef vc, int64_t R,
                             int64_t C) {
  if (!L->loop.iv || L->cur_blk != L->loop.body || L->loop.nnext == LW_NEXT_MAX) return;
  int moves = 0;
  for (int d = 0; d < offs->list.n; d++) {
    int u = affine_uses(L, offs->list.items[d], L->loop.iv, 0);
    if (u < 0) return;
    moves += u;
  }
  if (!moves) return;
  lw_value *iv = &L->vals[L->loop.iv->id];
  LLVMValueRef now = iv->v;
  iv->v = add(L, now, L->loop.step);
  lw_rebind rb = {.n = 0};
  int rc = 0;
  for (int d = 0; d < offs->list.n && !rc; d++)
    rc = rebind_expr(L, offs->list.items[d], &rb);
  lw_window w;
  if (!rc) rc = tensor_window(L, s, T, offs, vr, vc, R, C, 0, &w);
  while (rb.n > 0) {
    rb.n--;
    L->vals[rb.id[rb.n]].v = rb.old[rb.n];
  }
  iv->v = now;
  if (rc) return;
  L->loop.next[L->loop.nnext++] = (lw_next_window){.ptr = w.ptr,
                                                   .sr = w.sr,
                                                   .rows = R,
                                                   .row_bytes = C * (int64_t)pto_dtype_size(T->dt),
                                                   .dt = T->dt};
}

static void lower_load(lw *L, const pto_ir_stmt *s) {
  lw_tensor *T = tensor_arg(L, s, 0);
  const pto_ir_arg *offs = pos_arg(L, s, 1);
  if (!T || !offs || s->nresults != 1) return;
  const pto_ir_value *r = s->results[0];
  int64_t R = tile_dim(r->type, 0), C = tile_dim(r->type, 1);
  LLVMValueRef vr, vc;
  if (load_extents(L, s, R, C, &vr, &vc)) return;
  const pto_ir_arg *pad = pto__lower_kwarg(s, "pad");
  lw_tile *t = def_tile(L, r, vr, vc);
  if (L->err) return;
  lw_window w;
  if (tensor_window(L, s, T, offs, vr, vc, R, C, 1, &w)) return;
  note_next_window(L, s, T, offs, vr, vc, R, C);
  LLVMValueRef padv = pad_value(L, t->dt, pad && pad->kind == PTO_ARG_WORD ? pad->str : NULL);
  LLVMBuilderRef b = L->b;
  LLVMValueRef Cv = pto__lower_i64(L, C);
  /* A view (plan_views): when the window is the tile's bytes, the tile is the tensor's memory
   * and nothing is copied; the buffer stays for the other case. Accesses through the chosen base
   * carry no alias scopes (pto__lower_tag), as it may be either memory. A matmul's right operand
   * (view 2) may have its rows any distance apart: its row stride is the window's then. */
  LLVMBasicBlockRef bb_view = NULL;
  LLVMValueRef view_base = NULL, view_rs = NULL;
  int pos = L->cur_pos - 1;
  int view = pos >= 0 && pos < L->npos && L->plan[pos].s == s ? L->plan[pos].view : 0;
  if (view && T->dt == t->dt) {
    LLVMValueRef one = pto__lower_i64(L, 1);
    LLVMValueRef same = LLVMBuildICmp(b, LLVMIntEQ, w.sc, one, "");
    if (R > 1 && view == 1)
      same = LLVMBuildAnd(b, same, LLVMBuildICmp(b, LLVMIntEQ, w.sr, Cv, ""), "");
    same = LLVMBuildAnd(b, same, LLVMBuildICmp(b, LLVMIntEQ, w.nr, pto__lower_i64(L, R), ""), "");
    same = LLVMBuildAnd(b, same, LLVMBuildICmp(b, LLVMIntEQ, w.nc, Cv, ""), "same");
    view_base = LLVMBuildSelect(b, same, w.ptr, t->base, "view");
    if (view == 2) view_rs = LLVMBuildSelect(b, same, w.sr, Cv, "view.rs");
    if (pto__lower_note_view(L, view_base)) { /* not a copy instead: code must not depend on it */
      pto__lower_fail(L, PTO_STATUS_OUT_OF_MEMORY, s->loc, "out of memory lowering a tile.load");
      return;
    }
    bb_view = LLVMAppendBasicBlockInContext(L->c, L->fn, "load.view");
    LLVMBasicBlockRef bb_copy = LLVMAppendBasicBlockInContext(L->c, L->fn, "load.copy");
    LLVMBuildCondBr(b, same, bb_view, bb_copy);
    LLVMPositionBuilderAtEnd(b, bb_copy);
  }
  /* Two copies of the row loop: unit column stride (vectorizable) and general. */
  LLVMValueRef unit = LLVMBuildICmp(b, LLVMIntEQ, w.sc, pto__lower_i64(L, 1), "unit");
  LLVMBasicBlockRef bb_unit = LLVMAppendBasicBlockInContext(L->c, L->fn, "load.unit");
  LLVMBasicBlockRef bb_gen = LLVMAppendBasicBlockInContext(L->c, L->fn, "load.strided");
  LLVMBasicBlockRef bb_pad = LLVMAppendBasicBlockInContext(L->c, L->fn, "load.padrows");
  /* Rows with gaps between them (a window narrower than its tensor) break the sequential stream
   * the hardware prefetchers follow, at every row when rows are a page or more apart: the unit
   * loop prefetches the row LOAD_PF_ROWS ahead. Back-to-back rows are one stream: none. */
  LLVMValueRef pf_row_bytes =
      LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, w.sr, w.nc, ""), pto__lower_i64(L, 0),
                      mul(L, w.nc, pto__lower_i64(L, (int64_t)pto_dtype_size(T->dt))), "pf.bytes");
  LLVMBuildCondBr(b, unit, bb_unit, bb_gen);
  for (int general = 0; general < 2; general++) {
    LLVMPositionBuilderAtEnd(b, general ? bb_gen : bb_unit);
    lw_loop li, lj;
    LLVMValueRef i = pto__lower_loop_begin(L, &li, pto__lower_i64(L, 0), w.nr, "ld.i");
    LLVMValueRef srow = mul(L, i, w.sr);
    LLVMValueRef drow = mul(L, i, Cv);
    if (!general)
      prefetch_bytes(L, T->dt, w.ptr, add(L, srow, mul(L, pto__lower_i64(L, LOAD_PF_ROWS), w.sr)),
                     pf_row_bytes, 0, "pf.row");
    LLVMValueRef j = pto__lower_loop_begin(L, &lj, pto__lower_i64(L, 0), w.nc, "ld.j");
    LLVMValueRef sidx = add(L, srow, general ? mul(L, j, w.sc) : j);
    LLVMValueRef raw = tensor_load(L, T->dt, w.ptr, sidx);
    pto__lower_tile_store(L, t->base, t->dt, add(L, drow, j), convert_raw(L, raw, T->dt, t->dt));
    pto__lower_loop_end(L, &lj);
    fill(L, t->base, t->dt, add(L, drow, w.nc), add(L, drow, Cv), padv, "ld.padc");
    pto__lower_loop_end(L, &li);
    LLVMBuildBr(b, bb_pad);
  }
  LLVMPositionBuilderAtEnd(b, bb_pad);
  fill(L, t->base, t->dt, mul(L, w.nr, Cv), pto__lower_i64(L, R * C), padv, "ld.padr");
  if (bb_view) {
    LLVMBuildBr(b, bb_view);
    LLVMPositionBuilderAtEnd(b, bb_view);
    t->base = view_base;
    t->rs = view_rs;
  }
}

static void lower_store(lw *L, const pto_ir_stmt *s) {
  lw_tile *t = tile_arg(L, s, 0);
  const pto_ir_arg *offs = pos_arg(L, s, 1);
  lw_tensor *T = offs ? tensor_arg(L, s, 2) : NULL;
  if (!t || !T) return;
  lw_window w;
  if (tensor_window(L, s, T, offs, t->vr, t->vc, t->rows, t->cols, 1, &w)) return;
  LLVMBuilderRef b = L->b;
  LLVMValueRef Cv = pto__lower_i64(L, t->cols);
  LLVMValueRef unit = LLVMBuildICmp(b, LLVMIntEQ, w.sc, pto__lower_i64(L, 1), "unit");
  LLVMBasicBlockRef bb_unit = LLVMAppendBasicBlockInContext(L->c, L->fn, "store.unit");
  LLVMBasicBlockRef bb_gen = LLVMAppendBasicBlockInContext(L->c, L->fn, "store.strided");
  LLVMBasicBlockRef bb_done = LLVMAppendBasicBlockInContext(L->c, L->fn, "store.done");
  LLVMBuildCondBr(b, unit, bb_unit, bb_gen);
  for (int general = 0; general < 2; general++) {
    LLVMPositionBuilderAtEnd(b, general ? bb_gen : bb_unit);
    lw_loop li, lj;
    LLVMValueRef i = pto__lower_loop_begin(L, &li, pto__lower_i64(L, 0), w.nr, "st.i");
    LLVMValueRef drow = mul(L, i, w.sr);
    LLVMValueRef srow = mul(L, i, Cv);
    LLVMValueRef j = pto__lower_loop_begin(L, &lj, pto__lower_i64(L, 0), w.nc, "st.j");
    LLVMValueRef raw = pto__lower_tile_load(L, t->base, t->dt, add(L, srow, j));
    LLVMValueRef didx = add(L, drow, general ? mul(L, j, w.sc) : j);
    tensor_store(L, T->dt, w.ptr, didx, convert_raw(L, raw, t->dt, T->dt));
    pto__lower_loop_end(L, &lj);
    pto__lower_loop_end(L, &li);
    LLVMBuildBr(b, bb_done);
  }
  LLVMPositionBuilderAtEnd(b, bb_done);
  if (s->nresults == 1) {
    const pto_ir_arg *ta = &s->op.args[2];
    L->vals[s->results[0]->id] = L->vals[ta->expr->value->id];
  }
}

/* ---- elementwise ------------------------------------------------------------------------------
 */

static LLVMValueRef gep_f(lw *L, LLVMTypeRef ty, LLVMValueRef base, LLVMValueRef idx) {
  return LLVMBuildInBoundsGEP2(L->b, ty, base, &idx, 1, "");
}

/* A load of ty at element idx of et from scratch memory at base (or a view of a tensor:
 * pto__lower_tag), aligned to align bytes; and the store of v there. */
static LLVMValueRef scratch_load(lw *L, LLVMTypeRef ty, LLVMTypeRef et, LLVMValueRef base,
                                 LLVMValueRef idx, unsigned align) {
  LLVMValueRef v = LLVMBuildLoad2(L->b, ty, gep_f(L, et, base, idx), "");
  LLVMSetAlignment(v, align);
  pto__lower_tag(L, v, 0);
  return v;
}

static void scratch_store(lw *L, LLVMValueRef v, LLVMTypeRef et, LLVMValueRef base,
                          LLVMValueRef idx, unsigned align) {
  LLVMValueRef x = LLVMBuildStore(L->b, v, gep_f(L, et, base, idx));
  LLVMSetAlignment(x, align);
  pto__lower_tag(L, x, 0);
}

/* vw elements of tile t from element idx on, as one vector of its storage type; and the store of
 * such a vector. */
static LLVMValueRef vload(lw *L, const lw_tile *t, LLVMValueRef idx, int vw) {
  LLVMTypeRef st = pto__lower_storage_type(L, t->dt);
  return scratch_load(L, LLVMVectorType(st, (unsigned)vw), st, t->base, idx,
                      (unsigned)pto_dtype_size(t->dt));
}

static void vstore(lw *L, const lw_tile *t, LLVMValueRef idx, LLVMValueRef v) {
  scratch_store(L, v, pto__lower_storage_type(L, t->dt), t->base, idx,
                (unsigned)pto_dtype_size(t->dt));
}

static LLVMValueRef load_c(lw *L, const lw_tile *t, LLVMValueRef idx) {
  return pto__lower_to_compute(L, t->dt, pto__lower_tile_load(L, t->base, t->dt, idx));
}

/* x in each of vw lanes. */
static LLVMValueRef splat(lw *L, LLVMValueRef x, int vw) {
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(x), (unsigned)vw);
  LLVMValueRef v =
      LLVMBuildInsertElement(L->b, LLVMGetPoison(vt), x, LLVMConstInt(L->t_i32, 0, 0), "");
  LLVMValueRef mask = LLVMConstNull(LLVMVectorType(L->t_i32, (unsigned)vw));
  return LLVMBuildShuffleVector(L->b, v, LLVMGetPoison(vt), mask, "");
}

typedef struct fused_stmt {
  const pto_ir_stmt *s;
  int kind;                  /* pto__lower_elementwise_kind */
  const pto_ir_value *a, *b; /* tile operands (b: binary, row and column expansions only) */
  const pto_ir_value *c;     /* kind 6 (select): the third tile operand, NULL for tile.sels */
  LLVMValueRef scalar;       /* kind 2: the scalar operand, compute type of the tile */
  LLVMValueRef rowv;         /* kind 5: b[i] of this row, compute type (fused_rows) */
  pto_dtype in_dt, out_dt;
  lw_tile *out;
  LLVMValueRef cur; /* this iteration's result, compute type */
} fused_stmt;

/* Where the elements of a fused or streamed loop come from: the value of a statement of the run
 * computed earlier in this iteration, else one of `given` (a streamed run's loaded elements),
 * else the tile's buffer at flat index k. */
typedef struct fused_env {
  fused_stmt *f;
  const pto_ir_value *const *given;
  const LLVMValueRef *given_v; /* compute type */
  int ngiven;
  LLVMValueRef k;
  LLVMValueRef i, j; /* fused_by_rows: the row and column of k; NULL otherwise */
  int vw;            /* elements per step: 1, or FUSED_VW lanes from k on (fused_vw) */
} fused_env;

static LLVMValueRef fused_operand(lw *L, const fused_env *e, int upto, const pto_ir_value *v) {
  for (int i = upto - 1; i >= 0; i--)
    if (e->f[i].s->results[0] == v) return e->f[i].cur;
  for (int i = 0; i < e->ngiven; i++)
    if (e->given[i] == v) return e->given_v[i];
  const lw_tile *t = &L->vals[v->id].tile;
  LLVMValueRef k = e->k;
  if (t->ri && !e->i) /* the lowering fails; the code built meanwhile is never used */
    pto__lower_fail(L, PTO_STATUS_INTERNAL, v->loc,
                    "'%%%s' read through its indices outside a loop over rows", v->name);
  else if (t->ri) /* a gather read through its index tile (plan_row_views) */
    k = add(L, pto__lower_mm_rrow(L, t, e->i), e->j);
  LLVMValueRef raw = e->vw > 1 ? vload(L, t, k, e->vw) : pto__lower_tile_load(L, t->base, t->dt, k);
  return pto__lower_to_compute(L, t->dt, raw);
}

static const pto_ir_value *value_arg(const pto_ir_stmt *s, int i) {
  const pto_ir_arg *a = &s->op.args[i];
  if (a->kind != PTO_ARG_EXPR || a->expr->kind != PTO_EXPR_VALUE) return NULL;
  return a->expr->value;
}

/* Checks the n statements of a run, evaluates their scalar operands and defines their result
 * tiles. Returns the element count of each tile, or -1 after a failure. */
static int64_t fused_prepare(lw *L, pto_ir_stmt *const *ss, int n, fused_stmt *f, int *any_div) {
  int64_t count = -1;
  *any_div = 0;
  for (int i = 0; i < n; i++) {
    const pto_ir_stmt *s = ss[i];
    fused_stmt *x = &f[i];
    memset(x, 0, sizeof *x);
    x->s = s;
    x->kind = pto__lower_elementwise_kind(s->op.opc);
    lw_tile *ta = tile_arg(L, s, 0);
    if (!ta || s->nresults != 1) return -1;
    x->a = value_arg(s, 0);
    x->in_dt = ta->dt;
    x->out_dt = s->results[0]->type->dtype;
    LLVMValueRef vr = ta->vr, vc = ta->vc;
    if (x->kind == 6) { /* select: the mask is operand a; the values are b, and c or the scalar */
      lw_tile *tb = tile_arg(L, s, 1);
      if (!tb) return -1;
      x->b = value_arg(s, 1);
      vr = tb->vr;
      vc = tb->vc;
      if (s->op.opc == PTO_OP_TILE_SELS) {
        if (!(x->scalar = scalar_arg(L, pos_arg(L, s, 2), tb->dt))) return -1;
      } else {
        if (!tile_arg(L, s, 2)) return -1;
        x->c = value_arg(s, 2);
      }
    } else if (x->kind == 1 || x->kind == 5 || x->kind == 7) {
      lw_tile *tb = tile_arg(L, s, 1);
      if (!tb) return -1;
      x->b = value_arg(s, 1);
    } else if (x->kind == 2) {
      x->scalar = scalar_arg(L, pos_arg(L, s, 1), ta->dt);
      if (!x->scalar) return -1;
    }
    lw_bin bop;
    if (pto__lower_stmt_bin(s, &bop) && (bop == LW_DIV || bop == LW_MOD) &&
        !pto_dtype_is_float(ta->dt))
      *any_div = 1;
    if (x->kind == 3 && pto_op_info_get(s->op.opc)->float_only && !pto_dtype_is_float(ta->dt)) {
      pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc, "%s on %s tiles is not defined",
                      pto_op_info_get(s->op.opc)->name, pto_dtype_name(ta->dt));
      return -1;
    }
    /* valid extents: the first operand's unless the type says otherwise; a result
     * the planner left without a buffer lives only inside the fused loop. */
    x->out = def_tile(L, s->results[0], vr, vc);
    int64_t cnt = ta->rows * ta->cols;
    if (count >= 0 && cnt != count) {
      pto__lower_fail(L, PTO_STATUS_INTERNAL, s->loc, "fused run with different tile sizes");
      return -1;
    }
    count = cnt;
  }
  return L->err ? -1 : count;
}

/* A column expansion's [1,C] operand at the element's column e->j (the run goes row by row):
 * from its buffer, or, computed by the run itself (only with R = 1, where k is the column), from
 * the run. */
static LLVMValueRef col_operand(lw *L, const fused_env *e, int upto, const pto_ir_value *v) {
  for (int i = upto - 1; i >= 0; i--)
    if (e->f[i].s->results[0] == v) return e->f[i].cur;
  if (!e->j) {
    pto__lower_fail(L, PTO_STATUS_INTERNAL, v->loc,
                    "column operand '%%%s' read outside a loop over rows", v->name);
    return NULL;
  }
  const lw_tile *t = &L->vals[v->id].tile;
  LLVMValueRef raw =
      e->vw > 1 ? vload(L, t, e->j, e->vw) : pto__lower_tile_load(L, t->base, t->dt, e->j);
  return pto__lower_to_compute(L, t->dt, raw);
}

/* One element of every statement of the run, in order (f[i].cur); with store_results, each
 * result that has a buffer is written at e->k. */
static int fused_eval(lw *L, fused_env *e, int n, int store_results) {
  fused_stmt *f = e->f;
  for (int i = 0; i < n; i++) {
    fused_stmt *x = &f[i];
    LLVMValueRef a = fused_operand(L, e, i, x->a);
    LLVMValueRef r = NULL;
    lw_bin bop;
    switch (x->kind) {
    case 1:
    case 2: {
      LLVMValueRef b = x->kind == 1 ? fused_operand(L, e, i, x->b)
                       : e->vw > 1  ? splat(L, x->scalar, e->vw)
                                    : x->scalar;
      pto__lower_stmt_bin(x->s, &bop);
      r = stmt_binop(L, x->s, bop, x->in_dt, a, b);
      break;
    }
    case 5: {
      LLVMValueRef b = !x->rowv    ? fused_operand(L, e, i, x->b)
                       : e->vw > 1 ? splat(L, x->rowv, e->vw)
                                   : x->rowv;
      pto__lower_stmt_bin(x->s, &bop);
      r = stmt_binop(L, x->s, bop, x->in_dt, a, b);
      break;
    }
    case 7: {
      LLVMValueRef b = col_operand(L, e, i, x->b);
      if (!b) return -1;
      pto__lower_stmt_bin(x->s, &bop);
      r = stmt_binop(L, x->s, bop, x->in_dt, a, b);
      break;
    }
    case 6: {
      LLVMValueRef y = fused_operand(L, e, i, x->b);
      LLVMValueRef z = x->c        ? fused_operand(L, e, i, x->c)
                       : e->vw > 1 ? splat(L, x->scalar, e->vw)
                                   : x->scalar;
      r = LLVMBuildSelect(L->b, a, y, z, "");
      break;
    }
    case 3: r = pto__lower_unop(L, pto_op_info_get(x->s->op.opc)->fn, x->in_dt, a); break;
    case 4: r = pto__lower_convert(L, a, x->in_dt, x->out_dt); break;
    }
    if (!r) {
      pto__lower_fail(L, PTO_STATUS_UNIMPLEMENTED, x->s->loc, "%s on %s not lowered",
                      pto_op_info_get(x->s->op.opc)->name, pto_dtype_name(x->in_dt));
      return -1;
    }
    x->cur = r;
    if (store_results && x->out->base) {
      LLVMValueRef raw = pto__lower_to_storage(L, x->out_dt, r);
      if (e->vw > 1)
        vstore(L, x->out, e->k, raw);
      else
        pto__lower_tile_store(L, x->out->base, x->out_dt, e->k, raw);
    }
  }
  return 0;
}

/* Lanes per step of a fused or streamed run: FUSED_VW where the run computes an exp or sigmoid
 * on an AVX-512 host, or a sin or cos on any host (fused_lanes), and all its statements are f32,
 * f16 or bf16 in and out with no conversion between them (16-bit floats compute in f32, rounded
 * after each op as on scalars); else 1, scalar code that LLVM's loop vectorizer widens. Explicit
 * vectors let exp scale by 2^n with one vscalefps (lower_kernel.c, lower_expf), which the
 * vectorizer cannot make of scalar code; every other operation is the same IR on vectors as on
 * scalars, so the results are the same bits. The caller also needs whole steps: a row length (or
 * element count) that FUSED_VW divides, or a scalar loop for the rest. */
#define FUSED_VW 16
#define FUSED_SINCOS 2 /* fused_vec_ok's *has_exp bit for a sin or a cos (1: an exp or sigmoid) */
static int vec_float(pto_dtype dt) {
  return dt == PTO_DTYPE_F32 || dt == PTO_DTYPE_F16 || dt == PTO_DTYPE_BF16;
}

/* Whether the run's statements are all ones the lowering emits on FUSED_VW-lane vectors (float
 * dtypes, no conversion); *has_exp: one of them is an exp, a sigmoid, a sin or a cos (sin/cos
 * branch to the exact reduction when a lane is past 2^20, which keeps scalar code from
 * vectorizing). */
static int fused_vec_ok(lw *L, const fused_stmt *f, int n, int *has_exp) {
  *has_exp = 0;
  for (int i = 0; i < n; i++) {
    const fused_stmt *x = &f[i];
    if (!vec_float(x->in_dt) || x->out_dt != x->in_dt || x->kind == 4 || x->kind == 6) return 0;
    if ((x->kind == 1 || x->kind == 5 || x->kind == 7) && !vec_float(L->vals[x->b->id].tile.dt))
      return 0;
    pto_op_fn fn = pto_op_info_get(x->s->op.opc)->fn;
    if ((x->kind == 3 && (fn == PTO_FN_EXP || fn == PTO_FN_SIGMOID)) || fn == PTO_FN_EXPDIF)
      *has_exp |= 1;
    if (x->kind == 3 && (fn == PTO_FN_SIN || fn == PTO_FN_COS)) *has_exp |= FUSED_SINCOS;
  }
  return 1;
}

static int fused_has_row_view(lw *L, const fused_stmt *f, int n);

/* FUSED_VW lanes for a run fused_vec_ok accepts with has_exp from it (row_view: it reads a gather
 * through its index tile): with an exp, a sin/cos or a gather on an AVX-512 host, and with a sin
 * or a cos on any host, PTO_GENERIC_LOWERING=1 included. Scalar sin/cos code branches to the exact
 * reduction (lower_elem.c), which keeps LLVM's loop vectorizer from widening the loop (5.5x slower
 * than the vectorized code): 16-lane IR is target-independent (LLVM splits it into the target's
 * registers) and its branch is on "any of 16 lanes big", so the common case stays vector code. */
static int fused_lanes(int has_exp, int row_view) {
  if (has_exp & FUSED_SINCOS) return FUSED_VW;
  return pto__lower_x86_wide() && (has_exp || row_view) ? FUSED_VW : 1;
}

/* Explicit vectors for a run with an exp or a sin/cos (the loop vectorizer leaves it scalar) or one
 * reading a gather through its index tile (its loads carry no alias scopes, so the vectorizer would
 * need run-time overlap checks against the stores) on an AVX-512 host; and for a run with a sin or
 * a cos on any host (fused_lanes). */
static int fused_vw(lw *L, const fused_stmt *f, int n) {
  int has_exp;
  if (!fused_vec_ok(L, f, n, &has_exp)) return 1;
  return fused_lanes(has_exp, fused_has_row_view(L, f, n));
}

/* Whether the run holds a row or column expansion (kind 5 or 7): its loop then goes row by row
 * (a row's operand loaded once per row, a column's at the element's column). */
static int fused_has_rows(const fused_stmt *f, int n) {
  for (int m = 0; m < n; m++)
    if (f[m].kind == 5 || f[m].kind == 7) return 1;
  return 0;
}

/* Whether a tile the run reads is a gather read through its index tile (lw_tile.ri): then the
 * run goes row by row (fused_operand). */
static int fused_has_row_view(lw *L, const fused_stmt *f, int n) {
  for (int m = 0; m < n; m++) {
    const pto_ir_value *v[3] = {f[m].a, f[m].b, f[m].c};
    for (int i = 0; i < 3; i++)
      if (v[i] && L->vals[v[i]->id].kind == LW_V_TILE && L->vals[v[i]->id].tile.ri) return 1;
  }
  return 0;
}

/* The row operands of the run's row expansions at tile row i, loaded once per row before the
 * row's loop (from their buffers: the planner keeps them out of the run). An [R,1] operand the
 * run computes itself (only with C = 1, where k is the row) is taken from the run instead. */
static void fused_rows(lw *L, fused_stmt *f, int n, LLVMValueRef i) {
  for (int m = 0; m < n; m++) {
    if (f[m].kind != 5) continue;
    int inside = 0;
    for (int p = 0; p < m; p++)
      if (f[p].s->results[0] == f[m].b) inside = 1;
    f[m].rowv = inside ? NULL : load_c(L, &L->vals[f[m].b->id].tile, i);
  }
}

/* The rows of a run of rows x cols tiles, then each row's elements: for the row expansions'
 * operands, the prefetches (blocks of the row) and the lines of a deferred store (dr). */
static int fused_by_rows(lw *L, fused_stmt *f, int n, int64_t rows, int64_t cols,
                         const fused_pf *pf, const lw_defer *dr) {
  lw_loop lp, lr, lb;
  LLVMValueRef Cv = pto__lower_i64(L, cols);
  LLVMValueRef i =
      pto__lower_loop_begin(L, &lr, pto__lower_i64(L, 0), pto__lower_i64(L, rows), "ew.i");
  fused_rows(L, f, n, i);
  LLVMValueRef j0 = pto__lower_i64(L, 0), j1 = Cv;
  int64_t nb = (cols + FUSED_PF_BLOCK - 1) / FUSED_PF_BLOCK;
  if (pf->nwin) {
    LLVMValueRef jb = pto__lower_loop_begin(L, &lb, j0, pto__lower_i64(L, nb), "ew.jb");
    fused_pf_block(L, pf, i, jb, nb);
    j0 = mul(L, jb, pto__lower_i64(L, FUSED_PF_BLOCK));
    j1 = pto__lower_smin(L, add(L, j0, pto__lower_i64(L, FUSED_PF_BLOCK)), Cv);
  }
  int vw = cols % FUSED_VW == 0 && FUSED_PF_BLOCK % FUSED_VW == 0 ? fused_vw(L, f, n) : 1;
  LLVMValueRef j;
  if (vw > 1) {
    LLVMValueRef w = pto__lower_i64(L, vw);
    j = mul(L,
            pto__lower_loop_begin(L, &lp, LLVMBuildExactSDiv(L->b, j0, w, ""),
                                  LLVMBuildExactSDiv(L->b, j1, w, ""), "ew.jv"),
            w);
  } else {
    j = pto__lower_loop_begin(L, &lp, j0, j1, "ew.j");
  }
  if (dr) pto__lower_defer_drain_at(L, dr, i, j, vw);
  fused_env e = {.f = f, .k = add(L, mul(L, i, Cv), j), .i = i, .j = j, .vw = vw};
  if (fused_eval(L, &e, n, 1)) return -1;
  pto__lower_loop_end(L, &lp);
  if (pf->nwin) pto__lower_loop_end(L, &lb);
  pto__lower_loop_end(L, &lr);
  return 0;
}

void pto__lower_fused(lw *L, pto_ir_stmt *const *ss, int n) {
  fused_stmt f[64];
  if (n > 64) n = 64;
  int any_div;
  int64_t count = fused_prepare(L, ss, n, f, &any_div);
  if (count < 0) return;
  /* The shape of the run's tiles: its first result's. */
  const pto_ir_type *ty = ss[0]->nresults > 0 ? ss[0]->results[0]->type : NULL;
  int64_t rows = 0, cols = 0;
  fused_pf pf = {0};
  lw_defer *dr = NULL;
  if (ty && ty->kind == PTO_TYPE_TILE && !pto__lower_static_int(ty->dims[0], &rows) &&
      !pto__lower_static_int(ty->dims[1], &cols) && rows > 0 && rows * cols == count) {
    fused_pf_plan(L, ss[0], ss[n - 1], rows, &pf);
    dr = pto__lower_defer_drainer(L, rows, cols);
  }
  if (dr) {
    /* two versions: with every row of a deferred store waiting, the run writes them out as it
     * goes; otherwise (a partial tile waits, or the stores stayed in the cache) it pays nothing
     * for them, and what waits goes out before the next staging or at the loop's exit */
    LLVMBuilderRef b = L->b;
    LLVMValueRef pending = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildLoad2(b, L->t_i8, dr->pend, ""),
                                         LLVMConstInt(L->t_i8, 0, 0), "");
    LLVMValueRef full = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildLoad2(b, L->t_i64, dr->nr, ""),
                                      pto__lower_i64(L, rows), "");
    LLVMBasicBlockRef bb_d = LLVMAppendBasicBlockInContext(L->c, L->fn, "ew.drain");
    LLVMBasicBlockRef bb_p = LLVMAppendBasicBlockInContext(L->c, L->fn, "ew.plain");
    LLVMBasicBlockRef bb_j = LLVMAppendBasicBlockInContext(L->c, L->fn, "ew.joined");
    LLVMBuildCondBr(b, LLVMBuildAnd(b, pending, full, ""), bb_d, bb_p);
    LLVMPositionBuilderAtEnd(b, bb_d);
    if (fused_by_rows(L, f, n, rows, cols, &pf, dr)) return;
    LLVMBuildStore(b, LLVMConstInt(L->t_i8, 0, 0), dr->pend);
    LLVMBuildBr(b, bb_j);
    LLVMPositionBuilderAtEnd(b, bb_p);
    if (fused_by_rows(L, f, n, rows, cols, &pf, NULL)) return;
    LLVMBuildBr(b, bb_j);
    LLVMPositionBuilderAtEnd(b, bb_j);
  } else if (pf.nwin || fused_has_rows(f, n) || fused_has_row_view(L, f, n)) {
    if (!pf.nwin) {
      const lw_tile *t0 = tile_arg(L, ss[0], 0);
      if (!t0) return;
      rows = t0->rows;
      cols = t0->cols;
    }
    if (fused_by_rows(L, f, n, rows, cols, &pf, NULL)) return;
  } else {
    lw_loop lp;
    fused_env e = {.f = f};
    int vw = count % FUSED_VW == 0 ? fused_vw(L, f, n) : 1;
    e.k = pto__lower_loop_begin(L, &lp, pto__lower_i64(L, 0), pto__lower_i64(L, count / vw),
                                vw > 1 ? "ew.v" : "ew");
    if (vw > 1) e.k = mul(L, e.k, pto__lower_i64(L, vw));
    e.vw = vw;
    if (fused_eval(L, &e, n, 1)) return;
    pto__lower_loop_end(L, &lp);
  }
  if (any_div) check_divzero_flag(L);
}

/* ---- streamed runs ------------------------------------------------------------------------- */

/* What one step of a streamed run's fast loop reads and writes (pto__lower_streamed). */
typedef struct stream_step {
  int nloads, nrun;
  const pto_ir_value *const *lv; /* the loaded tiles */
  LLVMValueRef *lval;            /* this step's loaded values (filled by stream_one) */
  lw_tensor *const *lt;
  const lw_window *win;
  const pto_dtype *ldt;
  fused_stmt *f;
  const pto_ir_value *sv; /* the stored tile */
  const lw_tile *t;
  const lw_tensor *T;
  const lw_window *ws;
  const stream_md *md;
  LLVMValueRef i, trow; /* the row, and its first element in the tiles */
} stream_step;

/* Column j of row st->i (vw columns from j on): the loads, the run, the store; with nt, a
 * non-temporal store of vw elements that j's address aligns to. */
static int stream_one(lw *L, const stream_step *st, LLVMValueRef j, int vw, int nt) {
  LLVMValueRef raw = NULL;
  for (int k = 0; k < st->nloads; k++) {
    LLVMValueRef x =
        tensor_loadv(L, st->lt[k]->dt, st->win[k].ptr, add(L, mul(L, st->i, st->win[k].sr), j), vw);
    LLVMSetMetadata(x, L->kind_scope, st->md->load_scope);
    LLVMSetMetadata(x, L->kind_noalias, st->md->load_noalias);
    x = convert_raw(L, x, st->lt[k]->dt, st->ldt[k]);
    if (st->lv[k] == st->sv) raw = x; /* a plain copy keeps the loaded bits */
    st->lval[k] = pto__lower_to_compute(L, st->ldt[k], x);
  }
  fused_env e = {.f = st->f,
                 .given = st->lv,
                 .given_v = st->lval,
                 .ngiven = st->nloads,
                 .k = add(L, st->trow, j),
                 .vw = vw};
  if (st->nrun > 0 && fused_eval(L, &e, st->nrun, 0)) return -1;
  if (!raw) raw = pto__lower_to_storage(L, st->t->dt, fused_operand(L, &e, st->nrun, st->sv));
  LLVMValueRef s = tensor_store(L, st->T->dt, st->ws->ptr, add(L, mul(L, st->i, st->ws->sr), j),
                                convert_raw(L, raw, st->t->dt, st->T->dt));
  LLVMSetMetadata(s, L->kind_scope, st->md->store_scope);
  LLVMSetMetadata(s, L->kind_noalias, st->md->store_noalias);
  if (nt) {
    LLVMSetAlignment(s, (unsigned)(vw * pto_dtype_size(st->T->dt)));
    pto__lower_x86_nontemporal(L, s);
  }
  return 0;
}

/* The rows of a streamed run's fast loop: vw > 1 columns a step while whole steps remain, then
 * the row's rest one by one. With nt (vw ignored), each row first goes one by one up to the
 * 64-byte boundary of the store's address (all of it when the row is not aligned to its
 * elements), then in non-temporal steps of FUSED_VW, then one by one. */
static int stream_rows(lw *L, stream_step *st, int vw, int nt) {
  LLVMBuilderRef b = L->b;
  LLVMValueRef zero = pto__lower_i64(L, 0), nc = st->ws->nc;
  lw_loop li, lj, lv, lp;
  st->i = pto__lower_loop_begin(L, &li, zero, st->ws->nr, nt ? "sm.nt.i" : "sm.i");
  st->trow = mul(L, st->i, pto__lower_i64(L, st->t->cols));
  fused_rows(L, st->f, st->nrun, st->i);
  LLVMValueRef j0 = zero;
  if (nt) {
    int64_t es = (int64_t)pto_dtype_size(st->T->dt);
    LLVMValueRef row = LLVMBuildGEP2(b, pto__lower_storage_type(L, st->T->dt), st->ws->ptr,
                                     (LLVMValueRef[]){mul(L, st->i, st->ws->sr)}, 1, "");
    LLVMValueRef addr = LLVMBuildPtrToInt(b, row, L->t_i64, "");
    LLVMValueRef mis = LLVMBuildAnd(b, addr, pto__lower_i64(L, 63), "");
    LLVMValueRef peel = LLVMBuildLShr(
        b,
        LLVMBuildAnd(b, LLVMBuildSub(b, pto__lower_i64(L, 64), mis, ""), pto__lower_i64(L, 63), ""),
        pto__lower_i64(L, es == 4 ? 2 : 1), "");
    LLVMValueRef odd =
        LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, addr, pto__lower_i64(L, es - 1), ""), zero, "");
    j0 = pto__lower_smin(L, LLVMBuildSelect(b, odd, nc, peel, ""), nc);
    LLVMValueRef jp = pto__lower_loop_begin(L, &lp, zero, j0, "sm.peel");
    if (stream_one(L, st, jp, 1, 0)) return -1;
    pto__lower_loop_end(L, &lp);
    vw = FUSED_VW;
  }
  if (vw > 1) {
    LLVMValueRef w = pto__lower_i64(L, vw);
    LLVMValueRef nv = LLVMBuildSDiv(b, nt ? LLVMBuildSub(b, nc, j0, "") : nc, w, "");
    LLVMValueRef jv = pto__lower_loop_begin(L, &lv, zero, nv, nt ? "sm.ntv" : "sm.jv");
    if (stream_one(L, st, add(L, j0, mul(L, jv, w)), vw, nt)) return -1;
    pto__lower_loop_end(L, &lv);
    j0 = add(L, j0, mul(L, nv, w));
  }
  LLVMValueRef j = pto__lower_loop_begin(L, &lj, j0, nc, "sm.j");
  if (stream_one(L, st, j, 1, 0)) return -1;
  pto__lower_loop_end(L, &lj);
  pto__lower_loop_end(L, &li);
  return 0;
}

/* [first, last) byte addresses of rows x cols elements of a window (empty when either is 0). */
static void window_bytes(lw *L, const lw_window *w, pto_dtype dt, LLVMValueRef rows,
                         LLVMValueRef cols, LLVMValueRef *out_lo, LLVMValueRef *out_hi) {
  LLVMBuilderRef b = L->b;
  LLVMValueRef one = pto__lower_i64(L, 1), zero = pto__lower_i64(L, 0);
  LLVMValueRef span = add(L, mul(L, LLVMBuildSub(b, rows, one, ""), w->sr), cols);
  LLVMValueRef empty = LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntEQ, rows, zero, ""),
                                   LLVMBuildICmp(b, LLVMIntEQ, cols, zero, ""), "");
  span = LLVMBuildSelect(b, empty, zero, span, "");
  *out_lo = LLVMBuildPtrToInt(b, w->ptr, L->t_i64, "");
  *out_hi = add(L, *out_lo, mul(L, span, pto__lower_i64(L, (int64_t)pto_dtype_size(dt))));
}

/* The non-temporal path of a streamed run whose store the loop defers (lw_defer,
 * lower_stream_x86.c): where pto__lower_defer_stage allows it at run time, the run's values go
 * to the staging buffer and wait (then on to bb_done); otherwise the builder is left where the
 * ordinary non-temporal path follows. 0 after a failure. */
static int stream_defer(lw *L, lw_defer *d, stream_step *st, LLVMValueRef slo, LLVMValueRef shi,
                        LLVMBasicBlockRef bb_done) {
  const lw_window *ws = st->ws;
  int64_t C = st->t->cols;
  LLVMValueRef zero = pto__lower_i64(L, 0);
  LLVMBasicBlockRef bb_now = pto__lower_defer_stage(L, d, st->T, ws, slo, shi);
  lw_tile stg = {.base = d->buf, .rows = d->rows, .cols = C, .dt = st->t->dt};
  int vw = C % FUSED_VW == 0 ? FUSED_VW : 1;
  lw_loop li, lj;
  LLVMValueRef i = pto__lower_loop_begin(L, &li, zero, ws->nr, "defer.i");
  fused_rows(L, st->f, st->nrun, i);
  LLVMValueRef j = mul(L, pto__lower_loop_begin(L, &lj, zero, pto__lower_i64(L, C / vw), "defer.j"),
                       pto__lower_i64(L, vw));
  fused_env e = {.f = st->f, .k = add(L, mul(L, i, pto__lower_i64(L, C)), j), .vw = vw};
  if (fused_eval(L, &e, st->nrun, 0)) return 0;
  LLVMValueRef raw = pto__lower_to_storage(L, stg.dt, fused_operand(L, &e, st->nrun, st->sv));
  if (vw > 1)
    vstore(L, &stg, e.k, raw);
  else
    pto__lower_tile_store(L, stg.base, stg.dt, e.k, raw);
  pto__lower_loop_end(L, &lj);
  pto__lower_loop_end(L, &li);
  pto__lower_defer_staged(L, d, ws, bb_done, bb_now);
  return 1;
}

/* loads, an elementwise run, a store whose tile is the run's: when every load's window covers
 * the store's, all windows have unit column strides and the store's window overlaps none of the
 * loads' (an in-place update takes the buffered path), one loop reads each element of the
 * store's window from the tensors, computes it and writes it to the target, the way the
 * buffered path would have for that element; the tiles' other elements are never read, so they
 * need not exist. Otherwise the statements are lowered one by one through their buffers. The
 * fast loop's accesses carry alias scopes of their own (stream_scopes), so LLVM vectorizes it
 * without an overlap check of its own per row. */
void pto__lower_streamed(lw *L, pto_ir_stmt *const *ss, int nloads, int n) {
  enum { MAXL = 16 };
  int nrun = n - nloads - 1;
  const pto_ir_stmt *store = ss[n - 1];
  if (nloads > MAXL || nrun > 64) {
    pto__lower_fail(L, PTO_STATUS_INTERNAL, store->loc, "streamed run too long");
    return;
  }
  LLVMBuilderRef b = L->b;
  int pos0 = L->cur_pos;
  /* What both paths need, in the block before them: extents, windows, scalars. */
  const pto_ir_value *lv[MAXL];
  LLVMValueRef lval[MAXL];
  lw_window win[MAXL];
  lw_tensor *lt[MAXL];
  pto_dtype ldt[MAXL];
  for (int i = 0; i < nloads; i++) {
    const pto_ir_stmt *s = ss[i];
    lt[i] = tensor_arg(L, s, 0);
    const pto_ir_arg *offs = pos_arg(L, s, 1);
    if (!lt[i] || !offs) return;
    lv[i] = s->results[0];
    int64_t R = tile_dim(lv[i]->type, 0), C = tile_dim(lv[i]->type, 1);
    LLVMValueRef vr, vc;
    if (load_extents(L, s, R, C, &vr, &vc)) return;
    ldt[i] = def_tile(L, lv[i], vr, vc)->dt;
    if (L->err || tensor_window(L, s, lt[i], offs, vr, vc, R, C, 1, &win[i])) return;
  }
  fused_stmt f[64];
  int any_div = 0;
  if (nrun > 0 && fused_prepare(L, ss + nloads, nrun, f, &any_div) < 0) return;
  lw_tile *t = tile_arg(L, store, 0);
  const pto_ir_arg *soffs = pos_arg(L, store, 1);
  lw_tensor *T = soffs ? tensor_arg(L, store, 2) : NULL;
  if (!t || !T) return;
  lw_window ws;
  if (tensor_window(L, store, T, soffs, t->vr, t->vc, t->rows, t->cols, 1, &ws)) return;
  const pto_ir_value *sv = value_arg(store, 0);

  LLVMValueRef one = pto__lower_i64(L, 1), zero = pto__lower_i64(L, 0);
  LLVMValueRef ok = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, ws.sc, one, ""),
                                 LLVMBuildICmp(b, LLVMIntSGE, ws.sr, zero, ""), "");
  LLVMValueRef slo, shi;
  window_bytes(L, &ws, T->dt, ws.nr, ws.nc, &slo, &shi);
  for (int i = 0; i < nloads; i++) {
    const lw_window *w = &win[i];
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, w->sc, one, ""), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSGE, w->sr, zero, ""), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSGE, w->nr, ws.nr, ""), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSGE, w->nc, ws.nc, ""), "");
    LLVMValueRef lo, hi;
    window_bytes(L, w, lt[i]->dt, ws.nr, ws.nc, &lo, &hi);
    LLVMValueRef apart = LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntULE, hi, slo, ""),
                                     LLVMBuildICmp(b, LLVMIntULE, shi, lo, ""), "");
    ok = LLVMBuildAnd(b, ok, apart, "");
  }
  LLVMBasicBlockRef bb_fast = LLVMAppendBasicBlockInContext(L->c, L->fn, "stream");
  LLVMBasicBlockRef bb_buf = LLVMAppendBasicBlockInContext(L->c, L->fn, "stream.buffered");
  LLVMBasicBlockRef bb_done = LLVMAppendBasicBlockInContext(L->c, L->fn, "stream.done");
  LLVMBuildCondBr(b, ok, bb_fast, bb_buf);

  LLVMPositionBuilderAtEnd(b, bb_fast);
  stream_md md;
  stream_scopes(L, &md);
  /* Vector code when the run is all vector ops with no conversion at the loads or the store:
   * FUSED_VW columns a step with an exp (fused_vw); and where the runtime says the task's
   * outputs are too large to stay in the cache (PTO_CORE_STREAM_STORES), non-temporal stores
   * (then fenced, so that the task's completion publishes them) */
  int has_exp = 0,
      vok = (nrun == 0 || fused_vec_ok(L, f, nrun, &has_exp)) && T->dt == t->dt && vec_float(t->dt);
  for (int k = 0; k < nloads && vok; k++)
    if (lt[k]->dt != ldt[k] || !vec_float(ldt[k])) vok = 0;
  int vec = vok && pto__lower_x86_streaming();
  int vw = vok && has_exp ? fused_lanes(has_exp, 0) : 1;
  stream_step st = {.nloads = nloads,
                    .nrun = nrun,
                    .lv = lv,
                    .lval = lval,
                    .lt = lt,
                    .win = win,
                    .ldt = ldt,
                    .f = f,
                    .sv = sv,
                    .t = t,
                    .T = T,
                    .ws = &ws,
                    .md = &md};
  if (vec) {
    LLVMValueRef on = pto__lower_stream_stores(L);
    LLVMBasicBlockRef bb_nt = LLVMAppendBasicBlockInContext(L->c, L->fn, "stream.nt");
    LLVMBasicBlockRef bb_ct = LLVMAppendBasicBlockInContext(L->c, L->fn, "stream.cached");
    LLVMBuildCondBr(b, on, bb_nt, bb_ct);
    LLVMPositionBuilderAtEnd(b, bb_nt);
    /* the plan deferred only a run without loads straight in this loop's body */
    lw_defer *d = L->loop.defer;
    if (d && d->pos == pos0 && !stream_defer(L, d, &st, slo, shi, bb_done)) return;
    if (stream_rows(L, &st, 1, 1)) return;
    pto__lower_x86_sfence(L);
    LLVMBuildBr(b, bb_done);
    LLVMPositionBuilderAtEnd(b, bb_ct);
  }
  if (stream_rows(L, &st, vw, 0)) return;
  LLVMBuildBr(b, bb_done);

  LLVMPositionBuilderAtEnd(b, bb_buf);
  L->cur_pos = pos0;
  /* The buffered path's loads note their next windows (note_next_window) in its own blocks,
   * which do not dominate the code after the run: forget them when the path ends, or a later
   * run or matmul of the loop body would prefetch through a pointer defined on one side only. */
  int nnext0 = L->loop.nnext;
  for (int k = 0; k < nloads; k++) {
    L->cur_pos++;
    pto__lower_op(L, ss[k]);
  }
  if (nrun > 1) {
    L->cur_pos += nrun;
    pto__lower_fused(L, ss + nloads, nrun);
  } else if (nrun == 1) {
    L->cur_pos++;
    pto__lower_op(L, ss[nloads]);
  }
  L->cur_pos++;
  pto__lower_op(L, store);
  if (L->err) return;
  L->loop.nnext = nnext0;
  LLVMBuildBr(b, bb_done);
  LLVMPositionBuilderAtEnd(b, bb_done);
}

/* ---- reductions and broadcasts ----------------------------------------------------------------
 */

/* An alloca in the entry block (allocas elsewhere would grow the stack per iteration). */
static LLVMValueRef entry_alloca(lw *L, LLVMTypeRef ty, const char *name) {
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(L->fn);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(L->c);
  LLVMValueRef first = LLVMGetFirstInstruction(entry);
  if (first)
    LLVMPositionBuilderBefore(b, first);
  else
    LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef a = LLVMBuildAlloca(b, ty, name);
  LLVMDisposeBuilder(b);
  return a;
}

/* row (rows=1: [R,C] -> [R,1]) or column ([R,C] -> [1,C]) reduction. Each output element folds
 * its inputs in index order: sums from +0, max/min from the first element; 16-bit floats
 * accumulate in f32 and round once (the interpreter's order and rounding). Rows go in blocks
 * of 8 with independent accumulators (the chains overlap in the CPU); columns run with the
 * column index innermost, so they vectorize. */
/* Row reductions of an f32 tile with R and C multiples of 8, 8 rows at a time with the rows in
 * the lanes of one 8-lane accumulator: each 8x8 block is loaded as 8 row vectors, transposed with
 * three rounds of shuffles (no gathers), and its 8 columns are folded into the accumulator in
 * index order. Each lane therefore computes exactly the scalar chain of its row (from +0 over
 * every column for a sum, from column 0 over the rest for max/min), so the results are the
 * interpreter's bit for bit. */
static LLVMValueRef shuf8(lw *L, LLVMValueRef x, LLVMValueRef y, const int *idx) {
  LLVMValueRef m[8];
  for (int i = 0; i < 8; i++)
    m[i] = LLVMConstInt(L->t_i32, (unsigned long long)idx[i], 0);
  return LLVMBuildShuffleVector(L->b, x, y, LLVMConstVector(m, 8), "");
}

/* cols[k] lane r = rows[r] lane k. */
static void transpose8(lw *L, LLVMValueRef *rows, LLVMValueRef *cols) {
  static const int lo[8] = {0, 8, 1, 9, 4, 12, 5, 13}, hi[8] = {2, 10, 3, 11, 6, 14, 7, 15};
  static const int p_lo[8] = {0, 1, 8, 9, 4, 5, 12, 13}, p_hi[8] = {2, 3, 10, 11, 6, 7, 14, 15};
  static const int q_lo[8] = {0, 1, 2, 3, 8, 9, 10, 11}, q_hi[8] = {4, 5, 6, 7, 12, 13, 14, 15};
  LLVMValueRef t[8], u[8];
  for (int i = 0; i < 4; i++) {
    t[2 * i] = shuf8(L, rows[2 * i], rows[2 * i + 1], lo);
    t[2 * i + 1] = shuf8(L, rows[2 * i], rows[2 * i + 1], hi);
  }
  for (int g = 0; g < 2; g++) { /* rows 0-3, rows 4-7 */
    LLVMValueRef *tt = t + 4 * g, *uu = u + 4 * g;
    uu[0] = shuf8(L, tt[0], tt[2], p_lo);
    uu[1] = shuf8(L, tt[0], tt[2], p_hi);
    uu[2] = shuf8(L, tt[1], tt[3], p_lo);
    uu[3] = shuf8(L, tt[1], tt[3], p_hi);
  }
  for (int k = 0; k < 4; k++) {
    cols[k] = shuf8(L, u[k], u[4 + k], q_lo);
    cols[4 + k] = shuf8(L, u[k], u[4 + k], q_hi);
  }
}

/* Columns [c0, c0 + 8) of the 8 rows from row `row` on (at flat index base + row * C + c0),
 * folded into the block's accumulator at accp in index order; the first columns start it: a sum
 * from +0 over all 8, max/min from column 0 over the other 7. */
static void red8_step(lw *L, const lw_tile *a, LLVMValueRef at, int64_t row, lw_bin op,
                      LLVMValueRef accp, int first) {
  LLVMTypeRef vt = LLVMVectorType(L->t_f32, 8);
  LLVMValueRef rows[8], cols[8], acc;
  for (int r = 0; r < 8; r++)
    rows[r] = vload(L, a, add(L, at, pto__lower_i64(L, (row + r) * a->cols)), 8);
  transpose8(L, rows, cols);
  int k = 0;
  if (!first)
    acc = LLVMBuildLoad2(L->b, vt, accp, "");
  else if (op == LW_ADD)
    acc = LLVMConstNull(vt);
  else
    acc = cols[k++];
  for (; k < 8; k++)
    acc = pto__lower_binop(L, op, PTO_DTYPE_F32, acc, cols[k], NULL);
  LLVMBuildStore(L->b, acc, accp);
}

static void reduce_rows_by8(lw *L, const lw_tile *a, const lw_tile *t, lw_bin op) {
  int64_t R = a->rows, C = a->cols;
  /* Two blocks of 8 rows side by side when the tile has them: each block's chain waits on the
   * latency of one add per column, so two independent chains keep the adder twice as busy. */
  int nblk = R % 16 == 0 ? 2 : 1;
  LLVMTypeRef vt = LLVMVectorType(L->t_f32, 8);
  LLVMValueRef accp[2];
  for (int q = 0; q < nblk; q++)
    accp[q] = entry_alloca(L, vt, "racc");
  lw_loop lb, lj;
  LLVMValueRef ib = pto__lower_loop_begin(L, &lb, pto__lower_i64(L, 0),
                                          pto__lower_i64(L, R / (8 * nblk)), "red8.row");
  LLVMValueRef i0 = mul(L, ib, pto__lower_i64(L, 8 * nblk));
  LLVMValueRef base = mul(L, i0, pto__lower_i64(L, C));
  for (int q = 0; q < nblk; q++)
    red8_step(L, a, base, 8 * q, op, accp[q], 1);
  LLVMValueRef jb =
      pto__lower_loop_begin(L, &lj, pto__lower_i64(L, 1), pto__lower_i64(L, C / 8), "red8.j");
  LLVMValueRef j0 = add(L, base, mul(L, jb, pto__lower_i64(L, 8)));
  for (int q = 0; q < nblk; q++)
    red8_step(L, a, j0, 8 * q, op, accp[q], 0);
  pto__lower_loop_end(L, &lj);
  /* the [R,1] result is dense: 8 consecutive elements a block */
  for (int q = 0; q < nblk; q++)
    vstore(L, t, add(L, i0, pto__lower_i64(L, 8 * q)), LLVMBuildLoad2(L->b, vt, accp[q], ""));
  pto__lower_loop_end(L, &lb);
}

/* Row max/min of an f32 tile whose rows are a multiple of 16 long, along the row: 16 lanes per
 * vector and up to 4 independent accumulators, `x > acc ? x : acc` per step (one vmaxps/vminps:
 * a NaN element leaves the accumulator as it is; a NaN first element stays in its lane), then the
 * lanes folded. The result is the largest (smallest) non-NaN element of the row, which is what
 * the interpreter's chain of fmaxf/fminf gives whenever it is a nonzero number: equal nonzero
 * floats have the same bits, so the order of the comparisons cannot matter. The two cases where
 * it can (a lane that started with a NaN, which also covers a row of NaNs; a result of +-0, where
 * the chain picks a zero by order) take the row's scalar chain instead, so every row matches the
 * interpreter bit for bit, at one load and one compare per 16 elements in the common case. */
static void reduce_rows_extreme(lw *L, const lw_tile *a, const lw_tile *t, lw_bin op) {
  LLVMBuilderRef b = L->b;
  int64_t R = a->rows, C = a->cols;
  int nacc = C % 64 == 0 ? 4 : C % 32 == 0 ? 2 : 1;
  int64_t step = 16 * nacc;
  LLVMTypeRef vt = LLVMVectorType(L->t_f32, 16);
  LLVMRealPredicate better = op == LW_MAX ? LLVMRealOGT : LLVMRealOLT;
  LLVMValueRef accp[4], resp = entry_alloca(L, L->t_f32, "xres");
  for (int k = 0; k < nacc; k++)
    accp[k] = entry_alloca(L, vt, "xacc");
  LLVMValueRef Cv = pto__lower_i64(L, C);
  lw_loop li, lj, ls;
  LLVMValueRef i =
      pto__lower_loop_begin(L, &li, pto__lower_i64(L, 0), pto__lower_i64(L, R), "xred.row");
  LLVMValueRef base = mul(L, i, Cv);
  for (int k = 0; k < nacc; k++)
    LLVMBuildStore(b, vload(L, a, add(L, base, pto__lower_i64(L, 16 * k)), 16), accp[k]);
  LLVMValueRef j =
      pto__lower_loop_begin(L, &lj, pto__lower_i64(L, 1), pto__lower_i64(L, C / step), "xred.j");
  LLVMValueRef j0 = add(L, base, mul(L, j, pto__lower_i64(L, step)));
  for (int k = 0; k < nacc; k++) {
    LLVMValueRef x = vload(L, a, add(L, j0, pto__lower_i64(L, 16 * k)), 16);
    LLVMValueRef acc = LLVMBuildLoad2(b, vt, accp[k], "");
    LLVMValueRef pick = LLVMBuildFCmp(b, better, x, acc, "");
    LLVMBuildStore(b, LLVMBuildSelect(b, pick, x, acc, ""), accp[k]);
  }
  pto__lower_loop_end(L, &lj);
  /* a NaN in any lane: the scalar chain (checked before folding, which could hide one) */
  LLVMValueRef acc = NULL, nan = NULL;
  for (int k = 0; k < nacc; k++) {
    LLVMValueRef v = LLVMBuildLoad2(b, vt, accp[k], "");
    LLVMValueRef un = LLVMBuildFCmp(b, LLVMRealUNO, v, v, "");
    nan = nan ? LLVMBuildOr(b, nan, un, "") : un;
    acc = acc ? LLVMBuildSelect(b, LLVMBuildFCmp(b, better, v, acc, ""), v, acc, "") : v;
  }
  LLVMTypeRef i1v = LLVMTypeOf(nan);
  LLVMValueRef anynan = pto__lower_call_intrinsic(L, "llvm.vector.reduce.or", &i1v, 1, &nan, 1, "");
  /* the lanes folded by a tree of compare-and-select: llvm.vector.reduce.fmax would keep its
   * NaN semantics in a chain of 16 dependent steps, and NaNs take the chain below anyway */
  for (int w = 8; w >= 1; w /= 2) {
    LLVMValueRef m[16];
    for (int k = 0; k < 16; k++)
      m[k] = LLVMConstInt(L->t_i32, (unsigned long long)(w + k % w), 0);
    LLVMValueRef hi = LLVMBuildShuffleVector(b, acc, LLVMGetPoison(vt), LLVMConstVector(m, 16), "");
    acc = LLVMBuildSelect(b, LLVMBuildFCmp(b, better, hi, acc, ""), hi, acc, "");
  }
  LLVMValueRef res = LLVMBuildExtractElement(b, acc, LLVMConstInt(L->t_i32, 0, 0), "");
  LLVMBuildStore(b, res, resp);
  LLVMValueRef zero = LLVMBuildFCmp(b, LLVMRealOEQ, res, LLVMConstReal(L->t_f32, 0.0), "");
  LLVMBasicBlockRef bb_chain = LLVMAppendBasicBlockInContext(L->c, L->fn, "xred.chain");
  LLVMBasicBlockRef bb_done = LLVMAppendBasicBlockInContext(L->c, L->fn, "xred.done");
  LLVMBuildCondBr(b, LLVMBuildOr(b, anynan, zero, ""), bb_chain, bb_done);
  LLVMPositionBuilderAtEnd(b, bb_chain);
  LLVMBuildStore(b, load_c(L, a, base), resp);
  LLVMValueRef js = pto__lower_loop_begin(L, &ls, pto__lower_i64(L, 1), Cv, "xred.s");
  LLVMValueRef x = load_c(L, a, add(L, base, js));
  LLVMValueRef cur = LLVMBuildLoad2(b, L->t_f32, resp, "");
  LLVMBuildStore(b, pto__lower_binop(L, op, PTO_DTYPE_F32, cur, x, NULL), resp);
  pto__lower_loop_end(L, &ls);
  LLVMBuildBr(b, bb_done);
  LLVMPositionBuilderAtEnd(b, bb_done);
  pto__lower_tile_store(L, t->base, PTO_DTYPE_F32, i, LLVMBuildLoad2(b, L->t_f32, resp, ""));
  pto__lower_loop_end(L, &li);
}

static void lower_reduce(lw *L, const pto_ir_stmt *s, int rows, lw_bin op) {
  lw_tile *a = tile_arg(L, s, 0);
  if (!a || s->nresults != 1) return;
  pto_dtype dt = a->dt;
  lw_tile *t = def_tile(L, s->results[0], rows ? a->vr : pto__lower_i64(L, 1),
                        rows ? pto__lower_i64(L, 1) : a->vc);
  if (L->err) return;
  pto_dtype acc_dt = (dt == PTO_DTYPE_F16 || dt == PTO_DTYPE_BF16) ? PTO_DTYPE_F32 : dt;
  LLVMTypeRef ct = pto__lower_compute_type(L, dt);
  int sum = op == LW_ADD;
  int64_t R = a->rows, C = a->cols;
  LLVMValueRef Cv = pto__lower_i64(L, C);
  if (rows && dt == PTO_DTYPE_F32 && C % 16 == 0 && C >= 16 && (op == LW_MAX || op == LW_MIN)) {
    reduce_rows_extreme(L, a, t, op);
    return;
  }
  if (rows && dt == PTO_DTYPE_F32 && R % 8 == 0 && C % 8 == 0 && C >= 8 &&
      (op == LW_ADD || op == LW_MAX || op == LW_MIN)) {
    reduce_rows_by8(L, a, t, op);
    return;
  }
  if (rows) {
    int rb = R >= 8 ? 8 : R >= 4 ? 4 : 1;
    int64_t nblk = R / rb;
    LLVMValueRef accs[8];
    for (int r = 0; r < rb; r++)
      accs[r] = entry_alloca(L, ct, "acc");
    for (int pass = 0; pass < 2; pass++) {
      /* pass 0: whole blocks of rb rows; pass 1: the remaining rows one by one */
      int width = pass == 0 ? rb : 1;
      int64_t lo = pass == 0 ? 0 : nblk * rb, hi = pass == 0 ? nblk : R;
      if (lo >= hi) continue;
      lw_loop lb, lj;
      LLVMValueRef ib =
          pto__lower_loop_begin(L, &lb, pto__lower_i64(L, lo), pto__lower_i64(L, hi), "red.row");
      LLVMValueRef i0 = mul(L, ib, pto__lower_i64(L, width));
      LLVMValueRef rowbase[8];
      for (int r = 0; r < width; r++) {
        rowbase[r] = mul(L, add(L, i0, pto__lower_i64(L, r)), Cv);
        LLVMBuildStore(L->b, sum ? LLVMConstNull(ct) : load_c(L, a, rowbase[r]), accs[r]);
      }
      LLVMValueRef j = pto__lower_loop_begin(L, &lj, pto__lower_i64(L, sum ? 0 : 1), Cv, "red.j");
      for (int r = 0; r < width; r++) {
        LLVMValueRef x = load_c(L, a, add(L, rowbase[r], j));
        LLVMValueRef acc = LLVMBuildLoad2(L->b, ct, accs[r], "");
        LLVMBuildStore(L->b, pto__lower_binop(L, op, acc_dt, acc, x, NULL), accs[r]);
      }
      pto__lower_loop_end(L, &lj);
      for (int r = 0; r < width; r++) {
        LLVMValueRef res = LLVMBuildLoad2(L->b, ct, accs[r], "");
        pto__lower_tile_store(L, t->base, dt, add(L, i0, pto__lower_i64(L, r)),
                              pto__lower_to_storage(L, dt, res));
      }
      pto__lower_loop_end(L, &lb);
    }
    return;
  }
  /* columns: accumulate a whole row of partial results, row by row */
  int wide = acc_dt != dt;
  LLVMValueRef tmp = wide ? entry_alloca(L, LLVMArrayType2(L->t_f32, (uint64_t)C), "colacc") : NULL;
  lw_loop l0, li, lj, l2;
  LLVMValueRef j0 = pto__lower_loop_begin(L, &l0, pto__lower_i64(L, 0), Cv, "red.init");
  LLVMValueRef init = sum ? LLVMConstNull(ct) : load_c(L, a, j0);
  if (wide)
    LLVMBuildStore(L->b, init, gep_f(L, L->t_f32, tmp, j0));
  else
    pto__lower_tile_store(L, t->base, dt, j0, pto__lower_to_storage(L, dt, init));
  pto__lower_loop_end(L, &l0);
  LLVMValueRef i =
      pto__lower_loop_begin(L, &li, pto__lower_i64(L, sum ? 0 : 1), pto__lower_i64(L, R), "red.i");
  LLVMValueRef rowbase = mul(L, i, Cv);
  LLVMValueRef j = pto__lower_loop_begin(L, &lj, pto__lower_i64(L, 0), Cv, "red.j");
  LLVMValueRef x = load_c(L, a, add(L, rowbase, j));
  if (wide) {
    LLVMValueRef p = gep_f(L, L->t_f32, tmp, j);
    LLVMValueRef acc = LLVMBuildLoad2(L->b, L->t_f32, p, "");
    LLVMBuildStore(L->b, pto__lower_binop(L, op, acc_dt, acc, x, NULL), p);
  } else {
    LLVMValueRef acc = load_c(L, t, j);
    pto__lower_tile_store(
        L, t->base, dt, j,
        pto__lower_to_storage(L, dt, pto__lower_binop(L, op, acc_dt, acc, x, NULL)));
  }
  pto__lower_loop_end(L, &lj);
  pto__lower_loop_end(L, &li);
  if (wide) {
    LLVMValueRef j2 = pto__lower_loop_begin(L, &l2, pto__lower_i64(L, 0), Cv, "red.out");
    LLVMValueRef v = LLVMBuildLoad2(L->b, L->t_f32, gep_f(L, L->t_f32, tmp, j2), "");
    pto__lower_tile_store(L, t->base, dt, j2, pto__lower_to_storage(L, dt, v));
    pto__lower_loop_end(L, &l2);
  }
}

/* out[i,j] = a[i,j] op v[i,0] (row) or a[i,j] op v[0,j] (col). */
static void lower_expand(lw *L, const pto_ir_stmt *s, int row, lw_bin op) {
  lw_tile *a = tile_arg(L, s, 0);
  lw_tile *v = a ? tile_arg(L, s, 1) : NULL;
  if (!v || s->nresults != 1) return;
  pto_dtype dt = a->dt;
  lw_tile *t = def_tile(L, s->results[0], a->vr, a->vc);
  if (L->err) return;
  lw_loop li, lj;
  LLVMValueRef Cv = pto__lower_i64(L, a->cols);
  LLVMValueRef i =
      pto__lower_loop_begin(L, &li, pto__lower_i64(L, 0), pto__lower_i64(L, a->rows), "bc.i");
  LLVMValueRef vrow = row ? load_c(L, v, i) : NULL;
  LLVMValueRef j = pto__lower_loop_begin(L, &lj, pto__lower_i64(L, 0), Cv, "bc.j");
  LLVMValueRef idx = add(L, mul(L, i, Cv), j);
  LLVMValueRef x = load_c(L, a, idx);
  LLVMValueRef y = row ? vrow : load_c(L, v, j);
  LLVMValueRef r = stmt_binop(L, s, op, dt, x, y);
  pto__lower_tile_store(L, t->base, dt, idx, pto__lower_to_storage(L, dt, r));
  pto__lower_loop_end(L, &lj);
  pto__lower_loop_end(L, &li);
  if ((op == LW_DIV || op == LW_MOD) && !pto_dtype_is_float(dt)) check_divzero_flag(L);
}

/* ---- matmul ---------------------------------------------------------------------------------- */

/* sum + a * b as the interpreter computes a matmul step in odt: one fused multiply-add in f32
 * (fmaf), a product then a sum otherwise (integers wrap). Scalars or vectors alike. */
LLVMValueRef pto__lower_mm_step(lw *L, pto_dtype odt, LLVMValueRef a, LLVMValueRef b,
                                LLVMValueRef sum) {
  if (odt == PTO_DTYPE_F32) {
    LLVMTypeRef t = LLVMTypeOf(a);
    LLVMValueRef args[3] = {a, b, sum};
    return pto__lower_call_intrinsic(L, "llvm.fma", &t, 1, args, 3, "");
  }
  if (pto_dtype_is_float(odt)) return LLVMBuildFAdd(L->b, sum, LLVMBuildFMul(L->b, a, b, ""), "");
  return LLVMBuildAdd(L->b, sum, LLVMBuildMul(L->b, a, b, ""), "");
}

/* Elements between rows of a matmul's right operand: a view's row stride (plan_views), else its
 * columns. */
LLVMValueRef pto__lower_mm_rstride(lw *L, const lw_tile *r) {
  return r->rs ? r->rs : pto__lower_i64(L, r->cols);
}

/* Where row k of a matmul's right operand starts, in elements from its base: k rows of its row
 * stride, or for a gather_rows read through its index tile (plan_row_views) row ri[k] of the
 * tensor. */
LLVMValueRef pto__lower_mm_rrow(lw *L, const lw_tile *r, LLVMValueRef k) {
  LLVMValueRef row = k;
  if (r->ri) {
    LLVMValueRef ix =
        LLVMBuildSExt(L->b, pto__lower_tile_load(L, r->ri, PTO_DTYPE_I32, k), L->t_i64, "");
    row = LLVMBuildSelect(L->b, r->ri_on, ix, k, "rrow");
  }
  return mul(L, row, pto__lower_mm_rstride(L, r));
}

/* out[i, j_lo..j_hi) += l[i,:] x r[:, j_lo..j_hi) for i in [i_lo, i_hi): k outer, j inner, each
 * element summing in k order. */
static void mm_simple(lw *L, const lw_tile *l, const lw_tile *r, const lw_tile *t, int64_t i_lo,
                      int64_t i_hi, int64_t j_lo, int64_t j_hi) {
  if (i_lo >= i_hi || j_lo >= j_hi) return;
  pto_dtype odt = t->dt;
  LLVMValueRef Nv = pto__lower_i64(L, r->cols), Kv = pto__lower_i64(L, l->cols);
  lw_loop li, lk, lj;
  LLVMValueRef i =
      pto__lower_loop_begin(L, &li, pto__lower_i64(L, i_lo), pto__lower_i64(L, i_hi), "mm.i");
  LLVMValueRef orow = mul(L, i, Nv);
  LLVMValueRef k = pto__lower_loop_begin(L, &lk, pto__lower_i64(L, 0), Kv, "mm.k");
  LLVMValueRef lv = pto__lower_convert(L, load_c(L, l, add(L, mul(L, i, Kv), k)), l->dt, odt);
  LLVMValueRef rrow = pto__lower_mm_rrow(L, r, k);
  LLVMValueRef j =
      pto__lower_loop_begin(L, &lj, pto__lower_i64(L, j_lo), pto__lower_i64(L, j_hi), "mm.j");
  LLVMValueRef rv = pto__lower_convert(L, load_c(L, r, add(L, rrow, j)), r->dt, odt);
  LLVMValueRef oidx = add(L, orow, j);
  LLVMValueRef ov = load_c(L, t, oidx);
  LLVMValueRef sum = pto__lower_mm_step(L, odt, lv, rv, ov);
  pto__lower_tile_store(L, t->base, odt, oidx, pto__lower_to_storage(L, odt, sum));
  pto__lower_loop_end(L, &lj);
  pto__lower_loop_end(L, &lk);
  pto__lower_loop_end(L, &li);
}

/* out[M,N] = (acc ? acc : 0) + l[M,K] x r[K,N]: each output element sums its products in k
 * order (the interpreter's order: one fmaf per product in f32), in the result dtype. Whole
 * register blocks (pto__lower_mm_blocks, lower_matmul_x86.c; bf16 inputs on the host's bf16 dot
 * products where they can) keep their accumulators in vector registers across k; the edges run
 * the simple loop. */
static void lower_matmul(lw *L, const pto_ir_stmt *s, int with_acc) {
  int base = with_acc ? 1 : 0;
  lw_tile *acc = with_acc ? tile_arg(L, s, 0) : NULL;
  lw_tile *l = (!with_acc || acc) ? tile_arg(L, s, base) : NULL;
  lw_tile *r = l ? tile_arg(L, s, base + 1) : NULL;
  /* matmul_bias: the accumulator starts as the bias in every row (the interpreter's order) */
  int with_bias = s->op.opc == PTO_OP_TILE_MATMUL_BIAS;
  lw_tile *bias = with_bias && r ? tile_arg(L, s, 2) : NULL;
  if (!r || s->nresults != 1 || (with_bias && !bias)) return;
  lw_tile *t = def_tile(L, s->results[0], with_acc ? acc->vr : NULL, with_acc ? acc->vc : NULL);
  if (L->err) return;
  pto_dtype odt = t->dt;
  int64_t M = l->rows, K = l->cols, N = r->cols;
  if (r->rows != K || t->rows != M || t->cols != N || (acc && acc->dt != odt)) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc,
                    "matmul shapes [%lld,%lld] x [%lld,%lld] -> [%lld,%lld] %s", (long long)M,
                    (long long)K, (long long)r->rows, (long long)N, (long long)t->rows,
                    (long long)t->cols, pto_dtype_name(odt));
    return;
  }
  if (with_acc) {
    if (acc->base != t->base) pto__lower_copy_tile(L, t->base, acc->base, acc);
  } else if (bias) {
    lw_loop li, lj;
    LLVMValueRef Nv = pto__lower_i64(L, N);
    LLVMValueRef i =
        pto__lower_loop_begin(L, &li, pto__lower_i64(L, 0), pto__lower_i64(L, M), "mm.bias.i");
    LLVMValueRef j = pto__lower_loop_begin(L, &lj, pto__lower_i64(L, 0), Nv, "mm.bias.j");
    LLVMValueRef v = pto__lower_convert(L, load_c(L, bias, j), bias->dt, odt);
    pto__lower_tile_store(L, t->base, odt, add(L, mul(L, i, Nv), j),
                          pto__lower_to_storage(L, odt, v));
    pto__lower_loop_end(L, &lj);
    pto__lower_loop_end(L, &li);
  } else {
    LLVMBuildMemSet(L->b, t->base, LLVMConstInt(L->t_i8, 0, 0),
                    pto__lower_i64(L, M * N * (int64_t)pto_dtype_size(odt)), 64);
  }
  int pack = L->plan[L->cur_pos - 1].mm_pack;
  int64_t j =
      pto__lower_mm_blocks(L, l, r, t, with_acc || with_bias,
                           pack >= 0 ? L->group_base[pto__lower_group_find(L, pack)] : NULL);
  mm_simple(L, l, r, t, 0, M, j, N);
}

/* ---- the dispatcher ----------------------------------------------------------------------------
 */

void pto__lower_op(lw *L, const pto_ir_stmt *s) {
  pto_opcode op = s->op.opc;
  lw_bin bop;
  if (pto__lower_elementwise_kind(op)) {
    pto__lower_fused(L, (pto_ir_stmt *const *)&s, 1);
    return;
  }
  const pto_op_info *info = pto_op_info_get(op);
  switch (info ? info->cls : PTO_OPC_OTHER) {
  case PTO_OPC_REDUCE_ROW:
  case PTO_OPC_REDUCE_COL:
    if (info->fn == PTO_FN_ARGMAX || info->fn == PTO_FN_ARGMIN)
      pto__lower_argreduce(L, s, info->cls == PTO_OPC_REDUCE_ROW);
    else if (pto__lower_stmt_bin(s, &bop))
      lower_reduce(L, s, info->cls == PTO_OPC_REDUCE_ROW, bop);
    return;
  case PTO_OPC_EXPAND_ROW:
  case PTO_OPC_EXPAND_COL:
    if (pto__lower_stmt_bin(s, &bop)) lower_expand(L, s, info->cls == PTO_OPC_EXPAND_ROW, bop);
    return;
  case PTO_OPC_MATMUL: lower_matmul(L, s, op == PTO_OP_TILE_MATMUL_ACC); return;
  case PTO_OPC_LAYOUT: pto__lower_layout_op(L, s); return;
  default: break;
  }
  switch (op) {
  case PTO_OP_TILE_LOAD: lower_load(L, s); return;
  case PTO_OP_TILE_STORE: lower_store(L, s); return;
  case PTO_OP_TILE_CREATE:
    if (s->nresults == 1) def_tile(L, s->results[0], NULL, NULL);
    return;
  case PTO_OP_TILE_FULL: {
    if (s->nresults != 1) return;
    const pto_ir_value *r = s->results[0];
    LLVMValueRef v = scalar_arg(L, pos_arg(L, s, 2), r->type->dtype);
    if (!v) return;
    lw_tile *t = def_tile(L, r, NULL, NULL);
    if (L->err) return;
    fill(L, t->base, t->dt, pto__lower_i64(L, 0), pto__lower_i64(L, t->rows * t->cols),
         pto__lower_to_storage(L, t->dt, v), "full");
    return;
  }
  case PTO_OP_TILE_MOVE: {
    lw_tile *a = tile_arg(L, s, 0);
    if (!a || s->nresults != 1) return;
    lw_tile *t = def_tile(L, s->results[0], a->vr, a->vc);
    if (L->err) return;
    if (a->rs) { /* a view with rows apart (plan_views, plan_row_views): only read, so the
                  * move is the view */
      t->base = a->base;
      t->rs = a->rs;
      t->ri = a->ri;
      t->ri_on = a->ri_on;
    } else if (t->base != a->base) {
      pto__lower_copy_tile(L, t->base, a->base, a);
    }
    return;
  }
  case PTO_OP_TENSOR_DIM: {
    lw_tensor *T = tensor_arg(L, s, 0);
    const pto_ir_arg *ax = T ? pos_arg(L, s, 1) : NULL;
    int64_t axis;
    if (!ax) return;
    if (ax->kind != PTO_ARG_EXPR || pto__lower_static_int(ax->expr, &axis) || axis < 0 ||
        axis >= T->rank) {
      pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, ax->loc,
                      "tensor.dim: axis must be a constant in [0, %d)", T->rank);
      return;
    }
    if (s->nresults == 1) {
      L->vals[s->results[0]->id].kind = LW_V_SCALAR;
      L->vals[s->results[0]->id].v =
          pto__lower_convert(L, T->shape[axis], PTO_DTYPE_INDEX, s->results[0]->type->dtype);
    }
    return;
  }
  case PTO_OP_DIST_COMM_CTX:
  case PTO_OP_DIST_RANK:
  case PTO_OP_DIST_NRANKS:
  case PTO_OP_DIST_NOTIFY:
  case PTO_OP_DIST_WAIT:
  case PTO_OP_DIST_REMOTE_LOAD:
  case PTO_OP_DIST_REMOTE_STORE:
  case PTO_OP_DIST_BARRIER:
  case PTO_OP_DIST_ALLREDUCE:
  case PTO_OP_DIST_BROADCAST:
  case PTO_OP_DIST_ALLGATHER:
  case PTO_OP_DIST_REDUCE_SCATTER: pto__lower_dist_op(L, s); return;
  default:
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc, "%s is not allowed in a kernel",
                    pto_op_info_get(op) ? pto_op_info_get(op)->name : "op");
    return;
  }
}

/* ---- helpers for the second set's structural ops (lower_struct.c) -------------------------- */

lw_tile *pto__lower_tile_arg(lw *L, const pto_ir_stmt *s, int i) { return tile_arg(L, s, i); }
lw_tensor *pto__lower_tensor_arg(lw *L, const pto_ir_stmt *s, int i) { return tensor_arg(L, s, i); }
const pto_ir_arg *pto__lower_pos_arg(lw *L, const pto_ir_stmt *s, int i) {
  return pos_arg(L, s, i);
}
LLVMValueRef pto__lower_scalar_arg(lw *L, const pto_ir_arg *a, pto_dtype dt) {
  return scalar_arg(L, a, dt);
}
lw_tile *pto__lower_def_tile(lw *L, const pto_ir_value *r, LLVMValueRef vr, LLVMValueRef vc) {
  return def_tile(L, r, vr, vc);
}
LLVMValueRef pto__lower_load_c(lw *L, const lw_tile *t, LLVMValueRef idx) {
  return load_c(L, t, idx);
}
LLVMValueRef pto__lower_entry_alloca(lw *L, LLVMTypeRef ty, const char *name) {
  return entry_alloca(L, ty, name);
}
LLVMValueRef pto__lower_tensor_load(lw *L, pto_dtype dt, LLVMValueRef ptr, LLVMValueRef idx) {
  return tensor_load(L, dt, ptr, idx);
}
void pto__lower_tensor_store(lw *L, pto_dtype dt, LLVMValueRef ptr, LLVMValueRef idx,
                             LLVMValueRef raw) {
  tensor_store(L, dt, ptr, idx, raw);
}
LLVMValueRef pto__lower_pad_value(lw *L, pto_dtype dt, const char *pad) {
  return pad_value(L, dt, pad);
}
LLVMValueRef pto__lower_splat(lw *L, LLVMValueRef x, int vw) { return splat(L, x, vw); }
LLVMValueRef pto__lower_scratch_load(lw *L, LLVMTypeRef ty, LLVMTypeRef et, LLVMValueRef base,
                                     LLVMValueRef idx, unsigned align) {
  return scratch_load(L, ty, et, base, idx, align);
}
void pto__lower_scratch_store(lw *L, LLVMValueRef v, LLVMTypeRef et, LLVMValueRef base,
                              LLVMValueRef idx, unsigned align) {
  scratch_store(L, v, et, base, idx, align);
}
LLVMValueRef pto__lower_vload(lw *L, const lw_tile *t, LLVMValueRef idx, int vw) {
  return vload(L, t, idx, vw);
}
void pto__lower_vstore(lw *L, const lw_tile *t, LLVMValueRef idx, LLVMValueRef v) {
  vstore(L, t, idx, v);
}
