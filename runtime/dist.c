/* The distributed (L3) worker on one host (pto/dist.h).
 *
 * Prepare maps two MAP_SHARED regions, then forks one chip per rank before any thread of ours
 * exists (or, with pto_dist_config.chips "threads", starts one thread per chip instead: the same
 * rings and waits, a thread switch instead of a process switch each way; chip_thread_main): a
 * control region (pto__dist_shared: windows, one command ring per chip) and the shared heap, which
 * holds every tensor the host level sees. Each chip opens a sim worker with its own core pool, maps
 * the heap into its device address space as an external region, and serves its ring: LOAD a callee
 * work dir (register it), RUN a registered callee on heap tensors, EXIT. The parent runs the
 * program's host code; each call is posted to its chip's ring with the commands of other chips it
 * must follow (earlier calls touching overlapping bytes, one of them writing); a chip runs its own
 * commands in order, so a rank's wait never overtakes its send.
 *
 * Waits are bounded everywhere: the parent sleeps on futexes in slices and checks that its chips
 * are alive, through a pidfd per chip (which works when the process ignores SIGCHLD, and never
 * names another process once the chip's pid is reused) and each chip's heartbeat in the control
 * region (a chip stopped by a signal or a debugger beats no more). A chip that dies is reported
 * with its rank and signal, one that stopped beating for the wait deadline as not running, and
 * the worker is then broken: later calls fail with that message. A chip watches its parent
 * process (not the thread that forked it) and ends when it has gone. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dist_internal.h"
#include "pto/dist.h"

#ifndef PTO_MPI
#define PTO_MPI 0
#endif
#include "runtime_internal.h"

enum { BUF_IO = 1, BUF_TEMP, BUF_WINDOW, BUF_RESIDENT };

/* One acc_rec of a call to a buffer: bytes [lo, hi), by command seq of rank. */
typedef struct acc_rec {
  uint64_t lo, hi;
  int32_t rank;
  uint32_t seq;
  int write;
} acc_rec;

typedef struct buffer {
  int kind;                       /* 0: free slot */
  uint64_t off, bytes;            /* heap offset and size (a window: all ranks' slices) */
  int window;                     /* index in sh->windows, or -1 */
  uint64_t win_stride, win_bytes; /* a window: rank slices' stride and size */
  int owner;                      /* a resident tensor: the rank it lives on; -1 otherwise */
  /* A stacked tensor, laid out in shard order like the host array it was made from: shard i is
   * bytes [i * shard_bytes, (i + 1) * shard_bytes) and lives on rank shard_dev[i]. */
  uint64_t shard_bytes;
  int nshards;
  int shard_dev[PTO__DIST_MAX_RANKS];
  uint64_t run_seen; /* the shards this run passed to their own device so far (bit i: shard i) */
  int arena;         /* MPI: a window, at offset off of every rank's arena (not the heap) */
  acc_rec *acc;
  size_t nacc, capacc;
} buffer;

typedef struct dtensor dtensor;
typedef struct dworker dworker;

/* A resident or stacked tensor; callers hold its token (registry kind DIST_TENSOR, owned by its
 * worker's token). */
struct dtensor {
  void *token;
  dworker *w;
  uint32_t buf; /* buffer id */
  pto_dtype dtype;
  int rank;
  int64_t shape[PTO_MAX_RANK];
  int owner; /* rank, or -1 for a stacked tensor */
  int stacked;
  dtensor *prev, *next;
};

typedef struct loaded {
  const pto_program *p; /* retained */
  int first_slot;       /* callee i is slot first_slot + i on every chip */
} loaded;

typedef struct chip_state chip_state;

/* What a chip's progress check saw at its last look (watch_progress). */
typedef struct chip_seen {
  uint64_t done;
  uint32_t tail, nwaits;
} chip_seen;

/* The stall check's look at a chip with commands to finish (stalled): the progress it last saw
 * itself (tail, nwaits; at: when), and, from the first check a quarter of the deadline past the
 * progress it counts from (base_from), the chip's threads' run-queue wait and CPU time then
 * (base_at; base_ok: read). */
typedef struct stall_look {
  uint32_t tail, nwaits;
  uint64_t at;
  uint64_t base_from, base_at, base_wait, base_cpu;
  int base_ok;
} stall_look;

/* A distributed worker; callers hold its token (registry kind DIST_WORKER): a call pins it, so
 * close, on any thread, waits for the calls of other threads to return (issue #34). */
struct dworker {
  void *token;
  int busy; /* atomic: a call that uses the worker's state runs (one thread at a time) */
  int n;
  /* the MPI transport: this process is MPI rank `rank`; only rank 0 (root) runs host code */
  pto__dist_mpi *mpi;
  int rank, root;
  /* One host: each chip's pidfd (-1: none, the kernel has no pidfds, or reaped): liveness and
   * signals through a handle that cannot name another process once the chip's pid is reused,
   * and that works when this process ignores SIGCHLD (waitpid then knows nothing). */
  int pidfd[PTO__DIST_MAX_RANKS];
  uint32_t beat_seen[PTO__DIST_MAX_RANKS]; /* each chip's last heartbeat seen, and when */
  uint64_t beat_at[PTO__DIST_MAX_RANKS];
  uint32_t progress_ms;     /* the wait deadline when given explicitly (wait_timeout_ms or
                               $PTO_DIST_TIMEOUT_MS): a chip without progress that long fails the
                               run (issue #34 item 22); 0: not given, no such bound */
  pto__rt_devmem win_alloc; /* rank 0: the window arena's offsets */
  int win_alloc_ok;
  /* Chips as threads of this process: every chip with chips "threads" on one host, rank 0's
   * under MPI. Each has its own state; a thread that did not end by close's deadline keeps its
   * state and the shared regions (leaked, leaked_chips set) rather than lose them under it. */
  int threads; /* one host, chips "threads" */
  pthread_t chip_thr[PTO__DIST_MAX_RANKS];
  int chip_thr_started[PTO__DIST_MAX_RANKS];
  chip_state *chip_st[PTO__DIST_MAX_RANKS];
  chip_seen seen[PTO__DIST_MAX_RANKS];  /* threads: what the stall check last saw of each chip */
  stall_look look[PTO__DIST_MAX_RANKS]; /* with progress_ms: the stall check's (stalled) */
  /* threads, without an explicit wait deadline: the host runs a sleeping chip's commands itself
   * (host_runs), and deferred is 1 + the chip whose thread its posts have not woken, or 0. */
  int host_runs, deferred;
  int leaked_chips;
  int32_t ids[PTO__DIST_MAX_RANKS];
  pto__dist_shared *sh;
  size_t sh_bytes;
  uint8_t *heap;
  uint64_t heap_size;
  pto__rt_devmem alloc; /* the parent's allocator over the heap */
  buffer *bufs;
  size_t nbufs;
  dtensor *tensors;
  loaded *progs;
  size_t nprogs, capprogs;
  int nslots;
  uint32_t io_buf[64]; /* per host parameter: its heap buffer, reused while the size fits */
  int broken;
  char why[PTO__DIST_MSG];
  /* the run in progress, and what it dispatched */
  const pto_program *run_prog;
  /* Its calls whose launch records gather may still find (compact_posted drops the others, so
   * a host loop of any length holds at most 2 * PTO__DIST_RECS of them per chip of the worker). */
  struct posted {
    int rank, callee, slot;
    uint32_t seq;
  } * posted;
  size_t nposted, capposted;
  int posted_dropped;                     /* compact_posted dropped some: the record is truncated */
  uint32_t per_rank[PTO__DIST_MAX_RANKS]; /* the run's calls to each chip so far */
  pto_dist_dispatch *disp;
  size_t capdisp;
  pto_dist_run_record last;
  int have_last;
  uint64_t nruns;
  const pto_program *program; /* single-program mode, retained */
  int strace;                 /* PTO_LOG_LEVEL timing or later at open, as an L2 worker reads it */
  pto__dist_cmd cmd;          /* the command being built (large: kept off the stack) */
  char **names;               /* interned span names */
  size_t nnames, capnames;
  const char *span_name[PTO_LAUNCH_MAX_SPANS]; /* gather: span k's last name, tried first */
  char fatal[PTO__DIST_MSG];
  int32_t fatal_code;
  /* A stacked tensor's shard passed to a device that does not hold it (check_shard): the host
   * code runs on without posting anything (place_dry), recording where each shard of that tensor
   * goes (place_to: a device, -1 none, -2 several), so that the error names the placement that
   * fits every call of the run (placement_error), not just the first. */
  int place_dry;
  uint32_t place_buf;
  int place_to[PTO__DIST_MAX_RANKS];
  char place_msg[PTO__DIST_MSG];
  /* pto_dist_worker_submit's dispatcher (async.c), NULL until used. Its queued runs own the
   * worker's state: a call that takes the worker waits for them first (enter). */
  pto__rt_async *async;
};

/* The setting that sizes the shared heap, which pto_dist_alloc_tensor's out-of-memory message
 * tells the user to raise. */
static const char k_heap_knob[] = "pto_dist_config.shared_heap_bytes";

void pto_dist_config_init(pto_dist_config *cfg) {
  if (!cfg) return;
  memset(cfg, 0, sizeof *cfg);
  cfg->sz = sizeof *cfg;
}

/* *out: in (NULL: the defaults) as this version's struct, the fields past in->sz defaulted. As
 * pto_run_config's, a size that cannot even hold ndevices (or a huge one) is named as such rather
 * than read as a config of 0 devices. */
static pto_status read_config(const pto_dist_config *in, pto_dist_config *out, const char *fn) {
  pto_dist_config_init(out);
  if (!in) return PTO_OK;
  if (in->sz < offsetof(pto_dist_config, ndevices) + sizeof in->ndevices || in->sz > (1u << 20))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: pto_dist_config.sz is %zu: initialise the config with "
                           "pto_dist_config_init",
                           fn, in->sz);
  memcpy(out, in, in->sz < sizeof *out ? in->sz : sizeof *out);
  out->sz = sizeof *out;
  return PTO_OK;
}

static int dist_worker_device_count(const dworker *w) { return w ? w->n : -1; }
const char *pto_dist_transports(void) { return PTO_MPI ? "shm, mpi" : "shm"; }
static int dist_worker_is_root(const dworker *w) { return w ? w->root : 0; }
static const char *dist_worker_transport(const dworker *w) {
  if (!w) return "?";
  if (!w->mpi) return "shm";
  return pto__dist_mpi_is_shared(w->mpi) ? "mpi (shared windows)" : "mpi (one-sided windows)";
}
static int dist_worker_chip_pid(const dworker *w, int rank) {
  return w && rank >= 0 && rank < w->n ? w->sh->chips[rank].pid : -1;
}

/* ---- the chip process ------------------------------------------------------------------ */

/* 1 when s is PTO_OK; frees s. */
static int pto_status_ok_free(pto_status s) {
  if (!s) return 1;
  pto_status_free(s);
  return 0;
}

typedef struct chip_slot {
  pto_program *p;
  pto_handle *h;
} chip_slot;

/* A heap tensor the chip has wrapped (pto__rt_worker_wrap: a handle over the shared heap, no
 * memory of its own), kept for later calls (issue #31 item 2): wrapping and freeing a handle per
 * tensor argument at every call was ~16% of a one-call run's CPU time (perf, chips as threads).
 * used: the chip's call that last used it, so one call never gets one handle for two of its
 * arguments. */
typedef struct chip_wrap {
  pto_device_tensor *t; /* NULL: a free entry */
  uint64_t addr;
  int32_t rank, dtype;
  int64_t shape[PTO_MAX_RANK];
  uint64_t used;
} chip_wrap;
#define CHIP_WRAPS PTO__DIST_MAX_ARGS /* each argument of a call finds an entry it may take */

/* A chip: its sim worker, transport and registered callees. */
struct chip_state {
  pto__dist_shared *sh;
  pto__dist_chip *c;
  int rank;
  int tid; /* chips "threads": the chip's thread's Linux thread id (the stall check) */
  pto_worker *wk;
  pto__dist_shm tr;
  int nslots;
  chip_slot slots[256];
  pto_status (*on_call)(void *, pto_worker *, int, int); /* pto_dist_config.on_chip_call */
  void *on_call_ctx;
  int ncalls;
  const char *dump_dir; /* pto_dist_config.dump_args_dir: NULL, no dump */
  int dump_level;
  chip_wrap wraps[CHIP_WRAPS];
  uint64_t nruns;         /* RUN commands begun: chip_wrap.used's clock */
  uint64_t unstack_after; /* chip_unstack moves the chip no sooner than this (pto__rt_now_ns) */
  /* pto_dist_config.program (single-program mode), NULL: none. Under MPI a LOAD names the
   * callee's work dir (the same path on every host: load_program); where this process holds a
   * copy of that callee for the program, the chip loads the copy, whose positions.json names
   * the lines of a failing call (the work dir has none): chip_load_dir. */
  const pto_program *program;
};

/* Records a chip's failed command, its place on the fail clock and, for a RUN of run epoch
 * (nonzero), the run's abort: the first failing rank of a run is the one every wait names. */
static void chip_fail_cmd(pto__dist_shared *sh, pto__dist_chip *c, uint32_t seq, uint32_t epoch,
                          const char *msg, const char *detail) {
  uint32_t expect = 0;
  if (!atomic_compare_exchange_strong(&c->failed, &expect, seq + 1)) return;
  c->fail_at = atomic_fetch_add(&sh->fail_clock, 1) + 1;
  snprintf(c->msg, sizeof c->msg, "%s%s%s", msg, detail && *detail ? ": " : "",
           detail ? detail : "");
  pto__dist_abort_raise(sh, (int)(c - sh->chips), epoch);
}

/* The rings' waits (issue #31 items 1 and 2). A waiter spins first where that can pay
 * (ring_spin), then sleeps on the word's futex, counted in the word's sleepers (ring_sleep),
 * where the writer's wake (ring_wake) reaches it at once: a woken thread preempts a busy one. It
 * never yields: beside a busy process a yield hands that process its whole time slice, and a
 * yielding waiter cannot be woken early (measured, 4 ranks and one busy loop on 2 CPUs: one-call
 * runs of 4.2-5.1 ms median in 2 of 3 runs with the yields of the last round, 33-117 us without).
 * The writer makes the wake system call only while a waiter sleeps: the count is raised
 * (seq_cst) before the futex rechecks the word, and the word is stored (seq_cst) before the
 * count is read. */
static void ring_sleep(_Atomic uint32_t *word, uint32_t val, _Atomic uint32_t *sleepers,
                       uint32_t timeout_us) {
  atomic_fetch_add_explicit(sleepers, 1, memory_order_seq_cst);
  pto__dist_futex_wait(word, val, timeout_us);
  atomic_fetch_sub_explicit(sleepers, 1, memory_order_relaxed);
}

static void ring_wake(_Atomic uint32_t *word, _Atomic uint32_t *sleepers) {
  if (atomic_load_explicit(sleepers, memory_order_seq_cst)) pto__dist_futex_wake(word);
}

/* The ring's two sides on CPUs of their own answer each other within microseconds, and a CPU
 * given away (a yield beside a busy process, a futex sleep) costs a scheduler round trip each
 * way (issue #31 item 2: a one-call run is a post and a reply; measured on 2 loaded CPUs with
 * the host and the chip pinned apart, 28-35 us a run spinning against 54-58 us without). So a
 * wait for the other side first spins PTO__DIST_RING_SPIN_NS by the clock, but only while the
 * other side last ran on another CPU (other_cpu: 1 + that CPU, as published) and no chip with
 * commands to finish last ran on this one: either could not run while this one spins. Returns 1
 * once *word differs from val. Where the host and a chip process share a CPU (beside a busy
 * process), a one-call run is two thread switches and two futex calls, a wake by one side and a
 * wait by the other (the side whose wake preempts it is the one that never sleeps): ~2.2 us a
 * handoff on a 2-CPU Zen 4 KVM guest (a bare futex ping-pong of two processes on one CPU: 4.2-4.3
 * us a round trip, threads alike), 6.9-7.1 us a run with the work, the least two processes
 * taking turns on a CPU can do; chips as threads switch nothing (host_run_chip). What costs more
 * there is a third runnable process on that CPU taking its slice, milliseconds now and then
 * (dist_overhead's "median of the single runs" leaves those out). */
#ifndef PTO__DIST_RING_SPIN_NS
#define PTO__DIST_RING_SPIN_NS 30000
#endif
static int this_cpu(void) { return sched_getcpu() + 1; }

/* Sets *preempted (where not NULL) when the spin lost its CPU to another thread: two looks at the
 * clock 16 pauses apart (well under a microsecond) that lie over PTO__DIST_RING_LOST_NS apart. */
#ifndef PTO__DIST_RING_LOST_NS
#define PTO__DIST_RING_LOST_NS 100000
#endif
static int ring_spin(pto__dist_shared *sh, _Atomic uint32_t *word, uint32_t val, int other_cpu,
                     int *preempted) {
  int me = this_cpu();
  if (!other_cpu || other_cpu == me) return 0;
  for (int q = 0; q < sh->nranks; q++) {
    pto__dist_chip *o = &sh->chips[q];
    if (atomic_load_explicit(&o->ring_cpu, memory_order_relaxed) == me &&
        atomic_load_explicit(&o->head, memory_order_relaxed) !=
            atomic_load_explicit(&o->tail, memory_order_relaxed))
      return 0;
  }
  uint64_t t0 = pto__rt_now_ns(), last = t0;
  for (unsigned i = 0;; i++) {
    if (atomic_load_explicit(word, memory_order_acquire) != val) return 1;
    pto__rt_cpu_relax();
    if ((i & 15) == 15) {
      uint64_t now = pto__rt_now_ns();
      if (preempted && now - last > PTO__DIST_RING_LOST_NS) *preempted = 1;
      if (now - t0 >= PTO__DIST_RING_SPIN_NS) return 0;
      last = now;
    }
  }
}

static int wait_deps(pto__dist_shared *sh, const pto__dist_cmd *cmd) {
  for (int r = 0; r < sh->nranks; r++) {
    uint32_t want = cmd->dep[r];
    if (!want) continue;
    pto__dist_chip *o = &sh->chips[r];
    for (;;) {
      uint32_t t = atomic_load_explicit(&o->tail, memory_order_acquire);
      if ((int32_t)(t - want) >= 0) break;
      if (atomic_load(&o->state) >= 2) return -1;
      ring_sleep(&o->tail, t, &o->tail_sleepers, 2000);
    }
  }
  return 0;
}

/* A handle over heap tensor a for the chip's current call: a kept one (chip_wrap), or one wrapped
 * now in place of the least recently used (a free entry first). With at most CHIP_WRAPS
 * arguments a call, some entry is always free of this call. */
