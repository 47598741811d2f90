/* The reference interpreter: runs IR directly on host memory. It is the golden model that
 * `pto run --check` compares compiled code against, so it is written for obvious correctness,
 * never for speed: every element goes through the same scalar conversion and arithmetic helpers
 * as the scalar expression language.
 *
 * Execution model
 * - A function invocation gets a frame: one runtime value per IR value id, and the dynamic
 *   symbols bound from that invocation's tensor arguments (so a kernel sees a different R per
 *   call). An orch runs its statements in program order; sequential execution is the reference
 *   for the data-ordered runtime. `call` runs the callee at once; `incore` runs inline.
 * - Tensors are views (data pointer, shape, strides in elements) over the caller's memory or over
 *   a buffer made by tensor.create. Tiles are dense row-major arrays in their dtype. Both are
 *   reference counted so a value that is overwritten (a loop body runs again), yielded out of a
 *   scope or dropped at the end of a frame is freed exactly once: nothing leaks, on success or on
 *   an error path.
 * - A tile carries its valid region at run time: the region of its IR type when the type has one,
 *   else the valid= of its load, else the operand's region for ops that map elements one to one,
 *   else the whole tile. Only loads (what is filled) and stores (what is written) look at it;
 *   every op computes every element, pad included, as docs/language.md says reductions must.
 *
 * Numerics (chosen so compiled code can match bit for bit)
 * - f32 arithmetic in float, f64 in double, f16/bf16 computed in float and rounded to nearest
 *   even when the result is stored into a 16-bit value. exp/log: pto_expf/pto_logf (pto/mathf.h,
 *   within 1 ulp; the kernels emit the same operations), sigmoid = 1/(1 + pto_expf(-x)); f64
 *   exp/log are libm's. sqrtf; rsqrt = 1/sqrtf(x); recip = 1/x; max/min = fmaxf/fminf (a NaN
 *   operand yields the other one; of +0 and -0, max is +0 and min -0); relu = x > 0 ? x : 0.
 * Elementwise ops never fuse a multiply and an add (ISO C mode does not contract); f32 matmul does:
 * see below.
 * - Integers wrap in their dtype's width. Integer `/` floors and `mod` takes the sign of the
 *   divisor; INT_MIN / -1 wraps to INT_MIN and INT_MIN mod -1 is 0. A zero divisor is a launch
 *   error naming the op and its position.
 * - Conversions: float→int truncates toward zero. Out of range is undefined in PTIR; here the
 *   value is clamped to the target's range first (NaN → 0), then converted by C. int→int wraps;
 *   anything→bool is `x != 0`. Literals and scalars (doubles) convert to f16/bf16 with a single
 *   rounding (round to odd into f32, then to nearest even). A 64-bit integer → f16/bf16 of a
 *   magnitude ≥ 2^53 may round twice (through double); no program relies on that.
 * - Reductions run in index order in the accumulation dtype (f32 for f16/bf16/f32, the input
 *   dtype otherwise); sums start from +0. Matmul accumulates in the result dtype (f32, or i32 for
 *   integer inputs) in k order, starting from 0 (matmul) or the accumulator (matmul_acc); in f32
 *   each step is one fmaf(l, r, sum) (a single rounding per product and sum).
 *
 * Host functions (L3) run with simulated ranks, one thread each: see pto_ir_interp_run_host and
 * the "distributed" sections below. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pto/base.h"
#include "pto/dist_abi.h"
#include "pto/ir.h"
#include "pto/mathf.h"

/* Calls nest at most this deep; a recursive program fails cleanly instead of overflowing the
 * host stack. */
#define INTERP_MAX_DEPTH 64

/* ---- runtime values --------------------------------------------------------------------- */

/* Reference counts of buffers and windows are atomic: in a host program, the host thread and
 * the rank threads hold views of the same buffers. Tiles never leave their thread. */
typedef struct ibuf {
  long refs;
  void *data;
} ibuf;

/* A comm window made by dist.alloc_window: one zeroed copy per rank, row-major. */
typedef struct iwin {
  long refs;
  int id;           /* 1, 2, ... in allocation order */
  const char *name; /* the host value it was assigned to */
  pto_dtype dtype;
  int rank;
  int64_t shape[PTO_MAX_RANK];
  int64_t bytes; /* of one copy */
  int ncopies;
  char **copy;
} iwin;

typedef struct itensor {
  ibuf *owner; /* NULL: memory borrowed from the launch's caller, or a window's */
  iwin *win;   /* a view of a comm window: data points into copy 0 in a host, into the rank's
                * copy in its orch and kernels */
  char *data;  /* element [0,..,0] */
  pto_dtype dtype;
  int rank;
  int64_t shape[PTO_MAX_RANK];
  int64_t strides[PTO_MAX_RANK]; /* elements */
  int writable;                  /* 0 when reached through an 'in' parameter */
} itensor;

typedef struct itile {
  long refs;
  pto_dtype dtype;
  pto_space space;
  int64_t rows, cols;
  int64_t vr, vc; /* valid region, within [0,rows] x [0,cols] */
  void *data;
} itile;

typedef enum rv_kind { RV_NONE = 0, RV_SCALAR, RV_TENSOR, RV_TILE } rv_kind;

typedef struct rv {
  rv_kind kind;
  pto_scalar s;
  itensor t;
  itile *tile;
} rv;

typedef struct rvlist {
  rv *v;
  int n;
} rvlist;

static void win_free(iwin *w) {
  for (int i = 0; i < w->ncopies; i++)
    free(w->copy[i]);
  free(w->copy);
  free(w);
}

static void rv_release(rv *v) {
  if (v->kind == RV_TENSOR && v->t.owner &&
      __atomic_sub_fetch(&v->t.owner->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    free(v->t.owner->data);
    free(v->t.owner);
  } else if (v->kind == RV_TENSOR && v->t.win &&
             __atomic_sub_fetch(&v->t.win->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    win_free(v->t.win);
  } else if (v->kind == RV_TILE && v->tile && --v->tile->refs == 0) {
    free(v->tile->data);
    free(v->tile);
  }
  memset(v, 0, sizeof *v);
}

static rv rv_copy(const rv *v) {
  rv c = *v;
  if (c.kind == RV_TENSOR && c.t.owner) __atomic_add_fetch(&c.t.owner->refs, 1, __ATOMIC_RELAXED);
  if (c.kind == RV_TENSOR && c.t.win) __atomic_add_fetch(&c.t.win->refs, 1, __ATOMIC_RELAXED);
  if (c.kind == RV_TILE && c.tile) c.tile->refs++;
  return c;
}

static void rvlist_clear(rvlist *l) {
  for (int i = 0; i < l->n; i++)
    rv_release(&l->v[i]);
  free(l->v);
  l->v = NULL;
  l->n = 0;
}

static rv rv_scalar(pto_scalar s) {
  rv v = {.kind = RV_SCALAR, .s = s};
  return v;
}

/* ---- interpreter state and errors ------------------------------------------------------- */

struct idist;

typedef struct interp {
  const pto_ir_program *p;
  int depth;
  struct idist *dist; /* a host program's ranks and windows; NULL for pto_ir_interp_run */
  int rank;           /* with dist: this thread's rank, or -1 on the host thread */
  /* with dist: this thread's count in idist.progress, bumped by each statement it completes */
  _Atomic uint64_t *progress;
} interp;

typedef struct frame {
  interp *in;
  const pto_ir_func *f;
  rv *vals;         /* by value id */
  int64_t *sym_val; /* by symbol index */
  int *sym_param;   /* the parameter that bound the symbol; -1 while unbound */
} frame;

static const char *file_of(const pto_ir_program *p) { return p && p->file ? p->file : "<input>"; }

/* Prefixes s with "file:line:col", or "file: @func" when the node has no position. */
static pto_status locate(const frame *fr, pto_loc loc, pto_status s) {
  const pto_ir_program *p = fr ? fr->in->p : NULL;
  if (loc.line > 0) return pto_status_annotate(s, "%s:%d:%d", file_of(p), loc.line, loc.col);
  if (fr && fr->f) return pto_status_annotate(s, "%s: @%s", file_of(p), fr->f->name);
  return pto_status_annotate(s, "%s", file_of(p));
}

static pto_status fail_v(const frame *fr, pto_loc loc, pto_status_code code, const char *fmt,
                         va_list ap) {
  return locate(fr, loc, pto_status_makev(code, fmt, ap));
}

__attribute__((format(printf, 4, 5))) static pto_status
fail(const frame *fr, pto_loc loc, pto_status_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pto_status s = fail_v(fr, loc, code, fmt, ap);
  va_end(ap);
  return s;
}

static pto_status oom(const frame *fr, pto_loc loc, const char *what) {
  return fail(fr, loc, PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
}

static const char *op_name(pto_opcode opc) {
  const pto_op_info *info = pto_op_info_get(opc);
  return info && info->name ? info->name : "op";
}

static const char *vname(const pto_ir_value *v) { return v && v->name ? v->name : "?"; }

/* ---- scalar conversions ------------------------------------------------------------------ */

/* Rounds d to float toward zero and marks inexactness in the lowest bit ("round to odd"). A
 * second rounding from that float to f16/bf16 (which have far fewer bits) is then exactly the
 * single correct rounding of d. */
static float round_to_odd_f32(double d) {
  float f = (float)d;
  if (isnan(d) || (double)f == d) return f;
  if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
  uint32_t b;
  memcpy(&b, &f, 4);
  b |= 1u;
  memcpy(&f, &b, 4);
  return f;
}

/* The value x rounded to float dtype dt, as the double pto_scalar holds. */
static double round_float(pto_dtype dt, double x) {
  switch (dt) {
  case PTO_DTYPE_F16: return pto_f16_to_f32(pto_f32_to_f16(round_to_odd_f32(x)));
  case PTO_DTYPE_BF16: return pto_bf16_to_f32(pto_f32_to_bf16(round_to_odd_f32(x)));
  case PTO_DTYPE_F32: return (double)(float)x;
  default: return x;
  }
}

static pto_scalar mk_float(pto_dtype dt, double x) {
  pto_scalar s = {.dtype = dt};
  s.f = round_float(dt, x);
  return s;
}

static int dtype_bits(pto_dtype dt) { return (int)pto_dtype_size(dt) * 8; }

/* The integer of dtype dt whose low bits are `bits`: wraps to the width, sign-extends signed. */
static pto_scalar mk_int(pto_dtype dt, uint64_t bits) {
  pto_scalar s = {.dtype = dt};
  if (dt == PTO_DTYPE_BOOL) {
    s.u = bits != 0;
    return s;
  }
  int w = dtype_bits(dt);
  if (w < 64) {
    bits &= (UINT64_C(1) << w) - 1;
    if (pto_dtype_is_signed(dt) && (bits >> (w - 1)) & 1u) bits |= ~((UINT64_C(1) << w) - 1);
  }
  s.u = bits;
  return s;
}

static pto_scalar mk_bool(int b) {
  pto_scalar s = {.dtype = PTO_DTYPE_BOOL};
  s.i = b != 0;
  return s;
}

static pto_scalar mk_index(int64_t v) {
  pto_scalar s = {.dtype = PTO_DTYPE_INDEX};
  s.i = v;
  return s;
}

static int is_unsigned_int(pto_dtype dt) {
  return pto_dtype_is_int(dt) && !pto_dtype_is_signed(dt);
}

/* Float → integer: truncate toward zero after clamping to the target range; NaN → 0. */
static pto_scalar float_to_int(double x, pto_dtype to) {
  if (isnan(x)) return mk_int(to, 0);
  double t = trunc(x);
  int w = dtype_bits(to);
  if (is_unsigned_int(to)) {
    if (t <= 0) return mk_int(to, 0);
    if (w == 64) return mk_int(to, t >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)t);
    double hi = ldexp(1.0, w) - 1;
    return mk_int(to, (uint64_t)(t > hi ? hi : t));
  }
  if (w == 64) {
    if (t >= 9223372036854775808.0) return mk_int(to, (uint64_t)INT64_MAX);
    if (t < -9223372036854775808.0) return mk_int(to, (uint64_t)INT64_MIN);
    return mk_int(to, (uint64_t)(int64_t)t);
  }
  double hi = ldexp(1.0, w - 1) - 1, lo = -ldexp(1.0, w - 1);
  if (t > hi) t = hi;
  if (t < lo) t = lo;
  return mk_int(to, (uint64_t)(int64_t)t);
}

/* Converts a canonical scalar (of its own dtype) into dtype `to` by PTIR's rules. */
static pto_scalar conv(pto_scalar v, pto_dtype to) {
  pto_dtype from = v.dtype;
  int ffloat = pto_dtype_is_float(from);
  if (pto_dtype_is_float(to)) {
    if (ffloat) return mk_float(to, v.f);
    if (to == PTO_DTYPE_F32) { /* one rounding, straight from the integer */
      float f = is_unsigned_int(from) ? (float)v.u : (float)v.i;
      return mk_float(to, (double)f);
    }
    return mk_float(to, is_unsigned_int(from) ? (double)v.u : (double)v.i);
  }
  if (to == PTO_DTYPE_BOOL) return mk_bool(ffloat ? v.f != 0 : v.u != 0);
  if (ffloat) return float_to_int(v.f, to);
  return mk_int(to, v.u);
}

static pto_scalar lowest_of(pto_dtype dt) {
  if (pto_dtype_is_float(dt)) return mk_float(dt, -INFINITY);
  if (dt == PTO_DTYPE_BOOL || is_unsigned_int(dt)) return mk_int(dt, 0);
  int w = dtype_bits(dt);
  return mk_int(dt, (uint64_t)1 << (w - 1)); /* sign bit only: the most negative value */
}

static pto_scalar highest_of(pto_dtype dt) {
  if (pto_dtype_is_float(dt)) return mk_float(dt, INFINITY);
  if (dt == PTO_DTYPE_BOOL) return mk_int(dt, 1);
  int w = dtype_bits(dt);
  if (is_unsigned_int(dt)) return mk_int(dt, UINT64_MAX);
  return mk_int(dt, (UINT64_C(1) << (w - 1)) - 1);
}

/* ---- scalar arithmetic ------------------------------------------------------------------- */

typedef enum arith_op { AR_ADD, AR_SUB, AR_MUL, AR_DIV, AR_MOD, AR_MIN, AR_MAX } arith_op;

/* min/max of two equal floats: the same bits unless they are zeros of different signs, where
 * fmin/fmax may give either; max gives +0 (the bits ANDed), min -0 (ORed), so the result never
 * depends on the order of the operands (the lowering computes the same). */
static double zero_pick_d(double x, double y, int min) {
  uint64_t a, b;
  memcpy(&a, &x, 8);
  memcpy(&b, &y, 8);
  a = min ? a | b : a & b;
  memcpy(&x, &a, 8);
  return x;
}

static float zero_pick_f(float x, float y, int min) {
  uint32_t a, b;
  memcpy(&a, &x, 4);
  memcpy(&b, &y, 4);
  a = min ? a | b : a & b;
  memcpy(&x, &a, 4);
  return x;
}

/* Computes a op b in dtype dt (both canonical in dt). Returns -1 for an integer division or
 * mod by zero, else 0. */
static int arith(arith_op op, pto_dtype dt, pto_scalar a, pto_scalar b, pto_scalar *out) {
  if (dt == PTO_DTYPE_F64) {
    double x = a.f, y = b.f, r = 0;
    switch (op) {
    case AR_ADD: r = x + y; break;
    case AR_SUB: r = x - y; break;
    case AR_MUL: r = x * y; break;
    case AR_DIV: r = x / y; break;
    case AR_MOD:
      r = fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      if (r == 0) r = copysign(0.0, y); /* a zero has the divisor's sign too, as numpy's */
      break;
    case AR_MIN: r = x == y ? zero_pick_d(x, y, 1) : fmin(x, y); break;
    case AR_MAX: r = x == y ? zero_pick_d(x, y, 0) : fmax(x, y); break;
    }
    *out = mk_float(dt, r);
    return 0;
  }
  if (pto_dtype_is_float(dt)) { /* f32, and f16/bf16 computed in f32 */
    float x = (float)a.f, y = (float)b.f, r = 0;
    switch (op) {
    case AR_ADD: r = x + y; break;
    case AR_SUB: r = x - y; break;
    case AR_MUL: r = x * y; break;
    case AR_DIV: r = x / y; break;
    case AR_MOD:
      r = fmodf(x, y);
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      if (r == 0) r = copysignf(0.0f, y);
      break;
    case AR_MIN: r = x == y ? zero_pick_f(x, y, 1) : fminf(x, y); break;
    case AR_MAX: r = x == y ? zero_pick_f(x, y, 0) : fmaxf(x, y); break;
    }
    *out = mk_float(dt, (double)r);
    return 0;
  }
  if (dt == PTO_DTYPE_BOOL || is_unsigned_int(dt)) {
    uint64_t x = a.u, y = b.u, r = 0;
    switch (op) {
    case AR_ADD: r = x + y; break;
    case AR_SUB: r = x - y; break;
    case AR_MUL: r = x * y; break;
    case AR_DIV:
      if (y == 0) return -1;
      r = x / y;
      break;
    case AR_MOD:
      if (y == 0) return -1;
      r = x % y;
      break;
    case AR_MIN: r = x < y ? x : y; break;
    case AR_MAX: r = x > y ? x : y; break;
    }
    *out = mk_int(dt, r);
    return 0;
  }
  /* Signed: add/sub/mul in uint64 (defined wrap-around), then wrapped to the width. */
  int64_t x = a.i, y = b.i;
  uint64_t r = 0;
  switch (op) {
  case AR_ADD: r = (uint64_t)x + (uint64_t)y; break;
  case AR_SUB: r = (uint64_t)x - (uint64_t)y; break;
  case AR_MUL: r = (uint64_t)x * (uint64_t)y; break;
  case AR_DIV:
    if (y == 0) return -1;
    if (y == -1) {
      r = 0 - (uint64_t)x; /* INT_MIN / -1 wraps */
    } else {
      int64_t q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0))) q--; /* floor */
      r = (uint64_t)q;
    }
    break;
  case AR_MOD:
    if (y == 0) return -1;
    if (y == -1) {
      r = 0;
    } else {
      int64_t m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) m += y; /* sign of the divisor */
      r = (uint64_t)m;
    }
    break;
  case AR_MIN: r = (uint64_t)(x < y ? x : y); break;
  case AR_MAX: r = (uint64_t)(x > y ? x : y); break;
  }
  *out = mk_int(dt, r);
  return 0;
}

/* a cmp b for canonical scalars of the same dtype; C semantics (NaN compares unequal). */
static int compare(pto_expr_op op, pto_dtype dt, pto_scalar a, pto_scalar b) {
  if (pto_dtype_is_float(dt)) {
    switch (op) {
    case PTO_EOP_EQ: return a.f == b.f;
    case PTO_EOP_NE: return a.f != b.f;
    case PTO_EOP_LT: return a.f < b.f;
    case PTO_EOP_LE: return a.f <= b.f;
    case PTO_EOP_GT: return a.f > b.f;
    case PTO_EOP_GE: return a.f >= b.f;
    default: return 0;
    }
  }
  if (dt == PTO_DTYPE_BOOL || is_unsigned_int(dt)) {
    switch (op) {
    case PTO_EOP_EQ: return a.u == b.u;
    case PTO_EOP_NE: return a.u != b.u;
    case PTO_EOP_LT: return a.u < b.u;
    case PTO_EOP_LE: return a.u <= b.u;
    case PTO_EOP_GT: return a.u > b.u;
    case PTO_EOP_GE: return a.u >= b.u;
    default: return 0;
    }
  }
  switch (op) {
  case PTO_EOP_EQ: return a.i == b.i;
  case PTO_EOP_NE: return a.i != b.i;
  case PTO_EOP_LT: return a.i < b.i;
  case PTO_EOP_LE: return a.i <= b.i;
  case PTO_EOP_GT: return a.i > b.i;
  case PTO_EOP_GE: return a.i >= b.i;
  default: return 0;
  }
}

