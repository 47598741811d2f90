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
 * MPI_Fetch_and_op(MPI_NO_OP), which also drives MPI's progress. Both allocations put the node's
 * arenas in Open MPI's backing directory (/dev/shm); where it is short, the separate windows are
 * MPI_Win_create over each process's own memory instead (a warning says so).
 *
 * Opening and closing are agreements (agree()): every rank sends every other a record of what
 * it found (a failure, its configuration, its backing room) and all decide alike, so no rank
 * enters a collective call the others will not, and each agreement ends at PTO_DIST_TIMEOUT_MS
 * (at least STEP_MIN_MS; the first at least ARRIVE_MIN_MS)
 * naming the ranks that did not arrive. After such a timeout MPI is abandoned: nothing
 * collective is called again, MPI_Finalize included, and mpirun ends the job once this process
 * exits (a rank that left may wait in MPI_Finalize's fence for the others).
 *
 * Threads: rank 0's proxy and host threads and every chip's core threads may call MPI, one at a
 * time under one mutex (MPI_THREAD_SERIALIZED, checked; Open MPI's osc pt2pt refuses window
 * creation under MPI_THREAD_MULTIPLE). No blocking MPI call is made where its peer might be
 * waiting for this process to act: sends of commands are nonblocking and every loop polls. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "dist_internal.h"
#include "runtime_internal.h"

#if PTO_MPI
#include <mpi.h>

enum { TAG_CMD = 7301, TAG_DONE = 7302, TAG_BEAT = 7303 };
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
  void *own_arena;     /* the arena's memory when it is this process's own (MPI_Win_create) */
  uint32_t timeout_ms; /* each agreement's deadline (PTO_DIST_TIMEOUT_MS) */
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
  /* rank 0: when each chip was last heard from (a hello, an answer, a beat; pto__rt_now_ns), the
   * chip being received from now (rank + 1, 0 none: no beat is taken meanwhile), and whether a
   * chip was given up (its pending sends are then left to MPI) */
  _Atomic uint64_t heard_ns[PTO__DIST_MAX_RANKS];
  _Atomic int receiving_from;
  _Atomic int lost;
  /* the other ranks: the thread that sends rank 0 a beat every PTO__DIST_BEAT_MS while serving */
  pthread_t beater;
  _Atomic int beat_stop;
  MPI_Request beats[16];
  int nbeats;
};

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
  if (idle < 200000ull)
    sched_yield();
  else if (idle < 2000000ull)
    sleep_us(30);
  else if (idle < 100000000ull)
    sleep_us(200);
  else
    sleep_us(1000);
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
  if (rc == MPI_SUCCESS)
    rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, m->comm, &flag, MPI_STATUS_IGNORE);
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

/* Every agreement of open and close (a step): each rank sends its record to every other and
 * decides from all of them the same way. Each has a tag of its own, so a late record of an
 * agreement that was given up can never be taken for the next one's. */
enum { STEP_ARRIVE, STEP_ROOM, STEP_SHARED, STEP_SEPARATE, STEP_READY, STEP_CLOSE, NSTEPS };
enum { TAG_AGREE = 7310 };
static const char *const k_step_doing[NSTEPS] = {
    "starting the MPI transport (every rank opening its worker)",
    "checking the room for the window arena",
    "allocating shared windows (MPI_Win_allocate_shared)",
    "allocating separate windows",
    "waiting for every rank's window arena to be zeroed",
    "closing the worker",
};
/* Ranks that open at their own pace (each compiles or loads its program first) are given at
 * least this long to arrive, as rank 0 gives the chips to start (pto__dist_mpi_proxy_start). The
 * later agreements at least STEP_MIN_MS: a rank's own work between two (zeroing its arena on a
 * loaded host) must not pass for its absence, whatever short dist.wait deadline a run sets. */
#define ARRIVE_MIN_MS 120000u
#define STEP_MIN_MS 10000u

typedef struct agree_rec {
  /* First, so that they stay where they are when the rest changes: the pto release and the
   * sizes of the messages the ranks exchange (another build's commands would be misread), and
   * the device count of the worker this rank opens (STEP_ARRIVE; zero in the later steps). */
  char release[32];
  uint32_t wire[4];
  int32_t ndevices;
  uint64_t heap;   /* the worker's host heap (pto_dist_config.shared_heap_bytes), STEP_ARRIVE */
  int32_t failed;  /* this rank cannot go on: msg says why */
  int32_t windows; /* its PTO_MPI_WINDOWS: 0 unset, 1 shared, 2 separate */
  int32_t room;    /* its backing directory (msg) has room for the node's arenas */
  uint64_t arena, need, avail;
  char msg[384];
} agree_rec;

