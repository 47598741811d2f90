/* Runtime: per-task records (record_tasks, pto_worker_last_launch_tasks) of known task graphs, and
 * their swimlane. A gate task holds every other task back until the orchestration has submitted
 * the whole graph, so every dependency is a real wait and the recorded graph is exact. */
#include <stdatomic.h>
#include <time.h>

#include "alloc_test.h"
#include "pto/base.h"
#include "pto/bench.h"
#include "test_runtime_common.h"

static const pto_orch_api *g_api;
static void bind_api(const pto_orch_api *api) { g_api = api; }

static atomic_int g_gate;

static void sleep_us(long us) {
  struct timespec ts = {0, us * 1000};
  nanosleep(&ts, NULL);
}

/* Waits for the orchestration to open the gate, then a[0..n) = 1. At most 30 s: a hang's bound
 * (it was 2 s; a gate opened late lets tasks run before the whole graph is submitted). */
static int32_t k_gate(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  (void)ctx;
  for (int i = 0; i < 300000 && !atomic_load(&g_gate); i++)
    sleep_us(100);
  for (int64_t i = 0, n = kv_numel(&t[0]); i < n; i++)
    *kv_f32p(&t[0], i) = 1.0f;
  return 0;
}

/* t[0] += s[0] */
static int32_t k_addc(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)ctx;
  float c = slot_f32(s[0]);
  for (int64_t i = 0, n = kv_numel(&t[0]); i < n; i++)
    *kv_f32p(&t[0], i) += c;
  sleep_us(200); /* long enough that the cores really interleave */
  return 0;
}

/* t[1] = sum(t[0]) in every element of t[1] */
static int32_t k_sum(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  (void)ctx;
  float acc = 0;
  for (int64_t i = 0, n = kv_numel(&t[0]); i < n; i++)
    acc += kv_f32(&t[0], i);
  for (int64_t i = 0, n = kv_numel(&t[1]); i < n; i++)
    *kv_f32p(&t[1], i) = acc;
  sleep_us(200);
  return 0;
}

/* Fails with a kernel error. */
static int32_t k_fail(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)t;
  (void)s;
  (void)ctx;
  return PTO_KERNEL_ERR_DIV_ZERO;
}

/* t[0] = the pto_core_ctx.flags it ran with, in every element */
static int32_t k_flags(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  for (int64_t i = 0, n = kv_numel(&t[0]); i < n; i++)
    *kv_f32p(&t[0], i) = (float)ctx->flags;
  return 0;
}

enum { K_GATE, K_ADDC, K_SUM, K_FAIL, K_FLAGS, NK };
static const pto_kernel_fn g_kernels[NK] = {k_gate, k_addc, k_sum, k_fail, k_flags};
static const char *const g_names[NK] = {"gate", "addc", "sum", "fail", "flags"};

enum { CHAIN = 4, FAN = 8, ROWS = FAN, COLS = 16 };

static int32_t submit(int32_t k, const pto_orch_task_arg *a, int32_t n) {
  return g_api->submit(g_api->ctx, k, PTO_CORE_AIV, a, n);
}

/* x: [ROWS, COLS] inout, y: [ROWS, COLS] out.
 *   task 0                      gate: x = 1
 *   tasks 1..CHAIN              a chain: x += 1, each after the one before (RAW + WAW)
 *   tasks CHAIN+1..CHAIN+FAN    a fan-out: row r of y = sum(x), each after the chain's end
 *   task CHAIN+FAN+1            a join: x += 1 after every row of y was written... and read x:
 *                               it writes x, so it waits for every reader of x (WAR) */
