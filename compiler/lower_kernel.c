/* Kernel code generator: one PTIR kernel function to one LLVM function.
 *
 * Layout of the generated function (see pto/kernel_abi.h):
 *   entry:    scratch size check, tensor descriptors read, dynamic symbols bound (a symbol bound
 *             twice must agree), scalar slots decoded, tile buffer addresses computed;
 *   body:     the statements in program order; tiles are buffers in the scratch arena whose
 *             offsets the planner (lower_plan.c) fixed; elementwise ops are counted loops over
 *             constant trip counts so LLVM vectorizes them;
 *   exits:    return 0, or a PTO_KERNEL_ERR_* code (with ctx->err_detail filled).
 *
 * Numbers follow the reference interpreter bit for bit where the format allows: f16 and bf16
 * values compute in f32 and round to nearest even whenever a 16-bit value is produced; integer
 * '/' floors and mod has the sign of the divisor; float-to-int conversions saturate. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "lower_kernel_internal.h"
#include "pto/base.h"
#include "pto/mathf.h"

/* ---- small helpers ---------------------------------------------------------------------- */

void pto__lower_fail(lw *L, pto_status_code code, pto_loc loc, const char *fmt, ...) {
  if (L->err) return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (loc.line > 0)
    L->err = pto_status_make(code, "%s:%d:%d: %s", L->p->file ? L->p->file : "<input>", loc.line,
                             loc.col, msg);
  else
    L->err = pto_status_make(code, "@%s: %s", L->k->name, msg);
}

LLVMValueRef pto__lower_i64(lw *L, int64_t v) { return LLVMConstInt(L->t_i64, (uint64_t)v, 1); }

/* The type a tile element has in memory. */
LLVMTypeRef pto__lower_storage_type(lw *L, pto_dtype dt) {
  switch (dt) {
  case PTO_DTYPE_BOOL:
  case PTO_DTYPE_I8:
  case PTO_DTYPE_U8: return L->t_i8;
  case PTO_DTYPE_I16:
  case PTO_DTYPE_U16:
  case PTO_DTYPE_BF16: return L->t_i16; /* bf16 rounding is done with integer ops */
  case PTO_DTYPE_I32:
  case PTO_DTYPE_U32: return L->t_i32;
  case PTO_DTYPE_F16: return L->t_half;
  case PTO_DTYPE_F32: return L->t_f32;
  case PTO_DTYPE_F64: return L->t_f64;
  default: return L->t_i64;
  }
}

/* The type a value of dt has while computing: 16-bit floats widen to f32, bool is i1. */
LLVMTypeRef pto__lower_compute_type(lw *L, pto_dtype dt) {
  switch (dt) {
  case PTO_DTYPE_BOOL: return L->t_i1;
  case PTO_DTYPE_F16:
  case PTO_DTYPE_BF16:
  case PTO_DTYPE_F32: return L->t_f32;
  case PTO_DTYPE_F64: return L->t_f64;
  default: return pto__lower_storage_type(L, dt);
  }
}

static int is_unsigned(pto_dtype dt) {
  return dt == PTO_DTYPE_U8 || dt == PTO_DTYPE_U16 || dt == PTO_DTYPE_U32 || dt == PTO_DTYPE_U64;
}

static int is_16bit_float(pto_dtype dt) { return dt == PTO_DTYPE_F16 || dt == PTO_DTYPE_BF16; }

LLVMValueRef pto__lower_call_intrinsic(lw *L, const char *name, LLVMTypeRef *over, int nover,
                                       LLVMValueRef *args, int nargs, const char *vname) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(L->m, id, over, (size_t)nover);
  LLVMTypeRef fty = LLVMIntrinsicGetType(L->c, id, over, (size_t)nover);
  return LLVMBuildCall2(L->b, fty, fn, args, (unsigned)nargs, vname);
}

void pto__lower_prefetch(lw *L, LLVMValueRef addr, int write, int locality) {
  LLVMValueRef args[4] = {addr, LLVMConstInt(L->t_i32, (unsigned long long)write, 0),
                          LLVMConstInt(L->t_i32, (unsigned long long)locality, 0),
                          LLVMConstInt(L->t_i32, 1, 0)};
  LLVMTypeRef pt = L->t_ptr;
  pto__lower_call_intrinsic(L, "llvm.prefetch", &pt, 1, args, 4, "");
}

/* A call of a libm-style function by name (expf, logf, fmodf, ...). */
static LLVMValueRef call_libm(lw *L, const char *name, LLVMTypeRef ty, LLVMValueRef *args,
                              int nargs) {
  LLVMTypeRef params[2] = {ty, ty};
  LLVMTypeRef fty = LLVMFunctionType(ty, params, (unsigned)nargs, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(L->m, name);
  if (!fn) {
    fn = LLVMAddFunction(L->m, name, fty);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, pto__lower_enum_attr(L, "nounwind"));
  }
  return LLVMBuildCall2(L->b, fty, fn, args, (unsigned)nargs, "");
}

LLVMAttributeRef pto__lower_enum_attr(lw *L, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  return LLVMCreateEnumAttribute(L->c, kind, 0);
}

/* The type with a's shape (scalar, or a vector of as many lanes) and element type el. */
static LLVMTypeRef like(LLVMValueRef a, LLVMTypeRef el) {
  LLVMTypeRef t = LLVMTypeOf(a);
  if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) return LLVMVectorType(el, LLVMGetVectorSize(t));
  return el;
}

/* Constant e in every lane of vector type t. The lowering emits exp/log on scalars (the loop
 * vectorizer widens them) or vectors of at most 64 lanes; a wider one would get a 64-lane
 * constant, which the IR verifier rejects, never a wrong value. */
static LLVMValueRef splat_const(LLVMTypeRef t, LLVMValueRef e) {
  unsigned n = LLVMGetVectorSize(t);
  LLVMValueRef els[64];
  if (n > 64) n = 64;
  for (unsigned i = 0; i < n; i++)
    els[i] = e;
  return LLVMConstVector(els, n);
}

/* A constant of type t (scalar, or splat over a vector). */
static LLVMValueRef cst_real(LLVMTypeRef t, double v) {
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return LLVMConstReal(t, v);
  return splat_const(t, LLVMConstReal(LLVMGetElementType(t), v));
}

static LLVMValueRef cst_int(LLVMTypeRef t, uint64_t v) {
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return LLVMConstInt(t, v, 0);
  return splat_const(t, LLVMConstInt(LLVMGetElementType(t), v, 0));
}

/* Storage bits to compute value (a scalar, or a vector of them: 16-bit floats). */
LLVMValueRef pto__lower_to_compute(lw *L, pto_dtype dt, LLVMValueRef raw) {
  LLVMBuilderRef b = L->b;
  switch (dt) {
  case PTO_DTYPE_BOOL: return LLVMBuildICmp(b, LLVMIntNE, raw, LLVMConstInt(L->t_i8, 0, 0), "");
  case PTO_DTYPE_F16: return LLVMBuildFPExt(b, raw, like(raw, L->t_f32), "");
  case PTO_DTYPE_BF16: {
    LLVMTypeRef i32 = like(raw, L->t_i32);
    LLVMValueRef w = LLVMBuildZExt(b, raw, i32, "");
    w = LLVMBuildShl(b, w, cst_int(i32, 16), "");
    return LLVMBuildBitCast(b, w, like(raw, L->t_f32), "");
  }
  default: return raw;
  }
}

/* Compute value to storage bits, rounding 16-bit floats to nearest even (a scalar, or a vector
 * of them). The bf16 rounding is the integer formula of pto_f32_to_bf16 (NaN: quieted, sign and
 * top payload kept). */
LLVMValueRef pto__lower_to_storage(lw *L, pto_dtype dt, LLVMValueRef v) {
  LLVMBuilderRef b = L->b;
  switch (dt) {
  case PTO_DTYPE_BOOL: return LLVMBuildZExt(b, v, L->t_i8, "");
  case PTO_DTYPE_F16: return LLVMBuildFPTrunc(b, v, like(v, L->t_half), "");
  case PTO_DTYPE_BF16: {
    LLVMTypeRef i32 = like(v, L->t_i32);
    LLVMValueRef x = LLVMBuildBitCast(b, v, i32, "");
    LLVMValueRef absx = LLVMBuildAnd(b, x, cst_int(i32, 0x7fffffffu), "");
    LLVMValueRef isnan = LLVMBuildICmp(b, LLVMIntUGT, absx, cst_int(i32, 0x7f800000u), "");
    LLVMValueRef hi = LLVMBuildLShr(b, x, cst_int(i32, 16), "");
    LLVMValueRef qnan = LLVMBuildOr(b, hi, cst_int(i32, 0x40), "");
    LLVMValueRef lsb = LLVMBuildAnd(b, hi, cst_int(i32, 1), "");
    LLVMValueRef r = LLVMBuildAdd(b, x, LLVMBuildAdd(b, lsb, cst_int(i32, 0x7fff), ""), "");
    r = LLVMBuildLShr(b, r, cst_int(i32, 16), "");
    r = LLVMBuildSelect(b, isnan, qnan, r, "");
    return LLVMBuildTrunc(b, r, like(v, L->t_i16), "");
  }
  default: return v;
  }
}

/* A compute value of a 16-bit float dtype, rounded to that dtype (kept in f32). */
LLVMValueRef pto__lower_round(lw *L, pto_dtype dt, LLVMValueRef v) {
  if (!is_16bit_float(dt)) return v;
  return pto__lower_to_compute(L, dt, pto__lower_to_storage(L, dt, v));
}

/* Rounds a double to f32 toward zero and marks inexactness in the lowest bit ("round to odd"):
 * a second rounding from there to f16/bf16 is then the single correct rounding of the double,
 * which is how the interpreter converts doubles (f64 values, integers) to 16-bit floats. */
static LLVMValueRef round_to_odd_f32(lw *L, LLVMValueRef d) {
  LLVMBuilderRef b = L->b;
  LLVMValueRef f = LLVMBuildFPTrunc(b, d, L->t_f32, "");
  LLVMValueRef back = LLVMBuildFPExt(b, f, L->t_f64, "");
  LLVMValueRef keep = LLVMBuildFCmp(b, LLVMRealUEQ, back, d, ""); /* exact, or NaN */
  LLVMTypeRef t64 = L->t_f64;
  LLVMValueRef ab = pto__lower_call_intrinsic(L, "llvm.fabs", &t64, 1, &back, 1, "");
  LLVMValueRef ad = pto__lower_call_intrinsic(L, "llvm.fabs", &t64, 1, &d, 1, "");
  LLVMValueRef away = LLVMBuildFCmp(b, LLVMRealOGT, ab, ad, "");
  LLVMValueRef bits = LLVMBuildBitCast(b, f, L->t_i32, "");
  bits = LLVMBuildSub(b, bits, LLVMBuildZExt(b, away, L->t_i32, ""), "");
  bits = LLVMBuildOr(b, bits, LLVMConstInt(L->t_i32, 1, 0), "");
  return LLVMBuildSelect(b, keep, f, LLVMBuildBitCast(b, bits, L->t_f32, ""), "");
}

