/* The distributed (L3) worker on one host (pto/dist.h).
 *
 * Prepare maps two MAP_SHARED regions, then forks one chip per rank before any thread of ours
 * exists: a control region (pto__dist_shared: windows, one command ring per chip) and the
 * shared heap, which holds every tensor the host level sees. Each chip opens a sim worker with
 * its own core pool, maps the heap into its device address space as an external region, and
 * serves its ring: LOAD a callee work dir (register it), RUN a registered callee on heap tensors,
 * EXIT. The parent runs the program's host code; each call is posted to its chip's ring with the
 * commands of other chips it must follow (earlier calls touching overlapping bytes, one of them
 * writing); a chip runs its own commands in order, so a rank's wait never overtakes its send.
 *
 * Waits are bounded everywhere: the parent sleeps on futexes in slices and checks that its chips
 * are alive; a chip that dies is reported with its rank and signal, and the worker is then
 * broken: later calls fail with that message. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
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
  int kind; /* 0: free slot */
  uint64_t off, bytes;  /* heap offset and size (a window: all ranks' slices) */
  int window;           /* index in sh->windows, or -1 */
  uint64_t win_stride, win_bytes; /* a window: rank slices' stride and size */
  int owner;            /* a resident tensor: the rank it lives on; -1 otherwise */
  uint64_t shard_bytes; /* a stacked tensor: bytes per device slot (slot d lives on device d) */
  int arena;            /* MPI: a window, at offset off of every rank's arena (not the heap) */
  acc_rec *acc;
  size_t nacc, capacc;
} buffer;

struct pto_dist_tensor {
  pto_dist_worker *w;
  uint32_t buf; /* buffer id */
  pto_dtype dtype;
  int rank;
  int64_t shape[PTO_MAX_RANK];
  int owner;    /* rank, or -1 for a stacked tensor */
  int stacked;
  int slot_of[PTO__DIST_MAX_RANKS]; /* stacked: shard i lives in device slot slot_of[i] */
  pto_dist_tensor *prev, *next;
};

typedef struct loaded {
  const pto_program *p; /* retained */
  int first_slot;       /* callee i is slot first_slot + i on every chip */
} loaded;

typedef struct chip_state chip_state;

struct pto_dist_worker {
  int n;
  /* the MPI transport: this process is MPI rank `rank`; only rank 0 (root) runs host code */
  pto__dist_mpi *mpi;
  int rank, root;
  pto__rt_devmem win_alloc; /* rank 0: the window arena's offsets */
  int win_alloc_ok;
  pthread_t chip0;          /* rank 0: its chip's thread */
  int chip0_started;
  chip_state *chip0_state;
  int32_t ids[PTO__DIST_MAX_RANKS];
  pto__dist_shared *sh;
  size_t sh_bytes;
  uint8_t *heap;
  uint64_t heap_size;
  pto__rt_devmem alloc; /* the parent's allocator over the heap */
  buffer *bufs;
  size_t nbufs;
  pto_dist_tensor *tensors;
  loaded *progs;
  size_t nprogs;
  int nslots;
  uint32_t io_buf[64]; /* per host parameter: its heap buffer, reused while the size fits */
  int broken;
  char why[PTO__DIST_MSG];
  /* the run in progress, and what it dispatched */
  const pto_program *run_prog;
  struct posted {
    int rank, callee, slot;
    uint32_t seq;
  } *posted;
  size_t nposted, capposted;
  int per_rank[PTO__DIST_MAX_RANKS];
  pto_dist_dispatch *disp;
  size_t capdisp;
  pto_dist_run_record last;
  int have_last;
  uint64_t nruns;
  const pto_program *program; /* single-program mode, retained */
  int strace;                 /* PTO_LOG_LEVEL=timing at open, as an L2 worker reads it */
  pto__dist_cmd cmd;          /* the command being built (large: kept off the stack) */
  char **names; /* interned span names */
  size_t nnames;
  char fatal[PTO__DIST_MSG];
  int32_t fatal_code;
};

void pto_dist_config_init(pto_dist_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->sz = sizeof *cfg;
}

int pto_dist_worker_device_count(const pto_dist_worker *w) { return w ? w->n : -1; }
const char *pto_dist_transports(void) { return PTO_MPI ? "shm, mpi" : "shm"; }
int pto_dist_worker_is_root(const pto_dist_worker *w) { return w ? w->root : 0; }
const char *pto_dist_worker_transport(const pto_dist_worker *w) {
  if (!w) return "?";
  if (!w->mpi) return "shm";
  return pto__dist_mpi_is_shared(w->mpi) ? "mpi (shared windows)" : "mpi (one-sided windows)";
}
int pto_dist_worker_chip_pid(const pto_dist_worker *w, int rank) {
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

/* A chip: its sim worker, transport and registered callees. */
struct chip_state {
  pto__dist_shared *sh;
  pto__dist_chip *c;
  int rank;
  pto_worker *wk;
  pto__dist_shm tr;
  int nslots;
  chip_slot slots[256];
};

static void chip_fail_cmd(pto__dist_chip *c, uint32_t seq, const char *msg, const char *detail) {
  uint32_t expect = 0;
  if (atomic_compare_exchange_strong(&c->failed, &expect, seq + 1))
    snprintf(c->msg, sizeof c->msg, "%s%s%s", msg, detail && *detail ? ": " : "",
             detail ? detail : "");
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
      pto__dist_futex_wait(&o->tail, t, 2000);
    }
  }
  return 0;
}

static void chip_run(pto__dist_shared *sh, pto__dist_chip *c, pto_worker *wk, pto__dist_shm *tr,
                     chip_slot *slots, int nslots, const pto__dist_cmd *cmd, uint32_t seq) {
  if (cmd->slot < 0 || cmd->slot >= nslots) {
    chip_fail_cmd(c, seq, "a call to a program this chip has not loaded", NULL);
    return;
  }
  if (wait_deps(sh, cmd)) {
    chip_fail_cmd(c, seq, "a call whose inputs come from a chip that died", NULL);
    return;
  }
  const pto_signature *sig = pto_program_signature(slots[cmd->slot].p);
  pto_arg args[PTO__DIST_MAX_ARGS];
  pto_device_tensor *wrapped[PTO__DIST_MAX_ARGS];
  int nw = 0;
  pto_status s = PTO_OK;
  for (int i = 0; i < cmd->nargs && !s; i++) {
    const pto__dist_arg *a = &cmd->args[i];
    if (a->kind == PTO_ORCH_ARG_SCALAR) {
      pto_dtype dt = i < sig->nparams ? sig->params[i].dtype : PTO_DTYPE_I64;
      args[i] = pto_arg_scalar(pto_scalar_from_slot(dt, a->scalar));
    } else {
      s = pto__rt_worker_wrap(wk, a->addr, a->rank, a->shape, (pto_dtype)a->dtype, &wrapped[nw]);
      if (!s) args[i] = pto_arg_device(wrapped[nw++]);
    }
  }
  tr->detail[0] = '\0';
  if (!s) s = pto_handle_call(slots[cmd->slot].h, args, (size_t)cmd->nargs);
  pto_launch_record lr;
  pto__dist_rec *rec = &c->recs[seq % PTO__DIST_RECS];
  if (!pto_status_ok_free(pto_worker_last_launch(wk, &lr))) memset(&lr, 0, sizeof lr);
  rec->ok = !s;
  rec->hid = lr.hid;
  rec->ntasks = lr.ntasks;
  rec->nspans = lr.nspans;
  for (int i = 0; i < lr.nspans && i < PTO_LAUNCH_MAX_SPANS; i++) {
    snprintf(rec->spans[i].name, sizeof rec->spans[i].name, "%s", lr.spans[i].name);
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
    chip_fail_cmd(c, seq, head, tr->detail);
    pto_status_free(s);
  }
  for (int i = 0; i < nw; i++) pto_status_free(pto_worker_free_tensor(wk, wrapped[i]));
}

