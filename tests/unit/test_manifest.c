/* The work dir manifest: round trip of every field, the compiler's description of a real build
 * written and read back unchanged, atomic write, one clear error per malformed or foreign
 * manifest (naming the file and the field, line:col for JSON syntax; every field of a written
 * manifest removed and mistyped in turn), refusal of paths that leave the work dir, and the
 * XXH3-128 file hash. */
#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader_internal.h"
#include "pto/compiler.h"
#include "pto/manifest.h"
#include "pto/orch_abi.h"
#include "testutil.h"

#define ORCH_ID "ac6a376891802e4aa47c89a076b5e4b48a461a47"
#define HASH_A "00112233445566778899aabbccddeeff"
#define HASH_B "ffeeddccbbaa99887766554433221100"

static char *xs(const char *s) { return strdup(s); }

/* A manifest with every kind of field: tensors with static and dynamic dims, runtime and
 * specialized scalars of several dtypes, two kernels listed out of id order. */
static void make_manifest(pto_manifest *m) {
  memset(m, 0, sizeof *m);
  m->program = xs("softmax");
  m->platform = xs("sim");
  m->opt_level = 2;
  m->toolchain = xs("pto 0.1.0; llvm 19.1.7; GNU-12.2.0; orch-abi 1; kernel-abi 1");
  strcpy(m->cache_key, "0123456789abcdef0123456789abcdef");
  pto_signature *sig = &m->sig;
  sig->entry = xs("main");
  sig->nrets = 1;
  sig->nsyms = 2;
  sig->syms = calloc(2, sizeof *sig->syms);
  sig->syms[0] = xs("N");
  sig->syms[1] = xs("M");
  sig->nparams = 8;
  sig->params = calloc(8, sizeof *sig->params);
  pto_sig_param *p = sig->params;
  p[0] = (pto_sig_param){.name = xs("x"),
                         .is_tensor = 1,
                         .dir = PTO_DIR_IN,
                         .dtype = PTO_DTYPE_F32,
                         .rank = 2,
                         .dims = {{64, -1}, {-1, 0}}};
  p[1] = (pto_sig_param){.name = xs("y"),
                         .is_tensor = 1,
                         .dir = PTO_DIR_OUT,
                         .dtype = PTO_DTYPE_BF16,
                         .rank = 3,
                         .dims = {{-1, 1}, {-1, 0}, {8, -1}}};
  p[2] = (pto_sig_param){.name = xs("acc"),
                         .is_tensor = 1,
                         .dir = PTO_DIR_INOUT,
                         .dtype = PTO_DTYPE_I64,
                         .rank = 1,
                         .dims = {{16, -1}}};
  p[3] = (pto_sig_param){.name = xs("n"),
                         .dtype = PTO_DTYPE_I32,
                         .bind = PTO_BIND_RUNTIME,
                         .value = {.dtype = PTO_DTYPE_I32}};
  p[4] = (pto_sig_param){.name = xs("k"),
                         .dtype = PTO_DTYPE_I8,
                         .bind = PTO_BIND_LITERAL,
                         .value = {.dtype = PTO_DTYPE_I8, .i = -5}};
  p[5] = (pto_sig_param){.name = xs("big"),
                         .dtype = PTO_DTYPE_U64,
                         .bind = PTO_BIND_LITERAL,
                         .value = {.dtype = PTO_DTYPE_U64, .u = UINT64_MAX - 1}};
  p[6] = (pto_sig_param){.name = xs("scale"),
                         .dtype = PTO_DTYPE_F32,
                         .bind = PTO_BIND_LITERAL,
                         .value = {.dtype = PTO_DTYPE_F32, .f = 0.1f}};
  p[7] = (pto_sig_param){.name = xs("flag"),
                         .dtype = PTO_DTYPE_BOOL,
                         .bind = PTO_BIND_LITERAL,
                         .value = {.dtype = PTO_DTYPE_BOOL, .i = 1}};
  m->nkernels = 2;
  m->kernels = calloc(2, sizeof *m->kernels);
  m->kernels[0] = (pto_manifest_kernel){1,
                                        xs("mm"),
                                        xs("pto_kernel_mm"),
                                        PTO_CORE_AIC,
                                        131072,
                                        xs("kernels/mm.ll"),
                                        xs("kernels/mm.o")};
  m->kernels[1] =
      (pto_manifest_kernel){0, xs("exp"), xs("pto_kernel_exp"), PTO_CORE_AIV, 4096, NULL, NULL};
  m->orch_name = xs("main");
  m->orch_source = xs("orchestration/main.cpp");
  m->orch.path = xs("orchestration/main.so");
  strcpy(m->orch.build_id, ORCH_ID);
  m->orch.hid = 0x4a2e809168376aacull;
  m->kernels_so.path = xs("kernels/kernels.so");
  m->kernels_so.build_id[0] = 0; /* no note: the hid is an FNV value */
  m->kernels_so.hid = 0x123;
  const char *paths[] = {"orchestration/main.cpp", "orchestration/main.so", "kernels/mm.ll",
                         "kernels/mm.o", "kernels/kernels.so"};
  m->nfiles = 5;
  m->files = calloc(5, sizeof *m->files);
  for (int i = 0; i < 5; i++) {
    m->files[i].path = xs(paths[i]);
    strcpy(m->files[i].hash, i % 2 ? HASH_A : HASH_B);
  }
}

typedef struct fixture {
  char *dir;
} fixture;

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  fx->dir = tu_mkdtemp("manifest");
  *state = fx;
  return fx->dir ? 0 : -1;
}