/* Converts a compute value of dtype from to a compute value of dtype to, as the interpreter's
 * conv() does. */
LLVMValueRef pto__lower_convert(lw *L, LLVMValueRef v, pto_dtype from, pto_dtype to) {
  LLVMBuilderRef b = L->b;
  if (from == to) return v;
  if (from == PTO_DTYPE_INDEX) from = PTO_DTYPE_I64;
  if (to == PTO_DTYPE_INDEX) to = PTO_DTYPE_I64;
  if (from == to) return v;
  LLVMTypeRef tt = pto__lower_compute_type(L, to);
  if (to == PTO_DTYPE_BOOL) {
    if (pto_dtype_is_float(from))
      return LLVMBuildFCmp(b, LLVMRealUNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
    return LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
  }
  if (from == PTO_DTYPE_BOOL) {
    if (pto_dtype_is_float(to)) return LLVMBuildUIToFP(b, v, tt, "");
    return LLVMBuildZExt(b, v, tt, "");
  }
  int ff = pto_dtype_is_float(from), tf = pto_dtype_is_float(to);
  if (!ff && !tf) {
    unsigned fw = LLVMGetIntTypeWidth(LLVMTypeOf(v)), tw = LLVMGetIntTypeWidth(tt);
    if (fw == tw) return v;
    if (fw > tw) return LLVMBuildTrunc(b, v, tt, "");
    return is_unsigned(from) ? LLVMBuildZExt(b, v, tt, "") : LLVMBuildSExt(b, v, tt, "");
  }
  if (!ff && tf) {
    /* f32 and f64: one rounding straight from the integer; 16-bit: through a double. */
    LLVMTypeRef via = is_16bit_float(to) ? L->t_f64 : tt;
    LLVMValueRef r =
        is_unsigned(from) ? LLVMBuildUIToFP(b, v, via, "") : LLVMBuildSIToFP(b, v, via, "");
    if (!is_16bit_float(to)) return r;
    return pto__lower_round(L, to, round_to_odd_f32(L, r));
  }
  if (ff && !tf) {
    LLVMTypeRef over[2] = {tt, LLVMTypeOf(v)};
    LLVMValueRef args[1] = {v};
    return pto__lower_call_intrinsic(L, is_unsigned(to) ? "llvm.fptoui.sat" : "llvm.fptosi.sat",
                                     over, 2, args, 1, "");
  }
  if (from == PTO_DTYPE_F64) {
    if (to == PTO_DTYPE_F32) return LLVMBuildFPTrunc(b, v, L->t_f32, "");
    return pto__lower_round(L, to, round_to_odd_f32(L, v));
  }
  if (to == PTO_DTYPE_F64) return LLVMBuildFPExt(b, v, L->t_f64, "");
  return pto__lower_round(L, to, v); /* among f16/bf16/f32, all held in f32 */
}

/* ---- alias scopes ------------------------------------------------------------------------ */

/* Scratch tiles and tensor data never overlap: two alias scopes tell LLVM so, which spares the
 * vectorizer runtime overlap checks in loads and stores. */
static void init_alias_scopes(lw *L) {
  LLVMMetadataRef dname = LLVMMDStringInContext2(L->c, "pto.domain", 10);
  LLVMMetadataRef domain = LLVMMDNodeInContext2(L->c, &dname, 1);
  LLVMMetadataRef s1[2] = {LLVMMDStringInContext2(L->c, "pto.scratch", 11), domain};
  LLVMMetadataRef s2[2] = {LLVMMDStringInContext2(L->c, "pto.tensor", 10), domain};
  LLVMMetadataRef scratch = LLVMMDNodeInContext2(L->c, s1, 2);
  LLVMMetadataRef tensor = LLVMMDNodeInContext2(L->c, s2, 2);
  L->md_scratch = LLVMMetadataAsValue(L->c, LLVMMDNodeInContext2(L->c, &scratch, 1));
  L->md_tensor = LLVMMetadataAsValue(L->c, LLVMMDNodeInContext2(L->c, &tensor, 1));
  L->md_domain = domain;
  L->md_scratch_scope = scratch;
  L->md_tensor_scope = tensor;
  L->kind_scope = LLVMGetMDKindIDInContext(L->c, "alias.scope", 11);
  L->kind_noalias = LLVMGetMDKindIDInContext(L->c, "noalias", 7);
}

/* Records base as the address of a tile that may be a view of a tensor (lower_load). Returns -1
 * when out of memory. */
int pto__lower_note_view(lw *L, LLVMValueRef base) {
  if (pto_grow_int(&L->views, sizeof *L->views, &L->capviews, L->nviews + 1)) return -1;
  L->views[L->nviews++] = base;
  return 0;
}

/* Whether address p is an element of a possible view. */
int pto__lower_maybe_view(lw *L, LLVMValueRef p) {
  if (!L->nviews) return 0;
  while (p && LLVMIsAGetElementPtrInst(p))
    p = LLVMGetOperand(p, 0);
  for (int i = 0; i < L->nviews; i++)
    if (L->views[i] == p) return 1;
  return 0;
}

/* Whether a load's or store's address is an element of a possible view. */
static int through_view(lw *L, LLVMValueRef inst) {
  if (!L->nviews) return 0;
  return pto__lower_maybe_view(L, LLVMIsAStoreInst(inst) ? LLVMGetOperand(inst, 1)
                                                         : LLVMGetOperand(inst, 0));
}

/* Tile buffers (scratch) and tensors never overlap: each access says which it is. An access
 * through a tile that may be a view of a tensor says nothing (it may be either). */
void pto__lower_tag(lw *L, LLVMValueRef inst, int is_tensor) {
  if (!is_tensor && through_view(L, inst)) return;
  LLVMSetMetadata(inst, L->kind_scope, is_tensor ? L->md_tensor : L->md_scratch);
  LLVMSetMetadata(inst, L->kind_noalias, is_tensor ? L->md_scratch : L->md_tensor);
}

/* Loads/stores element idx of a tile buffer (storage bits). */
LLVMValueRef pto__lower_tile_load(lw *L, LLVMValueRef base, pto_dtype dt, LLVMValueRef idx) {
  LLVMTypeRef st = pto__lower_storage_type(L, dt);
  LLVMValueRef ptr = LLVMBuildInBoundsGEP2(L->b, st, base, &idx, 1, "");
  LLVMValueRef v = LLVMBuildLoad2(L->b, st, ptr, "");
  LLVMSetAlignment(v, (unsigned)pto_dtype_size(dt));
  pto__lower_tag(L, v, 0);
  return v;
}

void pto__lower_tile_store(lw *L, LLVMValueRef base, pto_dtype dt, LLVMValueRef idx,
                           LLVMValueRef raw) {
  LLVMTypeRef st = pto__lower_storage_type(L, dt);
  LLVMValueRef ptr = LLVMBuildInBoundsGEP2(L->b, st, base, &idx, 1, "");
  LLVMValueRef s = LLVMBuildStore(L->b, raw, ptr);
  LLVMSetAlignment(s, (unsigned)pto_dtype_size(dt));
  pto__lower_tag(L, s, 0);
}

/* ---- loops -------------------------------------------------------------------------------- */

/* for (iv = lo; iv < hi; iv++): leaves the builder in the body; returns iv. */
LLVMValueRef pto__lower_loop_begin(lw *L, lw_loop *lp, LLVMValueRef lo, LLVMValueRef hi,
                                   const char *name) {
  char buf[64];
  lp->lo = lo;
  lp->pre = LLVMGetInsertBlock(L->b);
  snprintf(buf, sizeof buf, "%s.head", name);
  lp->header = LLVMAppendBasicBlockInContext(L->c, L->fn, buf);
  snprintf(buf, sizeof buf, "%s.body", name);
  lp->body = LLVMAppendBasicBlockInContext(L->c, L->fn, buf);
  snprintf(buf, sizeof buf, "%s.exit", name);
  lp->exit = LLVMAppendBasicBlockInContext(L->c, L->fn, buf);
  LLVMBuildBr(L->b, lp->header);
  LLVMPositionBuilderAtEnd(L->b, lp->header);
  lp->iv = LLVMBuildPhi(L->b, L->t_i64, name);
  LLVMValueRef c = LLVMBuildICmp(L->b, LLVMIntSLT, lp->iv, hi, "");
  LLVMBuildCondBr(L->b, c, lp->body, lp->exit);
  LLVMPositionBuilderAtEnd(L->b, lp->body);
  return lp->iv;
}

void pto__lower_loop_end(lw *L, lw_loop *lp) {
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(L->b);
  LLVMValueRef next = LLVMBuildAdd(L->b, lp->iv, pto__lower_i64(L, 1), "");
  LLVMSetNSW(next, 1);
  LLVMBuildBr(L->b, lp->header);
  LLVMValueRef vals[2] = {lp->lo, next};
  LLVMBasicBlockRef blocks[2] = {lp->pre, latch};
  LLVMAddIncoming(lp->iv, vals, blocks, 2);
  LLVMPositionBuilderAtEnd(L->b, lp->exit);
}

/* Returns code from the kernel when cond holds; continues in a fresh block otherwise. */
void pto__lower_fail_if(lw *L, LLVMValueRef cond, int code, LLVMValueRef d0, LLVMValueRef d1) {
  LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(L->c, L->fn, "fail");
  LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(L->c, L->fn, "ok");
  LLVMBuildCondBr(L->b, cond, fail, cont);
  LLVMPositionBuilderAtEnd(L->b, fail);
  if (d0) {
    LLVMValueRef idx[2] = {LLVMConstInt(L->t_i32, 0, 0), LLVMConstInt(L->t_i32, 4, 0)};
    LLVMValueRef det = LLVMBuildInBoundsGEP2(L->b, L->t_ctx, L->arg_ctx, idx, 2, "err_detail");
    LLVMBuildStore(L->b, d0, det);
    LLVMValueRef one = pto__lower_i64(L, 1);
    LLVMValueRef det1 = LLVMBuildInBoundsGEP2(L->b, L->t_i64, det, &one, 1, "");
    LLVMBuildStore(L->b, d1, det1);
  }
  LLVMBuildRet(L->b, LLVMConstInt(L->t_i32, (uint64_t)code, 0));
  LLVMPositionBuilderAtEnd(L->b, cont);
}

LLVMValueRef pto__lower_smin(lw *L, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef args[2] = {a, b};
  LLVMTypeRef t = LLVMTypeOf(a);
  return pto__lower_call_intrinsic(L, "llvm.smin", &t, 1, args, 2, "");
}

LLVMValueRef pto__lower_smax(lw *L, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef args[2] = {a, b};
  LLVMTypeRef t = LLVMTypeOf(a);
  return pto__lower_call_intrinsic(L, "llvm.smax", &t, 1, args, 2, "");
}

/* ---- scalar arithmetic shared by expressions and tile ops ----------------------------------- */

/* Integer floor division / sign-of-divisor modulo. b must not be zero when this runs in a
 * straight line; in tile loops the caller records zero divisors in a flag instead and the safe
 * divisor below keeps the loop free of traps. INT_MIN / -1 wraps. */
static LLVMValueRef int_divmod(lw *L, pto_dtype dt, LLVMValueRef a, LLVMValueRef bv, int want_mod) {
  LLVMBuilderRef b = L->b;
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef zero = LLVMConstNull(t), one = LLVMConstInt(t, 1, 0);
  LLVMValueRef bz = LLVMBuildICmp(b, LLVMIntEQ, bv, zero, "");
  if (is_unsigned(dt)) {
    LLVMValueRef bs = LLVMBuildSelect(b, bz, one, bv, "");
    return want_mod ? LLVMBuildURem(b, a, bs, "") : LLVMBuildUDiv(b, a, bs, "");
  }
  LLVMValueRef bm1 = LLVMBuildICmp(b, LLVMIntEQ, bv, LLVMConstAllOnes(t), "");
  LLVMValueRef bs = LLVMBuildSelect(b, LLVMBuildOr(b, bz, bm1, ""), one, bv, "");
  LLVMValueRef q = LLVMBuildSDiv(b, a, bs, "");
  LLVMValueRef r = LLVMBuildSRem(b, a, bs, "");
  LLVMValueRef rnz = LLVMBuildICmp(b, LLVMIntNE, r, zero, "");
  LLVMValueRef sdiff = LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildXor(b, r, bs, ""), zero, "");
  LLVMValueRef adj = LLVMBuildAnd(b, rnz, sdiff, "");
  if (want_mod) {
    LLVMValueRef m = LLVMBuildSelect(b, adj, LLVMBuildAdd(b, r, bs, ""), r, "");
    return LLVMBuildSelect(b, bm1, zero, m, "");
  }
  LLVMValueRef qf = LLVMBuildSub(b, q, LLVMBuildZExt(b, adj, t, ""), "");
  return LLVMBuildSelect(b, bm1, LLVMBuildSub(b, zero, a, ""), qf, "");
}

