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

#include "compiler_internal.h"
#include "pto/base.h"
#include "pto/orch_abi.h"

/* A statement of the source entry by position: its op id (pre-order number) and kind. */
typedef struct op_pos {
  int line, col, kind, id;
} op_pos;

typedef struct emitter {
  const pto_ir_program *p;
  const pto_ir_func *f;
  const pto_signature *sig;
  const int *kernel_ids;
  const pto_ir_func *src; /* the entry as the caller gave it (op ids number its statements) */
  op_pos *ops;            /* src's statements sorted by (line, col, id): one walk, then lookups */
  int nops;
  pto_text out;
  int tmp;           /* counter for emitter temporaries */
  pto_status err;
} emitter;

static const char *ctype(pto_dtype dt) {
  switch (dt) {
  case PTO_DTYPE_BOOL: return "bool";
  case PTO_DTYPE_I8: return "int8_t";
  case PTO_DTYPE_I16: return "int16_t";
  case PTO_DTYPE_I32: return "int32_t";
  case PTO_DTYPE_I64: return "int64_t";
  case PTO_DTYPE_U8: return "uint8_t";
  case PTO_DTYPE_U16: return "uint16_t";
  case PTO_DTYPE_U32: return "uint32_t";
  case PTO_DTYPE_U64: return "uint64_t";
  case PTO_DTYPE_F16:
  case PTO_DTYPE_BF16:
  case PTO_DTYPE_F32: return "float";
  case PTO_DTYPE_F64: return "double";
  case PTO_DTYPE_INDEX: return "int64_t";
  default: return "void";
  }
}

/* The PTO2 DataType enumerator of a dtype. */
static const char *datatype_name(pto_dtype dt) {
  static const char *const names[PTO_DTYPE_COUNT] = {
      "BOOL",   "INT8",    "INT16",    "INT32",   "INT64",   "UINT8", "UINT16",
      "UINT32", "UINT64",  "FLOAT16",  "BFLOAT16", "FLOAT32", "FLOAT64", "INDEX"};
  return (unsigned)dt < PTO_DTYPE_COUNT ? names[dt] : "FLOAT32";
}

/* The source file's name without its directory: generated text must not depend on where the
 * source was (golden tests, reproducible work dirs). */
static const char *source_name(const pto_ir_program *p) {
  if (!p->file) return "<builder>";
  const char *slash = strrchr(p->file, '/');
  return slash ? slash + 1 : p->file;
}

static void fail(emitter *e, pto_loc loc, const char *what) {
  if (e->err) return;
  e->err = pto_status_make(PTO_STATUS_UNIMPLEMENTED, "%s:%d:%d: orchestration codegen: %s",
                           e->p->file ? e->p->file : "<program>", loc.line, loc.col, what);
}

static void vname(emitter *e, const pto_ir_value *v) { pto_text_printf(&e->out, "v%d_%s", v->id, v->name); }

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

