/* The canonical printer. Its output is the fixed point of parse∘print: one spelling per construct
 * (2-space indentation, ", " between list items, keywords in the op's canonical order, one
 * `dynamic` line), minimal parentheses by precedence, floats in the shortest text that reads back
 * exactly. A result type is printed only where the parser would otherwise deduce another one: a
 * literal-only expression whose dtype came from a declared type. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"

/* ---- expressions ---------------------------------------------------------------------- */

enum { PREC_OR = 1, PREC_AND, PREC_CMP, PREC_ADD, PREC_MUL, PREC_UNARY, PREC_ATOM };

static int binop_prec(pto_expr_op op) {
  switch (op) {
  case PTO_EOP_OR: return PREC_OR;
  case PTO_EOP_AND: return PREC_AND;
  case PTO_EOP_EQ:
  case PTO_EOP_NE:
  case PTO_EOP_LT:
  case PTO_EOP_LE:
  case PTO_EOP_GT:
  case PTO_EOP_GE: return PREC_CMP;
  case PTO_EOP_ADD:
  case PTO_EOP_SUB: return PREC_ADD;
  case PTO_EOP_MUL:
  case PTO_EOP_DIV: return PREC_MUL;
  default: return PREC_ATOM; /* min, max, mod are written as calls */
  }
}

static int expr_prec(const pto_ir_expr *e) {
  switch (e->kind) {
  case PTO_EXPR_BINARY: return binop_prec(e->op);
  case PTO_EXPR_UNARY: return PREC_UNARY;
  /* A negative literal prints with a leading '-', which reads back as a unary minus. */
  case PTO_EXPR_INT: return e->i < 0 && e->dtype != PTO_DTYPE_U64 ? PREC_UNARY : PREC_ATOM;
  case PTO_EXPR_FLOAT: return signbit(e->f) ? PREC_UNARY : PREC_ATOM;
  default: return PREC_ATOM;
  }
}

/* The one operator-name table: the printer writes these, and the C and C++ emitters write the
 * infix ones as they are (C spells them alike; '/' floors in PTIR, so they call a helper). */
const char *pto_expr_op_name(pto_expr_op op) {
  switch (op) {
  case PTO_EOP_NEG: return "-";
  case PTO_EOP_NOT: return "!";
  case PTO_EOP_ADD: return "+";
  case PTO_EOP_SUB: return "-";
  case PTO_EOP_MUL: return "*";
  case PTO_EOP_DIV: return "/";
  case PTO_EOP_MOD: return "mod";
  case PTO_EOP_MIN: return "min";
  case PTO_EOP_MAX: return "max";
  case PTO_EOP_EQ: return "==";
  case PTO_EOP_NE: return "!=";
  case PTO_EOP_LT: return "<";
  case PTO_EOP_LE: return "<=";
  case PTO_EOP_GT: return ">";
  case PTO_EOP_GE: return ">=";
  case PTO_EOP_AND: return "&&";
  case PTO_EOP_OR: return "||";
  default: return "?";
  }
}

bool pto_expr_op_is_infix(pto_expr_op op) { return binop_prec(op) != PREC_ATOM; }

void pto__ir_print_float(pto_text *out, double v) {
  if (isnan(v)) {
    pto_text_puts(out, signbit(v) ? "-nan" : "nan");
    return;
  }
  if (isinf(v)) {
    pto_text_puts(out, v < 0 ? "-inf" : "inf");
    return;
  }
  char tmp[64];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*g", prec, v);
    double back = strtod(tmp, NULL);
    if (back == v && signbit(back) == signbit(v)) break;
  }
  /* Keep it a FLOAT token: digits alone would read back as an INT. */
  if (!strpbrk(tmp, ".eE")) strcat(tmp, ".0");
  pto_text_puts(out, tmp);
}

static void print_expr_prec(pto_text *out, const pto_ir_program *p, const pto_ir_expr *e,
                            int parens) {
  if (parens) pto_text_puts(out, "(");
  pto__ir_print_expr(out, p, e);
  if (parens) pto_text_puts(out, ")");
}

