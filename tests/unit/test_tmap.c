/* The tensor map (runtime/tmap.c) against a brute-force list: the same accesses are visited for
 * random byte ranges of every size, with tasks finishing at random, covering writes dropping
 * what they contain, sweeps, resets and queries wider than the bins held. */
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"
#include "testutil.h"

#define NTASK 4000
#define BUF 0x100000ull

typedef struct ref_entry {
  int task;
  uint64_t lo, hi;
  int removed;
} ref_entry;

typedef struct visit_log {
  int seen[NTASK * 2];
  int n;
  pto__rt_task *base;
} visit_log;

static int log_visit(void *ctx, pto__rt_tm_entry *e) {
  visit_log *v = ctx;
  v->seen[v->n++] = (int)(e->task - v->base);
  return 1;
}

static int cmp_int(const void *a, const void *b) {
  return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static uint64_t rnd(uint64_t *s) { return pto__rt_xorshift64(s); }

/* A dense 1-D region [BUF + off, BUF + off + len). The map reads its byte range only: its box
 * (extent len, stride 1) is left unset. */
static pto__rt_region region(uint64_t off, uint64_t len) {
  pto__rt_region r;
  memset(&r, 0, sizeof r);
  r.addr = r.lo = BUF + off;
  r.hi = r.lo + len;
  r.rank = 1;
  r.esize = 1;
  r.dense = 1;
  return r;
}

/* size: the buffer's, as the map sees it; above 2^26 bytes the 64-byte level uses a hash map. */
static void run_random(uint64_t seed, uint64_t span, uint64_t size, int max_len_log2) {
  static pto__rt_task tasks[NTASK];
  static ref_entry ref[NTASK];
  static visit_log got;
  memset(tasks, 0, sizeof tasks);
  pto__rt_bump bump = {0};
  pto__rt_tm_alloc a = {&bump, NULL};
  pto__rt_tmap m = {0};
  int nref = 0;
  uint64_t s = seed;
  got.base = tasks;
  for (int t = 0; t < NTASK; t++) {
    atomic_init(&tasks[t].done, 0);
    uint64_t len = 1 + rnd(&s) % (1ull << (1 + rnd(&s) % (uint64_t)max_len_log2));
    if (len > span) len = span;
    uint64_t off = rnd(&s) % (span - len + 1);
    pto__rt_region r = region(off, len);
    int covering = (rnd(&s) & 3) == 0;
    /* Expected: every unfinished, unremoved entry whose range overlaps. */
    int want[NTASK], nwant = 0;
    for (int i = 0; i < nref; i++) {
      ref_entry *x = &ref[i];
      if (x->removed || atomic_load(&tasks[x->task].done)) continue;
      if (x->hi <= r.lo || r.hi <= x->lo) continue;
      want[nwant++] = x->task;
      if (covering && r.lo <= x->lo && x->hi <= r.hi) x->removed = 1;
    }
    got.n = 0;
    pto__rt_tmap_visit(&m, &a, BUF, &r, covering, log_visit, &got);
    qsort(want, (size_t)nwant, sizeof *want, cmp_int);
    qsort(got.seen, (size_t)got.n, sizeof *got.seen, cmp_int);
    assert_int_equal(got.n, nwant);
    for (int i = 0; i < nwant; i++)
      assert_int_equal(got.seen[i], want[i]);
    assert_int_equal(pto__rt_tmap_insert(&m, &a, BUF, size, &tasks[t], &r), 0);
    ref[nref++] = (ref_entry){t, r.lo, r.hi, 0};
    /* Tasks finish at random, mostly the older ones. */
    for (int k = 0; k < 2; k++) {
      int f = (int)(rnd(&s) % (uint64_t)(t + 1));
      if (rnd(&s) & 1) f = f / 2;
      atomic_store(&tasks[f].done, 1);
    }
    /* Occasionally forget everything, as a reused intermediate's track does. */
    if (rnd(&s) % 1500 == 0) {
      pto__rt_tmap_reset(&m, &a);
      assert_int_equal(pto__rt_tmap_count(&m), 0);
      for (int i = 0; i < nref; i++)
        ref[i].removed = 1;
    }
  }
  /* Every live reference entry is still held (finished ones may have been dropped). */
  size_t live = 0;
  for (int i = 0; i < nref; i++)
    live += !ref[i].removed && !atomic_load(&tasks[ref[i].task].done);
  assert_true(pto__rt_tmap_count(&m) >= live);
  pto__rt_tmap_fini(&m);
  pto__rt_bump_fini(&bump);
}

static void test_tmap_matches_a_scan_small_ranges(void **state) {
  (void)state;
  run_random(0x9e3779b97f4a7c15ull, 1 << 16, 1 << 16, 8);
  run_random(0x9e3779b97f4a7c15ull, 1 << 16, 1ull << 40, 8); /* hash-mapped bins */
}

static void test_tmap_matches_a_scan_mixed_sizes(void **state) {
  (void)state;
  /* Lengths from 1 byte to the whole span: many levels, and wide queries that walk the bins. */
  run_random(0x1234567ull, 1 << 20, 1 << 20, 20);
  run_random(0x1234567ull, 1 << 20, 1ull << 40, 20);
  run_random(0xabcdefull, 4096, 4096, 12);
}

/* Live accesses pile up in bins that no query visits again; a sweep drops the finished ones,
 * so the map holds about the live accesses, not every access ever made. */
static void sweeps(uint64_t size) {
  static pto__rt_task tasks[NTASK];
  memset(tasks, 0, sizeof tasks);
  pto__rt_bump bump = {0};
  pto__rt_tm_alloc a = {&bump, NULL};
  pto__rt_tmap m = {0};
  for (int t = 0; t < NTASK; t++) {
    atomic_init(&tasks[t].done, 0);
    pto__rt_region r = region((uint64_t)t * 64, 64);
    assert_int_equal(pto__rt_tmap_insert(&m, &a, BUF, size, &tasks[t], &r), 0);
    if (t >= 8) atomic_store(&tasks[t - 8].done, 1); /* 8 live at a time */
  }
  assert_true(pto__rt_tmap_count(&m) <= 2 * 64 + 8);
  pto__rt_tmap_fini(&m);
  pto__rt_bump_fini(&bump);
}

static void test_tmap_sweeps_finished_accesses(void **state) {
  (void)state;
  sweeps(NTASK * 64); /* bins in an array */
  sweeps(1ull << 40); /* bins in a hash map */
}

/* A tensor wrapped in a distributed worker's heap (an external region of a GiB) is tracked by
 * its own size, not by the rest of the region: sized by the region, every launch on a chip
 * zeroed a bin array of megabytes (a one-call dispatch measured ~100 us instead of ~6). */
static void test_wrapped_tensor_tracked_by_its_size(void **state) {
  (void)state;
  pto_run_config rc;
  pto_run_config_init(&rc);
  rc.ncores = 2;
  pto_worker *wk = NULL;
  assert_null(pto_worker_open(&rc, &wk));
  static uint8_t heap[1 << 16];
  const uint64_t base = 0x600000000000ull;
  pto__rt_worker_set_external(wk, 0, heap, 1ull << 30, base); /* as big as a real heap */
  pto__rt_worker *w = pto__rt_obj_get(wk, PTO__RT_OBJ_WORKER, NULL);
  assert_non_null(w);
  uint64_t n = 0;
  assert_true(pto__rt_devmem_size(&w->mem, base + 4096, &n));
  assert_int_equal(n, (1ull << 30) - 4096); /* nothing wrapped there: the rest of the region */
  const int64_t shape[2] = {16, 64};
  pto_device_tensor *t = NULL, *t2 = NULL;
  assert_null(pto__rt_worker_wrap(wk, base + 4096, 2, shape, PTO_DTYPE_F32, &t));
  assert_true(pto__rt_devmem_size(&w->mem, base + 4096, &n));
  assert_int_equal(n, 16 * 64 * 4);
  const int64_t small[1] = {8}; /* a smaller tensor at the same start keeps the larger size */
  assert_null(pto__rt_worker_wrap(wk, base + 4096, 1, small, PTO_DTYPE_F32, &t2));
  assert_true(pto__rt_devmem_size(&w->mem, base + 4096, &n));
  assert_int_equal(n, 16 * 64 * 4);
  assert_null(pto_worker_free_tensor(wk, t));
  assert_null(pto_worker_free_tensor(wk, t2));
  pto_worker_close(wk);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tmap_matches_a_scan_small_ranges),
      cmocka_unit_test(test_tmap_matches_a_scan_mixed_sizes),
      cmocka_unit_test(test_tmap_sweeps_finished_accesses),
      cmocka_unit_test(test_wrapped_tensor_tracked_by_its_size),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
