/* Program-level queries: lifetime, function lookup, the entry point, keyword arguments and static
 * evaluation of index expressions. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"
#include "pto/arena.h"
#include "pto/base.h"

void pto_ir_program_destroy(pto_ir_program *p) {
  if (!p) return;
  /* The program struct itself lives in its arena. */
  pto_arena_destroy(p->arena);
}

/* Names compared by pto_ir_program_find_func (pto__ir_func_compares): one relaxed add a call. */
static atomic_long g_func_compares;

long pto__ir_func_compares(void) {
  return atomic_load_explicit(&g_func_compares, memory_order_relaxed);
}

pto_ir_func *pto_ir_program_find_func(const pto_ir_program *p, const char *name) {
  if (!p || !name) return NULL;
  /* By the builder's hash index: a program of N kernels named in N places costs O(N). */
  int indexed;
  long compares = 0;
  pto_ir_func *f = pto__ir_program_index_find(p, name, &indexed, &compares);
  for (int i = 0; !indexed && i < p->nfuncs && !f; i++, compares++)
    if (strcmp(p->funcs[i]->name, name) == 0) f = p->funcs[i];
  atomic_fetch_add_explicit(&g_func_compares, compares, memory_order_relaxed);
  return f;
}

/* Appends "@a, @b" naming every function of kind k to buf. */
static void list_kind(const pto_ir_program *p, pto_func_kind k, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < p->nfuncs && len + 1 < cap; i++) {
    if (p->funcs[i]->kind != k) continue;
    int n = snprintf(buf + len, cap - len, "%s@%s", len ? ", " : "", p->funcs[i]->name);
    if (n < 0) break;
    len += (size_t)n;
  }
}

pto_status pto_ir_program_entry(const pto_ir_program *p, const char *name, pto_ir_func **out_func) {
  if (!p) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_program_entry: p is NULL");
  if (!out_func)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_program_entry: out_func is NULL");
  *out_func = NULL;
  const char *file = p->file ? p->file : "<program>";
  if (name && *name) {
    const char *n = name[0] == '@' ? name + 1 : name;
    pto_ir_func *f = pto_ir_program_find_func(p, n);
    if (!f)
      return pto_status_make(PTO_STATUS_NOT_FOUND,
                             "%s: entry @%s: the program has no function named @%s", file, n, n);
    *out_func = f;
    return PTO_OK;
  }
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < p->nfuncs; i++)
    counts[p->funcs[i]->kind]++;
  pto_func_kind want = counts[PTO_FUNC_HOST] ? PTO_FUNC_HOST : PTO_FUNC_ORCH;
  if (counts[want] == 0) {
    if (!counts[PTO_FUNC_KERNEL])
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "%s: the program has no host or orch function to run", file);
    char names[512];
    list_kind(p, PTO_FUNC_KERNEL, names, sizeof names);
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: the program has no host or orch function to run: name the entry "
                           "with --entry NAME to run a kernel as one task (kernels: %s)",
                           file, names);
  }
  if (counts[want] > 1) {
    char names[512];
    list_kind(p, want, names, sizeof names);
    return pto_status_make(
        PTO_STATUS_INVALID_ARGUMENT,
        "%s: the program has %d %s functions (%s): name the entry with --entry NAME", file,
        counts[want], want == PTO_FUNC_HOST ? "host" : "orch", names);
  }
  for (int i = 0; i < p->nfuncs; i++)
    if (p->funcs[i]->kind == want) *out_func = p->funcs[i];
  return PTO_OK;
}

const pto_ir_arg *pto_ir_stmt_kwarg(const pto_ir_stmt *s, const char *kw) {
  if (!s || s->kind != PTO_STMT_OP) return NULL;
  for (int i = 0; i < s->op.nargs; i++)
    if (s->op.args[i].kw && strcmp(s->op.args[i].kw, kw) == 0) return &s->op.args[i];
  return NULL;
}

/* Floor division and modulo with the sign of the divisor, as PTIR defines them on integers.
 * The caller has excluded b == 0 and INT64_MIN / -1. */
int64_t pto__ir_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

