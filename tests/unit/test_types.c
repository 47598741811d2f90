#include <math.h>
#include <string.h>

#include "pto/base.h"
#include "pto/status.h"
#include "pto/types.h"
#include "testutil.h"

static void test_dtype_names_round_trip(void **state) {
  for (int d = 0; d < PTO_DTYPE_COUNT; d++) {
    const char *n = pto_dtype_name((pto_dtype)d);
    assert_int_equal(pto_dtype_from_name(n, strlen(n)), d);
  }
  assert_int_equal(pto_dtype_from_name("f33", 3), -1);
  assert_int_equal(pto_dtype_size(PTO_DTYPE_INDEX), 8);
  assert_int_equal(pto_dtype_size(PTO_DTYPE_BF16), 2);
}

static void test_f16_rounds_to_nearest_even(void **state) {
  assert_int_equal(pto_f32_to_f16(1.0f), 0x3c00);
  assert_int_equal(pto_f32_to_f16(65504.0f), 0x7bff);
  assert_int_equal(pto_f32_to_f16(65520.0f), 0x7c00);               /* rounds up to inf */
  assert_int_equal(pto_f32_to_f16(1.0f + 1.0f / 2048), 0x3c00);     /* tie to even: down */
  assert_int_equal(pto_f32_to_f16(1.0f + 3.0f / 2048), 0x3c02);     /* tie to even: up */
  assert_int_equal(pto_f32_to_f16(5.960464477539063e-08f), 0x0001); /* smallest subnormal */
  for (uint32_t h = 0; h < 0x7c00; h++)
    assert_int_equal(pto_f32_to_f16(pto_f16_to_f32((uint16_t)h)), h);
}

static void test_bf16_rounds_to_nearest_even(void **state) {
  assert_int_equal(pto_f32_to_bf16(1.0f), 0x3f80);
  /* 1 + 2^-8 is a tie between 0x3f80 and 0x3f81: even wins */
  assert_int_equal(pto_f32_to_bf16(1.00390625f), 0x3f80);
  assert_int_equal(pto_f32_to_bf16(1.01171875f), 0x3f82);
  assert_true(isnan(pto_bf16_to_f32(pto_f32_to_bf16(NAN))));
}

static void test_scalar_slots(void **state) {
  pto_scalar s = {.dtype = PTO_DTYPE_I32, .i = -5};
  assert_int_equal(pto_scalar_to_slot(s), (uint64_t)-5);
  assert_int_equal(pto_scalar_from_slot(PTO_DTYPE_I32, pto_scalar_to_slot(s)).i, -5);
  pto_scalar f = {.dtype = PTO_DTYPE_F32, .f = 1.5};
  assert_int_equal(pto_scalar_to_slot(f), 0x3fc00000u);
  assert_true(pto_scalar_from_slot(PTO_DTYPE_F32, 0x3fc00000u).f == 1.5);
}

static void test_status_annotate_prefixes_message(void **state) {
  pto_status s = pto_status_make(PTO_STATUS_IO, "disk full");
  s = pto_status_annotate(s, "writing %s", "x.so");
  assert_string_equal(pto_status_message(s), "writing x.so: disk full");
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_IO);
  pto_status_free(s);
  assert_string_equal(pto_status_message(PTO_OK), "ok");
}

/* Parses text as dt and returns the scalar; fails the test if it is refused. */
static pto_scalar parse_ok(const char *text, pto_dtype dt) {
  pto_scalar s = {.dtype = PTO_DTYPE_COUNT};
  assert_pto_ok(pto_scalar_parse(text, dt, &s));
  assert_int_equal(s.dtype, dt);
  return s;
}

/* text is refused as dt with a message containing needle, and *out is left as it was. */
static void parse_bad(const char *text, pto_dtype dt, const char *needle) {
  pto_scalar s = {.dtype = PTO_DTYPE_F64, .f = 7.0};
  pto_status st = pto_scalar_parse(text, dt, &s);
  assert_int_equal(pto_status_code_of(st), PTO_STATUS_INVALID_ARGUMENT);
  assert_status_contains(st, needle);
  assert_int_equal(s.dtype, PTO_DTYPE_F64);
  assert_true(s.f == 7.0);
}