static pto_scalar negate(pto_scalar a) {
  if (pto_dtype_is_float(a.dtype)) return mk_float(a.dtype, -a.f); /* exact; keeps -0.0 */
  return mk_int(a.dtype, 0 - a.u);
}

/* ---- element access ---------------------------------------------------------------------- */

/* Elements are read and written by pto_elem_load/pto_elem_store (base/scalar.c): a host
 * tensor's data need not be aligned. */
static pto_scalar tile_get(const itile *t, int64_t r, int64_t c) {
  return pto_elem_load(t->dtype, t->data, r * t->cols + c);
}

static void tile_put(itile *t, int64_t r, int64_t c, pto_scalar v) {
  pto_elem_store(t->dtype, t->data, r * t->cols + c, conv(v, t->dtype));
}

/* ---- frames ---------------------------------------------------------------------------- */

static void frame_set(frame *fr, const pto_ir_value *v, rv val) {
  rv *slot = &fr->vals[v->id];
  rv_release(slot);
  *slot = val;
}

static pto_status frame_check_value(const frame *fr, const pto_ir_value *v, pto_loc loc) {
  if (!v || v->id < 0 || v->id >= fr->f->nvalues)
    return fail(fr, loc, PTO_STATUS_INTERNAL, "value %%%s has no valid id in @%s", vname(v),
                fr->f->name);
  return PTO_OK;
}

/* ---- expressions ----------------------------------------------------------------------- */

static pto_status eval(frame *fr, const pto_ir_expr *e, rv *out);

static pto_status eval_scalar(frame *fr, const pto_ir_expr *e, pto_scalar *out) {
  rv v = {0};
  PTO_RETURN_IF_ERROR(eval(fr, e, &v));
  if (v.kind != RV_SCALAR) {
    rv_release(&v);
    return fail(fr, e->loc, PTO_STATUS_INVALID_ARGUMENT, "expected a scalar here");
  }
  *out = v.s;
  return PTO_OK;
}

/* An index-valued expression (offsets, shapes, bounds), whatever integer dtype it has. */
static pto_status eval_index(frame *fr, const pto_ir_expr *e, int64_t *out) {
  pto_scalar s;
  PTO_RETURN_IF_ERROR(eval_scalar(fr, e, &s));
  if (pto_dtype_is_float(s.dtype))
    return fail(fr, e->loc, PTO_STATUS_INVALID_ARGUMENT, "expected an integer, got %s",
                pto_dtype_name(s.dtype));
  *out = s.i;
  return PTO_OK;
}

static pto_status eval(frame *fr, const pto_ir_expr *e, rv *out) {
  memset(out, 0, sizeof *out);
  if (!e) return fail(fr, (pto_loc){0, 0}, PTO_STATUS_INTERNAL, "missing expression");
  switch (e->kind) {
  case PTO_EXPR_INT: {
    pto_scalar lit = {.dtype = PTO_DTYPE_I64, .i = e->i};
    if (e->dtype == PTO_DTYPE_U64) lit.dtype = PTO_DTYPE_U64; /* the bits of a u64 literal */
    *out = rv_scalar(conv(lit, e->dtype));
    return PTO_OK;
  }
  case PTO_EXPR_FLOAT: {
    pto_scalar lit = {.dtype = PTO_DTYPE_F64, .f = e->f};
    *out = rv_scalar(conv(lit, e->dtype));
    return PTO_OK;
  }
  case PTO_EXPR_BOOL: *out = rv_scalar(mk_bool(e->b)); return PTO_OK;
  case PTO_EXPR_VALUE: {
    PTO_RETURN_IF_ERROR(frame_check_value(fr, e->value, e->loc));
    const rv *slot = &fr->vals[e->value->id];
    if (slot->kind == RV_NONE)
      return fail(fr, e->loc, PTO_STATUS_INTERNAL, "%%%s is used before it is defined",
                  vname(e->value));
    *out = rv_copy(slot);
    return PTO_OK;
  }
  case PTO_EXPR_SYM: {
    const pto_ir_program *p = fr->in->p;
    if (e->sym < 0 || e->sym >= p->nsyms)
      return fail(fr, e->loc, PTO_STATUS_INTERNAL, "dynamic symbol #%d is not declared", e->sym);
    if (fr->sym_param[e->sym] < 0)
      return fail(fr, e->loc, PTO_STATUS_LAUNCH,
                  "dynamic dim %s has no value in @%s: no tensor parameter of @%s has it",
                  p->syms[e->sym], fr->f->name, fr->f->name);
    *out = rv_scalar(mk_index(fr->sym_val[e->sym]));
    return PTO_OK;
  }
  case PTO_EXPR_UNARY: {
    pto_scalar a;
    PTO_RETURN_IF_ERROR(eval_scalar(fr, e->a, &a));
    if (e->op == PTO_EOP_NOT) {
      *out = rv_scalar(mk_bool(a.u == 0));
    } else {
      *out = rv_scalar(conv(negate(a), e->dtype));
    }
    return PTO_OK;
  }
  case PTO_EXPR_CAST: {
    pto_scalar a;
    PTO_RETURN_IF_ERROR(eval_scalar(fr, e->a, &a));
    *out = rv_scalar(conv(a, e->dtype));
    return PTO_OK;
  }
  case PTO_EXPR_BINARY: {
    pto_scalar a, b;
    PTO_RETURN_IF_ERROR(eval_scalar(fr, e->lhs, &a));
    if (e->op == PTO_EOP_AND || e->op == PTO_EOP_OR) {
      /* Short-circuit, as C does: the right side may be guarded by the left. */
      int la = a.u != 0;
      if ((e->op == PTO_EOP_AND && !la) || (e->op == PTO_EOP_OR && la)) {
        *out = rv_scalar(mk_bool(la));
        return PTO_OK;
      }
      PTO_RETURN_IF_ERROR(eval_scalar(fr, e->rhs, &b));
      *out = rv_scalar(mk_bool(b.u != 0));
      return PTO_OK;
    }
    PTO_RETURN_IF_ERROR(eval_scalar(fr, e->rhs, &b));
    pto_dtype dt = a.dtype; /* operands share a dtype (the builder converts literals) */
    b = conv(b, dt);
    switch (e->op) {
    case PTO_EOP_EQ:
    case PTO_EOP_NE:
    case PTO_EOP_LT:
    case PTO_EOP_LE:
    case PTO_EOP_GT:
    case PTO_EOP_GE: *out = rv_scalar(mk_bool(compare(e->op, dt, a, b))); return PTO_OK;
    default: break;
    }
    arith_op op;
    const char *sym;
    switch (e->op) {
    case PTO_EOP_ADD: op = AR_ADD, sym = "+"; break;
    case PTO_EOP_SUB: op = AR_SUB, sym = "-"; break;
    case PTO_EOP_MUL: op = AR_MUL, sym = "*"; break;
    case PTO_EOP_DIV: op = AR_DIV, sym = "/"; break;
    case PTO_EOP_MOD: op = AR_MOD, sym = "mod"; break;
    case PTO_EOP_MIN: op = AR_MIN, sym = "min"; break;
    case PTO_EOP_MAX: op = AR_MAX, sym = "max"; break;
    default: return fail(fr, e->loc, PTO_STATUS_INTERNAL, "unknown binary operator %d", (int)e->op);
    }
    pto_scalar r;
    if (arith(op, dt, a, b, &r) != 0)
      return fail(fr, e->loc, PTO_STATUS_LAUNCH, "integer division by zero in '%s'", sym);
    *out = rv_scalar(conv(r, e->dtype));
    return PTO_OK;
  }
  }
  return fail(fr, e->loc, PTO_STATUS_INTERNAL, "unknown expression kind %d", (int)e->kind);
}

/* ---- tensors and tiles ------------------------------------------------------------------ */

static pto_status tile_new(const frame *fr, pto_loc loc, const char *what, pto_dtype dt,
                           int64_t rows, int64_t cols, pto_space space, itile **out) {
  *out = NULL;
  if (rows <= 0 || cols <= 0 || rows > (INT64_C(1) << 24) || cols > (INT64_C(1) << 24))
    return fail(fr, loc, PTO_STATUS_INVALID_ARGUMENT, "%s: tile shape [%lld,%lld] is not valid",
                what, (long long)rows, (long long)cols);
  itile *t = pto_calloc(1, sizeof *t);
  void *data = t ? pto_calloc((size_t)(rows * cols), pto_dtype_size(dt)) : NULL;
  if (!data) {
    free(t);
    return oom(fr, loc, what);
  }
  t->refs = 1;
  t->dtype = dt;
  t->space = space;
  t->rows = rows;
  t->cols = cols;
  t->vr = rows;
  t->vc = cols;
  t->data = data;
  *out = t;
  return PTO_OK;
}

static rv rv_tile(itile *t) {
  rv v = {.kind = RV_TILE, .tile = t};
  return v;
}

static void tile_drop(itile *t) {
  rv v = rv_tile(t);
  rv_release(&v);
}

static int64_t clamp64(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }

/* The statement's result type, when it has one and it is a tile. */
static const pto_ir_type *result_tile_type(const pto_ir_stmt *s) {
  if (s->nresults < 1 || !s->results[0] || !s->results[0]->type) return NULL;
  const pto_ir_type *t = s->results[0]->type;
  return t->kind == PTO_TYPE_TILE ? t : NULL;
}

/* The valid region of a new tile: its IR type's, when the type has one (evaluated now, clamped to
 * the shape); else the fallback the op gives. */
static pto_status tile_set_valid(frame *fr, const pto_ir_stmt *s, itile *t, int64_t vr,
                                 int64_t vc) {
  const pto_ir_type *ty = result_tile_type(s);
  if (ty && ty->has_valid && ty->rank == 2) {
    PTO_RETURN_IF_ERROR(eval_index(fr, ty->valid[0], &vr));
    PTO_RETURN_IF_ERROR(eval_index(fr, ty->valid[1], &vc));
  }
  t->vr = clamp64(vr, 0, t->rows);
  t->vc = clamp64(vc, 0, t->cols);
  return PTO_OK;
}

/* The interpreter derives every result's dtype and shape from the operands, as docs/language.md
 * defines them; the builder did too. A disagreement is a bug in one of them, reported rather
 * than run. */
static pto_status check_result_type(frame *fr, const pto_ir_stmt *s, const itile *t) {
  const pto_ir_type *ty = result_tile_type(s);
  if (!ty) return PTO_OK;
  int64_t r = -1, c = -1;
  if (ty->rank == 2) {
    PTO_RETURN_IF_ERROR(eval_index(fr, ty->dims[0], &r));
    PTO_RETURN_IF_ERROR(eval_index(fr, ty->dims[1], &c));
  }
  if (ty->dtype != t->dtype || r != t->rows || c != t->cols)
    return fail(fr, s->loc, PTO_STATUS_INTERNAL,
                "%s: result type is tile[%lld,%lld] %s but the operands give tile[%lld,%lld] %s",
                op_name(s->op.opc), (long long)r, (long long)c, pto_dtype_name(ty->dtype),
                (long long)t->rows, (long long)t->cols, pto_dtype_name(t->dtype));
  return PTO_OK;
}

/* ---- op arguments ----------------------------------------------------------------------- */

static const pto_ir_arg *pos_arg(const pto_ir_stmt *s, int i) {
  int k = 0;
  for (int j = 0; j < s->op.nargs; j++) {
    if (s->op.args[j].kw) continue;
    if (k++ == i) return &s->op.args[j];
  }
  return NULL;
}

static const pto_ir_arg *kw_arg(const pto_ir_stmt *s, const char *kw) {
  for (int j = 0; j < s->op.nargs; j++)
    if (s->op.args[j].kw && strcmp(s->op.args[j].kw, kw) == 0) return &s->op.args[j];
  return NULL;
}

static pto_status missing_arg(frame *fr, const pto_ir_stmt *s, int i, const char *what) {
  return fail(fr, s->loc, PTO_STATUS_INVALID_ARGUMENT, "%s: argument %d must be %s",
              op_name(s->op.opc), i + 1, what);
}

/* Borrows the runtime value a positional VALUE argument names; it must have kind `want`. */
static pto_status arg_value(frame *fr, const pto_ir_stmt *s, int i, rv_kind want, const rv **out) {
  const pto_ir_arg *a = pos_arg(s, i);
  const char *what = want == RV_TILE ? "a tile" : "a tensor";
  if (!a || a->kind != PTO_ARG_EXPR || !a->expr || a->expr->kind != PTO_EXPR_VALUE)
    return missing_arg(fr, s, i, what);
  PTO_RETURN_IF_ERROR(frame_check_value(fr, a->expr->value, a->loc));
  const rv *v = &fr->vals[a->expr->value->id];
  if (v->kind != want)
    return fail(fr, a->loc, PTO_STATUS_INVALID_ARGUMENT, "%s: %%%s is not %s", op_name(s->op.opc),
                vname(a->expr->value), what);
  *out = v;
  return PTO_OK;
}

static pto_status arg_tile(frame *fr, const pto_ir_stmt *s, int i, const itile **out) {
  const rv *v;
  PTO_RETURN_IF_ERROR(arg_value(fr, s, i, RV_TILE, &v));
  *out = v->tile;
  return PTO_OK;
}

static pto_status arg_tensor(frame *fr, const pto_ir_stmt *s, int i, const rv **out) {
  return arg_value(fr, s, i, RV_TENSOR, out);
}

static pto_status arg_scalar(frame *fr, const pto_ir_stmt *s, int i, pto_scalar *out) {
  const pto_ir_arg *a = pos_arg(s, i);
  if (!a || a->kind != PTO_ARG_EXPR) return missing_arg(fr, s, i, "a scalar");
  return eval_scalar(fr, a->expr, out);
}

static pto_status arg_dtype(frame *fr, const pto_ir_stmt *s, int i, pto_dtype *out) {
  const pto_ir_arg *a = pos_arg(s, i);
  if (!a || a->kind != PTO_ARG_DTYPE) return missing_arg(fr, s, i, "a dtype");
  *out = a->dtype;
  return PTO_OK;
}

/* Evaluates a list argument of exactly n index expressions. */
static pto_status list_values(frame *fr, const pto_ir_stmt *s, const pto_ir_arg *a,
                              const char *what, int n, int64_t *out) {
  if (!a || a->kind != PTO_ARG_LIST)
    return fail(fr, s->loc, PTO_STATUS_INVALID_ARGUMENT, "%s: %s must be a list",
                op_name(s->op.opc), what);
  if (a->list.n != n)
    return fail(fr, a->loc, PTO_STATUS_INVALID_ARGUMENT, "%s: %s has %d entries, expected %d",
                op_name(s->op.opc), what, a->list.n, n);
  for (int i = 0; i < n; i++)
    PTO_RETURN_IF_ERROR(eval_index(fr, a->list.items[i], &out[i]));
  return PTO_OK;
}

static pto_status arg_space(frame *fr, const pto_ir_stmt *s, pto_space dflt, pto_space *out) {
  const pto_ir_type *ty = result_tile_type(s);
  *out = ty ? ty->space : dflt;
  const pto_ir_arg *a = kw_arg(s, "space");
  if (!a) return PTO_OK;
  int sp = (a->kind == PTO_ARG_WORD && a->str) ? pto_space_from_name(a->str, strlen(a->str)) : -1;
  if (sp < 0)
    return fail(fr, a->loc, PTO_STATUS_INVALID_ARGUMENT, "%s: space= needs a space name",
                op_name(s->op.opc));
  *out = (pto_space)sp;
  return PTO_OK;
}

/* ---- tensor views ---------------------------------------------------------------------- */

/* The element address of a view at full index idx (rank entries, each in range). */
static char *tensor_at(const itensor *t, const int64_t *idx) {
  int64_t off = 0;
  for (int d = 0; d < t->rank; d++)
    off += idx[d] * t->strides[d];
  return t->data + off * (int64_t)pto_dtype_size(t->dtype);
}

/* How a tile maps onto a tensor at `offs`: the leading dims are fixed by the offsets (and must
 * be in range), the last two are the tile's rows and columns. A rank-1 tensor is one row. */
typedef struct tile_window {
  int64_t idx[PTO_MAX_RANK]; /* the full index of tile element [0,0] */
  int rdim, cdim;            /* tensor dims addressed by rows / columns; rdim -1 for rank 1 */
  int64_t rext, cext;        /* rows / columns of the tensor from the window's origin */
} tile_window;

static pto_status window_of(frame *fr, const pto_ir_stmt *s, const itensor *t, const int64_t *offs,
                            tile_window *w) {
  memset(w, 0, sizeof *w);
  for (int d = 0; d < t->rank; d++) {
    if (offs[d] < 0)
      return fail(fr, s->loc, PTO_STATUS_LAUNCH, "%s: offset %lld of dim %d is negative",
                  op_name(s->op.opc), (long long)offs[d], d);
    w->idx[d] = offs[d];
  }
  w->cdim = t->rank - 1;
  w->rdim = t->rank - 2;
  for (int d = 0; d < w->rdim; d++)
    if (offs[d] >= t->shape[d])
      return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                  "%s: offset %lld of dim %d is outside the tensor's extent %lld",
                  op_name(s->op.opc), (long long)offs[d], d, (long long)t->shape[d]);
  w->cext = t->shape[w->cdim] - offs[w->cdim];
  w->rext = w->rdim >= 0 ? t->shape[w->rdim] - offs[w->rdim] : 1;
  if (w->cext < 0) w->cext = 0;
  if (w->rext < 0) w->rext = 0;
  return PTO_OK;
}

static char *window_at(const itensor *t, const tile_window *w, int64_t r, int64_t c) {
  int64_t idx[PTO_MAX_RANK];
  memcpy(idx, w->idx, sizeof idx);
  if (w->rdim >= 0) idx[w->rdim] += r;
  idx[w->cdim] += c;
  return tensor_at(t, idx);
}

/* ---- ops: load, store, create ----------------------------------------------------------- */

