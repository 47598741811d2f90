#include "pto/status.h"
#include "pto/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pto_status_impl {
  pto_status_code code;
  char *message;
};

/* Returned when the status itself cannot be allocated; never freed. */
static struct pto_status_impl g_oom_status = {PTO_STATUS_OUT_OF_MEMORY,
                                              (char *)"out of memory while reporting an error"};

pto_status pto_status_makev(pto_status_code code, const char *fmt, va_list ap) {
  struct pto_status_impl *s = pto_malloc(sizeof *s);
  if (!s) return &g_oom_status;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) n = 0;
  s->message = pto_malloc((size_t)n + 1);
  if (!s->message) {
    free(s);
    return &g_oom_status;
  }
  vsnprintf(s->message, (size_t)n + 1, fmt, ap);
  s->code = code == PTO_STATUS_OK ? PTO_STATUS_INTERNAL : code;
  return s;
}

pto_status pto_status_make(pto_status_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pto_status s = pto_status_makev(code, fmt, ap);
  va_end(ap);
  return s;
}

pto_status pto_status_annotate(pto_status s, const char *fmt, ...) {
  if (!s || s == &g_oom_status) return s;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return s;
  size_t old = strlen(s->message);
  char *m = pto_malloc((size_t)n + 2 + old + 1);
  if (!m) return s;
  va_start(ap, fmt);
  vsnprintf(m, (size_t)n + 1, fmt, ap);
  va_end(ap);
  memcpy(m + n, ": ", 2);
  memcpy(m + n + 2, s->message, old + 1);
  free(s->message);
  s->message = m;
  return s;
}

pto_status_code pto_status_code_of(pto_status s) { return s ? s->code : PTO_STATUS_OK; }

const char *pto_status_message(pto_status s) { return s ? s->message : "ok"; }

const char *pto_status_code_name(pto_status_code code) {
  switch (code) {
  case PTO_STATUS_OK: return "ok";
  case PTO_STATUS_INVALID_ARGUMENT: return "invalid argument";
  case PTO_STATUS_NOT_FOUND: return "not found";
  case PTO_STATUS_OUT_OF_MEMORY: return "out of memory";
  case PTO_STATUS_IO: return "i/o error";
  case PTO_STATUS_FAILED_PRECONDITION: return "failed precondition";
  case PTO_STATUS_DATA_LOSS: return "data loss";
  case PTO_STATUS_UNIMPLEMENTED: return "unimplemented";
  case PTO_STATUS_INTERNAL: return "internal error";
  case PTO_STATUS_LAUNCH: return "launch failed";
  }
  return "unknown";
}

void pto_status_free(pto_status s) {
  if (!s || s == &g_oom_status) return;
  free(s->message);
  free(s);
}
