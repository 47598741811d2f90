/* pto bench: launch statistics, from a benchmark loop or from a [STRACE] log.
 *
 * pto_benchmark registers a program once on a worker, dispatches warmup + rounds launches through
 * the handle and reads each launch's span record (pto_worker_last_launch) directly. pto_trace_parse
 * builds the same statistics from [STRACE] v=1 text (what PTO_LOG_LEVEL=timing writes, or any
 * runtime that writes the same format), so a log of a benchmark and the benchmark itself give the
 * same numbers.
 *
 * Per measured launch four samples are kept, in microseconds:
 *   device wall  <root>.runner_run.device_wall (device clock: first task start to last task end)
 *   host wall    the root span (chip.run: the whole launch on the host)
 *   effective    <root>.runner_run.device_wall.orch and .sched merged as PyPTO's strace_timing.py
 *                merges them: from the earlier start to the later end (a gap between the two
 *                windows counts), of the first span of each name
 *   busy         the union of those two windows: effective less any gap between them
 * with min/median/mean/max/stdev of each (median of an even count: the mean of the middle two;
 * stdev: sample standard deviation, 0 for one sample). A launch without one of those spans gives
 * NAN for that sample, and the summary counts only the others.
 *
 * Span trees nest by dotted names (a span's parent is the longest proper dotted prefix that is
 * itself a span), show names relative to their parent, order siblings by start and mark spans on
 * the device clock "[dev]". The mean tree averages every span over the measured launches and
 * renders, with spread "both":
 *   chip.run                   71784.1us  ±6797.5  [66482.4..89832.6]
 *   |- bind                    27943.6us  ±4163.7  [24836.7..37713.3]
 *   `- runner_run               3030.8us   ±184.4    [2822.3..3694.7]
 *      `- device_wall [dev]     2005.2us    ±74.6    [1875.1..2173.2]
 * (labels left-aligned to the widest, each value column right-aligned to its widest, two spaces
 * between columns, widths in characters, no trailing blanks; the same layout as PyPTO's
 * format_mean_tree).
 *
 * Everything here returns text or data; nothing prints. Results are owned by the caller and
 * released with the matching _destroy / free(). */
#ifndef PTO_BENCH_H
#define PTO_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pto/export.h"
#include "pto/loader.h"
#include "pto/runtime.h"
#include "pto/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PTO_BENCH_DEFAULT_ROUNDS 100
#define PTO_BENCH_DEFAULT_WARMUP 3

/* ---- options ---------------------------------------------------------------------------- */

/* Called after every launch of pto_benchmark (warmup included): done of total launches. */
typedef void (*pto_bench_progress_fn)(void *ctx, int done, int total);

/* Options of pto_benchmark. Begins with its own size so a caller built against an older header
 * keeps working: fields past sz take their defaults. pto_bench_options_init gives every default;
 * within sz, rounds 0 means the default and warmup 0 means none. */
typedef struct pto_bench_options {
  size_t sz;                        /* sizeof(pto_bench_options) */
  int rounds;                       /* measured launches; 0: 100 */
  int warmup;                       /* launches before them, not measured; default 3 */
  const pto_run_config *run_config; /* the worker pto_benchmark opens when given none (NULL:
                                       defaults) */
  pto_bench_progress_fn progress;   /* NULL: none */
  void *progress_ctx;
} pto_bench_options;

PTO_API void pto_bench_options_init(pto_bench_options *opt);

/* Warmup of a log whose launch count is unknown: the benchmark's default (3), but never every
 * launch: a log of n <= 3 launches of the chosen hid drops n - 1. A log of one `pto run --trace`
 * is one measured launch; a log of a benchmark with the default warmup drops exactly its warmup. */
#define PTO_TRACE_WARMUP_AUTO (-1)

/* Options of pto_trace_parse, same conventions as pto_bench_options. */
typedef struct pto_trace_options {
  size_t sz;  /* sizeof(pto_trace_options) */
  int warmup; /* invocations dropped from the start of the chosen hid's bucket: exactly this many
                 (0: none), or PTO_TRACE_WARMUP_AUTO (the default) */
} pto_trace_options;

PTO_API void pto_trace_options_init(pto_trace_options *opt);

/* ---- statistics ------------------------------------------------------------------------- */

typedef enum pto_bench_metric {
  PTO_BENCH_DEVICE_WALL = 0,
  PTO_BENCH_HOST_WALL,
  PTO_BENCH_EFFECTIVE,
  PTO_BENCH_BUSY,
  PTO_BENCH_METRIC_COUNT
} pto_bench_metric;