static pto_status op_tile_load(frame *fr, const pto_ir_stmt *s, rv *out) {
  const rv *tv;
  PTO_RETURN_IF_ERROR(arg_tensor(fr, s, 0, &tv));
  const itensor *t = &tv->t;
  int64_t offs[PTO_MAX_RANK], shape[2], valid[2];
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 1), "the offsets", t->rank, offs));
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 2), "the shape", 2, shape));
  const pto_ir_arg *va = kw_arg(s, "valid");
  if (va) {
    PTO_RETURN_IF_ERROR(list_values(fr, s, va, "valid=", 2, valid));
    /* An extent past the tile's is clamped to it (as tensor.slice clamps at the tensor's edge:
     * `valid=[M - row0, C]` is the natural way to write a last partial block); a negative one is
     * a launch error. */
    for (int k = 0; k < 2; k++)
      if (valid[k] < 0)
        return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                    "tile.load in @%s: valid region [%lld, %lld] has a negative extent: value "
                    "%lld at [%d,0] is below 0",
                    fr->f->name, (long long)valid[0], (long long)valid[1], (long long)valid[k], k);
  } else {
    valid[0] = shape[0];
    valid[1] = shape[1];
  }
  pto_scalar pad = conv(mk_int(PTO_DTYPE_I64, 0), t->dtype);
  const pto_ir_arg *pa = kw_arg(s, "pad");
  if (pa) {
    const char *w = pa->kind == PTO_ARG_WORD ? pa->str : NULL;
    if (w && strcmp(w, "min") == 0)
      pad = lowest_of(t->dtype);
    else if (w && strcmp(w, "max") == 0)
      pad = highest_of(t->dtype);
    else if (!w || strcmp(w, "zero") != 0)
      return fail(fr, pa->loc, PTO_STATUS_INVALID_ARGUMENT,
                  "tile.load: pad= must be zero, min or max");
  }
  pto_space space;
  PTO_RETURN_IF_ERROR(arg_space(fr, s, PTO_SPACE_VEC, &space));
  tile_window w;
  PTO_RETURN_IF_ERROR(window_of(fr, s, t, offs, &w));
  itile *tl;
  PTO_RETURN_IF_ERROR(tile_new(fr, s->loc, "tile.load", t->dtype, shape[0], shape[1], space, &tl));
  pto_status st = tile_set_valid(fr, s, tl, valid[0], valid[1]);
  if (!st) st = check_result_type(fr, s, tl);
  if (st) {
    tile_drop(tl);
    return st;
  }
  /* Fill from the valid= region (not the type's: that is the same expression when the builder
   * copies it), clipped at the tensor's edge; everything else is the pad value. */
  int64_t vr = clamp64(valid[0], 0, tl->rows), vc = clamp64(valid[1], 0, tl->cols);
  for (int64_t r = 0; r < tl->rows; r++)
    for (int64_t c = 0; c < tl->cols; c++) {
      int inside = r < vr && c < vc && r < w.rext && c < w.cext;
      tile_put(tl, r, c, inside ? pto_elem_load(t->dtype, window_at(t, &w, r, c), 0) : pad);
    }
  *out = rv_tile(tl);
  return PTO_OK;
}

/* Positional argument i of s as the tensor the op writes: refused when it is reached through an
 * 'in' parameter. */
static pto_status arg_target(frame *fr, const pto_ir_stmt *s, int i, const char *op,
                             const rv **out) {
  PTO_RETURN_IF_ERROR(arg_tensor(fr, s, i, out));
  if ((*out)->t.writable) return PTO_OK;
  return fail(fr, s->loc, PTO_STATUS_LAUNCH,
              "%s: %%%s is read-only (it is reached through an 'in' parameter)", op,
              vname(pos_arg(s, i)->expr->value));
}

static pto_status op_tile_store(frame *fr, const pto_ir_stmt *s, rv *out) {
  const itile *tl;
  const rv *tv;
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &tl));
  PTO_RETURN_IF_ERROR(arg_target(fr, s, 2, "tile.store", &tv));
  const itensor *t = &tv->t;
  int64_t offs[PTO_MAX_RANK];
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 1), "the offsets", t->rank, offs));
  tile_window w;
  PTO_RETURN_IF_ERROR(window_of(fr, s, t, offs, &w));
  int64_t nr = tl->vr < w.rext ? tl->vr : w.rext;
  int64_t nc = tl->vc < w.cext ? tl->vc : w.cext;
  for (int64_t r = 0; r < nr; r++)
    for (int64_t c = 0; c < nc; c++)
      pto_elem_store(t->dtype, window_at(t, &w, r, c), 0, conv(tile_get(tl, r, c), t->dtype));
  *out = rv_copy(tv); /* the result aliases the target */
  return PTO_OK;
}

static pto_status op_tile_create_full(frame *fr, const pto_ir_stmt *s, int full, rv *out) {
  int64_t shape[2];
  pto_dtype dt;
  pto_scalar value = mk_int(PTO_DTYPE_I64, 0);
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 0), "the shape", 2, shape));
  PTO_RETURN_IF_ERROR(arg_dtype(fr, s, 1, &dt));
  if (full) PTO_RETURN_IF_ERROR(arg_scalar(fr, s, 2, &value));
  pto_space space;
  PTO_RETURN_IF_ERROR(arg_space(fr, s, PTO_SPACE_VEC, &space));
  itile *tl;
  PTO_RETURN_IF_ERROR(tile_new(fr, s->loc, op_name(s->op.opc), dt, shape[0], shape[1], space, &tl));
  pto_status st = tile_set_valid(fr, s, tl, shape[0], shape[1]);
  if (!st) st = check_result_type(fr, s, tl);
  if (st) {
    tile_drop(tl);
    return st;
  }
  /* tile.create is "uninitialised" in PTIR; zero keeps the reference deterministic. */
  pto_scalar v = conv(value, dt);
  for (int64_t r = 0; r < tl->rows; r++)
    for (int64_t c = 0; c < tl->cols; c++)
      tile_put(tl, r, c, v);
  *out = rv_tile(tl);
  return PTO_OK;
}

/* ---- ops: elementwise, reductions, matmul ----------------------------------------------- */

/* A new result tile shaped like `like` (dtype dt), valid region inherited unless the result
 * type says otherwise. */
static pto_status new_result_like(frame *fr, const pto_ir_stmt *s, const itile *like, pto_dtype dt,
                                  pto_space space, itile **out) {
  PTO_RETURN_IF_ERROR(
      tile_new(fr, s->loc, op_name(s->op.opc), dt, like->rows, like->cols, space, out));
  pto_status st = tile_set_valid(fr, s, *out, like->vr, like->vc);
  if (!st) st = check_result_type(fr, s, *out);
  if (st) {
    tile_drop(*out);
    *out = NULL;
  }
  return st;
}

static pto_status div_zero(frame *fr, const pto_ir_stmt *s, int64_t r, int64_t c) {
  return fail(fr, s->loc, PTO_STATUS_LAUNCH, "%s: integer division by zero at [%lld,%lld]",
              op_name(s->op.opc), (long long)r, (long long)c);
}

static pto_status same_shape(frame *fr, const pto_ir_stmt *s, const itile *a, const itile *b) {
  if (a->rows != b->rows || a->cols != b->cols || a->dtype != b->dtype)
    return fail(fr, s->loc, PTO_STATUS_INVALID_ARGUMENT,
                "%s: operands tile[%lld,%lld] %s and tile[%lld,%lld] %s differ", op_name(s->op.opc),
                (long long)a->rows, (long long)a->cols, pto_dtype_name(a->dtype),
                (long long)b->rows, (long long)b->cols, pto_dtype_name(b->dtype));
  return PTO_OK;
}

static arith_op arith_of(pto_opcode opc) {
  switch (pto_op_info_get(opc)->fn) {
  case PTO_FN_SUB: return AR_SUB;
  case PTO_FN_MUL: return AR_MUL;
  case PTO_FN_DIV: return AR_DIV;
  case PTO_FN_REM: return AR_MOD;
  case PTO_FN_MAX: return AR_MAX;
  case PTO_FN_MIN: return AR_MIN;
  default: return AR_ADD; /* add and the sums */
  }
}

/* ---- second set: elementwise ---- */

/* The comparison a cmp= keyword names (tile.cmp, tile.cmps). */
static pto_expr_op cmp_of(const pto_ir_stmt *s) {
  const pto_ir_arg *k = kw_arg(s, "cmp");
  static const char *const words[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  static const pto_expr_op ops[] = {PTO_EOP_EQ, PTO_EOP_NE, PTO_EOP_LT,
                                    PTO_EOP_LE, PTO_EOP_GT, PTO_EOP_GE};
  for (int i = 0; k && k->kind == PTO_ARG_WORD && i < 6; i++)
    if (strcmp(k->str, words[i]) == 0) return ops[i];
  return PTO_EOP_NONE;
}

/* x fn y for the second set's binary functions, in dtype dt (both canonical in dt): 1 with *z
 * set when fn is one of them, 0 when it is not (arith computes it). */
static int elem_binary(pto_op_fn fn, pto_expr_op cmp, pto_dtype dt, pto_scalar x, pto_scalar y,
                       pto_scalar *z) {
  int bits = dtype_bits(dt), isf = pto_dtype_is_float(dt);
  /* a shift count inside [0, bits): signed counts below 0 are outside */
  int in_range = pto_dtype_is_signed(dt) ? y.i >= 0 && y.i < bits : y.u < (uint64_t)bits;
  switch (fn) {
  case PTO_FN_CMP: *z = mk_bool(compare(cmp, dt, x, y)); return 1;
  case PTO_FN_AND: *z = mk_int(dt, x.u & y.u); return 1;
  case PTO_FN_OR: *z = mk_int(dt, x.u | y.u); return 1;
  case PTO_FN_XOR: *z = mk_int(dt, x.u ^ y.u); return 1;
  case PTO_FN_SHL: *z = mk_int(dt, in_range ? x.u << y.u : 0); return 1;
  case PTO_FN_SHR:
    if (pto_dtype_is_signed(dt))
      *z = mk_int(dt, (uint64_t)(x.i >> (in_range ? y.i : bits - 1))); /* x.i sign-extended */
    else
      *z = mk_int(dt, in_range ? x.u >> y.u : 0);
    return 1;
  case PTO_FN_LRELU:
    if (dt == PTO_DTYPE_F64)
      *z = mk_float(dt, x.f >= 0 ? x.f : x.f * y.f);
    else if (isf)
      *z = mk_float(dt, (float)x.f >= 0 ? (float)x.f : (float)x.f * (float)y.f);
    else if (is_unsigned_int(dt))
      *z = x;
    else
      *z = x.i >= 0 ? x : mk_int(dt, x.u * y.u); /* the product wraps */
    return 1;
  case PTO_FN_FMOD:
    *z = mk_float(dt, dt == PTO_DTYPE_F64 ? fmod(x.f, y.f) : (double)fmodf((float)x.f, (float)y.f));
    return 1;
  case PTO_FN_EXPDIF: {
    pto_scalar d;
    arith(AR_SUB, dt, x, y, &d); /* rounded once to dt, as tile.sub */
    *z = mk_float(dt, dt == PTO_DTYPE_F64 ? exp(d.f) : (double)pto_expf((float)d.f));
    return 1;
  }
  default: return 0;
  }
}

/* tile.sel / tile.sels: out = mask ? a : b (b the third tile or the scalar). */
static pto_status op_tile_select(frame *fr, const pto_ir_stmt *s, rv *out) {
  const itile *m, *a, *b = NULL;
  pto_scalar sc = {0};
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &m));
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 1, &a));
  if (s->op.opc == PTO_OP_TILE_SELS) {
    PTO_RETURN_IF_ERROR(arg_scalar(fr, s, 2, &sc));
    sc = conv(sc, a->dtype);
  } else {
    PTO_RETURN_IF_ERROR(arg_tile(fr, s, 2, &b));
    PTO_RETURN_IF_ERROR(same_shape(fr, s, a, b));
  }
  if (m->dtype != PTO_DTYPE_BOOL || m->rows != a->rows || m->cols != a->cols)
    return fail(fr, s->loc, PTO_STATUS_INVALID_ARGUMENT,
                "%s: the mask tile[%lld,%lld] %s does not fit tile[%lld,%lld]", op_name(s->op.opc),
                (long long)m->rows, (long long)m->cols, pto_dtype_name(m->dtype),
                (long long)a->rows, (long long)a->cols);
  itile *o;
  PTO_RETURN_IF_ERROR(new_result_like(fr, s, a, a->dtype, a->space, &o));
  for (int64_t r = 0; r < a->rows; r++)
    for (int64_t c = 0; c < a->cols; c++)
      tile_put(o, r, c, tile_get(m, r, c).u ? tile_get(a, r, c) : b ? tile_get(b, r, c) : sc);
  *out = rv_tile(o);
  return PTO_OK;
}

/* Binary elementwise, scalar forms and row/col expansions: out[r,c] = a[r,c] op b(r,c) where b
 * is the other tile, the scalar, v[r,0] or v[0,c]. */
typedef enum bin_form { BIN_TILE, BIN_SCALAR, BIN_ROW, BIN_COL } bin_form;

static pto_status op_tile_binary(frame *fr, const pto_ir_stmt *s, bin_form form, rv *out) {
  const itile *a, *b = NULL;
  pto_scalar sc = {0};
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &a));
  if (form == BIN_SCALAR) {
    PTO_RETURN_IF_ERROR(arg_scalar(fr, s, 1, &sc));
    sc = conv(sc, a->dtype);
  } else {
    PTO_RETURN_IF_ERROR(arg_tile(fr, s, 1, &b));
    if (form == BIN_TILE) PTO_RETURN_IF_ERROR(same_shape(fr, s, a, b));
    int bad = b->dtype != a->dtype || (form == BIN_ROW && (b->rows != a->rows || b->cols != 1)) ||
              (form == BIN_COL && (b->cols != a->cols || b->rows != 1));
    if (bad)
      return fail(fr, s->loc, PTO_STATUS_INVALID_ARGUMENT,
                  "%s: tile[%lld,%lld] %s does not fit tile[%lld,%lld] %s", op_name(s->op.opc),
                  (long long)b->rows, (long long)b->cols, pto_dtype_name(b->dtype),
                  (long long)a->rows, (long long)a->cols, pto_dtype_name(a->dtype));
  }
  pto_op_fn fn = pto_op_info_get(s->op.opc)->fn;
  pto_expr_op cmp = fn == PTO_FN_CMP ? cmp_of(s) : PTO_EOP_NONE;
  itile *o;
  PTO_RETURN_IF_ERROR(
      new_result_like(fr, s, a, fn == PTO_FN_CMP ? PTO_DTYPE_BOOL : a->dtype, a->space, &o));
  arith_op op = arith_of(s->op.opc);
  for (int64_t r = 0; r < a->rows; r++)
    for (int64_t c = 0; c < a->cols; c++) {
      pto_scalar y = form == BIN_SCALAR ? sc
                     : form == BIN_TILE ? tile_get(b, r, c)
                     : form == BIN_ROW  ? tile_get(b, r, 0)
                                        : tile_get(b, 0, c);
      pto_scalar z, x = tile_get(a, r, c);
      if (elem_binary(fn, cmp, a->dtype, x, y, &z)) {
        tile_put(o, r, c, z);
        continue;
      }
      if (arith(op, a->dtype, x, y, &z) != 0) {
        tile_drop(o);
        return div_zero(fr, s, r, c);
      }
      tile_put(o, r, c, z);
    }
  *out = rv_tile(o);
  return PTO_OK;
}

static pto_status op_tile_unary(frame *fr, const pto_ir_stmt *s, rv *out) {
  const itile *a;
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &a));
  pto_opcode opc = s->op.opc;
  pto_op_fn fn = pto_op_info_get(opc)->fn;
  int isf = pto_dtype_is_float(a->dtype);
  if (!isf && pto_op_info_get(opc)->float_only)
    return fail(fr, s->loc, PTO_STATUS_INVALID_ARGUMENT, "%s: needs a float tile, got %s",
                op_name(opc), pto_dtype_name(a->dtype));
  itile *o;
  PTO_RETURN_IF_ERROR(new_result_like(fr, s, a, a->dtype, a->space, &o));
  for (int64_t r = 0; r < a->rows; r++)
    for (int64_t c = 0; c < a->cols; c++) {
      pto_scalar x = tile_get(a, r, c), z;
      if (fn == PTO_FN_NOT) {
        z = a->dtype == PTO_DTYPE_BOOL ? mk_bool(!x.u) : mk_int(a->dtype, ~x.u);
      } else if (a->dtype == PTO_DTYPE_F64) {
        double v = x.f, y = 0;
        switch (fn) {
        case PTO_FN_EXP: y = exp(v); break;
        case PTO_FN_LOG: y = log(v); break;
        case PTO_FN_SQRT: y = sqrt(v); break;
        case PTO_FN_RSQRT: y = 1.0 / sqrt(v); break;
        case PTO_FN_RECIP: y = 1.0 / v; break;
        case PTO_FN_RELU: y = v > 0 ? v : 0.0; break;
        case PTO_FN_NEG: y = -v; break;
        case PTO_FN_ABS: y = fabs(v); break;
        case PTO_FN_SIGMOID: y = 1.0 / (1.0 + exp(-v)); break;
        case PTO_FN_SIN: y = sin(v); break;
        case PTO_FN_COS: y = cos(v); break;
        default: y = NAN; break; /* not a unary function */
        }
        z = mk_float(a->dtype, y);
      } else if (isf) { /* f32, and f16/bf16 computed in f32 */
        float v = (float)x.f, y = 0;
        switch (fn) {
        case PTO_FN_EXP: y = pto_expf(v); break;
        case PTO_FN_LOG: y = pto_logf(v); break;
        case PTO_FN_SQRT: y = sqrtf(v); break;
        case PTO_FN_RSQRT: y = 1.0f / sqrtf(v); break;
        case PTO_FN_RECIP: y = 1.0f / v; break;
        case PTO_FN_RELU: y = v > 0 ? v : 0.0f; break;
        case PTO_FN_NEG: y = -v; break;
        case PTO_FN_ABS: y = fabsf(v); break;
        case PTO_FN_SIGMOID: y = 1.0f / (1.0f + pto_expf(-v)); break;
        case PTO_FN_SIN: y = pto_sinf(v); break;
        case PTO_FN_COS: y = pto_cosf(v); break;
        default: y = NAN; break; /* not a unary function */
        }
        z = mk_float(a->dtype, (double)y);
      } else if (fn == PTO_FN_NEG) {
        z = negate(x);
      } else if (is_unsigned_int(a->dtype) || a->dtype == PTO_DTYPE_BOOL) {
        z = x; /* relu and abs of an unsigned value are the value */
      } else if (fn == PTO_FN_RELU) {
        z = x.i > 0 ? x : mk_int(a->dtype, 0);
      } else {
        z = x.i < 0 ? negate(x) : x; /* abs(INT_MIN) wraps to INT_MIN */
      }
      tile_put(o, r, c, z);
    }
  *out = rv_tile(o);
  return PTO_OK;
}

static pto_status op_tile_cast(frame *fr, const pto_ir_stmt *s, rv *out) {
  const itile *a;
  pto_dtype dt;
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &a));
  PTO_RETURN_IF_ERROR(arg_dtype(fr, s, 1, &dt));
  itile *o;
  PTO_RETURN_IF_ERROR(new_result_like(fr, s, a, dt, a->space, &o));
  for (int64_t r = 0; r < a->rows; r++)
    for (int64_t c = 0; c < a->cols; c++)
      tile_put(o, r, c, tile_get(a, r, c));
  *out = rv_tile(o);
  return PTO_OK;
}

static pto_status op_tile_move(frame *fr, const pto_ir_stmt *s, rv *out) {
  const itile *a;
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &a));
  pto_space space;
  PTO_RETURN_IF_ERROR(arg_space(fr, s, a->space, &space));
  itile *o;
  PTO_RETURN_IF_ERROR(new_result_like(fr, s, a, a->dtype, space, &o));
  memcpy(o->data, a->data, (size_t)(a->rows * a->cols) * pto_dtype_size(a->dtype));
  *out = rv_tile(o);
  return PTO_OK;
}

static pto_dtype accum_dtype(pto_dtype dt) {
  if (dt == PTO_DTYPE_F16 || dt == PTO_DTYPE_BF16 || dt == PTO_DTYPE_F32) return PTO_DTYPE_F32;
  return dt;
}

/* row_* reduce each row to [R,1]; col_* each column to [1,C]. */
static pto_status op_tile_argreduce(frame *fr, const pto_ir_stmt *s, const itile *a, int by_row,
                                    rv *out);

