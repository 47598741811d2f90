/* The reference interpreter against hand-computed results: every op family, the dtype rules
 * (f16/bf16 rounding, integer wrap and floor division, casts), valid regions and pads, control
 * flow with results, orch task graphs, dynamic dims and the launch errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/ir.h"
#include "pto/mathf.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static pto_ir_program *parse_text(const char *text) {
  pto_ir_program *p = NULL;
  pto_status s = pto_ir_parse_string(text, strlen(text), "t.ptir", &p);
  if (s) {
    print_error("parse failed: %s\n--- text ---\n%s\n", pto_status_message(s), text);
    pto_status_free(s);
    fail();
  }
  return p;
}

static pto_status run_fn(const pto_ir_program *p, const char *fname, pto_ir_interp_arg *args,
                         int n) {
  pto_ir_func *f = pto_ir_program_find_func(p, fname);
  assert_non_null(f);
  return pto_ir_interp_run(p, f, args, n);
}

static pto_ir_interp_arg tensor2(void *data, pto_dtype dt, int64_t rows, int64_t cols) {
  pto_ir_interp_arg a;
  memset(&a, 0, sizeof a);
  a.is_tensor = 1;
  int64_t shape[2] = {rows, cols};
  pto_host_tensor_init(&a.tensor, data, dt, 2, shape);
  return a;
}

static pto_ir_interp_arg scalar_i(pto_dtype dt, int64_t v) {
  pto_ir_interp_arg a;
  memset(&a, 0, sizeof a);
  a.scalar.dtype = dt;
  a.scalar.i = v;
  return a;
}

static pto_ir_interp_arg scalar_f(pto_dtype dt, double v) {
  pto_ir_interp_arg a;
  memset(&a, 0, sizeof a);
  a.scalar.dtype = dt;
  a.scalar.f = v;
  return a;
}

static pto_dtype dt_of(const char *name) {
  int d = pto_dtype_from_name(name, strlen(name));
  assert_true(d >= 0);
  return (pto_dtype)d;
}

/* A kernel @k(%a: tensor[ar,ac] adt, %b: tensor[br,bc] bdt, out %c: tensor[cr,cc] cdt) whose
 * body computes %tc, which is stored into %c at [0, 0]. */
typedef struct kcase {
  const char *adt;
  int ar, ac;
  const char *bdt;
  int br, bc;
  const char *cdt;
  int cr, cc;
} kcase;

static char *kernel_text(const kcase *k, const char *body) {
  size_t cap = strlen(body) + 1024;
  char *t = malloc(cap);
  snprintf(t, cap,
           "program t\n"
           "kernel @k(%%a: tensor[%d,%d] %s, %%b: tensor[%d,%d] %s,\n"
           "          out %%c: tensor[%d,%d] %s) -> (tensor[%d,%d] %s) {\n"
           "%s"
           "  %%c1 = tile.store(%%tc, [0, 0], %%c)\n"
           "  return %%c1\n"
           "}\n",
           k->ar, k->ac, k->adt, k->br, k->bc, k->bdt, k->cr, k->cc, k->cdt, k->cr, k->cc, k->cdt,
           body);
  return t;
}

static pto_status run_k(const kcase *k, const char *body, void *a, void *b, void *c) {
  char *text = kernel_text(k, body);
  pto_ir_program *p = parse_text(text);
  free(text);
  pto_ir_interp_arg args[3] = {tensor2(a, dt_of(k->adt), k->ar, k->ac),
                               tensor2(b, dt_of(k->bdt), k->br, k->bc),
                               tensor2(c, dt_of(k->cdt), k->cr, k->cc)};
  pto_status s = run_fn(p, "k", args, 3);
  pto_ir_program_destroy(p);
  return s;
}

#define LOAD_AB_2x4                                                                                \
  "  %ta = tile.load(%a, [0, 0], [2, 4])\n"                                                        \
  "  %tb = tile.load(%b, [0, 0], [2, 4])\n"

static const kcase k_f32_2x4 = {"f32", 2, 4, "f32", 2, 4, "f32", 2, 4};

static void assert_f32_bits_equal(const float *got, const float *want, int n, const char *what) {
  for (int i = 0; i < n; i++) {
    if (memcmp(&got[i], &want[i], sizeof(float)) != 0) {
      print_error("%s: element %d is %.9g, expected %.9g\n", what, i, got[i], want[i]);
      fail();
    }
  }
}

/* Asserts that s failed with `code` and its message contains both needles; frees s. */
static void check_error(pto_status s, pto_status_code code, const char *n1, const char *n2) {
  if (!s) {
    print_error("expected an error containing '%s' and '%s', got ok\n", n1, n2);
    fail();
  }
  const char *m = pto_status_message(s);
  if (pto_status_code_of(s) != code || !strstr(m, n1) || (n2 && !strstr(m, n2))) {
    print_error("error '%s' (%s) does not match '%s' / '%s'\n", m,
                pto_status_code_name(pto_status_code_of(s)), n1, n2 ? n2 : "");
    pto_status_free(s);
    fail();
  }
  pto_status_free(s);
}

static const float k_a[8] = {1.0f, -2.0f, 3.5f, 4.0f, 0.1f, 7.0f, -8.0f, 9.0f};
static const float k_b[8] = {2.0f, 4.0f, -1.5f, 0.3f, 3.0f, -7.0f, 2.0f, 0.5f};

/* ---- a whole program: examples/add.ptir --------------------------------------------------- */

static void run_add_example(int64_t M) {
  size_t len = 0;
  char *text = tu_read_file(PTO_SOURCE_DIR "/examples/add.ptir", &len);
  assert_non_null(text);
  pto_ir_program *p = parse_text(text);
  free(text);
  float *a = malloc(sizeof(float) * (size_t)(M * 128));
  float *b = malloc(sizeof(float) * (size_t)(M * 128));
  float *c = malloc(sizeof(float) * (size_t)(M * 128));
  for (int64_t i = 0; i < M * 128; i++) {
    a[i] = (float)i * 0.25f - 7.0f;
    b[i] = 1.0f / (float)(i + 1);
    c[i] = NAN;
  }
  pto_ir_interp_arg args[3] = {tensor2(a, PTO_DTYPE_F32, M, 128), tensor2(b, PTO_DTYPE_F32, M, 128),
                               tensor2(c, PTO_DTYPE_F32, M, 128)};
  assert_pto_ok(run_fn(p, "main", args, 3));
  for (int64_t i = 0; i < M * 128; i++) {
    float want = a[i] + b[i];
    if (memcmp(&c[i], &want, 4) != 0) {
      print_error("M=%lld: c[%lld] = %g, expected %g\n", (long long)M, (long long)i, c[i], want);
      fail();
    }
  }
  free(a);
  free(b);
  free(c);
  pto_ir_program_destroy(p);
}

static void test_interp_add_example_partial_last_block(void **state) {
  run_add_example(100); /* blocks of 32, 32, 32 and 4 rows: R differs per call */
  run_add_example(32);
  run_add_example(1);
}

/* ---- orch: task graphs, tensor.create, tensor.read, incore -------------------------------- */

static const char *k_graph =
    "program g\n"
    "kernel @scale(%x: tensor[4,8] f32, out %y: tensor[4,8] f32, %s: f32) -> (tensor[4,8] f32) {\n"
    "  %t = tile.load(%x, [0, 0], [4, 8])\n"
    "  %u = tile.muls(%t, %s)\n"
    "  %y1 = tile.store(%u, [0, 0], %y)\n"
    "  return %y1\n"
    "}\n"
    "kernel @add2(%a: tensor[4,8] f32, %b: tensor[4,8] f32, out %c: tensor[4,8] f32)\n"
    "    -> (tensor[4,8] f32) {\n"
    "  %ta = tile.load(%a, [0, 0], [4, 8])\n"
    "  %tb = tile.load(%b, [0, 0], [4, 8])\n"
    "  %tc = tile.add(%ta, %tb)\n"
    "  %c1 = tile.store(%tc, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n"
    "orch @main(%x: tensor[4,8] f32, out %z: tensor[4,8] f32, %k: f32 = runtime)\n"
    "    -> (tensor[4,8] f32) {\n"
    "  %t1 = tensor.create([4, 8], f32)\n"
    "  %t2 = tensor.create([4, 8], f32)\n"
    "  %a = call @scale(%x, %t1, 2.0)\n"
    "  %b = call @scale(%a, %t2, %k)\n"
    "  for %i in range(0, 3) {\n"
    "    %tmp = tensor.create([4, 8], f32)\n"
    "    call @scale(%b, %tmp, 5.0)\n"
    "  }\n"
    "  %c = call @add2(%a, %b, %z)\n"
    "  return %c\n"
    "}\n";

