/* The MPI transport of the distributed worker (-DPTO_MPI=ON; pto/dist.h, dist_internal.h).
 *
 * Launched with mpirun: every MPI rank hosts one chip. Rank 0 runs the host code and its chip on
 * a thread of its own; a proxy thread on rank 0 serves the command rings of the other chips: it
 * sends each command (once the commands it depends on have finished) with the bytes it reads
 * from rank 0's heap (host IO, host-created tensors: PTO__DIST_SHIP_IN), and takes back each
 * result with the bytes it wrote (PTO__DIST_SHIP_OUT) and its launch record, so the rest of the
 * worker (dependency tracking, records, the L3 statistics) is the same as on one host. The other
 * ranks serve their commands in pto__dist_mpi_serve until rank 0 closes the worker.
 *
 * Comm windows are one MPI-3 window per worker (the arena, allocated and pre-faulted once):
 * MPI_Win_allocate_shared when every rank is on one node (peers' arenas are then addressed
 * directly, exactly like the shared-memory transport), else, or when the shared allocation fails
 * (Open MPI's UCX one-sided component cannot give shared windows), MPI_Win_allocate with a
 * passive-target lock_all epoch: remote_load = MPI_Get + flush, remote_store = MPI_Put + flush,
 * notify = MPI_Accumulate (SUM or REPLACE) + flush, and a wait polls its own element with
 * MPI_Fetch_and_op(MPI_NO_OP), which also drives MPI's progress.
 *
 * Threads: rank 0's proxy and host threads and every chip's core threads may call MPI, one at a
 * time under one mutex (MPI_THREAD_SERIALIZED, checked; Open MPI's osc pt2pt refuses window
 * creation under MPI_THREAD_MULTIPLE). No blocking MPI call is made where its peer might be
 * waiting for this process to act: sends of commands are nonblocking and every loop polls. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "dist_internal.h"

#if PTO_MPI
#include <mpi.h>

enum { TAG_CMD = 7301, TAG_DONE = 7302 };
#define CHUNK (1 << 30) /* the most bytes one MPI message carries */

/* What a chip answers for each command (and once at start, with seq ~0u). */
typedef struct done_hdr {
  uint32_t seq;
  int32_t failed;
  int32_t pid;
  int32_t pad;
  uint64_t heap_size, arena_size; /* the hello: must match rank 0's */
  char msg[PTO__DIST_MSG];
} done_hdr;

struct pto__dist_mpi {
  pthread_mutex_t mu;
  MPI_Comm comm;
  MPI_Win win;
  int rank, size, shared;
  uint8_t *arena;
  uint64_t arena_size;
  /* rank 0's proxy */
  pto__dist_shared *sh;
  pthread_t proxy;
  int proxy_started;
  _Atomic int stop;
  uint32_t sent[PTO__DIST_MAX_RANKS];
  pto__dist_window *wincopy; /* per (rank, ring slot): the window table sent with a RUN */
  MPI_Request *reqs;
  int nreqs, capreqs;
  char err[PTO__DIST_MSG];
};

static pthread_once_t g_atexit_once = PTHREAD_ONCE_INIT;
static void finalize_at_exit(void) {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
}
static void register_finalize(void) { atexit(finalize_at_exit); }

static void mpi_msg(char *out, size_t n, const char *what, int code) {
  char es[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, es, &len) != MPI_SUCCESS) snprintf(es, sizeof es, "error %d", code);
  snprintf(out, n, "%s: %s", what, es);
}

static void sleep_us(long us) {
  struct timespec ts = {0, us * 1000};
  nanosleep(&ts, NULL);
}

/* Idle backoff of a polling loop: yield for the first 200 us, then short sleeps, then 1 ms. */
static void backoff(uint64_t *idle_since_ns) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  if (!*idle_since_ns) *idle_since_ns = now;
  uint64_t idle = now - *idle_since_ns;
  if (idle < 200000ull) sched_yield();
  else if (idle < 2000000ull) sleep_us(30);
  else if (idle < 100000000ull) sleep_us(200);
  else sleep_us(1000);
}

/* ---- one-sided access (kernel threads) ---------------------------------------------------- */