static pto_status op_tile_reduce(frame *fr, const pto_ir_stmt *s, int by_row, rv *out) {
  const itile *a;
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &a));
  pto_op_fn fn = pto_op_info_get(s->op.opc)->fn;
  if (fn == PTO_FN_ARGMAX || fn == PTO_FN_ARGMIN) return op_tile_argreduce(fr, s, a, by_row, out);
  arith_op op = arith_of(s->op.opc);
  pto_dtype acc_dt = accum_dtype(a->dtype);
  int64_t n_out = by_row ? a->rows : a->cols, n_in = by_row ? a->cols : a->rows;
  itile *o;
  PTO_RETURN_IF_ERROR(tile_new(fr, s->loc, op_name(s->op.opc), a->dtype, by_row ? a->rows : 1,
                               by_row ? 1 : a->cols, a->space, &o));
  pto_status st = tile_set_valid(fr, s, o, by_row ? a->vr : 1, by_row ? 1 : a->vc);
  if (!st) st = check_result_type(fr, s, o);
  if (st) {
    tile_drop(o);
    return st;
  }
  for (int64_t i = 0; i < n_out; i++) {
    pto_scalar acc = op == AR_ADD ? conv(mk_int(PTO_DTYPE_I64, 0), acc_dt)
                                  : conv(by_row ? tile_get(a, i, 0) : tile_get(a, 0, i), acc_dt);
    for (int64_t k = op == AR_ADD ? 0 : 1; k < n_in; k++) {
      pto_scalar x = conv(by_row ? tile_get(a, i, k) : tile_get(a, k, i), acc_dt);
      arith(op, acc_dt, acc, x, &acc); /* add/max/min cannot fail */
    }
    if (by_row)
      tile_put(o, i, 0, acc);
    else
      tile_put(o, 0, i, acc);
  }
  *out = rv_tile(o);
  return PTO_OK;
}

/* matmul: acc[M,N] = l[M,K] x r[K,N]; matmul_acc adds onto a copy of acc. */
/* matmul_bias: the accumulator starts as the [1,N] bias in every row, converted to the product's
 * dtype (exact), as matmul_acc onto that. */
static pto_status op_tile_matmul(frame *fr, const pto_ir_stmt *s, int with_acc, rv *out) {
  const itile *acc = NULL, *l, *r, *bias = NULL;
  int k0 = with_acc ? 1 : 0;
  if (with_acc) PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &acc));
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, k0, &l));
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, k0 + 1, &r));
  if (s->op.opc == PTO_OP_TILE_MATMUL_BIAS) PTO_RETURN_IF_ERROR(arg_tile(fr, s, 2, &bias));
  pto_dtype dt = with_acc                       ? acc->dtype
                 : pto_dtype_is_float(l->dtype) ? PTO_DTYPE_F32
                                                : PTO_DTYPE_I32;
  int64_t M = l->rows, K = l->cols, N = r->cols;
  if (r->rows != K || l->dtype != r->dtype || (acc && (acc->rows != M || acc->cols != N)) ||
      (bias && (bias->rows != 1 || bias->cols != N)))
    return fail(fr, s->loc, PTO_STATUS_INVALID_ARGUMENT,
                "%s: shapes do not chain: [%lld,%lld] x [%lld,%lld]", op_name(s->op.opc),
                (long long)M, (long long)K, (long long)r->rows, (long long)N);
  itile *o;
  PTO_RETURN_IF_ERROR(tile_new(fr, s->loc, op_name(s->op.opc), dt, M, N, PTO_SPACE_ACC, &o));
  pto_status st = tile_set_valid(fr, s, o, acc ? acc->vr : M, acc ? acc->vc : N);
  if (!st) st = check_result_type(fr, s, o);
  if (st) {
    tile_drop(o);
    return st;
  }
  /* The operands converted once to the accumulation dtype: exact for every float input to an f32
   * accumulator except f64, and the same conversion the element loop would do. */
  pto_scalar *lv = pto_malloc(sizeof *lv * (size_t)(M * K));
  pto_scalar *rv_ = pto_malloc(sizeof *rv_ * (size_t)(K * N));
  if (!lv || !rv_) {
    free(lv);
    free(rv_);
    tile_drop(o);
    return oom(fr, s->loc, op_name(s->op.opc));
  }
  for (int64_t i = 0; i < M * K; i++)
    lv[i] = conv(tile_get(l, i / K, i % K), dt);
  for (int64_t i = 0; i < K * N; i++)
    rv_[i] = conv(tile_get(r, i / N, i % N), dt);
  if (dt == PTO_DTYPE_F32) {
    /* One fused multiply-add per product (one rounding), in k order. */
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        float sum = acc    ? (float)conv(tile_get(acc, i, j), dt).f
                    : bias ? (float)conv(tile_get(bias, 0, j), dt).f
                           : 0.0f;
        for (int64_t k = 0; k < K; k++)
          sum = fmaf((float)lv[i * K + k].f, (float)rv_[k * N + j].f, sum);
        tile_put(o, i, j, mk_float(dt, (double)sum));
      }
  } else {
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        pto_scalar sum = acc    ? conv(tile_get(acc, i, j), dt)
                         : bias ? conv(tile_get(bias, 0, j), dt)
                                : conv(mk_int(PTO_DTYPE_I64, 0), dt);
        for (int64_t k = 0; k < K; k++) {
          pto_scalar prod;
          arith(AR_MUL, dt, lv[i * K + k], rv_[k * N + j], &prod);
          arith(AR_ADD, dt, sum, prod, &sum);
        }
        tile_put(o, i, j, sum);
      }
  }
  free(lv);
  free(rv_);
  *out = rv_tile(o);
  return PTO_OK;
}

/* ---- ops: second set, structural ---------------------------------------------------------- */

/* A new result tile of the statement: dtype, shape and space given, valid region from the result
 * type (else the whole tile). */
static pto_status layout_result(frame *fr, const pto_ir_stmt *s, pto_dtype dt, int64_t rows,
                                int64_t cols, pto_space space, itile **out) {
  PTO_RETURN_IF_ERROR(tile_new(fr, s->loc, op_name(s->op.opc), dt, rows, cols, space, out));
  pto_status st = tile_set_valid(fr, s, *out, rows, cols);
  if (!st) st = check_result_type(fr, s, *out);
  if (st) {
    tile_drop(*out);
    *out = NULL;
  }
  return st;
}

/* Whether x orders strictly before y ascending: numbers by value (-0 equals +0), every NaN
 * above +inf and equal to the other NaNs. */
static int order_less(pto_dtype dt, pto_scalar x, pto_scalar y) {
  if (pto_dtype_is_float(dt)) {
    if (isnan(x.f)) return 0;
    return isnan(y.f) || x.f < y.f;
  }
  return is_unsigned_int(dt) ? x.u < y.u : x.i < y.i;
}

/* row_argmax/min ([R,1]) and col_argmax/min ([1,C]), i32: the first extreme in index order; a
 * line holding NaN gives its first NaN (numpy's rule). */
static pto_status op_tile_argreduce(frame *fr, const pto_ir_stmt *s, const itile *a, int by_row,
                                    rv *out) {
  int want_max = pto_op_info_get(s->op.opc)->fn == PTO_FN_ARGMAX;
  int64_t n_out = by_row ? a->rows : a->cols, n_in = by_row ? a->cols : a->rows;
  itile *o;
  PTO_RETURN_IF_ERROR(tile_new(fr, s->loc, op_name(s->op.opc), PTO_DTYPE_I32, by_row ? a->rows : 1,
                               by_row ? 1 : a->cols, a->space, &o));
  pto_status st = tile_set_valid(fr, s, o, by_row ? a->vr : 1, by_row ? 1 : a->vc);
  if (!st) st = check_result_type(fr, s, o);
  if (st) {
    tile_drop(o);
    return st;
  }
  int isf = pto_dtype_is_float(a->dtype);
  for (int64_t i = 0; i < n_out; i++) {
    int64_t best = 0;
    pto_scalar bv = by_row ? tile_get(a, i, 0) : tile_get(a, 0, i);
    for (int64_t k = 1; k < n_in && !(isf && isnan(bv.f)); k++) {
      pto_scalar x = by_row ? tile_get(a, i, k) : tile_get(a, k, i);
      int take = (isf && isnan(x.f)) ||
                 (want_max ? order_less(a->dtype, bv, x) : order_less(a->dtype, x, bv));
      if (take) {
        best = k;
        bv = x;
      }
    }
    tile_put(o, by_row ? i : 0, by_row ? 0 : i, mk_int(PTO_DTYPE_I32, (uint64_t)best));
  }
  *out = rv_tile(o);
  return PTO_OK;
}

/* row_expand: v[i,0] in every column; col_expand: v[0,j] in every row. */
static pto_status op_tile_broadcast(frame *fr, const pto_ir_stmt *s, int rows, rv *out) {
  const itile *v;
  int64_t shape[2];
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &v));
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 1), "the shape", 2, shape));
  itile *o;
  PTO_RETURN_IF_ERROR(layout_result(fr, s, v->dtype, shape[0], shape[1], v->space, &o));
  for (int64_t r = 0; r < o->rows; r++)
    for (int64_t c = 0; c < o->cols; c++)
      tile_put(o, r, c, rows ? tile_get(v, r, 0) : tile_get(v, 0, c));
  *out = rv_tile(o);
  return PTO_OK;
}

static pto_status op_tile_transpose(frame *fr, const pto_ir_stmt *s, rv *out) {
  const itile *a;
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &a));
  itile *o;
  PTO_RETURN_IF_ERROR(
      tile_new(fr, s->loc, op_name(s->op.opc), a->dtype, a->cols, a->rows, a->space, &o));
  pto_status st = tile_set_valid(fr, s, o, a->vc, a->vr);
  if (!st) st = check_result_type(fr, s, o);
  if (st) {
    tile_drop(o);
    return st;
  }
  for (int64_t r = 0; r < o->rows; r++)
    for (int64_t c = 0; c < o->cols; c++)
      tile_put(o, r, c, tile_get(a, c, r));
  *out = rv_tile(o);
  return PTO_OK;
}

/* The offsets of a [h,w] sub-tile of a [R,C] tile: outside is a launch error. */
static pto_status sub_offsets(frame *fr, const pto_ir_stmt *s, const pto_ir_arg *a, int64_t R,
                              int64_t C, int64_t h, int64_t w, int64_t offs[2]) {
  PTO_RETURN_IF_ERROR(list_values(fr, s, a, "the offsets", 2, offs));
  const int64_t ext[2] = {R, C}, sub[2] = {h, w};
  for (int k = 0; k < 2; k++)
    if (offs[k] < 0 || offs[k] > ext[k] - sub[k])
      return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                  "%s in @%s: offset %lld of dim %d (%s %lld..%lld) is outside the tile's %lld %s",
                  op_name(s->op.opc), fr->f->name, (long long)offs[k], k, k ? "columns" : "rows",
                  (long long)offs[k], (long long)(offs[k] + sub[k]), (long long)ext[k],
                  k ? "columns" : "rows");
  return PTO_OK;
}

static pto_status op_tile_extract(frame *fr, const pto_ir_stmt *s, rv *out) {
  const itile *a;
  int64_t shape[2], offs[2];
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &a));
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 2), "the shape", 2, shape));
  PTO_RETURN_IF_ERROR(
      sub_offsets(fr, s, pos_arg(s, 1), a->rows, a->cols, shape[0], shape[1], offs));
  itile *o;
  PTO_RETURN_IF_ERROR(layout_result(fr, s, a->dtype, shape[0], shape[1], a->space, &o));
  for (int64_t r = 0; r < o->rows; r++)
    for (int64_t c = 0; c < o->cols; c++)
      tile_put(o, r, c, tile_get(a, offs[0] + r, offs[1] + c));
  *out = rv_tile(o);
  return PTO_OK;
}

static pto_status op_tile_assemble(frame *fr, const pto_ir_stmt *s, rv *out) {
  const itile *d, *x;
  int64_t offs[2];
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &d));
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 1, &x));
  PTO_RETURN_IF_ERROR(sub_offsets(fr, s, pos_arg(s, 2), d->rows, d->cols, x->rows, x->cols, offs));
  itile *o;
  PTO_RETURN_IF_ERROR(new_result_like(fr, s, d, d->dtype, d->space, &o));
  memcpy(o->data, d->data, (size_t)(d->rows * d->cols) * pto_dtype_size(d->dtype));
  for (int64_t r = 0; r < x->rows; r++)
    for (int64_t c = 0; c < x->cols; c++)
      tile_put(o, offs[0] + r, offs[1] + c, tile_get(x, r, c));
  *out = rv_tile(o);
  return PTO_OK;
}

static pto_status op_tile_concat(frame *fr, const pto_ir_stmt *s, rv *out) {
  const itile *a, *b;
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &a));
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 1, &b));
  itile *o;
  PTO_RETURN_IF_ERROR(layout_result(fr, s, a->dtype, a->rows, a->cols + b->cols, a->space, &o));
  for (int64_t r = 0; r < o->rows; r++)
    for (int64_t c = 0; c < o->cols; c++)
      tile_put(o, r, c, c < a->cols ? tile_get(a, r, c) : tile_get(b, r, c - a->cols));
  *out = rv_tile(o);
  return PTO_OK;
}

static pto_status op_tile_reshape(frame *fr, const pto_ir_stmt *s, rv *out) {
  const itile *a;
  int64_t shape[2];
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &a));
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 1), "the shape", 2, shape));
  itile *o;
  PTO_RETURN_IF_ERROR(layout_result(fr, s, a->dtype, shape[0], shape[1], a->space, &o));
  if (o->rows * o->cols != a->rows * a->cols) {
    tile_drop(o);
    return fail(fr, s->loc, PTO_STATUS_INVALID_ARGUMENT, "tile.reshape: element counts differ");
  }
  memcpy(o->data, a->data, (size_t)(a->rows * a->cols) * pto_dtype_size(a->dtype));
  *out = rv_tile(o);
  return PTO_OK;
}

/* The pad value pad=zero|min|max names (absent: zero). */
static pto_status pad_of(frame *fr, const pto_ir_stmt *s, pto_dtype dt, pto_scalar *out) {
  *out = conv(mk_int(PTO_DTYPE_I64, 0), dt);
  const pto_ir_arg *pa = kw_arg(s, "pad");
  if (!pa) return PTO_OK;
  const char *w = pa->kind == PTO_ARG_WORD ? pa->str : NULL;
  if (w && strcmp(w, "min") == 0)
    *out = lowest_of(dt);
  else if (w && strcmp(w, "max") == 0)
    *out = highest_of(dt);
  else if (!w || strcmp(w, "zero") != 0)
    return fail(fr, pa->loc, PTO_STATUS_INVALID_ARGUMENT, "%s: pad= must be zero, min or max",
                op_name(s->op.opc));
  return PTO_OK;
}

static pto_status op_tile_fillpad(frame *fr, const pto_ir_stmt *s, rv *out) {
  const itile *a;
  pto_scalar pad;
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &a));
  PTO_RETURN_IF_ERROR(pad_of(fr, s, a->dtype, &pad));
  itile *o;
  PTO_RETURN_IF_ERROR(layout_result(fr, s, a->dtype, a->rows, a->cols, a->space, &o));
  for (int64_t r = 0; r < o->rows; r++)
    for (int64_t c = 0; c < o->cols; c++)
      tile_put(o, r, c, r < a->vr && c < a->vc ? tile_get(a, r, c) : pad);
  *out = rv_tile(o);
  return PTO_OK;
}

/* A boolean keyword word (false when absent). */
static int kw_true(const pto_ir_stmt *s, const char *kw) {
  const pto_ir_arg *a = kw_arg(s, kw);
  return a && a->kind == PTO_ARG_WORD && strcmp(a->str, "true") == 0;
}

static pto_dtype result_dtype(const pto_ir_stmt *s) {
  const pto_ir_type *ty = result_tile_type(s);
  return ty ? ty->dtype : PTO_DTYPE_I32;
}

/* ci: start + j (descending: start - j), wrapping in the dtype. */
static pto_status op_tile_ci(frame *fr, const pto_ir_stmt *s, rv *out) {
  pto_scalar start;
  int64_t shape[2];
  PTO_RETURN_IF_ERROR(arg_scalar(fr, s, 0, &start));
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 1), "the shape", 2, shape));
  pto_dtype dt = result_dtype(s);
  int desc = kw_true(s, "descending");
  itile *o;
  PTO_RETURN_IF_ERROR(layout_result(fr, s, dt, shape[0], shape[1], PTO_SPACE_VEC, &o));
  uint64_t st = conv(start, dt).u;
  for (int64_t r = 0; r < o->rows; r++)
    for (int64_t c = 0; c < o->cols; c++)
      tile_put(o, r, c, mk_int(dt, desc ? st - (uint64_t)c : st + (uint64_t)c));
  *out = rv_tile(o);
  return PTO_OK;
}

/* tri: 1 where j <= i + diagonal (upper: j >= i + diagonal), else 0. */
static pto_status op_tile_tri(frame *fr, const pto_ir_stmt *s, rv *out) {
  pto_scalar dg;
  int64_t shape[2];
  PTO_RETURN_IF_ERROR(arg_scalar(fr, s, 0, &dg));
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 1), "the shape", 2, shape));
  int64_t d = is_unsigned_int(dg.dtype) && dg.u > (uint64_t)INT64_MAX ? INT64_MAX : dg.i;
  pto_dtype dt = result_dtype(s);
  int upper = kw_true(s, "upper");
  itile *o;
  PTO_RETURN_IF_ERROR(layout_result(fr, s, dt, shape[0], shape[1], PTO_SPACE_VEC, &o));
  for (int64_t r = 0; r < o->rows; r++)
    for (int64_t c = 0; c < o->cols; c++) {
      /* j - i against the diagonal, without overflow for any diagonal */
      int in = upper ? c - r >= d : c - r <= d;
      tile_put(o, r, c, mk_int(PTO_DTYPE_I64, (uint64_t)in));
    }
  *out = rv_tile(o);
  return PTO_OK;
}

static pto_status index_error(frame *fr, const pto_ir_stmt *s, int64_t r, int64_t c, int64_t v,
                              int64_t bound, const char *what) {
  return fail(fr, s->loc, PTO_STATUS_LAUNCH,
              "%s in @%s: index %lld at [%lld,%lld] is outside [0, %lld) (%s)", op_name(s->op.opc),
              fr->f->name, (long long)v, (long long)r, (long long)c, (long long)bound, what);
}

static pto_status op_tile_gather(frame *fr, const pto_ir_stmt *s, rv *out) {
  const itile *src, *idx;
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &src));
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 1, &idx));
  int64_t n = src->rows * src->cols;
  for (int64_t r = 0; r < idx->rows; r++)
    for (int64_t c = 0; c < idx->cols; c++) {
      int64_t k = tile_get(idx, r, c).i;
      if (k < 0 || k >= n) return index_error(fr, s, r, c, k, n, "positions of the source tile");
    }
  itile *o;
  PTO_RETURN_IF_ERROR(layout_result(fr, s, src->dtype, idx->rows, idx->cols, src->space, &o));
  for (int64_t r = 0; r < idx->rows; r++)
    for (int64_t c = 0; c < idx->cols; c++) {
      int64_t k = tile_get(idx, r, c).i;
      tile_put(o, r, c, tile_get(src, k / src->cols, k % src->cols));
    }
  *out = rv_tile(o);
  return PTO_OK;
}

/* The name of positional operand i of s, a value ("?" where it is not one). */
static const char *operand_name(const pto_ir_stmt *s, int i) {
  const pto_ir_arg *a = pos_arg(s, i);
  return a && a->kind == PTO_ARG_EXPR && a->expr && a->expr->kind == PTO_EXPR_VALUE
             ? vname(a->expr->value)
             : "?";
}

/* The rows of gather_rows / scatter_rows: the indices of the first nrows rows within the tensor's
 * rows and the columns [c0, c0 + C) within its columns, checked before any element moves. */
