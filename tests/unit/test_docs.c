/* The documentation against the code: every op of the op table has an entry in the language
 * reference (a "### `name`" heading line that names it) with its arguments, dtypes and an
 * example, and pto_version() is the project's version, the one the SONAMEs carry the major of. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/base.h"
#include "pto/ir.h"
#include "testutil.h"

/* The entry of doc whose heading line ("### ...") names `name` in backquotes: from that line to
 * the next heading ("## " or "### "), in *len. NULL when no heading names it. */
static const char *entry_of(const char *doc, const char *name, size_t *len) {
  char quoted[96];
  snprintf(quoted, sizeof quoted, "`%s`", name);
  const char *start = NULL;
  for (const char *line = doc; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen(line);
    int heading = strncmp(line, "### ", 4) == 0 || strncmp(line, "## ", 3) == 0;
    if (start && heading) {
      *len = (size_t)(line - start);
      return start;
    }
    if (!start && n > 4 && strncmp(line, "### ", 4) == 0) {
      const char *hit = strstr(line, quoted);
      if (hit && hit < line + n) start = line;
    }
    line = end ? end + 1 : NULL;
  }
  if (start) *len = strlen(start);
  return start;
}

static int heading_names(const char *doc, const char *name) {
  size_t len;
  return entry_of(doc, name, &len) != NULL;
}

/* Whether the entry [e, e + len) holds text. */
static int entry_has(const char *e, size_t len, const char *text) {
  size_t n = strlen(text);
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp(e + i, text, n) == 0) return 1;
  return 0;
}

static void test_every_op_has_a_reference_entry(void **state) {
  size_t len;
  char *doc = tu_read_file(PTO_SOURCE_DIR "/docs/language.md", &len);
  assert_non_null(doc);
  int missing = 0;
  for (int op = 0; op < PTO_OP_COUNT; op++) {
    const char *name = pto_op_info_get((pto_opcode)op)->name;
    if (!heading_names(doc, name)) {
      fprintf(stderr, "docs/language.md: no '### ... `%s`' entry for op %s of the op table\n", name,
              name);
      missing++;
    }
  }
  assert_int_equal(missing, 0);
  assert_false(heading_names(doc, "tile.no_such_op")); /* the check can fail */
  free(doc);
}

/* Every op's entry gives its signature ("Arguments:"), its dtypes ("Dtypes:") and an example (a
 * ```ptir block, which e2e_docs_examples checks). */
static void test_every_entry_has_arguments_dtypes_and_an_example(void **state) {
  size_t len;
  char *doc = tu_read_file(PTO_SOURCE_DIR "/docs/language.md", &len);
  assert_non_null(doc);
  static const char *const parts[] = {"Arguments:", "Dtypes:", "```ptir"};
  int missing = 0;
  for (int op = 0; op < PTO_OP_COUNT; op++) {
    const char *name = pto_op_info_get((pto_opcode)op)->name;
    size_t n;
    const char *e = entry_of(doc, name, &n);
    for (size_t k = 0; e && k < sizeof parts / sizeof *parts; k++)
      if (!entry_has(e, n, parts[k])) {
        fprintf(stderr, "docs/language.md: the entry of %s has no '%s'\n", name, parts[k]);
        missing++;
      }
  }
  assert_int_equal(missing, 0);
  size_t n;
  const char *e = entry_of(doc, "tile.load", &n); /* the check can fail: the entry ends */
  assert_non_null(e);
  assert_false(entry_has(e, n, "### `tile.store`"));
  free(doc);
}

static void test_version_is_the_projects(void **state) {
  assert_string_equal(pto_version(), PTO_TEST_VERSION);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_op_has_a_reference_entry),
      cmocka_unit_test(test_every_entry_has_arguments_dtypes_and_an_example),
      cmocka_unit_test(test_version_is_the_projects),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