static void test_scalar_parse_int_bounds(void **state) {
  static const struct {
    pto_dtype dt;
    const char *lo, *hi, *below, *above, *range;
  } k[] = {
      {PTO_DTYPE_I8, "-128", "127", "-129", "128", "from -128 to 127"},
      {PTO_DTYPE_I16, "-32768", "32767", "-32769", "32768", "from -32768 to 32767"},
      {PTO_DTYPE_I32, "-2147483648", "2147483647", "-2147483649", "2147483648",
       "from -2147483648 to 2147483647"},
      {PTO_DTYPE_I64, "-9223372036854775808", "9223372036854775807", "-9223372036854775809",
       "9223372036854775808", "from -9223372036854775808 to 9223372036854775807"},
      {PTO_DTYPE_INDEX, "-9223372036854775808", "9223372036854775807", "-9223372036854775809",
       "9223372036854775808", "from -9223372036854775808 to 9223372036854775807"},
      {PTO_DTYPE_U8, "0", "255", "-1", "256", "from 0 to 255"},
      {PTO_DTYPE_U16, "0", "65535", "-1", "65536", "from 0 to 65535"},
      {PTO_DTYPE_U32, "0", "4294967295", "-1", "4294967296", "from 0 to 4294967295"},
      {PTO_DTYPE_U64, "0", "18446744073709551615", "-1", "18446744073709551616",
       "from 0 to 18446744073709551615"},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    pto_scalar lo = parse_ok(k[i].lo, k[i].dt), hi = parse_ok(k[i].hi, k[i].dt);
    char again[32];
    if (pto_dtype_is_signed(k[i].dt))
      snprintf(again, sizeof again, "%lld", (long long)lo.i);
    else
      snprintf(again, sizeof again, "%llu", (unsigned long long)lo.u);
    assert_string_equal(again, k[i].lo);
    snprintf(again, sizeof again, "%llu", (unsigned long long)hi.u);
    assert_string_equal(again, k[i].hi);
    assert_pto_ok(pto_scalar_check(lo));
    assert_pto_ok(pto_scalar_check(hi));
    char want[96];
    snprintf(want, sizeof want, "out of range for %s: expected an integer %s",
             pto_dtype_name(k[i].dt), k[i].range);
    parse_bad(k[i].below, k[i].dt, want);
    parse_bad(k[i].above, k[i].dt, want);
  }
  assert_int_equal(parse_ok("-7", PTO_DTYPE_I8).i, -7);
  assert_int_equal(parse_ok("-0", PTO_DTYPE_U8).u, 0);
}

/* pto_dtype_int_range: the range the parser and the check hold integers to (the Python package
 * asks for it too); none for a float or an unknown dtype. */
static void test_dtype_int_range(void **state) {
  (void)state;
  int64_t lo = 7;
  uint64_t hi = 7;
  assert_int_equal(pto_dtype_int_range(PTO_DTYPE_I8, &lo, &hi), 0);
  assert_true(lo == -128 && hi == 127);
  assert_int_equal(pto_dtype_int_range(PTO_DTYPE_BOOL, &lo, &hi), 0);
  assert_true(lo == 0 && hi == 1);
  assert_int_equal(pto_dtype_int_range(PTO_DTYPE_U64, &lo, &hi), 0);
  assert_true(lo == 0 && hi == UINT64_MAX);
  assert_int_equal(pto_dtype_int_range(PTO_DTYPE_INDEX, &lo, &hi), 0);
  assert_true(lo == INT64_MIN && hi == INT64_MAX);
  lo = 7, hi = 7;
  assert_int_equal(pto_dtype_int_range(PTO_DTYPE_F16, &lo, &hi), -1);
  assert_int_equal(pto_dtype_int_range(PTO_DTYPE_COUNT, &lo, &hi), -1);
  assert_int_equal(pto_dtype_int_range((pto_dtype)-1, &lo, &hi), -1);
  assert_true(lo == 7 && hi == 7);
}