/* "device_wall", "host_wall", "effective", "busy"; NULL for anything else. */
PTO_API const char *pto_bench_metric_name(pto_bench_metric m);

typedef struct pto_bench_summary {
  int count; /* samples that are not NAN; the other fields are 0 when count is 0 */
  double min, median, mean, max, stdev;
} pto_bench_summary;

/* One measured launch. Spans are in record order with names owned by the stats. */
typedef struct pto_bench_launch {
  uint64_t pid, tid; /* of a parsed log; pto_benchmark: this process and thread */
  uint64_t inv, hid;
  int nspans;
  const pto_span *spans;
  double sample[PTO_BENCH_METRIC_COUNT]; /* us; NAN where the span is missing */
} pto_bench_launch;

/* What pto_trace_parse saw; zeros for a benchmark. */
typedef struct pto_trace_info {
  size_t records;     /* complete v=1 records */
  size_t skipped;     /* "[STRACE]" markers without a complete record: truncated or malformed */
  size_t unsupported; /* complete records of another format version (v != 1), ignored */
  size_t invocations; /* (pid, inv) groups, every hid */
  size_t hids;        /* distinct hids */
  size_t bucket;      /* invocations of the chosen hid, warmup included */
} pto_trace_info;

/* Read-only to the caller; made by pto_benchmark or pto_trace_parse, freed by
 * pto_bench_stats_destroy. */
typedef struct pto_bench_stats {
  int rounds; /* measured launches (= nlaunches) */
  int warmup; /* launches dropped before them */
  uint64_t hid;
  /* Tasks of the last measured launch, and cores of the worker that ran it: pto_benchmark's
   * worker; from a log, that launch's tasks= and cores= (pto_trace_parse), 0 where it has none. */
  uint64_t ntasks;
  int ncores;
  int nlaunches;
  const pto_bench_launch *launches;
  const double *samples[PTO_BENCH_METRIC_COUNT]; /* nlaunches each, launch order, us */
  pto_bench_summary summary[PTO_BENCH_METRIC_COUNT];
  pto_trace_info trace;
  struct pto__bench_data *priv;
} pto_bench_stats;

PTO_API void pto_bench_stats_destroy(pto_bench_stats *stats);

/* Summary of n values (NANs skipped). */
PTO_API pto_bench_summary pto_bench_summarize(const double *values, int n);

/* ---- measuring -------------------------------------------------------------------------- */

/* Registers p on w (or on a worker it opens with opt->run_config and closes again when w is
 * NULL), runs opt->warmup + opt->rounds launches with args through that one handle and collects
 * the measured launches' spans. A failed launch fails the whole call, naming the launch. opt may
 * be NULL (defaults). */
PTO_API PTO_MUST_USE pto_status pto_benchmark(pto_worker *w, const pto_program *p,
                                              const pto_arg *args, size_t nargs,
                                              const pto_bench_options *opt,
                                              pto_bench_stats **out_stats);

/* ---- [STRACE] logs ---------------------------------------------------------------------- */

/* Statistics from [STRACE] v=1 text (len bytes; need not be NUL-terminated):
 *   - a record is "[STRACE] v=1 pid=N tid=N inv=N hid=HEX depth=N name=NAME ts=N dur=N" followed
 *     by optional key=value attributes up to the next "[STRACE]" or the end of the line; text
 *     before the marker (a logger's prefix) is ignored and several records may share a line;
 *     "clk=dev" among the attributes marks a device-clock span; "tasks=N cores=N" on a record
 *     of the last measured launch (pto writes them on a launch's root span) give the stats'
 *     ntasks and ncores (0 without them, as in a log of PyPTO's runtime); %XX escapes in names
 *     are decoded
 *   - a marker without a complete record (a truncated line) is skipped and counted
 *   - records are grouped into invocations by (pid, inv); the hid with the most invocations is
 *     the benchmarked program (ties: the hid of the first invocation in (pid, inv) order); its
 *     invocations are ordered by (inv, pid) and the first opt->warmup are dropped (see
 *     PTO_TRACE_WARMUP_AUTO for the default)
 * Fails with PTO_STATUS_INVALID_ARGUMENT when the text holds no complete record, or when an
 * explicit warmup leaves nothing of the chosen hid: a log without measurements is an error, never
 * zeros. */
PTO_API PTO_MUST_USE pto_status pto_trace_parse(const char *text, size_t len,
                                                const pto_trace_options *opt,
                                                pto_bench_stats **out_stats);
