/* The binary cache through pto_compile and pto_compile_to_dir, with a stand-in compiler
 * (cache_fake_compiler.c, built here with cc) so that these tests exercise the cache and not
 * the code generator: the in-process level returns the same object, the disk level serves new
 * processes and work dirs, a corrupt, truncated, swapped or misfiled entry is reported, counted,
 * discarded and rebuilt (never loaded), a lost race uses the winner, an unusable cache (refused,
 * read-only, full) compiles without caching and warns once, eviction is least recently used. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache_internal.h"
#include "pto/cache.h"
#include "pto/ir.h"
#include "pto/loader.h"
#include "pto/manifest.h"
#include "testutil.h"

#ifndef PTO_SOURCE_DIR
#define PTO_SOURCE_DIR "."
#endif

static char *g_tmp;        /* per-process scratch */
static char g_log[4096];   /* the fake compiler's build log */
static char g_cache[4096]; /* PTO_CACHE_DIR of the current test */
static int g_test_no;

/* ---- warnings captured ---------------------------------------------------------------- */

static char g_warnings[8192];
static int g_nwarnings;

static void capture_warning(void *ctx, const char *msg) {
  (void)ctx;
  g_nwarnings++;
  strncat(g_warnings, msg, sizeof g_warnings - strlen(g_warnings) - 2);
  strcat(g_warnings, "\n");
}

/* ---- programs ------------------------------------------------------------------------- */

/* A small program; variant changes its structure (the kernel's row count), names its values. */
static pto_ir_program *program(int variant, const char *xname) {
  char text[2048];
  snprintf(
      text, sizeof text,
      "program cache_test\n"
      "dynamic M, R\n"
      "kernel @blk(%%%s: tensor[R,64] f32, out %%y: tensor[R,64] f32) -> (tensor[R,64] f32) {\n"
      "  %%t = tile.load(%%%s, [0, 0], [%d, 64], valid=[R, 64])\n"
      "  %%y1 = tile.store(%%t, [0, 0], %%y)\n"
      "  return %%y1\n"
      "}\n"
      "orch @main(%%%s: tensor[M,64] f32, out %%y: tensor[M,64] f32) -> (tensor[M,64] f32) {\n"
      "  call @blk(%%%s, %%y)\n"
      "  return %%y\n"
      "}\n",
      xname, xname, 8 + variant, xname, xname);
  pto_ir_program *p = NULL;
  pto_status s = pto_ir_parse_string(text, strlen(text), "cache_test.ptir", &p);
  if (s) print_error("%s\n", pto_status_message(s));
  assert_null(s);
  return p;
}

static pto_program *compile_variant(int variant) {
  pto_ir_program *ir = program(variant, "x");
  pto_program *prog = NULL;
  assert_pto_ok(pto_compile(ir, NULL, &prog));
  pto_ir_program_destroy(ir);
  return prog;
}

static char *key_of_variant(int variant) {
  pto_ir_program *ir = program(variant, "x");
  char *key = malloc(33);
  assert_pto_ok(pto_cache_key(ir, NULL, key, NULL));
  pto_ir_program_destroy(ir);
  return key;
}

static uint64_t tag_of(const pto_program *p) {
  void *f = dlsym(p->orch_dl, "pto_fake_tag");
  assert_non_null(f);
  unsigned long long (*fn)(void);
  memcpy(&fn, &f, sizeof fn);
  return fn();
}

static uint64_t expected_tag(int variant) {
  pto_ir_program *ir = program(variant, "x");
  uint64_t t = pto_ir_program_hash(ir).lo & 0x7fffffff;
  pto_ir_program_destroy(ir);
  return t;
}

static int builds(void) {
  char *text = tu_read_file(g_log, NULL);
  int n = 0;
  for (char *c = text; c && *c; c++)
    n += *c == '\n';
  free(text);
  return n;
}

static void entry_dir(const char *key, char *out, size_t n) {
  snprintf(out, n, "%s/%.2s/%s", g_cache, key, key + 2);
}

static pto_cache_stats stats(void) {
  pto_cache_stats st;
  assert_pto_ok(pto_cache_stats_get(&st));
  return st;
}

/* ---- fixtures ------------------------------------------------------------------------- */

static int group_setup(void **state) {
  (void)state;
  g_tmp = tu_mkdtemp("cache");
  if (!g_tmp) return -1;
  char *out = NULL;
  int rc = tu_run(&out,
                  "cc -shared -fPIC -O1 -I'%s/include' -DFAKE_INCLUDE='\"%s/include\"' "
                  "-o '%s/fake_compiler.so' '%s/tests/unit/cache_fake_compiler.c'",
                  PTO_SOURCE_DIR, PTO_SOURCE_DIR, g_tmp, PTO_SOURCE_DIR);
  if (rc) {
    fprintf(stderr, "building the fake compiler failed:\n%s\n", out);
    free(out);
    return -1;
  }
  free(out);
  char lib[4096];
  snprintf(lib, sizeof lib, "%s/fake_compiler.so", g_tmp);
  setenv("PTO_COMPILER_LIBRARY", lib, 1);
  snprintf(g_log, sizeof g_log, "%s/builds.log", g_tmp);
  setenv("PTO_FAKE_COMPILER_LOG", g_log, 1);
  pto__loader_cache_reset_identity();
  pto_loader_set_warning_hook(capture_warning, NULL);
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  pto__loader_cache_forget_loaded();
  pto_loader_set_warning_hook(NULL, NULL);
  tu_rmtree(g_tmp);
  free(g_tmp);
  return 0;
}