void pto__ir_print_expr(pto_text *out, const pto_ir_program *p, const pto_ir_expr *e) {
  if (!e) {
    pto_text_puts(out, "<null>");
    return;
  }
  switch (e->kind) {
  case PTO_EXPR_INT:
    if (e->dtype == PTO_DTYPE_U64 && e->i < 0)
      pto_text_printf(out, "%llu", (unsigned long long)e->i);
    else
      pto_text_printf(out, "%lld", (long long)e->i);
    break;
  case PTO_EXPR_FLOAT: pto__ir_print_float(out, e->f); break;
  case PTO_EXPR_BOOL: pto_text_puts(out, e->b ? "true" : "false"); break;
  case PTO_EXPR_VALUE:
    pto_text_printf(out, "%%%s", e->value && e->value->name ? e->value->name : "<null>");
    break;
  case PTO_EXPR_SYM:
    if (p && e->sym >= 0 && e->sym < p->nsyms)
      pto_text_puts(out, p->syms[e->sym]);
    else
      pto_text_printf(out, "<sym%d>", e->sym);
    break;
  case PTO_EXPR_UNARY:
    pto_text_puts(out, pto_expr_op_name(e->op == PTO_EOP_NOT ? PTO_EOP_NOT : PTO_EOP_NEG));
    print_expr_prec(out, p, e->a, e->a && expr_prec(e->a) < PREC_UNARY);
    break;
  case PTO_EXPR_CAST:
    pto_text_printf(out, "%s(", pto_dtype_name(e->dtype));
    pto__ir_print_expr(out, p, e->a);
    pto_text_puts(out, ")");
    break;
  case PTO_EXPR_BINARY: {
    int prec = binop_prec(e->op);
    if (prec == PREC_ATOM) {
      pto_text_printf(out, "%s(", pto_expr_op_name(e->op));
      pto__ir_print_expr(out, p, e->lhs);
      pto_text_puts(out, ", ");
      pto__ir_print_expr(out, p, e->rhs);
      pto_text_puts(out, ")");
      break;
    }
    /* Left-associative; comparisons do not chain, so a comparison operand is parenthesized. */
    int lp = e->lhs ? expr_prec(e->lhs) : PREC_ATOM;
    int rp = e->rhs ? expr_prec(e->rhs) : PREC_ATOM;
    print_expr_prec(out, p, e->lhs, lp < prec || (prec == PREC_CMP && lp == PREC_CMP));
    pto_text_printf(out, " %s ", pto_expr_op_name(e->op));
    print_expr_prec(out, p, e->rhs, rp <= prec);
    break;
  }
  }
}

static void print_dims(pto_text *out, const pto_ir_program *p, pto_ir_expr *const *dims, int rank,
                       const char *sep) {
  pto_text_puts(out, "[");
  for (int i = 0; i < rank; i++) {
    if (i) pto_text_puts(out, sep);
    pto__ir_print_expr(out, p, dims[i]);
  }
  pto_text_puts(out, "]");
}

void pto__ir_print_shape(pto_text *out, const pto_ir_program *p, pto_ir_expr *const *dims,
                         int rank) {
  print_dims(out, p, dims, rank, ",");
}

void pto__ir_print_type(pto_text *out, const pto_ir_program *p, const pto_ir_type *t) {
  if (!t) {
    pto_text_puts(out, "<null>");
    return;
  }
  const char *dt = pto_dtype_name(t->dtype);
  switch (t->kind) {
  case PTO_TYPE_SCALAR: pto_text_puts(out, dt); break;
  case PTO_TYPE_TENSOR:
  case PTO_TYPE_DTENSOR:
    pto_text_puts(out, t->kind == PTO_TYPE_TENSOR ? "tensor" : "dtensor");
    if (t->rank >= 0) print_dims(out, p, t->dims, t->rank, ", ");
    pto_text_printf(out, " %s", dt);
    break;
  case PTO_TYPE_TILE:
    pto_text_puts(out, "tile");
    print_dims(out, p, t->dims, t->rank, ", ");
    pto_text_printf(out, " %s @%s", dt, pto_space_name(t->space));
    if (t->has_valid) {
      pto_text_puts(out, " valid");
      print_dims(out, p, t->valid, t->rank, ", ");
    }
    break;
  }
}