static int teardown(void **state) {
  fixture *fx = *state;
  tu_rmtree(fx->dir);
  free(fx->dir);
  free(fx);
  return 0;
}

static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  closedir(d);
  return n;
}

static void test_manifest_round_trips_every_field(void **state) {
  fixture *fx = *state;
  pto_manifest m, r;
  make_manifest(&m);
  assert_pto_ok(pto_manifest_write(fx->dir, &m));
  assert_int_equal(count_entries(fx->dir), 1); /* no temp file left behind */
  assert_pto_ok(pto_manifest_read(fx->dir, &r));

  assert_string_equal(r.program, "softmax");
  assert_string_equal(r.platform, "sim");
  assert_int_equal(r.opt_level, 2);
  assert_string_equal(r.toolchain, m.toolchain);
  assert_string_equal(r.cache_key, m.cache_key);
  assert_string_equal(r.sig.entry, "main");
  assert_int_equal(r.sig.nrets, 1);
  assert_int_equal(r.sig.nparams, 8);
  assert_int_equal(r.sig.nsyms, 2);
  assert_string_equal(r.sig.syms[0], "N");
  assert_string_equal(r.sig.syms[1], "M");
  for (int i = 0; i < 8; i++) {
    const pto_sig_param *a = &m.sig.params[i], *b = &r.sig.params[i];
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->is_tensor, b->is_tensor);
    assert_int_equal(a->dtype, b->dtype);
    assert_int_equal(a->dir, b->dir);
    if (a->is_tensor) {
      assert_int_equal(a->rank, b->rank);
      for (int d = 0; d < a->rank; d++) {
        assert_int_equal(a->dims[d].value, b->dims[d].value);
        if (a->dims[d].sym >= 0)
          assert_string_equal(m.sig.syms[a->dims[d].sym], r.sig.syms[b->dims[d].sym]);
        else
          assert_int_equal(b->dims[d].sym, -1);
      }
    } else {
      assert_int_equal(a->bind, b->bind);
      assert_int_equal(b->value.dtype, a->dtype);
      if (a->bind == PTO_BIND_LITERAL) assert_true(a->value.u == b->value.u); /* same bits */
    }
  }
  assert_int_equal(r.nkernels, 2);
  assert_string_equal(r.kernels[0].name, "exp"); /* placed at their ids */
  assert_int_equal(r.kernels[0].core_type, PTO_CORE_AIV);
  assert_null(r.kernels[0].source);
  assert_string_equal(r.kernels[1].symbol, "pto_kernel_mm");
  assert_int_equal(r.kernels[1].core_type, PTO_CORE_AIC);
  assert_true(r.kernels[1].scratch_bytes == 131072);
  assert_string_equal(r.kernels[1].source, "kernels/mm.ll");
  assert_string_equal(r.kernels[1].object, "kernels/mm.o");
  assert_string_equal(r.orch_name, "main");
  assert_string_equal(r.orch_source, "orchestration/main.cpp");
  assert_string_equal(r.orch.path, "orchestration/main.so");
  assert_string_equal(r.orch.build_id, ORCH_ID);
  assert_true(r.orch.hid == 0x4a2e809168376aacull);
  assert_string_equal(r.kernels_so.build_id, "");
  assert_true(r.kernels_so.hid == 0x123);
  assert_int_equal(r.nfiles, 5);
  assert_string_equal(pto_manifest_find_file(&r, "kernels/mm.o")->hash, HASH_A);
  assert_null(pto_manifest_find_file(&r, "kernels/nope.o"));

  /* Writing again replaces the file atomically and reads back the new content. */
  free(m.program);
  m.program = xs("softmax2");
  assert_pto_ok(pto_manifest_write(fx->dir, &m));
  assert_int_equal(count_entries(fx->dir), 1);
  pto_manifest_free(&r);
  assert_pto_ok(pto_manifest_read(fx->dir, &r));
  assert_string_equal(r.program, "softmax2");
  assert_null(r.sig.kernel_entry); /* optional: an orch entry writes none */
  pto_manifest_free(&r);

  /* A kernel run as the entry: signature.kernel_entry names it beside the orch made for it. */
  m.sig.kernel_entry = xs("mm");
  assert_pto_ok(pto_manifest_write(fx->dir, &m));
  assert_pto_ok(pto_manifest_read(fx->dir, &r));
  assert_string_equal(r.sig.entry, "main");
  assert_string_equal(r.sig.kernel_entry, "mm");
  assert_string_equal(pto_signature_entry_name(&r.sig), "mm");
  pto_manifest_free(&r);
  pto_manifest_free(&m);
  pto_manifest_free(&m); /* idempotent on an emptied manifest */
}

static void test_manifest_json_shape(void **state) {
  pto_manifest m;
  make_manifest(&m);
  char *text = NULL;
  assert_pto_ok(pto_manifest_to_json(&m, &text));
  const char *expect[] = {
      "\"schema\": \"pto.manifest/1\"",
      "\"dims\": [\n          64,\n          \"N\"\n        ]",
      "\"binding\": \"runtime\"",
      "\"binding\": -5",
      "\"binding\": \"18446744073709551614\"",
      "\"binding\": true",
      "\"core_type\": \"aic\"",
      "\"hid\": \"4a2e809168376aac\"",
      "\"build_id\": \"" ORCH_ID "\"",
      "\"kernels/mm.o\": \"" HASH_A "\"",
  };
  for (size_t i = 0; i < sizeof expect / sizeof *expect; i++) {
    if (!strstr(text, expect[i])) {
      print_error("missing %s in:\n%s\n", expect[i], text);
      fail();
    }
  }
  free(text);
  pto_manifest_free(&m);
}