/* Every test: a fresh cache dir, an empty in-process map, no captured warnings. */
static int setup(void **state) {
  (void)state;
  snprintf(g_cache, sizeof g_cache, "%s/cache%d", g_tmp, ++g_test_no);
  setenv("PTO_CACHE_DIR", g_cache, 1);
  unsetenv("PTO_CACHE_MAX_SIZE");
  unsetenv("PTO_CACHE_TEST_FAIL_PUBLISH");
  unsetenv("PTO_CACHE_DEBUG");
  pto__loader_cache_forget_loaded();
  pto__loader_cache_reset_warnings();
  g_warnings[0] = 0;
  g_nwarnings = 0;
  return 0;
}

/* ---- the in-process level ------------------------------------------------------------- */

static void test_cache_equal_key_returns_the_same_program_object(void **state) {
  (void)state;
  int b0 = builds();
  pto_program *a = compile_variant(0);
  assert_int_equal(builds(), b0 + 1);
  assert_true(tag_of(a) == expected_tag(0));
  pto_program *again = compile_variant(0);
  assert_ptr_equal(a, again);
  /* Renamed values: another request with the same key, the same object. */
  pto_ir_program *renamed = program(0, "input_rows");
  pto_program *r = NULL;
  assert_pto_ok(pto_compile(renamed, NULL, &r));
  assert_ptr_equal(a, r);
  /* Another structure: another program. */
  pto_program *other = compile_variant(1);
  assert_ptr_not_equal(a, other);
  assert_true(tag_of(other) == expected_tag(1));
  assert_int_equal(builds(), b0 + 2);
  pto_cache_stats st = stats();
  assert_true(st.memory_hits >= 2);
  assert_int_equal(st.misses, 2);
  assert_int_equal(st.stores, 2);
  assert_int_equal(st.entries, 2);
  pto_program_release(a);
  pto_program_release(again);
  pto_program_release(r);
  pto_program_release(other);
  pto_ir_program_destroy(renamed);
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* A repeat compile in the same process is answered by the in-process map: the same program,
 * nothing built, no disk entry read. Counted, not timed (the time is printed for a reader). */
static void test_cache_repeat_compile_is_served_in_process(void **state) {
  (void)state;
  pto_ir_program *ir = program(0, "x");
  pto_program *first = NULL;
  assert_pto_ok(pto_compile(ir, NULL, &first));
  enum { N = 200000 };
  int b0 = builds();
  pto_cache_stats s0 = stats();
  double t0 = now_ns();
  for (int i = 0; i < N; i++) {
    pto_program *p = NULL;
    pto_status s = pto_compile(ir, NULL, &p);
    if (s || p != first) fail();
    pto_program_release(p);
  }
  print_message("in-process repeat compile: %.0f ns\n", (now_ns() - t0) / N);
  pto_cache_stats s1 = stats();
  assert_int_equal(builds(), b0);
  assert_int_equal(s1.memory_hits - s0.memory_hits, N);
  assert_int_equal(s1.hits, s0.hits);
  assert_int_equal(s1.misses, s0.misses);
  pto_program_release(first);
  pto_ir_program_destroy(ir);
}

/* --entry naming a kernel: a key and a program of its own (not the orch entry's), and a repeat
 * is an in-process hit of the caller's request: nothing built. */
static void test_cache_kernel_entry_has_its_own_key_and_repeats_in_process(void **state) {
  (void)state;
  pto_ir_program *ir = program(0, "x");
  pto_compile_options opt;
  pto_compile_options_init(&opt);
  opt.entry = "blk";
  char kkey[33], mkey[33];
  assert_pto_ok(pto_cache_key(ir, &opt, kkey, NULL));
  assert_pto_ok(pto_cache_key(ir, NULL, mkey, NULL));
  assert_string_not_equal(kkey, mkey);
  pto_program *k = NULL, *m = NULL, *again = NULL;
  assert_pto_ok(pto_compile(ir, &opt, &k));
  assert_string_equal(pto_program_signature(k)->entry, "blk_entry");
  assert_string_equal(pto_program_signature(k)->kernel_entry, "blk"); /* the name given */
  assert_string_equal(pto_signature_entry_name(pto_program_signature(k)), "blk");
  assert_pto_ok(pto_compile(ir, NULL, &m));
  assert_ptr_not_equal(k, m);
  assert_string_equal(pto_program_signature(m)->entry, "main");
  assert_null(pto_program_signature(m)->kernel_entry);
  int b0 = builds();
  pto_cache_stats s0 = stats();
  assert_pto_ok(pto_compile(ir, &opt, &again));
  assert_ptr_equal(again, k);
  pto_cache_stats s1 = stats();
  assert_int_equal(s1.memory_hits - s0.memory_hits, 1);
  assert_int_equal(builds(), b0);
  assert_int_equal(s1.entries, 2);
  pto_program_release(k);
  pto_program_release(again);
  pto_program_release(m);
  pto_ir_program_destroy(ir);
}

typedef struct race_arg {
  pto_ir_program *ir;
  pto_program *out;
} race_arg;

static void *race_thread(void *arg) {
  race_arg *a = arg;
  pto_status s = pto_compile(a->ir, NULL, &a->out);
  if (s) {
    fprintf(stderr, "%s\n", pto_status_message(s));
    pto_status_free(s);
  }
  return NULL;
}

static void test_cache_threads_compiling_one_key_share_one_program(void **state) {
  (void)state;
  enum { T = 8 };
  pthread_t th[T];
  race_arg args[T];
  setenv("PTO_FAKE_COMPILER_SLEEP_MS", "100", 1);
  for (int i = 0; i < T; i++) {
    args[i].ir = program(2, i % 2 ? "x" : "xx");
    args[i].out = NULL;
    assert_int_equal(pthread_create(&th[i], NULL, race_thread, &args[i]), 0);
  }
  for (int i = 0; i < T; i++)
    pthread_join(th[i], NULL);
  unsetenv("PTO_FAKE_COMPILER_SLEEP_MS");
  for (int i = 0; i < T; i++) {
    assert_non_null(args[i].out);
    assert_ptr_equal(args[i].out, args[0].out);
    pto_program_release(args[i].out);
    pto_ir_program_destroy(args[i].ir);
  }
  pto_cache_stats st = stats();
  assert_int_equal(st.entries, 1);
  assert_true(st.stores == 1);
  assert_int_equal(st.stores + st.races, st.misses);
}

/* ---- the disk level ------------------------------------------------------------------- */

static void test_cache_disk_hit_loads_without_compiling(void **state) {
  (void)state;
  pto_program *a = compile_variant(3);
  pto_program_release(a);
  pto__loader_cache_forget_loaded(); /* as if a new process */
  int b0 = builds();
  pto_program *b = compile_variant(3);
  assert_int_equal(builds(), b0);
  assert_true(tag_of(b) == expected_tag(3));
  pto_cache_stats st = stats();
  assert_int_equal(st.hits, 1);
  assert_int_equal(st.misses, 1);
  pto_program_release(b);
}

static void test_cache_key_text_written_with_debug(void **state) {
  (void)state;
  setenv("PTO_CACHE_DEBUG", "1", 1);
  pto_program *a = compile_variant(4);
  char *key = key_of_variant(4), dir[4096], path[4200];
  entry_dir(key, dir, sizeof dir);
  snprintf(path, sizeof path, "%s/key.txt", dir);
  char *text = tu_read_file(path, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "format=pto-cache-key/"));
  char hex[33];
  pto_hash_xxh128_hex(text, strlen(text), hex);
  assert_string_equal(hex, key); /* the text is exactly what was hashed */
  free(text);
  free(key);
  pto_program_release(a);
}

