/* .npy reading and writing: round trips of every pto dtype, numpy.save's exact header bytes,
 * v2/v3 headers, big-endian conversion, the bf16 and index conventions, clear refusals, and
 * (where python3 has numpy) interchange with numpy itself in both directions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tools/npy.c belongs to the pto executable, not a library: compile it into this test. */
#include "../../tools/npy.c"
#include "testutil.h"

typedef struct fixture {
  char *dir;
} fixture;

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  fx->dir = tu_mkdtemp("npy");
  *state = fx;
  return fx->dir ? 0 : -1;
}

static int teardown(void **state) {
  fixture *fx = *state;
  tu_rmtree(fx->dir);
  free(fx->dir);
  free(fx);
  return 0;
}

static char *in_dir(const fixture *fx, const char *name) {
  char *p = NULL;
  if (asprintf(&p, "%s/%s", fx->dir, name) < 0) return NULL;
  return p;
}

/* A v1 .npy image of the given header dict (padded like numpy) followed by data. */
static size_t make_npy(uint8_t *out, int major, const char *dict, const void *data, size_t n) {
  size_t pre = major == 1 ? 10 : 12, hl = strlen(dict) + 1;
  size_t pad = (64 - (pre + hl) % 64) % 64;
  memcpy(out, "\x93NUMPY", 6);
  out[6] = (uint8_t)major;
  out[7] = 0;
  size_t total = hl + pad;
  out[8] = (uint8_t)total;
  out[9] = (uint8_t)(total >> 8);
  if (major != 1) {
    out[10] = (uint8_t)(total >> 16);
    out[11] = (uint8_t)(total >> 24);
  }
  memcpy(out + pre, dict, hl - 1);
  memset(out + pre + hl - 1, ' ', pad);
  out[pre + hl - 1 + pad] = '\n';
  memcpy(out + pre + total, data, n);
  return pre + total + n;
}

static void test_round_trip_every_dtype(void **state) {
  fixture *fx = *state;
  char *path = in_dir(fx, "rt.npy");
  int64_t shape[2] = {2, 3};
  for (int d = 0; d < PTO_DTYPE_COUNT; d++) {
    size_t size = pto_dtype_size((pto_dtype)d);
    uint8_t data[6 * 8];
    for (size_t i = 0; i < sizeof data; i++)
      data[i] = (uint8_t)(i * 37 + 1);
    if (d == PTO_DTYPE_BOOL)
      for (int i = 0; i < 6; i++)
        data[i] = (uint8_t)(i & 1);
    assert_pto_ok(pto_npy_write(path, (pto_dtype)d, 2, shape, data));
    pto_npy_array a;
    assert_pto_ok(pto_npy_read_expect(path, (pto_dtype)d, 2, shape, &a));
    assert_int_equal(a.dtype, d);
    assert_int_equal(a.rank, 2);
    assert_int_equal(a.count, 6);
    assert_int_equal(a.nbytes, 6 * size);
    assert_memory_equal(a.data, data, 6 * size);
    pto_npy_array_free(&a);
    /* Without an expectation: the file's own dtype (bf16 is u16 bits, index is i64). */
    assert_pto_ok(pto_npy_read(path, &a));
    pto_dtype want = d == PTO_DTYPE_BF16    ? PTO_DTYPE_U16
                     : d == PTO_DTYPE_INDEX ? PTO_DTYPE_I64
                                            : (pto_dtype)d;
    assert_int_equal(a.dtype, want);
    pto_npy_array_free(&a);
  }
  /* bf16 values survive as their bits. */
  uint16_t bf[3] = {pto_f32_to_bf16(1.5f), pto_f32_to_bf16(-2.0f), pto_f32_to_bf16(0.1f)};
  int64_t n3[1] = {3};
  assert_pto_ok(pto_npy_write(path, PTO_DTYPE_BF16, 1, n3, bf));
  pto_npy_array a;
  assert_pto_ok(pto_npy_read_expect(path, PTO_DTYPE_BF16, 1, n3, &a));
  assert_true(pto_bf16_to_f32(((uint16_t *)a.data)[0]) == 1.5f);
  assert_true(pto_bf16_to_f32(((uint16_t *)a.data)[1]) == -2.0f);
  pto_npy_array_free(&a);
  /* rank 0 and empty arrays */
  double scalar = 3.25;
  assert_pto_ok(pto_npy_write(path, PTO_DTYPE_F64, 0, NULL, &scalar));
  assert_pto_ok(pto_npy_read(path, &a));
  assert_int_equal(a.rank, 0);
  assert_int_equal(a.count, 1);
  assert_true(*(double *)a.data == 3.25);
  pto_npy_array_free(&a);
  int64_t empty[2] = {0, 5};
  assert_pto_ok(pto_npy_write(path, PTO_DTYPE_F32, 2, empty, NULL));
  assert_pto_ok(pto_npy_read(path, &a));
  assert_int_equal(a.count, 0);
  assert_non_null(a.data);
  assert_int_equal(a.shape[1], 5);
  pto_npy_array_free(&a);
  free(path);
}