static void test_interp_task_graph_through_created_tensors(void **state) {
  pto_ir_program *p = parse_text(k_graph);
  float x[32], z[32];
  for (int i = 0; i < 32; i++) {
    x[i] = (float)i * 0.3f - 2.0f;
    z[i] = -1.0f;
  }
  pto_ir_interp_arg args[3] = {tensor2(x, PTO_DTYPE_F32, 4, 8), tensor2(z, PTO_DTYPE_F32, 4, 8),
                               scalar_f(PTO_DTYPE_F32, 3.0)};
  assert_pto_ok(run_fn(p, "main", args, 3));
  float want[32];
  for (int i = 0; i < 32; i++) {
    float a = x[i] * 2.0f;
    float b = a * 3.0f;
    want[i] = a + b;
  }
  assert_f32_bits_equal(z, want, 32, "graph");
  pto_ir_program_destroy(p);
}

static void test_interp_orch_tensor_read_and_dim(void **state) {
  const char *text =
      "program r\n"
      "kernel @scale(%x: tensor[2,4] f32, out %y: tensor[2,4] f32, %s: f32) -> (tensor[2,4] f32) "
      "{\n"
      "  %t = tile.load(%x, [0, 0], [2, 4])\n"
      "  %u = tile.muls(%t, %s)\n"
      "  %y1 = tile.store(%u, [0, 0], %y)\n"
      "  return %y1\n"
      "}\n"
      "orch @main(%x: tensor[2,4] f32, out %y: tensor[2,4] f32) -> (tensor[2,4] f32) {\n"
      "  %s = tensor.read(%x, [1, 2])\n"
      "  %n = tensor.dim(%x, 1)\n"
      "  %f = f32(%n)\n"
      "  %m = %s + %f\n"
      "  call @scale(%x, %y, %m)\n"
      "  return %y\n"
      "}\n";
  pto_ir_program *p = parse_text(text);
  float x[8], y[8], want[8];
  memcpy(x, k_a, sizeof x);
  pto_ir_interp_arg args[2] = {tensor2(x, PTO_DTYPE_F32, 2, 4), tensor2(y, PTO_DTYPE_F32, 2, 4)};
  assert_pto_ok(run_fn(p, "main", args, 2));
  float m = x[6] + 4.0f;
  for (int i = 0; i < 8; i++)
    want[i] = x[i] * m;
  assert_f32_bits_equal(y, want, 8, "tensor.read");
  pto_ir_program_destroy(p);
}

static void test_interp_incore_runs_inline(void **state) {
  const char *text =
      "program ic\n"
      "orch @main(%x: tensor[2,4] f32, out %y: tensor[2,4] f32) -> (tensor[2,4] f32) {\n"
      "  incore \"bump\" {\n"
      "    %t = tile.load(%x, [0, 0], [2, 4])\n"
      "    %u = tile.adds(%t, 1.5)\n"
      "    tile.store(%u, [0, 0], %y)\n"
      "  }\n"
      "  return %y\n"
      "}\n";
  pto_ir_program *p = parse_text(text);
  float y[8], want[8];
  pto_ir_interp_arg args[2] = {tensor2((void *)k_a, PTO_DTYPE_F32, 2, 4),
                               tensor2(y, PTO_DTYPE_F32, 2, 4)};
  assert_pto_ok(run_fn(p, "main", args, 2));
  for (int i = 0; i < 8; i++)
    want[i] = k_a[i] + 1.5f;
  assert_f32_bits_equal(y, want, 8, "incore");
  pto_ir_program_destroy(p);
}

/* ---- elementwise ops ---------------------------------------------------------------------- */

static void test_interp_binary_f32(void **state) {
  static const char *ops[] = {"add", "sub", "mul", "div", "max", "min"};
  for (int o = 0; o < 6; o++) {
    char body[256];
    snprintf(body, sizeof body, "%s  %%tc = tile.%s(%%ta, %%tb)\n", LOAD_AB_2x4, ops[o]);
    float c[8], want[8];
    assert_pto_ok(run_k(&k_f32_2x4, body, (void *)k_a, (void *)k_b, c));
    for (int i = 0; i < 8; i++) {
      float x = k_a[i], y = k_b[i];
      want[i] = o == 0   ? x + y
                : o == 1 ? x - y
                : o == 2 ? x * y
                : o == 3 ? x / y
                : o == 4 ? fmaxf(x, y)
                         : fminf(x, y);
    }
    assert_f32_bits_equal(c, want, 8, ops[o]);
  }
}

static void test_interp_scalar_forms_f32(void **state) {
  static const char *ops[] = {"adds", "subs", "muls", "divs", "maxs", "mins"};
  for (int o = 0; o < 6; o++) {
    char body[256];
    snprintf(body, sizeof body, "%s  %%tc = tile.%s(%%ta, 2.5)\n", LOAD_AB_2x4, ops[o]);
    float c[8], want[8];
    assert_pto_ok(run_k(&k_f32_2x4, body, (void *)k_a, (void *)k_b, c));
    for (int i = 0; i < 8; i++) {
      float x = k_a[i], y = 2.5f;
      want[i] = o == 0   ? x + y
                : o == 1 ? x - y
                : o == 2 ? x * y
                : o == 3 ? x / y
                : o == 4 ? fmaxf(x, y)
                         : fminf(x, y);
    }
    assert_f32_bits_equal(c, want, 8, ops[o]);
  }
}

static void test_interp_unary_f32(void **state) {
  static const char *ops[] = {"exp", "log", "sqrt", "rsqrt", "recip", "relu", "neg", "abs"};
  for (int o = 0; o < 8; o++) {
    char body[256];
    snprintf(body, sizeof body, "%s  %%tc = tile.%s(%%ta)\n", LOAD_AB_2x4, ops[o]);
    float c[8], want[8];
    assert_pto_ok(run_k(&k_f32_2x4, body, (void *)k_a, (void *)k_b, c));
    for (int i = 0; i < 8; i++) {
      float x = k_a[i];
      switch (o) {
      case 0: want[i] = pto_expf(x); break; /* pto/mathf.h, within 1 ulp of expf */
      case 1: want[i] = pto_logf(x); break;
      case 2: want[i] = sqrtf(x); break;
      case 3: want[i] = 1.0f / sqrtf(x); break;
      case 4: want[i] = 1.0f / x; break;
      case 5: want[i] = x > 0 ? x : 0.0f; break;
      case 6: want[i] = -x; break;
      default: want[i] = fabsf(x); break;
      }
    }
    assert_f32_bits_equal(c, want, 8, ops[o]);
  }
}

static void test_interp_f16_bf16_round_to_nearest_even(void **state) {
  /* 1 + 2^-11 is a tie between 1.0 and its successor: even (1.0) wins; 1 + 3*2^-11 rounds up
   * to the even 1 + 2^-9. 1.5 * 1.5 = 2.25 is exact. */
  uint16_t a[8] = {0x3c00, 0x3c00, 0x3e00, 0x3c01, 0x3c00, 0x3c00, 0x3e00, 0x3c01};
  uint16_t b[8] = {0x1000, 0x1600, 0x3e00, 0x3c01, 0x1000, 0x1600, 0x3e00, 0x3c01};
  uint16_t c[8];
  kcase k = {"f16", 2, 4, "f16", 2, 4, "f16", 2, 4};
  assert_pto_ok(run_k(&k, LOAD_AB_2x4 "  %tc = tile.add(%ta, %tb)\n", a, b, c));
  assert_int_equal(c[0], 0x3c00);
  assert_int_equal(c[1], 0x3c02);
  assert_int_equal(c[2], 0x4200); /* 1.5 + 1.5 = 3 */
  assert_int_equal(c[3], 0x4001); /* (1+2^-10)*2 exactly */
  assert_pto_ok(run_k(&k, LOAD_AB_2x4 "  %tc = tile.mul(%ta, %tb)\n", a, b, c));
  assert_int_equal(c[2], 0x4080); /* 2.25 */
  assert_int_equal(c[3], 0x3c02); /* (1+2^-10)^2 = 1 + 2^-9 + 2^-20 -> 1 + 2^-9 */

  uint16_t ba[4] = {0x3f80, 0x3f80, 0x3f80, 0x4000};
  uint16_t bb[4] = {0x3b80, 0x3c40, 0x3f80, 0x3b80};
  uint16_t bc[4];
  kcase kb = {"bf16", 1, 4, "bf16", 1, 4, "bf16", 1, 4};
  assert_pto_ok(run_k(&kb,
                      "  %ta = tile.load(%a, [0, 0], [1, 4])\n"
                      "  %tb = tile.load(%b, [0, 0], [1, 4])\n"
                      "  %tc = tile.add(%ta, %tb)\n",
                      ba, bb, bc));
  assert_int_equal(bc[0], 0x3f80); /* 1 + 2^-8: tie, even */
  assert_int_equal(bc[1], 0x3f82); /* 1 + 3*2^-8: tie, up to even */
  assert_int_equal(bc[2], 0x4000); /* 2 */
  assert_int_equal(bc[3], 0x4000); /* 2 + 2^-8 rounds back to 2 */
}

