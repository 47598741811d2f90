/* A new user's program on the runtime C API, written from docs/c-api.md and the README alone
 * (tests/e2e/docs_newuser_capi.sh): a worker of 3 cores, resident tensors,
 * register once and dispatch five times (called and submitted), then three submits queued at
 * once, a bounds-checked copy back. */
#include <math.h>
#include <pto/loader.h>
#include <pto/runtime.h>
#include <stdio.h>
#define CHECK(x)                                                                                   \
  do {                                                                                             \
    pto_status s_ = (x);                                                                           \
    if (s_) {                                                                                      \
      fprintf(stderr, "%s\n", pto_status_message(s_));                                             \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)
enum { M = 40, C = 64 };

int main(int argc, char **argv) {
  static float x[M * C], b[M * C], y[M * C], rs[M], row[C];
  const char *path = argc > 1 ? argv[1] : "pipe.ptir";
  int64_t shape[2] = {M, C}, rshape[2] = {M, 1};
  for (int i = 0; i < M * C; i++)
    b[i] = (float)(i % 7) - 3.0f;
  pto_ir_program *ir;
  pto_program *prog;
  pto_worker *w;
  pto_handle *h;
  pto_device_tensor *bt, *yt;
  CHECK(pto_ir_parse_file(path, &ir));
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  pto_binding alpha = {"alpha", "2"}; /* -D alpha=2; bias stays runtime */
  opt.scalars = &alpha, opt.nscalars = 1;
  CHECK(pto_compile(ir, &opt, &prog));
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.ncores = 3;
  CHECK(pto_worker_open(&cfg, &w));
  CHECK(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, b, &bt));    /* resident input */
  CHECK(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, NULL, &yt)); /* resident output */
  CHECK(pto_worker_register(w, prog, &h));
  pto_host_tensor xh, rh;
  pto_host_tensor_init(&xh, x, PTO_DTYPE_F32, 2, shape);
  pto_host_tensor_init(&rh, rs, PTO_DTYPE_F32, 2, rshape);
  int bad = 0;
  for (int step = 0; step < 5; step++) {
    for (int i = 0; i < M * C; i++)
      x[i] = (float)((i + step) % 5) - 2.0f;
    /* the specialised alpha keeps its slot: its value is passed again */
    pto_arg args[6] = {pto_arg_host_readonly(&xh), pto_arg_device(bt), pto_arg_device(yt),
                       pto_arg_host(&rh),          pto_arg_f32(2.0f),  pto_arg_f32((float)step)};
    if (step % 2) {
      pto_completion *c;
      CHECK(pto_handle_submit(h, args, 6, &c));
      CHECK(pto_completion_wait(c));
    } else {
      CHECK(pto_handle_call(h, args, 6));
    }
    CHECK(pto_worker_copy_from_tensor(w, y, yt, 0, M * C));
    for (int r = 0; r < M; r++) {
      float sum = 0;
      for (int j = 0; j < C; j++) {
        float e = fmaxf(2.0f * x[r * C + j] + b[r * C + j], 0.0f);
        bad += y[r * C + j] != e;
        sum += e;
      }
      bad += fabsf(rs[r] - (sum + (float)step)) > 1e-4f * (1.0f + fabsf(sum));
    }
  }
  /* three launches queued at once, each with its own row-sum buffer: they run in order, and
   * each buffer is written by the time its completion is waited on */
  static float rs3[3][M];
  pto_host_tensor r3[3];
  pto_completion *c3[3];
  for (int k = 0; k < 3; k++) {
    pto_host_tensor_init(&r3[k], rs3[k], PTO_DTYPE_F32, 2, rshape);
    pto_arg args[6] = {pto_arg_host_readonly(&xh), pto_arg_device(bt), pto_arg_device(yt),
                       pto_arg_host(&r3[k]),       pto_arg_f32(2.0f),  pto_arg_f32(10.0f * k)};
    CHECK(pto_handle_submit(h, args, 6, &c3[k]));
  }
  for (int k = 0; k < 3; k++) {
    CHECK(pto_completion_wait(c3[k]));
    for (int r = 0; r < M; r++)
      bad += fabsf(rs3[k][r] - (rs[r] - 4.0f + 10.0f * k)) > 1e-3f;
  }
  int64_t off[2] = {39, 0}, sz[2] = {1, C}; /* the last row, as a box */
  CHECK(pto_worker_copy_from_tensor_slice(w, row, yt, off, sz));
  bad += row[5] != y[39 * C + 5];
  int64_t off2[2] = {40, 0}; /* past the edge: refused */
  pto_status s = pto_worker_copy_from_tensor_slice(w, row, yt, off2, sz);
  printf("out of bounds copy: %s\n", s ? pto_status_message(s) : "accepted");
  bad += s == NULL;
  pto_status_free(s);
  printf("resident dispatch x5: %s\n", bad ? "FAIL" : "PASS");
  pto_worker_close(w);
  pto_program_release(prog);
  pto_ir_program_destroy(ir);
  return bad != 0;
}
