/* Host C emitter: a program's `host` function as C over pto_host_api (pto/host_abi.h).
 *
 * The generated file is hand-editable and self-contained: it includes pto/host_abi.h and
 * pto/orch_abi.h only, exports pto_host_abi_version and pto_host_entry, and carries its helpers
 * (floor division, views) as static functions. Views (tensor.slice) are offset/shape arithmetic on
 * pto_host_ref with the orchestration's clamping rule (only the extent is clamped; an offset
 * outside the extent is fatal). Everything that allocates or dispatches calls the table. Fatal
 * host errors go through api->report_fatal, and the entry returns the code at once:
 * PTO_KERNEL_ERR_DIV_ZERO for an integer division by zero, PTO_KERNEL_ERR_DIST for a device
 * outside 0..world_size-1, PTO_KERNEL_ERR_DIM_MISMATCH for a slice offset outside its extent or a
 * zero loop step. A call without device= goes to device 0. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_internal.h"
#include "pto/orch_abi.h"
#include "pto/base.h"

typedef struct hemit {
  const pto_ir_program *p;
  const pto_ir_func *f;
  const char *const *callees; /* orch names, call index order */
  int ncallees;
  pto_text out;
  pto_status err;
} hemit;

static void fail(hemit *e, pto_loc loc, const char *what) {
  if (e->err) return;
  e->err = pto_status_make(PTO_STATUS_UNIMPLEMENTED, "%s:%d:%d: host codegen: %s",
                           e->p->file ? e->p->file : "<program>", loc.line, loc.col, what);
}

static const char *ctype(pto_dtype dt) {
  switch (dt) {
  case PTO_DTYPE_BOOL: return "int";
  case PTO_DTYPE_I8: return "int8_t";
  case PTO_DTYPE_I16: return "int16_t";
  case PTO_DTYPE_I32: return "int32_t";
  case PTO_DTYPE_I64:
  case PTO_DTYPE_INDEX: return "int64_t";
  case PTO_DTYPE_U8: return "uint8_t";
  case PTO_DTYPE_U16: return "uint16_t";
  case PTO_DTYPE_U32: return "uint32_t";
  case PTO_DTYPE_U64: return "uint64_t";
  case PTO_DTYPE_F32: return "float";
  case PTO_DTYPE_F64: return "double";
  default: return NULL; /* f16/bf16 scalars: not in a host */
  }
}

static const char *dtype_enum(pto_dtype dt) {
  switch (dt) {
  case PTO_DTYPE_BOOL: return "PTO_DTYPE_BOOL";
  case PTO_DTYPE_I8: return "PTO_DTYPE_I8";
  case PTO_DTYPE_I16: return "PTO_DTYPE_I16";
  case PTO_DTYPE_I32: return "PTO_DTYPE_I32";
  case PTO_DTYPE_I64: return "PTO_DTYPE_I64";
  case PTO_DTYPE_U8: return "PTO_DTYPE_U8";
  case PTO_DTYPE_U16: return "PTO_DTYPE_U16";
  case PTO_DTYPE_U32: return "PTO_DTYPE_U32";
  case PTO_DTYPE_U64: return "PTO_DTYPE_U64";
  case PTO_DTYPE_F16: return "PTO_DTYPE_F16";
  case PTO_DTYPE_BF16: return "PTO_DTYPE_BF16";
  case PTO_DTYPE_F32: return "PTO_DTYPE_F32";
  case PTO_DTYPE_F64: return "PTO_DTYPE_F64";
  case PTO_DTYPE_INDEX: return "PTO_DTYPE_INDEX";
  default: return "0";
  }
}

static int is_int(pto_dtype dt) { return !pto_dtype_is_float(dt) && dt != PTO_DTYPE_BOOL; }

static void vname(hemit *e, const pto_ir_value *v) {
  pto_text_printf(&e->out, "v%d_%s", v->id, v->name ? v->name : "t");
}

static int is_ref(const pto_ir_value *v) { return v->type->kind != PTO_TYPE_SCALAR; }

static const char *binop_str(pto_expr_op op) {
  switch (op) {
  case PTO_EOP_ADD: return "+";
  case PTO_EOP_SUB: return "-";
  case PTO_EOP_MUL: return "*";
  case PTO_EOP_EQ: return "==";
  case PTO_EOP_NE: return "!=";
  case PTO_EOP_LT: return "<";
  case PTO_EOP_LE: return "<=";
  case PTO_EOP_GT: return ">";
  case PTO_EOP_GE: return ">=";
  case PTO_EOP_AND: return "&&";
  case PTO_EOP_OR: return "||";
  default: return NULL;
  }
}

/* Whether an expression divides integers (then the statement checks st.rc after it). */
static int has_int_div(const pto_ir_expr *x) {
  if (!x) return 0;
  switch (x->kind) {
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: return has_int_div(x->a);
  case PTO_EXPR_BINARY:
    if ((x->op == PTO_EOP_DIV || x->op == PTO_EOP_MOD) && is_int(x->dtype)) return 1;
    return has_int_div(x->lhs) || has_int_div(x->rhs);
  default: return 0;
  }
}