static const char *copy_text(pto_text *b, char *dst, size_t n) {
  if (n == 0) return dst;
  if (b->failed || !b->data)
    snprintf(dst, n, "%s", b->failed ? "<out of memory>" : "");
  else
    snprintf(dst, n, "%s", b->data);
  pto_text_free(b);
  return dst;
}

const char *pto__ir_type_text(const pto_ir_program *p, const pto_ir_type *t, char *dst, size_t n) {
  pto_text b = {0};
  pto__ir_print_type(&b, p, t);
  return copy_text(&b, dst, n);
}

const char *pto__ir_expr_text(const pto_ir_program *p, const pto_ir_expr *e, char *dst, size_t n) {
  pto_text b = {0};
  pto__ir_print_expr(&b, p, e);
  return copy_text(&b, dst, n);
}

const char *pto__ir_shape_text(const pto_ir_program *p, pto_ir_expr *const *dims, int rank,
                               char *dst, size_t n) {
  pto_text b = {0};
  pto__ir_print_shape(&b, p, dims, rank);
  return copy_text(&b, dst, n);
}

char *pto_ir_type_str(const pto_ir_program *p, const pto_ir_type *t) {
  pto_text b = {0};
  pto__ir_print_type(&b, p, t);
  return pto_text_finish(&b);
}

char *pto_ir_expr_str(const pto_ir_program *p, const pto_ir_expr *e) {
  pto_text b = {0};
  pto__ir_print_expr(&b, p, e);
  return pto_text_finish(&b);
}

/* ---- statements ----------------------------------------------------------------------- */

static void indent(pto_text *out, int n) {
  for (int i = 0; i < n; i++)
    pto_text_puts(out, "  ");
}

static void print_string(pto_text *out, const char *s) {
  pto_text_puts(out, "\"");
  for (; s && *s; s++) {
    switch (*s) {
    case '"': pto_text_puts(out, "\\\""); break;
    case '\\': pto_text_puts(out, "\\\\"); break;
    case '\n': pto_text_puts(out, "\\n"); break;
    case '\t': pto_text_puts(out, "\\t"); break;
    default: pto_text_put(out, s, 1);
    }
  }
  pto_text_puts(out, "\"");
}

/* A result type the parser could not deduce: a literal-only expression typed by a declaration. */
static int needs_type(const pto_ir_expr *e, const pto_ir_type *t) {
  return e && t && t->kind == PTO_TYPE_SCALAR && pto__ir_expr_is_flexible(e) &&
         t->dtype != pto__ir_flexible_default(e);
}

static void print_result(pto_text *out, const pto_ir_program *p, const pto_ir_value *v, int typed) {
  pto_text_printf(out, "%%%s", v->name);
  if (typed) {
    pto_text_puts(out, ": ");
    pto__ir_print_type(out, p, v->type);
  }
}

static void print_results(pto_text *out, const pto_ir_program *p, const pto_ir_stmt *s, int typed) {
  if (s->nresults == 0) return;
  for (int i = 0; i < s->nresults; i++) {
    if (i) pto_text_puts(out, ", ");
    print_result(out, p, s->results[i], typed);
  }
  pto_text_puts(out, " = ");
}

static void print_arg(pto_text *out, const pto_ir_program *p, const pto_ir_arg *a) {
  if (a->kw) pto_text_printf(out, "%s=", a->kw);
  switch (a->kind) {
  case PTO_ARG_EXPR: pto__ir_print_expr(out, p, a->expr); break;
  case PTO_ARG_DTYPE: pto_text_puts(out, pto_dtype_name(a->dtype)); break;
  case PTO_ARG_LIST: print_dims(out, p, a->list.items, a->list.n, ", "); break;
  case PTO_ARG_STRING: print_string(out, a->str); break;
  case PTO_ARG_WORD: pto_text_puts(out, a->str); break;
  }
}

