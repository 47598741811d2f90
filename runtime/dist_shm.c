/* The transport of a chip of a distributed worker: its pto_dist_ctx.
 *
 * One implementation serves both backends. Shared memory on one host: every chip maps the shared
 * heap at the same address, so a peer's element of a window is this rank's address plus
 * (peer - rank) * the window's rank stride. MPI: windows live at the same offset of each rank's
 * arena (MPI window memory); with MPI shared windows every peer's arena is directly addressable,
 * as on one host; across hosts (MPI_Win_allocate) a peer is reached only through one-sided calls
 * (dist_mpi.c: get, put, atomic add/replace, atomic read), so every access below goes through
 * rd/wr/sig_* which take the direct path when there is one.
 *
 * notify is an atomic store or add followed by a futex wake when the peer has a waiter asleep;
 * wait spins (unless another rank waits on its CPU), yields while its CPU goes to nothing else or
 * to peer ranks, then sleeps on a futex (or, through MPI, polls with short sleeps) until its
 * deadline (wait_elem says why). Collectives are built on those primitives and plain loads and
 * stores of the peers' slices, one path for every dtype and backend; they leave the signal window
 * as they found it (zero). A small allreduce with more ranks than CPUs is reduced by the last rank
 * to arrive (gather_allreduce): one wait per rank instead of two barriers' worth. Each rank's
 * thread asks the scheduler for a short time slice while it runs collectives on small windows
 * (PTO__DIST_SLICE_NS), so that it takes its CPU back from other work sooner. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dist_internal.h"
#include "runtime_internal.h"

void pto__dist_futex_wait(_Atomic uint32_t *addr, uint32_t val, uint32_t timeout_us) {
  struct timespec ts = {.tv_sec = timeout_us / 1000000u,
                        .tv_nsec = (long)(timeout_us % 1000000u) * 1000};
  syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

void pto__dist_futex_wake(_Atomic uint32_t *addr) {
  syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static pto__dist_shm *T(const pto_dist_ctx *d) { return (pto__dist_shm *)d->impl; }

/* Rank q's slice of window w: a direct pointer, or NULL where only MPI reaches it. */
static uint8_t *slice_of(const pto__dist_shared *sh, const pto__dist_window *w, int q) {
  if (!sh->mpi) return sh->heap + w->off + (uint64_t)q * w->stride;
  return sh->arena[q] ? sh->arena[q] + w->off : NULL;
}

/* The window holding [local, local + n) in this rank's slice: its index, or -1. */
static int find_window(const pto__dist_shm *t, const void *local, uint64_t n, uint64_t *out_off) {
  const pto__dist_shared *sh = t->sh;
  const uint8_t *p = local;
  for (int i = 0; i < PTO__DIST_MAX_WINDOWS; i++) {
    const pto__dist_window *w = &sh->windows[i];
    if (!atomic_load_explicit(&w->live, memory_order_acquire)) continue;
    const uint8_t *lo = slice_of(sh, w, t->ctx.rank);
    if (p >= lo && p + n <= lo + w->bytes) {
      *out_off = (uint64_t)(p - lo);
      return i;
    }
  }
  return -1;
}

/* Window wi as messages name it: "%wsig", the host's name for it (pto_host_api.name_window), or
 * its slot number where the host code gave none (a host.c from before names). */
static const char *win_label(const pto__dist_shm *t, int wi, char *buf, size_t n) {
  if (wi < 0) return "?";
  const char *name = t->sh->windows[wi].name;
  if (name[0])
    snprintf(buf, n, "%%%.*s", PTO_HOST_WINDOW_NAME - 1, name);
  else
    snprintf(buf, n, "%d", wi);
  return buf;
}

/* " %wsig" for the named window holding the 4 bytes at local, "" for none (a message's
 * optional part). */
static const char *win_named(const pto__dist_shm *t, const void *local, char *buf, size_t n) {
  uint64_t off;
  int wi = local ? find_window(t, local, 4, &off) : -1;
  if (wi < 0 || !t->sh->windows[wi].name[0]) return "";
  snprintf(buf, n, " %%%.*s", PTO_HOST_WINDOW_NAME - 1, t->sh->windows[wi].name);
  return buf;
}

/* A peer's bytes at the same window offset as a local address: p where directly addressable
 * (NULL otherwise), disp its byte offset in the peer's arena for MPI. */
typedef struct peer_ref {
  uint8_t *p;
  uint64_t disp;
  int peer;
} peer_ref;

static peer_ref ref_at(peer_ref r, uint64_t off) {
  if (r.p) r.p += off;
  r.disp += off;
  return r;
}

/* A rank argument of a kernel beyond int32 arrives saturated (compiler/lower_dist.c rank_at). */
static const char *saturated(int32_t rank) {
  return rank == INT32_MAX || rank == INT32_MIN ? " (or beyond)" : "";
}

/* The peer's reference for [local, local + n); -1 (detail set) when not in a window or a bad
 * peer. */
static int peer_of(pto__dist_shm *t, const void *local, uint64_t n, int32_t peer, peer_ref *out) {
  if (peer < 0 || peer >= t->ctx.nranks) {
    snprintf(t->detail, sizeof t->detail, "rank %d: peer %d%s is out of range (0 to %d)",
             t->ctx.rank, peer, saturated(peer), t->ctx.nranks - 1);
    return -1;
  }
  uint64_t off;
  int wi = find_window(t, local, n, &off);
  if (wi < 0) {
    snprintf(t->detail, sizeof t->detail,
             "rank %d: an address passed to dist.* is not inside a comm window of this rank",
             t->ctx.rank);
    return -1;
  }
  const pto__dist_window *w = &t->sh->windows[wi];
  uint8_t *base = slice_of(t->sh, w, peer);
  out->p = base ? base + off : NULL;
  out->disp = w->off + off;
  out->peer = peer;
  return 0;
}

/* n bytes of the peer's into dst. */
static int32_t rd(pto__dist_shm *t, const peer_ref *r, void *dst, uint64_t n) {
  if (!n) return PTO_KERNEL_OK;
  if (r->p) {
    memcpy(dst, r->p, (size_t)n);
    return PTO_KERNEL_OK;
  }
  return pto__dist_mpi_get(t->sh->mpi, r->peer, r->disp, dst, n, t->detail) ? PTO_KERNEL_ERR_DIST
                                                                            : PTO_KERNEL_OK;
}

/* n bytes of src into the peer's. */
static int32_t wr(pto__dist_shm *t, const peer_ref *r, const void *src, uint64_t n) {
  if (!n) return PTO_KERNEL_OK;
  if (r->p) {
    memcpy(r->p, src, (size_t)n);
    return PTO_KERNEL_OK;
  }
  return pto__dist_mpi_put(t->sh->mpi, r->peer, r->disp, src, n, t->detail) ? PTO_KERNEL_ERR_DIST
                                                                            : PTO_KERNEL_OK;
}

/* The peer's bytes readable in place, or copied into buf (n <= the bounce size) first. */
static const uint8_t *rd_ptr(pto__dist_shm *t, const peer_ref *r, uint8_t *buf, uint64_t n,
                             int32_t *rc) {
  *rc = PTO_KERNEL_OK;
  if (r->p) return r->p;
  *rc = rd(t, r, buf, n);
  return buf;
}

/* wait_elem's phases (see there). */
#define SPIN_NS 50000ull
#define SPIN_OWN_NS 1000000ull
#define SPIN_OWN_BYTES (4u << 20) /* collectives on bigger windows spin SPIN_NS */
#ifndef PTO__DIST_GUARD_BYTES
#define PTO__DIST_GUARD_BYTES (256 << 10) /* collectives on these windows guard every wait */
#endif
#define YIELD_NS 200000ull
#define YIELD_ALONE_NS 5000ull
/* A yield that gave this long (and three quarters of it) to other processes than the peer ranks
 * handed the CPU to another process for its time slice (pto__dist_yield_went): after two such
 * within YIELD_OFF_NS the rank's guarded waits sleep without yielding on the CPUs they were lost
 * on for YIELD_OFF_NS (pto__dist_guard_lost). */
#define YIELD_LOST_NS 200000ull
#define YIELD_OFF_NS 50000000ull
/* The EEVDF slice each rank of the shared-memory transport asks for (pto__dist_shm_init;
 * PTO_DIST_SLICE_US, 0: the kernel's default) for its collectives on windows under guard_bytes
 * (slice_for), where Linux 6.12+ keeps a slice per task (sched_setattr's sched_runtime, 0.1-100
 * ms; the default was 1.4 ms on this VM kind). A woken task with a shorter slice than the one
 * running preempts it (PREEMPT_SHORT), and a yield moves the yielder's deadline on by its own
 * slice, so a rank that shares its CPU with a busy process gets the CPU back from it within its
 * short slice, woken or yielding, where with the default it waited out the busy process's slice
 * (issue #31 item 1, 4 ranks beside a busy loop on 2 CPUs, 90 alternated rounds at load 8-13,
 * min/median/max of the runs' medians, default against 100 us: 1 KiB 6.2/19.7/887 against
 * 4.6/8.3/83 us, at or under 18.3 us in 39 against 83 runs; 64 KiB 26/3952/12010 against
 * 18/35/101 us; 1 MiB 254/658/9496 against 266/725/6401 us, over 1.5 ms in 24 against 26 runs).
 * A collective on a bigger window runs with the slice the thread had before: a precaution for
 * long reductions beside other work, not a measured gain (with the short slice kept there too, 1
 * MiB differed as much: 1098 and 774 against 1445 and 1022 us in two sets of 20 and 30 rounds;
 * the 64 MiB medians 120 against 116 ms either way). sched_setattr costs ~5 us here, so a
 * thread's slice changes only where the window's size class does. A compute loop beside a busy
 * loop on one CPU switched as often with 100 us as with the default (71-91 switches, the same CPU
 * time): the slice orders turns, it does not cut a lone kernel into more of them. */
#define PTO__DIST_SLICE_NS 100000ull

/* An atomic add (add) or store of value on a signal element, waking its waiters. */
static int32_t sig_op(pto__dist_shm *t, const peer_ref *r, int32_t value, int add) {
  if (t->direct) {
    _Atomic int32_t *p = (_Atomic int32_t *)r->p;
    if (add)
      atomic_fetch_add_explicit(p, value, memory_order_seq_cst);
    else
      atomic_store_explicit(p, value, memory_order_seq_cst);
    /* The wake is a system call: only for a peer with a waiter asleep (or about to be: it counts
     * itself in sleepers, seq_cst, before the futex rechecks the value). Under MPI sh is this
     * process's own, so the count of another process is not here: always wake. */
    if (t->sh->mpi || atomic_load_explicit(&t->sh->chips[r->peer].sleepers, memory_order_seq_cst))
      pto__dist_futex_wake((_Atomic uint32_t *)p);
    return PTO_KERNEL_OK;
  }
  return pto__dist_mpi_atomic(t->sh->mpi, r->peer, r->disp, value, add, NULL, t->detail)
             ? PTO_KERNEL_ERR_DIST
             : PTO_KERNEL_OK;
}

static int32_t shm_notify(const pto_dist_ctx *d, int32_t *sig, int32_t peer, int32_t value,
                          int32_t op) {
  pto__dist_shm *t = T(d);
  peer_ref r;
  if (peer_of(t, sig, 4, peer, &r)) return PTO_KERNEL_ERR_DIST;
  return sig_op(t, &r, value, op == PTO_DIST_NOTIFY_ADD);
}