/* The exact bytes numpy 1.24's numpy.save writes for these arrays (header only). */
static void expect_header(const fixture *fx, pto_dtype dt, int rank, const int64_t *shape,
                          const char *dict) {
  char *path = in_dir(fx, "hdr.npy");
  size_t count = 1;
  for (int i = 0; i < rank; i++)
    count *= (size_t)shape[i];
  void *zeros = calloc(count ? count : 1, 8);
  assert_pto_ok(pto_npy_write(path, dt, rank, shape, zeros));
  size_t n = 0;
  char *got = tu_read_file(path, &n);
  assert_int_equal(n, 128 + count * pto_dtype_size(dt));
  assert_memory_equal(got, "\x93NUMPY\x01\x00v\x00", 10);
  assert_int_equal(strlen(dict), 117);
  assert_memory_equal(got + 10, dict, 117);
  assert_int_equal(got[127], '\n');
  free(got);
  free(zeros);
  free(path);
}

static void test_header_bytes_match_numpy_save(void **state) {
  fixture *fx = *state;
  /* from numpy 1.24.2: np.save(f, np.zeros(shape, dtype)) */
  expect_header(fx, PTO_DTYPE_F32, 2, (int64_t[]){3, 4},
                "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }                       "
                "                                   ");
  expect_header(fx, PTO_DTYPE_F64, 0, NULL,
                "{'descr': '<f8', 'fortran_order': False, 'shape': (), }                           "
                "                                   ");
  expect_header(fx, PTO_DTYPE_I8, 1, (int64_t[]){7},
                "{'descr': '|i1', 'fortran_order': False, 'shape': (7,), }                         "
                "                                   ");
  expect_header(fx, PTO_DTYPE_U16, 5, (int64_t[]){2, 3, 4, 5, 6},
                "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3, 4, 5, 6), }              "
                "                                   ");
  expect_header(fx, PTO_DTYPE_BOOL, 2, (int64_t[]){0, 5},
                "{'descr': '|b1', 'fortran_order': False, 'shape': (0, 5), }                       "
                "                                   ");
}