static void test_scalar_parse_hex_bool_float(void **state) {
  assert_int_equal(parse_ok("0x7f", PTO_DTYPE_I8).i, 127);
  assert_int_equal(parse_ok("-0x80", PTO_DTYPE_I8).i, -128);
  assert_int_equal(parse_ok("0XfF", PTO_DTYPE_U8).u, 255);
  assert_true(parse_ok("0xffffffffffffffff", PTO_DTYPE_U64).u == UINT64_MAX);
  parse_bad("0x80", PTO_DTYPE_I8, "out of range for i8");
  assert_int_equal(parse_ok("010", PTO_DTYPE_I32).i, 10); /* decimal, not octal */
  assert_int_equal(parse_ok("true", PTO_DTYPE_BOOL).i, 1);
  assert_int_equal(parse_ok("1", PTO_DTYPE_BOOL).i, 1);
  assert_int_equal(parse_ok("false", PTO_DTYPE_BOOL).i, 0);
  assert_int_equal(parse_ok("0", PTO_DTYPE_BOOL).i, 0);
  parse_bad("2", PTO_DTYPE_BOOL, "not a valid bool value: expected true, false, 1 or 0");
  parse_bad("yes", PTO_DTYPE_BOOL, "not a valid bool value");
  assert_true(parse_ok("0.5", PTO_DTYPE_F32).f == 0.5);
  assert_true(parse_ok("0.1", PTO_DTYPE_F32).f == (double)0.1f); /* rounded to the dtype */
  assert_true(parse_ok("0.1", PTO_DTYPE_F64).f == 0.1);
  assert_true(parse_ok("0.1", PTO_DTYPE_F16).f == (double)pto_f16_to_f32(pto_f32_to_f16(0.1f)));
  assert_true(parse_ok("0.1", PTO_DTYPE_BF16).f == (double)pto_bf16_to_f32(pto_f32_to_bf16(0.1f)));
  assert_true(parse_ok("0x1p3", PTO_DTYPE_F32).f == 8.0);
  assert_true(parse_ok("65504", PTO_DTYPE_F16).f == 65504.0);
  assert_true(isinf(parse_ok("-inf", PTO_DTYPE_F32).f));
  assert_true(isnan(parse_ok("nan", PTO_DTYPE_F16).f));
  assert_true(parse_ok("1e-50", PTO_DTYPE_F32).f == 0.0); /* underflow rounds */
  parse_bad("65536", PTO_DTYPE_F16, "out of range for f16: a finite f16 is at most 65504");
  parse_bad("1e39", PTO_DTYPE_F32, "out of range for f32");
  parse_bad("1e39", PTO_DTYPE_BF16, "out of range for bf16");
  parse_bad("1e400", PTO_DTYPE_F64, "out of range for f64");
  assert_true(parse_ok("1e39", PTO_DTYPE_F64).f == 1e39);
}

/* A NaN reads as the quiet NaN of its sign, whatever its payload: a -D binding is written into
 * program.ptir (nan, -nan) and the manifest, which hold no payload, and must read back as the
 * value the binaries were compiled for (-D x=nan(0x20000000) failed every load of its entry:
 * "the signature or kernel table does not match"). */
static void test_scalar_parse_nan_keeps_its_sign_not_its_payload(void **state) {
  (void)state;
  static const pto_dtype dts[] = {PTO_DTYPE_F16, PTO_DTYPE_BF16, PTO_DTYPE_F32, PTO_DTYPE_F64};
  for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
    pto_scalar pos = parse_ok("nan", dts[i]), neg = parse_ok("-nan", dts[i]);
    assert_true(isnan(pos.f) && !signbit(pos.f) && isnan(neg.f) && signbit(neg.f));
    pto_scalar p1 = parse_ok("nan(0x20000000)", dts[i]);
    pto_scalar p2 = parse_ok("-nan(0x8000000000)", dts[i]);
    assert_true(pto_scalar_to_slot(p1) == pto_scalar_to_slot(pos));
    assert_true(pto_scalar_to_slot(p2) == pto_scalar_to_slot(neg));
    assert_true(pto_scalar_to_slot(pos) != pto_scalar_to_slot(neg));
  }
}

static void test_scalar_parse_refuses_garbage(void **state) {
  static const char *const ints[] = {"",   " 1",  "1 ", "+1",    "1.0",  "1e3",  "abc",
                                     "0x", "--1", "-",  "12abc", "0x1g", "1_000"};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
    parse_bad(ints[i], PTO_DTYPE_I32,
              "not a valid i32 value: expected an integer from -2147483648 to 2147483647 "
              "(decimal or 0x hex)");
    parse_bad(ints[i], PTO_DTYPE_U64, "not a valid u64 value");
  }
  static const char *const floats[] = {"", " 1", "1 ", "abc", "1.0f", "0.5x", "--1"};
  for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++)
    parse_bad(floats[i], PTO_DTYPE_F32, "not a valid f32 value: expected a number");
  parse_bad("99999999999999999999999", PTO_DTYPE_I64, "out of range for i64");
  parse_bad("-99999999999999999999999", PTO_DTYPE_I64, "out of range for i64");
  pto_scalar s;
  assert_status_contains(pto_scalar_parse(NULL, PTO_DTYPE_I32, &s), "are required");
  pto_status st = pto_scalar_parse("1", PTO_DTYPE_COUNT, &s);
  assert_status_contains(st, "a valid dtype");
}

