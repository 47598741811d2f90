/* The cache key: equal for what does not change the generated code (value names, dynamic
 * extents, runtime scalar values, samples that repeat the annotation), different for everything
 * that does (static dims, dtypes, directions, specialized values, ops, platform, options, CPU,
 * toolchain). Keys are computed without compiling, so no compiler or LLVM is needed here. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cache_internal.h"
#include "pto/ir.h"
#include "pto/loader.h"
#include "testutil.h"

/* One program shape with the knobs the tests turn. */
typedef struct variant {
  const char *x, *y, *alpha, *n, *t; /* value names */
  const char *dt;                    /* the tensors' and alpha's dtype */
  int cols;                          /* static extent */
  const char *ydir;                  /* "out" or "inout" */
  const char *op;                    /* "muls" or "adds" */
  const char *nbind;                 /* "" (bind with -D), " = 3" */
  const char *rows;                  /* the orch's row extent: "M" (dynamic) or static */
} variant;

static const variant k_base = {"x", "y", "alpha", "n", "t", "f32", 64, "out", "muls", "", "M"};

static pto_ir_program *parse_variant(const variant *v) {
  char text[4096];
  snprintf(
      text, sizeof text,
      "program key_test\n"
      "dynamic M, R\n"
      "kernel @blk(%%%s: tensor[R,%d] %s, %s %%%s: tensor[R,%d] %s, %%%s: %s) -> (tensor[R,%d] "
      "%s) {\n"
      "  %%%s = tile.load(%%%s, [0, 0], [16, %d], valid=[R, %d])\n"
      "  %%s = tile.%s(%%%s, %%%s)\n"
      "  %%y1 = tile.store(%%s, [0, 0], %%%s)\n"
      "  return %%y1\n"
      "}\n"
      "orch @main(%%%s: tensor[%s,%d] %s, %s %%%s: tensor[%s,%d] %s, %%%s: %s = runtime, "
      "%%%s: i32%s) -> (tensor[%s,%d] %s) {\n"
      "  call @blk(%%%s, %%%s, %%%s)\n"
      "  return %%%s\n"
      "}\n",
      v->x, v->cols, v->dt, v->ydir, v->y, v->cols, v->dt, v->alpha, v->dt, v->cols, v->dt, v->t,
      v->x, v->cols, v->cols, v->op, v->t, v->alpha, v->y, v->x, v->rows, v->cols, v->dt, v->ydir,
      v->y, v->rows, v->cols, v->dt, v->alpha, v->dt, v->n, v->nbind, v->rows, v->cols, v->dt, v->x,
      v->y, v->alpha, v->y);
  pto_ir_program *p = NULL;
  pto_status s = pto_ir_parse_string(text, strlen(text), "some/dir/prog_file_name.ptir", &p);
  if (s) {
    print_error("%s\n--- program:\n%s", pto_status_message(s), text);
    pto_status_free(s);
    fail();
  }
  return p;
}

typedef struct req {
  const char *nval;   /* -D n=... (NULL: none) */
  const char *sample; /* --arg x=... (NULL: none) */
  const char *platform;
  int opt_level;
} req;

static const req k_req = {"3", NULL, "sim", 2};

/* The key of variant v compiled with request r; *out_text (if not NULL) the hashed text. */
static void key_of(const variant *v, const req *r, char out[33], char **out_text) {
  pto_ir_program *p = parse_variant(v);
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  pto_binding scalars[1], samples[1];
  if (r->nval) {
    scalars[0] = (pto_binding){v->n, r->nval};
    opt.scalars = scalars;
    opt.nscalars = 1;
  }
  if (r->sample) {
    samples[0] = (pto_binding){v->x, r->sample};
    opt.samples = samples;
    opt.nsamples = 1;
  }
  opt.platform = r->platform;
  opt.opt_level = r->opt_level;
  assert_pto_ok(pto_cache_key(p, &opt, out, out_text));
  assert_int_equal(strlen(out), 32);
  pto_ir_program_destroy(p);
}

