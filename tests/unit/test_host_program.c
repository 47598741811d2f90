/* Host (L3) programs: the device set in the cache key (host programs only), a compiled host work
 * dir loaded through the loader's host accessors, and its generated pto_host_entry run against a
 * FAKE pto_host_api that records every table call, so the views, arguments, devices and fatal
 * errors the host C computes are checked exactly. Program: tests/golden/host_small.ptir. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/ir.h"
#include "pto/loader.h"
#include "pto/manifest.h"
#include "testutil.h"

#define HOST_SMALL PTO_SOURCE_DIR "/tests/golden/host_small.ptir"

static pto_ir_program *parse(const char *path) {
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_file(path, &p));
  return p;
}

static void key(const pto_ir_program *p, const int32_t *devs, int n, char out[33]) {
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  opt.devices = devs;
  opt.ndevices = n;
  assert_pto_ok(pto_cache_key(p, &opt, out, NULL));
}

static void test_host_key_includes_the_device_set(void **state) {
  (void)state;
  pto_ir_program *p = parse(HOST_SMALL);
  static const int32_t d01[] = {0, 1}, d23[] = {2, 3}, d10[] = {1, 0}, d0[] = {0};
  char k01[33], k23[33], k10[33], k0[33], kdef[33];
  key(p, d01, 2, k01);
  key(p, d23, 2, k23);
  key(p, d10, 2, k10);
  key(p, d0, 1, k0);
  key(p, NULL, 0, kdef);
  assert_string_not_equal(k01, k23);
  assert_string_not_equal(k01, k10); /* rank -> device is part of it: a permutation differs */
  assert_string_not_equal(k01, k0);
  assert_string_equal(k0, kdef); /* the default is one device, id 0 */
  pto_ir_program_destroy(p);
}

static void test_l2_key_leaves_the_device_set_out(void **state) {
  (void)state;
  pto_ir_program *p = parse(PTO_SOURCE_DIR "/examples/add.ptir");
  static const int32_t d01[] = {0, 1}, d23[] = {2, 3};
  char a[33], b[33], c[33];
  key(p, NULL, 0, a);
  key(p, d01, 2, b);
  key(p, d23, 2, c);
  assert_string_equal(a, b);
  assert_string_equal(a, c);
  /* ... and compiling one with a device set is a usage error, cache hit or not. */
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  opt.devices = d01;
  opt.ndevices = 2;
  pto_program *prog = NULL;
  pto_status s = pto_compile(p, &opt, &prog);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_INVALID_ARGUMENT);
  assert_status_contains(s, "--devices applies to programs with a host entry");
  assert_null(prog);
  pto_ir_program_destroy(p);
}

/* ---- the fake host API ------------------------------------------------------------------- */

typedef struct fake_host {
  int64_t world;
  int ncreate, nwindow, ncalls, nfatal;
  int32_t fail_call_rc; /* returned by the first call when nonzero */
  int old_table;        /* run_entry: a table that ends before name_window (an older runtime) */
  int nnamed;           /* name_window's calls, the last one's window and name */
  uint64_t named_buffer;
  char named[64];
  int32_t fatal_code;
  char fatal_msg[256];
  int64_t created_shape[2];
  int32_t created_dtype;
  struct {
    int32_t orch;
    int64_t device;
    int32_t nargs;
    pto_host_call_arg args[8];
  } calls[16];
} fake_host;

static int64_t f_world(void *ctx) { return ((fake_host *)ctx)->world; }

static int32_t f_create(void *ctx, int32_t rank, const int64_t *shape, int32_t dtype,
                        pto_host_ref *out) {
  fake_host *f = ctx;
  memset(out, 0, sizeof *out);
  out->buffer = 100 + (uint64_t)f->ncreate++;
  out->rank = rank;
  out->dtype = dtype;
  int64_t st = 1;
  for (int d = rank - 1; d >= 0; d--) {
    out->shape[d] = shape[d];
    out->stride[d] = st;
    st *= shape[d];
  }
  f->created_shape[0] = shape[0];
  f->created_shape[1] = rank > 1 ? shape[1] : 0;
  f->created_dtype = dtype;
  return 0;
}

static int32_t f_window(void *ctx, int32_t rank, const int64_t *shape, int32_t dtype,
                        pto_host_ref *out) {
  fake_host *f = ctx;
  int32_t rc = f_create(ctx, rank, shape, dtype, out);
  f->ncreate--;
  out->buffer = 900 + (uint64_t)f->nwindow++;
  return rc;
}