/* Opens rank's chip; on failure returns the message (in c->msg). */
static int chip_open(chip_state *cs, pto__dist_shared *sh, int rank, const pto_dist_config *cfg) {
  memset(cs, 0, sizeof *cs);
  cs->sh = sh;
  cs->rank = rank;
  cs->c = &sh->chips[rank];
  pto_run_config rc;
  pto_run_config_init(&rc);
  rc.ncores = cfg->ncores_per_chip;
  rc.device_memory_bytes = cfg->chip_memory_bytes ? cfg->chip_memory_bytes : 256ull << 20;
  pto_status s = pto_worker_open(&rc, &cs->wk);
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
  return 0;
}

static void chip_close(chip_state *cs) {
  if (cs->wk) pto_worker_close(cs->wk);
  for (int i = 0; i < cs->nslots; i++) pto_program_release(cs->slots[i].p);
  pto__dist_shm_fini(&cs->tr);
}

/* LOAD or RUN, as command seq of this chip. */
static void chip_exec(void *ctx, const pto__dist_cmd *cmd, uint32_t seq) {
  chip_state *cs = ctx;
  pto__dist_chip *c = cs->c;
  if (cmd->op == PTO__DIST_CMD_RUN) {
    chip_run(cs->sh, c, cs->wk, &cs->tr, cs->slots, cs->nslots, cmd, seq);
    return;
  }
  if (cmd->op != PTO__DIST_CMD_LOAD) return;
  pto_program *p = NULL;
  pto_handle *hd = NULL;
  pto_status s = cs->nslots >= 256
                     ? pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "too many programs on one chip")
                     : pto_program_load_dir(cmd->path, &p);
  if (!s) s = pto_worker_register(cs->wk, p, &hd);
  if (s) {
    char head[PTO__DIST_MSG];
    snprintf(head, sizeof head, "rank %d: loading %s: %s", cs->rank, cmd->path,
             pto_status_message(s));
    chip_fail_cmd(c, seq, head, NULL);
    pto_status_free(s);
    if (p) pto_program_release(p);
    atomic_store(&c->last_slot, -1);
  } else {
    cs->slots[cs->nslots].p = p;
    cs->slots[cs->nslots].h = hd;
    atomic_store(&c->last_slot, cs->nslots++);
  }
}

/* Serves the chip's ring until EXIT; parent > 0: a forked chip, which exits when its parent
 * has gone. */
static void chip_loop(chip_state *cs, pid_t parent) {
  pto__dist_chip *c = cs->c;
  for (;;) {
    uint32_t t = atomic_load_explicit(&c->tail, memory_order_relaxed);
    int spins = 0;
    /* Idle: yield a while, then sleep. No busy spin, here or in the parent's waits: measured on
     * 2 cores, spinning slowed a one-call run from ~90 to ~110-160 us (it takes the core the
     * working chip's threads need). */
    while (atomic_load_explicit(&c->head, memory_order_acquire) == t) {
      if (parent > 0 && getppid() != parent) _exit(1);
      if (++spins < 200)
        sched_yield();
      else
        pto__dist_futex_wait(&c->head, t, 100000);
    }
    const pto__dist_cmd *cmd = &c->ring[t % PTO__DIST_RING];
    if (cmd->op == PTO__DIST_CMD_EXIT) break;
    chip_exec(cs, cmd, t); /* PUT and GET: rank 0's chip shares the host's heap */
    atomic_store_explicit(&c->tail, t + 1, memory_order_release);
    pto__dist_futex_wake(&c->tail);
  }
}

static void chip_main(pto__dist_shared *sh, int rank, const pto_dist_config *cfg, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  pto__dist_chip *c = &sh->chips[rank];
  c->pid = (int32_t)getpid();
  pto__rt_set_strace_rank(rank);
  static chip_state cs;
  if (chip_open(&cs, sh, rank, cfg)) {
    atomic_store(&c->state, 2);
    pto__dist_futex_wake(&c->state);
    _exit(1);
  }
  atomic_store(&c->state, 1);
  pto__dist_futex_wake(&c->state);
  chip_loop(&cs, parent);
  chip_close(&cs);
  atomic_store(&c->state, 3);
  _exit(0);
}

/* MPI rank 0's chip: a thread of the host's process (no fork under MPI). */
typedef struct chip0_args {
  chip_state *cs;
  pto__dist_shared *sh;
  pto_dist_config cfg;
} chip0_args;

static void *chip0_main(void *arg) {
  chip0_args *a = arg;
  pto__dist_chip *c = &a->sh->chips[0];
  if (chip_open(a->cs, a->sh, 0, &a->cfg)) {
    atomic_store(&c->state, 2);
    pto__dist_futex_wake(&c->state);
    free(a);
    return NULL;
  }
  atomic_store(&c->state, 1);
  pto__dist_futex_wake(&c->state);
  chip_loop(a->cs, 0);
  chip_close(a->cs);
  atomic_store(&c->state, 3);
  free(a);
  return NULL;
}

/* ---- the parent: chips ------------------------------------------------------------------ */

static void describe_exit(char *buf, size_t n, int status) {
  if (WIFSIGNALED(status))
    snprintf(buf, n, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  else
    snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
}

/* Marks the worker broken if a chip has died; returns 1 then. */
static int check_chips(pto_dist_worker *w) {
  if (w->broken) return 1;
  if (w->mpi) return 0; /* no children: MPI's runtime reports (and ends) a job whose rank died */
  for (int r = 0; r < w->n; r++) {
    pto__dist_chip *c = &w->sh->chips[r];
    int status;
    if (c->pid > 0 && waitpid(c->pid, &status, WNOHANG) == c->pid) {
      char how[128];
      describe_exit(how, sizeof how, status);
      snprintf(w->why, sizeof w->why,
               "chip rank %d (device %d, pid %d) %s; the distributed worker is unusable: close "
               "it and open another",
               r, (int)w->ids[r], (int)c->pid, how);
      c->pid = -1;
      atomic_store(&c->state, 3);
      w->broken = 1;
      return 1;
    }
  }
  return 0;
}

static pto_status not_root(const pto_dist_worker *w, const char *fn) {
  return pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                         "%s: this process is MPI rank %d, which served rank 0's chip commands "
                         "until rank 0 closed the worker; only rank 0 runs host programs and owns "
                         "tensors (see pto_dist_worker_is_root)",
                         fn, w->rank);
}

