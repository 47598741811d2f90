/* Helpers for the runtime tests: signatures built by hand, C kernels over strided views, and
 * task-argument constructors for orchestration entries that call the pto_orch_api table. */
#ifndef PTO_TEST_RUNTIME_COMMON_H
#define PTO_TEST_RUNTIME_COMMON_H

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/loader.h"
#include "pto/runtime.h"
#include "testutil.h"

/* ---- CPUs ---------------------------------------------------------------------------------- */

/* Restricts this thread (and the worker threads it starts) to the first two of its CPUs, as a
 * 2-CPU host; *saved gets the set to restore (sched_setaffinity(0, sizeof *saved, saved)).
 * Returns 0 when there are fewer than two. */
static inline int use_two_cpus(cpu_set_t *saved) {
  if (sched_getaffinity(0, sizeof *saved, saved) != 0 || CPU_COUNT(saved) < 2) return 0;
  cpu_set_t two;
  CPU_ZERO(&two);
  for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; c++)
    if (CPU_ISSET(c, saved)) CPU_SET(c, &two), k++;
  return sched_setaffinity(0, sizeof two, &two) == 0;
}

/* ---- signatures ---------------------------------------------------------------------------- */

typedef struct tsig {
  pto_signature sig;
  pto_sig_param params[16];
  char *syms[8];
} tsig;

static inline void tsig_init(tsig *s, const char *entry) {
  memset(s, 0, sizeof *s);
  s->sig.entry = (char *)entry;
  s->sig.params = s->params;
  s->sig.syms = s->syms;
}

/* dims: "64,M,128": numbers are static, words are dynamic symbols. */
static inline void tsig_tensor(tsig *s, const char *name, pto_dir dir, pto_dtype dt,
                               const char *dims) {
  pto_sig_param *p = &s->params[s->sig.nparams++];
  memset(p, 0, sizeof *p);
  p->name = (char *)name;
  p->is_tensor = 1;
  p->dir = dir;
  p->dtype = dt;
  p->bind = PTO_BIND_NONE;
  const char *c = dims;
  while (*c) {
    const char *e = strchr(c, ',');
    size_t n = e ? (size_t)(e - c) : strlen(c);
    pto_sig_dim *d = &p->dims[p->rank++];
    if (c[0] >= '0' && c[0] <= '9') {
      d->value = strtoll(c, NULL, 10);
      d->sym = -1;
    } else {
      d->value = -1;
      d->sym = -1;
      for (int i = 0; i < s->sig.nsyms; i++)
        if (strlen(s->syms[i]) == n && strncmp(s->syms[i], c, n) == 0) d->sym = i;
      if (d->sym < 0) {
        char *name2 = strndup(c, n); /* freed by tsig_free */
        s->syms[s->sig.nsyms] = name2;
        d->sym = s->sig.nsyms++;
      }
    }
    c += n;
    if (*c == ',') c++;
  }
}

static inline void tsig_scalar(tsig *s, const char *name, pto_dtype dt, pto_bind_kind bind,
                               pto_scalar value) {
  pto_sig_param *p = &s->params[s->sig.nparams++];
  memset(p, 0, sizeof *p);
  p->name = (char *)name;
  p->dtype = dt;
  p->dir = PTO_DIR_IN;
  p->bind = bind;
  p->value = value;
}

static inline void tsig_free(tsig *s) {
  for (int i = 0; i < s->sig.nsyms; i++)
    free(s->syms[i]);
}

static inline pto_scalar tscalar_i64(pto_dtype dt, int64_t v) {
  pto_scalar s;
  s.dtype = dt;
  s.i = v;
  return s;
}

static inline pto_scalar tscalar_f(pto_dtype dt, double v) {
  pto_scalar s;
  s.dtype = dt;
  s.f = v;
  return s;
}

/* ---- kernels ------------------------------------------------------------------------------- */

static inline int64_t kv_numel(const pto_kernel_tensor *t) {
  int64_t n = 1;
  for (int d = 0; d < t->rank; d++)
    n *= t->shape[d];
  return n;
}

/* Element offset (in elements) of the lin-th element of a view in row-major order. */
static inline int64_t kv_off(const pto_kernel_tensor *t, int64_t lin) {
  int64_t off = 0;
  for (int d = t->rank - 1; d >= 0; d--) {
    int64_t i = lin % t->shape[d];
    lin /= t->shape[d];
    off += i * t->stride[d];
  }
  return off;
}

static inline float kv_f32(const pto_kernel_tensor *t, int64_t lin) {
  return ((const float *)t->data)[kv_off(t, lin)];
}
static inline float *kv_f32p(const pto_kernel_tensor *t, int64_t lin) {
  return &((float *)t->data)[kv_off(t, lin)];
}
static inline uint32_t *kv_u32p(const pto_kernel_tensor *t, int64_t lin) {
  return &((uint32_t *)t->data)[kv_off(t, lin)];
}

static inline float slot_f32(uint64_t slot) {
  uint32_t b = (uint32_t)slot;
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

static inline uint64_t f32_slot(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* ---- orchestration helpers ---------------------------------------------------------------- */

static inline pto_orch_task_arg ta_tensor(int32_t kind, const pto_orch_tensor *t) {
  pto_orch_task_arg a;
  memset(&a, 0, sizeof a);
  a.kind = kind;
  a.tensor = *t;
  return a;
}
static inline pto_orch_task_arg ta_in(const pto_orch_tensor *t) {
  return ta_tensor(PTO_ORCH_ARG_IN, t);
}
static inline pto_orch_task_arg ta_out(const pto_orch_tensor *t) {
  return ta_tensor(PTO_ORCH_ARG_OUT, t);
}
static inline pto_orch_task_arg ta_inout(const pto_orch_tensor *t) {
  return ta_tensor(PTO_ORCH_ARG_INOUT, t);
}
static inline pto_orch_task_arg ta_scalar(uint64_t v) {
  pto_orch_task_arg a;
  memset(&a, 0, sizeof a);
  a.kind = PTO_ORCH_ARG_SCALAR;
  a.scalar = v;
  return a;
}

/* A sub-view: shape[d] elements from off[d] in each dim. */
static inline pto_orch_tensor tview(const pto_orch_tensor *t, const int64_t *off,
                                    const int64_t *shape) {
  pto_orch_tensor v = *t;
  int64_t e = 0;
  for (int d = 0; d < t->rank; d++) {
    e += off[d] * t->stride[d];
    v.shape[d] = shape[d];
  }
  v.addr = t->addr + (uint64_t)(e * (int64_t)pto_dtype_size((pto_dtype)t->dtype));
  return v;
}

static inline pto_worker *topen(int ncores, int shuffle, uint64_t seed) {
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  /* The tests' tasks are vector tasks: ncores of them, and the one cube core every worker has
   * (numbered after them). */
  cfg.aiv_cores = ncores;
  cfg.aic_cores = 1;
  cfg.shuffle = shuffle;
  cfg.shuffle_seed = seed;
  cfg.device_memory_bytes = 64ull << 20;
  pto_worker *w = NULL;
  assert_pto_ok(pto_worker_open(&cfg, &w));
  return w;
}

static inline pto_program *tprogram(const tsig *s, pto_orch_bind_fn bind, pto_orch_entry_fn entry,
                                    int nk, const pto_kernel_fn *kernels,
                                    const char *const *names) {
  pto_program *p = NULL;
  assert_pto_ok(
      pto_program_create_from_functions(&s->sig, bind, entry, nk, kernels, names, 4096, &p));
  return p;
}

#endif
