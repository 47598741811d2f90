/* pto_trace_parse: benchmark statistics from [STRACE] v=1 text.
 *
 * The grammar is the one PyPTO's runtime writes and pto writes with PTO_LOG_LEVEL=timing:
 *   [STRACE] v=1 pid=<n> tid=<n> inv=<n> hid=<hex> depth=<n> name=<dotted> ts=<ns> dur=<ns>
 * [k=v]... A record starts at its marker, wherever that is on a line (loggers put prefixes before
 * it), and runs to the next marker or the end of the line, so several records may share one line. A
 * marker whose fields do not all parse is a torn record: skipped and counted, never guessed. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "pto/base.h"

static const char k_marker[] = "[STRACE]";
enum { MARKER_LEN = sizeof k_marker - 1 };

typedef struct rec {
  uint64_t pid, tid, inv, hid, ts, dur;
  const char *name; /* interned */
  int depth;
  bool dev;
  bool counted;    /* tasks= and cores= were both there (pto writes them on the root span) */
  uint64_t ntasks; /* tasks= */
  int ncores;      /* cores= */
  size_t seq;      /* position in the log */
} rec;

typedef struct group {
  uint64_t pid, tid, inv, hid;
  size_t first, count; /* range of the sorted record indices */
  size_t order;        /* position in (pid, inv) order */
} group;

typedef struct parser {
  const char *p, *end; /* the record's text */
} parser;

static int is_blank(char c) { return c == ' ' || c == '\t'; }

static void skip_blanks(parser *ps) {
  while (ps->p < ps->end && is_blank(*ps->p))
    ps->p++;
}

/* Expects "key=" (after blanks). */
static int expect_key(parser *ps, const char *key) {
  skip_blanks(ps);
  size_t n = strlen(key);
  if ((size_t)(ps->end - ps->p) < n + 1 || memcmp(ps->p, key, n) || ps->p[n] != '=') return -1;
  ps->p += n + 1;
  return 0;
}

/* A field ends at a blank or at the end of the record. */
static int at_field_end(const parser *ps) { return ps->p == ps->end || is_blank(*ps->p); }