static void test_interp_integer_wrap_and_floor_division(void **state) {
  int32_t a[8] = {-7, 7, -7, 7, 0, -1, INT32_MIN, 5};
  int32_t b[8] = {2, 2, -2, -2, 3, 2, -1, 5};
  int32_t c[8];
  kcase k = {"i32", 2, 4, "i32", 2, 4, "i32", 2, 4};
  assert_pto_ok(run_k(&k, LOAD_AB_2x4 "  %tc = tile.div(%ta, %tb)\n", a, b, c));
  int32_t want_div[8] = {-4, 3, 3, -4, 0, -1, INT32_MIN, 1};
  assert_memory_equal(c, want_div, sizeof c);
  assert_pto_ok(run_k(&k, LOAD_AB_2x4 "  %tc = tile.divs(%ta, -2)\n", a, b, c));
  int32_t want_divs[8] = {3, -4, 3, -4, 0, 0, 1073741824, -3};
  assert_memory_equal(c, want_divs, sizeof c);
  assert_pto_ok(run_k(&k, LOAD_AB_2x4 "  %tc = tile.add(%ta, %tb)\n", a, b, c));
  assert_int_equal(c[6], INT32_MAX); /* INT32_MIN + -1 wraps */

  int8_t a8[4] = {127, -128, 100, -100}, b8[4] = {1, -1, 100, 100}, c8[4];
  kcase k8 = {"i8", 1, 4, "i8", 1, 4, "i8", 1, 4};
  const char *load14 = "  %ta = tile.load(%a, [0, 0], [1, 4])\n"
                       "  %tb = tile.load(%b, [0, 0], [1, 4])\n";
  char body[256];
  snprintf(body, sizeof body, "%s  %%tc = tile.add(%%ta, %%tb)\n", load14);
  assert_pto_ok(run_k(&k8, body, a8, b8, c8));
  int8_t want8[4] = {-128, 127, -56, 0};
  assert_memory_equal(c8, want8, 4);
  snprintf(body, sizeof body, "%s  %%tc = tile.abs(%%ta)\n", load14);
  assert_pto_ok(run_k(&k8, body, a8, b8, c8));
  int8_t want_abs[4] = {127, -128, 100, 100};
  assert_memory_equal(c8, want_abs, 4);

  uint8_t au[4] = {250, 3, 0, 255}, bu[4] = {10, 5, 1, 255}, cu[4];
  kcase ku = {"u8", 1, 4, "u8", 1, 4, "u8", 1, 4};
  snprintf(body, sizeof body, "%s  %%tc = tile.sub(%%ta, %%tb)\n", load14);
  assert_pto_ok(run_k(&ku, body, au, bu, cu));
  uint8_t wantu[4] = {240, 254, 255, 0};
  assert_memory_equal(cu, wantu, 4);
}

static void test_interp_integer_division_by_zero_is_a_launch_error(void **state) {
  int32_t a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {1, 1, 1, 1, 1, 0, 1, 1}, c[8];
  kcase k = {"i32", 2, 4, "i32", 2, 4, "i32", 2, 4};
  pto_status s = run_k(&k, LOAD_AB_2x4 "  %tc = tile.div(%ta, %tb)\n", a, b, c);
  check_error(s, PTO_STATUS_LAUNCH, "t.ptir:6:", "tile.div: integer division by zero at [1,1]");
  /* Float division by zero is IEEE, not an error. */
  float fa[8] = {1, 1, 1, 1, 1, 1, 1, -1}, fb[8] = {0}, fc[8];
  assert_pto_ok(run_k(&k_f32_2x4, LOAD_AB_2x4 "  %tc = tile.div(%ta, %tb)\n", fa, fb, fc));
  assert_true(isinf(fc[0]) && fc[0] > 0 && isinf(fc[7]) && fc[7] < 0);
}

/* ---- scalar expressions ------------------------------------------------------------------ */

static const char *k_scalar_div =
    "program s\n"
    "kernel @k(out %c: tensor[1,4] i32, %x: i32, %y: i32) -> (tensor[1,4] i32) {\n"
    "  %q = %x / %y\n"
    "  %m = mod(%x, %y)\n"
    "  %t = tile.full([1, 1], i32, %q)\n"
    "  %c1 = tile.store(%t, [0, 0], %c)\n"
    "  %t2 = tile.full([1, 1], i32, %m)\n"
    "  %c2 = tile.store(%t2, [0, 1], %c1)\n"
    "  %mx = max(%x, %y) - min(%x, %y)\n"
    "  %t3 = tile.full([1, 1], i32, %mx)\n"
    "  %c3 = tile.store(%t3, [0, 2], %c2)\n"
    "  %b = %x < %y && !(%x == 0)\n"
    "  %t4 = tile.full([1, 1], i32, i32(%b))\n"
    "  %c4 = tile.store(%t4, [0, 3], %c3)\n"
    "  return %c4\n"
    "}\n";

static void check_scalar_div(pto_ir_program *p, int32_t x, int32_t y, int32_t q, int32_t m) {
  int32_t c[4] = {99, 99, 99, 99};
  pto_ir_interp_arg args[3] = {tensor2(c, PTO_DTYPE_I32, 1, 4), scalar_i(PTO_DTYPE_I32, x),
                               scalar_i(PTO_DTYPE_I32, y)};
  assert_pto_ok(run_fn(p, "k", args, 3));
  assert_int_equal(c[0], q);
  assert_int_equal(c[1], m);
  assert_int_equal(c[2], (x > y ? x : y) - (x < y ? x : y));
  assert_int_equal(c[3], x < y && x != 0);
}

static void test_interp_scalar_floor_division_and_mod(void **state) {
  pto_ir_program *p = parse_text(k_scalar_div);
  check_scalar_div(p, -7, 2, -4, 1);
  check_scalar_div(p, 7, -2, -4, -1);
  check_scalar_div(p, -7, -2, 3, -1);
  check_scalar_div(p, 7, 2, 3, 1);
  check_scalar_div(p, -8, 2, -4, 0);
  check_scalar_div(p, 0, 5, 0, 0);
  int32_t c[4];
  pto_ir_interp_arg args[3] = {tensor2(c, PTO_DTYPE_I32, 1, 4), scalar_i(PTO_DTYPE_I32, 5),
                               scalar_i(PTO_DTYPE_I32, 0)};
  check_error(run_fn(p, "k", args, 3), PTO_STATUS_LAUNCH,
              "t.ptir:3:", "integer division by zero in '/'");
  pto_ir_program_destroy(p);
}

/* ---- casts -------------------------------------------------------------------------------- */

static void test_interp_cast(void **state) {
  float fa[8] = {-2.7f, 2.7f, 1e10f, -1e10f, NAN, 0.5f, -0.5f, 3.0f};
  int32_t ic[8];
  kcase k1 = {"f32", 2, 4, "f32", 2, 4, "i32", 2, 4};
  assert_pto_ok(run_k(&k1, LOAD_AB_2x4 "  %tc = tile.cast(%ta, i32)\n", fa, fa, ic));
  int32_t want_i[8] = {-2, 2, INT32_MAX, INT32_MIN, 0, 0, 0, 3};
  assert_memory_equal(ic, want_i, sizeof ic);

  uint8_t uc[8];
  float fu[8] = {-5.0f, 300.0f, 2.9f, NAN, 255.5f, 0.0f, 1.0f, -0.9f};
  kcase k2 = {"f32", 2, 4, "f32", 2, 4, "u8", 2, 4};
  assert_pto_ok(run_k(&k2, LOAD_AB_2x4 "  %tc = tile.cast(%ta, u8)\n", fu, fu, uc));
  uint8_t want_u[8] = {0, 255, 2, 0, 255, 0, 1, 0};
  assert_memory_equal(uc, want_u, sizeof uc);

  int32_t ia[8] = {2049, 2051, -3, 65520, 100000, 0, 1, 2};
  uint16_t hc[8];
  kcase k3 = {"i32", 2, 4, "i32", 2, 4, "f16", 2, 4};
  assert_pto_ok(run_k(&k3, LOAD_AB_2x4 "  %tc = tile.cast(%ta, f16)\n", ia, ia, hc));
  uint16_t want_h[8] = {0x6800, 0x6802, 0xc200, 0x7c00, 0x7c00, 0x0000, 0x3c00, 0x4000};
  assert_memory_equal(hc, want_h, sizeof hc);

  float fb[8] = {1.00390625f, 1.01171875f, -0.0f, 65504.0f, 1e-8f, 3.0f, INFINITY, -1.0f};
  uint16_t bc[8];
  kcase k4 = {"f32", 2, 4, "f32", 2, 4, "bf16", 2, 4};
  assert_pto_ok(run_k(&k4, LOAD_AB_2x4 "  %tc = tile.cast(%ta, bf16)\n", fb, fb, bc));
  for (int i = 0; i < 8; i++)
    assert_int_equal(bc[i], pto_f32_to_bf16(fb[i]));

  /* i8 -> u8 wraps; f16 -> f32 is exact. */
  int8_t sa[4] = {-1, -128, 127, 0};
  uint8_t sc[4];
  kcase k5 = {"i8", 1, 4, "i8", 1, 4, "u8", 1, 4};
  assert_pto_ok(run_k(&k5,
                      "  %ta = tile.load(%a, [0, 0], [1, 4])\n"
                      "  %tc = tile.cast(%ta, u8)\n",
                      sa, sa, sc));
  uint8_t want_sc[4] = {255, 128, 127, 0};
  assert_memory_equal(sc, want_sc, 4);
}

