/* The C side of pto_orchestration_api.h in the orchestration table: submit_args (a CoreTaskArgs
 * of the header, described by a pto_orch_task_args, becomes one submit_task) and slice
 * (tensor.slice of a ChipTensor). This is the conversion the header once did
 * inline in every orchestration (ChipTensor to pto_orch_tensor, TensorCreateInfo outputs created
 * with their initial values, scalars, explicit dependencies, the predicate, the launch spec
 * checks), with the same checks and messages; done here, generated C++ compiles in less time. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/base.h"
#include "runtime_internal.h"

enum { ERROR_INVALID_ARGS = 1 }; /* PTO2_ERROR_INVALID_ARGS of the header */

/* rt_report_fatal of the header: the message as the orchestration would have written it. */
__attribute__((format(printf, 2, 3))) static void fatal(pto__rt_launch *L, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  L->api.report_fatal(L, ERROR_INVALID_ARGS, msg);
}

static void chip_to_c(const pto_orch_chip_tensor *t, pto_orch_tensor *c) {
  memset(c, 0, sizeof *c);
  c->buffer = t->buffer;
  c->addr = t->addr;
  for (int d = 0; d < PTO_MAX_RANK; d++) {
    c->shape[d] = t->shapes[d];
    c->stride[d] = t->strides[d];
  }
  c->rank = (int32_t)t->ndims;
  c->dtype = t->dtype;
  c->owner_task_id = t->owner_task_id;
  c->start_offset = t->start_offset;
  c->manual_dep = t->manual_dep ? 1 : 0;
}

/* ChipTensor::from_c: extents beyond 32 bits are not representable in a ChipTensor. */
void pto__rt_chip_tensor(const pto_orch_tensor *c, pto_orch_chip_tensor *t) {
  memset(t, 0, sizeof *t);
  t->buffer = c->buffer;
  t->addr = c->addr;
  for (int d = 0; d < PTO_MAX_RANK; d++) {
    t->shapes[d] = (uint32_t)c->shape[d];
    t->strides[d] = c->stride[d];
  }
  t->ndims = (uint32_t)c->rank;
  t->dtype = c->dtype;
  t->owner_task_id = c->owner_task_id;
  t->start_offset = c->start_offset;
  t->manual_dep = c->manual_dep != 0;
}

enum { SMALL_ARGS = 64, MAX_DEPS = 256 };

