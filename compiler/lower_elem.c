/* The second set's elementwise functions (docs/language.md, "Ops (second set)")
 * on compute values: what pto__lower_binop hands over for the lw_bin values past the first set's.
 * Each is the interpreter's definition (ir/interp.c, elem_binary) in straight-line IR on scalars
 * or vectors, so the fused loops that call it vectorize as the first set's do. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lower_kernel_internal.h"
#include "pto/mathf.h"

static pto_expr_op cmp_expr_op(lw_bin op) {
  switch (op) {
  case LW_EQ: return PTO_EOP_EQ;
  case LW_NE: return PTO_EOP_NE;
  case LW_LT: return PTO_EOP_LT;
  case LW_LE: return PTO_EOP_LE;
  case LW_GT: return PTO_EOP_GT;
  case LW_GE: return PTO_EOP_GE;
  default: return PTO_EOP_NONE;
  }
}

/* A constant of a's type (scalar or vector) with every lane v. */
static LLVMValueRef int_like(LLVMValueRef a, uint64_t v) {
  LLVMTypeRef t = LLVMTypeOf(a);
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return LLVMConstInt(t, v, 0);
  unsigned n = LLVMGetVectorSize(t);
  LLVMValueRef els[64];
  for (unsigned i = 0; i < n && i < 64; i++)
    els[i] = LLVMConstInt(LLVMGetElementType(t), v, 0);
  return LLVMConstVector(els, n < 64 ? n : 64);
}

/* Shifts: LLVM's are poison for a count outside [0, bits), so the count is made safe first and
 * the result of such a count chosen after (0, or the sign fill of an arithmetic shift right). */
static LLVMValueRef shift(lw *L, int left, pto_dtype dt, LLVMValueRef a, LLVMValueRef n) {
  LLVMBuilderRef b = L->b;
  unsigned bits = (unsigned)pto_dtype_size(dt) * 8;
  LLVMValueRef in = LLVMBuildICmp(b, LLVMIntULT, n, int_like(n, bits), ""); /* negatives too */
  LLVMValueRef safe = LLVMBuildSelect(b, in, n, LLVMConstNull(LLVMTypeOf(n)), "");
  if (left)
    return LLVMBuildSelect(b, in, LLVMBuildShl(b, a, safe, ""), LLVMConstNull(LLVMTypeOf(a)), "");
  if (!pto_dtype_is_signed(dt))
    return LLVMBuildSelect(b, in, LLVMBuildLShr(b, a, safe, ""), LLVMConstNull(LLVMTypeOf(a)), "");
  LLVMValueRef fill = LLVMBuildAShr(b, a, int_like(a, bits - 1), "");
  return LLVMBuildSelect(b, in, LLVMBuildAShr(b, a, safe, ""), fill, "");
}

LLVMValueRef pto__lower_elem_binop(lw *L, lw_bin op, pto_dtype dt, LLVMValueRef a, LLVMValueRef b) {
  LLVMBuilderRef bd = L->b;
  int fl = pto_dtype_is_float(dt);
  pto_expr_op cmp = cmp_expr_op(op);
  if (cmp != PTO_EOP_NONE) return pto__lower_compare(L, cmp, dt, a, b);
  switch (op) {
  case LW_AND: return fl ? NULL : LLVMBuildAnd(bd, a, b, "");
  case LW_OR: return fl ? NULL : LLVMBuildOr(bd, a, b, "");
  case LW_XOR: return fl ? NULL : LLVMBuildXor(bd, a, b, "");
  case LW_SHL:
  case LW_SHR: return fl ? NULL : shift(L, op == LW_SHL, dt, a, b);
  case LW_LRELU: {
    LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(a));
    if (fl) {
      LLVMValueRef ge = LLVMBuildFCmp(bd, LLVMRealOGE, a, zero, "");
      return LLVMBuildSelect(bd, ge, a, pto__lower_round(L, dt, LLVMBuildFMul(bd, a, b, "")), "");
    }
    if (!pto_dtype_is_signed(dt)) return a;
    LLVMValueRef ge = LLVMBuildICmp(bd, LLVMIntSGE, a, zero, "");
    return LLVMBuildSelect(bd, ge, a, LLVMBuildMul(bd, a, b, ""), "");
  }
  case LW_FMOD: return fl ? pto__lower_round(L, dt, LLVMBuildFRem(bd, a, b, "")) : NULL;
  case LW_EXPDIF: {
    if (!fl) return NULL;
    LLVMValueRef d = pto__lower_binop(L, LW_SUB, dt, a, b, NULL); /* rounded as tile.sub */
    return pto__lower_unop(L, PTO_FN_EXP, dt, d);
  }
  default: return NULL;
  }
}