static int32_t f_call(void *ctx, int32_t orch, int64_t device, const pto_host_call_arg *args,
                      int32_t nargs) {
  fake_host *f = ctx;
  int i = f->ncalls++;
  if (i < 16) {
    f->calls[i].orch = orch;
    f->calls[i].device = device;
    f->calls[i].nargs = nargs;
    for (int k = 0; k < nargs && k < 8; k++)
      f->calls[i].args[k] = args[k];
  }
  return i == 0 ? f->fail_call_rc : 0;
}

static void f_name(void *ctx, const pto_host_ref *w, const char *name) {
  fake_host *f = ctx;
  f->nnamed++;
  f->named_buffer = w->buffer;
  snprintf(f->named, sizeof f->named, "%s", name);
}

static void f_fatal(void *ctx, int32_t code, const char *msg) {
  fake_host *f = ctx;
  f->nfatal++;
  f->fatal_code = code;
  snprintf(f->fatal_msg, sizeof f->fatal_msg, "%s", msg);
}

static int32_t run_entry(const pto_program *prog, fake_host *f, int64_t M, float alpha) {
  pto_host_api api;
  memset(&api, 0, sizeof api);
  api.version = PTO_HOST_ABI_VERSION;
  api.size = sizeof api;
  api.ctx = f;
  api.world_size = f_world;
  api.create_tensor = f_create;
  api.alloc_window = f_window;
  api.call = f_call;
  api.report_fatal = f_fatal;
  api.name_window = f_name;
  if (f->old_table) api.size = (uint32_t)offsetof(pto_host_api, name_window);
  pto_host_ref t[2];
  memset(t, 0, sizeof t);
  for (int i = 0; i < 2; i++) {
    t[i].buffer = 1 + (uint64_t)i;
    t[i].rank = 2;
    t[i].dtype = PTO_DTYPE_F32;
    t[i].shape[0] = M;
    t[i].shape[1] = 64;
    t[i].stride[0] = 64;
    t[i].stride[1] = 1;
  }
  uint32_t abits;
  memcpy(&abits, &alpha, 4);
  uint64_t scalars[2] = {abits, 16};
  pto_host_args args = {t, scalars, 2, 2};
  return pto_program_host_entry(prog)(&api, &args);
}

typedef struct host_fixture {
  char *dir;
  pto_program *prog;
} host_fixture;

static int setup_dir(void **state) {
  host_fixture *h = calloc(1, sizeof *h);
  h->dir = tu_mkdtemp("host-prog");
  pto_ir_program *p = NULL;
  pto_status s = pto_ir_parse_file(HOST_SMALL, &p);
  static const int32_t devs[] = {3, 1};
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  opt.devices = devs;
  opt.ndevices = 2;
  if (!s) s = pto_compile_to_dir(p, &opt, h->dir, 0);
  if (!s) s = pto_program_load_dir(h->dir, &h->prog);
  pto_ir_program_destroy(p);
  *state = h;
  if (s) {
    print_error("%s\n", pto_status_message(s));
    pto_status_free(s);
    return -1;
  }
  return 0;
}

static int teardown_dir(void **state) {
  host_fixture *h = *state;
  if (!h) return 0;
  pto_program_release(h->prog);
  tu_rmtree(h->dir);
  free(h->dir);
  free(h);
  return 0;
}

static void test_host_dir_accessors(void **state) {
  host_fixture *h = *state;
  const pto_program *p = h->prog;
  assert_true(pto_program_is_host(p));
  assert_int_equal(pto_program_device_count(p), 2);
  assert_int_equal(pto_program_device_id(p, 0), 3);
  assert_int_equal(pto_program_device_id(p, 1), 1);
  assert_int_equal(pto_program_device_id(p, 2), -1);
  assert_int_equal(pto_program_callee_count(p), 1);
  const pto_program *c = pto_program_callee(p, 0);
  assert_non_null(c);
  assert_null(pto_program_callee(p, 1));
  assert_false(pto_program_is_host(c));
  assert_int_equal(pto_program_device_count(c), 0);
  assert_string_equal(pto_program_signature(c)->entry, "part");
  /* dtensor %w is a tensor parameter there; the scalars are runtime (the host passes them). */
  const pto_signature *cs = pto_program_signature(c);
  assert_int_equal(cs->nparams, 5);
  assert_true(cs->params[2].is_tensor);
  assert_int_equal(cs->params[2].dir, PTO_DIR_INOUT);
  assert_int_equal(cs->params[4].bind, PTO_BIND_RUNTIME);
  assert_int_equal(pto_program_kernel_count(c), 1);
  assert_non_null(pto_program_orch_entry(c));
  assert_non_null(pto_program_host_entry(p));
  assert_string_equal(pto_program_signature(p)->entry, "main");
  assert_non_null(pto_program_work_dir(p));
  assert_null(pto_program_host_entry(c));
}

