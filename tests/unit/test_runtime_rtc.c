/* Runtime: a worker that runs to completion (pto__rt_worker_set_run_to_completion, a distributed
 * chip's; issue #31 item 2). Its dispatching thread runs a launch's lone ready task itself, as
 * the task's core (the records show the core's lane), and no core thread is woken for it; a wait
 * of the orchestration (an element read, the in-flight window) hands the tasks left to it to the
 * cores instead, so it never waits for a task that only it would run. Launches that could hang
 * run on a thread of their own under a deadline. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "runtime_internal.h"
#include "test_runtime_common.h"

static const pto_orch_api *g_api;
static void bind_api(const pto_orch_api *api) { g_api = api; }

static pthread_t g_ran_on; /* the thread that ran the last k_inc */
static atomic_int g_core;  /* its pto_core_ctx.core_id */

/* t[0] += 1; notes the thread and core that ran it. */
static int32_t k_inc(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  for (int64_t i = 0, n = kv_numel(&t[0]); i < n; i++)
    *kv_f32p(&t[0], i) += 1.0f;
  g_ran_on = pthread_self();
  atomic_store(&g_core, ctx->core_id);
  return 0;
}

static int32_t submit_inc(const pto_orch_tensor *x) {
  pto_orch_task_arg a[1] = {ta_inout(x)};
  return g_api->submit(g_api->ctx, 0, PTO_CORE_AIV, a, 1);
}

static void one_entry(const pto_orch_args *a) { submit_inc(&a->tensors[0]); }

static float g_read;
/* One task, then a read of the element it writes: the orchestration waits for the task. */
static void read_entry(const pto_orch_args *a) {
  submit_inc(&a->tensors[0]);
  int64_t idx[2] = {0, 0};
  if (g_api->read_element(g_api->ctx, &a->tensors[0], idx, &g_read)) g_read = -1;
}

enum { CHAIN = 8 };
/* A chain of CHAIN increments of x (each after the one before). */
static void chain_entry(const pto_orch_args *a) {
  for (int i = 0; i < CHAIN; i++)
    submit_inc(&a->tensors[0]);
}

static pto_program *make(pto_orch_entry_fn entry) {
  tsig s;
  tsig_init(&s, "rtc");
  tsig_tensor(&s, "x", PTO_DIR_INOUT, PTO_DTYPE_F32, "4,16");
  static const pto_kernel_fn k[1] = {k_inc};
  static const char *const names[1] = {"inc"};
  pto_program *p = tprogram(&s, bind_api, entry, 1, k, names);
  tsig_free(&s);
  return p;
}

static pto_worker *open_rtc(uint32_t max_inflight) {
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.aiv_cores = 1;
  cfg.aic_cores = 1;
  cfg.idle_spin_us = 1;
  cfg.max_inflight_tasks = max_inflight;
  cfg.device_memory_bytes = 16ull << 20;
  pto_worker *w = NULL;
  assert_pto_ok(pto_worker_open(&cfg, &w));
  pto__rt_worker_set_run_to_completion(w, 1);
  return w;
}

/* Sleeping core threads of w, and the pool's wake generation, under its lock. */
static int sleeping(pto_worker *wt, uint64_t *gen) {
  pto__rt_worker *w = pto__rt_obj_get(wt, PTO__RT_OBJ_WORKER, NULL);
  assert_non_null(w);
  pthread_mutex_lock(&w->pool.mu);
  int n =
      w->pool.q[0].nsleeping + w->pool.q[1].nsleeping - w->pool.q[0].nwaking - w->pool.q[1].nwaking;
  if (gen) *gen = w->pool.wake_gen;
  pthread_mutex_unlock(&w->pool.mu);
  return n;
}

/* Waits (at most 10 s) until every core thread of w is asleep: spun out, blocked. */
static void wait_cores_asleep(pto_worker *w) {
  uint64_t t0 = pto__rt_now_ns();
  while (sleeping(w, NULL) < pto_worker_core_count(w) &&
         pto__rt_now_ns() - t0 < 10ull * 1000 * 1000 * 1000)
    sched_yield();
  assert_int_equal(sleeping(w, NULL), pto_worker_core_count(w));
}

static float g_x[4][16];

static pto_status run(pto_worker *w, pto_program *p) {
  int64_t shape[2] = {4, 16};
  pto_host_tensor hx;
  pto_host_tensor_init(&hx, g_x, PTO_DTYPE_F32, 2, shape);
  pto_arg args[1] = {pto_arg_host(&hx)};
  return pto_worker_run(w, p, args, 1);
}