static int satisfied(int32_t cur, int32_t value, int32_t cmp) {
  return cmp == PTO_DIST_WAIT_GE ? cur >= value : cur == value;
}

/* This rank's element: a plain atomic load, or through MPI where peers update it that way. */
static int32_t sig_read(pto__dist_shm *t, int32_t *sig, int32_t *out) {
  if (t->direct) {
    *out = atomic_load_explicit((_Atomic int32_t *)sig, memory_order_acquire);
    return PTO_KERNEL_OK;
  }
  peer_ref r;
  if (peer_of(t, sig, 4, t->ctx.rank, &r)) return PTO_KERNEL_ERR_DIST;
  return pto__dist_mpi_read(t->sh->mpi, r.disp, out, t->detail) ? PTO_KERNEL_ERR_DIST
                                                                : PTO_KERNEL_OK;
}

/* The MPI form of a run's abort: 24 bits of the epoch and 1 + the rank, in one int32. */
static int32_t abort_word(int rank, uint32_t epoch) {
  return (int32_t)((epoch & 0xffffffu) << 8 | (uint32_t)(rank + 1));
}

void pto__dist_abort_raise(pto__dist_shared *sh, int rank, uint32_t epoch) {
  if (!epoch) return;
  if (!sh->mpi) {
    uint64_t mine = (uint64_t)epoch << 32 | (uint64_t)(rank + 1);
    uint64_t cur = atomic_load(&sh->abort);
    while (cur >> 32 != epoch && !atomic_compare_exchange_weak(&sh->abort, &cur, mine)) {
    }
    return;
  }
  /* Every rank's word, its own included (rank 0's drain reads its own), unless this run's abort
   * already reached this rank: a rank failing because of it (its wait aborted) must not
   * overwrite the first rank's name. Without a compare-and-swap two ranks failing at once may
   * each win somewhere: either names a real failure. */
  if (pto__dist_abort_first(sh, rank == PTO__DIST_HOST_RANK ? 0 : rank, epoch) >= 0) return;
  char detail[512];
  for (int q = 0; q < sh->nranks; q++) {
    uint8_t *a = pto__dist_mpi_arena(sh->mpi, q);
    if (a)
      atomic_store((_Atomic int32_t *)a, abort_word(rank, epoch));
    else
      (void)pto__dist_mpi_atomic(sh->mpi, q, 0, abort_word(rank, epoch), 0, NULL, detail);
  }
}

int pto__dist_abort_first(pto__dist_shared *sh, int rank, uint32_t epoch) {
  if (!epoch) return -1;
  if (!sh->mpi) {
    uint64_t ab = atomic_load_explicit(&sh->abort, memory_order_acquire);
    return ab >> 32 == epoch ? (int)(uint32_t)ab - 1 : -1;
  }
  int32_t v = 0;
  char detail[512];
  /* As a signal element is read: in place in a shared window, else through MPI, where the peers'
   * one-sided writes land. */
  if (pto__dist_mpi_is_shared(sh->mpi))
    v = atomic_load((_Atomic int32_t *)pto__dist_mpi_arena(sh->mpi, rank));
  else if (pto__dist_mpi_read(sh->mpi, 0, &v, detail))
    return -1;
  return ((uint32_t)v >> 8) == (epoch & 0xffffffu) ? (v & 0xff) - 1 : -1;
}

/* Another rank of this run failed first: the wait fails now, naming it. */
static int aborted(pto__dist_shm *t, const char *what) {
  int first = pto__dist_abort_first(t->sh, t->ctx.rank, t->epoch);
  if (first < 0 || first == t->ctx.rank) return 0;
  if (first == PTO__DIST_HOST_RANK)
    snprintf(t->detail, sizeof t->detail, "rank %d: %s aborted because the host function failed",
             t->ctx.rank, what);
  else
    snprintf(t->detail, sizeof t->detail, "rank %d: %s aborted because rank %d failed", t->ctx.rank,
             what, first);
  return 1;
}

/* A turn of this rank on its CPU inside a dist.* operation begins (the operation starts, a
 * yield or a sleep returns). */
static void hold(pto__dist_shm *t, uint64_t now) {
  atomic_store_explicit(&t->sh->chips[t->ctx.rank].held_since, now, memory_order_relaxed);
}

/* The turn ends (a yield, a sleep, the operation's end): its time is added to the chip's
 * held_ns, with the CPU it ran on in cpu. Returns that CPU (1 + its number, 0: not known). */
static int give_up(pto__dist_shm *t, uint64_t now) {
  pto__dist_chip *chip = &t->sh->chips[t->ctx.rank];
  int me = sched_getcpu() + 1;
  uint64_t since = atomic_load_explicit(&chip->held_since, memory_order_relaxed);
  atomic_store_explicit(&chip->cpu, me, memory_order_relaxed);
  if (since && now > since)
    atomic_store_explicit(&chip->held_ns,
                          atomic_load_explicit(&chip->held_ns, memory_order_relaxed) + now - since,
                          memory_order_relaxed);
  atomic_store_explicit(&chip->held_since, 0, memory_order_relaxed);
  return me;
}

/* Every peer's held_ns into held (shared memory; under MPI the chips' blocks are each process's
 * own and this rank sees none of its peers'). */
static void peers_held(pto__dist_shm *t, uint64_t *held) {
  for (int q = 0; q < t->ctx.nranks && !t->sh->mpi; q++)
    held[q] = atomic_load_explicit(&t->sh->chips[q].held_ns, memory_order_relaxed);
}

int pto__dist_yield_went(const pto__dist_shm *t, const uint64_t *held, int me, uint64_t y0,
                         uint64_t y1, uint64_t *foreign) {
  uint64_t peers = 0, back = y1 - y0;
  for (int q = 0; q < t->ctx.nranks && !t->sh->mpi && me > 0; q++) {
    const pto__dist_chip *c = &t->sh->chips[q];
    if (q == t->ctx.rank || atomic_load_explicit(&c->cpu, memory_order_relaxed) != me) continue;
    uint64_t since = atomic_load_explicit(&c->held_since, memory_order_relaxed);
    peers += atomic_load_explicit(&c->held_ns, memory_order_relaxed) - held[q];
    if (since && since < y1) peers += y1 - (since > y0 ? since : y0);
  }
  *foreign = back > peers ? back - peers : 0;
  if (back < YIELD_ALONE_NS) return PTO__DIST_YIELD_BACK;
  if (*foreign >= YIELD_LOST_NS && *foreign >= back - back / 4) return PTO__DIST_YIELD_LOST;
  return *foreign < back ? PTO__DIST_YIELD_PEER : PTO__DIST_YIELD_AWAY;
}

uint64_t pto__dist_cpu_bit(int me) { return me > 0 && me <= 64 ? 1ull << (me - 1) : ~0ull; }

/* A guarded wait's yield lost the CPU at now, on CPU me: the second within YIELD_OFF_NS turns the
 * guarded waits' yields off for YIELD_OFF_NS on the CPUs the two were lost on (off_cpus). One
 * alone is as likely a kernel thread's or a short job's turn (after a run's first touch of its
 * windows, hundreds of us of them: 4 ranks at 1 KiB after 64 MiB windows tripped the guard in 3
 * of 8 runs, medians of 58-70 us against 13-21 without); a busy process takes the CPU at every
 * yield that reaches it. Off only there: the busy process is on a CPU, and a rank that the
 * scheduler moves off it (4 ranks at 1 KiB beside a busy loop: two or three of them settle on
 * the other CPU within the first allreduces, or all four) finds its peers there and hands them
 * the CPU by yielding (6-7 us an allreduce) rather than through futex wake-ups (17-35 us: each
 * rank's turn a wake-up and a sleep). A loss on another CPU while off adds that CPU: a busy
 * process that moves costs a rank one more slice, not two. */
void pto__dist_guard_lost(pto__dist_shm *t, uint64_t now, int me) {
  uint64_t bit = pto__dist_cpu_bit(me);
  if (now < t->no_yield_until) {
    t->off_cpus |= bit;
  } else if (t->lost_at && now - t->lost_at < YIELD_OFF_NS) {
    t->no_yield_until = now + YIELD_OFF_NS;
    t->off_cpus = t->lost_cpus | bit;
    t->lost_at = 0;
  } else {
    t->lost_at = now;
    t->lost_cpus = bit;
  }
}

int pto__dist_guard_yields(const pto__dist_shm *t, uint64_t now, int me) {
  return now >= t->no_yield_until || !(t->off_cpus & pto__dist_cpu_bit(me));
}

/* The other ranks' progress on this host, as one count that grows with it: the waits they
 * entered, the commands they finished and their watchers' beats that saw a task completed
 * (dist.c watch_progress). 0 under MPI, where the peers' control blocks are not shared. */
static uint64_t peers_progress(const pto__dist_shm *t) {
  if (t->sh->mpi) return 0;
  uint64_t n = 0;
  for (int q = 0; q < t->ctx.nranks; q++) {
    if (q == t->ctx.rank) continue;
    const pto__dist_chip *c = &t->sh->chips[q];
    n += (uint64_t)atomic_load_explicit(&c->nwaits, memory_order_relaxed) +
         atomic_load_explicit(&c->tail, memory_order_relaxed) +
         atomic_load_explicit(&c->ntaskbeats, memory_order_relaxed);
  }
  return n;
}

/* Where ranks outnumber CPUs, a rank whose guarded yield was lost to another process (a busy
 * loop, another job on its CPU) moves itself to the CPU where most of its peer ranks last waited
 * (PTO_DIST_JOIN=0: it stays). Left there, it takes its turns beside that process through futex
 * wake-ups once the guard is off (pto__dist_guard_lost), or its peers there wait behind the
 * process's slice, the slow steady state two ranks beside a busy loop with two on the other CPU
 * settle in; on its peers' CPU it hands them the CPU by yielding. A migration, not a pin (the
 * affinity mask is put back, as spread does; a CPU outside the mask is left alone); a collective
 * over GATHER_BYTES moves it home first (shm_collective), where the ranks' work is better spread,
 * unless its yields were lost on its home lately (home_lost).
 * Issue #31 item 1, 4 ranks beside a busy loop on 2 CPUs, one binary, alternated, 196 rounds at
 * load 3-10 (1 KiB, min/median/max of the runs' medians): 4.8/8.5/51.7 against 4.6/8.4/47.8 us,
 * at or under 18.3 us (Open MPI's best) in 188 against 173 runs, over 12.6 us in 13 against 28;
 * runs under 6 us 1 against 8. Joining only once the guard was off (the second lost yield)
 * kept them (12 of 200) but cut fewer slow runs (185 of 200 at or under 18.3 us, against 192). */
int pto__dist_join_peers(pto__dist_shm *t, int me) {
  if (!t->join || !t->gather || t->sh->mpi || me <= 0) return 0;
  int best = 0, nbest = 0, n = t->ctx.nranks, cpu[PTO__DIST_MAX_RANKS];
  for (int q = 0; q < n; q++)
    cpu[q] =
        q == t->ctx.rank ? 0 : atomic_load_explicit(&t->sh->chips[q].cpu, memory_order_relaxed);
  for (int q = 0; q < n; q++) {
    if (cpu[q] <= 0 || cpu[q] == me) continue;
    int k = 0;
    for (int p = 0; p < n; p++)
      k += cpu[p] == cpu[q];
    if (k > nbest) nbest = k, best = cpu[q];
  }
  if (!best) return 0;
  cpu_set_t mask, one;
  if (best > CPU_SETSIZE || sched_getaffinity(0, sizeof mask, &mask) || !CPU_ISSET(best - 1, &mask))
    return 0;
  CPU_ZERO(&one);
  CPU_SET(best - 1, &one);
  if (sched_setaffinity(0, sizeof one, &one)) return 0;
  int at = sched_getcpu() + 1; /* the move is done when the call returns */
  (void)sched_setaffinity(0, sizeof mask, &mask);
  t->joined = at;
  return at;
}