static void emit_expr(emitter *e, const pto_ir_expr *x) {
  pto_text *b = &e->out;
  switch (x->kind) {
  case PTO_EXPR_INT:
    if (pto_dtype_is_float(x->dtype)) pto_text_printf(b, "%s(%" PRId64 ")", ctype(x->dtype), x->i);
    else if (!pto_dtype_is_signed(x->dtype) && x->dtype != PTO_DTYPE_BOOL)
      pto_text_printf(b, "%s(UINT64_C(%" PRIu64 "))", ctype(x->dtype), (uint64_t)x->i);
    else if (x->dtype == PTO_DTYPE_INDEX || x->dtype == PTO_DTYPE_I64) pto_text_printf(b, "INT64_C(%" PRId64 ")", x->i);
    else pto_text_printf(b, "%s(%" PRId64 ")", ctype(x->dtype), x->i);
    return;
  case PTO_EXPR_FLOAT:
    if (isnan(x->f)) pto_text_printf(b, "%s(__builtin_nan(\"\"))", ctype(x->dtype));
    else if (isinf(x->f)) pto_text_printf(b, "%s(%s__builtin_inf())", ctype(x->dtype), x->f < 0 ? "-" : "");
    else pto_text_printf(b, "%s(%a)", ctype(x->dtype), x->f);
    return;
  case PTO_EXPR_BOOL: pto_text_printf(b, "%s", x->b ? "true" : "false"); return;
  case PTO_EXPR_VALUE: vname(e, x->value); return;
  case PTO_EXPR_SYM: pto_text_printf(b, "s_%s", e->p->syms[x->sym]); return;
  case PTO_EXPR_UNARY:
    pto_text_printf(b, "(%s", x->op == PTO_EOP_NOT ? "!" : "-");
    emit_expr(e, x->a);
    pto_text_printf(b, ")");
    return;
  case PTO_EXPR_CAST:
    pto_text_printf(b, "static_cast<%s>(", ctype(x->dtype));
    emit_expr(e, x->a);
    pto_text_printf(b, ")");
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
    const char *fn = x->op == PTO_EOP_DIV ? "pto_div"
                     : x->op == PTO_EOP_MOD ? "pto_mod"
                     : x->op == PTO_EOP_MIN ? "pto_min"
                                            : "pto_max";
    pto_text_printf(b, "%s<%s>(", fn, ctype(x->dtype));
    emit_expr(e, x->lhs);
    pto_text_printf(b, ", ");
    emit_expr(e, x->rhs);
    pto_text_printf(b, ")");
    return;
  }
  }
}

static void emit_list(emitter *e, const pto_ir_arg *a) {
  pto_text_printf(&e->out, "{");
  for (int i = 0; i < a->list.n; i++) {
    if (i) pto_text_printf(&e->out, ", ");
    const pto_ir_expr *x = a->list.items[i];
    int wrap = x->dtype != PTO_DTYPE_INDEX && x->dtype != PTO_DTYPE_I64;
    if (wrap) pto_text_printf(&e->out, "int64_t(");
    emit_expr(e, x);
    if (wrap) pto_text_printf(&e->out, ")");
  }
  pto_text_printf(&e->out, "}");
}

static void emit_block(emitter *e, const pto_ir_block *blk, int depth,
                       pto_ir_value *const *yield_to, int nyield);

/* Assigns the yielded values of a for/if body to the carried variables. */
static void emit_yield(emitter *e, const pto_ir_stmt *s, int depth, pto_ir_value *const *to, int n) {
  for (int i = 0; i < s->ret.n && i < n; i++) {
    pto_text_pad(&e->out, (size_t)(depth) * 2);
    vname(e, to[i]);
    pto_text_printf(&e->out, " = ");
    emit_expr(e, s->ret.vals[i]);
    pto_text_printf(&e->out, ";\n");
  }
}

static void emit_decl(emitter *e, const pto_ir_value *v) {
  if (v->type->kind == PTO_TYPE_SCALAR) pto_text_printf(&e->out, "%s ", ctype(v->type->dtype));
  else pto_text_printf(&e->out, "ChipTensor ");
  vname(e, v);
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
    if (e->ops[mid].line < s->loc.line) lo = mid + 1;
    else hi = mid;
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
  if (id < 0) return;
  pto_text_pad(&e->out, (size_t)(depth) * 2);
  pto_text_printf(&e->out, "pto_orch_current_op = %d;\n", id);
}