static pto_status rows_check(frame *fr, const pto_ir_stmt *s, const itensor *t, const itile *idx,
                             int64_t nrows, int64_t C, int64_t *c0) {
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 2), "the column offset", 1, c0));
  if (*c0 < 0 || *c0 > t->shape[1] - C)
    return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                "%s in @%s: offset %lld of dim 1 is outside 0..%lld (the rows' %lld columns "
                "must fit in the tensor's %lld)",
                op_name(s->op.opc), fr->f->name, (long long)*c0, (long long)(t->shape[1] - C),
                (long long)C, (long long)t->shape[1]);
  for (int64_t r = 0; r < nrows; r++) {
    int64_t k = tile_get(idx, r, 0).i;
    if (k < 0 || k >= t->shape[0]) { /* as the compiled kernel says it (runtime/sched.c) */
      char range[48];
      if (t->shape[0] > 0)
        snprintf(range, sizeof range, "0 to %lld", (long long)(t->shape[0] - 1));
      else
        snprintf(range, sizeof range, "it has no rows");
      return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                  "%s in @%s: %%%s[%lld,0] = %lld is not a row of %%%s (%s)", op_name(s->op.opc),
                  fr->f->name, operand_name(s, 1), (long long)r, (long long)k,
                  operand_name(s, s->op.opc == PTO_OP_TILE_SCATTER_ROWS ? 3 : 0), range);
    }
  }
  return PTO_OK;
}

static pto_status op_tile_gather_rows(frame *fr, const pto_ir_stmt *s, rv *out) {
  const rv *tv;
  const itile *idx;
  int64_t shape[2], c0;
  PTO_RETURN_IF_ERROR(arg_tensor(fr, s, 0, &tv));
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 1, &idx));
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 3), "the shape", 2, shape));
  const itensor *t = &tv->t;
  PTO_RETURN_IF_ERROR(rows_check(fr, s, t, idx, idx->rows, shape[1], &c0));
  itile *o;
  PTO_RETURN_IF_ERROR(layout_result(fr, s, t->dtype, shape[0], shape[1], PTO_SPACE_VEC, &o));
  for (int64_t r = 0; r < o->rows; r++) {
    int64_t at[2] = {tile_get(idx, r, 0).i, c0};
    for (int64_t c = 0; c < o->cols; c++, at[1]++)
      tile_put(o, r, c, pto_elem_load(t->dtype, tensor_at(t, at), 0));
  }
  *out = rv_tile(o);
  return PTO_OK;
}

static pto_status op_tile_scatter_rows(frame *fr, const pto_ir_stmt *s, rv *out) {
  const rv *tv;
  const itile *tl, *idx;
  int64_t c0;
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &tl));
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 1, &idx));
  PTO_RETURN_IF_ERROR(arg_target(fr, s, 3, "tile.scatter_rows", &tv));
  const itensor *t = &tv->t;
  /* Like a store, only the valid region: rows past it are padding, not data, and their
   * indices are neither checked nor used. */
  PTO_RETURN_IF_ERROR(rows_check(fr, s, t, idx, tl->vr, tl->cols, &c0));
  for (int64_t r = 0; r < tl->vr; r++) { /* in row order: a later row wins */
    int64_t at[2] = {tile_get(idx, r, 0).i, c0};
    for (int64_t c = 0; c < tl->vc; c++, at[1]++)
      pto_elem_store(t->dtype, tensor_at(t, at), 0, conv(tile_get(tl, r, c), t->dtype));
  }
  *out = rv_copy(tv); /* the result aliases the target */
  return PTO_OK;
}

/* sort_idx: per row, the columns in sorted order (insertion sort: stable). */
static pto_status op_tile_sort_idx(frame *fr, const pto_ir_stmt *s, rv *out) {
  const itile *a;
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &a));
  const pto_ir_arg *oa = kw_arg(s, "order");
  int asc = oa && oa->kind == PTO_ARG_WORD && strcmp(oa->str, "asc") == 0;
  itile *o;
  PTO_RETURN_IF_ERROR(layout_result(fr, s, PTO_DTYPE_I32, a->rows, a->cols, a->space, &o));
  int64_t *ix = pto_malloc(sizeof *ix * (size_t)a->cols);
  if (!ix) {
    tile_drop(o);
    return oom(fr, s->loc, op_name(s->op.opc));
  }
  for (int64_t r = 0; r < a->rows; r++) {
    for (int64_t c = 0; c < a->cols; c++) {
      pto_scalar x = tile_get(a, r, c);
      int64_t k = c;
      for (; k > 0; k--) {
        pto_scalar y = tile_get(a, r, ix[k - 1]);
        if (!(asc ? order_less(a->dtype, x, y) : order_less(a->dtype, y, x))) break;
        ix[k] = ix[k - 1];
      }
      ix[k] = c;
    }
    for (int64_t c = 0; c < a->cols; c++)
      tile_put(o, r, c, mk_int(PTO_DTYPE_I32, (uint64_t)ix[c]));
  }
  free(ix);
  *out = rv_tile(o);
  return PTO_OK;
}

static pto_status op_tile_layout(frame *fr, const pto_ir_stmt *s, rv *out) {
  switch (s->op.opc) {
  case PTO_OP_TILE_ROW_EXPAND: return op_tile_broadcast(fr, s, 1, out);
  case PTO_OP_TILE_COL_EXPAND: return op_tile_broadcast(fr, s, 0, out);
  case PTO_OP_TILE_TRANSPOSE: return op_tile_transpose(fr, s, out);
  case PTO_OP_TILE_EXTRACT: return op_tile_extract(fr, s, out);
  case PTO_OP_TILE_ASSEMBLE: return op_tile_assemble(fr, s, out);
  case PTO_OP_TILE_CONCAT: return op_tile_concat(fr, s, out);
  case PTO_OP_TILE_RESHAPE: return op_tile_reshape(fr, s, out);
  case PTO_OP_TILE_FILLPAD: return op_tile_fillpad(fr, s, out);
  case PTO_OP_TILE_CI: return op_tile_ci(fr, s, out);
  case PTO_OP_TILE_TRI: return op_tile_tri(fr, s, out);
  case PTO_OP_TILE_GATHER: return op_tile_gather(fr, s, out);
  case PTO_OP_TILE_GATHER_ROWS: return op_tile_gather_rows(fr, s, out);
  case PTO_OP_TILE_SCATTER_ROWS: return op_tile_scatter_rows(fr, s, out);
  case PTO_OP_TILE_SORT_IDX: return op_tile_sort_idx(fr, s, out);
  default: return fail(fr, s->loc, PTO_STATUS_INTERNAL, "unknown opcode %d", (int)s->op.opc);
  }
}

/* ---- ops: tensors --------------------------------------------------------------------- */

static pto_status op_tensor_create(frame *fr, const pto_ir_stmt *s, rv *out) {
  const pto_ir_arg *la = pos_arg(s, 0);
  if (!la || la->kind != PTO_ARG_LIST || la->list.n < 1 || la->list.n > PTO_MAX_RANK)
    return missing_arg(fr, s, 0, "a shape list of 1 to 5 extents");
  int rank = la->list.n;
  int64_t shape[PTO_MAX_RANK];
  pto_dtype dt;
  PTO_RETURN_IF_ERROR(list_values(fr, s, la, "the shape", rank, shape));
  PTO_RETURN_IF_ERROR(arg_dtype(fr, s, 1, &dt));
  int64_t n = 1;
  for (int d = 0; d < rank; d++) {
    if (shape[d] < 0 || (shape[d] > 0 && n > (INT64_C(1) << 40) / shape[d]))
      return fail(fr, s->loc, PTO_STATUS_LAUNCH, "%s: extent %lld of dim %d is not valid",
                  s->op.opc == PTO_OP_DIST_ALLOC_WINDOW ? "dist.alloc_window" : "tensor.create",
                  (long long)shape[d], d);
    n *= shape[d];
  }
  ibuf *b = pto_calloc(1, sizeof *b);
  void *data = b ? pto_calloc((size_t)(n ? n : 1), pto_dtype_size(dt)) : NULL;
  if (!data) {
    free(b);
    return oom(fr, s->loc,
               s->op.opc == PTO_OP_DIST_ALLOC_WINDOW ? "dist.alloc_window" : "tensor.create");
  }
  b->refs = 1;
  b->data = data;
  rv v = {.kind = RV_TENSOR};
  v.t.owner = b;
  v.t.data = data;
  v.t.dtype = dt;
  v.t.rank = rank;
  v.t.writable = 1;
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; d--) {
    v.t.shape[d] = shape[d];
    v.t.strides[d] = stride;
    stride *= shape[d];
  }
  *out = v;
  return PTO_OK;
}

static pto_status op_tensor_slice(frame *fr, const pto_ir_stmt *s, rv *out) {
  const rv *tv;
  PTO_RETURN_IF_ERROR(arg_tensor(fr, s, 0, &tv));
  const itensor *t = &tv->t;
  int64_t offs[PTO_MAX_RANK], shape[PTO_MAX_RANK];
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 1), "the offsets", t->rank, offs));
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 2), "the shape", t->rank, shape));
  for (int d = 0; d < t->rank; d++) {
    if (offs[d] < 0 || offs[d] >= t->shape[d])
      return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                  "tensor.slice: offset %lld of dim %d is outside the extent %lld",
                  (long long)offs[d], d, (long long)t->shape[d]);
    if (shape[d] < 0)
      return fail(fr, s->loc, PTO_STATUS_LAUNCH, "tensor.slice: extent %lld of dim %d is negative",
                  (long long)shape[d], d);
  }
  rv v = rv_copy(tv);
  v.t.data = tensor_at(t, offs);
  for (int d = 0; d < t->rank; d++) /* clamped at the edge: only the extent shrinks */
    v.t.shape[d] = shape[d] < t->shape[d] - offs[d] ? shape[d] : t->shape[d] - offs[d];
  *out = v;
  return PTO_OK;
}

static pto_status op_tensor_dim(frame *fr, const pto_ir_stmt *s, rv *out) {
  const rv *tv;
  PTO_RETURN_IF_ERROR(arg_tensor(fr, s, 0, &tv));
  pto_scalar ax;
  PTO_RETURN_IF_ERROR(arg_scalar(fr, s, 1, &ax));
  if (pto_dtype_is_float(ax.dtype) || ax.i < 0 || ax.i >= tv->t.rank)
    return fail(fr, s->loc, PTO_STATUS_INVALID_ARGUMENT,
                "tensor.dim: axis %lld is outside the rank %d", (long long)ax.i, tv->t.rank);
  *out = rv_scalar(mk_index(tv->t.shape[ax.i]));
  return PTO_OK;
}

static pto_status op_tensor_read(frame *fr, const pto_ir_stmt *s, rv *out) {
  const rv *tv;
  PTO_RETURN_IF_ERROR(arg_tensor(fr, s, 0, &tv));
  const itensor *t = &tv->t;
  int64_t idx[PTO_MAX_RANK];
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 1), "the index", t->rank, idx));
  for (int d = 0; d < t->rank; d++)
    if (idx[d] < 0 || idx[d] >= t->shape[d])
      return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                  "tensor.read: index %lld of dim %d is outside the extent %lld", (long long)idx[d],
                  d, (long long)t->shape[d]);
  *out = rv_scalar(pto_elem_load(t->dtype, tensor_at(t, idx), 0));
  return PTO_OK;
}

/* ---- tensor.reshape, tensor.select ------------------------------------------------------ */

static int64_t view_numel(const itensor *t) {
  int64_t n = 1;
  for (int d = 0; d < t->rank; d++)
    n *= t->shape[d];
  return n;
}

/* Row-major without gaps (dims of extent 1 may have any stride). */
static int view_contiguous(const itensor *t) {
  int64_t want = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    if (t->shape[d] != 1 && t->strides[d] != want) return 0;
    want *= t->shape[d];
  }
  return 1;
}

static pto_status op_tensor_reshape(frame *fr, const pto_ir_stmt *s, rv *out) {
  const rv *tv;
  PTO_RETURN_IF_ERROR(arg_tensor(fr, s, 0, &tv));
  const pto_ir_arg *la = pos_arg(s, 1);
  if (!la || la->kind != PTO_ARG_LIST || la->list.n < 1 || la->list.n > PTO_MAX_RANK)
    return missing_arg(fr, s, 1, "a shape list of 1 to 5 extents");
  int rank = la->list.n;
  int64_t shape[PTO_MAX_RANK], n = 1;
  PTO_RETURN_IF_ERROR(list_values(fr, s, la, "the shape", rank, shape));
  const char *name = vname(pos_arg(s, 0)->expr->value);
  for (int d = 0; d < rank; d++) {
    if (shape[d] < 0 || (shape[d] > 0 && n > (INT64_C(1) << 40) / shape[d]))
      return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                  "tensor.reshape: extent %lld of dim %d is not valid", (long long)shape[d], d);
    n *= shape[d];
  }
  if (n != view_numel(&tv->t))
    return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                "tensor.reshape: %%%s has %lld elements, the shape %lld", name,
                (long long)view_numel(&tv->t), (long long)n);
  if (!view_contiguous(&tv->t))
    return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                "tensor.reshape: %%%s is not contiguous (a view narrower than its buffer in an "
                "inner dim)",
                name);
  rv v = rv_copy(tv);
  v.t.rank = rank;
  int64_t stride = 1;
  for (int d = PTO_MAX_RANK - 1; d >= 0; d--) {
    v.t.shape[d] = d < rank ? shape[d] : 0;
    v.t.strides[d] = d < rank ? stride : 0;
    if (d < rank) stride *= shape[d];
  }
  *out = v;
  return PTO_OK;
}

static pto_status op_tensor_select(frame *fr, const pto_ir_stmt *s, rv *out) {
  const rv *tv;
  PTO_RETURN_IF_ERROR(arg_tensor(fr, s, 0, &tv));
  int64_t i;
  const pto_ir_arg *ia = pos_arg(s, 1);
  if (!ia || ia->kind != PTO_ARG_EXPR) return missing_arg(fr, s, 1, "an index");
  PTO_RETURN_IF_ERROR(eval_index(fr, ia->expr, &i));
  const itensor *t = &tv->t;
  if (t->rank < 2)
    return fail(fr, s->loc, PTO_STATUS_LAUNCH, "tensor.select: the tensor has rank %d, not >= 2",
                t->rank);
  if (i < 0 || i >= t->shape[0])
    return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                "tensor.select: index %lld is outside the extent %lld of dim 0", (long long)i,
                (long long)t->shape[0]);
  rv v = rv_copy(tv);
  v.t.data = t->data + i * t->strides[0] * (int64_t)pto_dtype_size(t->dtype);
  v.t.rank = t->rank - 1;
  for (int d = 0; d < PTO_MAX_RANK; d++) {
    v.t.shape[d] = d + 1 < t->rank ? t->shape[d + 1] : 0;
    v.t.strides[d] = d + 1 < t->rank ? t->strides[d + 1] : 0;
  }
  *out = v;
  return PTO_OK;
}

/* ---- distributed (L3): ranks, windows, kernel-side dist ops ------------------------------ *
 *
 * pto_ir_interp_run_host runs the host function on the calling thread and each rank on a thread
 * of its own. A `call ... device=d` queues the orch call on rank d and returns: calls to one rank
 * run in issue order, calls to different ranks concurrently, and a call also waits for earlier
 * calls on other ranks whose tensors overlap its own with a write on either side (the order the
 * data requires). The host waits for every call at its end.
 *
 * One mutex and one condition variable guard everything shared between the threads: the job
 * queue, signal elements, remote loads and stores, and the collectives' rendezvous. That is slow
 * and obviously correct, which is what a reference model is for; it also gives every correctly
 * synchronised program the happens-before edges a race detector wants.
 *
 * The collectives are computed directly, not through notify/wait: every rank arrives at a
 * rendezvous keyed by its signal window; the last to arrive computes the result into every
 * rank's copy (the others are blocked in the same collective, so nobody else touches the window)
 * and releases them. They never write the signal window, which is therefore left as it was: zero
 * between collectives, as docs/language.md requires. */

typedef struct ijob ijob;

typedef struct rdv {
  struct rdv *next;
  const iwin *sw; /* key: the signal window and the byte offset of the view */
  int64_t soff;
  int arrived;
  unsigned long gen;
  char *here; /* [nranks]: which ranks have arrived in this generation */
  /* the first arrival's request, which every other must match */
  int kind, op, mode, first;
  int64_t root;
  const iwin *dw;
  int64_t doff;
  int drank;
  int64_t dshape[PTO_MAX_RANK], dstrides[PTO_MAX_RANK];
} rdv;

/* A thread's progress count, padded so that no two share a cache line (each is written by one
 * thread at every statement it completes). */
typedef struct iprogress {
  _Atomic uint64_t n;
  char pad[56];
} iprogress;

typedef struct idist {
  const pto_ir_program *p;
  int nranks;
  int64_t timeout_ms;
  /* [nranks + 1]: the statements each rank's thread (the host's last) has completed and the
   * waits it has entered. A wait's deadline is one of the others' progress: see peers_progress. */
  iprogress *progress;
  pthread_mutex_t mu;
  pthread_cond_t cv; /* any change: a job queued or finished, a signal, an arrival, an abort */
  int aborted;       /* a call or the host failed: everything still waiting stops */
  int closing;       /* the host function returned: ranks exit once their queue is empty */
  pto_status err;    /* the first failure */
  rdv *rdvs;
  ijob **jobs;
  int njobs, capjobs;
  int nwins;
} idist;

enum { COLL_BARRIER = -1 }; /* the others are PTO_OP_DIST_* opcodes */

static void dist_fail_locked(idist *D, pto_status st) {
  if (!D->err)
    D->err = st;
  else
    pto_status_free(st);
  D->aborted = 1;
  pthread_cond_broadcast(&D->cv);
}

static void deadline_in(struct timespec *ts, int64_t ms) {
  clock_gettime(CLOCK_MONOTONIC, ts);
  ts->tv_sec += (time_t)(ms / 1000);
  ts->tv_nsec += (long)(ms % 1000) * 1000000L;
  if (ts->tv_nsec >= 1000000000L) {
    ts->tv_sec++;
    ts->tv_nsec -= 1000000000L;
  }
}

static int past(const struct timespec *dl) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec > dl->tv_sec || (now.tv_sec == dl->tv_sec && now.tv_nsec >= dl->tv_nsec);
}

/* One more unit of progress of this thread (its own count: a relaxed load and store, no locked
 * add), for the deadlines of the other ranks' waits (peers_progress). */
static void progress_bump(_Atomic uint64_t *c) {
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

/* The progress of every thread but rank me's (the other ranks' and the host's), as one count
 * that grows with it. A wait's deadline (timeout_ms) is one of progress, as the runtime's
 * shared-memory waits' (runtime/dist_shm.c wait_slow): past it, the wait fails only if this count
 * has not changed since the deadline was set, else the deadline is renewed. A peer that reaches
 * its notify late because it had work to do first (its statements, its calls, the host's work
 * before it queues the peer's call), on a loaded host or under a sanitizer, is not a stuck
 * program; a deadlock (the peers wait too) or a peer that will never notify (its call ended)
 * still fails, within one to two timeout_ms. */
static uint64_t peers_progress(const idist *D, int me) {
  uint64_t n = 0;
  for (int q = 0; q <= D->nranks; q++)
    if (q != me) n += atomic_load_explicit(&D->progress[q].n, memory_order_relaxed);
  return n;
}

/* Past the deadline dl of rank me's wait: 1 to fail it (no other thread progressed since
 * *seen), else 0 with the deadline renewed from now. */
static int stalled(idist *D, int me, uint64_t *seen, struct timespec *dl) {
  uint64_t now = peers_progress(D, me);
  if (now == *seen) return 1;
  *seen = now;
  deadline_in(dl, D->timeout_ms);
  return 0;
}

static pto_status need_rank(frame *fr, const pto_ir_stmt *s) {
  if (fr->in->dist && fr->in->rank >= 0) return PTO_OK;
  return fail(fr, s->loc, PTO_STATUS_FAILED_PRECONDITION,
              "%s needs a rank: run the program's host function with pto_ir_interp_run_host",
              op_name(s->op.opc));
}

/* Positional argument i as a view of a comm window on this rank. */
static pto_status arg_window(frame *fr, const pto_ir_stmt *s, int i, const rv **out) {
  PTO_RETURN_IF_ERROR(arg_tensor(fr, s, i, out));
  const itensor *t = &(*out)->t;
  const char *name = vname(pos_arg(s, i)->expr->value);
  if (!t->win)
    return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                "%s on rank %d: %%%s is not a comm window (pass dist.window(..) from the host)",
                op_name(s->op.opc), fr->in->rank, name);
  const iwin *w = t->win;
  int r = fr->in->rank;
  if (r >= w->ncopies || t->data < w->copy[r] || t->data > w->copy[r] + w->bytes)
    return fail(fr, s->loc, PTO_STATUS_INTERNAL, "%s on rank %d: %%%s is not this rank's slice",
                op_name(s->op.opc), r, name);
  return PTO_OK;
}

