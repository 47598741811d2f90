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
 * zero loop step. A call without device= goes to device 0. What it shares with the
 * orchestration C++ (expressions, control flow) is the emitter core's (emit_c.c). */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit_internal.h"
#include "pto/base.h"
#include "pto/orch_abi.h"

typedef struct hemit {
  pto__emit c;                /* first: the core's state */
  const char *const *callees; /* orch names, call index order */
  int ncallees;
} hemit;

/* bool is an int; f16/bf16 scalars compute as float, rounded after every operation
 * (ph_round_f16, ph_round_bf16). */
static const char *ctype(pto_dtype dt) {
  if (dt == PTO_DTYPE_F16 || dt == PTO_DTYPE_BF16) return "float";
  return dt == PTO_DTYPE_BOOL ? "int" : pto__emit_c_type(dt);
}

static const char *dtype_enum(pto_dtype dt) {
  static const char *const names[PTO_DTYPE_COUNT] = {
      "PTO_DTYPE_BOOL", "PTO_DTYPE_I8",  "PTO_DTYPE_I16", "PTO_DTYPE_I32",  "PTO_DTYPE_I64",
      "PTO_DTYPE_U8",   "PTO_DTYPE_U16", "PTO_DTYPE_U32", "PTO_DTYPE_U64",  "PTO_DTYPE_F16",
      "PTO_DTYPE_BF16", "PTO_DTYPE_F32", "PTO_DTYPE_F64", "PTO_DTYPE_INDEX"};
  return (unsigned)dt < PTO_DTYPE_COUNT ? names[dt] : "0";
}

/* Whether x (NULL: no expression) may divide an integer by a runtime zero: then the statement
 * checks st.rc after it. */
static int divides(const pto_ir_expr *x) { return x && pto_ir_expr_divides_int(x); }

/* After a statement whose expressions may divide by zero: return the fatal code. */
static void check_rc(pto__emit *c, int depth) {
  pto__emit_line(c, depth, "if (st.rc) return st.rc;\n");
}

static void after_expr(pto__emit *c, const pto_ir_expr *x, int depth) {
  if (divides(x)) check_rc(c, depth);
}

static int arg_divides(const pto_ir_arg *a) {
  if (a->kind == PTO_ARG_EXPR) return divides(a->expr);
  if (a->kind == PTO_ARG_LIST)
    for (int i = 0; i < a->list.n; i++)
      if (divides(a->list.items[i])) return 1;
  return 0;
}

/* Integer min and max as macros, float ones as helpers that ignore a NaN and put +0 above -0
 * (as kernels and the interpreter), float '/' as itself, the rest as helpers that floor
 * (integer '/'), give mod the divisor's sign and fail on a zero divisor. */
static void binary_call(pto__emit *c, const pto_ir_expr *x) {
  const char *ct = ctype(x->dtype);
  if ((x->op == PTO_EOP_MIN || x->op == PTO_EOP_MAX) && pto_dtype_is_float(x->dtype)) {
    pto__emit_printf(c, "(%s)%s((double)", ct, x->op == PTO_EOP_MIN ? "ph_fmin" : "ph_fmax");
  } else if (x->op == PTO_EOP_MIN || x->op == PTO_EOP_MAX) {
    pto__emit_printf(c, "%s(", x->op == PTO_EOP_MIN ? "PH_MIN" : "PH_MAX");
  } else if (pto_dtype_is_float(x->dtype) && x->op == PTO_EOP_DIV) {
    pto__emit_printf(c, "(");
    pto__emit_expr(c, x->lhs);
    pto__emit_printf(c, " / ");
    pto__emit_expr(c, x->rhs);
    pto__emit_printf(c, ")");
    return;
  } else if (pto_dtype_is_float(x->dtype)) {
    pto__emit_printf(c, "(%s)ph_fmod((double)", ct);
  } else {
    int u = !pto_dtype_is_signed(x->dtype);
    pto__emit_printf(c, "(%s)ph_%s%s(&st, (%s)", ct, x->op == PTO_EOP_DIV ? "div" : "mod",
                     u ? "_u" : "", u ? "uint64_t" : "int64_t");
  }
  pto__emit_expr(c, x->lhs);
  pto__emit_printf(c, ", ");
  pto__emit_expr(c, x->rhs);
  pto__emit_printf(c, ")");
}

