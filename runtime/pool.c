/* The sim platform's cores: a persistent pool of threads created at worker open, and cores of
 * two types (AIC for cube work, AIV for vector work, as on the chip). A task runs as a core of its
 * type, which is what its record and the swimlanes show. Strict (pto_run_config.strict_cores),
 * as on the chip: a thread per core, which takes ready tasks from its type's queue only. Shared
 * (the default): a thread takes the first submitted of the ready tasks of either type that has a
 * free core, and runs it as that core (its own first), so vector work uses every CPU however the
 * cores are split. A thread takes a task (in shuffle test mode, a random one of the first 64),
 * runs it and completes it; when there is none it spins a bounded while (a pause per
 * iteration), then blocks on a condition variable. Between launches at most spin_budget threads
 * spin at once (the process's CPUs less the one the dispatching thread needs): more spinners
 * would only take CPU time from the next launch's dispatching thread; the others give their
 * places up when a launch ends. A push wakes sleeping threads only for the blocks that the
 * spinners and the threads already waking cannot take (shared: nor more than free cores can
 * take; and no more threads spin than the launch's types have cores; nor, shared and not lazy,
 * more threads are awake than the CPUs the dispatching thread leaves: awake_cap). A launch wakes
 * threads for its kernels' types to spin before its first submit, so the first task does not pay
 * for a futex wake-up; once its orchestration is done, the dispatching thread runs ready tasks
 * itself as an idle core (pto__rt_pool_help) rather than wait for a core thread that has no CPU
 * yet. A core's claimed flag keeps one thread at a time on a core's identity and scratch. A lazy
 * pool (run to completion: a distributed chip's) wakes no core at a launch's start, and the first
 * ready block of each type that the orchestration queues wakes no sleeping core either: the
 * dispatching thread runs it at the launch's end, or hands it to a core when it starts to wait
 * (flush). Of the ready tasks, a thread takes one whose data its own CPU ran last first (pick). */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pto/base.h"
#include "runtime_internal.h"

/* Locks the pool's mu, spinning on trylock a short while first: it is held for a few dozen
 * instructions at a time, and a core that found work queued and then slept on the mutex (a
 * futex wait, and a futex wake for the thread that unlocks) would lose microseconds. */
static void pool_lock(pto__rt_pool *pool) {
  for (int i = 0; i < 256; i++) {
    if (pthread_mutex_trylock(&pool->mu) == 0) return;
    pto__rt_cpu_relax();
  }
  pthread_mutex_lock(&pool->mu);
}

/* ---- where a task runs: the CPU that touched its data last --------------------------------
 *
 * Two CPUs taking turns at a program's tasks lose its data's cache locality from one launch to
 * the next: a task over data that the other CPU wrote last ran 1.7-1.8x as long as one over data
 * its own CPU wrote (a 4 MiB add in 64-row tasks, the median a thread: 13.1 us against 22.0, 14.5
 * against 26.5; issue #31 item 4), so a launch took as long as the share of its tasks that changed
 * CPU made it. A thread therefore takes, among the first queued tasks, one last run over the
 * same data on its own CPU first (pick), as the hand loop's threads keep their halves. The
 * launch's results cannot change: queued tasks are ready, so independent of each other. */

enum { PICK_WINDOW = 32 }; /* queued tasks a take looks at: ~a launch's tasks per CPU, bounded */

/* Tasks whose views hold fewer bytes together have no key: their data moves between CPUs in less
 * time than the look-ups and the table's cache lines (written by both CPUs) cost; with keys,
 * 10,000 independent 64-byte tasks took 1.5-1.7 us each against 1.3 (bench task_graph). */
#define PICK_MIN_BYTES (64u << 10)

/* A task's key for pool->homes: its tensors' addresses mixed, the same for a task over the same
 * views in the next launch (bits above the low 8 never all 0); 0 for a task of several blocks
 * (each block works on a part that the key would not tell apart) or over less than
 * PICK_MIN_BYTES. */
static uint64_t home_key(const pto__rt_task *t) {
  if (t->block_num != 1 || t->ntensors <= 0) return 0;
  uint64_t h = 0, bytes = 0;
  for (int i = 0; i < t->ntensors; i++) {
    const pto_kernel_tensor *k = &t->tensors[i];
    uint64_t n = pto_dtype_size((pto_dtype)k->dtype);
    for (int d = 0; d < k->rank; d++)
      n *= (uint64_t)k->shape[d];
    bytes += n;
    h = (h ^ (uint64_t)(uintptr_t)k->data) * 0x9e3779b97f4a7c15ull;
  }
  return bytes < PICK_MIN_BYTES ? 0 : h | 0x100;
}

/* The entry of key (not 0) in pool->homes: the one that holds it, else the first empty one of
 * the HOME_PROBES it may take, else (all taken) the first, which it replaces; pool->mu held. */
enum { HOME_PROBES = 8 };
static uint64_t *home_entry(pto__rt_pool *pool, uint64_t key) {
  size_t first = (size_t)(key >> 40) % PTO__RT_NHOMES;
  for (size_t k = 0; k < HOME_PROBES; k++) {
    uint64_t *e = &pool->homes->e[(first + k) % PTO__RT_NHOMES];
    if (!*e || (*e & ~0xffull) == (key & ~0xffull)) return e;
  }
  return &pool->homes->e[first];
}

/* The CPU that last took a task of key, -1 when none is known; pool->mu held. */
static int home_cpu(pto__rt_pool *pool, uint64_t key) {
  if (!key) return -1;
  uint64_t e = *home_entry(pool, key);
  if (!e || (e & ~0xffull) != (key & ~0xffull)) return -1;
  return (int)(e & 0xff) - 1;
}

/* The link to the task that a thread on cpu takes from q (its predecessor in *out_prev): among
 * the first PICK_WINDOW, the first last taken on cpu, else the first that no CPU is known for,
 * else the head; pool->mu held. */
