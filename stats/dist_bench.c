/* L3 benchmark statistics (pto/dist_bench.h): rounds of a host program on a distributed worker,
 * each dispatch's launch record read back from its chip, folded into per-round, per-rank and
 * per-dispatch views. Each dispatch slot is kept as an L2 pto_bench_stats of its own, so its
 * samples and mean tree come from the same code as pto_benchmark's. */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "pto/base.h"
#include "pto/dist_bench.h"

typedef struct pto__dist_bench_data {
  double *per_round; /* [metric * rounds + round] */
  pto_bench_summary *per_rank;
  pto_dist_bench_slot *slots;
  pto_dist_bench_group *groups;
  int *round_n;
  pto_dist_bench_dispatch **rounds;
  char **names; /* interned callee names */
  int nnames, capnames;
} pto__dist_bench_data;

const char *pto_dist_metric_name(pto_dist_metric m) {
  static const char *const k[] = {"device", "host", "effective", "union", "host_function"};
  return (unsigned)m < PTO_DIST_METRIC_COUNT ? k[m] : NULL;
}

static const char *intern(pto__dist_bench_data *d, const char *s) {
  for (int i = 0; i < d->nnames; i++)
    if (!strcmp(d->names[i], s)) return d->names[i];
  if (pto_grow_int(&d->names, sizeof *d->names, &d->capnames, (int64_t)d->nnames + 1)) return NULL;
  return (d->names[d->nnames] = pto_strdup(s)) ? d->names[d->nnames++] : NULL;
}

void pto_dist_bench_stats_destroy(pto_dist_bench_stats *st) {
  if (!st) return;
  pto__dist_bench_data *d = st->priv;
  if (d) {
    free(d->per_round);
    free(d->per_rank);
    for (int i = 0; i < st->nslots; i++)
      pto_bench_stats_destroy(d->slots[i].stats);
    free(d->slots);
    free(d->groups);
    free(d->round_n);
    for (int r = 0; r < st->rounds && d->rounds; r++)
      free(d->rounds[r]);
    free(d->rounds);
    for (int i = 0; i < d->nnames; i++)
      free(d->names[i]);
    free(d->names);
    free(d);
  }
  free(st);
}

static const pto_span *span_named(const pto_launch_record *l, const char *name) {
  for (int i = 0; i < l->nspans; i++)
    if (l->spans[i].name && !strcmp(l->spans[i].name, name)) return &l->spans[i];
  return NULL;
}

/* The three L2 samples of one dispatch, as pto_benchmark computes them for a launch. */
static void samples_of(const pto_launch_record *l, double out[3]) {
  pto_bench_stats *one = NULL;
  out[0] = out[1] = out[2] = NAN;
  if (pto__bench_stats_create(&one)) return;
  pto_status s = pto__bench_begin_launch(one, 0, 0, l->inv, l->hid);
  for (int k = 0; !s && k < l->nspans; k++) {
    const char *in = pto__bench_intern(one, l->spans[k].name, strlen(l->spans[k].name));
    s = in ? pto__bench_add_span(one, in, l->spans[k].depth, l->spans[k].ts_ns, l->spans[k].dur_ns,
                                 l->spans[k].is_device)
           : pto__bench_oom("span names");
  }
  if (!s) s = pto__bench_finish(one);
  if (!s) {
    out[0] = one->launches[0].sample[PTO_BENCH_DEVICE_WALL];
    out[1] = one->launches[0].sample[PTO_BENCH_HOST_WALL];
    out[2] = one->launches[0].sample[PTO_BENCH_EFFECTIVE];
  }
  pto_status_free(s);
  pto_bench_stats_destroy(one);
}

typedef struct win {
  uint64_t lo, hi;
} win;

