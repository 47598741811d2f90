/* The public C API called the wrong way (task atk17b, a sweep of the headers in include/pto): NULL
 * objects and out-parameters, out-of-range configuration, a rank past PTO_MAX_RANK. Each call
 * must fail with a status naming what was wrong (docs/c-api.md: library code never crashes on a
 * caller's mistake it can see); before these fixes each of them dereferenced NULL or wrote past
 * an array. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pto/base.h"
#include "pto/bench.h"
#include "pto/cache.h"
#include "pto/dist.h"
#include "pto/ir.h"
#include "pto/ir_builder.h"
#include "pto/loader.h"
#include "pto/manifest.h"
#include "pto/runtime.h"
#include "pto/signature.h"
#include "pto/status.h"
#include "pto/types.h"
#include "testutil.h"

/* pto_host_tensor_init wrote rank entries into shape[PTO_MAX_RANK] and strides: rank 9 ran past
 * the struct. A rank out of range is now stored as given and every dim left alone. */
static void test_host_tensor_init_rank_out_of_range(void **state) {
  (void)state;
  struct {
    pto_host_tensor t;
    int64_t guard[8];
  } s;
  memset(&s, 0x5a, sizeof s);
  int64_t shape[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  pto_host_tensor_init(&s.t, NULL, PTO_DTYPE_F32, 9, shape);
  for (int i = 0; i < 8; i++)
    assert_int_equal(s.guard[i], 0x5a5a5a5a5a5a5a5all);
  assert_int_equal(s.t.rank, 9);
  assert_int_equal(pto_host_tensor_numel(&s.t), -1);
  pto_host_tensor_init(&s.t, NULL, PTO_DTYPE_F32, -1, shape);
  assert_int_equal(s.t.rank, -1);
  assert_int_equal(pto_host_tensor_numel(&s.t), -1);
  pto_host_tensor_init(&s.t, NULL, PTO_DTYPE_F32, 2, shape); /* in range: as before */
  assert_int_equal(s.t.shape[1], 2);
  assert_int_equal(s.t.strides[0], 2);
}

static void test_worker_out_params(void **state) {
  (void)state;
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.ncores = 1;
  pto_worker *w = NULL;
  assert_pto_ok(pto_worker_open(&cfg, &w));
  assert_status_contains(pto_worker_memory_info(w, NULL),
                         "pto_worker_memory_info: out_info is NULL");
  int64_t shape[1] = {16};
  pto_device_tensor *t = NULL;
  assert_pto_ok(pto_worker_alloc_tensor(w, 1, shape, PTO_DTYPE_F32, NULL, &t));
  assert_status_contains(pto_device_tensor_describe(t, NULL),
                         "pto_device_tensor_describe: out_info is NULL");
  pto_device_memory_info mi;
  assert_pto_ok(pto_worker_memory_info(w, &mi));
  assert_int_equal(mi.nallocs, 1);
  pto_worker_close(w);
}

/* Every builder call took the builder for granted; a NULL one is now refused naming the call,
 * and so is a NULL out-parameter the call must write. */
static void test_builder_null(void **state) {
  (void)state;
  pto_ir_expr *e = NULL;
  const pto_ir_type *ty = NULL;
  pto_ir_program *p = NULL;
  assert_status_contains(pto_ir_builder_int(NULL, 1, &e),
                         "pto_ir_builder_int: the builder is NULL");
  assert_status_contains(pto_ir_builder_body_end(NULL),
                         "pto_ir_builder_body_end: the builder is NULL");
  assert_status_contains(pto_ir_builder_finish(NULL, &p),
                         "pto_ir_builder_finish: the builder is NULL");
  assert_status_contains(pto_ir_builder_tensor_type(NULL, PTO_DTYPE_F32, 1, &e, &ty),
                         "pto_ir_builder_tensor_type: b is NULL");
  assert_status_contains(pto_ir_builder_create("x", NULL, NULL),
                         "pto_ir_builder_create: out_b is NULL");
  pto_ir_builder *b = NULL;
  assert_pto_ok(pto_ir_builder_create("x", NULL, &b));
  assert_status_contains(pto_ir_builder_int(b, 1, NULL), "pto_ir_builder_int: out_expr is NULL");
  assert_status_contains(pto_ir_builder_scalar_type(b, PTO_DTYPE_F32, NULL),
                         "pto_ir_builder_scalar_type: out_type is NULL");
  assert_status_contains(pto_ir_builder_finish(b, NULL),
                         "pto_ir_builder_finish: out_program is NULL");
  /* None of these is the builder's sticky error: it still works. */
  assert_pto_ok(pto_ir_builder_int(b, 1, &e));
  assert_pto_ok(pto_ir_builder_finish(b, &p));
  pto_ir_builder_destroy(b);
  pto_ir_program_destroy(p);
}

static const char *const k_add =
    "program add\n"
    "kernel @k(%a: tensor[32,128] f32, out %c: tensor[32,128] f32) -> (tensor[32,128] f32) {\n"
    "  %t = tile.load(%a, [0, 0], [32, 128])\n"
    "  %c1 = tile.store(%t, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n"
    "orch @main(%a: tensor[32,128] f32, out %c: tensor[32,128] f32) -> (tensor[32,128] f32) {\n"
    "  %c1 = call @k(%a, %c)\n"
    "  return %c1\n"
    "}\n";

static void test_parse_and_compile_null(void **state) {
  (void)state;
  assert_status_contains(pto_ir_parse_string(k_add, strlen(k_add), "add", NULL),
                         "pto_ir_parse_string: out_program is NULL");
  assert_status_contains(pto_ir_parse_file("x.ptir", NULL),
                         "pto_ir_parse_file: out_program is NULL");
  pto_program *prog = NULL;
  assert_status_contains(pto_compile(NULL, NULL, &prog), "pto_compile: the IR program is NULL");
  assert_status_contains(pto_compile_uncached(NULL, NULL, &prog),
                         "pto_compile_uncached: the IR program is NULL");
  assert_status_contains(pto_compile_to_dir(NULL, NULL, "/nonexistent", 0),
                         "pto_compile_to_dir: the IR program is NULL");
  char key[33];
  assert_status_contains(pto_cache_key(NULL, NULL, key, NULL),
                         "pto_cache_key: the IR program is NULL");
  pto_ir_program *ir = NULL;
  assert_pto_ok(pto_ir_parse_string(k_add, strlen(k_add), "add", &ir));
  assert_status_contains(pto_compile(ir, NULL, NULL), "pto_compile: out_program is NULL");
  pto_ir_program_destroy(ir);
}

/* The program accessors read through a NULL program; they now give what they give for an index
 * out of range. */
static void test_program_accessors_null(void **state) {
  (void)state;
  assert_null(pto_program_signature(NULL));
  assert_int_equal(pto_program_hid(NULL), 0);
  assert_null(pto_program_orch_entry(NULL));
  assert_null(pto_program_orch_config(NULL));
  assert_int_equal(pto_program_kernel_count(NULL), 0);
  assert_null(pto_program_kernel(NULL, 0));
  assert_string_equal(pto_program_kernel_name(NULL, 0), "?");
  assert_int_equal(pto_program_kernel_core_type(NULL, 0), -1);
  assert_int_equal(pto_program_scratch_bytes(NULL), 0);
  assert_null(pto_program_work_dir(NULL));
  assert_int_equal(pto_program_is_host(NULL), 0);
  assert_int_equal(pto_program_device_count(NULL), 0);
  assert_int_equal(pto_program_device_id(NULL, 0), -1);
  assert_int_equal(pto_program_callee_count(NULL), 0);
  assert_null(pto_program_callee(NULL, 0));
  assert_null(pto_program_host_entry(NULL));
  assert_status_contains(pto_program_set_kernel_core_type(NULL, 0, -1),
                         "pto_program_set_kernel_core_type: the program is NULL");
}

/* $XDG_CACHE_HOME relative: ignored (XDG base directory spec), not a cache in the current
 * directory; a path that does not fit is an error, not a truncated (other) directory. */
static void test_cache_dir_env(void **state) {
  (void)state;
  char *saved_pto = getenv("PTO_CACHE_DIR") ? strdup(getenv("PTO_CACHE_DIR")) : NULL;
  char *saved_xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
  char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
  char dir[4096];
  unsetenv("PTO_CACHE_DIR");
  setenv("HOME", "/home/someone", 1);
  setenv("XDG_CACHE_HOME", "relative/cache", 1);
  assert_pto_ok(pto_cache_dir(dir, sizeof dir));
  assert_string_equal(dir, "/home/someone/.cache/pto");
  setenv("XDG_CACHE_HOME", "/abs/cache", 1);
  assert_pto_ok(pto_cache_dir(dir, sizeof dir));
  assert_string_equal(dir, "/abs/cache/pto");
  char small[8];
  assert_status_contains(pto_cache_dir(small, sizeof small),
                         "the cache directory /abs/cache/pto is longer than 7 bytes");
  assert_status_contains(pto_cache_dir(NULL, 0), "pto_cache_dir: out is NULL or n is 0");
  if (saved_pto) setenv("PTO_CACHE_DIR", saved_pto, 1);
  if (saved_xdg)
    setenv("XDG_CACHE_HOME", saved_xdg, 1);
  else
    unsetenv("XDG_CACHE_HOME");
  if (saved_home) setenv("HOME", saved_home, 1);
  free(saved_pto);
  free(saved_xdg);
  free(saved_home);
}

/* pto_dist_config sizes were passed on unchecked: shared_heap_bytes near UINT64_MAX wrapped to
 * 0 when rounded to pages ("cannot map 0 bytes", OUT_OF_MEMORY), ncores_per_chip -2 came back
 * as an INTERNAL error of rank 0. */
static void test_dist_config_ranges(void **state) {
  (void)state;
  pto_dist_config cfg;
  pto_dist_worker *w = NULL;
  pto_dist_config_init(&cfg);
  cfg.ndevices = 1;
  cfg.shared_heap_bytes = UINT64_MAX;
  assert_status_contains(pto_dist_worker_open(&cfg, &w),
                         "shared_heap_bytes 18446744073709551615 is out of range");
  cfg.shared_heap_bytes = (1ull << 40) + 1;
  assert_status_contains(pto_dist_worker_open(&cfg, &w),
                         "shared_heap_bytes 1099511627777 is out of range");
  cfg.shared_heap_bytes = 0;
  cfg.ncores_per_chip = -2;
  pto_status s = pto_dist_worker_open(&cfg, &w);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_INVALID_ARGUMENT);
  assert_status_contains(s, "ncores_per_chip -2 is out of range");
  assert_null(w);
}

