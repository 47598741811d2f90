/* Binding a launch's arguments: validation against the signature (every message names the
 * parameter), device copies of host tensors in and out, and the [STRACE] export of spans. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pto/base.h"
#include "runtime_internal.h"

/* ---- host copies ------------------------------------------------------------------------- */

static void copy_strided(uint8_t *contig, const pto_host_tensor *t, int to_contig) {
  size_t es = pto_dtype_size(t->dtype);
  uint8_t *data = t->data;
  if (t->rank == 0) {
    if (to_contig)
      memcpy(contig, data, es);
    else
      memcpy(data, contig, es);
    return;
  }
  /* A row-major tensor is one block: one memcpy instead of one per innermost row. */
  int64_t expect = 1, numel = 1;
  int dense = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    if (t->shape[d] != 1 && t->strides[d] != expect) dense = 0;
    expect *= t->shape[d];
    numel *= t->shape[d];
  }
  if (dense) {
    if (numel <= 0) return;
    if (to_contig)
      memcpy(contig, data, (size_t)numel * es);
    else
      memcpy(data, contig, (size_t)numel * es);
    return;
  }
  int inner = t->rank - 1;
  int64_t n_inner = t->shape[inner];
  int64_t outer = 1;
  for (int d = 0; d < inner; d++)
    outer *= t->shape[d];
  if (n_inner <= 0 || outer <= 0) return;
  int64_t idx[PTO_MAX_RANK] = {0};
  for (int64_t o = 0; o < outer; o++) {
    int64_t off = 0;
    for (int d = 0; d < inner; d++)
      off += idx[d] * t->strides[d];
    uint8_t *h = data + off * (int64_t)es;
    if (t->strides[inner] == 1) {
      if (to_contig)
        memcpy(contig, h, (size_t)n_inner * es);
      else
        memcpy(h, contig, (size_t)n_inner * es);
    } else {
      for (int64_t i = 0; i < n_inner; i++) {
        uint8_t *e = h + i * t->strides[inner] * (int64_t)es;
        if (to_contig)
          memcpy(contig + i * (int64_t)es, e, es);
        else
          memcpy(e, contig + i * (int64_t)es, es);
      }
    }
    contig += (size_t)n_inner * es;
    for (int d = inner - 1; d >= 0; d--) {
      if (++idx[d] < t->shape[d]) break;
      idx[d] = 0;
    }
  }
}

void pto__rt_copy_host_to_contig(void *dst, const pto_host_tensor *t) { copy_strided(dst, t, 1); }
void pto__rt_copy_contig_to_host(const pto_host_tensor *t, const void *src) {
  copy_strided((uint8_t *)src, t, 0);
}

/* ---- validation -------------------------------------------------------------------------- */

static void fmt_shape(char *buf, size_t cap, int rank, const int64_t *shape) {
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int d = 0; d < rank && n < cap; d++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? "," : "", (long long)shape[d]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

static void fmt_sig_shape(char *buf, size_t cap, const pto_signature *sig, const pto_sig_param *p) {
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int d = 0; d < p->rank && n < cap; d++) {
    if (p->dims[d].sym >= 0 && p->dims[d].sym < sig->nsyms)
      n += (size_t)snprintf(buf + n, cap - n, "%s%s", d ? "," : "", sig->syms[p->dims[d].sym]);
    else
      n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? "," : "", (long long)p->dims[d].value);
  }
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

static void fmt_scalar(char *buf, size_t cap, pto_scalar s) {
  if (pto_dtype_is_float(s.dtype))
    snprintf(buf, cap, "%g", s.f);
  else if (s.dtype == PTO_DTYPE_BOOL)
    snprintf(buf, cap, "%s", s.i ? "true" : "false");
  else if (pto_dtype_is_signed(s.dtype))
    snprintf(buf, cap, "%lld", (long long)s.i);
  else
    snprintf(buf, cap, "%llu", (unsigned long long)s.u);
}

static const char *dir_name(pto_dir d) {
  return d == PTO_DIR_OUT ? "out" : d == PTO_DIR_INOUT ? "inout" : "in";
}

