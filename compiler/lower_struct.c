/* Lowering of PTIR's second set of ops, the structural group: arg reductions, broadcasts,
 * transpose, extract/assemble/concat/reshape/fillpad, ci/tri, gather/gather_rows/scatter_rows
 * and sort_idx. Each computes exactly what the interpreter's op of the same name does
 * (ir/interp.c, "second set, structural"): they move elements without arithmetic, so the bits
 * agree by construction; arg reductions and sort_idx compare in the interpreter's order.
 *
 * Indices and runtime offsets are checked before any element moves: out of range, the kernel
 * returns PTO_KERNEL_ERR_INDEX with the op's statement index, the index's position and its
 * value (pto/kernel_abi.h), so nothing outside a tensor is ever read or written. */
#include <string.h>

#include "lower.h"
#include "lower_kernel_internal.h"

static LLVMValueRef i64c(lw *L, int64_t v) { return pto__lower_i64(L, v); }
static LLVMValueRef mul(lw *L, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildMul(L->b, a, b, "");
}
static LLVMValueRef add(lw *L, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildAdd(L->b, a, b, "");
}

/* The result tile of s (its whole extent valid unless the type says otherwise). */
static lw_tile *result(lw *L, const pto_ir_stmt *s, LLVMValueRef vr, LLVMValueRef vc) {
  if (s->nresults != 1) return NULL;
  lw_tile *t = pto__lower_def_tile(L, s->results[0], vr, vc);
  return L->err ? NULL : t;
}

/* Copies n elements of tile a from element from to tile t at element to (same dtype). */
static void copy_run(lw *L, const lw_tile *t, LLVMValueRef to, const lw_tile *a, LLVMValueRef from,
                     LLVMValueRef n, const char *name) {
  lw_loop lp;
  LLVMValueRef k = pto__lower_loop_begin(L, &lp, i64c(L, 0), n, name);
  LLVMValueRef raw = pto__lower_tile_load(L, a->base, a->dt, add(L, from, k));
  pto__lower_tile_store(L, t->base, t->dt, add(L, to, k), raw);
  pto__lower_loop_end(L, &lp);
}

/* ---- launch errors -------------------------------------------------------------------------- */

int64_t pto__lower_op_index(lw *L, const pto_ir_stmt *s) {
  int pos = L->cur_pos - 1;
  if (pos >= 0 && pto_ir_func_stmt_at(L->k, pos) == s) return pos;
  for (int i = 0;; i++) {
    const pto_ir_stmt *x = pto_ir_func_stmt_at(L->k, i);
    if (!x) return 0x1fffff;
    if (x == s) return i;
  }
}

void pto__lower_check_index(lw *L, const pto_ir_stmt *s, LLVMValueRef v, LLVMValueRef lo,
                            LLVMValueRef hi, LLVMValueRef r, LLVMValueRef c) {
  LLVMBuilderRef b = L->b;
  LLVMValueRef bad = LLVMBuildICmp(b, LLVMIntSLT, v, lo, hi ? "" : "oob");
  if (hi) bad = LLVMBuildOr(b, bad, LLVMBuildICmp(b, LLVMIntSGE, v, hi, ""), "oob");
  LLVMValueRef mask = i64c(L, 0x1fffff);
  LLVMValueRef d0 =
      LLVMBuildOr(b, i64c(L, pto__lower_op_index(L, s) << 42),
                  LLVMBuildOr(b, LLVMBuildShl(b, LLVMBuildAnd(b, r, mask, ""), i64c(L, 21), ""),
                              LLVMBuildAnd(b, c, mask, ""), ""),
                  "");
  pto__lower_fail_if(L, bad, PTO_KERNEL_ERR_INDEX, d0, v);
}

/* The offsets [r, c] of a [h, w] sub-tile of a [R, C] tile, i64, checked at run time. */
static int sub_offsets(lw *L, const pto_ir_stmt *s, const pto_ir_arg *a, int64_t R, int64_t C,
                       int64_t h, int64_t w, LLVMValueRef offs[2]) {
  if (!a || a->kind != PTO_ARG_LIST || a->list.n != 2) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc, "%s: the offsets must be [r, c]",
                    pto_op_info_get(s->op.opc)->name);
    return -1;
  }
  const int64_t ext[2] = {R, C}, sub[2] = {h, w};
  for (int k = 0; k < 2; k++) {
    LLVMValueRef v = pto__lower_expr(L, a->list.items[k]);
    if (!v) return -1;
    offs[k] = pto__lower_convert(L, v, a->list.items[k]->dtype, PTO_DTYPE_INDEX);
    /* reported as position [k, PTO_KERNEL_INDEX_SUB | the largest offset] */
    pto__lower_check_index(L, s, offs[k], i64c(L, 0), i64c(L, ext[k] - sub[k] + 1), i64c(L, k),
                           i64c(L, PTO_KERNEL_INDEX_SUB | (ext[k] - sub[k])));
  }
  return 0;
}

/* ---- arg reductions ------------------------------------------------------------------------- */

/* row_argmax/min ([R,1] i32) and col_argmax/min ([1,C] i32): per output element, the first
 * extreme in index order; once the best is a NaN it stays (numpy's first NaN). Columns keep one
 * best value and index per column and run the column index innermost, so they vectorize; rows
 * run their chain along the row. */
/* Whether x replaces best: strictly better (first extreme kept), or the first NaN; a NaN best
 * stays. */
static LLVMValueRef arg_take(lw *L, LLVMValueRef x, LLVMValueRef best, int isf, int want_max,
                             int uns) {
  LLVMBuilderRef b = L->b;
  if (!isf)
    return LLVMBuildICmp(
        b, want_max ? (uns ? LLVMIntUGT : LLVMIntSGT) : (uns ? LLVMIntULT : LLVMIntSLT), x, best,
        "take");
  LLVMValueRef bnan = LLVMBuildFCmp(b, LLVMRealUNO, best, best, "");
  LLVMValueRef xnan = LLVMBuildFCmp(b, LLVMRealUNO, x, x, "");
  LLVMValueRef take =
      LLVMBuildOr(b, xnan, LLVMBuildFCmp(b, want_max ? LLVMRealOGT : LLVMRealOLT, x, best, ""), "");
  return LLVMBuildAnd(b, take, LLVMBuildNot(b, bnan, ""), "take");
}

/* 16 f32 elements of t from element idx on. */
static LLVMValueRef vload16(lw *L, const lw_tile *t, LLVMValueRef idx) {
  LLVMValueRef p = LLVMBuildInBoundsGEP2(L->b, L->t_f32, t->base, &idx, 1, "");
  LLVMValueRef v = LLVMBuildLoad2(L->b, LLVMVectorType(L->t_f32, 16), p, "");
  LLVMSetAlignment(v, 4);
  pto__lower_tag(L, v, 0);
  return v;
}

/* Row argmax/min of f32 rows a multiple of 16 long, in two passes per row: the extreme m along
 * the row, 16 lanes a step, `x > acc ? x : acc` (a NaN element never enters; a NaN first element
 * is caught by the NaN flag), then the first column holding m (== : -0 and +0 alike, as the
 * chain keeps the first of equal values); a row holding NaN instead gives its first NaN. Both
 * are what the interpreter's chain gives. */