/* Decimal digits (at least one, no overflow). */
static int parse_digits(parser *ps, uint64_t *out) {
  uint64_t v = 0;
  const char *start = ps->p;
  while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
    unsigned d = (unsigned)(*ps->p - '0');
    if (v > (UINT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
    ps->p++;
  }
  if (ps->p == start) return -1;
  *out = v;
  return 0;
}

/* A decimal field: digits up to a blank or the end of the record. */
static int parse_dec(parser *ps, uint64_t *out) {
  return parse_digits(ps, out) || !at_field_end(ps) ? -1 : 0;
}

/* The attribute t[0..n) as key=<decimal> (no overflow, at most max): 1, its value in *out. */
static int count_attr(const char *t, size_t n, const char *key, uint64_t max, uint64_t *out) {
  size_t k = strlen(key);
  if (n <= k + 1 || memcmp(t, key, k) || t[k] != '=') return 0;
  parser ps = {t + k + 1, t + n};
  uint64_t v;
  if (parse_dec(&ps, &v) || v > max) return 0;
  *out = v;
  return 1;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int parse_hex(parser *ps, uint64_t *out) {
  uint64_t v = 0;
  int n = 0, d;
  while (ps->p < ps->end && (d = hex_digit(*ps->p)) >= 0) {
    if (++n > 16) return -1;
    v = v << 4 | (uint64_t)d;
    ps->p++;
  }
  if (!n || !at_field_end(ps)) return -1;
  *out = v;
  return 0;
}

/* Decodes %XX escapes of s[0..n) into buf (at least n bytes); %00 and bad escapes stay as they
 * are, so a name never holds a NUL. Returns the decoded length. */
static size_t percent_decode(const char *s, size_t n, char *buf) {
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    int hi, lo;
    if (s[i] == '%' && i + 2 < n && (hi = hex_digit(s[i + 1])) >= 0 &&
        (lo = hex_digit(s[i + 2])) >= 0 && (hi | lo)) {
      buf[o++] = (char)(hi << 4 | lo);
      i += 2;
    } else {
      buf[o++] = s[i];
    }
  }
  return o;
}

typedef struct trace_state {
  pto_bench_stats *st;
  rec *recs;
  size_t nrecs, cap;
  char *namebuf;
  size_t namebuf_cap;
} trace_state;

/* Parses one record's text (after the marker): adds it, or counts it as skipped or of another
 * version. Fails only when out of memory. */
static pto_status parse_record(trace_state *ts, const char *p, const char *end) {
  pto_trace_info *info = &ts->st->trace;
  parser ps = {p, end};
  uint64_t v, depth;
  rec r;
  memset(&r, 0, sizeof r);
  if (expect_key(&ps, "v") || parse_dec(&ps, &v)) goto torn;
  if (v != 1) { /* another grammar may follow: not ours to judge */
    info->unsupported++;
    return PTO_OK;
  }
  if (expect_key(&ps, "pid") || parse_dec(&ps, &r.pid)) goto torn;
  if (expect_key(&ps, "tid") || parse_dec(&ps, &r.tid)) goto torn;
  if (expect_key(&ps, "inv") || parse_dec(&ps, &r.inv)) goto torn;
  if (expect_key(&ps, "hid") || parse_hex(&ps, &r.hid)) goto torn;
  if (expect_key(&ps, "depth") || parse_dec(&ps, &depth) || depth > 1000000) goto torn;
  if (expect_key(&ps, "name")) goto torn;
  const char *name = ps.p;
  while (ps.p < ps.end && !is_blank(*ps.p))
    ps.p++;
  size_t name_len = (size_t)(ps.p - name);
  if (!name_len) goto torn;
  if (expect_key(&ps, "ts") || parse_dec(&ps, &r.ts)) goto torn;
  /* dur's digits may run straight into the next logger prefix, as in PyPTO's reader */
  if (expect_key(&ps, "dur") || parse_digits(&ps, &r.dur)) goto torn;
  /* Attributes: only clk=dev, tasks= and cores= matter here (a count that does not parse is
   * ignored, as any other attribute). */
  uint64_t ntasks = 0, ncores = 0;
  int has_tasks = 0, has_cores = 0;
  while (ps.p < ps.end) {
    skip_blanks(&ps);
    const char *t = ps.p;
    while (ps.p < ps.end && !is_blank(*ps.p))
      ps.p++;
    size_t n = (size_t)(ps.p - t);
    if (n == 7 && !memcmp(t, "clk=dev", 7)) r.dev = true;
    if (count_attr(t, n, "tasks", UINT64_MAX, &ntasks)) has_tasks = 1;
    if (count_attr(t, n, "cores", INT_MAX, &ncores)) has_cores = 1;
  }
  if (has_tasks && has_cores) r.counted = true, r.ntasks = ntasks, r.ncores = (int)ncores;
  if (pto_grow(&ts->namebuf, 1, &ts->namebuf_cap, name_len + 1))
    return pto__bench_oom("span names");
  size_t n = percent_decode(name, name_len, ts->namebuf);
  /* pto's names are op and kernel names: a control character (an escape sequence, raw or as
   * %1b) is not one, and printed in a table it would drive the reader's terminal. */
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)ts->namebuf[i] < 0x20 || ts->namebuf[i] == 0x7f) goto torn;
  r.name = pto__bench_intern(ts->st, ts->namebuf, n);
  if (!r.name) return pto__bench_oom("span names");
  r.depth = (int)depth;
  r.seq = ts->nrecs;
  if (pto_grow(&ts->recs, sizeof *ts->recs, &ts->cap, ts->nrecs + 1))
    return pto__bench_oom("[STRACE] records");
  ts->recs[ts->nrecs++] = r;
  info->records++;
  return PTO_OK;