int64_t pto__ir_floormod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/* all: also through at_launch extents (what their value would be, for warnings). */
static int eval_int(const pto_ir_expr *e, int64_t *out, int all) {
  if (!e || (e->at_launch && !all)) return -1;
  int64_t a, b, r;
  switch (e->kind) {
  case PTO_EXPR_INT:
    if (!pto_dtype_is_int(e->dtype)) return -1;
    *out = e->i;
    return 0;
  case PTO_EXPR_UNARY:
    if (e->op != PTO_EOP_NEG || eval_int(e->a, &a, all)) return -1;
    if (__builtin_sub_overflow((int64_t)0, a, &r)) return -1;
    *out = r;
    return 0;
  case PTO_EXPR_CAST:
    /* A cast between integer dtypes of a static value stays static for index arithmetic. */
    if (!pto_dtype_is_int(e->dtype) || eval_int(e->a, &a, all)) return -1;
    *out = a;
    return 0;
  case PTO_EXPR_BINARY:
    if (!pto_dtype_is_int(e->dtype)) return -1;
    if (eval_int(e->lhs, &a, all) || eval_int(e->rhs, &b, all)) return -1;
    switch (e->op) {
    case PTO_EOP_ADD:
      if (__builtin_add_overflow(a, b, &r)) return -1;
      break;
    case PTO_EOP_SUB:
      if (__builtin_sub_overflow(a, b, &r)) return -1;
      break;
    case PTO_EOP_MUL:
      if (__builtin_mul_overflow(a, b, &r)) return -1;
      break;
    case PTO_EOP_DIV:
      if (b == 0 || (a == INT64_MIN && b == -1)) return -1;
      r = pto__ir_floordiv(a, b);
      break;
    case PTO_EOP_MOD:
      if (b == 0) return -1;
      r = b == -1 ? 0 : pto__ir_floormod(a, b);
      break;
    case PTO_EOP_MIN: r = a < b ? a : b; break;
    case PTO_EOP_MAX: r = a > b ? a : b; break;
    default: return -1;
    }
    *out = r;
    return 0;
  default: return -1;
  }
}

int pto_ir_expr_static_int(const pto_ir_expr *e, int64_t *out) { return eval_int(e, out, 0); }

int pto_ir_expr_launch_int(const pto_ir_expr *e, int64_t *out) { return eval_int(e, out, 1); }

pto_status pto_ir_parse_file(const char *path, pto_ir_program **out_program) {
  if (!out_program)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_parse_file: out_program is NULL");
  *out_program = NULL;
  uint8_t *buf;
  size_t len;
  PTO_RETURN_IF_ERROR(pto_file_read(path, PTO_FILE_MAX_SOURCE, &buf, &len));
  pto_status s = pto_ir_parse_string((const char *)buf, len, path, out_program);
  free(buf);
  return s;
}

/* ---- statements in pre-order ------------------------------------------------------------ */

typedef struct stmt_walk {
  int index;   /* next statement's number */
  int want;    /* stmt_at: the number sought, or -1 */
  pto_loc loc; /* stmt_index: the position sought */
  const pto_ir_stmt *hit;
} stmt_walk;

/* Statements visited by every walk of this file, for tests that prove a pass linear
 * (pto__ir_stmt_steps). Relaxed: a count, read when nothing else runs. */
static atomic_long g_stmt_steps;

long pto__ir_stmt_steps(void) { return atomic_load_explicit(&g_stmt_steps, memory_order_relaxed); }

static int walk_block(stmt_walk *w, const pto_ir_block *b);

static int walk_stmt(stmt_walk *w, const pto_ir_stmt *s) {
  atomic_fetch_add_explicit(&g_stmt_steps, 1, memory_order_relaxed);
  int i = w->index++;
  if (w->want >= 0 ? i == w->want : s->loc.line == w->loc.line && s->loc.col == w->loc.col) {
    w->hit = s;
    w->want = i; /* stmt_index reads the number back from here */
    return 1;
  }
  switch (s->kind) {
  case PTO_STMT_FOR: return walk_block(w, &s->loop.body);
  case PTO_STMT_IF:
    return walk_block(w, &s->branch.then_body) || walk_block(w, &s->branch.else_body);
  case PTO_STMT_INCORE: return walk_block(w, &s->incore.body);
  default: return 0;
  }
}

static int walk_block(stmt_walk *w, const pto_ir_block *b) {
  for (int i = 0; i < b->n; i++)
    if (walk_stmt(w, b->stmts[i])) return 1;
  return 0;
}

const pto_ir_stmt *pto_ir_func_stmt_at(const pto_ir_func *f, int index) {
  return f ? pto_ir_block_stmt_at(&f->body, index) : NULL;
}

const pto_ir_stmt *pto_ir_block_stmt_at(const pto_ir_block *b, int index) {
  if (!b || index < 0) return NULL;
  stmt_walk w = {0, index, {0, 0}, NULL};
  walk_block(&w, b);
  return w.hit;
}

/* ---- incore scopes and the kernels they become ------------------------------------------ */

/* Names in insertion order, found by hash (pto__ir_name_index): the kernels named so far (val
 * unused) and, per base name, the next suffix to try (val). A linear scan per candidate made
 * naming N scopes of one base O(N^3): 2,000 unnamed scopes took 2.8 s, 10,000 would take
 * minutes. */
