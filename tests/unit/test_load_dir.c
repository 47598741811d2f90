/* pto_program_load_dir on work dirs the test builds by hand: a C++ orchestration object and a C
 * kernels object linked with Build-IDs, a manifest written by pto_manifest_write. A good dir
 * loads and its function pointers run; a corrupt, truncated or swapped binary is DATA_LOSS and
 * never mapped; an edited source is stale; a manifest pointing outside the dir is refused. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loader_internal.h"
#include "pto/loader.h"
#include "pto/manifest.h"
#include "testutil.h"

#ifndef PTO_SOURCE_DIR
#define PTO_SOURCE_DIR "."
#endif

/* The orchestration: submits kernel 1 on an AIC core with one scalar derived from its args. */
static const char k_orch_cpp[] =
    "#include \"pto/orch_abi.h\"\n"
    "struct ChipTaskArgs {\n"
    "  const pto_orch_tensor *tensors; const uint64_t *scalars; int32_t ntensors, nscalars;\n"
    "};\n"
    "static thread_local const pto_orch_api *g_api;\n"
    "extern \"C\" {\n"
    "__attribute__((visibility(\"default\"))) uint32_t pto_orch_abi_version(void) { return "
    "ORCH_ABI; }\n"
    "__attribute__((visibility(\"default\"))) void pto_orch_bind(const pto_orch_api *api) { g_api "
    "= api; }\n"
    "__attribute__((visibility(\"default\"))) void aicpu_orchestration_entry(const ChipTaskArgs "
    "&a) {\n"
    "  pto_orch_task_arg t[1] = {};\n"
    "  t[0].kind = PTO_ORCH_ARG_SCALAR;\n"
    "  t[0].scalar = a.scalars[0] * 2 + (uint64_t)a.ntensors;\n"
    "  g_api->submit(g_api->ctx, 1, PTO_CORE_AIC, t, 1);\n"
    "}\n"
    "__attribute__((visibility(\"default\"))) pto_orch_config aicpu_orchestration_config(const "
    "ChipTaskArgs &a) {\n"
    "  return pto_orch_config{a.ntensors + 7};\n"
    "}\n"
    "}\n";

static const char k_kernels_c[] =
    "#include \"pto/kernel_abi.h\"\n"
    "const int32_t pto_kernel_abi_version = KERNEL_ABI;\n"
    "int32_t pto_kernel_add(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *c) {\n"
    "  return (int32_t)s[0] + 1 + VARIANT;\n"
    "}\n"
    "int32_t pto_kernel_mul(const pto_kernel_tensor *t, const uint64_t *s, pto_core_ctx *c) {\n"
    "  return (int32_t)s[0] * 3 + c->core_id;\n"
    "}\n";

typedef struct fixture {
  char *dir;
} fixture;

static char *path_in(const char *dir, const char *rel) {
  char *p = NULL;
  if (asprintf(&p, "%s/%s", dir, rel) < 0) return NULL;
  return p;
}

