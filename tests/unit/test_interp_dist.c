/* The reference interpreter's L3 level: host functions on simulated ranks (one thread each),
 * comm windows, the kernel-side dist ops and the collectives, against results computed here.
 * Values are small integers (or powers of two for prod) so every order of reduction is exact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pto/ir.h"
#include "testutil.h"

static pto_ir_program *parse_text(const char *text) {
  pto_ir_program *p = NULL;
  pto_status s = pto_ir_parse_string(text, strlen(text), "d.ptir", &p);
  if (!s) s = pto_ir_verify(p);
  if (s) {
    print_error("parse failed: %s\n--- text ---\n%s\n", pto_status_message(s), text);
    pto_status_free(s);
    fail();
  }
  return p;
}

static pto_ir_program *parse_example(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/%s", PTO_SOURCE_DIR, name);
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_file(path, &p));
  assert_pto_ok(pto_ir_verify(p));
  return p;
}

static pto_status run_host(const pto_ir_program *p, pto_ir_interp_arg *args, int nargs, int nranks,
                           int64_t timeout_ms) {
  pto_ir_func *f = NULL;
  assert_pto_ok(pto_ir_program_entry(p, NULL, &f));
  return pto_ir_interp_run_host(p, f, args, nargs, nranks, timeout_ms);
}

static pto_ir_interp_arg tensor_arg(void *data, pto_dtype dt, int rank, const int64_t *shape) {
  pto_ir_interp_arg a;
  memset(&a, 0, sizeof a);
  a.is_tensor = 1;
  pto_host_tensor_init(&a.tensor, data, dt, rank, shape);
  return a;
}

static pto_ir_interp_arg t2(void *data, pto_dtype dt, int64_t r, int64_t c) {
  int64_t s[2] = {r, c};
  return tensor_arg(data, dt, 2, s);
}

static pto_ir_interp_arg scalar_arg(pto_dtype dt, int64_t v) {
  pto_ir_interp_arg a;
  memset(&a, 0, sizeof a);
  a.scalar.dtype = dt;
  if (dt == PTO_DTYPE_F32)
    a.scalar.f = (double)v;
  else
    a.scalar.i = v;
  return a;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint32_t g_seed = 12345;
static float small_int(void) {
  g_seed = g_seed * 1103515245u + 12345u;
  return (float)((int)((g_seed >> 16) % 9) - 4); /* -4 .. 4 */
}

static void check_error(pto_status s, const char *n1, const char *n2) {
  if (!s) {
    print_error("expected an error containing '%s' and '%s', got ok\n", n1, n2 ? n2 : "");
    fail();
  }
  const char *m = pto_status_message(s);
  if (!strstr(m, n1) || (n2 && !strstr(m, n2))) {
    print_error("error '%s' does not match '%s' / '%s'\n", m, n1, n2 ? n2 : "");
    pto_status_free(s);
    fail();
  }
  pto_status_free(s);
}

/* ---- the mesh allreduce written with notify / wait / remote_load ------------------------- */

static void test_mesh_allreduce_example(void **state) {
  pto_ir_program *p = parse_example("allreduce_mesh.ptir");
  static const int ranks[] = {1, 2, 3, 4, 8};
  for (size_t k = 0; k < sizeof ranks / sizeof ranks[0]; k++) {
    int n = ranks[k];
    int64_t rows = 32 * n;
    float *x = malloc(sizeof(float) * (size_t)(rows * 64));
    float *y = calloc((size_t)(rows * 64), sizeof(float));
    for (int64_t i = 0; i < rows * 64; i++)
      x[i] = small_int();
    pto_ir_interp_arg args[2] = {t2(x, PTO_DTYPE_F32, rows, 64), t2(y, PTO_DTYPE_F32, rows, 64)};
    assert_pto_ok(run_host(p, args, 2, n, 60000));
    for (int r = 0; r < n; r++)
      for (int i = 0; i < 32 * 64; i++) {
        float want = 0;
        for (int q = 0; q < n; q++)
          want += x[q * 32 * 64 + i];
        if (y[r * 32 * 64 + i] != want) {
          print_error("%d ranks: rank %d element %d: %g, expected %g\n", n, r, i,
                      (double)y[r * 32 * 64 + i], (double)want);
          fail();
        }
      }
    free(x);
    free(y);
  }
  pto_ir_program_destroy(p);
}

/* ---- every collective, back to back in a kernel loop and over several host calls -------- */

#define CROWS 840 /* divisible by 1..8 */
#define CCOLS 4

static const char *k_coll =
    "program coll\n"
    "dynamic M\n"
    "kernel @coll(%x: tensor[840, 4] f32, inout %buf: dtensor[840, 4] f32,\n"
    "             inout %sig: dtensor[1, 8] i32, out %y: tensor[840, 4] f32, %kind: index,\n"
    "             %root: index, %rounds: index)\n"
    "    -> (dtensor[840, 4] f32, dtensor[1, 8] i32, tensor[840, 4] f32) {\n"
    "  %t = tile.load(%x, [0, 0], [840, 4])\n"
    "  %zero = tile.full([840, 4], f32, 0.0)\n"
    "  %acc = for %i in range(0, %rounds) iter(%a = %zero) {\n"
    "    tile.store(%t, [0, 0], %buf)\n"
    "    if %kind == 0 {\n      dist.allreduce(%buf, %sig)\n    }\n"
    "    if %kind == 1 {\n      dist.allreduce(%buf, %sig, op=max, mode=ring)\n    }\n"
    "    if %kind == 2 {\n      dist.allreduce(%buf, %sig, op=min, mode=mesh)\n    }\n"
    "    if %kind == 3 {\n      dist.allreduce(%buf, %sig, op=prod, mode=ring)\n    }\n"
    "    if %kind == 4 {\n      dist.broadcast(%buf, %sig, %root)\n    }\n"
    "    if %kind == 5 {\n      dist.allgather(%buf, %sig)\n    }\n"
    "    if %kind == 6 {\n      dist.reduce_scatter(%buf, %sig)\n    }\n"
    "    if %kind == 7 {\n      dist.reduce_scatter(%buf, %sig, op=max)\n    }\n"
    "    if %kind == 8 {\n      dist.barrier(%sig)\n    }\n"
    "    %r = tile.load(%buf, [0, 0], [840, 4])\n"
    "    %a2 = tile.add(%a, %r)\n"
    "    yield %a2\n"
    "  }\n"
    "  %y1 = tile.store(%acc, [0, 0], %y)\n"
    "  return %buf, %sig, %y1\n"
    "}\n"
    "orch @step(%x: tensor[840, 4] f32, inout %buf: dtensor[840, 4] f32,\n"
    "           inout %sig: dtensor[1, 8] i32, out %y: tensor[840, 4] f32, %kind: index,\n"
    "           %root: index, %rounds: index)\n"
    "    -> (dtensor[840, 4] f32, dtensor[1, 8] i32, tensor[840, 4] f32) {\n"
    "  %b, %s, %o = call @coll(%x, %buf, %sig, %y, %kind, %root, %rounds)\n"
    "  return %b, %s, %o\n"
    "}\n"
    "host @main(%x: tensor[M, 4] f32, out %y: tensor[M, 4] f32, %kind: index = runtime,\n"
    "           %root: index = runtime, %rounds: index = runtime, %calls: index = runtime) {\n"
    "  %n = dist.world_size()\n"
    "  %wbuf = dist.alloc_window([840, 4], f32)\n"
    "  %wsig = dist.alloc_window([1, 8], i32)\n"
    "  %buf = dist.window(%wbuf)\n"
    "  %sig = dist.window(%wsig)\n"
    "  for %c in range(0, %calls) {\n"
    "    for %r in range(0, %n) {\n"
    "      %xs = tensor.slice(%x, [%r * 840, 0], [840, 4])\n"
    "      %ys = tensor.slice(%y, [%r * 840, 0], [840, 4])\n"
    "      call @step(%xs, %buf, %sig, %ys, %kind, %root, %rounds) device=%r\n"
    "    }\n"
    "  }\n"
    "}\n";