/* Set when an agreement timed out: a rank is missing, so a collective call (MPI_Finalize's
 * fence included) could wait for it for ever. Nothing more is freed collectively, and MPI is
 * not finalized at exit; mpirun then ends the job when this process exits. */
static _Atomic int g_abandoned;

static pthread_once_t g_atexit_once = PTHREAD_ONCE_INIT;
static void finalize_at_exit(void) {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin && !atomic_load(&g_abandoned)) MPI_Finalize();
}
static void register_finalize(void) { atexit(finalize_at_exit); }

#ifdef PTO_TEST_HOOKS
/* PTO_DIST_TEST_MPI_SKIP=RANK:WHAT (the test build only, pto_test). WHAT a step's name
 * (k_step_name): rank RANK leaves before that agreement, as a rank that failed or stopped there
 * would, and the others' wait for it must end at their deadline. WHAT fail-shared: rank RANK does
 * not enter MPI_Win_allocate_shared and fails as if it had failed inside it, while the others
 * wait inside it for ever (the hang of #34 item 12): its own wait must end, naming its error.
 * WHAT stop-at-run: rank RANK stops (SIGSTOP) when its first run arrives (pto__dist_mpi_serve). */
static int test_hook(int rank, const char *what) {
  const char *v = getenv("PTO_DIST_TEST_MPI_SKIP");
  char *end;
  if (!v || strtol(v, &end, 10) != rank || *end != ':') return 0;
  return strcmp(end + 1, what) == 0;
}
static int test_skip(int rank, int step) {
  static const char *const k_step_name[NSTEPS] = {"arrive",   "room",  "shared",
                                                  "separate", "ready", "close"};
  return test_hook(rank, k_step_name[step]);
}
/* PTO_DIST_TEST_MPI_RELEASE=RANK:TEXT: rank RANK says it runs pto TEXT at the first agreement,
 * as a rank of another pto release would. */
static const char *test_release(int rank) {
  const char *v = getenv("PTO_DIST_TEST_MPI_RELEASE");
  char *end;
  if (!v || strtol(v, &end, 10) != rank || *end != ':') return NULL;
  return end + 1;
}
#else
static int test_hook(int rank, const char *what) { return 0; }
static int test_skip(int rank, int step) { return 0; }
static const char *test_release(int rank) { return NULL; }
#endif

/* What a rank says of itself at the first agreement: its release, wire format and devices. */
static void describe_self(agree_rec *r, int rank, int ndevices, uint64_t heap_bytes) {
  const char *rel = test_release(rank);
  snprintf(r->release, sizeof r->release, "%s", rel ? rel : pto_version());
  r->wire[0] = (uint32_t)sizeof(pto__dist_cmd);
  r->wire[1] = (uint32_t)sizeof(done_hdr);
  r->wire[2] = (uint32_t)sizeof(pto__dist_rec);
  r->wire[3] = (uint32_t)sizeof(agree_rec);
  r->ndevices = ndevices;
  r->heap = heap_bytes;
}

/* Why rank q cannot work with rank 0 (another release or build, another device count), into
 * err; 0 when it can. Every rank decides this from the same records, so all fail alike. */
static int mismatch(const agree_rec *all, int q, char *err, size_t errn) {
  const agree_rec *a = &all[q], *z = &all[0];
  if (strncmp(a->release, z->release, sizeof a->release) != 0 ||
      memcmp(a->wire, z->wire, sizeof a->wire) != 0) {
    snprintf(err, errn,
             "MPI rank %d runs pto %.31s (messages of %u, %u, %u and %u bytes), rank 0 pto %.31s "
             "(%u, %u, %u and %u bytes): every rank must run the same pto build",
             q, a->release, a->wire[0], a->wire[1], a->wire[2], a->wire[3], z->release, z->wire[0],
             z->wire[1], z->wire[2], z->wire[3]);
    return 1;
  }
  if (a->ndevices != z->ndevices) {
    snprintf(err, errn,
             "MPI rank %d opened its worker for %d device%s, rank 0 for %d: every rank must run "
             "the same program on the same device set",
             q, a->ndevices, a->ndevices == 1 ? "" : "s", z->ndevices);
    return 1;
  }
  if (a->heap != z->heap) {
    snprintf(err, errn,
             "MPI rank %d opened its worker with a %llu-byte host heap, rank 0 with %llu "
             "(pto_dist_config.shared_heap_bytes): every rank must pass the same configuration",
             q, (unsigned long long)a->heap, (unsigned long long)z->heap);
    return 1;
  }
  return 0;
}

