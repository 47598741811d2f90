/* The pto command's host memory for tensor data (tools/tensor_data.c): large tensors are carved
 * from one huge-page region, zeroed, aligned and separate; small ones come from calloc; the region
 * is given back when its last tensor is freed, and a later allocation reserves it again. */
#include <stdint.h>
#include <string.h>

/* tools/tensor_data.c belongs to the pto executable, not a library: compile it into this test. */
#include "../../tools/tensor_data.c"
#include "testutil.h"

static void test_large_tensors_share_a_region_small_ones_do_not(void **state) {
  (void)state;
  uint8_t *a = cli_tensor_data_alloc(200000), *b = cli_tensor_data_alloc(65536 + 3);
  uint8_t *small = cli_tensor_data_alloc(100), *empty = cli_tensor_data_alloc(0);
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(small);
  assert_non_null(empty);
  assert_non_null(g_data.base);
  assert_true(a >= g_data.base && b >= g_data.base);
  assert_true(small < g_data.base || small >= g_data.base + DATA_REGION_BYTES);
  assert_int_equal((uintptr_t)a % 64, 0);
  assert_int_equal((uintptr_t)b % 64, 0);
  assert_true(b >= a + 200000); /* carved in order, no overlap */
  assert_true(tu_all_zero(a, 200000) && tu_all_zero(b, 65536 + 3) && tu_all_zero(small, 100));
  memset(a, 1, 200000);
  memset(b, 2, 65536 + 3);
  assert_int_equal(a[199999], 1); /* b did not overwrite a's tail */
  cli_tensor_data_free(small);
  cli_tensor_data_free(empty);
  cli_tensor_data_free(a);
  assert_non_null(g_data.base); /* b still lives there */
  cli_tensor_data_free(b);
  assert_null(g_data.base);
  cli_tensor_data_free(NULL);
  /* Reserved again, zeroed again. */
  uint8_t *c = cli_tensor_data_alloc(300000);
  assert_non_null(c);
  assert_non_null(g_data.base);
  assert_true(tu_all_zero(c, 300000));
  cli_tensor_data_free(c);
  assert_null(g_data.base);
}

/* A tensor larger than the region comes from calloc. */
static void test_a_tensor_larger_than_the_region_comes_from_calloc(void **state) {
  (void)state;
  uint8_t *a = cli_tensor_data_alloc(100000);
  assert_non_null(a);
  g_data.used = DATA_REGION_BYTES - 64; /* as if the region were all but full */
  uint8_t *b = cli_tensor_data_alloc(100000);
  if (b) {
    assert_true(b < g_data.base || b >= g_data.base + DATA_REGION_BYTES);
    cli_tensor_data_free(b);
  }
  cli_tensor_data_free(a);
  assert_null(g_data.base);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_large_tensors_share_a_region_small_ones_do_not),
      cmocka_unit_test(test_a_tensor_larger_than_the_region_comes_from_calloc),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
