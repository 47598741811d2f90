/* The orchestration ABI: the versioned C function table between the runtime and an
 * orchestration shared object.
 *
 * Generated orchestration C++ includes pto_orchestration_api.h, which implements PyPTO's PTO2
 * names (ChipTaskArgs, CoreTaskArgs, rt_submit_aiv_task, ...) over this table. The shared object
 * exports:
 *   uint32_t pto_orch_abi_version(void);                        returns PTO_ORCH_ABI_VERSION
 *   void     pto_orch_bind(const pto_orch_api *api);            sets the calling thread's table
 *   OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &);
 *   void     aicpu_orchestration_entry(const ChipTaskArgs &);
 * The runtime calls pto_orch_bind on the dispatching thread before each entry call. ChipTaskArgs
 * is a standard-layout C++ type with exactly the layout of pto_orch_args below, so C passes a
 * pointer where C++ takes a reference; ChipTensor has the layout of pto_orch_chip_tensor, and a
 * CoreTaskArgs is described to the runtime by a pto_orch_task_args (submit_args), which converts
 * it in C: the header keeps no conversion code, so orchestration C++ compiles fast. */
#ifndef PTO_ORCH_ABI_H
#define PTO_ORCH_ABI_H

#include <stdint.h>

#include "pto/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PTO_ORCH_ABI_VERSION 4

typedef struct pto_orch_tensor {
  uint64_t buffer; /* device address of the whole allocation (dependency tracking) */
  uint64_t addr;   /* device address of the view's element [0,..,0] */
  int64_t shape[PTO_MAX_RANK];
  int64_t stride[PTO_MAX_RANK]; /* elements */
  int32_t rank;
  int32_t dtype;         /* pto_dtype */
  int64_t owner_task_id; /* the task whose output created it; -1 for any other tensor */
  uint64_t start_offset; /* (addr - buffer) / element size: kept by whoever makes a view */
  uint8_t manual_dep;    /* 1: no region tracking, ordered after its owner task only */
  uint8_t reserved[7];
} pto_orch_tensor;

/* Version 4. ChipTensor of pto_orchestration_api.h (PyPTO's field types: 32-bit extents), whose
 * layout the header asserts; pto_orch_tensor is the runtime's form (64-bit extents). */
typedef struct pto_orch_chip_tensor {
  uint64_t buffer;
  uint64_t addr;
  uint32_t shapes[PTO_MAX_RANK];
  int64_t strides[PTO_MAX_RANK];
  uint32_t ndims;
  int32_t dtype;         /* pto_dtype */
  int64_t owner_task_id; /* -1: none */
  uint64_t start_offset;
  uint8_t manual_dep; /* a C++ bool: 0 or 1 */
} pto_orch_chip_tensor;

typedef struct pto_orch_args {
  const pto_orch_tensor *tensors; /* the entry's tensor parameters, declaration order */
  const uint64_t *scalars;        /* the entry's scalar parameters as slots, declaration order */
  int32_t ntensors;
  int32_t nscalars;
  /* Version 4: the tensors again as ChipTensors (ChipTaskArgs::tensor hands these out). */
  const pto_orch_chip_tensor *chip_tensors;
} pto_orch_args;

enum { PTO_ORCH_ARG_IN = 0, PTO_ORCH_ARG_OUT = 1, PTO_ORCH_ARG_INOUT = 2, PTO_ORCH_ARG_SCALAR = 3 };
enum { PTO_CORE_AIV = 0, PTO_CORE_AIC = 1 };

typedef struct pto_orch_task_arg {
  int32_t kind; /* PTO_ORCH_ARG_* */
  int32_t reserved;
  pto_orch_tensor tensor;
  uint64_t scalar;
} pto_orch_task_arg;

/* The subtask slots of one task (PyPTO's MixedKernels): a cube kernel and two vector kernels. */
enum { PTO_ORCH_SLOT_AIC = 0, PTO_ORCH_SLOT_AIV0 = 1, PTO_ORCH_SLOT_AIV1 = 2, PTO_ORCH_NSLOTS = 3 };

/* Task predicates: the task's kernels run only when element OP target holds at dispatch. */
enum {
  PTO_ORCH_PRED_NONE = 0,
  PTO_ORCH_PRED_EQ,
  PTO_ORCH_PRED_NE,
  PTO_ORCH_PRED_GT,
  PTO_ORCH_PRED_LT,
  PTO_ORCH_PRED_GE,
  PTO_ORCH_PRED_LE,
};

