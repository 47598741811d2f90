/* The one allocator of pto's libraries (pto/base.h): malloc, calloc, realloc and the string
 * duplicates, each of which a test can make fail (pto_alloc_fail_at, in the test build only).
 * Memory comes from libc and is released with free(3), so a caller never needs to know which
 * allocator made a block. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/base.h"

#ifdef PTO_TEST_HOOKS
#include "alloc_test.h"

/* The injection state: the only mutable globals of base/, atomic because allocations happen on
 * a worker's pool threads too. g_next counts down to the failing allocation; < 0: off. */
static atomic_long g_next = -1;
static atomic_int g_sticky;
static atomic_long g_count, g_failed;

static int should_fail(void) {
  if (atomic_load_explicit(&g_next, memory_order_relaxed) < 0) return 0;
  atomic_fetch_add(&g_count, 1);
  long left = atomic_fetch_sub(&g_next, 1);
  if (left == 0) {
    /* This call fails; later ones fail too when sticky, else injection ends here. */
    if (atomic_load(&g_sticky))
      atomic_store(&g_next, 0);
    else
      atomic_store(&g_next, -1);
    atomic_fetch_add(&g_failed, 1);
    return 1;
  }
  if (left < 0) { /* raced with an injection that just ended */
    atomic_store(&g_next, -1);
    return 0;
  }
  return 0;
}

void pto_alloc_fail_at(long n, int sticky) {
  if (n < 0) { /* off; the counters stay readable */
    atomic_store(&g_next, -1);
    return;
  }
  atomic_store(&g_sticky, sticky != 0);
  atomic_store(&g_count, 0);
  atomic_store(&g_failed, 0);
  atomic_store(&g_next, n);
}

long pto_alloc_count(void) { return atomic_load(&g_count); }

long pto_alloc_failures(void) { return atomic_load(&g_failed); }

#else
/* The shipped library: no injection, nothing to test for. */
static inline int should_fail(void) { return 0; }
#endif

void pto_free(void *p) { free(p); }

void *pto_malloc(size_t n) { return should_fail() ? NULL : malloc(n ? n : 1); }

void *pto_calloc(size_t n, size_t size) {
  return should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

void *pto_realloc(void *p, size_t n) { return should_fail() ? NULL : realloc(p, n ? n : 1); }

char *pto_strndup(const char *s, size_t n) {
  size_t len = strnlen(s, n);
  char *d = pto_malloc(len + 1);
  if (!d) return NULL;
  memcpy(d, s, len);
  d[len] = 0;
  return d;
}

char *pto_strdup(const char *s) { return pto_strndup(s, strlen(s)); }

void *pto_aligned_alloc(size_t align, size_t n) {
  if (should_fail()) return NULL;
  n = (n + align - 1) / align * align; /* aligned_alloc wants a multiple of align */
  return aligned_alloc(align, n ? n : align);
}

char *pto_strdup_printf(const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *d = n < 0 ? NULL : pto_malloc((size_t)n + 1);
  if (d) vsnprintf(d, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return d;
}

char *pto_realpath(const char *path) {
  char buf[PATH_MAX];
  if (!realpath(path, buf)) return NULL;
  char *d = pto_strdup(buf);
  if (!d) errno = ENOMEM;
  return d;
}

/* ---- growable arrays ---------------------------------------------------------------------- */

/* The one growth rule: from max(cap, 16), double until need is held, clamping to max_count (the
 * largest count the caller's counter holds, and no more than PTRDIFF_MAX bytes). need above that
 * fails; nothing is changed on failure. */
static int grow_to(void *parr, size_t elem, size_t cap, size_t need, size_t max_count,
                   size_t *out_cap) {
  if (need <= cap) {
    *out_cap = cap;
    return 0;
  }
  if (elem == 0) return -1;
  if (max_count > (size_t)PTRDIFF_MAX / elem) max_count = (size_t)PTRDIFF_MAX / elem;
  if (need > max_count) return -1;
  size_t n = cap > 16 ? cap : 16;
  while (n < need)
    n = n > max_count / 2 ? max_count : 2 * n;
  if (n > max_count) n = max_count;
  void *old;
  memcpy(&old, parr, sizeof old);
  void *p = pto_realloc(old, n * elem);
  if (!p) return -1;
  memcpy(parr, &p, sizeof p);
  *out_cap = n;
  return 0;
}

int pto_grow(void *parr, size_t elem, size_t *cap, size_t need) {
  return grow_to(parr, elem, *cap, need, SIZE_MAX, cap);
}

int pto_grow_int(void *parr, size_t elem, int *cap, int64_t need) {
  size_t n;
  if (need < 0 || *cap < 0) return -1;
  if (grow_to(parr, elem, (size_t)*cap, (size_t)need, INT_MAX, &n)) return -1;
  *cap = (int)n;
  return 0;
}