static pto_status broken(const pto_dist_worker *w) {
  return pto_status_make(PTO_STATUS_FAILED_PRECONDITION, "%s", w->why);
}

/* Waits until chip r has finished command seq - 1 (tail >= seq). */
#ifndef PTO__DIST_WAIT_YIELDS
#define PTO__DIST_WAIT_YIELDS 32
#endif
static pto_status wait_tail(pto_dist_worker *w, int r, uint32_t seq) {
  pto__dist_chip *c = &w->sh->chips[r];
  for (int i = 0;; i++) {
    uint32_t t = atomic_load_explicit(&c->tail, memory_order_acquire);
    if ((int32_t)(t - seq) >= 0) return PTO_OK;
    /* A short call ends within microseconds: yield a few times before the liveness check (one
     * waitpid per chip) and the futex sleep, whose wake-up is the slowest step of a call. */
    if (i < PTO__DIST_WAIT_YIELDS) {
      sched_yield();
      continue;
    }
    if (check_chips(w)) return broken(w);
    pto__dist_futex_wait(&c->tail, t, 20000);
  }
}

static pto_status post(pto_dist_worker *w, int r, const pto__dist_cmd *cmd, uint32_t *out_seq) {
  pto__dist_chip *c = &w->sh->chips[r];
  uint32_t h = atomic_load_explicit(&c->head, memory_order_relaxed);
  PTO_RETURN_IF_ERROR(wait_tail(w, r, h - PTO__DIST_RING + 1)); /* a free ring slot */
  memcpy(&c->ring[h % PTO__DIST_RING], cmd, sizeof *cmd);
  atomic_store_explicit(&c->head, h + 1, memory_order_release);
  pto__dist_futex_wake(&c->head);
  if (w->mpi) {
    atomic_fetch_add(&w->sh->bell, 1);
    pto__dist_futex_wake(&w->sh->bell);
  }
  if (out_seq) *out_seq = h + 1; /* done once tail >= h + 1 */
  return PTO_OK;
}

/* Waits for every chip to finish what was posted; reports the first failed command. */
static pto_status drain(pto_dist_worker *w) {
  for (int r = 0; r < w->n; r++)
    PTO_RETURN_IF_ERROR(wait_tail(w, r, atomic_load(&w->sh->chips[r].head)));
  for (int r = 0; r < w->n; r++) {
    pto__dist_chip *c = &w->sh->chips[r];
    if (atomic_load(&c->failed)) {
      pto_status s = pto_status_make(PTO_STATUS_INTERNAL, "%s", c->msg);
      for (int q = 0; q < w->n; q++) atomic_store(&w->sh->chips[q].failed, 0);
      return s;
    }
  }
  return PTO_OK;
}

/* Under MPI every rank opens: rank 0 gets the worker that runs host programs; the others serve
 * their chip's commands here until rank 0 closes it, then return a worker that only closes. */
static pto_status open_mpi(pto_dist_worker *w, const pto_dist_config *cfg) {
  static const char fn[] = "pto_dist_worker_open";
  char err[PTO__DIST_MSG];
  uint64_t arena = cfg->window_bytes;
  const char *e = getenv("PTO_DIST_WINDOW_BYTES");
  if (!arena && e && strtoull(e, NULL, 10) > 0) arena = strtoull(e, NULL, 10);
  arena = arena ? (arena + 4095) & ~4095ull : 64ull << 20;
  int rank = 0, size = 0;
  if (pto__dist_mpi_open(arena, getenv("PTO_MPI_WINDOWS"), &w->mpi, &rank, &size, err, sizeof err))
    return pto_status_make(PTO_STATUS_INTERNAL, "%s: the MPI transport: %s", fn, err);
  w->rank = rank;
  w->root = rank == 0;
  if (size != w->n)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: the device set has %d device%s but the MPI world has %d rank%s; "
                           "every MPI rank hosts one chip: launch with mpirun -np %d, or give "
                           "the program %d devices (--devices %d)",
                           fn, w->n, w->n == 1 ? "" : "s", size, size == 1 ? "" : "s", w->n, size,
                           size);
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
  for (int q = 0; q < w->n; q++) sh->arena[q] = pto__dist_mpi_arena(w->mpi, q);
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
  PTO_RETURN_IF_ERROR(pto__rt_devmem_init_over(&w->alloc, w->heap, w->heap_size, PTO__DIST_HEAP_BASE));
  PTO_RETURN_IF_ERROR(pto__rt_devmem_init_over(&w->win_alloc, sh->arena[0], arena, PTO__DIST_WIN_BASE));
  w->win_alloc_ok = 1;
  if (pto__dist_mpi_proxy_start(w->mpi, sh, err, sizeof err))
    return pto_status_make(PTO_STATUS_INTERNAL, "%s: the MPI transport: %s", fn, err);
  chip0_args *a = pto_calloc(1, sizeof *a);
  w->chip0_state = pto_malloc(sizeof *w->chip0_state);
  if (!a || !w->chip0_state) {
    free(a);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  a->cs = w->chip0_state;
  a->sh = sh;
  a->cfg = *cfg;
  if (pthread_create(&w->chip0, NULL, chip0_main, a)) {
    free(a);
    return pto_status_make(PTO_STATUS_INTERNAL, "%s: starting rank 0's chip: %s", fn, strerror(errno));
  }
  w->chip0_started = 1;
  uint32_t st;
  while ((st = atomic_load(&sh->chips[0].state)) == 0) pto__dist_futex_wait(&sh->chips[0].state, 0, 20000);
  if (st == 2) return pto_status_make(PTO_STATUS_INTERNAL, "%s: %s", fn, sh->chips[0].msg);
  return PTO_OK;
}