static void test_scalar_specials_round_trip(void **state) {
  pto_manifest m, r;
  make_manifest(&m);
  m.sig.params[6].value.f = NAN;
  m.sig.params[6].dtype = PTO_DTYPE_F64;
  char *text = NULL;
  assert_pto_ok(pto_manifest_to_json(&m, &text));
  assert_non_null(strstr(text, "\"binding\": \"nan\""));
  assert_pto_ok(pto_manifest_parse(text, strlen(text), "t.json", &r));
  assert_true(isnan(r.sig.params[6].value.f));
  pto_manifest_free(&r);
  free(text);
  /* A negative NaN keeps its sign (it was written "nan": an entry compiled with -D x=-nan then
   * failed its fingerprint check at every load). */
  m.sig.params[6].value.f = copysign(NAN, -1.0);
  assert_pto_ok(pto_manifest_to_json(&m, &text));
  assert_non_null(strstr(text, "\"binding\": \"-nan\""));
  assert_pto_ok(pto_manifest_parse(text, strlen(text), "t.json", &r));
  assert_true(isnan(r.sig.params[6].value.f) && signbit(r.sig.params[6].value.f));
  pto_manifest_free(&r);
  free(text);
  m.sig.params[6].value.f = -INFINITY;
  assert_pto_ok(pto_manifest_to_json(&m, &text));
  assert_pto_ok(pto_manifest_parse(text, strlen(text), "t.json", &r));
  assert_true(isinf(r.sig.params[6].value.f) && r.sig.params[6].value.f < 0);
  pto_manifest_free(&r);
  free(text);
  pto_manifest_free(&m);
}

/* The valid JSON of make_manifest with the first occurrence of from replaced by to. */
static char *edited_json(const char *from, const char *to) {
  pto_manifest m;
  make_manifest(&m);
  char *text = NULL;
  assert_pto_ok(pto_manifest_to_json(&m, &text));
  pto_manifest_free(&m);
  char *at = strstr(text, from);
  if (!at) {
    print_error("'%s' not in the manifest text\n", from);
    free(text);
    fail();
  }
  size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
  char *out = malloc(n);
  snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  free(text);
  return out;
}

/* Parses text expecting a failure containing needle; checks the manifest was left empty. */
static void expect_parse_error(const char *text, const char *needle) {
  pto_manifest r;
  memset(&r, 0x5a, sizeof r);
  pto_status s = pto_manifest_parse(text, strlen(text), "DIR/manifest.json", &r);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_INVALID_ARGUMENT);
  assert_status_contains(s, needle);
  assert_null(r.program);
  assert_int_equal(r.nfiles, 0);
}

static void expect_edit_error(const char *from, const char *to, const char *needle) {
  char *t = edited_json(from, to);
  expect_parse_error(t, needle);
  free(t);
}

static void test_json_syntax_error_has_line_and_col(void **state) {
  expect_parse_error("{\n  \"schema\": \"pto.manifest/1\",\n  \"program\": ,\n}\n",
                     "DIR/manifest.json:3:14: invalid JSON");
  expect_parse_error("", "DIR/manifest.json:1:0: invalid JSON");
  /* A repeated key would let two readers disagree: refused. */
  expect_parse_error("{\"schema\": \"pto.manifest/1\", \"schema\": \"x\"}", "duplicate object key");
  /* Through the file API, the file is named by its path. */
  fixture *fx = *state;
  char path[600];
  snprintf(path, sizeof path, "%s/manifest.json", fx->dir);
  assert_int_equal(tu_write_file(path, "{\"schema\": \"pto.manifest/1\",\n\"program\": tru}"), 0);
  pto_manifest r;
  pto_status s = pto_manifest_read(fx->dir, &r);
  char want[700];
  snprintf(want, sizeof want, "%s:2:", path);
  assert_non_null(strstr(pto_status_message(s), want));
  assert_status_contains(s, "invalid JSON");
}

static void test_missing_or_foreign_manifest(void **state) {
  fixture *fx = *state;
  pto_manifest r;
  pto_status s = pto_manifest_read(fx->dir, &r);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_NOT_FOUND);
  assert_status_contains(s, "not a work dir");
  expect_parse_error("[1, 2]", "DIR/manifest.json: expected a JSON object, got an array");
  expect_parse_error("{\"name\": \"package.json\"}",
                     "DIR/manifest.json: field 'schema': missing: this is not a pto manifest");
  expect_edit_error("pto.manifest/1", "pto.manifest/2",
                    "field 'schema': expected \"pto.manifest/1\", got \"pto.manifest/2\"");
}

static void test_bad_fields_are_named(void **state) {
  expect_edit_error("\"cache_key\"", "\"cache_kee\"",
                    "DIR/manifest.json: field 'cache_key': missing");
  expect_edit_error("\"program\": \"softmax\"", "\"program\": 3",
                    "field 'program': expected a string, got 3");
  expect_edit_error("\"program\": \"softmax\"", "\"program\": \"\"", "field 'program': is empty");
  expect_edit_error("\"opt_level\": 2", "\"opt_level\": 7",
                    "field 'opt_level': 7 is out of range [0, 3]");
  expect_edit_error("0123456789abcdef0123456789abcdef", "0123456789ABCDEF0123456789abcdef",
                    "field 'cache_key': expected 32 lowercase hex digits");
  expect_edit_error("\"dtype\": \"f32\"", "\"dtype\": \"f33\"",
                    "field 'signature.params[0].dtype': unknown dtype \"f33\"");
  expect_edit_error("\"kind\": \"tensor\"", "\"kind\": \"tile\"",
                    "field 'signature.params[0].kind'");
  expect_edit_error("\"direction\": \"out\"", "\"direction\": \"sideways\"",
                    "field 'signature.params[1].direction'");
  expect_edit_error("          64,\n", "          -64,\n", "field 'signature.params[0].dims[0]'");
  expect_edit_error("\"binding\": -5", "\"binding\": -500",
                    "field 'signature.params[4].binding': -500 does not fit i8");
  expect_edit_error("\"binding\": -5", "\"binding\": 1.5",
                    "field 'signature.params[4].binding': expected an integer for i8");
  expect_edit_error("\"binding\": true", "\"binding\": 1",
                    "field 'signature.params[7].binding': expected true or false");
  expect_edit_error("\"nrets\": 1", "\"kernel_entry\": \"\", \"nrets\": 1",
                    "field 'signature.kernel_entry': is empty");
  expect_edit_error("\"nrets\": 1", "\"kernel_entry\": 7, \"nrets\": 1",
                    "field 'signature.kernel_entry': expected a string, got 7");
  expect_edit_error("\"name\": \"y\"", "\"name\": \"x\"",
                    "field 'signature.params[1].name': duplicate parameter 'x'");
  expect_edit_error("\"core_type\": \"aic\"", "\"core_type\": \"gpu\"",
                    "field 'kernels[0].core_type': expected \"aiv\" or \"aic\", got \"gpu\"");
  expect_edit_error("\"id\": 1", "\"id\": 0", "field 'kernels[1].id': kernel id 0 appears twice");
  expect_edit_error("\"id\": 1", "\"id\": 2", "field 'kernels[0].id': 2 is out of range [0, 1]");
  expect_edit_error("\"hid\": \"4a2e809168376aac\"", "\"hid\": \"4a2e809168376aad\"",
                    "field 'orchestration.hid': \"4a2e809168376aad\" does not match build_id");
  expect_edit_error("\"hid\": \"4a2e809168376aac\"", "\"hid\": \"04a2e809168376aac\"",
                    "field 'orchestration.hid'");
  expect_edit_error("\"build_id\": \"" ORCH_ID "\"", "\"build_id\": \"xyz\"",
                    "field 'orchestration.build_id'");
  expect_edit_error("\"kernels/mm.o\": \"" HASH_A "\"", "\"kernels/mm.o\": \"abc\"",
                    "field 'files.kernels/mm.o': expected 32 lowercase hex digits");
  /* Every source and binary the manifest names has a content hash. */
  expect_edit_error(
      "\"kernels/kernels.so\": \"", "\"kernels/other.so\": \"",
      "field 'files': no content hash for 'kernels/kernels.so' (named by 'kernels_so.binary')");
}

static void test_paths_outside_the_work_dir_are_refused(void **state) {
  expect_edit_error("\"binary\": \"orchestration/main.so\"", "\"binary\": \"../x.so\"",
                    "field 'orchestration.binary': path '../x.so' has a '..' component");
  expect_edit_error("\"binary\": \"kernels/kernels.so\"", "\"binary\": \"/lib/x.so\"",
                    "field 'kernels_so.binary': path '/lib/x.so' is absolute");
  expect_edit_error("\"source\": \"kernels/mm.ll\"", "\"source\": \"kernels/../../mm.ll\"",
                    "field 'kernels[0].source': path 'kernels/../../mm.ll' has a '..' component");
  expect_edit_error(
      "\"kernels/mm.o\":", "\"a/./b\":", "field 'files': path 'a/./b' has a '.' component");
  expect_edit_error("\"kernels/mm.o\":", "\"a//b\":", "has an empty component");
  expect_edit_error("\"kernels/mm.o\":", "\"a\\nb\":", "contains a control character");

  assert_pto_ok(pto_manifest_check_path("kernels/k.ll", "t"));
  assert_pto_ok(pto_manifest_check_path("..hidden/x", "t")); /* a name, not a parent dir */
  assert_status_contains(pto_manifest_check_path("a/", "t"), "ends with '/'");
  assert_status_contains(pto_manifest_check_path("", "t"), "is empty");
  assert_status_contains(pto_manifest_check_path(NULL, "t"), "is empty");
}

static void test_resolve_refuses_symlinks_leaving_the_dir(void **state) {
  fixture *fx = *state;
  char *outside = tu_mkdtemp("outside");
  char p[700], q[700];
  snprintf(p, sizeof p, "%s/secret.so", outside);
  assert_int_equal(tu_write_file(p, "secret"), 0);
  snprintf(q, sizeof q, "%s/kernels", fx->dir);
  assert_int_equal(mkdir(q, 0755), 0);
  snprintf(q, sizeof q, "%s/kernels/kernels.so", fx->dir);
  assert_int_equal(symlink(p, q), 0);
  char *real = NULL;
  pto_status s = pto_manifest_resolve(fx->dir, "kernels/kernels.so", &real);
  assert_null(real);
  assert_status_contains(s, "a symlink leads outside the work dir");
  /* a directory symlink too */
  snprintf(q, sizeof q, "%s/orchestration", fx->dir);
  assert_int_equal(symlink(outside, q), 0);
  assert_status_contains(pto_manifest_resolve(fx->dir, "orchestration/secret.so", &real),
                         "outside the work dir");
  /* a symlink that stays inside is fine */
  snprintf(p, sizeof p, "%s/kernels/real.so", fx->dir);
  assert_int_equal(tu_write_file(p, "ok"), 0);
  snprintf(q, sizeof q, "%s/kernels/alias.so", fx->dir);
  assert_int_equal(symlink("real.so", q), 0);
  assert_pto_ok(pto_manifest_resolve(fx->dir, "kernels/alias.so", &real));
  assert_non_null(strstr(real, "/kernels/real.so"));
  free(real);
  /* No symlink below the dir (found by lstat, not realpath): the path is the resolved dir's,
   * as realpath gives it, also when the dir is named through a symlink. */
  char dir_link[700], want[PATH_MAX + 32], rdir[PATH_MAX];
  snprintf(dir_link, sizeof dir_link, "%s/dir-link", outside);
  assert_int_equal(symlink(fx->dir, dir_link), 0);
  assert_non_null(realpath(fx->dir, rdir));
  snprintf(want, sizeof want, "%s/kernels/real.so", rdir);
  assert_pto_ok(pto_manifest_resolve(dir_link, "kernels/real.so", &real));
  assert_string_equal(real, want);
  free(real);
  assert_status_contains(pto_manifest_resolve(fx->dir, "../x", &real), "has a '..' component");
  s = pto_manifest_resolve(fx->dir, "kernels/none.so", &real);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_NOT_FOUND);
  pto_status_free(s);
  tu_rmtree(outside);
  free(outside);
}

