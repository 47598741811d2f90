/* A launch's tasks as a terminal timeline or an SVG picture, and the task lines of a log.
 *
 * Time is cut into equal cells from the first task start to the last task end with integer
 * arithmetic only, so the same tasks at the same width always give the same text (golden tests
 * depend on it). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "pto/base.h"

enum { DEFAULT_WIDTH = 80, MIN_WIDTH = 30, DEFAULT_SVG_WIDTH = 1000, MAX_PATH_LISTED = 8 };

void pto_timeline_options_init(pto_timeline_options *opt) {
  if (!opt) return;
  memset(opt, 0, sizeof *opt);
  opt->sz = sizeof *opt;
}

static pto_timeline_options options_of(const pto_timeline_options *opt) {
  pto_timeline_options o;
  pto_timeline_options_init(&o);
  if (opt) memcpy(&o, opt, opt->sz < sizeof o ? opt->sz : sizeof o);
  o.sz = sizeof o;
  return o;
}

static pto_status check_tasks(const char *fn, const pto_swimlane_task *tasks, size_t ntasks) {
  if (ntasks && !tasks)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: tasks missing for their count", fn);
  for (size_t i = 0; i < ntasks; i++) {
    const pto_swimlane_task *t = &tasks[i];
    if (t->core < 0 || t->end_ns < t->start_ns || (t->ndeps && !t->deps) || t->ndeps < 0)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "%s: task %" PRIu64 " (%s): core %d, start %" PRIu64 ", end %" PRIu64
                             ": not a task that ran",
                             fn, t->task_id, t->kernel ? t->kernel : "?", t->core, t->start_ns,
                             t->end_ns);
  }
  return PTO_OK;
}

/* ---- critical path ---------------------------------------------------------------------- */

/* Index of the task with id, or SIZE_MAX (linear: launches drawn here are small enough, and the
 * path has at most ntasks steps, each visiting its deps). */
static size_t find_task(const pto_swimlane_task *tasks, size_t ntasks, uint64_t id) {
  if (id < ntasks && tasks[id].task_id == id) return (size_t)id;
  for (size_t i = 0; i < ntasks; i++)
    if (tasks[i].task_id == id) return i;
  return SIZE_MAX;
}

pto_status pto_timeline_critical_path(const pto_swimlane_task *tasks, size_t ntasks,
                                      size_t **out_path, size_t *out_n) {
  if (!out_path)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_timeline_critical_path: out_path is NULL");
  if (!out_n)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_timeline_critical_path: out_n is NULL");
  *out_path = NULL;
  *out_n = 0;
  PTO_RETURN_IF_ERROR(check_tasks("pto_timeline_critical_path", tasks, ntasks));
  if (!ntasks) return PTO_OK;
  size_t *path = pto__bench_calloc(ntasks, sizeof *path);
  if (!path) return pto__bench_oom("the critical path");
  size_t last = 0;
  for (size_t i = 1; i < ntasks; i++)
    if (tasks[i].end_ns > tasks[last].end_ns) last = i;
  size_t n = 0;
  for (size_t cur = last; cur != SIZE_MAX && n < ntasks;) {
    path[n++] = cur;
    const pto_swimlane_task *t = &tasks[cur];
    size_t best = SIZE_MAX;
    for (int d = 0; d < t->ndeps; d++) {
      size_t j = find_task(tasks, ntasks, t->deps[d]);
      /* A dependency ends before its consumer starts; anything else is not a step back. */
      if (j == SIZE_MAX || j == cur || tasks[j].end_ns > t->start_ns) continue;
      if (best == SIZE_MAX || tasks[j].end_ns > tasks[best].end_ns) best = j;
    }
    cur = best;
  }
  for (size_t i = 0; i < n / 2; i++) { /* back to time order */
    size_t x = path[i];
    path[i] = path[n - 1 - i];
    path[n - 1 - i] = x;
  }
  *out_path = path;
  *out_n = n;
  return PTO_OK;
}

/* ---- shared layout ---------------------------------------------------------------------- */

typedef struct layout {
  uint64_t t0, t1, span; /* span >= 1 */
  int ncores;
  uint64_t *busy;      /* per core, ns */
  unsigned char *crit; /* per task: on the critical path */
  size_t *path;
  size_t npath;
} layout;

static void layout_fini(layout *L) {
  free(L->busy);
  free(L->crit);
  free(L->path);
}