static void emit_call(emitter *e, const pto_ir_stmt *s, int depth) {
  const pto_ir_func *k = s->call.callee;
  if (k->kind != PTO_FUNC_KERNEL) {
    fail(e, s->loc, "calls from an orch to a non-kernel function are not supported yet");
    return;
  }
  pto_text *b = &e->out;
  int t = e->tmp++;
  emit_op_id(e, s, depth);
  pto_text_pad(b, (size_t)(depth) * 2);
  pto_text_printf(b, "{  // %s:%d call @%s\n", source_name(e->p), s->loc.line, k->name);
  pto_text_pad(b, (size_t)(depth + 1) * 2);
  pto_text_printf(b, "CoreTaskArgs t%d;\n", t);
  for (int i = 0; i < s->call.nargs && i < k->nparams; i++) {
    const pto_ir_param *kp = &k->params[i];
    pto_text_pad(b, (size_t)(depth + 1) * 2);
    if (kp->value->type->kind == PTO_TYPE_SCALAR) {
      pto_text_printf(b, "t%d.add_scalar(pto_slot(static_cast<%s>(", t, ctype(kp->value->type->dtype));
      emit_expr(e, s->call.args[i]);
      pto_text_printf(b, "), %d));\n", (int)kp->value->type->dtype);
    } else {
      const char *fn = kp->dir == PTO_DIR_OUT ? "add_output" : kp->dir == PTO_DIR_INOUT ? "add_inout" : "add_input";
      pto_text_printf(b, "t%d.%s(", t, fn);
      emit_expr(e, s->call.args[i]);
      pto_text_printf(b, ");\n");
    }
  }
  int core = pto__kernel_core_type(k);
  pto_text_pad(b, (size_t)(depth + 1) * 2);
  pto_text_printf(b, "%s(%d, t%d);\n", core == PTO_CORE_AIC ? "rt_submit_aic_task" : "rt_submit_aiv_task",
            e->kernel_ids[k->index], t);
  pto_text_pad(b, (size_t)(depth) * 2);
  pto_text_printf(b, "}\n");
  /* Results alias the out/inout arguments in order. */
  int r = 0;
  for (int i = 0; i < s->call.nargs && i < k->nparams && r < s->nresults; i++) {
    if (k->params[i].dir == PTO_DIR_IN || k->params[i].value->type->kind == PTO_TYPE_SCALAR) continue;
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "const ChipTensor &");
    vname(e, s->results[r++]);
    pto_text_printf(b, " = ");
    emit_expr(e, s->call.args[i]);
    pto_text_printf(b, ";\n");
  }
}

static void emit_op(emitter *e, const pto_ir_stmt *s, int depth) {
  pto_text *b = &e->out;
  const pto_ir_arg *a = s->op.args;
  const pto_ir_value *r = s->nresults ? s->results[0] : NULL;
  if (s->op.opc != PTO_OP_TENSOR_DIM) emit_op_id(e, s, depth);
  switch (s->op.opc) {
  case PTO_OP_TENSOR_SLICE:
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "const ChipTensor ");
    vname(e, r);
    pto_text_printf(b, " = pto_slice(");
    emit_expr(e, a[0].expr);
    pto_text_printf(b, ", ");
    emit_list(e, &a[1]);
    pto_text_printf(b, ", ");
    emit_list(e, &a[2]);
    pto_text_printf(b, ");\n");
    return;
  case PTO_OP_TENSOR_RESHAPE:
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "const ChipTensor ");
    vname(e, r);
    pto_text_printf(b, " = pto_reshape(");
    emit_expr(e, a[0].expr);
    pto_text_printf(b, ", ");
    emit_list(e, &a[1]);
    pto_text_printf(b, ");\n");
    return;
  case PTO_OP_TENSOR_SELECT:
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "const ChipTensor ");
    vname(e, r);
    pto_text_printf(b, " = pto_select(");
    emit_expr(e, a[0].expr);
    pto_text_printf(b, ", int64_t(");
    emit_expr(e, a[1].expr);
    pto_text_printf(b, "));\n");
    return;
  case PTO_OP_TENSOR_CREATE:
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "const ChipTensor ");
    vname(e, r);
    pto_text_printf(b, " = pto_create(");
    emit_list(e, &a[0]);
    pto_text_printf(b, ", DataType::%s);\n", datatype_name(a[1].dtype));
    return;
  case PTO_OP_TENSOR_DIM:
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "const int64_t ");
    vname(e, r);
    pto_text_printf(b, " = pto_dim(");
    emit_expr(e, a[0].expr);
    pto_text_printf(b, ", ");
    emit_expr(e, a[1].expr);
    pto_text_printf(b, ");\n");
    return;
  case PTO_OP_TENSOR_READ:
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "const %s ", ctype(r->type->dtype));
    vname(e, r);
    pto_text_printf(b, " = pto_read<%s>(", ctype(r->type->dtype));
    emit_expr(e, a[0].expr);
    pto_text_printf(b, ", ");
    emit_list(e, &a[1]);
    pto_text_printf(b, ");\n");
    return;
  default: {
    const pto_op_info *info = pto_op_info_get(s->op.opc);
    char msg[128];
    snprintf(msg, sizeof msg, "%s is not an orchestration op", info ? info->name : "op");
    fail(e, s->loc, msg);
  }
  }
}