static const char *const k_host =
    "program h\n"
    "kernel @k(%a: tensor[16,64] f32, out %c: tensor[16,64] f32) -> (tensor[16,64] f32) {\n"
    "  %t = tile.load(%a, [0, 0], [16, 64])\n"
    "  %c1 = tile.store(%t, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n"
    "orch @o(%a: tensor[16,64] f32, out %c: tensor[16,64] f32) -> (tensor[16,64] f32) {\n"
    "  %c1 = call @k(%a, %c)\n"
    "  return %c1\n"
    "}\n"
    "host @main(%a: tensor[16,64] f32, out %c: tensor[16,64] f32) {\n"
    "  call @o(%a, %c) device=0\n"
    "}\n";

/* pto_dist_worker_run(w, p, NULL, n) read args[0]; a stacked tensor from a host tensor without
 * data copied from NULL. */
static void test_dist_null_args(void **state) {
  (void)state;
  pto_ir_program *ir = NULL;
  assert_pto_ok(pto_ir_parse_string(k_host, strlen(k_host), "h", &ir));
  int32_t dev = 0;
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  opt.devices = &dev;
  opt.ndevices = 1;
  pto_program *p = NULL;
  assert_pto_ok(pto_compile(ir, &opt, &p));
  pto_ir_program_destroy(ir);
  pto_dist_config cfg;
  pto_dist_config_init(&cfg);
  cfg.ndevices = 1;
  cfg.ncores_per_chip = 1;
  cfg.chips = "threads";
  pto_dist_worker *w = NULL;
  assert_pto_ok(pto_dist_worker_open(&cfg, &w));
  assert_status_contains(pto_dist_worker_run(w, p, NULL, 2), "pto_dist_worker_run: args is NULL");
  static float a[16 * 64], c[16 * 64];
  for (int i = 0; i < 16 * 64; i++)
    a[i] = (float)i;
  const int64_t shape[2] = {16, 64}, sshape[3] = {1, 16, 64};
  pto_host_tensor ha, hc, hs;
  pto_host_tensor_init(&ha, a, PTO_DTYPE_F32, 2, shape);
  pto_host_tensor_init(&hc, c, PTO_DTYPE_F32, 2, shape);
  pto_host_tensor_init(&hs, NULL, PTO_DTYPE_F32, 3, sshape);
  pto_dist_tensor *st = NULL;
  assert_status_contains(pto_dist_alloc_stacked_tensor(w, &hs, NULL, &st),
                         "pto_dist_alloc_stacked_tensor: the host tensor has no data (NULL)");
  /* A zeroed argument, or one of no known kind, was "parameter 'a' is a tensor". */
  pto_arg bad[2] = {{.kind = PTO_ARG_NONE}, pto_arg_host(&hc)};
  assert_status_contains(pto_dist_worker_run(w, p, bad, 2),
                         "parameter 'a': expected a tensor (a host tensor or this worker's "
                         "pto_dist_tensor), got no argument (kind unset)");
  bad[0].kind = (pto_arg_type)77;
  assert_status_contains(pto_dist_worker_run(w, p, bad, 2), "got an argument of no known kind");
  /* The worker is not hurt by any of these: a run after them is correct. */
  pto_arg args[2] = {pto_arg_host_readonly(&ha), pto_arg_host(&hc)};
  assert_pto_ok(pto_dist_worker_run(w, p, args, 2));
  assert_memory_equal(a, c, sizeof a);
  pto_dist_worker_close(w);
  pto_program_release(p);
}