/* wait_elem past its spin: yields while its yields come straight back (nothing else wants this
 * CPU) or go to peer ranks (pto__dist_yield_went: the peers' turns on this CPU account for the
 * time), then sleeps, until the element is satisfied, the run is aborted or the deadline passes.
 * Ranks that share CPUs (issue #31 item 1: 4 ranks on 2 CPUs) hand each other the CPU this way,
 * ~5 us a switch on this VM kind, where a sleep costs a futex wake-up on another CPU (25-30 us);
 * the yields used to end at the first one that came back later than YIELD_ALONE_NS, i.e. at the
 * first that reached a peer. guard (the small allreduce's single wait in gather_allreduce, and
 * every wait of a collective on a window of at least guard_bytes: its barriers' and ring steps';
 * not dist.wait): a yield that lost the CPU to another process (a busy loop, another job) for its
 * time slice, milliseconds under EEVDF, where a futex-woken sleeper preempts it; the second such
 * within YIELD_OFF_NS (pto__dist_guard_lost) turns the rank's guarded waits' yields off for
 * YIELD_OFF_NS on the CPUs they were lost on, so a host with other work costs two slices per
 * YIELD_OFF_NS (and one per other CPU the busy process moves to) rather than one per allreduce
 * (issue #31: 4 ranks, 1-16 KiB at load ~11: medians of 3-12 ms in 6 of 8 runs yielding, 53-101 us
 * in 4 of 4 with the guard), while ranks alone on their CPUs keep the yields that hand the CPU
 * straight to a peer rank. Lost counts only the time no peer had: a peer's turn that took
 * YIELD_LOST_NS (the first collectives of a run fault pages in for 0.3-1 ms on this VM kind) once
 * turned the guard on at start-up for the whole measurement after it (4 ranks at 1 KiB: 3 sleeps
 * and wake-ups a rank and allreduce, 50-60 us, against 15-35 us yielding). Big windows' barriers
 * and ring steps (issue #31 item 1, round 14): 4 ranks at 1 MiB beside a busy loop stalled now and
 * then, a rank alone with the busy loop on its CPU getting each yield back after the loop's
 * slice, 3.6-3.9 ms, at every allreduce of the run (a waiter beside a busy loop, woken from the
 * other CPU: back after 1.5 ms by the median yielding, 20 us asleep). Guarding those waits
 * stopped it (runs over 1.5 ms: 3 of 8 -> 0 of 8 and 0 of 12, medians level); guarding them at
 * every size cost the small windows (1 KiB 8-32 us against 7.5-10; 64 KiB tails to 115 us) and
 * sleeping at once where no peer rank shared the CPU cost 4 ranks at 1 MiB on an idle host ~50 us
 * (335 against 283 us), so neither is done. A big window's guard is off on every CPU once it is
 * off (pto__dist_guard_yields with CPU 0): there a yield saves a few us of a several-hundred-us
 * collective, and each CPU tried afresh lost a slice of a few repetitions (4 ranks at 1 MiB beside
 * a busy loop: medians of 2.5-3.1 ms in 2 of 10 runs with the small allreduce's rule, 0 of 10
 * before).
 * Where ranks outnumber CPUs the rank whose guarded yield was lost also moves itself to the CPU
 * its peers last waited on (pto__dist_join_peers).
 * deadline: timeout_ms after the wait began (wait_elem, before its spin; it used to count from
 * here, past the spin, so a 1 ms timeout failed after ~2 ms while saying "after 1 ms"). It is one
 * of progress: a peer's progress (peers_progress) seen since the spin moves it on, so the wait
 * fails once no other rank on this host has made progress for timeout_ms.
 * A peer that reaches its notify late because it had work to do first (its kernels, its own
 * waits), on a loaded host or under a sanitizer, is not a stuck program; a deadlock (the peers
 * wait too, for this rank or for each other), a peer that will never notify (its call ended) or
 * one stuck in a kernel still fails, within one to two timeout_ms. Under MPI the deadline runs
 * from the wait's start. */
#define PROBE_NS 5000000ull /* stuck_probe */
static int32_t stuck_probe(pto__dist_shm *t, int *pushed);

static int32_t wait_slow(pto__dist_shm *t, int32_t *sig, int32_t value, int32_t cmp,
                         const char *what, int guard, uint64_t deadline) {
  int dir = t->direct, yielding = 1;
  int32_t cur = 0, rc;
  pto__dist_chip *chip = &t->sh->chips[t->ctx.rank];
  uint64_t start = pto__rt_now_ns(), progress = peers_progress(t), probe = start + PROBE_NS;
  int pushed = 0;
  for (;;) {
    if ((rc = sig_read(t, sig, &cur))) return rc;
    if (satisfied(cur, value, cmp)) return 0;
    if (aborted(t, what)) return PTO_KERNEL_ERR_DIST;
    uint64_t now = pto__rt_now_ns(), seen;
    if (t->in_coll && now >= probe) { /* a mismatch that took another path (stuck_probe) */
      if ((rc = stuck_probe(t, &pushed))) return rc;
      probe = now + PROBE_NS / 5;
    }
    if (now >= deadline && (seen = peers_progress(t)) != progress) { /* a peer moved on */
      progress = seen;
      deadline = now + (uint64_t)t->sh->timeout_ms * 1000000ull;
      continue;
    }
    if (now >= deadline) {
      uint64_t off;
      int wi = find_window(t, sig, 4, &off);
      int64_t cols = wi >= 0 && t->sh->windows[wi].cols > 0 ? t->sh->windows[wi].cols : 1;
      int64_t e = (int64_t)(off / 4);
      char wname[PTO_HOST_WINDOW_NAME + 2];
      snprintf(t->detail, sizeof t->detail,
               "rank %d: %s timed out after %u ms on window %s at offsets [%lld, %lld]: "
               "expected %s %d, current value %d",
               t->ctx.rank, what, t->sh->timeout_ms, win_label(t, wi, wname, sizeof wname),
               (long long)(e / cols), (long long)(e % cols),
               cmp == PTO_DIST_WAIT_GE ? ">=" : "==", value, cur);
      return PTO_KERNEL_ERR_DIST_TIMEOUT;
    }
    if (yielding && now - start < YIELD_NS &&
        (!guard || pto__dist_guard_yields(t, now, t->guard_all ? 0 : sched_getcpu() + 1))) {
      uint64_t held[PTO__DIST_MAX_RANKS];
      peers_held(t, held);
      uint64_t y0 = pto__rt_now_ns();
      int me = give_up(t, y0);
      sched_yield();
      uint64_t y1 = pto__rt_now_ns();
      hold(t, y1);
      uint64_t foreign;
      int went = pto__dist_yield_went(t, held, me, y0, y1, &foreign);
      yielding = went == PTO__DIST_YIELD_BACK || went == PTO__DIST_YIELD_PEER;
      if (guard && went == PTO__DIST_YIELD_LOST) {
        pto__dist_guard_lost(t, y1, me);
        (void)pto__dist_join_peers(t, me);
      }
    } else if (dir) {
      uint64_t left_us = (deadline - now) / 1000 + 1;
      atomic_fetch_add_explicit(&chip->sleepers, 1, memory_order_seq_cst);
      give_up(t, pto__rt_now_ns());
      pto__dist_futex_wait((_Atomic uint32_t *)sig, (uint32_t)cur,
                           left_us < 2000 ? (uint32_t)left_us : 2000);
      hold(t, pto__rt_now_ns());
      atomic_fetch_sub_explicit(&chip->sleepers, 1, memory_order_relaxed);
    } else { /* MPI updates wake no futex: poll (each read also drives MPI progress) */
      struct timespec ts = {0, 20000};
      give_up(t, pto__rt_now_ns());
      nanosleep(&ts, NULL);
      hold(t, pto__rt_now_ns());
    }
  }
}

/* Ranks on one host wait for each other spinning when each has a CPU of its own, and take turns
 * when they share one: the turns of a small allreduce grow with the most ranks any one CPU has
 * (issue #31 item 1, 2 CPUs, 1 KiB: 2 ranks 1.0-1.3 us apart, 11-14 us on one CPU; 4 ranks 11-21
 * us with two on each, ~40 us with all four on one). A forked chip starts on its parent's CPU
 * and stays there while the load balancer sees the other CPU busy, so each rank moves itself
 * at init to the (rank mod n)-th of the n CPUs it may run on, its home (and its waits move it back
 * there when they find a peer on its CPU: unstack): a migration, not a pin (its affinity mask is
 * put back at once, and the scheduler may move it on). Pins were measured where ranks outnumber
 * CPUs and not kept (issue #31 item 1, 4 ranks at 1 KiB beside a busy loop on 2 CPUs, load 4-10,
 * alternated in one binary; runs at or under Open MPI's 18.3 us): a one-CPU mask at home, two
 * ranks per CPU, 36 of 66 against 50 (medians 10.6 and 17.5 us against 10.7 and 8.7); all four
 * ranks on one CPU for collectives up to GATHER_BYTES, 137 of 150 against 130 but a floor of 8.0
 * us against 4.6-6.4 (the medians 8.4-10.0 against 8.2-8.7). The slow runs that are left follow
 * stalls of milliseconds (other processes' turns) in every placement, all four on one CPU too.
 * A rank whose guarded yield was lost moves itself to its peers' CPU (pto__dist_join_peers) and
 * home again before a collective over GATHER_BYTES (unless it lost its yields there lately:
 * home_lost): that cut them.
 * Returns that CPU, -1 where it may run on one CPU only or the move failed. */
static int spread(int rank) {
  cpu_set_t mask, one;
  if (sched_getaffinity(0, sizeof mask, &mask) || CPU_COUNT(&mask) < 2) return -1;
  for (int c = 0, k = rank % CPU_COUNT(&mask); c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &mask) || k--) continue;
    CPU_ZERO(&one);
    CPU_SET(c, &one);
    if (sched_setaffinity(0, sizeof one, &one)) return -1;
    (void)sched_setaffinity(0, sizeof mask, &mask);
    return c;
  }
  return -1;
}

/* Publishes this rank's CPU; 1 if another rank's last wait started on it (shared memory only). */
static int peer_on_this_cpu(pto__dist_shm *t) {
  int me = sched_getcpu() + 1; /* 0: not known */
  atomic_store_explicit(&t->sh->chips[t->ctx.rank].cpu, me, memory_order_relaxed);
  if (t->sh->mpi || me <= 0) return 0;
  for (int q = 0; q < t->ctx.nranks; q++)
    if (q != t->ctx.rank && atomic_load_explicit(&t->sh->chips[q].cpu, memory_order_relaxed) == me)
      return 1;
  return 0;
}

/* At most one move of a rank back to its home CPU (unstack) per this long. */
#define UNSTACK_NS 1000000ull

