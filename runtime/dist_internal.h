/* The distributed worker's shared state and its shared-memory transport (runtime/dist*.c).
 *
 * Everything here lives in memory mapped MAP_SHARED before the chips are forked, so it has the
 * same address in the parent and in every chip. */
#ifndef PTO_RUNTIME_DIST_INTERNAL_H
#define PTO_RUNTIME_DIST_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "pto/base.h"
#include "pto/dist_abi.h"
#include "pto/host_abi.h"
#include "pto/kernel_abi.h"
#include "pto/runtime.h"
#include "pto/types.h"

#define PTO__DIST_MAX_RANKS 64
/* The "rank" of a run's abort raised by the host function itself (it failed after posting
 * calls): the ranks' waits then fail at once, naming the host (pto__dist_abort_raise). */
#define PTO__DIST_HOST_RANK PTO__DIST_MAX_RANKS
#define PTO__DIST_MAX_WINDOWS 64
#define PTO__DIST_RING 32
#define PTO__DIST_MAX_ARGS 32
#define PTO__DIST_MSG 1024
/* The chip's heartbeat period; the parent gives up on a chip whose beat stopped for the wait
 * deadline (at least PTO__DIST_MIN_STALL_MS, so a loaded machine is not mistaken for it). */
#define PTO__DIST_BEAT_MS 100
#define PTO__DIST_MIN_STALL_MS 2000
/* The MPI window arena per rank: PTO_DIST_WINDOW_BYTES accepts 4096 to this (1 TiB). */
#define PTO__DIST_MAX_WINDOW_BYTES (1ll << 40)
/* Device address of the shared heap's byte 0 in every chip (clear of the L2 arenas' windows). */
#define PTO__DIST_HEAP_BASE 0x600000000000ull
/* Device address of a rank's window arena under the MPI transport, where comm windows live in
 * MPI window memory rather than in the heap (each rank its own arena, windows at the same offset
 * in every rank's). */
#define PTO__DIST_WIN_BASE 0x680000000000ull

/* A comm window: rank r's slice is bytes at heap offset off + r * stride. */
typedef struct pto__dist_window {
  uint64_t off, stride, bytes;
  int64_t cols; /* last dim, to name an element's offsets in messages */
  _Atomic int32_t live;
  int32_t pad;
  /* The host's name for it without '%' (pto_host_api.name_window), NUL-terminated; empty when
   * the host code named none (messages then give the slot number). */
  char name[PTO_HOST_WINDOW_NAME];
} pto__dist_window;

/* PUT and GET (MPI transport only) move heap bytes [args[0].addr, + args[0].scalar) of a
 * resident tensor between rank 0's heap and the chip's; on rank 0's own chip they do nothing. */
enum {
  PTO__DIST_CMD_LOAD = 1,
  PTO__DIST_CMD_RUN = 2,
  PTO__DIST_CMD_EXIT = 3,
  PTO__DIST_CMD_PUT = 4,
  PTO__DIST_CMD_GET = 5,
};
/* pto__dist_arg.ship: the bytes live in rank 0's heap (host IO, host-created tensors), so the
 * MPI transport sends them to a remote chip before its RUN and back after it. */
enum { PTO__DIST_SHIP_IN = 1, PTO__DIST_SHIP_OUT = 2 };

typedef struct pto__dist_arg {
  int32_t kind; /* PTO_ORCH_ARG_* */
  int32_t dtype;
  int32_t rank;
  int32_t ship;  /* PTO__DIST_SHIP_* */
  uint64_t addr; /* device address in the shared heap (PTO__DIST_HEAP_BASE + offset) */
  int64_t shape[PTO_MAX_RANK];
  uint64_t scalar;
} pto__dist_arg;

typedef struct pto__dist_cmd {
  int32_t op;
  int32_t slot; /* RUN: the chip's registered program */
  int32_t nargs;
  uint32_t epoch; /* RUN: the run it belongs to (from 1); its first failure aborts that run */
  uint32_t dep[PTO__DIST_MAX_RANKS]; /* run after chip r has finished dep[r] commands */
  pto__dist_arg args[PTO__DIST_MAX_ARGS];
  char path[1024]; /* LOAD: the work dir */
} pto__dist_cmd;

