/* Swimlanes: the Chrome trace-event writer and the checker that validates its files (every event
 * has ph, ts, dur, pid, tid, name; tasks never overlap on one core). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pto/bench.h"
#include "testutil.h"

static char *g_dir;

static int setup(void **state) {
  (void)state;
  g_dir = tu_mkdtemp("swimlane");
  return g_dir ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  tu_rmtree(g_dir);
  free(g_dir);
  return 0;
}

static const char *path_of(const char *name) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", g_dir, name);
  return buf;
}

static size_t count(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
    n++;
  return n;
}

/* A launch's seven spans (as the runtime records them) around six tasks on three cores. */
static const pto_span k_spans[7] = {
    {"chip.run", 0, 1000000, 90000, false},
    {"chip.run.bind", 1, 1000000, 5000, false},
    {"chip.run.runner_run", 1, 1005000, 80000, false},
    {"chip.run.runner_run.device_wall", 2, 1006000, 70000, true},
    {"chip.run.runner_run.device_wall.orch", 3, 1006000, 20000, true},
    {"chip.run.runner_run.device_wall.sched", 3, 1010000, 66000, true},
    {"chip.run.copy_back", 1, 1085000, 5000, false},
};

static const uint64_t k_dep0[1] = {0}, k_dep01[2] = {0, 1}, k_dep3[1] = {3};

static const pto_swimlane_task k_tasks[6] = {
    {0, "scale", 0, NULL, 0, 1008000, 1010000, 1020000},
    {1, "scale", 1, NULL, 0, 1008000, 1011000, 1021000},
    {2, "add_bias", 2, k_dep0, 1, 1020000, 1022000, 1030000},
    {0, "add_bias", 3, k_dep01, 2, 1021000, 1021000, 1040000}, /* starts when core 0 frees */
    {1, "act", 4, k_dep3, 1, 1040000, 1041000, 1060000},
    {0, "act", 5, k_dep3, 1, 1040000, 1040000, 1076000},
};

static void test_swimlane_file_validates(void **state) {
  (void)state;
  const char *path = path_of("launch.json");
  assert_pto_ok(pto_swimlane_write(path, k_spans, 7, k_tasks, 6));
  size_t n = 0;
  assert_pto_ok(pto_swimlane_validate(path, &n));
  /* 4 process/thread names + 3 cores + 7 spans + 6 tasks + 2 flow events per dependency (5) */
  assert_int_equal(n, 4 + 3 + 7 + 6 + 10);
  char *text = tu_read_file(path, NULL);
  assert_non_null(text);
  assert_int_equal(count(text, "\"cat\": \"task\""), 6);
  assert_int_equal(count(text, "\"cat\": \"span\""), 7);
  assert_int_equal(count(text, "\"ph\": \"s\""), 5);
  assert_int_equal(count(text, "\"ph\": \"f\""), 5);
  assert_int_equal(count(text, "\"ph\": \""), n);
  assert_int_equal(count(text, "\"dur\": "), n);
  assert_non_null(strstr(text, "\"traceEvents\""));
  assert_non_null(strstr(text, "\"name\": \"core 2\""));
  /* times are microseconds from the earliest one: task 3 ran from 21 to 40 us */
  assert_non_null(strstr(text, "\"ts\": 21.0, \"dur\": 19.0"));
  assert_non_null(strstr(text, "\"deps\": [0, 1]"));
  free(text);
}

static void test_swimlane_without_tasks_or_spans(void **state) {
  (void)state;
  const char *path = path_of("empty.json");
  assert_pto_ok(pto_swimlane_write(path, NULL, 0, NULL, 0));
  size_t n = 0;
  assert_pto_ok(pto_swimlane_validate(path, &n));
  assert_int_equal(n, 4);
  assert_pto_ok(pto_swimlane_write(path, k_spans, 7, NULL, 0));
  assert_pto_ok(pto_swimlane_validate(path, &n));
  assert_int_equal(n, 11);
}

static void test_swimlane_write_rejects_bad_tasks(void **state) {
  (void)state;
  const char *path = path_of("bad.json");
  pto_swimlane_task t = k_tasks[0];
  t.end_ns = t.start_ns - 1;
  assert_status_contains(pto_swimlane_write(path, NULL, 0, &t, 1),
                         "task 0 (scale): times out of order");
  t = k_tasks[0];
  t.ready_ns = t.start_ns + 1;
  assert_status_contains(pto_swimlane_write(path, NULL, 0, &t, 1), "times out of order");
  t = k_tasks[0];
  t.core = -1;
  assert_status_contains(pto_swimlane_write(path, NULL, 0, &t, 1), "has core -1");
  t = k_tasks[0];
  t.ndeps = 2;
  assert_status_contains(pto_swimlane_write(path, NULL, 0, &t, 1), "dependencies missing");
  assert_status_contains(pto_swimlane_write(path, NULL, 3, NULL, 0), "missing for their count");
  assert_status_contains(pto_swimlane_write(path_of("no/such/dir.json"), NULL, 0, NULL, 0),
                         "cannot write the swimlane");
}