static void emit_stmt(emitter *e, const pto_ir_stmt *s, int depth, pto_ir_value *const *yield_to,
                      int nyield) {
  pto_text *b = &e->out;
  switch (s->kind) {
  case PTO_STMT_ASSIGN:
    if (pto_ir_expr_divides_int(s->expr)) emit_op_id(e, s, depth); /* a runtime zero fails the launch */
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "const ");
    emit_decl(e, s->results[0]);
    pto_text_printf(b, " = ");
    emit_expr(e, s->expr);
    pto_text_printf(b, ";\n");
    return;
  case PTO_STMT_OP: emit_op(e, s, depth); return;
  case PTO_STMT_CALL: emit_call(e, s, depth); return;
  case PTO_STMT_FOR: {
    for (int i = 0; i < s->loop.niters; i++) {
      pto_text_pad(b, (size_t)(depth) * 2);
      emit_decl(e, s->loop.iters[i]);
      pto_text_printf(b, " = ");
      emit_expr(e, s->loop.inits[i]);
      pto_text_printf(b, ";\n");
    }
    /* A step known to be positive (absent, or a literal the verifier checked) keeps the plain
     * form; a runtime step may be negative (counts down, as in the interpreter) or zero (a
     * launch error, never an endless loop). The code carries an op id, never a position: the
     * cache key leaves positions out, so a cached binary may serve a program whose lines moved
     * (the runtime finds the position in the caller's table). */
    int64_t step_value = 1;
    int plain = !s->loop.step || (pto_ir_expr_static_int(s->loop.step, &step_value) == 0 && step_value > 0);
    if (!plain) emit_op_id(e, s, depth);
    pto_text_pad(b, (size_t)(depth) * 2);
    pto_text_printf(b, "for (int64_t ");
    vname(e, s->loop.iv);
    pto_text_printf(b, " = ");
    emit_expr(e, s->loop.lo);
    pto_text_printf(b, "; ");
    if (plain) {
      vname(e, s->loop.iv);
      pto_text_printf(b, " < ");
      emit_expr(e, s->loop.hi);
    } else {
      pto_text_printf(b, "pto_in_range(");
      vname(e, s->loop.iv);
      pto_text_printf(b, ", ");
      emit_expr(e, s->loop.hi);
      pto_text_printf(b, ", ");
      emit_expr(e, s->loop.step);
      pto_text_printf(b, ")");
    }
    /* The first fatal error (a bad slice, a failed kernel) ends every loop at its next
     * iteration: the launch returns at once instead of running the remaining iterations. */
    pto_text_printf(b, " && !rt_is_fatal(); ");
    vname(e, s->loop.iv);
    if (!s->loop.step || (plain && step_value == 1)) {
      pto_text_printf(b, " += 1) {\n"); /* i < hi: i + 1 cannot overflow */
    } else {
      /* A step past INT64_MAX (INT64_MIN) ends the loop instead of wrapping around. */
      pto_text_printf(b, " = pto_step(");
      vname(e, s->loop.iv);
      pto_text_printf(b, ", ");
      emit_expr(e, s->loop.step);
      pto_text_printf(b, ", ");
      emit_expr(e, s->loop.hi);
      pto_text_printf(b, ")) {\n");
    }
    emit_block(e, &s->loop.body, depth + 1, s->loop.iters, s->loop.niters);
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
      pto_text_printf(b, "{};\n");
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
    return;
  case PTO_STMT_YIELD: emit_yield(e, s, depth, yield_to, nyield); return;
  case PTO_STMT_RETURN: return; /* outputs are the out/inout parameters themselves */
  case PTO_STMT_INCORE: fail(e, s->loc, "incore scope was not outlined"); return;
  }
}