static int ends_with_str(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void write_in(const char *dir, const char *rel, const char *text) {
  char *p = path_in(dir, rel);
  assert_int_equal(tu_write_file(p, text), 0);
  free(p);
}

static void compile_kernels(const char *dir, int kernel_abi, int variant) {
  char *out = NULL;
  int rc = tu_run(&out,
                  "cd '%s' && cc -shared -fPIC -Wl,--build-id=sha1 -I'%s/include' -DKERNEL_ABI=%d "
                  "-DVARIANT=%d -o kernels/kernels.so.tmp kernels/kernels.c && "
                  "mv kernels/kernels.so.tmp kernels/kernels.so",
                  dir, PTO_SOURCE_DIR, kernel_abi, variant);
  if (rc) print_error("%s\n", out);
  free(out);
  assert_int_equal(rc, 0);
}

static void compile_orch(const char *dir, int orch_abi) {
  char *out = NULL;
  int rc = tu_run(&out,
                  "cd '%s' && c++ -std=c++17 -shared -fPIC -Wl,--build-id=sha1 -I'%s/include' "
                  "-DORCH_ABI=%d -o orchestration/main.so.tmp orchestration/main.cpp && "
                  "mv orchestration/main.so.tmp orchestration/main.so",
                  dir, PTO_SOURCE_DIR, orch_abi);
  if (rc) print_error("%s\n", out);
  free(out);
  assert_int_equal(rc, 0);
}

/* Records the files' current hashes and Build-IDs in a fresh manifest and writes it. */
static void write_manifest(const char *dir) {
  pto_manifest m;
  memset(&m, 0, sizeof m);
  m.program = strdup("demo");
  m.platform = strdup("sim");
  m.opt_level = 2;
  m.toolchain = strdup("test toolchain");
  strcpy(m.cache_key, "00000000000000000000000000000abc");
  pto_signature *sig = &m.sig;
  sig->entry = strdup("main");
  sig->nrets = 1;
  sig->nsyms = 1;
  sig->syms = calloc(1, sizeof *sig->syms);
  sig->syms[0] = strdup("N");
  sig->nparams = 3;
  sig->params = calloc(3, sizeof *sig->params);
  sig->params[0] = (pto_sig_param){.name = strdup("x"),
                                   .is_tensor = 1,
                                   .dir = PTO_DIR_IN,
                                   .dtype = PTO_DTYPE_F32,
                                   .rank = 2,
                                   .dims = {{64, -1}, {-1, 0}}};
  sig->params[1] = (pto_sig_param){.name = strdup("y"),
                                   .is_tensor = 1,
                                   .dir = PTO_DIR_OUT,
                                   .dtype = PTO_DTYPE_F32,
                                   .rank = 2,
                                   .dims = {{64, -1}, {-1, 0}}};
  sig->params[2] = (pto_sig_param){.name = strdup("n"),
                                   .dtype = PTO_DTYPE_I64,
                                   .bind = PTO_BIND_RUNTIME,
                                   .value = {.dtype = PTO_DTYPE_I64}};
  m.nkernels = 2;
  m.kernels = calloc(2, sizeof *m.kernels);
  m.kernels[0] = (pto_manifest_kernel){
      0,   strdup("add"), strdup("pto_kernel_add"), PTO_CORE_AIV, 4096, strdup("kernels/add.ll"),
      NULL};
  m.kernels[1] = (pto_manifest_kernel){
      1,   strdup("mul"), strdup("pto_kernel_mul"), PTO_CORE_AIC, 65536, strdup("kernels/mul.ll"),
      NULL};
  m.orch_name = strdup("main");
  m.orch_source = strdup("orchestration/main.cpp");
  const char *files[] = {"orchestration/main.cpp", "orchestration/main.so", "kernels/add.ll",
                         "kernels/mul.ll",         "kernels/kernels.so",    "kernels/kernels.c"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++)
    assert_pto_ok(pto_manifest_add_file(&m, dir, files[i]));
  assert_pto_ok(pto_manifest_binary_set(&m.orch, dir, "orchestration/main.so"));
  assert_pto_ok(pto_manifest_binary_set(&m.kernels_so, dir, "kernels/kernels.so"));
  assert_pto_ok(pto_manifest_write(dir, &m));
  pto_manifest_free(&m);
}

static void build_work_dir(const char *dir, int orch_abi, int kernel_abi) {
  char *p = path_in(dir, "orchestration");
  mkdir(p, 0755);
  free(p);
  p = path_in(dir, "kernels");
  mkdir(p, 0755);
  free(p);
  write_in(dir, "orchestration/main.cpp", k_orch_cpp);
  write_in(dir, "kernels/kernels.c", k_kernels_c);
  write_in(dir, "kernels/add.ll", "; kernel add\ndefine i32 @pto_kernel_add() { ret i32 0 }\n");
  write_in(dir, "kernels/mul.ll", "; kernel mul\n");
  compile_orch(dir, orch_abi);
  compile_kernels(dir, kernel_abi, 0);
  write_manifest(dir);
}

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  fx->dir = tu_mkdtemp("loaddir");
  if (!fx->dir) return -1;
  build_work_dir(fx->dir, PTO_ORCH_ABI_VERSION, PTO_KERNEL_ABI_VERSION);
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fixture *fx = *state;
  tu_rmtree(fx->dir);
  free(fx->dir);
  free(fx);
  return 0;
}

