/* The task graph of a launch and the sim platform's core pool.
 *
 * The orchestration (on the dispatching thread) submits tasks through the pto_orch_api table.
 * Each tensor argument is a strided view of a buffer; per buffer the launch keeps the accesses
 * of unfinished tasks in a tensor map (tmap.c: found by byte range, so a submit's cost does
 * not grow with the number of live tasks), and a new access waits for the overlapping ones it
 * conflicts with: a read
 * waits for earlier writers, a write for earlier readers and writers (RAW, WAR, WAW). Statement
 * order alone never orders two tasks. A task is queued when its last predecessor completes; idle
 * cores take tasks from the queue, spin briefly when it is empty, then block. */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/base.h"
#include "runtime_internal.h"

/* ---- failure --------------------------------------------------------------------------- */

void pto__rt_launch_fail(pto__rt_launch *L, pto_status s) {
  pthread_mutex_lock(&L->fail_mu);
  if (!L->fail) {
    L->fail = s;
    s = PTO_OK;
  }
  pthread_mutex_unlock(&L->fail_mu);
  atomic_store(&L->failed, 1);
  pto_status_free(s);
}

/* A launch error of code (LAUNCH, or OUT_OF_MEMORY when that is the cause). */
__attribute__((format(printf, 3, 0))) static int32_t
orch_failv(pto__rt_launch *L, pto_status_code code, const char *fmt, va_list ap) {
  pto_status s = pto_status_makev(code, fmt, ap);
  s = pto_status_annotate(s, "orchestration");
  /* The statement that was running, when the program has op ids and positions. */
  char where[512];
  if (!pto_program_op_text(L->prog, pto_program_current_op(L->prog), where, sizeof where))
    s = pto_status_annotate(s, "%s", where);
  pto__rt_launch_fail(L, s);
  return 1;
}

__attribute__((format(printf, 2, 3))) static int32_t orch_fail(pto__rt_launch *L, const char *fmt,
                                                               ...) {
  va_list ap;
  va_start(ap, fmt);
  int32_t r = orch_failv(L, PTO_STATUS_LAUNCH, fmt, ap);
  va_end(ap);
  return r;
}

__attribute__((format(printf, 3, 4))) static int32_t
orch_fail_code(pto__rt_launch *L, pto_status_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int32_t r = orch_failv(L, code, fmt, ap);
  va_end(ap);
  return r;
}

/* ---- regions ----------------------------------------------------------------------------- */

/* Fills r from a view; returns 0, or -1 when its extent overflows. An empty view has lo == hi. */
static int make_region(const pto_orch_tensor *t, pto__rt_region *r) {
  memset(r, 0, sizeof *r);
  r->addr = t->addr;
  r->rank = t->rank;
  r->esize = (int32_t)pto_dtype_size((pto_dtype)t->dtype);
  r->shape = t->shape;
  r->stride = t->stride;
  int64_t lo = 0, hi = 0;
  int empty = 0;
  for (int d = 0; d < t->rank; d++) {
    if (t->shape[d] == 0) empty = 1;
    int64_t ext;
    if (t->shape[d] > 0 && __builtin_mul_overflow(t->shape[d] - 1, t->stride[d], &ext)) return -1;
    if (t->shape[d] <= 0) continue;
    if (ext < 0) {
      if (__builtin_add_overflow(lo, ext, &lo)) return -1;
    } else if (__builtin_add_overflow(hi, ext, &hi)) {
      return -1;
    }
  }
  if (empty) {
    r->lo = r->hi = t->addr;
    return 0;
  }
  int64_t blo, bhi;
  if (__builtin_mul_overflow(lo, (int64_t)r->esize, &blo) ||
      __builtin_mul_overflow(hi + 1, (int64_t)r->esize, &bhi))
    return -1;
  r->lo = t->addr + (uint64_t)blo;
  r->hi = t->addr + (uint64_t)bhi;
  /* Dense: sorted by stride, the dims with extent > 1 nest exactly (row-major up to order). */
  int64_t need = 1;
  int used[PTO_MAX_RANK] = {0};
  r->dense = 1;
  for (;;) {
    int pick = -1;
    for (int d = 0; d < t->rank; d++)
      if (!used[d] && t->shape[d] > 1 && (pick < 0 || t->stride[d] < t->stride[pick])) pick = d;
    if (pick < 0) break;
    used[pick] = 1;
    if (t->stride[pick] != need) {
      r->dense = 0;
      break;
    }
    need *= t->shape[pick];
  }
  return 0;
}

/* Views with the same strides over one buffer: when the strides nest (each divides the one
 * before it) and each view fits inside its rows, an element's mixed-radix coordinates are
 * unique, so the element sets are disjoint exactly when the boxes (or the residues modulo the
 * innermost stride) are. Returns 1 only when that proves the views disjoint. */
static int boxes_disjoint(const pto__rt_region *a, const pto__rt_region *b, uint64_t buffer) {
  if (a->rank != b->rank || a->esize != b->esize || a->rank == 0) return 0;
  int r = a->rank;
  for (int i = 0; i < r; i++) {
    if (a->stride[i] != b->stride[i] || a->stride[i] <= 0) return 0;
    if (i > 0 && a->stride[i - 1] % a->stride[i] != 0) return 0;
  }
  int64_t ca[PTO_MAX_RANK], cb[PTO_MAX_RANK], rema, remb;
  const pto__rt_region *v[2] = {a, b};
  int64_t *c[2] = {ca, cb};
  int64_t *rem[2] = {&rema, &remb};
  for (int k = 0; k < 2; k++) {
    uint64_t off = v[k]->addr - buffer;
    if (v[k]->addr < buffer || off % (uint64_t)a->esize) return 0;
    int64_t e = (int64_t)(off / (uint64_t)a->esize);
    for (int i = 0; i < r; i++) {
      c[k][i] = e / a->stride[i];
      e %= a->stride[i];
    }
    *rem[k] = e;
    for (int i = 1; i < r; i++)
      if (c[k][i] + v[k]->shape[i] > a->stride[i - 1] / a->stride[i]) return 0;
  }
  if (rema != remb) return 1;
  for (int i = 0; i < r; i++)
    if (ca[i] + a->shape[i] <= cb[i] || cb[i] + b->shape[i] <= ca[i]) return 1;
  return 0;
}

static int regions_overlap(const pto__rt_region *a, const pto__rt_region *b, uint64_t buffer) {
  if (a->lo == a->hi || b->lo == b->hi) return 0;
  if (a->hi <= b->lo || b->hi <= a->lo) return 0;
  return !boxes_disjoint(a, b, buffer);
}

/* ---- tracks (per-buffer state) ---------------------------------------------------------- */

static pto__rt_track *new_track(pto__rt_launch *L, uint64_t buffer, uint64_t size) {
  if (pto_grow(&L->track_list, sizeof *L->track_list, &L->captracks, L->ntracks + 1)) return NULL;
  pto__rt_track *t = pto__rt_bump_alloc(&L->bump, sizeof *t);
  if (!t) return NULL;
  memset(t, 0, sizeof *t);
  t->buffer = buffer;
  t->size = size;
  if (pto__rt_map_put(&L->tracks, buffer, (uint64_t)(uintptr_t)t) != 0) return NULL;
  L->track_list[L->ntracks++] = t;
  return t;
}

/* The track of buffer; *out_err says why there is none. */
static pto__rt_track *get_track(pto__rt_launch *L, uint64_t buffer, const char **out_err,
                                int *out_oom) {
  uint64_t *v = pto__rt_map_find(&L->tracks, buffer);
  if (v) return (pto__rt_track *)(uintptr_t)*v;
  uint64_t size;
  if (!pto__rt_devmem_size(&L->w->mem, buffer, &size)) {
    *out_err = "is not the start of a live device allocation of this worker";
    return NULL;
  }
  pto__rt_track *t = new_track(L, buffer, size);
  if (!t) {
    *out_err = "cannot be tracked: out of memory";
    *out_oom = 1;
  }
  return t;
}

static pthread_mutex_t *stripe_of(pto__rt_launch *L, const pto__rt_task *t) {
  return &L->stripes[t->seq % PTO__RT_STRIPES];
}

/* p must finish before t starts. */
static void add_edge(pto__rt_launch *L, pto__rt_task *p, pto__rt_task *t) {
  pthread_mutex_t *mu = stripe_of(L, p);
  pthread_mutex_lock(mu);
  if (!atomic_load(&p->done) && !(p->nsucc && p->succ[p->nsucc - 1] == t)) {
    if (p->nsucc == p->capsucc) {
      int32_t ncap = p->capsucc * 2;
      pto__rt_task **ns = pto__rt_bump_alloc(&L->bump, (size_t)ncap * sizeof *ns);
      if (!ns) {
        pthread_mutex_unlock(mu);
        pto__rt_launch_fail(L, pto_status_make(PTO_STATUS_OUT_OF_MEMORY,
                                               "out of memory recording a task dependency"));
        return;
      }
      memcpy(ns, p->succ, (size_t)p->nsucc * sizeof *ns);
      p->succ = ns;
      p->capsucc = ncap;
    }
    p->succ[p->nsucc++] = t;
    atomic_fetch_add(&t->pending, 1);
    /* An early_resolve producer already running does not keep t from being staged. */
    if (!(p->early_resolve && p->started)) atomic_fetch_add(&t->gate, 1);
  }
  pthread_mutex_unlock(mu);
}

/* Orders the submitted task after each unfinished access the tensor map visits that it
 * conflicts with. The kernels of one mixed task are not ordered among themselves (they run side
 * by side), and a covering write keeps its siblings' accesses. */
typedef struct order_ctx {
  pto__rt_launch *L;
  pto__rt_task *t;
  const pto__rt_region *r;
  uint64_t buffer;
} order_ctx;

static int order_after(void *ctx, pto__rt_tm_entry *x) {
  order_ctx *c = ctx;
  if (x->task == c->t || x->task->group == c->t->group) return 0;
  if (regions_overlap(&x->r, c->r, c->buffer)) add_edge(c->L, x->task, c->t);
  return 1;
}

/* A read waits for earlier writers; a write for earlier readers and writers. A dense write
 * drops the accesses it covers: whoever conflicts with such an access x now conflicts with t,
 * which is ordered after x. In a manual scope the access is only recorded, for the tasks after
 * the scope to order by. */
