/* Loads the work dir that pto_add_program(vadd ...) compiled at build time and runs it on a
 * sim worker: y = x + 2x for 100 rows (the program was compiled once, for any row count). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pto/loader.h"
#include "pto/runtime.h"
#include "pto_program_vadd.h" /* PTO_PROGRAM_VADD_DIR */

#define ROWS 100
#define COLS 64

static int fail(const char *what, pto_status s) {
  fprintf(stderr, "vadd_demo: %s: %s\n", what, pto_status_message(s));
  pto_status_free(s);
  return 1;
}

int main(void) {
  pto_program *prog = NULL;
  pto_status s = pto_program_load_dir(PTO_PROGRAM_VADD_DIR, &prog);
  if (s) return fail("loading " PTO_PROGRAM_VADD_DIR, s);

  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.ncores = 2;
  pto_worker *w = NULL;
  if ((s = pto_worker_open(&cfg, &w))) return fail("opening a worker", s);

  static float x[ROWS * COLS], y[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; i++)
    x[i] = (float)(i % 97) * 0.25f;
  const int64_t shape[2] = {ROWS, COLS};
  pto_host_tensor tx, ty;
  pto_host_tensor_init(&tx, x, PTO_DTYPE_F32, 2, shape);
  pto_host_tensor_init(&ty, y, PTO_DTYPE_F32, 2, shape);
  /* scale was specialized to 2 at compile time; its slot is passed with that value. */
  pto_scalar scale = {.dtype = PTO_DTYPE_F32, .f = 2.0};
  pto_arg args[3] = {pto_arg_host_readonly(&tx), pto_arg_host(&ty), pto_arg_scalar(scale)};
  if ((s = pto_worker_run(w, prog, args, 3))) return fail("running", s);

  int bad = 0;
  for (int i = 0; i < ROWS * COLS; i++)
    if (fabsf(y[i] - 3.0f * x[i]) > 1e-5f) bad++;
  printf("vadd_demo: %d x %d, %d mismatches: %s\n", ROWS, COLS, bad, bad ? "FAIL" : "PASS");
  pto_worker_close(w);
  pto_program_release(prog);
  return bad != 0;
}
