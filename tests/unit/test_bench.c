/* pto_benchmark on programs made from C functions: launch counts, samples, trees, options and
 * failures, and agreement with the [STRACE] log of the same launches. */
#include <fcntl.h>
#include <math.h>
#include <unistd.h>

#include "pto/bench.h"
#include "test_runtime_common.h"

static const pto_orch_api *g_api;
static void bind_api(const pto_orch_api *api) { g_api = api; }

static int32_t k_addc(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)ctx;
  float c = slot_f32(s[0]);
  for (int64_t i = 0, n = kv_numel(&t[0]); i < n; i++)
    *kv_f32p(&t[0], i) += c;
  return 0;
}

/* Fails (division by zero) on its g_fail_at-th call, counting from 1; 0: never. */
static int g_calls, g_fail_at;
static int32_t k_flaky(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  if (g_fail_at && ++g_calls == g_fail_at) return PTO_KERNEL_ERR_DIV_ZERO;
  return k_addc(t, s, ctx);
}

/* One task per row. */
static void rows_entry(const pto_orch_args *a) {
  const pto_orch_tensor *x = &a->tensors[0];
  for (int64_t r = 0; r < x->shape[0]; r++) {
    int64_t off[2] = {r, 0}, shape[2] = {1, x->shape[1]};
    pto_orch_tensor row = tview(x, off, shape);
    pto_orch_task_arg t[2] = {ta_inout(&row), ta_scalar(f32_slot(1))};
    g_api->submit(g_api->ctx, 0, PTO_CORE_AIV, t, 2);
  }
}

static pto_program *rows_program(pto_kernel_fn fn, const char *shape) {
  tsig s;
  tsig_init(&s, "rows");
  tsig_tensor(&s, "x", PTO_DIR_INOUT, PTO_DTYPE_F32, shape);
  pto_kernel_fn k[1] = {fn};
  const char *names[1] = {"addc"};
  pto_program *p = tprogram(&s, bind_api, rows_entry, 1, k, names);
  tsig_free(&s);
  return p;
}

static float g_x[8][256];

static pto_arg rows_arg(int nrows) {
  int64_t shape[2] = {nrows, 256};
  pto_host_tensor hx;
  pto_host_tensor_init(&hx, g_x, PTO_DTYPE_F32, 2, shape);
  return pto_arg_host(&hx);
}

typedef struct progress_log {
  int calls, last_done, total;
  int monotonic;
} progress_log;

static void on_progress(void *ctx, int done, int total) {
  progress_log *p = ctx;
  if (done != p->last_done + 1) p->monotonic = 0;
  p->calls++;
  p->last_done = done;
  p->total = total;
}

static const char *const k_tree_labels[7] = {"chip.run",
                                             "|- bind",
                                             "|- runner_run",
                                             "|  `- device_wall [dev]",
                                             "|     |- orch [dev]",
                                             "|     `- sched [dev]",
                                             "`- copy_back"};

