/* pto runtime: workers, device memory, registration handles and launches (L2, one chip).
 *
 * A worker owns a device (the embedded "sim" platform: a memory arena with its own address range
 * and a persistent pool of core threads), the programs registered on it and the device tensors
 * it allocated. Device addresses are not host pointers: they are only meaningful to the worker
 * that made them. A launch binds arguments (validation against the program's signature, host to
 * device copies), runs the program's orchestration on the calling thread while the cores execute
 * its tasks as soon as their inputs are ready, waits for every task (once the orchestration is
 * done, the calling thread runs ready tasks itself as an idle core, with that core's id and
 * scratch, rather than wait for the core's thread to wake; except in shuffle mode), then copies
 * outputs back.
 * Task order comes from the tensor regions tasks access and their directions, never from the
 * order of submission. Fresh device memory (out parameters' copies, tensor.create, tensors
 * allocated without init) reads as zeros, so runs are deterministic. An orchestration that runs
 * far ahead of the cores waits (max_inflight_tasks), as does a tensor.create that finds no
 * memory while running tasks can still give some back. A launch keeps every task until it ends:
 * their records may hold up to the device memory size (at least 1 GiB), and a submit past that
 * fails the launch (OUT_OF_MEMORY, "too many tasks in one launch").
 *
 * Lifetime: pto_worker, pto_handle, pto_device_tensor and pto_completion values are tokens, not
 * pointers. Closing a worker frees every handle and device tensor it made; a token that outlived
 * its object (after close, unregister, free or wait) is reported as a clear error by every call,
 * never dereferenced; a NULL token fails with PTO_STATUS_INVALID_ARGUMENT ("the worker is
 * NULL"), a stale worker, handle or completion with PTO_STATUS_FAILED_PRECONDITION.
 * pto_worker_close is idempotent. A worker and its handles and tensors are used by one thread at a
 * time (the core threads are internal); different workers are independent. What is detected rather
 * than raced: a launch started while another runs on the worker (from a second thread, or from
 * inside the running one) is refused with PTO_STATUS_FAILED_PRECONDITION ("a launch is already
 * running on this worker"), the running launch unharmed, and so are an allocation, a free, a copy
 * or a registration then ("a launch is running on this worker"); other calls overlapping on two
 * threads are not supported. The one exception is close: called while another thread is inside a
 * call on the worker (a launch, a copy), it waits for that call to return, then closes; calls that
 * start after the close began fail ("the worker is closed").
 *
 * Every launch records spans (pto_worker_last_launch); with PTO_LOG_LEVEL=timing in the
 * environment when the worker opens, each span is also written to stderr as one line
 *   [STRACE] v=1 pid=<pid> tid=<tid> inv=<n> hid=<hex> depth=<d> name=<dotted> ts=<ns> dur=<ns>
 * followed by " clk=dev" for spans on the device clock. On request (record_tasks) a launch also
 * records every task: its core, kernel, dependencies and ready/start/end times
 * (pto_worker_last_launch_tasks; pto_swimlane_write_launch in pto/bench.h draws them). */
#ifndef PTO_RUNTIME_H
#define PTO_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pto/export.h"
#include "pto/status.h"
#include "pto/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A loaded program (pto/loader.h makes one: pto_program_load_dir, pto_compile). Opaque here, so a
 * runtime-only user includes no loader or IR header (CTest runtime_header_alone). */
typedef struct pto_program pto_program;
typedef struct pto_worker pto_worker;
typedef struct pto_handle pto_handle;
typedef struct pto_device_tensor pto_device_tensor;

/* ---- configuration ------------------------------------------------------------------- */

/* Options of pto_worker_open. Begins with its own size so a caller built against an older
 * header keeps working: fields past sz take their defaults. A zero field means its default. */
