/* Structural hash and equality of IR programs.
 *
 * Both are defined by one canonical serialization of the program: a walk that emits typed,
 * delimited fields (a tag byte before every construct, fixed-width integers, strings and lists
 * with their lengths first), so two different structures cannot produce the same stream by
 * concatenation. The hash is XXH3-128 of that stream; two programs are equal when their streams
 * are equal byte for byte. Because both come from the same walk, equal programs always have the
 * same hash.
 *
 * What the walk leaves out is what people choose and the machine does not see: value names
 * (values are referenced by their per-function id), dynamic-symbol names (by declaration index),
 * the program name, the file and every source position. Function names are in: they are the
 * exported kernel symbols and task names. */
#include <stdlib.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY /* a stack state: hashing never allocates, so it cannot fail */
#include <xxhash.h>

#include "pto/base.h"
#include "pto/ir.h"

enum {
  TAG_PROGRAM = 0x50,
  TAG_FUNC,
  TAG_PARAM,
  TAG_VALUE,
  TAG_TYPE,
  TAG_EXPR,
  TAG_ARG,
  TAG_STMT,
  TAG_BLOCK,
  TAG_STR,
  TAG_NULL,
  TAG_KERNEL_ENTRY,
};

typedef enum sink_mode { SINK_HASH, SINK_BUFFER, SINK_COMPARE } sink_mode;

/* Where the serialization goes: into a hash state, into a buffer (the first program of an
 * equality test), or compared against that buffer (the second). */
typedef struct sink {
  sink_mode mode;
  XXH3_state_t *state;
  unsigned char *buf; /* BUFFER: grows; COMPARE: the reference stream */
  size_t len, cap;    /* BUFFER: bytes written; COMPARE: reference length */
  size_t pos;         /* COMPARE: bytes matched so far */
  int failed;         /* BUFFER: out of memory; COMPARE: a byte differed */
} sink;

static void feed(sink *s, const void *p, size_t n) {
  if (s->failed || n == 0) return;
  switch (s->mode) {
  case SINK_HASH: XXH3_128bits_update(s->state, p, n); break;
  case SINK_BUFFER:
    if (n > SIZE_MAX - s->len || pto_grow(&s->buf, 1, &s->cap, s->len + n)) {
      s->failed = 1;
      return;
    }
    memcpy(s->buf + s->len, p, n);
    s->len += n;
    break;
  case SINK_COMPARE:
    if (s->pos + n > s->len || memcmp(s->buf + s->pos, p, n) != 0) {
      s->failed = 1;
      return;
    }
    s->pos += n;
    break;
  }
}

/* Integers go in little-endian, fixed width, so the stream is the same on every host. */
static void put_u64(sink *s, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++)
    b[i] = (unsigned char)(v >> (8 * i));
  feed(s, b, 8);
}
static void put_u8(sink *s, unsigned v) {
  unsigned char b = (unsigned char)v;
  feed(s, &b, 1);
}
static void put_i64(sink *s, int64_t v) { put_u64(s, (uint64_t)v); }
static void put_int(sink *s, int v) { put_u64(s, (uint64_t)(int64_t)v); }

static void put_str(sink *s, const char *str) {
  if (!str) {
    put_u8(s, TAG_NULL);
    return;
  }
  size_t n = strlen(str);
  put_u8(s, TAG_STR);
  put_u64(s, n);
  feed(s, str, n);
}

static void put_expr(sink *s, const pto_ir_expr *e);

static void put_value_ref(sink *s, const pto_ir_value *v) {
  if (!v) {
    put_u8(s, TAG_NULL);
    return;
  }
  put_u8(s, TAG_VALUE);
  put_int(s, v->id);
}

static void put_type(sink *s, const pto_ir_type *t) {
  if (!t) {
    put_u8(s, TAG_NULL);
    return;
  }
  put_u8(s, TAG_TYPE);
  put_u8(s, t->kind);
  put_u8(s, t->dtype);
  put_int(s, t->rank);
  for (int i = 0; i < t->rank && i < PTO_MAX_RANK; i++)
    put_expr(s, t->dims[i]);
  if (t->kind == PTO_TYPE_TILE) {
    put_u8(s, t->space);
    put_u8(s, t->has_valid ? 1 : 0);
    if (t->has_valid)
      for (int i = 0; i < t->rank && i < PTO_MAX_RANK; i++)
        put_expr(s, t->valid[i]);
  }
}

static void put_expr(sink *s, const pto_ir_expr *e) {
  if (!e) {
    put_u8(s, TAG_NULL);
    return;
  }
  put_u8(s, TAG_EXPR);
  put_u8(s, e->kind);
  put_u8(s, e->op);
  put_u8(s, e->dtype);
  switch (e->kind) {
  case PTO_EXPR_INT: put_i64(s, e->i); break;
  case PTO_EXPR_FLOAT: {
    uint64_t bits; /* bit-exact: -0.0 and 0.0, and NaN payloads, are different literals */
    memcpy(&bits, &e->f, sizeof bits);
    put_u64(s, bits);
    break;
  }
  case PTO_EXPR_BOOL: put_u8(s, e->b ? 1 : 0); break;
  case PTO_EXPR_VALUE: put_value_ref(s, e->value); break;
  case PTO_EXPR_SYM: put_int(s, e->sym); break;
  case PTO_EXPR_UNARY:
  case PTO_EXPR_CAST: put_expr(s, e->a); break;
  case PTO_EXPR_BINARY:
    put_expr(s, e->lhs);
    put_expr(s, e->rhs);
    break;
  }
}

/* A value where it is defined: its id, its type and what it aliases. */
static void put_value_def(sink *s, const pto_ir_value *v) {
  if (!v) {
    put_u8(s, TAG_NULL);
    return;
  }
  put_u8(s, TAG_VALUE);
  put_int(s, v->id);
  put_int(s, v->param_index);
  put_type(s, v->type);
  put_value_ref(s, v->alias_of);
}

