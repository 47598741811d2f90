/* submit_args and slice of the orchestration table (runtime/orch_args.c): a CoreTaskArgs described
 * by a pto_orch_task_args is checked, its TensorCreateInfo outputs created (with initial values)
 * and handed back owned by the task, and the task submitted; every check fails the launch with the
 * message pto_orchestration_api.h's inline submit used to report. */
#include "test_runtime_common.h"

static const pto_orch_api *g_api;
static void bind_api(const pto_orch_api *api) { g_api = api; }

/* t[1] += t[0] + s[0] */
static int32_t k_acc(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)ctx;
  float c = slot_f32(s[0]);
  for (int64_t i = 0, n = kv_numel(&t[1]); i < n; i++)
    *kv_f32p(&t[1], i) += kv_f32(&t[0], i) + c;
  return 0;
}

/* t[1] = t[0] */
static int32_t k_copy(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  (void)ctx;
  for (int64_t i = 0, n = kv_numel(&t[1]); i < n; i++)
    *kv_f32p(&t[1], i) = kv_f32(&t[0], i);
  return 0;
}

enum { ROWS = 4, COLS = 8 };
enum {
  MODE_OK,
  MODE_ERROR_MSG,
  MODE_ERROR_NO_MSG,
  MODE_SYNC_AIV,
  MODE_SYNC_AIC,
  MODE_DEPS,
  MODE_PREDICATE,
  MODE_CREATE_FAILS,
  MODE_COUNTS,
  MODE_AFTER_FAILURE,
  MODE_MANY_ARGS,
};
static int g_mode;
/* What the entry saw: submit_args's results. */
static int32_t g_rc[2];
static uint32_t g_nouts[2];
static int64_t g_ids[2];
static pto_orch_chip_tensor g_outs[2][2];

static pto_orch_chip_tensor chip(const pto_orch_tensor *t) {
  pto_orch_chip_tensor c;
  memset(&c, 0, sizeof c);
  c.buffer = t->buffer;
  c.addr = t->addr;
  for (int d = 0; d < PTO_MAX_RANK; d++) {
    c.shapes[d] = (uint32_t)t->shape[d];
    c.strides[d] = t->stride[d];
  }
  c.ndims = (uint32_t)t->rank;
  c.dtype = t->dtype;
  c.owner_task_id = t->owner_task_id;
  c.start_offset = t->start_offset;
  return c;
}

static pto_orch_task_args task(int32_t kernel_id) {
  pto_orch_task_args a;
  memset(&a, 0, sizeof a);
  a.kernel_ids[PTO_ORCH_SLOT_AIC] = -1;
  a.kernel_ids[PTO_ORCH_SLOT_AIV0] = kernel_id;
  a.kernel_ids[PTO_ORCH_SLOT_AIV1] = -1;
  a.block_num = 1;
  return a;
}

static void entry(const pto_orch_args *args) {
  pto_orch_chip_tensor x = chip(&args->tensors[0]), y = chip(&args->tensors[1]);
  /* acc(x, CREATE [ROWS, COLS] f32 = 2.5, 1.0): the created tensor is 3.5 + x */
  pto_orch_chip_tensor ts[2] = {x, {0}};
  ts[1].shapes[0] = ROWS;
  ts[1].shapes[1] = COLS;
  ts[1].ndims = 2;
  ts[1].dtype = PTO_DTYPE_F32;
  int32_t kinds[2] = {PTO_ORCH_ARG_IN, PTO_ORCH_ARG_CREATE};
  uint8_t has_init[2] = {0, 1};
  uint64_t inits[2] = {0, f32_slot(2.5f)};
  uint64_t scalars[1] = {f32_slot(1.0f)};
  pto_orch_task_args a = task(0);
  a.ntensors = 2;
  a.nscalars = 1;
  a.kinds = kinds;
  a.tensors = ts;
  a.has_init = has_init;
  a.inits = inits;
  a.scalars = scalars;
  a.outs = g_outs[0];
  switch (g_mode) {
  case MODE_ERROR_MSG:
    a.has_error = 1;
    a.error_msg = "boom";
    break;
  case MODE_ERROR_NO_MSG:
    a.has_error = 1;
    a.kernel_ids[PTO_ORCH_SLOT_AIC] = 1;
    break;
  case MODE_SYNC_AIV:
    a.require_sync_start = 1;
    a.block_num = 4;
    break;
  case MODE_SYNC_AIC:
    a.kernel_ids[PTO_ORCH_SLOT_AIC] = 1;
    a.require_sync_start = 1;
    a.block_num = 2;
    break;
  case MODE_DEPS: a.ndeps = 257; break;
  case MODE_PREDICATE:
    a.pred_op = PTO_ORCH_PRED_EQ;
    a.pred_tensor = &x;
    a.pred_ndims = 1;
    break;
  case MODE_CREATE_FAILS: ts[1].ndims = 0; break;
  case MODE_COUNTS: a.ntensors = -1; break;
  case MODE_AFTER_FAILURE:
    a.has_error = 1;
    a.error_msg = "first";
    break;
  default: break;
  }
  if (g_mode == MODE_MANY_ARGS) {
    /* More arguments than the runtime's stack buffer (64): a dummy task of 40 tensors and 30
     * scalars. */
    static pto_orch_chip_tensor many[40];
    static int32_t many_kinds[40];
    static uint64_t many_scalars[30];
    for (int i = 0; i < 40; i++) {
      many[i] = x;
      many_kinds[i] = PTO_ORCH_ARG_IN;
    }
    pto_orch_task_args d = task(-1);
    d.ntensors = 40;
    d.nscalars = 30;
    d.kinds = many_kinds;
    d.tensors = many;
    d.scalars = many_scalars;
    g_rc[0] = g_api->submit_args(g_api->ctx, &d, &g_nouts[0], &g_ids[0]);
    return;
  }
  g_rc[0] = g_api->submit_args(g_api->ctx, &a, &g_nouts[0], &g_ids[0]);
  /* copy(created, y), after it (explicit dependency; a negative one is skipped) */
  pto_orch_chip_tensor ts2[2] = {g_outs[0][0], y};
  int32_t kinds2[2] = {PTO_ORCH_ARG_IN, PTO_ORCH_ARG_OUT};
  int64_t deps[2] = {g_ids[0], -1};
  pto_orch_task_args b = task(1);
  b.ntensors = 2;
  b.kinds = kinds2;
  b.tensors = ts2;
  b.deps = deps;
  b.ndeps = 2;
  b.outs = g_outs[1];
  if (g_mode == MODE_OK || g_mode == MODE_AFTER_FAILURE)
    g_rc[1] = g_api->submit_args(g_api->ctx, &b, &g_nouts[1], &g_ids[1]);
}