static void argreduce_rows_f32(lw *L, const lw_tile *a, const lw_tile *t, int want_max) {
  LLVMBuilderRef b = L->b;
  int64_t R = a->rows, C = a->cols;
  LLVMTypeRef vt = LLVMVectorType(L->t_f32, 16), bt = LLVMVectorType(L->t_i1, 16);
  LLVMRealPredicate better = want_max ? LLVMRealOGT : LLVMRealOLT;
  LLVMValueRef accp = pto__lower_entry_alloca(L, vt, "amx.acc");
  LLVMValueRef nanp = pto__lower_entry_alloca(L, bt, "amx.nan");
  LLVMValueRef kp = pto__lower_entry_alloca(L, L->t_i64, "amx.k");
  lw_loop li, lj;
  LLVMValueRef Cv = i64c(L, C);
  LLVMValueRef i = pto__lower_loop_begin(L, &li, i64c(L, 0), i64c(L, R), "amx.row");
  LLVMValueRef base = mul(L, i, Cv);
  LLVMValueRef first = vload16(L, a, base);
  LLVMBuildStore(b, first, accp);
  LLVMBuildStore(b, LLVMBuildFCmp(b, LLVMRealUNO, first, first, ""), nanp);
  LLVMValueRef j = pto__lower_loop_begin(L, &lj, i64c(L, 1), i64c(L, C / 16), "amx.j");
  LLVMValueRef x = vload16(L, a, add(L, base, mul(L, j, i64c(L, 16))));
  LLVMValueRef acc = LLVMBuildLoad2(b, vt, accp, "");
  LLVMBuildStore(b, LLVMBuildSelect(b, LLVMBuildFCmp(b, better, x, acc, ""), x, acc, ""), accp);
  LLVMBuildStore(
      b,
      LLVMBuildOr(b, LLVMBuildLoad2(b, bt, nanp, ""), LLVMBuildFCmp(b, LLVMRealUNO, x, x, ""), ""),
      nanp);
  pto__lower_loop_end(L, &lj);
  LLVMValueRef nan = LLVMBuildLoad2(b, bt, nanp, "");
  LLVMValueRef anynan = pto__lower_call_intrinsic(L, "llvm.vector.reduce.or", &bt, 1, &nan, 1, "");
  acc = LLVMBuildLoad2(b, vt, accp, "");
  for (int w = 8; w >= 1; w /= 2) { /* no NaN in the lanes when it is used */
    LLVMValueRef m[16];
    for (int k = 0; k < 16; k++)
      m[k] = LLVMConstInt(L->t_i32, (unsigned long long)(w + k % w), 0);
    LLVMValueRef hi = LLVMBuildShuffleVector(b, acc, LLVMGetPoison(vt), LLVMConstVector(m, 16), "");
    acc = LLVMBuildSelect(b, LLVMBuildFCmp(b, better, hi, acc, ""), hi, acc, "");
  }
  LLVMValueRef mx = LLVMBuildExtractElement(b, acc, LLVMConstInt(L->t_i32, 0, 0), "");
  /* the first column holding m (or the first NaN): it exists, so the scan stops inside the row */
  LLVMBuildStore(b, i64c(L, 0), kp);
  LLVMBasicBlockRef scan = LLVMAppendBasicBlockInContext(L->c, L->fn, "amx.scan");
  LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(L->c, L->fn, "amx.next");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(L->c, L->fn, "amx.found");
  LLVMBuildBr(b, scan);
  LLVMPositionBuilderAtEnd(b, scan);
  LLVMValueRef k = LLVMBuildLoad2(b, L->t_i64, kp, "");
  LLVMValueRef y = pto__lower_load_c(L, a, add(L, base, k));
  LLVMValueRef hit = LLVMBuildSelect(b, anynan, LLVMBuildFCmp(b, LLVMRealUNO, y, y, ""),
                                     LLVMBuildFCmp(b, LLVMRealOEQ, y, mx, ""), "");
  hit = LLVMBuildOr(b, hit, LLVMBuildICmp(b, LLVMIntSGE, k, i64c(L, C - 1), ""), "");
  LLVMBuildCondBr(b, hit, done, next);
  LLVMPositionBuilderAtEnd(b, next);
  LLVMBuildStore(b, add(L, k, i64c(L, 1)), kp);
  LLVMBuildBr(b, scan);
  LLVMPositionBuilderAtEnd(b, done);
  pto__lower_tile_store(L, t->base, PTO_DTYPE_I32, i, LLVMBuildTrunc(b, k, L->t_i32, ""));
  pto__lower_loop_end(L, &li);
}

void pto__lower_argreduce(lw *L, const pto_ir_stmt *s, int rows) {
  lw_tile *a = pto__lower_tile_arg(L, s, 0);
  if (!a) return;
  lw_tile *t = result(L, s, rows ? a->vr : i64c(L, 1), rows ? i64c(L, 1) : a->vc);
  if (!t) return;
  LLVMBuilderRef b = L->b;
  int want_max = pto_op_info_get(s->op.opc)->fn == PTO_FN_ARGMAX;
  int isf = pto_dtype_is_float(a->dt);
  int uns = !isf && !pto_dtype_is_signed(a->dt);
  LLVMTypeRef ct = pto__lower_compute_type(L, a->dt);
  int64_t R = a->rows, C = a->cols;
  LLVMValueRef Cv = i64c(L, C);
  lw_loop lo, lk;
  if (rows && a->dt == PTO_DTYPE_F32 && C % 16 == 0) {
    argreduce_rows_f32(L, a, t, want_max);
    return;
  }
  if (rows) {
    /* the row's chain in registers (scalar allocas: promoted) */
    LLVMValueRef bv = pto__lower_entry_alloca(L, ct, "amax.v");
    LLVMValueRef bi = pto__lower_entry_alloca(L, L->t_i32, "amax.i");
    LLVMValueRef o = pto__lower_loop_begin(L, &lo, i64c(L, 0), i64c(L, R), "amax.row");
    LLVMValueRef base = mul(L, o, Cv);
    LLVMBuildStore(b, pto__lower_load_c(L, a, base), bv);
    LLVMBuildStore(b, LLVMConstInt(L->t_i32, 0, 0), bi);
    LLVMValueRef k = pto__lower_loop_begin(L, &lk, i64c(L, 1), Cv, "amax.k");
    LLVMValueRef x = pto__lower_load_c(L, a, add(L, base, k));
    LLVMValueRef best = LLVMBuildLoad2(b, ct, bv, "");
    LLVMValueRef take = arg_take(L, x, best, isf, want_max, uns);
    LLVMBuildStore(b, LLVMBuildSelect(b, take, x, best, ""), bv);
    LLVMBuildStore(b,
                   LLVMBuildSelect(b, take, LLVMBuildTrunc(b, k, L->t_i32, ""),
                                   LLVMBuildLoad2(b, L->t_i32, bi, ""), ""),
                   bi);
    pto__lower_loop_end(L, &lk);
    pto__lower_tile_store(L, t->base, PTO_DTYPE_I32, o, LLVMBuildLoad2(b, L->t_i32, bi, ""));
    pto__lower_loop_end(L, &lo);
    return;
  }
  /* columns: one best value and index per column, the column index innermost (vectorizes) */
  LLVMValueRef bestv = pto__lower_entry_alloca(L, LLVMArrayType2(ct, (uint64_t)C), "amax.v");
  LLVMValueRef besti = pto__lower_entry_alloca(L, LLVMArrayType2(L->t_i32, (uint64_t)C), "amax.i");
  LLVMValueRef j0 = pto__lower_loop_begin(L, &lk, i64c(L, 0), Cv, "amax.init");
  LLVMBuildStore(b, pto__lower_load_c(L, a, j0), LLVMBuildInBoundsGEP2(b, ct, bestv, &j0, 1, ""));
  LLVMBuildStore(b, LLVMConstInt(L->t_i32, 0, 0),
                 LLVMBuildInBoundsGEP2(b, L->t_i32, besti, &j0, 1, ""));
  pto__lower_loop_end(L, &lk);
  LLVMValueRef i = pto__lower_loop_begin(L, &lo, i64c(L, 1), i64c(L, R), "amax.i");
  LLVMValueRef ii = LLVMBuildTrunc(b, i, L->t_i32, "");
  LLVMValueRef j = pto__lower_loop_begin(L, &lk, i64c(L, 0), Cv, "amax.j");
  LLVMValueRef x = pto__lower_load_c(L, a, add(L, mul(L, i, Cv), j));
  LLVMValueRef pv = LLVMBuildInBoundsGEP2(b, ct, bestv, &j, 1, "");
  LLVMValueRef pi = LLVMBuildInBoundsGEP2(b, L->t_i32, besti, &j, 1, "");
  LLVMValueRef best = LLVMBuildLoad2(b, ct, pv, "");
  LLVMValueRef take = arg_take(L, x, best, isf, want_max, uns);
  LLVMBuildStore(b, LLVMBuildSelect(b, take, x, best, ""), pv);
  LLVMBuildStore(b, LLVMBuildSelect(b, take, ii, LLVMBuildLoad2(b, L->t_i32, pi, ""), ""), pi);
  pto__lower_loop_end(L, &lk);
  pto__lower_loop_end(L, &lo);
  LLVMValueRef j1 = pto__lower_loop_begin(L, &lk, i64c(L, 0), Cv, "amax.out");
  pto__lower_tile_store(
      L, t->base, PTO_DTYPE_I32, j1,
      LLVMBuildLoad2(b, L->t_i32, LLVMBuildInBoundsGEP2(b, L->t_i32, besti, &j1, 1, ""), ""));
  pto__lower_loop_end(L, &lk);
}

