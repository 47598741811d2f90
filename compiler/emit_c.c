/* The emitter core: what the orchestration C++ and the host C write alike (emit_internal.h). */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "emit_internal.h"
#include "pto/base.h"

const char *pto__emit_c_type(pto_dtype dt) {
  switch (dt) {
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
  default: return NULL;
  }
}

const char *pto__emit_source_name(const pto_ir_program *p, const char *none) {
  if (!p->file) return none;
  const char *slash = strrchr(p->file, '/');
  return slash ? slash + 1 : p->file;
}

void pto__emit_fail(pto__emit *e, pto_loc loc, const char *what) {
  if (e->err) return;
  e->err =
      pto_status_make(PTO_STATUS_UNIMPLEMENTED, "%s:%d:%d: %s: %s",
                      e->p->file ? e->p->file : "<program>", loc.line, loc.col, e->d->what, what);
}

void pto__emit_printf(pto__emit *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pto_text_vprintf(&e->out, fmt, ap);
  va_end(ap);
}

void pto__emit_line(pto__emit *e, int depth, const char *fmt, ...) {
  pto_text_pad(&e->out, (size_t)depth * 2);
  va_list ap;
  va_start(ap, fmt);
  pto_text_vprintf(&e->out, fmt, ap);
  va_end(ap);
}

void pto__emit_vname(pto__emit *e, const pto_ir_value *v) {
  pto_text_printf(&e->out, "v%d_%s", v->id, v->name ? v->name : "t");
}

const char *pto__emit_ctype(pto__emit *e, pto_dtype dt, pto_loc loc) {
  const char *ct = e->d->ctype(dt);
  if (ct) return ct;
  pto__emit_fail(e, loc, e->d->no_ctype);
  return "int";
}

/* A cast around what follows, closed by cast_close: T(x) in C++, ((T)x) in C. */
static void cast_open(pto__emit *e, const char *ct) {
  pto_text_printf(&e->out, e->d->cxx ? "%s(" : "((%s)", ct);
}

static void cast_close(pto__emit *e) { pto_text_puts(&e->out, ")"); }

/* Whether C computes a value of dtype dt in a wider type than dt holds: the integers narrower
 * than int (C promotes them to int) and f16/bf16 (float in the orchestration). Such a result of
 * C arithmetic is brought back to dt at once (wrapped, or rounded to nearest-even), as the
 * interpreter and kernels hold every scalar in its dtype: `%a * %b > %a` on u8 compares the
 * wrapped product, and `%a * %b + %c` on f16 rounds the product first. */
static int computes_wider(pto_dtype dt) {
  switch (dt) {
  case PTO_DTYPE_I8:
  case PTO_DTYPE_U8:
  case PTO_DTYPE_I16:
  case PTO_DTYPE_U16:
  case PTO_DTYPE_F16:
  case PTO_DTYPE_BF16: return 1;
  default: return 0;
  }
}

/* Opens what brings a wider C value back to dt (closed by cast_close): the integer cast, or the
 * dialect's rounding of an f16/bf16 scalar. */
static void narrow_open(pto__emit *e, pto_dtype dt, const char *ct) {
  if (dt == PTO_DTYPE_F16 || dt == PTO_DTYPE_BF16)
    pto_text_printf(&e->out, "%sround_%s(", e->d->round_prefix,
                    dt == PTO_DTYPE_F16 ? "f16" : "bf16");
  else
    cast_open(e, ct);
}

/* An f16/bf16 literal: its value rounded once from the double the IR holds (a float cast first
 * would keep 0.1 as 0.1f, where the interpreter holds f16's 0.0999755859375). */
static int is_half(pto_dtype dt) { return dt == PTO_DTYPE_F16 || dt == PTO_DTYPE_BF16; }

