/* The argument dump (pto_worker_set_dump_args): what PyPTO's runtime writes with
 * enable_dump_args, args_dump.json and args.bin as its dump_viewer reads them. A task's inputs and
 * inouts are copied when it is ready, before any of its kernels runs; its outputs and inouts when
 * its last kernel (of every block and every kernel of a mixed task) ends, before it completes. The
 * cores append entries under one mutex: the dump is a debugging aid, not a fast path. The files
 * list the entries by task, stage and argument, whatever order the tasks ran in. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pto/base.h"
#include "runtime_internal.h"

static const char *const k_dump_dtype[PTO_DTYPE_COUNT] = {
    "bool",   "int8",   "int16",   "int32",    "int64",   "uint8",   "uint16",
    "uint32", "uint64", "float16", "bfloat16", "float32", "float64", "int64"};

static pto__rt_task *leader(pto__rt_launch *L, pto__rt_task *t) { return L->task_vec[t->group]; }

/* Whether argument i (tensors first, then scalars) gets an entry, and whether its bytes: the
 * reference's levels, 1 partial (the marked ones, with data), 2 full (every argument with its
 * data), 3 hybrid (every argument, data for the marked ones only). */
static int wanted(const pto__rt_launch *L, const pto__rt_task *t, int i, int *with_data) {
  int marked = i < 64 && ((t->dump_mask >> i) & 1);
  *with_data = L->dump_level == 2 || marked;
  return L->dump_level >= 2 || marked;
}

/* Appends one entry, and the view's elements (row-major) when with_data. */
static void add(pto__rt_launch *L, const pto__rt_task *t, int i, int stage, int with_data) {
  pto__rt_dump *d = &L->dump;
  pto__rt_dump_entry e;
  memset(&e, 0, sizeof e);
  e.task_id = t->group;
  e.arg_index = i;
  memcpy(e.funcs, t->dump_funcs, sizeof e.funcs);
  e.stage = stage;
  const pto_kernel_tensor *k = i < t->ntensors ? &t->tensors[i] : NULL;
  uint64_t nbytes = 0;
  if (k) {
    e.kind = 0;
    e.role = t->kinds[i];
    e.dtype = k->dtype;
    e.rank = k->rank;
    int64_t n = 1, dense = 1;
    e.contiguous = 1;
    for (int r = k->rank - 1; r >= 0; r--) {
      e.shape[r] = k->shape[r];
      e.stride[r] = k->stride[r];
      if (k->shape[r] != 1 && k->stride[r] != dense) e.contiguous = 0;
      dense *= k->shape[r];
      n *= k->shape[r];
    }
    e.start_offset = t->starts[i];
    if (with_data) nbytes = (uint64_t)n * pto_dtype_size((pto_dtype)k->dtype);
  } else {
    e.kind = 1;
    e.role = PTO_ORCH_ARG_IN;
    int code = t->scalar_codes ? t->scalar_codes[i - t->ntensors] : 0;
    e.dtype = code ? code - 1 : PTO_DTYPE_U64; /* not known: the raw 64-bit slot */
    e.value = t->scalars[i - t->ntensors];
  }
  pthread_mutex_lock(&d->mu);
  if (pto_grow(&d->v, sizeof *d->v, &d->cap, d->n + 1) || nbytes > SIZE_MAX - d->nbin ||
      pto_grow(&d->bin, 1, &d->capbin, d->nbin + nbytes)) {
    d->oom = 1;
    pthread_mutex_unlock(&d->mu);
    return;
  }
  e.bin_offset = d->nbin;
  e.bin_size = nbytes;
  if (nbytes) {
    /* Element by element through the strides: the view may be strided. */
    size_t es = pto_dtype_size((pto_dtype)k->dtype);
    int64_t idx[PTO_MAX_RANK] = {0};
    uint8_t *out = d->bin + d->nbin;
    for (uint64_t c = 0; c < nbytes / es; c++) {
      int64_t off = 0;
      for (int r = 0; r < k->rank; r++)
        off += idx[r] * k->stride[r];
      memcpy(out + c * es, (const uint8_t *)k->data + off * (int64_t)es, es);
      for (int r = k->rank - 1; r >= 0; r--) {
        if (++idx[r] < k->shape[r]) break;
        idx[r] = 0;
      }
    }
    d->nbin += nbytes;
  }
  d->v[d->n++] = e;
  pthread_mutex_unlock(&d->mu);
}

void pto__rt_dump_before(pto__rt_launch *L, pto__rt_task *t) {
  pto__rt_task *g = leader(L, t);
  int expect = 0;
  if (!atomic_compare_exchange_strong(&g->dump_state, &expect, 1)) {
    /* Another kernel or block of the group dumps the inputs: none runs before it is done. */
    while (atomic_load(&g->dump_state) != 2)
      sched_yield();
    return;
  }
  for (int i = 0; i < g->ntensors + g->nscalars; i++) {
    int data;
    int is_in = i >= g->ntensors || g->kinds[i] != PTO_ORCH_ARG_OUT;
    if (is_in && wanted(L, g, i, &data)) add(L, g, i, 0, data);
  }
  atomic_store(&g->dump_state, 2);
}