/* ---- moves ---------------------------------------------------------------------------------- */

static void lower_broadcast(lw *L, const pto_ir_stmt *s, int rows) {
  lw_tile *v = pto__lower_tile_arg(L, s, 0);
  lw_tile *t = v ? result(L, s, NULL, NULL) : NULL;
  if (!t) return;
  lw_loop li, lj;
  LLVMValueRef Cv = i64c(L, t->cols);
  LLVMValueRef i = pto__lower_loop_begin(L, &li, i64c(L, 0), i64c(L, t->rows), "bcast.i");
  LLVMValueRef x = rows ? pto__lower_tile_load(L, v->base, v->dt, i) : NULL;
  LLVMValueRef j = pto__lower_loop_begin(L, &lj, i64c(L, 0), Cv, "bcast.j");
  if (!rows) x = pto__lower_tile_load(L, v->base, v->dt, j);
  pto__lower_tile_store(L, t->base, t->dt, add(L, mul(L, i, Cv), j), x);
  pto__lower_loop_end(L, &lj);
  pto__lower_loop_end(L, &li);
}

/* t[i, j] = a[j, i], in square blocks of 8 so both sides stay within a few cache lines. */
static void lower_transpose(lw *L, const pto_ir_stmt *s) {
  lw_tile *a = pto__lower_tile_arg(L, s, 0);
  lw_tile *t = a ? result(L, s, a->vc, a->vr) : NULL;
  if (!t) return;
  int64_t R = a->rows, C = a->cols, B = 8;
  lw_loop lb, lc, li, lj;
  LLVMValueRef Rv = i64c(L, R), Cv = i64c(L, C), Bv = i64c(L, B);
  /* blocks of B source rows x B source columns; the edges clipped */
  LLVMValueRef rb = pto__lower_loop_begin(L, &lb, i64c(L, 0), i64c(L, (R + B - 1) / B), "tr.rb");
  LLVMValueRef cb = pto__lower_loop_begin(L, &lc, i64c(L, 0), i64c(L, (C + B - 1) / B), "tr.cb");
  LLVMValueRef r0 = mul(L, rb, Bv), c0 = mul(L, cb, Bv);
  LLVMValueRef r1 = pto__lower_smin(L, add(L, r0, Bv), Rv);
  LLVMValueRef c1 = pto__lower_smin(L, add(L, c0, Bv), Cv);
  LLVMValueRef c = pto__lower_loop_begin(L, &lj, c0, c1, "tr.c");
  LLVMValueRef r = pto__lower_loop_begin(L, &li, r0, r1, "tr.r");
  LLVMValueRef raw = pto__lower_tile_load(L, a->base, a->dt, add(L, mul(L, r, Cv), c));
  pto__lower_tile_store(L, t->base, t->dt, add(L, mul(L, c, Rv), r), raw);
  pto__lower_loop_end(L, &li);
  pto__lower_loop_end(L, &lj);
  pto__lower_loop_end(L, &lc);
  pto__lower_loop_end(L, &lb);
}

static void lower_extract(lw *L, const pto_ir_stmt *s) {
  lw_tile *a = pto__lower_tile_arg(L, s, 0);
  if (!a || s->nresults != 1) return;
  const pto_ir_type *rt = s->results[0]->type;
  int64_t h = 0, w = 0;
  pto__lower_static_int(rt->dims[0], &h);
  pto__lower_static_int(rt->dims[1], &w);
  LLVMValueRef offs[2];
  if (sub_offsets(L, s, pto__lower_pos_arg(L, s, 1), a->rows, a->cols, h, w, offs)) return;
  lw_tile *t = result(L, s, NULL, NULL);
  if (!t) return;
  lw_loop li;
  LLVMValueRef i = pto__lower_loop_begin(L, &li, i64c(L, 0), i64c(L, h), "ext.i");
  LLVMValueRef from = add(L, mul(L, add(L, offs[0], i), i64c(L, a->cols)), offs[1]);
  copy_run(L, t, mul(L, i, i64c(L, w)), a, from, i64c(L, w), "ext.j");
  pto__lower_loop_end(L, &li);
}

static void lower_assemble(lw *L, const pto_ir_stmt *s) {
  lw_tile *d = pto__lower_tile_arg(L, s, 0);
  lw_tile *x = d ? pto__lower_tile_arg(L, s, 1) : NULL;
  if (!x) return;
  LLVMValueRef offs[2];
  if (sub_offsets(L, s, pto__lower_pos_arg(L, s, 2), d->rows, d->cols, x->rows, x->cols, offs))
    return;
  lw_tile *t = result(L, s, d->vr, d->vc);
  if (!t) return;
  pto__lower_copy_tile(L, t->base, d->base, d);
  lw_loop li;
  LLVMValueRef i = pto__lower_loop_begin(L, &li, i64c(L, 0), i64c(L, x->rows), "asm.i");
  LLVMValueRef to = add(L, mul(L, add(L, offs[0], i), i64c(L, d->cols)), offs[1]);
  copy_run(L, t, to, x, mul(L, i, i64c(L, x->cols)), i64c(L, x->cols), "asm.j");
  pto__lower_loop_end(L, &li);
}