typedef struct pto_run_config {
  size_t sz;                    /* sizeof(pto_run_config) */
  const char *platform;         /* "sim" (NULL: "sim") */
  int ncores;                   /* cores (one thread each); 0: the CPUs this process may run on
                                   (see strict_cores for the cores that gives) */
  uint64_t device_memory_bytes; /* device arena; 0: 1 GiB (address space, committed lazily) */
  uint64_t scratch_bytes;       /* per-core scratch floor; 0: 256 KiB. Grown to each registered
                                   program's pto_program_scratch_bytes */
  uint32_t idle_spin_us;        /* how long an idle core spins before it blocks; 0: 40. Between
                                   launches at most the process's CPUs less one cores spin (the
                                   others block at once). At a launch's end the dispatching thread
                                   too spins this long after its last task before it waits */
  int shuffle;                  /* test mode: ready tasks start in a random order */
  uint64_t shuffle_seed;        /* seed of that order */
  uint32_t max_inflight_tasks;  /* submitted, unfinished tasks before a submit waits (flow
                                   control); 0: max(256, 32 * ncores) */
  bool record_tasks;            /* record every task of every launch (pto_worker_last_launch_tasks);
                                   see pto_worker_set_record_tasks */
  int aic_cores;                /* cube (AIC) cores; a task submitted as AIC runs on one of them */
  int aiv_cores;                /* vector (AIV) cores. Both 0: ncores split like the chip's
                                   clusters, a third AIC and the rest AIV, at least one of each
                                   (ncores 0 without strict_cores: see there). Set either, and
                                   ncores (if not 0) must be their sum */
  uint64_t stream_store_bytes;  /* a task whose tensors' buffers hold at least this many bytes
                                   together may write its outputs past the cache (non-temporal
                                   stores: PTO_CORE_STREAM_STORES): the cache could not keep them
                                   until they are read again anyway. 0: 32 MiB, a core complex's
                                   last-level cache on current x86 parts; UINT64_MAX: never */
  bool
      strict_cores; /* false (default): every core thread runs any ready task, as a
                       free core of the task's type (the type picks the core the
                       records and swimlanes show, not the CPU), and with ncores,
                       aic_cores and aiv_cores all 0 the worker has a thread per CPU,
                       an AIC core and two AIV cores per thread, so vector work and
                       matmul work each use every CPU. true: the chip's strict model, one thread per
                       core, running only tasks of its core's type, ncores split as
                       aic_cores / aiv_cores say */
  int threads;      /* the threads that run the cores when strict_cores is false;
                       0: one per core, or with ncores, aic_cores and aiv_cores all
                       0 one per CPU. Fewer threads than cores (1 to ncores) let a
                       worker keep as many cube cores as threads: aic_cores =
                       aiv_cores = threads = 2 runs two matmul tasks at once on two
                       threads, where ncores 2 has one AIC core (a worker with one
                       thread per core of 2 AIC + 2 AIV would run 4 threads) */
} pto_run_config;

/* Zeroes cfg and sets cfg->sz: every option at its default. */
PTO_API void pto_run_config_init(pto_run_config *cfg);

/* ---- arguments ----------------------------------------------------------------------- */

typedef enum pto_arg_type {
  PTO_ARG_NONE = 0,
  PTO_ARG_HOST_TENSOR = 1, /* copied to the device before the launch, back after it */
  PTO_ARG_DEVICE_TENSOR,   /* resident: never copied */
  PTO_ARG_SCALAR,
  PTO_ARG_DIST_TENSOR, /* a distributed worker's resident or stacked tensor (pto/dist.h) */
} pto_arg_type;

typedef struct pto_dist_tensor pto_dist_tensor;

typedef struct pto_arg {
  pto_arg_type kind;
  bool readonly; /* host tensors: must not be written (an out/inout parameter rejects it) */
  union {
    pto_host_tensor host;
    pto_device_tensor *device;
    pto_scalar scalar;
    pto_dist_tensor *dist;
  };
} pto_arg;