static pto_status chip_wrap_arg(chip_state *cs, const pto__dist_arg *a, pto_device_tensor **out) {
  size_t shape_bytes = sizeof a->shape[0] * (size_t)(a->rank > 0 ? a->rank : 0);
  chip_wrap *lru = NULL;
  for (int i = 0; i < CHIP_WRAPS; i++) {
    chip_wrap *e = &cs->wraps[i];
    if (e->used == cs->nruns) continue; /* another argument of this call has it */
    if (e->t && e->addr == a->addr && e->rank == a->rank && e->dtype == a->dtype &&
        shape_bytes <= sizeof e->shape && !memcmp(e->shape, a->shape, shape_bytes)) {
      e->used = cs->nruns;
      *out = e->t;
      return PTO_OK;
    }
    if (!lru || (lru->t && (!e->t || e->used < lru->used))) lru = e;
  }
  if (lru->t) pto_status_free(pto_worker_free_tensor(cs->wk, lru->t));
  lru->t = NULL;
  PTO_RETURN_IF_ERROR(
      pto__rt_worker_wrap(cs->wk, a->addr, a->rank, a->shape, (pto_dtype)a->dtype, &lru->t));
  lru->addr = a->addr;
  lru->rank = a->rank;
  lru->dtype = a->dtype;
  memcpy(lru->shape, a->shape, sizeof lru->shape);
  lru->used = cs->nruns;
  *out = lru->t;
  return PTO_OK;
}

static void chip_run(chip_state *cs, const pto__dist_cmd *cmd, uint32_t seq) {
  pto__dist_shared *sh = cs->sh;
  pto__dist_chip *c = cs->c;
  pto_worker *wk = cs->wk;
  pto__dist_shm *tr = &cs->tr;
  chip_slot *slots = cs->slots;
  cs->nruns++;
  if (cmd->slot < 0 || cmd->slot >= cs->nslots) {
    chip_fail_cmd(sh, c, seq, cmd->epoch, "a call to a program this chip has not loaded", NULL);
    return;
  }
  /* Waiting for another chip is progress for the parent's stall check: that chip is checked. */
  atomic_fetch_add_explicit(&c->waiting, 1, memory_order_relaxed);
  int dead = wait_deps(sh, cmd);
  atomic_fetch_sub_explicit(&c->waiting, 1, memory_order_relaxed);
  if (dead) {
    chip_fail_cmd(sh, c, seq, cmd->epoch, "a call whose inputs come from a chip that died", NULL);
    return;
  }
  const pto_signature *sig = pto_program_signature(slots[cmd->slot].p);
  pto_arg args[PTO__DIST_MAX_ARGS];
  pto_status s = PTO_OK;
  for (int i = 0; i < cmd->nargs && !s; i++) {
    const pto__dist_arg *a = &cmd->args[i];
    if (a->kind == PTO_ORCH_ARG_SCALAR) {
      pto_dtype dt = i < sig->nparams ? sig->params[i].dtype : PTO_DTYPE_I64;
      args[i] = pto_arg_scalar(pto_scalar_from_slot(dt, a->scalar));
    } else {
      pto_device_tensor *t = NULL;
      s = chip_wrap_arg(cs, a, &t);
      if (!s) args[i] = pto_arg_device(t);
    }
  }
  tr->detail[0] = '\0';
  tr->epoch = cmd->epoch;
  if (!s) s = pto_handle_call(slots[cmd->slot].h, args, (size_t)cmd->nargs);
  tr->epoch = 0;
  pto_launch_record lr;
  pto__dist_rec *rec = &c->recs[seq % PTO__DIST_RECS];
  if (!pto_status_ok_free(pto_worker_last_launch(wk, &lr))) memset(&lr, 0, sizeof lr);
  rec->ok = !s;
  rec->hid = lr.hid;
  rec->ntasks = lr.ntasks;
  rec->nspans = lr.nspans;
  for (int i = 0; i < lr.nspans && i < PTO_LAUNCH_MAX_SPANS; i++) {
    /* A copy, not snprintf: one per span at each call. */
    const char *nm = lr.spans[i].name ? lr.spans[i].name : "";
    size_t len = strnlen(nm, sizeof rec->spans[i].name - 1);
    memcpy(rec->spans[i].name, nm, len);
    rec->spans[i].name[len] = '\0';
    rec->spans[i].depth = lr.spans[i].depth;
    rec->spans[i].is_device = lr.spans[i].is_device;
    rec->spans[i].ts_ns = lr.spans[i].ts_ns;
    rec->spans[i].dur_ns = lr.spans[i].dur_ns;
  }
  atomic_store_explicit((_Atomic uint32_t *)&rec->seq, seq + 1, memory_order_release);
  if (s) {
    char head[PTO__DIST_MSG];
    snprintf(head, sizeof head, "rank %d (pid %d): @%s: %s", tr->ctx.rank, (int)getpid(),
             sig->entry ? sig->entry : "?", pto_status_message(s));
    chip_fail_cmd(sh, c, seq, cmd->epoch, head, tr->detail);
    pto_status_free(s);
  }
}

/* Opens rank's chip; on failure returns the message (in c->msg). */
static int chip_open(chip_state *cs, pto__dist_shared *sh, int rank, const pto_dist_config *cfg) {
  memset(cs, 0, sizeof *cs);
  pto__rt_set_strace_rank(rank); /* this thread's [STRACE] lines */
  cs->program = cfg->program;
  cs->sh = sh;
  cs->rank = rank;
  cs->c = &sh->chips[rank];
  pto_run_config rc;
  pto_run_config_init(&rc);
  rc.ncores = cfg->ncores_per_chip;
  rc.device_memory_bytes = cfg->chip_memory_bytes ? cfg->chip_memory_bytes : 256ull << 20;
  rc.record_tasks = cfg->on_chip_call != NULL;
  /* A chip's idle core spins 2 us, not the L2 default 40: chips share the host's CPUs with each
   * other and the parent, and a core spinning on the CPU its own dispatching thread waits for
   * (perf sched: a 45 us spin, twice per one-call run, the core and the chip's main thread on
   * one CPU) was most of a one-call run's ~110 us on a loaded host (issue #31 item 2). */
  rc.idle_spin_us = 2;
  cs->on_call = cfg->on_chip_call;
  cs->on_call_ctx = cfg->on_chip_call_ctx;
  cs->dump_dir = cfg->dump_args_dir;
  cs->dump_level = cfg->dump_args_level;
  pto_status s = pto_worker_open(&rc, &cs->wk);
  if (!s && cfg->on_chip_call && cfg->record_phases) {
    s = pto_worker_set_record_phases(cs->wk, true);
    if (s) {
      pto_worker_close(cs->wk);
      cs->wk = NULL;
    }
  }
  if (s) {
    snprintf(cs->c->msg, sizeof cs->c->msg, "rank %d: opening its sim worker: %s", rank,
             pto_status_message(s));
    pto_status_free(s);
    return -1;
  }
  pto__rt_worker_set_external(cs->wk, 0, sh->heap, sh->heap_size, PTO__DIST_HEAP_BASE);
  if (sh->mpi)
    pto__rt_worker_set_external(cs->wk, 1, sh->arena[rank], sh->arena_size, PTO__DIST_WIN_BASE);
  pto__dist_shm_init(&cs->tr, sh, rank);
  pto__rt_worker_set_dist(cs->wk, &cs->tr.ctx);
  /* The chip's main thread waits while its launch runs: it runs the launch's first ready task
   * itself, so a one-task call switches no thread inside the chip (issue #31 item 2: the L2
   * launch's wake of a core at its start, the push's wake and the completion's wake back were
   * ~8 thread switches of a one-call run). */
  pto__rt_worker_set_run_to_completion(cs->wk, 1);
  return 0;
}

static void chip_close(chip_state *cs) {
  for (int i = 0; cs->wk && i < CHIP_WRAPS; i++)
    if (cs->wraps[i].t) pto_status_free(pto_worker_free_tensor(cs->wk, cs->wraps[i].t));
  if (cs->wk) pto_worker_close(cs->wk);
  for (int i = 0; i < cs->nslots; i++)
    pto_program_release(cs->slots[i].p);
  pto__dist_shm_fini(&cs->tr);
}

/* pto_dist_config.dump_args_dir: the argument dump of this chip's next call into
 * DIR/rank_R/dispatch_N, the folder its swimlane records get. */
static pto_status set_call_dump(const chip_state *cs) {
  char path[4096];
  int n = snprintf(path, sizeof path, "%s/rank_%d/dispatch_%d", cs->dump_dir, cs->rank, cs->ncalls);
  if (n < 0 || (size_t)n >= sizeof path)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "dump_args_dir %s: path too long",
                           cs->dump_dir);
  return pto_worker_set_dump_args(cs->wk, cs->dump_level, path);
}

/* Under MPI a LOAD's path may hold a second one after the work dir's NUL: the copy of that
 * callee rank 0's program holds (load_program), positions.json included, and args[0].scalar
 * that build's hid (pto_program_hid). It, or NULL. */
static const char *load_copy(const pto__dist_cmd *cmd) {
  size_t n = strnlen(cmd->path, sizeof cmd->path);
  if (n + 2 >= sizeof cmd->path || !cmd->path[n + 1]) return NULL;
  const char *copy = cmd->path + n + 1;
  return memchr(copy, 0, sizeof cmd->path - n - 1) ? copy : NULL;
}

/* The dir a LOAD loads: under MPI, where its work dir is a callee's of this process's program
 * (pto_dist_config.program), the copy the program holds of that callee (as a chip on one host
 * loads); else rank 0's copy where the LOAD names one (readable on rank 0's host: a C-API user
 * whose ranks hold no program); else the work dir. A copy's positions.json names the line of a
 * failing call, which the work dir in the cache has not. */
static const char *chip_load_dir(const chip_state *cs, const pto__dist_cmd *cmd) {
  if (!cs->sh->mpi) return cmd->path;
  for (int i = 0; cs->program && i < pto_program_callee_count(cs->program); i++) {
    const char *held = pto_program_work_dir(pto_program_callee(cs->program, i));
    const char *cdir = pto_program_callee_dir(cs->program, i);
    if (held && cdir && !strcmp(cdir, cmd->path)) return held;
  }
  const char *copy = load_copy(cmd);
  return copy ? copy : cmd->path;
}

/* LOAD or RUN, as command seq of this chip. */
static void chip_exec(void *ctx, const pto__dist_cmd *cmd, uint32_t seq) {
  chip_state *cs = ctx;
  pto__dist_chip *c = cs->c;
  if (cmd->op == PTO__DIST_CMD_RUN) {
    pto_status ds = cs->dump_dir ? set_call_dump(cs) : PTO_OK;
    if (ds) {
      char head[PTO__DIST_MSG];
      snprintf(head, sizeof head, "rank %d: before call %d: %s", cs->rank, cs->ncalls++,
               pto_status_message(ds));
      chip_fail_cmd(cs->sh, c, seq, cmd->epoch, head, NULL);
      pto_status_free(ds);
      return;
    }
    chip_run(cs, cmd, seq);
    int call = cs->ncalls++;
    pto_status s = cs->on_call && !atomic_load(&c->failed)
                       ? cs->on_call(cs->on_call_ctx, cs->wk, cs->rank, call)
                       : PTO_OK;
    if (s) {
      char head[PTO__DIST_MSG];
      snprintf(head, sizeof head, "rank %d: after call %d: %s", cs->rank, call,
               pto_status_message(s));
      chip_fail_cmd(cs->sh, c, seq, cmd->epoch, head, NULL);
      pto_status_free(s);
    }
    return;
  }
  if (cmd->op != PTO__DIST_CMD_LOAD) return;
  const char *dir = chip_load_dir(cs, cmd);
  pto_program *p = NULL;
  pto_handle *hd = NULL;
  /* Loading (a stale work dir is rebuilt) runs no task: it counts as progress, as a wait does. */
  atomic_fetch_add_explicit(&c->waiting, 1, memory_order_relaxed);
  pto_status s = cs->nslots >= 256
                     ? pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "too many programs on one chip")
                     : pto_program_load_dir(dir, &p);
  if (!s && dir == load_copy(cmd) && pto_program_hid(p) != cmd->args[0].scalar) {
    /* Another build at that path (a host that is not rank 0's): not the program rank 0 runs. */
    pto_program_release(p);
    p = NULL;
    s = pto_status_make(PTO_STATUS_NOT_FOUND, "another build");
  }
  if (s && dir != cmd->path && cs->nslots < 256) {
    /* A copy that does not load here (rank 0's, on another host, or another build there): the
     * work dir, without the lines; only messages lose by it. */
    pto_status_free(s);
    dir = cmd->path;
    s = pto_program_load_dir(dir, &p);
  }
  if (!s) s = pto_worker_register(cs->wk, p, &hd);
  atomic_fetch_sub_explicit(&c->waiting, 1, memory_order_relaxed);
  if (s) {
    char head[PTO__DIST_MSG];
    snprintf(head, sizeof head, "rank %d: loading %s: %s", cs->rank, dir, pto_status_message(s));
    chip_fail_cmd(cs->sh, c, seq, 0, head, NULL);
    pto_status_free(s);
    if (p) pto_program_release(p);
    atomic_store(&c->last_slot, -1);
  } else {
    cs->slots[cs->nslots].p = p;
    cs->slots[cs->nslots].h = hd;
    atomic_store(&c->last_slot, cs->nslots++);
  }
}

/* Takes command t of chip c to run: 1 unless another thread has (the host, or the chip's own
 * thread, chips "threads"). Commands run in order, one at a time: t is taken only once command
 * t - 1 has finished (tail == t), so taken is tail or tail + 1. */
static int take_cmd(pto__dist_chip *c, uint32_t t) {
  uint32_t expect = t;
  return atomic_compare_exchange_strong(&c->taken, &expect, t + 1);
}

/* Command t of chip c has finished: tail moves on and whoever waits for it is woken (chips
 * waiting on a dependency always; the host once tail reaches what it waits for). */
static void finish_cmd(pto__dist_chip *c, uint32_t t) {
  atomic_store_explicit(&c->ring_cpu, this_cpu(), memory_order_relaxed);
  atomic_store_explicit(&c->tail, t + 1, memory_order_seq_cst);
  if (atomic_load_explicit(&c->tail_sleepers, memory_order_seq_cst) ||
      (atomic_load_explicit(&c->host_sleepers, memory_order_seq_cst) &&
       (int32_t)(t + 1 - atomic_load_explicit(&c->host_want, memory_order_seq_cst)) >= 0))
    pto__dist_futex_wake(&c->tail);
}

/* Runs command t of cs's chip, taken (take_cmd), on this thread: the chip's own, or the host's
 * (host_run_chip). While it runs, ring_cpu names this CPU: a waiter there does not spin. PUT and
 * GET need nothing here: rank 0's chip shares the host's heap. */
static void run_cmd(chip_state *cs, uint32_t t) {
  pto__dist_chip *c = cs->c;
  atomic_store_explicit(&c->ring_cpu, this_cpu(), memory_order_relaxed);
  chip_exec(cs, &c->ring[t % PTO__DIST_RING], t);
  finish_cmd(c, t);
}

/* A forked chip and its host on one CPU take turns at every call: a post wakes the chip, its
 * reply lets the host run again, two thread switches a one-call run, and neither spins
 * (ring_spin), even where another CPU is idle (issue #31 item 2). The chip starts on its parent's
 * CPU (fork), and the scheduler leaves the two there: only one of them is ever runnable, so the
 * load balancer sees nothing to move, and a sleeper woken by its peer lands on the waker's CPU
 * (this VM kind reports no cache topology). So a chip that finds the host's last post on its own
 * CPU as it goes idle moves itself to another CPU it may run on (a migration, not a pin: its
 * affinity mask is put back at once), at most once per PTO__DIST_UNSTACK_NS: apart, both sides
 * spin through a one-call run. Where the CPU it moved to is wanted by another process, its spin
 * there may lose the CPU (ring_spin's preempted); then it does not move again for
 * PTO__DIST_UNSTACK_OFF_NS (a wake-up may put it back beside the host meanwhile). Measured on a
 * 2-CPU Zen 4 KVM guest loaded by other processes (load 6-10), dist_overhead's one-call run
 * alternated with the code before, median of the single runs: 2 ranks beside one busy loop
 * 7.2-8.1 us in 12 of 12 runs before, 1.7-3.2 us in 12 of 12 with a 20 ms back-off; a 1 s
 * back-off stayed beside the host for good in 4 of 12 (8.0 us), none 12 of 12 (1.8-3.2 us); the
 * means were no worse apart (2.0-10.8 us against 7.5-20.6: a turn-taking pair loses slices to
 * the busy loop too). Calls streamed to a chip apart need the host to spin on while the chip
 * works through them (wait_tail), else they were less steady than on one CPU (bench/RESULTS.md,
 * round 24). */
#ifndef PTO__DIST_UNSTACK /* build with -DPTO__DIST_UNSTACK=0 to measure without it */
#define PTO__DIST_UNSTACK 1
#endif
#ifndef PTO__DIST_UNSTACK_NS
#define PTO__DIST_UNSTACK_NS 1000000ull
#endif
#ifndef PTO__DIST_UNSTACK_OFF_NS
#define PTO__DIST_UNSTACK_OFF_NS 20000000ull
#endif
static void chip_unstack(chip_state *cs, int host) {
  uint64_t now = pto__rt_now_ns();
  if (now < cs->unstack_after) return;
  cs->unstack_after = now + PTO__DIST_UNSTACK_NS;
  cpu_set_t mask, one;
  if (sched_getaffinity(0, sizeof mask, &mask) || CPU_COUNT(&mask) < 2) {
    cs->unstack_after = now + PTO__DIST_UNSTACK_OFF_NS; /* one CPU: nowhere to go for now */
    return;
  }
  /* The (rank mod n)-th of the n CPUs other than the host's: chips spread over them. */
  int n = CPU_COUNT(&mask) - (CPU_ISSET(host - 1, &mask) ? 1 : 0);
  for (int cpu = 0, k = cs->rank % n; cpu < CPU_SETSIZE; cpu++) {
    if (!CPU_ISSET(cpu, &mask) || cpu == host - 1 || k--) continue;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (!sched_setaffinity(0, sizeof one, &one)) {
      (void)sched_setaffinity(0, sizeof mask, &mask);
      atomic_fetch_add_explicit(&cs->c->unstacks, 1, memory_order_relaxed);
    }
    return;
  }
}

/* Serves the chip's ring until EXIT; parent > 0: a forked chip, which exits when its parent
 * has gone. It looks for its parent after a sleep that ended without a post (a 100 ms slice),
 * not at each sleep: on a shared CPU a one-call run puts the chip to sleep once a run, and the
 * watcher (chip_watch) ends the chip at once anyway. */
