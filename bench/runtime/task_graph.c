/* (b) Scheduling cost: N independent tiny tasks in one launch (per-task cost) and a chain of n
 * tasks where each waits for the one before (per-hop latency), against a direct call of the
 * same kernel function per task.
 *
 *   task_graph [N] [n] [REPS] [NCORES] [MAX_INFLIGHT]
 *                  (default 10000, 1000, 15 repetitions, 2 cores, the runtime's max_inflight_tasks)
 *
 * Per repetition: one launch of each program (tensors resident, so no copies), its spans, and
 * N direct calls of the kernel. Per task = chip.run.runner_run / N (the orchestration submitting
 * while the cores run: the launch's cost per task as the host sees it). Per hop = device_wall.sched
 * / n (first task start to last task end, divided by the hops). "net" subtracts the direct
 * kernel call, i.e. what the runtime adds per task or hop. */
#include "bench_util.h"

#define COLS 16

/* Mean time of one direct call of independent.ptir's kernel (1x16 f32, y = x + 1), called on
 * the n rows in turn; the chain's kernel does the same work in place. */
static double direct_call_us(pto_program *p, float *x, float *y, long n) {
  pto_kernel_fn fn = pto_program_kernel(p, 0);
  uint64_t ss = pto_program_scratch_bytes(p);
  void *scratch = aligned_alloc(64, (ss + 63) / 64 * 64 + 64);
  pto_core_ctx ctx = {.core_id = 0, .ncores = 1, .scratch = scratch, .scratch_size = ss};
  pto_kernel_tensor kt[2];
  memset(kt, 0, sizeof kt);
  for (int i = 0; i < 2; i++) {
    kt[i].rank = 2;
    kt[i].dtype = PTO_DTYPE_F32;
    kt[i].shape[0] = 1, kt[i].shape[1] = COLS;
    kt[i].stride[0] = COLS, kt[i].stride[1] = 1;
  }
  uint64_t t0 = b_now_ns();
  for (long i = 0; i < n; i++) {
    kt[0].data = x + i * COLS;
    kt[1].data = y + i * COLS;
    fn(kt, NULL, &ctx);
  }
  double us = (double)(b_now_ns() - t0) / 1e3 / (double)n;
  free(scratch);
  return us;
}