static void emit_expr(hemit *e, const pto_ir_expr *x) {
  pto_text *b = &e->out;
  const char *ct = ctype(x->dtype);
  if (!ct && x->kind != PTO_EXPR_VALUE) {
    fail(e, x->loc, "f16/bf16 scalars are not supported in a host function");
    return;
  }
  switch (x->kind) {
  case PTO_EXPR_INT:
    if (pto_dtype_is_float(x->dtype)) pto_text_printf(b, "((%s)%" PRId64 ")", ct, x->i);
    else if (x->dtype == PTO_DTYPE_BOOL) pto_text_printf(b, "%d", x->i != 0);
    else if (!pto_dtype_is_signed(x->dtype)) pto_text_printf(b, "((%s)UINT64_C(%" PRIu64 "))", ct, (uint64_t)x->i);
    else if (x->dtype == PTO_DTYPE_INDEX || x->dtype == PTO_DTYPE_I64) pto_text_printf(b, "INT64_C(%" PRId64 ")", x->i);
    else pto_text_printf(b, "((%s)%" PRId64 ")", ct, x->i);
    return;
  case PTO_EXPR_FLOAT:
    if (isnan(x->f)) pto_text_printf(b, "((%s)NAN)", ct);
    else if (isinf(x->f)) pto_text_printf(b, "((%s)(%sINFINITY))", ct, x->f < 0 ? "-" : "");
    else pto_text_printf(b, "((%s)%a)", ct, x->f);
    return;
  case PTO_EXPR_BOOL: pto_text_printf(b, "%d", x->b ? 1 : 0); return;
  case PTO_EXPR_VALUE: vname(e, x->value); return;
  case PTO_EXPR_SYM: pto_text_printf(b, "s_%s", e->p->syms[x->sym]); return;
  case PTO_EXPR_UNARY:
    pto_text_printf(b, "(%s", x->op == PTO_EOP_NOT ? "!" : "-");
    emit_expr(e, x->a);
    pto_text_printf(b, ")");
    return;
  case PTO_EXPR_CAST:
    if (x->dtype == PTO_DTYPE_BOOL) {
      pto_text_printf(b, "((");
      emit_expr(e, x->a);
      pto_text_printf(b, ") != 0)");
    } else {
      pto_text_printf(b, "((%s)(", ct);
      emit_expr(e, x->a);
      pto_text_printf(b, "))");
    }
    return;
  case PTO_EXPR_BINARY: {
    const char *op = binop_str(x->op);
    if (op) {
      pto_text_printf(b, "(");
      emit_expr(e, x->lhs);
      pto_text_printf(b, " %s ", op);
      emit_expr(e, x->rhs);
      pto_text_printf(b, ")");
      return;
    }
    if (x->op == PTO_EOP_MIN || x->op == PTO_EOP_MAX) {
      pto_text_printf(b, "%s(", x->op == PTO_EOP_MIN ? "PH_MIN" : "PH_MAX");
    } else if (pto_dtype_is_float(x->dtype)) {
      if (x->op == PTO_EOP_DIV) {
        pto_text_printf(b, "(");
        emit_expr(e, x->lhs);
        pto_text_printf(b, " / ");
        emit_expr(e, x->rhs);
        pto_text_printf(b, ")");
        return;
      }
      pto_text_printf(b, "(%s)ph_fmod((double)", ct);
    } else {
      int u = !pto_dtype_is_signed(x->dtype);
      pto_text_printf(b, "(%s)ph_%s%s(&st, (%s)", ct, x->op == PTO_EOP_DIV ? "div" : "mod", u ? "_u" : "",
                u ? "uint64_t" : "int64_t");
    }
    emit_expr(e, x->lhs);
    pto_text_printf(b, ", ");
    emit_expr(e, x->rhs);
    pto_text_printf(b, ")");
    return;
  }
  }
}

/* After a statement whose expressions may divide by zero: return the fatal code. */
static void check_rc(hemit *e, int depth) {
  pto_text_pad(&e->out, (size_t)(depth) * 2);
  pto_text_printf(&e->out, "if (st.rc) return st.rc;\n");
}

static int arg_has_div(const pto_ir_arg *a) {
  if (a->kind == PTO_ARG_EXPR) return has_int_div(a->expr);
  if (a->kind == PTO_ARG_LIST)
    for (int i = 0; i < a->list.n; i++)
      if (has_int_div(a->list.items[i])) return 1;
  return 0;
}

static void emit_list(hemit *e, const pto_ir_arg *a) {
  pto_text_printf(&e->out, "{");
  for (int i = 0; i < a->list.n; i++) {
    if (i) pto_text_printf(&e->out, ", ");
    pto_text_printf(&e->out, "(int64_t)");
    emit_expr(e, a->list.items[i]);
  }
  pto_text_printf(&e->out, "}");
}

