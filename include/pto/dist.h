/* pto distributed (L3) worker: host programs over many chips.
 *
 * A distributed worker is prepared once (pto_dist_worker_open) and runs host programs many times.
 * Open forks one chip process per device before it starts any thread of its own (or, with
 * pto_dist_config.chips "threads", starts one thread per chip in this process); each chip is a
 * sim worker with its own core pool. All tensors the host level uses live in one shared heap,
 * mapped before the fork at the same address in every process, so host IO, resident tensors,
 * stacked shards and comm windows cross to the chips as address-free descriptors and are never
 * copied per call. The parent runs the program's host code (pto/host_abi.h); every
 * `call ... device=d` is queued to chip d, ordered after the earlier calls on other chips that
 * touch the same bytes, and after every earlier call on chip d.
 *
 * One thread per worker (like pto_worker): a call while another thread's call is inside the
 * worker is refused. The exception is pto_dist_worker_close, which waits for the other thread's
 * call to return, then closes. pto_dist_worker and pto_dist_tensor values are tokens, not
 * pointers: a stale one (a freed tensor, a closed worker) is reported as an error by every call,
 * never dereferenced, even once its memory was reused. Call pto_dist_worker_open before the
 * process starts other threads: a process that forks while other threads hold locks can deadlock
 * its children.
 *
 * Transport "mpi" (a build with -DPTO_MPI=ON; launched with mpirun, one MPI rank per device):
 * every rank calls pto_dist_worker_open with the same configuration. Rank 0 gets the worker that
 * runs host programs, with its own chip on a thread; every other rank serves its chip's commands
 * inside pto_dist_worker_open until rank 0 closes the worker, then returns a worker for which
 * pto_dist_worker_is_root is 0 and which the caller only closes. Host IO and resident tensors
 * live in rank 0's heap and are shipped to and from the chips with MPI messages; comm windows are
 * MPI-3 windows (shared windows on one node, MPI_Win_allocate with passive-target one-sided calls
 * across nodes, or MPI_Win_create over each rank's own memory, with a warning, where /dev/shm is
 * too small for shared ones). The ranks agree on each step of open and close, each agreement
 * bounded by wait_timeout_ms (at least 10 s; the first at least 120 s): a rank that does not arrive
 * is named in the others' error, and MPI is then not finalized, so mpirun ends the job.
 * MPI_Init_thread(MPI_THREAD_SERIALIZED) is called if the application has not initialized MPI
 * (which it may do itself, at MPI_THREAD_SERIALIZED or higher); MPI is then finalized at exit.
 * A rank that dies ends the whole job (Open MPI's mpirun aborts it and names the rank): there is
 * no recovery. */
#ifndef PTO_DIST_H
#define PTO_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "pto/loader.h"
#include "pto/runtime.h"
#include "pto/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pto_dist_worker pto_dist_worker;

typedef struct pto_dist_config {
  size_t sz;                 /* sizeof(pto_dist_config) */
  int ndevices;              /* chips; with device_ids NULL the ids are 0 .. ndevices-1 */
  const int32_t *device_ids; /* rank -> device id (distinct, >= 0), or NULL */
  /* "shm" (one host, chips forked) or "mpi" (a -DPTO_MPI=ON build under mpirun); NULL:
   * $PTO_DIST_TRANSPORT, else "shm". */
  const char *transport;
  int ncores_per_chip;        /* 0: max(1, usable CPUs / ndevices); at most 1024 */
  uint64_t shared_heap_bytes; /* the shared heap (address space, committed as used); 0: 1 GiB;
                                 at most 1 TiB (pto_dist_worker_open refuses more) */
  uint64_t chip_memory_bytes; /* each chip's private arena for intermediates; 0: 256 MiB */
  /* dist.wait's deadline (on one host, counted from the other ranks' last progress: a wait
   * entered, a command finished, with chips as processes a task completed), and MPI's
   * agreements'; 0: $PTO_DIST_TIMEOUT_MS, else 5000. Given here or in the environment, a chip that
   * makes no progress (no task completed, no wait entered) for that long fails the run and the
   * worker (shm transport; time its threads waited for a CPU does not count). */
  uint32_t wait_timeout_ms;
  /* Single-program mode: the worker runs this host program (retained) and pto_dist_worker_call
   * is its shortcut; with ndevices 0 the device set is the program's, else ndevices and
   * device_ids must be the program's (open refuses another set, naming both counts). NULL:
   * multi-program mode, where every run names its program. */
  const pto_program *program;
  /* MPI: each rank's window arena, where every comm window of a run lives (allocated and
   * pre-faulted at open); 0: $PTO_DIST_WINDOW_BYTES, else 64 MiB. PTO_MPI_WINDOWS=separate
   * forces the one-sided (cross-host) path on one node, =shared refuses to fall back to it
   * (too little /dev/shm is then an error rather than separate windows). */
  uint64_t window_bytes;
  /* Called in each chip's own process (with chips "threads": on the thread that ran the call)
   * after each call it ran without error, with its worker,
   * which then records tasks (pto_worker_last_launch_tasks), its rank and the call's number on
   * that chip (from 0); an error fails the call. NULL: none, and no task recording. */
  pto_status (*on_chip_call)(void *ctx, pto_worker *chip, int rank, int call);
  void *on_chip_call_ctx;
  /* With on_chip_call: the chips record their cores' scheduling phases too
   * (pto_worker_set_record_phases), for level-3 swimlane records. */
  bool record_phases;
  /* Each chip dumps the arguments of its call N (pto_worker_set_dump_args at dump_args_level,
   * 1-3) into dump_args_dir/rank_R/dispatch_N/ (created), R its rank, N counted from 0 on that
   * chip, as the swimlane records of on_chip_call are laid out; NULL: no dump. */
  const char *dump_args_dir;
  int dump_args_level;
  /* How the chips of a one-host worker (transport "shm") run. "processes": one forked process
   * per chip, so a chip that crashes is reported and the host lives on. "threads": every chip is
   * a thread of this process (no fork), and where a chip's thread sleeps the host runs the
   * chip's calls itself (unless wait_timeout_ms or $PTO_DIST_TIMEOUT_MS is given: its stall check
   * needs the host free), so a one-call run switches no thread at all; but a chip that crashes
   * ends the process, pto_dist_worker_chip_pid is this process's pid, on_chip_call runs on
   * whichever thread ran the call (the chip's or the one running the host program), and a chip
   * still stuck in a kernel at close is left running (its memory stays allocated, stderr says
   * so). NULL: $PTO_DIST_CHIPS (ignored under MPI), else "processes". "threads" is refused
   * with transport "mpi", where every chip is its own rank. */
  const char *chips;
} pto_dist_config;