static const char *const k_kind_names[] = {
    "allreduce sum",       "allreduce max ring", "allreduce min",
    "allreduce prod ring", "broadcast",          "allgather",
    "reduce_scatter sum",  "reduce_scatter max", "barrier"};

/* One round's value of element i (of a CROWS x CCOLS block) on rank r; *check: whether the
 * collective defines it. */
static float expected(int kind, int n, int r, int root, const float *x, int i, int *check) {
  const int blk = CROWS / n, row = i / CCOLS;
  *check = 1;
  float v = x[r * CROWS * CCOLS + i];
  switch (kind) {
  case 0:
  case 1:
  case 2:
  case 3:
  case 6:
  case 7: {
    if ((kind == 6 || kind == 7) && row / blk != r) {
      *check = 0;
      return 0;
    }
    float a = x[i];
    for (int q = 1; q < n; q++) {
      float b = x[q * CROWS * CCOLS + i];
      if (kind == 0 || kind == 6) a += b;
      if (kind == 1 || kind == 7) a = fmaxf(a, b);
      if (kind == 2) a = fminf(a, b);
      if (kind == 3) a *= b;
    }
    return a;
  }
  case 4: return x[root * CROWS * CCOLS + i];
  case 5: return x[(row / blk) * CROWS * CCOLS + i];
  default: return v;
  }
}

static void test_collectives_on_2_to_8_ranks(void **state) {
  pto_ir_program *p = parse_text(k_coll);
  const int rounds = 3, calls = 2;
  for (int n = 2; n <= 8; n++) {
    int64_t m = (int64_t)CROWS * n;
    float *x = malloc(sizeof(float) * (size_t)(m * CCOLS));
    float *y = malloc(sizeof(float) * (size_t)(m * CCOLS));
    for (int kind = 0; kind <= 8; kind++) {
      for (int64_t i = 0; i < m * CCOLS; i++) {
        float v = small_int();
        if (kind == 3) v = (float[]){1.0f, -1.0f, 2.0f, 0.5f}[((int)v + 4) % 4];
        x[i] = v;
        y[i] = -999.0f;
      }
      int root = (n + kind) % n;
      pto_ir_interp_arg args[6] = {
          t2(x, PTO_DTYPE_F32, m, CCOLS),      t2(y, PTO_DTYPE_F32, m, CCOLS),
          scalar_arg(PTO_DTYPE_INDEX, kind),   scalar_arg(PTO_DTYPE_INDEX, root),
          scalar_arg(PTO_DTYPE_INDEX, rounds), scalar_arg(PTO_DTYPE_INDEX, calls)};
      pto_status s = run_host(p, args, 6, n, 60000);
      if (s) print_error("%s on %d ranks: %s\n", k_kind_names[kind], n, pto_status_message(s));
      assert_pto_ok(s);
      for (int r = 0; r < n; r++)
        for (int i = 0; i < CROWS * CCOLS; i++) {
          int check;
          float want = expected(kind, n, r, root, x, i, &check) * (float)rounds;
          float got = y[(int64_t)r * CROWS * CCOLS + i];
          if (check && got != want) {
            print_error("%s on %d ranks: rank %d element %d: %g, expected %g\n", k_kind_names[kind],
                        n, r, i, (double)got, (double)want);
            fail();
          }
        }
    }
    free(x);
    free(y);
  }
  pto_ir_program_destroy(p);
}

/* ---- the ring allreduce and the tensor-parallel FFN examples ----------------------------- */

static void test_ring_allreduce_example(void **state) {
  pto_ir_program *p = parse_example("allreduce_ring.ptir");
  for (int n = 2; n <= 4; n++) {
    int64_t rows = 32 * n;
    float *x = malloc(sizeof(float) * (size_t)(rows * 64));
    float *y = calloc((size_t)(rows * 64), sizeof(float));
    for (int64_t i = 0; i < rows * 64; i++)
      x[i] = small_int();
    pto_ir_interp_arg a[4] = {t2(x, PTO_DTYPE_F32, rows, 64), t2(y, PTO_DTYPE_F32, rows, 64),
                              scalar_arg(PTO_DTYPE_F32, 2), scalar_arg(PTO_DTYPE_INDEX, 3)};
    assert_pto_ok(run_host(p, a, 4, n, 60000));
    for (int r = 0; r < n; r++)
      for (int i = 0; i < 32 * 64; i++) {
        float sum = 0;
        for (int q = 0; q < n; q++)
          sum += x[q * 32 * 64 + i];
        float want = 2.0f * sum * (float)(n * n); /* rounds = 3: two more sums of equal copies */
        if (y[r * 32 * 64 + i] != want) {
          print_error("%d ranks: rank %d element %d: %g, expected %g\n", n, r, i,
                      (double)y[r * 32 * 64 + i], (double)want);
          fail();
        }
      }
    free(x);
    free(y);
  }
  pto_ir_program_destroy(p);
}

