/* Runtime: span records of every launch and their [STRACE] export. */
#include <fcntl.h>
#include <regex.h>
#include <unistd.h>

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

/* Eight independent tasks, one per row. */
static void rows_entry(const pto_orch_args *a) {
  const pto_orch_tensor *x = &a->tensors[0];
  for (int64_t r = 0; r < x->shape[0]; r++) {
    int64_t off[2] = {r, 0}, shape[2] = {1, x->shape[1]};
    pto_orch_tensor row = tview(x, off, shape);
    pto_orch_task_arg t[2] = {ta_inout(&row), ta_scalar(f32_slot(1))};
    g_api->submit(g_api->ctx, 0, PTO_CORE_AIV, t, 2);
  }
}

static pto_program *rows_program(void) {
  tsig s;
  tsig_init(&s, "rows");
  tsig_tensor(&s, "x", PTO_DIR_INOUT, PTO_DTYPE_F32, "8,256");
  pto_kernel_fn k[1] = {k_addc};
  const char *names[1] = {"addc"};
  pto_program *p = tprogram(&s, bind_api, rows_entry, 1, k, names);
  tsig_free(&s);
  return p;
}

static float g_x[8][256];

static void run_rows(pto_worker *w, pto_handle *h) {
  int64_t shape[2] = {8, 256};
  pto_host_tensor hx;
  pto_host_tensor_init(&hx, g_x, PTO_DTYPE_F32, 2, shape);
  pto_arg arg = pto_arg_host(&hx);
  assert_pto_ok(pto_handle_call(h, &arg, 1));
  (void)w;
}

static const char *const k_names[7] = {
    "chip.run",
    "chip.run.bind",
    "chip.run.runner_run",
    "chip.run.runner_run.device_wall",
    "chip.run.runner_run.device_wall.orch",
    "chip.run.runner_run.device_wall.sched",
    "chip.run.copy_back",
};
static const int k_depths[7] = {0, 1, 1, 2, 3, 3, 1};

static void test_every_launch_records_nested_spans(void **state) {
  (void)state;
  pto_worker *w = topen(2, 0, 0);
  pto_launch_record r;
  assert_status_contains(pto_worker_last_launch(w, &r), "no launch has run on this worker");
  pto_program *p = rows_program();
  pto_handle *h;
  assert_pto_ok(pto_worker_register(w, p, &h));
  run_rows(w, h);
  pto_launch_record r1, r2;
  assert_pto_ok(pto_worker_last_launch(w, &r1));
  run_rows(w, h);
  assert_pto_ok(pto_worker_last_launch(w, &r2));
  assert_true(r2.inv == r1.inv + 1);
  assert_true(r1.ok && r1.ntasks == 8 && r1.hid == 0);
  assert_true(r1.callable_id == pto_handle_callable_id(h));
  assert_int_equal(r1.nspans, 7);
  for (int i = 0; i < 7; i++) {
    const pto_span *s = &r1.spans[i];
    assert_string_equal(s->name, k_names[i]);
    assert_int_equal(s->depth, k_depths[i]);
    assert_true(s->is_device == (i >= 3 && i <= 5));
    assert_true(s->ts_ns > 0);
    /* contained in its parent: the nearest earlier span one level up */
    for (int j = i - 1; j >= 0; j--) {
      if (r1.spans[j].depth != s->depth - 1) continue;
      assert_true(s->ts_ns >= r1.spans[j].ts_ns);
      assert_true(s->ts_ns + s->dur_ns <= r1.spans[j].ts_ns + r1.spans[j].dur_ns);
      break;
    }
  }
  /* tasks ran, so the scheduler span is not empty; device_wall covers it */
  assert_true(r1.spans[5].dur_ns > 0);
  assert_true(r1.spans[3].dur_ns >= r1.spans[5].dur_ns);
  for (int r = 0; r < 8; r++)
    assert_true(g_x[r][255] == 2.0f);
  pto_program_release(p);
  pto_worker_close(w);
}