/* The host tensor of pto_dist_alloc_stacked_tensor and pto_dist_copy_stacked_from had its strides
 * used unchecked: a stride whose reach overflows int64 (which a launch refuses: "the host
 * tensor's strides overflow") was multiplied out (undefined; stride 2^61 of dim 1 crashed the
 * process, stride 2^62 of dim 0 wrapped to 0 bytes and read shard 0 twice). Now both refuse it,
 * naming the dim, with nothing allocated or written. */
static void test_dist_stacked_strides_overflow(void **state) {
  (void)state;
  pto_dist_config cfg;
  pto_dist_config_init(&cfg);
  cfg.ndevices = 2;
  cfg.ncores_per_chip = 1;
  cfg.chips = "threads";
  pto_dist_worker *w = NULL;
  assert_pto_ok(pto_dist_worker_open(&cfg, &w));
  static float a[2 * 4 * 8], back[2 * 4 * 8];
  for (int i = 0; i < 2 * 4 * 8; i++)
    a[i] = (float)i;
  const int64_t shape[3] = {2, 4, 8};
  const struct {
    int dim;
    int64_t stride;
    const char *text;
  } bad[] = {
      {0, INT64_C(1) << 62, "the host tensor's strides overflow"}, /* in bytes */
      {1, INT64_C(1) << 62, "strides overflow (stride 4611686018427387904 of dim 1, extent 4)"},
      {1, INT64_MIN, "strides overflow (stride -9223372036854775808 of dim 1, extent 4)"},
      {2, INT64_C(1) << 60, "pto_dist_alloc_stacked_tensor: the host tensor's strides overflow"},
  };
  pto_dist_tensor *st = NULL;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    pto_host_tensor h;
    pto_host_tensor_init(&h, a, PTO_DTYPE_F32, 3, shape);
    h.strides[bad[i].dim] = bad[i].stride;
    if (bad[i].dim == 2) /* the reach in elements fits, in bytes it does not */
      h.strides[1] = h.strides[0] = 1;
    pto_dist_tensor *t = (pto_dist_tensor *)&st; /* must come back NULL */
    pto_status s = pto_dist_alloc_stacked_tensor(w, &h, NULL, &t);
    assert_status_contains(s, bad[i].text);
    assert_null(t);
  }
  pto_host_tensor h;
  pto_host_tensor_init(&h, a, PTO_DTYPE_F32, 3, shape);
  assert_pto_ok(pto_dist_alloc_stacked_tensor(w, &h, NULL, &st));
  for (size_t i = 0; i < 3; i++) {
    pto_host_tensor o;
    pto_host_tensor_init(&o, back, PTO_DTYPE_F32, 3, shape);
    o.strides[bad[i].dim] = bad[i].stride;
    assert_status_contains(pto_dist_copy_stacked_from(w, st, &o), bad[i].text);
  }
  for (size_t i = 0; i < 2 * 4 * 8; i++)
    assert_true(back[i] == 0.0f); /* nothing written */
  pto_host_tensor o;
  pto_host_tensor_init(&o, back, PTO_DTYPE_F32, 3, shape);
  assert_pto_ok(pto_dist_copy_stacked_from(w, st, &o));
  assert_memory_equal(a, back, sizeof a);
  assert_pto_ok(pto_dist_free_tensor(w, st));
  pto_dist_worker_close(w);
}

