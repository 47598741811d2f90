/* pto_program_rebuild_dir on a work dir built here with the real compiler library's rebuild
 * functions (C++ orchestration, hand-written LLVM IR kernels, relinked kernels.so), so it does
 * not depend on the code generator: nothing edited -> nothing rebuilt and the compiler never
 * loaded; an edited .cpp -> a new .so whose new behaviour runs and whose hid changed, loaded in the
 * same process as the old one; an edited .ll -> its .o and kernels.so, the other kernel's object
 * untouched; a damaged object is rebuilt; what cannot be rebuilt is an error naming the file. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_internal.h"
#include "pto/compiler.h"
#include "pto/loader.h"
#include "pto/manifest.h"
#include "testutil.h"

#define STR2(x) #x
#define PTO_STR(x) STR2(x)

static const char k_orch_cpp[] =
    "#include \"pto/orch_abi.h\"\n"
    "extern \"C\" {\n"
    "__attribute__((visibility(\"default\"))) uint32_t pto_orch_abi_version(void) { return "
    "PTO_ORCH_ABI_VERSION; }\n"
    "__attribute__((visibility(\"default\"))) void pto_orch_bind(const pto_orch_api *) {}\n"
    "__attribute__((visibility(\"default\"))) void aicpu_orchestration_entry(const void *) {}\n"
    "__attribute__((visibility(\"default\"))) int pto_test_value(void) { return 41; }\n"
    "}\n";

static const char k_add_ll[] = "@pto_kernel_abi_version = constant i32 " PTO_STR(
    PTO_KERNEL_ABI_VERSION) "\n"
                            "define i32 @pto_kernel_add(ptr %t, ptr %s, ptr %c) {\n"
                            "  ret i32 7\n"
                            "}\n";

static const char k_mul_ll[] = "define i32 @pto_kernel_mul(ptr %t, ptr %s, ptr %c) {\n"
                               "  ret i32 3\n"
                               "}\n";

static char *g_dir;

static void path_in(const char *rel, char *out, size_t n) { snprintf(out, n, "%s/%s", g_dir, rel); }

static void write_in(const char *rel, const char *text) {
  char p[4096];
  path_in(rel, p, sizeof p);
  assert_int_equal(tu_write_file(p, text), 0);
}

/* Replaces the first occurrence of from by to in DIR/rel (a hand edit). */
static void edit(const char *rel, const char *from, const char *to) {
  char p[4096];
  path_in(rel, p, sizeof p);
  char *text = tu_read_file(p, NULL);
  assert_non_null(text);
  char *at = strstr(text, from);
  assert_non_null(at);
  char *out = malloc(strlen(text) + strlen(to) + 1);
  sprintf(out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  assert_int_equal(tu_write_file(p, out), 0);
  free(out);
  free(text);
}

static void build_work_dir(void) {
  const pto_compiler_api *api = &pto_compiler_api_table; /* linked in: no dlopen here */
  char a[4096], b[4096], c[4096];
  path_in("orchestration", a, sizeof a);
  mkdir(a, 0755);
  path_in("kernels", a, sizeof a);
  mkdir(a, 0755);
  write_in("orchestration/main.cpp", k_orch_cpp);
  write_in("kernels/add.ll", k_add_ll);
  write_in("kernels/mul.ll", k_mul_ll);
  path_in("orchestration/main.cpp", a, sizeof a);
  path_in("orchestration/main.so", b, sizeof b);
  assert_pto_ok(api->build_orchestration(a, b));
  path_in("kernels/add.ll", a, sizeof a);
  path_in("kernels/add.o", b, sizeof b);
  assert_pto_ok(api->build_kernel_object(a, 2, b));
  path_in("kernels/mul.ll", a, sizeof a);
  path_in("kernels/mul.o", c, sizeof c);
  assert_pto_ok(api->build_kernel_object(a, 2, c));
  path_in("kernels/kernels.so", a, sizeof a);
  const char *objs[] = {b, c};
  assert_pto_ok(api->link_kernels(objs, 2, a));

  pto_manifest m;
  memset(&m, 0, sizeof m);
  m.program = strdup("rebuild_test");
  m.platform = strdup("sim");
  m.opt_level = 2;
  m.toolchain = strdup("test");
  strcpy(m.cache_key, "0123456789abcdef0123456789abcdef");
  m.sig.entry = strdup("main");
  m.nkernels = 2;
  m.kernels = calloc(2, sizeof *m.kernels);
  m.kernels[0] = (pto_manifest_kernel){0,
                                       strdup("add"),
                                       strdup("pto_kernel_add"),
                                       PTO_CORE_AIV,
                                       1024,
                                       strdup("kernels/add.ll"),
                                       strdup("kernels/add.o")};
  m.kernels[1] = (pto_manifest_kernel){1,
                                       strdup("mul"),
                                       strdup("pto_kernel_mul"),
                                       PTO_CORE_AIV,
                                       1024,
                                       strdup("kernels/mul.ll"),
                                       strdup("kernels/mul.o")};
  m.orch_name = strdup("main");
  m.orch_source = strdup("orchestration/main.cpp");
  const char *files[] = {"orchestration/main.cpp", "orchestration/main.so", "kernels/add.ll",
                         "kernels/add.o",          "kernels/mul.ll",        "kernels/mul.o",
                         "kernels/kernels.so"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++)
    assert_pto_ok(pto_manifest_add_file(&m, g_dir, files[i]));
  assert_pto_ok(pto_manifest_binary_set(&m.orch, g_dir, "orchestration/main.so"));
  assert_pto_ok(pto_manifest_binary_set(&m.kernels_so, g_dir, "kernels/kernels.so"));
  assert_pto_ok(pto_manifest_write(g_dir, &m));
  pto_manifest_free(&m);
}

static int setup(void **state) {
  (void)state;
  g_dir = tu_mkdtemp("rebuild");
  if (!g_dir) return -1;
  build_work_dir();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tu_rmtree(g_dir);
  free(g_dir);
  return 0;
}

static int value_of(const pto_program *p) {
  void *f = dlsym(p->orch_dl, "pto_test_value");
  assert_non_null(f);
  int (*fn)(void);
  memcpy(&fn, &f, sizeof fn);
  return fn();
}

static int32_t kernel(const pto_program *p, int id) {
  uint64_t scalars[1] = {0};
  pto_core_ctx ctx = {0};
  return pto_program_kernel(p, id)(NULL, scalars, &ctx);
}

static char *manifest_text(void) {
  char p[4096];
  path_in("manifest.json", p, sizeof p);
  return tu_read_file(p, NULL);
}

static char *hash_in_manifest(const char *rel) {
  pto_manifest m;
  assert_pto_ok(pto_manifest_read(g_dir, &m));
  const pto_manifest_file *f = pto_manifest_find_file(&m, rel);
  assert_non_null(f);
  char *h = strdup(f->hash);
  pto_manifest_free(&m);
  return h;
}

/* Must run first in this process: the loader has not loaded the compiler yet. */
static void test_rebuild_nothing_changed_rebuilds_nothing(void **state) {
  (void)state;
  char *before = manifest_text();
  int n = -1;
  assert_pto_ok(pto_program_rebuild_dir(g_dir, &n));
  assert_int_equal(n, 0);
  assert_false(pto__loader_compiler_loaded()); /* LLVM stays unloaded */
  char *after = manifest_text();
  assert_string_equal(before, after);
  free(before);
  free(after);
  pto_program *p = NULL;
  assert_pto_ok(pto_program_load_dir(g_dir, &p));
  assert_int_equal(value_of(p), 41);
  assert_int_equal(kernel(p, 0), 7);
  assert_int_equal(kernel(p, 1), 3);
  pto_program_release(p);
}

static void test_rebuild_edited_orchestration_runs_new_code_in_the_same_process(void **state) {
  (void)state;
  pto_program *old = NULL;
  assert_pto_ok(pto_program_load_dir(g_dir, &old));
  uint64_t old_hid = pto_program_hid(old);
  edit("orchestration/main.cpp", "return 41;", "return 42;");
  /* Stale: loading refuses it and says what to run. */
  pto_program *p = NULL;
  pto_status s = pto_program_load_dir(g_dir, &p);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_FAILED_PRECONDITION);
  assert_status_contains(s, "orchestration/main.cpp: edited since it was compiled");
  char *mul_o = hash_in_manifest("kernels/mul.o");
  int n = 0;
  assert_pto_ok(pto_program_rebuild_dir(g_dir, &n));
  assert_int_equal(n, 1); /* the .so only */
  assert_pto_ok(pto_program_load_dir(g_dir, &p));
  assert_int_equal(value_of(p), 42);
  assert_true(pto_program_hid(p) != old_hid);
  assert_int_equal(value_of(old), 41); /* the old program keeps its old image */
  /* The old image still holds the path's name in the dynamic loader, so the new one was mapped
   * from a private copy (deleted once mapped). */
  char *maps = NULL;
  assert_int_equal(tu_run(&maps, "cat /proc/%ld/maps", (long)getpid()), 0);
  assert_non_null(strstr(maps, "/pto-load-"));
  free(maps);
  char *mul_o2 = hash_in_manifest("kernels/mul.o");
  assert_string_equal(mul_o, mul_o2);
  /* The hid recorded is the new binary's. */
  char so[4096];
  path_in("orchestration/main.so", so, sizeof so);
  uint64_t hid = 0;
  assert_pto_ok(pto_elf_hid(so, &hid));
  assert_true(pto_program_hid(p) == hid);
  pto_program_release(old);
  pto_program_release(p);
  free(mul_o);
  free(mul_o2);
  /* Done: a second rebuild finds nothing. */
  assert_pto_ok(pto_program_rebuild_dir(g_dir, &n));
  assert_int_equal(n, 0);
}