/* Sends mine to every other rank of comm and takes theirs, polling until timeout_ms (at least
 * the step's minimum) have passed. Returns every rank's record (all[rank] is mine; the caller frees
 * it), or NULL with err naming the ranks that did not arrive and what this rank was doing; MPI is
 * abandoned then (g_abandoned), and the buffers MPI may still write are left to it. Called only
 * while no other thread of this process calls MPI (open, and close after the proxy and chips have
 * stopped). */
static agree_rec *agree(MPI_Comm comm, int rank, int size, int step, const agree_rec *mine,
                        uint32_t timeout_ms, char *err, size_t errn) {
  agree_rec *all = pto_calloc((size_t)size, sizeof *all);
  MPI_Request *req = pto_calloc(2 * (size_t)size, sizeof *req);
  if (!all || !req) {
    free(all);
    free(req);
    snprintf(err, errn, "MPI rank %d: out of memory while %s", rank, k_step_doing[step]);
    atomic_store(&g_abandoned, 1); /* the others will wait for this rank in vain */
    return NULL;
  }
  all[rank] = *mine;
  const uint32_t min_ms = step == STEP_ARRIVE ? ARRIVE_MIN_MS : STEP_MIN_MS;
  if (timeout_ms < min_ms) timeout_ms = min_ms;
  int rc = MPI_SUCCESS;
  for (int q = 0; q < size; q++) {
    req[2 * q] = req[2 * q + 1] = MPI_REQUEST_NULL;
    if (q == rank || rc != MPI_SUCCESS) continue;
    rc = MPI_Irecv(&all[q], sizeof *all, MPI_BYTE, q, TAG_AGREE + step, comm, &req[2 * q]);
    if (rc == MPI_SUCCESS)
      rc = MPI_Isend(&all[rank], sizeof *all, MPI_BYTE, q, TAG_AGREE + step, comm, &req[2 * q + 1]);
  }
  uint64_t deadline = pto__rt_now_ns() + (uint64_t)timeout_ms * 1000000ull, idle = 0;
  for (int pending = 1; pending && rc == MPI_SUCCESS;) {
    pending = 0;
    for (int i = 0; i < 2 * size && rc == MPI_SUCCESS; i++) {
      int done = 1;
      if (req[i] != MPI_REQUEST_NULL) rc = MPI_Test(&req[i], &done, MPI_STATUS_IGNORE);
      pending |= !done;
    }
    if (!pending || rc != MPI_SUCCESS) break;
    if (pto__rt_now_ns() > deadline) {
      int n = snprintf(err, errn, "MPI rank %d: rank", rank), missing = 0;
      for (int q = 0; q < size; q++)
        if (req[2 * q] != MPI_REQUEST_NULL && n >= 0 && (size_t)n < errn)
          n += snprintf(err + n, errn - (size_t)n, "%s %d", missing++ ? "," : "", q);
      if (n >= 0 && (size_t)n < errn)
        snprintf(err + n, errn - (size_t)n,
                 " did not arrive within %u ms (PTO_DIST_TIMEOUT_MS, at least %u s%s) while this "
                 "rank was %s: it failed or stopped before agreeing; MPI is left unfinalized so "
                 "that mpirun ends the job",
                 timeout_ms, min_ms / 1000, step == STEP_ARRIVE ? " for ranks to start" : "",
                 k_step_doing[step]);
      n = (int)strlen(err);
      if (mine->failed && (size_t)n < errn) /* why this rank could not go on, if it could not */
        snprintf(err + n, errn - (size_t)n, "; this rank had failed: %s", mine->msg);
      atomic_store(&g_abandoned, 1);
      return NULL; /* all and req stay MPI's: a late record may still land there */
    }
    backoff(&idle);
  }
  if (rc != MPI_SUCCESS) {
    char what[160];
    snprintf(what, sizeof what, "MPI rank %d: exchanging records while %s", rank,
             k_step_doing[step]);
    mpi_msg(err, errn, what, rc);
    atomic_store(&g_abandoned, 1);
    return NULL;
  }
  free(req);
  return all;
}

