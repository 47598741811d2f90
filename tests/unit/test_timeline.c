/* The terminal timeline (golden text at a fixed width), its critical path, the SVG picture and
 * the [STASK] lines a log carries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/bench.h"
#include "testutil.h"

static const uint64_t k_dep0[1] = {0}, k_dep01[2] = {0, 1}, k_dep3[1] = {3};

/* Six tasks on three cores over 66 us: 0 and 1 independent, 3 after both, 4 and 5 after 3. */
static const pto_swimlane_task k_tasks[6] = {
    {0, "scale", 0, NULL, 0, 1008000, 1010000, 1020000},
    {1, "scale", 1, NULL, 0, 1008000, 1011000, 1021000},
    {2, "add_bias", 2, k_dep0, 1, 1020000, 1022000, 1030000},
    {0, "add_bias", 3, k_dep01, 2, 1021000, 1021000, 1040000},
    {1, "act", 4, k_dep3, 1, 1040000, 1041000, 1060000},
    {0, "act", 5, k_dep3, 1, 1040000, 1040000, 1076000},
};

static const char k_golden_60[] =
    "timeline: 6 tasks on 3 cores, 66.0 us from the first start to the last end, 51.5% busy\n"
    "core 0 │▓▓▓▓▓▓▓█████████████████████████████████████│  98.5%\n"
    "core 1 │████████············▒▓▓▓▓▓▓▓▓▓▓▓▓▒··········│  43.9%\n"
    "core 2 │········▓▓▓▓▓▒······························│  12.1%\n"
    "        0 us                                 66.0 us\n"
    "█ critical path  ▓▒░ busy share of a cell  · idle\n"
    "critical path: 3 tasks, 65.0 us busy: scale#1 (core 1) -> add_bias#3 (core 0) -> act#5 (core "
    "0)\n";

static void test_timeline_golden_at_fixed_width(void **state) {
  (void)state;
  pto_timeline_options opt;
  pto_timeline_options_init(&opt);
  opt.width = 60;
  char *text = NULL;
  assert_pto_ok(pto_timeline_render(k_tasks, 6, &opt, &text));
  if (strcmp(text, k_golden_60)) fprintf(stderr, "got:\n%s", text);
  assert_string_equal(text, k_golden_60);
  /* Every core row is exactly the width in columns (UTF-8: count non-continuation bytes). */
  for (char *line = text; *line;) {
    char *nl = strchr(line, '\n');
    assert_non_null(nl);
    if (!strncmp(line, "core ", 5)) {
      int cols = 0;
      for (char *p = line; p < nl; p++)
        cols += ((unsigned char)*p & 0xc0) != 0x80;
      assert_int_equal(cols, 60);
    }
    assert_true(nl == line || nl[-1] != ' '); /* no trailing blanks */
    line = nl + 1;
  }
  free(text);
}

static void test_timeline_width_follows_option(void **state) {
  (void)state;
  pto_timeline_options opt;
  pto_timeline_options_init(&opt);
  for (int w = 30; w <= 200; w += 17) {
    opt.width = w;
    char *text = NULL;
    assert_pto_ok(pto_timeline_render(k_tasks, 6, &opt, &text));
    char *row = strstr(text, "core 1 ");
    assert_non_null(row);
    int cols = 0;
    for (char *p = row; *p != '\n'; p++)
      cols += ((unsigned char)*p & 0xc0) != 0x80;
    assert_int_equal(cols, w);
    free(text);
  }
  opt.width = 20;
  char *text = NULL;
  assert_status_contains(pto_timeline_render(k_tasks, 6, &opt, &text), "too narrow");
  assert_null(text);
}

static void test_timeline_critical_path_follows_latest_dependency(void **state) {
  (void)state;
  size_t *path = NULL, n = 0;
  assert_pto_ok(pto_timeline_critical_path(k_tasks, 6, &path, &n));
  /* 5 ends last; its dep 3; 3's deps 0 (end 1020000) and 1 (end 1021000): 1 ended last. */
  assert_int_equal(n, 3);
  assert_int_equal(path[0], 1);
  assert_int_equal(path[1], 3);
  assert_int_equal(path[2], 5);
  free(path);
  assert_pto_ok(pto_timeline_critical_path(NULL, 0, &path, &n));
  assert_int_equal(n, 0);
  assert_null(path);
}