PTO_API void pto_dist_config_init(pto_dist_config *cfg);

/* The transports this build has: "shm", or "shm, mpi" (built with -DPTO_MPI=ON). */
PTO_API const char *pto_dist_transports(void);

/* Prepares: maps the shared heap, forks the chips, waits until each has opened its worker. */
PTO_API PTO_MUST_USE pto_status pto_dist_worker_open(const pto_dist_config *cfg,
                                                     pto_dist_worker **out_worker);
/* Stops the chips (waits for them), frees every tensor. Idempotent (NULL, or a closed worker, is
 * a no-op). A run or copy of another thread in progress on the worker ends first. */
PTO_API void pto_dist_worker_close(pto_dist_worker *w);
PTO_API int pto_dist_worker_device_count(const pto_dist_worker *w);
/* 1 where this process runs host programs: always on one host; MPI rank 0 under MPI. */
PTO_API int pto_dist_worker_is_root(const pto_dist_worker *w);
/* "shm", "mpi (shared windows)" or "mpi (one-sided windows)". */
PTO_API const char *pto_dist_worker_transport(const pto_dist_worker *w);
/* The pid of rank's chip process (-1 once it has exited), for diagnostics and tests; this
 * process's own pid where the chips are threads (pto_dist_config.chips). */
PTO_API int pto_dist_worker_chip_pid(const pto_dist_worker *w, int rank);

/* Runs a host program (pto_program_is_host) once: args follow the host function's parameters:
 * host tensors (copied into the shared heap before, and out/inout ones back after; the heap
 * buffers are kept and reused by the next run of the same shapes), PTO_ARG_DIST_TENSOR for
 * resident and stacked tensors of this worker, scalars. The arguments are checked before anything
 * runs, as pto_worker_run checks its own: dtypes, static dims, a dynamic dim bound twice must
 * agree, no NULL host data, no read-only out/inout host tensor. The program's device set must have
 * this worker's size and ids. The chips load its callees at the first run. */
PTO_API PTO_MUST_USE pto_status pto_dist_worker_run(pto_dist_worker *w, const pto_program *p,
                                                    const pto_arg *args, size_t nargs);

/* Single-program mode's shortcut: pto_dist_worker_run with the program given at open. Refused
 * on a worker opened without one (multi-program mode), which must name each run's program. */
PTO_API PTO_MUST_USE pto_status pto_dist_worker_call(pto_dist_worker *w, const pto_arg *args,
                                                     size_t nargs);

/* Asynchronous dispatch: queues one run of p (as pto_dist_worker_run would run it; p NULL: the
 * program of a single-program worker) on the worker's dispatcher thread and returns at once with
 * a completion, the same kind as pto_handle_submit's: pto_completion_poll, _wait (the run's
 * status), _discard (pto/runtime.h), each completion consumed exactly once, a consumed one
 * refused as stale. Runs of one worker happen one at a time in the order they were issued,
 * submitted or synchronous: every other call on the worker (a run, copies, allocation, freeing,
 * last_run, ...) first waits for the submitted runs to end; close waits for them too, then
 * closes (a completion outlives its worker: waiting after close returns the run's status). The
 * args array is copied and p retained until its run ends; host tensor data is borrowed until the
 * completion is done (inputs must not change, outputs are written by then). A program that is
 * not a host program, a worker that is not the root (MPI) or a closed worker fail the submit;
 * what a run checks later (arguments, device set) fails its completion. */