enum { PTO_ORCH_SCOPE_AUTO = 0, PTO_ORCH_SCOPE_MANUAL = 1 };

enum {
  PTO_ORCH_LOG_ERROR = 0,
  PTO_ORCH_LOG_WARN,
  PTO_ORCH_LOG_TIMING,
  PTO_ORCH_LOG_INFO,
  PTO_ORCH_LOG_DEBUG,
};

/* One submit of submit_task. A task with no kernel in any slot is a dummy: it takes part in the
 * dependency graph and runs nothing. A task with several slots runs its kernels side by side,
 * each on a core of its type, and completes when the last one does. */
typedef struct pto_orch_submit {
  int32_t kernel_ids[PTO_ORCH_NSLOTS]; /* -1: slot unused */
  int32_t block_num;                   /* SPMD blocks per kernel (launch_spec); 0 or 1: one */
  const pto_orch_task_arg *args;
  int32_t nargs;
  int32_t ndeps;
  const int64_t *deps;                /* explicit dependencies (task ids); negative ones skipped */
  int32_t allow_early_resolve;        /* its successors may be staged on cores while it runs */
  int32_t pred_op;                    /* PTO_ORCH_PRED_* */
  const pto_orch_tensor *pred_tensor; /* the element read at dispatch */
  int64_t pred_idx[PTO_MAX_RANK];
  int64_t pred_target;
  uint64_t dump_mask;         /* CoreTaskArgs::dump: bit i for tensor argument i, then
                                 the scalars (pto_worker_set_dump_args) */
  int32_t require_sync_start; /* every block starts at once (launch_spec); block_num
                                 may not exceed the cores of each kernel's type */
  int32_t reserved;
} pto_orch_submit;

/* The kind of a CoreTaskArgs tensor that is a TensorCreateInfo output: the runtime creates it
 * (tensors[i] gives its shape, rank and dtype) and passes it as an output. */
enum { PTO_ORCH_ARG_CREATE = 100 };

/* One CoreTaskArgs submitted with MixedKernels (submit_args): its arrays, read during the call.
 * The runtime checks it, creates the CREATE tensors, submits the task (submit_task) and writes
 * the created tensors, owned by the new task, to outs in their order. */
typedef struct pto_orch_task_args {
  int32_t kernel_ids[PTO_ORCH_NSLOTS]; /* -1: slot unused */
  int32_t has_error;                   /* CoreTaskArgs::set_error was called: fail the launch */
  const char *error_msg;               /* its message (NULL: "invalid arguments") */
  int32_t ntensors;
  int32_t nscalars;
  const int32_t *kinds; /* PTO_ORCH_ARG_IN/OUT/INOUT, or PTO_ORCH_ARG_CREATE */
  const pto_orch_chip_tensor *tensors;
  const uint8_t *has_init; /* CREATE: 1 when inits[i] is its initial element */
  const uint64_t *inits;   /* one element's bytes, low bytes first */
  const uint64_t *scalars;
  const int64_t *deps; /* explicit dependencies (task ids); negative: skipped */
  uint32_t ndeps;
  int32_t block_num; /* launch_spec */
  int32_t require_sync_start;
  int32_t allow_early_resolve;
  uint64_t dump_mask;
  int32_t pred_op;     /* PTO_ORCH_PRED_* */
  uint32_t pred_ndims; /* indices in pred_indices */
  const pto_orch_chip_tensor *pred_tensor;
  const uint32_t *pred_indices;
  int64_t pred_target;
  pto_orch_chip_tensor *outs; /* room for ntensors (NULL: the created ones are not
                                 written) */
} pto_orch_task_args;

