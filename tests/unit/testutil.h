/* Helpers shared by the cmocka tests. */
#ifndef PTO_TESTUTIL_H
#define PTO_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* After what it uses and does not include itself (size_t, va_list, jmp_buf). */
#include <cmocka.h>

#include "pto/status.h"

/* Fails the test with the status message if s is not PTO_OK. */
#define assert_pto_ok(expr)                                                                        \
  do {                                                                                             \
    pto_status s__ = (expr);                                                                       \
    if (s__) {                                                                                     \
      print_error("%s: %s\n", #expr, pto_status_message(s__));                                     \
      pto_status_free(s__);                                                                        \
      fail();                                                                                      \
    }                                                                                              \
  } while (0)

/* Asserts that s failed and its message contains needle; frees s. */
void tu_assert_status_contains(pto_status s, const char *needle, const char *file, int line);
#define assert_status_contains(s, needle)                                                          \
  tu_assert_status_contains((s), (needle), __FILE__, __LINE__)

/* malloc'd contents of a file (NUL-terminated), or NULL. */
char *tu_read_file(const char *path, size_t *out_len);
int tu_write_file(const char *path, const char *text);
/* Whether the n bytes at p are all zero. */
int tu_all_zero(const void *p, size_t n);
/* A fresh temporary directory under $TMPDIR (malloc'd path). */
char *tu_mkdtemp(const char *tag);
/* Removes a directory tree. */
void tu_rmtree(const char *path);
/* Runs a shell command, captures stdout+stderr (malloc'd) and returns the exit status. */
int tu_run(char **out_output, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