static void test_write_refuses_an_invalid_manifest(void **state) {
  fixture *fx = *state;
  pto_manifest m;
  make_manifest(&m);
  free(m.platform);
  m.platform = NULL;
  pto_status s = pto_manifest_write(fx->dir, &m);
  assert_status_contains(s, "field 'platform': expected a string, got null");
  assert_int_equal(count_entries(fx->dir), 0); /* nothing written */
  m.platform = xs("sim");
  free(m.orch.path);
  m.orch.path = xs("../escape.so");
  assert_status_contains(pto_manifest_write(fx->dir, &m), "has a '..' component");
  free(m.orch.path);
  m.orch.path = xs("orchestration/main.so");
  m.kernels[1].core_type = 7;
  assert_status_contains(pto_manifest_write(fx->dir, &m), "field 'kernels[1].core_type'");
  m.kernels[1].core_type = PTO_CORE_AIV;
  free(m.files[1].path);
  m.files[1].path = xs("kernels/mm.o"); /* listed twice */
  assert_status_contains(pto_manifest_write(fx->dir, &m), "listed twice");
  assert_int_equal(count_entries(fx->dir), 0);
  pto_manifest_free(&m);
  /* An unwritable dir: an IO error naming it. */
  make_manifest(&m);
  s = pto_manifest_write("/nonexistent-pto-dir", &m);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_IO);
  assert_status_contains(s, "/nonexistent-pto-dir");
  pto_manifest_free(&m);
}

static void test_file_hash_is_xxh3_128(void **state) {
  fixture *fx = *state;
  char path[600];
  snprintf(path, sizeof path, "%s/empty", fx->dir);
  assert_int_equal(tu_write_file(path, ""), 0);
  char hex[33];
  assert_pto_ok(pto_file_hash(path, hex));
  assert_string_equal(hex, "99aa06d3014798d86001c324468d497f"); /* XXH3-128 of no bytes */
  /* A file larger than the read chunk hashes like the same bytes in memory. */
  size_t n = 200000;
  char *big = malloc(n + 1);
  for (size_t i = 0; i < n; i++)
    big[i] = (char)('a' + (i * 7919) % 26);
  big[n] = 0;
  snprintf(path, sizeof path, "%s/big", fx->dir);
  assert_int_equal(tu_write_file(path, big), 0);
  char mem[33];
  pto_hash_xxh128_hex(big, n, mem);
  assert_pto_ok(pto_file_hash(path, hex));
  assert_string_equal(hex, mem);
  assert_int_equal(strlen(hex), 32);
  free(big);
  /* Agrees with xxhsum when the machine has it. */
  char *out = NULL;
  if (tu_run(&out, "xxhsum -H2 '%s'", path) == 0 && out) assert_non_null(strstr(out, hex));
  free(out);
  snprintf(path, sizeof path, "%s/none", fx->dir);
  pto_status s = pto_file_hash(path, hex);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_NOT_FOUND);
  assert_status_contains(s, "/none");
}

