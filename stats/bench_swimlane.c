/* Swimlanes: a launch's spans and tasks as Chrome trace-event JSON, and a checker of such files.
 *
 * Layout: process 1 "pto host" holds the launch's host-clock spans on thread 0; process 2
 * "pto device" holds the device-clock spans on thread 0 and one thread per core (tid = core + 1)
 * with that core's tasks. Metadata events carry ts 0 and dur 0 too, so every event has the same
 * fields. Dependencies become flow arrows from the middle of the producer to the start of the
 * consumer. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "pto/base.h"
#include "pto/orch_abi.h"

enum { PID_HOST = 1, PID_DEVICE = 2 };

typedef struct jb {
  int ok;
} jb;

static void put(jb *b, json_t *obj, const char *key, json_t *v) {
  if (!obj || !v) {
    json_decref(v);
    b->ok = 0;
  } else if (json_object_set_new(obj, key, v)) {
    b->ok = 0;
  }
}

static void push(jb *b, json_t *arr, json_t *v) {
  if (!arr || !v) {
    json_decref(v);
    b->ok = 0;
  } else if (json_array_append_new(arr, v)) {
    b->ok = 0;
  }
}

static double us_since(uint64_t t, uint64_t base) { return (double)(t - base) / 1e3; }

static json_t *event(jb *b, const char *name, const char *ph, double ts, double dur, int pid,
                     int64_t tid) {
  json_t *e = json_object();
  put(b, e, "name", json_string(name ? name : ""));
  put(b, e, "ph", json_string(ph));
  put(b, e, "ts", json_real(ts));
  put(b, e, "dur", json_real(dur));
  put(b, e, "pid", json_integer(pid));
  put(b, e, "tid", json_integer(tid));
  return e;
}

static void meta(jb *b, json_t *events, const char *what, int pid, int64_t tid, const char *name) {
  json_t *e = event(b, what, "M", 0, 0, pid, tid);
  json_t *args = json_object();
  put(b, args, "name", json_string(name));
  put(b, e, "args", args);
  push(b, events, e);
}

typedef struct id_index {
  uint64_t id;
  size_t i;
} id_index;

/* doc as JSON text into the output file path (pto__bench_write_output). */
static pto_status write_json(json_t *doc, size_t flags, const char *path, const char *what) {
  char *text = json_dumps(doc, flags);
  if (!text) return pto__bench_oom(what);
  pto_status s = pto__bench_write_output(path, text, what);
  free(text);
  return s;
}

static int cmp_id(const void *a, const void *b) {
  uint64_t x = ((const id_index *)a)->id, y = ((const id_index *)b)->id;
  return x < y ? -1 : x > y;
}