static pto__rt_task **pick(pto__rt_pool *pool, pto__rt_queue *q, int cpu, pto__rt_task **out_prev) {
  pto__rt_task **link = &q->qhead_task, **fresh = NULL, *prev = NULL, *fresh_prev = NULL;
  for (int i = 0; i < PICK_WINDOW && *link; i++) {
    int home = home_cpu(pool, (*link)->home_key);
    if (home == cpu) {
      *out_prev = prev;
      return link;
    }
    if (home < 0 && !fresh) fresh = link, fresh_prev = prev;
    prev = *link;
    link = &(*link)->next_ready;
  }
  *out_prev = fresh ? fresh_prev : NULL;
  return fresh ? fresh : &q->qhead_task;
}

/* The CPU this thread runs on, for pick; -1 in shuffle test mode (whose order is random) or when
 * it is not known. */
static int take_cpu(const pto__rt_pool *pool) {
  if (pool->shuffle) return -1;
  int cpu = sched_getcpu();
  return cpu >= 0 && cpu < 255 ? cpu : -1;
}

/* Takes a block of a queued task: *out_block gets its index. A task stays queued until its last
 * block is taken, so the blocks of an SPMD task go to as many cores as are free. *out_started:
 * that was the last one. */
static pto__rt_task *pop_locked(pto__rt_pool *pool, pto__rt_queue *q, int32_t *out_block,
                                int *out_started) {
  if (!q->qlen) return NULL;
  pto__rt_task *t;
  pto__rt_task **link = &q->qhead_task;
  pto__rt_task *prev = NULL;
  /* Only with a task with a key queued: a task without one has no home to look for. */
  int cpu = pool->homes->nkeyed[q - pool->q] ? take_cpu(pool) : -1;
  if (cpu >= 0 && q->qlen > 1) link = pick(pool, q, cpu, &prev);
  if (pool->shuffle && q->qlen > 1) {
    size_t window = q->qlen < 64 ? q->qlen : 64;
    size_t k = (size_t)(pto__rt_xorshift64(&pool->rng) % window);
    for (size_t i = 0; i < k; i++) {
      prev = *link;
      link = &(*link)->next_ready;
    }
  }
  if (q->gang) { /* a sync_start task's blocks first: another must not take cores it waits for */
    link = &q->qhead_task;
    prev = NULL;
    while (*link != q->gang) {
      prev = *link;
      link = &(*link)->next_ready;
    }
  }
  t = *link;
  if (cpu >= 0 && t->home_key)
    *home_entry(pool, t->home_key) = (t->home_key & ~0xffull) | (uint64_t)(cpu + 1);
  *out_block = t->claimed++;
  q->nblocks--;
  *out_started = t->claimed == t->block_num;
  if (t->sync_start) q->gang = *out_started ? NULL : t;
  if (!*out_started) return t;
  *link = t->next_ready;
  if (q->qtail_task == t) q->qtail_task = prev;
  if (t->home_key) pool->homes->nkeyed[q - pool->q]--;
  t->next_ready = NULL;
  q->qlen--;
  atomic_store(&q->nqueued, q->qlen);
  return t;
}

/* The pool whose launch this thread dispatches (from pto__rt_pool_wake to pto__rt_pool_idle),
 * and the pool whose core thread this is. */
static _Thread_local const pto__rt_pool *tls_dispatching, *tls_core_pool;

/* Are the pool's awake threads kept to its CPUs (awake_cap)? A shared pool's, unless it is lazy
 * (a distributed chip's, whose dispatching thread runs its tasks itself). */
static int capped(const pto__rt_pool *pool) {
  return pool->shared && !atomic_load_explicit(&pool->lazy, memory_order_relaxed);
}

/* Capped pool: how many core threads may be awake at once: the CPUs less the dispatching
 * thread's while it holds one (at least 1, or nothing would run a task). On 2 CPUs during the
 * orchestration, one core thread runs tasks and the other sleeps, rather than a third thread
 * that spins or runs a task on a CPU the orchestration needs (issue #31 item 4: at 4 MiB,
 * where the orchestration is a sixth of the launch, the dispatching thread lost its CPU to
 * spinning cores and the launch waited for the scheduler). Once its orchestration is done the
 * dispatching thread runs tasks too (pto__rt_pool_help), and when it waits its CPU goes to a
 * core (pto__rt_pool_flush). */
static int awake_cap(const pto__rt_pool *pool) {
  int cap = pool->ncpu - atomic_load_explicit(&pool->dispatching, memory_order_relaxed);
  return cap < 1 ? 1 : cap;
}

/* Threads a wake-up may add: in a capped pool, those the cap leaves beside the awake ones and
 * those already waking (q is where every thread idles); pool->mu held. */
static long wake_room(pto__rt_pool *pool, const pto__rt_queue *q) {
  if (!capped(pool)) return q->nsleeping;
  return awake_cap(pool) - atomic_load(&pool->nawake) - q->nwaking;
}

/* ---- where a woken core thread runs: not on the dispatching thread's CPU ------------------
 *
 * A thread woken from its condition variable runs where the scheduler places it, and on a
 * shared host that is often the waker's CPU: the dispatching thread's, which keeps it for the
 * orchestration and then for the tasks it runs itself (pto__rt_pool_help), so the woken thread
 * waits there for the launch's end while the other CPU runs another process's work (300 launches
 * of a 4 MiB add on a busy 2-CPU host, `perf sched`: 238 waits of 0.3-3.7 ms between a core
 * thread's wake-up and its start, mostly queued behind the dispatching thread, and 172 of the
 * launches ran all their tasks on one CPU; issue #31 item 4). A capped pool's dispatching thread
 * (on up to STEER_MAX_CPUS CPUs), while it holds its CPU, therefore takes its CPU out of a
 * sleeping thread's CPUs before it signals (steer), and the thread puts its own CPUs back once
 * awake (core_main): it starts on another CPU, and competes there with whatever runs, not with
 * the thread that feeds it. A thread about to block takes the last launch's dispatching CPU out
 * itself (steer_self), so the next launch's dispatching thread usually finds it done; a wake-up
 * while no dispatching thread holds its CPU puts the sleepers' CPUs back first (unsteer). */