/* pto_ir_format's walk over the source notes: comments are printed in source order as the
 * printer passes their lines, and each printed '}' takes the next '}' line of the source. NULL
 * (pto_ir_print) prints none. */
typedef struct comments {
  const pto_ir_source_notes *n;
  int next; /* the first comment not yet printed */
  int next_close;
  int fresh; /* at the start of the file or of a block, or after a blank line */
} comments;

static void print_comment(pto_text *out, const pto_ir_comment *c) { pto_text_puts(out, c->text); }

/* Full-line comments of lines before `line`, at depth. A blank line above one is kept, except
 * where the output starts a block or already has one, and so is one below the last (a header
 * comment set off from 'program'), except at the end of the file. */
static void comments_before(pto_text *out, comments *c, int line, int depth) {
  if (!c) return;
  const pto_ir_comment *k = NULL;
  for (; c->next < c->n->ncomments && c->n->comments[c->next].line < line; c->next++) {
    k = &c->n->comments[c->next];
    if (k->blank_before && !c->fresh) pto_text_puts(out, "\n");
    indent(out, depth);
    print_comment(out, k);
    pto_text_puts(out, "\n");
    c->fresh = 0;
  }
  if (k && k->blank_after && line != INT_MAX) {
    pto_text_puts(out, "\n");
    c->fresh = 1;
  }
}

/* The end-of-line comment of `line` (and any earlier one still pending), after the code. */
static void comments_eol(pto_text *out, comments *c, int line) {
  if (!c) return;
  for (; c->next < c->n->ncomments && c->n->comments[c->next].line <= line; c->next++) {
    pto_text_puts(out, "  ");
    print_comment(out, &c->n->comments[c->next]);
  }
}

/* Ends a header line ("... {"): its comment, the newline; the block starts. */
static void open_block(pto_text *out, comments *c, int line) {
  comments_eol(out, c, line);
  pto_text_puts(out, "\n");
  if (c) c->fresh = 1;
}

/* The '}' of a block at depth: the comments above it stay inside. Returns its source line (0
 * when unknown: then the comments wait for what follows). */
static int close_block(pto_text *out, comments *c, int depth) {
  int line = 0;
  if (c && c->next_close < c->n->nclose) line = c->n->close_lines[c->next_close++];
  comments_before(out, c, line, depth + 1);
  indent(out, depth);
  pto_text_puts(out, "}");
  return line;
}

static void print_block(pto_text *out, const pto_ir_program *p, const pto_ir_block *blk, int depth,
                        comments *c);

static void print_exprs(pto_text *out, const pto_ir_program *p, pto_ir_expr *const *es, int n) {
  for (int i = 0; i < n; i++) {
    if (i) pto_text_puts(out, ", ");
    pto__ir_print_expr(out, p, es[i]);
  }
}

static const pto_ir_stmt *last_yield(const pto_ir_block *blk) {
  if (blk->n == 0) return NULL;
  const pto_ir_stmt *s = blk->stmts[blk->n - 1];
  return s->kind == PTO_STMT_YIELD ? s : NULL;
}

static int yields_flexible(const pto_ir_block *blk) {
  const pto_ir_stmt *y = last_yield(blk);
  if (!y) return 0;
  for (int i = 0; i < y->ret.n; i++)
    if (pto__ir_expr_is_flexible(y->ret.vals[i])) return 1;
  return 0;
}