void pto__rt_dump_block_done(pto__rt_launch *L, pto__rt_task *t) {
  pto__rt_task *g = leader(L, t);
  if (atomic_fetch_sub(&g->dump_left, 1) != 1) return;
  for (int i = 0; i < g->ntensors; i++) {
    int data;
    if (g->kinds[i] != PTO_ORCH_ARG_IN && wanted(L, g, i, &data)) add(L, g, i, 1, data);
  }
}

static int cmp_entry(const void *a, const void *b) {
  const pto__rt_dump_entry *x = a, *y = b;
  if (x->task_id != y->task_id) return x->task_id < y->task_id ? -1 : 1;
  if (x->stage != y->stage) return x->stage - y->stage;
  return x->arg_index - y->arg_index;
}

typedef struct sbuf {
  char *p;
  size_t n, cap;
  int oom;
} sbuf;

__attribute__((format(printf, 2, 3))) static void put(sbuf *b, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->cap - b->n;
    int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? room : 0, fmt, ap);
    va_end(ap);
    if (k < 0) {
      b->oom = 1;
      return;
    }
    if (b->p && (size_t)k < room) {
      b->n += (size_t)k;
      return;
    }
    if (pto_grow(&b->p, 1, &b->cap, b->n + (size_t)k + 1)) {
      b->oom = 1;
      return;
    }
  }
}

static void put_dims(sbuf *b, const int64_t *v, int n) {
  put(b, "[");
  for (int r = 0; r < n; r++)
    put(b, "%s%" PRId64, r ? ", " : "", v[r]);
  put(b, "]");
}

/* Scalars as their dtype, as the reference writes them: NaN as null, infinities as "$Inf" /
 * "-$Inf", other floats with a '.' or exponent, integers in their own width. */
static void put_scalar(sbuf *b, int dtype, uint64_t raw) {
  if (dtype == PTO_DTYPE_F32 || dtype == PTO_DTYPE_F64) {
    double v;
    if (dtype == PTO_DTYPE_F32) {
      float f;
      uint32_t u = (uint32_t)raw;
      memcpy(&f, &u, sizeof f);
      v = f;
    } else {
      memcpy(&v, &raw, sizeof v);
    }
    if (v != v) {
      put(b, "null");
    } else if (v == (double)INFINITY || v == -(double)INFINITY) {
      put(b, "\"%s$Inf\"", v < 0 ? "-" : "");
    } else {
      char num[40];
      snprintf(num, sizeof num, "%.*g", dtype == PTO_DTYPE_F32 ? 9 : 17, v);
      put(b, "%s%s", num, strpbrk(num, ".e") ? "" : ".0");
    }
    return;
  }
  switch (dtype) {
  case PTO_DTYPE_BOOL: put(b, "%s", raw ? "true" : "false"); return;
  case PTO_DTYPE_I8: put(b, "%d", (int)(int8_t)raw); return;
  case PTO_DTYPE_I16: put(b, "%d", (int)(int16_t)raw); return;
  case PTO_DTYPE_I32: put(b, "%" PRId32, (int32_t)raw); return;
  case PTO_DTYPE_I64:
  case PTO_DTYPE_INDEX: put(b, "%" PRId64, (int64_t)raw); return;
  case PTO_DTYPE_U8: put(b, "%u", (unsigned)(uint8_t)raw); return;
  case PTO_DTYPE_U16: put(b, "%u", (unsigned)(uint16_t)raw); return;
  case PTO_DTYPE_U32: put(b, "%" PRIu32, (uint32_t)raw); return;
  default: put(b, "%" PRIu64, raw); return;
  }
}

/* The manifest: the reference's header (level, counters, bin_file) and one "args" entry per
 * dumped argument. */