static void graph_entry(const pto_orch_args *a) {
  const pto_orch_tensor *x = &a->tensors[0], *y = &a->tensors[1];
  pto_orch_task_arg g[1] = {ta_out(x)};
  submit(K_GATE, g, 1);
  for (int i = 0; i < CHAIN; i++) {
    pto_orch_task_arg c[2] = {ta_inout(x), ta_scalar(f32_slot(1))};
    submit(K_ADDC, c, 2);
  }
  for (int64_t r = 0; r < FAN; r++) {
    int64_t off[2] = {r, 0}, shape[2] = {1, COLS};
    pto_orch_tensor row = tview(y, off, shape);
    pto_orch_task_arg f[2] = {ta_in(x), ta_out(&row)};
    submit(K_SUM, f, 2);
  }
  pto_orch_task_arg j[2] = {ta_inout(x), ta_scalar(f32_slot(1))};
  submit(K_ADDC, j, 2);
  atomic_store(&g_gate, 1);
}

/* x: inout: gate, then a failing task, then two tasks that never run. */
static void failing_entry(const pto_orch_args *a) {
  const pto_orch_tensor *x = &a->tensors[0];
  pto_orch_task_arg g[1] = {ta_out(x)};
  submit(K_GATE, g, 1);
  pto_orch_task_arg f[1] = {ta_inout(x)};
  submit(K_FAIL, f, 1);
  for (int i = 0; i < 2; i++) {
    pto_orch_task_arg c[2] = {ta_inout(x), ta_scalar(f32_slot(1))};
    submit(K_ADDC, c, 2);
  }
  atomic_store(&g_gate, 1);
}

/* x = flags of a task writing x; y = flags of a task reading x and writing y. */
static void flags_entry(const pto_orch_args *a) {
  const pto_orch_tensor *x = &a->tensors[0], *y = &a->tensors[1];
  pto_orch_task_arg f[1] = {ta_out(x)};
  submit(K_FLAGS, f, 1);
  pto_orch_task_arg g[2] = {ta_out(y), ta_in(x)};
  submit(K_FLAGS, g, 2);
}

static pto_program *make_program(pto_orch_entry_fn entry, int with_y) {
  tsig s;
  tsig_init(&s, "graph");
  tsig_tensor(&s, "x", PTO_DIR_INOUT, PTO_DTYPE_F32, "8,16");
  if (with_y) tsig_tensor(&s, "y", PTO_DIR_OUT, PTO_DTYPE_F32, "8,16");
  pto_program *p = tprogram(&s, bind_api, entry, NK, g_kernels, g_names);
  tsig_free(&s);
  return p;
}

static float g_x[ROWS][COLS], g_y[ROWS][COLS];

static pto_status run_graph(pto_worker *w, pto_program *p, int nargs) {
  int64_t shape[2] = {ROWS, COLS};
  pto_host_tensor hx, hy;
  pto_host_tensor_init(&hx, g_x, PTO_DTYPE_F32, 2, shape);
  pto_host_tensor_init(&hy, g_y, PTO_DTYPE_F32, 2, shape);
  pto_arg args[2] = {pto_arg_host(&hx), pto_arg_host(&hy)};
  memset(g_x, 0, sizeof g_x);
  memset(g_y, 0, sizeof g_y);
  atomic_store(&g_gate, 0);
  return pto_worker_run(w, p, args, (size_t)nargs);
}

static const pto_task_record *find_task(const pto_task_record *t, size_t n, uint64_t id) {
  for (size_t i = 0; i < n; i++)
    if (t[i].task_id == id) return &t[i];
  return NULL;
}

/* The properties every recorded launch has: ids are indices, ready <= start <= end, each task
 * starts after each dependency ends, dependencies are earlier tasks in ascending order, and the
 * tasks of one core never overlap. */
