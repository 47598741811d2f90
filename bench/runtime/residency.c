/* (c) The residency effect: a 64 MiB weight passed as a host tensor (copied to the device at
 * every launch) against the same weight as a device tensor (copied once, at allocation).
 *
 *   residency [MIB] [REPS] [NCORES]      (default 64 MiB, 10 repetitions, 2 cores)
 *
 * weight_sum.ptir reads the whole weight (column sums of 256-row blocks, one task per block), so
 * the device does the same work either way: the device wall should not change, the host wall
 * should shrink by about the copy. The peer is a plain memcpy of the same bytes between two
 * warm host buffers, measured in the same repetition. */
#include "bench_util.h"

#define COLS 64
#define BLOCK 256

int main(int argc, char **argv) {
  long mib = b_arg(argc, argv, 1, 64), reps = b_arg(argc, argv, 2, 10);
  int ncores = (int)b_arg(argc, argv, 3, 2);
  if (reps > 256) reps = 256;
  long rows = mib * 1024 * 1024 / (long)(sizeof(float) * COLS);
  rows -= rows % BLOCK;
  long blocks = rows / BLOCK;
  size_t bytes = sizeof(float) * (size_t)rows * COLS;

  pto_program *p = b_compile("weight_sum.ptir");
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  /* ncores vector cores, as before cores had types, and the cube core every worker has. */
  cfg.aiv_cores = ncores;
  cfg.aic_cores = 1;
  cfg.device_memory_bytes = 4 * (uint64_t)bytes + (64u << 20);
  pto_worker *w = NULL;
  B_CHECK(pto_worker_open(&cfg, &w));
  pto_handle *h = NULL;
  B_CHECK(pto_worker_register(w, p, &h));

  float *weight = malloc(bytes), *peer = malloc(bytes);
  for (long i = 0; i < rows * COLS; i++)
    weight[i] = (float)((i * 7) % 13) - 6.0f;
  memset(peer, 0, bytes);
  const int64_t wshape[2] = {rows, COLS}, sshape[2] = {blocks, COLS};
  pto_device_tensor *dw = NULL, *ds = NULL;
  B_CHECK(pto_worker_alloc_tensor(w, 2, wshape, PTO_DTYPE_F32, weight, &dw));
  B_CHECK(pto_worker_alloc_tensor(w, 2, sshape, PTO_DTYPE_F32, NULL, &ds));
  pto_host_tensor hw;
  pto_host_tensor_init(&hw, weight, PTO_DTYPE_F32, 2, wshape);
  pto_arg as_host[2] = {pto_arg_host_readonly(&hw), pto_arg_device(ds)};
  pto_arg as_dev[2] = {pto_arg_device(dw), pto_arg_device(ds)};

  /* One launch of each kind and one memcpy first, so every path starts warm (pages of the device
   * arena and of the host buffers touched once). */
  B_CHECK(pto_handle_call(h, as_host, 2));
  B_CHECK(pto_handle_call(h, as_dev, 2));
  memcpy(peer, weight, bytes);

  b_stat copy = {0}, h_wall = {0}, h_bind = {0}, h_dev = {0}, d_wall = {0}, d_bind = {0},
         d_dev = {0}, saved = {0}, saved_ratio = {0}, bind_ratio = {0}, dev_ratio = {0};
  pto_launch_record rec;
  for (long r = 0; r < reps; r++) {
    uint64_t t0 = b_now_ns();
    memcpy(peer, weight, bytes);
    double mc = (double)(b_now_ns() - t0) / 1e3;
    b_add(&copy, mc);

    B_CHECK(pto_handle_call(h, as_host, 2));
    B_CHECK(pto_worker_last_launch(w, &rec));
    double hw_us = b_span_us(&rec, "chip.run"), hb = b_span_us(&rec, "chip.run.bind"),
           hd = b_span_us(&rec, "chip.run.runner_run.device_wall");
    B_CHECK(pto_handle_call(h, as_dev, 2));
    B_CHECK(pto_worker_last_launch(w, &rec));
    double dw_us = b_span_us(&rec, "chip.run"), db = b_span_us(&rec, "chip.run.bind"),
           dd = b_span_us(&rec, "chip.run.runner_run.device_wall");
    b_add(&h_wall, hw_us), b_add(&h_bind, hb), b_add(&h_dev, hd);
    b_add(&d_wall, dw_us), b_add(&d_bind, db), b_add(&d_dev, dd);
    b_add(&saved, hw_us - dw_us);
    b_add(&saved_ratio, (hw_us - dw_us) / mc);
    b_add(&bind_ratio, hb / mc);
    b_add(&dev_ratio, dd / hd);
  }

  /* Results: column sums of every block, exact (small integers in f32). */
  long bad = 0;
  float *s = malloc(sizeof(float) * (size_t)blocks * COLS);
  B_CHECK(pto_worker_copy_from(w, s, pto_device_tensor_addr(ds),
                               sizeof(float) * (size_t)blocks * COLS));
  for (long b = 0; b < blocks; b++)
    for (int j = 0; j < COLS; j++) {
      float want = 0;
      for (long i = 0; i < BLOCK; i++)
        want += weight[(b * BLOCK + i) * COLS + j];
      if (s[b * COLS + j] != want) bad++;
    }

  printf("residency: %.1f MiB weight (%ld x %d f32, %ld tasks), %ld repetitions, %d core "
         "thread%s\n\n",
         (double)bytes / 1048576.0, rows, COLS, blocks, reps, ncores, ncores == 1 ? "" : "s");
  b_header();
  b_row("memcpy of the weight, host to host (peer)", &copy, "us");
  b_row("host tensor: span chip.run (host wall)", &h_wall, "us");
  b_row("host tensor: span chip.run.bind (incl. the copy)", &h_bind, "us");
  b_row("host tensor: span device_wall", &h_dev, "us");
  b_row("device tensor: span chip.run (host wall)", &d_wall, "us");
  b_row("device tensor: span chip.run.bind", &d_bind, "us");
  b_row("device tensor: span device_wall", &d_dev, "us");
  b_row("host wall saved by residency", &saved, "us");
  b_row("ratio: host wall saved / memcpy", &saved_ratio, "x");
  b_row("ratio: host-tensor bind / memcpy", &bind_ratio, "x");
  b_row("ratio: device wall, device / host tensor", &dev_ratio, "x");
  printf("\nGB/s: memcpy %.2f (median), host-tensor bind %.2f (median)\n",
         (double)bytes / 1e3 / b_median(&copy), (double)bytes / 1e3 / b_median(&h_bind));

  pto_worker_close(w);
  pto_program_release(p);
  free(weight);
  free(peer);
  free(s);
  if (bad) fprintf(stderr, "residency: %ld wrong results\n", bad);
  return bad ? 1 : 0;
}