static inline pto_arg pto_arg_host(const pto_host_tensor *t) {
  pto_arg a;
  a.kind = PTO_ARG_HOST_TENSOR;
  a.readonly = false;
  a.host = *t;
  return a;
}
static inline pto_arg pto_arg_host_readonly(const pto_host_tensor *t) {
  pto_arg a = pto_arg_host(t);
  a.readonly = true;
  return a;
}
static inline pto_arg pto_arg_device(pto_device_tensor *t) {
  pto_arg a;
  a.kind = PTO_ARG_DEVICE_TENSOR;
  a.readonly = false;
  a.device = t;
  return a;
}
static inline pto_arg pto_arg_dist(pto_dist_tensor *t) {
  pto_arg a;
  a.kind = PTO_ARG_DIST_TENSOR;
  a.readonly = false;
  a.dist = t;
  return a;
}
static inline pto_arg pto_arg_scalar(pto_scalar s) {
  pto_arg a;
  a.kind = PTO_ARG_SCALAR;
  a.readonly = false;
  a.scalar = s;
  return a;
}
static inline pto_arg pto_arg_i32(int32_t v) {
  pto_scalar s;
  s.dtype = PTO_DTYPE_I32;
  s.i = v;
  return pto_arg_scalar(s);
}
static inline pto_arg pto_arg_i64(int64_t v) {
  pto_scalar s;
  s.dtype = PTO_DTYPE_I64;
  s.i = v;
  return pto_arg_scalar(s);
}
static inline pto_arg pto_arg_index(int64_t v) {
  pto_scalar s;
  s.dtype = PTO_DTYPE_INDEX;
  s.i = v;
  return pto_arg_scalar(s);
}
static inline pto_arg pto_arg_u32(uint32_t v) {
  pto_scalar s;
  s.dtype = PTO_DTYPE_U32;
  s.u = v;
  return pto_arg_scalar(s);
}
static inline pto_arg pto_arg_u64(uint64_t v) {
  pto_scalar s;
  s.dtype = PTO_DTYPE_U64;
  s.u = v;
  return pto_arg_scalar(s);
}
static inline pto_arg pto_arg_bool(bool v) {
  pto_scalar s;
  s.dtype = PTO_DTYPE_BOOL;
  s.i = v ? 1 : 0;
  return pto_arg_scalar(s);
}
static inline pto_arg pto_arg_f32(float v) {
  pto_scalar s;
  s.dtype = PTO_DTYPE_F32;
  s.f = (double)v;
  return pto_arg_scalar(s);
}
static inline pto_arg pto_arg_f64(double v) {
  pto_scalar s;
  s.dtype = PTO_DTYPE_F64;
  s.f = v;
  return pto_arg_scalar(s);
}

/* ---- workers ------------------------------------------------------------------------- */

/* Opens a worker: reserves its device memory, starts its core threads. cfg may be NULL. */
PTO_API PTO_MUST_USE pto_status pto_worker_open(const pto_run_config *cfg, pto_worker **out_worker);
/* Stops the core threads and frees every handle, callable and device tensor of the worker.
 * Idempotent: closing a closed worker does nothing. Another thread's call in progress on the
 * worker (a launch, a copy) is waited for first. Called from inside one of the worker's own
 * launches (a kernel, the orchestration), it cannot wait for that launch and does nothing. */
PTO_API void pto_worker_close(pto_worker *w);
/* Core threads of an open worker, or -1. */
PTO_API int pto_worker_core_count(const pto_worker *w);
/* The type of a core of an open worker: PTO_CORE_AIV or PTO_CORE_AIC (pto/orch_abi.h); -1 for a
 * closed worker or a core it does not have. Cores 0 to aiv_cores - 1 are AIV, the rest AIC. */
PTO_API int pto_worker_core_type(const pto_worker *w, int core);

typedef struct pto_device_memory_info {
  uint64_t base;    /* device address of the arena's first byte */
  uint64_t total;   /* bytes */
  uint64_t used;    /* bytes in live allocations (rounded to 64) */
  uint64_t peak;    /* high-water mark of used */
  uint64_t nallocs; /* live allocations */
  uint64_t largest_free;
} pto_device_memory_info;
PTO_API PTO_MUST_USE pto_status pto_worker_memory_info(const pto_worker *w,
                                                       pto_device_memory_info *out_info);