/* ---- reductions and expansions ------------------------------------------------------------ */

static void test_interp_row_and_col_reductions(void **state) {
  float c2[2], c4[4];
  kcase kr = {"f32", 2, 4, "f32", 2, 4, "f32", 2, 1};
  kcase kc = {"f32", 2, 4, "f32", 2, 4, "f32", 1, 4};
  assert_pto_ok(
      run_k(&kr, LOAD_AB_2x4 "  %tc = tile.row_sum(%ta)\n", (void *)k_a, (void *)k_b, c2));
  float want2[2] = {((0.0f + k_a[0]) + k_a[1] + k_a[2]) + k_a[3],
                    ((0.0f + k_a[4]) + k_a[5] + k_a[6]) + k_a[7]};
  assert_f32_bits_equal(c2, want2, 2, "row_sum");
  assert_pto_ok(
      run_k(&kr, LOAD_AB_2x4 "  %tc = tile.row_max(%ta)\n", (void *)k_a, (void *)k_b, c2));
  assert_true(c2[0] == 4.0f && c2[1] == 9.0f);
  assert_pto_ok(
      run_k(&kr, LOAD_AB_2x4 "  %tc = tile.row_min(%ta)\n", (void *)k_a, (void *)k_b, c2));
  assert_true(c2[0] == -2.0f && c2[1] == -8.0f);
  assert_pto_ok(
      run_k(&kc, LOAD_AB_2x4 "  %tc = tile.col_sum(%ta)\n", (void *)k_a, (void *)k_b, c4));
  float want4[4];
  for (int j = 0; j < 4; j++)
    want4[j] = (0.0f + k_a[j]) + k_a[4 + j];
  assert_f32_bits_equal(c4, want4, 4, "col_sum");
  assert_pto_ok(
      run_k(&kc, LOAD_AB_2x4 "  %tc = tile.col_max(%ta)\n", (void *)k_a, (void *)k_b, c4));
  assert_true(c4[0] == 1.0f && c4[1] == 7.0f && c4[2] == 3.5f && c4[3] == 9.0f);
  assert_pto_ok(
      run_k(&kc, LOAD_AB_2x4 "  %tc = tile.col_min(%ta)\n", (void *)k_a, (void *)k_b, c4));
  assert_true(c4[0] == 0.1f && c4[1] == -2.0f && c4[2] == -8.0f && c4[3] == 4.0f);

  /* f16 sums accumulate in f32: 2048 + 1 + 1 + 1 = 2051 -> f16 2052. Accumulating in f16 would
   * give 2048 (each +1 is a tie that rounds back to even). */
  uint16_t h[4] = {0x6800, 0x3c00, 0x3c00, 0x3c00}, hc[1];
  kcase kh = {"f16", 1, 4, "f16", 1, 4, "f16", 1, 1};
  assert_pto_ok(run_k(&kh,
                      "  %ta = tile.load(%a, [0, 0], [1, 4])\n"
                      "  %tc = tile.row_sum(%ta)\n",
                      h, h, hc));
  assert_int_equal(hc[0], 0x6802);

  /* Integer sums wrap in the dtype. */
  int8_t i8[4] = {100, 100, 100, -1}, i8c[1];
  kcase ki = {"i8", 1, 4, "i8", 1, 4, "i8", 1, 1};
  assert_pto_ok(run_k(&ki,
                      "  %ta = tile.load(%a, [0, 0], [1, 4])\n"
                      "  %tc = tile.row_sum(%ta)\n",
                      i8, i8, i8c));
  assert_int_equal(i8c[0], (int8_t)43); /* 299 mod 256 */
}

static void test_interp_row_and_col_expansions(void **state) {
  float v2[2] = {10.0f, -0.5f}, v4[4] = {1.0f, 2.0f, 4.0f, 0.25f}, c[8], want[8];
  kcase kr = {"f32", 2, 4, "f32", 2, 1, "f32", 2, 4};
  static const char *ops[] = {"add", "sub", "mul", "div"};
  for (int o = 0; o < 4; o++) {
    char body[256];
    snprintf(body, sizeof body,
             "  %%ta = tile.load(%%a, [0, 0], [2, 4])\n"
             "  %%tb = tile.load(%%b, [0, 0], [2, 1])\n"
             "  %%tc = tile.row_expand_%s(%%ta, %%tb)\n",
             ops[o]);
    assert_pto_ok(run_k(&kr, body, (void *)k_a, v2, c));
    for (int i = 0; i < 8; i++) {
      float x = k_a[i], y = v2[i / 4];
      want[i] = o == 0 ? x + y : o == 1 ? x - y : o == 2 ? x * y : x / y;
    }
    assert_f32_bits_equal(c, want, 8, ops[o]);
  }
  kcase kc = {"f32", 2, 4, "f32", 1, 4, "f32", 2, 4};
  for (int o = 0; o < 4; o++) {
    char body[256];
    snprintf(body, sizeof body,
             "  %%ta = tile.load(%%a, [0, 0], [2, 4])\n"
             "  %%tb = tile.load(%%b, [0, 0], [1, 4])\n"
             "  %%tc = tile.col_expand_%s(%%ta, %%tb)\n",
             ops[o]);
    assert_pto_ok(run_k(&kc, body, (void *)k_a, v4, c));
    for (int i = 0; i < 8; i++) {
      float x = k_a[i], y = v4[i % 4];
      want[i] = o == 0 ? x + y : o == 1 ? x - y : o == 2 ? x * y : x / y;
    }
    assert_f32_bits_equal(c, want, 8, ops[o]);
  }
  /* An integer expansion by zero is a launch error too. */
  int32_t ia[8] = {1, 2, 3, 4, 5, 6, 7, 8}, iv[2] = {1, 0}, ic[8];
  kcase ki = {"i32", 2, 4, "i32", 2, 1, "i32", 2, 4};
  pto_status s = run_k(&ki,
                       "  %ta = tile.load(%a, [0, 0], [2, 4])\n"
                       "  %tb = tile.load(%b, [0, 0], [2, 1])\n"
                       "  %tc = tile.row_expand_div(%ta, %tb)\n",
                       ia, iv, ic);
  check_error(s, PTO_STATUS_LAUNCH,
              "t.ptir:6:", "tile.row_expand_div: integer division by zero at [1,0]");
}

/* ---- matmul --------------------------------------------------------------------------------- */

#define MATMUL_BODY                                                                                \
  "  %l = tile.load(%a, [0, 0], [2, 3], space=mat)\n"                                              \
  "  %r = tile.load(%b, [0, 0], [3, 2], space=mat)\n"                                              \
  "  %lm = tile.move(%l, space=left)\n"                                                            \
  "  %rm = tile.move(%r, space=right)\n"                                                           \
  "  %tc = tile.matmul(%lm, %rm)\n"

static void test_interp_matmul(void **state) {
  float a[6] = {1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.1f};
  float b[6] = {0.3f, -2.0f, 1.0f, 4.0f, 7.0f, 0.25f};
  float c[4], want[4];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      float s = 0.0f;
      for (int k = 0; k < 3; k++) {
        float prod = a[i * 3 + k] * b[k * 2 + j];
        s = s + prod;
      }
      want[i * 2 + j] = s;
    }
  kcase kf = {"f32", 2, 3, "f32", 3, 2, "f32", 2, 2};
  assert_pto_ok(run_k(&kf, MATMUL_BODY, a, b, c));
  assert_f32_bits_equal(c, want, 4, "matmul f32");

  /* matmul_acc: acc + l x r, computed onto the accumulator in k order. */
  float want2[4];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      float s = want[i * 2 + j];
      for (int k = 0; k < 3; k++) {
        float prod = a[i * 3 + k] * b[k * 2 + j];
        s = s + prod;
      }
      want2[i * 2 + j] = s;
    }
  assert_pto_ok(run_k(&kf,
                      "  %l = tile.load(%a, [0, 0], [2, 3], space=mat)\n"
                      "  %r = tile.load(%b, [0, 0], [3, 2], space=mat)\n"
                      "  %lm = tile.move(%l, space=left)\n"
                      "  %rm = tile.move(%r, space=right)\n"
                      "  %m = tile.matmul(%lm, %rm)\n"
                      "  %tc = tile.matmul_acc(%m, %lm, %rm)\n",
                      a, b, c));
  assert_f32_bits_equal(c, want2, 4, "matmul_acc");

  /* f16 inputs accumulate in f32; an acc tile stores to an f16 tensor with one rounding. */
  uint16_t ha[6], hb[6];
  for (int i = 0; i < 6; i++) {
    ha[i] = pto_f32_to_f16(a[i]);
    hb[i] = pto_f32_to_f16(b[i]);
  }
  float wf[4];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      float s = 0.0f;
      for (int k = 0; k < 3; k++) {
        float prod = pto_f16_to_f32(ha[i * 3 + k]) * pto_f16_to_f32(hb[k * 2 + j]);
        s = s + prod;
      }
      wf[i * 2 + j] = s;
    }
  kcase kh = {"f16", 2, 3, "f16", 3, 2, "f32", 2, 2};
  assert_pto_ok(run_k(&kh, MATMUL_BODY, ha, hb, c));
  assert_f32_bits_equal(c, wf, 4, "matmul f16->f32");
  uint16_t hc[4];
  kcase kh16 = {"f16", 2, 3, "f16", 3, 2, "f16", 2, 2};
  assert_pto_ok(run_k(&kh16, MATMUL_BODY, ha, hb, hc));
  for (int i = 0; i < 4; i++)
    assert_int_equal(hc[i], pto_f32_to_f16(wf[i]));

  /* Integer inputs accumulate in i32. */
  int8_t ia[6] = {127, 127, 127, -128, -128, -128}, ib[6] = {127, 1, 127, 1, 127, 1};
  int32_t ic[4];
  kcase ki = {"i8", 2, 3, "i8", 3, 2, "i32", 2, 2};
  assert_pto_ok(run_k(&ki, MATMUL_BODY, ia, ib, ic));
  int32_t want_i[4] = {3 * 127 * 127, 3 * 127, -3 * 128 * 127, -3 * 128};
  assert_memory_equal(ic, want_i, sizeof ic);
}