int pto__lower_stmt_bin(const pto_ir_stmt *s, lw_bin *out) {
  const pto_op_info *info = pto_op_info_get(s->op.opc);
  switch (info ? info->fn : PTO_FN_NONE) {
  case PTO_FN_ADD: *out = LW_ADD; return 1;
  case PTO_FN_SUB: *out = LW_SUB; return 1;
  case PTO_FN_MUL: *out = LW_MUL; return 1;
  case PTO_FN_DIV: *out = LW_DIV; return 1;
  case PTO_FN_MAX: *out = LW_MAX; return 1;
  case PTO_FN_MIN: *out = LW_MIN; return 1;
  case PTO_FN_REM: *out = LW_MOD; return 1;
  case PTO_FN_AND: *out = LW_AND; return 1;
  case PTO_FN_OR: *out = LW_OR; return 1;
  case PTO_FN_XOR: *out = LW_XOR; return 1;
  case PTO_FN_SHL: *out = LW_SHL; return 1;
  case PTO_FN_SHR: *out = LW_SHR; return 1;
  case PTO_FN_LRELU: *out = LW_LRELU; return 1;
  case PTO_FN_FMOD: *out = LW_FMOD; return 1;
  case PTO_FN_EXPDIF: *out = LW_EXPDIF; return 1;
  case PTO_FN_CMP: {
    static const char *const words[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    const pto_ir_arg *k = pto__lower_kwarg(s, "cmp");
    for (int i = 0; k && k->kind == PTO_ARG_WORD && i < 6; i++)
      if (strcmp(k->str, words[i]) == 0) {
        *out = (lw_bin)(LW_EQ + i);
        return 1;
      }
    return 0;
  }
  default: return 0;
  }
}

/* ---- sin/cos: pto/mathf.h's algorithm, operation for operation as base/mathf.c ---- */

/* Type el in x's shape (scalar, or a vector of as many lanes). */
static LLVMTypeRef shaped(LLVMValueRef like_x, LLVMTypeRef el) {
  LLVMTypeRef t = LLVMTypeOf(like_x);
  return LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMVectorType(el, LLVMGetVectorSize(t)) : el;
}

/* The constant c (a scalar) in x's shape. */
static LLVMValueRef splat(LLVMValueRef like_x, LLVMValueRef c) {
  LLVMTypeRef t = LLVMTypeOf(like_x);
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return c;
  unsigned n = LLVMGetVectorSize(t);
  LLVMValueRef els[64];
  for (unsigned i = 0; i < n && i < 64; i++)
    els[i] = c;
  return LLVMConstVector(els, n < 64 ? n : 64);
}

static LLVMValueRef fma_of(lw *L, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef args[3] = {a, b, c};
  return pto__lower_call_intrinsic(L, "llvm.fma", &t, 1, args, 3, "");
}

/* The module's internal constant table of P(E) (pto/mathf.h, pto_mathf_2opi_window: 3 i32 a
 * row, E from PTO_MATHF_BIG_EMIN), made on the first sin or cos. */
static LLVMValueRef sincos_table(lw *L) {
  LLVMValueRef tab = LLVMGetNamedGlobal(L->m, "pto.sincosf.2opi");
  if (tab) return tab;
  enum { N = PTO_MATHF_BIG_ECOUNT * 3 };
  LLVMValueRef words[N];
  for (int e = 0; e < PTO_MATHF_BIG_ECOUNT; e++) {
    uint32_t w[3];
    pto_mathf_2opi_window(e + PTO_MATHF_BIG_EMIN, w);
    for (int i = 0; i < 3; i++)
      words[3 * e + i] = LLVMConstInt(L->t_i32, w[i], 0);
  }
  tab = LLVMAddGlobal(L->m, LLVMArrayType(L->t_i32, N), "pto.sincosf.2opi");
  LLVMSetInitializer(tab, LLVMConstArray(L->t_i32, words, N));
  LLVMSetGlobalConstant(tab, 1);
  LLVMSetLinkage(tab, LLVMInternalLinkage);
  LLVMSetUnnamedAddress(tab, LLVMGlobalUnnamedAddr);
  return tab;
}

/* Payne-Hanek past 2^20 (pto/mathf.h, PTO_MATHF_BIG_BITS) on every lane of x: r and the
 * quadrant, base/mathf.c's sincos_big operation for operation (integers, then one sitofp, one
 * uitofp, two multiplies and an add in double). Inline code, no call: a call in the loop would
 * clobber the vector registers that hold the fast path's constants. */
static void sincos_big(lw *L, LLVMValueRef x, LLVMValueRef *r, LLVMValueRef *q) {
  LLVMBuilderRef b = L->b;
  LLVMTypeRef ti = shaped(x, L->t_i32), ti64 = shaped(x, L->t_i64), td = shaped(x, L->t_f64);
  int vec = LLVMGetTypeKind(ti) == LLVMVectorTypeKind;
  unsigned n = vec ? LLVMGetVectorSize(ti) : 1;
#define C32(v) splat(x, LLVMConstInt(L->t_i32, (v), 0))
#define C64(v) splat(x, LLVMConstInt(L->t_i64, (v), 0))
#define CD(v) splat(x, LLVMConstReal(L->t_f64, (v)))
  LLVMValueRef u = LLVMBuildBitCast(b, x, ti, "pk.u");
  LLVMValueRef a = LLVMBuildAnd(b, u, C32(0x7fffffffu), "");
  LLVMValueRef e = LLVMBuildSub(b, LLVMBuildLShr(b, a, C32(23), ""),
                                C32((uint64_t)(150 + PTO_MATHF_BIG_EMIN)), "");
  e = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, e, C32(0), ""), C32(0), e, "");
  e = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, e, C32(PTO_MATHF_BIG_ECOUNT - 1), ""),
                      C32(PTO_MATHF_BIG_ECOUNT - 1), e, "pk.e");
  LLVMValueRef row = LLVMBuildMul(b, e, C32(3), "");
  LLVMValueRef tab = sincos_table(L);
  LLVMValueRef p[3];
  for (int i = 0; i < 3; i++) {
    LLVMValueRef idx = LLVMBuildAdd(b, row, C32((uint64_t)i), "");
    LLVMValueRef w = vec ? LLVMGetUndef(ti) : NULL;
    for (unsigned l = 0; l < n; l++) { /* one scalar load a lane: the slow path */
      LLVMValueRef li = LLVMConstInt(L->t_i32, l, 0);
      LLVMValueRef il = vec ? LLVMBuildExtractElement(b, idx, li, "") : idx;
      il = LLVMBuildZExt(b, il, L->t_i64, "");
      LLVMValueRef at = LLVMBuildInBoundsGEP2(b, L->t_i32, tab, &il, 1, "");
      LLVMValueRef ld = LLVMBuildLoad2(b, L->t_i32, at, "");
      w = vec ? LLVMBuildInsertElement(b, w, ld, li, "") : ld;
    }
    p[i] = LLVMBuildZExt(b, w, ti64, "");
  }
  LLVMValueRef m = LLVMBuildZExt(
      b, LLVMBuildOr(b, LLVMBuildAnd(b, a, C32(0x7fffffu), ""), C32(0x800000u), ""), ti64, "pk.m");
  LLVMValueRef p2 = LLVMBuildMul(b, m, p[2], ""), p1 = LLVMBuildMul(b, m, p[1], "");
  LLVMValueRef p0 = LLVMBuildMul(b, m, p[0], "");
  LLVMValueRef t1 = LLVMBuildAdd(b, LLVMBuildLShr(b, p2, C64(32), ""),
                                 LLVMBuildAnd(b, p1, C64(0xffffffffu), ""), "");
  LLVMValueRef lo = LLVMBuildTrunc(b, p2, ti, ""), mid = LLVMBuildTrunc(b, t1, ti, "");
  LLVMValueRef hi = LLVMBuildAdd(
      b, LLVMBuildAdd(b, LLVMBuildLShr(b, t1, C64(32), ""), LLVMBuildLShr(b, p1, C64(32), ""), ""),
      p0, "");
  hi = LLVMBuildAdd(b, LLVMBuildTrunc(b, hi, ti, ""), C32(0x20000000u), "pk.hi"); /* + 1/2 */
  LLVMValueRef quad = LLVMBuildLShr(b, hi, C32(30), "");
  LLVMValueRef fh = LLVMBuildShl(
      b, LLVMBuildZExt(b, LLVMBuildAnd(b, hi, C32(0x3fffffffu), ""), ti64, ""), C64(32), "");
  fh = LLVMBuildSub(b, LLVMBuildOr(b, fh, LLVMBuildZExt(b, mid, ti64, ""), ""),
                    C64((uint64_t)1 << 61), "");
  LLVMValueRef f =
      LLVMBuildFAdd(b, LLVMBuildFMul(b, LLVMBuildSIToFP(b, fh, td, ""), CD(0x1p-62), ""),
                    LLVMBuildFMul(b, LLVMBuildUIToFP(b, lo, td, ""), CD(0x1p-94), ""), "pk.f");
  LLVMValueRef rf =
      LLVMBuildFPTrunc(b, LLVMBuildFMul(b, f, CD(PTO_MATHF_PIO2_1), ""), LLVMTypeOf(x), "");
  LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, u, C32(0), "");
  *q = LLVMBuildSelect(b, neg, LLVMBuildSub(b, C32(0), quad, ""), quad, "pk.q");
  *r = LLVMBuildSelect(b, neg, LLVMBuildFNeg(b, rf, ""), rf, "pk.r");