static pto_status layout_make(const char *fn, const pto_swimlane_task *tasks, size_t ntasks,
                              const pto_timeline_options *o, layout *L) {
  memset(L, 0, sizeof *L);
  PTO_RETURN_IF_ERROR(check_tasks(fn, tasks, ntasks));
  L->t0 = ntasks ? UINT64_MAX : 0;
  int maxcore = -1;
  for (size_t i = 0; i < ntasks; i++) {
    if (tasks[i].start_ns < L->t0) L->t0 = tasks[i].start_ns;
    if (tasks[i].end_ns > L->t1) L->t1 = tasks[i].end_ns;
    if (tasks[i].core > maxcore) maxcore = tasks[i].core;
  }
  L->span = L->t1 > L->t0 ? L->t1 - L->t0 : 1;
  L->ncores = o->ncores > maxcore ? o->ncores : maxcore + 1;
  if (L->ncores < 1) L->ncores = 1;
  L->busy = pto__bench_calloc((size_t)L->ncores, sizeof *L->busy);
  L->crit = pto__bench_calloc(ntasks ? ntasks : 1, 1);
  if (!L->busy || !L->crit) {
    layout_fini(L);
    return pto__bench_oom("the timeline");
  }
  for (size_t i = 0; i < ntasks; i++)
    L->busy[tasks[i].core] += tasks[i].end_ns - tasks[i].start_ns;
  pto_status s = pto_timeline_critical_path(tasks, ntasks, &L->path, &L->npath);
  if (s) {
    layout_fini(L);
    return s;
  }
  for (size_t i = 0; i < L->npath; i++)
    L->crit[L->path[i]] = 1;
  return PTO_OK;
}

static double pct(uint64_t part, uint64_t whole) { return 100.0 * (double)part / (double)whole; }

/* ---- text ------------------------------------------------------------------------------- */

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) {
  uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
  return hi > lo ? hi - lo : 0;
}

pto_status pto_timeline_render(const pto_swimlane_task *tasks, size_t ntasks,
                               const pto_timeline_options *opt, char **out_text) {
  static const char fn[] = "pto_timeline_render";
  if (!out_text) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: out_text is NULL", fn);
  *out_text = NULL;
  pto_timeline_options o = options_of(opt);
  int width = o.width ? o.width : DEFAULT_WIDTH;
  if (width < MIN_WIDTH)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "%s: width %d is too narrow (at least %d columns)", fn, width,
                           MIN_WIDTH);
  layout L;
  PTO_RETURN_IF_ERROR(layout_make(fn, tasks, ntasks, &o, &L));
  char label[32];
  int lw = snprintf(label, sizeof label, "core %d", L.ncores - 1);
  /* "LABEL │" bar "│ " "100.0%": the bar takes the rest. */
  int cells = width - lw - 2 - 2 - 6;
  if (cells < 8) cells = 8;
  uint64_t *cb = pto__bench_calloc((size_t)cells + 1, sizeof *cb);
  if (!cb) {
    layout_fini(&L);
    return pto__bench_oom("the timeline");
  }
  for (int c = 0; c <= cells; c++)
    cb[c] = L.t0 + L.span * (uint64_t)c / (uint64_t)cells;

  pto_text t = {0};
  uint64_t total_busy = 0;
  for (int k = 0; k < L.ncores; k++)
    total_busy += L.busy[k];
  pto_text_printf(&t,
                  "timeline: %zu task%s on %d core%s, %.1f us from the first start to the last "
                  "end, %.1f%% busy\n",
                  ntasks, ntasks == 1 ? "" : "s", L.ncores, L.ncores == 1 ? "" : "s",
                  (double)(L.t1 - L.t0) / 1e3, pct(total_busy, L.span * (uint64_t)L.ncores));
  for (int k = 0; k < L.ncores; k++) {
    pto_text_printf(&t, "core %-*d \u2502", lw - 5, k);
    for (int c = 0; c < cells; c++) {
      uint64_t c0 = cb[c], c1 = cb[c + 1] > cb[c] ? cb[c + 1] : cb[c] + 1;
      uint64_t busy = 0;
      int crit = 0;
      for (size_t i = 0; i < ntasks; i++) {
        const pto_swimlane_task *x = &tasks[i];
        if (x->core != k) continue;
        uint64_t e = x->end_ns > x->start_ns ? x->end_ns : x->start_ns + 1; /* a zero-length
                                                                                task still shows */
        uint64_t ov = overlap(x->start_ns, e, c0, c1);
        busy += ov;
        if (ov && L.crit[i]) crit = 1;
      }
      uint64_t w = c1 - c0;
      const char *g = "\u00b7";
      if (crit)
        g = "\u2588";
      else if (busy * 3 >= w * 2)
        g = "\u2593";
      else if (busy * 3 >= w)
        g = "\u2592";
      else if (busy)
        g = "\u2591";
      pto_text_puts(&t, g);
    }
    pto_text_printf(&t, "\u2502 %5.1f%%\n", pct(L.busy[k], L.span));
  }
  char right[32];
  int rw = snprintf(right, sizeof right, "%.1f us", (double)(L.t1 - L.t0) / 1e3);
  pto_text_pad(&t, (size_t)lw + 2);
  pto_text_puts(&t, "0 us");
  int gap = cells - 4 - rw;
  pto_text_pad(&t, gap > 1 ? (size_t)gap : 1);
  pto_text_printf(&t, "%s\n", right);
  pto_text_puts(&t, "\u2588 critical path  \u2593\u2592\u2591 busy share of a cell  \u00b7 idle\n");
  uint64_t path_busy = 0;
  for (size_t i = 0; i < L.npath; i++)
    path_busy += tasks[L.path[i]].end_ns - tasks[L.path[i]].start_ns;
  pto_text_printf(&t, "critical path: %zu task%s, %.1f us busy", L.npath, L.npath == 1 ? "" : "s",
                  (double)path_busy / 1e3);
  for (size_t i = 0; i < L.npath && i < MAX_PATH_LISTED; i++) {
    const pto_swimlane_task *x = &tasks[L.path[i]];
    pto_text_printf(&t, "%s%s#%" PRIu64 " (core %d)", i ? " -> " : ": ",
                    x->kernel ? x->kernel : "?", x->task_id, x->core);
  }
  if (L.npath > MAX_PATH_LISTED)
    pto_text_printf(&t, " -> ... (%zu more)", L.npath - MAX_PATH_LISTED);
  pto_text_puts(&t, "\n");
  free(cb);
  layout_fini(&L);
  char *text = pto_text_finish(&t);
  if (!text) return pto__bench_oom("the timeline");
  *out_text = text;
  return PTO_OK;
}

