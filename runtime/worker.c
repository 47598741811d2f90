/* Workers: open/close, device tensors, copies, registration handles and launches. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pto/base.h"
#include "runtime_internal.h"

/* The [STRACE] inv: a process-wide launch counter, so (pid, inv) names one launch across
 * workers. Process-global, lock-free (an atomic counter). */
static atomic_ullong g_launch_counter;

#define PTO__RT_DEFAULT_DEVICE_MEMORY (1ull << 30)
#define PTO__RT_DEFAULT_SCRATCH (256u * 1024u)
#define PTO__RT_DEFAULT_SPIN_US 40u
#define PTO__RT_DEFAULT_STREAM_STORE (32ull << 20)
#define PTO__RT_MAX_CORES 1024

void pto_run_config_init(pto_run_config *cfg) {
  if (!cfg) return;
  memset(cfg, 0, sizeof *cfg);
  cfg->sz = sizeof *cfg;
}

static pto_status fail(pto_status_code code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static pto_status fail(pto_status_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pto_status s = pto_status_makev(code, fmt, ap);
  va_end(ap);
  return s;
}

/* The worker whose launch this thread is running: its dispatching thread during a launch, its
 * core threads and its dispatcher thread always. A close from there cannot wait for the launch. */
_Thread_local const pto__rt_worker *pto__rt_tls_worker;

/* The worker a token names, pinned until leave(pin): a close on another thread waits until this
 * call has returned. Or a status saying why there is none (nothing pinned). */
static pto_status enter(const pto_worker *wt, const char *fn, pto__rt_worker **out,
                        uint32_t *out_pin) {
  pto__rt_gone gone;
  *out = pto__rt_obj_pin(wt, PTO__RT_OBJ_WORKER, &gone, out_pin);
  /* Submitted launches end first: they stay ordered before whatever this call does. */
  pto__rt_async_drain(*out);
  if (*out) return PTO_OK;
  return fail(pto__rt_gone_code(gone, PTO_STATUS_FAILED_PRECONDITION), "%s: %s", fn,
              pto__rt_gone_text(gone, PTO__RT_OBJ_WORKER));
}

/* Ends a call that entered the worker; passes its status through. */
static pto_status leave(uint32_t pin, pto_status s) {
  pto__rt_obj_unpin(pin);
  return s;
}

static pto_status not_in_launch(const pto__rt_worker *w, const char *fn) {
  if (!__atomic_load_n(&w->in_launch, __ATOMIC_ACQUIRE)) return PTO_OK;
  return fail(PTO_STATUS_FAILED_PRECONDITION,
              "%s: a launch is running on this worker; call it between launches, not from a "
              "kernel or the orchestration",
              fn);
}

/* *out_nthreads: the core threads, one per core except in the shared default (strict_cores
 * false, no count given), whose threads are the CPUs and whose cores are an AIC one and two AIV
 * ones per thread: every thread may run cube work at once, or vector work, each as a core of its
 * own, and the chip's 1:2 stays the model's (an AIC core per two threads left the other thread
 * idle beside a launch's matmul tasks); or as pto_run_config.threads says (shared only). The
 * AIV cores past the threads cost a record and untouched scratch: a thread claims its own home
 * core first, and the lowest free one after. */
static pto_status normalize_config(const pto_run_config *in, pto_run_config *out,
                                   int *out_nthreads) {
  pto_run_config_init(out);
  if (in) {
    if (in->sz < sizeof(size_t) || in->sz > (1u << 20))
      return fail(PTO_STATUS_INVALID_ARGUMENT,
                  "pto_run_config.sz is %zu: initialise the config with pto_run_config_init",
                  in->sz);
    memcpy(out, in, in->sz < sizeof *out ? in->sz : sizeof *out);
    out->sz = sizeof *out;
  }
  if (out->platform && strcmp(out->platform, "sim") != 0)
    return fail(PTO_STATUS_UNIMPLEMENTED, "platform '%s' is not available (available: sim)",
                out->platform);
  out->platform = "sim";
  if (out->ncores < 0 || out->ncores > PTO__RT_MAX_CORES)
    return fail(PTO_STATUS_INVALID_ARGUMENT,
                "ncores %d is out of range (0 for the CPU count, or 1 to %d)", out->ncores,
                PTO__RT_MAX_CORES);
  if (out->aic_cores < 0 || out->aiv_cores < 0 || out->aic_cores > PTO__RT_MAX_CORES ||
      out->aiv_cores > PTO__RT_MAX_CORES)
    return fail(PTO_STATUS_INVALID_ARGUMENT, "aic_cores %d / aiv_cores %d: out of range (0 to %d)",
                out->aic_cores, out->aiv_cores, PTO__RT_MAX_CORES);
  if (out->aic_cores || out->aiv_cores) {
    int sum = out->aic_cores + out->aiv_cores;
    if (out->ncores && out->ncores != sum)
      return fail(
          PTO_STATUS_INVALID_ARGUMENT,
          "ncores %d differs from aic_cores %d + aiv_cores %d: set ncores to 0 or to their sum",
          out->ncores, out->aic_cores, out->aiv_cores);
    if (!out->aic_cores || !out->aiv_cores)
      return fail(PTO_STATUS_INVALID_ARGUMENT,
                  "aic_cores %d / aiv_cores %d: a worker needs at least one core of each type",
                  out->aic_cores, out->aiv_cores);
    if (sum > PTO__RT_MAX_CORES)
      return fail(PTO_STATUS_INVALID_ARGUMENT, "aic_cores + aiv_cores is %d, more than %d", sum,
                  PTO__RT_MAX_CORES);
    out->ncores = sum;
  }
  *out_nthreads = 0;
  if (out->ncores == 0) {
    int n = pto__rt_usable_cpus();
    if (!out->strict_cores && !out->aic_cores) {
      /* 3n cores: at most 341 threads (1023 cores); a 64-CPU host has 64 + 128. */
      n = n > PTO__RT_MAX_CORES / 3 ? PTO__RT_MAX_CORES / 3 : n;
      *out_nthreads = n;
      out->aic_cores = n;
      out->aiv_cores = 2 * n;
    }
    out->ncores = n > PTO__RT_MAX_CORES ? PTO__RT_MAX_CORES : n;
  }
  if (!out->aic_cores) {
    /* The chip's clusters: one cube core beside two vector cores. */
    out->aic_cores = out->ncores / 3 > 0 ? out->ncores / 3 : 1;
    out->aiv_cores = out->ncores - out->aic_cores > 0 ? out->ncores - out->aic_cores : 1;
    out->ncores = out->aic_cores + out->aiv_cores;
  }
  out->ncores = out->aic_cores + out->aiv_cores;
  if (out->threads) {
    if (out->threads < 0 || out->threads > out->ncores)
      return fail(PTO_STATUS_INVALID_ARGUMENT,
                  "threads %d is out of range for %d cores (%d AIC + %d AIV): give 1 to %d, or 0 "
                  "for the default",
                  out->threads, out->ncores, out->aic_cores, out->aiv_cores, out->ncores);
    if (out->strict_cores && out->threads != out->ncores)
      return fail(PTO_STATUS_INVALID_ARGUMENT,
                  "threads %d with strict_cores: a strict worker runs one thread per core (%d); "
                  "set threads to 0, or leave strict_cores false",
                  out->threads, out->ncores);
    *out_nthreads = out->threads;
  }
  if (!*out_nthreads) *out_nthreads = out->ncores;
  if (!out->device_memory_bytes) out->device_memory_bytes = PTO__RT_DEFAULT_DEVICE_MEMORY;
  if (!out->scratch_bytes) out->scratch_bytes = PTO__RT_DEFAULT_SCRATCH;
  if (!out->idle_spin_us) out->idle_spin_us = PTO__RT_DEFAULT_SPIN_US;
  if (!out->max_inflight_tasks)
    out->max_inflight_tasks = *out_nthreads * 32u > 256u ? (uint32_t)*out_nthreads * 32u : 256u;
  if (out->max_inflight_tasks < 2) out->max_inflight_tasks = 2;
  if (!out->stream_store_bytes) out->stream_store_bytes = PTO__RT_DEFAULT_STREAM_STORE;
  return PTO_OK;
}

static void destroy_worker(pto__rt_worker *w) {
  pto__rt_pool_stop(&w->pool);
  for (pto__rt_handle *h = w->handles; h;) {
    pto__rt_handle *n = h->next;
    pto__rt_obj_remove(h->token, PTO__RT_GONE_WORKER_CLOSED);
    free(h);
    h = n;
  }
  for (pto__rt_dtensor *d = w->tensors; d;) {
    pto__rt_dtensor *n = d->next;
    pto__rt_obj_remove(d->token, PTO__RT_GONE_WORKER_CLOSED);
    free(d);
    d = n;
  }
  for (pto__rt_callable *c = w->callables; c;) {
    pto__rt_callable *n = c->next;
    pto_program_release((pto_program *)c->prog);
    free(c);
    c = n;
  }
  pto__rt_launch_fini(&w->launch);
  pto__rt_task_log_fini(&w->task_log);
  free(w->dump_dir);
  pto__rt_devmem_fini(&w->mem);
  if (w->token) pto__rt_obj_remove(w->token, PTO__RT_GONE_CLOSED);
  free(w);
}

pto_status pto_worker_open(const pto_run_config *cfg, pto_worker **out_worker) {
  if (!out_worker) return fail(PTO_STATUS_INVALID_ARGUMENT, "pto_worker_open: out_worker is NULL");
  *out_worker = NULL;
  pto__rt_worker *w = pto_calloc(1, sizeof *w);
  if (!w) return fail(PTO_STATUS_OUT_OF_MEMORY, "out of memory opening a worker");
  int nthreads = 0;
  pto_status s = normalize_config(cfg, &w->cfg, &nthreads);
  if (!s) s = pto__rt_log_level(&w->log_level); /* a bad PTO_LOG_LEVEL is refused, not ignored */
  if (s) {
    free(w);
    return pto_status_annotate(s, "pto_worker_open");
  }
  w->scratch_bytes = w->cfg.scratch_bytes;
  w->strace = pto__rt_log_strace(w->log_level);
  w->record_tasks = w->cfg.record_tasks;
  w->next_callable_id = 1;
  s = pto__rt_devmem_init(&w->mem, w->cfg.device_memory_bytes);
  if (s) {
    free(w);
    return pto_status_annotate(s, "pto_worker_open");
  }
  s = pto__rt_launch_init(&w->launch, w);
  if (!s) {
    w->token = pto__rt_obj_add(PTO__RT_OBJ_WORKER, w);
    if (!w->token) s = fail(PTO_STATUS_OUT_OF_MEMORY, "out of memory opening a worker");
  }
  if (!s) s = pto__rt_pool_start(w, w->cfg.aic_cores, w->cfg.aiv_cores, nthreads);
  if (s) {
    destroy_worker(w);
    return pto_status_annotate(s, "pto_worker_open");
  }
  *out_worker = w->token;
  return PTO_OK;
}

void pto_worker_close(pto_worker *wt) {
  pto__rt_worker *w = pto__rt_obj_get(wt, PTO__RT_OBJ_WORKER, NULL);
  if (!w) return; /* closed already (idempotent) */
  /* From inside one of its launches (a kernel, the orchestration, the dispatcher thread): it
   * cannot wait for that launch to end, and is ignored, as documented. */
  if (pto__rt_tls_worker == w) return;
  /* Every call of another thread inside the worker (a launch, a copy, ...) ends first, and later
   * ones fail: "the worker is closed". Of two threads closing at once, one retires the token and
   * destroys; the other returns at once. */
  if (!pto__rt_obj_retire_wait(wt, PTO__RT_GONE_CLOSED)) return;
  pto__rt_async_stop(w);
  destroy_worker(w);
}

int pto_worker_core_count(const pto_worker *wt) {
  pto__rt_worker *w = pto__rt_obj_get(wt, PTO__RT_OBJ_WORKER, NULL);
  return w ? w->pool.ncores : -1;
}

int pto_worker_core_type(const pto_worker *wt, int core) {
  pto__rt_worker *w = pto__rt_obj_get(wt, PTO__RT_OBJ_WORKER, NULL);
  if (!w || core < 0 || core >= w->pool.ncores) return -1;
  return w->pool.cores[core].type;
}

static pto_status worker_memory_info_in(pto__rt_worker *w, pto_device_memory_info *out_info) {
  pto__rt_devmem_info(&w->mem, out_info);
  return PTO_OK;
}

pto_status pto_worker_memory_info(const pto_worker *wt, pto_device_memory_info *out_info) {
  if (!out_info)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_worker_memory_info: out_info is NULL");
  pto__rt_worker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, "pto_worker_memory_info", &w, &pin));
  return leave(pin, worker_memory_info_in(w, out_info));
}

