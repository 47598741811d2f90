/* Internal to the runtime: the object registry (tokens), device memory, the per-launch task
 * graph and the sim platform's core pool, shared by the files of runtime/.
 *
 * Threads: the dispatching thread (the caller of pto_handle_call) validates, copies, runs the
 * orchestration and builds the task graph; core threads run kernels and complete tasks. What each
 * field may be touched by is written beside it. */
#ifndef PTO_RUNTIME_INTERNAL_H
#define PTO_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "pto/kernel_abi.h"
#include "pto/loader.h"
#include "pto/orch_abi.h"
#include "pto/runtime.h"

/* ---- small helpers ------------------------------------------------------------------- */

uint64_t pto__rt_now_ns(void);
/* The CPUs this process may run on (its affinity mask; the online CPUs if that cannot be read):
 * the default core count, and the room for spinning cores (sched_getaffinity: one cheap
 * system call, where sysconf reads a file in /sys). */
int pto__rt_usable_cpus(void);

/* PTO_LOG_LEVEL, read case-insensitively, as PyPTO's runtime names its levels: "null" (-1: no
 * orchestration log line), "error" (PTO_ORCH_LOG_ERROR), "warn" or "warning" (the default, unset
 * or empty), "timing" (and every launch's [STRACE]/[STASK] lines), "info", "debug"; each level
 * includes the ones before it. Another value is an INVALID_ARGUMENT naming the variable and the
 * values, and *out gets the default. */
#define PTO__RT_LOG_NULL (-1)
pto_status pto__rt_log_level(int *out);
/* Whether a level of pto__rt_log_level writes the launches' [STRACE] and [STASK] lines. */
static inline int pto__rt_log_strace(int level) { return level >= PTO_ORCH_LOG_TIMING; }

static inline uint64_t pto__rt_xorshift64(uint64_t *s) {
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}

static inline void pto__rt_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* ---- object registry: tokens for workers, handles and device tensors ------------------ */

typedef enum pto__rt_obj_kind {
  PTO__RT_OBJ_WORKER = 1,
  PTO__RT_OBJ_HANDLE,
  PTO__RT_OBJ_TENSOR,
  PTO__RT_OBJ_COMPLETION,
  PTO__RT_OBJ_DIST_WORKER,
  PTO__RT_OBJ_DIST_TENSOR,
} pto__rt_obj_kind;

/* Why a token no longer names an object. */
typedef enum pto__rt_gone {
  PTO__RT_GONE_UNKNOWN = 0, /* never issued, or its slot was reused since */
  PTO__RT_GONE_CLOSED,      /* the worker was closed */
  PTO__RT_GONE_WORKER_CLOSED,
  PTO__RT_GONE_FREED,
  PTO__RT_GONE_UNREGISTERED,
  PTO__RT_GONE_WRONG_KIND, /* a live token of another kind */
  PTO__RT_GONE_WAITED,     /* a completion, consumed by its wait */
  PTO__RT_GONE_DISCARDED,  /* a completion, given up */
  PTO__RT_GONE_NULL,       /* the token is NULL: never an object */
} pto__rt_gone;

/* A fresh token for obj, NULL when out of memory. */
void *pto__rt_obj_add(pto__rt_obj_kind kind, void *obj);
/* The object a token names, or NULL with *out_gone saying why not (out_gone may be NULL). */
void *pto__rt_obj_get(const void *token, pto__rt_obj_kind kind, pto__rt_gone *out_gone);
/* A fresh token for obj, which belongs to the object of token owner (a worker): pinning obj
 * pins its owner. NULL when out of memory. */
void *pto__rt_obj_add_owned(pto__rt_obj_kind kind, void *obj, const void *owner);
/* Retires a live token; later lookups report why. */
void pto__rt_obj_remove(const void *token, pto__rt_gone why);
/* pto__rt_obj_get and retire at once (of two threads taking one token, one gets the object). */
void *pto__rt_obj_take(const void *token, pto__rt_obj_kind kind, pto__rt_gone why,
                       pto__rt_gone *out_gone);
/* pto__rt_obj_get for the length of a call: the object's owner (the object itself when it has
 * none) stays allocated until pto__rt_obj_unpin(*out_pin); NULL (nothing pinned) when the token
 * or its owner is not live. */
void *pto__rt_obj_pin(const void *token, pto__rt_obj_kind kind, pto__rt_gone *out_gone,
                      uint32_t *out_pin);
void pto__rt_obj_unpin(uint32_t pin);
/* Retires a live token, then waits until no call holds a pin on it (close: the calls of other
 * threads inside the object end first; new ones fail with why). Returns 0, at once, when the
 * token was not live (of two threads closing one object, one gets 1). */
int pto__rt_obj_retire_wait(const void *token, pto__rt_gone why);
const char *pto__rt_gone_text(pto__rt_gone why, pto__rt_obj_kind kind);
/* The status code of a call given a token that names no object: INVALID_ARGUMENT for a NULL one
 * (docs/c-api.md: a NULL object is the caller's argument error), else stale_code. */
pto_status_code pto__rt_gone_code(pto__rt_gone why, pto_status_code stale_code);

/* ---- u64 -> u64 hash map (open addressing, keys nonzero) --------------------------------- */

typedef struct pto__rt_map {
  uint64_t *keys;
  uint64_t *vals;
  size_t cap; /* power of two, or 0 */
  size_t n;
} pto__rt_map;

void pto__rt_map_fini(pto__rt_map *m);
void pto__rt_map_clear(pto__rt_map *m);
/* Pointer to the value of key, or NULL. */
uint64_t *pto__rt_map_find(const pto__rt_map *m, uint64_t key);
/* Inserts or replaces; returns 0, or -1 when out of memory. */
int pto__rt_map_put(pto__rt_map *m, uint64_t key, uint64_t val);
/* Removes key; returns 1 if it was there. */
int pto__rt_map_del(pto__rt_map *m, uint64_t key);

/* ---- bump arena (one owner thread; reset keeps the chunks) -------------------------------- */

typedef struct pto__rt_chunk pto__rt_chunk;
typedef struct pto__rt_bump {
  pto__rt_chunk *first;
  pto__rt_chunk *cur;
  size_t live; /* bytes handed out since the last reset */
} pto__rt_bump;

/* 16-byte aligned, uninitialised; NULL when out of memory. */
void *pto__rt_bump_alloc(pto__rt_bump *b, size_t size);
void pto__rt_bump_reset(pto__rt_bump *b);
void pto__rt_bump_fini(pto__rt_bump *b);