typedef struct name_set {
  struct {
    char s[PTO_IR_KERNEL_NAME_MAX];
    int val;
  } * e;
  int n, cap;
  pto__ir_name_index index;
} name_set;

/* Names compared by the incore naming's sets (pto__ir_name_compares), for a test that proves it
 * linear. Relaxed: a count, read when nothing else runs. */
static atomic_long g_name_compares;

long pto__ir_name_compares(void) {
  return atomic_load_explicit(&g_name_compares, memory_order_relaxed);
}

static const char *name_at(const void *t, int i) { return ((const name_set *)t)->e[i].s; }

static int name_find(const name_set *t, const char *name, long *compares) {
  return pto__ir_name_index_find(&t->index, name_at, t, name, strlen(name), compares);
}

/* Adds name (not in t): its index, or -1 when out of memory. */
static int name_add(name_set *t, const char *name, int val, long *compares) {
  if (pto_grow_int(&t->e, sizeof *t->e, &t->cap, t->n + 1)) return -1;
  snprintf(t->e[t->n].s, sizeof t->e[t->n].s, "%s", name);
  t->e[t->n].val = val;
  if (pto__ir_name_index_add(&t->index, name_at, t, t->n, compares)) return -1;
  return t->n++;
}

static void name_set_free(name_set *t) {
  free(t->e);
  pto__ir_name_index_clear(&t->index);
}

typedef struct incore_walk {
  const pto_ir_program *p;
  name_set kernels; /* the names given so far */
  name_set bases;   /* each base's next suffix */
  long compares;    /* names compared in the two, for pto__ir_name_compares */
  int (*visit)(void *ctx, const pto_ir_func *f, const pto_ir_stmt *scope, const char *kernel);
  void *ctx;
} incore_walk;

static int name_taken(incore_walk *w, const char *name) {
  return pto_ir_program_find_func(w->p, name) || name_find(&w->kernels, name, &w->compares) >= 0;
}

/* -1: out of memory; 1: the visitor stopped; 0: go on. */
static int incore_scope(incore_walk *w, const pto_ir_func *f, const pto_ir_stmt *s) {
  /* The scope's string made an identifier; else <func>_incore. A taken name gets 0, 1, ...:
   * names are only ever added, so a suffix found taken stays taken and the next scope of the
   * base starts after the last one given. */
  char base[100];
  if (s->incore.name && *s->incore.name) {
    size_t k = 0;
    for (const char *c = s->incore.name; *c && k < sizeof base - 1; c++)
      base[k++] =
          (char)((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')
                     ? *c
                     : '_');
    base[k] = 0;
    if (base[0] >= '0' && base[0] <= '9') base[0] = '_';
  } else {
    snprintf(base, sizeof base, "%s_incore", f->name);
  }
  int b = name_find(&w->bases, base, &w->compares);
  if (b < 0 && (b = name_add(&w->bases, base, -1, &w->compares)) < 0) return -1;
  char name[PTO_IR_KERNEL_NAME_MAX];
  int k = w->bases.e[b].val; /* -1: the base itself */
  for (;; k++) {
    if (k < 0)
      snprintf(name, sizeof name, "%s", base);
    else
      snprintf(name, sizeof name, "%s%d", base, k);
    if (!name_taken(w, name)) break;
  }
  w->bases.e[b].val = k + 1;
  int i = name_add(&w->kernels, name, 0, &w->compares);
  if (i < 0) return -1;
  return w->visit(w->ctx, f, s, w->kernels.e[i].s) ? 1 : 0;
}

static int incore_block(incore_walk *w, const pto_ir_func *f, const pto_ir_block *b) {
  for (int i = 0; i < b->n; i++) {
    const pto_ir_stmt *s = b->stmts[i];
    int r = 0;
    if (s->kind == PTO_STMT_INCORE)
      r = incore_scope(w, f, s);
    else if (s->kind == PTO_STMT_FOR)
      r = incore_block(w, f, &s->loop.body);
    else if (s->kind == PTO_STMT_IF)
      r = incore_block(w, f, &s->branch.then_body);
    if (!r && s->kind == PTO_STMT_IF) r = incore_block(w, f, &s->branch.else_body);
    if (r) return r;
  }
  return 0;
}

pto_status pto_ir_each_incore(const pto_ir_program *p,
                              int (*visit)(void *ctx, const pto_ir_func *f,
                                           const pto_ir_stmt *scope, const char *kernel),
                              void *ctx) {
  incore_walk w = {.p = p, .visit = visit, .ctx = ctx};
  int r = 0;
  for (int i = 0; p && i < p->nfuncs && !r; i++)
    if (p->funcs[i]->kind != PTO_FUNC_KERNEL) r = incore_block(&w, p->funcs[i], &p->funcs[i]->body);
  name_set_free(&w.kernels);
  name_set_free(&w.bases);
  atomic_fetch_add_explicit(&g_name_compares, w.compares, memory_order_relaxed);
  return r < 0 ? pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory naming incore scopes")
               : PTO_OK;
}

int pto_ir_func_stmt_index(const pto_ir_func *f, pto_loc loc) {
  if (!f || loc.line <= 0) return -1;
  stmt_walk w = {0, -1, loc, NULL};
  return walk_block(&w, &f->body) ? w.want : -1;
}

/* Appends the statements of b in pre-order to out (NULL: counts them only) from *n on. */
static void collect_block(const pto_ir_block *b, const pto_ir_stmt **out, int *n) {
  for (int i = 0; i < b->n; i++) {
    const pto_ir_stmt *s = b->stmts[i];
    atomic_fetch_add_explicit(&g_stmt_steps, 1, memory_order_relaxed);
    if (out) out[*n] = s;
    ++*n;
    switch (s->kind) {
    case PTO_STMT_FOR: collect_block(&s->loop.body, out, n); break;
    case PTO_STMT_IF:
      collect_block(&s->branch.then_body, out, n);
      collect_block(&s->branch.else_body, out, n);
      break;
    case PTO_STMT_INCORE: collect_block(&s->incore.body, out, n); break;
    default: break;
    }
  }
}

pto_status pto_ir_func_stmts(const pto_ir_func *f, const pto_ir_stmt ***out_stmts, int *out_n) {
  if (!out_stmts)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_func_stmts: out_stmts is NULL");
  if (!out_n)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_func_stmts: out_n is NULL");
  *out_stmts = NULL;
  *out_n = 0;
  if (!f) return PTO_OK;
  int n = 0;
  collect_block(&f->body, NULL, &n);
  if (!n) return PTO_OK;
  const pto_ir_stmt **v = pto_malloc((size_t)n * sizeof *v);
  if (!v)
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory listing the statements of @%s",
                           f->name);
  int k = 0;
  collect_block(&f->body, v, &k);
  *out_stmts = v;
  *out_n = n;
  return PTO_OK;
}