/* One finished RUN's launch record, as the chip saw it (names copied: the parent interns them). */
#define PTO__DIST_RECS 1024
typedef struct pto__dist_rec {
  uint32_t seq; /* 1 + the command's index: which command this slot holds */
  int32_t ok;
  uint64_t hid, ntasks;
  int32_t nspans;
  int32_t pad;
  struct {
    char name[56];
    int32_t depth, is_device;
    uint64_t ts_ns, dur_ns;
  } spans[PTO_LAUNCH_MAX_SPANS];
} pto__dist_rec;

typedef struct pto__dist_chip {
  _Atomic uint32_t head;     /* commands posted (parent) */
  _Atomic uint32_t tail;     /* commands finished (chip) */
  _Atomic uint32_t taken;    /* commands taken to run (tail or tail + 1): by the chip's thread,
                                or, chips "threads", by the host, which runs a command itself
                                while the chip's thread sleeps (dist.c take_cmd) */
  _Atomic uint32_t state;    /* 0 starting, 1 serving, 2 failed to start, 3 exited */
  _Atomic uint32_t failed;   /* 1 + the seq of the first failed command, or 0 */
  uint32_t fail_at;          /* when it failed, on the worker's fail_clock: the first error wins */
  _Atomic int32_t last_slot; /* LOAD's result */
  _Atomic uint32_t beat;     /* raised every PTO__DIST_BEAT_MS by the chip's watcher thread: a chip
                                whose beat stops (stopped by a signal or a debugger) is noticed */
  _Atomic uint32_t go;       /* set by the parent once it holds the chip's pidfd */
  /* Waits asleep on head (the chip) and on tail (the parent, chips waiting for this one): the
   * writer of the word makes the futex_wake system call only when one is (dist.c ring_wake). */
  _Atomic uint32_t head_sleepers, tail_sleepers;
  /* The host's wait asleep on tail, and the tail it waits for: the chip wakes it only once tail
   * has reached host_want, not at every command it finishes (dist.c wait_tail). */
  _Atomic uint32_t host_sleepers, host_want;
  /* Progress (issue #34 item 22): a chip alive but stuck in a long kernel beats on, so with an
   * explicit PTO_DIST_TIMEOUT_MS the parent fails the run once the chip has made no progress
   * (no task completed, no wait entered, no command finished) for that long. The chip's watcher
   * stamps progress_ns (CLOCK_MONOTONIC) at each beat that saw progress, or no command to run,
   * or the chip inside a wait (which has its own deadline), and names the kernel running
   * longest (kernel_ns: its start, 0: none). The parent takes the chip's run-queue wait off that
   * time (dist.c stalled). */
  _Atomic uint64_t progress_ns;
  _Atomic uint32_t waiting;    /* inside a bounded wait (dist.* in dist_shm.c, a dependency) or
                                  loading a program: progress */
  _Atomic uint32_t nwaits;     /* waits entered */
  _Atomic uint32_t ntaskbeats; /* looks of dist.c watch_progress (a forked chip's watcher, at
                                  each beat) that saw a task completed since the look before:
                                  with nwaits and tail, the progress that its peers' dist.*
                                  waits see (dist_shm.c peers_progress) */
  _Atomic uint32_t sleepers;   /* its waits asleep on a futex (dist_shm.c): a notify wakes only
                                  then */
  _Atomic int32_t cpu;         /* 1 + the CPU its last dist.* wait started or gave up its CPU
                                  on, 0: none yet (dist_shm.c wait_elem, give_up) */
  _Atomic int32_t ring_cpu;    /* 1 + the CPU its ring's thread last took or finished a command
                                  on, 0: none yet (dist.c ring_spin) */
  _Atomic uint32_t unstacks;   /* moves off the host's CPU (dist.c chip_unstack) */
  /* The time its dist.* operations have held a CPU (dist_shm.c give_up): held_ns adds up the
   * turns given up (a yield, a sleep, the operation's end; cpu is set to that CPU), held_since
   * is when the current turn began (0: none, or given up). A rank whose yield came back late
   * tells by its peers' on its CPU whether the CPU went to them or to another process. */
  _Atomic uint64_t held_ns, held_since;
  /* What its collectives are (dist_shm.c publish_collective): by the parity of their count in
   * the run, kind, op, mode and dtype, the element count and the broadcast root, rewritten only
   * when they change, on a cache line of their own (a peer's read costs nothing while they stay
   * the same). Peers compare theirs once the collective's first barrier is passed. */
  _Alignas(64) _Atomic uint64_t coll_tag[2];
  int64_t coll_numel[2];
  int32_t coll_root[2];
  _Alignas(64) char coll_end[1]; /* nothing else on their cache line */
  /* (run epoch << 32) | (1 + the count) of the collective in which one of its waits has lasted
   * PROBE_NS (dist_shm.c stuck_probe); written only then. */
  _Atomic uint64_t coll_at;
  _Atomic uint64_t kernel_ns;
  char kernel[64];
  int32_t pid;
  char msg[PTO__DIST_MSG]; /* why it failed to start, or its first failed command */
  pto__dist_cmd ring[PTO__DIST_RING];
  pto__dist_rec recs[PTO__DIST_RECS]; /* by command index % PTO__DIST_RECS */
} pto__dist_chip;