static void chip_loop(chip_state *cs, pid_t parent) {
  pto__dist_chip *c = cs->c;
  for (;;) {
    uint32_t t = atomic_load_explicit(&c->tail, memory_order_relaxed);
    /* Idle: spin while the host runs on another CPU (ring_spin: its next post comes within
     * microseconds when it streams calls), then sleep. A forked chip on the host's CPU first
     * moves off it where it may (chip_unstack). */
    if (atomic_load_explicit(&c->head, memory_order_acquire) == t && !cs->sh->mpi) {
      int host = atomic_load_explicit(&cs->sh->host_cpu, memory_order_relaxed), lost = 0;
      if (PTO__DIST_UNSTACK && parent > 0 && host == this_cpu()) chip_unstack(cs, host);
      ring_spin(cs->sh, &c->head, t, host, parent > 0 ? &lost : NULL);
      if (lost) cs->unstack_after = pto__rt_now_ns() + PTO__DIST_UNSTACK_OFF_NS;
    }
    while (atomic_load_explicit(&c->head, memory_order_acquire) == t) {
      ring_sleep(&c->head, t, &c->head_sleepers, 100000);
      if (parent > 0 && atomic_load_explicit(&c->head, memory_order_acquire) == t &&
          getppid() != parent)
        _exit(1);
    }
    if (!take_cmd(c, t)) { /* the host runs it (chips "threads"): wait until it has */
      while (atomic_load_explicit(&c->tail, memory_order_acquire) == t)
        ring_sleep(&c->tail, t, &c->tail_sleepers, 100000);
      continue;
    }
    if (c->ring[t % PTO__DIST_RING].op == PTO__DIST_CMD_EXIT) break;
    run_cmd(cs, t);
  }
}

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static int pidfd_open_(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

typedef struct chip_watch_args {
  pto__dist_chip *c;
  pid_t parent;
  pthread_mutex_t mu; /* guards wk: the chip's worker while it is open, else NULL */
  pto_worker *wk;
} chip_watch_args;

/* At each beat: stamps the chip's progress (pto__dist_chip.progress_ns) when it has no command
 * to run, is inside a wait, or has completed a task, entered a wait or finished a command since
 * the last beat; counts the beats that saw a task completed (ntaskbeats: progress for the peers'
 * waits); and names the kernel that has run longest on one of its cores. */
static void watch_progress(pto__dist_chip *c, pto_worker *wk, chip_seen *seen) {
  uint64_t done = 0, t0 = 0;
  const pto_program *prog = NULL;
  int k = -1;
  if (wk) pto__rt_worker_activity(wk, &done, &prog, &k, &t0);
  const char *name = k >= 0 && prog ? pto_program_kernel_name(prog, k) : NULL;
  if (k >= 0) snprintf(c->kernel, sizeof c->kernel, "%s", name ? name : "?");
  atomic_store(&c->kernel_ns, k >= 0 ? t0 : 0);
  uint32_t tail = atomic_load(&c->tail), nwaits = atomic_load(&c->nwaits);
  if (atomic_load(&c->head) == tail || atomic_load(&c->waiting) || done != seen->done ||
      tail != seen->tail || nwaits != seen->nwaits)
    atomic_store(&c->progress_ns, pto__rt_now_ns());
  if (done != seen->done) atomic_fetch_add_explicit(&c->ntaskbeats, 1, memory_order_relaxed);
  *seen = (chip_seen){done, tail, nwaits};
}

/* A chip's watcher thread: beats the chip's heartbeat, and ends the chip when its parent process
 * has gone. It watches the process (a pidfd; getppid where the kernel has none), not the thread
 * that forked the chip: a parent-death signal would come when that thread exits, and a worker
 * opened on a thread that ended would lose every chip. */
static void *chip_watch(void *arg) {
  chip_watch_args *a = arg;
  int fd = pidfd_open_(a->parent);
  chip_seen seen = {0};
  for (;;) {
    if (getppid() != a->parent) _exit(1);
    pthread_mutex_lock(&a->mu);
    watch_progress(a->c, a->wk, &seen);
    pthread_mutex_unlock(&a->mu);
    atomic_fetch_add(&a->c->beat, 1);
    if (fd >= 0) {
      struct pollfd p = {.fd = fd, .events = POLLIN};
      if (poll(&p, 1, PTO__DIST_BEAT_MS) > 0) _exit(1); /* readable: the parent has exited */
    } else {
      struct timespec ts = {0, PTO__DIST_BEAT_MS * 1000000L};
      nanosleep(&ts, NULL);
    }
  }
  return NULL;
}

static void chip_main(pto__dist_shared *sh, int rank, const pto_dist_config *cfg, pid_t parent) {
  pto__dist_chip *c = &sh->chips[rank];
  /* Nothing that can end this process before the parent holds its pidfd: the pid cannot be
   * reaped (and reused) under the parent's pidfd_open, even where SIGCHLD is ignored. */
  while (!atomic_load(&c->go)) {
    if (getppid() != parent) _exit(1);
    pto__dist_futex_wait(&c->go, 0, 100000);
  }
  static chip_watch_args wa;
  wa.c = c;
  wa.parent = parent;
  pthread_mutex_init(&wa.mu, NULL);
  atomic_store(&c->progress_ns, pto__rt_now_ns());
  pthread_t watcher;
  if (pthread_create(&watcher, NULL, chip_watch, &wa) == 0) pthread_detach(watcher);
  c->pid = (int32_t)getpid();
  static chip_state cs;
  if (chip_open(&cs, sh, rank, cfg)) {
    atomic_store(&c->state, 2);
    pto__dist_futex_wake(&c->state);
    _exit(1);
  }
  pthread_mutex_lock(&wa.mu);
  wa.wk = cs.wk;
  pthread_mutex_unlock(&wa.mu);
  atomic_store(&c->state, 1);
  pto__dist_futex_wake(&c->state);
  chip_loop(&cs, parent);
  pthread_mutex_lock(&wa.mu);
  wa.wk = NULL;
  pthread_mutex_unlock(&wa.mu);
  chip_close(&cs);
  atomic_store(&c->state, 3);
  _exit(0);
}

/* A chip on a thread of the host's process: MPI rank 0's (no fork under MPI), or any chip of a
 * one-host worker with chips "threads". It serves its ring as a forked chip does; it has no
 * watcher: it cannot die or stop alone, and the host looks at its progress itself (check_chips).
 * c->pid is the host's. */
typedef struct chip_thread_args {
  chip_state *cs;
  pto__dist_shared *sh;
  int rank;
  pto_dist_config cfg;
} chip_thread_args;

static void *chip_thread_main(void *arg) {
  chip_thread_args *a = arg;
  pto__dist_chip *c = &a->sh->chips[a->rank];
  if (chip_open(a->cs, a->sh, a->rank, &a->cfg)) {
    atomic_store(&c->state, 2);
    pto__dist_futex_wake(&c->state);
    free(a);
    return NULL;
  }
  a->cs->tid = (int)gettid(); /* read by the host once state is 1 */
  atomic_store(&c->state, 1);
  pto__dist_futex_wake(&c->state);
  chip_loop(a->cs, 0);
  chip_close(a->cs);
  atomic_store(&c->state, 3);
  free(a);
  return NULL;
}

/* Starts rank's chip thread (chip_thread_main); its state is w->chip_st[rank]. */
static pto_status start_chip_thread(dworker *w, int rank, const pto_dist_config *cfg) {
  chip_thread_args *a = pto_calloc(1, sizeof *a);
  w->chip_st[rank] = pto_malloc(sizeof *w->chip_st[rank]);
  if (!a || !w->chip_st[rank]) {
    free(a);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "pto_dist_worker_open: out of memory");
  }
  a->cs = w->chip_st[rank];
  a->sh = w->sh;
  a->rank = rank;
  a->cfg = *cfg;
  w->sh->chips[rank].pid = (int32_t)getpid();
  atomic_store(&w->sh->chips[rank].progress_ns, pto__rt_now_ns());
  int e = pthread_create(&w->chip_thr[rank], NULL, chip_thread_main, a);
  if (e) {
    free(a);
    return pto_status_make(PTO_STATUS_INTERNAL,
                           "pto_dist_worker_open: starting rank %d's chip thread: %s", rank,
                           strerror(e));
  }
  w->chip_thr_started[rank] = 1;
  return PTO_OK;
}

/* ---- the parent: chips ------------------------------------------------------------------ */

static void describe_exit(char *buf, size_t n, int status) {
  if (WIFSIGNALED(status))
    snprintf(buf, n, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  else
    snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
}

/* How an exited chip ended, from its pidfd (reaping it); 0 if it has not exited. */
static int chip_exited(int pidfd, char *how, size_t n) {
  struct pollfd p = {.fd = pidfd, .events = POLLIN};
  if (poll(&p, 1, 0) <= 0) return 0;
  siginfo_t si;
  memset(&si, 0, sizeof si);
  if (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG) != 0 || !si.si_pid)
    snprintf(how, n,
             "exited (its status is unknown: this process ignores SIGCHLD, so it was "
             "reaped by the kernel)");
  else if (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED)
    snprintf(how, n, "killed by signal %d (%s)", si.si_status, strsignal(si.si_status));
  else
    snprintf(how, n, "exited with status %d", si.si_status);
  return 1;
}

static void mark_broken(dworker *w, int r, const char *how) {
  pto__dist_chip *c = &w->sh->chips[r];
  char who[48];
  if (w->threads)
    snprintf(who, sizeof who, "a thread of this process");
  else
    snprintf(who, sizeof who, "pid %d", (int)c->pid);
  snprintf(w->why, sizeof w->why,
           "chip rank %d (device %d, %s) %s; the distributed worker is unusable: close it "
           "and open another",
           r, (int)w->ids[r], who, how);
  w->broken = 1;
}

/* The state letter of a /proc stat file ('R', 'S', 'T' stopped, 't' traced, ...), or '?'. */
static char stat_state(const char *path) {
  char buf[512];
  FILE *f = fopen(path, "r");
  if (!f) return '?';
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *e = strrchr(buf, ')'); /* after the command name, which may hold anything */
  return e && e[1] == ' ' && e[2] ? e[2] : '?';
}

/* The state letter of /proc/<pid>/stat, as stat_state. */
static char proc_state(int pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  return stat_state(path);
}

/* Adds one thread's CPU time and run-queue wait (ns) to *cpu and *wait, from Linux's schedstat
 * in the thread's folder dir ("on-CPU ns, run-queue wait ns, timeslices"), and sets *runnable
 * when its stat says running or runnable ('R'); -1 where schedstat cannot be read. */
static int add_schedstat(const char *dir, uint64_t *wait, uint64_t *cpu, int *runnable) {
  char buf[96], path[128];
  snprintf(path, sizeof path, "%s/stat", dir);
  if (stat_state(path) == 'R') *runnable = 1;
  snprintf(path, sizeof path, "%s/schedstat", dir);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t got = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (got <= 0) return -1;
  buf[got] = '\0';
  unsigned long long on = 0, rq = 0;
  if (sscanf(buf, "%llu %llu", &on, &rq) != 2) return -1;
  *cpu += on;
  *wait += rq;
  return 0;
}

/* The time chip r's threads have waited runnable for a CPU, and have run, summed (ns), and
 * whether one of them is running or runnable now (*runnable): a forked chip's every thread
 * (/proc/PID/task), a chip on a thread of this process that thread and its worker's cores. 0, or
 * -1 where /proc cannot tell (the stall check then counts the wall clock alone). */
static int chip_sched(dworker *w, int r, uint64_t *wait, uint64_t *cpu, int *runnable) {
  char path[64], tpath[96];
  *wait = *cpu = 0;
  *runnable = 0;
  if (w->threads) {
    const chip_state *cs = w->chip_st[r];
    int tids[65];
    tids[0] = cs->tid;
    int n = 1 + (cs->wk ? pto__rt_worker_core_tids(cs->wk, tids + 1, 64) : 0);
    for (int i = 0; i < n; i++) {
      snprintf(tpath, sizeof tpath, "/proc/self/task/%d", tids[i]);
      if (add_schedstat(tpath, wait, cpu, runnable)) return -1;
    }
    return 0;
  }
  snprintf(path, sizeof path, "/proc/%d/task", (int)w->sh->chips[r].pid);
  DIR *d = opendir(path);
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    snprintf(tpath, sizeof tpath, "%s/%.16s", path, e->d_name);
    if (!add_schedstat(tpath, wait, cpu, runnable)) n++; /* one that has just ended: left out */
  }
  closedir(d);
  return n ? 0 : -1;
}

/* With an explicit wait deadline (w->progress_ms): whether chip r, running (its beat seen lately,
 * not stopped) with a command to finish, has made no progress for that long; how then says so
 * and names the kernel it runs. A chip that does not run at all is the heartbeat's case.
 *
 * Progress counts from the latest of the chip's own stamp (its watcher's beat: a task completed,
 * a wait entered, a command finished, no command), what this check sees itself (a command
 * finished, a wait entered or inside one: fresher than the beat) and the post that gave an idle
 * chip work (post). Time the chip was runnable but got no CPU (beside busy processes on a loaded
 * host) is not its fault and does not count: from the first check a quarter of the deadline
 * after that progress (a chip that progresses costs no reads), the chip's threads' run-queue
 * wait (Linux schedstat) is taken off, but never more than the time none of them ran (all of
 * it while one of them is runnable), so a kernel spinning in an endless loop is caught once its
 * CPU time reaches the deadline, and a chip asleep for good (waiting on nothing) by the wall
 * clock. */
static int stalled(dworker *w, int r, uint64_t now, char *how, size_t n) {
  pto__dist_chip *c = &w->sh->chips[r];
  if (!w->progress_ms || c->pid <= 0 || atomic_load(&c->head) == atomic_load(&c->tail)) return 0;
  stall_look *l = &w->look[r];
  uint32_t tail = atomic_load(&c->tail), nwaits = atomic_load(&c->nwaits);
  if (tail != l->tail || nwaits != l->nwaits || atomic_load(&c->waiting)) {
    l->tail = tail;
    l->nwaits = nwaits;
    l->at = now;
  }
  uint64_t from = atomic_load(&c->progress_ns), limit = (uint64_t)w->progress_ms * 1000000ull;
  if (l->at > from) from = l->at;
  if (!from || now < from) return 0;
  if (now - from <= limit / 4) return 0; /* no /proc reads for a chip that progresses */
  if (l->base_from != from) { /* the first check that far past it: the chip's clocks now */
    l->base_from = from;
    l->base_at = now;
    int runnable;
    l->base_ok = !chip_sched(w, r, &l->base_wait, &l->base_cpu, &runnable);
  }
  if (now - from <= limit) return 0;
  if (!w->threads) { /* a process: running, not stopped (a thread stops only with the host) */
    if (now - w->beat_at[r] > 3ull * PTO__DIST_BEAT_MS * 1000000ull) return 0;
    char st = proc_state(c->pid);
    if (st == 'T' || st == 't') return 0;
  }
  uint64_t wait, cpu;
  int runnable;
  if (l->base_ok && now > l->base_at && !chip_sched(w, r, &wait, &cpu, &runnable)) {
    uint64_t span = now - l->base_at;
    uint64_t waited = wait > l->base_wait ? wait - l->base_wait : 0;
    uint64_t ran = cpu > l->base_cpu ? cpu - l->base_cpu : 0;
    uint64_t idle = span > ran ? span - ran : 0; /* at most the time none of its threads ran */
    /* Linux adds a wait to schedstat when it ends (the thread gets a CPU): a thread runnable now
     * may have waited since long before this look (beside busy processes, hundreds of ms), and
     * that wait is not in waited yet. A chip with a runnable thread is then charged its CPU time
     * alone, as a kernel spinning for good is (caught once its CPU time reaches the deadline). */
    uint64_t off = runnable ? idle : waited < idle ? waited : idle;
    if (now - from - off <= limit) return 0;
  }
  int len = snprintf(how, n,
                     "has made no progress for %u ms (PTO_DIST_TIMEOUT_MS: no task completed, no "
                     "wait entered)",
                     w->progress_ms);
  uint64_t k0 = atomic_load(&c->kernel_ns);
  if (len > 0 && (size_t)len < n) {
    if (k0 && now > k0)
      snprintf(how + len, n - (size_t)len, ": it has been running kernel @%s for %llu ms",
               c->kernel, (unsigned long long)((now - k0) / 1000000ull));
    else
      snprintf(how + len, n - (size_t)len, ": no kernel is running (its orchestration is)");
  }
  return 1;
}

/* Chips on threads (chips "threads"): none can die or stop alone, so only the progress bound
 * applies (with an explicit deadline), and the host takes the watcher's part: it looks at each
 * serving chip's activity itself at every check. */
static int check_chip_threads(dworker *w) {
  if (!w->progress_ms) return 0;
  uint64_t now = pto__rt_now_ns();
  for (int r = 0; r < w->n; r++) {
    pto__dist_chip *c = &w->sh->chips[r];
    if (atomic_load(&c->state) != 1) continue; /* its worker is open only while it serves */
    watch_progress(c, w->chip_st[r]->wk, &w->seen[r]);
    char how[384];
    if (stalled(w, r, now, how, sizeof how)) {
      mark_broken(w, r, how);
      return 1;
    }
  }
  return 0;
}

/* Marks the worker broken if a chip has died, or its heartbeat has stopped for longer than the
 * wait deadline (a chip stopped by a signal or a debugger), or, with an explicit deadline, it
 * has made no progress for that long (stalled); returns 1 then. */
static int check_chips(dworker *w) {
  if (w->broken) return 1;
  if (w->threads) return check_chip_threads(w);
  uint64_t now = pto__rt_now_ns();
  uint64_t stall_ms =
      w->sh->timeout_ms > PTO__DIST_MIN_STALL_MS ? w->sh->timeout_ms : PTO__DIST_MIN_STALL_MS;
  if (w->mpi) {
    /* No children: MPI's runtime reports (and ends) a job whose rank died. A rank that lives
     * but is not heard from (stopped by a signal or a debugger, its host or link gone) would
     * leave this wait for ever: its beats stop, and it is given up after stall_ms. */
    for (int r = 1; r < w->n; r++) {
      if (atomic_load(&w->sh->chips[r].state) != 1) continue;
      uint64_t silent = pto__dist_mpi_silent_ms(w->mpi, r);
      if (silent <= stall_ms) continue;
      char how[384];
      snprintf(how, sizeof how,
               "has not been heard from over MPI for %llu ms (stopped by a signal or a debugger, "
               "or its host or link is gone)",
               (unsigned long long)silent);
      mark_broken(w, r, how);
      pto__dist_mpi_give_up(w->mpi, r);
      return 1;
    }
    return 0;
  }
  for (int r = 0; r < w->n; r++) {
    pto__dist_chip *c = &w->sh->chips[r];
    char how[384];
    int status, dead = 0;
    if (w->pidfd[r] >= 0) {
      dead = chip_exited(w->pidfd[r], how, sizeof how);
    } else if (c->pid > 0 && waitpid(c->pid, &status, WNOHANG) == c->pid) {
      describe_exit(how, sizeof how, status);
      dead = 1;
    }
    if (dead) {
      mark_broken(w, r, how);
      if (w->pidfd[r] >= 0) close(w->pidfd[r]);
      w->pidfd[r] = -1;
      c->pid = -1;
      atomic_store(&c->state, 3);
      return 1;
    }
    uint32_t beat = atomic_load(&c->beat);
    if (beat != w->beat_seen[r] || !w->beat_at[r]) {
      w->beat_seen[r] = beat;
      w->beat_at[r] = now;
    } else if (c->pid > 0 && now - w->beat_at[r] > stall_ms * 1000000ull) {
      char st = proc_state(c->pid);
      snprintf(how, sizeof how, "has not run for %llu ms (%s)", (unsigned long long)stall_ms,
               st == 'T' || st == 't' ? "stopped by a signal or a debugger"
                                      : "its heartbeat stopped");
      mark_broken(w, r, how);
      return 1;
    }
    if (stalled(w, r, now, how, sizeof how)) {
      mark_broken(w, r, how);
      return 1;
    }
  }
  return 0;
}