typedef struct pto_orch_api {
  uint32_t version; /* PTO_ORCH_ABI_VERSION */
  uint32_t size;    /* sizeof(pto_orch_api): the table may grow at its end */
  void *ctx;
  /* One task of kernel kernel_id. Returns 0, or nonzero once the launch has failed (the
   * orchestration should then return; further calls are ignored). */
  int32_t (*submit)(void *ctx, int32_t kernel_id, int32_t core_type, const pto_orch_task_arg *args,
                    int32_t nargs);
  /* tensor.create: a new device buffer owned by the innermost open scope. */
  int32_t (*create_tensor)(void *ctx, int32_t rank, const int64_t *shape, int32_t dtype,
                           pto_orch_tensor *out_tensor);
  void (*scope_begin)(void *ctx);
  void (*scope_end)(void *ctx);
  /* tensor.read: waits for the tasks that write the element, then copies it to out_elem. */
  int32_t (*read_element)(void *ctx, const pto_orch_tensor *t, const int64_t *idx, void *out_elem);
  void (*report_fatal)(void *ctx, int32_t code, const char *msg);
  int32_t (*is_fatal)(void *ctx);
  /* Present when size covers it. set_tensor_data: waits for the tasks that read or write the
   * element, then copies elem (one element of t's dtype) into it. */
  int32_t (*write_element)(void *ctx, const pto_orch_tensor *t, const int64_t *idx,
                           const void *elem);
  /* Version 2. A task with explicit dependencies, predicates, SPMD blocks and mixed kernels; the
   * task id in *out_task_id. Returns 0, or nonzero once the launch has failed. */
  int32_t (*submit_task)(void *ctx, const pto_orch_submit *s, int64_t *out_task_id);
  /* scope_begin with a mode (PTO_ORCH_SCOPE_*): in a manual scope tasks are ordered only by their
   * explicit dependencies. */
  void (*scope_begin_mode)(void *ctx, int32_t mode);
  /* tensor.create filled with one element's value (init_elem, NULL: zeros). */
  int32_t (*create_tensor_init)(void *ctx, int32_t rank, const int64_t *shape, int32_t dtype,
                                const void *init_elem, pto_orch_tensor *out_tensor);
  /* The orchestration has submitted everything: its span ends here. */
  void (*orchestration_done)(void *ctx);
  /* The worker's cores of one type (PTO_CORE_*). */
  int32_t (*core_count)(void *ctx, int32_t core_type);
  /* One orchestration log line at a level (PTO_ORCH_LOG_*). */
  void (*log)(void *ctx, int32_t level, const char *func, const char *msg);
  /* Version 4. One CoreTaskArgs task (pto_orch_task_args): returns 0 with the created tensors
   * in t->outs[0..*out_nouts) and the task id, or nonzero once the launch has failed (the
   * error reported, *out_nouts 0 and *out_task_id -1). */
  int32_t (*submit_args)(void *ctx, const pto_orch_task_args *t, uint32_t *out_nouts,
                         int64_t *out_task_id);
  /* Version 4. PTIR's tensor.slice (pto_codegen::pto_slice): *out is src with n offsets and
   * extents applied, each extent clamped at src's edge; an offset outside its extent fails the
   * launch. Returns 0, or nonzero after reporting. */
  int32_t (*slice)(void *ctx, const pto_orch_chip_tensor *src, int32_t n, const int64_t *offs,
                   const int64_t *shape, pto_orch_chip_tensor *out);
  /* Since version 4 (check size): the dtypes of the next submit_args' n scalars, codes[i] =
   * PTO_DTYPE_* + 1 (0: not known), read during that call only (the argument dump writes each
   * scalar as its dtype). Optional: without it every scalar is a raw uint64. */
  void (*scalar_dtypes)(void *ctx, const uint8_t *codes, int32_t n);
} pto_orch_api;

typedef uint32_t (*pto_orch_abi_version_fn)(void);
typedef void (*pto_orch_bind_fn)(const pto_orch_api *api);
typedef void (*pto_orch_entry_fn)(const pto_orch_args *args);
/* What an optional config function returns (PyPTO's OrchestrationConfig). */
typedef struct pto_orch_config {
  int32_t expected_arg_count; /* the launch needs at least this many tensors and scalars; <= 0:
                                 not checked */
} pto_orch_config;
/* OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &): called with the
 * launch's arguments just before the entry (the symbol PTO_ORCH_DEFAULT_CONFIG, or NAME_config
 * for an entry NAME of another name). */
typedef pto_orch_config (*pto_orch_config_fn)(const pto_orch_args *args);
/* The entry symbol the runtime looks up unless the manifest names another
 * (orchestration.entry_symbol; pto rebuild DIR --orch-entry NAME). */
#define PTO_ORCH_DEFAULT_ENTRY "aicpu_orchestration_entry"
#define PTO_ORCH_DEFAULT_CONFIG "aicpu_orchestration_config"

#ifdef __cplusplus
}
#endif
#endif
