/* base's file readers (pto/base.h): the stream reader keeps to its size limit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/base.h"
#include "testutil.h"

/* Reads text through a stream with limit max; returns the status, *out the bytes read. */
static pto_status read_text(const char *text, uint64_t max, uint8_t **out, size_t *out_len) {
  FILE *f = fmemopen((void *)text, strlen(text), "r");
  assert_non_null(f);
  pto_status s = pto_file_read_stream(f, "stdin", max, out, out_len);
  fclose(f);
  return s;
}

static void test_file_read_stream_keeps_to_its_limit(void **state) {
  (void)state;
  uint8_t *buf = NULL;
  size_t len = 0;
  /* At the limit: read whole, NUL-terminated. */
  assert_pto_ok(read_text("0123456789", 10, &buf, &len));
  assert_int_equal(len, 10);
  assert_string_equal((char *)buf, "0123456789");
  free(buf);
  /* One byte over: refused, nothing returned. */
  buf = (uint8_t *)"untouched";
  assert_status_contains(read_text("0123456789X", 10, &buf, &len),
                         "stdin holds more than the limit of 10 bytes for this kind of input");
  assert_null(buf);
  assert_int_equal(len, 0);
  /* 0: no limit. */
  assert_pto_ok(read_text("0123456789X", 0, &buf, &len));
  assert_int_equal(len, 11);
  free(buf);
}

/* A limit in MiB is worded in MiB, and the stream past 1 MiB + 1 byte is not read. */
static void test_file_read_stream_limit_in_mib(void **state) {
  (void)state;
  size_t n = (3u << 20) + 5;
  char *big = malloc(n + 1);
  assert_non_null(big);
  memset(big, 'a', n);
  big[n] = 0;
  FILE *f = fmemopen(big, n, "r");
  assert_non_null(f);
  uint8_t *buf = NULL;
  size_t len = 0;
  assert_status_contains(pto_file_read_stream(f, "stdin", 1u << 20, &buf, &len),
                         "stdin holds more than the limit of 1 MiB for this kind of input");
  assert_int_equal(ftell(f), (1 << 20) + 1);
  fclose(f);
  free(big);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_file_read_stream_keeps_to_its_limit),
      cmocka_unit_test(test_file_read_stream_limit_in_mib),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