pto_status pto_dist_worker_open(const pto_dist_config *cfg_in, pto_dist_worker **out) {
  static const char fn[] = "pto_dist_worker_open";
  if (!out) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: out_worker is NULL", fn);
  *out = NULL;
  pto_dist_config cfg;
  pto_dist_config_init(&cfg);
  if (cfg_in) memcpy(&cfg, cfg_in, cfg_in->sz < sizeof cfg ? cfg_in->sz : sizeof cfg);
  cfg.sz = sizeof cfg;
  int32_t program_ids[PTO__DIST_MAX_RANKS];
  if (cfg.ndevices == 0 && cfg.program) { /* single-program mode: the program's device set */
    if (!pto_program_is_host(cfg.program))
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "%s: the program's entry is not a host function", fn);
    cfg.ndevices = pto_program_device_count(cfg.program);
    for (int r = 0; r < cfg.ndevices && r < PTO__DIST_MAX_RANKS; r++)
      program_ids[r] = pto_program_device_id(cfg.program, r);
    cfg.device_ids = program_ids;
  }
  if (cfg.ndevices < 1 || cfg.ndevices > PTO__DIST_MAX_RANKS)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: ndevices %d is out of range (1 to %d)", fn,
                cfg.ndevices, PTO__DIST_MAX_RANKS);
  if (!cfg.transport) cfg.transport = getenv("PTO_DIST_TRANSPORT");
  if (cfg.transport && !*cfg.transport) cfg.transport = NULL;
  int use_mpi = cfg.transport && strcmp(cfg.transport, "mpi") == 0;
  if (cfg.transport && !use_mpi && strcmp(cfg.transport, "shm") != 0)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: unknown transport '%s' (this build has: %s)", fn, cfg.transport,
                           PTO_MPI ? "shm, mpi" : "shm");
  if (use_mpi && !PTO_MPI)
    return pto_status_make(PTO_STATUS_UNIMPLEMENTED,
                           "%s: transport 'mpi' is not in this build (configure pto with "
                           "-DPTO_MPI=ON; this build has: shm)",
                           fn);
  for (int r = 0; r < cfg.ndevices && cfg.device_ids; r++) {
    if (cfg.device_ids[r] < 0)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: device id %d of rank %d is negative", fn,
                  (int)cfg.device_ids[r], r);
    for (int q = 0; q < r; q++)
      if (cfg.device_ids[q] == cfg.device_ids[r])
        return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                    "%s: device id %d is given twice (ranks %d and %d)", fn,
                    (int)cfg.device_ids[r], q, r);
  }
  pto_dist_worker *w = pto_calloc(1, sizeof *w);
  if (!w) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
  w->n = cfg.ndevices;
  for (int r = 0; r < w->n; r++) w->ids[r] = cfg.device_ids ? cfg.device_ids[r] : r;
  const char *level = getenv("PTO_LOG_LEVEL");
  w->strace = level && strcasecmp(level, "timing") == 0;
  if (cfg.program) {
    w->program = cfg.program;
    pto_program_retain((pto_program *)w->program);
  }
  if (!cfg.ncores_per_chip) {
    long cpus = pto__rt_usable_cpus();
    cfg.ncores_per_chip = cpus / w->n > 1 ? (int)(cpus / w->n) : 1;
  }
  if (!cfg.wait_timeout_ms) {
    const char *e = getenv("PTO_DIST_TIMEOUT_MS");
    cfg.wait_timeout_ms = e && atoi(e) > 0 ? (uint32_t)atoi(e) : 5000;
  }
  w->heap_size = cfg.shared_heap_bytes ? (cfg.shared_heap_bytes + 4095) & ~4095ull : 1ull << 30;
  w->root = 1;
  if (use_mpi) {
    pto_status ms = open_mpi(w, &cfg);
    if (ms) {
      pto_dist_worker_close(w);
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
    pto_status s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: cannot map %llu bytes of shared memory: %s",
                        fn, (unsigned long long)w->heap_size, strerror(errno));
    if (w->sh != MAP_FAILED) munmap(w->sh, w->sh_bytes);
    if (w->heap != MAP_FAILED) munmap(w->heap, (size_t)w->heap_size);
    free(w);
    return s;
  }
  w->sh->nranks = w->n;
  w->sh->timeout_ms = cfg.wait_timeout_ms;
  w->sh->heap = w->heap;
  w->sh->heap_size = w->heap_size;
  pto_status s = pto__rt_devmem_init_over(&w->alloc, w->heap, w->heap_size, PTO__DIST_HEAP_BASE);
  if (s) {
    munmap(w->sh, w->sh_bytes);
    munmap(w->heap, (size_t)w->heap_size);
    free(w);
    return s;
  }
  fflush(NULL); /* no buffered output is written twice */
  pid_t parent = getpid();
  for (int r = 0; r < w->n; r++) {
    pid_t pid = fork();
    if (pid == 0) chip_main(w->sh, r, &cfg, parent);
    if (pid < 0) {
      snprintf(w->why, sizeof w->why, "%s: fork of chip rank %d: %s", fn, r, strerror(errno));
      w->broken = 1;
      break;
    }
    w->sh->chips[r].pid = pid;
  }
  for (int r = 0; r < w->n && !w->broken; r++) {
    pto__dist_chip *c = &w->sh->chips[r];
    uint32_t st;
    while ((st = atomic_load(&c->state)) == 0 && !check_chips(w))
      pto__dist_futex_wait(&c->state, 0, 20000);
    if (st == 2) {
      snprintf(w->why, sizeof w->why, "%s", c->msg);
      w->broken = 1;
    }
  }
  if (w->broken) {
    s = pto_status_make(PTO_STATUS_INTERNAL, "%s: %s", fn, w->why);
    pto_dist_worker_close(w);
    return s;
  }
  *out = w;
  return PTO_OK;
}

static void free_buffer(pto_dist_worker *w, uint32_t id);

void pto_dist_worker_close(pto_dist_worker *w) {
  if (!w) return;
  pto__dist_cmd cmd;
  memset(&cmd, 0, sizeof cmd);
  cmd.op = PTO__DIST_CMD_EXIT;
  for (int r = 0; w->sh && w->root && r < w->n; r++) { /* EXIT to every live chip, a broken worker's survivors too */
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
    if (w->chip0_started) pthread_join(w->chip0, NULL);
    pto__dist_mpi_proxy_join(w->mpi);
    pto__dist_mpi_close(w->mpi);
  }
  for (int r = 0; !w->mpi && r < w->n; r++) {
    pto__dist_chip *c = &w->sh->chips[r];
    if (c->pid <= 0) continue;
    int status, done = 0;
    for (int i = 0; i < 5000 && !done; i++) { /* 5 s, then it is killed */
      if (waitpid(c->pid, &status, WNOHANG) == c->pid) done = 1;
      else {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
      }
    }
    if (!done) {
      kill(c->pid, SIGKILL);
      waitpid(c->pid, &status, 0);
    }
    c->pid = -1;
  }
  while (w->tensors) {
    pto_dist_tensor *t = w->tensors;
    w->tensors = t->next;
    free(t);
  }
  for (size_t i = 0; i < w->nbufs; i++) free(w->bufs[i].acc);
  free(w->bufs);
  for (size_t i = 0; i < w->nprogs; i++) pto_program_release((pto_program *)w->progs[i].p);
  free(w->progs);
  if (w->program) pto_program_release((pto_program *)w->program);
  free(w->posted);
  free(w->disp);
  for (size_t i = 0; i < w->nnames; i++) free(w->names[i]);
  free(w->names);
  pto__rt_devmem_fini(&w->alloc);
  pto__rt_devmem_fini(&w->win_alloc);
  free(w->chip0_state);
  if (w->heap) munmap(w->heap, (size_t)w->heap_size);
  if (w->mpi) free(w->sh);
  else if (w->sh) munmap(w->sh, w->sh_bytes);
  free(w);
}