/* Float mod with the sign of b: r = fmod(a, b); r += b when r != 0 and the signs differ; a zero
 * result is a zero of b's sign (fmod's has a's), as numpy's and Python's. */
static LLVMValueRef float_mod(lw *L, pto_dtype dt, LLVMValueRef a, LLVMValueRef bv) {
  LLVMBuilderRef b = L->b;
  LLVMValueRef r = LLVMBuildFRem(b, a, bv, "");
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(a));
  LLVMValueRef rnz = LLVMBuildFCmp(b, LLVMRealONE, r, zero, "");
  LLVMValueRef rneg = LLVMBuildFCmp(b, LLVMRealOLT, r, zero, "");
  LLVMValueRef bneg = LLVMBuildFCmp(b, LLVMRealOLT, bv, zero, "");
  LLVMValueRef adj = LLVMBuildAnd(b, rnz, LLVMBuildXor(b, rneg, bneg, ""), "");
  LLVMValueRef m = LLVMBuildSelect(b, adj, LLVMBuildFAdd(b, r, bv, ""), r, "");
  LLVMValueRef signed_zero = LLVMBuildSelect(b, bneg, LLVMConstReal(LLVMTypeOf(a), -0.0), zero, "");
  LLVMValueRef rz = LLVMBuildFCmp(b, LLVMRealOEQ, r, zero, "");
  m = LLVMBuildSelect(b, rz, signed_zero, m, "");
  return pto__lower_round(L, dt, m);
}

LLVMValueRef pto__lower_binop(lw *L, lw_bin op, pto_dtype dt, LLVMValueRef a, LLVMValueRef bv,
                              LLVMValueRef divzero_flag) {
  LLVMBuilderRef b = L->b;
  int fl = pto_dtype_is_float(dt);
  int un = is_unsigned(dt);
  LLVMValueRef r = NULL;
  if (fl) {
    switch (op) {
    case LW_ADD: r = LLVMBuildFAdd(b, a, bv, ""); break;
    case LW_SUB: r = LLVMBuildFSub(b, a, bv, ""); break;
    case LW_MUL: r = LLVMBuildFMul(b, a, bv, ""); break;
    case LW_DIV: r = LLVMBuildFDiv(b, a, bv, ""); break;
    case LW_MOD: return float_mod(L, dt, a, bv);
    case LW_MIN:
    case LW_MAX: {
      /* minnum/maxnum may give either zero of +0 and -0 (and LLVM may swap the operands): equal
       * operands take their bits ORed (min: -0) or ANDed (max: +0), as the interpreter */
      LLVMValueRef args[2] = {a, bv};
      LLVMTypeRef t = LLVMTypeOf(a);
      LLVMTypeRef et = LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetElementType(t) : t;
      LLVMTypeRef ti = like(a, LLVMGetTypeKind(et) == LLVMDoubleTypeKind ? L->t_i64 : L->t_i32);
      LLVMValueRef m = pto__lower_call_intrinsic(L, op == LW_MIN ? "llvm.minnum" : "llvm.maxnum",
                                                 &t, 1, args, 2, "");
      LLVMValueRef ab = LLVMBuildBitCast(b, a, ti, ""), bb = LLVMBuildBitCast(b, bv, ti, "");
      LLVMValueRef z = op == LW_MIN ? LLVMBuildOr(b, ab, bb, "") : LLVMBuildAnd(b, ab, bb, "");
      LLVMValueRef eq = LLVMBuildFCmp(b, LLVMRealOEQ, a, bv, "");
      return LLVMBuildSelect(b, eq, LLVMBuildBitCast(b, z, t, ""), m, "");
    }
    default: return pto__lower_elem_binop(L, op, dt, a, bv);
    }
    return pto__lower_round(L, dt, r);
  }
  switch (op) {
  case LW_ADD: return LLVMBuildAdd(b, a, bv, "");
  case LW_SUB: return LLVMBuildSub(b, a, bv, "");
  case LW_MUL: return LLVMBuildMul(b, a, bv, "");
  case LW_DIV:
  case LW_MOD:
    if (divzero_flag) { /* a zero divisor records the op (L->divzero_op) */
      LLVMValueRef z = LLVMBuildICmp(b, LLVMIntEQ, bv, LLVMConstNull(LLVMTypeOf(bv)), "");
      LLVMValueRef old = LLVMBuildLoad2(b, L->t_i64, divzero_flag, "");
      LLVMValueRef op = LLVMConstInt(L->t_i64, (uint64_t)L->divzero_op, 1);
      LLVMBuildStore(b, LLVMBuildSelect(b, z, op, old, ""), divzero_flag);
    }
    return int_divmod(L, dt, a, bv, op == LW_MOD);
  case LW_MIN: {
    LLVMValueRef args[2] = {a, bv};
    LLVMTypeRef t = LLVMTypeOf(a);
    return pto__lower_call_intrinsic(L, un ? "llvm.umin" : "llvm.smin", &t, 1, args, 2, "");
  }
  case LW_MAX: {
    LLVMValueRef args[2] = {a, bv};
    LLVMTypeRef t = LLVMTypeOf(a);
    return pto__lower_call_intrinsic(L, un ? "llvm.umax" : "llvm.smax", &t, 1, args, 2, "");
  }
  default: return pto__lower_elem_binop(L, op, dt, a, bv);
  }
}

/* ---- f32 exp and log: pto/mathf.h's algorithm, operation for operation as base/mathf.c --- */

static LLVMValueRef fma3(lw *L, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef args[3] = {a, b, c};
  return pto__lower_call_intrinsic(L, "llvm.fma", &t, 1, args, 3, "");
}

/* x < lo ? lo : x with the given ordered predicate (a NaN compares false and stays). */
static LLVMValueRef clamp_side(lw *L, LLVMRealPredicate pred, LLVMValueRef x, LLVMValueRef lim) {
  return LLVMBuildSelect(L->b, LLVMBuildFCmp(L->b, pred, x, lim, ""), lim, x, "");
}

/* pto_expf (base/mathf.c) on an f32 value or vector: f32 throughout (16 lanes per 512 bits). */
static LLVMValueRef lower_expf(lw *L, LLVMValueRef x) {
  LLVMBuilderRef b = L->b;
  LLVMTypeRef tf = LLVMTypeOf(x), ti = like(x, L->t_i32);
  x = clamp_side(L, LLVMRealOLT, x, cst_real(tf, PTO_MATHF_EXP_LO));
  x = clamp_side(L, LLVMRealOGT, x, cst_real(tf, PTO_MATHF_EXP_HI));
  LLVMValueRef shift = cst_real(tf, PTO_MATHF_SHIFT);
  LLVMValueRef kf = fma3(L, x, cst_real(tf, PTO_MATHF_LOG2E), shift);
  LLVMValueRef n = LLVMBuildFSub(b, kf, shift, "exp.n");
  LLVMValueRef r = fma3(L, n, cst_real(tf, PTO_MATHF_NEG_LN2_HI), x);
  r = fma3(L, n, cst_real(tf, PTO_MATHF_LN2_LO_ERR), r);
  LLVMValueRef q = cst_real(tf, pto_mathf_exp_coef(PTO_MATHF_EXP_DEGREE));
  for (int i = PTO_MATHF_EXP_DEGREE - 1; i >= 0; i--)
    q = fma3(L, q, r, cst_real(tf, pto_mathf_exp_coef(i)));
  LLVMValueRef t = fma3(L, LLVMBuildFMul(b, r, r, ""), q, r);
  LLVMValueRef p = LLVMBuildFAdd(b, cst_real(tf, 1.0), t, "");
  LLVMValueRef scaled = pto__lower_x86_scalef(L, p, n);
  if (scaled) return scaled;
  /* p 2^n as two multiplies by powers of two: the first exact, the second rounds */
  LLVMValueRef ni =
      LLVMBuildSub(b, LLVMBuildBitCast(b, kf, ti, ""), cst_int(ti, PTO_MATHF_SHIFT_BITS), "");
  LLVMValueRef n1 = LLVMBuildAShr(b, ni, cst_int(ti, 1), "");
  LLVMValueRef n2 = LLVMBuildSub(b, ni, n1, "");
  LLVMValueRef s1 = LLVMBuildShl(b, LLVMBuildAdd(b, n1, cst_int(ti, 127), ""), cst_int(ti, 23), "");
  LLVMValueRef s2 = LLVMBuildShl(b, LLVMBuildAdd(b, n2, cst_int(ti, 127), ""), cst_int(ti, 23), "");
  LLVMValueRef y = LLVMBuildFMul(b, p, LLVMBuildBitCast(b, s1, tf, ""), "");
  return LLVMBuildFMul(b, y, LLVMBuildBitCast(b, s2, tf, ""), "exp");
}

