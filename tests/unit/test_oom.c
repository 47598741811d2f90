/* Allocation-failure injection over the front end (issue #10, class 11, first part): for every
 * n, the n-th allocation of parse -> verify -> print of each example fails, and the result is a
 * clean status (never a crash) with nothing leaked. The allocations are counted and failed by
 * interposing malloc/calloc/realloc/free in this executable (glibc allows it), which reaches
 * every allocation of libpto_ir, including libc's and jansson's, which base's allocator
 * (pto_malloc, tested by test_alloc_fail under the sanitizers too) does not see. Not built under
 * sanitizers, which interpose malloc themselves. */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/bench.h"
#include "pto/ir.h"
#include "pto/manifest.h"
#include "testutil.h"

#ifndef PTO_SOURCE_DIR
#define PTO_SOURCE_DIR "."
#endif

/* ---- the interposed allocator (one thread: these tests start none) ----------------------- */

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static long g_armed;      /* counting when nonzero */
static long g_count;      /* allocations while armed */
static long g_fail_at;    /* fail allocation number g_fail_at (1-based), 0: none */
static int g_failed;      /* an allocation was failed */
static long g_live;       /* allocations minus frees while armed (leak check) */
static char g_boot[4096]; /* dlsym's own calloc before real_calloc is known */
static size_t g_boot_used;

static void resolve(void) {
  if (real_malloc) return;
  real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
  real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
  real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
  real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
}

static int inject(void) {
  if (!g_armed) return 0;
  if (++g_count == g_fail_at) {
    g_failed = 1;
    return 1;
  }
  return 0;
}

static int is_boot(void *p) { return (char *)p >= g_boot && (char *)p < g_boot + sizeof g_boot; }

void *malloc(size_t n) {
  resolve();
  if (inject()) return NULL;
  void *p = real_malloc(n);
  if (p && g_armed) g_live++;
  return p;
}

void *calloc(size_t a, size_t b) {
  if (!real_calloc) {
    /* dlsym inside resolve() may allocate: serve it from a static buffer. */
    size_t n = (a * b + 15) & ~(size_t)15;
    if (g_boot_used + n > sizeof g_boot) return NULL;
    void *p = g_boot + g_boot_used;
    g_boot_used += n;
    return p;
  }
  if (inject()) return NULL;
  void *p = real_calloc(a, b);
  if (p && g_armed) g_live++;
  return p;
}

void *realloc(void *p, size_t n) {
  resolve();
  if (inject()) return NULL;
  void *q = real_realloc(p, n);
  if (q && !p && g_armed) g_live++;
  return q;
}

void free(void *p) {
  if (!p || is_boot(p)) return;
  resolve();
  if (g_armed) g_live--;
  real_free(p);
}

/* ---- the test --------------------------------------------------------------------------- */

/* parse -> verify -> print of text; returns the status (NULL for success). */
static pto_status front_end(const char *text, const char *name) {
  pto_ir_program *p = NULL;
  char *out = NULL;
  pto_status s = pto_ir_parse_string(text, strlen(text), name, &p);
  if (!s) s = pto_ir_verify(p);
  if (!s) s = pto_ir_print(p, &out);
  free(out);
  pto_ir_program_destroy(p);
  return s;
}

static void oom_every_allocation(const char *path, pto_status (*run)(const char *, const char *)) {
  char *text = tu_read_file(path, NULL);
  assert_non_null(text);
  long n, nstatus = 0;
  for (n = 1;; n++) {
    g_count = 0;
    g_failed = 0;
    g_fail_at = n;
    g_live = 0;
    g_armed = 1;
    pto_status s = run(text, path);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", s ? pto_status_message(s) : "ok");
    int ok = s == NULL;
    if (s && pto_status_code_of(s) != PTO_STATUS_OUT_OF_MEMORY) {
      print_error("%s: failing allocation %ld gives a status that is not OUT_OF_MEMORY: %s\n", path,
                  n, msg);
      fail();
    }
    nstatus += s != NULL;
    if (getenv("PTO_OOM_VERBOSE"))
      fprintf(stderr, "n=%ld: code %d: %s\n", n, s ? (int)pto_status_code_of(s) : 0, msg);
    pto_status_free(s); /* inside the count: a status is an allocation like any other */
    g_armed = 0;
    if (!g_failed) {
      assert_true(ok);
      break; /* every allocation of the run succeeded: all n were covered */
    }
    if (g_live != 0) {
      print_error("%s: failing allocation %ld leaks %ld allocations (status: %s)\n", path, n,
                  g_live, msg);
      fail();
    }
  }
  free(text);
  /* The test cannot pass vacuously: most failed allocations must surface as the status. (The
   * rest are tolerated, e.g. an optional cache; that each such run's output is still right is
   * not checked yet.) */
  assert_true(nstatus * 2 > n - 1);
  print_message("%s: failed each of %ld allocations in turn; %ld gave OUT_OF_MEMORY\n", path, n - 1,
                nstatus);
}

static void test_front_end_survives_every_failed_allocation(void **state) {
  (void)state;
  static const char *const files[] = {"examples/add.ptir",     "examples/scale_rows.ptir",
                                      "examples/softmax.ptir", "examples/matmul.ptir",
                                      "examples/incore.ptir",  "examples/chain.ptir"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", PTO_SOURCE_DIR, files[i]);
    oom_every_allocation(path, front_end);
  }
}

static pto_status read_manifest(const char *text, const char *name) {
  pto_manifest m;
  char *json = NULL;
  pto_status s = pto_manifest_parse(text, strlen(text), name, &m);
  if (s) return s;
  s = pto_manifest_to_json(&m, &json);
  free(json);
  pto_manifest_free(&m);
  return s;
}

static pto_status read_trace(const char *text, const char *name) {
  (void)name;
  pto_bench_stats *st = NULL;
  pto_status s = pto_trace_parse(text, strlen(text), NULL, &st);
  pto_bench_stats_destroy(st);
  return s;
}

static void test_trace_reader_survives_every_failed_allocation(void **state) {
  (void)state;
  char path[4096];
  /* The manifest reader is left out: jansson reports some failed allocations as syntax errors
   * ("string or '}' expected"), which pto cannot tell apart (issue #10, left open). */
  (void)read_manifest;
  snprintf(path, sizeof path, "%s/tests/fuzz/seeds/strace/chain.log", PTO_SOURCE_DIR);
  oom_every_allocation(path, read_trace);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_front_end_survives_every_failed_allocation),
      cmocka_unit_test(test_trace_reader_survives_every_failed_allocation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
