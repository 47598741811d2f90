/* Runtime: worker lifetime, device memory, argument binding and validation, launch failures. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "runtime_internal.h"
#include "test_runtime_common.h"

/* The table of the launch in progress (tests run launches on one thread). */
static const pto_orch_api *g_api;
static void bind_api(const pto_orch_api *api) { g_api = api; }

/* ---- kernels ------------------------------------------------------------------------------- */

/* y = x * alpha: tensors x, y; scalar alpha (f32 slot). */
static int32_t k_scale(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)ctx;
  float a = slot_f32(s[0]);
  for (int64_t i = 0, n = kv_numel(&t[1]); i < n; i++)
    *kv_f32p(&t[1], i) = kv_f32(&t[0], i) * a;
  return 0;
}

/* x += c: tensor x (inout); scalar c (f32 slot). */
static int32_t k_addc(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)ctx;
  float c = slot_f32(s[0]);
  for (int64_t i = 0, n = kv_numel(&t[0]); i < n; i++)
    *kv_f32p(&t[0], i) += c;
  return 0;
}

/* y = x (any 4-byte dtype). */
static int32_t k_copy(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)s;
  (void)ctx;
  for (int64_t i = 0, n = kv_numel(&t[1]); i < n; i++)
    *kv_u32p(&t[1], i) = *kv_u32p(&t[0], i);
  return 0;
}

/* Fails with the code in scalar 0, err_detail {64, 32}. */
static int32_t k_fail(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)t;
  ctx->err_detail[0] = 64;
  ctx->err_detail[1] = 32;
  return (int32_t)s[0];
}

/* Checks its context: scratch aligned and large enough, core id in range. */
static atomic_int g_ctx_bad;
static int32_t k_ctx(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)t;
  if (((uintptr_t)ctx->scratch & 63) || ctx->scratch_size < s[0] || ctx->core_id < 0 ||
      ctx->core_id >= ctx->ncores)
    atomic_store(&g_ctx_bad, 1);
  else
    memset(ctx->scratch, 0xab, (size_t)s[0]); /* ASan: the whole scratch is addressable */
  return 0;
}

/* Says it started, then waits until released: a launch that stays running. At most 60 s, a hang's
 * bound, longer than the tests' own 10 s waits meanwhile (a launch that ended early would pass
 * for a close or a refusal that did not wait for it). */
static atomic_int g_wait_started, g_wait_release;
static int32_t k_wait(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)t, (void)s, (void)ctx;
  atomic_store(&g_wait_started, 1);
  for (int i = 0; i < 60000 && !atomic_load(&g_wait_release); i++)
    usleep(1000);
  return 0;
}

/* Sleeps 3 ms: keeps a core busy without using a CPU. */
static int32_t k_nap(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *ctx) {
  (void)t, (void)s, (void)ctx;
  struct timespec ts = {0, 3 * 1000 * 1000};
  nanosleep(&ts, NULL);
  return 0;
}

enum { K_SCALE, K_ADDC, K_COPY, K_FAIL, K_CTX, K_WAIT, NK };
static const pto_kernel_fn g_kernels[NK] = {k_scale, k_addc, k_copy, k_fail, k_ctx, k_wait};
static const char *const g_names[NK] = {"k_scale", "k_addc", "k_copy", "k_fail", "k_ctx", "k_wait"};

/* ---- the scale program: y = x * alpha -------------------------------------------------------- */

static void scale_entry(const pto_orch_args *a) {
  pto_orch_task_arg ta[3] = {ta_in(&a->tensors[0]), ta_out(&a->tensors[1]),
                             ta_scalar(a->scalars[0])};
  g_api->submit(g_api->ctx, K_SCALE, PTO_CORE_AIV, ta, 3);
}

/* x: in f32 [M,16], y: out f32 [M,16], alpha: f32 runtime, act: i32 = 1 */
static pto_program *scale_program(void) {
  tsig s;
  tsig_init(&s, "scale");
  tsig_tensor(&s, "x", PTO_DIR_IN, PTO_DTYPE_F32, "M,16");
  tsig_tensor(&s, "y", PTO_DIR_OUT, PTO_DTYPE_F32, "M,16");
  tsig_scalar(&s, "alpha", PTO_DTYPE_F32, PTO_BIND_RUNTIME, tscalar_f(PTO_DTYPE_F32, 0));
  tsig_scalar(&s, "act", PTO_DTYPE_I32, PTO_BIND_LITERAL, tscalar_i64(PTO_DTYPE_I32, 1));
  pto_program *p = tprogram(&s, bind_api, scale_entry, NK, g_kernels, g_names);
  tsig_free(&s);
  return p;
}

typedef struct scale_io {
  float x[8 * 16], y[8 * 16];
  pto_host_tensor hx, hy;
  pto_arg args[4];
} scale_io;

static void scale_io_init(scale_io *io, int64_t rows) {
  int64_t shape[2] = {rows, 16};
  for (int i = 0; i < 8 * 16; i++) {
    io->x[i] = (float)i;
    io->y[i] = -1;
  }
  pto_host_tensor_init(&io->hx, io->x, PTO_DTYPE_F32, 2, shape);
  pto_host_tensor_init(&io->hy, io->y, PTO_DTYPE_F32, 2, shape);
  io->args[0] = pto_arg_host(&io->hx);
  io->args[1] = pto_arg_host(&io->hy);
  io->args[2] = pto_arg_f32(2.0f);
  io->args[3] = pto_arg_i32(1);
}

/* A good launch works and computes y = 2x. */
static void check_scale_ok(pto_handle *h) {
  scale_io io;
  scale_io_init(&io, 8);
  assert_pto_ok(pto_handle_call(h, io.args, 4));
  for (int i = 0; i < 8 * 16; i++)
    assert_true(io.y[i] == 2.0f * (float)i);
}

/* ---- configuration and lifetime ---------------------------------------------------------------
 */

static void test_worker_open_applies_defaults_and_rejects_bad_config(void **state) {
  (void)state;
  pto_worker *w = NULL;
  assert_pto_ok(pto_worker_open(NULL, &w));
  /* A thread per CPU, an AIC core and two AIV cores per thread (test_runtime_cores). */
  int ncpu = pto__rt_usable_cpus();
  assert_int_equal(pto_worker_core_count(w), 3 * ncpu);
  pto_device_memory_info mi;
  assert_pto_ok(pto_worker_memory_info(w, &mi));
  assert_true(mi.total == 1ull << 30);
  assert_true(mi.base >= 0x100000000000ull);
  assert_true(mi.used == 0);
  pto_worker_close(w);

  pto_run_config cfg;
  memset(&cfg, 0, sizeof cfg);
  assert_status_contains(pto_worker_open(&cfg, &w),
                         "initialise the config with pto_run_config_init");
  assert_null(w);
  pto_run_config_init(&cfg);
  cfg.platform = "npu";
  assert_status_contains(pto_worker_open(&cfg, &w),
                         "platform 'npu' is not available (available: sim)");
  pto_run_config_init(&cfg);
  cfg.ncores = -1;
  assert_status_contains(pto_worker_open(&cfg, &w), "ncores -1 is out of range");
  /* An older caller whose struct ends before device_memory_bytes gets the default for it. */
  pto_run_config_init(&cfg);
  cfg.ncores = 3;
  cfg.device_memory_bytes = 12345;
  cfg.sz = offsetof(pto_run_config, device_memory_bytes);
  assert_pto_ok(pto_worker_open(&cfg, &w));
  assert_int_equal(pto_worker_core_count(w), 3);
  assert_pto_ok(pto_worker_memory_info(w, &mi));
  assert_true(mi.total == 1ull << 30);
  pto_worker_close(w);
}