/* n bytes between buf and the peer's arena at disp (put: to the peer), each chunk flushed. */
static int rma(pto__dist_mpi *m, int peer, uint64_t disp, void *buf, uint64_t n, int put,
               char *detail) {
  int rc = MPI_SUCCESS;
  pthread_mutex_lock(&m->mu);
  for (uint64_t o = 0; o < n && rc == MPI_SUCCESS; o += CHUNK) {
    int c = (int)(n - o < CHUNK ? n - o : CHUNK);
    uint8_t *p = (uint8_t *)buf + o;
    rc = put ? MPI_Put(p, c, MPI_BYTE, peer, (MPI_Aint)(disp + o), c, MPI_BYTE, m->win)
             : MPI_Get(p, c, MPI_BYTE, peer, (MPI_Aint)(disp + o), c, MPI_BYTE, m->win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_flush(peer, m->win);
  }
  pthread_mutex_unlock(&m->mu);
  if (rc != MPI_SUCCESS) {
    char what[96];
    snprintf(what, sizeof what, "rank %d: %s rank %d", m->rank, put ? "MPI_Put to" : "MPI_Get from",
             peer);
    mpi_msg(detail, 512, what, rc);
    return -1;
  }
  return 0;
}

int pto__dist_mpi_get(pto__dist_mpi *m, int peer, uint64_t disp, void *dst, uint64_t n,
                      char *detail) {
  return rma(m, peer, disp, dst, n, 0, detail);
}

int pto__dist_mpi_put(pto__dist_mpi *m, int peer, uint64_t disp, const void *src, uint64_t n,
                      char *detail) {
  return rma(m, peer, disp, (void *)src, n, 1, detail);
}

int pto__dist_mpi_atomic(pto__dist_mpi *m, int peer, uint64_t disp, int32_t value, int add,
                         int32_t *old, char *detail) {
  int32_t v = value, prior = 0;
  pthread_mutex_lock(&m->mu);
  int rc = MPI_Fetch_and_op(&v, &prior, MPI_INT32_T, peer, (MPI_Aint)disp,
                            add ? MPI_SUM : MPI_REPLACE, m->win);
  if (rc == MPI_SUCCESS) rc = MPI_Win_flush(peer, m->win);
  pthread_mutex_unlock(&m->mu);
  if (rc != MPI_SUCCESS) {
    char what[96];
    snprintf(what, sizeof what, "rank %d: MPI_Fetch_and_op on rank %d", m->rank, peer);
    mpi_msg(detail, 512, what, rc);
    return -1;
  }
  if (old) *old = prior;
  return 0;
}

int pto__dist_mpi_read(pto__dist_mpi *m, uint64_t disp, int32_t *out, char *detail) {
  pthread_mutex_lock(&m->mu);
  int rc = MPI_Fetch_and_op(NULL, out, MPI_INT32_T, m->rank, (MPI_Aint)disp, MPI_NO_OP, m->win);
  if (rc == MPI_SUCCESS) rc = MPI_Win_flush(m->rank, m->win);
  /* An operation on this rank itself may complete without ever entering MPI's progress engine
   * (UCX's self transport): a poll that made no other MPI call would then never apply the
   * peers' operations that its wait is for. Probing drives the progress engine. */
  int flag = 0;
  if (rc == MPI_SUCCESS) rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, m->comm, &flag, MPI_STATUS_IGNORE);
  pthread_mutex_unlock(&m->mu);
  if (rc != MPI_SUCCESS) {
    char what[96];
    snprintf(what, sizeof what, "rank %d: reading its own signal element", m->rank);
    mpi_msg(detail, 512, what, rc);
    return -1;
  }
  return 0;
}

/* ---- session -------------------------------------------------------------------------- */

/* Whether Open MPI's directory for shared windows' backing files ($OMPI_MCA_osc_sm_backing_
 * directory, else /dev/shm) has need bytes free; 1 when it cannot be told (then MPI tries). */