static void check_ordering(const pto_task_record *t, size_t n, int ncores) {
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(t[i].task_id, i);
    if (t[i].core < 0) continue;
    assert_true(t[i].core < ncores);
    assert_true(t[i].ready_ns > 0);
    assert_true(t[i].ready_ns <= t[i].start_ns);
    assert_true(t[i].start_ns <= t[i].end_ns);
    for (int d = 0; d < t[i].ndeps; d++) {
      assert_true(t[i].deps[d] < t[i].task_id);
      if (d) assert_true(t[i].deps[d - 1] < t[i].deps[d]);
      const pto_task_record *p = find_task(t, n, t[i].deps[d]);
      assert_non_null(p);
      assert_true(p->core >= 0);
      assert_true(p->end_ns <= t[i].start_ns);
    }
    for (size_t j = 0; j < n; j++) {
      if (j == i || t[j].core != t[i].core) continue;
      int disjoint = t[i].end_ns <= t[j].start_ns || t[j].end_ns <= t[i].start_ns;
      if (!disjoint)
        print_error("tasks %zu [%llu, %llu) and %zu [%llu, %llu) overlap on core %d\n", i,
                    (unsigned long long)t[i].start_ns, (unsigned long long)t[i].end_ns, j,
                    (unsigned long long)t[j].start_ns, (unsigned long long)t[j].end_ns, t[i].core);
      assert_true(disjoint);
    }
  }
}

static void expect_deps(const pto_task_record *t, const uint64_t *want, int n) {
  if (t->ndeps != n)
    print_error("task %llu has %d deps, expected %d\n", (unsigned long long)t->task_id, t->ndeps,
                n);
  assert_int_equal(t->ndeps, n);
  for (int i = 0; i < n; i++)
    assert_int_equal(t->deps[i], want[i]);
}

/* PTO_CORE_STREAM_STORES: set for a task whose tensors' buffers hold together at least
 * pto_run_config.stream_store_bytes (x and y here: 512 bytes each; the first task touches x,
 * the second x and y), else 0. */
static void test_stream_stores_flag_follows_the_buffers(void **state) {
  (void)state;
  pto_program *p = make_program(flags_entry, 1);
  static const uint64_t limits[] = {0, 1, 512, 1024, 1025, UINT64_MAX};
  static const int want_x[] = {0, PTO_CORE_STREAM_STORES, PTO_CORE_STREAM_STORES, 0, 0, 0};
  static const int want_y[] = {
      0, PTO_CORE_STREAM_STORES, PTO_CORE_STREAM_STORES, PTO_CORE_STREAM_STORES, 0, 0};
  for (int k = 0; k < 6; k++) {
    pto_run_config cfg;
    pto_run_config_init(&cfg);
    cfg.ncores = 2;
    cfg.device_memory_bytes = 64ull << 20;
    cfg.stream_store_bytes = limits[k]; /* 0: the default, 32 MiB */
    pto_worker *w;
    assert_pto_ok(pto_worker_open(&cfg, &w));
    assert_pto_ok(run_graph(w, p, 2));
    for (int r = 0; r < ROWS; r++)
      for (int c = 0; c < COLS; c++) {
        assert_true(g_x[r][c] == (float)want_x[k]);
        assert_true(g_y[r][c] == (float)want_y[k]);
      }
    pto_worker_close(w);
  }
  pto_program_release(p);
}

static void test_tasks_are_recorded_only_when_asked(void **state) {
  (void)state;
  pto_program *p = make_program(graph_entry, 1);
  pto_worker *w = topen(2, 0, 0);
  const pto_task_record *t = NULL;
  size_t n = 99;
  assert_status_contains(pto_worker_last_launch_tasks(w, &t, &n), "no launch has run");
  assert_pto_ok(run_graph(w, p, 2));
  assert_status_contains(pto_worker_last_launch_tasks(w, &t, &n),
                         "the last launch did not record its tasks");
  assert_null(t);
  assert_int_equal(n, 0);
  /* on from the next launch */
  assert_pto_ok(pto_worker_set_record_tasks(w, true));
  assert_pto_ok(run_graph(w, p, 2));
  assert_pto_ok(pto_worker_last_launch_tasks(w, &t, &n));
  assert_int_equal(n, 1 + CHAIN + FAN + 1);
  /* off again: the records of an earlier launch are never handed out as the last one's */
  assert_pto_ok(pto_worker_set_record_tasks(w, false));
  assert_pto_ok(run_graph(w, p, 2));
  assert_status_contains(pto_worker_last_launch_tasks(w, &t, &n), "did not record");
  pto_worker_close(w);
  assert_status_contains(pto_worker_last_launch_tasks(w, &t, &n), "closed");
  assert_status_contains(pto_worker_set_record_tasks(w, true), "closed");
  pto_program_release(p);
}

