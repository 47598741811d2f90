/* The PTIR corpus: every tests/corpus/good file and every example parses, verifies and prints to
 * a fixed point (print(parse(print(p))) == print(p), and the reparsed program equals the
 * original); every tests/corpus/bad file is rejected at the position and with the message its
 * first line names: "# expect: LINE:COL: substring". One cmocka test per file. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/ir.h"
#include "testutil.h"

static pto_status parse_and_verify(const char *path, pto_ir_program **out) {
  pto_status s = pto_ir_parse_file(path, out);
  if (!s) s = pto_ir_verify(*out);
  if (s) {
    pto_ir_program_destroy(*out);
    *out = NULL;
  }
  return s;
}

static void test_good_file(void **state) {
  const char *path = *state;
  pto_ir_program *p = NULL;
  assert_pto_ok(parse_and_verify(path, &p));
  char *t1 = NULL, *t2 = NULL;
  assert_pto_ok(pto_ir_print(p, &t1));
  pto_ir_program *p2 = NULL;
  pto_status s = pto_ir_parse_string(t1, strlen(t1), path, &p2);
  if (s) print_error("printed text:\n%s\n", t1);
  assert_pto_ok(s);
  assert_pto_ok(pto_ir_verify(p2));
  assert_pto_ok(pto_ir_print(p2, &t2));
  if (strcmp(t1, t2) != 0) print_error("first print:\n%s\nsecond print:\n%s\n", t1, t2);
  assert_string_equal(t1, t2);
  assert_true(pto_ir_program_equal(p, p2));
  assert_true(pto_ir_program_hash(p).lo == pto_ir_program_hash(p2).lo);
  free(t1);
  free(t2);
  pto_ir_program_destroy(p);
  pto_ir_program_destroy(p2);
}

static void test_bad_file(void **state) {
  const char *path = *state;
  char *text = tu_read_file(path, NULL);
  assert_non_null(text);
  int line = 0, col = 0, off = 0;
  if (sscanf(text, "# expect: %d:%d: %n", &line, &col, &off) != 2 || off == 0) {
    print_error("%s: the first line must be '# expect: LINE:COL: substring'\n", path);
    fail();
  }
  char *want = text + off;
  want[strcspn(want, "\n")] = 0;
  pto_ir_program *p = NULL;
  pto_status s = parse_and_verify(path, &p);
  if (!s) {
    print_error("%s: accepted, expected an error at %d:%d containing '%s'\n", path, line, col,
                want);
    pto_ir_program_destroy(p);
    fail();
  }
  char prefix[512];
  snprintf(prefix, sizeof prefix, "%s:%d:%d: ", path, line, col);
  const char *msg = pto_status_message(s);
  if (strncmp(msg, prefix, strlen(prefix)) != 0 || !strstr(msg + strlen(prefix), want)) {
    print_error("%s:\n  expected: %s...%s\n  got:      %s\n", path, prefix, want, msg);
    pto_status_free(s);
    fail();
  }
  pto_status_free(s);
  free(text);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .ptir files of dir, sorted, malloc'd paths. */
static int list_dir(const char *dir, char ***out) {
  DIR *d = opendir(dir);
  int n = 0, cap = 0;
  char **v = NULL;
  if (!d) return 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".ptir") != 0) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      v = realloc(v, sizeof *v * (size_t)cap);
    }
    v[n] = malloc(strlen(dir) + len + 2);
    sprintf(v[n], "%s/%s", dir, e->d_name);
    n++;
  }
  closedir(d);
  qsort(v, (size_t)n, sizeof *v, cmp_str);
  *out = v;
  return n;
}

int main(void) {
  char **good = NULL, **bad = NULL, **examples = NULL;
  int ng = list_dir(PTO_SOURCE_DIR "/tests/corpus/good", &good);
  int nb = list_dir(PTO_SOURCE_DIR "/tests/corpus/bad", &bad);
  int ne = list_dir(PTO_SOURCE_DIR "/examples", &examples);
  int n = ng + nb + ne;
  struct CMUnitTest *tests = calloc((size_t)n + 1, sizeof *tests);
  int k = 0;
  for (int i = 0; i < ng; i++)
    tests[k++] = (struct CMUnitTest){good[i], test_good_file, NULL, NULL, good[i]};
  for (int i = 0; i < ne; i++)
    tests[k++] = (struct CMUnitTest){examples[i], test_good_file, NULL, NULL, examples[i]};
  for (int i = 0; i < nb; i++)
    tests[k++] = (struct CMUnitTest){bad[i], test_bad_file, NULL, NULL, bad[i]};
  /* A corpus that went missing must fail, not pass vacuously. */
  if (ng < 5 || nb < 40 || ne < 1) {
    fprintf(stderr, "corpus too small: %d good, %d bad, %d examples\n", ng, nb, ne);
    return 1;
  }
  int rc = _cmocka_run_group_tests("corpus", tests, (size_t)n, NULL, NULL);
  for (int i = 0; i < ng; i++)
    free(good[i]);
  for (int i = 0; i < nb; i++)
    free(bad[i]);
  for (int i = 0; i < ne; i++)
    free(examples[i]);
  free(good);
  free(bad);
  free(examples);
  free(tests);
  return rc;
}
