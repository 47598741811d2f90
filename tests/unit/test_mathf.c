/* pto_expf, pto_logf, pto_sinf and pto_cosf (pto/mathf.h): the accuracy the header documents,
 * measured over a dense sweep of f32 inputs against a long double reference rounded to f32
 * (correctly rounded but for a double rounding once in ~2^40), and their special values. That the
 * compiled kernels give the same bits is test_lower's
 * test_lower_exp_log_bit_identical_to_reference. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pto/mathf.h"

static uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float of_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Distance in ulps between two finite floats, or 0/huge for infinities (a monotonic integer
 * map of the floats: consecutive floats differ by 1). */
static int64_t ulp_distance(float a, float b) {
  int64_t ia = (int32_t)bits(a), ib = (int32_t)bits(b);
  if (ia < 0) ia = (int64_t)INT32_MIN - ia;
  if (ib < 0) ib = (int64_t)INT32_MIN - ib;
  return ia > ib ? ia - ib : ib - ia;
}

typedef struct sweep {
  int64_t worst;
  float worst_x;
  uint64_t n, not_cr; /* inputs checked, results not correctly rounded */
} sweep;

static void check(sweep *s, float x, float got, float want) {
  s->n++;
  if (isnan(want)) {
    if (!isnan(got)) {
      print_error("x = %a: got %a, want NaN\n", (double)x, (double)got);
      fail();
    }
    return;
  }
  int64_t d = ulp_distance(got, want);
  if (d) s->not_cr++;
  if (d > s->worst) {
    s->worst = d;
    s->worst_x = x;
  }
}

/* The sweep's step through f32 bit patterns: 61 (~2^17 inputs per binade), or
 * PTO_MATHF_STRIDE (1 = every f32: a few minutes). */
static uint32_t stride(void) {
  const char *e = getenv("PTO_MATHF_STRIDE");
  long v = e ? strtol(e, NULL, 10) : 0;
  return v >= 1 && v < 1000000 ? (uint32_t)v : 61;
}

/* Every stride-th f32 from 0 to the largest input whose exp is finite, and the negatives down to
 * the smallest whose exp is nonzero after rounding (~36M inputs). */
static void test_mathf_expf_within_one_ulp(void **state) {
  (void)state;
  sweep s = {0};
  uint32_t step = stride();
  for (uint32_t u = 0; u < 0x42b17218u; u += step) { /* [0, 88.72...] */
    float x = of_bits(u);
    check(&s, x, pto_expf(x), (float)expl((long double)x));
    x = -x;
    if (x >= -103.98f) check(&s, x, pto_expf(x), (float)expl((long double)x));
  }
  print_message("pto_expf: %llu inputs, max error %lld ulp (at %a), %llu not correctly rounded\n",
                (unsigned long long)s.n, (long long)s.worst, (double)s.worst_x,
                (unsigned long long)s.not_cr);
  assert_true(s.worst <= 1);
}

/* Every stride-th positive f32, subnormals included (~35M inputs). */
static void test_mathf_logf_within_one_ulp(void **state) {
  (void)state;
  sweep s = {0};
  uint32_t step = stride();
  for (uint32_t u = 1; u < 0x7f800000u; u += step) {
    float x = of_bits(u);
    check(&s, x, pto_logf(x), (float)logl((long double)x));
  }
  print_message("pto_logf: %llu inputs, max error %lld ulp (at %a), %llu not correctly rounded\n",
                (unsigned long long)s.n, (long long)s.worst, (double)s.worst_x,
                (unsigned long long)s.not_cr);
  assert_true(s.worst <= 1);
}

/* Every stride-th f32 with |x| <= 2^20, both signs (~2^17 inputs per binade, subnormals and
 * zero included): sin and cos within 2 ulp of the correctly rounded value (docs/language.md's
 * bound; the header's analysis says 1). */
static void test_mathf_sinf_cosf_within_two_ulp(void **state) {
  (void)state;
  sweep s = {0}, c = {0};
  uint32_t step = stride();
  for (uint32_t u = 0; u <= 0x49800000u; u += step) { /* [0, 2^20] */
    for (int sign = 0; sign < 2; sign++) {
      float x = sign ? -of_bits(u) : of_bits(u);
      check(&s, x, pto_sinf(x), (float)sinl((long double)x));
      check(&c, x, pto_cosf(x), (float)cosl((long double)x));
    }
  }
  print_message("pto_sinf: %llu inputs, max error %lld ulp (at %a), %llu not correctly rounded\n",
                (unsigned long long)s.n, (long long)s.worst, (double)s.worst_x,
                (unsigned long long)s.not_cr);
  print_message("pto_cosf: %llu inputs, max error %lld ulp (at %a), %llu not correctly rounded\n",
                (unsigned long long)c.n, (long long)c.worst, (double)c.worst_x,
                (unsigned long long)c.not_cr);
  assert_true(s.worst <= 2);
  assert_true(c.worst <= 2);
  /* the special values: NaN for inf and NaN (test_lower checks the kernels give the same bits
   * for every 251st f32) */
  assert_true(isnan(pto_sinf(INFINITY)) && isnan(pto_cosf(-INFINITY)) && isnan(pto_sinf(NAN)));
  assert_true(pto_cosf(0.0f) == 1.0f);
  /* sin is odd: sin(-0) = -0 (the polynomial alone gave +0), and cos(-0) = 1 */
  assert_true(pto_sinf(-0.0f) == 0.0f && signbit(pto_sinf(-0.0f)));
  assert_true(pto_sinf(0.0f) == 0.0f && !signbit(pto_sinf(0.0f)));
  assert_true(pto_cosf(-0.0f) == 1.0f);
  assert_true(pto_sinf(-0x1p-149f) == -0x1p-149f && pto_sinf(0x1p-149f) == 0x1p-149f);
}