/* ---- SVG -------------------------------------------------------------------------------- */

static uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; s && *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static void xml_text(pto_text *t, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
    case '<': pto_text_puts(t, "&lt;"); break;
    case '>': pto_text_puts(t, "&gt;"); break;
    case '&': pto_text_puts(t, "&amp;"); break;
    case '"': pto_text_puts(t, "&quot;"); break;
    default: pto_text_put(t, s, 1);
    }
  }
}

pto_status pto_timeline_write_svg(const char *path, const pto_swimlane_task *tasks, size_t ntasks,
                                  const pto_timeline_options *opt) {
  static const char fn[] = "pto_timeline_write_svg";
  if (!path) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: path is NULL", fn);
  pto_timeline_options o = options_of(opt);
  int area = o.width > 0 ? o.width : DEFAULT_SVG_WIDTH;
  layout L;
  PTO_RETURN_IF_ERROR(layout_make(fn, tasks, ntasks, &o, &L));
  enum { LEFT = 70, RIGHT = 70, TOP = 30, ROW = 24, BAR = 18 };
  int w = LEFT + area + RIGHT, h = TOP + ROW * L.ncores + 40;
  pto_text t = {0};
  pto_text_printf(&t,
                  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                  "viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"12\">\n"
                  "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n"
                  "<text x=\"4\" y=\"18\">%zu tasks on %d cores, %.1f us; red outline: critical "
                  "path</text>\n",
                  w, h, w, h, w, h, ntasks, L.ncores, (double)(L.t1 - L.t0) / 1e3);
  for (int k = 0; k < L.ncores; k++) {
    int y = TOP + ROW * k;
    pto_text_printf(&t,
                    "<text x=\"4\" y=\"%d\">core %d</text>\n"
                    "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f2f2f2\"/>\n"
                    "<text x=\"%d\" y=\"%d\">%.1f%%</text>\n",
                    y + 14, k, LEFT, y, area, BAR, LEFT + area + 6, y + 14, pct(L.busy[k], L.span));
  }
  for (size_t i = 0; i < ntasks; i++) {
    const pto_swimlane_task *x = &tasks[i];
    double x0 = LEFT + (double)area * (double)(x->start_ns - L.t0) / (double)L.span;
    double wd = (double)area * (double)(x->end_ns - x->start_ns) / (double)L.span;
    if (wd < 0.5) wd = 0.5;
    uint32_t hh = name_hash(x->kernel);
    pto_text_printf(&t,
                    "<rect class=\"task\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
                    "fill=\"hsl(%u,60%%,60%%)\"%s><title>",
                    x0, TOP + ROW * x->core, wd, BAR, hh % 360,
                    L.crit[i] ? " stroke=\"#d00000\" stroke-width=\"2\"" : "");
    xml_text(&t, x->kernel ? x->kernel : "?");
    pto_text_printf(&t, " #%" PRIu64 " core %d: %.3f..%.3f us%s</title></rect>\n", x->task_id,
                    x->core, (double)(x->start_ns - L.t0) / 1e3, (double)(x->end_ns - L.t0) / 1e3,
                    L.crit[i] ? " (critical path)" : "");
  }
  int ya = TOP + ROW * L.ncores + 16;
  pto_text_printf(&t,
                  "<text x=\"%d\" y=\"%d\">0 us</text>\n"
                  "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.1f us</text>\n</svg>\n",
                  LEFT, ya, LEFT + area, ya, (double)(L.t1 - L.t0) / 1e3);
  layout_fini(&L);
  char *text = pto_text_finish(&t);
  if (!text) return pto__bench_oom("the timeline SVG");
  pto_status s = pto__bench_write_output(path, text, "the timeline SVG");
  free(text);
  return s;
}

