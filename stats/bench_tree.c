/* Span trees of benchmark statistics and their text: the mean tree, one launch's tree, and the
 * summary table.
 *
 * Nesting comes from names alone (a span's parent is the longest proper dotted prefix that is a
 * span too), never from timestamps, because device-clock spans need not share the host clock. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "pto/base.h"

typedef struct pto__bench_tree_data {
  char *names; /* every node's name, NUL-separated */
} pto__bench_tree_data;

/* ---- building --------------------------------------------------------------------------- */

typedef struct proto {
  const char *name; /* interned in the stats: equal names are equal pointers */
  size_t first;     /* order of first appearance */
  int depth;
  bool dev;
  int parent; /* proto index, -1 for a root */
  int level;
  double start_sum, start;
  double *durs; /* us, one per launch that has the span */
  int count;
  int seen_launch, earliest; /* the launch being read, and the index of its earliest span */
} proto;

typedef struct sib {
  int parent;
  double start;
  size_t first;
  int index;
} sib;

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const proto *)a)->name, y = (uintptr_t)((const proto *)b)->name;
  if (x != y) return x < y ? -1 : 1;
  size_t f = ((const proto *)a)->first, g = ((const proto *)b)->first;
  return f < g ? -1 : f > g;
}

static int cmp_name(const void *a, const void *b) {
  return strcmp((*(const proto *const *)a)->name, (*(const proto *const *)b)->name);
}

/* Siblings together, each family by mean start, then by first appearance. */
static int cmp_sib(const void *a, const void *b) {
  const sib *x = a, *y = b;
  if (x->parent != y->parent) return x->parent < y->parent ? -1 : 1;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return x->first < y->first ? -1 : x->first > y->first;
}

