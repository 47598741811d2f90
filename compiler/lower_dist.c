/* Kernel-side dist.* ops lowered onto the pto_dist_ctx table of pto/dist_abi.h
 * (pto_core_ctx.dist): one lowering for every transport.
 *
 * Every op loads ctx->dist (a NULL table, i.e. an L2 worker, makes the kernel return
 * PTO_KERNEL_ERR_DIST), calls the table's function and returns the call's code at once when it
 * is nonzero. dist.comm_ctx is a compile-time handle (0): dist.rank/dist.nranks read the table's
 * rank/nranks fields whether given the communicator or the dtensor. Window elements are named by
 * their local addresses: the dtensor's data plus the offsets times the strides. dist.barrier and
 * the four collectives are one table call each (barrier, collective) on the windows'
 * descriptors, so every transport implements them its own way behind one lowering. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lower_kernel_internal.h"

/* Field numbers of pto_dist_ctx as built in lower_kernel.c (build_types). */
enum {
  DF_VERSION = 0,
  DF_SIZE,
  DF_RANK,
  DF_NRANKS,
  DF_IMPL,
  DF_NOTIFY,
  DF_WAIT,
  DF_REMOTE_LOAD,
  DF_REMOTE_STORE,
  DF_BARRIER,
  DF_COLLECTIVE,
};

static int npos(const pto_ir_stmt *s) {
  int n = 0;
  while (n < s->op.nargs && !s->op.args[n].kw)
    n++;
  return n;
}

static const pto_ir_arg *arg_at(lw *L, const pto_ir_stmt *s, int i) {
  if (i >= npos(s)) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc, "%s: missing argument %d",
                    pto_op_info_get(s->op.opc)->name, i + 1);
    return NULL;
  }
  return &s->op.args[i];
}

static const pto_ir_value *value_at(lw *L, const pto_ir_stmt *s, int i) {
  const pto_ir_arg *a = arg_at(L, s, i);
  if (!a) return NULL;
  if (a->kind != PTO_ARG_EXPR || a->expr->kind != PTO_EXPR_VALUE) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, a->loc, "%s: argument %d is not a value",
                    pto_op_info_get(s->op.opc)->name, i + 1);
    return NULL;
  }
  return a->expr->value;
}

static lw_tensor *window_at(lw *L, const pto_ir_stmt *s, int i) {
  const pto_ir_value *v = value_at(L, s, i);
  if (!v) return NULL;
  if (L->vals[v->id].kind != LW_V_TENSOR) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc, "%s: argument %d is not a dtensor",
                    pto_op_info_get(s->op.opc)->name, i + 1);
    return NULL;
  }
  return &L->tensors[L->vals[v->id].tensor];
}

/* A scalar argument as i64 (index) or i32. */
static LLVMValueRef scalar_at(lw *L, const pto_ir_stmt *s, int i, pto_dtype to) {
  const pto_ir_arg *a = arg_at(L, s, i);
  if (!a) return NULL;
  if (a->kind != PTO_ARG_EXPR) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, a->loc, "%s: argument %d is not a scalar",
                    pto_op_info_get(s->op.opc)->name, i + 1);
    return NULL;
  }
  LLVMValueRef v = pto__lower_expr(L, a->expr);
  return v ? pto__lower_convert(L, v, a->expr->dtype, to) : NULL;
}

/* A rank (a peer or a broadcast root) for the dist table's int32 argument: an index or other
 * integer beyond int32 saturates to INT32_MIN or INT32_MAX, out of range as it was, where a
 * truncation would make 2^32 + 1 rank 1 (the runtime names the saturated value "or beyond"). */
static LLVMValueRef rank_at(lw *L, const pto_ir_stmt *s, int i) {
  LLVMValueRef v = scalar_at(L, s, i, PTO_DTYPE_I64);
  if (!v) return NULL;
  v = pto__lower_smax(L, pto__lower_smin(L, v, LLVMConstInt(L->t_i64, INT32_MAX, 1)),
                      LLVMConstInt(L->t_i64, (uint64_t)(int64_t)INT32_MIN, 1));
  return LLVMBuildTrunc(L->b, v, L->t_i32, "rank");
}