static int creates_tensors(const pto_ir_block *blk) {
  for (int i = 0; i < blk->n; i++)
    if (blk->stmts[i]->kind == PTO_STMT_OP && blk->stmts[i]->op.opc == PTO_OP_TENSOR_CREATE) return 1;
  return 0;
}

/* Whether the block ends in a yield of a tensor, which may be one it created (or a view of
 * one): a loop carrying a buffer from one iteration to the next, an if choosing a buffer. */
static int yields_tensor(const pto_ir_block *blk) {
  const pto_ir_stmt *last = blk->n ? blk->stmts[blk->n - 1] : NULL;
  if (!last || last->kind != PTO_STMT_YIELD) return 0;
  for (int i = 0; i < last->ret.n; i++) {
    const pto_ir_expr *x = last->ret.vals[i];
    if (x->kind == PTO_EXPR_VALUE && x->value->type->kind != PTO_TYPE_SCALAR) return 1;
  }
  return 0;
}

/* A block that makes intermediates is a PTO2 scope: they are freed once it ends and the tasks
 * using them finish, so a loop reuses memory instead of holding every iteration's buffers. The
 * function body needs none: the launch itself is the outermost scope. A block that yields a
 * tensor is not a scope, since what it yields must outlive it; its intermediates belong to the
 * enclosing scope. */
static void emit_block(emitter *e, const pto_ir_block *blk, int depth,
                       pto_ir_value *const *yield_to, int nyield) {
  int scoped = depth > 1 && creates_tensors(blk) && !yields_tensor(blk);
  if (scoped) {
    pto_text_pad(&e->out, (size_t)(depth) * 2);
    pto_text_printf(&e->out, "PTO2_SCOPE() {\n");
    depth++;
  }
  for (int i = 0; i < blk->n && !e->err; i++) emit_stmt(e, blk->stmts[i], depth, yield_to, nyield);
  if (scoped) {
    pto_text_pad(&e->out, (size_t)(depth - 1) * 2);
    pto_text_printf(&e->out, "}\n");
  }
}

/* Helpers every generated file carries; they work on the C layout of ChipTensor
 * (pto_orch_tensor), which the header guarantees. */
/* The helpers generated code calls (pto_slice, pto_create, pto_read, pto_slot, pto_div, ...)
 * live in pto_orchestration_api.h, namespace pto_codegen. */
static const char k_prelude[] = "using namespace pto_codegen;\n";