/* ---- valid regions, pads, edges ----------------------------------------------------------- */

/* A [2,8] tile loaded from a [2,C] tensor with C = 4 at run time: the static checks cannot see
 * the edge, the load clips there and columns 4..7 hold the pad (and, the tile's valid region being
 * the whole tile, are stored). */
static void run_pad_case(const char *dt, const char *pad, void *a, void *c) {
  char text[1024];
  snprintf(text, sizeof text,
           "program t\n"
           "dynamic C\n"
           "kernel @k(%%a: tensor[2,C] %s, out %%c: tensor[2,8] %s) -> (tensor[2,8] %s) {\n"
           "  %%t = tile.load(%%a, [0, 0], [2, 8]%s%s)\n"
           "  %%c1 = tile.store(%%t, [0, 0], %%c)\n"
           "  return %%c1\n"
           "}\n",
           dt, dt, dt, pad ? ", pad=" : "", pad ? pad : "");
  pto_ir_program *p = parse_text(text);
  pto_ir_interp_arg args[2] = {tensor2(a, dt_of(dt), 2, 4), tensor2(c, dt_of(dt), 2, 8)};
  assert_pto_ok(run_fn(p, "k", args, 2));
  pto_ir_program_destroy(p);
}

static void test_interp_pad_min_max_at_the_edge(void **state) {
  float c[16];
  run_pad_case("f32", "min", (void *)k_a, c);
  for (int r = 0; r < 2; r++)
    for (int j = 0; j < 8; j++) {
      if (j < 4)
        assert_true(c[r * 8 + j] == k_a[r * 4 + j]);
      else
        assert_true(isinf(c[r * 8 + j]) && c[r * 8 + j] < 0);
    }
  run_pad_case("f32", "max", (void *)k_a, c);
  assert_true(isinf(c[7]) && c[7] > 0);
  assert_true(c[3] == k_a[3]);
  run_pad_case("f32", NULL, (void *)k_a, c);
  assert_true(c[7] == 0.0f && c[15] == 0.0f && !signbit(c[7]));
  run_pad_case("f32", "zero", (void *)k_a, c);
  assert_true(c[6] == 0.0f);

  int32_t ia[8] = {1, 2, 3, 4, 5, 6, 7, 8}, ic[16];
  run_pad_case("i32", "min", ia, ic);
  assert_int_equal(ic[3], 4);
  assert_int_equal(ic[4], INT32_MIN);
  run_pad_case("i32", "max", ia, ic);
  assert_int_equal(ic[15], INT32_MAX);
  assert_int_equal(ic[11], 8);

  uint8_t ua[8] = {1, 2, 3, 4, 5, 6, 7, 8}, uc[16];
  run_pad_case("u8", "max", ua, uc);
  assert_int_equal(uc[5], 255);
  run_pad_case("u8", "min", ua, uc);
  assert_int_equal(uc[5], 0);

  int64_t la[8] = {1, 2, 3, 4, 5, 6, 7, 8}, lc[16];
  run_pad_case("i64", "min", la, lc);
  assert_true(lc[4] == INT64_MIN);

  uint16_t ha[8] = {0x3c00, 0x3c00, 0x3c00, 0x3c00, 0x3c00, 0x3c00, 0x3c00, 0x3c00}, hc[16];
  run_pad_case("f16", "min", ha, hc);
  assert_int_equal(hc[4], 0xfc00); /* -inf */
  run_pad_case("bf16", "max", ha, hc);
  assert_int_equal(hc[4], 0x7f80); /* +inf */
}

static void test_interp_pad_feeds_reductions(void **state) {
  /* valid=[2,3] with pad=min: a row max sees only the valid columns; rows 2,3 are all pad. */
  float c[4];
  kcase k = {"f32", 2, 4, "f32", 2, 4, "f32", 4, 1};
  assert_pto_ok(run_k(&k,
                      "  %t = tile.load(%a, [0, 0], [4, 4], valid=[2, 3], pad=min)\n"
                      "  %tc = tile.row_max(%t)\n",
                      (void *)k_a, (void *)k_b, c));
  /* Column 3 (4 and 9) is outside valid= and holds -inf: the maxima come from columns 0..2. */
  assert_true(c[0] == 3.5f);
  assert_true(c[1] == 7.0f);
}

static void test_interp_dynamic_valid_and_store_clipping(void **state) {
  const char *text = "program v\n"
                     "kernel @k(%a: tensor[4,4] f32, out %c: tensor[4,4] f32, %n: index,\n"
                     "          %r: index, %q: index) -> (tensor[4,4] f32) {\n"
                     "  %t = tile.load(%a, [0, 0], [4, 4], valid=[%n, 4])\n"
                     "  %c1 = tile.store(%t, [%r, %q], %c)\n"
                     "  return %c1\n"
                     "}\n";
  pto_ir_program *p = parse_text(text);
  float a[16], c[16];
  for (int i = 0; i < 16; i++)
    a[i] = (float)(i + 1);
  struct {
    int64_t n, r, q;
  } cases[] = {{2, 0, 0}, {7, 0, 0}, {4, 0, 0}, {0, 0, 0}, {4, 2, 2}, {3, 1, 3}}; /* 7: clamped */
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    for (int i = 0; i < 16; i++)
      c[i] = -1.0f;
    pto_ir_interp_arg args[5] = {tensor2(a, PTO_DTYPE_F32, 4, 4), tensor2(c, PTO_DTYPE_F32, 4, 4),
                                 scalar_i(PTO_DTYPE_INDEX, cases[ci].n),
                                 scalar_i(PTO_DTYPE_INDEX, cases[ci].r),
                                 scalar_i(PTO_DTYPE_INDEX, cases[ci].q)};
    assert_pto_ok(run_fn(p, "k", args, 5));
    int64_t n = cases[ci].n < 4 ? cases[ci].n : 4;
    for (int r = 0; r < 4; r++)
      for (int j = 0; j < 4; j++) {
        /* c[r][j] was written from tile [r - R, j - Q] when that is inside the valid rows. */
        int64_t tr = r - cases[ci].r, tc = j - cases[ci].q;
        float want = (tr >= 0 && tc >= 0 && tr < n && tc < 4) ? a[tr * 4 + tc] : -1.0f;
        if (c[r * 4 + j] != want) {
          print_error("case %zu: c[%d][%d] = %g, expected %g\n", ci, r, j, c[r * 4 + j], want);
          fail();
        }
      }
  }
  /* A negative valid extent is a launch error naming the op, its line and the region; nothing
   * is written. (One past the tile's shape is clamped: the case n = 7 above.) */
  const int64_t bad[][2] = {{-1, 2}, {-3, 1}, {INT64_MIN, 0}};
  const char *const want[] = {
      "tile.load in @k: valid region [-1, 4] has a negative extent: value -1 at [0,0] is below 0",
      "valid region [-3, 4] has a negative extent: value -3 at [0,0]",
      "has a negative extent: value -9223372036854775808 at [0,0]"};
  for (int k = 0; k < 3; k++) {
    for (int i = 0; i < 16; i++)
      c[i] = -1.0f;
    pto_ir_interp_arg args[5] = {tensor2(a, PTO_DTYPE_F32, 4, 4), tensor2(c, PTO_DTYPE_F32, 4, 4),
                                 scalar_i(PTO_DTYPE_INDEX, bad[k][0]),
                                 scalar_i(PTO_DTYPE_INDEX, bad[k][1]),
                                 scalar_i(PTO_DTYPE_INDEX, 0)};
    check_error(run_fn(p, "k", args, 5), PTO_STATUS_LAUNCH, ":4:", want[k]);
    for (int i = 0; i < 16; i++)
      assert_true(c[i] == -1.0f);
  }
  pto_ir_program_destroy(p);
}