/* v; then a block that fills it: the lists an op takes as named arrays (`const int64_t
 * shape[n] = {...}`), the check for a division in them, and `if (helper(...)) return`. */
static void open_filled(pto__emit *c, const pto_ir_value *r, int depth) {
  pto__emit_line(c, depth, "%s", "");
  pto__emit_decl(c, r);
  pto__emit_printf(c, ";\n");
  pto__emit_line(c, depth, "{\n");
}

static void emit_array(pto__emit *c, const char *lead, const char *name, const pto_ir_arg *a) {
  pto__emit_printf(c, "%s%s[%d] = ", lead, name, a->list.n);
  pto__emit_list(c, a);
}

/* A value name as the text format spells it ([A-Za-z_][A-Za-z0-9_]*): safe in a C string. */
static int plain_name(const char *n) {
  if (!n || !*n || isdigit((unsigned char)*n)) return 0;
  for (; *n; n++)
    if (!isalnum((unsigned char)*n) && *n != '_') return 0;
  return 1;
}

static void emit_op(pto__emit *c, const pto_ir_stmt *s, int depth) {
  const pto_ir_arg *a = s->op.args;
  const pto_ir_value *r = s->nresults ? s->results[0] : NULL;
  int div = 0;
  for (int i = 0; i < s->op.nargs; i++)
    div |= arg_divides(&a[i]);
  switch (s->op.opc) {
  case PTO_OP_DIST_WORLD_SIZE:
    if (!r) return;
    pto__emit_line(c, depth, "%s", "");
    pto__emit_decl(c, r);
    pto__emit_printf(c, " = api->world_size(api->ctx);\n");
    return;
  case PTO_OP_TENSOR_CREATE:
  case PTO_OP_DIST_ALLOC_WINDOW:
    if (!r) return;
    open_filled(c, r, depth);
    pto__emit_line(c, depth + 1, "%s", "");
    emit_array(c, "const int64_t ", "shape", &a[0]);
    pto__emit_printf(c, ";\n");
    if (div) check_rc(c, depth + 1);
    pto__emit_line(c, depth + 1, "int32_t rc = api->%s(api->ctx, %d, shape, %s, &",
                   s->op.opc == PTO_OP_TENSOR_CREATE ? "create_tensor" : "alloc_window",
                   a[0].list.n, dtype_enum(a[1].dtype));
    pto__emit_vname(c, r);
    pto__emit_printf(c, ");\n");
    pto__emit_line(c, depth + 1, "if (rc) return rc;\n");
    /* The window's name as written, for the runtime's messages. */
    if (s->op.opc == PTO_OP_DIST_ALLOC_WINDOW && plain_name(r->name)) {
      pto__emit_line(c, depth + 1,
                     "if (PTO_HOST_API_HAS(api, name_window)) api->name_window(api->ctx, &");
      pto__emit_vname(c, r);
      pto__emit_printf(c, ", \"%s\");\n", r->name);
    }
    pto__emit_line(c, depth, "}\n");
    return;
  case PTO_OP_DIST_WINDOW:
    if (!r) return;
    pto__emit_line(c, depth, "%s", "");
    pto__emit_decl(c, r);
    pto__emit_printf(c, " = ");
    pto__emit_expr(c, a[0].expr);
    pto__emit_printf(c, ";\n");
    pto__emit_line(c, depth, "%s", "");
    pto__emit_vname(c, r);
    pto__emit_printf(c, ".window = 1;\n");
    return;
  case PTO_OP_TENSOR_DIM: {
    if (!r) return;
    int64_t axis = 0;
    pto_ir_expr_static_int(a[1].expr, &axis);
    pto__emit_line(c, depth, "%s", "");
    pto__emit_decl(c, r);
    pto__emit_printf(c, " = (%s)", ctype(r->type->dtype) ? ctype(r->type->dtype) : "int64_t");
    pto__emit_expr(c, a[0].expr);
    pto__emit_printf(c, ".shape[%" PRId64 "];\n", axis);
    return;
  }
  case PTO_OP_TENSOR_SLICE:
  case PTO_OP_TENSOR_RESHAPE: {
    if (!r) return;
    int slice = s->op.opc == PTO_OP_TENSOR_SLICE;
    open_filled(c, r, depth);
    pto__emit_line(c, depth + 1, "%s", "");
    if (slice) {
      emit_array(c, "const int64_t ", "offs", &a[1]);
      emit_array(c, ", ", "shape", &a[2]);
    } else {
      emit_array(c, "const int64_t ", "shape", &a[1]);
    }
    pto__emit_printf(c, ";\n");
    if (div) check_rc(c, depth + 1);
    pto__emit_line(c, depth + 1, "if (ph_%s(&st, &", slice ? "slice" : "reshape");
    pto__emit_expr(c, a[0].expr);
    pto__emit_printf(c, slice ? ", offs, shape, %d, &" : ", shape, %d, &", a[1].list.n);
    pto__emit_vname(c, r);
    pto__emit_printf(c, ")) return st.rc;\n");
    pto__emit_line(c, depth, "}\n");
    return;
  }
  case PTO_OP_TENSOR_SELECT:
    if (!r) return;
    open_filled(c, r, depth);
    pto__emit_line(c, depth + 1, "const int64_t idx = (int64_t)");
    pto__emit_expr(c, a[1].expr);
    pto__emit_printf(c, ";\n");
    if (div) check_rc(c, depth + 1);
    pto__emit_line(c, depth + 1, "if (ph_select(&st, &");
    pto__emit_expr(c, a[0].expr);
    pto__emit_printf(c, ", idx, &");
    pto__emit_vname(c, r);
    pto__emit_printf(c, ")) return st.rc;\n");
    pto__emit_line(c, depth, "}\n");
    return;
  default: {
    const pto_op_info *info = pto_op_info_get(s->op.opc);
    char msg[128];
    snprintf(msg, sizeof msg, "%s is not a host op", info ? info->name : "op");
    pto__emit_fail(c, s->loc, msg);
  }
  }
}

