/* The one array growth rule (pto_grow, pto_grow_int in base/alloc.c): doubling from 16, clamped
 * to the counter's range and PTRDIFF_MAX bytes; every overflow and allocation failure leaves the
 * array and its capacity as they were. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_test.h"
#include "pto/base.h"
#include "testutil.h"

static void test_grow_doubles_from_16_and_keeps_contents(void **state) {
  int *v = NULL;
  size_t cap = 0;
  assert_int_equal(pto_grow(&v, sizeof *v, &cap, 1), 0);
  assert_int_equal(cap, 16);
  for (int i = 0; i < 16; i++)
    v[i] = i;
  assert_int_equal(pto_grow(&v, sizeof *v, &cap, 16), 0); /* held already: unchanged */
  assert_int_equal(cap, 16);
  assert_int_equal(pto_grow(&v, sizeof *v, &cap, 17), 0);
  assert_int_equal(cap, 32);
  assert_int_equal(pto_grow(&v, sizeof *v, &cap, 1000), 0);
  assert_int_equal(cap, 1024);
  for (int i = 0; i < 16; i++)
    assert_int_equal(v[i], i);
  pto_free(v);
  int *w = NULL;
  int icap = 0;
  assert_int_equal(pto_grow_int(&w, sizeof *w, &icap, 100), 0);
  assert_int_equal(icap, 128);
  pto_free(w);
}

/* Sizes that do not fit fail without touching the array: a count past the counter's range, a
 * byte size past PTRDIFF_MAX, an element count whose doubling would overflow. */
static void test_grow_overflow_rule(void **state) {
  char *keep = pto_malloc(4);
  assert_non_null(keep);
  char *v = keep;
  size_t cap = 4;
  assert_int_equal(pto_grow(&v, 1, &cap, (size_t)PTRDIFF_MAX + 1), -1);
  assert_ptr_equal(v, keep);
  assert_int_equal(cap, 4);
  assert_int_equal(pto_grow(&v, 8, &cap, SIZE_MAX / 4), -1); /* bytes past PTRDIFF_MAX */
  assert_int_equal(pto_grow(&v, 0, &cap, 5), -1);
  assert_int_equal(cap, 4);
  int icap = 4;
  assert_int_equal(pto_grow_int(&v, 1, &icap, (int64_t)INT_MAX + 1), -1);
  assert_int_equal(pto_grow_int(&v, 1, &icap, -1), -1);
  assert_int_equal(icap, 4);
  assert_ptr_equal(v, keep);
  /* Doubling clamps to the counter's range instead of failing short of it: from 2^30, a need
   * of 2^30 + 1 gives INT_MAX (the byte size is what the allocator then refuses or grants). */
  pto_alloc_fail_at(0, 0); /* the realloc itself fails: nothing changes */
  icap = 1 << 30;
  assert_int_equal(pto_grow_int(&v, 1, &icap, (1 << 30) + 1), -1);
  assert_int_equal(pto_alloc_failures(), 1);
  assert_int_equal(icap, 1 << 30);
  assert_ptr_equal(v, keep);
  pto_alloc_fail_at(-1, 0);
  pto_free(keep);
}

/* A capacity near the top of size_t: the next size's bytes would pass PTRDIFF_MAX (and wrap as
 * size_t a step later); the rule refuses it before any allocation. */
static void test_grow_never_wraps(void **state) {
  char *v = NULL;
  size_t cap = (size_t)PTRDIFF_MAX / 2 + 1;
  assert_int_equal(pto_grow(&v, 2, &cap, cap + 1), -1); /* 2 * need bytes > PTRDIFF_MAX */
  assert_null(v);
  assert_int_equal(cap, (size_t)PTRDIFF_MAX / 2 + 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grow_doubles_from_16_and_keeps_contents),
      cmocka_unit_test(test_grow_overflow_rule),
      cmocka_unit_test(test_grow_never_wraps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