torn:
  info->skipped++;
  return PTO_OK;
}

static pto_status scan(trace_state *ts, const char *text, size_t len) {
  const char *p = text, *end = text + len;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    const char *line_end = eol;
    if (line_end > p && line_end[-1] == '\r') line_end--;
    const char *m = memmem(p, (size_t)(line_end - p), k_marker, MARKER_LEN);
    while (m) {
      const char *body = m + MARKER_LEN;
      const char *next = memmem(body, (size_t)(line_end - body), k_marker, MARKER_LEN);
      PTO_RETURN_IF_ERROR(parse_record(ts, body, next ? next : line_end));
      m = next;
    }
    p = eol < end ? eol + 1 : end;
  }
  return PTO_OK;
}

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

static int cmp_rec_pid_inv(const void *x, const void *y) {
  const rec *a = x, *b = y;
  int c = cmp_u64(a->pid, b->pid);
  if (!c) c = cmp_u64(a->inv, b->inv);
  if (!c) c = cmp_u64(a->seq, b->seq);
  return c;
}

static int cmp_group_hid(const void *x, const void *y) {
  const group *a = x, *b = y;
  int c = cmp_u64(a->hid, b->hid);
  return c ? c : cmp_u64(a->order, b->order);
}

static int cmp_group_inv_pid(const void *x, const void *y) {
  const group *a = x, *b = y;
  int c = cmp_u64(a->inv, b->inv);
  return c ? c : cmp_u64(a->pid, b->pid);
}

/* Groups the sorted records by (pid, inv), picks the hid bucket and emits its launches. */
static pto_status aggregate(trace_state *ts, int warmup) {
  pto_bench_stats *st = ts->st;
  pto_trace_info *info = &st->trace;
  qsort(ts->recs, ts->nrecs, sizeof *ts->recs, cmp_rec_pid_inv);
  size_t ngroups = 0;
  for (size_t i = 0; i < ts->nrecs; i++)
    if (!i || ts->recs[i].pid != ts->recs[i - 1].pid || ts->recs[i].inv != ts->recs[i - 1].inv)
      ngroups++;
  group *g = pto__bench_calloc(ngroups, sizeof *g);
  if (!g) return pto__bench_oom("invocations");
  size_t k = 0;
  for (size_t i = 0; i < ts->nrecs; i++) {
    if (i && ts->recs[i].pid == ts->recs[i - 1].pid && ts->recs[i].inv == ts->recs[i - 1].inv) {
      g[k - 1].count++;
      continue;
    }
    group *c = &g[k];
    c->pid = ts->recs[i].pid, c->tid = ts->recs[i].tid, c->inv = ts->recs[i].inv;
    c->hid = ts->recs[i].hid; /* an invocation is one callable: its first record says which */
    c->first = i, c->count = 1, c->order = k;
    k++;
  }
  info->invocations = ngroups;

  /* The biggest hid bucket; ties go to the hid whose first invocation comes first. */
  qsort(g, ngroups, sizeof *g, cmp_group_hid);
  size_t best = 0, best_n = 0, best_order = SIZE_MAX;
  for (size_t i = 0; i < ngroups;) {
    size_t j = i;
    while (j < ngroups && g[j].hid == g[i].hid)
      j++;
    info->hids++;
    size_t n = j - i;
    if (n > best_n || (n == best_n && g[i].order < best_order))
      best = i, best_n = n, best_order = g[i].order;
    i = j;
  }
  info->bucket = best_n;
  st->hid = ngroups ? g[best].hid : 0;
  group *bucket = g + best;
  qsort(bucket, best_n, sizeof *bucket, cmp_group_inv_pid);
  if (warmup == PTO_TRACE_WARMUP_AUTO)
    warmup = best_n > PTO_BENCH_DEFAULT_WARMUP ? PTO_BENCH_DEFAULT_WARMUP : (int)best_n - 1;
  pto_status s = PTO_OK;
  if (best_n <= (size_t)warmup) {
    char hid[17];
    pto_hid_format(st->hid, hid);
    s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                        "every launch in the log is warmup: hid %s has %zu invocation%s and a "
                        "warmup of %d drops %s, which leaves nothing to measure",
                        hid, best_n, best_n == 1 ? "" : "s", warmup,
                        best_n == 1 ? "it" : "them all");
  }
  for (size_t i = (size_t)warmup; !s && i < best_n; i++) {
    const group *c = &bucket[i];
    s = pto__bench_begin_launch(st, c->pid, c->tid, c->inv, c->hid);
    /* ntasks and ncores: the last measured launch's tasks= and cores= (0 where it has none) */
    for (size_t r = c->first; !s && r < c->first + c->count; r++) {
      const rec *x = &ts->recs[r];
      s = pto__bench_add_span(st, x->name, x->depth, x->ts, x->dur, x->dev);
      if (i + 1 == best_n && x->counted) st->ntasks = x->ntasks, st->ncores = x->ncores;
    }
  }
  free(g);
  if (s) return s;
  st->warmup = warmup;
  return pto__bench_finish(st);
}

