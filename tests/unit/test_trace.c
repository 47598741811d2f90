/* [STRACE] log parsing and aggregation (pto_trace_parse), span trees and their text.
 *
 * The golden trees were produced by an independent re-implementation of PyPTO's
 * format_mean_tree (python/pypto/runtime/bench.py) over the same log text. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_test.h"
#include "bench_internal.h"
#include "pto/bench.h"
#include "testutil.h"

/* Four launches of hid abc, out of inv order in the text; inv 1 is the warmup one. */
static const char k_golden_log[] =
    "[STRACE] v=1 pid=100 tid=7 inv=1 hid=abc depth=0 name=chip.run ts=1000000000 dur=9000000\n"
    "[STRACE] v=1 pid=100 tid=7 inv=1 hid=abc depth=1 name=chip.run.bind ts=1000000000 "
    "dur=9000000\n"
    "[STRACE] v=1 pid=100 tid=7 inv=1 hid=abc depth=1 name=chip.run.runner_run ts=1000150000 "
    "dur=9000000\n"
    "[STRACE] v=1 pid=100 tid=7 inv=1 hid=abc depth=2 name=chip.run.runner_run.device_wall "
    "ts=1000160000 dur=9000000 clk=dev\n"
    "[STRACE] v=1 pid=100 tid=7 inv=1 hid=abc depth=3 name=chip.run.runner_run.device_wall.orch "
    "ts=1000160000 dur=9000000 clk=dev\n"
    "[STRACE] v=1 pid=100 tid=7 inv=1 hid=abc depth=3 name=chip.run.runner_run.device_wall.sched "
    "ts=1000200000 dur=9000000 clk=dev\n"
    "[STRACE] v=1 pid=100 tid=7 inv=1 hid=abc depth=1 name=chip.run.copy_back ts=1000960000 "
    "dur=9000000\n"
    "[STRACE] v=1 pid=100 tid=7 inv=3 hid=abc depth=0 name=chip.run ts=3000000000 dur=1200000\n"
    "[STRACE] v=1 pid=100 tid=7 inv=3 hid=abc depth=1 name=chip.run.bind ts=3000000000 "
    "dur=110000\n"
    "[STRACE] v=1 pid=100 tid=7 inv=3 hid=abc depth=1 name=chip.run.runner_run ts=3000150000 "
    "dur=900000\n"
    "[STRACE] v=1 pid=100 tid=7 inv=3 hid=abc depth=2 name=chip.run.runner_run.device_wall "
    "ts=3000160000 dur=600000 clk=dev\n"
    "[STRACE] v=1 pid=100 tid=7 inv=3 hid=abc depth=3 name=chip.run.runner_run.device_wall.orch "
    "ts=3000160000 dur=100000 clk=dev\n"
    "[STRACE] v=1 pid=100 tid=7 inv=3 hid=abc depth=3 name=chip.run.runner_run.device_wall.sched "
    "ts=3000200000 dur=500000 clk=dev\n"
    "[STRACE] v=1 pid=100 tid=7 inv=3 hid=abc depth=1 name=chip.run.copy_back ts=3000960000 "
    "dur=30000\n"
    "[STRACE] v=1 pid=100 tid=7 inv=2 hid=abc depth=0 name=chip.run ts=2000000000 dur=1000000\n"
    "[STRACE] v=1 pid=100 tid=7 inv=2 hid=abc depth=1 name=chip.run.bind ts=2000000000 "
    "dur=100000\n"
    "[STRACE] v=1 pid=100 tid=7 inv=2 hid=abc depth=1 name=chip.run.runner_run ts=2000150000 "
    "dur=800000\n"
    "[STRACE] v=1 pid=100 tid=7 inv=2 hid=abc depth=2 name=chip.run.runner_run.device_wall "
    "ts=2000160000 dur=500000 clk=dev\n"
    "[STRACE] v=1 pid=100 tid=7 inv=2 hid=abc depth=3 name=chip.run.runner_run.device_wall.orch "
    "ts=2000160000 dur=100000 clk=dev\n"
    "[STRACE] v=1 pid=100 tid=7 inv=2 hid=abc depth=3 name=chip.run.runner_run.device_wall.sched "
    "ts=2000200000 dur=400000 clk=dev\n"
    "[STRACE] v=1 pid=100 tid=7 inv=2 hid=abc depth=1 name=chip.run.copy_back ts=2000960000 "
    "dur=20000\n"
    "[STRACE] v=1 pid=100 tid=7 inv=4 hid=abc depth=0 name=chip.run ts=4000000000 dur=1400000\n"
    "[STRACE] v=1 pid=100 tid=7 inv=4 hid=abc depth=1 name=chip.run.bind ts=4000000000 "
    "dur=120000\n"
    "[STRACE] v=1 pid=100 tid=7 inv=4 hid=abc depth=1 name=chip.run.runner_run ts=4000150000 "
    "dur=1000000\n"
    "[STRACE] v=1 pid=100 tid=7 inv=4 hid=abc depth=2 name=chip.run.runner_run.device_wall "
    "ts=4000160000 dur=700000 clk=dev\n"
    "[STRACE] v=1 pid=100 tid=7 inv=4 hid=abc depth=3 name=chip.run.runner_run.device_wall.orch "
    "ts=4000160000 dur=100000 clk=dev\n"
    "[STRACE] v=1 pid=100 tid=7 inv=4 hid=abc depth=3 name=chip.run.runner_run.device_wall.sched "
    "ts=4000200000 dur=600000 clk=dev\n"
    "[STRACE] v=1 pid=100 tid=7 inv=4 hid=abc depth=1 name=chip.run.copy_back ts=4000960000 "
    "dur=40000\n";