static void test_tp_ffn_example(void **state) {
  pto_ir_program *p = parse_example("tp_ffn.ptir");
  for (int n = 1; n <= 4; n++) {
    float x[32 * 64], *w1 = malloc(sizeof(float) * (size_t)(n * 64 * 32)),
                      *w2 = malloc(sizeof(float) * (size_t)(n * 32 * 64)),
                      *y = calloc((size_t)(n * 32 * 64), sizeof(float));
    for (int i = 0; i < 32 * 64; i++)
      x[i] = small_int() * 0.25f;
    for (int i = 0; i < n * 64 * 32; i++) {
      w1[i] = small_int() * 0.125f;
      w2[i] = small_int() * 0.125f;
    }
    int64_t s3a[3] = {n, 64, 32}, s3b[3] = {n, 32, 64};
    pto_ir_interp_arg a[4] = {t2(x, PTO_DTYPE_F32, 32, 64), tensor_arg(w1, PTO_DTYPE_F32, 3, s3a),
                              tensor_arg(w2, PTO_DTYPE_F32, 3, s3b),
                              t2(y, PTO_DTYPE_F32, 32 * n, 64)};
    assert_pto_ok(run_host(p, a, 4, n, 60000));
    /* reference: y = sum_r relu(x @ w1[r]) @ w2[r] */
    static float want[32 * 64], h[32 * 32];
    memset(want, 0, sizeof want);
    for (int r = 0; r < n; r++) {
      for (int i = 0; i < 32; i++)
        for (int j = 0; j < 32; j++) {
          float acc = 0;
          for (int k = 0; k < 64; k++)
            acc += x[i * 64 + k] * w1[(r * 64 + k) * 32 + j];
          h[i * 32 + j] = acc > 0 ? acc : 0;
        }
      for (int i = 0; i < 32; i++)
        for (int j = 0; j < 64; j++) {
          float acc = 0;
          for (int k = 0; k < 32; k++)
            acc += h[i * 32 + k] * w2[(r * 32 + k) * 64 + j];
          want[i * 64 + j] += acc;
        }
    }
    for (int r = 0; r < n; r++)
      for (int i = 0; i < 32 * 64; i++)
        if (fabsf(y[r * 32 * 64 + i] - want[i]) > 1e-3f * (1.0f + fabsf(want[i]))) {
          print_error("%d ranks: rank %d element %d: %g, expected %g\n", n, r, i,
                      (double)y[r * 32 * 64 + i], (double)want[i]);
          fail();
        }
    free(w1);
    free(w2);
    free(y);
  }
  pto_ir_program_destroy(p);
}

/* ---- waits that cannot be satisfied ------------------------------------------------------- */

static const char *k_stuck =
    "program stuck\n"
    "kernel @k(inout %sig: dtensor[2, 4] i32, %mode: index) -> (dtensor[2, 4] i32) {\n"
    "  %me = dist.rank(%sig)\n"
    "  if %me == 0 {\n"
    "    if %mode == 0 {\n"
    "      dist.wait(%sig, [1, 3], 1, cmp=eq)\n"
    "    }\n"
    "    if %mode == 1 {\n"
    "      dist.wait(%sig, [0, 2], 5, cmp=ge)\n"
    "    }\n"
    "  }\n"
    "  if %mode == 1 {\n"
    "    dist.notify(%sig, 0, [0, 2], 2, op=atomic_add)\n"
    "  }\n"
    "  return %sig\n"
    "}\n"
    "kernel @b(inout %s: dtensor[1, 4] i32) -> (dtensor[1, 4] i32) {\n"
    "  %me = dist.rank(%s)\n"
    "  if %me != 1 {\n"
    "    dist.barrier(%s)\n"
    "  }\n"
    "  return %s\n"
    "}\n"
    "orch @o(inout %sig: dtensor[2, 4] i32, inout %s: dtensor[1, 4] i32, %mode: index)\n"
    "    -> (dtensor[2, 4] i32, dtensor[1, 4] i32) {\n"
    "  if %mode < 2 {\n"
    "    %a = call @k(%sig, %mode)\n"
    "  } else {\n"
    "    %c = call @b(%s)\n"
    "  }\n"
    "  return %sig, %s\n"
    "}\n"
    "host @main(%mode: index = runtime) {\n"
    "  %wsig = dist.alloc_window([2, 4], i32)\n"
    "  %wbar = dist.alloc_window([1, 4], i32)\n"
    "  %sig = dist.window(%wsig)\n"
    "  %bar = dist.window(%wbar)\n"
    "  %n = dist.world_size()\n"
    "  for %r in range(0, %n) {\n"
    "    call @o(%sig, %bar, %mode) device=%r\n"
    "  }\n"
    "}\n";

/* A window op's offsets are checked against its own dtensor, not the rank's whole window area
 * (issue #34 item 3): the error names the rank, the op, the window and the offset. */
static const char *k_poke =
    "program poke\n"
    "kernel @k(inout %sig: dtensor[1, 4] i32, %i: index) -> (dtensor[1, 4] i32) {\n"
    "  %me = dist.rank(%sig)\n"
    "  %s1 = dist.notify(%sig, %me, [0, %i], 1, op=set)\n"
    "  return %s1\n"
    "}\n"
    "orch @o(inout %sig: dtensor[1, 4] i32, %i: index) -> (dtensor[1, 4] i32) {\n"
    "  %a = call @k(%sig, %i)\n"
    "  return %a\n"
    "}\n"
    "host @main(%i: index = runtime) {\n"
    "  %wsig = dist.alloc_window([1, 4], i32)\n"
    "  %wnext = dist.alloc_window([1, 4], i32)\n"
    "  %sig = dist.window(%wsig)\n"
    "  %n = dist.world_size()\n"
    "  for %r in range(0, %n) {\n"
    "    call @o(%sig, %i) device=%r\n"
    "  }\n"
    "}\n";