typedef struct pto__dist_mpi pto__dist_mpi;

typedef struct pto__dist_shared {
  int32_t nranks;
  uint32_t timeout_ms;
  _Atomic uint32_t bell; /* MPI: raised by every post, so rank 0's proxy sleeps while idle */
  /* A run's first failure: (epoch << 32) | (1 + rank). Every wait of that run (dist.wait,
   * barriers, collectives) on another rank checks it and fails at once, "aborted because rank r
   * failed", instead of waiting out its deadline; a later run has another epoch. */
  _Atomic uint64_t abort;
  _Atomic uint32_t fail_clock; /* orders the chips' failures (pto__dist_chip.fail_at) */
  _Atomic int32_t host_cpu;    /* 1 + the CPU of the host's last post, 0: none (dist.c) */
  uint8_t *heap;               /* host address of the heap (the same in every process) */
  uint64_t heap_size;
  /* The MPI transport (mpi != NULL; this struct is then each process's own, not shared):
   * windows live at offset windows[i].off of each rank's arena; arena[q] is rank q's arena where
   * this process can address it directly (always its own; every rank's with MPI shared
   * windows), NULL where only MPI one-sided calls reach it. */
  struct pto__dist_mpi *mpi;
  uint8_t *arena[PTO__DIST_MAX_RANKS];
  uint64_t arena_size;
  pto__dist_window windows[PTO__DIST_MAX_WINDOWS];
  pto__dist_chip chips[]; /* nranks */
} pto__dist_shared;

/* The shared-memory transport of one chip: its pto_dist_ctx and the detail of its last failed
 * wait. */
