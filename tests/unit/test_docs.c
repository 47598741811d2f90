/* The documentation against the code: every op of the op table has an entry in the language
 * reference (a "### `name`" heading line that names it), and pto_version() is the project's
 * version, the one the SONAMEs carry the major of. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/base.h"
#include "pto/ir.h"
#include "testutil.h"

/* Whether a heading line of doc ("### ..." ) names `name` in backquotes. */
static int heading_names(const char *doc, const char *name) {
  char quoted[96];
  snprintf(quoted, sizeof quoted, "`%s`", name);
  for (const char *line = doc; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (len > 4 && strncmp(line, "### ", 4) == 0) {
      const char *hit = strstr(line, quoted);
      if (hit && hit < line + len) return 1;
    }
    line = end ? end + 1 : NULL;
  }
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

static void test_version_is_the_projects(void **state) {
  assert_string_equal(pto_version(), PTO_TEST_VERSION);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_op_has_a_reference_entry),
      cmocka_unit_test(test_version_is_the_projects),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
