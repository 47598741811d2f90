/* Asynchronous dispatch: pto_handle_submit returns a completion; launches on one worker run in
 * the order they were issued (submitted or synchronous); every other worker call waits for the
 * submitted launches first; a failed launch reports through its own completion only. Built and
 * run once under TSan as well (the dispatcher thread against the submitting thread). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/ir.h"
#include "pto/loader.h"
#include "pto/runtime.h"
#include "testutil.h"

static pto_program *g_prog; /* add_scalar: y = x + c on [16,64] f32 */

static int setup(void **state) {
  (void)state;
  pto_ir_program *ir = NULL;
  pto_status s = pto_ir_parse_file(PTO_SOURCE_DIR "/examples/runtime/add_scalar.ptir", &ir);
  if (!s) s = pto_compile(ir, NULL, &g_prog);
  pto_ir_program_destroy(ir);
  if (s) fprintf(stderr, "%s\n", pto_status_message(s));
  pto_status_free(s);
  return g_prog ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  pto_program_release(g_prog);
  return 0;
}

enum { N = 16 * 64 };
static const int64_t k_shape[2] = {16, 64};

typedef struct rig {
  pto_worker *w;
  pto_handle *h;
  pto_device_tensor *t[2]; /* ping-pong: launch i reads t[i%2] and writes t[(i+1)%2] */
} rig;

static void rig_open(rig *r) {
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.ncores = 2;
  cfg.device_memory_bytes = 16 << 20;
  assert_pto_ok(pto_worker_open(&cfg, &r->w));
  for (int i = 0; i < 2; i++)
    assert_pto_ok(pto_worker_alloc_tensor(r->w, 2, k_shape, PTO_DTYPE_F32, NULL, &r->t[i]));
  assert_pto_ok(pto_worker_register(r->w, g_prog, &r->h));
}

static void args_of(rig *r, int i, float c, pto_arg out[3]) {
  out[0] = pto_arg_device(r->t[i % 2]);
  out[1] = pto_arg_device(r->t[(i + 1) % 2]);
  out[2] = pto_arg_f32(c);
}

/* c_i = (i % 3 == 0) ? -2^i-ish : ...: chosen so that any reordering changes the result. The
 * value after launches 0..n-1: each launch sets dst = src + c_i, so the final tensor holds the
 * sum of every c_i (a chain), and the other one the sum without the last. */
static float c_of(int i) { return (float)((i * 7) % 11) - 3.0f; }

static void test_submit_runs_launches_in_order(void **state) {
  (void)state;
  rig r;
  rig_open(&r);
  enum { L = 40 };
  pto_completion *c[L];
  float want = 0, other = 0;
  for (int i = 0; i < L; i++) {
    pto_arg a[3];
    args_of(&r, i, c_of(i), a);
    if (i % 10 == 5) { /* a synchronous call in between stays in order too */
      assert_pto_ok(pto_handle_call(r.h, a, 3));
      c[i] = NULL;
    } else {
      assert_pto_ok(pto_handle_submit(r.h, a, 3, &c[i]));
    }
    other = want;
    want += c_of(i);
  }
  for (int i = L - 1; i >= 0; i--) /* waited out of order: any order is fine */
    if (c[i]) assert_pto_ok(pto_completion_wait(c[i]));
  float out[N];
  assert_pto_ok(pto_worker_copy_from_tensor(r.w, out, r.t[L % 2], 0, N));
  for (int k = 0; k < N; k++)
    assert_true(out[k] == want);
  assert_pto_ok(pto_worker_copy_from_tensor(r.w, out, r.t[(L + 1) % 2], 0, N));
  for (int k = 0; k < N; k++)
    assert_true(out[k] == other);
  pto_worker_close(r.w);
}

static void test_other_calls_wait_for_submitted_launches(void **state) {
  (void)state;
  rig r;
  rig_open(&r);
  pto_completion *c[8];
  for (int i = 0; i < 8; i++) {
    pto_arg a[3];
    args_of(&r, i, 1.0f, a);
    assert_pto_ok(pto_handle_submit(r.h, a, 3, &c[i]));
  }
  /* A copy right after the submits sees all eight launches: it waited for them. */
  float out[N];
  assert_pto_ok(pto_worker_copy_from_tensor(r.w, out, r.t[0], 0, N));
  assert_true(out[0] == 8.0f);
  for (int i = 0; i < 8; i++)
    assert_int_equal(pto_completion_poll(c[i]), 1);
  pto_launch_record rec;
  assert_pto_ok(pto_worker_last_launch(r.w, &rec));
  assert_true(rec.ok);
  for (int i = 0; i < 8; i++)
    assert_pto_ok(pto_completion_wait(c[i]));
  pto_worker_close(r.w);
}

