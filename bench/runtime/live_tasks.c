/* (d) Submit cost against the number of live tasks: one launch of live.ptir per N, where a long
 * task holds the only vector core, so the N independent row tasks submitted after it are all
 * live (submitted, unfinished) while the orchestration submits them. A submit that scans the
 * live accesses of its buffer costs O(live); the tensor map keeps it flat.
 *
 *   live_tasks [REPS] [N...]      (default 5 repetitions, N = 100 1000 10000 100000)
 *
 * Per task = span device_wall.orch / N (the orchestration thread only: one tensor.slice pair,
 * the task's arguments and its dependency tracking per submit). Peer: the same figure at the
 * smallest N, in the same run; "flat" is the ratio to it. The spin task is sized from a first
 * launch with N = 0 so that it outlasts the orchestration; a row saying "no" means the core
 * started running row tasks before the last submit (their count is then below N). */
#include "bench_util.h"

#define COLS 16
#define MAXN 16

int main(int argc, char **argv) {
  long reps = b_arg(argc, argv, 1, 5);
  if (reps > 256) reps = 256;
  long ns[MAXN];
  int nn = 0;
  for (int i = 2; i < argc && nn < MAXN; i++)
    ns[nn++] = strtol(argv[i], NULL, 10);
  if (!nn) {
    long d[] = {100, 1000, 10000, 100000};
    for (int i = 0; i < 4; i++)
      ns[nn++] = d[i];
  }
  long nmax = 0;
  for (int i = 0; i < nn; i++)
    if (ns[i] > nmax) nmax = ns[i];
  pto_program *p = b_compile("live.ptir");
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.aiv_cores = 1;
  cfg.aic_cores = 1;
  cfg.max_inflight_tasks = (uint32_t)nmax + 16;
  pto_worker *w = NULL;
  B_CHECK(pto_worker_open(&cfg, &w));
  pto_handle *h = NULL;
  B_CHECK(pto_worker_register(w, p, &h));
  float *x = calloc((size_t)nmax * COLS, sizeof(float)),
        *y = malloc(sizeof(float) * (size_t)nmax * COLS);
  for (long i = 0; i < nmax * COLS; i++)
    x[i] = (float)(i % 1000);

  /* The spin task's time per iteration, from launches with no row tasks. */
  const int64_t one_row[2] = {1, COLS};
  pto_device_tensor *dg = NULL;
  B_CHECK(pto_worker_alloc_tensor(w, 2, one_row, PTO_DTYPE_F32, NULL, &dg));
  const int64_t calib = 2000000;
  double spin_ns_per_iter = 1e9;
  {
    int64_t shape0[2] = {1, COLS};
    pto_device_tensor *dx = NULL, *dy = NULL;
    B_CHECK(pto_worker_alloc_tensor(w, 2, shape0, PTO_DTYPE_F32, x, &dx));
    B_CHECK(pto_worker_alloc_tensor(w, 2, shape0, PTO_DTYPE_F32, NULL, &dy));
    for (int k = 0; k < 3; k++) {
      pto_arg a[4] = {pto_arg_device(dg), pto_arg_device(dx), pto_arg_device(dy),
                      pto_arg_index(calib)};
      uint64_t t0 = b_now_ns();
      B_CHECK(pto_handle_call(h, a, 4));
      double v = (double)(b_now_ns() - t0) / (double)calib;
      if (v < spin_ns_per_iter) spin_ns_per_iter = v;
    }
    B_CHECK(pto_worker_free_tensor(w, dx));
    B_CHECK(pto_worker_free_tensor(w, dy));
  }

  b_stat per[MAXN], orch[MAXN];
  memset(per, 0, sizeof per);
  memset(orch, 0, sizeof orch);
  int live_ok[MAXN];
  long bad = 0;
  for (int j = 0; j < nn; j++) {
    long N = ns[j];
    live_ok[j] = 1;
    int64_t shape[2] = {N, COLS};
    pto_device_tensor *dx = NULL, *dy = NULL;
    B_CHECK(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, x, &dx));
    B_CHECK(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, NULL, &dy));
    /* Generous: 20 us per submit, at least 2 ms. */
    double want_ns = (double)N * 20000.0;
    if (want_ns < 2e6) want_ns = 2e6;
    int64_t iters = (int64_t)(want_ns / spin_ns_per_iter) + 1;
    for (long r = -1; r < reps; r++) { /* r = -1: a warm-up launch, not counted */
      pto_arg a[4] = {pto_arg_device(dg), pto_arg_device(dx), pto_arg_device(dy),
                      pto_arg_index(iters)};
      B_CHECK(pto_handle_call(h, a, 4));
      pto_launch_record rec;
      B_CHECK(pto_worker_last_launch(w, &rec));
      if (rec.ntasks != (uint64_t)N + 1) bad++;
      double o = b_span_us(&rec, "chip.run.runner_run.device_wall.orch");
      double spin_us = (double)iters * spin_ns_per_iter / 1e3;
      if (r < 0) continue;
      if (o >= spin_us) live_ok[j] = 0;
      b_add(&orch[j], o);
      b_add(&per[j], o * 1e3 / (double)N);
    }
    B_CHECK(
        pto_worker_copy_from(w, y, pto_device_tensor_addr(dy), sizeof(float) * (size_t)N * COLS));
    for (long i = 0; i < N * COLS; i++)
      if (y[i] != x[i] + 1) bad++;
    B_CHECK(pto_worker_free_tensor(w, dx));
    B_CHECK(pto_worker_free_tensor(w, dy));
  }

  printf(
      "live_tasks: %ld repetitions, 1 vector core held by a spin task, max_inflight_tasks %u\n\n",
      reps, cfg.max_inflight_tasks);
  printf("| live tasks N | orch span median (us) | per submit min (ns) | per submit median (ns) | "
         "median / median at N=%ld | all live |\n| ---: | ---: | ---: | ---: | ---: | --- |\n",
         ns[0]);
  for (int j = 0; j < nn; j++)
    printf("| %ld | %.1f | %.1f | %.1f | %.2fx | %s |\n", ns[j], b_median(&orch[j]), b_min(&per[j]),
           b_median(&per[j]), b_median(&per[j]) / b_median(&per[0]), live_ok[j] ? "yes" : "no");

  pto_worker_close(w);
  pto_program_release(p);
  free(x);
  free(y);
  if (bad) fprintf(stderr, "live_tasks: %ld wrong results\n", bad);
  return bad ? 1 : 0;
}