static char *peer_addr(const itensor *t, int me, int peer, const char *p) {
  return t->win->copy[peer] + (p - t->win->copy[me]);
}

static pto_status peer_arg(frame *fr, const pto_ir_stmt *s, int i, int *out) {
  pto_scalar v;
  PTO_RETURN_IF_ERROR(arg_scalar(fr, s, i, &v));
  int n = fr->in->dist->nranks;
  if (pto_dtype_is_float(v.dtype) || v.i < 0 || v.i >= n)
    return fail(fr, s->loc, PTO_STATUS_LAUNCH, "%s on rank %d: peer %lld is outside 0..%d",
                op_name(s->op.opc), fr->in->rank, (long long)v.i, n - 1);
  *out = (int)v.i;
  return PTO_OK;
}

/* "[i, j]": the index in the window of the element at byte offset off of a copy. */
static void win_index_text(const iwin *w, int64_t off, char *buf, size_t n) {
  int64_t e = off / (int64_t)pto_dtype_size(w->dtype), idx[PTO_MAX_RANK];
  for (int d = w->rank - 1; d >= 0; d--) {
    idx[d] = w->shape[d] ? e % w->shape[d] : 0;
    e = w->shape[d] ? e / w->shape[d] : 0;
  }
  size_t o = 0;
  o += (size_t)snprintf(buf + o, n - o, "[");
  for (int d = 0; d < w->rank && o < n; d++)
    o += (size_t)snprintf(buf + o, n - o, "%s%lld", d ? ", " : "", (long long)idx[d]);
  if (o < n) snprintf(buf + o, n - o, "]");
}

/* The element of the signal view at the offsets list argument i (checked in range). */
static pto_status sig_elem(frame *fr, const pto_ir_stmt *s, const itensor *t, int i, char **out) {
  int64_t offs[PTO_MAX_RANK];
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, i), "the offsets", t->rank, offs));
  for (int d = 0; d < t->rank; d++)
    if (offs[d] < 0 || offs[d] >= t->shape[d])
      return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                  "%s on rank %d: offset %lld of dim %d is outside the extent %lld of window "
                  "%%%s (%%%s in @%s)",
                  op_name(s->op.opc), fr->in->rank, (long long)offs[d], d, (long long)t->shape[d],
                  t->win ? t->win->name : "?", vname(pos_arg(s, 0)->expr->value), fr->f->name);
  if (t->dtype != PTO_DTYPE_I32)
    return fail(fr, s->loc, PTO_STATUS_LAUNCH, "%s: signal windows are i32, not %s",
                op_name(s->op.opc), pto_dtype_name(t->dtype));
  *out = tensor_at(t, offs);
  return PTO_OK;
}

static int32_t load_i32(const char *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}

static pto_status op_dist_rank(frame *fr, const pto_ir_stmt *s, rv *out) {
  PTO_RETURN_IF_ERROR(need_rank(fr, s));
  switch (s->op.opc) {
  case PTO_OP_DIST_COMM_CTX: *out = rv_scalar(mk_int(PTO_DTYPE_U64, 1)); break;
  case PTO_OP_DIST_RANK: *out = rv_scalar(mk_index(fr->in->rank)); break;
  default: *out = rv_scalar(mk_index(fr->in->dist->nranks)); break;
  }
  return PTO_OK;
}

static pto_status op_dist_notify(frame *fr, const pto_ir_stmt *s, rv *out) {
  PTO_RETURN_IF_ERROR(need_rank(fr, s));
  idist *D = fr->in->dist;
  const rv *sv;
  int peer;
  char *e;
  pto_scalar val;
  PTO_RETURN_IF_ERROR(arg_window(fr, s, 0, &sv));
  PTO_RETURN_IF_ERROR(peer_arg(fr, s, 1, &peer));
  PTO_RETURN_IF_ERROR(sig_elem(fr, s, &sv->t, 2, &e));
  PTO_RETURN_IF_ERROR(arg_scalar(fr, s, 3, &val));
  const pto_ir_arg *op = kw_arg(s, "op");
  int add = op && op->kind == PTO_ARG_WORD && strcmp(op->str, "atomic_add") == 0;
  char *pe = peer_addr(&sv->t, fr->in->rank, peer, e);
  pthread_mutex_lock(&D->mu);
  uint32_t v = add ? (uint32_t)load_i32(pe) + (uint32_t)val.i : (uint32_t)val.i;
  memcpy(pe, &v, 4);
  pthread_cond_broadcast(&D->cv);
  pthread_mutex_unlock(&D->mu);
  *out = rv_copy(sv); /* the result aliases the signal window */
  return PTO_OK;
}

static pto_status op_dist_wait(frame *fr, const pto_ir_stmt *s) {
  PTO_RETURN_IF_ERROR(need_rank(fr, s));
  idist *D = fr->in->dist;
  const rv *sv;
  char *e;
  pto_scalar val;
  PTO_RETURN_IF_ERROR(arg_window(fr, s, 0, &sv));
  PTO_RETURN_IF_ERROR(sig_elem(fr, s, &sv->t, 1, &e));
  PTO_RETURN_IF_ERROR(arg_scalar(fr, s, 2, &val));
  const pto_ir_arg *cmp = kw_arg(s, "cmp");
  int ge = cmp && cmp->kind == PTO_ARG_WORD && strcmp(cmp->str, "ge") == 0;
  int32_t want = (int32_t)val.i, cur;
  struct timespec dl;
  progress_bump(fr->in->progress); /* a wait entered */
  uint64_t seen = peers_progress(D, fr->in->rank);
  deadline_in(&dl, D->timeout_ms);
  int timed_out = 0, aborted = 0;
  pthread_mutex_lock(&D->mu);
  for (;;) {
    cur = load_i32(e);
    if (ge ? cur >= want : cur == want) break;
    if (D->aborted) {
      aborted = 1;
      break;
    }
    if (past(&dl) && stalled(D, fr->in->rank, &seen, &dl)) {
      timed_out = 1;
      break;
    }
    pthread_cond_timedwait(&D->cv, &D->mu, &dl);
  }
  pthread_mutex_unlock(&D->mu);
  if (!timed_out && !aborted) return PTO_OK;
  const iwin *w = sv->t.win;
  char idx[96];
  win_index_text(w, e - w->copy[fr->in->rank], idx, sizeof idx);
  const char *kname = vname(pos_arg(s, 0)->expr->value);
  if (aborted)
    return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                "dist.wait on rank %d: stopped because another call failed (window %%%s at %s)",
                fr->in->rank, w->name, idx);
  return fail(fr, s->loc, PTO_STATUS_LAUNCH,
              "dist.wait on rank %d timed out after %lld ms: window %%%s (%%%s in @%s) at offsets "
              "%s: expected %s %d, current value %d",
              fr->in->rank, (long long)D->timeout_ms, w->name, kname, fr->f->name, idx,
              ge ? ">=" : "==", want, cur);
}

static pto_status op_dist_remote_load(frame *fr, const pto_ir_stmt *s, rv *out) {
  PTO_RETURN_IF_ERROR(need_rank(fr, s));
  idist *D = fr->in->dist;
  const rv *dv;
  int peer;
  PTO_RETURN_IF_ERROR(arg_window(fr, s, 0, &dv));
  PTO_RETURN_IF_ERROR(peer_arg(fr, s, 1, &peer));
  itensor t = dv->t;
  t.data = peer_addr(&dv->t, fr->in->rank, peer, dv->t.data);
  int64_t offs[PTO_MAX_RANK], shape[2];
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 2), "the offsets", t.rank, offs));
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 3), "the shape", 2, shape));
  tile_window w;
  PTO_RETURN_IF_ERROR(window_of(fr, s, &t, offs, &w));
  itile *tl;
  PTO_RETURN_IF_ERROR(
      tile_new(fr, s->loc, "dist.remote_load", t.dtype, shape[0], shape[1], PTO_SPACE_VEC, &tl));
  pto_status st = tile_set_valid(fr, s, tl, shape[0], shape[1]);
  if (!st) st = check_result_type(fr, s, tl);
  if (st) {
    tile_drop(tl);
    return st;
  }
  pto_scalar zero = conv(mk_int(PTO_DTYPE_I64, 0), t.dtype);
  pthread_mutex_lock(&D->mu);
  for (int64_t r = 0; r < tl->rows; r++)
    for (int64_t c = 0; c < tl->cols; c++) {
      int inside = r < w.rext && c < w.cext;
      tile_put(tl, r, c, inside ? pto_elem_load(t.dtype, window_at(&t, &w, r, c), 0) : zero);
    }
  pthread_mutex_unlock(&D->mu);
  *out = rv_tile(tl);
  return PTO_OK;
}

static pto_status op_dist_remote_store(frame *fr, const pto_ir_stmt *s, rv *out) {
  PTO_RETURN_IF_ERROR(need_rank(fr, s));
  idist *D = fr->in->dist;
  const itile *tl;
  const rv *dv;
  int peer;
  PTO_RETURN_IF_ERROR(arg_tile(fr, s, 0, &tl));
  PTO_RETURN_IF_ERROR(arg_window(fr, s, 1, &dv));
  PTO_RETURN_IF_ERROR(peer_arg(fr, s, 2, &peer));
  if (!dv->t.writable)
    return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                "dist.remote_store: %%%s is read-only (it is reached through an 'in' parameter)",
                vname(pos_arg(s, 1)->expr->value));
  itensor t = dv->t;
  t.data = peer_addr(&dv->t, fr->in->rank, peer, dv->t.data);
  int64_t offs[PTO_MAX_RANK];
  PTO_RETURN_IF_ERROR(list_values(fr, s, pos_arg(s, 3), "the offsets", t.rank, offs));
  tile_window w;
  PTO_RETURN_IF_ERROR(window_of(fr, s, &t, offs, &w));
  int64_t nr = tl->vr < w.rext ? tl->vr : w.rext;
  int64_t nc = tl->vc < w.cext ? tl->vc : w.cext;
  pthread_mutex_lock(&D->mu);
  for (int64_t r = 0; r < nr; r++)
    for (int64_t c = 0; c < nc; c++)
      pto_elem_store(t.dtype, window_at(&t, &w, r, c), 0, conv(tile_get(tl, r, c), t.dtype));
  pthread_mutex_unlock(&D->mu);
  *out = rv_copy(dv); /* the result aliases the window */
  return PTO_OK;
}

/* Advances a row-major multi-index over shape; returns 0 after the last one. */
static int next_index(int rank, const int64_t *shape, int64_t *idx) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++idx[d] < shape[d]) return 1;
    idx[d] = 0;
  }
  return 0;
}

static arith_op red_op(int op) {
  static const arith_op k[] = {AR_ADD, AR_MAX, AR_MIN, AR_MUL};
  return op >= 0 && op < 4 ? k[op] : AR_ADD;
}

/* The reduction over ranks 0..n-1, in rank order, in the accumulation dtype (f32 for
 * f16/bf16/f32), rounded once to the window's dtype. */
static pto_scalar reduce_ranks(const itensor *v, int n, const int64_t *idx, arith_op op) {
  pto_dtype dt = v[0].dtype, acc = accum_dtype(dt);
  pto_scalar a = conv(pto_elem_load(dt, tensor_at(&v[0], idx), 0), acc);
  for (int q = 1; q < n; q++) {
    pto_scalar b = conv(pto_elem_load(dt, tensor_at(&v[q], idx), 0), acc);
    arith(op, acc, a, b, &a);
  }
  return conv(a, dt);
}

/* Runs the collective of rendezvous r over views v[0..n-1] (rank q's window view in v[q]). */
static void collective_compute(const rdv *r, itensor *v, int n) {
  const itensor *t = &v[0];
  if (view_numel(t) == 0) return;
  int64_t idx[PTO_MAX_RANK] = {0};
  size_t es = pto_dtype_size(t->dtype);
  switch (r->kind) {
  case PTO_OP_DIST_ALLREDUCE:
    do {
      pto_scalar x = reduce_ranks(v, n, idx, red_op(r->op));
      for (int q = 0; q < n; q++)
        pto_elem_store(t->dtype, tensor_at(&v[q], idx), 0, x);
    } while (next_index(t->rank, t->shape, idx));
    break;
  case PTO_OP_DIST_BROADCAST:
    do {
      const char *src = tensor_at(&v[r->root], idx);
      for (int q = 0; q < n; q++)
        if (q != r->root) memmove(tensor_at(&v[q], idx), src, es);
    } while (next_index(t->rank, t->shape, idx));
    break;
  case PTO_OP_DIST_ALLGATHER:
  case PTO_OP_DIST_REDUCE_SCATTER: {
    int64_t blk = t->shape[0] / n;
    do {
      int owner = (int)(idx[0] / blk);
      if (r->kind == PTO_OP_DIST_ALLGATHER) {
        const char *src = tensor_at(&v[owner], idx);
        for (int q = 0; q < n; q++)
          if (q != owner) memmove(tensor_at(&v[q], idx), src, es);
      } else {
        pto_scalar x = reduce_ranks(v, n, idx, red_op(r->op));
        pto_elem_store(t->dtype, tensor_at(&v[owner], idx), 0, x);
      }
    } while (next_index(t->rank, t->shape, idx));
    break;
  }
  default: break;
  }
}

static const char *coll_name(int kind) {
  return kind == COLL_BARRIER ? "dist.barrier" : op_name((pto_opcode)kind);
}

/* dist.barrier and the collectives: every rank arrives with the same request at the rendezvous
 * of its signal window; the last one computes and releases the others. */
static pto_status op_dist_collective(frame *fr, const pto_ir_stmt *s, rv *out) {
  PTO_RETURN_IF_ERROR(need_rank(fr, s));
  idist *D = fr->in->dist;
  int me = fr->in->rank, n = D->nranks;
  int barrier = s->op.opc == PTO_OP_DIST_BARRIER;
  int kind = barrier ? COLL_BARRIER : (int)s->op.opc;
  const char *what = coll_name(kind);
  const rv *sv, *dv = NULL;
  PTO_RETURN_IF_ERROR(arg_window(fr, s, barrier ? 0 : 1, &sv));
  const itensor *sig = &sv->t;
  const char *sname = vname(pos_arg(s, barrier ? 0 : 1)->expr->value);
  /* [1, S] or PyPTO's [S, 1]: S elements in a row either way, as compiled runs count them. */
  if (sig->dtype != PTO_DTYPE_I32 || sig->rank != 2 || (sig->shape[0] != 1 && sig->shape[1] != 1) ||
      sig->shape[0] * sig->shape[1] < n)
    return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                "%s on rank %d: the signal window %%%s must be i32 [1, S] or [S, 1] with S >= %d "
                "ranks, got %s of rank %d, [%lld, %lld]",
                what, me, sname, n, pto_dtype_name(sig->dtype), sig->rank, (long long)sig->shape[0],
                (long long)(sig->rank > 1 ? sig->shape[1] : 0));
  int op = 0, mode = 0;
  int64_t root = 0;
  if (!barrier) {
    PTO_RETURN_IF_ERROR(arg_window(fr, s, 0, &dv));
    if (dv->t.win == sig->win)
      return fail(fr, s->loc, PTO_STATUS_LAUNCH, "%s: the signal window is the data window", what);
    const pto_ir_arg *a = kw_arg(s, "op");
    if (a && a->kind == PTO_ARG_WORD) {
      static const char *const ops[] = {"sum", "max", "min", "prod"};
      for (int k = 0; k < 4; k++)
        if (strcmp(a->str, ops[k]) == 0) op = k;
    }
    a = kw_arg(s, "mode");
    mode = a && a->kind == PTO_ARG_WORD && strcmp(a->str, "ring") == 0;
    if (kind == PTO_OP_DIST_BROADCAST) {
      pto_scalar rt;
      PTO_RETURN_IF_ERROR(arg_scalar(fr, s, 2, &rt));
      root = rt.i;
      if (pto_dtype_is_float(rt.dtype) || root < 0 || root >= n)
        return fail(fr, s->loc, PTO_STATUS_LAUNCH, "%s on rank %d: root %lld is outside 0..%d",
                    what, me, (long long)root, n - 1);
    }
    if (kind == PTO_OP_DIST_ALLGATHER || kind == PTO_OP_DIST_REDUCE_SCATTER) {
      if (dv->t.rank != 2 || dv->t.shape[0] % n != 0)
        return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                    "%s on rank %d: the window must be [N, C] with N divisible by the %d ranks, "
                    "got rank %d, N = %lld",
                    what, me, n, dv->t.rank, (long long)dv->t.shape[0]);
    }
  }
  const iwin *sw = sig->win;
  int64_t soff = sig->data - sw->copy[me];
  const iwin *dw = dv ? dv->t.win : NULL;
  int64_t doff = dv ? dv->t.data - dw->copy[me] : 0;
  struct timespec dl;
  progress_bump(fr->in->progress); /* a wait entered */
  uint64_t seen = peers_progress(D, me);
  deadline_in(&dl, D->timeout_ms);
  pto_status st = PTO_OK;
  pthread_mutex_lock(&D->mu);
  rdv *r = D->rdvs;
  while (r && !(r->sw == sw && r->soff == soff))
    r = r->next;
  if (!r) {
    r = pto_calloc(1, sizeof *r);
    char *here = r ? pto_calloc((size_t)n, 1) : NULL;
    if (!here) {
      free(r);
      pthread_mutex_unlock(&D->mu);
      return oom(fr, s->loc, what);
    }
    r->here = here;
    r->sw = sw;
    r->soff = soff;
    r->next = D->rdvs;
    D->rdvs = r;
  }
  if (r->arrived == 0) {
    r->kind = kind, r->op = op, r->mode = mode, r->root = root, r->first = me;
    r->dw = dw, r->doff = doff;
    r->drank = dv ? dv->t.rank : 0;
    for (int d = 0; d < PTO_MAX_RANK; d++) {
      r->dshape[d] = dv && d < dv->t.rank ? dv->t.shape[d] : 0;
      r->dstrides[d] = dv && d < dv->t.rank ? dv->t.strides[d] : 0;
    }
  } else {
    int same = r->kind == kind && r->op == op && r->mode == mode && r->root == root &&
               r->dw == dw && r->doff == doff && r->drank == (dv ? dv->t.rank : 0);
    for (int d = 0; same && dv && d < dv->t.rank; d++)
      same = r->dshape[d] == dv->t.shape[d] && r->dstrides[d] == dv->t.strides[d];
    if (!same) {
      pthread_mutex_unlock(&D->mu);
      return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                  "%s on rank %d does not match %s on rank %d on the same signal window %%%s "
                  "(every rank must run the same collective on the same window)",
                  what, me, coll_name(r->kind), r->first, sw->name);
    }
  }
  unsigned long gen = r->gen;
  r->here[me] = 1;
  if (++r->arrived == n) {
    if (!barrier) {
      itensor *v = pto_calloc((size_t)n, sizeof *v);
      if (!v) {
        st = oom(fr, s->loc, what);
      } else {
        for (int q = 0; q < n; q++) {
          v[q] = dv->t;
          v[q].data = peer_addr(&dv->t, me, q, dv->t.data);
        }
        collective_compute(r, v, n);
        free(v);
      }
    }
    r->arrived = 0;
    memset(r->here, 0, (size_t)n);
    r->gen++;
    pthread_cond_broadcast(&D->cv);
  } else {
    while (r->gen == gen && !st) {
      if (D->aborted) {
        st = fail(fr, s->loc, PTO_STATUS_LAUNCH,
                  "%s on rank %d: stopped because another call failed", what, me);
      } else if (past(&dl) && stalled(D, me, &seen, &dl)) {
        char missing[256];
        size_t o = 0;
        missing[0] = 0;
        for (int q = 0; q < n && o + 16 < sizeof missing; q++)
          if (!r->here[q])
            o += (size_t)snprintf(missing + o, sizeof missing - o, "%s%d", o ? ", " : "", q);
        st = fail(fr, s->loc, PTO_STATUS_LAUNCH,
                  "%s on rank %d timed out after %lld ms on signal window %%%s (%%%s in @%s): "
                  "%d of %d ranks arrived; waiting for rank %s",
                  what, me, (long long)D->timeout_ms, sw->name, sname, fr->f->name, r->arrived, n,
                  missing);
      } else {
        pthread_cond_timedwait(&D->cv, &D->mu, &dl);
      }
    }
  }
  pthread_mutex_unlock(&D->mu);
  if (st) return st;
  if (!barrier) *out = rv_copy(dv); /* the result aliases the window */
  return PTO_OK;
}