static void test_swimlane_validate_catches_overlapping_tasks(void **state) {
  (void)state;
  const char *path = path_of("overlap.json");
  pto_swimlane_task t[3] = {k_tasks[0], k_tasks[1], k_tasks[3]};
  t[2].start_ns = k_tasks[0].end_ns - 500; /* task 3 starts before task 0 ends on core 0 */
  t[2].ready_ns = t[2].start_ns;
  assert_pto_ok(pto_swimlane_write(path, NULL, 0, t, 3));
  assert_status_contains(pto_swimlane_validate(path, NULL), "tasks overlap on pid 2 tid 1");
  /* the same times on different cores, or touching on one, are fine */
  t[2].core = 2;
  assert_pto_ok(pto_swimlane_write(path, NULL, 0, t, 3));
  assert_pto_ok(pto_swimlane_validate(path, NULL));
  t[2].core = 0;
  t[2].start_ns = t[2].ready_ns = k_tasks[0].end_ns;
  assert_pto_ok(pto_swimlane_write(path, NULL, 0, t, 3));
  assert_pto_ok(pto_swimlane_validate(path, NULL));
}

static void test_swimlane_validate_requires_every_field(void **state) {
  (void)state;
  const char *path = path_of("hand.json");
  struct {
    const char *json, *want;
  } cases[] = {
      {"[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1,\"name\":\"a\"}]", NULL},
      {"{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"pid\":1,\"tid\":1,\"name\":\"a\"}]}",
       "event 0 (a): no number 'dur'"},
      {"[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1,\"name\":\"a\"},"
       "{\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1,\"name\":\"b\"}]",
       "event 1 (b): no string 'ph'"},
      {"[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":\"1\",\"tid\":1,\"name\":\"a\"}]",
       "event 0 (a): no integer 'pid'"},
      {"[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,\"name\":\"a\"}]", "no integer 'tid'"},
      {"[{\"ph\":\"X\",\"dur\":2,\"pid\":1,\"tid\":1,\"name\":\"a\"}]", "no number 'ts'"},
      {"[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}]",
       "event 0 (unnamed): no string 'name'"},
      {"[{\"ph\":\"X\",\"ts\":1,\"dur\":-2,\"pid\":1,\"tid\":1,\"name\":\"a\"}]", "negative dur"},
      {"[{\"ph\":\"X\",\"cat\":\"task\",\"ts\":1,\"dur\":5,\"pid\":1,\"tid\":1,\"name\":\"a\"},"
       "{\"ph\":\"X\",\"cat\":\"task\",\"ts\":3,\"dur\":5,\"pid\":1,\"tid\":1,\"name\":\"b\"}]",
       "event 0 (a) runs [1, 6) us and event 1 (b) starts at 3 us"},
      {"[1]", "event 0 is not an object"},
      {"{\"events\":[]}", "neither an array of events nor an object with a 'traceEvents' array"},
      {"{\"traceEvents\": [\n  {\"ph\": }", "hand.json:2:"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_int_equal(tu_write_file(path, cases[i].json), 0);
    if (!cases[i].want)
      assert_pto_ok(pto_swimlane_validate(path, NULL));
    else
      assert_status_contains(pto_swimlane_validate(path, NULL), cases[i].want);
  }
  assert_status_contains(pto_swimlane_validate(path_of("missing.json"), NULL), "missing.json");
}

/* A FIFO (no writer) is refused at once, not read until a writer comes: alarm(20) turns a
 * regression into a failure instead of a hang. */
static void test_swimlane_validate_refuses_a_fifo(void **state) {
  (void)state;
  const char *path = path_of("fifo.json");
  unlink(path);
  assert_int_equal(mkfifo(path, 0600), 0);
  alarm(20);
  pto_status s = pto_swimlane_validate(path, NULL);
  alarm(0);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_INVALID_ARGUMENT);
  assert_status_contains(s, "fifo.json is a FIFO: only regular files are read");
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_swimlane_file_validates),
      cmocka_unit_test(test_swimlane_without_tasks_or_spans),
      cmocka_unit_test(test_swimlane_write_rejects_bad_tasks),
      cmocka_unit_test(test_swimlane_validate_catches_overlapping_tasks),
      cmocka_unit_test(test_swimlane_validate_requires_every_field),
      cmocka_unit_test(test_swimlane_validate_refuses_a_fifo),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