/* ---- device memory ----------------------------------------------------------------------- */

typedef struct pto__rt_free_block {
  uint64_t off;
  uint64_t size;
} pto__rt_free_block;

/* Thread-safe (mu): intermediates are freed by core threads. */
typedef struct pto__rt_devmem {
  pthread_mutex_t mu;
  uint8_t *host; /* the arena, mmap'd with MAP_NORESERVE */
  uint64_t base; /* device address of arena byte 0 */
  uint64_t size;
  pto__rt_free_block *free; /* sorted by offset, coalesced; guarded by mu */
  size_t nfree, capfree;
  pto__rt_map allocs; /* device address -> requested bytes; guarded by mu */
  uint64_t used, peak;
  /* An external region (a distributed worker's shared heap): device addresses
   * [ext_base, ext_base + ext_size) are ext_host's bytes. Never allocated from here. */
  uint8_t *ext_host;
  uint64_t ext_base, ext_size;
  /* A second one (the MPI transport's window arena), likewise. */
  uint8_t *ext2_host;
  uint64_t ext2_base, ext2_size;
  /* Tensors wrapped in the external regions (pto__rt_worker_wrap): start -> the largest size
   * wrapped there, so dependency tracking sizes a buffer by its tensor, not by the rest of a
   * region of a GiB. Guarded by mu. */
  pto__rt_map ext_sizes;
  int borrowed; /* host is not ours to unmap (pto__rt_devmem_init_over) */
  /* Arena bytes [0, touched) have been handed out at some time; past it the pages are as mmap
   * made them (zero, not yet backed). Guarded by mu. */
  uint64_t touched;
  /* The setting that sizes the arena, which the out-of-memory messages tell the user to raise
   * ("pto_run_config.device_memory_bytes", "pto_dist_config.shared_heap_bytes"). */
  const char *knob;
} pto__rt_devmem;

pto_status pto__rt_devmem_init(pto__rt_devmem *m, uint64_t size);
/* An allocator over memory someone else mapped (the distributed worker's shared heap); knob is
 * the setting that sizes it (a string that outlives m), named in the out-of-memory messages. */
pto_status pto__rt_devmem_init_over(pto__rt_devmem *m, void *host, uint64_t size, uint64_t base,
                                    const char *knob);
void pto__rt_devmem_fini(pto__rt_devmem *m);
/* nbytes (0 allowed) rounded up to 64, aligned to align (a power of two, at least 64), and
 * nbytes of 64 KiB or more to 4096 where a free block has room for that (devmem.c). what (and
 * name, quoted after it, unless NULL) names the allocation in the out-of-memory message. */
pto_status pto__rt_devmem_alloc(pto__rt_devmem *m, uint64_t nbytes, uint64_t align,
                                const char *what, const char *name, uint64_t *out_addr);
/* pto__rt_devmem_alloc for a buffer the caller is about to write whole (a launch's copy of a
 * host tensor): its pages are faulted in by one call where the kernel offers it
 * (MADV_POPULATE_WRITE) instead of one page fault each, and *out_zero says whether they all still
 * hold zeros (never handed out before), so that zeroing them again can be skipped. */
pto_status pto__rt_devmem_alloc_whole(pto__rt_devmem *m, uint64_t nbytes, const char *what,
                                      const char *name, uint64_t *out_addr, int *out_zero);
/* Returns 1 if addr was a live allocation (now freed), 0 otherwise. */
int pto__rt_devmem_free(pto__rt_devmem *m, uint64_t addr);
/* Whether an allocation starts at addr, and its requested size. */
int pto__rt_devmem_size(pto__rt_devmem *m, uint64_t addr, uint64_t *out_nbytes);
void pto__rt_devmem_info(pto__rt_devmem *m, pto_device_memory_info *out);
static inline void *pto__rt_devmem_host(const pto__rt_devmem *m, uint64_t addr) {
  if (addr - m->ext_base < m->ext_size) return m->ext_host + (addr - m->ext_base);
  if (addr - m->ext2_base < m->ext2_size) return m->ext2_host + (addr - m->ext2_base);
  return m->host + (addr - m->base);
}

/* ---- task graph of one launch ---------------------------------------------------------- */

/* A tensor.create buffer: freed when its scope has ended and every task using it finished. */
typedef struct pto__rt_interm {
  uint64_t addr;
  atomic_int refs;             /* 1 for the open scope + 1 per unfinished task using it */
  int scope_ended;             /* dispatching thread only */
  struct pto__rt_interm *next; /* in its scope's list; dispatching thread only */
} pto__rt_interm;