/* pto_logf (base/mathf.c) on an f32 value or vector. */
static LLVMValueRef lower_logf(lw *L, LLVMValueRef x) {
  LLVMBuilderRef b = L->b;
  LLVMTypeRef td = like(x, L->t_f64), ti = like(x, L->t_i64), tf = LLVMTypeOf(x);
  LLVMValueRef d = LLVMBuildFPExt(b, x, td, "log.d");
  LLVMValueRef bits = LLVMBuildBitCast(b, d, ti, "");
  LLVMValueRef ix = LLVMBuildSub(b, bits, cst_int(ti, (uint64_t)PTO_MATHF_LOG_OFF), "");
  LLVMValueRef k = LLVMBuildAShr(b, ix, cst_int(ti, 52), "log.k");
  LLVMValueRef mb = LLVMBuildSub(b, bits, LLVMBuildShl(b, k, cst_int(ti, 52), ""), "");
  LLVMValueRef m = LLVMBuildBitCast(b, mb, td, "log.m");
  LLVMValueRef one = cst_real(td, 1.0);
  LLVMValueRef s = LLVMBuildFDiv(b, LLVMBuildFSub(b, m, one, ""), LLVMBuildFAdd(b, m, one, ""), "");
  LLVMValueRef z = LLVMBuildFMul(b, s, s, "");
  LLVMValueRef p = cst_real(td, pto_mathf_log_coef(PTO_MATHF_LOG_TERMS - 1));
  for (int i = PTO_MATHF_LOG_TERMS - 2; i >= 0; i--)
    p = fma3(L, p, z, cst_real(td, pto_mathf_log_coef(i)));
  LLVMValueRef lm = LLVMBuildFMul(b, s, p, "");
  LLVMValueRef kf = LLVMBuildSIToFP(b, k, td, "");
  LLVMValueRef y = LLVMBuildFPTrunc(b, fma3(L, kf, cst_real(td, PTO_MATHF_LN2), lm), tf, "");
  /* the special values, in base/mathf.c's order */
  y = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, x, cst_real(tf, 0.0), ""),
                      cst_real(tf, -INFINITY), y, "");
  y = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, x, cst_real(tf, 0.0), ""), cst_real(tf, NAN),
                      y, "");
  y = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, x, cst_real(tf, INFINITY), ""),
                      cst_real(tf, INFINITY), y, "");
  return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, x, x, ""), x, y, "log");
}

/* Unary tile math on a compute value; NULL when dt does not support op. */
LLVMValueRef pto__lower_unop(lw *L, pto_op_fn op, pto_dtype dt, LLVMValueRef a) {
  LLVMBuilderRef b = L->b;
  LLVMTypeRef t = LLVMTypeOf(a);
  int fl = pto_dtype_is_float(dt);
  LLVMValueRef args[1] = {a};
  if (!fl) {
    LLVMValueRef zero = LLVMConstNull(t);
    switch (op) {
    case PTO_FN_NOT: return LLVMBuildNot(b, a, ""); /* bool (i1): logical not */
    case PTO_FN_NEG: return LLVMBuildSub(b, zero, a, "");
    case PTO_FN_RELU:
      if (is_unsigned(dt)) return a;
      return pto__lower_smax(L, a, zero);
    case PTO_FN_ABS: {
      if (is_unsigned(dt)) return a;
      LLVMValueRef ia[2] = {a, LLVMConstInt(L->t_i1, 0, 0)};
      return pto__lower_call_intrinsic(L, "llvm.abs", &t, 1, ia, 2, "");
    }
    default: return NULL;
    }
  }
  LLVMValueRef r = NULL;
  int dbl = dt == PTO_DTYPE_F64;
  switch (op) {
  case PTO_FN_NEG: return LLVMBuildFNeg(b, a, "");
  case PTO_FN_ABS: return pto__lower_call_intrinsic(L, "llvm.fabs", &t, 1, args, 1, "");
  case PTO_FN_RELU: {
    LLVMValueRef zero = LLVMConstNull(t);
    LLVMValueRef gt = LLVMBuildFCmp(b, LLVMRealOGT, a, zero, "");
    return LLVMBuildSelect(b, gt, a, zero, "");
  }
  case PTO_FN_EXP: r = dbl ? call_libm(L, "exp", t, args, 1) : lower_expf(L, a); break;
  case PTO_FN_LOG: r = dbl ? call_libm(L, "log", t, args, 1) : lower_logf(L, a); break;
  case PTO_FN_SIN: r = dbl ? call_libm(L, "sin", t, args, 1) : pto__lower_sincosf(L, a, 0); break;
  case PTO_FN_COS: r = dbl ? call_libm(L, "cos", t, args, 1) : pto__lower_sincosf(L, a, 1); break;
  case PTO_FN_SQRT: r = pto__lower_call_intrinsic(L, "llvm.sqrt", &t, 1, args, 1, ""); break;
  case PTO_FN_RSQRT: {
    LLVMValueRef s = pto__lower_call_intrinsic(L, "llvm.sqrt", &t, 1, args, 1, "");
    r = LLVMBuildFDiv(b, cst_real(t, 1.0), s, "");
    break;
  }
  case PTO_FN_RECIP: r = LLVMBuildFDiv(b, cst_real(t, 1.0), a, ""); break;
  case PTO_FN_SIGMOID: {
    LLVMValueRef neg[1] = {LLVMBuildFNeg(b, a, "")};
    LLVMValueRef e = dbl ? call_libm(L, "exp", t, neg, 1) : lower_expf(L, neg[0]);
    r = LLVMBuildFDiv(b, cst_real(t, 1.0), LLVMBuildFAdd(b, cst_real(t, 1.0), e, ""), "");
    break;
  }
  default: return NULL;
  }
  return pto__lower_round(L, dt, r);
}

int pto__lower_fn_calls_libm(pto_op_fn fn, pto_dtype dt) {
  return dt == PTO_DTYPE_F64 && (fn == PTO_FN_EXP || fn == PTO_FN_LOG || fn == PTO_FN_SIGMOID ||
                                 fn == PTO_FN_EXPDIF || fn == PTO_FN_SIN || fn == PTO_FN_COS);
}

/* ---- scalar expressions ------------------------------------------------------------------ */

/* A double literal in float dtype dt, rounded once (round to odd into f32, then nearest even),
 * as the interpreter rounds literals. */
static LLVMValueRef float_const(lw *L, pto_dtype dt, double d) {
  if (dt == PTO_DTYPE_F64) return LLVMConstReal(L->t_f64, d);
  float f = (float)d;
  if (is_16bit_float(dt) && !isnan(d) && (double)f != d) {
    if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
    uint32_t bits;
    memcpy(&bits, &f, 4);
    bits |= 1u;
    memcpy(&f, &bits, 4);
  }
  if (dt == PTO_DTYPE_F16) f = pto_f16_to_f32(pto_f32_to_f16(f));
  if (dt == PTO_DTYPE_BF16) f = pto_bf16_to_f32(pto_f32_to_bf16(f));
  return LLVMConstReal(L->t_f32, (double)f);
}

static LLVMValueRef short_circuit(lw *L, const pto_ir_expr *e) {
  LLVMValueRef lhs = pto__lower_expr(L, e->lhs);
  if (!lhs) return NULL;
  LLVMBasicBlockRef from = LLVMGetInsertBlock(L->b);
  LLVMBasicBlockRef rhs_bb =
      LLVMAppendBasicBlockInContext(L->c, L->fn, e->op == PTO_EOP_AND ? "and.rhs" : "or.rhs");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(L->c, L->fn, "logic.done");
  if (e->op == PTO_EOP_AND)
    LLVMBuildCondBr(L->b, lhs, rhs_bb, done);
  else
    LLVMBuildCondBr(L->b, lhs, done, rhs_bb);
  LLVMPositionBuilderAtEnd(L->b, rhs_bb);
  LLVMValueRef rhs = pto__lower_expr(L, e->rhs);
  if (!rhs) return NULL;
  LLVMBasicBlockRef rhs_end = LLVMGetInsertBlock(L->b);
  LLVMBuildBr(L->b, done);
  LLVMPositionBuilderAtEnd(L->b, done);
  LLVMValueRef phi = LLVMBuildPhi(L->b, L->t_i1, "");
  LLVMValueRef vals[2] = {LLVMConstInt(L->t_i1, e->op == PTO_EOP_OR, 0), rhs};
  LLVMBasicBlockRef blocks[2] = {from, rhs_end};
  LLVMAddIncoming(phi, vals, blocks, 2);
  return phi;
}

LLVMValueRef pto__lower_compare(lw *L, pto_expr_op op, pto_dtype dt, LLVMValueRef a,
                                LLVMValueRef b) {
  if (pto_dtype_is_float(dt)) {
    LLVMRealPredicate pr = op == PTO_EOP_EQ   ? LLVMRealOEQ
                           : op == PTO_EOP_NE ? LLVMRealUNE
                           : op == PTO_EOP_LT ? LLVMRealOLT
                           : op == PTO_EOP_LE ? LLVMRealOLE
                           : op == PTO_EOP_GT ? LLVMRealOGT
                                              : LLVMRealOGE;
    return LLVMBuildFCmp(L->b, pr, a, b, "");
  }
  int un = is_unsigned(dt) || dt == PTO_DTYPE_BOOL;
  LLVMIntPredicate pr = op == PTO_EOP_EQ   ? LLVMIntEQ
                        : op == PTO_EOP_NE ? LLVMIntNE
                        : op == PTO_EOP_LT ? (un ? LLVMIntULT : LLVMIntSLT)
                        : op == PTO_EOP_LE ? (un ? LLVMIntULE : LLVMIntSLE)
                        : op == PTO_EOP_GT ? (un ? LLVMIntUGT : LLVMIntSGT)
                                           : (un ? LLVMIntUGE : LLVMIntSGE);
  return LLVMBuildICmp(L->b, pr, a, b, "");
}

static int holds(const pto_ir_expr *x, const pto_ir_expr *e) {
  if (x == e) return 1;
  switch (x->kind) {
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: return holds(x->a, e);
  case PTO_EXPR_BINARY: return holds(x->lhs, e) || holds(x->rhs, e);
  default: return 0;
  }
}

typedef struct held {
  const pto_ir_expr *e;
} held;