static void assert_same(const variant *a, const req *ra, const variant *b, const req *rb) {
  char ka[33], kb[33];
  char *ta = NULL, *tb = NULL;
  key_of(a, ra, ka, &ta);
  key_of(b, rb, kb, &tb);
  if (strcmp(ka, kb) != 0) print_error("keys differ; texts:\n%s\n---\n%s\n", ta, tb);
  assert_string_equal(ka, kb);
  free(ta);
  free(tb);
}

static void assert_differ(const variant *a, const req *ra, const variant *b, const req *rb) {
  char ka[33], kb[33];
  key_of(a, ra, ka, NULL);
  key_of(b, rb, kb, NULL);
  assert_string_not_equal(ka, kb);
}

static void test_cache_key_equal_for_renamed_values(void **state) {
  (void)state;
  variant renamed = k_base;
  renamed.x = "input_tensor";
  renamed.y = "result_tensor";
  renamed.alpha = "scale_factor";
  renamed.n = "count";
  renamed.t = "loaded_tile";
  assert_same(&k_base, &k_req, &renamed, &k_req);
}

static void test_cache_key_equal_for_dynamic_extents(void **state) {
  (void)state;
  /* A sample of a dynamic dim does not specialize it: any extent, and none, give one key. */
  req r100 = k_req, r7 = k_req;
  r100.sample = "100x64";
  r7.sample = "7x64";
  assert_same(&k_base, &r100, &k_base, &r7);
  assert_same(&k_base, &r100, &k_base, &k_req);
}

static void test_cache_key_equal_for_samples_that_match_the_annotation(void **state) {
  (void)state;
  variant fixed = k_base;
  fixed.rows = "16";
  req with = k_req;
  with.sample = "16x64"; /* says what tensor[16,64] already does */
  assert_same(&fixed, &k_req, &fixed, &with);
  /* A sample that disagrees is an error naming the dim, not another key. */
  pto_ir_program *p = parse_variant(&fixed);
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  pto_binding sc = {"n", "3"}, sa = {"x", "32x64"};
  opt.scalars = &sc;
  opt.nscalars = 1;
  opt.samples = &sa;
  opt.nsamples = 1;
  char key[33];
  assert_status_contains(pto_cache_key(p, &opt, key, NULL),
                         "dim 0 is 32, but 'x' is declared with 16");
  pto_ir_program_destroy(p);
}

static void test_cache_key_excludes_runtime_scalar_values_and_names(void **state) {
  (void)state;
  variant v = k_base;
  v.alpha = "scale_factor";
  v.x = "input_tensor";
  char key[33], *text = NULL;
  key_of(&v, &k_req, key, &text);
  /* alpha is a runtime f32: its dtype only. n is specialized to 3: its value, by position. */
  assert_non_null(strstr(text, "param.2=scalar;f32;runtime\n"));
  assert_non_null(strstr(text, "param.3=scalar;i32;=3\n"));
  assert_non_null(strstr(text, "param.0=tensor;in;f32;[?,64]\n"));
  assert_non_null(strstr(text, "param.1=tensor;out;f32;[?,64]\n"));
  assert_null(strstr(text, "scale_factor"));
  assert_null(strstr(text, "input_tensor"));
  assert_null(strstr(text, "prog_file_name"));
  assert_null(strstr(text, "key_test")); /* the program name is for people too */
  assert_non_null(strstr(text, "format=pto-cache-key/"));
  assert_non_null(strstr(text, "toolchain.pto="));
  assert_non_null(strstr(text, "toolchain.llvm="));
  assert_non_null(strstr(text, "toolchain.cxx="));
  assert_non_null(strstr(text, "toolchain.abi=orch/"));
  char host_abi[32]; /* the host code's ABI (pto/host_abi.h) is in the remote key's lines too */
  snprintf(host_abi, sizeof host_abi, ";host/%d;", PTO_HOST_ABI_VERSION);
  assert_non_null(strstr(text, host_abi));
  assert_non_null(strstr(text, "target.triple="));
  assert_non_null(strstr(text, "platform=sim\n"));
  assert_non_null(strstr(text, "option.opt_level=2\n"));
  free(text);
  /* The key is the hash of that text and nothing else. */
  char again[33], *t2 = NULL;
  key_of(&v, &k_req, again, &t2);
  assert_string_equal(key, again);
  free(t2);
}