static int shm_room(uint64_t need, char *why, size_t n) {
  const char *dir = getenv("OMPI_MCA_osc_sm_backing_directory");
  if (!dir || !*dir) dir = "/dev/shm";
  struct statvfs v;
  if (statvfs(dir, &v) != 0) return 1;
  uint64_t avail = (uint64_t)v.f_bavail * (uint64_t)v.f_frsize;
  if (avail >= need) return 1;
  snprintf(why, n,
           "the shared window arena needs %llu bytes of %s, which has %llu free: enlarge it (a "
           "container's --shm-size), or lower PTO_DIST_WINDOW_BYTES (pto_dist_config."
           "window_bytes)",
           (unsigned long long)need, dir, (unsigned long long)avail);
  return 0;
}

int pto__dist_mpi_open(uint64_t arena_bytes, const char *windows, pto__dist_mpi **out,
                       int *out_rank, int *out_size, char *err, size_t errn) {
  *out = NULL;
  int inited = 0, fin = 0, provided = 0, rc;
  MPI_Finalized(&fin);
  if (fin) {
    snprintf(err, errn, "MPI was finalized in this process already");
    return -1;
  }
  MPI_Initialized(&inited);
  if (!inited) {
    rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS) {
      mpi_msg(err, errn, "MPI_Init_thread", rc);
      return -1;
    }
    pthread_once(&g_atexit_once, register_finalize);
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    snprintf(err, errn,
             "MPI gives thread level %d; the MPI transport needs MPI_THREAD_SERIALIZED (its "
             "threads call MPI one at a time): initialize MPI with MPI_Init_thread",
             provided);
    return -1;
  }
  pto__dist_mpi *m = pto_calloc(1, sizeof *m);
  if (!m) {
    snprintf(err, errn, "out of memory");
    return -1;
  }
  pthread_mutex_init(&m->mu, NULL);
  m->win = MPI_WIN_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &m->comm);
  MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(m->comm, &m->rank);
  MPI_Comm_size(m->comm, &m->size);
  m->arena_size = arena_bytes;
  /* Shared windows when every rank is on this node and they are not refused. */
  int want_shared = !windows || strcmp(windows, "separate") != 0;
  if (want_shared) {
    MPI_Comm node;
    int nsize = 0;
    if (MPI_Comm_split_type(m->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
      MPI_Comm_size(node, &nsize);
      MPI_Comm_free(&node);
    }
    int all_here = nsize == m->size;
    if (all_here) {
      /* A rank that cannot get the arena's backing memory fails inside MPI_Win_allocate_shared
       * while the others wait there for ever: every rank checks the room first, and all agree
       * before the collective call (MINLOC: which rank lacks it). */
      char why[384] = "";
      struct {
        int room, rank;
      } mine = {0, m->rank}, worst = {1, 0};
      uint64_t need = arena_bytes * (uint64_t)m->size + (uint64_t)m->size * 65536 + (1u << 20);
      mine.room = shm_room(need, why, sizeof why);
      MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MINLOC, m->comm);
      if (!worst.room) {
        snprintf(err, errn, "MPI rank %d: %s", worst.rank,
                 mine.room ? "too little shared memory for the window arena (see that rank's "
                             "error)"
                           : why);
        MPI_Comm_free(&m->comm);
        free(m);
        return -1;
      }
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "alloc_shared_noncontig", "true");
      void *base = NULL;
      rc = MPI_Win_allocate_shared((MPI_Aint)arena_bytes, 1, info, m->comm, &base, &m->win);
      MPI_Info_free(&info);
      /* Every rank must agree on the path: one failure sends all to the separate windows. */
      int ok = rc == MPI_SUCCESS, all_ok = 0;
      MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, m->comm);
      if (all_ok) {
        m->shared = 1;
        m->arena = base;
      } else if (ok) {
        MPI_Win_free(&m->win);
      }
      if (!all_ok) m->win = MPI_WIN_NULL;
    }
    if (!m->shared && windows && strcmp(windows, "shared") == 0) {
      snprintf(err, errn,
               "PTO_MPI_WINDOWS=shared, but %s", all_here ? "MPI_Win_allocate_shared failed (the "
               "one-sided component cannot give shared windows)"
               : "the ranks are not all on one node");
      MPI_Comm_free(&m->comm);
      free(m);
      return -1;
    }
  }
  if (!m->shared) {
    void *base = NULL;
    rc = MPI_Win_allocate((MPI_Aint)arena_bytes, 1, MPI_INFO_NULL, m->comm, &base, &m->win);
    if (rc != MPI_SUCCESS) {
      mpi_msg(err, errn, "MPI_Win_allocate of the window arena", rc);
      MPI_Comm_free(&m->comm);
      free(m);
      return -1;
    }
    m->arena = base;
  }
  MPI_Win_set_errhandler(m->win, MPI_ERRORS_RETURN);
  memset(m->arena, 0, (size_t)arena_bytes); /* zeroed, and its pages faulted in, once */
  MPI_Win_lock_all(MPI_MODE_NOCHECK, m->win);
  MPI_Barrier(m->comm); /* nobody touches a peer's arena before it is zero */
  *out = m;
  *out_rank = m->rank;
  *out_size = m->size;
  return 0;
}