static void test_add_file_and_binary_set(void **state) {
  fixture *fx = *state;
  char path[600];
  snprintf(path, sizeof path, "%s/a.txt", fx->dir);
  assert_int_equal(tu_write_file(path, "one"), 0);
  pto_manifest m;
  memset(&m, 0, sizeof m);
  assert_pto_ok(pto_manifest_add_file(&m, fx->dir, "a.txt"));
  char first[33];
  strcpy(first, m.files[0].hash);
  assert_int_equal(tu_write_file(path, "two"), 0);
  assert_pto_ok(pto_manifest_add_file(&m, fx->dir, "a.txt")); /* replaces */
  assert_int_equal(m.nfiles, 1);
  assert_string_not_equal(first, m.files[0].hash);
  assert_status_contains(pto_manifest_add_file(&m, fx->dir, "../a.txt"), "'..'");
  /* list_file names a file without hashing it, once; add_file then hashes that entry. */
  assert_pto_ok(pto_manifest_list_file(&m, "b.txt"));
  assert_pto_ok(pto_manifest_list_file(&m, "b.txt"));
  assert_pto_ok(pto_manifest_list_file(&m, "a.txt")); /* already there: its hash stays */
  assert_int_equal(m.nfiles, 2);
  assert_string_equal(pto_manifest_find_file(&m, "b.txt")->hash, "");
  assert_string_not_equal(pto_manifest_find_file(&m, "a.txt")->hash, "");
  assert_status_contains(pto_manifest_list_file(&m, NULL), "no path");
  snprintf(path, sizeof path, "%s/b.txt", fx->dir);
  assert_int_equal(tu_write_file(path, "b"), 0);
  assert_pto_ok(pto_manifest_add_file(&m, fx->dir, "b.txt"));
  assert_int_equal(m.nfiles, 2);
  assert_int_equal(strlen(pto_manifest_find_file(&m, "b.txt")->hash), 32);
  /* binary_set reads the Build-ID of an object the test links. */
  char src[600], so[600];
  snprintf(src, sizeof src, "%s/l.c", fx->dir);
  snprintf(so, sizeof so, "%s/l.so", fx->dir);
  assert_int_equal(tu_write_file(src, "int f(void) { return 1; }\n"), 0);
  assert_int_equal(tu_run(NULL, "cc -shared -fPIC -Wl,--build-id=sha1 -o '%s' '%s'", so, src), 0);
  pto_manifest_binary b;
  memset(&b, 0, sizeof b);
  assert_pto_ok(pto_manifest_binary_set(&b, fx->dir, "l.so"));
  assert_string_equal(b.path, "l.so");
  assert_int_equal(strlen(b.build_id), 40);
  uint64_t hid;
  assert_pto_ok(pto_elf_hid(so, &hid));
  assert_true(hid == b.hid);
  assert_status_contains(pto_manifest_binary_set(&b, fx->dir, "a.txt"), "not an ELF file");
  assert_string_equal(b.path, "l.so"); /* unchanged on failure */
  free(b.path);
  pto_manifest_free(&m);
}

/* ---- the compiler's description, written and read back --------------------------------- */

static void assert_binary_equal(const pto_manifest_binary *a, const pto_manifest_binary *b) {
  if (!a->path || !b->path) {
    assert_null(a->path);
    assert_null(b->path);
  } else {
    assert_string_equal(a->path, b->path);
  }
  assert_string_equal(a->build_id, b->build_id);
  assert_true(a->hid == b->hid);
}

static void assert_str_or_null_equal(const char *a, const char *b) {
  if (!a || !b) {
    assert_null(a);
    assert_null(b);
  } else {
    assert_string_equal(a, b);
  }
}

static void assert_signature_equal(const pto_signature *a, const pto_signature *b) {
  assert_string_equal(a->entry, b->entry);
  assert_int_equal(a->nrets, b->nrets);
  assert_int_equal(a->nsyms, b->nsyms);
  for (int i = 0; i < a->nsyms; i++)
    assert_string_equal(a->syms[i], b->syms[i]);
  assert_int_equal(a->nparams, b->nparams);
  for (int i = 0; i < a->nparams; i++) {
    const pto_sig_param *x = &a->params[i], *y = &b->params[i];
    assert_string_equal(x->name, y->name);
    assert_int_equal(x->is_tensor, y->is_tensor);
    assert_int_equal(x->dtype, y->dtype);
    assert_int_equal(x->dir, y->dir);
    assert_int_equal(x->rank, y->rank);
    for (int d = 0; d < x->rank; d++) {
      assert_true(x->dims[d].value == y->dims[d].value);
      assert_int_equal(x->dims[d].sym, y->dims[d].sym);
    }
    assert_int_equal(x->bind, y->bind);
    assert_int_equal(x->value.dtype, y->value.dtype);
    assert_true(x->value.u == y->value.u); /* same bits */
  }
}

/* Every field of pto_manifest (pto/workdir.h) but callee_dirs, which a read leaves NULL. */
static void assert_manifest_equal(const pto_manifest *a, const pto_manifest *b) {
  assert_string_equal(a->program, b->program);
  assert_signature_equal(&a->sig, &b->sig);
  assert_int_equal(a->nkernels, b->nkernels);
  for (int i = 0; i < a->nkernels; i++) {
    const pto_manifest_kernel *x = &a->kernels[i], *y = &b->kernels[i];
    assert_int_equal(x->id, i);
    assert_int_equal(y->id, i);
    assert_string_equal(x->name, y->name);
    assert_string_equal(x->symbol, y->symbol);
    assert_int_equal(x->core_type, y->core_type);
    assert_true(x->scratch_bytes == y->scratch_bytes);
    assert_str_or_null_equal(x->source, y->source);
    assert_str_or_null_equal(x->object, y->object);
  }
  assert_str_or_null_equal(a->orch_name, b->orch_name);
  assert_str_or_null_equal(a->orch_source, b->orch_source);
  assert_binary_equal(&a->orch, &b->orch);
  assert_str_or_null_equal(a->orch_entry_symbol, b->orch_entry_symbol);
  assert_binary_equal(&a->kernels_so, &b->kernels_so);
  assert_int_equal(a->nfiles, b->nfiles);
  for (int i = 0; i < a->nfiles; i++) {
    assert_string_equal(a->files[i].path, b->files[i].path);
    assert_string_equal(a->files[i].hash, b->files[i].hash);
  }
  assert_string_equal(a->toolchain, b->toolchain);
  assert_string_equal(a->cache_key, b->cache_key);
  assert_int_equal(a->opt_level, b->opt_level);
  assert_string_equal(a->platform, b->platform);
  assert_int_equal(a->is_host, b->is_host);
  assert_str_or_null_equal(a->host_name, b->host_name);
  assert_str_or_null_equal(a->host_source, b->host_source);
  assert_binary_equal(&a->host, &b->host);
  assert_int_equal(a->ndevices, b->ndevices);
  for (int i = 0; i < a->ndevices; i++)
    assert_int_equal(a->devices[i], b->devices[i]);
  assert_int_equal(a->ncallees, b->ncallees);
  for (int i = 0; i < a->ncallees; i++)
    assert_string_equal(a->callees[i], b->callees[i]);
}