static void test_a_chain_and_a_fan_out_are_recorded_exactly(void **state) {
  (void)state;
  pto_program *p = make_program(graph_entry, 1);
  for (int seed = 0; seed <= 6; seed++) {
    pto_run_config cfg;
    pto_run_config_init(&cfg);
    cfg.ncores = seed ? 3 : 1;
    cfg.shuffle = seed != 0;
    cfg.shuffle_seed = (uint64_t)seed;
    cfg.device_memory_bytes = 64ull << 20;
    cfg.record_tasks = true;
    pto_worker *w;
    assert_pto_ok(pto_worker_open(&cfg, &w));
    assert_pto_ok(run_graph(w, p, 2));
    /* the launch computed what it always does: x = 1 + CHAIN + 1, y = (1 + CHAIN) per element */
    for (int r = 0; r < ROWS; r++)
      for (int c = 0; c < COLS; c++) {
        assert_true(g_x[r][c] == 1.0f + CHAIN + 1.0f);
        assert_true(g_y[r][c] == (1.0f + CHAIN) * ROWS * COLS);
      }
    const pto_task_record *t;
    size_t n;
    assert_pto_ok(pto_worker_last_launch_tasks(w, &t, &n));
    assert_int_equal(n, 1 + CHAIN + FAN + 1);
    check_ordering(t, n, cfg.ncores);
    for (size_t i = 0; i < n; i++)
      assert_true(t[i].core >= 0);
    /* the gate: no dependency, ready when submitted */
    assert_string_equal(t[0].kernel, "gate");
    assert_int_equal(t[0].kernel_id, K_GATE);
    expect_deps(&t[0], NULL, 0);
    /* the chain: each task after the one before (a dense write covers the older accesses) */
    for (int i = 1; i <= CHAIN; i++) {
      assert_string_equal(t[i].kernel, "addc");
      uint64_t d = (uint64_t)i - 1;
      expect_deps(&t[i], &d, 1);
    }
    /* the fan-out: every row after the chain's last task, and only that one */
    for (int i = CHAIN + 1; i <= CHAIN + FAN; i++) {
      assert_string_equal(t[i].kernel, "sum");
      uint64_t d = CHAIN;
      expect_deps(&t[i], &d, 1);
    }
    /* the join writes x: after the last writer and every reader of x */
    uint64_t join[1 + FAN];
    join[0] = CHAIN;
    for (int i = 0; i < FAN; i++)
      join[1 + i] = (uint64_t)(CHAIN + 1 + i);
    expect_deps(&t[n - 1], join, 1 + FAN);
    /* a task with dependencies became ready when the last of them ended */
    for (size_t i = 1; i < n; i++) {
      uint64_t last = 0;
      for (int d = 0; d < t[i].ndeps; d++)
        if (t[t[i].deps[d]].end_ns > last) last = t[t[i].deps[d]].end_ns;
      assert_true(t[i].ready_ns == last);
    }
    /* the spans and the tasks share a clock: every task runs inside device_wall.sched */
    pto_launch_record rec;
    assert_pto_ok(pto_worker_last_launch(w, &rec));
    assert_int_equal(rec.ntasks, n);
    const pto_span *sched = &rec.spans[5];
    assert_string_equal(sched->name, "chip.run.runner_run.device_wall.sched");
    for (size_t i = 0; i < n; i++) {
      assert_true(t[i].start_ns >= sched->ts_ns);
      assert_true(t[i].end_ns <= sched->ts_ns + sched->dur_ns);
    }
    pto_worker_close(w);
  }
  pto_program_release(p);
}