static void emit_int(pto__emit *e, const pto_ir_expr *x, const char *ct) {
  pto_text *b = &e->out;
  if (is_half(x->dtype)) {
    narrow_open(e, x->dtype, ct);
    pto_text_printf(b, "%" PRId64 ".0", x->i);
    cast_close(e);
  } else if (x->dtype == PTO_DTYPE_BOOL && !e->d->cxx) {
    pto_text_printf(b, "%d", x->i != 0);
  } else if (!pto_dtype_is_float(x->dtype) &&
             (x->dtype == PTO_DTYPE_INDEX || x->dtype == PTO_DTYPE_I64)) {
    pto_text_printf(b, "INT64_C(%" PRId64 ")", x->i);
  } else if (!pto_dtype_is_float(x->dtype) && !pto_dtype_is_signed(x->dtype) &&
             x->dtype != PTO_DTYPE_BOOL) {
    cast_open(e, ct);
    pto_text_printf(b, "UINT64_C(%" PRIu64 ")", (uint64_t)x->i);
    cast_close(e);
  } else {
    cast_open(e, ct);
    pto_text_printf(b, "%" PRId64, x->i);
    cast_close(e);
  }
}

static void emit_float(pto__emit *e, const pto_ir_expr *x, const char *ct) {
  if (is_half(x->dtype))
    narrow_open(e, x->dtype, ct);
  else
    cast_open(e, ct);
  if (isnan(x->f)) /* -nan keeps its sign: negating a NaN flips only its sign bit */
    pto_text_printf(&e->out, e->d->cxx ? "(%s__builtin_nan(\"\"))" : "(%sNAN)",
                    signbit(x->f) ? "-" : "");
  else if (isinf(x->f))
    pto_text_printf(&e->out, e->d->cxx ? "%s__builtin_inf()" : "(%sINFINITY)", x->f < 0 ? "-" : "");
  else
    pto_text_printf(&e->out, "%a", x->f);
  cast_close(e);
}

static void emit_cast(pto__emit *e, const pto_ir_expr *x, const char *ct) {
  /* Float to integer truncates toward zero, saturates at the integer's range and takes NaN to 0,
   * as kernels (llvm.fpto[su]i.sat) and the interpreter do: a C cast is undefined out of range
   * (x86 gives INT64_MIN for 1e30). */
  if (pto_dtype_is_float(x->a->dtype) && !pto_dtype_is_float(x->dtype) &&
      x->dtype != PTO_DTYPE_BOOL) {
    if (e->d->cxx)
      pto_text_printf(&e->out, "pto_f2i<%s>(", ct);
    else
      pto_text_printf(&e->out, "((%s)ph_f2%c(", ct, pto_dtype_is_signed(x->dtype) ? 's' : 'u');
    pto__emit_expr(e, x->a);
    if (e->d->cxx)
      pto_text_puts(&e->out, ")");
    else
      pto_text_printf(&e->out, ", %d))", (int)pto_dtype_size(x->dtype) * 8);
    return;
  }
  if (x->dtype == PTO_DTYPE_F16 || x->dtype == PTO_DTYPE_BF16) {
    /* One rounding from the source's exact value (a double holds every f32, f64 and 32-bit
     * integer). */
    narrow_open(e, x->dtype, ct);
    cast_open(e, "double");
    pto__emit_expr(e, x->a);
    cast_close(e);
    cast_close(e);
  } else if (e->d->cxx) {
    pto_text_printf(&e->out, "static_cast<%s>(", ct);
    pto__emit_expr(e, x->a);
    pto_text_puts(&e->out, ")");
  } else if (x->dtype == PTO_DTYPE_BOOL) {
    pto_text_puts(&e->out, "((");
    pto__emit_expr(e, x->a);
    pto_text_puts(&e->out, ") != 0)");
  } else {
    pto_text_printf(&e->out, "((%s)(", ct);
    pto__emit_expr(e, x->a);
    pto_text_puts(&e->out, "))");
  }
}