static void test_notify_past_its_window_is_a_launch_error(void **state) {
  (void)state;
  pto_ir_program *p = parse_text(k_poke);
  pto_ir_interp_arg a = scalar_arg(PTO_DTYPE_INDEX, 4);
  pto_status s = run_host(p, &a, 1, 2, 300);
  check_error(s, "dist.notify on rank ",
              "offset 4 of dim 1 is outside the extent 4 of window %wsig (%sig in @k)");
  a = scalar_arg(PTO_DTYPE_INDEX, 3);
  assert_pto_ok(run_host(p, &a, 1, 2, 300));
  pto_ir_program_destroy(p);
}

/* tests/e2e/data/stuck_wait.ptir, which tests/e2e/dist_cli.sh runs compiled ("rank 1: dist.wait
 * timed out after 300 ms on window %w at offsets [0, 5]"): the interpreter names the same window,
 * %w, as the host program wrote it. */
static void test_stuck_wait_names_the_hosts_window(void **state) {
  (void)state;
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_file(PTO_SOURCE_DIR "/tests/e2e/data/stuck_wait.ptir", &p));
  assert_pto_ok(pto_ir_verify(p));
  check_error(run_host(p, NULL, 0, 2, 300), "call @o device=1",
              "dist.wait on rank 1 timed out after 300 ms: window %w (%sig in @k) at offsets "
              "[0, 5]: expected == 7, current value 0");
  pto_ir_program_destroy(p);
}

static void test_wait_that_cannot_be_satisfied_times_out(void **state) {
  pto_ir_program *p = parse_text(k_stuck);

  pto_ir_interp_arg a = scalar_arg(PTO_DTYPE_INDEX, 0);
  double t0 = now_s();
  pto_status s = run_host(p, &a, 1, 2, 300);
  double dt = now_s() - t0;
  check_error(s, "call @o device=0",
              "dist.wait on rank 0 timed out after 300 ms: window %wsig (%sig in @k) at offsets "
              "[1, 3]: expected == 1, current value 0");
  assert_true(dt >= 0.29 && dt < 30.0); /* not early; the upper bound: a hang's */

  /* cmp=ge on an element that only rank 1 adds 2 to (rank 0 adds after its wait) */
  a = scalar_arg(PTO_DTYPE_INDEX, 1);
  t0 = now_s();
  s = run_host(p, &a, 1, 2, 200);
  dt = now_s() - t0;
  check_error(s, "dist.wait on rank 0 timed out after 200 ms",
              "at offsets [0, 2]: expected >= 5, current value 2");
  assert_true(dt < 30.0); /* a hang's bound */

  /* a barrier that rank 1 never reaches */
  a = scalar_arg(PTO_DTYPE_INDEX, 2);
  t0 = now_s();
  s = run_host(p, &a, 1, 3, 200);
  dt = now_s() - t0;
  check_error(s, "dist.barrier on rank ",
              "timed out after 200 ms on signal window %wbar (%s in @b): 2 of 3 ranks arrived; "
              "waiting for rank 1");
  assert_true(dt < 30.0); /* a hang's bound */

  /* the deadline: a parameter, else $PTO_DIST_TIMEOUT_MS, else 5 s */
  unsetenv("PTO_DIST_TIMEOUT_MS");
  assert_int_equal(pto_ir_interp_dist_timeout_ms(0), PTO_IR_INTERP_DIST_TIMEOUT_MS);
  assert_int_equal(pto_ir_interp_dist_timeout_ms(77), 77);
  setenv("PTO_DIST_TIMEOUT_MS", "150", 1);
  assert_int_equal(pto_ir_interp_dist_timeout_ms(0), 150);
  a = scalar_arg(PTO_DTYPE_INDEX, 0);
  t0 = now_s();
  check_error(run_host(p, &a, 1, 2, 0), "timed out after 150 ms", NULL);
  assert_true(now_s() - t0 < 30.0); /* a hang's bound */
  /* A bad value is an error naming the variable and the range, not a silent default (issue #34
   * item 23). */
  static const char *const bad[] = {"x", "1e3", "4294967297", "-1", "0", "86400001"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    setenv("PTO_DIST_TIMEOUT_MS", bad[i], 1);
    assert_int_equal(pto_ir_interp_dist_timeout_ms(0), -1);
    check_error(run_host(p, &a, 1, 2, 0), "PTO_DIST_TIMEOUT_MS is '",
                "': expected an integer from 1 to 86400000");
  }
  assert_int_equal(pto_ir_interp_dist_timeout_ms(77), 77); /* a parameter wins */
  unsetenv("PTO_DIST_TIMEOUT_MS");
  pto_ir_program_destroy(p);
}

/* A wait's deadline is one of the other ranks' (and the host's) progress, as the runtime's
 * shared-memory waits': rank 0 waits for a notify that rank 1 sends only after a loop of %n
 * iterations, and the host queues rank 1's call only after a loop of %m of its own. Either takes
 * many deadlines on purpose (a slow host, a sanitizer) and the program is correct; with %late
 * = 2 both meet at a barrier instead; with %late = 0 rank 1 never notifies, and the wait still
 * fails once rank 1's call has ended. */
static const char *k_slow_peer =
    "program slow\n"
    "kernel @k(inout %sig: dtensor[1, 4] i32, %n: index, %late: index) -> (dtensor[1, 4] i32) {\n"
    "  %me = dist.rank(%sig)\n"
    "  if %me == 0 {\n"
    "    if %late < 2 {\n"
    "      dist.wait(%sig, [0, 1], 1, cmp=eq)\n"
    "    }\n"
    "  }\n"
    "  if %me == 1 {\n"
    "    %t = tile.full([1, 4], f32, 0.0)\n"
    "    %slow = for %i in range(0, %n) iter(%a = %t) {\n"
    "      %b = tile.adds(%a, 1.0)\n"
    "      yield %b\n"
    "    }\n"
    "    if %late == 1 {\n"
    "      dist.notify(%sig, 0, [0, 1], 1, op=set)\n"
    "    }\n"
    "  }\n"
    "  if %late == 2 {\n"
    "    dist.barrier(%sig)\n"
    "  }\n"
    "  return %sig\n"
    "}\n"
    "orch @o(inout %sig: dtensor[1, 4] i32, %n: index, %late: index) -> (dtensor[1, 4] i32) {\n"
    "  %a = call @k(%sig, %n, %late)\n"
    "  return %a\n"
    "}\n"
    "host @main(%n: index = runtime, %m: index = runtime, %late: index = runtime) {\n"
    "  %w = dist.alloc_window([1, 4], i32)\n"
    "  %sig = dist.window(%w)\n"
    "  call @o(%sig, %n, %late) device=0\n"
    "  %busy = for %i in range(0, %m) iter(%x = 0) {\n"
    "    %y = %x + %i\n"
    "    yield %y\n"
    "  }\n"
    "  call @o(%sig, %n, %late) device=1\n"
    "}\n";