/* ---- device tensors ---------------------------------------------------------------------- */

/* A handle for nbytes of device memory at addr, linked into w's tensors; NULL when out of memory.
 */
static pto__rt_dtensor *new_dtensor(pto__rt_worker *w, uint64_t addr, uint64_t nbytes, int ndim,
                                    const int64_t *shape, pto_dtype dt) {
  pto__rt_dtensor *d = pto_calloc(1, sizeof *d);
  if (d) d->token = pto__rt_obj_add_owned(PTO__RT_OBJ_TENSOR, d, w->token);
  if (!d || !d->token) {
    free(d);
    return NULL;
  }
  d->w = w;
  d->addr = addr;
  d->nbytes = nbytes;
  d->dtype = dt;
  d->rank = ndim;
  memcpy(d->shape, shape, (size_t)ndim * sizeof *shape);
  d->next = w->tensors;
  if (w->tensors) w->tensors->prev = d;
  w->tensors = d;
  return d;
}

void pto__rt_worker_set_external(pto_worker *wt, int which, void *host, uint64_t size,
                                 uint64_t base) {
  pto__rt_worker *w = pto__rt_obj_get(wt, PTO__RT_OBJ_WORKER, NULL);
  if (!w) return;
  *(which ? &w->mem.ext2_host : &w->mem.ext_host) = host;
  *(which ? &w->mem.ext2_size : &w->mem.ext_size) = size;
  *(which ? &w->mem.ext2_base : &w->mem.ext_base) = base;
}