/* More calls that read through a NULL argument before these fixes. */
static void test_more_nulls(void **state) {
  (void)state;
  char key[33];
  char *path = NULL;
  assert_status_contains(pto_cache_find(NULL, key, &path), "pto_cache_find: prefix is NULL");
  assert_status_contains(pto_cache_stats_get(NULL), "pto_cache_stats_get: out is NULL");
  /* lstat(NULL) failed with EFAULT: UBSan's nonnull report, now refused before. */
  assert_status_contains(pto_cache_verify_entry(NULL, NULL), "entry_dir or key is NULL");
  assert_status_contains(pto_file_replace(NULL, NULL, NULL, 0), "pto_file_replace: path is NULL");
  pto_file_remove_tree(NULL);
  assert_int_equal(pto_file_tree_bytes(NULL), 0);
  assert_status_contains(pto_cache_remove(NULL, key), "pto_cache_remove: prefix is NULL");
  int64_t v;
  assert_status_contains(pto_env_int(NULL, 0, 1, 0, &v), "pto_env_int: name is NULL");
  assert_status_contains(pto_env_int("PTO_X", 0, 1, 0, NULL), "pto_env_int: out is NULL");
  assert_status_contains(pto_manifest_parse("{}", 2, "m", NULL),
                         "pto_manifest_parse: out_m is NULL");
  assert_status_contains(pto_signature_copy(NULL, NULL), "pto_signature_copy: src is NULL");
  assert_status_contains(pto_ir_value_map_init(NULL, 1), "pto_ir_value_map_init: m is NULL");
  assert_status_contains(pto_ir_print_file(NULL, stdout), "pto_ir_print_file: p is NULL");
  /* A NULL object with valid out-parameters. */
  char *text = NULL;
  pto_ir_func *fn = NULL;
  pto_ir_program *prog = NULL;
  assert_status_contains(pto_ir_print(NULL, &text), "pto_ir_print: p is NULL");
  assert_status_contains(pto_ir_format(NULL, &text), "pto_ir_format: p is NULL");
  assert_status_contains(pto_ir_program_entry(NULL, NULL, &fn), "pto_ir_program_entry: p is NULL");
  assert_status_contains(pto_ir_program_copy(NULL, &prog), "pto_ir_program_copy: src is NULL");
  assert_status_contains(pto_ir_specialize(NULL, NULL, NULL, &prog),
                         "pto_ir_specialize: p is NULL");
  assert_status_contains(pto_manifest_to_json(NULL, &text), "pto_manifest_to_json: m is NULL");
  assert_status_contains(pto_signature_fingerprint(NULL, 0, NULL, NULL, key),
                         "pto_signature_fingerprint: sig is NULL");
  assert_null(text);
  /* Value-returning builder calls and the config initialisers take NULL as nothing. */
  assert_null(pto_ir_builder_program(NULL));
  assert_null(pto_ir_builder_error(NULL));
  assert_int_equal(pto_ir_builder_loc(NULL).line, 0);
  assert_int_equal(pto_ir_builder_find_sym(NULL, "M", 1), -1);
  pto_ir_builder_set_loc(NULL, (pto_loc){1, 1});
  pto_run_config_init(NULL);
  pto_dist_config_init(NULL);
  pto_bench_options_init(NULL);
  pto_ir_value_map_clear(NULL);
}

/* Value-returning calls outside the documented libc-like helpers (pto/base.h's allocation, text
 * and hash helpers, pto/arena.h) dereferenced a NULL object or name: each now returns its
 * neutral value (-1, 0, NULL, false) or does nothing, as its header says. */
static void test_value_returning_nulls(void **state) {
  (void)state;
  assert_int_equal(pto_dtype_from_name(NULL, 3), -1);
  assert_int_equal(pto_space_from_name(NULL, 3), -1);
  pto_host_tensor_init(NULL, NULL, PTO_DTYPE_F32, 1, NULL);
  assert_int_equal(pto_host_tensor_numel(NULL), -1);
  int64_t numel = 7, nbytes = 7;
  assert_int_equal(pto_shape_size(2, NULL, PTO_DTYPE_F32, &numel, &nbytes), -1);
  assert_int_equal(numel, 7);
  assert_int_equal(pto_shape_size(0, NULL, PTO_DTYPE_F32, &numel, &nbytes), 0); /* a scalar */
  assert_int_equal(numel, 1);
  int64_t lo = 5;
  uint64_t hi = 5;
  assert_int_equal(pto_dtype_int_range(PTO_DTYPE_I8, NULL, &hi), -1);
  assert_int_equal(pto_dtype_int_range(PTO_DTYPE_I8, &lo, NULL), -1);
  assert_int_equal(lo, 5);
  assert_int_equal(hi, 5);
  assert_null(pto_manifest_find_file(NULL, "kernels.so"));
  assert_int_equal(pto_signature_find(NULL, "x"), -1);
  assert_int_equal(pto_signature_intern_sym(NULL, "M"), -1);
  pto_signature sig;
  memset(&sig, 0, sizeof sig);
  assert_int_equal(pto_signature_find(&sig, NULL), -1);
  assert_int_equal(pto_signature_intern_sym(&sig, NULL), -1);
  assert_int_equal(sig.nsyms, 0);
  assert_false(pto_ir_expr_divides_int(NULL));
  assert_false(pto_ir_stmt_divides_int(NULL));
  assert_int_equal(pto_ir_stmt_each_expr(NULL, NULL, NULL), 0);
  assert_int_equal(pto_hid_from_build_id(NULL, 8), 0);
  pto_compile_options_init(NULL);
}

/* A NULL array with a nonzero count: the builder read through it (tensor_type, tile_type,
 * func_rets, if_begin's results, call's args, for_begin's iters) or printed a NULL name
 * (lookup); each is now the builder's error naming the array. */