int32_t pto__rt_api_submit_args(void *ctx, const pto_orch_task_args *t, uint32_t *out_nouts,
                                int64_t *out_task_id) {
  pto__rt_launch *L = ctx;
  const pto_orch_api *api = &L->api;
  *out_nouts = 0;
  *out_task_id = -1;
  if (api->is_fatal(ctx)) return 1;
  const int32_t aic = t->kernel_ids[PTO_ORCH_SLOT_AIC], aiv0 = t->kernel_ids[PTO_ORCH_SLOT_AIV0];
  if (t->has_error) {
    fatal(L, "submit of kernel %d: %s", aic >= 0 ? aic : aiv0,
          t->error_msg ? t->error_msg : "invalid arguments");
    return 1;
  }
  if (t->require_sync_start) {
    int aiv_only = aic < 0;
    int32_t room = api->core_count(ctx, aiv_only ? PTO_CORE_AIV : PTO_CORE_AIC);
    if (t->block_num > room) {
      fatal(L, "submit: require_sync_start with block_num %d, more than the %d %s", t->block_num,
            room, aiv_only ? "AIV cores" : "clusters");
      return 1;
    }
  }
  if (t->ntensors < 0 || t->nscalars < 0 || (t->ntensors && (!t->kinds || !t->tensors)) ||
      (t->nscalars && !t->scalars)) {
    fatal(L, "submit: %d tensors and %d scalars", t->ntensors, t->nscalars);
    return 1;
  }
  pto_orch_task_arg small[SMALL_ARGS];
  int32_t cap = t->ntensors + t->nscalars;
  pto_orch_task_arg *a = cap <= SMALL_ARGS ? small : pto_malloc((size_t)cap * sizeof *a);
  if (!a) {
    fatal(L, "submit: out of memory for %d arguments", cap);
    return 1;
  }
  int32_t rc = 1, n = 0;
  for (int32_t i = 0; i < t->ntensors; i++) {
    pto_orch_task_arg *x = &a[n++];
    x->reserved = 0;
    x->scalar = 0;
    if (t->kinds[i] == PTO_ORCH_ARG_CREATE) {
      const pto_orch_chip_tensor *ci = &t->tensors[i];
      int64_t shape[PTO_MAX_RANK];
      for (int d = 0; d < PTO_MAX_RANK; d++)
        shape[d] = ci->shapes[d];
      const int has = t->has_init && t->has_init[i] && t->inits;
      pto_orch_tensor c;
      if (api->create_tensor_init(ctx, (int32_t)ci->ndims, shape, ci->dtype,
                                  has ? &t->inits[i] : NULL, &c) != 0)
        goto done;
      /* Through a ChipTensor, as the header did. */
      pto_orch_chip_tensor made;
      pto__rt_chip_tensor(&c, &made);
      x->kind = PTO_ORCH_ARG_OUT;
      chip_to_c(&made, &x->tensor);
    } else {
      x->kind = t->kinds[i];
      chip_to_c(&t->tensors[i], &x->tensor);
    }
  }
  for (int32_t i = 0; i < t->nscalars; i++) {
    pto_orch_task_arg *x = &a[n++];
    memset(x, 0, sizeof *x);
    x->kind = PTO_ORCH_ARG_SCALAR;
    x->scalar = t->scalars[i];
    /* Its dtype (api.scalar_dtypes, just before this call), for the argument dump. */
    x->reserved = L->scalar_codes && i < L->nscalar_codes ? L->scalar_codes[i] : 0;
  }
  L->scalar_codes = NULL;
  L->nscalar_codes = 0;
  if (t->ndeps > MAX_DEPS) {
    fatal(L, "submit: %u explicit dependencies (at most 256)", t->ndeps);
    goto done;
  }
  pto_orch_submit sub;
  memset(&sub, 0, sizeof sub);
  memcpy(sub.kernel_ids, t->kernel_ids, sizeof sub.kernel_ids);
  sub.block_num = t->block_num;
  sub.args = a;
  sub.nargs = n;
  sub.deps = t->ndeps ? t->deps : NULL;
  sub.ndeps = (int32_t)t->ndeps;
  sub.allow_early_resolve = t->allow_early_resolve;
  sub.dump_mask = t->dump_mask;
  sub.require_sync_start = t->require_sync_start ? 1 : 0;
  sub.pred_op = t->pred_op;
  pto_orch_tensor pred_c;
  if (t->pred_op != PTO_ORCH_PRED_NONE) {
    if (!t->pred_tensor || t->pred_ndims != t->pred_tensor->ndims || t->pred_ndims > PTO_MAX_RANK ||
        (t->pred_ndims && !t->pred_indices)) {
      fatal(L, "submit: a predicate needs a tensor and one index per dim");
      goto done;
    }
    chip_to_c(t->pred_tensor, &pred_c);
    sub.pred_tensor = &pred_c;
    for (uint32_t d = 0; d < t->pred_ndims; d++)
      sub.pred_idx[d] = t->pred_indices[d];
    sub.pred_target = t->pred_target;
  }
  int64_t id = -1;
  if (api->submit_task(ctx, &sub, &id) != 0) goto done;
  uint32_t nouts = 0;
  for (int32_t i = 0; i < t->ntensors; i++) {
    if (t->kinds[i] != PTO_ORCH_ARG_CREATE) continue;
    if (!t->outs) break;
    pto_orch_chip_tensor *o = &t->outs[nouts++];
    pto__rt_chip_tensor(&a[i].tensor, o);
    o->owner_task_id = id;
  }
  *out_nouts = nouts;
  *out_task_id = id;
  rc = 0;
done:
  if (a != small) free(a);
  return rc;
}

int32_t pto__rt_api_slice(void *ctx, const pto_orch_chip_tensor *src, int32_t n,
                          const int64_t *offs, const int64_t *shape, pto_orch_chip_tensor *out) {
  pto__rt_launch *L = ctx;
  *out = *src;
  if (n < 0 || n > PTO_MAX_RANK || (n && (!offs || !shape))) {
    fatal(L, "tensor.slice: %d offsets and extents (at most %d)", n, PTO_MAX_RANK);
    return 1;
  }
  int32_t rc = 0;
  int64_t elem_offset = 0;
  for (int32_t d = 0; d < n; d++) {
    const int64_t extent = src->shapes[d];
    if (offs[d] < 0 || offs[d] >= extent) {
      fatal(L, "tensor.slice: offset %lld of dim %d is outside the extent %lld", (long long)offs[d],
            (int)d, (long long)extent);
      rc = 1;
    }
    if (shape[d] < 0) { /* would become a 4-billion extent in the 32-bit view */
      fatal(L, "tensor.slice: extent %lld of dim %d is negative", (long long)shape[d], (int)d);
      rc = 1;
    }
    int64_t off = offs[d] < 0 ? 0 : offs[d];
    int64_t room = extent - off;
    if (room < 0) room = 0;
    if (off > extent) off = extent;
    elem_offset += off * src->strides[d];
    out->shapes[d] = (uint32_t)(shape[d] < 0 ? 0 : shape[d] < room ? shape[d] : room);
  }
  uint64_t esize =
      src->dtype >= 0 && src->dtype < PTO_DTYPE_COUNT ? pto_dtype_size((pto_dtype)src->dtype) : 0;
  out->addr += (uint64_t)elem_offset * esize;
  out->start_offset += (uint64_t)elem_offset;
  out->manual_dep = src->manual_dep ? 1 : 0;
  return rc;
}