static int visit_holds(void *ctx, const pto_ir_expr *x) { return holds(x, ((held *)ctx)->e); }

/* 1 + the index of the kernel's statement whose own expressions (pto_ir_stmt_each_expr) hold e,
 * or 0: an integer divide's zero-divisor error names that statement (an assignment, an op whose
 * argument divides, a loop bound...; positions.c lists the same statements), whichever path
 * lowers the expression (a fused or streamed run, a loop's look-ahead). Looked up at each
 * integer divide by a non-literal only: a walk of the kernel's statements at compile time. */
static int64_t expr_stmt(lw *L, const pto_ir_expr *e) {
  const pto_ir_stmt **v = NULL;
  int n = 0;
  pto_status st = pto_ir_func_stmts(L->k, &v, &n);
  if (st) { /* out of memory: the error names the kernel only */
    pto_status_free(st);
    return 0;
  }
  held h = {e};
  int64_t at = 0;
  for (int i = 0; i < n && !at; i++)
    if (pto_ir_stmt_each_expr(v[i], visit_holds, &h)) at = i + 1;
  pto_free(v);
  return at;
}

LLVMValueRef pto__lower_expr(lw *L, const pto_ir_expr *e) {
  if (L->err) return NULL;
  pto_dtype dt = e->dtype;
  switch (e->kind) {
  case PTO_EXPR_INT:
    if (pto_dtype_is_float(dt)) return float_const(L, dt, (double)e->i);
    if (dt == PTO_DTYPE_BOOL) return LLVMConstInt(L->t_i1, e->i != 0, 0);
    return LLVMConstInt(pto__lower_compute_type(L, dt), (uint64_t)e->i, 1);
  case PTO_EXPR_FLOAT:
    if (!pto_dtype_is_float(dt)) dt = PTO_DTYPE_F32;
    return float_const(L, dt, e->f);
  case PTO_EXPR_BOOL: return LLVMConstInt(L->t_i1, e->b != 0, 0);
  case PTO_EXPR_VALUE: {
    const lw_value *v = &L->vals[e->value->id];
    if (v->kind != LW_V_SCALAR || !v->v) {
      pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, e->loc, "'%%%s' is not a scalar here",
                      e->value->name ? e->value->name : "?");
      return NULL;
    }
    return v->v;
  }
  case PTO_EXPR_SYM:
    if (e->sym < 0 || e->sym >= L->p->nsyms || !L->syms[e->sym]) {
      pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, e->loc,
                      "dynamic symbol '%s' is not bound by any tensor parameter of @%s",
                      (e->sym >= 0 && e->sym < L->p->nsyms) ? L->p->syms[e->sym] : "?", L->k->name);
      return NULL;
    }
    return L->syms[e->sym];
  case PTO_EXPR_UNARY: {
    LLVMValueRef a = pto__lower_expr(L, e->a);
    if (!a) return NULL;
    if (e->op == PTO_EOP_NOT) return LLVMBuildXor(L->b, a, LLVMConstInt(L->t_i1, 1, 0), "");
    if (pto_dtype_is_float(e->a->dtype)) return LLVMBuildFNeg(L->b, a, "");
    return LLVMBuildSub(L->b, LLVMConstNull(LLVMTypeOf(a)), a, "");
  }
  case PTO_EXPR_CAST: {
    LLVMValueRef a = pto__lower_expr(L, e->a);
    if (!a) return NULL;
    return pto__lower_convert(L, a, e->a->dtype, dt);
  }
  case PTO_EXPR_BINARY: {
    if (e->op == PTO_EOP_AND || e->op == PTO_EOP_OR) return short_circuit(L, e);
    LLVMValueRef a = pto__lower_expr(L, e->lhs);
    LLVMValueRef b = a ? pto__lower_expr(L, e->rhs) : NULL;
    if (!b) return NULL;
    pto_dtype odt = e->lhs->dtype;
    switch (e->op) {
    case PTO_EOP_EQ:
    case PTO_EOP_NE:
    case PTO_EOP_LT:
    case PTO_EOP_LE:
    case PTO_EOP_GT:
    case PTO_EOP_GE: return pto__lower_compare(L, e->op, odt, a, b);
    case PTO_EOP_DIV:
    case PTO_EOP_MOD:
      if (!pto_dtype_is_float(odt)) {
        /* err_detail {the index of the statement holding it, 1}, as a tile divide's */
        LLVMValueRef z = LLVMBuildICmp(L->b, LLVMIntEQ, b, LLVMConstNull(LLVMTypeOf(b)), "divzero");
        int64_t at = e->rhs->kind == PTO_EXPR_INT && e->rhs->i != 0 ? 0 : expr_stmt(L, e);
        pto__lower_fail_if(L, z, PTO_KERNEL_ERR_DIV_ZERO, at ? pto__lower_i64(L, at - 1) : NULL,
                           at ? pto__lower_i64(L, 1) : NULL);
      }
      return pto__lower_binop(L, e->op == PTO_EOP_DIV ? LW_DIV : LW_MOD, odt, a, b, NULL);
    case PTO_EOP_ADD: return pto__lower_binop(L, LW_ADD, odt, a, b, NULL);
    case PTO_EOP_SUB: return pto__lower_binop(L, LW_SUB, odt, a, b, NULL);
    case PTO_EOP_MUL: return pto__lower_binop(L, LW_MUL, odt, a, b, NULL);
    case PTO_EOP_MIN: return pto__lower_binop(L, LW_MIN, odt, a, b, NULL);
    case PTO_EOP_MAX: return pto__lower_binop(L, LW_MAX, odt, a, b, NULL);
    default: break;
    }
    break;
  }
  }
  pto__lower_fail(L, PTO_STATUS_UNIMPLEMENTED, e->loc, "expression kind %d op %d not lowered",
                  (int)e->kind, (int)e->op);
  return NULL;
}

/* ---- statements --------------------------------------------------------------------------- */

static void lower_block(lw *L, const pto_ir_block *blk, const pto_ir_stmt **out_yield);
static void lower_stmts(lw *L, const pto_ir_block *blk, const pto_ir_stmt **out_yield);

LLVMValueRef pto__lower_value_base(lw *L, const pto_ir_value *v) {
  int g = pto__lower_group_find(L, L->group_of[v->id]);
  return g >= 0 ? L->group_base[g] : NULL;
}

static void def_scalar(lw *L, const pto_ir_value *v, LLVMValueRef x) {
  L->vals[v->id].kind = LW_V_SCALAR;
  L->vals[v->id].v = x;
  if (v->name && x && !LLVMIsConstant(x) && LLVMGetValueName2(x, &(size_t){0})[0] == 0)
    LLVMSetValueName2(x, v->name, strlen(v->name));
}

/* Tile values carried by a for/if: the buffer is the group's, the valid extents are phis. */
static void def_carried_tile(lw *L, const pto_ir_value *v, LLVMValueRef vr, LLVMValueRef vc) {
  lw_value *x = &L->vals[v->id];
  x->kind = LW_V_TILE;
  x->tile.base = pto__lower_value_base(L, v);
  int64_t r = 1, c = 1;
  pto__lower_static_int(v->type->dims[0], &r);
  pto__lower_static_int(v->type->dims[1], &c);
  x->tile.rows = r;
  x->tile.cols = c;
  x->tile.dt = v->type->dtype;
  x->tile.vr = vr;
  x->tile.vc = vc;
}

/* The value a yield/init expression gives: a scalar, or a tile (then *out_tile is set). */
static LLVMValueRef carried_operand(lw *L, const pto_ir_expr *e, const lw_tile **out_tile) {
  *out_tile = NULL;
  if (e->kind == PTO_EXPR_VALUE && L->vals[e->value->id].kind == LW_V_TILE) {
    *out_tile = &L->vals[e->value->id].tile;
    return NULL;
  }
  return pto__lower_expr(L, e);
}

static void copy_into(lw *L, LLVMValueRef dst, const lw_tile *src) {
  if (src->base && dst && src->base != dst) pto__lower_copy_tile(L, dst, src->base, src);
}

/* A kernel's tensor values are its tensor parameters and the aliases writes make of them, all
 * known at compile time: an if's or a for's tensor result (a branch that stores and yields the
 * store's alias, a loop carrying one) is the parameter every incoming value names. */
static int is_tensor_value(const pto_ir_value *v) {
  return v->type->kind == PTO_TYPE_TENSOR || v->type->kind == PTO_TYPE_DTENSOR;
}

/* The lw.tensors index e names, or -1 (and a failure naming what) when it is not a tensor. */
static int tensor_index(lw *L, const pto_ir_expr *e, const char *what) {
  if (e->kind == PTO_EXPR_VALUE && L->vals[e->value->id].kind == LW_V_TENSOR)
    return L->vals[e->value->id].tensor;
  pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, e->loc, "%s is not a tensor of the kernel", what);
  return -1;
}

/* Defines tensor result r as tensor ti (an alias of that parameter). */
static void def_tensor_alias(lw *L, const pto_ir_value *r, int ti) {
  L->vals[r->id].kind = LW_V_TENSOR;
  L->vals[r->id].tensor = ti;
}

/* The name of the kernel's ti-th tensor parameter (lw.tensors' order). */
static const char *tensor_name(lw *L, int ti) {
  for (int i = 0; i < L->k->nparams; i++)
    if (L->k->params[i].value->type->kind != PTO_TYPE_SCALAR && ti-- == 0)
      return L->k->params[i].value->name ? L->k->params[i].value->name : "?";
  return "?";
}

/* A tensor carried or yielded as `who` names tensor `want` only: else a failure naming both. */
static void check_same_tensor(lw *L, pto_loc loc, const char *who, const pto_ir_value *r, int got,
                              int want) {
  if (L->err || got == want) return;
  pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, loc,
                  "%s %%%s is %%%s on one path and %%%s on another: a kernel's tensors are its "
                  "parameters, fixed when it is compiled, so a tensor result names one parameter "
                  "(or its aliases) on every path",
                  who, r->name ? r->name : "?", tensor_name(L, want), tensor_name(L, got));
}

/* Evaluates the yield's values; copies tiles into the destination buffers dst[i] (the loop's
 * carried buffers or the if's results) and returns scalars / tile valid extents. */