/* A wait found a peer on its CPU (peer_on_this_cpu) where each rank can have a CPU of its own (no
 * gather, shared memory), outside a collective on a window over 4 MiB (t->big: there the turns
 * are long, and where the scheduler puts the ranks balances their work): if this rank is off its
 * home CPU (the one spread moved it to at init) it moves itself back there, at most once per
 * UNSTACK_NS; 1 if it did and no peer is on its new CPU. Ranks end up on one CPU beside a busy
 * process on the other (the load balancer pulls the one that waits behind the busy process over; a
 * sleeper's wake-up lands on its waker's CPU), and stay there: they hand the CPU to each other at
 * every wait, so the balancer sees it always busy. A small allreduce then costs 4 such hand-overs,
 * 4 us on this VM kind (10-11 us on round 12's host: issue #31's bimodal 2 ranks at 1 KiB beside a
 * busy process), against 0.3-1 us on two CPUs; the move back costs the mover a wait for its turn
 * beside the busy process, once. Measured beside one busy loop (a probe of 5000 allreduces, 2
 * ranks, 1 KiB, on a loaded 2-CPU host): 18-36% of the repetitions on one CPU before, 0.0-0.5% with
 * this at 1 ms, 0.1-3.5% at 10 ms. */
static int unstack(pto__dist_shm *t) {
  if (t->gather || t->sh->mpi || t->big || t->home < 0 || sched_getcpu() == t->home) return 0;
  uint64_t now = pto__rt_now_ns();
  if (t->moved_at && now - t->moved_at < UNSTACK_NS) return 0;
  t->moved_at = now;
  int home = spread(t->ctx.rank); /* the same CPU, unless the affinity mask changed since init */
  if (home < 0) return 0;
  t->home = home;
  return !peer_on_this_cpu(t);
}

uint64_t pto__dist_spin_ns(const pto__dist_shm *t) {
  if (t->spin_ns) return t->spin_ns;
  return t->gather || t->sh->mpi || t->big ? SPIN_NS : SPIN_OWN_NS;
}

/* Waits on this rank's element; what names the op in the timeout message.
 *
 * A peer on another CPU answers within microseconds, and on a loaded host a CPU given away (a
 * yield, a sleep) comes back only after other processes' time slices, milliseconds: so the wait
 * spins first, SPIN_NS by the clock, and keeps its CPU. But a peer that last waited on this very
 * CPU (each wait publishes its CPU in the chip's control block; the scheduler's wake-affine
 * placement puts ranks together) cannot run while this one spins: the 2000 pauses this spun
 * before (47 us on Zen 5) were waited out twice per barrier, the ~100 us floor of a collective on
 * a loaded host (issue #31). Then the wait does not spin and hands the CPU over at once, unless
 * the rank can have a CPU of its own and moves back to it (unstack). Where each rank can have a
 * CPU of its own (no gather, shared memory) the spin goes on for SPIN_OWN_NS, 1 ms: its first
 * yield on a CPU it shares with a busy process hands that process the CPU for a tick (4 ms at
 * HZ=250), which a rank whose peer's half of a 1 MiB allreduce took over 50 us paid at every
 * barrier (2 ranks beside a busy loop, 5 repetitions of 1 MiB: median ~4 ms in 6 of 35 runs, 1
 * of 35 with the longer spin, else 108-250 us). Not in a collective on a window over
 * SPIN_OWN_BYTES (t->big): the faster rank's wait for the slower one there takes milliseconds,
 * and the sooner its CPU idles the sooner the scheduler moves the busy process there, off the
 * slower rank's CPU (64 MiB beside a busy loop, medians of 12 runs: 5-40% slower spinning 1 ms
 * in 5 of 5 batches; 4 MiB 2x faster spinning). After the
 * spin it yields while each yield comes straight back (nothing else wants this CPU) or went to
 * peer ranks, for up to YIELD_NS; once a yield gave the CPU away to another process it sleeps on
 * the element's futex, where the peer's notify wakes it. Under MPI the control block is each
 * process's own (no peer's CPU is known) and mpirun places ranks on cores of their own: the wait
 * spins. The deadline (wait_slow) counts from here, the spin included, and the spin ends at it
 * (a timeout of 1 ms is the whole 1 ms spin). */
static int32_t wait_elem(pto__dist_shm *t, int32_t *sig, int32_t value, int32_t cmp,
                         const char *what, int guard) {
  uint64_t t0 = pto__rt_now_ns(), timeout = (uint64_t)t->sh->timeout_ms * 1000000ull;
  if (t->direct && (!peer_on_this_cpu(t) || unstack(t))) {
    uint64_t spin = pto__dist_spin_ns(t);
    if (spin > timeout) spin = timeout;
    for (unsigned i = 0;; i++) {
      if (satisfied(atomic_load_explicit((_Atomic int32_t *)sig, memory_order_acquire), value, cmp))
        return 0;
      __builtin_ia32_pause();
      if ((i & 15) == 15 && pto__rt_now_ns() - t0 >= spin) break;
    }
  }
  /* The chip is in a bounded wait: progress for the parent's stall check (dist.c). */
  pto__dist_chip *chip = &t->sh->chips[t->ctx.rank];
  atomic_fetch_add_explicit(&chip->nwaits, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&chip->waiting, 1, memory_order_relaxed);
  /* Outside a collective that counts its time (shm_collective) the wait counts its own. */
  int own = !atomic_load_explicit(&chip->held_since, memory_order_relaxed);
  if (own) hold(t, pto__rt_now_ns());
  int32_t rc = wait_slow(t, sig, value, cmp, what, guard, t0 + timeout);
  if (own) give_up(t, pto__rt_now_ns());
  atomic_fetch_sub_explicit(&chip->waiting, 1, memory_order_relaxed);
  return rc;
}

static int32_t shm_wait(const pto_dist_ctx *d, int32_t *sig, int32_t value, int32_t cmp) {
  pto__dist_shm *t = T(d);
  uint64_t off;
  if (find_window(t, sig, 4, &off) < 0) {
    snprintf(t->detail, sizeof t->detail,
             "rank %d: dist.wait on an address that is not inside a comm window", d->rank);
    return PTO_KERNEL_ERR_DIST;
  }
  return wait_elem(t, sig, value, cmp, "dist.wait", 0);
}

static uint64_t span_bytes(int64_t rows, int64_t cols, int64_t stride, int32_t eb) {
  return rows <= 0 || cols <= 0 ? 0 : (uint64_t)(((rows - 1) * stride + cols) * eb);
}

/* rows x cols elements between a local buffer and the peer's window at win_local's offset:
 * into buf (load) or from it (store). */
static int32_t move_rows(const pto_dist_ctx *d, void *buf, int64_t buf_stride,
                         const void *win_local, int64_t win_stride, int32_t peer, int64_t rows,
                         int64_t cols, int32_t eb, int store) {
  pto__dist_shm *t = T(d);
  peer_ref r;
  if (peer_of(t, win_local, span_bytes(rows, cols, win_stride, eb), peer, &r))
    return PTO_KERNEL_ERR_DIST;
  for (int64_t i = 0; i < rows; i++) {
    peer_ref ri = ref_at(r, (uint64_t)(i * win_stride * eb));
    uint8_t *row = (uint8_t *)buf + i * buf_stride * eb;
    int32_t rc =
        store ? wr(t, &ri, row, (uint64_t)(cols * eb)) : rd(t, &ri, row, (uint64_t)(cols * eb));
    if (rc) return rc;
  }
  return PTO_KERNEL_OK;
}

static int32_t shm_remote_load(const pto_dist_ctx *d, void *dst, int64_t dst_stride,
                               const void *src_local, int64_t src_stride, int32_t peer,
                               int64_t rows, int64_t cols, int32_t eb) {
  return move_rows(d, dst, dst_stride, src_local, src_stride, peer, rows, cols, eb, 0);
}

/* No fence after a store: the notify that announces the data is a seq_cst (release) atomic,
 * which orders these stores before it; through MPI, a put completes (is flushed) before it
 * returns. */
static int32_t shm_remote_store(const pto_dist_ctx *d, const void *src, int64_t src_stride,
                                void *dst_local, int64_t dst_stride, int32_t peer, int64_t rows,
                                int64_t cols, int32_t eb) {
  return move_rows(d, (void *)src, src_stride, dst_local, dst_stride, peer, rows, cols, eb, 1);
}

/* Count-based and self-clearing: rank r adds 1 to element r of every peer's signal window, then
 * waits for each peer's element of its own to reach 1 and takes 1 off it. A fast peer's next
 * barrier only raises a count this one has not consumed yet, so barriers run back to back. guard:
 * wait_slow's. */
static int32_t take(pto__dist_shm *t, int32_t *sig, int from, const char *what, int guard) {
  int32_t rc = wait_elem(t, sig + from, 1, PTO_DIST_WAIT_GE, what, guard);
  if (rc) return rc;
  peer_ref self;
  if (peer_of(t, sig + from, 4, t->ctx.rank, &self)) return PTO_KERNEL_ERR_DIST;
  if (t->direct) {
    atomic_fetch_sub_explicit((_Atomic int32_t *)(sig + from), 1, memory_order_seq_cst);
    return PTO_KERNEL_OK;
  }
  return sig_op(t, &self, -1, 1);
}

static int32_t barrier_on(pto__dist_shm *t, int32_t *sig, int64_t nsig) {
  int n = t->ctx.nranks, r = t->ctx.rank;
  if (nsig < n) {
    char wname[PTO_HOST_WINDOW_NAME + 2];
    snprintf(t->detail, sizeof t->detail,
             "rank %d: the signal window%s has %lld elements, fewer than the %d ranks", r,
             win_named(t, nsig > 0 ? sig : NULL, wname, sizeof wname), (long long)nsig, n);
    return PTO_KERNEL_ERR_DIST;
  }
  for (int p = 0; p < n; p++) {
    if (p == r) continue;
    int32_t rc = shm_notify(&t->ctx, sig + r, p, 1, PTO_DIST_NOTIFY_ADD);
    if (rc) return rc;
  }
  for (int p = 0; p < n; p++) {
    if (p == r) continue;
    int32_t rc = take(t, sig, p, "a barrier", t->guard_all);
    if (rc) return rc;
  }
  return PTO_KERNEL_OK;
}

static int64_t numel_of(const pto_kernel_tensor *k) {
  int64_t n = 1;
  for (int i = 0; i < k->rank; i++)
    n *= k->shape[i];
  return n;
}

static int32_t shm_barrier(const pto_dist_ctx *d, const pto_kernel_tensor *sig) {
  return barrier_on(T(d), sig->data, numel_of(sig));
}
/* dst[i] = dst[i] op src[i] for n elements of dtype dt. GCC at -O2 (its very cheap cost model)
 * vectorizes no loop of unknown count, nor one that needs an aliasing check: these were scalar
 * (addss), ~133 us for a rank's quarter of a 1 MiB allreduce of 4 ranks (issue #31 item 1), so
 * reduce_into asks for its vectorizer with the dynamic cost model (4 ranks beside a busy loop on 2
 * CPUs, medians of 60 runs: 1 MiB 652 -> 329 us, 64 KiB 37 -> 22 us). Each element's op is the
 * same IEEE operation either way (no reassociation: an element's ranks are still folded in rank
 * order, one call per rank; max and min keep their operand order), so the bits are the same.
 * Clang vectorizes these at -O2 already. */
#if defined(__GNUC__) && !defined(__clang__)
#define PTO_VECTORIZE __attribute__((optimize("tree-loop-vectorize", "vect-cost-model=dynamic")))
#else
#define PTO_VECTORIZE
#endif
/* Sums and products are computed in AT: the element type for floats, an unsigned type at least as
 * wide (and at least unsigned int, past the promotion to int) for integers, so that they wrap as
 * the contract says (signed overflow, and u16 * u16 promoted to int, are undefined in C: UBSan
 * stopped an i32 allreduce), and convert back to TY modulo its width. */