/* Whether chip r has ended (and is reaped), by its pidfd or, without one, waitpid. */
static int chip_gone(dworker *w, int r) {
  pto__dist_chip *c = &w->sh->chips[r];
  if (c->pid <= 0) return 1;
  int status;
  if (w->pidfd[r] >= 0) {
    char how[160];
    return chip_exited(w->pidfd[r], how, sizeof how);
  }
  pid_t got = waitpid(c->pid, &status, WNOHANG);
  return got == c->pid || (got < 0 && errno == ECHILD);
}

/* close: every chip has been told to exit; waits for them all under one deadline (not one per
 * chip), then kills those left through their pidfds, which name them and nothing else (a bare
 * pid may have been reused by then: without a pidfd a chip is killed only while it is still our
 * unreaped child), and reaps them, within a second deadline. */
static void reap_chips(dworker *w) {
  /* A broken worker's chips may be stopped or stuck: they get less time. */
  uint64_t t0 = pto__rt_now_ns(), grace = w->broken ? 1000000000ull : 5000000000ull;
  uint64_t hard = grace + 5000000000ull;
  int killed = 0;
  for (;;) {
    int left = 0;
    for (int r = 0; r < w->n; r++) {
      if (w->sh->chips[r].pid <= 0) continue;
      if (chip_gone(w, r)) {
        w->sh->chips[r].pid = -1;
        continue;
      }
      left++;
      if (killed || pto__rt_now_ns() - t0 < grace) continue;
      if (w->pidfd[r] >= 0)
        syscall(SYS_pidfd_send_signal, w->pidfd[r], SIGKILL, NULL, 0);
      else
        kill(w->sh->chips[r].pid, SIGKILL); /* unreaped (chip_gone said so): still ours */
    }
    if (!left || pto__rt_now_ns() - t0 > hard) break;
    killed = pto__rt_now_ns() - t0 >= grace;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  for (int r = 0; r < w->n; r++) {
    if (w->pidfd[r] >= 0) close(w->pidfd[r]);
    w->pidfd[r] = -1;
  }
}

/* close of chips on threads: each has been told to exit (or never started serving); joins them
 * under one deadline, as reap_chips waits for processes. A thread cannot be killed: one still
 * running at the deadline (stuck in a kernel) is left running, on the worker's shared regions
 * and its chip state, which then stay allocated (leaked_chips), and stderr says so. */
static void join_chip_threads(dworker *w) {
  uint64_t grace = w->broken ? 1000000000ull : 5000000000ull;
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += (time_t)(grace / 1000000000ull);
  for (int r = 0; r < w->n; r++) {
    if (!w->chip_thr_started[r]) continue;
    int e = pthread_timedjoin_np(w->chip_thr[r], NULL, &dl);
    if (e == 0) {
      w->chip_thr_started[r] = 0;
      continue;
    }
    pthread_detach(w->chip_thr[r]);
    w->chip_thr_started[r] = 0;
    w->leaked_chips = 1;
    fprintf(stderr,
            "pto_dist_worker_close: chip rank %d (a thread of this process) did not end within "
            "%llu ms (%s%s); it is left running, and the worker's memory stays allocated\n",
            r, (unsigned long long)(grace / 1000000ull),
            atomic_load(&w->sh->chips[r].kernel_ns) ? "running kernel @" : "not in a kernel",
            atomic_load(&w->sh->chips[r].kernel_ns) ? w->sh->chips[r].kernel : "");
  }
}

static pto_status not_root(const dworker *w, const char *fn) {
  return pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                         "%s: this process is MPI rank %d, which served rank 0's chip commands "
                         "until rank 0 closed the worker; only rank 0 runs host programs and owns "
                         "tensors (see pto_dist_worker_is_root)",
                         fn, w->rank);
}

static pto_status broken(const dworker *w) {
  return pto_status_make(PTO_STATUS_FAILED_PRECONDITION, "%s", w->why);
}

/* Chips "threads" (issue #31 item 2): a one-call run is a post that wakes the chip's thread and
 * a reply that wakes the host's, two thread switches, each microseconds on a loaded host. Where
 * the chip's thread sleeps, the host need not wake it: the chip's state is in this process, so
 * the host runs the chip's commands itself when it waits for them, and no thread switches. The
 * post to a sleeping chip's thread leaves it asleep (w->deferred); a post to another chip, or a
 * wait for another chip, wakes it first (flush_deferred), so every command but those of the
 * last chip posted to is served by its thread as before, and what those last commands depend on
 * or wait for (a collective's other ranks) runs meanwhile. Not with an explicit wait deadline,
 * whose stall check watches a chip from the host. Build with -DPTO__DIST_HOST_RUNS=0 to measure
 * chip threads without it. */
#ifndef PTO__DIST_HOST_RUNS
#define PTO__DIST_HOST_RUNS 1
#endif
static void flush_deferred(dworker *w) {
  if (!w->deferred) return;
  pto__dist_chip *c = &w->sh->chips[w->deferred - 1];
  w->deferred = 0;
  ring_wake(&c->head, &c->head_sleepers);
}

/* The host runs chip r's commands until tail >= seq; stops where the chip's thread has taken
 * one (it woke on its own). With none left, nothing waits for the thread to be woken: a later
 * post to another chip then does not wake it for nothing. */
static void host_run_chip(dworker *w, int r, uint32_t seq) {
  pto__dist_chip *c = &w->sh->chips[r];
  for (;;) {
    uint32_t t = atomic_load_explicit(&c->tail, memory_order_acquire);
    if ((int32_t)(t - seq) >= 0) {
      if (t == atomic_load_explicit(&c->head, memory_order_relaxed)) w->deferred = 0;
      return;
    }
    if (!take_cmd(c, t)) {
      w->deferred = 0;
      return;
    }
    pto__rt_set_strace_rank(r);
    run_cmd(w->chip_st[r], t);
    pto__rt_set_strace_rank(-1);
  }
}

/* Waits until chip r has finished command seq - 1 (tail >= seq): runs them itself where r's
 * thread was left asleep (host_run_chip), else spins (ring_spin) for as long as the chip finishes
 * a command within each spin, then sleeps in slices, checking the chips' liveness after each
 * slice that ended without the reply. A spin that ended at the chip's first finished command put
 * the host to sleep through the rest of a stream, to be woken onto a CPU other processes may hold
 * (dist_overhead, 64 calls a run, chips apart, load 18: 1.9-77 us a call, 1.3-1.4 spinning on). */
static pto_status wait_tail(dworker *w, int r, uint32_t seq) {
  pto__dist_chip *c = &w->sh->chips[r];
  if (w->deferred && (int32_t)(atomic_load_explicit(&c->tail, memory_order_acquire) - seq) < 0) {
    if (w->deferred == r + 1)
      host_run_chip(w, r, seq);
    else
      flush_deferred(w); /* r may wait for the deferred chip's commands */
  }
  /* Spins again (a new budget) at each command the chip finishes before seq. */
  uint32_t t0 = atomic_load_explicit(&c->tail, memory_order_acquire);
  while ((int32_t)(t0 - seq) < 0 && !w->mpi &&
         ring_spin(w->sh, &c->tail, t0, atomic_load_explicit(&c->ring_cpu, memory_order_relaxed),
                   NULL))
    t0 = atomic_load_explicit(&c->tail, memory_order_acquire);
  for (int i = 0;; i++) {
    uint32_t t = atomic_load_explicit(&c->tail, memory_order_acquire);
    if ((int32_t)(t - seq) >= 0) return PTO_OK;
    if (i && check_chips(w)) return broken(w);
    /* Woken once the chip reaches seq, not at each command before it (chip_loop). */
    atomic_store_explicit(&c->host_want, seq, memory_order_seq_cst);
    ring_sleep(&c->tail, t, &c->host_sleepers, 20000);
  }
}

/* The bytes of cmd its chip reads: a RUN's arguments past nargs are not copied into the ring (a
 * slot is 3.6 KiB, most of it the LOAD's path and 32 arguments; a 3-argument RUN is 0.5 KiB). */
static size_t cmd_bytes(const pto__dist_cmd *cmd) {
  if (cmd->op != PTO__DIST_CMD_RUN || cmd->nargs < 0 || cmd->nargs > PTO__DIST_MAX_ARGS)
    return sizeof *cmd;
  return offsetof(pto__dist_cmd, args) + (size_t)cmd->nargs * sizeof cmd->args[0];
}

static pto_status post(dworker *w, int r, const pto__dist_cmd *cmd, uint32_t *out_seq) {
  pto__dist_chip *c = &w->sh->chips[r];
  uint32_t h = atomic_load_explicit(&c->head, memory_order_relaxed);
  /* A full ring: wait until half of it is free, so a host that streams calls to a chip on its
   * own CPU is woken once per half ring, not once per command. */
  if ((int32_t)(h - atomic_load_explicit(&c->tail, memory_order_acquire)) >= PTO__DIST_RING)
    PTO_RETURN_IF_ERROR(wait_tail(w, r, h - PTO__DIST_RING / 2 + 1));
  memcpy(&c->ring[h % PTO__DIST_RING], cmd, cmd_bytes(cmd));
  /* An idle chip's progress stamp is as old as its watcher's last beat: its work starts now. */
  if (w->progress_ms && h == atomic_load_explicit(&c->tail, memory_order_relaxed))
    w->look[r].at = pto__rt_now_ns();
  if (!w->mpi) atomic_store_explicit(&w->sh->host_cpu, this_cpu(), memory_order_relaxed);
  atomic_store_explicit(&c->head, h + 1, memory_order_seq_cst);
  if (w->deferred != r + 1) {
    flush_deferred(w);
    if (w->host_runs && atomic_load_explicit(&c->head_sleepers, memory_order_seq_cst))
      w->deferred = r + 1;
    else
      ring_wake(&c->head, &c->head_sleepers);
  }
  if (w->mpi) {
    atomic_fetch_add(&w->sh->bell, 1);
    pto__dist_futex_wake(&w->sh->bell);
  }
  if (out_seq) *out_seq = h + 1; /* done once tail >= h + 1 */
  return PTO_OK;
}

/* Waits for every chip to finish what was posted; reports the first failed command. */
/* The run in progress, as chips know it: from 1, never 0. */
static uint32_t run_epoch(const dworker *w) { return (uint32_t)(w->nruns % 0xffffffffu) + 1; }

/* A chip's failed command as code: a failed call of a run is a launch error (PTO_STATUS_LAUNCH, as
 * on one chip); a failed load or copy is internal. */
static pto_status drain_as(dworker *w, pto_status_code code) {
  if (w->deferred) /* first: a wait for another chip would wake its thread */
    PTO_RETURN_IF_ERROR(
        wait_tail(w, w->deferred - 1, atomic_load(&w->sh->chips[w->deferred - 1].head)));
  for (int r = 0; r < w->n; r++)
    PTO_RETURN_IF_ERROR(wait_tail(w, r, atomic_load(&w->sh->chips[r].head)));
  /* The rank that raised the run's abort failed first (under MPI the answers of remote chips
   * arrive in any order); else the first failure on the fail clock. The others (a wait aborted
   * because of it, say) follow it as context. */
  int first = pto__dist_abort_first(w->sh, 0, run_epoch(w));
  if (first >= 0 && (first >= w->n || !atomic_load(&w->sh->chips[first].failed))) first = -1;
  for (int r = 0; first < 0 && r < w->n; r++)
    if (atomic_load(&w->sh->chips[r].failed) &&
        (first < 0 || w->sh->chips[r].fail_at < w->sh->chips[first].fail_at))
      first = r;
  if (first < 0) return PTO_OK;
  pto_text t = {0};
  pto_text_puts(&t, w->sh->chips[first].msg);
  for (int r = 0; r < w->n; r++)
    if (r != first && atomic_load(&w->sh->chips[r].failed))
      pto_text_printf(&t, "; then %s", w->sh->chips[r].msg);
  for (int q = 0; q < w->n; q++)
    atomic_store(&w->sh->chips[q].failed, 0);
  char *m = pto_text_finish(&t);
  pto_status s = pto_status_make(code, "%s", m ? m : w->sh->chips[first].msg);
  free(m);
  return s;
}

static pto_status drain(dworker *w) { return drain_as(w, PTO_STATUS_INTERNAL); }

/* Under MPI every rank opens: rank 0 gets the worker that runs host programs; the others serve
 * their chip's commands here until rank 0 closes it, then return a worker that only closes. */
static pto_status open_mpi(dworker *w, const pto_dist_config *cfg) {
  static const char fn[] = "pto_dist_worker_open";
  char err[PTO__DIST_MSG];
  uint64_t arena = cfg->window_bytes;
  int64_t env_arena;
  static const char *const k_windows[] = {"shared", "separate"};
  int windows;
  pto_status es =
      pto_env_int("PTO_DIST_WINDOW_BYTES", 4096, PTO__DIST_MAX_WINDOW_BYTES, 64 << 20, &env_arena);
  if (!es) es = pto_env_choice("PTO_MPI_WINDOWS", k_windows, 2, -1, &windows);
  if (es) return pto_status_annotate(es, "%s", fn);
  if (!arena) arena = (uint64_t)env_arena;
  arena = (arena + 4095) & ~4095ull;
  int rank = 0, size = 0;
  if (pto__dist_mpi_open(arena, windows < 0 ? NULL : k_windows[windows], cfg->wait_timeout_ms, w->n,
                         w->heap_size, &w->mpi, &rank, &size, err, sizeof err))
    return pto_status_make(PTO_STATUS_INTERNAL, "%s: the MPI transport: %s", fn, err);
  w->rank = rank;
  w->root = rank == 0;
  if (size != w->n)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: the device set has %d device%s but the MPI world has %d rank%s; "
                           "every MPI rank hosts one chip: launch with mpirun -np %d, or give "
                           "the program %d device%s (--devices %d)",
                           fn, w->n, w->n == 1 ? "" : "s", size, size == 1 ? "" : "s", w->n, size,
                           size == 1 ? "" : "s", size);
  w->sh_bytes = sizeof(pto__dist_shared) + (size_t)w->n * sizeof(pto__dist_chip);
  w->sh = pto_calloc(1, w->sh_bytes); /* this process's own: nothing is forked */
  w->heap = mmap(NULL, (size_t)w->heap_size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (!w->sh || w->heap == MAP_FAILED) {
    if (w->heap == MAP_FAILED) w->heap = NULL;
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: cannot map a %llu-byte heap", fn,
                           (unsigned long long)w->heap_size);
  }
  pto__dist_shared *sh = w->sh;
  sh->nranks = w->n;
  sh->timeout_ms = cfg->wait_timeout_ms;
  sh->heap = w->heap;
  sh->heap_size = w->heap_size;
  sh->mpi = w->mpi;
  sh->arena_size = arena;
  for (int q = 0; q < w->n; q++)
    sh->arena[q] = pto__dist_mpi_arena(w->mpi, q);
  pto__rt_set_strace_rank(rank);
  sh->chips[rank].pid = (int32_t)getpid();
  if (!w->root) {
    chip_state *cs = pto_malloc(sizeof *cs);
    const char *start_err = "out of memory";
    int opened = cs && !chip_open(cs, sh, rank, cfg);
    if (cs) start_err = opened ? NULL : sh->chips[rank].msg;
    int rc = pto__dist_mpi_serve(w->mpi, sh, rank, start_err, chip_exec, cs);
    if (opened) chip_close(cs);
    free(cs);
    if (rc || start_err)
      return pto_status_make(PTO_STATUS_INTERNAL, "%s: MPI rank %d: %s", fn, rank,
                             start_err ? start_err : "lost rank 0 while serving it");
    return PTO_OK;
  }
  PTO_RETURN_IF_ERROR(
      pto__rt_devmem_init_over(&w->alloc, w->heap, w->heap_size, PTO__DIST_HEAP_BASE, k_heap_knob));
  PTO_RETURN_IF_ERROR(pto__rt_devmem_init_over(&w->win_alloc, sh->arena[0], arena,
                                               PTO__DIST_WIN_BASE, "pto_dist_config.window_bytes"));
  w->win_alloc_ok = 1;
  uint64_t abort_at; /* offset 0 of every arena, never a window's: pto__dist_arena_hdr */
  PTO_RETURN_IF_ERROR(pto__rt_devmem_alloc(&w->win_alloc, sizeof(pto__dist_arena_hdr), 64,
                                           "the arena header", NULL, &abort_at));
  if (abort_at != PTO__DIST_WIN_BASE)
    return pto_status_make(PTO_STATUS_INTERNAL, "%s: the abort word is not at the arena's start",
                           fn);
  if (pto__dist_mpi_proxy_start(w->mpi, sh, err, sizeof err))
    return pto_status_make(PTO_STATUS_INTERNAL, "%s: the MPI transport: %s", fn, err);
  PTO_RETURN_IF_ERROR(start_chip_thread(w, 0, cfg));
  uint32_t st;
  while ((st = atomic_load(&sh->chips[0].state)) == 0)
    pto__dist_futex_wait(&sh->chips[0].state, 0, 20000);
  if (st == 2) return pto_status_make(PTO_STATUS_INTERNAL, "%s: %s", fn, sh->chips[0].msg);
  return PTO_OK;
}

/* Whether host program p's device set is the worker's: n ranks with these ids (NULL: 0 .. n-1);
 * checked by every run, and by open for the program of single-program mode. */
static pto_status check_device_set(const char *fn, const pto_program *p, int n,
                                   const int32_t *ids) {
  int nd = pto_program_device_count(p);
  if (nd != n)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: the program was compiled for %d devices, this worker has %d", fn,
                           nd, n);
  for (int r = 0; r < nd; r++) {
    int32_t id = ids ? ids[r] : r;
    if (pto_program_device_id(p, r) != id)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "%s: rank %d is device %d in the program and device %d in this worker",
                             fn, r, (int)pto_program_device_id(p, r), (int)id);
  }
  return PTO_OK;
}

static void dist_worker_close(dworker *w);
static pto_status dist_free_tensor(dworker *w, dtensor *t);

/* pto_worker_open's limits (worker.c, devmem.c), checked at open for the chips' configuration. */
#define DIST_MAX_CORES 1024
#define DIST_MAX_BYTES (1ull << 40)

