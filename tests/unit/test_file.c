/* base's file helpers (pto/base.h): the stream reader keeps to its size limit; trees are removed
 * and summed without following a symlink, at any depth; a fatal signal on any thread leaves no
 * temp file behind; a file named with 250 bytes is written. */
#include <dirent.h>
#include <fcntl.h>
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
#include "testutil.h"

/* Reads text through a stream with limit max; returns the status, *out the bytes read. */
static pto_status read_text(const char *text, uint64_t max, uint8_t **out, size_t *out_len) {
  FILE *f = fmemopen((void *)text, strlen(text), "r");
  assert_non_null(f);
  pto_status s = pto_file_read_stream(f, "stdin", max, out, out_len);
  fclose(f);
  return s;
}

static void test_file_read_stream_keeps_to_its_limit(void **state) {
  (void)state;
  uint8_t *buf = NULL;
  size_t len = 0;
  /* At the limit: read whole, NUL-terminated. */
  assert_pto_ok(read_text("0123456789", 10, &buf, &len));
  assert_int_equal(len, 10);
  assert_string_equal((char *)buf, "0123456789");
  free(buf);
  /* One byte over: refused, nothing returned. */
  buf = (uint8_t *)"untouched";
  assert_status_contains(read_text("0123456789X", 10, &buf, &len),
                         "stdin holds more than the limit of 10 bytes for this kind of input");
  assert_null(buf);
  assert_int_equal(len, 0);
  /* 0: no limit. */
  assert_pto_ok(read_text("0123456789X", 0, &buf, &len));
  assert_int_equal(len, 11);
  free(buf);
}

/* A limit in MiB is worded in MiB, and the stream past 1 MiB + 1 byte is not read. */
static void test_file_read_stream_limit_in_mib(void **state) {
  (void)state;
  size_t n = (3u << 20) + 5;
  char *big = malloc(n + 1);
  assert_non_null(big);
  memset(big, 'a', n);
  big[n] = 0;
  FILE *f = fmemopen(big, n, "r");
  assert_non_null(f);
  uint8_t *buf = NULL;
  size_t len = 0;
  assert_status_contains(pto_file_read_stream(f, "stdin", 1u << 20, &buf, &len),
                         "stdin holds more than the limit of 1 MiB for this kind of input");
  assert_int_equal(ftell(f), (1 << 20) + 1);
  fclose(f);
  free(big);
}

/* A chain of 100 directories (deeper than the 64 a walk holds open) with a 3-byte file at each
 * level, and a symlink to a directory outside: the tree is summed and removed whole, and the
 * symlink's target is left alone. */
static void test_file_remove_tree_deep_without_following_links(void **state) {
  char *top = tu_mkdtemp("tree");
  assert_non_null(top);
  char keep[512], path[8192];
  snprintf(keep, sizeof keep, "%s-keep", top);
  assert_int_equal(mkdir(keep, 0755), 0);
  snprintf(path, sizeof path, "%s/kept.txt", keep);
  assert_int_equal(tu_write_file(path, "kept"), 0);
  snprintf(path, sizeof path, "%s/t", top);
  int dfd = -1;
  assert_int_equal(mkdir(path, 0755), 0);
  assert_true((dfd = open(path, O_RDONLY | O_DIRECTORY)) >= 0);
  for (int i = 0; i < 100; i++) {
    int f = openat(dfd, "f", O_WRONLY | O_CREAT, 0644);
    assert_true(f >= 0);
    assert_int_equal(write(f, "abc", 3), 3);
    close(f);
    if (i == 50) assert_int_equal(symlinkat(keep, dfd, "outside"), 0);
    assert_int_equal(mkdirat(dfd, "d", 0755), 0);
    int next = openat(dfd, "d", O_RDONLY | O_DIRECTORY);
    assert_true(next >= 0);
    close(dfd);
    dfd = next;
  }
  close(dfd);
  /* The first 64 levels count (the walk's bound), and not the 4 bytes behind the symlink. */
  assert_int_equal(pto_file_tree_bytes(path), 3 * 64);
  pto_file_remove_tree(path);
  struct stat st;
  assert_int_equal(lstat(path, &st), -1);
  snprintf(path, sizeof path, "%s/kept.txt", keep);
  assert_int_equal(stat(path, &st), 0);
  snprintf(path, sizeof path, "%s/file", top); /* a plain file is unlinked; a missing path is ok */
  assert_int_equal(tu_write_file(path, "x"), 0);
  pto_file_remove_tree(path);
  assert_int_equal(lstat(path, &st), -1);
  pto_file_remove_tree(path);
  tu_rmtree(keep);
  tu_rmtree(top);
  free(top);
}