static void test_rebuild_edited_kernel_relinks_kernels(void **state) {
  (void)state;
  char *mul_o = hash_in_manifest("kernels/mul.o");
  char *kso = hash_in_manifest("kernels/kernels.so");
  edit("kernels/add.ll", "ret i32 7", "ret i32 70");
  int n = 0;
  assert_pto_ok(pto_program_rebuild_dir(g_dir, &n));
  assert_int_equal(n, 2); /* add.o and kernels.so */
  pto_program *p = NULL;
  assert_pto_ok(pto_program_load_dir(g_dir, &p));
  assert_int_equal(kernel(p, 0), 70);
  assert_int_equal(kernel(p, 1), 3);
  assert_int_equal(value_of(p), 41);
  char *mul_o2 = hash_in_manifest("kernels/mul.o");
  char *kso2 = hash_in_manifest("kernels/kernels.so");
  assert_string_equal(mul_o, mul_o2);
  assert_string_not_equal(kso, kso2);
  pto_program_release(p);
  free(mul_o);
  free(mul_o2);
  free(kso);
  free(kso2);
}

static void test_rebuild_damaged_object_is_rebuilt_from_its_source(void **state) {
  (void)state;
  char p[4096];
  path_in("kernels/mul.o", p, sizeof p);
  assert_int_equal(truncate(p, 10), 0);
  int n = 0;
  assert_pto_ok(pto_program_rebuild_dir(g_dir, &n));
  assert_int_equal(n, 2); /* mul.o and kernels.so */
  pto_program *prog = NULL;
  assert_pto_ok(pto_program_load_dir(g_dir, &prog));
  assert_int_equal(kernel(prog, 1), 3);
  pto_program_release(prog);
}

