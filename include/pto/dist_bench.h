/* pto L3 benchmark statistics: rounds of a host program on a distributed worker, folded into
 * the views PyPTO's distributed benchmark gives (the seed's names):
 *
 *   per_round      one sample per round and metric. device: the max over ranks of that rank's
 *                  summed dispatch device walls (the headline); host: the max over ranks of that
 *                  rank's summed dispatch host walls (chip.run), as PyPTO's parser computes it;
 *                  effective: the max over ranks of summed dispatch effective times; union: the
 *                  length of the union of every dispatch's window (chip.run) over all ranks;
 *                  host_function: pto's own, the host function's whole run in the parent.
 *   per_rank       per rank, the summary over rounds of its summed device, host (chip.run) and
 *                  effective times, and the union of its own dispatch windows.
 *   per_dispatch   per dispatch slot (rank, its n-th call in the round): an L2 benchmark of that
 *                  dispatch over the rounds (samples, mean tree), labelled with the callee's
 *                  orchestration name (its Build-ID hid pairs it with the callee).
 *   dispatch_groups per callee name: its dispatches' device walls over every rank and round.
 *   rounds_dispatches round -> its dispatches in issue order (rank, slot, name, tasks, walls).
 *   unstable_dispatch_slots  set when a rank's sequence of callees changes between rounds;
 *                  per_dispatch is then empty (a slot would mix different dispatches).
 *   fallback_flattened  set when the number of dispatches of a rank changes between rounds (the
 *                  dispatch shape is not deterministic); per_rank and the union view are then
 *                  empty and only per_round's device/host/effective and dispatch_groups stand. */
#ifndef PTO_DIST_BENCH_H
#define PTO_DIST_BENCH_H

#include "pto/bench.h"
#include "pto/dist.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pto_dist_metric {
  PTO_DIST_DEVICE = 0,
  PTO_DIST_HOST,
  PTO_DIST_EFFECTIVE,
  PTO_DIST_UNION,
  PTO_DIST_HOST_FUNCTION, /* per_round only (per_rank: no samples) */
  PTO_DIST_METRIC_COUNT
} pto_dist_metric;

/* "device", "host", "effective", "union", "host_function". */
PTO_API const char *pto_dist_metric_name(pto_dist_metric m);

typedef struct pto_dist_bench_slot {
  int rank;
  int32_t device;
  int pid;
  int slot;
  const char *name;       /* the callee's orchestration name */
  uint64_t hid;           /* its orchestration's hid */
  uint64_t tasks;         /* dispatch_tasks: tasks of its last measured launch */
  pto_bench_stats *stats; /* its launches over the rounds (pto_bench_stats_mean_tree works) */
} pto_dist_bench_slot;

typedef struct pto_dist_bench_dispatch {
  int rank, slot;
  const char *name;
  uint64_t tasks;
  double device_us, host_us, effective_us;
} pto_dist_bench_dispatch;

typedef struct pto_dist_bench_group {
  const char *name;
  pto_bench_summary device; /* over all its dispatches */
} pto_dist_bench_group;

typedef struct pto_dist_bench_stats {
  int rounds, warmup, nranks;
  const double *per_round[PTO_DIST_METRIC_COUNT]; /* rounds samples each, us (union: NAN when
                                                     fallback_flattened) */
  pto_bench_summary per_round_summary[PTO_DIST_METRIC_COUNT];
  const pto_bench_summary *per_rank; /* [rank * PTO_DIST_METRIC_COUNT + metric]; NULL when
                                        fallback_flattened */
  int nslots;
  const pto_dist_bench_slot *per_dispatch; /* 0 / NULL when unstable_dispatch_slots */
  int ngroups;
  const pto_dist_bench_group *dispatch_groups;
  const int *round_ndispatches;                            /* rounds */
  const pto_dist_bench_dispatch *const *rounds_dispatches; /* [round][i] */
  int unstable_dispatch_slots;
  int fallback_flattened;
  struct pto__dist_bench_data *priv;
} pto_dist_bench_stats;

/* Runs opt->warmup + opt->rounds runs of p on w (pto_bench_options: rounds, warmup, progress;
 * run_config is not used) and folds the measured ones. A failed run fails the call. */
PTO_API PTO_MUST_USE pto_status pto_dist_benchmark(pto_dist_worker *w, const pto_program *p,
                                                   const pto_arg *args, size_t nargs,
                                                   const pto_bench_options *opt,
                                                   pto_dist_bench_stats **out_stats);
/* The most ranks a log read by pto_dist_trace_parse may name (rank= of 0 to this less one). */
#define PTO_DIST_TRACE_MAX_RANKS 256
/* The same views from [STRACE] v=1 text of distributed runs (PTO_LOG_LEVEL=timing, pto run
 * --trace): each run is the parent's node.graph_build record (l3=1; the host function, under
 * the reference's node-level name, with host.so's hid), its calls the node.dispatch records
 * (rank, slot, callee, the chip's pid), each matched to the chip's own spans (rank=); logs of
 * older pto (host.run, host.dispatch) read the same. The first warmup runs are dropped. Fails
 * when the text holds no more runs than that, or a record's rank is PTO_DIST_TRACE_MAX_RANKS or
 * more (or its depth, slot, chip or l3 beyond an int): the message names the line. */
PTO_API PTO_MUST_USE pto_status pto_dist_trace_parse(const char *text, size_t len, int warmup,
                                                     pto_dist_bench_stats **out_stats);
PTO_API void pto_dist_bench_stats_destroy(pto_dist_bench_stats *st);
/* A text report: per_round, per_rank, per_dispatch and dispatch_groups as tables. */
PTO_API PTO_MUST_USE pto_status pto_dist_bench_stats_render(const pto_dist_bench_stats *st,
                                                            char **out_text);
/* Every view as JSON with the seed's field names (per_round, per_rank, per_dispatch,
 * dispatch_tasks, dispatch_groups, rounds_dispatches, unstable_dispatch_slots,
 * fallback_flattened). */
PTO_API PTO_MUST_USE pto_status pto_dist_bench_stats_to_json(const pto_dist_bench_stats *st,
                                                             char **out_json);

#ifdef __cplusplus
}
#endif
#endif