static void put_arg(sink *s, const pto_ir_arg *a) {
  put_u8(s, TAG_ARG);
  put_u8(s, a->kind);
  put_str(s, a->kw);
  switch (a->kind) {
  case PTO_ARG_EXPR: put_expr(s, a->expr); break;
  case PTO_ARG_DTYPE: put_u8(s, a->dtype); break;
  case PTO_ARG_LIST:
    put_int(s, a->list.n);
    for (int i = 0; i < a->list.n; i++)
      put_expr(s, a->list.items[i]);
    break;
  case PTO_ARG_STRING:
  case PTO_ARG_WORD: put_str(s, a->str); break;
  }
}

static void put_block(sink *s, const pto_ir_block *b);

static void put_stmt(sink *s, const pto_ir_stmt *st) {
  put_u8(s, TAG_STMT);
  put_u8(s, st->kind);
  put_int(s, st->nresults);
  for (int i = 0; i < st->nresults; i++)
    put_value_def(s, st->results[i]);
  switch (st->kind) {
  case PTO_STMT_ASSIGN: put_expr(s, st->expr); break;
  case PTO_STMT_OP:
    put_int(s, st->op.opc);
    put_int(s, st->op.nargs);
    for (int i = 0; i < st->op.nargs; i++)
      put_arg(s, &st->op.args[i]);
    break;
  case PTO_STMT_CALL:
    put_int(s, st->call.callee ? st->call.callee->index : -1);
    put_int(s, st->call.nargs);
    for (int i = 0; i < st->call.nargs; i++)
      put_expr(s, st->call.args[i]);
    put_expr(s, st->call.device);
    break;
  case PTO_STMT_FOR:
    put_value_def(s, st->loop.iv);
    put_u8(s, st->loop.parallel ? 1 : 0);
    put_expr(s, st->loop.lo);
    put_expr(s, st->loop.hi);
    put_expr(s, st->loop.step);
    put_int(s, st->loop.niters);
    for (int i = 0; i < st->loop.niters; i++) {
      put_value_def(s, st->loop.iters[i]);
      put_expr(s, st->loop.inits[i]);
    }
    put_block(s, &st->loop.body);
    break;
  case PTO_STMT_IF:
    put_expr(s, st->branch.cond);
    put_block(s, &st->branch.then_body);
    put_u8(s, st->branch.has_else ? 1 : 0);
    if (st->branch.has_else) put_block(s, &st->branch.else_body);
    break;
  case PTO_STMT_INCORE:
    put_str(s, st->incore.name);
    put_block(s, &st->incore.body);
    break;
  case PTO_STMT_YIELD:
  case PTO_STMT_RETURN:
    put_int(s, st->ret.n);
    for (int i = 0; i < st->ret.n; i++)
      put_expr(s, st->ret.vals[i]);
    break;
  }
}

static void put_block(sink *s, const pto_ir_block *b) {
  put_u8(s, TAG_BLOCK);
  put_int(s, b->n);
  for (int i = 0; i < b->n; i++)
    put_stmt(s, b->stmts[i]);
}

static void put_func(sink *s, const pto_ir_func *f) {
  put_u8(s, TAG_FUNC);
  put_u8(s, f->kind);
  put_str(s, f->name);
  /* The orch made to run a kernel as the entry: apart from a hand-written twin (only when set,
   * so every other function hashes as it did). */
  if (f->kernel_entry) {
    put_u8(s, TAG_KERNEL_ENTRY);
    put_str(s, f->kernel_entry);
  }
  put_int(s, f->nparams);
  for (int i = 0; i < f->nparams; i++) {
    const pto_ir_param *pa = &f->params[i];
    put_u8(s, TAG_PARAM);
    put_value_def(s, pa->value);
    /* dir_written is left out on purpose: 'in %x' and '%x' mean the same thing. */
    put_u8(s, pa->dir);
    put_u8(s, pa->bind);
    put_expr(s, pa->bind == PTO_BIND_LITERAL ? pa->literal : NULL);
  }
  put_int(s, f->nrets);
  for (int i = 0; i < f->nrets; i++)
    put_type(s, f->rets[i]);
  put_int(s, f->nvalues);
  put_block(s, &f->body);
}

static void put_program(sink *s, const pto_ir_program *p) {
  put_u8(s, TAG_PROGRAM);
  put_u64(s, 1); /* serialization format version */
  put_int(s, p->nsyms);
  put_int(s, p->nfuncs);
  for (int i = 0; i < p->nfuncs; i++)
    put_func(s, p->funcs[i]);
}

pto_ir_hash128 pto_ir_program_hash(const pto_ir_program *p) {
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  XXH3_128bits_reset(&state);
  sink s = {.mode = SINK_HASH, .state = &state};
  if (p) put_program(&s, p);
  XXH128_hash_t h = XXH3_128bits_digest(&state);
  pto_ir_hash128 out = {h.low64, h.high64};
  return out;
}

int pto_ir_program_equal(const pto_ir_program *a, const pto_ir_program *b) {
  if (a == b) return 1;
  if (!a || !b) return 0;
  sink ref = {.mode = SINK_BUFFER};
  put_program(&ref, a);
  if (ref.failed) {
    /* Out of memory: answer "not equal", which at worst costs a cache miss, never a wrong hit. */
    free(ref.buf);
    return 0;
  }
  sink cmp = {.mode = SINK_COMPARE, .buf = ref.buf, .len = ref.len};
  put_program(&cmp, b);
  int equal = !cmp.failed && cmp.pos == ref.len;
  free(ref.buf);
  return equal;
}