static pto_status dist_worker_open(const pto_dist_config *cfg_in, dworker **out) {
  static const char fn[] = "pto_dist_worker_open";
  if (!out) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: out_worker is NULL", fn);
  *out = NULL;
  pto_dist_config cfg;
  PTO_RETURN_IF_ERROR(read_config(cfg_in, &cfg, fn));
  if (cfg.dump_args_dir &&
      (cfg.dump_args_level < 1 || cfg.dump_args_level > 3 || !*cfg.dump_args_dir))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: dump_args_dir '%s' with dump_args_level %d: a folder and a level "
                           "1-3 (1 marked, 2 full, 3 hybrid)",
                           fn, cfg.dump_args_dir, cfg.dump_args_level);
  int32_t program_ids[PTO__DIST_MAX_RANKS];
  if (cfg.program && !pto_program_is_host(cfg.program))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: the program's entry is not a host function", fn);
  if (cfg.ndevices == 0 && cfg.program) { /* single-program mode: the program's device set */
    cfg.ndevices = pto_program_device_count(cfg.program);
    for (int r = 0; r < cfg.ndevices && r < PTO__DIST_MAX_RANKS; r++)
      program_ids[r] = pto_program_device_id(cfg.program, r);
    cfg.device_ids = program_ids;
  }
  if (cfg.ndevices < 1 || cfg.ndevices > PTO__DIST_MAX_RANKS)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: ndevices %d is out of range (1 to %d)",
                           fn, cfg.ndevices, PTO__DIST_MAX_RANKS);
  int transport_from_env = !cfg.transport;
  if (transport_from_env) cfg.transport = getenv("PTO_DIST_TRANSPORT");
  if (cfg.transport && !*cfg.transport) cfg.transport = NULL;
  int use_mpi = cfg.transport && strcmp(cfg.transport, "mpi") == 0;
  if (cfg.transport && !use_mpi && strcmp(cfg.transport, "shm") != 0)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: unknown transport '%s' (this build has: %s)", fn, cfg.transport,
                           PTO_MPI ? "shm, mpi" : "shm");
  /* $PTO_DIST_CHIPS says how a one-host worker's chips run: under MPI it does not apply. */
  int chips_from_env = !cfg.chips && !use_mpi;
  if (chips_from_env) cfg.chips = getenv("PTO_DIST_CHIPS");
  if (cfg.chips && !*cfg.chips) cfg.chips = NULL;
  int threads = cfg.chips && strcmp(cfg.chips, "threads") == 0;
  if (cfg.chips && !threads && strcmp(cfg.chips, "processes") != 0 && chips_from_env)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: PTO_DIST_CHIPS is '%s': expected processes (one forked process "
                           "per chip, the default) or threads (every chip a thread of this "
                           "process)",
                           fn, cfg.chips);
  if (cfg.chips && !threads && strcmp(cfg.chips, "processes") != 0)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: unknown chips '%s' (processes: one forked process per chip, the "
                           "default; threads: every chip a thread of this process)",
                           fn, cfg.chips);
  if (threads && use_mpi)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: chips 'threads' is for the shm transport (one host): under MPI "
                           "every chip is its own rank",
                           fn);
  /* A transport this build lacks is a configuration error (INVALID_ARGUMENT), as an unknown one
   * is, whether the config or $PTO_DIST_TRANSPORT names it. */
  if (use_mpi && !PTO_MPI)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: %stransport 'mpi' is not in this build (configure pto with "
                           "-DPTO_MPI=ON; this build has: shm)",
                           fn, transport_from_env ? "PTO_DIST_TRANSPORT is 'mpi': " : "");
  for (int r = 0; r < cfg.ndevices && cfg.device_ids; r++) {
    if (cfg.device_ids[r] < 0)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: device id %d of rank %d is negative",
                             fn, (int)cfg.device_ids[r], r);
    for (int q = 0; q < r; q++)
      if (cfg.device_ids[q] == cfg.device_ids[r])
        return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                               "%s: device id %d is given twice (ranks %d and %d)", fn,
                               (int)cfg.device_ids[r], q, r);
  }
  /* Single-program mode with a device set given: the program must be compiled for it, refused
   * here rather than at the first run. */
  if (cfg.program)
    PTO_RETURN_IF_ERROR(check_device_set(fn, cfg.program, cfg.ndevices, cfg.device_ids));
  if (cfg.wait_timeout_ms > PTO_DIST_TIMEOUT_MS_MAX)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: wait_timeout_ms %u is out of range (0 for $PTO_DIST_TIMEOUT_MS "
                           "or the default, or 1 to %d)",
                           fn, cfg.wait_timeout_ms, PTO_DIST_TIMEOUT_MS_MAX);
  /* Checked here, naming the field (the chips' own check would report an internal error of one
   * rank); the heap's size is rounded up to pages, which must not wrap. chip_memory_bytes is the
   * chips' to check: each reports it as it fails to open (test chip_that_fails_to_open). */
  if (cfg.ncores_per_chip < 0 || cfg.ncores_per_chip > DIST_MAX_CORES)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: ncores_per_chip %d is out of range (0 for the default, or 1 to %d)",
                           fn, cfg.ncores_per_chip, DIST_MAX_CORES);
  if (cfg.shared_heap_bytes > DIST_MAX_BYTES)
    return pto_status_make(
        PTO_STATUS_INVALID_ARGUMENT,
        "%s: shared_heap_bytes %llu is out of range (0 for the default, or up to "
        "%llu, rounded up to pages)",
        fn, (unsigned long long)cfg.shared_heap_bytes, (unsigned long long)DIST_MAX_BYTES);
  const char *env_ms = getenv("PTO_DIST_TIMEOUT_MS");
  int explicit_ms = cfg.wait_timeout_ms || (env_ms && *env_ms);
  if (!cfg.wait_timeout_ms) {
    int64_t ms;
    pto_status es = pto_env_int("PTO_DIST_TIMEOUT_MS", 1, PTO_DIST_TIMEOUT_MS_MAX, 5000, &ms);
    if (es) return pto_status_annotate(es, "%s", fn);
    cfg.wait_timeout_ms = (uint32_t)ms;
  }
  uint64_t slice_ns; /* read again by each rank (pto__dist_shm_init): a bad one is refused here */
  pto_status slice_err = pto__dist_slice_setting(&slice_ns);
  if (slice_err) return pto_status_annotate(slice_err, "%s", fn);
  int join; /* read again by each rank's transport (pto__dist_shm_init) */
  pto_status js = pto__dist_join_setting(&join);
  if (js) return pto_status_annotate(js, "%s", fn);
  int log_level; /* a bad PTO_LOG_LEVEL is refused, not ignored */
  pto_status ls = pto__rt_log_level(&log_level);
  if (ls) return pto_status_annotate(ls, "%s", fn);
  dworker *w = pto_calloc(1, sizeof *w);
  if (w) w->token = pto__rt_obj_add(PTO__RT_OBJ_DIST_WORKER, w);
  if (!w || !w->token) {
    free(w);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  for (int r = 0; r < PTO__DIST_MAX_RANKS; r++)
    w->pidfd[r] = -1;
  w->n = cfg.ndevices;
  w->threads = threads;
  for (int r = 0; r < w->n; r++)
    w->ids[r] = cfg.device_ids ? cfg.device_ids[r] : r;
  w->strace = pto__rt_log_strace(log_level);
  if (cfg.program) {
    w->program = cfg.program;
    pto_program_retain((pto_program *)w->program);
  }
  if (!cfg.ncores_per_chip) {
    long cpus = pto__rt_usable_cpus();
    cfg.ncores_per_chip = cpus / w->n > 1 ? (int)(cpus / w->n) : 1;
  }
  w->heap_size = cfg.shared_heap_bytes ? (cfg.shared_heap_bytes + 4095) & ~4095ull : 1ull << 30;
  w->root = 1;
  if (use_mpi) {
    pto_status ms = open_mpi(w, &cfg);
    if (ms) {
      dist_worker_close(w);
      return ms;
    }
    *out = w;
    return PTO_OK;
  }
  w->sh_bytes = sizeof(pto__dist_shared) + (size_t)w->n * sizeof(pto__dist_chip);
  w->sh = mmap(NULL, w->sh_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  w->heap = mmap(NULL, (size_t)w->heap_size, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (w->sh == MAP_FAILED || w->heap == MAP_FAILED) {
    pto_status s =
        pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: cannot map %llu bytes of shared memory: %s",
                        fn, (unsigned long long)w->heap_size, strerror(errno));
    if (w->sh != MAP_FAILED) munmap(w->sh, w->sh_bytes);
    if (w->heap != MAP_FAILED) munmap(w->heap, (size_t)w->heap_size);
    pto__rt_obj_remove(w->token, PTO__RT_GONE_CLOSED);
    free(w);
    return s;
  }
  w->sh->nranks = w->n;
  w->sh->timeout_ms = cfg.wait_timeout_ms;
  w->progress_ms = explicit_ms ? cfg.wait_timeout_ms : 0;
  w->host_runs = PTO__DIST_HOST_RUNS && w->threads && !w->progress_ms;
  w->sh->heap = w->heap;
  w->sh->heap_size = w->heap_size;
  pto_status s =
      pto__rt_devmem_init_over(&w->alloc, w->heap, w->heap_size, PTO__DIST_HEAP_BASE, k_heap_knob);
  if (s) {
    munmap(w->sh, w->sh_bytes);
    munmap(w->heap, (size_t)w->heap_size);
    pto__rt_obj_remove(w->token, PTO__RT_GONE_CLOSED);
    free(w);
    return s;
  }
  if (w->threads) {
    for (int r = 0; r < w->n && !s; r++)
      s = start_chip_thread(w, r, &cfg);
    if (s) {
      snprintf(w->why, sizeof w->why, "%s", pto_status_message(s));
      pto_status_free(s);
      w->broken = 1;
    }
  }
  fflush(NULL); /* no buffered output is written twice */
  pid_t parent = getpid();
  for (int r = 0; r < w->n && !w->threads; r++) {
    pid_t pid = fork();
    if (pid == 0) chip_main(w->sh, r, &cfg, parent);
    if (pid < 0) {
      snprintf(w->why, sizeof w->why, "%s: fork of chip rank %d: %s", fn, r, strerror(errno));
      w->broken = 1;
      break;
    }
    w->sh->chips[r].pid = pid;
    w->pidfd[r] = pidfd_open_(pid); /* -1 on a kernel without pidfds: waitpid and kill then */
    atomic_store(&w->sh->chips[r].go, 1);
    pto__dist_futex_wake(&w->sh->chips[r].go);
  }
  /* Chip threads that started are waited for even once one failed: close tells each to exit. */
  for (int r = 0; r < w->n && (!w->broken || w->threads); r++) {
    pto__dist_chip *c = &w->sh->chips[r];
    uint32_t st;
    if (w->threads && !w->chip_thr_started[r]) continue;
    while ((st = atomic_load(&c->state)) == 0 && !check_chips(w))
      pto__dist_futex_wait(&c->state, 0, 20000);
    if (st == 2 && !w->broken) {
      snprintf(w->why, sizeof w->why, "%s", c->msg);
      w->broken = 1;
    }
  }
  if (w->broken) {
    s = pto_status_make(PTO_STATUS_INTERNAL, "%s: %s", fn, w->why);
    dist_worker_close(w);
    return s;
  }
  *out = w;
  return PTO_OK;
}

static void free_buffer(dworker *w, uint32_t id);

static void dist_worker_close(dworker *w) {
  if (!w) return;
  pto__rt_obj_remove(w->token, PTO__RT_GONE_CLOSED); /* a no-op when close retired it */
  pto__dist_cmd cmd;
  memset(&cmd, 0, sizeof cmd);
  cmd.op = PTO__DIST_CMD_EXIT;
  for (int r = 0; w->sh && w->root && r < w->n;
       r++) { /* EXIT to every live chip, a broken worker's survivors too */
    pto__dist_chip *c = &w->sh->chips[r];
    uint32_t h = atomic_load(&c->head);
    if (c->pid <= 0 || atomic_load(&c->state) != 1 || h - atomic_load(&c->tail) >= PTO__DIST_RING)
      continue;
    memcpy(&c->ring[h % PTO__DIST_RING], &cmd, sizeof cmd);
    atomic_store_explicit(&c->head, h + 1, memory_order_release);
    pto__dist_futex_wake(&c->head);
  }
  if (w->mpi) {
    if (w->sh) {
      atomic_fetch_add(&w->sh->bell, 1);
      pto__dist_futex_wake(&w->sh->bell);
    }
    join_chip_threads(w);
    pto__dist_mpi_proxy_join(w->mpi);
    pto__dist_mpi_close(w->mpi);
  }
  if (w->threads) join_chip_threads(w);
  if (!w->mpi && !w->threads && w->sh) reap_chips(w);
  while (w->tensors) {
    dtensor *t = w->tensors;
    w->tensors = t->next;
    pto__rt_obj_remove(t->token, PTO__RT_GONE_WORKER_CLOSED);
    free(t);
  }
  for (size_t i = 0; i < w->nbufs; i++)
    free(w->bufs[i].acc);
  free(w->bufs);
  for (size_t i = 0; i < w->nprogs; i++)
    pto_program_release((pto_program *)w->progs[i].p);
  free(w->progs);
  if (w->program) pto_program_release((pto_program *)w->program);
  free(w->posted);
  free(w->disp);
  for (size_t i = 0; i < w->nnames; i++)
    free(w->names[i]);
  free(w->names);
  pto__rt_devmem_fini(&w->alloc);
  pto__rt_devmem_fini(&w->win_alloc);
  for (int r = 0; r < w->n && !w->leaked_chips; r++)
    free(w->chip_st[r]);
  if (w->leaked_chips) { /* a chip thread still runs on them: they stay */
  } else if (w->mpi) {
    if (w->heap) munmap(w->heap, (size_t)w->heap_size);
    free(w->sh);
  } else {
    if (w->heap) munmap(w->heap, (size_t)w->heap_size);
    if (w->sh) munmap(w->sh, w->sh_bytes);
  }
  free(w);
}

/* ---- heap buffers ----------------------------------------------------------------------- */

/* A free entry of w->bufs (all of whose nbufs entries are slots, kind 0 when free: grown, and
 * the new ones cleared, when full). */
static pto_status free_slot(dworker *w, size_t *out_i) {
  size_t i = 0;
  while (i < w->nbufs && w->bufs[i].kind)
    i++;
  if (i == w->nbufs) {
    size_t cap = w->nbufs;
    if (pto_grow(&w->bufs, sizeof *w->bufs, &cap, w->nbufs + 1))
      return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
    memset(w->bufs + w->nbufs, 0, (cap - w->nbufs) * sizeof *w->bufs);
    w->nbufs = cap;
  }
  *out_i = i;
  return PTO_OK;
}

static pto_status new_buffer(dworker *w, int kind, uint64_t bytes, const char *what,
                             uint32_t *out_id) {
  size_t i;
  PTO_RETURN_IF_ERROR(free_slot(w, &i));
  uint64_t addr;
  PTO_RETURN_IF_ERROR(pto__rt_devmem_alloc(&w->alloc, bytes, 64, what, NULL, &addr));
  buffer *b = &w->bufs[i];
  memset(b, 0, sizeof *b);
  b->kind = kind;
  b->off = addr - PTO__DIST_HEAP_BASE;
  b->bytes = bytes;
  b->window = -1;
  b->owner = -1;
  memset(w->heap + b->off, 0, (size_t)bytes); /* zeroed, and its pages faulted in, once */
  *out_id = (uint32_t)i + 1;
  return PTO_OK;
}

static buffer *get_buffer(dworker *w, uint64_t id) {
  if (id == 0 || id > w->nbufs || !w->bufs[id - 1].kind) return NULL;
  return &w->bufs[id - 1];
}

static void free_buffer(dworker *w, uint32_t id) {
  buffer *b = get_buffer(w, id);
  if (!b) return;
  if (b->window >= 0) atomic_store(&w->sh->windows[b->window].live, 0);
  if (b->arena)
    pto__rt_devmem_free(&w->win_alloc, PTO__DIST_WIN_BASE + b->off);
  else
    pto__rt_devmem_free(&w->alloc, PTO__DIST_HEAP_BASE + b->off);
  free(b->acc);
  memset(b, 0, sizeof *b);
}

/* MPI: a window of stride bytes at the same offset of every rank's arena, zeroed on every rank
 * (directly where addressable, else with one-sided puts; the arena was faulted in at open). */
static pto_status new_arena_window(dworker *w, uint64_t stride, uint32_t *out_id) {
  size_t i;
  PTO_RETURN_IF_ERROR(free_slot(w, &i));
  uint64_t addr;
  pto_status s = pto__rt_devmem_alloc(&w->win_alloc, stride, 64, "a comm window", NULL, &addr);
  if (s)
    return pto_status_annotate(s,
                               "the MPI window arena (%llu bytes per rank) is full: raise "
                               "pto_dist_config.window_bytes or PTO_DIST_WINDOW_BYTES",
                               (unsigned long long)w->sh->arena_size);
  uint64_t off = addr - PTO__DIST_WIN_BASE;
  static const uint8_t zeros[64 * 1024];
  for (int q = 0; q < w->n; q++) {
    if (w->sh->arena[q]) {
      memset(w->sh->arena[q] + off, 0, (size_t)stride);
      continue;
    }
    char detail[512];
    for (uint64_t o = 0; o < stride; o += sizeof zeros) {
      uint64_t k = stride - o < sizeof zeros ? stride - o : sizeof zeros;
      if (pto__dist_mpi_put(w->mpi, q, off + o, zeros, k, detail)) {
        pto__rt_devmem_free(&w->win_alloc, addr);
        return pto_status_make(PTO_STATUS_INTERNAL, "zeroing a comm window: %s", detail);
      }
    }
  }
  buffer *b = &w->bufs[i];
  memset(b, 0, sizeof *b);
  b->kind = BUF_WINDOW;
  b->off = off;
  b->bytes = stride * (uint64_t)w->n; /* tracked as n slices of stride, like on one host */
  b->window = -1;
  b->owner = -1;
  b->arena = 1;
  *out_id = (uint32_t)i + 1;
  return PTO_OK;
}

/* ---- the host API ----------------------------------------------------------------------- */

static void host_fatal(void *ctx, int32_t code, const char *msg) {
  dworker *w = ctx;
  if (!w->fatal_code) {
    w->fatal_code = code ? code : 1;
    snprintf(w->fatal, sizeof w->fatal, "%s", msg ? msg : "host code failed");
  }
}

static int32_t host_failf(dworker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int32_t host_failf(dworker *w, const char *fmt, ...) {
  char msg[PTO__DIST_MSG];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  host_fatal(w, 1, msg);
  return 1;
}

static int64_t host_world_size(void *ctx) { return ((dworker *)ctx)->n; }

static uint64_t bytes_of(int32_t rank, const int64_t *shape, int32_t dtype, int *ok) {
  uint64_t n = pto_dtype_size((pto_dtype)dtype);
  *ok = rank >= 1 && rank <= PTO_MAX_RANK && (unsigned)dtype < PTO_DTYPE_COUNT;
  for (int i = 0; *ok && i < rank; i++)
    if (shape[i] < 0 || __builtin_mul_overflow(n, (uint64_t)shape[i], &n)) *ok = 0;
  return n;
}

/* A host buffer's shape that bytes_of refuses: the extent at fault, as the interpreter names it
 * (a runtime extent computed by the host program: dist.alloc_window([%n, 8], f32) with %n < 0). */
static int32_t host_bad_shape(dworker *w, const char *op, int32_t rank, const int64_t *shape,
                              int32_t dtype) {
  if (rank >= 1 && rank <= PTO_MAX_RANK && (unsigned)dtype < PTO_DTYPE_COUNT)
    for (int i = 0; i < rank; i++)
      if (shape[i] < 0)
        return host_failf(w, "%s: extent %lld of dim %d is not valid", op, (long long)shape[i], i);
  return host_failf(w, "%s: bad shape or dtype", op);
}

static void fill_ref(pto_host_ref *out, uint32_t id, int32_t rank, const int64_t *shape,
                     int32_t dtype) {
  memset(out, 0, sizeof *out);
  out->buffer = id;
  out->rank = rank;
  out->dtype = dtype;
  int64_t st = 1;
  for (int i = rank - 1; i >= 0; i--) {
    out->shape[i] = shape[i];
    out->stride[i] = st;
    st *= shape[i];
  }
}

static int32_t host_create(void *ctx, int32_t rank, const int64_t *shape, int32_t dtype,
                           pto_host_ref *out) {
  dworker *w = ctx;
  int ok;
  uint64_t n = bytes_of(rank, shape, dtype, &ok);
  if (!ok) return host_bad_shape(w, "tensor.create in the host", rank, shape, dtype);
  uint32_t id;
  pto_status s = new_buffer(w, BUF_TEMP, n, "a host tensor.create", &id);
  if (s) {
    host_failf(w, "%s", pto_status_message(s));
    pto_status_free(s);
    return 1;
  }
  fill_ref(out, id, rank, shape, dtype);
  return 0;
}

static int32_t host_alloc_window(void *ctx, int32_t rank, const int64_t *shape, int32_t dtype,
                                 pto_host_ref *out) {
  dworker *w = ctx;
  int ok;
  uint64_t n = bytes_of(rank, shape, dtype, &ok);
  if (!ok) return host_bad_shape(w, "dist.alloc_window", rank, shape, dtype);
  int wi = 0;
  while (wi < PTO__DIST_MAX_WINDOWS && atomic_load(&w->sh->windows[wi].live))
    wi++;
  if (wi == PTO__DIST_MAX_WINDOWS)
    return host_failf(w, "dist.alloc_window: more than %d windows at once", PTO__DIST_MAX_WINDOWS);
  uint64_t stride = (n + 63) & ~63ull;
  uint32_t id;
  pto_status s = w->mpi ? new_arena_window(w, stride, &id)
                        : new_buffer(w, BUF_WINDOW, stride * (uint64_t)w->n, "a comm window", &id);
  if (s) {
    host_failf(w, "%s", pto_status_message(s));
    pto_status_free(s);
    return 1;
  }
  buffer *b = get_buffer(w, id);
  b->window = wi;
  b->win_stride = stride;
  b->win_bytes = n;
  pto__dist_window *win = &w->sh->windows[wi];
  win->off = b->off;
  win->stride = stride;
  win->bytes = n;
  win->cols = shape[rank - 1];
  win->name[0] = '\0'; /* a slot's earlier window's name does not carry over */
  atomic_store_explicit(&win->live, 1, memory_order_release);
  fill_ref(out, id, rank, shape, dtype);
  return 0;
}

/* The host's name for the window *ref came from, cut to fit, for the transports' messages. The
 * chips read it only when a call that uses the window fails, after the call was posted. */
static void host_name_window(void *ctx, const pto_host_ref *ref, const char *name) {
  dworker *w = ctx;
  buffer *b = ref && name ? get_buffer(w, ref->buffer) : NULL;
  if (!b || b->window < 0) return;
  char *dst = w->sh->windows[b->window].name;
  snprintf(dst, PTO_HOST_WINDOW_NAME, "%s", name);
}

/* The byte range [lo, hi) of a view inside its buffer (a window view: inside rank d's slice);
 * 0 when it does not fit. */
static int view_range(const pto_host_ref *v, const buffer *b, int d, uint64_t *lo, uint64_t *hi) {
  uint64_t eb = pto_dtype_size((pto_dtype)v->dtype);
  int64_t first = v->offset, last = v->offset;
  int empty = 0;
  for (int i = 0; i < v->rank; i++) {
    if (v->shape[i] == 0)
      empty = 1;
    else if (v->stride[i] >= 0)
      last += (v->shape[i] - 1) * v->stride[i];
    else
      first += (v->shape[i] - 1) * v->stride[i];
  }
  if (first < 0) return 0;
  uint64_t base = v->window ? (uint64_t)d * b->win_stride : 0;
  uint64_t limit = v->window ? base + b->win_bytes : b->bytes;
  *lo = base + (uint64_t)first * eb;
  *hi = empty ? *lo : base + (uint64_t)(last + 1) * eb;
  return *hi <= limit;
}

/* A stacked tensor's argument on device d must be one whole-or-part shard that lives on d
 * (PyPTO's placement: shard i on worker_ids[i]); else the launch fails naming the shard, both
 * devices and the placement that would fit: the run goes on without posting (place_dry) to see
 * where the later calls send the other shards (placement_error). */
static int check_shard(dworker *w, uint32_t id, const char *name, int d, int arg, buffer *b,
                       uint64_t lo, uint64_t hi) {
  uint64_t first = lo / b->shard_bytes, last = hi > lo ? (hi - 1) / b->shard_bytes : first;
  if (first != last)
    return host_failf(w,
                      "call @%s device=%d: argument %d spans shards %llu to %llu of a stacked "
                      "tensor; pass one shard (tensor.select(%%t, i))",
                      name, d, arg, (unsigned long long)first, (unsigned long long)last);
  int on = b->shard_dev[first];
  if (on == d) {
    b->run_seen |= 1ull << first;
    return 0;
  }
  char now[16 * PTO__DIST_MAX_RANKS] = "";
  size_t nn = 0;
  for (int j = 0; j < b->nshards; j++)
    nn += (size_t)snprintf(now + nn, sizeof now - nn, "%s%d", j ? ", " : "", b->shard_dev[j]);
  snprintf(w->place_msg, sizeof w->place_msg,
           "call @%s device=%d: argument %d is shard %llu of a stacked tensor, resident on device "
           "%d (worker_ids=[%s]); pass it to device=%d",
           name, d, arg, (unsigned long long)first, (int)w->ids[on], now, (int)w->ids[on]);
  w->place_dry = 1;
  w->place_buf = id;
  for (int j = 0; j < b->nshards; j++) /* shards already passed to their devices stay there */
    w->place_to[j] = b->run_seen >> j & 1 ? b->shard_dev[j] : -1;
  return 0;
}

/* In place_dry: where this call sends shards of the misplaced stacked tensor. */
static void place_record(dworker *w, int d, const pto_host_call_arg *args, int32_t nargs) {
  buffer *b = get_buffer(w, w->place_buf);
  for (int i = 0; b && i < nargs; i++) {
    uint64_t lo, hi;
    if (args[i].kind == PTO_ORCH_ARG_SCALAR || args[i].tensor.buffer != w->place_buf ||
        !view_range(&args[i].tensor, b, d, &lo, &hi))
      continue;
    int j = (int)(lo / b->shard_bytes);
    w->place_to[j] = w->place_to[j] == -1 || w->place_to[j] == d ? d : -2;
  }
}

/* The misplaced shard's error, with the placement that fits every call of the run: each shard
 * on the device the calls sent it to; a shard no call used keeps its device if that is free,
 * else takes the first free one. */
static void placement_error(dworker *w) {
  buffer *b = get_buffer(w, w->place_buf);
  int to[PTO__DIST_MAX_RANKS], taken[PTO__DIST_MAX_RANKS] = {0}, nb = b ? b->nshards : 0;
  char fit[16 * PTO__DIST_MAX_RANKS] = "", why[160] = "";
  for (int j = 0; j < nb && !why[0]; j++) {
    to[j] = w->place_to[j];
    if (to[j] == -2)
      snprintf(why, sizeof why, "the run passes shard %d to two devices", j);
    else if (to[j] >= 0 && taken[to[j]]++)
      snprintf(why, sizeof why, "the run passes two shards to device %d", (int)w->ids[to[j]]);
  }
  for (int j = 0; j < nb && !why[0]; j++)
    if (to[j] == -1 && !taken[b->shard_dev[j]]) taken[to[j] = b->shard_dev[j]] = 1;
  for (int j = 0, f = 0; j < nb && !why[0]; j++) {
    while (to[j] == -1 && taken[f])
      f++;
    if (to[j] == -1) taken[to[j] = f] = 1;
  }
  size_t nf = 0;
  for (int j = 0; j < nb && !why[0]; j++)
    nf += (size_t)snprintf(fit + nf, sizeof fit - nf, "%s%d", j ? ", " : "", to[j]);
  char old[PTO__DIST_MSG];
  snprintf(old, sizeof old, "%s", w->fatal_code ? w->fatal : "");
  w->fatal_code = 0;
  if (why[0])
    host_failf(w, "%s; no placement of the shards fits (%s)%s%s", w->place_msg, why,
               old[0] ? "; then " : "", old);
  else
    host_failf(w, "%s, or place the shards with worker_ids=[%s]%s%s", w->place_msg, fit,
               old[0] ? "; then " : "", old);
}

static int contiguous(const pto_host_ref *v) {
  int64_t st = 1;
  for (int i = v->rank - 1; i >= 0; i--) {
    if (v->shape[i] != 1 && v->stride[i] != st) return 0;
    st *= v->shape[i];
  }
  return 1;
}

/* Records an acc_rec of (rank, seq) to b and raises dep[] to the earlier commands of other ranks
 * it must follow. Accesses of commands already finished are dropped on the way. */
static int track(dworker *w, buffer *b, uint64_t lo, uint64_t hi, int write, int rank, uint32_t seq,
                 uint32_t *dep) {
  size_t k = 0;
  for (size_t i = 0; i < b->nacc; i++) {
    acc_rec *a = &b->acc[i];
    uint32_t done = atomic_load_explicit(&w->sh->chips[a->rank].tail, memory_order_acquire);
    if ((int32_t)(done - a->seq) >= 0) continue; /* finished: nothing to wait for */
    if (a->rank != rank && a->lo < hi && lo < a->hi && (write || a->write))
      if (!dep[a->rank] || (int32_t)(a->seq - dep[a->rank]) > 0) dep[a->rank] = a->seq;
    b->acc[k++] = *a;
  }
  b->nacc = k;
  if (pto_grow(&b->acc, sizeof *b->acc, &b->capacc, b->nacc + 1)) return -1;
  b->acc[b->nacc++] = (acc_rec){lo, hi, rank, seq, write};
  return 0;
}

/* A chip keeps the launch record of command seq in recs[seq % PTO__DIST_RECS] (chip_run), where
 * a later call's record replaces it: so of a run's calls to one chip gather finds at most the
 * last PTO__DIST_RECS. Once the run has posted 2 * PTO__DIST_RECS calls per chip, this drops
 * those whose slot a later call of the same chip took, keeping the others in issue order: the
 * record of a long host loop costs bounded memory (it kept 16 bytes a call until the run ended,
 * ~10 MB/s of host RSS for a loop of 2^62 calls) and says the same (truncated). */
static void compact_posted(dworker *w) {
  if (w->nposted < 2u * PTO__DIST_RECS * (size_t)w->n) return;
  uint64_t taken[PTO__DIST_MAX_RANKS][PTO__DIST_RECS / 64];
  memset(taken, 0, sizeof taken[0] * (size_t)w->n);
  size_t k = w->nposted;
  for (size_t i = w->nposted; i-- > 0;) {
    const struct posted *ps = &w->posted[i];
    uint32_t slot = ps->seq % PTO__DIST_RECS;
    uint64_t bit = 1ull << (slot % 64), *word = &taken[ps->rank][slot / 64];
    if (*word & bit) continue; /* a later call's record replaced its */
    *word |= bit;
    w->posted[--k] = *ps;
  }
  memmove(w->posted, w->posted + k, (w->nposted - k) * sizeof *w->posted);
  w->posted_dropped |= k > 0;
  w->nposted -= k;
}

static int32_t host_call(void *ctx, int32_t orch_index, int64_t device,
                         const pto_host_call_arg *args, int32_t nargs) {
  dworker *w = ctx;
  if (w->fatal_code) return w->fatal_code;
  const pto_program *p = w->run_prog;
  int ncallees = pto_program_callee_count(p);
  if (orch_index < 0 || orch_index >= ncallees)
    return host_failf(w, "call of callee %d: the program has %d", (int)orch_index, ncallees);
  const char *name = pto_program_signature(pto_program_callee(p, orch_index))->entry;
  if (device < 0 || device >= w->n)
    return host_failf(w, "call @%s device=%lld: the device index is out of range (0 to %d)", name,
                      (long long)device, w->n - 1);
  if (nargs > PTO__DIST_MAX_ARGS)
    return host_failf(w, "call @%s: %d arguments, at most %d", name, (int)nargs,
                      PTO__DIST_MAX_ARGS);
  int d = (int)device, first_slot = -1;
  if (w->place_dry) { /* a shard went to the wrong device: only record where the shards go */
    place_record(w, d, args, nargs);
    return 0;
  }
  for (size_t i = 0; i < w->nprogs; i++)
    if (w->progs[i].p == p) first_slot = w->progs[i].first_slot;
  pto__dist_cmd *cmd = &w->cmd;
  memset(cmd, 0, offsetof(pto__dist_cmd, args));
  cmd->op = PTO__DIST_CMD_RUN;
  cmd->epoch = run_epoch(w);
  cmd->slot = first_slot + orch_index;
  cmd->nargs = nargs;
  uint32_t seq = atomic_load_explicit(&w->sh->chips[d].head, memory_order_relaxed) + 1;
  for (int i = 0; i < nargs; i++) {
    const pto_host_call_arg *a = &args[i];
    pto__dist_arg *o = &cmd->args[i];
    memset(o, 0, sizeof *o);
    o->kind = a->kind;
    if (a->kind == PTO_ORCH_ARG_SCALAR) {
      o->scalar = a->scalar;
      continue;
    }
    const pto_host_ref *v = &a->tensor;
    buffer *b = get_buffer(w, v->buffer);
    uint64_t lo, hi;
    if (!b) return host_failf(w, "call @%s: argument %d names no live tensor", name, i);
    if (!view_range(v, b, d, &lo, &hi))
      return host_failf(w, "call @%s device=%d: argument %d is a view outside its tensor", name, d,
                        i);
    if (b->owner >= 0 && b->owner != d)
      return host_failf(w,
                        "call @%s device=%d: argument %d is a tensor resident on device %d; a "
                        "device uses only its own resident tensors",
                        name, d, i, (int)w->ids[b->owner]);
    if (b->shard_bytes && check_shard(w, v->buffer, name, d, i, b, lo, hi)) return 1;
    if (w->place_dry) break; /* the shard is on another device: nothing more is posted */
    if (!contiguous(v))
      return host_failf(w,
                        "call @%s device=%d: argument %d is a strided (non-contiguous) view; "
                        "the distributed worker passes contiguous views only",
                        name, d, i);
    o->dtype = v->dtype;
    o->rank = v->rank;
    memcpy(o->shape, v->shape, sizeof o->shape);
    if (b->arena) /* MPI: rank d's slice is at the window's offset of d's own arena */
      o->addr = PTO__DIST_WIN_BASE + b->off + (lo - (uint64_t)d * b->win_stride);
    else
      o->addr = PTO__DIST_HEAP_BASE + b->off + lo;
    if (b->kind == BUF_IO || b->kind == BUF_TEMP) /* rank 0's: shipped to a remote chip */
      o->ship = PTO__DIST_SHIP_IN | (a->kind != PTO_ORCH_ARG_IN ? PTO__DIST_SHIP_OUT : 0);
    if (track(w, b, lo, hi, a->kind != PTO_ORCH_ARG_IN, d, seq, cmd->dep))
      return host_failf(w, "out of memory");
  }
  if (w->place_dry) {
    place_record(w, d, args, nargs);
    return 0;
  }
  compact_posted(w);
  if (pto_grow(&w->posted, sizeof *w->posted, &w->capposted, w->nposted + 1))
    return host_failf(w, "out of memory");
  uint32_t done_at;
  pto_status s = post(w, d, cmd, &done_at);
  if (s) {
    host_failf(w, "%s", pto_status_message(s));
    pto_status_free(s);
    return 1;
  }
  int slot = (int)(w->per_rank[d]++ & INT32_MAX); /* from 0 again after 2^31 calls */
  w->posted[w->nposted++] = (struct posted){d, orch_index, slot, done_at - 1};
  return 0;
}

static const char *intern(dworker *w, const char *name) {
  for (size_t i = 0; i < w->nnames; i++)
    if (!strcmp(w->names[i], name)) return w->names[i];
  if (pto_grow(&w->names, sizeof *w->names, &w->capnames, w->nnames + 1)) return "?";
  if (!(w->names[w->nnames] = pto_strdup(name))) return "?";
  return w->names[w->nnames++];
}

/* After the drain: each posted call's launch record, from its chip. */
static void gather(dworker *w, uint64_t ts, uint64_t dur) {
  w->last.ts_ns = ts;
  w->last.dur_ns = dur;
  w->last.truncated = w->posted_dropped;
  w->last.ndispatches = 0;
  if (pto_grow(&w->disp, sizeof *w->disp, &w->capdisp, w->nposted)) return;
  for (size_t i = 0; i < w->nposted; i++) {
    const struct posted *ps = &w->posted[i];
    const pto__dist_rec *rec = &w->sh->chips[ps->rank].recs[ps->seq % PTO__DIST_RECS];
    if (atomic_load_explicit((_Atomic uint32_t *)&rec->seq, memory_order_acquire) != ps->seq + 1) {
      w->last.truncated = 1;
      continue;
    }
    pto_dist_dispatch *d = &w->disp[w->last.ndispatches++];
    memset(d, 0, sizeof *d);
    d->rank = ps->rank;
    d->device = w->ids[ps->rank];
    d->pid = w->sh->chips[ps->rank].pid;
    d->slot = ps->slot;
    d->callee = ps->callee;
    d->name = pto_program_signature(pto_program_callee(w->run_prog, ps->callee))->entry;
    d->launch.hid = rec->hid;
    d->launch.ntasks = rec->ntasks;
    d->launch.ok = rec->ok;
    d->launch.nspans = rec->nspans;
    for (int k = 0; k < rec->nspans && k < PTO_LAUNCH_MAX_SPANS; k++) {
      /* A call's spans are named alike at every run: one comparison, not a search of every
       * name interned (which was ~6% of a one-call run, chips as threads). */
      const char *nm = rec->spans[k].name, *last = w->span_name[k];
      d->launch.spans[k].name =
          last && !strcmp(last, nm) ? last : (w->span_name[k] = intern(w, nm));
      d->launch.spans[k].depth = rec->spans[k].depth;
      d->launch.spans[k].is_device = rec->spans[k].is_device;
      d->launch.spans[k].ts_ns = rec->spans[k].ts_ns;
      d->launch.spans[k].dur_ns = rec->spans[k].dur_ns;
    }
  }
  w->last.dispatches = w->disp;
  w->have_last = 1;
}

/* PTO_LOG_LEVEL=timing: the run as [STRACE] v=1 lines of this process, read back by pto trace
 * into the L3 views, named as the reference runtime names its node-level spans (its tools keep
 * them out of the per-launch views): one node.graph_build span, the host function's run, with
 * host.so's hid and l3=1, then one node.dispatch line per call naming its rank, slot and callee
 * and carrying its chip.run window. */
static void emit_run_strace(const dworker *w, uint64_t inv) {
  if (!w->strace) return;
  long pid = (long)getpid(), tid = (long)gettid();
  char line[512];
  int n =
      snprintf(line, sizeof line,
               "[STRACE] v=1 pid=%ld tid=%ld inv=%llu hid=%llx depth=0 name=node.graph_build "
               "ts=%llu dur=%llu run_id=%llu role=facade l3=1 ranks=%d\n",
               pid, tid, (unsigned long long)inv, (unsigned long long)pto_program_hid(w->run_prog),
               (unsigned long long)w->last.ts_ns, (unsigned long long)w->last.dur_ns,
               (unsigned long long)inv, w->n);
  if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0) return;
  for (int i = 0; i < w->last.ndispatches; i++) {
    const pto_dist_dispatch *d = &w->last.dispatches[i];
    const pto_span *root = d->launch.nspans ? &d->launch.spans[0] : NULL;
    n = snprintf(line, sizeof line,
                 "[STRACE] v=1 pid=%ld tid=%ld inv=%llu hid=%llx depth=0 name=node.dispatch "
                 "ts=%llu dur=%llu run_id=%llu task_slot=%d worker_id=%d role=scheduler "
                 "rank=%d slot=%d chip=%d callee=%s\n",
                 pid, tid, (unsigned long long)inv, (unsigned long long)d->launch.hid,
                 (unsigned long long)(root ? root->ts_ns : 0),
                 (unsigned long long)(root ? root->dur_ns : 0), (unsigned long long)inv, i, d->rank,
                 d->rank, d->slot, d->pid, d->name ? d->name : "?");
    if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0) return;
  }
}

