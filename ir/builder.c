/* The IR builder: creates every node, checks it and deduces its type (see pto/ir_builder.h).
 *
 * State: the program under construction, a stack of open frames (a function header or body, a
 * for body, an if branch, an incore scope) whose innermost block receives statements, and per
 * function the value tables that give SSA visibility: each value records the scope it was defined
 * in, a scope is open while its frame is on the stack, and a value is visible iff its scope is
 * open. Names resolve through a hash chain of same-named values, innermost first. */
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"
#include "pto/arena.h"

typedef enum frame_kind { FR_HEADER, FR_BODY, FR_FOR, FR_THEN, FR_ELSE, FR_INCORE } frame_kind;

typedef struct frame {
  frame_kind kind;
  pto_ir_stmt *stmt;   /* FOR / IF / INCORE */
  pto_ir_block *block; /* where statements go */
  int scope;
  pto_loc loc;
  pto_ir_result *results; /* FOR / IF: named at begin, defined at end */
  int nresults;
  int ended; /* the block's last statement (yield / return) is in */
} frame;

typedef enum func_state { FN_HEADER = 0, FN_DECLARED, FN_BODY, FN_DONE } func_state;

struct pto_ir_builder {
  pto_ir_program *prog;
  pto_arena *arena;
  int handed_out;
  pto_loc loc;
  char *err; /* the first error, whole message */
  pto_status_code err_code;

  func_state *fstate; /* by func index */
  int fstate_cap;
  /* Capacities of the program's arena arrays that grow one element at a time (prog->syms,
   * prog->funcs, the open function's params): doubled, so that N declarations cost O(N) arena
   * bytes, not O(N^2) (an arena never frees the array a growth leaves behind). */
  int syms_cap, funcs_cap, params_cap;
  /* Hash indexes of the same three by name (the program's syms and funcs, the open function's
   * params), so that declaring N of them costs O(N), not N^2 name comparisons (100,000
   * parameters took minutes). */
  pto__ir_name_index sym_index, func_index, param_index;
  pto_ir_func *func; /* the function whose header or body is open */

  /* values of the open function, by id */
  pto_ir_value **vals;
  int *vscope;
  int *vprev;           /* previous value with the same name, or -1 */
  pto_ir_value **vroot; /* the buffer a tensor value names (writes are checked on it) */
  /* the tensor of the kernel a value names: as vroot, but a value from outside the open incore
   * scope is a parameter of the kernel the scope becomes (kernel_root_of) */
  pto_ir_value **vkroot;
  int nvals, capvals;
  int *names; /* hash slots: latest value id per name, -1 empty */
  int nnames_cap, nnames_used;

  unsigned char *scope_open;
  int nscopes, capscopes;

  frame *frames;
  int nframes, capframes;

  const pto_ir_type *scalar_types[PTO_DTYPE_COUNT];
};

/* ---- errors --------------------------------------------------------------------------- */

static const char *file_of(const pto_ir_builder *b) {
  return b->prog && b->prog->file ? b->prog->file : "<builder>";
}

static pto_status sticky(pto_ir_builder *b) { return pto_status_make(b->err_code, "%s", b->err); }

static pto_status failv_at(pto_ir_builder *b, pto_status_code code, pto_loc loc, const char *fmt,
                           va_list ap) {
  if (b->err) return sticky(b);
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  char *full = loc.line > 0 ? pto_strdup_printf("%s:%d:%d: %s", file_of(b), loc.line, loc.col, msg)
                            : pto_strdup_printf("%s: %s", file_of(b), msg);
  if (!full) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory building the IR");
  b->err = full;
  b->err_code = code;
  return sticky(b);
}