void pto__emit_expr(pto__emit *e, const pto_ir_expr *x) {
  pto_text *b = &e->out;
  const char *ct = e->d->ctype(x->dtype);
  if (!ct && x->kind != PTO_EXPR_VALUE) {
    pto__emit_fail(e, x->loc, e->d->no_ctype);
    return;
  }
  switch (x->kind) {
  case PTO_EXPR_INT: emit_int(e, x, ct); return;
  case PTO_EXPR_FLOAT: emit_float(e, x, ct); return;
  case PTO_EXPR_BOOL:
    if (e->d->cxx)
      pto_text_puts(b, x->b ? "true" : "false");
    else
      pto_text_puts(b, x->b ? "1" : "0");
    return;
  case PTO_EXPR_VALUE: pto__emit_vname(e, x->value); return;
  case PTO_EXPR_SYM: pto_text_printf(b, "s_%s", e->p->syms[x->sym]); return;
  case PTO_EXPR_UNARY: {
    /* -x of a narrow integer: C's int result wraps back (-(-128) is -128 in i8). */
    int wrap = x->op == PTO_EOP_NEG && computes_wider(x->dtype);
    if (wrap) narrow_open(e, x->dtype, ct);
    pto_text_printf(b, "(%s", pto_expr_op_name(x->op == PTO_EOP_NOT ? PTO_EOP_NOT : PTO_EOP_NEG));
    pto__emit_expr(e, x->a);
    pto_text_puts(b, ")");
    if (wrap) cast_close(e);
    return;
  }
  case PTO_EXPR_CAST: emit_cast(e, x, ct); return;
  case PTO_EXPR_BINARY: {
    /* Arithmetic (not comparisons, && and ||, whose result is bool) comes back to its dtype. */
    int wrap = computes_wider(x->dtype);
    if (wrap) narrow_open(e, x->dtype, ct);
    /* C writes PTIR's infix operators alike, except '/', which floors on integers in PTIR. */
    if (pto_expr_op_is_infix(x->op) && x->op != PTO_EOP_DIV) {
      pto_text_puts(b, "(");
      pto__emit_expr(e, x->lhs);
      pto_text_printf(b, " %s ", pto_expr_op_name(x->op));
      pto__emit_expr(e, x->rhs);
      pto_text_puts(b, ")");
    } else {
      e->d->binary_call(e, x);
    }
    if (wrap) cast_close(e);
    return;
  }
  }
}

void pto__emit_int64(pto__emit *e, const pto_ir_expr *x) {
  if (!e->d->cxx) {
    pto_text_puts(&e->out, "(int64_t)");
    pto__emit_expr(e, x);
    return;
  }
  int wrap = x->dtype != PTO_DTYPE_INDEX && x->dtype != PTO_DTYPE_I64;
  if (wrap) pto_text_puts(&e->out, "int64_t(");
  pto__emit_expr(e, x);
  if (wrap) pto_text_puts(&e->out, ")");
}

void pto__emit_list(pto__emit *e, const pto_ir_arg *a) {
  pto_text_puts(&e->out, "{");
  for (int i = 0; i < a->list.n; i++) {
    if (i) pto_text_puts(&e->out, ", ");
    pto__emit_int64(e, a->list.items[i]);
  }
  pto_text_puts(&e->out, "}");
}

void pto__emit_decl(pto__emit *e, const pto_ir_value *v) {
  if (v->type->kind == PTO_TYPE_SCALAR)
    pto_text_printf(&e->out, "%s ", pto__emit_ctype(e, v->type->dtype, v->loc));
  else
    pto_text_printf(&e->out, "%s ", e->d->tensor_type);
  pto__emit_vname(e, v);
}

static void before(pto__emit *e, const pto_ir_stmt *s, const pto_ir_expr *x, int depth) {
  if (e->d->before_expr) e->d->before_expr(e, s, x, depth);
}

static void after(pto__emit *e, const pto_ir_expr *x, int depth) {
  if (e->d->after_expr) e->d->after_expr(e, x, depth);
}

static void emit_for(pto__emit *e, const pto_ir_stmt *s, int depth) {
  for (int i = 0; i < s->loop.niters; i++) {
    before(e, s, s->loop.inits[i], depth);
    pto_text_pad(&e->out, (size_t)depth * 2);
    pto__emit_decl(e, s->loop.iters[i]);
    pto_text_puts(&e->out, " = ");
    pto__emit_expr(e, s->loop.inits[i]);
    pto_text_puts(&e->out, ";\n");
    after(e, s->loop.inits[i], depth);
  }
  e->d->loop(e, s, depth);
  for (int i = 0; i < s->nresults; i++) {
    pto__emit_line(e, depth, "const ");
    pto__emit_decl(e, s->results[i]);
    pto_text_puts(&e->out, " = ");
    pto__emit_vname(e, s->loop.iters[i]);
    pto_text_puts(&e->out, ";\n");
  }
}