static pto_status read_trace_options(const pto_trace_options *opt, int *out_warmup) {
  pto_trace_options o;
  pto_trace_options_init(&o);
  if (opt) {
    if (opt->sz < sizeof(size_t))
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "pto_trace_parse: options.sz is %zu: set it to "
                             "sizeof(pto_trace_options) (pto_trace_options_init does)",
                             opt->sz);
    memcpy(&o, opt, opt->sz < sizeof o ? opt->sz : sizeof o);
  }
  if (o.warmup < 0 && o.warmup != PTO_TRACE_WARMUP_AUTO)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_trace_parse: warmup is %d: it must be 0 or more, or "
                           "PTO_TRACE_WARMUP_AUTO",
                           o.warmup);
  *out_warmup = o.warmup;
  return PTO_OK;
}

pto_status pto_trace_parse(const char *text, size_t len, const pto_trace_options *opt,
                           pto_bench_stats **out_stats) {
  if (!out_stats)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_trace_parse: out_stats is NULL");
  *out_stats = NULL;
  if (!text && len)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_trace_parse: text is NULL");
  int warmup = PTO_TRACE_WARMUP_AUTO;
  PTO_RETURN_IF_ERROR(read_trace_options(opt, &warmup));
  trace_state ts;
  memset(&ts, 0, sizeof ts);
  pto_status s = pto__bench_stats_create(&ts.st);
  if (!s && len) s = scan(&ts, text, len);
  if (!s && !ts.nrecs) {
    const pto_trace_info *i = &ts.st->trace;
    if (!i->skipped && !i->unsupported)
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                          "no [STRACE] records: the log holds no '[STRACE] v=1' line (pto writes "
                          "them with PTO_LOG_LEVEL=timing or 'pto run --trace')");
    else
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                          "no complete [STRACE] v=1 records: %zu truncated or malformed, %zu of "
                          "another format version",
                          i->skipped, i->unsupported);
  }
  if (!s) s = aggregate(&ts, warmup);
  free(ts.recs);
  free(ts.namebuf);
  if (s) {
    pto_bench_stats_destroy(ts.st);
    return s;
  }
  *out_stats = ts.st;
  return PTO_OK;
}

pto_status pto_trace_parse_file(const char *path, const pto_trace_options *opt,
                                pto_bench_stats **out_stats) {
  if (!out_stats)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_trace_parse_file: out_stats is NULL");
  *out_stats = NULL;
  if (!path)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_trace_parse_file: path is NULL");
  uint8_t *buf = NULL;
  size_t len = 0;
  pto_status s = pto_file_read(path, PTO_FILE_MAX_LOG, &buf, &len);
  if (s) return s;
  if (!s) {
    s = pto_trace_parse((const char *)buf, len, opt, out_stats);
    if (s) s = pto_status_annotate(s, "%s", path);
  }
  free(buf);
  return s;
}