/* A task's life, and its atomic fields. A task is born in submit_one on the dispatching thread
 * (the orchestration) and lives in the launch's arena until the launch ends. Its states:
 *
 *   SUBMITTING  submit_one builds it, then wires its dependencies: from the first add_edge that
 *               names it as a successor, completing and starting predecessors see it, and
 *               decrement pending and gate; the +1 submit_one holds in each keeps it here.
 *   WAITING     submit_one dropped its holds; predecessors remain (pending > 0, gate > 0).
 *   STAGED      gate reached 0 while pending > 0: every predecessor left is an early_resolve
 *               task that runs. Queued on a core, which waits in task_execute for pending 0.
 *   READY       pending reached 0 and queued was still 0: pushed to its type's queue (or run at
 *               once by the completing core, run_chain's next).
 *   RUNNING     its blocks run on cores (task_execute).
 *   DONE        the core that finished its last block set done (complete); its successors are
 *               released and it is never referenced as a predecessor again.
 *
 * Every access below is sequentially consistent (the C11 default: atomic_load, atomic_store,
 * atomic_fetch_*, atomic_exchange, compare_exchange) unless the row says otherwise. Several
 * rows need it: a waiter announces itself (L->waiters) and re-reads its predicate, and a
 * completer writes the predicate's field and then reads L->waiters, so one of the two sees the
 * other (wait_until_at). atomic_init is used only in SUBMITTING, before the first add_edge
 * publishes the task.
 *
 * field        writer: when (state), how                          reader, and what it relies on
 * ------------ -------------------------------------------------- --------------------------------
 * pending      submit_one: init 1 (SUBMITTING), -1 at the end;     == 0 in task_execute (a STAGED
 *              add_edge: +1 under p's stripe lock while p is not   core waits for READY);
 *              done; complete(p): -1 per successor (p DONE).       task_started skips a task
 *              Whoever takes it to 0 makes the task READY.         whose pending is 0 (the one
 *                                                                   that made it 0 queues it)
 * gate         submit_one: init 1, -1 at the end when pending      the thread that takes it to 0
 *              stayed > 0; add_edge: +1 unless p is early_resolve  with pending > 0 stages it
 *              and started (p's stripe lock); task_started(p):     (through queued)
 *              -1 per successor; complete(p): -1 per successor
 *              unless p started early_resolve (then task_started
 *              already took its share). Never 0 while SUBMITTING.
 * queued       0 at init; exchanged to 1 by whoever queues it:     the exchange is the one
 *              submit_one or complete (READY), submit_one,         arbiter: exactly one of the
 *              complete or task_started (STAGED).                  ready and staging paths
 *                                                                   pushes the task
 * done         complete: 0 -> 1 under the task's stripe lock       add_edge (under the lock:
 *              (RUNNING -> DONE).                                  succ no longer changes once
 *                                                                   done); the tensor map drops
 *                                                                   a done access (entry_done);
 *                                                                   pred_task_done (the task's
 *                                                                   outputs are written)
 * arrived      sync_start: each block +1 on its core (RUNNING);    pred_all_arrived: no block
 *              the last one broadcasts done_cv under done_mu.      starts before all have cores
 * blocks_left  init block_num; each block -1 when it ends.         the block that takes it to 0
 *                                                                   completes the task (and reads
 *                                                                   t_first, t_last)
 * t_first,     block_num > 1: each block's start and end, folded   the last block, after its
 * t_last       in by compare-exchange (initial load relaxed: the   blocks_left decrement, which
 *              exchange re-checks).                                orders every other block's
 *                                                                   fold before it
 * dump_state   group leader: 0 -> 1 by the one block of the group  the group's other blocks
 *              that dumps the inputs (compare-exchange), 1 -> 2    wait for 2 before running
 *              when it has.                                        (pto__rt_dump_before)
 * dump_left    group leader: init to the group's task count; -1    the task that takes it to 0
 *              per group task when it ends (pto__rt_dump_block_    dumps the outputs
 *              done, before complete).
 *
 * The plain fields written after SUBMITTING are ordered by these: t_staged = 1 is written by the
 * thread that won queued, before it pushes the task (the pool's mu orders it before the core
 * that takes it, which may overwrite it with the time); started is read and written under the
 * stripe lock; claimed and next_ready under the pool's mu (but for the task a completing core
 * runs itself, run_chain's next, which no queue ever held); t_start, t_end, core, skipped and
 * brec by the cores that run it, read after the launch ends. */
typedef struct pto__rt_task {
  pto_kernel_fn fn;              /* NULL: a dummy task, which runs nothing */
  int32_t kernel_id;             /* -1 for a dummy task */
  int32_t core_type;             /* PTO_CORE_AIV or PTO_CORE_AIC: the queue it waits in */
  int32_t block_num;             /* SPMD blocks: each runs the kernel once (block_idx 0..), on
                                    whichever core of the type takes it, side by side */
  int32_t claimed;               /* blocks taken by cores; guarded by the pool's mu */
  int32_t sync_start;            /* require_sync_start: no block starts before every one has a
                                    core */
  atomic_int arrived;            /* sync_start: blocks on a core so far */
  atomic_int blocks_left;        /* blocks not finished; the core that finishes the last one
                                    completes the task */
  atomic_ullong t_first, t_last; /* SPMD: the earliest block start, the latest block end */
  int32_t early_resolve;         /* allow_early_resolve: its successors may be staged on a core
                                    once it runs (every block taken), before it finishes */
  atomic_int gate;               /* predecessors that keep it from being staged: unfinished ones
                                    not (early_resolve and running), + 1 while being submitted */
  atomic_int queued;             /* pushed to its queue (ready, or staged early) */
  int32_t started;               /* every block taken (early_resolve); guarded by the stripe lock */
  uint64_t t_staged;             /* when a core took it staged, before it was ready (0: never;
                                    1: staged, but ready before a core took it) */
  pto_block_record *brec;        /* recording only, block_num > 1: each block's core and times */
  /* Tensor dump (pto_worker_set_dump_args) only: */
  uint64_t dump_mask;                  /* CoreTaskArgs::dump's marks */
  int8_t *kinds;                       /* per tensor argument, PTO_ORCH_ARG_* */
  uint64_t *starts;                    /* per tensor argument, its view's start_offset */
  int32_t dump_funcs[PTO_ORCH_NSLOTS]; /* group leader: its kernels' ids (func_id), -1 after */
  uint8_t *scalar_codes;               /* per scalar argument, PTO_DTYPE_* + 1 (0: not known) */
  atomic_int dump_state;               /* group leader: 0, 1 dumping the inputs, 2 done */
  atomic_int dump_left;                /* group leader: the group's tasks not completed */
  int32_t pred_op;                     /* PTO_ORCH_PRED_*: run the kernel only when it holds */
  int32_t pred_dtype;
  int32_t skipped;       /* set by the core: 1 predicate false, 2 dummy */
  int32_t slot;          /* PTO_ORCH_SLOT_* of a mixed task's kernel (AIV0 otherwise) */
  int32_t stream_stores; /* PTO_CORE_STREAM_STORES for its kernel (submit_one) */
  uint32_t group;        /* the first task of its mixed task; itself otherwise */
  const void *pred_elem; /* host address of the predicate's element */
  int64_t pred_target;
  int32_t op_id; /* the orchestration's op id at submit (launch errors), or -1 */
  int32_t ntensors, nscalars, ninterms;
  uint32_t seq;
  pto_kernel_tensor *tensors;
  uint64_t *scalars;
  pto__rt_interm **interms;
  atomic_int pending;     /* unfinished predecessors + 1 while being submitted */
  atomic_int done;        /* 1 once complete ran (set under the stripe lock) */
  int32_t nsucc, capsucc; /* succ: guarded by the task's stripe lock until done */
  struct pto__rt_task **succ;
  struct pto__rt_task *inline_succ[4];
  uint64_t t_start, t_end;         /* written by the core that ran it; 0 when skipped */
  int32_t core;                    /* the core that ran it; written with t_start */
  uint64_t t_ready;                /* recording only: when it became ready at submission (0: it
                                      became ready when a dependency completed) */
  struct pto__rt_task *next_all;   /* dispatching thread only */
  struct pto__rt_task *next_ready; /* in the pool's queue; guarded by the pool's mu */
  uint64_t home_key;               /* the data it works on, for pool->homes: its tensors'
                                      addresses mixed; 0: none (SPMD blocks, or views too small
                                      for their place in a cache to pay for the look-up) */
} pto__rt_task;