static int callee_index(hemit *e, const char *name) {
  for (int i = 0; i < e->ncallees; i++)
    if (strcmp(e->callees[i], name) == 0) return i;
  return -1;
}

/* One argument of a call: a scalar into its 64-bit slot, a tensor with its direction. */
static void emit_call_arg(pto__emit *c, const pto_ir_stmt *s, const pto_ir_param *prm, int i,
                          int depth) {
  const pto_ir_expr *x = s->call.args[i];
  if (prm->value->type->kind != PTO_TYPE_SCALAR) {
    static const char *const kinds[] = {"PTO_ORCH_ARG_IN", "PTO_ORCH_ARG_OUT",
                                        "PTO_ORCH_ARG_INOUT"};
    pto__emit_line(c, depth, "a[%d].kind = %s; a[%d].tensor = ", i, kinds[prm->dir], i);
    pto__emit_expr(c, x);
    pto__emit_printf(c, ";\n");
    return;
  }
  pto_dtype dt = prm->value->type->dtype;
  pto__emit_line(c, depth, "a[%d].kind = PTO_ORCH_ARG_SCALAR; a[%d].scalar = ", i, i);
  if (dt == PTO_DTYPE_F16 || dt == PTO_DTYPE_BF16)
    pto__emit_printf(c, "(uint64_t)ph_%s_bits(", dt == PTO_DTYPE_F16 ? "f16" : "bf16");
  else if (dt == PTO_DTYPE_F32)
    pto__emit_printf(c, "ph_slot_f32((float)");
  else if (dt == PTO_DTYPE_F64)
    pto__emit_printf(c, "ph_slot_f64((double)");
  else if (dt == PTO_DTYPE_BOOL)
    pto__emit_printf(c, "(uint64_t)(0 != ");
  else if (!pto_dtype_is_signed(dt))
    pto__emit_printf(c, "(uint64_t)(");
  else
    pto__emit_printf(c, "(uint64_t)(int64_t)(");
  pto__emit_ctype(c, dt, s->loc);
  pto__emit_expr(c, x);
  pto__emit_printf(c, ");\n");
}

