/* Allocation-failure injection: compiled only into the test build of base (PTO_TEST_HOOKS:
 * pto_base_test_objects, linked by the unit tests' pto_test_support and by pto_test). The
 * libpto_base that ships has none of it and exports none of it (CTest exported_symbols). */
#ifndef PTO_BASE_ALLOC_TEST_H
#define PTO_BASE_ALLOC_TEST_H

#ifndef PTO_TEST_HOOKS
#error "alloc_test.h is for the test build (PTO_TEST_HOOKS) only"
#endif

/* Allocation number n from now (0 = the next) fails; with sticky, every later one fails too;
 * n < 0 turns injection off. Process-wide (atomic counters). An n >= 0 resets the two counters
 * below, which count only while injection is on. */
void pto_alloc_fail_at(long n, int sticky);
/* Allocations since the last pto_alloc_fail_at while injection was on. */
long pto_alloc_count(void);
/* Allocations failed since the last pto_alloc_fail_at. */
long pto_alloc_failures(void);
/* Arena a's n-th following allocation (0 = the next) and all after it fail; -1 disables. */
typedef struct pto_arena pto_arena;
void pto__arena_fail_after(pto_arena *a, long n);

#endif