static void lower_concat(lw *L, const pto_ir_stmt *s) {
  lw_tile *a = pto__lower_tile_arg(L, s, 0);
  lw_tile *x = a ? pto__lower_tile_arg(L, s, 1) : NULL;
  lw_tile *t = x ? result(L, s, NULL, NULL) : NULL;
  if (!t) return;
  lw_loop li;
  LLVMValueRef i = pto__lower_loop_begin(L, &li, i64c(L, 0), i64c(L, t->rows), "cat.i");
  LLVMValueRef row = mul(L, i, i64c(L, t->cols));
  copy_run(L, t, row, a, mul(L, i, i64c(L, a->cols)), i64c(L, a->cols), "cat.a");
  copy_run(L, t, add(L, row, i64c(L, a->cols)), x, mul(L, i, i64c(L, x->cols)), i64c(L, x->cols),
           "cat.b");
  pto__lower_loop_end(L, &li);
}

static void lower_reshape(lw *L, const pto_ir_stmt *s) {
  lw_tile *a = pto__lower_tile_arg(L, s, 0);
  lw_tile *t = a ? result(L, s, NULL, NULL) : NULL;
  if (t) pto__lower_copy_tile(L, t->base, a->base, a);
}

/* Every element outside a's valid region becomes the pad value. */
static void lower_fillpad(lw *L, const pto_ir_stmt *s) {
  lw_tile *a = pto__lower_tile_arg(L, s, 0);
  lw_tile *t = a ? result(L, s, NULL, NULL) : NULL;
  if (!t) return;
  const pto_ir_arg *pad = pto__lower_kwarg(s, "pad");
  LLVMValueRef padv =
      pto__lower_pad_value(L, t->dt, pad && pad->kind == PTO_ARG_WORD ? pad->str : NULL);
  LLVMBuilderRef b = L->b;
  lw_loop li, lj;
  LLVMValueRef Cv = i64c(L, t->cols);
  LLVMValueRef i = pto__lower_loop_begin(L, &li, i64c(L, 0), i64c(L, t->rows), "fp.i");
  LLVMValueRef rin = LLVMBuildICmp(b, LLVMIntSLT, i, a->vr, "");
  LLVMValueRef j = pto__lower_loop_begin(L, &lj, i64c(L, 0), Cv, "fp.j");
  LLVMValueRef idx = add(L, mul(L, i, Cv), j);
  LLVMValueRef in = LLVMBuildAnd(b, rin, LLVMBuildICmp(b, LLVMIntSLT, j, a->vc, ""), "");
  LLVMValueRef raw = pto__lower_tile_load(L, a->base, a->dt, idx);
  pto__lower_tile_store(L, t->base, t->dt, idx, LLVMBuildSelect(b, in, raw, padv, ""));
  pto__lower_loop_end(L, &lj);
  pto__lower_loop_end(L, &li);
}

static int kw_true(const pto_ir_stmt *s, const char *kw) {
  const pto_ir_arg *a = pto__lower_kwarg(s, kw);
  return a && a->kind == PTO_ARG_WORD && strcmp(a->str, "true") == 0;
}

/* ci: start + j (descending: start - j), wrapping in the dtype. */
static void lower_ci(lw *L, const pto_ir_stmt *s) {
  if (s->nresults != 1) return;
  pto_dtype dt = s->results[0]->type->dtype;
  LLVMValueRef st = pto__lower_scalar_arg(L, pto__lower_pos_arg(L, s, 0), dt);
  lw_tile *t = st ? result(L, s, NULL, NULL) : NULL;
  if (!t) return;
  LLVMTypeRef ct = pto__lower_compute_type(L, dt);
  lw_loop lj;
  LLVMValueRef j = pto__lower_loop_begin(L, &lj, i64c(L, 0), i64c(L, t->rows * t->cols), "ci.j");
  LLVMValueRef jc = LLVMBuildURem(L->b, j, i64c(L, t->cols), "");
  jc = LLVMGetIntTypeWidth(ct) < 64 ? LLVMBuildTrunc(L->b, jc, ct, "") : jc;
  LLVMValueRef v =
      kw_true(s, "descending") ? LLVMBuildSub(L->b, st, jc, "") : LLVMBuildAdd(L->b, st, jc, "");
  pto__lower_tile_store(L, t->base, dt, j, v);
  pto__lower_loop_end(L, &lj);
}

/* tri: 1 where j - i <= diagonal (upper: j - i >= diagonal), else 0. */
static void lower_tri(lw *L, const pto_ir_stmt *s) {
  const pto_ir_arg *da = pto__lower_pos_arg(L, s, 0);
  if (!da || s->nresults != 1 || da->kind != PTO_ARG_EXPR) return;
  LLVMValueRef d = pto__lower_expr(L, da->expr);
  if (!d) return;
  pto_dtype ddt = da->expr->dtype;
  d = pto__lower_convert(L, d, ddt, PTO_DTYPE_I64);
  if (ddt == PTO_DTYPE_U64) /* as the interpreter: a u64 past INT64_MAX is INT64_MAX */
    d = LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntSLT, d, i64c(L, 0), ""),
                        i64c(L, INT64_MAX), d, "");
  lw_tile *t = result(L, s, NULL, NULL);
  if (!t) return;
  LLVMBuilderRef b = L->b;
  int upper = kw_true(s, "upper");
  LLVMValueRef one = pto__lower_to_storage(
      L, t->dt, pto__lower_convert(L, LLVMConstInt(L->t_i1, 1, 0), PTO_DTYPE_BOOL, t->dt));
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(one));
  lw_loop li, lj;
  LLVMValueRef Cv = i64c(L, t->cols);
  LLVMValueRef i = pto__lower_loop_begin(L, &li, i64c(L, 0), i64c(L, t->rows), "tri.i");
  LLVMValueRef j = pto__lower_loop_begin(L, &lj, i64c(L, 0), Cv, "tri.j");
  LLVMValueRef dj = LLVMBuildSub(b, j, i, "");
  LLVMValueRef in = LLVMBuildICmp(b, upper ? LLVMIntSGE : LLVMIntSLE, dj, d, "");
  pto__lower_tile_store(L, t->base, t->dt, add(L, mul(L, i, Cv), j),
                        LLVMBuildSelect(b, in, one, zero, ""));
  pto__lower_loop_end(L, &lj);
  pto__lower_loop_end(L, &li);
}

/* ---- gathers and scatters ------------------------------------------------------------------- */

/* Index k of an i32 index tile as i64. */
static LLVMValueRef index_at(lw *L, const lw_tile *idx, LLVMValueRef k) {
  return LLVMBuildSExt(L->b, pto__lower_tile_load(L, idx->base, PTO_DTYPE_I32, k), L->t_i64, "");
}