static void test_interp_leading_dims_and_rank1_windows(void **state) {
  /* Rank 3: the leading offset picks the slab, the tile covers the last two dims. Rank 1: one
   * row, the offset addresses columns. */
  const char *text =
      "program w\n"
      "kernel @k(%a: tensor[2,3,4] f32, %v: tensor[8] f32, out %c: tensor[2,3,4] f32,\n"
      "          out %w: tensor[8] f32) -> (tensor[2,3,4] f32, tensor[8] f32) {\n"
      "  %t = tile.load(%a, [1, 1, 0], [2, 4])\n"
      "  %c1 = tile.store(%t, [0, 0, 0], %c)\n"
      "  %r = tile.load(%v, [4], [1, 4])\n"
      "  %w1 = tile.store(%r, [1], %w)\n"
      "  return %c1, %w1\n"
      "}\n";
  pto_ir_program *p = parse_text(text);
  float a[24], v[8], c[24], w[8];
  for (int i = 0; i < 24; i++) {
    a[i] = (float)i;
    c[i] = -1.0f;
  }
  for (int i = 0; i < 8; i++) {
    v[i] = (float)(100 + i);
    w[i] = -1.0f;
  }
  pto_ir_interp_arg args[4];
  int64_t s3[3] = {2, 3, 4}, s1[1] = {8};
  memset(args, 0, sizeof args);
  for (int i = 0; i < 4; i++)
    args[i].is_tensor = 1;
  pto_host_tensor_init(&args[0].tensor, a, PTO_DTYPE_F32, 3, s3);
  pto_host_tensor_init(&args[1].tensor, v, PTO_DTYPE_F32, 1, s1);
  pto_host_tensor_init(&args[2].tensor, c, PTO_DTYPE_F32, 3, s3);
  pto_host_tensor_init(&args[3].tensor, w, PTO_DTYPE_F32, 1, s1);
  assert_pto_ok(run_fn(p, "k", args, 4));
  for (int i = 0; i < 24; i++) {
    /* c[0][r][j] = a[1][1 + r][j] for r < 2; everything else untouched. */
    int slab = i / 12, r = (i / 4) % 3, j = i % 4;
    float want = (slab == 0 && r < 2) ? a[12 + (1 + r) * 4 + j] : -1.0f;
    assert_true(c[i] == want);
  }
  float want_w[8] = {-1, 104, 105, 106, 107, -1, -1, -1};
  assert_f32_bits_equal(w, want_w, 8, "rank-1 window");
  pto_ir_program_destroy(p);
}

static void test_interp_create_full_move(void **state) {
  float c[8];
  for (int i = 0; i < 8; i++)
    c[i] = -1.0f;
  assert_pto_ok(
      run_k(&k_f32_2x4, "  %tc = tile.create([2, 4], f32)\n", (void *)k_a, (void *)k_b, c));
  for (int i = 0; i < 8; i++)
    assert_true(c[i] == 0.0f);
  assert_pto_ok(run_k(&k_f32_2x4,
                      "  %f = tile.full([2, 4], f32, -2.5, space=mat)\n"
                      "  %tc = tile.move(%f, space=vec)\n",
                      (void *)k_a, (void *)k_b, c));
  for (int i = 0; i < 8; i++)
    assert_true(c[i] == -2.5f);
  /* The fill value converts to the tile's dtype. */
  int8_t a8[4] = {0}, c8[4];
  kcase k8 = {"i8", 1, 4, "i8", 1, 4, "i8", 1, 4};
  assert_pto_ok(run_k(&k8, "  %tc = tile.full([1, 4], i8, -100)\n", a8, a8, c8));
  for (int i = 0; i < 4; i++)
    assert_int_equal(c8[i], -100);
}

static void test_interp_f64_computes_in_double(void **state) {
  double a[2] = {0.1, 1e300}, b[2] = {0.2, 1e300}, c[2];
  kcase k = {"f64", 1, 2, "f64", 1, 2, "f64", 1, 2};
  assert_pto_ok(run_k(&k,
                      "  %ta = tile.load(%a, [0, 0], [1, 2])\n"
                      "  %tb = tile.load(%b, [0, 0], [1, 2])\n"
                      "  %tc = tile.add(%ta, %tb)\n",
                      a, b, c));
  assert_true(c[0] == 0.1 + 0.2); /* 0.30000000000000004, not the float sum */
  assert_true(c[1] == 2e300);
}

static void test_interp_f16_scalar_parameter_is_rounded(void **state) {
  /* An f16 scalar holds an f16 value, as its ABI slot would: 0.1 arrives as 0.0999755859375. */
  const char *text = "program s\n"
                     "kernel @k(%a: tensor[1,2] f16, out %c: tensor[1,2] f16, %s: f16)\n"
                     "    -> (tensor[1,2] f16) {\n"
                     "  %t = tile.load(%a, [0, 0], [1, 2])\n"
                     "  %u = tile.muls(%t, %s)\n"
                     "  %v = tile.adds(%u, 0.1)\n"
                     "  %c1 = tile.store(%v, [0, 0], %c)\n"
                     "  return %c1\n"
                     "}\n";
  pto_ir_program *p = parse_text(text);
  uint16_t a[2] = {0x3c00, 0x4000}, c[2];
  pto_ir_interp_arg args[3] = {tensor2(a, PTO_DTYPE_F16, 1, 2), tensor2(c, PTO_DTYPE_F16, 1, 2),
                               scalar_f(PTO_DTYPE_F16, 0.1)};
  assert_pto_ok(run_fn(p, "k", args, 3));
  float s = pto_f16_to_f32(pto_f32_to_f16(0.1f));
  for (int i = 0; i < 2; i++) {
    float u = pto_f16_to_f32(pto_f32_to_f16(pto_f16_to_f32(a[i]) * s));
    assert_int_equal(c[i], pto_f32_to_f16(u + s));
  }
  pto_ir_program_destroy(p);
}

static void test_interp_dist_ops_need_a_rank(void **state) {
  const char *text = "program d\n"
                     "kernel @k(%w: dtensor[4] f32) {\n"
                     "  %ctx = dist.comm_ctx(%w)\n"
                     "  return\n"
                     "}\n";
  pto_ir_program *p = parse_text(text);
  float w[4] = {0};
  pto_ir_interp_arg args[1];
  int64_t s1[1] = {4};
  memset(args, 0, sizeof args);
  args[0].is_tensor = 1;
  pto_host_tensor_init(&args[0].tensor, w, PTO_DTYPE_F32, 1, s1);
  check_error(run_fn(p, "k", args, 1), PTO_STATUS_FAILED_PRECONDITION, "t.ptir:3:",
              "dist.comm_ctx needs a rank: run the program's host function with "
              "pto_ir_interp_run_host");
  pto_ir_program_destroy(p);
}

/* ---- control flow in kernels ------------------------------------------------------------- */

static void test_interp_for_iter_yield(void **state) {
  const char *text =
      "program f\n"
      "kernel @k(%a: tensor[2,12] f32, out %c: tensor[2,4] f32) -> (tensor[2,4] f32) {\n"
      "  %z = tile.full([2, 4], f32, 0.0)\n"
      "  %s, %cnt = for %i in range(0, 3) iter(%acc = %z, %k = 0) {\n"
      "    %col = %i * 4\n"
      "    %t = tile.load(%a, [0, %col], [2, 4])\n"
      "    %n = tile.add(%acc, %t)\n"
      "    %k1 = %k + 10\n"
      "    yield %n, %k1\n"
      "  }\n"
      "  %fc = f32(%cnt)\n"
      "  %s2 = tile.adds(%s, %fc)\n"
      "  %c1 = tile.store(%s2, [0, 0], %c)\n"
      "  return %c1\n"
      "}\n";
  pto_ir_program *p = parse_text(text);
  float a[24], c[8], want[8];
  for (int i = 0; i < 24; i++)
    a[i] = (float)i * 0.7f - 3.0f;
  pto_ir_interp_arg args[2] = {tensor2(a, PTO_DTYPE_F32, 2, 12), tensor2(c, PTO_DTYPE_F32, 2, 4)};
  assert_pto_ok(run_fn(p, "k", args, 2));
  for (int r = 0; r < 2; r++)
    for (int j = 0; j < 4; j++) {
      float s = 0.0f;
      for (int i = 0; i < 3; i++)
        s = s + a[r * 12 + i * 4 + j];
      want[r * 4 + j] = s + 30.0f;
    }
  assert_f32_bits_equal(c, want, 8, "for/iter");
  pto_ir_program_destroy(p);
}

