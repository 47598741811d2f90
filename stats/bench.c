/* pto_benchmark and the statistics object it shares with the [STRACE] parser (trace.c).
 *
 * Both producers feed the same builder: launches of spans with interned names. pto__bench_finish
 * derives the three samples of every launch from its span names alone, so a launch measured here
 * and the same launch read back from its [STRACE] lines give identical numbers. */
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_internal.h"
#include "pto/base.h"

/* ---- allocation ------------------------------------------------------------------------- */

/* base's allocator (pto/base.h), the one a test makes fail; these keep the stats files' names. */

void *pto__bench_malloc(size_t n) { return pto_malloc(n); }
void *pto__bench_calloc(size_t n, size_t size) { return pto_calloc(n, size); }
void *pto__bench_realloc(void *p, size_t n) { return pto_realloc(p, n); }
char *pto__bench_strndup(const char *s, size_t n) {
  char *d = pto__bench_malloc(n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}

pto_status pto__bench_oom(const char *what) {
  return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory for %s", what);
}

pto_status pto__bench_write_output(const char *path, const char *text, const char *what) {
  const void *bufs[1] = {text};
  size_t lens[1] = {strlen(text)};
  pto_status s = pto_file_replace(path, bufs, lens, 1);
  return s ? pto_status_annotate(s, "cannot write %s", what) : PTO_OK;
}

/* ---- names and options ------------------------------------------------------------------ */

void pto_bench_options_init(pto_bench_options *opt) {
  if (!opt) return;
  memset(opt, 0, sizeof *opt);
  opt->sz = sizeof *opt;
  opt->rounds = PTO_BENCH_DEFAULT_ROUNDS;
  opt->warmup = PTO_BENCH_DEFAULT_WARMUP;
}

void pto_trace_options_init(pto_trace_options *opt) {
  if (!opt) return;
  memset(opt, 0, sizeof *opt);
  opt->sz = sizeof *opt;
  opt->warmup = PTO_TRACE_WARMUP_AUTO;
}

const char *pto_bench_metric_name(pto_bench_metric m) {
  switch (m) {
  case PTO_BENCH_DEVICE_WALL: return "device_wall";
  case PTO_BENCH_HOST_WALL: return "host_wall";
  case PTO_BENCH_EFFECTIVE: return "effective";
  case PTO_BENCH_BUSY: return "busy";
  default: return NULL;
  }
}

int pto_bench_spread_from_name(const char *name) {
  static const char *const k[] = {"stdev", "minmax", "both", "none"};
  for (int i = 0; name && i < 4; i++)
    if (!strcmp(name, k[i])) return i;
  return -1;
}

/* ---- summaries -------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Sorts the non-NAN values of v into buf (n slots) and returns their count. */
static int sorted_values(const double *v, int n, double *buf) {
  int m = 0;
  for (int i = 0; i < n; i++)
    if (!isnan(v[i])) buf[m++] = v[i];
  qsort(buf, (size_t)m, sizeof *buf, cmp_double);
  return m;
}

static pto_bench_summary summarize_sorted(const double *s, int m) {
  pto_bench_summary r;
  memset(&r, 0, sizeof r);
  r.count = m;
  if (m == 0) return r;
  r.min = s[0];
  r.max = s[m - 1];
  r.median = m % 2 ? s[m / 2] : (s[m / 2 - 1] + s[m / 2]) / 2;
  double sum = 0;
  for (int i = 0; i < m; i++)
    sum += s[i];
  r.mean = sum / m;
  if (m > 1) {
    double sq = 0;
    for (int i = 0; i < m; i++)
      sq += (s[i] - r.mean) * (s[i] - r.mean);
    r.stdev = sqrt(sq / (m - 1));
  }
  return r;
}

pto_bench_summary pto_bench_summarize(const double *values, int n) {
  pto_bench_summary r;
  memset(&r, 0, sizeof r);
  if (!values || n <= 0) return r;
  double stackbuf[64];
  double *buf = n <= 64 ? stackbuf : pto_malloc((size_t)n * sizeof *buf);
  if (!buf) {
    /* No room to sort: everything but the median is still exact; say so with NAN. */
    double sum = 0, mn = INFINITY, mx = -INFINITY;
    int m = 0;
    for (int i = 0; i < n; i++) {
      if (isnan(values[i])) continue;
      sum += values[i], m++;
      mn = fmin(mn, values[i]), mx = fmax(mx, values[i]);
    }
    r.count = m;
    if (!m) return r;
    r.mean = sum / m, r.min = mn, r.max = mx, r.median = NAN;
    double sq = 0;
    for (int i = 0; i < n; i++)
      if (!isnan(values[i])) sq += (values[i] - r.mean) * (values[i] - r.mean);
    r.stdev = m > 1 ? sqrt(sq / (m - 1)) : 0;
    return r;
  }
  int m = sorted_values(values, n, buf);
  r = summarize_sorted(buf, m);
  if (buf != stackbuf) free(buf);
  return r;
}

/* ---- the stats object ------------------------------------------------------------------- */

pto_status pto__bench_stats_create(pto_bench_stats **out_stats) {
  *out_stats = NULL;
  pto_bench_stats *st = pto__bench_calloc(1, sizeof *st);
  if (!st) return pto__bench_oom("benchmark statistics");
  st->priv = pto__bench_calloc(1, sizeof *st->priv);
  if (!st->priv) {
    free(st);
    return pto__bench_oom("benchmark statistics");
  }
  *out_stats = st;
  return PTO_OK;
}

void pto_bench_stats_destroy(pto_bench_stats *st) {
  if (!st) return;
  pto__bench_data *d = st->priv;
  if (d) {
    for (size_t i = 0; i < d->nnames; i++)
      free(d->names[i]);
    free(d->names);
    free(d->slots);
    free(d->spans);
    free(d->launches);
    free(d->span_start);
    free(d->samples);
    free(d);
  }
  free(st);
}

static uint64_t hash_name(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  return h;
}

static int rehash(pto__bench_data *d, size_t nslots) {
  uint32_t *slots = pto__bench_calloc(nslots, sizeof *slots);
  if (!slots) return -1;
  for (size_t i = 0; i < d->nnames; i++) {
    size_t j = hash_name(d->names[i], strlen(d->names[i])) & (nslots - 1);
    while (slots[j])
      j = (j + 1) & (nslots - 1);
    slots[j] = (uint32_t)(i + 1);
  }
  free(d->slots);
  d->slots = slots;
  d->nslots = nslots;
  return 0;
}

const char *pto__bench_intern(pto_bench_stats *st, const char *name, size_t len) {
  pto__bench_data *d = st->priv;
  /* A name ends at a NUL byte, as its copy does: a log line holding one made the compare and
   * the hash read past the shorter copy (found by fuzz_strace). */
  len = strnlen(name, len);
  if (d->nslots) {
    size_t j = hash_name(name, len) & (d->nslots - 1);
    for (; d->slots[j]; j = (j + 1) & (d->nslots - 1)) {
      const char *c = d->names[d->slots[j] - 1];
      if (strncmp(c, name, len) == 0 && c[len] == 0) return c;
    }
  }
  if (d->nnames >= UINT32_MAX - 1) return NULL;
  /* Keep the table at most half full. */
  if ((d->nnames + 1) * 2 > d->nslots && rehash(d, d->nslots ? d->nslots * 2 : 16)) return NULL;
  if (pto_grow(&d->names, sizeof *d->names, &d->names_cap, d->nnames + 1)) return NULL;
  char *copy = pto__bench_strndup(name, len);
  if (!copy) return NULL;
  d->names[d->nnames++] = copy;
  size_t j = hash_name(copy, len) & (d->nslots - 1);
  while (d->slots[j])
    j = (j + 1) & (d->nslots - 1);
  d->slots[j] = (uint32_t)d->nnames;
  return copy;
}

pto_status pto__bench_begin_launch(pto_bench_stats *st, uint64_t pid, uint64_t tid, uint64_t inv,
                                   uint64_t hid) {
  pto__bench_data *d = st->priv;
  if (pto_grow(&d->launches, sizeof *d->launches, &d->launches_cap, d->nlaunches + 1) ||
      pto_grow(&d->span_start, sizeof *d->span_start, &d->span_start_cap, d->nlaunches + 1))
    return pto__bench_oom("launch records");
  if (d->nlaunches >= INT_MAX)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "too many launches");
  pto_bench_launch *l = &d->launches[d->nlaunches];
  memset(l, 0, sizeof *l);
  l->pid = pid, l->tid = tid, l->inv = inv, l->hid = hid;
  d->span_start[d->nlaunches] = d->nspans;
  d->nlaunches++;
  return PTO_OK;
}