static pto_status fail_at(pto_ir_builder *b, pto_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static pto_status fail_at(pto_ir_builder *b, pto_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pto_status s = failv_at(b, PTO_STATUS_INVALID_ARGUMENT, loc.line ? loc : b->loc, fmt, ap);
  va_end(ap);
  return s;
}

static pto_status fail(pto_ir_builder *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static pto_status fail(pto_ir_builder *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pto_status s = failv_at(b, PTO_STATUS_INVALID_ARGUMENT, b->loc, fmt, ap);
  va_end(ap);
  return s;
}

static pto_status oom(pto_ir_builder *b) {
  if (b->err) return sticky(b);
  b->err = pto_strdup("out of memory building the IR");
  b->err_code = PTO_STATUS_OUT_OF_MEMORY;
  if (!b->err) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory building the IR");
  return sticky(b);
}

pto_status pto__ir_builder_oom(pto_ir_builder *b) { return oom(b); }

pto_status pto_ir_builder_fail(pto_ir_builder *b, const char *fmt, ...) {
  if (!b) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_fail: b is NULL");
  va_list ap;
  va_start(ap, fmt);
  pto_status s = failv_at(b, PTO_STATUS_INVALID_ARGUMENT, b->loc, fmt, ap);
  va_end(ap);
  return s;
}

pto_status pto__ir_errorf(const pto_ir_program *p, pto_loc loc, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *file = p && p->file ? p->file : "<program>";
  if (loc.line > 0)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s:%d:%d: %s", file, loc.line, loc.col,
                           msg);
  return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: %s", file, msg);
}

/* The first line of every public call: a NULL builder is refused naming the call, a failed one
 * repeats its first error. */
#define CHECK(b)                                                                                   \
  do {                                                                                             \
    if (!(b))                                                                                      \
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: the builder is NULL", __func__);    \
    if ((b)->err) return sticky(b);                                                                \
  } while (0)
#define TRY(expr)                                                                                  \
  do {                                                                                             \
    pto_status s__ = (expr);                                                                       \
    if (s__) return s__;                                                                           \
  } while (0)

/* Short texts for messages. */
typedef struct txt {
  char s[192];
} txt;
static txt ttext(const pto_ir_builder *b, const pto_ir_type *t) {
  txt r;
  pto__ir_type_text(b->prog, t, r.s, sizeof r.s);
  return r;
}
static txt etext(const pto_ir_builder *b, const pto_ir_expr *e) {
  txt r;
  pto__ir_expr_text(b->prog, e, r.s, sizeof r.s);
  return r;
}
static txt stext(const pto_ir_builder *b, const pto_ir_type *t) {
  txt r;
  pto__ir_shape_text(b->prog, t->dims, t->rank, r.s, sizeof r.s);
  return r;
}

/* ---- small shared helpers ------------------------------------------------------------- */

int pto__ir_valid_ident(const char *s) {
  if (!s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return 0;
  for (s++; *s; s++)
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
          *s == '_'))
      return 0;
  return 1;
}

static const char *const k_reserved[] = {
    "program", "dynamic", "kernel",  "orch",     "host",  "in",    "out",  "inout",
    "runtime", "for",     "range",   "parallel", "iter",  "if",    "else", "yield",
    "return",  "incore",  "call",    "device",   "true",  "false", "min",  "max",
    "mod",     "tensor",  "dtensor", "tile",     "valid", "inf",   "nan",  NULL};

int pto__ir_reserved_word(const char *s, size_t n) {
  for (int i = 0; k_reserved[i]; i++)
    if (strlen(k_reserved[i]) == n && memcmp(k_reserved[i], s, n) == 0) return 1;
  return pto_dtype_from_name(s, n) >= 0;
}

int pto__ir_expr_equal(const pto_ir_expr *a, const pto_ir_expr *b) {
  if (a == b) return 1;
  if (!a || !b || a->kind != b->kind || a->dtype != b->dtype) return 0;
  switch (a->kind) {
  case PTO_EXPR_INT: return a->i == b->i;
  case PTO_EXPR_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
  case PTO_EXPR_BOOL: return !a->b == !b->b;
  case PTO_EXPR_VALUE: return a->value == b->value;
  case PTO_EXPR_SYM: return a->sym == b->sym;
  case PTO_EXPR_UNARY: return a->op == b->op && pto__ir_expr_equal(a->a, b->a);
  case PTO_EXPR_CAST: return pto__ir_expr_equal(a->a, b->a);
  case PTO_EXPR_BINARY:
    return a->op == b->op && pto__ir_expr_equal(a->lhs, b->lhs) &&
           pto__ir_expr_equal(a->rhs, b->rhs);
  }
  return 0;
}

int pto__ir_type_equal(const pto_ir_type *a, const pto_ir_type *b) {
  if (a == b) return 1;
  if (!a || !b || a->kind != b->kind || a->dtype != b->dtype || a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (!pto__ir_expr_equal(a->dims[i], b->dims[i])) return 0;
  if (a->kind == PTO_TYPE_TILE) {
    if (a->space != b->space || !a->has_valid != !b->has_valid) return 0;
    if (a->has_valid)
      for (int i = 0; i < a->rank; i++)
        if (!pto__ir_expr_equal(a->valid[i], b->valid[i])) return 0;
  }
  return 1;
}

static int is_arith(pto_expr_op op) {
  return op == PTO_EOP_ADD || op == PTO_EOP_SUB || op == PTO_EOP_MUL || op == PTO_EOP_DIV ||
         op == PTO_EOP_MOD || op == PTO_EOP_MIN || op == PTO_EOP_MAX;
}
static int is_cmp(pto_expr_op op) { return op >= PTO_EOP_EQ && op <= PTO_EOP_GE; }

int pto__ir_expr_is_flexible(const pto_ir_expr *e) {
  if (!e) return 0;
  switch (e->kind) {
  case PTO_EXPR_INT:
  case PTO_EXPR_FLOAT: return 1;
  case PTO_EXPR_UNARY: return e->op == PTO_EOP_NEG && pto__ir_expr_is_flexible(e->a);
  case PTO_EXPR_BINARY:
    return is_arith(e->op) && pto__ir_expr_is_flexible(e->lhs) && pto__ir_expr_is_flexible(e->rhs);
  default: return 0;
  }
}

static int has_float_literal(const pto_ir_expr *e) {
  switch (e->kind) {
  case PTO_EXPR_FLOAT: return 1;
  case PTO_EXPR_UNARY: return has_float_literal(e->a);
  case PTO_EXPR_BINARY: return has_float_literal(e->lhs) || has_float_literal(e->rhs);
  default: return 0;
  }
}

pto_dtype pto__ir_flexible_default(const pto_ir_expr *e) {
  return has_float_literal(e) ? PTO_DTYPE_F32 : PTO_DTYPE_INDEX;
}

/* ---- memory --------------------------------------------------------------------------- */

static pto_ir_expr *new_expr(pto_ir_builder *b, pto_expr_kind kind, pto_dtype dt) {
  pto_ir_expr *e = pto_arena_alloc(b->arena, sizeof *e);
  if (!e) return NULL;
  e->kind = kind;
  e->dtype = dt;
  e->loc = b->loc;
  return e;
}

static pto_ir_expr *new_int(pto_ir_builder *b, int64_t v) {
  pto_ir_expr *e = new_expr(b, PTO_EXPR_INT, PTO_DTYPE_INDEX);
  if (e) e->i = v;
  return e;
}

static pto_ir_expr *new_binary(pto_ir_builder *b, pto_expr_op op, pto_ir_expr *l, pto_ir_expr *r) {
  pto_ir_expr *e = new_expr(b, PTO_EXPR_BINARY, l->dtype);
  if (!e) return NULL;
  e->op = op;
  e->lhs = l;
  e->rhs = r;
  e->height = 1 + (l->height > r->height ? l->height : r->height);
  return e;
}

/* A tree higher than PTO_IR_MAX_EXPR_HEIGHT would make every recursive walk (print, hash,
 * verify, emit, interpret) as deep: refused where it is built. */
static pto_status check_height(pto_ir_builder *b, const pto_ir_expr *e) {
  if (e->height <= PTO_IR_MAX_EXPR_HEIGHT) return PTO_OK;
  return fail_at(b, e->loc,
                 "expression too deep: more than %d operators nested or chained (split it into "
                 "several assignments)",
                 PTO_IR_MAX_EXPR_HEIGHT);
}

static uint32_t name_hash_n(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static const char *sym_name_at(const void *b, int i) {
  return ((const pto_ir_builder *)b)->prog->syms[i];
}
static const char *func_name_at(const void *b, int i) {
  return ((const pto_ir_builder *)b)->prog->funcs[i]->name;
}
static const char *param_name_at(const void *b, int i) {
  return ((const pto_ir_builder *)b)->func->params[i].value->name;
}

/* The slot of name (len bytes) in x, or the empty slot where it would go. x->cap > 0. */
static int index_slot(const pto__ir_name_index *x, pto__ir_name_at_fn at, const void *ctx,
                      const char *name, size_t len, long *compares) {
  uint32_t mask = (uint32_t)x->cap - 1;
  for (uint32_t i = name_hash_n(name, len) & mask;; i = (i + 1) & mask) {
    int v = x->slots[i];
    if (!v) return (int)i;
    if (compares) ++*compares;
    const char *n = at(ctx, v - 1);
    if (strlen(n) == len && memcmp(n, name, len) == 0) return (int)i;
  }
}

int pto__ir_name_index_find(const pto__ir_name_index *x, pto__ir_name_at_fn at, const void *ctx,
                            const char *name, size_t len, long *compares) {
  if (!x->cap) return -1;
  return x->slots[index_slot(x, at, ctx, name, len, compares)] - 1;
}

int pto__ir_name_index_add(pto__ir_name_index *x, pto__ir_name_at_fn at, const void *ctx, int i,
                           long *compares) {
  if ((x->used + 1) * 2 > x->cap) {
    if (x->cap > INT_MAX / 4) return -1;
    int cap = x->cap ? x->cap * 2 : 64;
    int *ns = pto_calloc((size_t)cap, sizeof *ns);
    if (!ns) return -1;
    pto__ir_name_index nx = {ns, cap, 0};
    for (int k = 0; k < x->cap; k++)
      if (x->slots[k]) {
        const char *n = at(ctx, x->slots[k] - 1);
        nx.slots[index_slot(&nx, at, ctx, n, strlen(n), compares)] = x->slots[k];
      }
    nx.used = x->used;
    free(x->slots);
    *x = nx;
  }
  const char *n = at(ctx, i);
  x->slots[index_slot(x, at, ctx, n, strlen(n), compares)] = i + 1;
  x->used++;
  return 0;
}

void pto__ir_name_index_clear(pto__ir_name_index *x) {
  free(x->slots);
  memset(x, 0, sizeof *x);
}

/* The arena array arr of n elements of elem bytes, with room for one more (doubled when full),
 * or NULL when out of memory. */
static void *arena_grow(pto_arena *a, void *arr, size_t elem, int n, int *cap) {
  if (arr && n < *cap) return arr;
  if (*cap > INT_MAX / 2) return NULL;
  int nc = *cap ? *cap * 2 : 8;
  void *np = pto_arena_realloc(a, arr, elem * (size_t)n, elem * (size_t)nc);
  if (np) *cap = nc;
  return np;
}

static int block_push(pto_ir_builder *b, pto_ir_block *blk, pto_ir_stmt *s) {
  if (blk->n == blk->cap) {
    int nc = blk->cap ? blk->cap * 2 : 8;
    pto_ir_stmt **ns = pto_arena_realloc(b->arena, blk->stmts, sizeof *ns * (size_t)blk->cap,
                                         sizeof *ns * (size_t)nc);
    if (!ns) return -1;
    blk->stmts = ns;
    blk->cap = nc;
  }
  blk->stmts[blk->n++] = s;
  return 0;
}

/* ---- lifetime ------------------------------------------------------------------------- */

/* The next pto_ir_program.serial: process-wide, atomic. */
static atomic_uint_fast64_t g_next_serial = 1;

pto_status pto_ir_builder_create(const char *program_name, const char *file,
                                 pto_ir_builder **out_b) {
  if (!out_b)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_create: out_b is NULL");
  *out_b = NULL;
  pto_ir_builder *b = pto_calloc(1, sizeof *b);
  pto_arena *a = pto_arena_create();
  pto_ir_program *p = a ? pto_arena_alloc(a, sizeof *p) : NULL;
  if (!b || !p) {
    free(b);
    pto_arena_destroy(a);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory creating a builder");
  }
  p->arena = a;
  p->serial = atomic_fetch_add(&g_next_serial, 1);
  p->name = pto_arena_strdup(a, program_name ? program_name : "unnamed");
  p->file = pto_arena_strdup(a, file ? file : "<builder>");
  b->prog = p;
  b->arena = a;
  if (!p->name || !p->file) {
    pto_ir_builder_destroy(b);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory creating a builder");
  }
  if (program_name && !pto__ir_valid_ident(program_name)) {
    pto_status s =
        fail(b, "program name '%s' is not a word ([A-Za-z_][A-Za-z0-9_]*)", program_name);
    pto_ir_builder_destroy(b);
    return s;
  }
  *out_b = b;
  return PTO_OK;
}

static void reset_values(pto_ir_builder *b) {
  b->nvals = 0;
  b->nscopes = 0;
  b->nnames_used = 0;
  for (int i = 0; i < b->nnames_cap; i++)
    b->names[i] = -1;
}

pto_ir_func *pto__ir_builder_find_func(const pto_ir_builder *b, const char *name) {
  if (!b || !name) return NULL;
  int i = pto__ir_name_index_find(&b->func_index, func_name_at, b, name, strlen(name), NULL);
  return i >= 0 ? b->prog->funcs[i] : NULL;
}

void pto_ir_builder_destroy(pto_ir_builder *b) {
  if (!b) return;
  if (!b->handed_out && b->prog) pto_ir_program_destroy(b->prog);
  free(b->err);
  free(b->fstate);
  free(b->vals);
  free(b->vscope);
  free(b->vprev);
  free(b->vroot);
  free(b->vkroot);
  free(b->names);
  pto__ir_name_index_clear(&b->sym_index);
  pto__ir_name_index_clear(&b->func_index);
  pto__ir_name_index_clear(&b->param_index);
  free(b->scope_open);
  free(b->frames);
  free(b);
}

pto_ir_program *pto_ir_builder_program(pto_ir_builder *b) {
  return !b || b->handed_out ? NULL : b->prog;
}
void pto_ir_builder_set_loc(pto_ir_builder *b, pto_loc loc) {
  if (b) b->loc = loc;
}
pto_loc pto_ir_builder_loc(const pto_ir_builder *b) { return b ? b->loc : (pto_loc){0}; }
const char *pto_ir_builder_error(const pto_ir_builder *b) { return b ? b->err : NULL; }

pto_status pto_ir_builder_finish(pto_ir_builder *b, pto_ir_program **out_program) {
  if (!out_program)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_builder_finish: out_program is NULL");
  *out_program = NULL;
  CHECK(b);
  if (b->handed_out) return fail(b, "the program was already handed out");
  if (b->nframes > 0) return fail(b, "@%s is still open", b->func ? b->func->name : "?");
  for (int i = 0; i < b->prog->nfuncs; i++)
    if (b->fstate[i] != FN_DONE)
      return fail_at(b, b->prog->funcs[i]->loc, "@%s has no body", b->prog->funcs[i]->name);
  /* The function index goes with the program, for pto_ir_program_find_func (no index when out
   * of memory: it then compares every name). */
  pto_ir_program *p = b->prog;
  p->func_slots = NULL;
  p->func_slots_cap = p->func_slots_n = 0;
  int *slots = b->func_index.cap
                   ? pto_arena_alloc(b->arena, sizeof *slots * (size_t)b->func_index.cap)
                   : NULL;
  if (slots && b->func_index.used == p->nfuncs) {
    memcpy(slots, b->func_index.slots, sizeof *slots * (size_t)b->func_index.cap);
    p->func_slots = slots;
    p->func_slots_cap = b->func_index.cap;
    p->func_slots_n = p->nfuncs;
  }
  b->handed_out = 1;
  *out_program = p;
  return PTO_OK;
}

pto_ir_func *pto__ir_program_index_find(const pto_ir_program *p, const char *name, int *out_found,
                                        long *out_compares) {
  *out_found = 0;
  if (!p->func_slots || p->func_slots_n != p->nfuncs || p->func_slots_cap <= 0) return NULL;
  *out_found = 1;
  size_t len = strlen(name);
  uint32_t mask = (uint32_t)p->func_slots_cap - 1;
  for (uint32_t i = name_hash_n(name, len) & mask;; i = (i + 1) & mask) {
    int v = p->func_slots[i];
    if (!v || v > p->nfuncs) return NULL;
    ++*out_compares;
    if (strcmp(p->funcs[v - 1]->name, name) == 0) return p->funcs[v - 1];
  }
}

/* ---- frames, scopes and values -------------------------------------------------------- */

static frame *top(pto_ir_builder *b) { return b->nframes ? &b->frames[b->nframes - 1] : NULL; }

static pto_status push_frame(pto_ir_builder *b, frame_kind kind, pto_ir_stmt *stmt,
                             pto_ir_block *blk) {
  /* Every walk over statements (verify, print, copy, lower) recurses into nested blocks, so
   * their depth is bounded like an expression's height. frames[0] is the body. */
  if (kind != FR_HEADER && kind != FR_BODY && b->nframes > PTO_IR_MAX_BLOCK_DEPTH)
    return fail(b,
                "blocks nested too deeply: more than %d levels of for, if and incore "
                "(move the inner part into a function)",
                PTO_IR_MAX_BLOCK_DEPTH);
  if (pto_grow_int(&b->frames, sizeof *b->frames, &b->capframes, b->nframes + 1) ||
      pto_grow_int(&b->scope_open, 1, &b->capscopes, b->nscopes + 1))
    return oom(b);
  frame *f = &b->frames[b->nframes++];
  memset(f, 0, sizeof *f);
  f->kind = kind;
  f->stmt = stmt;
  f->block = blk;
  f->scope = b->nscopes++;
  f->loc = b->loc;
  b->scope_open[f->scope] = 1;
  return PTO_OK;
}

static void pop_frame(pto_ir_builder *b) {
  frame *f = top(b);
  b->scope_open[f->scope] = 0;
  b->nframes--;
}

static int in_incore(const pto_ir_builder *b) {
  for (int i = 0; i < b->nframes; i++)
    if (b->frames[i].kind == FR_INCORE) return 1;
  return 0;
}

static int in_body(const pto_ir_builder *b) {
  return b->nframes > 0 && b->frames[0].kind == FR_BODY && b->func;
}

static int value_visible(const pto_ir_builder *b, const pto_ir_value *v) {
  return v && in_body(b) && v->id >= 0 && v->id < b->nvals && b->vals[v->id] == v &&
         b->scope_open[b->vscope[v->id]];
}

static uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

/* The slot holding name's chain, or the empty slot where it would go. */
static int name_slot(const pto_ir_builder *b, const char *name) {
  uint32_t mask = (uint32_t)b->nnames_cap - 1;
  for (uint32_t i = name_hash(name) & mask;; i = (i + 1) & mask) {
    int id = b->names[i];
    if (id < 0 || strcmp(b->vals[id]->name, name) == 0) return (int)i;
  }
}

static int names_rehash(pto_ir_builder *b) {
  int cap = b->nnames_cap ? b->nnames_cap * 2 : 64;
  int *old = b->names, oldcap = b->nnames_cap;
  b->names = pto_malloc(sizeof(int) * (size_t)cap);
  if (!b->names) {
    b->names = old;
    return -1;
  }
  b->nnames_cap = cap;
  for (int i = 0; i < cap; i++)
    b->names[i] = -1;
  for (int i = 0; i < oldcap; i++)
    if (old[i] >= 0) b->names[name_slot(b, b->vals[old[i]]->name)] = old[i];
  free(old);
  return 0;
}

static pto_ir_value *find_visible(const pto_ir_builder *b, const char *name) {
  if (!b->nnames_cap) return NULL;
  int slot = name_slot(b, name);
  for (int id = b->names[slot]; id >= 0; id = b->vprev[id])
    if (b->scope_open[b->vscope[id]]) return b->vals[id];
  return NULL;
}

static pto_ir_value *find_any(const pto_ir_builder *b, const char *name) {
  if (!b->nnames_cap) return NULL;
  int id = b->names[name_slot(b, name)];
  return id >= 0 ? b->vals[id] : NULL;
}

/* Registers an existing value node in the tables (params when a body opens, new values). */
static pto_status register_value(pto_ir_builder *b, pto_ir_value *v, int scope) {
  int need = b->nvals + 1;
  int cap = b->capvals;
  if (pto_grow_int(&b->vals, sizeof *b->vals, &cap, need)) return oom(b);
  if (cap != b->capvals) {
    int *ns = pto_realloc(b->vscope, sizeof(int) * (size_t)cap);
    if (ns) b->vscope = ns;
    int *np = ns ? pto_realloc(b->vprev, sizeof(int) * (size_t)cap) : NULL;
    if (np) b->vprev = np;
    pto_ir_value **nr = np ? pto_realloc(b->vroot, sizeof *nr * (size_t)cap) : NULL;
    if (nr) b->vroot = nr;
    pto_ir_value **nk = nr ? pto_realloc(b->vkroot, sizeof *nk * (size_t)cap) : NULL;
    if (nk) b->vkroot = nk;
    if (!nk) return oom(b);
    b->capvals = cap;
  }
  if ((b->nnames_used + 1) * 2 > b->nnames_cap && names_rehash(b)) return oom(b);
  int id = b->nvals++;
  v->id = id;
  b->vals[id] = v;
  b->vscope[id] = scope;
  b->vroot[id] = v;
  b->vkroot[id] = v;
  int slot = name_slot(b, v->name);
  b->vprev[id] = b->names[slot];
  if (b->names[slot] < 0) b->nnames_used++;
  b->names[slot] = id;
  if (b->func && id + 1 > b->func->nvalues) b->func->nvalues = id + 1;
  return PTO_OK;
}

static pto_ir_value *root_of(const pto_ir_builder *b, const pto_ir_value *v) {
  return v && v->id >= 0 && v->id < b->nvals && b->vals[v->id] == v ? b->vroot[v->id]
                                                                    : (pto_ir_value *)v;
}

/* The scope of the open incore block, or -1. */
static int incore_scope(const pto_ir_builder *b) {
  for (int i = 0; i < b->nframes; i++)
    if (b->frames[i].kind == FR_INCORE) return b->frames[i].scope;
  return -1;
}

/* The tensor of the kernel that v names: a kernel's parameter (or in an incore scope, a value
 * from outside it: the scope's kernel gets one parameter per such value, two views of one
 * buffer included), through the writes' and the ifs' and loops' aliases. */
static pto_ir_value *kernel_root_of(const pto_ir_builder *b, const pto_ir_value *v) {
  if (!v || v->id < 0 || v->id >= b->nvals || b->vals[v->id] != v) return (pto_ir_value *)v;
  int sc = incore_scope(b);
  if (sc >= 0 && b->vscope[v->id] < sc) return (pto_ir_value *)v;
  return b->vkroot[v->id];
}

/* Makes a value named by r (or a fresh name) of type t in the innermost open scope. */
static pto_status define_value(pto_ir_builder *b, const pto_ir_result *r, const pto_ir_type *t,
                               pto_ir_stmt *def, pto_ir_value **out) {
  pto_loc loc = r && r->loc.line ? r->loc : b->loc;
  char fresh[32];
  const char *name = r ? r->name : NULL;
  if (!name) {
    for (int k = b->nvals;; k++) {
      snprintf(fresh, sizeof fresh, "_%d", k);
      if (!find_visible(b, fresh)) break;
    }
    name = fresh;
  }
  if (!pto__ir_valid_ident(name)) return fail_at(b, loc, "'%%%s' is not a valid value name", name);
  pto_ir_value *prev = find_visible(b, name);
  if (prev) {
    if (prev->loc.line)
      return fail_at(b, loc, "%%%s is already defined at %d:%d (values are SSA: pick a new name)",
                     name, prev->loc.line, prev->loc.col);
    return fail_at(b, loc, "%%%s is already defined (values are SSA: pick a new name)", name);
  }
  pto_ir_value *v = pto_arena_alloc(b->arena, sizeof *v);
  if (!v || !(v->name = pto_arena_strdup(b->arena, name))) return oom(b);
  v->type = t;
  v->loc = loc;
  v->def = def;
  v->param_index = -1;
  TRY(register_value(b, v, top(b)->scope));
  *out = v;
  return PTO_OK;
}

/* ---- literal typing ------------------------------------------------------------------- */

static int float_fits(double v, pto_dtype dt) {
  if (!isfinite(v)) return 1;
  switch (dt) {
  case PTO_DTYPE_F16:
    return isfinite(pto_f16_to_f32(pto_f32_to_f16((float)v))) && fabs(v) < 65520.0;
  case PTO_DTYPE_BF16:
    return isfinite((float)v) && isfinite(pto_bf16_to_f32(pto_f32_to_bf16((float)v)));
  case PTO_DTYPE_F32: return isfinite((float)v);
  default: return 1;
  }
}

/* A literal above INT64_MAX (text `18446744073709551615`, pto_ir_builder_uint): an INT of dtype
 * u64 whose bits are negative as an int64, from its creation on. Only a u64 or a float context
 * holds it; any other literal of dtype u64 is at least 0 (a negative one does not fit). */
static int big_literal(const pto_ir_expr *e) {
  return e->kind == PTO_EXPR_INT && e->dtype == PTO_DTYPE_U64 && e->i < 0;
}

static int int_fits(int64_t v, pto_dtype dt) {
  switch (dt) {
  case PTO_DTYPE_I8: return v >= INT8_MIN && v <= INT8_MAX;
  case PTO_DTYPE_I16: return v >= INT16_MIN && v <= INT16_MAX;
  case PTO_DTYPE_I32: return v >= INT32_MIN && v <= INT32_MAX;
  case PTO_DTYPE_U8: return v >= 0 && v <= UINT8_MAX;
  case PTO_DTYPE_U16: return v >= 0 && v <= UINT16_MAX;
  case PTO_DTYPE_U32: return v >= 0 && v <= (int64_t)UINT32_MAX;
  case PTO_DTYPE_U64: return v >= 0;
  case PTO_DTYPE_I64:
  case PTO_DTYPE_INDEX: return 1;
  default: return pto_dtype_is_float(dt) ? float_fits((double)v, dt) : 0;
  }
}

/* Whether integer literal e fits dtype dt. */
static int lit_fits(const pto_ir_expr *e, pto_dtype dt) {
  if (big_literal(e))
    return dt == PTO_DTYPE_U64 ||
           (pto_dtype_is_float(dt) && float_fits((double)(uint64_t)e->i, dt));
  return int_fits(e->i, dt);
}

/* " (an integer from 0 to 255)" for an integer dtype (a float literal never fits one), else "". */
static txt int_range_text(pto_dtype dt) {
  txt t = {{0}};
  int64_t lo;
  uint64_t hi;
  if (dt != PTO_DTYPE_BOOL && !pto_dtype_is_float(dt) && pto_dtype_int_range(dt, &lo, &hi) == 0)
    snprintf(t.s, sizeof t.s, " (an integer from %lld to %llu)", (long long)lo,
             (unsigned long long)hi);
  return t;
}

/* "literal 300 does not fit u8 (an integer from 0 to 255)": integer literal e and dtype dt. */
static pto_status lit_misfit(pto_ir_builder *b, const pto_ir_expr *e, pto_dtype dt,
                             const char *what) {
  char lit[32], range[96] = "";
  if (big_literal(e))
    snprintf(lit, sizeof lit, "%llu", (unsigned long long)e->i);
  else
    snprintf(lit, sizeof lit, "%lld", (long long)e->i);
  int64_t lo;
  uint64_t hi;
  if (dt != PTO_DTYPE_BOOL && pto_dtype_int_range(dt, &lo, &hi) == 0)
    snprintf(range, sizeof range, " (an integer from %lld to %llu)", (long long)lo,
             (unsigned long long)hi);
  else if (dt == PTO_DTYPE_BOOL)
    snprintf(range, sizeof range, " (write true or false)");
  return fail_at(b, e->loc, "%sliteral %s does not fit %s%s%s", what, lit, pto_dtype_name(dt),
                 range,
                 big_literal(e) && !pto_dtype_is_float(dt)
                     ? "; only a u64 holds it: give it a u64 context, e.g. %x: u64 = ..."
                     : "");
}

/* Gives a flexible expression dtype dt; `what` names the context for messages. */
static pto_status coerce(pto_ir_builder *b, pto_ir_expr *e, pto_dtype dt, const char *what) {
  switch (e->kind) {
  case PTO_EXPR_INT:
    if (!lit_fits(e, dt)) return lit_misfit(b, e, dt, what);
    if (big_literal(e) && pto_dtype_is_float(dt)) { /* the value, as a float literal */
      double v = (double)(uint64_t)e->i;
      e->kind = PTO_EXPR_FLOAT;
      e->f = v;
    }
    break;
  case PTO_EXPR_FLOAT:
    if (!pto_dtype_is_float(dt) || !float_fits(e->f, dt)) {
      txt t = etext(b, e);
      return fail_at(b, e->loc, "%sliteral %s does not fit %s%s", what, t.s, pto_dtype_name(dt),
                     int_range_text(dt).s);
    }
    break;
  case PTO_EXPR_UNARY: TRY(coerce(b, e->a, dt, what)); break;
  case PTO_EXPR_BINARY:
    TRY(coerce(b, e->lhs, dt, what));
    TRY(coerce(b, e->rhs, dt, what));
    break;
  default: break;
  }
  e->dtype = dt;
  return PTO_OK;
}

/* Checks a finished expression: literals fit their dtype, no integer division by a constant
 * zero. Runs once per statement, after context has typed every literal. */
static pto_status commit(pto_ir_builder *b, const pto_ir_expr *e) {
  if (!e) return PTO_OK;
  switch (e->kind) {
  case PTO_EXPR_INT:
    if (!lit_fits(e, e->dtype)) return lit_misfit(b, e, e->dtype, "");
    return PTO_OK;
  case PTO_EXPR_FLOAT:
    if (!float_fits(e->f, e->dtype)) {
      txt t = etext(b, e);
      return fail_at(b, e->loc, "literal %s does not fit %s%s", t.s, pto_dtype_name(e->dtype),
                     int_range_text(e->dtype).s);
    }
    return PTO_OK;
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: return commit(b, e->a);
  case PTO_EXPR_BINARY: {
    TRY(commit(b, e->lhs));
    TRY(commit(b, e->rhs));
    int64_t z;
    if ((e->op == PTO_EOP_DIV || e->op == PTO_EOP_MOD) && pto_dtype_is_int(e->dtype) &&
        pto_ir_expr_static_int(e->rhs, &z) == 0 && z == 0)
      return fail_at(b, e->loc, "division by a constant zero");
    return PTO_OK;
  }
  default: return PTO_OK;
  }
}

/* A scalar expression of dtype dt (literals take it). */
static pto_status expect_scalar(pto_ir_builder *b, pto_ir_expr *e, pto_dtype dt, const char *what) {
  if (!e) return fail(b, "%smissing expression", what);
  if (e->kind == PTO_EXPR_VALUE && e->value->type->kind != PTO_TYPE_SCALAR) {
    txt t = ttext(b, e->value->type);
    return fail_at(b, e->loc, "%sexpected a scalar of type %s, got %%%s: %s", what,
                   pto_dtype_name(dt), e->value->name, t.s);
  }
  if (pto__ir_expr_is_flexible(e)) TRY(coerce(b, e, dt, what));
  if (e->dtype != dt) {
    txt t = etext(b, e);
    bool num = pto_dtype_is_int(dt) || pto_dtype_is_float(dt);
    return fail_at(b, e->loc, "%sexpected %s, got %s of type %s%s%s%s", what, pto_dtype_name(dt),
                   t.s, pto_dtype_name(e->dtype), num ? " (convert with a cast, e.g. " : "",
                   num ? pto_dtype_name(dt) : "", num ? "(x))" : "");
  }
  return commit(b, e);
}

/* A scalar expression without context: flexible ones keep their default dtype. */
static pto_status finish_scalar(pto_ir_builder *b, pto_ir_expr *e, const char *what) {
  if (e->kind == PTO_EXPR_VALUE && e->value->type->kind != PTO_TYPE_SCALAR) {
    txt t = ttext(b, e->value->type);
    return fail_at(b, e->loc, "%sexpected a scalar, got %%%s: %s", what, e->value->name, t.s);
  }
  /* Literals alone take their default dtype (a literal above INT64_MAX fits no index). */
  if (pto__ir_expr_is_flexible(e)) TRY(coerce(b, e, pto__ir_flexible_default(e), what));
  return commit(b, e);
}

/* ---- expressions ---------------------------------------------------------------------- */

pto_status pto_ir_builder_int(pto_ir_builder *b, int64_t v, pto_ir_expr **out_expr) {
  if (!out_expr)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_int: out_expr is NULL");
  CHECK(b);
  if (!(*out_expr = new_int(b, v))) return oom(b);
  return PTO_OK;
}

pto_status pto_ir_builder_uint(pto_ir_builder *b, uint64_t v, pto_ir_expr **out_expr) {
  if (!out_expr)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_uint: out_expr is NULL");
  CHECK(b);
  if (!(*out_expr = new_int(b, (int64_t)v))) return oom(b);
  if (v > (uint64_t)INT64_MAX) (*out_expr)->dtype = PTO_DTYPE_U64; /* see big_literal */
  return PTO_OK;
}

pto_status pto_ir_builder_float(pto_ir_builder *b, double v, pto_ir_expr **out_expr) {
  if (!out_expr)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_float: out_expr is NULL");
  CHECK(b);
  pto_ir_expr *e = new_expr(b, PTO_EXPR_FLOAT, PTO_DTYPE_F32);
  if (!e) return oom(b);
  /* A NaN is the quiet NaN of its sign, as pto_scalar_parse reads -D and --in: PTIR's text (nan,
   * -nan) and a manifest cannot write a payload, so a kept one would make a program whose printed
   * text parses to another (hash, cache key), and a work dir whose signature never matches. */
  e->f = isnan(v) ? copysign(NAN, v) : v;
  *out_expr = e;
  return PTO_OK;
}

pto_status pto_ir_builder_bool(pto_ir_builder *b, int v, pto_ir_expr **out_expr) {
  if (!out_expr)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_bool: out_expr is NULL");
  CHECK(b);
  pto_ir_expr *e = new_expr(b, PTO_EXPR_BOOL, PTO_DTYPE_BOOL);
  if (!e) return oom(b);
  e->b = v != 0;
  *out_expr = e;
  return PTO_OK;
}

static pto_status not_visible(pto_ir_builder *b, const pto_ir_value *v) {
  if (!v) return fail(b, "use of a NULL value");
  if (!in_body(b)) return fail(b, "%%%s: values are used only inside a function body", v->name);
  if (v->id >= 0 && v->id < b->nvals && b->vals[v->id] == v) {
    if (v->loc.line)
      return fail(b, "%%%s (defined at %d:%d inside a block) is not visible here", v->name,
                  v->loc.line, v->loc.col);
    return fail(b, "%%%s (defined inside a block) is not visible here", v->name);
  }
  if (!pto_arena_owns(b->arena, v))
    return fail(b, "%%%s belongs to another program (it was made by another builder)", v->name);
  return fail(b, "%%%s belongs to another function of this program", v->name);
}

pto_status pto_ir_builder_use(pto_ir_builder *b, pto_ir_value *v, pto_ir_expr **out_expr) {
  if (!out_expr)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_use: out_expr is NULL");
  CHECK(b);
  if (!value_visible(b, v)) return not_visible(b, v);
  pto_ir_expr *e = new_expr(b, PTO_EXPR_VALUE, v->type->dtype);
  if (!e) return oom(b);
  e->value = v;
  *out_expr = e;
  return PTO_OK;
}

pto_status pto_ir_builder_sym(pto_ir_builder *b, int sym, pto_ir_expr **out_expr) {
  if (!out_expr)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_sym: out_expr is NULL");
  CHECK(b);
  if (sym < 0 || sym >= b->prog->nsyms) return fail(b, "no dynamic symbol #%d", sym);
  pto_ir_expr *e = new_expr(b, PTO_EXPR_SYM, PTO_DTYPE_INDEX);
  if (!e) return oom(b);
  e->sym = sym;
  *out_expr = e;
  return PTO_OK;
}

static pto_status need_scalar_operand(pto_ir_builder *b, const pto_ir_expr *e, const char *op) {
  if (!e) return fail(b, "%s: missing operand", op);
  if (e->kind == PTO_EXPR_VALUE && e->value->type->kind != PTO_TYPE_SCALAR) {
    txt t = ttext(b, e->value->type);
    return fail_at(b, e->loc, "operand of %s must be a scalar, %%%s is %s", op, e->value->name,
                   t.s);
  }
  return PTO_OK;
}

static const char *op_word(pto_expr_op op) {
  static const char *const w[] = {"?",   "-",  "!",  "+", "-",  "*", "/",  "mod", "min",
                                  "max", "==", "!=", "<", "<=", ">", ">=", "&&",  "||"};
  return (unsigned)op < sizeof w / sizeof *w ? w[op] : "?";
}

pto_status pto_ir_builder_unary(pto_ir_builder *b, pto_expr_op op, pto_ir_expr *a,
                                pto_ir_expr **out_expr) {
  if (!out_expr)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_unary: out_expr is NULL");
  CHECK(b);
  const char *w = op_word(op);
  TRY(need_scalar_operand(b, a, w));
  if (op == PTO_EOP_NOT) {
    if (a->dtype != PTO_DTYPE_BOOL || pto__ir_expr_is_flexible(a))
      return fail_at(b, a->loc, "operand of ! must be bool, got %s", pto_dtype_name(a->dtype));
  } else if (op == PTO_EOP_NEG) {
    if (a->dtype == PTO_DTYPE_BOOL)
      return fail_at(b, a->loc, "operand of - must be a number, got bool");
    /* -literal folds into a literal, so `-5` is the same node from text and from C. */
    if (a->kind == PTO_EXPR_INT) {
      if (big_literal(a))
        return fail_at(b, b->loc, "integer literal -%llu out of range (" PTO__LIT_LOWEST ")",
                       (unsigned long long)a->i);
      if (a->i == INT64_MIN) return fail_at(b, a->loc, "integer literal out of range");
      a->i = -a->i;
      a->loc = b->loc;
      *out_expr = a;
      return PTO_OK;
    }
    if (a->kind == PTO_EXPR_FLOAT) {
      a->f = -a->f;
      a->loc = b->loc;
      *out_expr = a;
      return PTO_OK;
    }
  } else {
    return fail(b, "not a unary operator");
  }
  pto_ir_expr *e = new_expr(b, PTO_EXPR_UNARY, a->dtype);
  if (!e) return oom(b);
  e->op = op;
  e->a = a;
  e->height = a->height + 1;
  TRY(check_height(b, e));
  *out_expr = e;
  return PTO_OK;
}

pto_status pto_ir_builder_binary(pto_ir_builder *b, pto_expr_op op, pto_ir_expr *lhs,
                                 pto_ir_expr *rhs, pto_ir_expr **out_expr) {
  if (!out_expr)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_binary: out_expr is NULL");
  CHECK(b);
  const char *w = op_word(op);
  if (!(is_arith(op) || is_cmp(op) || op == PTO_EOP_AND || op == PTO_EOP_OR))
    return fail(b, "not a binary operator");
  TRY(need_scalar_operand(b, lhs, w));
  TRY(need_scalar_operand(b, rhs, w));
  int lf = pto__ir_expr_is_flexible(lhs), rf = pto__ir_expr_is_flexible(rhs);
  pto_dtype dt;
  if (op == PTO_EOP_AND || op == PTO_EOP_OR) {
    if (lhs->dtype != PTO_DTYPE_BOOL || lf)
      return fail_at(b, lhs->loc, "operands of %s must be bool, got %s", w,
                     pto_dtype_name(lhs->dtype));
    if (rhs->dtype != PTO_DTYPE_BOOL || rf)
      return fail_at(b, rhs->loc, "operands of %s must be bool, got %s", w,
                     pto_dtype_name(rhs->dtype));
    dt = PTO_DTYPE_BOOL;
  } else {
    /* Unify: a literal-only side takes the other side's dtype. */
    if (lf && !rf) {
      TRY(coerce(b, lhs, rhs->dtype, ""));
    } else if (rf && !lf) {
      TRY(coerce(b, rhs, lhs->dtype, ""));
    } else if (lf && rf && lhs->dtype != rhs->dtype) {
      /* a float literal's dtype, else u64 where one side holds a literal above INT64_MAX */
      pto_dtype u = pto_dtype_is_float(lhs->dtype)   ? lhs->dtype
                    : pto_dtype_is_float(rhs->dtype) ? rhs->dtype
                    : lhs->dtype == PTO_DTYPE_U64    ? lhs->dtype
                                                     : rhs->dtype;
      TRY(coerce(b, lhs, u, ""));
      TRY(coerce(b, rhs, u, ""));
    }
    if (lhs->dtype != rhs->dtype)
      return fail(b,
                  "operands of %s have different dtypes, %s and %s (convert one with a cast, e.g. "
                  "%s(x))",
                  w, pto_dtype_name(lhs->dtype), pto_dtype_name(rhs->dtype),
                  pto_dtype_name(lhs->dtype));
    if (lhs->dtype == PTO_DTYPE_BOOL && !(op == PTO_EOP_EQ || op == PTO_EOP_NE))
      return fail(b, "operands of %s must be numbers, got bool", w);
    dt = is_cmp(op) ? PTO_DTYPE_BOOL : lhs->dtype;
  }
  pto_ir_expr *e = new_binary(b, op, lhs, rhs);
  if (!e) return oom(b);
  e->dtype = dt;
  TRY(check_height(b, e));
  *out_expr = e;
  return PTO_OK;
}

pto_status pto_ir_builder_cast(pto_ir_builder *b, pto_dtype dt, pto_ir_expr *a,
                               pto_ir_expr **out_expr) {
  if (!out_expr)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_cast: out_expr is NULL");
  CHECK(b);
  if ((unsigned)dt >= PTO_DTYPE_COUNT) return fail(b, "cast to an unknown dtype");
  TRY(need_scalar_operand(b, a, pto_dtype_name(dt)));
  pto_ir_expr *e = new_expr(b, PTO_EXPR_CAST, dt);
  if (!e) return oom(b);
  e->a = a;
  e->height = a->height + 1;
  TRY(check_height(b, e));
  *out_expr = e;
  return PTO_OK;
}

pto_status pto_ir_builder_lookup(pto_ir_builder *b, const char *name, pto_ir_value **out_value) {
  if (!out_value)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_lookup: out_value is NULL");
  CHECK(b);
  *out_value = NULL;
  if (!name) return fail(b, "lookup of a NULL name");
  if (!in_body(b)) return fail(b, "%%%s: values are used only inside a function body", name);
  pto_ir_value *v = find_visible(b, name);
  if (v) {
    *out_value = v;
    return PTO_OK;
  }
  pto_ir_value *any = find_any(b, name);
  if (any && any->loc.line)
    return fail(b, "%%%s is defined at %d:%d inside a block and is not visible here", name,
                any->loc.line, any->loc.col);
  return fail(b, "undefined value %%%s", name);
}

/* ---- symbols and types ---------------------------------------------------------------- */

int pto_ir_builder_find_sym(const pto_ir_builder *b, const char *name, size_t len) {
  if (!b || !name) return -1;
  return pto__ir_name_index_find(&b->sym_index, sym_name_at, b, name, len, NULL);
}

pto_status pto_ir_builder_dynamic(pto_ir_builder *b, const char *name, int *out_sym) {
  CHECK(b);
  if (!pto__ir_valid_ident(name))
    return fail(b, "'%s' is not a valid symbol name", name ? name : "");
  if (pto__ir_reserved_word(name, strlen(name)))
    return fail(b, "'%s' cannot name a dynamic symbol: it is a keyword, a dtype, min, max or mod",
                name);
  if (pto_ir_builder_find_sym(b, name, strlen(name)) >= 0)
    return fail(b, "dynamic symbol %s is declared twice", name);
  pto_ir_program *p = b->prog;
  const char **ns = arena_grow(b->arena, p->syms, sizeof *ns, p->nsyms, &b->syms_cap);
  if (!ns || !(ns[p->nsyms] = pto_arena_strdup(b->arena, name))) return oom(b);
  p->syms = ns;
  if (pto__ir_name_index_add(&b->sym_index, sym_name_at, b, p->nsyms, NULL)) return oom(b);
  if (out_sym) *out_sym = p->nsyms;
  p->nsyms++;
  return PTO_OK;
}

pto_status pto_ir_builder_scalar_type(pto_ir_builder *b, pto_dtype dt,
                                      const pto_ir_type **out_type) {
  if (!out_type)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_builder_scalar_type: out_type is NULL");
  CHECK(b);
  if ((unsigned)dt >= PTO_DTYPE_COUNT) return fail(b, "unknown dtype");
  if (!b->scalar_types[dt]) {
    pto_ir_type *t = pto_arena_alloc(b->arena, sizeof *t);
    if (!t) return oom(b);
    t->kind = PTO_TYPE_SCALAR;
    t->dtype = dt;
    b->scalar_types[dt] = t;
  }
  *out_type = b->scalar_types[dt];
  return PTO_OK;
}

/* An index extent: constant expressions fold into one INT literal. */
static pto_status extent(pto_ir_builder *b, pto_ir_expr *e, const char *what, pto_ir_expr **out) {
  TRY(expect_scalar(b, e, PTO_DTYPE_INDEX, what));
  int64_t v;
  if (e->kind != PTO_EXPR_INT && pto_ir_expr_static_int(e, &v) == 0) {
    pto_ir_expr *lit = new_int(b, v);
    if (!lit) return oom(b);
    lit->loc = e->loc;
    e = lit;
  }
  *out = e;
  return PTO_OK;
}

static pto_status shaped_type(pto_ir_builder *b, pto_type_kind kind, pto_dtype dt, int rank,
                              pto_ir_expr *const *dims, const pto_ir_type **out_type) {
  CHECK(b);
  const char *kw = kind == PTO_TYPE_TENSOR ? "tensor" : "dtensor";
  if ((unsigned)dt >= PTO_DTYPE_COUNT) return fail(b, "%s: unknown dtype", kw);
  pto_ir_type *t = pto_arena_alloc(b->arena, sizeof *t);
  if (!t) return oom(b);
  t->kind = kind;
  t->dtype = dt;
  t->rank = rank;
  t->space = PTO_SPACE_DDR;
  if (rank == -1 && kind == PTO_TYPE_TENSOR) {
    *out_type = t;
    return PTO_OK;
  }
  if (rank < 1 || rank > PTO_MAX_RANK)
    return fail(b, "%s rank %d: a %s has rank 1 to %d", kw, rank, kw, PTO_MAX_RANK);
  if (!dims) return fail(b, "%s rank %d: dims is NULL", kw, rank);
  for (int i = 0; i < rank; i++) {
    TRY(extent(b, dims[i], "extent: ", &t->dims[i]));
    if (t->dims[i]->kind == PTO_EXPR_INT && t->dims[i]->i <= 0)
      return fail_at(b, t->dims[i]->loc, "%s extent %lld: extents are positive", kw,
                     (long long)t->dims[i]->i);
  }
  /* The static extents alone must give a byte size that fits: found here, not at a launch. */
  int64_t bytes = (int64_t)pto_dtype_size(dt);
  for (int i = 0; i < rank; i++) {
    if (t->dims[i]->kind != PTO_EXPR_INT) continue;
    if (__builtin_mul_overflow(bytes, t->dims[i]->i, &bytes))
      return fail_at(b, t->dims[i]->loc,
                     "%s extent %lld: the tensor's size in bytes overflows 64 bits", kw,
                     (long long)t->dims[i]->i);
  }
  *out_type = t;
  return PTO_OK;
}

pto_status pto_ir_builder_tensor_type(pto_ir_builder *b, pto_dtype dt, int rank,
                                      pto_ir_expr *const *dims, const pto_ir_type **out_type) {
  if (!b)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_tensor_type: b is NULL");
  if (!out_type)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_builder_tensor_type: out_type is NULL");
  return shaped_type(b, PTO_TYPE_TENSOR, dt, rank, dims, out_type);
}

pto_status pto_ir_builder_dtensor_type(pto_ir_builder *b, pto_dtype dt, int rank,
                                       pto_ir_expr *const *dims, const pto_ir_type **out_type) {
  if (!b)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_builder_dtensor_type: b is NULL");
  if (!out_type)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_builder_dtensor_type: out_type is NULL");
  return shaped_type(b, PTO_TYPE_DTENSOR, dt, rank, dims, out_type);
}

static pto_status tile_type(pto_ir_builder *b, pto_dtype dt, const int64_t shape[2],
                            pto_space space, int has_valid, pto_ir_expr *const *valid,
                            const pto_ir_type **out_type) {
  if (pto_shape_size(2, shape, dt, NULL, NULL))
    return fail(b, "tile [%lld, %lld] %s: its size in bytes overflows 64 bits", (long long)shape[0],
                (long long)shape[1], pto_dtype_name(dt));
  pto_ir_type *t = pto_arena_alloc(b->arena, sizeof *t);
  if (!t) return oom(b);
  t->kind = PTO_TYPE_TILE;
  t->dtype = dt;
  t->rank = 2;
  t->space = space;
  for (int i = 0; i < 2; i++)
    if (!(t->dims[i] = new_int(b, shape[i]))) return oom(b);
  /* A static valid region equal to the shape is the whole tile: the same type as none (a loop
   * carrying tile[8, 1] valid[8, 1] yields a tile[8, 1] without one). */
  int64_t v[2];
  if (has_valid && !pto_ir_expr_static_int(valid[0], &v[0]) &&
      !pto_ir_expr_static_int(valid[1], &v[1]) && v[0] == shape[0] && v[1] == shape[1])
    has_valid = 0;
  t->has_valid = has_valid;
  for (int i = 0; has_valid && i < 2; i++)
    t->valid[i] = valid[i];
  *out_type = t;
  return PTO_OK;
}

/* Checks and folds a tile's valid dims against its shape. */
static pto_status check_valid(pto_ir_builder *b, const char *what, pto_ir_expr *const *in, int n,
                              const int64_t shape[2], pto_ir_expr **out) {
  if (n != 2) return fail(b, "%svalid has %d dims, a tile has 2", what, n);
  for (int i = 0; i < 2; i++) {
    TRY(extent(b, in[i], what, &out[i]));
    int64_t v;
    if (pto_ir_expr_static_int(out[i], &v) == 0 && (v < 0 || v > shape[i]))
      return fail_at(b, out[i]->loc, "%svalid %s %lld is outside the tile's %lld %s", what,
                     i ? "columns" : "rows", (long long)v, (long long)shape[i],
                     i ? "columns" : "rows");
  }
  return PTO_OK;
}

pto_status pto_ir_builder_tile_type(pto_ir_builder *b, pto_dtype dt, int rank,
                                    pto_ir_expr *const *dims, pto_space space, int nvalid,
                                    pto_ir_expr *const *valid, const pto_ir_type **out_type) {
  if (!out_type)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_builder_tile_type: out_type is NULL");
  CHECK(b);
  if ((unsigned)dt >= PTO_DTYPE_COUNT) return fail(b, "tile: unknown dtype");
  if (rank != 2) return fail(b, "tile rank %d: tiles are 2-D", rank);
  if ((unsigned)space >= PTO_SPACE_COUNT || space == PTO_SPACE_DDR)
    return fail(b, "a tile lives in vec, mat, left, right or acc, not %s", pto_space_name(space));
  if (!dims) return fail(b, "tile: dims is NULL");
  if (nvalid && !valid) return fail(b, "tile: valid is NULL with nvalid %d", nvalid);
  int64_t shape[2];
  for (int i = 0; i < 2; i++) {
    pto_ir_expr *d;
    TRY(extent(b, dims[i], "tile shape: ", &d));
    if (d->kind != PTO_EXPR_INT) {
      txt t = etext(b, d);
      return fail_at(b, d->loc, "tile shapes are static: %s is not a constant", t.s);
    }
    if (d->i <= 0)
      return fail_at(b, d->loc, "tile extent %lld: extents are positive", (long long)d->i);
    shape[i] = d->i;
  }
  if (pto_shape_size(2, shape, dt, NULL, NULL))
    return fail_at(b, dims[1]->loc, "tile [%lld, %lld] %s: its size in bytes overflows 64 bits",
                   (long long)shape[0], (long long)shape[1], pto_dtype_name(dt));
  pto_ir_expr *v[2] = {0};
  if (nvalid) TRY(check_valid(b, "", valid, nvalid, shape, v));
  return tile_type(b, dt, shape, space, nvalid != 0, v, out_type);
}

/* ---- functions ------------------------------------------------------------------------ */

static const char *const k_kind_names[] = {"kernel", "orch", "host"};

pto_status pto__ir_builder_kernel_entry(pto_ir_builder *b, pto_ir_func *f, const char *kernel) {
  CHECK(b);
  if (!kernel) {
    f->kernel_entry = NULL;
    return PTO_OK;
  }
  if (!(f->kernel_entry = pto_arena_strdup(b->arena, kernel))) return oom(b);
  return PTO_OK;
}

pto_status pto_ir_builder_func_begin(pto_ir_builder *b, pto_func_kind kind, const char *name,
                                     pto_ir_func **out_func) {
  if (!out_func)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_builder_func_begin: out_func is NULL");
  CHECK(b);
  if (b->nframes)
    return fail(b, "@%s is still open: close it before starting another function", b->func->name);
  if ((unsigned)kind > PTO_FUNC_HOST) return fail(b, "unknown function kind");
  if (!pto__ir_valid_ident(name))
    return fail(b, "'@%s' is not a valid function name", name ? name : "");
  int previ = pto__ir_name_index_find(&b->func_index, func_name_at, b, name, strlen(name), NULL);
  pto_ir_func *prev = previ >= 0 ? b->prog->funcs[previ] : NULL;
  if (prev) return fail(b, "@%s is already defined at %d:%d", name, prev->loc.line, prev->loc.col);
  pto_ir_program *p = b->prog;
  pto_ir_func *f = pto_arena_alloc(b->arena, sizeof *f);
  pto_ir_func **nf = arena_grow(b->arena, p->funcs, sizeof *nf, p->nfuncs, &b->funcs_cap);
  if (nf) p->funcs = nf;
  int grown = pto_grow_int(&b->fstate, sizeof *b->fstate, &b->fstate_cap, p->nfuncs + 1);
  if (!f || !nf || grown || !(f->name = pto_arena_strdup(b->arena, name))) return oom(b);
  f->kind = kind;
  f->loc = b->loc;
  f->index = p->nfuncs;
  p->funcs[p->nfuncs] = f;
  if (pto__ir_name_index_add(&b->func_index, func_name_at, b, p->nfuncs, NULL)) return oom(b);
  b->params_cap = 0; /* f->params is NULL */
  pto__ir_name_index_clear(&b->param_index);
  b->fstate[p->nfuncs++] = FN_HEADER;
  b->func = f;
  reset_values(b);
  TRY(push_frame(b, FR_HEADER, NULL, NULL));
  *out_func = f;
  return PTO_OK;
}

static pto_status header_open(pto_ir_builder *b) {
  if (!b->nframes || top(b)->kind != FR_HEADER) return fail(b, "no function header is open");
  return PTO_OK;
}

/* Params and '->' types: extents are static integers or dynamic symbols. */
static pto_status signature_type(pto_ir_builder *b, const pto_ir_type *t, const char *what) {
  if (!t) return fail(b, "%s: missing type", what);
  if (t->kind == PTO_TYPE_TILE) return fail(b, "%s: a tile cannot cross a function boundary", what);
  for (int i = 0; i < t->rank; i++) {
    const pto_ir_expr *d = t->dims[i];
    if (d->kind != PTO_EXPR_INT && d->kind != PTO_EXPR_SYM) {
      txt s = etext(b, d);
      return fail_at(b, d->loc, "%s: extent %s must be a static integer or a dynamic symbol", what,
                     s.s);
    }
  }
  return PTO_OK;
}

pto_status pto_ir_builder_param(pto_ir_builder *b, const char *name, const pto_ir_type *type,
                                pto_dir dir, int dir_written, pto_bind_kind bind,
                                pto_ir_expr *literal, pto_ir_value **out_value) {
  CHECK(b);
  TRY(header_open(b));
  pto_ir_func *f = b->func;
  char what[160];
  snprintf(what, sizeof what, "parameter %%%s", name ? name : "?");
  if (!pto__ir_valid_ident(name))
    return fail(b, "'%%%s' is not a valid value name", name ? name : "");
  if (pto__ir_name_index_find(&b->param_index, param_name_at, b, name, strlen(name), NULL) >= 0)
    return fail(b, "%s is declared twice in @%s", what, f->name);
  TRY(signature_type(b, type, what));
  if (f->nrets) return fail(b, "%s: parameters come before the -> list", what);
  int is_tensor = type->kind != PTO_TYPE_SCALAR;
  if ((unsigned)dir > PTO_DIR_INOUT) return fail(b, "%s: unknown direction", what);
  if (!is_tensor && (dir != PTO_DIR_IN || dir_written))
    return fail(b, "%s: only tensor parameters have a direction", what);
  if (is_tensor && bind != PTO_BIND_NONE)
    return fail(b, "%s: only scalar parameters take a default", what);
  if (bind == PTO_BIND_LITERAL) {
    if (!literal || !(literal->kind == PTO_EXPR_INT || literal->kind == PTO_EXPR_FLOAT ||
                      literal->kind == PTO_EXPR_BOOL))
      return fail(b, "%s: a default is a literal or runtime", what);
    if (literal->kind == PTO_EXPR_BOOL) {
      if (type->dtype != PTO_DTYPE_BOOL)
        return fail_at(b, literal->loc, "%s: default %s is a bool, not %s", what,
                       literal->b ? "true" : "false", pto_dtype_name(type->dtype));
    } else {
      if (type->dtype == PTO_DTYPE_BOOL) {
        txt t = etext(b, literal);
        return fail_at(b, literal->loc, "%s: default %s is not a bool (write true or false)", what,
                       t.s);
      }
      char w[200];
      snprintf(w, sizeof w, "%s: default ", what);
      TRY(coerce(b, literal, type->dtype, w));
    }
  } else if (literal) {
    return fail(b, "%s: a literal given without bind LITERAL", what);
  } else if ((unsigned)bind > PTO_BIND_RUNTIME) {
    return fail(b, "%s: unknown binding", what);
  }
  pto_ir_param *np = arena_grow(b->arena, f->params, sizeof *np, f->nparams, &b->params_cap);
  if (np) f->params = np;
  pto_ir_value *v = pto_arena_alloc(b->arena, sizeof *v);
  if (!np || !v || !(v->name = pto_arena_strdup(b->arena, name))) return oom(b);
  v->type = type;
  v->loc = b->loc;
  v->param_index = f->nparams;
  v->id = f->nparams;
  pto_ir_param *pa = &np[f->nparams];
  pa->value = v;
  if (pto__ir_name_index_add(&b->param_index, param_name_at, b, f->nparams, NULL)) return oom(b);
  f->nparams++;
  pa->value = v;
  pa->dir = is_tensor ? dir : PTO_DIR_IN;
  pa->dir_written = dir_written;
  pa->bind = bind;
  pa->literal = literal;
  if (f->nvalues < f->nparams) f->nvalues = f->nparams;
  if (out_value) *out_value = v;
  return PTO_OK;
}

pto_status pto_ir_builder_func_rets(pto_ir_builder *b, const pto_ir_type *const *types, int n) {
  CHECK(b);
  TRY(header_open(b));
  pto_ir_func *f = b->func;
  if (f->nrets) return fail(b, "@%s already has a -> list", f->name);
  if (n < 0) return fail(b, "negative -> count");
  if (n && !types) return fail(b, "-> list of %d types, but types is NULL", n);
  const pto_ir_type **r = pto_arena_alloc(b->arena, sizeof *r * (size_t)(n ? n : 1));
  if (!r) return oom(b);
  for (int i = 0; i < n; i++) {
    TRY(signature_type(b, types[i], "-> type"));
    if (types[i]->kind == PTO_TYPE_SCALAR)
      return fail(b, "-> type %s: a function returns tensors (its outputs)",
                  pto_dtype_name(types[i]->dtype));
    r[i] = types[i];
  }
  f->rets = r;
  f->nrets = n;
  return PTO_OK;
}

static int is_buffer(const pto_ir_type *t) {
  return t->kind == PTO_TYPE_TENSOR || t->kind == PTO_TYPE_DTENSOR;
}

pto_status pto_ir_builder_header_end(pto_ir_builder *b) {
  CHECK(b);
  TRY(header_open(b));
  pto_ir_func *f = b->func;
  if (f->kind == PTO_FUNC_KERNEL) {
    /* A kernel's outputs are its out/inout tensors; '->' restates their types, in order. */
    int k = 0, ok = 1;
    for (int i = 0; i < f->nparams; i++) {
      const pto_ir_param *pa = &f->params[i];
      if (!is_buffer(pa->value->type) || pa->dir == PTO_DIR_IN) continue;
      if (k >= f->nrets || !pto__ir_type_equal(f->rets[k], pa->value->type)) ok = 0;
      k++;
    }
    if (k != f->nrets) ok = 0;
    if (!ok) {
      pto_text want = {0};
      for (int i = 0, j = 0; i < f->nparams; i++) {
        const pto_ir_param *pa = &f->params[i];
        if (!is_buffer(pa->value->type) || pa->dir == PTO_DIR_IN) continue;
        pto_text_puts(&want, j++ ? ", " : "");
        pto__ir_print_type(&want, b->prog, pa->value->type);
      }
      pto_status s = fail_at(b, f->loc,
                             "kernel @%s: its -> list must be the types of its out/inout tensor "
                             "parameters, in order: -> (%s)",
                             f->name, want.data ? want.data : "");
      pto_text_free(&want);
      return s;
    }
  }
  pop_frame(b);
  b->fstate[f->index] = FN_DECLARED;
  b->func = NULL;
  return PTO_OK;
}

pto_status pto_ir_builder_body_begin(pto_ir_builder *b, pto_ir_func *f) {
  CHECK(b);
  if (!f || f->index < 0 || f->index >= b->prog->nfuncs || b->prog->funcs[f->index] != f)
    return fail(b, "body_begin: not a function of this program");
  if (b->nframes && top(b)->kind == FR_HEADER && b->func == f) TRY(pto_ir_builder_header_end(b));
  if (b->nframes) return fail(b, "@%s is still open", b->func->name);
  if (b->fstate[f->index] != FN_DECLARED) return fail(b, "@%s already has a body", f->name);
  b->func = f;
  reset_values(b);
  TRY(push_frame(b, FR_BODY, NULL, &f->body));
  for (int i = 0; i < f->nparams; i++) {
    pto_ir_value *v = f->params[i].value;
    pto_ir_value *prev = find_visible(b, v->name);
    if (prev) return fail_at(b, v->loc, "parameter %%%s is declared twice", v->name);
    TRY(register_value(b, v, top(b)->scope));
  }
  b->fstate[f->index] = FN_BODY;
  return PTO_OK;
}

static const char *frame_word(frame_kind k) {
  switch (k) {
  case FR_FOR: return "for";
  case FR_THEN:
  case FR_ELSE: return "if";
  case FR_INCORE: return "incore";
  default: return "function";
  }
}

pto_status pto_ir_builder_body_end(pto_ir_builder *b) {
  CHECK(b);
  frame *fr = top(b);
  if (!fr || fr->kind == FR_HEADER) return fail(b, "no function body is open");
  if (fr->kind != FR_BODY)
    return fail(b, "the %s opened at %d:%d is not closed", frame_word(fr->kind), fr->loc.line,
                fr->loc.col);
  pto_ir_func *f = b->func;
  if (f->nrets > 0 && !fr->ended)
    return fail(b, "@%s must end with return of %d value%s (its -> list)", f->name, f->nrets,
                f->nrets == 1 ? "" : "s");
  pop_frame(b);
  b->fstate[f->index] = FN_DONE;
  b->func = NULL;
  return PTO_OK;
}

/* ---- statements ----------------------------------------------------------------------- */

static pto_status new_stmt(pto_ir_builder *b, pto_stmt_kind kind, pto_ir_stmt **out) {
  frame *fr = top(b);
  if (!fr || fr->kind == FR_HEADER || !in_body(b)) return fail(b, "no function body is open");
  if (fr->ended)
    return fail(b, "nothing may follow the %s that ends this block",
                fr->block->stmts[fr->block->n - 1]->kind == PTO_STMT_RETURN ? "return" : "yield");
  pto_ir_stmt *s = pto_arena_alloc(b->arena, sizeof *s);
  if (!s) return oom(b);
  s->kind = kind;
  s->loc = b->loc;
  *out = s;
  return PTO_OK;
}

static pto_status append(pto_ir_builder *b, pto_ir_stmt *s) {
  if (block_push(b, top(b)->block, s)) return oom(b);
  return PTO_OK;
}

static pto_status alloc_results(pto_ir_builder *b, pto_ir_stmt *s, int n) {
  s->nresults = n;
  if (n && !(s->results = pto_arena_alloc(b->arena, sizeof *s->results * (size_t)n))) return oom(b);
  return PTO_OK;
}

/* A declared result type must be the deduced one. */
static pto_status check_declared(pto_ir_builder *b, const pto_ir_result *r, const pto_ir_type *t) {
  if (!r || !r->type || pto__ir_type_equal(r->type, t)) return PTO_OK;
  txt d = ttext(b, r->type), g = ttext(b, t);
  return fail_at(b, r->loc, "%%%s is declared %s but its value is %s", r->name ? r->name : "?", d.s,
                 g.s);
}

static pto_status copy_results(pto_ir_builder *b, const pto_ir_result *in, int n,
                               pto_ir_result **out) {
  *out = NULL;
  if (!n) return PTO_OK;
  if (!in) return fail(b, "%d result%s, but results is NULL", n, n == 1 ? "" : "s");
  pto_ir_result *r = pto_arena_alloc(b->arena, sizeof *r * (size_t)n);
  if (!r) return oom(b);
  for (int i = 0; i < n; i++) {
    r[i] = in[i];
    if (in[i].name && !(r[i].name = pto_arena_strdup(b->arena, in[i].name))) return oom(b);
    if (!r[i].loc.line) r[i].loc = b->loc;
  }
  *out = r;
  return PTO_OK;
}

pto_status pto_ir_builder_assign(pto_ir_builder *b, const pto_ir_result *result, pto_ir_expr *e,
                                 pto_ir_value **out_value) {
  CHECK(b);
  pto_ir_stmt *s;
  TRY(new_stmt(b, PTO_STMT_ASSIGN, &s));
  if (!e) return fail(b, "assignment without an expression");
  const char *name = result && result->name ? result->name : "?";
  if (e->kind == PTO_EXPR_VALUE && e->value->type->kind != PTO_TYPE_SCALAR) {
    txt t = ttext(b, e->value->type);
    return fail_at(b, e->loc, "%%%s = %%%s: only scalar expressions are assigned; %%%s is %s", name,
                   e->value->name, e->value->name, t.s);
  }
  const pto_ir_type *t;
  if (result && result->type) {
    if (result->type->kind != PTO_TYPE_SCALAR) {
      txt d = ttext(b, result->type);
      return fail_at(b, result->loc, "%%%s is declared %s, but a scalar expression is assigned",
                     name, d.s);
    }
    char what[160];
    snprintf(what, sizeof what, "%%%s: ", name);
    TRY(expect_scalar(b, e, result->type->dtype, what));
    t = result->type;
  } else {
    TRY(finish_scalar(b, e, ""));
    TRY(pto_ir_builder_scalar_type(b, e->dtype, &t));
  }
  s->expr = e;
  TRY(alloc_results(b, s, 1));
  TRY(define_value(b, result, t, s, &s->results[0]));
  TRY(append(b, s));
  if (out_value) *out_value = s->results[0];
  return PTO_OK;
}

/* ---- op typing ------------------------------------------------------------------------ */

/* What one op statement is checked with: its args (positional, then keywords in canonical order)
 * and what the typing rule produces. */
typedef struct opctx {
  pto_ir_builder *b;
  const pto_op_info *info;
  pto_opcode opc;
  pto_ir_arg *pos;
  int npos;
  const pto_ir_arg *kw[8]; /* by position in info->keywords */
  const pto_ir_type *rtype;
  pto_ir_value *alias; /* the written target a result aliases */
} opctx;

static pto_status op_fail_at(opctx *c, pto_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static pto_status op_fail_at(opctx *c, pto_loc loc, const char *fmt, ...) {
  char msg[900];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return fail_at(c->b, loc, "%s: %s", c->info->name, msg);
}
#define OPFAIL(c, ...) op_fail_at((c), (c)->b->loc, __VA_ARGS__)

static const char *arg_kind_text(const pto_ir_arg *a) {
  switch (a->kind) {
  case PTO_ARG_DTYPE: return "a dtype";
  case PTO_ARG_LIST: return "a list";
  case PTO_ARG_STRING: return "a string";
  case PTO_ARG_WORD: return "a word";
  default: return "an expression";
  }
}

/* Positional argument i (0-based) as a value whose type kind is in mask (bits of pto_type_kind). */
static pto_status arg_value(opctx *c, int i, unsigned mask, pto_ir_value **out) {
  const pto_ir_arg *a = &c->pos[i];
  char want[64] = "";
  static const char *const names[] = {"scalar", "tensor", "dtensor", "tile"};
  for (int k = 0, n = 0; k < 4; k++)
    if (mask & (1u << k)) {
      strcat(want, n++ ? " or " : "");
      strcat(want, names[k]);
    }
  if (a->kind != PTO_ARG_EXPR)
    return op_fail_at(c, a->loc, "argument %d must be a %s, got %s", i + 1, want, arg_kind_text(a));
  if (a->expr->kind != PTO_EXPR_VALUE || !(mask & (1u << a->expr->value->type->kind))) {
    txt e = etext(c->b, a->expr);
    if (a->expr->kind == PTO_EXPR_VALUE) {
      txt t = ttext(c->b, a->expr->value->type);
      return op_fail_at(c, a->loc, "argument %d must be a %s, got %s: %s", i + 1, want, e.s, t.s);
    }
    return op_fail_at(c, a->loc, "argument %d must be a %s value, got %s", i + 1, want, e.s);
  }
  *out = a->expr->value;
  return PTO_OK;
}

#define M_TENSOR ((1u << PTO_TYPE_TENSOR) | (1u << PTO_TYPE_DTENSOR))
#define M_TILE (1u << PTO_TYPE_TILE)
#define M_DTENSOR (1u << PTO_TYPE_DTENSOR)

static pto_status arg_tile(opctx *c, int i, pto_ir_value **out) {
  return arg_value(c, i, M_TILE, out);
}

/* A scalar argument of dtype dt. */
static pto_status arg_scalar(opctx *c, int i, pto_dtype dt, const char *what) {
  const pto_ir_arg *a = &c->pos[i];
  if (a->kind != PTO_ARG_EXPR)
    return op_fail_at(c, a->loc, "argument %d (%s) must be a scalar, got %s", i + 1, what,
                      arg_kind_text(a));
  char w[160];
  snprintf(w, sizeof w, "%s: %s: ", c->info->name, what);
  return expect_scalar(c->b, a->expr, dt, w);
}

static pto_status arg_dtype(opctx *c, int i, pto_dtype *out) {
  const pto_ir_arg *a = &c->pos[i];
  if (a->kind != PTO_ARG_DTYPE)
    return op_fail_at(c, a->loc, "argument %d must be a dtype, got %s", i + 1, arg_kind_text(a));
  if ((unsigned)a->dtype >= PTO_DTYPE_COUNT)
    return op_fail_at(c, a->loc, "argument %d: unknown dtype", i + 1);
  *out = a->dtype;
  return PTO_OK;
}

/* A list argument of index expressions; n < 0: any length 1..5. */
static pto_status check_list(opctx *c, const pto_ir_arg *a, const char *what, int n) {
  if (a->kind != PTO_ARG_LIST)
    return op_fail_at(c, a->loc, "%s must be a list [..], got %s", what, arg_kind_text(a));
  if (n >= 0 && a->list.n != n)
    return op_fail_at(c, a->loc, "%s: %d entr%s, expected %d", what, a->list.n,
                      a->list.n == 1 ? "y" : "ies", n);
  if (n < 0 && (a->list.n < 1 || a->list.n > PTO_MAX_RANK))
    return op_fail_at(c, a->loc, "%s: %d entr%s, expected 1 to %d", what, a->list.n,
                      a->list.n == 1 ? "y" : "ies", PTO_MAX_RANK);
  char w[160];
  snprintf(w, sizeof w, "%s: %s: ", c->info->name, what);
  for (int k = 0; k < a->list.n; k++)
    TRY(expect_scalar(c->b, a->list.items[k], PTO_DTYPE_INDEX, w));
  return PTO_OK;
}

/* A static tile shape [R, C]. */
static pto_status tile_shape(opctx *c, const pto_ir_arg *a, int64_t shape[2]) {
  TRY(check_list(c, a, "the tile shape", 2));
  for (int k = 0; k < 2; k++) {
    int64_t v;
    pto_ir_expr *e = a->list.items[k];
    if (pto_ir_expr_static_int(e, &v)) {
      txt t = etext(c->b, e);
      return op_fail_at(c, e->loc, "tile shapes are static: %s is not a constant", t.s);
    }
    if (v <= 0)
      return op_fail_at(c, e->loc, "tile extent %lld: extents are positive", (long long)v);
    shape[k] = v;
  }
  return PTO_OK;
}

/* Index of kw in the op's keyword list. */
static int kw_index(const char *list, const char *kw, size_t kwlen) {
  int idx = 0;
  for (const char *p = list; *p;) {
    const char *e = strchr(p, ' ');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n == kwlen && memcmp(p, kw, n) == 0) return idx;
    idx++;
    p += n;
    while (*p == ' ')
      p++;
  }
  return -1;
}

static const pto_ir_arg *kwarg(opctx *c, const char *kw) {
  int i = kw_index(c->info->keywords, kw, strlen(kw));
  return i >= 0 ? c->kw[i] : NULL;
}

/* A keyword whose value is one of the space-separated words in `allowed`; *out: its index or
 * dflt when absent. */
static pto_status kw_word(opctx *c, const char *kw, const char *allowed, int dflt, int required,
                          int *out) {
  const pto_ir_arg *a = kwarg(c, kw);
  if (!a) {
    if (required) return OPFAIL(c, "needs %s= (one of %s)", kw, allowed);
    *out = dflt;
    return PTO_OK;
  }
  if (a->kind != PTO_ARG_WORD)
    return op_fail_at(c, a->loc, "%s= takes a word (one of %s), got %s", kw, allowed,
                      arg_kind_text(a));
  int i = kw_index(allowed, a->str, strlen(a->str));
  if (i < 0) return op_fail_at(c, a->loc, "%s=%s: expected one of %s", kw, a->str, allowed);
  *out = i;
  return PTO_OK;
}

static int64_t tile_dim(const pto_ir_type *t, int i) { return t->dims[i]->i; }

static pto_status same_shape(opctx *c, const pto_ir_type *a, const pto_ir_type *b2) {
  if (tile_dim(a, 0) != tile_dim(b2, 0) || tile_dim(a, 1) != tile_dim(b2, 1)) {
    txt x = stext(c->b, a), y = stext(c->b, b2);
    return OPFAIL(c, "shapes %s and %s differ", x.s, y.s);
  }
  return PTO_OK;
}

static pto_status same_dtype(opctx *c, const pto_ir_type *a, const pto_ir_type *b2) {
  if (a->dtype != b2->dtype)
    return OPFAIL(c, "dtypes %s and %s differ", pto_dtype_name(a->dtype),
                  pto_dtype_name(b2->dtype));
  return PTO_OK;
}

/* A bool tile lives in vec: a tile of another space made or moved as bool is an error. */
static pto_status bool_in_vec(opctx *c, pto_dtype dt, pto_space sp) {
  if (dt != PTO_DTYPE_BOOL || sp == PTO_SPACE_VEC) return PTO_OK;
  return OPFAIL(c, "a bool tile lives in vec, not %s", pto_space_name(sp));
}

/* A write target must not be (a view or alias of) an `in` parameter. */
static pto_status check_writable(opctx *c, const pto_ir_value *target, const char *who) {
  const pto_ir_value *r = root_of(c->b, target);
  if (r && r->param_index >= 0 && c->b->func && r->param_index < c->b->func->nparams &&
      c->b->func->params[r->param_index].value == r &&
      c->b->func->params[r->param_index].dir == PTO_DIR_IN) {
    if (r == target)
      return fail(c->b, "%s writes %%%s, an in parameter (declare it out or inout)", who, r->name);
    return fail(
        c->b, "%s writes %%%s, which is a view of %%%s, an in parameter (declare it out or inout)",
        who, target->name, r->name);
  }
  return PTO_OK;
}

/* Static offset checks for tile.load/store/tensor.read: each static offset within the extent;
 * for the tile's two dims, the tile's rows/cols (its valid extent if static) must fit. */
static pto_status check_tile_window(opctx *c, const pto_ir_arg *offs, const pto_ir_type *t,
                                    const int64_t span[2], int has_span) {
  int r = t->rank;
  for (int d = 0; d < r; d++) {
    int64_t o, e;
    pto_ir_expr *oe = offs->list.items[d];
    if (pto_ir_expr_static_int(oe, &o)) continue;
    if (o < 0) return op_fail_at(c, oe->loc, "offset %lld of dim %d is negative", (long long)o, d);
    if (pto_ir_expr_static_int(t->dims[d], &e)) continue;
    if (o >= e)
      return op_fail_at(c, oe->loc, "offset %lld is at or past the extent %lld of dim %d",
                        (long long)o, (long long)e, d);
    int td = d - (r - 2); /* which tile dim this tensor dim is, if any */
    if (r == 1) td = 1;
    if (!has_span || td < 0 || td > 1) continue;
    if (span[td] > e - o) /* 0 <= o < e: no overflow, as o + span[td] could */
      return op_fail_at(c, oe->loc,
                        "%s %lld..%llu fall past the extent %lld of dim %d (give the tile a valid "
                        "region that fits)",
                        td ? "columns" : "rows", (long long)o,
                        (unsigned long long)o + (unsigned long long)span[td], (long long)e, d);
  }
  return PTO_OK;
}

/* The extent a tile covers per dim for range checks: its static valid dims, else its shape. */
static int tile_span(const pto_ir_type *tt, int64_t span[2]) {
  for (int i = 0; i < 2; i++) {
    span[i] = tile_dim(tt, i);
    if (tt->has_valid) {
      int64_t v;
      if (pto_ir_expr_static_int(tt->valid[i], &v)) return 0; /* dynamic: checked at launch */
      span[i] = v;
    }
  }
  return 1;
}

static pto_status need_rank_list(opctx *c, const pto_ir_arg *a, const pto_ir_type *t,
                                 const char *what) {
  return check_list(c, a, what, t->rank >= 0 ? t->rank : -1);
}

static const char *const k_spaces_load = "vec mat";
static const pto_space k_load_space[] = {PTO_SPACE_VEC, PTO_SPACE_MAT};

static pto_status type_tile_load(opctx *c) {
  pto_ir_value *t;
  TRY(arg_value(c, 0, M_TENSOR, &t));
  const pto_ir_type *tt = t->type;
  TRY(need_rank_list(c, &c->pos[1], tt, "the offsets"));
  int64_t shape[2];
  TRY(tile_shape(c, &c->pos[2], shape));
  if (tt->rank == 1 && shape[0] != 1)
    return OPFAIL(c, "a tile loaded from a rank-1 tensor has 1 row, not %lld", (long long)shape[0]);
  const pto_ir_arg *sp = kwarg(c, "space");
  if (sp && sp->kind == PTO_ARG_WORD && pto_space_from_name(sp->str, strlen(sp->str)) >= 0 &&
      kw_index(k_spaces_load, sp->str, strlen(sp->str)) < 0)
    return op_fail_at(c, sp->loc,
                      "loads reach only vec and mat, not %s (move the tile there with tile.move)",
                      sp->str);
  int si, pad;
  TRY(kw_word(c, "space", k_spaces_load, 0, 0, &si));
  TRY(kw_word(c, "pad", "zero min max", 0, 0, &pad));
  const pto_ir_arg *va = kwarg(c, "valid");
  pto_ir_expr *valid[2] = {0};
  if (va) {
    if (va->kind != PTO_ARG_LIST)
      return op_fail_at(c, va->loc, "valid= takes a list [rows, cols], got %s", arg_kind_text(va));
    char w[64];
    snprintf(w, sizeof w, "%s: ", c->info->name);
    TRY(check_valid(c->b, w, va->list.items, va->list.n, shape, valid));
    for (int k = 0; k < 2; k++)
      va->list.items[k] = valid[k];
  }
  TRY(bool_in_vec(c, tt->dtype, k_load_space[si]));
  const pto_ir_type *rt;
  TRY(tile_type(c->b, tt->dtype, shape, k_load_space[si], va != NULL, valid, &rt));
  if (tt->rank >= 1) {
    int64_t span[2];
    int has = tile_span(rt, span);
    TRY(check_tile_window(c, &c->pos[1], tt, span, has));
  }
  c->rtype = rt;
  return PTO_OK;
}

static pto_status type_tile_store(opctx *c) {
  pto_ir_value *tile, *t;
  TRY(arg_tile(c, 0, &tile));
  TRY(arg_value(c, 2, M_TENSOR, &t));
  const pto_ir_type *tt = t->type, *ti = tile->type;
  int ok =
      tt->dtype == ti->dtype ||
      (ti->space == PTO_SPACE_ACC && (tt->dtype == PTO_DTYPE_F16 || tt->dtype == PTO_DTYPE_BF16)) ||
      (ti->dtype == PTO_DTYPE_BOOL && tt->dtype == PTO_DTYPE_U8);
  if (!ok)
    return OPFAIL(
        c,
        "the tile is %s but %%%s is %s (dtypes must be equal; an acc tile may also store to "
        "f16 or bf16, a bool tile to u8)",
        pto_dtype_name(ti->dtype), t->name, pto_dtype_name(tt->dtype));
  TRY(need_rank_list(c, &c->pos[1], tt, "the offsets"));
  if (tt->rank == 1 && tile_dim(ti, 0) != 1)
    return OPFAIL(c, "a tile stored to a rank-1 tensor has 1 row, not %lld",
                  (long long)tile_dim(ti, 0));
  if (tt->rank >= 1) {
    int64_t span[2];
    int has = tile_span(ti, span);
    TRY(check_tile_window(c, &c->pos[1], tt, span, has));
  }
  TRY(check_writable(c, t, c->info->name));
  c->rtype = tt;
  c->alias = t;
  return PTO_OK;
}

static pto_status create_space(opctx *c, pto_space *out) {
  int si;
  TRY(kw_word(c, "space", "vec mat acc", 0, 0, &si));
  static const pto_space sp[] = {PTO_SPACE_VEC, PTO_SPACE_MAT, PTO_SPACE_ACC};
  *out = sp[si];
  return PTO_OK;
}

static pto_status type_tile_create(opctx *c, int full) {
  int64_t shape[2];
  TRY(tile_shape(c, &c->pos[0], shape));
  pto_dtype dt;
  TRY(arg_dtype(c, 1, &dt));
  if (full) TRY(arg_scalar(c, 2, dt, "the fill value"));
  pto_space sp;
  TRY(create_space(c, &sp));
  TRY(bool_in_vec(c, dt, sp));
  return tile_type(c->b, dt, shape, sp, 0, NULL, &c->rtype);
}

static pto_status type_tile_move(opctx *c) {
  pto_ir_value *a;
  TRY(arg_tile(c, 0, &a));
  int si;
  TRY(kw_word(c, "space", "left right mat vec", 0, 1, &si));
  static const pto_space sp[] = {PTO_SPACE_LEFT, PTO_SPACE_RIGHT, PTO_SPACE_MAT, PTO_SPACE_VEC};
  const pto_ir_type *at = a->type;
  TRY(bool_in_vec(c, at->dtype, sp[si]));
  int64_t shape[2] = {tile_dim(at, 0), tile_dim(at, 1)};
  return tile_type(c->b, at->dtype, shape, sp[si], at->has_valid, at->valid, &c->rtype);
}

/* ---- second set: elementwise (typing) ---- */

static const char *const k_cmp_words = "eq ne lt le gt ge";

/* The dtypes an op's row allows (pto_op_info.dtypes): an error naming them otherwise. */
static pto_status elem_dtype(opctx *c, pto_dtype dt) {
  int want = c->info->dtypes;
  int have = dt == PTO_DTYPE_BOOL     ? PTO_OPD_BOOL
             : pto_dtype_is_float(dt) ? PTO_OPD_FLOAT
                                      : PTO_OPD_INT;
  if (!want || (want & have)) return PTO_OK;
  const char *what = want == PTO_OPD_INT                    ? "an integer tile"
                     : want == (PTO_OPD_INT | PTO_OPD_BOOL) ? "an integer or bool tile"
                     : want == PTO_OPD_FLOAT                ? "a float tile"
                                                            : "an integer or float tile";
  return OPFAIL(c, "needs %s, got %s (cast it with tile.cast)", what, pto_dtype_name(dt));
}

/* The result of a binary elementwise op once c->rtype holds its operand-shaped type: a
 * comparison (cmp=, required) gives a bool tile of that shape and valid region. */
static pto_status elem_result(opctx *c) {
  TRY(elem_dtype(c, c->rtype->dtype));
  if (c->info->fn != PTO_FN_CMP) return PTO_OK;
  int k;
  TRY(kw_word(c, "cmp", k_cmp_words, 0, 1, &k));
  const pto_ir_type *t = c->rtype;
  if (t->space != PTO_SPACE_VEC)
    return OPFAIL(c, "compares vec tiles (its bool result lives in vec), not %s",
                  pto_space_name(t->space));
  int64_t shape[2] = {tile_dim(t, 0), tile_dim(t, 1)};
  return tile_type(c->b, PTO_DTYPE_BOOL, shape, t->space, t->has_valid, t->valid, &c->rtype);
}

/* tile.sel(%mask, %a, %b) / tile.sels(%mask, %a, scalar): mask a bool tile of a's shape. */
static pto_status type_select_op(opctx *c) {
  pto_ir_value *m, *a, *x;
  TRY(arg_tile(c, 0, &m));
  TRY(arg_tile(c, 1, &a));
  if (m->type->dtype != PTO_DTYPE_BOOL)
    return op_fail_at(c, c->pos[0].loc, "the mask %%%s must be a bool tile, got %s", m->name,
                      pto_dtype_name(m->type->dtype));
  TRY(same_shape(c, m->type, a->type));
  if (c->opc == PTO_OP_TILE_SELS) {
    TRY(arg_scalar(c, 2, a->type->dtype, "the scalar"));
  } else {
    TRY(arg_tile(c, 2, &x));
    TRY(same_shape(c, a->type, x->type));
    TRY(same_dtype(c, a->type, x->type));
  }
  c->rtype = a->type;
  return PTO_OK;
}

static pto_status type_elementwise2(opctx *c) {
  pto_ir_value *a, *x;
  TRY(arg_tile(c, 0, &a));
  TRY(arg_tile(c, 1, &x));
  TRY(same_shape(c, a->type, x->type));
  TRY(same_dtype(c, a->type, x->type));
  c->rtype = a->type->has_valid || !x->type->has_valid ? a->type : x->type;
  if (c->rtype->space != a->type->space) {
    int64_t shape[2] = {tile_dim(a->type, 0), tile_dim(a->type, 1)};
    TRY(tile_type(c->b, a->type->dtype, shape, a->type->space, 1, x->type->valid, &c->rtype));
  }
  return elem_result(c);
}

static pto_status type_scalar_op(opctx *c) {
  pto_ir_value *a;
  TRY(arg_tile(c, 0, &a));
  TRY(arg_scalar(c, 1, a->type->dtype, "the scalar"));
  int64_t z;
  pto_op_fn fn = pto_op_info_get(c->opc)->fn;
  if ((fn == PTO_FN_DIV || fn == PTO_FN_REM) && pto_dtype_is_int(a->type->dtype) &&
      pto_ir_expr_static_int(c->pos[1].expr, &z) == 0 && z == 0)
    return op_fail_at(c, c->pos[1].loc, "division by a constant zero");
  c->rtype = a->type;
  return elem_result(c);
}

static pto_status type_unary(opctx *c) {
  pto_ir_value *a;
  TRY(arg_tile(c, 0, &a));
  if (pto_op_info_get(c->opc)->float_only && !pto_dtype_is_float(a->type->dtype))
    return OPFAIL(c, "needs a float tile, got %s (cast it with tile.cast)",
                  pto_dtype_name(a->type->dtype));
  TRY(elem_dtype(c, a->type->dtype));
  c->rtype = a->type;
  return PTO_OK;
}

static pto_status type_cast(opctx *c) {
  pto_ir_value *a;
  TRY(arg_tile(c, 0, &a));
  pto_dtype dt;
  TRY(arg_dtype(c, 1, &dt));
  const pto_ir_type *at = a->type;
  TRY(bool_in_vec(c, dt, at->space));
  int64_t shape[2] = {tile_dim(at, 0), tile_dim(at, 1)};
  return tile_type(c->b, dt, shape, at->space, at->has_valid, at->valid, &c->rtype);
}

static pto_status type_reduce(opctx *c, int rows) {
  pto_ir_value *a;
  TRY(arg_tile(c, 0, &a));
  const pto_ir_type *at = a->type;
  int64_t shape[2] = {rows ? tile_dim(at, 0) : 1, rows ? 1 : tile_dim(at, 1)};
  pto_op_fn fn = pto_op_info_get(c->opc)->fn;
  int arg = fn == PTO_FN_ARGMAX || fn == PTO_FN_ARGMIN;
  if (arg && at->dtype == PTO_DTYPE_BOOL) return OPFAIL(c, "bool tiles have no order");
  TRY(elem_dtype(c, at->dtype));
  pto_ir_expr *valid[2] = {0};
  if (at->has_valid) {
    pto_ir_expr *one = new_int(c->b, 1);
    if (!one) return oom(c->b);
    valid[0] = rows ? at->valid[0] : one;
    valid[1] = rows ? one : at->valid[1];
  }
  return tile_type(c->b, arg ? PTO_DTYPE_I32 : at->dtype, shape, at->space, at->has_valid, valid,
                   &c->rtype);
}

static pto_status type_expand(opctx *c, int rows) {
  pto_ir_value *a, *v;
  TRY(arg_tile(c, 0, &a));
  TRY(arg_tile(c, 1, &v));
  const pto_ir_type *at = a->type, *vt = v->type;
  int64_t want0 = rows ? tile_dim(at, 0) : 1, want1 = rows ? 1 : tile_dim(at, 1);
  if (tile_dim(vt, 0) != want0 || tile_dim(vt, 1) != want1) {
    txt s = stext(c->b, vt);
    return op_fail_at(c, c->pos[1].loc, "operand 2 must be [%lld,%lld] for a %s tile, got %s",
                      (long long)want0, (long long)want1, stext(c->b, at).s, s.s);
  }
  TRY(same_dtype(c, at, vt));
  TRY(elem_dtype(c, at->dtype));
  c->rtype = at;
  return PTO_OK;
}

static pto_dtype matmul_dtype(pto_dtype in) {
  return pto_dtype_is_int(in) ? PTO_DTYPE_I32 : PTO_DTYPE_F32;
}

static pto_status matmul_operands(opctx *c, int first, int64_t *m, int64_t *n, pto_dtype *dt) {
  pto_ir_value *l, *r;
  TRY(arg_tile(c, first, &l));
  TRY(arg_tile(c, first + 1, &r));
  const pto_ir_type *lt = l->type, *rt = r->type;
  if (lt->space != PTO_SPACE_LEFT)
    return op_fail_at(c, c->pos[first].loc,
                      "operand %%%s must be in left (made by tile.move(.., space=left)), not %s",
                      l->name, pto_space_name(lt->space));
  if (rt->space != PTO_SPACE_RIGHT)
    return op_fail_at(c, c->pos[first + 1].loc,
                      "operand %%%s must be in right (made by tile.move(.., space=right)), not %s",
                      r->name, pto_space_name(rt->space));
  TRY(same_dtype(c, lt, rt));
  if (lt->dtype == PTO_DTYPE_BOOL) return OPFAIL(c, "bool tiles cannot be multiplied");
  if (tile_dim(lt, 1) != tile_dim(rt, 0)) {
    txt x = stext(c->b, lt), y = stext(c->b, rt);
    return OPFAIL(c, "inner dims differ: left %s, right %s", x.s, y.s);
  }
  *m = tile_dim(lt, 0);
  *n = tile_dim(rt, 1);
  *dt = matmul_dtype(lt->dtype);
  return PTO_OK;
}

static pto_status type_matmul(opctx *c) {
  int64_t shape[2];
  pto_dtype dt;
  TRY(matmul_operands(c, 0, &shape[0], &shape[1], &dt));
  return tile_type(c->b, dt, shape, PTO_SPACE_ACC, 0, NULL, &c->rtype);
}

static pto_status type_matmul_acc(opctx *c) {
  pto_ir_value *acc;
  TRY(arg_tile(c, 0, &acc));
  int64_t m, n;
  pto_dtype dt;
  TRY(matmul_operands(c, 1, &m, &n, &dt));
  const pto_ir_type *at = acc->type;
  if (at->space != PTO_SPACE_ACC)
    return op_fail_at(c, c->pos[0].loc, "the accumulator %%%s must be in acc, not %s", acc->name,
                      pto_space_name(at->space));
  if (tile_dim(at, 0) != m || tile_dim(at, 1) != n) {
    txt s = stext(c->b, at);
    return OPFAIL(c, "the accumulator is %s, the product is [%lld,%lld]", s.s, (long long)m,
                  (long long)n);
  }
  if (at->dtype != dt)
    return OPFAIL(c, "the accumulator is %s, the product is %s", pto_dtype_name(at->dtype),
                  pto_dtype_name(dt));
  c->rtype = at;
  return PTO_OK;
}

/* tensor.create / dist.alloc_window: a buffer of a (possibly dynamic) shape. */
static pto_status type_create_buffer(opctx *c) {
  const pto_ir_arg *a = &c->pos[0];
  TRY(check_list(c, a, "the shape", -1));
  pto_dtype dt;
  TRY(arg_dtype(c, 1, &dt));
  pto_ir_type *t = pto_arena_alloc(c->b->arena, sizeof *t);
  if (!t) return oom(c->b);
  t->kind = PTO_TYPE_TENSOR;
  t->dtype = dt;
  t->rank = a->list.n;
  for (int k = 0; k < a->list.n; k++) {
    TRY(extent(c->b, a->list.items[k], "", &a->list.items[k]));
    pto_ir_expr *d = a->list.items[k];
    if (d->kind == PTO_EXPR_INT && d->i <= 0)
      return op_fail_at(c, d->loc, "extent %lld: extents are positive", (long long)d->i);
    t->dims[k] = d;
  }
  c->rtype = t;
  return PTO_OK;
}

static pto_status type_slice(opctx *c) {
  pto_ir_value *t;
  TRY(arg_value(c, 0, M_TENSOR, &t));
  const pto_ir_type *tt = t->type;
  const pto_ir_arg *offs = &c->pos[1], *shp = &c->pos[2];
  TRY(need_rank_list(c, offs, tt, "the offsets"));
  TRY(need_rank_list(c, shp, tt, "the shape"));
  if (offs->list.n != shp->list.n)
    return OPFAIL(c, "%d offsets for %d extents", offs->list.n, shp->list.n);
  pto_ir_type *rt = pto_arena_alloc(c->b->arena, sizeof *rt);
  if (!rt) return oom(c->b);
  rt->kind = tt->kind;
  rt->dtype = tt->dtype;
  rt->rank = tt->rank;
  for (int d = 0; d < shp->list.n; d++) {
    TRY(extent(c->b, shp->list.items[d], "", &shp->list.items[d]));
    pto_ir_expr *s = shp->list.items[d], *o = offs->list.items[d];
    int64_t sv, ov, ev;
    int s_static = pto_ir_expr_static_int(s, &sv) == 0,
        o_static = pto_ir_expr_static_int(o, &ov) == 0;
    if (s_static && sv <= 0)
      return op_fail_at(c, s->loc, "extent %lld: extents are positive", (long long)sv);
    if (o_static && ov < 0)
      return op_fail_at(c, o->loc, "offset %lld of dim %d is negative", (long long)ov, d);
    if (tt->rank < 0) continue;
    int e_static = pto_ir_expr_static_int(tt->dims[d], &ev) == 0;
    if (o_static && e_static && ov >= ev)
      return op_fail_at(c, o->loc, "offset %lld is at or past the extent %lld of dim %d",
                        (long long)ov, (long long)ev, d);
    /* The slice is clamped at the edge: extent = min(shape, dim - offset). It is static when all
     * three are static and the slice fits; a static slice that runs past the edge keeps the
     * expression, marked at_launch, so it stays dynamic, bound at launch (docs/language.md):
     * passing it where a static extent is declared is checked at launch, not here. */
    pto_ir_expr *r;
    if (s_static && o_static && e_static && sv <= ev - ov) {
      r = new_int(c->b, sv);
    } else {
      pto_ir_expr *rem = tt->dims[d];
      if (!(o_static && ov == 0)) rem = new_binary(c->b, PTO_EOP_SUB, tt->dims[d], o);
      if (rem) rem->dtype = PTO_DTYPE_INDEX;
      r = rem ? new_binary(c->b, PTO_EOP_MIN, s, rem) : NULL;
      if (r && s_static && o_static && e_static) r->at_launch = 1;
    }
    if (!r) return oom(c->b);
    r->dtype = PTO_DTYPE_INDEX;
    rt->dims[d] = r;
  }
  c->rtype = rt;
  return PTO_OK;
}

static pto_status type_dim(opctx *c) {
  pto_ir_value *t;
  TRY(arg_value(c, 0, M_TENSOR, &t));
  TRY(arg_scalar(c, 1, PTO_DTYPE_INDEX, "the axis"));
  int64_t ax;
  int rank = t->type->rank >= 0 ? t->type->rank : PTO_MAX_RANK;
  if (pto_ir_expr_static_int(c->pos[1].expr, &ax))
    return op_fail_at(c, c->pos[1].loc, "the axis must be a constant");
  if (ax < 0 || ax >= rank)
    return op_fail_at(c, c->pos[1].loc, "axis %lld is outside the rank %d of %%%s", (long long)ax,
                      rank, t->name);
  return pto_ir_builder_scalar_type(c->b, PTO_DTYPE_INDEX, &c->rtype);
}

static pto_status type_read(opctx *c) {
  pto_ir_value *t;
  TRY(arg_value(c, 0, 1u << PTO_TYPE_TENSOR, &t));
  TRY(need_rank_list(c, &c->pos[1], t->type, "the indices"));
  for (int d = 0; d < t->type->rank; d++) {
    int64_t o, e;
    pto_ir_expr *oe = c->pos[1].list.items[d];
    if (pto_ir_expr_static_int(oe, &o)) continue;
    if (o < 0) return op_fail_at(c, oe->loc, "index %lld of dim %d is negative", (long long)o, d);
    if (pto_ir_expr_static_int(t->type->dims[d], &e) == 0 && o >= e)
      return op_fail_at(c, oe->loc, "index %lld is at or past the extent %lld of dim %d",
                        (long long)o, (long long)e, d);
  }
  return pto_ir_builder_scalar_type(c->b, t->type->dtype, &c->rtype);
}

static pto_status type_window(opctx *c) {
  pto_ir_value *w;
  TRY(arg_value(c, 0, 1u << PTO_TYPE_TENSOR, &w));
  if (!w->def || w->def->kind != PTO_STMT_OP || w->def->op.opc != PTO_OP_DIST_ALLOC_WINDOW)
    return op_fail_at(c, c->pos[0].loc, "%%%s is not a window made by dist.alloc_window", w->name);
  pto_ir_type *t = pto_arena_alloc(c->b->arena, sizeof *t);
  if (!t) return oom(c->b);
  *t = *w->type;
  t->kind = PTO_TYPE_DTENSOR;
  c->rtype = t;
  return PTO_OK;
}

static int is_comm_ctx(const pto_ir_value *v) {
  return v->type->kind == PTO_TYPE_SCALAR && v->def && v->def->kind == PTO_STMT_OP &&
         v->def->op.opc == PTO_OP_DIST_COMM_CTX;
}

static pto_status type_rank(opctx *c) {
  pto_ir_value *v;
  const pto_ir_arg *a = &c->pos[0];
  if (a->kind != PTO_ARG_EXPR || a->expr->kind != PTO_EXPR_VALUE ||
      !(a->expr->value->type->kind == PTO_TYPE_DTENSOR || is_comm_ctx(a->expr->value)))
    return op_fail_at(c, a->loc,
                      "argument 1 must be a dtensor or a communicator made by dist.comm_ctx");
  v = a->expr->value;
  (void)v;
  return pto_ir_builder_scalar_type(c->b, PTO_DTYPE_INDEX, &c->rtype);
}

static pto_status type_notify_wait(opctx *c, int notify) {
  pto_ir_value *sig;
  TRY(arg_value(c, 0, M_DTENSOR, &sig));
  if (sig->type->dtype != PTO_DTYPE_I32) {
    txt x = ttext(c->b, sig->type);
    return op_fail_at(c, c->pos[0].loc, "the signal window %%%s must be i32, got %s", sig->name,
                      x.s);
  }
  int i = 1;
  if (notify) TRY(arg_scalar(c, i++, PTO_DTYPE_INDEX, "the peer"));
  TRY(need_rank_list(c, &c->pos[i++], sig->type, "the offsets"));
  TRY(arg_scalar(c, i, sig->type->dtype, "the value"));
  int k;
  if (notify) {
    TRY(kw_word(c, "op", "set atomic_add", 0, 1, &k));
    TRY(check_writable(c, sig, c->info->name));
    c->rtype = sig->type;
    c->alias = sig;
  } else {
    TRY(kw_word(c, "cmp", "eq ge", 0, 1, &k));
  }
  return PTO_OK;
}

static pto_status type_remote_load(opctx *c) {
  pto_ir_value *d;
  TRY(arg_value(c, 0, M_DTENSOR, &d));
  TRY(arg_scalar(c, 1, PTO_DTYPE_INDEX, "the peer"));
  TRY(need_rank_list(c, &c->pos[2], d->type, "the offsets"));
  int64_t shape[2];
  TRY(tile_shape(c, &c->pos[3], shape));
  const pto_ir_type *rt;
  TRY(tile_type(c->b, d->type->dtype, shape, PTO_SPACE_VEC, 0, NULL, &rt));
  int64_t span[2] = {shape[0], shape[1]};
  TRY(check_tile_window(c, &c->pos[2], d->type, span, 1));
  c->rtype = rt;
  return PTO_OK;
}

static pto_status type_remote_store(opctx *c) {
  pto_ir_value *tile, *d;
  TRY(arg_tile(c, 0, &tile));
  TRY(arg_value(c, 1, M_DTENSOR, &d));
  TRY(arg_scalar(c, 2, PTO_DTYPE_INDEX, "the peer"));
  TRY(need_rank_list(c, &c->pos[3], d->type, "the offsets"));
  if (tile->type->dtype != d->type->dtype)
    return OPFAIL(c, "the tile is %s but %%%s is %s", pto_dtype_name(tile->type->dtype), d->name,
                  pto_dtype_name(d->type->dtype));
  int64_t span[2];
  int has = tile_span(tile->type, span);
  TRY(check_tile_window(c, &c->pos[3], d->type, span, has));
  TRY(check_writable(c, d, c->info->name));
  c->rtype = d->type;
  c->alias = d;
  return PTO_OK;
}

/* ---- tensor.reshape / tensor.select ---- */

/* Whether a tensor value is contiguous row-major, as far as its type and definition tell
 * statically: 1 yes, 0 certainly not, -1 unknown (checked at launch). Buffers made by
 * tensor.create / dist.alloc_window and their windows are contiguous; a slice is not when some
 * dim before a narrowed dim keeps more than one element. */
static int contiguity(const pto_ir_value *v) {
  for (int guard = 0; v && guard < 1000; guard++) {
    if (v->alias_of) {
      v = v->alias_of;
      continue;
    }
    const pto_ir_stmt *d = v->def;
    if (!d || d->kind != PTO_STMT_OP) return -1; /* a parameter, a call result, a loop value */
    switch (d->op.opc) {
    case PTO_OP_TENSOR_CREATE:
    case PTO_OP_DIST_ALLOC_WINDOW:
    case PTO_OP_TENSOR_RESHAPE: return 1;
    case PTO_OP_DIST_WINDOW: v = d->op.args[0].expr->value; continue;
    case PTO_OP_TENSOR_SELECT: return contiguity(d->op.args[0].expr->value) == 1 ? 1 : -1;
    case PTO_OP_TENSOR_SLICE: {
      const pto_ir_type *st = d->op.args[0].expr->value->type, *rt = v->type;
      if (st->rank < 0 || rt->rank < 0) return -1;
      int wide = 0; /* a dim so far with more than one element, or an unknown extent */
      for (int k = 0; k < rt->rank; k++) {
        int64_t r, e;
        int rs = pto_ir_expr_static_int(rt->dims[k], &r) == 0,
            es = pto_ir_expr_static_int(st->dims[k], &e) == 0;
        if (wide == 1 && rs && es && r < e) return 0;
        if (rs && r > 1) wide = 1;
      }
      return -1; /* maybe contiguous: the launch checks the strides */
    }
    default: return -1;
    }
  }
  return -1;
}

static pto_status type_reshape(opctx *c) {
  pto_ir_value *t;
  TRY(arg_value(c, 0, M_TENSOR, &t));
  const pto_ir_type *tt = t->type;
  const pto_ir_arg *a = &c->pos[1];
  TRY(check_list(c, a, "the shape", -1));
  pto_ir_type *rt = pto_arena_alloc(c->b->arena, sizeof *rt);
  if (!rt) return oom(c->b);
  rt->kind = tt->kind;
  rt->dtype = tt->dtype;
  rt->rank = a->list.n;
  rt->space = PTO_SPACE_DDR;
  int all_static = 1;
  int64_t count = 1;
  for (int k = 0; k < a->list.n; k++) {
    TRY(extent(c->b, a->list.items[k], "", &a->list.items[k]));
    pto_ir_expr *d = a->list.items[k];
    int64_t v;
    if (pto_ir_expr_static_int(d, &v) == 0) {
      if (v <= 0) return op_fail_at(c, d->loc, "extent %lld: extents are positive", (long long)v);
      /* Checked: huge static extents must not wrap into a count that happens to match. */
      if (__builtin_mul_overflow(count, v, &count))
        return op_fail_at(c, a->loc,
                          "the shape has more than %lld elements (extent %lld of dim %d "
                          "overflows the count)",
                          (long long)INT64_MAX, (long long)v, k);
    } else {
      all_static = 0;
    }
    rt->dims[k] = d;
  }
  if (all_static && tt->rank >= 0) {
    int64_t src = 1;
    int src_static = 1;
    for (int k = 0; k < tt->rank && src_static; k++) {
      int64_t v;
      if (pto_ir_expr_static_int(tt->dims[k], &v) || v < 0)
        src_static = 0;
      else if (__builtin_mul_overflow(src, v, &src)) {
        txt x = stext(c->b, tt);
        return op_fail_at(c, c->pos[0].loc, "%%%s %s has more than %lld elements", t->name, x.s,
                          (long long)INT64_MAX);
      }
    }
    if (src_static && src != count) {
      txt x = stext(c->b, tt);
      return op_fail_at(c, a->loc, "%%%s %s has %lld elements, the shape %lld", t->name, x.s,
                        (long long)src, (long long)count);
    }
  }
  if (contiguity(t) == 0)
    return op_fail_at(c, c->pos[0].loc,
                      "%%%s is not contiguous (a slice narrower than its source in an inner dim); "
                      "reshape its source, or copy it into a tensor.create first",
                      t->name);
  c->rtype = rt;
  return PTO_OK;
}

static pto_status type_select(opctx *c) {
  pto_ir_value *t;
  TRY(arg_value(c, 0, M_TENSOR, &t));
  const pto_ir_type *tt = t->type;
  if (tt->rank >= 0 && tt->rank < 2) {
    txt x = stext(c->b, tt);
    return op_fail_at(c, c->pos[0].loc,
                      "%%%s %s has rank %d: select drops the leading dim of a tensor of rank 2 "
                      "or more (use tensor.slice)",
                      t->name, x.s, tt->rank);
  }
  TRY(arg_scalar(c, 1, PTO_DTYPE_INDEX, "the index"));
  int64_t i, e;
  if (pto_ir_expr_static_int(c->pos[1].expr, &i) == 0) {
    if (i < 0) return op_fail_at(c, c->pos[1].loc, "index %lld is negative", (long long)i);
    if (tt->rank >= 0 && pto_ir_expr_static_int(tt->dims[0], &e) == 0 && i >= e)
      return op_fail_at(c, c->pos[1].loc, "index %lld is at or past the extent %lld of dim 0",
                        (long long)i, (long long)e);
  }
  pto_ir_type *rt = pto_arena_alloc(c->b->arena, sizeof *rt);
  if (!rt) return oom(c->b);
  rt->kind = tt->kind;
  rt->dtype = tt->dtype;
  rt->space = PTO_SPACE_DDR;
  rt->rank = tt->rank < 0 ? -1 : tt->rank - 1;
  for (int k = 1; k < tt->rank; k++)
    rt->dims[k - 1] = tt->dims[k];
  c->rtype = rt;
  return PTO_OK;
}

/* ---- collectives ---- */

/* The signal window of a barrier or collective: an i32 dtensor [1, S], or PyPTO's [S, 1] (a
 * window is a whole, contiguous allocation, so both are S elements in a row). */
static pto_status arg_signal(opctx *c, int i, pto_ir_value **out) {
  TRY(arg_value(c, i, M_DTENSOR, out));
  const pto_ir_type *t = (*out)->type;
  int64_t r0, r1;
  if (t->dtype != PTO_DTYPE_I32 || t->rank != 2 ||
      (pto_ir_expr_static_int(t->dims[0], &r0) == 0 && r0 != 1 &&
       pto_ir_expr_static_int(t->dims[1], &r1) == 0 && r1 != 1)) {
    txt x = ttext(c->b, t);
    return op_fail_at(c, c->pos[i].loc,
                      "the signal window %%%s must be an i32 dtensor [1, S] or [S, 1] (S >= the "
                      "rank count), got %s",
                      (*out)->name, x.s);
  }
  return check_writable(c, *out, c->info->name);
}

static pto_status type_barrier(opctx *c) {
  pto_ir_value *sig;
  return arg_signal(c, 0, &sig);
}

static pto_status type_collective(opctx *c) {
  pto_ir_value *win, *sig;
  TRY(arg_value(c, 0, M_DTENSOR, &win));
  TRY(arg_signal(c, 1, &sig));
  if (win == sig || root_of(c->b, win) == root_of(c->b, sig))
    return op_fail_at(c, c->pos[1].loc, "the signal window must not be the data window");
  const pto_ir_type *wt = win->type;
  int k;
  switch (c->opc) {
  case PTO_OP_DIST_ALLREDUCE:
    TRY(kw_word(c, "op", "sum max min prod", 0, 0, &k));
    TRY(kw_word(c, "mode", "mesh ring", 0, 0, &k));
    break;
  case PTO_OP_DIST_REDUCE_SCATTER: TRY(kw_word(c, "op", "sum max min prod", 0, 0, &k)); break;
  case PTO_OP_DIST_BROADCAST: TRY(arg_scalar(c, 2, PTO_DTYPE_INDEX, "the root")); break;
  default: break;
  }
  if ((c->opc == PTO_OP_DIST_ALLREDUCE || c->opc == PTO_OP_DIST_REDUCE_SCATTER) &&
      wt->dtype == PTO_DTYPE_BOOL)
    return op_fail_at(c, c->pos[0].loc, "%%%s is a bool window: reductions need numbers",
                      win->name);
  if ((c->opc == PTO_OP_DIST_ALLGATHER || c->opc == PTO_OP_DIST_REDUCE_SCATTER) && wt->rank != 2) {
    txt x = stext(c->b, wt);
    return op_fail_at(c, c->pos[0].loc,
                      "the window %%%s %s has rank %d: it must be [N, C], N divisible by the rank "
                      "count",
                      win->name, x.s, wt->rank);
  }
  TRY(check_writable(c, win, c->info->name));
  c->rtype = wt;
  c->alias = win;
  return PTO_OK;
}

/* ---- second set: structural ---- */

/* A scalar argument of any integer dtype (a literal is index): tile.tri's diagonal. */
static pto_status arg_int_scalar(opctx *c, int i, const char *what) {
  const pto_ir_arg *a = &c->pos[i];
  if (a->kind != PTO_ARG_EXPR ||
      (a->expr->kind == PTO_EXPR_VALUE && a->expr->value->type->kind != PTO_TYPE_SCALAR))
    return op_fail_at(c, a->loc, "argument %d (%s) must be an integer scalar", i + 1, what);
  if (pto__ir_expr_is_flexible(a->expr) || !pto_dtype_is_int(a->expr->dtype))
    return arg_scalar(c, i, PTO_DTYPE_INDEX, what);
  char w[160];
  snprintf(w, sizeof w, "%s: %s: ", c->info->name, what);
  return finish_scalar(c->b, a->expr, w);
}

/* Static indices are checked here (docs/language.md: static ones are verifier errors): an index
 * tile made by tile.full of a constant must lie in [0, bound) when bound >= 0. */
static pto_status static_indices(opctx *c, int i, const pto_ir_value *idx, int64_t bound,
                                 const char *what) {
  const pto_ir_stmt *d = idx->def;
  int64_t v;
  if (bound < 0 || !d || d->kind != PTO_STMT_OP || d->op.opc != PTO_OP_TILE_FULL ||
      d->op.nargs < 3 || d->op.args[2].kind != PTO_ARG_EXPR ||
      pto_ir_expr_static_int(d->op.args[2].expr, &v))
    return PTO_OK;
  if (v < 0 || v >= bound)
    return op_fail_at(c, c->pos[i].loc,
                      "index %lld (every element of %%%s) is outside [0, %lld) (%s)", (long long)v,
                      idx->name, (long long)bound, what);
  return PTO_OK;
}

/* An i32 index tile; cols1: it must be one column [R,1] (gather_rows, scatter_rows). */
static pto_status arg_index_tile(opctx *c, int i, int cols1, pto_ir_value **out) {
  TRY(arg_tile(c, i, out));
  const pto_ir_type *t = (*out)->type;
  if (t->dtype != PTO_DTYPE_I32 || (cols1 && tile_dim(t, 1) != 1)) {
    txt x = ttext(c->b, t);
    return op_fail_at(c, c->pos[i].loc, "the indices %%%s must be an i32 tile%s, got %s",
                      (*out)->name, cols1 ? " [R,1]" : "", x.s);
  }
  return PTO_OK;
}

/* tile.row_expand(%v[R,1], [R, C]) / tile.col_expand(%v[1,C], [R, C]). */
static pto_status type_broadcast(opctx *c, int rows) {
  pto_ir_value *v;
  TRY(arg_tile(c, 0, &v));
  int64_t shape[2];
  TRY(tile_shape(c, &c->pos[1], shape));
  const pto_ir_type *vt = v->type;
  int64_t want0 = rows ? shape[0] : 1, want1 = rows ? 1 : shape[1];
  if (tile_dim(vt, 0) != want0 || tile_dim(vt, 1) != want1) {
    txt s = stext(c->b, vt);
    return op_fail_at(c, c->pos[0].loc, "%%%s must be [%lld,%lld] for a [%lld,%lld] result, got %s",
                      v->name, (long long)want0, (long long)want1, (long long)shape[0],
                      (long long)shape[1], s.s);
  }
  return tile_type(c->b, vt->dtype, shape, vt->space, 0, NULL, &c->rtype);
}

static pto_status type_transpose(opctx *c) {
  pto_ir_value *a;
  TRY(arg_tile(c, 0, &a));
  const pto_ir_type *at = a->type;
  int64_t shape[2] = {tile_dim(at, 1), tile_dim(at, 0)};
  pto_ir_expr *valid[2] = {at->valid[1], at->valid[0]};
  return tile_type(c->b, at->dtype, shape, at->space, at->has_valid, valid, &c->rtype);
}

/* The offsets [r, c] of a sub-tile [h, w] inside a [R, C] tile: index expressions; static ones
 * must leave the sub-tile inside (dynamic ones are checked at launch). */
static pto_status sub_offsets(opctx *c, const pto_ir_arg *a, const pto_ir_type *big,
                              const int64_t sub[2], const char *what) {
  TRY(check_list(c, a, "the offsets", 2));
  for (int k = 0; k < 2; k++) {
    int64_t o, e = tile_dim(big, k);
    pto_ir_expr *oe = a->list.items[k];
    if (pto_ir_expr_static_int(oe, &o)) continue;
    /* o > e - sub[k], not o + sub[k] > e: an offset near 2^63 must not wrap into range. */
    if (o < 0 || o > e - sub[k]) {
      char end[24]; /* o + sub[k], exact: past 2^63 as unsigned */
      if (o < 0)
        snprintf(end, sizeof end, "%lld", (long long)(o + sub[k]));
      else
        snprintf(end, sizeof end, "%llu", (unsigned long long)o + (unsigned long long)sub[k]);
      return op_fail_at(c, oe->loc, "%s %lld..%s fall outside the %s's %lld %s",
                        k ? "columns" : "rows", (long long)o, end, what, (long long)e,
                        k ? "columns" : "rows");
    }
  }
  return PTO_OK;
}

static pto_status type_extract(opctx *c) {
  pto_ir_value *a;
  TRY(arg_tile(c, 0, &a));
  int64_t shape[2];
  TRY(tile_shape(c, &c->pos[2], shape));
  const pto_ir_type *at = a->type;
  TRY(sub_offsets(c, &c->pos[1], at, shape, "source tile"));
  return tile_type(c->b, at->dtype, shape, at->space, 0, NULL, &c->rtype);
}

static pto_status type_assemble(opctx *c) {
  pto_ir_value *d, *s;
  TRY(arg_tile(c, 0, &d));
  TRY(arg_tile(c, 1, &s));
  TRY(same_dtype(c, d->type, s->type));
  int64_t sub[2] = {tile_dim(s->type, 0), tile_dim(s->type, 1)};
  TRY(sub_offsets(c, &c->pos[2], d->type, sub, "destination tile"));
  c->rtype = d->type;
  return PTO_OK;
}

static pto_status type_concat(opctx *c) {
  pto_ir_value *a, *x;
  TRY(arg_tile(c, 0, &a));
  TRY(arg_tile(c, 1, &x));
  TRY(same_dtype(c, a->type, x->type));
  if (tile_dim(a->type, 0) != tile_dim(x->type, 0)) {
    txt p = stext(c->b, a->type), q = stext(c->b, x->type);
    return OPFAIL(c, "row counts differ: %s and %s", p.s, q.s);
  }
  int64_t shape[2] = {tile_dim(a->type, 0), tile_dim(a->type, 1) + tile_dim(x->type, 1)};
  return tile_type(c->b, a->type->dtype, shape, a->type->space, 0, NULL, &c->rtype);
}

static pto_status type_tile_reshape(opctx *c) {
  pto_ir_value *a;
  TRY(arg_tile(c, 0, &a));
  int64_t shape[2];
  TRY(tile_shape(c, &c->pos[1], shape));
  const pto_ir_type *at = a->type;
  int64_t n = tile_dim(at, 0) * tile_dim(at, 1), m;
  /* A product past int64 (a shape of [2^62 + 128, 4] wraps to 512) matches nothing. */
  int over = __builtin_mul_overflow(shape[0], shape[1], &m);
  if (over || m != n) {
    txt s = stext(c->b, at);
    char count[40];
    snprintf(count, sizeof count, over ? "more than %lld" : "%lld",
             over ? (long long)INT64_MAX : (long long)m);
    return op_fail_at(c, c->pos[1].loc, "%%%s %s has %lld elements, the shape [%lld,%lld] %s",
                      a->name, s.s, (long long)n, (long long)shape[0], (long long)shape[1], count);
  }
  return tile_type(c->b, at->dtype, shape, at->space, 0, NULL, &c->rtype);
}

static pto_status type_fillpad(opctx *c) {
  pto_ir_value *a;
  TRY(arg_tile(c, 0, &a));
  int pad;
  TRY(kw_word(c, "pad", "zero min max", 0, 0, &pad));
  const pto_ir_type *at = a->type;
  int64_t shape[2] = {tile_dim(at, 0), tile_dim(at, 1)};
  return tile_type(c->b, at->dtype, shape, at->space, 0, NULL, &c->rtype);
}

static const char *const k_ci_dtypes = "i32 i16 i64";
static const char *const k_tri_dtypes = "i32 i8 i16 i64 u8 u16 u32 u64 f16 bf16 f32 f64";

/* dtype= of tile.ci / tile.tri: a word naming one of `allowed`. */
static pto_status kw_dtype(opctx *c, const char *allowed, pto_dtype *out) {
  int k;
  TRY(kw_word(c, "dtype", allowed, 0, 0, &k));
  const char *p = allowed;
  for (; k > 0; k--)
    p = strchr(p, ' ') + 1;
  const char *e = strchr(p, ' ');
  *out = (pto_dtype)pto_dtype_from_name(p, e ? (size_t)(e - p) : strlen(p));
  return PTO_OK;
}

static pto_status type_ci_tri(opctx *c, int tri) {
  pto_dtype dt;
  TRY(kw_dtype(c, tri ? k_tri_dtypes : k_ci_dtypes, &dt));
  int flag;
  TRY(kw_word(c, tri ? "upper" : "descending", "false true", 0, 0, &flag));
  int64_t shape[2];
  TRY(tile_shape(c, &c->pos[1], shape));
  if (tri) {
    TRY(arg_int_scalar(c, 0, "the diagonal"));
  } else {
    TRY(arg_scalar(c, 0, dt, "the start"));
    if (shape[0] != 1)
      return op_fail_at(c, c->pos[1].loc, "the shape must be [1, N], got [%lld,%lld]",
                        (long long)shape[0], (long long)shape[1]);
  }
  return tile_type(c->b, dt, shape, PTO_SPACE_VEC, 0, NULL, &c->rtype);
}

static pto_status type_gather(opctx *c) {
  pto_ir_value *src, *idx;
  TRY(arg_tile(c, 0, &src));
  TRY(arg_index_tile(c, 1, 0, &idx));
  TRY(static_indices(c, 1, idx, tile_dim(src->type, 0) * tile_dim(src->type, 1),
                     "positions of the source tile"));
  int64_t shape[2] = {tile_dim(idx->type, 0), tile_dim(idx->type, 1)};
  return tile_type(c->b, src->type->dtype, shape, src->type->space, 0, NULL, &c->rtype);
}

/* The tensor of gather_rows / scatter_rows: rank 2; the columns [c0, c0 + C) inside it when
 * static. */
static pto_status rows_tensor(opctx *c, int ti, int ci, int64_t C, pto_ir_value **out) {
  TRY(arg_value(c, ti, M_TENSOR, out));
  const pto_ir_type *tt = (*out)->type;
  if (tt->rank != 2) {
    txt x = stext(c->b, tt);
    return op_fail_at(c, c->pos[ti].loc, "%%%s %s must be a rank-2 tensor", (*out)->name, x.s);
  }
  TRY(check_list(c, &c->pos[ci], "the column offset", 1));
  int64_t c0, e;
  pto_ir_expr *ce = c->pos[ci].list.items[0];
  if (pto_ir_expr_static_int(ce, &c0) == 0) {
    if (c0 < 0) return op_fail_at(c, ce->loc, "column offset %lld is negative", (long long)c0);
    if (pto_ir_expr_static_int(tt->dims[1], &e) == 0 && c0 > e - C) /* c0 + C could wrap */
      return op_fail_at(c, ce->loc, "columns %lld..%llu fall past the extent %lld of dim 1",
                        (long long)c0, (unsigned long long)c0 + (unsigned long long)C,
                        (long long)e);
  }
  return PTO_OK;
}

/* Dim 0 of a rank-2 tensor when static, else -1. */
static int64_t static_rows(const pto_ir_value *t) {
  int64_t e;
  return pto_ir_expr_static_int(t->type->dims[0], &e) == 0 ? e : -1;
}

static pto_status type_gather_rows(opctx *c) {
  pto_ir_value *t, *idx;
  int64_t shape[2];
  TRY(tile_shape(c, &c->pos[3], shape));
  TRY(rows_tensor(c, 0, 2, shape[1], &t));
  TRY(arg_index_tile(c, 1, 1, &idx));
  TRY(static_indices(c, 1, idx, static_rows(t), "rows of the tensor"));
  if (tile_dim(idx->type, 0) != shape[0])
    return op_fail_at(c, c->pos[1].loc, "%%%s has %lld rows, the result %lld", idx->name,
                      (long long)tile_dim(idx->type, 0), (long long)shape[0]);
  return tile_type(c->b, t->type->dtype, shape, PTO_SPACE_VEC, 0, NULL, &c->rtype);
}

static pto_status type_scatter_rows(opctx *c) {
  pto_ir_value *tile, *idx, *t;
  TRY(arg_tile(c, 0, &tile));
  const pto_ir_type *ti = tile->type;
  TRY(rows_tensor(c, 3, 2, tile_dim(ti, 1), &t));
  TRY(arg_index_tile(c, 1, 1, &idx));
  TRY(static_indices(c, 1, idx, static_rows(t), "rows of the tensor"));
  if (tile_dim(idx->type, 0) != tile_dim(ti, 0))
    return op_fail_at(c, c->pos[1].loc, "%%%s has %lld rows, the tile %lld", idx->name,
                      (long long)tile_dim(idx->type, 0), (long long)tile_dim(ti, 0));
  if (ti->dtype != t->type->dtype)
    return OPFAIL(c, "the tile is %s but %%%s is %s", pto_dtype_name(ti->dtype), t->name,
                  pto_dtype_name(t->type->dtype));
  TRY(check_writable(c, t, c->info->name));
  c->rtype = t->type;
  c->alias = t;
  return PTO_OK;
}

static pto_status type_sort_idx(opctx *c) {
  pto_ir_value *a;
  TRY(arg_tile(c, 0, &a));
  int order;
  TRY(kw_word(c, "order", "desc asc", 0, 0, &order));
  const pto_ir_type *at = a->type;
  if (at->dtype == PTO_DTYPE_BOOL) return OPFAIL(c, "bool tiles have no order");
  int64_t shape[2] = {tile_dim(at, 0), tile_dim(at, 1)};
  return tile_type(c->b, PTO_DTYPE_I32, shape, at->space, 0, NULL, &c->rtype);
}

/* tile.matmul_bias(%l, %r, %bias[1,N]): the bias has the product's dtype (f32 / i32) or the
 * operands' (converted exactly). */
static pto_status type_matmul_bias(opctx *c) {
  int64_t shape[2];
  pto_dtype dt;
  TRY(matmul_operands(c, 0, &shape[0], &shape[1], &dt));
  pto_ir_value *bias;
  TRY(arg_tile(c, 2, &bias));
  const pto_ir_type *bt = bias->type;
  pto_dtype in = c->pos[0].expr->value->type->dtype;
  if (tile_dim(bt, 0) != 1 || tile_dim(bt, 1) != shape[1] || (bt->dtype != dt && bt->dtype != in)) {
    txt x = ttext(c->b, bt);
    char alt[32] = "";
    if (in != dt) snprintf(alt, sizeof alt, " (or %s)", pto_dtype_name(in));
    return op_fail_at(c, c->pos[2].loc, "the bias %%%s must be [1,%lld] %s%s, got %s", bias->name,
                      (long long)shape[1], pto_dtype_name(dt), alt, x.s);
  }
  return tile_type(c->b, dt, shape, PTO_SPACE_ACC, 0, NULL, &c->rtype);
}

static pto_status type_layout(opctx *c) {
  switch (c->opc) {
  case PTO_OP_TILE_ROW_EXPAND: return type_broadcast(c, 1);
  case PTO_OP_TILE_COL_EXPAND: return type_broadcast(c, 0);
  case PTO_OP_TILE_TRANSPOSE: return type_transpose(c);
  case PTO_OP_TILE_EXTRACT: return type_extract(c);
  case PTO_OP_TILE_ASSEMBLE: return type_assemble(c);
  case PTO_OP_TILE_CONCAT: return type_concat(c);
  case PTO_OP_TILE_RESHAPE: return type_tile_reshape(c);
  case PTO_OP_TILE_FILLPAD: return type_fillpad(c);
  case PTO_OP_TILE_CI: return type_ci_tri(c, 0);
  case PTO_OP_TILE_TRI: return type_ci_tri(c, 1);
  case PTO_OP_TILE_GATHER: return type_gather(c);
  case PTO_OP_TILE_GATHER_ROWS: return type_gather_rows(c);
  case PTO_OP_TILE_SCATTER_ROWS: return type_scatter_rows(c);
  case PTO_OP_TILE_SORT_IDX: return type_sort_idx(c);
  default: return fail(c->b, "unknown op");
  }
}

static pto_status type_op(opctx *c) {
  const pto_op_info *info = pto_op_info_get(c->opc);
  switch (info ? info->cls : PTO_OPC_OTHER) {
  case PTO_OPC_BINARY: return type_elementwise2(c);
  case PTO_OPC_BINARY_SCALAR: return type_scalar_op(c);
  case PTO_OPC_UNARY: return type_unary(c);
  case PTO_OPC_CAST: return type_cast(c);
  case PTO_OPC_REDUCE_ROW: return type_reduce(c, 1);
  case PTO_OPC_REDUCE_COL: return type_reduce(c, 0);
  case PTO_OPC_EXPAND_ROW: return type_expand(c, 1);
  case PTO_OPC_EXPAND_COL: return type_expand(c, 0);
  case PTO_OPC_MATMUL:
    if (c->opc == PTO_OP_TILE_MATMUL_BIAS) return type_matmul_bias(c);
    return c->opc == PTO_OP_TILE_MATMUL_ACC ? type_matmul_acc(c) : type_matmul(c);
  case PTO_OPC_LAYOUT: return type_layout(c);
  case PTO_OPC_SELECT: return type_select_op(c);
  case PTO_OPC_OTHER: break;
  }
  switch (c->opc) {
  case PTO_OP_TILE_LOAD: return type_tile_load(c);
  case PTO_OP_TILE_STORE: return type_tile_store(c);
  case PTO_OP_TILE_CREATE: return type_tile_create(c, 0);
  case PTO_OP_TILE_FULL: return type_tile_create(c, 1);
  case PTO_OP_TILE_MOVE: return type_tile_move(c);
  case PTO_OP_TENSOR_CREATE:
  case PTO_OP_DIST_ALLOC_WINDOW: return type_create_buffer(c);
  case PTO_OP_TENSOR_SLICE: return type_slice(c);
  case PTO_OP_TENSOR_DIM: return type_dim(c);
  case PTO_OP_TENSOR_READ: return type_read(c);
  case PTO_OP_DIST_WORLD_SIZE: return pto_ir_builder_scalar_type(c->b, PTO_DTYPE_INDEX, &c->rtype);
  case PTO_OP_DIST_WINDOW: return type_window(c);
  case PTO_OP_DIST_COMM_CTX: {
    pto_ir_value *d;
    TRY(arg_value(c, 0, M_DTENSOR, &d));
    /* The communicator is an opaque handle; u64 keeps it out of index arithmetic. */
    return pto_ir_builder_scalar_type(c->b, PTO_DTYPE_U64, &c->rtype);
  }
  case PTO_OP_DIST_RANK:
  case PTO_OP_DIST_NRANKS: return type_rank(c);
  case PTO_OP_DIST_NOTIFY: return type_notify_wait(c, 1);
  case PTO_OP_DIST_WAIT: return type_notify_wait(c, 0);
  case PTO_OP_DIST_REMOTE_LOAD: return type_remote_load(c);
  case PTO_OP_DIST_REMOTE_STORE: return type_remote_store(c);
  case PTO_OP_TENSOR_RESHAPE: return type_reshape(c);
  case PTO_OP_TENSOR_SELECT: return type_select(c);
  case PTO_OP_DIST_BARRIER: return type_barrier(c);
  case PTO_OP_DIST_ALLREDUCE:
  case PTO_OP_DIST_BROADCAST:
  case PTO_OP_DIST_ALLGATHER:
  case PTO_OP_DIST_REDUCE_SCATTER: return type_collective(c);
  default: return fail(c->b, "unknown op");
  }
}

/* Where the cursor is, for "allowed in" checks and messages. */
static int context_bit(const pto_ir_builder *b) {
  if (b->func->kind == PTO_FUNC_KERNEL || in_incore(b)) return PTO_IN_KERNEL;
  return b->func->kind == PTO_FUNC_ORCH ? PTO_IN_ORCH : PTO_IN_HOST;
}

static const char *context_text(const pto_ir_builder *b) {
  if (b->func->kind == PTO_FUNC_KERNEL) return "a kernel";
  if (in_incore(b)) return "an incore scope";
  return b->func->kind == PTO_FUNC_ORCH ? "an orch outside an incore scope" : "a host";
}

static pto_status check_allowed(opctx *c) {
  pto_ir_builder *b = c->b;
  int bit = context_bit(b);
  int is_dist = strncmp(c->info->name, "dist.", 5) == 0;
  int ok = (c->info->allowed_in & bit) != 0 && !(is_dist && in_incore(b));
  if (ok) return PTO_OK;
  char where[96] = "";
  int a = c->info->allowed_in, n = 0;
  if (a & PTO_IN_KERNEL) {
    strcat(where, is_dist ? "a kernel" : "a kernel or an incore scope");
    n++;
  }
  if (a & PTO_IN_ORCH) {
    strcat(where, n++ ? (a & PTO_IN_HOST ? ", an orch" : " or an orch") : "an orch");
  }
  if (a & PTO_IN_HOST) strcat(where, n++ ? " or a host" : "a host");
  return fail(b, "%s is not allowed in %s (only in %s)", c->info->name, context_text(b), where);
}

static pto_status copy_arg(pto_ir_builder *b, const pto_ir_arg *in, pto_ir_arg *out) {
  *out = *in;
  if (!out->loc.line) out->loc = b->loc;
  if (in->kw && !(out->kw = pto_arena_strdup(b->arena, in->kw))) return oom(b);
  switch (in->kind) {
  case PTO_ARG_EXPR:
    if (!in->expr) return fail(b, "an argument without an expression");
    break;
  case PTO_ARG_LIST:
    if (in->list.n < 0 || (in->list.n && !in->list.items))
      return fail(b, "a malformed list argument");
    out->list.items =
        pto_arena_alloc(b->arena, sizeof *out->list.items * (size_t)(in->list.n ? in->list.n : 1));
    if (!out->list.items) return oom(b);
    for (int i = 0; i < in->list.n; i++) {
      if (!in->list.items[i]) return fail(b, "a list item without an expression");
      out->list.items[i] = in->list.items[i];
    }
    break;
  case PTO_ARG_STRING:
  case PTO_ARG_WORD:
    if (!in->str || !(out->str = pto_arena_strdup(b->arena, in->str)))
      return in->str ? oom(b) : fail(b, "an argument without text");
    break;
  case PTO_ARG_DTYPE: break;
  default: return fail(b, "an argument of unknown kind");
  }
  return PTO_OK;
}

/* The root buffer a result names, for write checks: a write result names its target's buffer, a
 * slice a view of its source's. */
static void set_root(pto_ir_builder *b, pto_ir_value *v, const pto_ir_value *of) {
  if (v && of) {
    b->vroot[v->id] = root_of(b, of);
    b->vkroot[v->id] = kernel_root_of(b, of);
  }
}

pto_status pto_ir_builder_op(pto_ir_builder *b, pto_opcode op, const pto_ir_arg *args, int nargs,
                             const pto_ir_result *results, int nresults, pto_ir_stmt **out_stmt) {
  CHECK(b);
  const pto_op_info *info = pto_op_info_get(op);
  if (!info) return fail(b, "unknown opcode %d", (int)op);
  pto_ir_stmt *s;
  TRY(new_stmt(b, PTO_STMT_OP, &s));
  opctx c = {.b = b, .info = info, .opc = op};
  TRY(check_allowed(&c));
  if (nargs < 0 || (nargs && !args)) return fail(b, "%s: malformed arguments", info->name);
  int npos = 0;
  while (npos < nargs && !args[npos].kw)
    npos++;
  for (int i = npos; i < nargs; i++)
    if (!args[i].kw)
      return fail_at(b, args[i].loc, "%s: a positional argument follows a keyword", info->name);
  if (npos < info->min_pos || npos > info->max_pos) {
    if (info->min_pos == info->max_pos)
      return fail(b, "%s takes %d positional argument%s, got %d", info->name, info->min_pos,
                  info->min_pos == 1 ? "" : "s", npos);
    return fail(b, "%s takes %d to %d positional arguments, got %d", info->name, info->min_pos,
                info->max_pos, npos);
  }
  /* Keywords go into canonical order. */
  pto_ir_arg *sorted = pto_arena_alloc(b->arena, sizeof *sorted * (size_t)(nargs ? nargs : 1));
  if (!sorted) return oom(b);
  for (int i = 0; i < npos; i++)
    TRY(copy_arg(b, &args[i], &sorted[i]));
  const pto_ir_arg *bykw[8] = {0};
  for (int i = npos; i < nargs; i++) {
    int k = kw_index(info->keywords, args[i].kw, strlen(args[i].kw));
    if (k < 0 || k >= 8) {
      if (!info->keywords[0])
        return fail_at(b, args[i].loc, "%s: unknown keyword '%s' (%s takes no keywords)",
                       info->name, args[i].kw, info->name);
      char list[96];
      size_t o = 0;
      for (const char *q = info->keywords; *q && o + 3 < sizeof list; q++) {
        if (*q == ' ') list[o++] = ',';
        list[o++] = *q;
      }
      list[o] = 0;
      return fail_at(b, args[i].loc, "%s: unknown keyword '%s' (it takes %s)", info->name,
                     args[i].kw, list);
    }
    if (bykw[k])
      return fail_at(b, args[i].loc, "%s: keyword '%s' is given twice", info->name, args[i].kw);
    bykw[k] = &args[i];
  }
  int n = npos;
  for (int k = 0; k < 8; k++)
    if (bykw[k]) {
      TRY(copy_arg(b, bykw[k], &sorted[n]));
      c.kw[k] = &sorted[n++];
    }
  c.pos = sorted;
  c.npos = npos;
  TRY(type_op(&c));
  /* Remaining plain expressions (none for this op set, but keep the rule total). */
  for (int i = 0; i < n; i++)
    if (sorted[i].kind == PTO_ARG_EXPR && sorted[i].expr->kind != PTO_EXPR_VALUE)
      TRY(commit(b, sorted[i].expr));
  int optional = info->write_mask != 0;
  if (nresults < 0 || nresults > info->nresults) {
    if (info->nresults == 0) return fail(b, "%s has no result", info->name);
    return fail(b, "%s has 1 result, %d named", info->name, nresults);
  }
  if (nresults == 0 && info->nresults == 1 && !optional)
    return fail(b, "the result of %s must be named: %%x = %s(...)", info->name, info->name);
  s->op.opc = op;
  s->op.args = sorted;
  s->op.nargs = n;
  TRY(alloc_results(b, s, nresults));
  if (nresults == 1) {
    TRY(check_declared(b, &results[0], c.rtype));
    TRY(define_value(b, &results[0], c.rtype, s, &s->results[0]));
    pto_ir_value *v = s->results[0];
    if (c.alias) {
      v->alias_of = c.alias;
      set_root(b, v, c.alias);
    } else if (op == PTO_OP_TENSOR_SLICE || op == PTO_OP_TENSOR_RESHAPE ||
               op == PTO_OP_TENSOR_SELECT) {
      set_root(b, v, sorted[0].expr->value);
    }
  }
  TRY(append(b, s));
  if (out_stmt) *out_stmt = s;
  return PTO_OK;
}

/* ---- calls ---------------------------------------------------------------------------- */

pto_status pto_ir_builder_call(pto_ir_builder *b, pto_ir_func *callee, pto_ir_expr *const *args,
                               int nargs, pto_ir_expr *device, const pto_ir_result *results,
                               int nresults, pto_ir_stmt **out_stmt) {
  CHECK(b);
  pto_ir_stmt *s;
  TRY(new_stmt(b, PTO_STMT_CALL, &s));
  if (!callee || callee->index < 0 || callee->index >= b->prog->nfuncs ||
      b->prog->funcs[callee->index] != callee)
    return fail(b, "call: not a function of this program");
  pto_ir_func *f = b->func;
  const char *cn = callee->name;
  if (b->fstate[callee->index] == FN_HEADER)
    return fail(b, "call @%s: its header is not complete", cn);
  if (f->kind == PTO_FUNC_KERNEL)
    return fail(b, "call @%s: a kernel cannot call (only an orch or host can)", cn);
  if (in_incore(b))
    return fail(b, "call @%s: an incore scope cannot call (call from the orch around it)", cn);
  if (f->kind == PTO_FUNC_ORCH && callee->kind != PTO_FUNC_KERNEL)
    return fail(b, "call @%s: an orch calls kernels, and @%s is %s %s", cn, cn,
                callee->kind == PTO_FUNC_ORCH ? "an" : "a", k_kind_names[callee->kind]);
  if (f->kind == PTO_FUNC_HOST && callee->kind != PTO_FUNC_ORCH)
    return fail(b, "call @%s: a host calls orch functions, and @%s is a %s", cn, cn,
                k_kind_names[callee->kind]);
  if (device && f->kind != PTO_FUNC_HOST)
    return fail_at(b, device->loc, "call @%s: device= is allowed only in a host", cn);
  if (device) TRY(expect_scalar(b, device, PTO_DTYPE_INDEX, "device=: "));
  int64_t dev;
  if (device && pto_ir_expr_static_int(device, &dev) == 0 && dev < 0)
    return fail_at(b, device->loc,
                   "call @%s: device=%lld is negative: a call goes to device 0 .. N-1 "
                   "of the N the program is compiled for (--devices)",
                   cn, (long long)dev);
  if (nargs != callee->nparams)
    return fail(b, "call @%s: %d argument%s for %d parameter%s", cn, nargs, nargs == 1 ? "" : "s",
                callee->nparams, callee->nparams == 1 ? "" : "s");
  if (nargs && !args) return fail(b, "call @%s: %d arguments, but args is NULL", cn, nargs);
  pto_ir_expr **av = pto_arena_alloc(b->arena, sizeof *av * (size_t)(nargs ? nargs : 1));
  if (!av) return oom(b);
  /* Dynamic symbols of the callee bound by this call, for the "bound twice" check. */
  const pto_ir_expr *bound[64] = {0};
  const char *bound_by[64] = {0};
  int nouts = 0;
  for (int i = 0; i < nargs; i++) {
    const pto_ir_param *pa = &callee->params[i];
    const pto_ir_type *pt = pa->value->type;
    pto_ir_expr *e = args[i];
    if (!e) return fail(b, "call @%s: argument %d is missing", cn, i + 1);
    av[i] = e;
    char what[200];
    snprintf(what, sizeof what, "call @%s: argument %d for %%%s: ", cn, i + 1, pa->value->name);
    if (pt->kind == PTO_TYPE_SCALAR) {
      TRY(expect_scalar(b, e, pt->dtype, what));
      continue;
    }
    txt ptt = ttext(b, pt);
    if (e->kind != PTO_EXPR_VALUE || e->value->type->kind != pt->kind) {
      txt et = etext(b, e);
      return fail_at(b, e->loc, "%sexpected %s, got %s", what, ptt.s, et.s);
    }
    const pto_ir_type *at = e->value->type;
    txt att = ttext(b, at);
    if (at->dtype != pt->dtype)
      return fail_at(b, e->loc, "%s%%%s: %s does not match %s", what, e->value->name, att.s, ptt.s);
    if (at->rank >= 0 && pt->rank >= 0) {
      if (at->rank != pt->rank)
        return fail_at(b, e->loc, "%s%%%s: %s does not match %s (rank %d vs %d)", what,
                       e->value->name, att.s, ptt.s, at->rank, pt->rank);
      for (int d = 0; d < pt->rank; d++) {
        int64_t av_, pv;
        int as = pto_ir_expr_static_int(at->dims[d], &av_) == 0,
            ps = pto_ir_expr_static_int(pt->dims[d], &pv) == 0;
        if (as && ps && av_ != pv)
          return fail_at(b, e->loc,
                         "%s%%%s: %s does not match %s (dim %d is %lld, the parameter's %lld)",
                         what, e->value->name, att.s, ptt.s, d, (long long)av_, (long long)pv);
        if (pt->dims[d]->kind == PTO_EXPR_SYM && pt->dims[d]->sym < 64) {
          int sy = pt->dims[d]->sym;
          int64_t prev;
          if (bound[sy] && as && pto_ir_expr_static_int(bound[sy], &prev) == 0 && prev != av_)
            return fail_at(
                b, e->loc, "call @%s: symbol %s is bound to %lld by %%%s and to %lld by %%%s", cn,
                b->prog->syms[sy], (long long)prev, bound_by[sy], (long long)av_, e->value->name);
          if (!bound[sy] || as) {
            bound[sy] = at->dims[d];
            bound_by[sy] = e->value->name;
          }
        }
      }
    }
    if (pa->dir != PTO_DIR_IN) {
      opctx c = {.b = b};
      char who[160];
      snprintf(who, sizeof who, "call @%s", cn);
      pto_op_info fake = {.name = who};
      c.info = &fake;
      TRY(check_writable(&c, e->value, who));
      nouts++;
    }
  }
  if (nresults != 0 && nresults != nouts)
    return fail(b, "call @%s: %d result%s named, but @%s has %d out/inout parameter%s", cn,
                nresults, nresults == 1 ? "" : "s", cn, nouts, nouts == 1 ? "" : "s");
  s->call.callee = callee;
  s->call.args = av;
  s->call.nargs = nargs;
  s->call.device = device;
  TRY(alloc_results(b, s, nresults));
  for (int i = 0, k = 0; i < nargs && k < nresults; i++) {
    if (callee->params[i].dir == PTO_DIR_IN ||
        callee->params[i].value->type->kind == PTO_TYPE_SCALAR)
      continue;
    pto_ir_value *target = av[i]->value;
    TRY(check_declared(b, &results[k], target->type));
    TRY(define_value(b, &results[k], target->type, s, &s->results[k]));
    s->results[k]->alias_of = target;
    set_root(b, s->results[k], target);
    k++;
  }
  TRY(append(b, s));
  if (out_stmt) *out_stmt = s;
  return PTO_OK;
}

/* ---- control flow --------------------------------------------------------------------- */

static pto_status define_results(pto_ir_builder *b, pto_ir_stmt *s, const pto_ir_result *rs, int n,
                                 const pto_ir_type *const *types) {
  TRY(alloc_results(b, s, n));
  for (int i = 0; i < n; i++) {
    TRY(check_declared(b, &rs[i], types[i]));
    pto_ir_result r = rs[i];
    r.type = NULL;
    TRY(define_value(b, &r, types[i], s, &s->results[i]));
  }
  return PTO_OK;
}

pto_status pto_ir_builder_for_begin(pto_ir_builder *b, const char *iv_name, int parallel,
                                    pto_ir_expr *lo, pto_ir_expr *hi, pto_ir_expr *step,
                                    const pto_ir_result *iters, pto_ir_expr *const *inits,
                                    int niters, const pto_ir_result *results, int nresults,
                                    pto_ir_stmt **out_stmt) {
  CHECK(b);
  pto_ir_stmt *s;
  TRY(new_stmt(b, PTO_STMT_FOR, &s));
  if (!lo || !hi) return fail(b, "for: missing bounds");
  TRY(expect_scalar(b, lo, PTO_DTYPE_INDEX, "for bound: "));
  TRY(expect_scalar(b, hi, PTO_DTYPE_INDEX, "for bound: "));
  if (step) {
    TRY(expect_scalar(b, step, PTO_DTYPE_INDEX, "for step: "));
    int64_t sv;
    /* a negative step counts down, as Python's range and a runtime step do */
    if (pto_ir_expr_static_int(step, &sv) == 0 && sv == 0)
      return fail_at(b, step->loc, "for step 0: the step is nonzero");
  }
  if (niters < 0 || nresults < 0) return fail(b, "for: negative counts");
  if (niters && (!iters || !inits))
    return fail(b, "for: %d iter variable%s, but iters or inits is NULL", niters,
                niters == 1 ? "" : "s");
  if (nresults != niters)
    return fail(b, "for has %d result%s but %d iter variable%s", nresults, nresults == 1 ? "" : "s",
                niters, niters == 1 ? "" : "s");
  s->loop.parallel = parallel != 0;
  s->loop.lo = lo;
  s->loop.hi = hi;
  s->loop.step = step;
  s->loop.niters = niters;
  if (niters) {
    s->loop.iters = pto_arena_alloc(b->arena, sizeof *s->loop.iters * (size_t)niters);
    s->loop.inits = pto_arena_alloc(b->arena, sizeof *s->loop.inits * (size_t)niters);
    if (!s->loop.iters || !s->loop.inits) return oom(b);
  }
  /* Inits are typed in the enclosing scope, before the body opens. */
  const pto_ir_type **itypes =
      pto_arena_alloc(b->arena, sizeof *itypes * (size_t)(niters ? niters : 1));
  if (!itypes) return oom(b);
  for (int i = 0; i < niters; i++) {
    pto_ir_expr *e = inits[i];
    const pto_ir_result *r = &iters[i];
    if (!e) return fail(b, "for: iter %d has no initial value", i + 1);
    char what[160];
    snprintf(what, sizeof what, "iter %%%s: ", r->name ? r->name : "?");
    if (e->kind == PTO_EXPR_VALUE && e->value->type->kind != PTO_TYPE_SCALAR) {
      if (r->type && !pto__ir_type_equal(r->type, e->value->type)) {
        txt d = ttext(b, r->type), g = ttext(b, e->value->type);
        return fail_at(b, r->loc.line ? r->loc : e->loc, "%sdeclared %s but initialized with %s",
                       what, d.s, g.s);
      }
      itypes[i] = e->value->type;
    } else if (r->type) {
      if (r->type->kind != PTO_TYPE_SCALAR) {
        txt d = ttext(b, r->type);
        return fail_at(b, e->loc, "%sdeclared %s but initialized with a scalar", what, d.s);
      }
      TRY(expect_scalar(b, e, r->type->dtype, what));
      itypes[i] = r->type;
    } else {
      TRY(finish_scalar(b, e, what));
      TRY(pto_ir_builder_scalar_type(b, e->dtype, &itypes[i]));
    }
    s->loop.inits[i] = e;
  }
  pto_ir_result *rs;
  TRY(copy_results(b, results, nresults, &rs));
  TRY(push_frame(b, FR_FOR, s, &s->loop.body));
  frame *fr = top(b);
  fr->results = rs;
  fr->nresults = nresults;
  const pto_ir_type *idx;
  TRY(pto_ir_builder_scalar_type(b, PTO_DTYPE_INDEX, &idx));
  pto_ir_result ivr = {iv_name, NULL, b->loc};
  TRY(define_value(b, &ivr, idx, NULL, &s->loop.iv));
  s->loop.iv->def = NULL;
  for (int i = 0; i < niters; i++) {
    pto_ir_result r = iters[i];
    r.type = NULL;
    TRY(define_value(b, &r, itypes[i], NULL, &s->loop.iters[i]));
    /* A carried tensor names the buffer its initial value names. */
    if (inits[i]->kind == PTO_EXPR_VALUE) set_root(b, s->loop.iters[i], inits[i]->value);
  }
  if (out_stmt) *out_stmt = s;
  return PTO_OK;
}

static pto_status need_frame(pto_ir_builder *b, frame_kind k, const char *what) {
  frame *fr = top(b);
  if (!fr || !in_body(b)) return fail(b, "%s: no function body is open", what);
  if (fr->kind != k && !(k == FR_THEN && fr->kind == FR_ELSE)) {
    if (fr->kind == FR_BODY || fr->kind == FR_HEADER) return fail(b, "%s: nothing to close", what);
    return fail(b, "%s: the innermost open block is the %s opened at %d:%d", what,
                frame_word(fr->kind), fr->loc.line, fr->loc.col);
  }
  return PTO_OK;
}

static const pto_ir_stmt *block_yield(const pto_ir_block *blk) {
  return blk->n && blk->stmts[blk->n - 1]->kind == PTO_STMT_YIELD ? blk->stmts[blk->n - 1] : NULL;
}

/* In a kernel (or an incore scope, which becomes one) a tensor is one of the kernel's
 * parameters, fixed when it is compiled: a tensor an if yields, or a loop carries, names the
 * same parameter (or its aliases) on every path. The compiler refuses it in the same words
 * (compiler/lower_kernel.c check_same_tensor), so check and compile agree. */
static pto_status same_kernel_tensor(pto_ir_builder *b, pto_loc loc, const char *who,
                                     const char *name, const pto_ir_value *want,
                                     const pto_ir_expr *got) {
  if (context_bit(b) != PTO_IN_KERNEL || !want || got->kind != PTO_EXPR_VALUE ||
      !is_buffer(want->type))
    return PTO_OK;
  const pto_ir_value *w = kernel_root_of(b, want), *g = kernel_root_of(b, got->value);
  if (w == g) return PTO_OK;
  return fail_at(b, loc,
                 "%s %%%s is %%%s on one path and %%%s on another: a kernel's tensors are its "
                 "parameters, fixed when it is compiled, so a tensor result names one parameter "
                 "(or its aliases) on every path",
                 who, name ? name : "?", w->name ? w->name : "?", g->name ? g->name : "?");
}

pto_status pto_ir_builder_for_end(pto_ir_builder *b) {
  CHECK(b);
  TRY(need_frame(b, FR_FOR, "end of for"));
  frame *fr = top(b);
  pto_ir_stmt *s = fr->stmt;
  if (s->loop.niters > 0 && !fr->ended)
    return fail(b, "the for body must end with yield of %d value%s (one per iter variable)",
                s->loop.niters, s->loop.niters == 1 ? "" : "s");
  pto_ir_result *rs = fr->results;
  int n = fr->nresults;
  pop_frame(b);
  const pto_ir_stmt *y = block_yield(&s->loop.body);
  for (int i = 0; y && i < n && i < y->ret.n; i++)
    TRY(same_kernel_tensor(b, y->loc, "loop-carried tensor", s->loop.iters[i]->name,
                           s->loop.iters[i], y->ret.vals[i]));
  const pto_ir_type **types = pto_arena_alloc(b->arena, sizeof *types * (size_t)(n ? n : 1));
  if (!types) return oom(b);
  for (int i = 0; i < n; i++)
    types[i] = s->loop.iters[i]->type;
  TRY(define_results(b, s, rs, n, types));
  for (int i = 0; i < n; i++)
    set_root(b, s->results[i], s->loop.iters[i]);
  return append(b, s);
}

pto_status pto_ir_builder_if_begin(pto_ir_builder *b, pto_ir_expr *cond,
                                   const pto_ir_result *results, int nresults,
                                   pto_ir_stmt **out_stmt) {
  CHECK(b);
  pto_ir_stmt *s;
  TRY(new_stmt(b, PTO_STMT_IF, &s));
  if (!cond) return fail(b, "if: missing condition");
  TRY(expect_scalar(b, cond, PTO_DTYPE_BOOL, "if condition: "));
  if (nresults < 0) return fail(b, "if: negative result count");
  s->branch.cond = cond;
  pto_ir_result *rs;
  TRY(copy_results(b, results, nresults, &rs));
  TRY(push_frame(b, FR_THEN, s, &s->branch.then_body));
  top(b)->results = rs;
  top(b)->nresults = nresults;
  if (out_stmt) *out_stmt = s;
  return PTO_OK;
}

static pto_status branch_ends(pto_ir_builder *b, frame *fr) {
  if (fr->nresults > 0 && !fr->ended)
    return fail(b, "the %s block of this if must end with yield of %d value%s",
                fr->kind == FR_THEN ? "then" : "else", fr->nresults, fr->nresults == 1 ? "" : "s");
  return PTO_OK;
}

pto_status pto_ir_builder_else(pto_ir_builder *b) {
  CHECK(b);
  TRY(need_frame(b, FR_THEN, "else"));
  frame *fr = top(b);
  if (fr->kind == FR_ELSE) return fail(b, "else: this if already has an else");
  TRY(branch_ends(b, fr));
  /* The else block is a new scope: values of the then block are not visible in it. */
  b->scope_open[fr->scope] = 0;
  if (pto_grow_int(&b->scope_open, 1, &b->capscopes, b->nscopes + 1)) return oom(b);
  fr = top(b);
  fr->scope = b->nscopes++;
  b->scope_open[fr->scope] = 1;
  fr->kind = FR_ELSE;
  fr->ended = 0;
  fr->block = &fr->stmt->branch.else_body;
  fr->stmt->branch.has_else = 1;
  return PTO_OK;
}

pto_status pto_ir_builder_if_end(pto_ir_builder *b) {
  CHECK(b);
  TRY(need_frame(b, FR_THEN, "end of if"));
  frame *fr = top(b);
  pto_ir_stmt *s = fr->stmt;
  int n = fr->nresults;
  if (n > 0 && fr->kind == FR_THEN) return fail(b, "an if with results needs an else");
  TRY(branch_ends(b, fr));
  pto_ir_result *rs = fr->results;
  pop_frame(b);
  const pto_ir_type **types = pto_arena_alloc(b->arena, sizeof *types * (size_t)(n ? n : 1));
  if (!types) return oom(b);
  const pto_ir_stmt *ty = block_yield(&s->branch.then_body),
                    *ey = block_yield(&s->branch.else_body);
  for (int i = 0; i < n; i++) {
    pto_ir_expr *te = ty->ret.vals[i], *ee = ey->ret.vals[i];
    char what[160];
    snprintf(what, sizeof what, "if result %%%s: ", rs[i].name ? rs[i].name : "?");
    const pto_ir_type *tt = te->kind == PTO_EXPR_VALUE ? te->value->type : NULL;
    const pto_ir_type *et = ee->kind == PTO_EXPR_VALUE ? ee->value->type : NULL;
    if (rs[i].type && rs[i].type->kind == PTO_TYPE_SCALAR) {
      TRY(expect_scalar(b, te, rs[i].type->dtype, what));
      TRY(expect_scalar(b, ee, rs[i].type->dtype, what));
      types[i] = rs[i].type;
      continue;
    }
    if ((tt && tt->kind != PTO_TYPE_SCALAR) || (et && et->kind != PTO_TYPE_SCALAR)) {
      if (!tt || !et || !pto__ir_type_equal(tt, et)) {
        char x[192], y[192];
        if (tt)
          pto__ir_type_text(b->prog, tt, x, sizeof x);
        else
          pto__ir_expr_text(b->prog, te, x, sizeof x);
        if (et)
          pto__ir_type_text(b->prog, et, y, sizeof y);
        else
          pto__ir_expr_text(b->prog, ee, y, sizeof y);
        return fail_at(b, ee->loc, "%sthe branches yield %s and %s", what, x, y);
      }
      types[i] = tt;
      continue;
    }
    /* Scalars: a literal-only side takes the other side's dtype. */
    int tf = pto__ir_expr_is_flexible(te), ef = pto__ir_expr_is_flexible(ee);
    pto_dtype dt = !tf   ? te->dtype
                   : !ef ? ee->dtype
                         : (pto_dtype_is_float(te->dtype) ? te->dtype : ee->dtype);
    TRY(expect_scalar(b, te, dt, what));
    TRY(expect_scalar(b, ee, dt, what));
    TRY(pto_ir_builder_scalar_type(b, dt, &types[i]));
  }
  for (int i = 0; i < n; i++)
    TRY(same_kernel_tensor(b, s->loc, "if result", rs[i].name,
                           ty->ret.vals[i]->kind == PTO_EXPR_VALUE ? ty->ret.vals[i]->value : NULL,
                           ey->ret.vals[i]));
  TRY(define_results(b, s, rs, n, types));
  for (int i = 0; i < n; i++) {
    const pto_ir_expr *te = ty->ret.vals[i], *ee = ey->ret.vals[i];
    if (te->kind == PTO_EXPR_VALUE && ee->kind == PTO_EXPR_VALUE &&
        root_of(b, te->value) == root_of(b, ee->value))
      set_root(b, s->results[i], te->value);
  }
  return append(b, s);
}

pto_status pto_ir_builder_incore_begin(pto_ir_builder *b, const char *name,
                                       pto_ir_stmt **out_stmt) {
  CHECK(b);
  pto_ir_stmt *s;
  TRY(new_stmt(b, PTO_STMT_INCORE, &s));
  if (b->func->kind != PTO_FUNC_ORCH)
    return fail(b, "incore scopes belong in an orch, not in %s %s",
                b->func->kind == PTO_FUNC_KERNEL ? "a" : "a", k_kind_names[b->func->kind]);
  if (in_incore(b)) return fail(b, "incore scopes do not nest");
  if (name && !(s->incore.name = pto_arena_strdup(b->arena, name))) return oom(b);
  TRY(push_frame(b, FR_INCORE, s, &s->incore.body));
  if (out_stmt) *out_stmt = s;
  return PTO_OK;
}

pto_status pto_ir_builder_incore_end(pto_ir_builder *b) {
  CHECK(b);
  TRY(need_frame(b, FR_INCORE, "end of incore"));
  pto_ir_stmt *s = top(b)->stmt;
  pop_frame(b);
  return append(b, s);
}

static pto_status copy_vals(pto_ir_builder *b, pto_ir_stmt *s, pto_ir_expr *const *vals, int n) {
  if (n < 0 || (n && !vals)) return fail(b, "malformed value list");
  s->ret.n = n;
  if (n && !(s->ret.vals = pto_arena_alloc(b->arena, sizeof *s->ret.vals * (size_t)n)))
    return oom(b);
  for (int i = 0; i < n; i++) {
    if (!vals[i]) return fail(b, "missing value %d", i + 1);
    s->ret.vals[i] = vals[i];
  }
  return PTO_OK;
}

pto_status pto_ir_builder_yield(pto_ir_builder *b, pto_ir_expr *const *vals, int n) {
  CHECK(b);
  pto_ir_stmt *s;
  TRY(new_stmt(b, PTO_STMT_YIELD, &s));
  frame *fr = top(b);
  if (fr->kind != FR_FOR && fr->kind != FR_THEN && fr->kind != FR_ELSE)
    return fail(b, "yield ends a for or if body, and this is %s",
                fr->kind == FR_INCORE ? "an incore scope" : "a function body (use return)");
  int want = fr->kind == FR_FOR ? fr->stmt->loop.niters : fr->nresults;
  if (n != want) {
    if (fr->kind == FR_FOR)
      return fail(b, "yield of %d value%s, but the for has %d iter variable%s", n,
                  n == 1 ? "" : "s", want, want == 1 ? "" : "s");
    return fail(b, "yield of %d value%s, but the if has %d result%s", n, n == 1 ? "" : "s", want,
                want == 1 ? "" : "s");
  }
  TRY(copy_vals(b, s, vals, n));
  for (int i = 0; i < n; i++) {
    pto_ir_expr *e = s->ret.vals[i];
    if (fr->kind == FR_FOR) {
      const pto_ir_value *it = fr->stmt->loop.iters[i];
      char what[160];
      snprintf(what, sizeof what, "yield for iter %%%s: ", it->name);
      if (it->type->kind == PTO_TYPE_SCALAR) {
        TRY(expect_scalar(b, e, it->type->dtype, what));
      } else if (e->kind != PTO_EXPR_VALUE || !pto__ir_type_equal(e->value->type, it->type)) {
        txt g = e->kind == PTO_EXPR_VALUE ? ttext(b, e->value->type) : etext(b, e),
            w = ttext(b, it->type);
        return fail_at(b, e->loc, "%sgot %s, the iter variable is %s", what, g.s, w.s);
      }
    } else if (e->kind != PTO_EXPR_VALUE || e->value->type->kind == PTO_TYPE_SCALAR) {
      /* if yields are typed against each other (and a declared type) when the if closes */
      if (e->kind == PTO_EXPR_VALUE) continue;
      TRY(need_scalar_operand(b, e, "yield"));
    }
  }
  fr->ended = 1;
  return append(b, s);
}

pto_status pto_ir_builder_return(pto_ir_builder *b, pto_ir_expr *const *vals, int n) {
  CHECK(b);
  pto_ir_stmt *s;
  TRY(new_stmt(b, PTO_STMT_RETURN, &s));
  frame *fr = top(b);
  pto_ir_func *f = b->func;
  if (fr->kind != FR_BODY)
    return fail(b, "return is the last statement of a function body, not of %s",
                fr->kind == FR_INCORE ? "an incore scope"
                : fr->kind == FR_FOR  ? "a for body"
                                      : "an if branch");
  if (n != f->nrets)
    return fail(b, "return of %d value%s, but @%s's -> list has %d", n, n == 1 ? "" : "s", f->name,
                f->nrets);
  TRY(copy_vals(b, s, vals, n));
  int k = 0;
  for (int i = 0; i < n; i++) {
    pto_ir_expr *e = s->ret.vals[i];
    if (e->kind != PTO_EXPR_VALUE || !pto__ir_type_equal(e->value->type, f->rets[i])) {
      txt g = e->kind == PTO_EXPR_VALUE ? ttext(b, e->value->type) : etext(b, e),
          w = ttext(b, f->rets[i]);
      return fail_at(b, e->loc, "return value %d is %s, the -> list says %s", i + 1, g.s, w.s);
    }
    if (f->kind != PTO_FUNC_KERNEL) continue;
    /* A kernel returns its out/inout parameters, in order (or what tile.store made of them). */
    while (k < f->nparams &&
           (!is_buffer(f->params[k].value->type) || f->params[k].dir == PTO_DIR_IN))
      k++;
    const pto_ir_value *want = k < f->nparams ? f->params[k].value : NULL;
    k++;
    const pto_ir_value *v = e->value;
    while (v->alias_of)
      v = v->alias_of;
    if (v != want && root_of(b, e->value) != want)
      return fail_at(
          b, e->loc,
          "kernel @%s must return its out/inout parameters in order: %%%s (or a tile.store "
          "result on it) here, not %%%s",
          f->name, want ? want->name : "?", e->value->name);
  }
  fr->ended = 1;
  return append(b, s);
}