static void test_close_frees_everything_and_stale_tokens_are_errors(void **state) {
  (void)state;
  pto_worker *w = topen(2, 0, 0);
  pto_program *p = scale_program();
  pto_handle *h1, *h2;
  assert_pto_ok(pto_worker_register(w, p, &h1));
  assert_pto_ok(pto_worker_register(w, p, &h2));
  pto_program_release(p); /* the worker keeps its own reference */
  int64_t shape[2] = {4, 4};
  pto_device_tensor *t1, *t2;
  assert_pto_ok(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, NULL, &t1));
  assert_pto_ok(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_I32, NULL, &t2));
  check_scale_ok(h1);

  pto_worker_close(w); /* live handles and tensors: all freed (ASan checks for leaks) */
  pto_worker_close(w); /* idempotent */
  assert_status_contains(pto_handle_call(h1, NULL, 0), "pto_handle_call: its worker was closed");
  pto_device_tensor *t3 = (pto_device_tensor *)1;
  assert_status_contains(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, NULL, &t3),
                         "pto_worker_alloc_tensor: the worker is closed");
  assert_null(t3);
  assert_status_contains(pto_worker_register(w, p, &h1), "the worker is closed");
  assert_status_contains(pto_worker_copy_to(w, 0x100000000000ull, shape, 8),
                         "the worker is closed");
  assert_int_equal(pto_worker_core_count(w), -1);
  assert_true(pto_device_tensor_addr(t2) == 0);
  assert_int_equal(pto_device_tensor_rank(t2), -1);
  assert_int_equal(pto_handle_callable_id(h2), -1);
  pto_device_tensor_info info;
  assert_status_contains(pto_device_tensor_describe(t2, &info), "its worker was closed");
  pto_handle_unregister(h2); /* a no-op */

  /* A tensor of a closed worker, passed to a live one. */
  pto_worker *w2 = topen(1, 0, 0);
  assert_status_contains(pto_worker_free_tensor(w2, t1), "its worker was closed");
  pto_worker_close(w2);
}

static void test_register_same_program_aliases_one_callable(void **state) {
  (void)state;
  pto_worker *w = topen(2, 0, 0);
  pto_program *p = scale_program();
  pto_handle *h1, *h2;
  assert_pto_ok(pto_worker_register(w, p, &h1));
  assert_pto_ok(pto_worker_register(w, p, &h2));
  assert_true(h1 != h2);
  assert_true(pto_handle_callable_id(h1) == pto_handle_callable_id(h2));
  assert_true(pto_handle_callable_id(h1) > 0);
  pto_handle_unregister(h1);
  assert_status_contains(pto_handle_call(h1, NULL, 0), "the handle was unregistered");
  pto_handle_unregister(h1); /* again: ignored */
  check_scale_ok(h2);        /* the alias still works */
  pto_handle_unregister(h2);
  /* Registering again after every handle is gone gives a new callable. */
  pto_handle *h3;
  assert_pto_ok(pto_worker_register(w, p, &h3));
  check_scale_ok(h3);
  /* pto_worker_run registers implicitly, once. */
  scale_io io;
  scale_io_init(&io, 8);
  assert_pto_ok(pto_worker_run(w, p, io.args, 4));
  assert_true(io.y[5] == 10.0f);
  pto_launch_record r1, r2;
  assert_pto_ok(pto_worker_last_launch(w, &r1));
  assert_pto_ok(pto_worker_run(w, p, io.args, 4));
  assert_pto_ok(pto_worker_last_launch(w, &r2));
  assert_true(r1.callable_id == r2.callable_id);
  assert_true(r1.callable_id == pto_handle_callable_id(h3));
  pto_worker_close(w);
  pto_program_release(p);
}

static void test_register_rejects_a_program_without_kernel_functions(void **state) {
  (void)state;
  pto_worker *w = topen(1, 0, 0);
  tsig s;
  tsig_init(&s, "broken");
  tsig_tensor(&s, "x", PTO_DIR_IN, PTO_DTYPE_F32, "4");
  pto_kernel_fn ks[2] = {k_scale, NULL};
  const char *names[2] = {"good", "missing"};
  pto_program *p = tprogram(&s, bind_api, scale_entry, 2, ks, names);
  pto_handle *h = NULL;
  assert_status_contains(pto_worker_register(w, p, &h),
                         "program 'broken': kernel 1 ('missing') has no function");
  assert_null(h);
  assert_status_contains(pto_worker_run(w, p, NULL, 0), "kernel 1 ('missing') has no function");
  pto_program_release(p);
  tsig_free(&s);
  /* The worker is still usable. */
  pto_program *good = scale_program();
  assert_pto_ok(pto_worker_register(w, good, &h));
  check_scale_ok(h);
  pto_program_release(good);
  pto_worker_close(w);
}

/* ---- device memory -------------------------------------------------------------------------- */

static void test_device_memory_has_its_own_address_range(void **state) {
  (void)state;
  pto_worker *w = topen(1, 0, 0);
  float init[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  pto_device_tensor *t;
  assert_pto_ok(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, init, &t));
  uint64_t addr = pto_device_tensor_addr(t);
  pto_device_memory_info mi;
  assert_pto_ok(pto_worker_memory_info(w, &mi));
  assert_true(addr >= mi.base && addr < mi.base + mi.total);
  assert_true(addr % 64 == 0);
  assert_true(addr != (uint64_t)(uintptr_t)init);
  assert_int_equal(pto_device_tensor_rank(t), 2);
  assert_int_equal(pto_device_tensor_dim(t, 1), 3);
  assert_int_equal(pto_device_tensor_dim(t, 2), -1);
  assert_int_equal(pto_device_tensor_dtype(t), PTO_DTYPE_F32);
  pto_device_tensor_info info;
  assert_pto_ok(pto_device_tensor_describe(t, &info));
  assert_true(info.nbytes == 24 && info.addr == addr && info.shape[0] == 2);
  float back[6] = {0};
  assert_pto_ok(pto_worker_copy_from(w, back, addr, sizeof back));
  assert_memory_equal(back, init, sizeof init);
  float upd[6] = {9, 9, 9, 9, 9, 9};
  assert_pto_ok(pto_worker_copy_to(w, addr, upd, 8)); /* a prefix */
  assert_pto_ok(pto_worker_copy_from(w, back, addr, sizeof back));
  assert_true(back[0] == 9 && back[1] == 9 && back[2] == 3);

  /* Copies: base addresses of this worker's allocations only, bounds checked. */
  assert_status_contains(pto_worker_copy_to(w, addr, upd, 25),
                         "pto_worker_copy_to: 25 bytes exceed the allocation at");
  assert_status_contains(pto_worker_copy_from(w, back, addr + 4, 4),
                         "is not the start of an allocation of this worker");
  assert_status_contains(pto_worker_copy_from(w, back, (uint64_t)(uintptr_t)back, 4),
                         "is not the start of an allocation of this worker");
  assert_status_contains(pto_worker_copy_to(w, addr, NULL, 4), "host pointer is NULL");

  /* Zero-initialised without init; 64-byte alignment for every allocation. */
  int64_t s1[1] = {3};
  pto_device_tensor *z;
  assert_pto_ok(pto_worker_alloc_tensor(w, 1, s1, PTO_DTYPE_I8, NULL, &z));
  assert_true(pto_device_tensor_addr(z) % 64 == 0);
  int8_t zb[3] = {1, 1, 1};
  assert_pto_ok(pto_worker_copy_from(w, zb, pto_device_tensor_addr(z), 3));
  assert_true(zb[0] == 0 && zb[1] == 0 && zb[2] == 0);

  /* Free: a double free is a no-op, the address is no longer valid. */
  assert_pto_ok(pto_worker_free_tensor(w, t));
  assert_pto_ok(pto_worker_free_tensor(w, t));
  assert_status_contains(pto_worker_copy_from(w, back, addr, 4),
                         "is not the start of an allocation");
  assert_true(pto_device_tensor_addr(t) == 0);
  assert_status_contains(pto_device_tensor_describe(t, &info), "the device tensor was freed");
  assert_status_contains(pto_worker_free_tensor(w, (pto_device_tensor *)w),
                         "not a device tensor (a token of another kind)");
  assert_status_contains(pto_worker_free_tensor(w, (pto_device_tensor *)(uintptr_t)0x7777),
                         "not a live device tensor");

  /* A tensor of another worker. */
  pto_worker *w2 = topen(1, 0, 0);
  assert_status_contains(pto_worker_free_tensor(w2, z),
                         "the device tensor belongs to another worker");
  assert_status_contains(pto_worker_copy_from(w2, zb, pto_device_tensor_addr(z), 1),
                         "is not the start of an allocation of this worker");
  pto_worker_close(w2);
  assert_pto_ok(pto_worker_free_tensor(w, z));
  assert_pto_ok(pto_worker_memory_info(w, &mi));
  assert_true(mi.used == 0 && mi.nallocs == 0);
  pto_worker_close(w);
}