static void test_timeline_empty_and_bad_tasks(void **state) {
  (void)state;
  char *text = NULL;
  assert_pto_ok(pto_timeline_render(NULL, 0, NULL, &text));
  assert_non_null(strstr(text, "timeline: 0 tasks on 1 core"));
  free(text);
  pto_swimlane_task bad = k_tasks[0];
  bad.end_ns = bad.start_ns - 1;
  assert_status_contains(pto_timeline_render(&bad, 1, NULL, &text), "not a task that ran");
}

static void test_timeline_svg_has_every_task_and_the_path(void **state) {
  (void)state;
  char *dir = tu_mkdtemp("timeline");
  char path[4096];
  snprintf(path, sizeof path, "%s/t.svg", dir);
  assert_pto_ok(pto_timeline_write_svg(path, k_tasks, 6, NULL));
  char *svg = tu_read_file(path, NULL);
  assert_non_null(svg);
  size_t ntask = 0, ncrit = 0;
  for (char *p = strstr(svg, "class=\"task\""); p; p = strstr(p + 1, "class=\"task\""))
    ntask++;
  for (char *p = strstr(svg, "(critical path)"); p; p = strstr(p + 1, "(critical path)"))
    ncrit++;
  assert_int_equal(ntask, 6);
  assert_int_equal(ncrit, 3);
  assert_non_null(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
  assert_non_null(strstr(svg, "</svg>"));
  free(svg);
  snprintf(path, sizeof path, "%s/no/such/dir/t.svg", dir);
  assert_status_contains(pto_timeline_write_svg(path, k_tasks, 6, NULL), "no/such/dir/t.svg");
  tu_rmtree(dir);
  free(dir);
}

static void test_trace_parse_tasks_picks_the_launch(void **state) {
  (void)state;
  static const char log[] =
      "[STRACE] v=1 pid=7 tid=7 inv=1 hid=ab depth=0 name=chip.run ts=1 dur=2\n"
      "[STASK] v=1 pid=7 tid=7 inv=1 hid=ab task=1 kernel=k1 core=1 ready=5 ts=6 dur=4 deps=0\n"
      "[STASK] v=1 pid=7 tid=7 inv=1 hid=ab task=0 kernel=k0 core=0 ready=1 ts=2 dur=3 deps=-\n"
      "prefix [STASK] v=1 pid=7 tid=7 inv=2 hid=ab task=0 kernel=k2 core=0 ready=9 ts=9 dur=1 "
      "deps=-\n";
  pto_swimlane_task *t = NULL;
  size_t n = 0;
  uint64_t inv = 0;
  assert_pto_ok(pto_trace_parse_tasks(log, strlen(log), 0, &t, &n, &inv));
  assert_int_equal(inv, 2);
  assert_int_equal(n, 1);
  assert_string_equal(t[0].kernel, "k2");
  pto_timeline_tasks_free(t, n);
  assert_pto_ok(pto_trace_parse_tasks(log, strlen(log), 1, &t, &n, &inv));
  assert_int_equal(n, 2);
  assert_int_equal(t[0].task_id, 0); /* sorted by id */
  assert_string_equal(t[1].kernel, "k1");
  assert_int_equal(t[1].core, 1);
  assert_int_equal(t[1].start_ns, 6);
  assert_int_equal(t[1].end_ns, 10);
  assert_int_equal(t[1].ndeps, 1);
  assert_int_equal(t[1].deps[0], 0);
  pto_timeline_tasks_free(t, n);
  assert_status_contains(pto_trace_parse_tasks(log, strlen(log), 3, &t, &n, NULL), "inv=3");
  assert_status_contains(pto_trace_parse_tasks(log, 70, 0, &t, &n, NULL), "pto run --trace");
  static const char bad[] =
      "[STASK] v=1 pid=7 tid=7 inv=1 hid=ab task=0 kernel=k core=0 ready=1 ts=2 dur=3 deps=1,x\n";
  assert_status_contains(pto_trace_parse_tasks(bad, strlen(bad), 0, &t, &n, NULL),
                         "malformed [STASK]");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_timeline_golden_at_fixed_width),
      cmocka_unit_test(test_timeline_width_follows_option),
      cmocka_unit_test(test_timeline_critical_path_follows_latest_dependency),
      cmocka_unit_test(test_timeline_empty_and_bad_tasks),
      cmocka_unit_test(test_timeline_svg_has_every_task_and_the_path),
      cmocka_unit_test(test_trace_parse_tasks_picks_the_launch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