/* A strided view's footprint: the byte interval [lo, hi) and the box that refines it. The box's
 * extents and strides are the task's own kernel tensor's (or the orchestration's view's, for a
 * region that lives during one call only): not copied, since a tensor map entry is written
 * fresh for every access of every task in flight. */
typedef struct pto__rt_region {
  uint64_t lo, hi;
  uint64_t addr;
  int32_t rank, esize;
  const int64_t *shape;  /* rank entries */
  const int64_t *stride; /* rank entries */
  int dense;             /* the view covers [lo, hi) exactly */
} pto__rt_region;

/* ---- tensor map: the live accesses of one buffer, found by byte range (tmap.c) ------------
 *
 * An access whose byte range spans at most 2^s bytes lives in level s (s >= 6), in the bin
 * (lo - buffer) >> s; an access starting in bin b ends before bin b + 2, so a query visits the
 * bins that can hold an overlapping access at each level in use: its own range plus one bin
 * before it. A level's bins are an array indexed by bin when the buffer has at most 2^20 of
 * them (neighbouring bins share cache lines), a hash map otherwise. The cost of a query is the
 * number of bins its range covers and the accesses in them, not the number of live accesses of
 * the buffer. Accesses of finished tasks are dropped when a query meets them; a sweep drops the
 * rest whenever a level's size doubles (when enough tasks completed for it to pay off). */

typedef struct pto__rt_tm_entry {
  struct pto__rt_tm_entry *next; /* in its bin, or in the free list */
  pto__rt_task *task;
  pto__rt_region r;
} pto__rt_tm_entry;

typedef struct pto__rt_tm_level {
  int32_t shift;   /* bin size 2^shift bytes */
  uint32_t n;      /* entries */
  size_t sweep_at; /* size (bins.n, or n when direct) at which finished entries are swept */
  unsigned long swept_at_completed; /* *ncompleted at the last sweep */
  uint64_t *direct;    /* per bin, (pto__rt_tm_entry *) first entry; NULL: bins is used */
  int direct_bump;     /* direct came from the entries' bump arena (small): not freed */
  uint64_t ndirect;    /* bins in direct */
  uint64_t dmin, dmax; /* direct: bins [dmin, dmax] may be nonempty (dmin > dmax: none) */
  pto__rt_map bins;    /* bin + 1 -> (pto__rt_tm_entry *) first entry, 0 for an empty bin */
} pto__rt_tm_level;

typedef struct pto__rt_tmap {
  pto__rt_tm_level *lv; /* inline_lv until a second level is needed */
  int32_t nlv, caplv;
  pto__rt_tm_level inline_lv[1];
} pto__rt_tmap;

/* Where entries (and small bin arrays) come from: a bump arena and a free list (one owner
 * thread); a map must be reset or finished before its arena is. */
typedef struct pto__rt_tm_alloc {
  pto__rt_bump *bump;
  pto__rt_tm_entry *free;
  /* Tasks completed so far (the launch's count), or NULL: a sweep is skipped while fewer tasks
   * than half a level's bins have completed since its last sweep, since it could not free
   * enough to pay for itself (every task live: no sweeps at all). */
  const atomic_ulong *ncompleted;
} pto__rt_tm_alloc;

/* Called for every unfinished access whose byte range overlaps the query's. */
/* Returns 0 to keep a visited access that a covering write would drop (a mixed task's sibling). */
typedef int (*pto__rt_tm_visit_fn)(void *ctx, pto__rt_tm_entry *e);

/* Records that task t accesses r (non-empty, inside [buffer, buffer + size)); 0, or -1 when out
 * of memory. A map's buffer and size stay the same until its reset. */
int pto__rt_tmap_insert(pto__rt_tmap *m, pto__rt_tm_alloc *a, uint64_t buffer, uint64_t size,
                        pto__rt_task *t, const pto__rt_region *r);
/* Calls fn for every access of an unfinished task whose byte range overlaps r; drops accesses
 * of finished tasks it meets and, with covering, the visited ones whose range r contains. */
void pto__rt_tmap_visit(pto__rt_tmap *m, pto__rt_tm_alloc *a, uint64_t buffer,
                        const pto__rt_region *r, int covering, pto__rt_tm_visit_fn fn, void *ctx);
/* Forgets every access (entries go back to a's free list) and the buffer's size. */
void pto__rt_tmap_reset(pto__rt_tmap *m, pto__rt_tm_alloc *a);
void pto__rt_tmap_fini(pto__rt_tmap *m);
/* Accesses recorded (live or not yet dropped). */
size_t pto__rt_tmap_count(const pto__rt_tmap *m);

/* Everything the dispatching thread knows about one buffer (device allocation) during a launch:
 * the accesses of unfinished tasks, reads and writes apart so that a read looks at writes only. */
typedef struct pto__rt_track {
  uint64_t buffer;
  uint64_t size;
  pto__rt_interm *interm; /* NULL unless made by tensor.create */
  pto__rt_tmap acc[2];    /* [0] reads, [1] writes */
} pto__rt_track;

#define PTO__RT_STRIPES 64

/* The tensor dump of one launch (dump.c): entries and their bytes, appended by the cores. */
typedef struct pto__rt_dump_entry {
  uint64_t task_id;
  int32_t arg_index, role, stage, kind; /* role: PTO_ORCH_ARG_*; stage 0 before, 1 after */
  int32_t dtype, rank, contiguous;
  int64_t shape[PTO_MAX_RANK];
  int64_t stride[PTO_MAX_RANK];
  uint64_t start_offset, bin_offset, bin_size, value;
  int32_t funcs[PTO_ORCH_NSLOTS]; /* the task's kernel ids (func_id), -1 after the last */
} pto__rt_dump_entry;

typedef struct pto__rt_dump {
  pthread_mutex_t mu;
  pto__rt_dump_entry *v;
  size_t n, cap;
  uint8_t *bin;
  size_t nbin, capbin;
  int oom;
} pto__rt_dump;