static void test_cache_key_differs_for_static_dim_dtype_direction_op(void **state) {
  (void)state;
  variant v = k_base;
  v.cols = 32;
  assert_differ(&k_base, &k_req, &v, &k_req);
  v = k_base;
  v.dt = "f16";
  assert_differ(&k_base, &k_req, &v, &k_req);
  v = k_base;
  v.ydir = "inout";
  assert_differ(&k_base, &k_req, &v, &k_req);
  v = k_base;
  v.op = "adds";
  assert_differ(&k_base, &k_req, &v, &k_req);
}

static void test_cache_key_differs_for_specialized_value_and_binding(void **state) {
  (void)state;
  req r4 = k_req, rt = k_req;
  r4.nval = "4";
  rt.nval = "runtime";
  assert_differ(&k_base, &k_req, &k_base, &r4);
  assert_differ(&k_base, &k_req, &k_base, &rt);
  /* A default and -D of the same value: the bound value is what counts in the signature. */
  variant dflt = k_base;
  dflt.nbind = " = 3";
  req none = k_req;
  none.nval = NULL;
  char a[33], b[33], *ta = NULL, *tb = NULL;
  key_of(&dflt, &none, a, &ta);
  key_of(&k_base, &k_req, b, &tb);
  assert_non_null(strstr(ta, "param.3=scalar;i32;=3\n"));
  free(ta);
  free(tb);
}

static void test_cache_key_differs_for_platform_and_options(void **state) {
  (void)state;
  req other = k_req;
  other.platform = "other";
  assert_differ(&k_base, &k_req, &k_base, &other);
  req o3 = k_req;
  o3.opt_level = 3;
  assert_differ(&k_base, &k_req, &k_base, &o3);
}

/* The toolchain and target lines are memoized in the cache dir (file "toolchain") under a probe
 * of the stat of the files they come from (and the boot id): the memo is used while those files are
 * unchanged, and an edited header or a changed compiler binary recomputes them (a stale memo would
 * make a changed toolchain hit entries built by the old one). */
static void set_or_unset(const char *name, const char *value) {
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}

static char *text_of(const char *field, char *text) {
  char *line = strstr(text, field);
  assert_non_null(line);
  char *end = strchr(line, '\n');
  return strndup(line, end ? (size_t)(end - line) : strlen(line));
}