/* Pools on more CPUs than this steer no thread: a steer costs the dispatching thread ~1.5 us a
 * sleeping thread (pthread_getaffinity_np 0.35 us, pthread_setaffinity_np 1.1-1.2 us on the
 * Zen 4 host) under mu, and one woken thread stacked on its CPU is half of a 2-CPU launch's
 * CPUs but a small part of a large one's (measured on 2 CPUs only). */
enum { STEER_MAX_CPUS = 4 };

/* Does the pool steer (a capped pool on 2 to STEER_MAX_CPUS CPUs)? */
static int steers(const pto__rt_pool *pool) {
  return capped(pool) && pool->ncpu >= 2 && pool->ncpu <= STEER_MAX_CPUS;
}

/* Takes cpu out of the CPUs of core c's thread th (c->thread, or pthread_self() on that thread):
 * out of its own CPUs, saved in c->steer_saved when it is not steered yet; not where that leaves
 * none. */
static void steer_off(pto__rt_core *c, pthread_t th, int cpu) {
  if (c->steered_from < 0 && pthread_getaffinity_np(th, sizeof c->steer_saved, &c->steer_saved))
    return;
  cpu_set_t set = c->steer_saved;
  CPU_CLR(cpu, &set);
  if (CPU_COUNT(&set) && !pthread_setaffinity_np(th, sizeof set, &set)) c->steered_from = cpu;
}

/* Before a signal of q's sleepers by the dispatching thread that keeps its CPU: takes that CPU
 * out of every sleeping thread's CPUs (their own, saved, less this one; not where that leaves
 * none, nor for a thread already steered from it, as one that steered itself before it blocked
 * usually is: steer_self); pool->mu held. */
static void steer(pto__rt_pool *pool) {
  if (!steers(pool) || tls_dispatching != pool ||
      !atomic_load_explicit(&pool->dispatching, memory_order_relaxed))
    return;
  int cpu = sched_getcpu();
  if (cpu < 0 || cpu >= CPU_SETSIZE) return;
  atomic_store_explicit(&pool->steer_cpu, cpu, memory_order_relaxed);
  for (int i = 0; i < pool->nstarted; i++) {
    pto__rt_core *c = &pool->cores[i];
    if (c->asleep && c->steered_from != cpu) steer_off(c, c->thread, cpu);
  }
}

/* The thread of core, about to block (not asleep yet: steer leaves it alone), takes the CPU of
 * the last launch's dispatching thread out of its own CPUs, as steer would when that thread wakes
 * it for the next launch: there the dispatching thread pays for a steer (~5 us a sleeping thread
 * on the Zen 4 KVM host when the CPUs idle, its pthread_setaffinity_np 3-4 us, against 1.2 us
 * while they are busy) before its orchestration, here an idle thread pays. Like steer's, undone
 * once the thread is awake. */
static void steer_self(pto__rt_pool *pool, pto__rt_core *core) {
  int cpu = atomic_load_explicit(&pool->steer_cpu, memory_order_relaxed);
  if (cpu < 0 || cpu >= CPU_SETSIZE || core->steered_from == cpu || !steers(pool)) return;
  steer_off(core, pthread_self(), cpu);
}

/* Before a signal of q's sleepers while no dispatching thread holds its CPU (it waits for its
 * launch, which gave that CPU to the cores: pto__rt_pool_flush; or none runs): puts their own
 * CPUs back for the sleeping threads that steer or steer_self took a CPU from, so the one woken
 * may start on the CPU that is free now rather than queue behind the thread that woke it;
 * pool->mu held. */
static void unsteer(pto__rt_pool *pool) {
  if (atomic_load_explicit(&pool->dispatching, memory_order_relaxed)) return;
  for (int i = 0; i < pool->nstarted; i++) {
    pto__rt_core *c = &pool->cores[i];
    if (c->asleep && c->steered_from >= 0 &&
        !pthread_setaffinity_np(c->thread, sizeof c->steer_saved, &c->steer_saved))
      c->steered_from = -1;
  }
}

/* Signals threads sleeping on q for the nblocks queued blocks that no spinner and no thread
 * already waking will take, at most room of them; pool->mu held. */
static void wake_for_queued(pto__rt_pool *pool, pto__rt_queue *q, size_t nblocks, long room) {
  long demand = (long)nblocks - atomic_load(&q->nspin) - q->nwaking;
  long idle = q->nsleeping - q->nwaking;
  long n = demand < idle ? demand : idle;
  if (n > room) n = room;
  if (n > 0) {
    steer(pool);   /* the dispatching thread, holding its CPU, wakes them */
    unsteer(pool); /* no dispatching thread holds a CPU */
  }
  for (long i = 0; i < n; i++)
    pthread_cond_signal(&q->cv);
  if (n > 0) q->nwaking += (int)n;
}

/* Shared pool: every thread idles on the AIV queue's counters; signals them for the queued blocks
 * of both types that free cores can take (a thread woken for more would find no core, and take a
 * CPU from the threads that run the tasks), less keep blocks of each type left to the dispatching
 * thread (a lazy pool's); pool->mu held. */
static void wake_shared(pto__rt_pool *pool, long keep) {
  size_t takeable = 0;
  for (int type = 0; type < 2; type++) {
    long free_ = pool->ncores_of[type] - atomic_load(&pool->q[type].nbusy);
    long nb = (long)pool->q[type].nblocks - keep;
    if (free_ > 0 && nb > 0) takeable += (size_t)(nb < free_ ? nb : free_);
  }
  pto__rt_queue *q = &pool->q[PTO_CORE_AIV];
  wake_for_queued(pool, q, takeable, wake_room(pool, q));
}