typedef struct pto__rt_launch {
  struct pto__rt_worker *w;
  const pto_program *prog;
  /* dispatching thread only: */
  pto__rt_bump bump;
  pto__rt_tm_alloc tm_alloc; /* tensor map entries, from bump */
  pto__rt_map tracks;        /* buffer -> pto__rt_track* */
  pto__rt_track **track_list;
  size_t ntracks, captracks;
  pto__rt_task *tasks_head, *tasks_tail;
  uint32_t ntasks;
  pto__rt_interm **scopes; /* per open scope, the head of its intermediates list */
  int *scope_modes;        /* per open scope, PTO_ORCH_SCOPE_* */
  int nscopes, capscopes;
  pto__rt_task **task_vec; /* every task by id (seq), for explicit dependencies */
  size_t captasks;
  uint64_t t_orch_done;        /* when rt_orchestration_done was called; 0: not called */
  int record_tasks;            /* this launch records its tasks (set at begin) */
  int dump_level;              /* pto_worker_set_dump_args's level for this launch (set at begin) */
  int record_phases;           /* this launch records its cores' scheduling phases (set at begin) */
  const uint8_t *scalar_codes; /* api.scalar_dtypes: the next submit_args' scalars' dtypes */
  int32_t nscalar_codes;
  pto__rt_dump dump;
  /* shared: */
  atomic_int failed; /* set once, by the first failure */
  pthread_mutex_t fail_mu;
  pto_status fail;         /* guarded by fail_mu */
  atomic_long outstanding; /* submitted and not completed */
  atomic_ulong ncompleted; /* tasks completed so far */
  atomic_int waiters;      /* threads blocked (or about to block) on done_cv, woken by every
                              completion */
  atomic_long wake_at;     /* -1, or the dispatching thread blocks on done_cv until at most
                              this many tasks are outstanding: the completion that gets there
                              wakes it */
  pthread_mutex_t done_mu;
  pthread_cond_t done_cv;
  pthread_mutex_t stripes[PTO__RT_STRIPES];
  pto_orch_api api;
} pto__rt_launch;

pto_status pto__rt_launch_init(pto__rt_launch *L, struct pto__rt_worker *w);
/* submit_args of the orchestration table (orch_args.c), over L->api's other entries; ctx is L. */
int32_t pto__rt_api_submit_args(void *ctx, const pto_orch_task_args *t, uint32_t *out_nouts,
                                int64_t *out_task_id);
/* slice of the orchestration table (orch_args.c). */
int32_t pto__rt_api_slice(void *ctx, const pto_orch_chip_tensor *src, int32_t n,
                          const int64_t *offs, const int64_t *shape, pto_orch_chip_tensor *out);
/* The ChipTensor of pto_orchestration_api.h for a runtime tensor (32-bit extents). */
void pto__rt_chip_tensor(const pto_orch_tensor *c, pto_orch_chip_tensor *t);
void pto__rt_launch_fini(pto__rt_launch *L);
/* Prepares L for a launch of prog; opens the outermost scope. */
void pto__rt_launch_begin(pto__rt_launch *L, const pto_program *prog);
/* Ends every open scope, waits for every task; returns the launch's failure, if any, and
 * reports the device clock's first task start and last task end (0 when no task ran). */
pto_status pto__rt_launch_finish(pto__rt_launch *L, uint64_t *out_first_start,
                                 uint64_t *out_last_end);
/* Records the first failure of the launch; takes ownership of s. */
void pto__rt_launch_fail(pto__rt_launch *L, pto_status s);

/* The per-task records of the last recorded launch; the worker's, reused launch after launch. */
typedef struct pto__rt_task_log {
  int valid;      /* holds the last launch's tasks */
  pto_status err; /* why not, when building them failed */
  pto_task_record *tasks;
  size_t ntasks, cap;
  uint64_t *deps;           /* every task's deps, back to back */
  pto_block_record *blocks; /* the SPMD tasks' blocks, back to back */
  size_t capblocks;
  size_t capdeps;
  char **names; /* per kernel id, copies */
  int nnames;
  int phases_valid;      /* holds the last launch's scheduling phases */
  pto_status phases_err; /* why not, when recording them failed */
  pto_sched_phase *phases;
  size_t nphases, capphases;
} pto__rt_task_log;

/* After pto__rt_launch_finish of a launch that recorded its tasks: fills log from the task graph
 * (still intact until the next begin); out of memory leaves log invalid with err saying so. */
void pto__rt_launch_collect_tasks(const pto__rt_launch *L, pto__rt_task_log *log);
void pto__rt_task_log_fini(pto__rt_task_log *log);

/* ---- tensor dump (dump.c) ----------------------------------------------------------------- */

/* Inputs and inouts of t's group, once, before any of its kernels runs (every block calls it). */
void pto__rt_dump_before(pto__rt_launch *L, pto__rt_task *t);
/* One task of t's group is about to complete (every block ended): the last one dumps the outputs
 * and inouts, before it completes, so before any successor of the group starts. */
void pto__rt_dump_block_done(pto__rt_launch *L, pto__rt_task *t);
/* Writes the launch's dump to dir (none when it holds nothing); resets it. */
pto_status pto__rt_dump_write(pto__rt_launch *L, const char *dir);
void pto__rt_dump_fini(pto__rt_dump *d);

/* ---- sim platform: the core pool --------------------------------------------------------- */

typedef struct pto__rt_core {
  struct pto__rt_worker *w;
  int id;
  int type; /* PTO_CORE_AIV or PTO_CORE_AIC */
  pthread_t thread;
  atomic_int tid; /* its thread's Linux thread id once it has started, else 0 */
  void *scratch;  /* 64-byte aligned; replaced only while no launch runs */
  uint64_t scratch_size;
  uint64_t rng;       /* shuffle mode delays; this core only */
  atomic_int claimed; /* 1 while a thread runs tasks as this core: its own, or the
                         dispatching thread helping at the end of a launch */
  atomic_int parked;  /* its thread blocks on park_cv (pool mu) until the dispatching
                         thread releases the core */
  pthread_cond_t park_cv;
  atomic_int spinning; /* its thread spins idle (the dispatching thread leaves it alone) */
  /* Guarded by the pool's mu. asleep: its thread is blocked on its queue's cv. steered_from: the
   * CPU taken out of the thread's CPUs, -1 when none: by the dispatching thread before it wakes
   * the thread (steer), or by the thread itself before it blocks (steer_self; written then
   * without mu, while no one else reads them: steer reads only an asleep thread's); the thread
   * puts steer_saved, its own CPUs, back once it is awake. */
  int asleep;
  int steered_from;
  cpu_set_t steer_saved;
  /* The launch's scheduling phases (L->record_phases): written by the thread that holds the
   * core (claimed), read after the launch. */
  pto_sched_phase *phases;
  size_t nphases, capphases;
  uint32_t loop_iter; /* tasks this core took in the launch */
  int phases_oom;     /* a phase found no memory: the launch's phases are not reported */
  /* The kernel running as this core (1 + its id, 0: none), its program and start: what a
   * distributed chip's watcher names when the chip makes no progress (runtime/dist.c). */
  atomic_int kernel;
  const pto_program *_Atomic kernel_prog;
  atomic_ullong kernel_t0;
} pto__rt_core;