static void test_host_entry_calls_the_table(void **state) {
  host_fixture *h = *state;
  fake_host f;
  memset(&f, 0, sizeof f);
  f.world = 3;
  assert_int_equal(run_entry(h->prog, &f, 40, 2.5f), 0);
  assert_int_equal(f.nfatal, 0);
  assert_int_equal(f.nwindow, 1);
  /* The window is named as the program wrote it (%wwin), for the runtime's messages. */
  assert_int_equal(f.nnamed, 1);
  assert_int_equal(f.named_buffer, 900);
  assert_string_equal(f.named, "wwin");
  assert_int_equal(f.ncreate, 1);
  assert_int_equal(f.created_shape[0], 16); /* %blk specialized to 16 */
  assert_int_equal(f.created_shape[1], 64);
  assert_int_equal(f.created_dtype, PTO_DTYPE_F32);
  /* per = (40 + 3 - 1) / 3 = 14: every r < 14 calls. */
  assert_int_equal(f.ncalls, 3);
  for (int r = 0; r < 3; r++) {
    assert_int_equal(f.calls[r].orch, 0);
    assert_int_equal(f.calls[r].device, r);
    assert_int_equal(f.calls[r].nargs, 5);
    const pto_host_call_arg *a = f.calls[r].args;
    assert_int_equal(a[0].kind, PTO_ORCH_ARG_IN);
    assert_int_equal(a[1].kind, PTO_ORCH_ARG_OUT);
    assert_int_equal(a[2].kind, PTO_ORCH_ARG_INOUT);
    assert_int_equal(a[3].kind, PTO_ORCH_ARG_SCALAR);
    assert_int_equal(a[4].kind, PTO_ORCH_ARG_SCALAR);
    assert_int_equal(a[0].tensor.buffer, 1);
    assert_int_equal(a[1].tensor.buffer, 2);
    assert_int_equal(a[0].tensor.offset, r * 16 * 64);
    assert_int_equal(a[1].tensor.offset, r * 16 * 64);
    assert_int_equal(a[0].tensor.shape[0], r < 2 ? 16 : 8); /* clamped at the edge: 40 - 32 */
    assert_int_equal(a[0].tensor.shape[1], 64);
    assert_int_equal(a[0].tensor.stride[0], 64);
    assert_int_equal(a[0].tensor.window, 0);
    assert_int_equal(a[2].tensor.buffer, 900);
    assert_int_equal(a[2].tensor.window, 1);
    assert_int_equal(a[2].tensor.shape[0], 4);
    float alpha;
    uint32_t bits = (uint32_t)a[3].scalar;
    memcpy(&alpha, &bits, 4);
    assert_true(alpha == 2.5f);
    assert_int_equal(a[4].scalar, (uint64_t)(r % 2));
  }
}

/* A runtime whose table ends before name_window (size says so): the host code runs as before and
 * never calls past the table's end. */
static void test_host_entry_on_an_older_table(void **state) {
  host_fixture *h = *state;
  fake_host f;
  memset(&f, 0, sizeof f);
  f.world = 3;
  f.old_table = 1;
  assert_int_equal(run_entry(h->prog, &f, 40, 2.5f), 0);
  assert_int_equal(f.nfatal, 0);
  assert_int_equal(f.nwindow, 1);
  assert_int_equal(f.ncalls, 3);
  assert_int_equal(f.nnamed, 0);
}