/* ---- heap buffers ----------------------------------------------------------------------- */

/* A free entry of w->bufs (grown by 16 when full). */
static pto_status free_slot(pto_dist_worker *w, size_t *out_i) {
  size_t i = 0;
  while (i < w->nbufs && w->bufs[i].kind) i++;
  if (i == w->nbufs) {
    buffer *nb = pto_realloc(w->bufs, (w->nbufs + 16) * sizeof *nb);
    if (!nb) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
    memset(nb + w->nbufs, 0, 16 * sizeof *nb);
    w->bufs = nb;
    w->nbufs += 16;
  }
  *out_i = i;
  return PTO_OK;
}

static pto_status new_buffer(pto_dist_worker *w, int kind, uint64_t bytes, const char *what,
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

static buffer *get_buffer(pto_dist_worker *w, uint64_t id) {
  if (id == 0 || id > w->nbufs || !w->bufs[id - 1].kind) return NULL;
  return &w->bufs[id - 1];
}

static void free_buffer(pto_dist_worker *w, uint32_t id) {
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
static pto_status new_arena_window(pto_dist_worker *w, uint64_t stride, uint32_t *out_id) {
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
  pto_dist_worker *w = ctx;
  if (!w->fatal_code) {
    w->fatal_code = code ? code : 1;
    snprintf(w->fatal, sizeof w->fatal, "%s", msg ? msg : "host code failed");
  }
}

static int32_t host_failf(pto_dist_worker *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int32_t host_failf(pto_dist_worker *w, const char *fmt, ...) {
  char msg[PTO__DIST_MSG];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  host_fatal(w, 1, msg);
  return 1;
}

static int64_t host_world_size(void *ctx) { return ((pto_dist_worker *)ctx)->n; }

static uint64_t bytes_of(int32_t rank, const int64_t *shape, int32_t dtype, int *ok) {
  uint64_t n = pto_dtype_size((pto_dtype)dtype);
  *ok = rank >= 1 && rank <= PTO_MAX_RANK && (unsigned)dtype < PTO_DTYPE_COUNT;
  for (int i = 0; *ok && i < rank; i++)
    if (shape[i] < 0 || __builtin_mul_overflow(n, (uint64_t)shape[i], &n)) *ok = 0;
  return n;
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
  pto_dist_worker *w = ctx;
  int ok;
  uint64_t n = bytes_of(rank, shape, dtype, &ok);
  if (!ok) return host_failf(w, "tensor.create in the host: bad shape or dtype");
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
  pto_dist_worker *w = ctx;
  int ok;
  uint64_t n = bytes_of(rank, shape, dtype, &ok);
  if (!ok) return host_failf(w, "dist.alloc_window: bad shape or dtype");
  int wi = 0;
  while (wi < PTO__DIST_MAX_WINDOWS && atomic_load(&w->sh->windows[wi].live)) wi++;
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
  atomic_store_explicit(&win->live, 1, memory_order_release);
  fill_ref(out, id, rank, shape, dtype);
  return 0;
}

/* The byte range [lo, hi) of a view inside its buffer (a window view: inside rank d's slice);
 * 0 when it does not fit. */
static int view_range(const pto_host_ref *v, const buffer *b, int d, uint64_t *lo, uint64_t *hi) {
  uint64_t eb = pto_dtype_size((pto_dtype)v->dtype);
  int64_t first = v->offset, last = v->offset;
  int empty = 0;
  for (int i = 0; i < v->rank; i++) {
    if (v->shape[i] == 0) empty = 1;
    else if (v->stride[i] >= 0) last += (v->shape[i] - 1) * v->stride[i];
    else first += (v->shape[i] - 1) * v->stride[i];
  }
  if (first < 0) return 0;
  uint64_t base = v->window ? (uint64_t)d * b->win_stride : 0;
  uint64_t limit = v->window ? base + b->win_bytes : b->bytes;
  *lo = base + (uint64_t)first * eb;
  *hi = empty ? *lo : base + (uint64_t)(last + 1) * eb;
  return *hi <= limit;
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
static int track(pto_dist_worker *w, buffer *b, uint64_t lo, uint64_t hi, int write, int rank,
                 uint32_t seq, uint32_t *dep) {
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
  if (b->nacc == b->capacc) {
    size_t cap = b->capacc ? 2 * b->capacc : 8;
    acc_rec *na = pto_realloc(b->acc, cap * sizeof *na);
    if (!na) return -1;
    b->acc = na;
    b->capacc = cap;
  }
  b->acc[b->nacc++] = (acc_rec){lo, hi, rank, seq, write};
  return 0;
}

static int32_t host_call(void *ctx, int32_t orch_index, int64_t device,
                         const pto_host_call_arg *args, int32_t nargs) {
  pto_dist_worker *w = ctx;
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
  for (size_t i = 0; i < w->nprogs; i++)
    if (w->progs[i].p == p) first_slot = w->progs[i].first_slot;
  pto__dist_cmd *cmd = &w->cmd;
  memset(cmd, 0, offsetof(pto__dist_cmd, args));
  cmd->op = PTO__DIST_CMD_RUN;
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
      return host_failf(w, "call @%s device=%d: argument %d is a view outside its tensor", name,
                        d, i);
    if (b->owner >= 0 && b->owner != d)
      return host_failf(w,
                        "call @%s device=%d: argument %d is a tensor resident on device %d; a "
                        "device uses only its own resident tensors",
                        name, d, i, (int)w->ids[b->owner]);
    if (b->shard_bytes && (lo / b->shard_bytes != (uint64_t)d ||
                           (hi > lo && (hi - 1) / b->shard_bytes != (uint64_t)d)))
      return host_failf(w,
                        "call @%s device=%d: argument %d is not the shard of a stacked tensor "
                        "resident on device %d (pass tensor.select(%%t, %d))",
                        name, d, i, d, d);
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
  if (w->nposted == w->capposted) {
    size_t cap = w->capposted ? 2 * w->capposted : 64;
    struct posted *np = pto_realloc(w->posted, cap * sizeof *np);
    if (!np) return host_failf(w, "out of memory");
    w->posted = np;
    w->capposted = cap;
  }
  uint32_t done_at;
  pto_status s = post(w, d, cmd, &done_at);
  if (s) {
    host_failf(w, "%s", pto_status_message(s));
    pto_status_free(s);
    return 1;
  }
  w->posted[w->nposted++] = (struct posted){d, orch_index, w->per_rank[d]++, done_at - 1};
  return 0;
}

static const char *intern(pto_dist_worker *w, const char *name) {
  for (size_t i = 0; i < w->nnames; i++)
    if (!strcmp(w->names[i], name)) return w->names[i];
  char **nn = pto_realloc(w->names, (w->nnames + 1) * sizeof *nn);
  if (!nn) return "?";
  w->names = nn;
  if (!(nn[w->nnames] = pto_strdup(name))) return "?";
  return nn[w->nnames++];
}

/* After the drain: each posted call's launch record, from its chip. */
static void gather(pto_dist_worker *w, uint64_t ts, uint64_t dur) {
  w->last.ts_ns = ts;
  w->last.dur_ns = dur;
  w->last.truncated = 0;
  w->last.ndispatches = 0;
  if (w->nposted > w->capdisp) {
    pto_dist_dispatch *nd = pto_realloc(w->disp, w->nposted * sizeof *nd);
    if (!nd) return;
    w->disp = nd;
    w->capdisp = w->nposted;
  }
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
      d->launch.spans[k].name = intern(w, rec->spans[k].name);
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
 * into the L3 views: one host.run span (depth 0) with l3=1, then one host.dispatch line per
 * call naming its rank, slot and callee and carrying its chip.run window. */
static void emit_run_strace(const pto_dist_worker *w, uint64_t inv) {
  if (!w->strace) return;
  long pid = (long)getpid(), tid = (long)gettid();
  char line[512];
  int n = snprintf(line, sizeof line,
                   "[STRACE] v=1 pid=%ld tid=%ld inv=%llu hid=0 depth=0 name=host.run ts=%llu "
                   "dur=%llu l3=1 ranks=%d\n",
                   pid, tid, (unsigned long long)inv, (unsigned long long)w->last.ts_ns,
                   (unsigned long long)w->last.dur_ns, w->n);
  if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0) return;
  for (int i = 0; i < w->last.ndispatches; i++) {
    const pto_dist_dispatch *d = &w->last.dispatches[i];
    const pto_span *root = d->launch.nspans ? &d->launch.spans[0] : NULL;
    n = snprintf(line, sizeof line,
                 "[STRACE] v=1 pid=%ld tid=%ld inv=%llu hid=%llx depth=1 name=host.dispatch "
                 "ts=%llu dur=%llu rank=%d slot=%d chip=%d callee=%s\n",
                 pid, tid, (unsigned long long)inv, (unsigned long long)d->launch.hid,
                 (unsigned long long)(root ? root->ts_ns : 0),
                 (unsigned long long)(root ? root->dur_ns : 0), d->rank, d->slot, d->pid,
                 d->name ? d->name : "?");
    if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0) return;
  }
}

pto_status pto_dist_worker_last_run(const pto_dist_worker *w, pto_dist_run_record *out) {
  if (!w || !out) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_dist_worker_last_run: NULL argument");
  if (!w->have_last)
    return pto_status_make(PTO_STATUS_NOT_FOUND, "pto_dist_worker_last_run: no run has reached the host code yet");
  *out = w->last;
  return PTO_OK;
}

/* ---- running ---------------------------------------------------------------------------- */

static pto_status load_program(pto_dist_worker *w, const pto_program *p) {
  for (size_t i = 0; i < w->nprogs; i++)
    if (w->progs[i].p == p) return PTO_OK;
  int nc = pto_program_callee_count(p);
  for (int i = 0; i < nc; i++) {
    /* This host's chips load the copy the program holds; ranks on other hosts (MPI) the work
     * dir itself, at the same path there. */
    const char *dir = w->mpi ? pto_program_callee_dir(p, i)
                             : pto_program_work_dir(pto_program_callee(p, i));
    if (!dir)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                  "callee %d of the program has no work dir: the chips load callees from disk", i);
    pto__dist_cmd *cmd = &w->cmd;
    memset(cmd, 0, sizeof *cmd);
    cmd->op = PTO__DIST_CMD_LOAD;
    if (snprintf(cmd->path, sizeof cmd->path, "%s", dir) >= (int)sizeof cmd->path)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "work dir path too long: %s", dir);
    for (int r = 0; r < w->n; r++) PTO_RETURN_IF_ERROR(post(w, r, cmd, NULL));
    PTO_RETURN_IF_ERROR(drain(w));
  }
  loaded *np = pto_realloc(w->progs, (w->nprogs + 1) * sizeof *np);
  if (!np) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  w->progs = np;
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
    for (int i = 0; i < h->rank; i++) off += idx[i] * h->strides[i];
    uint8_t *hp = (uint8_t *)h->data + off * (int64_t)eb, *dp = (uint8_t *)heap + e * (int64_t)eb;
    if (to_host) memcpy(hp, dp, eb);
    else memcpy(dp, hp, eb);
    for (int i = h->rank - 1; i >= 0 && ++idx[i] == h->shape[i]; i--) idx[i] = 0;
  }
}

