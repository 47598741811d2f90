/* The one growable text buffer (pto/base.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/base.h"

static int reserve(pto_text *t, size_t extra) {
  if (t->failed) return 0;
  if (extra >= SIZE_MAX - t->len || pto_grow(&t->data, 1, &t->cap, t->len + extra + 1)) {
    t->failed = 1;
    return 0;
  }
  return 1;
}

void pto_text_put(pto_text *t, const char *s, size_t n) {
  if (!reserve(t, n)) return;
  if (n) memcpy(t->data + t->len, s, n);
  t->len += n;
  t->data[t->len] = 0;
}

void pto_text_puts(pto_text *t, const char *s) { pto_text_put(t, s, strlen(s)); }

void pto_text_vprintf(pto_text *t, const char *fmt, va_list ap) {
  if (t->failed) return;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    t->failed = 1;
    return;
  }
  if (!reserve(t, (size_t)n)) return;
  vsnprintf(t->data + t->len, (size_t)n + 1, fmt, ap);
  t->len += (size_t)n;
}

void pto_text_printf(pto_text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pto_text_vprintf(t, fmt, ap);
  va_end(ap);
}

void pto_text_pad(pto_text *t, size_t n) {
  if (!reserve(t, n)) return;
  memset(t->data + t->len, ' ', n);
  t->len += n;
  t->data[t->len] = 0;
}

char *pto_text_finish(pto_text *t) {
  char *d = t->data;
  int failed = t->failed;
  memset(t, 0, sizeof *t);
  if (failed) {
    free(d);
    return NULL;
  }
  return d ? d : pto_calloc(1, 1);
}

void pto_text_free(pto_text *t) {
  free(t->data);
  memset(t, 0, sizeof *t);
}
