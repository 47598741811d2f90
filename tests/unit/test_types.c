#include <math.h>
#include <string.h>

#include "pto/types.h"
#include "pto/status.h"
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
  assert_int_equal(pto_f32_to_f16(65520.0f), 0x7c00); /* rounds up to inf */
  assert_int_equal(pto_f32_to_f16(1.0f + 1.0f / 2048), 0x3c00); /* tie to even: down */
  assert_int_equal(pto_f32_to_f16(1.0f + 3.0f / 2048), 0x3c02); /* tie to even: up */
  assert_int_equal(pto_f32_to_f16(5.960464477539063e-08f), 0x0001); /* smallest subnormal */
  for (uint32_t h = 0; h < 0x7c00; h++) assert_int_equal(pto_f32_to_f16(pto_f16_to_f32((uint16_t)h)), h);
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
  pto_status_annotate(s, "writing %s", "x.so");
  assert_string_equal(pto_status_message(s), "writing x.so: disk full");
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_IO);
  pto_status_free(s);
  assert_string_equal(pto_status_message(PTO_OK), "ok");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dtype_names_round_trip),
      cmocka_unit_test(test_f16_rounds_to_nearest_even),
      cmocka_unit_test(test_bf16_rounds_to_nearest_even),
      cmocka_unit_test(test_scalar_slots),
      cmocka_unit_test(test_status_annotate_prefixes_message),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