void pto__rt_worker_set_dist(pto_worker *wt, const pto_dist_ctx *dist) {
  pto__rt_worker *w = pto__rt_obj_get(wt, PTO__RT_OBJ_WORKER, NULL);
  if (w) w->dist = dist;
}

void pto__rt_worker_set_run_to_completion(pto_worker *wt, int on) {
  pto__rt_worker *w = pto__rt_obj_get(wt, PTO__RT_OBJ_WORKER, NULL);
  if (w) w->pool.lazy = on != 0;
}

void pto__rt_worker_activity(pto_worker *wt, uint64_t *ncompleted, const pto_program **prog,
                             int *kernel, uint64_t *t0) {
  *ncompleted = 0, *prog = NULL, *kernel = -1, *t0 = 0;
  pto__rt_worker *w = pto__rt_obj_get(wt, PTO__RT_OBJ_WORKER, NULL);
  if (!w) return;
  *ncompleted = atomic_load_explicit(&w->launch.ncompleted, memory_order_relaxed);
  for (int i = 0; i < w->pool.ncores; i++) {
    pto__rt_core *c = &w->pool.cores[i];
    int k = atomic_load_explicit(&c->kernel, memory_order_acquire) - 1;
    uint64_t since = atomic_load_explicit(&c->kernel_t0, memory_order_relaxed);
    if (k < 0 || (*kernel >= 0 && since >= *t0)) continue;
    *kernel = k, *t0 = since;
    *prog = atomic_load_explicit(&c->kernel_prog, memory_order_relaxed);
  }
}

int pto__rt_worker_core_tids(pto_worker *wt, int *tids, int max) {
  pto__rt_worker *w = pto__rt_obj_get(wt, PTO__RT_OBJ_WORKER, NULL);
  int n = 0;
  for (int i = 0; w && i < w->pool.ncores && n < max; i++) {
    int tid = atomic_load_explicit(&w->pool.cores[i].tid, memory_order_relaxed);
    if (tid > 0) tids[n++] = tid;
  }
  return n;
}

pto_status pto__rt_worker_wrap(pto_worker *wt, uint64_t addr, int rank, const int64_t *shape,
                               pto_dtype dt, pto_device_tensor **out_tensor) {
  static const char fn[] = "pto__rt_worker_wrap";
  *out_tensor = NULL;
  pto__rt_worker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, fn, &w, &pin));
  pto__rt_obj_unpin(pin); /* the chip's own thread: its worker is not closed meanwhile */
  uint64_t nbytes = pto_dtype_size(dt);
  for (int d = 0; d < rank; d++)
    nbytes *= (uint64_t)shape[d];
  int in1 = addr - w->mem.ext_base < w->mem.ext_size &&
            nbytes <= w->mem.ext_size - (addr - w->mem.ext_base);
  int in2 = addr - w->mem.ext2_base < w->mem.ext2_size &&
            nbytes <= w->mem.ext2_size - (addr - w->mem.ext2_base);
  if (!in1 && !in2)
    return fail(PTO_STATUS_INVALID_ARGUMENT, "%s: 0x%llx (+%llu bytes) is outside the shared heap",
                fn, (unsigned long long)addr, (unsigned long long)nbytes);
  pthread_mutex_lock(&w->mem.mu);
  uint64_t *had = pto__rt_map_find(&w->mem.ext_sizes, addr);
  int bad = (!had || *had < nbytes) && pto__rt_map_put(&w->mem.ext_sizes, addr, nbytes) != 0;
  pthread_mutex_unlock(&w->mem.mu);
  pto__rt_dtensor *d = bad ? NULL : new_dtensor(w, addr, nbytes, rank, shape, dt);
  if (!d) return fail(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
  *out_tensor = d->token;
  return PTO_OK;
}