pto_status pto_swimlane_write(const char *path, const pto_span *spans, int nspans,
                              const pto_swimlane_task *tasks, size_t ntasks) {
  if (!path)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_swimlane_write: path is NULL");
  if ((nspans > 0 && !spans) || nspans < 0 || (ntasks && !tasks))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_swimlane_write: spans or tasks missing for their count");
  uint64_t base = UINT64_MAX;
  int maxcore = -1;
  for (int i = 0; i < nspans; i++)
    if (spans[i].ts_ns < base) base = spans[i].ts_ns;
  for (size_t i = 0; i < ntasks; i++) {
    const pto_swimlane_task *t = &tasks[i];
    if (t->core < 0)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "pto_swimlane_write: task %" PRIu64 " has core %d", t->task_id,
                             t->core);
    if (t->start_ns < t->ready_ns || t->end_ns < t->start_ns)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "pto_swimlane_write: task %" PRIu64 " (%s): times out of order: ready "
                             "%" PRIu64 ", start %" PRIu64 ", end %" PRIu64 " ns",
                             t->task_id, t->kernel ? t->kernel : "?", t->ready_ns, t->start_ns,
                             t->end_ns);
    if (t->ndeps < 0 || (t->ndeps && !t->deps))
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "pto_swimlane_write: task %" PRIu64 ": dependencies missing for their "
                             "count",
                             t->task_id);
    if (t->ready_ns < base) base = t->ready_ns;
    if (t->core > maxcore) maxcore = t->core;
  }
  if (base == UINT64_MAX) base = 0;

  id_index *ids = pto__bench_calloc(ntasks, sizeof *ids);
  if (!ids) return pto__bench_oom("the swimlane");
  for (size_t i = 0; i < ntasks; i++)
    ids[i] = (id_index){tasks[i].task_id, i};
  qsort(ids, ntasks, sizeof *ids, cmp_id);

  jb b = {1};
  json_t *doc = json_object(), *events = json_array();
  meta(&b, events, "process_name", PID_HOST, 0, "pto host");
  meta(&b, events, "thread_name", PID_HOST, 0, "launch");
  meta(&b, events, "process_name", PID_DEVICE, 0, "pto device");
  meta(&b, events, "thread_name", PID_DEVICE, 0, "device spans");
  for (int c = 0; c <= maxcore; c++) {
    const char *type = NULL;
    for (size_t i = 0; i < ntasks && !type; i++)
      if (tasks[i].core == c) type = tasks[i].core_type;
    char name[48];
    if (type)
      snprintf(name, sizeof name, "core %d (%s)", c, type);
    else
      snprintf(name, sizeof name, "core %d", c);
    meta(&b, events, "thread_name", PID_DEVICE, c + 1, name);
  }
  for (int i = 0; i < nspans; i++) {
    const pto_span *sp = &spans[i];
    json_t *e = event(&b, sp->name, "X", us_since(sp->ts_ns, base), (double)sp->dur_ns / 1e3,
                      sp->is_device ? PID_DEVICE : PID_HOST, 0);
    put(&b, e, "cat", json_string("span"));
    json_t *args = json_object();
    put(&b, args, "depth", json_integer(sp->depth));
    put(&b, e, "args", args);
    push(&b, events, e);
  }
  uint64_t flow_id = 0;
  for (size_t i = 0; i < ntasks && b.ok; i++) {
    const pto_swimlane_task *t = &tasks[i];
    json_t *e = event(&b, t->kernel, "X", us_since(t->start_ns, base),
                      (double)(t->end_ns - t->start_ns) / 1e3, PID_DEVICE, t->core + 1);
    put(&b, e, "cat", json_string("task"));
    json_t *args = json_object(), *deps = json_array();
    put(&b, args, "task_id", json_integer((json_int_t)t->task_id));
    put(&b, args, "kernel", json_string(t->kernel ? t->kernel : ""));
    put(&b, args, "core", json_integer(t->core));
    if (t->core_type) put(&b, args, "core_type", json_string(t->core_type));
    put(&b, args, "ready_us", json_real(us_since(t->ready_ns, base)));
    put(&b, args, "wait_us", json_real((double)(t->start_ns - t->ready_ns) / 1e3));
    for (int d = 0; d < t->ndeps; d++)
      push(&b, deps, json_integer((json_int_t)t->deps[d]));
    put(&b, args, "deps", deps);
    put(&b, e, "args", args);
    push(&b, events, e);
    for (int d = 0; d < t->ndeps; d++) {
      id_index key = {t->deps[d], 0};
      const id_index *hit = bsearch(&key, ids, ntasks, sizeof *ids, cmp_id);
      if (!hit) continue; /* a producer outside this launch's list: args keep the id */
      const pto_swimlane_task *p = &tasks[hit->i];
      flow_id++;
      json_t *s = event(&b, "dep", "s", us_since(p->start_ns + (p->end_ns - p->start_ns) / 2, base),
                        0, PID_DEVICE, p->core + 1);
      put(&b, s, "cat", json_string("dep"));
      put(&b, s, "id", json_integer((json_int_t)flow_id));
      push(&b, events, s);
      json_t *f = event(&b, "dep", "f", us_since(t->start_ns, base), 0, PID_DEVICE, t->core + 1);
      put(&b, f, "cat", json_string("dep"));
      put(&b, f, "id", json_integer((json_int_t)flow_id));
      put(&b, f, "bp", json_string("e"));
      push(&b, events, f);
    }
  }
  free(ids);
  put(&b, doc, "traceEvents", events);
  put(&b, doc, "displayTimeUnit", json_string("ns"));
  pto_status s = PTO_OK;
  if (!b.ok) {
    s = pto__bench_oom("the swimlane");
  } else {
    s = write_json(doc, JSON_REAL_PRECISION(15), path, "the swimlane");
  }
  json_decref(doc);
  return s;
}