size_t pto__dist_worker_posted_capacity(const pto_dist_worker *wt) {
  const dworker *w = pto__rt_obj_get(wt, PTO__RT_OBJ_DIST_WORKER, NULL);
  return w ? w->capposted : 0;
}

uint32_t pto__dist_worker_chip_unstacks(const pto_dist_worker *wt, int r) {
  const dworker *w = pto__rt_obj_get(wt, PTO__RT_OBJ_DIST_WORKER, NULL);
  return w && r >= 0 && r < w->n ? atomic_load(&w->sh->chips[r].unstacks) : 0;
}

static pto_status dist_worker_last_run(const dworker *w, pto_dist_run_record *out) {
  if (!w || !out)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_dist_worker_last_run: NULL argument");
  if (!w->have_last)
    return pto_status_make(PTO_STATUS_NOT_FOUND,
                           "pto_dist_worker_last_run: no run has reached the host code yet");
  *out = w->last;
  return PTO_OK;
}

/* ---- running ---------------------------------------------------------------------------- */

static pto_status load_program(dworker *w, const pto_program *p) {
  for (size_t i = 0; i < w->nprogs; i++)
    if (w->progs[i].p == p) return PTO_OK;
  int nc = pto_program_callee_count(p);
  for (int i = 0; i < nc; i++) {
    /* This host's chips load the copy the program holds; ranks on other hosts (MPI) the work
     * dir itself, at the same path there. */
    const char *dir =
        w->mpi ? pto_program_callee_dir(p, i) : pto_program_work_dir(pto_program_callee(p, i));
    if (!dir)
      return pto_status_make(
          PTO_STATUS_INVALID_ARGUMENT,
          "callee %d of the program has no work dir: the chips load callees from disk", i);
    pto__dist_cmd *cmd = &w->cmd;
    memset(cmd, 0, sizeof *cmd);
    cmd->op = PTO__DIST_CMD_LOAD;
    if (snprintf(cmd->path, sizeof cmd->path, "%s", dir) >= (int)sizeof cmd->path)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "work dir path too long: %s", dir);
    /* Under MPI, after the work dir's NUL where it fits: the copy this process holds, with the
     * positions of the caller's lines (chip_load_dir), for ranks that hold no program. */
    const char *copy = w->mpi ? pto_program_work_dir(pto_program_callee(p, i)) : NULL;
    size_t used = strlen(cmd->path) + 1;
    if (copy && strcmp(copy, dir) && used + strlen(copy) < sizeof cmd->path) {
      memcpy(cmd->path + used, copy, strlen(copy) + 1);
      /* Which build the copy must be: a path on another host may hold another one. */
      cmd->args[0].scalar = pto_program_hid(pto_program_callee(p, i));
    }
    for (int r = 0; r < w->n; r++)
      PTO_RETURN_IF_ERROR(post(w, r, cmd, NULL));
    PTO_RETURN_IF_ERROR(drain(w));
  }
  if (pto_grow(&w->progs, sizeof *w->progs, &w->capprogs, w->nprogs + 1))
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  pto_program_retain((pto_program *)p);
  w->progs[w->nprogs++] = (loaded){p, w->nslots};
  w->nslots += nc;
  return PTO_OK;
}