/* Past 2^20 (Payne-Hanek's reduction, pto/mathf.h), to the largest f32, both signs: every
 * 7 stride-th f32 (~2^14 inputs per binade, ~4M in all; sinl reduces exactly), the f32 nearest a
 * multiple of pi/2 in each of the 12 binades where one comes nearest (|x 2/pi - k| ~ 1e-9, found
 * by a search of every f32 past 2^20), the two sides of 2^20 and the largest f32: within 2 ulp.
 * sin(1e20) was ~-4.4e30 and sin(3e38) +inf with the reduction below 2^20 alone. */
static const uint32_t k_sincos_hard[] = {0x6f79be45u, 0x50a3e87fu, 0x6ff9be45u, 0x5123e87fu,
                                         0x7079be45u, 0x6a1976f1u, 0x53b146a6u, 0x65898498u,
                                         0x51a3e87fu, 0x77584625u, 0x4c2332e9u, 0x6c55da58u,
                                         0x49800000u, 0x49800001u, 0x7f7fffffu};

static void test_mathf_sinf_cosf_large_within_two_ulp(void **state) {
  (void)state;
  sweep s = {0}, c = {0};
  uint32_t step = 7 * stride();
  for (uint64_t u = 0x49800001u; u < 0x7f800000u; u += step) {
    for (int sign = 0; sign < 2; sign++) {
      float x = of_bits((uint32_t)u | (sign ? 0x80000000u : 0));
      check(&s, x, pto_sinf(x), (float)sinl((long double)x));
      check(&c, x, pto_cosf(x), (float)cosl((long double)x));
    }
  }
  for (size_t i = 0; i < sizeof k_sincos_hard / sizeof *k_sincos_hard; i++)
    for (int sign = 0; sign < 2; sign++) {
      float x = of_bits(k_sincos_hard[i] | (sign ? 0x80000000u : 0));
      check(&s, x, pto_sinf(x), (float)sinl((long double)x));
      check(&c, x, pto_cosf(x), (float)cosl((long double)x));
    }
  print_message("pto_sinf past 2^20: %llu inputs, max error %lld ulp (at %a), %llu not correctly "
                "rounded\n",
                (unsigned long long)s.n, (long long)s.worst, (double)s.worst_x,
                (unsigned long long)s.not_cr);
  print_message("pto_cosf past 2^20: %llu inputs, max error %lld ulp (at %a), %llu not correctly "
                "rounded\n",
                (unsigned long long)c.n, (long long)c.worst, (double)c.worst_x,
                (unsigned long long)c.not_cr);
  assert_true(s.worst <= 2);
  assert_true(c.worst <= 2);
  /* within [-1, 1] and near the true values where the old reduction broke down */
  assert_true(fabsf(pto_sinf(1e20f) - 0.6566f) < 1e-4f);
  assert_true(fabsf(pto_sinf(3e38f) - 0.8749f) < 1e-4f);
  assert_true(fabsf(pto_sinf(1e30f) + 0.7912f) < 1e-4f);
}

static void test_mathf_special_values(void **state) {
  (void)state;
  assert_true(pto_expf(0.0f) == 1.0f);
  assert_true(pto_expf(-0.0f) == 1.0f);
  assert_true(pto_expf(INFINITY) == INFINITY);
  assert_true(pto_expf(-INFINITY) == 0.0f);
  assert_true(pto_expf(88.8f) == INFINITY); /* overflow */
  assert_true(pto_expf(-104.0f) == 0.0f);   /* underflow */
  assert_true(pto_expf(-100.0f) > 0.0f);    /* a subnormal result */
  assert_true(isnan(pto_expf(NAN)));
  assert_true(pto_logf(1.0f) == 0.0f);
  assert_true(pto_logf(0.0f) == -INFINITY);
  assert_true(pto_logf(-0.0f) == -INFINITY);
  assert_true(pto_logf(INFINITY) == INFINITY);
  assert_true(isnan(pto_logf(-1.0f)));
  assert_true(isnan(pto_logf(-INFINITY)));
  assert_true(isnan(pto_logf(NAN)));
  assert_true(pto_logf(of_bits(1)) == (float)logl((long double)of_bits(1))); /* 2^-149 */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mathf_expf_within_one_ulp),
      cmocka_unit_test(test_mathf_logf_within_one_ulp),
      cmocka_unit_test(test_mathf_special_values),
      cmocka_unit_test(test_mathf_sinf_cosf_within_two_ulp),
      cmocka_unit_test(test_mathf_sinf_cosf_large_within_two_ulp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