/* Wakes sleeping threads for the queued blocks of types (a bit per type) that no other thread
 * will take, less keep blocks of each type left to the dispatching thread; pool->mu held. */
static void wake_pool(pto__rt_pool *pool, long keep, int types) {
  if (pool->shared) {
    wake_shared(pool, keep);
    return;
  }
  for (int type = 0; type < 2; type++) {
    pto__rt_queue *q = &pool->q[type];
    if (types & (1 << type))
      wake_for_queued(pool, q, q->nblocks > (size_t)keep ? q->nblocks - (size_t)keep : 0,
                      wake_room(pool, q));
  }
}

static void push(pto__rt_pool *pool, pto__rt_task **tasks, int n, long keep) {
  int pushed = 0;
  for (int i = 0; i < n; i++)
    tasks[i]->home_key = home_key(tasks[i]);
  pool_lock(pool);
  for (int i = 0; i < n; i++) {
    int type = tasks[i]->core_type == PTO_CORE_AIC ? PTO_CORE_AIC : PTO_CORE_AIV;
    pto__rt_queue *q = &pool->q[type];
    tasks[i]->next_ready = NULL;
    if (q->qtail_task)
      q->qtail_task->next_ready = tasks[i];
    else
      q->qhead_task = tasks[i];
    q->qtail_task = tasks[i];
    q->qlen++;
    if (tasks[i]->home_key) pool->homes->nkeyed[type]++;
    q->nblocks += (size_t)(tasks[i]->block_num - tasks[i]->claimed);
    pushed |= 1 << type;
  }
  for (int type = 0; type < 2; type++)
    if (pushed & (1 << type)) atomic_store(&pool->q[type].nqueued, pool->q[type].qlen);
  wake_pool(pool, keep, pushed);
  pthread_mutex_unlock(&pool->mu);
}

/* Shared pool: the threads that may spin during a launch: as many as the cores of the types its
 * kernels run on (more could never all run a task at once), at most the threads. */
static int spin_cap(pto__rt_pool *pool) {
  int types = atomic_load_explicit(&pool->spin_types, memory_order_relaxed), n = 0;
  for (int type = 0; type < 2; type++)
    if (types & (1 << type)) n += pool->ncores_of[type];
  return n < pool->nthreads ? n : pool->nthreads;
}

void pto__rt_pool_push(pto__rt_pool *pool, pto__rt_task **tasks, int n) { push(pool, tasks, n, 0); }

void pto__rt_pool_submit(pto__rt_pool *pool, pto__rt_task *t) { push(pool, &t, 1, pool->lazy); }

void pto__rt_pool_flush(pto__rt_pool *pool) {
  /* The waiting thread gives its CPU up, and in a capped pool a sleeping core may wake for the
   * queued work: the dispatching thread's, or a core's that waits inside a task (a gang block
   * for the others, a staged task for its producers) and so no longer counts as awake; else
   * a gang of more blocks than CPUs would wait for blocks no thread may wake to take. */
  int gave = 0;
  if (tls_dispatching == pool) {
    gave = atomic_exchange(&pool->dispatching, 0) && capped(pool);
  } else if (tls_core_pool == pool && capped(pool)) {
    atomic_fetch_sub(&pool->nawake, 1);
    gave = 1;
  }
  if ((!pool->lazy && !gave) ||
      (!atomic_load(&pool->q[0].nqueued) && !atomic_load(&pool->q[1].nqueued)))
    return;
  pool_lock(pool);
  wake_pool(pool, 0, 3);
  pthread_mutex_unlock(&pool->mu);
}

void pto__rt_pool_resume(pto__rt_pool *pool) {
  if (tls_dispatching == pool)
    atomic_store(&pool->dispatching, 1);
  else if (tls_core_pool == pool && capped(pool))
    atomic_fetch_add(&pool->nawake, 1);
}

void pto__rt_pool_wake(pto__rt_pool *pool, const pto_program *prog) {
  /* The types prog's kernels are declared to run on; an undeclared kernel may run on either. */
  int types = 0;
  int nk = pto_program_kernel_count(prog);
  for (int k = 0; k < nk && types != 3; k++) {
    int t = pto_program_kernel_core_type(prog, k);
    types |= t == PTO_CORE_AIC ? 1 << PTO_CORE_AIC : t == PTO_CORE_AIV ? 1 << PTO_CORE_AIV : 3;
  }
  if (!types) types = 3;
  atomic_store(&pool->spin_types, types);
  tls_dispatching = pool;
  atomic_store(&pool->dispatching, 1);
  atomic_store(&pool->active, 1);
  if (pool->lazy) return; /* the dispatching thread runs the first task itself */
  /* The budget goes to the vector cores first (most programs' first tasks), then the cube
   * cores; a shared pool's threads all idle on the AIV queue and run either. */
  int left = pool->spin_budget;
  pool_lock(pool);
  for (int k = 0; k < (pool->shared ? 1 : 2) && left > 0; k++) {
    int type = k == 0 ? PTO_CORE_AIV : PTO_CORE_AIC;
    if (!pool->shared && !(types & (1 << type))) continue;
    pto__rt_queue *q = &pool->q[type];
    int have = atomic_load(&q->nspin) + q->nwaking;
    int nthreads = pool->shared ? spin_cap(pool) : pool->ncores_of[type];
    int want = left < nthreads ? left : nthreads;
    int idle = q->nsleeping - q->nwaking;
    int n = want - have < idle ? want - have : idle;
    long room = wake_room(pool, q);
    if (n > room) n = (int)room;
    left -= want;
    if (n <= 0) continue;
    pool->wake_gen++;
    q->nwaking += n;
    steer(pool);
    for (int i = 0; i < n; i++)
      pthread_cond_signal(&q->cv);
  }
  pthread_mutex_unlock(&pool->mu);
}