/* The proto whose name is exactly s[0..n), from byname (sorted by name), or NULL. */
static proto *find_by_name(proto *const *byname, int np, const char *s, size_t n) {
  int lo = 0, hi = np - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    int c = strncmp(byname[mid]->name, s, n);
    if (!c && byname[mid]->name[n]) c = 1;
    if (!c) return byname[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return NULL;
}

/* The proto of an interned name, from ps (sorted by pointer, unique), or NULL. */
static proto *find_by_ptr(proto *ps, int np, const char *name) {
  int lo = 0, hi = np - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (ps[mid].name == name) return &ps[mid];
    if ((uintptr_t)ps[mid].name < (uintptr_t)name)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return NULL;
}

/* Fills the tree's nodes from the protos in pre-order (order[] holds proto indices). */
static pto_status make_tree(const proto *ps, int np, const int *order, pto_bench_tree **out) {
  size_t namebytes = 1;
  for (int i = 0; i < np; i++)
    namebytes += strlen(ps[i].name) + 1;
  pto_bench_tree *t = pto__bench_calloc(1, sizeof *t);
  int *pos = pto__bench_calloc((size_t)np, sizeof *pos); /* proto index -> node index */
  if (t) t->priv = pto__bench_calloc(1, sizeof *t->priv);
  if (t && t->priv) t->priv->names = pto__bench_malloc(namebytes);
  if (t && t->priv && t->priv->names) t->nodes = pto__bench_calloc((size_t)np, sizeof *t->nodes);
  if (!t || !t->priv || !t->priv->names || !t->nodes || !pos) {
    pto_bench_tree_destroy(t);
    free(pos);
    return pto__bench_oom("a span tree");
  }
  for (int i = 0; i < np; i++)
    pos[order[i]] = i;
  char *w = t->priv->names;
  t->nnodes = np;
  for (int i = 0; i < np; i++) {
    const proto *p = &ps[order[i]];
    pto_bench_node *nd = &t->nodes[i];
    size_t len = strlen(p->name);
    memcpy(w, p->name, len + 1);
    nd->name = w;
    nd->parent = p->parent < 0 ? -1 : pos[p->parent];
    nd->label = p->parent < 0 ? w : w + strlen(ps[p->parent].name) + 1;
    w += len + 1;
    nd->level = p->level;
    nd->depth = p->depth;
    nd->is_device = p->dev;
    nd->count = p->count;
    nd->start_ns = p->start;
    pto_bench_summary sm = pto_bench_summarize(p->durs, p->count);
    nd->mean_us = sm.mean;
    nd->stdev_us = sm.stdev;
    nd->min_us = sm.min;
    nd->max_us = sm.max;
  }
  free(pos);
  *out = t;
  return PTO_OK;
}

/* Pre-order of the protos (parents and starts set): order[np]. Iterative, so a log with very
 * deep names cannot exhaust the stack. */
static pto_status pre_order(proto *ps, int np, int *order) {
  sib *sibs = pto__bench_calloc((size_t)np, sizeof *sibs);
  int *begin = pto__bench_calloc((size_t)np + 2, sizeof *begin); /* children of p: begin[p+1].. */
  int *stack = pto__bench_calloc((size_t)np + 1, sizeof *stack);
  int *next = pto__bench_calloc((size_t)np + 1, sizeof *next); /* per stack entry: next child */
  pto_status s = PTO_OK;
  if (!sibs || !begin || !stack || !next) {
    s = pto__bench_oom("a span tree");
    goto out;
  }
  for (int i = 0; i < np; i++)
    sibs[i] = (sib){ps[i].parent, ps[i].start, ps[i].first, i};
  qsort(sibs, (size_t)np, sizeof *sibs, cmp_sib);
  /* begin[p + 1] = first sibs index with parent p; begin[p + 2] ends it */
  for (int i = 0; i < np; i++)
    begin[sibs[i].parent + 2]++;
  for (int p = 0; p <= np; p++)
    begin[p + 1] += begin[p];
  int no = 0, sp = 0;
  stack[0] = -1; /* the virtual root */
  next[0] = begin[0];
  while (sp >= 0) {
    int p = stack[sp];
    if (next[sp] >= begin[p + 2]) {
      sp--;
      continue;
    }
    int c = sibs[next[sp]++].index;
    ps[c].level = sp;
    order[no++] = c;
    stack[++sp] = c;
    next[sp] = begin[c + 1];
  }
  if (no != np)
    s = pto_status_make(PTO_STATUS_INTERNAL, "span tree: %d of %d spans placed", no, np);
out:
  free(sibs);
  free(begin);
  free(stack);
  free(next);
  return s;
}

static pto_status build_tree(const pto_bench_stats *st, int lo, int hi, pto_bench_tree **out) {
  *out = NULL;
  size_t total = 0;
  for (int l = lo; l < hi; l++)
    total += (size_t)st->launches[l].nspans;
  if (total > INT_MAX) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "too many spans");
  proto *ps = pto__bench_calloc(total, sizeof *ps);
  if (!ps) return pto__bench_oom("a span tree");
  /* Every span once, then one proto per distinct name (its first appearance). */
  size_t seen = 0;
  for (int l = lo; l < hi; l++)
    for (int k = 0; k < st->launches[l].nspans; k++, seen++) {
      const pto_span *sp = &st->launches[l].spans[k];
      ps[seen] = (proto){.name = sp->name,
                         .first = seen,
                         .depth = sp->depth,
                         .dev = sp->is_device,
                         .seen_launch = -1};
    }
  qsort(ps, total, sizeof *ps, cmp_ptr);
  int np = 0;
  for (size_t i = 0; i < total; i++)
    if (!np || ps[np - 1].name != ps[i].name) ps[np++] = ps[i];
  pto_status s = PTO_OK;
  int nl = hi - lo;
  for (int i = 0; i < np && !s; i++) {
    ps[i].durs = pto__bench_calloc((size_t)nl, sizeof *ps[i].durs);
    if (!ps[i].durs) s = pto__bench_oom("a span tree");
  }
  /* Durations and starts: per launch, a name's earliest span; starts relative to the launch's
   * earliest span on the same clock. */
  for (int l = lo; l < hi && !s; l++) {
    const pto_bench_launch *la = &st->launches[l];
    uint64_t ref[2] = {UINT64_MAX, UINT64_MAX};
    for (int k = 0; k < la->nspans; k++) {
      const pto_span *sp = &la->spans[k];
      if (sp->ts_ns < ref[sp->is_device]) ref[sp->is_device] = sp->ts_ns;
    }
    /* Each name's earliest span (the first of equal starts), one pass and a lookup per span:
     * a log of one launch with a million spans takes seconds, not hours. */
    for (int k = 0; k < la->nspans; k++) {
      const pto_span *sp = &la->spans[k];
      proto *p = find_by_ptr(ps, np, sp->name);
      if (!p) continue;
      if (p->seen_launch != l || sp->ts_ns < la->spans[p->earliest].ts_ns) p->earliest = k;
      p->seen_launch = l;
    }
    for (int k = 0; k < la->nspans; k++) {
      const pto_span *sp = &la->spans[k];
      proto *p = find_by_ptr(ps, np, sp->name);
      if (!p || p->seen_launch != l || p->earliest != k) continue;
      p->durs[p->count++] = (double)sp->dur_ns / 1e3; /* as the samples: equal means */
      p->start_sum += (double)(sp->ts_ns - ref[sp->is_device]);
    }
  }
  proto **byname = s ? NULL : pto__bench_calloc((size_t)np, sizeof *byname);
  int *order = s ? NULL : pto__bench_calloc((size_t)np, sizeof *order);
  if (!s && (!byname || !order)) s = pto__bench_oom("a span tree");
  if (!s) {
    for (int i = 0; i < np; i++)
      byname[i] = &ps[i];
    qsort(byname, (size_t)np, sizeof *byname, cmp_name);
    for (int i = 0; i < np; i++) {
      ps[i].start = ps[i].count ? ps[i].start_sum / ps[i].count : 0;
      ps[i].parent = -1;
      const char *n = ps[i].name;
      for (size_t cut = strlen(n); cut-- > 0;) {
        proto *par = n[cut] == '.' ? find_by_name(byname, np, n, cut) : NULL;
        if (par) {
          ps[i].parent = (int)(par - ps);
          break;
        }
      }
    }
    s = pre_order(ps, np, order);
  }
  if (!s) s = make_tree(ps, np, order, out);
  for (int i = 0; i < np; i++)
    free(ps[i].durs);
  free(ps);
  free(byname);
  free(order);
  return s;
}

pto_status pto_bench_stats_mean_tree(const pto_bench_stats *st, pto_bench_tree **out_tree) {
  if (!out_tree)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_bench_stats_mean_tree: out_tree is NULL");
  *out_tree = NULL;
  if (!st)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_bench_stats_mean_tree: stats is NULL");
  return build_tree(st, 0, st->nlaunches, out_tree);
}

pto_status pto_bench_stats_launch_tree(const pto_bench_stats *st, int i,
                                       pto_bench_tree **out_tree) {
  if (!out_tree)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_bench_stats_launch_tree: out_tree is NULL");
  *out_tree = NULL;
  if (!st)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_bench_stats_launch_tree: stats is NULL");
  if (i < 0 || i >= st->nlaunches)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_bench_stats_launch_tree: launch %d is out of range (%d launches)",
                           i, st->nlaunches);
  return build_tree(st, i, i + 1, out_tree);
}

void pto_bench_tree_destroy(pto_bench_tree *t) {
  if (!t) return;
  if (t->priv) free(t->priv->names);
  free(t->priv);
  free(t->nodes);
  free(t);
}

/* ---- text ------------------------------------------------------------------------------- */

/* Characters of UTF-8 text (continuation bytes do not count): the columns line up on screen. */
static size_t text_width(const char *s) {
  size_t w = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xc0) != 0x80) w++;
  return w;
}

static pto_status sb_finish(pto_text *b, char **out, const char *what) {
  char *text = pto_text_finish(b); /* an empty text is still a string */
  if (!text) return pto__bench_oom(what);
  *out = text;
  return PTO_OK;
}

enum { MAX_COLS = 8, CELL = 64 };

typedef struct table {
  char (*cells)[MAX_COLS][CELL]; /* rows x columns; column 0 is left-aligned */
  int nrows, ncols;
} table;

static void cell_printf(char *cell, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cell_printf(char *cell, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cell, CELL, fmt, ap);
  va_end(ap);
}

/* Column 0 left-aligned (label cells are separate strings: labels may be long), the others
 * right-aligned, two spaces between, trailing blanks removed. */
static void render_rows(pto_text *b, char *const *labels, const table *t) {
  size_t w[MAX_COLS] = {0};
  for (int r = 0; r < t->nrows; r++) {
    size_t lw = text_width(labels[r]);
    if (lw > w[0]) w[0] = lw;
    for (int c = 1; c < t->ncols; c++) {
      size_t cw = text_width(t->cells[r][c]);
      if (cw > w[c]) w[c] = cw;
    }
  }
  for (int r = 0; r < t->nrows; r++) {
    size_t start = b->len;
    pto_text_puts(b, labels[r]);
    pto_text_pad(b, w[0] - text_width(labels[r]));
    for (int c = 1; c < t->ncols; c++) {
      pto_text_pad(b, 2 + w[c] - text_width(t->cells[r][c]));
      pto_text_puts(b, t->cells[r][c]);
    }
    while (!b->failed && b->len > start && b->data[b->len - 1] == ' ')
      b->data[--b->len] = 0;
    pto_text_put(b, "\n", 1);
  }
}