typedef struct pto__dist_shm {
  pto_dist_ctx ctx;
  pto__dist_shared *sh;
  int direct;         /* every peer's window is addressable (shared memory, MPI shared windows) */
  int gather;         /* direct, and more ranks than the node has CPUs: small mode=mesh allreduces
                         are reduced by the last rank to arrive (dist_shm.c gather_allreduce) */
  uint8_t *bounce;    /* MPI without direct access: staging for one-sided gets (lazily allocated) */
  uint32_t epoch;     /* the run this chip is executing a command of (0: none) */
  uint64_t lost_at;   /* when a guarded wait's yield last lost the CPU, 0: not lately */
  uint64_t lost_cpus; /* the CPU it lost on then (pto__dist_cpu_bit) */
  uint64_t no_yield_until; /* its guarded waits do not yield on off_cpus before this time */
  uint64_t off_cpus;       /* (dist_shm.c pto__dist_guard_lost, pto__dist_guard_yields) */
  int home;                /* the CPU init moved this rank to (dist_shm.c spread), -1: none */
  uint64_t moved_at;       /* when a wait last moved it back there (dist_shm.c unstack) */
  int join;   /* PTO_DIST_JOIN (0 or 1, default 1): pto__dist_join_peers moves the rank */
  int joined; /* 1 + the CPU it last moved itself to so (pto__dist_join_peers), 0: at home */
  int big;    /* in a collective on a window over 4 MiB (dist_shm.c: short spin, no unstack) */
  int64_t guard_bytes; /* collectives on windows of at least this many bytes guard every wait
                          (dist_shm.c wait_slow; PTO__DIST_GUARD_BYTES, tests lower it) */
  int guard_all;       /* in such a collective */
  uint64_t spin_ns;    /* tests: its waits spin this long (pto__dist_spin_ns), 0: as they would */
  uint32_t coll_epoch, ncoll; /* the run its collectives were counted in, and their count */
  int in_coll;                /* inside shm_collective: a long wait probes for a mismatch */
  const void *coll_sig;       /* its signal window's data then (messages name the window) */
  uint64_t slice_ns;          /* the scheduler slice init gave this rank's thread, 0: the default */
  uint64_t slice_was;         /* its slice before (dist_shm.c slice_for) */
  char detail[512];
} pto__dist_shm;

void pto__dist_shm_init(pto__dist_shm *t, pto__dist_shared *sh, int rank);

/* The calling thread's EEVDF slice in ns (sched_getattr's sched_runtime; Linux 6.12+), 0 where
 * the kernel reports none or the thread is not SCHED_OTHER/SCHED_BATCH. */
uint64_t pto__dist_thread_slice(void);
/* Asks for a slice of ns for the calling thread (sched_setattr, keeping its policy and nice):
 * the slice in effect after (the kernel clamps it to 0.1-100 ms), 0 where ns is 0, the thread
 * is not SCHED_OTHER/SCHED_BATCH, the kernel refused or keeps no slice per task (dist_shm.c
 * pto__dist_shm_init). */
uint64_t pto__dist_set_slice(uint64_t ns);
/* $PTO_DIST_SLICE_US as the slice in ns the ranks ask for (0: the kernel's default; unset or
 * empty: PTO__DIST_SLICE_NS), or INVALID_ARGUMENT naming the variable and the range 0-1000000
 * (pto_env_int). pto_dist_worker_open refuses a bad value before any rank starts. */
pto_status pto__dist_slice_setting(uint64_t *out_ns);
/* $PTO_DIST_JOIN as 0 or 1 (unset or empty: 1; pto__dist_join_peers), or INVALID_ARGUMENT naming
 * the variable and the range (pto_env_int); *out is left alone then. pto_dist_worker_open refuses
 * a bad value before any rank starts. */
pto_status pto__dist_join_setting(int *out);

/* Where a yield of rank t's wait from y0 to y1 (CLOCK_MONOTONIC ns) went, on CPU me (1 + its
 * number, 0: not known), held being the peers' held_ns before it (dist_shm.c wait_slow). Its
 * *foreign part went neither to the turns the peers on that CPU gave up meanwhile (their held_ns
 * grew) nor to a turn one of them still has open (it lost the CPU to t mid-turn): to other
 * processes (all of it under MPI, where the peers' chip blocks are not shared). BACK: it came
 * straight back (under YIELD_ALONE_NS, 5 us); LOST: the CPU was lost to other processes (foreign
 * at least YIELD_LOST_NS, 200 us, a time slice of theirs, and three quarters of the yield); PEER:
 * else, peers had a share of it; AWAY: else (only other processes, briefly). */