pto_status pto_dist_worker_run(pto_dist_worker *w, const pto_program *p, const pto_arg *args,
                               size_t nargs) {
  static const char fn[] = "pto_dist_worker_run";
  if (!w || !p) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: worker or program is NULL", fn);
  if (!w->root) return not_root(w, fn);
  if (w->broken) return broken(w);
  if (w->program && p != w->program)
    return pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                "%s: this worker was opened for one program (single-program mode); open it "
                "without pto_dist_config.program to run several programs on it",
                fn);
  if (!pto_program_is_host(p))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                "%s: the program's entry is not a host function; run an L2 program on a "
                "pto_worker",
                fn);
  int nd = pto_program_device_count(p);
  if (nd != w->n)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                "%s: the program was compiled for %d devices, this worker has %d", fn, nd, w->n);
  for (int r = 0; r < nd; r++)
    if (pto_program_device_id(p, r) != w->ids[r])
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                  "%s: rank %d is device %d in the program and device %d in this worker", fn, r,
                  (int)pto_program_device_id(p, r), (int)w->ids[r]);
  const pto_signature *sig = pto_program_signature(p);
  if ((size_t)sig->nparams != nargs)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: @%s takes %d arguments, got %zu", fn,
                sig->entry, sig->nparams, nargs);
  if (sig->nparams > 64)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: more than 64 host parameters", fn);
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
        s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: parameter '%s' is a scalar", fn, pp->name);
      else
        scalars[ns++] = pp->bind == PTO_BIND_LITERAL ? pto_scalar_to_slot(pp->value)
                                                     : pto_scalar_to_slot(a->scalar);
      continue;
    }
    if (a->kind == PTO_ARG_DIST_TENSOR) {
      pto_dist_tensor *t = a->dist;
      int mine = 0;
      for (pto_dist_tensor *q = w->tensors; q; q = q->next) mine |= q == t;
      if (!mine) {
        s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                 "%s: parameter '%s': the tensor is not a live tensor of this distributed worker "
                 "(only the worker that allocated a tensor can use it)",
                 fn, pp->name);
        break;
      }
      int bad = t->dtype != pp->dtype || t->rank != pp->rank;
      for (int k = 0; !bad && k < t->rank; k++)
        bad = pp->dims[k].sym < 0 && pp->dims[k].value >= 0 && pp->dims[k].value != t->shape[k];
      if (bad) {
        char got[96];
        int o = 0;
        for (int k = 0; k < t->rank && o < (int)sizeof got - 24; k++)
          o += snprintf(got + o, sizeof got - (size_t)o, "%s%lld", k ? "x" : "", (long long)t->shape[k]);
        s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                 "%s: parameter '%s' is %s of rank %d; the tensor passed is %s [%s]", fn, pp->name,
                 pto_dtype_name(pp->dtype), pp->rank, pto_dtype_name(t->dtype), got);
        break;
      }
      fill_ref(&refs[nt++], t->buf, t->rank, t->shape, t->dtype);
      continue;
    }
    if (a->kind == PTO_ARG_DEVICE_TENSOR) {
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
               "%s: parameter '%s': a pto_worker's device tensor cannot cross to a distributed "
               "worker; allocate it with pto_dist_alloc_tensor",
               fn, pp->name);
      break;
    }
    if (a->kind != PTO_ARG_HOST_TENSOR) {
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: parameter '%s' is a tensor", fn, pp->name);
      break;
    }
    const pto_host_tensor *h = &a->host;
    if (h->dtype != pp->dtype || h->rank != pp->rank) {
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: parameter '%s': expected %s of rank %d, got %s of rank %d",
               fn, pp->name, pto_dtype_name(pp->dtype), pp->rank, pto_dtype_name(h->dtype), h->rank);
      break;
    }
    int ok;
    uint64_t nb = bytes_of(h->rank, h->shape, h->dtype, &ok);
    if (!ok) {
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: parameter '%s': bad shape", fn, pp->name);
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
  pto_host_args ha = {refs, scalars, nt, ns};
  w->run_prog = p;
  w->fatal_code = 0;
  w->fatal[0] = '\0';
  w->nposted = 0;
  memset(w->per_rank, 0, sizeof w->per_rank);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int32_t rc = pto_program_host_entry(p)(&api, &ha);
  s = drain(w); /* every posted call finishes, even after a host error */
  clock_gettime(CLOCK_MONOTONIC, &t1);
  uint64_t ts = (uint64_t)t0.tv_sec * 1000000000ull + (uint64_t)t0.tv_nsec;
  gather(w, ts, (uint64_t)t1.tv_sec * 1000000000ull + (uint64_t)t1.tv_nsec - ts);
  emit_run_strace(w, ++w->nruns);
  if (!s && (rc || w->fatal_code))
    s = pto_status_make(PTO_STATUS_INTERNAL, "host @%s: %s", sig->entry,
             w->fatal[0] ? w->fatal : "the host code failed");
  /* Windows and host-created tensors live for one run; acc_rec records end with it. */
  for (size_t i = 0; i < w->nbufs; i++) {
    buffer *b = &w->bufs[i];
    if (b->kind == BUF_TEMP || b->kind == BUF_WINDOW) free_buffer(w, (uint32_t)i + 1);
    else b->nacc = 0;
  }
  w->run_prog = NULL;
  if (s) return s;
  for (int i = 0; i < sig->nparams; i++) {
    const pto_sig_param *pp = &sig->params[i];
    if (!pp->is_tensor || pp->dir == PTO_DIR_IN || args[i].kind != PTO_ARG_HOST_TENSOR) continue;
    if (args[i].readonly)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: parameter '%s' is %s but its host tensor is read-only",
                  fn, pp->name, pp->dir == PTO_DIR_OUT ? "out" : "inout");
    copy_host(&args[i].host, 1, w->heap + get_buffer(w, w->io_buf[i])->off);
  }
  return PTO_OK;
}

