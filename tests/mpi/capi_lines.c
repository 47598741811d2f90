/* A C-API user of the MPI transport without pto_dist_config.program: every rank opens the
 * distributed worker; rank 0 alone compiles a host program and runs it (the other ranks serve
 * their chips inside pto_dist_worker_open and hold no program). A launch error prints on stderr
 * as `run failed: MESSAGE` (exit 1), so l3.sh can check that it names the failing call's line in
 * the program, as pto run's does (the chips load rank 0's copies of the callees, positions.json
 * included, where the cache's work dirs have none).
 *
 *   mpirun -np N -x PTO_DIST_TRANSPORT=mpi capi_lines PROG.ptir N Z
 *     PROG's host @main(out %y: tensor[1, 16] f32, %z: i64 = runtime) on devices 0..N-1 */
#include <stdio.h>
#include <stdlib.h>

#include "pto/dist.h"
#include "pto/ir.h"
#include "pto/loader.h"
#include "pto/runtime.h"

static int fail(const char *what, pto_status s) {
  fprintf(stderr, "%s: %s\n", what, pto_status_message(s));
  pto_status_free(s);
  return 1;
}

int main(int argc, char **argv) {
  int n = argc == 4 ? atoi(argv[2]) : 0;
  if (n < 1 || n > PTO_MAX_DEVICES) {
    fprintf(stderr, "usage: capi_lines PROG.ptir N Z (N devices, 1 to %d)\n", PTO_MAX_DEVICES);
    return 2;
  }
  pto_dist_config cfg;
  pto_dist_config_init(&cfg);
  cfg.ndevices = n;
  pto_dist_worker *w = NULL;
  pto_status s = pto_dist_worker_open(&cfg, &w);
  if (s) return fail("open failed", s);
  if (!pto_dist_worker_is_root(w)) { /* this rank served its chip until rank 0 closed */
    pto_dist_worker_close(w);
    return 0;
  }
  int32_t ids[PTO_MAX_DEVICES];
  for (int i = 0; i < n; i++)
    ids[i] = i;
  pto_ir_program *ir = NULL;
  pto_program *prog = NULL;
  s = pto_ir_parse_file(argv[1], &ir);
  if (!s) {
    pto_compile_options opt;
    pto_compile_options_init(&opt);
    opt.devices = ids;
    opt.ndevices = n;
    s = pto_compile(ir, &opt, &prog);
  }
  pto_ir_program_destroy(ir);
  if (s) {
    pto_dist_worker_close(w);
    return fail("compile failed", s);
  }
  static float y[16];
  const int64_t shape[2] = {1, 16};
  pto_host_tensor hy;
  pto_host_tensor_init(&hy, y, PTO_DTYPE_F32, 2, shape);
  pto_arg args[2] = {pto_arg_host(&hy), pto_arg_i64(strtoll(argv[3], NULL, 10))};
  s = pto_dist_worker_run(w, prog, args, 2);
  int rc = s ? fail("run failed", s) : (printf("run ok\n"), 0);
  pto_dist_worker_close(w);
  pto_program_release(prog);
  return rc;
}
