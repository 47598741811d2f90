/* NumPy .npy files for pto tensors (pto run --in NAME=FILE.npy, --out NAME=FILE.npy).
 *
 * Reading accepts format versions 1.0, 2.0 and 3.0; writing produces 1.0 with exactly the bytes
 * numpy.save writes (header padded to 64 bytes, with its spare space for growing the first axis).
 * Data in memory is C order (row-major), host byte order, densely packed.
 *
 * dtypes: f4 f8 f2 i1 i2 i4 i8 u1 u2 u4 u8 b1 map to the pto dtype of the same kind and width.
 * Two pto dtypes have no NumPy counterpart; by convention:
 *   - bf16 is stored as '<u2' holding the raw bfloat16 bits. pto_npy_write(PTO_DTYPE_BF16) writes
 *     '<u2'; a '<u2' file reads as u16 unless the caller expects bf16 (pto_npy_read_expect with
 *     PTO_DTYPE_BF16), then its bits are taken as bf16. A '|V2' file (how numpy saves an
 *     ml_dtypes bfloat16 array) is accepted the same way, only when bf16 is expected.
 *   - index is stored as '<i8'; a '<i8' file reads as i64, or as index when index is expected.
 * Byte order: big-endian data ('>f4') is converted to host order on read; files are always
 * written little-endian. fortran_order True, structured dtypes and ranks above PTO_MAX_RANK are
 * refused with a message naming the file. Bool elements read as 0 or 1.
 *
 * Every error names the file; a mismatch against an expected signature names both values
 * ("x.npy: dtype f64 ('<f8'), expected f32 ('<f4')", "x.npy: shape [3, 5], expected [3, 4]"). */
#ifndef PTO_TOOLS_NPY_H
#define PTO_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "pto/status.h"
#include "pto/types.h"

typedef struct pto_npy_array {
  pto_dtype dtype;
  int rank; /* 0 (a scalar array) .. PTO_MAX_RANK */
  int64_t shape[PTO_MAX_RANK];
  size_t count;  /* elements: the product of shape (1 for rank 0) */
  size_t nbytes; /* count * element size */
  void *data;    /* malloc'd, owned; never NULL after a successful read */
} pto_npy_array;

/* Reads path; the dtype is the file's own (see the conventions above). */
pto_status pto_npy_read(const char *path, pto_npy_array *out_array);
/* Reads path and checks it against an expected dtype, rank and shape. rank < 0 accepts any
 * rank (shape unused); a shape entry < 0 accepts any extent (a dynamic dim); shape may be NULL
 * to check the rank only. Also applies the bf16 / index conventions. */
pto_status pto_npy_read_expect(const char *path, pto_dtype dtype, int rank, const int64_t *shape,
                               pto_npy_array *out_array);
/* Parses an in-memory .npy image (name is used in messages). want_dtype is the expected pto
 * dtype, which only selects the bf16 / index conventions, or -1. */
pto_status pto_npy_parse(const uint8_t *buf, size_t len, const char *name, int want_dtype,
                         pto_npy_array *out_array);
/* Checks a read array against an expected dtype and shape as pto_npy_read_expect does. */
pto_status pto_npy_check(const pto_npy_array *a, const char *name, pto_dtype dtype, int rank,
                         const int64_t *shape);
/* Writes a C-order array of rank 0..PTO_MAX_RANK (count = product of shape elements of dtype,
 * host byte order) to path as .npy 1.0. */
pto_status pto_npy_write(const char *path, pto_dtype dtype, int rank, const int64_t *shape,
                         const void *data);
void pto_npy_array_free(pto_npy_array *a);

/* The descr a pto dtype is written with ("<f4", "|b1", "<u2" for bf16, "<i8" for index). */
const char *pto_npy_descr(pto_dtype dtype);

#endif
