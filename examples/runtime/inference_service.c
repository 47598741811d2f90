/* An inference service: the model's weights stay resident on the device while a stream of
 * requests, each with its own batch size, goes through one registered handle.
 *
 * mlp.ptir is y = relu(relu(x @ w1 + b1) @ w2 + b2). The four weight tensors are allocated on
 * the device once, at start-up; per request only the request's input goes in and its output
 * comes back. The hidden activations never leave the device: they are tensor.create
 * intermediates that the runtime frees when the tasks using them are done.
 *
 *   inference_service [PTIR_DIR] [REQUESTS]      (default 100 requests) */
#include "example.h"

#define K 64
#define MAX_ROWS 48

typedef struct model {
  float w1[K * K], b1[K], w2[K * K], b2[K];
} model;

static void host_dense_relu(const float *x, const float *w, const float *b, float *y, int rows) {
  for (int r = 0; r < rows; r++)
    for (int n = 0; n < K; n++) {
      float acc = 0;
      for (int k = 0; k < K; k++)
        acc += x[r * K + k] * w[k * K + n];
      acc += b[n];
      y[r * K + n] = acc > 0 ? acc : 0;
    }
}

static pto_device_tensor *resident(pto_worker *w, int rows, int cols, const float *init) {
  const int64_t shape[2] = {rows, cols};
  pto_device_tensor *t = NULL;
  EX_CHECK(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, init, &t));
  return t;
}

int main(int argc, char **argv) {
  long requests = ex_size(argc, argv, 100);
  pto_program *mlp = ex_compile(ex_ptir_dir(argc, argv), "mlp.ptir");
  pto_worker *w = ex_open_worker();

  /* Start-up: load the model onto the device and register the program. */
  static model m;
  ex_fill(m.w1, K * K, 1);
  ex_fill(m.b1, K, 2);
  ex_fill(m.w2, K * K, 3);
  ex_fill(m.b2, K, 4);
  pto_device_tensor *w1 = resident(w, K, K, m.w1), *b1 = resident(w, 1, K, m.b1),
                    *w2 = resident(w, K, K, m.w2), *b2 = resident(w, 1, K, m.b2);
  pto_handle *h = NULL;
  EX_CHECK(pto_worker_register(w, mlp, &h));

  /* Serving: each request has 1..MAX_ROWS rows. */
  static float x[MAX_ROWS * K], y[MAX_ROWS * K], hidden[MAX_ROWS * K], want[MAX_ROWS * K];
  long bad = 0, rows_served = 0;
  double host_us = 0, device_us = 0, t0 = ex_now_us();
  for (long r = 0; r < requests; r++) {
    int rows = 1 + (int)((r * 7) % MAX_ROWS);
    ex_fill(x, (long)rows * K, 1000 + (unsigned)r);
    const int64_t shape[2] = {rows, K};
    pto_host_tensor hx, hy;
    pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 2, shape);
    pto_host_tensor_init(&hy, y, PTO_DTYPE_F32, 2, shape);
    pto_arg args[6] = {pto_arg_host_readonly(&hx), pto_arg_device(w1), pto_arg_device(b1),
                       pto_arg_device(w2),         pto_arg_device(b2), pto_arg_host(&hy)};
    EX_CHECK(pto_handle_call(h, args, 6));

    pto_launch_record rec;
    EX_CHECK(pto_worker_last_launch(w, &rec));
    host_us += ex_span_us(&rec, "chip.run");
    device_us += ex_span_us(&rec, "chip.run.runner_run.device_wall");
    rows_served += rows;

    host_dense_relu(x, m.w1, m.b1, hidden, rows);
    host_dense_relu(hidden, m.w2, m.b2, want, rows);
    bad += ex_compare("y", y, want, (long)rows * K, 1e-4f, 1e-4f);
  }
  double total_us = ex_now_us() - t0;

  printf("%ld requests, %ld rows: mean host wall %.1f us, mean device wall %.1f us per request "
         "(loop incl. host checks %.1f ms)\n",
         requests, rows_served, host_us / (double)requests, device_us / (double)requests,
         total_us / 1e3);
  pto_device_memory_info mem;
  EX_CHECK(pto_worker_memory_info(w, &mem));
  /* Only the four weights are still allocated: every per-request intermediate was freed. */
  printf("device memory in use after the stream: %llu bytes in %llu allocations\n",
         (unsigned long long)mem.used, (unsigned long long)mem.nallocs);
  if (mem.nallocs != 4) {
    fprintf(stderr, "expected the 4 weight tensors to be the only allocations\n");
    bad++;
  }

  pto_worker_close(w); /* frees the handle and the four device tensors */
  pto_program_release(mlp);
  printf("%s\n", bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