enum { PTO__DIST_YIELD_BACK, PTO__DIST_YIELD_PEER, PTO__DIST_YIELD_AWAY, PTO__DIST_YIELD_LOST };
int pto__dist_yield_went(const pto__dist_shm *t, const uint64_t *held, int me, uint64_t y0,
                         uint64_t y1, uint64_t *foreign);
/* CPU me's (1 + its number) bit in lost_cpus/off_cpus; every bit where it is not known (0) or
 * past 64. */
uint64_t pto__dist_cpu_bit(int me);
/* A guarded wait's yield on CPU me lost it to another process at now (dist_shm.c wait_slow). */
void pto__dist_guard_lost(pto__dist_shm *t, uint64_t now, int me);
/* Whether a guarded wait of rank t may yield at now on CPU me (0: on any CPU, as a big window's
 * waits ask: off if off anywhere). */
int pto__dist_guard_yields(const pto__dist_shm *t, uint64_t now, int me);
/* Where ranks outnumber CPUs (gather) and t->join is on: rank t, whose guarded yield on CPU me
 * (1 + its number) was just lost to another process, moves itself to the CPU other than me where
 * the most peer ranks last waited (a migration: its affinity mask is put back). Returns 1 + the
 * CPU it moved to (also in t->joined), 0 where it did not move (dist_shm.c wait_slow). */
int pto__dist_join_peers(pto__dist_shm *t, int me);
/* How long rank t's waits spin before they yield (dist_shm.c wait_elem): 1 ms where each rank can
 * have a CPU of its own (no gather, shared memory) outside collectives on windows over 4 MiB,
 * else 50 us. */
uint64_t pto__dist_spin_ns(const pto__dist_shm *t);

/* A run's first failure (issue #28 item 2). raise: rank failed in run epoch (nonzero); the
 * first rank to raise a run's abort is the one its other ranks' waits name (PTO__DIST_HOST_RANK:
 * the host function, raised on rank 0's process). first: that rank, or -1. Shared memory:
 * sh->abort. MPI: a word at offset 0 of every rank's window arena (rank 0 never gives it to a
 * window), written into every rank's arena by the failing rank. */
void pto__dist_abort_raise(pto__dist_shared *sh, int rank, uint32_t epoch);

/* MPI: the 64 bytes at offset 0 of every rank's arena (never a window's). abort: the run's abort
 * word (above). The rest is pushed there by the rank's left neighbour (rank - 1 mod n), where its
 * chip's control block cannot be read (dist_shm.c publish_collective): its collectives' slots,
 * in the form of pto__dist_chip's coll_tag, coll_numel, coll_root, written only when they change,
 * and its coll_at, written only by a wait that has lasted dist_shm.c's PROBE_NS. */
typedef struct pto__dist_arena_hdr {
  _Atomic int32_t abort;
  int32_t pad;
  _Atomic uint64_t left_at;
  struct {
    _Atomic uint64_t tag; /* stored after numel and root (release) */
    int64_t numel;
    int32_t root, pad;
  } left[2];
} pto__dist_arena_hdr;
_Static_assert(sizeof(pto__dist_arena_hdr) <= 64, "the arena header is the abort word's 64 bytes");

int pto__dist_abort_first(pto__dist_shared *sh, int rank, uint32_t epoch);
void pto__dist_shm_fini(pto__dist_shm *t);

/* Tests: how many calls' entries the worker's record of its run has room for (dist.c
 * compact_posted bounds it by 2 * PTO__DIST_RECS a chip); 0 for a worker that is gone. */
struct pto_dist_worker;
size_t pto__dist_worker_posted_capacity(const struct pto_dist_worker *w);
/* Tests: how often chip r has moved itself off the host's CPU (dist.c chip_unstack); 0 for a
 * worker that is gone or a rank it lacks. */
uint32_t pto__dist_worker_chip_unstacks(const struct pto_dist_worker *w, int r);

/* ---- the MPI transport (dist_mpi.c; without -DPTO_MPI=ON every entry fails cleanly) ------ */

