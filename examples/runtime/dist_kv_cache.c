/* Prefill and decode as two programs on one distributed worker, sharing a resident KV cache.
 *
 * The cache is a stacked resident tensor [n, 64, 64]: device d holds the cache of sequence d.
 * dist_prefill.ptir writes each prompt's P key rows into its device's cache; then
 * dist_decode.ptir runs STEPS decode steps, each appending one key per sequence at row pos and
 * attending over rows [0, pos]. Both programs were compiled for the same device set and run on
 * the same prepared worker; the cache never leaves the devices until it is read back with
 * pto_dist_copy_stacked_from at the end and checked, with every decode output, on the host.
 *
 *   dist_kv_cache [PTIR_DIR] [STEPS]     (default 40 steps, on 2 devices; P = 8) */
#include "example.h"
#include "pto/dist.h"

#define NDEV 2
#define P 8
#define C 64
#define ROWS 64

int main(int argc, char **argv) {
  long steps = ex_size(argc, argv, 40);
  if (steps > ROWS - P) steps = ROWS - P;
  const char *dir = ex_ptir_dir(argc, argv);
  pto_program *prefill = ex_compile_devices(dir, "dist_prefill.ptir", NDEV);
  pto_program *decode = ex_compile_devices(dir, "dist_decode.ptir", NDEV);

  pto_dist_config cfg;
  pto_dist_config_init(&cfg);
  cfg.ndevices = NDEV;
  pto_dist_worker *w = NULL;
  EX_CHECK(pto_dist_worker_open(&cfg, &w));
  if (!pto_dist_worker_is_root(w)) { /* under MPI: this rank served its chip until rank 0 closed */
    pto_dist_worker_close(w);
    pto_program_release(prefill);
    pto_program_release(decode);
    return 0;
  }

  static float cache0[NDEV * ROWS * C], keys[NDEV * P * C], ref[NDEV * ROWS * C],
      back[NDEV * ROWS * C];
  const int64_t cshape[3] = {NDEV, ROWS, C}, kshape[3] = {NDEV, P, C}, tshape[3] = {NDEV, 1, C};
  pto_host_tensor hc, hk, hb;
  pto_host_tensor_init(&hc, cache0, PTO_DTYPE_F32, 3, cshape);
  pto_host_tensor_init(&hk, keys, PTO_DTYPE_F32, 3, kshape);
  pto_host_tensor_init(&hb, back, PTO_DTYPE_F32, 3, cshape);
  int ids[NDEV];
  for (int i = 0; i < NDEV; i++)
    ids[i] = i;
  pto_dist_tensor *cache = NULL;
  EX_CHECK(pto_dist_alloc_stacked_tensor(w, &hc, ids, &cache)); /* zeros, resident from here */

  for (int i = 0; i < NDEV * P * C; i++)
    keys[i] = (float)(i % 7) * 0.125f - 0.25f;
  pto_arg pa[2] = {pto_arg_host_readonly(&hk), pto_arg_dist(cache)};
  EX_CHECK(pto_dist_worker_run(w, prefill, pa, 2));
  for (int d = 0; d < NDEV; d++)
    memcpy(ref + (size_t)d * ROWS * C, keys + (size_t)d * P * C, sizeof(float) * P * C);

  static float k[NDEV * C], q[NDEV * C], o[NDEV * C], want[NDEV * C];
  pto_host_tensor tk, tq, to;
  pto_host_tensor_init(&tk, k, PTO_DTYPE_F32, 3, tshape);
  pto_host_tensor_init(&tq, q, PTO_DTYPE_F32, 3, tshape);
  pto_host_tensor_init(&to, o, PTO_DTYPE_F32, 3, tshape);
  long bad = 0;
  for (long s = 0; s < steps; s++) {
    int64_t pos = P + s;
    for (int i = 0; i < NDEV * C; i++) {
      k[i] = (float)((i + s) % 5) * 0.0625f;
      q[i] = (float)((i * 3 + s) % 11) * 0.125f - 0.5f;
    }
    pto_arg da[5] = {pto_arg_dist(cache), pto_arg_host_readonly(&tk), pto_arg_host_readonly(&tq),
                     pto_arg_host(&to), pto_arg_index(pos)};
    EX_CHECK(pto_dist_worker_run(w, decode, da, 5));
    for (int d = 0; d < NDEV; d++) {
      memcpy(ref + ((size_t)d * ROWS + (size_t)pos) * C, k + d * C, sizeof(float) * C);
      for (int c = 0; c < C; c++) {
        float sum = 0;
        for (int64_t r = 0; r <= pos; r++)
          sum += ref[((size_t)d * ROWS + (size_t)r) * C + c];
        want[d * C + c] = q[d * C + c] * sum;
      }
    }
    bad += ex_compare("decode output", o, want, NDEV * C, 1e-5f, 1e-5f);
  }
  EX_CHECK(pto_dist_copy_stacked_from(w, cache, &hb));
  bad += ex_compare("KV cache read back", back, ref, NDEV * ROWS * C, 0, 0);
  printf("dist_kv_cache: prefill of %d rows, %ld decode steps on %d devices sharing one resident "
         "cache: %s\n",
         P, steps, NDEV, bad ? "FAIL" : "PASS");
  pto_dist_worker_close(w); /* frees the cache */
  pto_program_release(prefill);
  pto_program_release(decode);
  return bad != 0;
}