static void test_builder_null_arrays(void **state) {
  (void)state;
  pto_ir_builder *b = NULL;
  const pto_ir_type *t = NULL;
  assert_pto_ok(pto_ir_builder_create("n", NULL, &b));
  assert_status_contains(pto_ir_builder_tensor_type(b, PTO_DTYPE_F32, 2, NULL, &t),
                         "tensor rank 2: dims is NULL");
  pto_ir_builder_destroy(b);
  assert_pto_ok(pto_ir_builder_create("n", NULL, &b));
  assert_status_contains(pto_ir_builder_dtensor_type(b, PTO_DTYPE_F32, 2, NULL, &t),
                         "dtensor rank 2: dims is NULL");
  pto_ir_builder_destroy(b);
  assert_pto_ok(pto_ir_builder_create("n", NULL, &b));
  assert_status_contains(
      pto_ir_builder_tile_type(b, PTO_DTYPE_F32, 2, NULL, PTO_SPACE_VEC, 0, NULL, &t),
      "tile: dims is NULL");
  pto_ir_builder_destroy(b);
  assert_pto_ok(pto_ir_builder_create("n", NULL, &b));
  pto_ir_expr *d[2] = {NULL, NULL};
  assert_pto_ok(pto_ir_builder_int(b, 16, &d[0]));
  assert_pto_ok(pto_ir_builder_int(b, 16, &d[1]));
  assert_status_contains(
      pto_ir_builder_tile_type(b, PTO_DTYPE_F32, 2, d, PTO_SPACE_VEC, 2, NULL, &t),
      "tile: valid is NULL with nvalid 2");
  pto_ir_builder_destroy(b);

  /* A kernel with one in tensor, and an orch calling it. */
  pto_ir_func *k = NULL, *o = NULL;
  pto_ir_value *x = NULL;
  assert_pto_ok(pto_ir_builder_create("n", NULL, &b));
  d[0] = d[1] = NULL;
  assert_pto_ok(pto_ir_builder_int(b, 16, &d[0]));
  assert_pto_ok(pto_ir_builder_int(b, 16, &d[1]));
  assert_pto_ok(pto_ir_builder_tensor_type(b, PTO_DTYPE_F32, 2, d, &t));
  assert_pto_ok(pto_ir_builder_func_begin(b, PTO_FUNC_KERNEL, "k", &k));
  assert_pto_ok(pto_ir_builder_param(b, "x", t, PTO_DIR_IN, 0, PTO_BIND_NONE, NULL, &x));
  assert_pto_ok(pto_ir_builder_header_end(b));
  assert_pto_ok(pto_ir_builder_func_begin(b, PTO_FUNC_ORCH, "o", &o));
  assert_status_contains(pto_ir_builder_func_rets(b, NULL, 1),
                         "-> list of 1 types, but types is NULL");
  pto_ir_builder_destroy(b);

  assert_pto_ok(pto_ir_builder_create("n", NULL, &b));
  d[0] = d[1] = NULL;
  assert_pto_ok(pto_ir_builder_int(b, 16, &d[0]));
  assert_pto_ok(pto_ir_builder_int(b, 16, &d[1]));
  assert_pto_ok(pto_ir_builder_tensor_type(b, PTO_DTYPE_F32, 2, d, &t));
  assert_pto_ok(pto_ir_builder_func_begin(b, PTO_FUNC_KERNEL, "k", &k));
  assert_pto_ok(pto_ir_builder_param(b, "x", t, PTO_DIR_IN, 0, PTO_BIND_NONE, NULL, &x));
  assert_pto_ok(pto_ir_builder_header_end(b));
  assert_pto_ok(pto_ir_builder_func_begin(b, PTO_FUNC_ORCH, "o", &o));
  assert_pto_ok(pto_ir_builder_body_begin(b, o));
  pto_ir_stmt *st = NULL;
  assert_status_contains(pto_ir_builder_call(b, k, NULL, 1, NULL, NULL, 0, &st),
                         "call @k: 1 arguments, but args is NULL");
  pto_ir_builder_destroy(b);

  pto_ir_expr *e = NULL, *lo = NULL, *hi = NULL;
  pto_ir_value *v = NULL;
  pto_ir_result r = {.name = "r"};
  assert_pto_ok(pto_ir_builder_create("n", NULL, &b));
  assert_pto_ok(pto_ir_builder_func_begin(b, PTO_FUNC_ORCH, "o", &o));
  assert_pto_ok(pto_ir_builder_body_begin(b, o));
  assert_pto_ok(pto_ir_builder_bool(b, 1, &e));
  assert_status_contains(pto_ir_builder_if_begin(b, e, NULL, 1, &st),
                         "1 result, but results is NULL");
  pto_ir_builder_destroy(b);
  assert_pto_ok(pto_ir_builder_create("n", NULL, &b));
  assert_pto_ok(pto_ir_builder_func_begin(b, PTO_FUNC_ORCH, "o", &o));
  assert_pto_ok(pto_ir_builder_body_begin(b, o));
  assert_pto_ok(pto_ir_builder_int(b, 0, &lo));
  assert_pto_ok(pto_ir_builder_int(b, 4, &hi));
  assert_status_contains(
      pto_ir_builder_for_begin(b, "i", 0, lo, hi, NULL, NULL, NULL, 1, &r, 1, &st),
      "for: 1 iter variable, but iters or inits is NULL");
  pto_ir_builder_destroy(b);
  assert_pto_ok(pto_ir_builder_create("n", NULL, &b));
  assert_pto_ok(pto_ir_builder_func_begin(b, PTO_FUNC_ORCH, "o", &o));
  assert_pto_ok(pto_ir_builder_body_begin(b, o));
  assert_status_contains(pto_ir_builder_lookup(b, NULL, &v), "lookup of a NULL name");
  pto_ir_builder_destroy(b);
}

/* pto_program_op_text wrote through a NULL buf given with a nonzero size. */
static void test_op_text_null_buf(void **state) {
  (void)state;
  pto_ir_program *ir = NULL;
  pto_program *p = NULL;
  assert_pto_ok(pto_ir_parse_string(k_add, strlen(k_add), "add", &ir));
  assert_pto_ok(pto_compile(ir, NULL, &p));
  char buf[256];
  int32_t op = -1;
  for (int32_t i = 0; i < 8 && op < 0; i++)
    if (pto_program_op_text(p, i, buf, sizeof buf) == 0) op = i;
  assert_true(op >= 0); /* the call's position is known */
  assert_int_equal(pto_program_op_text(p, op, NULL, 64), -1);
  assert_int_equal(pto_program_kernel_op_text(p, "k", 0, NULL, 64), -1);
  pto_program_release(p);
  pto_ir_program_destroy(ir);
}