/* The first rank whose record says failed, or -1. */
static int first_failed(const agree_rec *all, int size) {
  for (int q = 0; q < size; q++)
    if (all[q].failed) return q;
  return -1;
}

/* Open MPI's directory for the arenas' backing files ($OMPI_MCA_osc_sm_backing_directory, else
 * /dev/shm), into r->msg, and whether it has r->need bytes free (r->room; 1 when it cannot be
 * told: then MPI tries). MPI_Win_allocate_shared and, on one node, MPI_Win_allocate both put
 * every rank's arena there. */
static void shm_room(agree_rec *r) {
  const char *dir = getenv("OMPI_MCA_osc_sm_backing_directory");
  if (!dir || !*dir) dir = "/dev/shm";
  snprintf(r->msg, sizeof r->msg, "%s", dir);
  struct statvfs v;
  r->room = 1;
  if (statvfs(dir, &v) != 0) return;
  r->avail = (uint64_t)v.f_bavail * (uint64_t)v.f_frsize;
  r->room = r->avail >= r->need;
}

/* Gives up an open that failed: the window is left when not every rank got one (freeing it is
 * collective over ranks that do not have it), and everything collective once MPI is abandoned. */
static int open_fail(pto__dist_mpi *m) {
  if (!atomic_load(&g_abandoned) && m->comm != MPI_COMM_NULL) MPI_Comm_free(&m->comm);
  if (m->own_arena) munmap(m->own_arena, (size_t)m->arena_size);
  pthread_mutex_destroy(&m->mu);
  free(m);
  return -1;
}

/* The arena over each rank's own memory, for separate windows where the backing directory is
 * short: MPI_Win_create needs no backing file. */
static int create_own_window(pto__dist_mpi *m, char *why, size_t n) {
  void *p = mmap(NULL, (size_t)m->arena_size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    snprintf(why, n, "cannot map a %llu-byte window arena: %s", (unsigned long long)m->arena_size,
             strerror(errno));
    return -1;
  }
  m->own_arena = p;
  int rc = MPI_Win_create(p, (MPI_Aint)m->arena_size, 1, MPI_INFO_NULL, m->comm, &m->win);
  if (rc != MPI_SUCCESS) {
    mpi_msg(why, n, "MPI_Win_create of the window arena", rc);
    return -1;
  }
  m->arena = p;
  return 0;
}

static const char *windows_name(int w) {
  return w == 1   ? "PTO_MPI_WINDOWS=shared"
         : w == 2 ? "PTO_MPI_WINDOWS=separate"
                  : "PTO_MPI_WINDOWS unset";
}