/* The constant value of a WORD keyword among words (space-separated), its index; dflt when the
 * keyword is absent. */
static int kw_index(lw *L, const pto_ir_stmt *s, const char *kw, const char *const *words, int n,
                    int dflt) {
  const pto_ir_arg *a = pto__lower_kwarg(s, kw);
  if (!a) return dflt;
  if (a->kind == PTO_ARG_WORD)
    for (int i = 0; i < n; i++)
      if (strcmp(a->str, words[i]) == 0) return i;
  pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, a->loc,
                  "%s: bad %s=", pto_op_info_get(s->op.opc)->name, kw);
  return dflt;
}

/* ctx->dist, after a check that it is not NULL (else the kernel returns PTO_KERNEL_ERR_DIST). */
static LLVMValueRef dist_table(lw *L) {
  LLVMValueRef idx[2] = {LLVMConstInt(L->t_i32, 0, 0), LLVMConstInt(L->t_i32, 5, 0)};
  LLVMValueRef p = LLVMBuildInBoundsGEP2(L->b, L->t_ctx, L->arg_ctx, idx, 2, "");
  LLVMValueRef d = LLVMBuildLoad2(L->b, L->t_ptr, p, "dist");
  LLVMValueRef isnull = LLVMBuildIsNull(L->b, d, "");
  pto__lower_fail_if(L, isnull, PTO_KERNEL_ERR_DIST, NULL, NULL);
  return d;
}

static LLVMValueRef dist_field(lw *L, LLVMValueRef d, unsigned field, LLVMTypeRef ty,
                               const char *name) {
  LLVMValueRef idx[2] = {LLVMConstInt(L->t_i32, 0, 0), LLVMConstInt(L->t_i32, field, 0)};
  LLVMValueRef p = LLVMBuildInBoundsGEP2(L->b, L->t_dist, d, idx, 2, "");
  return LLVMBuildLoad2(L->b, ty, p, name);
}

/* Calls field fn of the table with args (the table first) and returns its code from the kernel
 * when nonzero. */
static void dist_call(lw *L, LLVMValueRef d, unsigned field, LLVMTypeRef *ptys, LLVMValueRef *args,
                      int nargs, const char *name) {
  LLVMTypeRef tys[12];
  LLVMValueRef as[12];
  tys[0] = L->t_ptr;
  as[0] = d;
  for (int i = 0; i < nargs; i++) {
    tys[i + 1] = ptys[i];
    as[i + 1] = args[i];
  }
  LLVMTypeRef fty = LLVMFunctionType(L->t_i32, tys, (unsigned)nargs + 1, 0);
  LLVMValueRef fn = dist_field(L, d, field, L->t_ptr, name);
  LLVMValueRef rc = LLVMBuildCall2(L->b, fty, fn, as, (unsigned)nargs + 1, "rc");
  LLVMValueRef bad = LLVMBuildICmp(L->b, LLVMIntNE, rc, LLVMConstInt(L->t_i32, 0, 0), "");
  LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(L->c, L->fn, "dist.fail");
  LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(L->c, L->fn, "dist.ok");
  LLVMBuildCondBr(L->b, bad, fail, cont);
  LLVMPositionBuilderAtEnd(L->b, fail);
  LLVMBuildRet(L->b, rc);
  LLVMPositionBuilderAtEnd(L->b, cont);
}

/* The local address of element offs of window T; the offsets (index) in o[] too. */
static LLVMValueRef element_at(lw *L, const pto_ir_stmt *s, const lw_tensor *T,
                               const pto_ir_arg *offs, LLVMValueRef *o) {
  if (!offs || offs->kind != PTO_ARG_LIST || offs->list.n != T->rank) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc, "%s: offsets need %d entries",
                    pto_op_info_get(s->op.opc)->name, T->rank);
    return NULL;
  }
  LLVMValueRef lin = pto__lower_i64(L, 0);
  for (int d = 0; d < T->rank; d++) {
    LLVMValueRef v = pto__lower_expr(L, offs->list.items[d]);
    if (!v) return NULL;
    o[d] = pto__lower_convert(L, v, offs->list.items[d]->dtype, PTO_DTYPE_INDEX);
    lin = LLVMBuildAdd(L->b, lin, LLVMBuildMul(L->b, o[d], T->stride[d], ""), "");
  }
  return LLVMBuildGEP2(L->b, pto__lower_storage_type(L, T->dt), T->data, &lin, 1, "elem");
}