static void emit_call(pto__emit *c, const pto_ir_stmt *s, int depth) {
  hemit *e = (hemit *)c;
  const pto_ir_func *g = s->call.callee;
  int idx = callee_index(e, g->name);
  if (g->kind != PTO_FUNC_ORCH || idx < 0) {
    pto__emit_fail(c, s->loc, "a host calls orch functions only");
    return;
  }
  int div = divides(s->call.device);
  for (int i = 0; i < s->call.nargs; i++)
    div |= divides(s->call.args[i]);
  pto__emit_line(c, depth, "{ /* call @%s */\n", g->name);
  pto__emit_line(c, depth + 1, "pto_host_call_arg a[%d];\n", s->call.nargs > 0 ? s->call.nargs : 1);
  pto__emit_line(c, depth + 1, "memset(a, 0, sizeof a);\n");
  pto__emit_line(c, depth + 1, "const int64_t device = ");
  if (s->call.device)
    pto__emit_int64(c, s->call.device);
  else
    pto__emit_printf(c, "0");
  pto__emit_printf(c, ";\n");
  for (int i = 0; i < s->call.nargs && i < g->nparams; i++)
    emit_call_arg(c, s, &g->params[i], i, depth + 1);
  if (div) check_rc(c, depth + 1);
  pto__emit_line(c, depth + 1, "if (ph_check_device(&st, device, \"@%s\")) return st.rc;\n",
                 g->name);
  pto__emit_line(c, depth + 1, "int32_t rc = api->call(api->ctx, %d, device, a, %d);\n", idx,
                 s->call.nargs);
  pto__emit_line(c, depth + 1, "if (rc) return rc;\n");
  pto__emit_line(c, depth, "}\n");
  pto__emit_call_results(c, s, depth);
}

/* for: the bounds once, in a block; a zero step is fatal, a negative one counts down, and a step
 * past INT64_MAX (INT64_MIN) ends the loop instead of wrapping around. */
static void emit_loop(pto__emit *c, const pto_ir_stmt *s, int depth) {
  pto__emit_line(c, depth, "{\n");
  pto__emit_line(c, depth + 1, "const int64_t lo = ");
  pto__emit_int64(c, s->loop.lo);
  pto__emit_printf(c, ", hi = ");
  pto__emit_int64(c, s->loop.hi);
  pto__emit_printf(c, ", step = ");
  if (s->loop.step)
    pto__emit_int64(c, s->loop.step);
  else
    pto__emit_printf(c, "1");
  pto__emit_printf(c, ";\n");
  if (divides(s->loop.lo) || divides(s->loop.hi) || divides(s->loop.step)) check_rc(c, depth + 1);
  pto__emit_line(c, depth + 1,
                 "if (step == 0) return ph_fatal(&st, PTO_KERNEL_ERR_DIM_MISMATCH, \"for: the step "
                 "is zero\");\n");
  const pto_ir_value *iv = s->loop.iv;
  pto__emit_line(c, depth + 1, "for (int64_t ");
  pto__emit_vname(c, iv);
  pto__emit_printf(c, " = lo; step > 0 ? ");
  pto__emit_vname(c, iv);
  pto__emit_printf(c, " < hi : ");
  pto__emit_vname(c, iv);
  pto__emit_printf(c, " > hi; ");
  pto__emit_vname(c, iv);
  pto__emit_printf(c, " = __builtin_add_overflow(");
  pto__emit_vname(c, iv);
  pto__emit_printf(c, ", step, &");
  pto__emit_vname(c, iv);
  pto__emit_printf(c, ") ? hi : ");
  pto__emit_vname(c, iv);
  pto__emit_printf(c, ") {\n");
  pto__emit_block(c, &s->loop.body, depth + 2, s->loop.iters, s->loop.niters);
  pto__emit_line(c, depth + 1, "}\n");
  pto__emit_line(c, depth, "}\n");
}