static void test_bench_runs_warmup_then_rounds_on_one_registration(void **state) {
  (void)state;
  memset(g_x, 0, sizeof g_x);
  pto_worker *w = topen(2, 0, 0);
  pto_program *p = rows_program(k_addc, "8,256");
  pto_handle *mine = NULL;
  assert_pto_ok(pto_worker_register(w, p, &mine));
  pto_arg arg = rows_arg(8);
  pto_bench_options opt;
  pto_bench_options_init(&opt);
  assert_int_equal(opt.rounds, 100);
  assert_int_equal(opt.warmup, 3);
  opt.rounds = 20;
  opt.warmup = 4;
  progress_log pl = {0, 0, 0, 1};
  opt.progress = on_progress;
  opt.progress_ctx = &pl;
  pto_bench_stats *st = NULL;
  assert_pto_ok(pto_benchmark(w, p, &arg, 1, &opt, &st));
  assert_int_equal(st->nlaunches, 20);
  assert_int_equal(st->rounds, 20);
  assert_int_equal(st->warmup, 4);
  assert_int_equal(st->ntasks, 8);
  assert_int_equal(st->ncores, 3); /* topen(2): two vector cores and a cube core */
  assert_int_equal(st->hid, 0);
  assert_true(pl.calls == 24 && pl.total == 24 && pl.monotonic);
  /* every launch ran: 24 launches added 1 to every element */
  assert_true(g_x[0][0] == 24.0f && g_x[7][255] == 24.0f);
  /* consecutive launches of one callable: the measured ones are the last 20 */
  pto_launch_record last;
  assert_pto_ok(pto_worker_last_launch(w, &last));
  assert_int_equal(last.callable_id, pto_handle_callable_id(mine));
  assert_int_equal(st->launches[19].inv, last.inv);
  for (int i = 1; i < 20; i++)
    assert_int_equal(st->launches[i].inv, st->launches[i - 1].inv + 1);
  for (int m = 0; m < PTO_BENCH_METRIC_COUNT; m++) {
    const pto_bench_summary *sm = &st->summary[m];
    assert_int_equal(sm->count, 20);
    for (int i = 0; i < 20; i++)
      assert_true(st->samples[m][i] > 0);
    assert_true(sm->min > 0 && sm->min <= sm->median && sm->median <= sm->max);
    assert_true(sm->min <= sm->mean && sm->mean <= sm->max && sm->stdev >= 0);
  }
  /* the device wall lies inside the launch; the effective time inside the device wall */
  for (int i = 0; i < 20; i++) {
    assert_true(st->samples[PTO_BENCH_DEVICE_WALL][i] <= st->samples[PTO_BENCH_HOST_WALL][i]);
    assert_true(st->samples[PTO_BENCH_EFFECTIVE][i] <= st->samples[PTO_BENCH_DEVICE_WALL][i]);
  }
  pto_bench_stats_destroy(st);
  pto_handle_unregister(mine);
  pto_program_release(p);
  pto_worker_close(w);
}

static void test_bench_mean_tree_has_the_launch_spans(void **state) {
  (void)state;
  pto_worker *w = topen(2, 0, 0);
  pto_program *p = rows_program(k_addc, "8,256");
  pto_arg arg = rows_arg(8);
  pto_bench_options opt;
  pto_bench_options_init(&opt);
  opt.rounds = 10;
  opt.warmup = 1;
  pto_bench_stats *st = NULL;
  assert_pto_ok(pto_benchmark(w, p, &arg, 1, &opt, &st));
  pto_bench_tree *t = NULL;
  assert_pto_ok(pto_bench_stats_mean_tree(st, &t));
  assert_int_equal(t->nnodes, 7);
  const int levels[7] = {0, 1, 1, 2, 3, 3, 1};
  const int parents[7] = {-1, 0, 0, 2, 3, 3, 0};
  for (int i = 0; i < 7; i++) {
    assert_int_equal(t->nodes[i].level, levels[i]);
    assert_int_equal(t->nodes[i].parent, parents[i]);
    assert_int_equal(t->nodes[i].count, 10);
    assert_true(t->nodes[i].is_device == (i >= 3 && i <= 5));
    assert_true(t->nodes[i].min_us <= t->nodes[i].mean_us);
    assert_true(t->nodes[i].mean_us <= t->nodes[i].max_us);
  }
  assert_true(t->nodes[0].mean_us == st->summary[PTO_BENCH_HOST_WALL].mean);
  assert_true(t->nodes[3].mean_us == st->summary[PTO_BENCH_DEVICE_WALL].mean);
  char *text = NULL;
  assert_pto_ok(pto_bench_tree_render(t, PTO_BENCH_SPREAD_BOTH, -1, &text));
  /* line by line: the label, then the three columns */
  char *save = NULL;
  int n = 0;
  size_t us_col = 0;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
    assert_true(n < 7);
    assert_memory_equal(line, k_tree_labels[n], strlen(k_tree_labels[n]));
    char *us = strstr(line, "us  "); /* the mean ends in "us" */
    assert_non_null(us);
    if (n == 0) us_col = (size_t)(us - line);
    assert_int_equal((size_t)(us - line), us_col); /* the means line up */
    assert_non_null(strstr(line, "\u00b1"));
    assert_non_null(strchr(line, '['));
    assert_true(line[strlen(line) - 1] == ']');
  }
  assert_int_equal(n, 7);
  free(text);
  pto_bench_tree_destroy(t);
  /* one launch's tree: the same shape */
  assert_pto_ok(pto_bench_stats_launch_tree(st, 9, &t));
  assert_int_equal(t->nnodes, 7);
  assert_int_equal(t->nodes[6].count, 1);
  assert_true(t->nodes[0].mean_us == st->samples[PTO_BENCH_HOST_WALL][9]);
  pto_bench_tree_destroy(t);
  pto_bench_stats_destroy(st);
  pto_program_release(p);
  pto_worker_close(w);
}