/* Fails the launch (PTO_KERNEL_ERR_DIST_OFFSET, pto/kernel_abi.h) when offsets o leave window
 * T, the kernel's tensor argument of value v, as the interpreter does: with whole (an element:
 * dist.notify, dist.wait) every offset must be inside its extent; else (a block: remote loads
 * and stores) no offset may be negative nor a leading dim's past its extent, and a block past
 * the row or column edge is clipped. Without this check a runtime offset past the end of one
 * window reached the window after it. op: 0 notify, 1 wait, 2 remote_load, 3 remote_store. */
static void check_window_offsets(lw *L, const pto_ir_value *v, const lw_tensor *T,
                                 const LLVMValueRef *o, int op, int whole) {
  LLVMBuilderRef b = L->b;
  LLVMValueRef zero = pto__lower_i64(L, 0), any = NULL, off = zero, why = zero;
  int64_t head = (int64_t)op << 3 | (int64_t)L->vals[v->id].tensor << 5;
  for (int d = T->rank - 1; d >= 0; d--) {
    LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, o[d], zero, "");
    LLVMValueRef past =
        whole || d < T->rank - 2 ? LLVMBuildICmp(b, LLVMIntSGE, o[d], T->shape[d], "") : NULL;
    LLVMValueRef bad = past ? LLVMBuildOr(b, neg, past, "") : neg;
    if (LLVMIsConstant(bad) && !LLVMConstIntGetZExtValue(bad)) continue; /* cannot fail */
    /* detail[1]: dim | op << 3 | tensor << 5 | (extent + 1) << 13, extent + 1 = 0 for "is
     * negative" */
    LLVMValueRef ext1 = LLVMBuildShl(b, LLVMBuildAdd(b, T->shape[d], pto__lower_i64(L, 1), ""),
                                     pto__lower_i64(L, 13), "");
    LLVMValueRef w = pto__lower_i64(L, head | d);
    if (whole)
      w = LLVMBuildOr(b, w, ext1, "");
    else if (past)
      w = LLVMBuildSelect(b, neg, w, LLVMBuildOr(b, w, ext1, ""), "");
    off = LLVMBuildSelect(b, bad, o[d], off, "");
    why = LLVMBuildSelect(b, bad, w, why, "");
    any = any ? LLVMBuildOr(b, any, bad, "") : bad;
  }
  if (any) pto__lower_fail_if(L, any, PTO_KERNEL_ERR_DIST_OFFSET, off, why);
}

/* Rows and columns of a rows x cols block at offsets o inside T (clipped at its edge, 0 when an
 * offset is out of range), and its row stride. */
static void block_extent(lw *L, const lw_tensor *T, const LLVMValueRef *o, LLVMValueRef rows,
                         LLVMValueRef cols, LLVMValueRef *nr, LLVMValueRef *nc, LLVMValueRef *sr) {
  LLVMBuilderRef b = L->b;
  LLVMValueRef zero = pto__lower_i64(L, 0);
  int rd = T->rank - 2, cd = T->rank - 1;
  LLVMValueRef inb = LLVMConstInt(L->t_i1, 1, 0);
  for (int d = 0; d < T->rank; d++) {
    inb = LLVMBuildAnd(b, inb, LLVMBuildICmp(b, LLVMIntSGE, o[d], zero, ""), "");
    inb = LLVMBuildAnd(b, inb, LLVMBuildICmp(b, LLVMIntSLT, o[d], T->shape[d], ""), "");
  }
  LLVMValueRef ar = rd >= 0 ? LLVMBuildSub(b, T->shape[rd], o[rd], "") : pto__lower_i64(L, 1);
  LLVMValueRef ac = LLVMBuildSub(b, T->shape[cd], o[cd], "");
  *nr =
      LLVMBuildSelect(b, inb, pto__lower_smax(L, pto__lower_smin(L, rows, ar), zero), zero, "rows");
  *nc =
      LLVMBuildSelect(b, inb, pto__lower_smax(L, pto__lower_smin(L, cols, ac), zero), zero, "cols");
  *sr = rd >= 0 ? T->stride[rd] : zero;
}