#define KEY "0123456789abcdef0123456789abcdef"

/* What the compiler describes: every file it wrote listed, none hashed yet; no identities. */
static void assert_compiler_part(const pto_manifest *m) {
  assert_true(m->nfiles > 0);
  for (int i = 0; i < m->nfiles; i++)
    assert_string_equal(m->files[i].hash, "");
  assert_non_null(pto_manifest_find_file(m, "program.ptir"));
  assert_null(m->toolchain);
  assert_string_equal(m->cache_key, "");
  assert_string_equal(m->platform, "sim");
  if (m->is_host) {
    assert_non_null(pto_manifest_find_file(m, m->host.path));
    assert_int_equal(m->host.hid, 0);
  } else {
    assert_non_null(pto_manifest_find_file(m, m->orch.path));
    assert_non_null(pto_manifest_find_file(m, m->kernels_so.path));
    assert_non_null(pto_manifest_find_file(m, "kernels/pto_abi.o"));
    assert_int_equal(m->orch.hid, 0);
  }
}

/* Compiles prog (a file of the source tree) into a fresh dir, completes and writes the
 * description as the loader does, and reads every manifest back: each equal, field by field. */
static void compile_round_trip(const char *prog, const pto_binding *binds, int nbinds,
                               const int32_t *devs, int ndevs) {
  char path[600];
  snprintf(path, sizeof path, "%s/%s", PTO_SOURCE_DIR, prog);
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_file(path, &p));
  char *dir = tu_mkdtemp("manifest_compile");
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  opt.opt_level = 1;
  opt.scalars = binds;
  opt.nscalars = nbinds;
  opt.devices = devs;
  opt.ndevices = ndevs;
  pto_manifest m, r;
  assert_pto_ok(pto_compiler_build_dir(p, &opt, dir, &m));
  assert_compiler_part(&m);
  for (int i = 0; i < m.ncallees; i++)
    assert_compiler_part(&m.callee_dirs[i]);
  assert_pto_ok(pto__loader_write_manifest(dir, &m, "toolchain of the test", KEY));
  assert_pto_ok(pto_manifest_read(dir, &r));
  assert_manifest_equal(&m, &r);
  assert_null(r.callee_dirs);
  assert_int_equal(m.opt_level, 1);
  for (int i = 0; i < m.nfiles; i++)
    assert_int_equal(strlen(m.files[i].hash), 32); /* the loader hashed every listed file */
  for (int i = 0; i < m.ncallees; i++) {
    pto_manifest c;
    snprintf(path, sizeof path, "%s/callees/%s", dir, m.callees[i]);
    assert_pto_ok(pto_manifest_read(path, &c));
    assert_string_equal(c.orch_name, m.callees[i]);
    assert_manifest_equal(&m.callee_dirs[i], &c);
    assert_string_equal(c.cache_key, KEY);
    pto_manifest_free(&c);
  }
  pto_manifest_free(&r);
  pto_manifest_free(&m);
  assert_null(m.callee_dirs);
  pto_ir_program_destroy(p);
  tu_rmtree(dir);
  free(dir);
}

static void test_compiled_description_round_trips(void **state) {
  (void)state;
  /* Dynamic dims, four kernels. */
  compile_round_trip("tests/programs/four_kernels.ptir", NULL, 0, NULL, 0);
  /* Specialized and runtime scalars of several dtypes. */
  const pto_binding binds[] = {{"n", "2"}, {"beta", "runtime"}};
  compile_round_trip("tests/programs/scalars.ptir", binds, 2, NULL, 0);
  /* A host program: its device set and the callee work dirs, each with its own manifest. */
  const int32_t devs[] = {3, 1};
  compile_round_trip("tests/golden/host_small.ptir", NULL, 0, devs, 2);
}

/* ---- every field removed, mistyped, and an extra one added ----------------------------- */

typedef struct sweep {
  json_t *root;
  int checked;
} sweep;

/* Parses the current root, expecting an error naming field in DIR/manifest.json (or success when
 * field is NULL). */
static void sweep_check(sweep *sw, const char *field, const char *what) {
  char *text = json_dumps(sw->root, JSON_COMPACT);
  assert_non_null(text);
  pto_manifest r;
  pto_status s = pto_manifest_parse(text, strlen(text), "DIR/manifest.json", &r);
  char want[700];
  snprintf(want, sizeof want, "DIR/manifest.json: field '%s'", field ? field : "");
  if (field ? !s || !strstr(pto_status_message(s), want) : s != NULL) {
    print_error("%s: expected %s, got: %s\n", what, field ? want : "success",
                s ? pto_status_message(s) : "success");
    fail();
  }
  if (field) {
    assert_int_equal(pto_status_code_of(s), PTO_STATUS_INVALID_ARGUMENT);
    assert_null(r.program); /* nothing half-read */
  }
  pto_status_free(s);
  pto_manifest_free(&r);
  free(text);
  sw->checked++;
}

/* The field whose absence the reader reports when path is removed: path itself, but for a
 * files entry (the field naming that file has no hash) and "kind" (without it, a host manifest
 * reads as an L2 one, which lacks "orchestration"); NULL for an optional field. */
static const char *field_missing(const char *path, char *buf, size_t n) {
  if (!strcmp(path, "kind")) return "orchestration";
  if (!strncmp(path, "files.", 6)) return "files";
  const char *dot = strrchr(path, '.');
  const char *leaf = dot ? dot + 1 : path;
  if (!strcmp(path, "orchestration.entry_symbol") ||
      (!strncmp(path, "kernels[", 8) && (!strcmp(leaf, "source") || !strcmp(leaf, "object"))))
    return NULL;
  snprintf(buf, n, "%s", path);
  return buf;
}

