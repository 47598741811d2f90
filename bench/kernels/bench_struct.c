/* Structural ops against numpy (bench/RESULTS.md, "Structural ops"): transpose of a 64x64 f32
 * tile, row_argmax and sort_idx (desc) of a [32, 64] f32 tile, gather_rows of 64 rows of 64 f32
 * from a [V, 64] table, each a compiled kernel (struct.ptir) called directly on one thread over
 * host buffers (load, op, store: as a kernel runs it), against the same operation in numpy in
 * the same run: np.ascontiguousarray(a.T), np.argmax(a, axis=1), np.argsort(-a, axis=1,
 * kind='stable'), t[ix]. numpy runs as Debian's /usr/bin/python3 with OPENBLAS_CORETYPE and
 * OPENBLAS_L2_SIZE unset for its process only. Times: the best of 7 batches, per element of the
 * op's input (gather_rows: of its output), in ns.
 *
 *   bench_struct [ITERS [V]]   (defaults 20000 4096) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pto/ir.h"
#include "pto/loader.h"

#ifndef BENCH_KERNELS_DIR
#define BENCH_KERNELS_DIR "."
#endif

static void check(pto_status s, const char *what) {
  if (!s) return;
  fprintf(stderr, "bench_struct: %s: %s\n", what, pto_status_message(s));
  pto_status_free(s);
  exit(1);
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static pto_kernel_tensor desc(void *data, pto_dtype dt, int64_t r, int64_t c) {
  pto_kernel_tensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.rank = 2;
  t.dtype = (int32_t)dt;
  t.shape[0] = r;
  t.shape[1] = c;
  t.stride[0] = c;
  t.stride[1] = 1;
  return t;
}

/* Best of 7 batches of iters calls, ns per call. */
static double time_kernel(pto_kernel_fn fn, const pto_kernel_tensor *t, pto_core_ctx *ctx,
                          int iters) {
  double best = 1e300;
  for (int b = 0; b < 7; b++) {
    double t0 = now_ns();
    for (int i = 0; i < iters; i++)
      if (fn(t, NULL, ctx) != 0) {
        fprintf(stderr, "bench_struct: a kernel failed\n");
        exit(1);
      }
    double dt = (now_ns() - t0) / iters;
    if (dt < best) best = dt;
  }
  return best;
}

static const char *k_numpy =
    "import numpy as np, time, sys\n"
    "it, V = int(sys.argv[1]), int(sys.argv[2])\n"
    "r = np.random.default_rng(1)\n"
    "a = r.standard_normal((64, 64), dtype=np.float32)\n"
    "s = r.standard_normal((32, 64), dtype=np.float32)\n"
    "t = r.standard_normal((V, 64), dtype=np.float32)\n"
    "ix = r.integers(0, V, 64).astype(np.int32)\n"
    "def best(f):\n"
    "  b = 1e300\n"
    "  for _ in range(7):\n"
    "    t0 = time.perf_counter_ns()\n"
    "    for _ in range(it): f()\n"
    "    b = min(b, (time.perf_counter_ns() - t0) / it)\n"
    "  return b\n"
    "print(best(lambda: np.ascontiguousarray(a.T)), best(lambda: np.argmax(s, axis=1)),\n"
    "      best(lambda: np.argsort(-s, axis=1, kind='stable')), best(lambda: t[ix]))\n";

