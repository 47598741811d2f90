/* The kernel ABI: how the runtime calls a compiled kernel.
 *
 * A kernel is an exported function of kernels.so named "pto_kernel_<name>" with the signature
 * pto_kernel_fn. It receives its tensor parameters' descriptors (in declaration order, which is
 * the add_* order of the task), then its scalar parameters as 64-bit slots (pto_scalar_to_slot
 * encoding, in declaration order), then a per-core context. Dynamic dims are read from the
 * descriptors. A kernel returns 0, or a PTO_KERNEL_ERR_* code after which the launch fails.
 * kernels.so also exports "pto_kernel_abi_version" (an int32 equal to PTO_KERNEL_ABI_VERSION). */
#ifndef PTO_KERNEL_ABI_H
#define PTO_KERNEL_ABI_H

#include <stdint.h>

#include "pto/dist_abi.h"
#include "pto/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 2: pto_core_ctx.dist (L3). */
#define PTO_KERNEL_ABI_VERSION 2

typedef struct pto_kernel_tensor {
  void *data;                   /* host-visible address of the view's element [0,..,0] */
  int64_t shape[PTO_MAX_RANK];  /* extents of the view */
  int64_t stride[PTO_MAX_RANK]; /* in elements */
  int32_t rank;
  int32_t dtype; /* pto_dtype */
} pto_kernel_tensor;

typedef struct pto_core_ctx {
  int32_t core_id;
  int32_t ncores;
  void *scratch;            /* this core's tile arena, 64-byte aligned */
  uint64_t scratch_size;    /* bytes */
  int64_t err_detail[2];    /* filled by a kernel that fails: e.g. the two disagreeing dim values */
  const pto_dist_ctx *dist; /* the chip's peers (pto/dist_abi.h); NULL on an L2 worker */
  int32_t block_idx;        /* this run's SPMD block, 0 to block_num - 1 */
  int32_t block_num;        /* the task's SPMD blocks (launch_spec.set_block_num), at least 1 */
  int32_t core_type;        /* PTO_CORE_AIV or PTO_CORE_AIC: the type of the core running it */
  int32_t flags;            /* PTO_CORE_* bits below; 0 from runtimes that set none */
} pto_core_ctx;

enum {
  /* The buffers of the task's tensors are together too large for the cache to keep what it
   * writes until that is read again (pto_run_config.stream_store_bytes): a kernel may write
   * its outputs with non-temporal stores, which skip reading each line before overwriting it,
   * and fences them before it returns. */
  PTO_CORE_STREAM_STORES = 1,
};