static void test_cache_key_toolchain_memo_follows_the_files(void **state) {
  (void)state;
  char *saved_cache = getenv("PTO_CACHE_DIR") ? strdup(getenv("PTO_CACHE_DIR")) : NULL;
  char *saved_inc = getenv("PTO_INCLUDE_DIR") ? strdup(getenv("PTO_INCLUDE_DIR")) : NULL;
  char *saved_cxx = getenv("PTO_CXX") ? strdup(getenv("PTO_CXX")) : NULL;
  char *t = tu_mkdtemp("toolchain-memo");
  char cache[512], inc[512], path[600], memo[600], cxx[600];
  snprintf(cache, sizeof cache, "%s/cache", t);
  snprintf(inc, sizeof inc, "%s/include", t);
  snprintf(path, sizeof path, "%s/pto", inc);
  assert_int_equal(mkdir(cache, 0700), 0);
  assert_int_equal(mkdir(inc, 0700), 0);
  assert_int_equal(mkdir(path, 0700), 0);
  static const char *const headers[] = {"pto_orchestration_api.h", "orch_abi.h", "kernel_abi.h",
                                        "host_abi.h", "types.h"};
  for (size_t i = 0; i < sizeof headers / sizeof *headers; i++) {
    char src[600];
    snprintf(src, sizeof src, "%s/include/pto/%s", PTO_SOURCE_DIR, headers[i]);
    char *h = tu_read_file(src, NULL);
    assert_non_null(h);
    snprintf(path, sizeof path, "%s/pto/%s", inc, headers[i]);
    assert_int_equal(tu_write_file(path, h), 0);
    free(h);
  }
  snprintf(cxx, sizeof cxx, "%s/c++", t);
  assert_int_equal(tu_write_file(cxx, "#!/bin/sh\n"), 0);
  assert_int_equal(chmod(cxx, 0755), 0);
  snprintf(memo, sizeof memo, "%s/toolchain", cache);
  setenv("PTO_CACHE_DIR", cache, 1);
  setenv("PTO_INCLUDE_DIR", inc, 1);
  setenv("PTO_CXX", cxx, 1);

  /* First computation: written to the memo. */
  char k1[33], k2[33], k3[33], k4[33], k5[33];
  char *t1 = NULL, *t2 = NULL, *t3 = NULL, *t4 = NULL, *t5 = NULL;
  pto__loader_cache_reset_identity();
  key_of(&k_base, &k_req, k1, &t1);
  char *m = tu_read_file(memo, NULL);
  assert_non_null(m);
  char *headers1 = text_of("toolchain.headers=", t1);
  assert_non_null(strstr(m, headers1));
  char *cpu1 = text_of("target.cpu=", t1);
  assert_non_null(strstr(m, cpu1)); /* the target lines too (under the boot id) */
  free(cpu1);

  /* The memo is what a new process reads while the files are unchanged: a marked value in it
   * shows up in the key text. */
  char *at = strstr(m, "toolchain.headers=");
  memcpy(at + strlen("toolchain.headers="), "0123456789abcdef0123456789abcdef", 32);
  assert_int_equal(tu_write_file(memo, m), 0);
  pto__loader_cache_reset_identity();
  key_of(&k_base, &k_req, k2, &t2);
  assert_non_null(strstr(t2, "toolchain.headers=0123456789abcdef0123456789abcdef"));

  /* An edited header changes the probe: the lines are computed again (not the marked ones) and
   * differ from the first (the header's hash changed). */
  snprintf(path, sizeof path, "%s/pto/orch_abi.h", inc);
  char *h = tu_read_file(path, NULL);
  char *h2 = malloc(strlen(h) + 32);
  sprintf(h2, "%s/* edited */\n", h);
  assert_int_equal(tu_write_file(path, h2), 0);
  pto__loader_cache_reset_identity();
  key_of(&k_base, &k_req, k3, &t3);
  assert_null(strstr(t3, "0123456789abcdef0123456789abcdef"));
  char *headers3 = text_of("toolchain.headers=", t3);
  assert_string_not_equal(headers1, headers3);
  assert_string_not_equal(k1, k3);
  char *m3 = tu_read_file(memo, NULL);
  assert_non_null(strstr(m3, headers3)); /* and written back */

  /* A changed compiler binary (same path, other contents) too. */
  assert_int_equal(tu_write_file(cxx, "#!/bin/sh\n# another compiler\n"), 0);
  pto__loader_cache_reset_identity();
  key_of(&k_base, &k_req, k4, &t4);
  char *cxx3 = text_of("toolchain.cxx=", t3), *cxx4 = text_of("toolchain.cxx=", t4);
  assert_string_not_equal(cxx3, cxx4);
  assert_string_not_equal(k3, k4);

  /* A memo that is not one (garbage) is ignored and rewritten. */
  assert_int_equal(tu_write_file(memo, "garbage\n"), 0);
  pto__loader_cache_reset_identity();
  key_of(&k_base, &k_req, k5, &t5);
  assert_string_equal(k4, k5);
  char *m5 = tu_read_file(memo, NULL);
  assert_non_null(strstr(m5, cxx4));

  /* The host code's ABI table (pto/host_abi.h) edited in place, its version kept: another key,
   * so no host.so built against the old table is reused. */
  snprintf(path, sizeof path, "%s/pto/host_abi.h", inc);
  char *ha = tu_read_file(path, NULL);
  assert_non_null(ha);
  char *ha2 = malloc(strlen(ha) + 64);
  sprintf(ha2, "%s/* a table entry added in place */\n", ha);
  assert_int_equal(tu_write_file(path, ha2), 0);
  char k6[33], *t6 = NULL;
  pto__loader_cache_reset_identity();
  key_of(&k_base, &k_req, k6, &t6);
  char *headers5 = text_of("toolchain.headers=", t5), *headers6 = text_of("toolchain.headers=", t6);
  assert_string_not_equal(headers5, headers6);
  assert_string_not_equal(k5, k6);
  free(ha);
  free(ha2);
  free(headers5);
  free(headers6);
  free(t6);

  set_or_unset("PTO_CACHE_DIR", saved_cache);
  set_or_unset("PTO_INCLUDE_DIR", saved_inc);
  set_or_unset("PTO_CXX", saved_cxx);
  pto__loader_cache_reset_identity();
  tu_rmtree(t);
  free(t);
  free(saved_cache);
  free(saved_inc);
  free(saved_cxx);
  free(m);
  free(m3);
  free(m5);
  free(h);
  free(h2);
  free(headers1);
  free(headers3);
  free(cxx3);
  free(cxx4);
  free(t1);
  free(t2);
  free(t3);
  free(t4);
  free(t5);
}

