/* The distributed (L3) kernel ABI: how a compiled kernel reaches its peers.
 *
 * On a chip of a distributed worker, every core context carries a pto_dist_ctx (pto_core_ctx.dist;
 * NULL on an L2 worker, where a kernel that uses dist.* fails with PTO_KERNEL_ERR_DIST). Kernels
 * lower every kernel-side dist.* op of docs/language.md onto this table, so one lowering serves
 * every transport (shared memory on one host, MPI across hosts): the transport lives behind it.
 *
 * Addresses are this rank's: a dtensor parameter's descriptor points into this rank's slice of a
 * comm window, and every call names a window element by its local address. The transport maps
 * (local address, peer) to the peer's element at the same offset of the same window. Signal
 * elements are i32.
 *
 * Every function returns PTO_KERNEL_OK or a PTO_KERNEL_ERR_* code; the kernel then returns that
 * code at once (a failed wait leaves its detail with the transport, which reports rank, window,
 * offsets, expected and current value). */
#ifndef PTO_DIST_ABI_H
#define PTO_DIST_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pto_kernel_tensor;

#define PTO_DIST_ABI_VERSION 1

/* dist.wait's deadline, $PTO_DIST_TIMEOUT_MS, accepts 1 ms to a day (the L3 runtime and the
 * interpreter alike); another value is an error naming the variable and this range. */
#define PTO_DIST_TIMEOUT_MS_MAX 86400000

enum { PTO_DIST_NOTIFY_SET = 0, PTO_DIST_NOTIFY_ADD = 1 }; /* dist.notify op=set|atomic_add */
enum { PTO_DIST_WAIT_EQ = 0, PTO_DIST_WAIT_GE = 1 };       /* dist.wait cmp=eq|ge */
enum {                                                     /* dist.allreduce/... op= */
       PTO_DIST_RED_SUM = 0,
       PTO_DIST_RED_MAX = 1,
       PTO_DIST_RED_MIN = 2,
       PTO_DIST_RED_PROD = 3,
};
enum { PTO_DIST_MODE_MESH = 0, PTO_DIST_MODE_RING = 1 }; /* dist.allreduce mode= */
enum {                                                   /* collective kinds */
       PTO_DIST_ALLREDUCE = 0,
       PTO_DIST_BROADCAST = 1,
       PTO_DIST_ALLGATHER = 2,
       PTO_DIST_REDUCE_SCATTER = 3,
};

typedef struct pto_dist_ctx pto_dist_ctx;
struct pto_dist_ctx {
  uint32_t version; /* PTO_DIST_ABI_VERSION */
  uint32_t size;    /* sizeof(pto_dist_ctx): the table may grow at its end */
  int32_t rank;     /* dist.rank: this chip's rank, 0 .. nranks-1 */
  int32_t nranks;   /* dist.nranks / dist.world_size */
  void *impl;       /* the transport's */
  /* dist.notify: sig_elem is this rank's address of the element; the peer's element at the same
   * offset is set to value or has value added, atomically, and its waiters are woken. */
  int32_t (*notify)(const pto_dist_ctx *d, int32_t *sig_elem, int32_t peer, int32_t value,
                    int32_t op);
  /* dist.wait: until this rank's *sig_elem == value (EQ) or >= value (GE). Spins briefly, yields,
   * then sleeps; fails with PTO_KERNEL_ERR_DIST_TIMEOUT at the transport's deadline. */
  int32_t (*wait)(const pto_dist_ctx *d, int32_t *sig_elem, int32_t value, int32_t cmp);
  /* dist.remote_load: rows x cols elements of elem_bytes each from the peer's window, at the
   * offset of src_local in this rank's window (row stride src_stride elements), into dst (row
   * stride dst_stride elements). */
  int32_t (*remote_load)(const pto_dist_ctx *d, void *dst, int64_t dst_stride,
                         const void *src_local, int64_t src_stride, int32_t peer, int64_t rows,
                         int64_t cols, int32_t elem_bytes);
  /* dist.remote_store: the mirror image: src (a tile) into the peer's window at dst_local's
   * offset. Visible to the peer once a later notify to that peer is. */
  int32_t (*remote_store)(const pto_dist_ctx *d, const void *src, int64_t src_stride,
                          void *dst_local, int64_t dst_stride, int32_t peer, int64_t rows,
                          int64_t cols, int32_t elem_bytes);
  /* dist.barrier on the i32 signal window sig ([1, S] or [S, 1], S >= nranks: its elements in a
   * row); leaves it zero. */
  int32_t (*barrier)(const pto_dist_ctx *d, const struct pto_kernel_tensor *sig);
  /* dist.allreduce / broadcast / allgather / reduce_scatter on the whole window win (this rank's
   * descriptor), with signal window sig; op (PTO_DIST_RED_*), mode (PTO_DIST_MODE_*) and root
   * as the op has them (others 0). Leaves sig zero. */
  int32_t (*collective)(const pto_dist_ctx *d, int32_t kind, const struct pto_kernel_tensor *win,
                        const struct pto_kernel_tensor *sig, int32_t op, int32_t mode,
                        int32_t root);
};

#ifdef __cplusplus
}
#endif
#endif
