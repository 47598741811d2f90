/* Shared by the runtime benchmarks: compiling their .ptir programs, a clock, per-repetition
 * statistics and span lookup. Public pto headers only. */
#ifndef PTO_BENCH_RUNTIME_UTIL_H
#define PTO_BENCH_RUNTIME_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pto/ir.h"
#include "pto/loader.h"
#include "pto/runtime.h"

#ifndef BENCH_PTIR_DIR
#define BENCH_PTIR_DIR "."
#endif

#define B_CHECK(call) b_check((call), #call, __FILE__, __LINE__)
static inline void b_check(pto_status s, const char *what, const char *file, int line) {
  if (!s) return;
  fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, what, pto_status_message(s));
  pto_status_free(s);
  exit(1);
}

static inline pto_program *b_compile(const char *file) {
  char path[4096];
  const char *dir = getenv("PTO_BENCH_PTIR_DIR");
  snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : BENCH_PTIR_DIR, file);
  pto_ir_program *ir = NULL;
  B_CHECK(pto_ir_parse_file(path, &ir));
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  pto_program *p = NULL;
  B_CHECK(pto_compile(ir, &opt, &p));
  pto_ir_program_destroy(ir);
  return p;
}

/* PTO_BENCH_STRICT_CORES=1: the worker in the chip's strict model (pto_run_config.strict_cores:
 * a thread per core, each running its own type's tasks), to compare with the shared default. */
static inline void b_strict_cores(pto_run_config *cfg) {
  const char *v = getenv("PTO_BENCH_STRICT_CORES");
  cfg->strict_cores = v && *v && strcmp(v, "0") != 0;
}

static inline pto_worker *b_open_worker(int ncores) {
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  /* ncores vector cores, as before cores had types, and the cube core every worker has. */
  cfg.aiv_cores = ncores;
  cfg.aic_cores = 1;
  b_strict_cores(&cfg);
  pto_worker *w = NULL;
  B_CHECK(pto_worker_open(&cfg, &w));
  return w;
}

static inline uint64_t b_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline double b_span_us(const pto_launch_record *rec, const char *name) {
  for (int i = 0; i < rec->nspans; i++)
    if (!strcmp(rec->spans[i].name, name)) return (double)rec->spans[i].dur_ns / 1e3;
  return 0;
}

/* One metric over the repetitions of a benchmark. */
typedef struct b_stat {
  double v[256];
  int n;
} b_stat;

static inline void b_add(b_stat *s, double x) {
  if (s->n < 256) s->v[s->n++] = x;
}

static int b_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static inline double b_min(const b_stat *s) {
  double m = s->n ? s->v[0] : 0;
  for (int i = 1; i < s->n; i++)
    if (s->v[i] < m) m = s->v[i];
  return m;
}

static inline double b_median(const b_stat *s) {
  double t[256];
  memcpy(t, s->v, sizeof(double) * (size_t)s->n);
  qsort(t, (size_t)s->n, sizeof(double), b_cmp_double);
  if (!s->n) return 0;
  return s->n % 2 ? t[s->n / 2] : (t[s->n / 2 - 1] + t[s->n / 2]) / 2;
}

/* "name  min  median" with the unit. */
static inline void b_row(const char *name, const b_stat *s, const char *unit) {
  printf("| %-52s | %10.3f | %10.3f | %s |\n", name, b_min(s), b_median(s), unit);
}

static inline void b_header(void) {
  printf("| %-52s | %10s | %10s | unit |\n| %.52s | ---------: | ---------: | --- |\n", "metric",
         "min", "median", "----------------------------------------------------");
}

static inline long b_arg(int argc, char **argv, int i, long dflt) {
  return argc > i ? strtol(argv[i], NULL, 10) : dflt;
}

#endif