/* pto_trace_parse of a file's contents; errors name the file. */
PTO_API PTO_MUST_USE pto_status pto_trace_parse_file(const char *path, const pto_trace_options *opt,
                                                     pto_bench_stats **out_stats);

/* ---- span trees ------------------------------------------------------------------------- */

typedef enum pto_bench_spread {
  PTO_BENCH_SPREAD_STDEV = 0, /* ±stdev */
  PTO_BENCH_SPREAD_MINMAX,    /* [min..max] */
  PTO_BENCH_SPREAD_BOTH,      /* ±stdev [min..max] */
  PTO_BENCH_SPREAD_NONE,      /* the mean alone */
} pto_bench_spread;

/* "stdev", "minmax", "both", "none" → the spread; -1 for anything else. */
PTO_API int pto_bench_spread_from_name(const char *name);

/* One node of a tree, in display order (pre-order, siblings by start). */
typedef struct pto_bench_node {
  const char *name;  /* full dotted name */
  const char *label; /* relative to the parent (the full name for a root) */
  int level;         /* 0 for a root, parent's level + 1 */
  int depth;         /* the span's own depth field (as in the record) */
  int parent;        /* index of the parent node, -1 for a root */
  bool is_device;
  int count;                                /* launches that have this span */
  double mean_us, stdev_us, min_us, max_us; /* of its durations over those launches */
  double start_ns; /* mean start relative to the launch's first span of the same clock */
} pto_bench_node;

typedef struct pto_bench_tree {
  int nnodes;
  pto_bench_node *nodes;
  struct pto__bench_tree_data *priv;
} pto_bench_tree;

/* The mean tree over every measured launch. */
PTO_API PTO_MUST_USE pto_status pto_bench_stats_mean_tree(const pto_bench_stats *stats,
                                                          pto_bench_tree **out_tree);
/* The tree of measured launch i (0 <= i < nlaunches): every node's count is 1. */
PTO_API PTO_MUST_USE pto_status pto_bench_stats_launch_tree(const pto_bench_stats *stats, int i,
                                                            pto_bench_tree **out_tree);
PTO_API void pto_bench_tree_destroy(pto_bench_tree *tree);

/* The tree as text, one line per node, each ending in '\n' (see the header comment): the mean as
 * "%.1fus", then per spread "±%.1f" and/or "[%.1f..%.1f]". max_level >= 0 keeps the nodes of
 * level <= max_level (0: the roots alone); < 0 keeps all. *out_text is freed with pto_free. */
PTO_API PTO_MUST_USE pto_status pto_bench_tree_render(const pto_bench_tree *tree,
                                                      pto_bench_spread spread, int max_level,
                                                      char **out_text);

/* The statistics table (one row per metric: n, min, median, mean, max, stdev in us); the caller
 * frees it with pto_free. */
PTO_API PTO_MUST_USE pto_status pto_bench_stats_render_summary(const pto_bench_stats *stats,
                                                               char **out_text);

/* The statistics as one JSON object (pto_free it; ends in '\n'): rounds, warmup, hid, ntasks,
 * ncores, "unit": "us", "samples" {metric: [..]} (null where NAN), "summary" {metric: {count,
 * min, median, mean, max, stdev}}, "mean_tree" [{name, label, level, depth, device, count, mean,
 * stdev, min, max}], and "trace" {records, skipped, unsupported, invocations, hids, bucket}. */
PTO_API PTO_MUST_USE pto_status pto_bench_stats_to_json(const pto_bench_stats *stats,
                                                        char **out_json);

/* ---- swimlanes -------------------------------------------------------------------------- */

/* One task of a launch, as a swimlane shows it. Times are CLOCK_MONOTONIC ns (the clock of the
 * launch's spans). */
typedef struct pto_swimlane_task {
  int core;           /* lane */
  const char *kernel; /* kernel name */
  uint64_t task_id;
  const uint64_t *deps; /* ids of the tasks it waited for */
  int ndeps;
  uint64_t ready_ns; /* inputs ready */
  uint64_t start_ns;
  uint64_t end_ns;
  const char *core_type; /* "aiv" or "aic": named on the core's track; NULL: not known */
} pto_swimlane_task;

/* Writes a Chrome trace-event JSON file (Perfetto, chrome://tracing): the launch's spans as
 * nested slices on a host track (device-clock spans on a device track of their own), every task
 * as a slice on its core's track of the device process with its id, kernel, ready time and
 * dependencies in args, and one flow arrow per dependency. Timestamps are microseconds from the
 * earliest time given. Every event carries ph, ts, dur, pid, tid and name. Fails on a task that
 * ends before it starts or starts before it is ready. spans may be NULL with nspans 0. */