/* Tensors of 64 KiB or more start on a page (a kernel streaming a weight's rows in 4 KiB pieces
 * finds each in one page), the bytes before one stay free for smaller tensors, and where no page
 * boundary has room the tensor still fits where 64-byte alignment allows. Smaller ones stay
 * where 64-byte alignment puts them. */
static void test_alloc_tensor_puts_large_tensors_on_a_page(void **state) {
  (void)state;
  pto_worker *w = topen(1, 0, 0);
  int64_t s_odd[1] = {2112}, s_mid[1] = {65472}, s_w[2] = {64, 1024}, s_small[1] = {64};
  pto_device_tensor *odd, *mid, *wt, *small;
  assert_pto_ok(pto_worker_alloc_tensor(w, 1, s_odd, PTO_DTYPE_U8, NULL, &odd));
  /* under 64 KiB: right after the first, off a page */
  assert_pto_ok(pto_worker_alloc_tensor(w, 1, s_mid, PTO_DTYPE_U8, NULL, &mid));
  uint64_t a_odd = pto_device_tensor_addr(odd), a_mid = pto_device_tensor_addr(mid);
  assert_true(a_mid == a_odd + 2112 && a_mid % 4096 != 0);
  /* 256 KiB: on the next page */
  assert_pto_ok(pto_worker_alloc_tensor(w, 2, s_w, PTO_DTYPE_F32, NULL, &wt));
  uint64_t a_w = pto_device_tensor_addr(wt);
  assert_true(a_w % 4096 == 0 && a_w >= a_mid + 65472 && a_w < a_mid + 65472 + 4096);
  /* the gap before it: a small tensor lands there */
  assert_pto_ok(pto_worker_alloc_tensor(w, 1, s_small, PTO_DTYPE_U8, NULL, &small));
  assert_true(pto_device_tensor_addr(small) == a_mid + 65472);
  pto_device_memory_info mi;
  assert_pto_ok(pto_worker_memory_info(w, &mi));
  assert_true(mi.used == 2112 + 65472 + 64 * 1024 * 4 + 64 && mi.nallocs == 4);
  pto_worker_close(w);

  /* 128 KiB of device memory: after 64 bytes, the rest fits only at byte 64 */
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.aiv_cores = 1;
  cfg.aic_cores = 1;
  cfg.device_memory_bytes = 128 << 10;
  assert_pto_ok(pto_worker_open(&cfg, &w));
  int64_t s_rest[1] = {(128 << 10) - 64};
  pto_device_tensor *first, *rest;
  assert_pto_ok(pto_worker_alloc_tensor(w, 1, s_small, PTO_DTYPE_U8, NULL, &first));
  assert_pto_ok(pto_worker_alloc_tensor(w, 1, s_rest, PTO_DTYPE_U8, NULL, &rest));
  assert_true(pto_device_tensor_addr(rest) == pto_device_tensor_addr(first) + 64);
  assert_pto_ok(pto_worker_free_tensor(w, rest));
  /* and one too large for any place still reports the memory as before */
  int64_t s_over[1] = {128 << 10};
  assert_status_contains(pto_worker_alloc_tensor(w, 1, s_over, PTO_DTYPE_U8, NULL, &rest),
                         "131072 bytes requested, 64 of 131072 bytes in use, largest free block "
                         "131008 bytes");
  pto_worker_close(w);
}

static void test_alloc_tensor_validates_shape_and_reports_out_of_memory(void **state) {
  (void)state;
  pto_worker *w = topen(1, 0, 0); /* 64 MiB */
  pto_device_tensor *t = (pto_device_tensor *)1;
  int64_t shape[6] = {2, -3, 4, 1, 1, 1};
  assert_status_contains(pto_worker_alloc_tensor(w, 0, shape, PTO_DTYPE_F32, NULL, &t),
                         "rank 0 is out of range (1 to 5)");
  assert_null(t);
  assert_status_contains(pto_worker_alloc_tensor(w, 6, shape, PTO_DTYPE_F32, NULL, &t),
                         "rank 6 is out of range");
  assert_status_contains(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, NULL, &t),
                         "dim 1 is negative (-3)");
  assert_status_contains(pto_worker_alloc_tensor(w, 1, shape, PTO_DTYPE_COUNT, NULL, &t),
                         "is not a dtype");
  int64_t huge[1] = {1ll << 29};
  assert_status_contains(pto_worker_alloc_tensor(w, 1, huge, PTO_DTYPE_F32, NULL, &t),
                         "out of device memory allocating a device tensor: 2147483648 bytes "
                         "requested, the device has 67108864 bytes in all");
  /* Fragmentation: the message gives what is in use and the largest free block. */
  int64_t s40[1] = {40ll << 20}, s30[1] = {30ll << 20};
  pto_device_tensor *big;
  assert_pto_ok(pto_worker_alloc_tensor(w, 1, s40, PTO_DTYPE_U8, NULL, &big));
  assert_status_contains(pto_worker_alloc_tensor(w, 1, s30, PTO_DTYPE_U8, NULL, &t),
                         "31457280 bytes requested, 41943040 of 67108864 bytes in use, largest "
                         "free block 25165824 bytes");
  pto_device_memory_info mi;
  assert_pto_ok(pto_worker_memory_info(w, &mi));
  assert_true(mi.used == 40ull << 20 && mi.nallocs == 1);
  assert_pto_ok(pto_worker_free_tensor(w, big));
  assert_pto_ok(pto_worker_alloc_tensor(w, 1, s30, PTO_DTYPE_U8, NULL, &t)); /* fits now */
  assert_pto_ok(pto_worker_free_tensor(w, t));
  pto_worker_close(w);
}

/* ---- argument validation ------------------------------------------------------------------- */