int pto__dist_mpi_is_shared(const pto__dist_mpi *m) { return m->shared; }

uint8_t *pto__dist_mpi_arena(pto__dist_mpi *m, int q) {
  if (q == m->rank) return m->arena;
  if (!m->shared) return NULL;
  MPI_Aint sz;
  int du;
  void *p = NULL;
  if (MPI_Win_shared_query(m->win, q, &sz, &du, &p) != MPI_SUCCESS) return NULL;
  return p;
}

void pto__dist_mpi_close(pto__dist_mpi *m) {
  if (!m) return;
  MPI_Win_unlock_all(m->win);
  MPI_Barrier(m->comm);
  MPI_Win_free(&m->win);
  MPI_Comm_free(&m->comm);
  pthread_mutex_destroy(&m->mu);
  free(m->wincopy);
  free(m->reqs);
  free(m);
}

/* ---- messages ------------------------------------------------------------------------- */

static int send_bytes(pto__dist_mpi *m, int to, int tag, const void *p, uint64_t n, int nonblocking) {
  for (uint64_t o = 0; o == 0 || o < n; o += CHUNK) {
    int c = (int)(n - o < CHUNK ? n - o : CHUNK);
    int rc;
    if (nonblocking) {
      if (m->nreqs == m->capreqs) {
        int cap = m->capreqs ? 2 * m->capreqs : 64;
        MPI_Request *nr = pto_realloc(m->reqs, (size_t)cap * sizeof *nr);
        if (!nr) return -1;
        m->reqs = nr;
        m->capreqs = cap;
      }
      rc = MPI_Isend((const uint8_t *)p + o, c, MPI_BYTE, to, tag, m->comm, &m->reqs[m->nreqs]);
      if (rc == MPI_SUCCESS) m->nreqs++;
    } else {
      rc = MPI_Send((const uint8_t *)p + o, c, MPI_BYTE, to, tag, m->comm);
    }
    if (rc != MPI_SUCCESS) {
      mpi_msg(m->err, sizeof m->err, "sending to a chip", rc);
      return -1;
    }
    if (n == 0) break;
  }
  return 0;
}

static int recv_bytes(pto__dist_mpi *m, int from, int tag, void *p, uint64_t n) {
  for (uint64_t o = 0; o == 0 || o < n; o += CHUNK) {
    int c = (int)(n - o < CHUNK ? n - o : CHUNK);
    int rc = MPI_Recv((uint8_t *)p + o, c, MPI_BYTE, from, tag, m->comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      mpi_msg(m->err, sizeof m->err, "receiving from a chip", rc);
      return -1;
    }
    if (n == 0) break;
  }
  return 0;
}

static uint64_t arg_bytes(const pto__dist_arg *a) {
  uint64_t n = pto_dtype_size((pto_dtype)a->dtype);
  for (int i = 0; i < a->rank; i++) n *= (uint64_t)a->shape[i];
  return n;
}

/* The heap bytes [addr, addr + n) of this process, or NULL when outside the heap. */
static uint8_t *heap_at(const pto__dist_shared *sh, uint64_t addr, uint64_t n) {
  uint64_t off = addr - PTO__DIST_HEAP_BASE;
  if (addr < PTO__DIST_HEAP_BASE || off > sh->heap_size || n > sh->heap_size - off) return NULL;
  return sh->heap + off;
}