int pto_ir_stmt_each_expr(const pto_ir_stmt *s, int (*visit)(void *ctx, const pto_ir_expr *e),
                          void *ctx) {
  int rc = 0;
  if (!s || !visit) return 0;
#define VISIT(x)                                                                                   \
  do {                                                                                             \
    if ((x) && (rc = visit(ctx, (x))) != 0) return rc;                                             \
  } while (0)
  switch (s->kind) {
  case PTO_STMT_ASSIGN: VISIT(s->expr); break;
  case PTO_STMT_OP:
    for (int i = 0; i < s->op.nargs; i++) {
      const pto_ir_arg *a = &s->op.args[i];
      if (a->kind == PTO_ARG_EXPR) VISIT(a->expr);
      if (a->kind == PTO_ARG_LIST)
        for (int k = 0; k < a->list.n; k++)
          VISIT(a->list.items[k]);
    }
    break;
  case PTO_STMT_CALL:
    for (int i = 0; i < s->call.nargs; i++)
      VISIT(s->call.args[i]);
    VISIT(s->call.device);
    break;
  case PTO_STMT_FOR:
    VISIT(s->loop.lo);
    VISIT(s->loop.hi);
    VISIT(s->loop.step);
    for (int i = 0; i < s->loop.niters; i++)
      VISIT(s->loop.inits[i]);
    break;
  case PTO_STMT_IF: VISIT(s->branch.cond); break;
  case PTO_STMT_YIELD:
  case PTO_STMT_RETURN:
    for (int i = 0; i < s->ret.n; i++)
      VISIT(s->ret.vals[i]);
    break;
  case PTO_STMT_INCORE: break;
  }
#undef VISIT
  return 0;
}

static int visit_divides(void *ctx, const pto_ir_expr *e) {
  (void)ctx;
  return pto_ir_expr_divides_int(e);
}

bool pto_ir_stmt_divides_int(const pto_ir_stmt *s) {
  return pto_ir_stmt_each_expr(s, visit_divides, NULL) != 0;
}

bool pto_ir_expr_divides_int(const pto_ir_expr *x) {
  if (!x) return false;
  switch (x->kind) {
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: return pto_ir_expr_divides_int(x->a);
  case PTO_EXPR_BINARY:
    if ((x->op == PTO_EOP_DIV || x->op == PTO_EOP_MOD) && !pto_dtype_is_float(x->dtype) &&
        !(x->rhs->kind == PTO_EXPR_INT && x->rhs->i != 0))
      return true;
    return pto_ir_expr_divides_int(x->lhs) || pto_ir_expr_divides_int(x->rhs);
  default: return false;
  }
}
