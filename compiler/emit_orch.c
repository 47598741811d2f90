/* The orchestration emitter: an orch function becomes C++ against pto_orchestration_api.h.
 *
 * The output is meant to be read and hand-edited (work dirs are rebuilt from it), so it keeps
 * the PTIR names (v<id>_<name>), one C++ statement per PTIR statement, and a comment with the
 * source line of each call. Tensors are ChipTensor values (views), scalars native C++ types;
 * index is int64_t. Integer '/' floors and mod takes the sign of the divisor, as in PTIR. A
 * loop also ends at the first fatal error of the launch (rt_is_fatal), and its induction
 * variable never steps past INT64_MAX/INT64_MIN (pto_step). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit_internal.h"
#include "pto/base.h"
#include "pto/orch_abi.h"

/* A statement of the source entry by position: its op id (pre-order number) and kind. */
typedef struct op_pos {
  int line, col, kind, id;
} op_pos;

typedef struct emitter {
  pto__emit c; /* first: the core's state */
  const pto_ir_func *f;
  const pto_signature *sig;
  const int *kernel_ids;
  const pto_ir_func *src; /* the entry as the caller gave it (op ids number its statements) */
  op_pos *ops;            /* src's statements sorted by (line, col, id): one walk, then lookups */
  int nops;
  int tmp; /* counter for emitter temporaries */
} emitter;

/* index is int64_t; f16/bf16 scalars compute as float. */
static const char *ctype(pto_dtype dt) {
  switch (dt) {
  case PTO_DTYPE_BOOL: return "bool";
  case PTO_DTYPE_F16:
  case PTO_DTYPE_BF16: return "float";
  default: return pto__emit_c_type(dt);
  }
}

/* The PTO2 DataType enumerator of a dtype. */
static const char *datatype_name(pto_dtype dt) {
  static const char *const names[PTO_DTYPE_COUNT] = {
      "BOOL",   "INT8",   "INT16",   "INT32",    "INT64",   "UINT8",   "UINT16",
      "UINT32", "UINT64", "FLOAT16", "BFLOAT16", "FLOAT32", "FLOAT64", "INDEX"};
  return (unsigned)dt < PTO_DTYPE_COUNT ? names[dt] : "FLOAT32";
}

/* Before a statement that can fail at launch: records its op id (its pre-order number in the
 * entry as given, pto_ir_func_stmt_index) in pto_orch_current_op, which the runtime reads when
 * the launch fails and looks up in the program's position table. The id, not the position, is
 * in the code: positions stay out of the cache key, and a program whose lines moved shares the
 * binary. */
static int cmp_op_pos(const void *a, const void *b) {
  const op_pos *x = a, *y = b;
  if (x->line != y->line) return x->line < y->line ? -1 : 1;
  if (x->col != y->col) return x->col < y->col ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Lists src's statements by position, in one walk (so that finding each statement's op id is a
 * search, not a walk from the start: compile time stays linear in the statement count). */
static pto_status index_ops(emitter *e) {
  const pto_ir_stmt **stmts = NULL;
  int n = 0;
  PTO_RETURN_IF_ERROR(pto_ir_func_stmts(e->src, &stmts, &n));
  e->ops = pto_malloc((size_t)(n ? n : 1) * sizeof *e->ops);
  if (!e->ops) {
    free(stmts);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory emitting the orchestration");
  }
  for (int i = 0; i < n; i++)
    e->ops[i] = (op_pos){stmts[i]->loc.line, stmts[i]->loc.col, (int)stmts[i]->kind, i};
  e->nops = n;
  free(stmts);
  qsort(e->ops, (size_t)n, sizeof *e->ops, cmp_op_pos);
  return PTO_OK;
}

/* The op id of s: the first statement of src (in pre-order) at s's position, as
 * pto_ir_func_stmt_index finds it; else, since passes may move a statement's column (a rebuilt for
 * takes the position of its range), the first of its kind on its line; else -1. */
static int op_id_of(const emitter *e, const pto_ir_stmt *s) {
  if (s->loc.line <= 0) return -1;
  int lo = 0, hi = e->nops; /* the first entry at or after (line, 0) */
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (e->ops[mid].line < s->loc.line)
      lo = mid + 1;
    else
      hi = mid;
  }
  int same_kind = -1;
  for (int i = lo; i < e->nops && e->ops[i].line == s->loc.line; i++) {
    if (e->ops[i].col == s->loc.col) return e->ops[i].id; /* lowest id first among equals */
    if (e->ops[i].kind == (int)s->kind && (same_kind < 0 || e->ops[i].id < same_kind))
      same_kind = e->ops[i].id;
  }
  return same_kind;
}