/* ---- rank 0: the proxy of the remote chips ---------------------------------------------- */

static int deps_done(const pto__dist_shared *sh, const pto__dist_cmd *cmd) {
  for (int r = 0; r < sh->nranks; r++) {
    uint32_t want = cmd->dep[r];
    if (want && (int32_t)(atomic_load_explicit(&sh->chips[r].tail, memory_order_acquire) - want) < 0)
      return 0;
  }
  return 1;
}

static void proxy_fail(pto__dist_shared *sh, int r, uint32_t seq, const char *msg) {
  pto__dist_chip *c = &sh->chips[r];
  uint32_t expect = 0;
  if (atomic_compare_exchange_strong(&c->failed, &expect, seq + 1))
    snprintf(c->msg, sizeof c->msg, "%s", msg);
}

/* Sends what is due to chip r; returns how many commands went. */
static int proxy_send(pto__dist_mpi *m, int r) {
  pto__dist_shared *sh = m->sh;
  pto__dist_chip *c = &sh->chips[r];
  int n = 0;
  for (;;) {
    uint32_t s = m->sent[r];
    if (s == atomic_load_explicit(&c->head, memory_order_acquire)) break;
    pto__dist_cmd *cmd = &c->ring[s % PTO__DIST_RING];
    if (cmd->op == PTO__DIST_CMD_RUN && !deps_done(sh, cmd)) break;
    int bad = send_bytes(m, r, TAG_CMD, cmd, sizeof *cmd, 1);
    if (!bad && cmd->op == PTO__DIST_CMD_RUN) {
      pto__dist_window *wc = &m->wincopy[((size_t)r * PTO__DIST_RING + s % PTO__DIST_RING) *
                                         PTO__DIST_MAX_WINDOWS];
      memcpy(wc, sh->windows, sizeof sh->windows);
      bad = send_bytes(m, r, TAG_CMD, wc, sizeof sh->windows, 1);
      for (int i = 0; i < cmd->nargs && !bad; i++) {
        const pto__dist_arg *a = &cmd->args[i];
        if (!(a->ship & PTO__DIST_SHIP_IN)) continue;
        uint64_t nb = arg_bytes(a);
        const uint8_t *p = heap_at(sh, a->addr, nb);
        bad = !p || send_bytes(m, r, TAG_CMD, p, nb, 1);
      }
    } else if (!bad && cmd->op == PTO__DIST_CMD_PUT) {
      const uint8_t *p = heap_at(sh, cmd->args[0].addr, cmd->args[0].scalar);
      bad = !p || send_bytes(m, r, TAG_CMD, p, cmd->args[0].scalar, 1);
    }
    if (bad) {
      /* Nothing can reach this chip any more: fail what it was sent, mark it gone. */
      proxy_fail(sh, r, s, m->err[0] ? m->err : "a bad heap range in a command");
      atomic_store(&c->state, 3);
      atomic_store_explicit(&c->tail, atomic_load(&c->head), memory_order_release);
      pto__dist_futex_wake(&c->tail);
      break;
    }
    m->sent[r] = s + 1;
    n++;
  }
  return n;
}

/* Takes one answer if there is one; returns 1 then. */
static int proxy_recv(pto__dist_mpi *m) {
  pto__dist_shared *sh = m->sh;
  int flag = 0;
  MPI_Status st;
  if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_DONE, m->comm, &flag, &st) != MPI_SUCCESS || !flag) return 0;
  int r = st.MPI_SOURCE;
  done_hdr h;
  if (recv_bytes(m, r, TAG_DONE, &h, sizeof h)) return 1;
  pto__dist_chip *c = &sh->chips[r];
  const pto__dist_cmd *cmd = &c->ring[h.seq % PTO__DIST_RING];
  if (cmd->op == PTO__DIST_CMD_RUN) {
    pto__dist_rec *rec = &c->recs[h.seq % PTO__DIST_RECS];
    recv_bytes(m, r, TAG_DONE, rec, sizeof *rec);
    for (int i = 0; i < cmd->nargs; i++) {
      const pto__dist_arg *a = &cmd->args[i];
      if (!(a->ship & PTO__DIST_SHIP_OUT)) continue;
      uint64_t nb = arg_bytes(a);
      uint8_t *p = heap_at(sh, a->addr, nb);
      if (p) recv_bytes(m, r, TAG_DONE, p, nb);
    }
  } else if (cmd->op == PTO__DIST_CMD_GET) {
    uint8_t *p = heap_at(sh, cmd->args[0].addr, cmd->args[0].scalar);
    if (p) recv_bytes(m, r, TAG_DONE, p, cmd->args[0].scalar);
  } else if (cmd->op == PTO__DIST_CMD_LOAD) {
    atomic_store(&c->last_slot, h.failed ? -1 : 0);
  } else if (cmd->op == PTO__DIST_CMD_EXIT) {
    atomic_store(&c->state, 3);
  }
  if (h.failed) proxy_fail(sh, r, h.seq, h.msg);
  atomic_store_explicit(&c->tail, h.seq + 1, memory_order_release);
  pto__dist_futex_wake(&c->tail);
  return 1;
}