static void print_stmt(pto_text *out, const pto_ir_program *p, const pto_ir_stmt *s, int depth,
                       comments *c) {
  comments_before(out, c, s->loc.line, depth);
  indent(out, depth);
  int line = s->loc.line; /* of the line the statement's text ends on */
  switch (s->kind) {
  case PTO_STMT_ASSIGN:
    print_results(out, p, s, s->nresults == 1 && needs_type(s->expr, s->results[0]->type));
    pto__ir_print_expr(out, p, s->expr);
    break;
  case PTO_STMT_OP: {
    print_results(out, p, s, 0);
    const pto_op_info *info = pto_op_info_get(s->op.opc);
    pto_text_printf(out, "%s(", info ? info->name : "?");
    for (int i = 0; i < s->op.nargs; i++) {
      if (i) pto_text_puts(out, ", ");
      print_arg(out, p, &s->op.args[i]);
    }
    pto_text_puts(out, ")");
    break;
  }
  case PTO_STMT_CALL:
    print_results(out, p, s, 0);
    pto_text_printf(out, "call @%s(", s->call.callee ? s->call.callee->name : "?");
    print_exprs(out, p, s->call.args, s->call.nargs);
    pto_text_puts(out, ")");
    if (s->call.device) {
      pto_text_puts(out, " device=");
      pto__ir_print_expr(out, p, s->call.device);
    }
    break;
  case PTO_STMT_FOR:
    print_results(out, p, s, 0);
    pto_text_printf(out, "for %%%s in %s(", s->loop.iv->name,
                    s->loop.parallel ? "parallel" : "range");
    pto__ir_print_expr(out, p, s->loop.lo);
    pto_text_puts(out, ", ");
    pto__ir_print_expr(out, p, s->loop.hi);
    if (s->loop.step) {
      pto_text_puts(out, ", ");
      pto__ir_print_expr(out, p, s->loop.step);
    }
    pto_text_puts(out, ")");
    if (s->loop.niters > 0) {
      pto_text_puts(out, " iter(");
      for (int i = 0; i < s->loop.niters; i++) {
        if (i) pto_text_puts(out, ", ");
        print_result(out, p, s->loop.iters[i],
                     needs_type(s->loop.inits[i], s->loop.iters[i]->type));
        pto_text_puts(out, " = ");
        pto__ir_print_expr(out, p, s->loop.inits[i]);
      }
      pto_text_puts(out, ")");
    }
    pto_text_puts(out, " {");
    open_block(out, c, s->loc.line);
    print_block(out, p, &s->loop.body, depth + 1, c);
    line = close_block(out, c, depth);
    break;
  case PTO_STMT_IF:
    print_results(out, p, s,
                  s->nresults > 0 && (yields_flexible(&s->branch.then_body) ||
                                      yields_flexible(&s->branch.else_body)));
    pto_text_puts(out, "if ");
    pto__ir_print_expr(out, p, s->branch.cond);
    pto_text_puts(out, " {");
    open_block(out, c, s->loc.line);
    print_block(out, p, &s->branch.then_body, depth + 1, c);
    line = close_block(out, c, depth);
    if (s->branch.has_else) {
      /* A comment between '}' and 'else' opens the else block. */
      pto_text_puts(out, " else {");
      open_block(out, c, line);
      print_block(out, p, &s->branch.else_body, depth + 1, c);
      line = close_block(out, c, depth);
    }
    break;
  case PTO_STMT_INCORE:
    pto_text_puts(out, "incore ");
    if (s->incore.name) {
      print_string(out, s->incore.name);
      pto_text_puts(out, " ");
    }
    pto_text_puts(out, "{");
    open_block(out, c, s->loc.line);
    print_block(out, p, &s->incore.body, depth + 1, c);
    line = close_block(out, c, depth);
    break;
  case PTO_STMT_YIELD:
  case PTO_STMT_RETURN:
    pto_text_puts(out, s->kind == PTO_STMT_YIELD ? "yield" : "return");
    if (s->ret.n) pto_text_puts(out, " ");
    print_exprs(out, p, s->ret.vals, s->ret.n);
    break;
  }
  comments_eol(out, c, line);
  pto_text_puts(out, "\n");
  if (c) c->fresh = 0;
}

static void print_block(pto_text *out, const pto_ir_program *p, const pto_ir_block *blk, int depth,
                        comments *c) {
  for (int i = 0; i < blk->n; i++)
    print_stmt(out, p, blk->stmts[i], depth, c);
}

