/* (a) Host overhead of one launch of a 1-task program through a registered handle, against a
 * direct call of the same kernel function (pto_program_kernel: the function in kernels.so that
 * the task runs).
 *
 *   launch_overhead [CALLS] [REPS] [NCORES]      (default 2000 calls x 15 repetitions, 1 core)
 *
 * Each repetition makes CALLS back-to-back calls of each kind and records the mean per call; the
 * table gives the min and the median of those means over the repetitions. The launch is
 * measured with x and y resident (device tensors: no copies, the pure dispatch path) and with x
 * and y as host tensors (4 KiB copied in and out per launch). */
#include <stdalign.h>

#include "bench_util.h"

#define R 16
#define C 64

int main(int argc, char **argv) {
  long calls = b_arg(argc, argv, 1, 2000), reps = b_arg(argc, argv, 2, 15);
  int ncores = (int)b_arg(argc, argv, 3, 1);
  if (reps > 256) reps = 256;
  pto_program *p = b_compile("one_task.ptir");
  pto_worker *w = b_open_worker(ncores);
  pto_handle *h = NULL;
  B_CHECK(pto_worker_register(w, p, &h));

  static alignas(64) float x[R * C], y[R * C], yd[R * C];
  for (int i = 0; i < R * C; i++)
    x[i] = (float)i;
  const int64_t shape[2] = {R, C};
  pto_device_tensor *dx = NULL, *dy = NULL;
  B_CHECK(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, x, &dx));
  B_CHECK(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, NULL, &dy));
  pto_host_tensor hx, hy;
  pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 2, shape);
  pto_host_tensor_init(&hy, y, PTO_DTYPE_F32, 2, shape);
  pto_arg dev_args[3] = {pto_arg_device(dx), pto_arg_device(dy), pto_arg_f32(1.0f)};
  pto_arg host_args[3] = {pto_arg_host_readonly(&hx), pto_arg_host(&hy), pto_arg_f32(1.0f)};

  /* The direct call: the same kernel function on host buffers, with a core context of its own. */
  pto_kernel_fn fn = pto_program_kernel(p, 0);
  uint64_t scratch_size = pto_program_scratch_bytes(p);
  void *scratch = aligned_alloc(64, (scratch_size + 63) / 64 * 64 + 64);
  pto_kernel_tensor kt[2];
  memset(kt, 0, sizeof kt);
  for (int i = 0; i < 2; i++) {
    kt[i].data = i ? (void *)yd : (void *)x;
    kt[i].rank = 2;
    kt[i].dtype = PTO_DTYPE_F32;
    kt[i].shape[0] = R, kt[i].shape[1] = C;
    kt[i].stride[0] = C, kt[i].stride[1] = 1;
  }
  pto_scalar one = {.dtype = PTO_DTYPE_F32, .f = 1.0};
  uint64_t slots[1] = {pto_scalar_to_slot(one)};
  pto_core_ctx ctx = {.core_id = 0, .ncores = 1, .scratch = scratch, .scratch_size = scratch_size};

  b_stat direct = {0}, dev = {0}, host = {0}, run = {0}, bind = {0}, runner = {0}, dwall = {0},
         orch = {0}, sched = {0}, copyb = {0};
  long bad = 0;
  for (long r = 0; r < reps; r++) {
    uint64_t t0 = b_now_ns();
    for (long i = 0; i < calls; i++)
      if (fn(kt, slots, &ctx) != PTO_KERNEL_OK) bad++;
    b_add(&direct, (double)(b_now_ns() - t0) / 1e3 / (double)calls);

    double s_run = 0, s_bind = 0, s_runner = 0, s_dwall = 0, s_orch = 0, s_sched = 0, s_cb = 0,
           wall = 0;
    for (long i = 0; i < calls; i++) {
      uint64_t a = b_now_ns();
      B_CHECK(pto_handle_call(h, dev_args, 3));
      wall += (double)(b_now_ns() - a);
      pto_launch_record rec;
      B_CHECK(pto_worker_last_launch(w, &rec));
      s_run += b_span_us(&rec, "chip.run");
      s_bind += b_span_us(&rec, "chip.run.bind");
      s_runner += b_span_us(&rec, "chip.run.runner_run");
      s_dwall += b_span_us(&rec, "chip.run.runner_run.device_wall");
      s_orch += b_span_us(&rec, "chip.run.runner_run.device_wall.orch");
      s_sched += b_span_us(&rec, "chip.run.runner_run.device_wall.sched");
      s_cb += b_span_us(&rec, "chip.run.copy_back");
    }
    double n = (double)calls;
    b_add(&dev, wall / 1e3 / n);
    b_add(&run, s_run / n), b_add(&bind, s_bind / n), b_add(&runner, s_runner / n);
    b_add(&dwall, s_dwall / n), b_add(&orch, s_orch / n), b_add(&sched, s_sched / n);
    b_add(&copyb, s_cb / n);

    t0 = b_now_ns();
    for (long i = 0; i < calls; i++)
      B_CHECK(pto_handle_call(h, host_args, 3));
    b_add(&host, (double)(b_now_ns() - t0) / 1e3 / n);
  }

  /* Results: y = x + 1 from every path. */
  static float got[R * C];
  B_CHECK(pto_worker_copy_from(w, got, pto_device_tensor_addr(dy), sizeof got));
  for (int i = 0; i < R * C; i++)
    if (got[i] != x[i] + 1 || y[i] != x[i] + 1 || yd[i] != x[i] + 1) bad++;

  printf("launch_overhead: %ld calls x %ld repetitions, %d core thread%s; 1 task, 16x64 f32\n\n",
         calls, reps, ncores, ncores == 1 ? "" : "s");
  b_header();
  b_row("direct call of the kernel function", &direct, "us/call");
  b_row("launch through the handle, device tensors (wall)", &dev, "us/call");
  b_row("  span chip.run", &run, "us");
  b_row("  span chip.run.bind", &bind, "us");
  b_row("  span chip.run.runner_run", &runner, "us");
  b_row("  span ....device_wall (device clock)", &dwall, "us");
  b_row("  span ....device_wall.orch", &orch, "us");
  b_row("  span ....device_wall.sched", &sched, "us");
  b_row("  span chip.run.copy_back", &copyb, "us");
  b_row("launch through the handle, host tensors (wall)", &host, "us/call");
  b_stat over = {0}, ratio = {0}, over_h = {0};
  for (int i = 0; i < dev.n; i++) {
    b_add(&over, dev.v[i] - direct.v[i]);
    b_add(&ratio, dev.v[i] / direct.v[i]);
    b_add(&over_h, host.v[i] - direct.v[i]);
  }
  b_row("overhead: launch (device tensors) - direct call", &over, "us");
  b_row("overhead: launch (host tensors) - direct call", &over_h, "us");
  b_row("ratio: launch (device tensors) / direct call", &ratio, "x");
  printf("\ntarget: overhead <= 10 us: %s (median %.2f us)\n",
         b_median(&over) <= 10 ? "met" : "NOT met", b_median(&over));

  free(scratch);
  pto_worker_close(w);
  pto_program_release(p);
  if (bad) fprintf(stderr, "launch_overhead: %ld wrong results\n", bad);
  return bad ? 1 : 0;
}
