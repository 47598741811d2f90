/* Embedding pto in an application: load a work dir that `pto compile` made at build time, keep
 * the weights resident on a worker, register the program once and serve a loop of batches.
 *
 *   embed_demo [WORK_DIR] [BATCHES]      (default: the work dir the build made, 50 batches)
 *
 * Only the runtime library is needed here (libpto_runtime and the loader under it): no compiler,
 * no LLVM. Each batch's result is checked against the same layer computed on the host. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pto/loader.h"
#include "pto/runtime.h"

#ifndef EMBED_WORK_DIR
#define EMBED_WORK_DIR "dense.pto"
#endif

#define K 64
#define MAX_ROWS 40

static int failed(const char *what, pto_status s) {
  fprintf(stderr, "embed_demo: %s: %s\n", what, pto_status_message(s));
  pto_status_free(s);
  return 1;
}

static void fill(float *v, int n, unsigned seed) {
  for (int i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float)(seed >> 8) / (float)(1u << 23) - 1.0f;
  }
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : EMBED_WORK_DIR;
  int batches = argc > 2 ? atoi(argv[2]) : 50;

  /* 1. The program, as compiled ahead of time: every binary is checked against the manifest. */
  pto_program *prog = NULL;
  pto_status s = pto_program_load_dir(dir, &prog);
  if (s) return failed(dir, s);

  /* 2. A worker on the sim platform, and the weights copied to its device memory once. */
  pto_worker *w = NULL;
  if ((s = pto_worker_open(NULL, &w))) return failed("opening a worker", s);
  static float weight[K * K], bias[K];
  fill(weight, K * K, 1);
  fill(bias, K, 2);
  const int64_t wshape[2] = {K, K}, bshape[2] = {1, K};
  pto_device_tensor *dw = NULL, *db = NULL;
  if ((s = pto_worker_alloc_tensor(w, 2, wshape, PTO_DTYPE_F32, weight, &dw)) ||
      (s = pto_worker_alloc_tensor(w, 2, bshape, PTO_DTYPE_F32, bias, &db)))
    return failed("allocating the weights", s);

  /* 3. Registered once; every batch goes through this handle. */
  pto_handle *h = NULL;
  if ((s = pto_worker_register(w, prog, &h))) return failed("registering", s);

  static float x[MAX_ROWS * K], y[MAX_ROWS * K];
  long bad = 0;
  for (int i = 0; i < batches; i++) {
    int rows = 1 + (i * 13) % MAX_ROWS;
    fill(x, rows * K, 100 + (unsigned)i);
    const int64_t shape[2] = {rows, K};
    pto_host_tensor hx, hy;
    pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 2, shape);
    pto_host_tensor_init(&hy, y, PTO_DTYPE_F32, 2, shape);
    pto_arg args[4] = {pto_arg_host_readonly(&hx), pto_arg_device(dw), pto_arg_device(db),
                       pto_arg_host(&hy)};
    if ((s = pto_handle_call(h, args, 4))) return failed("running a batch", s);

    for (int r = 0; r < rows; r++)
      for (int n = 0; n < K; n++) {
        float acc = 0;
        for (int k = 0; k < K; k++)
          acc += x[r * K + k] * weight[k * K + n];
        acc += bias[n];
        float want = acc > 0 ? acc : 0;
        if (fabsf(y[r * K + n] - want) > 1e-4f * (1 + fabsf(want))) bad++;
      }
  }

  pto_launch_record rec;
  if (!pto_worker_last_launch(w, &rec))
    printf("last batch: %llu tasks, host wall %.1f us\n", (unsigned long long)rec.ntasks,
           (double)rec.spans[0].dur_ns / 1e3);
  pto_worker_close(w); /* frees the handle and both device tensors */
  pto_program_release(prog);
  printf("embed_demo: %d batches, %ld wrong elements: %s\n", batches, bad, bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