enum {
  PTO_KERNEL_OK = 0,
  /* Integer division by a runtime zero. err_detail[1] 1: err_detail[0] is the statement index
   * in the kernel (pto_ir_func_stmt_at; negative: not known) of the dividing tile op or of the
   * statement whose own expression divides (pto_ir_stmt_each_expr: a scalar assignment, an op's
   * argument, a loop bound, ...); 0: nothing (a kernel built before). */
  PTO_KERNEL_ERR_DIV_ZERO = 1,
  PTO_KERNEL_ERR_DIM_MISMATCH = 2, /* a dynamic symbol bound twice with different values */
  PTO_KERNEL_ERR_SCRATCH = 3,      /* scratch arena smaller than the kernel's footprint */
  PTO_KERNEL_ERR_DIST_TIMEOUT = 4, /* dist.wait (or a collective) passed its deadline */
  PTO_KERNEL_ERR_DIST = 5,         /* dist.* without peers (L2), or a peer out of range */
  /* A tile.load / tile.store offset out of range: err_detail[0] the offset, err_detail[1] its
   * dim when negative, dim + 8 * (extent + 1) when a leading dim's offset is past its extent. */
  PTO_KERNEL_ERR_LOAD_OFFSET = 6,
  PTO_KERNEL_ERR_STORE_OFFSET = 7,
  /* A dist.notify / wait / remote_load / remote_store offset outside its window (the dtensor):
   * err_detail[0] the offset, err_detail[1] dim | op << 3 (0 notify, 1 wait, 2 remote_load,
   * 3 remote_store) | the window's tensor argument << 5 | (extent + 1) << 13 (0: negative). */
  PTO_KERNEL_ERR_DIST_OFFSET = 8,
  /* An index or offset out of range in tile.gather, gather_rows, scatter_rows or extract (and
   * assemble): err_detail[0] is PTO_KERNEL_INDEX_DETAIL(op, r, c), the op's statement index in
   * the kernel (pto_ir_func_stmt_at) and the position of the index, err_detail[1] the value.
   * An extract's or assemble's offset of dim k is at position [k, PTO_KERNEL_INDEX_SUB | m],
   * m the largest offset that fits; a gather_rows' or scatter_rows' column offset (dim 1 of the
   * tensor) at [PTO_KERNEL_INDEX_SUB | 1, PTO_KERNEL_INDEX_SUB | m]; where m is negative (the
   * tensor is narrower than the rows) or not below PTO_KERNEL_INDEX_SUB (2^20 columns and more),
   * err_detail[0] is PTO_KERNEL_INDEX_WIDE_DETAIL(op, m) instead (kernels built before reported
   * position [0, 1]). A gather_rows' or scatter_rows' row index k (of the index tile's row i)
   * outside a tensor of fewer than 2^31 rows is at [PTO_KERNEL_INDEX_SUB | i, 0] with
   * err_detail[1] the tensor's rows << 32 | k as u32 (kernels built before, and tensors of more
   * rows: at [i, 0] with k). A tile.gather's index k at [r, c] of the index tile is at
   * [r, PTO_KERNEL_INDEX_POS | c] with err_detail[1] the source tile's positions << 32 | k as
   * u32 (kernels built before: at [r, c] with k). Nothing was read or written outside a
   * tensor. */
  PTO_KERNEL_ERR_INDEX = 9,
  PTO_KERNEL_ERR_LOOP_STEP = 10, /* a for loop's runtime step is zero */
};

#define PTO_KERNEL_INDEX_DETAIL(op, r, c)                                                          \
  (((int64_t)(op) << 42) | ((int64_t)(r)&0x1fffff) << 21 | ((int64_t)(c)&0x1fffff))
#define PTO_KERNEL_INDEX_OP(d) ((int32_t)(((uint64_t)(d) >> 42) & 0x1fffff))
#define PTO_KERNEL_INDEX_ROW(d) ((int64_t)((d) >> 21) & 0x1fffff)
#define PTO_KERNEL_INDEX_COL(d) ((int64_t)(d)&0x1fffff)
#define PTO_KERNEL_INDEX_SUB 0x100000 /* in the column: an offset; in the row: of a tensor */
/* In the column: a tile.gather's position (a tile has fewer than 2^19 rows and columns). */
#define PTO_KERNEL_INDEX_POS 0x80000
/* A gather_rows' or scatter_rows' column offset where m (the largest that fits: the tensor's
 * columns less the rows') is outside the position's field: bit 63 set, the op as above, m as a
 * 42-bit two's complement number in bits 0..41. */
#define PTO_KERNEL_INDEX_WIDE ((int64_t)(UINT64_C(1) << 63))
#define PTO_KERNEL_INDEX_WIDE_DETAIL(op, m)                                                        \
  (PTO_KERNEL_INDEX_WIDE | ((int64_t)(op) << 42) | ((int64_t)(m) & ((INT64_C(1) << 42) - 1)))
#define PTO_KERNEL_INDEX_WIDE_M(d) ((int64_t)((uint64_t)(d) << 22) >> 22)

typedef int32_t (*pto_kernel_fn)(const pto_kernel_tensor *tensors, const uint64_t *scalars,
                                 pto_core_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
