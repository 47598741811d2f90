/* The second set's elementwise functions (PTIR.md, "Ops (second set: what real models need)")
 * on compute values: what pto__lower_binop hands over for the lw_bin values past the first set's.
 * Each is the interpreter's definition (ir/interp.c, elem_binary) in straight-line IR on scalars
 * or vectors, so the fused loops that call it vectorize as the first set's do. */
#include <string.h>

#include "lower_kernel_internal.h"

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

LLVMValueRef pto__lower_elem_binop(lw *L, lw_bin op, pto_dtype dt, LLVMValueRef a,
                                   LLVMValueRef b) {
  pto_expr_op cmp = cmp_expr_op(op);
  if (cmp != PTO_EOP_NONE) return pto__lower_compare(L, cmp, dt, a, b);
  return NULL;
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