static void test_tasks_a_failed_launch_skipped_have_no_core(void **state) {
  (void)state;
  pto_program *p = make_program(failing_entry, 0);
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.ncores = 2;
  cfg.record_tasks = true;
  pto_worker *w;
  assert_pto_ok(pto_worker_open(&cfg, &w));
  assert_status_contains(run_graph(w, p, 1), "kernel 'fail'");
  const pto_task_record *t;
  size_t n;
  assert_pto_ok(pto_worker_last_launch_tasks(w, &t, &n));
  assert_int_equal(n, 4);
  check_ordering(t, n, 2);
  assert_true(t[0].core >= 0 && t[1].core >= 0);
  assert_string_equal(t[1].kernel, "fail");
  for (int i = 2; i < 4; i++) {
    assert_int_equal(t[i].core, -1);
    assert_true(t[i].ready_ns == 0 && t[i].start_ns == 0 && t[i].end_ns == 0);
    uint64_t d = (uint64_t)i - 1;
    expect_deps(&t[i], &d, 1);
  }
  /* the swimlane keeps the tasks that ran */
  char *dir = tu_mkdtemp("rt-tasks");
  char path[4096];
  snprintf(path, sizeof path, "%s/failed.json", dir);
  pto_launch_record rec;
  assert_pto_ok(pto_worker_last_launch(w, &rec));
  assert_pto_ok(pto_swimlane_write_launch(path, &rec, t, n));
  assert_pto_ok(pto_swimlane_validate(path, NULL));
  char *text = tu_read_file(path, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "\"fail\""));
  assert_null(strstr(text, "\"addc\""));
  free(text);
  tu_rmtree(dir);
  free(dir);
  pto_worker_close(w);
  pto_program_release(p);
}

static size_t count(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *q = strstr(hay, needle); q; q = strstr(q + 1, needle))
    n++;
  return n;
}

static void test_a_recorded_launch_makes_a_valid_swimlane(void **state) {
  (void)state;
  pto_program *p = make_program(graph_entry, 1);
  pto_worker *w = topen(3, 0, 0);
  assert_pto_ok(pto_worker_set_record_tasks(w, true));
  assert_pto_ok(run_graph(w, p, 2));
  const pto_task_record *t;
  size_t n;
  pto_launch_record rec;
  assert_pto_ok(pto_worker_last_launch_tasks(w, &t, &n));
  assert_pto_ok(pto_worker_last_launch(w, &rec));
  char *dir = tu_mkdtemp("rt-tasks");
  char path[4096];
  snprintf(path, sizeof path, "%s/lane.json", dir);
  assert_pto_ok(pto_swimlane_write_launch(path, &rec, t, n));
  size_t nev = 0;
  assert_pto_ok(pto_swimlane_validate(path, &nev));
  char *text = tu_read_file(path, NULL);
  assert_non_null(text);
  /* every task on its core's track, the launch's seven spans, one arrow (two events) per dep */
  size_t ndeps = 0;
  for (size_t i = 0; i < n; i++)
    ndeps += (size_t)t[i].ndeps;
  assert_int_equal(count(text, "\"cat\": \"task\""), n);
  assert_int_equal(count(text, "\"cat\": \"span\""), 7);
  assert_int_equal(count(text, "\"cat\": \"dep\""), 2 * ndeps);
  assert_non_null(strstr(text, "\"chip.run.runner_run.device_wall.sched\""));
  free(text);
  tu_rmtree(dir);
  free(dir);
  pto_worker_close(w);
  pto_program_release(p);
}

/* The k-th task a core ran (in time order) among the n records, or NULL. */
static const pto_task_record *kth_on_core(const pto_task_record *t, size_t n, int core,
                                          uint32_t k) {
  const pto_task_record *prev = NULL;
  for (uint32_t i = 1; i <= k; i++) {
    const pto_task_record *next = NULL;
    for (size_t j = 0; j < n; j++)
      if (t[j].core == core && (!prev || t[j].start_ns > prev->start_ns) &&
          (!next || t[j].start_ns < next->start_ns))
        next = &t[j];
    if (!next) return NULL;
    prev = next;
  }
  return prev;
}