static int cmp_win(const void *a, const void *b) {
  const win *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Length of the union of n windows, us (sorts w). */
static double union_len(win *w, int n) {
  if (n == 0) return NAN;
  qsort(w, (size_t)n, sizeof *w, cmp_win);
  uint64_t total = 0, lo = w[0].lo, hi = w[0].hi;
  for (int i = 1; i < n; i++) {
    if (w[i].lo > hi) {
      total += hi - lo;
      lo = w[i].lo;
      hi = w[i].hi;
    } else if (w[i].hi > hi) {
      hi = w[i].hi;
    }
  }
  return (double)(total + hi - lo) / 1e3;
}

/* Copies a run's dispatches into round r's list. */
static pto_status keep_round(pto_dist_bench_stats *st, int r, const pto_dist_run_record *rr) {
  pto__dist_bench_data *d = st->priv;
  d->rounds[r] = pto_calloc((size_t)(rr->ndispatches ? rr->ndispatches : 1), sizeof **d->rounds);
  if (!d->rounds[r]) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  d->round_n[r] = rr->ndispatches;
  for (int i = 0; i < rr->ndispatches; i++) {
    const pto_dist_dispatch *dp = &rr->dispatches[i];
    pto_dist_bench_dispatch *o = &d->rounds[r][i];
    double smp[3];
    samples_of(&dp->launch, smp);
    o->rank = dp->rank;
    o->slot = dp->slot;
    o->name = intern(d, dp->name ? dp->name : "?");
    if (!o->name) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
    o->tasks = dp->launch.ntasks;
    o->device_us = smp[0];
    o->host_us = smp[1];
    o->effective_us = smp[2];
  }
  return PTO_OK;
}

/* per_round, per_rank and the two flags, from the kept rounds and their windows. */
static pto_status fold(pto_dist_bench_stats *st, const double *host_us, win *const *wins) {
  pto__dist_bench_data *d = st->priv;
  int R = st->rounds, n = st->nranks;
  /* Shape: per rank, the count and callee sequence of its dispatches in every round. */
  for (int r = 1; r < R; r++) {
    for (int k = 0; k < n; k++) {
      int c0 = 0, c1 = 0;
      for (int i = 0; i < d->round_n[0]; i++)
        c0 += d->rounds[0][i].rank == k;
      for (int i = 0; i < d->round_n[r]; i++)
        c1 += d->rounds[r][i].rank == k;
      if (c0 != c1) st->fallback_flattened = 1;
    }
    if (d->round_n[r] != d->round_n[0]) {
      st->unstable_dispatch_slots = 1;
      continue;
    }
    for (int i = 0; i < d->round_n[0]; i++) {
      const pto_dist_bench_dispatch *a = &d->rounds[0][i], *b = &d->rounds[r][i];
      if (a->rank != b->rank || a->slot != b->slot || a->name != b->name)
        st->unstable_dispatch_slots = 1;
    }
  }
  if (st->fallback_flattened) st->unstable_dispatch_slots = 1;

  d->per_round = pto_malloc(sizeof(double) * (size_t)(PTO_DIST_METRIC_COUNT * R));
  double *rank_v = pto_malloc(sizeof(double) * (size_t)(PTO_DIST_METRIC_COUNT * R * n));
  win *tmp = pto_malloc(sizeof(win) * 1024);
  if (!d->per_round || !rank_v || !tmp) {
    free(rank_v);
    free(tmp);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  for (int r = 0; r < R; r++) {
    double dev = NAN, eff = NAN, host = NAN;
    for (int k = 0; k < n; k++) {
      double sd = 0, sh = 0, se = 0;
      int cnt = 0, nw = 0;
      for (int i = 0; i < d->round_n[r]; i++) {
        const pto_dist_bench_dispatch *x = &d->rounds[r][i];
        if (x->rank != k) continue;
        cnt++;
        sd += isnan(x->device_us) ? 0 : x->device_us;
        sh += isnan(x->host_us) ? 0 : x->host_us;
        se += isnan(x->effective_us) ? 0 : x->effective_us;
        if (nw < 1024) tmp[nw++] = wins[r][i];
      }
      double *v = rank_v + ((size_t)k * PTO_DIST_METRIC_COUNT) * (size_t)R;
      v[PTO_DIST_DEVICE * R + r] = cnt ? sd : NAN;
      v[PTO_DIST_HOST * R + r] = cnt ? sh : NAN;
      v[PTO_DIST_EFFECTIVE * R + r] = cnt ? se : NAN;
      v[PTO_DIST_UNION * R + r] = union_len(tmp, nw);
      v[PTO_DIST_HOST_FUNCTION * R + r] = NAN; /* the parent's, no rank's */
      if (cnt && (isnan(dev) || sd > dev)) dev = sd;
      if (cnt && (isnan(eff) || se > eff)) eff = se;
      if (cnt && (isnan(host) || sh > host)) host = sh;
    }
    int nw = d->round_n[r] < 1024 ? d->round_n[r] : 1024;
    memcpy(tmp, wins[r], sizeof *tmp * (size_t)nw);
    d->per_round[PTO_DIST_DEVICE * R + r] = dev;
    d->per_round[PTO_DIST_HOST * R + r] = host; /* PyPTO's: the slowest rank's summed walls */
    d->per_round[PTO_DIST_HOST_FUNCTION * R + r] = host_us[r];
    d->per_round[PTO_DIST_EFFECTIVE * R + r] = eff;
    d->per_round[PTO_DIST_UNION * R + r] = st->fallback_flattened ? NAN : union_len(tmp, nw);
  }
  for (int m = 0; m < PTO_DIST_METRIC_COUNT; m++) {
    st->per_round[m] = d->per_round + (size_t)m * (size_t)R;
    st->per_round_summary[m] = pto_bench_summarize(st->per_round[m], R);
  }
  if (!st->fallback_flattened) {
    d->per_rank = pto_calloc((size_t)(n * PTO_DIST_METRIC_COUNT), sizeof *d->per_rank);
    if (!d->per_rank) {
      free(rank_v);
      free(tmp);
      return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    for (int k = 0; k < n; k++)
      for (int m = 0; m < PTO_DIST_METRIC_COUNT; m++)
        d->per_rank[k * PTO_DIST_METRIC_COUNT + m] = pto_bench_summarize(
            rank_v + ((size_t)k * PTO_DIST_METRIC_COUNT + (size_t)m) * (size_t)R, R);
    st->per_rank = d->per_rank;
  }
  free(rank_v);
  free(tmp);
  return PTO_OK;
}

/* dispatch_groups: device walls by callee name over every round. */
static pto_status groups(pto_dist_bench_stats *st) {
  pto__dist_bench_data *d = st->priv;
  d->groups = pto_calloc((size_t)(d->nnames ? d->nnames : 1), sizeof *d->groups);
  size_t total = 0;
  for (int r = 0; r < st->rounds; r++)
    total += (size_t)d->round_n[r];
  double *v = pto_malloc(sizeof(double) * (total ? total : 1));
  if (!d->groups || !v) {
    free(v);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  for (int g = 0; g < d->nnames; g++) {
    int m = 0;
    for (int r = 0; r < st->rounds; r++)
      for (int i = 0; i < d->round_n[r]; i++)
        if (d->rounds[r][i].name == d->names[g]) v[m++] = d->rounds[r][i].device_us;
    d->groups[g].name = d->names[g];
    d->groups[g].device = pto_bench_summarize(v, m);
  }
  st->ngroups = d->nnames;
  st->dispatch_groups = d->groups;
  free(v);
  return PTO_OK;
}

/* The stats under construction: rounds are added one by one (from a benchmark or a log), then
 * folded. */
typedef struct builder {
  pto_dist_bench_stats *st;
  double *host;
  win **wins;
  int rounds; /* of wins */
} builder;

static pto_status builder_begin(builder *b, int rounds, int warmup, int nranks) {
  memset(b, 0, sizeof *b);
  pto_dist_bench_stats *st = pto_calloc(1, sizeof *st);
  pto__dist_bench_data *d = st ? pto_calloc(1, sizeof *d) : NULL;
  if (!d) {
    free(st);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  st->priv = d;
  st->rounds = rounds;
  st->warmup = warmup;
  st->nranks = nranks;
  b->st = st;
  b->rounds = rounds;
  d->round_n = pto_calloc((size_t)rounds, sizeof *d->round_n);
  d->rounds = pto_calloc((size_t)rounds, sizeof *d->rounds);
  b->host = pto_calloc((size_t)rounds, sizeof *b->host);
  b->wins = pto_calloc((size_t)rounds, sizeof *b->wins);
  if (!d->round_n || !d->rounds || !b->host || !b->wins)
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  return PTO_OK;
}

static void builder_free(builder *b) {
  for (int r = 0; b->wins && r < b->rounds; r++)
    free(b->wins[r]);
  free(b->wins);
  free(b->host);
  pto_dist_bench_stats_destroy(b->st);
  memset(b, 0, sizeof *b);
}

/* Round r's dispatches and host wall. */
static pto_status builder_add(builder *b, int r, const pto_dist_run_record *rr, double host_us) {
  pto_dist_bench_stats *st = b->st;
  pto__dist_bench_data *d = st->priv;
  PTO_RETURN_IF_ERROR(keep_round(st, r, rr));
  b->host[r] = host_us;
  b->wins[r] = pto_malloc(sizeof(win) * (size_t)(rr->ndispatches ? rr->ndispatches : 1));
  if (!b->wins[r]) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int k = 0; k < rr->ndispatches; k++) {
    const pto_span *root = span_named(&rr->dispatches[k].launch, "chip.run");
    b->wins[r][k] = root ? (win){root->ts_ns, root->ts_ns + root->dur_ns} : (win){0, 0};
  }
  /* Slots: the first round names them; each later round adds a launch to each. */
  pto_status s = PTO_OK;
  if (r == 0) {
    d->slots = pto_calloc((size_t)(rr->ndispatches ? rr->ndispatches : 1), sizeof *d->slots);
    if (!d->slots) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int k = 0; !s && k < rr->ndispatches; k++) {
      const pto_dist_dispatch *dp = &rr->dispatches[k];
      pto_dist_bench_slot *sl = &d->slots[k];
      sl->rank = dp->rank;
      sl->device = dp->device;
      sl->pid = dp->pid;
      sl->slot = dp->slot;
      sl->name = d->rounds[0][k].name;
      sl->hid = dp->launch.hid;
      s = pto__bench_stats_create(&sl->stats);
      st->nslots = k + 1;
    }
  }
  for (int k = 0; !s && k < rr->ndispatches && k < st->nslots; k++) {
    const pto_dist_dispatch *dp = &rr->dispatches[k];
    pto_bench_stats *ss = d->slots[k].stats;
    d->slots[k].tasks = dp->launch.ntasks;
    s = pto__bench_begin_launch(ss, (uint64_t)dp->pid, 0, dp->launch.inv, dp->launch.hid);
    for (int q = 0; !s && q < dp->launch.nspans; q++) {
      const pto_span *sp = &dp->launch.spans[q];
      const char *in = pto__bench_intern(ss, sp->name, strlen(sp->name));
      s = in ? pto__bench_add_span(ss, in, sp->depth, sp->ts_ns, sp->dur_ns, sp->is_device)
             : pto__bench_oom("span names");
    }
  }
  return s;
}

static pto_status builder_finish(builder *b, pto_dist_bench_stats **out) {
  pto_dist_bench_stats *st = b->st;
  pto__dist_bench_data *d = st->priv;
  pto_status s = fold(st, b->host, b->wins);
  for (int k = 0; !s && k < st->nslots; k++) {
    d->slots[k].stats->warmup = st->warmup;
    d->slots[k].stats->hid = d->slots[k].hid;
    s = pto__bench_finish(d->slots[k].stats);
  }
  if (!s) s = groups(st);
  if (s) return s;
  if (!st->unstable_dispatch_slots) st->per_dispatch = d->slots;
  st->round_ndispatches = d->round_n;
  st->rounds_dispatches = (const pto_dist_bench_dispatch *const *)d->rounds;
  *out = st;
  b->st = NULL;
  builder_free(b);
  return PTO_OK;
}

pto_status pto_dist_benchmark(pto_dist_worker *w, const pto_program *p, const pto_arg *args,
                              size_t nargs, const pto_bench_options *opt,
                              pto_dist_bench_stats **out) {
  if (!out) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_dist_benchmark: out is NULL");
  *out = NULL;
  pto_bench_options o;
  pto_bench_options_init(&o);
  if (opt) memcpy(&o, opt, opt->sz < sizeof o ? opt->sz : sizeof o);
  if (o.rounds <= 0 || o.warmup < 0 || o.rounds > 100000 || o.warmup > 100000)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_dist_benchmark: rounds %d (1 to 100000) or warmup %d (0 to "
                           "100000) out of range",
                           o.rounds, o.warmup);
  builder b;
  pto_status s = builder_begin(&b, o.rounds, o.warmup, pto_dist_worker_device_count(w));
  int total = o.warmup + o.rounds;
  for (int i = 0; !s && i < total; i++) {
    s = pto_dist_worker_run(w, p, args, nargs);
    if (s) {
      s = pto_status_annotate(s, "benchmark run %d of %d%s", i + 1, total,
                              i < o.warmup ? " (warmup)" : "");
      break;
    }
    if (o.progress) o.progress(o.progress_ctx, i + 1, total);
    if (i < o.warmup) continue;
    pto_dist_run_record rr;
    s = pto_dist_worker_last_run(w, &rr);
    if (!s) s = builder_add(&b, i - o.warmup, &rr, (double)rr.dur_ns / 1e3);
  }
  if (!s) s = builder_finish(&b, out);
  if (s) builder_free(&b);
  return s;
}

/* ---- an L3 log ---------------------------------------------------------------------------- */

typedef struct rec {
  uint64_t pid, inv, hid, ts, dur;
  int depth, is_device, rank, slot, chip, l3;
  char name[64], callee[64];
} rec;

/* The value of " key=" in [p, end) as text (up to a blank), or NULL. */
static const char *field(const char *p, const char *end, const char *key, size_t *out_len) {
  size_t kl = strlen(key);
  for (const char *q = p; q + kl < end; q++) {
    if ((q == p || q[-1] == ' ') && !strncmp(q, key, kl) && q[kl] == '=') {
      const char *v = q + kl + 1, *e = v;
      while (e < end && *e != ' ' && *e != '\n' && *e != '\r')
        e++;
      *out_len = (size_t)(e - v);
      return v;
    }
  }
  return NULL;
}

static int num_field(const char *p, const char *end, const char *key, int base, uint64_t *out) {
  size_t n;
  const char *v = field(p, end, key, &n);
  if (!v || !n || n > 20) return 0;
  char buf[24];
  memcpy(buf, v, n);
  buf[n] = '\0';
  char *e;
  *out = strtoull(buf, &e, base);
  return *e == '\0';
}

/* The field out of range in a record, and its text. */
typedef struct bad_field {
  const char *key, *text;
  size_t len;
  int max;
} bad_field;

/* An int field of at most max, into *out (left as it is when the record has no such field):
 * 0, or -1 when the value is larger or negative (*bad says which). */
static int int_field(const char *p, const char *end, const char *key, int max, int *out,
                     bad_field *bad) {
  uint64_t v;
  size_t n;
  const char *text = field(p, end, key, &n);
  if (!text) return 0;
  if (!num_field(p, end, key, 10, &v) || *text == '-' || *text == '+' || v > (uint64_t)max) {
    *bad = (bad_field){key, text, n, max};
    return -1;
  }
  *out = (int)v;
  return 0;
}

/* 1: a record; 0: not one (skipped); -1: a field out of range, *bad naming it (the world size
 * and the tables sized by it come from these numbers). */
static int parse_rec(const char *p, const char *end, rec *r, bad_field *bad) {
  memset(r, 0, sizeof *r);
  r->rank = r->slot = r->chip = -1;
  size_t n;
  const char *nm = field(p, end, "name", &n);
  if (!nm || n >= sizeof r->name) return 0;
  memcpy(r->name, nm, n);
  if (!num_field(p, end, "pid", 10, &r->pid) || !num_field(p, end, "inv", 10, &r->inv) ||
      !num_field(p, end, "hid", 16, &r->hid) || !num_field(p, end, "ts", 10, &r->ts) ||
      !num_field(p, end, "dur", 10, &r->dur) || !field(p, end, "depth", &n))
    return 0;
  if (int_field(p, end, "depth", INT_MAX, &r->depth, bad) ||
      int_field(p, end, "rank", PTO_DIST_TRACE_MAX_RANKS - 1, &r->rank, bad) ||
      int_field(p, end, "slot", INT_MAX, &r->slot, bad) ||
      int_field(p, end, "chip", INT_MAX, &r->chip, bad) ||
      int_field(p, end, "l3", INT_MAX, &r->l3, bad))
    return -1;
  const char *clk = field(p, end, "clk", &n);
  r->is_device = clk && n == 3 && !strncmp(clk, "dev", 3);
  const char *c = field(p, end, "callee", &n);
  if (c && n < sizeof r->callee) memcpy(r->callee, c, n);
  return 1;
}

/* A run of the host function: node.graph_build with l3=1 (host.run in logs of older pto). */
static int is_run(const rec *r) {
  return r->l3 && (!strcmp(r->name, "node.graph_build") || !strcmp(r->name, "host.run"));
}

/* One call of the host function's run: node.dispatch (host.dispatch in logs of older pto). */
static int is_dispatch(const rec *r) {
  return !strcmp(r->name, "node.dispatch") || !strcmp(r->name, "host.dispatch");
}

/* Indexes of the records, each sorted by a key and then by position, so a lookup is a binary
 * search and the records of one key come in log order: reading a log of R runs and D dispatches
 * takes O(N log N), not O((R + D) N) (a log of 20000 runs read for minutes). */
typedef struct rec_key {
  uint64_t a, b;
  size_t i;
} rec_key;

static int cmp_key(const void *x, const void *y) {
  const rec_key *p = x, *q = y;
  if (p->a != q->a) return p->a < q->a ? -1 : 1;
  if (p->b != q->b) return p->b < q->b ? -1 : 1;
  return p->i < q->i ? -1 : p->i > q->i;
}

/* The first entry of keys[0..n) with key (a, b), or n. */
static size_t key_first(const rec_key *keys, size_t n, uint64_t a, uint64_t b) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (keys[mid].a < a || (keys[mid].a == a && keys[mid].b < b))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && keys[lo].a == a && keys[lo].b == b ? lo : n;
}

/* A chip's pid as the records compare it with a dispatch's chip= (an int). */
static uint64_t chip_pid(uint64_t pid) { return (uint64_t)(uint32_t)(int)pid; }

pto_status pto_dist_trace_parse(const char *text, size_t len, int warmup,
                                pto_dist_bench_stats **out) {
  if (!out)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_dist_trace_parse: out is NULL");
  if (!text && len)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_dist_trace_parse: text is NULL");
  *out = NULL;
  rec *recs = NULL;
  size_t nrec = 0, cap = 0;
  const char *end = text + len;
  size_t line = 0;
  for (const char *p = text; p < end;) {
    line++;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    const char *m = NULL;
    for (const char *q = p; q + 14 <= le; q++)
      if (!strncmp(q, "[STRACE] v=1 ", 13)) {
        m = q + 13;
        break;
      }
    if (m) {
      if (pto_grow(&recs, sizeof *recs, &cap, nrec + 1)) {
        free(recs);
        return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory reading a log");
      }
      bad_field bad;
      int got = parse_rec(m - 1, le, &recs[nrec], &bad);
      if (got < 0) {
        free(recs);
        return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                               "line %zu: %s=%.*s is not an integer from 0 to %d", line, bad.key,
                               (int)(bad.len > 40 ? 40 : bad.len), bad.text, bad.max);
      }
      nrec += (size_t)got;
    }
    p = nl ? nl + 1 : end;
  }
  /* Rounds: the run records (l3=1) of the first process that wrote them, in inv order. */
  int nrounds = 0, nranks = 0;
  uint64_t parent = 0;
  for (size_t i = 0; i < nrec; i++)
    if (is_run(&recs[i])) {
      if (!parent) parent = recs[i].pid;
      if (recs[i].pid == parent) nrounds++;
    }
  pto_status s = PTO_OK;
  if (nrounds <= warmup) {
    s = pto_status_make(
        PTO_STATUS_INVALID_ARGUMENT,
        "no L3 runs to measure: the log holds %d node.graph_build record%s (l3=1) and "
        "%d are warmup; write it with PTO_LOG_LEVEL=timing (or pto run --trace) "
        "around a distributed worker's runs",
        nrounds, nrounds == 1 ? "" : "s", warmup);
    free(recs);
    return s;
  }
  /* by_inv: every record by (pid, inv); by_chip: by (the chip's pid, inv); runs: the chip.run
   * roots (depth 0) by (the chip's pid, ts). */
  rec_key *by_inv = pto_malloc(sizeof *by_inv * (nrec ? nrec : 1)),
          *by_chip = pto_malloc(sizeof *by_chip * (nrec ? nrec : 1)),
          *runs = pto_malloc(sizeof *runs * (nrec ? nrec : 1));
  size_t nruns = 0;
  if (!by_inv || !by_chip || !runs) {
    free(by_inv);
    free(by_chip);
    free(runs);
    free(recs);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory reading a log");
  }
  for (size_t i = 0; i < nrec; i++) {
    by_inv[i] = (rec_key){recs[i].pid, recs[i].inv, i};
    by_chip[i] = (rec_key){chip_pid(recs[i].pid), recs[i].inv, i};
    if (recs[i].depth == 0 && !strcmp(recs[i].name, "chip.run"))
      runs[nruns++] = (rec_key){chip_pid(recs[i].pid), recs[i].ts, i};
  }
  qsort(by_inv, nrec, sizeof *by_inv, cmp_key);
  qsort(by_chip, nrec, sizeof *by_chip, cmp_key);
  qsort(runs, nruns, sizeof *runs, cmp_key);
  builder b;
  int measured = nrounds - warmup;
  pto_dist_dispatch *disp = NULL;
  size_t capd = 0;
  int round = -1;
  for (size_t i = 0; !s && i < nrec; i++) {
    if (!(is_run(&recs[i]) && recs[i].pid == parent)) continue;
    round++;
    if (round < warmup) continue;
    if (round == warmup) {
      /* the world size: the largest rank seen + 1 */
      for (size_t j = 0; j < nrec; j++)
        if (recs[j].rank + 1 > nranks) nranks = recs[j].rank + 1;
      if ((s = builder_begin(&b, measured, warmup, nranks))) break;
    }
    const rec *hr = &recs[i];
    /* This run's dispatches: its node.dispatch lines, each matched to the chip's launch. */
    int nd = 0;
    for (size_t e = key_first(by_inv, nrec, parent, hr->inv);
         e < nrec && by_inv[e].a == parent && by_inv[e].b == hr->inv; e++) {
      const rec *x = &recs[by_inv[e].i];
      if (!is_dispatch(x)) continue;
      if (pto_grow(&disp, sizeof *disp, &capd, (size_t)nd + 1)) {
        s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory reading a log");
        break;
      }
      pto_dist_dispatch *dp = &disp[nd++];
      memset(dp, 0, sizeof *dp);
      dp->rank = x->rank;
      dp->device = x->rank;
      dp->pid = x->chip;
      dp->slot = x->slot;
      dp->name = x->callee;
      dp->launch.hid = x->hid;
      dp->launch.ok = 1;
      /* The chip's invocation whose chip.run starts at the dispatch's ts, on the dispatch's
       * rank: chips that are threads of one process share its pid, and two of them can start a
       * launch in the same nanosecond. */
      uint64_t cinv = 0, cpid = (uint64_t)(uint32_t)x->chip;
      for (size_t e = key_first(runs, nruns, cpid, x->ts);
           e < nruns && runs[e].a == cpid && runs[e].b == x->ts; e++) {
        const rec *k = &recs[runs[e].i];
        if (k->rank < 0 || x->rank < 0 || k->rank == x->rank) {
          cinv = k->inv;
          break;
        }
      }
      dp->launch.inv = cinv;
      /* Its spans: the chip's lines of that invocation. The host's own lines are left out: with
       * chips as threads they share the pid, and the host's run counter is not the chips'
       * launch counter, so the two invs can be equal. */
      for (size_t e = cinv ? key_first(by_chip, nrec, cpid, cinv) : nrec;
           e < nrec && by_chip[e].a == cpid && by_chip[e].b == cinv &&
           dp->launch.nspans < PTO_LAUNCH_MAX_SPANS;
           e++) {
        const rec *c = &recs[by_chip[e].i];
        if (is_run(c) || is_dispatch(c)) continue;
        pto_span *sp = &dp->launch.spans[dp->launch.nspans++];
        sp->name = c->name;
        sp->depth = c->depth;
        sp->ts_ns = c->ts;
        sp->dur_ns = c->dur;
        sp->is_device = c->is_device;
      }
    }
    if (s) break;
    pto_dist_run_record rr = {hr->ts, hr->dur, nd, disp, 0};
    s = builder_add(&b, round - warmup, &rr, (double)hr->dur / 1e3);
  }
  if (!s)
    s = builder_finish(&b, out);
  else if (round >= warmup)
    builder_free(&b);
  free(disp);
  free(by_inv);
  free(by_chip);
  free(runs);
  free(recs);
  return s;
}

/* ---- text ------------------------------------------------------------------------------- */

static void row(pto_text *t, const char *label, const pto_bench_summary *s) {
  if (!s->count) {
    pto_text_printf(t, "%-34s %5s\n", label, "-");
    return;
  }
  pto_text_printf(t, "%-34s %5d %10.1f %10.1f %10.1f %10.1f %9.1f\n", label, s->count, s->min,
                  s->median, s->mean, s->max, s->stdev);
}

static void header(pto_text *t, const char *title) {
  pto_text_printf(t, "%-34s %5s %10s %10s %10s %10s %9s\n", title, "n", "min us", "median", "mean",
                  "max", "stdev");
}

pto_status pto_dist_bench_stats_render(const pto_dist_bench_stats *st, char **out_text) {
  if (!st)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_dist_bench_stats_render: st is NULL");
  if (!out_text)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_dist_bench_stats_render: out_text is NULL");
  pto_text t = {0};
  pto_text_printf(&t, "%d rounds after %d warmup on %d ranks%s%s\n", st->rounds, st->warmup,
                  st->nranks, st->unstable_dispatch_slots ? "; unstable_dispatch_slots" : "",
                  st->fallback_flattened ? "; fallback_flattened" : "");
  header(&t, "per_round");
  for (int m = 0; m < PTO_DIST_METRIC_COUNT; m++)
    row(&t, pto_dist_metric_name((pto_dist_metric)m), &st->per_round_summary[m]);
  if (st->per_rank) {
    header(&t, "per_rank (device: summed walls)");
    for (int k = 0; k < st->nranks; k++) {
      char label[64];
      snprintf(label, sizeof label, "rank %d device", k);
      row(&t, label, &st->per_rank[k * PTO_DIST_METRIC_COUNT + PTO_DIST_DEVICE]);
    }
  }
  if (st->per_dispatch) {
    header(&t, "per_dispatch (device wall)");
    for (int i = 0; i < st->nslots; i++) {
      const pto_dist_bench_slot *sl = &st->per_dispatch[i];
      char label[96];
      snprintf(label, sizeof label, "rank %d slot %d @%s", sl->rank, sl->slot, sl->name);
      row(&t, label, &sl->stats->summary[PTO_BENCH_DEVICE_WALL]);
    }
  }
  header(&t, "dispatch_groups (device wall)");
  for (int g = 0; g < st->ngroups; g++) {
    char label[96];
    snprintf(label, sizeof label, "@%s", st->dispatch_groups[g].name);
    row(&t, label, &st->dispatch_groups[g].device);
  }
  char *text = pto_text_finish(&t);
  if (!text) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  *out_text = text;
  return PTO_OK;
}

/* ---- JSON ------------------------------------------------------------------------------- */

static json_t *num(double v) { return isnan(v) ? json_null() : json_real(v); }

static json_t *summary(const pto_bench_summary *s) {
  return json_pack("{s:i,s:o,s:o,s:o,s:o,s:o}", "n", s->count, "min", num(s->min), "median",
                   num(s->median), "mean", num(s->mean), "max", num(s->max), "stdev",
                   num(s->stdev));
}

static json_t *metrics(const pto_bench_summary *s) {
  json_t *o = json_object();
  for (int m = 0; o && m < PTO_DIST_METRIC_COUNT; m++)
    json_object_set_new(o, pto_dist_metric_name((pto_dist_metric)m), summary(&s[m]));
  return o;
}

pto_status pto_dist_bench_stats_to_json(const pto_dist_bench_stats *st, char **out_json) {
  if (!st)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_dist_bench_stats_to_json: st is NULL");
  if (!out_json)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_dist_bench_stats_to_json: out_json is NULL");
  json_t *root = json_object();
  json_t *per_round = metrics(st->per_round_summary);
  json_t *samples = json_object();
  for (int m = 0; m < PTO_DIST_METRIC_COUNT; m++) {
    json_t *a = json_array();
    for (int r = 0; r < st->rounds; r++)
      json_array_append_new(a, num(st->per_round[m][r]));
    json_object_set_new(samples, pto_dist_metric_name((pto_dist_metric)m), a);
  }
  json_object_set_new(per_round, "samples", samples);
  json_object_set_new(root, "rounds", json_integer(st->rounds));
  json_object_set_new(root, "warmup", json_integer(st->warmup));
  json_object_set_new(root, "nranks", json_integer(st->nranks));
  json_object_set_new(root, "per_round", per_round);
  json_t *per_rank = json_array();
  for (int k = 0; st->per_rank && k < st->nranks; k++) {
    json_t *o = metrics(&st->per_rank[k * PTO_DIST_METRIC_COUNT]);
    json_object_set_new(o, "rank", json_integer(k));
    json_array_append_new(per_rank, o);
  }
  json_object_set_new(root, "per_rank", per_rank);
  json_t *per_dispatch = json_array(), *tasks = json_array();
  for (int i = 0; st->per_dispatch && i < st->nslots; i++) {
    const pto_dist_bench_slot *sl = &st->per_dispatch[i];
    char hid[17];
    snprintf(hid, sizeof hid, "%llx", (unsigned long long)sl->hid);
    json_t *o = json_pack("{s:i,s:i,s:i,s:i,s:s,s:s,s:I}", "rank", sl->rank, "device",
                          (int)sl->device, "pid", sl->pid, "slot", sl->slot, "name", sl->name,
                          "hid", hid, "tasks", (json_int_t)sl->tasks);
    json_object_set_new(o, "device", summary(&sl->stats->summary[PTO_BENCH_DEVICE_WALL]));
    json_object_set_new(o, "host", summary(&sl->stats->summary[PTO_BENCH_HOST_WALL]));
    json_object_set_new(o, "effective", summary(&sl->stats->summary[PTO_BENCH_EFFECTIVE]));
    json_array_append_new(per_dispatch, o);
    json_array_append_new(tasks, json_integer((json_int_t)sl->tasks));
  }
  json_object_set_new(root, "per_dispatch", per_dispatch);
  json_object_set_new(root, "dispatch_tasks", tasks);
  json_t *groups = json_array();
  for (int g = 0; g < st->ngroups; g++) {
    json_t *o = json_pack("{s:s}", "name", st->dispatch_groups[g].name);
    json_object_set_new(o, "device", summary(&st->dispatch_groups[g].device));
    json_array_append_new(groups, o);
  }
  json_object_set_new(root, "dispatch_groups", groups);
  json_t *rounds = json_array();
  for (int r = 0; r < st->rounds; r++) {
    json_t *ranks = json_array();
    for (int k = 0; k < st->nranks; k++) {
      json_t *list = json_array();
      for (int i = 0; i < st->round_ndispatches[r]; i++) {
        const pto_dist_bench_dispatch *x = &st->rounds_dispatches[r][i];
        if (x->rank != k) continue;
        json_t *o = json_pack("{s:i,s:s,s:I}", "slot", x->slot, "task", x->name, "tasks",
                              (json_int_t)x->tasks);
        json_object_set_new(o, "device_us", num(x->device_us));
        json_object_set_new(o, "host_us", num(x->host_us));
        json_object_set_new(o, "effective_us", num(x->effective_us));
        json_array_append_new(list, o);
      }
      json_array_append_new(ranks, list);
    }
    json_array_append_new(rounds, ranks);
  }
  json_object_set_new(root, "rounds_dispatches", rounds);
  json_object_set_new(root, "unstable_dispatch_slots", json_boolean(st->unstable_dispatch_slots));
  json_object_set_new(root, "fallback_flattened", json_boolean(st->fallback_flattened));
  char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_ENSURE_ASCII) : NULL;
  json_decref(root);
  if (!text) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory writing JSON");
  *out_json = text;
  return PTO_OK;
}