static const char *core_type_name(int type) {
  return type == PTO_CORE_AIC ? "aic" : type == PTO_CORE_AIV ? "aiv" : NULL;
}

pto_status pto_swimlane_write_launch(const char *path, const pto_launch_record *rec,
                                     const pto_task_record *tasks, size_t ntasks) {
  if (ntasks && !tasks)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_swimlane_write_launch: tasks missing for their count");
  pto_swimlane_task *lane = pto__bench_calloc(ntasks, sizeof *lane);
  if (!lane) return pto__bench_oom("the swimlane");
  size_t n = 0;
  for (size_t i = 0; i < ntasks; i++) {
    const pto_task_record *t = &tasks[i];
    if (t->core < 0) continue;
    lane[n++] = (pto_swimlane_task){t->core,     t->kernel, t->task_id,
                                    t->deps,     t->ndeps,  t->ready_ns,
                                    t->start_ns, t->end_ns, core_type_name(t->core_type)};
  }
  int nspans = rec ? rec->nspans : 0;
  if (nspans > PTO_LAUNCH_MAX_SPANS) nspans = PTO_LAUNCH_MAX_SPANS;
  pto_status s = pto_swimlane_write(path, rec ? rec->spans : NULL, nspans, lane, n);
  free(lane);
  return s;
}

/* ---- PyPTO's chip swimlane capture ------------------------------------------------------- */

static pto_status dump_json(jb *b, json_t *doc, const char *path, const char *what) {
  pto_status s = PTO_OK;
  if (!b->ok)
    s = pto__bench_oom(what);
  else
    s = write_json(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(15), path, what);
  json_decref(doc);
  return s;
}

static json_t *int_row(jb *b, const int64_t *v, int n) {
  json_t *row = json_array();
  for (int i = 0; i < n; i++)
    push(b, row, json_integer((json_int_t)v[i]));
  return row;
}

typedef struct edge {
  uint64_t pred, succ;
} edge;

static int cmp_edge(const void *a, const void *b) {
  const edge *x = a, *y = b;
  if (x->pred != y->pred) return x->pred < y->pred ? -1 : 1;
  return x->succ < y->succ ? -1 : x->succ > y->succ;
}

/* One deps.json task per task id of the orchestration: a mixed task's kernels (one record
 * each) share their group's id and fill its kernel_ids slots; edges join groups, once each. */