static void lower_gather(lw *L, const pto_ir_stmt *s) {
  lw_tile *src = pto__lower_tile_arg(L, s, 0);
  lw_tile *idx = src ? pto__lower_tile_arg(L, s, 1) : NULL;
  if (!idx) return;
  int64_t n = src->rows * src->cols;
  lw_loop li, lj;
  LLVMValueRef Cv = i64c(L, idx->cols);
  /* every index checked first: the gather loop then has no exit and vectorizes; one out of
   * range is reported at [i, PTO_KERNEL_INDEX_POS | j], err_detail[1] the source's positions
   * << 32 | the index as u32 (pto/kernel_abi.h), so the message gives the range */
  LLVMBuilderRef b = L->b;
  int64_t op = pto__lower_op_index(L, s);
  LLVMValueRef i = pto__lower_loop_begin(L, &li, i64c(L, 0), i64c(L, idx->rows), "gat.ci");
  LLVMValueRef j = pto__lower_loop_begin(L, &lj, i64c(L, 0), Cv, "gat.cj");
  LLVMValueRef v = index_at(L, idx, add(L, mul(L, i, Cv), j));
  LLVMValueRef oob = LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntSLT, v, i64c(L, 0), ""),
                                 LLVMBuildICmp(b, LLVMIntSGE, v, i64c(L, n), ""), "oob");
  LLVMValueRef d0 = LLVMBuildOr(
      b, i64c(L, PTO_KERNEL_INDEX_DETAIL(op, 0, PTO_KERNEL_INDEX_POS)),
      LLVMBuildOr(b, LLVMBuildShl(b, LLVMBuildAnd(b, i, i64c(L, 0x7ffff), ""), i64c(L, 21), ""),
                  LLVMBuildAnd(b, j, i64c(L, 0x7ffff), ""), ""),
      "");
  LLVMValueRef d1 =
      LLVMBuildOr(b, i64c(L, n << 32), LLVMBuildAnd(b, v, i64c(L, 0xffffffff), ""), "");
  pto__lower_fail_if(L, oob, PTO_KERNEL_ERR_INDEX, d0, d1);
  pto__lower_loop_end(L, &lj);
  pto__lower_loop_end(L, &li);
  lw_tile *t = result(L, s, NULL, NULL);
  if (!t) return;
  LLVMValueRef k = pto__lower_loop_begin(L, &li, i64c(L, 0), i64c(L, t->rows * t->cols), "gat.k");
  LLVMValueRef raw = pto__lower_tile_load(L, src->base, src->dt, index_at(L, idx, k));
  pto__lower_tile_store(L, t->base, t->dt, k, raw);
  pto__lower_loop_end(L, &li);
}

/* gather_rows / scatter_rows: the column offset and the indices of the first nrows rows checked
 * against the rank-2 tensor before anything moves. Returns the column offset (i64), or NULL. */
static LLVMValueRef rows_check(lw *L, const pto_ir_stmt *s, const lw_tensor *T, const lw_tile *idx,
                               LLVMValueRef nrows, int64_t C) {
  const pto_ir_arg *ca = pto__lower_pos_arg(L, s, 2);
  if (!ca) return NULL;
  if (ca->kind != PTO_ARG_LIST || ca->list.n != 1 || T->rank != 2) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc,
                    "%s: needs a rank-2 tensor and a column offset [c0]",
                    pto_op_info_get(s->op.opc)->name);
    return NULL;
  }
  LLVMValueRef c0 = pto__lower_expr(L, ca->list.items[0]);
  if (!c0) return NULL;
  c0 = pto__lower_convert(L, c0, ca->list.items[0]->dtype, PTO_DTYPE_INDEX);
  /* the columns: reported as position [PTO_KERNEL_INDEX_SUB | 1, PTO_KERNEL_INDEX_SUB | m], m the
   * largest offset that fits (the tensor's columns less C), or as PTO_KERNEL_INDEX_WIDE_DETAIL
   * where m does not fit the field (no offset fits, or 2^20 columns and more) */
  LLVMBuilderRef b = L->b;
  LLVMValueRef m = LLVMBuildSub(b, T->shape[1], i64c(L, C), "");
  LLVMValueRef m_ok = LLVMBuildICmp(b, LLVMIntULT, m, i64c(L, PTO_KERNEL_INDEX_SUB), "");
  int64_t op = pto__lower_op_index(L, s);
  LLVMValueRef narrow = LLVMBuildOr(
      b, i64c(L, PTO_KERNEL_INDEX_DETAIL(op, PTO_KERNEL_INDEX_SUB | 1, PTO_KERNEL_INDEX_SUB)), m,
      "");
  LLVMValueRef wide = LLVMBuildOr(b, i64c(L, PTO_KERNEL_INDEX_WIDE_DETAIL(op, 0)),
                                  LLVMBuildAnd(b, m, i64c(L, (INT64_C(1) << 42) - 1), ""), "");
  LLVMValueRef bad = LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntSLT, c0, i64c(L, 0), ""),
                                 LLVMBuildICmp(b, LLVMIntSGT, c0, m, ""), "oob");
  pto__lower_fail_if(L, bad, PTO_KERNEL_ERR_INDEX, LLVMBuildSelect(b, m_ok, narrow, wide, ""), c0);
  lw_loop li;
  LLVMValueRef i = pto__lower_loop_begin(L, &li, i64c(L, 0), nrows, "rows.chk");
  /* a row index: at [PTO_KERNEL_INDEX_SUB | i, 0], err_detail[1] the tensor's rows << 32 | the
   * index as u32 (pto/kernel_abi.h), so the message gives the rows; with 2^31 rows and more, as
   * another index is reported */
  LLVMValueRef v = index_at(L, idx, i), rows = T->shape[0];
  LLVMValueRef oob = LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntSLT, v, i64c(L, 0), ""),
                                 LLVMBuildICmp(b, LLVMIntSGE, v, rows, ""), "oob");
  LLVMValueRef pos = LLVMBuildShl(b, LLVMBuildAnd(b, i, i64c(L, 0xfffff), ""), i64c(L, 21), "");
  LLVMValueRef fits = LLVMBuildICmp(b, LLVMIntULT, rows, i64c(L, INT64_C(1) << 31), "");
  LLVMValueRef d0 = LLVMBuildOr(
      b, pos,
      LLVMBuildSelect(b, fits, i64c(L, PTO_KERNEL_INDEX_DETAIL(op, PTO_KERNEL_INDEX_SUB, 0)),
                      i64c(L, PTO_KERNEL_INDEX_DETAIL(op, 0, 0)), ""),
      "");
  LLVMValueRef d1 = LLVMBuildSelect(b, fits,
                                    LLVMBuildOr(b, LLVMBuildShl(b, rows, i64c(L, 32), ""),
                                                LLVMBuildAnd(b, v, i64c(L, 0xffffffff), ""), ""),
                                    v, "");
  pto__lower_fail_if(L, oob, PTO_KERNEL_ERR_INDEX, d0, d1);
  pto__lower_loop_end(L, &li);
  return c0;
}

/* Row i < nr of the tile (C columns) and row idx[i] of the tensor from column c0: elements
 * j < nc of each. Two copies of the loop: unit column stride (vectorizable) and general. */
static void rows_loop(lw *L, const lw_tensor *T, const lw_tile *idx, LLVMValueRef c0,
                      LLVMValueRef nr, LLVMValueRef nc, int64_t C, int scatter, const lw_tile *t) {
  LLVMBuilderRef b = L->b;
  LLVMValueRef unit = LLVMBuildICmp(b, LLVMIntEQ, T->stride[1], i64c(L, 1), "unit");
  LLVMBasicBlockRef bb[2] = {LLVMAppendBasicBlockInContext(L->c, L->fn, "rows.unit"),
                             LLVMAppendBasicBlockInContext(L->c, L->fn, "rows.strided")};
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(L->c, L->fn, "rows.done");
  LLVMBuildCondBr(b, unit, bb[0], bb[1]);
  for (int general = 0; general < 2; general++) {
    LLVMPositionBuilderAtEnd(b, bb[general]);
    lw_loop li, lj;
    LLVMValueRef i = pto__lower_loop_begin(L, &li, i64c(L, 0), nr, "rows.i");
    LLVMValueRef trow = mul(L, index_at(L, idx, i), T->stride[0]);
    LLVMValueRef orow = mul(L, i, i64c(L, C));
    LLVMValueRef j = pto__lower_loop_begin(L, &lj, i64c(L, 0), nc, "rows.j");
    LLVMValueRef col = add(L, c0, j);
    LLVMValueRef tidx = add(L, trow, general ? mul(L, col, T->stride[1]) : col);
    if (scatter)
      pto__lower_tensor_store(L, T->dt, T->data, tidx,
                              pto__lower_tile_load(L, t->base, t->dt, add(L, orow, j)));
    else
      pto__lower_tile_store(L, t->base, t->dt, add(L, orow, j),
                            pto__lower_tensor_load(L, T->dt, T->data, tidx));
    pto__lower_loop_end(L, &lj);
    pto__lower_loop_end(L, &li);
    LLVMBuildBr(b, done);
  }
  LLVMPositionBuilderAtEnd(b, done);
}