static void lower_yield(lw *L, const pto_ir_stmt *y, int ypos, LLVMValueRef *dst,
                        pto_ir_value *const *dvals, int n, LLVMValueRef *out_scalar,
                        LLVMValueRef *out_vr, LLVMValueRef *out_vc) {
  const lw_tile *tiles[64] = {0};
  if (n > 64) {
    pto__lower_fail(L, PTO_STATUS_UNIMPLEMENTED, y->loc, "more than 64 yielded values");
    return;
  }
  for (int i = 0; i < n && i < y->ret.n; i++) {
    if (is_tensor_value(dvals[i])) { /* an alias: the caller resolves it (tensor_index) */
      out_scalar[i] = NULL;
      continue;
    }
    out_scalar[i] = carried_operand(L, y->ret.vals[i], &tiles[i]);
    if (out_scalar[i])
      out_scalar[i] =
          pto__lower_convert(L, out_scalar[i], y->ret.vals[i]->dtype, dvals[i]->type->dtype);
    if (tiles[i]) {
      out_vr[i] = tiles[i]->vr;
      out_vc[i] = tiles[i]->vc;
    }
  }
  if (L->err) return;
  int tmp = ypos >= 0 ? L->plan[ypos].yield_tmp : -1;
  if (tmp >= 0) {
    /* Stage every tile through its temporary first: the yield permutes carried buffers. */
    lw_tile staged[64];
    for (int i = 0; i < n; i++) {
      if (!tiles[i]) continue;
      staged[i] = *tiles[i];
      staged[i].base = L->group_base[pto__lower_group_find(L, tmp + i)];
      pto__lower_copy_tile(L, staged[i].base, tiles[i]->base, tiles[i]);
      tiles[i] = &staged[i];
    }
    for (int i = 0; i < n; i++)
      if (tiles[i]) copy_into(L, dst[i], tiles[i]);
    return;
  }
  for (int i = 0; i < n; i++)
    if (tiles[i]) copy_into(L, dst[i], tiles[i]);
}

/* iv + step for the next iteration. A step that would carry iv past INT64_MAX (below INT64_MIN)
 * gives hi instead, which fails the loop's condition: the loop runs exactly its iterations and
 * never wraps around. A step of 1 (-1) needs no check: iv < hi (iv > hi) leaves room for it. */
static LLVMValueRef step_iv(lw *L, LLVMValueRef iv, LLVMValueRef step, LLVMValueRef hi,
                            const pto_ir_expr *step_expr) {
  int64_t st = 1;
  int known = !step_expr || pto__lower_static_int(step_expr, &st) == 0;
  if (known && (st == 1 || st == -1)) return LLVMBuildAdd(L->b, iv, step, "");
  LLVMValueRef next = LLVMBuildAdd(L->b, iv, step, "");
  LLVMValueRef zero = pto__lower_i64(L, 0);
  LLVMValueRef up_wrapped = LLVMBuildICmp(L->b, LLVMIntSLT, next, iv, "");
  LLVMValueRef down_wrapped = LLVMBuildICmp(L->b, LLVMIntSGT, next, iv, "");
  LLVMValueRef wrapped =
      known ? (st > 0 ? up_wrapped : down_wrapped)
            : LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntSGT, step, zero, ""), up_wrapped,
                              down_wrapped, "");
  return LLVMBuildSelect(L->b, wrapped, hi, next, "");
}

static void lower_for(lw *L, const pto_ir_stmt *s) {
  int n = s->loop.niters;
  if (n > 64) {
    pto__lower_fail(L, PTO_STATUS_UNIMPLEMENTED, s->loc, "more than 64 loop-carried values");
    return;
  }
  LLVMValueRef lo = pto__lower_expr(L, s->loop.lo);
  LLVMValueRef hi = lo ? pto__lower_expr(L, s->loop.hi) : NULL;
  LLVMValueRef step =
      s->loop.step ? (hi ? pto__lower_expr(L, s->loop.step) : NULL) : pto__lower_i64(L, 1);
  if (!step) return;
  int64_t st;
  /* a runtime step of zero fails the launch, as the interpreter reports it */
  if (s->loop.step && pto__lower_static_int(s->loop.step, &st) != 0)
    pto__lower_fail_if(L, LLVMBuildICmp(L->b, LLVMIntEQ, step, pto__lower_i64(L, 0), "step0"),
                       PTO_KERNEL_ERR_LOOP_STEP, NULL, NULL);
  LLVMValueRef init_s[64], init_vr[64], init_vc[64], dst[64];
  int init_t[64]; /* a carried tensor's index, else -1 */
  for (int i = 0; i < n; i++) {
    const lw_tile *t;
    init_t[i] = -1;
    dst[i] = init_s[i] = NULL;
    if (is_tensor_value(s->loop.iters[i])) {
      init_t[i] = tensor_index(L, s->loop.inits[i], "a loop-carried tensor's initial value");
      if (L->err) return;
      continue;
    }
    init_s[i] = carried_operand(L, s->loop.inits[i], &t);
    if (L->err) return;
    if (init_s[i])
      init_s[i] =
          pto__lower_convert(L, init_s[i], s->loop.inits[i]->dtype, s->loop.iters[i]->type->dtype);
    dst[i] = NULL;
    if (t) {
      dst[i] = pto__lower_value_base(L, s->loop.iters[i]);
      copy_into(L, dst[i], t);
      init_vr[i] = t->vr;
      init_vc[i] = t->vc;
    }
  }
  lw_defer defer_store = {0}, *defer = NULL; /* the body's deferred store, if the plan has one */
  int fpos = L->cur_pos - 1;
  if (L->plan[fpos].defer_at >= 0) pto__lower_defer_begin(L, defer = &defer_store, fpos);
  /* A k loop of matmul_acc steps may run as one K-blocked product (lower_kloop.c): that path
   * comes to the header with every iteration done. */
  LLVMBasicBlockRef fused = n == 1 && dst[0] ? pto__lower_kloop(L, s, dst[0], lo, hi) : NULL;
  if (L->err) return;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(L->b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(L->c, L->fn, "for.head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(L->c, L->fn, "for.body");
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(L->c, L->fn, "for.exit");
  LLVMBuildBr(L->b, head);
  if (fused) {
    LLVMPositionBuilderAtEnd(L->b, fused);
    LLVMBuildBr(L->b, head);
  }
  LLVMPositionBuilderAtEnd(L->b, head);
  LLVMValueRef iv = LLVMBuildPhi(L->b, L->t_i64, s->loop.iv->name ? s->loop.iv->name : "iv");
  LLVMValueRef phi_s[64], phi_vr[64], phi_vc[64];
  for (int i = 0; i < n; i++) {
    const pto_ir_value *it = s->loop.iters[i];
    phi_s[i] = phi_vr[i] = phi_vc[i] = NULL;
    if (init_t[i] >= 0) {
      def_tensor_alias(L, it, init_t[i]);
    } else if (dst[i]) {
      phi_vr[i] = LLVMBuildPhi(L->b, L->t_i64, "vr");
      phi_vc[i] = LLVMBuildPhi(L->b, L->t_i64, "vc");
      def_carried_tile(L, it, phi_vr[i], phi_vc[i]);
    } else {
      phi_s[i] =
          LLVMBuildPhi(L->b, pto__lower_compute_type(L, it->type->dtype), it->name ? it->name : "");
      L->vals[it->id].kind = LW_V_SCALAR;
      L->vals[it->id].v = phi_s[i];
    }
  }
  LLVMValueRef cond;
  if (s->loop.step && pto__lower_static_int(s->loop.step, &st) == 0 && st < 0) {
    cond = LLVMBuildICmp(L->b, LLVMIntSGT, iv, hi, "");
  } else if (!s->loop.step || pto__lower_static_int(s->loop.step, &st) == 0) {
    cond = LLVMBuildICmp(L->b, LLVMIntSLT, iv, hi, "");
  } else {
    /* A runtime step counts down when negative (as the interpreter does); a zero one failed the
     * launch above. */
    LLVMValueRef up = LLVMBuildICmp(L->b, LLVMIntSGT, step, pto__lower_i64(L, 0), "");
    LLVMValueRef down = LLVMBuildICmp(L->b, LLVMIntSLT, step, pto__lower_i64(L, 0), "");
    cond = LLVMBuildSelect(
        L->b, up, LLVMBuildICmp(L->b, LLVMIntSLT, iv, hi, ""),
        LLVMBuildAnd(L->b, down, LLVMBuildICmp(L->b, LLVMIntSGT, iv, hi, ""), ""), "");
  }
  LLVMBuildCondBr(L->b, cond, body, exit);
  LLVMPositionBuilderAtEnd(L->b, body);
  L->vals[s->loop.iv->id].kind = LW_V_SCALAR;
  L->vals[s->loop.iv->id].v = iv;
  const pto_ir_stmt *y = NULL;
  /* the body's tile.loads note their next windows for a matmul in it (lw.next) */
  lw_loop_ctx outer = L->loop;
  L->loop = (lw_loop_ctx){.body = &s->loop.body, .iv = s->loop.iv, .step = step, .defer = defer};
  lower_block(L, &s->loop.body, &y);
  L->loop = outer;
  if (L->err) return;
  LLVMValueRef y_s[64], y_vr[64], y_vc[64];
  if (n > 0) {
    if (!y) {
      pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc, "for with iter values needs a yield");
      return;
    }
    lower_yield(L, y, L->cur_pos - 1, dst, s->loop.iters, n, y_s, y_vr, y_vc);
    for (int i = 0; i < n && i < y->ret.n && !L->err; i++)
      if (init_t[i] >= 0)
        check_same_tensor(L, y->loc, "loop-carried tensor", s->loop.iters[i],
                          tensor_index(L, y->ret.vals[i], "a yielded loop-carried tensor"),
                          init_t[i]);
    if (L->err) return;
  }
  LLVMValueRef next = step_iv(L, iv, step, hi, s->loop.step);
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(L->b);
  LLVMBuildBr(L->b, head);
  /* the fused product's way in: past the last iteration, the valid extents the init's (a
   * matmul_acc keeps its accumulator's) */
  LLVMBasicBlockRef blocks[3] = {pre, latch, fused};
  unsigned nin = fused ? 3 : 2;
  LLVMValueRef ivs[3] = {lo, next, hi};
  LLVMAddIncoming(iv, ivs, blocks, nin);
  for (int i = 0; i < n; i++) {
    if (init_t[i] >= 0) continue;
    if (dst[i]) {
      LLVMValueRef a[3] = {init_vr[i], y_vr[i], init_vr[i]};
      LLVMValueRef c2[3] = {init_vc[i], y_vc[i], init_vc[i]};
      LLVMAddIncoming(phi_vr[i], a, blocks, nin);
      LLVMAddIncoming(phi_vc[i], c2, blocks, nin);
    } else {
      LLVMValueRef a[2] = {init_s[i], y_s[i]};
      LLVMAddIncoming(phi_s[i], a, blocks, 2);
    }
  }
  LLVMPositionBuilderAtEnd(L->b, exit);
  if (defer) pto__lower_defer_finish(L, defer);
  for (int i = 0; i < s->nresults && i < n; i++) {
    if (init_t[i] >= 0)
      def_tensor_alias(L, s->results[i], init_t[i]);
    else if (dst[i])
      def_carried_tile(L, s->results[i], phi_vr[i], phi_vc[i]);
    else
      def_scalar(L, s->results[i], phi_s[i]);
  }
}

static void lower_if(lw *L, const pto_ir_stmt *s) {
  int n = s->nresults;
  if (n > 64) {
    pto__lower_fail(L, PTO_STATUS_UNIMPLEMENTED, s->loc, "more than 64 if results");
    return;
  }
  LLVMValueRef cond = pto__lower_expr(L, s->branch.cond);
  if (!cond) return;
  LLVMBasicBlockRef then_bb = LLVMAppendBasicBlockInContext(L->c, L->fn, "if.then");
  LLVMBasicBlockRef else_bb = LLVMAppendBasicBlockInContext(L->c, L->fn, "if.else");
  LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(L->c, L->fn, "if.end");
  LLVMBuildCondBr(L->b, cond, then_bb, else_bb);
  LLVMValueRef dst[64];
  for (int i = 0; i < n; i++)
    dst[i] =
        s->results[i]->type->kind == PTO_TYPE_TILE ? pto__lower_value_base(L, s->results[i]) : NULL;
  LLVMValueRef vs[2][64], vr[2][64], vc[2][64];
  int tv[2][64]; /* a tensor result's index on each side */
  LLVMBasicBlockRef ends[2];
  for (int side = 0; side < 2; side++) {
    LLVMPositionBuilderAtEnd(L->b, side ? else_bb : then_bb);
    const pto_ir_stmt *y = NULL;
    lower_block(L, side ? &s->branch.else_body : &s->branch.then_body, &y);
    if (L->err) return;
    if (n > 0) {
      if (!y) {
        pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc, "if with results needs yields");
        return;
      }
      lower_yield(L, y, L->cur_pos - 1, dst, s->results, n, vs[side], vr[side], vc[side]);
      for (int i = 0; i < n && i < y->ret.n && !L->err; i++)
        if (is_tensor_value(s->results[i]))
          tv[side][i] = tensor_index(L, y->ret.vals[i], "a yielded tensor");
      if (L->err) return;
    }
    ends[side] = LLVMGetInsertBlock(L->b);
    LLVMBuildBr(L->b, merge);
  }
  LLVMPositionBuilderAtEnd(L->b, merge);
  for (int i = 0; i < n; i++) {
    const pto_ir_value *r = s->results[i];
    if (is_tensor_value(r)) {
      check_same_tensor(L, s->loc, "if result", r, tv[1][i], tv[0][i]);
      if (L->err) return;
      def_tensor_alias(L, r, tv[0][i]);
    } else if (dst[i]) {
      LLVMValueRef pr = LLVMBuildPhi(L->b, L->t_i64, "vr");
      LLVMValueRef pc = LLVMBuildPhi(L->b, L->t_i64, "vc");
      LLVMValueRef a[2] = {vr[0][i], vr[1][i]}, c2[2] = {vc[0][i], vc[1][i]};
      LLVMAddIncoming(pr, a, ends, 2);
      LLVMAddIncoming(pc, c2, ends, 2);
      def_carried_tile(L, r, pr, pc);
    } else {
      LLVMValueRef ph =
          LLVMBuildPhi(L->b, pto__lower_compute_type(L, r->type->dtype), r->name ? r->name : "");
      LLVMValueRef a[2] = {vs[0][i], vs[1][i]};
      LLVMAddIncoming(ph, a, ends, 2);
      L->vals[r->id].kind = LW_V_SCALAR;
      L->vals[r->id].v = ph;
    }
  }
}