PTO_API PTO_MUST_USE pto_status pto_dist_worker_submit(pto_dist_worker *w, const pto_program *p,
                                                       const pto_arg *args, size_t nargs,
                                                       pto_completion **out_completion);

/* One-shot: opens a worker for p's device set (cfg may be NULL: defaults), runs p once, closes.
 * Host tensors and scalars only: a resident or stacked tensor belongs to a worker that outlives
 * the run, so it is refused. */
PTO_API PTO_MUST_USE pto_status pto_dist_run_once(const pto_dist_config *cfg, const pto_program *p,
                                                  const pto_arg *args, size_t nargs);

/* ---- what the last run did (for measurement: pto_dist_benchmark in pto/bench.h) ------- */

/* One call of the run, as the chip ran it: its L2 launch record. */
typedef struct pto_dist_dispatch {
  int rank;                 /* the device index of the call (device=) */
  int32_t device;           /* its device id */
  int pid;                  /* the chip process */
  int slot;                 /* the call's position among this run's calls to that rank, from 0 */
  int callee;               /* pto_program_callee index */
  const char *name;         /* the callee's orchestration function (its entry) */
  pto_launch_record launch; /* spans on the chip's clock (CLOCK_MONOTONIC, shared by processes) */
} pto_dist_dispatch;

typedef struct pto_dist_run_record {
  uint64_t ts_ns, dur_ns;              /* the whole pto_dist_worker_run in the parent */
  int ndispatches;                     /* in issue order */
  const pto_dist_dispatch *dispatches; /* owned by the worker, valid until its next run */
  int truncated; /* more calls to one rank than the chips keep records of (1024) */
} pto_dist_run_record;

/* The last run (ok or not) that reached the host code. PTO_STATUS_NOT_FOUND before the first. */
PTO_API PTO_MUST_USE pto_status pto_dist_worker_last_run(const pto_dist_worker *w,
                                                         pto_dist_run_record *out_record);

/* A resident tensor owned by chip worker_id (a rank), zeroed or copied from init. */
PTO_API PTO_MUST_USE pto_status pto_dist_alloc_tensor(pto_dist_worker *w, int ndim,
                                                      const int64_t *shape, pto_dtype dt,
                                                      const void *init, int worker_id,
                                                      pto_dist_tensor **out_tensor);
/* A stacked tensor from host[B, ...]: shard i (host[i]) is uploaded once to worker_ids[i] (B
 * ids, distinct and in range); worker_ids NULL is the default placement, shard i on device i
 * (B at most the device count). It means the host array it was made from: tensor.select(%t, i)
 * in a host is shard i, whatever worker holds it; passing it to device=worker_ids[i] moves
 * nothing, passing it to another device fails the launch naming the worker_ids that would fit.
 * pto_dist_copy_to/_from of a stacked tensor are in shard order (the host array's layout). */
PTO_API PTO_MUST_USE pto_status pto_dist_alloc_stacked_tensor(pto_dist_worker *w,
                                                              const pto_host_tensor *host,
                                                              const int *worker_ids,
                                                              pto_dist_tensor **out_tensor);
/* Frees t. As pto_worker_free_tensor (pto/runtime.h): freeing a tensor a second time is a no-op;
 * a NULL or stale tensor, or another worker's, is INVALID_ARGUMENT ("pto_dist_free_tensor: the
 * tensor was freed"), and so is any later use of a freed one; every call on a closed worker is
 * FAILED_PRECONDITION ("the distributed worker is closed"). */
PTO_API PTO_MUST_USE pto_status pto_dist_free_tensor(pto_dist_worker *w, pto_dist_tensor *t);
/* Upload into / read back from a resident tensor (any host buffer; nbytes must be its size). */
PTO_API PTO_MUST_USE pto_status pto_dist_copy_to(pto_dist_worker *w, pto_dist_tensor *t,
                                                 const void *host, size_t nbytes);
PTO_API PTO_MUST_USE pto_status pto_dist_copy_from(pto_dist_worker *w, void *host,
                                                   pto_dist_tensor *t, size_t nbytes);
/* Every shard of a stacked tensor, in order, into out (a host tensor of the stacked shape). */
PTO_API PTO_MUST_USE pto_status pto_dist_copy_stacked_from(pto_dist_worker *w, pto_dist_tensor *t,
                                                           const pto_host_tensor *out);

#ifdef __cplusplus
}
#endif
#endif
