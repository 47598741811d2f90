/* A weight kept resident on the device while three batches of inputs stream through it.
 *
 * linear.ptir computes y = x @ w. The weight w is copied to the device once, with
 * pto_worker_alloc_tensor, and passed to every launch as a device tensor: it is never copied
 * again. Each batch's x and y are host tensors: x is copied in before its launch, y copied back
 * after it. The program is registered once; the three launches go through the one handle, each
 * with its own batch size (B is a dynamic dim, so one compiled program serves them all). */
#include "example.h"

#define K 64 /* features in and out */

/* y[b, n] = sum_k x[b, k] * w[k, n], on the host, for the check. */
static void host_linear(const float *x, const float *w, float *y, int rows) {
  for (int b = 0; b < rows; b++)
    for (int n = 0; n < K; n++) {
      float acc = 0;
      for (int k = 0; k < K; k++)
        acc += x[b * K + k] * w[k * K + n];
      y[b * K + n] = acc;
    }
}

int main(int argc, char **argv) {
  pto_program *linear = ex_compile(ex_ptir_dir(argc, argv), "linear.ptir");
  pto_worker *w = ex_open_worker();

  /* The weight: allocated and initialised on the device once. */
  static float weight[K * K];
  ex_fill(weight, K * K, 1);
  const int64_t wshape[2] = {K, K};
  pto_device_tensor *dw = NULL;
  EX_CHECK(pto_worker_alloc_tensor(w, 2, wshape, PTO_DTYPE_F32, weight, &dw));

  pto_handle *h = NULL;
  EX_CHECK(pto_worker_register(w, linear, &h));

  const int batch_rows[3] = {16, 37, 5};
  long bad = 0;
  for (int i = 0; i < 3; i++) {
    int rows = batch_rows[i];
    float *x = malloc(sizeof(float) * rows * K), *y = calloc((size_t)rows * K, sizeof(float)),
          *want = malloc(sizeof(float) * rows * K);
    ex_fill(x, (long)rows * K, 100 + i);
    const int64_t shape[2] = {rows, K};
    pto_host_tensor hx, hy;
    pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 2, shape);
    pto_host_tensor_init(&hy, y, PTO_DTYPE_F32, 2, shape);
    /* Arguments in the entry's parameter order: x (host, read only), w (resident), y (host). */
    pto_arg args[3] = {pto_arg_host_readonly(&hx), pto_arg_device(dw), pto_arg_host(&hy)};
    EX_CHECK(pto_handle_call(h, args, 3));

    pto_launch_record rec;
    EX_CHECK(pto_worker_last_launch(w, &rec));
    host_linear(x, weight, want, rows);
    long b = ex_compare("y", y, want, (long)rows * K, 1e-4f, 1e-4f);
    printf(
        "batch %d: %2d rows, %llu tasks, host wall %.1f us (bind %.1f us), device wall %.1f us%s\n",
        i, rows, (unsigned long long)rec.ntasks, ex_span_us(&rec, "chip.run"),
        ex_span_us(&rec, "chip.run.bind"), ex_span_us(&rec, "chip.run.runner_run.device_wall"),
        b ? "  MISMATCH" : "");
    bad += b;
    free(x);
    free(y);
    free(want);
  }

  /* The resident weight is untouched: reading it back gives what was put there. */
  static float back[K * K];
  EX_CHECK(pto_worker_copy_from(w, back, pto_device_tensor_addr(dw), sizeof back));
  bad += ex_compare("w", back, weight, K * K, 0, 0);

  pto_handle_unregister(h);
  EX_CHECK(pto_worker_free_tensor(w, dw));
  pto_worker_close(w);
  pto_program_release(linear);
  printf("%s\n", bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