static void test_bench_opens_its_own_worker_with_defaults(void **state) {
  (void)state;
  pto_program *p = rows_program(k_addc, "1,256");
  pto_arg arg = rows_arg(1);
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.ncores = 1;
  cfg.device_memory_bytes = 16ull << 20;
  pto_bench_options opt;
  pto_bench_options_init(&opt);
  opt.run_config = &cfg;
  opt.rounds = 3;
  opt.warmup = 0;
  pto_bench_stats *st = NULL;
  assert_pto_ok(pto_benchmark(NULL, p, &arg, 1, &opt, &st));
  assert_int_equal(st->ncores, 2); /* a worker has a cube and a vector core at least */
  assert_int_equal(st->nlaunches, 3);
  assert_int_equal(st->warmup, 0);
  pto_bench_stats_destroy(st);
  /* NULL options: 100 rounds after 3 warmup */
  assert_pto_ok(pto_benchmark(NULL, p, &arg, 1, NULL, &st));
  assert_int_equal(st->nlaunches, 100);
  assert_int_equal(st->warmup, 3);
  pto_bench_stats_destroy(st);
  /* a struct of an older, shorter header: fields past sz take their defaults */
  memset(&opt, 0, sizeof opt);
  opt.sz = offsetof(pto_bench_options, warmup);
  opt.rounds = 2;
  assert_pto_ok(pto_benchmark(NULL, p, &arg, 1, &opt, &st));
  assert_int_equal(st->nlaunches, 2);
  assert_int_equal(st->warmup, 3);
  pto_bench_stats_destroy(st);
  pto_program_release(p);
}

static void test_bench_rejects_bad_options(void **state) {
  (void)state;
  pto_program *p = rows_program(k_addc, "1,256");
  pto_arg arg = rows_arg(1);
  pto_bench_options opt;
  pto_bench_stats *st = (pto_bench_stats *)1;
  pto_bench_options_init(&opt);
  opt.rounds = -1;
  assert_status_contains(pto_benchmark(NULL, p, &arg, 1, &opt, &st), "rounds is -1");
  assert_null(st);
  pto_bench_options_init(&opt);
  opt.warmup = -2;
  assert_status_contains(pto_benchmark(NULL, p, &arg, 1, &opt, &st), "warmup is -2");
  opt.sz = 0;
  assert_status_contains(pto_benchmark(NULL, p, &arg, 1, &opt, &st), "options.sz is 0");
  assert_status_contains(pto_benchmark(NULL, NULL, &arg, 1, NULL, &st), "program is NULL");
  assert_status_contains(pto_benchmark(NULL, p, &arg, 1, NULL, NULL), "out_stats is NULL");
  /* an argument that does not match: the first launch says so, nothing is measured */
  pto_arg bad = rows_arg(2);
  assert_status_contains(pto_benchmark(NULL, p, &bad, 1, NULL, &st), "benchmark launch 1 of 103");
  assert_null(st);
  pto_program_release(p);
}