static void *proxy_main(void *arg) {
  pto__dist_mpi *m = arg;
  pto__dist_shared *sh = m->sh;
  uint64_t idle = 0;
  for (;;) {
    int busy = 0, inflight = 0, live = 0;
    pthread_mutex_lock(&m->mu);
    for (int r = 1; r < sh->nranks; r++) {
      if (atomic_load(&sh->chips[r].state) == 3) continue;
      live++;
      busy += proxy_send(m, r);
      inflight |= m->sent[r] != atomic_load(&sh->chips[r].tail) ||
                  m->sent[r] != atomic_load(&sh->chips[r].head);
    }
    while (proxy_recv(m)) busy = 1;
    if (m->nreqs) { /* finished sends give their requests back */
      int k = 0;
      for (int i = 0; i < m->nreqs; i++) {
        int done = 0;
        MPI_Test(&m->reqs[i], &done, MPI_STATUS_IGNORE);
        if (!done) m->reqs[k++] = m->reqs[i];
      }
      m->nreqs = k;
    }
    pthread_mutex_unlock(&m->mu);
    if (!live && !m->nreqs) break;
    if (busy) {
      idle = 0;
      continue;
    }
    if (!inflight && !m->nreqs) {
      /* Nothing out: sleep until the host posts (the doorbell) or a slice passes. */
      uint32_t bell = atomic_load(&sh->bell);
      int again = 0;
      for (int r = 1; r < sh->nranks; r++)
        again |= atomic_load(&sh->chips[r].state) != 3 &&
                 m->sent[r] != atomic_load(&sh->chips[r].head);
      if (!again) pto__dist_futex_wait(&sh->bell, bell, 20000);
      idle = 0;
      continue;
    }
    backoff(&idle);
  }
  return NULL;
}

int pto__dist_mpi_proxy_start(pto__dist_mpi *m, pto__dist_shared *sh, char *err, size_t errn) {
  m->sh = sh;
  m->wincopy = pto_calloc((size_t)sh->nranks * PTO__DIST_RING * PTO__DIST_MAX_WINDOWS,
                      sizeof(pto__dist_window));
  if (!m->wincopy) {
    snprintf(err, errn, "out of memory");
    return -1;
  }
  /* The hellos: each chip's pid, and that it opened its worker with the same sizes. */
  int bad = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int got = 1; got < m->size;) {
    int flag = 0;
    MPI_Status st;
    pthread_mutex_lock(&m->mu);
    int rc = MPI_Iprobe(MPI_ANY_SOURCE, TAG_DONE, m->comm, &flag, &st);
    done_hdr h;
    if (rc == MPI_SUCCESS && flag) rc = recv_bytes(m, st.MPI_SOURCE, TAG_DONE, &h, sizeof h) ? -1 : 0;
    pthread_mutex_unlock(&m->mu);
    if (rc != MPI_SUCCESS) {
      snprintf(err, errn, "waiting for the chips to start: %s", m->err);
      return -1;
    }
    if (!flag) {
      clock_gettime(CLOCK_MONOTONIC, &t1);
      if (t1.tv_sec - t0.tv_sec > 120) {
        snprintf(err, errn, "%d of %d chips did not start within 120 s", m->size - got, m->size - 1);
        return -1;
      }
      sleep_us(200);
      continue;
    }
    got++;
    pto__dist_chip *c = &sh->chips[st.MPI_SOURCE];
    c->pid = h.pid;
    atomic_store(&c->state, h.failed ? 3 : 1);
    if (h.failed && !bad) {
      snprintf(err, errn, "%s", h.msg);
      bad = 1;
    } else if (!bad && (h.heap_size != sh->heap_size || h.arena_size != sh->arena_size)) {
      snprintf(err, errn,
               "rank %d opened its worker with a %llu-byte heap and a %llu-byte window arena, "
               "rank 0 with %llu and %llu: every rank must pass the same configuration",
               st.MPI_SOURCE, (unsigned long long)h.heap_size, (unsigned long long)h.arena_size,
               (unsigned long long)sh->heap_size, (unsigned long long)sh->arena_size);
      bad = 1;
    }
  }
  for (int r = 1; r < m->size; r++) m->sent[r] = 0;
  if (pthread_create(&m->proxy, NULL, proxy_main, m)) {
    snprintf(err, errn, "starting the MPI proxy thread: %s", strerror(errno));
    return -1;
  }
  m->proxy_started = 1;
  return bad ? -1 : 0;
}

