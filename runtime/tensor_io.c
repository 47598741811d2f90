/* Host <-> device copies by tensor handle: an element range or a box (slice) of a device
 * tensor, checked against the tensor's extent, next to the raw-address pto_worker_copy_to/from.
 * The distributed worker's resident tensors have their own calls (pto/dist.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime_internal.h"

/* Checks the worker, the tensor (live, this worker's) and that no launch runs. */
static pto_status resolve(const char *fn, pto_worker *wt, const pto_device_tensor *t,
                          const void *host, pto__rt_worker **out_w, pto__rt_dtensor **out_d) {
  pto__rt_gone gone;
  pto__rt_worker *w = pto__rt_obj_get(wt, PTO__RT_OBJ_WORKER, &gone);
  if (!w)
    return pto_status_make(pto__rt_gone_code(gone, PTO_STATUS_FAILED_PRECONDITION), "%s: %s", fn,
                           pto__rt_gone_text(gone, PTO__RT_OBJ_WORKER));
  pto__rt_async_drain(w); /* submitted launches end first */
  if (w->in_launch)
    return pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                           "%s: a launch is running on this worker; call it between launches, "
                           "not from a kernel or the orchestration",
                           fn);
  pto__rt_dtensor *d = pto__rt_obj_get(t, PTO__RT_OBJ_TENSOR, &gone);
  if (!d)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: %s", fn,
                           pto__rt_gone_text(gone, PTO__RT_OBJ_TENSOR));
  if (d->w != w)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: the device tensor belongs to another worker", fn);
  if (!host) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: host pointer is NULL", fn);
  *out_w = w;
  *out_d = d;
  return PTO_OK;
}

static void shape_text(const pto__rt_dtensor *d, char *buf, size_t n) {
  size_t k = 0;
  k += (size_t)snprintf(buf + k, n - k, "[");
  for (int i = 0; i < d->rank && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, i ? "," : "", d->shape[i]);
  if (k < n) snprintf(buf + k, n - k, "] %s", pto_dtype_name(d->dtype));
}

/* a + b without overflow (saturates), for messages about out-of-range requests. */
static int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

static int64_t numel(const pto__rt_dtensor *d) {
  int64_t n = 1;
  for (int i = 0; i < d->rank; i++)
    n *= d->shape[i];
  return n;
}

static pto_status copy_range(const char *fn, int to_device, pto_worker *wt,
                             const pto_device_tensor *t, int64_t offset, void *host,
                             int64_t count) {
  pto__rt_worker *w;
  pto__rt_dtensor *d;
  PTO_RETURN_IF_ERROR(resolve(fn, wt, t, host, &w, &d));
  int64_t n = numel(d);
  if (offset < 0 || count < 0 || offset > n || count > n - offset) {
    char shape[128];
    shape_text(d, shape, sizeof shape);
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: elements [%" PRId64 ", %" PRId64
                           ") are outside the tensor's %" PRId64 " elements (%s)",
                           fn, offset, sat_add(offset, count), n, shape);
  }
  size_t es = pto_dtype_size(d->dtype);
  char *dev = (char *)pto__rt_devmem_host(&w->mem, d->addr) + (size_t)offset * es;
  if (to_device)
    memcpy(dev, host, (size_t)count * es);
  else
    memcpy(host, dev, (size_t)count * es);
  return PTO_OK;
}

pto_status pto_worker_copy_to_tensor(pto_worker *w, pto_device_tensor *t, int64_t offset,
                                     const void *host, int64_t count) {
  return copy_range("pto_worker_copy_to_tensor", 1, w, t, offset, (void *)host, count);
}

pto_status pto_worker_copy_from_tensor(pto_worker *w, void *host, const pto_device_tensor *t,
                                       int64_t offset, int64_t count) {
  return copy_range("pto_worker_copy_from_tensor", 0, w, t, offset, host, count);
}

/* Copies the box rows: the innermost dim is contiguous on both sides. */
static pto_status copy_box(const char *fn, int to_device, pto_worker *wt,
                           const pto_device_tensor *t, const int64_t *offsets, const int64_t *sizes,
                           void *host) {
  pto__rt_worker *w;
  pto__rt_dtensor *d;
  PTO_RETURN_IF_ERROR(resolve(fn, wt, t, host, &w, &d));
  if (!offsets || !sizes)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: offsets or sizes is NULL", fn);
  int64_t total = 1;
  for (int i = 0; i < d->rank; i++) {
    if (offsets[i] < 0 || sizes[i] < 0 || offsets[i] > d->shape[i] ||
        sizes[i] > d->shape[i] - offsets[i]) {
      char shape[128];
      shape_text(d, shape, sizeof shape);
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "%s: dim %d: [%" PRId64 ", %" PRId64 ") is outside the extent %" PRId64
                             " (tensor %s)",
                             fn, i, offsets[i], sat_add(offsets[i], sizes[i]), d->shape[i], shape);
    }
    total *= sizes[i];
  }
  if (total == 0) return PTO_OK;
  size_t es = pto_dtype_size(d->dtype);
  int r = d->rank;
  int64_t stride[PTO_MAX_RANK];
  stride[r - 1] = 1;
  for (int i = r - 2; i >= 0; i--)
    stride[i] = stride[i + 1] * d->shape[i + 1];
  char *base = pto__rt_devmem_host(&w->mem, d->addr);
  size_t row = (size_t)sizes[r - 1] * es;
  int64_t idx[PTO_MAX_RANK] = {0}; /* over the outer dims of the box */
  char *h = host;
  for (int64_t k = 0; k < total / sizes[r - 1]; k++) {
    int64_t off = offsets[r - 1];
    for (int i = 0; i < r - 1; i++)
      off += (offsets[i] + idx[i]) * stride[i];
    char *dev = base + (size_t)off * es;
    if (to_device)
      memcpy(dev, h, row);
    else
      memcpy(h, dev, row);
    h += row;
    for (int i = r - 2; i >= 0; i--) { /* next row of the box, row-major */
      if (++idx[i] < sizes[i]) break;
      idx[i] = 0;
    }
  }
  return PTO_OK;
}

pto_status pto_worker_copy_to_tensor_slice(pto_worker *w, pto_device_tensor *t,
                                           const int64_t *offsets, const int64_t *sizes,
                                           const void *host) {
  return copy_box("pto_worker_copy_to_tensor_slice", 1, w, t, offsets, sizes, (void *)host);
}

pto_status pto_worker_copy_from_tensor_slice(pto_worker *w, void *host, const pto_device_tensor *t,
                                             const int64_t *offsets, const int64_t *sizes) {
  return copy_box("pto_worker_copy_from_tensor_slice", 0, w, t, offsets, sizes, host);
}