pto_status pto_bench_tree_render(const pto_bench_tree *tree, pto_bench_spread spread, int max_level,
                                 char **out_text) {
  if (!out_text)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_bench_tree_render: out_text is NULL");
  *out_text = NULL;
  if (!tree)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_bench_tree_render: tree is NULL");
  if ((int)spread < 0 || spread > PTO_BENCH_SPREAD_NONE)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_bench_tree_render: spread %d is not stdev, minmax, both or none",
                           (int)spread);
  int n = tree->nnodes;
  table t = {NULL, 0, 1};
  char **labels = pto__bench_calloc((size_t)n, sizeof *labels);
  t.cells = pto__bench_calloc((size_t)n, sizeof *t.cells);
  /* last[i]: node i is the last child of its parent (or the last root) */
  bool *last = pto__bench_calloc((size_t)n, sizeof *last);
  pto_text b = {0};
  pto_status s = PTO_OK;
  if (!labels || !t.cells || !last) s = pto__bench_oom("a rendered tree");
  for (int i = 0; !s && i < n; i++) {
    last[i] = true;
    for (int j = i + 1; j < n; j++) {
      if (tree->nodes[j].level < tree->nodes[i].level) break;
      if (tree->nodes[j].parent == tree->nodes[i].parent) {
        last[i] = false;
        break;
      }
    }
  }
  for (int i = 0; !s && i < n; i++) {
    const pto_bench_node *nd = &tree->nodes[i];
    if (max_level >= 0 && nd->level > max_level) continue;
    /* prefix: one 3-character piece per ancestor below the root, then the connector */
    int lvl = nd->level;
    size_t need = (size_t)lvl * 3 + strlen(nd->label) + 7;
    char *lab = pto__bench_malloc(need);
    if (!lab) {
      s = pto__bench_oom("a rendered tree");
      break;
    }
    size_t off = (size_t)lvl * 3;
    if (lvl > 0) {
      memcpy(lab + off - 3, last[i] ? "`- " : "|- ", 3);
      int a = nd->parent;
      for (int k = lvl - 1; k > 0; k--) {
        memcpy(lab + (size_t)(k - 1) * 3, last[a] ? "   " : "|  ", 3);
        a = tree->nodes[a].parent;
      }
    }
    snprintf(lab + off, need - off, "%s%s", nd->label, nd->is_device ? " [dev]" : "");
    int r = t.nrows++;
    labels[r] = lab;
    int c = 1;
    cell_printf(t.cells[r][c++], "%.1fus", nd->mean_us);
    if (spread == PTO_BENCH_SPREAD_STDEV || spread == PTO_BENCH_SPREAD_BOTH)
      cell_printf(t.cells[r][c++], "\u00b1%.1f", nd->stdev_us);
    if (spread == PTO_BENCH_SPREAD_MINMAX || spread == PTO_BENCH_SPREAD_BOTH)
      cell_printf(t.cells[r][c++], "[%.1f..%.1f]", nd->min_us, nd->max_us);
    t.ncols = c;
  }
  if (!s) render_rows(&b, labels, &t);
  for (int r = 0; r < t.nrows; r++)
    free(labels[r]);
  free(labels);
  free(t.cells);
  free(last);
  if (s) {
    pto_text_free(&b);
    return s;
  }
  return sb_finish(&b, out_text, "a rendered tree");
}

pto_status pto_bench_stats_render_summary(const pto_bench_stats *st, char **out_text) {
  if (!out_text)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_bench_stats_render_summary: out_text is NULL");
  *out_text = NULL;
  if (!st)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_bench_stats_render_summary: stats is NULL");
  static const char *const k_heads[] = {"", "n", "min", "median", "mean", "max", "stdev"};
  static const char *const k_rows[PTO_BENCH_METRIC_COUNT] = {"device wall", "host wall",
                                                             "effective", "busy"};
  char cells[PTO_BENCH_METRIC_COUNT + 1][MAX_COLS][CELL];
  char *labels[PTO_BENCH_METRIC_COUNT + 1];
  memset(cells, 0, sizeof cells);
  table t = {cells, PTO_BENCH_METRIC_COUNT + 1, 7};
  labels[0] = (char *)k_heads[0];
  for (int c = 1; c < 7; c++)
    cell_printf(cells[0][c], "%s", k_heads[c]);
  for (int m = 0; m < PTO_BENCH_METRIC_COUNT; m++) {
    const pto_bench_summary *sm = &st->summary[m];
    labels[m + 1] = (char *)k_rows[m];
    cell_printf(cells[m + 1][1], "%d", sm->count);
    const double v[5] = {sm->min, sm->median, sm->mean, sm->max, sm->stdev};
    for (int c = 0; c < 5; c++) {
      if (!sm->count || isnan(v[c]))
        cell_printf(cells[m + 1][c + 2], "-");
      else
        cell_printf(cells[m + 1][c + 2], "%.1fus", v[c]);
    }
  }
  pto_text b = {0};
  render_rows(&b, labels, &t);
  return sb_finish(&b, out_text, "the summary table");
}