static void def_index(lw *L, const pto_ir_stmt *s, LLVMValueRef x64) {
  if (s->nresults != 1) return;
  const pto_ir_value *r = s->results[0];
  L->vals[r->id].kind = LW_V_SCALAR;
  L->vals[r->id].v = pto__lower_convert(L, x64, PTO_DTYPE_INDEX, r->type->dtype);
}

static void lower_rank(lw *L, const pto_ir_stmt *s, int nranks) {
  if (!value_at(L, s, 0)) return;
  LLVMValueRef d = dist_table(L);
  LLVMValueRef v =
      dist_field(L, d, nranks ? DF_NRANKS : DF_RANK, L->t_i32, nranks ? "nranks" : "rank");
  def_index(L, s, LLVMBuildSExt(L->b, v, L->t_i64, ""));
}

static void lower_notify_wait(lw *L, const pto_ir_stmt *s, int notify) {
  lw_tensor *T = window_at(L, s, 0);
  if (!T) return;
  if (pto_dtype_size(T->dt) != 4 || pto_dtype_is_float(T->dt)) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc,
                    "%s: signal windows are i32 (this one is %s)", pto_op_info_get(s->op.opc)->name,
                    pto_dtype_name(T->dt));
    return;
  }
  int i = 1;
  LLVMValueRef peer = notify ? rank_at(L, s, i++) : NULL;
  if (notify && !peer) return;
  LLVMValueRef o[PTO_MAX_RANK];
  LLVMValueRef elem = element_at(L, s, T, arg_at(L, s, i++), o);
  LLVMValueRef value = elem ? scalar_at(L, s, i, PTO_DTYPE_I32) : NULL;
  if (!value) return;
  check_window_offsets(L, value_at(L, s, 0), T, o, notify ? 0 : 1, 1);
  static const char *const ops[] = {"set", "atomic_add"};
  static const char *const cmps[] = {"eq", "ge"};
  int mode = notify ? kw_index(L, s, "op", ops, 2, PTO_DIST_NOTIFY_SET)
                    : kw_index(L, s, "cmp", cmps, 2, PTO_DIST_WAIT_EQ);
  if (L->err) return;
  LLVMValueRef d = dist_table(L);
  LLVMValueRef m = LLVMConstInt(L->t_i32, (uint64_t)mode, 0);
  if (notify) {
    LLVMTypeRef t[4] = {L->t_ptr, L->t_i32, L->t_i32, L->t_i32};
    LLVMValueRef a[4] = {elem, peer, value, m};
    dist_call(L, d, DF_NOTIFY, t, a, 4, "notify");
    if (s->nresults == 1) L->vals[s->results[0]->id] = L->vals[value_at(L, s, 0)->id];
  } else {
    LLVMTypeRef t[3] = {L->t_ptr, L->t_i32, L->t_i32};
    LLVMValueRef a[3] = {elem, value, m};
    dist_call(L, d, DF_WAIT, t, a, 3, "wait");
  }
}

