/* pto arena: bump allocation for IR nodes and other data freed all at once.
 *
 * Allocation failure returns NULL (never aborts). The test build can make the n-th allocation
 * fail (pto__arena_fail_after, base/alloc_test.h), so out-of-memory paths are testable. Not
 * thread-safe: one owner. */
#ifndef PTO_ARENA_H
#define PTO_ARENA_H

#include "pto/export.h"
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pto_arena pto_arena;

PTO_API pto_arena *pto_arena_create(void);
PTO_API void pto_arena_destroy(pto_arena *a);
/* Zeroed memory aligned to 16 bytes; NULL on failure. */
PTO_API void *pto_arena_alloc(pto_arena *a, size_t size);
/* Grows an array allocated from the arena (old contents copied; old block is not reclaimed). */
PTO_API void *pto_arena_realloc(pto_arena *a, void *old, size_t old_size, size_t new_size);
PTO_API char *pto_arena_strndup(pto_arena *a, const char *s, size_t n);
PTO_API char *pto_arena_strdup(pto_arena *a, const char *s);
PTO_API size_t pto_arena_bytes(const pto_arena *a);
/* Whether p points into memory a handed out (a linear walk over its chunks: for messages, not
 * hot paths). */
PTO_API int pto_arena_owns(const pto_arena *a, const void *p);

#ifdef __cplusplus
}
#endif
#endif