static int claim(pto__rt_pool *pool, pto__rt_core *core) {
  int free_ = 0;
  if (!atomic_compare_exchange_strong(&core->claimed, &free_, 1)) return 0;
  atomic_fetch_add(&pool->q[core->type].nbusy, 1);
  return 1;
}

/* nbusy may count a core a moment after it is free again, never the other way round: a thread
 * that finds no free core then does not spin on one that has none yet. */
static void release(pto__rt_pool *pool, pto__rt_core *core) {
  atomic_store(&core->claimed, 0);
  atomic_fetch_sub(&pool->q[core->type].nbusy, 1);
}

/* Pops a block of a task of q's type as core, which the caller has claimed; NULL when none is
 * queued (pop_locked: *block, *started). */
static pto__rt_task *pop(pto__rt_pool *pool, pto__rt_queue *q, int32_t *block, int *started) {
  pool_lock(pool);
  pto__rt_task *t = pop_locked(pool, q, block, started);
  pthread_mutex_unlock(&pool->mu);
  return t;
}

/* pop as core, the take recorded as its dispatch phase when the launch records phases. */
static pto__rt_task *take(pto__rt_pool *pool, pto__rt_queue *q, const pto__rt_launch *L,
                          pto__rt_core *core, int32_t *block, int *started) {
  if (!L->record_phases) return pop(pool, q, block, started);
  uint64_t t0 = pto__rt_now_ns();
  pto__rt_task *t = pop(pool, q, block, started);
  if (t) {
    core->loop_iter++;
    pto__rt_core_phase(core, PTO_SCHED_PHASE_DISPATCH, t0, pto__rt_now_ns());
  }
  return t;
}

/* Shared pool: claims a free core of type for the thread whose own core is home (home first);
 * NULL when every one is claimed. */
static pto__rt_core *claim_of_type(pto__rt_pool *pool, int type, pto__rt_core *home) {
  if (home->type == type && claim(pool, home)) return home;
  int lo = type == PTO_CORE_AIV ? 0 : pool->ncores_of[PTO_CORE_AIV];
  int hi = type == PTO_CORE_AIV ? pool->ncores_of[PTO_CORE_AIV] : pool->ncores;
  for (int i = lo; i < hi; i++) {
    pto__rt_core *c = &pool->cores[i];
    if (c != home && !atomic_load_explicit(&c->claimed, memory_order_relaxed) && claim(pool, c))
      return c;
  }
  return NULL;
}

/* Shared pool: takes a block of the first submitted of the queued tasks whose type has a free
 * core, as that core, claimed (*out_core; the caller releases it); NULL when there is none. The
 * take is recorded as the core's dispatch phase when the launch records phases. */
static pto__rt_task *take_any(pto__rt_pool *pool, const pto__rt_launch *L, pto__rt_core *home,
                              pto__rt_core **out_core, int32_t *block, int *started) {
  pto__rt_queue *aiv = &pool->q[PTO_CORE_AIV], *aic = &pool->q[PTO_CORE_AIC];
  pto__rt_task *t = NULL;
  pto__rt_core *core = NULL;
  uint64_t t0 = 0;
  pool_lock(pool);
  /* Read once a task is queued: the launch that queued it set record_phases before (mu). */
  int record = (aiv->qlen || aic->qlen) && L->record_phases;
  if (record) t0 = pto__rt_now_ns();
  int first = aic->qlen && (!aiv->qlen || aic->qhead_task->seq < aiv->qhead_task->seq)
                  ? PTO_CORE_AIC
                  : PTO_CORE_AIV;
  for (int k = 0; k < 2 && !t; k++) {
    int type = k == 0 ? first : first == PTO_CORE_AIV ? PTO_CORE_AIC : PTO_CORE_AIV;
    pto__rt_queue *q = &pool->q[type];
    if (q->qlen && (core = claim_of_type(pool, type, home)))
      t = pop_locked(pool, q, block, started);
  }
  pthread_mutex_unlock(&pool->mu);
  *out_core = core;
  if (t && record) {
    core->loop_iter++;
    pto__rt_core_phase(core, PTO_SCHED_PHASE_DISPATCH, t0, pto__rt_now_ns());
  }
  return t;
}

/* Runs block of t and the successors it leaves to the core (single blocks, run here without
 * the queue), as core. */
static void run_chain(pto__rt_launch *L, pto__rt_task *t, pto__rt_core *core, int32_t block,
                      int started) {
  while (t) {
    pto__rt_task *next = NULL;
    pto__rt_task_execute(L, t, core, block, started && t->early_resolve, &next);
    t = next;
    block = 0;
    started = 1;
    if (t) {
      t->claimed = 1;
      core->loop_iter += L->record_phases != 0; /* a task of its own, taken without the queue */
    }
  }
}

void pto__rt_pool_phases_reset(pto__rt_pool *pool) {
  for (int i = 0; i < pool->ncores; i++) {
    pto__rt_core *c = &pool->cores[i];
    c->nphases = 0;
    c->loop_iter = 0;
    c->phases_oom = 0;
  }
}

void pto__rt_core_phase(pto__rt_core *core, int kind, uint64_t start_ns, uint64_t end_ns) {
  if (pto_grow(&core->phases, sizeof *core->phases, &core->capphases, core->nphases + 1)) {
    core->phases_oom = 1;
    return;
  }
  core->phases[core->nphases++] =
      (pto_sched_phase){core->id, kind, core->loop_iter, 1, start_ns, end_ns};
}