/* dist.world_size, dist.alloc_window, dist.window: on the host thread. */
static pto_status op_dist_host(frame *fr, const pto_ir_stmt *s, rv *out) {
  idist *D = fr->in->dist;
  if (!D || fr->in->rank >= 0)
    return fail(fr, s->loc, PTO_STATUS_FAILED_PRECONDITION,
                "%s runs in a host function: run it with pto_ir_interp_run_host",
                op_name(s->op.opc));
  if (s->op.opc == PTO_OP_DIST_WORLD_SIZE) {
    *out = rv_scalar(mk_index(D->nranks));
    return PTO_OK;
  }
  if (s->op.opc == PTO_OP_DIST_WINDOW) {
    const rv *wv;
    PTO_RETURN_IF_ERROR(arg_tensor(fr, s, 0, &wv));
    if (!wv->t.win) return fail(fr, s->loc, PTO_STATUS_LAUNCH, "dist.window: not a window");
    *out = rv_copy(wv);
    return PTO_OK;
  }
  /* dist.alloc_window: like tensor.create, once per rank, zeroed */
  rv proto;
  PTO_RETURN_IF_ERROR(op_tensor_create(fr, s, &proto));
  int64_t bytes = view_numel(&proto.t) * (int64_t)pto_dtype_size(proto.t.dtype);
  iwin *w = pto_calloc(1, sizeof *w);
  char **copies = w ? pto_calloc((size_t)D->nranks, sizeof *copies) : NULL;
  int ok = copies != NULL;
  for (int q = 0; ok && q < D->nranks; q++)
    ok = (copies[q] = pto_calloc(1, (size_t)(bytes ? bytes : 1))) != NULL;
  if (!ok) {
    for (int q = 0; copies && q < D->nranks; q++)
      free(copies[q]);
    free(copies);
    free(w);
    rv_release(&proto);
    return oom(fr, s->loc, "dist.alloc_window");
  }
  w->refs = 1;
  w->id = ++D->nwins;
  w->name = s->nresults ? vname(s->results[0]) : "?";
  w->dtype = proto.t.dtype;
  w->rank = proto.t.rank;
  memcpy(w->shape, proto.t.shape, sizeof w->shape);
  w->bytes = bytes;
  w->ncopies = D->nranks;
  w->copy = copies;
  rv v = {.kind = RV_TENSOR};
  v.t = proto.t;
  v.t.owner = NULL;
  v.t.win = w;
  v.t.data = copies[0];
  rv_release(&proto);
  *out = v;
  return PTO_OK;
}

static pto_status exec_op(frame *fr, const pto_ir_stmt *s) {
  rv res = {0};
  pto_status st;
  pto_opcode opc = s->op.opc;
  const pto_op_info *info = pto_op_info_get(opc);
  switch (info ? info->cls : PTO_OPC_OTHER) {
  case PTO_OPC_BINARY: st = op_tile_binary(fr, s, BIN_TILE, &res); break;
  case PTO_OPC_BINARY_SCALAR: st = op_tile_binary(fr, s, BIN_SCALAR, &res); break;
  case PTO_OPC_UNARY: st = op_tile_unary(fr, s, &res); break;
  case PTO_OPC_CAST: st = op_tile_cast(fr, s, &res); break;
  case PTO_OPC_REDUCE_ROW: st = op_tile_reduce(fr, s, 1, &res); break;
  case PTO_OPC_REDUCE_COL: st = op_tile_reduce(fr, s, 0, &res); break;
  case PTO_OPC_EXPAND_ROW: st = op_tile_binary(fr, s, BIN_ROW, &res); break;
  case PTO_OPC_EXPAND_COL: st = op_tile_binary(fr, s, BIN_COL, &res); break;
  case PTO_OPC_MATMUL: st = op_tile_matmul(fr, s, opc == PTO_OP_TILE_MATMUL_ACC, &res); break;
  case PTO_OPC_LAYOUT: st = op_tile_layout(fr, s, &res); break;
  case PTO_OPC_SELECT: st = op_tile_select(fr, s, &res); break;
  default:
    switch (opc) {
    case PTO_OP_TILE_LOAD: st = op_tile_load(fr, s, &res); break;
    case PTO_OP_TILE_STORE: st = op_tile_store(fr, s, &res); break;
    case PTO_OP_TILE_CREATE: st = op_tile_create_full(fr, s, 0, &res); break;
    case PTO_OP_TILE_FULL: st = op_tile_create_full(fr, s, 1, &res); break;
    case PTO_OP_TILE_MOVE: st = op_tile_move(fr, s, &res); break;
    case PTO_OP_TENSOR_CREATE: st = op_tensor_create(fr, s, &res); break;
    case PTO_OP_TENSOR_SLICE: st = op_tensor_slice(fr, s, &res); break;
    case PTO_OP_TENSOR_DIM: st = op_tensor_dim(fr, s, &res); break;
    case PTO_OP_TENSOR_READ: st = op_tensor_read(fr, s, &res); break;
    case PTO_OP_TENSOR_RESHAPE: st = op_tensor_reshape(fr, s, &res); break;
    case PTO_OP_TENSOR_SELECT: st = op_tensor_select(fr, s, &res); break;
    case PTO_OP_DIST_WORLD_SIZE:
    case PTO_OP_DIST_ALLOC_WINDOW:
    case PTO_OP_DIST_WINDOW: st = op_dist_host(fr, s, &res); break;
    case PTO_OP_DIST_COMM_CTX:
    case PTO_OP_DIST_RANK:
    case PTO_OP_DIST_NRANKS: st = op_dist_rank(fr, s, &res); break;
    case PTO_OP_DIST_NOTIFY: st = op_dist_notify(fr, s, &res); break;
    case PTO_OP_DIST_WAIT: st = op_dist_wait(fr, s); break;
    case PTO_OP_DIST_REMOTE_LOAD: st = op_dist_remote_load(fr, s, &res); break;
    case PTO_OP_DIST_REMOTE_STORE: st = op_dist_remote_store(fr, s, &res); break;
    case PTO_OP_DIST_BARRIER:
    case PTO_OP_DIST_ALLREDUCE:
    case PTO_OP_DIST_BROADCAST:
    case PTO_OP_DIST_ALLGATHER:
    case PTO_OP_DIST_REDUCE_SCATTER: st = op_dist_collective(fr, s, &res); break;
    default: return fail(fr, s->loc, PTO_STATUS_INTERNAL, "unknown opcode %d", (int)opc);
    }
  }
  if (st) {
    rv_release(&res);
    return st;
  }
  if (s->nresults >= 1) {
    pto_status cs = frame_check_value(fr, s->results[0], s->loc);
    if (cs) {
      rv_release(&res);
      return cs;
    }
    frame_set(fr, s->results[0], res);
  } else {
    rv_release(&res);
  }
  return PTO_OK;
}

/* ---- statements and functions ----------------------------------------------------------- */

static pto_status exec_block(frame *fr, const pto_ir_block *b, rvlist *out);
static pto_status invoke(interp *in, const pto_ir_func *f, rv *args, int nargs, int is_entry,
                         const frame *caller, const pto_ir_stmt *call, rvlist *out_ret);

/* Moves the values of `vals` into the result values of s. */
static pto_status bind_results(frame *fr, const pto_ir_stmt *s, rvlist *vals, const char *what) {
  if (vals->n < s->nresults) {
    pto_status st = fail(fr, s->loc, PTO_STATUS_INTERNAL, "%s gives %d values for %d results", what,
                         vals->n, s->nresults);
    rvlist_clear(vals);
    return st;
  }
  for (int i = 0; i < s->nresults; i++) {
    pto_status st = frame_check_value(fr, s->results[i], s->loc);
    if (st) {
      rvlist_clear(vals);
      return st;
    }
  }
  for (int i = 0; i < s->nresults; i++) {
    frame_set(fr, s->results[i], vals->v[i]);
    memset(&vals->v[i], 0, sizeof vals->v[i]);
  }
  rvlist_clear(vals);
  return PTO_OK;
}

static pto_status host_call(frame *fr, const pto_ir_stmt *s);

static pto_status exec_call(frame *fr, const pto_ir_stmt *s) {
  const pto_ir_func *callee = s->call.callee;
  if (!callee) return fail(fr, s->loc, PTO_STATUS_INTERNAL, "call without a callee");
  if (fr->f->kind == PTO_FUNC_HOST) return host_call(fr, s);
  if (s->call.device)
    return fail(fr, s->loc, PTO_STATUS_INTERNAL, "call @%s device= outside a host", callee->name);
  int n = s->call.nargs;
  rv *args = pto_calloc((size_t)n + 1, sizeof *args);
  if (!args) return oom(fr, s->loc, "call");
  pto_status st = PTO_OK;
  for (int i = 0; i < n && !st; i++)
    st = eval(fr, s->call.args[i], &args[i]);
  rvlist ret = {0};
  if (!st) st = invoke(fr->in, callee, args, n, 0, fr, s, &ret);
  for (int i = 0; i < n; i++)
    rv_release(&args[i]);
  free(args);
  if (st) {
    rvlist_clear(&ret);
    return st;
  }
  /* A call's results are aliases of the tensors passed to the callee's out/inout parameters
   * (the builder records which in alias_of): take the caller's own views, so a result is the
   * argument whatever the callee returned. */
  for (int i = 0; i < s->nresults && i < ret.n; i++) {
    const pto_ir_value *al = s->results[i] ? s->results[i]->alias_of : NULL;
    if (!al || al->id < 0 || al->id >= fr->f->nvalues || fr->vals[al->id].kind != RV_TENSOR)
      continue;
    rv_release(&ret.v[i]);
    ret.v[i] = rv_copy(&fr->vals[al->id]);
  }
  return bind_results(fr, s, &ret, "the call");
}

static pto_status exec_for(frame *fr, const pto_ir_stmt *s) {
  int64_t lo, hi, step = 1;
  PTO_RETURN_IF_ERROR(eval_index(fr, s->loop.lo, &lo));
  PTO_RETURN_IF_ERROR(eval_index(fr, s->loop.hi, &hi));
  if (s->loop.step) PTO_RETURN_IF_ERROR(eval_index(fr, s->loop.step, &step));
  if (step == 0) return fail(fr, s->loc, PTO_STATUS_LAUNCH, "for: the step is zero");
  PTO_RETURN_IF_ERROR(frame_check_value(fr, s->loop.iv, s->loc));
  int ni = s->loop.niters;
  for (int k = 0; k < ni; k++)
    PTO_RETURN_IF_ERROR(frame_check_value(fr, s->loop.iters[k], s->loc));
  /* Evaluate every init before binding any: an init may read a value an iter shadows. */
  rvlist init = {pto_calloc((size_t)ni + 1, sizeof(rv)), ni};
  if (!init.v) return oom(fr, s->loc, "for");
  for (int k = 0; k < ni; k++) {
    pto_status st = eval(fr, s->loop.inits[k], &init.v[k]);
    if (st) {
      rvlist_clear(&init);
      return st;
    }
  }
  for (int k = 0; k < ni; k++) {
    frame_set(fr, s->loop.iters[k], init.v[k]);
    memset(&init.v[k], 0, sizeof init.v[k]);
  }
  rvlist_clear(&init);
  /* range and parallel alike run in order here; like Python's range, a negative step counts
   * down. */
  for (int64_t i = lo; step > 0 ? i < hi : i > hi;) {
    frame_set(fr, s->loop.iv, rv_scalar(mk_index(i)));
    rvlist y = {0};
    pto_status st = exec_block(fr, &s->loop.body, &y);
    if (!st && y.n != ni)
      st = fail(fr, s->loc, PTO_STATUS_INTERNAL, "for body yields %d values for %d iter values",
                y.n, ni);
    if (st) {
      rvlist_clear(&y);
      return st;
    }
    for (int k = 0; k < ni; k++) {
      frame_set(fr, s->loop.iters[k], y.v[k]);
      memset(&y.v[k], 0, sizeof y.v[k]);
    }
    rvlist_clear(&y);
    if (__builtin_add_overflow(i, step, &i)) break;
  }
  rvlist res = {pto_calloc((size_t)ni + 1, sizeof(rv)), ni};
  if (!res.v) return oom(fr, s->loc, "for");
  for (int k = 0; k < ni; k++)
    res.v[k] = rv_copy(&fr->vals[s->loop.iters[k]->id]);
  return bind_results(fr, s, &res, "the for");
}

static pto_status exec_if(frame *fr, const pto_ir_stmt *s) {
  pto_scalar c;
  PTO_RETURN_IF_ERROR(eval_scalar(fr, s->branch.cond, &c));
  rvlist y = {0};
  int take_then = pto_dtype_is_float(c.dtype) ? c.f != 0 : c.u != 0;
  if (take_then)
    PTO_RETURN_IF_ERROR(exec_block(fr, &s->branch.then_body, &y));
  else if (s->branch.has_else)
    PTO_RETURN_IF_ERROR(exec_block(fr, &s->branch.else_body, &y));
  return bind_results(fr, s, &y, "the if");
}

static pto_status exec_stmt(frame *fr, const pto_ir_stmt *s, rvlist *out) {
  switch (s->kind) {
  case PTO_STMT_ASSIGN: {
    if (s->nresults < 1) return PTO_OK;
    PTO_RETURN_IF_ERROR(frame_check_value(fr, s->results[0], s->loc));
    rv v;
    PTO_RETURN_IF_ERROR(eval(fr, s->expr, &v));
    frame_set(fr, s->results[0], v);
    return PTO_OK;
  }
  case PTO_STMT_OP: return exec_op(fr, s);
  case PTO_STMT_CALL: return exec_call(fr, s);
  case PTO_STMT_FOR: return exec_for(fr, s);
  case PTO_STMT_IF: return exec_if(fr, s);
  case PTO_STMT_INCORE: return exec_block(fr, &s->incore.body, NULL); /* runs inline */
  case PTO_STMT_YIELD:
  case PTO_STMT_RETURN: {
    if (!out)
      return fail(fr, s->loc, PTO_STATUS_INTERNAL, "%s outside a function, for or if body",
                  s->kind == PTO_STMT_YIELD ? "yield" : "return");
    rvlist_clear(out);
    out->v = pto_calloc((size_t)s->ret.n + 1, sizeof(rv));
    if (!out->v) return oom(fr, s->loc, "yield");
    for (int i = 0; i < s->ret.n; i++) {
      pto_status st = eval(fr, s->ret.vals[i], &out->v[i]);
      out->n = i + 1;
      if (st) {
        rvlist_clear(out);
        return st;
      }
    }
    out->n = s->ret.n;
    return PTO_OK;
  }
  }
  return fail(fr, s->loc, PTO_STATUS_INTERNAL, "unknown statement kind %d", (int)s->kind);
}

static pto_status exec_block(frame *fr, const pto_ir_block *b, rvlist *out) {
  _Atomic uint64_t *progress = fr->in->progress;
  for (int i = 0; i < b->n; i++) {
    PTO_RETURN_IF_ERROR(exec_stmt(fr, b->stmts[i], out));
    if (progress) progress_bump(progress);
  }
  return PTO_OK;
}

/* ---- distributed (L3): the host and its ranks ------------------------------------------- */

typedef struct irange {
  const char *lo, *hi; /* bytes [lo, hi) */
  int write;
} irange;

struct ijob {
  int device;
  const pto_ir_func *callee;
  pto_loc loc; /* the call's */
  rv *args;
  int nargs;
  int state; /* 0 queued, 1 running, 2 finished (or skipped after a failure) */
  ijob **deps;
  int ndeps;
  irange *rg;
  int nrg;
};

static irange view_range(const itensor *t, int write) {
  irange r = {t->data, t->data, write};
  int64_t last = 0;
  for (int d = 0; d < t->rank; d++) {
    if (t->shape[d] <= 0) return r; /* empty */
    last += (t->shape[d] - 1) * t->strides[d];
  }
  r.hi = t->data + (last + 1) * (int64_t)pto_dtype_size(t->dtype);
  return r;
}

static int jobs_conflict(const ijob *a, const ijob *b) {
  for (int i = 0; i < a->nrg; i++)
    for (int k = 0; k < b->nrg; k++)
      if ((a->rg[i].write || b->rg[k].write) && a->rg[i].lo < b->rg[k].hi &&
          b->rg[k].lo < a->rg[i].hi)
        return 1;
  return 0;
}

static void job_free(ijob *j) {
  for (int i = 0; j->args && i < j->nargs; i++)
    rv_release(&j->args[i]);
  free(j->args);
  free(j->deps);
  free(j->rg);
  free(j);
}