/* pto_worker_set_record_phases: off until asked; on, every core's phases in time order, one
 * completion per task right after it on its core, each take before the task it took; the
 * level-3 records carry them per core. */
static void test_scheduling_phases_follow_the_tasks(void **state) {
  (void)state;
  pto_program *p = make_program(graph_entry, 1);
  for (int seed = 0; seed <= 3; seed++) {
    pto_worker *w = topen(seed ? 3 : 1, seed != 0, (uint64_t)seed);
    const pto_sched_phase *ph = NULL;
    size_t nph = 99;
    assert_status_contains(pto_worker_last_launch_phases(w, &ph, &nph), "no launch has run");
    assert_pto_ok(pto_worker_set_record_tasks(w, true));
    assert_pto_ok(run_graph(w, p, 2));
    assert_status_contains(pto_worker_last_launch_phases(w, &ph, &nph),
                           "did not record its scheduling phases");
    assert_null(ph);
    assert_pto_ok(pto_worker_set_record_phases(w, true));
    assert_pto_ok(run_graph(w, p, 2));
    const pto_task_record *t;
    size_t n;
    assert_pto_ok(pto_worker_last_launch_tasks(w, &t, &n));
    assert_pto_ok(pto_worker_last_launch_phases(w, &ph, &nph));
    int ncores = pto_worker_core_count(w);
    size_t ncomplete = 0;
    for (size_t i = 0; i < nph; i++) {
      const pto_sched_phase *x = &ph[i];
      assert_true(x->core >= 0 && x->core < ncores);
      assert_true(x->start_ns <= x->end_ns);
      assert_int_equal(x->tasks, 1);
      assert_true(x->loop_iter >= 1);
      if (i && ph[i - 1].core == x->core) { /* a core's own, in order, never overlapping */
        assert_true(ph[i - 1].end_ns <= x->start_ns);
        assert_true(ph[i - 1].loop_iter <= x->loop_iter);
      } else {
        assert_true(!i || ph[i - 1].core < x->core); /* core by core */
      }
      const pto_task_record *k = kth_on_core(t, n, x->core, x->loop_iter);
      assert_non_null(k);
      if (x->kind == PTO_SCHED_PHASE_DISPATCH) {
        assert_true(x->end_ns <= k->start_ns);
      } else {
        assert_int_equal(x->kind, PTO_SCHED_PHASE_COMPLETE);
        assert_true(x->start_ns >= k->end_ns);
        const pto_task_record *after = kth_on_core(t, n, x->core, x->loop_iter + 1);
        if (after) assert_true(x->end_ns <= after->start_ns);
        ncomplete++;
      }
    }
    assert_int_equal(ncomplete, n); /* every task completed once, by the core that ran it */

    char *dir = tu_mkdtemp("rt-phases");
    char path[4096];
    snprintf(path, sizeof path, "%s/chip_swimlane_records.json", dir);
    int types[64];
    assert_true(ncores <= 64);
    for (int c = 0; c < ncores; c++)
      types[c] = pto_worker_core_type(w, c);
    assert_pto_ok(
        pto_swimlane_write_records_level(path, NULL, NULL, t, n, types, ncores, 3, ph, nph));
    char *text = tu_read_file(path, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"chip_swimlane_level\": 3"));
    assert_non_null(strstr(text, "\"aicpu_scheduler_phases\""));
    assert_non_null(strstr(text, "\"core_to_thread\""));
    assert_int_equal(count(text, "\"kind\": \"complete\""), n);
    free(text);
    assert_status_contains(
        pto_swimlane_write_records_level(path, NULL, NULL, t, n, types, ncores, 3, NULL, 0),
        "level 3 needs the launch's scheduling phases");
    assert_status_contains(
        pto_swimlane_write_records_level(path, NULL, NULL, t, n, types, ncores, 4, ph, nph),
        "level 4: pto writes levels 1");
    pto_sched_phase bad = ph[0];
    bad.core = ncores;
    char want[64];
    snprintf(want, sizeof want, "phase 0: core %d of %d", ncores, ncores);
    assert_status_contains(
        pto_swimlane_write_records_level(path, NULL, NULL, t, n, types, ncores, 3, &bad, 1), want);
    /* level 2 is the file as before: no phases */
    assert_pto_ok(
        pto_swimlane_write_records_level(path, NULL, NULL, t, n, types, ncores, 2, NULL, 0));
    text = tu_read_file(path, NULL);
    assert_null(strstr(text, "aicpu_scheduler_phases"));
    free(text);
    tu_rmtree(dir);
    free(dir);

    /* off again: an earlier launch's phases are never handed out as the last one's */
    assert_pto_ok(pto_worker_set_record_phases(w, false));
    assert_pto_ok(run_graph(w, p, 2));
    assert_status_contains(pto_worker_last_launch_phases(w, &ph, &nph), "did not record");
    pto_worker_close(w);
    assert_status_contains(pto_worker_set_record_phases(w, true), "closed");
  }
  pto_program_release(p);
}