#define RED_LOOP(TY, AT)                                                                           \
  do {                                                                                             \
    TY *a = dst;                                                                                   \
    const TY *b = src;                                                                             \
    switch (op) {                                                                                  \
    case PTO_DIST_RED_SUM:                                                                         \
      for (int64_t i = 0; i < n; i++)                                                              \
        a[i] = (TY)((AT)a[i] + (AT)b[i]);                                                          \
      break;                                                                                       \
    case PTO_DIST_RED_PROD:                                                                        \
      for (int64_t i = 0; i < n; i++)                                                              \
        a[i] = (TY)((AT)a[i] * (AT)b[i]);                                                          \
      break;                                                                                       \
    case PTO_DIST_RED_MAX:                                                                         \
      for (int64_t i = 0; i < n; i++)                                                              \
        a[i] = b[i] > a[i] ? b[i] : a[i];                                                          \
      break;                                                                                       \
    default:                                                                                       \
      for (int64_t i = 0; i < n; i++)                                                              \
        a[i] = b[i] < a[i] ? b[i] : a[i];                                                          \
      break;                                                                                       \
    }                                                                                              \
  } while (0)

/* Floats' max and min as the interpreter and the tile ops compute them: fmax/fmin (a NaN operand
 * is ignored unless both are) and, of +0 and -0, +0 for max and -0 for min (the bits ANDed or
 * ORed), so the result is the same in every mode and rank order (a plain y > x ? y : x kept a NaN
 * of rank 0 but dropped one of rank 1, and kept whichever zero came first). max (mx) or min of x
 * and y, inline and branch-free so that the loops that call it (FRED_LOOP, FOLD_LOOP) vectorize:
 * MAX_BITS makes it for float (fmax_bits) and double (dmax_bits): two inline functions of one
 * expression, each of its own type. */
#define MAX_BITS(NAME, TY, UTY)                                                                    \
  static inline TY NAME(TY x, TY y, int mx) {                                                      \
    UTY ux, uy;                                                                                    \
    memcpy(&ux, &x, sizeof ux);                                                                    \
    memcpy(&uy, &y, sizeof uy);                                                                    \
    ux = mx ? ux & uy : ux | uy;                                                                   \
    TY z;                                                                                          \
    memcpy(&z, &ux, sizeof z);                                                                     \
    return x == y ? z : ((mx ? y > x : y < x) || x != x) ? y : x;                                  \
  }
MAX_BITS(fmax_bits, float, uint32_t)
MAX_BITS(dmax_bits, double, uint64_t)

/* RED_LOOP for f32/f64, with max and min as MAXF (fmax_bits, dmax_bits). */
#define FRED_LOOP(TY, MAXF)                                                                        \
  do {                                                                                             \
    if (op != PTO_DIST_RED_MAX && op != PTO_DIST_RED_MIN) {                                        \
      RED_LOOP(TY, TY);                                                                            \
      break;                                                                                       \
    }                                                                                              \
    TY *a = dst;                                                                                   \
    const TY *b = src;                                                                             \
    if (op == PTO_DIST_RED_MAX)                                                                    \
      for (int64_t i = 0; i < n; i++)                                                              \
        a[i] = MAXF(a[i], b[i], 1);                                                                \
    else                                                                                           \
      for (int64_t i = 0; i < n; i++)                                                              \
        a[i] = MAXF(a[i], b[i], 0);                                                                \
  } while (0)

/* f16 and bf16 windows never come here: they reduce in float (fold_wide, round_wide). */
PTO_VECTORIZE
static void reduce_into(int dt, int op, void *dst, const void *src, int64_t n) {
  switch (dt) {
  case PTO_DTYPE_F32: FRED_LOOP(float, fmax_bits); break;
  case PTO_DTYPE_F64: FRED_LOOP(double, dmax_bits); break;
  case PTO_DTYPE_I8: RED_LOOP(int8_t, uint32_t); break;
  case PTO_DTYPE_I16: RED_LOOP(int16_t, uint32_t); break;
  case PTO_DTYPE_I32: RED_LOOP(int32_t, uint32_t); break;
  case PTO_DTYPE_I64:
  case PTO_DTYPE_INDEX: RED_LOOP(int64_t, uint64_t); break;
  case PTO_DTYPE_U8:
  case PTO_DTYPE_BOOL: RED_LOOP(uint8_t, uint32_t); break;
  case PTO_DTYPE_U16: RED_LOOP(uint16_t, uint32_t); break;
  case PTO_DTYPE_U32: RED_LOOP(uint32_t, uint32_t); break;
  case PTO_DTYPE_U64: RED_LOOP(uint64_t, uint64_t); break;
  default: break;
  }
}

/* f16 and bf16 windows reduce in float and round once at the end, as PTIR's tile reductions and
 * the interpreter do ("f16/bf16 compute in f32 and round once"): folding in the window's dtype
 * rounded after every rank (three f16 ranks: 1.36621094 where the interpreter has 1.3671875). */
static int reduces_wide(int dt) { return dt == PTO_DTYPE_F16 || dt == PTO_DTYPE_BF16; }

/* An f16 as float: the bits of pto_f16_to_f32 without its branches and loop, so that fold_wide's
 * loops vectorize (a subnormal is normalized by one exact float subtraction: 2^-14 * (1 + m/1024)
 * - 2^-14 is m * 2^-24, exactly; infinities and NaNs keep their payload). */
static inline float f16_load(uint16_t h) {
  uint32_t o = (uint32_t)(h & 0x7fffu) << 13, exp = o & 0x0f800000u;
  o += (127u - 15u) << 23;
  uint32_t sub = o + (1u << 23), big = o + ((128u - 16u) << 23), two14 = 113u << 23;
  float fs, f2;
  memcpy(&fs, &sub, 4);
  memcpy(&f2, &two14, 4);
  fs -= f2;
  memcpy(&sub, &fs, 4);
  uint32_t is_big = 0u - (uint32_t)(exp == 0x0f800000u), is_sub = 0u - (uint32_t)(exp == 0);
  o = (big & is_big) | (sub & is_sub) | (o & ~(is_big | is_sub)); /* masks: no branch */
  o |= (uint32_t)(h & 0x8000u) << 16;
  float f;
  memcpy(&f, &o, 4);
  return f;
}