/* The deadline of the slow-peer runs: long enough that a thread of a loaded CI host (2 CPUs, the
 * suite at -j2, sanitizers) is not starved that long, where 20 ms was (the test failed once at
 * load ~12 with no other rank's progress for 20 ms) and 250 ms was (once at load ~13). */
#define SLOW_MS 500

/* Runs k_slow_peer with a SLOW_MS deadline, doubling the loop (rank 1's, else the host's) from
 * iters until the run takes 4 deadlines: each must pass, the loop's statements being the
 * progress that renews the waiting rank's deadline. Returns the loop count that took that long. */
static int64_t run_slow_peer(pto_ir_program *p, int host_slow, int late, int64_t iters) {
  for (;; iters *= 2) {
    pto_ir_interp_arg a[3] = {scalar_arg(PTO_DTYPE_INDEX, host_slow ? 0 : iters),
                              scalar_arg(PTO_DTYPE_INDEX, host_slow ? iters : 0),
                              scalar_arg(PTO_DTYPE_INDEX, late)};
    double t0 = now_s();
    assert_pto_ok(run_host(p, a, 3, 2, SLOW_MS));
    if (now_s() - t0 >= 4 * SLOW_MS / 1000.0) return iters;
    assert_true(iters < ((int64_t)1 << 34)); /* the loop does take time */
  }
}

static void test_a_slow_peer_is_not_a_stuck_one(void **state) {
  (void)state;
  pto_ir_program *p = parse_text(k_slow_peer);
  int64_t iters = run_slow_peer(p, 0, 1, 1000); /* rank 1 busy before its notify */
  run_slow_peer(p, 1, 1, 1000);                 /* the host busy before it queues rank 1's call */
  run_slow_peer(p, 0, 2, iters / 2);            /* rank 1 busy before the barrier */
  /* rank 1 busy for twice as long, then done without notifying: the wait fails once rank 1
   * has stopped (not a deadline after it began), naming its deadline */
  pto_ir_interp_arg a[3] = {scalar_arg(PTO_DTYPE_INDEX, 2 * iters), scalar_arg(PTO_DTYPE_INDEX, 0),
                            scalar_arg(PTO_DTYPE_INDEX, 0)};
  double t0 = now_s();
  pto_status s = run_host(p, a, 3, 2, SLOW_MS);
  double dt = now_s() - t0;
  check_error(s, "call @o device=0",
              "dist.wait on rank 0 timed out after 500 ms: window %w (%sig in @k) at offsets "
              "[0, 1]: expected == 1, current value 0");
  assert_true(dt >= 2.0 * SLOW_MS / 1000.0 && dt < 60.0); /* not before rank 1 is done; a hang */
  pto_ir_program_destroy(p);
}

/* A failing rank stops the ranks that wait for it at once, and its error is the one reported. */
static void test_a_failure_stops_the_waiting_ranks(void **state) {
  const char *text = "program f\n"
                     "kernel @k(inout %s: dtensor[1, 4] i32, %d: i32) -> (dtensor[1, 4] i32) {\n"
                     "  %me = dist.rank(%s)\n"
                     "  if %me == 1 {\n"
                     "    %t = tile.full([1, 4], i32, 1)\n"
                     "    %u = tile.divs(%t, %d)\n"
                     "  }\n"
                     "  dist.barrier(%s)\n"
                     "  return %s\n"
                     "}\n"
                     "orch @o(inout %s: dtensor[1, 4] i32, %d: i32) -> (dtensor[1, 4] i32) {\n"
                     "  %a = call @k(%s, %d)\n"
                     "  return %a\n"
                     "}\n"
                     "host @main(%d: i32 = runtime) {\n"
                     "  %w = dist.alloc_window([1, 4], i32)\n"
                     "  %s = dist.window(%w)\n"
                     "  %n = dist.world_size()\n"
                     "  for %r in range(0, %n) {\n"
                     "    call @o(%s, %d) device=%r\n"
                     "  }\n"
                     "}\n";
  pto_ir_program *p = parse_text(text);
  pto_ir_interp_arg a = scalar_arg(PTO_DTYPE_I32, 0);
  double t0 = now_s();
  /* At once: well before the 60 s deadline (30 s leaves a loaded host or TSan its time). */
  pto_status s = run_host(p, &a, 1, 4, 60000);
  check_error(s, "d.ptir:20:5: call @o device=1: ", "integer division by zero");
  assert_true(now_s() - t0 < 30.0);
  a = scalar_arg(PTO_DTYPE_I32, 1);
  assert_pto_ok(run_host(p, &a, 1, 4, 60000));
  pto_ir_program_destroy(p);
}

/* ---- dispatch order: per rank in issue order, across ranks by the data -------------------- */