/* True when the dynamic loader has path mapped in this process. */
static int is_loaded(const char *dir, const char *rel) {
  char *p = path_in(dir, rel);
  char *real = realpath(p, NULL);
  void *h = real ? dlopen(real, RTLD_NOW | RTLD_NOLOAD) : NULL;
  free(p);
  free(real);
  if (h) dlclose(h);
  return h != NULL;
}

typedef struct submit_log {
  int calls;
  int32_t kernel_id, core_type, nargs;
  uint64_t scalar;
} submit_log;

static int32_t record_submit(void *ctx, int32_t kernel_id, int32_t core_type,
                             const pto_orch_task_arg *args, int32_t nargs) {
  submit_log *log = ctx;
  log->calls++;
  log->kernel_id = kernel_id;
  log->core_type = core_type;
  log->nargs = nargs;
  log->scalar = nargs > 0 ? args[0].scalar : 0;
  return 0;
}

static void test_load_dir_runs_the_binaries(void **state) {
  fixture *fx = *state;
  pto_program *p = NULL;
  assert_pto_ok(pto_program_load_dir(fx->dir, &p));
  assert_non_null(p);
  assert_int_equal(pto_program_kernel_count(p), 2);
  assert_string_equal(pto_program_kernel_name(p, 0), "add");
  assert_string_equal(pto_program_kernel_name(p, 1), "mul");
  assert_true(pto_program_scratch_bytes(p) == 65536);
  char *orch = path_in(fx->dir, "orchestration/main.so");
  uint64_t hid = 0;
  assert_pto_ok(pto_elf_hid(orch, &hid));
  free(orch);
  assert_true(pto_program_hid(p) == hid);
  char *real = realpath(fx->dir, NULL);
  assert_string_equal(pto_program_work_dir(p), real);
  free(real);
  const pto_signature *sig = pto_program_signature(p);
  assert_string_equal(sig->entry, "main");
  assert_int_equal(sig->nparams, 3);
  assert_string_equal(sig->syms[sig->params[1].dims[1].sym], "N");

  /* Kernels by id. */
  uint64_t scalars[1] = {10};
  pto_core_ctx ctx = {.core_id = 2, .ncores = 4};
  assert_int_equal(pto_program_kernel(p, 0)(NULL, scalars, &ctx), 11);
  assert_int_equal(pto_program_kernel(p, 1)(NULL, scalars, &ctx), 32);
  assert_null(pto_program_kernel(p, 2));

  /* The orchestration through its C entry: bind a table, call with pto_orch_args. */
  submit_log log = {0};
  pto_orch_api api = {
      .version = PTO_ORCH_ABI_VERSION, .size = sizeof api, .ctx = &log, .submit = record_submit};
  pto_program_orch_bind(p)(&api);
  uint64_t args_scalars[1] = {20};
  pto_orch_tensor tensors[2] = {0};
  pto_orch_args args = {.tensors = tensors, .scalars = args_scalars, .ntensors = 2, .nscalars = 1};
  pto_program_orch_entry(p)(&args);
  /* The config function, found beside the default entry: what it returns for these args. */
  assert_non_null(pto_program_orch_config(p));
  assert_int_equal(pto_program_orch_config(p)(&args).expected_arg_count, 9);
  assert_int_equal(log.calls, 1);
  assert_int_equal(log.kernel_id, 1);
  assert_int_equal(log.core_type, PTO_CORE_AIC);
  assert_int_equal(log.nargs, 1);
  assert_true(log.scalar == 42);

  /* Loading twice shares the mapped objects; each program releases its own reference. */
  pto_program *q = NULL;
  assert_pto_ok(pto_program_load_dir(fx->dir, &q));
  assert_ptr_equal(pto_program_kernel(p, 0), pto_program_kernel(q, 0));
  pto_program_release(q);
  assert_true(is_loaded(fx->dir, "kernels/kernels.so"));
  pto_program_release(p);
  assert_false(is_loaded(fx->dir, "kernels/kernels.so"));
  assert_false(is_loaded(fx->dir, "orchestration/main.so"));
}

