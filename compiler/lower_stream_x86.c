/* Deferred stores (lw_defer): a streamed run's store left in a staging buffer for the next
 * iteration of its loop to write past the cache, on x86-64's non-temporal stores and sfence
 * (lower_x86.c). The plan defers a store only where pto__lower_x86_streaming (lower_plan.c), so
 * none of this is reached under PTO_GENERIC_LOWERING=1. lower_ops.c computes the values: the
 * streamed run stages them between pto__lower_defer_stage and pto__lower_defer_staged, and a
 * fused run of the next iteration drains them (pto__lower_defer_drainer, _drain_at). */
#include <string.h>

#include "lower.h"
#include "lower_kernel_internal.h"

static LLVMValueRef mul(lw *L, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildMul(L->b, a, b, "");
}
static LLVMValueRef add(lw *L, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildAdd(L->b, a, b, "");
}

static int64_t defer_row_bytes(const lw_defer *d) {
  return d->cols * (int64_t)pto_dtype_size(d->dt);
}

void pto__lower_defer_begin(lw *L, lw_defer *d, int pos) {
  int p = L->plan[pos].defer_at;
  memset(d, 0, sizeof *d);
  d->pos = p;
  const pto_ir_stmt *store = L->plan[p + L->plan[p].stream_len - 1].s;
  const pto_ir_type *ty = store->op.args[0].expr->value->type;
  pto__lower_static_int(ty->dims[0], &d->rows);
  pto__lower_static_int(ty->dims[1], &d->cols);
  d->dt = ty->dtype;
  d->buf = L->group_base[pto__lower_group_find(L, L->plan[p].defer)];
  d->pend = pto__lower_entry_alloca(L, L->t_i8, "dpend");
  d->ptr = pto__lower_entry_alloca(L, L->t_ptr, "dptr");
  d->nr = pto__lower_entry_alloca(L, L->t_i64, "dnr");
  d->sr = pto__lower_entry_alloca(L, L->t_i64, "dsr");
  LLVMBuildStore(L->b, LLVMConstInt(L->t_i8, 0, 0), d->pend);
}

/* Line m of staged row i to the tensor, past the cache (every row of a deferred window starts on
 * a line: pto__lower_streamed). */
static void defer_line(lw *L, const lw_defer *d, LLVMValueRef i, LLVMValueRef m) {
  LLVMBuilderRef b = L->b;
  LLVMTypeRef vt = LLVMVectorType(L->t_i32, 16);
  LLVMValueRef ptr = LLVMBuildLoad2(b, L->t_ptr, d->ptr, "");
  LLVMValueRef sr = LLVMBuildLoad2(b, L->t_i64, d->sr, "");
  LLVMValueRef src = add(L, mul(L, i, pto__lower_i64(L, defer_row_bytes(d) / 64)), m);
  LLVMValueRef v = pto__lower_scratch_load(L, vt, vt, d->buf, src, 64);
  LLVMValueRef at = add(L, mul(L, mul(L, i, sr), pto__lower_i64(L, (int64_t)pto_dtype_size(d->dt))),
                        mul(L, m, pto__lower_i64(L, 64)));
  LLVMValueRef st = LLVMBuildStore(b, v, LLVMBuildGEP2(b, L->t_i8, ptr, &at, 1, ""));
  LLVMSetAlignment(st, 64);
  pto__lower_tag(L, st, 1);
  pto__lower_x86_nontemporal(L, st);
}

/* Lines [first64, first64 + n64) of staged row i (defer_line). */
static void defer_copy(lw *L, const lw_defer *d, LLVMValueRef i, LLVMValueRef first64,
                       LLVMValueRef n64) {
  lw_loop lc;
  LLVMValueRef m = pto__lower_loop_begin(L, &lc, first64, add(L, first64, n64), "defer.line");
  defer_line(L, d, i, m);
  pto__lower_loop_end(L, &lc);
}

/* Everything pending, now. */
static void defer_drain_all(lw *L, const lw_defer *d) {
  LLVMBuilderRef b = L->b;
  LLVMValueRef pend = LLVMBuildLoad2(b, L->t_i8, d->pend, "");
  LLVMBasicBlockRef bb_do = LLVMAppendBasicBlockInContext(L->c, L->fn, "defer.drain");
  LLVMBasicBlockRef bb_done = LLVMAppendBasicBlockInContext(L->c, L->fn, "defer.drained");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, pend, LLVMConstInt(L->t_i8, 0, 0), ""), bb_do,
                  bb_done);
  LLVMPositionBuilderAtEnd(b, bb_do);
  lw_loop li;
  LLVMValueRef i = pto__lower_loop_begin(L, &li, pto__lower_i64(L, 0),
                                         LLVMBuildLoad2(b, L->t_i64, d->nr, ""), "defer.row");
  defer_copy(L, d, i, pto__lower_i64(L, 0), pto__lower_i64(L, defer_row_bytes(d) / 64));
  pto__lower_loop_end(L, &li);
  LLVMBuildStore(b, LLVMConstInt(L->t_i8, 0, 0), d->pend);
  LLVMBuildBr(b, bb_done);
  LLVMPositionBuilderAtEnd(b, bb_done);
}

void pto__lower_defer_finish(lw *L, const lw_defer *d) {
  defer_drain_all(L, d);
  pto__lower_x86_sfence(L);
}