pto_status pto__bench_add_span(pto_bench_stats *st, const char *name, int depth, uint64_t ts,
                               uint64_t dur, bool is_device) {
  pto__bench_data *d = st->priv;
  if (!d->nlaunches) return pto_status_make(PTO_STATUS_INTERNAL, "a span outside a launch");
  if (pto_grow(&d->spans, sizeof *d->spans, &d->spans_cap, d->nspans + 1))
    return pto__bench_oom("span records");
  pto_bench_launch *l = &d->launches[d->nlaunches - 1];
  if (l->nspans == INT_MAX) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "too many spans");
  pto_span *s = &d->spans[d->nspans++];
  s->name = name;
  s->depth = depth;
  s->ts_ns = ts;
  s->dur_ns = dur;
  s->is_device = is_device;
  l->nspans++;
  return PTO_OK;
}

/* The earliest span of l named prefix + suffix, or NULL. */
static const pto_span *find_span(const pto_bench_launch *l, const char *prefix,
                                 const char *suffix) {
  size_t np = strlen(prefix), ns = strlen(suffix);
  const pto_span *best = NULL;
  for (int i = 0; i < l->nspans; i++) {
    const char *n = l->spans[i].name;
    if (strncmp(n, prefix, np) || strncmp(n + np, suffix, ns) || n[np + ns]) continue;
    if (!best || l->spans[i].ts_ns < best->ts_ns) best = &l->spans[i];
  }
  return best;
}