static void cpu_name(char *buf, size_t n) {
  snprintf(buf, n, "unknown CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
      snprintf(buf, n, "%s", strchr(line, ':') + 2);
      buf[strcspn(buf, "\n")] = 0;
      break;
    }
  if (f) fclose(f);
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 20000;
  int64_t V = argc > 2 ? atoll(argv[2]) : 4096;
  if (iters < 1 || V < 64) {
    fprintf(stderr, "usage: bench_struct [ITERS [V >= 64]]\n");
    return 2;
  }
  pto_ir_program *ir = NULL;
  check(pto_ir_parse_file(BENCH_KERNELS_DIR "/struct.ptir", &ir), "parse");
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  opt.entry = "main";
  pto_program *p = NULL;
  check(pto_compile(ir, &opt, &p), "compile");
  pto_kernel_fn fn[4] = {0};
  static const char *names[4] = {"tr", "amax", "sort", "rows"};
  for (int i = 0; i < pto_program_kernel_count(p); i++)
    for (int k = 0; k < 4; k++)
      if (!strcmp(pto_program_kernel_name(p, i), names[k])) fn[k] = pto_program_kernel(p, i);
  pto_core_ctx ctx = {.ncores = 1, .block_num = 1};
  ctx.scratch_size = pto_program_scratch_bytes(p);
  ctx.scratch = aligned_alloc(64, (ctx.scratch_size + 63) / 64 * 64);
  float *a = malloc(64 * 64 * 4), *b = malloc(64 * 64 * 4), *s = malloc(32 * 64 * 4);
  float *t = malloc((size_t)V * 64 * 4), *o = malloc(64 * 64 * 4);
  int32_t *m = malloc(32 * 4), *si = malloc(32 * 64 * 4), *ix = malloc(64 * 4);
  srand(1);
  for (int i = 0; i < 64 * 64; i++)
    a[i] = (float)rand() / RAND_MAX - 0.5f;
  for (int i = 0; i < 32 * 64; i++)
    s[i] = (float)rand() / RAND_MAX - 0.5f;
  for (int64_t i = 0; i < V * 64; i++)
    t[i] = (float)i;
  for (int i = 0; i < 64; i++)
    ix[i] = (int32_t)(((int64_t)rand() * 7919) % V);
  pto_kernel_tensor ta[2] = {desc(a, PTO_DTYPE_F32, 64, 64), desc(b, PTO_DTYPE_F32, 64, 64)};
  pto_kernel_tensor tm[2] = {desc(s, PTO_DTYPE_F32, 32, 64), desc(m, PTO_DTYPE_I32, 32, 1)};
  pto_kernel_tensor ts[2] = {desc(s, PTO_DTYPE_F32, 32, 64), desc(si, PTO_DTYPE_I32, 32, 64)};
  pto_kernel_tensor tr[3] = {desc(t, PTO_DTYPE_F32, V, 64), desc(ix, PTO_DTYPE_I32, 64, 1),
                             desc(o, PTO_DTYPE_F32, 64, 64)};
  const pto_kernel_tensor *args[4] = {ta, tm, ts, tr};
  static const double elems[4] = {64 * 64, 32 * 64, 32 * 64, 64 * 64};
  double pto_ns[4];
  for (int k = 0; k < 4; k++)
    pto_ns[k] = time_kernel(fn[k], args[k], &ctx, iters) / elems[k];
  /* spot checks: the transpose, one gathered row */
  if (b[1 * 64 + 2] != a[2 * 64 + 1] || o[5 * 64 + 3] != t[(int64_t)ix[5] * 64 + 3]) {
    fprintf(stderr, "bench_struct: wrong results\n");
    return 1;
  }
  char path[] = "/tmp/bench_struct_XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f || fputs(k_numpy, f) < 0 || fclose(f)) {
    fprintf(stderr, "bench_struct: cannot write the numpy script\n");
    return 1;
  }
  char cmd[512];
  snprintf(cmd, sizeof cmd,
           "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 %s %d %lld", path,
           iters / 4 > 0 ? iters / 4 : 1, (long long)V);
  FILE *py = popen(cmd, "r");
  double np_ns[4] = {0};
  int got = py ? fscanf(py, "%lf %lf %lf %lf", &np_ns[0], &np_ns[1], &np_ns[2], &np_ns[3]) : 0;
  if (py) pclose(py);
  remove(path);
  char cpu[256];
  cpu_name(cpu, sizeof cpu);
  printf("structural ops, one thread, %s\n", cpu);
  printf("%-34s %12s %12s %8s\n", "op", "pto ns/elem", "numpy ns/el", "ratio");
  static const char *what[4] = {"transpose 64x64 f32", "row_argmax [32,64] f32",
                                "sort_idx desc [32,64] f32", "gather_rows 64 x 64 f32"};
  for (int k = 0; k < 4; k++) {
    double np = got == 4 ? np_ns[k] / elems[k] : 0;
    printf("%-34s %12.3f %12.3f %8.2f\n", what[k], pto_ns[k], np, np > 0 ? np / pto_ns[k] : 0.0);
  }
  if (got != 4) printf("(numpy did not run: no /usr/bin/python3 with numpy)\n");
  printf("ratio: numpy time / pto time (above 1: pto is faster)\n");
  free(ctx.scratch);
  free(a), free(b), free(s), free(t), free(o), free(m), free(si), free(ix);
  pto_program_release(p);
  pto_ir_program_destroy(ir);
  return 0;
}