/* ---- device memory and tensors --------------------------------------------------------- */

/* A device tensor of rank 1..PTO_MAX_RANK, row-major, 64-byte aligned, and one of 64 KiB or more
 * on a 4096-byte page where the device memory has room for it there. init (NULL: zeros)
 * holds numel * dtype-size bytes, row-major. */
PTO_API PTO_MUST_USE pto_status pto_worker_alloc_tensor(pto_worker *w, int ndim,
                                                        const int64_t *shape, pto_dtype dt,
                                                        const void *init,
                                                        pto_device_tensor **out_tensor);
/* Frees t. Freeing a tensor a second time is a no-op; a tensor of another worker, or a stale
 * token, is an error. */
PTO_API PTO_MUST_USE pto_status pto_worker_free_tensor(pto_worker *w, pto_device_tensor *t);

typedef struct pto_device_tensor_info {
  uint64_t addr;   /* device address */
  uint64_t nbytes; /* numel * dtype size */
  pto_dtype dtype;
  int rank;
  int64_t shape[PTO_MAX_RANK];
} pto_device_tensor_info;
PTO_API PTO_MUST_USE pto_status pto_device_tensor_describe(const pto_device_tensor *t,
                                                           pto_device_tensor_info *out_info);
/* Accessors of a live tensor; a stale token gives 0, PTO_DTYPE_COUNT, -1, -1. */
PTO_API uint64_t pto_device_tensor_addr(const pto_device_tensor *t);
PTO_API pto_dtype pto_device_tensor_dtype(const pto_device_tensor *t);
PTO_API int pto_device_tensor_rank(const pto_device_tensor *t);
PTO_API int64_t pto_device_tensor_dim(const pto_device_tensor *t, int axis);

/* Copies n bytes between host memory and the start of one of this worker's allocations
 * (dev_ptr must be an allocation's base address; n at most its size). */
PTO_API PTO_MUST_USE pto_status pto_worker_copy_to(pto_worker *w, uint64_t dev_ptr,
                                                   const void *host, size_t n);
PTO_API PTO_MUST_USE pto_status pto_worker_copy_from(pto_worker *w, void *host, uint64_t dev_ptr,
                                                     size_t n);

/* Device tensors by handle, next to the raw-address calls above. Host memory is dense
 * row-major in the tensor's dtype. Checked against the tensor's extent (PTO_STATUS_INVALID_ARGUMENT
 * names the elements or the dim and the tensor's shape), its worker, and that no launch runs.
 *   _tensor:       count elements from the row-major element offset
 *   _tensor_slice: the box offsets[d] .. offsets[d] + sizes[d] of every dim (rank entries each);
 *                  host holds the box, row-major with shape sizes */
PTO_API PTO_MUST_USE pto_status pto_worker_copy_to_tensor(pto_worker *w, pto_device_tensor *t,
                                                          int64_t offset, const void *host,
                                                          int64_t count);
PTO_API PTO_MUST_USE pto_status pto_worker_copy_from_tensor(pto_worker *w, void *host,
                                                            const pto_device_tensor *t,
                                                            int64_t offset, int64_t count);
PTO_API PTO_MUST_USE pto_status pto_worker_copy_to_tensor_slice(pto_worker *w, pto_device_tensor *t,
                                                                const int64_t *offsets,
                                                                const int64_t *sizes,
                                                                const void *host);
PTO_API PTO_MUST_USE pto_status pto_worker_copy_from_tensor_slice(pto_worker *w, void *host,
                                                                  const pto_device_tensor *t,
                                                                  const int64_t *offsets,
                                                                  const int64_t *sizes);

/* ---- registration and launches -------------------------------------------------------- */

