/* pto's f32 exp, log, sin and cos: the one definition of what tile.exp, tile.log, tile.sigmoid,
 * tile.sin and tile.cos compute
 * on f32 (and f16/bf16, which compute in f32). The reference interpreter calls these functions;
 * the kernel lowering (compiler/lower_kernel.c, pto__lower_expf / pto__lower_logf) emits the
 * same operations, on the same constants below, in the same order, as LLVM IR that vectorizes.
 * Every step is an IEEE operation with one correctly rounded result (conversion, fma, multiply,
 * add, divide) or exact integer/bit arithmetic, so both give the same bits for every input
 * (test_lower_exp_log_bit_identical_to_reference checks a sweep of f32 against compiled kernels).
 *
 * Accuracy. exp works in f32 (so that compiled code holds 16 lanes per 512-bit vector): x
 * clamped to [-104, 89] (beyond, the f32 result is 0 or inf anyway); n = round(x log2 e) by the
 * 1.5*2^23 shift trick; r = x - n ln2 by two fmas with ln2 split in a 24-bit head, whose product
 * with n is exact, and a tail (|r| <= 0.3466); e^r = 1 + (r + r^2 q(r)), q of degree 4 fitted to
 * (e^r - 1 - r) / r^2 (relative error of the polynomial <= 3.8e-9, 0.07 of an f32 ulp); times
 * 2^n as two exact powers of two, 2^(n>>1) then 2^(n - (n>>1)), so that a subnormal result is
 * rounded once (the first product is exact: compiled code on AVX-512 does both in one vscalefps,
 * which rounds p 2^n once, the same bits). Measured over every f32 in (-104, 89) against expl
 * rounded to f32: at most 1 ulp from the correctly rounded result, 0.78% of inputs not correctly
 * rounded (test_mathf). log: x = 2^k m with m in [sqrt(1/2), sqrt(2)) from the double's bits (f32
 * subnormals are normal doubles); s = (m - 1) / (m + 1), log m = 2 atanh s = 2s + 2s^3/3 + ... +
 * 2s^11/11 (|s| <= 0.1716, relative truncation error <= 6e-11); k ln2 + log m with one fma, in
 * double. The double result is within ~1e-8 relative of the true value, so after the one rounding
 * to f32 the error is at most 0.5 + 0.13 ulp: within 1 ulp of the correctly rounded result, and
 * equal to it for all but a few inputs in a million (test_mathf measures both over a dense sweep
 * against long double). Special values: exp(NaN) = NaN, exp(-inf) = 0, exp(+inf) = inf; log(NaN) =
 * NaN, log(x < 0) = NaN, log(+-0) = -inf, log(+inf) = +inf. */
#ifndef PTO_MATHF_H
#define PTO_MATHF_H

#include <stdint.h>

#include "pto/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* exp (f32) */
#define PTO_MATHF_EXP_LO (-104.0f)            /* clamp: e^-104 rounds to 0 in f32 */
#define PTO_MATHF_EXP_HI 89.0f                /* e^89 overflows f32 */
#define PTO_MATHF_SHIFT 0x1.8p23f             /* adding it rounds to an integer */
#define PTO_MATHF_SHIFT_BITS 0x4b400000u      /* its bits: kf's bits minus these are n */
#define PTO_MATHF_LOG2E 0x1.715476p0f         /* 1 / ln 2 */
#define PTO_MATHF_NEG_LN2_HI (-0x1.62e43p-1f) /* -ln 2, 24 bits: n times it is exact */
#define PTO_MATHF_LN2_LO_ERR 0x1.05c61p-29f   /* ln2_hi - ln 2 */
#define PTO_MATHF_EXP_DEGREE 4                /* q's coefficients, below */
/* log (double) */
#define PTO_MATHF_LN2 0x1.62e42fefa39efp-1     /* ln 2 */
#define PTO_MATHF_LOG_OFF 0x3fe6a09e667f3bcdLL /* bits of sqrt(1/2) as a double */
#define PTO_MATHF_LOG_TERMS 6                  /* 2/(2i+1), i = 0..5 */

/* sin/cos (f32 in; the reduction in double, the polynomials in f32). x = k pi/2 + r with
 * k = round(x 2/pi) (the 1.5*2^52 shift trick on the double product: kf = fma(x, 2/pi, SHIFT52),
 * k = kf - SHIFT52) and r = x - k pi/2 by two fmas over pi/2 split in two doubles (Cody-Waite;
 * for |x| <= 2^20, |k| < 2^20, the dropped tail k (pi/2 - PIO2_1 - PIO2_2) is below 2^-85, and
 * each fma rounds once, so r is within ~2^-52 relative of the true remainder); |r| <= pi/4. r is
 * rounded to f32 once (0.5 ulp), and sin r and cos r are Taylor polynomials in z = r^2 in f32
 * (truncation <= 2e-9 relative, 0.03 ulp), both evaluated with fmas, so that compiled code holds
 * 16 lanes per 512-bit vector for them. The quadrant q = k mod 4 comes from kf's low bits (k's
 * two's complement: SHIFT52's low 51 bits are zero), plus 1 for cos: bit 0 picks cos r over
 * sin r, bit 1 flips the sign (an xor of the sign bit). The rounded r and the f32 polynomials
 * bring the error to at most 2 ulp of the correctly rounded value for |x| <= 2^20,
 * docs/language.md's bound (test_mathf sweeps it against long double and prints the worst case and
 * how many inputs are not correctly rounded). Past 2^20 the reduction is Payne-Hanek's
 * (PTO_MATHF_BIG_BITS below), the same polynomials after it, the same 2 ulp bound; inf and NaN give
 * the quiet NaN 0x7fc00000; sin(+-0) = +-0 (sin is odd; the polynomial alone gives +0 for -0, so
 * both implementations return a zero x as it is). */