/* Whether a row-by-row run of rows x cols tiles can drain the loop's deferred store: straight
 * in its body, the same tile shape; the first such run. */
lw_defer *pto__lower_defer_drainer(lw *L, int64_t rows, int64_t cols) {
  lw_defer *d = L->loop.defer;
  if (!d || L->loop.drains || L->cur_blk != L->loop.body || rows != d->rows || cols != d->cols)
    return NULL;
  L->loop.drains = 1;
  return d;
}

/* At columns [j, j + step) of row i of the draining run (every staged row is waiting: see
 * pto__lower_fused): the same share of staged row i's lines, one line a step of 16 f32 lanes, so
 * the stores past the cache go out evenly between the run's arithmetic rather than in bursts
 * that fill the core's write buffers. */
void pto__lower_defer_drain_at(lw *L, const lw_defer *d, LLVMValueRef i, LLVMValueRef j, int step) {
  LLVMBuilderRef b = L->b;
  if (step * (int64_t)pto_dtype_size(d->dt) == 64 && d->cols % step == 0) {
    defer_line(L, d, i, LLVMBuildExactSDiv(b, j, pto__lower_i64(L, step), ""));
    return;
  }
  LLVMValueRef C = pto__lower_i64(L, d->cols), Lr = pto__lower_i64(L, defer_row_bytes(d) / 64);
  LLVMValueRef first = LLVMBuildSDiv(b, mul(L, j, Lr), C, "");
  LLVMValueRef last = LLVMBuildSDiv(b, mul(L, add(L, j, pto__lower_i64(L, step)), Lr), C, "");
  defer_copy(L, d, i, first, LLVMBuildSub(b, last, first, ""));
}

/* [*lo, *hi): the bytes tensor T may touch, all strides non-negative (*ok false otherwise). */
static void tensor_bytes(lw *L, const lw_tensor *T, LLVMValueRef *lo, LLVMValueRef *hi,
                         LLVMValueRef *ok) {
  LLVMBuilderRef b = L->b;
  LLVMValueRef zero = pto__lower_i64(L, 0), span = pto__lower_i64(L, 1), empty = NULL;
  *ok = LLVMConstInt(L->t_i1, 1, 0);
  for (int d = 0; d < T->rank; d++) {
    *ok = LLVMBuildAnd(b, *ok, LLVMBuildICmp(b, LLVMIntSGE, T->stride[d], zero, ""), "");
    LLVMValueRef e = LLVMBuildICmp(b, LLVMIntSLE, T->shape[d], zero, "");
    empty = empty ? LLVMBuildOr(b, empty, e, "") : e;
    span =
        add(L, span, mul(L, LLVMBuildSub(b, T->shape[d], pto__lower_i64(L, 1), ""), T->stride[d]));
  }
  if (empty) span = LLVMBuildSelect(b, empty, zero, span, "");
  *lo = LLVMBuildPtrToInt(b, T->data, L->t_i64, "");
  *hi = add(L, *lo, mul(L, span, pto__lower_i64(L, (int64_t)pto_dtype_size(T->dt))));
}

LLVMBasicBlockRef pto__lower_defer_stage(lw *L, const lw_defer *d, const lw_tensor *T,
                                         const lw_window *ws, LLVMValueRef slo, LLVMValueRef shi) {
  LLVMBuilderRef b = L->b;
  int64_t es = (int64_t)pto_dtype_size(T->dt), C = d->cols;
  LLVMValueRef zero = pto__lower_i64(L, 0), l63 = pto__lower_i64(L, 63);
  LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntEQ, ws->nc, pto__lower_i64(L, C), "");
  ok =
      LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, slo, l63, ""), zero, ""), "");
  LLVMValueRef srb = mul(L, ws->sr, pto__lower_i64(L, es));
  ok =
      LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, srb, l63, ""), zero, ""), "");
  for (int k = 0; k < L->ntensors; k++) {
    if (&L->tensors[k] == T || !L->tensors[k].data) continue;
    LLVMValueRef lo, hi, sok;
    tensor_bytes(L, &L->tensors[k], &lo, &hi, &sok);
    LLVMValueRef apart = LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntULE, hi, slo, ""),
                                     LLVMBuildICmp(b, LLVMIntULE, shi, lo, ""), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildAnd(b, sok, apart, ""), "");
  }
  LLVMBasicBlockRef bb_stage = LLVMAppendBasicBlockInContext(L->c, L->fn, "stream.defer");
  LLVMBasicBlockRef bb_now = LLVMAppendBasicBlockInContext(L->c, L->fn, "stream.now");
  LLVMBuildCondBr(b, ok, bb_stage, bb_now);

  LLVMPositionBuilderAtEnd(b, bb_stage);
  defer_drain_all(L, d);
  return bb_now;
}

void pto__lower_defer_staged(lw *L, const lw_defer *d, const lw_window *ws,
                             LLVMBasicBlockRef bb_done, LLVMBasicBlockRef bb_now) {
  LLVMBuilderRef b = L->b;
  LLVMBuildStore(b, ws->ptr, d->ptr);
  LLVMBuildStore(b, ws->nr, d->nr);
  LLVMBuildStore(b, ws->sr, d->sr);
  LLVMBuildStore(b, LLVMConstInt(L->t_i8, 1, 0), d->pend);
  LLVMBuildBr(b, bb_done);

  LLVMPositionBuilderAtEnd(b, bb_now);
  defer_drain_all(L, d);
}