/* ---- [STASK] lines ---------------------------------------------------------------------- */

static const char k_task_marker[] = "[STASK] v=1 ";

/* The value of " key=" inside [p, end), as [*v, *vend), or -1. */
static int field(const char *p, const char *end, const char *key, const char **v,
                 const char **vend) {
  size_t kn = strlen(key);
  for (const char *q = p; q + kn + 1 <= end; q++) {
    if ((q == p || q[-1] == ' ') && !memcmp(q, key, kn) && q[kn] == '=') {
      *v = q + kn + 1;
      const char *e = *v;
      while (e < end && *e != ' ' && *e != '\n' && *e != '\r')
        e++;
      *vend = e;
      return 0;
    }
  }
  return -1;
}

static int field_u64(const char *p, const char *end, const char *key, int base, uint64_t *out) {
  const char *v, *ve;
  if (field(p, end, key, &v, &ve) || v == ve) return -1;
  uint64_t x = 0;
  for (const char *q = v; q < ve; q++) {
    int d = *q >= '0' && *q <= '9'                 ? *q - '0'
            : base == 16 && *q >= 'a' && *q <= 'f' ? *q - 'a' + 10
                                                   : -1;
    if (d < 0 || x > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) return -1;
    x = x * (uint64_t)base + (uint64_t)d;
  }
  *out = x;
  return 0;
}

void pto_timeline_tasks_free(pto_swimlane_task *tasks, size_t ntasks) {
  for (size_t i = 0; tasks && i < ntasks; i++) {
    free((char *)tasks[i].kernel);
    free((uint64_t *)tasks[i].deps);
  }
  free(tasks);
}

/* Parses one record [p, end) into *t (owning its kernel and deps); -1 when malformed, -2 when
 * out of memory. */
static int parse_task(const char *p, const char *end, uint64_t *pid, uint64_t *inv,
                      pto_swimlane_task *t) {
  uint64_t core, ready, ts, dur, id;
  const char *kv, *kve, *dv, *dve;
  memset(t, 0, sizeof *t);
  if (field_u64(p, end, "pid", 10, pid) || field_u64(p, end, "inv", 10, inv) ||
      field_u64(p, end, "task", 10, &id) || field_u64(p, end, "core", 10, &core) ||
      field_u64(p, end, "ready", 10, &ready) || field_u64(p, end, "ts", 10, &ts) ||
      field_u64(p, end, "dur", 10, &dur) || field(p, end, "kernel", &kv, &kve) ||
      field(p, end, "deps", &dv, &dve) || core > 1u << 20 || ready > ts || ts + dur < ts)
    return -1;
  /* A kernel name is an identifier: a control character (an escape sequence) would reach the
   * reader's terminal in the critical-path line. */
  for (const char *q = kv; q < kve; q++)
    if ((unsigned char)*q < 0x20 || *q == 0x7f) return -1;
  t->task_id = id;
  t->core = (int)core;
  t->ready_ns = ready;
  t->start_ns = ts;
  t->end_ns = ts + dur;
  char *k = pto__bench_strndup(kv, (size_t)(kve - kv));
  if (!k) return -2;
  t->kernel = k;
  if (dve - dv == 1 && *dv == '-') return 0;
  int n = 1;
  for (const char *q = dv; q < dve; q++)
    n += *q == ',';
  uint64_t *deps = pto__bench_calloc((size_t)n, sizeof *deps);
  if (!deps) return -2;
  t->deps = deps;
  int nd = 0;
  uint64_t x = 0;
  int digits = 0;
  for (const char *q = dv;; q++) {
    if (q == dve || *q == ',') {
      if (!digits) return -1;
      deps[nd++] = x;
      x = 0;
      digits = 0;
      if (q == dve) break;
    } else if (*q >= '0' && *q <= '9') {
      x = x * 10 + (uint64_t)(*q - '0');
      digits++;
    } else {
      return -1;
    }
  }
  t->ndeps = nd;
  return 0;
}

