/* A resident stacked weight on a distributed worker, placed as PyPTO places it: shard i of
 * w[n,16,64] is uploaded once to worker_ids[i] = n-1-i, and dist_scale_placed.ptir's host code
 * passes tensor.select(%w, i), shard i, to device n-1-i, where it already lives. y block i is
 * x block i * w[i], bit for bit what the same program gives with the host array w. The weight
 * stays resident over many runs with new x; it is read back with pto_dist_copy_stacked_from at
 * the end, unchanged.
 *
 *   dist_stacked [PTIR_DIR] [RUNS]      (default 20 runs, on 2 devices) */
#include "example.h"
#include "pto/dist.h"

#define NDEV 2
#define R 16
#define C 64

int main(int argc, char **argv) {
  long runs = ex_size(argc, argv, 20);
  pto_program *prog = ex_compile_devices(ex_ptir_dir(argc, argv), "dist_scale_placed.ptir", NDEV);

  pto_dist_config cfg;
  pto_dist_config_init(&cfg);
  cfg.ndevices = NDEV;
  pto_dist_worker *w = NULL;
  EX_CHECK(pto_dist_worker_open(&cfg, &w)); /* forks the chips: before any thread of ours */
  if (!pto_dist_worker_is_root(w)) { /* under MPI: this rank served its chip until rank 0 closed */
    pto_dist_worker_close(w);
    pto_program_release(prog);
    return 0;
  }

  static float wts[NDEV * R * C], x[NDEV * R * C], y[NDEV * R * C], want[NDEV * R * C],
      back[NDEV * R * C], yhost[NDEV * R * C];
  for (int i = 0; i < NDEV * R * C; i++)
    wts[i] = 0.5f + (float)(i % 13) * 0.25f;
  const int64_t wshape[3] = {NDEV, R, C}, xshape[2] = {NDEV * R, C};
  pto_host_tensor hw, hx, hy, hb, hyh;
  pto_host_tensor_init(&hw, wts, PTO_DTYPE_F32, 3, wshape);
  pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 2, xshape);
  pto_host_tensor_init(&hy, y, PTO_DTYPE_F32, 2, xshape);
  pto_host_tensor_init(&hb, back, PTO_DTYPE_F32, 3, wshape);
  pto_host_tensor_init(&hyh, yhost, PTO_DTYPE_F32, 2, xshape);
  int placement[NDEV];
  for (int i = 0; i < NDEV; i++)
    placement[i] = NDEV - 1 - i;
  pto_dist_tensor *dw = NULL;
  EX_CHECK(pto_dist_alloc_stacked_tensor(w, &hw, placement, &dw));

  long bad = 0;
  for (long r = 0; r < runs; r++) {
    for (int i = 0; i < NDEV * R * C; i++)
      x[i] = (float)((i + r) % 29) - 14.0f;
    pto_arg args[3] = {pto_arg_dist(dw), pto_arg_host_readonly(&hx), pto_arg_host(&hy)};
    EX_CHECK(pto_dist_worker_run(w, prog, args, 3));
    for (int i = 0; i < NDEV * R * C; i++)
      want[i] = x[i] * wts[i];
    bad += ex_compare("y", y, want, NDEV * R * C, 0, 0);
    /* The same program with the host array: the same bits. */
    pto_arg hargs[3] = {pto_arg_host_readonly(&hw), pto_arg_host_readonly(&hx), pto_arg_host(&hyh)};
    EX_CHECK(pto_dist_worker_run(w, prog, hargs, 3));
    bad += ex_compare("y (stacked) against y (host array)", y, yhost, NDEV * R * C, 0, 0);
  }
  EX_CHECK(pto_dist_copy_stacked_from(w, dw, &hb));
  bad += ex_compare("the weight read back", back, wts, NDEV * R * C, 0, 0);
  printf("dist_stacked: %ld runs on %d devices, weight shard i on worker n-1-i: %s\n", runs, NDEV,
         bad ? "FAIL" : "PASS");
  EX_CHECK(pto_dist_free_tensor(w, dw));
  pto_dist_worker_close(w);
  pto_program_release(prog);
  return bad != 0;
}