static pto_status write_deps(const char *path, const pto_task_record *tasks, size_t ntasks) {
  size_t nedges = 0;
  for (size_t i = 0; i < ntasks; i++)
    nedges += (size_t)(tasks[i].core >= 0 ? tasks[i].ndeps : 0);
  edge *edges = pto__bench_calloc(nedges ? nedges : 1, sizeof *edges);
  if (!edges) return pto__bench_oom("deps.json");
  size_t ne = 0;
  for (size_t i = 0; i < ntasks; i++) {
    const pto_task_record *t = &tasks[i];
    if (t->core < 0) continue;
    for (int j = 0; j < t->ndeps; j++) {
      uint64_t p = t->deps[j] < ntasks ? tasks[t->deps[j]].group_id : t->deps[j];
      if (p != t->group_id) edges[ne++] = (edge){p, t->group_id};
    }
  }
  qsort(edges, ne, sizeof *edges, cmp_edge);
  jb db = {1};
  json_t *dd = json_object(), *dt = json_array(), *ej = json_array();
  put(&db, dd, "version", json_integer(2));
  for (size_t i = 0; i < ntasks; i++) {
    const pto_task_record *t = &tasks[i];
    if (t->core < 0 || t->group_id != t->task_id) continue; /* one entry per group, at its first */
    int64_t k[3] = {-1, -1, -1};
    const char *type = NULL;
    char name[256] = "";
    for (size_t m = i; m < ntasks && tasks[m].group_id == t->task_id; m++) {
      const pto_task_record *u = &tasks[m];
      if (u->slot >= 0 && u->slot < 3) k[u->slot] = u->kernel_id;
      const char *ut = core_type_name(u->core_type);
      type = !type ? ut : (ut && strcmp(type, ut) != 0) ? "mix" : type;
      size_t len = strlen(name);
      snprintf(name + len, sizeof name - len, "%s%s", len ? "+" : "", u->kernel ? u->kernel : "");
    }
    json_t *o = json_object();
    put(&db, o, "task_id", json_integer((json_int_t)t->task_id));
    put(&db, o, "func_id", json_integer(t->kernel_id));
    put(&db, o, "name", json_string(name));
    put(&db, o, "core_type", json_string(type ? type : "aiv"));
    put(&db, o, "kernel_ids", int_row(&db, k, 3));
    put(&db, o, "block_num", json_integer(t->block_num > 1 ? t->block_num : 1));
    put(&db, o, "early_dispatch", json_boolean(t->early_resolve != 0));
    push(&db, dt, o);
  }
  for (size_t i = 0; i < ne; i++) {
    if (i && !cmp_edge(&edges[i], &edges[i - 1])) continue;
    json_t *e = json_object();
    put(&db, e, "pred", json_integer((json_int_t)edges[i].pred));
    put(&db, e, "succ", json_integer((json_int_t)edges[i].succ));
    push(&db, ej, e);
  }
  free(edges);
  put(&db, dd, "tasks", dt);
  put(&db, dd, "edges", ej);
  return dump_json(&db, dd, path, "deps.json");
}

/* Level 3's per-thread phase lists (one thread per core) into doc, and core_to_thread into md. */
static pto_status put_phases(jb *b, json_t *doc, json_t *md, const pto_sched_phase *phases,
                             size_t nphases, int ncores) {
  static const char fn[] = "pto_swimlane_write_records_level";
  json_t *threads = json_array(), *c2t = json_array();
  for (int c = 0; c < ncores; c++) {
    push(b, threads, json_array());
    push(b, c2t, json_integer(c));
  }
  put(b, md, "core_to_thread", c2t);
  for (size_t i = 0; i < nphases && b->ok; i++) {
    const pto_sched_phase *p = &phases[i];
    if (p->core < 0 || p->core >= ncores ||
        (p->kind != PTO_SCHED_PHASE_DISPATCH && p->kind != PTO_SCHED_PHASE_COMPLETE) ||
        p->end_ns < p->start_ns) {
      json_decref(threads);
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "%s: phase %zu: core %d of %d, kind %d, times %" PRIu64 "..%" PRIu64
                             " (a core, dispatch or complete, start <= end expected)",
                             fn, i, p->core, ncores, p->kind, p->start_ns, p->end_ns);
    }
    json_t *o = json_object();
    put(b, o, "kind", json_string(p->kind == PTO_SCHED_PHASE_DISPATCH ? "dispatch" : "complete"));
    put(b, o, "start_cycles", json_integer((json_int_t)p->start_ns));
    put(b, o, "end_cycles", json_integer((json_int_t)p->end_ns));
    put(b, o, "loop_iter", json_integer(p->loop_iter));
    put(b, o, "tasks_processed", json_integer(p->tasks));
    push(b, json_array_get(threads, (size_t)p->core), o);
  }
  put(b, doc, "aicpu_scheduler_phases", threads);
  return PTO_OK;
}

pto_status pto_swimlane_write_records(const char *records_path, const char *deps_path,
                                      const char *names_path, const pto_task_record *tasks,
                                      size_t ntasks, const int *core_types, int ncores) {
  return pto_swimlane_write_records_level(records_path, deps_path, names_path, tasks, ntasks,
                                          core_types, ncores, 2, NULL, 0);
}

