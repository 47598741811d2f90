/* What a launch costs on the host: register once, dispatch many times.
 *
 * add_scalar.ptir is one task, y = x + c, on a 16x64 tile: so small that a launch is nearly all
 * runtime overhead. Registration (validating the program, making it callable) happens once;
 * every pto_handle_call after it only checks the arguments, copies x in and y out, submits the
 * task and waits. Every result is checked, each call with a different c; the timings are printed,
 * never checked (they depend on the machine and its load).
 *
 *   dispatch_overhead [PTIR_DIR] [CALLS]      (default 10000 calls) */
#include "example.h"

#define N (16 * 64)

int main(int argc, char **argv) {
  long calls = ex_size(argc, argv, 10000);
  pto_program *prog = ex_compile(ex_ptir_dir(argc, argv), "add_scalar.ptir");
  pto_worker *w = ex_open_worker();

  double t0 = ex_now_us();
  pto_handle *h = NULL;
  EX_CHECK(pto_worker_register(w, prog, &h));
  double register_us = ex_now_us() - t0;

  static float x[N], y[N];
  ex_fill(x, N, 5);
  const int64_t shape[2] = {16, 64};
  pto_host_tensor hx, hy;
  pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 2, shape);
  pto_host_tensor_init(&hy, y, PTO_DTYPE_F32, 2, shape);
  pto_arg args[3] = {pto_arg_host_readonly(&hx), pto_arg_host(&hy), pto_arg_f32(0)};

  long bad = 0;
  double span_host = 0, span_dev = 0, best = 1e30, loop_us = 0;
  for (long i = 0; i < calls; i++) {
    float c = (float)(i % 1000) * 0.5f;
    args[2] = pto_arg_f32(c);
    double s = ex_now_us();
    EX_CHECK(pto_handle_call(h, args, 3));
    double us = ex_now_us() - s;
    loop_us += us;
    if (us < best) best = us;

    pto_launch_record rec;
    EX_CHECK(pto_worker_last_launch(w, &rec));
    span_host += ex_span_us(&rec, "chip.run");
    span_dev += ex_span_us(&rec, "chip.run.runner_run.device_wall");
    for (int e = 0; e < N; e++)
      if (y[e] != x[e] + c) bad++;
  }

  printf("register once: %.1f us\n", register_us);
  printf("%ld calls through one handle: %.2f us per call (best %.2f us); spans: host wall "
         "%.2f us, device wall %.2f us per call\n",
         calls, loop_us / (double)calls, best, span_host / (double)calls, span_dev / (double)calls);
  pto_worker_close(w);
  pto_program_release(prog);
  printf("%ld wrong elements: %s\n", bad, bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