static void test_cache_key_differs_for_cpu_and_toolchain(void **state) {
  (void)state;
  char base[33], cpu_a[33], cpu_b[33], cxx[33], compiler[33];
  key_of(&k_base, &k_req, base, NULL);

  setenv("PTO_CACHE_TARGET_OVERRIDE", "cpu=test-a;features=+avx2", 1);
  pto__loader_cache_reset_identity();
  key_of(&k_base, &k_req, cpu_a, NULL);
  setenv("PTO_CACHE_TARGET_OVERRIDE", "cpu=test-a;features=+avx2,+avx512f", 1);
  pto__loader_cache_reset_identity();
  key_of(&k_base, &k_req, cpu_b, NULL);
  unsetenv("PTO_CACHE_TARGET_OVERRIDE");

  setenv("PTO_CXX", "clang++", 1);
  pto__loader_cache_reset_identity();
  key_of(&k_base, &k_req, cxx, NULL);
  unsetenv("PTO_CXX");

  /* Another compiler library (a rebuilt one has another Build-ID). */
  setenv("PTO_COMPILER_LIBRARY", PTO_BINARY_DIR "/ir/libpto_ir.so", 1);
  pto__loader_cache_reset_identity();
  key_of(&k_base, &k_req, compiler, NULL);
  unsetenv("PTO_COMPILER_LIBRARY");
  pto__loader_cache_reset_identity();

  assert_string_not_equal(base, cpu_a);
  assert_string_not_equal(cpu_a, cpu_b);
  assert_string_not_equal(base, cxx);
  assert_string_not_equal(base, compiler);
  char again[33];
  key_of(&k_base, &k_req, again, NULL);
  assert_string_equal(base, again); /* the environment restored, the key is back */
}

/* PTO_GENERIC_LOWERING=1 lowers without the host's fast paths (compiler/lower_x86.c): other code
 * for the same program, so another key, and the key text says why. A value that is neither 0
 * nor 1 is refused, naming the variable and what it takes, and the key is back once unset. */
static void test_cache_key_differs_for_generic_lowering(void **state) {
  (void)state;
  char base[33], generic[33], zero[33];
  char *text = NULL;
  key_of(&k_base, &k_req, base, &text);
  assert_null(strstr(text, "target.lowering="));
  free(text);

  setenv("PTO_GENERIC_LOWERING", "1", 1);
  pto__loader_cache_reset_identity();
  key_of(&k_base, &k_req, generic, &text);
  assert_non_null(strstr(text, "\ntarget.lowering=generic\n"));
  free(text);
  setenv("PTO_GENERIC_LOWERING", "0", 1);
  pto__loader_cache_reset_identity();
  key_of(&k_base, &k_req, zero, NULL);

  setenv("PTO_GENERIC_LOWERING", "yes", 1);
  pto__loader_cache_reset_identity();
  pto_ir_program *p = parse_variant(&k_base);
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  pto_binding scalars[1] = {{k_base.n, "runtime"}};
  opt.scalars = scalars;
  opt.nscalars = 1;
  char key[33];
  pto_status s = pto_cache_key(p, &opt, key, NULL);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_INVALID_ARGUMENT);
  assert_string_equal(pto_status_message(s),
                      "PTO_GENERIC_LOWERING is 'yes': expected one of: 0, 1");
  pto_status_free(s);
  pto_ir_program_destroy(p);
  unsetenv("PTO_GENERIC_LOWERING");
  pto__loader_cache_reset_identity();

  assert_string_not_equal(base, generic);
  assert_string_equal(base, zero);
  char again[33];
  key_of(&k_base, &k_req, again, NULL);
  assert_string_equal(base, again);
}