/* Lowers the statements of blk; a final yield is numbered but left to the caller. */
static void lower_block(lw *L, const pto_ir_block *blk, const pto_ir_stmt **out_yield) {
  const pto_ir_block *outer = L->cur_blk;
  L->cur_blk = blk;
  lower_stmts(L, blk, out_yield);
  L->cur_blk = outer;
}

static void lower_stmts(lw *L, const pto_ir_block *blk, const pto_ir_stmt **out_yield) {
  for (int i = 0; i < blk->n && !L->err; i++) {
    const pto_ir_stmt *s = blk->stmts[i];
    int me = L->cur_pos;
    int fuse = L->plan[me].fuse_len, stream = L->plan[me].stream_len;
    if (s->kind == PTO_STMT_OP && stream > 1 && i + stream <= blk->n) {
      pto__lower_streamed(L, &blk->stmts[i], L->plan[me].stream_loads, stream);
      i += stream - 1;
      continue;
    }
    if (s->kind == PTO_STMT_OP && fuse > 1 && i + fuse <= blk->n) {
      L->cur_pos += fuse;
      pto__lower_fused(L, &blk->stmts[i], fuse);
      i += fuse - 1;
      continue;
    }
    L->cur_pos++;
    switch (s->kind) {
    case PTO_STMT_ASSIGN: {
      const pto_ir_value *r = s->nresults == 1 ? s->results[0] : NULL;
      if (!r) {
        pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc, "assignment without one result");
        break;
      }
      if (r->type->kind != PTO_TYPE_SCALAR) {
        if (s->expr->kind != PTO_EXPR_VALUE) {
          pto__lower_fail(L, PTO_STATUS_UNIMPLEMENTED, s->loc, "non-scalar assignment");
          break;
        }
        L->vals[r->id] = L->vals[s->expr->value->id];
        break;
      }
      LLVMValueRef v = pto__lower_expr(L, s->expr);
      if (v) def_scalar(L, r, pto__lower_convert(L, v, s->expr->dtype, r->type->dtype));
      break;
    }
    case PTO_STMT_OP: pto__lower_op(L, s); break;
    case PTO_STMT_FOR: lower_for(L, s); break;
    case PTO_STMT_IF: lower_if(L, s); break;
    case PTO_STMT_YIELD:
      if (out_yield) *out_yield = s;
      break;
    case PTO_STMT_RETURN:
      LLVMBuildRet(L->b, LLVMConstInt(L->t_i32, PTO_KERNEL_OK, 0));
      /* Anything after a return is unreachable; give it a block to land in. */
      LLVMPositionBuilderAtEnd(L->b, LLVMAppendBasicBlockInContext(L->c, L->fn, "after.return"));
      break;
    case PTO_STMT_CALL:
      pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc, "a kernel cannot call a function");
      break;
    case PTO_STMT_INCORE:
      pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, s->loc, "incore scope inside a kernel");
      break;
    }
  }
}

/* ---- the function ------------------------------------------------------------------------- */

static LLVMValueRef load_field(lw *L, LLVMTypeRef sty, LLVMValueRef base, unsigned field, int index,
                               LLVMTypeRef ty, const char *name) {
  LLVMValueRef idx[3] = {LLVMConstInt(L->t_i32, 0, 0), LLVMConstInt(L->t_i32, field, 0),
                         LLVMConstInt(L->t_i32, (uint64_t)(index < 0 ? 0 : index), 0)};
  LLVMValueRef p = LLVMBuildInBoundsGEP2(L->b, sty, base, idx, index < 0 ? 2 : 3, "");
  LLVMValueRef v = LLVMBuildLoad2(L->b, ty, p, name);
  return v;
}

LLVMValueRef pto__lower_stream_stores(lw *L) {
  if (!L->stream_stores) {
    /* Once per kernel, at the top of its entry block: no loop reloads it. */
    LLVMBuilderRef at = L->b;
    L->b = LLVMCreateBuilderInContext(L->c);
    LLVMPositionBuilderBefore(L->b, LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(L->fn)));
    LLVMValueRef flags = load_field(L, L->t_ctx, L->arg_ctx, 9, -1, L->t_i32, "flags");
    LLVMValueRef bit =
        LLVMBuildAnd(L->b, flags, LLVMConstInt(L->t_i32, PTO_CORE_STREAM_STORES, 0), "");
    L->stream_stores =
        LLVMBuildICmp(L->b, LLVMIntNE, bit, LLVMConstInt(L->t_i32, 0, 0), "stream_stores");
    LLVMDisposeBuilder(L->b);
    L->b = at;
  }
  return L->stream_stores;
}

static void decode_scalar(lw *L, const pto_ir_param *prm, int slot) {
  const pto_ir_value *v = prm->value;
  pto_dtype dt = v->type->dtype;
  if (prm->bind == PTO_BIND_LITERAL && prm->literal && L->is_entry) {
    LLVMValueRef x = pto__lower_expr(L, prm->literal);
    if (x) def_scalar(L, v, pto__lower_convert(L, x, prm->literal->dtype, dt));
    return;
  }
  LLVMValueRef idx = pto__lower_i64(L, slot);
  LLVMValueRef p = LLVMBuildInBoundsGEP2(L->b, L->t_i64, L->arg_scalars, &idx, 1, "");
  LLVMValueRef raw = LLVMBuildLoad2(L->b, L->t_i64, p, "");
  LLVMValueRef x;
  switch (dt) {
  case PTO_DTYPE_BOOL: x = LLVMBuildICmp(L->b, LLVMIntNE, raw, pto__lower_i64(L, 0), ""); break;
  case PTO_DTYPE_F32:
    x = LLVMBuildBitCast(L->b, LLVMBuildTrunc(L->b, raw, L->t_i32, ""), L->t_f32, "");
    break;
  case PTO_DTYPE_F64: x = LLVMBuildBitCast(L->b, raw, L->t_f64, ""); break;
  case PTO_DTYPE_F16:
    x = LLVMBuildBitCast(L->b, LLVMBuildTrunc(L->b, raw, L->t_i16, ""), L->t_half, "");
    x = pto__lower_to_compute(L, dt, x);
    break;
  case PTO_DTYPE_BF16:
    x = pto__lower_to_compute(L, dt, LLVMBuildTrunc(L->b, raw, L->t_i16, ""));
    break;
  default: {
    LLVMTypeRef t = pto__lower_compute_type(L, dt);
    x = LLVMGetIntTypeWidth(t) < 64 ? LLVMBuildTrunc(L->b, raw, t, "") : raw;
  }
  }
  def_scalar(L, v, x);
}