static void emit_op_id(emitter *e, const pto_ir_stmt *s, int depth) {
  int id = op_id_of(e, s);
  if (id >= 0) pto__emit_line(&e->c, depth, "pto_orch_current_op = %d;\n", id);
}

/* A runtime zero divisor fails the launch: the statement names itself first. */
static void before_expr(pto__emit *c, const pto_ir_stmt *s, const pto_ir_expr *x, int depth) {
  if (pto_ir_expr_divides_int(x)) emit_op_id((emitter *)c, s, depth);
}

static void emit_call(pto__emit *c, const pto_ir_stmt *s, int depth) {
  emitter *e = (emitter *)c;
  const pto_ir_func *k = s->call.callee;
  if (k->kind != PTO_FUNC_KERNEL) {
    pto__emit_fail(c, s->loc, "calls from an orch to a non-kernel function are not supported yet");
    return;
  }
  int t = e->tmp++;
  emit_op_id(e, s, depth);
  pto__emit_line(c, depth, "{  // %s:%d call @%s\n", pto__emit_source_name(c->p, "<builder>"),
                 s->loc.line, k->name);
  pto__emit_line(c, depth + 1, "CoreTaskArgs t%d;\n", t);
  for (int i = 0; i < s->call.nargs && i < k->nparams; i++) {
    const pto_ir_param *kp = &k->params[i];
    if (kp->value->type->kind == PTO_TYPE_SCALAR) {
      pto__emit_line(c, depth + 1, "t%d.add_scalar(pto_slot(static_cast<%s>(", t,
                     ctype(kp->value->type->dtype));
      pto__emit_expr(c, s->call.args[i]);
      pto__emit_printf(c, "), %d));\n", (int)kp->value->type->dtype);
    } else {
      const char *fn = kp->dir == PTO_DIR_OUT     ? "add_output"
                       : kp->dir == PTO_DIR_INOUT ? "add_inout"
                                                  : "add_input";
      pto__emit_line(c, depth + 1, "t%d.%s(", t, fn);
      pto__emit_expr(c, s->call.args[i]);
      pto__emit_printf(c, ");\n");
    }
  }
  /* A parameter's static extent where the argument's is dynamic (a slice clamped at the edge):
   * checked here, at launch (docs/language.md), since the kernel was compiled for the static shape
   * and would read or write past the view. The submit is skipped on a mismatch. */
  int checks = 0;
  for (int i = 0; i < s->call.nargs && i < k->nparams; i++) {
    const pto_ir_type *pt = k->params[i].value->type;
    if (pt->kind == PTO_TYPE_SCALAR || s->call.args[i]->kind != PTO_EXPR_VALUE) continue;
    const pto_ir_type *vt = s->call.args[i]->value->type;
    int need = 0;
    int64_t want[PTO_MAX_RANK], got;
    for (int d = 0; d < pt->rank && d < vt->rank; d++) {
      want[d] = pto_ir_expr_static_int(pt->dims[d], &got) == 0 ? got : -1;
      if (want[d] >= 0 && pto_ir_expr_static_int(vt->dims[d], &got) != 0) need = 1;
    }
    if (!need) continue;
    if (checks++)
      pto__emit_printf(c, " &&\n%*spto_param_fits(", 2 * (depth + 2), "");
    else
      pto__emit_line(c, depth + 1, "const bool ok = pto_param_fits(");
    pto__emit_expr(c, s->call.args[i]);
    pto__emit_printf(c, ", \"%s\", \"%s\", {", k->name, k->params[i].value->name);
    for (int d = 0; d < pt->rank; d++)
      pto__emit_printf(c, "%s%lld", d ? ", " : "", (long long)want[d]);
    pto__emit_printf(c, "})");
  }
  if (checks) pto__emit_printf(c, ";\n");
  int core = pto__kernel_core_type(k);
  pto__emit_line(c, depth + 1, "%s%s(%d, t%d);\n", checks ? "if (ok) " : "",
                 core == PTO_CORE_AIC ? "rt_submit_aic_task" : "rt_submit_aiv_task",
                 e->kernel_ids[k->index], t);
  pto__emit_line(c, depth, "}\n");
  pto__emit_call_results(c, s, depth);
}