static const char *kind_name(pto_arg_type k) {
  switch (k) {
  case PTO_ARG_HOST_TENSOR: return "a host tensor";
  case PTO_ARG_DEVICE_TENSOR: return "a device tensor";
  case PTO_ARG_DIST_TENSOR:
    return "a distributed worker's tensor (pass it to pto_dist_worker_run, not to an L2 worker)";
  case PTO_ARG_SCALAR: return "a scalar";
  case PTO_ARG_NONE: return "no argument (kind unset)";
  default: return "an argument of no known kind (not made by a pto_arg_* call)";
  }
}

/* A tensor argument's dtype, rank and shape, resolved (device tokens looked up). */
typedef struct tensor_view {
  pto_dtype dtype;
  int rank;
  const int64_t *shape;
  const pto__rt_dtensor *dev; /* device tensors */
} tensor_view;

static pto_status invalid(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static pto_status invalid(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pto_status s = pto_status_makev(PTO_STATUS_INVALID_ARGUMENT, fmt, ap);
  va_end(ap);
  return s;
}

/* "[2x3x4]" in a static buffer: for messages only, from one thread at a time per call site. */
static const char *shape_text(int rank, const int64_t *shape) {
  static _Thread_local char buf[PTO_MAX_RANK * 22 + 3];
  size_t n = 0;
  buf[n++] = '[';
  for (int d = 0; d < rank; d++)
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%lld", d ? "x" : "", (long long)shape[d]);
  snprintf(buf + n, sizeof buf - n, "]");
  return buf;
}

static pto_status resolve_tensor(pto__rt_worker *w, const pto_sig_param *p, const pto_arg *a,
                                 tensor_view *out) {
  if (a->kind == PTO_ARG_HOST_TENSOR) {
    const pto_host_tensor *h = &a->host;
    if (h->rank < 0 || h->rank > PTO_MAX_RANK)
      return invalid("parameter '%s': the host tensor's rank %d is out of range (0 to %d)", p->name,
                     h->rank, PTO_MAX_RANK);
    if ((unsigned)h->dtype >= PTO_DTYPE_COUNT)
      return invalid("parameter '%s': the host tensor's dtype %d is not a dtype", p->name,
                     (int)h->dtype);
    int64_t numel = 1;
    for (int d = 0; d < h->rank; d++) {
      if (h->shape[d] < 0)
        return invalid("parameter '%s': the host tensor's dim %d is negative (%lld)", p->name, d,
                       (long long)h->shape[d]);
    }
    if (pto_shape_size(h->rank, h->shape, h->dtype, &numel, NULL))
      return invalid("parameter '%s': the host tensor's size overflows (%s elements of %zu bytes "
                     "do not fit in 64 bits)",
                     p->name, shape_text(h->rank, h->shape), pto_dtype_size(h->dtype));
    int bad = pto__rt_host_strides_overflow(h);
    if (bad >= 0 && bad < h->rank)
      return invalid("parameter '%s': the host tensor's strides overflow (stride %lld of dim "
                     "%d, extent %lld)",
                     p->name, (long long)h->strides[bad], bad, (long long)h->shape[bad]);
    if (bad >= 0) return invalid("parameter '%s': the host tensor's strides overflow", p->name);
    if (numel > 0 && !h->data)
      return invalid("parameter '%s': the host tensor has no data (NULL)", p->name);
    out->dtype = h->dtype;
    out->rank = h->rank;
    out->shape = h->shape;
    out->dev = NULL;
    return PTO_OK;
  }
  pto__rt_gone gone;
  const pto__rt_dtensor *d = pto__rt_obj_get(a->device, PTO__RT_OBJ_TENSOR, &gone);
  if (!d)
    return invalid("parameter '%s': the device tensor is stale: %s", p->name,
                   pto__rt_gone_text(gone, PTO__RT_OBJ_TENSOR));
  if (d->w != w)
    return invalid("parameter '%s': the device tensor belongs to another worker; device tensors "
                   "are only valid on the worker that allocated them",
                   p->name);
  out->dtype = d->dtype;
  out->rank = d->rank;
  out->shape = d->shape;
  out->dev = d;
  return PTO_OK;
}

typedef struct sym_binding {
  int bound;
  int64_t value;
  int param;
  int dim;
} sym_binding;

static pto_status check_tensor(const pto_signature *sig, int pi, const pto_arg *a,
                               const tensor_view *v, sym_binding *syms) {
  const pto_sig_param *p = &sig->params[pi];
  char want[160], got[160];
  if (v->dtype != p->dtype)
    return invalid("parameter '%s': expected dtype %s, got %s", p->name, pto_dtype_name(p->dtype),
                   pto_dtype_name(v->dtype));
  /* The shapes are formatted for a message only: a launch that passes formats nothing. */
  if (v->rank != p->rank) {
    fmt_sig_shape(want, sizeof want, sig, p);
    fmt_shape(got, sizeof got, v->rank, v->shape);
    return invalid("parameter '%s': expected rank %d %s, got rank %d %s", p->name, p->rank, want,
                   v->rank, got);
  }
  for (int d = 0; d < p->rank; d++) {
    int sym = p->dims[d].sym;
    if (sym < 0) { /* a value of -1 (a signature made by hand) leaves the dim free */
      if (p->dims[d].value >= 0 && v->shape[d] != p->dims[d].value) {
        fmt_sig_shape(want, sizeof want, sig, p);
        fmt_shape(got, sizeof got, v->rank, v->shape);
        return invalid("parameter '%s': expected shape %s, got %s", p->name, want, got);
      }
      continue;
    }
    sym_binding *b = &syms[sym];
    if (!b->bound) {
      b->bound = 1;
      b->value = v->shape[d];
      b->param = pi;
      b->dim = d;
    } else if (b->value != v->shape[d]) {
      return invalid("parameter '%s': dynamic dim '%s' (dim %d) is %lld, but parameter '%s' "
                     "(dim %d) bound '%s' to %lld; a symbol bound twice must agree",
                     p->name, sig->syms[sym], d, (long long)v->shape[d], sig->params[b->param].name,
                     b->dim, sig->syms[sym], (long long)b->value);
    }
  }
  if (a->kind == PTO_ARG_HOST_TENSOR && a->readonly && p->dir != PTO_DIR_IN)
    return invalid("parameter '%s' is %s, but its host tensor was passed read-only "
                   "(pto_arg_host_readonly); pass a writable tensor",
                   p->name, dir_name(p->dir));
  return PTO_OK;
}

static pto_status check_scalar(const pto_sig_param *p, const pto_arg *a) {
  if (a->scalar.dtype != p->dtype)
    return invalid("parameter '%s': expected a scalar of dtype %s, got %s", p->name,
                   pto_dtype_name(p->dtype),
                   (unsigned)a->scalar.dtype < PTO_DTYPE_COUNT ? pto_dtype_name(a->scalar.dtype)
                                                               : "an invalid dtype");
  pto_status s = pto_scalar_check(a->scalar); /* an i32 of 2^32 + 1 would pass as 1 */
  if (s) return pto_status_annotate(s, "parameter '%s'", p->name);
  pto_scalar fixed = p->value;
  fixed.dtype = p->dtype;
  if (p->bind == PTO_BIND_LITERAL && pto_scalar_to_slot(a->scalar) != pto_scalar_to_slot(fixed)) {
    char want[64], got[64];
    fmt_scalar(want, sizeof want, fixed);
    fmt_scalar(got, sizeof got, a->scalar);
    return invalid("parameter '%s': got %s, but its value was fixed at compile time to %s; pass "
                   "%s, or recompile with -D %s=runtime to pass it at launch",
                   p->name, got, want, want, p->name);
  }
  return PTO_OK;
}

int pto__rt_host_strides_overflow(const pto_host_tensor *h) {
  int64_t span = 0;
  for (int d = 0; d < h->rank; d++)
    if (h->shape[d] == 0) return -1; /* no element: nothing is reached */
  for (int d = 0; d < h->rank; d++) {
    int64_t reach;
    if (h->strides[d] == INT64_MIN ||
        __builtin_mul_overflow(h->shape[d] - 1, h->strides[d] < 0 ? -h->strides[d] : h->strides[d],
                               &reach) ||
        __builtin_add_overflow(span, reach, &span))
      return d;
  }
  if (__builtin_mul_overflow(span, (int64_t)pto_dtype_size(h->dtype), &span)) return h->rank;
  return -1;
}

/* Host byte span of a host tensor: [lo, hi). */
static void host_span(const pto_host_tensor *h, uintptr_t *lo, uintptr_t *hi) {
  int64_t l = 0, u = 0, es = (int64_t)pto_dtype_size(h->dtype);
  for (int d = 0; d < h->rank; d++) {
    if (h->shape[d] <= 0) {
      *lo = *hi = 0;
      return;
    }
    int64_t ext = (h->shape[d] - 1) * h->strides[d];
    if (ext < 0)
      l += ext;
    else
      u += ext;
  }
  *lo = (uintptr_t)h->data + (uintptr_t)(l * es);
  *hi = (uintptr_t)h->data + (uintptr_t)((u + 1) * es);
}

/* pto__rt_validate_args, and with dist_view (a distributed worker's host arguments, w NULL) the
 * same checks where dist_view gives the dtype, rank and shape of every tensor argument that is
 * not a host tensor (or refuses it). */
static pto_status validate(pto__rt_worker *w, const pto_signature *sig, const pto_arg *args,
                           size_t nargs, pto__rt_dist_view_fn dist_view, void *ctx) {
  if (nargs != (size_t)sig->nparams) {
    char names[512];
    size_t n = 0;
    names[0] = 0;
    for (int i = 0; i < sig->nparams && n < sizeof names; i++)
      n +=
          (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", sig->params[i].name);
    return invalid("expected %d argument%s (%s), got %zu", sig->nparams,
                   sig->nparams == 1 ? "" : "s", names, nargs);
  }
  sym_binding *syms = pto_calloc((size_t)sig->nsyms + 1, sizeof *syms);
  if (!syms) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory validating arguments");
  pto_status s = PTO_OK;
  for (int i = 0; !s && i < sig->nparams; i++) {
    const pto_sig_param *p = &sig->params[i];
    const pto_arg *a = &args[i];
    if (p->is_tensor && dist_view && a->kind != PTO_ARG_HOST_TENSOR && a->kind != PTO_ARG_SCALAR) {
      tensor_view v = {0};
      s = dist_view(ctx, p, a, &v.dtype, &v.rank, &v.shape);
      if (!s) s = check_tensor(sig, i, a, &v, syms);
    } else if (p->is_tensor) {
      if (a->kind != PTO_ARG_HOST_TENSOR && a->kind != PTO_ARG_DEVICE_TENSOR) {
        char want[160];
        fmt_sig_shape(want, sizeof want, sig, p);
        s = invalid("parameter '%s': expected a tensor (%s %s %s), got %s", p->name,
                    dir_name(p->dir), pto_dtype_name(p->dtype), want, kind_name(a->kind));
        break;
      }
      tensor_view v = {0};
      s = resolve_tensor(w, p, a, &v);
      if (!s) s = check_tensor(sig, i, a, &v, syms);
    } else if (a->kind != PTO_ARG_SCALAR) {
      s = invalid("parameter '%s': expected a scalar (%s), got %s", p->name,
                  pto_dtype_name(p->dtype), kind_name(a->kind));
    } else {
      s = check_scalar(p, a);
    }
  }
  free(syms);
  if (s) return s;
  /* Each host tensor gets its own device copy: written ones must not share host memory with
   * another host argument, or the copy back would be ambiguous. */
  for (int i = 0; i < sig->nparams; i++) {
    if (args[i].kind != PTO_ARG_HOST_TENSOR) continue;
    uintptr_t ilo, ihi;
    host_span(&args[i].host, &ilo, &ihi);
    if (ilo == ihi) continue;
    for (int j = i + 1; j < sig->nparams; j++) {
      if (args[j].kind != PTO_ARG_HOST_TENSOR) continue;
      if (sig->params[i].dir == PTO_DIR_IN && sig->params[j].dir == PTO_DIR_IN) continue;
      uintptr_t jlo, jhi;
      host_span(&args[j].host, &jlo, &jhi);
      if (jlo == jhi || ihi <= jlo || jhi <= ilo) continue;
      int wi = sig->params[i].dir != PTO_DIR_IN;
      return invalid("parameters '%s' and '%s' overlap in host memory and '%s' is %s; pass "
                     "separate buffers",
                     sig->params[i].name, sig->params[j].name,
                     wi ? sig->params[i].name : sig->params[j].name,
                     dir_name(wi ? sig->params[i].dir : sig->params[j].dir));
    }
  }
  return PTO_OK;
}

pto_status pto__rt_validate_args(pto__rt_worker *w, const pto_signature *sig, const pto_arg *args,
                                 size_t nargs) {
  return validate(w, sig, args, nargs, NULL, NULL);
}

pto_status pto__rt_validate_host_args(const pto_signature *sig, const pto_arg *args, size_t nargs,
                                      pto__rt_dist_view_fn dist_view, void *ctx) {
  return validate(NULL, sig, args, nargs, dist_view, ctx);
}

/* ---- binding ----------------------------------------------------------------------------- */

void pto__rt_unbind_args(pto__rt_worker *w, pto__rt_bound *b, int copy_back) {
  for (int i = 0; i < b->nhosts; i++) {
    pto__rt_host_binding *h = &b->hosts[i];
    if (copy_back && h->dir != PTO_DIR_IN)
      pto__rt_copy_contig_to_host(h->host, pto__rt_devmem_host(&w->mem, h->addr));
    pto__rt_devmem_free(&w->mem, h->addr);
  }
  free(b->tensors);
  free(b->chip_tensors);
  free(b->scalars);
  free(b->hosts);
  memset(b, 0, sizeof *b);
}

pto_status pto__rt_bind_args(pto__rt_worker *w, const pto_signature *sig, const pto_arg *args,
                             pto__rt_bound *out) {
  memset(out, 0, sizeof *out);
  int nt = 0, ns = 0, nh = 0;
  for (int i = 0; i < sig->nparams; i++) {
    if (sig->params[i].is_tensor)
      nt++;
    else
      ns++;
    nh += args[i].kind == PTO_ARG_HOST_TENSOR;
  }
  out->tensors = pto_calloc((size_t)nt + 1, sizeof *out->tensors);
  out->chip_tensors = pto_calloc((size_t)nt + 1, sizeof *out->chip_tensors);
  out->scalars = pto_calloc((size_t)ns + 1, sizeof *out->scalars);
  out->hosts = pto_calloc((size_t)nh + 1, sizeof *out->hosts);
  if (!out->tensors || !out->chip_tensors || !out->scalars || !out->hosts) {
    pto__rt_unbind_args(w, out, 0);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory binding arguments");
  }
  for (int i = 0; i < sig->nparams; i++) {
    const pto_sig_param *p = &sig->params[i];
    const pto_arg *a = &args[i];
    if (!p->is_tensor) {
      /* A specialized scalar keeps its slot and carries the compiled-in value. */
      pto_scalar v = p->bind == PTO_BIND_LITERAL ? p->value : a->scalar;
      v.dtype = p->dtype;
      out->scalars[out->nscalars++] = pto_scalar_to_slot(v);
      continue;
    }
    pto_orch_tensor *t = &out->tensors[out->ntensors++];
    memset(t, 0, sizeof *t);
    t->owner_task_id = -1; /* made by no task of the launch */
    int rank;
    const int64_t *shape;
    if (a->kind == PTO_ARG_DEVICE_TENSOR) {
      const pto__rt_dtensor *d = pto__rt_obj_get(a->device, PTO__RT_OBJ_TENSOR, NULL);
      t->buffer = t->addr = d->addr;
      t->dtype = (int32_t)d->dtype;
      rank = d->rank;
      shape = d->shape;
    } else {
      const pto_host_tensor *h = &a->host;
      uint64_t nbytes = (uint64_t)pto_host_tensor_numel(h) * pto_dtype_size(h->dtype);
      uint64_t addr;
      int zero = 0;
      pto_status s = pto__rt_devmem_alloc_whole(&w->mem, nbytes, "the device copy of parameter",
                                                p->name, &addr, &zero);
      if (s) {
        pto__rt_unbind_args(w, out, 0);
        return s;
      }
      pto__rt_host_binding *hb = &out->hosts[out->nhosts++];
      hb->param = i;
      hb->dir = p->dir;
      hb->host = h;
      hb->addr = addr;
      hb->nbytes = nbytes;
      void *dev = pto__rt_devmem_host(&w->mem, addr);
      if (p->dir == PTO_DIR_OUT) {
        /* out is never copied in; zeros keep runs deterministic (memory never handed out
         * before holds them already) */
        if (!zero) memset(dev, 0, (size_t)nbytes);
      } else {
        pto__rt_copy_host_to_contig(dev, h);
      }
      t->buffer = t->addr = addr;
      t->dtype = (int32_t)h->dtype;
      rank = h->rank;
      shape = h->shape;
    }
    t->rank = rank;
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; d--) {
      /* The orchestration ABI (ChipTensor, PTO2's) holds extents in 32 bits: a larger one
       * would silently become another (2^32 + 100 is 100). */
      if (shape[d] < 0 || shape[d] > (int64_t)UINT32_MAX) {
        pto__rt_unbind_args(w, out, 0);
        return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                               "parameter %d '%s': extent %lld of dim %d is outside 0 to %u, the "
                               "extents the orchestration ABI holds (32 bits)",
                               i, p->name, (long long)shape[d], d, UINT32_MAX);
      }
      t->shape[d] = shape[d];
      t->stride[d] = stride;
      stride *= shape[d] ? shape[d] : 1;
    }
    pto__rt_chip_tensor(t, &out->chip_tensors[out->ntensors - 1]);
  }
  return PTO_OK;
}