/* Damages the entry of variant with fn, then asserts that a new compile reports it, counts it,
 * discards the entry and rebuilds, and that the program loaded is the right one. */
static void assert_recovers(int variant, void (*damage)(const char *dir), const char *expect) {
  pto_program *a = compile_variant(variant);
  pto_program_release(a);
  pto__loader_cache_forget_loaded();
  char *key = key_of_variant(variant), dir[4096];
  entry_dir(key, dir, sizeof dir);
  damage(dir);
  int b0 = builds();
  pto_cache_stats before = stats();
  pto_program *b = compile_variant(variant);
  assert_int_equal(builds(), b0 + 1);
  assert_true(tag_of(b) == expected_tag(variant));
  pto_cache_stats after = stats();
  assert_int_equal(after.corruptions, before.corruptions + 1);
  assert_int_equal(g_nwarnings, 1);
  assert_non_null(strstr(g_warnings, "is corrupt"));
  if (!strstr(g_warnings, expect)) print_error("warning: %s (wanted '%s')\n", g_warnings, expect);
  assert_non_null(strstr(g_warnings, expect));
  /* The rebuilt entry verifies. */
  assert_pto_ok(pto_cache_verify_entry(dir, key));
  pto_program_release(b);
  free(key);
}

static void flip_byte(const char *dir) {
  char path[4200];
  snprintf(path, sizeof path, "%s/orchestration/main.so", dir);
  int fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  unsigned char c;
  assert_int_equal(pread(fd, &c, 1, 200), 1);
  c ^= 0x40;
  assert_int_equal(pwrite(fd, &c, 1, 200), 1);
  close(fd);
}

static void truncate_file(const char *dir) {
  char path[4200];
  snprintf(path, sizeof path, "%s/kernels/kernels.so", dir);
  assert_int_equal(truncate(path, 100), 0);
}

/* Another valid shared object in place of the orchestration: content hash mismatch. */
static void swap_so(const char *dir) {
  char a[4200], b[4200], *out = NULL;
  snprintf(a, sizeof a, "%s/kernels/kernels.so", dir);
  snprintf(b, sizeof b, "%s/orchestration/main.so", dir);
  assert_int_equal(tu_run(&out, "cp '%s' '%s'", a, b), 0);
  free(out);
}

/* A swapped object whose hash was also forged in the manifest: the Build-ID gives it away. */
static void swap_so_and_forge_hash(const char *dir) {
  swap_so(dir);
  pto_manifest m;
  assert_pto_ok(pto_manifest_read(dir, &m));
  assert_pto_ok(pto_manifest_add_file(&m, dir, "orchestration/main.so"));
  assert_pto_ok(pto_manifest_write(dir, &m));
  pto_manifest_free(&m);
  assert_pto_ok(pto__loader_manifest_seal(dir)); /* the seal forged too: the Build-ID tells */
}

