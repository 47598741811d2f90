/* pto base types shared by every layer: dtypes, memory spaces, scalars and host tensors.
 *
 * These are plain data with no ownership. A pto_host_tensor borrows its data; strides are in
 * elements (not bytes), row-major when made by pto_host_tensor_init. */
#ifndef PTO_TYPES_H
#define PTO_TYPES_H

#include "pto/export.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PTO_MAX_RANK 5

typedef enum pto_dtype {
  PTO_DTYPE_BOOL = 0,
  PTO_DTYPE_I8,
  PTO_DTYPE_I16,
  PTO_DTYPE_I32,
  PTO_DTYPE_I64,
  PTO_DTYPE_U8,
  PTO_DTYPE_U16,
  PTO_DTYPE_U32,
  PTO_DTYPE_U64,
  PTO_DTYPE_F16,
  PTO_DTYPE_BF16,
  PTO_DTYPE_F32,
  PTO_DTYPE_F64,
  PTO_DTYPE_INDEX, /* loop variables, offsets, extents: 64-bit signed, distinct from i64 */
  PTO_DTYPE_COUNT
} pto_dtype;

typedef enum pto_space {
  PTO_SPACE_DDR = 0,
  PTO_SPACE_VEC,
  PTO_SPACE_MAT,
  PTO_SPACE_LEFT,
  PTO_SPACE_RIGHT,
  PTO_SPACE_ACC,
  PTO_SPACE_COUNT
} pto_space;

PTO_API const char *pto_dtype_name(pto_dtype dt);
/* Returns -1 when name[0..len) is not a dtype name (or name is NULL). */
PTO_API int pto_dtype_from_name(const char *name, size_t len);
PTO_API size_t pto_dtype_size(pto_dtype dt); /* bool: 1, index: 8 */
PTO_API bool pto_dtype_is_float(pto_dtype dt);
PTO_API bool pto_dtype_is_int(pto_dtype dt);    /* signed, unsigned and index; not bool */
PTO_API bool pto_dtype_is_signed(pto_dtype dt); /* signed ints, index and floats */

PTO_API const char *pto_space_name(pto_space s);
/* Returns -1 when name[0..len) is not a space name (or name is NULL). */
PTO_API int pto_space_from_name(const char *name, size_t len);

/* A scalar value. Integers (and index, bool) live in i (unsigned ones in u, same bits), floats
 * in f (f16/bf16/f32 values are exactly representable in a double). */
typedef struct pto_scalar {
  pto_dtype dtype;
  union {
    int64_t i;
    uint64_t u;
    double f;
  };
} pto_scalar;

/* The 64-bit ABI slot of a scalar: ints sign/zero-extended, bool 0/1, f32 as its IEEE bits in
 * the low 32 bits, f16/bf16 as their 16 bits, f64 as its bits. */
PTO_API uint64_t pto_scalar_to_slot(pto_scalar s);
PTO_API pto_scalar pto_scalar_from_slot(pto_dtype dt, uint64_t slot);

/* f16 and bf16 conversions, round to nearest even. */
PTO_API uint16_t pto_f32_to_f16(float f);
PTO_API float pto_f16_to_f32(uint16_t h);
PTO_API uint16_t pto_f32_to_bf16(float f);
PTO_API float pto_bf16_to_f32(uint16_t h);

typedef struct pto_host_tensor {
  void *data; /* borrowed */
  pto_dtype dtype;
  int rank;
  int64_t shape[PTO_MAX_RANK];
  int64_t strides[PTO_MAX_RANK]; /* elements */
} pto_host_tensor;

/* Fills shape and row-major strides (a stride that would overflow is left INT64_MAX; such a
 * shape fails pto_shape_size). A rank outside 0..PTO_MAX_RANK (or a NULL shape) is stored with
 * every dim left 0 and shape not read: calls given such a tensor refuse its rank. A NULL t: nothing
 * is done. */
PTO_API void pto_host_tensor_init(pto_host_tensor *t, void *data, pto_dtype dt, int rank,
                                  const int64_t *shape);
/* The element count, or -1 when an extent is negative, the count overflows int64, the rank is out
 * of range or t is NULL. */
PTO_API int64_t pto_host_tensor_numel(const pto_host_tensor *t);
/* Element count and byte size of a shape of dtype dt, checked: returns 0 and sets the outs
 * (either may be NULL) when every extent is >= 0 and the byte size fits in int64; returns -1
 * otherwise (and for a NULL shape of rank > 0). Every size computed from user input (dims, shapes,
 * tiles) goes through this. */
PTO_API int pto_shape_size(int rank, const int64_t *shape, pto_dtype dt, int64_t *out_numel,
                           int64_t *out_nbytes);

#ifdef __cplusplus
}
#endif
#endif