/* A value of another JSON type than v. */
static json_t *mistyped(const json_t *v) {
  return json_is_object(v) || json_is_array(v) ? json_integer(7) : json_object();
}

static void sweep_value(sweep *sw, json_t *v, const char *path);

static void sweep_object(sweep *sw, json_t *obj, const char *prefix) {
  size_t n = json_object_size(obj);
  const char **keys = calloc(n + 1, sizeof *keys);
  size_t k = 0;
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) keys[k++] = key;
  for (size_t i = 0; i < n; i++) {
    char path[600], buf[600];
    snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", keys[i]);
    json_t *child = json_incref(json_object_get(obj, keys[i]));
    sweep_value(sw, child, path);
    char *saved = strdup(keys[i]); /* keys[i] dies with its entry */
    assert_int_equal(json_object_del(obj, saved), 0);
    sweep_check(sw, field_missing(path, buf, sizeof buf), "removed");
    assert_int_equal(json_object_set_new(obj, saved, mistyped(child)), 0);
    sweep_check(sw, path, "mistyped");
    assert_int_equal(json_object_set_new(obj, saved, child), 0);
    keys[i] = NULL;
    free(saved);
  }
  /* A key the reader does not know is ignored: a later pto.manifest/1 writer may add fields.
   * ("files" is keyed by path: a key there is one more file.) */
  if (!strcmp(prefix, "files")) {
    free(keys);
    return;
  }
  assert_int_equal(json_object_set_new(obj, "zz_later_field", json_integer(1)), 0);
  sweep_check(sw, NULL, "extra key");
  assert_int_equal(json_object_del(obj, "zz_later_field"), 0);
  free(keys);
}

static void sweep_value(sweep *sw, json_t *v, const char *path) {
  if (json_is_object(v)) {
    sweep_object(sw, v, path);
  } else if (json_is_array(v)) {
    for (size_t i = 0; i < json_array_size(v); i++) {
      char sub[600];
      snprintf(sub, sizeof sub, "%s[%zu]", path, i);
      json_t *e = json_incref(json_array_get(v, i));
      sweep_value(sw, e, sub);
      assert_int_equal(json_array_set_new(v, i, mistyped(e)), 0);
      sweep_check(sw, sub, "mistyped");
      assert_int_equal(json_array_set_new(v, i, e), 0);
    }
  }
}

static void sweep_manifest(const pto_manifest *m) {
  char *text = NULL;
  assert_pto_ok(pto_manifest_to_json(m, &text));
  json_error_t err;
  sweep sw = {json_loads(text, 0, &err), 0};
  assert_non_null(sw.root);
  sweep_check(&sw, NULL, "as written");
  sweep_object(&sw, sw.root, "");
  assert_true(sw.checked > 60);
  json_decref(sw.root);
  free(text);
}

static void test_every_field_removed_or_mistyped_is_named(void **state) {
  (void)state;
  pto_manifest m;
  make_manifest(&m);
  m.orch_entry_symbol = xs("my_entry");
  sweep_manifest(&m);
  /* The host form: the same manifest as a host program's. */
  pto_manifest_free(&m);
  make_manifest(&m);
  for (int i = 0; i < m.nkernels; i++) {
    free(m.kernels[i].name);
    free(m.kernels[i].symbol);
    free(m.kernels[i].source);
    free(m.kernels[i].object);
  }
  m.nkernels = 0;
  free(m.orch_name);
  free(m.orch_source);
  free(m.orch.path);
  free(m.kernels_so.path);
  m.orch_name = m.orch_source = m.orch.path = m.kernels_so.path = NULL;
  m.is_host = 1;
  m.host_name = xs("main");
  m.host_source = xs("orchestration/main.cpp"); /* listed in files */
  m.host.path = xs("orchestration/main.so");
  strcpy(m.host.build_id, ORCH_ID);
  m.host.hid = 0x4a2e809168376aacull;
  m.ndevices = 2;
  m.devices = calloc(2, sizeof *m.devices);
  m.devices[0] = 3;
  m.devices[1] = 1;
  m.ncallees = 1;
  m.callees = calloc(1, sizeof *m.callees);
  m.callees[0] = xs("part");
  for (int i = 2; i < m.nfiles; i++) /* the kernels' files, which nothing names now */
    free(m.files[i].path);
  m.nfiles = 2;
  sweep_manifest(&m);
  pto_manifest_free(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_manifest_round_trips_every_field, setup, teardown),
      cmocka_unit_test(test_manifest_json_shape),
      cmocka_unit_test(test_scalar_specials_round_trip),
      cmocka_unit_test_setup_teardown(test_json_syntax_error_has_line_and_col, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_or_foreign_manifest, setup, teardown),
      cmocka_unit_test(test_bad_fields_are_named),
      cmocka_unit_test(test_paths_outside_the_work_dir_are_refused),
      cmocka_unit_test_setup_teardown(test_resolve_refuses_symlinks_leaving_the_dir, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_write_refuses_an_invalid_manifest, setup, teardown),
      cmocka_unit_test_setup_teardown(test_file_hash_is_xxh3_128, setup, teardown),
      cmocka_unit_test_setup_teardown(test_add_file_and_binary_set, setup, teardown),
      cmocka_unit_test(test_compiled_description_round_trips),
      cmocka_unit_test(test_every_field_removed_or_mistyped_is_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