static void test_rebuild_reports_what_cannot_be_rebuilt(void **state) {
  (void)state;
  char p[4096];
  path_in("kernels/mul.ll", p, sizeof p);
  assert_int_equal(unlink(p), 0);
  assert_status_contains(pto_program_rebuild_dir(g_dir, NULL),
                         "kernels/mul.ll: listed in the manifest but missing");
}

static void test_rebuild_compile_error_keeps_the_old_binary(void **state) {
  (void)state;
  edit("orchestration/main.cpp", "return 41;", "return 41 +;");
  char *before = manifest_text();
  pto_status s = pto_program_rebuild_dir(g_dir, NULL);
  assert_non_null(s);
  assert_non_null(strstr(pto_status_message(s), "rebuilding"));
  pto_status_free(s);
  char *after = manifest_text();
  assert_string_equal(before, after); /* nothing recorded */
  free(before);
  free(after);
  /* The old binary is still there and verifies; only the source is stale. */
  pto_program *p = NULL;
  assert_status_contains(pto_program_load_dir(g_dir, &p), "edited since it was compiled");
}

static void test_rebuild_malformed_manifest_names_file_and_field(void **state) {
  (void)state;
  char p[4096];
  path_in("manifest.json", p, sizeof p);
  char *text = tu_read_file(p, NULL);
  char *at = strstr(text, "\"opt_level\": 2");
  assert_non_null(at);
  memcpy(at, "\"opt_level\": 9", 14);
  assert_int_equal(tu_write_file(p, text), 0);
  free(text);
  assert_status_contains(pto_program_rebuild_dir(g_dir, NULL),
                         "manifest.json: field 'opt_level': 9 is out of range");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_rebuild_nothing_changed_rebuilds_nothing, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          test_rebuild_edited_orchestration_runs_new_code_in_the_same_process, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rebuild_edited_kernel_relinks_kernels, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rebuild_damaged_object_is_rebuilt_from_its_source, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_rebuild_reports_what_cannot_be_rebuilt, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rebuild_compile_error_keeps_the_old_binary, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_rebuild_malformed_manifest_names_file_and_field, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