PTO_API PTO_MUST_USE pto_status pto_swimlane_write(const char *path, const pto_span *spans,
                                                   int nspans, const pto_swimlane_task *tasks,
                                                   size_t ntasks);

/* pto_swimlane_write of one launch recorded by the runtime (pto_worker_last_launch_tasks): rec's
 * spans (rec may be NULL: no host track) and the tasks that ran (core >= 0); a task that did not
 * run (a failed launch) is left out, and so are the arrows from it. */
PTO_API PTO_MUST_USE pto_status pto_swimlane_write_launch(const char *path,
                                                          const pto_launch_record *rec,
                                                          const pto_task_record *tasks,
                                                          size_t ntasks);

/* PyPTO's chip swimlane capture of one recorded launch, for its swimlane_converter and
 * critical_path tools: records_path gets chip_swimlane_records.json's layout
 *   {"chip_swimlane_level": 2,
 *    "metadata": {"runtime", "clock_freq_hz": 1e9 (cycles are ns), "num_cores",
 *                 "core_types": ["aiv"|"aic" per core id], "platform": "pto-sim"},
 *    "aicore_tasks": [[core_id, task_id, reg_task_id, start, end, 0], ...],
 *    "aicpu_tasks": [[core_id, reg_task_id, dispatch, finish], ...]}
 * with a row per SPMD block (pto_task_record.blocks), the rows of a capture without run identity
 * (6 and 4 columns: what simpler's converter and critical_path tool both read); dispatch: when
 * the task became ready, or when a core took it staged (pto_task_record.staged_ns); finish: the
 * block's end. deps_path (NULL: none) gets deps.json's: {"version": 2, "tasks": [{"task_id",
 * "func_id", "name", "core_type", "kernel_ids": [aic, aiv0, aiv1], "block_num",
 * "early_dispatch"}], "edges": [{"pred", "succ"}]}: a mixed task's
 * kernels (one pto_task_record each) are one task, its group_id, with a row per kernel, and
 * "core_type" "mix" when they differ; and beside it
 * names_path (NULL: none) {"callable_id_to_name": {"<kernel id>": name}, "level": 2}. Tasks that
 * did not run are left out. core_types has ncores entries, PTO_CORE_AIV or PTO_CORE_AIC. */
PTO_API PTO_MUST_USE pto_status pto_swimlane_write_records(
    const char *records_path, const char *deps_path, const char *names_path,
    const pto_task_record *tasks, size_t ntasks, const int *core_types, int ncores);

/* pto_swimlane_write_records at one of the reference's chip_swimlane_level values: 1 (AICore
 * rows only: "aicpu_tasks" is empty), 2 (as above) or 3, which needs the launch's scheduling
 * phases (pto_worker_last_launch_phases; phases may be empty, never NULL) and adds
 *   "metadata": {..., "core_to_thread": [0, 1, ...]}   (each core is its own scheduler thread)
 *   "aicpu_scheduler_phases": [[{"kind": "dispatch"|"complete", "start_cycles", "end_cycles",
 *                                "loop_iter", "tasks_processed"}, ...] per core, in time order]
 * (PyPTO's sched_overhead_analysis reads them); names_path's "level" is the level too. Level 4
 * (orchestrator phases) is refused: pto does not record them. */
PTO_API PTO_MUST_USE pto_status pto_swimlane_write_records_level(
    const char *records_path, const char *deps_path, const char *names_path,
    const pto_task_record *tasks, size_t ntasks, const int *core_types, int ncores, int level,
    const pto_sched_phase *phases, size_t nphases);

/* The last launch of w (which records tasks: pto_worker_set_record_tasks) as pto run
 * --swimlane-records writes it: pto_swimlane_write_records_level into records_path, with
 * deps.json, func_names.json and name_map.json (the same names; simpler's critical_path tool
 * reads that one) beside it. The folder must exist. level 1-3 as above (3 needs the launch's
 * phases: pto_worker_set_record_phases); 0 is the most the launch has: 3 when it recorded its
 * phases, else 2. */
PTO_API PTO_MUST_USE pto_status pto_swimlane_write_worker_records(pto_worker *w,
                                                                  const char *records_path,
                                                                  int level);

/* A pto_dist_config.on_chip_call that records every call of every chip as pto run
 * --swimlane-records FILE does for a host program: on_chip_call_ctx is FILE (a path; its string
 * must outlive the worker), and call N of rank R is written by the chip's own process as
 * DIR/rank_R/dispatch_N/ + FILE's name (pto_swimlane_write_worker_records at level 0: 3 where
 * the chips record their phases, pto_dist_config.record_phases; DIR is FILE's folder, the rank
 * and dispatch folders are made), where critical_path walks. */
