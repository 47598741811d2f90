/* Copies to and from device tensors by handle: element ranges and slices, bounds errors that
 * name the range and the shape, stale and foreign tensors, and the raw-address calls agreeing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/runtime.h"
#include "testutil.h"

static pto_worker *open_worker(void) {
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.ncores = 1;
  cfg.device_memory_bytes = 1 << 20;
  pto_worker *w = NULL;
  assert_pto_ok(pto_worker_open(&cfg, &w));
  return w;
}

static void test_copy_tensor_range_round_trips(void **state) {
  (void)state;
  pto_worker *w = open_worker();
  int64_t shape[2] = {4, 6};
  pto_device_tensor *t = NULL;
  assert_pto_ok(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, NULL, &t));
  float in[24], out[24];
  for (int i = 0; i < 24; i++)
    in[i] = (float)i + 0.5f;
  assert_pto_ok(pto_worker_copy_to_tensor(w, t, 0, in, 24));
  memset(out, 0, sizeof out);
  assert_pto_ok(pto_worker_copy_from_tensor(w, out, t, 0, 24));
  assert_memory_equal(in, out, sizeof in);
  /* A range in the middle: row 2, elements 12..17. */
  float row[6] = {-1, -2, -3, -4, -5, -6};
  assert_pto_ok(pto_worker_copy_to_tensor(w, t, 12, row, 6));
  assert_pto_ok(pto_worker_copy_from_tensor(w, out, t, 0, 24));
  for (int i = 0; i < 24; i++)
    assert_true(out[i] == (i >= 12 && i < 18 ? row[i - 12] : in[i]));
  /* The raw-address call sees the same bytes. */
  float raw[24];
  assert_pto_ok(pto_worker_copy_from(w, raw, pto_device_tensor_addr(t), sizeof raw));
  assert_memory_equal(raw, out, sizeof raw);
  /* Empty ranges are fine, at the end too. */
  assert_pto_ok(pto_worker_copy_from_tensor(w, out, t, 24, 0));
  pto_worker_close(w);
}

static void test_copy_tensor_range_bounds_are_checked(void **state) {
  (void)state;
  pto_worker *w = open_worker();
  int64_t shape[2] = {4, 6};
  pto_device_tensor *t = NULL;
  assert_pto_ok(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, NULL, &t));
  float buf[32] = {0};
  assert_status_contains(pto_worker_copy_to_tensor(w, t, 20, buf, 8),
                         "pto_worker_copy_to_tensor: elements [20, 28) are outside the tensor's "
                         "24 elements ([4,6] f32)");
  assert_status_contains(pto_worker_copy_from_tensor(w, buf, t, -1, 2),
                         "elements [-1, 1) are outside");
  assert_status_contains(pto_worker_copy_from_tensor(w, buf, t, 0, -3), "are outside");
  assert_status_contains(pto_worker_copy_from_tensor(w, buf, t, INT64_MAX, 2), "are outside");
  assert_status_contains(pto_worker_copy_to_tensor(w, t, 0, NULL, 1), "host pointer is NULL");
  /* Nothing was written by a refused copy. */
  float out[24];
  assert_pto_ok(pto_worker_copy_from_tensor(w, out, t, 0, 24));
  for (int i = 0; i < 24; i++)
    assert_true(out[i] == 0.0f);
  pto_worker_close(w);
}