static void edit_source(const char *dir) {
  char path[4200];
  snprintf(path, sizeof path, "%s/orchestration/main.cpp", dir);
  FILE *f = fopen(path, "a");
  fputs("// edited\n", f);
  fclose(f);
}

static void drop_manifest(const char *dir) {
  char path[4200];
  snprintf(path, sizeof path, "%s/manifest.json", dir);
  assert_int_equal(unlink(path), 0);
}

static void test_cache_flipped_byte_is_detected_and_rebuilt(void **state) {
  (void)state;
  assert_recovers(5, flip_byte, "content hash");
}

static void test_cache_truncated_file_is_detected_and_rebuilt(void **state) {
  (void)state;
  assert_recovers(6, truncate_file, "content hash");
}

static void test_cache_swapped_object_is_detected_and_rebuilt(void **state) {
  (void)state;
  assert_recovers(7, swap_so, "content hash");
}

static void test_cache_build_id_mismatch_is_detected_and_rebuilt(void **state) {
  (void)state;
  assert_recovers(8, swap_so_and_forge_hash, "Build-ID");
}

static void test_cache_edited_source_in_entry_is_corrupt(void **state) {
  (void)state;
  assert_recovers(9, edit_source, "edited since it was compiled");
}

/* The manifest's signature edited (a hit no longer reads program.ptir: the fingerprint compiled
 * into the orchestration object gives it away). */
static void edit_signature(const char *dir) {
  pto_manifest m;
  assert_pto_ok(pto_manifest_read(dir, &m));
  assert_int_equal(m.sig.params[0].dtype, PTO_DTYPE_F32);
  m.sig.params[0].dtype = PTO_DTYPE_F64;
  assert_pto_ok(pto_manifest_write(dir, &m));
  pto_manifest_free(&m);
  assert_pto_ok(pto__loader_manifest_seal(dir)); /* the seal forged too */
}

static void test_cache_edited_signature_in_entry_is_corrupt(void **state) {
  (void)state;
  assert_recovers(29, edit_signature, "does not match the one orchestration/main.so was compiled");
}

/* The counters file is rewritten in place: a count leaves exactly its text, and cuts a longer
 * file (not truncated when the text only grew: one system call less on every hit). */
static void test_cache_counters_rewrite_the_stats_file_in_place(void **state) {
  (void)state;
  assert_int_equal(mkdir(g_cache, 0700), 0);
  char path[4200], *text = NULL;
  snprintf(path, sizeof path, "%s/stats", g_cache);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("pto-cache-stats/1\nhits 5\n# a note that makes the file longer than what is written "
        "back, at well over a hundred bytes of text in all, to be cut away\n",
        f);
  fclose(f);
  pto__loader_count(g_cache, PTO__COUNT_HITS, 1);
  uint64_t v[PTO__COUNT_N];
  assert_pto_ok(pto__loader_counts_read(g_cache, v));
  assert_int_equal(v[PTO__COUNT_HITS], 6);
  size_t len = 0;
  assert_pto_ok(pto_file_read(path, 4096, (uint8_t **)&text, &len));
  assert_null(strstr(text, "a note"));
  assert_int_equal(strlen(text), len);
  free(text);
  for (int i = 0; i < 11; i++)
    pto__loader_count(g_cache, PTO__COUNT_MISSES, 1); /* 9 -> 10: the text grows by a byte */
  assert_pto_ok(pto__loader_counts_read(g_cache, v));
  assert_int_equal(v[PTO__COUNT_MISSES], 11);
  assert_pto_ok(pto_file_read(path, 4096, (uint8_t **)&text, &len));
  assert_non_null(strstr(text, "\nmisses 11\n"));
  assert_int_equal(text[len - 1], '\n');
  free(text);
}

static void test_cache_entry_without_manifest_is_corrupt(void **state) {
  (void)state;
  assert_recovers(10, drop_manifest, "manifest.json: missing");
}

/* One field of the manifest changed (a kernel's scratch_bytes, which no file hash covers): the
 * manifest's seal gives it away, on load and in verify (issue #34 item 7). */
static void edit_scratch_bytes(const char *dir) {
  pto_manifest m;
  assert_pto_ok(pto_manifest_read(dir, &m));
  assert_true(m.nkernels > 0);
  m.kernels[0].scratch_bytes += 4096;
  assert_pto_ok(pto_manifest_write(dir, &m));
  pto_manifest_free(&m);
}

static void test_cache_edited_manifest_field_is_corrupt(void **state) {
  (void)state;
  assert_recovers(30, edit_scratch_bytes, "differs from the one sealed in manifest.xxh128");
  char *key = key_of_variant(30), dir[4096];
  entry_dir(key, dir, sizeof dir);
  assert_pto_ok(pto_cache_verify_entry(dir, key));
  edit_scratch_bytes(dir);
  pto_status s = pto_cache_verify_entry(dir, key);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_DATA_LOSS);
  assert_non_null(strstr(pto_status_message(s), "manifest.json: content hash"));
  pto_status_free(s);
  /* A seal that is missing is no seal. */
  char path[4200];
  assert_pto_ok(pto__loader_manifest_seal(dir));
  assert_pto_ok(pto_cache_verify_entry(dir, key));
  snprintf(path, sizeof path, "%s/" PTO__MANIFEST_SEAL, dir);
  assert_int_equal(unlink(path), 0);
  s = pto_cache_verify_entry(dir, key);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_DATA_LOSS);
  assert_non_null(strstr(pto_status_message(s), "the entry's manifest is not sealed"));
  pto_status_free(s);
  free(key);
}