/* Loads dir expecting code and a message containing needle; checks that nothing was mapped. */
static void expect_load_error(const char *dir, pto_status_code code, const char *needle) {
  pto_program *p = (pto_program *)1;
  pto_status s = pto_program_load_dir(dir, &p);
  assert_null(p);
  if (pto_status_code_of(s) != code) {
    print_error("expected %s, got %s: %s\n", pto_status_code_name(code),
                pto_status_code_name(pto_status_code_of(s)), pto_status_message(s));
    pto_status_free(s);
    fail();
  }
  assert_status_contains(s, needle);
  assert_false(is_loaded(dir, "kernels/kernels.so"));
  assert_false(is_loaded(dir, "orchestration/main.so"));
}

static void flip_byte(const char *dir, const char *rel, long at_fraction_num, long den) {
  size_t n = 0;
  char *p = path_in(dir, rel);
  char *b = tu_read_file(p, &n);
  assert_non_null(b);
  size_t at = (size_t)((long)n * at_fraction_num / den);
  b[at] ^= 0x01;
  FILE *f = fopen(p, "wb");
  assert_int_equal(fwrite(b, 1, n, f), n);
  fclose(f);
  free(b);
  free(p);
}

static void test_corrupt_binary_is_data_loss_and_never_loaded(void **state) {
  fixture *fx = *state;
  flip_byte(fx->dir, "kernels/kernels.so", 1, 2);
  expect_load_error(fx->dir, PTO_STATUS_DATA_LOSS, "kernels/kernels.so: content hash");
  compile_kernels(fx->dir, PTO_KERNEL_ABI_VERSION, 0); /* same source, same bytes: loads again */
  pto_program *p = NULL;
  assert_pto_ok(pto_program_load_dir(fx->dir, &p));
  pto_program_release(p);
  flip_byte(fx->dir, "orchestration/main.so", 1, 3);
  expect_load_error(fx->dir, PTO_STATUS_DATA_LOSS, "orchestration/main.so: content hash");
}

static void test_truncated_binary_is_data_loss(void **state) {
  fixture *fx = *state;
  char *out = NULL;
  assert_int_equal(tu_run(&out, "cd '%s' && truncate -s 1000 kernels/kernels.so", fx->dir), 0);
  free(out);
  expect_load_error(fx->dir, PTO_STATUS_DATA_LOSS, "kernels/kernels.so");
  assert_int_equal(tu_run(NULL, "cd '%s' && : > orchestration/main.so", fx->dir), 0);
  expect_load_error(fx->dir, PTO_STATUS_DATA_LOSS, "corrupt or was replaced");
}

static void test_swapped_binaries_are_data_loss(void **state) {
  fixture *fx = *state;
  assert_int_equal(tu_run(NULL, "cd '%s' && cp orchestration/main.so kernels/kernels.so", fx->dir),
                   0);
  expect_load_error(fx->dir, PTO_STATUS_DATA_LOSS, "kernels/kernels.so: content hash");
}

static void test_rebuilt_binary_with_stale_build_id_is_data_loss(void **state) {
  fixture *fx = *state;
  /* A new kernels.so whose content hash was recorded but whose Build-ID was not. */
  pto_manifest m;
  assert_pto_ok(pto_manifest_read(fx->dir, &m));
  compile_kernels(fx->dir, PTO_KERNEL_ABI_VERSION, 7);
  assert_pto_ok(pto_manifest_add_file(&m, fx->dir, "kernels/kernels.so"));
  assert_pto_ok(pto_manifest_write(fx->dir, &m));
  pto_manifest_free(&m);
  expect_load_error(fx->dir, PTO_STATUS_DATA_LOSS, "kernels/kernels.so: Build-ID");
}