/* Validates p (signature, entry, kernels) and makes it callable on w; retains p. Registering
 * the same program again gives another handle to the same callable (same callable id); the
 * callable is released when its last handle is unregistered, or once at close. */
PTO_API PTO_MUST_USE pto_status pto_worker_register(pto_worker *w, const pto_program *p,
                                                    pto_handle **out_handle);
/* The callable id of a live handle, or -1. */
PTO_API int64_t pto_handle_callable_id(const pto_handle *h);
/* One launch. args are the entry's parameters in declaration order. Fails without launching
 * when an argument does not match the signature (the message names the parameter), and with
 * PTO_STATUS_LAUNCH when a kernel or the orchestration fails. */
PTO_API PTO_MUST_USE pto_status pto_handle_call(pto_handle *h, const pto_arg *args, size_t nargs);
/* ---- asynchronous dispatch ------------------------------------------------------------------
 * pto_handle_submit queues one launch (as pto_handle_call would run it) on the worker's
 * dispatcher thread and returns at once with a completion, so the caller can prepare the next
 * batch on the host while the device runs this one. Launches of one worker run one at a time in
 * the order they were issued, submitted or synchronous: every other call on the worker (a
 * pto_handle_call, copies, allocation, registration, last_launch, close, ...) first waits for
 * the submitted launches to end. The args array is copied; host tensor data is borrowed until
 * the completion is done (inputs must not change, outputs are written by then). Each completion
 * is consumed exactly once, by pto_completion_wait or pto_completion_discard. The submitting
 * thread owns the worker as before; a completion may be waited on from any thread. */
typedef struct pto_completion pto_completion;
PTO_API PTO_MUST_USE pto_status pto_handle_submit(pto_handle *h, const pto_arg *args, size_t nargs,
                                                  pto_completion **out_completion);
/* A completion is a generation-checked token: once consumed, every later use of it is recognised
 * as stale (never a use of freed memory). */
/* 1 when the launch has ended (wait will not block), 0 while it is queued or running, -1 for a
 * completion that was consumed already (or never submitted). */
PTO_API int pto_completion_poll(pto_completion *c);
/* Waits for the launch to end, consumes c and returns the launch's status (the caller's to
 * free); PTO_STATUS_FAILED_PRECONDITION, saying why, for a completion consumed already. */
PTO_API PTO_MUST_USE pto_status pto_completion_wait(pto_completion *c);
/* Gives c up: the launch still runs; its status is dropped. A consumed c is ignored. */
PTO_API void pto_completion_discard(pto_completion *c);

/* Unregisters h (a stale handle is ignored). */
PTO_API void pto_handle_unregister(pto_handle *h);
/* A launch of p, registering it on first use (kept until close). */
PTO_API PTO_MUST_USE pto_status pto_worker_run(pto_worker *w, const pto_program *p,
                                               const pto_arg *args, size_t nargs);

/* ---- spans --------------------------------------------------------------------------- */

#define PTO_LAUNCH_MAX_SPANS 8

typedef struct pto_span {
  const char *name; /* dotted, static storage */
  int depth;        /* 0 for chip.run */
  uint64_t ts_ns;   /* start, CLOCK_MONOTONIC (the sim device clock is the host clock) */
  uint64_t dur_ns;
  bool is_device; /* on the device clock (clk=dev) */
} pto_span;

/* The spans of one launch, in this order:
 *   chip.run                               host: the whole pto_handle_call
 *   chip.run.bind                          host: validation and host-to-device copies
 *   chip.run.runner_run                    host: orchestration and waiting for every task
 *   chip.run.runner_run.device_wall        device: from the orchestration's start (or the first
 *                                          task's, if earlier) to the last task's end
 *   chip.run.runner_run.device_wall.orch   device: the orchestration entry
 *   chip.run.runner_run.device_wall.sched  device: first task start to last task end (empty,
 *                                          at the orchestration's start, when no task ran)
 *   chip.run.copy_back                     host: device-to-host copies and freeing the copies */