/* ---- [STRACE] ---------------------------------------------------------------------------- */

/* A distributed worker's chip writes its rank as an extra field, which v=1 parsers skip: per
 * thread, since chips may be threads of one process (pto_dist_config.chips). */
static _Thread_local int g_strace_rank = -1;

void pto__rt_set_strace_rank(int rank) { g_strace_rank = rank; }

void pto__rt_emit_strace(const pto_launch_record *rec, int ncores) {
  long pid = (long)getpid(), tid = (long)gettid();
  char rank[24] = "", counts[48];
  if (g_strace_rank >= 0) snprintf(rank, sizeof rank, " rank=%d", g_strace_rank);
  snprintf(counts, sizeof counts, " tasks=%llu cores=%d", (unsigned long long)rec->ntasks, ncores);
  for (int i = 0; i < rec->nspans; i++) {
    const pto_span *sp = &rec->spans[i];
    char line[512];
    /* hid as pto_hid_format prints it: lowercase hex, no 0x, no padding. */
    int n =
        snprintf(line, sizeof line,
                 "[STRACE] v=1 pid=%ld tid=%ld inv=%llu hid=%llx depth=%d name=%s ts=%llu "
                 "dur=%llu%s%s%s\n",
                 pid, tid, (unsigned long long)rec->inv, (unsigned long long)rec->hid, sp->depth,
                 sp->name, (unsigned long long)sp->ts_ns, (unsigned long long)sp->dur_ns,
                 sp->is_device ? " clk=dev" : "", sp->depth == 0 ? counts : "", rank);
    if (n <= 0) continue;
    if ((size_t)n >= sizeof line) n = (int)sizeof line - 1;
    /* One write per line, so lines of concurrent launches never interleave. */
    ssize_t off = 0;
    while (off < n) {
      ssize_t k = write(STDERR_FILENO, line + off, (size_t)(n - off));
      if (k <= 0) break;
      off += k;
    }
  }
}