static void test_edited_source_is_stale(void **state) {
  fixture *fx = *state;
  char *out = NULL;
  assert_int_equal(
      tu_run(&out, "cd '%s' && echo '// hand edit' >> orchestration/main.cpp", fx->dir), 0);
  free(out);
  char want[700];
  snprintf(want, sizeof want, "orchestration/main.cpp: edited since it was compiled");
  expect_load_error(fx->dir, PTO_STATUS_FAILED_PRECONDITION, want);
  snprintf(want, sizeof want, "run: pto rebuild %s", fx->dir);
  expect_load_error(fx->dir, PTO_STATUS_FAILED_PRECONDITION, want);
}

static void test_edited_kernel_ir_is_stale(void **state) {
  fixture *fx = *state;
  write_in(fx->dir, "kernels/mul.ll", "; kernel mul, edited\n");
  expect_load_error(fx->dir, PTO_STATUS_FAILED_PRECONDITION, "kernels/mul.ll: edited");
  char *p = path_in(fx->dir, "kernels/mul.ll");
  unlink(p);
  free(p);
  expect_load_error(fx->dir, PTO_STATUS_NOT_FOUND,
                    "kernels/mul.ll: listed in the manifest but missing");
}

/* Rewrites DIR/manifest.json with the first from replaced by to. */
static void edit_manifest(const char *dir, const char *from, const char *to) {
  char *p = path_in(dir, "manifest.json");
  char *text = tu_read_file(p, NULL);
  assert_non_null(text);
  char *at = strstr(text, from);
  assert_non_null(at);
  char *out = NULL;
  assert_true(asprintf(&out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from)) > 0);
  assert_int_equal(tu_write_file(p, out), 0);
  free(out);
  free(text);
  free(p);
}

static void test_manifest_escaping_the_dir_is_refused(void **state) {
  fixture *fx = *state;
  edit_manifest(fx->dir, "\"binary\": \"kernels/kernels.so\"", "\"binary\": \"../x/kernels.so\"");
  expect_load_error(fx->dir, PTO_STATUS_INVALID_ARGUMENT,
                    "field 'kernels_so.binary': path '../x/kernels.so' has a '..' component");
}

static void test_symlinked_binary_outside_the_dir_is_refused(void **state) {
  fixture *fx = *state;
  char *outside = tu_mkdtemp("loaddir-outside");
  assert_int_equal(tu_run(NULL,
                          "cd '%s' && mv kernels/kernels.so '%s/' && ln -s '%s/kernels.so' "
                          "kernels/kernels.so",
                          fx->dir, outside, outside),
                   0);
  expect_load_error(fx->dir, PTO_STATUS_INVALID_ARGUMENT, "a symlink leads outside the work dir");
  tu_rmtree(outside);
  free(outside);
}

static void test_malformed_manifest_errors(void **state) {
  fixture *fx = *state;
  char *p = path_in(fx->dir, "manifest.json");
  assert_int_equal(
      tu_write_file(p, "{\n  \"schema\": \"pto.manifest/1\"\n  \"program\": \"x\"\n}\n"), 0);
  char want[700];
  snprintf(want, sizeof want, "%s:3:", p);
  expect_load_error(fx->dir, PTO_STATUS_INVALID_ARGUMENT, want);
  expect_load_error(fx->dir, PTO_STATUS_INVALID_ARGUMENT, "invalid JSON");
  free(p);
}

static void test_missing_field_is_named(void **state) {
  fixture *fx = *state;
  edit_manifest(fx->dir, "\"symbol\": \"pto_kernel_mul\"", "\"sym\": \"pto_kernel_mul\"");
  expect_load_error(fx->dir, PTO_STATUS_INVALID_ARGUMENT,
                    "manifest.json: field 'kernels[1].symbol': missing");
}