static void test_interp_for_step_and_empty_range(void **state) {
  const char *text = "program f\n"
                     "kernel @k(out %c: tensor[1,2] i64, %lo: index, %hi: index, %st: index)\n"
                     "    -> (tensor[1,2] i64) {\n"
                     "  %sum, %n = for %i in range(%lo, %hi, %st) iter(%acc = 0, %m = 0) {\n"
                     "    %a1 = %acc + %i\n"
                     "    %m1 = %m + 1\n"
                     "    yield %a1, %m1\n"
                     "  }\n"
                     "  %t = tile.full([1, 1], i64, i64(%sum))\n"
                     "  %c1 = tile.store(%t, [0, 0], %c)\n"
                     "  %t2 = tile.full([1, 1], i64, i64(%n))\n"
                     "  %c2 = tile.store(%t2, [0, 1], %c1)\n"
                     "  return %c2\n"
                     "}\n";
  pto_ir_program *p = parse_text(text);
  struct {
    int64_t lo, hi, st, sum, n;
  } cases[] = {
      {0, 10, 3, 0 + 3 + 6 + 9, 4}, {5, 5, 1, 0, 0}, {7, 2, 1, 0, 0}, {10, 0, -4, 10 + 6 + 2, 3}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int64_t c[2] = {-1, -1};
    pto_ir_interp_arg args[4] = {
        tensor2(c, PTO_DTYPE_I64, 1, 2), scalar_i(PTO_DTYPE_INDEX, cases[i].lo),
        scalar_i(PTO_DTYPE_INDEX, cases[i].hi), scalar_i(PTO_DTYPE_INDEX, cases[i].st)};
    assert_pto_ok(run_fn(p, "k", args, 4));
    assert_int_equal(c[0], cases[i].sum);
    assert_int_equal(c[1], cases[i].n);
  }
  int64_t c[2];
  pto_ir_interp_arg args[4] = {tensor2(c, PTO_DTYPE_I64, 1, 2), scalar_i(PTO_DTYPE_INDEX, 0),
                               scalar_i(PTO_DTYPE_INDEX, 4), scalar_i(PTO_DTYPE_INDEX, 0)};
  check_error(run_fn(p, "k", args, 4), PTO_STATUS_LAUNCH, "t.ptir:4:", "for: the step is zero");
  pto_ir_program_destroy(p);
}

static const char *k_if_prog =
    "program i\n"
    "kernel @k(%a: tensor[2,4] f32, out %c: tensor[2,4] f32, %act: i32) -> (tensor[2,4] f32) {\n"
    "  %t = tile.load(%a, [0, 0], [2, 4])\n"
    "  %o = if %act != 0 {\n"
    "    %r = tile.relu(%t)\n"
    "    yield %r\n"
    "  } else {\n"
    "    %n = tile.neg(%t)\n"
    "    yield %n\n"
    "  }\n"
    "  %c1 = tile.store(%o, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n"
    "orch @main(%a: tensor[2,4] f32, out %c: tensor[2,4] f32, %act: i32 = 1)\n"
    "    -> (tensor[2,4] f32) {\n"
    "  call @k(%a, %c, %act)\n"
    "  return %c\n"
    "}\n";

static void test_interp_if_else_with_results(void **state) {
  pto_ir_program *p = parse_text(k_if_prog);
  float c[8];
  for (int act = 0; act < 2; act++) {
    pto_ir_interp_arg args[3] = {tensor2((void *)k_a, PTO_DTYPE_F32, 2, 4),
                                 tensor2(c, PTO_DTYPE_F32, 2, 4), scalar_i(PTO_DTYPE_I32, act)};
    assert_pto_ok(run_fn(p, "k", args, 3));
    for (int i = 0; i < 8; i++) {
      float want = act ? (k_a[i] > 0 ? k_a[i] : 0.0f) : -k_a[i];
      assert_true(c[i] == want);
    }
  }
  pto_ir_program_destroy(p);
}

static void test_interp_sigmoid_is_one_over_one_plus_exp_minus_x(void **state) {
  pto_ir_program *p =
      parse_text("program s\n"
                 "kernel @k(%a: tensor[2,4] f32, out %c: tensor[2,4] f32) -> (tensor[2,4] f32) {\n"
                 "  %t = tile.load(%a, [0, 0], [2, 4])\n"
                 "  %s = tile.sigmoid(%t)\n"
                 "  %c1 = tile.store(%s, [0, 0], %c)\n"
                 "  return %c1\n"
                 "}\n");
  float c[8];
  pto_ir_interp_arg args[2] = {tensor2((void *)k_a, PTO_DTYPE_F32, 2, 4),
                               tensor2(c, PTO_DTYPE_F32, 2, 4)};
  assert_pto_ok(run_fn(p, "k", args, 2));
  for (int i = 0; i < 8; i++)
    assert_true(c[i] == 1.0f / (1.0f + expf(-k_a[i])));
  pto_ir_program_destroy(p);
  const char *bad =
      "program s\n"
      "kernel @k(%a: tensor[2,4] i32, out %c: tensor[2,4] i32) -> (tensor[2,4] i32) {\n"
      "  %t = tile.load(%a, [0, 0], [2, 4])\n"
      "  %s = tile.sigmoid(%t)\n"
      "  %c1 = tile.store(%s, [0, 0], %c)\n"
      "  return %c1\n"
      "}\n";
  pto_status s = pto_ir_parse_string(bad, strlen(bad), "s.ptir", &p);
  assert_non_null(s);
  assert_non_null(strstr(pto_status_message(s), "tile.sigmoid: needs a float tile, got i32"));
  pto_status_free(s);
}

static void test_interp_specialized_scalar_uses_its_literal(void **state) {
  pto_ir_program *p = parse_text(k_if_prog);
  float c[8];
  /* The entry's %act is specialized to 1: the 0 in its ABI slot is ignored. */
  pto_ir_interp_arg args[3] = {tensor2((void *)k_a, PTO_DTYPE_F32, 2, 4),
                               tensor2(c, PTO_DTYPE_F32, 2, 4), scalar_i(PTO_DTYPE_I32, 0)};
  assert_pto_ok(run_fn(p, "main", args, 3));
  for (int i = 0; i < 8; i++)
    assert_true(c[i] == (k_a[i] > 0 ? k_a[i] : 0.0f));
  pto_ir_program_destroy(p);
}

/* ---- dynamic dims and launch errors ------------------------------------------------------- */

static const char *k_dyn =
    "program d\n"
    "dynamic N, R\n"
    "kernel @k(%a: tensor[R,4] f32, %b: tensor[R,4] f32, out %c: tensor[R,4] f32)\n"
    "    -> (tensor[R,4] f32) {\n"
    "  %ta = tile.load(%a, [0, 0], [8, 4], valid=[R, 4])\n"
    "  %tb = tile.load(%b, [0, 0], [8, 4], valid=[R, 4])\n"
    "  %tc = tile.add(%ta, %tb)\n"
    "  %c1 = tile.store(%tc, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n"
    "orch @main(%a: tensor[N,4] f32, %b: tensor[N,4] f32, out %c: tensor[N,4] f32, %cut: index)\n"
    "    -> (tensor[N,4] f32) {\n"
    "  %as = tensor.slice(%a, [0, 0], [8, 4])\n"
    "  %bs = tensor.slice(%b, [0, 0], [%cut, 4])\n"
    "  %cs = tensor.slice(%c, [0, 0], [8, 4])\n"
    "  call @k(%as, %bs, %cs)\n"
    "  return %c\n"
    "}\n";

static void test_interp_dynamic_dim_mismatch_names_both(void **state) {
  pto_ir_program *p = parse_text(k_dyn);
  float a[12] = {0}, b[12] = {0}, c[12];
  /* Entry: %a has 3 rows, %b 2. */
  pto_ir_interp_arg args[3] = {tensor2(a, PTO_DTYPE_F32, 3, 4), tensor2(b, PTO_DTYPE_F32, 2, 4),
                               tensor2(c, PTO_DTYPE_F32, 3, 4)};
  check_error(run_fn(p, "k", args, 3), PTO_STATUS_LAUNCH,
              "t.ptir:3:", "@k: dynamic dim R is 3 from parameter %a but 2 from parameter %b");
  /* Through a call: the slices have 3 and 2 rows, the error is at the call. */
  pto_ir_interp_arg margs[4] = {tensor2(a, PTO_DTYPE_F32, 3, 4), tensor2(b, PTO_DTYPE_F32, 3, 4),
                                tensor2(c, PTO_DTYPE_F32, 3, 4), scalar_i(PTO_DTYPE_INDEX, 2)};
  check_error(run_fn(p, "main", margs, 4), PTO_STATUS_LAUNCH, "t.ptir:16:",
              "call @k: dynamic dim R is 3 from parameter %a but 2 from parameter %b");
  /* Agreeing extents run, with R bound to 3 in the kernel. */
  for (int i = 0; i < 12; i++) {
    a[i] = (float)i;
    b[i] = 100.0f;
    c[i] = -1.0f;
  }
  margs[3] = scalar_i(PTO_DTYPE_INDEX, 8);
  assert_pto_ok(run_fn(p, "main", margs, 4));
  for (int i = 0; i < 12; i++)
    assert_true(c[i] == (float)i + 100.0f);
  pto_ir_program_destroy(p);
}