static const char k_tree_stdev[] = "chip.run                 1200.0us  \u00b1200.0\n"
                                   "|- bind                   110.0us   \u00b110.0\n"
                                   "|- runner_run             900.0us  \u00b1100.0\n"
                                   "|  `- device_wall [dev]   600.0us  \u00b1100.0\n"
                                   "|     |- orch [dev]       100.0us    \u00b10.0\n"
                                   "|     `- sched [dev]      500.0us  \u00b1100.0\n"
                                   "`- copy_back               30.0us   \u00b110.0\n";

static const char k_tree_minmax[] = "chip.run                 1200.0us  [1000.0..1400.0]\n"
                                    "|- bind                   110.0us    [100.0..120.0]\n"
                                    "|- runner_run             900.0us   [800.0..1000.0]\n"
                                    "|  `- device_wall [dev]   600.0us    [500.0..700.0]\n"
                                    "|     |- orch [dev]       100.0us    [100.0..100.0]\n"
                                    "|     `- sched [dev]      500.0us    [400.0..600.0]\n"
                                    "`- copy_back               30.0us      [20.0..40.0]\n";

static const char k_tree_both[] =
    "chip.run                 1200.0us  \u00b1200.0  [1000.0..1400.0]\n"
    "|- bind                   110.0us   \u00b110.0    [100.0..120.0]\n"
    "|- runner_run             900.0us  \u00b1100.0   [800.0..1000.0]\n"
    "|  `- device_wall [dev]   600.0us  \u00b1100.0    [500.0..700.0]\n"
    "|     |- orch [dev]       100.0us    \u00b10.0    [100.0..100.0]\n"
    "|     `- sched [dev]      500.0us  \u00b1100.0    [400.0..600.0]\n"
    "`- copy_back               30.0us   \u00b110.0      [20.0..40.0]\n";

static const char k_tree_none[] = "chip.run                 1200.0us\n"
                                  "|- bind                   110.0us\n"
                                  "|- runner_run             900.0us\n"
                                  "|  `- device_wall [dev]   600.0us\n"
                                  "|     |- orch [dev]       100.0us\n"
                                  "|     `- sched [dev]      500.0us\n"
                                  "`- copy_back               30.0us\n";

static const char k_tree_both_level1[] = "chip.run       1200.0us  \u00b1200.0  [1000.0..1400.0]\n"
                                         "|- bind         110.0us   \u00b110.0    [100.0..120.0]\n"
                                         "|- runner_run   900.0us  \u00b1100.0   [800.0..1000.0]\n"
                                         "`- copy_back     30.0us   \u00b110.0      [20.0..40.0]\n";

static const char k_summary[] = "             n       min    median      mean       max    stdev\n"
                                "device wall  3   500.0us   600.0us   600.0us   700.0us  100.0us\n"
                                "host wall    3  1000.0us  1200.0us  1200.0us  1400.0us  200.0us\n"
                                "effective    3   440.0us   540.0us   540.0us   640.0us  100.0us\n"
                                "busy         3   440.0us   540.0us   540.0us   640.0us  100.0us\n";

/* ---- helpers ---------------------------------------------------------------------------- */

static pto_bench_stats *parse_ok(const char *text, int warmup) {
  pto_trace_options o;
  pto_trace_options_init(&o);
  o.warmup = warmup;
  pto_bench_stats *st = NULL;
  assert_pto_ok(pto_trace_parse(text, strlen(text), &o, &st));
  assert_non_null(st);
  return st;
}

static char *render(const pto_bench_stats *st, pto_bench_spread spread, int level) {
  pto_bench_tree *t = NULL;
  char *text = NULL;
  assert_pto_ok(pto_bench_stats_mean_tree(st, &t));
  assert_pto_ok(pto_bench_tree_render(t, spread, level, &text));
  pto_bench_tree_destroy(t);
  return text;
}

static void assert_text(const char *got, const char *want) {
  if (strcmp(got, want)) {
    print_error("got:\n%s\nwant:\n%s\n", got, want);
    fail();
  }
}

/* One launch with pto's seven spans; durations in ns. */
typedef struct launch_spec {
  unsigned pid, inv;
  const char *hid;
  unsigned long long t0;
  unsigned run, bind, rr, dw, orch, sched, cb;
} launch_spec;