pto_status pto_swimlane_write_records_level(const char *records_path, const char *deps_path,
                                            const char *names_path, const pto_task_record *tasks,
                                            size_t ntasks, const int *core_types, int ncores,
                                            int level, const pto_sched_phase *phases,
                                            size_t nphases) {
  if (!records_path || (ntasks && !tasks) || ncores < 0 || (ncores && !core_types))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_swimlane_write_records: path, tasks or core types missing");
  if (level < 1 || level > 3)
    return pto_status_make(
        PTO_STATUS_INVALID_ARGUMENT,
        "pto_swimlane_write_records_level: level %d: pto writes levels 1 (AICore "
        "rows), 2 (and AICPU rows) and 3 (and scheduler phases); level 4's "
        "orchestrator phases are not recorded",
        level);
  if (level == 3 && !phases)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_swimlane_write_records_level: level 3 needs the launch's "
                           "scheduling phases (pto_worker_last_launch_phases)");
  for (size_t i = 0; i < ntasks; i++)
    for (int k = -1; k < (tasks[i].blocks ? tasks[i].block_num : 0); k++) {
      int core = k < 0 ? tasks[i].core : tasks[i].blocks[k].core;
      if (core >= ncores)
        return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                               "pto_swimlane_write_records: task %" PRIu64 " ran on core %d of %d",
                               tasks[i].task_id, core, ncores);
    }
  jb b = {1};
  json_t *doc = json_object(), *md = json_object(), *types = json_array();
  put(&b, doc, "chip_swimlane_level", json_integer(level));
  put(&b, md, "runtime", json_string("tensormap_and_ringbuffer"));
  put(&b, md, "platform", json_string("pto-sim"));
  put(&b, md, "clock_freq_hz", json_integer(1000000000));
  put(&b, md, "num_cores", json_integer(ncores));
  for (int c = 0; c < ncores; c++) {
    const char *name = core_type_name(core_types[c]);
    push(&b, types, json_string(name ? name : "aiv"));
  }
  put(&b, md, "core_types", types);
  put(&b, doc, "metadata", md);
  json_t *aicore = json_array(), *srows = json_array();
  int64_t reg = 0; /* the join key of the two rows: unique per dispatch (a block of a task) */
  for (size_t i = 0; i < ntasks; i++) {
    const pto_task_record *t = &tasks[i];
    if (t->core < 0) continue;
    /* Dispatched when ready, or when a core took it staged (allow_early_resolve producers). */
    int64_t dispatch = (int64_t)(t->staged_ns ? t->staged_ns : t->ready_ns);
    int nb = t->blocks && t->block_num > 1 ? t->block_num : 1;
    for (int k = 0; k < nb; k++) {
      const pto_block_record one = {t->core, t->start_ns, t->end_ns};
      const pto_block_record *blk = nb > 1 ? &t->blocks[k] : &one;
      if (blk->core < 0) continue;
      reg++;
      int64_t a[6] = {
          blk->core, (int64_t)t->group_id, reg, (int64_t)blk->start_ns, (int64_t)blk->end_ns, 0};
      push(&b, aicore, int_row(&b, a, 6));
      int64_t d[4] = {blk->core, reg, dispatch, (int64_t)blk->end_ns};
      if (level >= 2) push(&b, srows, int_row(&b, d, 4));
    }
  }
  /* Top-level rows, as the converter, critical_path and sched_overhead_analysis read them. */
  put(&b, doc, "aicore_tasks", aicore);
  put(&b, doc, "aicpu_tasks", srows);
  if (level == 3) {
    pto_status s = put_phases(&b, doc, md, phases, nphases, ncores);
    if (s) {
      json_decref(doc);
      return s;
    }
  }
  PTO_RETURN_IF_ERROR(dump_json(&b, doc, records_path, "the swimlane records"));

  if (deps_path) PTO_RETURN_IF_ERROR(write_deps(deps_path, tasks, ntasks));
  if (names_path) {
    jb nb = {1};
    json_t *nd = json_object(), *map = json_object();
    for (size_t i = 0; i < ntasks; i++) {
      if (tasks[i].kernel_id < 0 || !tasks[i].kernel) continue;
      char key[16];
      snprintf(key, sizeof key, "%d", tasks[i].kernel_id);
      put(&nb, map, key, json_string(tasks[i].kernel));
    }
    put(&nb, nd, "callable_id_to_name", map);
    put(&nb, nd, "level", json_integer(level));
    PTO_RETURN_IF_ERROR(dump_json(&nb, nd, names_path, "the kernel names"));
  }
  return PTO_OK;
}