static pto_status worker_alloc_tensor_in(pto__rt_worker *w, int ndim, const int64_t *shape,
                                         pto_dtype dt, const void *init,
                                         pto_device_tensor **out_tensor) {
  static const char fn[] = "pto_worker_alloc_tensor";
  PTO_RETURN_IF_ERROR(not_in_launch(w, fn));
  if (ndim < 1 || ndim > PTO_MAX_RANK)
    return fail(PTO_STATUS_INVALID_ARGUMENT, "%s: rank %d is out of range (1 to %d)", fn, ndim,
                PTO_MAX_RANK);
  if (!shape) return fail(PTO_STATUS_INVALID_ARGUMENT, "%s: shape is NULL", fn);
  if ((unsigned)dt >= PTO_DTYPE_COUNT)
    return fail(PTO_STATUS_INVALID_ARGUMENT, "%s: dtype %d is not a dtype", fn, (int)dt);
  uint64_t nbytes = pto_dtype_size(dt);
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0)
      return fail(PTO_STATUS_INVALID_ARGUMENT, "%s: dim %d is negative (%lld)", fn, d,
                  (long long)shape[d]);
    if (__builtin_mul_overflow(nbytes, (uint64_t)shape[d], &nbytes))
      return fail(PTO_STATUS_INVALID_ARGUMENT, "%s: the tensor's size overflows", fn);
  }
  uint64_t addr;
  pto_status s = pto__rt_devmem_alloc(&w->mem, nbytes, 64, "a device tensor", NULL, &addr);
  if (s) return pto_status_annotate(s, "%s", fn);
  pto__rt_dtensor *d = new_dtensor(w, addr, nbytes, ndim, shape, dt);
  if (!d) {
    pto__rt_devmem_free(&w->mem, addr);
    return fail(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  void *host = pto__rt_devmem_host(&w->mem, addr);
  if (init)
    memcpy(host, init, (size_t)nbytes);
  else
    memset(host, 0, (size_t)nbytes);
  *out_tensor = d->token;
  return PTO_OK;
}

pto_status pto_worker_alloc_tensor(pto_worker *wt, int ndim, const int64_t *shape, pto_dtype dt,
                                   const void *init, pto_device_tensor **out_tensor) {
  static const char fn[] = "pto_worker_alloc_tensor";
  if (!out_tensor) return fail(PTO_STATUS_INVALID_ARGUMENT, "%s: out_tensor is NULL", fn);
  *out_tensor = NULL;
  pto__rt_worker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, fn, &w, &pin));
  return leave(pin, worker_alloc_tensor_in(w, ndim, shape, dt, init, out_tensor));
}

static pto_status worker_free_tensor_in(pto__rt_worker *w, pto_device_tensor *t) {
  static const char fn[] = "pto_worker_free_tensor";
  PTO_RETURN_IF_ERROR(not_in_launch(w, fn));
  pto__rt_gone gone;
  pto__rt_dtensor *d = pto__rt_obj_get(t, PTO__RT_OBJ_TENSOR, &gone);
  if (!d) {
    if (gone == PTO__RT_GONE_FREED) return PTO_OK; /* freed already: a no-op */
    return fail(PTO_STATUS_INVALID_ARGUMENT, "%s: %s", fn,
                pto__rt_gone_text(gone, PTO__RT_OBJ_TENSOR));
  }
  if (d->w != w)
    return fail(PTO_STATUS_INVALID_ARGUMENT,
                "%s: the device tensor belongs to another worker; free it on the worker that "
                "allocated it",
                fn);
  pto__rt_devmem_free(&w->mem, d->addr);
  if (d->prev)
    d->prev->next = d->next;
  else
    w->tensors = d->next;
  if (d->next) d->next->prev = d->prev;
  pto__rt_obj_remove(d->token, PTO__RT_GONE_FREED);
  free(d);
  return PTO_OK;
}

pto_status pto_worker_free_tensor(pto_worker *wt, pto_device_tensor *t) {
  static const char fn[] = "pto_worker_free_tensor";
  pto__rt_worker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, fn, &w, &pin));
  return leave(pin, worker_free_tensor_in(w, t));
}

pto_status pto_device_tensor_describe(const pto_device_tensor *t,
                                      pto_device_tensor_info *out_info) {
  pto__rt_gone gone;
  const pto__rt_dtensor *d = pto__rt_obj_get(t, PTO__RT_OBJ_TENSOR, &gone);
  if (!d)
    return fail(PTO_STATUS_INVALID_ARGUMENT, "pto_device_tensor_describe: %s",
                pto__rt_gone_text(gone, PTO__RT_OBJ_TENSOR));
  if (!out_info)
    return fail(PTO_STATUS_INVALID_ARGUMENT, "pto_device_tensor_describe: out_info is NULL");
  memset(out_info, 0, sizeof *out_info);
  out_info->addr = d->addr;
  out_info->nbytes = d->nbytes;
  out_info->dtype = d->dtype;
  out_info->rank = d->rank;
  memcpy(out_info->shape, d->shape, sizeof d->shape);
  return PTO_OK;
}

uint64_t pto_device_tensor_addr(const pto_device_tensor *t) {
  const pto__rt_dtensor *d = pto__rt_obj_get(t, PTO__RT_OBJ_TENSOR, NULL);
  return d ? d->addr : 0;
}

pto_dtype pto_device_tensor_dtype(const pto_device_tensor *t) {
  const pto__rt_dtensor *d = pto__rt_obj_get(t, PTO__RT_OBJ_TENSOR, NULL);
  return d ? d->dtype : PTO_DTYPE_COUNT;
}

int pto_device_tensor_rank(const pto_device_tensor *t) {
  const pto__rt_dtensor *d = pto__rt_obj_get(t, PTO__RT_OBJ_TENSOR, NULL);
  return d ? d->rank : -1;
}