static void emit_decl(hemit *e, const pto_ir_value *v) {
  if (is_ref(v)) {
    pto_text_printf(&e->out, "pto_host_ref ");
  } else {
    const char *ct = ctype(v->type->dtype);
    if (!ct) fail(e, v->loc, "f16/bf16 scalars are not supported in a host function");
    pto_text_printf(&e->out, "%s ", ct ? ct : "int");
  }
  vname(e, v);
}

static void emit_op(hemit *e, const pto_ir_stmt *s, int depth) {
  pto_text *b = &e->out;
  const pto_ir_arg *a = s->op.args;
  const pto_ir_value *r = s->nresults ? s->results[0] : NULL;
  int div = 0;
  for (int i = 0; i < s->op.nargs; i++)
    div |= arg_has_div(&a[i]);
  switch (s->op.opc) {
  case PTO_OP_DIST_WORLD_SIZE:
    if (!r) return;
    pto_text_pad(b, (size_t)(depth) * 2);
    emit_decl(e, r);
    pto_text_printf(b, " = api->world_size(api->ctx);\n");
    return;
  case PTO_OP_TENSOR_CREATE:
  case PTO_OP_DIST_ALLOC_WINDOW: {
    if (!r) return;
    pto_text_pad(b, (size_t)(depth) * 2);
    emit_decl(e, r);
    pto_text_printf(b, ";\n");
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "{\n");
    pto_text_pad(b, (size_t)(depth + 1) * 2);
    pto_text_printf(b, "const int64_t shape[%d] = ", a[0].list.n);
    emit_list(e, &a[0]);
    pto_text_printf(b, ";\n");
    if (div) check_rc(e, depth + 1);
    pto_text_pad(b, (size_t)(depth + 1) * 2);
    pto_text_printf(b, "int32_t rc = api->%s(api->ctx, %d, shape, %s, &",
              s->op.opc == PTO_OP_TENSOR_CREATE ? "create_tensor" : "alloc_window", a[0].list.n,
              dtype_enum(a[1].dtype));
    vname(e, r);
    pto_text_printf(b, ");\n");
    pto_text_pad(b, (size_t)(depth + 1) * 2);
    pto_text_printf(b, "if (rc) return rc;\n");
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "}\n");
    return;
  }
  case PTO_OP_DIST_WINDOW:
    if (!r) return;
    pto_text_pad(b, (size_t)(depth) * 2);
    emit_decl(e, r);
    pto_text_printf(b, " = ");
    emit_expr(e, a[0].expr);
    pto_text_printf(b, ";\n");
    pto_text_pad(b, (size_t)(depth) * 2);
    vname(e, r);
    pto_text_printf(b, ".window = 1;\n");
    return;
  case PTO_OP_TENSOR_DIM: {
    if (!r) return;
    int64_t axis = 0;
    pto_ir_expr_static_int(a[1].expr, &axis);
    pto_text_pad(b, (size_t)(depth) * 2);
    emit_decl(e, r);
    pto_text_printf(b, " = (%s)", ctype(r->type->dtype) ? ctype(r->type->dtype) : "int64_t");
    emit_expr(e, a[0].expr);
    pto_text_printf(b, ".shape[%" PRId64 "];\n", axis);
    return;
  }
  case PTO_OP_TENSOR_SLICE: {
    if (!r) return;
    int n = a[1].list.n;
    pto_text_pad(b, (size_t)(depth) * 2);
    emit_decl(e, r);
    pto_text_printf(b, ";\n");
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "{\n");
    pto_text_pad(b, (size_t)(depth + 1) * 2);
    pto_text_printf(b, "const int64_t offs[%d] = ", n);
    emit_list(e, &a[1]);
    pto_text_printf(b, ", shape[%d] = ", n);
    emit_list(e, &a[2]);
    pto_text_printf(b, ";\n");
    if (div) check_rc(e, depth + 1);
    pto_text_pad(b, (size_t)(depth + 1) * 2);
    pto_text_printf(b, "if (ph_slice(&st, &");
    emit_expr(e, a[0].expr);
    pto_text_printf(b, ", offs, shape, %d, &", n);
    vname(e, r);
    pto_text_printf(b, ")) return st.rc;\n");
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "}\n");
    return;
  }
  case PTO_OP_TENSOR_RESHAPE: {
    if (!r) return;
    int n = a[1].list.n;
    pto_text_pad(b, (size_t)(depth) * 2);
    emit_decl(e, r);
    pto_text_printf(b, ";\n");
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "{\n");
    pto_text_pad(b, (size_t)(depth + 1) * 2);
    pto_text_printf(b, "const int64_t shape[%d] = ", n);
    emit_list(e, &a[1]);
    pto_text_printf(b, ";\n");
    if (div) check_rc(e, depth + 1);
    pto_text_pad(b, (size_t)(depth + 1) * 2);
    pto_text_printf(b, "if (ph_reshape(&st, &");
    emit_expr(e, a[0].expr);
    pto_text_printf(b, ", shape, %d, &", n);
    vname(e, r);
    pto_text_printf(b, ")) return st.rc;\n");
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "}\n");
    return;
  }
  case PTO_OP_TENSOR_SELECT:
    if (!r) return;
    pto_text_pad(b, (size_t)(depth) * 2);
    emit_decl(e, r);
    pto_text_printf(b, ";\n");
    if (div) {
      pto_text_pad(b, (size_t)(depth) * 2);
      pto_text_printf(b, "{\n");
      pto_text_pad(b, (size_t)(depth + 1) * 2);
      pto_text_printf(b, "const int64_t idx = (int64_t)");
      emit_expr(e, a[1].expr);
      pto_text_printf(b, ";\n");
      check_rc(e, depth + 1);
      pto_text_pad(b, (size_t)(depth + 1) * 2);
      pto_text_printf(b, "if (ph_select(&st, &");
      emit_expr(e, a[0].expr);
      pto_text_printf(b, ", idx, &");
      vname(e, r);
      pto_text_printf(b, ")) return st.rc;\n");
      pto_text_pad(b, (size_t)(depth) * 2);
      pto_text_printf(b, "}\n");
      return;
    }
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "if (ph_select(&st, &");
    emit_expr(e, a[0].expr);
    pto_text_printf(b, ", (int64_t)");
    emit_expr(e, a[1].expr);
    pto_text_printf(b, ", &");
    vname(e, r);
    pto_text_printf(b, ")) return st.rc;\n");
    return;
  default: {
    const pto_op_info *info = pto_op_info_get(s->op.opc);
    char msg[128];
    snprintf(msg, sizeof msg, "%s is not a host op", info ? info->name : "op");
    fail(e, s->loc, msg);
  }
  }
}