static void test_missing_kernel_symbol_is_named(void **state) {
  fixture *fx = *state;
  edit_manifest(fx->dir, "\"symbol\": \"pto_kernel_mul\"", "\"symbol\": \"pto_kernel_nope\"");
  expect_load_error(fx->dir, PTO_STATUS_NOT_FOUND,
                    "no function 'pto_kernel_nope' defined in it for kernel 1 'mul'");
}

static void test_abi_version_mismatch(void **state) {
  fixture *fx = *state;
  compile_kernels(fx->dir, 99, 0);
  write_manifest(fx->dir);
  expect_load_error(fx->dir, PTO_STATUS_FAILED_PRECONDITION, "kernel ABI version 99");
  compile_kernels(fx->dir, PTO_KERNEL_ABI_VERSION, 0);
  compile_orch(fx->dir, 77);
  write_manifest(fx->dir);
  expect_load_error(fx->dir, PTO_STATUS_FAILED_PRECONDITION, "orchestration ABI version 77");
  /* An object built against the previous header (before submit_args) is refused by name. */
  compile_orch(fx->dir, PTO_ORCH_ABI_VERSION - 1);
  write_manifest(fx->dir);
  char want[160];
  snprintf(want, sizeof want,
           "orchestration/main.so: orchestration ABI version %d, this runtime needs %d; compile "
           "the program again",
           PTO_ORCH_ABI_VERSION - 1, PTO_ORCH_ABI_VERSION);
  expect_load_error(fx->dir, PTO_STATUS_FAILED_PRECONDITION, want);
}

static void test_rebuilt_image_of_a_loaded_path_loads_beside_the_old(void **state) {
  fixture *fx = *state;
  pto_program *p = NULL;
  assert_pto_ok(pto_program_load_dir(fx->dir, &p));
  /* Rebuilt in place (new file, new Build-ID, manifest updated) while p still maps the old
   * image: dlopen of the same path would hand back the old code, so the loader maps the new
   * bytes under a private name; p keeps the old code, q runs the new. */
  compile_kernels(fx->dir, PTO_KERNEL_ABI_VERSION, 5);
  write_manifest(fx->dir);
  pto_program *q = NULL;
  assert_pto_ok(pto_program_load_dir(fx->dir, &q));
  uint64_t scalars[1] = {10};
  pto_core_ctx ctx = {0};
  assert_int_equal(pto_program_kernel(q, 0)(NULL, scalars, &ctx), 16);
  assert_int_equal(pto_program_kernel(p, 0)(NULL, scalars, &ctx), 11);
  pto_program_release(p);
  pto_program_release(q);
  /* With the old image gone the path itself is loaded again. */
  assert_pto_ok(pto_program_load_dir(fx->dir, &q));
  assert_int_equal(pto_program_kernel(q, 0)(NULL, scalars, &ctx), 16);
  pto_program_release(q);
}

static void test_not_a_work_dir(void **state) {
  fixture *fx = *state;
  char *p = path_in(fx->dir, "manifest.json");
  unlink(p);
  free(p);
  expect_load_error(fx->dir, PTO_STATUS_NOT_FOUND, "not a work dir");
}

/* ---- in place or from a private copy -------------------------------------------------------- */

/* The swap of the tests below: after the loader verified kernels/kernels.so and before it loads
 * it, another file (g_swap_from) is renamed over it, once. The other file's constructor creates
 * g_marker: if it ever runs, the swapped file was mapped. */
static char *g_swap_from, *g_marker;

static void swap_after_verify(const char *path) {
  if (!g_swap_from || !ends_with_str(path, "/kernels/kernels.so")) return;
  assert_int_equal(rename(g_swap_from, path), 0);
  free(g_swap_from);
  g_swap_from = NULL;
}