static void test_dispatch_validates_arguments_naming_the_parameter(void **state) {
  (void)state;
  pto_worker *w = topen(2, 0, 0);
  pto_program *p = scale_program();
  pto_handle *h;
  assert_pto_ok(pto_worker_register(w, p, &h));
  scale_io io;

  scale_io_init(&io, 8);
  assert_status_contains(pto_handle_call(h, io.args, 3),
                         "launch of 'scale': expected 4 arguments (x, y, alpha, act), got 3");
  check_scale_ok(h);

  scale_io_init(&io, 8);
  io.args[0] = pto_arg_f32(1.0f);
  assert_status_contains(pto_handle_call(h, io.args, 4),
                         "parameter 'x': expected a tensor (in f32 [M,16]), got a scalar");
  check_scale_ok(h);

  scale_io_init(&io, 8);
  io.args[2] = pto_arg_host(&io.hx);
  assert_status_contains(pto_handle_call(h, io.args, 4),
                         "parameter 'alpha': expected a scalar (f32), got a host tensor");
  scale_io_init(&io, 8);
  io.args[3].kind = PTO_ARG_NONE;
  assert_status_contains(pto_handle_call(h, io.args, 4),
                         "parameter 'act': expected a scalar (i32), got no argument");

  scale_io_init(&io, 8);
  io.hx.dtype = PTO_DTYPE_I32;
  io.args[0] = pto_arg_host(&io.hx);
  assert_status_contains(pto_handle_call(h, io.args, 4),
                         "parameter 'x': expected dtype f32, got i32");

  scale_io_init(&io, 8);
  int64_t s1[1] = {64};
  pto_host_tensor_init(&io.hx, io.x, PTO_DTYPE_F32, 1, s1);
  io.args[0] = pto_arg_host(&io.hx);
  assert_status_contains(pto_handle_call(h, io.args, 4),
                         "parameter 'x': expected rank 2 [M,16], got rank 1 [64]");

  scale_io_init(&io, 8);
  int64_t s815[2] = {8, 15};
  pto_host_tensor_init(&io.hx, io.x, PTO_DTYPE_F32, 2, s815);
  io.args[0] = pto_arg_host(&io.hx);
  assert_status_contains(pto_handle_call(h, io.args, 4),
                         "parameter 'x': expected shape [M,16], got [8,15]");

  scale_io_init(&io, 8);
  int64_t s416[2] = {4, 16};
  pto_host_tensor_init(&io.hy, io.y, PTO_DTYPE_F32, 2, s416);
  io.args[1] = pto_arg_host(&io.hy);
  assert_status_contains(pto_handle_call(h, io.args, 4),
                         "parameter 'y': dynamic dim 'M' (dim 0) is 4, but parameter 'x' (dim 0) "
                         "bound 'M' to 8; a symbol bound twice must agree");
  check_scale_ok(h);

  scale_io_init(&io, 8);
  io.args[2] = pto_arg_i32(2);
  assert_status_contains(pto_handle_call(h, io.args, 4),
                         "parameter 'alpha': expected a scalar of dtype f32, got i32");

  scale_io_init(&io, 8);
  io.args[3] = pto_arg_i32(2);
  assert_status_contains(pto_handle_call(h, io.args, 4),
                         "parameter 'act': got 2, but its value was fixed at compile time to 1; "
                         "pass 1, or recompile with -D act=runtime to pass it at launch");
  check_scale_ok(h);

  scale_io_init(&io, 8); /* its slot would be 1, the fixed value: refused, not wrapped */
  io.args[3] = pto_arg_scalar((pto_scalar){.dtype = PTO_DTYPE_I32, .i = INT64_C(0x100000001)});
  assert_status_contains(pto_handle_call(h, io.args, 4),
                         "parameter 'act': the value 4294967297: out of range for i32: expected "
                         "an integer from -2147483648 to 2147483647");
  check_scale_ok(h);

  scale_io_init(&io, 8);
  io.args[1] = pto_arg_host_readonly(&io.hy);
  assert_status_contains(pto_handle_call(h, io.args, 4),
                         "parameter 'y' is out, but its host tensor was passed read-only");
  scale_io_init(&io, 8);
  io.args[0] = pto_arg_host_readonly(&io.hx); /* fine for an in parameter */
  assert_pto_ok(pto_handle_call(h, io.args, 4));

  scale_io_init(&io, 8);
  io.args[1] = pto_arg_host(&io.hx); /* y aliases x */
  assert_status_contains(pto_handle_call(h, io.args, 4),
                         "parameters 'x' and 'y' overlap in host memory and 'y' is out");
  scale_io_init(&io, 8);
  io.hx.data = NULL;
  io.args[0] = pto_arg_host(&io.hx);
  assert_status_contains(pto_handle_call(h, io.args, 4),
                         "parameter 'x': the host tensor has no data");

  /* Device tensors: freed, of another worker, of a closed worker. */
  int64_t shape[2] = {8, 16};
  pto_device_tensor *dt;
  assert_pto_ok(pto_worker_alloc_tensor(w, 2, shape, PTO_DTYPE_F32, NULL, &dt));
  assert_pto_ok(pto_worker_free_tensor(w, dt));
  scale_io_init(&io, 8);
  io.args[0] = pto_arg_device(dt);
  assert_status_contains(pto_handle_call(h, io.args, 4),
                         "parameter 'x': the device tensor is stale: the device tensor was freed");
  pto_worker *w2 = topen(1, 0, 0);
  pto_device_tensor *other;
  assert_pto_ok(pto_worker_alloc_tensor(w2, 2, shape, PTO_DTYPE_F32, NULL, &other));
  io.args[0] = pto_arg_device(other);
  assert_status_contains(pto_handle_call(h, io.args, 4),
                         "parameter 'x': the device tensor belongs to another worker");
  pto_worker_close(w2);
  assert_status_contains(pto_handle_call(h, io.args, 4),
                         "parameter 'x': the device tensor is stale: its worker was closed");
  check_scale_ok(h);

  pto_device_memory_info mi;
  assert_pto_ok(pto_worker_memory_info(w, &mi));
  assert_true(mi.used == 0); /* failed binds leave nothing behind */
  pto_program_release(p);
  pto_worker_close(w);
}

/* Sizes and strides of C API host tensors are overflow-checked at binding (issue #10). */
static void test_dispatch_rejects_host_tensors_whose_size_or_strides_overflow(void **state) {
  (void)state;
  pto_worker *w = topen(2, 0, 0);
  pto_program *p = scale_program();
  pto_handle *h;
  assert_pto_ok(pto_worker_register(w, p, &h));
  scale_io io;
  static const int64_t rows[] = {INT64_MAX / 16 + 1, INT64_MAX / 64 + 1, INT64_MAX};
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    scale_io_init(&io, 8);
    io.hx.shape[0] = rows[i];
    io.args[0] = pto_arg_host(&io.hx);
    assert_status_contains(pto_handle_call(h, io.args, 4), "parameter 'x': the host tensor's size "
                                                           "overflows");
    check_scale_ok(h);
  }
  static const int64_t strides[] = {INT64_MAX, INT64_MIN, INT64_MAX / 4, -(INT64_MAX / 4)};
  for (size_t i = 0; i < sizeof strides / sizeof *strides; i++) {
    scale_io_init(&io, 8);
    io.hx.strides[0] = strides[i];
    io.args[0] = pto_arg_host(&io.hx);
    assert_status_contains(pto_handle_call(h, io.args, 4),
                           "parameter 'x': the host tensor's strides overflow");
    check_scale_ok(h);
  }
  /* The checked size helper itself. */
  int64_t n, b, big[2] = {INT64_MAX / 2, 3}, neg[2] = {4, -1}, ok[2] = {1 << 20, 1 << 20};
  assert_int_equal(pto_shape_size(2, big, PTO_DTYPE_U8, &n, &b), -1);
  assert_int_equal(pto_shape_size(2, neg, PTO_DTYPE_U8, &n, &b), -1);
  assert_int_equal(pto_shape_size(2, ok, PTO_DTYPE_F64, &n, &b), 0);
  assert_true(n == INT64_C(1) << 40 && b == INT64_C(1) << 43);
  int64_t wrap[2] = {INT64_C(1) << 61, 1};
  assert_int_equal(pto_shape_size(2, wrap, PTO_DTYPE_F32, &n, &b), -1);
  pto_handle_unregister(h);
  pto_program_release(p);
  pto_worker_close(w);
}

/* Copy calls take only the start of a live allocation: address 0 (which an empty slot of the
 * allocation map once matched) and a freed tensor's address are refused (issue #10). */
static void test_copy_calls_reject_address_zero_and_freed_tensors(void **state) {
  (void)state;
  pto_worker *w = topen(1, 0, 0);
  int64_t shape[1] = {64};
  pto_device_tensor *t, *u;
  uint8_t buf[256] = {0};
  assert_pto_ok(pto_worker_alloc_tensor(w, 1, shape, PTO_DTYPE_F32, NULL, &t));
  assert_pto_ok(pto_worker_alloc_tensor(w, 1, shape, PTO_DTYPE_F32, NULL, &u));
  uint64_t a = pto_device_tensor_addr(t);
  assert_pto_ok(pto_worker_copy_to(w, a, buf, 256));
  static const size_t sizes[] = {0, 1, 256};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    assert_status_contains(pto_worker_copy_to(w, 0, buf, sizes[i]),
                           "device address 0x0 is not the start of an allocation");
    assert_status_contains(pto_worker_copy_from(w, buf, 0, sizes[i]),
                           "device address 0x0 is not the start of an allocation");
  }
  assert_status_contains(pto_worker_copy_to(w, a + 4, buf, 4), "is not the start of an allocation");
  assert_status_contains(pto_worker_copy_to(w, a, buf, 257), "257 bytes exceed the allocation");
  assert_pto_ok(pto_worker_free_tensor(w, t));
  assert_status_contains(pto_worker_copy_to(w, a, buf, 4), "is not the start of an allocation");
  assert_status_contains(pto_worker_copy_from(w, buf, a, 4), "is not the start of an allocation");
  assert_status_contains(pto_worker_copy_from(w, buf, a, 0), "is not the start of an allocation");
  assert_pto_ok(pto_worker_copy_from(w, buf, pto_device_tensor_addr(u), 256));
  pto_worker_close(w);
}

/* ---- one worker, several threads ------------------------------------------------------------ */

static void wait_entry(const pto_orch_args *a) {
  (void)a;
  g_api->submit(g_api->ctx, K_WAIT, PTO_CORE_AIV, NULL, 0);
}

static pto_program *wait_program(void) {
  tsig s;
  tsig_init(&s, "wait");
  pto_program *p = tprogram(&s, bind_api, wait_entry, NK, g_kernels, g_names);
  tsig_free(&s);
  return p;
}

typedef struct launcher {
  pto_handle *h;
  pto_status s;
} launcher;