static void emit_if(pto__emit *e, const pto_ir_stmt *s, int depth) {
  pto_text *b = &e->out;
  for (int i = 0; i < s->nresults; i++) {
    pto_text_pad(b, (size_t)depth * 2);
    pto__emit_decl(e, s->results[i]);
    int scalar = s->results[i]->type->kind == PTO_TYPE_SCALAR;
    pto_text_printf(b, "%s;\n", scalar ? e->d->if_scalar_init : e->d->if_tensor_init);
  }
  before(e, s, s->branch.cond, depth);
  pto__emit_line(e, depth, "if (");
  pto__emit_expr(e, s->branch.cond);
  pto_text_puts(b, ") {\n");
  pto__emit_block(e, &s->branch.then_body, depth + 1, s->results, s->nresults);
  pto__emit_line(e, depth, "}");
  if (s->branch.has_else) {
    pto_text_puts(b, " else {\n");
    pto__emit_block(e, &s->branch.else_body, depth + 1, s->results, s->nresults);
    pto__emit_line(e, depth, "}");
  }
  pto_text_puts(b, "\n");
  after(e, s->branch.cond, depth);
}

/* Assigns the yielded values of a for/if body to the carried variables. */
static void emit_yield(pto__emit *e, const pto_ir_stmt *s, int depth, pto_ir_value *const *to,
                       int n) {
  for (int i = 0; i < s->ret.n && i < n; i++) {
    before(e, s, s->ret.vals[i], depth);
    pto_text_pad(&e->out, (size_t)depth * 2);
    pto__emit_vname(e, to[i]);
    pto_text_puts(&e->out, " = ");
    pto__emit_expr(e, s->ret.vals[i]);
    pto_text_puts(&e->out, ";\n");
    after(e, s->ret.vals[i], depth);
  }
}

static void emit_stmt(pto__emit *e, const pto_ir_stmt *s, int depth, pto_ir_value *const *yield_to,
                      int nyield) {
  switch (s->kind) {
  case PTO_STMT_ASSIGN:
    before(e, s, s->expr, depth);
    pto__emit_line(e, depth, "const ");
    pto__emit_decl(e, s->results[0]);
    pto_text_puts(&e->out, " = ");
    pto__emit_expr(e, s->expr);
    pto_text_puts(&e->out, ";\n");
    after(e, s->expr, depth);
    return;
  case PTO_STMT_OP: e->d->op(e, s, depth); return;
  case PTO_STMT_CALL: e->d->call(e, s, depth); return;
  case PTO_STMT_FOR: emit_for(e, s, depth); return;
  case PTO_STMT_IF: emit_if(e, s, depth); return;
  case PTO_STMT_YIELD: emit_yield(e, s, depth, yield_to, nyield); return;
  case PTO_STMT_RETURN: return; /* outputs are the out/inout parameters themselves */
  case PTO_STMT_INCORE: pto__emit_fail(e, s->loc, e->d->incore); return;
  }
}