void pto__rt_pool_collect_phases(const pto__rt_pool *pool, pto__rt_task_log *log) {
  log->phases_valid = 0;
  pto_status_free(log->phases_err);
  log->phases_err = PTO_OK;
  log->nphases = 0;
  size_t n = 0;
  for (int i = 0; i < pool->ncores; i++) {
    if (pool->cores[i].phases_oom) goto oom;
    n += pool->cores[i].nphases;
  }
  if (pto_grow(&log->phases, sizeof *log->phases, &log->capphases, n)) goto oom;
  for (int i = 0; i < pool->ncores; i++) {
    const pto__rt_core *c = &pool->cores[i];
    if (c->nphases) memcpy(log->phases + log->nphases, c->phases, c->nphases * sizeof *c->phases);
    log->nphases += c->nphases;
  }
  log->phases_valid = 1;
  return;
oom:
  log->phases_err = pto_status_make(PTO_STATUS_OUT_OF_MEMORY,
                                    "out of memory recording the scheduling phases of the last "
                                    "launch");
}

int pto__rt_pool_help(pto__rt_pool *pool, pto__rt_launch *L) {
  for (int type = 0; type < 2; type++) {
    pto__rt_queue *q = &pool->q[type];
    if (atomic_load(&q->nqueued) == 0) continue;
    /* Cores of this type are [0, aiv) or [aiv, ncores). */
    int lo = type == PTO_CORE_AIV ? 0 : pool->ncores_of[PTO_CORE_AIV];
    int hi = type == PTO_CORE_AIV ? pool->ncores_of[PTO_CORE_AIV] : pool->ncores;
    for (int i = lo; i < hi; i++) {
      pto__rt_core *core = &pool->cores[i];
      /* A spinning core's own thread is about to take the task, and a parked one is being
       * handed its core back: leave the core to it. */
      if (atomic_load_explicit(&core->spinning, memory_order_relaxed) ||
          atomic_load_explicit(&core->parked, memory_order_relaxed) ||
          atomic_load_explicit(&core->claimed, memory_order_relaxed) || !claim(pool, core))
        continue;
      int32_t block = 0;
      int started = 0;
      pto__rt_task *t = take(pool, q, L, core, &block, &started);
      if (t) run_chain(L, t, core, block, started);
      release(pool, core);
      /* Its own thread, woken meanwhile, blocked until the core is free again: it has a CPU
       * now, so it takes its core back and this thread stops helping. */
      if (atomic_load(&core->parked)) {
        pool_lock(pool);
        pthread_cond_signal(&core->park_cv);
        pthread_mutex_unlock(&pool->mu);
        return 0;
      }
      if (t) return 1;
      break; /* the queue emptied meanwhile */
    }
  }
  return 0;
}

/* The tasks queued, both types (a relaxed read: a hint of work to take). */
static size_t queued(pto__rt_pool *pool) {
  return atomic_load_explicit(&pool->q[0].nqueued, memory_order_relaxed) +
         atomic_load_explicit(&pool->q[1].nqueued, memory_order_relaxed);
}

void pto__rt_pool_help_out(pto__rt_pool *pool, pto__rt_launch *L) {
  uint64_t deadline = 0; /* spin_ns after the last task this thread ran */
  while (atomic_load(&L->outstanding) > 0) {
    if (pto__rt_pool_help(pool, L)) {
      deadline = 0;
      continue;
    }
    /* Nothing to take now. A capped pool's dispatching thread keeps its CPU (and its dispatching
     * flag, so no sleeping core is woken to take its place) for spin_ns after its last task, as
     * an idle core spins after its own: the tasks running are about to make more ready, and a
     * core woken for them pays a futex wake-up, 17-65 us on a quiet host and milliseconds on a
     * loaded one, while this thread has a CPU now. It spins until the queues' count changes,
     * reading that count (which only a push or a take writes) at every pause and the launch's
     * outstanding count (which every completion writes) once in 64: a chain of tasks that the
     * cores run without the queue pays for each read of a line its completions write. With no
     * more tasks outstanding than threads it waits for the launch's end at once: that wait spins
     * on the count at every pause (a one-task launch noticed its end up to a microsecond later
     * here). Not in other pools: a strict one's core came back for its tasks, a lazy one has no
     * sleeping core to spare. */
    if (!capped(pool) || atomic_load(&L->outstanding) <= pool->nthreads) return;
    if (!deadline) deadline = pto__rt_now_ns() + pool->spin_ns;
    size_t seen = queued(pool); /* tasks queued that no core of their type was free for */
    for (unsigned i = 1; queued(pool) == seen; i++) {
      pto__rt_cpu_relax();
      if (i % 64) continue;
      if (!atomic_load(&L->outstanding) || pto__rt_now_ns() >= deadline) return;
    }
  }
}

/* Takes a place among the spinners for core (of queue q): always while a launch runs (its cores
 * come back between short tasks, and a core woken for one must not go back to sleep at once
 * only to be woken again), within the budget otherwise; 0 when it is full. */
static int spin_acquire(pto__rt_pool *pool, pto__rt_queue *q, pto__rt_core *core) {
  int n = atomic_load(&pool->nspinning);
  while (n < pool->spin_budget || atomic_load(&pool->active))
    if (atomic_compare_exchange_weak(&pool->nspinning, &n, n + 1)) {
      atomic_store(&core->spinning, 1);
      atomic_fetch_add(&q->nspin, 1);
      return 1;
    }
  return 0;
}

/* No launch runs and more cores spin than the budget allows: gives this one's place up (1). */
static int spin_evict(pto__rt_pool *pool) {
  int n = atomic_load_explicit(&pool->nspinning, memory_order_relaxed);
  while (n > pool->spin_budget && !atomic_load_explicit(&pool->active, memory_order_relaxed))
    if (atomic_compare_exchange_weak(&pool->nspinning, &n, n - 1)) return 1;
  return 0;
}

/* counted: the core still holds its place in nspinning (not evicted). */
static void spin_release(pto__rt_pool *pool, pto__rt_queue *q, pto__rt_core *core, int counted) {
  atomic_fetch_sub(&q->nspin, 1);
  atomic_store(&core->spinning, 0);
  if (counted) atomic_fetch_sub(&pool->nspinning, 1);
}

