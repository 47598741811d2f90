/* pto status: the one error type of every fallible pto call.
 *
 * A pto_status is NULL (PTO_OK) on success. On failure it is a heap object that carries a code
 * and a message saying what was wrong, where, and what to do. The caller owns a failed status and
 * must release it with pto_status_free (or hand it on by returning it). Messages never end in a
 * newline. Library code never prints, aborts or exits: it returns a status. */
#ifndef PTO_STATUS_H
#define PTO_STATUS_H

#include "pto/export.h"
#include <stdarg.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pto_status_code {
  PTO_STATUS_OK = 0,
  PTO_STATUS_INVALID_ARGUMENT = 1, /* bad input: source text, a parameter, a file */
  PTO_STATUS_NOT_FOUND = 2,
  PTO_STATUS_OUT_OF_MEMORY = 3,
  PTO_STATUS_IO = 4,                  /* a file or process operation failed */
  PTO_STATUS_FAILED_PRECONDITION = 5, /* state forbids it: closed worker, stale binary */
  PTO_STATUS_DATA_LOSS = 6,           /* corrupt data: checksum or Build-ID mismatch */
  PTO_STATUS_UNIMPLEMENTED = 7,
  PTO_STATUS_INTERNAL = 8,
  PTO_STATUS_LAUNCH = 9, /* a launch ran and failed (division by zero, dim mismatch) */
} pto_status_code;

typedef struct pto_status_impl *pto_status;
#define PTO_OK ((pto_status)0)

/* Makes a failed status; code must not be PTO_STATUS_OK. Never returns NULL: if the message
 * cannot be allocated, a static out-of-memory status is returned (pto_status_free ignores it). */
PTO_API PTO_MUST_USE pto_status pto_status_make(pto_status_code code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
PTO_API PTO_MUST_USE pto_status pto_status_makev(pto_status_code code, const char *fmt, va_list ap);
/* Prefixes the message of s with the formatted text (followed by ": "); returns s. */
PTO_API PTO_MUST_USE pto_status pto_status_annotate(pto_status s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

PTO_API pto_status_code pto_status_code_of(pto_status s);
/* "ok" for PTO_OK. Borrowed: valid until s is freed. */
PTO_API const char *pto_status_message(pto_status s);
PTO_API const char *pto_status_code_name(pto_status_code code);
PTO_API void pto_status_free(pto_status s);

static inline bool pto_ok(pto_status s) { return s == PTO_OK; }

#define PTO_RETURN_IF_ERROR(expr)                                                                  \
  do {                                                                                             \
    pto_status pto__s = (expr);                                                                    \
    if (pto__s) return pto__s;                                                                     \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif
