/* What every runtime example needs besides its own story: compiling a .ptir file through the
 * binary cache, stopping at the first failed pto call, and comparing floats. Public headers only.
 *
 * An example is run as `NAME [PTIR_DIR] [N]`: PTIR_DIR holds its .ptir programs (default: this
 * source folder), N is the example's size knob (requests, steps, calls) when it has one. */
#ifndef PTO_EXAMPLE_H
#define PTO_EXAMPLE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pto/ir.h"
#include "pto/loader.h"
#include "pto/runtime.h"

#ifndef EXAMPLE_PTIR_DIR
#define EXAMPLE_PTIR_DIR "."
#endif

/* Examples are applications, so a failed call ends the process with pto's message, which says
 * what was wrong and where. (Library code returns statuses instead.) */
#define EX_CHECK(call) ex_check((call), #call, __FILE__, __LINE__)
static inline void ex_check(pto_status s, const char *what, const char *file, int line) {
  if (!s) return;
  fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, what, pto_status_message(s));
  pto_status_free(s);
  exit(1);
}

static inline const char *ex_ptir_dir(int argc, char **argv) {
  return argc > 1 ? argv[1] : EXAMPLE_PTIR_DIR;
}

static inline long ex_size(int argc, char **argv, long dflt) {
  return argc > 2 ? strtol(argv[2], NULL, 10) : dflt;
}

/* Parses DIR/FILE and compiles it for the sim platform through the binary cache
 * ($PTO_CACHE_DIR): the first run of an example compiles, later runs load the cached binaries
 * without LLVM. The IR is only needed until the program is loaded. */
static inline pto_program *ex_compile(const char *dir, const char *file) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  pto_ir_program *ir = NULL;
  EX_CHECK(pto_ir_parse_file(path, &ir));
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  pto_program *prog = NULL;
  EX_CHECK(pto_compile(ir, &opt, &prog));
  pto_ir_program_destroy(ir);
  return prog;
}

/* The same for a program with a host entry (L3), for the device set 0 .. ndevices-1 (part of
 * such a program's cache key). */
static inline pto_program *ex_compile_devices(const char *dir, const char *file, int ndevices) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  pto_ir_program *ir = NULL;
  EX_CHECK(pto_ir_parse_file(path, &ir));
  int32_t ids[PTO_MAX_DEVICES];
  for (int i = 0; i < ndevices && i < PTO_MAX_DEVICES; i++)
    ids[i] = i;
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  opt.devices = ids;
  opt.ndevices = ndevices;
  pto_program *prog = NULL;
  EX_CHECK(pto_compile(ir, &opt, &prog));
  pto_ir_program_destroy(ir);
  return prog;
}

/* A worker on the sim platform with 2 core threads (0 would mean one per online CPU). */
static inline pto_worker *ex_open_worker(void) {
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.ncores = 2;
  pto_worker *w = NULL;
  EX_CHECK(pto_worker_open(&cfg, &w));
  return w;
}

/* Counts the elements of got that differ from want by more than rtol * |want| + atol, printing
 * the first few. */
static inline long ex_compare(const char *what, const float *got, const float *want, long n,
                              float rtol, float atol) {
  long bad = 0;
  for (long i = 0; i < n; i++) {
    if (fabsf(got[i] - want[i]) <= rtol * fabsf(want[i]) + atol) continue;
    if (bad++ < 5)
      fprintf(stderr, "%s: element %ld is %.9g, expected %.9g\n", what, i, got[i], want[i]);
  }
  return bad;
}

/* Deterministic inputs in [-1, 1). */
static inline void ex_fill(float *x, long n, unsigned seed) {
  for (long i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)(seed >> 8) / (float)(1u << 23) - 1.0f;
  }
}

static inline double ex_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* A span's duration in the worker's last launch, microseconds (0 if absent). */
static inline double ex_span_us(const pto_launch_record *rec, const char *name) {
  for (int i = 0; i < rec->nspans; i++)
    if (!strcmp(rec->spans[i].name, name)) return (double)rec->spans[i].dur_ns / 1e3;
  return 0;
}

#endif
