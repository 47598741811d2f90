/* Internal to the files of stats/ (bench.c, bench_tree.c, bench_json.c,
 * bench_swimlane.c, trace.c): the storage behind pto_bench_stats, the builder that the benchmark
 * loop and the [STRACE] parser both feed, and an allocator a test can make fail. */
#ifndef PTO_BENCH_INTERNAL_H
#define PTO_BENCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pto/bench.h"

/* ---- allocation ------------------------------------------------------------------------- */

/* malloc/calloc/realloc/strndup over base's allocator (pto_malloc), which fails on demand, so
 * every out-of-memory path of these files can be tested. */
void *pto__bench_malloc(size_t n);
void *pto__bench_calloc(size_t n, size_t size);
void *pto__bench_realloc(void *p, size_t n);
char *pto__bench_strndup(const char *s, size_t n);

pto_status pto__bench_oom(const char *what);

/* Writes text to the output file path (what names it in messages) with base's pto_file_replace,
 * the one writer of every output flag: a temp file and a rename, a symlink kept, anything but a
 * regular file refused (a FIFO never blocks the run), every failure reported once. */
pto_status pto__bench_write_output(const char *path, const char *text, const char *what);

/* ---- stats storage ---------------------------------------------------------------------- */

typedef struct pto__bench_data {
  /* interned span names: open addressing over names[] */
  char **names;
  size_t nnames, names_cap;
  uint32_t *slots; /* index + 1 into names, 0 = empty */
  size_t nslots;
  /* spans of every kept launch, back to back; launches point into it once finished */
  pto_span *spans;
  size_t nspans, spans_cap;
  pto_bench_launch *launches;
  size_t nlaunches, launches_cap;
  size_t *span_start; /* per launch: index of its first span in spans */
  size_t span_start_cap;
  double *samples; /* PTO_BENCH_METRIC_COUNT * nlaunches */
} pto__bench_data;

/* A new, empty stats object (rounds etc. zero). */
pto_status pto__bench_stats_create(pto_bench_stats **out_stats);
/* The interned copy of name[0..len), or NULL when out of memory. */
const char *pto__bench_intern(pto_bench_stats *st, const char *name, size_t len);
/* Starts a launch; its spans follow with pto__bench_add_span. */
pto_status pto__bench_begin_launch(pto_bench_stats *st, uint64_t pid, uint64_t tid, uint64_t inv,
                                   uint64_t hid);
/* Adds a span to the launch begun last; name must come from pto__bench_intern. */
pto_status pto__bench_add_span(pto_bench_stats *st, const char *name, int depth, uint64_t ts,
                               uint64_t dur, bool is_device);
/* Sets launch pointers, samples and summaries; rounds = nlaunches. */
pto_status pto__bench_finish(pto_bench_stats *st);

#endif