int pto__dist_mpi_open(uint64_t arena_bytes, const char *windows, uint32_t timeout_ms, int ndevices,
                       uint64_t heap_bytes, pto__dist_mpi **out, int *out_rank, int *out_size,
                       char *err, size_t errn) {
  *out = NULL;
  int inited = 0, fin = 0, provided = 0, rc;
  MPI_Finalized(&fin);
  if (fin) {
    snprintf(err, errn, "MPI was finalized in this process already");
    return -1;
  }
  if (atomic_load(&g_abandoned)) {
    snprintf(err, errn,
             "MPI was given up in this process after a rank did not arrive at an agreement: "
             "start a new job");
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
  /* From here every failure is agreed: a rank that left alone would leave the others waiting. */
  agree_rec mine, *all = NULL;
  memset(&mine, 0, sizeof mine);
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  describe_self(&mine, world_rank, ndevices, heap_bytes);
  mine.windows = !windows ? 0 : strcmp(windows, "shared") == 0 ? 1 : 2;
  mine.arena = arena_bytes;
  pto__dist_mpi *m = pto_calloc(1, sizeof *m);
  if (!m) {
    mine.failed = 1;
    snprintf(mine.msg, sizeof mine.msg, "out of memory");
  } else if (provided < MPI_THREAD_SERIALIZED) {
    mine.failed = 1;
    snprintf(mine.msg, sizeof mine.msg,
             "MPI gives thread level %d; the MPI transport needs MPI_THREAD_SERIALIZED (its "
             "threads call MPI one at a time): initialize MPI with MPI_Init_thread",
             provided);
  }
  if (test_skip(world_rank, STEP_ARRIVE)) goto skipped;
  all = agree(MPI_COMM_WORLD, world_rank, world_size, STEP_ARRIVE, &mine, timeout_ms, err, errn);
  if (!all) goto fail_early;
  int bad = first_failed(all, world_size);
  for (int q = 1; q < world_size && bad < 0; q++)
    if (mismatch(all, q, err, errn))
      bad = world_size;
    else if (all[q].windows != all[0].windows || all[q].arena != all[0].arena) {
      snprintf(err, errn,
               "MPI rank %d opened its worker with %s and a %llu-byte window arena, rank 0 with "
               "%s and %llu bytes: every rank must pass the same configuration",
               q, windows_name(all[q].windows), (unsigned long long)all[q].arena,
               windows_name(all[0].windows), (unsigned long long)all[0].arena);
      bad = world_size;
    }
  if (bad >= 0 && bad < world_size) snprintf(err, errn, "MPI rank %d: %s", bad, all[bad].msg);
  free(all);
  if (bad >= 0) goto fail_early;

  /* Every rank is here and goes on in step: the collective calls below cannot be left alone. */
  pthread_mutex_init(&m->mu, NULL);
  m->win = MPI_WIN_NULL;
  m->timeout_ms = timeout_ms;
  MPI_Comm_dup(MPI_COMM_WORLD, &m->comm);
  MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(m->comm, &m->rank);
  MPI_Comm_size(m->comm, &m->size);
  m->arena_size = arena_bytes;
  MPI_Comm node;
  int nsize = 0;
  if (MPI_Comm_split_type(m->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
  }
  int all_here = nsize == m->size;

  /* A rank that cannot get the arenas' backing memory fails inside MPI_Win_allocate_shared (or,
   * on one node, MPI_Win_allocate) while the others wait there for ever: every rank checks the
   * room first, and all agree on the path before the collective call. */
  memset(&mine, 0, sizeof mine);
  mine.need =
      arena_bytes * (uint64_t)(nsize > 0 ? nsize : 1) + (uint64_t)nsize * 65536 + (1u << 20);
  shm_room(&mine);
  if (test_skip(m->rank, STEP_ROOM)) goto skipped;
  if (!(all = agree(m->comm, m->rank, m->size, STEP_ROOM, &mine, timeout_ms, err, errn)))
    return open_fail(m);
  int shortq = -1;
  for (int q = 0; q < m->size && shortq < 0; q++)
    if (!all[q].room) shortq = q;
  char room_why[512] = "", dir[sizeof mine.msg] = "";
  if (shortq >= 0) {
    snprintf(dir, sizeof dir, "%s", all[shortq].msg);
    snprintf(room_why, sizeof room_why,
             "the window arenas of the ranks on its node need %llu bytes of %s, which has %llu "
             "free",
             (unsigned long long)all[shortq].need, all[shortq].msg,
             (unsigned long long)all[shortq].avail);
  }
  free(all);
  const int forced_shared = windows && strcmp(windows, "shared") == 0;
  const int want_shared = !windows || forced_shared;
  if (forced_shared && (!all_here || shortq >= 0)) {
    if (!all_here)
      snprintf(err, errn, "PTO_MPI_WINDOWS=shared, but the ranks are not all on one node");
    else
      snprintf(err, errn,
               "MPI rank %d: PTO_MPI_WINDOWS=shared, but %s: enlarge %s (a container's "
               "--shm-size), lower PTO_DIST_WINDOW_BYTES (pto_dist_config.window_bytes), or unset "
               "PTO_MPI_WINDOWS to fall back to separate windows",
               shortq, room_why, dir);
    return open_fail(m);
  }

  if (want_shared && all_here && shortq < 0) {
    memset(&mine, 0, sizeof mine);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    void *base = NULL;
    if (test_hook(m->rank, "fail-shared"))
      rc = MPI_ERR_NO_MEM;
    else
      rc = MPI_Win_allocate_shared((MPI_Aint)arena_bytes, 1, info, m->comm, &base, &m->win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
      mine.failed = 1;
      mpi_msg(mine.msg, sizeof mine.msg, "MPI_Win_allocate_shared", rc);
    }
    if (test_skip(m->rank, STEP_SHARED)) goto skipped;
    if (!(all = agree(m->comm, m->rank, m->size, STEP_SHARED, &mine, timeout_ms, err, errn)))
      return open_fail(m);
    int bad = first_failed(all, m->size);
    if (bad < 0) {
      m->shared = 1;
      m->arena = base;
    } else if (forced_shared) {
      snprintf(err, errn,
               "MPI rank %d: PTO_MPI_WINDOWS=shared, but %s (the one-sided component "
               "cannot give shared windows)",
               bad, all[bad].msg);
      free(all);
      return open_fail(m);
    }
    free(all);
    /* One failure sends every rank to separate windows (Open MPI's UCX one-sided component
     * cannot give shared ones). A window not every rank got is left as it is. */
    if (!m->shared) m->win = MPI_WIN_NULL;
  }
  if (!m->shared) {
    memset(&mine, 0, sizeof mine);
    if (shortq >= 0) {
      if (m->rank == 0)
        fprintf(stderr,
                "pto: warning: MPI rank %d: %s: using separate windows over each rank's own "
                "memory (MPI_Win_create; one-sided calls, slower than shared windows); enlarge "
                "%s (a container's --shm-size) or lower PTO_DIST_WINDOW_BYTES for shared "
                "windows\n",
                shortq, room_why, dir);
      mine.failed = create_own_window(m, mine.msg, sizeof mine.msg) != 0;
    } else {
      void *base = NULL;
      rc = MPI_Win_allocate((MPI_Aint)arena_bytes, 1, MPI_INFO_NULL, m->comm, &base, &m->win);
      if (rc != MPI_SUCCESS) {
        mine.failed = 1;
        mpi_msg(mine.msg, sizeof mine.msg, "MPI_Win_allocate of the window arena", rc);
      }
      m->arena = base;
    }
    if (test_skip(m->rank, STEP_SEPARATE)) goto skipped;
    if (!(all = agree(m->comm, m->rank, m->size, STEP_SEPARATE, &mine, timeout_ms, err, errn)))
      return open_fail(m);
    int bad = first_failed(all, m->size);
    if (bad >= 0) snprintf(err, errn, "MPI rank %d: %s", bad, all[bad].msg);
    free(all);
    if (bad >= 0) return open_fail(m);
  }
  MPI_Win_set_errhandler(m->win, MPI_ERRORS_RETURN);
  memset(m->arena, 0, (size_t)arena_bytes); /* zeroed, and its pages faulted in, once */
  MPI_Win_lock_all(MPI_MODE_NOCHECK, m->win);
  /* Nobody touches a peer's arena before it is zero. */
  memset(&mine, 0, sizeof mine);
  if (test_skip(m->rank, STEP_READY)) goto skipped;
  if (!(all = agree(m->comm, m->rank, m->size, STEP_READY, &mine, timeout_ms, err, errn)))
    return open_fail(m);
  free(all);
  *out = m;
  *out_rank = m->rank;
  *out_size = m->size;
  return 0;

skipped: /* the test hook: this rank leaves MPI as it is, as a rank that stopped would */
  snprintf(err, errn, "PTO_DIST_TEST_MPI_SKIP: MPI rank %d left before an agreement", world_rank);
fail_early:
  free(m);
  return -1;
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
  /* Every rank frees the window together: a missing one is reported, and nothing collective is
   * called after it (the window and communicator are left to the process's end). */
  agree_rec mine, *all = NULL;
  char err[PTO__DIST_MSG];
  memset(&mine, 0, sizeof mine);
  int skip = test_skip(m->rank, STEP_CLOSE);
  if (!skip)
    all = agree(m->comm, m->rank, m->size, STEP_CLOSE, &mine, m->timeout_ms, err, sizeof err);
  if (all) {
    MPI_Win_free(&m->win);
    MPI_Comm_free(&m->comm);
    if (m->own_arena) munmap(m->own_arena, (size_t)m->arena_size);
  } else if (!skip) { /* close cannot fail: the one report there is */
    fprintf(stderr, "pto: error: closing the distributed worker: %s\n", err);
  }
  free(all);
  pthread_mutex_destroy(&m->mu);
  free(m->wincopy);
  free(m->reqs);
  free(m);
}
/* ---- messages ------------------------------------------------------------------------- */

static int send_bytes(pto__dist_mpi *m, int to, int tag, const void *p, uint64_t n,
                      int nonblocking) {
  for (uint64_t o = 0; o == 0 || o < n; o += CHUNK) {
    int c = (int)(n - o < CHUNK ? n - o : CHUNK);
    int rc;
    if (nonblocking) {
      if (pto_grow_int(&m->reqs, sizeof *m->reqs, &m->capreqs, (int64_t)m->nreqs + 1)) return -1;
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
  atomic_store(&m->receiving_from, from + 1);
  for (uint64_t o = 0; o == 0 || o < n; o += CHUNK) {
    int c = (int)(n - o < CHUNK ? n - o : CHUNK);
    int rc = MPI_Recv((uint8_t *)p + o, c, MPI_BYTE, from, tag, m->comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      atomic_store(&m->receiving_from, 0);
      mpi_msg(m->err, sizeof m->err, "receiving from a chip", rc);
      return -1;
    }
    if (n == 0) break;
  }
  if (from > 0 && from < PTO__DIST_MAX_RANKS) atomic_store(&m->heard_ns[from], pto__rt_now_ns());
  atomic_store(&m->receiving_from, 0);
  return 0;
}

/* Rank 0: takes the beats that have come (each says its rank is alive). Under m->mu. */
static void take_beats(pto__dist_mpi *m) {
  for (;;) {
    int flag = 0;
    MPI_Status st;
    int32_t v;
    if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_BEAT, m->comm, &flag, &st) != MPI_SUCCESS || !flag) return;
    if (MPI_Recv(&v, 1, MPI_INT32_T, st.MPI_SOURCE, TAG_BEAT, m->comm, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS)
      return;
    if (st.MPI_SOURCE > 0 && st.MPI_SOURCE < PTO__DIST_MAX_RANKS)
      atomic_store(&m->heard_ns[st.MPI_SOURCE], pto__rt_now_ns());
  }
}

uint64_t pto__dist_mpi_silent_ms(pto__dist_mpi *m, int r) {
  /* While the proxy receives an answer (from any chip: a large one takes a while on a slow
   * link) it takes no beats, so no chip's silence counts; a chip that stops in the middle of
   * sending one leaves that receive waiting, as it did before beats. */
  if (r <= 0 || r >= PTO__DIST_MAX_RANKS || atomic_load(&m->receiving_from)) return 0;
  uint64_t heard = atomic_load(&m->heard_ns[r]), now = pto__rt_now_ns();
  return heard && now > heard ? (now - heard) / 1000000ull : 0;
}

void pto__dist_mpi_give_up(pto__dist_mpi *m, int r) {
  pto__dist_chip *c = &m->sh->chips[r];
  atomic_store(&m->lost, 1);
  atomic_store(&c->state, 3);
  atomic_store_explicit(&c->tail, atomic_load(&c->head), memory_order_release);
  pto__dist_futex_wake(&c->tail);
}

/* Drops the finished requests of reqs[0..n), keeping the others in order: how many are left. */
static int keep_pending(MPI_Request *reqs, int n) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    int done = 0;
    MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE);
    if (!done) reqs[k++] = reqs[i];
  }
  return k;
}