static void copy_host(const pto_host_tensor *h, int to_host, void *heap) {
  /* Row-major host tensors copy in one memcpy; others element by element. */
  size_t eb = pto_dtype_size(h->dtype);
  int64_t n = pto_host_tensor_numel(h);
  int contig = 1;
  int64_t st = 1;
  for (int i = h->rank - 1; i >= 0; i--) {
    if (h->shape[i] != 1 && h->strides[i] != st) contig = 0;
    st *= h->shape[i];
  }
  if (contig) {
    if (to_host)
      memcpy(h->data, heap, (size_t)n * eb);
    else
      memcpy(heap, h->data, (size_t)n * eb);
    return;
  }
  int64_t idx[PTO_MAX_RANK] = {0};
  for (int64_t e = 0; e < n; e++) {
    int64_t off = 0;
    for (int i = 0; i < h->rank; i++)
      off += idx[i] * h->strides[i];
    uint8_t *hp = (uint8_t *)h->data + off * (int64_t)eb, *dp = (uint8_t *)heap + e * (int64_t)eb;
    if (to_host)
      memcpy(hp, dp, eb);
    else
      memcpy(dp, hp, eb);
    for (int i = h->rank - 1; i >= 0 && ++idx[i] == h->shape[i]; i--)
      idx[i] = 0;
  }
}

/* pto__rt_validate_host_args's view of a tensor argument that is not a host tensor: a live
 * resident or stacked tensor of this worker. */
static pto_status dist_arg_view(void *ctx, const pto_sig_param *pp, const pto_arg *a,
                                pto_dtype *dtype, int *rank, const int64_t **shape) {
  dworker *w = ctx;
  if (a->kind == PTO_ARG_DEVICE_TENSOR)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "parameter '%s': a pto_worker's device tensor cannot cross to a "
                           "distributed worker; allocate it with pto_dist_alloc_tensor",
                           pp->name);
  if (a->kind != PTO_ARG_DIST_TENSOR)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "parameter '%s': expected a tensor (a host tensor or this worker's "
                           "pto_dist_tensor), got %s",
                           pp->name,
                           a->kind == PTO_ARG_NONE
                               ? "no argument (kind unset)"
                               : "an argument of no known kind (not made by a pto_arg_* call)");
  pto__rt_gone gone;
  const dtensor *t = pto__rt_obj_get(a->dist, PTO__RT_OBJ_DIST_TENSOR, &gone);
  /* pto_worker's words for its device tensors (bind.c), "tensor" for "device tensor". */
  if (!t)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "parameter '%s': the tensor is stale: %s",
                           pp->name, pto__rt_gone_text(gone, PTO__RT_OBJ_DIST_TENSOR));
  if (t->w != w)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "parameter '%s': the tensor belongs to another distributed worker; "
                           "tensors are only valid on the worker that allocated them",
                           pp->name);
  *dtype = t->dtype;
  *rank = t->rank;
  *shape = t->shape;
  return PTO_OK;
}

static pto_status dist_worker_run(dworker *w, const pto_program *p, const pto_arg *args,
                                  size_t nargs) {
  static const char fn[] = "pto_dist_worker_run";
  if (!w || !p)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: worker or program is NULL", fn);
  if (!w->root) return not_root(w, fn);
  if (w->broken) return broken(w);
  if (w->program && p != w->program)
    return pto_status_make(
        PTO_STATUS_FAILED_PRECONDITION,
        "%s: this worker was opened for one program (single-program mode); open it "
        "without pto_dist_config.program to run several programs on it",
        fn);
  if (!pto_program_is_host(p))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: the program's entry is not a host function; run an L2 program on a "
                           "pto_worker",
                           fn);
  PTO_RETURN_IF_ERROR(check_device_set(fn, p, w->n, w->ids));
  const pto_signature *sig = pto_program_signature(p);
  if ((size_t)sig->nparams != nargs)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: @%s takes %d arguments, got %zu", fn,
                           sig->entry, sig->nparams, nargs);
  if (nargs && !args) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: args is NULL", fn);
  if (sig->nparams > 64)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: more than 64 host parameters", fn);
  /* As a pto_worker checks its arguments: dims bound twice agree, static dims match, scalars have
   * their parameter's dtype, host data is not NULL, read-only host tensors are only read. */
  pto_status vs = pto__rt_validate_host_args(sig, args, nargs, dist_arg_view, w);
  if (vs) return pto_status_annotate(vs, "%s", fn);
  PTO_RETURN_IF_ERROR(load_program(w, p));

  pto_host_ref refs[64];
  uint64_t scalars[64];
  int nt = 0, ns = 0;
  pto_status s = PTO_OK;
  for (int i = 0; i < sig->nparams && !s; i++) {
    const pto_sig_param *pp = &sig->params[i];
    const pto_arg *a = &args[i];
    if (!pp->is_tensor) {
      if (a->kind != PTO_ARG_SCALAR)
        s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: parameter '%s' is a scalar", fn,
                            pp->name);
      else
        scalars[ns++] = pp->bind == PTO_BIND_LITERAL ? pto_scalar_to_slot(pp->value)
                                                     : pto_scalar_to_slot(a->scalar);
      continue;
    }
    if (a->kind == PTO_ARG_DIST_TENSOR) { /* checked by dist_arg_view */
      const dtensor *t = pto__rt_obj_get(a->dist, PTO__RT_OBJ_DIST_TENSOR, NULL);
      fill_ref(&refs[nt++], t->buf, t->rank, t->shape, t->dtype);
      continue;
    }
    const pto_host_tensor *h = &a->host;
    int ok;
    uint64_t nb = bytes_of(h->rank, h->shape, h->dtype, &ok);
    if (!ok) {
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: parameter '%s': bad shape", fn,
                          pp->name);
      break;
    }
    buffer *b = get_buffer(w, w->io_buf[i]);
    if (!b || b->bytes != nb) {
      free_buffer(w, w->io_buf[i]);
      w->io_buf[i] = 0;
      char what[160];
      snprintf(what, sizeof what, "host parameter '%s'", pp->name);
      s = new_buffer(w, BUF_IO, nb, what, &w->io_buf[i]);
      if (s) break;
      b = get_buffer(w, w->io_buf[i]);
    }
    if (pp->dir == PTO_DIR_OUT)
      memset(w->heap + b->off, 0, (size_t)nb);
    else
      copy_host(h, 0, w->heap + b->off);
    fill_ref(&refs[nt++], w->io_buf[i], h->rank, h->shape, h->dtype);
  }
  if (s) return s;

  pto_host_api api;
  memset(&api, 0, sizeof api);
  api.version = PTO_HOST_ABI_VERSION;
  api.size = sizeof api;
  api.ctx = w;
  api.world_size = host_world_size;
  api.create_tensor = host_create;
  api.alloc_window = host_alloc_window;
  api.call = host_call;
  api.report_fatal = host_fatal;
  api.name_window = host_name_window;
  pto_host_args ha = {refs, scalars, nt, ns};
  w->run_prog = p;
  w->fatal_code = 0;
  w->fatal[0] = '\0';
  w->place_dry = 0;
  w->nposted = 0;
  w->posted_dropped = 0;
  memset(w->per_rank, 0, sizeof w->per_rank);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int32_t rc = pto_program_host_entry(p)(&api, &ha);
  if (w->place_dry) placement_error(w);
  /* A host error after some calls were posted (a slice past the end for the next device, say)
   * aborts the run: a posted call waiting for a call that never comes fails at once, naming the
   * host, instead of at its deadline. The host's error comes first, the chips' after it. */
  if (rc || w->fatal_code) pto__dist_abort_raise(w->sh, PTO__DIST_HOST_RANK, run_epoch(w));
  s = drain_as(w, PTO_STATUS_LAUNCH); /* every posted call finishes, even after a host error */
  clock_gettime(CLOCK_MONOTONIC, &t1);
  uint64_t ts = (uint64_t)t0.tv_sec * 1000000000ull + (uint64_t)t0.tv_nsec;
  gather(w, ts, (uint64_t)t1.tv_sec * 1000000000ull + (uint64_t)t1.tv_nsec - ts);
  emit_run_strace(w, ++w->nruns);
  if (rc || w->fatal_code) {
    const char *fatal = w->fatal[0] ? w->fatal : "the host code failed";
    if (s && strcmp(fatal, pto_status_message(s)) == 0) {
      /* The host failed on the chips' own error (a chip that died under a call): said once. */
      s = pto_status_annotate(s, "host @%s", sig->entry);
    } else {
      pto_status hs = pto_status_make(PTO_STATUS_LAUNCH, "host @%s: %s%s%s", sig->entry, fatal,
                                      s ? "; then " : "", s ? pto_status_message(s) : "");
      pto_status_free(s);
      s = hs;
    }
  }
  /* Windows and host-created tensors live for one run; acc_rec records end with it. */
  for (size_t i = 0; i < w->nbufs; i++) {
    buffer *b = &w->bufs[i];
    if (b->kind == BUF_TEMP || b->kind == BUF_WINDOW)
      free_buffer(w, (uint32_t)i + 1);
    else {
      b->nacc = 0;
      b->run_seen = 0;
    }
  }
  w->run_prog = NULL;
  if (s) return s;
  for (int i = 0; i < sig->nparams; i++) {
    const pto_sig_param *pp = &sig->params[i];
    if (!pp->is_tensor || pp->dir == PTO_DIR_IN || args[i].kind != PTO_ARG_HOST_TENSOR) continue;
    if (args[i].readonly)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "%s: parameter '%s' is %s but its host tensor is read-only", fn,
                             pp->name, pp->dir == PTO_DIR_OUT ? "out" : "inout");
    copy_host(&args[i].host, 1, w->heap + get_buffer(w, w->io_buf[i])->off);
  }
  return PTO_OK;
}

static pto_status dist_worker_call(dworker *w, const pto_arg *args, size_t nargs) {
  if (!w)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_dist_worker_call: worker is NULL");
  if (!w->program)
    return pto_status_make(
        PTO_STATUS_FAILED_PRECONDITION,
        "pto_dist_worker_call: this worker was opened without a program (multi-program "
        "mode, where several programs share it), so there is no program to call: name "
        "it with dist_worker_run(w, program, args)");
  return dist_worker_run(w, w->program, args, nargs);
}

pto_status pto_dist_run_once(const pto_dist_config *cfg_in, const pto_program *p,
                             const pto_arg *args, size_t nargs) {
  static const char fn[] = "pto_dist_run_once";
  if (!p) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: program is NULL", fn);
  for (size_t i = 0; i < nargs; i++)
    if (args[i].kind == PTO_ARG_DIST_TENSOR)
      return pto_status_make(
          PTO_STATUS_INVALID_ARGUMENT,
          "%s: argument %zu is a resident tensor; a one-shot run opens and closes its "
          "own worker, so it cannot use tensors resident on another: open a "
          "pto_dist_worker and run on it",
          fn, i);
  if (!pto_program_is_host(p))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: the program's entry is not a host function", fn);
  pto_dist_config cfg;
  PTO_RETURN_IF_ERROR(read_config(cfg_in, &cfg, fn));
  cfg.ndevices = 0; /* the program's device set */
  cfg.device_ids = NULL;
  cfg.program = p;
  dworker *w = NULL;
  PTO_RETURN_IF_ERROR(dist_worker_open(&cfg, &w));
  pto_status s = w->root ? dist_worker_run(w, p, args, nargs) : PTO_OK; /* MPI: served */
  dist_worker_close(w);
  return s;
}

/* ---- resident and stacked tensors ------------------------------------------------------- */

/* MPI: posts the move of heap bytes [off, off + n) from rank 0's heap to chip r's (PUT) or back
 * (GET). Rank 0's chip shares the host's heap, and on one host every chip does. */
static pto_status sync_heap(dworker *w, int r, uint64_t off, uint64_t n, int get) {
  if (!w->mpi || r == 0 || !n) return PTO_OK;
  pto__dist_cmd *cmd = &w->cmd;
  memset(cmd, 0, sizeof *cmd);
  cmd->op = get ? PTO__DIST_CMD_GET : PTO__DIST_CMD_PUT;
  cmd->nargs = 1;
  cmd->args[0].addr = PTO__DIST_HEAP_BASE + off;
  cmd->args[0].scalar = n;
  return post(w, r, cmd, NULL);
}

/* A resident tensor's bytes, or a stacked tensor's shards, between rank 0 and their chips,
 * finished when this returns: every shard's move is posted before the one wait. */
static pto_status sync_tensor(dworker *w, const dtensor *t, int get) {
  if (!w->mpi) return PTO_OK;
  buffer *b = get_buffer(w, t->buf);
  if (!t->stacked) PTO_RETURN_IF_ERROR(sync_heap(w, t->owner, b->off, b->bytes, get));
  for (int i = 0; t->stacked && i < b->nshards; i++)
    PTO_RETURN_IF_ERROR(
        sync_heap(w, b->shard_dev[i], b->off + (uint64_t)i * b->shard_bytes, b->shard_bytes, get));
  return drain(w);
}