static void append(char **buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(char **buf, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char line[1024];
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  size_t n = *buf ? strlen(*buf) : 0;
  *buf = realloc(*buf, n + strlen(line) + 1);
  assert_non_null(*buf);
  strcpy(*buf + n, line);
}

static void add_launch(char **buf, const char *prefix, const launch_spec *l) {
  const char *names[7] = {"chip.run",
                          "chip.run.bind",
                          "chip.run.runner_run",
                          "chip.run.runner_run.device_wall",
                          "chip.run.runner_run.device_wall.orch",
                          "chip.run.runner_run.device_wall.sched",
                          "chip.run.copy_back"};
  const int depth[7] = {0, 1, 1, 2, 3, 3, 1};
  const unsigned long long off[7] = {0, 0, 150000, 160000, 160000, 200000, 960000};
  const unsigned dur[7] = {l->run, l->bind, l->rr, l->dw, l->orch, l->sched, l->cb};
  for (int i = 0; i < 7; i++)
    append(buf, "%s[STRACE] v=1 pid=%u tid=%u inv=%u hid=%s depth=%d name=%s ts=%llu dur=%u%s\n",
           prefix, l->pid, l->pid, l->inv, l->hid, depth[i], names[i], l->t0 + off[i], dur[i],
           i >= 3 && i <= 5 ? " clk=dev" : "");
}

static launch_spec spec(unsigned pid, unsigned inv, const char *hid, unsigned run) {
  launch_spec l = {pid, inv, hid, 1000000000ull * inv + 7ull * pid, run, 100, 800, 500,
                   100, 400, 20};
  return l;
}

/* ---- golden trees and tables ------------------------------------------------------------ */

static void test_trace_mean_tree_golden_each_spread(void **state) {
  (void)state;
  pto_bench_stats *st = parse_ok(k_golden_log, 1);
  assert_int_equal(st->nlaunches, 3);
  assert_int_equal(st->warmup, 1);
  struct {
    pto_bench_spread spread;
    int level;
    const char *want;
  } cases[] = {
      {PTO_BENCH_SPREAD_STDEV, -1, k_tree_stdev},
      {PTO_BENCH_SPREAD_MINMAX, -1, k_tree_minmax},
      {PTO_BENCH_SPREAD_BOTH, -1, k_tree_both},
      {PTO_BENCH_SPREAD_NONE, -1, k_tree_none},
      {PTO_BENCH_SPREAD_BOTH, 1, k_tree_both_level1},
      {PTO_BENCH_SPREAD_NONE, 0, "chip.run  1200.0us\n"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *text = render(st, cases[i].spread, cases[i].level);
    assert_text(text, cases[i].want);
    free(text);
  }
  pto_bench_stats_destroy(st);
}

static void test_trace_summary_table_golden(void **state) {
  (void)state;
  pto_bench_stats *st = parse_ok(k_golden_log, 1);
  char *text = NULL;
  assert_pto_ok(pto_bench_stats_render_summary(st, &text));
  assert_text(text, k_summary);
  free(text);
  pto_bench_stats_destroy(st);
}

static void test_trace_samples_follow_inv_order_and_effective_is_union(void **state) {
  (void)state;
  pto_bench_stats *st = parse_ok(k_golden_log, 1);
  /* launches in inv order 2, 3, 4 although the text has 3 before 2 */
  for (int i = 0; i < 3; i++)
    assert_int_equal(st->launches[i].inv, (uint64_t)(i + 2));
  const double dev[3] = {500, 600, 700}, host[3] = {1000, 1200, 1400}, eff[3] = {440, 540, 640};
  for (int i = 0; i < 3; i++) {
    assert_true(st->samples[PTO_BENCH_DEVICE_WALL][i] == dev[i]);
    assert_true(st->samples[PTO_BENCH_HOST_WALL][i] == host[i]);
    assert_true(st->samples[PTO_BENCH_EFFECTIVE][i] == eff[i]);
  }
  assert_true(st->summary[PTO_BENCH_HOST_WALL].median == 1200);
  assert_true(st->summary[PTO_BENCH_HOST_WALL].stdev == 200);
  assert_int_equal(st->hid, 0xabc);
  assert_int_equal(st->trace.records, 28);
  assert_int_equal(st->trace.invocations, 4);
  assert_int_equal(st->trace.bucket, 4);
  assert_int_equal(st->trace.hids, 1);
  assert_int_equal(st->trace.skipped, 0);
  pto_bench_stats_destroy(st);
}

/* PyPTO's Effective spans both windows, gap included (strace_timing.py: max end - min start);
 * busy is their union. */
static void test_trace_effective_of_disjoint_windows_spans_the_gap(void **state) {
  (void)state;
  const char *log =
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=0 name=chip.run ts=0 dur=100000\n"
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=3 name=chip.run.runner_run.device_wall.orch "
      "ts=1000 dur=2000 clk=dev\n"
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=3 name=chip.run.runner_run.device_wall.sched "
      "ts=10000 dur=5000 clk=dev\n";
  pto_bench_stats *st = parse_ok(log, 0);
  assert_true(st->samples[PTO_BENCH_EFFECTIVE][0] == 14.0); /* 1 us to 15 us */
  assert_true(st->samples[PTO_BENCH_BUSY][0] == 7.0);       /* 2 us + 5 us */
  /* no device_wall span: NAN, and not counted */
  assert_true(isnan(st->samples[PTO_BENCH_DEVICE_WALL][0]));
  assert_int_equal(st->summary[PTO_BENCH_DEVICE_WALL].count, 0);
  assert_int_equal(st->summary[PTO_BENCH_HOST_WALL].count, 1);
  char *text = NULL;
  assert_pto_ok(pto_bench_stats_render_summary(st, &text));
  assert_non_null(strstr(text, "device wall  0        -        -        -        -      -\n"));
  free(text);
  pto_bench_stats_destroy(st);
}

/* ---- grouping --------------------------------------------------------------------------- */

static void test_trace_groups_by_pid_and_inv(void **state) {
  (void)state;
  /* Two processes with the same inv numbers, their lines interleaved record by record. */
  char *a = NULL, *b = NULL, *log = NULL;
  launch_spec l1 = spec(11, 1, "f00d", 1000), l2 = spec(22, 1, "f00d", 3000);
  add_launch(&a, "", &l1);
  add_launch(&b, "", &l2);
  char *pa = a, *pb = b;
  while (*pa || *pb) {
    for (char **p = &pa; p; p = p == &pa ? &pb : NULL) {
      char *nl = strchr(*p, '\n');
      if (!nl) continue;
      append(&log, "%.*s", (int)(nl - *p + 1), *p);
      *p = nl + 1;
    }
  }
  pto_bench_stats *st = parse_ok(log, 0);
  assert_int_equal(st->nlaunches, 2);
  assert_int_equal(st->trace.invocations, 2);
  assert_int_equal(st->launches[0].pid, 11); /* same inv: (inv, pid) order */
  assert_int_equal(st->launches[1].pid, 22);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(st->launches[i].nspans, 7); /* in record order */
    assert_string_equal(st->launches[i].spans[0].name, "chip.run");
    assert_string_equal(st->launches[i].spans[6].name, "chip.run.copy_back");
    assert_true(st->launches[i].spans[3].is_device);
  }
  assert_true(st->samples[PTO_BENCH_HOST_WALL][0] == 1.0);
  assert_true(st->samples[PTO_BENCH_HOST_WALL][1] == 3.0);
  pto_bench_stats_destroy(st);
  free(a);
  free(b);
  free(log);
}

static void test_trace_takes_the_largest_hid_bucket(void **state) {
  (void)state;
  char *log = NULL;
  /* hid 1 (prefill-like) once, hid beef five times, hid 2 twice */
  launch_spec s = spec(5, 1, "1", 999000);
  add_launch(&log, "", &s);
  for (unsigned inv = 2; inv <= 6; inv++) {
    s = spec(5, inv, "BEEF", 1000 * inv);
    add_launch(&log, "", &s);
  }
  for (unsigned inv = 7; inv <= 8; inv++) {
    s = spec(5, inv, "2", 5000);
    add_launch(&log, "", &s);
  }
  pto_bench_stats *st = parse_ok(log, 2);
  assert_int_equal(st->hid, 0xbeef); /* hex is case-insensitive */
  assert_int_equal(st->trace.hids, 3);
  assert_int_equal(st->trace.invocations, 8);
  assert_int_equal(st->trace.bucket, 5);
  assert_int_equal(st->nlaunches, 3); /* 5 minus 2 warmup */
  for (int i = 0; i < 3; i++) {
    assert_int_equal(st->launches[i].inv, (uint64_t)(4 + i));
    assert_true(st->samples[PTO_BENCH_HOST_WALL][i] == 4.0 + i);
  }
  pto_bench_stats_destroy(st);
  free(log);
}

static void test_trace_equal_buckets_go_to_the_first_invocation(void **state) {
  (void)state;
  char *log = NULL;
  launch_spec s;
  /* hid 2 appears first in the text but hid 1's first invocation comes first in (pid, inv) */
  s = spec(9, 5, "2", 1000), add_launch(&log, "", &s);
  s = spec(9, 6, "2", 1000), add_launch(&log, "", &s);
  s = spec(9, 1, "1", 2000), add_launch(&log, "", &s);
  s = spec(9, 2, "1", 2000), add_launch(&log, "", &s);
  pto_bench_stats *st = parse_ok(log, 0);
  assert_int_equal(st->hid, 1);
  assert_int_equal(st->nlaunches, 2);
  pto_bench_stats_destroy(st);
  free(log);
}

static void test_trace_drops_warmup_by_inv(void **state) {
  (void)state;
  char *log = NULL;
  launch_spec s;
  const unsigned invs[5] = {9, 3, 7, 5, 4}; /* warmup 2 drops inv 3 and 4 */
  for (int i = 0; i < 5; i++)
    s = spec(1, invs[i], "a", 100 * invs[i]), add_launch(&log, "", &s);
  pto_bench_stats *st = parse_ok(log, 2);
  assert_int_equal(st->nlaunches, 3);
  assert_int_equal(st->warmup, 2);
  const unsigned want[3] = {5, 7, 9};
  for (int i = 0; i < 3; i++) {
    assert_int_equal(st->launches[i].inv, want[i]);
    assert_true(st->samples[PTO_BENCH_HOST_WALL][i] == (double)(100 * want[i]) / 1e3);
  }
  pto_bench_stats_destroy(st);
  free(log);
}

static void test_trace_default_warmup_is_three_but_never_all(void **state) {
  (void)state;
  char *log = NULL;
  launch_spec s;
  for (unsigned inv = 1; inv <= 5; inv++)
    s = spec(1, inv, "a", 1000), add_launch(&log, "", &s);
  pto_bench_stats *st = parse_ok(log, PTO_TRACE_WARMUP_AUTO);
  assert_int_equal(st->warmup, 3);
  assert_int_equal(st->nlaunches, 2);
  pto_bench_stats_destroy(st);
  /* one launch (a single 'pto run --trace'): kept */
  char *one = NULL;
  s = spec(1, 1, "a", 1000), add_launch(&one, "", &s);
  st = parse_ok(one, PTO_TRACE_WARMUP_AUTO);
  assert_int_equal(st->warmup, 0);
  assert_int_equal(st->nlaunches, 1);
  pto_bench_stats_destroy(st);
  /* NULL options: the same default */
  assert_pto_ok(pto_trace_parse(one, strlen(one), NULL, &st));
  assert_int_equal(st->nlaunches, 1);
  pto_bench_stats_destroy(st);
  free(one);
  free(log);
}

/* ---- record syntax ---------------------------------------------------------------------- */

static void test_trace_reads_records_concatenated_on_one_line(void **state) {
  (void)state;
  /* Two complete records per physical line (two processes sharing a capture fd), each after a
   * logger prefix that may follow the last digit of dur at once; attributes must not leak from one
   * record into the next. */
  const char *log =
      "[2026-08-04 10:00:00.000001][T0x1][TIMING] emit_span: [strace.h:132] [STRACE] v=1 pid=1 "
      "tid=1 inv=1 hid=abc depth=0 name=chip.run ts=100 dur=20000"
      "[2026-08-04 10:00:00.000002][T0x2][TIMING] emit_span: [strace.h:132] [STRACE] v=1 pid=2 "
      "tid=2 inv=1 hid=abc depth=2 name=chip.run.runner_run.device_wall ts=300 dur=5000 clk=dev "
      "rank=1\n"
      "[STRACE] v=1 pid=2 tid=2 inv=1 hid=abc depth=0 name=chip.run ts=100 dur=30000[STRACE] v=1 "
      "pid=1 tid=1 inv=1 hid=abc depth=2 name=chip.run.runner_run.device_wall ts=300 dur=4000 "
      "clk=dev\r\n";
  pto_bench_stats *st = parse_ok(log, 0);
  assert_int_equal(st->trace.records, 4);
  assert_int_equal(st->trace.skipped, 0);
  assert_int_equal(st->nlaunches, 2);
  assert_true(st->samples[PTO_BENCH_HOST_WALL][0] == 20.0);
  assert_true(st->samples[PTO_BENCH_DEVICE_WALL][0] == 4.0);
  assert_true(st->samples[PTO_BENCH_HOST_WALL][1] == 30.0);
  assert_true(st->samples[PTO_BENCH_DEVICE_WALL][1] == 5.0);
  /* clk=dev belongs to the device_wall records only */
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < st->launches[i].nspans; k++)
      assert_int_equal(st->launches[i].spans[k].is_device,
                       strcmp(st->launches[i].spans[k].name, "chip.run") != 0);
  pto_bench_stats_destroy(st);
}