static void add_access(pto__rt_launch *L, pto__rt_track *tr, pto__rt_task *t,
                       const pto__rt_region *r, int write, int manual) {
  if (r->lo == r->hi) return;
  int covering = write && r->dense && !manual;
  if (!manual) {
    order_ctx c = {L, t, r, tr->buffer};
    pto__rt_tmap_visit(&tr->acc[1], &L->tm_alloc, tr->buffer, r, covering, order_after, &c);
    if (write)
      pto__rt_tmap_visit(&tr->acc[0], &L->tm_alloc, tr->buffer, r, covering, order_after, &c);
  }
  if (pto__rt_tmap_insert(&tr->acc[write ? 1 : 0], &L->tm_alloc, tr->buffer, tr->size, t, r))
    pto__rt_launch_fail(
        L, pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory recording a tensor access"));
}

/* ---- waiting ----------------------------------------------------------------------------- */

typedef int (*pto__rt_pred)(pto__rt_launch *L, const void *arg);

static int pred_all_done(pto__rt_launch *L, const void *arg);

/* Spins a bounded while, then blocks on done_cv until pred holds. wake_at >= 0: pred can only
 * turn true once at most wake_at tasks are outstanding (the dispatching thread's waits for the
 * launch's end and for the in-flight window), and a completion wakes this thread only when it
 * brings outstanding down to wake_at, not at every completion: a completion that wakes a thread
 * is a futex call on the core that completes, and the woken thread takes a CPU from the cores.
 * wake_at < 0: any completion may make pred true (only one thread at a time waits with
 * wake_at >= 0: the dispatching thread). The waiting thread's CPU goes to the cores meanwhile
 * (pto__rt_pool_flush, pto__rt_pool_resume). */
static void wait_until_at(pto__rt_launch *L, pto__rt_pred pred, const void *arg, long wake_at) {
  /* Tasks left to the dispatching thread (a lazy pool) go to cores now, and its CPU too: it
   * waits instead. */
  pto__rt_pool_flush(&L->w->pool);
  /* No spin when more tasks than cores must complete first: they take at least a task's time,
   * and a spinning thread here takes that time from the cores that run them. */
  int spin = wake_at < 0 || atomic_load(&L->outstanding) - wake_at <= (long)L->w->pool.nthreads;
  uint64_t deadline = spin ? pto__rt_now_ns() + L->w->pool.spin_ns : 0;
  for (unsigned i = 0; !pred(L, arg); i++) {
    pto__rt_cpu_relax();
    if (((i & 63) == 63 || !spin) && pto__rt_now_ns() >= deadline) {
      /* Announced before pred is read again under done_mu; a completer decrements outstanding
       * before it reads these, so one of the two sees the other (sequentially consistent). */
      if (wake_at >= 0)
        atomic_store(&L->wake_at, wake_at);
      else
        atomic_fetch_add(&L->waiters, 1);
      pthread_mutex_lock(&L->done_mu);
      while (!pred(L, arg))
        pthread_cond_wait(&L->done_cv, &L->done_mu);
      pthread_mutex_unlock(&L->done_mu);
      if (wake_at >= 0)
        atomic_store(&L->wake_at, -1);
      else
        atomic_fetch_sub(&L->waiters, 1);
      break;
    }
  }
  /* Back to work, but not after the launch's last wait (pto__rt_pool_idle follows). */
  if (pred != pred_all_done) pto__rt_pool_resume(&L->w->pool);
}

static void wait_until(pto__rt_launch *L, pto__rt_pred pred, const void *arg) {
  wait_until_at(L, pred, arg, -1);
}

static int pred_task_done(pto__rt_launch *L, const void *arg) {
  (void)L;
  return atomic_load(&((const pto__rt_task *)arg)->done) != 0;
}

static int pred_all_done(pto__rt_launch *L, const void *arg) {
  (void)arg;
  return atomic_load(&L->outstanding) == 0;
}

/* Some task completed since *arg was read, or none is left. */
static int pred_progress(pto__rt_launch *L, const void *arg) {
  return atomic_load(&L->ncompleted) != *(const unsigned long *)arg ||
         atomic_load(&L->outstanding) == 0;
}

/* ---- intermediates ------------------------------------------------------------------------- */

static void interm_release(pto__rt_launch *L, pto__rt_interm *im) {
  if (atomic_fetch_sub(&im->refs, 1) == 1) pto__rt_devmem_free(&L->w->mem, im->addr);
}

static void end_scope(pto__rt_launch *L) {
  pto__rt_interm *im = L->scopes[--L->nscopes];
  while (im) {
    pto__rt_interm *next = im->next;
    im->scope_ended = 1;
    interm_release(L, im);
    im = next;
  }
}

/* ---- task execution ------------------------------------------------------------------------ */

static const char *kernel_err_text(int32_t rc) {
  switch (rc) {
  case PTO_KERNEL_ERR_DIV_ZERO: return "integer division by zero";
  case PTO_KERNEL_ERR_DIM_MISMATCH: return "a dynamic dimension bound twice with different values";
  case PTO_KERNEL_ERR_SCRATCH: return "scratch arena smaller than the kernel's footprint";
  case PTO_KERNEL_ERR_LOAD_OFFSET: return "tile.load";
  case PTO_KERNEL_ERR_STORE_OFFSET: return "tile.store";
  case PTO_KERNEL_ERR_INDEX: return "an index out of range";
  case PTO_KERNEL_ERR_LOOP_STEP: return "a for loop's step is zero";
  default: return "kernel error";
  }
}

/* The detail of a window offset out of range (PTO_KERNEL_ERR_DIST_OFFSET), in the interpreter's
 * words, naming the rank, the op, the window (as the host program named it, and the kernel's
 * tensor argument) and the offset. */
static void dist_offset_err_text(const pto_core_ctx *ctx, const pto__rt_task *t, char *out,
                                 size_t n) {
  static const char *const ops[] = {"dist.notify", "dist.wait", "dist.remote_load",
                                    "dist.remote_store"};
  long long off = (long long)ctx->err_detail[0];
  uint64_t w = (uint64_t)ctx->err_detail[1];
  int dim = (int)(w & 7), op = (int)(w >> 3 & 3), tensor = (int)(w >> 5 & 255);
  long long ext1 = (long long)(w >> 13);
  int rank = ctx->dist ? ctx->dist->rank : -1;
  char win[48] = "its window";
  if (tensor < t->ntensors &&
      !pto__dist_window_name(ctx->dist, t->tensors[tensor].data, win + 7, sizeof win - 7))
    memcpy(win, "window ", 7);
  if (ext1)
    snprintf(out, n,
             "%s on rank %d: offset %lld of dim %d is outside the extent %lld of %s (the "
             "kernel's tensor argument %d)",
             ops[op], rank, off, dim, ext1 - 1, win, tensor);
  else
    snprintf(out, n,
             "%s on rank %d: offset %lld of dim %d of %s (the kernel's tensor argument %d) is "
             "negative",
             ops[op], rank, off, dim, win, tensor);
}

/* The detail of a tile offset out of range (pto/kernel_abi.h), in the interpreter's words. */
static void offset_err_text(const pto_core_ctx *ctx, char *out, size_t n) {
  long long off = (long long)ctx->err_detail[0], why = (long long)ctx->err_detail[1];
  if (why < 8)
    snprintf(out, n, "offset %lld of dim %lld is negative", off, why);
  else
    snprintf(out, n, "offset %lld of dim %lld is outside the tensor's extent %lld", off, why % 8,
             why / 8 - 1);
}

/* PTO_KERNEL_ERR_INDEX: the op (its source position when the program has one), the position of
 * the index and its value (pto/kernel_abi.h). */
static pto_status index_error(pto__rt_launch *L, const pto__rt_task *t, const char *name,
                              int32_t rc, const pto_core_ctx *ctx) {
  int64_t d = ctx->err_detail[0];
  int32_t op = PTO_KERNEL_INDEX_OP(d);
  char where[512];
  if (pto_program_kernel_op_text(L->prog, name, op, where, sizeof where))
    snprintf(where, sizeof where, "op %d of the kernel", (int)op);
  int64_t col = PTO_KERNEL_INDEX_COL(d), row = PTO_KERNEL_INDEX_ROW(d);
  if (d >= 0 && (row & PTO_KERNEL_INDEX_SUB) && !(col & PTO_KERNEL_INDEX_SUB)) {
    /* a gather_rows' or scatter_rows' row index, with the tensor's rows (the interpreter's
     * words: ir/interp.c rows_check) */
    const char *index = NULL, *table = NULL;
    char ix[160], tab[160];
    long long r = (long long)(row & ~(int64_t)PTO_KERNEL_INDEX_SUB);
    if (!pto_program_kernel_op_operands(L->prog, name, op, &index, &table)) {
      snprintf(ix, sizeof ix, "%%%s[%lld,0]", index, r);
      snprintf(tab, sizeof tab, "%%%s", table);
    } else { /* a program without its positions */
      snprintf(ix, sizeof ix, "the index at [%lld,0]", r);
      snprintf(tab, sizeof tab, "the tensor");
    }
    uint64_t rows = (uint64_t)ctx->err_detail[1] >> 32;
    char range[48];
    if (rows)
      snprintf(range, sizeof range, "0 to %llu", (unsigned long long)(rows - 1));
    else
      snprintf(range, sizeof range, "it has no rows");
    return pto_status_make(PTO_STATUS_LAUNCH,
                           "kernel '%s' (id %d, task %u) failed with code %d (%s): %s: %s = %d is "
                           "not a row of %s (%s); nothing outside a tensor was read or written",
                           name, t->kernel_id, t->seq, rc, kernel_err_text(rc), where, ix,
                           (int)(int32_t)(uint32_t)ctx->err_detail[1], tab, range);
  }
  if (d >= 0 && !(row & PTO_KERNEL_INDEX_SUB) && (col & PTO_KERNEL_INDEX_SUB) == 0 &&
      (col & PTO_KERNEL_INDEX_POS)) {
    /* a tile.gather's position, with the source tile's positions (the interpreter's words:
     * ir/interp.c op_tile_gather) */
    return pto_status_make(
        PTO_STATUS_LAUNCH,
        "kernel '%s' (id %d, task %u) failed with code %d (%s): %s: index %d at [%lld,%lld] is "
        "outside [0, %lld) (positions of the source tile); nothing outside a tensor was read or "
        "written",
        name, t->kernel_id, t->seq, rc, kernel_err_text(rc), where,
        (int)(int32_t)(uint32_t)ctx->err_detail[1], (long long)row,
        (long long)(col & ~(int64_t)PTO_KERNEL_INDEX_POS),
        (long long)((uint64_t)ctx->err_detail[1] >> 32));
  }
  if (d & PTO_KERNEL_INDEX_WIDE) { /* gather_rows' column offset, m outside the field */
    int64_t m = PTO_KERNEL_INDEX_WIDE_M(d);
    if (m < 0)
      return pto_status_make(
          PTO_STATUS_LAUNCH,
          "kernel '%s' (id %d, task %u) failed with code %d (%s): %s: offset %lld of dim 1: no "
          "offset fits (the rows' columns are %lld more than the tensor's); nothing outside a "
          "tensor was read or written",
          name, t->kernel_id, t->seq, rc, kernel_err_text(rc), where, (long long)ctx->err_detail[1],
          (long long)-m);
    return pto_status_make(
        PTO_STATUS_LAUNCH,
        "kernel '%s' (id %d, task %u) failed with code %d (%s): %s: offset %lld of dim 1 is "
        "outside 0..%lld (the rows' columns must fit in the tensor); nothing outside a tensor was "
        "read or written",
        name, t->kernel_id, t->seq, rc, kernel_err_text(rc), where, (long long)ctx->err_detail[1],
        (long long)m);
  }
  if (col & PTO_KERNEL_INDEX_SUB) { /* the offset of a dim: extract/assemble, or gather_rows' */
    int of_tensor = (row & PTO_KERNEL_INDEX_SUB) != 0;
    return pto_status_make(
        PTO_STATUS_LAUNCH,
        "kernel '%s' (id %d, task %u) failed with code %d (%s): %s: offset %lld of dim %lld is "
        "outside 0..%lld (%s); nothing outside a tensor was read or written",
        name, t->kernel_id, t->seq, rc, kernel_err_text(rc), where, (long long)ctx->err_detail[1],
        (long long)(row & ~(int64_t)PTO_KERNEL_INDEX_SUB),
        (long long)(col & ~(int64_t)PTO_KERNEL_INDEX_SUB),
        of_tensor ? "the rows' columns must fit in the tensor"
                  : "the sub-tile must fit in the tile");
  }
  return pto_status_make(PTO_STATUS_LAUNCH,
                         "kernel '%s' (id %d, task %u) failed with code %d (%s): %s: value %lld "
                         "at [%lld,%lld]; nothing outside a tensor was read or written",
                         name, t->kernel_id, t->seq, rc, kernel_err_text(rc), where,
                         (long long)ctx->err_detail[1], (long long)PTO_KERNEL_INDEX_ROW(d),
                         (long long)PTO_KERNEL_INDEX_COL(d));
}

/* A successor that became ready and runs on a core of core's type is left in *out_next, for the
 * caller (that core) to run. */
static void complete(pto__rt_launch *L, pto__rt_task *t, pto__rt_task **out_next,
                     pto__rt_core *core) {
  int core_type = core->type;
  /* Recorded before the launch can see the task done (outstanding), which ends the launch. */
  uint64_t c0 = L->record_phases ? pto__rt_now_ns() : 0;
  pthread_mutex_t *mu = stripe_of(L, t);
  pthread_mutex_lock(mu);
  atomic_store(&t->done, 1);
  int32_t n = t->nsucc;
  pto__rt_task **succ = t->succ;
  int gated = !(t->early_resolve && t->started); /* its edges still hold their successors' gates */
  pthread_mutex_unlock(mu);
  /* succ no longer changes: add_edge skips a task that is done. */
  pto__rt_task *ready[16], *next = NULL;
  int nr = 0;
  for (int32_t i = 0; i < n; i++) {
    pto__rt_task *s = succ[i];
    if (atomic_fetch_sub(&s->pending, 1) != 1) {
      /* Not ready yet; staged early when every predecessor left is an early_resolve one that
       * runs. */
      if (gated && atomic_fetch_sub(&s->gate, 1) == 1 && !atomic_exchange(&s->queued, 1))
        s->t_staged = 1; /* marks it staged; the core that takes it writes the time */
      else
        continue;
    } else if (atomic_exchange(&s->queued, 1)) {
      continue; /* staged earlier: a core has it, or will, and waits for it to be ready */
    } else if (!next && out_next && !L->w->pool.shuffle && s->core_type == core_type &&
               s->block_num == 1) {
      next = s; /* run it here: no queue round trip, warm caches */
      continue;
    }
    ready[nr++] = s;
    if (nr == 16) {
      pto__rt_pool_push(&L->w->pool, ready, nr);
      nr = 0;
    }
  }
  if (nr) pto__rt_pool_push(&L->w->pool, ready, nr);
  for (int32_t i = 0; i < t->ninterms; i++)
    interm_release(L, t->interms[i]);
  if (c0) pto__rt_core_phase(core, PTO_SCHED_PHASE_COMPLETE, c0, pto__rt_now_ns());
  atomic_fetch_add(&L->ncompleted, 1);
  long left = atomic_fetch_sub(&L->outstanding, 1) - 1;
  if (atomic_load(&L->waiters) || left <= atomic_load(&L->wake_at)) {
    pthread_mutex_lock(&L->done_mu);
    pthread_cond_broadcast(&L->done_cv);
    pthread_mutex_unlock(&L->done_mu);
  }
  if (out_next) *out_next = next;
}

/* The predicate's element, read now that the task is ready, against its target. */
static int predicate_holds(const pto__rt_task *t) {
  const void *p = t->pred_elem;
  int64_t iv = 0;
  double fv = 0;
  int is_float = 1;
  switch (t->pred_dtype) {
  case PTO_DTYPE_F32: {
    float f;
    memcpy(&f, p, 4);
    fv = f;
    break;
  }
  case PTO_DTYPE_F64: memcpy(&fv, p, 8); break;
  case PTO_DTYPE_F16:
  case PTO_DTYPE_BF16: {
    uint16_t h;
    memcpy(&h, p, 2);
    fv = t->pred_dtype == PTO_DTYPE_BF16 ? pto_bf16_to_f32(h) : pto_f16_to_f32(h);
    break;
  }
  default: {
    is_float = 0;
    size_t n = pto_dtype_size((pto_dtype)t->pred_dtype);
    uint64_t b = 0;
    memcpy(&b, p, n);
    int sgn = t->pred_dtype == PTO_DTYPE_I8 || t->pred_dtype == PTO_DTYPE_I16 ||
              t->pred_dtype == PTO_DTYPE_I32 || t->pred_dtype == PTO_DTYPE_I64 ||
              t->pred_dtype == PTO_DTYPE_INDEX;
    if (sgn && n < 8 && (b >> (n * 8 - 1)) & 1) b |= ~0ull << (n * 8);
    iv = (int64_t)b;
  }
  }
  int c = is_float ? (fv < (double)t->pred_target   ? -1
                      : fv > (double)t->pred_target ? 1
                                                    : 0)
                   : (iv < t->pred_target   ? -1
                      : iv > t->pred_target ? 1
                                            : 0);
  switch (t->pred_op) {
  case PTO_ORCH_PRED_EQ: return c == 0;
  case PTO_ORCH_PRED_NE: return c != 0;
  case PTO_ORCH_PRED_GT: return c > 0;
  case PTO_ORCH_PRED_LT: return c < 0;
  case PTO_ORCH_PRED_GE: return c >= 0;
  case PTO_ORCH_PRED_LE: return c <= 0;
  default: return 1;
  }
}

static int pred_all_arrived(pto__rt_launch *L, const void *arg) {
  (void)L;
  const pto__rt_task *t = arg;
  return atomic_load(&t->arrived) == t->block_num;
}

static int pred_task_ready(pto__rt_launch *L, const void *arg) {
  (void)L;
  return atomic_load(&((const pto__rt_task *)arg)->pending) == 0;
}

/* Every block of an early_resolve task is taken: its successors whose other predecessors are done
 * or running early_resolve tasks too may now be staged on cores, to start the moment it ends. */
void pto__rt_task_started(pto__rt_launch *L, pto__rt_task *t) {
  pthread_mutex_t *mu = stripe_of(L, t);
  pto__rt_task *stage[16];
  int ns = 0;
  pthread_mutex_lock(mu);
  t->started = 1;
  for (int32_t i = 0; i < t->nsucc; i++) {
    pto__rt_task *s = t->succ[i];
    if (atomic_fetch_sub(&s->gate, 1) != 1 || atomic_load(&s->pending) == 0 ||
        atomic_exchange(&s->queued, 1))
      continue;
    s->t_staged = 1;
    stage[ns++] = s;
    if (ns == 16) {
      pto__rt_pool_push(&L->w->pool, stage, ns);
      ns = 0;
    }
  }
  pthread_mutex_unlock(mu);
  if (ns) pto__rt_pool_push(&L->w->pool, stage, ns);
}

static void atomic_min_u64(atomic_ullong *a, uint64_t v) {
  unsigned long long cur = atomic_load_explicit(a, memory_order_relaxed);
  while (v < cur && !atomic_compare_exchange_weak(a, &cur, v)) {
  }
}
static void atomic_max_u64(atomic_ullong *a, uint64_t v) {
  unsigned long long cur = atomic_load_explicit(a, memory_order_relaxed);
  while (v > cur && !atomic_compare_exchange_weak(a, &cur, v)) {
  }
}

void pto__rt_task_execute(pto__rt_launch *L, pto__rt_task *t, pto__rt_core *core, int32_t block,
                          int stage, pto__rt_task **out_next) {
  if (atomic_load(&t->pending) != 0) {
    /* Staged early (its producers run with allow_early_resolve): this core is its now, and it
     * starts the moment the last of them ends. */
    if (block == 0) t->t_staged = pto__rt_now_ns();
    wait_until(L, pred_task_ready, t);
  }
  if (t->sync_start) {
    /* require_sync_start: every block waits until all have a core, then they start together. */
    if (atomic_fetch_add(&t->arrived, 1) + 1 == t->block_num) {
      pthread_mutex_lock(&L->done_mu);
      pthread_cond_broadcast(&L->done_cv);
      pthread_mutex_unlock(&L->done_mu);
    } else {
      wait_until(L, pred_all_arrived, t);
    }
  }
  if (L->dump_level && !atomic_load_explicit(&L->failed, memory_order_relaxed))
    pto__rt_dump_before(L, t);
  if (!atomic_load_explicit(&L->failed, memory_order_relaxed)) {
    pto_core_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.core_id = core->id;
    ctx.ncores = L->w->pool.ncores;
    ctx.core_type = core->type;
    ctx.scratch = core->scratch;
    ctx.scratch_size = core->scratch_size;
    ctx.dist = L->w->dist;
    ctx.block_num = t->block_num;
    ctx.block_idx = block;
    ctx.flags = t->stream_stores ? PTO_CORE_STREAM_STORES : 0;
    if (L->w->pool.shuffle) {
      /* Test mode: perturb timing so that unordered tasks interleave differently. */
      uint64_t r = pto__rt_xorshift64(&core->rng);
      if ((r & 3) == 0)
        sched_yield();
      else if ((r & 3) == 1)
        for (unsigned i = (unsigned)(r >> 8) % 2048; i; i--)
          pto__rt_cpu_relax();
    }
    uint64_t t0 = pto__rt_now_ns();
    if (block == 0) t->core = core->id;
    if (t->block_num == 1) t->t_start = t0;
    /* Its successors are staged once it runs: after its start time, which their staging times
     * never precede. */
    if (stage) pto__rt_task_started(L, t);
    stage = 0;
    int32_t rc = PTO_KERNEL_OK;
    /* Every block reads the predicate itself: the element is final once the task is ready. */
    int skip = !t->fn ? 2 : t->pred_op != PTO_ORCH_PRED_NONE && !predicate_holds(t) ? 1 : 0;
    if (block == 0) t->skipped = skip;
    if (!skip) {
      atomic_store_explicit(&core->kernel_prog, L->prog, memory_order_relaxed);
      atomic_store_explicit(&core->kernel_t0, t0, memory_order_relaxed);
      atomic_store_explicit(&core->kernel, t->kernel_id + 1, memory_order_release);
      rc = t->fn(t->tensors, t->scalars, &ctx);
      atomic_store_explicit(&core->kernel, 0, memory_order_relaxed);
    }
    uint64_t t1 = pto__rt_now_ns();
    if (t->block_num == 1) {
      t->t_end = t1;
    } else {
      atomic_min_u64(&t->t_first, t0);
      atomic_max_u64(&t->t_last, t1);
      if (t->brec) t->brec[block] = (pto_block_record){core->id, t0, t1};
    }
    if (rc != PTO_KERNEL_OK) {
      const char *name = pto_program_kernel_name(L->prog, t->kernel_id);
      pto_status s;
      char detail[256];
      if (rc == PTO_KERNEL_ERR_LOAD_OFFSET || rc == PTO_KERNEL_ERR_STORE_OFFSET) {
        offset_err_text(&ctx, detail, sizeof detail);
        s = pto_status_make(PTO_STATUS_LAUNCH,
                            "kernel '%s' (id %d, task %u) failed with code %d (%s: %s)", name,
                            t->kernel_id, t->seq, rc, kernel_err_text(rc), detail);
      } else if (rc == PTO_KERNEL_ERR_DIST_OFFSET) {
        dist_offset_err_text(&ctx, t, detail, sizeof detail);
        s = pto_status_make(PTO_STATUS_LAUNCH,
                            "kernel '%s' (id %d, task %u) failed with code %d (%s)", name,
                            t->kernel_id, t->seq, rc, detail);
      } else if (rc == PTO_KERNEL_ERR_DIM_MISMATCH)
        s = pto_status_make(PTO_STATUS_LAUNCH,
                            "kernel '%s' (id %d, task %u) failed with code %d (%s: %lld and %lld)",
                            name, t->kernel_id, t->seq, rc, kernel_err_text(rc),
                            (long long)ctx.err_detail[0], (long long)ctx.err_detail[1]);
      else if (rc == PTO_KERNEL_ERR_INDEX)
        s = index_error(L, t, name, rc, &ctx);
      else if (rc == PTO_KERNEL_ERR_DIV_ZERO && ctx.err_detail[1] == 1 && ctx.err_detail[0] >= 0 &&
               ctx.err_detail[0] <= INT32_MAX &&
               !pto_program_kernel_op_text(L->prog, name, (int32_t)ctx.err_detail[0], detail,
                                           sizeof detail))
        s = pto_status_make(PTO_STATUS_LAUNCH,
                            "kernel '%s' (id %d, task %u) failed with code %d (%s): %s", name,
                            t->kernel_id, t->seq, rc, kernel_err_text(rc), detail);
      else
        s = pto_status_make(PTO_STATUS_LAUNCH,
                            "kernel '%s' (id %d, task %u) failed with code %d (%s)", name,
                            t->kernel_id, t->seq, rc, kernel_err_text(rc));
      if (t->block_num > 1) s = pto_status_annotate(s, "block %d of %d", block, t->block_num);
      char where[512], why[512];
      if (rc == PTO_KERNEL_ERR_DIM_MISMATCH &&
          !pto_program_explain_dim_mismatch(L->prog, t->op_id, t->tensors, t->ntensors,
                                            ctx.err_detail[0], ctx.err_detail[1], why,
                                            sizeof why)) {
        pto_status x = pto_status_make(pto_status_code_of(s), "%s: %s", pto_status_message(s), why);
        pto_status_free(s);
        s = x;
      }
      if (!pto_program_op_text(L->prog, t->op_id, where, sizeof where))
        s = pto_status_annotate(s, "%s", where);
      pto__rt_launch_fail(L, s);
    }
  }
  if (stage) pto__rt_task_started(L, t); /* the launch failed: the kernel did not run */
  if (t->block_num > 1) {
    if (atomic_fetch_sub(&t->blocks_left, 1) != 1) {
      if (out_next) *out_next = NULL;
      return;
    }
    /* The last block: the task's span is its blocks'. */
    uint64_t last = atomic_load(&t->t_last);
    if (last) {
      t->t_start = atomic_load(&t->t_first);
      t->t_end = last;
    }
  }
  if (L->dump_level) pto__rt_dump_block_done(L, t);
  complete(L, t, out_next, core);
}

/* ---- the orchestration API ----------------------------------------------------------------- */

/* A submitted task's name for messages ("kernel 'k'" or "a dummy task"), formatted only when a
 * message needs it: a submit that succeeds formats nothing. */
typedef struct kname_t {
  pto__rt_launch *L;
  int32_t kernel_id;
  char buf[160];
} kname_t;

static const char *kn(kname_t *k) {
  if (!k->buf[0]) {
    if (k->kernel_id < 0)
      snprintf(k->buf, sizeof k->buf, "a dummy task");
    else
      snprintf(k->buf, sizeof k->buf, "kernel '%s'",
               pto_program_kernel_name(k->L->prog, k->kernel_id));
  }
  return k->buf;
}

/* Names the tensor in a message: "submit of kernel 'k': argument 2", or name when kname is NULL.
 * Formatted only when there is a message to write. */
typedef struct what_ctx {
  const char *name;
  kname_t *kname;
  int argi;
} what_ctx;

__attribute__((format(printf, 4, 5))) static int
view_fail_code(pto__rt_launch *L, pto_status_code code, const what_ctx *wc, const char *fmt, ...) {
  char msg[384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (wc->kname)
    return orch_fail_code(L, code, "submit of %s: argument %d: %s", kn(wc->kname), wc->argi, msg);
  return orch_fail_code(L, code, "%s: %s", wc->name, msg);
}
#define view_fail(L, wc, ...) view_fail_code(L, PTO_STATUS_LAUNCH, wc, __VA_ARGS__)

static int check_view(pto__rt_launch *L, const pto_orch_tensor *t, const what_ctx *wc,
                      pto__rt_track **out_track, pto__rt_region *out_r) {
  if (t->rank < 0 || t->rank > PTO_MAX_RANK)
    return view_fail(L, wc, "rank %d is out of range (0 to %d)", t->rank, PTO_MAX_RANK);
  if (t->dtype < 0 || t->dtype >= PTO_DTYPE_COUNT)
    return view_fail(L, wc, "dtype %d is not a dtype", t->dtype);
  for (int d = 0; d < t->rank; d++)
    if (t->shape[d] < 0)
      return view_fail(L, wc, "dim %d has a negative extent %lld", d, (long long)t->shape[d]);
  const char *err = NULL;
  int oom = 0;
  pto__rt_track *tr = get_track(L, t->buffer, &err, &oom);
  if (!tr)
    return view_fail_code(L, oom ? PTO_STATUS_OUT_OF_MEMORY : PTO_STATUS_LAUNCH, wc,
                          "buffer 0x%llx %s", (unsigned long long)t->buffer, err);
  if (tr->interm && tr->interm->scope_ended)
    return view_fail(L, wc, "the tensor was created (tensor.create) in a scope that has ended");
  if (make_region(t, out_r) != 0) return view_fail(L, wc, "the view's extent overflows");
  if (out_r->lo != out_r->hi && (out_r->lo < tr->buffer || out_r->hi > tr->buffer + tr->size))
    return view_fail(L, wc,
                     "the view covers bytes [%lld, %lld) of its buffer, which has %llu bytes",
                     (long long)(out_r->lo - tr->buffer), (long long)(out_r->hi - tr->buffer),
                     (unsigned long long)tr->size);
  *out_track = tr;
  return 0;
}

/* Fewer than the window's low mark tasks in flight, or a failure. */
static int pred_below_low_mark(pto__rt_launch *L, const void *arg) {
  (void)arg;
  return atomic_load(&L->outstanding) <= (long)(L->w->cfg.max_inflight_tasks / 2) ||
         atomic_load(&L->failed);
}

/* What a task carries beyond its kernel and arguments. */
typedef struct submit_extra {
  int32_t slot;        /* PTO_ORCH_SLOT_* */
  int64_t group;       /* the mixed task's first kernel's task, or -1: this one */
  const int64_t *deps; /* explicit dependencies */
  int32_t ndeps;
  int64_t after; /* one more dependency (the previous subtask of a mixed task), or -1 */
  int32_t block_num;
  int32_t early_resolve;
  uint64_t dump_mask;
  int32_t dump_total; /* the tasks of its group (tensor dump) */
  int32_t sync_start;
  int32_t pred_op;
  const pto_orch_tensor *pred_tensor;
  const int64_t *pred_idx;
  int64_t pred_target;
  const int32_t *group_kernels; /* a mixed task's kernel ids by slot (tensor dump), or NULL */
} submit_extra;

static int in_manual_scope(const pto__rt_launch *L) {
  return L->scope_modes[L->nscopes - 1] == PTO_ORCH_SCOPE_MANUAL;
}

static int remember_task(pto__rt_launch *L, pto__rt_task *t) {
  if (pto_grow(&L->task_vec, sizeof *L->task_vec, &L->captasks, (size_t)t->seq + 1)) return -1;
  L->task_vec[t->seq] = t;
  return 0;
}

/* p (a task id of this launch) must finish before t starts; a negative id is no dependency. */
static int add_dep_id(pto__rt_launch *L, pto__rt_task *t, int64_t id, kname_t *kname) {
  if (id < 0) return 0;
  if (id >= (int64_t)t->seq)
    return orch_fail(L,
                     "submit of %s: dependency on task %lld, which was not submitted before it "
                     "in this launch (%u tasks so far)",
                     kn(kname), (long long)id, t->seq);
  /* A mixed task's kernels are one task: t waits for every one of them. */
  uint32_t g = L->task_vec[id]->group;
  for (uint32_t j = g; j < t->seq && L->task_vec[j]->group == g; j++)
    if (L->task_vec[j]->group != t->group) add_edge(L, L->task_vec[j], t);
  return 0;
}

/* 1, after failing the launch: out of memory. */
static int32_t submit_oom(pto__rt_launch *L, kname_t *kname) {
  pto__rt_launch_fail(
      L, pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory submitting %s", kn(kname)));
  return 1;
}

/* Validates the predicate's element and returns its host address, or NULL after failing. */
static const void *predicate_element(pto__rt_launch *L, const submit_extra *x, kname_t *kname,
                                     pto__rt_track **out_track, pto__rt_region *out_r) {
  what_ctx wc = {NULL, kname, -1};
  pto__rt_region whole;
  const pto_orch_tensor *t = x->pred_tensor;
  if (!t) {
    orch_fail(L, "submit of %s: a predicate without a tensor", kn(kname));
    return NULL;
  }
  if (check_view(L, t, &wc, out_track, &whole) != 0) return NULL;
  int64_t off = 0;
  for (int d = 0; d < t->rank; d++) {
    if (x->pred_idx[d] < 0 || x->pred_idx[d] >= t->shape[d]) {
      orch_fail(L, "submit of %s: predicate index %lld of dim %d is out of range [0, %lld)",
                kn(kname), (long long)x->pred_idx[d], d, (long long)t->shape[d]);
      return NULL;
    }
    off += x->pred_idx[d] * t->stride[d];
  }
  pto_orch_tensor e = *t;
  e.addr = t->addr + (uint64_t)(off * (int64_t)pto_dtype_size((pto_dtype)t->dtype));
  for (int d = 0; d < t->rank; d++)
    e.shape[d] = 1;
  make_region(&e, out_r);
  /* The region outlives this call (in the tensor map): its box, from the launch's arena. */
  int64_t *box = pto__rt_bump_alloc(&L->bump, 2 * PTO_MAX_RANK * sizeof *box);
  if (!box) {
    submit_oom(L, kname);
    return NULL;
  }
  memcpy(box, e.shape, PTO_MAX_RANK * sizeof *box);
  memcpy(box + PTO_MAX_RANK, e.stride, PTO_MAX_RANK * sizeof *box);
  out_r->shape = box;
  out_r->stride = box + PTO_MAX_RANK;
  return pto__rt_devmem_host(&L->w->mem, e.addr);
}

/* What one submit gathers between its phases: the argument counts, the task's arrays (from the
 * launch's arena), and the tracks and regions of its tensor arguments and predicate, which are
 * needed during this submit only (on the stack when few). */
typedef struct submit_work {
  int32_t nt, ns;        /* tensor and scalar arguments */
  int32_t nim;           /* distinct tensor.create buffers among the tensors */
  pto_kernel_tensor *kt; /* per tensor argument: the kernel's view */
  uint64_t *sc;          /* per scalar argument */
  pto__rt_interm **ims;  /* nim of them */
  pto__rt_track **trs;   /* per tensor argument */
  pto__rt_region *rs;
  pto__rt_track *ptr; /* the predicate element's buffer, or NULL: no predicate */
  pto__rt_region pr;
  const void *pelem; /* the predicate element's host address */
  int stream_stores; /* PTO_CORE_STREAM_STORES for the kernel */
  pto__rt_track *trs_small[8];
  pto__rt_region rs_small[8];
} submit_work;

/* Flow control: an orchestration far ahead of the cores waits, which bounds the tasks in flight
 * (the tensor map's cost does not depend on their number). */
static void wait_for_window(pto__rt_launch *L) {
  if (atomic_load_explicit(&L->outstanding, memory_order_relaxed) >=
      (long)L->w->cfg.max_inflight_tasks)
    wait_until_at(L, pred_below_low_mark, NULL, (long)(L->w->cfg.max_inflight_tasks / 2));
}

/* The cores of type that can run tasks at once: all of them, or in a shared pool at most its
 * threads (the default's 2n AIV cores run on n threads). What the orchestration sizes a launch on
 * (rt_available_aiv_count), and the most blocks a require_sync_start task may have: its blocks
 * wait, with no deadline, until every one has a thread. */
static int32_t cores_at_once(const pto__rt_pool *pool, int core_type) {
  int n = pool->ncores_of[core_type];
  return pool->shared && pool->nthreads < n ? pool->nthreads : n;
}

/* Phase 1, nothing allocated yet: the kernel, core type, block count, predicate op and argument
 * kinds are valid, and w->nt, w->ns count the tensor and scalar arguments. 1 after failing. */
static int32_t check_submit(pto__rt_launch *L, int32_t kernel_id, int32_t core_type,
                            const pto_orch_task_arg *args, int32_t nargs, const submit_extra *x,
                            kname_t *kname, submit_work *w) {
  int nk = pto_program_kernel_count(L->prog);
  if (kernel_id < -1 || kernel_id >= nk)
    return orch_fail(L, "submit: kernel id %d is out of range (the program has %d kernels)",
                     kernel_id, nk);
  if (core_type != PTO_CORE_AIV && core_type != PTO_CORE_AIC)
    return orch_fail(L, "submit of %s: core type %d is neither AIV nor AIC", kn(kname), core_type);
  int declared = kernel_id >= 0 ? pto_program_kernel_core_type(L->prog, kernel_id) : -1;
  if (declared >= 0 && declared != core_type)
    return orch_fail(L,
                     "submit of %s: submitted to an %s core, but the kernel is an %s kernel "
                     "(use rt_submit_%s_task)",
                     kn(kname), core_type == PTO_CORE_AIC ? "AIC" : "AIV",
                     declared == PTO_CORE_AIC ? "AIC" : "AIV",
                     declared == PTO_CORE_AIC ? "aic" : "aiv");
  if (nargs < 0 || (nargs > 0 && !args))
    return orch_fail(L, "submit of %s: %d arguments", kn(kname), nargs);
  if (x->block_num < 0 || x->block_num > 65535)
    return orch_fail(L, "submit of %s: block_num %d is out of range (1 to 65535)", kn(kname),
                     x->block_num);
  if (x->sync_start && x->block_num > cores_at_once(&L->w->pool, core_type))
    return orch_fail(L,
                     "submit of %s: require_sync_start with block_num %d, more than the %d %s "
                     "cores",
                     kn(kname), x->block_num, cores_at_once(&L->w->pool, core_type),
                     core_type == PTO_CORE_AIC ? "AIC" : "AIV");
  if (x->pred_op < PTO_ORCH_PRED_NONE || x->pred_op > PTO_ORCH_PRED_LE)
    return orch_fail(L, "submit of %s: predicate op %d is not a PredicateOp", kn(kname),
                     x->pred_op);
  w->nt = w->ns = 0;
  for (int32_t i = 0; i < nargs; i++) {
    if (args[i].kind == PTO_ORCH_ARG_SCALAR)
      w->ns++;
    else if (args[i].kind >= PTO_ORCH_ARG_IN && args[i].kind <= PTO_ORCH_ARG_INOUT)
      w->nt++;
    else
      return orch_fail(L, "submit of %s: argument %d has kind %d", kn(kname), i, args[i].kind);
  }
  return 0;
}

/* Phase 2a: the task and its argument arrays exist (uninitialized) in the launch's arena, and
 * w's scratch arrays have room for every tensor argument. NULL after failing. */
static pto__rt_task *alloc_task(pto__rt_launch *L, kname_t *kname, submit_work *w) {
  int32_t nt = w->nt;
  pto__rt_task *t = pto__rt_bump_alloc(&L->bump, sizeof *t);
  w->kt = pto__rt_bump_alloc(&L->bump, (size_t)(nt ? nt : 1) * sizeof *w->kt);
  w->sc = pto__rt_bump_alloc(&L->bump, (size_t)(w->ns ? w->ns : 1) * sizeof *w->sc);
  w->ims = pto__rt_bump_alloc(&L->bump, (size_t)(nt ? nt : 1) * sizeof *w->ims);
  w->trs = nt <= 8 ? w->trs_small : pto__rt_bump_alloc(&L->bump, (size_t)nt * sizeof *w->trs);
  w->rs = nt <= 8 ? w->rs_small : pto__rt_bump_alloc(&L->bump, (size_t)nt * sizeof *w->rs);
  if (!t || !w->kt || !w->sc || !w->ims || !w->trs || !w->rs) {
    submit_oom(L, kname);
    return NULL;
  }
  return t;
}

/* Phase 2b: every tensor argument is a valid view of a live buffer, with its kernel view, track
 * and region in w, and the predicate's element (if any) is valid; the scalars are copied. 1
 * after failing. */
static int32_t bind_args(pto__rt_launch *L, const pto_orch_task_arg *args, int32_t nargs,
                         const submit_extra *x, kname_t *kname, submit_work *w) {
  int32_t it = 0, is = 0;
  w->nim = 0;
  /* PTO_CORE_STREAM_STORES: the buffers the task touches hold more than the cache can keep
   * until what it writes is read again */
  int writes = 0;
  uint64_t touched = 0;
  for (int32_t i = 0; i < nargs; i++) {
    const pto_orch_task_arg *a = &args[i];
    if (a->kind == PTO_ORCH_ARG_SCALAR) {
      w->sc[is++] = a->scalar;
      continue;
    }
    what_ctx wc = {NULL, kname, i};
    if (check_view(L, &a->tensor, &wc, &w->trs[it], &w->rs[it]) != 0) return 1;
    writes += a->kind != PTO_ORCH_ARG_IN;
    int seen = 0;
    for (int32_t j = 0; j < it; j++)
      seen |= w->trs[j] == w->trs[it];
    if (!seen) touched += w->trs[it]->size;
    pto_kernel_tensor *k = &w->kt[it];
    memset(k, 0, sizeof *k);
    /* An empty view may point anywhere; give it its buffer's start instead. */
    k->data = pto__rt_devmem_host(&L->w->mem,
                                  w->rs[it].lo == w->rs[it].hi ? a->tensor.buffer : a->tensor.addr);
    for (int d = 0; d < a->tensor.rank; d++) {
      k->shape[d] = a->tensor.shape[d];
      k->stride[d] = a->tensor.stride[d];
    }
    k->rank = a->tensor.rank;
    k->dtype = a->tensor.dtype;
    w->rs[it].shape = k->shape; /* the task's copy: the tensor map keeps the region */
    w->rs[it].stride = k->stride;
    pto__rt_interm *im = w->trs[it]->interm;
    if (im) {
      int dup = 0;
      for (int32_t j = 0; j < w->nim; j++)
        dup |= w->ims[j] == im;
      if (!dup) w->ims[w->nim++] = im;
    }
    it++;
  }
  w->stream_stores = writes > 0 && touched >= L->w->cfg.stream_store_bytes;
  w->ptr = NULL;
  w->pelem = NULL;
  if (x->pred_op != PTO_ORCH_PRED_NONE &&
      !(w->pelem = predicate_element(L, x, kname, &w->ptr, &w->pr)))
    return 1;
  return 0;
}

/* Phase 2c, tensor dump only: the task knows its group's kernels, its scalars' dtypes and its
 * tensor arguments' kinds and starts. 1 after failing. */
static int32_t init_dump_info(pto__rt_launch *L, pto__rt_task *t, const pto_orch_task_arg *args,
                              int32_t nargs, const submit_extra *x, kname_t *kname,
                              const submit_work *w) {
  t->dump_mask = x->dump_mask;
  for (int k = 0, n = 0; k < PTO_ORCH_NSLOTS; k++) {
    t->dump_funcs[k] = -1;
    if (x->group_kernels && x->group_kernels[k] >= 0) t->dump_funcs[n++] = x->group_kernels[k];
  }
  if (!x->group_kernels) t->dump_funcs[0] = t->kernel_id;
  t->scalar_codes = pto__rt_bump_alloc(&L->bump, (size_t)(w->ns ? w->ns : 1));
  t->kinds = pto__rt_bump_alloc(&L->bump, (size_t)(w->nt ? w->nt : 1) * sizeof *t->kinds);
  t->starts = pto__rt_bump_alloc(&L->bump, (size_t)(w->nt ? w->nt : 1) * sizeof *t->starts);
  if (!t->scalar_codes || !t->kinds || !t->starts) return submit_oom(L, kname);
  for (int32_t i = 0, j = 0; i < nargs; i++)
    if (args[i].kind == PTO_ORCH_ARG_SCALAR)
      t->scalar_codes[j++] = args[i].reserved > 0 && args[i].reserved <= PTO_DTYPE_COUNT
                                 ? (uint8_t)args[i].reserved
                                 : 0;
  for (int32_t i = 0, j = 0; i < nargs; i++) {
    if (args[i].kind == PTO_ORCH_ARG_SCALAR) continue;
    t->kinds[j] = (int8_t)args[i].kind;
    t->starts[j++] = args[i].tensor.start_offset;
  }
  return 0;
}

/* Phase 2d: every field of t holds its SUBMITTING value (the state table beside the struct):
 * pending and gate hold the submit's 1, no successor, not queued, not done; its id is the
 * launch's next. Nothing outside this thread sees t yet. 1 after failing. */
static int32_t init_task(pto__rt_launch *L, pto__rt_task *t, int32_t kernel_id, int32_t core_type,
                         const pto_orch_task_arg *args, int32_t nargs, const submit_extra *x,
                         kname_t *kname, const submit_work *w) {
  memset(t, 0, sizeof *t);
  t->fn = kernel_id >= 0 ? pto_program_kernel(L->prog, kernel_id) : NULL;
  t->kernel_id = kernel_id;
  t->core_type = core_type;
  t->block_num = x->block_num > 1 ? x->block_num : 1;
  t->early_resolve = x->early_resolve;
  t->sync_start = x->sync_start && t->block_num > 1;
  if (t->block_num > 1 && L->record_tasks) {
    t->brec = pto__rt_bump_alloc(&L->bump, (size_t)t->block_num * sizeof *t->brec);
    if (!t->brec) return submit_oom(L, kname);
    for (int32_t b = 0; b < t->block_num; b++)
      t->brec[b] = (pto_block_record){-1, 0, 0};
  }
  atomic_init(&t->arrived, 0);
  atomic_init(&t->blocks_left, t->block_num);
  atomic_init(&t->t_first, UINT64_MAX);
  atomic_init(&t->t_last, 0);
  atomic_init(&t->gate, 1);
  atomic_init(&t->queued, 0);
  atomic_init(&t->dump_state, 0);
  atomic_init(&t->dump_left, x->group < 0 ? x->dump_total : 0);
  atomic_init(&t->pending, 1);
  atomic_init(&t->done, 0);
  if (L->dump_level && init_dump_info(L, t, args, nargs, x, kname, w) != 0) return 1;
  t->stream_stores = w->stream_stores;
  t->pred_op = x->pred_op;
  t->pred_elem = w->pelem;
  t->pred_dtype = w->pelem ? x->pred_tensor->dtype : 0;
  t->pred_target = x->pred_target;
  t->op_id = pto_program_current_op(L->prog);
  t->ntensors = w->nt;
  t->nscalars = w->ns;
  t->ninterms = w->nim;
  t->tensors = w->kt;
  t->scalars = w->sc;
  t->interms = w->ims;
  t->seq = L->ntasks;
  t->slot = x->slot;
  t->group = x->group >= 0 ? (uint32_t)x->group : t->seq;
  t->succ = t->inline_succ;
  t->capsucc = (int32_t)(sizeof t->inline_succ / sizeof t->inline_succ[0]);
  return 0;
}

/* Phase 2e: the task is the launch's: found by its id (task_vec), in the list of all tasks,
 * counted in flight (the launch's end waits for it), and holding its tensor.create buffers until
 * it completes. 1 after failing (then none of these holds). */
static int32_t enter_launch(pto__rt_launch *L, pto__rt_task *t, kname_t *kname) {
  if (remember_task(L, t) != 0) return submit_oom(L, kname);
  L->ntasks++;
  if (L->tasks_tail)
    L->tasks_tail->next_all = t;
  else
    L->tasks_head = t;
  L->tasks_tail = t;
  atomic_fetch_add(&L->outstanding, 1);
  for (int32_t j = 0; j < t->ninterms; j++)
    atomic_fetch_add(&t->interms[j]->refs, 1);
  return 0;
}

/* Phase 3: t is ordered after every unfinished task it depends on: the earlier accesses its
 * tensors and predicate conflict with (the tensor map), the creators of its manual_dep tensors,
 * its explicit dependencies and the mixed task's previous kernel. From the first edge on,
 * predecessors completing or starting decrement its pending and gate; the submit's 1 in each keeps
 * it from being queued before phase 4. */
static void wire_dependencies(pto__rt_launch *L, pto__rt_task *t, const pto_orch_task_arg *args,
                              int32_t nargs, const submit_extra *x, kname_t *kname,
                              submit_work *w) {
  int manual = in_manual_scope(L);
  for (int32_t i = 0, it = 0; i < nargs; i++) {
    if (args[i].kind == PTO_ORCH_ARG_SCALAR) continue;
    if (args[i].tensor.manual_dep) {
      /* Creator-only tracking: ordered after the task that made it, nothing else. */
      add_dep_id(L, t, args[i].tensor.owner_task_id, kname);
    } else {
      add_access(L, w->trs[it], t, &w->rs[it], args[i].kind != PTO_ORCH_ARG_IN, manual);
    }
    it++;
  }
  if (w->ptr) add_access(L, w->ptr, t, &w->pr, 0, manual);
  for (int32_t i = 0; i < x->ndeps; i++)
    add_dep_id(L, t, x->deps[i], kname);
  add_dep_id(L, t, x->after, kname);
}

/* Phase 4: the submit drops its holds. t is queued now when no predecessor is left (READY), or
 * staged on a core when those left are all early_resolve tasks that run (STAGED); otherwise the
 * predecessor whose completion or start releases it last queues it. */
static void release_task(pto__rt_launch *L, pto__rt_task *t) {
  if (atomic_fetch_sub(&t->pending, 1) == 1) {
    /* Ready now, at submission: the one moment that needs a clock read to be recorded (a task
     * made ready by a completion is ready when its last dependency ended). */
    if (__builtin_expect(L->record_tasks, 0)) t->t_ready = pto__rt_now_ns();
    if (!atomic_exchange(&t->queued, 1)) pto__rt_pool_submit(&L->w->pool, t);
  } else if (atomic_fetch_sub(&t->gate, 1) == 1 && !atomic_exchange(&t->queued, 1)) {
    /* Its predecessors are all early_resolve tasks that run: staged on a core now. */
    t->t_staged = 1;
    pto__rt_pool_submit(&L->w->pool, t);
  }
}

/* Every task of a launch is kept until the launch ends (its id, dependencies and records), so the
 * bytes its tasks hold are bounded, by the device's memory size but at least 1 GiB (some 1.8
 * million tasks of two tensors): an orchestration that submits without end (a loop of 2^62
 * calls) fails the launch, rather than growing the host's memory until the system kills the
 * process. Also keeps the 32-bit task ids from wrapping. 1 after failing. */
#define PTO__RT_MIN_TASK_RECORD_BYTES (1ull << 30)

static int32_t check_task_records(pto__rt_launch *L, kname_t *kname) {
  const pto__rt_devmem *m = &L->w->mem;
  uint64_t cap = m->size > PTO__RT_MIN_TASK_RECORD_BYTES ? m->size : PTO__RT_MIN_TASK_RECORD_BYTES;
  if (L->bump.live < cap && L->ntasks < UINT32_MAX) return 0;
  return orch_fail_code(
      L, PTO_STATUS_OUT_OF_MEMORY,
      "submit of %s: too many tasks in one launch: its %u tasks so far hold %zu bytes of "
      "records, the most a launch may hold (%llu: the device memory size, at least 1 GiB); a "
      "launch keeps every task it submits until it ends: split the work into several launches, "
      "or raise %s",
      kn(kname), L->ntasks, L->bump.live, (unsigned long long)cap,
      m->knob ? m->knob : "the device memory size");
}

/* One task: kernel_id -1 is a dummy. Returns 0 with the task id in *out_id, or 1 after failing
 * (a failure before phase 2e leaves no trace in the launch; the arena is the launch's). */
static int32_t submit_one(pto__rt_launch *L, int32_t kernel_id, int32_t core_type,
                          const pto_orch_task_arg *args, int32_t nargs, const submit_extra *x,
                          int64_t *out_id) {
  wait_for_window(L);
  if (atomic_load_explicit(&L->failed, memory_order_relaxed)) return 1;
  kname_t kname = {L, kernel_id, {0}};
  submit_work w;
  if (check_submit(L, kernel_id, core_type, args, nargs, x, &kname, &w) != 0 ||
      check_task_records(L, &kname) != 0)
    return 1;
  pto__rt_task *t = alloc_task(L, &kname, &w);
  if (!t || bind_args(L, args, nargs, x, &kname, &w) != 0 ||
      init_task(L, t, kernel_id, core_type, args, nargs, x, &kname, &w) != 0 ||
      enter_launch(L, t, &kname) != 0)
    return 1;
  wire_dependencies(L, t, args, nargs, x, &kname, &w);
  *out_id = t->seq;
  release_task(L, t);
  return atomic_load_explicit(&L->failed, memory_order_relaxed) ? 1 : 0;
}

static void api_scalar_dtypes(void *ctx, const uint8_t *codes, int32_t n) {
  pto__rt_launch *L = ctx;
  L->scalar_codes = n > 0 ? codes : NULL;
  L->nscalar_codes = n > 0 ? n : 0;
}

static int32_t api_submit(void *ctx, int32_t kernel_id, int32_t core_type,
                          const pto_orch_task_arg *args, int32_t nargs) {
  pto__rt_launch *L = ctx;
  submit_extra x = {core_type == PTO_CORE_AIC ? PTO_ORCH_SLOT_AIC : PTO_ORCH_SLOT_AIV0,
                    -1,
                    NULL,
                    0,
                    -1,
                    1,
                    0,
                    0,
                    1,
                    0,
                    PTO_ORCH_PRED_NONE,
                    NULL,
                    NULL,
                    0};
  int64_t id;
  if (kernel_id < 0)
    return orch_fail(L, "submit: kernel id %d is out of range (the program has %d kernels)",
                     kernel_id, pto_program_kernel_count(L->prog));
  return submit_one(L, kernel_id, core_type, args, nargs, &x, &id);
}

/* A mixed task's kernels run side by side, each on a core of its type: one task per kernel, in
 * one group (not ordered among themselves), with the same arguments and dependencies; whoever
 * depends on one of them depends on all. */
static int32_t api_submit_task(void *ctx, const pto_orch_submit *s, int64_t *out_task_id) {
  pto__rt_launch *L = ctx;
  *out_task_id = -1;
  submit_extra x = {PTO_ORCH_SLOT_AIV0,
                    -1,
                    s->deps,
                    s->ndeps,
                    -1,
                    s->block_num,
                    s->allow_early_resolve != 0,
                    s->dump_mask,
                    0,
                    s->require_sync_start != 0,
                    s->pred_op,
                    s->pred_tensor,
                    s->pred_idx,
                    s->pred_target};
  x.group_kernels = s->kernel_ids;
  for (int slot = 0; slot < PTO_ORCH_NSLOTS; slot++)
    x.dump_total += s->kernel_ids[slot] >= 0;
  if (!x.dump_total) x.dump_total = 1;
  if (s->ndeps < 0 || (s->ndeps > 0 && !s->deps))
    return orch_fail(L, "submit: %d explicit dependencies", s->ndeps);
  int any = 0;
  for (int slot = 0; slot < PTO_ORCH_NSLOTS; slot++) {
    if (s->kernel_ids[slot] < 0) continue;
    int type = slot == PTO_ORCH_SLOT_AIC ? PTO_CORE_AIC : PTO_CORE_AIV;
    int64_t id;
    x.slot = slot;
    if (submit_one(L, s->kernel_ids[slot], type, s->args, s->nargs, &x, &id) != 0) return 1;
    if (x.group < 0) x.group = id;
    *out_task_id = id;
    any = 1;
  }
  if (!any) return submit_one(L, -1, PTO_CORE_AIV, s->args, s->nargs, &x, out_task_id);
  return 0;
}

static int32_t api_create_tensor_init(void *ctx, int32_t rank, const int64_t *shape, int32_t dtype,
                                      const void *init_elem, pto_orch_tensor *out);

static int32_t api_create_tensor(void *ctx, int32_t rank, const int64_t *shape, int32_t dtype,
                                 pto_orch_tensor *out) {
  return api_create_tensor_init(ctx, rank, shape, dtype, NULL, out);
}

static int32_t api_create_tensor_init(void *ctx, int32_t rank, const int64_t *shape, int32_t dtype,
                                      const void *init_elem, pto_orch_tensor *out) {
  pto__rt_launch *L = ctx;
  memset(out, 0, sizeof *out);
  if (atomic_load_explicit(&L->failed, memory_order_relaxed)) return 1;
  if (rank < 1 || rank > PTO_MAX_RANK)
    return orch_fail(L, "tensor.create: rank %d is out of range (1 to %d)", rank, PTO_MAX_RANK);
  if (dtype < 0 || dtype >= PTO_DTYPE_COUNT)
    return orch_fail(L, "tensor.create: dtype %d is not a dtype", dtype);
  uint64_t nbytes = pto_dtype_size((pto_dtype)dtype);
  for (int d = 0; d < rank; d++) {
    if (shape[d] < 0)
      return orch_fail(L, "tensor.create: dim %d has a negative extent %lld", d,
                       (long long)shape[d]);
    if (__builtin_mul_overflow(nbytes, (uint64_t)shape[d], &nbytes))
      return orch_fail(L, "tensor.create: the size overflows");
  }
  uint64_t addr;
  pto_status s;
  for (;;) {
    s = pto__rt_devmem_alloc(&L->w->mem, nbytes, 64, "an intermediate (tensor.create)", NULL,
                             &addr);
    /* Back-pressure: running tasks give memory back as they finish (intermediates of ended
     * scopes), so an orchestration that runs ahead waits for them instead of failing. */
    if (!s || pto_status_code_of(s) != PTO_STATUS_OUT_OF_MEMORY || nbytes > L->w->mem.size ||
        atomic_load(&L->outstanding) == 0 || atomic_load(&L->failed))
      break;
    unsigned long seen = atomic_load(&L->ncompleted);
    pto_status_free(s);
    wait_until(L, pred_progress, &seen);
  }
  if (s) {
    pto__rt_launch_fail(L, pto_status_annotate(s, "orchestration"));
    return 1;
  }
  uint8_t *host = pto__rt_devmem_host(&L->w->mem, addr);
  size_t esize = pto_dtype_size((pto_dtype)dtype);
  int zero = 1;
  for (size_t i = 0; init_elem && i < esize; i++)
    zero &= ((const uint8_t *)init_elem)[i] == 0;
  if (zero)
    memset(host, 0, (size_t)nbytes);
  else
    for (uint64_t off = 0; off < nbytes; off += esize)
      memcpy(host + off, init_elem, esize);
  pto__rt_interm *im = pto__rt_bump_alloc(&L->bump, sizeof *im);
  pto__rt_track *tr = NULL;
  uint64_t *v = pto__rt_map_find(&L->tracks, addr);
  if (v) {
    /* The address of a freed intermediate: every task that used it has finished. */
    tr = (pto__rt_track *)(uintptr_t)*v;
    tr->size = nbytes;
    pto__rt_tmap_reset(&tr->acc[0], &L->tm_alloc);
    pto__rt_tmap_reset(&tr->acc[1], &L->tm_alloc);
  } else if (im) {
    tr = new_track(L, addr, nbytes);
  }
  if (!im || !tr) {
    pto__rt_devmem_free(&L->w->mem, addr);
    pto__rt_launch_fail(L, pto_status_make(PTO_STATUS_OUT_OF_MEMORY,
                                           "out of memory creating an intermediate tensor"));
    return 1;
  }
  im->addr = addr;
  atomic_init(&im->refs, 1);
  im->scope_ended = 0;
  im->next = L->scopes[L->nscopes - 1];
  L->scopes[L->nscopes - 1] = im;
  tr->interm = im;
  out->buffer = out->addr = addr;
  out->rank = rank;
  out->dtype = dtype;
  out->owner_task_id = -1;
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; d--) {
    out->shape[d] = shape[d];
    out->stride[d] = stride;
    stride *= shape[d] ? shape[d] : 1;
  }
  return 0;
}

static void api_scope_begin_mode(void *ctx, int32_t mode) {
  pto__rt_launch *L = ctx;
  if (mode != PTO_ORCH_SCOPE_AUTO && mode != PTO_ORCH_SCOPE_MANUAL) {
    orch_fail(L, "scope_begin: mode %d is neither AUTO nor MANUAL", mode);
    mode = PTO_ORCH_SCOPE_AUTO;
  } else if (mode == PTO_ORCH_SCOPE_AUTO && in_manual_scope(L)) {
    /* As PyPTO's runtime: inside a manual scope the tasks' order is the author's alone. */
    orch_fail(L, "PTO2_SCOPE(): an AUTO scope inside a MANUAL scope is not supported");
    mode = PTO_ORCH_SCOPE_MANUAL;
  }
  /* Both arrays grow by the one rule from the same capacity: they stay the same size. */
  int cap = L->capscopes, capm = L->capscopes;
  if (pto_grow_int(&L->scopes, sizeof *L->scopes, &cap, (int64_t)L->nscopes + 1) ||
      pto_grow_int(&L->scope_modes, sizeof *L->scope_modes, &capm, (int64_t)L->nscopes + 1)) {
    /* Nest into the current scope instead: its intermediates live a little longer. */
    pto__rt_launch_fail(L,
                        pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory opening a scope"));
    return;
  }
  L->capscopes = capm;
  L->scope_modes[L->nscopes] = mode;
  L->scopes[L->nscopes++] = NULL;
}

static void api_scope_begin(void *ctx) {
  pto__rt_launch *L = ctx;
  /* The version-1 entry: a scope inside a manual one stays manual. */
  api_scope_begin_mode(ctx, L->scope_modes[L->nscopes - 1]);
}

static void api_orchestration_done(void *ctx) {
  pto__rt_launch *L = ctx;
  if (!L->t_orch_done) L->t_orch_done = pto__rt_now_ns();
}

static int32_t api_core_count(void *ctx, int32_t core_type) {
  pto__rt_launch *L = ctx;
  if (core_type != PTO_CORE_AIV && core_type != PTO_CORE_AIC) return 0;
  return cores_at_once(&L->w->pool, core_type);
}

/* PTO_LOG_LEVEL (pto__rt_log_level), read at each line, so a process may change it between
 * launches: a line prints at its level or an earlier one (null: none). A value that names no
 * level (set after the worker's open, which refuses one) counts as the level read at the open. */
static void api_log(void *ctx, int32_t level, const char *func, const char *msg) {
  pto__rt_launch *L = ctx;
  static const char *names[] = {"ERROR", "WARN", "TIMING", "INFO", "DEBUG"};
  if (level < PTO_ORCH_LOG_ERROR || level > PTO_ORCH_LOG_DEBUG) level = PTO_ORCH_LOG_INFO;
  int max;
  pto_status s = pto__rt_log_level(&max);
  if (s) max = L && L->w ? L->w->log_level : PTO_ORCH_LOG_WARN;
  pto_status_free(s);
  if (level > max) return;
  fprintf(stderr, "[%s] orchestration %s: %s\n", names[level], func ? func : "?", msg ? msg : "");
}

static void api_scope_end(void *ctx) {
  pto__rt_launch *L = ctx;
  if (L->nscopes <= 1) {
    orch_fail(L, "scope_end without a matching scope_begin");
    return;
  }
  end_scope(L);
}

typedef struct wait_ctx {
  pto__rt_launch *L;
  const pto__rt_region *r;
  uint64_t buffer;
} wait_ctx;

static int wait_for(void *ctx, pto__rt_tm_entry *x) {
  wait_ctx *c = ctx;
  if (regions_overlap(&x->r, c->r, c->buffer)) wait_until(c->L, pred_task_done, x->task);
  return 1;
}

/* Shared by read_element and write_element: validates the element and waits for the unfinished
 * tasks that conflict with accessing it. Returns its host address, or NULL on failure. */
static void *element_access(pto__rt_launch *L, const pto_orch_tensor *t, const int64_t *idx,
                            int write, const char *what) {
  if (atomic_load_explicit(&L->failed, memory_order_relaxed)) return NULL;
  pto__rt_track *tr;
  pto__rt_region whole, r;
  what_ctx wc = {what, NULL, 0};
  if (check_view(L, t, &wc, &tr, &whole) != 0) return NULL;
  int64_t off = 0;
  for (int d = 0; d < t->rank; d++) {
    if (idx[d] < 0 || idx[d] >= t->shape[d]) {
      orch_fail(L, "%s: index %lld of dim %d is out of range [0, %lld)", what, (long long)idx[d], d,
                (long long)t->shape[d]);
      return NULL;
    }
    off += idx[d] * t->stride[d];
  }
  pto_orch_tensor e = *t;
  e.addr = t->addr + (uint64_t)(off * (int64_t)pto_dtype_size((pto_dtype)t->dtype));
  for (int d = 0; d < t->rank; d++)
    e.shape[d] = 1;
  make_region(&e, &r);
  wait_ctx c = {L, &r, tr->buffer};
  for (int k = write ? 0 : 1; k < 2; k++)
    pto__rt_tmap_visit(&tr->acc[k], &L->tm_alloc, tr->buffer, &r, 0, wait_for, &c);
  if (atomic_load(&L->failed)) return NULL;
  return pto__rt_devmem_host(&L->w->mem, e.addr);
}

static int32_t api_read_element(void *ctx, const pto_orch_tensor *t, const int64_t *idx,
                                void *out_elem) {
  pto__rt_launch *L = ctx;
  void *p = element_access(L, t, idx, 0, "tensor.read");
  if (!p) return 1;
  memcpy(out_elem, p, pto_dtype_size((pto_dtype)t->dtype));
  return 0;
}

static int32_t api_write_element(void *ctx, const pto_orch_tensor *t, const int64_t *idx,
                                 const void *elem) {
  pto__rt_launch *L = ctx;
  void *p = element_access(L, t, idx, 1, "set_tensor_data");
  if (!p) return 1;
  memcpy(p, elem, pto_dtype_size((pto_dtype)t->dtype));
  return 0;
}

static void api_report_fatal(void *ctx, int32_t code, const char *msg) {
  pto__rt_launch *L = ctx;
  orch_fail(L, "reported a fatal error (code %d): %s", code, msg ? msg : "");
}

static int32_t api_is_fatal(void *ctx) {
  pto__rt_launch *L = ctx;
  return atomic_load(&L->failed) != 0;
}

/* ---- launches ------------------------------------------------------------------------------ */

pto_status pto__rt_launch_init(pto__rt_launch *L, struct pto__rt_worker *w) {
  memset(L, 0, sizeof *L);
  L->w = w;
  atomic_init(&L->wake_at, -1);
  L->capscopes = 16;
  L->scopes = pto_malloc((size_t)L->capscopes * sizeof *L->scopes);
  L->scope_modes = pto_malloc((size_t)L->capscopes * sizeof *L->scope_modes);
  if (!L->scopes || !L->scope_modes) {
    free(L->scopes);
    free(L->scope_modes);
    L->scopes = NULL;
    L->scope_modes = NULL;
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory opening a worker");
  }
  pthread_mutex_init(&L->fail_mu, NULL);
  pthread_mutex_init(&L->done_mu, NULL);
  pthread_mutex_init(&L->dump.mu, NULL);
  pthread_cond_init(&L->done_cv, NULL);
  for (int i = 0; i < PTO__RT_STRIPES; i++)
    pthread_mutex_init(&L->stripes[i], NULL);
  L->api.version = PTO_ORCH_ABI_VERSION;
  L->api.size = (uint32_t)sizeof L->api;
  L->api.ctx = L;
  L->api.submit = api_submit;
  L->api.create_tensor = api_create_tensor;
  L->api.scope_begin = api_scope_begin;
  L->api.scope_end = api_scope_end;
  L->api.read_element = api_read_element;
  L->api.report_fatal = api_report_fatal;
  L->api.is_fatal = api_is_fatal;
  L->api.write_element = api_write_element;
  L->api.submit_task = api_submit_task;
  L->api.scope_begin_mode = api_scope_begin_mode;
  L->api.create_tensor_init = api_create_tensor_init;
  L->api.orchestration_done = api_orchestration_done;
  L->api.core_count = api_core_count;
  L->api.log = api_log;
  L->api.submit_args = pto__rt_api_submit_args;
  L->api.slice = pto__rt_api_slice;
  L->api.scalar_dtypes = api_scalar_dtypes;
  return PTO_OK;
}

void pto__rt_launch_fini(pto__rt_launch *L) {
  if (!L->scopes) return;
  pto__rt_bump_fini(&L->bump);
  pto__rt_map_fini(&L->tracks);
  free(L->track_list);
  free(L->scopes);
  free(L->scope_modes);
  free(L->task_vec);
  pthread_mutex_destroy(&L->fail_mu);
  pthread_mutex_destroy(&L->done_mu);
  pthread_mutex_destroy(&L->dump.mu);
  pto__rt_dump_fini(&L->dump);
  pthread_cond_destroy(&L->done_cv);
  for (int i = 0; i < PTO__RT_STRIPES; i++)
    pthread_mutex_destroy(&L->stripes[i]);
  pto_status_free(L->fail);
  memset(L, 0, sizeof *L);
}

void pto__rt_launch_begin(pto__rt_launch *L, const pto_program *prog) {
  L->prog = prog;
  pto_program_reset_current_op(prog);
  L->record_tasks = L->w->record_tasks;
  L->dump_level = L->w->dump_level;
  L->record_phases = L->w->record_phases;
  if (L->record_phases) pto__rt_pool_phases_reset(&L->w->pool);
  pto__rt_bump_reset(&L->bump);
  L->tm_alloc.bump = &L->bump;
  L->tm_alloc.free = NULL;
  L->tm_alloc.ncompleted = &L->ncompleted;
  pto__rt_map_clear(&L->tracks);
  L->ntracks = 0;
  L->tasks_head = L->tasks_tail = NULL;
  L->ntasks = 0;
  L->nscopes = 1;
  L->scopes[0] = NULL;
  L->scope_modes[0] = PTO_ORCH_SCOPE_AUTO;
  L->t_orch_done = 0;
  atomic_store(&L->failed, 0);
  L->fail = PTO_OK;
  atomic_store(&L->outstanding, 0);
  atomic_store(&L->ncompleted, 0);
  atomic_store(&L->waiters, 0);
  atomic_store(&L->wake_at, -1);
}

pto_status pto__rt_launch_finish(pto__rt_launch *L, uint64_t *out_first_start,
                                 uint64_t *out_last_end) {
  while (L->nscopes > 0)
    end_scope(L);
  /* The orchestration is done: rather than wait for core threads to wake up and get a CPU, run
   * ready tasks here as an idle core (not in shuffle mode, whose timing is the cores' own). */
  if (!L->w->pool.shuffle) pto__rt_pool_help_out(&L->w->pool, L);
  wait_until_at(L, pred_all_done, NULL, 0);
  pto__rt_pool_idle(&L->w->pool);
  uint64_t first = 0, last = 0;
  for (pto__rt_task *t = L->tasks_head; t; t = t->next_all) {
    if (!t->t_start) continue;
    if (!first || t->t_start < first) first = t->t_start;
    if (t->t_end > last) last = t->t_end;
  }
  if (first && last <= first) last = first + 1; /* a clock too coarse to see the tasks run */
  for (size_t i = 0; i < L->ntracks; i++) {
    for (int k = 0; k < 2; k++)
      pto__rt_tmap_fini(&L->track_list[i]->acc[k]);
  }
  L->ntracks = 0;
  *out_first_start = first;
  *out_last_end = last;
  pthread_mutex_lock(&L->fail_mu);
  pto_status s = L->fail;
  L->fail = PTO_OK;
  pthread_mutex_unlock(&L->fail_mu);
  return s;
}

/* ---- per-task records ---------------------------------------------------------------------- */

void pto__rt_task_log_fini(pto__rt_task_log *log) {
  for (int i = 0; i < log->nnames; i++)
    free(log->names[i]);
  free(log->names);
  free(log->tasks);
  free(log->deps);
  free(log->blocks);
  free(log->phases);
  pto_status_free(log->err);
  pto_status_free(log->phases_err);
  memset(log, 0, sizeof *log);
}

/* The dependencies are the edges add_edge made: p->succ lists, inverted. Walking the tasks in
 * submission order lists every task's dependencies in ascending order. */
void pto__rt_launch_collect_tasks(const pto__rt_launch *L, pto__rt_task_log *log) {
  log->valid = 0;
  pto_status_free(log->err);
  log->err = PTO_OK;
  size_t n = L->ntasks, nedges = 0, nblocks = 0;
  for (const pto__rt_task *t = L->tasks_head; t; t = t->next_all)
    nedges += (size_t)t->nsucc;
  if (pto_grow(&log->tasks, sizeof *log->tasks, &log->cap, n ? n : 1) ||
      pto_grow(&log->deps, sizeof *log->deps, &log->capdeps, nedges ? nedges : 1))
    goto oom;
  for (int i = 0; i < log->nnames; i++)
    free(log->names[i]);
  log->nnames = 0;
  int nk = pto_program_kernel_count(L->prog);
  char **names = pto_realloc(log->names, (size_t)(nk > 0 ? nk : 1) * sizeof *names);
  if (!names) goto oom;
  log->names = names;
  for (; log->nnames < nk; log->nnames++) {
    const char *kn = pto_program_kernel_name(L->prog, log->nnames);
    if (!(names[log->nnames] = pto_strdup(kn ? kn : "?"))) goto oom;
  }

  /* Pass 1: the records, with each task's dependency count in ndeps. */
  pto_task_record *r = log->tasks;
  memset(r, 0, n * sizeof *r);
  for (const pto__rt_task *t = L->tasks_head; t; t = t->next_all) {
    pto_task_record *x = &r[t->seq];
    x->task_id = t->seq;
    x->kernel_id = t->kernel_id;
    x->kernel = !t->fn                                   ? "dummy"
                : t->kernel_id >= 0 && t->kernel_id < nk ? names[t->kernel_id]
                                                         : "?";
    x->core = t->t_start ? t->core : -1;
    x->core_type = t->core_type;
    x->skipped = t->skipped;
    x->group_id = t->group;
    x->slot = t->slot;
    x->start_ns = t->t_start;
    x->end_ns = t->t_end;
    x->ready_ns = t->t_ready;
    x->block_num = t->block_num;
    x->early_resolve = t->early_resolve;
    x->staged_ns = t->t_staged > 1 ? t->t_staged : 0;
    if (t->brec) nblocks += (size_t)t->block_num;
    for (int32_t i = 0; i < t->nsucc; i++)
      r[t->succ[i]->seq].ndeps++;
  }
  /* Pass 2: slices of log->deps, filled in ascending producer order; ready is the latest of the
   * recorded submission time and the dependencies' ends. */
  size_t off = 0;
  for (size_t i = 0; i < n; i++) {
    r[i].deps = log->deps + off;
    off += (size_t)r[i].ndeps;
    r[i].ndeps = 0;
  }
  for (const pto__rt_task *t = L->tasks_head; t; t = t->next_all) {
    for (int32_t i = 0; i < t->nsucc; i++) {
      pto_task_record *x = &r[t->succ[i]->seq];
      log->deps[(size_t)(x->deps - log->deps) + (size_t)x->ndeps++] = t->seq;
      if (t->t_end > x->ready_ns) x->ready_ns = t->t_end;
    }
  }
  if (pto_grow(&log->blocks, sizeof *log->blocks, &log->capblocks, nblocks ? nblocks : 1)) goto oom;
  size_t boff = 0;
  for (const pto__rt_task *t = L->tasks_head; t; t = t->next_all) {
    pto_task_record *x = &r[t->seq];
    if (!t->brec) continue;
    pto_block_record *b = log->blocks + boff;
    memcpy(b, t->brec, (size_t)t->block_num * sizeof *b);
    boff += (size_t)t->block_num;
    x->blocks = b;
    /* The record's core and times are block 0's own: one core's slices never overlap. */
    if (x->core >= 0 && b[0].core >= 0) {
      x->core = b[0].core;
      x->start_ns = b[0].start_ns;
      x->end_ns = b[0].end_ns;
    }
  }
  for (size_t i = 0; i < n; i++) {
    if (r[i].core < 0) {
      r[i].ready_ns = r[i].start_ns = r[i].end_ns = r[i].staged_ns = 0;
      continue;
    }
    /* Cannot happen on a clock that is monotonic across CPUs; kept so a record never says a
     * task ran before it was ready. */
    if (r[i].ready_ns > r[i].start_ns) r[i].ready_ns = r[i].start_ns;
  }
  /* One core's tasks need no such care: they are successive reads of one thread's monotonic
   * clock, so they never overlap. */
  log->ntasks = n;
  log->valid = 1;
  return;
oom:
  log->ntasks = 0;
  log->err = pto_status_make(PTO_STATUS_OUT_OF_MEMORY,
                             "out of memory recording the %zu tasks of the last launch", n);
}
