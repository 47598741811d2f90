/* The sim platform's use of the machine. The CPUs a worker counts by default are the ones this
 * process may run on. The device arena (runtime/devmem.c): what pto__rt_devmem_alloc_whole says
 * about a buffer's contents. A launch skips zeroing an out parameter's device copy only when the
 * arena says its bytes were never handed out; memory used before must be zeroed again, or a
 * kernel that leaves part of its output unwritten would show the previous launch's data. */
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime_internal.h"
#include "testutil.h"

static void test_fresh_memory_is_zero_and_reused_memory_is_not_assumed_zero(void **state) {
  (void)state;
  pto__rt_devmem m;
  assert_null(pto__rt_devmem_init(&m, 1 << 20));
  uint64_t a = 0, b = 0, c = 0;
  int zero = -1;
  /* Large enough to be populated in one call (whole pages of it). */
  assert_null(pto__rt_devmem_alloc_whole(&m, 100000, "a", NULL, &a, &zero));
  assert_int_equal(zero, 1);
  uint8_t *pa = pto__rt_devmem_host(&m, a);
  assert_true(tu_all_zero(pa, 100000));
  memset(pa, 0xab, 100000); /* a launch's data */
  /* A second buffer after it: never handed out either. */
  assert_null(pto__rt_devmem_alloc_whole(&m, 5000, "b", NULL, &b, &zero));
  assert_int_equal(zero, 1);
  assert_true(tu_all_zero(pto__rt_devmem_host(&m, b), 5000));
  /* a's memory again, first fit: dirty, so the caller must zero it. */
  assert_int_equal(pto__rt_devmem_free(&m, a), 1);
  assert_null(pto__rt_devmem_alloc_whole(&m, 64, "c", NULL, &c, &zero));
  assert_int_equal(c, a);
  assert_int_equal(zero, 0);
  /* A buffer that starts in used memory and runs past it is not all zero either. */
  assert_int_equal(pto__rt_devmem_free(&m, c), 1);
  assert_int_equal(pto__rt_devmem_free(&m, b), 1);
  assert_null(pto__rt_devmem_alloc_whole(&m, 200000, "d", NULL, &c, &zero));
  assert_int_equal(c, a);
  assert_int_equal(zero, 0);
  /* Plain allocations move the mark too. */
  assert_int_equal(pto__rt_devmem_free(&m, c), 1);
  uint64_t e = 0;
  assert_null(pto__rt_devmem_alloc(&m, 300000, 64, "e", NULL, &e));
  memset(pto__rt_devmem_host(&m, e), 1, 300000);
  assert_int_equal(pto__rt_devmem_free(&m, e), 1);
  assert_null(pto__rt_devmem_alloc_whole(&m, 300000, "f", NULL, &e, &zero));
  assert_int_equal(zero, 0);
  pto__rt_devmem_fini(&m);
}

static void test_borrowed_memory_is_never_assumed_zero(void **state) {
  (void)state;
  static uint8_t heap[1 << 16];
  memset(heap, 7, sizeof heap);
  pto__rt_devmem m;
  assert_null(pto__rt_devmem_init_over(&m, heap, sizeof heap, 0x700000000000ull, "the knob"));
  uint64_t a = 0;
  int zero = -1;
  assert_null(pto__rt_devmem_alloc_whole(&m, 20000, "a", NULL, &a, &zero));
  assert_int_equal(zero, 0);
  assert_int_equal(((uint8_t *)pto__rt_devmem_host(&m, a))[0], 7);
  pto__rt_devmem_fini(&m);
}

/* In a child pinned to one CPU: one usable CPU, whatever the machine has online. */
static void test_usable_cpus_follow_the_affinity_mask(void **state) {
  (void)state;
  assert_true(pto__rt_usable_cpus() >= 1);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) _exit(2);
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
      if (CPU_ISSET(c, &set)) first = c;
    CPU_ZERO(&set);
    CPU_SET(first, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) _exit(3);
    _exit(pto__rt_usable_cpus() == 1 ? 0 : 1);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fresh_memory_is_zero_and_reused_memory_is_not_assumed_zero),
      cmocka_unit_test(test_borrowed_memory_is_never_assumed_zero),
      cmocka_unit_test(test_usable_cpus_follow_the_affinity_mask),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
