#include "pto/arena.h"
#include "pto/base.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct chunk {
  struct chunk *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
} chunk;

struct pto_arena {
  chunk *head;
  size_t bytes;
  long fail_after; /* -1: never */
};

pto_arena *pto_arena_create(void) {
  pto_arena *a = pto_calloc(1, sizeof *a);
  if (a) a->fail_after = -1;
  return a;
}

void pto_arena_destroy(pto_arena *a) {
  if (!a) return;
  for (chunk *c = a->head, *n; c; c = n) {
    n = c->next;
    free(c);
  }
  free(a);
}

void *pto_arena_alloc(pto_arena *a, size_t size) {
  if (a->fail_after == 0) return NULL;
  if (a->fail_after > 0) a->fail_after--;
  size = (size + 15) & ~(size_t)15;
  if (size == 0) size = 16;
  chunk *c = a->head;
  if (!c || c->cap - c->used < size) {
    size_t cap = size > 16384 ? size : 16384;
    c = pto_malloc(sizeof(chunk) + cap);
    if (!c) return NULL;
    c->used = 0;
    c->cap = cap;
    c->next = a->head;
    a->head = c;
  }
  void *p = c->data + c->used;
  c->used += size;
  a->bytes += size;
  memset(p, 0, size);
  return p;
}

void *pto_arena_realloc(pto_arena *a, void *old, size_t old_size, size_t new_size) {
  void *p = pto_arena_alloc(a, new_size);
  if (p && old) memcpy(p, old, old_size < new_size ? old_size : new_size);
  return p;
}

char *pto_arena_strndup(pto_arena *a, const char *s, size_t n) {
  char *p = pto_arena_alloc(a, n + 1);
  if (p) memcpy(p, s, n);
  return p;
}

char *pto_arena_strdup(pto_arena *a, const char *s) { return pto_arena_strndup(a, s, strlen(s)); }

size_t pto_arena_bytes(const pto_arena *a) { return a->bytes; }

int pto_arena_owns(const pto_arena *a, const void *p) {
  uintptr_t x = (uintptr_t)p;
  for (const chunk *c = a ? a->head : NULL; c; c = c->next)
    if (x >= (uintptr_t)c->data && x < (uintptr_t)c->data + c->used) return 1;
  return 0;
}

#ifdef PTO_TEST_HOOKS
#include "alloc_test.h"

void pto__arena_fail_after(pto_arena *a, long n) { a->fail_after = n; }
#endif