int64_t pto_device_tensor_dim(const pto_device_tensor *t, int axis) {
  const pto__rt_dtensor *d = pto__rt_obj_get(t, PTO__RT_OBJ_TENSOR, NULL);
  return d && axis >= 0 && axis < d->rank ? d->shape[axis] : -1;
}

static pto_status check_copy(pto__rt_worker *w, const char *fn, uint64_t dev_ptr, const void *host,
                             size_t n) {
  PTO_RETURN_IF_ERROR(not_in_launch(w, fn));
  if (n && !host) return fail(PTO_STATUS_INVALID_ARGUMENT, "%s: host pointer is NULL", fn);
  uint64_t nbytes;
  if (!pto__rt_devmem_size(&w->mem, dev_ptr, &nbytes))
    return fail(PTO_STATUS_INVALID_ARGUMENT,
                "%s: device address 0x%llx is not the start of an allocation of this worker", fn,
                (unsigned long long)dev_ptr);
  if (n > nbytes)
    return fail(PTO_STATUS_INVALID_ARGUMENT,
                "%s: %zu bytes exceed the allocation at 0x%llx, which has %llu bytes", fn, n,
                (unsigned long long)dev_ptr, (unsigned long long)nbytes);
  return PTO_OK;
}

static pto_status worker_copy_to_in(pto__rt_worker *w, uint64_t dev_ptr, const void *host,
                                    size_t n) {
  PTO_RETURN_IF_ERROR(check_copy(w, "pto_worker_copy_to", dev_ptr, host, n));
  if (n) memcpy(pto__rt_devmem_host(&w->mem, dev_ptr), host, n);
  return PTO_OK;
}

pto_status pto_worker_copy_to(pto_worker *wt, uint64_t dev_ptr, const void *host, size_t n) {
  pto__rt_worker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, "pto_worker_copy_to", &w, &pin));
  return leave(pin, worker_copy_to_in(w, dev_ptr, host, n));
}

static pto_status worker_copy_from_in(pto__rt_worker *w, void *host, uint64_t dev_ptr, size_t n) {
  PTO_RETURN_IF_ERROR(check_copy(w, "pto_worker_copy_from", dev_ptr, host, n));
  if (n) memcpy(host, pto__rt_devmem_host(&w->mem, dev_ptr), n);
  return PTO_OK;
}

pto_status pto_worker_copy_from(pto_worker *wt, void *host, uint64_t dev_ptr, size_t n) {
  pto__rt_worker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, "pto_worker_copy_from", &w, &pin));
  return leave(pin, worker_copy_from_in(w, host, dev_ptr, n));
}

/* ---- registration ------------------------------------------------------------------------ */

static pto_status validate_program(const pto_program *p) {
  const pto_signature *sig = pto_program_signature(p);
  const char *entry = sig->entry ? pto_signature_entry_name(sig) : "?";
  if (sig->nparams < 0 || (sig->nparams > 0 && !sig->params))
    return fail(PTO_STATUS_INVALID_ARGUMENT, "program '%s': malformed signature (%d parameters)",
                entry, sig->nparams);
  for (int i = 0; i < sig->nparams; i++) {
    const pto_sig_param *q = &sig->params[i];
    const char *name = q->name ? q->name : "?";
    if (!q->name)
      return fail(PTO_STATUS_INVALID_ARGUMENT, "program '%s': parameter %d has no name", entry, i);
    if ((unsigned)q->dtype >= PTO_DTYPE_COUNT)
      return fail(PTO_STATUS_INVALID_ARGUMENT, "program '%s': parameter '%s' has dtype %d", entry,
                  name, (int)q->dtype);
    if (!q->is_tensor) continue;
    if (q->rank < 1 || q->rank > PTO_MAX_RANK)
      return fail(PTO_STATUS_INVALID_ARGUMENT, "program '%s': parameter '%s' has rank %d (1 to %d)",
                  entry, name, q->rank, PTO_MAX_RANK);
    if (q->dir != PTO_DIR_IN && q->dir != PTO_DIR_OUT && q->dir != PTO_DIR_INOUT)
      return fail(PTO_STATUS_INVALID_ARGUMENT, "program '%s': parameter '%s' has direction %d",
                  entry, name, (int)q->dir);
    for (int d = 0; d < q->rank; d++) {
      int sym = q->dims[d].sym;
      if (sym >= sig->nsyms || (sym < 0 && q->dims[d].value < 0))
        return fail(PTO_STATUS_INVALID_ARGUMENT,
                    "program '%s': parameter '%s' dim %d is neither static nor a known symbol",
                    entry, name, d);
    }
  }
  if (!pto_program_orch_entry(p))
    return fail(PTO_STATUS_INVALID_ARGUMENT, "program '%s' has no orchestration entry", entry);
  int nk = pto_program_kernel_count(p);
  for (int k = 0; k < nk; k++)
    if (!pto_program_kernel(p, k))
      return fail(PTO_STATUS_INVALID_ARGUMENT, "program '%s': kernel %d ('%s') has no function",
                  entry, k, pto_program_kernel_name(p, k));
  return PTO_OK;
}

static pto__rt_callable *find_callable(pto__rt_worker *w, const pto_program *p) {
  for (pto__rt_callable *c = w->callables; c; c = c->next)
    if (c->prog == p) return c;
  return NULL;
}