static void test_submit_args_creates_outputs_and_submits(void **state) {
  (void)state;
  tsig s;
  tsig_init(&s, "submit_args");
  tsig_tensor(&s, "x", PTO_DIR_IN, PTO_DTYPE_F32, "4,8");
  tsig_tensor(&s, "y", PTO_DIR_OUT, PTO_DTYPE_F32, "4,8");
  pto_kernel_fn ks[2] = {k_acc, k_copy};
  const char *names[2] = {"acc", "copy"};
  pto_program *p = tprogram(&s, bind_api, entry, 2, ks, names);
  tsig_free(&s);
  pto_worker *w = topen(3, 1, 11);
  float x[ROWS][COLS], y[ROWS][COLS];
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < COLS; c++)
      x[r][c] = (float)(r * COLS + c);
  int64_t shape[2] = {ROWS, COLS};
  pto_host_tensor hx, hy;
  pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 2, shape);
  pto_host_tensor_init(&hy, y, PTO_DTYPE_F32, 2, shape);
  pto_arg args[2] = {pto_arg_host(&hx), pto_arg_host(&hy)};

  g_mode = MODE_OK;
  memset(y, 0, sizeof y);
  assert_pto_ok(pto_worker_run(w, p, args, 2));
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < COLS; c++)
      assert_true(y[r][c] == x[r][c] + 3.5f);
  assert_int_equal(g_rc[0], 0);
  assert_int_equal(g_rc[1], 0);
  assert_int_equal(g_ids[0], 0);
  assert_int_equal(g_ids[1], 1);
  assert_int_equal(g_nouts[0], 1);
  assert_int_equal(g_nouts[1], 0);
  const pto_orch_chip_tensor *o = &g_outs[0][0];
  assert_int_equal(o->owner_task_id, g_ids[0]);
  assert_int_equal(o->ndims, 2);
  assert_int_equal(o->dtype, PTO_DTYPE_F32);
  assert_int_equal(o->shapes[0], ROWS);
  assert_int_equal(o->shapes[1], COLS);
  assert_int_equal(o->strides[0], COLS);
  assert_int_equal(o->strides[1], 1);
  assert_int_equal(o->manual_dep, 0);
  assert_true(o->buffer != 0 && o->addr == o->buffer);

  static const struct {
    int mode;
    const char *want;
  } bad[] = {
      {MODE_ERROR_MSG, "orchestration: reported a fatal error (code 1): submit of kernel 0: boom"},
      {MODE_ERROR_NO_MSG, "reported a fatal error (code 1): submit of kernel 1: invalid arguments"},
      {MODE_SYNC_AIV, "(code 1): submit: require_sync_start with block_num 4, more than the 3 AIV "
                      "cores"},
      {MODE_SYNC_AIC, "(code 1): submit: require_sync_start with block_num 2, more than the 1 "
                      "clusters"},
      {MODE_DEPS, "(code 1): submit: 257 explicit dependencies (at most 256)"},
      {MODE_PREDICATE, "(code 1): submit: a predicate needs a tensor and one index per dim"},
      {MODE_CREATE_FAILS, "tensor.create: rank 0 is out of range (1 to 5)"},
      {MODE_COUNTS, "(code 1): submit: -1 tensors and 1 scalars"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    g_mode = bad[i].mode;
    g_nouts[0] = 7;
    g_ids[0] = 7;
    assert_status_contains(pto_worker_run(w, p, args, 2), bad[i].want);
    assert_int_not_equal(g_rc[0], 0);
    assert_int_equal(g_nouts[0], 0);
    assert_int_equal(g_ids[0], -1);
  }
  g_mode = MODE_MANY_ARGS;
  assert_pto_ok(pto_worker_run(w, p, args, 2));
  assert_int_equal(g_rc[0], 0);
  assert_int_equal(g_ids[0], 0);
  assert_int_equal(g_nouts[0], 0);
  /* Once the launch has failed, a submit returns nonzero and creates nothing. */
  g_mode = MODE_AFTER_FAILURE;
  g_nouts[1] = 7;
  g_ids[1] = 7;
  assert_status_contains(pto_worker_run(w, p, args, 2), "submit of kernel 0: first");
  assert_int_not_equal(g_rc[1], 0);
  assert_int_equal(g_nouts[1], 0);
  assert_int_equal(g_ids[1], -1);
  pto_device_memory_info mi;
  assert_pto_ok(pto_worker_memory_info(w, &mi));
  assert_true(mi.used == 0);
  pto_worker_close(w);
  pto_program_release(p);
}