static int creates_tensors(const pto_ir_block *blk) {
  for (int i = 0; i < blk->n; i++)
    if (blk->stmts[i]->kind == PTO_STMT_OP && blk->stmts[i]->op.opc == PTO_OP_TENSOR_CREATE)
      return 1;
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

/* The statements of s, its own and those of the blocks it holds. */
static int64_t stmt_weight(const pto_ir_stmt *s) {
  int64_t w = 1;
  const pto_ir_block *inner[2] = {NULL, NULL};
  if (s->kind == PTO_STMT_FOR) inner[0] = &s->loop.body;
  if (s->kind == PTO_STMT_IF) {
    inner[0] = &s->branch.then_body;
    inner[1] = &s->branch.else_body;
  }
  for (int k = 0; k < 2; k++)
    for (int i = 0; inner[k] && i < inner[k]->n; i++)
      w += stmt_weight(inner[k]->stmts[i]);
  return w;
}

/* Where the dialect has scopes (PTO2's), a block that makes intermediates is one: they are freed
 * once it ends and the tasks using them finish, so a loop reuses memory instead of holding every
 * iteration's buffers. The function body needs none: the launch itself is the outermost scope.
 * A block that yields a tensor is not a scope, since what it yields must outlive it; its
 * intermediates belong to the enclosing scope. */
void pto__emit_block(pto__emit *e, const pto_ir_block *blk, int depth,
                     pto_ir_value *const *yield_to, int nyield) {
  int scoped = e->d->scope_open && depth > 1 && creates_tensors(blk) && !yields_tensor(blk);
  if (scoped) pto__emit_line(e, depth++, "%s\n", e->d->scope_open);
  /* A block longer than PTO__EMIT_PART_SPLIT statements is written in parts of about
   * PTO__EMIT_PART statements, each nested in the one before (so it sees every name declared
   * above it, as in one function): the host compiler's time on one function grows faster than
   * its length (register allocation, alias walks, stack slot sharing), on parts it is linear. */
  int64_t total = 0;
  for (int i = 0; e->d->part_open && i < blk->n; i++)
    total += stmt_weight(blk->stmts[i]);
  int split = total > PTO__EMIT_PART_SPLIT, parts = 0;
  int64_t run = 0;
  for (int i = 0; i < blk->n && !e->err; i++) {
    const pto_ir_stmt *st = blk->stmts[i];
    int64_t w = split ? stmt_weight(st) : 0;
    /* A return writes nothing and a yield a few assignments: neither opens a part of its own. */
    int opens = st->kind != PTO_STMT_RETURN && st->kind != PTO_STMT_YIELD;
    if (split && opens && run > 0 && run + w > PTO__EMIT_PART) {
      pto__emit_line(e, depth, "%s  // part %d of this block\n", e->d->part_open, ++parts + 1);
      run = 0;
    }
    run += w;
    emit_stmt(e, st, depth, yield_to, nyield);
  }
  for (int k = parts; k > 0; k--)
    pto__emit_line(e, depth, "%s  // part %d\n", e->d->part_close, k + 1);
  e->parts += parts;
  if (scoped) pto__emit_line(e, depth - 1, "}\n");
}

void pto__emit_call_results(pto__emit *e, const pto_ir_stmt *s, int depth) {
  const pto_ir_func *g = s->call.callee;
  int r = 0;
  for (int i = 0; i < s->call.nargs && i < g->nparams && r < s->nresults; i++) {
    if (g->params[i].dir == PTO_DIR_IN || g->params[i].value->type->kind == PTO_TYPE_SCALAR)
      continue;
    pto__emit_line(e, depth, "%s", e->d->alias_decl);
    pto__emit_vname(e, s->results[r++]);
    pto_text_puts(&e->out, " = ");
    pto__emit_expr(e, s->call.args[i]);
    pto_text_puts(&e->out, ";\n");
  }
}

void pto__emit_bind_syms(pto__emit *e, const pto_ir_func *f) {
  for (int sym = 0; sym < e->p->nsyms; sym++) {
    for (int i = 0; i < f->nparams; i++) {
      const pto_ir_type *t = f->params[i].value->type;
      int found = -1;
      for (int d = 0; t->kind != PTO_TYPE_SCALAR && d < t->rank; d++)
        if (t->dims[d]->kind == PTO_EXPR_SYM && t->dims[d]->sym == sym) found = d;
      if (found < 0) continue;
      e->d->bind_sym(e, sym, f->params[i].value, found);
      break;
    }
  }
}

pto_status pto__emit_finish(pto__emit *e, const char *what, char **out_text) {
  char *text = pto_text_finish(&e->out);
  if (e->err) {
    free(text);
    return e->err;
  }
  if (!text) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory emitting %s", what);
  *out_text = text;
  return PTO_OK;
}