static void bind_sym(pto__emit *c, int sym, const pto_ir_value *v, int dim) {
  pto__emit_printf(c, "  const int64_t s_%s = ", c->p->syms[sym]);
  pto__emit_vname(c, v);
  pto__emit_printf(c, ".shape[%d];\n", dim);
  pto__emit_printf(c, "  (void)s_%s;\n", c->p->syms[sym]);
}

static const pto__emit_dialect k_host = {
    .what = "host codegen",
    .cxx = 0,
    .tensor_type = "pto_host_ref",
    .alias_decl = "pto_host_ref ",
    .if_tensor_init = " = {0}",
    .if_scalar_init = " = 0",
    .scope_open = NULL,
    .no_ctype = "a scalar of this dtype has no C type",
    .round_prefix = "ph_",
    .incore = "an incore scope in a host function",
    .ctype = ctype,
    .binary_call = binary_call,
    .op = emit_op,
    .call = emit_call,
    .loop = emit_loop,
    .after_expr = after_expr,
    .bind_sym = bind_sym,
};

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
    "/* PTIR's float -> integer cast of `bits` bits: toward zero, saturated, NaN -> 0. */\n"
    "static int64_t ph_f2s(double x, int bits) {\n"
    "  double hi = ldexp(1.0, bits - 1);\n"
    "  if (x != x) return 0;\n"
    "  if (x >= hi) return bits == 64 ? INT64_MAX : (int64_t)hi - 1;\n"
    "  if (x <= -hi) return bits == 64 ? INT64_MIN : -(int64_t)hi;\n"
    "  return (int64_t)x;\n"
    "}\n"
    "static uint64_t ph_f2u(double x, int bits) {\n"
    "  double hi = ldexp(1.0, bits);\n"
    "  if (x != x || x <= 0) return 0;\n"
    "  if (x >= hi) return bits == 64 ? UINT64_MAX : (uint64_t)hi - 1;\n"
    "  return (uint64_t)x;\n"
    "}\n"
    "static double ph_fmod(double a, double b) {\n"
    "  double m = fmod(a, b);\n"
    "  if (m == 0) return copysign(0.0, b);\n"
    "  return ((m < 0) != (b < 0)) ? m + b : m;\n"
    "}\n"
    "static double ph_fmin(double a, double b) {\n"
    "  if (a != a) return b;\n"
    "  if (b != b) return a;\n"
    "  if (a == b) return signbit(a) ? a : b;\n"
    "  return a < b ? a : b;\n"
    "}\n"
    "static double ph_fmax(double a, double b) {\n"
    "  if (a != a) return b;\n"
    "  if (b != b) return a;\n"
    "  if (a == b) return signbit(a) ? b : a;\n"
    "  return a > b ? a : b;\n"
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
    "/* f16 and bf16 scalars are floats holding an f16 (bf16) value: each result is rounded once\n"
    " * to nearest-even (round to odd into float first), and slots carry the 16 bits. */\n"
    "static float ph_f16_value(uint16_t h) {\n"
    "  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;\n"
    "  if (exp == 0 && man == 0) {\n"
    "    bits = sign;\n"
    "  } else if (exp == 0) {\n"
    "    int e = -1;\n"
    "    do {\n"
    "      man <<= 1;\n"
    "      e++;\n"
    "    } while (!(man & 0x400));\n"
    "    bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ff) << 13;\n"
    "  } else if (exp == 31) {\n"
    "    bits = sign | 0x7f800000u | man << 13;\n"
    "  } else {\n"
    "    bits = sign | (exp + 127 - 15) << 23 | man << 13;\n"
    "  }\n"
    "  float f;\n"
    "  memcpy(&f, &bits, 4);\n"
    "  return f;\n"
    "}\n"
    "static uint16_t ph_f16_bits(float f) {\n"
    "  uint32_t x;\n"
    "  memcpy(&x, &f, 4);\n"
    "  uint32_t sign = (x >> 16) & 0x8000, man = x & 0x7fffff;\n"
    "  int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;\n"
    "  if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));\n"
    "  if (exp >= 31) return (uint16_t)(sign | 0x7c00);\n"
    "  if (exp <= 0) {\n"
    "    if (exp < -10) return (uint16_t)sign;\n"
    "    man |= 0x800000;\n"
    "    uint32_t shift = (uint32_t)(14 - exp);\n"
    "    uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);\n"
    "    if (rem > half || (rem == half && (h & 1))) h++;\n"
    "    return (uint16_t)(sign | h);\n"
    "  }\n"
    "  uint32_t h = (uint32_t)exp << 10 | man >> 13, rem = man & 0x1fff;\n"
    "  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;\n"
    "  return (uint16_t)(sign | h);\n"
    "}\n"
    "static float ph_bf16_value(uint16_t b) {\n"
    "  uint32_t bits = (uint32_t)b << 16;\n"
    "  float f;\n"
    "  memcpy(&f, &bits, 4);\n"
    "  return f;\n"
    "}\n"
    "static uint16_t ph_bf16_bits(float f) {\n"
    "  uint32_t x;\n"
    "  memcpy(&x, &f, 4);\n"
    "  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);\n"
    "  x += 0x7fff + ((x >> 16) & 1);\n"
    "  return (uint16_t)(x >> 16);\n"
    "}\n"
    "static float ph_round_odd(double x) {\n"
    "  float f = (float)x;\n"
    "  if (x != x || (double)f == x) return f;\n"
    "  if (fabs((double)f) > fabs(x)) f = nextafterf(f, 0.0f);\n"
    "  uint32_t b;\n"
    "  memcpy(&b, &f, 4);\n"
    "  b |= 1u;\n"
    "  memcpy(&f, &b, 4);\n"
    "  return f;\n"
    "}\n"
    "static float ph_round_f16(double x) { return ph_f16_value(ph_f16_bits(ph_round_odd(x))); }\n"
    "static float ph_round_bf16(double x) { return ph_bf16_value(ph_bf16_bits(ph_round_odd(x))); "
    "}\n"
    "\n"
    "/* tensor.slice: clamped at the edge (only the extent); an offset outside the extent is "
    "fatal. */\n"
    "static int ph_slice(ph_state *st, const pto_host_ref *src, const int64_t *offs,\n"
    "                    const int64_t *shape, int n, pto_host_ref *out) {\n"
    "  *out = *src;\n"
    "  for (int d = 0; d < n; d++) {\n"
    "    if (offs[d] < 0 || offs[d] >= src->shape[d]) {\n"
    "      char msg[160];\n"
    "      snprintf(msg, sizeof msg, \"tensor.slice: offset %lld of dim %d is outside the extent "
    "%lld\",\n"
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
    "      snprintf(msg, sizeof msg, \"tensor.reshape: the tensor has %lld elements, the shape "
    "%lld\",\n"
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
    "static int ph_select(ph_state *st, const pto_host_ref *src, int64_t idx, pto_host_ref *out) "
    "{\n"
    "  if (src->rank < 2 || idx < 0 || idx >= src->shape[0]) {\n"
    "    char msg[160];\n"
    "    snprintf(msg, sizeof msg, \"tensor.select: index %lld is outside the extent %lld of dim "
    "0\",\n"
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
    "  snprintf(msg, sizeof msg, \"call %s: device=%lld is outside the %lld devices (0..%lld)\", "
    "callee,\n"
    "           (long long)device, (long long)n, (long long)(n - 1));\n"
    "  ph_fatal(st, PTO_KERNEL_ERR_DIST, msg);\n"
    "  return 1;\n"
    "}\n";