#undef C32
#undef C64
#undef CD
}

/* r and q of the lanes of x past 2^20 replaced by sincos_big's: a branch on "any lane big" (the
 * common case skips it), the big lanes' results kept. Leaves the builder in the join block. */
static void sincos_big_lanes(lw *L, LLVMValueRef x, LLVMValueRef *r, LLVMValueRef *q) {
  LLVMBuilderRef b = L->b;
  LLVMTypeRef ti = LLVMTypeOf(*q);
  int vec = LLVMGetTypeKind(ti) == LLVMVectorTypeKind;
  unsigned n = vec ? LLVMGetVectorSize(ti) : 1;
  LLVMValueRef ax = LLVMBuildAnd(b, LLVMBuildBitCast(b, x, ti, ""),
                                 splat(x, LLVMConstInt(L->t_i32, 0x7fffffffu, 0)), "");
  LLVMValueRef big = LLVMBuildAnd(
      b,
      LLVMBuildICmp(b, LLVMIntUGT, ax, splat(x, LLVMConstInt(L->t_i32, PTO_MATHF_BIG_BITS, 0)), ""),
      LLVMBuildICmp(b, LLVMIntULT, ax, splat(x, LLVMConstInt(L->t_i32, 0x7f800000u, 0)), ""),
      "sc.big");
  LLVMValueRef any = big;
  if (vec)
    any = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildBitCast(b, big, LLVMIntTypeInContext(L->c, n), ""),
                        LLVMConstInt(LLVMIntTypeInContext(L->c, n), 0, 0), "sc.any");
  LLVMBasicBlockRef from = LLVMGetInsertBlock(b);
  LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(L->c, L->fn, "sc.big");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(L->c, L->fn, "sc.join");
  LLVMBuildCondBr(b, any, slow, join);
  LLVMPositionBuilderAtEnd(b, slow);
  LLVMValueRef rb, qb;
  sincos_big(L, x, &rb, &qb);
  rb = LLVMBuildSelect(b, big, rb, *r, "");
  qb = LLVMBuildSelect(b, big, qb, *q, "");
  LLVMBasicBlockRef slow_end = LLVMGetInsertBlock(b);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, join);
  LLVMValueRef pr = LLVMBuildPhi(b, LLVMTypeOf(*r), "sc.r2");
  LLVMValueRef pq = LLVMBuildPhi(b, ti, "sc.q2");
  LLVMValueRef vr[2] = {*r, rb}, vq[2] = {*q, qb};
  LLVMBasicBlockRef bbs[2] = {from, slow_end};
  LLVMAddIncoming(pr, vr, bbs, 2);
  LLVMAddIncoming(pq, vq, bbs, 2);
  *r = pr;
  *q = pq;
}

