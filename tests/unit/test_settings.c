/* base's setting parsers (pto/base.h): integers in a range and names from a list; a bad value
 * is an error naming the setting and what it accepts (issue #34 item 23). */
#include <stdlib.h>
#include <string.h>

#include "pto/base.h"
#include "testutil.h"

static void test_int_setting_accepts_exactly_decimal_integers_in_range(void **state) {
  (void)state;
  int64_t v = -7;
  assert_pto_ok(pto_parse_int_setting("X", "1", 1, 100, &v));
  assert_int_equal(v, 1);
  assert_pto_ok(pto_parse_int_setting("X", "100", 1, 100, &v));
  assert_int_equal(v, 100);
  assert_pto_ok(pto_parse_int_setting("X", "-5", -10, 10, &v));
  assert_int_equal(v, -5);
  assert_pto_ok(pto_parse_int_setting("X", "9223372036854775807", 0, INT64_MAX, &v));
  assert_true(v == INT64_MAX);
  static const char *const bad[] = {
      "abc", "1e3", "",   " 5", "5 ",  "+5",         "0x10",
      "5ms", "1.5", "-1", "0",  "101", "4294967297", "99999999999999999999",
      "-"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    v = 42;
    pto_status s = pto_parse_int_setting("PTO_X_MS", bad[i], 1, 100, &v);
    assert_non_null(s);
    assert_int_equal(pto_status_code_of(s), PTO_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(pto_status_message(s), "PTO_X_MS is '"));
    assert_non_null(strstr(pto_status_message(s), "expected an integer from 1 to 100"));
    pto_status_free(s);
    assert_int_equal(v, 42); /* untouched */
  }
  assert_status_contains(pto_parse_int_setting("--timeline-width", "-3", 30, 10000, &v),
                         "--timeline-width is '-3': expected an integer from 30 to 10000");
}

static void test_env_int_and_choice(void **state) {
  (void)state;
  int64_t v = 0;
  unsetenv("PTO_TEST_SETTING");
  assert_pto_ok(pto_env_int("PTO_TEST_SETTING", 1, 10, 7, &v));
  assert_int_equal(v, 7);
  setenv("PTO_TEST_SETTING", "", 1);
  assert_pto_ok(pto_env_int("PTO_TEST_SETTING", 1, 10, 7, &v));
  assert_int_equal(v, 7);
  setenv("PTO_TEST_SETTING", "3", 1);
  assert_pto_ok(pto_env_int("PTO_TEST_SETTING", 1, 10, 7, &v));
  assert_int_equal(v, 3);
  setenv("PTO_TEST_SETTING", "11", 1);
  assert_status_contains(pto_env_int("PTO_TEST_SETTING", 1, 10, 7, &v),
                         "PTO_TEST_SETTING is '11': expected an integer from 1 to 10");
  static const char *const modes[] = {"shared", "separate"};
  int m = -1;
  unsetenv("PTO_TEST_SETTING");
  assert_pto_ok(pto_env_choice("PTO_TEST_SETTING", modes, 2, -1, &m));
  assert_int_equal(m, -1);
  setenv("PTO_TEST_SETTING", "separate", 1);
  assert_pto_ok(pto_env_choice("PTO_TEST_SETTING", modes, 2, -1, &m));
  assert_int_equal(m, 1);
  setenv("PTO_TEST_SETTING", "sharde", 1);
  assert_status_contains(pto_env_choice("PTO_TEST_SETTING", modes, 2, -1, &m),
                         "PTO_TEST_SETTING is 'sharde': expected one of: shared, separate");
  unsetenv("PTO_TEST_SETTING");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int_setting_accepts_exactly_decimal_integers_in_range),
      cmocka_unit_test(test_env_int_and_choice),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