/* The entry's parameters: tensors as given, scalars from their slots (or the literal where the
 * signature specialized them: the slot stays). */
static void emit_params(pto__emit *c, const pto_ir_func *f) {
  int ti = 0, si = 0;
  for (int i = 0; i < f->nparams; i++) {
    const pto_ir_param *prm = &f->params[i];
    const pto_ir_value *v = prm->value;
    pto__emit_printf(c, "  const ");
    pto__emit_decl(c, v);
    if (v->type->kind != PTO_TYPE_SCALAR) {
      pto__emit_printf(c, " = args->tensors[%d];\n", ti++);
      continue;
    }
    pto_dtype dt = v->type->dtype;
    if (prm->bind == PTO_BIND_LITERAL && prm->literal) {
      pto__emit_printf(c, " = ");
      pto__emit_expr(c, prm->literal);
      pto__emit_printf(c, "; /* specialized; slot %d */\n", si++);
    } else if (dt == PTO_DTYPE_F16 || dt == PTO_DTYPE_BF16) {
      pto__emit_printf(c, " = ph_%s_value((uint16_t)args->scalars[%d]);\n",
                       dt == PTO_DTYPE_F16 ? "f16" : "bf16", si++);
    } else if (dt == PTO_DTYPE_F32) {
      pto__emit_printf(c, " = ph_unslot_f32(args->scalars[%d]);\n", si++);
    } else if (dt == PTO_DTYPE_F64) {
      pto__emit_printf(c, " = ph_unslot_f64(args->scalars[%d]);\n", si++);
    } else if (dt == PTO_DTYPE_BOOL) {
      pto__emit_printf(c, " = args->scalars[%d] != 0;\n", si++);
    } else {
      pto__emit_printf(c, " = (%s)args->scalars[%d];\n", ctype(dt) ? ctype(dt) : "int", si++);
    }
  }
}