int main(int argc, char **argv) {
  long N = b_arg(argc, argv, 1, 10000), n = b_arg(argc, argv, 2, 1000),
       reps = b_arg(argc, argv, 3, 15);
  int ncores = (int)b_arg(argc, argv, 4, 2);
  uint32_t inflight = (uint32_t)b_arg(argc, argv, 5, 0);
  if (reps > 256) reps = 256;
  pto_program *indep = b_compile("independent.ptir"), *chain = b_compile("chain.ptir");
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  /* ncores vector cores, as before cores had types, and the cube core every worker has. */
  cfg.aiv_cores = ncores;
  cfg.aic_cores = 1;
  cfg.max_inflight_tasks = inflight;
  b_strict_cores(&cfg);
  pto_worker *w = NULL;
  B_CHECK(pto_worker_open(&cfg, &w));
  pto_handle *hi = NULL, *hc = NULL;
  B_CHECK(pto_worker_register(w, indep, &hi));
  B_CHECK(pto_worker_register(w, chain, &hc));

  float *x = malloc(sizeof(float) * (size_t)N * COLS),
        *y = malloc(sizeof(float) * (size_t)N * COLS);
  for (long i = 0; i < N * COLS; i++)
    x[i] = (float)(i % 1000);
  const int64_t shape[2] = {N, COLS}, one_row[2] = {1, COLS};
  pto_device_tensor *dx = NULL, *dy = NULL, *dc = NULL;
  B_CHECK(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, x, &dx));
  B_CHECK(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, NULL, &dy));
  B_CHECK(pto_worker_alloc_tensor(w, 2, one_row, PTO_DTYPE_F32, NULL, &dc));
  pto_arg iargs[2] = {pto_arg_device(dx), pto_arg_device(dy)};
  pto_arg cargs[2] = {pto_arg_device(dc), pto_arg_index(n)};

  b_stat direct = {0}, i_wall = {0}, i_runner = {0}, i_sched = {0}, i_orch = {0}, c_wall = {0},
         c_sched = {0}, c_orch = {0}, per_task = {0}, per_task_net = {0}, per_hop = {0},
         per_hop_net = {0}, ratio_task = {0}, ratio_hop = {0};
  long bad = 0;
  for (long r = 0; r < reps; r++) {
    double d = direct_call_us(indep, x, y, N);
    b_add(&direct, d);

    pto_launch_record rec;
    uint64_t t0 = b_now_ns();
    B_CHECK(pto_handle_call(hi, iargs, 2));
    double wall = (double)(b_now_ns() - t0) / 1e3;
    B_CHECK(pto_worker_last_launch(w, &rec));
    if (rec.ntasks != (uint64_t)N) bad++;
    double runner = b_span_us(&rec, "chip.run.runner_run");
    b_add(&i_wall, wall), b_add(&i_runner, runner);
    b_add(&i_sched, b_span_us(&rec, "chip.run.runner_run.device_wall.sched"));
    b_add(&i_orch, b_span_us(&rec, "chip.run.runner_run.device_wall.orch"));
    b_add(&per_task, runner / (double)N);
    b_add(&per_task_net, runner / (double)N - d);
    b_add(&ratio_task, runner / (double)N / d);

    t0 = b_now_ns();
    B_CHECK(pto_handle_call(hc, cargs, 2));
    wall = (double)(b_now_ns() - t0) / 1e3;
    B_CHECK(pto_worker_last_launch(w, &rec));
    if (rec.ntasks != (uint64_t)n) bad++;
    double sched = b_span_us(&rec, "chip.run.runner_run.device_wall.sched");
    b_add(&c_wall, wall), b_add(&c_sched, sched);
    b_add(&c_orch, b_span_us(&rec, "chip.run.runner_run.device_wall.orch"));
    b_add(&per_hop, sched / (double)n);
    b_add(&per_hop_net, sched / (double)n - d);
    b_add(&ratio_hop, sched / (double)n / d);
  }

  /* Results: y = x + 1 everywhere; the chain row was incremented n times per repetition. */
  B_CHECK(pto_worker_copy_from(w, y, pto_device_tensor_addr(dy), sizeof(float) * (size_t)N * COLS));
  for (long i = 0; i < N * COLS; i++)
    if (y[i] != x[i] + 1) bad++;
  float row[COLS];
  B_CHECK(pto_worker_copy_from(w, row, pto_device_tensor_addr(dc), sizeof row));
  for (int j = 0; j < COLS; j++)
    if (row[j] != (float)(n * reps)) bad++;

  printf("task_graph: %ld independent tasks, a %ld-task chain, %ld repetitions, %d core "
         "thread%s, max_inflight_tasks %u%s\n\n",
         N, n, reps, ncores, ncores == 1 ? "" : "s", inflight, inflight ? "" : " (default)");
  b_header();
  b_row("direct call of the kernel function (1x16 f32)", &direct, "us/call");
  b_row("independent: launch wall", &i_wall, "us");
  b_row("independent: span runner_run", &i_runner, "us");
  b_row("independent: span device_wall.orch", &i_orch, "us");
  b_row("independent: span device_wall.sched", &i_sched, "us");
  b_row("independent: per task (runner_run / N)", &per_task, "us");
  b_row("independent: per task, net of the direct call", &per_task_net, "us");
  b_row("independent: ratio per task / direct call", &ratio_task, "x");
  b_row("chain: launch wall", &c_wall, "us");
  b_row("chain: span device_wall.orch", &c_orch, "us");
  b_row("chain: span device_wall.sched", &c_sched, "us");
  b_row("chain: per hop (sched / n)", &per_hop, "us");
  b_row("chain: per hop, net of the direct call", &per_hop_net, "us");
  b_row("chain: ratio per hop / direct call", &ratio_hop, "x");
  printf(
      "\ntargets: per task <= 2 us: %s (median %.2f us); per hop <= 10 us: %s (median %.2f us)\n",
      b_median(&per_task) <= 2 ? "met" : "NOT met", b_median(&per_task),
      b_median(&per_hop) <= 10 ? "met" : "NOT met", b_median(&per_hop));

  pto_worker_close(w);
  pto_program_release(indep);
  pto_program_release(chain);
  free(x);
  free(y);
  if (bad) fprintf(stderr, "task_graph: %ld wrong results\n", bad);
  return bad ? 1 : 0;
}