static int callee_index(hemit *e, const char *name) {
  for (int i = 0; i < e->ncallees; i++)
    if (strcmp(e->callees[i], name) == 0) return i;
  return -1;
}

static void emit_call(hemit *e, const pto_ir_stmt *s, int depth) {
  pto_text *b = &e->out;
  const pto_ir_func *g = s->call.callee;
  int idx = callee_index(e, g->name);
  if (g->kind != PTO_FUNC_ORCH || idx < 0) {
    fail(e, s->loc, "a host calls orch functions only");
    return;
  }
  int div = has_int_div(s->call.device);
  for (int i = 0; i < s->call.nargs; i++)
    div |= has_int_div(s->call.args[i]);
  pto_text_pad(b, (size_t)(depth) * 2);
  pto_text_printf(b, "{ /* call @%s */\n", g->name);
  pto_text_pad(b, (size_t)(depth + 1) * 2);
  pto_text_printf(b, "pto_host_call_arg a[%d];\n", s->call.nargs > 0 ? s->call.nargs : 1);
  pto_text_pad(b, (size_t)(depth + 1) * 2);
  pto_text_printf(b, "memset(a, 0, sizeof a);\n");
  pto_text_pad(b, (size_t)(depth + 1) * 2);
  pto_text_printf(b, "const int64_t device = ");
  if (s->call.device) {
    pto_text_printf(b, "(int64_t)");
    emit_expr(e, s->call.device);
  } else {
    pto_text_printf(b, "0");
  }
  pto_text_printf(b, ";\n");
  for (int i = 0; i < s->call.nargs && i < g->nparams; i++) {
    const pto_ir_param *prm = &g->params[i];
    const pto_ir_expr *x = s->call.args[i];
    pto_text_pad(b, (size_t)(depth + 1) * 2);
    if (prm->value->type->kind == PTO_TYPE_SCALAR) {
      pto_dtype dt = prm->value->type->dtype;
      pto_text_printf(b, "a[%d].kind = PTO_ORCH_ARG_SCALAR; a[%d].scalar = ", i, i);
      if (dt == PTO_DTYPE_F32) pto_text_printf(b, "ph_slot_f32((float)");
      else if (dt == PTO_DTYPE_F64) pto_text_printf(b, "ph_slot_f64((double)");
      else if (dt == PTO_DTYPE_BOOL) pto_text_printf(b, "(uint64_t)(0 != ");
      else if (!pto_dtype_is_signed(dt)) pto_text_printf(b, "(uint64_t)(");
      else pto_text_printf(b, "(uint64_t)(int64_t)(");
      if (!ctype(dt)) fail(e, s->loc, "f16/bf16 scalars are not supported in a host function");
      emit_expr(e, x);
      pto_text_printf(b, ");\n");
    } else {
      static const char *const kinds[] = {"PTO_ORCH_ARG_IN", "PTO_ORCH_ARG_OUT", "PTO_ORCH_ARG_INOUT"};
      pto_text_printf(b, "a[%d].kind = %s; a[%d].tensor = ", i, kinds[prm->dir], i);
      emit_expr(e, x);
      pto_text_printf(b, ";\n");
    }
  }
  if (div) check_rc(e, depth + 1);
  pto_text_pad(b, (size_t)(depth + 1) * 2);
  pto_text_printf(b, "if (ph_check_device(&st, device, \"@%s\")) return st.rc;\n", g->name);
  pto_text_pad(b, (size_t)(depth + 1) * 2);
  pto_text_printf(b, "int32_t rc = api->call(api->ctx, %d, device, a, %d);\n", idx, s->call.nargs);
  pto_text_pad(b, (size_t)(depth + 1) * 2);
  pto_text_printf(b, "if (rc) return rc;\n");
  pto_text_pad(b, (size_t)(depth) * 2);
  pto_text_printf(b, "}\n");
  /* Results alias the out/inout arguments, in parameter order. */
  int k = 0;
  for (int i = 0; i < g->nparams && k < s->nresults; i++) {
    const pto_ir_param *prm = &g->params[i];
    if (prm->value->type->kind == PTO_TYPE_SCALAR || prm->dir == PTO_DIR_IN) continue;
    pto_text_pad(b, (size_t)(depth) * 2);
    emit_decl(e, s->results[k++]);
    pto_text_printf(b, " = ");
    emit_expr(e, s->call.args[i]);
    pto_text_printf(b, ";\n");
  }
}