/* The other ranks: rank 0 hears from this one every PTO__DIST_BEAT_MS, whatever its chip is
 * doing (a long kernel, a load), so that it can tell a rank stopped (SIGSTOP, a debugger) or cut
 * off from a busy one. At most 16 beats are in flight: a rank 0 that does not take them is not
 * flooded. */
static void *beat_main(void *arg) {
  pto__dist_mpi *m = arg;
  static const int32_t one = 1;
  while (!atomic_load(&m->beat_stop)) {
    pthread_mutex_lock(&m->mu);
    m->nbeats = keep_pending(m->beats, m->nbeats);
    if (m->nbeats < (int)(sizeof m->beats / sizeof *m->beats) &&
        MPI_Isend(&one, 1, MPI_INT32_T, 0, TAG_BEAT, m->comm, &m->beats[m->nbeats]) == MPI_SUCCESS)
      m->nbeats++;
    pthread_mutex_unlock(&m->mu);
    for (int i = 0; i < PTO__DIST_BEAT_MS / 10 && !atomic_load(&m->beat_stop); i++)
      sleep_us(10000);
  }
  return NULL;
}

/* Ends the beats; those still in flight complete on their own (MPI_Request_free). */
static void stop_beats(pto__dist_mpi *m, int started) {
  if (!started) return;
  atomic_store(&m->beat_stop, 1);
  pthread_join(m->beater, NULL);
  pthread_mutex_lock(&m->mu);
  for (int i = 0; i < m->nbeats; i++)
    MPI_Request_free(&m->beats[i]);
  m->nbeats = 0;
  pthread_mutex_unlock(&m->mu);
}