static void *launch_thread(void *arg) {
  launcher *l = arg;
  l->s = pto_handle_call(l->h, NULL, 0);
  return NULL;
}

/* A second launch while one runs is refused atomically with a message naming the rule; the
 * running launch finishes and the worker stays usable (issue #10). */
static void test_second_concurrent_launch_is_refused(void **state) {
  (void)state;
  pto_worker *w = topen(2, 0, 0);
  pto_program *p = wait_program(), *q = scale_program();
  pto_handle *h, *hq;
  assert_pto_ok(pto_worker_register(w, p, &h));
  assert_pto_ok(pto_worker_register(w, q, &hq));
  int64_t dshape[1] = {4};
  pto_device_tensor *dev = NULL;
  assert_pto_ok(pto_worker_alloc_tensor(w, 1, dshape, PTO_DTYPE_F32, NULL, &dev));
  atomic_store(&g_wait_started, 0);
  atomic_store(&g_wait_release, 0);
  launcher l = {h, PTO_OK};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, launch_thread, &l), 0);
  while (!atomic_load(&g_wait_started))
    usleep(100);
  static const char rule[] = "a launch is already running on this worker; a worker runs one "
                             "launch at a time and its API is one thread per worker";
  assert_status_contains(pto_handle_call(h, NULL, 0), rule);
  scale_io io;
  scale_io_init(&io, 8);
  assert_status_contains(pto_handle_call(hq, io.args, 4), rule);
  assert_status_contains(pto_worker_run(w, q, io.args, 4), "a launch is running on this worker");
  int64_t shape[1] = {4};
  pto_device_tensor *t = NULL;
  assert_status_contains(pto_worker_alloc_tensor(w, 1, shape, PTO_DTYPE_F32, NULL, &t),
                         "a launch is running on this worker");
  /* runtime.h: a free, a copy and a registration during the launch are refused too. */
  pto_handle *h2 = NULL;
  assert_status_contains(pto_worker_register(w, q, &h2), "a launch is running on this worker");
  assert_status_contains(pto_worker_free_tensor(w, dev), "a launch is running on this worker");
  float four[4] = {0};
  assert_status_contains(pto_worker_copy_to_tensor(w, dev, 0, four, 4),
                         "a launch is running on this worker");
  atomic_store(&g_wait_release, 1);
  pthread_join(th, NULL);
  assert_null(l.s);
  check_scale_ok(hq);
  pto_program_release(p);
  pto_program_release(q);
  pto_worker_close(w);
}

/* Threads of this process (/proc/self/status), -1 if unreadable. */
static int thread_count(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  int n = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "Threads:", 8)) n = atoi(line + 8);
  if (f) fclose(f);
  return n;
}

/* Yields until *flag is set or about 10 s have passed; returns whether it was set. */
static int await_flag(atomic_int *flag, int want) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (atomic_load(flag) != want) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > 10) return 0;
    sched_yield();
  }
  return 1;
}

typedef struct closer {
  pto_worker *w;
  atomic_int done;
} closer;

static void *close_thread(void *arg) {
  closer *c = arg;
  pto_worker_close(c->w);
  atomic_store(&c->done, 1);
  return NULL;
}

/* Issue #34 item 10: a close on one thread while another thread's launch runs waits for the
 * launch to end, then closes the worker for good: later calls fail "the worker is closed", and
 * every core thread is gone (before, the close was silently ignored and the worker's threads and
 * arena leaked; or it unmapped the arena under the launch). */
static void test_close_waits_for_another_threads_launch(void **state) {
  (void)state;
  int threads0 = thread_count();
  pto_worker *w = topen(2, 0, 0);
  pto_program *p = wait_program();
  pto_handle *h;
  assert_pto_ok(pto_worker_register(w, p, &h));
  atomic_store(&g_wait_started, 0);
  atomic_store(&g_wait_release, 0);
  launcher l = {h, PTO_OK};
  pthread_t th, tc;
  assert_int_equal(pthread_create(&th, NULL, launch_thread, &l), 0);
  assert_true(await_flag(&g_wait_started, 1));
  closer c = {w, 0};
  assert_int_equal(pthread_create(&tc, NULL, close_thread, &c), 0);
  /* The close has retired the worker's token once new calls see it closed... */
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (pto_worker_core_count(w) != -1) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    assert_true(t.tv_sec - t0.tv_sec <= 10); /* else the close was ignored */
    sched_yield();
  }
  /* ...but it cannot have returned: the launch still runs. */
  assert_int_equal(atomic_load(&c.done), 0);
  int64_t shape[1] = {4};
  pto_device_tensor *t2 = NULL;
  assert_status_contains(pto_worker_alloc_tensor(w, 1, shape, PTO_DTYPE_F32, NULL, &t2),
                         "the worker is closed");
  assert_status_contains(pto_handle_call(h, NULL, 0), "pto_handle_call");
  atomic_store(&g_wait_release, 1);
  pthread_join(th, NULL);
  pthread_join(tc, NULL);
  assert_pto_ok(l.s); /* the launch that was running finished whole */
  assert_int_equal(atomic_load(&c.done), 1);
  assert_status_contains(pto_handle_call(h, NULL, 0), "its worker was closed");
  pto_worker_close(w); /* again: a no-op */
  if (threads0 > 0) assert_int_equal(thread_count(), threads0);
  pto_program_release(p);
}

/* Launches and closes from several threads at once: every call returns (ok, refused or "closed"),
 * nothing crashes, and no thread of the worker outlives the close. */
static void *hammer_close_thread(void *arg) {
  launcher *l = arg;
  for (int i = 0; i < 200; i++) {
    scale_io io;
    scale_io_init(&io, 8);
    pto_status s = pto_handle_call(l->h, io.args, 4);
    if (!s) continue;
    int closed = strstr(pto_status_message(s), "closed") != NULL;
    if (!closed && !strstr(pto_status_message(s), "one thread per worker")) {
      l->s = s;
      return NULL;
    }
    pto_status_free(s);
    if (closed) break;
  }
  return NULL;
}

static void test_close_racing_launches_never_crashes_or_leaks(void **state) {
  (void)state;
  int threads0 = thread_count();
  pto_program *p = scale_program();
  for (int round = 0; round < 4; round++) {
    pto_worker *w = topen(2, 0, 0);
    pto_handle *h;
    assert_pto_ok(pto_worker_register(w, p, &h));
    enum { N = 3 };
    pthread_t th[N], tc;
    launcher l[N];
    for (int i = 0; i < N; i++) {
      l[i] = (launcher){h, PTO_OK};
      assert_int_equal(pthread_create(&th[i], NULL, hammer_close_thread, &l[i]), 0);
    }
    closer c = {w, 0};
    assert_int_equal(pthread_create(&tc, NULL, close_thread, &c), 0);
    pthread_join(tc, NULL);
    for (int i = 0; i < N; i++) {
      pthread_join(th[i], NULL);
      assert_pto_ok(l[i].s);
    }
    assert_int_equal(pto_worker_core_count(w), -1);
  }
  if (threads0 > 0) assert_int_equal(thread_count(), threads0);
  pto_program_release(p);
}

/* Many threads launching on one worker at once: each launch runs whole or is refused; nothing
 * crashes or interleaves. */
static void *hammer_thread(void *arg) {
  launcher *l = arg;
  int refused = 0;
  for (int i = 0; i < 50; i++) {
    scale_io io;
    scale_io_init(&io, 8);
    pto_status s = pto_handle_call(l->h, io.args, 4);
    if (s) {
      if (!strstr(pto_status_message(s), "one thread per worker")) {
        l->s = s;
        return NULL;
      }
      pto_status_free(s);
      refused++;
      continue;
    }
    for (int k = 0; k < 8 * 16; k++)
      if (io.y[k] != 2.0f * (float)k) {
        l->s = pto_status_make(PTO_STATUS_INTERNAL, "wrong result at %d", k);
        return NULL;
      }
  }
  (void)refused;
  return NULL;
}

static void test_launches_from_many_threads_run_whole_or_are_refused(void **state) {
  (void)state;
  pto_worker *w = topen(2, 0, 0);
  pto_program *p = scale_program();
  pto_handle *h;
  assert_pto_ok(pto_worker_register(w, p, &h));
  enum { N = 4 };
  pthread_t th[N];
  launcher l[N];
  for (int i = 0; i < N; i++) {
    l[i] = (launcher){h, PTO_OK};
    assert_int_equal(pthread_create(&th[i], NULL, hammer_thread, &l[i]), 0);
  }
  for (int i = 0; i < N; i++) {
    pthread_join(th[i], NULL);
    assert_pto_ok(l[i].s);
  }
  check_scale_ok(h);
  pto_program_release(p);
  pto_worker_close(w);
}