static void emit_block(hemit *e, const pto_ir_block *blk, int depth, pto_ir_value *const *yield_to,
                       int nyield);

static void emit_stmt(hemit *e, const pto_ir_stmt *s, int depth, pto_ir_value *const *yield_to,
                      int nyield) {
  pto_text *b = &e->out;
  switch (s->kind) {
  case PTO_STMT_ASSIGN:
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "const ");
    emit_decl(e, s->results[0]);
    pto_text_printf(b, " = ");
    emit_expr(e, s->expr);
    pto_text_printf(b, ";\n");
    if (has_int_div(s->expr)) check_rc(e, depth);
    return;
  case PTO_STMT_OP: emit_op(e, s, depth); return;
  case PTO_STMT_CALL: emit_call(e, s, depth); return;
  case PTO_STMT_FOR: {
    int div = has_int_div(s->loop.lo) || has_int_div(s->loop.hi) || has_int_div(s->loop.step);
    for (int i = 0; i < s->loop.niters; i++) {
      pto_text_pad(b, (size_t)(depth) * 2);
      emit_decl(e, s->loop.iters[i]);
      pto_text_printf(b, " = ");
      emit_expr(e, s->loop.inits[i]);
      pto_text_printf(b, ";\n");
      div |= has_int_div(s->loop.inits[i]);
    }
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "{\n");
    pto_text_pad(b, (size_t)(depth + 1) * 2);
    pto_text_printf(b, "const int64_t lo = (int64_t)");
    emit_expr(e, s->loop.lo);
    pto_text_printf(b, ", hi = (int64_t)");
    emit_expr(e, s->loop.hi);
    pto_text_printf(b, ", step = ");
    if (s->loop.step) {
      pto_text_printf(b, "(int64_t)");
      emit_expr(e, s->loop.step);
    } else {
      pto_text_printf(b, "1");
    }
    pto_text_printf(b, ";\n");
    if (div) check_rc(e, depth + 1);
    pto_text_pad(b, (size_t)(depth + 1) * 2);
    pto_text_printf(b, "if (step == 0) return ph_fatal(&st, PTO_KERNEL_ERR_DIM_MISMATCH, \"for: the step is zero\");\n");
    pto_text_pad(b, (size_t)(depth + 1) * 2);
    pto_text_printf(b, "for (int64_t ");
    vname(e, s->loop.iv);
    pto_text_printf(b, " = lo; step > 0 ? ");
    vname(e, s->loop.iv);
    pto_text_printf(b, " < hi : ");
    vname(e, s->loop.iv);
    pto_text_printf(b, " > hi; ");
    /* A step past INT64_MAX (INT64_MIN) ends the loop instead of wrapping around. */
    vname(e, s->loop.iv);
    pto_text_printf(b, " = __builtin_add_overflow(");
    vname(e, s->loop.iv);
    pto_text_printf(b, ", step, &");
    vname(e, s->loop.iv);
    pto_text_printf(b, ") ? hi : ");
    vname(e, s->loop.iv);
    pto_text_printf(b, ") {\n");
    emit_block(e, &s->loop.body, depth + 2, s->loop.iters, s->loop.niters);
    pto_text_pad(b, (size_t)(depth + 1) * 2);
    pto_text_printf(b, "}\n");
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "}\n");
    for (int i = 0; i < s->nresults; i++) {
      pto_text_pad(b, (size_t)(depth) * 2);
      pto_text_printf(b, "const ");
      emit_decl(e, s->results[i]);
      pto_text_printf(b, " = ");
      vname(e, s->loop.iters[i]);
      pto_text_printf(b, ";\n");
    }
    return;
  }
  case PTO_STMT_IF:
    for (int i = 0; i < s->nresults; i++) {
      pto_text_pad(b, (size_t)(depth) * 2);
      emit_decl(e, s->results[i]);
      pto_text_printf(b, is_ref(s->results[i]) ? " = {0};\n" : " = 0;\n");
    }
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "if (");
    emit_expr(e, s->branch.cond);
    pto_text_printf(b, ") {\n");
    emit_block(e, &s->branch.then_body, depth + 1, s->results, s->nresults);
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "}");
    if (s->branch.has_else) {
      pto_text_printf(b, " else {\n");
      emit_block(e, &s->branch.else_body, depth + 1, s->results, s->nresults);
      pto_text_pad(b, (size_t)(depth) * 2);
      pto_text_printf(b, "}");
    }
    pto_text_printf(b, "\n");
    if (has_int_div(s->branch.cond)) check_rc(e, depth);
    return;
  case PTO_STMT_YIELD:
    for (int i = 0; i < s->ret.n && i < nyield; i++) {
      pto_text_pad(b, (size_t)(depth) * 2);
      vname(e, yield_to[i]);
      pto_text_printf(b, " = ");
      emit_expr(e, s->ret.vals[i]);
      pto_text_printf(b, ";\n");
      if (has_int_div(s->ret.vals[i])) check_rc(e, depth);
    }
    return;
  case PTO_STMT_RETURN: return;
  case PTO_STMT_INCORE: fail(e, s->loc, "an incore scope in a host function"); return;
  }
}