/* A launch given what a C caller can get wrong: too few arguments, a NULL array, an argument
 * never made by a pto_arg_* call (zeroed, or a kind no enum value names: it was reported as
 * "kind unset" too), a tensor of the wrong dtype or shape, a scalar for a tensor. Each fails
 * naming the parameter, and the worker runs the right call afterwards. */
static void test_launch_misuse(void **state) {
  (void)state;
  pto_ir_program *ir = NULL;
  pto_program *p = NULL;
  pto_worker *w = NULL;
  assert_pto_ok(pto_ir_parse_string(k_add, strlen(k_add), "add", &ir));
  assert_pto_ok(pto_compile(ir, NULL, &p));
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.ncores = 1;
  assert_pto_ok(pto_worker_open(&cfg, &w));
  static float a[32 * 128], c[32 * 128];
  for (int i = 0; i < 32 * 128; i++)
    a[i] = (float)i;
  int64_t shape[2] = {32, 128}, bad[2] = {32, 64};
  pto_host_tensor ah, ch, wrong;
  pto_host_tensor_init(&ah, a, PTO_DTYPE_F32, 2, shape);
  pto_host_tensor_init(&ch, c, PTO_DTYPE_F32, 2, shape);
  pto_arg args[2] = {pto_arg_host_readonly(&ah), pto_arg_host(&ch)};
  assert_status_contains(pto_worker_run(w, p, args, 1), "expected 2 arguments (a, c), got 1");
  assert_status_contains(pto_worker_run(w, p, NULL, 2), "args is NULL");
  pto_arg bad_args[2] = {{.kind = PTO_ARG_NONE}, pto_arg_host(&ch)};
  assert_status_contains(pto_worker_run(w, p, bad_args, 2),
                         "parameter 'a': expected a tensor (in f32 [32,128]), got no argument "
                         "(kind unset)");
  bad_args[0].kind = (pto_arg_type)77;
  assert_status_contains(pto_worker_run(w, p, bad_args, 2),
                         "got an argument of no known kind (not made by a pto_arg_* call)");
  bad_args[0] = pto_arg_f32(1.0f);
  assert_status_contains(pto_worker_run(w, p, bad_args, 2), "parameter 'a': expected a tensor");
  pto_host_tensor_init(&wrong, a, PTO_DTYPE_I32, 2, shape);
  bad_args[0] = pto_arg_host(&wrong);
  assert_status_contains(pto_worker_run(w, p, bad_args, 2),
                         "parameter 'a': expected dtype f32, got i32");
  pto_host_tensor_init(&wrong, a, PTO_DTYPE_F32, 2, bad);
  bad_args[0] = pto_arg_host(&wrong);
  assert_status_contains(pto_worker_run(w, p, bad_args, 2),
                         "parameter 'a': expected shape [32,128], got [32,64]");
  assert_true(tu_all_zero(c, sizeof c)); /* nothing ran */
  assert_pto_ok(pto_worker_run(w, p, args, 2));
  assert_true(c[4095] == 4095.0f);
  pto_worker_close(w);
  pto_program_release(p);
  pto_ir_program_destroy(ir);
}

/* A NULL worker, handle, completion or device tensor was reported as a stale token ("not an
 * open worker (closed long ago, or never opened)", FAILED_PRECONDITION); docs/c-api.md makes a
 * NULL object the caller's INVALID_ARGUMENT naming it. A closed worker stays FAILED_PRECONDITION.
 */
static void expect_code(pto_status s, pto_status_code code, const char *needle) {
  assert_non_null(s);
  assert_int_equal(pto_status_code_of(s), code);
  if (!strstr(pto_status_message(s), needle)) {
    print_error("'%s' lacks '%s'\n", pto_status_message(s), needle);
    fail();
  }
  pto_status_free(s);
}

static void test_null_runtime_tokens(void **state) {
  (void)state;
  int64_t shape[1] = {4};
  float host[4] = {0};
  pto_device_tensor *t = NULL;
  expect_code(pto_worker_alloc_tensor(NULL, 1, shape, PTO_DTYPE_F32, NULL, &t),
              PTO_STATUS_INVALID_ARGUMENT, "pto_worker_alloc_tensor: the worker is NULL");
  expect_code(pto_worker_copy_to_tensor(NULL, NULL, 0, host, 1), PTO_STATUS_INVALID_ARGUMENT,
              "pto_worker_copy_to_tensor: the worker is NULL");
  expect_code(pto_handle_call(NULL, NULL, 0), PTO_STATUS_INVALID_ARGUMENT,
              "pto_handle_call: the handle is NULL");
  pto_completion *c = NULL;
  expect_code(pto_handle_submit(NULL, NULL, 0, &c), PTO_STATUS_INVALID_ARGUMENT,
              "pto_handle_submit: the handle is NULL");
  expect_code(pto_completion_wait(NULL), PTO_STATUS_INVALID_ARGUMENT,
              "pto_completion_wait: the completion is NULL");
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.ncores = 1;
  pto_worker *w = NULL;
  assert_pto_ok(pto_worker_open(&cfg, &w));
  expect_code(pto_worker_free_tensor(w, NULL), PTO_STATUS_INVALID_ARGUMENT,
              "pto_worker_free_tensor: the device tensor is NULL");
  expect_code(pto_worker_copy_to_tensor(w, NULL, 0, host, 1), PTO_STATUS_INVALID_ARGUMENT,
              "the device tensor is NULL");
  pto_worker_close(w);
  expect_code(pto_worker_alloc_tensor(w, 1, shape, PTO_DTYPE_F32, NULL, &t),
              PTO_STATUS_FAILED_PRECONDITION, "pto_worker_alloc_tensor: the worker is closed");
}