pto_status pto__emit_orchestration(const pto_ir_program *p, const pto_ir_func *f,
                                   const pto_ir_func *src, const pto_signature *sig,
                                   const int *kernel_ids, char **out_text) {
  *out_text = NULL;
  emitter e = {.p = p, .f = f, .sig = sig, .kernel_ids = kernel_ids, .src = src};
  PTO_RETURN_IF_ERROR(index_ops(&e));
  pto_text *b = &e.out;
  int ntensors = 0, nscalars = 0;
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i].value->type->kind == PTO_TYPE_SCALAR) nscalars++;
    else ntensors++;
  pto_text_printf(b, "// Orchestration of @%s, program %s. Generated by pto from %s; edit freely, then run\n"
               "// `pto rebuild` on the work dir.\n",
            f->name, p->name, source_name(p));
  pto_text_printf(b, "#include \"pto/pto_orchestration_api.h\"\n\n");
  pto_text_printf(b, "%s\n", k_prelude);
  pto_text_printf(b, "extern \"C\" {\n\n");
  pto_text_printf(b, "// The statement running (its op id), for launch errors: the runtime reads it when a launch\n"
                     "// fails and finds the source position in the program's position table.\n"
                     "__attribute__((visibility(\"default\"))) int32_t pto_orch_current_op = -1;\n\n");
  pto_text_printf(b, "__attribute__((visibility(\"default\"))) OrchestrationConfig\n"
               "aicpu_orchestration_config(const ChipTaskArgs &args) {\n"
               "  (void)args;\n"
               "  return OrchestrationConfig{.expected_arg_count = %d};\n}\n\n",
            ntensors + nscalars);
  pto_text_printf(b, "__attribute__((visibility(\"default\"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {\n");
  int ti = 0, si = 0;
  for (int i = 0; i < f->nparams; i++) {
    const pto_ir_param *pp = &f->params[i];
    const pto_ir_value *v = pp->value;
    const pto_sig_param *sp = &sig->params[i];
    if (v->type->kind != PTO_TYPE_SCALAR) {
      pto_text_printf(b, "  const ChipTensor &");
      vname(&e, v);
      pto_text_printf(b, " = args.tensor(%d).ref();\n", ti++);
      continue;
    }
    if (sp->bind == PTO_BIND_LITERAL) {
      /* Specialized: the value is baked in; its slot stays in the ABI. */
      pto_ir_expr lit = {.kind = pto_dtype_is_float(sp->dtype) ? PTO_EXPR_FLOAT : PTO_EXPR_INT,
                         .dtype = sp->dtype};
      if (lit.kind == PTO_EXPR_FLOAT) lit.f = sp->value.f;
      else lit.i = sp->value.i;
      if (sp->dtype == PTO_DTYPE_BOOL) {
        lit.kind = PTO_EXPR_BOOL;
        lit.b = sp->value.i != 0;
      }
      pto_text_printf(b, "  const %s ", ctype(sp->dtype));
      vname(&e, v);
      pto_text_printf(b, " = ");
      emit_expr(&e, &lit);
      pto_text_printf(b, ";  // specialized at compile time (slot %d)\n", si++);
    } else {
      pto_text_printf(b, "  const %s ", ctype(sp->dtype));
      vname(&e, v);
      pto_text_printf(b, " = pto_unslot<%s>(args.scalar(%d), %d);\n", ctype(sp->dtype), si++, (int)sp->dtype);
    }
  }
  /* Dynamic symbols: bound from the first tensor parameter that declares them (the runtime has
   * already checked that every declaration agrees). */
  for (int s = 0; s < p->nsyms; s++) {
    for (int i = 0; i < f->nparams; i++) {
      const pto_ir_type *t = f->params[i].value->type;
      int found = -1;
      for (int d = 0; t->kind != PTO_TYPE_SCALAR && d < t->rank; d++)
        if (t->dims[d]->kind == PTO_EXPR_SYM && t->dims[d]->sym == s) found = d;
      if (found < 0) continue;
      pto_text_printf(b, "  const int64_t s_%s = pto_dim(", p->syms[s]);
      vname(&e, f->params[i].value);
      pto_text_printf(b, ", %d);\n", found);
      break;
    }
  }
  pto_text_printf(b, "\n");
  emit_block(&e, &f->body, 1, NULL, 0);
  pto_text_printf(b, "}\n\n}  // extern \"C\"\n");
  char *text = pto_text_finish(b);
  free(e.ops);
  if (e.err) {
    free(text);
    return e.err;
  }
  if (!text) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory emitting orchestration");
  *out_text = text;
  return PTO_OK;
}

static int uses_matmul(const pto_ir_block *b) {
  for (int i = 0; i < b->n; i++) {
    const pto_ir_stmt *s = b->stmts[i];
    if (s->kind == PTO_STMT_OP && pto_op_info_get(s->op.opc)->cls == PTO_OPC_MATMUL) return 1;
    if (s->kind == PTO_STMT_FOR && uses_matmul(&s->loop.body)) return 1;
    if (s->kind == PTO_STMT_IF && (uses_matmul(&s->branch.then_body) || uses_matmul(&s->branch.else_body)))
      return 1;
  }
  return 0;
}

int pto__kernel_core_type(const pto_ir_func *k) {
  return uses_matmul(&k->body) ? PTO_CORE_AIC : PTO_CORE_AIV;
}