pto_status pto_dist_worker_call(pto_dist_worker *w, const pto_arg *args, size_t nargs) {
  if (!w) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_dist_worker_call: worker is NULL");
  if (!w->program)
    return pto_status_make(PTO_STATUS_FAILED_PRECONDITION,
                "pto_dist_worker_call: this worker was opened without a program (multi-program "
                "mode, where several programs share it), so there is no program to call: name "
                "it with pto_dist_worker_run(w, program, args)");
  return pto_dist_worker_run(w, w->program, args, nargs);
}

pto_status pto_dist_run_once(const pto_dist_config *cfg_in, const pto_program *p,
                             const pto_arg *args, size_t nargs) {
  static const char fn[] = "pto_dist_run_once";
  if (!p) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: program is NULL", fn);
  for (size_t i = 0; i < nargs; i++)
    if (args[i].kind == PTO_ARG_DIST_TENSOR)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                  "%s: argument %zu is a resident tensor; a one-shot run opens and closes its "
                  "own worker, so it cannot use tensors resident on another: open a "
                  "pto_dist_worker and run on it",
                  fn, i);
  if (!pto_program_is_host(p))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: the program's entry is not a host function", fn);
  pto_dist_config cfg;
  pto_dist_config_init(&cfg);
  if (cfg_in) memcpy(&cfg, cfg_in, cfg_in->sz < sizeof cfg ? cfg_in->sz : sizeof cfg);
  cfg.sz = sizeof cfg;
  cfg.ndevices = 0; /* the program's device set */
  cfg.device_ids = NULL;
  cfg.program = p;
  pto_dist_worker *w = NULL;
  PTO_RETURN_IF_ERROR(pto_dist_worker_open(&cfg, &w));
  pto_status s = w->root ? pto_dist_worker_run(w, p, args, nargs) : PTO_OK; /* MPI: served */
  pto_dist_worker_close(w);
  return s;
}

/* ---- resident and stacked tensors ------------------------------------------------------- */

/* MPI: posts the move of heap bytes [off, off + n) from rank 0's heap to chip r's (PUT) or back
 * (GET). Rank 0's chip shares the host's heap, and on one host every chip does. */