/* const ChipTensor v = fn(args...); for the view ops and tensor.create. */
static void emit_view_op(pto__emit *c, const pto_ir_stmt *s, int depth) {
  const pto_ir_arg *a = s->op.args;
  const pto_ir_value *r = s->nresults ? s->results[0] : NULL;
  int opc = s->op.opc;
  const char *type = opc == PTO_OP_TENSOR_DIM    ? "int64_t"
                     : opc == PTO_OP_TENSOR_READ ? ctype(r->type->dtype)
                                                 : "ChipTensor";
  pto__emit_line(c, depth, "const %s ", type);
  pto__emit_vname(c, r);
  switch (opc) {
  case PTO_OP_TENSOR_CREATE:
    pto__emit_printf(c, " = pto_create(");
    pto__emit_list(c, &a[0]);
    pto__emit_printf(c, ", DataType::%s);\n", datatype_name(a[1].dtype));
    return;
  case PTO_OP_TENSOR_SELECT:
    pto__emit_printf(c, " = pto_select(");
    pto__emit_expr(c, a[0].expr);
    pto__emit_printf(c, ", int64_t(");
    pto__emit_expr(c, a[1].expr);
    pto__emit_printf(c, "));\n");
    return;
  case PTO_OP_TENSOR_DIM:
    pto__emit_printf(c, " = pto_dim(");
    pto__emit_expr(c, a[0].expr);
    pto__emit_printf(c, ", ");
    pto__emit_expr(c, a[1].expr);
    pto__emit_printf(c, ");\n");
    return;
  default: break;
  }
  /* slice(t, offsets, shape), reshape(t, shape), read<T>(t, index): a tensor, then lists. */
  if (opc == PTO_OP_TENSOR_READ)
    pto__emit_printf(c, " = pto_read<%s>(", type);
  else
    pto__emit_printf(c, " = pto_%s(", opc == PTO_OP_TENSOR_SLICE ? "slice" : "reshape");
  pto__emit_expr(c, a[0].expr);
  for (int i = 1; i < s->op.nargs && i <= (opc == PTO_OP_TENSOR_SLICE ? 2 : 1); i++) {
    pto__emit_printf(c, ", ");
    pto__emit_list(c, &a[i]);
  }
  pto__emit_printf(c, ");\n");
}

static void emit_op(pto__emit *c, const pto_ir_stmt *s, int depth) {
  switch (s->op.opc) {
  case PTO_OP_TENSOR_DIM: emit_view_op(c, s, depth); return; /* cannot fail: no op id */
  case PTO_OP_TENSOR_SLICE:
  case PTO_OP_TENSOR_RESHAPE:
  case PTO_OP_TENSOR_SELECT:
  case PTO_OP_TENSOR_CREATE:
  case PTO_OP_TENSOR_READ:
    emit_op_id((emitter *)c, s, depth);
    emit_view_op(c, s, depth);
    return;
  default: {
    const pto_op_info *info = pto_op_info_get(s->op.opc);
    char msg[128];
    snprintf(msg, sizeof msg, "%s is not an orchestration op", info ? info->name : "op");
    emit_op_id((emitter *)c, s, depth);
    pto__emit_fail(c, s->loc, msg);
  }
  }
}

/* A step known to be positive (absent, or a literal the verifier checked) keeps the plain form;
 * a runtime step may be negative (counts down, as in the interpreter) or zero (a launch error,
 * never an endless loop). The code carries an op id, never a position: the cache key leaves
 * positions out, so a cached binary may serve a program whose lines moved (the runtime finds the
 * position in the caller's table). */