static pto_status get_callable(pto__rt_worker *w, const pto_program *p, const char *fn,
                               pto__rt_callable **out) {
  *out = find_callable(w, p);
  if (*out) return PTO_OK;
  pto_status s = validate_program(p);
  if (s) return pto_status_annotate(s, "%s", fn);
  uint64_t scratch = pto_program_scratch_bytes(p);
  if (scratch > w->scratch_bytes) {
    s = pto__rt_pool_grow_scratch(&w->pool, scratch);
    if (s) return pto_status_annotate(s, "%s", fn);
    w->scratch_bytes = scratch;
  }
  pto__rt_callable *c = pto_calloc(1, sizeof *c);
  if (!c) return fail(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
  pto_program_retain((pto_program *)p);
  c->prog = p;
  c->id = w->next_callable_id++;
  c->next = w->callables;
  if (w->callables) w->callables->prev = c;
  w->callables = c;
  *out = c;
  return PTO_OK;
}

static void release_callable(pto__rt_worker *w, pto__rt_callable *c) {
  if (c->prev)
    c->prev->next = c->next;
  else
    w->callables = c->next;
  if (c->next) c->next->prev = c->prev;
  pto_program_release((pto_program *)c->prog);
  free(c);
}

static pto_status worker_register_in(pto__rt_worker *w, const pto_program *p,
                                     pto_handle **out_handle) {
  static const char fn[] = "pto_worker_register";
  PTO_RETURN_IF_ERROR(not_in_launch(w, fn));
  if (!p) return fail(PTO_STATUS_INVALID_ARGUMENT, "%s: program is NULL", fn);
  pto__rt_callable *c;
  PTO_RETURN_IF_ERROR(get_callable(w, p, fn, &c));
  pto__rt_handle *h = pto_calloc(1, sizeof *h);
  if (h) h->token = pto__rt_obj_add_owned(PTO__RT_OBJ_HANDLE, h, w->token);
  if (!h || !h->token) {
    free(h);
    if (!c->nhandles && !c->implicit) release_callable(w, c);
    return fail(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  h->w = w;
  h->callable = c;
  c->nhandles++;
  h->next = w->handles;
  if (w->handles) w->handles->prev = h;
  w->handles = h;
  *out_handle = h->token;
  return PTO_OK;
}

pto_status pto_worker_register(pto_worker *wt, const pto_program *p, pto_handle **out_handle) {
  static const char fn[] = "pto_worker_register";
  if (!out_handle) return fail(PTO_STATUS_INVALID_ARGUMENT, "%s: out_handle is NULL", fn);
  *out_handle = NULL;
  pto__rt_worker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, fn, &w, &pin));
  return leave(pin, worker_register_in(w, p, out_handle));
}

int64_t pto_handle_callable_id(const pto_handle *ht) {
  const pto__rt_handle *h = pto__rt_obj_get(ht, PTO__RT_OBJ_HANDLE, NULL);
  return h ? h->callable->id : -1;
}

void pto_handle_unregister(pto_handle *ht) {
  uint32_t pin;
  pto__rt_handle *h = pto__rt_obj_pin(ht, PTO__RT_OBJ_HANDLE, NULL, &pin);
  if (!h) return;
  pto__rt_async_drain(h->w);
  if (__atomic_load_n(&h->w->in_launch, __ATOMIC_ACQUIRE)) {
    pto__rt_obj_unpin(pin);
    return;
  }
  pto__rt_worker *w = h->w;
  pto__rt_callable *c = h->callable;
  if (h->prev)
    h->prev->next = h->next;
  else
    w->handles = h->next;
  if (h->next) h->next->prev = h->prev;
  pto__rt_obj_remove(h->token, PTO__RT_GONE_UNREGISTERED);
  free(h);
  if (--c->nhandles == 0 && !c->implicit) release_callable(w, c);
  pto__rt_obj_unpin(pin);
}

/* ---- launches ---------------------------------------------------------------------------- */

static void set_span(pto_launch_record *r, const char *name, int depth, uint64_t ts, uint64_t end,
                     bool dev) {
  pto_span *s = &r->spans[r->nspans++];
  s->name = name;
  s->depth = depth;
  s->ts_ns = ts;
  s->dur_ns = end > ts ? end - ts : 0;
  s->is_device = dev;
}

static pto_status launch(pto__rt_worker *w, pto__rt_callable *c, const pto_arg *args,
                         size_t nargs) {
  const pto_program *prog = c->prog;
  const pto_signature *sig = pto_program_signature(prog);
  const char *entry = *pto_signature_entry_name(sig) ? pto_signature_entry_name(sig) : "entry";
  if (nargs && !args)
    return fail(PTO_STATUS_INVALID_ARGUMENT, "launch of '%s': args is NULL", entry);
  /* Taken atomically before anything of the worker is touched: a second launch (another
   * thread, or a kernel or the orchestration calling back) is refused, never interleaved. */
  int idle = 0;
  if (!__atomic_compare_exchange_n(&w->in_launch, &idle, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return fail(PTO_STATUS_FAILED_PRECONDITION,
                "launch of '%s': a launch is already running on this worker; a worker runs one "
                "launch at a time and its API is one thread per worker (open a worker per "
                "thread, or serialize the calls)",
                entry);
  const pto__rt_worker *tls_was = pto__rt_tls_worker;
  pto__rt_tls_worker = w;
  uint64_t t0 = pto__rt_now_ns();
  pto_status s = pto__rt_validate_args(w, sig, args, nargs);
  if (s) {
    pto__rt_tls_worker = tls_was;
    __atomic_store_n(&w->in_launch, 0, __ATOMIC_RELEASE);
    return pto_status_annotate(s, "launch of '%s'", entry);
  }
  /* Cores asleep since the last launch start spinning now, while the arguments are copied, so
   * the first task does not pay for a wake-up. */
  pto__rt_pool_wake(&w->pool, prog);
  pto__rt_bound b;
  s = pto__rt_bind_args(w, sig, args, &b);
  if (s) {
    pto__rt_pool_idle(&w->pool);
    pto__rt_tls_worker = tls_was;
    __atomic_store_n(&w->in_launch, 0, __ATOMIC_RELEASE);
    return pto_status_annotate(s, "launch of '%s'", entry);
  }
  uint64_t t_bind = pto__rt_now_ns();
  pto__rt_launch *L = &w->launch;
  pto__rt_launch_begin(L, prog);
  uint64_t t_run0 = pto__rt_now_ns();
  pto_orch_bind_fn bindfn = pto_program_orch_bind(prog);
  if (bindfn) bindfn(&L->api);
  pto_orch_args oa;
  oa.tensors = b.tensors;
  oa.scalars = b.scalars;
  oa.ntensors = b.ntensors;
  oa.nscalars = b.nscalars;
  oa.chip_tensors = b.chip_tensors;
  uint64_t t_orch0 = pto__rt_now_ns();
  /* PyPTO's arity check: a config function's expected_arg_count is a minimum the launch's
   * tensors and scalars together must reach, or the entry is not called. */
  pto_orch_config_fn config = pto_program_orch_config(prog);
  const int32_t want = config ? config(&oa).expected_arg_count : 0;
  if (want > oa.ntensors + oa.nscalars) {
    char msg[160];
    snprintf(msg, sizeof msg,
             "the orchestration's config expects %d arguments, the launch has %d (%d tensors, "
             "%d scalars)",
             want, oa.ntensors + oa.nscalars, oa.ntensors, oa.nscalars);
    L->api.report_fatal(L, 1, msg);
  } else {
    pto_program_orch_entry(prog)(&oa);
  }
  uint64_t t_orch1 = pto__rt_now_ns();
  /* rt_orchestration_done ends the orchestration's span where it was called. */
  if (L->t_orch_done && L->t_orch_done < t_orch1) t_orch1 = L->t_orch_done;
  uint64_t first, last;
  s = pto__rt_launch_finish(L, &first, &last);
  if (L->dump_level) {
    pto_status ds = pto__rt_dump_write(L, w->dump_dir);
    if (!s)
      s = ds;
    else
      pto_status_free(ds);
  }
  uint64_t t_run1 = pto__rt_now_ns();
  pto__rt_unbind_args(w, &b, s == PTO_OK);
  uint64_t t_end = pto__rt_now_ns();

  pto_launch_record *r = &w->last;
  memset(r, 0, sizeof *r);
  r->inv = atomic_fetch_add(&g_launch_counter, 1) + 1;
  r->hid = pto_program_hid(prog);
  r->callable_id = c->id;
  r->ntasks = L->ntasks;
  r->ok = s == PTO_OK;
  uint64_t dev0 = first && first < t_orch0 ? first : t_orch0;
  uint64_t dev1 = last > t_orch1 ? last : t_orch1;
  set_span(r, "chip.run", 0, t0, t_end, false);
  set_span(r, "chip.run.bind", 1, t0, t_bind, false);
  set_span(r, "chip.run.runner_run", 1, t_run0, t_run1, false);
  set_span(r, "chip.run.runner_run.device_wall", 2, dev0, dev1, true);
  set_span(r, "chip.run.runner_run.device_wall.orch", 3, t_orch0, t_orch1, true);
  set_span(r, "chip.run.runner_run.device_wall.sched", 3, first ? first : t_orch0,
           first ? last : t_orch0, true);
  set_span(r, "chip.run.copy_back", 1, t_run1, t_end, false);
  w->have_last = 1;
  if (L->record_tasks) {
    pto__rt_launch_collect_tasks(L, &w->task_log);
  } else {
    w->task_log.valid = 0;
    w->task_log.ntasks = 0;
  }
  if (L->record_phases) {
    pto__rt_pool_collect_phases(&w->pool, &w->task_log);
  } else {
    w->task_log.phases_valid = 0;
    w->task_log.nphases = 0;
  }
  if (w->strace) pto__rt_emit_strace(r, w->pool.ncores);
  if (w->strace && w->task_log.valid) pto__rt_emit_stask(r, &w->task_log);
  /* Released only now: the launch record above is the worker's too, and the next launch (maybe
   * on another thread) must see it complete. */
  pto__rt_tls_worker = tls_was;
  __atomic_store_n(&w->in_launch, 0, __ATOMIC_RELEASE);
  if (s) return pto_status_annotate(s, "launch of '%s'", entry);
  return PTO_OK;
}

pto_status pto_handle_call(pto_handle *ht, const pto_arg *args, size_t nargs) {
  pto__rt_gone gone;
  uint32_t pin;
  pto__rt_handle *h = pto__rt_obj_pin(ht, PTO__RT_OBJ_HANDLE, &gone, &pin);
  if (!h)
    return fail(pto__rt_gone_code(gone, PTO_STATUS_FAILED_PRECONDITION), "pto_handle_call: %s",
                pto__rt_gone_text(gone, PTO__RT_OBJ_HANDLE));
  pto__rt_async_drain(h->w);
  return leave(pin, launch(h->w, h->callable, args, nargs));
}

pto_status pto__rt_launch_callable(pto__rt_worker *w, pto__rt_callable *c, const pto_arg *args,
                                   size_t nargs) {
  return launch(w, c, args, nargs);
}

pto_status pto_handle_submit(pto_handle *ht, const pto_arg *args, size_t nargs,
                             pto_completion **out_completion) {
  if (!out_completion)
    return fail(PTO_STATUS_INVALID_ARGUMENT, "pto_handle_submit: out_completion is NULL");
  *out_completion = NULL;
  pto__rt_gone gone;
  uint32_t pin;
  pto__rt_handle *h = pto__rt_obj_pin(ht, PTO__RT_OBJ_HANDLE, &gone, &pin);
  if (!h)
    return fail(pto__rt_gone_code(gone, PTO_STATUS_FAILED_PRECONDITION), "pto_handle_submit: %s",
                pto__rt_gone_text(gone, PTO__RT_OBJ_HANDLE));
  if (!h->w->async && h->w->in_launch) return leave(pin, not_in_launch(h->w, "pto_handle_submit"));
  return leave(pin, pto__rt_async_submit(h->w, h->callable, args, nargs, out_completion));
}

static pto_status worker_run_in(pto__rt_worker *w, const pto_program *p, const pto_arg *args,
                                size_t nargs) {
  static const char fn[] = "pto_worker_run";
  if (!p) return fail(PTO_STATUS_INVALID_ARGUMENT, "%s: program is NULL", fn);
  if (__atomic_load_n(&w->in_launch, __ATOMIC_ACQUIRE)) return not_in_launch(w, fn);
  pto__rt_callable *c;
  PTO_RETURN_IF_ERROR(get_callable(w, p, fn, &c));
  c->implicit = 1;
  return launch(w, c, args, nargs);
}

pto_status pto_worker_run(pto_worker *wt, const pto_program *p, const pto_arg *args, size_t nargs) {
  static const char fn[] = "pto_worker_run";
  pto__rt_worker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, fn, &w, &pin));
  return leave(pin, worker_run_in(w, p, args, nargs));
}

static pto_status worker_last_launch_in(pto__rt_worker *w, pto_launch_record *out_record) {
  if (!w->have_last)
    return fail(PTO_STATUS_NOT_FOUND, "pto_worker_last_launch: no launch has run on this worker");
  *out_record = w->last;
  return PTO_OK;
}

pto_status pto_worker_last_launch(const pto_worker *wt, pto_launch_record *out_record) {
  if (!out_record)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_worker_last_launch: out_record is NULL");
  pto__rt_worker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, "pto_worker_last_launch", &w, &pin));
  return leave(pin, worker_last_launch_in(w, out_record));
}