static inline float bf16_load(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* The bits of pto_f32_to_bf16 (round to nearest even, a NaN quieted), branch-free. */
static inline uint16_t bf16_round(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t r = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16, q = (x >> 16) | 0x40u;
  return (uint16_t)((x & 0x7fffffffu) > 0x7f800000u ? q : r);
}

/* The bits of pto_f32_to_f16 (round to nearest even; a NaN quieted with the top of its payload,
 * overflow to infinity), branch-free: checked against it on all 2^32 floats. Below 2^-14 one
 * float addition of 2^-1 rounds at 2^-24 (a subnormal's last bit), to nearest even as the
 * scalar code's shifts do. */
static inline uint16_t f16_round(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
  uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu), inf = 0x7c00u;
  uint32_t norm = (a + ((uint32_t)(15 - 127) << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
  uint32_t magic_bits = 126u << 23, sb;
  float magic, af;
  memcpy(&magic, &magic_bits, 4);
  memcpy(&af, &a, 4);
  af += magic;
  memcpy(&sb, &af, 4);
  uint32_t sub = sb - magic_bits;
  uint32_t is_nan = 0u - (uint32_t)(a > 0x7f800000u);
  uint32_t is_inf = ~is_nan & (0u - (uint32_t)(a >= 143u << 23));
  uint32_t is_sub = 0u - (uint32_t)(a < 113u << 23);
  uint32_t o = (nan & is_nan) | (inf & is_inf) | (sub & is_sub) |
               (norm & ~(is_nan | is_inf | is_sub)); /* masks: no branch */
  return (uint16_t)(sign | o);
}

#define FOLD_LOOP(LOAD)                                                                            \
  do {                                                                                             \
    if (first)                                                                                     \
      for (int64_t i = 0; i < n; i++)                                                              \
        acc[i] = LOAD(b[i]);                                                                       \
    else if (op == PTO_DIST_RED_SUM)                                                               \
      for (int64_t i = 0; i < n; i++)                                                              \
        acc[i] = acc[i] + LOAD(b[i]);                                                              \
    else if (op == PTO_DIST_RED_PROD)                                                              \
      for (int64_t i = 0; i < n; i++)                                                              \
        acc[i] = acc[i] * LOAD(b[i]);                                                              \
    else if (op == PTO_DIST_RED_MAX)                                                               \
      for (int64_t i = 0; i < n; i++)                                                              \
        acc[i] = fmax_bits(acc[i], LOAD(b[i]), 1);                                                 \
    else                                                                                           \
      for (int64_t i = 0; i < n; i++)                                                              \
        acc[i] = fmax_bits(acc[i], LOAD(b[i]), 0);                                                 \
  } while (0)

/* acc[i] = src[i] (first), or acc[i] op src[i], for an f16/bf16 src: one loop per dtype and op,
 * vectorized as reduce_into's (PTO_VECTORIZE), the same float op per element as one at a time.
 * With round_wide's loops, against the scalar conversions one element at a time (2 ranks,
 * medians of 12 alternated runs): f16 1 MiB 10.7 -> 0.47 ms, bf16 10.8 -> 0.15 ms. */
PTO_VECTORIZE
static void fold_wide(int dt, int op, float *restrict acc, const void *src, int64_t n, int first) {
  const uint16_t *restrict b = src;
  if (dt == PTO_DTYPE_BF16)
    FOLD_LOOP(bf16_load);
  else
    FOLD_LOOP(f16_load);
}

/* Rounds once to the window's dtype, branch-free (vectorized). */
PTO_VECTORIZE
static void round_wide(int dt, void *dst, const float *restrict acc, int64_t n) {
  uint16_t *restrict a = dst;
  if (dt == PTO_DTYPE_BF16)
    for (int64_t i = 0; i < n; i++)
      a[i] = bf16_round(acc[i]);
  else
    for (int64_t i = 0; i < n; i++)
      a[i] = f16_round(acc[i]);
}

#define BLOCK_BYTES (64 * 1024)
#define BOUNCE_BYTES (1024 * 1024)

/* The staging buffers of the MPI path without direct access: two of BOUNCE_BYTES. */
static uint8_t *bounce(pto__dist_shm *t) {
  if (!t->bounce && !(t->bounce = pto_aligned_alloc(64, 2 * BOUNCE_BYTES)))
    snprintf(t->detail, sizeof t->detail, "rank %d: out of memory for MPI staging", t->ctx.rank);
  return t->bounce;
}

/* Elements [lo, hi) of the window: reduced over every rank in rank order (so every mode and
 * every rank gets the same bits), written to dst_rank's slice, or to every rank's when dst_rank
 * is -1. */
static int32_t reduce_range(pto__dist_shm *t, const pto_kernel_tensor *win, int op, int64_t lo,
                            int64_t hi, int dst_rank) {
  int n = t->ctx.nranks, eb = (int)pto_dtype_size((pto_dtype)win->dtype);
  int wide = reduces_wide(win->dtype);
  uint8_t stack_tmp[BLOCK_BYTES] __attribute__((aligned(64)));
  uint8_t *tmp = stack_tmp, *buf = NULL;
  int64_t per = BLOCK_BYTES / eb;
  /* f16/bf16: the float partials in the upper half of stack_tmp (all of it with the bounce
   * buffers), so a block is at most BLOCK_BYTES / 8 elements. */
  float *acc = (float *)(stack_tmp + BLOCK_BYTES / 2);
  if (!t->direct) {
    if (!(tmp = bounce(t))) return PTO_KERNEL_ERR_DIST;
    buf = tmp + BOUNCE_BYTES;
    per = BOUNCE_BYTES / eb;
    acc = (float *)stack_tmp;
  }
  if (wide && per > BLOCK_BYTES / 8) per = BLOCK_BYTES / 8;
  uint64_t nbytes = (uint64_t)numel_of(win) * (uint64_t)eb;
  peer_ref slice[PTO__DIST_MAX_RANKS];
  for (int q = 0; q < n; q++)
    if (peer_of(t, win->data, nbytes, q, &slice[q])) return PTO_KERNEL_ERR_DIST;
  int32_t rc;
  for (int64_t b = lo; b < hi; b += per) {
    int64_t m = hi - b < per ? hi - b : per;
    uint64_t off = (uint64_t)(b * eb), mb = (uint64_t)(m * eb);
    peer_ref s0 = ref_at(slice[0], off);
    if ((rc = rd(t, &s0, tmp, mb))) return rc;
    if (wide) fold_wide(win->dtype, op, acc, tmp, m, 1);
    for (int q = 1; q < n; q++) {
      peer_ref sq = ref_at(slice[q], off);
      const uint8_t *src = rd_ptr(t, &sq, buf, mb, &rc);
      if (rc) return rc;
      if (wide)
        fold_wide(win->dtype, op, acc, src, m, 0);
      else
        reduce_into(win->dtype, op, tmp, src, m);
    }
    if (wide) round_wide(win->dtype, tmp, acc, m);
    for (int q = 0; q < n; q++) {
      if (dst_rank >= 0 && q != dst_rank) continue;
      peer_ref sq = ref_at(slice[q], off);
      if ((rc = wr(t, &sq, tmp, mb))) return rc;
    }
  }
  return PTO_KERNEL_OK;
}

/* mode=ring: a pipelined chain around the ring that keeps rank order, so every mode gives the
 * same bits (docs/language.md: mode chooses the algorithm, never the result). The window is cut
 * into K chunks. Reduce phase: rank 0's chunks are the first partials; rank q (1 .. n-1) folds its
 * own chunk c into its left neighbour's partial of c (x_0 op x_1 op ... op x_q, in that order) once
 * the neighbour's token for c has come, keeps it in its window and passes a token right, so rank
 * n-1 ends with every chunk final. Broadcast phase: the final chunks travel on from rank n-1
 * around the ring (to 0, 1, ..., n-2), each rank copying chunk c from its left neighbour after
 * the neighbour's token. Every step reads only the left neighbour; tokens are the barrier's
 * counts on the left neighbour's element, consumed in the order they were sent (a rank's k-th
 * token always means its left neighbour's k-th step is done). The caller barriers before and
 * after. */
static int32_t ring_allreduce(pto__dist_shm *t, const pto_kernel_tensor *win, int32_t *sig,
                              int op) {
  int n = t->ctx.nranks, r = t->ctx.rank, left = (r + n - 1) % n, right = (r + 1) % n;
  int eb = (int)pto_dtype_size((pto_dtype)win->dtype);
  int64_t E = numel_of(win);
  uint8_t *mine = win->data;
  peer_ref lw;
  if (peer_of(t, win->data, (uint64_t)E * (uint64_t)eb, left, &lw)) return PTO_KERNEL_ERR_DIST;
  uint8_t stack_tmp[BLOCK_BYTES] __attribute__((aligned(64)));
  uint8_t *tmp = stack_tmp;
  int64_t per = BLOCK_BYTES / eb;
  if (!lw.p) {
    if (!(tmp = bounce(t))) return PTO_KERNEL_ERR_DIST;
    per = BOUNCE_BYTES / eb;
  }
  /* More chunks than ranks keep the pipeline full; tiny windows take one chunk per rank. */
  int64_t K = E >= (int64_t)n * 4 * 256 ? (int64_t)n * 4 : E >= n ? n : 1;
  int32_t rc;
  for (int64_t c = 0; c < K; c++) {
    if (r > 0) {
      if ((rc = take(t, sig, left, "a ring step", t->guard_all))) return rc;
      for (int64_t b = E * c / K, hi = E * (c + 1) / K; b < hi; b += per) {
        int64_t m = hi - b < per ? hi - b : per;
        peer_ref s = ref_at(lw, (uint64_t)(b * eb));
        if ((rc = rd(t, &s, tmp, (uint64_t)(m * eb)))) return rc; /* the partial, then op mine */
        reduce_into(win->dtype, op, tmp, mine + b * eb, m);
        memcpy(mine + b * eb, tmp, (size_t)(m * eb));
      }
    }
    if ((rc = shm_notify(&t->ctx, sig + r, right, 1, PTO_DIST_NOTIFY_ADD))) return rc;
  }
  if (r == n - 1) return PTO_KERNEL_OK;
  for (int64_t c = 0; c < K; c++) {
    if ((rc = take(t, sig, left, "a ring step", t->guard_all))) return rc;
    int64_t lo = E * c / K, hi = E * (c + 1) / K;
    peer_ref s = ref_at(lw, (uint64_t)(lo * eb));
    if ((rc = rd(t, &s, mine + lo * eb, (uint64_t)((hi - lo) * eb)))) return rc;
    if (right != n - 1 && (rc = shm_notify(&t->ctx, sig + r, right, 1, PTO_DIST_NOTIFY_ADD)))
      return rc;
  }
  return PTO_KERNEL_OK;
}

/* Windows up to this many bytes per rank take gather_allreduce in mode=mesh when the ranks
 * outnumber the CPUs (pto__dist_shm.gather). */
#define GATHER_BYTES 16384
/* Rank 0's release, added to the count of arrivals it shares a word with: above any count. */
#define GATHER_RELEASE (1 << 16)

/* mode=mesh on small windows: one rank reduces them all. Each rank counts its arrival on rank
 * 0's own element of the signal window (element q of rank q's slice: no barrier or ring step
 * uses it), after its data is in place (a seq_cst add). The last to arrive takes the count back,
 * reduces every element in rank order (the bits of the chunked mesh) into every rank's window
 * and releases each other rank: a token on that rank's own element, which the rank takes, and
 * for rank 0, whose element holds the count, GATHER_RELEASE added to it. A rank cannot arrive
 * at the next allreduce before its release, and rank 0 takes its release before it arrives, so
 * the count's low bits are always this allreduce's arrivals. Every rank waits at most once, on
 * one word: against the chunked mesh's two barriers, where each rank waits for every other rank
 * twice, a round of wake-ups or yields each, which is what small windows cost when ranks share
 * CPUs (issue #31: 4 ranks at 1 KiB on 2 CPUs, ~6 thread switches an allreduce). Nothing reads
 * or writes another rank's window once the releases are out, so there is no closing barrier;
 * the count and the tokens end at zero. */
static int32_t check_collective(pto__dist_shm *t);

static int32_t gather_allreduce(pto__dist_shm *t, const pto_kernel_tensor *win, int32_t *sig,
                                int op) {
  int n = t->ctx.nranks, r = t->ctx.rank;
  peer_ref cnt;
  if (peer_of(t, sig, 4, 0, &cnt)) return PTO_KERNEL_ERR_DIST;
  _Atomic int32_t *count = (_Atomic int32_t *)cnt.p;
  int32_t before = atomic_fetch_add_explicit(count, 1, memory_order_seq_cst);
  if ((before + 1) % GATHER_RELEASE != n) {
    int32_t rc;
    if (r) {
      rc = take(t, sig, r, "an allreduce", 1);
    } else {
      rc = wait_elem(t, sig, GATHER_RELEASE, PTO_DIST_WAIT_GE, "an allreduce", 1);
      if (!rc) atomic_fetch_sub_explicit(count, GATHER_RELEASE, memory_order_seq_cst);
    }
    /* Under MPI each rank checks its left neighbour (check_collective): every rank has
     * published its collective before the last one arrived. */
    if (!rc && t->sh->mpi) rc = check_collective(t);
    return rc;
  }
  atomic_fetch_sub_explicit(count, n, memory_order_relaxed);
  /* Every rank has arrived (and published its collective): the others wait for this one. */
  int32_t rc = check_collective(t);
  if (!rc) rc = reduce_range(t, win, op, 0, numel_of(win), -1);
  if (rc) return rc;
  for (int q = 0; q < n; q++) {
    peer_ref tok = cnt;
    if (q == r) continue;
    if (q && peer_of(t, sig + q, 4, q, &tok)) return PTO_KERNEL_ERR_DIST;
    if ((rc = sig_op(t, &tok, q ? 1 : GATHER_RELEASE, 1))) return rc;
  }
  return PTO_KERNEL_OK;
}

static const char *coll_name(uint32_t kind) {
  static const char *const names[] = {"dist.allreduce", "dist.broadcast", "dist.allgather",
                                      "dist.reduce_scatter"};
  return kind < sizeof names / sizeof names[0] ? names[kind] : "a collective";
}

static void coll_text(char *buf, size_t n, uint64_t tag, int64_t numel, int32_t root) {
  static const char *const ops[] = {"sum", "max", "min", "prod"};
  uint32_t kind = (uint32_t)(tag >> 24) & 0xff, op = (uint32_t)(tag >> 16) & 0xff;
  uint32_t dt = (uint32_t)tag & 0xff;
  const char *dn = pto_dtype_name((pto_dtype)dt);
  if (kind == PTO_DIST_BROADCAST)
    snprintf(buf, n, "%s (root %d) of %lld %s elements", coll_name(kind), (int)root,
             (long long)numel, dn ? dn : "?");
  else if (kind == PTO_DIST_ALLREDUCE || kind == PTO_DIST_REDUCE_SCATTER)
    snprintf(buf, n, "%s (%s) of %lld %s elements", coll_name(kind), op < 4 ? ops[op] : "?",
             (long long)numel, dn ? dn : "?");
  else
    snprintf(buf, n, "%s of %lld %s elements", coll_name(kind), (long long)numel, dn ? dn : "?");
}

/* Collectives that do not match across ranks (rank 0 an allreduce while rank 1 broadcasts on the
 * same signal window, or other ops, sizes, dtypes, roots) ran each its own protocol over the
 * other's signals and finished with garbage; the interpreter refuses them. Each rank's c-th
 * collective of a run (t->ncoll, from 0 at each run's epoch) puts what it is in slot c % 2 of its
 * control block before its first barrier (publish_collective), and after that barrier compares its
 * peers' slot c % 2 with its own (check_collective): a peer there is at its c-th collective too,
 * or at its c+1-th, which wrote slot (c+1) % 2 (slot c % 2 is rewritten only at c+2, past a
 * barrier that waits for this rank; a small allreduce where ranks outnumber CPUs is checked by
 * the last rank to arrive, which the others wait for). A slot is written only when what it holds
 * changes, so a
 * loop of the same collectives (or of two alternating) reads lines no rank writes: no cache miss
 * (writing a count with it cost a 2-rank 1 KiB allreduce 0.25-0.4 us of its 0.75). Under MPI the
 * control blocks are each process's own: a rank whose slot changes also pushes it into its right
 * neighbour's arena header (pto__dist_arena_hdr: a store, or one MPI_Put where the arena is not
 * addressable), and each rank compares its own slot with its left neighbour's there, after the
 * barrier (and, in the small allreduce, every rank after its release): if every rank matches its
 * left neighbour, all match, and at least one rank of a mismatch fails (its abort ends the
 * others' waits). A loop of the same collectives pushes nothing and reads a line of its own. */
typedef struct coll_slot {
  uint64_t tag;
  int64_t numel;
  int32_t root;
} coll_slot;

static coll_slot my_slot(const pto__dist_shm *t, uint32_t c) {
  const pto__dist_chip *me = &t->sh->chips[t->ctx.rank];
  return (coll_slot){atomic_load_explicit(&me->coll_tag[c], memory_order_relaxed),
                     me->coll_numel[c], me->coll_root[c]};
}

static pto__dist_arena_hdr *arena_hdr(const pto__dist_shm *t, int q) {
  return (pto__dist_arena_hdr *)t->sh->arena[q];
}

/* Peer q's slot c: in its control block, or under MPI (q is then this rank's left neighbour) the
 * copy q pushed into this rank's arena header. */
static coll_slot peer_slot(const pto__dist_shm *t, int q, uint32_t c) {
  if (t->sh->mpi) {
    pto__dist_arena_hdr *h = arena_hdr(t, t->ctx.rank);
    /* The tag is stored last (release), so its load orders the slot's other fields. */
    uint64_t tag = atomic_load_explicit(&h->left[c].tag, memory_order_acquire);
    return (coll_slot){tag, h->left[c].numel, h->left[c].root};
  }
  const pto__dist_chip *p = &t->sh->chips[q];
  return (coll_slot){atomic_load_explicit(&p->coll_tag[c], memory_order_acquire), p->coll_numel[c],
                     p->coll_root[c]};
}

/* Under MPI a rank pushes what it publishes into its right neighbour's arena header, from an
 * image v of that header: slot c (c >= 0: numel and root, then the tag with release, which
 * peer_slot loads first with acquire) or coll_at (c < 0: left_at, one release store). A store
 * where the header is addressable, else one MPI_Put of the same bytes. */
static int32_t push_right(pto__dist_shm *t, const pto__dist_arena_hdr *v, int c) {
  int right = (t->ctx.rank + 1) % t->ctx.nranks;
  pto__dist_arena_hdr *h = arena_hdr(t, right);
  if (!h) {
    size_t off =
        c < 0 ? offsetof(pto__dist_arena_hdr, left_at) : offsetof(pto__dist_arena_hdr, left[c]);
    size_t len = c < 0 ? sizeof v->left_at : sizeof v->left[c];
    return pto__dist_mpi_put(t->sh->mpi, right, off, (const char *)v + off, len, t->detail)
               ? PTO_KERNEL_ERR_DIST
               : PTO_KERNEL_OK;
  }
  if (c < 0) {
    atomic_store_explicit(&h->left_at, atomic_load_explicit(&v->left_at, memory_order_relaxed),
                          memory_order_release);
  } else {
    h->left[c].numel = v->left[c].numel;
    h->left[c].root = v->left[c].root;
    atomic_store_explicit(&h->left[c].tag,
                          atomic_load_explicit(&v->left[c].tag, memory_order_relaxed),
                          memory_order_release);
  }
  return PTO_KERNEL_OK;
}

static int32_t publish_collective(pto__dist_shm *t, int32_t kind, const pto_kernel_tensor *win,
                                  int32_t op, int32_t mode, int32_t root, int64_t numel) {
  if (t->coll_epoch != t->epoch) t->coll_epoch = t->epoch, t->ncoll = 0;
  uint32_t c = t->ncoll++ & 1;
  pto__dist_chip *me = &t->sh->chips[t->ctx.rank];
  int reduces = kind == PTO_DIST_ALLREDUCE || kind == PTO_DIST_REDUCE_SCATTER;
  uint64_t tag = (uint64_t)(kind & 0xff) << 24 | (uint64_t)(reduces ? op & 0xff : 0) << 16 |
                 (uint64_t)(kind == PTO_DIST_ALLREDUCE ? mode & 0xff : 0) << 8 |
                 (uint64_t)(win->dtype & 0xff);
  if (kind != PTO_DIST_BROADCAST) root = 0;
  if (atomic_load_explicit(&me->coll_tag[c], memory_order_relaxed) == tag &&
      me->coll_numel[c] == numel && me->coll_root[c] == root)
    return PTO_KERNEL_OK;
  me->coll_numel[c] = numel;
  me->coll_root[c] = root;
  atomic_store_explicit(&me->coll_tag[c], tag, memory_order_release);
  if (!t->sh->mpi || t->ctx.nranks < 2) return PTO_KERNEL_OK;
  /* The barrier's notify after this (a seq_cst atomic, or an MPI call after a flushed put)
   * orders it before the neighbour's check. */
  pto__dist_arena_hdr mine = {0};
  atomic_init(&mine.left[c].tag, tag);
  mine.left[c].numel = numel;
  mine.left[c].root = root;
  return push_right(t, &mine, (int)c);
}

static int32_t mismatch(pto__dist_shm *t, int q, coll_slot mine, coll_slot theirs) {
  char a[96], b[96], wname[PTO_HOST_WINDOW_NAME + 2];
  coll_text(a, sizeof a, mine.tag, mine.numel, mine.root);
  coll_text(b, sizeof b, theirs.tag, theirs.numel, theirs.root);
  snprintf(t->detail, sizeof t->detail,
           "rank %d: %s does not match rank %d's %s%s on the same signal window%s (every rank "
           "must run the same collective on the same window)",
           t->ctx.rank, a, q, b,
           (theirs.tag & 0xff00) != (mine.tag & 0xff00) ? " (another mode)" : "",
           win_named(t, t->coll_sig, wname, sizeof wname));
  return PTO_KERNEL_ERR_DIST;
}

static int same_slot(coll_slot x, coll_slot y) {
  return x.tag == y.tag && x.numel == y.numel && x.root == y.root;
}

/* This rank's current collective against the peers' (shared memory: every peer; MPI: the left
 * neighbour); at != 0: only against peers whose published coll_at is at (stuck_probe). */
static int32_t compare_peers(pto__dist_shm *t, uint64_t at) {
  int n = t->ctx.nranks, r = t->ctx.rank;
  uint32_t c = (t->ncoll - 1) & 1;
  coll_slot mine = my_slot(t, c);
  for (int q = 0; q < n; q++) {
    if (q == r || (t->sh->mpi && q != (r + n - 1) % n)) continue;
    if (at &&
        (t->sh->mpi ? atomic_load_explicit(&arena_hdr(t, r)->left_at, memory_order_acquire)
                    : atomic_load_explicit(&t->sh->chips[q].coll_at, memory_order_acquire)) != at)
      continue;
    coll_slot theirs = peer_slot(t, q, c);
    if (!same_slot(mine, theirs)) return mismatch(t, q, mine, theirs);
  }
  return PTO_KERNEL_OK;
}

static int32_t check_collective(pto__dist_shm *t) { return compare_peers(t, 0); }

/* Ranks whose collectives take different paths (one rank's small allreduce is gathered while
 * another's, of another size or mode, or another collective, starts with a barrier) wait for
 * signals the others never send, until the deadline. A wait of a collective that has lasted
 * PROBE_NS publishes (once) the collective it is in (coll_at: a store, or under MPI a push into
 * its right neighbour's header), and looks every PROBE_NS / 5 for a peer (MPI: the left
 * neighbour) that is in the same collective and waiting too, with another slot: the same error
 * as check_collective's, at once rather than at the deadline. Only a wait that has lasted
 * PROBE_NS pays for this; a peer that is merely late is not in the same collective yet (the
 * count) and is not compared. */
static int32_t stuck_probe(pto__dist_shm *t, int *pushed) {
  int n = t->ctx.nranks, r = t->ctx.rank;
  uint64_t at = (uint64_t)t->epoch << 32 | t->ncoll;
  if (n < 2) return PTO_KERNEL_OK;
  if (!*pushed) {
    *pushed = 1;
    if (!t->sh->mpi) {
      atomic_store_explicit(&t->sh->chips[r].coll_at, at, memory_order_release);
    } else {
      pto__dist_arena_hdr mine = {0};
      atomic_init(&mine.left_at, at);
      int32_t rc = push_right(t, &mine, -1);
      if (rc) return rc;
    }
  }
  return compare_peers(t, at);
}

static int32_t collective(pto__dist_shm *t, const pto_dist_ctx *d, int32_t kind,
                          const pto_kernel_tensor *win, const pto_kernel_tensor *sig, int32_t op,
                          int32_t mode, int32_t root) {
  int n = d->nranks, r = d->rank, eb = (int)pto_dtype_size((pto_dtype)win->dtype);
  int64_t E = numel_of(win);
  uint64_t nbytes = (uint64_t)E * (uint64_t)eb;
  peer_ref self;
  if (E > 0 && peer_of(t, win->data, nbytes, r, &self)) return PTO_KERNEL_ERR_DIST;
  int64_t nsig = numel_of(sig);
  t->coll_sig = nsig > 0 ? sig->data : NULL;
  /* One window passed as both (two parameters of one dist.window): the data would overwrite the
   * signals, as the interpreter refuses it. */
  const char *wlo = win->data, *slo = sig->data;
  if (E > 0 && nsig > 0 && wlo < slo + nsig * 4 && slo < wlo + nbytes) {
    char wname[PTO_HOST_WINDOW_NAME + 2];
    snprintf(t->detail, sizeof t->detail, "rank %d: the signal window is the data window%s", r,
             win_named(t, slo, wname, sizeof wname));
    return PTO_KERNEL_ERR_DIST;
  }
  int32_t rc = publish_collective(t, kind, win, op, mode, root, E);
  if (rc) return rc;
  if (kind == PTO_DIST_ALLREDUCE && mode != PTO_DIST_MODE_RING && t->gather && nsig >= n &&
      nbytes <= GATHER_BYTES)
    return gather_allreduce(t, win, sig->data, op);
  rc = barrier_on(t, sig->data, nsig); /* every rank's data is in place */
  if (rc || (rc = check_collective(t))) return rc;
  switch (kind) {
  case PTO_DIST_ALLREDUCE:
    /* The ring's partials travel in the windows, in their dtype: f16/bf16, which reduce in
     * float, take the mesh (mode chooses the algorithm, never the result). */
    if (mode == PTO_DIST_MODE_RING && n > 1 && !reduces_wide(win->dtype))
      rc = ring_allreduce(t, win, sig->data, op);
    else /* mesh: rank r reduces chunk r in rank order and writes it to every rank */
      rc = reduce_range(t, win, op, E * r / n, E * (r + 1) / n, -1);
    if (rc) return rc;
    break;
  case PTO_DIST_BROADCAST: {
    if (root < 0 || root >= n) {
      snprintf(t->detail, sizeof t->detail,
               "rank %d: broadcast root %d%s is out of range (0 to %d)", r, root, saturated(root),
               n - 1);
      return PTO_KERNEL_ERR_DIST;
    }
    peer_ref src;
    if (r != root && E > 0) {
      if (peer_of(t, win->data, nbytes, root, &src)) return PTO_KERNEL_ERR_DIST;
      if ((rc = rd(t, &src, win->data, nbytes))) return rc;
    }
    break;
  }
  case PTO_DIST_ALLGATHER:
  case PTO_DIST_REDUCE_SCATTER: {
    int64_t rows = win->rank >= 1 ? win->shape[0] : 1;
    if (rows % n) {
      char wname[PTO_HOST_WINDOW_NAME + 2];
      snprintf(t->detail, sizeof t->detail,
               "rank %d: the window%s's %lld rows do not divide among %d ranks", r,
               win_named(t, E > 0 ? win->data : NULL, wname, sizeof wname), (long long)rows, n);
      return PTO_KERNEL_ERR_DIST;
    }
    int64_t lo = E / rows * (rows / n) * r, hi = lo + E / n;
    if (kind == PTO_DIST_REDUCE_SCATTER) {
      if ((rc = reduce_range(t, win, op, lo, hi, r))) return rc;
    } else {
      for (int q = 0; q < n; q++) {
        if (q == r) continue;
        peer_ref dst;
        if (peer_of(t, win->data, nbytes, q, &dst)) return PTO_KERNEL_ERR_DIST;
        dst = ref_at(dst, (uint64_t)(lo * eb));
        if ((rc = wr(t, &dst, (uint8_t *)win->data + lo * eb, (uint64_t)((hi - lo) * eb))))
          return rc;
      }
    }
    break;
  }
  default:
    snprintf(t->detail, sizeof t->detail, "rank %d: unknown collective %d", r, kind);
    return PTO_KERNEL_ERR_DIST;
  }
  return barrier_on(t, sig->data, nsig); /* nobody still reads or writes this rank's window */
}

/* The kernel's struct sched_attr (SCHED_ATTR_SIZE_VER1); glibc has no wrapper for it. */
typedef struct sched_attr_v1 {
  uint32_t size, sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime, sched_deadline, sched_period;
  uint32_t sched_util_min, sched_util_max;
} sched_attr_v1;

pto_status pto__dist_slice_setting(uint64_t *out_ns) {
  int64_t us;
  PTO_RETURN_IF_ERROR(pto_env_int("PTO_DIST_SLICE_US", 0, 1000000, PTO__DIST_SLICE_NS / 1000, &us));
  *out_ns = (uint64_t)us * 1000u;
  return PTO_OK;
}

pto_status pto__dist_join_setting(int *out) {
  int64_t join;
  PTO_RETURN_IF_ERROR(pto_env_int("PTO_DIST_JOIN", 0, 1, 1, &join));
  *out = (int)join;
  return PTO_OK;
}

/* The slice each rank asks for (pto__dist_shm_init); PTO__DIST_SLICE_NS for a bad setting, which
 * pto_dist_worker_open has refused already. */
static uint64_t slice_wanted(void) {
  uint64_t ns = PTO__DIST_SLICE_NS;
  pto_status s = pto__dist_slice_setting(&ns);
  if (!s) return ns;
  pto_status_free(s);
  return PTO__DIST_SLICE_NS;
}

uint64_t pto__dist_thread_slice(void) {
#ifdef SYS_sched_getattr
  sched_attr_v1 a = {0};
  if (syscall(SYS_sched_getattr, 0, &a, (unsigned)sizeof a, 0) == 0 &&
      (a.sched_policy == SCHED_OTHER || a.sched_policy == SCHED_BATCH))
    return a.sched_runtime;
#endif
  return 0;
}

uint64_t pto__dist_set_slice(uint64_t ns) {
#if defined(SYS_sched_getattr) && defined(SYS_sched_setattr)
  sched_attr_v1 a = {0};
  if (!ns || syscall(SYS_sched_getattr, 0, &a, (unsigned)sizeof a, 0) ||
      (a.sched_policy != SCHED_OTHER && a.sched_policy != SCHED_BATCH))
    return 0;
  a.size = sizeof a;
  a.sched_flags &= 1; /* SCHED_FLAG_RESET_ON_FORK; the policy and nice as they are */
  a.sched_runtime = ns;
  a.sched_util_min = a.sched_util_max = 0;
  if (syscall(SYS_sched_setattr, 0, &a, 0)) return 0; /* refused (EINVAL, EPERM): as it was */
  return pto__dist_thread_slice(); /* 0 where the kernel keeps no slice per task (before 6.12) */
#else
  (void)ns;
  return 0;
#endif
}

/* The slice this thread was last given by slice_for or init, 0: none. */
static _Thread_local uint64_t slice_now;

/* A collective on a window under guard_bytes runs with the short slice, a bigger one with the
 * slice the rank had before init (see PTO__DIST_SLICE_NS); a syscall only where the thread's
 * slice changes. */
static void slice_for(pto__dist_shm *t, int small) {
  uint64_t want = small ? t->slice_ns : t->slice_was;
  if (!t->slice_ns || !want || slice_now == want) return;
  slice_now = want;
  (void)pto__dist_set_slice(want);
}

/* Whether rank t's guarded yields were lost on its home CPU lately (within YIELD_OFF_NS: the
 * last loss was there, or its yields are off there): a joined rank then stays with its peers
 * before a collective over GATHER_BYTES rather than move home (shm_collective). Moved home, it
 * went back beside the process that had taken its CPU, lost a yield there again in the
 * collective's guarded waits (at least that process's slice, 1.4-4 ms on this VM kind), joined
 * again, and went home again before the next: a slice lost per collective (issue #31 item 1, 4
 * ranks beside a busy loop on 2 CPUs: per-repetition traces had a move home in 232 of 1920
 * rank-collectives at 256 KiB and 1 MiB). Staying, in 210 alternated rounds at load 8-18: 1 MiB
 * runs at or under 700 us 180 against 152, over 1 ms 27 against 42, medians 295-331 against
 * 339-398 us; 1 KiB and 64 KiB medians level (8.2, 28 us; the rare 64 KiB runs at 15 us, two
 * ranks home on each CPU, are gone: 0 against 19), 64 MiB level. Once YIELD_OFF_NS has passed
 * the rank tries its home again. */
static int home_lost(const pto__dist_shm *t, uint64_t now) {
  if (t->home < 0) return 0;
  uint64_t bit = pto__dist_cpu_bit(t->home + 1);
  return !pto__dist_guard_yields(t, now, t->home + 1) ||
         (t->lost_at && now - t->lost_at < YIELD_OFF_NS && (t->lost_cpus & bit));
}

/* A failed collective names itself: its own checks (rows that do not divide, a short signal
 * window) and the waits it is lowered onto (a barrier, a gather) say what they are, not which
 * collective the kernel called, so the detail gets the collective after its "rank R: " (a
 * mismatch or an abort names it already; as the interpreter's messages do). */
static void name_collective(pto__dist_shm *t, int32_t kind, const pto_kernel_tensor *win,
                            int32_t op, int32_t root) {
  if (!t->detail[0] || strstr(t->detail, "dist.")) return;
  int reduces = kind == PTO_DIST_ALLREDUCE || kind == PTO_DIST_REDUCE_SCATTER;
  uint64_t tag = (uint64_t)(kind & 0xff) << 24 | (uint64_t)(reduces ? op & 0xff : 0) << 16 |
                 (uint64_t)(win->dtype & 0xff);
  char what[128], rest[sizeof t->detail], head[32];
  coll_text(what, sizeof what, tag, numel_of(win), root);
  int hn = snprintf(head, sizeof head, "rank %d: ", t->ctx.rank);
  const char *body = t->detail;
  if (hn > 0 && strncmp(body, head, (size_t)hn) == 0) body += hn;
  memcpy(rest, body, strlen(body) + 1);
  size_t room = sizeof t->detail - 1;
  int k = snprintf(t->detail, sizeof t->detail, "rank %d: %s: ", t->ctx.rank, what);
  if (k > 0 && (size_t)k < room) {
    size_t left = room - (size_t)k, len = strlen(rest);
    memcpy(t->detail + k, rest, len < left ? len : left);
    t->detail[(size_t)k + (len < left ? len : left)] = 0;
  }
}

/* Where ranks outnumber CPUs a collective's whole time on its CPU counts in held_ns (its
 * reduction too, which a peer yielding on this CPU waits out: the first ones fault pages in for
 * milliseconds); elsewhere only its waits' turns count, which saves the two clock reads. */
static int32_t shm_collective(const pto_dist_ctx *d, int32_t kind, const pto_kernel_tensor *win,
                              const pto_kernel_tensor *sig, int32_t op, int32_t mode,
                              int32_t root) {
  pto__dist_shm *t = T(d);
  int64_t bytes = numel_of(win) * (int64_t)pto_dtype_size((pto_dtype)win->dtype);
  t->guard_all = bytes >= t->guard_bytes; /* wait_slow's guard on every wait */
  slice_for(t, !t->guard_all);
  if (!t->gather) {
    /* A big window's waits are long: spun, they keep an idle CPU from taking a busy process
     * off the slower rank's (pto__dist_spin_ns); and the ranks stay where the scheduler puts
     * them (unstack). Such a collective waits as in round 12. */
    t->big = bytes > SPIN_OWN_BYTES;
    t->in_coll = 1;
    int32_t rc = collective(t, d, kind, win, sig, op, mode, root);
    t->big = t->guard_all = t->in_coll = 0;
    if (rc) name_collective(t, kind, win, op, root);
    return rc;
  }
  if (t->joined && bytes > GATHER_BYTES && !home_lost(t, pto__rt_now_ns())) {
    t->joined = 0; /* it joined its peers' CPU (pto__dist_join_peers): home again */
    if (t->home >= 0) (void)spread(t->ctx.rank);
  }
  hold(t, pto__rt_now_ns());
  t->in_coll = 1;
  int32_t rc = collective(t, d, kind, win, sig, op, mode, root);
  give_up(t, pto__rt_now_ns());
  t->guard_all = t->in_coll = 0;
  if (rc) name_collective(t, kind, win, op, root);
  return rc;
}

int pto__dist_window_name(const pto_dist_ctx *d, const void *local, char *buf, size_t n) {
  if (!d || d->wait != shm_wait || !local || !n) return -1; /* another transport (tests) */
  uint64_t off;
  const pto__dist_shm *t = T(d);
  int wi = find_window(t, local, 1, &off);
  if (wi < 0 || !t->sh->windows[wi].name[0]) return -1;
  snprintf(buf, n, "%%%.*s", PTO_HOST_WINDOW_NAME - 1, t->sh->windows[wi].name);
  return 0;
}

void pto__dist_shm_init(pto__dist_shm *t, pto__dist_shared *sh, int rank) {
  memset(t, 0, sizeof *t);
  t->sh = sh;
  t->ctx.version = PTO_DIST_ABI_VERSION;
  t->ctx.size = sizeof t->ctx;
  t->ctx.rank = rank;
  t->ctx.nranks = sh->nranks;
  t->ctx.impl = t;
  t->guard_bytes = PTO__DIST_GUARD_BYTES;
  t->ctx.notify = shm_notify;
  t->ctx.wait = shm_wait;
  t->ctx.remote_load = shm_remote_load;
  t->ctx.remote_store = shm_remote_store;
  t->ctx.barrier = shm_barrier;
  t->ctx.collective = shm_collective;
  t->direct = 1;
  for (int q = 0; sh->mpi && q < sh->nranks; q++)
    if (!sh->arena[q]) t->direct = 0;
  /* Every rank decides alike: direct access means one node, whose CPUs every rank counts. */
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  t->gather = t->direct && sh->nranks > 1 && cpus > 0 && sh->nranks > cpus;
  t->home = !sh->mpi && sh->nranks > 1 ? spread(rank) : -1; /* mpirun places MPI ranks */
  int join = 1;
  pto_status_free(pto__dist_join_setting(&join)); /* a bad one: refused by worker open already */
  t->join = join;
  if (!sh->mpi && sh->nranks > 1) {
    t->slice_was = pto__dist_thread_slice();
    slice_now = t->slice_ns = pto__dist_set_slice(slice_wanted());
  }
}

void pto__dist_shm_fini(pto__dist_shm *t) {
  free(t->bounce);
  t->bounce = NULL;
}