/* L2 (pto_worker_*) and L3 (pto_dist_*) answer a release twice and a use after release alike
 * (pto/runtime.h, pto/dist.h): closing a worker twice is a no-op; freeing a tensor twice is a
 * no-op (L3 refused the second free); a freed tensor used is INVALID_ARGUMENT "FN: the [device]
 * tensor was freed" (L3 said "not a live tensor of this distributed worker: ..."); a NULL one
 * is INVALID_ARGUMENT "FN: the [device] tensor is NULL"; another worker's tensor is
 * INVALID_ARGUMENT "... belongs to another [distributed] worker"; anything on a closed worker
 * is FAILED_PRECONDITION "FN: the [distributed] worker is closed"; a NULL worker is
 * INVALID_ARGUMENT "FN: the [distributed] worker is NULL". */
static void test_release_twice_and_use_after_release_agree(void **state) {
  (void)state;
  int64_t shape[1] = {4};
  float host[4] = {0};
  pto_run_config cfg;
  pto_run_config_init(&cfg);
  cfg.ncores = 1;
  pto_worker *w = NULL, *w2 = NULL;
  assert_pto_ok(pto_worker_open(&cfg, &w));
  assert_pto_ok(pto_worker_open(&cfg, &w2));
  pto_device_tensor *t = NULL, *t2 = NULL, *other = NULL;
  assert_pto_ok(pto_worker_alloc_tensor(w, 1, shape, PTO_DTYPE_F32, NULL, &t));
  assert_pto_ok(pto_worker_alloc_tensor(w, 1, shape, PTO_DTYPE_F32, NULL, &t2));
  assert_pto_ok(pto_worker_alloc_tensor(w2, 1, shape, PTO_DTYPE_F32, NULL, &other));
  assert_pto_ok(pto_worker_free_tensor(w, t));
  assert_pto_ok(pto_worker_free_tensor(w, t));
  expect_code(pto_worker_copy_to_tensor(w, t, 0, host, 4), PTO_STATUS_INVALID_ARGUMENT,
              "pto_worker_copy_to_tensor: the device tensor was freed");
  expect_code(pto_worker_free_tensor(w, NULL), PTO_STATUS_INVALID_ARGUMENT,
              "pto_worker_free_tensor: the device tensor is NULL");
  expect_code(pto_worker_free_tensor(w, other), PTO_STATUS_INVALID_ARGUMENT,
              "pto_worker_free_tensor: the device tensor belongs to another worker");
  pto_worker_close(w);
  pto_worker_close(w);
  pto_worker_close(w2);
  expect_code(pto_worker_free_tensor(w, t2), PTO_STATUS_FAILED_PRECONDITION,
              "pto_worker_free_tensor: the worker is closed");
  expect_code(pto_worker_copy_to_tensor(w, t2, 0, host, 4), PTO_STATUS_FAILED_PRECONDITION,
              "pto_worker_copy_to_tensor: the worker is closed");
  expect_code(pto_worker_free_tensor(NULL, t2), PTO_STATUS_INVALID_ARGUMENT,
              "pto_worker_free_tensor: the worker is NULL");

  pto_dist_config dc;
  pto_dist_config_init(&dc);
  dc.ndevices = 1;
  dc.ncores_per_chip = 1;
  dc.chips = "threads";
  pto_dist_worker *d = NULL, *d2 = NULL;
  assert_pto_ok(pto_dist_worker_open(&dc, &d));
  assert_pto_ok(pto_dist_worker_open(&dc, &d2));
  pto_dist_tensor *dt = NULL, *dt2 = NULL, *dother = NULL;
  assert_pto_ok(pto_dist_alloc_tensor(d, 1, shape, PTO_DTYPE_F32, NULL, 0, &dt));
  assert_pto_ok(pto_dist_alloc_tensor(d, 1, shape, PTO_DTYPE_F32, NULL, 0, &dt2));
  assert_pto_ok(pto_dist_alloc_tensor(d2, 1, shape, PTO_DTYPE_F32, NULL, 0, &dother));
  assert_pto_ok(pto_dist_free_tensor(d, dt));
  assert_pto_ok(pto_dist_free_tensor(d, dt));
  expect_code(pto_dist_copy_to(d, dt, host, sizeof host), PTO_STATUS_INVALID_ARGUMENT,
              "pto_dist_copy_to: the tensor was freed");
  expect_code(pto_dist_free_tensor(d, NULL), PTO_STATUS_INVALID_ARGUMENT,
              "pto_dist_free_tensor: the tensor is NULL");
  expect_code(pto_dist_free_tensor(d, dother), PTO_STATUS_INVALID_ARGUMENT,
              "pto_dist_free_tensor: the tensor belongs to another distributed worker");
  pto_dist_worker_close(d);
  pto_dist_worker_close(d);
  pto_dist_worker_close(d2);
  expect_code(pto_dist_free_tensor(d, dt2), PTO_STATUS_FAILED_PRECONDITION,
              "pto_dist_free_tensor: the distributed worker is closed");
  expect_code(pto_dist_copy_to(d, dt2, host, sizeof host), PTO_STATUS_FAILED_PRECONDITION,
              "pto_dist_copy_to: the distributed worker is closed");
  expect_code(pto_dist_free_tensor(NULL, dt2), PTO_STATUS_INVALID_ARGUMENT,
              "pto_dist_free_tensor: the distributed worker is NULL");
}

static const char *const k_host_loop =
    "program hl\n"
    "kernel @k(%a: tensor[16,64] f32, out %c: tensor[16,64] f32) -> (tensor[16,64] f32) {\n"
    "  %t = tile.load(%a, [0, 0], [16, 64])\n"
    "  %c1 = tile.store(%t, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n"
    "orch @o(%a: tensor[16,64] f32, out %c: tensor[16,64] f32) -> (tensor[16,64] f32) {\n"
    "  %c1 = call @k(%a, %c)\n"
    "  return %c1\n"
    "}\n"
    "host @main(%a: tensor[16,64] f32, out %c: tensor[32,64] f32, %reps: index = runtime) {\n"
    "  for %i in range(0, %reps) {\n"
    "    for %d in range(0, 2) {\n"
    "      %r = %d * 16\n"
    "      %cs = tensor.slice(%c, [%r, 0], [16, 64])\n"
    "      call @o(%a, %cs) device=%d\n"
    "    }\n"
    "  }\n"
    "}\n";