static void test_scalar_check_names_value_and_range(void **state) {
  pto_scalar s = {.dtype = PTO_DTYPE_I8, .i = 300};
  pto_status st = pto_scalar_check(s);
  assert_status_contains(
      st, "the value 300: out of range for i8: expected an integer from -128 to 127");
  s = (pto_scalar){.dtype = PTO_DTYPE_U8, .u = 256};
  st = pto_scalar_check(s);
  assert_status_contains(st, "the value 256: out of range for u8");
  s = (pto_scalar){.dtype = PTO_DTYPE_U64, .u = UINT64_MAX};
  assert_pto_ok(pto_scalar_check(s));
  s = (pto_scalar){.dtype = PTO_DTYPE_I64, .i = INT64_MIN};
  assert_pto_ok(pto_scalar_check(s));
  s = (pto_scalar){.dtype = PTO_DTYPE_BOOL, .i = 2};
  st = pto_scalar_check(s);
  assert_status_contains(st, "out of range for bool: expected an integer from 0 to 1");
  s = (pto_scalar){.dtype = PTO_DTYPE_I16, .i = -32769};
  st = pto_scalar_check(s);
  assert_status_contains(st, "the value -32769");
  s = (pto_scalar){.dtype = PTO_DTYPE_F16, .f = 1e300};
  assert_pto_ok(pto_scalar_check(s)); /* floats: the slot rounds */
}

/* Every dtype's element round-trips through pto_elem_store/pto_elem_load at an unaligned
 * address, touching only its own bytes, as the slot conversion defines it. */
static void test_elem_load_store(void **state) {
  static const char *const vals[PTO_DTYPE_COUNT] = {"true",
                                                    "-128",
                                                    "-32768",
                                                    "-2147483648",
                                                    "-9223372036854775808",
                                                    "255",
                                                    "65535",
                                                    "4294967295",
                                                    "18446744073709551615",
                                                    "-0.5",
                                                    "3.5",
                                                    "0.1",
                                                    "0.1",
                                                    "-42"};
  for (int d = 0; d < PTO_DTYPE_COUNT; d++) {
    pto_scalar v = parse_ok(vals[d], (pto_dtype)d);
    unsigned char buf[3 + 2 * 8];
    memset(buf, 0xa5, sizeof buf);
    size_t n = pto_dtype_size((pto_dtype)d);
    pto_elem_store((pto_dtype)d, buf + 3, 1, v);
    for (size_t b = 0; b < sizeof buf; b++)
      if (b < 3 + n || b >= 3 + 2 * n) assert_int_equal(buf[b], 0xa5);
    uint64_t slot = 0;
    memcpy(&slot, buf + 3 + n, n);
    assert_true(slot == (n == 8 ? pto_scalar_to_slot(v)
                                : pto_scalar_to_slot(v) & ((UINT64_C(1) << (8 * n)) - 1)));
    pto_scalar back = pto_elem_load((pto_dtype)d, buf + 3, 1);
    assert_int_equal(back.dtype, d);
    assert_true(pto_scalar_to_slot(back) == pto_scalar_to_slot(v));
    if (pto_dtype_is_float((pto_dtype)d))
      assert_true(back.f == v.f);
    else
      assert_true(back.u == v.u);
  }
  int8_t b = -3; /* loads sign-extend signed ints and zero-extend unsigned ones */
  assert_int_equal(pto_elem_load(PTO_DTYPE_I8, &b, 0).i, -3);
  assert_int_equal(pto_elem_load(PTO_DTYPE_U8, &b, 0).u, 253);
  assert_int_equal(pto_elem_load(PTO_DTYPE_BOOL, &b, 0).i, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dtype_names_round_trip),
      cmocka_unit_test(test_f16_rounds_to_nearest_even),
      cmocka_unit_test(test_bf16_rounds_to_nearest_even),
      cmocka_unit_test(test_scalar_slots),
      cmocka_unit_test(test_status_annotate_prefixes_message),
      cmocka_unit_test(test_scalar_parse_int_bounds),
      cmocka_unit_test(test_dtype_int_range),
      cmocka_unit_test(test_scalar_parse_hex_bool_float),
      cmocka_unit_test(test_scalar_parse_nan_keeps_its_sign_not_its_payload),
      cmocka_unit_test(test_scalar_parse_refuses_garbage),
      cmocka_unit_test(test_scalar_check_names_value_and_range),
      cmocka_unit_test(test_elem_load_store),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