/* The ready tasks of one core type (next_ready); guarded by the pool's mu. */
typedef struct pto__rt_queue {
  pthread_cond_t cv; /* the cores of this type sleep here */
  struct pto__rt_task *qhead_task, *qtail_task;
  struct pto__rt_task *gang; /* a sync_start task some of whose blocks are taken: its other
                                blocks go first, so two such tasks never split the cores */
  size_t qlen;
  size_t nblocks;        /* blocks of the queued tasks not yet taken */
  atomic_size_t nqueued; /* mirror of qlen for the idle spin */
  atomic_int nspin;      /* cores of this type spinning (pool->nspinning counts them too);
                            shared pool: every thread spins and sleeps on q[PTO_CORE_AIV] */
  atomic_int nbusy;      /* cores of this type claimed: one is free while below ncores_of */
  int nsleeping;         /* cores blocked on cv */
  int nwaking;           /* of those, signalled and not yet back from the wait */
} pto__rt_queue;

enum { PTO__RT_NHOMES = 4096 };

/* The CPU that last took a task over the same data (pto__rt_task.home_key), a hash table
 * (linear probing, a few entries per key) guarded by the pool's mu: each entry is a key's bits
 * above the low 8 and that CPU + 1 in them (0: empty). A thread takes a queued task last run on
 * its own CPU first (pool.c, pick): a task over data another CPU touched last ran 1.7-1.8x as
 * long (issue #31 item 4). nkeyed: per queue, its tasks with a key (a take looks past the head
 * only then; written for those tasks only, so tiny tasks add no store). */
typedef struct pto__rt_homes {
  size_t nkeyed[2];
  uint64_t e[PTO__RT_NHOMES];
} pto__rt_homes;

typedef struct pto__rt_pool {
  pthread_mutex_t mu;
  pto__rt_queue q[2]; /* [PTO_CORE_AIV], [PTO_CORE_AIC] */
  uint64_t wake_gen;  /* guarded by mu: bumped to wake sleeping cores for a launch */
  atomic_int shutdown;
  /* Idle cores spinning, all types together, and how many may between launches: the CPUs of
   * the process less one, which the dispatching thread needs (at least 1). Between launches a
   * core over the budget blocks at once instead of taking a CPU from the next launch's
   * dispatching thread; during a launch (active) every idle core may spin its bounded while. */
  atomic_int nspinning;
  int spin_budget;
  atomic_int active;     /* a launch runs: from pto__rt_pool_wake to pto__rt_pool_idle */
  atomic_int spin_types; /* bit per core type: the types the current launch's kernels run on;
                            a spinner of another type gives its place up */
  uint64_t spin_ns;
  /* Shared pool, not lazy: the core threads not blocked on the condition variable (running a
   * task, spinning, about to block), and whether the dispatching thread holds a CPU (1: it
   * orchestrates or helps; 0: it waits, or no launch runs). Awake threads are kept to the CPUs
   * (ncpu) less the dispatching thread's: one more would only take a CPU from another, a spinner
   * from the orchestration it waits for (awake_cap in pool.c). dispatching has a cache line of
   * its own (the pads): the dispatching thread writes it a few times a launch, and a core that
   * spins on the fields around it would make each write a transfer of their line (+0.5 us a
   * one-task launch); cores read it only when every thread is awake. */
  atomic_int nawake;
  int ncpu;
  /* In the pad before dispatching's line (the fields' offsets as without it): set at start. */
  pto__rt_homes *homes;
  char pad_dispatching_[56];
  atomic_int dispatching;
  char pad_dispatching_end_[64];
  int shuffle;
  uint64_t rng; /* guarded by mu */
  /* The CPU of the last launch's dispatching thread, where the pool steers (pool.c, steer),
   * else -1: a core thread about to block takes it out of its own CPUs (steer_self), so the next
   * launch's wake-up finds it steered already. */
  atomic_int steer_cpu;
  int ncores, nstarted;
  int ncores_of[2]; /* per core type: cores [0, aiv) are AIV, the rest AIC */
  /* Shared (pto_run_config.strict_cores false): nthreads threads, the first nthreads cores'
   * (their homes), each taking any ready task, the first queued across the types that have a
   * free core, as a free core of the task's type (its home first), so a task's type picks the
   * core it is recorded on, not its CPU. Strict: a thread per core, taking its type's tasks. */
  int shared;
  int nthreads;
  /* Run to completion (a distributed chip's pool, issue #31 item 2): no core is woken at a
   * launch's start, and a task the orchestration makes ready is left to the dispatching thread
   * (one block per queue, unless a core spins) rather than handed to a sleeping core, so a launch
   * of one task runs on the thread that dispatched it, with no thread switch. Atomic: set after
   * the core threads start (pto__rt_worker_set_run_to_completion), and they read it (capped). */
  atomic_int lazy;
  pto__rt_core *cores;
} pto__rt_pool;

/* naic + naiv cores, nthreads (at most their sum) core threads; shared unless the worker's
 * config is strict_cores. */
pto_status pto__rt_pool_start(struct pto__rt_worker *w, int naic, int naiv, int nthreads);
void pto__rt_pool_stop(pto__rt_pool *pool);
/* Grows every core's scratch to at least bytes; only while no launch runs. */
pto_status pto__rt_pool_grow_scratch(pto__rt_pool *pool, uint64_t bytes);
/* A launch of prog is about to submit work: sleeping cores of the types its kernels run on start
 * spinning, within the spin budget (spinners of other types give their places up). */