static void test_dispatch_reports_static_shape_mismatch(void **state) {
  (void)state;
  pto_worker *w = topen(1, 0, 0);
  tsig s;
  tsig_init(&s, "fixed");
  tsig_tensor(&s, "x", PTO_DIR_IN, PTO_DTYPE_F32, "64,128");
  tsig_tensor(&s, "y", PTO_DIR_OUT, PTO_DTYPE_F32, "64,128");
  tsig_scalar(&s, "alpha", PTO_DTYPE_F32, PTO_BIND_LITERAL, tscalar_f(PTO_DTYPE_F32, 0.5));
  pto_program *p = tprogram(&s, bind_api, scale_entry, NK, g_kernels, g_names);
  tsig_free(&s);
  float *x = calloc(64 * 128, sizeof *x), *y = calloc(64 * 128, sizeof *y);
  int64_t good[2] = {64, 128}, bad[2] = {64, 127};
  pto_host_tensor hx, hy;
  pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 2, bad);
  pto_host_tensor_init(&hy, y, PTO_DTYPE_F32, 2, good);
  pto_arg args[3] = {pto_arg_host(&hx), pto_arg_host(&hy), pto_arg_f32(0.5f)};
  assert_status_contains(pto_worker_run(w, p, args, 3),
                         "parameter 'x': expected shape [64,128], got [64,127]");
  args[2] = pto_arg_f32(0.25f);
  pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 2, good);
  args[0] = pto_arg_host(&hx);
  assert_status_contains(
      pto_worker_run(w, p, args, 3),
      "parameter 'alpha': got 0.25, but its value was fixed at compile time to 0.5");
  args[2] = pto_arg_f32(0.5f);
  x[77] = 4;
  assert_pto_ok(pto_worker_run(w, p, args, 3));
  assert_true(y[77] == 2.0f); /* the slot carried the specialized value */
  free(x);
  free(y);
  pto_program_release(p);
  pto_worker_close(w);
}

/* ---- residency and copies by direction ----------------------------------------------------------
 */

static uint64_t g_seen_addr[3];

static void inc_entry(const pto_orch_args *a) {
  for (int i = 0; i < a->ntensors; i++)
    g_seen_addr[i] = a->tensors[i].addr;
  pto_orch_task_arg ta[2] = {ta_inout(&a->tensors[0]), ta_scalar(f32_slot(1.0f))};
  g_api->submit(g_api->ctx, K_ADDC, PTO_CORE_AIV, ta, 2);
}

static void test_device_tensors_stay_resident_across_calls(void **state) {
  (void)state;
  pto_worker *w = topen(2, 0, 0);
  tsig s;
  tsig_init(&s, "inc");
  tsig_tensor(&s, "x", PTO_DIR_INOUT, PTO_DTYPE_F32, "N");
  pto_program *p = tprogram(&s, bind_api, inc_entry, NK, g_kernels, g_names);
  tsig_free(&s);
  pto_handle *h;
  assert_pto_ok(pto_worker_register(w, p, &h));
  float init[100];
  for (int i = 0; i < 100; i++)
    init[i] = (float)i;
  int64_t shape[1] = {100};
  pto_device_tensor *t;
  assert_pto_ok(pto_worker_alloc_tensor(w, 1, shape, PTO_DTYPE_F32, init, &t));
  uint64_t addr = pto_device_tensor_addr(t);
  pto_arg arg = pto_arg_device(t);
  assert_pto_ok(pto_handle_call(h, &arg, 1));
  assert_true(g_seen_addr[0] == addr); /* the orchestration saw the tensor itself, no copy */
  /* Changed on the device between calls: the next call sees the change. */
  float v = 1000;
  assert_pto_ok(pto_worker_copy_to(w, addr, &v, sizeof v));
  assert_pto_ok(pto_handle_call(h, &arg, 1));
  assert_true(g_seen_addr[0] == addr);
  float back[100];
  assert_pto_ok(pto_worker_copy_from(w, back, addr, sizeof back));
  assert_true(back[0] == 1001.0f);
  for (int i = 1; i < 100; i++)
    assert_true(back[i] == (float)i + 2.0f);
  for (int i = 0; i < 100; i++)
    assert_true(init[i] == (float)i); /* never copied back */
  pto_device_memory_info mi;
  assert_pto_ok(pto_worker_memory_info(w, &mi));
  assert_true(mi.nallocs == 1); /* no device copies were made */
  pto_program_release(p);
  pto_worker_close(w);
}

/* x: in, y: out, z: inout. The kernels write x's device copy, copy y's initial device content
 * into z, then fill y. */
static void dir_entry(const pto_orch_args *a) {
  const pto_orch_tensor *x = &a->tensors[0], *y = &a->tensors[1], *z = &a->tensors[2];
  pto_orch_task_arg t1[2] = {ta_inout(x), ta_scalar(f32_slot(100.0f))};
  g_api->submit(g_api->ctx, K_ADDC, PTO_CORE_AIV, t1, 2);
  pto_orch_task_arg t2[2] = {ta_in(y), ta_out(z)};
  g_api->submit(g_api->ctx, K_COPY, PTO_CORE_AIV, t2, 2);
  pto_orch_task_arg t3[3] = {ta_in(x), ta_out(y), ta_scalar(f32_slot(1.0f))};
  g_api->submit(g_api->ctx, K_SCALE, PTO_CORE_AIV, t3, 3);
}

static void test_host_tensors_are_copied_by_direction(void **state) {
  (void)state;
  pto_worker *w = topen(2, 0, 0);
  tsig s;
  tsig_init(&s, "dirs");
  tsig_tensor(&s, "x", PTO_DIR_IN, PTO_DTYPE_F32, "N");
  tsig_tensor(&s, "y", PTO_DIR_OUT, PTO_DTYPE_F32, "N");
  tsig_tensor(&s, "z", PTO_DIR_INOUT, PTO_DTYPE_F32, "N");
  pto_program *p = tprogram(&s, bind_api, dir_entry, NK, g_kernels, g_names);
  tsig_free(&s);
  /* x strided in host memory (every other element of a larger buffer). */
  float xbuf[20], y[10], z[10];
  for (int i = 0; i < 20; i++)
    xbuf[i] = (float)i;
  for (int i = 0; i < 10; i++) {
    y[i] = 7; /* would reach z if out were copied in */
    z[i] = -5;
  }
  int64_t shape[1] = {10};
  pto_host_tensor hx, hy, hz;
  pto_host_tensor_init(&hx, xbuf, PTO_DTYPE_F32, 1, shape);
  hx.strides[0] = 2;
  pto_host_tensor_init(&hy, y, PTO_DTYPE_F32, 1, shape);
  pto_host_tensor_init(&hz, z, PTO_DTYPE_F32, 1, shape);
  pto_arg args[3] = {pto_arg_host(&hx), pto_arg_host(&hy), pto_arg_host(&hz)};
  for (int round = 0; round < 3; round++) {
    assert_pto_ok(pto_worker_run(w, p, args, 3));
    for (int i = 0; i < 20; i++)
      assert_true(xbuf[i] == (float)i); /* in: never copied back */
    for (int i = 0; i < 10; i++) {
      assert_true(z[i] == 0.0f);                    /* out: never copied in (zeros) */
      assert_true(y[i] == (float)(2 * i) + 100.0f); /* out: copied back */
    }
  }
  pto_device_memory_info mi;
  assert_pto_ok(pto_worker_memory_info(w, &mi));
  assert_true(mi.used == 0); /* device copies freed */
  pto_program_release(p);
  pto_worker_close(w);
}

/* ---- launch failures
 * ----------------------------------------------------------------------------- */

static int g_mode;
static char g_msg[512];
static pto_handle *g_self;