static void emit_loop(pto__emit *c, const pto_ir_stmt *s, int depth) {
  int64_t step_value = 1;
  int plain =
      !s->loop.step || (pto_ir_expr_static_int(s->loop.step, &step_value) == 0 && step_value > 0);
  if (!plain) emit_op_id((emitter *)c, s, depth);
  pto__emit_line(c, depth, "for (int64_t ");
  pto__emit_vname(c, s->loop.iv);
  pto__emit_printf(c, " = ");
  pto__emit_expr(c, s->loop.lo);
  pto__emit_printf(c, "; ");
  if (plain) {
    pto__emit_vname(c, s->loop.iv);
    pto__emit_printf(c, " < ");
    pto__emit_expr(c, s->loop.hi);
  } else {
    pto__emit_printf(c, "pto_in_range(");
    pto__emit_vname(c, s->loop.iv);
    pto__emit_printf(c, ", ");
    pto__emit_expr(c, s->loop.hi);
    pto__emit_printf(c, ", ");
    pto__emit_expr(c, s->loop.step);
    pto__emit_printf(c, ")");
  }
  /* The first fatal error (a bad slice, a failed kernel) ends every loop at its next
   * iteration: the launch returns at once instead of running the remaining iterations. */
  pto__emit_printf(c, " && !rt_is_fatal(); ");
  pto__emit_vname(c, s->loop.iv);
  if (!s->loop.step || (plain && step_value == 1)) {
    pto__emit_printf(c, " += 1) {\n"); /* i < hi: i + 1 cannot overflow */
  } else {
    /* A step past INT64_MAX (INT64_MIN) ends the loop instead of wrapping around. */
    pto__emit_printf(c, " = pto_step(");
    pto__emit_vname(c, s->loop.iv);
    pto__emit_printf(c, ", ");
    pto__emit_expr(c, s->loop.step);
    pto__emit_printf(c, ", ");
    pto__emit_expr(c, s->loop.hi);
    pto__emit_printf(c, ")) {\n");
  }
  pto__emit_block(c, &s->loop.body, depth + 1, s->loop.iters, s->loop.niters);
  pto__emit_line(c, depth, "}\n");
}

/* div, mod, min and max as the header's templates (integer '/' floors, mod has the divisor's
 * sign, as in PTIR). */
static void binary_call(pto__emit *c, const pto_ir_expr *x) {
  const char *fn = x->op == PTO_EOP_DIV   ? "pto_div"
                   : x->op == PTO_EOP_MOD ? "pto_mod"
                   : x->op == PTO_EOP_MIN ? "pto_min"
                                          : "pto_max";
  pto__emit_printf(c, "%s<%s>(", fn, ctype(x->dtype));
  pto__emit_expr(c, x->lhs);
  pto__emit_printf(c, ", ");
  pto__emit_expr(c, x->rhs);
  pto__emit_printf(c, ")");
}

static void bind_sym(pto__emit *c, int sym, const pto_ir_value *v, int dim) {
  pto__emit_printf(c, "  const int64_t s_%s = pto_dim(", c->p->syms[sym]);
  pto__emit_vname(c, v);
  pto__emit_printf(c, ", %d);\n", dim);
}

static const pto__emit_dialect k_orch = {
    .what = "orchestration codegen",
    .cxx = 1,
    .tensor_type = "ChipTensor",
    .alias_decl = "const ChipTensor &",
    .if_tensor_init = "{}",
    .if_scalar_init = "{}",
    .scope_open = "PTO2_SCOPE() {",
    .no_ctype = "a scalar of this dtype has no C++ type",
    .round_prefix = "pto_",
    .incore = "incore scope was not outlined",
    .ctype = ctype,
    .binary_call = binary_call,
    .op = emit_op,
    .call = emit_call,
    .loop = emit_loop,
    .before_expr = before_expr,
    .bind_sym = bind_sym,
    .part_open = "[&]() __attribute__((noinline)) {",
    .part_close = "}();",
};

/* The entry's parameters: tensors by reference into the arguments, scalars from their slots
 * (or baked in where the signature specialized them: the slot stays in the ABI). */
static void emit_params(emitter *e) {
  pto__emit *c = &e->c;
  int ti = 0, si = 0;
  for (int i = 0; i < e->f->nparams; i++) {
    const pto_ir_value *v = e->f->params[i].value;
    const pto_sig_param *sp = &e->sig->params[i];
    if (v->type->kind != PTO_TYPE_SCALAR) {
      pto__emit_printf(c, "  const ChipTensor &");
      pto__emit_vname(c, v);
      pto__emit_printf(c, " = args.tensor(%d).ref();\n", ti++);
      continue;
    }
    pto__emit_printf(c, "  const %s ", ctype(sp->dtype));
    pto__emit_vname(c, v);
    if (sp->bind != PTO_BIND_LITERAL) {
      pto__emit_printf(c, " = pto_unslot<%s>(args.scalar(%d), %d);\n", ctype(sp->dtype), si++,
                       (int)sp->dtype);
      continue;
    }
    pto_ir_expr lit = {.kind = pto_dtype_is_float(sp->dtype) ? PTO_EXPR_FLOAT : PTO_EXPR_INT,
                       .dtype = sp->dtype};
    if (lit.kind == PTO_EXPR_FLOAT)
      lit.f = sp->value.f;
    else
      lit.i = sp->value.i;
    if (sp->dtype == PTO_DTYPE_BOOL) {
      lit.kind = PTO_EXPR_BOOL;
      lit.b = sp->value.i != 0;
    }
    pto__emit_printf(c, " = ");
    pto__emit_expr(c, &lit);
    pto__emit_printf(c, ";  // specialized at compile time (slot %d)\n", si++);
  }
}