static void test_interp_static_extent_and_dtype_checked_at_launch(void **state) {
  pto_ir_program *p = parse_text(k_graph);
  float x[32], z[32];
  pto_ir_interp_arg args[3] = {tensor2(x, PTO_DTYPE_F32, 4, 7), tensor2(z, PTO_DTYPE_F32, 4, 8),
                               scalar_f(PTO_DTYPE_F32, 1.0)};
  check_error(run_fn(p, "main", args, 3), PTO_STATUS_LAUNCH, "t.ptir",
              "@main: parameter %x: extent of dim 1 is 7, expected 8");
  args[0] = tensor2(x, PTO_DTYPE_F16, 4, 8);
  check_error(run_fn(p, "main", args, 3), PTO_STATUS_LAUNCH,
              "parameter %x is f32 but the tensor is f16", NULL);
  args[0] = tensor2(x, PTO_DTYPE_F32, 4, 8);
  check_error(run_fn(p, "main", args, 2), PTO_STATUS_INVALID_ARGUMENT,
              "2 arguments for 3 parameters", NULL);
  args[2] = scalar_i(PTO_DTYPE_I32, 1);
  check_error(run_fn(p, "main", args, 3), PTO_STATUS_INVALID_ARGUMENT,
              "parameter %k is f32 but the argument is i32", NULL);
  pto_ir_program_destroy(p);
}

/* A static slice that runs past the tensor's edge has a dynamic extent (docs/language.md): passed
 * where another static extent is declared, it is a launch error naming the call and the
 * parameter (it used to be a verifier error); where the extent matches or is dynamic, it runs. */
static const char *const k_clamped_static =
    "program t\n"
    "dynamic R\n"
    "kernel @k8(%x: tensor[8, 4] f32, out %y: tensor[8, 4] f32) -> (tensor[8, 4] f32) {\n"
    "  %t = tile.load(%x, [0, 0], [8, 4])\n"
    "  %y1 = tile.store(%t, [0, 0], %y)\n"
    "  return %y1\n"
    "}\n"
    "kernel @k2(%x: tensor[2, 4] f32, out %y: tensor[2, 4] f32) -> (tensor[2, 4] f32) {\n"
    "  %t = tile.load(%x, [0, 0], [2, 4])\n"
    "  %y1 = tile.store(%t, [0, 0], %y)\n"
    "  return %y1\n"
    "}\n"
    "kernel @kd(%x: tensor[R, 4] f32, out %y: tensor[R, 4] f32) -> (tensor[R, 4] f32) {\n"
    "  %t = tile.load(%x, [0, 0], [8, 4], valid=[R, 4])\n"
    "  %y1 = tile.store(%t, [0, 0], %y)\n"
    "  return %y1\n"
    "}\n"
    "orch @main(%x: tensor[10, 4] f32, out %y: tensor[10, 4] f32, %which: index)\n"
    "    -> (tensor[10, 4] f32) {\n"
    "  %xs = tensor.slice(%x, [8, 0], [8, 4])\n"
    "  %ys = tensor.slice(%y, [8, 0], [8, 4])\n"
    "  if %which == 0 {\n"
    "    call @k8(%xs, %ys)\n"
    "  } else {\n"
    "    if %which == 1 {\n"
    "      call @k2(%xs, %ys)\n"
    "    } else {\n"
    "      call @kd(%xs, %ys)\n"
    "    }\n"
    "  }\n"
    "  return %y\n"
    "}\n";

static void test_interp_clamped_static_slice_checked_at_launch(void **state) {
  pto_ir_program *p = parse_text(k_clamped_static);
  assert_pto_ok(pto_ir_verify(p));
  float x[40], y[40];
  for (int i = 0; i < 40; i++)
    x[i] = (float)i, y[i] = -1.0f;
  pto_ir_interp_arg args[3] = {tensor2(x, PTO_DTYPE_F32, 10, 4), tensor2(y, PTO_DTYPE_F32, 10, 4),
                               scalar_i(PTO_DTYPE_INDEX, 0)};
  check_error(run_fn(p, "main", args, 3), PTO_STATUS_LAUNCH,
              "t.ptir:23:5:", "call @k8: parameter %x: extent of dim 0 is 2, expected 8");
  for (int64_t which = 1; which <= 2; which++) {
    for (int i = 0; i < 40; i++)
      y[i] = -1.0f;
    args[2] = scalar_i(PTO_DTYPE_INDEX, which);
    assert_pto_ok(run_fn(p, "main", args, 3));
    for (int i = 0; i < 40; i++)
      assert_true(y[i] == (i >= 32 ? x[i] : -1.0f));
  }
  pto_ir_program_destroy(p);
}

static void test_interp_error_inside_loop_frees_everything(void **state) {
  /* A division by zero in the third task, after tensors and tiles were made: the status comes
   * back and (under ASan) nothing leaks. */
  const char *text =
      "program e\n"
      "kernel @k(%x: tensor[1,4] i32, out %y: tensor[1,4] i32, %d: i32)\n"
      "    -> (tensor[1,4] i32) {\n"
      "  %t = tile.load(%x, [0, 0], [1, 4])\n"
      "  %u = tile.divs(%t, %d)\n"
      "  %y1 = tile.store(%u, [0, 0], %y)\n"
      "  return %y1\n"
      "}\n"
      "orch @main(%x: tensor[1,4] i32, out %y: tensor[1,4] i32) -> (tensor[1,4] i32) {\n"
      "  for %i in range(0, 5) {\n"
      "    %tmp = tensor.create([1, 4], i32)\n"
      "    %d = 2 - i32(%i)\n"
      "    %r = call @k(%x, %tmp, %d)\n"
      "  }\n"
      "  return %y\n"
      "}\n";
  pto_ir_program *p = parse_text(text);
  int32_t x[4] = {1, 2, 3, 4}, y[4];
  pto_ir_interp_arg args[2] = {tensor2(x, PTO_DTYPE_I32, 1, 4), tensor2(y, PTO_DTYPE_I32, 1, 4)};
  check_error(run_fn(p, "main", args, 2), PTO_STATUS_LAUNCH,
              "t.ptir:5:", "tile.divs: integer division by zero at [0,0]");
  pto_ir_program_destroy(p);
}

static void test_interp_host_needs_a_world_size(void **state) {
  const char *text = "program h\n"
                     "host @h() {\n"
                     "}\n";
  pto_ir_program *p = parse_text(text);
  check_error(run_fn(p, "h", NULL, 0), PTO_STATUS_INVALID_ARGUMENT, "@h",
              "run it with pto_ir_interp_run_host and a world size");
  pto_ir_program_destroy(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_interp_add_example_partial_last_block),
      cmocka_unit_test(test_interp_task_graph_through_created_tensors),
      cmocka_unit_test(test_interp_orch_tensor_read_and_dim),
      cmocka_unit_test(test_interp_incore_runs_inline),
      cmocka_unit_test(test_interp_binary_f32),
      cmocka_unit_test(test_interp_scalar_forms_f32),
      cmocka_unit_test(test_interp_unary_f32),
      cmocka_unit_test(test_interp_f16_bf16_round_to_nearest_even),
      cmocka_unit_test(test_interp_integer_wrap_and_floor_division),
      cmocka_unit_test(test_interp_integer_division_by_zero_is_a_launch_error),
      cmocka_unit_test(test_interp_scalar_floor_division_and_mod),
      cmocka_unit_test(test_interp_cast),
      cmocka_unit_test(test_interp_row_and_col_reductions),
      cmocka_unit_test(test_interp_row_and_col_expansions),
      cmocka_unit_test(test_interp_matmul),
      cmocka_unit_test(test_interp_pad_min_max_at_the_edge),
      cmocka_unit_test(test_interp_pad_feeds_reductions),
      cmocka_unit_test(test_interp_dynamic_valid_and_store_clipping),
      cmocka_unit_test(test_interp_leading_dims_and_rank1_windows),
      cmocka_unit_test(test_interp_create_full_move),
      cmocka_unit_test(test_interp_f64_computes_in_double),
      cmocka_unit_test(test_interp_f16_scalar_parameter_is_rounded),
      cmocka_unit_test(test_interp_dist_ops_need_a_rank),
      cmocka_unit_test(test_interp_for_iter_yield),
      cmocka_unit_test(test_interp_for_step_and_empty_range),
      cmocka_unit_test(test_interp_if_else_with_results),
      cmocka_unit_test(test_interp_sigmoid_is_one_over_one_plus_exp_minus_x),
      cmocka_unit_test(test_interp_specialized_scalar_uses_its_literal),
      cmocka_unit_test(test_interp_dynamic_dim_mismatch_names_both),
      cmocka_unit_test(test_interp_static_extent_and_dtype_checked_at_launch),
      cmocka_unit_test(test_interp_clamped_static_slice_checked_at_launch),
      cmocka_unit_test(test_interp_error_inside_loop_frees_everything),
      cmocka_unit_test(test_interp_host_needs_a_world_size),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