pto_status pto__emit_host(const pto_ir_program *p, const pto_ir_func *f, const char *const *callees,
                          int ncallees, char **out_text) {
  *out_text = NULL;
  hemit e = {.c = {.d = &k_host, .p = p}, .callees = callees, .ncallees = ncallees};
  pto__emit *c = &e.c;
  pto__emit_printf(c, "/* Generated by pto from %s: host @%s of program %s.\n",
                   pto__emit_source_name(p, "<program>"), f->name, p->name);
  pto__emit_printf(
      c, " * Hand-editable: `pto rebuild DIR` (or loading the work dir) rebuilds host.so.\n");
  pto__emit_printf(c, " * Calls, by orch_index:");
  for (int i = 0; i < ncallees; i++)
    pto__emit_printf(c, " %d=@%s", i, callees[i]);
  pto__emit_printf(c, " */\n");
  pto__emit_printf(
      c, "#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n\n");
  pto__emit_printf(c, "#include \"pto/host_abi.h\"\n#include \"pto/kernel_abi.h\"\n#include "
                      "\"pto/orch_abi.h\"\n\n");
  pto__emit_printf(c, "%s\n", k_helpers);
  pto__emit_printf(c, "uint32_t pto_host_abi_version(void) { return PTO_HOST_ABI_VERSION; }\n\n");
  pto__emit_printf(
      c, "int32_t pto_host_entry(const pto_host_api *api, const pto_host_args *args) {\n");
  pto__emit_printf(c, "  ph_state st = {api, 0};\n");
  int nt = 0, ns = 0;
  for (int i = 0; i < f->nparams; i++) {
    if (f->params[i].value->type->kind != PTO_TYPE_SCALAR)
      nt++;
    else
      ns++;
  }
  pto__emit_printf(c, "  if (args->ntensors != %d || args->nscalars != %d)\n", nt, ns);
  pto__emit_printf(c,
                   "    return ph_fatal(&st, PTO_KERNEL_ERR_DIM_MISMATCH, \"host @%s: expected %d "
                   "tensors and %d scalars\");\n",
                   f->name, nt, ns);
  emit_params(c, f);
  pto__emit_bind_syms(c, f);
  pto__emit_block(c, &f->body, 1, NULL, 0);
  pto__emit_printf(c, "  return 0;\n}\n");
  return pto__emit_finish(c, "host code", out_text);
}