void pto__dist_mpi_proxy_join(pto__dist_mpi *m) {
  if (!m || !m->proxy_started) return;
  pto__dist_futex_wake(&m->sh->bell);
  pthread_join(m->proxy, NULL);
  m->proxy_started = 0;
}

/* ---- ranks other than 0: serving -------------------------------------------------------- */

int pto__dist_mpi_serve(pto__dist_mpi *m, pto__dist_shared *sh, int rank, const char *start_err,
                        pto__dist_exec_fn exec, void *ctx) {
  done_hdr h;
  memset(&h, 0, sizeof h);
  h.seq = ~0u;
  h.pid = (int32_t)getpid();
  h.heap_size = sh->heap_size;
  h.arena_size = sh->arena_size;
  if (start_err) {
    h.failed = 1;
    snprintf(h.msg, sizeof h.msg, "%s", start_err);
  }
  pthread_mutex_lock(&m->mu);
  int bad = send_bytes(m, 0, TAG_DONE, &h, sizeof h, 0);
  pthread_mutex_unlock(&m->mu);
  if (bad) return -1;
  pto__dist_cmd *cmd = pto_malloc(sizeof *cmd);
  if (!cmd) return -1;
  pto__dist_chip *c = &sh->chips[rank];
  uint64_t idle = 0;
  for (uint32_t seq = 0;; seq++) {
    int flag = 0;
    for (;;) {
      pthread_mutex_lock(&m->mu);
      int rc = MPI_Iprobe(0, TAG_CMD, m->comm, &flag, MPI_STATUS_IGNORE);
      pthread_mutex_unlock(&m->mu);
      if (rc != MPI_SUCCESS) {
        free(cmd);
        return -1;
      }
      if (flag) break;
      backoff(&idle);
    }
    idle = 0;
    pthread_mutex_lock(&m->mu);
    bad = recv_bytes(m, 0, TAG_CMD, cmd, sizeof *cmd);
    const char *why = NULL;
    if (!bad && cmd->op == PTO__DIST_CMD_RUN) {
      memset(cmd->dep, 0, sizeof cmd->dep); /* rank 0 sent it once they were met */
      bad = recv_bytes(m, 0, TAG_CMD, sh->windows, sizeof sh->windows);
      for (int i = 0; i < cmd->nargs && !bad; i++) {
        const pto__dist_arg *a = &cmd->args[i];
        if (!(a->ship & PTO__DIST_SHIP_IN)) continue;
        uint8_t *p = heap_at(sh, a->addr, arg_bytes(a));
        if (!p) why = "a host tensor outside the heap";
        static uint8_t sink[1];
        bad = recv_bytes(m, 0, TAG_CMD, p ? p : sink, p ? arg_bytes(a) : 0);
      }
    } else if (!bad && cmd->op == PTO__DIST_CMD_PUT) {
      uint8_t *p = heap_at(sh, cmd->args[0].addr, cmd->args[0].scalar);
      if (!p) why = "an upload outside the heap";
      bad = recv_bytes(m, 0, TAG_CMD, p, p ? cmd->args[0].scalar : 0);
    }
    pthread_mutex_unlock(&m->mu);
    if (bad) break;
    int op = cmd->op;
    if (why) {
      h.failed = 1;
      snprintf(h.msg, sizeof h.msg, "rank %d: %s", rank, why);
    } else {
      if (op == PTO__DIST_CMD_RUN || op == PTO__DIST_CMD_LOAD) exec(ctx, cmd, seq);
      h.failed = atomic_load(&c->failed) != 0;
      if (h.failed) snprintf(h.msg, sizeof h.msg, "%s", c->msg);
      atomic_store(&c->failed, 0);
    }
    h.seq = seq;
    pthread_mutex_lock(&m->mu);
    bad = send_bytes(m, 0, TAG_DONE, &h, sizeof h, 0);
    if (!bad && op == PTO__DIST_CMD_RUN) {
      bad = send_bytes(m, 0, TAG_DONE, &c->recs[seq % PTO__DIST_RECS], sizeof(pto__dist_rec), 0);
      for (int i = 0; i < cmd->nargs && !bad; i++) {
        const pto__dist_arg *a = &cmd->args[i];
        if (!(a->ship & PTO__DIST_SHIP_OUT)) continue;
        uint8_t *p = heap_at(sh, a->addr, arg_bytes(a));
        if (p) bad = send_bytes(m, 0, TAG_DONE, p, arg_bytes(a), 0);
      }
    } else if (!bad && op == PTO__DIST_CMD_GET) {
      uint8_t *p = heap_at(sh, cmd->args[0].addr, cmd->args[0].scalar);
      if (p) bad = send_bytes(m, 0, TAG_DONE, p, cmd->args[0].scalar, 0);
    }
    pthread_mutex_unlock(&m->mu);
    if (bad || op == PTO__DIST_CMD_EXIT) break;
  }
  free(cmd);
  return bad ? -1 : 0;
}

