/* pto's f32 exp and log (pto/mathf.h): the scalar reference the interpreter calls. The kernel
 * lowering emits the same operations in the same order (compiler/lower_kernel.c, lower_expf and
 * lower_logf); keep the two in step, operation for operation. Built with -ffp-contract=off
 * (base/CMakeLists.txt): a multiply and an add must never fuse behind our back, every fma is
 * written out. */
#include "pto/mathf.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static int64_t bits_of(double d) {
  int64_t i;
  memcpy(&i, &d, sizeof i);
  return i;
}

static double double_of(int64_t i) {
  double d;
  memcpy(&d, &i, sizeof d);
  return d;
}

float pto_expf(float x) {
  double d = (double)x;
  d = d < PTO_MATHF_EXP_LO ? PTO_MATHF_EXP_LO : d; /* NaN stays NaN */
  d = d > PTO_MATHF_EXP_HI ? PTO_MATHF_EXP_HI : d;
  double kd = fma(d, PTO_MATHF_LOG2E, PTO_MATHF_SHIFT); /* SHIFT + round(d / ln 2) */
  double n = kd - PTO_MATHF_SHIFT;
  double r = fma(n, PTO_MATHF_NEG_LN2, d);
  double p = pto_mathf_exp_coef(PTO_MATHF_EXP_DEGREE);
  for (int i = PTO_MATHF_EXP_DEGREE - 1; i >= 0; i--)
    p = fma(p, r, pto_mathf_exp_coef(i));
  /* 2^n: n sits in the low bits of kd; unsigned arithmetic, as the lowering's wrapping i64 ops
   * (a NaN's bits are garbage that the multiply below ignores). */
  uint64_t e = ((uint64_t)bits_of(kd) - (uint64_t)bits_of(PTO_MATHF_SHIFT) + 1023u) << 52;
  double scale = double_of((int64_t)e);
  return (float)(p * scale);
}

float pto_logf(float x) {
  double d = (double)x; /* an f32 subnormal is a normal double */
  uint64_t ix = (uint64_t)bits_of(d) - (uint64_t)PTO_MATHF_LOG_OFF;
  int64_t k = (int64_t)ix >> 52; /* arithmetic shift: floor */
  double m = double_of((int64_t)((uint64_t)bits_of(d) - ((uint64_t)k << 52))); /* [0.707, 1.414) */
  double s = (m - 1.0) / (m + 1.0);
  double z = s * s;
  double p = pto_mathf_log_coef(PTO_MATHF_LOG_TERMS - 1);
  for (int i = PTO_MATHF_LOG_TERMS - 2; i >= 0; i--)
    p = fma(p, z, pto_mathf_log_coef(i));
  double lm = s * p;
  float y = (float)fma((double)k, PTO_MATHF_LN2, lm);
  if (x == 0) y = -INFINITY;
  if (x < 0) y = NAN;
  if (x == INFINITY) y = INFINITY;
  if (x != x) y = x;
  return y;
}