/* The reduction in double on as many lanes as x has (8 per 512 bits), the rest in f32 (16). */
LLVMValueRef pto__lower_sincosf(lw *L, LLVMValueRef x, int cos) {
  LLVMBuilderRef b = L->b;
  LLVMTypeRef tf = LLVMTypeOf(x), td = shaped(x, L->t_f64), ti64 = shaped(x, L->t_i64);
  LLVMTypeRef ti = shaped(x, L->t_i32);
  LLVMValueRef d = LLVMBuildFPExt(b, x, td, "sc.d");
#define D(v) splat(x, LLVMConstReal(L->t_f64, (v)))
#define F(v) splat(x, LLVMConstReal(L->t_f32, (v)))
#define I(v) splat(x, LLVMConstInt(L->t_i32, (v), 0))
  LLVMValueRef kf = fma_of(L, d, D(PTO_MATHF_2_OVER_PI), D(PTO_MATHF_SHIFT52));
  LLVMValueRef nk = LLVMBuildFNeg(b, LLVMBuildFSub(b, kf, D(PTO_MATHF_SHIFT52), "sc.k"), "");
  LLVMValueRef rd = fma_of(L, nk, D(PTO_MATHF_PIO2_1), d);
  LLVMValueRef r = LLVMBuildFPTrunc(b, fma_of(L, nk, D(PTO_MATHF_PIO2_2), rd), tf, "sc.r");
  /* the quadrant: k's low bits */
  LLVMValueRef q = LLVMBuildTrunc(b, LLVMBuildBitCast(b, kf, ti64, ""), ti, "");
  sincos_big_lanes(L, x, &r, &q);
  LLVMValueRef z = LLVMBuildFMul(b, r, r, "");
  LLVMValueRef ps = F(pto_mathf_sin_coef(PTO_MATHF_SIN_TERMS - 1));
  for (int i = PTO_MATHF_SIN_TERMS - 2; i >= 0; i--)
    ps = fma_of(L, ps, z, F(pto_mathf_sin_coef(i)));
  ps = fma_of(L, LLVMBuildFMul(b, r, z, ""), ps, r);
  LLVMValueRef pc = F(pto_mathf_cos_coef(PTO_MATHF_COS_TERMS - 1));
  for (int i = PTO_MATHF_COS_TERMS - 2; i >= 0; i--)
    pc = fma_of(L, pc, z, F(pto_mathf_cos_coef(i)));
  pc = fma_of(L, z, pc, F(1.0));
  q = LLVMBuildAdd(b, q, I((unsigned)cos), "sc.q");
  LLVMValueRef odd = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, q, I(1), ""), I(0), "");
  LLVMValueRef y = LLVMBuildSelect(b, odd, pc, ps, "");
  LLVMValueRef sign = LLVMBuildAnd(b, LLVMBuildShl(b, q, I(30), ""), I(0x80000000u), "");
  y = LLVMBuildBitCast(b, LLVMBuildXor(b, LLVMBuildBitCast(b, y, ti, ""), sign, ""), tf, "");
  if (!cos) /* sin(+-0) = +-0 (the polynomial gives +0 for -0), as pto_sinf */
    y = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, x, F(0.0), ""), x, y, "");
  y = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, y, y, ""), F(NAN), y, cos ? "cos" : "sin");
#undef D
#undef F
#undef I
  return y;
}