static void test_reads_v2_v3_and_hand_made_headers(void **state) {
  uint8_t img[512];
  float f[3] = {1.0f, -2.5f, 3.0f};
  pto_npy_array a;
  for (int major = 1; major <= 3; major++) {
    size_t n = make_npy(img, major, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f,
                        sizeof f);
    assert_pto_ok(pto_npy_parse(img, n, "v.npy", -1, &a));
    assert_int_equal(a.dtype, PTO_DTYPE_F32);
    assert_memory_equal(a.data, f, sizeof f);
    pto_npy_array_free(&a);
  }
  /* double quotes, other key order, no trailing comma, Python 2 longs */
  size_t n =
      make_npy(img, 1, "{\"shape\": (3L,),\"fortran_order\":False,\"descr\":\"<f4\"}", f, sizeof f);
  assert_pto_ok(pto_npy_parse(img, n, "v.npy", -1, &a));
  assert_int_equal(a.shape[0], 3);
  pto_npy_array_free(&a);
  /* big-endian data is converted */
  uint8_t be[8] = {0x3f, 0x80, 0, 0, 0xc0, 0x20, 0, 0}; /* 1.0f, -2.5f */
  n = make_npy(img, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", be, sizeof be);
  assert_pto_ok(pto_npy_parse(img, n, "be.npy", -1, &a));
  assert_true(((float *)a.data)[0] == 1.0f && ((float *)a.data)[1] == -2.5f);
  pto_npy_array_free(&a);
  uint8_t be16[4] = {0x01, 0x02, 0xff, 0xfe};
  n = make_npy(img, 1, "{'descr': '>i2', 'fortran_order': False, 'shape': (2,), }", be16,
               sizeof be16);
  assert_pto_ok(pto_npy_parse(img, n, "be.npy", -1, &a));
  assert_int_equal(((int16_t *)a.data)[0], 0x0102);
  assert_int_equal(((int16_t *)a.data)[1], -2);
  pto_npy_array_free(&a);
  /* bools normalize to 0/1 */
  uint8_t b[3] = {0, 7, 1};
  n = make_npy(img, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", b, 3);
  assert_pto_ok(pto_npy_parse(img, n, "b.npy", -1, &a));
  assert_memory_equal(a.data, "\0\1\1", 3);
  pto_npy_array_free(&a);
  /* '|V2' (ml_dtypes bfloat16) only as bf16 */
  uint16_t raw[2] = {0x3f80, 0xc000};
  n = make_npy(img, 1, "{'descr': '|V2', 'fortran_order': False, 'shape': (2,), }", raw,
               sizeof raw);
  assert_pto_ok(pto_npy_parse(img, n, "bf.npy", PTO_DTYPE_BF16, &a));
  assert_int_equal(a.dtype, PTO_DTYPE_BF16);
  assert_true(pto_bf16_to_f32(((uint16_t *)a.data)[1]) == -2.0f);
  pto_npy_array_free(&a);
  assert_status_contains(pto_npy_parse(img, n, "bf.npy", -1, &a),
                         "bf.npy: dtype '|V2' (raw 2-byte values) reads only as bf16");
}

static void expect_refusal(int major, const char *dict, size_t ndata, const char *needle) {
  uint8_t img[1024];
  uint8_t data[256] = {0};
  size_t n = make_npy(img, major, dict, data, ndata);
  pto_npy_array a;
  pto_status s = pto_npy_parse(img, n, "bad.npy", -1, &a);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_INVALID_ARGUMENT);
  assert_status_contains(s, needle);
  assert_null(a.data);
}

static void test_refusals_are_clear(void **state) {
  expect_refusal(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16,
                 "bad.npy: fortran_order is True: pto reads C-order arrays only");
  expect_refusal(1,
                 "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (2,), }",
                 16, "bad.npy: structured dtypes are not supported");
  expect_refusal(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16,
                 "bad.npy: dtype '<c8' is not a pto dtype");
  expect_refusal(1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16,
                 "dtype '|O' is not supported");
  expect_refusal(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1), }", 4,
                 "bad.npy: rank is above pto's maximum of 5");
  expect_refusal(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", 40,
                 "bad.npy: truncated: the shape needs 48 bytes of data, the file has 40");
  expect_refusal(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), 'x': 1}", 48,
                 "unexpected key 'x'");
  expect_refusal(1, "{'descr': '<f4', 'shape': (3,), }", 12, "lacks 'fortran_order'");
  expect_refusal(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,-4), }", 48,
                 "malformed 'shape'");
  expect_refusal(1,
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, "
                 "99999999999), }",
                 48, "too large");
  expect_refusal(1, "[1, 2]", 0, "not a dict");
  expect_refusal(4, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 12,
                 "format version 4.0 is not supported");
  pto_npy_array a;
  assert_status_contains(pto_npy_parse((const uint8_t *)"PK\3\4 not npy", 13, "z.npz", -1, &a),
                         "z.npz: not a .npy file");
  uint8_t img[256];
  size_t n = make_npy(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", "", 0);
  assert_status_contains(pto_npy_parse(img, 40, "cut.npy", -1, &a),
                         "cut.npy: truncated .npy header");
  (void)n;
  assert_status_contains(pto_npy_read("/nonexistent/x.npy", &a), "/nonexistent/x.npy");
  assert_status_contains(
      pto_npy_write("/nonexistent/x.npy", PTO_DTYPE_F32, 1, (int64_t[]){1}, "abcd"),
      "cannot write next to /nonexistent/x.npy");
  assert_status_contains(
      pto_npy_write("/tmp/x.npy", PTO_DTYPE_F32, 6, (int64_t[]){1, 1, 1, 1, 1, 1}, "abcd"),
      "rank 6");
}