static void test_poll_then_wait_and_discard(void **state) {
  (void)state;
  rig r;
  rig_open(&r);
  pto_arg a[3];
  args_of(&r, 0, 2.5f, a);
  pto_completion *c = NULL, *d = NULL;
  assert_pto_ok(pto_handle_submit(r.h, a, 3, &c));
  assert_pto_ok(pto_handle_submit(r.h, a, 3, &d));
  pto_completion_discard(d); /* still runs; its status is dropped */
  while (!pto_completion_poll(c)) {
  }
  assert_pto_ok(pto_completion_wait(c));
  assert_int_equal(pto_completion_poll(NULL), -1);
  pto_worker_close(r.w); /* waits for the discarded one */
}

/* Issue #34 item 20: a completion is a generation-checked token. A second wait, a poll after the
 * wait, a wait after a discard and a second discard are recognised (never a use of the freed
 * completion: ASan would report one), also once the memory was reused by later completions. */
static void test_consumed_completion_is_refused(void **state) {
  (void)state;
  rig r;
  rig_open(&r);
  pto_arg a[3];
  args_of(&r, 0, 1.0f, a);
  pto_completion *c = NULL, *d = NULL;
  assert_pto_ok(pto_handle_submit(r.h, a, 3, &c));
  assert_pto_ok(pto_completion_wait(c));
  assert_int_equal(pto_completion_poll(c), -1);
  assert_status_contains(pto_completion_wait(c), "waited for already");
  assert_pto_ok(pto_handle_submit(r.h, a, 3, &d));
  pto_completion_discard(d);
  pto_completion_discard(d); /* a no-op */
  assert_int_equal(pto_completion_poll(d), -1);
  assert_status_contains(pto_completion_wait(d), "discarded");
  for (int i = 0; i < 8; i++) { /* reuse the freed memory: the stale tokens stay stale */
    pto_completion *e = NULL;
    assert_pto_ok(pto_handle_submit(r.h, a, 3, &e));
    assert_ptr_not_equal(e, c);
    assert_pto_ok(pto_completion_wait(e));
  }
  assert_status_contains(pto_completion_wait(c), "pto_completion_wait");
  assert_status_contains(pto_completion_wait((pto_completion *)r.h), "not a completion");
  pto_worker_close(r.w);
}

static void test_failed_launch_reports_through_its_completion(void **state) {
  (void)state;
  rig r;
  rig_open(&r);
  pto_arg bad[3], good[3];
  args_of(&r, 0, 1.0f, good);
  args_of(&r, 0, 1.0f, bad);
  bad[2] = pto_arg_i32(3); /* c is f32 */
  pto_completion *c1, *c2, *c3;
  assert_pto_ok(pto_handle_submit(r.h, good, 3, &c1));
  assert_pto_ok(pto_handle_submit(r.h, bad, 3, &c2));
  assert_pto_ok(pto_handle_submit(r.h, good, 3, &c3));
  assert_pto_ok(pto_completion_wait(c1));
  assert_status_contains(pto_completion_wait(c2), "parameter 'c'");
  assert_pto_ok(pto_completion_wait(c3));
  assert_status_contains(pto_handle_submit(r.h, good, 3, NULL), "out_completion is NULL");
  pto_handle_unregister(r.h);
  pto_completion *c4 = NULL;
  assert_status_contains(pto_handle_submit(r.h, good, 3, &c4), "pto_handle_submit");
  assert_null(c4);
  pto_worker_close(r.w);
}

static void test_close_with_launches_in_flight(void **state) {
  (void)state;
  for (int round = 0; round < 5; round++) {
    rig r;
    rig_open(&r);
    for (int i = 0; i < 20; i++) {
      pto_arg a[3];
      args_of(&r, i, 1.0f, a);
      pto_completion *c;
      assert_pto_ok(pto_handle_submit(r.h, a, 3, &c));
      pto_completion_discard(c);
    }
    pto_worker_close(r.w); /* drains, then stops the dispatcher */
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_submit_runs_launches_in_order),
      cmocka_unit_test(test_other_calls_wait_for_submitted_launches),
      cmocka_unit_test(test_poll_then_wait_and_discard),
      cmocka_unit_test(test_consumed_completion_is_refused),
      cmocka_unit_test(test_failed_launch_reports_through_its_completion),
      cmocka_unit_test(test_close_with_launches_in_flight),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
