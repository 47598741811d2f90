/* A serving loop, synchronous against pipelined: each batch is prepared on the host (a busy
 * wait of PREP_US standing in for tokenization or batching), then launched. The synchronous
 * loop prepares and then calls (pto_handle_call); the pipelined loop prepares batch i+1 while
 * batch i runs (pto_handle_submit, then pto_completion_wait before the next submit), with two
 * host buffers in turn. With preparation about as long as a launch, the pipelined loop should
 * take about half as long per batch.
 *
 *   async_pipeline [BATCHES] [NTASKS] [NCORES] [PREP_US] [SLEEP]
 *   (default 200 batches, 64 dependent tasks per launch (chain.ptir), 2 cores, PREP_US 0: the
 *    median synchronous launch time, measured first; SLEEP 1: the preparation sleeps (waits for
 *    requests) instead of computing, which overlaps even on a machine with no spare CPU) */
#include "bench_util.h"

static int g_sleep;

static void prepare(float *y, long batch, double prep_us) {
  uint64_t until = b_now_ns() + (uint64_t)(prep_us * 1e3);
  for (int i = 0; i < 16; i++)
    y[i] = (float)batch;
  if (g_sleep) {
    uint64_t ns = (uint64_t)(prep_us * 1e3);
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
    return;
  }
  while (b_now_ns() < until) {
  }
}

int main(int argc, char **argv) {
  long batches = b_arg(argc, argv, 1, 200), ntasks = b_arg(argc, argv, 2, 64);
  int ncores = (int)b_arg(argc, argv, 3, 2);
  double prep_us = (double)b_arg(argc, argv, 4, 0);
  g_sleep = (int)b_arg(argc, argv, 5, 0);
  pto_program *p = b_compile("chain.ptir");
  pto_worker *w = b_open_worker(ncores);
  pto_handle *h = NULL;
  B_CHECK(pto_worker_register(w, p, &h));
  float y[2][16];
  int64_t shape[2] = {1, 16};
  pto_host_tensor ht[2];
  pto_arg args[2][2];
  for (int b = 0; b < 2; b++) {
    pto_host_tensor_init(&ht[b], y[b], PTO_DTYPE_F32, 2, shape);
    args[b][0] = pto_arg_host(&ht[b]);
    args[b][1] = pto_arg_index(ntasks);
  }
  /* The launch alone, to size the preparation. */
  b_stat launch = {0};
  for (int i = 0; i < 20; i++) {
    uint64_t t0 = b_now_ns();
    B_CHECK(pto_handle_call(h, args[0], 2));
    b_add(&launch, (double)(b_now_ns() - t0) / 1e3);
  }
  if (prep_us <= 0) prep_us = b_median(&launch);

  b_stat sync = {0}, piped = {0};
  for (int rep = 0; rep < 5; rep++) {
    uint64_t t0 = b_now_ns();
    for (long i = 0; i < batches; i++) {
      prepare(y[0], i, prep_us);
      B_CHECK(pto_handle_call(h, args[0], 2));
      if (y[0][0] != (float)(i + ntasks))
        B_CHECK(pto_status_make(PTO_STATUS_INTERNAL, "bad result"));
    }
    b_add(&sync, (double)(b_now_ns() - t0) / 1e3 / (double)batches);

    t0 = b_now_ns();
    pto_completion *c = NULL;
    prepare(y[0], 0, prep_us);
    B_CHECK(pto_handle_submit(h, args[0], 2, &c));
    for (long i = 1; i <= batches; i++) {
      int cur = (int)(i % 2);
      if (i < batches) prepare(y[cur], i, prep_us); /* while batch i-1 runs */
      B_CHECK(pto_completion_wait(c));
      if (y[1 - cur][0] != (float)(i - 1 + ntasks))
        B_CHECK(pto_status_make(PTO_STATUS_INTERNAL, "bad result of batch %ld", i - 1));
      if (i < batches) B_CHECK(pto_handle_submit(h, args[cur], 2, &c));
    }
    b_add(&piped, (double)(b_now_ns() - t0) / 1e3 / (double)batches);
  }
  printf("async_pipeline: %ld batches of %ld dependent tasks on %d cores, preparation %.1f us "
         "(%s)\n",
         batches, ntasks, ncores, prep_us, g_sleep ? "sleeping" : "computing");
  b_header();
  b_row("launch alone (pto_handle_call)", &launch, "us");
  b_row("synchronous loop: prepare, then pto_handle_call", &sync, "us/batch");
  b_row("pipelined loop: prepare next while pto_handle_submit runs", &piped, "us/batch");
  printf("speedup of the pipelined loop (median): %.2fx\n", b_median(&sync) / b_median(&piped));
  pto_worker_close(w);
  pto_program_release(p);
  return 0;
}