static void test_expectation_mismatches_name_both_values(void **state) {
  fixture *fx = *state;
  char *path = in_dir(fx, "x.npy");
  double d[12] = {0};
  assert_pto_ok(pto_npy_write(path, PTO_DTYPE_F64, 2, (int64_t[]){3, 4}, d));
  pto_npy_array a;
  char want[600];
  snprintf(want, sizeof want, "%s: dtype f64 ('<f8'), expected f32 ('<f4')", path);
  assert_status_contains(pto_npy_read_expect(path, PTO_DTYPE_F32, 2, (int64_t[]){3, 4}, &a), want);
  assert_null(a.data);
  snprintf(want, sizeof want, "%s: shape [3, 4], expected [3, 5]", path);
  assert_status_contains(pto_npy_read_expect(path, PTO_DTYPE_F64, 2, (int64_t[]){3, 5}, &a), want);
  assert_status_contains(pto_npy_read_expect(path, PTO_DTYPE_F64, 3, (int64_t[]){3, 4, -1}, &a),
                         "shape [3, 4], expected [3, 4, ?]");
  assert_status_contains(pto_npy_read_expect(path, PTO_DTYPE_F64, 1, NULL, &a), "expected rank 1");
  /* dynamic dims and any rank */
  assert_pto_ok(pto_npy_read_expect(path, PTO_DTYPE_F64, 2, (int64_t[]){-1, 4}, &a));
  pto_npy_array_free(&a);
  assert_pto_ok(pto_npy_read_expect(path, PTO_DTYPE_F64, -1, NULL, &a));
  pto_npy_array_free(&a);
  /* f16 is not bf16 */
  uint16_t h[2] = {0x3c00, 0x4000};
  assert_pto_ok(pto_npy_write(path, PTO_DTYPE_F16, 1, (int64_t[]){2}, h));
  assert_status_contains(pto_npy_read_expect(path, PTO_DTYPE_BF16, 1, (int64_t[]){2}, &a),
                         "dtype f16 ('<f2'), expected bf16 ('<u2')");
  free(path);
}

/* ---- numpy interchange, where the machine has it ------------------------------------- */

static const char *find_numpy_python(void) {
  static const char *const candidates[] = {"python3", "/usr/bin/python3"};
  for (size_t i = 0; i < 2; i++) {
    char *out = NULL;
    int rc = tu_run(&out, "%s -c 'import numpy' 2>/dev/null", candidates[i]);
    free(out);
    if (rc == 0) return candidates[i];
  }
  return NULL;
}

static const struct {
  pto_dtype dt;
  const char *np;
} k_np[] = {
    {PTO_DTYPE_F32, "<f4"}, {PTO_DTYPE_F64, "<f8"}, {PTO_DTYPE_F16, "<f2"}, {PTO_DTYPE_I8, "|i1"},
    {PTO_DTYPE_I16, "<i2"}, {PTO_DTYPE_I32, "<i4"}, {PTO_DTYPE_I64, "<i8"}, {PTO_DTYPE_U8, "|u1"},
    {PTO_DTYPE_U16, "<u2"}, {PTO_DTYPE_U32, "<u4"}, {PTO_DTYPE_U64, "<u8"}, {PTO_DTYPE_BOOL, "|b1"},
};

/* The value numpy writes at flat index i: i * 5, less 60 for signed and float dtypes (every
 * value fits every dtype); bool: i % 3 == 0. */
static double np_value(pto_dtype dt, long i) {
  if (dt == PTO_DTYPE_BOOL) return i % 3 == 0;
  return (double)(i * 5 - (pto_dtype_is_signed(dt) ? 60 : 0));
}

static double element(const pto_npy_array *a, size_t i) {
  const void *p = (const uint8_t *)a->data + i * pto_dtype_size(a->dtype);
  switch (a->dtype) {
  case PTO_DTYPE_F32: return *(const float *)p;
  case PTO_DTYPE_F64: return *(const double *)p;
  case PTO_DTYPE_F16: return pto_f16_to_f32(*(const uint16_t *)p);
  case PTO_DTYPE_I8: return *(const int8_t *)p;
  case PTO_DTYPE_I16: return *(const int16_t *)p;
  case PTO_DTYPE_I32: return *(const int32_t *)p;
  case PTO_DTYPE_I64: return (double)*(const int64_t *)p;
  case PTO_DTYPE_U8: return *(const uint8_t *)p;
  case PTO_DTYPE_U16: return *(const uint16_t *)p;
  case PTO_DTYPE_U32: return *(const uint32_t *)p;
  case PTO_DTYPE_U64: return (double)*(const uint64_t *)p;
  case PTO_DTYPE_BOOL: return *(const uint8_t *)p;
  default: return NAN;
  }
}