/* One [STASK] line per recorded task (pto trace --timeline reads them back), after the launch's
 * [STRACE] lines: [STASK] v=1 pid tid inv hid task kernel core ready ts dur deps=a,b|- */
void pto__rt_emit_stask(const pto_launch_record *rec, const pto__rt_task_log *log) {
  long pid = (long)getpid(), tid = (long)gettid();
  for (size_t i = 0; i < log->ntasks; i++) {
    const pto_task_record *t = &log->tasks[i];
    if (t->core < 0) continue; /* did not run */
    char line[4096];
    int n = snprintf(line, sizeof line,
                     "[STASK] v=1 pid=%ld tid=%ld inv=%llu hid=%llx task=%llu kernel=%s core=%d "
                     "ready=%llu ts=%llu dur=%llu deps=",
                     pid, tid, (unsigned long long)rec->inv, (unsigned long long)rec->hid,
                     (unsigned long long)t->task_id, t->kernel ? t->kernel : "?", t->core,
                     (unsigned long long)t->ready_ns, (unsigned long long)t->start_ns,
                     (unsigned long long)(t->end_ns - t->start_ns));
    if (n <= 0 || (size_t)n >= sizeof line) continue;
    if (!t->ndeps) n += snprintf(line + n, sizeof line - (size_t)n, "-");
    for (int d = 0; d < t->ndeps && (size_t)n < sizeof line - 24; d++)
      n += snprintf(line + n, sizeof line - (size_t)n, "%s%llu", d ? "," : "",
                    (unsigned long long)t->deps[d]);
    if ((size_t)n >= sizeof line - 24) continue; /* too many deps for one line: left out */
    line[n++] = '\n';
    ssize_t off = 0;
    while (off < n) {
      ssize_t k = write(STDERR_FILENO, line + off, (size_t)(n - off));
      if (k <= 0) break;
      off += k;
    }
  }
}