/* dir/evil.so: no pto code, a constructor that creates dir/evil-ran. */
static void build_evil(const char *dir) {
  char *out = NULL;
  int rc = tu_run(&out,
                  "cd '%s' && printf '%%s\\n' '#include <stdio.h>' "
                  "'__attribute__((constructor)) static void evil(void) {' "
                  "'  FILE *f = fopen(\"%s/evil-ran\", \"w\"); if (f) fclose(f); }' > evil.c && "
                  "cc -shared -fPIC -o evil.so evil.c",
                  dir, dir);
  if (rc) print_error("%s\n", out);
  free(out);
  assert_int_equal(rc, 0);
  g_swap_from = path_in(dir, "evil.so");
  g_marker = path_in(dir, "evil-ran");
}

static void unhook(void) {
  pto__loader_test_after_verify = NULL;
  free(g_swap_from);
  free(g_marker);
  g_swap_from = g_marker = NULL;
}

/* The file the dynamic loader mapped kernel 0 of p from. */
static const char *kernels_file(const pto_program *p) {
  Dl_info info;
  pto_kernel_fn k = pto_program_kernel(p, 0);
  void *addr;
  memcpy(&addr, &k, sizeof addr);
  assert_true(dladdr(addr, &info) && info.dli_fname);
  return info.dli_fname;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* A work dir others may write (mode 0777, no sticky bit): its kernels.so is swapped between
 * verification and loading, and the verified bytes are what loads, from a private copy kept
 * under a real name until release; the swapped file's constructor never runs. */
static void test_shared_dir_loads_the_verified_bytes_from_a_private_copy(void **state) {
  fixture *fx = *state;
  assert_int_equal(chmod(fx->dir, 0777), 0);
  build_evil(fx->dir);
  pto__loader_test_after_verify = swap_after_verify;
  pto_program *p = NULL;
  pto_status s = pto_program_load_dir(fx->dir, &p);
  int ran = exists(g_marker);
  pto__loader_test_after_verify = NULL;
  assert_null(g_swap_from); /* the swap happened */
  assert_false(ran);
  assert_pto_ok(s);
  uint64_t scalars[1] = {10};
  pto_core_ctx ctx = {0};
  assert_int_equal(pto_program_kernel(p, 0)(NULL, scalars, &ctx), 11);
  char *copy = strdup(kernels_file(p));
  assert_non_null(strstr(copy, "/pto-load-"));
  assert_true(ends_with_str(copy, "/kernels-kernels.so"));
  struct stat st;
  assert_int_equal(stat(copy, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0500);
  char *copy_dir = strdup(copy);
  *strrchr(copy_dir, '/') = 0;
  assert_int_equal(stat(copy_dir, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0700);
  pto_program_release(p);
  assert_false(exists(copy));
  assert_false(exists(copy_dir));
  free(copy);
  free(copy_dir);
  unhook();
}

/* A work dir nobody else can write (0700 in the sticky /tmp) loads in place: the link map names
 * the work dir's own file. */
static void test_private_dir_loads_in_place(void **state) {
  (void)state;
  char dir[] = "/tmp/pto-inplace-XXXXXX";
  assert_non_null(mkdtemp(dir));
  build_work_dir(dir, PTO_ORCH_ABI_VERSION, PTO_KERNEL_ABI_VERSION);
  pto_program *p = NULL;
  assert_pto_ok(pto_program_load_dir(dir, &p));
  char *want = path_in(dir, "kernels/kernels.so");
  assert_string_equal(kernels_file(p), want);
  free(want);
  pto_program_release(p);
  tu_rmtree(dir);
}

/* A copy left by a process that died (pto-load-<dead pid>-XXXXXX) is removed by the next load
 * that makes one in the same place; a live process's is left alone. */
static void test_stale_copy_of_a_dead_process_is_removed(void **state) {
  fixture *fx = *state;
  char *base = tu_mkdtemp("loadbase");
  assert_non_null(base);
  pid_t dead = fork();
  assert_true(dead >= 0);
  if (dead == 0) _exit(0);
  assert_int_equal(waitpid(dead, NULL, 0), dead);
  char *stale = NULL, *live = NULL;
  assert_true(asprintf(&stale, "%s/pto-load-%ld-abcdef", base, (long)dead) > 0);
  assert_true(asprintf(&live, "%s/pto-load-%ld-ghijkl", base, (long)getppid()) > 0);
  assert_int_equal(mkdir(stale, 0700), 0);
  assert_int_equal(mkdir(live, 0700), 0);
  write_in(stale, "kernels-kernels.so", "old");
  assert_int_equal(chmod(fx->dir, 0777), 0);
  setenv("XDG_RUNTIME_DIR", base, 1);
  pto_program *p = NULL;
  pto_status s = pto_program_load_dir(fx->dir, &p);
  unsetenv("XDG_RUNTIME_DIR");
  assert_pto_ok(s);
  char *real_base = realpath(base, NULL);
  assert_int_equal(strncmp(kernels_file(p), real_base, strlen(real_base)), 0);
  assert_false(exists(stale));
  assert_true(exists(live));
  pto_program_release(p);
  free(real_base);
  free(stale);
  free(live);
  tu_rmtree(base);
  free(base);
}

/* gdb attaches to a process that loaded from a private copy, returns, and names the copy (a
 * library loaded from a memfd made gdb hang). Skipped without gdb, under a sanitizer, and
 * where this process may not be traced. */
static void test_gdb_attaches_to_a_private_copy(void **state) {
  fixture *fx = *state;
  const char *san = getenv("PTO_SANFLAGS");
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  san = "sanitizer";
#endif
  if ((san && *san) || tu_run(NULL, "command -v gdb >/dev/null 2>&1") != 0) {
    print_message("[ SKIPPED  ] no gdb here, or a sanitizer build\n");
    return;
  }
  assert_int_equal(chmod(fx->dir, 0777), 0);
  pto_program *p = NULL;
  assert_pto_ok(pto_program_load_dir(fx->dir, &p));
  char *copy = strdup(kernels_file(p));
  assert_non_null(strstr(copy, "/pto-load-"));
  /* Yama's ptrace_scope 1 lets only ancestors trace a process: allow our child, gdb. */
  (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  char *out = NULL;
  int rc = tu_run(&out,
                  "DEBUGINFOD_URLS= timeout 60 gdb -nx -batch -p %ld "
                  "-ex 'info sharedlibrary' </dev/null 2>&1",
                  (long)getpid());
  if (strstr(out, "ptrace: Operation not permitted") || strstr(out, "Could not attach")) {
    print_message("[ SKIPPED  ] this process may not be traced here\n");
  } else {
    if (rc != 0 || !strstr(out, copy)) print_error("gdb exited %d:\n%s\n", rc, out);
    assert_int_equal(rc, 0); /* 124: gdb hung and timeout killed it */
    assert_non_null(strstr(out, copy));
  }
  free(out);
  free(copy);
  pto_program_release(p);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(test_load_dir_runs_the_binaries),
      T(test_corrupt_binary_is_data_loss_and_never_loaded),
      T(test_truncated_binary_is_data_loss),
      T(test_swapped_binaries_are_data_loss),
      T(test_rebuilt_binary_with_stale_build_id_is_data_loss),
      T(test_edited_source_is_stale),
      T(test_edited_kernel_ir_is_stale),
      T(test_manifest_escaping_the_dir_is_refused),
      T(test_symlinked_binary_outside_the_dir_is_refused),
      T(test_malformed_manifest_errors),
      T(test_missing_field_is_named),
      T(test_missing_kernel_symbol_is_named),
      T(test_abi_version_mismatch),
      T(test_rebuilt_image_of_a_loaded_path_loads_beside_the_old),
      T(test_not_a_work_dir),
      T(test_shared_dir_loads_the_verified_bytes_from_a_private_copy),
      T(test_private_dir_loads_in_place),
      T(test_stale_copy_of_a_dead_process_is_removed),
      T(test_gdb_attaches_to_a_private_copy),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