/* Length of the union of two windows, either may be NULL; NAN when both are. */
static double union_us(const pto_span *a, const pto_span *b) {
  if (!a && !b) return NAN;
  if (!a || !b) return (double)(a ? a : b)->dur_ns / 1e3;
  uint64_t a0 = a->ts_ns, a1 = a->ts_ns + a->dur_ns, b0 = b->ts_ns, b1 = b->ts_ns + b->dur_ns;
  if (a1 < b0 || b1 < a0) return (double)(a->dur_ns + b->dur_ns) / 1e3; /* disjoint */
  uint64_t lo = a0 < b0 ? a0 : b0, hi = a1 > b1 ? a1 : b1;
  return (double)(hi - lo) / 1e3;
}

/* PyPTO's Effective: from the earlier start to the later end of the two windows, either may be
 * NULL; NAN when both are. */
static double hull_us(const pto_span *a, const pto_span *b) {
  if (!a && !b) return NAN;
  if (!a || !b) return (double)(a ? a : b)->dur_ns / 1e3;
  uint64_t a1 = a->ts_ns + a->dur_ns, b1 = b->ts_ns + b->dur_ns;
  uint64_t lo = a->ts_ns < b->ts_ns ? a->ts_ns : b->ts_ns, hi = a1 > b1 ? a1 : b1;
  return (double)(hi - lo) / 1e3;
}

static void launch_samples(pto_bench_launch *l) {
  const pto_span *root = NULL;
  for (int i = 0; i < l->nspans; i++)
    if (l->spans[i].depth == 0 && (!root || l->spans[i].ts_ns < root->ts_ns)) root = &l->spans[i];
  /* Without its root record (a torn log) the names still follow pto's own root. */
  const char *prefix = root ? root->name : "chip.run";
  const pto_span *dev = find_span(l, prefix, ".runner_run.device_wall");
  l->sample[PTO_BENCH_HOST_WALL] = root ? (double)root->dur_ns / 1e3 : NAN;
  l->sample[PTO_BENCH_DEVICE_WALL] = dev ? (double)dev->dur_ns / 1e3 : NAN;
  const pto_span *orch = find_span(l, prefix, ".runner_run.device_wall.orch");
  const pto_span *sched = find_span(l, prefix, ".runner_run.device_wall.sched");
  l->sample[PTO_BENCH_EFFECTIVE] = hull_us(orch, sched);
  l->sample[PTO_BENCH_BUSY] = union_us(orch, sched);
}

pto_status pto__bench_finish(pto_bench_stats *st) {
  pto__bench_data *d = st->priv;
  size_t n = d->nlaunches;
  free(d->samples);
  d->samples = pto__bench_calloc(n * PTO_BENCH_METRIC_COUNT, sizeof *d->samples);
  if (!d->samples) return pto__bench_oom("samples");
  double *buf = pto__bench_calloc(n, sizeof *buf);
  if (!buf) return pto__bench_oom("samples");
  for (size_t i = 0; i < n; i++) {
    pto_bench_launch *l = &d->launches[i];
    l->spans = d->spans + d->span_start[i];
    launch_samples(l);
    for (int m = 0; m < PTO_BENCH_METRIC_COUNT; m++)
      d->samples[m * n + i] = l->sample[m];
  }
  st->nlaunches = st->rounds = (int)n;
  st->launches = d->launches;
  for (int m = 0; m < PTO_BENCH_METRIC_COUNT; m++) {
    st->samples[m] = d->samples + m * n;
    int k = sorted_values(st->samples[m], (int)n, buf);
    st->summary[m] = summarize_sorted(buf, k);
  }
  free(buf);
  return PTO_OK;
}