static const char *k_order =
    "program order\n"
    "kernel @step(inout %acc: tensor[1, 4] f32, %v: f32) -> (tensor[1, 4] f32) {\n"
    "  %t = tile.load(%acc, [0, 0], [1, 4])\n"
    "  %t2 = tile.muls(%t, 2.0)\n"
    "  %t3 = tile.adds(%t2, %v)\n"
    "  %a = tile.store(%t3, [0, 0], %acc)\n"
    "  return %a\n"
    "}\n"
    "kernel @scale(%src: tensor[1, 4] f32, out %dst: tensor[1, 4] f32, %v: f32)\n"
    "    -> (tensor[1, 4] f32) {\n"
    "  %t = tile.load(%src, [0, 0], [1, 4])\n"
    "  %slow = for %i in range(0, 200) iter(%a = %t) {\n"
    "    %b = tile.adds(%a, 1.0)\n"
    "    %c = tile.subs(%b, 1.0)\n"
    "    yield %c\n"
    "  }\n"
    "  %u = tile.muls(%slow, %v)\n"
    "  %d = tile.store(%u, [0, 0], %dst)\n"
    "  return %d\n"
    "}\n"
    "orch @o_step(inout %acc: tensor[1, 4] f32, %v: f32) -> (tensor[1, 4] f32) {\n"
    "  %a = call @step(%acc, %v)\n"
    "  return %a\n"
    "}\n"
    "orch @o_scale(%src: tensor[1, 4] f32, out %dst: tensor[1, 4] f32, %v: f32)\n"
    "    -> (tensor[1, 4] f32) {\n"
    "  %d = call @scale(%src, %dst, %v)\n"
    "  return %d\n"
    "}\n"
    "host @main(inout %acc: tensor[2, 4] f32, inout %t: tensor[1, 4] f32,\n"
    "           out %u: tensor[1, 4] f32, out %w: tensor[1, 4] f32) {\n"
    "  %a0 = tensor.slice(%acc, [0, 0], [1, 4])\n"
    "  %a1 = tensor.slice(%acc, [1, 0], [1, 4])\n"
    "  for %i in range(0, 12) {\n"
    "    %v = f32(%i)\n"
    "    call @o_step(%a0, %v) device=0\n"
    "    call @o_step(%a1, %v + 100.0) device=1\n"
    "  }\n"
    "  # read after write across ranks: u = (t * 3) * 2\n"
    "  %tmp = tensor.create([1, 4], f32)\n"
    "  call @o_scale(%t, %tmp, 3.0) device=0\n"
    "  call @o_scale(%tmp, %u, 2.0) device=1\n"
    "  # write after read across ranks: w = t * 5 from the t before it is overwritten\n"
    "  call @o_scale(%t, %w, 5.0) device=2\n"
    "  call @o_scale(%u, %t, 0.5) device=3\n"
    "}\n";

static void test_calls_run_in_order(void **state) {
  pto_ir_program *p = parse_text(k_order);
  for (int rep = 0; rep < 5; rep++) {
    float acc[8] = {1, 2, 3, 4, -1, -2, -3, -4}, t[4] = {1, 2, 3, 4}, u[4] = {0}, w[4] = {0};
    pto_ir_interp_arg a[4] = {t2(acc, PTO_DTYPE_F32, 2, 4), t2(t, PTO_DTYPE_F32, 1, 4),
                              t2(u, PTO_DTYPE_F32, 1, 4), t2(w, PTO_DTYPE_F32, 1, 4)};
    assert_pto_ok(run_host(p, a, 4, 4, 60000));
    for (int c = 0; c < 4; c++) {
      float e0 = (float)(c + 1), e1 = (float)-(c + 1);
      for (int i = 0; i < 12; i++) {
        e0 = e0 * 2.0f + (float)i;
        e1 = e1 * 2.0f + (float)i + 100.0f;
      }
      assert_true(acc[c] == e0);
      assert_true(acc[4 + c] == e1);
      float t0 = (float)(c + 1);
      assert_true(u[c] == t0 * 3.0f * 2.0f);
      assert_true(w[c] == t0 * 5.0f);
      assert_true(t[c] == u[c] * 0.5f);
    }
  }
  pto_ir_program_destroy(p);
}

/* ---- tensor.reshape and tensor.select in a host and an orch ------------------------------- */

static void test_reshape_and_select(void **state) {
  const char *text =
      "program rs\n"
      "dynamic R\n"
      "kernel @copy(%a: tensor[4, 8] f32, out %b: tensor[4, 8] f32) -> (tensor[4, 8] f32) {\n"
      "  %t = tile.load(%a, [0, 0], [4, 8])\n"
      "  %o = tile.store(%t, [0, 0], %b)\n"
      "  return %o\n"
      "}\n"
      "orch @o(%x: tensor[32] f32, out %y: tensor[2, 16] f32) -> (tensor[2, 16] f32) {\n"
      "  %a = tensor.reshape(%x, [4, 8])\n"
      "  %b = tensor.reshape(%y, [4, 8])\n"
      "  %r = call @copy(%a, %b)\n"
      "  return %y\n"
      "}\n"
      "orch @bad(%x: tensor[R, 16] f32, %k: index) {\n"
      "  %s = tensor.slice(%x, [0, 0], [2, R])\n"
      "  %f = tensor.reshape(%s, [%k])\n"
      "}\n"
      "host @main(%x: tensor[3, 4, 8] f32, out %y: tensor[3, 32] f32) {\n"
      "  %n = dist.world_size()\n"
      "  for %r in range(0, %n) {\n"
      "    %xs = tensor.select(%x, %r)\n"
      "    %xf = tensor.reshape(%xs, [32])\n"
      "    %ys = tensor.select(%y, %r)\n"
      "    %y2 = tensor.reshape(%ys, [2, 16])\n"
      "    call @o(%xf, %y2) device=%r\n"
      "  }\n"
      "}\n";
  pto_ir_program *p = parse_text(text);
  float x[96], y[96];
  for (int i = 0; i < 96; i++) {
    x[i] = (float)i;
    y[i] = -1;
  }
  int64_t s3[3] = {3, 4, 8};
  pto_ir_interp_arg a[2] = {tensor_arg(x, PTO_DTYPE_F32, 3, s3), t2(y, PTO_DTYPE_F32, 3, 32)};
  assert_pto_ok(run_host(p, a, 2, 3, 60000));
  for (int i = 0; i < 96; i++)
    assert_true(y[i] == (float)i);
  /* with 2 ranks, the third block is untouched */
  for (int i = 0; i < 96; i++)
    y[i] = -1;
  assert_pto_ok(run_host(p, a, 2, 2, 60000));
  for (int i = 0; i < 96; i++)
    assert_true(y[i] == (i < 64 ? (float)i : -1.0f));
  /* a slice that is not contiguous at run time cannot be reshaped */
  pto_ir_func *bad = pto_ir_program_find_func(p, "bad");
  static float z[256];
  pto_ir_interp_arg b[2] = {t2(z, PTO_DTYPE_F32, 4, 16), scalar_arg(PTO_DTYPE_INDEX, 8)};
  check_error(pto_ir_interp_run(p, bad, b, 2),
              "d.ptir:16:8: ", "tensor.reshape: %s is not contiguous");
  b[1] = scalar_arg(PTO_DTYPE_INDEX, 32);
  check_error(pto_ir_interp_run(p, bad, b, 2),
              "d.ptir:16:8: ", "tensor.reshape: %s has 8 elements, the shape 32");
  b[0] = t2(z, PTO_DTYPE_F32, 16, 16); /* [2, 16] of [16, 16]: whole rows, contiguous */
  assert_pto_ok(pto_ir_interp_run(p, bad, b, 2));
  pto_ir_program_destroy(p);
}