/* Opens the MPI session (MPI_Init_thread if the application has not) and the window arena of
 * arena_bytes per rank, for a worker of ndevices chips with a heap_bytes host heap (every rank
 * must open its worker with the same count and heap, and with the same pto release and wire
 * format, or all fail at the first agreement, naming the rank): shared windows when every rank is
 * on this node unless windows is "separate", else separate ones: MPI_Win_allocate, or
 * MPI_Win_create over this process's own memory when Open MPI's backing directory (/dev/shm) is
 * short, with a warning (windows "shared" refuses any fallback). Collective over MPI_COMM_WORLD:
 * the ranks agree on every step, each agreement bounded by timeout_ms (the first, where ranks
 * arrive at their own pace, by at least 120 s, the others by at least 10 s); a failure on any rank
 * fails every rank, naming it. -1 with err set on failure. */
int pto__dist_mpi_open(uint64_t arena_bytes, const char *windows, uint32_t timeout_ms, int ndevices,
                       uint64_t heap_bytes, pto__dist_mpi **out, int *out_rank, int *out_size,
                       char *err, size_t errn);
/* Collective: frees the window arena (MPI is finalized at exit when pto initialized it and no
 * agreement timed out). A rank missing at close is reported on stderr after the deadline. */
void pto__dist_mpi_close(pto__dist_mpi *m);
int pto__dist_mpi_is_shared(const pto__dist_mpi *m);
/* Rank q's arena where this process can address it (its own always), else NULL. */
uint8_t *pto__dist_mpi_arena(pto__dist_mpi *m, int q);
/* Rank 0: waits for every other rank's hello (pid, sizes), then starts the thread that serves
 * the rings of chips 1..n-1 of sh until each has answered its EXIT. */
int pto__dist_mpi_proxy_start(pto__dist_mpi *m, pto__dist_shared *sh, char *err, size_t errn);
void pto__dist_mpi_proxy_join(pto__dist_mpi *m);
/* Rank 0: how long chip r (1..n-1) has not been heard from (its beats, every PTO__DIST_BEAT_MS
 * while it serves, and its answers), in ms; 0 while an answer is being received. */
uint64_t pto__dist_mpi_silent_ms(pto__dist_mpi *m, int r);
/* Rank 0: gives chip r up (it does not answer): nothing more is sent to it or waited for. */
void pto__dist_mpi_give_up(pto__dist_mpi *m, int r);
/* Other ranks: says hello (with start_err when its chip could not start), then runs each
 * command rank 0 sends with exec (LOAD and RUN; exec records into sh->chips[rank]) and answers
 * it, until EXIT. */
typedef void (*pto__dist_exec_fn)(void *ctx, const struct pto__dist_cmd *cmd, uint32_t seq);
int pto__dist_mpi_serve(pto__dist_mpi *m, pto__dist_shared *sh, int rank, const char *start_err,
                        pto__dist_exec_fn exec, void *ctx);

/* One-sided access to rank peer's arena at byte offset disp, for what is not directly
 * addressable. Each returns 0 or -1 with the MPI error in detail (512 bytes). */
int pto__dist_mpi_get(struct pto__dist_mpi *m, int peer, uint64_t disp, void *dst, uint64_t n,
                      char *detail);
int pto__dist_mpi_put(struct pto__dist_mpi *m, int peer, uint64_t disp, const void *src, uint64_t n,
                      char *detail);
/* An atomic i32 add (add = 1) or replace on the peer's element; old receives the prior value
 * when not NULL. */
int pto__dist_mpi_atomic(struct pto__dist_mpi *m, int peer, uint64_t disp, int32_t value, int add,
                         int32_t *old, char *detail);
/* An atomic read of this rank's own element (and MPI progress while a wait polls). */
int pto__dist_mpi_read(struct pto__dist_mpi *m, uint64_t disp, int32_t *out, char *detail);

/* futex on shared (not process-private) memory. */
void pto__dist_futex_wait(_Atomic uint32_t *addr, uint32_t val, uint32_t timeout_us);
void pto__dist_futex_wake(_Atomic uint32_t *addr);

#endif