/* A phase that finds no memory costs the launch its phases, not its result: for each n, a warm
 * worker's n-th allocation in a recorded launch fails; the launch gives its result or
 * OUT_OF_MEMORY, and its phases are complete or refused as out of memory, never partial. */
static void test_phases_without_memory_are_refused_whole(void **state) {
  (void)state;
  pto_program *p = make_program(graph_entry, 1);
  int refused = 0;
  for (long n = 0;; n++) {
    pto_worker *w = topen(1, 0, 0);
    assert_pto_ok(run_graph(w, p, 2)); /* warm: the launch's own structures are grown */
    assert_pto_ok(pto_worker_set_record_phases(w, true));
    pto_alloc_fail_at(n, 0);
    pto_status s = run_graph(w, p, 2);
    long failed = pto_alloc_failures();
    pto_alloc_fail_at(-1, 0);
    if (s) {
      assert_int_equal(pto_status_code_of(s), PTO_STATUS_OUT_OF_MEMORY);
      pto_status_free(s);
    } else {
      assert_true(g_x[0][0] == 1.0f + CHAIN + 1.0f);
      const pto_sched_phase *ph;
      size_t nph;
      s = pto_worker_last_launch_phases(w, &ph, &nph);
      if (s) {
        assert_int_equal(pto_status_code_of(s), PTO_STATUS_OUT_OF_MEMORY);
        assert_non_null(strstr(pto_status_message(s), "out of memory recording the scheduling"));
        pto_status_free(s);
        refused++;
      } else {
        size_t ncomplete = 0;
        for (size_t i = 0; i < nph; i++)
          ncomplete += ph[i].kind == PTO_SCHED_PHASE_COMPLETE;
        assert_int_equal(ncomplete, 1 + CHAIN + FAN + 1);
      }
    }
    pto_worker_close(w);
    if (!failed) break; /* past the launch's last allocation */
  }
  print_message("phases refused as out of memory %d times in a sweep of the launch's "
                "allocations\n",
                refused);
  assert_true(refused > 0); /* the phase log's first allocation is one of the launch's */
  pto_program_release(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stream_stores_flag_follows_the_buffers),
      cmocka_unit_test(test_tasks_are_recorded_only_when_asked),
      cmocka_unit_test(test_a_chain_and_a_fan_out_are_recorded_exactly),
      cmocka_unit_test(test_tasks_a_failed_launch_skipped_have_no_core),
      cmocka_unit_test(test_a_recorded_launch_makes_a_valid_swimlane),
      cmocka_unit_test(test_scheduling_phases_follow_the_tasks),
      cmocka_unit_test(test_phases_without_memory_are_refused_whole),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