#else /* without MPI: every entry fails, and dist.c refuses transport "mpi" before reaching one */

static int no_mpi_n(char *detail, size_t n) {
  snprintf(detail, n, "this build has no MPI transport (configure with -DPTO_MPI=ON)");
  return -1;
}
static int no_mpi(char *detail) { return no_mpi_n(detail, 512); }
int pto__dist_mpi_get(pto__dist_mpi *m, int peer, uint64_t disp, void *dst, uint64_t n,
                      char *detail) {
  return no_mpi(detail);
}
int pto__dist_mpi_put(pto__dist_mpi *m, int peer, uint64_t disp, const void *src, uint64_t n,
                      char *detail) {
  return no_mpi(detail);
}
int pto__dist_mpi_atomic(pto__dist_mpi *m, int peer, uint64_t disp, int32_t value, int add,
                         int32_t *old, char *detail) {
  return no_mpi(detail);
}
int pto__dist_mpi_read(pto__dist_mpi *m, uint64_t disp, int32_t *out, char *detail) {
  return no_mpi(detail);
}
int pto__dist_mpi_open(uint64_t arena_bytes, const char *windows, pto__dist_mpi **out,
                       int *out_rank, int *out_size, char *err, size_t errn) {
  *out = NULL;
  return no_mpi_n(err, errn);
}
int pto__dist_mpi_is_shared(const pto__dist_mpi *m) { return 0; }
uint8_t *pto__dist_mpi_arena(pto__dist_mpi *m, int q) { return NULL; }
void pto__dist_mpi_close(pto__dist_mpi *m) {}
int pto__dist_mpi_proxy_start(pto__dist_mpi *m, pto__dist_shared *sh, char *err, size_t errn) {
  return no_mpi_n(err, errn);
}
void pto__dist_mpi_proxy_join(pto__dist_mpi *m) {}
int pto__dist_mpi_serve(pto__dist_mpi *m, pto__dist_shared *sh, int rank, const char *start_err,
                        pto__dist_exec_fn exec, void *ctx) {
  return -1;
}
#endif