/* ---- remote_store and atomic_add: a ring shift ---------------------------------------- */

/* Rank r stores its block into rank r+1's window with remote_store, then bumps that rank's
 * counter with atomic_add; every rank waits for its counter and reads its own window: y's block
 * r becomes x's block r-1. `rounds` repeats it, with the counter growing by 1 each round. */
static const char *k_shift =
    "program shift\n"
    "dynamic M\n"
    "kernel @k(%x: tensor[8, 16] i32, inout %buf: dtensor[8, 16] i32,\n"
    "          inout %cnt: dtensor[1, 8] i32, out %y: tensor[8, 16] i32, %rounds: index)\n"
    "    -> (dtensor[8, 16] i32, dtensor[1, 8] i32, tensor[8, 16] i32) {\n"
    "  %me = dist.rank(%buf)\n"
    "  %n = dist.nranks(%buf)\n"
    "  %next = mod(%me + 1, %n)\n"
    "  %t = tile.load(%x, [0, 0], [8, 16])\n"
    "  %acc0 = tile.full([8, 16], i32, 0)\n"
    "  %acc = for %i in range(0, %rounds) iter(%a = %acc0) {\n"
    "    %ti = tile.adds(%t, i32(%i))\n"
    "    dist.remote_store(%ti, %buf, %next, [0, 0])\n"
    "    dist.notify(%cnt, %next, [0, 0], 1, op=atomic_add)\n"
    "    %want = i32(%i) + 1\n"
    "    dist.wait(%cnt, [0, 0], %want, cmp=ge)\n"
    "    %got = tile.load(%buf, [0, 0], [8, 16])\n"
    "    # nobody may overwrite my window before I have read it: a second counter in column 1\n"
    "    %prev = mod(%me + %n - 1, %n)\n"
    "    dist.notify(%cnt, %prev, [0, 1], 1, op=atomic_add)\n"
    "    dist.wait(%cnt, [0, 1], %want, cmp=eq)\n"
    "    %a2 = tile.add(%a, %got)\n"
    "    yield %a2\n"
    "  }\n"
    "  %y1 = tile.store(%acc, [0, 0], %y)\n"
    "  return %buf, %cnt, %y1\n"
    "}\n"
    "orch @o(%x: tensor[8, 16] i32, inout %buf: dtensor[8, 16] i32,\n"
    "        inout %cnt: dtensor[1, 8] i32, out %y: tensor[8, 16] i32, %rounds: index)\n"
    "    -> (dtensor[8, 16] i32, dtensor[1, 8] i32, tensor[8, 16] i32) {\n"
    "  %b, %c, %o = call @k(%x, %buf, %cnt, %y, %rounds)\n"
    "  return %b, %c, %o\n"
    "}\n"
    "host @main(%x: tensor[M, 16] i32, out %y: tensor[M, 16] i32, %rounds: index = runtime) {\n"
    "  %n = dist.world_size()\n"
    "  %wb = dist.alloc_window([8, 16], i32)\n"
    "  %wc = dist.alloc_window([1, 8], i32)\n"
    "  %b = dist.window(%wb)\n"
    "  %c = dist.window(%wc)\n"
    "  for %r in range(0, %n) {\n"
    "    %xs = tensor.slice(%x, [%r * 8, 0], [8, 16])\n"
    "    %ys = tensor.slice(%y, [%r * 8, 0], [8, 16])\n"
    "    call @o(%xs, %b, %c, %ys, %rounds) device=%r\n"
    "  }\n"
    "}\n";

static void test_ring_shift_with_remote_store(void **state) {
  pto_ir_program *p = parse_text(k_shift);
  const int rounds = 4;
  for (int n = 2; n <= 8; n++) {
    int32_t *x = malloc(sizeof(int32_t) * (size_t)(n * 128)),
            *y = calloc((size_t)(n * 128), sizeof(int32_t));
    for (int i = 0; i < n * 128; i++)
      x[i] = i * 7 - 100;
    pto_ir_interp_arg a[3] = {t2(x, PTO_DTYPE_I32, 8 * n, 16), t2(y, PTO_DTYPE_I32, 8 * n, 16),
                              scalar_arg(PTO_DTYPE_INDEX, rounds)};
    assert_pto_ok(run_host(p, a, 3, n, 60000));
    for (int r = 0; r < n; r++)
      for (int i = 0; i < 128; i++) {
        int src = (r + n - 1) % n;
        int32_t want = rounds * x[src * 128 + i] + (0 + 1 + 2 + 3);
        assert_int_equal(y[r * 128 + i], want);
      }
    free(x);
    free(y);
  }
  pto_ir_program_destroy(p);
}

