/* The host (L3) ABI: the versioned C function table between the runtime's distributed worker and
 * the host code compiled from a program's `host` function.
 *
 * `pto compile` turns a host function into C (DIR/host/host.c, hand-editable) linked into
 * DIR/host/host.so with a Build-ID. The shared object exports:
 *   uint32_t pto_host_abi_version(void);               returns PTO_HOST_ABI_VERSION
 *   int32_t  pto_host_entry(const pto_host_api *api, const pto_host_args *args);
 * The entry runs on the distributed worker's dispatching thread in the parent process. It
 * computes views itself (tensor.slice, tensor.reshape, tensor.select are offset/shape/stride
 * arithmetic on pto_host_ref, with the same clamping rules as orchestration) and calls the table
 * for everything that allocates or dispatches. It returns 0, or the first nonzero code a table
 * call returned (after which it must return at once).
 *
 * Tensors are address-free: a pto_host_ref names a buffer the runtime owns by id, plus a view
 * of it. The runtime resolves ids when a call is dispatched, so generated code never sees a
 * pointer and the same code runs over every transport. */
#ifndef PTO_HOST_ABI_H
#define PTO_HOST_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "pto/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PTO_HOST_ABI_VERSION 1

typedef struct pto_host_ref {
  uint64_t buffer; /* runtime buffer id, nonzero */
  int64_t offset;  /* elements from the buffer's start to the view's [0,..,0] */
  int64_t shape[PTO_MAX_RANK];
  int64_t stride[PTO_MAX_RANK]; /* elements */
  int32_t rank;
  int32_t dtype; /* pto_dtype */
  /* 1 for dist.window(%w): the buffer is a comm window and the view is "this rank's slice",
   * resolved to device d's slice when passed to a call with device=d. 0 otherwise. */
  int32_t window;
  int32_t reserved;
} pto_host_ref;

typedef struct pto_host_args {
  const pto_host_ref *tensors; /* the host entry's tensor parameters, declaration order */
  const uint64_t *scalars;     /* its scalar parameters as slots (pto_scalar_to_slot encoding) */
  int32_t ntensors;
  int32_t nscalars;
} pto_host_args;

/* One argument of a call: kind is PTO_ORCH_ARG_IN/OUT/INOUT/SCALAR (pto/orch_abi.h), in the
 * callee's parameter order. */
typedef struct pto_host_call_arg {
  int32_t kind;
  int32_t reserved;
  pto_host_ref tensor;
  uint64_t scalar;
} pto_host_call_arg;

typedef struct pto_host_api {
  uint32_t version; /* PTO_HOST_ABI_VERSION */
  uint32_t size;    /* sizeof(pto_host_api): the table may grow at its end */
  void *ctx;
  /* dist.world_size(): the number of devices the program was compiled for. */
  int64_t (*world_size)(void *ctx);
  /* tensor.create in a host: a buffer every device can use, freed when the entry returns. */
  int32_t (*create_tensor)(void *ctx, int32_t rank, const int64_t *shape, int32_t dtype,
                           pto_host_ref *out);
  /* dist.alloc_window: the same window on every device (zeroed), freed when the entry returns.
   * *out describes one rank's slice; dist.window(%w) is *out with window = 1. */
  int32_t (*alloc_window)(void *ctx, int32_t rank, const int64_t *shape, int32_t dtype,
                          pto_host_ref *out);
  /* call @orch(...) device=d: dispatches orch function orch_index (the manifest's order of the
   * host's callees) to rank d (0 .. world_size-1). Asynchronous: returns once queued; calls to
   * different devices run concurrently, calls are ordered by the data they touch and, per
   * device, by issue order. A failure of an earlier call may be returned by a later one. */
  int32_t (*call)(void *ctx, int32_t orch_index, int64_t device, const pto_host_call_arg *args,
                  int32_t nargs);
  /* Reports a host-side error (a bad device index, a slice out of range, integer division by
   * zero) with a message; the entry then returns code. */
  void (*report_fatal)(void *ctx, int32_t code, const char *msg);
  /* Appended (a runtime's table may end before it: check size, then NULL): names the window *w
   * came from, as the program wrote it without its '%' ("wsig" for %wsig), so the runtime's
   * messages about the window (a dist.wait that timed out, a collective's signal window) name
   * it as the interpreter does. Called after each alloc_window; a name longer than
   * PTO_HOST_WINDOW_NAME - 1 bytes is cut. Unnamed windows are named by their slot number. */
  void (*name_window)(void *ctx, const pto_host_ref *w, const char *name);
} pto_host_api;

/* The bytes a window's name keeps, its NUL included (pto_host_api.name_window). */
#define PTO_HOST_WINDOW_NAME 32

/* Whether api has the appended callback field (name_window): a table from an older runtime
 * ends before it. */
#define PTO_HOST_API_HAS(api, field)                                                               \
  ((api)->size >= offsetof(pto_host_api, field) + sizeof((api)->field) && (api)->field)

typedef uint32_t (*pto_host_abi_version_fn)(void);
typedef int32_t (*pto_host_entry_fn)(const pto_host_api *api, const pto_host_args *args);

#ifdef __cplusplus
}
#endif
#endif