/* call @orch(...) [device=d] in a host: queues the call on rank d (0 without device=). */
static pto_status host_call(frame *fr, const pto_ir_stmt *s) {
  idist *D = fr->in->dist;
  const pto_ir_func *callee = s->call.callee;
  int64_t dev = 0;
  if (s->call.device) {
    PTO_RETURN_IF_ERROR(eval_index(fr, s->call.device, &dev));
    if (dev < 0 || dev >= D->nranks)
      return fail(fr, s->loc, PTO_STATUS_LAUNCH,
                  "call @%s: device=%lld is outside 0..%d (the world size is %d)", callee->name,
                  (long long)dev, D->nranks - 1, D->nranks);
  }
  pthread_mutex_lock(&D->mu);
  int aborted = D->aborted;
  pthread_mutex_unlock(&D->mu);
  if (aborted)
    return fail(fr, s->loc, PTO_STATUS_LAUNCH, "call @%s: not dispatched, an earlier call failed",
                callee->name);
  ijob *j = pto_calloc(1, sizeof *j);
  int n = s->call.nargs;
  if (j) {
    j->args = pto_calloc((size_t)n + 1, sizeof *j->args);
    j->rg = pto_calloc((size_t)n + 1, sizeof *j->rg);
  }
  if (!j || !j->args || !j->rg) {
    if (j) job_free(j);
    return oom(fr, s->loc, "call");
  }
  j->device = (int)dev;
  j->callee = callee;
  j->loc = s->loc;
  j->nargs = n;
  pto_status st = PTO_OK;
  for (int i = 0; i < n && !st; i++) {
    st = eval(fr, s->call.args[i], &j->args[i]);
    rv *a = &j->args[i];
    if (st || a->kind != RV_TENSOR) continue;
    if (a->t.win) /* dist.window(%w) passed to device d is rank d's slice */
      a->t.data = a->t.win->copy[dev] + (a->t.data - a->t.win->copy[0]);
    int write = i < callee->nparams && callee->params[i].dir != PTO_DIR_IN;
    j->rg[j->nrg++] = view_range(&a->t, write);
  }
  if (st) {
    job_free(j);
    return st;
  }
  pthread_mutex_lock(&D->mu);
  if (pto_grow_int(&D->jobs, sizeof *D->jobs, &D->capjobs, D->njobs + 1)) {
    pthread_mutex_unlock(&D->mu);
    job_free(j);
    return oom(fr, s->loc, "call");
  }
  int ndeps = 0;
  for (int k = 0; k < D->njobs; k++) {
    ijob *o = D->jobs[k];
    if (o->device != j->device && o->state != 2 && jobs_conflict(o, j)) ndeps++;
  }
  if (ndeps && !(j->deps = pto_calloc((size_t)ndeps, sizeof *j->deps))) {
    pthread_mutex_unlock(&D->mu);
    job_free(j);
    return oom(fr, s->loc, "call");
  }
  for (int k = 0; k < D->njobs; k++) {
    ijob *o = D->jobs[k];
    if (o->device != j->device && o->state != 2 && jobs_conflict(o, j)) j->deps[j->ndeps++] = o;
  }
  D->jobs[D->njobs++] = j;
  pthread_cond_broadcast(&D->cv);
  pthread_mutex_unlock(&D->mu);
  /* The results alias the host's own views of the out/inout arguments. */
  for (int i = 0; i < s->nresults; i++) {
    const pto_ir_value *al = s->results[i] ? s->results[i]->alias_of : NULL;
    PTO_RETURN_IF_ERROR(frame_check_value(fr, s->results[i], s->loc));
    if (!al || al->id < 0 || al->id >= fr->f->nvalues || fr->vals[al->id].kind != RV_TENSOR)
      continue;
    frame_set(fr, s->results[i], rv_copy(&fr->vals[al->id]));
  }
  return PTO_OK;
}

static pto_status run_job(idist *D, int rank, ijob *j) {
  interp in = {.p = D->p, .dist = D, .rank = rank, .progress = &D->progress[rank].n};
  rvlist ret = {0};
  pto_status st = invoke(&in, j->callee, j->args, j->nargs, 0, NULL, NULL, &ret);
  rvlist_clear(&ret);
  for (int i = 0; i < j->nargs; i++)
    rv_release(&j->args[i]);
  if (st && j->loc.line > 0)
    st = pto_status_annotate(st, "%s:%d:%d: call @%s device=%d", file_of(D->p), j->loc.line,
                             j->loc.col, j->callee->name, j->device);
  else if (st)
    st = pto_status_annotate(st, "%s: call @%s device=%d", file_of(D->p), j->callee->name,
                             j->device);
  return st;
}

typedef struct rank_thread {
  idist *D;
  int rank;
  pthread_t th;
} rank_thread;

static void *rank_main(void *arg) {
  rank_thread *rt = arg;
  idist *D = rt->D;
  int next = 0; /* jobs before this index are not this rank's or are finished */
  pthread_mutex_lock(&D->mu);
  for (;;) {
    while (next < D->njobs && D->jobs[next]->device != rt->rank)
      next++;
    if (next == D->njobs) {
      if (D->closing) break;
      pthread_cond_wait(&D->cv, &D->mu);
      continue;
    }
    ijob *j = D->jobs[next];
    if (D->aborted) { /* skipped */
      j->state = 2;
      next++;
      pthread_cond_broadcast(&D->cv);
      continue;
    }
    int ready = 1;
    for (int k = 0; k < j->ndeps && ready; k++)
      ready = j->deps[k]->state == 2;
    if (!ready) {
      pthread_cond_wait(&D->cv, &D->mu);
      continue;
    }
    j->state = 1;
    next++;
    pthread_mutex_unlock(&D->mu);
    pto_status st = run_job(D, rt->rank, j);
    pthread_mutex_lock(&D->mu);
    j->state = 2;
    if (st) dist_fail_locked(D, st);
    pthread_cond_broadcast(&D->cv);
  }
  pthread_mutex_unlock(&D->mu);
  return NULL;
}

/* Where a binding error is reported: at the call, or at the entry function. */
typedef struct bind_ctx {
  const frame *at; /* the frame whose file/position is used */
  pto_loc loc;
  char where[160]; /* "call @k" or "@main" */
} bind_ctx;

__attribute__((format(printf, 3, 4))) static pto_status
bind_fail(const bind_ctx *bc, pto_status_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pto_status s = pto_status_makev(code, fmt, ap);
  va_end(ap);
  return locate(bc->at, bc->loc, pto_status_annotate(s, "%s", bc->where));
}

/* Binds the tensor argument of parameter pi: checks dtype, rank and static extents, binds the
 * dynamic symbols, and decides whether the callee may write through it. */
static pto_status bind_tensor(frame *fr, const bind_ctx *bc, int pi, rv *arg) {
  const pto_ir_param *pa = &fr->f->params[pi];
  const pto_ir_type *ty = pa->value->type;
  const char *pn = vname(pa->value);
  const pto_ir_program *p = fr->in->p;
  if (arg->kind != RV_TENSOR)
    return bind_fail(bc, PTO_STATUS_INVALID_ARGUMENT, "parameter %%%s needs a tensor", pn);
  itensor *t = &arg->t;
  if (t->dtype != ty->dtype)
    return bind_fail(bc, PTO_STATUS_LAUNCH, "parameter %%%s is %s but the tensor is %s", pn,
                     pto_dtype_name(ty->dtype), pto_dtype_name(t->dtype));
  if (ty->rank >= 0) {
    if (t->rank != ty->rank)
      return bind_fail(bc, PTO_STATUS_LAUNCH,
                       "parameter %%%s has rank %d but the tensor has rank %d", pn, ty->rank,
                       t->rank);
    /* Symbols first, so a dim written as an expression of symbols can be checked after. */
    for (int d = 0; d < ty->rank; d++) {
      const pto_ir_expr *e = ty->dims[d];
      if (!e || e->kind != PTO_EXPR_SYM) continue;
      if (e->sym < 0 || e->sym >= p->nsyms)
        return bind_fail(bc, PTO_STATUS_INTERNAL, "parameter %%%s: undeclared symbol", pn);
      int prev = fr->sym_param[e->sym];
      if (prev >= 0 && fr->sym_val[e->sym] != t->shape[d])
        return bind_fail(bc, PTO_STATUS_LAUNCH,
                         "dynamic dim %s is %lld from parameter %%%s but %lld from parameter %%%s",
                         p->syms[e->sym], (long long)fr->sym_val[e->sym],
                         vname(fr->f->params[prev].value), (long long)t->shape[d], pn);
      fr->sym_param[e->sym] = pi;
      fr->sym_val[e->sym] = t->shape[d];
    }
  }
  if (pa->dir != PTO_DIR_IN && !t->writable)
    return bind_fail(bc, PTO_STATUS_LAUNCH,
                     "parameter %%%s is %s but its tensor is read-only (an 'in' tensor)", pn,
                     pa->dir == PTO_DIR_OUT ? "out" : "inout");
  if (pa->dir == PTO_DIR_IN) t->writable = 0;
  return PTO_OK;
}

static pto_status check_static_dims(frame *fr, const bind_ctx *bc, int pi, const rv *arg) {
  const pto_ir_param *pa = &fr->f->params[pi];
  const pto_ir_type *ty = pa->value->type;
  for (int d = 0; d < ty->rank; d++) {
    const pto_ir_expr *e = ty->dims[d];
    if (!e || e->kind == PTO_EXPR_SYM) continue;
    int64_t want;
    PTO_RETURN_IF_ERROR(eval_index(fr, e, &want));
    if (want != arg->t.shape[d])
      return bind_fail(bc, PTO_STATUS_LAUNCH,
                       "parameter %%%s: extent of dim %d is %lld, expected %lld", vname(pa->value),
                       d, (long long)arg->t.shape[d], (long long)want);
  }
  return PTO_OK;
}

static pto_status bind_params(frame *fr, const bind_ctx *bc, rv *args, int is_entry) {
  const pto_ir_func *f = fr->f;
  for (int i = 0; i < f->nparams; i++) {
    const pto_ir_param *pa = &f->params[i];
    if (!pa->value || !pa->value->type)
      return bind_fail(bc, PTO_STATUS_INTERNAL, "parameter %d has no type", i + 1);
    PTO_RETURN_IF_ERROR(frame_check_value(fr, pa->value, f->loc));
    const pto_ir_type *ty = pa->value->type;
    const char *pn = vname(pa->value);
    if (ty->kind == PTO_TYPE_SCALAR) {
      pto_scalar v;
      if (is_entry && pa->bind == PTO_BIND_LITERAL && pa->literal) {
        /* Specialized: the literal wins; the argument only fills the ABI slot. */
        rv lit;
        PTO_RETURN_IF_ERROR(eval(fr, pa->literal, &lit));
        v = lit.s;
      } else {
        if (args[i].kind != RV_SCALAR)
          return bind_fail(bc, PTO_STATUS_INVALID_ARGUMENT,
                           "parameter %%%s needs a scalar of type %s", pn,
                           pto_dtype_name(ty->dtype));
        if (args[i].s.dtype != ty->dtype)
          return bind_fail(bc, PTO_STATUS_INVALID_ARGUMENT,
                           "parameter %%%s is %s but the argument is %s", pn,
                           pto_dtype_name(ty->dtype), pto_dtype_name(args[i].s.dtype));
        v = args[i].s;
      }
      /* Canonical in its dtype (an f16 scalar holds an f16 value), as the ABI slot would. */
      frame_set(fr, pa->value, rv_scalar(conv(v, ty->dtype)));
      continue;
    }
    PTO_RETURN_IF_ERROR(bind_tensor(fr, bc, i, &args[i]));
  }
  for (int i = 0; i < f->nparams; i++) {
    const pto_ir_type *ty = f->params[i].value->type;
    if (ty->kind == PTO_TYPE_SCALAR) continue;
    PTO_RETURN_IF_ERROR(check_static_dims(fr, bc, i, &args[i]));
    frame_set(fr, f->params[i].value, rv_copy(&args[i]));
  }
  return PTO_OK;
}

static pto_status invoke(interp *in, const pto_ir_func *f, rv *args, int nargs, int is_entry,
                         const frame *caller, const pto_ir_stmt *call, rvlist *out_ret) {
  frame fr = {.in = in, .f = f};
  bind_ctx bc = {.at = caller ? caller : &fr};
  bc.loc = call ? call->loc : f->loc;
  if (call)
    snprintf(bc.where, sizeof bc.where, "call @%s", f->name);
  else
    snprintf(bc.where, sizeof bc.where, "@%s", f->name);
  if (f->kind == PTO_FUNC_HOST && (!in->dist || in->rank >= 0))
    return bind_fail(&bc, PTO_STATUS_INVALID_ARGUMENT,
                     "a host function runs on simulated ranks: run it with "
                     "pto_ir_interp_run_host and a world size");
  if (in->depth >= INTERP_MAX_DEPTH)
    return bind_fail(&bc, PTO_STATUS_LAUNCH, "calls nest deeper than %d (recursion?)",
                     INTERP_MAX_DEPTH);
  if (nargs != f->nparams)
    return bind_fail(&bc, PTO_STATUS_INVALID_ARGUMENT, "%d arguments for %d parameters", nargs,
                     f->nparams);
  int nsyms = in->p->nsyms;
  fr.vals = pto_calloc((size_t)f->nvalues + 1, sizeof *fr.vals);
  fr.sym_val = pto_calloc((size_t)nsyms + 1, sizeof *fr.sym_val);
  fr.sym_param = pto_malloc(((size_t)nsyms + 1) * sizeof *fr.sym_param);
  pto_status st = PTO_OK;
  if (!fr.vals || !fr.sym_val || !fr.sym_param) {
    st = oom(&fr, f->loc, "interpreter frame");
  } else {
    for (int i = 0; i < nsyms; i++)
      fr.sym_param[i] = -1;
    in->depth++;
    st = bind_params(&fr, &bc, args, is_entry);
    if (!st) st = exec_block(&fr, &f->body, out_ret);
    in->depth--;
  }
  if (fr.vals)
    for (int i = 0; i < f->nvalues; i++)
      rv_release(&fr.vals[i]);
  free(fr.vals);
  free(fr.sym_val);
  free(fr.sym_param);
  return st;
}

/* The launch's arguments as runtime values (*out: nargs entries, calloc'd). */
static pto_status convert_args(const pto_ir_func *func, pto_ir_interp_arg *args, int nargs,
                               rv **out) {
  rv *rargs = pto_calloc((size_t)nargs + 1, sizeof *rargs);
  if (!rargs)
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "interpreter arguments: out of memory");
  pto_status st = PTO_OK;
  for (int i = 0; i < nargs && !st; i++) {
    const pto_ir_interp_arg *a = &args[i];
    const char *pn = i < func->nparams ? vname(func->params[i].value) : "?";
    if (!a->is_tensor) {
      rargs[i] = rv_scalar(a->scalar);
      continue;
    }
    const pto_host_tensor *h = &a->tensor;
    int ok = h->rank >= 1 && h->rank <= PTO_MAX_RANK && (unsigned)h->dtype < PTO_DTYPE_COUNT;
    for (int d = 0; ok && d < h->rank; d++)
      ok = h->shape[d] >= 0;
    if (ok && !h->data && pto_host_tensor_numel(h) > 0) ok = 0;
    if (!ok) {
      st = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "@%s: argument %d (%%%s): not a valid host tensor (rank 1..5, "
                           "extents >= 0, data for a non-empty tensor)",
                           func->name, i + 1, pn);
      break;
    }
    rv v = {.kind = RV_TENSOR};
    v.t.data = h->data;
    v.t.dtype = h->dtype;
    v.t.rank = h->rank;
    v.t.writable = 1; /* narrowed to the parameter's direction when bound */
    memcpy(v.t.shape, h->shape, sizeof v.t.shape);
    memcpy(v.t.strides, h->strides, sizeof v.t.strides);
    rargs[i] = v;
  }
  if (st) {
    for (int i = 0; i < nargs; i++)
      rv_release(&rargs[i]);
    free(rargs);
    return st;
  }
  *out = rargs;
  return PTO_OK;
}

pto_status pto_ir_interp_run(const pto_ir_program *p, const pto_ir_func *func,
                             pto_ir_interp_arg *args, int nargs) {
  if (!p || !func)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_interp_run: no program or function");
  if (nargs < 0 || (nargs > 0 && !args))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_interp_run: bad argument array");
  interp in = {.p = p, .rank = -1};
  rv *rargs = NULL;
  PTO_RETURN_IF_ERROR(convert_args(func, args, nargs, &rargs));
  rvlist ret = {0};
  pto_status st = invoke(&in, func, rargs, nargs, 1, NULL, NULL, &ret);
  rvlist_clear(&ret); /* outputs were written in place */
  for (int i = 0; i < nargs; i++)
    rv_release(&rargs[i]);
  free(rargs);
  return st;
}

/* wait_timeout_ms, else $PTO_DIST_TIMEOUT_MS (range-checked), else the default. */
static pto_status dist_timeout_ms(int64_t timeout_ms, int64_t *out) {
  if (timeout_ms > 0) {
    *out = timeout_ms;
    return PTO_OK;
  }
  return pto_env_int("PTO_DIST_TIMEOUT_MS", 1, PTO_DIST_TIMEOUT_MS_MAX,
                     PTO_IR_INTERP_DIST_TIMEOUT_MS, out);
}

int64_t pto_ir_interp_dist_timeout_ms(int64_t timeout_ms) {
  int64_t v;
  pto_status s = dist_timeout_ms(timeout_ms, &v);
  if (!s) return v;
  pto_status_free(s);
  return -1;
}

pto_status pto_ir_interp_run_host(const pto_ir_program *p, const pto_ir_func *func,
                                  pto_ir_interp_arg *args, int nargs, int nranks,
                                  int64_t wait_timeout_ms) {
  if (!p || !func)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_interp_run_host: no program or function");
  if (func->kind != PTO_FUNC_HOST)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_interp_run_host: @%s is not a host function (use "
                           "pto_ir_interp_run)",
                           func->name);
  if (nranks < 1 || nranks > PTO_IR_INTERP_MAX_RANKS)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_interp_run_host: world size %d is outside 1..%d", nranks,
                           PTO_IR_INTERP_MAX_RANKS);
  if (nargs < 0 || (nargs > 0 && !args))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_interp_run_host: bad argument array");
  int64_t timeout_ms;
  pto_status ts = dist_timeout_ms(wait_timeout_ms, &timeout_ms);
  if (ts) return pto_status_annotate(ts, "pto_ir_interp_run_host");
  rv *rargs = NULL;
  PTO_RETURN_IF_ERROR(convert_args(func, args, nargs, &rargs));
  idist D = {.p = p, .nranks = nranks, .timeout_ms = timeout_ms};
  D.progress = pto_calloc((size_t)nranks + 1, sizeof *D.progress);
  if (!D.progress) {
    for (int i = 0; i < nargs; i++)
      rv_release(&rargs[i]);
    free(rargs);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "rank progress counts: out of memory");
  }
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_mutex_init(&D.mu, NULL);
  pthread_cond_init(&D.cv, &ca);
  pthread_condattr_destroy(&ca);
  rank_thread *rt = pto_calloc((size_t)nranks, sizeof *rt);
  int started = 0;
  pto_status st = PTO_OK;
  if (!rt) st = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "rank threads: out of memory");
  for (; !st && started < nranks; started++) {
    rt[started].D = &D;
    rt[started].rank = started;
    int rc = pthread_create(&rt[started].th, NULL, rank_main, &rt[started]);
    if (rc) {
      st = pto_status_make(PTO_STATUS_INTERNAL, "cannot start the thread of rank %d: %s", started,
                           strerror(rc));
      break;
    }
  }
  if (!st) {
    interp in = {.p = p, .dist = &D, .rank = -1, .progress = &D.progress[nranks].n};
    rvlist ret = {0};
    st = invoke(&in, func, rargs, nargs, 1, NULL, NULL, &ret);
    rvlist_clear(&ret);
  }
  /* The host is done: wait for every call (or, after a failure, stop everything). */
  pthread_mutex_lock(&D.mu);
  if (st) dist_fail_locked(&D, st);
  D.closing = 1;
  pthread_cond_broadcast(&D.cv);
  pthread_mutex_unlock(&D.mu);
  for (int r = 0; r < started; r++)
    pthread_join(rt[r].th, NULL);
  free(rt);
  for (int k = 0; k < D.njobs; k++)
    job_free(D.jobs[k]);
  free(D.jobs);
  while (D.rdvs) {
    rdv *r = D.rdvs;
    D.rdvs = r->next;
    free(r->here);
    free(r);
  }
  for (int i = 0; i < nargs; i++)
    rv_release(&rargs[i]);
  free(rargs);
  free(D.progress);
  pthread_cond_destroy(&D.cv);
  pthread_mutex_destroy(&D.mu);
  return D.err;
}