static void fail_entry(const pto_orch_args *a) {
  const pto_orch_tensor *x = &a->tensors[0];
  switch (g_mode) {
  case 0: { /* a kernel fails */
    pto_orch_task_arg t[3] = {ta_in(x), ta_scalar(a->scalars[0])};
    g_api->submit(g_api->ctx, K_FAIL, PTO_CORE_AIV, t, 2);
    /* work queued behind it is skipped, not lost */
    for (int i = 0; i < 20; i++) {
      pto_orch_task_arg t2[2] = {ta_inout(x), ta_scalar(f32_slot(1.0f))};
      g_api->submit(g_api->ctx, K_ADDC, PTO_CORE_AIV, t2, 2);
    }
    break;
  }
  case 1:
    g_api->report_fatal(g_api->ctx, 7, "the input is not sorted");
    assert_true(g_api->is_fatal(g_api->ctx));
    break;
  case 2: {
    pto_orch_task_arg t[1] = {ta_in(x)};
    assert_int_not_equal(g_api->submit(g_api->ctx, NK, PTO_CORE_AIV, t, 1), 0);
    assert_int_not_equal(g_api->submit(g_api->ctx, K_ADDC, PTO_CORE_AIV, t, 1), 0); /* ignored */
    break;
  }
  case 3: { /* a view past its buffer */
    pto_orch_tensor v = *x;
    v.shape[0] += 1;
    pto_orch_task_arg t[2] = {ta_inout(&v), ta_scalar(0)};
    g_api->submit(g_api->ctx, K_ADDC, PTO_CORE_AIV, t, 2);
    break;
  }
  case 4: { /* not a buffer of this worker */
    pto_orch_tensor v = *x;
    v.buffer += 64;
    v.addr += 64;
    pto_orch_task_arg t[2] = {ta_inout(&v), ta_scalar(0)};
    g_api->submit(g_api->ctx, K_ADDC, PTO_CORE_AIV, t, 2);
    break;
  }
  case 5: { /* an intermediate used after its scope ended */
    pto_orch_tensor tmp;
    g_api->scope_begin(g_api->ctx);
    assert_int_equal(g_api->create_tensor(g_api->ctx, 1, x->shape, PTO_DTYPE_F32, &tmp), 0);
    g_api->scope_end(g_api->ctx);
    pto_orch_task_arg t[2] = {ta_inout(&tmp), ta_scalar(0)};
    g_api->submit(g_api->ctx, K_ADDC, PTO_CORE_AIV, t, 2);
    break;
  }
  case 6: g_api->scope_end(g_api->ctx); break;
  case 7: {
    int64_t idx[1] = {x->shape[0]};
    float v;
    assert_int_not_equal(g_api->read_element(g_api->ctx, x, idx, &v), 0);
    break;
  }
  case 8: { /* more device memory than there is */
    int64_t shape[1] = {1 << 20};
    pto_orch_tensor tmp;
    assert_int_not_equal(g_api->create_tensor(g_api->ctx, 1, shape, PTO_DTYPE_F64, &tmp), 0);
    break;
  }
  case 9: { /* a launch from inside the orchestration */
    pto_arg args[2] = {pto_arg_f32(1), pto_arg_f32(1)};
    pto_status s = pto_handle_call(g_self, args, 2);
    snprintf(g_msg, sizeof g_msg, "%s", pto_status_message(s));
    pto_status_free(s);
    break;
  }
  case 10: { /* the kernel's error detail reaches the message */
    pto_orch_task_arg t[2] = {ta_in(x), ta_scalar(PTO_KERNEL_ERR_DIM_MISMATCH)};
    g_api->submit(g_api->ctx, K_FAIL, PTO_CORE_AIV, t, 2);
    break;
  }
  }
}

static void test_launch_failures_name_the_cause_and_keep_the_worker_usable(void **state) {
  (void)state;
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.ncores = 2;
  cfg.device_memory_bytes = 4 << 20;
  pto_worker *w;
  assert_pto_ok(pto_worker_open(&cfg, &w));
  tsig s;
  tsig_init(&s, "failing");
  tsig_tensor(&s, "x", PTO_DIR_INOUT, PTO_DTYPE_F32, "N");
  tsig_scalar(&s, "code", PTO_DTYPE_I64, PTO_BIND_RUNTIME, tscalar_i64(PTO_DTYPE_I64, 0));
  pto_program *p = tprogram(&s, bind_api, fail_entry, NK, g_kernels, g_names);
  tsig_free(&s);
  pto_handle *h;
  assert_pto_ok(pto_worker_register(w, p, &h));
  g_self = h;
  pto_program *good = scale_program();
  pto_handle *hg;
  assert_pto_ok(pto_worker_register(w, good, &hg));

  float x[16] = {0};
  int64_t shape[1] = {16};
  pto_host_tensor hx;
  pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 1, shape);
  pto_arg args[2] = {pto_arg_host(&hx), pto_arg_i64(PTO_KERNEL_ERR_DIV_ZERO)};
  static const char *const expect[] = {
      "launch of 'failing': kernel 'k_fail' (id 3, task 0) failed with code 1 (integer division "
      "by zero)",
      "launch of 'failing': orchestration: reported a fatal error (code 7): the input is not "
      "sorted",
      "orchestration: submit: kernel id 6 is out of range (the program has 6 kernels)",
      "submit of kernel 'k_addc': argument 0: the view covers bytes [0, 68) of its buffer, which "
      "has 64 bytes",
      "submit of kernel 'k_addc': argument 0: buffer 0x",
      "submit of kernel 'k_addc': argument 0: the tensor was created (tensor.create) in a scope "
      "that has ended",
      "orchestration: scope_end without a matching scope_begin",
      "tensor.read: index 16 of dim 0 is out of range [0, 16)",
      "orchestration: out of device memory allocating an intermediate (tensor.create): 8388608 "
      "bytes requested",
      NULL,
      "kernel 'k_fail' (id 3, task 0) failed with code 2 (a dynamic dimension bound twice with "
      "different values: 64 and 32)",
  };
  for (g_mode = 0; g_mode <= 10; g_mode++) {
    for (int i = 0; i < 16; i++)
      x[i] = 5;
    pto_status st = pto_handle_call(h, args, 2);
    if (g_mode == 9) {
      assert_pto_ok(st);
      assert_non_null(strstr(g_msg, "a launch is already running on this worker"));
    } else {
      assert_int_equal(pto_status_code_of(st),
                       g_mode == 8 ? PTO_STATUS_OUT_OF_MEMORY : PTO_STATUS_LAUNCH);
      assert_status_contains(st, expect[g_mode]);
      for (int i = 0; i < 16; i++)
        assert_true(x[i] == 5.0f); /* no copy back after a failure */
    }
    pto_launch_record r;
    assert_pto_ok(pto_worker_last_launch(w, &r));
    assert_true(r.ok == (g_mode == 9));
    check_scale_ok(hg);
    pto_device_memory_info mi;
    assert_pto_ok(pto_worker_memory_info(w, &mi));
    assert_true(mi.used == 0); /* intermediates and device copies freed even after failure */
  }
  pto_program_release(p);
  pto_program_release(good);
  pto_worker_close(w);
}

/* ---- intermediates, scratch and idle cores -----------------------------------------------------
 */

static void scoped_loop_entry(const pto_orch_args *a) {
  const pto_orch_tensor *x = &a->tensors[0];
  for (int i = 0; i < 200; i++) {
    g_api->scope_begin(g_api->ctx);
    pto_orch_tensor tmp;
    int64_t shape[1] = {1 << 18}; /* 1 MiB of f32 */
    if (g_api->create_tensor(g_api->ctx, 1, shape, PTO_DTYPE_F32, &tmp)) return;
    int64_t off[1] = {0}, n[1] = {x->shape[0]};
    pto_orch_tensor head = tview(&tmp, off, n);
    pto_orch_task_arg t1[3] = {ta_in(x), ta_out(&head), ta_scalar(f32_slot(1.0f))};
    g_api->submit(g_api->ctx, K_SCALE, PTO_CORE_AIV, t1, 3);
    pto_orch_task_arg t2[2] = {ta_inout(&head), ta_scalar(f32_slot(1.0f))};
    g_api->submit(g_api->ctx, K_ADDC, PTO_CORE_AIV, t2, 2);
    pto_orch_task_arg t3[2] = {ta_in(&head), ta_out(x)};
    g_api->submit(g_api->ctx, K_COPY, PTO_CORE_AIV, t3, 2);
    g_api->scope_end(g_api->ctx);
  }
}