static void put_manifest(sbuf *b, const pto__rt_dump *d, const char *run_dir, int level) {
  static const char *const roles[] = {"input", "output", "inout"};
  size_t stage[2] = {0, 0}, role[3] = {0, 0, 0};
  for (size_t i = 0; i < d->n; i++) {
    const pto__rt_dump_entry *e = &d->v[i];
    stage[e->stage != 0]++;
    role[e->role >= PTO_ORCH_ARG_IN && e->role <= PTO_ORCH_ARG_INOUT ? e->role - PTO_ORCH_ARG_IN
                                                                     : 0]++;
  }
  put(b,
      "{\n  \"run_dir\": \"%s\",\n  \"bin_format\": {\"type\": \"logical_contiguous\", "
      "\"byte_order\": \"little_endian\"},\n  \"dump_args_level\": %d,\n  \"total_args\": %zu,\n"
      "  \"before_dispatch\": %zu,\n  \"after_completion\": %zu,\n  \"input_args\": %zu,\n"
      "  \"output_args\": %zu,\n  \"inout_args\": %zu,\n  \"truncated_args\": 0,\n"
      "  \"dropped_records\": 0,\n  \"dropped_overwrite\": 0,\n  \"bin_file\": %s,\n"
      "  \"args\": [",
      run_dir, level, d->n, stage[0], stage[1], role[0], role[1], role[2],
      level == 3 && !d->nbin ? "null" : "\"args.bin\"");
  for (size_t i = 0; i < d->n; i++) {
    const pto__rt_dump_entry *e = &d->v[i];
    int r =
        e->role >= PTO_ORCH_ARG_IN && e->role <= PTO_ORCH_ARG_INOUT ? e->role - PTO_ORCH_ARG_IN : 0;
    put(b, "%s\n    {\"task_id\": \"0x%016" PRIx64 "\", \"func_id\": [", i ? "," : "", e->task_id);
    for (int k = 0; k < PTO_ORCH_NSLOTS && (k == 0 || e->funcs[k] >= 0); k++)
      put(b, "%s%d", k ? ", " : "", (int)e->funcs[k]);
    put(b,
        "], \"arg_index\": %d, \"role\": \"%s\", \"stage\": \"%s\", \"kind\": \"%s\", "
        "\"dtype\": \"%s\"",
        e->arg_index, roles[r], e->stage ? "after_completion" : "before_dispatch",
        e->kind ? "scalar" : "tensor",
        e->dtype >= 0 && e->dtype < PTO_DTYPE_COUNT ? k_dump_dtype[e->dtype] : "uint8");
    if (e->kind) {
      put(b, ", \"value\": ");
      put_scalar(b, e->dtype, e->value);
    }
    int64_t numel = 1;
    for (int k = 0; k < e->rank; k++)
      numel *= e->shape[k];
    put(b, ", \"is_contiguous\": %s, \"shape\": ", e->contiguous || e->kind ? "true" : "false");
    put_dims(b, e->shape, e->rank);
    put(b, ", \"strides\": ");
    put_dims(b, e->stride, e->rank);
    put(b,
        ", \"start_offset\": %" PRIu64 ", \"numel\": %" PRId64 ", \"bin_offset\": %" PRIu64
        ", \"bin_size\": %" PRIu64 ", \"truncated\": false, \"overwritten\": false}",
        e->start_offset, numel, e->bin_offset, e->bin_size);
  }
  put(b, "\n  ]\n}\n");
}

pto_status pto__rt_dump_write(pto__rt_launch *L, const char *dir) {
  pto__rt_dump *d = &L->dump;
  pto_status s = PTO_OK;
  if (d->oom) {
    s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory collecting the argument dump");
    goto out;
  }
  if (!d->n) goto out;
  qsort(d->v, d->n, sizeof *d->v, cmp_entry);
  /* args.bin in the manifest's order too: the cores appended the bytes as their tasks ran, an
   * order that changes from run to run, and two dumps of one launch must be one file. */
  if (d->nbin) {
    uint8_t *bin = pto_malloc(d->nbin);
    if (!bin) {
      s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory writing the argument dump");
      goto out;
    }
    uint64_t at = 0;
    for (size_t i = 0; i < d->n; i++) {
      pto__rt_dump_entry *e = &d->v[i];
      if (e->bin_size) memcpy(bin + at, d->bin + e->bin_offset, e->bin_size);
      e->bin_offset = at;
      at += e->bin_size;
    }
    free(d->bin);
    d->bin = bin;
    d->capbin = d->nbin;
  }
  /* run_dir: the dump folder's own name, as the reference writes it. */
  char full[256], *run_dir = full;
  snprintf(full, sizeof full, "%s", dir);
  for (size_t n = strlen(full); n > 1 && full[n - 1] == '/';)
    full[--n] = '\0';
  if (strrchr(full, '/')) run_dir = strrchr(full, '/') + 1;
  run_dir[strcspn(run_dir, "\"\\")] = '\0';
  sbuf b = {0};
  put_manifest(&b, d, run_dir, L->dump_level);
  if (b.oom) {
    s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory writing the argument dump");
  } else {
    size_t len = strlen(dir) + 32;
    char *path = pto_malloc(len);
    if (!path) {
      s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory writing the argument dump");
    } else {
      s = pto_file_mkdirs(dir, 0755);
      snprintf(path, len, "%s/args.bin", dir);
      /* Level 3 without a marked tensor has no payload: no args.bin (nor an older one). */
      if (!s && L->dump_level == 3 && !d->nbin) {
        if (unlink(path) != 0 && errno != ENOENT)
          s = pto_status_make(PTO_STATUS_IO, "cannot remove %s: %s", path, strerror(errno));
      } else if (!s) {
        s = pto_file_write_atomic(path, d->bin ? (const void *)d->bin : "", d->nbin, 0644);
      }
      snprintf(path, len, "%s/args_dump.json", dir);
      if (!s) s = pto_file_write_atomic(path, b.p, b.n, 0644);
      free(path);
    }
  }
  free(b.p);
  if (s) s = pto_status_annotate(s, "the argument dump (pto_worker_set_dump_args) in %s", dir);
out:
  d->n = 0;
  d->nbin = 0;
  d->oom = 0;
  return s;
}

void pto__rt_dump_fini(pto__rt_dump *d) {
  free(d->v);
  free(d->bin);
  d->v = NULL;
  d->bin = NULL;
  d->n = d->cap = d->nbin = d->capbin = 0;
}