/* ---- validation ------------------------------------------------------------------------- */

typedef struct slice {
  int64_t pid, tid;
  double ts, dur;
  size_t index;
  const char *name;
} slice;

static int cmp_slice(const void *a, const void *b) {
  const slice *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static pto_status check_event(const char *path, size_t i, json_t *e) {
  const char *name = json_is_object(e) ? json_string_value(json_object_get(e, "name")) : NULL;
  if (!json_is_object(e))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: event %zu is not an object", path, i);
  static const char *const k_str[] = {"ph", "name"};
  for (int k = 0; k < 2; k++)
    if (!json_is_string(json_object_get(e, k_str[k])))
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: event %zu (%s): no string '%s'",
                             path, i, name ? name : "unnamed", k_str[k]);
  static const char *const k_num[] = {"ts", "dur"};
  for (int k = 0; k < 2; k++)
    if (!json_is_number(json_object_get(e, k_num[k])))
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: event %zu (%s): no number '%s'",
                             path, i, name, k_num[k]);
  static const char *const k_int[] = {"pid", "tid"};
  for (int k = 0; k < 2; k++)
    if (!json_is_integer(json_object_get(e, k_int[k])))
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: event %zu (%s): no integer '%s'",
                             path, i, name, k_int[k]);
  double dur = json_number_value(json_object_get(e, "dur"));
  if (!(dur >= 0))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: event %zu (%s): negative dur %g", path,
                           i, name, dur);
  return PTO_OK;
}

pto_status pto_swimlane_validate(const char *path, size_t *out_nevents) {
  if (out_nevents) *out_nevents = 0;
  if (!path)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_swimlane_validate: path is NULL");
  /* A regular file of bounded size, as every trace is read: json_load_file would block on a FIFO
   * without a writer and read a device without end. */
  uint8_t *text = NULL;
  size_t len = 0;
  PTO_RETURN_IF_ERROR(pto_file_read(path, PTO_FILE_MAX_LOG, &text, &len));
  json_error_t err;
  json_t *doc = json_loadb((const char *)text, len, 0, &err);
  pto_free(text);
  if (!doc)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s:%d:%d: %s", path, err.line, err.column,
                           err.text);
  json_t *events = json_is_array(doc) ? doc : json_object_get(doc, "traceEvents");
  pto_status s = PTO_OK;
  slice *sl = NULL;
  if (!json_is_array(events)) {
    s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                        "%s: neither an array of events nor an object with a 'traceEvents' array",
                        path);
    goto out;
  }
  size_t n = json_array_size(events), nsl = 0;
  sl = pto__bench_calloc(n, sizeof *sl);
  if (!sl) {
    s = pto__bench_oom("the swimlane check");
    goto out;
  }
  for (size_t i = 0; i < n && !s; i++) {
    json_t *e = json_array_get(events, i);
    s = check_event(path, i, e);
    if (s) break;
    const char *cat = json_string_value(json_object_get(e, "cat"));
    const char *ph = json_string_value(json_object_get(e, "ph"));
    if (!cat || strcmp(cat, "task") || strcmp(ph, "X")) continue;
    sl[nsl++] = (slice){json_integer_value(json_object_get(e, "pid")),
                        json_integer_value(json_object_get(e, "tid")),
                        json_number_value(json_object_get(e, "ts")),
                        json_number_value(json_object_get(e, "dur")),
                        i,
                        json_string_value(json_object_get(e, "name"))};
  }
  if (s) goto out;
  qsort(sl, nsl, sizeof *sl, cmp_slice);
  for (size_t i = 1; i < nsl; i++) {
    const slice *a = &sl[i - 1], *b = &sl[i];
    if (a->pid != b->pid || a->tid != b->tid) continue;
    /* Written with 15 significant digits: allow that much rounding. */
    double eps = 1e-9 * fmax(1.0, fabs(b->ts)) + 1e-6;
    if (a->ts + a->dur > b->ts + eps) {
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                          "%s: tasks overlap on pid %" PRId64 " tid %" PRId64
                          ": event %zu (%s) runs [%g, %g) us and event %zu (%s) starts at %g us",
                          path, a->pid, a->tid, a->index, a->name, a->ts, a->ts + a->dur, b->index,
                          b->name, b->ts);
      goto out;
    }
  }
  if (out_nevents) *out_nevents = n;