static pto_status worker_set_record_tasks_in(pto__rt_worker *w, bool on) {
  static const char fn[] = "pto_worker_set_record_tasks";
  PTO_RETURN_IF_ERROR(not_in_launch(w, fn));
  w->record_tasks = on;
  return PTO_OK;
}

pto_status pto_worker_set_record_tasks(pto_worker *wt, bool on) {
  static const char fn[] = "pto_worker_set_record_tasks";
  pto__rt_worker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, fn, &w, &pin));
  return leave(pin, worker_set_record_tasks_in(w, on));
}

static pto_status worker_set_record_phases_in(pto__rt_worker *w, bool on) {
  PTO_RETURN_IF_ERROR(not_in_launch(w, "pto_worker_set_record_phases"));
  w->record_phases = on;
  return PTO_OK;
}

pto_status pto_worker_set_record_phases(pto_worker *wt, bool on) {
  pto__rt_worker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, "pto_worker_set_record_phases", &w, &pin));
  return leave(pin, worker_set_record_phases_in(w, on));
}

static pto_status worker_last_launch_phases_in(pto__rt_worker *w,
                                               const pto_sched_phase **out_phases,
                                               size_t *out_nphases) {
  static const char fn[] = "pto_worker_last_launch_phases";
  if (!w->have_last) return fail(PTO_STATUS_NOT_FOUND, "%s: no launch has run on this worker", fn);
  const pto__rt_task_log *log = &w->task_log;
  if (log->phases_err)
    return fail(pto_status_code_of(log->phases_err), "%s: %s", fn,
                pto_status_message(log->phases_err));
  if (!log->phases_valid)
    return fail(PTO_STATUS_NOT_FOUND,
                "%s: the last launch did not record its scheduling phases: turn recording on "
                "before it (pto_worker_set_record_phases)",
                fn);
  *out_phases = log->phases;
  *out_nphases = log->nphases;
  return PTO_OK;
}