typedef struct pto_launch_record {
  uint64_t inv; /* process-wide launch counter, from 1 */
  uint64_t hid; /* pto_program_hid of the program */
  int64_t callable_id;
  uint64_t ntasks;
  bool ok; /* the launch succeeded (a failed one copies nothing back) */
  int nspans;
  pto_span spans[PTO_LAUNCH_MAX_SPANS];
} pto_launch_record;

/* The spans of the worker's last launch that got past argument validation. Fails with
 * PTO_STATUS_NOT_FOUND before the first one. */
PTO_API PTO_MUST_USE pto_status pto_worker_last_launch(const pto_worker *w,
                                                       pto_launch_record *out_record);

/* ---- per-task records ------------------------------------------------------------------ */

/* One task of a recorded launch. Times are CLOCK_MONOTONIC ns, the clock of the launch's spans.
 * ready_ns <= start_ns <= end_ns; a task starts after each of its dependencies ends, and the
 * tasks of one core never overlap. */
/* Where and when one SPMD block of a task ran. */
typedef struct pto_block_record {
  int core;
  uint64_t start_ns;
  uint64_t end_ns;
} pto_block_record;

typedef struct pto_task_record {
  uint64_t task_id; /* submission order within the launch, from 0 */
  int32_t kernel_id;
  const char *kernel; /* the kernel's name (owned by the worker, valid as the records are) */
  int core;           /* the core that ran it; -1 when it did not run (a failed launch
                         skips the tasks left) and then its times are 0 */
  int core_type;      /* PTO_CORE_AIV or PTO_CORE_AIC (pto/orch_abi.h): the type of that core */
  int skipped;        /* 1: its predicate was false at dispatch, so its kernel did not run;
                         2: a dummy task (rt_submit_dummy_task), which has no kernel */
  uint64_t group_id;  /* the task id of the first kernel of its mixed task (rt_submit_task with
                         several kernels: one record per kernel); its own id otherwise */
  int slot;           /* its kernel's slot in that task: 0 AIC, 1 AIV0, 2 AIV1 */
  int ndeps;
  const uint64_t *deps; /* ids of the tasks it waited for, ascending: the unfinished tasks it
                           was ordered after when it was submitted (one that had already
                           finished is no dependency) */
  uint64_t ready_ns;    /* runnable from then on: its last dependency ended, or (none left
                           unfinished) its submission completed */
  uint64_t start_ns;
  uint64_t end_ns;
  /* An SPMD task (launch_spec.set_block_num) runs its blocks side by side on cores of its type:
   * core, start_ns and end_ns above are block 0's, blocks[] (block_num entries, NULL when
   * block_num is 1) every block's. */
  int block_num;
  const pto_block_record *blocks;
  /* allow_early_resolve: its successors may be staged on a core while it runs. staged_ns: when a
   * core took this task before it was ready (a predecessor of it was such a task still running),
   * to start it the moment the predecessors end; 0 when it was dispatched once ready. */
  int early_resolve;
  uint64_t staged_ns;
} pto_task_record;

/* ---- scheduling phases (level-3 swimlane records) ------------------------------------- */

/* What a core's thread did for a task besides running it. The sim has no scheduler threads
 * apart from its cores: each core's thread takes its tasks from its type's ready queue and
 * completes them itself, so these are the scheduler phases of PyPTO's swimlane level 3, one
 * scheduler thread per core. */
typedef enum pto_sched_phase_kind {
  PTO_SCHED_PHASE_DISPATCH = 0, /* taking a task (one block of it) from the ready queue */
  PTO_SCHED_PHASE_COMPLETE = 1, /* completing a task: counting down its successors, queueing
                                   those that became ready, releasing its intermediates */
} pto_sched_phase_kind;

