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

static uint32_t bits_of_f(float f) {
  uint32_t i;
  memcpy(&i, &f, sizeof i);
  return i;
}

static float float_of(uint32_t i) {
  float f;
  memcpy(&f, &i, sizeof f);
  return f;
}

float pto_expf(float x) {
  x = x < PTO_MATHF_EXP_LO ? PTO_MATHF_EXP_LO : x; /* NaN stays NaN */
  x = x > PTO_MATHF_EXP_HI ? PTO_MATHF_EXP_HI : x;
  float kf = fmaf(x, PTO_MATHF_LOG2E, PTO_MATHF_SHIFT); /* SHIFT + round(x / ln 2) */
  float n = kf - PTO_MATHF_SHIFT;
  float r = fmaf(n, PTO_MATHF_NEG_LN2_HI, x); /* exact */
  r = fmaf(n, PTO_MATHF_LN2_LO_ERR, r);
  float q = pto_mathf_exp_coef(PTO_MATHF_EXP_DEGREE);
  for (int i = PTO_MATHF_EXP_DEGREE - 1; i >= 0; i--)
    q = fmaf(q, r, pto_mathf_exp_coef(i));
  float p = 1.0f + fmaf(r * r, q, r);
  /* 2^n in two exact halves: n sits in the low bits of kf; unsigned arithmetic as the
   * lowering's wrapping i32 ops, the shift arithmetic (a NaN's bits are garbage that the
   * multiplies below ignore) */
  uint32_t ni = bits_of_f(kf) - PTO_MATHF_SHIFT_BITS;
  uint32_t n1 = (uint32_t)((int32_t)ni >> 1), n2 = ni - n1;
  return (p * float_of((n1 + 127u) << 23)) * float_of((n2 + 127u) << 23);
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

/* Payne-Hanek for |x| past 2^20 (pto/mathf.h, PTO_MATHF_BIG_BITS): r, and the quadrant in
 * *q. compiler/lower_elem.c (sincos_big) is the same operations in IR; keep them in step. Any
 * bits give some result (E clamped into the table), as the lowering runs it on every lane of a
 * vector that has a big one and keeps the big lanes' results. */
static float sincos_big(float x, uint32_t *q) {
  uint32_t u = bits_of_f(x), a = u & 0x7fffffffu;
  int32_t e = (int32_t)(a >> 23) - 150 - PTO_MATHF_BIG_EMIN; /* table index */
  e = e < 0 ? 0 : e;
  e = e > PTO_MATHF_BIG_ECOUNT - 1 ? PTO_MATHF_BIG_ECOUNT - 1 : e;
  uint32_t p[3];
  pto_mathf_2opi_window(e + PTO_MATHF_BIG_EMIN, p);
  uint64_t m = (a & 0x7fffffu) | 0x800000u;
  uint64_t p2 = m * p[2], p1 = m * p[1], p0 = m * p[0];
  uint64_t t1 = (p2 >> 32) + (p1 & 0xffffffffu);
  uint32_t lo = (uint32_t)p2;
  uint32_t mid = (uint32_t)t1;
  uint32_t hi = (uint32_t)((t1 >> 32) + (p1 >> 32) + p0) + 0x20000000u; /* + 1/2 */
  uint32_t quad = hi >> 30;
  /* the fraction's top 62 bits, less the half, signed */
  int64_t f_hi = (int64_t)((((uint64_t)(hi & 0x3fffffffu)) << 32) | mid) - ((int64_t)1 << 61);
  double f = (double)f_hi * 0x1p-62 + (double)lo * 0x1p-94; /* quarter turns */
  double rd = f * PTO_MATHF_PIO2_1;
  uint32_t neg = u >> 31;
  *q = neg ? 0u - quad : quad;
  return neg ? -(float)rd : (float)rd;
}

/* sin (cos 0) or cos (cos 1) of x, as pto/mathf.h describes. */
static float sincos_f(float x, uint32_t cos) {
  double d = (double)x;
  double kf = fma(d, PTO_MATHF_2_OVER_PI, PTO_MATHF_SHIFT52); /* SHIFT52 + round(x 2/pi) */
  double k = kf - PTO_MATHF_SHIFT52;
  double rd = fma(-k, PTO_MATHF_PIO2_1, d);
  float r = (float)fma(-k, PTO_MATHF_PIO2_2, rd);
  /* the quadrant: k's low bits (a NaN's are garbage, and r is NaN then) */
  uint32_t qk = (uint32_t)bits_of(kf);
  uint32_t ax = bits_of_f(x) & 0x7fffffffu;
  if (ax > PTO_MATHF_BIG_BITS && ax < 0x7f800000u) r = sincos_big(x, &qk);
  float z = r * r;
  float ps = pto_mathf_sin_coef(PTO_MATHF_SIN_TERMS - 1);
  for (int i = PTO_MATHF_SIN_TERMS - 2; i >= 0; i--)
    ps = fmaf(ps, z, pto_mathf_sin_coef(i));
  ps = fmaf(r * z, ps, r);
  float pc = pto_mathf_cos_coef(PTO_MATHF_COS_TERMS - 1);
  for (int i = PTO_MATHF_COS_TERMS - 2; i >= 0; i--)
    pc = fmaf(pc, z, pto_mathf_cos_coef(i));
  pc = fmaf(z, pc, 1.0f);
  uint32_t q = qk + cos;
  float y = (q & 1u) ? pc : ps;
  y = float_of(bits_of_f(y) ^ ((q << 30) & 0x80000000u));
  /* sin(+-0) = +-0: r + r z ps gives +0 for r = -0 (r z ps is +0, ps being negative) */
  if (!cos && x == 0) y = x;
  /* inf and NaN: one NaN, whatever the order the operations above met them in */
  return y != y ? NAN : y;
}

float pto_sinf(float x) { return sincos_f(x, 0); }
float pto_cosf(float x) { return sincos_f(x, 1); }