static void lower_gather_rows(lw *L, const pto_ir_stmt *s) {
  lw_tensor *T = pto__lower_tensor_arg(L, s, 0);
  lw_tile *idx = T ? pto__lower_tile_arg(L, s, 1) : NULL;
  if (!idx || s->nresults != 1) return;
  int64_t R = 0, C = 0;
  pto__lower_static_int(s->results[0]->type->dims[0], &R);
  pto__lower_static_int(s->results[0]->type->dims[1], &C);
  LLVMValueRef c0 = rows_check(L, s, T, idx, i64c(L, idx->rows), C);
  lw_tile *t = c0 ? result(L, s, NULL, NULL) : NULL;
  if (!t) return;
  int pos = L->cur_pos - 1;
  if (pos < 0 || pos >= L->npos || L->plan[pos].s != s || L->plan[pos].view != 3 ||
      T->dt != t->dt || idx->rows < R) {
    rows_loop(L, T, idx, c0, i64c(L, R), i64c(L, C), C, 0, t);
    return;
  }
  /* A view (plan_row_views): every index checked as above, then with unit column stride the
   * matmul reads row k of the tile at row idx[k] of the tensor from column c0 (lw_tile.ri), and
   * nothing is copied; otherwise the copy into the buffer, read row after row. Accesses through
   * the chosen base carry no alias scopes (pto__lower_tag), as it may be either memory. */
  LLVMBuilderRef b = L->b;
  LLVMValueRef unit = LLVMBuildICmp(b, LLVMIntEQ, T->stride[1], i64c(L, 1), "rview.on");
  LLVMBasicBlockRef bb_copy = LLVMAppendBasicBlockInContext(L->c, L->fn, "rview.copy");
  LLVMBasicBlockRef bb_view = LLVMAppendBasicBlockInContext(L->c, L->fn, "rview");
  LLVMTypeRef st = pto__lower_storage_type(L, T->dt);
  LLVMValueRef first = LLVMBuildGEP2(b, st, T->data, &c0, 1, "rview.c0");
  LLVMValueRef base = LLVMBuildSelect(b, unit, first, t->base, "rview.base");
  if (pto__lower_note_view(L, base)) {
    pto__lower_fail(L, PTO_STATUS_OUT_OF_MEMORY, s->loc, "out of memory lowering a %s",
                    pto_op_info_get(s->op.opc)->name);
    return;
  }
  LLVMValueRef rs = LLVMBuildSelect(b, unit, T->stride[0], i64c(L, C), "rview.rs");
  LLVMBuildCondBr(b, unit, bb_view, bb_copy);
  LLVMPositionBuilderAtEnd(b, bb_copy);
  rows_loop(L, T, idx, c0, i64c(L, R), i64c(L, C), C, 0, t);
  LLVMBuildBr(b, bb_view);
  LLVMPositionBuilderAtEnd(b, bb_view);
  t->base = base;
  t->rs = rs;
  t->ri = idx->base;
  t->ri_on = unit;
}

/* Rows in row order: a later row wins on a repeated index. Like a store, only the valid region
 * (the interpreter's rule): padding rows are not data, their indices neither checked nor used. */
static void lower_scatter_rows(lw *L, const pto_ir_stmt *s) {
  lw_tile *t = pto__lower_tile_arg(L, s, 0);
  lw_tile *idx = t ? pto__lower_tile_arg(L, s, 1) : NULL;
  lw_tensor *T = idx ? pto__lower_tensor_arg(L, s, 3) : NULL;
  if (!T) return;
  LLVMValueRef c0 = rows_check(L, s, T, idx, t->vr, t->cols);
  if (!c0) return;
  rows_loop(L, T, idx, c0, t->vr, t->vc, t->cols, 1, t);
  if (s->nresults == 1) L->vals[s->results[0]->id] = L->vals[s->op.args[3].expr->value->id];
}

/* ---- sort ----------------------------------------------------------------------------------- */

/* An i64 key whose order (unsigned for unsigned dtypes, signed otherwise) is the sort order:
 * floats through their f64 bits with the magnitude of negatives flipped, -0 as +0 and every NaN
 * above +inf. */
static LLVMValueRef sort_key(lw *L, pto_dtype dt, LLVMValueRef x) {
  LLVMBuilderRef b = L->b;
  if (!pto_dtype_is_float(dt))
    return LLVMGetIntTypeWidth(LLVMTypeOf(x)) == 64 ? x
           : pto_dtype_is_signed(dt)                ? LLVMBuildSExt(b, x, L->t_i64, "")
                                                    : LLVMBuildZExt(b, x, L->t_i64, "");
  if (dt != PTO_DTYPE_F64) x = LLVMBuildFPExt(b, x, L->t_f64, "");
  LLVMValueRef zero = LLVMConstReal(L->t_f64, 0.0);
  x = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, x, zero, ""), zero, x, "");
  LLVMValueRef bits = LLVMBuildBitCast(b, x, L->t_i64, "");
  LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, bits, i64c(L, 0), "");
  bits = LLVMBuildSelect(b, neg, LLVMBuildXor(b, bits, i64c(L, INT64_MAX), ""), bits, "");
  return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, x, x, ""), i64c(L, INT64_MAX), bits,
                         "key");
}

/* Dtypes of up to 32 bits: per row, each element becomes one u64, its order key in the high
 * half (u32: floats through their f32 bits with negatives flipped, -0 as +0, NaN above +inf;
 * signed integers with the sign bit flipped; desc: complemented) and its column in the low half.
 * The u64s are all distinct and their ascending order is the stable order, so any sort of them
 * gives the same columns as the interpreter's stable insertion sort: here a sorting network on
 * each run of up to 64 in vector registers (sort_net: a whole row of up to 64 columns), then a
 * branch-free bottom-up merge sort (log2(C / 64) passes, unrolled here: C is static) between two
 * buffers. */
static LLVMValueRef sort_key32(lw *L, pto_dtype dt, LLVMValueRef x, int desc) {
  LLVMBuilderRef b = L->b;
  LLVMValueRef u;
  if (pto_dtype_is_float(dt)) {
    LLVMValueRef zero = LLVMConstReal(L->t_f32, 0.0);
    x = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, x, zero, ""), zero, x, "");
    LLVMValueRef bits = LLVMBuildBitCast(b, x, L->t_i32, "");
    LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, bits, LLVMConstInt(L->t_i32, 0, 0), "");
    u = LLVMBuildXor(b, bits,
                     LLVMBuildSelect(b, neg, LLVMConstInt(L->t_i32, 0xffffffffu, 0),
                                     LLVMConstInt(L->t_i32, 0x80000000u, 0), ""),
                     "");
    u = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, x, x, ""),
                        LLVMConstInt(L->t_i32, 0xffffffffu, 0), u, "");
  } else if (pto_dtype_is_signed(dt)) {
    u = LLVMBuildXor(b, LLVMBuildSExtOrBitCast(b, x, L->t_i32, ""),
                     LLVMConstInt(L->t_i32, 0x80000000u, 0), "");
  } else {
    u = LLVMBuildZExtOrBitCast(b, x, L->t_i32, "");
  }
  if (desc) u = LLVMBuildNot(b, u, "");
  return LLVMBuildShl(b, LLVMBuildZExt(b, u, L->t_i64, ""), i64c(L, 32), "");
}