void pto__rt_pool_wake(pto__rt_pool *pool, const pto_program *prog);
/* The launch has ended: spinners over the budget give their places up. */
void pto__rt_pool_idle(pto__rt_pool *pool);
/* Queues ready tasks. */
void pto__rt_pool_push(pto__rt_pool *pool, pto__rt_task **tasks, int n);
/* Queues a task the orchestration made ready (the dispatching thread). In a lazy pool the first
 * queued block of each type wakes no sleeping core: the dispatching thread runs it itself
 * (pto__rt_pool_help) at the launch's end, unless a wait hands it to a core first
 * (pto__rt_pool_flush). */
void pto__rt_pool_submit(pto__rt_pool *pool, pto__rt_task *t);
/* A thread is about to wait for tasks: in a lazy pool, wakes sleeping cores for every queued
 * block that no core will take otherwise (those left to the dispatching thread included); in a
 * shared one, the waiting thread (the dispatching thread, or a core's inside a task) gives its
 * CPU to the cores (a sleeping core may wake for a queued block) until pto__rt_pool_resume. */
void pto__rt_pool_flush(pto__rt_pool *pool);
/* The wait that pto__rt_pool_flush began has ended: the dispatching thread holds its CPU again. */
void pto__rt_pool_resume(pto__rt_pool *pool);
/* The dispatching thread, its orchestration done, runs one ready task (and the successors it
 * makes ready) as an idle core of the task's type, instead of waiting for that core's thread to
 * wake up and get a CPU. Returns 1 if it ran one, 0 if no task was ready, no core free, or the
 * core's own thread came back meanwhile (it runs the rest). */
int pto__rt_pool_help(pto__rt_pool *pool, pto__rt_launch *L);
/* pto__rt_pool_help until L has no task outstanding, or (a capped pool) until no task was ready
 * for spin_ns, or (other pools) until none is ready: then the caller waits for the launch's end,
 * and a sleeping core wakes for the tasks that become ready meanwhile. */
void pto__rt_pool_help_out(pto__rt_pool *pool, pto__rt_launch *L);
/* Scheduling phases (pto_worker_set_record_phases): a launch that records them starts every
 * core's log empty; core's thread appends a phase of its own, at its loop_iter; after the launch
 * the logs become log's phases (out of memory: none, and phases_err says so). */
void pto__rt_pool_phases_reset(pto__rt_pool *pool);
void pto__rt_core_phase(pto__rt_core *core, int kind, uint64_t start_ns, uint64_t end_ns);
void pto__rt_pool_collect_phases(const pto__rt_pool *pool, pto__rt_task_log *log);
/* Runs a task's kernel (unless the launch failed) and completes it; *out_next is a successor
 * that became ready and is left for the caller to run. stage: the block is the last of t taken
 * and t is early_resolve: its successors are staged (pto__rt_task_started) as it starts. */
void pto__rt_task_execute(pto__rt_launch *L, pto__rt_task *t, pto__rt_core *core, int32_t block,
                          int stage, pto__rt_task **out_next);
/* Every block of t is taken by a core: if t is early_resolve, stages its successors that wait
 * for nothing else but running early_resolve tasks. */
void pto__rt_task_started(pto__rt_launch *L, pto__rt_task *t);

/* ---- the worker ------------------------------------------------------------------------- */

typedef struct pto__rt_callable {
  const pto_program *prog; /* retained */
  int64_t id;
  int nhandles;
  int implicit; /* registered by pto_worker_run: kept until close */
  struct pto__rt_callable *prev, *next;
} pto__rt_callable;

typedef struct pto__rt_handle {
  void *token;
  struct pto__rt_worker *w;
  pto__rt_callable *callable;
  struct pto__rt_handle *prev, *next;
} pto__rt_handle;

typedef struct pto__rt_dtensor {
  void *token;
  struct pto__rt_worker *w;
  uint64_t addr;
  uint64_t nbytes;
  pto_dtype dtype;
  int rank;
  int64_t shape[PTO_MAX_RANK];
  struct pto__rt_dtensor *prev, *next;
} pto__rt_dtensor;

typedef struct pto__rt_worker {
  void *token;
  pto_run_config cfg; /* normalized: no zero fields */
  pto__rt_devmem mem;
  pto__rt_pool pool;
  pto__rt_launch launch;
  int in_launch; /* atomic (__atomic builtins): set by the one launch that runs */
  int strace;    /* PTO_LOG_LEVEL timing or later at open */
  int log_level; /* PTO_LOG_LEVEL at open (pto__rt_log_level): which orchestration lines print */
  uint64_t scratch_bytes;
  pto__rt_callable *callables;
  int64_t next_callable_id;
  pto__rt_handle *handles;
  pto__rt_dtensor *tensors;
  int have_last;
  pto_launch_record last;
  int record_tasks;  /* pto_worker_set_record_tasks; read at each launch's begin */
  int dump_level;    /* pto_worker_set_dump_args; read at each launch's begin */
  int record_phases; /* pto_worker_set_record_phases; read at each launch's begin */
  char *dump_dir;
  const pto_dist_ctx *dist; /* a distributed worker's chip: handed to every kernel */
  pto__rt_task_log task_log;
  struct pto__rt_async *async; /* pto_handle_submit's dispatcher (async.c), NULL until used */
} pto__rt_worker;

/* The worker whose launch this thread runs (its dispatching thread during a launch; its core
 * threads and dispatcher thread always), else NULL: a close from there is ignored. */
extern _Thread_local const pto__rt_worker *pto__rt_tls_worker;

/* ---- hooks of the distributed worker (runtime/dist*.c) on its chips' L2 workers ---------- */

/* Maps device addresses [base, base + size) to host memory the worker does not own. */
/* External region which (0: the distributed worker's heap; 1: the MPI transport's window arena):
 * device addresses [base, base + size) are host's bytes. */
void pto__rt_worker_set_external(pto_worker *w, int which, void *host, uint64_t size,
                                 uint64_t base);
/* This process is chip rank of a distributed worker: its [STRACE] lines carry rank=<rank>. */
void pto__rt_set_strace_rank(int rank);
/* Every kernel of every later launch gets d in pto_core_ctx.dist. */
void pto__rt_worker_set_dist(pto_worker *w, const pto_dist_ctx *d);
/* "%wsig" into buf: the host program's name for the comm window holding local, when d is the
 * distributed worker's transport (dist_shm.c) and the host named it; else nonzero. */
int pto__dist_window_name(const pto_dist_ctx *d, const void *local, char *buf, size_t n);
/* on: w's launches run to completion (pto__rt_pool.lazy): a distributed chip's, whose
 * dispatching thread is otherwise idle while its launch runs. Only while no launch runs. */