/* A launch on a thread of its own, joined within 30 s: a launch that waits for a task nobody
 * runs fails the test instead of hanging it. */
typedef struct bounded {
  pto_worker *w;
  pto_program *p;
  pto_status s;
  atomic_int done;
} bounded;

static void *bounded_main(void *arg) {
  bounded *b = arg;
  b->s = run(b->w, b->p);
  atomic_store(&b->done, 1);
  return NULL;
}

/* Runs the launch; *th: the thread that dispatched it. */
static void run_bounded(pto_worker *w, pto_program *p, pthread_t *th) {
  static bounded b; /* static: a launch that hangs keeps using it after the test failed */
  b = (bounded){w, p, PTO_OK, 0};
  assert_int_equal(pthread_create(th, NULL, bounded_main, &b), 0);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 30;
  if (pthread_timedjoin_np(*th, NULL, &until)) {
    print_error("the launch has not returned in 30 s: it waits for a task no core was given\n");
    fail();
  }
  assert_int_equal(atomic_load(&b.done), 1);
  assert_pto_ok(b.s);
}

static void test_a_lone_task_runs_on_the_dispatching_thread_as_its_core(void **state) {
  (void)state;
  pto_program *p = make(one_entry);
  pto_worker *w = open_rtc(0);
  assert_pto_ok(pto_worker_set_record_tasks(w, true));
  memset(g_x, 0, sizeof g_x);
  wait_cores_asleep(w);
  uint64_t gen0, gen1;
  sleeping(w, &gen0);
  for (int i = 1; i <= 10; i++) {
    atomic_store(&g_core, -1);
    assert_pto_ok(run(w, p));
    /* The thread that called run ran the kernel, as the vector core (core 0). */
    assert_true(pthread_equal(g_ran_on, pthread_self()));
    assert_int_equal(atomic_load(&g_core), 0);
    assert_true(g_x[3][15] == (float)i);
    const pto_task_record *t = NULL;
    size_t n = 0;
    assert_pto_ok(pto_worker_last_launch_tasks(w, &t, &n));
    assert_int_equal(n, 1);
    assert_int_equal(t[0].core, 0); /* its core's lane in the swimlane */
    assert_int_equal(t[0].core_type, PTO_CORE_AIV);
    assert_true(t[0].start_ns <= t[0].end_ns);
  }
  /* No core thread was woken: none at a launch's start, none for the task. */
  assert_int_equal(sleeping(w, &gen1), pto_worker_core_count(w));
  assert_int_equal(gen1, gen0);
  pto_worker_close(w);
  pto_program_release(p);
}

static void test_a_read_of_the_orchestration_hands_the_task_to_a_core(void **state) {
  (void)state;
  pto_program *p = make(read_entry);
  pto_worker *w = open_rtc(0);
  memset(g_x, 0, sizeof g_x);
  for (int i = 1; i <= 3; i++) {
    wait_cores_asleep(w);
    g_read = 0;
    pthread_t th;
    run_bounded(w, p, &th);
    assert_true(g_read == (float)i);           /* the read saw the task's write */
    assert_false(pthread_equal(g_ran_on, th)); /* a core's thread ran it */
    assert_int_equal(atomic_load(&g_core), 0);
  }
  pto_worker_close(w);
  pto_program_release(p);
}

static void test_the_in_flight_window_hands_the_task_to_a_core(void **state) {
  (void)state;
  pto_program *p = make(chain_entry);
  /* Two tasks in flight at most: the orchestration waits at the third submit, while the first
   * task is the only one ready (each depends on the one before). */
  pto_worker *w = open_rtc(2);
  memset(g_x, 0, sizeof g_x);
  for (int i = 1; i <= 3; i++) {
    wait_cores_asleep(w);
    pthread_t th;
    run_bounded(w, p, &th);
    assert_true(g_x[0][0] == (float)(i * CHAIN));
    assert_true(g_x[3][15] == (float)(i * CHAIN));
  }
  pto_worker_close(w);
  pto_program_release(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_lone_task_runs_on_the_dispatching_thread_as_its_core),
      cmocka_unit_test(test_a_read_of_the_orchestration_hands_the_task_to_a_core),
      cmocka_unit_test(test_the_in_flight_window_hands_the_task_to_a_core),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