static void test_cache_key_names_the_missing_binding(void **state) {
  (void)state;
  pto_ir_program *p = parse_variant(&k_base);
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  char key[33];
  /* n has no default and no -D: the error names it and both fixes. */
  pto_status s = pto_cache_key(p, &opt, key, NULL);
  assert_status_contains(s, "scalar parameter 'n' has no value: pass -D n=VALUE or -D n=runtime");
  pto_ir_program_destroy(p);
}

/* One reader of /proc/cpuinfo's first processor serves the cache key's target lines and the
 * work-dir loader's CPU check: keys without the blanks before the colon, values without the
 * blanks after it, the first processor only, "flags" (x86) or "Features" (Arm). */
typedef struct cpuinfo_seen {
  char text[512];
} cpuinfo_seen;

static void cpuinfo_line(void *ctx, const char *key, size_t klen, const char *value) {
  cpuinfo_seen *s = ctx;
  size_t n = strlen(s->text);
  snprintf(s->text + n, sizeof s->text - n, "[%.*s]=[%s]", (int)klen, key, value);
}

static void test_cpuinfo_first_processor(void **state) {
  (void)state;
  char *t = tu_mkdtemp("cpuinfo");
  char x86[PATH_MAX], arm[PATH_MAX], none[PATH_MAX], missing[PATH_MAX];
  snprintf(x86, sizeof x86, "%s/x86", t);
  snprintf(arm, sizeof arm, "%s/arm", t);
  snprintf(none, sizeof none, "%s/none", t);
  snprintf(missing, sizeof missing, "%s/missing", t);
  assert_int_equal(tu_write_file(x86, "processor\t: 0\nvendor_id\t: GenuineTest\n"
                                      "model name\t: Test CPU  9\nflags\t\t: fpu  avx2 avx512f\n"
                                      "no colon here\nbugs\t\t:\n\nprocessor\t: 1\n"
                                      "flags\t\t: fpu\n"),
                   0);
  assert_int_equal(tu_write_file(arm, "processor\t: 0\nFeatures\t: fp asimd\n"), 0);
  assert_int_equal(tu_write_file(none, "processor\t: 0\n\nflags\t\t: fpu\n"), 0);

  cpuinfo_seen seen = {{0}};
  assert_int_equal(pto__loader_cpuinfo(x86, cpuinfo_line, &seen), 1);
  assert_string_equal(seen.text,
                      "[processor]=[0][vendor_id]=[GenuineTest][model name]=[Test CPU  9]"
                      "[flags]=[fpu  avx2 avx512f][bugs]=[]");
  assert_int_equal(pto__loader_cpuinfo(missing, cpuinfo_line, &seen), 0);

  char *f = pto__loader_cpu_flags(x86);
  assert_string_equal(f, "fpu  avx2 avx512f");
  free(f);
  f = pto__loader_cpu_flags(arm);
  assert_string_equal(f, "fp asimd");
  free(f);
  assert_null(pto__loader_cpu_flags(none)); /* the second processor's flags are not read */
  assert_null(pto__loader_cpu_flags(missing));
  tu_rmtree(t);
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cache_key_equal_for_renamed_values),
      cmocka_unit_test(test_cache_key_equal_for_dynamic_extents),
      cmocka_unit_test(test_cache_key_equal_for_samples_that_match_the_annotation),
      cmocka_unit_test(test_cache_key_excludes_runtime_scalar_values_and_names),
      cmocka_unit_test(test_cache_key_differs_for_static_dim_dtype_direction_op),
      cmocka_unit_test(test_cache_key_differs_for_specialized_value_and_binding),
      cmocka_unit_test(test_cache_key_differs_for_platform_and_options),
      cmocka_unit_test(test_cache_key_differs_for_cpu_and_toolchain),
      cmocka_unit_test(test_cache_key_differs_for_generic_lowering),
      cmocka_unit_test(test_cache_key_toolchain_memo_follows_the_files),
      cmocka_unit_test(test_cache_key_names_the_missing_binding),
      cmocka_unit_test(test_cpuinfo_first_processor),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