/* Runs two launches with PTO_LOG_LEVEL as given and returns what went to stderr (malloc'd). */
static char *capture_launches(const char *level) {
  if (level)
    setenv("PTO_LOG_LEVEL", level, 1);
  else
    unsetenv("PTO_LOG_LEVEL");
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  dup2(fds[1], STDERR_FILENO);
  close(fds[1]);
  pto_worker *w = topen(2, 0, 0);
  pto_program *p = rows_program();
  pto_handle *h;
  pto_status s = pto_worker_register(w, p, &h);
  if (!s) {
    run_rows(w, h);
    run_rows(w, h);
  }
  pto_program_release(p);
  pto_worker_close(w);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  unsetenv("PTO_LOG_LEVEL");
  assert_pto_ok(s);
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  ssize_t n;
  while ((n = read(fds[0], buf + len, cap - len - 1)) > 0)
    len += (size_t)n;
  close(fds[0]);
  buf[len] = 0;
  return buf;
}

static void test_strace_lines_follow_the_pypto_format(void **state) {
  (void)state;
  char *out = capture_launches("timing");
  regex_t re;
  assert_int_equal(
      regcomp(&re,
              "^\\[STRACE\\] v=1 pid=([0-9]+) tid=([0-9]+) inv=([0-9]+) hid=([0-9a-f]+) "
              "depth=([0-9]+) name=([a-z_.]+) ts=([0-9]+) dur=([0-9]+)( clk=dev)?"
              "( tasks=([0-9]+) cores=([0-9]+))?$",
              REG_EXTENDED),
      0);
  int nlines = 0;
  long first_inv = -1;
  char *save = NULL;
  for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    regmatch_t m[13];
    if (regexec(&re, line, 13, m, 0) != 0) {
      print_error("not a STRACE line: '%s'\n", line);
      fail();
    }
    int i = nlines % 7;
    assert_int_equal(strtol(line + m[1].rm_so, NULL, 10), (long)getpid());
    long inv = strtol(line + m[3].rm_so, NULL, 10);
    if (first_inv < 0) first_inv = inv;
    assert_int_equal(inv, first_inv + nlines / 7);
    assert_int_equal(strtol(line + m[4].rm_so, NULL, 16), 0); /* hid of a program from functions */
    assert_int_equal(strtol(line + m[5].rm_so, NULL, 10), k_depths[i]);
    assert_int_equal((int)(m[6].rm_eo - m[6].rm_so), (int)strlen(k_names[i]));
    assert_memory_equal(line + m[6].rm_so, k_names[i], strlen(k_names[i]));
    assert_true((m[9].rm_so >= 0) == (i >= 3 && i <= 5));
    /* the root span's line carries the launch's tasks and the worker's cores (pto trace) */
    assert_true((m[10].rm_so >= 0) == (i == 0));
    if (i == 0) {
      assert_int_equal(strtol(line + m[11].rm_so, NULL, 10), 8);
      assert_int_equal(strtol(line + m[12].rm_so, NULL, 10), 3); /* topen(2): 2 AIV + 1 AIC */
    }
    nlines++;
  }
  assert_int_equal(nlines, 14);
  regfree(&re);
  free(out);

  /* Below timing (unset, warn, error, null) the runtime writes nothing; the levels after it
   * (info, debug) include it, as the reference's levels do, in any case. */
  static const char *const k_quiet[] = {NULL, "", "warn", "WARNING", "error", "null"};
  for (size_t i = 0; i < sizeof k_quiet / sizeof k_quiet[0]; i++) {
    out = capture_launches(k_quiet[i]);
    assert_string_equal(out, "");
    free(out);
  }
  static const char *const k_loud[] = {"TIMING", "info", "Debug"};
  for (size_t i = 0; i < sizeof k_loud / sizeof k_loud[0]; i++) {
    out = capture_launches(k_loud[i]);
    assert_non_null(strstr(out, "[STRACE] v=1 "));
    free(out);
  }
}

/* A PTO_LOG_LEVEL that names no level fails the worker's open, naming the variable and the
 * levels, rather than being ignored (a misspelt "timnig" wrote nothing and said nothing). */
static void test_unknown_log_level_is_refused(void **state) {
  (void)state;
  setenv("PTO_LOG_LEVEL", "timnig", 1);
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  pto_worker *w = NULL;
  pto_status s = pto_worker_open(&cfg, &w);
  unsetenv("PTO_LOG_LEVEL");
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(pto_status_message(s), "PTO_LOG_LEVEL is 'timnig': expected one of: "
                                                "null, error, warn, timing, info, debug"));
  assert_null(w);
  pto_status_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_launch_records_nested_spans),
      cmocka_unit_test(test_strace_lines_follow_the_pypto_format),
      cmocka_unit_test(test_unknown_log_level_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