static void emit_block(hemit *e, const pto_ir_block *blk, int depth, pto_ir_value *const *yield_to,
                       int nyield) {
  for (int i = 0; i < blk->n && !e->err; i++)
    emit_stmt(e, blk->stmts[i], depth, yield_to, nyield);
}

static const char k_helpers[] =
    "typedef struct ph_state {\n"
    "  const pto_host_api *api;\n"
    "  int32_t rc;\n"
    "} ph_state;\n"
    "\n"
    "static int32_t ph_fatal(ph_state *st, int32_t code, const char *msg) {\n"
    "  if (!st->rc) {\n"
    "    st->rc = code;\n"
    "    st->api->report_fatal(st->api->ctx, code, msg);\n"
    "  }\n"
    "  return st->rc;\n"
    "}\n"
    "\n"
    "/* PTIR's integer division floors; mod has the sign of b. Like kernels: the minimum divided\n"
    " * by -1 wraps, a zero divisor fails the run. */\n"
    "static int64_t ph_div(ph_state *st, int64_t a, int64_t b) {\n"
    "  if (b == 0) return ph_fatal(st, PTO_KERNEL_ERR_DIV_ZERO, \"integer division by zero\"), 0;\n"
    "  if (b == -1) return (int64_t)(0 - (uint64_t)a);\n"
    "  int64_t q = a / b;\n"
    "  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n"
    "}\n"
    "static int64_t ph_mod(ph_state *st, int64_t a, int64_t b) {\n"
    "  if (b == 0) return ph_fatal(st, PTO_KERNEL_ERR_DIV_ZERO, \"integer division by zero\"), 0;\n"
    "  if (b == -1) return 0;\n"
    "  int64_t m = a % b;\n"
    "  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;\n"
    "}\n"
    "static uint64_t ph_div_u(ph_state *st, uint64_t a, uint64_t b) {\n"
    "  if (b == 0) return ph_fatal(st, PTO_KERNEL_ERR_DIV_ZERO, \"integer division by zero\"), 0;\n"
    "  return a / b;\n"
    "}\n"
    "static uint64_t ph_mod_u(ph_state *st, uint64_t a, uint64_t b) {\n"
    "  if (b == 0) return ph_fatal(st, PTO_KERNEL_ERR_DIV_ZERO, \"integer division by zero\"), 0;\n"
    "  return a % b;\n"
    "}\n"
    "static double ph_fmod(double a, double b) {\n"
    "  double m = fmod(a, b);\n"
    "  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;\n"
    "}\n"
    "#define PH_MIN(a, b) ((a) < (b) ? (a) : (b))\n"
    "#define PH_MAX(a, b) ((a) > (b) ? (a) : (b))\n"
    "\n"
    "static uint64_t ph_slot_f32(float f) {\n"
    "  uint32_t u;\n"
    "  memcpy(&u, &f, 4);\n"
    "  return u;\n"
    "}\n"
    "static uint64_t ph_slot_f64(double f) {\n"
    "  uint64_t u;\n"
    "  memcpy(&u, &f, 8);\n"
    "  return u;\n"
    "}\n"
    "static float ph_unslot_f32(uint64_t s) {\n"
    "  uint32_t u = (uint32_t)s;\n"
    "  float f;\n"
    "  memcpy(&f, &u, 4);\n"
    "  return f;\n"
    "}\n"
    "static double ph_unslot_f64(uint64_t s) {\n"
    "  double f;\n"
    "  memcpy(&f, &s, 8);\n"
    "  return f;\n"
    "}\n"
    "\n"
    "/* tensor.slice: clamped at the edge (only the extent); an offset outside the extent is fatal. */\n"
    "static int ph_slice(ph_state *st, const pto_host_ref *src, const int64_t *offs,\n"
    "                    const int64_t *shape, int n, pto_host_ref *out) {\n"
    "  *out = *src;\n"
    "  for (int d = 0; d < n; d++) {\n"
    "    if (offs[d] < 0 || offs[d] >= src->shape[d]) {\n"
    "      char msg[160];\n"
    "      snprintf(msg, sizeof msg, \"tensor.slice: offset %lld of dim %d is outside the extent %lld\",\n"
    "               (long long)offs[d], d, (long long)src->shape[d]);\n"
    "      ph_fatal(st, PTO_KERNEL_ERR_DIM_MISMATCH, msg);\n"
    "      return 1;\n"
    "    }\n"
    "    int64_t room = src->shape[d] - offs[d];\n"
    "    out->offset += offs[d] * src->stride[d];\n"
    "    out->shape[d] = shape[d] < room ? shape[d] : room;\n"
    "  }\n"
    "  return 0;\n"
    "}\n"
    "\n"
    "/* tensor.reshape: the same elements, row-major in the new shape; the source contiguous. */\n"
    "static int ph_reshape(ph_state *st, const pto_host_ref *src, const int64_t *shape, int n,\n"
    "                      pto_host_ref *out) {\n"
    "  int64_t have = 1, want = 1, dense = 1;\n"
    "  int contiguous = 1;\n"
    "  for (int d = src->rank - 1; d >= 0; d--) {\n"
    "    if (src->shape[d] != 1 && src->stride[d] != dense) contiguous = 0;\n"
    "    dense *= src->shape[d];\n"
    "    have *= src->shape[d];\n"
    "  }\n"
    "  for (int d = 0; d < n; d++) want *= shape[d];\n"
    "  char msg[160];\n"
    "  if (have != want || !contiguous) {\n"
    "    if (have != want)\n"
    "      snprintf(msg, sizeof msg, \"tensor.reshape: the tensor has %lld elements, the shape %lld\",\n"
    "               (long long)have, (long long)want);\n"
    "    else\n"
    "      snprintf(msg, sizeof msg, \"tensor.reshape: the tensor is not contiguous\");\n"
    "    ph_fatal(st, PTO_KERNEL_ERR_DIM_MISMATCH, msg);\n"
    "    return 1;\n"
    "  }\n"
    "  *out = *src;\n"
    "  out->rank = n;\n"
    "  int64_t stride = 1;\n"
    "  for (int d = PTO_MAX_RANK - 1; d >= 0; d--) {\n"
    "    out->shape[d] = d < n ? shape[d] : 0;\n"
    "    out->stride[d] = d < n ? stride : 0;\n"
    "    if (d < n) stride *= shape[d];\n"
    "  }\n"
    "  return 0;\n"
    "}\n"
    "\n"
    "/* tensor.select: the leading dim indexed and dropped. */\n"
    "static int ph_select(ph_state *st, const pto_host_ref *src, int64_t idx, pto_host_ref *out) {\n"
    "  if (src->rank < 2 || idx < 0 || idx >= src->shape[0]) {\n"
    "    char msg[160];\n"
    "    snprintf(msg, sizeof msg, \"tensor.select: index %lld is outside the extent %lld of dim 0\",\n"
    "             (long long)idx, (long long)src->shape[0]);\n"
    "    ph_fatal(st, PTO_KERNEL_ERR_DIM_MISMATCH, msg);\n"
    "    return 1;\n"
    "  }\n"
    "  *out = *src;\n"
    "  out->offset += idx * src->stride[0];\n"
    "  for (int d = 0; d < PTO_MAX_RANK; d++) {\n"
    "    out->shape[d] = d + 1 < src->rank ? src->shape[d + 1] : 0;\n"
    "    out->stride[d] = d + 1 < src->rank ? src->stride[d + 1] : 0;\n"
    "  }\n"
    "  out->rank = src->rank - 1;\n"
    "  return 0;\n"
    "}\n"
    "\n"
    "static int ph_check_device(ph_state *st, int64_t device, const char *callee) {\n"
    "  int64_t n = st->api->world_size(st->api->ctx);\n"
    "  if (device >= 0 && device < n) return 0;\n"
    "  char msg[160];\n"
    "  snprintf(msg, sizeof msg, \"call %s: device=%lld is outside the %lld devices (0..%lld)\", callee,\n"
    "           (long long)device, (long long)n, (long long)(n - 1));\n"
    "  ph_fatal(st, PTO_KERNEL_ERR_DIST, msg);\n"
    "  return 1;\n"
    "}\n";

