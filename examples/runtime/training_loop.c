/* A training-style loop: parameters that live on the device and are updated in place.
 *
 * sgd_momentum.ptir takes the weights w and the velocity v as `inout` parameters. Both are device
 * tensors here, so every step reads and writes them where they are: nothing is copied between
 * steps. Each step's data (the target t) is a host tensor, copied in for its launch. At the end
 * w is read back with pto_worker_copy_from and compared with the same steps done on the host.
 *
 *   training_loop [PTIR_DIR] [STEPS]      (default 20 steps) */
#include "example.h"

#define ROWS 40 /* not a multiple of the 16-row blocks: the last task gets 8 rows */
#define COLS 64
#define N (ROWS * COLS)

static const float k_lr = 0.1f, k_beta = 0.5f; /* beta is the program's specialized default */

/* The loss 0.5 * |w - t|^2. */
static double loss(const float *w, const float *t) {
  double l = 0;
  for (int i = 0; i < N; i++)
    l += 0.5 * (double)(w[i] - t[i]) * (double)(w[i] - t[i]);
  return l;
}

int main(int argc, char **argv) {
  long steps = ex_size(argc, argv, 20);
  pto_program *sgd = ex_compile(ex_ptir_dir(argc, argv), "sgd_momentum.ptir");
  pto_worker *w = ex_open_worker();

  /* The parameters: w starts random, the velocity v at zero (no init: fresh device memory is
   * zeros). The host keeps its own copies to check against. */
  static float host_w[N], host_v[N], goal[N], noise[N], target[N], got[N];
  ex_fill(host_w, N, 7);
  ex_fill(goal, N, 99);
  const int64_t shape[2] = {ROWS, COLS};
  pto_device_tensor *dw = NULL, *dv = NULL;
  EX_CHECK(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, host_w, &dw));
  EX_CHECK(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, NULL, &dv));

  pto_handle *h = NULL;
  EX_CHECK(pto_worker_register(w, sgd, &h));

  pto_host_tensor ht;
  pto_host_tensor_init(&ht, target, PTO_DTYPE_F32, 2, shape);
  /* beta was specialized at compile time (= 0.5 in the program); its slot is still passed. */
  pto_arg args[5] = {pto_arg_device(dw), pto_arg_device(dv), pto_arg_host_readonly(&ht),
                     pto_arg_f32(k_lr), pto_arg_f32(k_beta)};
  for (long s = 0; s < steps; s++) {
    /* This step's data: a noisy sample of the goal, like a minibatch. */
    ex_fill(noise, N, 1000 + (unsigned)s);
    for (int i = 0; i < N; i++)
      target[i] = goal[i] + 0.01f * noise[i];

    EX_CHECK(pto_handle_call(h, args, 5));

    /* The same step on the host, in the kernel's order of f32 operations. */
    for (int i = 0; i < N; i++) {
      float g = host_w[i] - target[i];
      host_v[i] = host_v[i] * k_beta + g;
      host_w[i] = host_w[i] - host_v[i] * k_lr;
    }
    if (s % 5 == 0 || s == steps - 1) printf("step %2ld: loss %.4f\n", s, loss(host_w, goal));
  }

  /* Read the resident tensors back and compare them with the host's. */
  long bad = 0;
  EX_CHECK(pto_worker_copy_from(w, got, pto_device_tensor_addr(dw), sizeof got));
  bad += ex_compare("w", got, host_w, N, 1e-5f, 1e-6f);
  EX_CHECK(pto_worker_copy_from(w, got, pto_device_tensor_addr(dv), sizeof got));
  bad += ex_compare("v", got, host_v, N, 1e-5f, 1e-6f);

  pto_worker_close(w);
  pto_program_release(sgd);
  printf("%ld steps on resident w and v: %s\n", steps, bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