static void test_copy_tensor_slice_moves_a_box(void **state) {
  (void)state;
  pto_worker *w = open_worker();
  int64_t shape[3] = {2, 4, 5};
  pto_device_tensor *t = NULL;
  assert_pto_ok(pto_worker_alloc_tensor(w, 3, shape, PTO_DTYPE_I32, NULL, &t));
  int32_t all[40];
  for (int i = 0; i < 40; i++)
    all[i] = i;
  assert_pto_ok(pto_worker_copy_to_tensor(w, t, 0, all, 40));
  /* Box [1:2, 1:3, 2:5]: 1 x 2 x 3. */
  int64_t off[3] = {1, 1, 2}, size[3] = {1, 2, 3};
  int32_t box[6];
  assert_pto_ok(pto_worker_copy_from_tensor_slice(w, box, t, off, size));
  int32_t want[6] = {20 + 5 + 2, 20 + 5 + 3, 20 + 5 + 4, 20 + 10 + 2, 20 + 10 + 3, 20 + 10 + 4};
  assert_memory_equal(box, want, sizeof want);
  int32_t neg[6] = {-1, -2, -3, -4, -5, -6};
  assert_pto_ok(pto_worker_copy_to_tensor_slice(w, t, off, size, neg));
  int32_t back[40];
  assert_pto_ok(pto_worker_copy_from_tensor(w, back, t, 0, 40));
  int k = 0;
  for (int i = 0; i < 40; i++) {
    int a = i / 20, b = (i / 5) % 4, c = i % 5;
    int inside = a == 1 && b >= 1 && b < 3 && c >= 2;
    assert_int_equal(back[i], inside ? neg[k++] : i);
  }
  assert_int_equal(k, 6);
  /* An empty box copies nothing. */
  int64_t none[3] = {0, 0, 0};
  assert_pto_ok(pto_worker_copy_to_tensor_slice(w, t, none, none, neg));
  pto_worker_close(w);
}

static void test_copy_tensor_slice_bounds_are_checked(void **state) {
  (void)state;
  pto_worker *w = open_worker();
  int64_t shape[2] = {4, 6};
  pto_device_tensor *t = NULL;
  assert_pto_ok(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, NULL, &t));
  float buf[64];
  int64_t off[2] = {1, 4}, size[2] = {2, 3};
  assert_status_contains(pto_worker_copy_from_tensor_slice(w, buf, t, off, size),
                         "pto_worker_copy_from_tensor_slice: dim 1: [4, 7) is outside the extent "
                         "6 (tensor [4,6] f32)");
  int64_t off2[2] = {-1, 0}, size2[2] = {1, 1};
  assert_status_contains(pto_worker_copy_to_tensor_slice(w, t, off2, size2, buf),
                         "dim 0: [-1, 0) is outside the extent 4");
  assert_status_contains(pto_worker_copy_to_tensor_slice(w, t, NULL, size2, buf),
                         "offsets or sizes is NULL");
  pto_worker_close(w);
}

static void test_copy_tensor_rejects_stale_and_foreign_tensors(void **state) {
  (void)state;
  pto_worker *w = open_worker(), *w2 = open_worker();
  int64_t shape[1] = {8};
  pto_device_tensor *t = NULL, *t2 = NULL;
  assert_pto_ok(pto_worker_alloc_tensor(w, 1, shape, PTO_DTYPE_F32, NULL, &t));
  assert_pto_ok(pto_worker_alloc_tensor(w2, 1, shape, PTO_DTYPE_F32, NULL, &t2));
  float buf[8] = {0};
  assert_status_contains(pto_worker_copy_to_tensor(w, t2, 0, buf, 8), "another worker");
  assert_pto_ok(pto_worker_free_tensor(w, t));
  pto_status s = pto_worker_copy_from_tensor(w, buf, t, 0, 8);
  assert_true(s != PTO_OK);
  pto_status_free(s);
  pto_worker_close(w2);
  assert_status_contains(pto_worker_copy_from_tensor(w2, buf, t2, 0, 8),
                         "pto_worker_copy_from_tensor");
  pto_worker_close(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_copy_tensor_range_round_trips),
      cmocka_unit_test(test_copy_tensor_range_bounds_are_checked),
      cmocka_unit_test(test_copy_tensor_slice_moves_a_box),
      cmocka_unit_test(test_copy_tensor_slice_bounds_are_checked),
      cmocka_unit_test(test_copy_tensor_rejects_stale_and_foreign_tensors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