out:
  free(sl);
  json_decref(doc);
  return s;
}

/* ---- a worker's last launch as record files (pto run --swimlane-records, Python) ---------- */

pto_status pto_swimlane_write_worker_records(pto_worker *w, const char *records_path, int level) {
  if (!records_path)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "swimlane records: the path is NULL");
  const pto_task_record *tasks = NULL;
  const pto_sched_phase *phases = NULL;
  size_t n = 0, nphases = 0;
  PTO_RETURN_IF_ERROR(pto_worker_last_launch_tasks(w, &tasks, &n));
  if (level == 0) { /* the most the launch has: its phases when it recorded them */
    level = pto_worker_last_launch_phases(w, &phases, &nphases) ? 2 : 3;
  } else if (level >= 3) {
    PTO_RETURN_IF_ERROR(pto_worker_last_launch_phases(w, &phases, &nphases));
  }
  int ncores = pto_worker_core_count(w);
  int *types = pto_calloc((size_t)(ncores > 0 ? ncores : 1), sizeof *types);
  if (!types) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int c = 0; c < ncores; c++)
    types[c] = pto_worker_core_type(w, c);
  const char *slash = strrchr(records_path, '/');
  int dirlen = slash ? (int)(slash - records_path) + 1 : 0;
  char deps[PATH_MAX], names[PATH_MAX], map[PATH_MAX];
  pto_status s = PTO_OK;
  if (snprintf(deps, sizeof deps, "%.*sdeps.json", dirlen, records_path) >= (int)sizeof deps ||
      snprintf(names, sizeof names, "%.*sfunc_names.json", dirlen, records_path) >=
          (int)sizeof names ||
      snprintf(map, sizeof map, "%.*sname_map.json", dirlen, records_path) >= (int)sizeof map)
    s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: path too long", records_path);
  if (!s)
    s = pto_swimlane_write_records_level(records_path, deps, names, tasks, n, types, ncores, level,
                                         phases, nphases);
  free(types);
  /* The same names as name_map.json, the name simpler's critical_path tool looks for. */
  uint8_t *buf = NULL;
  size_t nbuf = 0;
  if (!s) s = pto_file_read(names, PTO_FILE_MAX_SOURCE, &buf, &nbuf);
  if (!s) {
    const void *bufs[1] = {buf};
    s = pto_file_replace(map, bufs, &nbuf, 1);
  }
  free(buf);
  return s;
}

pto_status pto_dist_swimlane_records_on_chip_call(void *ctx, pto_worker *chip, int rank, int call) {
  const char *file = ctx;
  if (!file)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "swimlane records: on_chip_call_ctx is not the records path");
  const char *slash = strrchr(file, '/');
  int dirlen = slash ? (int)(slash - file) + 1 : 0;
  char path[PATH_MAX];
  int n = snprintf(path, sizeof path, "%.*srank_%d/dispatch_%d", dirlen, file, rank, call);
  if (n < 0 || (size_t)n + strlen(file + dirlen) + 2 >= sizeof path)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: path too long", file);
  PTO_RETURN_IF_ERROR(pto_file_mkdirs(path, 0755));
  snprintf(path + n, sizeof path - (size_t)n, "/%s", file + dirlen);
  return pto_swimlane_write_worker_records(chip, path, 0);
}