static void lower_remote_load(lw *L, const pto_ir_stmt *s) {
  lw_tensor *T = window_at(L, s, 0);
  LLVMValueRef peer = T ? rank_at(L, s, 1) : NULL;
  if (!peer || s->nresults != 1) return;
  LLVMValueRef o[PTO_MAX_RANK];
  LLVMValueRef src = element_at(L, s, T, arg_at(L, s, 2), o);
  if (!src) return;
  check_window_offsets(L, value_at(L, s, 0), T, o, 2, 0);
  const pto_ir_value *r = s->results[0];
  int64_t R = 1, C = 1;
  pto__lower_static_int(r->type->dims[0], &R);
  pto__lower_static_int(r->type->dims[1], &C);
  lw_value *x = &L->vals[r->id];
  x->kind = LW_V_TILE;
  lw_tile *t = &x->tile;
  t->base = pto__lower_value_base(L, r);
  t->rows = R;
  t->cols = C;
  t->dt = r->type->dtype;
  t->vr = pto__lower_i64(L, R);
  t->vc = pto__lower_i64(L, C);
  if (!t->base) {
    pto__lower_fail(L, PTO_STATUS_INTERNAL, r->loc, "tile '%%%s' has no buffer", r->name);
    return;
  }
  LLVMValueRef nr, nc, sr;
  block_extent(L, T, o, t->vr, t->vc, &nr, &nc, &sr);
  /* A block clipped at the window's edge: the rest of the tile reads zero, as a load pads. */
  LLVMValueRef full = LLVMBuildAnd(L->b, LLVMBuildICmp(L->b, LLVMIntEQ, nr, t->vr, ""),
                                   LLVMBuildICmp(L->b, LLVMIntEQ, nc, t->vc, ""), "");
  LLVMBasicBlockRef bb_pad = LLVMAppendBasicBlockInContext(L->c, L->fn, "rload.pad");
  LLVMBasicBlockRef bb_go = LLVMAppendBasicBlockInContext(L->c, L->fn, "rload");
  LLVMBuildCondBr(L->b, full, bb_go, bb_pad);
  LLVMPositionBuilderAtEnd(L->b, bb_pad);
  LLVMBuildMemSet(L->b, t->base, LLVMConstInt(L->t_i8, 0, 0),
                  pto__lower_i64(L, R * C * (int64_t)pto_dtype_size(t->dt)), 64);
  LLVMBuildBr(L->b, bb_go);
  LLVMPositionBuilderAtEnd(L->b, bb_go);
  LLVMValueRef d = dist_table(L);
  LLVMTypeRef ty[8] = {L->t_ptr, L->t_i64, L->t_ptr, L->t_i64,
                       L->t_i32, L->t_i64, L->t_i64, L->t_i32};
  LLVMValueRef a[8] = {t->base, pto__lower_i64(L, C),
                       src,     sr,
                       peer,    nr,
                       nc,      LLVMConstInt(L->t_i32, pto_dtype_size(t->dt), 0)};
  dist_call(L, d, DF_REMOTE_LOAD, ty, a, 8, "remote_load");
}

static void lower_remote_store(lw *L, const pto_ir_stmt *s) {
  const pto_ir_value *tv = value_at(L, s, 0);
  if (!tv) return;
  if (L->vals[tv->id].kind != LW_V_TILE) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc,
                    "dist.remote_store: argument 1 is not a tile");
    return;
  }
  lw_tile *t = &L->vals[tv->id].tile;
  lw_tensor *T = window_at(L, s, 1);
  LLVMValueRef peer = T ? rank_at(L, s, 2) : NULL;
  if (!peer) return;
  LLVMValueRef o[PTO_MAX_RANK];
  LLVMValueRef dst = element_at(L, s, T, arg_at(L, s, 3), o);
  if (!dst) return;
  check_window_offsets(L, value_at(L, s, 1), T, o, 3, 0);
  LLVMValueRef nr, nc, sr;
  block_extent(L, T, o, t->vr, t->vc, &nr, &nc, &sr);
  LLVMValueRef d = dist_table(L);
  LLVMTypeRef ty[8] = {L->t_ptr, L->t_i64, L->t_ptr, L->t_i64,
                       L->t_i32, L->t_i64, L->t_i64, L->t_i32};
  LLVMValueRef a[8] = {t->base, pto__lower_i64(L, t->cols),
                       dst,     sr,
                       peer,    nr,
                       nc,      LLVMConstInt(L->t_i32, pto_dtype_size(t->dt), 0)};
  dist_call(L, d, DF_REMOTE_STORE, ty, a, 8, "remote_store");
  if (s->nresults == 1) L->vals[s->results[0]->id] = L->vals[value_at(L, s, 1)->id];
}

/* The descriptor (pto_kernel_tensor *) of a window operand: kernel tensors are parameters, so
 * it is the kernel's own tensors[i]. */