#define SORT_NET_MAX 64 /* the most u64s a sorting network orders at once, before the merges */

/* The network's width for C columns: the power of two that holds them, up to SORT_NET_MAX. */
static int sort_net_width(int64_t C) {
  int n = 2;
  while (n < C && n < SORT_NET_MAX)
    n *= 2;
  return n;
}

/* v (a <n x i64> of distinct keys) in ascending order: Batcher's bitonic network, each stage one
 * lane permutation, an unsigned min and max of the pairs, and a blend that gives each lane its
 * side (vpermq, vpminuq, vpmaxuq, vpblendmq with AVX-512): log2(n) (log2(n) + 1) / 2 stages, 21
 * at 64 lanes, with no branch and no load that depends on a comparison. */
static LLVMValueRef sort_net(lw *L, LLVMValueRef v, int n) {
  LLVMBuilderRef b = L->b;
  LLVMTypeRef vt = LLVMTypeOf(v);
  for (int k = 2; k <= n; k *= 2)
    for (int j = k / 2; j >= 1; j /= 2) {
      LLVMValueRef perm[SORT_NET_MAX], pick[SORT_NET_MAX];
      for (int i = 0; i < n; i++) {
        int asc = (i & k) == 0, low = (i & j) == 0; /* i below its partner i ^ j */
        perm[i] = LLVMConstInt(L->t_i32, (unsigned)(i ^ j), 0);
        pick[i] = LLVMConstInt(L->t_i32, (unsigned)(low == asc ? i : n + i), 0);
      }
      LLVMValueRef w =
          LLVMBuildShuffleVector(b, v, LLVMGetPoison(vt), LLVMConstVector(perm, (unsigned)n), "");
      LLVMValueRef args[2] = {v, w};
      LLVMValueRef mn = pto__lower_call_intrinsic(L, "llvm.umin", &vt, 1, args, 2, "");
      LLVMValueRef mx = pto__lower_call_intrinsic(L, "llvm.umax", &vt, 1, args, 2, "");
      v = LLVMBuildShuffleVector(b, mn, mx, LLVMConstVector(pick, (unsigned)n), "");
    }
  return v;
}

/* One row: keys into buf[0] (whose tail up to a multiple of the network's width holds
 * UINT64_MAX, above every key: see lower_sort_idx), each run of that width sorted by the
 * network in vector registers (the whole row up to 64 columns), then the merges from runs of
 * that width up. */
static void sort_row_merge(lw *L, const lw_tile *a, const lw_tile *t, LLVMValueRef row,
                           LLVMValueRef buf[2], int desc) {
  LLVMBuilderRef b = L->b;
  int64_t C = a->cols;
  lw_loop lc, lm, lk;
  LLVMValueRef c = pto__lower_loop_begin(L, &lc, i64c(L, 0), i64c(L, C), "msort.key");
  LLVMValueRef key = sort_key32(L, a->dt, pto__lower_load_c(L, a, add(L, row, c)), desc);
  LLVMBuildStore(b, LLVMBuildOr(b, key, c, ""),
                 LLVMBuildInBoundsGEP2(b, L->t_i64, buf[0], &c, 1, ""));
  pto__lower_loop_end(L, &lc);
  int n = sort_net_width(C);
  LLVMTypeRef vt = LLVMVectorType(L->t_i64, (unsigned)n);
  LLVMValueRef r = pto__lower_loop_begin(L, &lc, i64c(L, 0), i64c(L, (C + n - 1) / n), "msort.net");
  LLVMValueRef off = mul(L, r, i64c(L, n));
  LLVMValueRef p = LLVMBuildInBoundsGEP2(b, L->t_i64, buf[0], &off, 1, "");
  LLVMValueRef run = LLVMBuildLoad2(b, vt, p, "");
  LLVMSetAlignment(run, 8);
  LLVMValueRef st = LLVMBuildStore(b, sort_net(L, run, n), p);
  LLVMSetAlignment(st, 8);
  pto__lower_loop_end(L, &lc);
  int from = 0;
  LLVMValueRef ip = pto__lower_entry_alloca(L, L->t_i64, "msort.i");
  LLVMValueRef jp = pto__lower_entry_alloca(L, L->t_i64, "msort.j");
  for (int64_t w = n; w < C; w *= 2, from ^= 1) {
    LLVMValueRef src = buf[from], dst = buf[from ^ 1];
    LLVMValueRef lo =
        pto__lower_loop_begin(L, &lm, i64c(L, 0), i64c(L, (C + 2 * w - 1) / (2 * w)), "msort.run");
    LLVMValueRef l0 = mul(L, lo, i64c(L, 2 * w));
    LLVMValueRef mid = pto__lower_smin(L, add(L, l0, i64c(L, w)), i64c(L, C));
    LLVMValueRef hi = pto__lower_smin(L, add(L, l0, i64c(L, 2 * w)), i64c(L, C));
    LLVMBuildStore(b, l0, ip);
    LLVMBuildStore(b, mid, jp);
    LLVMValueRef k = pto__lower_loop_begin(L, &lk, l0, hi, "msort.k");
    LLVMValueRef i = LLVMBuildLoad2(b, L->t_i64, ip, ""), j = LLVMBuildLoad2(b, L->t_i64, jp, "");
    /* both reads stay inside the buffers (C + 1 long): i <= mid, j <= hi <= C */
    LLVMValueRef x =
        LLVMBuildLoad2(b, L->t_i64, LLVMBuildInBoundsGEP2(b, L->t_i64, src, &i, 1, ""), "");
    LLVMValueRef y =
        LLVMBuildLoad2(b, L->t_i64, LLVMBuildInBoundsGEP2(b, L->t_i64, src, &j, 1, ""), "");
    LLVMValueRef left = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLT, i, mid, ""),
                                     LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntSGE, j, hi, ""),
                                                 LLVMBuildICmp(b, LLVMIntULT, x, y, ""), ""),
                                     "left");
    LLVMBuildStore(b, LLVMBuildSelect(b, left, x, y, ""),
                   LLVMBuildInBoundsGEP2(b, L->t_i64, dst, &k, 1, ""));
    LLVMValueRef one = LLVMBuildZExt(b, left, L->t_i64, "");
    LLVMBuildStore(b, add(L, i, one), ip);
    LLVMBuildStore(b, add(L, j, LLVMBuildSub(b, i64c(L, 1), one, "")), jp);
    pto__lower_loop_end(L, &lk);
    pto__lower_loop_end(L, &lm);
  }
  LLVMValueRef c2 = pto__lower_loop_begin(L, &lc, i64c(L, 0), i64c(L, C), "msort.out");
  LLVMValueRef v =
      LLVMBuildLoad2(b, L->t_i64, LLVMBuildInBoundsGEP2(b, L->t_i64, buf[from], &c2, 1, ""), "");
  pto__lower_tile_store(L, t->base, PTO_DTYPE_I32, add(L, row, c2),
                        LLVMBuildTrunc(b, v, L->t_i32, ""));
  pto__lower_loop_end(L, &lc);
}