static void test_trace_ignores_unknown_prefixes_and_other_lines(void **state) {
  (void)state;
  const char *log =
      "pto: compiling examples/chain.ptir\n"
      "[2026-01-01][T0x1][INFO_V9] run_prepared: [STRACE] v=1 pid=100 tid=1 inv=1 "
      "hid=abc depth=0 name=chip.run ts=1000 dur=50000\n"
      "some text [STRACE] v=1 pid=100 tid=1 inv=1 hid=abc depth=2 "
      "name=chip.run.runner_run.device_wall ts=2000 dur=5000 clk=dev\n"
      "\tSTRACE without brackets v=1 pid=1\n"
      "[mono_ns=1000][T0xfffe55397120][TIMING] emit_host_span:\t[STRACE]\tv=1\tpid=100 "
      "tid=1 inv=1 hid=abc depth=1 name=chip.run.bind ts=1000 dur=100\n";
  pto_bench_stats *st = parse_ok(log, 0);
  assert_int_equal(st->trace.records, 3);
  assert_int_equal(st->nlaunches, 1);
  assert_int_equal(st->launches[0].nspans, 3);
  assert_true(st->samples[PTO_BENCH_HOST_WALL][0] == 50.0);
  assert_true(st->samples[PTO_BENCH_DEVICE_WALL][0] == 5.0);
  pto_bench_stats_destroy(st);
}