/* ---- pto_benchmark ---------------------------------------------------------------------- */

/* opt with defaults where it is NULL, shorter than this header's struct, or zero-rounds. */
static pto_status read_options(const pto_bench_options *opt, pto_bench_options *o) {
  pto_bench_options_init(o);
  if (opt) {
    if (opt->sz < sizeof(size_t))
      return pto_status_make(
          PTO_STATUS_INVALID_ARGUMENT,
          "pto_benchmark: options.sz is %zu: set it to sizeof(pto_bench_options) "
          "(pto_bench_options_init does)",
          opt->sz);
    memcpy(o, opt, opt->sz < sizeof *o ? opt->sz : sizeof *o);
    o->sz = sizeof *o;
    if (o->rounds == 0) o->rounds = PTO_BENCH_DEFAULT_ROUNDS;
  }
  if (o->rounds < 0)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_benchmark: rounds is %d: it must be positive", o->rounds);
  if (o->warmup < 0)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_benchmark: warmup is %d: it must be 0 or more", o->warmup);
  if (o->rounds > INT_MAX - o->warmup)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_benchmark: %d warmup + %d rounds launches are too many", o->warmup,
                           o->rounds);
  return PTO_OK;
}

static pto_status run_launches(pto_worker *w, pto_handle *h, const pto_arg *args, size_t nargs,
                               const pto_bench_options *o, pto_bench_stats *st) {
  int total = o->warmup + o->rounds;
  uint64_t last_inv = 0;
  uint64_t pid = (uint64_t)getpid(), tid = (uint64_t)gettid();
  for (int i = 0; i < total; i++) {
    pto_status s = pto_handle_call(h, args, nargs);
    if (s)
      return pto_status_annotate(s, "benchmark launch %d of %d%s", i + 1, total,
                                 i < o->warmup ? " (warmup)" : "");
    pto_launch_record rec;
    s = pto_worker_last_launch(w, &rec);
    if (s) return pto_status_annotate(s, "benchmark launch %d of %d", i + 1, total);
    if (i > 0 && rec.inv == last_inv)
      return pto_status_make(PTO_STATUS_INTERNAL,
                             "benchmark launch %d of %d left no span record of its own", i + 1,
                             total);
    last_inv = rec.inv;
    st->ntasks = rec.ntasks;
    if (i >= o->warmup) {
      PTO_RETURN_IF_ERROR(pto__bench_begin_launch(st, pid, tid, rec.inv, rec.hid));
      for (int k = 0; k < rec.nspans && k < PTO_LAUNCH_MAX_SPANS; k++) {
        const pto_span *sp = &rec.spans[k];
        const char *name = sp->name ? sp->name : "";
        const char *in = pto__bench_intern(st, name, strlen(name));
        if (!in) return pto__bench_oom("span names");
        PTO_RETURN_IF_ERROR(
            pto__bench_add_span(st, in, sp->depth, sp->ts_ns, sp->dur_ns, sp->is_device));
      }
    }
    if (o->progress) o->progress(o->progress_ctx, i + 1, total);
  }
  return PTO_OK;
}

pto_status pto_benchmark(pto_worker *w, const pto_program *p, const pto_arg *args, size_t nargs,
                         const pto_bench_options *opt, pto_bench_stats **out_stats) {
  if (!out_stats)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_benchmark: out_stats is NULL");
  *out_stats = NULL;
  if (!p) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_benchmark: program is NULL");
  pto_bench_options o;
  PTO_RETURN_IF_ERROR(read_options(opt, &o));

  pto_worker *own = NULL;
  if (!w) {
    PTO_RETURN_IF_ERROR(pto_worker_open(o.run_config, &own));
    w = own;
  }
  pto_bench_stats *st = NULL;
  pto_handle *h = NULL;
  pto_status s = pto_worker_register(w, p, &h);
  if (!s) s = pto__bench_stats_create(&st);
  if (!s) s = run_launches(w, h, args, nargs, &o, st);
  if (!s) {
    st->warmup = o.warmup;
    st->hid = pto_program_hid(p);
    st->ncores = pto_worker_core_count(w);
    s = pto__bench_finish(st);
  }
  if (h) pto_handle_unregister(h);
  if (own) pto_worker_close(own);
  if (s) {
    pto_bench_stats_destroy(st);
    return s;
  }
  *out_stats = st;
  return PTO_OK;
}