typedef struct pto_sched_phase {
  int core;           /* the core whose thread did it */
  int kind;           /* pto_sched_phase_kind */
  uint32_t loop_iter; /* the core's tasks so far in the launch, from 1: a task's take and its
                         completion share it (a successor the core runs next without the queue
                         has no take) */
  uint32_t tasks;     /* tasks taken or completed: 1 */
  uint64_t start_ns;  /* CLOCK_MONOTONIC ns, the clock of the task records */
  uint64_t end_ns;
} pto_sched_phase;

/* Turns the recording of every core's scheduling phases on or off from the next launch on
 * (off at open). Off, it costs a launch one predictable branch per task taken or completed;
 * on, two clock reads and a record each. Fails during a launch. */
PTO_API PTO_MUST_USE pto_status pto_worker_set_record_phases(pto_worker *w, bool on);

/* The scheduling phases of the worker's last launch that got past argument validation, core by
 * core, each core's in time order. *out_phases is owned by the worker and valid until the next
 * launch on it or its close. Fails with PTO_STATUS_NOT_FOUND when there is no launch or the last
 * one did not record them. */
PTO_API PTO_MUST_USE pto_status pto_worker_last_launch_phases(const pto_worker *w,
                                                              const pto_sched_phase **out_phases,
                                                              size_t *out_nphases);

/* The argument dump of PyPTO's runtime (its enable_dump_args), from the next launch on, at the
 * reference's levels: 0 off; 1 partial: the arguments CoreTaskArgs::dump marked, with their
 * data; 2 full: every task's arguments with their data; 3 hybrid: every task's arguments, data
 * for the marked ones only. Each launch that has a task with something to dump replaces
 * dir/args_dump.json and dir/args.bin (the directory is created; level 3 without a marked
 * tensor writes no args.bin, and its "bin_file" is null), the layout simpler's dump_viewer
 * reads: {"run_dir": dir's name, "bin_format", "dump_args_level", "total_args",
 * "before_dispatch", "after_completion", "input_args", "output_args", "inout_args",
 * "truncated_args", "dropped_records", "dropped_overwrite" (0: nothing is lost), "bin_file",
 * "args": [{"task_id": "0x<16 hex digits>", "func_id": [its kernels' ids], "arg_index", "role":
 * "input"|"output"|"inout", "stage": "before_dispatch" (inputs and inouts, when the task is
 * ready, before any of its kernels runs) | "after_completion" (outputs and inouts, when its
 * last kernel ends, before a successor starts), "kind": "tensor"|"scalar", "dtype" ("float32",
 * ...), for a scalar "value" (as its dtype: the type add_scalar was given, or pto_slot's dtype in
 * generated code; "uint64" and the raw slot when the orchestration did not say), "is_contiguous",
 * "shape", "strides", "start_offset", "numel", "bin_offset", "bin_size", "truncated",
 * "overwritten"}]}; a tensor's bytes are its view's elements, row-major. A mixed task is one task
 * (its first kernel's id). Fails during a launch, or with a level outside 0-3 or no dir. */
PTO_API PTO_MUST_USE pto_status pto_worker_set_dump_args(pto_worker *w, int level, const char *dir);

/* Turns per-task recording on or off from the next launch on (pto_run_config.record_tasks sets
 * it at open). Off, it costs a launch at most one predictable branch per task (taken by a task
 * that is ready when submitted); on, one clock read per such task, and building the records
 * after the launch, outside its spans. Fails during a launch. */
PTO_API PTO_MUST_USE pto_status pto_worker_set_record_tasks(pto_worker *w, bool on);

/* The tasks of the worker's last launch that got past argument validation, in submission order
 * (task_id == index), when it was recorded. *out_tasks is owned by the worker and valid until the
 * next launch on it or its close. Fails with PTO_STATUS_NOT_FOUND when there is no launch or the
 * last one was not recorded. */
PTO_API PTO_MUST_USE pto_status pto_worker_last_launch_tasks(const pto_worker *w,
                                                             const pto_task_record **out_tasks,
                                                             size_t *out_ntasks);

#ifdef __cplusplus
}
#endif
#endif