static LLVMValueRef desc_at(lw *L, const pto_ir_stmt *s, int i) {
  if (!window_at(L, s, i)) return NULL;
  const pto_ir_value *v = value_at(L, s, i);
  LLVMValueRef idx = pto__lower_i64(L, L->vals[v->id].tensor);
  return LLVMBuildInBoundsGEP2(L->b, L->t_desc, L->arg_tensors, &idx, 1, "desc");
}

static void lower_barrier(lw *L, const pto_ir_stmt *s) {
  LLVMValueRef sig = desc_at(L, s, 0);
  if (!sig) return;
  LLVMValueRef d = dist_table(L);
  LLVMTypeRef t[1] = {L->t_ptr};
  LLVMValueRef a[1] = {sig};
  dist_call(L, d, DF_BARRIER, t, a, 1, "barrier");
}

static void lower_collective(lw *L, const pto_ir_stmt *s, int kind) {
  LLVMValueRef win = desc_at(L, s, 0);
  LLVMValueRef sig = win ? desc_at(L, s, 1) : NULL;
  if (!sig) return;
  static const char *const ops[] = {"sum", "max", "min", "prod"};
  static const char *const modes[] = {"mesh", "ring"};
  int op = kw_index(L, s, "op", ops, 4, PTO_DIST_RED_SUM);
  int mode = kw_index(L, s, "mode", modes, 2, PTO_DIST_MODE_MESH);
  LLVMValueRef root = LLVMConstInt(L->t_i32, 0, 0);
  if (kind == PTO_DIST_BROADCAST) root = rank_at(L, s, 2);
  if (L->err || !root) return;
  LLVMValueRef d = dist_table(L);
  LLVMTypeRef t[6] = {L->t_i32, L->t_ptr, L->t_ptr, L->t_i32, L->t_i32, L->t_i32};
  LLVMValueRef a[6] = {
      LLVMConstInt(L->t_i32, (uint64_t)kind, 0), win, sig, LLVMConstInt(L->t_i32, (uint64_t)op, 0),
      LLVMConstInt(L->t_i32, (uint64_t)mode, 0), root};
  dist_call(L, d, DF_COLLECTIVE, t, a, 6, "collective");
  if (s->nresults == 1) L->vals[s->results[0]->id] = L->vals[value_at(L, s, 0)->id];
}

void pto__lower_dist_op(lw *L, const pto_ir_stmt *s) {
  switch (s->op.opc) {
  case PTO_OP_DIST_COMM_CTX:
    /* The communicator is the chip's table; the handle itself carries nothing. */
    if (!value_at(L, s, 0)) return;
    if (s->nresults == 1) {
      L->vals[s->results[0]->id].kind = LW_V_SCALAR;
      L->vals[s->results[0]->id].v =
          LLVMConstInt(pto__lower_compute_type(L, s->results[0]->type->dtype), 0, 0);
    }
    return;
  case PTO_OP_DIST_RANK: lower_rank(L, s, 0); return;
  case PTO_OP_DIST_NRANKS: lower_rank(L, s, 1); return;
  case PTO_OP_DIST_NOTIFY: lower_notify_wait(L, s, 1); return;
  case PTO_OP_DIST_WAIT: lower_notify_wait(L, s, 0); return;
  case PTO_OP_DIST_REMOTE_LOAD: lower_remote_load(L, s); return;
  case PTO_OP_DIST_REMOTE_STORE: lower_remote_store(L, s); return;
  case PTO_OP_DIST_BARRIER: lower_barrier(L, s); return;
  case PTO_OP_DIST_ALLREDUCE: lower_collective(L, s, PTO_DIST_ALLREDUCE); return;
  case PTO_OP_DIST_BROADCAST: lower_collective(L, s, PTO_DIST_BROADCAST); return;
  case PTO_OP_DIST_ALLGATHER: lower_collective(L, s, PTO_DIST_ALLGATHER); return;
  case PTO_OP_DIST_REDUCE_SCATTER: lower_collective(L, s, PTO_DIST_REDUCE_SCATTER); return;
  default:
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc, "%s is not allowed in a kernel",
                    pto_op_info_get(s->op.opc)->name);
    return;
  }
}