static int cmp_task_id(const void *a, const void *b) {
  uint64_t x = ((const pto_swimlane_task *)a)->task_id, y = ((const pto_swimlane_task *)b)->task_id;
  return x < y ? -1 : x > y;
}

pto_status pto_trace_parse_tasks(const char *text, size_t len, uint64_t inv,
                                 pto_swimlane_task **out_tasks, size_t *out_ntasks,
                                 uint64_t *out_inv) {
  static const char fn[] = "pto_trace_parse_tasks";
  if (!out_tasks || !out_ntasks || (len && !text))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: NULL argument", fn);
  *out_tasks = NULL;
  *out_ntasks = 0;
  const size_t mlen = sizeof k_task_marker - 1;
  /* First pass: which launch. */
  uint64_t want_pid = 0, want_inv = inv;
  int found = 0;
  const char *end = text + len;
  for (const char *p = text; p && p < end;) {
    const char *m = memmem(p, (size_t)(end - p), k_task_marker, mlen);
    if (!m) break;
    const char *e = memchr(m, '\n', (size_t)(end - m));
    if (!e) e = end;
    uint64_t pid, iv;
    if (!field_u64(m, e, "pid", 10, &pid) && !field_u64(m, e, "inv", 10, &iv)) {
      if (inv == 0) {
        want_pid = pid;
        want_inv = iv;
        found = 1;
      } else if (iv == inv && !found) {
        want_pid = pid;
        found = 1;
      }
    }
    p = e;
  }
  if (!found && inv)
    return pto_status_make(PTO_STATUS_NOT_FOUND,
                           "no [STASK] task lines of launch inv=%" PRIu64 " in the log", inv);
  if (!found)
    return pto_status_make(PTO_STATUS_NOT_FOUND,
                           "no [STASK] task lines in the log: record the launch's tasks (pto run "
                           "--trace, or PTO_LOG_LEVEL=timing with record_tasks on)");
  pto_swimlane_task *tasks = NULL;
  size_t n = 0, cap = 0;
  pto_status s = PTO_OK;
  for (const char *p = text; p < end;) {
    const char *m = memmem(p, (size_t)(end - p), k_task_marker, mlen);
    if (!m) break;
    const char *e = memchr(m, '\n', (size_t)(end - m));
    if (!e) e = end;
    p = e;
    uint64_t pid, iv;
    if (field_u64(m, e, "pid", 10, &pid) || field_u64(m, e, "inv", 10, &iv) || pid != want_pid ||
        iv != want_inv)
      continue;
    if (pto_grow(&tasks, sizeof *tasks, &cap, n + 1)) {
      s = pto__bench_oom("the log's tasks");
      break;
    }
    int r = parse_task(m, e, &pid, &iv, &tasks[n]);
    if (r == -2) {
      n++;
      s = pto__bench_oom("the log's tasks");
      break;
    }
    if (r == -1) {
      free((char *)tasks[n].kernel);
      free((uint64_t *)tasks[n].deps);
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "malformed [STASK] line: %.*s",
                          (int)(e - m > 200 ? 200 : e - m), m);
      break;
    }
    n++;
  }
  if (s) {
    pto_timeline_tasks_free(tasks, n);
    return s;
  }
  qsort(tasks, n, sizeof *tasks, cmp_task_id);
  *out_tasks = tasks;
  *out_ntasks = n;
  if (out_inv) *out_inv = want_inv;
  return PTO_OK;
}