void pto__rt_pool_idle(pto__rt_pool *pool) {
  if (atomic_load_explicit(&pool->dispatching, memory_order_relaxed))
    atomic_store(&pool->dispatching, 0);
  atomic_store(&pool->active, 0);
  tls_dispatching = NULL;
}

/* Capped pool: the thread of an idle core over the cap (awake_cap) leaves the awake ones (1),
 * to block; the others stay, so the cap is kept without every thread blocking at once. */
static int awake_evict(pto__rt_pool *pool) {
  int n = atomic_load_explicit(&pool->nawake, memory_order_relaxed);
  if (n < pool->ncpu || !capped(pool)) return 0; /* under any cap: dispatching is not read */
  while (n > awake_cap(pool))
    if (atomic_compare_exchange_weak(&pool->nawake, &n, n - 1)) return 1;
  return 0;
}

/* Work that the thread of core can take: a queued task of its type, or (shared pool) of either
 * type that has a free core. Read under mu too: nqueued is stored with the queue. An acquire:
 * seeing a task queued, the thread sees its launch's settings too (record_phases). */
static int has_work(pto__rt_pool *pool, const pto__rt_core *core) {
  if (!pool->shared)
    return atomic_load_explicit(&pool->q[core->type].nqueued, memory_order_acquire) > 0;
  for (int type = 0; type < 2; type++) {
    pto__rt_queue *q = &pool->q[type];
    if (atomic_load_explicit(&q->nqueued, memory_order_acquire) > 0 &&
        atomic_load_explicit(&q->nbusy, memory_order_relaxed) < pool->ncores_of[type])
      return 1;
  }
  return 0;
}

static void *core_main(void *arg) {
  pto__rt_core *core = arg;
  pto__rt_worker *w = core->w;
  pto__rt_pool *pool = &w->pool;
  /* The queue whose counters and condition variable this thread idles by. */
  pto__rt_queue *q = &pool->q[pool->shared ? PTO_CORE_AIV : core->type];
  pto__rt_tls_worker = w; /* a kernel's call to close its own worker is ignored, not waited on */
  tls_core_pool = pool;
  atomic_store_explicit(&core->tid, (int)gettid(), memory_order_relaxed);
  atomic_fetch_add(&pool->nawake, 1);
  for (;;) {
    pto__rt_task *t = NULL;
    int32_t block = 0;
    int started = 0;
    /* A core that the dispatching thread is running as (pto__rt_pool_help) leaves the queue
     * alone until it is released: one thread at a time uses a core's identity and scratch.
     * Its thread blocks meanwhile (parked) rather than spin beside the thread that runs its
     * tasks. A shared pool's thread takes another free core instead. */
    int helped = 0;
    if (has_work(pool, core)) {
      if (pool->shared) {
        pto__rt_core *as = NULL;
        t = take_any(pool, &w->launch, core, &as, &block, &started);
        if (t) {
          run_chain(&w->launch, t, as, block, started);
          release(pool, as);
        }
      } else if (claim(pool, core)) {
        t = take(pool, q, &w->launch, core, &block, &started);
        if (t) run_chain(&w->launch, t, core, block, started);
        release(pool, core);
      } else {
        helped = 1;
      }
    }
    if (t) continue;
    if (atomic_load(&pool->shutdown)) break;
    if (helped) {
      pool_lock(pool);
      atomic_store(&core->parked, 1);
      /* A push may have counted this thread as a spinner that would take its task: wake a
       * sleeping core for it instead. */
      wake_for_queued(pool, q, q->nblocks, wake_room(pool, q));
      /* Released before parked was set: the helper's release is seen here (and otherwise
       * it sees parked and wakes this thread). */
      while (atomic_load(&core->claimed) && !atomic_load(&pool->shutdown))
        pthread_cond_wait(&core->park_cv, &pool->mu);
      atomic_store(&core->parked, 0);
      pthread_mutex_unlock(&pool->mu);
      continue;
    }
    /* Spin a bounded while, if the budget has room: a task handed to a spinning core starts in
     * well under a microsecond, one handed to a blocked core waits for a futex wake (tens of
     * µs). A spinner of a type the current launch does not use gives its place up; in a shared
     * pool, a spinner past as many as the launch's types have cores; in a capped one, a thread
     * past the awake cap (left: it no longer counts among the awake threads) blocks at once. */
    int left = awake_evict(pool);
    if (!left && (!pool->shared || atomic_load(&q->nspin) < spin_cap(pool)) &&
        spin_acquire(pool, q, core)) {
      uint64_t deadline = pto__rt_now_ns() + pool->spin_ns;
      int work = 0, evicted = 0, mask = 1 << core->type;
      for (unsigned i = 0;; i++) {
        if (has_work(pool, core) || atomic_load_explicit(&pool->shutdown, memory_order_relaxed)) {
          work = 1;
          break;
        }
        if (pool->shared ? atomic_load_explicit(&q->nspin, memory_order_relaxed) > spin_cap(pool)
                         : !(atomic_load_explicit(&pool->spin_types, memory_order_relaxed) & mask))
          break;
        if (atomic_load_explicit(&pool->nspinning, memory_order_relaxed) > pool->spin_budget &&
            (evicted = spin_evict(pool)))
          break;
        if ((i & 15) == 15 && (left = awake_evict(pool))) break;
        pto__rt_cpu_relax();
        if ((i & 63) == 63 && pto__rt_now_ns() >= deadline) break;
      }
      /* Before the queue is checked under mu below: a push that saw this core spinning and woke
       * nobody has queued its task by then. */
      spin_release(pool, q, core, !evicted);
      if (work) continue;
    }
    steer_self(pool, core);
    pool_lock(pool);
    uint64_t gen = pool->wake_gen;
    while (!has_work(pool, core) && !atomic_load(&pool->shutdown) && pool->wake_gen == gen) {
      q->nsleeping++;
      if (!left) atomic_fetch_sub(&pool->nawake, 1);
      left = 0;
      core->asleep = 1;
      pthread_cond_wait(&q->cv, &pool->mu);
      core->asleep = 0;
      atomic_fetch_add(&pool->nawake, 1);
      q->nsleeping--;
      if (q->nwaking > 0) q->nwaking--;
    }
    if (left) atomic_fetch_add(&pool->nawake, 1); /* work came first: awake after all */
    /* Awake (steer, steer_self): its own CPUs back, outside mu; no one steers a thread that is
     * not asleep. */
    int steered = core->steered_from >= 0;
    cpu_set_t own = core->steer_saved;
    core->steered_from = -1;
    pthread_mutex_unlock(&pool->mu);
    if (steered) (void)pthread_setaffinity_np(pthread_self(), sizeof own, &own);
  }
  return NULL;
}