/* slice: PTIR's tensor.slice of a ChipTensor (pto_codegen::pto_slice). */
static pto_orch_chip_tensor g_slices[3];
static int32_t g_slice_rc[3];
static void slice_entry(const pto_orch_args *args) {
  /* x is [4, 8] f32: rows 1.. and columns 2..7 of it, then a view 3 past the last row (the
   * extent is clamped, not the offset), then an offset outside dim 1. */
  pto_orch_chip_tensor x = args->chip_tensors[0];
  x.manual_dep = 1;
  int64_t offs[2] = {1, 2}, shape[2] = {3, 5};
  g_slice_rc[0] = g_api->slice(g_api->ctx, &x, 2, offs, shape, &g_slices[0]);
  int64_t offs2[1] = {3}, shape2[1] = {3};
  g_slice_rc[1] = g_api->slice(g_api->ctx, &x, 1, offs2, shape2, &g_slices[1]);
  int64_t offs3[2] = {0, 8}, shape3[2] = {1, 1};
  g_slice_rc[2] = g_api->slice(g_api->ctx, &x, 2, offs3, shape3, &g_slices[2]);
}

static void test_slice_makes_clamped_views(void **state) {
  (void)state;
  tsig s;
  tsig_init(&s, "slices");
  tsig_tensor(&s, "x", PTO_DIR_IN, PTO_DTYPE_F32, "4,8");
  pto_kernel_fn ks[1] = {k_copy};
  const char *names[1] = {"copy"};
  pto_program *p = tprogram(&s, bind_api, slice_entry, 1, ks, names);
  tsig_free(&s);
  pto_worker *w = topen(2, 0, 1);
  float x[ROWS][COLS] = {{0}};
  int64_t shape[2] = {ROWS, COLS};
  pto_host_tensor hx;
  pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 2, shape);
  pto_arg args[1] = {pto_arg_host(&hx)};
  assert_status_contains(pto_worker_run(w, p, args, 1),
                         "orchestration: reported a fatal error (code 1): tensor.slice: offset 8 "
                         "of dim 1 is outside the extent 8");
  assert_int_equal(g_slice_rc[0], 0);
  assert_int_equal(g_slice_rc[1], 0);
  assert_int_not_equal(g_slice_rc[2], 0);
  const pto_orch_chip_tensor *a = &g_slices[0], *b = &g_slices[1];
  assert_int_equal(a->ndims, 2);
  assert_int_equal(a->shapes[0], 3);
  assert_int_equal(a->shapes[1], 5);
  assert_int_equal(a->strides[0], COLS);
  assert_int_equal(a->strides[1], 1);
  assert_int_equal(a->start_offset, 1 * COLS + 2);
  assert_true(a->addr == a->buffer + (1 * COLS + 2) * sizeof(float));
  assert_int_equal(a->manual_dep, 1);
  assert_int_equal(a->owner_task_id, -1);
  assert_int_equal(b->shapes[0], 1); /* 3 rows asked from row 3 of 4: clamped */
  assert_int_equal(b->shapes[1], COLS);
  assert_int_equal(b->start_offset, 3 * COLS);
  pto_worker_close(w);
  pto_program_release(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_submit_args_creates_outputs_and_submits),
      cmocka_unit_test(test_slice_makes_clamped_views),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