void pto__rt_worker_set_run_to_completion(pto_worker *w, int on);
/* What runs on w now, for another thread (a distributed chip's watcher): *ncompleted the tasks
 * the current (or last) launch has completed, and the kernel that has run longest on a core:
 * *kernel its id (-1: none runs), *prog its program, *t0 its start (pto__rt_now_ns). */
void pto__rt_worker_activity(pto_worker *w, uint64_t *ncompleted, const pto_program **prog,
                             int *kernel, uint64_t *t0);
/* The Linux thread ids of w's core threads that have started, at most max of them into tids;
 * returns how many. For another thread of the process (chips "threads": the stall check). */
int pto__rt_worker_core_tids(pto_worker *w, int *tids, int max);
/* A device tensor handle over device memory the worker does not own (the external region): a
 * contiguous tensor at addr. Freeing it releases the handle only. */
pto_status pto__rt_worker_wrap(pto_worker *w, uint64_t addr, int rank, const int64_t *shape,
                               pto_dtype dt, pto_device_tensor **out_tensor);

/* ---- binding and spans ------------------------------------------------------------------- */

/* One host tensor argument's device copy during a launch. */
typedef struct pto__rt_host_binding {
  int param;
  pto_dir dir;
  const pto_host_tensor *host;
  uint64_t addr;
  uint64_t nbytes;
} pto__rt_host_binding;

typedef struct pto__rt_bound {
  pto_orch_tensor *tensors;           /* per tensor parameter, declaration order */
  pto_orch_chip_tensor *chip_tensors; /* the same, as pto_orchestration_api.h's ChipTensors */
  uint64_t *scalars;                  /* per scalar parameter, declaration order */
  int32_t ntensors, nscalars;
  pto__rt_host_binding *hosts;
  int nhosts;
} pto__rt_bound;

/* Validates args against sig (no side effects); the message names the parameter. */
pto_status pto__rt_validate_args(pto__rt_worker *w, const pto_signature *sig, const pto_arg *args,
                                 size_t nargs);
/* After validation: allocates device copies of host tensors (H2D for in/inout, zeros for out)
 * and fills out. On failure everything allocated is released. */
pto_status pto__rt_bind_args(pto__rt_worker *w, const pto_signature *sig, const pto_arg *args,
                             pto__rt_bound *out);
/* The tensor of a distributed worker's argument that is not a host tensor (a resident or stacked
 * one): its dtype, rank and shape, or an error naming the parameter. */
typedef pto_status (*pto__rt_dist_view_fn)(void *ctx, const pto_sig_param *p, const pto_arg *a,
                                           pto_dtype *dtype, int *rank, const int64_t **shape);
/* pto__rt_validate_args for a distributed worker's host function (dist.c): host tensors and
 * scalars checked alike (a dynamic dim bound twice must agree, static dims must match, host data
 * must not be NULL, written host tensors must not overlap others), the other tensor arguments
 * through dist_view. */
pto_status pto__rt_validate_host_args(const pto_signature *sig, const pto_arg *args, size_t nargs,
                                      pto__rt_dist_view_fn dist_view, void *ctx);
/* Copies out/inout host tensors back (when copy_back) and frees the device copies. */
void pto__rt_unbind_args(pto__rt_worker *w, pto__rt_bound *b, int copy_back);
/* Writes the record's spans as [STRACE] lines on stderr; the root span's line (depth 0) carries
 * the launch's tasks and the worker's ncores as tasks= and cores= attributes (pto trace --json). */
void pto__rt_emit_strace(const pto_launch_record *rec, int ncores);

/* ---- asynchronous dispatch (async.c) ------------------------------------------------------ */

typedef struct pto__rt_async pto__rt_async;
/* Runs one queued job on the dispatcher thread: what and args as posted. */
typedef pto_status (*pto__rt_async_run)(void *ctx, void *what, const pto_arg *args, size_t nargs);
/* Who queues: the API name its messages start with, how a job runs, and (or NULL) what releases
 * a job's what after it ran. Fixed per queue (the first post starts the thread with it). */
typedef struct pto__rt_async_owner {
  const char *fn;
  pto__rt_async_run run;
  void (*done)(void *ctx, void *what);
  void *ctx;
} pto__rt_async_owner;
/* Queues a job on *slot's dispatcher thread (started, and *slot set, on first use); args are
 * copied. *out: the completion's token. */
pto_status pto__rt_async_post(pto__rt_async **slot, const pto__rt_async_owner *owner, void *what,
                              const pto_arg *args, size_t nargs, pto_completion **out);
/* Waits until every queued job of a (may be NULL) has ended (a no-op on its dispatcher thread). */
void pto__rt_async_wait_idle(pto__rt_async *a);
/* Runs what is queued, ends the thread and frees *slot (NULL after; a no-op when NULL). */
void pto__rt_async_end(pto__rt_async **slot);
/* One launch of callable c on w, as pto_handle_call runs it (worker.c). */
pto_status pto__rt_launch_callable(pto__rt_worker *w, struct pto__rt_callable *c,
                                   const pto_arg *args, size_t nargs);
/* Queues a launch on w's dispatcher thread (started on first use). */
pto_status pto__rt_async_submit(pto__rt_worker *w, struct pto__rt_callable *c, const pto_arg *args,
                                size_t nargs, pto_completion **out);
/* Waits until every submitted launch of w has ended (a no-op on the dispatcher thread). Every
 * worker call but submit does this first. */
void pto__rt_async_drain(pto__rt_worker *w);
/* Drains, then ends the dispatcher thread (close). */
void pto__rt_async_stop(pto__rt_worker *w);
/* The [STASK] lines of a launch that recorded its tasks (log valid). */
void pto__rt_emit_stask(const pto_launch_record *rec, const pto__rt_task_log *log);
/* Whether the farthest byte the strides of h (rank, shape and dtype valid, no extent negative)
 * reach is computable in int64: -1 when it is (or h has no element), else the dim whose stride
 * overflows, or h->rank when the byte size does. Host tensors given to any call are checked so
 * before they are read or written. */
int pto__rt_host_strides_overflow(const pto_host_tensor *h);
/* Contiguous <-> strided host copies. */
void pto__rt_copy_host_to_contig(void *dst, const pto_host_tensor *t);
void pto__rt_copy_contig_to_host(const pto_host_tensor *t, const void *src);

#endif