static void test_bench_names_the_failed_launch(void **state) {
  (void)state;
  pto_program *p = rows_program(k_flaky, "1,256");
  pto_arg arg = rows_arg(1);
  pto_bench_options opt;
  pto_bench_options_init(&opt);
  opt.rounds = 5;
  opt.warmup = 2;
  pto_bench_stats *st = NULL;
  g_calls = 0;
  g_fail_at = 2;
  pto_status s = pto_benchmark(NULL, p, &arg, 1, &opt, &st);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_LAUNCH);
  assert_status_contains(s, "benchmark launch 2 of 7 (warmup)");
  g_calls = 0;
  g_fail_at = 6;
  assert_status_contains(pto_benchmark(NULL, p, &arg, 1, &opt, &st), "benchmark launch 6 of 7: ");
  assert_null(st);
  g_fail_at = 0;
  pto_program_release(p);
}

/* The same launches read back from their [STRACE] lines give the same numbers. */
static void test_bench_and_its_strace_log_agree(void **state) {
  (void)state;
  char *dir = tu_mkdtemp("bench");
  char path[4096];
  snprintf(path, sizeof path, "%s/stderr.log", dir);
  setenv("PTO_LOG_LEVEL", "timing", 1);
  pto_worker *w = topen(2, 0, 0);
  unsetenv("PTO_LOG_LEVEL");
  pto_program *p = rows_program(k_addc, "8,256");
  pto_arg arg = rows_arg(8);
  pto_bench_options opt;
  pto_bench_options_init(&opt);
  opt.rounds = 12;
  opt.warmup = 2;
  pto_bench_stats *st = NULL;
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(saved >= 0 && fd >= 0);
  dup2(fd, STDERR_FILENO);
  close(fd);
  pto_status s = pto_benchmark(w, p, &arg, 1, &opt, &st);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  assert_pto_ok(s);
  pto_trace_options to;
  pto_trace_options_init(&to);
  to.warmup = 2;
  pto_bench_stats *tr = NULL;
  assert_pto_ok(pto_trace_parse_file(path, &to, &tr));
  assert_int_equal(tr->nlaunches, 12);
  assert_int_equal(tr->trace.bucket, 14);
  assert_int_equal(tr->trace.records, 14 * 7);
  for (int m = 0; m < PTO_BENCH_METRIC_COUNT; m++) {
    assert_memory_equal(st->samples[m], tr->samples[m], 12 * sizeof(double));
    assert_memory_equal(&st->summary[m], &tr->summary[m], sizeof st->summary[m]);
  }
  /* the default warmup of a log is the benchmark's */
  pto_bench_stats_destroy(tr);
  assert_pto_ok(pto_trace_parse_file(path, NULL, &tr));
  assert_int_equal(tr->warmup, 3);
  pto_bench_stats_destroy(tr);
  to.warmup = 2;
  assert_pto_ok(pto_trace_parse_file(path, &to, &tr));
  char *a = NULL, *b = NULL;
  pto_bench_tree *ta = NULL, *tb = NULL;
  assert_pto_ok(pto_bench_stats_mean_tree(st, &ta));
  assert_pto_ok(pto_bench_stats_mean_tree(tr, &tb));
  assert_pto_ok(pto_bench_tree_render(ta, PTO_BENCH_SPREAD_BOTH, -1, &a));
  assert_pto_ok(pto_bench_tree_render(tb, PTO_BENCH_SPREAD_BOTH, -1, &b));
  assert_string_equal(a, b);
  free(a);
  free(b);
  pto_bench_tree_destroy(ta);
  pto_bench_tree_destroy(tb);
  pto_bench_stats_destroy(tr);
  pto_bench_stats_destroy(st);
  pto_program_release(p);
  pto_worker_close(w);
  tu_rmtree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bench_runs_warmup_then_rounds_on_one_registration),
      cmocka_unit_test(test_bench_mean_tree_has_the_launch_spans),
      cmocka_unit_test(test_bench_opens_its_own_worker_with_defaults),
      cmocka_unit_test(test_bench_rejects_bad_options),
      cmocka_unit_test(test_bench_names_the_failed_launch),
      cmocka_unit_test(test_bench_and_its_strace_log_agree),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