static void bind_tensor(lw *L, const pto_ir_param *prm, int ti) {
  const pto_ir_value *v = prm->value;
  const pto_ir_type *t = v->type;
  /* A dtensor is this rank's slice of a comm window: its descriptor is a tensor's. */
  if (t->kind != PTO_TYPE_TENSOR && t->kind != PTO_TYPE_DTENSOR) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, v->loc, "parameter '%%%s' is not a tensor",
                    v->name);
    return;
  }
  if (t->rank < 1 || t->rank > PTO_MAX_RANK) {
    pto__lower_fail(L, PTO_STATUS_INVALID_ARGUMENT, v->loc,
                    "tensor parameter '%%%s' has no shape: specialize the program first", v->name);
    return;
  }
  lw_tensor *T = &L->tensors[ti];
  if (ti >= L->ntensors) L->ntensors = ti + 1;
  T->rank = t->rank;
  T->dt = t->dtype;
  LLVMValueRef idx = pto__lower_i64(L, ti);
  LLVMValueRef desc = LLVMBuildInBoundsGEP2(L->b, L->t_desc, L->arg_tensors, &idx, 1, "");
  char name[96];
  snprintf(name, sizeof name, "%s.data", v->name ? v->name : "t");
  T->data = load_field(L, L->t_desc, desc, 0, -1, L->t_ptr, name);
  for (int d = 0; d < t->rank; d++) {
    snprintf(name, sizeof name, "%s.stride%d", v->name ? v->name : "t", d);
    T->stride[d] = load_field(L, L->t_desc, desc, 2, d, L->t_i64, name);
    int64_t ext;
    if (pto__lower_static_int(t->dims[d], &ext) == 0) {
      T->shape[d] = pto__lower_i64(L, ext);
      continue;
    }
    snprintf(name, sizeof name, "%s.dim%d", v->name ? v->name : "t", d);
    LLVMValueRef x = load_field(L, L->t_desc, desc, 1, d, L->t_i64, name);
    T->shape[d] = x;
    const pto_ir_expr *e = t->dims[d];
    if (e && e->kind == PTO_EXPR_SYM && e->sym >= 0 && e->sym < L->p->nsyms) {
      if (!L->syms[e->sym]) {
        L->syms[e->sym] = x;
      } else {
        LLVMValueRef ne = LLVMBuildICmp(L->b, LLVMIntNE, L->syms[e->sym], x, "");
        pto__lower_fail_if(L, ne, PTO_KERNEL_ERR_DIM_MISMATCH, L->syms[e->sym], x);
      }
    }
  }
  L->vals[v->id].kind = LW_V_TENSOR;
  L->vals[v->id].tensor = ti;
}

static void build_types(lw *L) {
  LLVMContextRef c = L->c;
  L->t_void = LLVMVoidTypeInContext(c);
  L->t_i1 = LLVMInt1TypeInContext(c);
  L->t_i8 = LLVMInt8TypeInContext(c);
  L->t_i16 = LLVMInt16TypeInContext(c);
  L->t_i32 = LLVMInt32TypeInContext(c);
  L->t_i64 = LLVMInt64TypeInContext(c);
  L->t_half = LLVMHalfTypeInContext(c);
  L->t_f32 = LLVMFloatTypeInContext(c);
  L->t_f64 = LLVMDoubleTypeInContext(c);
  L->t_ptr = LLVMPointerTypeInContext(c, 0);
  /* pto_kernel_tensor and pto_core_ctx of kernel_abi.h */
  LLVMTypeRef dims = LLVMArrayType2(L->t_i64, PTO_MAX_RANK);
  L->t_desc = LLVMStructCreateNamed(c, "pto_kernel_tensor");
  LLVMTypeRef df[5] = {L->t_ptr, dims, dims, L->t_i32, L->t_i32};
  LLVMStructSetBody(L->t_desc, df, 5, 0);
  L->t_ctx = LLVMStructCreateNamed(c, "pto_core_ctx");
  LLVMTypeRef cf[10] = {L->t_i32, L->t_i32, L->t_ptr, L->t_i64, LLVMArrayType2(L->t_i64, 2),
                        L->t_ptr, L->t_i32, L->t_i32, L->t_i32, L->t_i32};
  LLVMStructSetBody(L->t_ctx, cf, 10, 0);
  /* pto_dist_ctx of dist_abi.h: version, size, rank, nranks, impl, then the functions. */
  L->t_dist = LLVMStructCreateNamed(c, "pto_dist_ctx");
  LLVMTypeRef xf[11] = {L->t_i32, L->t_i32, L->t_i32, L->t_i32, L->t_ptr, L->t_ptr,
                        L->t_ptr, L->t_ptr, L->t_ptr, L->t_ptr, L->t_ptr};
  LLVMStructSetBody(L->t_dist, xf, 11, 0);
}

static void build_function(lw *L) {
  LLVMTypeRef params[3] = {L->t_ptr, L->t_ptr, L->t_ptr};
  LLVMTypeRef fty = LLVMFunctionType(L->t_i32, params, 3, 0);
  /* The whole name, however long: the manifest records "pto_kernel_<name>" and the loader looks
   * up exactly that (a name cut to 299 bytes was a kernel the loader could not find). */
  size_t n = strlen(L->k->name) + sizeof "pto_kernel_";
  char small[300], *name = n <= sizeof small ? small : pto_malloc(n);
  if (!name) { /* the function is made (what follows needs one), and the lowering fails */
    if (!L->err)
      L->err = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory lowering a kernel");
    name = small;
    n = sizeof small;
  }
  snprintf(name, n, "pto_kernel_%s", L->k->name);
  L->fn = LLVMAddFunction(L->m, name, fty);
  if (name != small) free(name);
  LLVMSetLinkage(L->fn, LLVMExternalLinkage);
  LLVMAddAttributeAtIndex(L->fn, LLVMAttributeFunctionIndex, pto__lower_enum_attr(L, "nounwind"));
  pto__lower_x86_prefer_wide(L);
  const char *pnames[3] = {"tensors", "scalars", "ctx"};
  for (unsigned i = 0; i < 3; i++) {
    LLVMValueRef a = LLVMGetParam(L->fn, i);
    LLVMSetValueName2(a, pnames[i], strlen(pnames[i]));
    LLVMAddAttributeAtIndex(L->fn, i + 1, pto__lower_enum_attr(L, "noalias"));
    LLVMAddAttributeAtIndex(L->fn, i + 1, pto__lower_enum_attr(L, "nocapture"));
    if (i < 2) LLVMAddAttributeAtIndex(L->fn, i + 1, pto__lower_enum_attr(L, "readonly"));
  }
  L->arg_tensors = LLVMGetParam(L->fn, 0);
  L->arg_scalars = LLVMGetParam(L->fn, 1);
  L->arg_ctx = LLVMGetParam(L->fn, 2);
}

static void build_prologue(lw *L) {
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(L->c, L->fn, "entry");
  LLVMPositionBuilderAtEnd(L->b, entry);
  L->divzero = LLVMBuildAlloca(L->b, L->t_i64, "divzero");
  LLVMBuildStore(L->b, LLVMConstInt(L->t_i64, 0, 0), L->divzero);
  L->divzero_op = -1;
  if (L->footprint > 0) {
    LLVMValueRef have = load_field(L, L->t_ctx, L->arg_ctx, 3, -1, L->t_i64, "scratch_size");
    LLVMValueRef need = pto__lower_i64(L, L->footprint);
    LLVMValueRef small = LLVMBuildICmp(L->b, LLVMIntULT, have, need, "");
    pto__lower_fail_if(L, small, PTO_KERNEL_ERR_SCRATCH, need, have);
    LLVMValueRef sp = load_field(L, L->t_ctx, L->arg_ctx, 2, -1, L->t_ptr, "scratch");
    /* The arena is 64-byte aligned (kernel_abi.h): say so, so tile accesses are aligned. */
    LLVMMetadataRef a64 = LLVMValueAsMetadata(pto__lower_i64(L, 64));
    LLVMSetMetadata(sp, LLVMGetMDKindIDInContext(L->c, "align", 5),
                    LLVMMetadataAsValue(L->c, LLVMMDNodeInContext2(L->c, &a64, 1)));
    LLVMSetMetadata(sp, LLVMGetMDKindIDInContext(L->c, "nonnull", 7),
                    LLVMMetadataAsValue(L->c, LLVMMDNodeInContext2(L->c, NULL, 0)));
    L->scratch = sp;
    for (int g = 0; g < L->ngroups; g++) {
      if (pto__lower_group_find(L, g) != g) continue;
      LLVMValueRef off = pto__lower_i64(L, L->groups[g].offset);
      char name[32];
      snprintf(name, sizeof name, "buf%d", g);
      L->group_base[g] = LLVMBuildInBoundsGEP2(L->b, L->t_i8, sp, &off, 1, name);
    }
  }
  int ti = 0, si = 0;
  for (int i = 0; i < L->k->nparams && !L->err; i++) {
    const pto_ir_param *prm = &L->k->params[i];
    if (prm->value->type->kind == PTO_TYPE_SCALAR)
      decode_scalar(L, prm, si++);
    else
      bind_tensor(L, prm, ti++);
  }
}

pto_status pto__lower_build_kernel(LLVMContextRef ctx, LLVMModuleRef mod, const pto_ir_program *p,
                                   const pto_ir_func *k, uint64_t *out_scratch_bytes) {
  lw L;
  memset(&L, 0, sizeof L);
  L.p = p;
  L.k = k;
  L.c = ctx;
  L.m = mod;
  /* A specialized scalar's literal wins only in the entry function (as in the interpreter); a
   * called kernel gets what its call passes. A program without a unique entry: the kernel is
   * being compiled as one. */
  pto_ir_func *entry = NULL;
  pto_status es = pto_ir_program_entry(p, NULL, &entry);
  L.is_entry = es || entry == k;
  pto_status_free(es);
  pto_status s = pto__lower_plan(&L);
  if (s) {
    pto__lower_plan_free(&L);
    return s;
  }
  int nv = k->nvalues > 0 ? k->nvalues : 1;
  L.vals = pto_calloc((size_t)nv, sizeof *L.vals);
  L.syms = pto_calloc((size_t)(p->nsyms > 0 ? p->nsyms : 1), sizeof *L.syms);
  L.tensors = pto_calloc((size_t)(k->nparams > 0 ? k->nparams : 1), sizeof *L.tensors);
  L.group_base = pto_calloc((size_t)(L.ngroups > 0 ? L.ngroups : 1), sizeof *L.group_base);
  if (!L.vals || !L.syms || !L.tensors || !L.group_base) {
    s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory lowering @%s", k->name);
  } else {
    L.b = LLVMCreateBuilderInContext(ctx);
    build_types(&L);
    init_alias_scopes(&L);
    build_function(&L);
    build_prologue(&L);
    if (!L.err) lower_block(&L, &k->body, NULL);
    if (!L.err) {
      /* A body without a return (or the block after one) falls off the end: return 0. */
      LLVMBasicBlockRef cur = LLVMGetInsertBlock(L.b);
      if (!LLVMGetBasicBlockTerminator(cur)) LLVMBuildRet(L.b, LLVMConstInt(L.t_i32, 0, 0));
    }
    LLVMDisposeBuilder(L.b);
    s = L.err;
  }
  if (!s && out_scratch_bytes) *out_scratch_bytes = (uint64_t)L.footprint;
  free(L.vals);
  free(L.syms);
  free(L.tensors);
  free(L.group_base);
  pto__lower_plan_free(&L);
  return s;
}
