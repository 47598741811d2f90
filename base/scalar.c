/* Scalars as text and elements in memory, once for every layer: the one parser of a scalar's
 * text (-D, --in, the Python package's bindings), the one range check of a scalar's value (the
 * runtime's check of a launch's scalar arguments) and the one load/store of a tensor element by
 * dtype (the interpreter, the pto command's inputs and checks). */
#include "pto/base.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An element is its 64-bit ABI slot (pto_scalar_to_slot) cut to the dtype's size, which is the
 * slot's low bytes on a little-endian host: one conversion table serves both. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "elements are the slot's low bytes");

int pto_dtype_int_range(pto_dtype dt, int64_t *lo, uint64_t *hi) {
  if ((unsigned)dt >= PTO_DTYPE_COUNT || pto_dtype_is_float(dt) || !lo || !hi) return -1;
  unsigned bits = (unsigned)pto_dtype_size(dt) * 8;
  if (dt == PTO_DTYPE_BOOL) {
    *lo = 0, *hi = 1;
  } else if (pto_dtype_is_signed(dt)) {
    *hi = (UINT64_C(1) << (bits - 1)) - 1;
    *lo = -(int64_t)*hi - 1;
  } else {
    *lo = 0, *hi = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
  }
  return 0;
}

/* pto_dtype_int_range for a dtype the caller knows is an integer one. */
static void int_range(pto_dtype dt, int64_t *lo, uint64_t *hi) {
  if (pto_dtype_int_range(dt, lo, hi) != 0) *lo = 0, *hi = 0;
}

static pto_status int_out_of_range(pto_dtype dt, const char *what) {
  int64_t lo;
  uint64_t hi;
  int_range(dt, &lo, &hi);
  return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                         "%s for %s: expected an integer from %" PRId64 " to %" PRIu64, what,
                         pto_dtype_name(dt), lo, hi);
}

/* The largest finite value of float dtype dt (f16: 65504, bf16 and f32: FLT_MAX). */
static double float_max(pto_dtype dt) {
  switch (dt) {
  case PTO_DTYPE_F16: return 65504.0;
  case PTO_DTYPE_BF16: return (double)pto_bf16_to_f32(0x7f7f);
  case PTO_DTYPE_F32: return FLT_MAX;
  default: return DBL_MAX;
  }
}

/* "-0x7f" or "127": an optional '-', then decimal digits or 0x and hex digits, nothing else (no
 * blanks, '+', octal or suffix). Returns 0 with the sign and magnitude, ERANGE when the
 * magnitude does not fit 64 bits, EINVAL otherwise. */
static int parse_int_text(const char *text, int *neg, uint64_t *mag) {
  const char *p = text;
  *neg = *p == '-';
  p += *neg;
  int base = p[0] == '0' && (p[1] == 'x' || p[1] == 'X') ? 16 : 10;
  p += base == 16 ? 2 : 0;
  const char *digits = base == 16 ? "0123456789abcdefABCDEF" : "0123456789";
  if (!*p || !strchr(digits, *p)) return EINVAL;
  char *end;
  errno = 0;
  *mag = strtoull(p, &end, base);
  if (*end) return EINVAL;
  return errno == ERANGE ? ERANGE : 0;
}

static pto_status parse_int(const char *text, pto_dtype dt, pto_scalar *out) {
  int neg;
  uint64_t mag;
  int64_t lo;
  uint64_t hi;
  int_range(dt, &lo, &hi);
  int e = parse_int_text(text, &neg, &mag);
  if (e == EINVAL)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "not a valid %s value: expected an integer from %" PRId64 " to %" PRIu64
                           " (decimal or 0x hex)",
                           pto_dtype_name(dt), lo, hi);
  if (e || (neg ? mag > (uint64_t)0 - (uint64_t)lo : mag > hi))
    return int_out_of_range(dt, "out of range");
  if (neg)
    out->i = (int64_t)((uint64_t)0 - mag); /* mag <= 2^63 here: wraps to the negative value */
  else
    out->u = mag;
  return PTO_OK;
}

static pto_status parse_float(const char *text, pto_dtype dt, pto_scalar *out) {
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (end == text || *end || (unsigned char)text[0] <= ' ')
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "not a valid %s value: expected a number (decimal, 0x hex, inf or nan)",
                           pto_dtype_name(dt));
  /* Rounded to the dtype as its slot rounds it; a finite value that rounds to infinity (strtod's
   * ERANGE with HUGE_VAL for f64) is out of range. An underflow rounds to zero or a subnormal. */
  pto_scalar s = {.dtype = dt, .f = v};
  s = pto_scalar_from_slot(dt, pto_scalar_to_slot(s));
  if (isinf(s.f) && !(isinf(v) && errno != ERANGE))
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "out of range for %s: a finite %s is at most %g in magnitude",
                           pto_dtype_name(dt), pto_dtype_name(dt), float_max(dt));
  /* A NaN is the quiet NaN of its sign: a payload (nan(0x...)) is not kept, since a program's
   * text (PTIR's nan and -nan) and its manifest cannot hold one, and a binding baked into the
   * binaries must read back as the value they were compiled for. */
  out->f = isnan(s.f) ? copysign(NAN, s.f) : s.f;
  return PTO_OK;
}

pto_status pto_scalar_parse(const char *text, pto_dtype dt, pto_scalar *out) {
  if (!text || !out || (unsigned)dt >= PTO_DTYPE_COUNT)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_scalar_parse: text, out and a valid dtype are required");
  pto_scalar s = {.dtype = dt};
  pto_status st = PTO_OK;
  if (dt == PTO_DTYPE_BOOL) {
    if (!strcmp(text, "true") || !strcmp(text, "1"))
      s.i = 1;
    else if (strcmp(text, "false") && strcmp(text, "0"))
      st = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "not a valid bool value: expected true, false, 1 or 0");
  } else if (pto_dtype_is_float(dt)) {
    st = parse_float(text, dt, &s);
  } else {
    st = parse_int(text, dt, &s);
  }
  if (!st) *out = s;
  return st;
}

pto_status pto_scalar_check(pto_scalar s) {
  if ((unsigned)s.dtype >= PTO_DTYPE_COUNT)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "a scalar of unknown dtype %d",
                           (int)s.dtype);
  if (pto_dtype_is_float(s.dtype)) return PTO_OK;
  int64_t lo;
  uint64_t hi;
  int_range(s.dtype, &lo, &hi);
  int fits =
      pto_dtype_is_signed(s.dtype) ? s.i >= lo && (s.i < 0 || (uint64_t)s.i <= hi) : s.u <= hi;
  if (fits) return PTO_OK;
  char v[32];
  if (pto_dtype_is_signed(s.dtype))
    snprintf(v, sizeof v, "%" PRId64, s.i);
  else
    snprintf(v, sizeof v, "%" PRIu64, s.u);
  return pto_status_annotate(int_out_of_range(s.dtype, "out of range"), "the value %s", v);
}

pto_scalar pto_elem_load(pto_dtype dt, const void *base, int64_t i) {
  size_t n = pto_dtype_size(dt);
  uint64_t slot = 0;
  memcpy(&slot, (const char *)base + (size_t)i * n, n);
  return pto_scalar_from_slot(dt, slot);
}

void pto_elem_store(pto_dtype dt, void *base, int64_t i, pto_scalar v) {
  size_t n = pto_dtype_size(dt);
  v.dtype = dt;
  uint64_t slot = pto_scalar_to_slot(v);
  memcpy((char *)base + (size_t)i * n, &slot, n);
}