static pto_status sync_heap(pto_dist_worker *w, int r, uint64_t off, uint64_t n, int get) {
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
static pto_status sync_tensor(pto_dist_worker *w, const pto_dist_tensor *t, int get) {
  if (!w->mpi) return PTO_OK;
  buffer *b = get_buffer(w, t->buf);
  if (!t->stacked) PTO_RETURN_IF_ERROR(sync_heap(w, t->owner, b->off, b->bytes, get));
  for (int64_t i = 0; t->stacked && i < t->shape[0]; i++)
    PTO_RETURN_IF_ERROR(sync_heap(w, t->slot_of[i], b->off + (uint64_t)t->slot_of[i] * b->shard_bytes,
                                  b->shard_bytes, get));
  return drain(w);
}


static pto_status new_tensor(pto_dist_worker *w, int ndim, const int64_t *shape, pto_dtype dt,
                             int owner, int stacked, pto_dist_tensor **out) {
  int ok;
  uint64_t nb = bytes_of(ndim, shape, (int32_t)dt, &ok);
  if (!ok) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "bad rank, shape or dtype");
  pto_dist_tensor *t = pto_calloc(1, sizeof *t);
  if (!t) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  pto_status s = new_buffer(w, BUF_RESIDENT, nb, "a resident tensor", &t->buf);
  if (s) {
    free(t);
    return s;
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

static pto_status mine(pto_dist_worker *w, const pto_dist_tensor *t, const char *fn) {
  if (!w) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: worker is NULL", fn);
  if (!w->root) return not_root(w, fn);
  if (w->broken) return broken(w);
  for (pto_dist_tensor *q = w->tensors; q; q = q->next)
    if (q == t) return PTO_OK;
  return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
              "%s: not a live tensor of this distributed worker (freed, or another worker's)", fn);
}

pto_status pto_dist_alloc_tensor(pto_dist_worker *w, int ndim, const int64_t *shape, pto_dtype dt,
                                 const void *init, int worker_id, pto_dist_tensor **out) {
  static const char fn[] = "pto_dist_alloc_tensor";
  if (!w || !out || !shape) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: NULL argument", fn);
  *out = NULL;
  if (!w->root) return not_root(w, fn);
  if (w->broken) return broken(w);
  if (worker_id < 0 || worker_id >= w->n)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: worker_id %d is out of range (0 to %d)", fn,
                worker_id, w->n - 1);
  pto_status s = new_tensor(w, ndim, shape, dt, worker_id, 0, out);
  if (s) return pto_status_annotate(s, "%s", fn);
  if (init)
    memcpy(w->heap + get_buffer(w, (*out)->buf)->off, init,
           (size_t)get_buffer(w, (*out)->buf)->bytes);
  if ((s = sync_tensor(w, *out, 0))) {
    pto_status_free(pto_dist_free_tensor(w, *out));
    *out = NULL;
    return pto_status_annotate(s, "%s", fn);
  }
  return PTO_OK;
}

/* Shard i of host <-> device slot t->slot_of[i] of t's buffer. */
static void stacked_copy(pto_dist_worker *w, const pto_dist_tensor *t, const pto_host_tensor *host,
                         int to_host) {
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
    copy_host(&shard, to_host, w->heap + b->off + (uint64_t)t->slot_of[i] * b->shard_bytes);
  }
}

pto_status pto_dist_alloc_stacked_tensor(pto_dist_worker *w, const pto_host_tensor *host,
                                         const int *worker_ids, pto_dist_tensor **out) {
  static const char fn[] = "pto_dist_alloc_stacked_tensor";
  if (!w || !out || !host || !worker_ids)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: NULL argument", fn);
  *out = NULL;
  if (!w->root) return not_root(w, fn);
  if (w->broken) return broken(w);
  if (host->rank < 2)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                "%s: a stacked tensor has rank >= 2 (shards along dim 0), got rank %d", fn,
                host->rank);
  int64_t B = host->shape[0];
  for (int64_t i = 0; i < B; i++) {
    if (worker_ids[i] < 0 || worker_ids[i] >= w->n)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                  "%s: worker_ids[%lld] = %d is out of range (0 to %d)", fn, (long long)i,
                  worker_ids[i], w->n - 1);
    for (int64_t j = 0; j < i; j++)
      if (worker_ids[j] == worker_ids[i])
        return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                    "%s: worker_ids[%lld] and worker_ids[%lld] are both %d; each shard goes to a "
                    "different worker",
                    fn, (long long)j, (long long)i, worker_ids[i]);
  }
  /* Laid out by device: slot d holds the shard resident on device d, so tensor.select(%t, d)
   * passed to device=d is that device's shard, whatever the placement. */
  int64_t slots_shape[PTO_MAX_RANK];
  memcpy(slots_shape, host->shape, sizeof slots_shape);
  slots_shape[0] = w->n;
  pto_status s = new_tensor(w, host->rank, slots_shape, host->dtype, -1, 1, out);
  if (s) return pto_status_annotate(s, "%s", fn);
  pto_dist_tensor *t = *out;
  t->shape[0] = B;
  buffer *b = get_buffer(w, t->buf);
  b->shard_bytes = b->bytes / (uint64_t)w->n;
  for (int64_t i = 0; i < B; i++) {
    t->slot_of[i] = worker_ids[i];
  }
  stacked_copy(w, t, host, 0);
  if ((s = sync_tensor(w, t, 0))) { /* on failure nothing stays allocated */
    pto_status_free(pto_dist_free_tensor(w, t));
    *out = NULL;
    return pto_status_annotate(s, "%s", fn);
  }
  return PTO_OK;
}

pto_status pto_dist_free_tensor(pto_dist_worker *w, pto_dist_tensor *t) {
  PTO_RETURN_IF_ERROR(mine(w, t, "pto_dist_free_tensor"));
  free_buffer(w, t->buf);
  if (t->prev) t->prev->next = t->next;
  else w->tensors = t->next;
  if (t->next) t->next->prev = t->prev;
  free(t);
  return PTO_OK;
}

static pto_status check_bytes(pto_dist_worker *w, pto_dist_tensor *t, size_t n, const char *fn) {
  uint64_t have = get_buffer(w, t->buf)->bytes;
  if (n != have)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: %zu bytes given, the tensor has %llu", fn, n,
                (unsigned long long)have);
  return PTO_OK;
}

pto_status pto_dist_copy_to(pto_dist_worker *w, pto_dist_tensor *t, const void *host, size_t n) {
  static const char fn[] = "pto_dist_copy_to";
  PTO_RETURN_IF_ERROR(mine(w, t, fn));
  PTO_RETURN_IF_ERROR(check_bytes(w, t, n, fn));
  if (n && !host) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: host is NULL", fn);
  memcpy(w->heap + get_buffer(w, t->buf)->off, host, n);
  return sync_tensor(w, t, 0);
}

pto_status pto_dist_copy_from(pto_dist_worker *w, void *host, pto_dist_tensor *t, size_t n) {
  static const char fn[] = "pto_dist_copy_from";
  PTO_RETURN_IF_ERROR(mine(w, t, fn));
  PTO_RETURN_IF_ERROR(check_bytes(w, t, n, fn));
  if (n && !host) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: host is NULL", fn);
  PTO_RETURN_IF_ERROR(sync_tensor(w, t, 1));
  memcpy(host, w->heap + get_buffer(w, t->buf)->off, n);
  return PTO_OK;
}

pto_status pto_dist_copy_stacked_from(pto_dist_worker *w, pto_dist_tensor *t,
                                      const pto_host_tensor *out) {
  static const char fn[] = "pto_dist_copy_stacked_from";
  PTO_RETURN_IF_ERROR(mine(w, t, fn));
  if (!out || out->dtype != t->dtype || out->rank != t->rank ||
      memcmp(out->shape, t->shape, (size_t)t->rank * sizeof *t->shape) != 0)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                "%s: the host tensor must have the stacked tensor's dtype and shape", fn);
  PTO_RETURN_IF_ERROR(sync_tensor(w, t, 1));
  stacked_copy(w, t, out, 1);
  return PTO_OK;
}