static void test_host_entry_fatal_errors(void **state) {
  host_fixture *h = *state;
  fake_host f;
  /* A slice offset past the extent: M = 20, rank 2 starts at row 32. */
  memset(&f, 0, sizeof f);
  f.world = 3;
  assert_int_equal(run_entry(h->prog, &f, 20, 1.0f), PTO_KERNEL_ERR_DIM_MISMATCH);
  assert_int_equal(f.nfatal, 1);
  assert_int_equal(f.ncalls, 2);
  assert_non_null(strstr(f.fatal_msg, "tensor.slice: offset 32 of dim 0 is outside the extent 20"));
  /* Integer division by zero (world_size 0 divides (M + n - 1) by n). */
  memset(&f, 0, sizeof f);
  f.world = 0;
  assert_int_equal(run_entry(h->prog, &f, 40, 1.0f), PTO_KERNEL_ERR_DIV_ZERO);
  assert_int_equal(f.nfatal, 1);
  assert_non_null(strstr(f.fatal_msg, "division by zero"));
  assert_int_equal(f.ncalls, 0);
  /* A call's nonzero code is returned at once. */
  memset(&f, 0, sizeof f);
  f.world = 3;
  f.fail_call_rc = 9;
  assert_int_equal(run_entry(h->prog, &f, 40, 1.0f), 9);
  assert_int_equal(f.ncalls, 1);
  assert_int_equal(f.nfatal, 0);
}

/* tensor.reshape and tensor.select in a host: view arithmetic on pto_host_ref. */
static const char *k_views =
    "program views\n"
    "dynamic M\n"
    "kernel @k(%a: tensor[4, 64] f32, out %b: tensor[4, 64] f32) -> (tensor[4, 64] f32) {\n"
    "  %t = tile.load(%a, [0, 0], [4, 64])\n"
    "  %b1 = tile.store(%t, [0, 0], %b)\n"
    "  return %b1\n"
    "}\n"
    "orch @o(%a: tensor[4, 64] f32, out %b: tensor[4, 64] f32) -> (tensor[4, 64] f32) {\n"
    "  %b1 = call @k(%a, %b)\n"
    "  return %b1\n"
    "}\n"
    "host @main(%x: tensor[M, 256] f32, out %y: tensor[M, 4, 64] f32) {\n"
    "  %x3 = tensor.reshape(%x, [M, 4, 64])\n"
    "  %n = dist.world_size()\n"
    "  for %r in range(0, %n) {\n"
    "    %xi = tensor.select(%x3, %r)\n"
    "    %yi = tensor.select(%y, %r)\n"
    "    call @o(%xi, %yi) device=%r\n"
    "  }\n"
    "}\n";

static int32_t run_views(const pto_program *prog, fake_host *f, int64_t M, int64_t xstride) {
  pto_host_api api;
  memset(&api, 0, sizeof api);
  api.version = PTO_HOST_ABI_VERSION;
  api.size = sizeof api;
  api.ctx = f;
  api.world_size = f_world;
  api.create_tensor = f_create;
  api.alloc_window = f_window;
  api.call = f_call;
  api.report_fatal = f_fatal;
  pto_host_ref t[2];
  memset(t, 0, sizeof t);
  t[0] = (pto_host_ref){.buffer = 1, .rank = 2, .dtype = PTO_DTYPE_F32};
  t[0].shape[0] = M;
  t[0].shape[1] = 256;
  t[0].stride[0] = xstride;
  t[0].stride[1] = 1;
  t[1] = (pto_host_ref){.buffer = 2, .rank = 3, .dtype = PTO_DTYPE_F32};
  t[1].shape[0] = M;
  t[1].shape[1] = 4;
  t[1].shape[2] = 64;
  t[1].stride[0] = 256;
  t[1].stride[1] = 64;
  t[1].stride[2] = 1;
  pto_host_args args = {t, NULL, 2, 0};
  return pto_program_host_entry(prog)(&api, &args);
}