static uint64_t arg_bytes(const pto__dist_arg *a) {
  uint64_t n = pto_dtype_size((pto_dtype)a->dtype);
  for (int i = 0; i < a->rank; i++)
    n *= (uint64_t)a->shape[i];
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
    if (want &&
        (int32_t)(atomic_load_explicit(&sh->chips[r].tail, memory_order_acquire) - want) < 0)
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
      pto__dist_window *wc =
          &m->wincopy[((size_t)r * PTO__DIST_RING + s % PTO__DIST_RING) * PTO__DIST_MAX_WINDOWS];
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
    while (proxy_recv(m))
      busy = 1;
    take_beats(m);
    m->nreqs = keep_pending(m->reqs, m->nreqs); /* finished sends give their requests back */
    pthread_mutex_unlock(&m->mu);
    /* A chip given up (pto__dist_mpi_give_up) may never take what was sent to it. */
    if (!live && (!m->nreqs || atomic_load(&m->lost))) break;
    if (busy) {
      idle = 0;
      continue;
    }
    if (!inflight && !m->nreqs) {
      /* Nothing out: sleep until the host posts (the doorbell) or a slice passes. */
      uint32_t bell = atomic_load(&sh->bell);
      int again = 0;
      for (int r = 1; r < sh->nranks; r++)
        again |=
            atomic_load(&sh->chips[r].state) != 3 && m->sent[r] != atomic_load(&sh->chips[r].head);
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
    if (rc == MPI_SUCCESS && flag)
      rc = recv_bytes(m, st.MPI_SOURCE, TAG_DONE, &h, sizeof h) ? -1 : 0;
    pthread_mutex_unlock(&m->mu);
    if (rc != MPI_SUCCESS) {
      snprintf(err, errn, "waiting for the chips to start: %s", m->err);
      return -1;
    }
    if (!flag) {
      clock_gettime(CLOCK_MONOTONIC, &t1);
      if (t1.tv_sec - t0.tv_sec > 120) {
        snprintf(err, errn, "%d of %d chips did not start within 120 s", m->size - got,
                 m->size - 1);
        return -1;
      }
      sleep_us(200);
      continue;
    }
    got++;
    pto__dist_chip *c = &sh->chips[st.MPI_SOURCE];
    c->pid = h.pid;
    atomic_store(&m->heard_ns[st.MPI_SOURCE], pto__rt_now_ns());
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
  for (int r = 1; r < m->size; r++)
    m->sent[r] = 0;
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
  /* A chip that did not start gets no command, not even EXIT (rank 0 marks it gone): waiting for
   * one would keep this rank from the close agreement until the others' deadline. */
  if (bad || start_err) return -1;
  pto__dist_cmd *cmd = pto_malloc(sizeof *cmd);
  if (!cmd) return -1;
  atomic_store(&m->beat_stop, 0);
  int beating = !pthread_create(&m->beater, NULL, beat_main, m);
  pto__dist_chip *c = &sh->chips[rank];
  uint64_t idle = 0;
  for (uint32_t seq = 0;; seq++) {
    int flag = 0;
    for (;;) {
      pthread_mutex_lock(&m->mu);
      int rc = MPI_Iprobe(0, TAG_CMD, m->comm, &flag, MPI_STATUS_IGNORE);
      pthread_mutex_unlock(&m->mu);
      if (rc != MPI_SUCCESS) {
        stop_beats(m, beating);
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
    /* The test hook PTO_DIST_TEST_MPI_SKIP=RANK:stop-at-run: this rank stops at its first run,
     * as one stopped by a signal or a debugger would (its beats stop too). */
    if (op == PTO__DIST_CMD_RUN && test_hook(rank, "stop-at-run")) raise(SIGSTOP);
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
    if (op == PTO__DIST_CMD_EXIT) stop_beats(m, beating), beating = 0;
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
  stop_beats(m, beating);
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
int pto__dist_mpi_open(uint64_t arena_bytes, const char *windows, uint32_t timeout_ms, int ndevices,
                       uint64_t heap_bytes, pto__dist_mpi **out, int *out_rank, int *out_size,
                       char *err, size_t errn) {
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
uint64_t pto__dist_mpi_silent_ms(pto__dist_mpi *m, int r) { return 0; }
void pto__dist_mpi_give_up(pto__dist_mpi *m, int r) {}
int pto__dist_mpi_serve(pto__dist_mpi *m, pto__dist_shared *sh, int rank, const char *start_err,
                        pto__dist_exec_fn exec, void *ctx) {
  return -1;
}
#endif