static void test_cache_entry_filed_under_another_key_is_corrupt(void **state) {
  (void)state;
  pto_program *a = compile_variant(11);
  pto_program_release(a);
  pto__loader_cache_forget_loaded();
  char *k11 = key_of_variant(11), *k12 = key_of_variant(12), d11[4096], d12[4096], par[4096];
  entry_dir(k11, d11, sizeof d11);
  entry_dir(k12, d12, sizeof d12);
  snprintf(par, sizeof par, "%s/%.2s", g_cache, k12);
  mkdir(par, 0700);
  assert_int_equal(rename(d11, d12), 0); /* variant 11's binaries under variant 12's key */
  pto_program *b = compile_variant(12);
  assert_true(tag_of(b) == expected_tag(12));
  assert_non_null(strstr(g_warnings, "field 'cache_key'"));
  assert_int_equal(stats().corruptions, 1);
  pto_program_release(b);
  free(k11);
  free(k12);
}

static void test_cache_compile_to_dir_copies_a_verified_entry(void **state) {
  (void)state;
  setenv("PTO_CACHE_DEBUG", "1", 1);
  pto_ir_program *ir = program(13, "x");
  char d1[4200], d2[4200];
  snprintf(d1, sizeof d1, "%s/work13a", g_tmp);
  snprintf(d2, sizeof d2, "%s/work13b/nested", g_tmp);
  int b0 = builds();
  assert_pto_ok(pto_compile_to_dir(ir, NULL, d1, 1));
  assert_int_equal(builds(), b0 + 1);
  assert_pto_ok(pto_compile_to_dir(ir, NULL, d2, 1));
  assert_int_equal(builds(), b0 + 1); /* the second is a copy of the entry */
  char m1[4300], m2[4300], k2[4300];
  snprintf(m1, sizeof m1, "%s/manifest.json", d1);
  snprintf(m2, sizeof m2, "%s/manifest.json", d2);
  snprintf(k2, sizeof k2, "%s/key.txt", d2);
  char *t1 = tu_read_file(m1, NULL), *t2 = tu_read_file(m2, NULL), *kt = tu_read_file(k2, NULL);
  assert_non_null(t1);
  assert_non_null(t2);
  assert_string_equal(t1, t2);
  assert_non_null(kt);
  free(t1);
  free(t2);
  free(kt);
  pto_program *p = NULL;
  assert_pto_ok(pto_program_load_dir(d2, &p));
  assert_true(tag_of(p) == expected_tag(13));
  pto_program_release(p);
  /* A corrupt entry is not copied: the work dir gets a rebuilt one. */
  char *key = key_of_variant(13), dir[4096];
  entry_dir(key, dir, sizeof dir);
  flip_byte(dir);
  char d3[4200];
  snprintf(d3, sizeof d3, "%s/work13c", g_tmp);
  assert_pto_ok(pto_compile_to_dir(ir, NULL, d3, 1));
  assert_int_equal(builds(), b0 + 2);
  assert_int_equal(stats().corruptions, 1);
  assert_pto_ok(pto_program_load_dir(d3, &p));
  pto_program_release(p);
  free(key);
  pto_ir_program_destroy(ir);
}

/* A program that differs only in names shares the key: a new process loading it gets its own
 * names; a work dir is not written from the other program's entry (it would carry its names). */
static void test_cache_renamed_program_gets_its_own_names(void **state) {
  (void)state;
  pto_program *a = compile_variant(28);
  assert_string_equal(pto_program_signature(a)->params[0].name, "x");
  pto_program_release(a);
  pto__loader_cache_forget_loaded(); /* as if a new process */
  int b0 = builds();
  pto_ir_program *renamed = program(28, "rows_in");
  pto_program *b = NULL;
  assert_pto_ok(pto_compile(renamed, NULL, &b));
  assert_int_equal(builds(), b0); /* a disk hit */
  assert_string_equal(pto_program_signature(b)->params[0].name, "rows_in");
  assert_true(tag_of(b) == expected_tag(28));
  pto_program_release(b);
  char d[4200];
  snprintf(d, sizeof d, "%s/work28", g_tmp);
  assert_pto_ok(pto_compile_to_dir(renamed, NULL, d, 1));
  assert_int_equal(builds(), b0 + 1); /* built here, not copied */
  pto_manifest m;
  assert_pto_ok(pto_manifest_read(d, &m));
  assert_string_equal(m.sig.params[0].name, "rows_in");
  pto_manifest_free(&m);
  assert_int_equal(stats().entries, 1);
  pto_ir_program_destroy(renamed);
}

/* pto_compile_to_dir into a directory that is not a work dir but holds a name a work dir has (the
 * user's own program.ptir) refuses, leaving the file as it was (it was replaced: Python's
 * pto.compile(..., work_dir=".") in the user's folder); other files do not stand in the way, and
 * a work dir is compiled again into itself. */