static void *kill_after_30ms(void *arg) {
  struct timespec ts = {0, 30 * 1000 * 1000};
  nanosleep(&ts, NULL);
  kill(*(int *)arg, SIGKILL);
  return NULL;
}

/* A chip killed in the middle of a run: the run fails naming it, once (before, the host's error
 * and the chips' were the same text joined by "; then"), and the next run fails cleanly. */
static void test_dist_chip_killed_mid_run(void **state) {
  (void)state;
  pto_ir_program *ir = NULL;
  assert_pto_ok(pto_ir_parse_string(k_host_loop, strlen(k_host_loop), "hl", &ir));
  int32_t devs[2] = {0, 1};
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  opt.devices = devs;
  opt.ndevices = 2;
  pto_program *p = NULL;
  assert_pto_ok(pto_compile(ir, &opt, &p));
  pto_ir_program_destroy(ir);
  pto_dist_config cfg;
  pto_dist_config_init(&cfg);
  cfg.ndevices = 2;
  cfg.ncores_per_chip = 1;
  cfg.chips = "processes";
  pto_dist_worker *w = NULL;
  assert_pto_ok(pto_dist_worker_open(&cfg, &w));
  static float a[16 * 64], c[32 * 64];
  const int64_t ashape[2] = {16, 64}, cshape[2] = {32, 64};
  pto_host_tensor ha, hc;
  pto_host_tensor_init(&ha, a, PTO_DTYPE_F32, 2, ashape);
  pto_host_tensor_init(&hc, c, PTO_DTYPE_F32, 2, cshape);
  pto_arg args[3] = {pto_arg_host_readonly(&ha), pto_arg_host(&hc), pto_arg_index(100000000)};
  int pid = pto_dist_worker_chip_pid(w, 1);
  assert_true(pid > 0);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, kill_after_30ms, &pid), 0);
  pto_status s = pto_dist_worker_run(w, p, args, 3);
  pthread_join(th, NULL);
  char want[128];
  snprintf(want, sizeof want, "chip rank 1 (device 1, pid %d) killed by signal 9", pid);
  const char *m = pto_status_message(s);
  const char *first = strstr(m, want);
  assert_non_null(first);
  assert_null(strstr(first + 1, want));
  pto_status_free(s);
  args[2] = pto_arg_index(1);
  assert_status_contains(pto_dist_worker_run(w, p, args, 3), "the distributed worker is unusable");
  pto_dist_worker_close(w);
  pto_program_release(p);
}

/* A stale work dir that cannot be written: its rebuild said "main.cpp does not compile" with
 * the linker's "cannot open output file" deep in the text; it now says the dir must be
 * writable. The rebuild runs in a child as another user when this test runs as root (for whom
 * no directory is read-only). */
static void test_rebuild_read_only_work_dir(void **state) {
  (void)state;
  char *tmp = tu_mkdtemp("ro");
  assert_non_null(tmp);
  assert_int_equal(chmod(tmp, 0755), 0);
  char dir[512], orch[600], src[700];
  snprintf(dir, sizeof dir, "%s/w", tmp);
  snprintf(orch, sizeof orch, "%s/orchestration", dir);
  snprintf(src, sizeof src, "%s/main.cpp", orch);
  pto_ir_program *ir = NULL;
  assert_pto_ok(pto_ir_parse_string(k_add, strlen(k_add), "add", &ir));
  assert_pto_ok(pto_compile_to_dir(ir, NULL, dir, 1));
  pto_ir_program_destroy(ir);
  FILE *f = fopen(src, "a");
  assert_non_null(f);
  fputs("// edited\n", f);
  fclose(f);
  assert_int_equal(chmod(orch, 0555), 0);
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    int rebuilt = 0;
    pto_status s = pto_program_rebuild_dir(dir, &rebuilt);
    const char *m = pto_status_message(s);
    ssize_t w = write(fds[1], m, strlen(m));
    _exit(w < 0 ? 4 : 0);
  }
  close(fds[1]);
  char msg[2048] = {0};
  size_t got = 0;
  ssize_t r;
  while (got < sizeof msg - 1 && (r = read(fds[0], msg + got, sizeof msg - 1 - got)) > 0)
    got += (size_t)r;
  close(fds[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  assert_non_null(strstr(msg, "main.so.rebuild-"));
  assert_non_null(strstr(msg, "a stale work dir is rebuilt in place, so it must be writable"));
  assert_int_equal(chmod(orch, 0755), 0);
  tu_rmtree(tmp);
  free(tmp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_host_tensor_init_rank_out_of_range),
      cmocka_unit_test(test_worker_out_params),
      cmocka_unit_test(test_builder_null),
      cmocka_unit_test(test_parse_and_compile_null),
      cmocka_unit_test(test_program_accessors_null),
      cmocka_unit_test(test_cache_dir_env),
      cmocka_unit_test(test_dist_config_ranges),
      cmocka_unit_test(test_dist_null_args),
      cmocka_unit_test(test_dist_stacked_strides_overflow),
      cmocka_unit_test(test_more_nulls),
      cmocka_unit_test(test_value_returning_nulls),
      cmocka_unit_test(test_builder_null_arrays),
      cmocka_unit_test(test_op_text_null_buf),
      cmocka_unit_test(test_launch_misuse),
      cmocka_unit_test(test_null_runtime_tokens),
      cmocka_unit_test(test_dist_chip_killed_mid_run),
      cmocka_unit_test(test_release_twice_and_use_after_release_agree),
      cmocka_unit_test(test_rebuild_read_only_work_dir),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