pto_status pto_worker_last_launch_phases(const pto_worker *wt, const pto_sched_phase **out_phases,
                                         size_t *out_nphases) {
  static const char fn[] = "pto_worker_last_launch_phases";
  if (!out_phases || !out_nphases)
    return fail(PTO_STATUS_INVALID_ARGUMENT, "%s: out_phases or out_nphases is NULL", fn);
  *out_phases = NULL;
  *out_nphases = 0;
  pto__rt_worker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, fn, &w, &pin));
  return leave(pin, worker_last_launch_phases_in(w, out_phases, out_nphases));
}

static pto_status worker_set_dump_args_in(pto__rt_worker *w, int level, const char *dir) {
  static const char fn[] = "pto_worker_set_dump_args";
  if (level < 0 || level > 3)
    return fail(PTO_STATUS_INVALID_ARGUMENT, "%s: level %d (0 off, 1 marked, 2 full, 3 hybrid)", fn,
                level);
  if (level && (!dir || !*dir))
    return fail(PTO_STATUS_INVALID_ARGUMENT, "%s: level %d needs a directory", fn, level);
  PTO_RETURN_IF_ERROR(not_in_launch(w, fn));
  char *copy = level ? pto_strdup(dir) : NULL;
  if (level && !copy) return fail(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
  free(w->dump_dir);
  w->dump_dir = copy;
  w->dump_level = level;
  return PTO_OK;
}

pto_status pto_worker_set_dump_args(pto_worker *wt, int level, const char *dir) {
  static const char fn[] = "pto_worker_set_dump_args";
  pto__rt_worker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, fn, &w, &pin));
  return leave(pin, worker_set_dump_args_in(w, level, dir));
}

static pto_status worker_last_launch_tasks_in(pto__rt_worker *w, const pto_task_record **out_tasks,
                                              size_t *out_ntasks) {
  static const char fn[] = "pto_worker_last_launch_tasks";
  if (!w->have_last) return fail(PTO_STATUS_NOT_FOUND, "%s: no launch has run on this worker", fn);
  const pto__rt_task_log *log = &w->task_log;
  if (log->err)
    return fail(pto_status_code_of(log->err), "%s: %s", fn, pto_status_message(log->err));
  if (!log->valid)
    return fail(PTO_STATUS_NOT_FOUND,
                "%s: the last launch did not record its tasks: turn recording on before it "
                "(pto_run_config.record_tasks or pto_worker_set_record_tasks)",
                fn);
  *out_tasks = log->tasks;
  *out_ntasks = log->ntasks;
  return PTO_OK;
}

pto_status pto_worker_last_launch_tasks(const pto_worker *wt, const pto_task_record **out_tasks,
                                        size_t *out_ntasks) {
  static const char fn[] = "pto_worker_last_launch_tasks";
  if (!out_tasks || !out_ntasks)
    return fail(PTO_STATUS_INVALID_ARGUMENT, "%s: out_tasks or out_ntasks is NULL", fn);
  *out_tasks = NULL;
  *out_ntasks = 0;
  pto__rt_worker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, fn, &w, &pin));
  return leave(pin, worker_last_launch_tasks_in(w, out_tasks, out_ntasks));
}
