/* Every input a fuzz target (tests/fuzz) found a crash with, kept in tests/fuzz/regressions/
 * TARGET/, is read again here by the same reader: it must give a status or a result, never a
 * crash (ASan in CI catches the out-of-bounds reads these inputs once caused). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/npy.c"
#include "pto/bench.h"
#include "pto/ir.h"
#include "pto/manifest.h"
#include "testutil.h"

#ifndef PTO_SOURCE_DIR
#define PTO_SOURCE_DIR "."
#endif

/* Calls fn on every file of tests/fuzz/regressions/<target>; returns how many. */
static int each_input(const char *target, void (*fn)(const uint8_t *, size_t)) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/tests/fuzz/regressions/%s", PTO_SOURCE_DIR, target);
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    size_t len = 0;
    char *buf = tu_read_file(path, &len);
    assert_non_null(buf);
    fn((const uint8_t *)buf, len);
    free(buf);
    n++;
  }
  closedir(d);
  return n;
}

static void run_strace(const uint8_t *b, size_t n) {
  pto_bench_stats *st = NULL;
  pto_status s = pto_trace_parse((const char *)b, n, NULL, &st);
  pto_status_free(s);
  pto_bench_stats_destroy(st);
}

static void run_npy(const uint8_t *b, size_t n) {
  pto_npy_array a;
  pto_status s = pto_npy_parse(b, n, "regression.npy", -1, &a);
  if (!s) pto_npy_array_free(&a);
  pto_status_free(s);
}

static void run_ptir(const uint8_t *b, size_t n) {
  pto_ir_program *p = NULL;
  char *text = NULL;
  pto_status s = pto_ir_parse_string((const char *)b, n, "regression.ptir", &p);
  if (!s) s = pto_ir_verify(p);
  if (!s) s = pto_ir_print(p, &text);
  free(text);
  pto_status_free(s);
  pto_ir_program_destroy(p);
}

static void test_ptir_front_end_reads_its_crash_inputs(void **state) {
  (void)state;
  assert_true(each_input("ptir", run_ptir) >= 1);
}

static void test_strace_parser_reads_its_crash_inputs(void **state) {
  (void)state;
  assert_true(each_input("strace", run_strace) >= 1);
}

static void test_npy_reader_reads_its_crash_inputs(void **state) {
  (void)state;
  assert_true(each_input("npy", run_npy) >= 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ptir_front_end_reads_its_crash_inputs),
      cmocka_unit_test(test_strace_parser_reads_its_crash_inputs),
      cmocka_unit_test(test_npy_reader_reads_its_crash_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