static void test_trace_decodes_percent_encoded_names(void **state) {
  (void)state;
  const char *log =
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=0 name=chip%2Erun ts=0 dur=9000\n"
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=1 name=chip.run%2ebind ts=0 dur=1000\n"
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=1 name=chip.run.odd%20name ts=2000 dur=2000\n"
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=1 name=chip.run.pct%25%zz%00%4 ts=5000 "
      "dur=3000\n";
  pto_bench_stats *st = parse_ok(log, 0);
  assert_int_equal(st->launches[0].nspans, 4);
  assert_string_equal(st->launches[0].spans[0].name, "chip.run");
  assert_string_equal(st->launches[0].spans[1].name, "chip.run.bind");
  assert_string_equal(st->launches[0].spans[2].name, "chip.run.odd name");
  /* %25 decodes; a bad escape, %00 and a cut-off escape stay as written */
  assert_string_equal(st->launches[0].spans[3].name, "chip.run.pct%%zz%00%4");
  assert_true(st->samples[PTO_BENCH_HOST_WALL][0] == 9.0);
  char *text = render(st, PTO_BENCH_SPREAD_NONE, -1);
  assert_text(text, "chip.run         9.0us\n"
                    "|- bind          1.0us\n"
                    "|- odd name      2.0us\n"
                    "`- pct%%zz%00%4  3.0us\n");
  free(text);
  pto_bench_stats_destroy(st);
}