static void test_intermediates_are_freed_when_their_scope_and_tasks_end(void **state) {
  (void)state;
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.ncores = 2;
  cfg.device_memory_bytes = 16 << 20; /* 200 live intermediates would need 200 MiB */
  pto_worker *w;
  assert_pto_ok(pto_worker_open(&cfg, &w));
  tsig s;
  tsig_init(&s, "loop");
  tsig_tensor(&s, "x", PTO_DIR_INOUT, PTO_DTYPE_F32, "N");
  pto_program *p = tprogram(&s, bind_api, scoped_loop_entry, NK, g_kernels, g_names);
  tsig_free(&s);
  float x[32] = {0};
  int64_t shape[1] = {32};
  pto_host_tensor hx;
  pto_host_tensor_init(&hx, x, PTO_DTYPE_F32, 1, shape);
  pto_arg arg = pto_arg_host(&hx);
  assert_pto_ok(pto_worker_run(w, p, &arg, 1));
  for (int i = 0; i < 32; i++)
    assert_true(x[i] == 200.0f);
  pto_device_memory_info mi;
  assert_pto_ok(pto_worker_memory_info(w, &mi));
  assert_true(mi.used == 0 && mi.nallocs == 0);
  assert_true(mi.peak < (16u << 20));
  pto_launch_record r;
  assert_pto_ok(pto_worker_last_launch(w, &r));
  assert_true(r.ntasks == 600);
  pto_program_release(p);
  pto_worker_close(w);
}

static void ctx_entry(const pto_orch_args *a) {
  for (int i = 0; i < 16; i++) {
    pto_orch_task_arg t[1] = {ta_scalar(a->scalars[0])};
    g_api->submit(g_api->ctx, K_CTX, PTO_CORE_AIV, t, 1);
  }
}

static void test_kernels_get_an_aligned_scratch_grown_to_the_program(void **state) {
  (void)state;
  pto_worker *w = topen(3, 0, 0);
  tsig s;
  tsig_init(&s, "ctx");
  tsig_scalar(&s, "bytes", PTO_DTYPE_U64, PTO_BIND_RUNTIME, tscalar_i64(PTO_DTYPE_U64, 0));
  pto_program *p = NULL;
  assert_pto_ok(pto_program_create_from_functions(&s.sig, bind_api, ctx_entry, NK, g_kernels,
                                                  g_names, 3u << 20, &p));
  tsig_free(&s);
  pto_arg arg = pto_arg_u64(3u << 20);
  atomic_store(&g_ctx_bad, 0);
  assert_pto_ok(pto_worker_run(w, p, &arg, 1));
  assert_int_equal(atomic_load(&g_ctx_bad), 0);
  pto_program_release(p);
  pto_worker_close(w);
}

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

static void test_idle_cores_block_instead_of_spinning(void **state) {
  (void)state;
  pto_worker *w = topen(4, 0, 0);
  pto_program *p = scale_program();
  pto_handle *h;
  assert_pto_ok(pto_worker_register(w, p, &h));
  check_scale_ok(h);
  struct timespec ts = {0, 20 * 1000 * 1000};
  nanosleep(&ts, NULL); /* past the idle spin */
  double c0 = cpu_seconds();
  ts.tv_nsec = 300 * 1000 * 1000;
  nanosleep(&ts, NULL);
  double used = cpu_seconds() - c0;
  /* Four spinning cores would burn ~1.2 s of CPU in 0.3 s. */
  assert_true(used < 0.05);
  check_scale_ok(h); /* and they wake up for the next launch */
  pto_program_release(p);
  pto_worker_close(w);
}

/* Eight independent naps: every vector core of the worker runs some at once. */
static void naps_entry(const pto_orch_args *a) {
  (void)a;
  for (int i = 0; i < 8; i++)
    g_api->submit(g_api->ctx, 0, PTO_CORE_AIV, NULL, 0);
}

static void test_idle_spinners_leave_a_cpu_to_the_dispatching_thread(void **state) {
  (void)state;
  /* Two CPUs for this thread and the core threads it starts: at most one core may spin. */
  cpu_set_t old;
  if (!use_two_cpus(&old)) skip();
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.aiv_cores = 4;
  cfg.aic_cores = 1;
  cfg.idle_spin_us = 60000000; /* every idle core would spin 60 s (close stops them) */
  pto_worker *w = NULL;
  assert_pto_ok(pto_worker_open(&cfg, &w));
  assert_int_equal(sched_setaffinity(0, sizeof old, &old), 0);
  tsig s;
  tsig_init(&s, "naps");
  const pto_kernel_fn nap[1] = {k_nap};
  const char *const nap_name[1] = {"k_nap"};
  pto_program *p = tprogram(&s, bind_api, naps_entry, 1, nap, nap_name);
  tsig_free(&s);
  const pto_task_record *t;
  size_t nt;
  assert_pto_ok(pto_worker_set_record_tasks(w, true));
  assert_pto_ok(pto_worker_run(w, p, NULL, 0));
  assert_pto_ok(pto_worker_last_launch_tasks(w, &t, &nt));
  int used_core[8] = {0}, ncores_used = 0;
  for (size_t i = 0; i < nt; i++)
    if (t[i].core >= 0 && t[i].core < 8 && !used_core[t[i].core]++) ncores_used++;
  assert_true(ncores_used >= 2); /* several cores went idle together */
  /* Now idle: they count themselves while they spin. Those over the budget give their places
   * up (each once it runs: within 30 s, a hang's bound, whatever the load; they would spin 60 s),
   * and from then on one spins (a core spins at all), never more. */
  pto__rt_worker *iw = pto__rt_obj_get(w, PTO__RT_OBJ_WORKER, NULL);
  assert_non_null(iw);
  assert_int_equal(iw->pool.spin_budget, 1);
  uint64_t t0 = pto__rt_now_ns();
  while (atomic_load(&iw->pool.nspinning) > 1 && pto__rt_now_ns() - t0 < 30000 * 1000 * 1000ull) {
    struct timespec ts = {0, 100 * 1000};
    nanosleep(&ts, NULL);
  }
  int most = 0;
  t0 = pto__rt_now_ns();
  while (pto__rt_now_ns() - t0 < 300 * 1000 * 1000ull) {
    int n = atomic_load(&iw->pool.nspinning);
    most = n > most ? n : most;
    struct timespec ts = {0, 100 * 1000};
    nanosleep(&ts, NULL);
  }
  assert_int_equal(most, 1);
  pto_program_release(p);
  pto_worker_close(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_worker_open_applies_defaults_and_rejects_bad_config),
      cmocka_unit_test(test_close_frees_everything_and_stale_tokens_are_errors),
      cmocka_unit_test(test_register_same_program_aliases_one_callable),
      cmocka_unit_test(test_register_rejects_a_program_without_kernel_functions),
      cmocka_unit_test(test_device_memory_has_its_own_address_range),
      cmocka_unit_test(test_alloc_tensor_puts_large_tensors_on_a_page),
      cmocka_unit_test(test_alloc_tensor_validates_shape_and_reports_out_of_memory),
      cmocka_unit_test(test_dispatch_validates_arguments_naming_the_parameter),
      cmocka_unit_test(test_dispatch_rejects_host_tensors_whose_size_or_strides_overflow),
      cmocka_unit_test(test_copy_calls_reject_address_zero_and_freed_tensors),
      cmocka_unit_test(test_second_concurrent_launch_is_refused),
      cmocka_unit_test(test_launches_from_many_threads_run_whole_or_are_refused),
      cmocka_unit_test(test_close_waits_for_another_threads_launch),
      cmocka_unit_test(test_close_racing_launches_never_crashes_or_leaks),
      cmocka_unit_test(test_dispatch_reports_static_shape_mismatch),
      cmocka_unit_test(test_device_tensors_stay_resident_across_calls),
      cmocka_unit_test(test_host_tensors_are_copied_by_direction),
      cmocka_unit_test(test_launch_failures_name_the_cause_and_keep_the_worker_usable),
      cmocka_unit_test(test_intermediates_are_freed_when_their_scope_and_tasks_end),
      cmocka_unit_test(test_kernels_get_an_aligned_scratch_grown_to_the_program),
      cmocka_unit_test(test_idle_cores_block_instead_of_spinning),
      cmocka_unit_test(test_idle_spinners_leave_a_cpu_to_the_dispatching_thread),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
