#include "pto/types.h"

#include <string.h>

static const char *const k_dtype_names[PTO_DTYPE_COUNT] = {"bool", "i8",  "i16", "i32",  "i64",
                                                           "u8",   "u16", "u32", "u64",  "f16",
                                                           "bf16", "f32", "f64", "index"};
static const size_t k_dtype_sizes[PTO_DTYPE_COUNT] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8};
static const char *const k_space_names[PTO_SPACE_COUNT] = {"ddr",  "vec",   "mat",
                                                           "left", "right", "acc"};

const char *pto_dtype_name(pto_dtype dt) {
  return (unsigned)dt < PTO_DTYPE_COUNT ? k_dtype_names[dt] : "?";
}

static int lookup(const char *const *names, int n, const char *name, size_t len) {
  if (!name) return -1;
  for (int i = 0; i < n; i++)
    if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0) return i;
  return -1;
}

int pto_dtype_from_name(const char *name, size_t len) {
  return lookup(k_dtype_names, PTO_DTYPE_COUNT, name, len);
}

size_t pto_dtype_size(pto_dtype dt) {
  return (unsigned)dt < PTO_DTYPE_COUNT ? k_dtype_sizes[dt] : 0;
}

bool pto_dtype_is_float(pto_dtype dt) {
  return dt == PTO_DTYPE_F16 || dt == PTO_DTYPE_BF16 || dt == PTO_DTYPE_F32 || dt == PTO_DTYPE_F64;
}

bool pto_dtype_is_int(pto_dtype dt) {
  return (dt >= PTO_DTYPE_I8 && dt <= PTO_DTYPE_U64) || dt == PTO_DTYPE_INDEX;
}

bool pto_dtype_is_signed(pto_dtype dt) {
  return (dt >= PTO_DTYPE_I8 && dt <= PTO_DTYPE_I64) || dt == PTO_DTYPE_INDEX ||
         pto_dtype_is_float(dt);
}

const char *pto_space_name(pto_space s) {
  return (unsigned)s < PTO_SPACE_COUNT ? k_space_names[s] : "?";
}

int pto_space_from_name(const char *name, size_t len) {
  return lookup(k_space_names, PTO_SPACE_COUNT, name, len);
}

uint16_t pto_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
  int32_t e = (int32_t)exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return (uint16_t)sign;
    man |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - e);
    uint32_t half = 1u << (shift - 1);
    uint32_t rest = man & ((1u << shift) - 1);
    uint32_t h = man >> shift;
    if (rest > half || (rest == half && (h & 1u))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)e << 10) | (man >> 13);
  uint32_t rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++; /* may carry into inf: correct */
  return (uint16_t)(sign | h);
}

float pto_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t x;
  if (exp == 0x1f) {
    x = sign | 0x7f800000u | (man << 13);
  } else if (exp == 0) {
    if (man == 0) {
      x = sign;
    } else {
      int e = -1;
      do {
        e++;
        man <<= 1;
      } while (!(man & 0x400u));
      x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
    }
  } else {
    x = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &x, 4);
  return f;
}

uint16_t pto_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return (uint16_t)(x >> 16);
}

float pto_bf16_to_f32(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

uint64_t pto_scalar_to_slot(pto_scalar s) {
  switch (s.dtype) {
  case PTO_DTYPE_F32: {
    float f = (float)s.f;
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
  }
  case PTO_DTYPE_F64: {
    uint64_t b;
    memcpy(&b, &s.f, 8);
    return b;
  }
  case PTO_DTYPE_F16: return pto_f32_to_f16((float)s.f);
  case PTO_DTYPE_BF16: return pto_f32_to_bf16((float)s.f);
  case PTO_DTYPE_BOOL: return s.i != 0;
  case PTO_DTYPE_U8: return (uint8_t)s.u;
  case PTO_DTYPE_U16: return (uint16_t)s.u;
  case PTO_DTYPE_U32: return (uint32_t)s.u;
  case PTO_DTYPE_I8: return (uint64_t)(int64_t)(int8_t)s.i;
  case PTO_DTYPE_I16: return (uint64_t)(int64_t)(int16_t)s.i;
  case PTO_DTYPE_I32: return (uint64_t)(int64_t)(int32_t)s.i;
  default: return s.u;
  }
}

pto_scalar pto_scalar_from_slot(pto_dtype dt, uint64_t slot) {
  pto_scalar s = {.dtype = dt};
  switch (dt) {
  case PTO_DTYPE_F32: {
    uint32_t b = (uint32_t)slot;
    float f;
    memcpy(&f, &b, 4);
    s.f = f;
    break;
  }
  case PTO_DTYPE_F64: memcpy(&s.f, &slot, 8); break;
  case PTO_DTYPE_F16: s.f = pto_f16_to_f32((uint16_t)slot); break;
  case PTO_DTYPE_BF16: s.f = pto_bf16_to_f32((uint16_t)slot); break;
  case PTO_DTYPE_BOOL: s.i = slot != 0; break;
  case PTO_DTYPE_U8: s.u = (uint8_t)slot; break;
  case PTO_DTYPE_U16: s.u = (uint16_t)slot; break;
  case PTO_DTYPE_U32: s.u = (uint32_t)slot; break;
  case PTO_DTYPE_I8: s.i = (int8_t)slot; break;
  case PTO_DTYPE_I16: s.i = (int16_t)slot; break;
  case PTO_DTYPE_I32: s.i = (int32_t)slot; break;
  default: s.u = slot; break;
  }
  return s;
}

void pto_host_tensor_init(pto_host_tensor *t, void *data, pto_dtype dt, int rank,
                          const int64_t *shape) {
  if (!t) return;
  memset(t, 0, sizeof *t);
  t->data = data;
  t->dtype = dt;
  t->rank = rank;
  /* A rank out of range is kept (every call taking the tensor refuses it) but no dim is read or
   * written: shape and strides have PTO_MAX_RANK entries. */
  if (rank < 0 || rank > PTO_MAX_RANK || !shape) return;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; i--) {
    t->shape[i] = shape[i];
    t->strides[i] = stride;
    if (__builtin_mul_overflow(stride, shape[i], &stride)) stride = INT64_MAX;
  }
}

int64_t pto_host_tensor_numel(const pto_host_tensor *t) {
  int64_t n;
  if (!t || t->rank < 0 || t->rank > PTO_MAX_RANK) return -1;
  return pto_shape_size(t->rank, t->shape, PTO_DTYPE_U8, &n, NULL) ? -1 : n;
}

int pto_shape_size(int rank, const int64_t *shape, pto_dtype dt, int64_t *out_numel,
                   int64_t *out_nbytes) {
  int64_t n = 1, bytes;
  if (rank > 0 && !shape) return -1;
  for (int i = 0; i < rank; i++)
    if (shape[i] < 0 || __builtin_mul_overflow(n, shape[i], &n)) return -1;
  if (__builtin_mul_overflow(n, (int64_t)pto_dtype_size(dt), &bytes)) return -1;
  if (out_numel) *out_numel = n;
  if (out_nbytes) *out_nbytes = bytes;
  return 0;
}