/* Per row: keys computed once, then a stable insertion sort of (key, column) pairs; an element
 * moves before another only when its key orders strictly first (64-bit dtypes; the others take
 * sort_row_merge). */
static void lower_sort_idx(lw *L, const pto_ir_stmt *s) {
  lw_tile *a = pto__lower_tile_arg(L, s, 0);
  lw_tile *t = a ? result(L, s, NULL, NULL) : NULL;
  if (!t) return;
  if (pto_dtype_size(a->dt) <= 4) {
    const pto_ir_arg *oa = pto__lower_kwarg(s, "order");
    int asc = oa && oa->kind == PTO_ARG_WORD && strcmp(oa->str, "asc") == 0;
    int64_t nw = sort_net_width(a->cols), padded = (a->cols + nw - 1) / nw * nw;
    LLVMTypeRef at = LLVMArrayType2(L->t_i64, (uint64_t)padded + 1);
    LLVMValueRef buf[2] = {pto__lower_entry_alloca(L, at, "msort.a"),
                           pto__lower_entry_alloca(L, at, "msort.b")};
    /* the columns up to the network width's multiple: UINT64_MAX, above every key (a key's low half
     * is its column, below 2^31), so the network leaves them last and no row ever writes them;
     * the element past the end is read (never chosen) when a run is used up */
    for (int64_t e = a->cols; e <= padded; e++) {
      LLVMValueRef ev = i64c(L, e);
      for (int k = 0; k < 2; k++)
        LLVMBuildStore(L->b, i64c(L, -1),
                       LLVMBuildInBoundsGEP2(L->b, L->t_i64, buf[k], &ev, 1, ""));
    }
    pto__lower_x86_wide_vectors(L); /* the network's <n x i64> in zmm, not ymm, registers */
    lw_loop li;
    LLVMValueRef i = pto__lower_loop_begin(L, &li, i64c(L, 0), i64c(L, a->rows), "msort.row");
    sort_row_merge(L, a, t, mul(L, i, i64c(L, a->cols)), buf, !asc);
    pto__lower_loop_end(L, &li);
    return;
  }
  LLVMBuilderRef b = L->b;
  const pto_ir_arg *oa = pto__lower_kwarg(s, "order");
  int asc = oa && oa->kind == PTO_ARG_WORD && strcmp(oa->str, "asc") == 0;
  int uns = !pto_dtype_is_float(a->dt) && !pto_dtype_is_signed(a->dt);
  LLVMIntPredicate lt = uns ? LLVMIntULT : LLVMIntSLT;
  int64_t C = a->cols;
  LLVMValueRef keys = pto__lower_entry_alloca(L, LLVMArrayType2(L->t_i64, (uint64_t)C), "sk");
  LLVMValueRef kp = pto__lower_entry_alloca(L, L->t_i64, "sk.k");
  lw_loop li, lc;
  LLVMValueRef Cv = i64c(L, C);
  LLVMValueRef i = pto__lower_loop_begin(L, &li, i64c(L, 0), i64c(L, a->rows), "sort.i");
  LLVMValueRef row = mul(L, i, Cv);
  LLVMValueRef c = pto__lower_loop_begin(L, &lc, i64c(L, 0), Cv, "sort.c");
  LLVMValueRef x = sort_key(L, a->dt, pto__lower_load_c(L, a, add(L, row, c)));
  LLVMBuildStore(b, c, kp);
  LLVMBasicBlockRef test = LLVMAppendBasicBlockInContext(L->c, L->fn, "sort.test");
  LLVMBasicBlockRef cmp = LLVMAppendBasicBlockInContext(L->c, L->fn, "sort.cmp");
  LLVMBasicBlockRef shift = LLVMAppendBasicBlockInContext(L->c, L->fn, "sort.shift");
  LLVMBasicBlockRef place = LLVMAppendBasicBlockInContext(L->c, L->fn, "sort.place");
  LLVMBuildBr(b, test);
  LLVMPositionBuilderAtEnd(b, test);
  LLVMValueRef k = LLVMBuildLoad2(b, L->t_i64, kp, "k");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, k, i64c(L, 0), ""), place, cmp);
  LLVMPositionBuilderAtEnd(b, cmp);
  LLVMValueRef km1 = LLVMBuildSub(b, k, i64c(L, 1), "");
  LLVMValueRef py = LLVMBuildInBoundsGEP2(b, L->t_i64, keys, &km1, 1, "");
  LLVMValueRef y = LLVMBuildLoad2(b, L->t_i64, py, "");
  LLVMValueRef before = asc ? LLVMBuildICmp(b, lt, x, y, "") : LLVMBuildICmp(b, lt, y, x, "");
  LLVMBuildCondBr(b, before, shift, place);
  LLVMPositionBuilderAtEnd(b, shift);
  LLVMBuildStore(b, y, LLVMBuildInBoundsGEP2(b, L->t_i64, keys, &k, 1, ""));
  pto__lower_tile_store(L, t->base, PTO_DTYPE_I32, add(L, row, k),
                        pto__lower_tile_load(L, t->base, PTO_DTYPE_I32, add(L, row, km1)));
  LLVMBuildStore(b, km1, kp);
  LLVMBuildBr(b, test);
  LLVMPositionBuilderAtEnd(b, place);
  LLVMValueRef kf = LLVMBuildLoad2(b, L->t_i64, kp, "");
  LLVMBuildStore(b, x, LLVMBuildInBoundsGEP2(b, L->t_i64, keys, &kf, 1, ""));
  pto__lower_tile_store(L, t->base, PTO_DTYPE_I32, add(L, row, kf),
                        LLVMBuildTrunc(b, c, L->t_i32, ""));
  pto__lower_loop_end(L, &lc);
  pto__lower_loop_end(L, &li);
}

void pto__lower_layout_op(lw *L, const pto_ir_stmt *s) {
  switch (s->op.opc) {
  case PTO_OP_TILE_ROW_EXPAND: lower_broadcast(L, s, 1); return;
  case PTO_OP_TILE_COL_EXPAND: lower_broadcast(L, s, 0); return;
  case PTO_OP_TILE_TRANSPOSE: lower_transpose(L, s); return;
  case PTO_OP_TILE_EXTRACT: lower_extract(L, s); return;
  case PTO_OP_TILE_ASSEMBLE: lower_assemble(L, s); return;
  case PTO_OP_TILE_CONCAT: lower_concat(L, s); return;
  case PTO_OP_TILE_RESHAPE: lower_reshape(L, s); return;
  case PTO_OP_TILE_FILLPAD: lower_fillpad(L, s); return;
  case PTO_OP_TILE_CI: lower_ci(L, s); return;
  case PTO_OP_TILE_TRI: lower_tri(L, s); return;
  case PTO_OP_TILE_GATHER: lower_gather(L, s); return;
  case PTO_OP_TILE_GATHER_ROWS: lower_gather_rows(L, s); return;
  case PTO_OP_TILE_SCATTER_ROWS: lower_scatter_rows(L, s); return;
  case PTO_OP_TILE_SORT_IDX: lower_sort_idx(L, s); return;
  default:
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc, "%s is not allowed in a kernel",
                    pto_op_info_get(s->op.opc)->name);
    return;
  }
}