/* The helpers generated code calls (pto_slice, pto_create, pto_read, pto_slot, pto_div, ...)
 * live in pto_orchestration_api.h, namespace pto_codegen. */
static const char k_prelude[] = "using namespace pto_codegen;\n";

pto_status pto__emit_orchestration(const pto_ir_program *p, const pto_ir_func *f,
                                   const pto_ir_func *src, const pto_signature *sig,
                                   const int *kernel_ids, char **out_text, int *out_calls,
                                   int *out_parts) {
  *out_text = NULL;
  *out_calls = *out_parts = 0;
  emitter e = {
      .c = {.d = &k_orch, .p = p}, .f = f, .sig = sig, .kernel_ids = kernel_ids, .src = src};
  PTO_RETURN_IF_ERROR(index_ops(&e));
  pto__emit *c = &e.c;
  int nparams = f->nparams;
  pto__emit_printf(
      c,
      "// Orchestration of @%s, program %s. Generated by pto from %s; edit freely, then run\n"
      "// `pto rebuild` on the work dir.\n",
      f->name, p->name, pto__emit_source_name(p, "<builder>"));
  if (f->kernel_entry)
    pto__emit_printf(c, "// It runs kernel @%s as the entry (--entry %s), as one task.\n",
                     f->kernel_entry, f->kernel_entry);
  pto__emit_printf(c, "#include \"pto/pto_orchestration_api.h\"\n\n");
  pto__emit_printf(c, "%s\n", k_prelude);
  pto__emit_printf(c, "extern \"C\" {\n\n");
  pto__emit_printf(
      c, "// The statement running (its op id), for launch errors: the runtime reads it when a "
         "launch\n"
         "// fails and finds the source position in the program's position table.\n"
         "__attribute__((visibility(\"default\"))) int32_t pto_orch_current_op = -1;\n\n");
  pto__emit_printf(c,
                   "__attribute__((visibility(\"default\"))) OrchestrationConfig\n"
                   "aicpu_orchestration_config(const ChipTaskArgs &args) {\n"
                   "  (void)args;\n"
                   "  return OrchestrationConfig{.expected_arg_count = %d};\n}\n\n",
                   nparams);
  pto__emit_printf(c, "__attribute__((visibility(\"default\"))) void "
                      "aicpu_orchestration_entry(const ChipTaskArgs &args) {\n");
  emit_params(&e);
  pto__emit_bind_syms(c, f);
  pto__emit_printf(c, "\n");
  pto__emit_block(c, &f->body, 1, NULL, 0);
  pto__emit_printf(c, "}\n\n}  // extern \"C\"\n");
  free(e.ops);
  *out_calls = e.tmp;
  *out_parts = c->parts;
  return pto__emit_finish(c, "orchestration", out_text);
}

static int uses_matmul(const pto_ir_block *b) {
  for (int i = 0; i < b->n; i++) {
    const pto_ir_stmt *s = b->stmts[i];
    if (s->kind == PTO_STMT_OP && pto_op_info_get(s->op.opc)->cls == PTO_OPC_MATMUL) return 1;
    if (s->kind == PTO_STMT_FOR && uses_matmul(&s->loop.body)) return 1;
    if (s->kind == PTO_STMT_IF &&
        (uses_matmul(&s->branch.then_body) || uses_matmul(&s->branch.else_body)))
      return 1;
  }
  return 0;
}

int pto__kernel_core_type(const pto_ir_func *k) {
  return uses_matmul(&k->body) ? PTO_CORE_AIC : PTO_CORE_AIV;
}