#define PTO_MATHF_2_OVER_PI 0x1.45f306dc9c883p-1 /* 2 / pi */
#define PTO_MATHF_SHIFT52 0x1.8p52               /* adding it rounds a double to an integer */
#define PTO_MATHF_PIO2_1 0x1.921fb54442d18p+0    /* pi/2 ~= PIO2_1 + PIO2_2 */
#define PTO_MATHF_PIO2_2 0x1.1a62633145c07p-54
/* Past PTO_MATHF_BIG_BITS (|x| > 2^20: the bits of |x| above it, inf and NaN excepted) the
 * reduction is Payne-Hanek's, in integers: |x| = M 2^E (M the 24-bit significand, E in
 * [-3, 104]), and x 2/pi mod 4 = M P(E) mod 4 with P(E) = 2^E 2/pi mod 4 as a 96-bit fixed point
 * number (2 integer bits, 94 fraction bits: pto_mathf_2opi_window, from the bits of 2/pi below).
 * The 24 x 96-bit product's low 96 bits, plus a half, give the quadrant (the top 2 bits) and the
 * fraction f in [-1/2, 1/2) (the other 94, less the half); r = f pi/2, f to a double as
 * (its top 62 bits) 2^-62 + (its low 32 bits) 2^-94 and one multiply by PIO2_1 (P(E)'s truncation
 * is below 2^-70 of a quarter turn; the closest an f32 comes to a multiple of pi/2 is ~2^-30
 * quarter turns, so r keeps ~40 good bits). A negative x is reduced as |x|, and r and the
 * quadrant negated. Integer arithmetic, so the lowering (inline vector code over an internal
 * constant table of the kernel module, branched to only when a lane is this big) gives the same
 * bits. */
#define PTO_MATHF_BIG_BITS 0x49800000u /* 2^20 */
#define PTO_MATHF_BIG_EMIN (-3)        /* E of the f32 just above 2^20 */
#define PTO_MATHF_BIG_ECOUNT 108       /* E in [-3, 104] */

/* Bit s+1 to s+32 of 2/pi's fraction (2/pi = 0.a2f9836e... in hex; s >= -32, s + 32 <= 256),
 * zeros before the point: 2/pi < 1. */
static inline uint32_t pto_mathf_2opi_bits32(int s) {
  static const uint32_t w[8] = {0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u,
                                0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u};
  int i = (s + 32) / 32 - 1, sh = s - 32 * i; /* i = floor(s / 32) */
  uint64_t hi = i >= 0 ? w[i] : 0, lo = i + 1 < 8 ? w[i + 1] : 0;
  return (uint32_t)((((hi << 32) | lo) << sh) >> 32);
}

/* P(E) = 2^E 2/pi mod 4 in 2.94 fixed point, most significant word first: the 96 fraction bits
 * of 2/pi ending at bit E + 94. */
static inline void pto_mathf_2opi_window(int e, uint32_t out[3]) {
  int n = e + 94;
  out[0] = pto_mathf_2opi_bits32(n - 96);
  out[1] = pto_mathf_2opi_bits32(n - 64);
  out[2] = pto_mathf_2opi_bits32(n - 32);
}

#define PTO_MATHF_SIN_TERMS 4 /* sin r = r + r z (s0 + z (s1 + ...)) */
#define PTO_MATHF_COS_TERMS 5 /* cos r = 1 + z (c0 + z (c1 + ...)) */

/* Coefficient i of sin's and cos's polynomials in z = r^2 (Taylor: (-1)^(i+1) / (2i+3)! and
 * (-1)^(i+1) / (2i+2)!, rounded to f32). */
static inline float pto_mathf_sin_coef(int i) {
  static const float c[PTO_MATHF_SIN_TERMS] = {(float)(-1.0 / 6), (float)(1.0 / 120),
                                               (float)(-1.0 / 5040), (float)(1.0 / 362880)};
  return c[i];
}
static inline float pto_mathf_cos_coef(int i) {
  static const float c[PTO_MATHF_COS_TERMS] = {-0.5f, (float)(1.0 / 24), (float)(-1.0 / 720),
                                               (float)(1.0 / 40320), (float)(-1.0 / 3628800)};
  return c[i];
}

/* Coefficient i of exp's q (f32, i = 0..PTO_MATHF_EXP_DEGREE: near 1/(i+2)!) and of log's odd
 * series in s (2/(2i+1), i = 0..PTO_MATHF_LOG_TERMS - 1, double). Header-only so that the
 * lowering (another library) reads the very same numbers. */
static inline float pto_mathf_exp_coef(int i) {
  static const float c[PTO_MATHF_EXP_DEGREE + 1] = {0x1.fffffcp-2f, 0x1.555492p-3f, 0x1.5558f2p-5f,
                                                    0x1.1239e2p-7f, 0x1.6a2434p-10f};
  return c[i];
}
static inline double pto_mathf_log_coef(int i) {
  static const double c[PTO_MATHF_LOG_TERMS] = {2.0, 2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11};
  return c[i];
}

/* The scalar reference (base/mathf.c), what the interpreter calls. */
PTO_API float pto_expf(float x);
PTO_API float pto_logf(float x);
PTO_API float pto_sinf(float x);
PTO_API float pto_cosf(float x);

#ifdef __cplusplus
}
#endif

#endif