static void test_trace_skips_and_counts_truncated_lines(void **state) {
  (void)state;
  const char *log =
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=0 name=chip.run ts=0 dur=9000\n"
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=1 name=chip.run.bi\n"               /* torn */
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=1 name=chip.run.bind ts=0 dur=\n"   /* torn */
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=1 name=chip.run.bind ts=0 dur=x1\n" /* bad */
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=1 name=chip.run.bind ts=0\n"        /* torn */
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=zz depth=1 name=chip.run.bind ts=0 dur=1\n" /* bad */
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=1 name= ts=0 dur=1\n"               /* bad */
      "[STRACE] v=1 pid=99999999999999999999 tid=1 inv=1 hid=a depth=0 name=x ts=0 dur=1\n"
      "[STRACE] v=1 pid=1 tid=1\n" /* torn */
      "[STRACE]\n"                 /* torn */
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=1 name=chip.run.copy_back ts=8000 dur=1000";
  pto_bench_stats *st = parse_ok(log, 0);
  assert_int_equal(st->trace.records, 2);
  assert_int_equal(st->trace.skipped, 9);
  assert_int_equal(st->nlaunches, 1);
  assert_int_equal(st->launches[0].nspans, 2);
  assert_string_equal(st->launches[0].spans[1].name, "chip.run.copy_back");
  pto_bench_stats_destroy(st);
}

static void test_trace_counts_other_versions(void **state) {
  (void)state;
  const char *log = "[STRACE] v=2 pid=1 tid=1 inv=1 hid=a depth=0 name=chip.run ts=0 dur=9000\n"
                    "[STRACE] v=2 anything at all\n"
                    "[STRACE] v=1 pid=1 tid=1 inv=2 hid=a depth=0 name=chip.run ts=0 dur=5000\n";
  pto_bench_stats *st = parse_ok(log, 0);
  assert_int_equal(st->trace.unsupported, 2);
  assert_int_equal(st->trace.records, 1);
  assert_int_equal(st->nlaunches, 1);
  assert_int_equal(st->launches[0].inv, 2);
  pto_bench_stats_destroy(st);
}

static void test_trace_reads_any_runtime_root_name(void **state) {
  (void)state;
  /* PyPTO's runtime names its root simpler_run: the metrics follow the root's name. */
  const char *log = "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=0 name=simpler_run ts=0 dur=9000\n"
                    "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=2 "
                    "name=simpler_run.runner_run.device_wall ts=0 dur=4000 clk=dev\n"
                    "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=3 "
                    "name=simpler_run.runner_run.device_wall.sched ts=0 dur=3000 clk=dev\n";
  pto_bench_stats *st = parse_ok(log, 0);
  assert_true(st->samples[PTO_BENCH_HOST_WALL][0] == 9.0);
  assert_true(st->samples[PTO_BENCH_DEVICE_WALL][0] == 4.0);
  assert_true(st->samples[PTO_BENCH_EFFECTIVE][0] == 3.0);
  /* a missing intermediate span: device_wall hangs off the root, labelled relative to it */
  char *text = render(st, PTO_BENCH_SPREAD_NONE, -1);
  assert_text(text, "simpler_run                      9.0us\n"
                    "`- runner_run.device_wall [dev]  4.0us\n"
                    "   `- sched [dev]                3.0us\n");
  free(text);
  pto_bench_stats_destroy(st);
}

static void test_trace_orders_siblings_by_start(void **state) {
  (void)state;
  /* b is written first but starts after a; several roots are ordered the same way */
  const char *log = "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=0 name=r ts=0 dur=10000\n"
                    "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=1 name=r.b ts=5000 dur=1000\n"
                    "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=1 name=r.a ts=1000 dur=1000\n"
                    "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=2 name=r.a.y ts=1500 dur=100\n"
                    "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=2 name=r.a.x ts=1100 dur=100\n"
                    "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=0 name=q ts=20000 dur=1000\n";
  pto_bench_stats *st = parse_ok(log, 0);
  char *text = render(st, PTO_BENCH_SPREAD_NONE, -1);
  assert_text(text, "r        10.0us\n"
                    "|- a      1.0us\n"
                    "|  |- x   0.1us\n"
                    "|  `- y   0.1us\n"
                    "`- b      1.0us\n"
                    "q         1.0us\n");
  free(text);
  pto_bench_tree *t = NULL;
  assert_pto_ok(pto_bench_stats_launch_tree(st, 0, &t));
  assert_int_equal(t->nnodes, 6);
  assert_string_equal(t->nodes[2].name, "r.a.x");
  assert_string_equal(t->nodes[2].label, "x");
  assert_int_equal(t->nodes[2].level, 2);
  assert_int_equal(t->nodes[2].parent, 1);
  assert_int_equal(t->nodes[5].parent, -1);
  assert_int_equal(t->nodes[0].count, 1);
  pto_bench_tree_destroy(t);
  assert_status_contains(pto_bench_stats_launch_tree(st, 1, &t), "out of range");
  pto_bench_stats_destroy(st);
}