static void test_cache_compile_to_dir_never_replaces_a_users_file(void **state) {
  (void)state;
  pto_ir_program *ir = program(31, "x");
  char d[4200], f[4300], notes[4300];
  snprintf(d, sizeof d, "%s/work31", g_tmp);
  assert_int_equal(mkdir(d, 0755), 0);
  snprintf(f, sizeof f, "%s/program.ptir", d);
  snprintf(notes, sizeof notes, "%s/notes.txt", d);
  assert_int_equal(tu_write_file(f, "my own program\n"), 0);
  assert_int_equal(tu_write_file(notes, "notes\n"), 0);
  assert_status_contains(pto_compile_to_dir(ir, NULL, d, 1),
                         "program.ptir, and it is not a pto work dir (no manifest.json of pto's)");
  char *text = tu_read_file(f, NULL);
  assert_non_null(text);
  assert_string_equal(text, "my own program\n");
  free(text);
  assert_int_equal(unlink(f), 0);
  assert_pto_ok(pto_compile_to_dir(ir, NULL, d, 1)); /* notes.txt is no work dir's name */
  assert_pto_ok(pto_compile_to_dir(ir, NULL, d, 1)); /* a work dir again into itself */
  text = tu_read_file(notes, NULL);
  assert_non_null(text);
  assert_string_equal(text, "notes\n");
  free(text);
  pto_ir_program_destroy(ir);
}

/* A child compiling variant TAG, held by the test build's gate (PTO_CACHE_TEST_GATE) between
 * building its entry and publishing it: it says when it is there and waits for the parent's word.
 * gated_child_compile returns once the child is at the gate; gated_child_finish gives the word
 * and checks the child got variant TAG's program. A side that dies closes its pipe ends, so
 * neither read waits for ever. */
typedef struct gated_child {
  pid_t pid;
  int ready; /* the read end of the child's "I am at the gate" */
  int go;    /* the write end of the parent's word */
} gated_child;

static gated_child gated_child_compile(int tag) {
  int ready[2], go[2];
  assert_int_equal(pipe(ready), 0);
  assert_int_equal(pipe(go), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(ready[0]);
    close(go[1]);
    char gate[32];
    snprintf(gate, sizeof gate, "%d,%d", ready[1], go[0]);
    setenv("PTO_CACHE_TEST_GATE", gate, 1);
    pto_ir_program *ir = program(tag, "x");
    pto_program *p = NULL;
    pto_status s = pto_compile(ir, NULL, &p);
    if (s) fprintf(stderr, "child: %s\n", pto_status_message(s));
    int ok = !s && p && tag_of(p) == expected_tag(tag);
    _exit(ok ? 0 : 1);
  }
  close(ready[1]);
  close(go[0]);
  char c;
  assert_int_equal(read(ready[0], &c, 1), 1); /* the child is at the gate */
  return (gated_child){pid, ready[0], go[1]};
}