PTO_API PTO_MUST_USE pto_status pto_dist_swimlane_records_on_chip_call(void *ctx, pto_worker *chip,
                                                                       int rank, int call);

/* Checks a trace-event file: a JSON object with a "traceEvents" array (or a bare array) whose
 * every event has a string ph and name, numeric ts and dur (dur >= 0) and integer pid and tid,
 * and where no two "task" slices (cat "task") on one (pid, tid) overlap. *out_nevents (may be
 * NULL) gets the event count. Fails naming the first offending event. */
PTO_API PTO_MUST_USE pto_status pto_swimlane_validate(const char *path, size_t *out_nevents);

/* ---- terminal timeline ------------------------------------------------------------------ */

/* Options of pto_timeline_render and pto_timeline_write_svg (same size convention as above). */
typedef struct pto_timeline_options {
  size_t sz;  /* sizeof(pto_timeline_options) */
  int width;  /* text: total columns of a row (labels and busy % included); 0: 80; at least 30.
                 SVG: pixels of the drawing area; 0: 1000 */
  int ncores; /* rows; 0: the highest core of a task + 1 */
} pto_timeline_options;

PTO_API void pto_timeline_options_init(pto_timeline_options *opt);

/* The critical path of tasks: the chain that ends with the task that ends last, each step back
 * the dependency (among tasks) that ended last. *out_path (pto_free it) gets indices into tasks,
 * in time order; *out_n its length (0 for no tasks). */
PTO_API PTO_MUST_USE pto_status pto_timeline_critical_path(const pto_swimlane_task *tasks,
                                                           size_t ntasks, size_t **out_path,
                                                           size_t *out_n);

/* A launch's tasks as text (pto_free it; UTF-8, each line ending in '\n', no trailing blanks):
 *   timeline: 6 tasks on 2 cores, 123.4 us from the first start to the last end
 *   core 0 │██▓▓▒··███│  80.1%
 *   core 1 │··▓▓▓▓▓░··│  40.0%
 *           0 us                             123.4 us
 *   █ critical path  ▓▒░ busy share of a cell  · idle
 *   critical path: 3 tasks, 45.6 us busy: add#0 (core 0) -> mul#2 (core 1) -> ...
 * One row per core, one cell per (span / cells) of time; a cell where a task on the critical path
 * runs on that core is █, otherwise the share of the cell the core was busy picks ▓ (2/3 or
 * more), ▒ (1/3 or more), ░ (some) or · (none). The busy % of a core is its task time over the
 * span. Rows are exactly opt->width columns wide (the bar takes what the label and the % leave). */
PTO_API PTO_MUST_USE pto_status pto_timeline_render(const pto_swimlane_task *tasks, size_t ntasks,
                                                    const pto_timeline_options *opt,
                                                    char **out_text);

/* The same picture as an SVG file: one row per core, a rectangle per task (colour by kernel, the
 * critical path outlined in red, a tooltip with kernel, task id, core and times), busy % per row
 * and a time axis. Errors name the file. */
PTO_API PTO_MUST_USE pto_status pto_timeline_write_svg(const char *path,
                                                       const pto_swimlane_task *tasks,
                                                       size_t ntasks,
                                                       const pto_timeline_options *opt);

/* The tasks of one launch from a log: the [STASK] v=1 lines the runtime writes after a launch's
 * [STRACE] lines when it recorded its tasks (pto run --trace, or PTO_LOG_LEVEL=timing with
 * record_tasks):
 *   [STASK] v=1 pid=N tid=N inv=N hid=HEX task=N kernel=NAME core=N ready=NS ts=NS dur=NS
 *   deps=N,N,...|-
 * inv 0 picks the last launch in the log that has task lines, else that inv (of the first pid
 * with it). Tasks come back in task-id order; kernel names and deps are owned by *out_tasks,
 * which pto_timeline_tasks_free releases. Fails when the log has no such launch. */
PTO_API PTO_MUST_USE pto_status pto_trace_parse_tasks(const char *text, size_t len, uint64_t inv,
                                                      pto_swimlane_task **out_tasks,
                                                      size_t *out_ntasks, uint64_t *out_inv);
PTO_API void pto_timeline_tasks_free(pto_swimlane_task *tasks, size_t ntasks);

#ifdef __cplusplus
}
#endif
#endif