/* ---- errors ----------------------------------------------------------------------------- */

static void test_trace_without_markers_is_an_error(void **state) {
  (void)state;
  pto_bench_stats *st = (pto_bench_stats *)1;
  const char *log = "hello\nno spans here\n";
  assert_status_contains(pto_trace_parse(log, strlen(log), NULL, &st), "no [STRACE] records");
  assert_null(st);
  assert_status_contains(pto_trace_parse("", 0, NULL, &st), "no [STRACE] records");
  log = "[STRACE] v=1 pid=1\n[STRACE] v=3 x\n";
  assert_status_contains(pto_trace_parse(log, strlen(log), NULL, &st),
                         "no complete [STRACE] v=1 records: 1 truncated or malformed, 1 of "
                         "another format version");
}

static void test_trace_with_only_warmup_is_an_error(void **state) {
  (void)state;
  pto_trace_options o;
  pto_trace_options_init(&o);
  o.warmup = 4;
  pto_bench_stats *st = NULL;
  pto_status s = pto_trace_parse(k_golden_log, sizeof k_golden_log - 1, &o, &st);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_INVALID_ARGUMENT);
  assert_status_contains(s, "every launch in the log is warmup: hid abc has 4 invocations and a "
                            "warmup of 4 drops them all");
  assert_null(st);
  o.warmup = -5;
  assert_status_contains(pto_trace_parse(k_golden_log, sizeof k_golden_log - 1, &o, &st),
                         "warmup is -5");
  o.sz = 0;
  assert_status_contains(pto_trace_parse(k_golden_log, sizeof k_golden_log - 1, &o, &st),
                         "options.sz");
}

static void test_trace_parse_file_names_the_file(void **state) {
  (void)state;
  char *dir = tu_mkdtemp("trace");
  char path[4096];
  snprintf(path, sizeof path, "%s/run.log", dir);
  pto_bench_stats *st = NULL;
  assert_status_contains(pto_trace_parse_file(path, NULL, &st), "run.log");
  assert_int_equal(tu_write_file(path, "nothing\n"), 0);
  assert_status_contains(pto_trace_parse_file(path, NULL, &st), "run.log: no [STRACE] records");
  assert_int_equal(tu_write_file(path, k_golden_log), 0);
  assert_pto_ok(pto_trace_parse_file(path, NULL, &st));
  assert_int_equal(st->nlaunches, 1); /* auto warmup: 4 launches, 3 dropped */
  assert_int_equal(st->launches[0].inv, 4);
  pto_bench_stats_destroy(st);
  tu_rmtree(dir);
  free(dir);
}

/* ---- summaries, JSON and out-of-memory paths -------------------------------------------- */

static void test_bench_summarize_median_and_sample_stdev(void **state) {
  (void)state;
  const double odd[5] = {5, 1, NAN, 3, 2};
  pto_bench_summary s = pto_bench_summarize(odd, 5);
  assert_int_equal(s.count, 4);
  assert_true(s.min == 1 && s.max == 5 && s.median == 2.5 && s.mean == 2.75);
  assert_true(fabs(s.stdev - sqrt((5.0625 + 3.0625 + 0.0625 + 0.5625) / 3)) < 1e-12);
  const double one[1] = {4};
  s = pto_bench_summarize(one, 1);
  assert_true(s.count == 1 && s.median == 4 && s.stdev == 0);
  s = pto_bench_summarize(NULL, 0);
  assert_int_equal(s.count, 0);
}

static void test_trace_json_holds_samples_and_tree(void **state) {
  (void)state;
  pto_bench_stats *st = parse_ok(k_golden_log, 1);
  char *json = NULL;
  assert_pto_ok(pto_bench_stats_to_json(st, &json));
  assert_non_null(strstr(json, "\"device_wall\": [\n      500.0,\n      600.0,\n      700.0\n"));
  assert_non_null(strstr(json, "\"hid\": \"abc\""));
  assert_non_null(strstr(json, "\"label\": \"device_wall\""));
  assert_non_null(strstr(json, "\"records\": 28"));
  assert_true(json[strlen(json) - 1] == '\n');
  free(json);
  pto_bench_stats_destroy(st);
}

/* ntasks and ncores: the tasks= and cores= pto writes on a launch's root span, of the last
 * measured launch (in inv order, whatever the text's order); 0 in a log without them (the
 * golden log, as PyPTO's runtime writes it), where the last launch has none, or where a count
 * does not parse or cores= is beyond an int. */