static void test_host_reshape_and_select(void **state) {
  (void)state;
  char *dir = tu_mkdtemp("host-views");
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_string(k_views, strlen(k_views), "views.ptir", &p));
  static const int32_t devs[] = {0, 1, 2, 3};
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  opt.devices = devs;
  opt.ndevices = 4;
  assert_pto_ok(pto_compile_to_dir(p, &opt, dir, 0));
  pto_program *prog = NULL;
  assert_pto_ok(pto_program_load_dir(dir, &prog));
  fake_host f;
  memset(&f, 0, sizeof f);
  f.world = 2;
  assert_int_equal(run_views(prog, &f, 3, 256), 0);
  assert_int_equal(f.ncalls, 2);
  for (int r = 0; r < 2; r++) {
    const pto_host_call_arg *a = f.calls[r].args;
    for (int k = 0; k < 2; k++) {
      assert_int_equal(a[k].tensor.buffer, (uint64_t)(k + 1));
      assert_int_equal(a[k].tensor.rank, 2);
      assert_int_equal(a[k].tensor.offset, r * 256);
      assert_int_equal(a[k].tensor.shape[0], 4);
      assert_int_equal(a[k].tensor.shape[1], 64);
      assert_int_equal(a[k].tensor.stride[0], 64);
      assert_int_equal(a[k].tensor.stride[1], 1);
    }
  }
  /* select past the leading extent: 4 ranks over M = 3 rows. */
  memset(&f, 0, sizeof f);
  f.world = 4;
  assert_int_equal(run_views(prog, &f, 3, 256), PTO_KERNEL_ERR_DIM_MISMATCH);
  assert_int_equal(f.ncalls, 3);
  assert_non_null(strstr(f.fatal_msg, "tensor.select: index 3 is outside the extent 3"));
  /* reshape of a non-contiguous view. */
  memset(&f, 0, sizeof f);
  f.world = 1;
  assert_int_equal(run_views(prog, &f, 3, 300), PTO_KERNEL_ERR_DIM_MISMATCH);
  assert_int_equal(f.ncalls, 0);
  assert_non_null(strstr(f.fatal_msg, "not contiguous"));
  pto_program_release(prog);
  pto_ir_program_destroy(p);
  tu_rmtree(dir);
  free(dir);
}

/* The host part of a manifest: written, read back, and each bad field named. */
static void test_host_manifest_fields(void **state) {
  host_fixture *h = *state;
  pto_manifest m;
  assert_pto_ok(pto_manifest_read(h->dir, &m));
  assert_true(m.is_host);
  assert_string_equal(m.host_name, "main");
  assert_string_equal(m.host_source, "host/host.c");
  assert_string_equal(m.host.path, "host/host.so");
  assert_int_equal(strlen(m.host.build_id), 40);
  assert_int_equal(m.ndevices, 2);
  assert_int_equal(m.devices[0], 3);
  assert_int_equal(m.devices[1], 1);
  assert_int_equal(m.ncallees, 1);
  assert_string_equal(m.callees[0], "part");
  assert_null(m.orch.path);
  char *text = NULL;
  assert_pto_ok(pto_manifest_to_json(&m, &text));
  static const struct {
    const char *from, *to, *msg;
  } bad[] = {
      {"\"kind\": \"host\"", "\"kind\": \"l3\"", "field 'kind'"},
      {"\"devices\": [\n    3,\n    1\n  ]", "\"devices\": [3, 3]", "device 3 appears twice"},
      {"\"devices\": [\n    3,\n    1\n  ]", "\"devices\": []", "field 'devices'"},
      {"\"devices\": [\n    3,\n    1\n  ]", "\"devices\": [-1]", "field 'devices[0]'"},
      {"\"callees\": [\n    \"part\"\n  ]", "\"callees\": [\"../x\"]", "field 'callees[0]'"},
      {"\"source\": \"host/host.c\"", "\"source\": \"host/other.c\"",
       "no content hash for 'host/other.c'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *at = strstr(text, bad[i].from);
    if (!at) print_error("case %zu: '%s' not in\n%s\n", i, bad[i].from, text);
    assert_non_null(at);
    size_t n = strlen(text) + strlen(bad[i].to) + 1;
    char *t = malloc(n);
    snprintf(t, n, "%.*s%s%s", (int)(at - text), text, bad[i].to, at + strlen(bad[i].from));
    pto_manifest x;
    pto_status s = pto_manifest_parse(t, strlen(t), "m.json", &x);
    assert_non_null(s);
    assert_status_contains(s, bad[i].msg);
    free(t);
  }
  free(text);
  pto_manifest_free(&m);
}

int main(void) {
  const struct CMUnitTest keys[] = {
      cmocka_unit_test(test_host_key_includes_the_device_set),
      cmocka_unit_test(test_l2_key_leaves_the_device_set_out),
      cmocka_unit_test(test_host_reshape_and_select),
  };
  const struct CMUnitTest dir[] = {
      cmocka_unit_test(test_host_dir_accessors),
      cmocka_unit_test(test_host_entry_calls_the_table),
      cmocka_unit_test(test_host_entry_on_an_older_table),
      cmocka_unit_test(test_host_entry_fatal_errors),
      cmocka_unit_test(test_host_manifest_fields),
  };
  int rc = cmocka_run_group_tests(keys, NULL, NULL);
  return rc | cmocka_run_group_tests(dir, setup_dir, teardown_dir);
}