/* Results the library allocates are released with pto_free (the contract the headers name), and
 * pto_free(NULL) is a no-op, as free's is. */
static void test_results_are_released_with_pto_free(void **state) {
  pto_text t = {0};
  pto_text_printf(&t, "%d", 42);
  char *text = pto_text_finish(&t);
  assert_string_equal(text, "42");
  pto_free(text);
  uint8_t *buf = NULL;
  size_t len = 0;
  char *dir = tu_mkdtemp("free");
  assert_non_null(dir);
  char path[512];
  snprintf(path, sizeof path, "%s/f", dir);
  assert_int_equal(tu_write_file(path, "abc"), 0);
  assert_pto_ok(pto_file_read(path, 0, &buf, &len));
  assert_int_equal(len, 3);
  pto_free(buf);
  pto_free(NULL);
  pto_file_remove_tree(dir);
  free(dir);
}

/* A file whose name has 250 bytes (NAME_MAX is 255) is written and replaced: the temp file beside
 * it gets a name cut to fit (it was "<name>.tmp-XXXXXX", 261 bytes: "File name too long", so
 * `pto run --out c=<such a name>` failed after the run); nothing else is left in the dir. */
static void test_a_file_with_a_name_of_250_bytes_is_written(void **state) {
  (void)state;
  char *dir = tu_mkdtemp("long");
  assert_non_null(dir);
  char name[251], path[1024];
  memset(name, 'n', 250);
  name[250] = 0;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  assert_pto_ok(pto_file_write_atomic(path, "abc", 3, 0644));
  const void *bufs[1] = {"defg"};
  size_t lens[1] = {4};
  assert_pto_ok(pto_file_replace(path, bufs, lens, 1));
  size_t len = 0;
  char *text = tu_read_file(path, &len);
  assert_non_null(text);
  assert_int_equal(len, 4);
  assert_memory_equal(text, "defg", 4);
  free(text);
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (e->d_name[0] != '.') n++, assert_string_equal(e->d_name, name);
  closedir(d);
  assert_int_equal(n, 1);
  pto_file_remove_tree(dir);
  free(dir);
}

/* A fatal signal handled on one thread while another thread is creating a temp file (between
 * mkostemp and its tracking) still leaves no temp file behind: pto_file_remove_temps waits for the
 * creation and removes it (the handler ran on a worker thread of a run once and the temp file of
 * the output stayed). Each child writes small files in a loop on a thread while its main thread
 * sends itself SIGTERM; the handler removes the temps and lets the signal end the child. */
static const char *g_sig_path;

static void *write_forever(void *arg) {
  (void)arg;
  static const char data[4096];
  for (;;)
    pto_status_free(pto_file_write_atomic(g_sig_path, data, sizeof data, 0644));
  return NULL;
}

static void remove_temps_and_die(int sig) {
  pto_file_remove_temps();
  signal(sig, SIG_DFL);
  raise(sig);
}

static void test_remove_temps_waits_for_a_temp_being_created_on_another_thread(void **state) {
  (void)state;
  char *dir = tu_mkdtemp("sig");
  assert_non_null(dir);
  char path[512];
  snprintf(path, sizeof path, "%s/out.bin", dir);
  for (int round = 0; round < 60; round++) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      g_sig_path = path;
      signal(SIGTERM, remove_temps_and_die);
      pthread_t th;
      if (pthread_create(&th, NULL, write_forever, NULL) != 0) _exit(3);
      struct timespec ts = {0, 100000 + 7919 * round % 400000};
      nanosleep(&ts, NULL);
      kill(getpid(), SIGTERM);
      nanosleep(&(struct timespec){5, 0}, NULL);
      _exit(4);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
      if (strstr(e->d_name, ".tmp-")) fail_msg("round %d left %s behind", round, e->d_name);
    closedir(d);
  }
  pto_file_remove_tree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_file_read_stream_keeps_to_its_limit),
      cmocka_unit_test(test_file_read_stream_limit_in_mib),
      cmocka_unit_test(test_file_remove_tree_deep_without_following_links),
      cmocka_unit_test(test_results_are_released_with_pto_free),
      cmocka_unit_test(test_a_file_with_a_name_of_250_bytes_is_written),
      cmocka_unit_test(test_remove_temps_waits_for_a_temp_being_created_on_another_thread),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