static void test_trace_counts_come_from_the_last_launch(void **state) {
  (void)state;
  pto_bench_stats *st = parse_ok(k_golden_log, 1);
  assert_int_equal(st->ntasks, 0);
  assert_int_equal(st->ncores, 0);
  pto_bench_stats_destroy(st);

  static const char k_counted[] =
      "[STRACE] v=1 pid=1 tid=1 inv=3 hid=a depth=0 name=chip.run ts=0 dur=900 tasks=12 cores=6\n"
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=0 name=chip.run ts=0 dur=800 tasks=7 cores=5\n"
      "[STRACE] v=1 pid=1 tid=1 inv=2 hid=a depth=0 name=chip.run ts=0 dur=700 tasks=9 cores=5 "
      "rank=1\n";
  st = parse_ok(k_counted, 0);
  assert_int_equal(st->ntasks, 12);
  assert_int_equal(st->ncores, 6);
  char *json = NULL;
  assert_pto_ok(pto_bench_stats_to_json(st, &json));
  assert_non_null(strstr(json, "\"ntasks\": 12"));
  assert_non_null(strstr(json, "\"ncores\": 6"));
  free(json);
  pto_bench_stats_destroy(st);

  static const char *const k_uncounted[] = {
      /* the last launch (inv 2) has none */
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=0 name=chip.run ts=0 dur=800 tasks=7 cores=5\n"
      "[STRACE] v=1 pid=1 tid=1 inv=2 hid=a depth=0 name=chip.run ts=0 dur=700\n",
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=0 name=chip.run ts=0 dur=800 tasks=7\n",
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=0 name=chip.run ts=0 dur=800 tasks=7x cores=5\n",
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=0 name=chip.run ts=0 dur=800 tasks=7 "
      "cores=2147483648\n",
      "[STRACE] v=1 pid=1 tid=1 inv=1 hid=a depth=0 name=chip.run ts=0 dur=800 tasks= cores=-1\n",
  };
  for (size_t i = 0; i < sizeof k_uncounted / sizeof k_uncounted[0]; i++) {
    st = parse_ok(k_uncounted[i], 0);
    assert_int_equal(st->ntasks, 0);
    assert_int_equal(st->ncores, 0);
    assert_int_equal(st->trace.skipped, 0); /* the record itself stands */
    pto_bench_stats_destroy(st);
  }
}

/* Every allocation of parse, tree, render, summary and JSON fails in turn: each failure is
 * reported as out of memory, never a crash or a leak (ASan checks the leaks). */
static void test_trace_out_of_memory_paths(void **state) {
  (void)state;
  int failures = 0;
  for (long n = 0; n < 100000; n++) {
    pto_alloc_fail_at(n, 1);
    pto_bench_stats *st = NULL;
    pto_bench_tree *t = NULL;
    char *a = NULL, *b = NULL, *c = NULL;
    pto_status s = pto_trace_parse(k_golden_log, sizeof k_golden_log - 1, NULL, &st);
    if (!s) s = pto_bench_stats_mean_tree(st, &t);
    if (!s) s = pto_bench_tree_render(t, PTO_BENCH_SPREAD_BOTH, -1, &a);
    if (!s) s = pto_bench_stats_render_summary(st, &b);
    if (!s) s = pto_bench_stats_to_json(st, &c);
    pto_alloc_fail_at(-1, 1);
    free(a), free(b), free(c);
    pto_bench_tree_destroy(t);
    pto_bench_stats_destroy(st);
    if (!s) break;
    assert_int_equal(pto_status_code_of(s), PTO_STATUS_OUT_OF_MEMORY);
    pto_status_free(s);
    failures++;
  }
  assert_true(failures > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_trace_mean_tree_golden_each_spread),
      cmocka_unit_test(test_trace_summary_table_golden),
      cmocka_unit_test(test_trace_samples_follow_inv_order_and_effective_is_union),
      cmocka_unit_test(test_trace_effective_of_disjoint_windows_spans_the_gap),
      cmocka_unit_test(test_trace_groups_by_pid_and_inv),
      cmocka_unit_test(test_trace_takes_the_largest_hid_bucket),
      cmocka_unit_test(test_trace_equal_buckets_go_to_the_first_invocation),
      cmocka_unit_test(test_trace_drops_warmup_by_inv),
      cmocka_unit_test(test_trace_default_warmup_is_three_but_never_all),
      cmocka_unit_test(test_trace_reads_records_concatenated_on_one_line),
      cmocka_unit_test(test_trace_ignores_unknown_prefixes_and_other_lines),
      cmocka_unit_test(test_trace_decodes_percent_encoded_names),
      cmocka_unit_test(test_trace_skips_and_counts_truncated_lines),
      cmocka_unit_test(test_trace_counts_other_versions),
      cmocka_unit_test(test_trace_reads_any_runtime_root_name),
      cmocka_unit_test(test_trace_orders_siblings_by_start),
      cmocka_unit_test(test_trace_without_markers_is_an_error),
      cmocka_unit_test(test_trace_with_only_warmup_is_an_error),
      cmocka_unit_test(test_trace_parse_file_names_the_file),
      cmocka_unit_test(test_bench_summarize_median_and_sample_stdev),
      cmocka_unit_test(test_trace_json_holds_samples_and_tree),
      cmocka_unit_test(test_trace_counts_come_from_the_last_launch),
      cmocka_unit_test(test_trace_out_of_memory_paths),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