static void test_numpy_reads_and_writes_our_files(void **state) {
  fixture *fx = *state;
  const char *py = find_numpy_python();
  if (!py) skip(); /* byte-exact header tests above still cover the format */
  char *out = NULL;
  /* numpy writes every dtype (and a big-endian and a Fortran-order array) */
  int rc = tu_run(&out,
                  "cd '%s' && %s -c \"\n"
                  "import numpy as np\n"
                  "for d in ['<f4','<f8','<f2','|i1','<i2','<i4','<i8','|u1','<u2','<u4','<u8']:\n"
                  "    a = np.arange(24).reshape(2,3,4) * 5\n"
                  "    np.save('np_%%s.npy' %% d[1:], (a - 60 if d[1] in 'if' else a).astype(d))\n"
                  "np.save('np_b1.npy', (np.arange(24).reshape(2,3,4) %% 3) == 0)\n"
                  "np.save('np_be.npy', (np.arange(24).reshape(2,3,4) * 5 - 60).astype('>f8'))\n"
                  "np.save('np_fortran.npy', np.asfortranarray(np.ones((3, 4), np.float32)))\n"
                  "\"",
                  fx->dir, py);
  if (rc) print_error("%s\n", out);
  free(out);
  assert_int_equal(rc, 0);
  for (size_t k = 0; k < sizeof k_np / sizeof *k_np; k++) {
    char name[64];
    snprintf(name, sizeof name, "np_%s.npy", k_np[k].np + 1);
    char *path = in_dir(fx, name);
    pto_npy_array a;
    assert_pto_ok(pto_npy_read_expect(path, k_np[k].dt, 3, (int64_t[]){2, 3, 4}, &a));
    for (size_t i = 0; i < a.count; i++) {
      double want = np_value(k_np[k].dt, (long)i);
      if (element(&a, i) != want) {
        print_error("%s[%zu] = %g, want %g\n", name, i, element(&a, i), want);
        fail();
      }
    }
    /* Our write of the same array is byte-identical to numpy's file. */
    char *mine = in_dir(fx, "mine.npy");
    assert_pto_ok(pto_npy_write(mine, a.dtype, a.rank, a.shape, a.data));
    size_t n1 = 0, n2 = 0;
    char *b1 = tu_read_file(path, &n1), *b2 = tu_read_file(mine, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, n1);
    free(b1);
    free(b2);
    free(mine);
    pto_npy_array_free(&a);
    free(path);
  }
  pto_npy_array a;
  char *path = in_dir(fx, "np_be.npy");
  assert_pto_ok(pto_npy_read_expect(path, PTO_DTYPE_F64, 3, (int64_t[]){2, 3, 4}, &a));
  for (size_t i = 0; i < a.count; i++)
    assert_true(element(&a, i) == np_value(PTO_DTYPE_F64, (long)i));
  pto_npy_array_free(&a);
  free(path);
  path = in_dir(fx, "np_fortran.npy");
  assert_status_contains(pto_npy_read(path, &a), "fortran_order is True");
  free(path);

  /* numpy reads what we write, dtype and values, for every pto dtype (bf16 as <u2 bits, index
   * as <i8). */
  for (int d = 0; d < PTO_DTYPE_COUNT; d++) {
    size_t size = pto_dtype_size((pto_dtype)d);
    uint8_t data[6 * 8];
    for (size_t i = 0; i < sizeof data; i++)
      data[i] = (uint8_t)(i * 13 + 5);
    if (d == PTO_DTYPE_BOOL)
      for (int i = 0; i < 6; i++)
        data[i] = (uint8_t)(i & 1);
    char name[64];
    snprintf(name, sizeof name, "ours_%d.npy", d);
    char *p = in_dir(fx, name);
    assert_pto_ok(pto_npy_write(p, (pto_dtype)d, 2, (int64_t[]){2, 3}, data));
    char hex[6 * 8 * 2 + 1];
    for (size_t i = 0; i < 6 * size; i++)
      snprintf(hex + 2 * i, 3, "%02x", data[i]);
    rc = tu_run(&out,
                "%s -c \"\n"
                "import numpy as np\n"
                "a = np.load('%s')\n"
                "assert a.dtype.str == '%s', a.dtype.str\n"
                "assert a.shape == (2, 3), a.shape\n"
                "assert a.tobytes().hex() == '%s', a.tobytes().hex()\n"
                "\"",
                py, p, pto_npy_descr((pto_dtype)d), hex);
    if (rc) print_error("%s: %s\n", name, out);
    free(out);
    assert_int_equal(rc, 0);
    free(p);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_round_trip_every_dtype, setup, teardown),
      cmocka_unit_test_setup_teardown(test_header_bytes_match_numpy_save, setup, teardown),
      cmocka_unit_test(test_reads_v2_v3_and_hand_made_headers),
      cmocka_unit_test(test_refusals_are_clear),
      cmocka_unit_test_setup_teardown(test_expectation_mismatches_name_both_values, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_numpy_reads_and_writes_our_files, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