static void gated_child_finish(gated_child *g) {
  assert_int_equal(write(g->go, "g", 1), 1);
  close(g->go);
  close(g->ready);
  int status = 0;
  assert_int_equal(waitpid(g->pid, &status, 0), g->pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A child that has built its entry but not yet published it loses to the parent, which publishes
 * first; the child uses the parent's entry. */
static void test_cache_lost_race_uses_the_winner(void **state) {
  (void)state;
  gated_child g = gated_child_compile(14); /* the child has built, not published */
  pto_program *p = compile_variant(14);
  gated_child_finish(&g);
  pto_cache_stats st = stats();
  assert_int_equal(st.races, 1);
  assert_int_equal(st.stores, 1);
  assert_int_equal(st.entries, 1);
  pto_program_release(p);
}

/* pto cache clear removes the fan-out dir it empties: a store held between making that dir and
 * renaming its entry into it (the gate) while the parent clears the cache makes the dir again and
 * stores, rather than failing the compile with "cannot rename an entry into ROOT/xx: No such file
 * or directory" (found racing pto run with pto cache clear). */
static void test_cache_store_survives_a_clear_of_its_fan_out_dir(void **state) {
  (void)state;
  gated_child g = gated_child_compile(24); /* the child's fan-out dir is there, empty */
  uint64_t removed = 0;
  assert_pto_ok(pto_cache_clear(&removed));
  assert_int_equal(removed, 0);
  gated_child_finish(&g);
  pto_cache_stats st = stats();
  assert_int_equal(st.stores, 1);
  assert_int_equal(st.entries, 1);
}

/* ---- unusable caches ------------------------------------------------------------------ */

static void test_cache_unwritable_cache_compiles_without_caching_and_warns_once(void **state) {
  (void)state;
  static const char *const errs[] = {"EROFS", "ENOSPC", "EACCES"};
  for (int e = 0; e < 3; e++) {
    setup(state);
    setenv("PTO_CACHE_TEST_FAIL_PUBLISH", errs[e], 1);
    pto_program *a = compile_variant(15 + e);
    pto_program *b = compile_variant(18 + e);
    /* Once per process, however many compiles. */
    assert_int_equal(g_nwarnings, 1);
    assert_non_null(strstr(g_warnings, "compiling without caching"));
    assert_non_null(strstr(g_warnings, errs[e][1] == 'R'   ? "Read-only"
                                       : errs[e][1] == 'N' ? "No space"
                                                           : "Permission denied"));
    assert_true(tag_of(a) == expected_tag(15 + e));
    assert_true(tag_of(b) == expected_tag(18 + e));
    pto_cache_stats st = stats();
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.uncached, 2);
    pto_program_release(a);
    pto_program_release(b);
  }
}

static void test_cache_refuses_a_group_writable_dir(void **state) {
  (void)state;
  assert_int_equal(mkdir(g_cache, 0700), 0);
  chmod(g_cache, 0770);
  pto_program *a = compile_variant(21);
  assert_true(tag_of(a) == expected_tag(21));
  assert_non_null(strstr(g_warnings, "writable by group or others"));
  assert_non_null(strstr(g_warnings, "chmod 700"));
  char sub[4200];
  snprintf(sub, sizeof sub, "%s/tmp", g_cache);
  assert_int_not_equal(access(sub, F_OK), 0); /* nothing was written into it */
  /* The admin calls refuse it with the same message. */
  pto_cache_entry *v = NULL;
  int n = 0;
  assert_status_contains(pto_cache_list(&v, &n), "writable by group or others");
  pto_program_release(a);
}

static void test_cache_refuses_a_dir_owned_by_another_user(void **state) {
  (void)state;
  if (geteuid() != 0) skip(); /* only root can give a dir away */
  assert_int_equal(mkdir(g_cache, 0700), 0);
  assert_int_equal(chown(g_cache, 65534, 65534), 0);
  pto_program *a = compile_variant(22);
  assert_true(tag_of(a) == expected_tag(22));
  assert_non_null(strstr(g_warnings, "is owned by uid 65534"));
  pto_program_release(a);
}

/* ---- eviction and maintenance --------------------------------------------------------- */

static void set_use_time(const char *key, time_t t) {
  char dir[4096];
  entry_dir(key, dir, sizeof dir);
  struct timespec times[2] = {{t, 0}, {t, 0}};
  assert_int_equal(utimensat(AT_FDCWD, dir, times, 0), 0);
}

static void test_cache_evicts_least_recently_used_under_max_size(void **state) {
  (void)state;
  pto_program *a = compile_variant(23);
  char *ka = key_of_variant(23), *kb = key_of_variant(24), *kc = key_of_variant(25);
  char da[4096];
  entry_dir(ka, da, sizeof da);
  uint64_t one = pto_file_tree_bytes(da);
  pto_program *b = compile_variant(24);
  time_t now = time(NULL);
  set_use_time(ka, now - 100); /* a is older... */
  set_use_time(kb, now - 200); /* ...than b: b is the least recently used */
  char max[32];
  snprintf(max, sizeof max, "%llu", (unsigned long long)(one * 5 / 2));
  setenv("PTO_CACHE_MAX_SIZE", max, 1);
  pto_program *c = compile_variant(25); /* three entries do not fit: b goes */
  pto_cache_stats st = stats();
  assert_int_equal(st.entries, 2);
  assert_int_equal(st.evictions, 1);
  char d[4096];
  entry_dir(kb, d, sizeof d);
  assert_int_not_equal(access(d, F_OK), 0);
  entry_dir(ka, d, sizeof d);
  assert_int_equal(access(d, F_OK), 0);
  entry_dir(kc, d, sizeof d);
  assert_int_equal(access(d, F_OK), 0);
  /* Evicted while loaded: b still runs (its files stay mapped). */
  assert_true(tag_of(b) == expected_tag(24));
  /* gc to one entry keeps the most recently used (c). */
  pto_cache_gc_result r;
  assert_pto_ok(pto_cache_gc(one + one / 2, &r));
  assert_int_equal(r.evicted, 1);
  assert_int_equal(r.entries, 1);
  pto_cache_entry *v = NULL;
  int n = 0;
  assert_pto_ok(pto_cache_list(&v, &n));
  assert_int_equal(n, 1);
  assert_string_equal(v[0].key, kc);
  assert_string_equal(v[0].program, "cache_test");
  pto_cache_list_free(v, n);
  pto_program_release(a);
  pto_program_release(b);
  pto_program_release(c);
  free(ka);
  free(kb);
  free(kc);
}

static void test_cache_find_verify_clear(void **state) {
  (void)state;
  pto_program *a = compile_variant(26), *b = compile_variant(27);
  char *ka = key_of_variant(26), key[33], *path = NULL;
  assert_pto_ok(pto_cache_find(ka, key, &path));
  assert_string_equal(key, ka);
  free(path);
  char prefix[9];
  snprintf(prefix, sizeof prefix, "%.8s", ka);
  assert_pto_ok(pto_cache_find(prefix, key, &path));
  free(path);
  assert_status_contains(pto_cache_find("", key, &path), "1 to 32 hex digits");
  assert_status_contains(pto_cache_find("zz", key, &path), "1 to 32 hex digits");
  char none[33];
  snprintf(none, sizeof none, "%.31s%c", ka, ka[31] == '0' ? '1' : '0');
  assert_status_contains(pto_cache_find(none, key, &path), "no cache entry");
  /* verify: one good, one damaged (after unloading it: damaging a mapped file in place is not
   * something a cache can defend against, and the cache itself only ever renames). */
  pto_program_release(a);
  pto_program_release(b);
  pto__loader_cache_forget_loaded();
  char dir[4096];
  entry_dir(ka, dir, sizeof dir);
  truncate_file(dir);
  int checked = 0, corrupt = 0;
  assert_pto_ok(pto_cache_verify(NULL, NULL, &checked, &corrupt));
  assert_int_equal(checked, 2);
  assert_int_equal(corrupt, 1);
  assert_int_not_equal(access(dir, F_OK), 0);
  assert_int_equal(stats().corruptions, 1);
  uint64_t removed = 0;
  assert_pto_ok(pto_cache_clear(&removed));
  assert_int_equal(removed, 1);
  assert_int_equal(stats().entries, 0);
  free(ka);
}

/* pto_cache_remove: a unique start of a key removes that entry and only it; a key that names no
 * entry (or is no key) removes nothing. */
static void test_cache_remove(void **state) {
  (void)state;
  pto_program *a = compile_variant(28), *b = compile_variant(29);
  pto_program_release(a);
  pto_program_release(b);
  pto__loader_cache_forget_loaded();
  char *ka = key_of_variant(28), *kb = key_of_variant(29), key[33], prefix[9], dir[4096];
  assert_int_equal(stats().entries, 2);
  assert_status_contains(pto_cache_remove("xyz", key), "1 to 32 hex digits");
  char none[33];
  snprintf(none, sizeof none, "%.31s%c", ka, ka[31] == '0' ? '1' : '0');
  if (strcmp(none, kb) != 0) assert_status_contains(pto_cache_remove(none, key), "no cache entry");
  assert_int_equal(stats().entries, 2);
  snprintf(prefix, sizeof prefix, "%.8s", ka);
  assert_pto_ok(pto_cache_remove(prefix, key));
  assert_string_equal(key, ka);
  entry_dir(ka, dir, sizeof dir);
  assert_int_not_equal(access(dir, F_OK), 0);
  entry_dir(kb, dir, sizeof dir);
  assert_int_equal(access(dir, F_OK), 0);
  assert_int_equal(stats().entries, 1);
  assert_status_contains(pto_cache_remove(ka, NULL), "no cache entry");
  assert_pto_ok(pto_cache_remove(kb, NULL));
  assert_int_equal(stats().entries, 0);
  free(ka);
  free(kb);
}

static void test_cache_parse_size(void **state) {
  (void)state;
  uint64_t n;
  assert_pto_ok(pto_cache_parse_size("4096", &n));
  assert_true(n == 4096);
  assert_pto_ok(pto_cache_parse_size("512M", &n));
  assert_true(n == 512ull << 20);
  assert_pto_ok(pto_cache_parse_size("2G", &n));
  assert_true(n == 2ull << 30);
  assert_pto_ok(pto_cache_parse_size("3GiB", &n));
  assert_true(n == 3ull << 30);
  assert_pto_ok(pto_cache_parse_size("1k", &n));
  assert_true(n == 1024);
  assert_status_contains(pto_cache_parse_size("12Q", &n), "size '12Q'");
  assert_status_contains(pto_cache_parse_size("-1", &n), "size '-1'");
  assert_status_contains(pto_cache_parse_size("99999999999T", &n), "size");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_cache_equal_key_returns_the_same_program_object, setup),
      cmocka_unit_test_setup(test_cache_repeat_compile_is_served_in_process, setup),
      cmocka_unit_test_setup(test_cache_kernel_entry_has_its_own_key_and_repeats_in_process, setup),
      cmocka_unit_test_setup(test_cache_threads_compiling_one_key_share_one_program, setup),
      cmocka_unit_test_setup(test_cache_disk_hit_loads_without_compiling, setup),
      cmocka_unit_test_setup(test_cache_key_text_written_with_debug, setup),
      cmocka_unit_test_setup(test_cache_flipped_byte_is_detected_and_rebuilt, setup),
      cmocka_unit_test_setup(test_cache_truncated_file_is_detected_and_rebuilt, setup),
      cmocka_unit_test_setup(test_cache_swapped_object_is_detected_and_rebuilt, setup),
      cmocka_unit_test_setup(test_cache_build_id_mismatch_is_detected_and_rebuilt, setup),
      cmocka_unit_test_setup(test_cache_edited_source_in_entry_is_corrupt, setup),
      cmocka_unit_test_setup(test_cache_edited_signature_in_entry_is_corrupt, setup),
      cmocka_unit_test_setup(test_cache_counters_rewrite_the_stats_file_in_place, setup),
      cmocka_unit_test_setup(test_cache_entry_without_manifest_is_corrupt, setup),
      cmocka_unit_test_setup(test_cache_edited_manifest_field_is_corrupt, setup),
      cmocka_unit_test_setup(test_cache_entry_filed_under_another_key_is_corrupt, setup),
      cmocka_unit_test_setup(test_cache_compile_to_dir_copies_a_verified_entry, setup),
      cmocka_unit_test_setup(test_cache_renamed_program_gets_its_own_names, setup),
      cmocka_unit_test_setup(test_cache_compile_to_dir_never_replaces_a_users_file, setup),
      cmocka_unit_test_setup(test_cache_lost_race_uses_the_winner, setup),
      cmocka_unit_test_setup(test_cache_store_survives_a_clear_of_its_fan_out_dir, setup),
      cmocka_unit_test_setup(test_cache_unwritable_cache_compiles_without_caching_and_warns_once,
                             setup),
      cmocka_unit_test_setup(test_cache_refuses_a_group_writable_dir, setup),
      cmocka_unit_test_setup(test_cache_refuses_a_dir_owned_by_another_user, setup),
      cmocka_unit_test_setup(test_cache_evicts_least_recently_used_under_max_size, setup),
      cmocka_unit_test_setup(test_cache_find_verify_clear, setup),
      cmocka_unit_test_setup(test_cache_remove, setup),
      cmocka_unit_test(test_cache_parse_size),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