/* Collectives that do not match across ranks, a bad root, a signal window too narrow. */
static void test_collective_misuse(void **state) {
  const char *text =
      "program cm\n"
      "kernel @k(inout %w: dtensor[8, 4] f32, inout %s: dtensor[1, 4] i32, %mode: index)\n"
      "    -> (dtensor[8, 4] f32, dtensor[1, 4] i32) {\n"
      "  %me = dist.rank(%s)\n"
      "  if %mode == 0 {\n"
      "    if %me == 0 {\n"
      "      dist.allreduce(%w, %s)\n"
      "    } else {\n"
      "      dist.broadcast(%w, %s, 0)\n"
      "    }\n"
      "  }\n"
      "  if %mode == 1 {\n"
      "    dist.broadcast(%w, %s, %me + 7)\n"
      "  }\n"
      "  if %mode == 2 {\n"
      "    dist.allgather(%w, %s)\n"
      "  }\n"
      "  return %w, %s\n"
      "}\n"
      "orch @o(inout %w: dtensor[8, 4] f32, inout %s: dtensor[1, 4] i32, %mode: index)\n"
      "    -> (dtensor[8, 4] f32, dtensor[1, 4] i32) {\n"
      "  %a, %b = call @k(%w, %s, %mode)\n"
      "  return %a, %b\n"
      "}\n"
      "host @main(%mode: index = runtime) {\n"
      "  %ww = dist.alloc_window([8, 4], f32)\n"
      "  %ws = dist.alloc_window([1, 4], i32)\n"
      "  %w = dist.window(%ww)\n"
      "  %s = dist.window(%ws)\n"
      "  %n = dist.world_size()\n"
      "  for %r in range(0, %n) {\n"
      "    call @o(%w, %s, %mode) device=%r\n"
      "  }\n"
      "}\n";
  pto_ir_program *p = parse_text(text);
  pto_ir_interp_arg a = scalar_arg(PTO_DTYPE_INDEX, 0);
  check_error(run_host(p, &a, 1, 2, 5000), " does not match ",
              "on the same signal window %ws (every rank must run the same collective on the "
              "same window)");
  a = scalar_arg(PTO_DTYPE_INDEX, 1);
  check_error(run_host(p, &a, 1, 2, 5000), "dist.broadcast on rank ", ": root ");
  a = scalar_arg(PTO_DTYPE_INDEX, 2);
  check_error(run_host(p, &a, 1, 3, 5000), "dist.allgather on rank ",
              "the window must be [N, C] with N divisible by the 3 ranks, got rank 2, N = 8");
  check_error(run_host(p, &a, 1, 5, 5000), "dist.allgather on rank ",
              "the signal window %s must be i32 [1, S] or [S, 1] with S >= 5 ranks, got i32 of "
              "rank 2, [1, 4]");
  assert_pto_ok(run_host(p, &a, 1, 4, 60000));
  pto_ir_program_destroy(p);
}

/* ---- misuse ----------------------------------------------------------------------------- */

static void test_host_misuse(void **state) {
  const char *text = "program m\n"
                     "kernel @k(inout %s: dtensor[1, 4] i32, %p: index) -> (dtensor[1, 4] i32) {\n"
                     "  %a = dist.notify(%s, %p, [0, 0], 1, op=set)\n"
                     "  return %a\n"
                     "}\n"
                     "orch @o(inout %s: dtensor[1, 4] i32, %p: index) -> (dtensor[1, 4] i32) {\n"
                     "  %a = call @k(%s, %p)\n"
                     "  return %a\n"
                     "}\n"
                     "host @main(%dev: index = runtime, %peer: index = runtime) {\n"
                     "  %w = dist.alloc_window([1, 4], i32)\n"
                     "  %s = dist.window(%w)\n"
                     "  call @o(%s, %peer) device=%dev\n"
                     "}\n";
  pto_ir_program *p = parse_text(text);
  pto_ir_interp_arg a[2] = {scalar_arg(PTO_DTYPE_INDEX, 4), scalar_arg(PTO_DTYPE_INDEX, 0)};
  check_error(run_host(p, a, 2, 4, 1000),
              "d.ptir:13:3: ", "call @o: device=4 is outside 0..3 (the world size is 4)");
  a[0] = scalar_arg(PTO_DTYPE_INDEX, 1);
  a[1] = scalar_arg(PTO_DTYPE_INDEX, 2);
  check_error(run_host(p, a, 2, 2, 1000),
              "call @o device=1: d.ptir:3:8: ", "dist.notify on rank 1: peer 2 is outside 0..1");
  a[1] = scalar_arg(PTO_DTYPE_INDEX, 0);
  assert_pto_ok(run_host(p, a, 2, 2, 1000));
  pto_ir_func *h = pto_ir_program_find_func(p, "main"), *o = pto_ir_program_find_func(p, "o");
  check_error(pto_ir_interp_run_host(p, h, a, 2, 0, 1000), "world size 0 is outside 1..256", NULL);
  check_error(pto_ir_interp_run_host(p, o, a, 2, 2, 1000), "@o is not a host function", NULL);
  check_error(pto_ir_interp_run(p, h, a, 2), "pto_ir_interp_run_host and a world size", NULL);
  pto_ir_program_destroy(p);
}

/* A window's shape computed at run time: a negative extent is a launch error naming the op
 * (it said "tensor.create", the op the interpreter shares with dist.alloc_window) and the extent;
 * tensor.create in a host keeps its own name. */
static void test_window_runtime_extent(void **state) {
  (void)state;
  const char *text = "program m\n"
                     "host @main(%n: index = runtime, %c: bool = runtime) {\n"
                     "  if %c {\n"
                     "    %w = dist.alloc_window([%n, 4], i32)\n"
                     "  } else {\n"
                     "    %t = tensor.create([2, %n], f32)\n"
                     "  }\n"
                     "}\n";
  pto_ir_program *p = parse_text(text);
  pto_ir_interp_arg a[2] = {scalar_arg(PTO_DTYPE_INDEX, -2), scalar_arg(PTO_DTYPE_BOOL, 1)};
  check_error(run_host(p, a, 2, 2, 1000),
              "d.ptir:4:", "dist.alloc_window: extent -2 of dim 0 is not valid");
  a[1] = scalar_arg(PTO_DTYPE_BOOL, 0);
  check_error(run_host(p, a, 2, 2, 1000),
              "d.ptir:6:", "tensor.create: extent -2 of dim 1 is not valid");
  a[0] = scalar_arg(PTO_DTYPE_INDEX, 3);
  assert_pto_ok(run_host(p, a, 2, 2, 1000));
  a[1] = scalar_arg(PTO_DTYPE_BOOL, 1);
  assert_pto_ok(run_host(p, a, 2, 2, 1000));
  pto_ir_program_destroy(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_window_runtime_extent),
      cmocka_unit_test(test_mesh_allreduce_example),
      cmocka_unit_test(test_collectives_on_2_to_8_ranks),
      cmocka_unit_test(test_ring_allreduce_example),
      cmocka_unit_test(test_tp_ffn_example),
      cmocka_unit_test(test_wait_that_cannot_be_satisfied_times_out),
      cmocka_unit_test(test_stuck_wait_names_the_hosts_window),
      cmocka_unit_test(test_notify_past_its_window_is_a_launch_error),
      cmocka_unit_test(test_a_slow_peer_is_not_a_stuck_one),
      cmocka_unit_test(test_a_failure_stops_the_waiting_ranks),
      cmocka_unit_test(test_calls_run_in_order),
      cmocka_unit_test(test_reshape_and_select),
      cmocka_unit_test(test_ring_shift_with_remote_store),
      cmocka_unit_test(test_collective_misuse),
      cmocka_unit_test(test_host_misuse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