pto_status pto__emit_host(const pto_ir_program *p, const pto_ir_func *f,
                          const char *const *callees, int ncallees, char **out_text) {
  *out_text = NULL;
  hemit E;
  memset(&E, 0, sizeof E);
  E.p = p;
  E.f = f;
  E.callees = callees;
  E.ncallees = ncallees;
  pto_text *b = &E.out;
  const char *src = p->file ? strrchr(p->file, '/') : NULL;
  src = src ? src + 1 : (p->file ? p->file : "<program>");
  pto_text_printf(b, "/* Generated by pto from %s: host @%s of program %s.\n", src, f->name, p->name);
  pto_text_printf(b, " * Hand-editable: `pto rebuild DIR` (or loading the work dir) rebuilds host.so.\n");
  pto_text_printf(b, " * Calls, by orch_index:");
  for (int i = 0; i < ncallees; i++)
    pto_text_printf(b, " %d=@%s", i, callees[i]);
  pto_text_printf(b, " */\n");
  pto_text_printf(b, "#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n\n");
  pto_text_printf(b, "#include \"pto/host_abi.h\"\n#include \"pto/kernel_abi.h\"\n#include \"pto/orch_abi.h\"\n\n");
  pto_text_printf(b, "%s\n", k_helpers);
  pto_text_printf(b, "uint32_t pto_host_abi_version(void) { return PTO_HOST_ABI_VERSION; }\n\n");
  pto_text_printf(b, "int32_t pto_host_entry(const pto_host_api *api, const pto_host_args *args) {\n");
  pto_text_printf(b, "  ph_state st = {api, 0};\n");
  int nt = 0, ns = 0;
  for (int i = 0; i < f->nparams; i++) {
    if (is_ref(f->params[i].value)) nt++;
    else ns++;
  }
  pto_text_printf(b, "  if (args->ntensors != %d || args->nscalars != %d)\n", nt, ns);
  pto_text_printf(b, "    return ph_fatal(&st, PTO_KERNEL_ERR_DIM_MISMATCH, \"host @%s: expected %d tensors and %d scalars\");\n",
            f->name, nt, ns);
  int ti = 0, si = 0;
  for (int i = 0; i < f->nparams; i++) {
    const pto_ir_param *prm = &f->params[i];
    const pto_ir_value *v = prm->value;
    pto_text_printf(b, "  ");
    if (is_ref(v)) {
      pto_text_printf(b, "const ");
      emit_decl(&E, v);
      pto_text_printf(b, " = args->tensors[%d];\n", ti++);
      continue;
    }
    pto_dtype dt = v->type->dtype;
    pto_text_printf(b, "const ");
    emit_decl(&E, v);
    if (prm->bind == PTO_BIND_LITERAL && prm->literal) {
      /* Specialized: the literal wins, the slot is kept. */
      pto_text_printf(b, " = ");
      emit_expr(&E, prm->literal);
      pto_text_printf(b, "; /* specialized; slot %d */\n", si++);
      continue;
    }
    if (dt == PTO_DTYPE_F32) pto_text_printf(b, " = ph_unslot_f32(args->scalars[%d]);\n", si++);
    else if (dt == PTO_DTYPE_F64) pto_text_printf(b, " = ph_unslot_f64(args->scalars[%d]);\n", si++);
    else if (dt == PTO_DTYPE_BOOL) pto_text_printf(b, " = args->scalars[%d] != 0;\n", si++);
    else pto_text_printf(b, " = (%s)args->scalars[%d];\n", ctype(dt) ? ctype(dt) : "int", si++);
  }
  /* Dynamic symbols: bound from the first tensor parameter dim that names them. */
  for (int sym = 0; sym < p->nsyms; sym++) {
    for (int i = 0; i < f->nparams; i++) {
      const pto_ir_type *t = f->params[i].value->type;
      int found = -1;
      for (int d = 0; t->kind != PTO_TYPE_SCALAR && d < t->rank; d++)
        if (t->dims[d]->kind == PTO_EXPR_SYM && t->dims[d]->sym == sym) found = d;
      if (found < 0) continue;
      pto_text_printf(b, "  const int64_t s_%s = ", p->syms[sym]);
      vname(&E, f->params[i].value);
      pto_text_printf(b, ".shape[%d];\n", found);
      pto_text_printf(b, "  (void)s_%s;\n", p->syms[sym]);
      break;
    }
  }
  emit_block(&E, &f->body, 1, NULL, 0);
  pto_text_printf(b, "  return 0;\n}\n");
  char *text = pto_text_finish(b);
  if (E.err) {
    free(text);
    return E.err;
  }
  if (!text) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory emitting host code");
  *out_text = text;
  return PTO_OK;
}
