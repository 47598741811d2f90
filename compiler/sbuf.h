/* A growable text buffer for emitters. Allocation failure is sticky: once set, appends are
 * ignored and sb_finish returns NULL, so emitters check once at the end. */
#ifndef PTO_COMPILER_SBUF_H
#define PTO_COMPILER_SBUF_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf {
  char *data;
  size_t len, cap;
  int failed;
} sbuf;

static inline void sb_vprintf(sbuf *b, const char *fmt, va_list ap) {
  if (b->failed) return;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    b->failed = 1;
    return;
  }
  if (b->len + (size_t)n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + (size_t)n + 1) cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
      b->failed = 1;
      return;
    }
    b->data = d;
    b->cap = cap;
  }
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

static inline __attribute__((format(printf, 2, 3))) void sb_printf(sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(b, fmt, ap);
  va_end(ap);
}

static inline void sb_indent(sbuf *b, int depth) { sb_printf(b, "%*s", depth * 2, ""); }

/* Returns the text (caller frees) or NULL if any append failed. */
static inline char *sb_finish(sbuf *b) {
  if (b->failed || !b->data) {
    free(b->data);
    if (b->failed) return NULL;
    return calloc(1, 1);
  }
  return b->data;
}

#endif