static void *alloc_scratch(uint64_t bytes) {
  size_t size = (size_t)((bytes + 63) & ~63ull);
  return pto_aligned_alloc(64, size);
}

pto_status pto__rt_pool_start(struct pto__rt_worker *w, int naic, int naiv, int nthreads) {
  pto__rt_pool *pool = &w->pool;
  memset(pool, 0, sizeof *pool);
  int ncores = naic + naiv;
  pool->ncores_of[PTO_CORE_AIC] = naic;
  pool->ncores_of[PTO_CORE_AIV] = naiv;
  pool->spin_ns = (uint64_t)w->cfg.idle_spin_us * 1000;
  pool->shuffle = w->cfg.shuffle;
  pool->rng = w->cfg.shuffle_seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  if (!pool->rng) pool->rng = 1;
  pool->ncores = ncores;
  pool->nthreads = nthreads < ncores ? nthreads : ncores;
  pool->shared = !w->cfg.strict_cores;
  atomic_init(&pool->steer_cpu, -1);
  /* Spinning cores must leave a CPU to the dispatching thread, or they slow down the very
   * orchestration they wait for: the CPUs this process may run on, less one. */
  long ncpu = pto__rt_usable_cpus();
  pool->ncpu = (int)ncpu;
  pool->spin_budget = ncpu > 1 ? (int)(ncpu - 1) : 1;
  if (pool->spin_budget > pool->nthreads) pool->spin_budget = pool->nthreads;
  atomic_init(&pool->spin_types, 3);
  pool->cores = pto_calloc((size_t)ncores, sizeof *pool->cores);
  pool->homes = pto_calloc(1, sizeof *pool->homes);
  if (!pool->cores || !pool->homes) {
    free(pool->cores);
    free(pool->homes);
    memset(pool, 0, sizeof *pool);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory opening a worker");
  }
  pthread_mutex_init(&pool->mu, NULL);
  for (int type = 0; type < 2; type++)
    pthread_cond_init(&pool->q[type].cv, NULL);
  for (int i = 0; i < ncores; i++)
    pthread_cond_init(&pool->cores[i].park_cv, NULL);
  pto_status s = PTO_OK;
  for (int i = 0; i < ncores; i++) {
    pto__rt_core *c = &pool->cores[i];
    c->w = w;
    c->id = i;
    c->type = i < naiv ? PTO_CORE_AIV : PTO_CORE_AIC;
    c->steered_from = -1;
    c->rng = pool->rng ^ ((uint64_t)(i + 1) * 0xbf58476d1ce4e5b9ull);
    if (!c->rng) c->rng = 1;
    c->scratch = alloc_scratch(w->scratch_bytes);
    c->scratch_size = w->scratch_bytes;
    if (!c->scratch) {
      s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY,
                          "out of memory allocating %llu bytes of scratch "
                          "for core %d",
                          (unsigned long long)w->scratch_bytes, i);
      break;
    }
  }
  for (int i = 0; !s && i < pool->nthreads; i++) {
    int rc = pthread_create(&pool->cores[i].thread, NULL, core_main, &pool->cores[i]);
    if (rc != 0) {
      s = pto_status_make(PTO_STATUS_INTERNAL, "cannot start core thread %d of %d: %s", i,
                          pool->nthreads, strerror(rc));
      break;
    }
    pool->nstarted++;
  }
  if (s) pto__rt_pool_stop(pool);
  return s;
}

void pto__rt_pool_stop(pto__rt_pool *pool) {
  if (!pool->cores) return;
  pthread_mutex_lock(&pool->mu);
  atomic_store(&pool->shutdown, 1);
  for (int type = 0; type < 2; type++)
    pthread_cond_broadcast(&pool->q[type].cv);
  for (int i = 0; i < pool->ncores; i++)
    pthread_cond_broadcast(&pool->cores[i].park_cv);
  pthread_mutex_unlock(&pool->mu);
  for (int i = 0; i < pool->nstarted; i++)
    pthread_join(pool->cores[i].thread, NULL);
  for (int i = 0; i < pool->ncores; i++) {
    free(pool->cores[i].scratch);
    free(pool->cores[i].phases);
    pthread_cond_destroy(&pool->cores[i].park_cv);
  }
  free(pool->cores);
  free(pool->homes);
  pthread_mutex_destroy(&pool->mu);
  for (int type = 0; type < 2; type++)
    pthread_cond_destroy(&pool->q[type].cv);
  memset(pool, 0, sizeof *pool);
}

pto_status pto__rt_pool_grow_scratch(pto__rt_pool *pool, uint64_t bytes) {
  for (int i = 0; i < pool->ncores; i++) {
    pto__rt_core *c = &pool->cores[i];
    if (c->scratch_size >= bytes) continue;
    void *p = alloc_scratch(bytes);
    if (!p)
      return pto_status_make(PTO_STATUS_OUT_OF_MEMORY,
                             "out of memory growing core %d's scratch to %llu bytes", i,
                             (unsigned long long)bytes);
    free(c->scratch);
    c->scratch = p;
    c->scratch_size = bytes;
  }
  return PTO_OK;
}