static pto_status new_tensor(dworker *w, int ndim, const int64_t *shape, pto_dtype dt, int owner,
                             int stacked, dtensor **out) {
  int ok;
  uint64_t nb = bytes_of(ndim, shape, (int32_t)dt, &ok);
  if (!ok) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "bad rank, shape or dtype");
  dtensor *t = pto_calloc(1, sizeof *t);
  if (!t) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  pto_status s = new_buffer(w, BUF_RESIDENT, nb, "a resident tensor", &t->buf);
  if (s) {
    free(t);
    return s;
  }
  t->token = pto__rt_obj_add_owned(PTO__RT_OBJ_DIST_TENSOR, t, w->token);
  if (!t->token) {
    free_buffer(w, t->buf);
    free(t);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  t->w = w;
  t->dtype = dt;
  t->rank = ndim;
  memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
  t->owner = owner;
  t->stacked = stacked;
  get_buffer(w, t->buf)->owner = owner;
  t->next = w->tensors;
  if (w->tensors) w->tensors->prev = t;
  w->tensors = t;
  *out = t;
  return PTO_OK;
}

/* The live tensor of w that token tt names (a stale token, even one whose memory was reused, is
 * recognised: the registry checks its generation). The messages are pto_worker's for its device
 * tensors (worker.c), with "tensor" for "device tensor": INVALID_ARGUMENT naming the call and
 * what is wrong. With freed_ok, a tensor freed already gives PTO_OK and *out NULL (freeing twice
 * is a no-op, as pto_worker_free_tensor's is). */
static pto_status mine_or_freed(dworker *w, const pto_dist_tensor *tt, const char *fn, int freed_ok,
                                dtensor **out) {
  if (!w->root) return not_root(w, fn);
  if (w->broken) return broken(w);
  pto__rt_gone gone;
  *out = pto__rt_obj_get(tt, PTO__RT_OBJ_DIST_TENSOR, &gone);
  if (*out && (*out)->w == w) return PTO_OK;
  if (!*out && freed_ok && gone == PTO__RT_GONE_FREED) return PTO_OK;
  if (*out) {
    *out = NULL;
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: the tensor belongs to another distributed worker; use it on the "
                           "worker that allocated it",
                           fn);
  }
  return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: %s", fn,
                         pto__rt_gone_text(gone, PTO__RT_OBJ_DIST_TENSOR));
}

static pto_status mine(dworker *w, const pto_dist_tensor *tt, const char *fn, dtensor **out) {
  return mine_or_freed(w, tt, fn, 0, out);
}

static pto_status dist_alloc_tensor(dworker *w, int ndim, const int64_t *shape, pto_dtype dt,
                                    const void *init, int worker_id, dtensor **out) {
  static const char fn[] = "pto_dist_alloc_tensor";
  if (!w || !out || !shape)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: NULL argument", fn);
  *out = NULL;
  if (!w->root) return not_root(w, fn);
  if (w->broken) return broken(w);
  if (worker_id < 0 || worker_id >= w->n)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: worker_id %d is out of range (0 to %d)", fn, worker_id, w->n - 1);
  pto_status s = new_tensor(w, ndim, shape, dt, worker_id, 0, out);
  if (s) return pto_status_annotate(s, "%s", fn);
  if (init)
    memcpy(w->heap + get_buffer(w, (*out)->buf)->off, init,
           (size_t)get_buffer(w, (*out)->buf)->bytes);
  if ((s = sync_tensor(w, *out, 0))) {
    pto_status_free(dist_free_tensor(w, *out));
    *out = NULL;
    return pto_status_annotate(s, "%s", fn);
  }
  return PTO_OK;
}

/* Shard i of host <-> shard i of t's buffer. */
/* A stacked tensor's host side (rank, dtype and shape checked) whose strides reach past int64 is
 * refused, as a launch refuses such a host tensor: stacked_copy's offsets would overflow. */
static pto_status host_strides_check(const pto_host_tensor *h, const char *fn) {
  int bad = pto__rt_host_strides_overflow(h);
  if (bad < 0) return PTO_OK;
  if (bad < h->rank)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: the host tensor's strides overflow (stride %lld of dim %d, "
                           "extent %lld)",
                           fn, (long long)h->strides[bad], bad, (long long)h->shape[bad]);
  return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: the host tensor's strides overflow", fn);
}

static void stacked_copy(dworker *w, const dtensor *t, const pto_host_tensor *host, int to_host) {
  buffer *b = get_buffer(w, t->buf);
  size_t eb = pto_dtype_size(host->dtype);
  for (int64_t i = 0; i < host->shape[0]; i++) {
    pto_host_tensor shard;
    memset(&shard, 0, sizeof shard);
    shard.data = (uint8_t *)host->data + i * host->strides[0] * (int64_t)eb;
    shard.dtype = host->dtype;
    shard.rank = host->rank - 1;
    memcpy(shard.shape, host->shape + 1, (size_t)shard.rank * sizeof *shard.shape);
    memcpy(shard.strides, host->strides + 1, (size_t)shard.rank * sizeof *shard.strides);
    copy_host(&shard, to_host, w->heap + b->off + (uint64_t)i * b->shard_bytes);
  }
}

static pto_status dist_alloc_stacked_tensor(dworker *w, const pto_host_tensor *host,
                                            const int *worker_ids, dtensor **out) {
  static const char fn[] = "pto_dist_alloc_stacked_tensor";
  if (!w || !out || !host)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: NULL argument", fn);
  *out = NULL;
  if (!w->root) return not_root(w, fn);
  if (w->broken) return broken(w);
  if (!host->data)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: the host tensor has no data (NULL)",
                           fn);
  if (host->rank < 2)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: a stacked tensor has rank >= 2 (shards along dim 0), got rank %d",
                           fn, host->rank);
  int64_t B = host->shape[0];
  if (B < 1)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: a stacked tensor has at least one shard", fn);
  if (!worker_ids && B > w->n) /* the default placement: shard i on device i */
    return pto_status_make(
        PTO_STATUS_INVALID_ARGUMENT,
        "%s: %lld shards with the default placement (worker_ids NULL: shard i on device "
        "i) need %lld devices, the worker has %d; pass worker_ids, or stack at most %d "
        "shards",
        fn, (long long)B, (long long)B, w->n, w->n);
  for (int64_t i = 0; worker_ids && i < B; i++) {
    if (worker_ids[i] < 0 || worker_ids[i] >= w->n)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "%s: worker_ids[%lld] = %d is out of range (0 to %d)", fn,
                             (long long)i, worker_ids[i], w->n - 1);
    for (int64_t j = 0; j < i; j++)
      if (worker_ids[j] == worker_ids[i])
        return pto_status_make(
            PTO_STATUS_INVALID_ARGUMENT,
            "%s: worker_ids[%lld] and worker_ids[%lld] are both %d; each shard goes to a "
            "different worker",
            fn, (long long)j, (long long)i, worker_ids[i]);
  }
  pto_status s = new_tensor(w, host->rank, host->shape, host->dtype, -1, 1, out);
  if (s) return pto_status_annotate(s, "%s", fn);
  dtensor *t = *out;
  if ((s = host_strides_check(host, fn))) {
    pto_status_free(dist_free_tensor(w, t));
    *out = NULL;
    return s;
  }
  buffer *b = get_buffer(w, t->buf);
  b->nshards = (int)B;
  b->shard_bytes = b->bytes / (uint64_t)B;
  for (int64_t i = 0; i < B; i++)
    b->shard_dev[i] = worker_ids ? worker_ids[i] : (int)i;
  stacked_copy(w, t, host, 0);
  if ((s = sync_tensor(w, t, 0))) { /* on failure nothing stays allocated */
    pto_status_free(dist_free_tensor(w, t));
    *out = NULL;
    return pto_status_annotate(s, "%s", fn);
  }
  return PTO_OK;
}

static pto_status dist_free_tensor(dworker *w, dtensor *t) {
  pto__rt_obj_remove(t->token, PTO__RT_GONE_FREED);
  free_buffer(w, t->buf);
  if (t->prev)
    t->prev->next = t->next;
  else
    w->tensors = t->next;
  if (t->next) t->next->prev = t->prev;
  free(t);
  return PTO_OK;
}

static pto_status check_bytes(dworker *w, dtensor *t, size_t n, const char *fn) {
  uint64_t have = get_buffer(w, t->buf)->bytes;
  if (n != have)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: %zu bytes given, the tensor has %llu",
                           fn, n, (unsigned long long)have);
  return PTO_OK;
}

static pto_status dist_copy_to(dworker *w, dtensor *t, const void *host, size_t n) {
  static const char fn[] = "pto_dist_copy_to";
  PTO_RETURN_IF_ERROR(check_bytes(w, t, n, fn));
  if (n && !host) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: host is NULL", fn);
  memcpy(w->heap + get_buffer(w, t->buf)->off, host, n);
  return sync_tensor(w, t, 0);
}

static pto_status dist_copy_from(dworker *w, void *host, dtensor *t, size_t n) {
  static const char fn[] = "pto_dist_copy_from";
  PTO_RETURN_IF_ERROR(check_bytes(w, t, n, fn));
  if (n && !host) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: host is NULL", fn);
  PTO_RETURN_IF_ERROR(sync_tensor(w, t, 1));
  memcpy(host, w->heap + get_buffer(w, t->buf)->off, n);
  return PTO_OK;
}

static pto_status dist_copy_stacked_from(dworker *w, dtensor *t, const pto_host_tensor *out) {
  static const char fn[] = "pto_dist_copy_stacked_from";
  if (!out) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: out is NULL", fn);
  if (!t->stacked)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: the tensor is not stacked (it is resident on worker %d): copy "
                           "it with pto_dist_copy_from",
                           fn, t->owner);
  if (out->dtype != t->dtype || out->rank != t->rank ||
      memcmp(out->shape, t->shape, (size_t)t->rank * sizeof *t->shape) != 0)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: the host tensor must have the stacked tensor's dtype and shape",
                           fn);
  if (!out->data)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: the host tensor has no data (NULL)",
                           fn);
  PTO_RETURN_IF_ERROR(host_strides_check(out, fn));
  PTO_RETURN_IF_ERROR(sync_tensor(w, t, 1));
  stacked_copy(w, t, out, 1);
  return PTO_OK;
}

/* ---- the public API: tokens ------------------------------------------------------------- */

/* The worker a token names, pinned until leave(): a close on another thread waits until the call
 * has returned. With exclusive, the call also takes the worker for itself (its state is one
 * thread's at a time): a second thread's call is refused, never interleaved. Submitted runs end
 * first (they stay ordered before what this call does); an exclusive call waits for them once it
 * holds the worker, when no submit (itself exclusive) can queue another. exclusive ENTER_QUEUE:
 * a submit, which takes the worker to queue a run, and does not wait for the queue. */
enum { ENTER_QUEUE = 2 };
static pto_status enter(const pto_dist_worker *wt, const char *fn, int exclusive, dworker **out,
                        uint32_t *out_pin) {
  pto__rt_gone gone;
  *out = pto__rt_obj_pin(wt, PTO__RT_OBJ_DIST_WORKER, &gone, out_pin);
  if (!*out)
    return pto_status_make(pto__rt_gone_code(gone, PTO_STATUS_FAILED_PRECONDITION), "%s: %s", fn,
                           pto__rt_gone_text(gone, PTO__RT_OBJ_DIST_WORKER));
  int idle = 0;
  if (!exclusive ||
      __atomic_compare_exchange_n(&(*out)->busy, &idle, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    if (exclusive != ENTER_QUEUE) pto__rt_async_wait_idle((*out)->async);
    return PTO_OK;
  }
  pto__rt_obj_unpin(*out_pin);
  *out = NULL;
  return pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                         "%s: another thread is inside a call on this distributed worker; its API "
                         "is one thread at a time (serialize the calls, or open a worker per "
                         "thread)",
                         fn);
}

static pto_status leave(dworker *w, int exclusive, uint32_t pin, pto_status s) {
  if (exclusive) __atomic_store_n(&w->busy, 0, __ATOMIC_RELEASE);
  pto__rt_obj_unpin(pin);
  return s;
}

int pto_dist_worker_device_count(const pto_dist_worker *wt) {
  const dworker *w = pto__rt_obj_get(wt, PTO__RT_OBJ_DIST_WORKER, NULL);
  return dist_worker_device_count(w);
}

int pto_dist_worker_is_root(const pto_dist_worker *wt) {
  return dist_worker_is_root(pto__rt_obj_get(wt, PTO__RT_OBJ_DIST_WORKER, NULL));
}

const char *pto_dist_worker_transport(const pto_dist_worker *wt) {
  return dist_worker_transport(pto__rt_obj_get(wt, PTO__RT_OBJ_DIST_WORKER, NULL));
}

int pto_dist_worker_chip_pid(const pto_dist_worker *wt, int rank) {
  dworker *w;
  uint32_t pin;
  pto_status s = enter(wt, "pto_dist_worker_chip_pid", 0, &w, &pin);
  if (s) {
    pto_status_free(s);
    return -1;
  }
  int pid = dist_worker_chip_pid(w, rank);
  pto__rt_obj_unpin(pin);
  return pid;
}

pto_status pto_dist_worker_open(const pto_dist_config *cfg, pto_dist_worker **out_worker) {
  dworker *w = NULL;
  pto_status s = dist_worker_open(cfg, out_worker ? &w : NULL);
  if (out_worker) *out_worker = w ? w->token : NULL;
  return s;
}

void pto_dist_worker_close(pto_dist_worker *wt) {
  dworker *w = pto__rt_obj_get(wt, PTO__RT_OBJ_DIST_WORKER, NULL);
  /* Closed already (a no-op, also when its memory was reused); or the calls of other threads end
   * first, later ones fail, and of two threads closing it one does. */
  if (!w || !pto__rt_obj_retire_wait(wt, PTO__RT_GONE_CLOSED)) return;
  pto__rt_async_end(&w->async); /* submitted runs end first (issue #34: close waits for runs) */
  dist_worker_close(w);
}

pto_status pto_dist_worker_run(pto_dist_worker *wt, const pto_program *p, const pto_arg *args,
                               size_t nargs) {
  dworker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, "pto_dist_worker_run", 1, &w, &pin));
  return leave(w, 1, pin, dist_worker_run(w, p, args, nargs));
}

/* The dispatcher's run of a submitted job: the worker is the queue's (enter waits for it). */
static pto_status run_submitted(void *ctx, void *what, const pto_arg *args, size_t nargs) {
  return dist_worker_run(ctx, what, args, nargs);
}

static void release_submitted(void *ctx, void *what) {
  (void)ctx;
  pto_program_release(what);
}

pto_status pto_dist_worker_submit(pto_dist_worker *wt, const pto_program *p, const pto_arg *args,
                                  size_t nargs, pto_completion **out_completion) {
  static const char fn[] = "pto_dist_worker_submit";
  if (!out_completion)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: out_completion is NULL", fn);
  *out_completion = NULL;
  dworker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, fn, ENTER_QUEUE, &w, &pin));
  if (!p) p = w->program;
  if (!p)
    return leave(w, 1, pin,
                 pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                                 "%s: program is NULL, and this worker was opened without one "
                                 "(multi-program mode): name the program to run",
                                 fn));
  if (!w->root) return leave(w, 1, pin, not_root(w, fn));
  /* An L2 program fails the submit; what the run checks (device set, arguments) its completion. */
  if (!pto_program_is_host(p))
    return leave(w, 1, pin,
                 pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                                 "%s: the program's entry is not a host function; submit an L2 "
                                 "program on a pto_worker (pto_handle_submit)",
                                 fn));
  const pto__rt_async_owner owner = {fn, run_submitted, release_submitted, w};
  pto_program_retain((pto_program *)p); /* until its run has ended */
  pto_status s = pto__rt_async_post(&w->async, &owner, (void *)p, args, nargs, out_completion);
  if (s) pto_program_release((pto_program *)p);
  return leave(w, 1, pin, s);
}

pto_status pto_dist_worker_call(pto_dist_worker *wt, const pto_arg *args, size_t nargs) {
  dworker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, "pto_dist_worker_call", 1, &w, &pin));
  return leave(w, 1, pin, dist_worker_call(w, args, nargs));
}

pto_status pto_dist_worker_last_run(const pto_dist_worker *wt, pto_dist_run_record *out_record) {
  if (!out_record)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_dist_worker_last_run: out_record is NULL");
  dworker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, "pto_dist_worker_last_run", 0, &w, &pin));
  return leave(w, 0, pin, dist_worker_last_run(w, out_record));
}

pto_status pto_dist_alloc_tensor(pto_dist_worker *wt, int ndim, const int64_t *shape, pto_dtype dt,
                                 const void *init, int worker_id, pto_dist_tensor **out_tensor) {
  if (out_tensor) *out_tensor = NULL;
  dworker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, "pto_dist_alloc_tensor", 1, &w, &pin));
  dtensor *t = NULL;
  pto_status s = dist_alloc_tensor(w, ndim, shape, dt, init, worker_id, out_tensor ? &t : NULL);
  if (out_tensor && t) *out_tensor = t->token;
  return leave(w, 1, pin, s);
}

pto_status pto_dist_alloc_stacked_tensor(pto_dist_worker *wt, const pto_host_tensor *host,
                                         const int *worker_ids, pto_dist_tensor **out_tensor) {
  if (out_tensor) *out_tensor = NULL;
  dworker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, "pto_dist_alloc_stacked_tensor", 1, &w, &pin));
  dtensor *t = NULL;
  pto_status s = dist_alloc_stacked_tensor(w, host, worker_ids, out_tensor ? &t : NULL);
  if (out_tensor && t) *out_tensor = t->token;
  return leave(w, 1, pin, s);
}

pto_status pto_dist_free_tensor(pto_dist_worker *wt, pto_dist_tensor *tt) {
  static const char fn[] = "pto_dist_free_tensor";
  dworker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, fn, 1, &w, &pin));
  dtensor *t;
  pto_status s = mine_or_freed(w, tt, fn, 1, &t);
  return leave(w, 1, pin, s ? s : t ? dist_free_tensor(w, t) : PTO_OK);
}

pto_status pto_dist_copy_to(pto_dist_worker *wt, pto_dist_tensor *tt, const void *host,
                            size_t nbytes) {
  static const char fn[] = "pto_dist_copy_to";
  dworker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, fn, 1, &w, &pin));
  dtensor *t;
  pto_status s = mine(w, tt, fn, &t);
  return leave(w, 1, pin, s ? s : dist_copy_to(w, t, host, nbytes));
}

pto_status pto_dist_copy_from(pto_dist_worker *wt, void *host, pto_dist_tensor *tt, size_t nbytes) {
  static const char fn[] = "pto_dist_copy_from";
  dworker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, fn, 1, &w, &pin));
  dtensor *t;
  pto_status s = mine(w, tt, fn, &t);
  return leave(w, 1, pin, s ? s : dist_copy_from(w, host, t, nbytes));
}

pto_status pto_dist_copy_stacked_from(pto_dist_worker *wt, pto_dist_tensor *tt,
                                      const pto_host_tensor *out) {
  static const char fn[] = "pto_dist_copy_stacked_from";
  dworker *w;
  uint32_t pin;
  PTO_RETURN_IF_ERROR(enter(wt, fn, 1, &w, &pin));
  dtensor *t;
  pto_status s = mine(w, tt, fn, &t);
  return leave(w, 1, pin, s ? s : dist_copy_stacked_from(w, t, out));
}