static const char *const k_func_kinds[] = {"kernel", "orch", "host"};
static const char *const k_dirs[] = {"in", "out", "inout"};

static void print_func(pto_text *out, const pto_ir_program *p, const pto_ir_func *f, comments *c) {
  comments_before(out, c, f->loc.line, 0);
  pto_text_printf(out, "%s @%s(", k_func_kinds[f->kind], f->name);
  for (int i = 0; i < f->nparams; i++) {
    const pto_ir_param *pa = &f->params[i];
    if (i) pto_text_puts(out, ", ");
    if (pa->dir != PTO_DIR_IN || pa->dir_written) pto_text_printf(out, "%s ", k_dirs[pa->dir]);
    print_result(out, p, pa->value, 1);
    if (pa->bind == PTO_BIND_RUNTIME) {
      pto_text_puts(out, " = runtime");
    } else if (pa->bind == PTO_BIND_LITERAL) {
      pto_text_puts(out, " = ");
      pto__ir_print_expr(out, p, pa->literal);
    }
  }
  pto_text_puts(out, ")");
  if (f->nrets > 0) {
    pto_text_puts(out, " -> (");
    for (int i = 0; i < f->nrets; i++) {
      if (i) pto_text_puts(out, ", ");
      pto__ir_print_type(out, p, f->rets[i]);
    }
    pto_text_puts(out, ")");
  }
  pto_text_puts(out, " {");
  open_block(out, c, f->loc.line);
  print_block(out, p, &f->body, 1, c);
  comments_eol(out, c, close_block(out, c, 0));
  pto_text_puts(out, "\n");
  if (c) c->fresh = 0;
}

static void print_program(pto_text *out, const pto_ir_program *p, comments *c) {
  comments_before(out, c, p->notes.program_line, 0);
  pto_text_printf(out, "program %s", p->name ? p->name : "unnamed");
  comments_eol(out, c, p->notes.program_line);
  pto_text_puts(out, "\n");
  if (c) c->fresh = 0;
  if (p->nsyms > 0) {
    comments_before(out, c, p->notes.dynamic_line, 0);
    pto_text_puts(out, "dynamic ");
    for (int i = 0; i < p->nsyms; i++)
      pto_text_printf(out, "%s%s", i ? ", " : "", p->syms[i]);
    comments_eol(out, c, p->notes.dynamic_line);
    pto_text_puts(out, "\n");
  }
  for (int i = 0; i < p->nfuncs; i++) {
    pto_text_puts(out, "\n");
    if (c) c->fresh = 1;
    print_func(out, p, p->funcs[i], c);
  }
  /* What follows the last function (or every comment, if the printer passed none). */
  comments_before(out, c, INT_MAX, 0);
}

static pto_status print_text(const pto_ir_program *p, comments *c, char **out_text) {
  *out_text = NULL;
  pto_text b = {0};
  print_program(&b, p, c);
  if (b.failed) {
    pto_text_free(&b);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory printing the program");
  }
  *out_text = pto_text_finish(&b);
  return PTO_OK;
}

pto_status pto_ir_print(const pto_ir_program *p, char **out_text) {
  if (!p) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_print: p is NULL");
  if (!out_text)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_print: out_text is NULL");
  return print_text(p, NULL, out_text);
}

pto_status pto_ir_format(const pto_ir_program *p, char **out_text) {
  if (!p) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_format: p is NULL");
  if (!out_text)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_format: out_text is NULL");
  comments c = {&p->notes, 0, 0, 1};
  return print_text(p, &c, out_text);
}

pto_status pto_ir_print_file(const pto_ir_program *p, FILE *f) {
  if (!p) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_print_file: p is NULL");
  if (!f) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_print_file: f is NULL");
  char *text = NULL;
  PTO_RETURN_IF_ERROR(pto_ir_print(p, &text));
  size_t n = strlen(text);
  int ok = fwrite(text, 1, n, f) == n;
  free(text);
  if (!ok) return pto_status_make(PTO_STATUS_IO, "writing the program text failed");
  return PTO_OK;
}
